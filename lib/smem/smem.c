/* pb-smem: shared-memory and register promotion (docs/pb-smem.md). */
#include "smem/internal.h"

int pb_smem_run(struct pb_ctx *ctx, MlirModule m, const struct pb_smem_opts *o)
{
	static const struct pb_smem_opts defaults;
	if (!o)
		o = &defaults;
	if (pb_ir_get_stage(m) >= PB_STAGE_SMEM)
		return PB_OK;
	if (!o->no_smem &&
	    (pb_smem_promote(ctx, m, o) || pb_smem_unguard(m) ||
	     pb_smem_stage_mma(ctx, m, o) ||
	     pb_smem_stage_attention(ctx, m, o)))
		return PB_ERR;
	pb_ir_advance_stage(m, PB_STAGE_SMEM);
	return PB_OK;
}

int pb_smem_check_opts(struct pb_ctx *ctx, const struct pb_smem_opts *o)
{
	if (o->stages < 0 || o->stages > 4)
		return pb_error_in(ctx, NULL, "--stages=%ld: expected 1 to 4",
				   o->stages);
	if (o->k_tile < 0)
		return pb_error_in(ctx, NULL, "--k-tile=%ld: expected a positive "
				   "number", o->k_tile);
	return PB_OK;
}
