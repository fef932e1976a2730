/* pb-run: run an .onnx model or any stage's MLIR on the CPU (JIT) or the
 * GPU, or a k.ptx on the GPU; see docs/pb-run.md. */
#include <stdlib.h>

#include "runtime/runtime.h"

static struct pb_runtime_opts opts;

static struct pb_opt options[PB_RUNTIME_NOPTS + 1];

static int run(struct pb_ctx *ctx, const struct pb_input *in,
	       struct pb_buf *out, void *user)
{
	(void)user;
	return pb_runtime_main(ctx, in, &opts, out);
}

int main(int argc, char **argv)
{
	static const struct pb_tool tool = {
#ifdef PB_NO_MLIR
		.name = "pb-run-lite",
		.summary = "pb-run-lite: run a k.ptx from pb-codegen on the GPU "
			   "(built without MLIR: PTX input only).",
#else
		.name = "pb-run",
		.summary = "pb-run: run an .onnx model or any stage's MLIR on the "
			   "CPU (JIT) or the GPU, or a k.ptx on the GPU.",
#endif
		.description =
			"Input: k.ptx from pb-codegen (runs on the GPU by its launch\n"
			"plan), a .onnx model, or MLIR text of any stage: on the CPU\n"
			"imported and fused first when below the fuse stage and JIT-run,\n"
			"on the GPU compiled with pb-codegen. @main's arguments are\n"
			"bound to --input/--data/--random values, the model's weights\n"
			"and output buffers; see docs/pb-run.md.\n",
		.opts = options,
		.flags = PB_TOOL_BINARY_INPUT | PB_TOOL_REPORT,
		.run = run,
	};
	pb_runtime_opts_init(&opts);
	pb_runtime_opts_table(&opts, options);
	int rc = pb_main(&tool, argc, argv);
	pb_runtime_opts_free(&opts);
	return rc;
}
