/* Table-driven tests of lib/target: every built-in description loads and
 * its numbers agree with the chip's published structure (peak rates from
 * SMs x lanes x clock), the defaults follow ctx->arch and
 * ctx->target_file, a description written to a file reads back the same,
 * and each kind of bad file gives exactly one error line naming the file
 * and the field. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "target/internal.h"

#include "check.h"

/* Is "a" within "rel" (relative) of "b"? */
static int near(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fabs(b);
}

static char errbuf[4096];

/* pb_target_get with stderr captured into errbuf. */
static int get(struct pb_ctx *ctx, const char *arch, const char *file,
	       struct pb_target *t)
{
	fflush(stderr);
	int saved = dup(2);
	FILE *tmp = tmpfile();
	if (saved < 0 || !tmp) {
		errbuf[0] = '\0';
		return pb_target_get(ctx, arch, file, t);
	}
	dup2(fileno(tmp), 2);
	int rc = pb_target_get(ctx, arch, file, t);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	size_t n = fread(errbuf, 1, sizeof(errbuf) - 1, tmp);
	errbuf[n] = '\0';
	fclose(tmp);
	return rc;
}

/* What each built-in chip is made of, from the whitepapers: FP32 and FP64
 * lanes per SM; dense FP16 tensor-core operations (f32 accumulate) per SM
 * per clock and the clock the tensor peaks are quoted at (H100's at 1830
 * MHz, below its 1980 MHz boost); INT8 over FP16 tensor rate (4 on GeForce
 * cards, whose f32 accumulate runs at half rate); the memory system. */
static const struct {
	const char *arch, *name;
	int sms, fp32_lanes, fp64_lanes, tc_per_clk;
	double tc_clock, int8_ratio;
	int threads_per_sm, blocks_per_sm;
	int64_t smem_optin, l2;
	double dram;
} chips[] = {
	{"sm_80", "A100", 108, 64, 32, 2048, 1.41e9, 2, 2048, 32, 163 * 1024, 40 << 20, 2.039e12},
	{"sm_86", "RTX 3090", 82, 128, 2, 512, 1.695e9, 4, 1536, 16, 99 * 1024, 6 << 20, 936e9},
	{"sm_89", "RTX 4090", 128, 128, 2, 512, 2.52e9, 4, 1536, 24, 99 * 1024, 72 << 20, 1008e9},
	{"sm_90", "H100 SXM5", 132, 128, 64, 4096, 1.83e9, 2, 2048, 32, 227 * 1024, 50 << 20, 3.35e12},
	{"sm_90a", "H100 SXM5", 132, 128, 64, 4096, 1.83e9, 2, 2048, 32, 227 * 1024, 50 << 20, 3.35e12},
	{"h200", "H200 SXM", 132, 128, 64, 4096, 1.83e9, 2, 2048, 32, 227 * 1024, 50 << 20, 4.8e12},
};

static void test_builtins(struct pb_ctx *ctx)
{
	for (size_t i = 0; i < sizeof(chips) / sizeof(chips[0]); i++) {
		char what[128];
		struct pb_target t;
		int h200 = !strcmp(chips[i].arch, "h200");
		int nerr = ctx->nerrors;
		int rc = h200 ? get(ctx, NULL, "h200", &t)
			      : get(ctx, chips[i].arch, NULL, &t);
#define CHECK(cond, ...)                                                    \
	do {                                                                \
		snprintf(what, sizeof(what), __VA_ARGS__);                  \
		check(cond, what);                                          \
	} while (0)
		CHECK(rc == PB_OK && ctx->nerrors == nerr && !errbuf[0],
		      "%s loads without a message", chips[i].arch);
		if (rc != PB_OK)
			continue;
		const char *arch = h200 ? "sm_90" : chips[i].arch;
		CHECK(!strcmp(t.arch, arch), "%s: arch '%s'", chips[i].arch,
		      t.arch);
		CHECK(strstr(t.name, chips[i].name) != NULL, "%s: name '%s'",
		      chips[i].arch, t.name);
		CHECK(t.sm_count == chips[i].sms, "%s: %d SMs", chips[i].arch,
		      t.sm_count);
		double clk = t.clock_hz, sms = t.sm_count;
		CHECK(near(t.fp32_flops, 2 * sms * chips[i].fp32_lanes * clk,
			   0.05),
		      "%s: fp32 = 2 x SMs x %d lanes x clock", chips[i].arch,
		      chips[i].fp32_lanes);
		CHECK(near(t.fp64_flops, 2 * sms * chips[i].fp64_lanes * clk,
			   0.05),
		      "%s: fp64 = 2 x SMs x %d lanes x clock", chips[i].arch,
		      chips[i].fp64_lanes);
		CHECK(near(t.tc_fp16_flops,
			   sms * chips[i].tc_per_clk * chips[i].tc_clock, 0.05),
		      "%s: tensor fp16 = SMs x %d x %g Hz", chips[i].arch,
		      chips[i].tc_per_clk, chips[i].tc_clock);
		CHECK(chips[i].tc_clock <= clk, "%s: tensor clock <= boost",
		      chips[i].arch);
		CHECK(near(t.tc_bf16_flops, t.tc_fp16_flops, 0.01) &&
			      near(t.tc_tf32_flops, t.tc_fp16_flops / 2, 0.01) &&
			      near(t.tc_int8_ops,
				   t.tc_fp16_flops * chips[i].int8_ratio, 0.01),
		      "%s: bf16 = fp16, tf32 = fp16 / 2, int8 = fp16 x %g",
		      chips[i].arch, chips[i].int8_ratio);
		CHECK(t.warp_size == 32 && t.max_threads_per_block == 1024 &&
			      t.max_threads_per_sm == chips[i].threads_per_sm &&
			      t.max_blocks_per_sm == chips[i].blocks_per_sm,
		      "%s: thread and block limits", chips[i].arch);
		CHECK(t.regs_per_sm == 65536 && t.max_regs_per_thread == 255,
		      "%s: 64K registers per SM, 255 per thread",
		      chips[i].arch);
		CHECK(t.smem_per_block == 48 * 1024 &&
			      t.smem_per_block_optin == chips[i].smem_optin &&
			      t.smem_per_sm == t.smem_per_block_optin + 1024,
		      "%s: shared memory 48 KiB, opt-in %lld, per SM 1 KiB more",
		      chips[i].arch, (long long)chips[i].smem_optin);
		CHECK(t.l2_bytes == chips[i].l2 &&
			      near(t.dram_bytes_per_s, chips[i].dram, 1e-9),
		      "%s: L2 and DRAM bandwidth", chips[i].arch);
		/* 3 us, an estimate, except where fitted to measurements
		 * (bench/fit.py: between 1 and 20 us) */
		CHECK(h200 ? t.launch_s >= 1e-6 && t.launch_s <= 2e-5
			   : near(t.launch_s, 3e-6, 1e-9), "%s: launch overhead",
		      chips[i].arch);
	}
}

/* Without arguments the target follows ctx->target_file, then ctx->arch;
 * an explicit arch wins over both. */
static void test_defaults(struct pb_ctx *ctx)
{
	struct pb_target t;
	const char *old = ctx->arch;
	check(get(ctx, NULL, NULL, &t) == PB_OK && !strcmp(t.arch, "sm_90") &&
		      strstr(t.name, "H100"),
	      "default: ctx->arch sm_90, the H100");
	ctx->arch = "sm_86";
	check(get(ctx, NULL, NULL, &t) == PB_OK && !strcmp(t.arch, "sm_86"),
	      "NULL arch follows ctx->arch");
	ctx->target_file = "h200";
	check(get(ctx, NULL, NULL, &t) == PB_OK && strstr(t.name, "H200") &&
		      near(t.dram_bytes_per_s, 4.8e12, 1e-9),
	      "NULL arch and file follow ctx->target_file");
	check(get(ctx, "sm_80", NULL, &t) == PB_OK && !strcmp(t.arch, "sm_80"),
	      "an explicit arch wins over ctx->target_file");
	ctx->target_file = NULL;
	ctx->arch = old;

	struct pb_target a, b;
	check(get(ctx, "sm_90", NULL, &a) == PB_OK &&
		      get(ctx, "sm_90a", NULL, &b) == PB_OK &&
		      !strcmp(b.arch, "sm_90a") &&
		      (strcpy(b.arch, "sm_90"), !memcmp(&a, &b, sizeof(a))),
	      "sm_90a is sm_90's description with arch sm_90a");
	check(get(ctx, NULL, "sm_90a", &b) == PB_OK && !strcmp(b.arch, "sm_90a"),
	      "--target-file sm_90a names the built-in");
	int n = 0;
	for (const char *const *p = pb_target_archs; *p; p++)
		n++;
	check(n == 5 && !strcmp(pb_target_archs[0], "sm_80") &&
		      !strcmp(pb_target_archs[4], "sm_90a"),
	      "pb_target_archs lists the five archs");
}

/* Each embedded description, written to a file, reads back the same; each
 * says where its numbers come from. */
static void test_files(struct pb_ctx *ctx, const char *dir)
{
	int n = 0;
	for (const struct pb_target_builtin *b = pb_target_builtins; b->name;
	     b++, n++) {
		char path[256], what[128];
		snprintf(path, sizeof(path), "%s/%s.json", dir, b->name);
		FILE *f = fopen(path, "w");
		if (!f || fputs(b->json, f) < 0 || fclose(f)) {
			check(0, "write a description");
			continue;
		}
		struct pb_target a, c;
		snprintf(what, sizeof(what), "%s read from a file = built-in",
			 b->name);
		check(get(ctx, NULL, b->name, &a) == PB_OK &&
			      get(ctx, NULL, path, &c) == PB_OK &&
			      !memcmp(&a, &c, sizeof(a)),
		      what);
		json_t *o = json_loads(b->json, 0, NULL);
		json_t *s = json_object_get(o, "source");
		snprintf(what, sizeof(what), "%s cites its source", b->name);
		check(json_is_string(s) && strstr(json_string_value(s), "NVIDIA"),
		      what);
		json_decref(o);
		unlink(path);
	}
	check(n == 5, "five built-in files (h200, sm_80, sm_86, sm_89, sm_90)");
}

/* sm_80's description with "field" set to the JSON "value" (NULL: removed),
 * and the one error expected after "FILE: error: ". */
static const struct {
	const char *field, *value, *msg;
} edits[] = {
	{"sm_count", NULL, "missing field 'sm_count'"},
	{"tc_int8_ops", NULL, "missing field 'tc_int8_ops'"},
	{"sm_count", "\"108\"", "field 'sm_count': expected a positive integer"},
	{"sm_count", "108.0", "field 'sm_count': expected a positive integer"},
	{"smem_per_sm", "-1", "field 'smem_per_sm': expected a positive integer"},
	{"smem_per_sm", "0", "field 'smem_per_sm': expected a positive integer"},
	{"l2_bytes", "null", "field 'l2_bytes': expected a positive integer"},
	{"clock_hz", "\"fast\"", "field 'clock_hz': expected a positive number"},
	{"dram_bytes_per_s", "-2e12",
	 "field 'dram_bytes_per_s': expected a positive number"},
	{"clock_hz", "1.41",
	 "field 'clock_hz': 1.41 is out of range [1e+08, 1e+10] (hertz)"},
	{"dram_bytes_per_s", "2039",
	 "field 'dram_bytes_per_s': 2039 is out of range [1e+09, 1e+15] "
	 "(bytes per second)"},
	{"warp_size", "64", "field 'warp_size': expected 32, got 64"},
	{"max_threads_per_block", "2048",
	 "field 'max_threads_per_block': 2048 is out of range [32, 1024] "
	 "(threads)"},
	{"max_regs_per_thread", "256",
	 "field 'max_regs_per_thread': 256 is out of range [16, 255] "
	 "(registers)"},
	{"smem_per_sm", "164",
	 "field 'smem_per_sm': 164 is out of range [1024, 16777216] (bytes)"},
	{"max_threads_per_block", "1000",
	 "field 'max_threads_per_block': 1000 is not a multiple of warp_size "
	 "(32)"},
	{"max_threads_per_sm", "2000",
	 "field 'max_threads_per_sm': 2000 is not a multiple of warp_size (32)"},
	{"max_threads_per_sm", "512",
	 "field 'max_threads_per_block': 1024 is more than max_threads_per_sm "
	 "(512)"},
	{"smem_per_block", "200000",
	 "field 'smem_per_block': 200000 is more than smem_per_block_optin "
	 "(166912)"},
	{"smem_per_block_optin", "200000",
	 "field 'smem_per_block_optin': 200000 is more than smem_per_sm "
	 "(167936)"},
	{"arch", "\"sm_75\"",
	 "field 'arch': unknown arch 'sm_75' (expected sm_80, sm_86, sm_89, "
	 "sm_90 or sm_90a)"},
	{"arch", "80", "field 'arch': expected a string"},
	{"name", "\"\"", "field 'name': expected 1 to 63 characters"},
	{"sm_cout", "108", "unknown field 'sm_cout'"},
	{"source", "3", "field 'source': expected a string"},
	{"model", "[1]", "field 'model': expected an object"},
	{"model", "{\"chain_cycle\": 4}", "unknown field 'model.chain_cycle'"},
	{"model", "{\"source\": 1}", "field 'model.source': expected a string"},
	{"model", "{\"mem_cycles\": \"4\"}",
	 "field 'model.mem_cycles': expected a positive number"},
	{"model", "{\"dram_efficiency\": 1.5}",
	 "field 'model.dram_efficiency': 1.5 is out of range [0.05, 1] (of "
	 "dram_bytes_per_s)"},
	{"model", "{\"hiding_occupancy\": 0}",
	 "field 'model.hiding_occupancy': expected a positive number"},
};

/* The "model" object: absent fields take the defaults, given ones are
 * read; every built-in has all six in range. */
static void test_model(struct pb_ctx *ctx, const char *dir)
{
	static const struct pb_target_model def = PB_TARGET_MODEL_DEFAULTS;
	char path[256];
	struct pb_target t;
	snprintf(path, sizeof(path), "%s/model.json", dir);
	json_t *o = json_loads(pb_target_builtins[1].json, 0, NULL);
	json_object_del(o, "model");
	json_dump_file(o, path, 0);
	check(get(ctx, NULL, path, &t) == PB_OK &&
		      !memcmp(&t.model, &def, sizeof(def)),
	      "no model object: the defaults");
	json_object_set_new(o, "model", json_loads(
		"{\"source\": \"a fit\", \"mem_cycles\": 6, "
		"\"l2_over_dram\": 3.5}", 0, NULL));
	json_dump_file(o, path, 0);
	check(get(ctx, NULL, path, &t) == PB_OK && t.model.mem_cycles == 6 &&
		      t.model.l2_over_dram == 3.5 &&
		      t.model.chain_cycles == def.chain_cycles &&
		      t.model.tree_step_cycles == def.tree_step_cycles,
	      "a model object: given fields read, the rest the defaults");
	json_decref(o);
	unlink(path);
	for (const struct pb_target_builtin *b = pb_target_builtins; b->name;
	     b++) {
		char what[128];
		snprintf(what, sizeof(what), "%s: model constants in range",
			 b->name);
		check(get(ctx, NULL, b->name, &t) == PB_OK &&
			      t.model.dram_efficiency > 0 &&
			      t.model.dram_efficiency <= 1 &&
			      t.model.hiding_occupancy <= 1 &&
			      t.model.chain_cycles >= 1 &&
			      t.model.mem_cycles > 0,
		      what);
	}
}

/* Files that are not a description at all: the text, the position after
 * the file name and the start of the message. */
static const struct {
	const char *text, *pos, *msg;
} raws[] = {
	{"", ":1:0", "invalid JSON: "},
	{"{\"arch\": \"sm_80\",\n}", ":2:1", "invalid JSON: "},
	{"{\"arch\": \"sm_80\", \"arch\": \"sm_90\"}", ":1:24",
	 "invalid JSON: duplicate object key"},
	{"[1, 2]", "", "expected a JSON object"},
	{"{}", "", "missing field 'arch'"},
};

/* Did the last get() print exactly "prefix: error: msg" (or only start
 * with "msg" when "whole" is 0) on one line? */
static int one_error(const char *prefix, const char *msg, int whole)
{
	char want[1024];
	snprintf(want, sizeof(want), "%s: error: %s", prefix, msg);
	size_t n = strlen(want), len = strlen(errbuf);
	if (len == 0 || errbuf[len - 1] != '\n' || memchr(errbuf, '\n', len - 1))
		return 0;
	return !strncmp(errbuf, want, n) && (!whole || len == n + 1);
}

static void test_errors(struct pb_ctx *ctx, const char *dir)
{
	char path[256], what[256];
	struct pb_target t;
	snprintf(path, sizeof(path), "%s/bad.json", dir);
	json_t *base = json_loads(pb_target_builtins[1].json, 0, NULL);
	check(base && !strcmp(pb_target_builtins[1].name, "sm_80"),
	      "sm_80 is the second built-in");
	for (size_t i = 0; base && i < sizeof(edits) / sizeof(edits[0]); i++) {
		json_t *o = json_deep_copy(base);
		if (edits[i].value)
			json_object_set_new(o, edits[i].field,
					    json_loads(edits[i].value,
						       JSON_DECODE_ANY, NULL));
		else
			json_object_del(o, edits[i].field);
		json_dump_file(o, path, JSON_INDENT(1));
		json_decref(o);
		int nerr = ctx->nerrors;
		int rc = get(ctx, NULL, path, &t);
		snprintf(what, sizeof(what), "%s = %s: %s", edits[i].field,
			 edits[i].value ? edits[i].value : "(none)",
			 edits[i].msg);
		check(rc == PB_ERR && ctx->nerrors == nerr + 1 &&
			      one_error(path, edits[i].msg, 1),
		      what);
		if (rc != PB_ERR || !one_error(path, edits[i].msg, 1))
			printf("  got: %s", errbuf);
	}
	json_decref(base);

	for (size_t i = 0; i < sizeof(raws) / sizeof(raws[0]); i++) {
		FILE *f = fopen(path, "w");
		if (f) {
			fputs(raws[i].text, f);
			fclose(f);
		}
		char where[300];
		snprintf(where, sizeof(where), "%s%s", path, raws[i].pos);
		int nerr = ctx->nerrors;
		int rc = get(ctx, NULL, path, &t);
		snprintf(what, sizeof(what), "file '%s': %s", raws[i].text,
			 raws[i].msg);
		check(rc == PB_ERR && ctx->nerrors == nerr + 1 &&
			      one_error(where, raws[i].msg, !*raws[i].pos),
		      what);
		if (rc != PB_ERR || !one_error(where, raws[i].msg, !*raws[i].pos))
			printf("  got: %s", errbuf);
	}
	unlink(path);

	check(get(ctx, NULL, path, &t) == PB_ERR &&
		      one_error(path, "cannot read: No such file or directory", 1),
	      "a missing file");
	check(get(ctx, NULL, "h300", &t) == PB_ERR &&
		      one_error("h300", "cannot read: No such file or directory", 1),
	      "a name that is no built-in is a file name");
	check(get(ctx, "sm_75", NULL, &t) == PB_ERR &&
		      one_error("pb-test", "unknown --arch 'sm_75' (expected "
				"sm_80, sm_86, sm_89, sm_90 or sm_90a)", 1),
	      "unknown arch");
	check(get(ctx, "h200", NULL, &t) == PB_ERR &&
		      one_error("pb-test", "unknown --arch 'h200'", 0),
	      "h200 is a description, not an arch");
}

int main(void)
{
	struct pb_ctx *ctx = pb_ctx_alloc("pb-test");
	char dir[] = "/tmp/pb-target-XXXXXX";
	if (!ctx || !mkdtemp(dir)) {
		printf("test_target: cannot set up\n");
		return 1;
	}
	test_builtins(ctx);
	test_defaults(ctx);
	test_files(ctx, dir);
	test_errors(ctx, dir);
	test_model(ctx, dir);
	rmdir(dir);
	pb_ctx_free(ctx);
	return check_summary("test_target");
}
