/* Fusion of @main's loop nests on isl dependences (docs/pb-fuse.md).
 *
 * The nests of @main are lifted into isl (lib/poly): one statement per
 * perfect nest, S<i>[i0, ...], with its accesses and the memory-based
 * dependences between all statement instances. Fusion then walks the
 * statements in order and grows a group greedily. A nest N joins the
 * current group G by sharing G's outer loops: level by level, N's loop t
 * is merged with the last loop at level t of G when
 *
 *   - the trip counts agree (loops are aligned by position), and
 *   - every dependence from an instance of a statement S below that loop
 *     to an instance of N relates instances with the same values of the
 *     shared loops 0..t (zero dependence distance on the shared loops).
 *
 * The second condition makes the fusion legal (the order of the shared
 * loops then never separates a source from its sink), keeps each shared
 * loop as parallel as it was, and is what lets a buffer produced and
 * consumed under the shared loops shrink to one iteration's footprint.
 * In schedule terms, N's band is merged with the shared band prefix of G
 * and placed in the sequence after G's members; the check is done on the
 * dependence relations, never on operation names.
 *
 * Profitability: N must consume a value G produces or read a buffer G
 * reads (sibling), at least one loop must be shared, the kind of fusion
 * must be enabled (--fusion), and the outer parallelism of the fused nest
 * must stay at least min(parallelism before, --min-parallelism) for both
 * sides, so that fusing never starves the GPU of blocks.
 *
 * Contraction: a buffer allocated by @main and accessed only inside one
 * fused nest, always directly and with the shared loop l indexing the
 * same dimension k_l in every access, with no read of a value from before
 * the nest, is replaced by a memref.alloca in the innermost shared loop
 * without the dimensions k_l (a scalar for a matmul accumulator, one row
 * for softmax), when that footprint fits --max-local-bytes. */
#include <stdlib.h>
#include <string.h>

#include <isl/fixed_box.h>
#include <isl/val.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "fuse/internal.h"

/* Parallel iterations under which fusion may leave a kernel when the
 * nests had more: about two blocks per SM of an H100-class GPU (132
 * SMs), once pb-tile maps the shared parallel loops to blocks. */
#define DEFAULT_MIN_PARALLEL 256
/* Largest footprint of a contracted buffer per iteration of the shared
 * loops: a softmax or LayerNorm row of 4096 floats. */
#define DEFAULT_MAX_LOCAL (16 * 1024)

static const char *kind_names[] = {"producer", "epilogue", "sibling",
				   "reduction"};

int pb_fuse_parse_kinds(struct pb_ctx *ctx, const char *s)
{
	int kinds = 0;
	if (!s)
		return PB_FUSE_ALL;
	while (*s) {
		size_t n = strcspn(s, ",");
		int k = -1;
		for (int i = 0; i < 4 && k < 0; i++)
			if (strlen(kind_names[i]) == n &&
			    !strncmp(s, kind_names[i], n))
				k = i;
		if (k < 0) {
			pb_error(ctx,
				 "--fusion: unknown kind '%.*s' (expected "
				 "producer, epilogue, sibling, reduction)",
				 (int)n, s);
			return -1;
		}
		kinds |= 1 << k;
		s += n + (s[n] == ',');
	}
	return kinds;
}

/* Per statement: the loops it runs in after the fusions so far. */
struct fstmt {
	int group;
	MlirOperation *path; /* [depth]: loop at each level */
};

/* A group of statements becoming one kernel. */
struct fgroup {
	int *stmt;
	int n;
	unsigned kinds;
};

struct fusion {
	struct pb_ctx *ctx;
	const struct pb_fuse_opts *o;
	struct pb_poly_scop *s;
	int kinds;
	long min_parallel, max_local;
	struct fstmt *st;
	struct fgroup *g;
	int ng;
	char *local; /* per buffer: contracted */
};

/* The location of statement "i" of "f" for remarks. */
static MlirLocation stmt_loc(struct fusion *f, int i)
{
	return mlirOperationGetLocation(f->s->stmt[i].access
						? f->s->stmt[i].access[0].op
						: f->s->stmt[i].op);
}

/* The map { S<a>[x] -> S<b>[y] : x_k = y_k for k < n } in the space of
 * "like". */
static __isl_give isl_map *equal_prefix(__isl_keep isl_map *like, int n)
{
	isl_map *eq = isl_map_universe(isl_map_get_space(like));
	for (int k = 0; k < n; k++)
		eq = isl_map_equate(eq, isl_dim_in, k, isl_dim_out, k);
	return eq;
}

/* Do the dependences from statement "a" to "b" of "f" only relate
 * instances equal on their first "n" dimensions? */
static int zero_distance(struct fusion *f, int a, int b, int n)
{
	isl_map *d = pb_poly_deps_between(f->s, f->s->dep_mem, a, b);
	if (!d)
		return 0;
	isl_map *eq = equal_prefix(d, n);
	isl_bool ok = isl_map_is_subset(d, eq);
	isl_map_free(d);
	isl_map_free(eq);
	return ok == isl_bool_true;
}

/* Is the loop at level "u" (shared by statements "a" and "b" of "f")
 * free of dependences from "a" to "b" carried at that level? */
static int not_carried(struct fusion *f, int a, int b, int u)
{
	isl_map *d = pb_poly_deps_between(f->s, f->s->dep_mem, a, b);
	if (!d)
		return 0;
	d = isl_map_intersect(d, equal_prefix(d, u));
	isl_map *eq = equal_prefix(d, u + 1);
	isl_bool ok = isl_map_is_subset(d, eq);
	isl_map_free(d);
	isl_map_free(eq);
	return ok == isl_bool_true;
}

/* Is there a value-based dependence from statement "a" to "b"? */
static int flows(struct fusion *f, int a, int b)
{
	isl_map *d = pb_poly_deps_between(f->s, f->s->dep_flow, a, b);
	isl_bool empty = d ? isl_map_is_empty(d) : isl_bool_true;
	isl_map_free(d);
	return empty == isl_bool_false;
}

/* Do statements "a" and "b" read a common buffer? */
static int share_input(struct fusion *f, int a, int b)
{
	const struct pb_poly_stmt *x = &f->s->stmt[a], *y = &f->s->stmt[b];
	for (int i = 0; i < x->naccess; i++)
		for (int j = 0; j < y->naccess; j++)
			if (!x->access[i].write && !y->access[j].write &&
			    x->access[i].buf == y->access[j].buf)
				return 1;
	return 0;
}

/* Does statement "i" have a loop carrying a dependence on itself (a
 * reduction, or a scan)? */
static int reduces(struct fusion *f, int i)
{
	for (int u = 0; u < f->s->stmt[i].depth; u++)
		if (!not_carried(f, i, i, u))
			return 1;
	return 0;
}

/* The trip count of loop "l" at level "u" of some statement of "g". */
static int64_t extent_of(struct fusion *f, const struct fgroup *g,
			 MlirOperation l, int u)
{
	for (int k = 0; k < g->n; k++) {
		const struct pb_poly_stmt *s = &f->s->stmt[g->stmt[k]];
		if (s->depth > u &&
		    mlirOperationEqual(f->st[g->stmt[k]].path[u], l))
			return s->extent[u];
	}
	return -1;
}

/* The body block of loop "l". */
static MlirBlock loop_body(MlirOperation l)
{
	return mlirRegionGetFirstBlock(mlirOperationGetRegion(l, 0));
}

/* The operation before the terminator of "b" (null when none). */
static MlirOperation last_op(MlirBlock b)
{
	MlirOperation t = mlirBlockGetTerminator(b);
	MlirOperation last = (MlirOperation){NULL};
	for (MlirOperation op = mlirBlockGetFirstOperation(b);
	     !mlirOperationIsNull(op) && !mlirOperationEqual(op, t);
	     op = mlirOperationGetNextInBlock(op))
		last = op;
	return last;
}

/* The outer parallelism of statements "set" (n of them, with their
 * paths in f->st) run as one nest: the product of the trip counts of the
 * outermost chain of loops that carry no dependence among the statements
 * below them and hold a single loop each. */
static int64_t parallelism(struct fusion *f, const int *set, int n)
{
	int64_t par = 1;
	MlirOperation node = f->st[set[0]].path[0];
	for (int u = 0;; u++) {
		int64_t ext = -1;
		for (int a = 0; a < n; a++) {
			int sa = set[a];
			if (f->s->stmt[sa].depth <= u ||
			    !mlirOperationEqual(f->st[sa].path[u], node))
				continue;
			ext = f->s->stmt[sa].extent[u];
			for (int b = a; b < n; b++) {
				int sb = set[b];
				if (f->s->stmt[sb].depth <= u ||
				    !mlirOperationEqual(f->st[sb].path[u], node))
					continue;
				if (!not_carried(f, sa, sb, u))
					return par;
			}
		}
		if (ext < 0)
			return par;
		par *= ext;
		/* one child loop and nothing else below "node"? */
		MlirOperation child = (MlirOperation){NULL};
		for (int a = 0; a < n; a++) {
			int sa = set[a];
			if (f->s->stmt[sa].depth <= u ||
			    !mlirOperationEqual(f->st[sa].path[u], node))
				continue;
			if (f->s->stmt[sa].depth == u + 1)
				return par;
			if (mlirOperationIsNull(child))
				child = f->st[sa].path[u + 1];
			else if (!mlirOperationEqual(child, f->st[sa].path[u + 1]))
				return par;
		}
		if (mlirOperationIsNull(child))
			return par;
		node = child;
	}
}

/* Move group "g"'s nest to just before statement "n"'s nest and merge
 * n's loops 0..t-1 into g's loops "shared" (ivs remapped). */
static void merge(struct fusion *f, struct fgroup *g, int n,
		  MlirOperation *shared, int t)
{
	struct pb_poly_stmt *s = &f->s->stmt[n];
	MlirOperation root = f->st[g->stmt[0]].path[0];
	MlirBlock dst = loop_body(shared[t - 1]);
	MlirOperation term = mlirBlockGetTerminator(dst);
	struct pb_ir_map map = {0};
	struct pb_ir_ops moved = {0};

	mlirOperationMoveBefore(root, s->loops[0]);
	for (int k = 0; k < t; k++)
		pb_ir_map_add(&map, mlirBlockGetArgument(loop_body(s->loops[k]), 0),
			      mlirBlockGetArgument(loop_body(shared[k]), 0));
	if (t < s->depth) {
		pb_ir_ops_push(&moved, s->loops[t]);
	} else {
		MlirBlock src = loop_body(s->loops[s->depth - 1]);
		MlirOperation st = mlirBlockGetTerminator(src);
		for (MlirOperation op = mlirBlockGetFirstOperation(src);
		     !mlirOperationEqual(op, st);
		     op = mlirOperationGetNextInBlock(op))
			pb_ir_ops_push(&moved, op);
	}
	for (int i = 0; i < moved.n; i++) {
		mlirOperationMoveBefore(moved.v[i], term);
		pb_ir_remap_operands(moved.v[i], &map);
	}
	MlirOperation shell = s->loops[0];
	mlirOperationRemoveFromParent(shell);
	mlirOperationDestroy(shell);
	for (int k = 0; k < t; k++)
		f->st[n].path[k] = shared[k];
	for (int k = 0; k < s->depth; k++)
		s->loops[k] = f->st[n].path[k];
	s->op = root;
	pb_ir_map_free(&map);
	pb_ir_ops_free(&moved);
}

/* Classify the fusion of "n" into "g" at "t" shared loops. */
static unsigned classify(struct fusion *f, const struct fgroup *g, int n,
			 int t, int *producer_seen)
{
	int feeds = 0, red = 0;
	for (int k = 0; k < g->n; k++)
		if (flows(f, g->stmt[k], n)) {
			feeds = 1;
			red |= reduces(f, g->stmt[k]);
		}
	*producer_seen = feeds;
	if (!feeds)
		return PB_FUSE_SIBLING;
	if (reduces(f, n) || t < f->s->stmt[n].depth)
		return red || reduces(f, n) ? PB_FUSE_REDUCTION
					    : PB_FUSE_PRODUCER;
	return red ? PB_FUSE_EPILOGUE : PB_FUSE_PRODUCER;
}

/* Try to fuse statement "n" into group "g"; 1 when done. */
static int try_fuse(struct fusion *f, struct fgroup *g, int n)
{
	struct pb_poly_stmt *s = &f->s->stmt[n];
	MlirOperation *shared = calloc(s->depth + 1, sizeof(*shared));
	int t = 0, blocker = -1, done = 0;
	if (!shared)
		abort();
	for (; t < s->depth; t++) {
		MlirOperation c = t == 0 ? f->st[g->stmt[0]].path[0]
					 : last_op(loop_body(shared[t - 1]));
		if (mlirOperationIsNull(c) || !pb_ir_op_is(c, "affine.for") ||
		    extent_of(f, g, c, t) != s->extent[t])
			break;
		for (int k = 0; k < g->n && blocker < 0; k++) {
			int m = g->stmt[k];
			if (f->s->stmt[m].depth > t &&
			    mlirOperationEqual(f->st[m].path[t], c) &&
			    !zero_distance(f, m, n, t + 1))
				blocker = m;
		}
		if (blocker >= 0)
			break;
		shared[t] = c;
	}
	if (t == 0) {
		if (f->o->remarks && blocker >= 0)
			pb_remark_at(f->ctx, stmt_loc(f, n),
				     "not fused with the nest before it: a "
				     "dependence from S%d to S%d is not within "
				     "one iteration of the outer loop",
				     blocker, n);
		else if (f->o->remarks &&
			 (flows(f, g->stmt[g->n - 1], n) ||
			  share_input(f, g->stmt[g->n - 1], n)))
			pb_remark_at(f->ctx, stmt_loc(f, n),
				     "not fused with the nest before it: the "
				     "outer loops differ (%lld iterations, "
				     "not %lld)",
				     (long long)s->extent[0],
				     (long long)extent_of(
					     f, g, f->st[g->stmt[0]].path[0], 0));
		free(shared);
		return 0;
	}
	int feeds;
	unsigned kind = classify(f, g, n, t, &feeds);
	int related = feeds;
	for (int k = 0; k < g->n && !related; k++)
		related = share_input(f, g->stmt[k], n);
	if (!related || !(kind & f->kinds)) {
		if (f->o->remarks && related)
			pb_remark_at(f->ctx, stmt_loc(f, n),
				     "not fused: %s fusion is disabled",
				     kind_names[__builtin_ctz(kind)]);
		free(shared);
		return 0;
	}

	/* parallelism before and after */
	int *set = malloc(sizeof(*set) * (g->n + 1));
	if (!set)
		abort();
	memcpy(set, g->stmt, sizeof(*set) * g->n);
	set[g->n] = n;
	int64_t par_g = parallelism(f, g->stmt, g->n);
	int64_t par_n = parallelism(f, &n, 1);
	MlirOperation *own = malloc(sizeof(*own) * s->depth);
	if (!own)
		abort();
	memcpy(own, f->st[n].path, sizeof(*own) * s->depth);
	for (int k = 0; k < t; k++)
		f->st[n].path[k] = shared[k];
	int64_t par = parallelism(f, set, g->n + 1);
	memcpy(f->st[n].path, own, sizeof(*own) * s->depth);
	int64_t need_g = par_g < f->min_parallel ? par_g : f->min_parallel;
	int64_t need_n = par_n < f->min_parallel ? par_n : f->min_parallel;
	if (par < need_g || par < need_n) {
		if (f->o->remarks)
			pb_remark_at(f->ctx, stmt_loc(f, n),
				     "not fused: the fused nest would have %lld "
				     "parallel iterations, the nests have %lld "
				     "and %lld (--min-parallelism=%ld)",
				     (long long)par, (long long)par_g,
				     (long long)par_n, f->min_parallel);
	} else {
		if (f->o->remarks)
			pb_remark_at(f->ctx, stmt_loc(f, n),
				     "fused (%s) into the nest of S%d at depth "
				     "%d of %d, %lld parallel iterations",
				     kind_names[__builtin_ctz(kind)],
				     g->stmt[0], t, s->depth, (long long)par);
		merge(f, g, n, shared, t);
		g->stmt[g->n++] = n;
		g->kinds |= kind;
		f->st[n].group = f->ng - 1;
		done = 1;
	}
	free(own);
	free(set);
	free(shared);
	return done;
}

/* Start a new group holding statement "i". */
static struct fgroup *new_group(struct fusion *f, int i)
{
	struct fgroup *g = &f->g[f->ng++];
	g->stmt = malloc(sizeof(*g->stmt) * f->s->nstmt);
	if (!g->stmt)
		abort();
	g->stmt[0] = i;
	g->n = 1;
	g->kinds = 0;
	f->st[i].group = f->ng - 1;
	return g;
}

/* Group the statements of "f" greedily in order. */
static void group_all(struct fusion *f)
{
	struct fgroup *cur = NULL;
	for (int i = 0; i < f->s->nstmt; i++) {
		int nest = f->s->stmt[i].kind == PB_POLY_NEST;
		if (nest && cur && !f->o->no_fusion && try_fuse(f, cur, i))
			continue;
		cur = new_group(f, i);
		if (!nest)
			cur = NULL;
	}
}

/* The position of the result of access "a" indexed by exactly the
 * induction variable "iv", or -1. */
static int dim_indexed_by(const struct pb_poly_access *a, MlirValue iv)
{
	MlirAttribute ma = pb_ir_attr(a->op, "map");
	if (mlirAttributeIsNull(ma) || !mlirAttributeIsAAffineMap(ma))
		return -1;
	MlirAffineMap map = mlirAffineMapAttrGetValue(ma);
	int first = a->write ? 2 : 1;
	for (intptr_t k = 0; k < mlirAffineMapGetNumResults(map); k++) {
		MlirAffineExpr e = mlirAffineMapGetResult(map, k);
		if (!mlirAffineExprIsADim(e))
			continue;
		intptr_t d = mlirAffineDimExprGetPosition(e);
		if (first + d < mlirOperationGetNumOperands(a->op) &&
		    mlirValueEqual(mlirOperationGetOperand(a->op, first + d), iv))
			return (int)k;
	}
	return -1;
}

/* The accesses to buffer "b" in "f": appended to "acc" (pointers), their
 * statements to "stm"; returns the count. */
static int accesses_of(struct fusion *f, int b, struct pb_poly_access **acc,
		       int *stm)
{
	int n = 0;
	for (int i = 0; i < f->s->nstmt; i++)
		for (int k = 0; k < f->s->stmt[i].naccess; k++)
			if (f->s->stmt[i].access[k].buf == b) {
				acc[n] = &f->s->stmt[i].access[k];
				stm[n++] = i;
			}
	return n;
}

/* Does some read of buffer "b" see a value from before the block? */
static int reads_live_in(struct fusion *f, int b)
{
	isl_union_map *ns = isl_union_map_copy(f->s->no_source);
	isl_space *sp = isl_space_set_alloc(f->s->ctx, 0,
					    f->s->buf[b].rank);
	char name[16];
	snprintf(name, sizeof(name), "B%d", b);
	sp = isl_space_set_tuple_name(sp, isl_dim_set, name);
	ns = isl_union_map_intersect_range(
		ns, isl_union_set_from_set(isl_set_universe(sp)));
	isl_bool empty = isl_union_map_is_empty(ns);
	isl_union_map_free(ns);
	return empty != isl_bool_true;
}

/* Number of uses of "v". */
static int num_uses(MlirValue v)
{
	int n = 0;
	for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u);
	     u = mlirOpOperandGetNextUse(u))
		n++;
	return n;
}

/* Rewrite access "a" to use "buf" with the results "drop" (a mask over
 * the old map's results) removed from its map. */
static void retarget(const struct pb_poly_access *a, MlirValue buf,
		     const char *drop)
{
	MlirAffineMap map =
		mlirAffineMapAttrGetValue(pb_ir_attr(a->op, "map"));
	intptr_t n = mlirAffineMapGetNumResults(map), m = 0;
	MlirAffineExpr *e = malloc(sizeof(*e) * (n ? n : 1));
	if (!e)
		abort();
	for (intptr_t k = 0; k < n; k++)
		if (!drop[k])
			e[m++] = mlirAffineMapGetResult(map, k);
	MlirAffineMap nm = mlirAffineMapGet(
		mlirAffineMapGetContext(map), mlirAffineMapGetNumDims(map),
		mlirAffineMapGetNumSymbols(map), m, e);
	free(e);
	mlirOperationSetOperand(a->op, a->write ? 1 : 0, buf);
	pb_ir_set_attr(a->op, "map", mlirAffineMapAttrGet(nm));
}

/* Contract buffer "b" if the conditions in the file comment hold;
 * returns its new footprint in bytes, or -1. */
static int64_t contract(struct fusion *f, int b, int *group_out)
{
	const struct pb_poly_buf *buf = &f->s->buf[b];
	int total = 0;
	for (int i = 0; i < f->s->nstmt; i++)
		total += f->s->stmt[i].naccess;
	struct pb_poly_access **acc = malloc(sizeof(*acc) * (total + 1));
	int *stm = malloc(sizeof(*stm) * (total + 1));
	char *drop = calloc(buf->rank + 1, 1);
	int64_t bytes = -1;
	if (!acc || !stm || !drop)
		abort();
	int n = accesses_of(f, b, acc, stm);
	MlirOperation def = pb_ir_value_parent(buf->root);
	if (n == 0 || buf->is_arg || !pb_ir_op_is(def, "memref.alloc") ||
	    num_uses(buf->root) != n || reads_live_in(f, b))
		goto out;
	int g = f->st[stm[0]].group;
	for (int i = 0; i < n; i++)
		if (!acc[i]->direct || !acc[i]->exact ||
		    f->st[stm[i]].group != g ||
		    f->s->stmt[stm[i]].kind != PB_POLY_NEST)
			goto out;
	/* the loops shared by every accessing statement, each indexing one
	 * dimension of the buffer the same way in every access */
	int e = 0;
	for (;; e++) {
		MlirOperation l = (MlirOperation){NULL};
		int k = -1, ok = 1;
		for (int i = 0; i < n && ok; i++) {
			const struct fstmt *fs = &f->st[stm[i]];
			if (f->s->stmt[stm[i]].depth <= e) {
				ok = 0;
				break;
			}
			if (mlirOperationIsNull(l))
				l = fs->path[e];
			ok = mlirOperationEqual(l, fs->path[e]);
			int ki = ok ? dim_indexed_by(acc[i], mlirBlockGetArgument(
							     loop_body(l), 0))
				    : -1;
			if (i == 0)
				k = ki;
			ok = ok && ki >= 0 && ki == k && !drop[k];
		}
		if (!ok)
			break;
		drop[k] = 1;
	}
	if (e == 0)
		goto out;
	bytes = buf->elem_bytes;
	int rank = 0;
	int64_t *shape = malloc(sizeof(*shape) * (buf->rank + 1));
	if (!shape)
		abort();
	for (int k = 0; k < buf->rank; k++)
		if (!drop[k]) {
			shape[rank++] = buf->shape[k];
			bytes *= buf->shape[k];
		}
	if (bytes > f->max_local) {
		if (f->o->remarks)
			pb_remark_at(f->ctx, mlirOperationGetLocation(def),
				     "buffer not contracted: %lld bytes per "
				     "iteration exceed --max-local-bytes=%ld",
				     (long long)bytes, f->max_local);
		free(shape);
		bytes = -1;
		goto out;
	}
	/* a memref.alloca at the start of the innermost shared loop */
	MlirType et = mlirShapedTypeGetElementType(mlirValueGetType(buf->root));
	MlirType t = mlirMemRefTypeContiguousGet(et, rank, shape,
						 mlirAttributeGetNull());
	free(shape);
	MlirOperation inner = f->st[stm[0]].path[e - 1];
	MlirOperationState st = mlirOperationStateGet(
		pb_str("memref.alloca"), mlirOperationGetLocation(def));
	MlirContext mctx = mlirOperationGetContext(def);
	int32_t seg[2] = {0, 0};
	MlirNamedAttribute na = mlirNamedAttributeGet(
		mlirIdentifierGet(mctx, pb_str("operandSegmentSizes")),
		mlirDenseI32ArrayGet(mctx, 2, seg));
	mlirOperationStateAddResults(&st, 1, &t);
	mlirOperationStateAddAttributes(&st, 1, &na);
	MlirOperation al = mlirOperationCreate(&st);
	mlirBlockInsertOwnedOperation(loop_body(inner), 0, al);
	for (int i = 0; i < n; i++)
		retarget(acc[i], mlirOperationGetResult(al, 0), drop);
	if (num_uses(buf->root) == 0) {
		mlirOperationRemoveFromParent(def);
		mlirOperationDestroy(def);
	}
	*group_out = g;
out:
	free(acc);
	free(stm);
	free(drop);
	return bytes;
}

void pb_fuse_traffic(const struct pb_poly_scop *s, const int *stmts, int n,
		     const char *local, int64_t *read, int64_t *written)
{
	*read = *written = 0;
	for (int b = 0; b < s->nbuf; b++) {
		if (local && local[b])
			continue;
		for (int w = 0; w < 2; w++) {
			isl_union_map *acc = isl_union_map_empty(
				isl_union_map_get_space(s->reads));
			for (int i = 0; i < n; i++)
				acc = isl_union_map_union(
					acc, isl_union_map_copy(
						     w ? s->stmt[stmts[i]].may_writes
						       : s->stmt[stmts[i]].reads));
			isl_union_set *r = isl_union_map_range(acc);
			char name[16];
			snprintf(name, sizeof(name), "B%d", b);
			isl_space *sp = isl_space_set_alloc(s->ctx, 0,
							    s->buf[b].rank);
			sp = isl_space_set_tuple_name(sp, isl_dim_set, name);
			isl_set *set = isl_union_set_extract_set(r, sp);
			isl_union_set_free(r);
			int64_t cnt = 0;
			if (set && isl_set_is_empty(set) == isl_bool_false) {
				isl_fixed_box *box =
					isl_set_get_simple_fixed_box_hull(set);
				cnt = 1;
				if (box && isl_fixed_box_is_valid(box) ==
						   isl_bool_true) {
					isl_multi_val *sz =
						isl_fixed_box_get_size(box);
					for (int k = 0; k < s->buf[b].rank; k++) {
						isl_val *v = isl_multi_val_get_at(
							sz, k);
						cnt *= isl_val_get_num_si(v);
						isl_val_free(v);
					}
					isl_multi_val_free(sz);
				} else {
					for (int k = 0; k < s->buf[b].rank; k++)
						cnt *= s->buf[b].shape[k];
				}
				isl_fixed_box_free(box);
			}
			isl_set_free(set);
			*(w ? written : read) += cnt * s->buf[b].elem_bytes;
		}
	}
}

/* Fill "p" with the kernels of "f" and their traffic. */
static void make_plan(struct fusion *f, struct pb_fuse_plan *p,
		      const int64_t *local_bytes, const int *ncontracted)
{
	p->n = f->ng;
	p->k = calloc(f->ng ? f->ng : 1, sizeof(*p->k));
	if (!p->k)
		abort();
	for (int i = 0; i < f->ng; i++) {
		struct fgroup *g = &f->g[i];
		struct pb_fuse_kinfo *k = &p->k[i];
		k->root = f->s->stmt[g->stmt[0]].op;
		k->nstmts = g->n;
		k->kinds = g->kinds;
		k->ncontracted = ncontracted[i];
		k->local_bytes = local_bytes[i];
		pb_fuse_traffic(f->s, g->stmt, g->n, f->local, &k->bytes_read,
				&k->bytes_written);
		p->after.kernels++;
		p->after.bytes_read += k->bytes_read;
		p->after.bytes_written += k->bytes_written;
	}
	for (int i = 0; i < f->s->nstmt; i++) {
		int64_t r, w;
		pb_fuse_traffic(f->s, &i, 1, NULL, &r, &w);
		p->before.kernels++;
		p->before.bytes_read += r;
		p->before.bytes_written += w;
	}
}

void pb_fuse_plan_free(struct pb_fuse_plan *p)
{
	free(p->k);
	p->k = NULL;
	p->n = 0;
}

/* Upstream MLIR fusion (the baseline): affine-loop-fusion on @main. */
static const char *upstream_pipeline =
	"builtin.module(func.func(affine-loop-fusion),canonicalize)";

int pb_fuse_nests(struct pb_ctx *ctx, MlirModule m, MlirBlock body,
		  const struct pb_fuse_opts *o, struct pb_fuse_plan *plan)
{
	struct fusion f = {ctx, o, NULL, 0, 0, 0, NULL, NULL, 0, NULL};
	struct pb_fuse_totals before = {0};
	memset(plan, 0, sizeof(*plan));
	f.kinds = pb_fuse_parse_kinds(ctx, o->fusion);
	if (f.kinds < 0)
		return PB_ERR;
	f.min_parallel = o->min_parallel > 0 ? o->min_parallel
					     : DEFAULT_MIN_PARALLEL;
	f.max_local = o->max_local > 0 ? o->max_local : DEFAULT_MAX_LOCAL;
	if (o->upstream) {
		/* measure the unfused nests, let MLIR fuse, measure again */
		struct pb_poly_scop *s0 = pb_poly_extract(ctx, ctx->isl, body);
		if (!s0)
			return PB_ERR;
		for (int i = 0; i < s0->nstmt; i++) {
			int64_t r, w;
			pb_fuse_traffic(s0, &i, 1, NULL, &r, &w);
			before.kernels++;
			before.bytes_read += r;
			before.bytes_written += w;
		}
		pb_poly_scop_free(s0);
		if (pb_ir_run_pipeline(ctx, m, upstream_pipeline) != PB_OK)
			return PB_ERR;
	}
	f.s = pb_poly_extract(ctx, ctx->isl, body);
	if (!f.s)
		return PB_ERR;
	f.st = calloc(f.s->nstmt + 1, sizeof(*f.st));
	f.g = calloc(f.s->nstmt + 1, sizeof(*f.g));
	f.local = calloc(f.s->nbuf + 1, 1);
	int64_t *local_bytes = calloc(f.s->nstmt + 1, sizeof(*local_bytes));
	int *ncontracted = calloc(f.s->nstmt + 1, sizeof(*ncontracted));
	if (!f.st || !f.g || !f.local || !local_bytes || !ncontracted)
		abort();
	for (int i = 0; i < f.s->nstmt; i++) {
		struct pb_poly_stmt *s = &f.s->stmt[i];
		f.st[i].group = -1;
		f.st[i].path = malloc(sizeof(MlirOperation) * (s->depth + 1));
		if (!f.st[i].path)
			abort();
		for (int k = 0; k < s->depth; k++)
			f.st[i].path[k] = s->loops[k];
	}
	if (o->upstream) {
		for (int i = 0; i < f.s->nstmt; i++)
			new_group(&f, i);
	} else {
		group_all(&f);
		for (int b = 0; b < f.s->nbuf && !o->no_fusion; b++) {
			int g = -1;
			int64_t bytes = contract(&f, b, &g);
			if (bytes < 0)
				continue;
			f.local[b] = 1;
			local_bytes[g] += bytes;
			ncontracted[g]++;
		}
	}
	make_plan(&f, plan, local_bytes, ncontracted);
	if (o->upstream)
		plan->before = before;
	for (int i = 0; i < f.s->nstmt; i++)
		free(f.st[i].path);
	for (int i = 0; i < f.ng; i++)
		free(f.g[i].stmt);
	free(f.st);
	free(f.g);
	free(f.local);
	free(local_bytes);
	free(ncontracted);
	pb_poly_scop_free(f.s);
	return PB_OK;
}
