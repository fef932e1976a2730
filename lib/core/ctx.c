/* The pb context. The compiler half of the context (MlirContext, MLIR
 * diagnostics, isl_ctx, pb_error_at) lives in ctx_compiler.c, so that a
 * runner built with -DPB_NO_MLIR (pb-run-lite) links this file without
 * MLIR or isl; its ctx->mlir stays null. Diagnostics are diag.c, below
 * both. */
#include <stdlib.h>
#include <string.h>

#include "core/pb.h"

struct pb_ctx *pb_ctx_alloc(const char *tool)
{
	struct pb_ctx *ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return NULL;
	ctx->tool = tool;
	ctx->input_name = "<stdin>";
	ctx->arch = "sm_90";
#ifndef PB_NO_MLIR
	pb_ctx_compiler_init(ctx);
#endif
	return ctx;
}

void pb_ctx_free(struct pb_ctx *ctx)
{
	if (!ctx)
		return;
#ifndef PB_NO_MLIR
	pb_ctx_compiler_free(ctx);
#endif
	free(ctx->target);
	free(ctx);
}

static const char *const precision_names[] = {
	[PB_PRECISION_FP32] = "fp32",
	[PB_PRECISION_TF32] = "tf32",
	[PB_PRECISION_FP16] = "fp16",
	[PB_PRECISION_BF16] = "bf16",
};

const char *pb_precision_name(enum pb_precision p)
{
	return precision_names[p];
}

int pb_precision_parse(const char *name)
{
	for (int p = 0; p < (int)(sizeof(precision_names) /
				  sizeof(precision_names[0]));
	     p++)
		if (!strcmp(name, precision_names[p]))
			return p;
	return -1;
}
