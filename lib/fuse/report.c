/* pb-fuse --report: one JSON object describing the kernels after fusion
 * (docs/pb-fuse.md, "Report"). Written with jansson. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"

#include "fuse/internal.h"
#include "ir/contract.h"

/* Append the loop structure of the operations of "b" to "out":
 * "for 64 { for 32 { for 32 } for 32 }". */
static void loop_shape(MlirBlock b, struct pb_buf *out)
{
	for (MlirOperation op = mlirBlockGetFirstOperation(b);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		int is_for = pb_ir_op_is(op, "affine.for");
		if (!is_for && !pb_ir_op_is(op, "affine.parallel"))
			continue;
		MlirBlock inner = mlirRegionGetFirstBlock(
			mlirOperationGetRegion(op, 0));
		MlirAttribute ub = pb_ir_attr(op, is_for ? "upperBoundMap"
							 : "upperBoundsMap");
		if (out->len && out->data[out->len - 1] != '{')
			pb_buf_puts(out, " ");
		pb_buf_puts(out, is_for ? "for" : "parallel");
		if (!mlirAttributeIsNull(ub) && mlirAttributeIsAAffineMap(ub)) {
			MlirAffineMap m = mlirAffineMapAttrGetValue(ub);
			for (intptr_t k = 0; k < mlirAffineMapGetNumResults(m);
			     k++) {
				MlirAffineExpr e = mlirAffineMapGetResult(m, k);
				if (mlirAffineExprIsAConstant(e))
					pb_buf_printf(
						out, "%s%lld", k ? "x" : " ",
						(long long)mlirAffineConstantExprGetValue(
							e));
			}
		}
		size_t mark = out->len;
		pb_buf_puts(out, " {");
		loop_shape(inner, out);
		if (out->data[out->len - 1] == '{')
			out->len = mark;
		else
			pb_buf_puts(out, " }");
	}
	pb_buf_append(out, "", 0);
}

/* The plan entry whose root operation now lies in kernel "func". */
static const struct pb_fuse_kinfo *kinfo_of(const struct pb_fuse_plan *p,
					    MlirOperation func)
{
	for (int i = 0; i < p->n; i++)
		if (pb_ir_is_inside(p->k[i].root, func))
			return &p->k[i];
	return NULL;
}

static json_t *totals_json(const struct pb_fuse_totals *t)
{
	json_t *o = json_object();
	json_object_set_new(o, "kernels", json_integer(t->kernels));
	json_object_set_new(o, "bytes_read", json_integer(t->bytes_read));
	json_object_set_new(o, "bytes_written", json_integer(t->bytes_written));
	json_object_set_new(o, "bytes",
			    json_integer(t->bytes_read + t->bytes_written));
	return o;
}

/* The report's entry for kernel "func". */
static json_t *kernel_json(MlirOperation func, const struct pb_fuse_kinfo *k)
{
	json_t *o = json_object(), *nodes = json_array(), *kinds = json_array();
	MlirStringRef name = pb_ir_str_attr(func, "sym_name");
	MlirAttribute na = pb_contract_nodes(func);
	struct pb_buf shape = {0};
	json_object_set_new(o, "name",
			    json_stringn(name.data, name.length));
	if (!mlirAttributeIsNull(na) && mlirAttributeIsAArray(na))
		for (intptr_t i = 0; i < mlirArrayAttrGetNumElements(na); i++) {
			MlirStringRef s = mlirStringAttrGetValue(
				mlirArrayAttrGetElement(na, i));
			json_array_append_new(nodes,
					      json_stringn(s.data, s.length));
		}
	json_object_set_new(o, "nodes", nodes);
	loop_shape(pb_ir_entry_block(func), &shape);
	json_object_set_new(o, "loops", json_string(shape.data ? shape.data : ""));
	pb_buf_free(&shape);
	if (k) {
		for (int i = 0; i < 4; i++)
			if (k->kinds & (1u << i))
				json_array_append_new(kinds,
						      json_string(pb_fuse_kind_names[i]));
		json_object_set_new(o, "nests", json_integer(k->nstmts));
		json_object_set_new(o, "bytes_read", json_integer(k->bytes_read));
		json_object_set_new(o, "bytes_written",
				    json_integer(k->bytes_written));
		json_object_set_new(o, "contracted_buffers",
				    json_integer(k->ncontracted));
		json_object_set_new(o, "local_bytes",
				    json_integer(k->local_bytes));
	}
	json_object_set_new(o, "fusion", kinds);
	return o;
}

int pb_fuse_write_report(struct pb_ctx *ctx, MlirModule m, const char *path,
			 const struct pb_fuse_plan *plan, const char *mode)
{
	json_t *root = json_object(), *kernels = json_array();
	struct pb_fuse_totals after = plan->after;
	MlirStringRef src = pb_contract_source(m);
	after.kernels = 0;
	for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		if (!pb_ir_op_is(op, "func.func") ||
		    !pb_contract_is_kernel(op))
			continue;
		json_array_append_new(kernels,
				      kernel_json(op, kinfo_of(plan, op)));
		after.kernels++;
	}
	if (src.data)
		json_object_set_new(root, "source",
				    json_stringn(src.data, src.length));
	json_object_set_new(root, "fusion", json_string(mode));
	json_object_set_new(root, "before", totals_json(&plan->before));
	json_object_set_new(root, "after", totals_json(&after));
	json_object_set_new(root, "kernels", kernels);
	int rc = pb_write_json(root, path, JSON_INDENT(2));
	json_decref(root);
	if (rc < 0)
		pb_error(ctx, "--report: cannot write '%s': %s", path,
			 strerror(errno));
	return rc < 0 ? PB_ERR : PB_OK;
}
