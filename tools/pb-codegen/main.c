/* pb-codegen: lower to PTX with a host launch plan (MLIR in, PTX out). */
#include "codegen/codegen.h"
#include "pipeline/pipeline.h"

static struct pb_codegen_opts opts;

static const struct pb_opt options[] = {
	{"emit", PB_OPT_STR, &opts.emit, "KIND",
	 "ptx (default): PTX with the plan header; mlir: the mapped "
	 "host+device module"},
	{"plan", PB_OPT_STR, &opts.plan, "FILE",
	 "also write the launch plan (JSON) to FILE"},
	{"ptxas-report", PB_OPT_FLAG, &opts.ptxas_report, NULL,
	 "run ptxas -v; print registers, spills, smem per kernel to stderr"},
	{NULL, 0, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
	static struct pb_pipeline_tool stage = {PB_STAGE_CODEGEN, &opts};
	static const struct pb_tool tool = {
		.name = "pb-codegen",
		.summary = "pb-codegen: lower to PTX with a host launch plan "
			   "(MLIR in, PTX out).",
		.description =
			"Input: a pb module at any stage (earlier stages run first with\n"
			"their defaults). Output: one self-contained PTX module for --arch\n"
			"whose comment header ('// pb-plan-begin' ... '// pb-plan-end')\n"
			"holds the launch plan as JSON: buffers, and kernel launches in\n"
			"order with grid, block and arguments (docs/pb-codegen.md).\n",
		.opts = options,
		.run = pb_pipeline_tool_run,
		.user = &stage,
	};
	return pb_main(&tool, argc, argv);
}
