/* The stages in order, from one table: what runs before a stage, and how
 * a stage tool writes its result. */
#include "codegen/codegen.h"
#include "fuse/fuse.h"
#include "mma/mma.h"
#include "pipeline/pipeline.h"
#include "smem/smem.h"
#include "tile/tile.h"

/* Each stage's entry point with its own options type. */
static int fuse(struct pb_ctx *ctx, MlirModule m, const void *o)
{
	return pb_fuse_run(ctx, m, o);
}

static int tile(struct pb_ctx *ctx, MlirModule m, const void *o)
{
	return pb_tile_run(ctx, m, o);
}

static int mma(struct pb_ctx *ctx, MlirModule m, const void *o)
{
	return pb_mma_run(ctx, m, o);
}

static int smem(struct pb_ctx *ctx, MlirModule m, const void *o)
{
	return pb_smem_run(ctx, m, o);
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
 * import stage), in pipeline order. */
static const struct stage {
	enum pb_stage stage;
	int (*run)(struct pb_ctx *ctx, MlirModule m, const void *opts);
	/* a stage tool's options checked before its input is read (NULL:
	   no check) */
	int (*check)(struct pb_ctx *ctx, const void *opts);
	int (*emit)(struct pb_ctx *ctx, MlirModule m, const void *opts,
		    struct pb_buf *out); /* NULL: the MLIR text */
} stages[] = {
	{PB_STAGE_FUSE, fuse, NULL, NULL},
	{PB_STAGE_TILE, tile, NULL, NULL},
	{PB_STAGE_MMA, mma, NULL, NULL},
	{PB_STAGE_SMEM, smem, NULL, NULL},
	{PB_STAGE_CODEGEN, codegen, codegen_check, codegen_emit},
};
#define NSTAGES (sizeof(stages) / sizeof(stages[0]))

int pb_pipeline_run(struct pb_ctx *ctx, MlirModule m, enum pb_stage upto,
		    const void *opts)
{
	for (size_t i = 0; i < NSTAGES && stages[i].stage <= upto; i++) {
		const struct stage *s = &stages[i];
		int rc = PB_OK;
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

int pb_pipeline_tool_run(struct pb_ctx *ctx, const struct pb_input *in,
			 struct pb_buf *out, void *user)
{
	const struct pb_pipeline_tool *t = user;
	const struct stage *s = find(t->stage);
	int rc = s && s->check ? s->check(ctx, t->opts) : PB_OK;
	if (rc != PB_OK)
		return rc;
	MlirModule m = pb_ir_parse(ctx, in);
	if (mlirModuleIsNull(m))
		return PB_ERR;
	rc = pb_pipeline_run(ctx, m, t->stage, t->opts);
	if (rc == PB_OK)
		rc = pb_pipeline_emit(ctx, m, t->stage, t->opts, out);
	mlirModuleDestroy(m);
	return rc;
}
