/* pb-mma: map contractions (matmul, conv, attention) to tensor cores. */
#include "mma/mma.h"
#include "pipeline/pipeline.h"

static struct pb_mma_opts opts;

static const struct pb_opt options[] = {
	{"no-mma", PB_OPT_FLAG, &opts.no_mma, NULL,
	 "leave every contraction on CUDA cores (pipelines/cuda-cores)"},
	{NULL, 0, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
	static struct pb_pipeline_tool stage = {PB_STAGE_MMA, &opts};
	static const struct pb_tool tool = {
		.name = "pb-mma",
		.summary = "pb-mma: map contractions (matmul, conv, attention) "
			   "to tensor cores (MLIR in, MLIR out).",
		.description =
			"NOT IMPLEMENTED YET: the transformation itself is future work.\n"
			"Today pb-mma runs the earlier stages its input still needs (with\n"
			"their defaults), verifies the module and passes it through,\n"
			"marking it with pb.stage = \"mma\".\n",
		.opts = options,
		.run = pb_pipeline_tool_run,
		.user = &stage,
	};
	return pb_main(&tool, argc, argv);
}
