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
#include <stdio.h>
#include <stdlib.h>

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

/* The sequence of the statements of "s", each NEST under its band. */
static __isl_give isl_schedule *tree(struct pb_poly_scop *s)
{
	isl_union_set *dom = isl_union_set_copy(s->domain);
	isl_schedule *sch = isl_schedule_from_domain(dom);
	if (!s->nstmt)
		return sch;
	isl_union_set_list *filters = isl_union_set_list_alloc(s->ctx, s->nstmt);
	for (int i = 0; i < s->nstmt; i++)
		filters = isl_union_set_list_add(filters,
			isl_union_set_from_set(isl_set_copy(s->stmt[i].domain)));
	isl_schedule_node *n = isl_schedule_get_root(sch);
	isl_schedule_free(sch);
	n = isl_schedule_node_child(n, 0);
	n = isl_schedule_node_insert_sequence(n, filters);
	for (int i = 0; i < s->nstmt; i++) {
		if (s->stmt[i].kind != PB_POLY_NEST)
			continue;
		n = isl_schedule_node_child(n, i);
		n = isl_schedule_node_child(n, 0);
		n = isl_schedule_node_insert_partial_schedule(n,
				band_of(s->ctx, &s->stmt[i]));
		n = isl_schedule_node_parent(n);
		n = isl_schedule_node_parent(n);
	}
	sch = isl_schedule_node_get_schedule(n);
	isl_schedule_node_free(n);
	return sch;
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
	s->schedule = tree(s);
	s->schedule_map = flat(s);
}

/* The may dependences from "must" and "may" sources to "sink" accesses
 * under the schedule of "s"; the accesses with no source go to
 * *no_source when it is not NULL. */
static __isl_give isl_union_map *flow(struct pb_poly_scop *s,
				      __isl_take isl_union_map *sink,
				      __isl_take isl_union_map *must,
				      __isl_take isl_union_map *may,
				      isl_union_map **no_source)
{
	isl_union_access_info *ai = isl_union_access_info_from_sink(sink);
	ai = isl_union_access_info_set_must_source(ai, must);
	ai = isl_union_access_info_set_may_source(ai, may);
	ai = isl_union_access_info_set_schedule(ai,
						isl_schedule_copy(s->schedule));
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

void pb_poly_deps_build(struct pb_poly_scop *s)
{
	/* Value-based: exact writes kill, the others only may reach. */
	isl_union_map *may_only = isl_union_map_subtract(
		isl_union_map_copy(s->may_writes),
		isl_union_map_copy(s->must_writes));
	s->dep_flow = flow(s, isl_union_map_copy(s->reads),
			   isl_union_map_copy(s->must_writes), may_only,
			   &s->no_source);
	/* Memory-based: only may sources, so that nothing is killed. */
	isl_union_map *raw = flow(s, isl_union_map_copy(s->reads), none(s),
				  isl_union_map_copy(s->may_writes), NULL);
	isl_union_map *war = flow(s, isl_union_map_copy(s->may_writes), none(s),
				  isl_union_map_copy(s->reads), NULL);
	isl_union_map *waw = flow(s, isl_union_map_copy(s->may_writes), none(s),
				  isl_union_map_copy(s->may_writes), NULL);
	s->dep_mem = isl_union_map_union(isl_union_map_union(raw, war), waw);
	if (index_deps(s, s->dep_flow, PB_POLY_DEP_FLOW) < 0 ||
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

__isl_keep isl_map *pb_poly_deps_find(const struct pb_poly_scop *s,
				      enum pb_poly_dep kind, int src, int dst)
{
	if (src < 0 || dst < 0 || src >= s->nstmt || dst >= s->nstmt ||
	    kind < 0 || kind >= PB_POLY_NDEP)
		return NULL;
	const struct pb_poly_succ *sc = &s->stmt[src].succ[kind];
	int lo = 0, hi = sc->n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (sc->dst[mid] < dst)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < sc->n && sc->dst[lo] == dst ? sc->map[lo] : NULL;
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
