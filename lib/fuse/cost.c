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

#include "fuse/internal.h"

/* Cycles per loop iteration of one thread: a load or two, an FMA and the
 * loop overhead, with latency partly hidden. */
#define ITER_CYCLES 8.0

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
