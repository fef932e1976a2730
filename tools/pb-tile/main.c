/* pb-tile: multi-level tiling and mapping to blocks, warps and threads. */
#include "tile/tile.h"
#include "pipeline/pipeline.h"

static struct pb_tile_opts opts;

static const struct pb_opt options[] = {
	{"sizes", PB_OPT_STR, &opts.sizes, "MAP",
	 "sizes per kernel, an isl union map as ppcg reads it: '{ kernel[3] "
	 "-> tile[64, 128]; kernel[3] -> block[16, 32]; kernel[5] -> "
	 "reduce[256]; kernel[6] -> none[] }' (kernel_3 is kernel[3])"},
	{"dump-sizes", PB_OPT_FLAG, &opts.dump_sizes, NULL,
	 "print the sizes chosen for every kernel on stderr, in --sizes form"},
	{"report", PB_OPT_STR, &opts.report, "FILE",
	 "write a JSON report: per nest the sizes, occupancy, global bytes, "
	 "arithmetic intensity and predicted time"},
	{"remarks", PB_OPT_FLAG, &opts.remarks, NULL,
	 "say how each nest is mapped and the predicted time"},
	{"no-tile", PB_OPT_FLAG, &opts.no_tile, NULL,
	 "map nothing: leave every nest to pb-codegen's naive mapping"},
	{"no-mma", PB_OPT_FLAG, &opts.no_mma, NULL,
	 "tile contractions for CUDA cores too, instead of leaving those "
	 "tensor cores can run to pb-mma (marked pb.mma)"},
	{0},
};

int main(int argc, char **argv)
{
	return pb_pipeline_main(PB_STAGE_TILE, options, &opts, argc, argv);
}
