/* The original schedule of a scop and its dependences (lib/poly).
 *
 * The schedule tree of statements S0 (a NEST of depth 2) and S1 (OPAQUE):
 *
 *	domain: { S0[i0, i1] : ...; S1[] }
 *	  sequence
 *	    filter: { S0[i0, i1] }
 *	      band: [{ S0[i0, i1] -> [(i0)] }, { S0[i0, i1] -> [(i1)] }]
 *	    filter: { S1[] }
 *
 * and its flat form { S0[i0, i1] -> [0, i0, i1]; S1[] -> [1, 0, 0] }. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <isl/flow.h>
#include <isl/schedule_node.h>

#include "poly/internal.h"

void pb_poly_stmt_tuple(struct pb_buf *out, const struct pb_poly_stmt *st)
{
	pb_buf_printf(out, "S%d[", st->id);
	for (int k = 0; k < st->depth; k++)
		pb_buf_printf(out, "%si%d", k ? ", " : "", k);
	pb_buf_puts(out, "]");
}

/* The identity partial schedule { S<id>[i..] -> [i..] } of NEST "st". */
static __isl_give isl_multi_union_pw_aff *band_of(isl_ctx *ctx,
						  const struct pb_poly_stmt *st)
{
	struct pb_buf str = {0};
	pb_buf_puts(&str, "{ ");
	pb_poly_stmt_tuple(&str, st);
	pb_buf_puts(&str, " -> [");
	for (int k = 0; k < st->depth; k++)
		pb_buf_printf(&str, "%si%d", k ? ", " : "", k);
	pb_buf_puts(&str, "] }");
	isl_union_map *m = isl_union_map_read_from_str(ctx, str.data);
	pb_buf_free(&str);
	return isl_multi_union_pw_aff_from_union_map(m);
}

/* The sequence of the "n" statements "idx" of "s" (increasing), each
 * NEST under its band: the original order restricted to them; then, when
 * "tail" is not NULL, the instances of set "tail" (taken), unordered,
 * after them all. */
static __isl_give isl_schedule *tree_tail(struct pb_poly_scop *s,
					  const int *idx, int n,
					  __isl_take isl_set *tail)
{
	isl_union_set *dom = isl_union_set_empty(isl_space_params_alloc(s->ctx, 0));
	for (int i = 0; i < n; i++)
		dom = isl_union_set_union(dom,
			isl_union_set_from_set(isl_set_copy(s->stmt[idx[i]].domain)));
	if (tail)
		dom = isl_union_set_add_set(dom, isl_set_copy(tail));
	isl_schedule *sch = isl_schedule_from_domain(dom);
	if (!n && !tail)
		return sch;
	isl_union_set_list *filters = isl_union_set_list_alloc(s->ctx, n + 1);
	for (int i = 0; i < n; i++)
		filters = isl_union_set_list_add(filters,
			isl_union_set_from_set(isl_set_copy(s->stmt[idx[i]].domain)));
	if (tail)
		filters = isl_union_set_list_add(filters,
						 isl_union_set_from_set(tail));
	isl_schedule_node *nd = isl_schedule_get_root(sch);
	isl_schedule_free(sch);
	nd = isl_schedule_node_child(nd, 0);
	nd = isl_schedule_node_insert_sequence(nd, filters);
	for (int i = 0; i < n; i++) {
		const struct pb_poly_stmt *st = &s->stmt[idx[i]];
		if (st->kind != PB_POLY_NEST)
			continue;
		nd = isl_schedule_node_child(nd, i);
		nd = isl_schedule_node_child(nd, 0);
		nd = isl_schedule_node_insert_partial_schedule(nd,
				band_of(s->ctx, st));
		nd = isl_schedule_node_parent(nd);
		nd = isl_schedule_node_parent(nd);
	}
	sch = isl_schedule_node_get_schedule(nd);
	isl_schedule_node_free(nd);
	return sch;
}

/* The sequence of the "n" statements "idx" of "s" (tree_tail with no
 * tail). */
static __isl_give isl_schedule *tree(struct pb_poly_scop *s, const int *idx,
				     int n)
{
	return tree_tail(s, idx, n, NULL);
}

/* The flat schedule { S<id>[i..] -> [id, i.., 0..] }, padded with zeros to
 * 1 + the largest depth. */
static __isl_give isl_union_map *flat(struct pb_poly_scop *s)
{
	int max = 0;
	for (int i = 0; i < s->nstmt; i++)
		if (s->stmt[i].depth > max)
			max = s->stmt[i].depth;
	struct pb_buf str = {0};
	pb_buf_puts(&str, "{ ");
	for (int i = 0; i < s->nstmt; i++) {
		const struct pb_poly_stmt *st = &s->stmt[i];
		pb_buf_printf(&str, "%sS%d[", i ? "; " : "", st->id);
		for (int k = 0; k < st->depth; k++)
			pb_buf_printf(&str, "%si%d", k ? ", " : "", k);
		pb_buf_printf(&str, "] -> [%d", st->id);
		for (int k = 0; k < max; k++)
			if (k < st->depth)
				pb_buf_printf(&str, ", i%d", k);
			else
				pb_buf_puts(&str, ", 0");
		pb_buf_puts(&str, "]");
	}
	pb_buf_puts(&str, " }");
	isl_union_map *m = isl_union_map_read_from_str(s->ctx, str.data);
	pb_buf_free(&str);
	return isl_union_map_intersect_domain(m, isl_union_set_copy(s->domain));
}

void pb_poly_sched_build(struct pb_poly_scop *s)
{
	int *all = malloc(sizeof(*all) * (s->nstmt + 1));
	if (!all)
		abort();
	for (int i = 0; i < s->nstmt; i++)
		all[i] = i;
	s->schedule = tree(s, all, s->nstmt);
	free(all);
	s->schedule_map = flat(s);
}

/* The may dependences from "must" and "may" sources to "sink" accesses
 * under schedule "sch"; the accesses with no source go to *no_source
 * when it is not NULL. */
static __isl_give isl_union_map *flow(__isl_keep isl_schedule *sch,
				      __isl_take isl_union_map *sink,
				      __isl_take isl_union_map *must,
				      __isl_take isl_union_map *may,
				      isl_union_map **no_source)
{
	isl_union_access_info *ai = isl_union_access_info_from_sink(sink);
	ai = isl_union_access_info_set_must_source(ai, must);
	ai = isl_union_access_info_set_may_source(ai, may);
	ai = isl_union_access_info_set_schedule(ai, isl_schedule_copy(sch));
	isl_union_flow *f = isl_union_access_info_compute_flow(ai);
	if (no_source)
		*no_source = isl_union_flow_get_may_no_source(f);
	isl_union_map *dep = isl_union_flow_get_may_dependence(f);
	isl_union_flow_free(f);
	return dep;
}

/* An empty union map in the context of "s". */
static __isl_give isl_union_map *none(struct pb_poly_scop *s)
{
	return isl_union_map_empty(isl_space_params_alloc(s->ctx, 0));
}

/* The accesses of a scop to one buffer: the statements that make them
 * ("stmt", n of them, increasing) and the relations S -> B<b> (reads,
 * must- and may-writes). */
struct buf_acc {
	int n;
	int *stmt;
	isl_union_map *acc[3];
};

/* The accesses of "s" grouped by buffer, being built by by_buf. */
struct by_buf_data {
	struct pb_poly_scop *s;
	struct buf_acc *ba;
	int stmt, kind;
};

/* isl_union_map_foreach_map callback: add access relation "map" S -> B<b>
 * of statement d->stmt to buffer b's accesses of kind d->kind in "user". */
static isl_stat by_buf(__isl_take isl_map *map, void *user)
{
	struct by_buf_data *d = user;
	const char *name = isl_map_get_tuple_name(map, isl_dim_out);
	char *end = NULL;
	long b = name && name[0] == 'B' ? strtol(name + 1, &end, 10) : -1;
	if (b < 0 || b >= d->s->nbuf || *end) {
		isl_map_free(map);
		return isl_stat_error;
	}
	struct buf_acc *ba = &d->ba[b];
	if (!ba->n || ba->stmt[ba->n - 1] != d->stmt) {
		ba->stmt = realloc(ba->stmt, sizeof(*ba->stmt) * (ba->n + 1));
		if (!ba->stmt)
			abort();
		ba->stmt[ba->n++] = d->stmt;
	}
	ba->acc[d->kind] = isl_union_map_add_map(ba->acc[d->kind], map);
	return isl_stat_ok;
}

/* The per-statement maps being sorted by per_stmt: the statements of
 * the accesses ("ba") and the maps, one per statement. */
struct per_stmt_data {
	const struct buf_acc *ba;
	isl_map **map;
};

/* isl_union_map_foreach_map callback: file "m" under its statement. */
static isl_stat per_stmt_map(__isl_take isl_map *m, void *user)
{
	struct per_stmt_data *d = user;
	const char *name = isl_map_get_tuple_name(m, isl_dim_in);
	long id = name && name[0] == 'S' ? strtol(name + 1, NULL, 10) : -1;
	int lo = 0, hi = d->ba->n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (d->ba->stmt[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= d->ba->n || d->ba->stmt[lo] != id) {
		isl_map_free(m);
		return isl_stat_error;
	}
	d->map[lo] = d->map[lo] ? isl_map_union(d->map[lo], m) : m;
	return isl_stat_ok;
}

/* The maps of "acc" (accesses of the statements of "ba" to one buffer)
 * by statement position in "ba" (NULL where a statement has none). */
static isl_map **per_stmt(const struct buf_acc *ba,
			  __isl_keep isl_union_map *acc)
{
	struct per_stmt_data d = {ba, calloc(ba->n + 1, sizeof(isl_map *))};
	if (!d.map)
		abort();
	isl_union_map_foreach_map(acc, &per_stmt_map, &d);
	return d.map;
}

/* Add to "*dep" the pairs of instances of "a" and "b" (accesses of two
 * statements to one buffer) that touch the same element. */
static void add_pairs(isl_map **dep, __isl_keep isl_map *a,
		      __isl_keep isl_map *b)
{
	if (!a || !b)
		return;
	isl_map *m = isl_map_apply_range(isl_map_copy(a),
					 isl_map_reverse(isl_map_copy(b)));
	*dep = *dep ? isl_map_union(*dep, m) : m;
}

/* The memory-based dependences (read-after-write, write-after-read,
 * write-after-write) through one buffer whose accesses are "ba": pairs of
 * instances that touch the same element, one of them writing, the source
 * first in the original order. Statements run one after the other, the
 * instances of one in the lexicographic order of its loops, so this is
 * asked of isl pair by pair, without a schedule (what isl's flow
 * analysis with only may sources computes, for far less). */
static __isl_give isl_union_map *mem_deps(struct pb_poly_scop *s,
					  const struct buf_acc *ba)
{
	isl_map **r = per_stmt(ba, ba->acc[0]);
	isl_map **w = per_stmt(ba, ba->acc[2]);
	isl_union_map *res = none(s);
	for (int i = 0; i < ba->n; i++) {
		if (!w[i] && !r[i])
			continue;
		for (int j = i; j < ba->n; j++) {
			isl_map *dep = NULL;
			add_pairs(&dep, w[i], r[j]);
			add_pairs(&dep, r[i], w[j]);
			add_pairs(&dep, w[i], w[j]);
			if (!dep)
				continue;
			if (i == j)
				dep = isl_map_intersect(dep, isl_map_lex_lt(
					isl_set_get_space(
						s->stmt[ba->stmt[i]].domain)));
			dep = isl_map_coalesce(dep);
			if (isl_map_is_empty(dep) == isl_bool_true)
				isl_map_free(dep);
			else
				res = isl_union_map_add_map(res, dep);
		}
	}
	for (int i = 0; i < ba->n; i++) {
		isl_map_free(r[i]);
		isl_map_free(w[i]);
	}
	free(r);
	free(w);
	return res;
}

/* "m" with the statement S<i> of its tuple "t" renamed S<to[i]>; NULL
 * when it has none. */
static __isl_give isl_map *rename_tuple(__isl_take isl_map *m, enum isl_dim_type t,
				  const int *to, int nto)
{
	const char *name = isl_map_get_tuple_name(m, t);
	char *end = NULL;
	long id = name && name[0] == 'S' ? strtol(name + 1, &end, 10) : -1;
	if (id < 0 || id >= nto || *end || to[id] < 0)
		return isl_map_free(m);
	char buf[32];
	snprintf(buf, sizeof(buf), "S%d", to[id]);
	return isl_map_set_tuple_name(m, t, buf);
}

/* Renaming the statements of union maps, built by rename_map. */
struct rename_data {
	const int *to;
	int nto;
	const char *buf; /* the new name of the buffer tuple */
	isl_union_map *res;
};

/* isl_union_map_foreach_map callback: add "m" renamed to the result. */
static isl_stat rename_map(__isl_take isl_map *m, void *user)
{
	struct rename_data *d = user;
	const char *out = isl_map_get_tuple_name(m, isl_dim_out);
	int sink = out && out[0] == 'S';
	m = rename_tuple(m, isl_dim_in, d->to, d->nto);
	if (sink)
		m = rename_tuple(m, isl_dim_out, d->to, d->nto);
	else
		m = isl_map_set_tuple_name(m, isl_dim_out, d->buf);
	if (!m)
		return isl_stat_error;
	d->res = isl_union_map_add_map(d->res, m);
	return isl_stat_ok;
}

/* "m" (dependences, or accesses to one buffer) with every statement
 * tuple S<i> renamed S<to[i]> and the buffer tuple "buf"; NULL when some
 * statement has no new name. */
static __isl_give isl_union_map *renamed(__isl_keep isl_union_map *m,
					 const int *to, int nto,
					 const char *buf)
{
	struct rename_data d = {to, nto, buf,
				isl_union_map_empty(isl_union_map_get_space(m))};
	if (isl_union_map_foreach_map(m, &rename_map, &d) < 0)
		return isl_union_map_free(d.res);
	return d.res;
}

/* Dependences already computed for a buffer, by what they depend on
 * (buf_key): a model's repeated blocks give many buffers accessed alike
 * by statements alike (the accumulators of same-shaped convolutions),
 * whose value-based flow, the costliest part of the extraction, is then
 * computed once. The dependences are kept with the statements renamed
 * S0, S1, ... in their order of access and the buffer "B". */
struct memo {
	int n, cap;
	struct pb_buf *key;
	uint64_t *hash;
	isl_union_map **flow, **mem, **no_source;
};

/* FNV-1a of the "len" bytes at "p". */
static uint64_t fnv(const char *p, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

/* Append the text of "m" (taken) to "out"; 0 when it is NULL. */
static int put_umap(struct pb_buf *out, __isl_take isl_union_map *m)
{
	char *t = m ? isl_union_map_to_str(m) : NULL;
	isl_union_map_free(m);
	if (!t)
		return 0;
	pb_buf_puts(out, t);
	pb_buf_puts(out, "\n");
	free(t);
	return 1;
}

/* Write into "out" all that buf_deps computes the dependences through
 * buffer "b" of "s" (accesses "ba") from, its statements renamed by
 * "to" (S<stmt[k]> -> S<k>, -1 elsewhere): per accessing statement its
 * kind and domain (the schedule tree), then the reads, must- and
 * may-writes. 0 when isl fails. */
static int buf_key(struct pb_poly_scop *s, const struct buf_acc *ba,
		   const int *to, struct pb_buf *out)
{
	for (int k = 0; k < ba->n; k++) {
		const struct pb_poly_stmt *st = &s->stmt[ba->stmt[k]];
		char name[32];
		snprintf(name, sizeof(name), "S%d", k);
		isl_set *d = isl_set_set_tuple_name(isl_set_copy(st->domain),
						    name);
		char *t = d ? isl_set_to_str(d) : NULL;
		isl_set_free(d);
		if (!t)
			return 0;
		pb_buf_printf(out, "%d %d %s\n", st->kind, st->depth, t);
		free(t);
	}
	for (int q = 0; q < 3; q++)
		if (!put_umap(out, renamed(ba->acc[q], to, s->nstmt, "B")))
			return 0;
	return 1;
}

/* The entry of "memo" with key "key" (hash "h"), or -1. */
static int memo_find(const struct memo *memo, const struct pb_buf *key,
		     uint64_t h)
{
	for (int i = 0; i < memo->n; i++)
		if (memo->hash[i] == h && memo->key[i].len == key->len &&
		    !memcmp(memo->key[i].data, key->data, key->len))
			return i;
	return -1;
}

static void memo_free(struct memo *memo)
{
	for (int i = 0; i < memo->n; i++) {
		pb_buf_free(&memo->key[i]);
		isl_union_map_free(memo->flow[i]);
		isl_union_map_free(memo->mem[i]);
		isl_union_map_free(memo->no_source[i]);
	}
	free(memo->key);
	free(memo->hash);
	free(memo->flow);
	free(memo->mem);
	free(memo->no_source);
}

/* Number the writers of one buffer (accesses "ba") by class into
 * "cls" (by position in "ba", -1 for a statement that does not write
 * it): two writers are in one class when their footprints (the elements
 * they may write) meet, directly or through other writers. Each class's
 * footprint goes to "foot" (one set per class). Returns the number of
 * classes, -1 on an isl error. */
static int writer_classes(const struct buf_acc *ba, int *cls,
			  isl_set ***foot)
{
	isl_map **w = per_stmt(ba, ba->acc[2]);
	int *parent = malloc(sizeof(*parent) * (ba->n + 1));
	isl_set **fp = calloc(ba->n + 1, sizeof(*fp));
	int n = 0, ok = 1;
	if (!parent || !fp)
		abort();
	for (int k = 0; k < ba->n; k++) {
		parent[k] = k;
		fp[k] = w[k] ? isl_map_range(isl_map_copy(w[k])) : NULL;
		ok &= !w[k] || fp[k];
	}
	/* union-find over the pairs of writers whose footprints meet */
	for (int i = 0; i < ba->n && ok; i++)
		for (int j = i + 1; j < ba->n && fp[i] && ok; j++) {
			if (!fp[j])
				continue;
			int ri = i, rj = j;
			while (parent[ri] != ri)
				ri = parent[ri];
			while (parent[rj] != rj)
				rj = parent[rj];
			if (ri == rj)
				continue;
			isl_bool d = isl_set_is_disjoint(fp[i], fp[j]);
			ok = d >= 0;
			if (d == isl_bool_false)
				parent[rj] = ri;
		}
	*foot = calloc(ba->n + 1, sizeof(**foot));
	if (!*foot)
		abort();
	for (int k = 0; k < ba->n; k++) {
		cls[k] = -1;
		if (!fp[k])
			continue;
		int r = k;
		while (parent[r] != r)
			r = parent[r];
		if (r == k)
			cls[k] = n++;
		else
			cls[k] = cls[r];
		isl_set **f = &(*foot)[cls[k]];
		*f = *f ? isl_set_union(*f, fp[k]) : fp[k];
		fp[k] = NULL;
	}
	for (int k = 0; k < ba->n; k++) {
		isl_map_free(w[k]);
		isl_set_free(fp[k]);
	}
	free(w);
	free(fp);
	free(parent);
	return ok ? n : -1;
}

/* The statements of accesses "ba" marked by mark_stmt ("in", by
 * position in "ba"). */
struct stmts_data {
	const struct buf_acc *ba;
	char *in;
};

/* isl_union_map_foreach_map callback: mark the statement of "m" in the
 * stmts_data "user" unless "m" is empty. */
static isl_stat mark_stmt(__isl_take isl_map *m, void *user)
{
	struct stmts_data *d = user;
	const char *name = isl_map_get_tuple_name(m, isl_dim_in);
	long id = name && name[0] == 'S' ? strtol(name + 1, NULL, 10) : -1;
	int empty = isl_map_is_empty(m) == isl_bool_true;
	isl_map_free(m);
	for (int k = 0; k < d->ba->n && !empty; k++)
		if (d->ba->stmt[k] == id)
			d->in[k] = 1;
	return isl_stat_ok;
}

/* Is the name of tuple "t" of "m" the last-writer sink "V" of
 * flow_by_class? */
static int tuple_is_v(__isl_keep isl_map *m, enum isl_dim_type t)
{
	const char *name = isl_map_get_tuple_name(m, t);
	return name && !strcmp(name, "V");
}

/* isl_union_map_remove_map_if callback: does "m" (a dependence W -> V or
 * an unsourced read V -> B) involve V? */
static isl_bool v_map(__isl_keep isl_map *m, void *user)
{
	(void)user;
	return isl_bool_ok(tuple_is_v(m, isl_dim_in) ||
			   tuple_is_v(m, isl_dim_out));
}

/* isl_union_map_remove_map_if callback: the negation of v_map. */
static isl_bool not_v_map(__isl_keep isl_map *m, void *user)
{
	isl_bool v = v_map(m, user);
	return v < 0 ? v : isl_bool_not(v);
}

/* Renaming the tuples "V" of union maps to "buf" (untail). */
struct untail_data {
	const char *buf;
	isl_union_map *res;
};

/* isl_union_map_foreach_map callback: add "m" with its tuples "V"
 * renamed to the result in "user". */
static isl_stat untail(__isl_take isl_map *m, void *user)
{
	struct untail_data *d = user;
	if (tuple_is_v(m, isl_dim_in))
		m = isl_map_set_tuple_name(m, isl_dim_in, d->buf);
	if (tuple_is_v(m, isl_dim_out))
		m = isl_map_set_tuple_name(m, isl_dim_out, d->buf);
	d->res = isl_union_map_add_map(d->res, m);
	return m ? isl_stat_ok : isl_stat_error;
}

/* The maps of "m" that involve V, with V renamed "buf". */
static __isl_give isl_union_map *untailed(__isl_keep isl_union_map *m,
					  const char *buf)
{
	isl_union_map *v = isl_union_map_remove_map_if(isl_union_map_copy(m),
						       &not_v_map, NULL);
	struct untail_data d = {buf,
				isl_union_map_empty(isl_union_map_get_space(m))};
	if (isl_union_map_foreach_map(v, &untail, &d) < 0)
		d.res = isl_union_map_free(d.res);
	isl_union_map_free(v);
	return d.res;
}

/* The value-based dependences through buffer "b" whose accesses are
 * "ba", and its reads with no source (*no_source), class by class (see
 * writer_classes): an element is written only by the writers of the
 * class whose footprint holds it, so the reads of a class's footprint
 * have their sources among that class's writers alone, and the reads
 * outside every footprint none. Within a class, the reads after all its
 * writers (a concatenation's later layers) all see the same last
 * writes: those are computed once, as the flow into one more statement
 * V that reads the whole footprint after the writers, and each such
 * read's sources are the last writers of the elements it reads. The
 * same relations as one flow over all the buffer's accesses: what this
 * saves is isl meeting every writer of a concatenated feature map (each
 * layer writes its slice, every later layer reads them all) at every
 * read. */
static __isl_give isl_union_map *flow_by_class(struct pb_poly_scop *s,
					       int b,
					       const struct buf_acc *ba,
					       int n, const int *cls,
					       isl_set **foot,
					       isl_union_map **no_source)
{
	isl_union_map *const *acc = ba->acc;
	isl_union_map *res = none(s);
	isl_union_set *all = isl_union_set_empty(isl_space_params_alloc(s->ctx, 0));
	int *idx = malloc(sizeof(*idx) * (ba->n + 1));
	struct stmts_data d = {ba, calloc(ba->n + 1, 1)};
	char name[32];
	if (!idx || !d.in)
		abort();
	snprintf(name, sizeof(name), "B%d", b);
	*no_source = none(s);
	for (int c = 0; c < n; c++) {
		isl_union_set *fc = isl_union_set_from_set(isl_set_copy(foot[c]));
		isl_union_set *wd = isl_union_set_empty(
			isl_space_params_alloc(s->ctx, 0));
		isl_union_set *late = isl_union_set_empty(
			isl_space_params_alloc(s->ctx, 0));
		int last = -1, m = 0, nlate = 0;
		all = isl_union_set_union(all, isl_union_set_copy(fc));
		for (int k = 0; k < ba->n; k++)
			if (cls[k] == c) {
				wd = isl_union_set_add_set(wd,
					isl_set_copy(s->stmt[ba->stmt[k]].domain));
				last = k;
			}
		isl_union_set *early = isl_union_set_copy(wd);
		isl_union_map *sink = isl_union_map_intersect_range(
			isl_union_map_copy(acc[0]), fc);
		isl_union_map *must = isl_union_map_intersect_domain(
			isl_union_map_copy(acc[1]), isl_union_set_copy(wd));
		isl_union_map *may = isl_union_map_intersect_domain(
			isl_union_map_subtract(isl_union_map_copy(acc[2]),
					       isl_union_map_copy(acc[1])),
			wd);
		/* the class's writers and the readers among them go into
		 * the flow; the readers after them all through V */
		memset(d.in, 0, ba->n);
		isl_union_map_foreach_map(sink, &mark_stmt, &d);
		for (int k = 0; k < ba->n; k++) {
			isl_set *dom = s->stmt[ba->stmt[k]].domain;
			if (k > last && d.in[k]) {
				late = isl_union_set_add_set(late,
							     isl_set_copy(dom));
				nlate++;
			} else if (d.in[k] || cls[k] == c) {
				idx[m++] = ba->stmt[k];
				if (cls[k] != c)
					early = isl_union_set_add_set(early,
							isl_set_copy(dom));
			}
		}
		isl_union_map *lsink = NULL;
		isl_set *tail = NULL;
		if (nlate) {
			lsink = isl_union_map_intersect_domain(
				isl_union_map_copy(sink), late);
			sink = isl_union_map_intersect_domain(sink, early);
			tail = isl_set_set_tuple_name(isl_set_copy(foot[c]),
						      "V");
			isl_map *id = isl_map_set_tuple_name(
				isl_set_identity(isl_set_copy(tail)),
				isl_dim_out, name);
			sink = isl_union_map_add_map(sink, id);
		} else {
			isl_union_set_free(late);
			isl_union_set_free(early);
		}
		isl_schedule *sch = tree_tail(s, idx, m, tail);
		isl_union_map *ns = NULL;
		isl_union_map *dep = flow(sch, sink, must, may, &ns);
		isl_schedule_free(sch);
		if (nlate) {
			/* W -> V[e] as W -> B[e], then to each late read */
			isl_union_map *dv = untailed(dep, name);
			isl_union_set *unk = isl_union_map_range(
				untailed(ns, name));
			dep = isl_union_map_remove_map_if(dep, &v_map, NULL);
			ns = isl_union_map_remove_map_if(ns, &v_map, NULL);
			ns = isl_union_map_union(ns,
				isl_union_map_intersect_range(
					isl_union_map_copy(lsink), unk));
			dep = isl_union_map_union(dep,
				isl_union_map_apply_range(dv,
					isl_union_map_reverse(lsink)));
		}
		res = isl_union_map_union(res, dep);
		*no_source = isl_union_map_union(*no_source, ns);
	}
	*no_source = isl_union_map_union(*no_source,
		isl_union_map_subtract_range(isl_union_map_copy(acc[0]), all));
	free(idx);
	free(d.in);
	return res;
}

/* Compute the dependences through buffer "b" of "s", whose accesses are
 * "ba", and its reads with no source: s->buf[b].flow, mem and no_source.
 * A dependence relates two accesses of one element, and only a write of
 * that element kills one, so the scop's dependences are the union of
 * those of each buffer computed under the original order of only the
 * statements that access it: with isl's schedule-tree flow each sink
 * then meets only those, not every node of the whole scop. A buffer
 * whose writers write apart (the slices of a concatenation) has its
 * flow computed by class of writers (flow_by_class). */
static void buf_deps(struct pb_poly_scop *s, int b, struct buf_acc *ba)
{
	isl_union_map **acc = ba->acc;
	struct pb_poly_buf *buf = &s->buf[b];
	if (isl_union_map_is_empty(acc[2]) == isl_bool_true) {
		/* nothing writes b: every read is from before the block */
		buf->no_source = isl_union_map_copy(acc[0]);
		buf->flow = none(s);
		buf->mem = none(s);
		return;
	}
	int *cls = malloc(sizeof(*cls) * (ba->n + 1));
	isl_set **foot = NULL;
	if (!cls)
		abort();
	int n = writer_classes(ba, cls, &foot);
	if (n > 1) {
		buf->flow = flow_by_class(s, b, ba, n, cls, foot,
					  &buf->no_source);
	} else {
		isl_schedule *sch = tree(s, ba->stmt, ba->n);
		/* Value-based: exact writes kill, the others only may
		 * reach. */
		isl_union_map *may_only = isl_union_map_subtract(
			isl_union_map_copy(acc[2]), isl_union_map_copy(acc[1]));
		buf->flow = flow(sch, isl_union_map_copy(acc[0]),
				 isl_union_map_copy(acc[1]), may_only,
				 &buf->no_source);
		isl_schedule_free(sch);
	}
	for (int c = 0; foot && c < ba->n; c++)
		isl_set_free(foot[c]);
	free(foot);
	free(cls);
	buf->mem = mem_deps(s, ba);
}

/* The dependences through buffer "b" of "s" (accesses "ba") as buf_deps
 * computes them, taken from "memo" when a buffer before it had the same
 * key (renamed back), else computed and added to "memo". */
static void buf_deps_memo(struct pb_poly_scop *s, int b, struct buf_acc *ba,
			  struct memo *memo)
{
	struct pb_poly_buf *buf = &s->buf[b];
	if (isl_union_map_is_empty(ba->acc[2]) == isl_bool_true) {
		buf_deps(s, b, ba); /* nothing to compute */
		return;
	}
	int *to = malloc(sizeof(*to) * (s->nstmt + 1));
	int *back = malloc(sizeof(*back) * (ba->n + 1));
	struct pb_buf key = {0};
	if (!to || !back)
		abort();
	for (int i = 0; i < s->nstmt; i++)
		to[i] = -1;
	for (int k = 0; k < ba->n; k++) {
		to[ba->stmt[k]] = k;
		back[k] = ba->stmt[k];
	}
	char name[32];
	snprintf(name, sizeof(name), "B%d", b);
	int ok = buf_key(s, ba, to, &key);
	uint64_t h = ok ? fnv(key.data, key.len) : 0;
	int hit = ok ? memo_find(memo, &key, h) : -1;
	if (hit >= 0) {
		buf->flow = renamed(memo->flow[hit], back, ba->n, name);
		buf->mem = renamed(memo->mem[hit], back, ba->n, name);
		buf->no_source = renamed(memo->no_source[hit], back, ba->n,
					 name);
		pb_buf_free(&key);
	} else {
		buf_deps(s, b, ba);
		if (ok && memo->n == memo->cap) {
			memo->cap = memo->cap ? 2 * memo->cap : 16;
			memo->key = pb_xrealloc(memo->key, memo->cap,
						sizeof(*memo->key));
			memo->hash = pb_xrealloc(memo->hash, memo->cap,
						 sizeof(*memo->hash));
			memo->flow = pb_xrealloc(memo->flow, memo->cap,
						 sizeof(*memo->flow));
			memo->mem = pb_xrealloc(memo->mem, memo->cap,
						sizeof(*memo->mem));
			memo->no_source = pb_xrealloc(memo->no_source,
						      memo->cap,
						      sizeof(*memo->no_source));
		}
		if (ok) {
			int i = memo->n++;
			memo->key[i] = key;
			memo->hash[i] = h;
			memo->flow[i] = renamed(buf->flow, to, s->nstmt, "B");
			memo->mem[i] = renamed(buf->mem, to, s->nstmt, "B");
			memo->no_source[i] = renamed(buf->no_source, to,
						     s->nstmt, "B");
		} else {
			pb_buf_free(&key);
		}
	}
	free(to);
	free(back);
}

/* The statement index of tuple name "name" ("S<id>") of scop "s", or -1. */
static int stmt_index(const struct pb_poly_scop *s, const char *name)
{
	if (!name || name[0] != 'S')
		return -1;
	char *end;
	long id = strtol(name + 1, &end, 10);
	return *end || end == name + 1 || id < 0 || id >= s->nstmt ? -1 : (int)id;
}

/* The index being built by "index_map": scop "s" and the kind "kind" of
 * the dependences. */
struct index_data {
	struct pb_poly_scop *s;
	enum pb_poly_dep kind;
};

/* isl_union_map_foreach_map callback: append dependence map "map"
 * S<a>[...] -> S<b>[...] to the successors of statement a in the index
 * "user" (dropped when plainly empty). */
static isl_stat index_map(__isl_take isl_map *map, void *user)
{
	struct index_data *d = user;
	int a = stmt_index(d->s, isl_map_get_tuple_name(map, isl_dim_in));
	int b = stmt_index(d->s, isl_map_get_tuple_name(map, isl_dim_out));
	if (a < 0 || b < 0) {
		isl_map_free(map);
		return isl_stat_error;
	}
	if (isl_map_plain_is_empty(map) == isl_bool_true) {
		isl_map_free(map);
		return isl_stat_ok;
	}
	struct pb_poly_succ *sc = &d->s->stmt[a].succ[d->kind];
	sc->dst = realloc(sc->dst, sizeof(*sc->dst) * (sc->n + 1));
	sc->map = realloc(sc->map, sizeof(*sc->map) * (sc->n + 1));
	if (!sc->dst || !sc->map)
		abort();
	int k = sc->n++;
	/* one map per space in a union map: b is new; keep them sorted */
	for (; k > 0 && sc->dst[k - 1] > b; k--) {
		sc->dst[k] = sc->dst[k - 1];
		sc->map[k] = sc->map[k - 1];
	}
	sc->dst[k] = b;
	sc->map[k] = map;
	return isl_stat_ok;
}

/* Index the dependences "deps" of kind "kind" of "s" by source statement.
 * Returns -1 on an error (a map that relates no two statements). */
static int index_deps(struct pb_poly_scop *s, __isl_keep isl_union_map *deps,
		      enum pb_poly_dep kind)
{
	struct index_data d = {s, kind};
	if (!deps)
		return -1;
	return isl_union_map_foreach_map(deps, &index_map, &d) < 0 ? -1 : 0;
}

/* Compare two buffers by root (qsort, bsearch). */
static int cmp_buf(const void *a, const void *b)
{
	const struct pb_poly_buf *x = *(const struct pb_poly_buf *const *)a;
	const struct pb_poly_buf *y = *(const struct pb_poly_buf *const *)b;
	uintptr_t p = (uintptr_t)x->root.ptr, q = (uintptr_t)y->root.ptr;
	return p < q ? -1 : p > q;
}

/* What pb_poly_deps_build reuses of an older scop "old": its buffers
 * sorted by root, and a table of new statement ids by old id (-1). */
struct reuse {
	const struct pb_poly_scop *old;
	const struct pb_poly_buf **bufs;
	int *to;
};

static void reuse_init(struct reuse *r, const struct pb_poly_scop *old)
{
	memset(r, 0, sizeof(*r));
	if (!old)
		return;
	r->old = old;
	r->bufs = malloc(sizeof(*r->bufs) * (old->nbuf + 1));
	r->to = malloc(sizeof(*r->to) * (old->nstmt + 1));
	if (!r->bufs || !r->to)
		abort();
	for (int b = 0; b < old->nbuf; b++)
		r->bufs[b] = &old->buf[b];
	qsort(r->bufs, old->nbuf, sizeof(*r->bufs), cmp_buf);
	for (int i = 0; i < old->nstmt; i++)
		r->to[i] = -1;
}

static void reuse_free(struct reuse *r)
{
	free(r->bufs);
	free(r->to);
}

/* isl_union_map_every_map callback: is map "m" equal to the map of its
 * space in union map "user"? Asked of isl's parser's and builders'
 * output, the two are mostly built alike: compared plainly first. */
static isl_bool same_map(__isl_keep isl_map *m, void *user)
{
	isl_map *o = isl_union_map_extract_map(user, isl_map_get_space(m));
	isl_bool eq = isl_map_plain_is_equal(m, o);
	if (eq == isl_bool_false)
		eq = isl_map_is_equal(m, o);
	isl_map_free(o);
	return eq;
}

/* Are the renamed "m" and "n" equal? Both hold one map per statement
 * (accesses of statements to one buffer), so they are when they have as
 * many maps and each map of the renamed "m" equals the one of "n" in its
 * space. */
static int same_renamed(__isl_keep isl_union_map *m, const int *to, int nto,
			const char *buf, __isl_keep isl_union_map *n)
{
	isl_union_map *r = renamed(m, to, nto, buf);
	isl_size nr = isl_union_map_n_map(r), nn = isl_union_map_n_map(n);
	int eq = nr >= 0 && nr == nn &&
		 isl_union_map_every_map(r, &same_map, n) == isl_bool_true;
	isl_union_map_free(r);
	return eq;
}

/* Take the dependences through buffer "b" of "s" (accesses "ba") from the
 * older scop of "r" when they are still valid: the buffer of the same
 * root was accessed by as many statements, in the same order, with the
 * same domains and access relations (the dependences depend on nothing
 * else). Returns 1 when done. */
static int reuse_buf(struct reuse *r, struct pb_poly_scop *s, int b,
		     const struct buf_acc *ba)
{
	if (!r->old)
		return 0;
	struct pb_poly_buf key = {.root = s->buf[b].root}, *kp = &key;
	const struct pb_poly_buf **hit = bsearch(&kp, r->bufs, r->old->nbuf,
						 sizeof(*r->bufs), cmp_buf);
	if (!hit || !(*hit)->mem || (*hit)->nacc != ba->n)
		return 0;
	const struct pb_poly_buf *ob = *hit;
	const struct pb_poly_scop *old = r->old;
	int n = old->nstmt, ok = 1;
	for (int k = 0; k < ba->n && ok; k++) {
		const struct pb_poly_stmt *x = &old->stmt[ob->acc[k]];
		const struct pb_poly_stmt *y = &s->stmt[ba->stmt[k]];
		r->to[ob->acc[k]] = ba->stmt[k];
		isl_set *xd = isl_set_set_tuple_name(isl_set_copy(x->domain),
					isl_set_get_tuple_name(y->domain));
		ok = x->kind == y->kind && x->depth == y->depth &&
		     isl_set_plain_is_equal(xd, y->domain) == isl_bool_true;
		isl_set_free(xd);
		for (int d = 0; d < x->depth && ok; d++)
			ok = x->extent[d] == y->extent[d];
	}
	char name[32];
	snprintf(name, sizeof(name), "B%d", b);
	for (int q = 0; q < 3 && ok; q++)
		ok = same_renamed(ob->bacc[q], r->to, n, name, ba->acc[q]);
	if (ok) {
		s->buf[b].flow = renamed(ob->flow, r->to, n, name);
		s->buf[b].mem = renamed(ob->mem, r->to, n, name);
		s->buf[b].no_source = renamed(ob->no_source, r->to, n, name);
	}
	for (int k = 0; k < ba->n; k++)
		r->to[ob->acc[k]] = -1;
	return ok;
}

void pb_poly_deps_build(struct pb_poly_scop *s, const struct pb_poly_scop *old)
{
	struct buf_acc *ba = calloc(s->nbuf + 1, sizeof(*ba));
	int ok = ba != NULL;
	struct reuse r;
	if (!ba)
		abort();
	struct memo memo = {0};
	reuse_init(&r, old);
	for (int b = 0; b < s->nbuf; b++)
		for (int k = 0; k < 3; k++)
			ba[b].acc[k] = none(s);
	for (int i = 0; i < s->nstmt && ok; i++) {
		const struct pb_poly_stmt *st = &s->stmt[i];
		isl_union_map *by_kind[3] = {st->reads, st->must_writes,
					     st->may_writes};
		for (int k = 0; k < 3 && ok; k++) {
			struct by_buf_data d = {s, ba, i, k};
			ok = isl_union_map_foreach_map(by_kind[k], &by_buf,
						       &d) >= 0;
		}
	}
	s->dep_flow = none(s);
	s->dep_mem = none(s);
	s->no_source = none(s);
	for (int b = 0; b < s->nbuf && ok; b++) {
		struct pb_poly_buf *buf = &s->buf[b];
		if (!reuse_buf(&r, s, b, &ba[b]))
			buf_deps_memo(s, b, &ba[b], &memo);
		buf->nacc = ba[b].n;
		buf->acc = ba[b].stmt;
		ba[b].stmt = NULL;
		for (int k = 0; k < 3; k++) {
			buf->bacc[k] = ba[b].acc[k];
			ba[b].acc[k] = NULL;
		}
		s->dep_flow = isl_union_map_union(s->dep_flow,
						  isl_union_map_copy(buf->flow));
		s->dep_mem = isl_union_map_union(s->dep_mem,
						 isl_union_map_copy(buf->mem));
		s->no_source = isl_union_map_union(s->no_source,
			isl_union_map_copy(buf->no_source));
	}
	reuse_free(&r);
	memo_free(&memo);
	for (int b = 0; b < s->nbuf; b++) {
		for (int k = 0; k < 3; k++)
			isl_union_map_free(ba[b].acc[k]);
		free(ba[b].stmt);
	}
	free(ba);
	if (!ok || index_deps(s, s->dep_flow, PB_POLY_DEP_FLOW) < 0 ||
	    index_deps(s, s->dep_mem, PB_POLY_DEP_MEM) < 0) {
		/* incomplete: pb_poly_extract fails on the NULL */
		s->dep_mem = isl_union_map_free(s->dep_mem);
	}
}

void pb_poly_deps_free(struct pb_poly_stmt *st)
{
	for (int k = 0; k < PB_POLY_NDEP; k++) {
		for (int i = 0; i < st->succ[k].n; i++)
			isl_map_free(st->succ[k].map[i]);
		free(st->succ[k].dst);
		free(st->succ[k].map);
		st->succ[k].n = 0;
		st->succ[k].dst = NULL;
		st->succ[k].map = NULL;
	}
}

int pb_poly_succ_pos(const struct pb_poly_scop *s, enum pb_poly_dep kind,
		     int src, int dst)
{
	if (src < 0 || dst < 0 || src >= s->nstmt || dst >= s->nstmt ||
	    kind < 0 || kind >= PB_POLY_NDEP)
		return -1;
	const struct pb_poly_succ *sc = &s->stmt[src].succ[kind];
	int lo = 0, hi = sc->n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (sc->dst[mid] < dst)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < sc->n && sc->dst[lo] == dst ? lo : -1;
}

__isl_keep isl_map *pb_poly_deps_find(const struct pb_poly_scop *s,
				      enum pb_poly_dep kind, int src, int dst)
{
	int k = pb_poly_succ_pos(s, kind, src, dst);
	return k < 0 ? NULL : s->stmt[src].succ[kind].map[k];
}

__isl_give isl_map *pb_poly_deps_between(const struct pb_poly_scop *s,
					 enum pb_poly_dep kind, int src,
					 int dst)
{
	if (src < 0 || dst < 0 || src >= s->nstmt || dst >= s->nstmt ||
	    kind < 0 || kind >= PB_POLY_NDEP)
		return NULL;
	isl_map *m = pb_poly_deps_find(s, kind, src, dst);
	if (m)
		return isl_map_copy(m);
	char a[32], b[32];
	snprintf(a, sizeof(a), "S%d", src);
	snprintf(b, sizeof(b), "S%d", dst);
	isl_space *sp = isl_space_alloc(s->ctx, 0, s->stmt[src].depth,
					s->stmt[dst].depth);
	sp = isl_space_set_tuple_name(sp, isl_dim_in, a);
	sp = isl_space_set_tuple_name(sp, isl_dim_out, b);
	return isl_map_empty(sp);
}
