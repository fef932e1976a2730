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
#include <limits.h>
#include <stdlib.h>
#include <string.h>

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

/* The traffic of one buffer per set of statements (pb_fuse_cost asks
 * about sets that differ in a statement or two, again and again, so the
 * isl part of each buffer's traffic is kept for the last set asked):
 *
 * "user" (n of them, increasing) are the statements whose reads or
 * writes touch the buffer, "range[w][k]" the elements user k reads (w =
 * 0) or may write (w = 1), or NULL; "nacc" of them ("acc") access it in
 * their body (a NEST's access; with the OPAQUE statements, they make the
 * buffer not private to a set without them). "sig" records which
 * users were in the set whose traffic "bytes[w]" (not counting
 * locality) was computed, when "valid". */
struct pb_fuse_buftraffic {
	int n, nacc;
	int *user, *acc;
	isl_set **range[2];
	char *sig;
	int valid;
	int64_t bytes[2];
};

/* Add statement "i" (reads when "w" is 0, may-writes when 1) with range
 * "set" to the users of buffer "b" in "f". */
static void add_user(struct pb_fusion *f, int b, int i, int w,
		     __isl_take isl_set *set)
{
	struct pb_fuse_buftraffic *bt = &f->traffic[b];
	if (!bt->n || bt->user[bt->n - 1] != i) {
		int n = bt->n + 1;
		bt->user = realloc(bt->user, sizeof(*bt->user) * n);
		bt->range[0] = realloc(bt->range[0], sizeof(isl_set *) * n);
		bt->range[1] = realloc(bt->range[1], sizeof(isl_set *) * n);
		if (!bt->user || !bt->range[0] || !bt->range[1])
			abort();
		bt->user[bt->n] = i;
		bt->range[0][bt->n] = bt->range[1][bt->n] = NULL;
		bt->n = n;
		struct pb_fuse_stmtbufs *sb = &f->stmt_bufs[i];
		sb->buf = realloc(sb->buf, sizeof(*sb->buf) * (sb->n + 1));
		if (!sb->buf)
			abort();
		sb->buf[sb->n++] = b;
	}
	isl_set **r = &bt->range[w][bt->n - 1];
	*r = *r ? isl_set_union(*r, set) : set;
}

/* The statement being added by add_map: "f", its index "i", reads or
 * writes "w". */
struct add_data {
	struct pb_fusion *f;
	int i, w;
};

/* isl_union_map_foreach_map callback: add the range of access relation
 * "map" S<i>[...] -> B<b>[...] to the users of b ("user", add_data). */
static isl_stat add_map(__isl_take isl_map *map, void *user)
{
	struct add_data *d = user;
	const char *name = isl_map_get_tuple_name(map, isl_dim_out);
	int b = name && name[0] == 'B' ? atoi(name + 1) : -1;
	if (b >= 0 && b < d->f->s->nbuf)
		add_user(d->f, b, d->i, d->w, isl_map_range(map));
	else
		isl_map_free(map);
	return isl_stat_ok;
}

/* Index the traffic of "f" by buffer (f->traffic), once. */
static void traffic_index(struct pb_fusion *f)
{
	const struct pb_poly_scop *s = f->s;
	if (f->traffic)
		return;
	f->traffic = calloc(s->nbuf + 1, sizeof(*f->traffic));
	f->bmark = calloc(s->nbuf + 1, sizeof(*f->bmark));
	f->stmt_bufs = calloc(s->nstmt + 1, sizeof(*f->stmt_bufs));
	if (!f->traffic || !f->bmark || !f->stmt_bufs)
		abort();
	for (int i = 0; i < s->nstmt; i++) {
		const struct pb_poly_stmt *st = &s->stmt[i];
		f->nopaque += st->kind == PB_POLY_OPAQUE;
		for (int w = 0; w < 2; w++) {
			struct add_data d = {f, i, w};
			isl_union_map_foreach_map(w ? st->may_writes : st->reads,
						  &add_map, &d);
		}
		for (int k = 0; k < st->naccess; k++) {
			struct pb_fuse_buftraffic *bt =
				&f->traffic[st->access[k].buf];
			if (bt->nacc && bt->acc[bt->nacc - 1] == i)
				continue;
			bt->acc = realloc(bt->acc, sizeof(*bt->acc) *
							   (bt->nacc + 1));
			if (!bt->acc)
				abort();
			bt->acc[bt->nacc++] = i;
		}
	}
	for (int b = 0; b < s->nbuf; b++) {
		f->traffic[b].sig = calloc(f->traffic[b].n + 1, 1);
		if (!f->traffic[b].sig)
			abort();
	}
}

void pb_fuse_traffic_free(struct pb_fusion *f)
{
	for (int b = 0; f->traffic && b < f->s->nbuf; b++) {
		struct pb_fuse_buftraffic *bt = &f->traffic[b];
		for (int k = 0; k < bt->n; k++) {
			isl_set_free(bt->range[0][k]);
			isl_set_free(bt->range[1][k]);
		}
		free(bt->user);
		free(bt->acc);
		free(bt->range[0]);
		free(bt->range[1]);
		free(bt->sig);
	}
	for (int i = 0; f->stmt_bufs && i < f->s->nstmt; i++)
		free(f->stmt_bufs[i].buf);
	free(f->traffic);
	free(f->bmark);
	free(f->stmt_bufs);
	free(f->gbytes);
	free(f->gseen);
	f->traffic = NULL;
	f->bmark = NULL;
	f->stmt_bufs = NULL;
	f->gbytes = NULL;
	f->gseen = NULL;
}

void pb_fuse_mark(struct pb_fusion *f, const int *set, int n)
{
	if (f->stamp == INT_MAX) {
		memset(f->mark, 0, sizeof(*f->mark) * (f->s->nstmt + 1));
		if (f->bmark)
			memset(f->bmark, 0, sizeof(*f->bmark) * (f->s->nbuf + 1));
		f->stamp = 0;
	}
	f->stamp++;
	for (int a = 0; a < n; a++) {
		f->mark[set[a]] = f->stamp;
		f->pos[set[a]] = a;
	}
}

/* Is buffer "b" of "f" accessed only by the statements of the marked set
 * ("opaque" of them OPAQUE, a statement that may access every buffer)?
 * Then it is private to the set and costs no global traffic. */
static int private_to_marked(const struct pb_fusion *f, int b, int opaque)
{
	const struct pb_fuse_buftraffic *bt = &f->traffic[b];
	if (f->s->buf[b].is_arg || opaque < f->nopaque)
		return 0;
	for (int k = 0; k < bt->nacc; k++)
		if (f->mark[bt->acc[k]] != f->stamp)
			return 0;
	return 1;
}

/* The bytes of buffer "b" of "f" the marked set reads (w = 0) and writes
 * (w = 1) into "bytes" (pb_fuse_traffic's add_bytes on b), from the last
 * answer when the set has the same users of b. */
static void buf_bytes(struct pb_fusion *f, int b, int64_t *bytes)
{
	struct pb_fuse_buftraffic *bt = &f->traffic[b];
	int same = bt->valid;
	for (int k = 0; k < bt->n; k++) {
		char in = f->mark[bt->user[k]] == f->stamp;
		same &= bt->sig[k] == in;
		bt->sig[k] = in;
	}
	for (int w = 0; w < 2 && !same; w++) {
		isl_set *set = NULL;
		for (int k = 0; k < bt->n; k++) {
			if (!bt->sig[k] || !bt->range[w][k])
				continue;
			isl_set *r = isl_set_copy(bt->range[w][k]);
			set = set ? isl_set_union(set, r) : r;
		}
		bt->bytes[w] = 0;
		if (set && isl_set_is_empty(set) == isl_bool_false)
			bt->bytes[w] = box_count(f->s, b, set) *
				       f->s->buf[b].elem_bytes;
		isl_set_free(set);
	}
	bt->valid = 1;
	bytes[0] = bt->bytes[0];
	bytes[1] = bt->bytes[1];
}

/* The bytes buffer "b" of "f" adds to the marked set (OPAQUE of them
 * "opaque") into "bytes": none when the buffer is private to the set. */
static void buf_add(struct pb_fusion *f, int b, int opaque, int64_t *bytes)
{
	if (private_to_marked(f, b, opaque))
		bytes[0] = bytes[1] = 0;
	else
		buf_bytes(f, b, bytes);
}

/* The global-memory traffic of statements "set" (n of them) of "f" run
 * as one kernel into "*read" and "*written": pb_fuse_traffic's count,
 * leaving out the buffers private to the set, summed over the buffers
 * the set touches. With "keep", what each buffer adds is kept for
 * pb_fuse_cost_add (f->gbytes, f->gseen). */
static void set_traffic(struct pb_fusion *f, const int *set, int n,
			int keep, int64_t *read, int64_t *written)
{
	int opaque = 0;
	traffic_index(f);
	pb_fuse_mark(f, set, n);
	if (keep) {
		f->gver++;
		f->gopaque = 0;
	}
	*read = *written = 0;
	for (int i = 0; i < n; i++)
		opaque += f->s->stmt[set[i]].kind == PB_POLY_OPAQUE;
	for (int i = 0; i < n; i++) {
		const struct pb_fuse_stmtbufs *sb = &f->stmt_bufs[set[i]];
		for (int k = 0; k < sb->n; k++) {
			int b = sb->buf[k];
			int64_t bytes[2];
			if (f->bmark[b] == f->stamp)
				continue;
			f->bmark[b] = f->stamp;
			buf_add(f, b, opaque, bytes);
			*read += bytes[0];
			*written += bytes[1];
			if (keep) {
				f->gseen[b] = f->gver;
				f->gbytes[b][0] = bytes[0];
				f->gbytes[b][1] = bytes[1];
			}
		}
	}
	if (keep)
		f->gopaque = opaque;
}

/* The iterations of the statements "set" (n of them) of "f". */
static double work_of(const struct pb_fusion *f, const int *set, int n)
{
	double work = 0;
	for (int i = 0; i < n; i++) {
		const struct pb_poly_stmt *s = &f->s->stmt[set[i]];
		double it = 1;
		for (int u = 0; u < s->depth; u++)
			it *= (double)s->extent[u];
		work += it;
	}
	return work;
}

/* The predicted time of "work" iterations at outer parallelism "par"
 * moving "rd" + "wr" bytes on the target of "f" (the file comment). */
static double predict(const struct pb_fusion *f, double work, int64_t rd,
		      int64_t wr, int64_t par)
{
	const struct pb_target *t = &f->target;
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

double pb_fuse_cost(struct pb_fusion *f, const int *set, int n,
		    int64_t par)
{
	int64_t rd, wr;
	double work = work_of(f, set, n);
	set_traffic(f, set, n, 0, &rd, &wr);
	return predict(f, work, rd, wr, par);
}

void pb_fuse_cost_group(struct pb_fusion *f, struct pb_fuse_group *g)
{
	traffic_index(f);
	if (!f->gbytes) {
		f->gbytes = calloc(f->s->nbuf + 1, sizeof(*f->gbytes));
		f->gseen = calloc(f->s->nbuf + 1, sizeof(*f->gseen));
		if (!f->gbytes || !f->gseen)
			abort();
	}
	g->work = work_of(f, g->stmt, g->n);
	set_traffic(f, g->stmt, g->n, 1, &g->rd, &g->wr);
	g->t = predict(f, g->work, g->rd, g->wr, g->par);
}

/* The bytes buffer "b" adds to the group of pb_fuse_cost_add with its
 * statement (marked, OPAQUE of them "opaque") replace those it added
 * without it in *rd and *wr; kept with "keep". Only a buffer the group
 * counted is counted when "counted_only". */
static void buf_again(struct pb_fusion *f, int b, int opaque, int keep,
		      int counted_only, int64_t *rd, int64_t *wr)
{
	int64_t bytes[2];
	if (f->bmark[b] == f->stamp)
		return;
	f->bmark[b] = f->stamp;
	int seen = f->gseen[b] == f->gver;
	if (counted_only && !seen)
		return;
	if (seen) {
		*rd -= f->gbytes[b][0];
		*wr -= f->gbytes[b][1];
	}
	buf_add(f, b, opaque, bytes);
	*rd += bytes[0];
	*wr += bytes[1];
	if (keep) {
		f->gseen[b] = f->gver;
		f->gbytes[b][0] = bytes[0];
		f->gbytes[b][1] = bytes[1];
	}
}

/* A buffer the added statement "i" neither reads nor writes adds what it
 * did: its users are the same, and so are its accesses but for one of
 * "i" (the bytes of the buffers "i" reads or writes, and of the ones it
 * accesses that the group counts, are counted again), unless "i" is
 * OPAQUE (then every buffer is, as pb_fuse_cost does). */
double pb_fuse_cost_add(struct pb_fusion *f, struct pb_fuse_group *g,
			const int *all, int n, int64_t par, int keep)
{
	int i = all[n - 1];
	const struct pb_poly_stmt *st = &f->s->stmt[i];
	int64_t rd = g->rd, wr = g->wr;
	double work = g->work + work_of(f, &i, 1);
	if (st->kind == PB_POLY_OPAQUE) {
		set_traffic(f, all, n, keep, &rd, &wr);
	} else {
		pb_fuse_mark(f, all, n);
		const struct pb_fuse_stmtbufs *sb = &f->stmt_bufs[i];
		for (int k = 0; k < sb->n; k++)
			buf_again(f, sb->buf[k], f->gopaque, keep, 0, &rd, &wr);
		for (int k = 0; k < st->naccess; k++)
			buf_again(f, st->access[k].buf, f->gopaque, keep, 1,
				  &rd, &wr);
	}
	double t = predict(f, work, rd, wr, par);
	if (keep) {
		g->work = work;
		g->rd = rd;
		g->wr = wr;
		g->t = t;
	}
	return t;
}
