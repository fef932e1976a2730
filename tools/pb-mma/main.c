/* pb-mma: map contractions (matmul, conv, attention) to tensor cores. */
#include "mma/mma.h"
#include "pipeline/pipeline.h"

static struct pb_mma_opts opts;

static const struct pb_opt options[] = {
	{"no-mma", PB_OPT_FLAG, &opts.no_mma, NULL,
	 "leave every contraction on CUDA cores (pipelines/cuda-cores)"},
	{"remarks", PB_OPT_FLAG, &opts.remarks, NULL,
	 "say why each contraction is or is not put on tensor cores"},
	{NULL, 0, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
	return pb_pipeline_main(PB_STAGE_MMA, options, &opts, argc, argv);
}
