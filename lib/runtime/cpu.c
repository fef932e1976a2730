/* Running a module on the CPU: @main's signature, stripping GPU-only
 * constructs, lowering to the LLVM dialect with upstream passes, and
 * calling @main through MLIR's ExecutionEngine with memref descriptors. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/ExecutionEngine.h"

#include "ir/contract.h"
#include "ir/ir.h"
#include "ir/passes.h"
#include "runtime/runtime.h"

_Static_assert(sizeof(void *) == sizeof(int64_t), "64-bit hosts only");

/* Print "t" into a malloc'ed string (for diagnostics). */
static char *type_str(MlirType t)
{
	struct pb_buf b = {0};
	mlirTypePrint(t, pb_buf_mlir_callback, &b);
	pb_buf_append(&b, "", 0);
	return b.data;
}

/* The pb dtype of the MLIR element type "t", or PB_DT_UNDEFINED. */
static enum pb_dtype dtype_of(MlirType t)
{
	if (mlirTypeIsAF32(t))
		return PB_DT_F32;
	if (mlirTypeIsAF64(t))
		return PB_DT_F64;
	if (mlirTypeIsAF16(t))
		return PB_DT_F16;
	if (mlirTypeIsABF16(t))
		return PB_DT_BF16;
	if (mlirTypeIsAIndex(t))
		return PB_DT_I64;
	if (!mlirTypeIsAInteger(t))
		return PB_DT_UNDEFINED;
	int u = mlirIntegerTypeIsUnsigned(t);
	switch (mlirIntegerTypeGetWidth(t)) {
	case 1: return PB_DT_BOOL;
	case 8: return u ? PB_DT_U8 : PB_DT_I8;
	case 16: return u ? PB_DT_U16 : PB_DT_I16;
	case 32: return u ? PB_DT_U32 : PB_DT_I32;
	case 64: return u ? PB_DT_U64 : PB_DT_I64;
	default: return PB_DT_UNDEFINED;
	}
}

/* Is memref type "t" (static, rank at most PB_MAX_RANK) laid out
 * row-major without offset: the identity layout, or a strided layout that
 * amounts to it? An empty memref has no data to lay out. */
static int is_identity_layout(MlirType t)
{
	int64_t rank = mlirShapedTypeGetRank(t), strides[PB_MAX_RANK], off;
	if (mlirAffineMapIsIdentity(mlirMemRefTypeGetAffineMap(t)))
		return 1;
	if (mlirLogicalResultIsFailure(
		    mlirMemRefTypeGetStridesAndOffset(t, strides, &off)) || off)
		return 0;
	int64_t s = 1;
	for (int64_t i = rank - 1; i >= 0; i--) {
		int64_t n = mlirShapedTypeGetDimSize(t, i);
		if (n == 0)
			return 1;
		if (strides[i] != s && n != 1)
			return 0;
		s *= n;
	}
	return 1;
}

/* The string value of entry "name" of the dictionary "dict" or NULL. */
static char *dict_str(MlirAttribute dict, const char *name)
{
	if (mlirAttributeIsNull(dict) || !mlirAttributeIsADictionary(dict))
		return NULL;
	MlirAttribute a = mlirDictionaryAttrGetElementByName(dict, pb_str(name));
	if (mlirAttributeIsNull(a) || !mlirAttributeIsAString(a))
		return NULL;
	MlirStringRef s = mlirStringAttrGetValue(a);
	return strndup(s.data, s.length);
}

/* Does the dictionary "dict" hold an entry "name"? */
static int dict_has(MlirAttribute dict, const char *name)
{
	return !mlirAttributeIsNull(dict) && mlirAttributeIsADictionary(dict) &&
	       !mlirAttributeIsNull(
		       mlirDictionaryAttrGetElementByName(dict, pb_str(name)));
}

/* The unsigned type "name" (PB_ATTR_DTYPE: "u8", "u16", "u32", "u64") of
 * the same width as signless "dt", or PB_DT_UNDEFINED. */
static enum pb_dtype unsigned_of(const char *name, enum pb_dtype dt)
{
	static const enum pb_dtype all[] = {PB_DT_U8, PB_DT_U16, PB_DT_U32,
					    PB_DT_U64};
	for (size_t i = 0; i < sizeof(all) / sizeof(*all); i++)
		if (!strcmp(pb_dtype_name(all[i]), name) && dt != PB_DT_BOOL &&
		    pb_dtype_size(all[i]) == pb_dtype_size(dt))
			return all[i];
	return PB_DT_UNDEFINED;
}

/* Fill "a" from argument "i" of type "t" with attributes "dict" of
 * @main "fn"; reports a type @main cannot take. */
static int read_arg(struct pb_ctx *ctx, MlirOperation fn, int i, MlirType t,
		    MlirAttribute dict, struct pb_runtime_arg *a)
{
	MlirLocation loc = mlirOperationGetLocation(fn);
	const char *why = NULL;
	if (!mlirTypeIsAMemRef(t))
		why = "is not a memref";
	else if (!mlirShapedTypeHasStaticShape(t))
		why = "has a dynamic shape";
	else if (mlirShapedTypeGetRank(t) > PB_MAX_RANK)
		why = "has too high a rank";
	else if (!is_identity_layout(t))
		why = "has a non-identity layout";
	else if ((a->dtype = dtype_of(mlirShapedTypeGetElementType(t))) ==
		 PB_DT_UNDEFINED)
		why = "has an unsupported element type";
	char *u = why ? NULL : dict_str(dict, PB_ATTR_DTYPE);
	if (u && (a->dtype = unsigned_of(u, a->dtype)) == PB_DT_UNDEFINED)
		why = "has a " PB_ATTR_DTYPE " that does not fit its element "
		      "type";
	free(u);
	if (why) {
		char *s = type_str(t);
		pb_error_at(ctx, loc, "argument %d of @main %s: %s (run pb-fuse "
			    "first?)", i, why, s);
		free(s);
		return PB_ERR;
	}
	a->rank = (int)mlirShapedTypeGetRank(t);
	for (int d = 0; d < a->rank; d++)
		a->dims[d] = mlirShapedTypeGetDimSize(t, d);
	char *param = dict_str(dict, PB_ATTR_PARAM);
	int p = pb_contract_perm_of(dict, a->rank, a->perm);
	if (p < 0 || (p > 0 && !param)) {
		free(param);
		pb_error_at(ctx, loc, "argument %d of @main: %s", i,
			    p < 0 ? "malformed " PB_ATTR_PERM " (expected "
				    "array<i64> permuting its dimensions)"
				  : PB_ATTR_PERM " on an argument that is no "
				    PB_ATTR_PARAM);
		return PB_ERR;
	}
	a->nperm = p > 0 ? a->rank : 0;
	char *name = dict_str(dict, PB_ATTR_NAME);
	if (param) {
		a->role = PB_RUNTIME_PARAM;
		a->name = param;
		free(name);
	} else {
		a->role = dict_has(dict, PB_ATTR_OUTPUT) ? PB_RUNTIME_OUTPUT
						       : PB_RUNTIME_INPUT;
		a->name = name;
	}
	if (!a->name) {
		char buf[32];
		snprintf(buf, sizeof(buf), "arg%d", i);
		a->name = strdup(buf);
	}
	return PB_OK;
}

int pb_runtime_cpu_signature(struct pb_ctx *ctx, MlirModule m,
			     struct pb_runtime_sig *sig)
{
	MlirOperation fn = pb_ir_lookup_func(m, "main");
	memset(sig, 0, sizeof(*sig));
	if (mlirOperationIsNull(fn)) {
		pb_error(ctx, "no func.func @main in the module");
		return PB_ERR;
	}
	MlirType ft = mlirTypeAttrGetValue(pb_ir_attr(fn, "function_type"));
	if (mlirFunctionTypeGetNumResults(ft) > 0) {
		pb_error_at(ctx, mlirOperationGetLocation(fn), "@main returns "
			    "values; expected outputs as pb.output arguments "
			    "(run pb-fuse first?)");
		return PB_ERR;
	}
	int n = (int)mlirFunctionTypeGetNumInputs(ft);
	MlirAttribute attrs = pb_ir_attr(fn, "arg_attrs");
	int have = !mlirAttributeIsNull(attrs) && mlirAttributeIsAArray(attrs);
	sig->args = calloc(n ? n : 1, sizeof(*sig->args));
	if (!sig->args) {
		pb_error(ctx, "out of memory");
		return PB_ERR;
	}
	sig->nargs = n;
	for (int i = 0; i < n; i++) {
		MlirAttribute d = have && i < mlirArrayAttrGetNumElements(attrs)
			? mlirArrayAttrGetElement(attrs, i)
			: mlirAttributeGetNull();
		if (read_arg(ctx, fn, i, mlirFunctionTypeGetInput(ft, i), d,
			     &sig->args[i]) != PB_OK) {
			pb_runtime_sig_free(sig);
			return PB_ERR;
		}
	}
	return PB_OK;
}

/* "t" without a memory space when it is a memref in one, else "t". */
static MlirType strip_space(MlirType t)
{
	if (!mlirTypeIsAMemRef(t) ||
	    mlirAttributeIsNull(mlirMemRefTypeGetMemorySpace(t)))
		return t;
	intptr_t rank = mlirShapedTypeGetRank(t);
	int64_t shape[PB_MAX_RANK * 4];
	if (rank > (intptr_t)(sizeof(shape) / sizeof(shape[0])))
		return t;
	for (intptr_t i = 0; i < rank; i++)
		shape[i] = mlirShapedTypeGetDimSize(t, i);
	return mlirMemRefTypeGet(mlirShapedTypeGetElementType(t), rank, shape,
				 mlirMemRefTypeGetLayout(t),
				 mlirAttributeGetNull());
}

/* Strip memory spaces from the inputs and results of the function type
 * attribute "name" of "op" (func.func, gpu.func). */
static void strip_function_type(MlirOperation op, const char *name)
{
	MlirAttribute a = pb_ir_attr(op, name);
	if (mlirAttributeIsNull(a) || !mlirAttributeIsAType(a))
		return;
	MlirType ft = mlirTypeAttrGetValue(a);
	if (!mlirTypeIsAFunction(ft))
		return;
	intptr_t ni = mlirFunctionTypeGetNumInputs(ft);
	intptr_t nr = mlirFunctionTypeGetNumResults(ft);
	MlirType *in = malloc(sizeof(*in) * (ni + nr + 1)), *res = in + ni;
	if (!in)
		return;
	for (intptr_t i = 0; i < ni; i++)
		in[i] = strip_space(mlirFunctionTypeGetInput(ft, i));
	for (intptr_t i = 0; i < nr; i++)
		res[i] = strip_space(mlirFunctionTypeGetResult(ft, i));
	MlirType nt = mlirFunctionTypeGet(mlirTypeGetContext(ft), ni, in, nr, res);
	if (!mlirTypeEqual(nt, ft))
		pb_ir_set_attr(op, name, mlirTypeAttrGet(nt));
	free(in);
}

/* The ops that stripping collects to erase after the walk. */
struct strip {
	MlirOperation *erase;
	int n, cap;
};

/* Walk callback: retype the results and block arguments of "op" without
 * memory spaces and collect gpu.barrier ops in "user". */
static MlirWalkResult strip_op(MlirOperation op, void *user)
{
	struct strip *s = user;
	if (pb_ir_op_is(op, "gpu.barrier")) {
		if (s->n == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 16;
			s->erase = realloc(s->erase, sizeof(*s->erase) * s->cap);
		}
		s->erase[s->n++] = op;
		return MlirWalkResultAdvance;
	}
	for (intptr_t i = 0; i < mlirOperationGetNumResults(op); i++) {
		MlirValue v = mlirOperationGetResult(op, i);
		mlirValueSetType(v, strip_space(mlirValueGetType(v)));
	}
	for (MlirRegion r = mlirOperationGetFirstRegion(op); !mlirRegionIsNull(r);
	     r = mlirRegionGetNextInOperation(r))
		for (MlirBlock b = mlirRegionGetFirstBlock(r); !mlirBlockIsNull(b);
		     b = mlirBlockGetNextInRegion(b))
			for (intptr_t i = 0; i < mlirBlockGetNumArguments(b); i++) {
				MlirValue v = mlirBlockGetArgument(b, i);
				mlirValueSetType(v, strip_space(mlirValueGetType(v)));
			}
	strip_function_type(op, "function_type");
	if (pb_ir_op_is(op, "memref.global")) {
		MlirAttribute a = pb_ir_attr(op, "type");
		if (!mlirAttributeIsNull(a) && mlirAttributeIsAType(a))
			pb_ir_set_attr(op, "type", mlirTypeAttrGet(strip_space(
				mlirTypeAttrGetValue(a))));
	}
	return MlirWalkResultAdvance;
}

int pb_runtime_cpu_strip_gpu(struct pb_ctx *ctx, MlirModule m)
{
	struct strip s = {0};
	MlirOperation top = mlirModuleGetOperation(m);
	mlirOperationWalk(top, strip_op, &s, MlirWalkPreOrder);
	for (int i = 0; i < s.n; i++)
		mlirOperationDestroy(s.erase[i]);
	free(s.erase);
	if (!mlirOperationVerify(top)) {
		if (!ctx->nerrors)
			pb_error(ctx, "the module does not verify after "
				 "stripping GPU constructs for the CPU");
		return PB_ERR;
	}
	return PB_OK;
}

/* An unranked memref as passed to the runtime function memrefCopy. */
struct unranked {
	int64_t rank;
	int64_t *desc; /* {alloc, aligned, offset, sizes[rank], strides[rank]} */
};

/* memrefCopy for the JIT: copy the strided memref "src" into "dst" with
 * elements of "esize" bytes (what finalize-memref-to-llvm calls for copies
 * it cannot turn into a memcpy). */
static void memref_copy(int64_t esize, struct unranked *src,
			struct unranked *dst)
{
	int64_t r = src->rank, idx[PB_MAX_RANK * 4] = {0}, n = 1;
	const int64_t *sd = src->desc, *dd = dst->desc;
	char *sp = (char *)(intptr_t)sd[1], *dp = (char *)(intptr_t)dd[1];
	for (int64_t d = 0; d < r; d++)
		n *= sd[3 + d];
	for (int64_t i = 0; i < n; i++) {
		int64_t so = sd[2], doff = dd[2];
		for (int64_t d = 0; d < r; d++) {
			so += idx[d] * sd[3 + r + d];
			doff += idx[d] * dd[3 + r + d];
		}
		memcpy(dp + doff * esize, sp + so * esize, esize);
		for (int64_t d = r - 1; d >= 0 && ++idx[d] == sd[3 + d]; d--)
			idx[d] = 0;
	}
}

/* Keep the kernels of "m" (every func.func with a body but @main) out of
 * line: inlined into @main they are compiled twice (they keep external
 * linkage) and the one huge function makes LLVM's -O3 code generation
 * several times slower (squeezenet: 2x). */
static void keep_kernels_out_of_line(struct pb_ctx *ctx, MlirModule m)
{
	MlirAttribute noinline = mlirStringAttrGet(ctx->mlir, pb_str("noinline"));
	MlirAttribute list = mlirArrayAttrGet(ctx->mlir, 1, &noinline);
	for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		MlirStringRef name = pb_ir_str_attr(op, "sym_name");
		if (!pb_ir_op_is(op, "func.func") ||
		    (name.length == 4 && !strncmp(name.data, "main", 4)) ||
		    mlirBlockIsNull(mlirRegionGetFirstBlock(
			    mlirOperationGetRegion(op, 0))) ||
		    !mlirAttributeIsNull(pb_ir_attr(op, "passthrough")))
			continue;
		pb_ir_set_attr(op, "passthrough", list);
	}
}

/* Move every statically sized memref.alloca nested in a loop of a
 * function of "m" to the start of the function: on the CPU the iterations
 * run one after another, so one buffer serves them all, and LLVM can
 * promote the scalar ones to registers (allocas in loops would also grow
 * the stack on every iteration: vector-to-scf's buffers for a masked
 * tensor-core tile overflowed it on SqueezeNet's classifier). */
static void hoist_allocas(MlirModule m)
{
	for (MlirOperation fn = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
	     !mlirOperationIsNull(fn); fn = mlirOperationGetNextInBlock(fn)) {
		MlirBlock entry = pb_ir_entry_block(fn);
		struct pb_ir_ops all = {0};
		if (!pb_ir_op_is(fn, "func.func") || mlirBlockIsNull(entry))
			continue;
		pb_ir_collect(fn, "memref.alloca", &all);
		for (int i = 0; i < all.n; i++) {
			MlirOperation op = all.v[i];
			MlirBlock b = mlirOperationGetBlock(op);
			if (mlirOperationGetNumOperands(op) ||
			    mlirBlockEqual(b, entry))
				continue;
			mlirOperationMoveBefore(op,
						mlirBlockGetFirstOperation(entry));
		}
		pb_ir_ops_free(&all);
	}
}

/* compiler-rt's __truncsfbf2 (float to bfloat16, nearest even), which
 * LLVM calls where it promotes a bf16 operation the CPU lacks through
 * f32 (the select of pb-smem's zero padding of staged tiles) and which
 * the JIT's process (libgcc 12) does not provide. A bfloat16 result travels
 * in the low 16 bits of the first SSE (x86-64) or FP (AArch64) register,
 * as a float's bits do: the float returned holds the bfloat16 bits. */
static float truncsfbf2(float x)
{
	uint32_t bits = pb_bf16_from_float(x);
	float r;
	memcpy(&r, &bits, sizeof(r));
	return r;
}

/* Is "t" i1? */
static int is_bool(MlirType t)
{
	return mlirTypeIsAInteger(t) && mlirIntegerTypeGetWidth(t) == 1;
}

/* Replace vector.transfer_read "op" of a boolean memref by a read of each
 * element (see unpack_bool_reads). */
static int unpack_bool_read(struct pb_ctx *ctx, MlirOperation op)
{
	MlirType mt = mlirValueGetType(mlirOperationGetOperand(op, 0));
	MlirType vt = mlirValueGetType(mlirOperationGetResult(op, 0));
	int rank = (int)mlirShapedTypeGetRank(mt);
	int vr = (int)mlirShapedTypeGetRank(vt);
	MlirAttribute pm = pb_ir_attr(op, "permutation_map");
	MlirAttribute ib = pb_ir_attr(op, "in_bounds");
	if (mlirOperationGetNumOperands(op) != rank + 2 ||
	    mlirAttributeIsNull(pm) || vr > 8 || rank > 8) {
		pb_error_at(ctx, mlirOperationGetLocation(op),
			    "cannot run this vector.transfer_read of booleans "
			    "on the CPU (a mask or over 8 dimensions)");
		return PB_ERR;
	}
	MlirAffineMap map = mlirAffineMapAttrGetValue(pm);
	/* the memref dimension of each vector dimension (-1: broadcast),
	   and the memref dimensions a read may overrun */
	int dim[8];
	unsigned masked = 0;
	int64_t n = 1;
	for (int r = 0; r < vr; r++) {
		MlirAffineExpr e = mlirAffineMapGetResult(map, r);
		dim[r] = mlirAffineExprIsADim(e)
				 ? (int)mlirAffineDimExprGetPosition(e)
				 : -1;
		MlirAttribute b = mlirAttributeIsNull(ib) ||
					  r >= mlirArrayAttrGetNumElements(ib)
				      ? (MlirAttribute){NULL}
				      : mlirArrayAttrGetElement(ib, r);
		if (dim[r] >= 0 &&
		    (mlirAttributeIsNull(b) || !mlirBoolAttrGetValue(b)))
			masked |= 1u << dim[r];
		n *= mlirShapedTypeGetDimSize(vt, r);
	}
	struct pb_buf t = {0}, ts = {0}, vs = {0};
	pb_ir_type_print(mt, &ts);
	pb_ir_type_print(vt, &vs);
	pb_buf_printf(&t, "func.func @t(%%M: %s", ts.data);
	for (int p = 0; p < rank; p++)
		pb_buf_printf(&t, ", %%i%d: index", p);
	pb_buf_printf(&t, ", %%pad: i1) {\n  %%z0 = arith.constant 0 : index\n"
		      "  %%v0 = vector.broadcast %%pad : i1 to %s\n", vs.data);
	for (int p = 0; p < rank; p++)
		if (masked >> p & 1)
			pb_buf_printf(&t, "  %%c%d = arith.constant %d : index\n"
				      "  %%n%d = memref.dim %%M, %%c%d : %s\n",
				      p, p, p, p, ts.data);
	/* element e at vector position pos[], its memref offsets off[e][] */
	int64_t (*off)[8] = calloc((size_t)n, sizeof(*off));
	if (!off)
		abort();
	for (int64_t e = 0; e < n; e++) {
		int64_t pos[8], q = e;
		for (int r = vr - 1; r >= 0; r--) {
			int64_t sz = mlirShapedTypeGetDimSize(vt, r);
			pos[r] = q % sz;
			q /= sz;
		}
		for (int r = 0; r < vr; r++)
			if (dim[r] >= 0)
				off[e][dim[r]] += pos[r];
		/* an element a broadcast repeats: read once */
		int64_t same = -1;
		for (int64_t f = 0; f < e && same < 0; f++)
			if (!memcmp(off[f], off[e], sizeof(off[e])))
				same = f;
		if (same < 0) {
			for (int p = 0; p < rank; p++)
				pb_buf_printf(&t, "  %%x%lld_%d = affine.apply "
					      "affine_map<(x) -> (x + %lld)>"
					      "(%%i%d)\n", (long long)e, p,
					      (long long)off[e][p], p);
			/* in the buffer along the dimensions it may overrun;
			   the subscripts there clamped to 0 when not */
			int j = 0;
			pb_buf_printf(&t, "  %%o%lld_0 = arith.constant true\n",
				      (long long)e);
			for (int p = 0; p < rank; p++) {
				if (!(masked >> p & 1))
					continue;
				pb_buf_printf(&t, "  %%k%lld_%d = arith.cmpi ult, "
					      "%%x%lld_%d, %%n%d : index\n"
					      "  %%o%lld_%d = arith.andi "
					      "%%o%lld_%d, %%k%lld_%d : i1\n"
					      "  %%y%lld_%d = arith.select "
					      "%%k%lld_%d, %%x%lld_%d, %%z0 : "
					      "index\n",
					      (long long)e, p, (long long)e, p,
					      p, (long long)e, j + 1,
					      (long long)e, j, (long long)e, p,
					      (long long)e, p, (long long)e, p,
					      (long long)e, p);
				j++;
			}
			pb_buf_printf(&t, "  %%u%lld = memref.load %%M[",
				      (long long)e);
			for (int p = 0; p < rank; p++)
				pb_buf_printf(&t, "%s%%%c%lld_%d", p ? ", " : "",
					      masked >> p & 1 ? 'y' : 'x',
					      (long long)e, p);
			pb_buf_printf(&t, "] : %s\n  %%s%lld = arith.select "
				      "%%o%lld_%d, %%u%lld, %%pad : i1\n",
				      ts.data, (long long)e, (long long)e, j,
				      (long long)e);
			same = e;
		}
		if (vr)
			pb_buf_printf(&t, "  %%v%lld = vector.insert %%s%lld, "
				      "%%v%lld [", (long long)e + 1,
				      (long long)same, (long long)e);
		else
			pb_buf_printf(&t, "  %%v%lld = vector.broadcast "
				      "%%s%lld : i1 to %s\n", (long long)e + 1,
				      (long long)same, vs.data);
		for (int r = 0; r < vr; r++)
			pb_buf_printf(&t, "%s%lld", r ? ", " : "",
				      (long long)pos[r]);
		if (vr)
			pb_buf_printf(&t, "] : i1 into %s\n", vs.data);
	}
	free(off);
	pb_buf_puts(&t, "  return\n}\n");
	pb_buf_free(&ts);
	pb_buf_free(&vs);
	MlirValue args[2 + 8];
	int na = 0;
	for (int k = 0; k < rank + 2; k++)
		args[na++] = mlirOperationGetOperand(op, k);
	int rc = pb_ir_replace_by_template(ctx, t.data, op, na, args);
	pb_buf_free(&t);
	return rc;
}

/* Read boolean vectors element by element: upstream lowers a
 * vector.transfer_read of an i1 memref to a load of an <N x i1> vector,
 * whose bits are packed, where the memref holds a byte per element, so
 * it read the wrong elements (a Where's condition on tensor cores, whose
 * GPU code reads bytes). Each element becomes a memref.load of its byte
 * (the padding value past the end where in_bounds allows it), and the
 * vector is assembled in registers. */
static int unpack_bool_reads(struct pb_ctx *ctx, MlirModule m)
{
	struct pb_ir_ops all = {0};
	int rc = PB_OK;
	pb_ir_collect(mlirModuleGetOperation(m), "vector.transfer_read", &all);
	for (int i = 0; i < all.n && rc == PB_OK; i++) {
		MlirType mt = mlirValueGetType(
			mlirOperationGetOperand(all.v[i], 0));
		if (mlirTypeIsAMemRef(mt) &&
		    is_bool(mlirShapedTypeGetElementType(mt)))
			rc = unpack_bool_read(ctx, all.v[i]);
	}
	pb_ir_ops_free(&all);
	return rc;
}

/* Lower "m" for the CPU: strip GPU constructs, ask for @main's C
 * interface and run the lowering pipeline. */
static int lower(struct pb_ctx *ctx, MlirModule m)
{
	if (pb_runtime_cpu_strip_gpu(ctx, m) != PB_OK)
		return PB_ERR;
	keep_kernels_out_of_line(ctx, m);
	if (unpack_bool_reads(ctx, m) != PB_OK ||
	    pb_ir_run_pipeline(ctx, m, pb_passes_cpu_loops) != PB_OK)
		return PB_ERR;
	hoist_allocas(m);
	MlirOperation fn = pb_ir_lookup_func(m, "main");
	pb_ir_set_attr(fn, "llvm.emit_c_interface", mlirUnitAttrGet(ctx->mlir));
	return pb_ir_run_pipeline(ctx, m, pb_passes_cpu_lowering);
}

/* Fill the memref descriptor "desc" (3 + 2 * rank words) for "t". */
static void make_desc(int64_t *desc, struct pb_tensor *t)
{
	desc[0] = (int64_t)(intptr_t)t->data;
	desc[1] = (int64_t)(intptr_t)t->data;
	desc[2] = 0;
	int64_t s = 1;
	for (int d = t->rank - 1; d >= 0; d--) {
		desc[3 + d] = t->dims[d];
		desc[3 + t->rank + d] = s;
		s *= t->dims[d];
	}
}

/* A module JIT-compiled for the CPU with its packed @main arguments. */
struct pb_runtime_jit {
	MlirExecutionEngine ee;
	int64_t *descs;
	int64_t **ptrs;
	void **args;
};

/* Marks of the kernel-timing hook: times (seconds) of the starts and ends
 * of the instrumented calls of the current run of @main. */
static struct {
	double *t;
	int n;
} marks;

/* The timing hook that instrumented code calls (exported to the JIT as
 * pb_prof_mark): note the monotonic time as mark "id" (2k: call k starts,
 * 2k + 1: it returned). */
static void prof_mark(int64_t id)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (id >= 0 && id < marks.n)
		marks.t[id] = ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void jit_free(struct pb_runtime_jit *j)
{
	if (!j)
		return;
	free(j->args);
	free(j->ptrs);
	free(j->descs);
	if (!mlirExecutionEngineIsNull(j->ee))
		mlirExecutionEngineDestroy(j->ee);
	free(j);
}

/* MLIR's ExecutionEngine registers LLVM's perf listener, which makes a
 * jitdump directory ($JITDUMPDIR, else $HOME or the temporary directory,
 * /.debug/jit/llvm-IR-jit-DATE-XXXX) at the first JIT and leaves it
 * behind; the C API cannot turn it off. This definition of
 * llvm::JITEventListener::createPerfJITEventListener() comes before
 * libLLVM's in the dynamic symbol look-up, so the engine gets no perf
 * listener and nothing is written (tests/lit/pb-run/no-leftovers.test). */
void *pb_runtime_no_perf_listener(void) __asm__(
	"_ZN4llvm16JITEventListener26createPerfJITEventListenerEv");
void *pb_runtime_no_perf_listener(void)
{
	return NULL;
}

/* Lower "m" and JIT it, with @main's arguments packed from "vals" (one
 * per argument of "sig", written in place). NULL after reporting. */
static struct pb_runtime_jit *jit(struct pb_ctx *ctx, MlirModule m,
				  const struct pb_runtime_sig *sig,
				  struct pb_tensor *vals)
{
	if (lower(ctx, m) != PB_OK)
		return NULL;
	struct pb_runtime_jit *j = calloc(1, sizeof(*j));
	if (!j) {
		pb_error(ctx, "out of memory");
		return NULL;
	}
	j->ee = mlirExecutionEngineCreate(m, 3, 0, NULL, false, false);
	if (mlirExecutionEngineIsNull(j->ee)) {
		if (!ctx->nerrors)
			pb_error(ctx, "cannot JIT-compile the module");
		jit_free(j);
		return NULL;
	}
	mlirExecutionEngineRegisterSymbol(j->ee, pb_str("memrefCopy"),
					  (void *)memref_copy);
	mlirExecutionEngineRegisterSymbol(j->ee, pb_str("pb_prof_mark"),
					  (void *)prof_mark);
	mlirExecutionEngineRegisterSymbol(j->ee, pb_str("__truncsfbf2"),
					  (void *)truncsfbf2);
	mlirExecutionEngineInitialize(j->ee);
	int n = sig->nargs;
	j->descs = calloc((size_t)n * (3 + 2 * PB_MAX_RANK) + 1,
			  sizeof(int64_t));
	j->ptrs = calloc(n + 1, sizeof(*j->ptrs));
	j->args = calloc(n + 1, sizeof(*j->args));
	if (!j->descs || !j->ptrs || !j->args) {
		pb_error(ctx, "out of memory");
		jit_free(j);
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		j->ptrs[i] = j->descs + (size_t)i * (3 + 2 * PB_MAX_RANK);
		make_desc(j->ptrs[i], &vals[i]);
		j->args[i] = &j->ptrs[i];
	}
	return j;
}

/* Call @main of "j" once. */
static int call_main(struct pb_ctx *ctx, struct pb_runtime_jit *j)
{
	if (mlirLogicalResultIsFailure(
		    mlirExecutionEngineInvokePacked(j->ee, pb_str("main"),
						    j->args))) {
		pb_error(ctx, "cannot call @main in the JIT-compiled module");
		return PB_ERR;
	}
	return PB_OK;
}

int pb_runtime_cpu_run(struct pb_ctx *ctx, MlirModule m,
		       const struct pb_runtime_sig *sig, struct pb_tensor *vals)
{
	struct pb_runtime_jit *j = jit(ctx, m, sig, vals);
	int rc = j ? call_main(ctx, j) : PB_ERR;
	jit_free(j);
	return rc;
}

/* Insert "func.call @pb_prof_mark(id)" next to "call": before it
 * ("after" 0) or after it. */
static void insert_mark(MlirContext mctx, MlirOperation call, int64_t id,
			int after)
{
	MlirLocation loc = mlirOperationGetLocation(call);
	MlirBlock b = mlirOperationGetBlock(call);
	MlirOperation c = pb_ir_int_constant(mlirIntegerTypeGet(mctx, 64), loc, id);
	MlirValue v = mlirOperationGetResult(c, 0);
	MlirOperation mark = pb_ir_call_create(loc, "pb_prof_mark", 1, &v);
	if (after) {
		mlirBlockInsertOwnedOperationAfter(b, call, mark);
		mlirBlockInsertOwnedOperationAfter(b, call, c);
	} else {
		mlirBlockInsertOwnedOperationBefore(b, call, c);
		mlirBlockInsertOwnedOperationBefore(b, call, mark);
	}
}

/* The pb.kernel function that "call" (func.call) calls in "m", or a null
 * operation. */
static MlirOperation kernel_callee(MlirModule m, MlirOperation call)
{
	MlirAttribute a = pb_ir_attr(call, "callee");
	if (mlirAttributeIsNull(a) || !mlirAttributeIsAFlatSymbolRef(a))
		return (MlirOperation){NULL};
	MlirStringRef s = mlirFlatSymbolRefAttrGetValue(a);
	char *name = strndup(s.data, s.length);
	MlirOperation fn = name ? pb_ir_lookup_func(m, name)
				: (MlirOperation){NULL};
	free(name);
	if (mlirOperationIsNull(fn) ||
	    !pb_contract_is_kernel(fn))
		return (MlirOperation){NULL};
	return fn;
}

/* The ONNX nodes of kernel function "fn" (its pb.nodes) into "k". */
static void kernel_info(struct pb_prof_kernel *k, MlirOperation fn)
{
	MlirAttribute a = pb_contract_nodes(fn);
	MlirStringRef name = pb_ir_str_attr(fn, "sym_name");
	char *fname = strndup(name.data, name.length);
	int n = !mlirAttributeIsNull(a) && mlirAttributeIsAArray(a)
		? (int)mlirArrayAttrGetNumElements(a) : 0;
	char **nodes = calloc(n + 1, sizeof(*nodes));
	int m = 0;
	for (int i = 0; nodes && i < n; i++) {
		MlirAttribute e = mlirArrayAttrGetElement(a, i);
		if (!mlirAttributeIsAString(e))
			continue;
		MlirStringRef s = mlirStringAttrGetValue(e);
		nodes[m++] = strndup(s.data, s.length);
	}
	pb_prof_kernel_set(k, fname, fname, m, nodes);
	for (int i = 0; i < m; i++)
		free(nodes[i]);
	free(nodes);
	free(fname);
	struct pb_prof_cost c;
	pb_runtime_cost_of(fn, &c);
	k->flops = c.flops;
	k->nnests = c.nnests;
	k->nests = c.nests;
	free(c.origin);
}

/* Wrap every call of a pb.kernel function in @main of "m" with timing
 * marks and declare the hook; a new profile of those calls (named, with
 * bytes and flops) for "warmup" and "repeat" in "*out". */
static int instrument(struct pb_ctx *ctx, MlirModule m, int warmup,
		      int repeat, struct pb_prof **out)
{
	MlirOperation main_fn = pb_ir_lookup_func(m, "main");
	struct pb_ir_ops calls = {0}, kernels = {0};
	if (mlirOperationIsNull(main_fn)) {
		pb_error(ctx, "no func.func @main in the module");
		return PB_ERR;
	}
	pb_ir_collect(main_fn, "func.call", &calls);
	for (int i = 0; i < calls.n; i++) {
		MlirOperation fn = kernel_callee(m, calls.v[i]);
		if (!mlirOperationIsNull(fn))
			pb_ir_ops_push(&kernels, calls.v[i]);
	}
	if (!kernels.n) {
		pb_error(ctx, "@main calls no pb.kernel function: nothing to "
			 "time (run pb-fuse first?)");
		pb_ir_ops_free(&calls);
		return PB_ERR;
	}
	struct pb_prof *p = pb_prof_alloc("cpu", 0, kernels.n, warmup, repeat);
	if (!p) {
		pb_error(ctx, "out of memory");
		pb_ir_ops_free(&calls);
		pb_ir_ops_free(&kernels);
		return PB_ERR;
	}
	for (int i = 0; i < kernels.n; i++) {
		MlirOperation call = kernels.v[i];
		kernel_info(&p->k[i], kernel_callee(m, call));
		p->k[i].bytes = pb_runtime_cost_bytes(call);
		insert_mark(ctx->mlir, call, 2 * i, 0);
		insert_mark(ctx->mlir, call, 2 * i + 1, 1);
	}
	MlirType i64 = mlirIntegerTypeGet(ctx->mlir, 64);
	MlirLocation loc = mlirOperationGetLocation(main_fn);
	MlirOperation decl = pb_ir_func_create(loc, "pb_prof_mark", 1, &i64,
					       NULL, 1);
	/* a declaration: no body */
	MlirRegion body = mlirOperationGetRegion(decl, 0);
	MlirBlock entry = mlirRegionGetFirstBlock(body);
	if (!mlirBlockIsNull(entry)) {
		mlirBlockDetach(entry);
		mlirBlockDestroy(entry);
	}
	mlirBlockInsertOwnedOperation(mlirModuleGetBody(m), 0, decl);
	pb_ir_ops_free(&calls);
	pb_ir_ops_free(&kernels);
	*out = p;
	return PB_OK;
}

/* Run @main of "j" "p->warmup" times, then "p->repeat" times, noting the
 * time of every kernel call of every timed run in "p". */
static int time_runs(struct pb_ctx *ctx, struct pb_runtime_jit *j,
		     struct pb_prof *p)
{
	double t0 = 0;
	int rc = PB_OK;
	for (int r = 0; rc == PB_OK && r < p->warmup; r++)
		rc = call_main(ctx, j);
	for (int r = 0; rc == PB_OK && r < p->repeat; r++) {
		for (int i = 0; i < marks.n; i++)
			marks.t[i] = -1;
		rc = call_main(ctx, j);
		if (r == 0)
			t0 = marks.t[0];
		for (int i = 0; rc == PB_OK && i < p->n; i++) {
			double a = marks.t[2 * i], b = marks.t[2 * i + 1];
			p->k[i].ms[r] = a >= 0 && b >= a ? (b - a) * 1e3 : 0;
			p->k[i].start[r] = a >= 0 ? (a - t0) * 1e3 : 0;
		}
	}
	return rc;
}

/* Copies of the outputs among "vals" (one per argument of "sig"), or
 * NULL when out of memory; with "back", copy "saved" back into "vals" and
 * free it. */
static char **save_outputs(const struct pb_runtime_sig *sig,
			   struct pb_tensor *vals, char **saved, int back)
{
	int ok = 1;
	if (!back)
		saved = calloc(sig->nargs + 1, sizeof(*saved));
	for (int i = 0; saved && i < sig->nargs; i++) {
		if (sig->args[i].role != PB_RUNTIME_OUTPUT)
			continue;
		if (back) {
			if (saved[i])
				memcpy(vals[i].data, saved[i], vals[i].nbytes);
			free(saved[i]);
		} else if ((saved[i] = malloc(vals[i].nbytes + 1))) {
			memcpy(saved[i], vals[i].data, vals[i].nbytes);
		} else {
			ok = 0;
		}
	}
	if (back || !ok) {
		for (int i = 0; !back && saved && i < sig->nargs; i++)
			free(saved[i]);
		free(saved);
		return NULL;
	}
	return saved;
}

int pb_runtime_cpu_profile(struct pb_ctx *ctx, MlirModule m,
			   const struct pb_runtime_sig *sig,
			   struct pb_tensor *vals, int warmup, int repeat,
			   struct pb_prof **out)
{
	struct pb_prof *p = NULL;
	struct pb_runtime_jit *j = NULL;
	char **saved = NULL;
	*out = NULL;
	if (instrument(ctx, m, warmup, repeat, &p) != PB_OK)
		return PB_ERR;
	marks.n = 2 * p->n;
	marks.t = calloc(marks.n, sizeof(double));
	int rc = marks.t ? PB_OK : PB_ERR;
	if (rc != PB_OK)
		pb_error(ctx, "out of memory");
	if (rc == PB_OK && !(j = jit(ctx, m, sig, vals)))
		rc = PB_ERR;
	if (rc == PB_OK)
		rc = call_main(ctx, j);
	if (rc == PB_OK && !(saved = save_outputs(sig, vals, NULL, 0))) {
		pb_error(ctx, "out of memory");
		rc = PB_ERR;
	}
	if (rc == PB_OK)
		rc = time_runs(ctx, j, p);
	if (saved)
		save_outputs(sig, vals, saved, 1);
	jit_free(j);
	free(marks.t);
	marks.t = NULL;
	marks.n = 0;
	if (rc == PB_OK)
		pb_prof_summarize(p);
	if (rc != PB_OK) {
		pb_prof_free(p);
		return PB_ERR;
	}
	*out = p;
	return PB_OK;
}
