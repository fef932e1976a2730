/* PTX: the kernels' gpu.module through upstream gpu-lower-to-nvvm-pipeline
 * (NVVM, LLVM's NVPTX back end, format=isa) and out of the gpu.binary. */
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/Dialect/GPU.h"

#include "codegen/internal.h"

/* The PTX ISA version each target needs ("+ptx80"): the lowest that
 * knows the architecture, so that older drivers still load it. */
static const char *features_of(const char *arch)
{
	static const struct {
		const char *arch, *features;
	} t[] = {
		{"sm_80", "+ptx70"}, {"sm_86", "+ptx71"}, {"sm_89", "+ptx78"},
		{"sm_90", "+ptx80"}, {"sm_90a", "+ptx80"},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(t[i].arch, arch))
			return t[i].features;
	return NULL;
}

struct extract {
	struct pb_buf *out;
	int n;
};

static MlirWalkResult extract_cb(MlirOperation op, void *user)
{
	struct extract *e = user;
	if (!pb_ir_op_is(op, "gpu.binary"))
		return MlirWalkResultAdvance;
	MlirAttribute objs = pb_ir_attr(op, "objects");
	for (intptr_t i = 0; i < mlirArrayAttrGetNumElements(objs); i++) {
		MlirAttribute o = mlirArrayAttrGetElement(objs, i);
		if (!mlirAttributeIsAGPUObjectAttr(o))
			continue;
		MlirStringRef s = mlirGPUObjectAttrGetObject(o);
		pb_buf_append(e->out, s.data, s.length);
		e->n++;
	}
	return MlirWalkResultAdvance;
}

int pb_codegen_ptx(struct pb_ctx *ctx, MlirModule m, struct pb_buf *out)
{
	const char *features = features_of(ctx->arch);
	MlirOperation mod = {NULL};
	struct pb_buf pipe = {0};
	if (!features) {
		pb_error(ctx, "unsupported --arch '%s'", ctx->arch);
		return PB_ERR;
	}
	for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
		if (pb_ir_op_is(op, "gpu.module"))
			mod = op;
	MlirModule dev = mlirModuleCreateEmpty(mlirOperationGetLocation(
		mlirModuleGetOperation(m)));
	pb_ir_set_attr(mlirModuleGetOperation(dev), "gpu.container_module",
		       mlirUnitAttrGet(ctx->mlir));
	if (mlirOperationIsNull(mod)) {
		/* no kernel at all: an empty PTX module */
		MlirOperation empty;
		MlirModule t = mlirModuleCreateParse(
			ctx->mlir, pb_str("gpu.module @" PB_CODEGEN_MODULE " {}"));
		empty = mlirOperationClone(
			mlirBlockGetFirstOperation(mlirModuleGetBody(t)));
		mlirModuleDestroy(t);
		mlirBlockAppendOwnedOperation(mlirModuleGetBody(dev), empty);
	} else {
		mlirBlockAppendOwnedOperation(mlirModuleGetBody(dev),
					      mlirOperationClone(mod));
	}
	pb_buf_printf(&pipe, "builtin.module(gpu-lower-to-nvvm-pipeline{"
		      "cubin-chip=%s cubin-features=%s cubin-format=isa "
		      "kernel-bare-ptr-calling-convention=true opt-level=3})",
		      ctx->arch, features);
	int rc = pb_ir_run_pipeline(ctx, dev, pipe.data);
	pb_buf_free(&pipe);
	struct extract e = {out, 0};
	if (rc == PB_OK)
		mlirOperationWalk(mlirModuleGetOperation(dev), extract_cb, &e,
				  MlirWalkPreOrder);
	if (rc == PB_OK && e.n != 1) {
		pb_error(ctx, "internal: expected one PTX object, got %d", e.n);
		rc = PB_ERR;
	}
	mlirModuleDestroy(dev);
	return rc;
}
