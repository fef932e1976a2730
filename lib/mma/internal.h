/* pb-mma's pieces (docs/pb-mma.md). */
#ifndef PB_MMA_INTERNAL_H
#define PB_MMA_INTERNAL_H

#include "kernel/kernel.h"
#include "mma/mma.h"
#include "target/target.h"

/* The tensor-core instruction shape pb-mma writes its warp tiles in:
 * mma.sync m16n8k16 (f16 and bf16 operands, f32 accumulation). A warp
 * tile is a grid of FRAG_M x FRAG_N accumulator fragments. */
#define PB_MMA_FRAG_M 16
#define PB_MMA_FRAG_N 8
#define PB_MMA_FRAG_K 16

/* What an operand's subscript "k" (of a load or store in a contraction
 * nest) is: band dimension "dim" (>= 0), the reduction loop's counter
 * (PB_MMA_SUB_K), or the constant "cst" (PB_MMA_SUB_CST). */
#define PB_MMA_SUB_K (-1)
#define PB_MMA_SUB_CST (-2)
#define PB_MMA_MAXR 8

struct pb_mma_access {
	MlirOperation op;	/* affine.load or affine.store */
	MlirValue mem;
	int rank;
	int sub[PB_MMA_MAXR];
	int64_t cst[PB_MMA_MAXR];
};

/* A contraction nest at the fuse level (unmapped, pb-fuse's form):
 *
 *   band (dims 0 .. n-1) {
 *     acc = memref.alloca() : memref<f32>;  acc[] = 0
 *     affine.for k = 0 to K { acc[] += ext(A[..]) * ext(B[..]) }
 *     post: pure operations on acc[] and on reads indexed by the band,
 *           ending in stores indexed by the band
 *   }
 *
 * with A subscripted by the rows "m" of C, batch dimensions and k; B by
 * k, batch dimensions and the columns "n" of C (docs/pb-mma.md). */
struct pb_mma_contraction {
	struct pb_kernel_band b;
	int m, n;		/* band dimensions of C's rows and columns */
	MlirOperation kloop;
	int64_t k;		/* the reduction's trip count */
	MlirOperation alloca;	/* the accumulator */
	struct pb_mma_access a, b_;	/* the operands */
	MlirType elt;		/* their element type: f16 or bf16 */
	MlirOperation post[64];	/* the operations after the k loop */
	int npost;
};

/* Is "nest" a contraction that tensor cores can run? 1 with "c" filled;
 * 0 with "*why" saying why not (a static string). */
int pb_mma_match(MlirOperation nest, struct pb_mma_contraction *c,
		 const char **why);

/* The subscripts of affine.load/affine.store "op" in terms of the band
 * of "c" and its reduction loop into "acc"; 0 when one is neither a
 * band dimension, the reduction counter nor a constant. */
int pb_mma_access_of(const struct pb_mma_contraction *c, MlirOperation op,
		     struct pb_mma_access *acc);

/* The warp-tile mapping of a contraction: block tile bm x bn (of C's
 * rows and columns), warp tile wm x wn. */
struct pb_mma_tiles {
	int64_t bm, bn, wm, wn;
};
/* Choose the tiles of "c" on "t"; 0 when no tile fits its shape (with
 * "*why"). */
int pb_mma_choose(const struct pb_target *t,
		  const struct pb_mma_contraction *c, struct pb_mma_tiles *s,
		  const char **why);

/* Replace the nest of "c" by its tensor-core form with tiles "s"
 * (rewrite.c). */
int pb_mma_rewrite(struct pb_ctx *ctx, const struct pb_mma_contraction *c,
		   const struct pb_mma_tiles *s);

#endif
