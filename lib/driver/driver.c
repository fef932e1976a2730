/* The one tool driver: options, input, --split-input-file, output. */
#include <errno.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef PB_NO_MLIR
#include <isl/version.h>
#endif

#include "driver/driver.h"
#include "target/target.h"

struct common {
	int help, version, split;
	const char *out, *arch, *target_file, *precision;
};

static void print_opt(FILE *f, const char *name, const char *metavar,
		      enum pb_opt_kind kind, const char *help)
{
	char left[64];
	if (!metavar || kind == PB_OPT_FLAG)
		snprintf(left, sizeof(left), "--%s", name);
	else if (kind == PB_OPT_OPTSTR)
		snprintf(left, sizeof(left), "--%s[=%s]", name, metavar);
	else
		snprintf(left, sizeof(left), "--%s=%s", name, metavar);
	fprintf(f, "  %-26s %s\n", left, help);
}

/* Print the options of "table" (and of the groups it includes) to "f". */
static void print_opts(FILE *f, const struct pb_opt *table)
{
	for (const struct pb_opt *o = table; o && o->name; o++)
		if (o->kind == PB_OPT_GROUP)
			print_opts(f, o->dest);
		else
			print_opt(f, o->name, o->metavar, o->kind, o->help);
}

/* The option of "table" (or of a group it includes) named by the "len"
 * characters at "name", or NULL. */
static const struct pb_opt *find_opt(const struct pb_opt *table,
				     const char *name, size_t len)
{
	for (const struct pb_opt *o = table; o && o->name; o++) {
		if (o->kind == PB_OPT_GROUP) {
			const struct pb_opt *g = find_opt(o->dest, name, len);
			if (g)
				return g;
		} else if (strlen(o->name) == len && !strncmp(o->name, name, len)) {
			return o;
		}
	}
	return NULL;
}

static void usage(const struct pb_tool *t, FILE *f, int full)
{
	fprintf(f, "usage: %s [options] [FILE|-]\n", t->name);
	if (!full) {
		fprintf(f, "try '%s --help' for more information\n", t->name);
		return;
	}
	fprintf(f, "%s\n", t->summary);
	if (t->description)
		fprintf(f, "\n%s", t->description);
	fprintf(f, "\noptions:\n");
	print_opts(f, t->opts);
	fprintf(f, "  %-26s %s\n", "-o FILE",
		"write the output to FILE (atomically; nothing on failure)");
	print_opt(f, "arch", "ARCH", PB_OPT_STR,
		  "target GPU: sm_80, sm_86, sm_89, sm_90 (default), sm_90a");
	print_opt(f, "target-file", "FILE", PB_OPT_STR,
		  "GPU description (JSON, docs/targets.md) or a built-in "
		  "name (h200, sm_80, ...)");
	print_opt(f, "precision", "P", PB_OPT_STR,
		  "what float32 contractions compute in: fp32 (default, "
		  "exact), or tf32, fp16 or bf16 (tensor cores, f32 "
		  "accumulation)");
	print_opt(f, "split-input-file", NULL, PB_OPT_FLAG,
		  "process each '// -----' chunk of the input separately");
	print_opt(f, "version", NULL, PB_OPT_FLAG, "print the version and exit");
	print_opt(f, "help", NULL, PB_OPT_FLAG, "print this help and exit");
	fprintf(f, "\nexit status: 0 ok, 1 input or compilation error, "
		   "2 usage error\n");
}

static int bad_usage(const struct pb_tool *t, const char *fmt, const char *a)
{
	fprintf(stderr, "%s: error: ", t->name);
	fprintf(stderr, fmt, a);
	fputc('\n', stderr);
	usage(t, stderr, 0);
	return PB_USAGE;
}

/* Store "val" into option "o"; returns 0 or -1 on a malformed value. */
static int set_opt(const struct pb_opt *o, const char *val)
{
	char *end;
	switch (o->kind) {
	case PB_OPT_FLAG:
		*(int *)o->dest = 1;
		return 0;
	case PB_OPT_STR:
	case PB_OPT_OPTSTR:
		*(const char **)o->dest = val ? val : "";
		return 0;
	case PB_OPT_INT:
		errno = 0;
		*(long *)o->dest = strtol(val, &end, 0);
		return (errno || *end || end == val) ? -1 : 0;
	case PB_OPT_DOUBLE:
	case PB_OPT_NONNEG: {
		errno = 0;
		double x = strtod(val, &end);
		*(double *)o->dest = x;
		if (errno || *end || end == val)
			return -1;
		return o->kind == PB_OPT_NONNEG && !(x >= 0 && x <= DBL_MAX)
			       ? -1
			       : 0;
	}
	case PB_OPT_GROUP:
		return -1;
	case PB_OPT_LIST: {
		struct pb_strlist *l = o->dest;
		l->v = realloc(l->v, sizeof(*l->v) * (l->n + 1));
		l->v[l->n++] = val;
		return 0;
	}
	}
	return -1;
}

/* Parse argv. Returns -1 when fine, else an exit code. */
static int parse_args(const struct pb_tool *t, int argc, char **argv,
		      struct common *c, const char **input)
{
	struct pb_opt common[] = {
		{"help", PB_OPT_FLAG, &c->help, NULL, NULL},
		{"version", PB_OPT_FLAG, &c->version, NULL, NULL},
		{"split-input-file", PB_OPT_FLAG, &c->split, NULL, NULL},
		{"arch", PB_OPT_STR, &c->arch, "ARCH", NULL},
		{"target-file", PB_OPT_STR, &c->target_file, "FILE", NULL},
		{"precision", PB_OPT_STR, &c->precision, "P", NULL},
		{NULL, 0, NULL, NULL, NULL},
	};
	int only_files = 0;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		if (only_files || a[0] != '-' || !strcmp(a, "-")) {
			if (*input)
				return bad_usage(t, "more than one input: '%s'", a);
			*input = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_files = 1;
			continue;
		}
		if (!strcmp(a, "-h")) {
			c->help = 1;
			continue;
		}
		if (!strcmp(a, "-o") || !strncmp(a, "-o", 2)) {
			if (a[2])
				c->out = a + 2;
			else if (i + 1 < argc)
				c->out = argv[++i];
			else
				return bad_usage(t, "option '%s' needs a value", a);
			continue;
		}
		if (a[1] != '-')
			return bad_usage(t, "unknown option '%s'", a);
		const char *name = a + 2, *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		const struct pb_opt *o = find_opt(t->opts, name, len);
		if (!o)
			o = find_opt(common, name, len);
		if (!o)
			return bad_usage(t, "unknown option '%s'", a);
		const char *val = eq ? eq + 1 : NULL;
		if (o->kind == PB_OPT_FLAG && val)
			return bad_usage(t, "option '%s' takes no value", a);
		if (!val && o->kind != PB_OPT_FLAG && o->kind != PB_OPT_OPTSTR) {
			if (i + 1 >= argc)
				return bad_usage(t, "option '%s' needs a value", a);
			val = argv[++i];
		}
		if (set_opt(o, val) < 0) {
			fprintf(stderr, "%s: error: bad value '%s' for option "
				"'--%s'%s\n", t->name, val, o->name,
				o->kind == PB_OPT_NONNEG ? " (expected a finite "
				"number >= 0)" : "");
			return PB_USAGE;
		}
	}
	if (c->arch) {
		if (!pb_target_is_arch(c->arch)) {
			fprintf(stderr, "%s: error: unknown --arch '%s' "
				"(expected %s)\n", t->name, c->arch,
				pb_target_arch_list());
			return PB_USAGE;
		}
	}
	if (c->precision && pb_precision_parse(c->precision) < 0) {
		fprintf(stderr, "%s: error: unknown --precision '%s' (expected "
			"fp32, tf32, fp16 or bf16)\n", t->name, c->precision);
		return PB_USAGE;
	}
	return -1;
}

/* Is the line starting at "p" a split marker "// -----"? */
static int is_split_line(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return end - p >= 8 && !strncmp(p, "// -----", 8);
}

/* Run the tool on each chunk of "in"; chunks are padded with newlines so
 * that diagnostics keep the line numbers of the whole file. */
static int run_split(const struct pb_tool *t, struct pb_ctx *ctx,
		     const struct pb_input *in, struct pb_buf *out)
{
	const char *p = in->data, *end = in->data + in->len;
	const char *start = p;
	int line = 1, start_line = 1, status = PB_OK, first = 1;
	for (;;) {
		const char *eol = memchr(p, '\n', end - p);
		const char *next = eol ? eol + 1 : end;
		int marker = p < end && is_split_line(p, eol ? eol : end);
		if (marker || p >= end) {
			struct pb_buf chunk = {0};
			for (int i = 1; i < start_line; i++)
				pb_buf_append(&chunk, "\n", 1);
			pb_buf_append(&chunk, start, p - start);
			struct pb_input c = *in;
			c.data = chunk.data;
			c.len = chunk.len;
			if (!first)
				pb_buf_puts(out, "// -----\n");
			first = 0;
			if (t->run(ctx, &c, out, t->user) != PB_OK)
				status = PB_ERR;
			pb_buf_free(&chunk);
			if (p >= end)
				break;
			start = next;
			start_line = line + 1;
		}
		p = next;
		line++;
	}
	return status;
}

/* Check --target-file before any work, so that a bad description fails
 * the run at once; without --arch ("set_arch"), its arch becomes ctx->arch
 * (the PTX target). */
static int load_target(struct pb_ctx *ctx, int set_arch)
{
	const struct pb_target *t = pb_target_of(ctx);
	if (!t)
		return PB_ERR;
	if (set_arch) /* the description lives as long as the context */
		ctx->arch = t->arch;
	return PB_OK;
}

/* Flush stdout after --help or --version of tool "t": PB_OK, or PB_ERR
 * with the reason (a full disk) on stderr. */
static int flush_stdout(const struct pb_tool *t)
{
	if (!fflush(stdout) && !ferror(stdout))
		return PB_OK;
	fprintf(stderr, "%s: error: cannot write: %s\n", t->name,
		strerror(errno ? errno : EIO));
	return PB_ERR;
}

int pb_main(const struct pb_tool *t, int argc, char **argv)
{
	struct common c = {0};
	const char *input = NULL;
	int rc = parse_args(t, argc, argv, &c, &input);
	if (rc >= 0)
		return rc;
	if (c.help) {
		usage(t, stdout, 1);
		return flush_stdout(t);
	}
	if (c.version) {
#ifdef PB_NO_MLIR
		printf("%s (pb) %s\n", t->name, PB_VERSION);
#else
		/* the isl this tool runs (docs/design.md, "isl"); isl_version
		   ends in a newline */
		printf("%s (pb) %s, %s", t->name, PB_VERSION, isl_version());
#endif
		return flush_stdout(t);
	}

	struct pb_input in = {0};
	char *data = NULL;
	size_t len = 0;
	in.path = (input && strcmp(input, "-")) ? input : NULL;
	in.name = in.path ? in.path : "<stdin>";
	if (input || !(t->flags & PB_TOOL_NO_INPUT_OK)) {
		struct stat st;
		int dir = in.path && !stat(in.path, &st) && S_ISDIR(st.st_mode);
		data = dir ? NULL : pb_read_file(in.path, &len);
		if (dir)
			errno = EISDIR;
		if (!data) {
			fprintf(stderr, "%s: error: cannot read: %s\n", in.name,
				strerror(errno));
			return PB_ERR;
		}
	}
	in.data = data;
	in.len = len;

	struct pb_ctx *ctx = pb_ctx_alloc(t->name);
	if (!ctx) {
		fprintf(stderr, "%s: error: out of memory\n", t->name);
		free(data);
		return PB_ERR;
	}
	ctx->input_name = in.name;
	if (c.arch)
		ctx->arch = c.arch;
	ctx->target_file = c.target_file;
	ctx->precision = c.precision ? (enum pb_precision)pb_precision_parse(
						       c.precision)
				     : PB_PRECISION_FP32;
	if (c.target_file && load_target(ctx, !c.arch) != PB_OK) {
		pb_ctx_free(ctx);
		free(data);
		return PB_ERR;
	}

	struct pb_buf out = {0};
	if (c.split && !(t->flags & PB_TOOL_BINARY_INPUT) && data)
		rc = run_split(t, ctx, &in, &out);
	else
		rc = t->run(ctx, &in, &out, t->user);
	if (rc == PB_OK && ctx->nerrors)
		rc = PB_ERR;
	if (rc == PB_OK && pb_write_file(c.out, out.data, out.len) < 0) {
		fprintf(stderr, "%s: error: cannot write: %s\n",
			c.out ? c.out : "<stdout>", strerror(errno));
		rc = PB_ERR;
	} else if (rc != PB_OK && (t->flags & PB_TOOL_REPORT) && out.len) {
		/* what was checked before the failure, e.g. mismatch lines */
		pb_write_file(NULL, out.data, out.len);
	}
	pb_buf_free(&out);
	pb_ctx_free(ctx);
	free(data);
	return rc;
}
