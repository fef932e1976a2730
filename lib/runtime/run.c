/* Binding values to @main's arguments and looking at the results: input
 * files, ONNX test data sets, deterministic random inputs, weights from
 * the .onnx, printing, writing .npy files and checking against references.
 * Nothing here uses MLIR. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/npy.h"
#include "onnx/onnx.h"
#include "runtime/runtime.h"

void pb_runtime_opts_init(struct pb_runtime_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->rtol = -1; /* by the result's type: pb_runtime_tolerance */
	o->atol = -1;
	o->device = "auto";
}

void pb_runtime_opts_table(struct pb_runtime_opts *o,
			   struct pb_opt table[PB_RUNTIME_NOPTS + 1])
{
	const struct pb_opt t[PB_RUNTIME_NOPTS + 1] = {
		{"input", PB_OPT_LIST, &o->inputs, "FILE",
		 "an input (.npy or ONNX TensorProto .pb), in argument order; "
		 "repeatable"},
		{"data", PB_OPT_STR, &o->data, "DIR",
		 "ONNX test_data_set dir: input_N.pb in, check against "
		 "output_N.pb"},
		{"random", PB_OPT_OPTSTR, &o->random, "SEED",
		 "fill inputs not given deterministically (uniform [-1,1))"},
		{"output", PB_OPT_STR, &o->output, "DIR",
		 "write each result to DIR/<name>.npy"},
		{"check", PB_OPT_LIST, &o->checks, "FILE",
		 "compare a result with FILE (.npy or .pb), in result order; "
		 "repeatable"},
		{"rtol", PB_OPT_NONNEG, &o->rtol, "X",
		 "relative tolerance of --check/--data (default 1e-4; "
		 "f16 1e-3, bf16 1.6e-2)"},
		{"atol", PB_OPT_NONNEG, &o->atol, "X",
		 "absolute tolerance of --check/--data (default 1e-5)"},
		{"weights", PB_OPT_STR, &o->weights, "FILE",
		 "the .onnx holding the weights (default: the plan's or "
		 "module's pb.source)"},
		{"device", PB_OPT_STR, &o->device, "DEV",
		 "cpu, gpu or auto (default: the GPU when there is one)"},
		{"print", PB_OPT_FLAG, &o->print, NULL, "print the results"},
		{"pipeline", PB_OPT_LIST, &o->pipelines, "NAME",
		 "compile through the named pipeline NAME (pipelines/: "
		 "default, no-fusion, ...) or the script FILE; pb-prof "
		 "compares several"},
		{"shape", PB_OPT_LIST, &o->shapes, "NAME=DxD..",
		 "static shape of input NAME of an .onnx model (repeatable; "
		 "binds dynamic dims, which are otherwise bound from the "
		 "inputs given)"},
		{"no-memory-plan", PB_OPT_FLAG, &o->no_memory_plan, NULL,
		 "one allocation per intermediate buffer, no arena (a PTX's "
		 "plan too)"},
		{NULL, 0, NULL, NULL, NULL},
	};
	memcpy(table, t, sizeof(t));
}

void pb_runtime_opts_free(struct pb_runtime_opts *o)
{
	free(o->inputs.v);
	free(o->checks.v);
	free(o->pipelines.v);
	free(o->shapes.v);
}

void pb_runtime_vals_free(struct pb_tensor *vals, int n)
{
	for (int i = 0; vals && i < n; i++)
		pb_tensor_clear(&vals[i]);
	free(vals);
}

void pb_runtime_sig_free(struct pb_runtime_sig *sig)
{
	for (int i = 0; i < sig->nargs; i++)
		free(sig->args[i].name);
	free(sig->args);
	sig->args = NULL;
	sig->nargs = 0;
}

/* Does "path" end in "ext"? */
static int has_ext(const char *path, const char *ext)
{
	size_t n = strlen(path), e = strlen(ext);
	return n >= e && !strcmp(path + n - e, ext);
}

int pb_runtime_read_tensor(struct pb_ctx *ctx, const char *path,
			   struct pb_tensor *t)
{
	char head[6] = {0};
	struct stat st;
	memset(t, 0, sizeof(*t));
	/* a directory, a device or a pipe: refused here, not peeked at */
	int known = stat(path, &st) == 0;
	if (known && S_ISDIR(st.st_mode))
		return pb_error_in(ctx, path, "cannot read: %s",
				   strerror(EISDIR));
	if (known && !S_ISREG(st.st_mode))
		return pb_error_in(ctx, path, "not a regular file");
	FILE *f = fopen(path, "rb");
	if (!f)
		return pb_error_in(ctx, path, "cannot read: %s", strerror(errno));
	size_t n = fread(head, 1, sizeof(head), f);
	fclose(f);
	if ((n == sizeof(head) && !memcmp(head, "\x93NUMPY", 6)) ||
	    has_ext(path, ".npy"))
		return pb_npy_read(ctx, path, t);
	return pb_onnx_read_tensor_file(ctx, path, t);
}

/* Element "i" of "t" as a double. */
static double get(const struct pb_tensor *t, int64_t i)
{
	const char *p = t->data;
	switch (t->dtype) {
	case PB_DT_F32: return ((const float *)p)[i];
	case PB_DT_F64: return ((const double *)p)[i];
	case PB_DT_F16: return pb_f16_to_float(((const uint16_t *)p)[i]);
	case PB_DT_BF16: return pb_bf16_to_float(((const uint16_t *)p)[i]);
	case PB_DT_I8: return ((const int8_t *)p)[i];
	case PB_DT_I16: return ((const int16_t *)p)[i];
	case PB_DT_I32: return ((const int32_t *)p)[i];
	case PB_DT_I64: return (double)((const int64_t *)p)[i];
	case PB_DT_U8: case PB_DT_BOOL: return ((const uint8_t *)p)[i];
	case PB_DT_U16: return ((const uint16_t *)p)[i];
	case PB_DT_U32: return ((const uint32_t *)p)[i];
	case PB_DT_U64: return (double)((const uint64_t *)p)[i];
	default: return NAN;
	}
}

/* Store "v" as element "i" of "t". */
static void set(struct pb_tensor *t, int64_t i, double v)
{
	char *p = t->data;
	switch (t->dtype) {
	case PB_DT_F32: ((float *)p)[i] = (float)v; break;
	case PB_DT_F64: ((double *)p)[i] = v; break;
	case PB_DT_F16: ((uint16_t *)p)[i] = pb_f16_from_float((float)v); break;
	case PB_DT_BF16: ((uint16_t *)p)[i] = pb_bf16_from_float((float)v); break;
	case PB_DT_I8: ((int8_t *)p)[i] = (int8_t)v; break;
	case PB_DT_I16: ((int16_t *)p)[i] = (int16_t)v; break;
	case PB_DT_I32: ((int32_t *)p)[i] = (int32_t)v; break;
	case PB_DT_I64: ((int64_t *)p)[i] = (int64_t)v; break;
	case PB_DT_U8: case PB_DT_BOOL: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case PB_DT_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
	case PB_DT_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
	case PB_DT_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
	default: break;
	}
}

/* Is "dt" a floating-point type? */
static int is_float(enum pb_dtype dt)
{
	return dt == PB_DT_F32 || dt == PB_DT_F64 || dt == PB_DT_F16 ||
	       dt == PB_DT_BF16;
}

/* Write the list "[2, 3]" of "rank" values "dims" into "buf" of size "n". */
static const char *format_dims(int rank, const int64_t *dims, char *buf,
			       size_t n)
{
	size_t k = snprintf(buf, n, "[");
	for (int i = 0; i < rank && k < n; i++)
		k += snprintf(buf + k, n - k, "%s%lld", i ? ", " : "",
			      (long long)dims[i]);
	if (k < n)
		snprintf(buf + k, n - k, "]");
	return buf;
}

/* Describe the dtype and shape "dt", "rank", "dims" as "f32 [2, 3]" into
 * "buf" of size "n". */
static const char *describe(enum pb_dtype dt, int rank, const int64_t *dims,
			    char *buf, size_t n)
{
	char d[200];
	snprintf(buf, n, "%s %s", pb_dtype_name(dt),
		 format_dims(rank, dims, d, sizeof(d)));
	return buf;
}

/* Allocate zeroed data for argument "a" in "t". */
static int alloc_like(struct pb_ctx *ctx, const struct pb_runtime_arg *a,
		      struct pb_tensor *t)
{
	memset(t, 0, sizeof(*t));
	t->dtype = a->dtype;
	t->rank = a->rank;
	memcpy(t->dims, a->dims, sizeof(a->dims));
	int64_t n;
	char why[80], d[256];
	if (pb_tensor_size_ok(pb_dtype_size(a->dtype), a->rank, a->dims, &n,
			      why, sizeof(why)))
		return pb_error_in(ctx, NULL, "%s '%s' (%s) is too large: %s",
				   a->role == PB_RUNTIME_OUTPUT ? "output"
								: "input",
				   a->name, describe(a->dtype, a->rank, a->dims,
						     d, sizeof(d)), why);
	t->nbytes = (size_t)n;
	t->data = calloc(1, t->nbytes ? t->nbytes : 1);
	t->name = strdup(a->name);
	if (!t->data || !t->name)
		return pb_error_in(ctx, NULL, "out of memory for '%s' (%lld "
				   "bytes)", a->name, (long long)n);
	return PB_OK;
}

/* The next number of the splitmix64 sequence in "*s". */
static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Fill "t" deterministically from "seed" and the argument position "pos":
 * floats uniform in [-1, 1), integers uniform in [0, 8), bools 0 or 1. */
static void fill_random(struct pb_tensor *t, uint64_t seed, int pos)
{
	uint64_t s = seed * 0x100000001b3ull + (uint64_t)pos;
	int64_t n = pb_tensor_numel(t);
	for (int64_t i = 0; i < n; i++) {
		uint64_t r = splitmix(&s);
		if (is_float(t->dtype))
			set(t, i, (double)(r >> 40) / (1 << 23) - 1.0);
		else if (t->dtype == PB_DT_BOOL)
			set(t, i, (double)(r >> 63));
		else
			set(t, i, (double)(r >> 61));
	}
}

/* ONNX's test data before 1.14 stores bfloat16 tensors as uint16 (their
 * bits): take a uint16 "t" met where bfloat16 "dt" is expected as such. */
static void fit_bf16(enum pb_dtype dt, struct pb_tensor *t)
{
	if (dt == PB_DT_BF16 && t->dtype == PB_DT_U16)
		t->dtype = PB_DT_BF16;
}

/* Check that "t" (read from "src") fits argument "a" at position "pos";
 * "what" is "input" or "weight". float32 data for a float16 or bfloat16
 * argument is converted (rounding to nearest even): bfloat16 has no
 * .npy type, and a model imported with --cast keeps float32 weights;
 * uint16 data for a bfloat16 argument holds its bits (fit_bf16). */
static int validate(struct pb_ctx *ctx, const struct pb_runtime_arg *a,
		    int pos, struct pb_tensor *t, const char *src,
		    const char *what)
{
	if (pb_dtype_is_half(a->dtype) && t->dtype == PB_DT_F32 &&
	    pb_tensor_convert(t, a->dtype))
		return pb_error_in(ctx, NULL, "out of memory converting '%s'",
				   src);
	fit_bf16(a->dtype, t);
	int same = t->dtype == a->dtype && t->rank == a->rank;
	for (int i = 0; same && i < a->rank; i++)
		same = t->dims[i] == a->dims[i];
	if (same)
		return PB_OK;
	char want[256], got[256];
	return pb_error_in(ctx, NULL, "%s '%s' (argument %d) expects %s, but '%s' "
		      "holds %s", what, a->name, pos,
		      describe(a->dtype, a->rank, a->dims, want, sizeof(want)),
		      src, describe(t->dtype, t->rank, t->dims, got, sizeof(got)));
}

/* Join "dir" and "file" into a malloc'ed path. */
static char *join(const char *dir, const char *file)
{
	size_t n = strlen(dir) + strlen(file) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", dir, file);
	return p;
}

/* Does "path" exist? */
static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* Parse the --random seed "s" ("" means 0) into "*seed". */
static int parse_seed(struct pb_ctx *ctx, const char *s, uint64_t *seed)
{
	char *end;
	if (!*s) {
		*seed = 0;
		return PB_OK;
	}
	errno = 0;
	*seed = strtoull(s, &end, 0);
	if (errno || *end || s[0] == '-')
		return pb_error_in(ctx, NULL, "bad --random seed '%s' (expected a "
			      "non-negative integer)", s);
	return PB_OK;
}

/* Bind input argument "a" at position "pos", the "k"-th input, into "t". */
static int bind_input(struct pb_ctx *ctx, const struct pb_runtime_arg *a,
		      int pos, int k, const struct pb_runtime_opts *o,
		      struct pb_tensor *t)
{
	if (k < o->inputs.n) {
		if (pb_runtime_read_tensor(ctx, o->inputs.v[k], t) != PB_OK)
			return PB_ERR;
		return validate(ctx, a, pos, t, o->inputs.v[k], "input");
	}
	if (o->data) {
		char file[64];
		snprintf(file, sizeof(file), "input_%d.pb", k);
		char *path = join(o->data, file);
		int rc = PB_ERR, have = path && exists(path);
		if (have && pb_runtime_read_tensor(ctx, path, t) == PB_OK)
			rc = validate(ctx, a, pos, t, path, "input");
		free(path);
		if (have || !o->random)
			return have ? rc : pb_error_in(ctx, o->data, "no '%s' for "
						  "input '%s'", file, a->name);
	}
	if (o->random) {
		uint64_t seed;
		if (parse_seed(ctx, o->random, &seed) != PB_OK ||
		    alloc_like(ctx, a, t) != PB_OK)
			return PB_ERR;
		fill_random(t, seed, pos);
		return PB_OK;
	}
	return pb_error_in(ctx, NULL, "no value for input '%s' (argument %d): give "
		      "--input, --data or --random", a->name, pos);
}

int pb_runtime_bind(struct pb_ctx *ctx, const struct pb_runtime_sig *sig,
		    const struct pb_runtime_opts *o, const char *weights,
		    struct pb_tensor *vals)
{
	int ninputs = 0, k = 0, rc = PB_OK;
	struct pb_onnx_weights *w = NULL;
	for (int i = 0; i < sig->nargs; i++)
		ninputs += sig->args[i].role == PB_RUNTIME_INPUT;
	if (o->inputs.n > ninputs)
		return pb_error_in(ctx, NULL, "%d --input files given, but the model "
			      "has %d input%s", o->inputs.n, ninputs,
			      ninputs == 1 ? "" : "s");
	if (o->data && !exists(o->data))
		return pb_error_in(ctx, o->data, "cannot read: %s", strerror(errno));
	for (int i = 0; rc == PB_OK && i < sig->nargs; i++) {
		const struct pb_runtime_arg *a = &sig->args[i];
		switch (a->role) {
		case PB_RUNTIME_INPUT:
			rc = bind_input(ctx, a, i, k++, o, &vals[i]);
			break;
		case PB_RUNTIME_PARAM:
			if (!weights) {
				rc = pb_error_in(ctx, NULL, "weight '%s' (argument "
					    "%d) needs the model: the module has "
					    "no pb.source, give --weights", a->name, i);
				break;
			}
			if (!w && !(w = pb_onnx_weights_open(ctx, weights))) {
				rc = PB_ERR;
				break;
			}
			rc = pb_onnx_weights_get(ctx, w, a->name, &vals[i]);
			/* the layout the kernels read (pb.perm): the
			   initializer transposed */
			if (rc == PB_OK && a->nperm &&
			    vals[i].rank == a->nperm &&
			    pb_tensor_transpose(&vals[i], a->perm))
				rc = pb_error_in(ctx, NULL, "out of memory "
						 "transposing '%s'", a->name);
			if (rc == PB_OK)
				rc = validate(ctx, a, i, &vals[i], weights,
					      "weight");
			break;
		case PB_RUNTIME_OUTPUT:
			rc = alloc_like(ctx, a, &vals[i]);
			break;
		}
	}
	pb_onnx_weights_close(w);
	return rc;
}

/* Print "v" in the style of the tensor's dtype into "b". */
static void print_value(struct pb_buf *b, const struct pb_tensor *t, int64_t i)
{
	double v = get(t, i);
	if (t->dtype == PB_DT_BOOL)
		pb_buf_puts(b, v ? "True" : "False");
	else if (is_float(t->dtype))
		pb_buf_printf(b, "%.6g", v);
	else if (t->dtype == PB_DT_I64)
		pb_buf_printf(b, "%lld", (long long)((const int64_t *)t->data)[i]);
	else if (t->dtype == PB_DT_U64)
		pb_buf_printf(b, "%llu",
			      (unsigned long long)((const uint64_t *)t->data)[i]);
	else
		pb_buf_printf(b, "%.0f", v);
}

/* Print dimension "d" of "t" starting at element "off" as nested lists,
 * NumPy style; with "summary", only the first and last 3 entries of long
 * dimensions. */
static void print_dim(struct pb_buf *b, const struct pb_tensor *t, int d,
		      int64_t off, int summary)
{
	int64_t n = t->dims[d], stride = 1;
	for (int i = d + 1; i < t->rank; i++)
		stride *= t->dims[i];
	pb_buf_puts(b, "[");
	for (int64_t i = 0; i < n; i++) {
		if (summary && n > 6 && i == 3) {
			pb_buf_puts(b, d + 1 == t->rank ? "..., " : "...,\n");
			if (d + 1 < t->rank)
				pb_buf_printf(b, "%*s", d + 1, "");
			i = n - 4;
			continue;
		}
		if (d + 1 == t->rank)
			print_value(b, t, off + i);
		else
			print_dim(b, t, d + 1, off + i * stride, summary);
		if (i + 1 < n) {
			pb_buf_puts(b, d + 1 == t->rank ? ", " : ",\n");
			if (d + 1 < t->rank)
				pb_buf_printf(b, "%*s", d + 1, "");
		}
	}
	pb_buf_puts(b, "]");
}

/* Print output "t" called "name" into "b". */
static void print_tensor(struct pb_buf *b, const char *name,
			 const struct pb_tensor *t)
{
	char desc[256];
	pb_buf_printf(b, "output '%s' %s:\n", name,
		      describe(t->dtype, t->rank, t->dims, desc, sizeof(desc)));
	if (t->rank == 0)
		print_value(b, t, 0);
	else
		print_dim(b, t, 0, 0, pb_tensor_numel(t) > 1000);
	pb_buf_puts(b, "\n");
}

/* A file name for output "name" (the "k"-th output): letters, digits,
 * '_', '-' and '.' kept, anything else '_', never starting with '.'. */
static char *file_name(const char *name, int k)
{
	size_t n = strlen(name);
	char *s = malloc(n + 32);
	if (!s)
		return NULL;
	if (!n) {
		snprintf(s, n + 32, "output_%d.npy", k);
		return s;
	}
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '_' || c == '-' ||
			 (c == '.' && i > 0);
		s[i] = ok ? c : '_';
	}
	strcpy(s + n, ".npy");
	return s;
}

/* Write output "t" called "name", the "k"-th, under "dir"; bfloat16,
 * which has no .npy type, as float32 (exactly). */
static int write_output(struct pb_ctx *ctx, const char *dir, const char *name,
			int k, const struct pb_tensor *t)
{
	char *file = file_name(name, k);
	char *path = file ? join(dir, file) : NULL;
	struct pb_tensor wide = *t;
	wide.name = NULL;
	wide.data = NULL;
	if (t->dtype == PB_DT_BF16 && (wide.data = malloc(t->nbytes))) {
		memcpy(wide.data, t->data, t->nbytes);
		if (pb_tensor_convert(&wide, PB_DT_F32)) {
			free(wide.data);
			wide.data = NULL;
		}
	}
	if (t->dtype == PB_DT_BF16 && !wide.data) {
		free(file);
		free(path);
		return pb_error_in(ctx, dir, "out of memory");
	}
	int rc = path ? pb_npy_write(ctx, path, wide.data ? &wide : t)
		      : pb_error_in(ctx, dir, "out of memory");
	free(wide.data);
	free(file);
	free(path);
	return rc;
}

/* Format tolerance "v" as "1e-04" when one digit says it exactly, else
 * with more digits, into "buf" of size "n". */
static const char *fmt_tol(double v, char *buf, size_t n)
{
	snprintf(buf, n, "%.0e", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, n, "%.3g", v);
	return buf;
}

/* Write the multi-index of flat element "i" of "t" as "[a, b]" into "buf"
 * of size "n". */
static const char *index_of(const struct pb_tensor *t, int64_t i, char *buf,
			    size_t n)
{
	int64_t idx[PB_MAX_RANK];
	for (int d = t->rank - 1; d >= 0; d--) {
		idx[d] = t->dims[d] ? i % t->dims[d] : 0;
		i = t->dims[d] ? i / t->dims[d] : 0;
	}
	return format_dims(t->rank, idx, buf, n);
}

int pb_runtime_compare(struct pb_ctx *ctx, const char *name,
		       const struct pb_tensor *got, const struct pb_tensor *want,
		       double rtol, double atol, struct pb_buf *report_buf)
{
	char a[256], b[256], rt[32], at[32];
	/* a half result is compared by value with a float32 reference */
	int same = (got->dtype == want->dtype ||
		    (pb_dtype_is_half(got->dtype) && want->dtype == PB_DT_F32)) &&
		   got->rank == want->rank;
	for (int i = 0; same && i < got->rank; i++)
		same = got->dims[i] == want->dims[i];
	if (!same) {
		pb_buf_printf(report_buf, "output '%s': result is %s, "
			      "reference is %s: mismatch\n", name,
			      describe(got->dtype, got->rank, got->dims, a, sizeof(a)),
			      describe(want->dtype, want->rank, want->dims, b,
				       sizeof(b)));
		return pb_error_in(ctx, NULL, "output '%s' does not match its "
			      "reference: result is %s, reference is %s", name,
			      a, b);
	}
	double max_abs = 0, max_rel = 0, worst_excess = -1;
	int64_t n = pb_tensor_numel(got), bad = 0, worst = 0;
	for (int64_t i = 0; i < n; i++) {
		double x = get(got, i), y = get(want, i);
		if ((isnan(x) && isnan(y)) || x == y)
			continue;
		double d = fabs(x - y);
		if (isnan(d))
			d = INFINITY;
		if (d > max_abs)
			max_abs = d;
		if (y != 0 && d / fabs(y) > max_rel)
			max_rel = d / fabs(y);
		double excess = d - (atol + rtol * fabs(y));
		if (excess > 0 || isnan(excess)) {
			bad++;
			if (!(excess <= worst_excess)) {
				worst_excess = excess;
				worst = i;
			}
		}
	}
	pb_buf_printf(report_buf, "output '%s': max abs err %.1e, max rel err "
		      "%.1e (rtol %s, atol %s): %s\n", name, max_abs, max_rel,
		      fmt_tol(rtol, rt, sizeof(rt)), fmt_tol(atol, at, sizeof(at)),
		      bad ? "mismatch" : "ok");
	if (!bad)
		return PB_OK;
	return pb_error_in(ctx, NULL, "output '%s' does not match its reference: "
		      "%lld of %lld elements differ, worst at %s: got %.9g, "
		      "expected %.9g", name, (long long)bad, (long long)n,
		      index_of(got, worst, a, sizeof(a)), get(got, worst),
		      get(want, worst));
}

/* Make directory "dir" unless it exists. */
static int make_dir(struct pb_ctx *ctx, const char *dir)
{
	struct stat st;
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return PB_OK;
	if (mkdir(dir, 0777) != 0)
		return pb_error_in(ctx, dir, "cannot create directory: %s",
			      strerror(errno));
	return PB_OK;
}

/* Read the reference of the "k"-th output into "t"; *have is 0 when
 * there is none. */
static int read_reference(struct pb_ctx *ctx, const struct pb_runtime_opts *o,
			  int k, struct pb_tensor *t, int *have)
{
	*have = 0;
	if (o->checks.n) {
		if (k >= o->checks.n)
			return PB_OK;
		*have = 1;
		return pb_runtime_read_tensor(ctx, o->checks.v[k], t);
	}
	if (!o->data)
		return PB_OK;
	char file[64];
	snprintf(file, sizeof(file), "output_%d.pb", k);
	char *path = join(o->data, file);
	int rc = PB_OK;
	if (path && exists(path)) {
		*have = 1;
		rc = pb_runtime_read_tensor(ctx, path, t);
	}
	free(path);
	return rc;
}

void pb_runtime_tolerance(const struct pb_runtime_opts *o, enum pb_dtype dt,
			  double *rtol, double *atol)
{
	*rtol = o->rtol >= 0 ? o->rtol
		: dt == PB_DT_F16 ? 1e-3 : dt == PB_DT_BF16 ? 1.6e-2 : 1e-4;
	*atol = o->atol >= 0 ? o->atol : 1e-5;
}

int pb_runtime_finish(struct pb_ctx *ctx, const struct pb_runtime_sig *sig,
		      const struct pb_runtime_opts *o,
		      const struct pb_tensor *vals, struct pb_buf *report_buf)
{
	int noutputs = 0, k = 0, rc = PB_OK;
	for (int i = 0; i < sig->nargs; i++)
		noutputs += sig->args[i].role == PB_RUNTIME_OUTPUT;
	if (o->checks.n > noutputs)
		return pb_error_in(ctx, NULL, "%d --check files given, but the model "
			      "has %d output%s", o->checks.n, noutputs,
			      noutputs == 1 ? "" : "s");
	if (o->output && make_dir(ctx, o->output) != PB_OK)
		return PB_ERR;
	for (int i = 0; i < sig->nargs; i++) {
		const struct pb_runtime_arg *a = &sig->args[i];
		if (a->role != PB_RUNTIME_OUTPUT)
			continue;
		if (o->print)
			print_tensor(report_buf, a->name, &vals[i]);
		if (o->output &&
		    write_output(ctx, o->output, a->name, k, &vals[i]) != PB_OK)
			rc = PB_ERR;
		struct pb_tensor ref = {0};
		int have;
		double rtol, atol;
		pb_runtime_tolerance(o, vals[i].dtype, &rtol, &atol);
		if (read_reference(ctx, o, k, &ref, &have) != PB_OK)
			rc = PB_ERR;
		else if (have && (fit_bf16(vals[i].dtype, &ref), 0))
			rc = PB_ERR;
		else if (have && pb_runtime_compare(ctx, a->name, &vals[i], &ref,
						    rtol, atol,
						    report_buf) != PB_OK)
			rc = PB_ERR;
		pb_tensor_clear(&ref);
		k++;
	}
	return rc;
}
