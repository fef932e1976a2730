/* pb-smem: shared-memory and register promotion.
 *
 * Not implemented yet: the stage marks its input and passes it through,
 * so nothing is staged (what --no-smem asks for). */
#include "smem/smem.h"

int pb_smem_run(struct pb_ctx *ctx, MlirModule m, const struct pb_smem_opts *o)
{
	(void)ctx;
	(void)o;
	pb_ir_advance_stage(m, PB_STAGE_SMEM);
	return PB_OK;
}
