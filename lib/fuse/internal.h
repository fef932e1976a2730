/* Internals of pb-fuse shared by its files: the fusion plan computed on
 * the isl lifting of @main (fusion.c) and the report (report.c). */
#ifndef PB_FUSE_INTERNAL_H
#define PB_FUSE_INTERNAL_H

#include "fuse/fuse.h"
#include "poly/poly.h"
#include "target/target.h"

/* Totals of one way of splitting @main into kernels. */
struct pb_fuse_totals {
	int kernels;
	int64_t bytes_read, bytes_written; /* global memory, compulsory */
};

/* What fusion made of one kernel-to-be: the top-level operation that
 * becomes its body (it keeps its identity through outlining). */
struct pb_fuse_kinfo {
	MlirOperation root;
	int nstmts;		 /* loop nests fused into it */
	unsigned kinds;		 /* PB_FUSE_* bits of the fusions done */
	int64_t bytes_read, bytes_written;
	int ncontracted;	 /* buffers contracted into it */
	int64_t local_bytes;	 /* their footprint per iteration */
};

/* The result of pb_fuse_nests. */
struct pb_fuse_plan {
	int n;
	struct pb_fuse_kinfo *k;
	struct pb_fuse_totals before, after;
};
void pb_fuse_plan_free(struct pb_fuse_plan *p);

/* Fuse the loop nests of @main's entry block "body" in place: merge
 * nests into shared loops where the isl dependences allow and the cost
 * model finds it profitable, then contract the buffers that became local.
 * Afterwards every kernel is one top-level compute operation of "body",
 * described in "plan" with the traffic before and after fusion (computed
 * from the access relations). With o->upstream, MLIR's affine-loop-fusion
 * does the fusing instead and "plan" measures its result. */
int pb_fuse_nests(struct pb_ctx *ctx, MlirModule m, MlirBlock body,
		  const struct pb_fuse_opts *o, struct pb_fuse_plan *plan);

/* The fusion state: statements are attached to abstract loop trees
 * (one per group) and only applied to the IR once every decision is
 * made (apply.c). Node i's loop is loop "level" of statement "creator";
 * a child c >= 0 is a node, c < 0 the body of statement -1 - c. */
struct pb_fuse_node {
	int64_t extent;
	int creator, level;
};

struct pb_fuse_buftraffic;

/* The buffers one statement reads or writes (cost.c). */
struct pb_fuse_stmtbufs {
	int n;
	int *buf;
};

/* One change to the loop trees, recorded to undo a failed fusion: "*p"
 * was "old", or when "p" is NULL, child "k" of node "node" was. */
struct pb_fuse_undo {
	int *p;
	int node, k, old;
};

/* The statements of a scop with an access (pb_poly_stmt's "access") to
 * each buffer: those of buffer b are stmt[start[b]] to
 * stmt[start[b + 1] - 1], in increasing order (apply.c). */
struct pb_fuse_users {
	int *start, *stmt;
};
void pb_fuse_users_build(struct pb_fuse_users *u,
			 const struct pb_poly_scop *s);
void pb_fuse_users_free(struct pb_fuse_users *u);

struct pb_fuse_group {
	int *stmt; /* in program order */
	int n;
	unsigned kinds;
	/* when "priced": its outer parallelism and predicted time (fusion.c
	 * keeps them from the try that made the group what it is), with
	 * what they came from, so that the price of the group with one more
	 * statement asks only about that statement: the levels of its
	 * parallel chain ("dep": the walk stopped at a carried dependence),
	 * its iterations and bytes read and written (cost.c) */
	int priced;
	int64_t par;
	double t;
	int levels, dep;
	double work;
	int64_t rd, wr;
};

/* The statements with a dependence of one kind into one statement
 * (fusion.c): "src" (n of them, increasing) and the statement's position
 * "k" among the sinks of each. */
struct pb_fuse_pred {
	int n;
	int *src, *k;
};

struct pb_fusion {
	struct pb_ctx *ctx;
	const struct pb_fuse_opts *o;
	struct pb_poly_scop *s;
	int kinds;
	long min_parallel, max_local;
	int nnode;
	struct pb_fuse_node *node;
	int *nchild, **child;	   /* child[i][k], room for cap[i] */
	int *cap;
	struct pb_fuse_undo *undo; /* while trying a fusion: the old values */
	int nundo, undocap, logging;
	int depth;		   /* deepest nest */
	int *path;		   /* path[stmt * depth + level]: node */
	int *base;		   /* first node of each statement */
	int *group;		   /* per statement */
	struct pb_fuse_group *g;
	int ng;
	char *local;		   /* per buffer: contracted */
	int *mark, *pos, stamp;	   /* per statement: in the set marked
				      with "stamp", at position "pos" */
	uint32_t **memo;	   /* per statement: isl's answers about its
				      dependences (fusion.c) */
	/* the traffic of each buffer (cost.c), built on first use */
	struct pb_fuse_buftraffic *traffic; /* per buffer */
	struct pb_fuse_stmtbufs *stmt_bufs; /* per statement */
	int *bmark;		   /* per buffer: seen in the set "stamp" */
	int nopaque;		   /* OPAQUE statements */
	/* the bytes each buffer adds to the last group pb_fuse_cost_group
	 * priced (gbytes[b], when gseen[b] == gver) and its OPAQUE
	 * statements (cost.c) */
	int64_t (*gbytes)[2];
	int *gseen, gver, gopaque;
	/* per statement, by pb_poly_dep: the dependences into it */
	struct pb_fuse_pred *pred[PB_POLY_NDEP];
	struct pb_fuse_users users; /* built by the first contraction */
	struct pb_target target;   /* the GPU the cost model predicts for */
};

/* Predicted time in seconds of statements "set" (n of them, with their
 * current paths) run as one kernel whose outer parallelism is "par"
 * (cost.c). */
double pb_fuse_cost(struct pb_fusion *f, const int *set, int n, int64_t par);
/* pb_fuse_cost of group "g" (g->par its parallelism) into g->t, with
 * g->work, g->rd and g->wr, keeping what each buffer adds for
 * pb_fuse_cost_add (cost.c). */
void pb_fuse_cost_group(struct pb_fusion *f, struct pb_fuse_group *g);
/* pb_fuse_cost of "all" (n of them: the statements of "g", the group
 * pb_fuse_cost_group priced last, then one more) at parallelism "par",
 * counting again only the buffers the last statement touches. With
 * "keep", "all" becomes g's priced set (g->work, rd, wr and t; the
 * caller adds the statement to g). */
double pb_fuse_cost_add(struct pb_fusion *f, struct pb_fuse_group *g,
			const int *all, int n, int64_t par, int keep);
/* Free what pb_fuse_cost keeps in "f" (cost.c). */
void pb_fuse_traffic_free(struct pb_fusion *f);
/* Mark the statements "set" (n of them) of "f" as the current set, each
 * with its position in "set": f->mark[i] == f->stamp, f->pos[i]
 * (cost.c). */
void pb_fuse_mark(struct pb_fusion *f, const int *set, int n);

/* The loop of node "i" in the IR. */
MlirOperation pb_fuse_node_op(const struct pb_fusion *f, int i);
/* Apply the decisions of "f" to the IR: merge the nests of each group. */
void pb_fuse_apply(struct pb_fusion *f);
/* Contract buffer "b" if it became local to one fused nest (fusion.c's
 * file comment); returns its footprint in bytes and sets *group, or -1. */
int64_t pb_fuse_contract(struct pb_fusion *f, int b, int *group);

/* Make the loops "chain" (n nodes, outermost first) of group "gi",
 * which carry no dependence, affine.parallel loops (after contraction:
 * their bodies keep the private buffers). */
void pb_fuse_parallelize(struct pb_fusion *f, int gi, const int *chain, int n);

/* Fold the pad of buffer "b" of "s" (a fill and a copy into the interior
 * of a buffer read only by later nests) into the loads of its readers
 * (pad.c). Returns 1 when folded. */
int pb_fuse_fold_pad(struct pb_ctx *ctx, const struct pb_fuse_opts *o,
		     const struct pb_poly_scop *s, int b);

/* Fold the permuting copy into buffer "b" of "s" into the loads of its
 * readers where that keeps their accesses as good (copy.c). Returns 1
 * when folded. */
int pb_fuse_fold_copy(struct pb_ctx *ctx, const struct pb_fuse_opts *o,
		      const struct pb_poly_scop *s, int b);
/* The statement of "s" that first writes buffer "b" when it is a plain
 * copy into all of "b" that keeps the order of its source or broadcasts
 * it (one that pb_fuse_fold_copy folds whatever its readers' order),
 * else -1 (copy.c). */
int pb_fuse_copy_writer(const struct pb_poly_scop *s, int b);
/* Split the loops of @main's nests ("body", lifted into "s") whose
 * counter indexes the dimension that a memref.collapse_shape of a copy's
 * buffer in "s" merged from two, so that they read the copy's buffer at
 * loop counters (delinearize.c). Returns how many loops were split; "s"
 * is stale afterwards when some were. */
int pb_fuse_split_merged(struct pb_ctx *ctx, const struct pb_fuse_opts *o,
			 const struct pb_poly_scop *s, MlirBlock body);
/* Remove the reshapes (expand_shape, collapse_shape) of "body" that
 * nothing uses any more (views.c). */
void pb_fuse_drop_unused_reshapes(MlirBlock body);
/* The same for a plain permuting copy whatever order its readers read
 * it in: attention's operands (attention.c), which the tensor-core
 * mapping reads through a permutation either way. With "scaled", also a
 * copy that multiplies by or divides over one value from outside (Q and
 * K^T, whose scale the attention nest takes over: pb_attn_factor). */
int pb_fuse_fold_copy_always(struct pb_ctx *ctx, const struct pb_fuse_opts *o,
			     const struct pb_poly_scop *s, int b, int scaled);

/* Reorder the loops of every permutable nest of "s" whose reduction loops
 * are not innermost: parallel loops out, reduction loops in (permute.c).
 * Returns how many nests changed; "s" is stale afterwards. */
int pb_fuse_reductions_inward(struct pb_ctx *ctx, const struct pb_fuse_opts *o,
			      const struct pb_poly_scop *s);

/* Make the accesses of @main's nests ("body") through reshapes that only
 * add or drop dimensions of size 1 access the reshaped buffer directly
 * (views.c). Returns how many accesses changed. */
int pb_fuse_bypass_unit_reshapes(MlirBlock body);

/* Rewrite the tensor.concat operations of "body" (tensors, before
 * bufferization) into insertions into one tensor per chain of concats
 * that extend each other, so that their operands are written in place
 * (concat.c). Returns PB_OK, or PB_ERR on an internal error. */
int pb_fuse_concat_in_place(struct pb_ctx *ctx, MlirBlock body);

/* Move the operations of the body of loop "l" but its terminator before
 * "before", with "iv" for l's counter (apply.c). */
void pb_fuse_splice_body(MlirOperation l, MlirValue iv, MlirOperation before);
/* A new empty loop from 0 to "extent" before "at" (an affine.parallel
 * when "par") at "loc"; returns its body's terminator, *iv its counter
 * (apply.c). */
MlirOperation pb_fuse_loop(MlirOperation at, int64_t extent, int par,
			   MlirLocation loc, MlirValue *iv);
/* Does the operation "op" only load from "v" and the views of "v" made
 * outside it (apply.c)? */
int pb_fuse_only_loads(MlirOperation op, MlirValue v);
/* Do statements "from" to "to" of "s" not write buffer "b": nests without
 * a store to it, other statements with loads of it only? (apply.c) */
int pb_fuse_unwritten(const struct pb_poly_scop *s, int from, int to, int b);
/* The most dimensions an access may have for the folds. */
#define PB_FUSE_MAXR 12
/* For each result of the map of access "a" of "st" (at most PB_FUSE_MAXR):
 * the loop whose counter it is ("loop[k]"), or -1 for the constant 0 in a
 * dimension of size 1. Returns the number of results, or -1 when some
 * result is anything else or the map has symbols (copy.c). */
int pb_fuse_result_loops(const struct pb_poly_stmt *st,
			 const struct pb_poly_access *a, int *loop);
/* Does access "a" of "st" index its memref with the loops "want" (n of
 * them) in order, each over the whole dimension, and the constant 0 in
 * dimensions of size 1 (pad.c)? */
int pb_fuse_access_is(const struct pb_poly_stmt *st,
		      const struct pb_poly_access *a, const int *want, int n);
/* Create an operation "name" before "at" with "n" operands "ops", one
 * result of type "t" (none when "t" is null; a null value is returned)
 * and the "na" (at most 4) attributes "names"/"attrs" (pad.c). */
MlirValue pb_fuse_build(MlirOperation at, const char *name, int n,
			const MlirValue *ops, MlirType t, int na,
			const char **names, const MlirAttribute *attrs);

/* Call "fn" on the operation of every access to buffer "b" of statements
 * "from" to "to" of "s", with "user" (apply.c). */
void pb_fuse_foreach_access(const struct pb_poly_scop *s, int from, int to,
			    int b, void (*fn)(MlirOperation op, void *user),
			    void *user);
/* A fold of buffer "b" of "s" into its readers: 1 when it folded. */
typedef int (*pb_fuse_fold_fn)(struct pb_ctx *ctx,
			       const struct pb_fuse_opts *o,
			       const struct pb_poly_scop *s, int b);
/* Apply "fold" to every buffer of "*s", in rounds that each end with a
 * new extraction of "*s" when something folded; returns how many folded,
 * or -1 (and "*s" NULL) on error (apply.c). */
int pb_fuse_fold_each(struct pb_ctx *ctx, const struct pb_fuse_opts *o,
		      struct pb_poly_scop **s, pb_fuse_fold_fn fold);
/* Number of uses of "v" (apply.c). */
int pb_fuse_num_uses(MlirValue v);
/* The memref operand of access "a". */
static inline MlirValue pb_fuse_access_memref(const struct pb_poly_access *a)
{
	return mlirOperationGetOperand(a->op, a->write ? 1 : 0);
}

/* Replace each attention of "*s" (a matmul, a softmax over its rows and a
 * matmul of the result, with nothing else using the intermediates) by one
 * nest computing it with an online softmax (attention.c); the copies
 * feeding its operands are folded into it first ("*s" is then lifted
 * again). Returns how many were fused, "*s" stale afterwards when some
 * were; -1 (and "*s" NULL) on error. */
int pb_fuse_attention(struct pb_ctx *ctx, const struct pb_fuse_opts *o,
		      struct pb_poly_scop **s);

/* The names of the PB_FUSE_* bits, in bit order, NULL-terminated. */
extern const char *const pb_fuse_kind_names[];

/* Parse the --fusion list "s" into PB_FUSE_* bits; -1 (reported) when a
 * name is unknown. NULL: all kinds. */
int pb_fuse_parse_kinds(struct pb_ctx *ctx, const char *s);

/* Global-memory traffic of the statements "stmts" (n of them) of "s" run
 * as one kernel, not counting buffers for which "local" (indexed by buffer,
 * may be NULL) is set: per buffer, the bounding box of the elements read,
 * and of those written, times the element size (cost.c). */
void pb_fuse_traffic(const struct pb_poly_scop *s, const int *stmts, int n,
		     const char *local, int64_t *read, int64_t *written);

/* Write the JSON report of the outlined module "m" to "path": per kernel
 * its nodes, loop structure and global bytes (from "plan"), and the
 * totals before and after fusion; "mode" names the fusion that ran. */
int pb_fuse_write_report(struct pb_ctx *ctx, MlirModule m, const char *path,
			 const struct pb_fuse_plan *plan, const char *mode);

#endif
