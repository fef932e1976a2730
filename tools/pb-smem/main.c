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
	static struct pb_pipeline_tool stage = {PB_STAGE_SMEM, &opts};
	static const struct pb_tool tool = {
		.name = "pb-smem",
		.summary = "pb-smem: shared-memory and register promotion "
			   "(MLIR in, MLIR out).",
		.description =
			"NOT IMPLEMENTED YET: the transformation itself is future work.\n"
			"Today pb-smem runs the earlier stages its input still needs (with\n"
			"their defaults), verifies the module and passes it through,\n"
			"marking it with pb.stage = \"smem\".\n",
		.opts = options,
		.run = pb_pipeline_tool_run,
		.user = &stage,
	};
	return pb_main(&tool, argc, argv);
}
