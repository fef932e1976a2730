/* GPU target descriptions (docs/targets.md): the built-in ones are the
 * JSON files of targets/, embedded at build time (pb_target_builtins); a
 * user's comes from --target-file. Both go through the same jansson reader, which
 * checks every field (present, of the right type, positive, in a sane
 * range, consistent with the others), so that the cost models can trust
 * every number. An error is one line naming the file and the field. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "target/internal.h"

const char *const pb_target_archs[] = {"sm_80", "sm_86", "sm_89", "sm_90",
				       "sm_90a", NULL};

enum kind { STR, INT, I64, NUM };

/* A field of struct pb_target: its JSON name, its type and place, and the
 * range of sane values (for strings: of lengths); "unit" names what a
 * number counts, for the out-of-range message. */
struct field {
	const char *name;
	enum kind kind;
	size_t off;
	double lo, hi;
	const char *unit;
};

#define FIELD(k, f, lo, hi, unit) \
	{#f, k, offsetof(struct pb_target, f), lo, hi, unit}
#define KIB 1024.0
#define MIB (1024.0 * 1024.0)

/* In the order of struct pb_target. The bounds are wide enough for any
 * NVIDIA GPU pb can target and narrow enough to catch a unit mistake
 * (MHz for Hz, GB/s for B/s, KiB for bytes). */
static const struct field fields[] = {
	FIELD(STR, arch, 1, 15, NULL),
	FIELD(STR, name, 1, 63, NULL),
	FIELD(INT, sm_count, 1, 1024, "SMs"),
	FIELD(INT, warp_size, 32, 32, "threads"),
	FIELD(INT, max_threads_per_block, 32, 1024, "threads"),
	FIELD(INT, max_threads_per_sm, 32, 4096, "threads"),
	FIELD(INT, max_blocks_per_sm, 1, 64, "blocks"),
	FIELD(INT, regs_per_sm, 8192, 1048576, "registers"),
	FIELD(INT, max_regs_per_thread, 16, 255, "registers"),
	FIELD(I64, smem_per_block, KIB, 16 * MIB, "bytes"),
	FIELD(I64, smem_per_block_optin, KIB, 16 * MIB, "bytes"),
	FIELD(I64, smem_per_sm, KIB, 16 * MIB, "bytes"),
	FIELD(I64, l2_bytes, 64 * KIB, 16384 * MIB, "bytes"),
	FIELD(NUM, dram_bytes_per_s, 1e9, 1e15, "bytes per second"),
	FIELD(NUM, clock_hz, 1e8, 1e10, "hertz"),
	FIELD(NUM, launch_s, 1e-8, 1e-2, "seconds"),
	FIELD(NUM, fp32_flops, 1e9, 1e18, "operations per second"),
	FIELD(NUM, fp64_flops, 1e9, 1e18, "operations per second"),
	FIELD(NUM, tc_fp16_flops, 1e9, 1e18, "operations per second"),
	FIELD(NUM, tc_bf16_flops, 1e9, 1e18, "operations per second"),
	FIELD(NUM, tc_tf32_flops, 1e9, 1e18, "operations per second"),
	FIELD(NUM, tc_int8_ops, 1e9, 1e18, "operations per second"),
	FIELD(INT, ptx_isa, 60, 99, "PTX ISA version times ten"),
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

#define MODEL(f, lo, hi, unit) \
	{"model." #f, NUM, offsetof(struct pb_target, model.f), lo, hi, unit}

/* The optional "model" object: the cost model's constants, each with its
 * default when absent (PB_TARGET_MODEL_DEFAULTS). */
static const struct field model_fields[] = {
	MODEL(l2_over_dram, 1, 20, "times DRAM bandwidth"),
	MODEL(dram_efficiency, 0.05, 1, "of dram_bytes_per_s"),
	MODEL(chain_cycles, 1, 1000, "cycles"),
	MODEL(mem_cycles, 0.25, 256, "arithmetic operations"),
	MODEL(hiding_occupancy, 0.01, 1, "of max_threads_per_sm"),
	MODEL(tree_step_cycles, 1, 10000, "cycles"),
};
#define NMODEL (sizeof(model_fields) / sizeof(model_fields[0]))

/* "sm_80, sm_86, sm_89, sm_90 or sm_90a", from pb_target_archs. */
const char *pb_target_arch_list(void)
{
	static char buf[128];
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; pb_target_archs[i]; i++) {
		const char *sep = !i ? "" : pb_target_archs[i + 1] ? ", " : " or ";
		n += snprintf(buf + n, sizeof(buf) - n, "%s%s", sep,
			      pb_target_archs[i]);
		if (n >= sizeof(buf))
			break;
	}
	return buf;
}

static int is_arch(const char *s)
{
	for (int i = 0; pb_target_archs[i]; i++)
		if (!strcmp(pb_target_archs[i], s))
			return 1;
	return 0;
}

static const struct field *find_field(const char *name)
{
	for (size_t i = 0; i < NFIELDS; i++)
		if (!strcmp(fields[i].name, name))
			return &fields[i];
	return NULL;
}

/* The field of the "model" object whose key is "key", or NULL. */
static const struct field *find_model_field(const char *key)
{
	for (size_t i = 0; i < NMODEL; i++)
		if (!strcmp(model_fields[i].name + 6, key))
			return &model_fields[i];
	return NULL;
}

/* Check field "f" of "obj" and store it into "t". */
static int get_field(struct pb_ctx *ctx, const char *file, json_t *obj,
		     const struct field *f, struct pb_target *t)
{
	const char *key = strchr(f->name, '.') ? strchr(f->name, '.') + 1
					       : f->name;
	json_t *v = json_object_get(obj, key);
	char *dest = (char *)t + f->off;
	if (!v)
		return pb_error_in(ctx, file, "missing field '%s'", f->name);
	switch (f->kind) {
	case STR: {
		if (!json_is_string(v))
			return pb_error_in(ctx, file, "field '%s': expected a string",
				    f->name);
		const char *s = json_string_value(v);
		size_t len = strlen(s);
		if (len < f->lo || len > f->hi || len != json_string_length(v))
			return pb_error_in(ctx, file,
				    "field '%s': expected %.0f to %.0f characters",
				    f->name, f->lo, f->hi);
		memcpy(dest, s, len + 1);
		return PB_OK;
	}
	case INT:
	case I64: {
		if (!json_is_integer(v) || json_integer_value(v) <= 0)
			return pb_error_in(ctx, file,
				    "field '%s': expected a positive integer",
				    f->name);
		json_int_t x = json_integer_value(v);
		if (f->lo == f->hi && x != (json_int_t)f->lo)
			return pb_error_in(ctx, file, "field '%s': expected %.0f, got %lld",
				    f->name, f->lo, (long long)x);
		if (x < f->lo || x > f->hi)
			return pb_error_in(ctx, file,
				    "field '%s': %lld is out of range [%.0f, %.0f] (%s)",
				    f->name, (long long)x, f->lo, f->hi, f->unit);
		if (f->kind == INT)
			*(int *)dest = (int)x;
		else
			*(int64_t *)dest = x;
		return PB_OK;
	}
	case NUM: {
		if (!json_is_number(v) || json_number_value(v) <= 0)
			return pb_error_in(ctx, file,
				    "field '%s': expected a positive number",
				    f->name);
		double x = json_number_value(v);
		if (x < f->lo || x > f->hi)
			return pb_error_in(ctx, file,
				    "field '%s': %g is out of range [%g, %g] (%s)",
				    f->name, x, f->lo, f->hi, f->unit);
		*(double *)dest = x;
		return PB_OK;
	}
	}
	return PB_ERR;
}

/* Is field "name", "a", a multiple of the warp size "warp"? */
static int check_warps(struct pb_ctx *ctx, const char *file, const char *name,
		       int a, int warp)
{
	if (a % warp)
		return pb_error_in(ctx, file,
			    "field '%s': %d is not a multiple of warp_size (%d)",
			    name, a, warp);
	return PB_OK;
}

/* Is field "name", "a", at most field "bname", "b"? */
static int check_le(struct pb_ctx *ctx, const char *file, const char *name,
		    int64_t a, const char *bname, int64_t b)
{
	if (a > b)
		return pb_error_in(ctx, file,
			    "field '%s': %lld is more than %s (%lld)", name,
			    (long long)a, bname, (long long)b);
	return PB_OK;
}

/* The fields that must agree with each other. */
static int check_consistent(struct pb_ctx *ctx, const char *file,
			    const struct pb_target *t)
{
	if (!is_arch(t->arch))
		return pb_error_in(ctx, file, "field 'arch': unknown arch '%s' "
			    "(expected %s)", t->arch, pb_target_arch_list());
	if (check_warps(ctx, file, "max_threads_per_block",
			t->max_threads_per_block, t->warp_size) ||
	    check_warps(ctx, file, "max_threads_per_sm", t->max_threads_per_sm,
			t->warp_size) ||
	    check_le(ctx, file, "max_threads_per_block",
		     t->max_threads_per_block, "max_threads_per_sm",
		     t->max_threads_per_sm) ||
	    check_le(ctx, file, "smem_per_block", t->smem_per_block,
		     "smem_per_block_optin", t->smem_per_block_optin) ||
	    check_le(ctx, file, "smem_per_block_optin",
		     t->smem_per_block_optin, "smem_per_sm", t->smem_per_sm))
		return PB_ERR;
	return PB_OK;
}

/* The "model" object "m" of "file" into t->model: every key known, each
 * given constant in range, the others their defaults. */
static int get_model(struct pb_ctx *ctx, const char *file, json_t *m,
		     struct pb_target *t)
{
	static const struct pb_target_model defaults = PB_TARGET_MODEL_DEFAULTS;
	const char *key;
	json_t *v;
	t->model = defaults;
	if (!m)
		return PB_OK;
	if (!json_is_object(m))
		return pb_error_in(ctx, file, "field 'model': expected an object");
	json_object_foreach(m, key, v) {
		if (!strcmp(key, "source")) {
			if (!json_is_string(v))
				return pb_error_in(ctx, file, "field "
						   "'model.source': expected "
						   "a string");
		} else if (!find_model_field(key)) {
			return pb_error_in(ctx, file, "unknown field 'model.%s'",
					   key);
		}
	}
	for (size_t i = 0; i < NMODEL; i++)
		if (json_object_get(m, model_fields[i].name + 6) &&
		    get_field(ctx, file, m, &model_fields[i], t) != PB_OK)
			return PB_ERR;
	return PB_OK;
}

/* Parse the description "text" ("len" bytes) read from "file" into "t". */
static int parse(struct pb_ctx *ctx, const char *file, const char *text,
		 size_t len, struct pb_target *t)
{
	json_error_t err;
	json_t *obj = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
	if (!obj) {
		char where[1024];
		if (err.line > 0)
			snprintf(where, sizeof(where), "%s:%d:%d", file,
				 err.line, err.column);
		else
			snprintf(where, sizeof(where), "%s", file);
		return pb_error_in(ctx, where, "invalid JSON: %s", err.text);
	}
	int rc = PB_OK;
	const char *key;
	json_t *v;
	memset(t, 0, sizeof(*t));
	if (!json_is_object(obj)) {
		rc = pb_error_in(ctx, file, "expected a JSON object");
		goto out;
	}
	json_object_foreach(obj, key, v) {
		if (!strcmp(key, "model")) {
			continue;
		} else if (!strcmp(key, "source")) {
			if (!json_is_string(v)) {
				rc = pb_error_in(ctx, file,
					  "field 'source': expected a string");
				goto out;
			}
		} else if (!find_field(key)) {
			rc = pb_error_in(ctx, file, "unknown field '%s'", key);
			goto out;
		}
	}
	for (size_t i = 0; i < NFIELDS && rc == PB_OK; i++)
		rc = get_field(ctx, file, obj, &fields[i], t);
	if (rc == PB_OK)
		rc = get_model(ctx, file, json_object_get(obj, "model"), t);
	if (rc == PB_OK)
		rc = check_consistent(ctx, file, t);
out:
	json_decref(obj);
	return rc;
}

/* The built-in description named "name" ("sm_90", "h200"), or NULL. */
static const struct pb_target_builtin *find_builtin(const char *name)
{
	for (const struct pb_target_builtin *b = pb_target_builtins; b->name;
	     b++)
		if (!strcmp(b->name, name))
			return b;
	return NULL;
}

/* Does --target-file "s" name a built-in description rather than a file
 * (no '/' and no '.', and a built-in of that name exists)? */
static int is_builtin_name(const char *s)
{
	if (strchr(s, '/') || strchr(s, '.'))
		return 0;
	return find_builtin(s) || !strcmp(s, "sm_90a");
}

/* The built-in "name"; sm_90a is sm_90's description (the same chips)
 * with arch "sm_90a", so that PTX may use wgmma. */
static int get_builtin(struct pb_ctx *ctx, const char *name,
		       struct pb_target *t)
{
	int a = !strcmp(name, "sm_90a");
	const struct pb_target_builtin *b = find_builtin(a ? "sm_90" : name);
	if (!b)
		return pb_error_in(ctx, ctx->tool, "no built-in target '%s'", name);
	if (parse(ctx, b->file, b->json, strlen(b->json), t) != PB_OK)
		return PB_ERR;
	if (a)
		strcpy(t->arch, "sm_90a");
	return PB_OK;
}

static int get_file(struct pb_ctx *ctx, const char *file, struct pb_target *t)
{
	size_t len;
	char *text = pb_read_file(file, &len);
	if (!text)
		return pb_error_in(ctx, file, "cannot read: %s", strerror(errno));
	int rc = parse(ctx, file, text, len, t);
	free(text);
	return rc;
}

int pb_target_get(struct pb_ctx *ctx, const char *arch, const char *file,
		  struct pb_target *t)
{
	if (!file && !arch)
		file = ctx->target_file;
	if (file)
		return is_builtin_name(file) ? get_builtin(ctx, file, t)
					     : get_file(ctx, file, t);
	if (!arch)
		arch = ctx->arch ? ctx->arch : "sm_90";
	if (!is_arch(arch))
		return pb_error_in(ctx, ctx->tool, "unknown --arch '%s' (expected %s)",
			    arch, pb_target_arch_list());
	return get_builtin(ctx, arch, t);
}

const struct pb_target *pb_target_of(struct pb_ctx *ctx)
{
	if (ctx->target)
		return ctx->target;
	struct pb_target *t = malloc(sizeof(*t));
	if (!t) {
		pb_error(ctx, "out of memory");
		return NULL;
	}
	if (pb_target_get(ctx, NULL, NULL, t) != PB_OK) {
		free(t);
		return NULL;
	}
	ctx->target = t;
	return t;
}

int pb_target_is_arch(const char *arch)
{
	return is_arch(arch);
}

int pb_target_has_wgmma(const struct pb_target *t)
{
	return t && !strcmp(t->arch, "sm_90a");
}

int pb_target_ptx_isa(struct pb_ctx *ctx, const char *arch)
{
	const struct pb_target *d = pb_target_of(ctx);
	struct pb_target b;
	if (!d)
		return -1;
	if (!strcmp(d->arch, arch))
		return d->ptx_isa;
	if (pb_target_get(ctx, arch, NULL, &b) != PB_OK)
		return -1;
	return b.ptx_isa;
}

int pb_target_smem_fits(const struct pb_target *t, int64_t bytes, int warps)
{
	if (bytes <= t->smem_per_block)
		return 1;
	if (bytes > t->smem_per_block_optin || warps <= 0)
		return 0;
	int64_t blocks = t->smem_per_sm / (bytes + PB_TARGET_SMEM_RESERVED);
	return blocks * warps >= PB_TARGET_OPTIN_WARPS;
}
