/* Table-driven tests of lib/poly: small functions of affine nests are
 * lifted into isl and their statements, domains, access relations,
 * schedules and dependences compared with hand-computed isl strings
 * (isl_*_is_equal, so the comparison is semantic, not textual). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <isl/ctx.h>
#include <isl/fixed_box.h>
#include <isl/map.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_map.h>

#include "core/pb.h"
#include "ir/ir.h"
#include "poly/poly.h"

#include "check.h"

/* What one expectation looks at. */
enum what {
	DOM,	/* domain of statement a */
	ACC,	/* relation of access b of statement a */
	EXACT,	/* exactness of access b of statement a is v */
	DIRECT, /* access b of statement a is direct (v) */
	ABUF,	/* access b of statement a goes to buffer v */
	READS,	/* reads of statement a */
	MUSTW,	/* must-writes of statement a */
	MAYW,	/* may-writes of statement a */
	FLOW,	/* dep_flow from statement a to statement b */
	MEM,	/* dep_mem from statement a to statement b */
	NOSRC,	/* no_source of the whole scop */
	SCHED,	/* schedule_map */
	TREE,	/* isl_schedule_get_map of the schedule tree */
	DEPTH,	/* depth of statement a is v */
	ISARG,	/* buffer a has is_arg v */
	BYTES,	/* buffer a has elem_bytes v */
	SHAPE,	/* buffer a has rank b and first dimension v */
};

struct expect {
	enum what w;
	int a, b, v;
	const char *isl;
};

struct scop_case {
	const char *name;
	const char *src;   /* a module with a func.func @f */
	const char *kinds; /* 'N' NEST or 'O' OPAQUE per statement */
	int nbuf;
	struct expect e[16];
};

/* Compare "got" with "want" (both taken; "want" read from "text"):
 * report both on a mismatch. */
static void check_same(__isl_take isl_union_map *got,
		       __isl_take isl_union_map *want, const char *text,
		       const char *what)
{
	int ok = got && want && isl_union_map_is_equal(got, want) == isl_bool_true;
	check(ok, what);
	if (!ok) {
		char *s = got ? isl_union_map_to_str(got) : NULL;
		printf("  got:  %s\n  want: %s\n", s ? s : "(null)", text);
		free(s);
	}
	isl_union_map_free(got);
	isl_union_map_free(want);
}

/* Compare "got" (taken) with the union map "want". */
static void check_umap(__isl_take isl_union_map *got, const char *want,
		       const char *what)
{
	isl_ctx *ictx = isl_union_map_get_ctx(got);
	check_same(got, ictx ? isl_union_map_read_from_str(ictx, want) : NULL,
		   want, what);
}

/* The same for a union set (compared as the domain of a union map). */
static void check_uset(__isl_take isl_union_set *got, const char *want,
		       const char *what)
{
	isl_ctx *ictx = isl_union_set_get_ctx(got);
	isl_union_set *w = ictx ? isl_union_set_read_from_str(ictx, want) : NULL;
	check_same(isl_union_map_from_domain(got), isl_union_map_from_domain(w),
		   want, what);
}

/* Statement "i" of "s" if it exists. */
static const struct pb_poly_stmt *stmt(const struct pb_poly_scop *s, int i)
{
	return i >= 0 && i < s->nstmt ? &s->stmt[i] : NULL;
}

/* Access "j" of statement "i" of "s" if it exists. */
static const struct pb_poly_access *access(const struct pb_poly_scop *s,
					   int i, int j)
{
	const struct pb_poly_stmt *st = stmt(s, i);
	return st && j >= 0 && j < st->naccess ? &st->access[j] : NULL;
}

/* Check expectation "e" on "s". */
static void check_expect(const struct pb_poly_scop *s, const struct expect *e,
			 const char *name)
{
	char what[160];
	const struct pb_poly_stmt *st = stmt(s, e->a);
	const struct pb_poly_access *ac = access(s, e->a, e->b);
	const struct pb_poly_buf *bf = e->a >= 0 && e->a < s->nbuf
		? &s->buf[e->a] : NULL;
	static const char *names[] = {
		"domain", "access", "exact", "direct", "access buffer",
		"reads", "must-writes", "may-writes", "flow deps",
		"memory deps", "no-source reads", "schedule map",
		"schedule tree", "depth", "is_arg", "elem_bytes", "shape",
	};
	snprintf(what, sizeof(what), "%s: %s %d %d", name, names[e->w], e->a,
		 e->b);
	switch (e->w) {
	case DOM:
		if (!st)
			return check(0, what);
		return check_uset(isl_union_set_from_set(isl_set_copy(st->domain)),
				  e->isl, what);
	case ACC:
		if (!ac)
			return check(0, what);
		return check_umap(isl_union_map_from_map(isl_map_copy(ac->rel)),
				  e->isl, what);
	case EXACT:
		return check(ac && ac->exact == e->v, what);
	case DIRECT:
		return check(ac && ac->direct == e->v, what);
	case ABUF:
		return check(ac && ac->buf == e->v, what);
	case READS:
	case MUSTW:
	case MAYW:
		if (!st)
			return check(0, what);
		return check_umap(isl_union_map_copy(e->w == READS ? st->reads :
					e->w == MUSTW ? st->must_writes :
					st->may_writes), e->isl, what);
	case FLOW:
	case MEM:
		return check_umap(isl_union_map_from_map(pb_poly_deps_between(
				s, e->w == FLOW ? PB_POLY_DEP_FLOW : PB_POLY_DEP_MEM,
				e->a, e->b)), e->isl, what);
	case NOSRC:
		return check_umap(isl_union_map_copy(s->no_source), e->isl, what);
	case SCHED:
		return check_umap(isl_union_map_copy(s->schedule_map), e->isl,
				  what);
	case TREE:
		return check_umap(isl_schedule_get_map(s->schedule), e->isl,
				  what);
	case DEPTH:
		return check(st && st->depth == e->v, what);
	case ISARG:
		return check(bf && bf->is_arg == e->v, what);
	case BYTES:
		return check(bf && bf->elem_bytes == e->v, what);
	case SHAPE:
		return check(bf && bf->rank == e->b &&
			     (!e->b || bf->shape[0] == e->v), what);
	}
}

/* fill + matmul: the fill's values reach the first k iteration, the
 * accumulation carries from k to k + 1; A and B come from outside. */
static const char matmul_src[] =
	"func.func @f(%A: memref<4x8xf32>, %B: memref<8x6xf32>,"
	"             %C: memref<4x6xf32>) {\n"
	"  %z = arith.constant 0.0 : f32\n"
	"  affine.for %i = 0 to 4 {\n"
	"    affine.for %j = 0 to 6 {\n"
	"      affine.store %z, %C[%i, %j] : memref<4x6xf32>\n"
	"    }\n"
	"  }\n"
	"  affine.for %i = 0 to 4 {\n"
	"    affine.for %j = 0 to 6 {\n"
	"      affine.for %k = 0 to 8 {\n"
	"        %a = affine.load %A[%i, %k] : memref<4x8xf32>\n"
	"        %b = affine.load %B[%k, %j] : memref<8x6xf32>\n"
	"        %c = affine.load %C[%i, %j] : memref<4x6xf32>\n"
	"        %p = arith.mulf %a, %b : f32\n"
	"        %s = arith.addf %c, %p : f32\n"
	"        affine.store %s, %C[%i, %j] : memref<4x6xf32>\n"
	"      }\n"
	"    }\n"
	"  }\n"
	"  return\n"
	"}\n";

#define MM_D1 "0 <= i < 4 and 0 <= j < 6 and 0 <= k < 8"

/* exp then neg through a buffer allocated in the block (memref.load with
 * counters as subscripts is exact too). */
static const char chain_src[] =
	"func.func @f(%X: memref<16xf32>, %Y: memref<16xf32>) {\n"
	"  %t = memref.alloc() : memref<16xf32>\n"
	"  affine.for %i = 0 to 16 {\n"
	"    %x = affine.load %X[%i] : memref<16xf32>\n"
	"    %e = math.exp %x : f32\n"
	"    affine.store %e, %t[%i] : memref<16xf32>\n"
	"  }\n"
	"  affine.for %i = 0 to 16 {\n"
	"    %x = memref.load %t[%i] : memref<16xf32>\n"
	"    %n = arith.negf %x : f32\n"
	"    memref.store %n, %Y[%i] : memref<16xf32>\n"
	"  }\n"
	"  memref.dealloc %t : memref<16xf32>\n"
	"  return\n"
	"}\n";

/* Softmax over the rows of X: max, exp(x - max), sum, divide. */
static const char softmax_src[] =
	"func.func @f(%X: memref<4x8xf32>, %Y: memref<4x8xf32>) {\n"
	"  %ninf = arith.constant 0xFF800000 : f32\n"
	"  %z = arith.constant 0.0 : f32\n"
	"  %m = memref.alloc() : memref<4xf32>\n"
	"  %s = memref.alloc() : memref<4xf32>\n"
	"  %e = memref.alloc() : memref<4x8xf32>\n"
	"  affine.for %i = 0 to 4 {\n"
	"    affine.store %ninf, %m[%i] : memref<4xf32>\n"
	"  }\n"
	"  affine.for %i = 0 to 4 {\n"
	"    affine.for %j = 0 to 8 {\n"
	"      %a = affine.load %m[%i] : memref<4xf32>\n"
	"      %x = affine.load %X[%i, %j] : memref<4x8xf32>\n"
	"      %b = arith.maximumf %a, %x : f32\n"
	"      affine.store %b, %m[%i] : memref<4xf32>\n"
	"    }\n"
	"  }\n"
	"  affine.for %i = 0 to 4 {\n"
	"    affine.for %j = 0 to 8 {\n"
	"      %x = affine.load %X[%i, %j] : memref<4x8xf32>\n"
	"      %a = affine.load %m[%i] : memref<4xf32>\n"
	"      %d = arith.subf %x, %a : f32\n"
	"      %v = math.exp %d : f32\n"
	"      affine.store %v, %e[%i, %j] : memref<4x8xf32>\n"
	"    }\n"
	"  }\n"
	"  affine.for %i = 0 to 4 {\n"
	"    affine.store %z, %s[%i] : memref<4xf32>\n"
	"  }\n"
	"  affine.for %i = 0 to 4 {\n"
	"    affine.for %j = 0 to 8 {\n"
	"      %a = affine.load %s[%i] : memref<4xf32>\n"
	"      %v = affine.load %e[%i, %j] : memref<4x8xf32>\n"
	"      %b = arith.addf %a, %v : f32\n"
	"      affine.store %b, %s[%i] : memref<4xf32>\n"
	"    }\n"
	"  }\n"
	"  affine.for %i = 0 to 4 {\n"
	"    affine.for %j = 0 to 8 {\n"
	"      %v = affine.load %e[%i, %j] : memref<4x8xf32>\n"
	"      %a = affine.load %s[%i] : memref<4xf32>\n"
	"      %q = arith.divf %v, %a : f32\n"
	"      affine.store %q, %Y[%i, %j] : memref<4x8xf32>\n"
	"    }\n"
	"  }\n"
	"  return\n"
	"}\n";

#define SM_D "0 <= i < 4 and 0 <= j < 8"

/* Views: a collapse_shape read, an expand_shape write, a subview read, a
 * rank-reducing subview read and a cast. */
static const char views_src[] =
	"func.func @f(%X: memref<2x3x4xf32>, %Y: memref<6x4xf32>,"
	"             %Z: memref<4x8xf32>, %W: memref<8xf32>) {\n"
	"  %v = memref.collapse_shape %X [[0, 1], [2]]"
	" : memref<2x3x4xf32> into memref<6x4xf32>\n"
	"  affine.for %i = 0 to 6 {\n"
	"    affine.for %j = 0 to 4 {\n"
	"      %x = affine.load %v[%i, %j] : memref<6x4xf32>\n"
	"      affine.store %x, %Y[%i, %j] : memref<6x4xf32>\n"
	"    }\n"
	"  }\n"
	"  %w = memref.expand_shape %Y [[0, 1], [2]] output_shape [2, 3, 4]"
	" : memref<6x4xf32> into memref<2x3x4xf32>\n"
	"  affine.for %a = 0 to 2 {\n"
	"    affine.for %b = 0 to 3 {\n"
	"      affine.for %c = 0 to 4 {\n"
	"        %x = affine.load %X[%a, %b, %c] : memref<2x3x4xf32>\n"
	"        affine.store %x, %w[%a, %b, %c] : memref<2x3x4xf32>\n"
	"      }\n"
	"    }\n"
	"  }\n"
	"  %s = memref.subview %Z[1, 2] [2, 3] [1, 2]"
	" : memref<4x8xf32> to memref<2x3xf32, strided<[8, 2], offset: 10>>\n"
	"  %r = memref.subview %Z[2, 0] [1, 8] [1, 1]"
	" : memref<4x8xf32> to memref<8xf32, strided<[1], offset: 16>>\n"
	"  %c = memref.cast %W : memref<8xf32> to memref<?xf32>\n"
	"  affine.for %i = 0 to 2 {\n"
	"    affine.for %j = 0 to 3 {\n"
	"      %x = affine.load %s[%i, %j]"
	" : memref<2x3xf32, strided<[8, 2], offset: 10>>\n"
	"      %y = affine.load %r[%j] : memref<8xf32, strided<[1], offset: 16>>\n"
	"      %q = arith.addf %x, %y : f32\n"
	"      affine.store %q, %c[%j] : memref<?xf32>\n"
	"    }\n"
	"  }\n"
	"  return\n"
	"}\n";

/* A call on the intermediate buffer is an OPAQUE statement: it may read
 * and write all of it, so nothing it does kills the producer's values. */
static const char opaque_src[] =
	"func.func private @g(memref<16xf32>)\n"
	"func.func @f(%X: memref<16xf32>, %Y: memref<16xf32>, %n: index) {\n"
	"  %t = memref.alloc() : memref<16xf32>\n"
	"  affine.for %i = 0 to 16 {\n"
	"    %x = affine.load %X[%i] : memref<16xf32>\n"
	"    affine.store %x, %t[%i] : memref<16xf32>\n"
	"  }\n"
	"  func.call @g(%t) : (memref<16xf32>) -> ()\n"
	"  affine.for %i = 0 to 16 {\n"
	"    %x = affine.load %t[%i] : memref<16xf32>\n"
	"    affine.store %x, %Y[%i] : memref<16xf32>\n"
	"  }\n"
	"  affine.for %i = 0 to %n {\n"
	"    %x = affine.load %X[%i] : memref<16xf32>\n"
	"    affine.store %x, %Y[%i] : memref<16xf32>\n"
	"  }\n"
	"  affine.for %i = 0 to 4 {\n"
	"    %x = affine.load %X[%i] : memref<16xf32>\n"
	"    affine.store %x, %Y[%i] : memref<16xf32>\n"
	"    affine.for %j = 0 to 4 {\n"
	"      affine.store %x, %t[%j] : memref<16xf32>\n"
	"    }\n"
	"  }\n"
	"  return\n"
	"}\n";

/* A gather (memref.load with a loaded subscript) and a scatter
 * (memref.store with one): both inexact, whole-buffer may-accesses. */
static const char gather_src[] =
	"func.func @f(%X: memref<16xf32>, %I: memref<16xindex>,"
	"             %Y: memref<16xf32>, %Z: memref<16xf32>) {\n"
	"  affine.for %i = 0 to 16 {\n"
	"    %k = affine.load %I[%i] : memref<16xindex>\n"
	"    %x = memref.load %X[%k] : memref<16xf32>\n"
	"    memref.store %x, %Y[%k] : memref<16xf32>\n"
	"  }\n"
	"  affine.for %i = 0 to 16 {\n"
	"    %y = affine.load %Y[%i] : memref<16xf32>\n"
	"    affine.store %y, %Z[%i] : memref<16xf32>\n"
	"  }\n"
	"  return\n"
	"}\n";

/* Quasi-affine subscripts (floordiv, mod, a symbol bound to a constant,
 * a constant subscript) and element sizes. */
static const char quasi_src[] =
	"func.func @f(%X: memref<4x4xf16>, %Y: memref<20xi8>,"
	"             %Z: memref<3xi1>) {\n"
	"  %c2 = arith.constant 2 : index\n"
	"  affine.for %i = 0 to 16 {\n"
	"    %x = affine.load %X[%i floordiv 4, %i mod 4] : memref<4x4xf16>\n"
	"    %b = arith.fptosi %x : f16 to i8\n"
	"    affine.store %b, %Y[%i + symbol(%c2)] : memref<20xi8>\n"
	"    %t = arith.constant true\n"
	"    affine.store %t, %Z[1] : memref<3xi1>\n"
	"  }\n"
	"  return\n"
	"}\n";

/* Views that are not composed (reinterpret_cast, a subview with a
 * dynamic offset) make whole-buffer may-accesses; a dynamic dimension
 * leaves the buffer unbounded above in it. */
static const char inexact_src[] =
	"func.func private @g(memref<?x8xf32>)\n"
	"func.func @f(%X: memref<4x8xf32>, %D: memref<?x8xf32>,"
	"             %Y: memref<32xf32>) {\n"
	"  %r = memref.reinterpret_cast %X to offset: [0], sizes: [32],"
	" strides: [1] : memref<4x8xf32> to memref<32xf32>\n"
	"  affine.for %i = 0 to 32 {\n"
	"    %x = affine.load %r[%i] : memref<32xf32>\n"
	"    affine.store %x, %Y[%i] : memref<32xf32>\n"
	"  }\n"
	"  affine.for %i = 0 to 4 {\n"
	"    affine.for %j = 0 to 8 {\n"
	"      %s = memref.subview %X[%i, 0] [1, 8] [1, 1]"
	" : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>\n"
	"      %x = affine.load %s[%j]"
	" : memref<8xf32, strided<[1], offset: ?>>\n"
	"      affine.store %x, %D[%i, %j] : memref<?x8xf32>\n"
	"    }\n"
	"  }\n"
	"  func.call @g(%D) : (memref<?x8xf32>) -> ()\n"
	"  return\n"
	"}\n";

/* Rank-0 buffers: a sum into memref<f32> (carried from i to i + 1), a
 * collapse_shape to rank 0 and an expand_shape from it. */
static const char scalar_src[] =
	"func.func @f(%X: memref<8xf32>, %O: memref<1x1xf32>,"
	"             %A: memref<f32>) {\n"
	"  %o = memref.collapse_shape %O [] : memref<1x1xf32> into memref<f32>\n"
	"  %w = memref.expand_shape %A [] output_shape [1, 1]"
	" : memref<f32> into memref<1x1xf32>\n"
	"  affine.for %i = 0 to 8 {\n"
	"    %x = affine.load %X[%i] : memref<8xf32>\n"
	"    %a = affine.load %A[] : memref<f32>\n"
	"    %s = arith.addf %a, %x : f32\n"
	"    affine.store %s, %A[] : memref<f32>\n"
	"  }\n"
	"  affine.for %i = 0 to 1 {\n"
	"    %a = affine.load %w[%i, 0] : memref<1x1xf32>\n"
	"    memref.store %a, %o[] : memref<f32>\n"
	"  }\n"
	"  return\n"
	"}\n";

/* No compute at all: no statements, an empty schedule. */
static const char empty_src[] =
	"func.func @f(%X: memref<4xf32>) {\n"
	"  %t = memref.alloc() : memref<4xf32>\n"
	"  %c = memref.cast %t : memref<4xf32> to memref<?xf32>\n"
	"  memref.dealloc %t : memref<4xf32>\n"
	"  return\n"
	"}\n";

/* Two fill + matmul pairs alike, on accumulators C and D: D's
 * dependences are C's computed once (sched.c's memo) and renamed to its
 * statements S2, S3 and buffer. */
static const char matmul2_src[] =
	"func.func @f(%A: memref<4x8xf32>, %B: memref<8x6xf32>,"
	"             %C: memref<4x6xf32>, %D: memref<4x6xf32>) {\n"
	"  %z = arith.constant 0.0 : f32\n"
	"  affine.for %i = 0 to 4 {\n"
	"    affine.for %j = 0 to 6 {\n"
	"      affine.store %z, %C[%i, %j] : memref<4x6xf32>\n"
	"    }\n"
	"  }\n"
	"  affine.for %i = 0 to 4 {\n"
	"    affine.for %j = 0 to 6 {\n"
	"      affine.for %k = 0 to 8 {\n"
	"        %a = affine.load %A[%i, %k] : memref<4x8xf32>\n"
	"        %b = affine.load %B[%k, %j] : memref<8x6xf32>\n"
	"        %c = affine.load %C[%i, %j] : memref<4x6xf32>\n"
	"        %p = arith.mulf %a, %b : f32\n"
	"        %s = arith.addf %c, %p : f32\n"
	"        affine.store %s, %C[%i, %j] : memref<4x6xf32>\n"
	"      }\n"
	"    }\n"
	"  }\n"
	"  affine.for %i = 0 to 4 {\n"
	"    affine.for %j = 0 to 6 {\n"
	"      affine.store %z, %D[%i, %j] : memref<4x6xf32>\n"
	"    }\n"
	"  }\n"
	"  affine.for %i = 0 to 4 {\n"
	"    affine.for %j = 0 to 6 {\n"
	"      affine.for %k = 0 to 8 {\n"
	"        %a = affine.load %A[%i, %k] : memref<4x8xf32>\n"
	"        %b = affine.load %B[%k, %j] : memref<8x6xf32>\n"
	"        %c = affine.load %D[%i, %j] : memref<4x6xf32>\n"
	"        %p = arith.mulf %a, %b : f32\n"
	"        %s = arith.addf %c, %p : f32\n"
	"        affine.store %s, %D[%i, %j] : memref<4x6xf32>\n"
	"      }\n"
	"    }\n"
	"  }\n"
	"  return\n"
	"}\n";

/* A concatenation in place: two writers of disjoint halves of %C
 * (classes of writers in sched.c), one of them a sum over k; a reader
 * of all of %C between them (its second half unwritten yet), two
 * after them (their sources the last writes of each half, through the
 * tail statement V of sched.c), one of the first half only. */
static const char concat_src[] =
	"func.func @f(%X: memref<8xf32>, %Y: memref<8xf32>,"
	"             %Z: memref<8xf32>, %W: memref<4xf32>) {\n"
	"  %C = memref.alloc() : memref<8xf32>\n"
	"  affine.for %i = 0 to 4 {\n"
	"    %x = affine.load %X[%i] : memref<8xf32>\n"
	"    affine.store %x, %C[%i] : memref<8xf32>\n"
	"  }\n"
	"  affine.for %i = 0 to 8 {\n"
	"    %c = affine.load %C[%i] : memref<8xf32>\n"
	"    affine.store %c, %Y[%i] : memref<8xf32>\n"
	"  }\n"
	"  affine.for %i = 0 to 4 {\n"
	"    affine.for %k = 0 to 3 {\n"
	"      %c = affine.load %C[%i + 4] : memref<8xf32>\n"
	"      %x = affine.load %X[%i + %k] : memref<8xf32>\n"
	"      %s = arith.addf %c, %x : f32\n"
	"      affine.store %s, %C[%i + 4] : memref<8xf32>\n"
	"    }\n"
	"  }\n"
	"  affine.for %i = 0 to 8 {\n"
	"    %c = affine.load %C[%i] : memref<8xf32>\n"
	"    affine.store %c, %Z[%i] : memref<8xf32>\n"
	"  }\n"
	"  affine.for %i = 0 to 8 {\n"
	"    %c = affine.load %C[%i] : memref<8xf32>\n"
	"    affine.store %c, %Y[%i] : memref<8xf32>\n"
	"  }\n"
	"  affine.for %i = 0 to 4 {\n"
	"    %c = affine.load %C[%i] : memref<8xf32>\n"
	"    affine.store %c, %W[%i] : memref<4xf32>\n"
	"  }\n"
	"  return\n"
	"}\n";

static const struct scop_case cases[] = {
	{"matmul", matmul_src, "NN", 3, {
		{DEPTH, 0, 0, 2, NULL},
		{DEPTH, 1, 0, 3, NULL},
		{DOM, 1, 0, 0, "{ S1[i, j, k] : " MM_D1 " }"},
		{ACC, 1, 0, 0, "{ S1[i, j, k] -> B0[i, k] : " MM_D1 " }"},
		{ACC, 1, 1, 0, "{ S1[i, j, k] -> B1[k, j] : " MM_D1 " }"},
		{MUSTW, 1, 0, 0, "{ S1[i, j, k] -> B2[i, j] : " MM_D1 " }"},
		{FLOW, 0, 1, 0, "{ S0[i, j] -> S1[i, j, 0] : 0 <= i < 4 and "
				"0 <= j < 6 }"},
		{FLOW, 1, 1, 0, "{ S1[i, j, k] -> S1[i, j, k + 1] : 0 <= i < 4 and "
				"0 <= j < 6 and 0 <= k < 7 }"},
		{FLOW, 1, 0, 0, "{ S1[i, j, k] -> S0[a, b] : 1 = 0 }"},
		{MEM, 0, 1, 0, "{ S0[i, j] -> S1[i, j, k] : " MM_D1 " }"},
		{MEM, 1, 1, 0, "{ S1[i, j, k] -> S1[i, j, l] : 0 <= i < 4 and "
			       "0 <= j < 6 and 0 <= k < l < 8 }"},
		{NOSRC, 0, 0, 0, "{ S1[i, j, k] -> B0[i, k] : " MM_D1 "; "
				 "S1[i, j, k] -> B1[k, j] : " MM_D1 " }"},
		{SCHED, 0, 0, 0, "{ S0[i, j] -> [0, i, j, 0] : 0 <= i < 4 and "
				 "0 <= j < 6; S1[i, j, k] -> [1, i, j, k] : "
				 MM_D1 " }"},
		{ISARG, 2, 0, 1, NULL},
		{BYTES, 2, 0, 4, NULL},
		{0}}},
	{"matmul twice", matmul2_src, "NNNN", 4, {
		{FLOW, 0, 1, 0, "{ S0[i, j] -> S1[i, j, 0] : 0 <= i < 4 and "
				"0 <= j < 6 }"},
		{FLOW, 2, 3, 0, "{ S2[i, j] -> S3[i, j, 0] : 0 <= i < 4 and "
				"0 <= j < 6 }"},
		{FLOW, 3, 3, 0, "{ S3[i, j, k] -> S3[i, j, k + 1] : 0 <= i < 4 and "
				"0 <= j < 6 and 0 <= k < 7 }"},
		{FLOW, 0, 3, 0, "{ S0[i, j] -> S3[a, b, c] : 1 = 0 }"},
		{FLOW, 1, 3, 0, "{ S1[i, j, k] -> S3[a, b, c] : 1 = 0 }"},
		{MEM, 2, 3, 0, "{ S2[i, j] -> S3[i, j, k] : " MM_D1 " }"},
		{MEM, 3, 3, 0, "{ S3[i, j, k] -> S3[i, j, l] : 0 <= i < 4 and "
			       "0 <= j < 6 and 0 <= k < l < 8 }"},
		{MEM, 1, 2, 0, "{ S1[i, j, k] -> S2[a, b] : 1 = 0 }"},
		{NOSRC, 0, 0, 0, "{ S1[i, j, k] -> B0[i, k] : " MM_D1 "; "
				 "S1[i, j, k] -> B1[k, j] : " MM_D1 "; "
				 "S3[i, j, k] -> B0[i, k] : " MM_D1 "; "
				 "S3[i, j, k] -> B1[k, j] : " MM_D1 " }"},
		{0}}},
	{"concat", concat_src, "NNNNNN", 5, {
		{FLOW, 0, 1, 0, "{ S0[i] -> S1[i] : 0 <= i < 4 }"},
		{FLOW, 2, 1, 0, "{ S2[i, k] -> S1[j] : 1 = 0 }"},
		{FLOW, 2, 2, 0, "{ S2[i, k] -> S2[i, k + 1] : 0 <= i < 4 and "
				"0 <= k < 2 }"},
		{FLOW, 0, 2, 0, "{ S0[i] -> S2[j, k] : 1 = 0 }"},
		{FLOW, 0, 3, 0, "{ S0[i] -> S3[i] : 0 <= i < 4 }"},
		{FLOW, 2, 3, 0, "{ S2[i, 2] -> S3[i + 4] : 0 <= i < 4 }"},
		{FLOW, 0, 4, 0, "{ S0[i] -> S4[i] : 0 <= i < 4 }"},
		{FLOW, 2, 4, 0, "{ S2[i, 2] -> S4[i + 4] : 0 <= i < 4 }"},
		{FLOW, 0, 5, 0, "{ S0[i] -> S5[i] : 0 <= i < 4 }"},
		{FLOW, 2, 5, 0, "{ S2[i, k] -> S5[j] : 1 = 0 }"},
		{MEM, 1, 2, 0, "{ S1[j] -> S2[i, k] : j = i + 4 and "
			       "0 <= i < 4 and 0 <= k < 3 }"},
		{NOSRC, 0, 0, 0, "{ S0[i] -> B0[i] : 0 <= i < 4; "
				 "S2[i, k] -> B0[i + k] : 0 <= i < 4 and "
				 "0 <= k < 3; "
				 "S1[i] -> B4[i] : 4 <= i < 8; "
				 "S2[i, 0] -> B4[i + 4] : 0 <= i < 4 }"},
		{0}}},
	{"chain", chain_src, "NN", 3, {
		{ISARG, 2, 0, 0, NULL},
		{SHAPE, 2, 1, 16, NULL},
		{ACC, 1, 0, 0, "{ S1[i] -> B2[i] : 0 <= i < 16 }"},
		{EXACT, 1, 1, 1, NULL},
		{FLOW, 0, 1, 0, "{ S0[i] -> S1[i] : 0 <= i < 16 }"},
		{MEM, 0, 1, 0, "{ S0[i] -> S1[i] : 0 <= i < 16 }"},
		{NOSRC, 0, 0, 0, "{ S0[i] -> B0[i] : 0 <= i < 16 }"},
		{TREE, 0, 0, 0, "{ S0[i] -> [0, i] : 0 <= i < 16; "
				"S1[i] -> [1, i] : 0 <= i < 16 }"},
		{0}}},
	{"softmax", softmax_src, "NNNNNN", 5, {
		{FLOW, 0, 1, 0, "{ S0[i] -> S1[i, 0] : 0 <= i < 4 }"},
		{FLOW, 1, 2, 0, "{ S1[i, 7] -> S2[i, j] : " SM_D " }"},
		{FLOW, 0, 2, 0, "{ S0[i] -> S2[i, j] : 1 = 0 }"},
		{MEM, 0, 2, 0, "{ S0[i] -> S2[i, j] : " SM_D " }"},
		{FLOW, 2, 4, 0, "{ S2[i, j] -> S4[i, j] : " SM_D " }"},
		{FLOW, 4, 5, 0, "{ S4[i, 7] -> S5[i, j] : " SM_D " }"},
		{FLOW, 2, 5, 0, "{ S2[i, j] -> S5[i, j] : " SM_D " }"},
		{FLOW, 1, 1, 0, "{ S1[i, j] -> S1[i, j + 1] : 0 <= i < 4 and "
				"0 <= j < 7 }"},
		{MEM, 1, 5, 0, "{ S1[i, j] -> S5[a, b] : 1 = 0 }"},
		{0}}},
	{"views", views_src, "NNN", 4, {
		{ACC, 0, 0, 0, "{ S0[i, j] -> B0[a, b, j] : 0 <= i < 6 and "
			       "0 <= j < 4 and i = 3a + b and 0 <= b < 3 }"},
		{DIRECT, 0, 0, 0, NULL},
		{DIRECT, 0, 1, 1, NULL},
		{EXACT, 0, 0, 1, NULL},
		{ACC, 1, 1, 0, "{ S1[a, b, c] -> B1[3a + b, c] : 0 <= a < 2 and "
			       "0 <= b < 3 and 0 <= c < 4 }"},
		{ACC, 2, 0, 0, "{ S2[i, j] -> B2[1 + i, 2 + 2j] : 0 <= i < 2 and "
			       "0 <= j < 3 }"},
		{ACC, 2, 1, 0, "{ S2[i, j] -> B2[2, j] : 0 <= i < 2 and "
			       "0 <= j < 3 }"},
		{ACC, 2, 2, 0, "{ S2[i, j] -> B3[j] : 0 <= i < 2 and 0 <= j < 3 }"},
		{ABUF, 2, 2, 3, NULL},
		{FLOW, 0, 1, 0, "{ S0[i, j] -> S1[a, b, c] : 1 = 0 }"},
		{MEM, 0, 1, 0, "{ S0[i, j] -> S1[a, b, j] : 0 <= a < 2 and "
			       "0 <= b < 3 and 0 <= j < 4 and i = 3a + b }"},
		{FLOW, 1, 1, 0, "{ S1[a, b, c] -> S1[d, e, f] : 1 = 0 }"},
		{0}}},
	{"opaque", opaque_src, "NONOO", 3, {
		{DOM, 1, 0, 0, "{ S1[] }"},
		{READS, 1, 0, 0, "{ S1[] -> B2[b] : 0 <= b < 16 }"},
		{MUSTW, 1, 0, 0, "{ }"},
		{MAYW, 1, 0, 0, "{ S1[] -> B2[b] : 0 <= b < 16 }"},
		{FLOW, 0, 1, 0, "{ S0[i] -> S1[] : 0 <= i < 16 }"},
		{FLOW, 1, 2, 0, "{ S1[] -> S2[i] : 0 <= i < 16 }"},
		{FLOW, 0, 2, 0, "{ S0[i] -> S2[i] : 0 <= i < 16 }"},
		{MEM, 2, 3, 0, "{ S2[i] -> S3[] : 0 <= i < 16 }"},
		{MAYW, 3, 0, 0, "{ S3[] -> B0[b] : 0 <= b < 16; "
				"S3[] -> B1[b] : 0 <= b < 16 }"},
		{READS, 4, 0, 0, "{ S4[] -> B0[b] : 0 <= b < 16; "
				 "S4[] -> B2[b] : 0 <= b < 16; "
				 "S4[] -> B1[b] : 0 <= b < 16 }"},
		{SCHED, 0, 0, 0, "{ S0[i] -> [0, i] : 0 <= i < 16; S1[] -> [1, 0]; "
				 "S2[i] -> [2, i] : 0 <= i < 16; S3[] -> [3, 0]; "
				 "S4[] -> [4, 0] }"},
		{0}}},
	{"gather", gather_src, "NN", 4, {
		{EXACT, 0, 0, 1, NULL},
		{EXACT, 0, 1, 0, NULL},
		{ACC, 0, 1, 0, "{ S0[i] -> B0[b] : 0 <= i < 16 and 0 <= b < 16 }"},
		{EXACT, 0, 2, 0, NULL},
		{MUSTW, 0, 0, 0, "{ }"},
		{MAYW, 0, 0, 0, "{ S0[i] -> B2[b] : 0 <= i < 16 and 0 <= b < 16 }"},
		{FLOW, 0, 1, 0, "{ S0[i] -> S1[j] : 0 <= i < 16 and 0 <= j < 16 }"},
		{NOSRC, 0, 0, 0, "{ S0[i] -> B1[i] : 0 <= i < 16; "
				 "S0[i] -> B0[b] : 0 <= i < 16 and 0 <= b < 16; "
				 "S1[j] -> B2[j] : 0 <= j < 16 }"},
		{0}}},
	{"quasi", quasi_src, "N", 3, {
		{ACC, 0, 0, 0, "{ S0[i] -> B0[a, b] : 0 <= i < 16 and "
			       "i = 4a + b and 0 <= b < 4 }"},
		{ACC, 0, 1, 0, "{ S0[i] -> B1[i + 2] : 0 <= i < 16 }"},
		{ACC, 0, 2, 0, "{ S0[i] -> B2[1] : 0 <= i < 16 }"},
		{BYTES, 0, 0, 2, NULL},
		{BYTES, 1, 0, 1, NULL},
		{BYTES, 2, 0, 1, NULL},
		{MEM, 0, 0, 0, "{ S0[i] -> S0[j] : 0 <= i < j < 16 }"},
		{FLOW, 0, 0, 0, "{ S0[i] -> S0[j] : 1 = 0 }"},
		{0}}},
	{"inexact", inexact_src, "NNO", 3, {
		{EXACT, 0, 0, 0, NULL},
		{DIRECT, 0, 0, 0, NULL},
		{ACC, 0, 0, 0, "{ S0[i] -> B0[a, b] : 0 <= i < 32 and 0 <= a < 4 "
			       "and 0 <= b < 8 }"},
		{EXACT, 1, 0, 0, NULL},
		{ABUF, 1, 0, 0, NULL},
		{ACC, 1, 1, 0, "{ S1[i, j] -> B1[i, j] : 0 <= i < 4 and "
			       "0 <= j < 8 }"},
		{SHAPE, 1, 2, -1, NULL},
		{READS, 2, 0, 0, "{ S2[] -> B1[a, b] : a >= 0 and 0 <= b < 8 }"},
		{FLOW, 1, 2, 0, "{ S1[i, j] -> S2[] : 0 <= i < 4 and 0 <= j < 8 }"},
		{0}}},
	{"scalar", scalar_src, "NN", 3, {
		{ACC, 0, 1, 0, "{ S0[i] -> B2[] : 0 <= i < 8 }"},
		{FLOW, 0, 0, 0, "{ S0[i] -> S0[i + 1] : 0 <= i < 7 }"},
		{ACC, 1, 0, 0, "{ S1[0] -> B2[] }"},
		{ACC, 1, 1, 0, "{ S1[0] -> B1[0, 0] }"},
		{FLOW, 0, 1, 0, "{ S0[7] -> S1[0] }"},
		{NOSRC, 0, 0, 0, "{ S0[i] -> B0[i] : 0 <= i < 8; S0[0] -> B2[] }"},
		{0}}},
	{"empty", empty_src, "", 2, {
		{SCHED, 0, 0, 0, "{ }"},
		{NOSRC, 0, 0, 0, "{ }"},
		{0}}},
};

/* Is the schedule tree of "s" a domain over a sequence of one filter per
 * statement, each NEST's filter over a band as deep as the nest? */
static int tree_shape(const struct pb_poly_scop *s)
{
	isl_schedule_node *n = isl_schedule_get_root(s->schedule);
	n = isl_schedule_node_child(n, 0);
	int ok = isl_schedule_node_get_type(n) == isl_schedule_node_sequence &&
		 isl_schedule_node_n_children(n) == s->nstmt;
	for (int i = 0; ok && i < s->nstmt; i++) {
		isl_schedule_node *c = isl_schedule_node_child(
			isl_schedule_node_child(isl_schedule_node_copy(n), i), 0);
		ok = s->stmt[i].kind == PB_POLY_NEST
			? isl_schedule_node_get_type(c) == isl_schedule_node_band &&
			  isl_schedule_node_band_n_member(c) == s->stmt[i].depth
			: isl_schedule_node_get_type(c) == isl_schedule_node_leaf;
		isl_schedule_node_free(c);
	}
	isl_schedule_node_free(n);
	return ok;
}

/* Do pb_poly_stmt_of and pb_poly_buf_of find every statement and the
 * buffer of every access? */
static int lookups(const struct pb_poly_scop *s)
{
	for (int i = 0; i < s->nstmt; i++) {
		const struct pb_poly_stmt *st = &s->stmt[i];
		if (pb_poly_stmt_of(s, st->op) != i)
			return 0;
		for (int j = 0; j < st->naccess; j++) {
			MlirOperation op = st->access[j].op;
			int pos = st->access[j].write ? 1 : 0;
			if (pb_poly_buf_of(s, mlirOperationGetOperand(op, pos)) !=
			    st->access[j].buf)
				return 0;
		}
	}
	for (int b = 0; b < s->nbuf; b++)
		if (pb_poly_buf_of(s, s->buf[b].root) != b)
			return 0;
	return pb_poly_stmt_of(s, (MlirOperation){NULL}) == -1;
}

/* The module "src" of case "name", checked to parse (null when not). */
static MlirModule parse_case(struct pb_ctx *ctx, const char *name,
			     const char *src)
{
	char what[160];
	MlirModule m = mlirModuleCreateParse(ctx->mlir, pb_str(src));
	snprintf(what, sizeof(what), "%s: parses", name);
	check(!mlirModuleIsNull(m), what);
	return m;
}

/* Parse the case, extract the block of @f and check every expectation. */
static void run_case(struct pb_ctx *ctx, const struct scop_case *c)
{
	char what[160];
	MlirModule m = parse_case(ctx, c->name, c->src);
	if (mlirModuleIsNull(m))
		return;
	MlirOperation f = pb_ir_lookup_func(m, "f");
	struct pb_poly_scop *s =
		pb_poly_extract(ctx, ctx->isl, pb_ir_entry_block(f));
	snprintf(what, sizeof(what), "%s: extracts", c->name);
	check(s != NULL && pb_poly_scop_schedule(s) == 0, what);
	if (s) {
		int n = (int)strlen(c->kinds), ok = s->nstmt == n;
		for (int i = 0; ok && i < n; i++)
			ok = s->stmt[i].kind ==
			     (c->kinds[i] == 'N' ? PB_POLY_NEST : PB_POLY_OPAQUE);
		snprintf(what, sizeof(what), "%s: statements %s", c->name,
			 c->kinds);
		check(ok, what);
		snprintf(what, sizeof(what), "%s: %d buffers", c->name, c->nbuf);
		check(s->nbuf == c->nbuf, what);
		snprintf(what, sizeof(what), "%s: schedule tree shape", c->name);
		check(!s->nstmt || tree_shape(s), what);
		snprintf(what, sizeof(what), "%s: stmt_of and buf_of", c->name);
		check(lookups(s), what);
		for (const struct expect *e = c->e; e->w || e->isl || e->v; e++)
			check_expect(s, e, c->name);
	}
	pb_poly_scop_free(s);
	mlirModuleDestroy(m);
}

/* Localized access relations (pb_poly_local_*): a nest of @f (the first
 * affine.for of its body, "inside" loops further in), its first "d" loops
 * as the domain, and what the model answers about it. */

/* What one expectation of a local case looks at. */
enum lwhat {
	LNONE,
	LCONFLICT, /* pb_poly_local_conflict_free is v */
	LFOOT,	   /* footprint of access a per tile is "isl" */
	LBOX,	   /* box hull of access a per tile: sizes "isl", offset
		      "off" (a map from the parameters) */
	LNOBOX,	   /* no fixed box for access a per tile */
	LCOEF,	   /* coefficient of dim b in subscript v of access a is c
		      (-1: not affine) */
	LOVER,	   /* accesses a and b overlap per tile: v */
	LNACC,	   /* the model has v accesses */
};

struct lexpect {
	enum lwhat w;
	int a, b, v;
	int64_t c;
	const char *isl, *off;
};

struct local_case {
	const char *name;
	const char *src;
	int inside, d;
	unsigned flags;
	int64_t tile[4]; /* per tile; all 0: the whole domain */
	struct lexpect e[12];
};

/* C += A * B, 256x256x128. */
static const char lmm_src[] =
	"func.func @f(%A: memref<256x128xf32>, %B: memref<128x256xf32>,"
	"             %C: memref<256x256xf32>) {\n"
	"  affine.for %i = 0 to 256 {\n"
	"    affine.for %j = 0 to 256 {\n"
	"      affine.for %k = 0 to 128 {\n"
	"        %a = affine.load %A[%i, %k] : memref<256x128xf32>\n"
	"        %b = affine.load %B[%k, %j] : memref<128x256xf32>\n"
	"        %c = affine.load %C[%i, %j] : memref<256x256xf32>\n"
	"        %p = arith.mulf %a, %b : f32\n"
	"        %s = arith.addf %c, %p : f32\n"
	"        affine.store %s, %C[%i, %j] : memref<256x256xf32>\n"
	"      }\n"
	"    }\n"
	"  }\n"
	"  return\n"
	"}\n";

/* A 3x3 convolution, 4 -> 8 channels, 32x32 outputs from a padded
 * 34x34 input. */
static const char lconv_src[] =
	"func.func @f(%X: memref<4x34x34xf32>, %W: memref<8x4x3x3xf32>,"
	"             %Y: memref<8x32x32xf32>) {\n"
	"  affine.for %o = 0 to 8 {\n"
	"    affine.for %h = 0 to 32 {\n"
	"      affine.for %w = 0 to 32 {\n"
	"        affine.for %c = 0 to 4 {\n"
	"          affine.for %kh = 0 to 3 {\n"
	"            affine.for %kw = 0 to 3 {\n"
	"              %x = affine.load %X[%c, %h + %kh, %w + %kw]"
	" : memref<4x34x34xf32>\n"
	"              %f = affine.load %W[%o, %c, %kh, %kw]"
	" : memref<8x4x3x3xf32>\n"
	"              %y = affine.load %Y[%o, %h, %w] : memref<8x32x32xf32>\n"
	"              %p = arith.mulf %x, %f : f32\n"
	"              %s = arith.addf %y, %p : f32\n"
	"              affine.store %s, %Y[%o, %h, %w] : memref<8x32x32xf32>\n"
	"            }\n"
	"          }\n"
	"        }\n"
	"      }\n"
	"    }\n"
	"  }\n"
	"  return\n"
	"}\n";

/* A row loop around the nest: its counter is a parameter; a private
 * buffer of the nest is left out; a floordiv subscript. */
static const char lrow_src[] =
	"func.func @f(%X: memref<8x16xf32>, %Y: memref<8x16xf32>,"
	"             %S: memref<8xf32>, %H: memref<8x8xf32>) {\n"
	"  affine.for %r = 0 to 8 {\n"
	"    affine.for %j = 0 to 16 {\n"
	"      %t = memref.alloca() : memref<f32>\n"
	"      %x = affine.load %X[%r, %j] : memref<8x16xf32>\n"
	"      affine.store %x, %t[] : memref<f32>\n"
	"      affine.store %x, %Y[%r, %j] : memref<8x16xf32>\n"
	"      %h = affine.load %H[%r, %j floordiv 2] : memref<8x8xf32>\n"
	"      affine.store %h, %S[%r] : memref<8xf32>\n"
	"    }\n"
	"  }\n"
	"  return\n"
	"}\n";

#define NACC(n) {LNACC, 0, 0, n, 0, NULL, NULL}
#define CONFLICT(v) {LCONFLICT, 0, 0, v, 0, NULL, NULL}
#define BOX(a, sizes, off) {LBOX, a, 0, 0, 0, sizes, off}
#define NOBOX(a) {LNOBOX, a, 0, 0, 0, NULL, NULL}
#define FOOT(a, set) {LFOOT, a, 0, 0, 0, set, NULL}
#define COEF(a, k, i, c) {LCOEF, a, k, i, c, NULL, NULL}
#define OVER(a, b, v) {LOVER, a, b, v, 0, NULL, NULL}

static const struct local_case local_cases[] = {
	{"local matmul 64x64x32", lmm_src, 0, 3, 0, {64, 64, 32},
	 {NACC(4),
	  CONFLICT(0),
	  BOX(0, "[64, 32]", "[o0, o1, o2] -> { B0[(o0), (o2)] }"),
	  BOX(1, "[32, 64]", "[o0, o1, o2] -> { B1[(o2), (o1)] }"),
	  BOX(3, "[64, 64]", "[o0, o1, o2] -> { B2[(o0), (o1)] }"),
	  FOOT(0, "[o0, o1, o2] -> { B0[a, b] : 0 <= a < 256 and "
	   "o0 <= a < o0 + 64 and 0 <= b < 128 and o2 <= b < o2 + 32 and "
	   "-63 <= o1 <= 255 }"),
	  COEF(0, 2, 1, 1), COEF(0, 1, 1, 0), COEF(1, 1, 1, 1),
	  OVER(2, 3, 1), OVER(0, 1, 0)}},
	{"local matmul band 64x64", lmm_src, 0, 2, PB_POLY_LOCAL_INNER_BOUNDS,
	 {64, 64},
	 {CONFLICT(1),
	  BOX(0, "[64, 128]", "[o0, o1] -> { B0[(o0), (0)] }"),
	  BOX(1, "[128, 64]", "[o0, o1] -> { B1[(0), (o1)] }")}},
	{"local matmul unbounded k", lmm_src, 0, 2, 0, {64, 64},
	 {CONFLICT(1), NOBOX(0), NOBOX(1),
	  BOX(2, "[64, 64]", "[o0, o1] -> { B2[(o0), (o1)] }")}},
	{"local conv halo", lconv_src, 0, 3, PB_POLY_LOCAL_INNER_BOUNDS,
	 {8, 16, 16},
	 {CONFLICT(1),
	  BOX(0, "[4, 18, 18]",
	   "[o0, o1, o2] -> { B0[(0), (o1), (o2)] }"),
	  BOX(1, "[8, 4, 3, 3]",
	   "[o0, o1, o2] -> { B1[(o0), (0), (0), (0)] }"),
	  BOX(3, "[8, 16, 16]",
	   "[o0, o1, o2] -> { B2[(o0), (o1), (o2)] }"),
	  COEF(0, 1, 1, 1), COEF(0, 0, 1, 0)}},
	{"local conv per point", lconv_src, 0, 3, PB_POLY_LOCAL_INNER_BOUNDS,
	 {1, 1, 1},
	 {BOX(0, "[4, 3, 3]",
	   "[o0, o1, o2] -> { B0[(0), (o1), (o2)] }")}},
	{"local row parameter", lrow_src, 1, 1, 0, {4},
	 {NACC(4),
	  CONFLICT(0),
	  BOX(0, "[1, 4]", "[p0, o0] -> { B0[(p0), (o0)] }"),
	  BOX(1, "[1, 4]", "[p0, o0] -> { B1[(p0), (o0)] }"),
	  BOX(3, "[1]", "[p0, o0] -> { B3[(p0)] }"),
	  COEF(2, 0, 1, -1), COEF(0, 0, 1, 1), COEF(0, 0, 0, 0),
	  OVER(0, 1, 0)}},
};

/* The affine.for "n" loops into "op" (following first operations). */
static MlirOperation loop_in(MlirOperation op, int n)
{
	for (int i = 0; i < n && !mlirOperationIsNull(op); i++)
		op = mlirBlockGetFirstOperation(pb_ir_entry_block(op));
	return op;
}

/* Is the box "box" of sizes "sizes" (its printed form contains them) and
 * offset "off" (an isl multi_aff on the parameters)? */
static int box_is(__isl_keep isl_fixed_box *box, const char *sizes,
		  const char *off)
{
	if (!box || isl_fixed_box_is_valid(box) != isl_bool_true)
		return 0;
	isl_multi_val *mv = isl_fixed_box_get_size(box);
	char *str = isl_multi_val_to_str(mv);
	int ok = str && strstr(str, sizes) != NULL;
	free(str);
	isl_multi_val_free(mv);
	isl_ctx *ctx = isl_fixed_box_get_ctx(box);
	isl_multi_aff *got = isl_fixed_box_get_offset(box);
	isl_multi_aff *want = isl_multi_aff_read_from_str(ctx, off);
	ok = ok && isl_multi_aff_plain_is_equal(got, want) == isl_bool_true;
	if (!ok)
		isl_fixed_box_dump(box);
	isl_multi_aff_free(got);
	isl_multi_aff_free(want);
	return ok;
}

/* Check expectation "e" on "l" for the tile "tile". */
static void check_local(const struct pb_poly_local *l,
			const struct lexpect *e, const int64_t *tile,
			const char *name)
{
	char what[200];
	int ok = 0;
	snprintf(what, sizeof(what), "%s: expectation %d on %d %d %d", name,
		 (int)e->w, e->a, e->b, e->v);
	if (e->w != LNACC && e->w != LCONFLICT &&
	    (e->a >= l->naccess || e->b >= l->naccess)) {
		check(0, what);
		return;
	}
	if (e->w == LNACC) {
		ok = l->naccess == e->v;
	} else if (e->w == LCONFLICT) {
		ok = pb_poly_local_conflict_free(l) == e->v;
	} else if (e->w == LFOOT) {
		isl_set *got = pb_poly_local_footprint(l, 1, &e->a, tile);
		isl_set *want = isl_set_read_from_str(l->ctx, e->isl);
		ok = isl_set_is_equal(got, want) == isl_bool_true;
		if (!ok)
			isl_set_dump(got);
		isl_set_free(got);
		isl_set_free(want);
	} else if (e->w == LBOX || e->w == LNOBOX) {
		isl_fixed_box *box = pb_poly_local_box(l, 1, &e->a, tile);
		ok = e->w == LBOX ? box_is(box, e->isl, e->off)
				  : box && isl_fixed_box_is_valid(box) ==
						   isl_bool_false;
		isl_fixed_box_free(box);
	} else if (e->w == LCOEF) {
		int64_t c = 0;
		int r = pb_poly_local_coef(l, e->a, e->v, e->b, &c);
		ok = e->c == -1 ? r == -1 : !r && c == e->c;
	} else if (e->w == LOVER) {
		ok = pb_poly_local_overlap(l, e->a, e->b, tile) == e->v;
	}
	check(ok, what);
}

/* Build the model of a local case and check its expectations. */
static void run_local(struct pb_ctx *ctx, const struct local_case *c)
{
	char what[160];
	struct pb_poly_dim dim[8];
	MlirModule m = parse_case(ctx, c->name, c->src);
	if (mlirModuleIsNull(m))
		return;
	MlirOperation f = pb_ir_lookup_func(m, "f");
	MlirOperation nest = loop_in(
		mlirBlockGetFirstOperation(pb_ir_entry_block(f)), c->inside);
	MlirOperation op = nest;
	for (int k = 0; k < c->d; k++) {
		int64_t ub;
		dim[k].iv = mlirBlockGetArgument(pb_ir_entry_block(op), 0);
		dim[k].step = 1;
		pb_ir_const_map(op, "lowerBoundMap", 1, &dim[k].lb);
		pb_ir_const_map(op, "upperBoundMap", 1, &ub);
		dim[k].trip = ub - dim[k].lb;
		op = loop_in(op, 1);
	}
	struct pb_poly_local *l = pb_poly_local_build(ctx->isl, nest, c->d,
						      dim, NULL, 0, c->flags);
	snprintf(what, sizeof(what), "%s: builds", c->name);
	check(l != NULL, what);
	const int64_t *tile = c->tile[0] ? c->tile : NULL;
	for (const struct lexpect *e = c->e; l && e->w; e++)
		check_local(l, e, tile, c->name);
	pb_poly_local_free(l);
	mlirModuleDestroy(m);
}

int main(void)
{
	struct pb_ctx *ctx = pb_ctx_alloc("test_poly");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(ctx, &cases[i]);
	for (size_t i = 0; i < sizeof(local_cases) / sizeof(local_cases[0]); i++)
		run_local(ctx, &local_cases[i]);
	pb_ctx_free(ctx);
	printf("test_poly: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
