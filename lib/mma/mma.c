/* pb-mma: contractions onto tensor cores.
 *
 * Not implemented yet: the stage brings its input to the tile stage and
 * passes it through. */
#include "mma/mma.h"
#include "tile/tile.h"

int pb_mma_run(struct pb_ctx *ctx, MlirModule m, const struct pb_mma_opts *o)
{
	(void)o;
	if (pb_ir_get_stage(m) < PB_STAGE_TILE && pb_tile_run(ctx, m, NULL))
		return PB_ERR;
	if (pb_ir_get_stage(m) < PB_STAGE_MMA)
		pb_ir_set_stage(m, PB_STAGE_MMA);
	return PB_OK;
}
