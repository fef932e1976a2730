/* Convolution weights stored in the layout the tensor cores read,
 * transposed once when the runtime loads them (docs/pb-mma.md, "Weights
 * in the layout the kernel reads"; docs/ir-contract.md, pb.perm).
 *
 * ONNX stores a convolution's weights [o][c][r][s]. As the implicit
 * GEMM's B[k = (c, r, s)][n = o], a k-tile of channels at one window
 * position is strided by R S elements, so pb-smem can only copy it one
 * element a load and a store (and leaves a 1x1's [o][c][1][1] in global
 * memory). When B is a weight (a pb.param argument of @main) that only
 * kernels read, pb-mma stores it [o][r][s][c] instead: n outermost, the
 * window (and unit) dimensions in their order, k innermost, so that B is
 * stored [n][k] at every window position, its staged copies are 16-byte
 * rows along the channels and ldmatrix reads it untransposed, as the
 * staging in lib/smem/mma.c lays a convolution's weights out already
 * ([window][n][k] in shared memory). @main's argument gets the new type
 * and pb.perm, every kernel argument it reaches the new type, and every
 * read of it the composed map. */
#include <string.h>

#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "ir/contract.h"
#include "ir/ir.h"
#include "mma/internal.h"

#define MAXUSE 64

/* The @main arguments and kernel arguments that hold one weight: those
 * reached from the contraction's B through calls, both ways. */
struct holders {
	MlirOperation main;
	int nm, nk;
	int marg[MAXUSE];
	MlirOperation kfn[MAXUSE];
	int kpos[MAXUSE];
};

/* The func.func named "name" (a symbol reference's value) in the module
 * around "fn". */
static MlirOperation func_named(MlirOperation fn, MlirStringRef name)
{
	return pb_ir_lookup_func_ref(
		mlirModuleFromOperation(mlirOperationGetParentOperation(fn)),
		name);
}

/* The callee of func.call "call". */
static MlirOperation callee_of(MlirOperation call)
{
	MlirAttribute a = pb_ir_attr(call, "callee");
	if (mlirAttributeIsNull(a) || !mlirAttributeIsAFlatSymbolRef(a))
		return (MlirOperation){NULL};
	return func_named(pb_ir_parent_func(call),
			  mlirFlatSymbolRefAttrGetValue(a));
}

/* Is "v" argument "*pos" of the entry block of "fn"? */
static int arg_of(MlirValue v, MlirOperation fn, int *pos)
{
	if (!mlirValueIsABlockArgument(v) ||
	    !mlirBlockEqual(mlirBlockArgumentGetOwner(v),
			    pb_ir_entry_block(fn)))
		return 0;
	*pos = (int)mlirBlockArgumentGetArgNumber(v);
	return 1;
}

/* Add kernel argument "pos" of "fn" to "h" (once); 0 when full. */
static int add_kernel(struct holders *h, MlirOperation fn, int pos)
{
	for (int i = 0; i < h->nk; i++)
		if (mlirOperationEqual(h->kfn[i], fn) && h->kpos[i] == pos)
			return 1;
	if (h->nk == MAXUSE)
		return 0;
	h->kfn[h->nk] = fn;
	h->kpos[h->nk++] = pos;
	return 1;
}

/* Add @main's argument "pos" to "h" (once); 0 when full. */
static int add_main(struct holders *h, int pos)
{
	for (int i = 0; i < h->nm; i++)
		if (h->marg[i] == pos)
			return 1;
	if (h->nm == MAXUSE)
		return 0;
	h->marg[h->nm++] = pos;
	return 1;
}

/* Fill "h" from kernel argument "pos" of "fn": the @main arguments its
 * calls pass there, the kernel arguments those are passed to, and so
 * on. 0 with "*why" when one of them is not a weight only kernels read,
 * or is reached otherwise than straight from @main's arguments. */
static int holders_of(MlirOperation fn, int pos, struct holders *h,
		      const char **why)
{
	memset(h, 0, sizeof(*h));
	h->main = func_named(fn, mlirStringRefCreateFromCString("main"));
	*why = "the weights are no argument of @main";
	if (mlirOperationIsNull(h->main) || !add_kernel(h, fn, pos))
		return 0;
	MlirBlock mb = pb_ir_entry_block(h->main);
	for (int ki = 0, mi = 0; ki < h->nk || mi < h->nm;) {
		if (ki < h->nk) {
			/* every call of the kernel passes a weight there */
			MlirOperation f = h->kfn[ki];
			int p = h->kpos[ki++];
			for (MlirOperation o = mlirBlockGetFirstOperation(mb);
			     !mlirOperationIsNull(o);
			     o = mlirOperationGetNextInBlock(o)) {
				int a;
				if (!pb_ir_op_is(o, "func.call") ||
				    !mlirOperationEqual(callee_of(o), f))
					continue;
				*why = "the weights reach a kernel through a "
				       "view or a buffer of @main";
				if (!arg_of(mlirOperationGetOperand(o, p),
					    h->main, &a) ||
				    !add_main(h, a))
					return 0;
			}
			continue;
		}
		/* a weight, never permuted, that only kernels take */
		int a = h->marg[mi++];
		*why = "the buffer is no weight (pb.param) of @main";
		if (mlirAttributeIsNull(pb_ir_func_arg_attr(h->main, a,
							    PB_ATTR_PARAM)))
			return 0;
		*why = "the weights are stored permuted already";
		if (!mlirAttributeIsNull(pb_ir_func_arg_attr(h->main, a,
							     PB_ATTR_PERM)))
			return 0;
		MlirValue v = mlirBlockGetArgument(mb, a);
		*why = "@main uses the weights otherwise than in kernel calls";
		for (MlirOpOperand u = mlirValueGetFirstUse(v);
		     !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u)) {
			MlirOperation o = mlirOpOperandGetOwner(u);
			MlirOperation f = pb_ir_op_is(o, "func.call")
						  ? callee_of(o)
						  : (MlirOperation){NULL};
			if (mlirOperationIsNull(f) ||
			    !pb_contract_is_kernel(f) ||
			    !add_kernel(h, f, (int)mlirOpOperandGetOperandNumber(u)))
				return 0;
		}
	}
	return 1;
}

/* Does every use of "v" read it through affine.load? */
static int only_loaded(MlirValue v)
{
	for (MlirOpOperand u = mlirValueGetFirstUse(v);
	     !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u))
		if (!pb_ir_op_is(mlirOpOperandGetOwner(u), "affine.load") ||
		    mlirOpOperandGetOperandNumber(u) != 0)
			return 0;
	return 1;
}

/* Give every affine.load of "v" the map whose result i is result
 * perm[i] of its own, and "v" type "t". */
static void permute_reads(MlirValue v, MlirType t, int rank, const int *perm)
{
	for (MlirOpOperand u = mlirValueGetFirstUse(v);
	     !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u)) {
		MlirOperation o = mlirOpOperandGetOwner(u);
		MlirAffineMap m = mlirAffineMapAttrGetValue(pb_ir_attr(o, "map"));
		MlirAffineExpr e[PB_KERNEL_MAXR];
		for (int i = 0; i < rank; i++)
			e[i] = mlirAffineMapGetResult(m, perm[i]);
		pb_ir_set_attr(o, "map", mlirAffineMapAttrGet(mlirAffineMapGet(
			       mlirAffineMapGetContext(m),
			       mlirAffineMapGetNumDims(m),
			       mlirAffineMapGetNumSymbols(m), rank, e)));
	}
	mlirValueSetType(v, t);
}

/* The order of B's dimensions for the tensor cores: n first, then the
 * window's and the unit dimensions in their order, k last, into
 * "perm"; 0 when B is not a convolution's weights of that kind. */
static int order_of(const struct pb_kernel_contraction *c, int *perm)
{
	const struct pb_kernel_access *b = &c->b_;
	int np = -1, kp = -1, other = 0, n = 0;
	for (int r = 0; r < b->rank; r++) {
		int d = b->sub[r];
		if (b->tap[r] || pb_kernel_stride(b, r) > 1)
			return 0;
		if (d == c->n && np < 0)
			np = r;
		else if (d == PB_KERNEL_SUB_K && kp < 0)
			kp = r;
		else if (d <= PB_KERNEL_SUB_TAP || d == PB_KERNEL_SUB_CST)
			other++;
		else
			return 0;
	}
	if (np < 0 || kp < 0 || !other)
		return 0;
	perm[n++] = np;
	for (int r = 0; r < b->rank; r++)
		if (r != np && r != kp)
			perm[n++] = r;
	perm[n++] = kp;
	return 1;
}

int pb_mma_pack_weights(const struct pb_kernel_contraction *c,
			int *perm, const char **why)
{
	const struct pb_kernel_access *b = &c->b_;
	MlirType t = mlirValueGetType(b->mem);
	MlirOperation fn = pb_ir_parent_func(b->op);
	struct holders h;
	int pos, rank = b->rank, ident = 1;
	*why = NULL;
	if (!order_of(c, perm))
		return 0;
	for (int i = 0; i < rank; i++)
		ident &= perm[i] == i;
	if (ident)
		return 0;
	if (mlirOperationIsNull(fn) || !arg_of(b->mem, fn, &pos))
		return 0;
	*why = "its layout is not the identity";
	if (!mlirAffineMapIsIdentity(mlirMemRefTypeGetAffineMap(t)) ||
	    !mlirAttributeIsNull(mlirMemRefTypeGetMemorySpace(t)))
		return 0;
	/* k innermost gains only when its rows are whole 16-byte copies */
	MlirType et = mlirShapedTypeGetElementType(t);
	int64_t eb = mlirTypeIsAFloat(et) ? mlirFloatTypeGetWidth(et) / 8 : 0;
	*why = "its input channels are not whole 16-byte copies";
	if (!eb || (mlirShapedTypeGetDimSize(t, perm[rank - 1]) * eb) % 16)
		return 0;
	/* a 1x1's weights are contiguous along k either way: stored
	   [o][1][1][c] they are staged, which pays only where the input's
	   image rows are whole 16-byte copies too (56x56: both operands
	   staged); beside an input of 28, 14 or 7 columns, staged alone
	   or beside a gather, they measured worse than read from global
	   memory (ResNet-50: bench/RESULTS.md, 2026-12-02 wpack) */
	MlirType at = mlirValueGetType(c->a.mem);
	int64_t aw = mlirShapedTypeGetDimSize(at, c->a.rank - 1);
	*why = "a 1x1 convolution whose input rows are not whole 16-byte "
	       "copies (its weights would be staged alone)";
	if (!c->ntap && (aw * eb) % 16)
		return 0;
	if (!holders_of(fn, pos, &h, why))
		return 0;
	MlirBlock mb = pb_ir_entry_block(h.main);
	*why = "a kernel reads the weights otherwise than by affine.load";
	for (int i = 0; i < h.nk; i++) {
		MlirValue v = mlirBlockGetArgument(pb_ir_entry_block(h.kfn[i]),
						   h.kpos[i]);
		if (!mlirTypeEqual(mlirValueGetType(v), t) || !only_loaded(v))
			return 0;
	}
	for (int i = 0; i < h.nm; i++)
		if (!mlirTypeEqual(mlirValueGetType(mlirBlockGetArgument(
					   mb, h.marg[i])), t))
			return 0;
	int64_t shape[PB_KERNEL_MAXR];
	for (int i = 0; i < rank; i++)
		shape[i] = mlirShapedTypeGetDimSize(t, perm[i]);
	MlirType nt = mlirMemRefTypeContiguousGet(
		mlirShapedTypeGetElementType(t), rank, shape,
		mlirAttributeGetNull());
	for (int i = 0; i < h.nk; i++) {
		permute_reads(mlirBlockGetArgument(pb_ir_entry_block(h.kfn[i]),
						   h.kpos[i]),
			      nt, rank, perm);
		pb_ir_func_retype(h.kfn[i]);
	}
	for (int i = 0; i < h.nm; i++) {
		mlirValueSetType(mlirBlockGetArgument(mb, h.marg[i]), nt);
		pb_contract_set_perm(h.main, h.marg[i], rank, perm);
	}
	pb_ir_func_retype(h.main);
	return 1;
}
