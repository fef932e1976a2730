/* Input checks and the expansion of memref.copy before the mapping. */
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "codegen/internal.h"

/* The dialects whose operations the mapping and the NVVM lowering handle
 * (linalg is lowered to affine loops first). */
static const char *dialects[] = {"arith.",  "math.",   "affine.", "scf.",
				 "memref.", "func.",   "gpu.",    "vector.",
				 "index.",  "linalg.", "cf.",     "nvgpu.",
				 "nvvm.",   "ub.",     "llvm.",   NULL};

struct check {
	struct pb_ctx *ctx;
	int rc;
};

/* Is "t" a type that pb-codegen cannot lower (a tensor)? */
static int bad_type(MlirType t)
{
	return mlirTypeIsARankedTensor(t) || mlirTypeIsAUnrankedTensor(t);
}

/* Report "op" as not lowerable, with the reason "why" appended. */
static void report(struct check *c, MlirOperation op, const char *why)
{
	MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
	pb_error_at(c->ctx, mlirOperationGetLocation(op),
		    "cannot lower '%.*s' to the GPU%s", (int)n.length, n.data,
		    why);
	c->rc = PB_ERR;
}

/* Check one operation "op" of the walk in "user" (a struct check). */
static MlirWalkResult check_cb(MlirOperation op, void *user)
{
	struct check *c = user;
	int ok = 0;
	for (int i = 0; dialects[i]; i++)
		ok |= pb_codegen_op_has_prefix(op, dialects[i]);
	if (!ok) {
		report(c, op, "");
		return MlirWalkResultInterrupt;
	}
	for (intptr_t i = 0; i < mlirOperationGetNumResults(op); i++)
		if (bad_type(mlirValueGetType(mlirOperationGetResult(op, i)))) {
			report(c, op, ": tensors must be bufferized first");
			return MlirWalkResultInterrupt;
		}
	for (intptr_t r = 0; r < mlirOperationGetNumRegions(op); r++) {
		MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, r));
		for (; !mlirBlockIsNull(b); b = mlirBlockGetNextInRegion(b))
			for (intptr_t i = 0; i < mlirBlockGetNumArguments(b); i++)
				if (bad_type(mlirValueGetType(
					    mlirBlockGetArgument(b, i)))) {
					report(c, op, ": tensors must be "
						      "bufferized first");
					return MlirWalkResultInterrupt;
				}
	}
	return MlirWalkResultAdvance;
}

int pb_codegen_check(struct pb_ctx *ctx, MlirModule m)
{
	struct check c = {ctx, PB_OK};
	MlirOperation main = pb_ir_lookup_func(m, "main");
	if (mlirOperationIsNull(main)) {
		pb_error_at(ctx, mlirOperationGetLocation(mlirModuleGetOperation(m)),
			    "no func.func @main in the module");
		return PB_ERR;
	}
	for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
	     !mlirOperationIsNull(op) && c.rc == PB_OK;
	     op = mlirOperationGetNextInBlock(op))
		if (pb_ir_op_is(op, "func.func"))
			mlirOperationWalk(op, check_cb, &c, MlirWalkPreOrder);
	return c.rc;
}

/* The text of a function copying "src" of type "s" into "dst" of type
 * "d" (static shape "shape" of rank "rank") element by element. */
static void copy_text(struct pb_buf *t, MlirType s, MlirType d, int rank,
		      const int64_t *shape)
{
	struct pb_buf ts = {0}, td = {0}, idx = {0};
	pb_codegen_type_str(s, &ts);
	pb_codegen_type_str(d, &td);
	pb_buf_puts(&idx, "");
	pb_buf_printf(t, "func.func @t(%%s: %s, %%d: %s) {\n", ts.data, td.data);
	for (int i = 0; i < rank; i++) {
		pb_buf_printf(t, "affine.for %%i%d = 0 to %lld {\n", i,
			      (long long)shape[i]);
		pb_buf_printf(&idx, "%s%%i%d", i ? ", " : "", i);
	}
	pb_buf_printf(t, "%%v = affine.load %%s[%s] : %s\n", idx.data, ts.data);
	pb_buf_printf(t, "affine.store %%v, %%d[%s] : %s\n", idx.data, td.data);
	for (int i = 0; i < rank; i++)
		pb_buf_puts(t, "}\n");
	pb_buf_puts(t, "return\n}\n");
	pb_buf_free(&ts);
	pb_buf_free(&td);
	pb_buf_free(&idx);
}

/* Replace memref.copy "op" by a loop nest. */
static int expand_copy(struct pb_ctx *ctx, MlirOperation op)
{
	MlirValue v[2] = {mlirOperationGetOperand(op, 0),
			  mlirOperationGetOperand(op, 1)};
	MlirType s = mlirValueGetType(v[0]), d = mlirValueGetType(v[1]);
	struct pb_buf t = {0};
	int64_t shape[64];
	if (!mlirTypeIsAMemRef(s) || !mlirTypeIsAMemRef(d) ||
	    !mlirShapedTypeHasStaticShape(s) || mlirShapedTypeGetRank(s) > 64) {
		pb_error_at(ctx, mlirOperationGetLocation(op),
			    "cannot lower 'memref.copy' of a dynamically "
			    "shaped memref");
		return PB_ERR;
	}
	int rank = mlirShapedTypeGetRank(s);
	for (int i = 0; i < rank; i++)
		shape[i] = mlirShapedTypeGetDimSize(s, i);
	copy_text(&t, s, d, rank, shape);
	int rc = pb_ir_instantiate(ctx, t.data, op, 2, v,
					mlirOperationGetLocation(op), NULL);
	pb_buf_free(&t);
	if (rc == PB_OK)
		mlirOperationDestroy(op);
	return rc;
}

int pb_codegen_expand_copies(struct pb_ctx *ctx, MlirModule m)
{
	struct pb_ir_ops l = {0};
	int rc = PB_OK;
	pb_ir_collect(mlirModuleGetOperation(m), "memref.copy", &l);
	for (int i = 0; i < l.n && rc == PB_OK; i++)
		rc = expand_copy(ctx, l.v[i]);
	pb_ir_ops_free(&l);
	return rc;
}

/* The number of func.call operations in "calls" that call "name". */
static int count_calls(const struct pb_ir_ops *calls, MlirStringRef name)
{
	int n = 0;
	for (int i = 0; i < calls->n; i++) {
		MlirStringRef c = mlirSymbolRefAttrGetLeafReference(
			pb_ir_attr(calls->v[i], "callee"));
		n += c.length == name.length && !strncmp(c.data, name.data, c.length);
	}
	return n;
}

/* Is "op" a view of a constant buffer: memref.get_global, or a view
 * operation (subview, cast, reshape) of one whose other operands are
 * constants? Such a chain can be cloned into a callee. */
int pb_codegen_is_constant_view(MlirOperation op)
{
	if (pb_ir_op_is(op, "memref.get_global"))
		return 1;
	if (!pb_ir_op_is(op, "memref.subview") &&
	    !pb_ir_op_is(op, "memref.cast") &&
	    !pb_ir_op_is(op, "memref.reinterpret_cast") &&
	    !pb_ir_op_is(op, "memref.collapse_shape") &&
	    !pb_ir_op_is(op, "memref.expand_shape"))
		return 0;
	for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); i++) {
		MlirValue v = mlirOperationGetOperand(op, i);
		MlirOperation d = mlirValueIsAOpResult(v)
					  ? mlirOpResultGetOwner(v)
					  : (MlirOperation){NULL};
		if (mlirOperationIsNull(d) ||
		    (i == 0 ? !pb_codegen_is_constant_view(d)
			    : !pb_ir_op_is(d, "arith.constant")))
			return 0;
	}
	return 1;
}

/* A clone of the chain of constant views ending in "op" before "before":
 * its producers cloned first, their results replacing the operands. */
MlirOperation pb_codegen_clone_chain(MlirOperation op, MlirOperation before)
{
	MlirOperation c = mlirOperationClone(op);
	mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(before),
					    before, c);
	for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); i++) {
		MlirValue v = mlirOperationGetOperand(op, i);
		MlirOperation d = mlirOpResultGetOwner(v);
		MlirOperation dc = pb_codegen_clone_chain(d, c);
		mlirOperationSetOperand(c, i, mlirOperationGetResult(dc, 0));
	}
	return c;
}

void pb_codegen_drop_dead_views(MlirModule m)
{
	for (int again = 1; again;) {
		struct pb_ir_ops ops = {0};
		again = 0;
		pb_ir_collect(mlirModuleGetOperation(m), NULL, &ops);
		for (int i = 0; i < ops.n && !again; i++)
			if (pb_codegen_is_constant_view(ops.v[i]) &&
			    !pb_ir_op_is(ops.v[i], "memref.get_global") &&
			    mlirOpOperandIsNull(mlirValueGetFirstUse(
				    mlirOperationGetResult(ops.v[i], 0)))) {
				mlirOperationDestroy(ops.v[i]);
				again = 1;
			}
		pb_ir_ops_free(&ops);
	}
}

/* Move constant buffer "g" (a memref.get_global, or a view of one) into
 * the callees of the calls that take it, when "m" calls them only once: a
 * clone of "g" (with the views' sources and constants) at the start of
 * the callee replaces the argument. Returns how many moved. */
static int push_global(MlirModule m, MlirOperation g,
		       const struct pb_ir_ops *calls)
{
	MlirValue v = mlirOperationGetResult(g, 0);
	int moved = 0;
	for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u);
	     u = mlirOpOperandGetNextUse(u)) {
		MlirOperation call = mlirOpOperandGetOwner(u);
		if (!pb_ir_op_is(call, "func.call"))
			continue;
		MlirStringRef name = mlirSymbolRefAttrGetLeafReference(
			pb_ir_attr(call, "callee"));
		struct pb_buf n = {0};
		pb_buf_append(&n, name.data, name.length);
		MlirOperation f = pb_ir_lookup_func(m, n.data);
		pb_buf_free(&n);
		if (mlirOperationIsNull(f) || count_calls(calls, name) != 1)
			continue;
		MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(f, 0));
		if (mlirBlockIsNull(body))
			continue;
		MlirValue arg = mlirBlockGetArgument(
			body, mlirOpOperandGetOperandNumber(u));
		if (mlirOpOperandIsNull(mlirValueGetFirstUse(arg)))
			continue;
		MlirOperation c = pb_codegen_clone_chain(g, mlirBlockGetFirstOperation(body));
		mlirValueReplaceAllUsesOfWith(arg, mlirOperationGetResult(c, 0));
		moved++;
	}
	return moved;
}

int pb_codegen_push_globals(struct pb_ctx *ctx, MlirModule m)
{
	int moved = 1;
	(void)ctx;
	for (int round = 0; moved && round < 16; round++) {
		struct pb_ir_ops ops = {0}, calls = {0};
		MlirOperation root = mlirModuleGetOperation(m);
		pb_ir_collect(root, NULL, &ops);
		pb_ir_collect(root, "func.call", &calls);
		moved = 0;
		for (int i = 0; i < ops.n; i++)
			if (pb_codegen_is_constant_view(ops.v[i]))
				moved += push_global(m, ops.v[i], &calls);
		pb_ir_ops_free(&ops);
		pb_ir_ops_free(&calls);
	}
	pb_codegen_drop_dead_views(m);
	return PB_OK;
}
