/* Helpers over the MLIR C API shared by every stage. */
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/Pass.h"

#include "ir/ir.h"

static const char *stage_names[] = {"none", "import", "fuse", "tile",
				    "mma",  "smem",   "codegen"};

const char *pb_ir_stage_name(enum pb_stage s)
{
	return stage_names[s];
}

enum pb_stage pb_ir_get_stage(MlirModule m)
{
	MlirStringRef s =
		pb_ir_str_attr(mlirModuleGetOperation(m), "pb.stage");
	if (!s.data)
		return PB_STAGE_NONE;
	for (int i = 1; i <= PB_STAGE_CODEGEN; i++)
		if (strlen(stage_names[i]) == s.length &&
		    !strncmp(stage_names[i], s.data, s.length))
			return i;
	return PB_STAGE_NONE;
}

void pb_ir_set_stage(MlirModule m, enum pb_stage s)
{
	MlirOperation op = mlirModuleGetOperation(m);
	pb_ir_set_attr(op, "pb.stage",
		       mlirStringAttrGet(mlirOperationGetContext(op),
					 pb_str(stage_names[s])));
}

MlirModule pb_ir_parse(struct pb_ctx *ctx, const struct pb_input *in)
{
	MlirOperation op = mlirOperationCreateParse(
		ctx->mlir, mlirStringRefCreate(in->data, in->len),
		pb_str(in->name));
	if (mlirOperationIsNull(op))
		return (MlirModule){NULL};
	if (!pb_ir_op_is(op, "builtin.module")) {
		pb_error_at(ctx, mlirOperationGetLocation(op),
			    "expected a 'builtin.module' at top level");
		mlirOperationDestroy(op);
		return (MlirModule){NULL};
	}
	return mlirModuleFromOperation(op);
}

int pb_ir_print(struct pb_ctx *ctx, MlirModule m, struct pb_buf *out)
{
	MlirOperation op = mlirModuleGetOperation(m);
	if (!mlirOperationVerify(op)) {
		if (!ctx->nerrors)
			pb_error(ctx, "%s produced a module that does not verify",
				 ctx->tool);
		return PB_ERR;
	}
	mlirOperationPrint(op, pb_buf_mlir_callback, out);
	pb_buf_append(out, "\n", 1);
	return PB_OK;
}

static void to_stderr(MlirStringRef s, void *u)
{
	(void)u;
	fwrite(s.data, 1, s.length, stderr);
}

int pb_ir_run_pipeline(struct pb_ctx *ctx, MlirModule m, const char *pipeline)
{
	MlirPassManager pm = mlirPassManagerCreate(ctx->mlir);
	MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
	int rc = PB_OK;
	if (mlirLogicalResultIsFailure(
		    mlirParsePassPipeline(opm, pb_str(pipeline), to_stderr, NULL))) {
		pb_error(ctx, "internal: bad pass pipeline '%s'", pipeline);
		rc = PB_ERR;
	} else if (mlirLogicalResultIsFailure(mlirPassManagerRunOnOp(
			   pm, mlirModuleGetOperation(m)))) {
		if (!ctx->nerrors)
			pb_error(ctx, "pass pipeline failed: %s", pipeline);
		rc = PB_ERR;
	}
	mlirPassManagerDestroy(pm);
	return rc;
}

MlirAttribute pb_ir_attr(MlirOperation op, const char *name)
{
	return mlirOperationGetAttributeByName(op, pb_str(name));
}

void pb_ir_set_attr(MlirOperation op, const char *name, MlirAttribute a)
{
	mlirOperationSetAttributeByName(op, pb_str(name), a);
}

int pb_ir_op_is(MlirOperation op, const char *name)
{
	MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
	return s.length == strlen(name) && !strncmp(s.data, name, s.length);
}

MlirStringRef pb_ir_str_attr(MlirOperation op, const char *name)
{
	MlirAttribute a = pb_ir_attr(op, name);
	if (mlirAttributeIsNull(a) || !mlirAttributeIsAString(a))
		return (MlirStringRef){NULL, 0};
	return mlirStringAttrGetValue(a);
}

MlirOperation pb_ir_lookup_func(MlirModule m, const char *name)
{
	MlirBlock body = mlirModuleGetBody(m);
	for (MlirOperation op = mlirBlockGetFirstOperation(body);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		if (!pb_ir_op_is(op, "func.func"))
			continue;
		MlirStringRef s = pb_ir_str_attr(op, "sym_name");
		if (s.data && s.length == strlen(name) &&
		    !strncmp(s.data, name, s.length))
			return op;
	}
	return (MlirOperation){NULL};
}

int pb_ir_filter(struct pb_ctx *ctx, const struct pb_input *in,
		 struct pb_buf *out, pb_ir_transform_fn fn, const void *opts)
{
	MlirModule m = pb_ir_parse(ctx, in);
	if (mlirModuleIsNull(m))
		return PB_ERR;
	int rc = fn(ctx, m, opts);
	if (rc == PB_OK)
		rc = pb_ir_print(ctx, m, out);
	mlirModuleDestroy(m);
	return rc;
}
