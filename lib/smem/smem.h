/* pb-smem: see docs/pb-smem.md. */
#ifndef PB_SMEM_SMEM_H
#define PB_SMEM_SMEM_H

#include "ir/ir.h"

struct pb_smem_opts {
	int unused;
};

/* Bring "m" to the smem stage, running the earlier stages with their
 * defaults first. */
int pb_smem_run(struct pb_ctx *ctx, MlirModule m,
		const struct pb_smem_opts *opts);

#endif
