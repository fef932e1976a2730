/* pb-smem: shared-memory and register promotion. */
#include "pipeline/pipeline.h"
#include "smem/smem.h"

static struct pb_smem_opts opts;

static const struct pb_opt options[] = {
	{"no-smem", PB_OPT_FLAG, &opts.no_smem, NULL,
	 "stage nothing in shared memory or registers"},
	{"stages", PB_OPT_INT, &opts.stages, "N",
	 "slots of the copy ring: 1 copies synchronously between barriers, "
	 "2-4 keep N-1 asynchronous copies in flight (sm_80 and later); "
	 "default: 3 where cp.async exists and shared memory allows, else 1"},
	{"k-tile", PB_OPT_INT, &opts.k_tile, "N",
	 "reduction iterations per staged tile (must divide the loop); "
	 "default: the largest of 16, 32, 8, 4, 2 that fits"},
	{"remarks", PB_OPT_FLAG, &opts.remarks, NULL,
	 "say for every read of a contraction why it is staged or not"},
	{"report", PB_OPT_STR, &opts.report, "FILE",
	 "write a JSON report: per staged nest the tiles, padding, copy "
	 "width, bank conflicts, stages and shared memory"},
	{NULL, 0, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
	return pb_pipeline_main(PB_STAGE_SMEM, options, &opts, argc, argv);
}
