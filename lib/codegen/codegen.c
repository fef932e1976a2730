/* pb-codegen: the stage driver. From a module at any stage to PTX with the
 * host launch plan in its header:
 *
 *   checks  ->  linalg to affine loops,
 *   memref.copy to loops, affine-parallelize  ->  mapping to gpu.launch
 *   (map.c), multiplies and adds allowed to contract into FMAs  ->
 *   lower-affine, gpu-kernel-outlining  ->  one gpu.module
 *   (merge.c)  ->  inline the kernel functions into @main  ->  plan
 *   (host.c)  ->  PTX (ptx.c)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/internal.h"
#include "ir/passes.h"

/* Walk callback: allow floating-point multiplies and adds to contract
 * into fused multiply-adds ("contract" fast-math, which is all NVPTX
 * needs to emit fma.rn; the rounding is then better, not worse). */
static MlirWalkResult contract_cb(MlirOperation op, void *user)
{
	MlirAttribute *fm = user;
	if (pb_ir_op_is(op, "arith.mulf") || pb_ir_op_is(op, "arith.addf") ||
	    pb_ir_op_is(op, "arith.subf")) {
		MlirAttribute a = pb_ir_attr(op, "fastmath");
		struct pb_buf b = {0};
		if (!mlirAttributeIsNull(a))
			pb_codegen_attr_str(a, &b);
		if (mlirAttributeIsNull(a) ||
		    !strcmp(b.data, "#arith.fastmath<none>"))
			pb_ir_set_attr(op, "fastmath", *fm);
		pb_buf_free(&b);
	}
	return MlirWalkResultAdvance;
}

/* Let the device code of "m" contract multiplies and adds into FMAs. */
static void contract(struct pb_ctx *ctx, MlirModule m)
{
	MlirAttribute fm = mlirAttributeParseGet(
		ctx->mlir, mlirStringRefCreateFromCString(
				   "#arith.fastmath<contract>"));
	struct pb_ir_ops launches = {0};
	pb_ir_collect(mlirModuleGetOperation(m), "gpu.launch", &launches);
	for (int i = 0; i < launches.n; i++)
		mlirOperationWalk(launches.v[i], contract_cb, &fm,
				  MlirWalkPreOrder);
	pb_ir_ops_free(&launches);
}

/* Map and outline "m" in place: after this the host side of @main is a
 * sequence of allocations, views and gpu.launch_func. */
static int lower(struct pb_ctx *ctx, MlirModule m)
{
	if (pb_codegen_check(ctx, m) ||
	    pb_ir_run_pipeline(ctx, m, pb_passes_codegen_prepare) ||
	    pb_codegen_expand_copies(ctx, m) ||
	    pb_codegen_push_globals(ctx, m) ||
	    pb_ir_run_pipeline(ctx, m, pb_passes_parallelize) ||
	    pb_codegen_map(ctx, m) || pb_codegen_mma(ctx, m))
		return PB_ERR;
	contract(ctx, m);
	if (!mlirOperationVerify(mlirModuleGetOperation(m))) {
		if (!ctx->nerrors)
			pb_error(ctx, "internal: the mapped module does not "
				      "verify");
		return PB_ERR;
	}
	if (pb_ir_run_pipeline(ctx, m, pb_passes_outline) || pb_codegen_merge(ctx, m) ||
	    pb_ir_run_pipeline(ctx, m, pb_passes_inline) ||
	    pb_codegen_arg_attrs(m))
		return PB_ERR;
	pb_ir_set_stage(m, PB_STAGE_CODEGEN);
	return PB_OK;
}

/* Write the plan "p" as JSON to "path". */
static int write_plan(struct pb_ctx *ctx, const struct pb_plan *p,
		      const char *path)
{
	char *json = pb_plan_to_json(p, NULL);
	int rc = pb_write_file(path, json, strlen(json));
	free(json);
	if (rc < 0) {
		pb_error(ctx, "cannot write the plan to '%s': %s", path,
			 strerror(errno));
		return PB_ERR;
	}
	return PB_OK;
}

/* The --emit of "opts": 1 for "mlir", 0 for "ptx" (the default), -1
 * (reported, a usage error) for anything else. */
static int emit_mlir(struct pb_ctx *ctx, const struct pb_codegen_opts *opts)
{
	const char *emit = opts && opts->emit ? opts->emit : "ptx";
	if (!strcmp(emit, "mlir"))
		return 1;
	if (!strcmp(emit, "ptx"))
		return 0;
	fprintf(stderr, "%s: error: bad value '%s' for option '--emit' "
		"(expected ptx or mlir)\n", ctx->tool, emit);
	return -1;
}

int pb_codegen_check_opts(struct pb_ctx *ctx,
			  const struct pb_codegen_opts *opts)
{
	return emit_mlir(ctx, opts) < 0 ? PB_USAGE : PB_OK;
}

int pb_codegen_run(struct pb_ctx *ctx, MlirModule m,
		   const struct pb_codegen_opts *opts)
{
	if (emit_mlir(ctx, opts) < 0)
		return PB_USAGE;
	if (pb_ir_get_stage(m) >= PB_STAGE_CODEGEN)
		return PB_OK;
	return lower(ctx, m);
}

int pb_codegen_emit(struct pb_ctx *ctx, MlirModule m,
		    const struct pb_codegen_opts *opts, struct pb_buf *out)
{
	int mlir = emit_mlir(ctx, opts);
	if (mlir < 0)
		return PB_USAGE;
	struct pb_buf ptx = {0};
	struct pb_plan *plan = pb_codegen_plan(ctx, m);
	int rc = plan ? PB_OK : PB_ERR;
	if (rc == PB_OK && mlir)
		rc = pb_ir_print(ctx, m, out);
	if (rc == PB_OK && !mlir)
		rc = pb_codegen_ptx(ctx, m, &ptx);
	if (rc == PB_OK && !mlir && opts && opts->ptxas_report)
		rc = pb_codegen_ptxas_report(ctx, ptx.data, ptx.len);
	if (rc == PB_OK && !mlir) {
		char *hdr = pb_plan_to_header(plan);
		pb_buf_puts(out, hdr);
		pb_buf_append(out, ptx.data, ptx.len);
		free(hdr);
	}
	if (rc == PB_OK && opts && opts->plan)
		rc = write_plan(ctx, plan, opts->plan);
	pb_plan_free(plan);
	pb_buf_free(&ptx);
	return rc;
}
