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

#include "mlir-c/Pass.h"

#include "codegen/internal.h"
#include "ir/contract.h"
#include "ir/passes.h"
#include "tileir/tileir.h"

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

/* The threads of "opts": --jobs, or one per CPU. */
static int jobs(const struct pb_codegen_opts *opts)
{
	return opts && opts->jobs > 0 ? (int)opts->jobs
				      : pb_codegen_jobs_default();
}

/* Run "pipeline" on "m", on MLIR's thread pool if "threads", verifying
 * after each pass if "verify". */
static int run(struct pb_ctx *ctx, MlirModule m, const char *pipeline,
	       int threads, int verify)
{
	if (threads)
		mlirContextEnableMultithreading(ctx->mlir, true);
	int rc = verify ? pb_ir_run_pipeline(ctx, m, pipeline)
			: pb_ir_run_pipeline_unverified(ctx, m, pipeline);
	if (threads)
		mlirContextEnableMultithreading(ctx->mlir, false);
	return rc;
}

/* Is each loop at the top of the body of func.func "f" mapped by an
 * earlier stage (pb.map; lib/ir/contract.h), and is there one? */
static int all_mapped(MlirOperation f)
{
	MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(f, 0));
	int n = 0;
	for (MlirOperation op = mlirBlockGetFirstOperation(b);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		if (!pb_codegen_op_has_prefix(op, "affine.") &&
		    !pb_codegen_op_has_prefix(op, "scf."))
			continue;
		if (mlirAttributeIsNull(pb_ir_attr(op, PB_ATTR_MAP)))
			return 0;
		n++;
	}
	return n > 0;
}

/* Collect the text of a pass pipeline's parse error into the pb_buf
 * "user". */
static void collect(MlirStringRef s, void *user)
{
	pb_buf_append(user, s.data, s.length);
}

/* affine-parallelize for one function (run by parallelize). */
static const char parallelize_func[] = "func.func(affine-parallelize)";

/* Run affine-parallelize on the functions of "m" that hold a nest no
 * earlier stage mapped: over the whole module (on MLIR's thread pool if
 * "threads") when that is every function, else on each of them. map.c
 * lowers a mapped nest by its pb.map loops and runs every other loop in
 * it as it is, so the loops inside a mapped nest are left alone (proving
 * them parallel was most of the pass's time, and changed nothing in the
 * PTX). */
static int parallelize(struct pb_ctx *ctx, MlirModule m, int threads)
{
	struct pb_ir_ops todo = {0};
	struct pb_buf err = {0};
	int rc = PB_OK, n = 0;
	MlirBlock body = mlirModuleGetBody(m);
	for (MlirOperation op = mlirBlockGetFirstOperation(body);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		if (!pb_ir_op_is(op, "func.func"))
			continue;
		n++;
		if (!all_mapped(op))
			pb_ir_ops_push(&todo, op);
	}
	if (todo.n == n || !todo.n) {
		int all = todo.n > 0;
		pb_ir_ops_free(&todo);
		return all ? run(ctx, m, pb_passes_parallelize, threads, 1)
			   : PB_OK;
	}
	MlirPassManager pm = mlirPassManagerCreateOnOperation(
		ctx->mlir, pb_str("func.func"));
	if (mlirLogicalResultIsFailure(mlirParsePassPipeline(
		    mlirPassManagerGetAsOpPassManager(pm),
		    pb_str(parallelize_func), collect, &err))) {
		pb_error(ctx, "internal: bad pass pipeline '%s': %s",
			 parallelize_func, err.data ? err.data : "");
		rc = PB_ERR;
	}
	for (int i = 0; i < todo.n && rc == PB_OK; i++)
		if (mlirLogicalResultIsFailure(
			    mlirPassManagerRunOnOp(pm, todo.v[i]))) {
			if (!ctx->nerrors)
				pb_error(ctx, "pass pipeline failed: %s",
					 parallelize_func);
			rc = PB_ERR;
		}
	mlirPassManagerDestroy(pm);
	pb_ir_ops_free(&todo);
	pb_buf_free(&err);
	return rc;
}

/* Map and outline "m" in place: after this the host side of @main is a
 * sequence of allocations, views and gpu.launch_func. With "threads",
 * the passes over each function and each kernel's gpu.module run on
 * MLIR's thread pool; with "dedup", identical kernels are cleaned up
 * once. */
static int lower(struct pb_ctx *ctx, MlirModule m, int threads, int dedup)
{
	pb_phase("pb-codegen", "start");
	if (pb_codegen_check(ctx, m) ||
	    run(ctx, m, pb_passes_codegen_prepare, threads, 1))
		return PB_ERR;
	pb_phase("pb-codegen", "prepare");
	if (pb_codegen_expand_copies(ctx, m) ||
	    pb_codegen_push_globals(ctx, m) ||
	    parallelize(ctx, m, threads))
		return PB_ERR;
	pb_phase("pb-codegen", "parallelize");
	if (pb_codegen_map(ctx, m) || pb_codegen_mma(ctx, m))
		return PB_ERR;
	contract(ctx, m);
	pb_phase("pb-codegen", "map");
	if (!mlirOperationVerify(mlirModuleGetOperation(m))) {
		if (!ctx->nerrors)
			pb_error(ctx, "internal: the mapped module does not "
				      "verify");
		return PB_ERR;
	}
	/* verified once at the end: verifying a module of gpu.launch_func
	   after each pass costs time quadratic in the kernels */
	if (run(ctx, m, pb_passes_outline, threads, 0))
		return PB_ERR;
	pb_phase("pb-codegen", "outline");
	/* identical kernels cleaned up once (twins.c) */
	struct pb_codegen_twins *tw = dedup ? pb_codegen_twins_strip(m) : NULL;
	int rc = run(ctx, m, pb_passes_outline_kernels, threads, 0);
	pb_codegen_twins_fill(tw);
	pb_phase("pb-codegen", "kernels cleaned up");
	if (rc || pb_codegen_merge(ctx, m) ||
	    pb_ir_run_pipeline_unverified(ctx, m, pb_passes_inline) ||
	    pb_codegen_arg_attrs(m) || pb_codegen_dyn_lower(ctx, m))
		return PB_ERR;
	pb_codegen_mma_registers(m);
	if (!mlirOperationVerify(mlirModuleGetOperation(m))) {
		if (!ctx->nerrors)
			pb_error(ctx, "internal: the outlined module does not "
				      "verify");
		return PB_ERR;
	}
	pb_ir_set_stage(m, PB_STAGE_CODEGEN);
	pb_phase("pb-codegen", "merge, inline, verify");
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

/* Is the backend of "opts" Tile IR? */
static int tile(const struct pb_codegen_opts *opts)
{
	return opts && opts->backend && !strcmp(opts->backend, "tile");
}

/* The --emit of "opts": 1 for "mlir", 0 for "ptx" (the default) or,
 * with the tile backend, "tile" (the default) or "tileirbc", -1
 * (reported, a usage error) for anything else. Checks --backend and
 * --opt-level too. */
static int emit_mlir(struct pb_ctx *ctx, const struct pb_codegen_opts *opts)
{
	const char *backend = opts && opts->backend ? opts->backend : "ptx";
	if (strcmp(backend, "ptx") && strcmp(backend, "tile")) {
		fprintf(stderr, "%s: error: bad value '%s' for option "
			"'--backend' (expected ptx or tile)\n", ctx->tool,
			backend);
		return -1;
	}
	if (opts && (opts->opt_level < -1 || opts->opt_level > 3)) {
		fprintf(stderr, "%s: error: bad value '%ld' for option "
			"'--opt-level' (expected 0 to 3)\n", ctx->tool,
			opts->opt_level);
		return -1;
	}
	if (opts && opts->jobs < 0) {
		fprintf(stderr, "%s: error: bad value '%ld' for option "
			"'--jobs' (expected a positive number)\n", ctx->tool,
			opts->jobs);
		return -1;
	}
	const char *emit = opts && opts->emit ? opts->emit
					      : tile(opts) ? "tile" : "ptx";
	if (opts && opts->tile_tma && !tile(opts)) {
		fprintf(stderr, "%s: error: --tile-tma needs --backend=tile\n",
			ctx->tool);
		return -1;
	}
	if (!strcmp(emit, "mlir"))
		return 1;
	if (tile(opts) ? !strcmp(emit, "tile") || !strcmp(emit, "tileirbc")
		       : !strcmp(emit, "ptx"))
		return 0;
	fprintf(stderr, "%s: error: bad value '%s' for option '--emit' "
		"(expected %s)\n", ctx->tool, emit,
		tile(opts) ? "tile, tileirbc or mlir" : "ptx or mlir");
	return -1;
}

int pb_codegen_check_opts(struct pb_ctx *ctx,
			  const struct pb_codegen_opts *opts)
{
	return emit_mlir(ctx, opts) < 0 ? PB_USAGE : PB_OK;
}

enum pb_stage pb_codegen_input_stage(const struct pb_codegen_opts *opts)
{
	return tile(opts) ? PB_STAGE_FUSE : PB_STAGE_SMEM;
}

int pb_codegen_run(struct pb_ctx *ctx, MlirModule m,
		   const struct pb_codegen_opts *opts)
{
	if (emit_mlir(ctx, opts) < 0)
		return PB_USAGE;
	enum pb_stage s = pb_ir_get_stage(m);
	if (tile(opts) && s > PB_STAGE_FUSE) {
		pb_error_at(ctx, mlirOperationGetLocation(mlirModuleGetOperation(m)),
			    "--backend=tile translates the kernels of pb-fuse; "
			    "this module is at the %s stage",
			    pb_ir_stage_name(s));
		return PB_ERR;
	}
	if (tile(opts) || s >= PB_STAGE_CODEGEN)
		return PB_OK;
	return lower(ctx, m, jobs(opts) > 1, !(opts && opts->no_dedup));
}

/* Plan "p" (may be NULL) with its scratch buffers packed into one arena
 * by liveness (lib/plan/arena.c), unless "opts" says --no-memory-plan;
 * NULL after reporting when the packing fails its check. */
static struct pb_plan *memory_plan(struct pb_ctx *ctx, struct pb_plan *p,
				   const struct pb_codegen_opts *opts)
{
	char err[256];
	if (!p || (opts && opts->no_memory_plan))
		return p;
	pb_plan_pack(p);
	if (pb_plan_check_arena(p, err, sizeof(err))) {
		pb_error(ctx, "internal: inconsistent memory plan: %s", err);
		pb_plan_free(p);
		return NULL;
	}
	return p;
}

/* The tile backend's output of "m" (at the fuse stage) into "out": the
 * tile artifact, or the bytecode with --emit=tileirbc (lib/tileir). */
static int emit_tile(struct pb_ctx *ctx, MlirModule m,
		     const struct pb_codegen_opts *opts, struct pb_buf *out)
{
	struct pb_tileir_opts t = {
		opts->tileiras, opts->opt_level < 0 ? 3 : (int)opts->opt_level,
		opts->emit && !strcmp(opts->emit, "tileirbc"), opts->tile_tma};
	pb_tileir_sink_globals(m);
	struct pb_plan *plan = memory_plan(ctx, pb_codegen_plan_calls(ctx, m),
					   opts);
	int rc = plan ? pb_tileir_emit(ctx, m, plan, &t, out) : PB_ERR;
	if (rc == PB_OK && opts->plan && !t.emit_bytecode)
		rc = write_plan(ctx, plan, opts->plan);
	pb_plan_free(plan);
	return rc;
}

int pb_codegen_emit(struct pb_ctx *ctx, MlirModule m,
		    const struct pb_codegen_opts *opts, struct pb_buf *out)
{
	int mlir = emit_mlir(ctx, opts);
	if (mlir < 0)
		return PB_USAGE;
	if (tile(opts) && !mlir)
		return emit_tile(ctx, m, opts, out);
	if (tile(opts))
		return pb_ir_print(ctx, m, out);
	struct pb_buf ptx = {0};
	struct pb_plan *plan = pb_codegen_plan(ctx, m);
	if (plan && !mlir)
		pb_codegen_rebase(m, plan);
	plan = memory_plan(ctx, plan, opts);
	int rc = plan ? PB_OK : PB_ERR;
	pb_phase("pb-codegen", "plan");
	if (rc == PB_OK && mlir)
		rc = pb_ir_print(ctx, m, out);
	if (rc == PB_OK && !mlir)
		rc = pb_codegen_ptx(ctx, m,
				    (opts && opts->no_dedup ? 0 : PB_CODEGEN_DEDUP) |
				    (opts && opts->exact_dedup ? 0
							       : PB_CODEGEN_DEDUP_SIZES) |
				    (opts && opts->index32 ? PB_CODEGEN_INDEX32 : 0),
				    jobs(opts), &ptx);
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
