/* Internals of pb-tile shared by lib/tile's files. */
#ifndef PB_TILE_INTERNAL_H
#define PB_TILE_INTERNAL_H

#include <stdint.h>

#include "target/target.h"
#include "tile/tile.h"

#define PB_TILE_MAXD 8

/* The band of a nest: the perfectly nested affine.parallel loops with
 * constant bounds at its top (pb-fuse writes one loop per dimension; an
 * n-d affine.parallel counts as n loops), outermost first. These loops
 * carry no dependence, so any tiling and mapping of them is legal. */
struct pb_tile_band {
	MlirOperation root;  /* the nest: the outermost loop */
	MlirOperation inner; /* the innermost loop of the band */
	int n;
	int64_t lb[PB_TILE_MAXD], step[PB_TILE_MAXD];
	int64_t extent[PB_TILE_MAXD]; /* trip counts */
	MlirValue iv[PB_TILE_MAXD];
};

/* The band at the top of "op" into "b"; 0 when "op" starts none (b->n is
 * 0), 1 otherwise. Loops already mapped (pb.map) start no band. */
int pb_tile_band_of(MlirOperation op, struct pb_tile_band *b);

/* The body of the innermost loop of the band. */
MlirBlock pb_tile_band_body(const struct pb_tile_band *b);

/* reduce.c: block-level mapping of the work below a band.
 *
 * A nest whose band is small and whose body does much work in inner loops
 * (a softmax or LayerNorm row, a global pooling window) runs one block per
 * band point, the block's threads sharing the body: every top-level
 * operation of the band's body is a parallel loop nest (its outermost loop
 * distributed cyclically over the threads), a reduction nest (per-thread
 * partials, then a tree in shared memory) or scalar work (one thread);
 * buffers private to a band point move to workgroup memory; gpu.barrier
 * separates dependent steps. */

/* Does the body of "b" fit the block-level mapping? Returns 1 when it
 * does, with the number of inner-loop iterations per band point in "*work"
 * and the workgroup bytes the mapping needs with "threads" threads in
 * "*smem"; 0 when it does not (nothing is reported). */
int pb_tile_reduce_match(const struct pb_tile_band *b, int threads,
			 int64_t *work, int64_t *smem);
/* Rewrite the nest of "b" (which pb_tile_reduce_match accepted) into the
 * block-level mapping with "threads" threads per block (a power of 2,
 * 32..1024). Returns PB_OK or PB_ERR (reported through "ctx"). */
int pb_tile_reduce_apply(struct pb_ctx *ctx, const struct pb_tile_band *b,
			 int threads);

#endif
