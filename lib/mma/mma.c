/* pb-mma: contractions onto tensor cores.
 *
 * Not implemented yet: the stage marks its input and passes it through,
 * so every contraction stays on CUDA cores (what --no-mma asks for). */
#include "mma/mma.h"

int pb_mma_run(struct pb_ctx *ctx, MlirModule m, const struct pb_mma_opts *o)
{
	(void)ctx;
	(void)o;
	pb_ir_advance_stage(m, PB_STAGE_MMA);
	return PB_OK;
}
