/* pb-mma: contractions onto tensor cores; see docs/pb-mma.md. */
#ifndef PB_MMA_MMA_H
#define PB_MMA_MMA_H

#include "ir/ir.h"

struct pb_mma_opts {
	int no_mma;  /* --no-mma: leave every contraction on CUDA cores */
	int remarks; /* --remarks: say why each nest is or is not mapped */
};

/* Map the contractions of "m" (at the tile stage) onto tensor cores: the
 * nests pb-tile left marked pb.mma become warp tiles of vector.contract
 * (or, with --no-mma or when their shape does not fit, are tiled for
 * CUDA cores as pb-tile would); the module is marked with the mma stage.
 * A module at the mma stage or later passes through. "opts" may be NULL
 * for the defaults. */
int pb_mma_run(struct pb_ctx *ctx, MlirModule m,
	       const struct pb_mma_opts *opts);

/* Is "nest" (an unmapped band at the fuse level) a contraction that
 * tensor cores can run on "t"? 1 or 0, with "*why" saying why not. */
struct pb_target;
int pb_mma_candidate(MlirOperation nest, const struct pb_target *t,
		     const char **why);

#endif
