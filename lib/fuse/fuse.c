/* pb-fuse (placeholder until the stage lands). */
#include "fuse/fuse.h"

int pb_fuse_run(struct pb_ctx *ctx, MlirModule m, const struct pb_fuse_opts *o)
{
	(void)o;
	if (pb_ir_get_stage(m) >= PB_STAGE_FUSE)
		return PB_OK;
	pb_error(ctx, "pb-fuse: not implemented yet");
	return PB_ERR;
}
