/* libFuzzer target over the textual MLIR entry of the stages: each input
 * is parsed as a module (pb_ir_parse: the empty-input and nesting checks,
 * then MLIR's parser and verifier) and, when it parses, brought through
 * pb-fuse, pb-tile, pb-mma and pb-smem and lowered by pb-codegen
 * (pb_pipeline_run up to the codegen stage: each stage's own checks on what
 * parses), without emitting PTX. Built and run by `make fuzz
 * FUZZ_TARGET=mlir` (docs/testing.md, "Fuzzing"). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/pb.h"
#include "pipeline/pipeline.h"

static struct pb_ctx *ctx;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ctx) /* registers the MLIR dialects: once per process */
		ctx = pb_ctx_alloc("pb-codegen");

	/* a tool's input ends in '\0' (pb_read_file), as MLIR's lexer needs */
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct pb_input in = {
		.name = "fuzz.mlir",
		.path = "fuzz.mlir",
		.data = text,
		.len = size,
	};
	ctx->input_name = in.name;
	ctx->nerrors = 0;
	MlirModule m = pb_ir_parse(ctx, &in);
	if (!mlirModuleIsNull(m)) {
		pb_pipeline_run(ctx, m, PB_STAGE_CODEGEN, NULL);
		mlirModuleDestroy(m);
	}
	free(text);
	return 0;
}
