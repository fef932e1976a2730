/* pb-smem: shared-memory and register promotion; see docs/pb-smem.md. */
#ifndef PB_SMEM_SMEM_H
#define PB_SMEM_SMEM_H

#include "ir/ir.h"

struct pb_smem_opts {
	int no_smem;	    /* --no-smem: stage nothing in shared memory */
	long stages;	    /* --stages: slots of the ring, 1-4 (0: chosen) */
	long k_tile;	    /* --k-tile: reduction iterations per tile (0: chosen) */
	int remarks;	    /* --remarks: why each access is staged or not */
	const char *report; /* --report FILE: JSON per staged nest */
};

/* Stage the operand tiles of the kernels of "m" (at the mma stage) in
 * shared memory, filled by cooperative copies (asynchronous, in a ring of
 * stages, on sm_80 and later) between barriers, keep each thread's
 * accumulators in private arrays, and mark "m" with the smem stage; a
 * module at the smem stage or later passes through. "opts" NULL: the
 * defaults. */
int pb_smem_run(struct pb_ctx *ctx, MlirModule m,
		const struct pb_smem_opts *opts);

/* Check "opts" before any work: --stages 1 to 4, --k-tile 1 or more. */
int pb_smem_check_opts(struct pb_ctx *ctx, const struct pb_smem_opts *opts);

#endif
