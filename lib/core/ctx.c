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
