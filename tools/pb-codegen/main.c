/* pb-codegen: lower to PTX with a host launch plan (MLIR in, PTX out). */
#include "codegen/codegen.h"
#include "pipeline/pipeline.h"

static struct pb_codegen_opts opts = {.opt_level = -1};

static const struct pb_opt options[] = {
	{"emit", PB_OPT_STR, &opts.emit, "KIND",
	 "ptx (default): PTX with the plan header; mlir: the mapped "
	 "host+device module"},
	{"plan", PB_OPT_STR, &opts.plan, "FILE",
	 "also write the launch plan (JSON) to FILE"},
	{"no-memory-plan", PB_OPT_FLAG, &opts.no_memory_plan, NULL,
	 "one allocation per intermediate buffer instead of an arena "
	 "planned by liveness"},
	{"ptxas-report", PB_OPT_FLAG, &opts.ptxas_report, NULL,
	 "run ptxas -v; print registers, spills, smem per kernel to stderr"},
	{"backend", PB_OPT_STR, &opts.backend, "NAME",
	 "ptx (default), or tile: CUDA Tile IR assembled by tileiras into "
	 "a cubin (emit tile, tileirbc or mlir)"},
	{"tileiras", PB_OPT_STR, &opts.tileiras, "PATH",
	 "the tileiras to run (default: $PB_TILEIRAS, PATH, build/venv-tile)"},
	{"opt-level", PB_OPT_INT, &opts.opt_level, "N",
	 "tileiras's optimization level, 0 to 3 (default 3)"},
	{"tile-tma", PB_OPT_FLAG, &opts.tile_tma, NULL,
	 "buffers assumed aligned on sm_90 too: TMA loads and stores"},
	{"no-dedup", PB_OPT_FLAG, &opts.no_dedup, NULL,
	 "clean up and compile every kernel, also those identical to an "
	 "earlier one"},
	{"exact-dedup", PB_OPT_FLAG, &opts.exact_dedup, NULL,
	 "compile once only kernels identical but for their names, not "
	 "those that differ in buffer sizes no address depends on or in "
	 "their grids"},
	{"index32", PB_OPT_FLAG, &opts.index32, NULL,
	 "32-bit index arithmetic in the kernels where every buffer has "
	 "fewer than 2^30 elements"},
	{"jobs", PB_OPT_INT, &opts.jobs, "N",
	 "compile the kernels on N threads (default: one per CPU)"},
	{NULL, 0, NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
	return pb_pipeline_main(PB_STAGE_CODEGEN, options, &opts, argc, argv);
}
