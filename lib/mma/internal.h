/* pb-mma's pieces (docs/pb-mma.md). */
#ifndef PB_MMA_INTERNAL_H
#define PB_MMA_INTERNAL_H

#include "kernel/kernel.h"
#include "mma/mma.h"

/* Replace the nest of "c" by its tensor-core form with tiles "s"
 * (rewrite.c). */
int pb_mma_rewrite(struct pb_ctx *ctx, const struct pb_kernel_contraction *c,
		   const struct pb_kernel_mma_tiles *s);

/* The constant subscripts of access "x" as index constants
 * "%<cpre><r>", one line each (rewrite.c). */
void pb_mma_cst_text(struct pb_buf *t, const struct pb_kernel_access *x,
		     const char *cpre);

/* The text of the block loop over band "b" (counters "%<pre><d>", but
 * "%<pre>h" for dimension "alt" when not -1): from 0 by "tile[d]" to the
 * extent rounded up to it, then " {" (rewrite.c; its closing brace and
 * pb.map are the caller's). */
void pb_mma_block_loop_text(struct pb_buf *t, const char *pre,
			    const struct pb_kernel_band *b, const int64_t *tile,
			    int alt);

/* Store the weights B of convolution "c" [n][window..][k] (wpack.c):
 * when B is a weight of @main that only kernels read, ONNX's [o][c][r][s]
 * transposed once at load (pb.perm on @main's argument), every argument
 * it reaches retyped and every read of it permuted. 1 when done (the
 * permutation into "perm", B's rank entries: dimension i of the new
 * buffer is dimension perm[i] of the old; "c" must then be read again);
 * 0 when not, with "*why" (NULL: B is no convolution's weights stored
 * otherwise). */
int pb_mma_pack_weights(const struct pb_kernel_contraction *c, int *perm,
			const char **why);

/* Replace attention nest "a" by its tensor-core form with tiles "s"
 * (attention.c). */
int pb_mma_attention(struct pb_ctx *ctx, const struct pb_kernel_attention *a,
		     const struct pb_kernel_attention_tiles *s);

#endif
