/* pb-tile: multi-level tiling and GPU mapping.
 *
 * Not implemented yet: the stage brings its input to the fuse stage and
 * passes it through, so that pipelines and tests already have their final
 * shape. */
#include "fuse/fuse.h"
#include "tile/tile.h"

int pb_tile_run(struct pb_ctx *ctx, MlirModule m, const struct pb_tile_opts *o)
{
	(void)o;
	if (pb_ir_get_stage(m) < PB_STAGE_FUSE && pb_fuse_run(ctx, m, NULL))
		return PB_ERR;
	if (pb_ir_get_stage(m) < PB_STAGE_TILE)
		pb_ir_set_stage(m, PB_STAGE_TILE);
	return PB_OK;
}
