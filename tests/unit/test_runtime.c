/* Table-driven tests of lib/runtime/run.c (the MLIR-free half of pb-run):
 * allclose checking with its report line, and binding inputs from
 * --random (determinism, ranges) and from files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>

#include "core/npy.h"
#include "runtime/runtime.h"

#include "check.h"

/* Comparison cases on 3-element f32 vectors: "got" against "want" with
 * "rtol"/"atol"; "ok" says whether they must pass, "line" is a substring
 * of the report line. */
static const struct {
	const char *what;
	float got[3], want[3];
	double rtol, atol;
	int ok;
	const char *line;
} cmp_cases[] = {
	{"equal", {1, 2, 3}, {1, 2, 3}, 1e-4, 1e-5, 1,
	 "max abs err 0.0e+00, max rel err 0.0e+00 (rtol 1e-04, atol 1e-05): ok"},
	{"within rtol", {1.00005f, 2, 3}, {1, 2, 3}, 1e-4, 0, 1, ": ok"},
	{"beyond rtol", {1.0002f, 2, 3}, {1, 2, 3}, 1e-4, 0, 0, ": mismatch"},
	{"within atol at zero", {1e-6f, 2, 3}, {0, 2, 3}, 0, 1e-5, 1,
	 "max rel err 0.0e+00"},
	{"beyond atol at zero", {1e-4f, 2, 3}, {0, 2, 3}, 1e-4, 1e-5, 0,
	 "max abs err 1.0e-04"},
	{"nan equals nan", {NAN, 2, 3}, {NAN, 2, 3}, 1e-4, 1e-5, 1, ": ok"},
	{"nan against a number", {NAN, 2, 3}, {1, 2, 3}, 1e-4, 1e-5, 0,
	 ": mismatch"},
	{"inf equals inf", {INFINITY, 2, 3}, {INFINITY, 2, 3}, 1e-4, 1e-5, 1,
	 ": ok"},
	{"inf against -inf", {INFINITY, 2, 3}, {-INFINITY, 2, 3}, 1e-4, 1e-5, 0,
	 ": mismatch"},
	{"odd tolerance printed exactly", {1, 2, 3}, {1, 2, 3}, 2.5e-3, 1e-5, 1,
	 "(rtol 0.0025, atol 1e-05)"},
};

/* A rank-1 f32 tensor of 3 elements over "v" (not owned). */
static struct pb_tensor vec3(const float *v)
{
	struct pb_tensor t = {0};
	t.dtype = PB_DT_F32;
	t.rank = 1;
	t.dims[0] = 3;
	t.data = (void *)v;
	t.nbytes = 12;
	return t;
}

static void test_compare(struct pb_ctx *ctx)
{
	for (size_t i = 0; i < sizeof(cmp_cases) / sizeof(cmp_cases[0]); i++) {
		struct pb_tensor g = vec3(cmp_cases[i].got);
		struct pb_tensor w = vec3(cmp_cases[i].want);
		struct pb_buf b = {0};
		int rc = pb_runtime_compare(ctx, "y", &g, &w, cmp_cases[i].rtol,
					    cmp_cases[i].atol, &b);
		check_detail((rc == PB_OK) == cmp_cases[i].ok, cmp_cases[i].what,
		      b.data);
		check_detail(b.data && strstr(b.data, cmp_cases[i].line),
		      cmp_cases[i].what, b.data);
		pb_buf_free(&b);
	}
	float a[3] = {1, 2, 3};
	struct pb_tensor g = vec3(a), w = vec3(a);
	struct pb_buf b = {0};
	w.dims[0] = 1;
	w.rank = 2;
	w.dims[1] = 3;
	check_detail(pb_runtime_compare(ctx, "y", &g, &w, 1, 1, &b) == PB_ERR &&
	      strstr(b.data, "result is f32 [3], reference is f32 [1, 3]: "
			     "mismatch"), "shape mismatch", b.data);
	pb_buf_free(&b);
}

/* A signature of two f32 [4] inputs, one i64 [2] input and an output. */
static struct pb_runtime_arg sig_args[] = {
	{.name = "a", .role = PB_RUNTIME_INPUT, .dtype = PB_DT_F32, .rank = 1,
	 .dims = {4}},
	{.name = "b", .role = PB_RUNTIME_INPUT, .dtype = PB_DT_F32, .rank = 1,
	 .dims = {4}},
	{.name = "n", .role = PB_RUNTIME_INPUT, .dtype = PB_DT_I64, .rank = 1,
	 .dims = {2}},
	{.name = "y", .role = PB_RUNTIME_OUTPUT, .dtype = PB_DT_F16, .rank = 2,
	 .dims = {2, 2}},
};

static void clear(struct pb_tensor *v, int n)
{
	for (int i = 0; i < n; i++)
		pb_tensor_clear(&v[i]);
}

static void test_random(struct pb_ctx *ctx)
{
	struct pb_runtime_sig sig = {4, sig_args};
	struct pb_runtime_opts o;
	struct pb_tensor v1[4] = {{0}}, v2[4] = {{0}}, v3[4] = {{0}};
	pb_runtime_opts_init(&o);
	o.random = "";
	check_detail(pb_runtime_bind(ctx, &sig, &o, NULL, v1) == PB_OK, "random bind",
	      NULL);
	check_detail(pb_runtime_bind(ctx, &sig, &o, NULL, v2) == PB_OK, "random bind 2",
	      NULL);
	o.random = "1";
	check_detail(pb_runtime_bind(ctx, &sig, &o, NULL, v3) == PB_OK, "random bind 3",
	      NULL);
	check_detail(!memcmp(v1[0].data, v2[0].data, 16), "same seed same values", NULL);
	check_detail(memcmp(v1[0].data, v3[0].data, 16), "other seed other values",
	      NULL);
	check_detail(memcmp(v1[0].data, v1[1].data, 16), "arguments differ", NULL);
	int in_range = 1;
	for (int i = 0; i < 4; i++) {
		float f = ((float *)v1[0].data)[i];
		in_range &= f >= -1 && f < 1;
	}
	for (int i = 0; i < 2; i++) {
		int64_t n = ((int64_t *)v1[2].data)[i];
		in_range &= n >= 0 && n < 8;
	}
	check_detail(in_range, "random ranges", NULL);
	check_detail(v1[3].dtype == PB_DT_F16 && v1[3].nbytes == 8 &&
	      !memcmp(v1[3].data, "\0\0\0\0\0\0\0\0", 8), "zeroed f16 output",
	      NULL);
	clear(v1, 4);
	clear(v2, 4);
	clear(v3, 4);
}

/* Binding from files: the first --input is used for "a", the rest of the
 * inputs must come from somewhere else. */
static void test_files(struct pb_ctx *ctx)
{
	struct pb_runtime_sig sig = {4, sig_args};
	struct pb_runtime_opts o;
	struct pb_tensor v[4] = {{0}};
	float a[4] = {1, 2, 3, 4};
	struct pb_tensor t = {0};
	char path[] = "/tmp/pb-test-runtime-XXXXXX.npy";
	int fd = mkstemps(path, 4);
	if (fd < 0) {
		check_detail(0, "temp file", NULL);
		return;
	}
	t.dtype = PB_DT_F32;
	t.rank = 1;
	t.dims[0] = 4;
	t.data = a;
	t.nbytes = sizeof(a);
	pb_npy_write(ctx, path, &t);
	pb_runtime_opts_init(&o);
	const char *inputs[] = {path};
	o.inputs.v = inputs;
	o.inputs.n = 1;
	check_detail(pb_runtime_bind(ctx, &sig, &o, NULL, v) == PB_ERR,
	      "missing inputs are an error", NULL);
	clear(v, 4);
	o.random = "";
	check_detail(pb_runtime_bind(ctx, &sig, &o, NULL, v) == PB_OK &&
	      !memcmp(v[0].data, a, sizeof(a)), "input from file", NULL);
	clear(v, 4);
	const char *two[] = {path, path, path, path};
	o.inputs.v = two;
	o.inputs.n = 3;
	check_detail(pb_runtime_bind(ctx, &sig, &o, NULL, v) == PB_ERR,
	      "dtype mismatch", NULL);
	clear(v, 4);
	o.inputs.n = 4;
	check_detail(pb_runtime_bind(ctx, &sig, &o, NULL, v) == PB_ERR,
	      "too many inputs", NULL);
	clear(v, 4);
	unlink(path);
}

int main(void)
{
	struct pb_ctx ctx = {.tool = "test", .input_name = "test"};
	/* the runtime reports errors on stderr: keep the test's output short */
	if (!freopen("/dev/null", "w", stderr))
		return 1;
	test_compare(&ctx);
	test_random(&ctx);
	test_files(&ctx);
	return check_summary("test_runtime");
}
