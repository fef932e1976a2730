/* pb-smem: shared-memory and register promotion. */
#include "pipeline/pipeline.h"
#include "smem/smem.h"

static struct pb_smem_opts opts;

static const struct pb_opt options[] = {
	{"no-smem", PB_OPT_FLAG, &opts.no_smem, NULL,
	 "stage nothing in shared memory or registers"},
	{NULL, 0, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
	return pb_pipeline_main(PB_STAGE_SMEM, options, &opts, argc, argv);
}
