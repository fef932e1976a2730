/* Table-driven tests of the runtime's MLIR-free GPU-side pieces: the
 * signature a launch plan gives @main (lib/runtime/cuda.c), input kind
 * detection and weights lookup (gpurun.c), and pb-prof's statistics and
 * cost attribution (prof.c). No driver is needed. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan/plan.h"
#include "runtime/runtime.h"

#include "check.h"
#include "quiet.h"


/* A plan whose arguments come in the order "order" (3 root buffers with
 * arg positions order[0..2]), plus a scratch buffer and a view. */
static struct pb_plan *plan3(const int order[3], const char *dt)
{
	struct pb_plan *p = pb_plan_alloc("sm_90", NULL);
	int64_t s[] = {2, 3}, st[] = {3, 1}, b[] = {4};
	pb_plan_add_buffer(p, PB_PLAN_OUTPUT, "y", order[0], "f32", 2, s);
	pb_plan_add_buffer(p, PB_PLAN_INPUT, "x", order[1], dt, 2, s);
	pb_plan_add_buffer(p, PB_PLAN_PARAM, "w", order[2], "f32", 1, b);
	pb_plan_add_buffer(p, PB_PLAN_SCRATCH, NULL, -1, "f32", 2, s);
	pb_plan_add_view(p, 3, "f32", 2, s, st, 0, 0);
	return p;
}

static void test_signature(void)
{
	struct pb_ctx ctx = {.tool = "test", .input_name = "k.ptx"};
	struct {
		int order[3];
		const char *dtype;
		int ok;
		const char *names; /* argument names in order */
	} cases[] = {
		{{2, 0, 1}, "f32", 1, "x w y"},
		{{0, 1, 2}, "index", 1, "y x w"},
		{{0, 1, 3}, "f32", 0, NULL},   /* out of range */
		{{0, 1, 1}, "f32", 0, NULL},   /* taken twice */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pb_plan *p = plan3(cases[i].order, cases[i].dtype);
		struct pb_runtime_sig sig;
		quiet(!cases[i].ok);
		int rc = pb_runtime_plan_signature(&ctx, p, &sig);
		quiet(0);
		check((rc == PB_OK) == cases[i].ok, "signature: status");
		if (rc == PB_OK) {
			char buf[64] = "";
			for (int k = 0; k < sig.nargs; k++)
				snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
					 "%s%s", k ? " " : "", sig.args[k].name);
			check(sig.nargs == 3, "signature: 3 arguments");
			check(!strcmp(buf, cases[i].names), "signature: order");
			int x = cases[i].order[1];
			check(sig.args[x].role == PB_RUNTIME_INPUT &&
			      sig.args[x].dtype == (strcmp(cases[i].dtype, "index")
						    ? PB_DT_F32 : PB_DT_I64) &&
			      sig.args[x].rank == 2 && sig.args[x].dims[1] == 3,
			      "signature: input type");
			check(sig.args[cases[i].order[2]].role == PB_RUNTIME_PARAM,
			      "signature: param role");
			pb_runtime_sig_free(&sig);
		}
		pb_plan_free(p);
	}
}

static void test_is_ptx(void)
{
	struct {
		const char *path, *data;
		int ptx;
	} cases[] = {
		{"k.ptx", "anything", 1},
		{NULL, "// pb-plan-begin\n// {}\n", 1},
		{NULL, "//\n.version 8.0\n.target sm_90\n", 1},
		{NULL, "module {\n}\n", 0},
		{"m.mlir", "// pb-plan-begin\n", 0},
		{NULL, "\x08\x07onnx", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pb_input in = {.path = cases[i].path, .data = cases[i].data,
				      .len = strlen(cases[i].data)};
		check(pb_runtime_is_ptx(&in) == cases[i].ptx, "is_ptx");
	}
}

static void test_find_source(void)
{
	struct {
		const char *source, *near, *opt, *want;
	} cases[] = {
		{"m.onnx", "dir/k.ptx", "w.onnx", "w.onnx"},
		{"/abs/m.onnx", "dir/k.ptx", NULL, "/abs/m.onnx"},
		{"nowhere.onnx", "dir/k.ptx", NULL, "nowhere.onnx"},
		{"m.onnx", NULL, NULL, "m.onnx"},
		{NULL, "k.ptx", NULL, NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = pb_runtime_find_source(cases[i].source, cases[i].near,
						   cases[i].opt);
		check(cases[i].want ? got && !strcmp(got, cases[i].want) : !got,
		      "find_source");
		free(got);
	}
}

static void test_stats(void)
{
	struct pb_prof *p = pb_prof_alloc("cpu", 0, 2, 0, 4);
	double a[] = {3, 1, 2, 10}, b[] = {1, 1, 1, 1};
	char *nodes[] = {"n0"};
	pb_prof_kernel_set(&p->k[0], "k0", NULL, 1, nodes);
	pb_prof_kernel_set(&p->k[1], "k1", "f", 0, NULL);
	memcpy(p->k[0].ms, a, sizeof(a));
	memcpy(p->k[1].ms, b, sizeof(b));
	pb_prof_summarize(p);
	check(p->k[0].median == 2.5 && p->k[0].min == 1, "median/min even");
	check(p->sum_median == 3.5, "sum of medians");
	check(p->total_median == 3.5 && p->total_min == 2, "per-run totals");
	check(!strcmp(p->k[0].origin, "k0") && p->k[0].nnodes == 1,
	      "origin defaults to the name");
	struct pb_buf t = {0};
	pb_prof_table(p, &t);
	check(t.data && strstr(t.data, "2 kernels, warmup 0, repeat 4") &&
	      strstr(t.data, "71.4%"), "table");
	pb_buf_free(&t);
	pb_prof_free(p);
}

static void test_costs(void)
{
	/* kernels from origins a (twice), b (once), c (three times) */
	const char *origins[] = {"a", "a", "b", "c", "c", "c"};
	struct pb_prof *p = pb_prof_alloc("gpu", 1, 6, 0, 1);
	for (int i = 0; i < 6; i++)
		pb_prof_kernel_set(&p->k[i], "k", origins[i], 0, NULL);
	double an[] = {5, 7}, cn[] = {1, 2};
	struct pb_prof_cost ca = {"a", 12, 2, an}, cb = {"b", 4, 0, NULL},
			    cc = {"c", 3, 2, cn};
	pb_prof_set_cost(p, &ca);
	pb_prof_set_cost(p, &cb);
	pb_prof_set_cost(p, &cc);
	check(p->k[0].flops == 5 && p->k[1].flops == 7, "flops per nest");
	check(p->k[2].flops == 4, "flops of a single launch");
	check(p->k[3].flops < 0 && p->k[5].flops < 0,
	      "flops unknown when launches and nests differ");
	pb_prof_free(p);
}

int main(void)
{
	test_signature();
	test_is_ptx();
	test_find_source();
	test_stats();
	test_costs();
	return check_summary("test_prof");
}
