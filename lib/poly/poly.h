/* lib/poly: the affine loop nests of one block lifted into isl.
 *
 * A "scop" here is the sequence of top-level operations of one block (the
 * body of @main before outlining, or of a kernel). Every top-level compute
 * operation becomes one statement:
 *
 *   - a NEST: a perfect nest of affine.for loops with constant bounds
 *     (lower 0, step 1, as convert-linalg-to-affine-loops writes them) whose
 *     innermost body holds no region; the body is the statement. Its
 *     iteration domain is { S<id>[i0, ..., i<d-1>] : 0 <= ik < extent[k] };
 *   - an OPAQUE statement: any other compute operation (an imperfect nest,
 *     non-constant bounds, an unknown op with memref operands). Its domain
 *     is { S<id>[] } and it may read and write every element of every
 *     buffer it uses, so dependences stay conservative.
 *
 * Buffers are the roots of memref values: a memref.alloc/alloca, a
 * memref.get_global or a block argument (of the function owning the
 * block). Accesses through view operations (collapse_shape, expand_shape,
 * subview with static offsets/sizes/strides, cast) are composed into
 * accesses of the root, in the root's index space B<id>[...]; accesses
 * through other views, or with non-affine subscripts, become may-accesses
 * of the whole root buffer.
 *
 * Operations that are not compute (allocations, views, constants, scalar
 * index arithmetic, dealloc, return) are not statements.
 *
 * Names in isl: statement tuple "S<id>", buffer tuple "B<id>", with ids
 * the indices into scop->stmt and scop->buf. */
#ifndef PB_POLY_POLY_H
#define PB_POLY_POLY_H

#include <stdint.h>

#include <isl/aff.h>
#include <isl/ctx.h>
#include <isl/map.h>
#include <isl/schedule.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include "mlir-c/AffineExpr.h"

#include "ir/ir.h"

enum pb_poly_kind {
	PB_POLY_NEST,
	PB_POLY_OPAQUE,
};

/* One access (affine.load/affine.store, memref.load/memref.store) of a
 * NEST statement, in its innermost body. */
struct pb_poly_access {
	MlirOperation op;
	int write;	 /* 1 for a store */
	int buf;	 /* index into scop->buf */
	int direct;	 /* the memref operand is the root buffer itself */
	int exact;	 /* affine subscripts, relation exact */
	isl_map *rel;	 /* S<id>[i...] -> B<buf>[...] (whole buffer if !exact) */
};

/* The dependences of one kind from one statement to the others (and
 * itself): one map per sink statement that has some, by increasing sink
 * (pb_poly_deps_build indexes the union maps once, so that asking about a
 * pair of statements costs no isl operation on the whole scop). */
struct pb_poly_succ {
	int n;
	int *dst;	/* [n] sink statements, increasing */
	isl_map **map;	/* [n] S<src>[...] -> S<dst>[...], not empty */
};

/* The kinds of dependences of a scop (pb_poly_scop's dep_flow and
 * dep_mem). */
enum pb_poly_dep {
	PB_POLY_DEP_FLOW,
	PB_POLY_DEP_MEM,
	PB_POLY_NDEP,
};

struct pb_poly_stmt {
	int id;
	enum pb_poly_kind kind;
	MlirOperation op;     /* the top-level operation in the block */
	int depth;	      /* NEST: number of loops; OPAQUE: 0 */
	MlirOperation *loops; /* [depth] affine.for, outermost first */
	int64_t *extent;      /* [depth] trip counts */
	MlirBlock body;	      /* NEST: the innermost loop body */
	int naccess;
	struct pb_poly_access *access; /* NEST: in body order */
	isl_set *domain;
	isl_union_map *reads;	    /* S<id>[...] -> B<b>[...], may */
	isl_union_map *must_writes; /* exact writes */
	isl_union_map *may_writes;  /* must_writes and the inexact ones */
	/* the scop's dependences from this statement, by pb_poly_dep */
	struct pb_poly_succ succ[PB_POLY_NDEP];
};

struct pb_poly_buf {
	int id;
	MlirValue root;	 /* alloc/alloca/get_global result or block argument */
	int rank;
	int64_t *shape;	 /* [rank] */
	int elem_bytes;	 /* size of one element (1 for i1) */
	int is_arg;	 /* a block argument (of the enclosing function) */
	isl_union_map *no_source; /* its reads (S -> B<id>) that may read a
				     value not written in the block */
	/* the statements that access it (increasing), their accesses to it
	 * (reads, must- and may-writes) and the dependences through it,
	 * kept for pb_poly_extract_update */
	int nacc;
	int *acc;
	isl_union_map *bacc[3];
	isl_union_map *flow, *mem;
};

struct pb_poly_cache;

struct pb_poly_scop {
	isl_ctx *ctx;
	MlirBlock block;
	int nstmt;
	struct pb_poly_stmt *stmt;
	int nbuf;
	struct pb_poly_buf *buf;
	isl_union_set *domain;		/* all statement domains */
	isl_union_map *reads, *must_writes, *may_writes;
	/* The original order: a sequence over the statements in block order,
	 * each NEST below a band of its loops (identity). */
	isl_schedule *schedule;
	isl_union_map *schedule_map;	/* the same, as a map to [id, i0, ...] */
	/* (both NULL until pb_poly_scop_schedule: no pass needs them, and
	 * the tree of a whole model costs time quadratic in its length) */
	/* Dependences (pairs of statement instances, source -> sink): */
	isl_union_map *dep_flow; /* value-based read-after-write (may) */
	isl_union_map *dep_mem;	 /* memory-based RAW, WAR and WAW: legality */
	isl_union_map *no_source; /* read accesses (S -> B) that may read a
				     value not written in the block */
	struct pb_poly_cache *cache; /* parsed texts (lib/poly's own) */
};

/* Lift the top-level operations of "block" into a new scop in "ictx",
 * with its dependences computed. Returns NULL (error reported through
 * "ctx") only for malformed input; unknown operations become OPAQUE. */
struct pb_poly_scop *pb_poly_extract(struct pb_ctx *ctx, isl_ctx *ictx,
				     MlirBlock block);
void pb_poly_scop_free(struct pb_poly_scop *s);
/* Build the schedule tree and map of "s" if not built yet (the original
 * order, for tests and tools that print it). Returns 0, or -1 on an isl
 * error. */
int pb_poly_scop_schedule(struct pb_poly_scop *s);
/* Lift the block of "old" again after a rewrite of some of its
 * operations: the dependences through a buffer whose accesses are the
 * same as in "old" (as many statements, in the same order, with equal
 * domains and access relations) are taken from "old" instead of asking
 * isl again. Frees "old"; NULL as pb_poly_extract. */
struct pb_poly_scop *pb_poly_extract_update(struct pb_ctx *ctx,
					    __isl_take struct pb_poly_scop *old);

/* The statement for top-level operation "op" of the block, or -1. */
int pb_poly_stmt_of(const struct pb_poly_scop *s, MlirOperation op);
/* The buffer that memref value "v" is (a view of), or -1. */
int pb_poly_buf_of(const struct pb_poly_scop *s, MlirValue v);

/* Is "op" a load or a store (affine or memref): 1 with the position of
 * its memref operand in "*mem" (its subscripts follow it) and whether it
 * writes in "*write"; 0 otherwise. */
int pb_poly_access_operand(MlirOperation op, int *mem, int *write);
/* Is "op" a view operation (its result aliases its first operand)? */
int pb_poly_is_view(MlirOperation op);
/* The root of memref value "v": "v" itself unless it is the result of a
 * view operation, then the root of the view's source. */
MlirValue pb_poly_root(MlirValue v);
/* Affine expression "e" as an isl function on "dom", its inputs being the
 * "nops" functions "ops" ("nd" dimensions first, then the symbols); NULL
 * when "e" is not quasi-affine in them (a product of two non-constants, a
 * division or modulo by a non-positive or non-constant value). */
__isl_give isl_aff *pb_poly_expr_aff(MlirAffineExpr e,
				     __isl_keep isl_space *dom, isl_aff **ops,
				     int nd, int nops);

/* The dependences of kind "kind" (dep_flow or dep_mem) from statement
 * "src" to statement "dst", as a map S<src>[...] -> S<dst>[...] (empty when
 * there are none). */
__isl_give isl_map *pb_poly_deps_between(const struct pb_poly_scop *s,
					 enum pb_poly_dep kind, int src,
					 int dst);
/* The position of statement "dst" among the sinks of the dependences of
 * kind "kind" from statement "src" (stmt[src].succ[kind], sorted by
 * sink), or -1 when there is no such dependence (or no such statement). */
int pb_poly_succ_pos(const struct pb_poly_scop *s, enum pb_poly_dep kind,
		     int src, int dst);
/* The dependences of kind "kind" from statement "src" to "dst" (not a
 * copy), or NULL when there are none: a lookup, no isl operation. */
__isl_keep isl_map *pb_poly_deps_find(const struct pb_poly_scop *s,
				      enum pb_poly_dep kind, int src,
				      int dst);

/* Localized access relations: the accesses of one loop nest seen from
 * one point of the loops around it (a band point, a block, a warp).
 *
 * The model of nest "nest" (any operation with regions: an affine.for, the
 * affine.parallel of a band) has "d" domain dimensions K[k0, ..., k<d-1>],
 * the normalized counters of the loops named by "dim" (the loop's
 * counter is lb + step * k, 0 <= k < trip): the distributed loops of a
 * reduction nest, or the band's loops for tile footprints. The other
 * values the subscripts use are
 *
 *   - parameters p0, p1, ... when defined outside "nest" and not integer
 *     constants (the counters of the block and warp loops around it,
 *     block-level index arithmetic): every answer holds for all their
 *     values;
 *   - existentially quantified when defined in "nest" (counters of inner
 *     loops, other values): unconstrained, or, with
 *     PB_POLY_LOCAL_INNER_BOUNDS, the counters of inner affine.for loops
 *     with constant bounds bounded by them (what footprints need).
 *
 * Every affine.load/store and memref.load/store nested in "nest" gets one
 * relation K[k] -> B<r>[...] into the index space of its root buffer r
 * (lib/poly's views compose as in pb_poly_extract), the whole buffer when
 * its subscripts are not affine or its view does not compose. Buffers
 * allocated in "nest" are private to one of its iterations and left out;
 * distinct roots are assumed not to alias. */

#define PB_POLY_LOCAL_MAXDIM 16  /* domain dimensions of one model */
#define PB_POLY_LOCAL_MAXPAR 32  /* parameters of one model */
#define PB_POLY_LOCAL_MAXROOT 64 /* buffers accessed by one nest */

/* One domain dimension: the counter "iv" of a loop, lb + step * k for
 * 0 <= k < trip. */
struct pb_poly_dim {
	MlirValue iv;
	int64_t lb, step, trip;
};

enum {
	/* bound the counters of inner affine.for loops with constant
	 * bounds (otherwise they are unconstrained) */
	PB_POLY_LOCAL_INNER_BOUNDS = 1,
};

/* One access of the nest. */
struct pb_poly_laccess {
	MlirOperation op;
	int write;
	int root;	/* index into model->root */
	int exact;	/* affine subscripts: "map" is exact */
	isl_map *map;	/* K[k] -> B<root>[...] with the parameters */
	isl_multi_aff *sub; /* exact: [k, inner...] -> B<root>[...], the
			       subscripts before the inner values are
			       projected out (NULL when !exact) */
};

struct pb_poly_local {
	isl_ctx *ctx;
	MlirOperation nest;
	unsigned flags;
	int d;
	struct pb_poly_dim dim[PB_POLY_LOCAL_MAXDIM];
	int np;
	MlirValue par[PB_POLY_LOCAL_MAXPAR];	/* parameter p<i> */
	int nroot;
	MlirValue root[PB_POLY_LOCAL_MAXROOT];	/* buffer B<i> */
	isl_set *domain;	/* K[k] : 0 <= k < trip */
	int naccess;
	struct pb_poly_laccess *access; /* in pre-order */
};

/* The localized model of "nest" over the "d" loops "dim" (see above),
 * leaving out the "nskip" accesses "skip"; "flags" a mask of
 * PB_POLY_LOCAL_*. NULL when an access goes to a value that is not a
 * memref, when there are too many buffers or parameters, or on an isl
 * error. */
struct pb_poly_local *pb_poly_local_build(isl_ctx *ctx, MlirOperation nest,
					  int d, const struct pb_poly_dim *dim,
					  const MlirOperation *skip, int nskip,
					  unsigned flags);
void pb_poly_local_free(struct pb_poly_local *l);

/* Is "l" free of conflicts over its domain: no two distinct points of it
 * access one element of a buffer with one of the accesses a write? Then
 * the loops of the domain may run in parallel (reduce.c's proof).
 * Returns 1 when proven, 0 otherwise. */
int pb_poly_local_conflict_free(const struct pb_poly_local *l);

/* The footprint of the "n" accesses "acc" of "l" (indices into
 * l->access, all to one buffer) per tile: the elements they touch when
 * domain dimension k ranges over [o<k>, o<k> + tile[k]) (over the whole
 * domain when "tile" is NULL), as a set B<root>[...] in the parameters
 * p<i> and o<k>. */
__isl_give isl_set *pb_poly_local_footprint(const struct pb_poly_local *l,
					    int n, const int *acc,
					    const int64_t *tile);
/* The box hull of the footprint of the "n" accesses "acc" per tile (as
 * pb_poly_local_footprint): a fixed size per buffer dimension and an
 * offset affine in the parameters (isl_fixed_box_is_valid false when no
 * such box exists). The accesses that are not exact give the whole
 * buffer (offset 0, its static shape). */
__isl_give isl_fixed_box *pb_poly_local_box(const struct pb_poly_local *l,
					    int n, const int *acc,
					    const int64_t *tile);
/* Do the footprints of accesses "a" and "b" of "l" (to one buffer) per
 * tile overlap for some value of the parameters? PPCG's gpu_group.c
 * groups such accesses into one shared-memory tile. 1 yes, 0 no, -1 on
 * an error. */
int pb_poly_local_overlap(const struct pb_poly_local *l, int a, int b,
			  const int64_t *tile);
/* The coefficient of domain dimension "k" in subscript "i" of access "a"
 * of "l" (how many elements subscript "i" moves when k moves by one):
 * into "*c", 0 when the subscript is affine in k, -1 when not (inexact
 * access, or k inside a floordiv or mod). */
int pb_poly_local_coef(const struct pb_poly_local *l, int a, int i, int k,
		       int64_t *c);

#endif
