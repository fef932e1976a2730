/* pb-fuse: bufferization, lowering to affine, outlining into kernels.
 * See docs/pb-fuse.md and docs/ir-contract.md. */
#ifndef PB_FUSE_FUSE_H
#define PB_FUSE_FUSE_H

#include "ir/ir.h"

struct pb_fuse_opts {
	int no_fusion; /* fusion itself is not implemented yet */
};

/* Bring "m" (linalg on tensors, pb-import's output) to the fuse stage:
 * bufferize, lower to affine loops, outline each loop nest into a
 * private func.func with the "pb.kernel" attribute called from @main.
 * A module already at the fuse stage or later is left alone. */
int pb_fuse_run(struct pb_ctx *ctx, MlirModule m,
		const struct pb_fuse_opts *opts);

#endif
