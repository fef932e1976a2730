/* pb-mma: see docs/pb-mma.md. */
#ifndef PB_MMA_MMA_H
#define PB_MMA_MMA_H

#include "ir/ir.h"

struct pb_mma_opts {
	int unused;
};

/* Bring "m" to the mma stage, running the earlier stages with their
 * defaults first. */
int pb_mma_run(struct pb_ctx *ctx, MlirModule m,
		const struct pb_mma_opts *opts);

#endif
