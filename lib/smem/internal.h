/* pb-smem's pieces (docs/pb-smem.md). */
#ifndef PB_SMEM_INTERNAL_H
#define PB_SMEM_INTERNAL_H

#include <stdint.h>

#include "kernel/kernel.h"
#include "poly/poly.h"
#include "smem/smem.h"

/* The bank-conflict degree of a warp's shared-memory access whose lane l
 * (0 <= l < nlanes) touches the "width" words from word[l] on: the most
 * distinct words of one bank in one phase, 1 when conflict-free
 * (bank.c). */
int pb_smem_bank_degree(const int64_t *word, int nlanes, int width);

/* A padded read (pad.c): "select" of "load" (clamped subscripts) or the
 * pad value "fill", and the equivalent "virt" read affine.load X[t]. */
struct pb_smem_pad {
	MlirOperation load, select, virt;
	MlirAttribute fill;
};
/* The padded reads in "loop" into "*pads" (malloc'ed; free it), each
 * with its virtual read created before its load; their number. */
int pb_smem_pads_find(struct pb_ctx *ctx, MlirOperation loop,
		      struct pb_smem_pad **pads);
/* Staged: "staged" (the read of the tile that replaced the virtual read)
 * becomes the value of the select; the select and the load go. */
void pb_smem_pad_commit(struct pb_smem_pad *p, MlirValue staged);
/* Not staged: the virtual read goes. */
void pb_smem_pad_drop(struct pb_smem_pad *p);

/* Stage the read-only operand tiles of the kernels of "m" (promote.c). */
int pb_smem_promote(struct pb_ctx *ctx, MlirModule m,
		    const struct pb_smem_opts *o);


/* Stage the operand tiles of pb-mma's warp tiles in per-warp rings of
 * workgroup memory (mma.c). */
int pb_smem_stage_mma(struct pb_ctx *ctx, MlirModule m,
		      const struct pb_smem_opts *o);
/* Stage the K and V tiles of pb-mma's attention nests in block-shared
 * rings of workgroup memory (attention.c). */
int pb_smem_stage_attention(struct pb_ctx *ctx, MlirModule m,
			    const struct pb_smem_opts *o);

/* promote.c and plan.c: the staging of one mapped nest. */
#define MAXG 8	    /* staged buffers per nest */
#define MAXACC 32   /* accesses of one staged buffer */
#define MAXR 8	    /* rank of a staged buffer */
#define MAXPRIV 16  /* private buffers of a thread */

/* The coordinates of a cooperative copy's units (rounds.c): unit u of
 * the tile (numbered row-major over the extents "ext", outermost first)
 * has digit d = (u floordiv div[d]) mod ext[d], times scale[d] (the
 * elements of a chunk). Thread t copies units t + e * per in its rounds
 * e; "split" when those add to t's digits without carry, so that a
 * round's coordinates are the thread's plus constants; "lin" when the
 * unit's number is still needed (not split, or a last round that is not
 * full and guards it). */
struct pb_smem_digits {
	int n;
	int64_t ext[MAXR], div[MAXR], scale[MAXR];
	int64_t per, rounds;
	int split;
	int lin;	/* the unit's number is needed (not split, or a guard) */
};

/* The digits of "n" extents "ext", scaled by "scale" (NULL: 1), copied by
 * "per" threads in "rounds" rounds. */
void pb_smem_digits_init(struct pb_smem_digits *g, int n, const int64_t *ext,
			 const int64_t *scale, int64_t per, int64_t rounds);
/* Append to "t", "ind" spaces in, the thread's digits "%<name[d]>_t" of
 * its number, the value "tid" (nothing unless g->split). */
void pb_smem_digits_thread_text(struct pb_buf *t, int ind,
				const struct pb_smem_digits *g,
				const char *const *name, const char *tid);
/* Append to "t" the digits "%<name[d]>" of the unit of round "round"
 * whose number is the value "lin": the thread's digits plus the round's
 * when g->split, else the digits of "lin". */
void pb_smem_digits_round_text(struct pb_buf *t, int ind,
			       const struct pb_smem_digits *g,
			       const char *const *name, const char *round,
			       const char *lin);
/* Append to "t" the upper bound of a ring's slot loop: the slots of S
 * "stages" that a round of the k-tile loop at "%k0" (the k-tiles of
 * "kt" of a loop of "trip", S at a time) fills; S, or fewer in the last
 * round when S does not divide the k-tiles. The k-tile's slot is then the
 * slot loop's counter (promote.c, mma.c). */
void pb_smem_slot_bound_text(struct pb_buf *t, int64_t trip, int64_t kt,
			     int stages);
/* The text of a cooperative copy's rounds (mma.c, attention.c), "ind"
 * spaces in: warp %ws of "nw" (a pb.share loop's form), lane %l of 32,
 * round %q of "nq", the chunk "%ci" the lane copies in that round (when
 * g->lin) and its coordinates "%<name[d]>" of "g" (32 nw threads); the
 * three loops are left open. */
void pb_smem_rounds_text(struct pb_buf *t, int ind, int64_t nw, int64_t nq,
			 const struct pb_smem_digits *g,
			 const char *const *name);

/* One staged buffer: the accesses "acc" of the model to global buffer
 * "src", a box of "size" at an offset that is affine in the model's
 * parameters and the k-tile origin: "coef[d][i]" times parameter i
 * (i == np: the k-tile origin) plus "cst[d]". */
struct group {
	MlirValue src;
	int root, n, acc[MAXACC];
	int rank;
	int64_t size[MAXR], dim[MAXR];
	int64_t coef[MAXR][PB_POLY_LOCAL_MAXPAR + 1], cst[MAXR];
	int guard[MAXR];
	int perm[MAXR];	/* buffer dimension s holds tile dimension perm[s] */
	int inner;	/* moved innermost: 0 none, 1 the reduction's
			   dimension, 2 the one a thread's points walk */
	MlirAttribute fill; /* the value outside the buffer (null: 0) */
	int64_t pad, vec, rvec, bytes, elem;
	int vdim;	/* the tile dimension copies of "vec" elements run
			   along (plan.c, copy_dim) */
	int64_t reuse;
	int degree;
	MlirValue buf;
};

/* A nest being staged: the block loop, its top mapped loop "top" (warp or
 * thread), the innermost thread loop "thread", the reduction loop "loop"
 * in its body (the "at"-th operation), the mapped dimensions "chain". */
struct nest {
	MlirOperation block, top, thread, loop;
	struct pb_kernel_band chain, blk;
	int at, nwarp, unroll;
	int64_t threads, trip, kt;
	int stages;
	int64_t want_kt;	/* pb-tile's choice (pb.smem on the block
				   loop): k-tile and slots; 0 none, -1 do
				   not stage */
	int want_stages;
	struct pb_poly_local *l;
	int ng;
	struct group g[MAXG];
	int npad;	/* padded reads of the reduction loop (pad.c) */
	struct pb_smem_pad *pads;
	int ndropped;	/* groups size_groups left out, and why */
	MlirOperation dropped[MAXG];
	const char *why[MAXG];
	/* the groups' boxes computed so far (plan.c): shared by the
	   nest's copies, made by pb_smem_collect_groups, freed with
	   pb_smem_box_memo_free */
	struct pb_smem_box_memo *memo;
};

struct promote {
	struct pb_ctx *ctx;
	const struct pb_smem_opts *o;
	const struct pb_target *t;
	MlirOperation func;
	int async;
	struct pb_buf report;
	int nreport;
};

/* Helpers both share. */
MlirBlock pb_smem_body(MlirOperation op);
void pb_smem_remark(struct promote *p, MlirOperation op, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int pb_smem_is_pure(MlirOperation op);
/* The trip count of affine.for "op" with constant bounds and its lower
 * bound and step; -1 when its bounds are not constant (plan.c). */
int64_t pb_smem_for_trip(MlirOperation op, int64_t *lb, int64_t *step);
/* Drop the guards of partial tiles' points that staging made harmless
 * (unguard.c). */
int pb_smem_unguard(MlirModule m);

/* The analysis (plan.c): the nest's mapped chain, its reduction loop, the
 * groups of reads to stage, their boxes and layouts, the k-tile and the
 * ring. */
int pb_smem_find_chain(MlirOperation top, struct nest *n);
int pb_smem_find_loop(struct promote *p, struct nest *n, const char **why);
void pb_smem_collect_groups(struct promote *p, struct nest *n);
void pb_smem_box_memo_free(struct pb_smem_box_memo *m);
int pb_smem_plan(struct promote *p, struct nest *n);
int pb_smem_fits(struct promote *p, struct nest *n);
void pb_smem_drop_largest(struct promote *p, struct nest *n);
int pb_smem_unrollable(const struct nest *n);
struct pb_smem_pad *pb_smem_pad_of(const struct nest *n, MlirOperation op,
				   int virt);
void pb_smem_ring_type(const struct nest *n, const struct group *g,
		       struct pb_buf *w);
MlirValue pb_smem_free_buffer(const struct nest *n, const char *text, int ng);

#endif
