/* Internals of pb-tile shared by lib/tile's files. */
#ifndef PB_TILE_INTERNAL_H
#define PB_TILE_INTERNAL_H

#include <stdint.h>

#include <isl/ctx.h>

#include "kernel/kernel.h"
#include "target/target.h"
#include "tile/tile.h"

/* The band dimensions pb-tile keeps: the kernel model's (the cost
 * model's access evaluator, reduce.c and tile.c still spell it so). */
#define PB_TILE_MAXD PB_KERNEL_MAXD

/* How one nest is mapped: chosen by the cost model (cost.c) or given by
 * --sizes (sizes.c), applied by map.c or reduce.c. */
enum pb_tile_mode {
	PB_TILE_NONE,	/* left to pb-codegen's naive mapping */
	PB_TILE_TILE,	/* block, warp and thread tiles of the band */
	PB_TILE_REDUCE, /* one block per band point (reduce.c) */
};
struct pb_tile_choice {
	enum pb_tile_mode mode;
	int n;				/* band dimensions */
	int64_t tile[PB_TILE_MAXD];	/* TILE: block tile, in iterations */
	int64_t block[PB_TILE_MAXD];	/* TILE: threads per dimension */
	int64_t lanes[PB_TILE_MAXD];	/* TILE: threads of a warp per dim */
	int jam;			/* TILE: thread tile points jammed
					   into the inner loops (map.c) */
	unsigned contig;		/* TILE: bit d: the thread's points of
					   dimension d are contiguous (point
					   t * R + r of the block's tile)
					   instead of B apart (t + r * B) */
	int linear;			/* TILE: the band linearised first:
					   n = 1, tile[0] points of
					   block[0] threads (map.c) */
	int nk;				/* TILE: loops strip-mined below */
	int64_t ktile[PB_TILE_MAXD];	/* the band (first inner nest) */
	int threads;			/* REDUCE: threads per block */
	/* TILE: the staging pb-smem will do, priced by the cost model: the
	 * k-tile of the reduction loop and the slots of the ring (0: none
	 * planned; when given by --sizes' smem[KT, S], forced; skt -1:
	 * smem[], do not stage) */
	int64_t skt;
	int sst, sgiven;
	/* the cost model's view (report.c) */
	double predicted_s, occupancy, waves;
	double compute_s;		/* of predicted_s: the issue-bound
					   part (memory-bound nests hide it) */
	double memory_s;		/* of predicted_s: the bytes' part */
	double lds_per_fma;		/* TILE, staged: the shared loads a
					   point issues per FMA once its
					   thread tile's points share them
					   (why a tile won, --remarks) */
	int64_t grid, global_bytes, flops, smem;
	int64_t staged_bytes;		/* the ring's, in smem */
	int regs;
};

/* The number of threads of a block of "c". */
int64_t pb_tile_threads(const struct pb_tile_choice *c);

/* cost.c: the analytical model. Fill "c" with the best mapping of "b"
 * on "t" among those "allow" permits (a mask of 1 << mode). */
void pb_tile_choose(const struct pb_target *t, const struct pb_kernel_band *b,
		    unsigned allow, struct pb_tile_choice *c);
/* Fill the cost-model fields of "c" (already decided, with "c->smem" set
 * for a reduction) for "b" on "t". */
void pb_tile_predict(const struct pb_target *t, const struct pb_kernel_band *b,
		     struct pb_tile_choice *c);
/* Complete "c" from the sizes given for it ("c->tile" and "c->block"
 * as parsed): derive lanes; an error (reported at "b") when they do not
 * fit the band or the target. */
int pb_tile_complete(struct pb_ctx *ctx, const struct pb_target *t,
		     const struct pb_kernel_band *b, struct pb_tile_choice *c);

/* map.c: can the thread tile of "b" be jammed into its inner loops? The
 * body must split into straight-line runs and affine.for nests with
 * constant bounds that share no SSA value, with private buffers only
 * accessed by affine.load/store, and hold at least one loop. */
int pb_tile_jam_ok(const struct pb_kernel_band *b);
/* promote.c: keep each element a loop nest of the band's body
 * accumulates into (the same subscripts in every iteration, no possible
 * alias in the nest) in a memref.alloca of the body, loaded before the
 * nest and stored after it. "module" holds the calls of kernel "func"
 * that show which of its arguments are distinct buffers. */
int pb_tile_promote(struct pb_ctx *ctx, MlirOperation module,
		    MlirOperation func, const struct pb_kernel_band *b);

/* map.c: the depth of the perfect loop nest that "c->ktile" strip-mines
 * (the first affine.for nest of the band's body), 0 when none. */
int pb_tile_inner_depth(const struct pb_kernel_band *b);
/* map.c: rewrite the nest of "b" as "c" (mode PB_TILE_TILE) says; with
 * "c->linear", the band is first collapsed into one loop over its points
 * in row-major order (the point's indices are its floordiv/mod), then
 * tiled as a 1-d band. */
int pb_tile_apply(struct pb_ctx *ctx, const struct pb_kernel_band *b,
		  const struct pb_tile_choice *c);

/* sizes.c: --dump-sizes (lib/kernel/sizes.c reads --sizes). */
/* Append the sizes of "c" for nest "nest" of kernel "k" to "out"
 * ("kernel[k] -> ..." or "kernel[k, nest] -> ...", entries separated by
 * "; "). */
void pb_tile_sizes_print(struct pb_buf *out, int k, int nest,
			 const struct pb_tile_choice *c);

/* report.c: the --report JSON. */
struct pb_tile_report;
struct pb_tile_report *pb_tile_report_new(const struct pb_target *t);
/* The report's entry of contraction "op" pb-tile leaves to pb-mma: the
 * tiles pb-mma will choose and their predicted time on tensor cores, its
 * f32 operands at precision "p". */
void pb_tile_report_add_mma(struct pb_tile_report *r, MlirOperation func,
			    int k, int nest, MlirOperation op,
			    enum pb_precision p);
void pb_tile_report_add(struct pb_tile_report *r, MlirOperation func, int k,
			int nest, const struct pb_kernel_band *b,
			const struct pb_tile_choice *c);
int pb_tile_report_write(struct pb_ctx *ctx, struct pb_tile_report *r,
			 const char *path);
void pb_tile_report_free(struct pb_tile_report *r);

/* reduce.c: block-level mapping of the work below a band.
 *
 * A nest whose band is small and whose body does much work in inner loops
 * (a softmax or LayerNorm row, a global pooling window) runs one block per
 * band point, the block's threads sharing the body: every top-level
 * operation of the band's body is a parallel loop nest (its outermost loop
 * distributed cyclically over the threads), a reduction nest (per-thread
 * partials, then a tree in shared memory) or scalar work (one thread);
 * buffers private to a band point move to workgroup memory; gpu.barrier
 * separates dependent steps. */

/* Does the body of "b" fit the block-level mapping? Returns 1 when it
 * does, with the number of inner-loop iterations per band point in "*work"
 * and the workgroup bytes the mapping needs with "threads" threads in
 * "*smem"; 0 when it does not (nothing is reported). */
int pb_tile_reduce_match(const struct pb_kernel_band *b, int threads,
			 int64_t *work, int64_t *smem);
/* The smallest power of 2 not below "n", or 2^62 when "n" is larger (so
 * that a huge trip count cannot overflow it) (reduce_match.c). */
int64_t pb_tile_pow2ceil(int64_t n);
/* Rewrite the nest of "b" (which pb_tile_reduce_match accepted) into the
 * block-level mapping with "threads" threads per block (a power of 2,
 * 32..1024). Returns PB_OK or PB_ERR (reported through "ctx"). */
int pb_tile_reduce_apply(struct pb_ctx *ctx, const struct pb_kernel_band *b,
			 int threads);

/* reduce_match.c: the plan of the block-level mapping, shared with the
 * rewrite in reduce.c. */

#define PB_TILE_MAXACC 8 /* accumulators of one reduction nest */

/* The identity of a reduction operation. */
enum pb_tile_ident {
	PB_TILE_ID_ZERO,
	PB_TILE_ID_ONE,
	PB_TILE_ID_NEG_INF,
	PB_TILE_ID_POS_INF,
	PB_TILE_ID_SMIN,
	PB_TILE_ID_SMAX,
	PB_TILE_ID_ONES,
};

/* A reduction operation: associative and commutative, with an identity. */
struct pb_tile_red_op {
	const char *name;
	int is_float;
	enum pb_tile_ident id;
};

/* What a top-level operation of the band's body becomes. */
enum pb_tile_step_kind {
	PB_TILE_STEP_KEEP,   /* block-level: pure arithmetic, read-only loads */
	PB_TILE_STEP_ALLOCA, /* private buffer: moves to workgroup memory */
	PB_TILE_STEP_SCALAR, /* one thread */
	PB_TILE_STEP_PAR,    /* parallel nest */
	PB_TILE_STEP_RED,    /* reduction nest */
};

/* An accumulator of a reduction nest: the chain load -> comb -> store. */
struct pb_tile_acc {
	MlirOperation load, comb, store;
	const struct pb_tile_red_op *r;
	MlirType type;
};

/* The plan for one top-level operation "op". */
struct pb_tile_step {
	enum pb_tile_step_kind kind;
	MlirOperation op;
	int run; /* SCALAR: the index of its run of scalar operations */
	/* PAR, RED: the "d" outermost loops are distributed */
	int d;
	MlirOperation loop[PB_TILE_MAXD];
	int64_t lb[PB_TILE_MAXD], step[PB_TILE_MAXD], trip[PB_TILE_MAXD];
	int64_t n;     /* iterations of the distributed loops */
	int64_t nthr;  /* threads of the step */
	int nacc;      /* RED */
	struct pb_tile_acc acc[PB_TILE_MAXACC];
};

/* The plan for a whole band body. */
struct pb_tile_plan {
	int n;
	struct pb_tile_step *s;
	int64_t work, smem;
};

/* Plan the block-level mapping of the body of "b" with "threads" threads
 * into "p", proving with isl in "ctx"; 1 when it applies (see
 * pb_tile_reduce_match), 0 with "p" empty otherwise. */
int pb_tile_reduce_plan(isl_ctx *ctx, const struct pb_kernel_band *b,
			int threads, struct pb_tile_plan *p);
/* Free the steps of "p". */
void pb_tile_reduce_plan_free(struct pb_tile_plan *p);

#endif
