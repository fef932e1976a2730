/* pb-prof: time each kernel of a model on the GPU (CUDA events) or the CPU
 * (JIT, wall time); see docs/pb-prof.md. */
#include <stdlib.h>

#include "runtime/runtime.h"

static struct pb_prof_opts opts;

static struct pb_opt run_options[PB_RUNTIME_NOPTS + 1];

static const struct pb_opt options[] = {
	{"", PB_OPT_GROUP, run_options, NULL, NULL},
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
	{"roofline", PB_OPT_STR, &opts.roofline, "FILE.svg",
	 "draw the kernels against the target's roofs as SVG"},
#ifndef PB_NO_MLIR
	{"static", PB_OPT_FLAG, &opts.static_, NULL,
	 "no GPU: ptxas's registers/spills/smem, the hottest loop's SASS "
	 "mix (nvdisasm), occupancy, predicted time"},
#endif
	{NULL, 0, NULL, NULL, NULL},
};

static int run(struct pb_ctx *ctx, const struct pb_input *in,
	       struct pb_buf *out, void *user)
{
	(void)user;
	return pb_prof_main(ctx, in, &opts, out);
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
		.flags = PB_TOOL_BINARY_INPUT | PB_TOOL_REPORT,
		.run = run,
	};
	pb_prof_opts_init(&opts);
	pb_runtime_opts_table(&opts.run, run_options);
	int rc = pb_main(&tool, argc, argv);
	pb_runtime_opts_free(&opts.run);
	return rc;
}
