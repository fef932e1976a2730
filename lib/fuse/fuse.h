/* pb-fuse: bufferization, lowering to affine, polyhedral fusion on isl
 * dependences, intermediate contraction and outlining into kernels.
 * See docs/pb-fuse.md and docs/ir-contract.md. */
#ifndef PB_FUSE_FUSE_H
#define PB_FUSE_FUSE_H

#include "ir/ir.h"

/* Kinds of fusion (--fusion=...), see docs/pb-fuse.md. */
enum {
	PB_FUSE_PRODUCER = 1,  /* chains of elementwise/broadcast nests */
	PB_FUSE_EPILOGUE = 2,  /* consumers fused inside a reduction's nest */
	PB_FUSE_SIBLING = 4,   /* nests that only share an input */
	PB_FUSE_REDUCTION = 8, /* nests fused around reductions at row level */
	PB_FUSE_ALL = 15,      /* the default set: attention is asked for */
	PB_FUSE_ATTENTION = 16, /* matmul -> softmax -> matmul, online softmax */
};

struct pb_fuse_opts {
	int no_fusion;	      /* --no-fusion: one kernel per loop nest */
	const char *fusion;   /* --fusion=kinds (comma-separated), NULL: all */
	long min_parallel;    /* --min-parallelism, 0: from the target */
	long max_local;	      /* --max-local-bytes, 0: default */
	double max_redundancy; /* --max-redundancy, 0: default (1) */
	const char *report;   /* --report FILE (JSON) */
	int remarks;	      /* --remarks: say why fusions were (not) done */
	int upstream;	      /* --upstream-fusion: MLIR's affine-loop-fusion */
	int attention;	      /* --fuse-attention: online-softmax attention */
	int no_concat;	      /* --no-concat-in-place: concat by copies */
};

/* Bring "m" (linalg on tensors, pb-import's output) to the fuse stage:
 * bufferize, lower to affine loops, fuse loop nests into kernels on isl
 * dependences, contract the buffers that fusion made local, and outline
 * each kernel into a private func.func with the "pb.kernel" attribute
 * called from @main. A module already at the fuse stage or later is left
 * alone. */
/* "opts" may be NULL for the defaults. */
int pb_fuse_run(struct pb_ctx *ctx, MlirModule m,
		const struct pb_fuse_opts *opts);

#endif
