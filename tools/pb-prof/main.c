/* pb-prof: time each kernel of a model on the GPU (CUDA events) or the CPU
 * (JIT, wall time); see docs/pb-prof.md. */
#include <stdlib.h>

#include "runtime/runtime.h"

static struct pb_prof_opts opts;

static const struct pb_opt options[] = {
	{"input", PB_OPT_LIST, &opts.run.inputs, "FILE",
	 "an input (.npy or ONNX TensorProto .pb), in argument order; repeatable"},
	{"data", PB_OPT_STR, &opts.run.data, "DIR",
	 "ONNX test_data_set dir: input_N.pb in, check against output_N.pb"},
	{"random", PB_OPT_OPTSTR, &opts.run.random, "SEED",
	 "fill inputs not given deterministically (uniform [-1,1))"},
	{"output", PB_OPT_STR, &opts.run.output, "DIR",
	 "write each result to DIR/<name>.npy"},
	{"check", PB_OPT_LIST, &opts.run.checks, "FILE",
	 "compare a result with FILE (.npy or .pb), in result order; repeatable"},
	{"rtol", PB_OPT_DOUBLE, &opts.run.rtol, "X",
	 "relative tolerance of --check/--data (default 1e-4)"},
	{"atol", PB_OPT_DOUBLE, &opts.run.atol, "X",
	 "absolute tolerance of --check/--data (default 1e-5)"},
	{"weights", PB_OPT_STR, &opts.run.weights, "FILE",
	 "the .onnx holding the weights (default: the plan's or module's "
	 "pb.source)"},
	{"device", PB_OPT_STR, &opts.run.device, "DEV",
	 "cpu, gpu or auto (default: the GPU when there is one)"},
	{"print", PB_OPT_FLAG, &opts.run.print, NULL, "print the results"},
	{"warmup", PB_OPT_INT, &opts.warmup, "N",
	 "untimed runs before timing (default 3)"},
	{"repeat", PB_OPT_INT, &opts.repeat, "N",
	 "timed runs; median and min over them (default 20)"},
	{"json", PB_OPT_STR, &opts.json, "FILE",
	 "write the profile as JSON to FILE"},
	{"trace", PB_OPT_STR, &opts.trace, "FILE",
	 "write a Chrome trace (chrome://tracing, Perfetto) to FILE"},
	{"costs", PB_OPT_STR, &opts.costs, "FILE",
	 "take each kernel's flops from an earlier --json (for .ptx input)"},
	{NULL, 0, NULL, NULL, NULL},
};

static int run(struct pb_ctx *ctx, const struct pb_input *in,
	       struct pb_buf *out, void *user)
{
	(void)user;
	int rc = pb_prof_main(ctx, in, &opts, out);
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
		.name = "pb-prof-lite",
		.summary = "pb-prof-lite: time each kernel of a k.ptx on the GPU "
			   "(built without MLIR: PTX input only).",
#else
		.name = "pb-prof",
		.summary = "pb-prof: time each kernel of a model on the GPU (CUDA "
			   "events) or the CPU (JIT, wall time).",
#endif
		.description =
			"Input: k.ptx from pb-codegen (GPU), a .onnx model or MLIR of\n"
			"any stage (compiled with pb-codegen for the GPU, or JIT-run on\n"
			"the CPU with --device=cpu). Inputs are bound as in pb-run; the\n"
			"model runs once (checked with --check/--data), then --warmup\n"
			"times, then --repeat timed times. Prints one line per kernel:\n"
			"nodes, grid/block, median and min time, share, GB/s, GFLOP/s.\n",
		.opts = options,
		.flags = PB_TOOL_BINARY_INPUT,
		.run = run,
	};
	pb_prof_opts_init(&opts);
	int rc = pb_main(&tool, argc, argv);
	free(opts.run.inputs.v);
	free(opts.run.checks.v);
	return rc;
}
