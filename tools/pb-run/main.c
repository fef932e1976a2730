/* pb-run: run an .onnx model or any stage's MLIR on the CPU (JIT) or the
 * GPU, or a k.ptx on the GPU; see docs/pb-run.md. */
#include <stdlib.h>

#include "runtime/runtime.h"

static struct pb_runtime_opts opts;

static const struct pb_opt options[] = {
	{"input", PB_OPT_LIST, &opts.inputs, "FILE",
	 "an input (.npy or ONNX TensorProto .pb), in argument order; repeatable"},
	{"data", PB_OPT_STR, &opts.data, "DIR",
	 "ONNX test_data_set dir: input_N.pb in, check against output_N.pb"},
	{"random", PB_OPT_OPTSTR, &opts.random, "SEED",
	 "fill inputs not given deterministically (uniform [-1,1))"},
	{"output", PB_OPT_STR, &opts.output, "DIR",
	 "write each result to DIR/<name>.npy"},
	{"check", PB_OPT_LIST, &opts.checks, "FILE",
	 "compare a result with FILE (.npy or .pb), in result order; repeatable"},
	{"rtol", PB_OPT_DOUBLE, &opts.rtol, "X",
	 "relative tolerance of --check/--data (default 1e-4)"},
	{"atol", PB_OPT_DOUBLE, &opts.atol, "X",
	 "absolute tolerance of --check/--data (default 1e-5)"},
	{"weights", PB_OPT_STR, &opts.weights, "FILE",
	 "the .onnx holding the weights (default: the module's pb.source)"},
	{"device", PB_OPT_STR, &opts.device, "DEV",
	 "cpu, gpu or auto (default: the GPU when there is one)"},
	{"print", PB_OPT_FLAG, &opts.print, NULL, "print the results"},
	{NULL, 0, NULL, NULL, NULL},
};

static int run(struct pb_ctx *ctx, const struct pb_input *in,
	       struct pb_buf *out, void *user)
{
	(void)user;
	int rc = pb_runtime_main(ctx, in, &opts, out);
	if (rc != PB_OK && out->len) { /* the driver prints only on success */
		fwrite(out->data, 1, out->len, stdout);
		fflush(stdout);
		out->len = 0;
	}
	return rc;
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
		.flags = PB_TOOL_BINARY_INPUT,
		.run = run,
	};
	pb_runtime_opts_init(&opts);
	int rc = pb_main(&tool, argc, argv);
	free(opts.inputs.v);
	free(opts.checks.v);
	return rc;
}
