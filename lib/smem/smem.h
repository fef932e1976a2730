/* pb-smem: shared-memory and register promotion; see docs/pb-smem.md. */
#ifndef PB_SMEM_SMEM_H
#define PB_SMEM_SMEM_H

#include "ir/ir.h"

struct pb_smem_opts {
	int no_smem; /* --no-smem: stage nothing in shared memory */
};

/* Promote the operand tiles of "m" (at the mma stage) to shared memory
 * and registers and mark it with the smem stage; a module at the smem
 * stage or later passes through. Not implemented yet: nothing is
 * promoted, with or without "opts" (NULL: the defaults). */
int pb_smem_run(struct pb_ctx *ctx, MlirModule m,
		const struct pb_smem_opts *opts);

#endif
