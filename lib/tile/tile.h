/* pb-tile: see docs/pb-tile.md. */
#ifndef PB_TILE_TILE_H
#define PB_TILE_TILE_H

#include "ir/ir.h"

struct pb_tile_opts {
	int unused;
};

/* Bring "m" to the tile stage, running the earlier stages with their
 * defaults first. */
int pb_tile_run(struct pb_ctx *ctx, MlirModule m,
		const struct pb_tile_opts *opts);

#endif
