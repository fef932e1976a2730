/* pb-tile: see docs/pb-tile.md. */
#ifndef PB_TILE_TILE_H
#define PB_TILE_TILE_H

#include "ir/ir.h"

struct pb_tile_opts {
	const char *sizes;  /* --sizes: isl union map of per-kernel sizes */
	int dump_sizes;	    /* --dump-sizes: print the chosen sizes */
	const char *report; /* --report FILE (JSON) */
	int remarks;	    /* --remarks: say why each nest is mapped so */
	int no_tile;	    /* --no-tile: leave the mapping to pb-codegen */
	int no_mma;	    /* --no-mma: tile contractions for CUDA cores
			       here instead of leaving them to pb-mma */
};

/* Tile every kernel nest of "m" (at the fuse stage) and map it onto
 * blocks, warps and threads (docs/pb-tile.md); a module at the tile stage
 * or later passes through. "opts" may be NULL for the defaults. */
int pb_tile_run(struct pb_ctx *ctx, MlirModule m,
		const struct pb_tile_opts *opts);

/* Tile and map for CUDA cores, as pb-tile does by default, every nest of
 * "m" that is still marked pb.mma (a contraction pb-tile left to pb-mma
 * and pb-mma did not take: --no-mma). */
int pb_tile_map_marked(struct pb_ctx *ctx, MlirModule m);

#endif
