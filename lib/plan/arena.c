/* Memory planning of a launch plan: the live range of every intermediate
 * (scratch) buffer over the launch sequence, their packing into one arena
 * with offsets, the check that a packing never lets two buffers that are
 * live at the same launch share a byte, and the plan's memory footprint.
 * Like plan.c it needs libc only, so that pb-run-lite checks the plans it
 * reads with the same code.
 *
 * The packer is the greedy assignment of TFLite's and onnxruntime's
 * memory planners: items are placed one by one, each at the lowest
 * offset of the smallest gap (best fit) left between the items already
 * placed that are live at the same time, else past the last of them. The
 * order decides how well it packs, and no one order wins everywhere, so
 * it packs in four (largest first, as TFLite's greedy by size; longest
 * lived first; largest size x lifetime first; earliest first) and keeps
 * the smallest arena, the first order on ties.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

/* "n" rounded up to a multiple of "align" (a power of two). */
static int64_t round_up(int64_t n, int64_t align)
{
	return (n + align - 1) & ~(align - 1);
}

/* Are the live ranges of items "a" and "b" (both live) overlapping? */
static int live_together(const struct pb_arena_item *a,
			 const struct pb_arena_item *b)
{
	return a->first <= b->last && b->first <= a->last;
}

static int is_live(const struct pb_arena_item *a)
{
	return a->first >= 0 && a->first <= a->last && a->bytes > 0;
}

/* The orders of placement (see above), each then larger first, earlier
 * first and by index, so that the packing is deterministic. */
enum order { BY_SIZE, BY_LIFETIME, BY_AREA, BY_START, NORDERS };
static const struct pb_arena_item *sort_items;
static enum order sort_order;
static int by_order(const void *x, const void *y)
{
	const struct pb_arena_item *a = &sort_items[*(const int *)x];
	const struct pb_arena_item *b = &sort_items[*(const int *)y];
	int64_t la = a->last - a->first + 1, lb = b->last - b->first + 1;
	int64_t ka = 0, kb = 0;
	switch (sort_order) {
	case BY_LIFETIME:
		ka = la, kb = lb;
		break;
	case BY_AREA:
		ka = a->bytes * la, kb = b->bytes * lb;
		break;
	case BY_START:
		ka = -a->first, kb = -b->first;
		break;
	case BY_SIZE:
	case NORDERS:
		break;
	}
	if (ka != kb)
		return ka > kb ? -1 : 1;
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	return *(const int *)x - *(const int *)y;
}

/* The placed items that conflict with the current one, by offset. */
static const int64_t *sort_offsets;
static int by_offset(const void *x, const void *y)
{
	int64_t a = sort_offsets[*(const int *)x];
	int64_t b = sort_offsets[*(const int *)y];
	return a < b ? -1 : a > b;
}

/* Place the "n" "items" in the order "order" (a permutation of them) at
 * offsets "offset" as described above, with scratch space "conf" and
 * "placed" (n entries each); returns the arena's size. */
static int64_t place(int n, const struct pb_arena_item *items, int64_t align,
		     const int *order, int64_t *offset, int *conf, char *placed)
{
	int64_t arena = 0;
	for (int i = 0; i < n; i++) {
		offset[i] = 0;
		placed[i] = 0;
	}
	for (int k = 0; k < n; k++) {
		int i = order[k], nc = 0;
		if (!is_live(&items[i]))
			continue;
		int64_t size = round_up(items[i].bytes, align);
		for (int j = 0; j < n; j++)
			if (placed[j] && live_together(&items[i], &items[j]))
				conf[nc++] = j;
		sort_offsets = offset;
		qsort(conf, nc, sizeof(int), by_offset);
		/* best fit among the gaps below and between the conflicting
		 * items; past the end of all of them when none fits */
		int64_t at = -1, best = -1, end = 0;
		for (int c = 0; c < nc; c++) {
			int j = conf[c];
			int64_t gap = offset[j] - end;
			if (gap >= size && (best < 0 || gap < best)) {
				best = gap;
				at = end;
			}
			int64_t e = offset[j] + round_up(items[j].bytes, align);
			end = e > end ? e : end;
		}
		offset[i] = at >= 0 ? at : end;
		placed[i] = 1;
		if (offset[i] + size > arena)
			arena = offset[i] + size;
	}
	return arena;
}

int64_t pb_arena_pack(int n, const struct pb_arena_item *items,
		      int64_t align, int64_t *offset)
{
	int *order = malloc(sizeof(int) * (n + 1));
	int *conf = malloc(sizeof(int) * (n + 1));
	int64_t *off = malloc(sizeof(int64_t) * (n + 1));
	char *placed = malloc(n + 1);
	int64_t arena = -1;
	if (!order || !conf || !off || !placed)
		abort();
	for (enum order o = BY_SIZE; o < NORDERS; o++) {
		for (int i = 0; i < n; i++)
			order[i] = i;
		sort_items = items;
		sort_order = o;
		qsort(order, n, sizeof(int), by_order);
		int64_t a = place(n, items, align, order, off, conf, placed);
		if (arena < 0 || a < arena) {
			arena = a;
			memcpy(offset, off, sizeof(int64_t) * n);
		}
	}
	free(order);
	free(conf);
	free(off);
	free(placed);
	return arena;
}

int pb_arena_check(int n, const struct pb_arena_item *items,
		   const int64_t *offset, int64_t arena, int64_t align,
		   char *err, size_t errlen)
{
	for (int i = 0; i < n; i++) {
		if (!is_live(&items[i]))
			continue;
		if (offset[i] < 0 || offset[i] % align ||
		    offset[i] > arena - items[i].bytes) {
			snprintf(err, errlen, "buffer %d: offset %lld and %lld "
				 "bytes do not lie %lld-byte aligned in the "
				 "arena of %lld bytes", items[i].id,
				 (long long)offset[i], (long long)items[i].bytes,
				 (long long)align, (long long)arena);
			return -1;
		}
		for (int j = 0; j < i; j++)
			if (is_live(&items[j]) &&
			    live_together(&items[i], &items[j]) &&
			    offset[i] < offset[j] + items[j].bytes &&
			    offset[j] < offset[i] + items[i].bytes) {
				snprintf(err, errlen, "buffers %d and %d are "
					 "both live at launch %d but share "
					 "arena bytes", items[j].id,
					 items[i].id,
					 items[i].first > items[j].first
						 ? items[i].first
						 : items[j].first);
				return -1;
			}
	}
	return 0;
}

/* The root buffer of the plan that buffer "b" of "p" denotes. */
static int root_of(const struct pb_plan *p, int b)
{
	return p->buffers[b].kind == PB_PLAN_VIEW ? p->buffers[b].base : b;
}

/* The scratch buffers of "p" as arena items (live ranges over the
 * launches; buffers no launch uses have first -1), their ids in "ids";
 * returns how many. "items" and "ids" have room for every buffer. */
static int scratch_items(const struct pb_plan *p, struct pb_arena_item *items,
			 int *ids)
{
	int *slot = malloc(sizeof(int) * (p->nbuffers + 1)), n = 0;
	if (!slot)
		abort();
	for (int i = 0; i < p->nbuffers; i++) {
		slot[i] = -1;
		if (p->buffers[i].kind != PB_PLAN_SCRATCH)
			continue;
		items[n] = (struct pb_arena_item){i, p->buffers[i].bytes, -1, -1};
		ids[n] = i;
		slot[i] = n++;
	}
	for (int l = 0; l < p->nlaunches; l++)
		for (int a = 0; a < p->launches[l].nargs; a++) {
			const struct pb_plan_arg *x = &p->launches[l].args[a];
			if (x->kind != PB_PLAN_ARG_BUFFER || x->buffer < 0 ||
			    x->buffer >= p->nbuffers)
				continue;
			int r = root_of(p, x->buffer);
			int s = r >= 0 && r < p->nbuffers ? slot[r] : -1;
			if (s < 0)
				continue;
			if (items[s].first < 0)
				items[s].first = l;
			items[s].last = l;
		}
	free(slot);
	return n;
}

/* The scratch buffers of "p" as arena items (scratch_items), with room
 * for their offsets. */
struct scratch {
	struct pb_arena_item *items;
	int64_t *off;
	int *ids;
	int n;
};

static void scratch_of(const struct pb_plan *p, struct scratch *s)
{
	s->items = malloc(sizeof(*s->items) * (p->nbuffers + 1));
	s->off = malloc(sizeof(*s->off) * (p->nbuffers + 1));
	s->ids = malloc(sizeof(*s->ids) * (p->nbuffers + 1));
	if (!s->items || !s->off || !s->ids)
		abort();
	s->n = scratch_items(p, s->items, s->ids);
}

static void scratch_free(struct scratch *s)
{
	free(s->items);
	free(s->off);
	free(s->ids);
}

int pb_plan_liveness(const struct pb_plan *p, int *first, int *last)
{
	struct scratch s;
	for (int i = 0; i < p->nbuffers; i++)
		first[i] = last[i] = -1;
	scratch_of(p, &s);
	for (int i = 0; i < s.n; i++) {
		first[s.ids[i]] = s.items[i].first;
		last[s.ids[i]] = s.items[i].last;
	}
	scratch_free(&s);
	return s.n;
}

void pb_plan_pack(struct pb_plan *p)
{
	struct scratch s;
	scratch_of(p, &s);
	p->arena = pb_arena_pack(s.n, s.items, PB_PLAN_ALIGN, s.off);
	for (int i = 0; i < s.n; i++)
		p->buffers[s.ids[i]].arena_offset = s.off[i];
	scratch_free(&s);
}

int pb_plan_check_arena(const struct pb_plan *p, char *err, size_t errlen)
{
	if (p->arena < 0) {
		for (int i = 0; i < p->nbuffers; i++)
			if (p->buffers[i].arena_offset >= 0) {
				snprintf(err, errlen, "buffers[%d]: an arena "
					 "offset without an arena", i);
				return -1;
			}
		return 0;
	}
	for (int i = 0; i < p->nbuffers; i++)
		if ((p->buffers[i].kind == PB_PLAN_SCRATCH) !=
		    (p->buffers[i].arena_offset >= 0)) {
			snprintf(err, errlen, "buffers[%d]: %s", i,
				 p->buffers[i].kind == PB_PLAN_SCRATCH
					 ? "a scratch buffer without an arena "
					   "offset"
					 : "only scratch buffers lie in the "
					   "arena");
			return -1;
		}
	struct scratch s;
	scratch_of(p, &s);
	for (int i = 0; i < s.n; i++)
		s.off[i] = p->buffers[s.ids[i]].arena_offset;
	int rc = pb_arena_check(s.n, s.items, s.off, p->arena, PB_PLAN_ALIGN,
				err, errlen);
	scratch_free(&s);
	return rc;
}

void pb_plan_memory(const struct pb_plan *p, struct pb_plan_memory *m)
{
	int *first = malloc(sizeof(int) * (p->nbuffers + 1));
	int *last = malloc(sizeof(int) * (p->nbuffers + 1));
	int64_t *live = calloc(p->nlaunches + 1, sizeof(int64_t));
	if (!first || !last || !live)
		abort();
	memset(m, 0, sizeof(*m));
	pb_plan_liveness(p, first, last);
	for (int i = 0; i < p->nbuffers; i++) {
		const struct pb_plan_buffer *b = &p->buffers[i];
		switch (b->kind) {
		case PB_PLAN_INPUT:
			m->inputs += b->bytes;
			break;
		case PB_PLAN_OUTPUT:
			m->outputs += b->bytes;
			break;
		case PB_PLAN_PARAM:
			m->params += b->bytes;
			break;
		case PB_PLAN_SCRATCH:
			m->intermediates += b->bytes;
			for (int l = first[i]; l >= 0 && l <= last[i]; l++)
				live[l] += b->bytes;
			break;
		case PB_PLAN_VIEW:
			break;
		}
	}
	for (int l = 0; l < p->nlaunches; l++)
		m->live_max = live[l] > m->live_max ? live[l] : m->live_max;
	m->arena = p->arena;
	m->peak = m->inputs + m->outputs + m->params +
		  (p->arena >= 0 ? p->arena : m->intermediates);
	free(first);
	free(last);
	free(live);
}
