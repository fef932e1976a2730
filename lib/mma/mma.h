/* pb-mma: contractions onto tensor cores; see docs/pb-mma.md. */
#ifndef PB_MMA_MMA_H
#define PB_MMA_MMA_H

#include "ir/ir.h"

struct pb_mma_opts {
	int no_mma;  /* --no-mma: leave every contraction on CUDA cores */
	int remarks; /* --remarks: say why each nest is or is not mapped */
	const char *sizes; /* --sizes: kernel[k] -> mma[BM, BN, WM, WN] */
};

/* Map the contractions of "m" (at the tile stage) onto tensor cores: the
 * nests pb-tile left marked pb.mma become warp tiles of vector.contract;
 * with --no-mma they stay marked (the stage driver has pb-tile map them
 * for CUDA cores); the module is marked with the mma stage.
 * A module at the mma stage or later passes through. "opts" may be NULL
 * for the defaults. */
int pb_mma_run(struct pb_ctx *ctx, MlirModule m,
	       const struct pb_mma_opts *opts);

#endif
