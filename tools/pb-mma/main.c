/* pb-mma: map contractions (matmul, conv, attention) to tensor cores. */
#include "mma/mma.h"
#include "pipeline/pipeline.h"

static struct pb_mma_opts opts;

static const struct pb_opt options[] = {
	{"no-mma", PB_OPT_FLAG, &opts.no_mma, NULL,
	 "leave every contraction on CUDA cores (pipelines/cuda-cores)"},
	{"sizes", PB_OPT_STR, &opts.sizes, "MAP",
	 "tiles per kernel, an isl union map as pb-tile's --sizes: '{ "
	 "kernel[0] -> mma[128, 128, 64, 64] }' (block rows, block columns, "
	 "warp rows, warp columns of C; a convolution's fifth: its image "
	 "rows a block)"},
	{"remarks", PB_OPT_FLAG, &opts.remarks, NULL,
	 "say why each contraction is or is not put on tensor cores"},
	{NULL, 0, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
	return pb_pipeline_main(PB_STAGE_MMA, options, &opts, argc, argv);
}
