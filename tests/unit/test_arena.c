/* Tests of lib/plan/arena.c: the packer on hand-made cases (exact
 * offsets), on random ones (every packing verified by an independent
 * overlap check, and bounded by the most bytes live at once and the sum),
 * the checker's rejections, and a plan's liveness through views, its
 * arena in the JSON round trip and in pb_plan_check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

#include "check.h"

#define A PB_PLAN_ALIGN

/* Is the packing "off" of the "n" items "it" in an arena of "arena"
 * bytes valid? Written apart from pb_arena_check, pair by pair over
 * every launch, so that the two checks check each other. */
static int valid(int n, const struct pb_arena_item *it, const int64_t *off,
		 int64_t arena)
{
	int last = 0;
	for (int i = 0; i < n; i++)
		last = it[i].last > last ? it[i].last : last;
	for (int i = 0; i < n; i++) {
		if (it[i].first < 0)
			continue;
		if (off[i] % A || off[i] < 0 || off[i] + it[i].bytes > arena)
			return 0;
	}
	for (int l = 0; l <= last; l++)
		for (int i = 0; i < n; i++)
			for (int j = i + 1; j < n; j++) {
				int li = it[i].first >= 0 && it[i].first <= l &&
					 l <= it[i].last;
				int lj = it[j].first >= 0 && it[j].first <= l &&
					 l <= it[j].last;
				if (li && lj && off[i] < off[j] + it[j].bytes &&
				    off[j] < off[i] + it[i].bytes)
					return 0;
			}
	return 1;
}

/* The most bytes of "it" live at one launch. */
static int64_t live_max(int n, const struct pb_arena_item *it)
{
	int64_t best = 0;
	for (int l = 0; l < 1000; l++) {
		int64_t s = 0;
		for (int i = 0; i < n; i++)
			if (it[i].first >= 0 && it[i].first <= l && l <= it[i].last)
				s += it[i].bytes;
		best = s > best ? s : best;
	}
	return best;
}

static const struct {
	const char *name;
	int n;
	struct pb_arena_item it[6];
	int64_t want[6], arena;
} cases[] = {
	{"one buffer, rounded up to the alignment", 1,
	 {{0, 100, 0, 0}}, {0}, A},
	{"disjoint lives share offset 0", 3,
	 {{0, 1000, 0, 0}, {1, 600, 1, 1}, {2, 1024, 2, 2}}, {0, 0, 0}, 1024},
	{"all live together: one after another, largest first", 3,
	 {{0, 256, 0, 2}, {1, 1024, 0, 2}, {2, 512, 0, 2}},
	 {1536, 0, 1024}, 1792},
	/* the chain of tests/lit/pb-codegen/Inputs/chain.mlir */
	{"chain: the last and largest takes the first's bytes", 4,
	 {{0, 4096, 0, 2}, {1, 4096, 1, 2}, {2, 4096, 2, 3}, {3, 8192, 3, 4}},
	 {0, 4096, 8192, 0}, 12288},
	/* 0..4096 holds a big buffer over 0-1, 4096..5120 and 5120..8192
	 * two over 0-3; at launch 2 the gaps are 0..4096 (4096) and none
	 * else; a 1024-byte buffer over 2-3 takes the gap */
	{"a gap left by a dead buffer is reused", 4,
	 {{0, 4096, 0, 1}, {1, 3072, 0, 3}, {2, 1024, 0, 3}, {3, 1024, 2, 3}},
	 {0, 4096, 7168, 0}, 8192},
	/* best fit: 2 KiB over 0-1 at 0, then 1 KiB buffers: over 0-9 at
	 * 2048, over 0-1 at 3072, over 0-9 at 4096; at launch 3 the gaps
	 * are 0..2048 and 3072..4096: a 1 KiB buffer over 3-9 goes in the
	 * smaller (first fit would take 0) */
	{"best fit: the smallest gap that holds it", 5,
	 {{0, 2048, 0, 1}, {1, 1024, 0, 9}, {2, 1024, 0, 1}, {3, 1024, 0, 9},
	  {4, 1024, 3, 9}},
	 {0, 2048, 3072, 4096, 3072}, 5120},
	/* largest first puts the 768-byte buffer at 0, the 512-byte ones at
	 * 0 and 512, and the 256-byte one (live with the 768 and the second
	 * 512) past both: 1280; another order reaches 1024, the most live at
	 * once (launches 1 and 4) */
	{"the best of several orders", 4,
	 {{0, 512, 1, 2}, {1, 512, 0, 1}, {2, 256, 2, 4}, {3, 768, 4, 6}},
	 {512, 0, 0, 256}, 1024},
	{"a buffer no launch uses takes no space", 2,
	 {{0, 512, 0, 3}, {1, 1 << 20, -1, -1}}, {0, 0}, 512},
};

static void test_cases(void)
{
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		int64_t off[6] = {0};
		char err[256] = "", what[160];
		int64_t arena = pb_arena_pack(cases[c].n, cases[c].it, A, off);
		int ok = arena == cases[c].arena;
		for (int i = 0; i < cases[c].n; i++)
			ok &= off[i] == cases[c].want[i];
		snprintf(what, sizeof(what), "%s: arena %lld, offsets %lld %lld "
			 "%lld %lld %lld", cases[c].name, (long long)arena,
			 (long long)off[0], (long long)off[1],
			 (long long)off[2], (long long)off[3],
			 (long long)off[4]);
		check(ok, what);
		check(pb_arena_check(cases[c].n, cases[c].it, off, arena, A,
				     err, sizeof(err)) == 0, err);
		check(valid(cases[c].n, cases[c].it, off, arena), cases[c].name);
	}
}

static void test_random(void)
{
	unsigned s = 12345;
	int bad = 0, loose = 0;
	for (int t = 0; t < 300; t++) {
		struct pb_arena_item it[60];
		int64_t off[60], sum = 0;
		int n = 1 + t % 60;
		for (int i = 0; i < n; i++) {
			s = s * 1103515245 + 12345;
			int first = (s >> 8) % 40;
			s = s * 1103515245 + 12345;
			int len = (s >> 8) % (t % 3 ? 4 : 30);
			s = s * 1103515245 + 12345;
			int64_t bytes = 1 + (s >> 8) % (1 << (4 + t % 16));
			it[i] = (struct pb_arena_item){i, bytes, first, first + len};
			if (i % 17 == 16)
				it[i].first = it[i].last = -1;
			else
				sum += (bytes + A - 1) / A * A;
		}
		char err[256];
		int64_t arena = pb_arena_pack(n, it, A, off);
		bad += !valid(n, it, off, arena) ||
		       pb_arena_check(n, it, off, arena, A, err, sizeof(err));
		loose += arena < live_max(n, it) || arena > sum;
	}
	check(!bad, "300 random packings pass both overlap checks");
	check(!loose, "live max <= arena <= sum of the aligned sizes");
}

static void test_checker(void)
{
	struct pb_arena_item it[2] = {{7, 1024, 0, 2}, {9, 512, 2, 3}};
	int64_t share[2] = {0, 512}, apart[2] = {0, 1024}, odd[2] = {0, 1100};
	char err[256] = "";
	check(pb_arena_check(2, it, share, 1024, A, err, sizeof(err)) < 0 &&
		      strstr(err, "buffers 7 and 9 are both live at launch 2"),
	      err);
	check(pb_arena_check(2, it, apart, 1536, A, err, sizeof(err)) == 0,
	      "apart: ok");
	check(pb_arena_check(2, it, apart, 1535, A, err, sizeof(err)) < 0 &&
		      strstr(err, "buffer 9"),
	      "past the arena's end rejected");
	check(pb_arena_check(2, it, odd, 4096, A, err, sizeof(err)) < 0,
	      "unaligned offset rejected");
	it[1].first = 3;
	check(pb_arena_check(2, it, share, 1024, A, err, sizeof(err)) == 0,
	      "disjoint lives may share bytes");
}

/* A plan: k0 writes t (scratch) through a view, k1 reads t's view and
 * writes u, k2 reads u and writes the output; t lives 0-1 through its
 * view, u 1-2, v (8 KiB) 2-2. */
static struct pb_plan *chain(void)
{
	struct pb_plan *p = pb_plan_alloc("sm_90", NULL);
	int64_t n[] = {1024}, nn[] = {2, 512}, st[] = {512, 1}, big[] = {2048};
	int64_t g[] = {1, 1, 1};
	pb_plan_add_buffer(p, PB_PLAN_INPUT, "x", 0, "f32", 1, n);    /* 0 */
	pb_plan_add_buffer(p, PB_PLAN_PARAM, "w", 1, "f32", 1, n);    /* 1 */
	pb_plan_add_buffer(p, PB_PLAN_OUTPUT, "y", 2, "f32", 1, n);   /* 2 */
	pb_plan_add_buffer(p, PB_PLAN_SCRATCH, NULL, -1, "f32", 1, n); /* 3 t */
	pb_plan_add_view(p, 3, "f32", 2, nn, st, 0, 0);               /* 4 */
	pb_plan_add_buffer(p, PB_PLAN_SCRATCH, NULL, -1, "f32", 1, n); /* 5 u */
	pb_plan_add_buffer(p, PB_PLAN_SCRATCH, NULL, -1, "f32", 1, big); /* 6 v */
	pb_plan_add_buffer(p, PB_PLAN_SCRATCH, NULL, -1, "f32", 1, n); /* 7 dead */
	struct pb_plan_launch *l = pb_plan_add_launch(p, "k0", NULL, 0, NULL,
						      g, g, 0);
	pb_plan_launch_add_buffer(l, 0);
	pb_plan_launch_add_buffer(l, 4);
	l = pb_plan_add_launch(p, "k1", NULL, 0, NULL, g, g, 0);
	pb_plan_launch_add_buffer(l, 4);
	pb_plan_launch_add_buffer(l, 1);
	pb_plan_launch_add_buffer(l, 5);
	l = pb_plan_add_launch(p, "k2", NULL, 0, NULL, g, g, 0);
	pb_plan_launch_add_buffer(l, 5);
	pb_plan_launch_add_buffer(l, 6);
	pb_plan_launch_add_buffer(l, 2);
	return p;
}

static void test_plan(void)
{
	struct pb_plan *p = chain(), *q;
	int first[8], last[8];
	char err[256] = "";
	check(pb_plan_liveness(p, first, last) == 4, "four scratch buffers");
	check(first[3] == 0 && last[3] == 1, "a view keeps its base alive");
	check(first[5] == 1 && last[5] == 2 && first[6] == 2 && last[6] == 2,
	      "live ranges from the launches");
	check(first[7] == -1 && first[0] == -1 && first[4] == -1,
	      "unused scratch, inputs and views have none");
	check(p->arena == -1 && p->buffers[3].arena_offset == -1,
	      "no arena before packing");
	pb_plan_pack(p);
	/* v (8 KiB, 2) at 0; t (4 KiB, 0-1) at 0; u (4 KiB, 1-2): live with
	 * t and v, past both: 8192 */
	check(p->arena == 12288 && p->buffers[6].arena_offset == 0 &&
		      p->buffers[3].arena_offset == 0 &&
		      p->buffers[5].arena_offset == 8192 &&
		      p->buffers[7].arena_offset == 0 &&
		      p->buffers[4].arena_offset == -1,
	      "plan packed");
	check(pb_plan_check(p, err, sizeof(err)) == 0, err);

	struct pb_plan_memory m;
	pb_plan_memory(p, &m);
	check(m.inputs == 4096 && m.params == 4096 && m.outputs == 4096 &&
		      m.intermediates == 4096 * 3 + 8192 && m.arena == 12288 &&
		      m.live_max == 12288 && m.peak == 3 * 4096 + 12288,
	      "memory footprint");

	char *json = pb_plan_to_json(p, NULL);
	q = pb_plan_from_json(json, strlen(json), err, sizeof(err));
	check(q && q->arena == 12288 && q->buffers[5].arena_offset == 8192 &&
		      q->buffers[0].arena_offset == -1,
	      "arena in the JSON round trip");
	check(strstr(json, "\"live\": [0, 1]") && strstr(json, "\"peak\": 24576"),
	      "live ranges and the footprint written");
	pb_plan_free(q);
	free(json);

	/* u moved onto t's bytes while both are live at launch 1 */
	p->buffers[5].arena_offset = 0;
	check(pb_plan_check(p, err, sizeof(err)) < 0 &&
		      strstr(err, "buffers 3 and 5 are both live at launch 1"),
	      err);
	json = pb_plan_to_json(p, NULL);
	q = pb_plan_from_json(json, strlen(json), err, sizeof(err));
	check(!q && strstr(err, "share arena bytes"), "reader rejects it");
	free(json);
	p->buffers[5].arena_offset = 8192;
	p->buffers[0].arena_offset = 0;
	check(pb_plan_check(p, err, sizeof(err)) < 0 &&
		      strstr(err, "only scratch buffers"), err);
	p->buffers[0].arena_offset = -1;
	p->buffers[7].arena_offset = -1;
	check(pb_plan_check(p, err, sizeof(err)) < 0 &&
		      strstr(err, "without an arena offset"), err);
	pb_plan_free(p);
}

int main(void)
{
	test_cases();
	test_random();
	test_checker();
	test_plan();
	return check_summary("test_arena");
}
