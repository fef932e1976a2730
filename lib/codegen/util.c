/* Small helpers of pb-codegen: operation lists, walks, printing and the
 * instantiation of IR templates written as text. */
#include <stdlib.h>
#include <string.h>

#include "mlir-c/BuiltinTypes.h"

#include "codegen/internal.h"

int pb_codegen_op_has_prefix(MlirOperation op, const char *prefix)
{
	MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
	size_t n = strlen(prefix);
	return s.length >= n && !strncmp(s.data, prefix, n);
}

void pb_codegen_type_str(MlirType t, struct pb_buf *out)
{
	mlirTypePrint(t, pb_buf_mlir_callback, out);
	pb_buf_append(out, "", 0);
}

void pb_codegen_attr_str(MlirAttribute a, struct pb_buf *out)
{
	mlirAttributePrint(a, pb_buf_mlir_callback, out);
	pb_buf_append(out, "", 0);
}

int pb_codegen_is_workgroup(MlirType t)
{
	struct pb_buf b = {0};
	int r;
	if (!mlirTypeIsAMemRef(t))
		return 0;
	MlirAttribute ms = mlirMemRefTypeGetMemorySpace(t);
	if (mlirAttributeIsNull(ms))
		return 0;
	pb_codegen_attr_str(ms, &b);
	r = !strcmp(b.data, "#gpu.address_space<workgroup>") ||
	    !strcmp(b.data, "3 : i64") || !strcmp(b.data, "3 : i32");
	pb_buf_free(&b);
	return r;
}

/* A linear map from template values to their images. */
struct vmap {
	MlirValue *from, *to;
	int n, cap;
};

/* Map "from" to "to" in "m". */
static void vmap_add(struct vmap *m, MlirValue from, MlirValue to)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 16;
		m->from = realloc(m->from, m->cap * sizeof(MlirValue));
		m->to = realloc(m->to, m->cap * sizeof(MlirValue));
		if (!m->from || !m->to)
			abort();
	}
	m->from[m->n] = from;
	m->to[m->n++] = to;
}

struct remap {
	const struct vmap *m;
	MlirLocation loc;
};

/* Replace the operands of "op" that the map in "user" knows and set its
 * location. */
static MlirWalkResult remap_cb(MlirOperation op, void *user)
{
	struct remap *r = user;
	intptr_t n = mlirOperationGetNumOperands(op);
	for (intptr_t i = 0; i < n; i++) {
		MlirValue v = mlirOperationGetOperand(op, i);
		for (int j = 0; j < r->m->n; j++)
			if (mlirValueEqual(v, r->m->from[j])) {
				mlirOperationSetOperand(op, i, r->m->to[j]);
				break;
			}
	}
	mlirOperationSetLocation(op, r->loc);
	return MlirWalkResultAdvance;
}

int pb_codegen_instantiate(struct pb_ctx *ctx, const char *text,
			   MlirOperation before, int nargs,
			   const MlirValue *args, MlirLocation loc,
			   struct pb_ir_ops *out)
{
	MlirModule t = mlirModuleCreateParse(ctx->mlir, pb_str(text));
	if (mlirModuleIsNull(t)) {
		pb_error(ctx, "internal: bad codegen template:\n%s", text);
		return PB_ERR;
	}
	MlirOperation func = mlirBlockGetFirstOperation(mlirModuleGetBody(t));
	MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
	MlirBlock dest = mlirOperationGetBlock(before);
	struct vmap m = {0};
	for (int i = 0; i < nargs && i < mlirBlockGetNumArguments(body); i++)
		vmap_add(&m, mlirBlockGetArgument(body, i), args[i]);
	for (MlirOperation op = mlirBlockGetFirstOperation(body);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		if (pb_ir_op_is(op, "func.return"))
			break;
		MlirOperation c = mlirOperationClone(op);
		struct remap r = {&m, loc};
		mlirOperationWalk(c, remap_cb, &r, MlirWalkPreOrder);
		for (intptr_t i = 0; i < mlirOperationGetNumResults(op); i++)
			vmap_add(&m, mlirOperationGetResult(op, i),
				 mlirOperationGetResult(c, i));
		mlirBlockInsertOwnedOperationBefore(dest, before, c);
		if (out)
			pb_ir_ops_push(out, c);
	}
	free(m.from);
	free(m.to);
	mlirModuleDestroy(t);
	return PB_OK;
}
