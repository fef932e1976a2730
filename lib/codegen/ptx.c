/* PTX: the kernels' gpu.module through upstream gpu-lower-to-nvvm-pipeline
 * (NVVM, LLVM's NVPTX back end, format=isa) and out of the gpu.binary. */
#include <stdio.h>
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

/* Hide the toolkit's variables from the lowering. */
static void hide_toolkit(void)
{
	for (int i = 0; i < 3; i++)
		unsetenv(toolkit_vars[i]);
}

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
	hide_toolkit();
}

/* Write into "buf" of size "n" the path of the libdevice find_toolkit
 * chose; 0 when there is none, or when the path would need quoting in a
 * pass option. */
static int libdevice(char *buf, size_t n)
{
	const char *root = getenv("CUDA_ROOT");
	if (!root)
		return 0;
	int k = snprintf(buf, n, "%s/nvvm/libdevice/libdevice.10.bc", root);
	return k > 0 && (size_t)k < n &&
	       strspn(buf, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			   "0123456789/._-+") == (size_t)k;
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

/* A module for the NVVM pipeline (attributes of "m"'s, as a
 * gpu.container_module) holding a copy of gpu.module "mod" of "m" (a null
 * operation: an empty one) with its globals and, if "d" is not NULL,
 * only the representatives "first" to "first" + "n" - 1 of its kernels. */
static MlirModule device_module(struct pb_ctx *ctx, MlirModule m,
				MlirOperation mod,
				const struct pb_codegen_dedup *d, int first,
				int n)
{
	MlirModule dev = mlirModuleCreateEmpty(mlirOperationGetLocation(
		mlirModuleGetOperation(m)));
	pb_ir_set_attr(mlirModuleGetOperation(dev), "gpu.container_module",
		       mlirUnitAttrGet(ctx->mlir));
	MlirModule t = mlirModuleCreateParse(
		ctx->mlir, pb_str("gpu.module @" PB_CODEGEN_MODULE " {}"));
	MlirOperation shell = mlirOperationClone(
		mlirBlockGetFirstOperation(mlirModuleGetBody(t)));
	mlirModuleDestroy(t);
	mlirBlockAppendOwnedOperation(mlirModuleGetBody(dev), shell);
	if (mlirOperationIsNull(mod))
		return dev;
	for (intptr_t i = 0; i < mlirOperationGetNumAttributes(mod); i++) {
		MlirNamedAttribute a = mlirOperationGetAttribute(mod, i);
		mlirOperationSetAttributeByName(shell, mlirIdentifierStr(a.name),
						a.attribute);
	}
	MlirBlock to = mlirRegionGetFirstBlock(mlirOperationGetRegion(shell, 0));
	MlirBlock from = mlirRegionGetFirstBlock(mlirOperationGetRegion(mod, 0));
	int k = 0;
	for (MlirOperation op = mlirBlockGetFirstOperation(from);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		int kernel = pb_ir_op_is(op, "gpu.func") &&
			     !mlirAttributeIsNull(pb_ir_attr(op, "gpu.kernel"));
		int32_t g[3];
		if (!kernel || !d || pb_codegen_dedup_keep(d, k, first, n)) {
			MlirOperation c = mlirOperationClone(op);
			/* compiled for every kernel of its group (dedup.c) */
			if (kernel && d && pb_codegen_dedup_grid(d, k, g))
				pb_ir_set_attr(c, "known_grid_size",
					       mlirDenseI32ArrayGet(ctx->mlir,
								    3, g));
			mlirBlockAppendOwnedOperation(to, c);
		}
		k += kernel;
	}
	return dev;
}

/* Run the NVVM pipeline on "dev" (destroyed), with 32-bit index
 * arithmetic if "index32" (index32.c), and append its PTX to "out".
 * The module is not verified after each pass (a fifth of the time of the
 * upstream lowering); its input was, and ptxas checks its output. */
static int compile(struct pb_ctx *ctx, MlirModule dev, int isa, int index32,
		   struct pb_buf *out)
{
	char pipe[256];
	pb_passes_nvvm(pipe, sizeof(pipe), ctx->arch, isa);
	char *saved[3];
	find_toolkit(saved);
	int rc = index32 ? pb_codegen_index32_lower(ctx, dev, ctx->arch, isa)
			 : pb_ir_run_pipeline_unverified(ctx, dev, pipe);
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

/* Compile the representatives of "d" (kernels of gpu.module "mod" of
 * "m") on "jobs" threads, one part each, into "ptx" (one buffer per
 * part); "first" gets each part's first representative. */
static int compile_parts(struct pb_ctx *ctx, MlirModule m, MlirOperation mod,
			 const struct pb_codegen_dedup *d, int isa, int jobs,
			 struct pb_buf *ptx, int *first)
{
	char pipe[256];
	int n = pb_codegen_dedup_nrep(d), rc = PB_OK;
	struct pb_codegen_part *part = calloc(n, sizeof(*part));
	for (int k = 0; k < n; k++) {
		MlirModule dev = device_module(ctx, m, mod, d, k, 1);
		mlirOperationPrint(mlirModuleGetOperation(dev),
				   pb_buf_mlir_callback, &part[k].text);
		mlirModuleDestroy(dev);
		first[k] = k;
	}
	pb_phase("pb-codegen", "parts printed");
	pb_passes_nvvm(pipe, sizeof(pipe), ctx->arch, isa);
	char *saved[3], lib[4096], *split[3] = {NULL, NULL, NULL};
	find_toolkit(saved);
	if (libdevice(lib, sizeof(lib)) &&
	    pb_codegen_jobs_split(ctx->mlir, pipe, lib, split) == 0)
		hide_toolkit();
	const char *pipes[3] = {split[0] ? split[0] : pipe, split[1], split[2]};
	pb_codegen_jobs_run(part, n, pipes, jobs);
	pb_phase("pb-codegen", "NVVM and NVPTX (threads)");
	restore_toolkit(saved);
	for (int i = 0; i < 3; i++)
		free(split[i]);
	for (int k = 0; k < n; k++) {
		if (rc == PB_OK && (part[k].failed || part[k].nobj != 1)) {
			pb_error(ctx, "internal: the NVVM lowering of kernel "
				      "'%s' failed: %s",
				 pb_codegen_dedup_name(d, pb_codegen_dedup_rep(d, k)),
				 part[k].err.len ? part[k].err.data
						 : "no PTX object");
			rc = PB_ERR;
		}
		ptx[k] = part[k].ptx;
		pb_buf_free(&part[k].text);
		pb_buf_free(&part[k].err);
	}
	free(part);
	return rc;
}

int pb_codegen_ptx(struct pb_ctx *ctx, MlirModule m, int flags, int jobs,
		   struct pb_buf *out)
{
	int dedup = flags & PB_CODEGEN_DEDUP;
	int isa = pb_target_ptx_isa(ctx, ctx->arch);
	MlirOperation mod = {NULL};
	if (isa < 0)
		return PB_ERR;
	for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
		if (pb_ir_op_is(op, "gpu.module"))
			mod = op;
	struct pb_codegen_dedup *d = NULL;
	if (!mlirOperationIsNull(mod))
		d = pb_codegen_dedup_find(mod, dedup,
					  flags & PB_CODEGEN_DEDUP_SIZES);
	int nrep = d ? pb_codegen_dedup_nrep(d) : 0;
	if (getenv("PB_TIMING") && d)
		fprintf(stderr, "pb-codegen: %d kernels, %d compiled\n",
			pb_codegen_dedup_count(d), nrep);
	pb_phase("pb-codegen", "identical kernels found");
	/* 32-bit indices where the buffers allow; index32.c's lowering is
	   not a pipeline the workers run, so it takes one part */
	int i32 = (flags & PB_CODEGEN_INDEX32) && !mlirOperationIsNull(mod) &&
		  pb_codegen_index32_ok(mod);
	size_t start = out->len;
	int rc;
	if (nrep > 0) {
		/* the representatives, in one part or one each on threads;
		   should their PTX not be in the form expected, the whole
		   gpu.module is compiled as it is */
		int nparts = jobs > 1 && nrep > 1 && !i32 ? nrep : 1;
		struct pb_buf *ptx = calloc(nparts, sizeof(*ptx));
		int *first = calloc(nparts, sizeof(*first));
		if (nparts > 1)
			rc = compile_parts(ctx, m, mod, d, isa, jobs, ptx,
					   first);
		else
			rc = compile(ctx, device_module(ctx, m, mod, d, 0, nrep),
				     isa, i32, &ptx[0]);
		if (rc == PB_OK &&
		    pb_codegen_dedup_assemble(d, nparts, first, ptx, out) < 0)
			rc = compile(ctx, device_module(ctx, m, mod, NULL, 0, 0),
				     isa, i32, out);
		for (int k = 0; k < nparts; k++)
			pb_buf_free(&ptx[k]);
		free(ptx);
		free(first);
	} else {
		rc = compile(ctx, device_module(ctx, m, mod, NULL, 0, 0), isa,
			     i32, out);
	}
	pb_codegen_dedup_free(d);
	pb_phase("pb-codegen", "PTX assembled");
	if (rc == PB_OK)
		rc = check_externs(ctx, out->data + start);
	return rc;
}
