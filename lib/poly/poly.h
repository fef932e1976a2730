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
};

struct pb_poly_buf {
	int id;
	MlirValue root;	 /* alloc/alloca/get_global result or block argument */
	int rank;
	int64_t *shape;	 /* [rank] */
	int elem_bytes;	 /* size of one element (1 for i1) */
	int is_arg;	 /* a block argument (of the enclosing function) */
};

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
	/* Dependences (pairs of statement instances, source -> sink): */
	isl_union_map *dep_flow; /* value-based read-after-write (may) */
	isl_union_map *dep_mem;	 /* memory-based RAW, WAR and WAW: legality */
	isl_union_map *no_source; /* read accesses (S -> B) that may read a
				     value not written in the block */
};

/* Lift the top-level operations of "block" into a new scop in "ictx",
 * with its dependences computed. Returns NULL (error reported through
 * "ctx") only for malformed input; unknown operations become OPAQUE. */
struct pb_poly_scop *pb_poly_extract(struct pb_ctx *ctx, isl_ctx *ictx,
				     MlirBlock block);
void pb_poly_scop_free(struct pb_poly_scop *s);

/* The statement for top-level operation "op" of the block, or -1. */
int pb_poly_stmt_of(const struct pb_poly_scop *s, MlirOperation op);
/* The buffer that memref value "v" is (a view of), or -1. */
int pb_poly_buf_of(const struct pb_poly_scop *s, MlirValue v);

/* Affine expression "e" as an isl function on "dom", its inputs being the
 * "nops" functions "ops" ("nd" dimensions first, then the symbols); NULL
 * when "e" is not quasi-affine in them (a product of two non-constants, a
 * division or modulo by a non-positive or non-constant value). */
__isl_give isl_aff *pb_poly_expr_aff(MlirAffineExpr e,
				     __isl_keep isl_space *dom, isl_aff **ops,
				     int nd, int nops);

/* The dependences of "deps" from statement "src" to statement "dst", as a
 * map S<src>[...] -> S<dst>[...] (empty when there are none). */
__isl_give isl_map *pb_poly_deps_between(const struct pb_poly_scop *s,
					 __isl_keep isl_union_map *deps,
					 int src, int dst);

#endif
