/* The cost model of pb-fuse (docs/pb-fuse.md, "Cost model"): predicted
 * time of a set of statements run as one kernel on the target GPU, with
 * the naive mapping pb-codegen gives an unmapped kernel (one thread per
 * iteration of the outer parallel loops):
 *
 *   t = launch + max(work / threads * t_iter, bytes / bandwidth)
 *
 * work     iterations of all statements (their domain sizes);
 * threads  the outer parallelism, at most what the GPU runs at once
 *          (SMs x threads per SM);
 * t_iter   ITER_CYCLES cycles of an SM per iteration of one thread;
 * bytes    global traffic of the set: pb_fuse_traffic, not counting the
 *          buffers only the set touches (the ones contraction removes).
 * Fusing is profitable when the fused kernel is predicted no slower than
 * the two it replaces. */
#include <stdlib.h>

#include <isl/fixed_box.h>
#include <isl/val.h>

#include "fuse/internal.h"

/* Cycles per loop iteration of one thread: a load or two, an FMA and the
 * loop overhead, with latency partly hidden. */
#define ITER_CYCLES 8.0

/* The number of elements in the bounding box of "set", the accesses to
 * buffer "b" of "s" (the whole buffer when the box is not fixed). */
static int64_t box_count(const struct pb_poly_scop *s, int b,
			 __isl_keep isl_set *set)
{
	int64_t cnt = 1;
	isl_fixed_box *box = isl_set_get_simple_fixed_box_hull(set);
	if (box && isl_fixed_box_is_valid(box) == isl_bool_true) {
		isl_multi_val *sz = isl_fixed_box_get_size(box);
		for (int k = 0; k < s->buf[b].rank; k++) {
			isl_val *v = isl_multi_val_get_at(sz, k);
			cnt *= isl_val_get_num_si(v);
			isl_val_free(v);
		}
		isl_multi_val_free(sz);
	} else {
		for (int k = 0; k < s->buf[b].rank; k++)
			cnt *= s->buf[b].shape[k] > 0 ? s->buf[b].shape[k] : 1;
	}
	isl_fixed_box_free(box);
	return cnt;
}

/* The bytes counted so far by pb_fuse_traffic over the buffers of "s"
 * that are not "local". */
struct traffic {
	const struct pb_poly_scop *s;
	const char *local;
	int64_t bytes;
};

/* isl_union_set_foreach_set callback: add the bytes of the elements of
 * one buffer in "set" to the traffic "user". */
static isl_stat add_bytes(__isl_take isl_set *set, void *user)
{
	struct traffic *t = user;
	const char *name = isl_set_get_tuple_name(set);
	int b = name && name[0] == 'B' ? atoi(name + 1) : -1;
	if (b >= 0 && b < t->s->nbuf && !(t->local && t->local[b]) &&
	    isl_set_is_empty(set) == isl_bool_false)
		t->bytes += box_count(t->s, b, set) * t->s->buf[b].elem_bytes;
	isl_set_free(set);
	return isl_stat_ok;
}

/* Global-memory traffic of "stmts" (n of them) of "s" into "*read" and
 * "*written", not counting the buffers "local" marks (internal.h). */
void pb_fuse_traffic(const struct pb_poly_scop *s, const int *stmts, int n,
		     const char *local, int64_t *read, int64_t *written)
{
	for (int w = 0; w < 2; w++) {
		struct traffic t = {s, local, 0};
		isl_union_map *acc =
			isl_union_map_empty(isl_union_map_get_space(s->reads));
		for (int i = 0; i < n; i++)
			acc = isl_union_map_union(
				acc, isl_union_map_copy(w ? s->stmt[stmts[i]].may_writes
							  : s->stmt[stmts[i]].reads));
		isl_union_set *r = isl_union_map_range(acc);
		isl_union_set_foreach_set(r, add_bytes, &t);
		isl_union_set_free(r);
		*(w ? written : read) = t.bytes;
	}
}

/* Is every access to buffer "b" made by one of statements "set"? */
static int private_to(const struct pb_fusion *f, int b, const char *in)
{
	if (f->s->buf[b].is_arg)
		return 0;
	for (int i = 0; i < f->s->nstmt; i++) {
		const struct pb_poly_stmt *s = &f->s->stmt[i];
		int uses = s->kind == PB_POLY_OPAQUE;
		for (int k = 0; k < s->naccess && !uses; k++)
			uses = s->access[k].buf == b;
		if (uses && !in[i])
			return 0;
	}
	return 1;
}

double pb_fuse_cost(struct pb_fusion *f, const int *set, int n,
		    int64_t par)
{
	const struct pb_target *t = &f->target;
	char *in = calloc(f->s->nstmt + 1, 1);
	char *local = calloc(f->s->nbuf + 1, 1);
	double work = 0;
	int64_t rd, wr;
	if (!in || !local)
		abort();
	for (int i = 0; i < n; i++) {
		const struct pb_poly_stmt *s = &f->s->stmt[set[i]];
		double it = 1;
		for (int u = 0; u < s->depth; u++)
			it *= (double)s->extent[u];
		work += it;
		in[set[i]] = 1;
	}
	for (int b = 0; b < f->s->nbuf; b++)
		local[b] = private_to(f, b, in);
	pb_fuse_traffic(f->s, set, n, local, &rd, &wr);
	free(in);
	free(local);
	double threads = (double)par;
	double most = (double)t->sm_count * t->max_threads_per_sm;
	if (threads > most)
		threads = most;
	if (threads < 1)
		threads = 1;
	double compute = work / threads * ITER_CYCLES / t->clock_hz;
	double memory = (double)(rd + wr) / t->dram_bytes_per_s;
	return t->launch_s + (compute > memory ? compute : memory);
}
