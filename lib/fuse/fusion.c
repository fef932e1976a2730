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
 * must be enabled (--fusion), and the cost model (cost.c) must predict
 * the fused kernel no slower than the two apart on the target GPU: it
 * weighs the launches and traffic saved against the parallelism lost
 * (a reduction's row loop has fewer iterations than an elementwise
 * nest). --min-parallelism adds a hard floor.
 *
 * After that statement-by-statement pass, neighbouring groups are fused
 * whole the same way (all of the second group's statements must join),
 * so that e.g. the fill that starts a reduction follows that reduction
 * into the kernel before it.
 *
 * Contraction: a buffer allocated by @main and accessed only inside one
 * fused nest, always directly and with the shared loop l indexing the
 * same dimension k_l in every access, with no read of a value from before
 * the nest, is replaced by a memref.alloca in the innermost shared loop
 * without the dimensions k_l (a scalar for a matmul accumulator, one row
 * for softmax), when that footprint fits --max-local-bytes. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "fuse/internal.h"
#include "ir/passes.h"

/* Largest footprint of a contracted buffer per iteration of the shared
 * loops: a softmax or LayerNorm row of 4096 floats. */
#define DEFAULT_MAX_LOCAL (16 * 1024)

const char *const pb_fuse_kind_names[] = {"producer", "epilogue", "sibling",
					  "reduction", "attention", NULL};
#define kind_names pb_fuse_kind_names

int pb_fuse_parse_kinds(struct pb_ctx *ctx, const char *s)
{
	int kinds = 0;
	if (!s)
		return PB_FUSE_ALL;
	while (*s) {
		size_t n = strcspn(s, ",");
		int k = -1;
		for (int i = 0; kind_names[i] && k < 0; i++)
			if (strlen(kind_names[i]) == n &&
			    !strncmp(s, kind_names[i], n))
				k = i;
		if (k < 0) {
			pb_error(ctx,
				 "--fusion: unknown kind '%.*s' (expected "
				 "producer, epilogue, sibling, reduction, "
				 "attention)",
				 (int)n, s);
			return -1;
		}
		kinds |= 1 << k;
		s += n + (s[n] == ',');
	}
	return kinds;
}

/* The location of statement "i" of "f" for remarks. */
static MlirLocation stmt_loc(struct pb_fusion *f, int i)
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

/* The position of statement "b" among the memory-based dependence
 * sinks of statement "a" of "f" (lib/poly's index), or -1 when "a" has no
 * dependence to "b". */
static int succ_pos(struct pb_fusion *f, int a, int b)
{
	return pb_poly_succ_pos(f->s, PB_POLY_DEP_MEM, a, b);
}

/* The answers so far for dependence "k" (a position in the memory-based
 * sinks) of statement "a" of "f": "*known" and "*val", one bit per level
 * for the question "q" (0: zero_distance, 1: not_carried). They depend
 * on the dependence relation only, so each is asked of isl once. NULL
 * for a level past the bits. */
static uint32_t *memo(struct pb_fusion *f, int a, int k, int q, int u,
		      uint32_t **val)
{
	if (u >= 32)
		return NULL;
	if (!f->memo[a]) {
		int n = f->s->stmt[a].succ[PB_POLY_DEP_MEM].n;
		f->memo[a] = calloc((size_t)4 * n + 1, sizeof(**f->memo));
		if (!f->memo[a])
			abort();
	}
	*val = &f->memo[a][4 * k + 2 * q + 1];
	return &f->memo[a][4 * k + 2 * q];
}

/* The answer for level "u" of question "q" about dependence "k" of "a"
 * in "f" if known, else -1. */
static int memo_get(struct pb_fusion *f, int a, int k, int q, int u)
{
	uint32_t *val, *known = memo(f, a, k, q, u, &val);
	if (!known || !(*known >> u & 1))
		return -1;
	return *val >> u & 1;
}

/* Record answer "ok" for level "u" of question "q" about dependence "k"
 * of "a" in "f"; returns "ok". */
static int memo_set(struct pb_fusion *f, int a, int k, int q, int u, int ok)
{
	uint32_t *val, *known = memo(f, a, k, q, u, &val);
	if (known) {
		*known |= 1u << u;
		*val |= (uint32_t)ok << u;
	}
	return ok;
}

/* Do the dependences from statement "a" to "b" of "f" only relate
 * instances equal on their first "n" dimensions? (Yes when there are
 * none: the index of lib/poly answers that without isl.) */
static int zero_distance(struct pb_fusion *f, int a, int b, int n)
{
	int k = succ_pos(f, a, b);
	if (k < 0)
		return 1;
	int ok = memo_get(f, a, k, 0, n);
	if (ok >= 0)
		return ok;
	isl_map *d = f->s->stmt[a].succ[PB_POLY_DEP_MEM].map[k];
	isl_map *eq = equal_prefix(d, n);
	isl_bool sub = isl_map_is_subset(d, eq);
	isl_map_free(eq);
	return memo_set(f, a, k, 0, n, sub == isl_bool_true);
}

/* Is the loop at level "u" (shared by statements "a" and "b" of "f")
 * free of dependences from "a" to "b" carried at that level? "k" is the
 * position of "b" among the sinks of "a" (succ_pos), or -1 when not
 * known yet. */
static int not_carried_at(struct pb_fusion *f, int a, int b, int k, int u)
{
	if (k < 0)
		k = succ_pos(f, a, b);
	if (k < 0)
		return 1;
	int ok = memo_get(f, a, k, 1, u);
	if (ok >= 0)
		return ok;
	isl_map *d = isl_map_copy(f->s->stmt[a].succ[PB_POLY_DEP_MEM].map[k]);
	d = isl_map_intersect(d, equal_prefix(d, u));
	isl_map *eq = equal_prefix(d, u + 1);
	isl_bool sub = isl_map_is_subset(d, eq);
	isl_map_free(d);
	isl_map_free(eq);
	return memo_set(f, a, k, 1, u, sub == isl_bool_true);
}

/* Is the loop at level "u" (shared by statements "a" and "b" of "f")
 * free of dependences from "a" to "b" carried at that level? */
static int not_carried(struct pb_fusion *f, int a, int b, int u)
{
	return not_carried_at(f, a, b, -1, u);
}

/* Is there a value-based dependence from statement "a" to "b"? */
static int flows(struct pb_fusion *f, int a, int b)
{
	isl_map *d = pb_poly_deps_find(f->s, PB_POLY_DEP_FLOW, a, b);
	return d && isl_map_is_empty(d) == isl_bool_false;
}

/* The dependences of kind "kind" into each statement of "f" (f->pred),
 * indexed once from lib/poly's successors. */
static void index_preds(struct pb_fusion *f, enum pb_poly_dep kind)
{
	int n = f->s->nstmt;
	struct pb_fuse_pred *p = calloc(n + 1, sizeof(*p));
	if (!p)
		abort();
	for (int pass = 0; pass < 2; pass++) {
		for (int a = 0; a < n; a++) {
			const struct pb_poly_succ *sc = &f->s->stmt[a].succ[kind];
			for (int k = 0; k < sc->n; k++) {
				struct pb_fuse_pred *q = &p[sc->dst[k]];
				if (pass) {
					q->src[q->n] = a;
					q->k[q->n] = k;
				}
				q->n++;
			}
		}
		for (int i = 0; i < n && !pass; i++) {
			p[i].src = malloc(sizeof(int) * (p[i].n + 1));
			p[i].k = malloc(sizeof(int) * (p[i].n + 1));
			if (!p[i].src || !p[i].k)
				abort();
			p[i].n = 0;
		}
	}
	f->pred[kind] = p;
}

/* Free the index of "f" of the dependences into each statement. */
static void free_preds(struct pb_fusion *f)
{
	for (int kind = 0; kind < PB_POLY_NDEP; kind++) {
		for (int i = 0; f->pred[kind] && i < f->s->nstmt; i++) {
			free(f->pred[kind][i].src);
			free(f->pred[kind][i].k);
		}
		free(f->pred[kind]);
		f->pred[kind] = NULL;
	}
}

/* Do statements "a" and "b" read a common buffer? */
static int share_input(struct pb_fusion *f, int a, int b)
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
static int reduces(struct pb_fusion *f, int i)
{
	for (int u = 0; u < f->s->stmt[i].depth; u++)
		if (!not_carried(f, i, i, u))
			return 1;
	return 0;
}

/* The trip count of the loop of node "i". */
#define EXTENT(f, i) ((f)->node[i].extent)
/* Statement "s"'s node at level "u". */
#define PATH(f, s, u) ((f)->path[(s) * (f)->depth + (u)])

/* Record in the log of "f" (while a fusion is tried: f->logging) that
 * "*p", or child "k" of node "node" when "p" is NULL, was "old". */
static void log_old(struct pb_fusion *f, int *p, int node, int k, int old)
{
	if (f->nundo == f->undocap) {
		f->undocap = 2 * f->undocap + 64;
		f->undo = realloc(f->undo, sizeof(*f->undo) * f->undocap);
		if (!f->undo)
			abort();
	}
	f->undo[f->nundo++] = (struct pb_fuse_undo){p, node, k, old};
}

/* Set "*p" (path and child counts) to "v", logged. */
static void put(struct pb_fusion *f, int *p, int v)
{
	if (f->logging && *p != v)
		log_old(f, p, 0, 0, *p);
	*p = v;
}

/* Undo every change recorded since the log was started, latest first. */
static void rollback(struct pb_fusion *f)
{
	while (f->nundo > 0) {
		const struct pb_fuse_undo *u = &f->undo[--f->nundo];
		if (u->p)
			*u->p = u->old;
		else
			f->child[u->node][u->k] = u->old;
	}
}

/* Append child "c" to node "i". */
static void add_child(struct pb_fusion *f, int i, int c)
{
	int n = f->nchild[i];
	if (n == f->cap[i]) {
		f->cap[i] = 2 * f->cap[i] + 2;
		f->child[i] = realloc(f->child[i],
				      sizeof(**f->child) * f->cap[i]);
		if (!f->child[i])
			abort();
	} else if (f->logging) {
		log_old(f, NULL, i, n, f->child[i][n]);
	}
	f->child[i][n] = c;
	put(f, &f->nchild[i], n + 1);
}

/* The last child of node "i" if it is a loop, else -1. */
static int last_loop(const struct pb_fusion *f, int i)
{
	int n = f->nchild[i];
	int c = n ? f->child[i][n - 1] : -1;
	return c >= 0 ? c : -1;
}

/* Put statement "i" back on its own loops: path and children as in the
 * original nest. */
static void reset_stmt(struct pb_fusion *f, int i)
{
	const struct pb_poly_stmt *s = &f->s->stmt[i];
	for (int u = 0; u < s->depth; u++) {
		int nd = f->base[i] + u;
		put(f, &PATH(f, i, u), nd);
		put(f, &f->nchild[nd], 0);
		add_child(f, nd, u + 1 < s->depth ? nd + 1 : -1 - i);
	}
}

/* The outer parallelism of statements "set" (n of them) run as one nest:
 * the product of the trip counts of the outermost chain of loops that
 * carry no dependence among the statements below them and hold a single
 * loop each. Only the pairs with a dependence (lib/poly's index, from a
 * statement to one at the same or a later position in "set") are
 * asked. The loops of the chain go to "chain" when not NULL, their
 * number to *levels, and *dep says whether a carried dependence ended
 * it (else the shape of the tree did). */
static int64_t parallel_chain(struct pb_fusion *f, const int *set, int n,
			      int *chain, int *levels, int *dep)
{
	int64_t par = 1;
	int node = PATH(f, set[0], 0);
	*levels = *dep = 0;
	pb_fuse_mark(f, set, n);
	for (int u = 0;; u++) {
		for (int a = 0; a < n; a++) {
			int sa = set[a];
			if (f->s->stmt[sa].depth <= u || PATH(f, sa, u) != node)
				continue;
			const struct pb_poly_succ *sc =
				&f->s->stmt[sa].succ[PB_POLY_DEP_MEM];
			for (int k = 0; k < sc->n; k++) {
				int sb = sc->dst[k];
				if (f->mark[sb] != f->stamp || f->pos[sb] < a)
					continue;
				if (f->s->stmt[sb].depth > u &&
				    PATH(f, sb, u) == node &&
				    !not_carried_at(f, sa, sb, k, u)) {
					*dep = 1;
					return par;
				}
			}
		}
		par *= EXTENT(f, node);
		if (chain)
			chain[*levels] = node;
		++*levels;
		if (f->nchild[node] != 1 || last_loop(f, node) < 0)
			return par;
		node = last_loop(f, node);
	}
}

/* The same, only the parallelism. */
static int64_t parallelism(struct pb_fusion *f, const int *set, int n)
{
	int levels, dep;
	return parallel_chain(f, set, n, NULL, &levels, &dep);
}

/* parallel_chain of group "gi" of "f" (priced: its walk's levels and
 * why it stopped) with statement "n" added (its paths set, its first
 * unshared loop or itself a new child of its last shared loop). The
 * walk follows the group's chain, whose loops keep their children but
 * the one "n" joins, which now has two and ends it: so only the
 * dependences into "n" are asked, and the group's own stop where the
 * walk reaches it. */
static int64_t parallel_chain_add(struct pb_fusion *f, int gi, int n,
				  int *levels, int *dep)
{
	const struct pb_fuse_group *g = &f->g[gi];
	const struct pb_fuse_pred *p = &f->pred[PB_POLY_DEP_MEM][n];
	int64_t par = 1;
	int node = PATH(f, g->stmt[0], 0);
	*levels = *dep = 0;
	for (int u = 0;; u++) {
		if (u == g->levels && g->dep) {
			*dep = 1;
			return par;
		}
		for (int i = 0; i < p->n && f->s->stmt[n].depth > u &&
				PATH(f, n, u) == node; i++) {
			int a = p->src[i];
			if ((a != n && f->group[a] != gi) ||
			    f->s->stmt[a].depth <= u || PATH(f, a, u) != node)
				continue;
			if (!not_carried_at(f, a, n, p->k[i], u)) {
				*dep = 1;
				return par;
			}
		}
		par *= EXTENT(f, node);
		++*levels;
		if (f->nchild[node] != 1 || last_loop(f, node) < 0)
			return par;
		node = last_loop(f, node);
	}
}

/* Classify the fusion of "n" into group "gi" at "t" shared loops. */
static unsigned classify(struct pb_fusion *f, int gi, int n, int t)
{
	const struct pb_fuse_pred *p = &f->pred[PB_POLY_DEP_FLOW][n];
	int feeds = 0, red = 0;
	/* the statements of "g" ("n" is not one) with a flow into "n" */
	for (int i = 0; i < p->n; i++) {
		int m = p->src[i];
		if (m != n && f->group[m] == gi && flows(f, m, n)) {
			feeds = 1;
			red |= reduces(f, m);
		}
	}
	if (!feeds)
		return PB_FUSE_SIBLING;
	int self = reduces(f, n);
	if (self || t < f->s->stmt[n].depth)
		return red || self ? PB_FUSE_REDUCTION : PB_FUSE_PRODUCER;
	return red ? PB_FUSE_EPILOGUE : PB_FUSE_PRODUCER;
}

/* How many of statement "n"'s loops can be shared with group "g": level
 * by level the last loop of the group at that level must have n's trip
 * count, and every dependence from a statement below it to "n" must stay
 * within one iteration of the shared loops. Stores the shared nodes in
 * "shared" and a statement that blocks the next level in *blocker. */
static int shareable(struct pb_fusion *f, int gi, int n, int *shared,
		     int *blocker)
{
	const struct pb_fuse_group *g = &f->g[gi];
	const struct pb_poly_stmt *s = &f->s->stmt[n];
	const struct pb_fuse_pred *p = &f->pred[PB_POLY_DEP_MEM][n];
	int t = 0;
	*blocker = -1;
	for (; t < s->depth; t++) {
		int c = t == 0 ? PATH(f, g->stmt[0], 0) : last_loop(f, shared[t - 1]);
		if (c < 0 || EXTENT(f, c) != s->extent[t])
			break;
		/* the first statement of "g" (in order, as the sources) with
		 * a dependence into "n" */
		for (int i = 0; i < p->n && *blocker < 0; i++) {
			int m = p->src[i];
			if (m != n && f->group[m] == gi &&
			    f->s->stmt[m].depth > t && PATH(f, m, t) == c &&
			    !zero_distance(f, m, n, t + 1))
				*blocker = m;
		}
		if (*blocker >= 0)
			break;
		shared[t] = c;
	}
	return t;
}

/* Attach statement "n" to group "gi" under its first "t" loops "shared". */
static void attach(struct pb_fusion *f, int gi, int n, const int *shared,
		   int t)
{
	struct pb_fuse_group *g = &f->g[gi];
	for (int u = 0; u < t; u++)
		put(f, &PATH(f, n, u), shared[u]);
	add_child(f, shared[t - 1],
		  t < f->s->stmt[n].depth ? PATH(f, n, t) : -1 - n);
	g->stmt[g->n++] = n;
	g->priced = 0;
	f->group[n] = gi;
}

/* Does a fused nest of outer parallelism "par" keep enough against its
 * parts "a" and "b" apart (outer parallelism par_a and par_b)? Says why
 * not under --remarks unless "quiet". */
static int parallel_enough(struct pb_fusion *f, int64_t par, int64_t par_a,
			   int64_t par_b, MlirLocation loc, int quiet)
{
	int64_t need_a = par_a < f->min_parallel ? par_a : f->min_parallel;
	int64_t need_b = par_b < f->min_parallel ? par_b : f->min_parallel;
	if (par >= need_a && par >= need_b)
		return 1;
	if (f->o->remarks && !quiet)
		pb_remark_at(f->ctx, loc,
			     "not fused: the fused nest would have %lld "
			     "parallel iterations, the nests have %lld "
			     "and %lld (--min-parallelism=%ld)",
			     (long long)par, (long long)par_a,
			     (long long)par_b, f->min_parallel);
	return 0;
}

/* Is the fused nest (predicted time "t", outer parallelism "par") no
 * slower than its parts "a" and "b" apart? Says why not under --remarks
 * unless "quiet". */
static int no_slower(struct pb_fusion *f, double t, int64_t par,
		     int64_t par_a, double t_a, int64_t par_b, double t_b,
		     MlirLocation loc, int quiet)
{
	if (t <= t_a + t_b)
		return 1;
	if (f->o->remarks && !quiet)
		pb_remark_at(f->ctx, loc,
			     "not fused: predicted %.2f us fused (%lld parallel "
			     "iterations) against %.2f + %.2f us apart (%lld and "
			     "%lld) on %s",
			     t * 1e6, (long long)par, t_a * 1e6, t_b * 1e6,
			     (long long)par_a, (long long)par_b, f->target.arch);
	return 0;
}

/* Is running "all" (n statements, with the fused paths) as one kernel
 * profitable against running its parts "a" and "b" apart, whose outer
 * parallelism and predicted times are given? Says why not under
 * --remarks unless "quiet". */
static int profitable(struct pb_fusion *f, int64_t par_a, double t_a,
		      int64_t par_b, double t_b, const int *all, int n,
		      MlirLocation loc, int quiet)
{
	int64_t par = parallelism(f, all, n);
	return parallel_enough(f, par, par_a, par_b, loc, quiet) &&
	       no_slower(f, pb_fuse_cost(f, all, n, par), par, par_a, t_a,
			 par_b, t_b, loc, quiet);
}

/* Price group "gi" of "f" as pb_fuse_cost does, keeping what the price
 * of the group with one more statement starts from
 * (parallel_chain_add, pb_fuse_cost_add). */
static void price_group(struct pb_fusion *f, int gi)
{
	struct pb_fuse_group *g = &f->g[gi];
	g->par = parallel_chain(f, g->stmt, g->n, NULL, &g->levels, &g->dep);
	pb_fuse_cost_group(f, g);
	g->priced = 1;
}

/* Try to fuse statement "n" into group "gi"; 1 when done. */
static int try_fuse(struct pb_fusion *f, int gi, int n)
{
	struct pb_fuse_group *g = &f->g[gi];
	const struct pb_poly_stmt *s = &f->s->stmt[n];
	int *shared = malloc(sizeof(*shared) * (s->depth + 1));
	int blocker, done = 0, related = 0;
	if (!shared)
		abort();
	int t = shareable(f, gi, n, shared, &blocker);
	/* the last statement first: the likeliest producer */
	for (int k = g->n - 1; k >= 0 && !related; k--)
		related = flows(f, g->stmt[k], n) || share_input(f, g->stmt[k], n);
	unsigned kind = t ? classify(f, gi, n, t) : 0;
	if (t == 0 && related && f->o->remarks) {
		if (blocker >= 0)
			pb_remark_at(f->ctx, stmt_loc(f, n),
				     "not fused with the nest before it: a "
				     "dependence from S%d to S%d is not within "
				     "one iteration of the outer loop",
				     blocker, n);
		else
			pb_remark_at(f->ctx, stmt_loc(f, n),
				     "not fused with the nest before it: the "
				     "outer loops differ (%lld iterations, "
				     "not %lld)",
				     (long long)s->extent[0],
				     (long long)EXTENT(f, PATH(f, g->stmt[0], 0)));
	} else if (t && related && !(kind & f->kinds)) {
		if (f->o->remarks)
			pb_remark_at(f->ctx, stmt_loc(f, n),
				     "not fused: %s fusion is disabled",
				     kind_names[__builtin_ctz(kind)]);
	} else if (t && related) {
		/* the group's price is kept from the try that grew it last,
		 * and the price with "n" asks only about n: asking about the
		 * whole group each time would make the greedy growth
		 * quadratic */
		if (!g->priced)
			price_group(f, gi);
		int64_t par_g = g->par, par_n = parallelism(f, &n, 1);
		double t_g = g->t, t_n = pb_fuse_cost(f, &n, 1, par_n);
		int *own = malloc(sizeof(*own) * (s->depth + 1));
		if (!own)
			abort();
		memcpy(own, &PATH(f, n, 0), sizeof(*own) * s->depth);
		for (int u = 0; u < t; u++)
			PATH(f, n, u) = shared[u];
		/* n's loop t (or body) would be a new child of shared[t-1] */
		add_child(f, shared[t - 1], t < s->depth ? own[t] : -1 - n);
		int levels, dep;
		int64_t par = parallel_chain_add(f, gi, n, &levels, &dep);
		done = parallel_enough(f, par, par_g, par_n, stmt_loc(f, n), 0);
		/* g->stmt has room for every statement: "n" after g's */
		g->stmt[g->n] = n;
		double tf = done ? pb_fuse_cost_add(f, g, g->stmt, g->n + 1,
						    par, 0) : 0;
		done = done && no_slower(f, tf, par, par_g, t_g, par_n, t_n,
					 stmt_loc(f, n), 0);
		if (done)
			pb_fuse_cost_add(f, g, g->stmt, g->n + 1, par, 1);
		f->nchild[shared[t - 1]]--;
		memcpy(&PATH(f, n, 0), own, sizeof(*own) * s->depth);
		free(own);
		if (done) {
			attach(f, gi, n, shared, t);
			g->kinds |= kind;
			g->par = par;
			g->levels = levels;
			g->dep = dep;
			g->priced = 1;
			if (f->o->remarks)
				pb_remark_at(f->ctx, stmt_loc(f, n),
					     "fused (%s) into the nest of S%d at "
					     "depth %d of %d",
					     kind_names[__builtin_ctz(kind)],
					     g->stmt[0], t, s->depth);
		}
	}
	free(shared);
	return done;
}

/* Start a new group holding statement "i". */
static int new_group(struct pb_fusion *f, int i)
{
	struct pb_fuse_group *g = &f->g[f->ng];
	g->stmt = malloc(sizeof(*g->stmt) * (f->s->nstmt + 1));
	if (!g->stmt)
		abort();
	g->stmt[0] = i;
	g->n = 1;
	g->kinds = 0;
	g->priced = 0;
	f->group[i] = f->ng;
	return f->ng++;
}

/* Try to fuse group "b" into the group "a" before it: every statement of
 * "b" in order must join "a" under at least one shared loop, and the
 * result must stay parallel enough. Undone entirely otherwise. */
static int try_fuse_groups(struct pb_fusion *f, int a, int b)
{
	struct pb_fuse_group *ga = &f->g[a], *gb = &f->g[b];
	int related = 0;
	/* a value-based dependence from "a" into "b" (lib/poly's index) */
	pb_fuse_mark(f, gb->stmt, gb->n);
	for (int i = 0; i < ga->n && !related; i++) {
		int sa = ga->stmt[i];
		const struct pb_poly_succ *sc =
			&f->s->stmt[sa].succ[PB_POLY_DEP_FLOW];
		for (int k = 0; k < sc->n && !related; k++)
			related = f->mark[sc->dst[k]] == f->stamp &&
				  flows(f, sa, sc->dst[k]);
	}
	if (!related || f->s->stmt[ga->stmt[0]].kind != PB_POLY_NEST ||
	    f->s->stmt[gb->stmt[0]].kind != PB_POLY_NEST)
		return 0;
	int *shared = malloc(sizeof(int) * (f->depth + 1));
	int na = ga->n, ok = 1;
	unsigned kinds = ga->kinds | gb->kinds;
	if (!shared)
		abort();
	int64_t par_a = parallelism(f, ga->stmt, ga->n);
	int64_t par_b = parallelism(f, gb->stmt, gb->n);
	double t_a = pb_fuse_cost(f, ga->stmt, ga->n, par_a);
	double t_b = pb_fuse_cost(f, gb->stmt, gb->n, par_b);
	/* the changes to the trees are logged, and undone on failure */
	f->logging = 1;
	for (int k = 0; k < gb->n && ok; k++) {
		int n = gb->stmt[k], blocker;
		reset_stmt(f, n);
		int t = shareable(f, a, n, shared, &blocker);
		if (t == 0) {
			ok = 0;
			break;
		}
		unsigned kind = classify(f, a, n, t);
		ok = (kind & f->kinds) != 0;
		kinds |= kind;
		if (ok)
			attach(f, a, n, shared, t);
	}
	if (ok)
		ok = profitable(f, par_a, t_a, par_b, t_b, ga->stmt, ga->n,
				stmt_loc(f, gb->stmt[0]), gb->n == 1);
	f->logging = 0;
	if (ok) {
		ga->kinds = kinds;
		if (f->o->remarks)
			pb_remark_at(f->ctx, stmt_loc(f, gb->stmt[0]),
				     "fused the kernel of S%d into the one of "
				     "S%d",
				     gb->stmt[0], ga->stmt[0]);
	} else {
		rollback(f);
		for (int k = 0; k < gb->n; k++)
			f->group[gb->stmt[k]] = b;
		ga->n = na;
	}
	f->nundo = 0;
	free(shared);
	return ok;
}

/* Group the statements of "f": greedily in order, statement by statement,
 * then neighbouring groups whole (a fill that starts the next reduction
 * can then follow the reduction before it into one kernel). */
static void group_all(struct pb_fusion *f)
{
	int cur = -1;
	index_preds(f, PB_POLY_DEP_FLOW);
	index_preds(f, PB_POLY_DEP_MEM);
	for (int i = 0; i < f->s->nstmt; i++) {
		int nest = f->s->stmt[i].kind == PB_POLY_NEST;
		if (nest && cur >= 0 && !f->o->no_fusion && try_fuse(f, cur, i))
			continue;
		cur = new_group(f, i);
		if (!nest)
			cur = -1;
	}
	/* each sweep fuses every group it can into the one kept before
	 * it and closes the gaps as it goes */
	for (int changed = !f->o->no_fusion; changed;) {
		int w = 0;
		changed = 0;
		for (int r = 0; r < f->ng; r++) {
			if (w > 0 && try_fuse_groups(f, w - 1, r)) {
				free(f->g[r].stmt);
				changed = 1;
				continue;
			}
			if (w != r) {
				f->g[w] = f->g[r];
				for (int k = 0; k < f->g[w].n; k++)
					f->group[f->g[w].stmt[k]] = w;
			}
			w++;
		}
		f->ng = w;
	}
}

/* Is "op" an affine.for running exactly once (from constant 0 to 1, step
 * 1, no results)? */
static int unit_loop(MlirOperation op)
{
	if (!pb_ir_op_is(op, "affine.for") || mlirOperationGetNumResults(op))
		return 0;
	const char *names[2] = {"lowerBoundMap", "upperBoundMap"};
	for (int i = 0; i < 2; i++) {
		MlirAttribute a = pb_ir_attr(op, names[i]);
		if (mlirAttributeIsNull(a) || !mlirAttributeIsAAffineMap(a))
			return 0;
		MlirAffineMap m = mlirAffineMapAttrGetValue(a);
		if (mlirAffineMapGetNumResults(m) != 1 ||
		    !mlirAffineExprIsAConstant(mlirAffineMapGetResult(m, 0)) ||
		    mlirAffineConstantExprGetValue(mlirAffineMapGetResult(m, 0)) !=
			    i)
			return 0;
	}
	MlirAttribute st = pb_ir_attr(op, "step");
	return !mlirAttributeIsNull(st) && mlirAttributeIsAInteger(st) &&
	       mlirIntegerAttrGetValueInt(st) == 1;
}

/* Replace the loops of @main's nests that run once ("for %n = 0 to 1",
 * the batch dimension of most models) by their bodies with the counter
 * 0, so that nests of different ranks line up by their real loops (a 2-d
 * matmul and the 3-d bias add after it). */
static void drop_unit_loops(MlirBlock body)
{
	struct pb_ir_ops loops = {0};
	for (MlirOperation op = mlirBlockGetFirstOperation(body);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
		if (pb_ir_op_is(op, "affine.for")) {
			if (unit_loop(op))
				pb_ir_ops_push(&loops, op);
			pb_ir_collect(op, "affine.for", &loops);
		}
	for (int i = 0; i < loops.n; i++) {
		MlirOperation l = loops.v[i];
		if (!unit_loop(l))
			continue;
		MlirOperation zero = pb_ir_int_constant(
			mlirIndexTypeGet(mlirOperationGetContext(l)),
			mlirOperationGetLocation(l), 0);
		/* before the whole nest, which stays perfect */
		mlirBlockInsertOwnedOperationBefore(
			body, pb_ir_ancestor_in(l, body), zero);
		pb_fuse_splice_body(l, mlirOperationGetResult(zero, 0), l);
		mlirOperationDestroy(l);
	}
	pb_ir_ops_free(&loops);
}

/* Set up the abstract loop trees of "f": one chain per nest. */
static void init_trees(struct pb_fusion *f)
{
	int n = f->s->nstmt;
	f->depth = 1;
	for (int i = 0; i < n; i++) {
		if (f->s->stmt[i].depth > f->depth)
			f->depth = f->s->stmt[i].depth;
		f->nnode += f->s->stmt[i].depth;
	}
	f->node = calloc(f->nnode + 1, sizeof(*f->node));
	f->nchild = calloc(f->nnode + 1, sizeof(*f->nchild));
	f->child = calloc(f->nnode + 1, sizeof(*f->child));
	f->cap = calloc(f->nnode + 1, sizeof(*f->cap));
	f->path = calloc((size_t)n * f->depth + 1, sizeof(*f->path));
	f->base = calloc(n + 1, sizeof(*f->base));
	f->group = calloc(n + 1, sizeof(*f->group));
	f->g = calloc(n + 1, sizeof(*f->g));
	f->local = calloc(f->s->nbuf + 1, 1);
	f->mark = calloc(n + 1, sizeof(*f->mark));
	f->pos = calloc(n + 1, sizeof(*f->pos));
	f->memo = calloc(n + 1, sizeof(*f->memo));
	if (!f->node || !f->nchild || !f->child || !f->cap || !f->path ||
	    !f->base ||
	    !f->group || !f->g || !f->local || !f->mark || !f->pos ||
	    !f->memo)
		abort();
	for (int i = 0, nd = 0; i < n; i++) {
		const struct pb_poly_stmt *s = &f->s->stmt[i];
		f->base[i] = nd;
		for (int u = 0; u < s->depth; u++, nd++) {
			f->node[nd].extent = s->extent[u];
			f->node[nd].creator = i;
			f->node[nd].level = u;
		}
		reset_stmt(f, i);
	}
}

/* Free what "f" keeps of the trees, groups and caches of one scop. */
static void free_trees(struct pb_fusion *f)
{
	void *arrays[] = {f->node, f->nchild, f->child, f->cap,  f->path,
			  f->base, f->group,  f->g,     f->local, f->mark,
			  f->pos,  f->undo};
	for (int i = 0; i < f->ng; i++)
		free(f->g[i].stmt);
	for (int i = 0; i < f->nnode; i++)
		free(f->child[i]);
	for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
		free(arrays[i]);
	pb_fuse_traffic_free(f);
	free_preds(f);
	pb_fuse_users_free(&f->users);
	for (int i = 0; i < f->s->nstmt; i++)
		free(f->memo[i]);
	free(f->memo);
}

/* When "changed" (a rewrite of "body" made the scop *s stale), lift
 * "body" again into *s. Returns PB_ERR when that fails. */
static int refresh(struct pb_ctx *ctx, MlirBlock body,
		   struct pb_poly_scop **s, int changed)
{
	if (!changed)
		return PB_OK;
	(void)body;
	*s = pb_poly_extract_update(ctx, *s);
	return *s ? PB_OK : PB_ERR;
}

/* Add the traffic of every statement of "s" as its own kernel to "t". */
static void measure(const struct pb_poly_scop *s, struct pb_fuse_totals *t)
{
	for (int i = 0; i < s->nstmt; i++) {
		int64_t r, w;
		pb_fuse_traffic(s, &i, 1, NULL, &r, &w);
		t->kernels++;
		t->bytes_read += r;
		t->bytes_written += w;
	}
}

/* Fill "p" with the kernels of "f" and their traffic; its "before"
 * totals (every statement its own kernel) are measured only when
 * "before" is NULL, else copied from "before". */
static void make_plan(struct pb_fusion *f, struct pb_fuse_plan *p,
		      const int64_t *local_bytes, const int *ncontracted,
		      const struct pb_fuse_totals *before)
{
	p->n = f->ng;
	p->k = calloc(f->ng ? f->ng : 1, sizeof(*p->k));
	if (!p->k)
		abort();
	for (int i = 0; i < f->ng; i++) {
		struct pb_fuse_group *g = &f->g[i];
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
	if (before)
		p->before = *before;
	else
		measure(f->s, &p->before);
}

void pb_fuse_plan_free(struct pb_fuse_plan *p)
{
	free(p->k);
	p->k = NULL;
	p->n = 0;
}

int pb_fuse_nests(struct pb_ctx *ctx, MlirModule m, MlirBlock body,
		  const struct pb_fuse_opts *o, struct pb_fuse_plan *plan)
{
	struct pb_fusion f = {0};
	struct pb_fuse_totals before = {0};
	memset(plan, 0, sizeof(*plan));
	f.ctx = ctx;
	f.o = o;
	f.kinds = pb_fuse_parse_kinds(ctx, o->fusion);
	if (f.kinds < 0)
		return PB_ERR;
	f.min_parallel = o->min_parallel > 0 ? o->min_parallel : 0;
	if (pb_target_get(ctx, NULL, ctx->target_file, &f.target) != PB_OK)
		return PB_ERR;
	f.max_local = o->max_local > 0 ? o->max_local : DEFAULT_MAX_LOCAL;
	if (!o->no_fusion && !o->upstream) {
		drop_unit_loops(body);
		pb_fuse_bypass_unit_reshapes(body);
	}
	struct pb_poly_scop *s0 = NULL;
	if (!o->no_fusion) {
		/* measure the unfused nests; fold, reorder, or let MLIR fuse */
		pb_phase("pb-fuse", "unit loops");
		s0 = pb_poly_extract(ctx, ctx->isl, body);
		if (!s0)
			return PB_ERR;
		pb_phase("pb-fuse", "extract");
		measure(s0, &before);
		pb_phase("pb-fuse", "measure");
		int attention = (o->attention || (f.kinds & PB_FUSE_ATTENTION)) &&
				!o->upstream;
		if (!o->upstream && (f.kinds & PB_FUSE_PRODUCER) &&
		    (pb_fuse_fold_each(ctx, o, &s0, pb_fuse_fold_pad) < 0 ||
		     pb_fuse_fold_each(ctx, o, &s0, pb_fuse_fold_copy) < 0 ||
		     refresh(ctx, body, &s0,
			     pb_fuse_reductions_inward(ctx, o, s0))))
			return PB_ERR;
		pb_phase("pb-fuse", "fold pads, copies");
		/* QK^T -> softmax -> PV as one nest (attention.c) */
		if (attention) {
			int n = pb_fuse_attention(ctx, o, &s0);
			if (n < 0 || refresh(ctx, body, &s0, n))
				return PB_ERR;
		}
		/* reads of a copy through a reshape merging two of its
		 * dimensions (repeat_kv): split the readers' loops, then
		 * fold the copy */
		if (!o->upstream && (f.kinds & PB_FUSE_PRODUCER)) {
			int n = pb_fuse_split_merged(ctx, o, s0, body);
			if (refresh(ctx, body, &s0, n) ||
			    (n && pb_fuse_fold_each(ctx, o, &s0,
						    pb_fuse_fold_copy) < 0))
				return PB_ERR;
		}
		if (o->upstream) {
			pb_poly_scop_free(s0);
			s0 = NULL;
			if (pb_ir_run_pipeline(ctx, m, pb_passes_upstream_fusion) != PB_OK)
				return PB_ERR;
		}
	}
	f.s = s0 ? s0 : pb_poly_extract(ctx, ctx->isl, body);
	if (!f.s)
		return PB_ERR;
	pb_phase("pb-fuse", "attention, extract");
	init_trees(&f);
	int64_t *local_bytes = calloc(f.s->nstmt + 1, sizeof(*local_bytes));
	int *ncontracted = calloc(f.s->nstmt + 1, sizeof(*ncontracted));
	if (!local_bytes || !ncontracted)
		abort();
	if (o->upstream) {
		for (int i = 0; i < f.s->nstmt; i++)
			new_group(&f, i);
	} else {
		group_all(&f);
		pb_phase("pb-fuse", "group");
		pb_fuse_apply(&f);
		pb_phase("pb-fuse", "apply");
		for (int b = 0; b < f.s->nbuf && !o->no_fusion; b++) {
			int g = -1;
			int64_t bytes = pb_fuse_contract(&f, b, &g);
			if (bytes < 0)
				continue;
			f.local[b] = 1;
			local_bytes[g] += bytes;
			ncontracted[g]++;
		}
		/* the outer loops that isl found parallel become
		 * affine.parallel: the kernels' private buffers and the
		 * folded pads' loads hide that from affine-parallelize */
		int *chain = malloc(sizeof(*chain) * (f.depth + 1));
		if (!chain)
			abort();
		for (int g = 0; g < f.ng && !o->no_fusion; g++) {
			int nchain = 0;
			if (f.s->stmt[f.g[g].stmt[0]].kind != PB_POLY_NEST)
				continue;
			int dep;
			parallel_chain(&f, f.g[g].stmt, f.g[g].n, chain, &nchain,
				       &dep);
			pb_fuse_parallelize(&f, g, chain, nchain);
		}
		free(chain);
		pb_phase("pb-fuse", "contract, parallelize");
	}
	/* with fusion, "before" was measured before the folds */
	make_plan(&f, plan, local_bytes, ncontracted,
		  o->no_fusion ? NULL : &before);
	pb_phase("pb-fuse", "plan");
	free(local_bytes);
	free(ncontracted);
	free_trees(&f);
	pb_poly_scop_free(f.s);
	return PB_OK;
}
