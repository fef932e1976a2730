/* The stages in order, from one table: what runs before a stage, and how
 * a stage tool writes its result. */
#include "codegen/codegen.h"
#include "fuse/fuse.h"
#include "mma/mma.h"
#include "pipeline/pipeline.h"
#include "smem/smem.h"
#include "tile/tile.h"

/* Each stage's entry point with its own options type (the tables hold
 * them as const void *: no function is called through a pointer of
 * another type). */
static int fuse(struct pb_ctx *ctx, MlirModule m, const void *o)
{
	return pb_fuse_run(ctx, m, o);
}

static int tile(struct pb_ctx *ctx, MlirModule m, const void *o)
{
	return pb_tile_run(ctx, m, o);
}

/* pb-mma, then pb-tile's mapping for CUDA cores of the contractions it
 * did not take (--no-mma). */
static int mma(struct pb_ctx *ctx, MlirModule m, const void *o)
{
	if (pb_mma_run(ctx, m, o))
		return PB_ERR;
	return pb_tile_map_marked(ctx, m);
}

static int smem(struct pb_ctx *ctx, MlirModule m, const void *o)
{
	return pb_smem_run(ctx, m, o);
}

/* pb-smem's --stages and --k-tile are checked before any work. */
static int smem_check(struct pb_ctx *ctx, const void *o)
{
	return pb_smem_check_opts(ctx, o);
}

static int codegen(struct pb_ctx *ctx, MlirModule m, const void *o)
{
	return pb_codegen_run(ctx, m, o);
}

/* pb-codegen's --emit is checked before any work. */
static int codegen_check(struct pb_ctx *ctx, const void *o)
{
	return pb_codegen_check_opts(ctx, o);
}

/* pb-codegen writes PTX (or the lowered MLIR, as "o" says). */
static int codegen_emit(struct pb_ctx *ctx, MlirModule m, const void *o,
			struct pb_buf *out)
{
	return pb_codegen_emit(ctx, m, o, out);
}

/* The stages after pb-import (a module that records no stage is at the
 * import stage), in pipeline order, with their tools' names and help. */
static const struct stage {
	enum pb_stage stage;
	const char *tool, *summary, *description;
	int (*run)(struct pb_ctx *ctx, MlirModule m, const void *opts);
	/* a stage tool's options checked before its input is read (NULL:
	   no check) */
	int (*check)(struct pb_ctx *ctx, const void *opts);
	int (*emit)(struct pb_ctx *ctx, MlirModule m, const void *opts,
		    struct pb_buf *out); /* NULL: the MLIR text */
} stages[] = {
	{PB_STAGE_FUSE, "pb-fuse",
	 "pb-fuse: bufferize, lower to affine loops, fuse them "
	 "into kernels (MLIR in, MLIR out).",
	 "Input: linalg on tensors (pb-import's output). Output: affine loops\n"
	 "on memrefs, fused on isl dependences into kernels, each outlined into\n"
	 "a private func.func with the pb.kernel attribute, called from @main\n"
	 "(docs/pb-fuse.md, docs/ir-contract.md).\n",
	 fuse, NULL, NULL},
	{PB_STAGE_TILE, "pb-tile",
	 "pb-tile: multi-level tiling and mapping to blocks, warps and "
	 "threads (MLIR in, MLIR out).",
	 "Tiles the parallel band of every kernel nest for a block, its\n"
	 "warps and its threads, with sizes from an analytical cost model\n"
	 "of the target (--arch, --target-file) or from --sizes; nests with\n"
	 "small bands and large inner reductions run one block per band\n"
	 "point with a shared-memory tree. See docs/pb-tile.md.\n",
	 tile, NULL, NULL},
	{PB_STAGE_MMA, "pb-mma",
	 "pb-mma: map contractions (matmul, conv, attention) "
	 "to tensor cores (MLIR in, MLIR out).",
	 "NOT IMPLEMENTED YET: the transformation itself is future work.\n"
	 "Today pb-mma runs the earlier stages its input still needs (with\n"
	 "their defaults), verifies the module and passes it through,\n"
	 "marking it with pb.stage = \"mma\".\n",
	 mma, NULL, NULL},
	{PB_STAGE_SMEM, "pb-smem",
	 "pb-smem: shared-memory and register promotion "
	 "(MLIR in, MLIR out).",
	 "Stages the operand tiles of every mapped contraction that are\n"
	 "reused across threads in shared memory: cooperative, coalesced,\n"
	 "up to 128-bit copies, asynchronous (cp.async) in a ring of\n"
	 "--stages on sm_80 and later, padded against bank conflicts, with\n"
	 "each thread's accumulators in private arrays. See docs/pb-smem.md.\n",
	 smem, smem_check, NULL},
	{PB_STAGE_CODEGEN, "pb-codegen",
	 "pb-codegen: lower to PTX with a host launch plan "
	 "(MLIR in, PTX out).",
	 "Input: a pb module at any stage (earlier stages run first with\n"
	 "their defaults). Output: one self-contained PTX module for --arch\n"
	 "whose comment header ('// pb-plan-begin' ... '// pb-plan-end')\n"
	 "holds the launch plan as JSON: buffers, and kernel launches in\n"
	 "order with grid, block and arguments (docs/pb-codegen.md).\n",
	 codegen, codegen_check, codegen_emit},
};
#define NSTAGES (sizeof(stages) / sizeof(stages[0]))

int pb_pipeline_run(struct pb_ctx *ctx, MlirModule m, enum pb_stage upto,
		    const void *opts)
{
	/* pb-codegen's tile backend translates pb-fuse's kernels */
	enum pb_stage before = upto == PB_STAGE_CODEGEN
				       ? pb_codegen_input_stage(opts)
				       : upto;
	for (size_t i = 0; i < NSTAGES && stages[i].stage <= upto; i++) {
		const struct stage *s = &stages[i];
		int rc = PB_OK;
		if (s->stage != upto && s->stage > before)
			continue;
		if (s->stage == upto)
			rc = s->run(ctx, m, opts);
		else if (pb_ir_get_stage(m) < s->stage)
			rc = s->run(ctx, m, NULL);
		if (rc != PB_OK)
			return rc;
	}
	return PB_OK;
}

/* The entry of "stage" in the table, or NULL. */
static const struct stage *find(enum pb_stage stage)
{
	for (size_t i = 0; i < NSTAGES; i++)
		if (stages[i].stage == stage)
			return &stages[i];
	return NULL;
}

int pb_pipeline_emit(struct pb_ctx *ctx, MlirModule m, enum pb_stage stage,
		     const void *opts, struct pb_buf *out)
{
	const struct stage *s = find(stage);
	if (s && s->emit)
		return s->emit(ctx, m, opts, out);
	return pb_ir_print(ctx, m, out);
}

/* A stage tool: its stage and its options. */
struct tool {
	const struct stage *stage;
	const void *opts;
};

/* The run function of a stage tool ("user", a struct tool): parse "in",
 * bring it to the tool's stage and write the result into "out". */
static int tool_run(struct pb_ctx *ctx, const struct pb_input *in,
		    struct pb_buf *out, void *user)
{
	const struct tool *t = user;
	const struct stage *s = t->stage;
	int rc = s->check ? s->check(ctx, t->opts) : PB_OK;
	if (rc != PB_OK)
		return rc;
	MlirModule m = pb_ir_parse(ctx, in);
	if (mlirModuleIsNull(m))
		return PB_ERR;
	rc = pb_pipeline_run(ctx, m, s->stage, t->opts);
	if (rc == PB_OK)
		rc = pb_pipeline_emit(ctx, m, s->stage, t->opts, out);
	mlirModuleDestroy(m);
	return rc;
}

int pb_pipeline_main(enum pb_stage stage, const struct pb_opt *options,
		     const void *opts, int argc, char **argv)
{
	struct tool t = {find(stage), opts};
	if (!t.stage)
		return PB_USAGE;
	struct pb_tool tool = {
		.name = t.stage->tool,
		.summary = t.stage->summary,
		.description = t.stage->description,
		.opts = options,
		.run = tool_run,
		.user = &t,
	};
	return pb_main(&tool, argc, argv);
}
