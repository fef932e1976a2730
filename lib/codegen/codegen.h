/* pb-codegen: lower a pb module to PTX with a host launch plan.
 * See docs/pb-codegen.md. */
#ifndef PB_CODEGEN_CODEGEN_H
#define PB_CODEGEN_CODEGEN_H

#include "ir/ir.h"

struct pb_codegen_opts {
	const char *emit;  /* "ptx" (default) or "mlir"; with the tile
			      backend "tile" (default), "tileirbc" or "mlir" */
	const char *plan;  /* also write the plan JSON to this file */
	int ptxas_report;  /* print ptxas -v statistics to stderr */
	const char *backend;  /* "ptx" (default) or "tile" (lib/tileir) */
	const char *tileiras; /* --tileiras=PATH */
	long opt_level;	      /* --opt-level for tileiras (0..3; -1: 3) */
	int tile_tma;	      /* --tile-tma (with --backend=tile) */
	int no_memory_plan;   /* --no-memory-plan: one allocation per
				 scratch buffer, no arena */
	int no_dedup;	      /* --no-dedup: clean up and compile every
				 kernel, also those identical to an
				 earlier one */
	int exact_dedup;      /* --exact-dedup: compile together only
				 kernels identical but for their names,
				 not those that differ in buffer sizes
				 no address depends on and in grids */
	int index32;	      /* --index32: 32-bit index arithmetic in the
				 kernels where the buffers allow */
	long jobs;	      /* --jobs=N: kernels compiled on N threads
				 (0: as many as CPUs) */
};

/* The last stage a module must have been through before pb-codegen with
 * "opts" (NULL: the defaults): pb-smem's for the PTX backend, pb-fuse's
 * for the tile backend, which translates the fused kernels itself. */
enum pb_stage pb_codegen_input_stage(const struct pb_codegen_opts *opts);

/* Check "opts" before any work: PB_USAGE (reported) for a bad "emit". */
int pb_codegen_check_opts(struct pb_ctx *ctx,
			  const struct pb_codegen_opts *opts);

/* Lower "m" (at the smem stage) for ctx->arch in place: mapped onto
 * gpu.launch, outlined into one gpu.module, the kernel functions inlined
 * into @main; "m" is then at the codegen stage. A module at the codegen
 * stage passes through. PB_USAGE for a bad "opts->emit" ("opts" may be
 * NULL for the defaults). */
int pb_codegen_run(struct pb_ctx *ctx, MlirModule m,
		   const struct pb_codegen_opts *opts);

/* Write "m" (at the codegen stage) into "out" as "opts->emit" says: PTX
 * for ctx->arch with the launch plan in its header (and the plan to
 * "opts->plan", ptxas statistics with "opts->ptxas_report"), or the
 * module's MLIR. */
int pb_codegen_emit(struct pb_ctx *ctx, MlirModule m,
		    const struct pb_codegen_opts *opts, struct pb_buf *out);

#endif
