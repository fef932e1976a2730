/* The K and V tiles of pb-mma's attention nest staged in shared memory
 * (docs/pb-smem.md, "Attention").
 *
 * pb-mma's attention nest (lib/mma/attention.c) is a block loop around
 * one warp loop (16 query rows a warp) whose key loop carries the row
 * maxima and sums and the output fragments:
 *
 *   %r = affine.for %j = 0 to NK step BN iter_args(m: vector<16xf32>, ..)
 *     vector.transfer_read K[.., %j + c, <constant>]   (16x8, S = QK^T)
 *     vector.transfer_read V[.., %j + c, <constant>]   (16x8, O += PV)
 *
 * All warps of a block read the same keys: the BN x D tile of K and the
 * BN x E tile of V of a step go through one ring of S slots each in
 * workgroup memory, filled with 16-byte copies (asynchronous on sm_80+:
 * pb.async) by all the block's warps (pb.share, as for contractions,
 * lib/smem/mma.c), S - 1 steps ahead:
 *
 *   prologue: the tiles of steps 0 .. S-2 into slots 0 .. S-2
 *   affine.for %j ...
 *     gpu.barrier {pb.wait = (S-2) x 2}       step j's tiles have landed
 *     the tiles of step j + (S-1) BN (mod NK) into slot (j/BN + S-1) mod S
 *     the reads, from slot (j/BN) mod S
 *   gpu.barrier {pb.wait = 0}
 *
 * Rows are padded by 16 bytes, so that an ldmatrix phase's 8 rows fall
 * in distinct banks; pb-codegen reads the fragments with ldmatrix (V's,
 * whose rows are keys, the k of P.V, transposed). Q is read once per
 * warp and stays in registers, so it is not staged. Keys that are not a
 * multiple of BN (the loop runs to NK rounded up, the last step's reads
 * masked past NK): the copies of rows past the buffer's keys store zeros,
 * what the masked reads meant, and the reads from the ring are in
 * bounds.
 *
 * On sm_90a, for pb-mma's wgmma tiles (wgmma_nest), the rings take
 * wgmma's swizzled layout instead, unpadded (wgmma_layout): K [key][d]
 * (d past 64 in k-major panels of 64), V [e / P][key][P], every access
 * marked pb.swizzle; pb-codegen reads them through descriptors. */
#include <string.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "ir/contract.h"
#include "smem/internal.h"
#include "target/target.h"

#define MAXREAD 128

/* The keys of key loop "l" into *nk: its constant upper bound, or the
 * constant of min(NK, f(..)) (causal attention stops at the diagonal,
 * lib/mma/attention.c); 0 when it has neither. */
static int key_bound(MlirOperation l, int64_t *nk)
{
	if (!pb_ir_const_map(l, "upperBoundMap", 1, nk))
		return 1;
	MlirAttribute a = pb_ir_attr(l, "upperBoundMap");
	if (mlirAttributeIsNull(a) || !mlirAttributeIsAAffineMap(a))
		return 0;
	MlirAffineMap m = mlirAffineMapAttrGetValue(a);
	if (mlirAffineMapGetNumResults(m) != 2)
		return 0;
	for (int k = 0; k < 2; k++) {
		MlirAffineExpr e = mlirAffineMapGetResult(m, k);
		if (mlirAffineExprIsAConstant(e)) {
			*nk = mlirAffineConstantExprGetValue(e);
			return 1;
		}
	}
	return 0;
}

/* One staged operand: the reads of global buffer "mem" in the key loop,
 * along memref dimensions "kd" (the keys) and "od" (the head or value
 * dimension), "p" < "q" the same two in memref order. */
struct aop {
	MlirValue mem;
	MlirOperation read[MAXREAD];
	int n, rank, kd, od, p, q;
	MlirValue uni[PB_KERNEL_MAXD]; /* the other subscripts */
	int64_t oext;		       /* the tile's extent along od */
	int64_t limit;		       /* >0: the buffer's size along od,
					  which the tile overruns */
	int64_t klimit;		       /* >0: the buffer's size along kd,
					  which the last step overruns
					  (keys not a multiple of BN) */
	int64_t eb;		       /* bytes per element */
	int kmaj;		       /* read with od the contraction's k
					  (K: S = QK^T's B [n][k]), else
					  the key (V: P.V's B [k][n]) */
	int64_t sw;		       /* >0: wgmma's layout, rows of "sw"
					  bytes, unpadded and swizzled */
	int64_t panel;		       /* >0: the tile's columns (along od) in
					  panels of this many: V's (wgmma's
					  B [k][n]), K's past 64 */
	MlirValue ring;
};

struct anest {
	MlirOperation block, warp, jloop;
	int64_t nk, bn, nw, wstep, stages, bytes;
	struct aop op[2];
	int nop;
	int wg;		/* the rings in wgmma's layout (wgmma_nest) */
};

/* The constant index "v" into "*c". */
static int index_constant(MlirValue v, int64_t *c)
{
	return pb_ir_const_int(v, c) == 0;
}

/* Is "v" a float arith.constant of value 0? */
static int zero_float(MlirValue v)
{
	if (!mlirValueIsAOpResult(v) ||
	    !pb_ir_op_is(mlirOpResultGetOwner(v), "arith.constant"))
		return 0;
	MlirAttribute a = pb_ir_attr(mlirOpResultGetOwner(v), "value");
	return mlirAttributeIsAFloat(a) && mlirFloatAttrGetValueDouble(a) == 0;
}

/* Is "v" the key loop's counter plus a constant (into "*off")? */
static int key_index(MlirValue v, MlirValue j, int64_t *off)
{
	if (mlirValueEqual(v, j)) {
		*off = 0;
		return 1;
	}
	if (!mlirValueIsAOpResult(v))
		return 0;
	MlirOperation a = mlirOpResultGetOwner(v);
	if (!pb_ir_op_is(a, "affine.apply") ||
	    mlirOperationGetNumOperands(a) != 1 ||
	    !mlirValueEqual(mlirOperationGetOperand(a, 0), j))
		return 0;
	MlirAffineMap m = mlirAffineMapAttrGetValue(pb_ir_attr(a, "map"));
	if (mlirAffineMapGetNumResults(m) != 1)
		return 0;
	MlirAffineExpr e = mlirAffineMapGetResult(m, 0);
	if (mlirAffineExprIsADim(e)) {
		*off = 0;
		return 1;
	}
	if (!mlirAffineExprIsAAdd(e))
		return 0;
	MlirAffineExpr l = mlirAffineBinaryOpExprGetLHS(e);
	MlirAffineExpr r = mlirAffineBinaryOpExprGetRHS(e);
	if (!mlirAffineExprIsADim(l) || !mlirAffineExprIsAConstant(r))
		return 0;
	*off = mlirAffineConstantExprGetValue(r);
	return 1;
}

/* Is in_bounds of transfer "r" false along its vector dimension "v"? */
static int masked_along(MlirOperation r, int v)
{
	MlirAttribute ib = pb_ir_attr(r, "in_bounds");
	return mlirAttributeIsNull(ib) || !mlirAttributeIsAArray(ib) ||
	       !mlirBoolAttrGetValue(mlirArrayAttrGetElement(ib, v));
}

/* Add transfer_read "r" of the key loop (counter "j") to "n"; 0 when it
 * does not fit the staging. */
static int add_read(struct anest *n, MlirOperation r, MlirValue j)
{
	MlirValue mem = mlirOperationGetOperand(r, 0);
	MlirType mt = mlirValueGetType(mem);
	MlirType vt = mlirValueGetType(mlirOperationGetResult(r, 0));
	int rank = (int)mlirShapedTypeGetRank(mt);
	if (pb_kernel_is_workgroup(mt) || rank > PB_KERNEL_MAXD ||
	    mlirOperationGetNumOperands(r) != (intptr_t)(2 + rank) ||
	    !mlirAffineMapIsIdentity(mlirMemRefTypeGetAffineMap(mt)) ||
	    !mlirTypeIsAFloat(mlirShapedTypeGetElementType(mt)))
		return 0;
	int d[2] = {pb_kernel_transfer_dim(r, 0), pb_kernel_transfer_dim(r, 1)};
	if (d[0] < 0 || d[1] < 0)
		return 0;
	int kd = -1, od = -1;
	int64_t koff = 0, ooff = 0;
	for (int v = 0; v < 2; v++) {
		MlirValue x = mlirOperationGetOperand(r, 1 + d[v]);
		int64_t c;
		if (key_index(x, j, &c)) {
			kd = d[v];
			koff = c;
		} else if (index_constant(x, &c)) {
			od = d[v];
			ooff = c;
		}
	}
	if (kd < 0 || od < 0 || kd == od)
		return 0;
	int ov = d[0] == od ? 0 : 1; /* the vector dimension along od */
	int64_t kext = mlirShapedTypeGetDimSize(vt, 1 - ov);
	int64_t oext = ooff + mlirShapedTypeGetDimSize(vt, ov);
	if (koff < 0 || koff + kext > n->bn || ooff < 0)
		return 0;
	/* reads past the keys (in_bounds false along them: the ragged last
	   step) read zeros, as the ring holds there */
	if (masked_along(r, 1 - ov) &&
	    !zero_float(mlirOperationGetOperand(r, 1 + rank)))
		return 0;
	struct aop *o = NULL;
	for (int i = 0; i < n->nop; i++)
		if (mlirValueEqual(n->op[i].mem, mem) && n->op[i].kd == kd &&
		    n->op[i].od == od)
			o = &n->op[i];
	if (!o) {
		if (n->nop == 2)
			return 0;
		o = &n->op[n->nop++];
		memset(o, 0, sizeof(*o));
		o->mem = mem;
		o->rank = rank;
		o->kd = kd;
		o->od = od;
		o->p = kd < od ? kd : od;
		o->q = kd < od ? od : kd;
		o->eb = mlirFloatTypeGetWidth(mlirShapedTypeGetElementType(mt)) / 8;
		o->kmaj = ov == 0;
		for (int x = 0; x < rank; x++)
			o->uni[x] = mlirOperationGetOperand(r, 1 + x);
	}
	if (masked_along(r, ov))
		o->limit = mlirShapedTypeGetDimSize(mt, od);
	if (masked_along(r, 1 - ov))
		o->klimit = mlirShapedTypeGetDimSize(mt, kd);
	for (int x = 0; x < rank; x++)
		if (x != kd && x != od &&
		    (!mlirValueEqual(o->uni[x], mlirOperationGetOperand(r, 1 + x)) ||
		     pb_ir_defined_in(o->uni[x], n->jloop)))
			return 0;
	if (o->n == MAXREAD)
		return 0;
	o->read[o->n++] = r;
	if (oext > o->oext)
		o->oext = oext;
	return 1;
}

/* Is transfer_read "r" of the key loop (counter "j") one of K's or V's
 * tiles (a key subscript and a constant one), the same for all the
 * block's warps? Other reads (an additive mask's, which the rows
 * subscript) stay in global memory. */
static int tile_read(MlirOperation r, MlirValue j)
{
	int key = 0, cst = 0;
	for (int v = 0; v < 2; v++) {
		int d = pb_kernel_transfer_dim(r, v);
		int64_t c;
		if (d < 0)
			return 0;
		MlirValue x = mlirOperationGetOperand(r, 1 + d);
		key += key_index(x, j, &c);
		cst += index_constant(x, &c);
	}
	return key == 1 && cst == 1;
}

/* Is "block" pb-mma's attention nest? "n" filled. */
static int find(MlirOperation block, struct anest *n)
{
	struct pb_ir_ops l = {0};
	memset(n, 0, sizeof(*n));
	n->block = block;
	pb_ir_collect(block, "affine.parallel", &l);
	for (int i = 0; i < l.n; i++)
		if (pb_contract_map_of(l.v[i]) == PB_MAP_WARP)
			n->warp = mlirOperationIsNull(n->warp) ? l.v[i]
							      : (MlirOperation){NULL};
	pb_ir_ops_free(&l);
	if (mlirOperationIsNull(n->warp))
		return 0;
	MlirBlock wb = mlirRegionGetFirstBlock(mlirOperationGetRegion(n->warp, 0));
	for (MlirOperation o = mlirBlockGetFirstOperation(wb);
	     !mlirOperationIsNull(o); o = mlirOperationGetNextInBlock(o)) {
		MlirType t = mlirOperationGetNumResults(o)
				     ? mlirValueGetType(mlirOperationGetResult(o, 0))
				     : (MlirType){NULL};
		/* the key loop carries the rows' maxima first */
		if (pb_ir_op_is(o, "affine.for") && !mlirTypeIsNull(t) &&
		    mlirTypeIsAVector(t) && mlirShapedTypeGetRank(t) == 1)
			n->jloop = o;
	}
	int64_t lb, ub, wlb, wst, wct;
	MlirValue wiv;
	if (mlirOperationIsNull(n->jloop) ||
	    pb_ir_const_map(n->jloop, "lowerBoundMap", 1, &lb) ||
	    !key_bound(n->jloop, &ub) || lb != 0 ||
	    pb_ir_parallel_dims(n->warp, 1, &wlb, &wst, &wct, &wiv) != 1)
		return 0;
	n->nk = ub;
	n->bn = mlirIntegerAttrGetValueInt(pb_ir_attr(n->jloop, "step"));
	n->nw = wct;
	n->wstep = wst;
	MlirBlock jb = mlirRegionGetFirstBlock(mlirOperationGetRegion(n->jloop, 0));
	MlirValue j = mlirBlockGetArgument(jb, 0);
	for (MlirOperation o = mlirBlockGetFirstOperation(jb);
	     !mlirOperationIsNull(o); o = mlirOperationGetNextInBlock(o))
		if (pb_ir_op_is(o, "vector.transfer_read") && tile_read(o, j) &&
		    !add_read(n, o, j))
			return 0;
	return n->nop > 0 && n->nk % n->bn == 0;
}

/* The elements in one 16-byte copy of "o". */
static int64_t chunk_of(const struct aop *o)
{
	return 16 / o->eb;
}

/* The extents of the tile of "o" along its memref dimensions p and q. */
static void extents(const struct anest *n, const struct aop *o, int64_t *ep,
		    int64_t *eq)
{
	*ep = o->p == o->kd ? n->bn : o->oext;
	*eq = o->q == o->kd ? n->bn : o->oext;
}

/* The elements of one slot of "o": its rows padded by 16 bytes. */
static int64_t slot_elems(const struct anest *n, const struct aop *o)
{
	int64_t ep, eq;
	extents(n, o, &ep, &eq);
	return ep * (eq + (o->sw ? 0 : chunk_of(o)));
}

/* Do K and V of "n" take wgmma on "t" (docs/pb-smem.md, "Attention"):
 * pb-mma's wgmma tiles (16 query rows a warp, warpgroups of 4 warps),
 * 16-bit K and V read whole (nothing past D or E) with the keys as
 * their rows, K's D in one swizzle's width (16, 32 or 64 elements), V's
 * E a multiple of 16? */
static int wgmma_nest(const struct pb_target *t, const struct anest *n)
{
	if (!pb_target_has_wgmma(t) || n->wstep != 16 || n->nw % 4 ||
	    n->nop != 2 || n->op[0].kmaj == n->op[1].kmaj)
		return 0;
	for (int i = 0; i < 2; i++) {
		const struct aop *x = &n->op[i];
		MlirType e = mlirShapedTypeGetElementType(mlirValueGetType(x->mem));
		for (int k = 0; k < x->n; k++)
			if (!mlirTypeEqual(e, mlirShapedTypeGetElementType(
					   mlirValueGetType(mlirOperationGetResult(
						   x->read[k], 0)))))
				return 0;
		if (x->eb != 2 || x->limit || x->od != x->q ||
		    x->q != x->rank - 1 || x->oext % 16 || x->oext > 256 ||
		    (x->kmaj && x->oext > 64 && x->oext % 64) ||
		    (x->kmaj && x->oext < 64 && (x->oext & (x->oext - 1))))
			return 0;
	}
	return 1;
}

/* wgmma's layout of "x": K's rows of D elements (2 D bytes, the
 * swizzle's width) or, past 64, in panels of 64 (k-major, a wgmma's 16
 * of k within one); V's columns in panels of 64, 32 or 16 (rows of 128,
 * 64 or 32 bytes). */
static void wgmma_layout(struct aop *x)
{
	x->panel = x->kmaj && x->oext <= 64 ? 0
		   : x->oext % 64 == 0	    ? 64
		   : x->oext % 32 == 0	    ? 32
					    : 16;
	x->sw = (x->panel ? x->panel : x->oext) * x->eb;
}

/* Choose the ring depth: the deepest of 3 or 2 stages that fits beside
 * what the block has already in the static shared memory, else past it
 * with the opt-in when the SM keeps enough warps (pb_target_smem_fits:
 * head 128's 34 KiB a step takes 3 stages, 102 KiB, 2 blocks of 4 warps
 * an SM on sm_90, where 48 KiB held 1), else 1 stage; every operand's
 * tile rows must be whole 16-byte copies of its buffer's rows. 0 with
 * "*why" when nothing is staged. */
static int plan(const struct pb_target *t, const struct pb_smem_opts *o,
		struct anest *n, int64_t used, const char **why)
{
	static const int64_t sts[] = {3, 2, 1};
	*why = "a K or V tile is not rows of whole 16-byte copies of its "
	       "buffer";
	for (int i = 0; i < n->nop; i++) {
		const struct aop *x = &n->op[i];
		int64_t ep, eq;
		extents(n, x, &ep, &eq);
		int64_t last = mlirShapedTypeGetDimSize(mlirValueGetType(x->mem),
							x->rank - 1);
		if (x->q != x->rank - 1 || last % chunk_of(x) ||
		    eq % chunk_of(x) ||
		    (x->limit && x->od == x->q && x->limit % chunk_of(x)))
			return 0;
	}
	*why = "the K and V rings do not fit the shared memory";
	/* 3 or 2 stages in the static shared memory, else with the opt-in,
	   then 1 stage */
	for (int c = 0; c < 5; c++) {
		int64_t s = o->stages ? o->stages : sts[c < 4 ? c % 2 : 2];
		int64_t bytes = used;
		for (int i = 0; i < n->nop; i++)
			bytes += n->op[i].eb * s * slot_elems(n, &n->op[i]);
		if (c < 2 ? bytes <= t->smem_per_block
			  : pb_target_smem_fits(t, bytes, (int)n->nw)) {
			n->stages = s;
			n->bytes = bytes;
			return 1;
		}
	}
	return 0;
}

/* The ring type of "x": S x the tile with its rows padded, in workgroup
 * memory. */
static void ring_type(struct pb_buf *t, const struct anest *n,
		      const struct aop *x)
{
	int64_t ep, eq;
	extents(n, x, &ep, &eq);
	if (x->panel)
		pb_buf_printf(t, "memref<%lldx%lldx%lldx%lldx",
			      (long long)n->stages, (long long)(eq / x->panel),
			      (long long)ep, (long long)x->panel);
	else
		pb_buf_printf(t, "memref<%lldx%lldx%lldx", (long long)n->stages,
			      (long long)ep,
			      (long long)(eq + (x->sw ? 0 : chunk_of(x))));
	pb_ir_type_print(mlirShapedTypeGetElementType(mlirValueGetType(x->mem)), t);
	pb_buf_puts(t, ", #gpu.address_space<workgroup>>");
}

/* The function header of a template over the operands: the global
 * buffers "%G<i>", the rings "%S<i>" and the other subscripts
 * "%u<i>_<d>", with "first" (text) before them; their values into
 * "args" from "*nargs" on. */
static void params_text(struct pb_buf *t, const struct anest *n,
			const char *first, MlirValue *args, int *nargs)
{
	pb_buf_printf(t, "func.func @t(%s", first);
	for (int i = 0; i < n->nop; i++) {
		const struct aop *x = &n->op[i];
		args[(*nargs)++] = x->mem;
		args[(*nargs)++] = x->ring;
		pb_buf_printf(t, "%s%%G%d: ", i || *first ? ", " : "", i);
		pb_ir_type_print(mlirValueGetType(x->mem), t);
		pb_buf_printf(t, ", %%S%d: ", i);
		ring_type(t, n, x);
		for (int d = 0; d < x->rank; d++)
			if (d != x->kd && d != x->od) {
				args[(*nargs)++] = x->uni[d];
				pb_buf_printf(t, ", %%u%d_%d: index", i, d);
			}
	}
	pb_buf_puts(t, ") {\n");
}

/* The copy of operand "i"'s tile at key "%<key>" into slot "%<slot>":
 * 16-byte chunks, row-major, shared by the block's warps (pb.share); a
 * chunk past the buffer along od is zeros. */
static void copy_text(struct pb_buf *t, const struct anest *n, int i,
		      const char *key, const char *slot, int async)
{
	const struct aop *x = &n->op[i];
	int64_t ep, eq;
	extents(n, x, &ep, &eq);
	int64_t ce = chunk_of(x), cpr = eq / ce, ch = ep * cpr;
	int64_t per = 32 * n->nw, nq = (ch + per - 1) / per;
	struct pb_buf g = {0}, r = {0}, e = {0};
	pb_ir_type_print(mlirValueGetType(x->mem), &g);
	pb_ir_type_print(mlirShapedTypeGetElementType(mlirValueGetType(x->mem)), &e);
	ring_type(&r, n, x);
	static const char *const rc[] = {"r", "c"};
	struct pb_smem_digits dg;
	pb_smem_digits_init(&dg, 2, (int64_t[]){ep, cpr},
			    (int64_t[]){1, ce}, per, nq);
	pb_smem_rounds_text(t, 2, n->nw, nq, &dg, rc);
	if (ch % per)
		pb_buf_printf(t, "      affine.if affine_set<(i) : (%lld - i >= "
			      "0)>(%%ci) {\n", (long long)(ch - 1));
	/* a chunk past the buffer along od, or past its keys (the ragged
	   last step), is zeros */
	int guard = x->limit || x->klimit;
	if (guard) {
		const char *along_o = x->od == x->p ? "r" : "c";
		const char *along_k = x->kd == x->p ? "r" : "c";
		pb_buf_puts(t, "      affine.if affine_set<(k, r, c) : (");
		if (x->klimit)
			pb_buf_printf(t, "%lld - k - %s >= 0",
				      (long long)(x->klimit - 1), along_k);
		if (x->limit)
			pb_buf_printf(t, "%s%lld - %s >= 0",
				      x->klimit ? ", " : "",
				      (long long)(x->limit - 1), along_o);
		pb_buf_printf(t, ")>(%%%s, %%r, %%c) {\n", key);
	}
	pb_buf_printf(t, "      %%v = affine.vector_load %%G%d[", i);
	for (int d = 0; d < x->rank; d++) {
		const char *within = d == x->p ? "%r" : "%c";
		pb_buf_puts(t, d ? ", " : "");
		if (d == x->kd)
			pb_buf_printf(t, "%%%s + %s", key, within);
		else if (d == x->od)
			pb_buf_puts(t, within);
		else
			pb_buf_printf(t, "%%u%d_%d", i, d);
	}
	/* wgmma's rings: V's panels, the copies swizzled (pb.swizzle); a
	   row of zeros past the keys is all zeros however swizzled */
	char at[96], sw[64] = "";
	if (x->panel)
		snprintf(at, sizeof(at), "%%%s, %%c floordiv %lld, %%r, %%c mod "
			 "%lld", slot, (long long)x->panel, (long long)x->panel);
	else
		snprintf(at, sizeof(at), "%%%s, %%r, %%c", slot);
	if (x->sw)
		snprintf(sw, sizeof(sw), " {" PB_ATTR_SWIZZLE " = %lld : i64}",
			 (long long)x->sw);
	pb_buf_printf(t, "] : %s, vector<%lldx%s>\n"
		      "      affine.vector_store %%v, %%S%d[%s]%s : "
		      "%s, vector<%lldx%s>\n",
		      g.data, (long long)ce, e.data, i, at, sw, r.data,
		      (long long)ce, e.data);
	if (guard)
		pb_buf_printf(t, "      } else {\n"
			      "        %%z = arith.constant dense<0.000000e+00> "
			      ": vector<%lldx%s>\n"
			      "        affine.vector_store %%z, %%S%d[%s] : %s, "
			      "vector<%lldx%s>\n      }\n",
			      (long long)ce, e.data, i, at, r.data,
			      (long long)ce, e.data);
	if (ch % per)
		pb_buf_puts(t, "      }\n");
	pb_buf_printf(t, "    }\n  } {" PB_ATTR_MAP " = \"thread\"%s}\n"
		      "  } {" PB_ATTR_SHARE "}\n",
		      async ? ", pb.async" : "");
	pb_buf_free(&g);
	pb_buf_free(&r);
	pb_buf_free(&e);
}

/* Instantiate "t" before "at" with "nargs" arguments; the operations
 * into "out". */
static int place(struct pb_ctx *ctx, struct pb_buf *t, MlirOperation at,
		 MlirValue *args, int nargs, struct pb_ir_ops *out)
{
	int rc = pb_ir_instantiate(ctx, t->data, at, nargs, args,
				   mlirOperationGetLocation(at), out);
	pb_buf_free(t);
	return rc;
}

/* Read "r" of operand "x" from its ring at slot "slot": the same
 * fragment at the read's key offset (from %j) and constant along od. */
static int ring_read(struct pb_ctx *ctx, const struct anest *n,
		     const struct aop *x, MlirOperation r, MlirValue slot,
		     MlirValue j)
{
	MlirType vt = mlirValueGetType(mlirOperationGetResult(r, 0));
	struct pb_buf t = {0};
	int64_t koff = 0, ooff = 0;
	key_index(mlirOperationGetOperand(r, 1 + x->kd), j, &koff);
	index_constant(mlirOperationGetOperand(r, 1 + x->od), &ooff);
	/* vector dimension 0 along the ring's dimension 1 or 2 */
	int v0 = pb_kernel_transfer_dim(r, 0) == x->p ? 1 : 2;
	int64_t at[2] = {x->p == x->kd ? koff : ooff,
			 x->q == x->kd ? koff : ooff};
	pb_buf_puts(&t, "func.func @t(%S: ");
	ring_type(&t, n, x);
	pb_buf_puts(&t, ", %s: index, %p: ");
	pb_ir_type_print(mlirShapedTypeGetElementType(vt), &t);
	char sw[64] = "";
	if (x->sw)
		snprintf(sw, sizeof(sw), ", " PB_ATTR_SWIZZLE " = %lld : i64",
			 (long long)x->sw);
	if (x->panel)
		/* [slot][o / P][key][o mod P]: V's read has the key along
		   its dimension 0 (P.V's k), K's its d (QK^T's k) */
		pb_buf_printf(&t, ") {\n  %%a = arith.constant %lld : index\n"
			      "  %%b = arith.constant %lld : index\n"
			      "  %%c = arith.constant %lld : index\n"
			      "  %%v = vector.transfer_read %%S[%%s, %%b, %%a, %%c], "
			      "%%p {in_bounds = [true, true], permutation_map = "
			      "affine_map<(a, b, c, d) -> (%s)>%s} : ",
			      (long long)koff, (long long)(ooff / x->panel),
			      (long long)(ooff % x->panel),
			      x->kmaj ? "d, c" : "c, d", sw);
	else
		pb_buf_printf(&t, ") {\n  %%a = arith.constant %lld : index\n"
			      "  %%b = arith.constant %lld : index\n"
			      "  %%v = vector.transfer_read %%S[%%s, %%a, %%b], %%p "
			      "{in_bounds = [true, true], permutation_map = "
			      "affine_map<(a, b, c) -> (%s, %s)>%s} : ",
			      (long long)at[0], (long long)at[1],
			      v0 == 1 ? "b" : "c", v0 == 1 ? "c" : "b", sw);
	ring_type(&t, n, x);
	pb_buf_puts(&t, ", ");
	pb_ir_type_print(vt, &t);
	pb_buf_puts(&t, "\n  return\n}\n");
	MlirValue args[3] = {x->ring, slot,
			     mlirOperationGetOperand(r, 1 + x->rank)};
	int rc = pb_ir_replace_by_template(ctx, t.data, r, 3, args);
	pb_buf_free(&t);
	return rc;
}

/* Stage the K and V tiles of "n": the rings, the prologue before the
 * key loop, the next step's copies at the top of its body, the reads. */
static int stage(struct pb_ctx *ctx, struct anest *n)
{
	MlirLocation loc = mlirOperationGetLocation(n->jloop);
	MlirBlock bb = mlirRegionGetFirstBlock(mlirOperationGetRegion(n->block, 0));
	MlirBlock jb = mlirRegionGetFirstBlock(mlirOperationGetRegion(n->jloop, 0));
	MlirValue args[4 + 4 * PB_KERNEL_MAXD];
	struct pb_buf t = {0};
	struct pb_ir_ops out = {0};
	int s = (int)n->stages, nargs = 0, rc = PB_OK;
	for (int i = 0; i < n->nop && rc == PB_OK; i++) {
		struct pb_buf r = {0};
		MlirOperation a;
		ring_type(&r, n, &n->op[i]);
		rc = pb_kernel_workgroup_alloc(ctx, r.data,
					       mlirBlockGetFirstOperation(bb),
					       loc, &a);
		pb_buf_free(&r);
		if (rc != PB_OK)
			return rc;
		n->op[i].ring = mlirOperationGetResult(a, 0);
		MlirOperation d = pb_ir_op_create(loc, "memref.dealloc", 1,
						  &n->op[i].ring);
		mlirBlockInsertOwnedOperationBefore(bb, mlirBlockGetTerminator(bb),
						    d);
	}
	/* the prologue: steps 0 .. S-2 */
	if (s > 1) {
		params_text(&t, n, "", args, &nargs);
		for (int p = 0; p + 1 < s; p++) {
			char key[16], sl[16];
			pb_buf_printf(&t, "  %%pk%d = arith.constant %lld : "
				      "index\n  %%ps%d = arith.constant %d : "
				      "index\n", p, (long long)(p * n->bn), p, p);
			snprintf(key, sizeof(key), "pk%d", p);
			snprintf(sl, sizeof(sl), "ps%d", p);
			for (int i = 0; i < n->nop; i++)
				copy_text(&t, n, i, key, sl, 1);
		}
		pb_buf_puts(&t, "  return\n}\n");
		rc = place(ctx, &t, n->jloop, args, nargs, &out);
		pb_ir_ops_free(&out);
		if (rc != PB_OK)
			return rc;
	}
	/* the step's head: its slot, the wait, the copies ahead */
	nargs = 0;
	params_text(&t, n, "%j: index", args + 1, &nargs);
	args[0] = mlirBlockGetArgument(jb, 0);
	pb_buf_printf(&t, "  %%slot = affine.apply affine_map<(j) -> ((j "
		      "floordiv %lld) mod %d)>(%%j)\n",
		      (long long)n->bn, s);
	if (s > 1) {
		pb_buf_printf(&t, "  gpu.barrier {pb.wait = %d : i64}\n"
			      "  %%nk = affine.apply affine_map<(j) -> ((j + "
			      "%lld) mod %lld)>(%%j)\n"
			      "  %%ns = affine.apply affine_map<(j) -> ((j "
			      "floordiv %lld + %d) mod %d)>(%%j)\n",
			      (s - 2) * n->nop, (long long)((s - 1) * n->bn),
			      (long long)n->nk, (long long)n->bn, s - 1, s);
		for (int i = 0; i < n->nop; i++)
			copy_text(&t, n, i, "nk", "ns", 1);
	} else {
		pb_buf_puts(&t, "  gpu.barrier\n");
		for (int i = 0; i < n->nop; i++)
			copy_text(&t, n, i, "j", "slot", 0);
		pb_buf_puts(&t, "  gpu.barrier\n");
	}
	pb_buf_puts(&t, "  return\n}\n");
	rc = place(ctx, &t, mlirBlockGetFirstOperation(jb), args, nargs + 1,
		   &out);
	MlirValue slot = rc == PB_OK ? mlirOperationGetResult(out.v[0], 0)
				     : (MlirValue){NULL};
	pb_ir_ops_free(&out);
	if (rc != PB_OK)
		return rc;
	/* the last steps' copies (of steps wrapped around) drained */
	if (s > 1) {
		MlirOperation next = mlirOperationGetNextInBlock(n->jloop);
		pb_buf_puts(&t, "func.func @t() {\n  gpu.barrier {pb.wait = 0 : "
			    "i64}\n  return\n}\n");
		rc = place(ctx, &t, next, NULL, 0, NULL);
	}
	for (int i = 0; i < n->nop && rc == PB_OK; i++)
		for (int k = 0; k < n->op[i].n && rc == PB_OK; k++)
			rc = ring_read(ctx, n, &n->op[i], n->op[i].read[k], slot,
				       mlirBlockGetArgument(jb, 0));
	return rc;
}

int pb_smem_stage_attention(struct pb_ctx *ctx, MlirModule m,
			    const struct pb_smem_opts *o)
{
	const struct pb_target *t = pb_target_of(ctx);
	struct pb_ir_ops blocks = {0};
	int rc = t ? PB_OK : PB_ERR;
	pb_ir_collect(mlirModuleGetOperation(m), "affine.parallel", &blocks);
	for (int i = 0; i < blocks.n && rc == PB_OK; i++) {
		struct anest n;
		const char *why;
		if (pb_contract_map_of(blocks.v[i]) != PB_MAP_BLOCK ||
		    !find(blocks.v[i], &n))
			continue;
		MlirLocation loc = mlirOperationGetLocation(blocks.v[i]);
		n.wg = wgmma_nest(t, &n);
		for (int k = 0; n.wg && k < n.nop; k++)
			wgmma_layout(&n.op[k]);
		if (!plan(t, o, &n, pb_kernel_workgroup_bytes(blocks.v[i]),
			  &why)) {
			if (o->remarks)
				pb_remark_at(ctx, loc, "attention tiles not "
					     "staged: %s", why);
			continue;
		}
		if (o->remarks)
			pb_remark_at(ctx, loc, "attention tiles staged: K and "
				     "V, %lld keys a step, %lld stages, %lld "
				     "bytes of shared memory for %lld warps%s",
				     (long long)n.bn, (long long)n.stages,
				     (long long)n.bytes, (long long)n.nw,
				     n.wg ? ", in wgmma's swizzled layout" : "");
		rc = stage(ctx, &n);
	}
	pb_ir_ops_free(&blocks);
	return rc;
}
