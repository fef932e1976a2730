/* pb-mma's pieces (docs/pb-mma.md). */
#ifndef PB_MMA_INTERNAL_H
#define PB_MMA_INTERNAL_H

#include "kernel/kernel.h"
#include "mma/mma.h"

/* Replace the nest of "c" by its tensor-core form with tiles "s"
 * (rewrite.c). */
int pb_mma_rewrite(struct pb_ctx *ctx, const struct pb_kernel_contraction *c,
		   const struct pb_kernel_mma_tiles *s);

/* Replace attention nest "a" by its tensor-core form with tiles "s"
 * (attention.c). */
int pb_mma_attention(struct pb_ctx *ctx, const struct pb_kernel_attention *a,
		     const struct pb_kernel_attention_tiles *s);

#endif
