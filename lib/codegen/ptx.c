/* PTX: the kernels' gpu.module through upstream gpu-lower-to-nvvm-pipeline
 * (NVVM, LLVM's NVPTX back end, format=isa) and out of the gpu.binary. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/Dialect/GPU.h"

#include "codegen/internal.h"
#include "ir/passes.h"
#include "target/target.h"

/* MLIR's NVVM target links libdevice (math functions) from the CUDA
 * toolkit named by $CUDA_ROOT, $CUDA_HOME or $CUDA_PATH (in that order).
 * Point $CUDA_ROOT at the first of those or /usr/local/cuda that has
 * libdevice; when none has, hide them all during the lowering (an unused
 * bad path is an error there) and let check_externs report a missing
 * math function. "saved" keeps the old values for restore_toolkit. */
static const char *toolkit_vars[] = {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"};

/* Choose the toolkit for the lowering, saving the old values in "saved". */
static void find_toolkit(char *saved[3])
{
	const char *cands[] = {getenv("CUDA_ROOT"), getenv("CUDA_HOME"),
			       getenv("CUDA_PATH"), "/usr/local/cuda"};
	char path[4096];
	for (int i = 0; i < 3; i++)
		saved[i] = getenv(toolkit_vars[i]) ? strdup(getenv(toolkit_vars[i]))
						   : NULL;
	for (int i = 0; i < 4; i++) {
		if (!cands[i] || !*cands[i])
			continue;
		snprintf(path, sizeof(path), "%s/nvvm/libdevice/libdevice.10.bc",
			 cands[i]);
		if (access(path, R_OK) == 0) {
			setenv("CUDA_ROOT", i < 3 ? saved[i] : cands[i], 1);
			return;
		}
	}
	for (int i = 0; i < 3; i++)
		unsetenv(toolkit_vars[i]);
}

/* Restore the variables find_toolkit changed from "saved". */
static void restore_toolkit(char *saved[3])
{
	for (int i = 0; i < 3; i++) {
		if (saved[i])
			setenv(toolkit_vars[i], saved[i], 1);
		else
			unsetenv(toolkit_vars[i]);
		free(saved[i]);
	}
}

/* Report a function the PTX "ptx" calls but does not define (a libdevice
 * function when libdevice was not found). */
static int check_externs(struct pb_ctx *ctx, const char *ptx)
{
	const char *p = strstr(ptx, ".extern .func");
	if (!p)
		return PB_OK;
	p += strlen(".extern .func");
	p += strspn(p, " \t");
	if (*p == '(' && strchr(p, ')'))
		p = strchr(p, ')') + 1;
	p += strspn(p, " \t");
	int n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			  "0123456789_$.");
	pb_error(ctx, "the PTX calls the undefined function '%.*s'%s", n, p,
		 strncmp(p, "__nv_", 5) ? ""
		 : " (libdevice not found: set CUDA_HOME to the CUDA toolkit)");
	return PB_ERR;
}

struct extract {
	struct pb_buf *out;
	int n;
};

/* Append the objects of gpu.binary "op" to the buffer in "user". */
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

/* Compile gpu.module "mod" of "m" (a null operation: none, an empty PTX
 * module) to PTX into "out", without the kernels that repeat an earlier
 * one in "d" (if not NULL). */
static int compile(struct pb_ctx *ctx, MlirModule m, MlirOperation mod,
		   const struct pb_codegen_dedup *d, int isa, int index32,
		   struct pb_buf *out)
{
	char pipe[256];
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
		MlirOperation copy = mlirOperationClone(mod);
		if (d)
			pb_codegen_dedup_erase(d, copy);
		mlirBlockAppendOwnedOperation(mlirModuleGetBody(dev), copy);
	}
	pb_passes_nvvm(pipe, sizeof(pipe), ctx->arch, isa);
	char *saved[3];
	find_toolkit(saved);
	/* 32-bit index arithmetic where the buffers allow (index32.c) */
	int rc = index32 && !mlirOperationIsNull(mod) &&
			 pb_codegen_index32_ok(mod)
			 ? pb_codegen_index32_lower(ctx, dev, ctx->arch, isa)
			 : pb_ir_run_pipeline(ctx, dev, pipe);
	restore_toolkit(saved);
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

int pb_codegen_ptx(struct pb_ctx *ctx, MlirModule m, int flags,
		   struct pb_buf *out)
{
	int dedup = flags & PB_CODEGEN_DEDUP;
	int index32 = (flags & PB_CODEGEN_INDEX32) != 0;
	int isa = pb_target_ptx_isa(ctx, ctx->arch);
	MlirOperation mod = {NULL};
	if (isa < 0)
		return PB_ERR;
	for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
		if (pb_ir_op_is(op, "gpu.module"))
			mod = op;
	struct pb_codegen_dedup *d = NULL;
	if (dedup && !mlirOperationIsNull(mod))
		d = pb_codegen_dedup_find(mod);
	if (d && !pb_codegen_dedup_count(d)) {
		pb_codegen_dedup_free(d);
		d = NULL;
	}
	size_t start = out->len;
	int rc;
	if (d) {
		/* the kernels that repeat another are written from its PTX;
		   should that PTX not be in the form expected, every kernel
		   is compiled */
		struct pb_buf reps = {0};
		rc = compile(ctx, m, mod, d, isa, index32, &reps);
		if (rc == PB_OK &&
		    pb_codegen_dedup_expand(d, reps.data, reps.len, out) < 0)
			rc = compile(ctx, m, mod, NULL, isa, index32, out);
		pb_buf_free(&reps);
		pb_codegen_dedup_free(d);
	} else {
		rc = compile(ctx, m, mod, NULL, isa, index32, out);
	}
	if (rc == PB_OK)
		rc = check_externs(ctx, out->data + start);
	return rc;
}
