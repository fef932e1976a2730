/* pb-smem: shared-memory and register promotion.
 *
 * Not implemented yet: the stage brings its input to the mma stage and
 * passes it through. */
#include "mma/mma.h"
#include "smem/smem.h"

int pb_smem_run(struct pb_ctx *ctx, MlirModule m, const struct pb_smem_opts *o)
{
	(void)o;
	if (pb_ir_get_stage(m) < PB_STAGE_MMA && pb_mma_run(ctx, m, NULL))
		return PB_ERR;
	if (pb_ir_get_stage(m) < PB_STAGE_SMEM)
		pb_ir_set_stage(m, PB_STAGE_SMEM);
	return PB_OK;
}
