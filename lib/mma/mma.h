/* pb-mma: contractions onto tensor cores; see docs/pb-mma.md. */
#ifndef PB_MMA_MMA_H
#define PB_MMA_MMA_H

#include "ir/ir.h"

struct pb_mma_opts {
	int no_mma; /* --no-mma: leave every contraction on CUDA cores */
};

/* Map the contractions of "m" (at the tile stage) onto tensor cores and
 * mark it with the mma stage; a module at the mma stage or later passes
 * through. Not implemented yet: no contraction is mapped, with or
 * without "opts" (NULL: the defaults). */
int pb_mma_run(struct pb_ctx *ctx, MlirModule m,
	       const struct pb_mma_opts *opts);

#endif
