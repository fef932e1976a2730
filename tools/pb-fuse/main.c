/* pb-fuse: bufferize, lower to affine, fuse loop nests on isl dependences,
 * contract intermediate buffers, outline kernels. */
#include "fuse/fuse.h"
#include "pipeline/pipeline.h"

static struct pb_fuse_opts opts;

static const struct pb_opt options[] = {
	{"no-fusion", PB_OPT_FLAG, &opts.no_fusion, NULL,
	 "one kernel per loop nest"},
	{"fusion", PB_OPT_STR, &opts.fusion, "KINDS",
	 "fusion kinds to do, comma-separated: producer, epilogue, sibling,\n"
	 "reduction, attention (default: all but attention)"},
	{"min-parallelism", PB_OPT_INT, &opts.min_parallel, "N",
	 "never leave a fused kernel with fewer outer parallel iterations\n"
	 "than min(N, those of the nests fused) (default: no floor, the\n"
	 "cost model decides)"},
	{"max-local-bytes", PB_OPT_INT, &opts.max_local, "N",
	 "largest per-iteration footprint a buffer may be contracted to\n"
	 "(default 16384)"},
	{"max-redundancy", PB_OPT_DOUBLE, &opts.max_redundancy, "R",
	 "inline an elementwise producer into its readers when they read\n"
	 "each of its elements at most R times in all (default 1: no value\n"
	 "computed twice)"},
	{"report", PB_OPT_STR, &opts.report, "FILE",
	 "write a JSON report: per kernel its ONNX nodes, loops and global\n"
	 "bytes, and the totals before and after fusion"},
	{"remarks", PB_OPT_FLAG, &opts.remarks, NULL,
	 "say on stderr which nests were fused and why others were not"},
	{"upstream-fusion", PB_OPT_FLAG, &opts.upstream, NULL,
	 "fuse with MLIR's affine-loop-fusion instead (the baseline)"},
	{"fuse-attention", PB_OPT_FLAG, &opts.attention, NULL,
	 "fuse matmul -> softmax -> matmul into one nest with an online\n"
	 "softmax (off by default)"},
	{"no-concat-in-place", PB_OPT_FLAG, &opts.no_concat, NULL,
	 "concatenate by copying each operand into the result, instead of\n"
	 "letting the producers write into their slices"},
	{NULL, 0, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
	return pb_pipeline_main(PB_STAGE_FUSE, options, &opts, argc, argv);
}
