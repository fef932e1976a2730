/* pb-prof --static: what bounds each kernel, without a GPU
 * (docs/pb-prof.md, "--static").
 *
 *   k.ptx ── ptxas -v ──┬─ registers, spills, smem, stack ─┐
 *                       └─ cubin ─ nvdisasm ─ lib/sass ────┤ hottest loop
 *   plan (k.ptx header) ─ grid, block, dynamic smem ───────┤ occupancy
 *   pb-tile --report (MLIR/.onnx input) ─ predicted time ──┤ bound
 *                                                          └─ table, --json,
 *                                                             --roofline
 * A .sass listing or a cubin skips the assembler (and its fields). A
 * field whose tool is missing is reported missing, not an error. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "kernel/kernel.h"
#include "plan/plan.h"
#include "runtime/runtime.h"
#include "sass/sass.h"
#include "target/target.h"

/* What --static knows of one kernel (a launch of the plan, else a kernel
 * of ptxas's report or of the listing). */
struct skernel {
	const struct pb_sass_ptxas *ptxas; /* NULL: not assembled */
	const struct pb_sass_kernel *sass; /* NULL: not disassembled */
	int64_t dyn_smem;
	/* the fields pb-tile's and pb-smem's reports share
	 * (lib/kernel/summary.c): ptxas's registers and shared memory, the
	 * occupancy they allow, pb-tile's prediction and its bound */
	struct pb_kernel_summary sum;
	double predicted_s; /* < 0: unknown */
	double model_flops, model_bytes;
	const char *bound; /* NULL: unknown */
};

/* Everything --static gathered. */
struct sprof {
	char arch[32];
	int has_target;
	struct pb_target target;
	char ptxas[4096], nvdisasm[4096]; /* "" when not found */
	struct pb_plan *plan;
	struct pb_sass_ptxas *stats;
	int nstats;
	struct pb_sass sass;
	int has_sass;
	struct pb_prof *p; /* names, nodes, grid, flops; ms: predicted */
	struct skernel *k;
	struct pb_buf missing; /* "field (why); ..." */
	int npredicted;
};

/* Does "path" end in "ext"? */
static int has_ext(const char *path, const char *ext)
{
	size_t n = strlen(path), e = strlen(ext);
	return n >= e && !strcmp(path + n - e, ext);
}

static int is_cubin(const char *data, size_t len)
{
	return len >= 4 && !memcmp(data, "\x7f" "ELF", 4);
}

/* Is "data" an nvdisasm listing? */
static int is_listing(const struct pb_input *in)
{
	if (in->path && has_ext(in->path, ".sass"))
		return 1;
	size_t n = in->len < 65536 ? in->len : 65536;
	return in->data && memmem(in->data, n, ".section", 8) &&
	       memmem(in->data, n, ".text.", 6) &&
	       memmem(in->data, n, "/*0000*/", 8);
}

int pb_prof_static_compiled(const struct pb_input *in)
{
	return is_cubin(in->data, in->len) || is_listing(in) ||
	       pb_runtime_is_ptx(in);
}

/* The architecture of a ".target sm_90" line of "text" into "arch". */
static void target_of(const char *text, size_t len, char *arch, size_t n)
{
	const char *t = memmem(text, len, ".target", 7);
	if (!t)
		return;
	t += 7;
	while (*t == ' ' || *t == '\t')
		t++;
	size_t k = strcspn(t, " \t\n,");
	if (k && k < n)
		snprintf(arch, n, "%.*s", (int)k, t);
}

/* Note a missing field "what" and why. */
static void missing(struct sprof *s, const char *what, const char *why)
{
	pb_buf_printf(&s->missing, "%s%s (%s)", s->missing.len ? "; " : "",
		      what, why);
}

/* Write "len" bytes of "data" to a new temporary file "tmp" (a mkstemps
 * template with suffix "suffix"); -1 on failure. */
static int write_temp(char *tmp, int suffix, const char *data, size_t len)
{
	int fd = mkstemps(tmp, suffix);
	if (fd < 0)
		return -1;
	int ok = write(fd, data, len) == (ssize_t)len;
	close(fd);
	if (!ok)
		unlink(tmp);
	return ok ? 0 : -1;
}

/* Disassemble the cubin "cubin" into s->sass, when nvdisasm is there. */
static int disassemble(struct pb_ctx *ctx, struct sprof *s, const char *cubin)
{
	struct pb_buf text = {0};
	if (!s->nvdisasm[0]) {
		missing(s, "instruction mix", "no nvdisasm: set PB_NVDISASM or "
			"put it on PATH; PyPI's nvidia-cuda-nvdisasm has one");
		return PB_OK;
	}
	int rc = pb_sass_disassemble(ctx, s->nvdisasm, cubin, &text);
	if (rc == PB_OK && pb_sass_parse(text.data, &s->sass) == 0)
		s->has_sass = 1;
	else if (rc == PB_OK)
		missing(s, "instruction mix", "nvdisasm printed no "
			"instructions");
	if (rc == PB_OK && s->has_sass && !s->arch[0])
		target_of(text.data, text.len, s->arch, sizeof(s->arch));
	pb_buf_free(&text);
	return rc;
}

/* Assemble the PTX "ptx" with ptxas (when there is one) and disassemble
 * its cubin. */
static int assemble(struct pb_ctx *ctx, struct sprof *s, const char *ptx,
		    size_t len)
{
	char cubin[] = "/tmp/pb-static-XXXXXX.cubin";
	if (!s->ptxas[0]) {
		missing(s, "registers, spills, shared memory, stack, "
			"occupancy, instruction mix", "no ptxas in "
			"$CUDA_HOME/bin or /usr/local/cuda/bin");
		return PB_OK;
	}
	int fd = mkstemps(cubin, 6);
	if (fd < 0)
		return pb_error_in(ctx, NULL, "cannot create a temporary "
				   "file: %s", strerror(errno));
	close(fd);
	int rc = pb_sass_ptxas(ctx, "--static", ptx, len, s->arch, cubin,
			       &s->stats, &s->nstats);
	if (rc == PB_OK)
		rc = disassemble(ctx, s, cubin);
	unlink(cubin);
	return rc;
}

/* The ptxas report of kernel "name", or NULL. */
static const struct pb_sass_ptxas *stats_of(const struct sprof *s,
					    const char *name)
{
	for (int i = 0; i < s->nstats; i++)
		if (!strcmp(s->stats[i].kernel, name))
			return &s->stats[i];
	return NULL;
}

/* The kernels of "s": the plan's launches, else ptxas's kernels, else the
 * listing's, into s->p and s->k. */
static int kernels(struct pb_ctx *ctx, struct sprof *s)
{
	int n = s->plan ? s->plan->nlaunches
			: s->nstats ? s->nstats : s->sass.n;
	s->p = pb_prof_alloc(s->has_target ? s->target.name : s->arch, 1, n,
			     0, 1);
	s->k = calloc(n + 1, sizeof(*s->k));
	if (!s->p || !s->k)
		return pb_error_in(ctx, NULL, "out of memory");
	for (int i = 0; i < n; i++) {
		struct pb_prof_kernel *k = &s->p->k[i];
		if (s->plan) {
			const struct pb_plan_launch *l = &s->plan->launches[i];
			pb_prof_kernel_set(k, l->kernel, l->origin, l->nnodes,
					   l->nodes);
			memcpy(k->grid, l->grid, sizeof(k->grid));
			memcpy(k->block, l->block, sizeof(k->block));
			for (int a = 0; a < l->nargs; a++)
				if (l->args[a].kind == PB_PLAN_ARG_BUFFER)
					k->bytes += s->plan->buffers
							    [l->args[a].buffer]
								    .bytes;
			s->k[i].dyn_smem = l->smem;
		} else {
			const char *name = s->nstats ? s->stats[i].kernel
						     : s->sass.k[i].name;
			pb_prof_kernel_set(k, name, name, 0, NULL);
		}
		s->k[i].ptxas = stats_of(s, k->name);
		s->k[i].sass = s->has_sass ? pb_sass_kernel(&s->sass, k->name)
					   : NULL;
		s->k[i].predicted_s = -1;
		pb_kernel_summary_init(&s->k[i].sum);
	}
	return PB_OK;
}

/* The occupancy of every kernel with a plan launch and a ptxas report. */
static void occupancy(struct sprof *s)
{
	if (!s->has_target || !s->plan || !s->nstats)
		return;
	for (int i = 0; i < s->p->n; i++) {
		const struct pb_prof_kernel *k = &s->p->k[i];
		struct skernel *sk = &s->k[i];
		if (!sk->ptxas)
			continue;
		sk->sum.grid = k->grid[0] * k->grid[1] * k->grid[2];
		sk->sum.res.threads = k->block[0] * k->block[1] * k->block[2];
		sk->sum.res.regs = (int)sk->ptxas->regs;
		sk->sum.res.smem = sk->ptxas->smem + sk->dyn_smem;
		pb_kernel_summary_occupancy(&s->target, &sk->sum);
	}
}

/* The nests of origin "origin" in pb-tile's report "ks": their predicted
 * seconds, flops and bytes in nest order into "v" (3 per nest, at most
 * "max" nests); the number of nests. */
static int nests_of(json_t *ks, const char *origin, double *v, int max)
{
	size_t i;
	json_t *o;
	int n = 0;
	json_array_foreach(ks, i, o) {
		const char *name = json_string_value(json_object_get(o, "kernel"));
		json_int_t nest = json_integer_value(json_object_get(o, "nest"));
		if (!name || strcmp(name, origin) || nest < 0 || nest >= max)
			continue;
		v[3 * nest] = json_number_value(json_object_get(o, "predicted_s"));
		v[3 * nest + 1] = json_number_value(json_object_get(o, "flops"));
		v[3 * nest + 2] =
			json_number_value(json_object_get(o, "global_bytes"));
		n = (int)nest + 1 > n ? (int)nest + 1 : n;
	}
	return n;
}

/* The cost model's view of each launch from pb-tile's report "path", as
 * pb_prof_set_cost hands out flops: a function's one launch gets the sum
 * over its nests, the N-th of as many launches as nests the N-th nest. */
static void predictions(struct sprof *s, const char *path)
{
	json_t *root = path ? json_load_file(path, 0, NULL) : NULL;
	json_t *ks = json_object_get(root, "kernels");
	double v[3 * 64];
	if (!json_is_array(ks)) {
		missing(s, "predicted time", path ? "the input passed pb-tile "
			"before: run --static on the .onnx or an earlier "
			"stage's MLIR" : "a compiled input carries no cost "
			"model: run --static on the .onnx or MLIR");
		json_decref(root);
		return;
	}
	for (int i = 0; i < s->p->n; i++) {
		const char *origin = s->p->k[i].origin;
		int nl = 0, j = 0;
		for (int l = 0; l < s->p->n; l++)
			nl += !strcmp(s->p->k[l].origin, origin);
		for (int l = 0; l < i; l++)
			j += !strcmp(s->p->k[l].origin, origin);
		memset(v, 0, sizeof(v));
		int nn = nests_of(ks, origin, v, 64);
		if (!nn || (nl != 1 && nl != nn))
			continue;
		struct skernel *sk = &s->k[i];
		sk->predicted_s = sk->model_flops = sk->model_bytes = 0;
		for (int x = nl == 1 ? 0 : j; x < (nl == 1 ? nn : j + 1); x++) {
			sk->predicted_s += v[3 * x];
			sk->model_flops += v[3 * x + 1];
			sk->model_bytes += v[3 * x + 2];
		}
		sk->sum.predicted_s = sk->predicted_s;
		sk->sum.flops = sk->model_flops;
		sk->sum.bytes = sk->model_bytes;
		sk->sum.tc = sk->sass && sk->sass->mix.n[PB_SASS_MMA] +
						 sk->sass->mix.n[PB_SASS_GMMA];
		if (s->has_target)
			sk->bound = pb_kernel_summary_bound(&s->target, &sk->sum);
		s->p->k[i].ms[0] = sk->predicted_s * 1e3;
		s->npredicted++;
	}
	json_decref(root);
}

/* The hottest loop of "sk" (NULL when none is known). */
static const struct pb_sass_loop *hot(const struct skernel *sk)
{
	return sk->sass && sk->sass->hot >= 0 ? &sk->sass->loops[sk->sass->hot]
					      : NULL;
}

/* "a/b/c" widths of class "c" of "m" into "buf". */
static const char *widths(char *buf, size_t n, const struct pb_sass_mix *m,
			  enum pb_sass_class c)
{
	snprintf(buf, n, "%d/%d/%d", m->width[c][PB_SASS_W32],
		 m->width[c][PB_SASS_W64], m->width[c][PB_SASS_W128]);
	return buf;
}

/* The table of "s" into "b". */
static void table(const struct sprof *s, struct pb_buf *b)
{
	const struct pb_prof *p = s->p;
	char x[64], y[64], z[64], nodes[32];
	int w = 6;
	for (int i = 0; i < p->n; i++) {
		int n = (int)strlen(p->k[i].name);
		w = n > w ? (n < 48 ? n : 48) : w;
	}
	pb_buf_printf(b, "pb-prof --static: %s%s%s, %d kernel%s; ptxas %s, "
		      "nvdisasm %s\n", s->arch, s->has_target ? ", " : "",
		      s->has_target ? s->target.name : "", p->n,
		      p->n == 1 ? "" : "s", s->ptxas[0] ? "yes" : "no",
		      s->nvdisasm[0] ? "yes" : "no");
	pb_buf_printf(b, "%3s  %-*s %-16s %-10s %-10s %4s %6s %6s %5s %5s "
		      "%12s %s\n", "#", w, "kernel", "nodes", "grid", "block",
		      "regs", "spill", "smem", "stack", "occ", "predicted us",
		      "bound");
	for (int i = 0; i < p->n; i++) {
		const struct pb_prof_kernel *k = &p->k[i];
		const struct skernel *sk = &s->k[i];
		const struct pb_sass_ptxas *st = sk->ptxas;
		size_t len = 0;
		nodes[0] = '\0';
		for (int j = 0; j < k->nnodes && len < 16; j++)
			len += snprintf(nodes + len, sizeof(nodes) - len,
					"%s%s", j ? "," : "", k->nodes[j]);
		if (strlen(nodes) > 16)
			strcpy(nodes + 13, "...");
		pb_buf_printf(b, "%3d  %-*s %-16s ", i, w, k->name,
			      nodes[0] ? nodes : "-");
		if (s->plan) {
			pb_prof_dim3(x, sizeof(x), k->grid);
			pb_prof_dim3(y, sizeof(y), k->block);
		} else {
			strcpy(x, "-");
			strcpy(y, "-");
		}
		pb_buf_printf(b, "%-10s %-10s ", x, y);
		if (st)
			pb_buf_printf(b, "%4ld %6ld %6lld %5ld ", st->regs,
				      st->spill_st + st->spill_ld,
				      (long long)(st->smem + sk->dyn_smem),
				      st->stack);
		else
			pb_buf_printf(b, "%4s %6s %6s %5s ", "-", "-", "-", "-");
		if (sk->sum.has_occ)
			snprintf(z, sizeof(z), "%.2f", sk->sum.occ.occupancy);
		else
			strcpy(z, "-");
		pb_buf_printf(b, "%5s ", z);
		if (sk->predicted_s >= 0)
			pb_buf_printf(b, "%12.2f %s\n", sk->predicted_s * 1e6,
				      sk->bound ? sk->bound : "-");
		else
			pb_buf_printf(b, "%12s -\n", "-");
	}
	if (!s->has_sass) {
		pb_buf_printf(b, "missing: %s\n", s->missing.data);
		return;
	}
	pb_buf_printf(b, "hottest inner loop (instructions of one iteration; "
		      "LDG, LDS, STS, LDGSTS by width 32/64/128 bits):\n");
	pb_buf_printf(b, "%3s  %-*s %5s %5s %5s %5s %5s %5s %5s %-9s %-9s "
		      "%-9s %5s %5s %5s %5s %5s %4s %9s\n", "#", w, "kernel",
		      "depth", "insts", "math", "share", "FFMA", "TC", "FADD",
		      "LDG", "LDS", "LDGSTS", "LDSM", "STS", "STG", "BAR",
		      "INT", "FSEL", "flops/mem");
	for (int i = 0; i < p->n; i++) {
		const struct pb_sass_loop *L = hot(&s->k[i]);
		char g[32], sh[32], as[32];
		pb_buf_printf(b, "%3d  %-*s ", i, w, p->k[i].name);
		if (!L) {
			pb_buf_printf(b, "%5s %5d  (no loop)\n", "-",
				      s->k[i].sass ? s->k[i].sass->ninst : 0);
			continue;
		}
		const struct pb_sass_mix *m = &L->mix;
		pb_buf_printf(b, "%5d %5d %5d %5.2f %5d %5d %5d %-9s %-9s %-9s "
			      "%5d %5d %5d %5d %5d %4d %9.2f\n", L->depth,
			      m->total, m->math, pb_sass_math_share(m),
			      m->n[PB_SASS_FFMA],
			      m->n[PB_SASS_MMA] + m->n[PB_SASS_GMMA],
			      m->n[PB_SASS_FADD],
			      widths(g, sizeof(g), m, PB_SASS_LDG),
			      widths(sh, sizeof(sh), m, PB_SASS_LDS),
			      widths(as, sizeof(as), m, PB_SASS_LDGSTS),
			      m->n[PB_SASS_LDSM], m->n[PB_SASS_STS],
			      m->n[PB_SASS_STG], m->n[PB_SASS_BAR],
			      m->n[PB_SASS_INT], m->n[PB_SASS_FSEL],
			      pb_sass_flops_per_mem(m));
	}
	if (s->missing.len)
		pb_buf_printf(b, "missing: %s\n", s->missing.data);
}

/* The mix "m" as JSON: totals and the nonzero classes. */
static json_t *mix_json(const struct pb_sass_mix *m)
{
	json_t *o = json_object(), *c = json_object(), *w = json_object();
	json_object_set_new(o, "instructions", json_integer(m->total));
	json_object_set_new(o, "math", json_integer(m->math));
	json_object_set_new(o, "math_share", json_real(pb_sass_math_share(m)));
	json_object_set_new(o, "memory", json_integer(m->mem));
	json_object_set_new(o, "flops", json_real(m->flops));
	json_object_set_new(o, "flops_per_memory",
			    json_real(pb_sass_flops_per_mem(m)));
	for (int k = 0; k < PB_SASS_NCLASS; k++) {
		if (!m->n[k])
			continue;
		json_object_set_new(c, pb_sass_class_name(k),
				    json_integer(m->n[k]));
		if (k >= PB_SASS_LDG && k <= PB_SASS_MEMX) {
			json_t *a = json_array();
			for (int x = 0; x < PB_SASS_NWIDTH; x++)
				json_array_append_new(
					a, json_integer(m->width[k][x]));
			json_object_set_new(w, pb_sass_class_name(k), a);
		}
	}
	json_object_set_new(o, "counts", c);
	json_object_set_new(o, "widths", w);
	return o;
}

static json_t *dims3(const int64_t *v)
{
	json_t *a = json_array();
	for (int i = 0; i < 3; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

/* One kernel "i" of "s" as JSON. */
static json_t *kernel_json(const struct sprof *s, int i)
{
	const struct pb_prof_kernel *k = &s->p->k[i];
	const struct skernel *sk = &s->k[i];
	json_t *o = json_object(), *nodes = json_array();
	json_object_set_new(o, "index", json_integer(i));
	json_object_set_new(o, "kernel", json_string(k->name));
	json_object_set_new(o, "origin", json_string(k->origin));
	for (int j = 0; j < k->nnodes; j++)
		json_array_append_new(nodes, json_string(k->nodes[j]));
	json_object_set_new(o, "nodes", nodes);
	json_object_set_new(o, "grid", s->plan ? dims3(k->grid) : json_null());
	json_object_set_new(o, "block", s->plan ? dims3(k->block) : json_null());
	if (sk->ptxas) {
		json_t *p = json_object();
		json_object_set_new(p, "registers", json_integer(sk->ptxas->regs));
		json_object_set_new(p, "spill_store_bytes",
				    json_integer(sk->ptxas->spill_st));
		json_object_set_new(p, "spill_load_bytes",
				    json_integer(sk->ptxas->spill_ld));
		json_object_set_new(p, "shared_bytes",
				    json_integer(sk->ptxas->smem));
		json_object_set_new(p, "stack_bytes",
				    json_integer(sk->ptxas->stack));
		json_object_set_new(p, "barriers",
				    json_integer(sk->ptxas->barriers));
		json_object_set_new(o, "ptxas", p);
	} else {
		json_object_set_new(o, "ptxas", json_null());
	}
	json_object_set_new(o, "dynamic_shared_bytes",
			    s->plan ? json_integer(sk->dyn_smem) : json_null());
	/* threads, registers, shared_bytes, blocks_per_sm, occupancy,
	 * waves, predicted_s, bound: as pb-tile's and pb-smem's reports */
	if (s->has_target)
		pb_kernel_summary_json(&s->target, &sk->sum, o);
	json_object_set_new(o, "kernel_mix", sk->sass ? mix_json(&sk->sass->mix)
						      : json_null());
	const struct pb_sass_loop *L = hot(sk);
	if (L) {
		json_t *l = mix_json(&L->mix);
		json_object_set_new(l, "depth", json_integer(L->depth));
		json_object_set_new(l, "loops", json_integer(sk->sass->nloops));
		json_object_set_new(o, "loop", l);
	} else {
		json_object_set_new(o, "loop", json_null());
	}
	json_object_set_new(o, "bytes", json_integer(k->bytes));
	json_object_set_new(o, "flops",
			    k->flops >= 0 ? json_real(k->flops) : json_null());
	int pr = sk->predicted_s >= 0;
	if (!json_object_get(o, "predicted_s"))
		json_object_set_new(o, "predicted_s",
				    pr ? json_real(sk->predicted_s) : json_null());
	json_object_set_new(o, "model_flops",
			    pr ? json_real(sk->model_flops) : json_null());
	json_object_set_new(o, "model_bytes",
			    pr ? json_real(sk->model_bytes) : json_null());
	if (!json_object_get(o, "bound"))
		json_object_set_new(o, "bound", json_null());
	return o;
}

static int write_json(struct pb_ctx *ctx, const struct sprof *s,
		      const char *path)
{
	json_t *root = json_object(), *ks = json_array();
	json_object_set_new(root, "tool", json_string("pb-prof"));
	json_object_set_new(root, "version", json_string(PB_VERSION));
	json_object_set_new(root, "mode", json_string("static"));
	json_object_set_new(root, "arch", json_string(s->arch));
	json_object_set_new(root, "target", s->has_target
						    ? json_string(s->target.name)
						    : json_null());
	json_object_set_new(root, "ptxas", s->ptxas[0] ? json_string(s->ptxas)
						       : json_null());
	json_object_set_new(root, "nvdisasm", s->nvdisasm[0]
						      ? json_string(s->nvdisasm)
						      : json_null());
	json_object_set_new(root, "missing",
			    json_string(s->missing.len ? s->missing.data : ""));
	for (int i = 0; i < s->p->n; i++)
		json_array_append_new(ks, kernel_json(s, i));
	json_object_set_new(root, "kernels", ks);
	int rc = pb_write_json(root, path, JSON_INDENT(1) |
						   JSON_REAL_PRECISION(6));
	json_decref(root);
	if (rc < 0)
		return pb_error_in(ctx, path, "cannot write: %s",
				   strerror(errno));
	return PB_OK;
}

/* The target of "s->arch" (or --target-file) into s->target, quietly
 * absent for an architecture without a description. */
static int load_target(struct pb_ctx *ctx, struct sprof *s)
{
	if (ctx->target_file) {
		const struct pb_target *t = pb_target_of(ctx);
		if (!t)
			return PB_ERR;
		s->target = *t;
		s->has_target = 1;
	} else if (pb_target_is_arch(s->arch)) {
		if (pb_target_get(ctx, s->arch, NULL, &s->target) != PB_OK)
			return PB_ERR;
		s->has_target = 1;
	} else {
		missing(s, "occupancy, bound", "no target description of the "
			"architecture");
	}
	return PB_OK;
}

static void clear(struct sprof *s)
{
	pb_plan_free(s->plan);
	free(s->stats);
	pb_sass_clear(&s->sass);
	pb_prof_free(s->p);
	free(s->k);
	pb_buf_free(&s->missing);
}

/* Read the compiled input "data" into "s": PTX assembled, a cubin
 * disassembled, a listing parsed. */
static int read_input(struct pb_ctx *ctx, struct sprof *s, const char *data,
		      size_t len, const char *path)
{
	struct pb_input in = {.name = path, .path = path, .data = data,
			      .len = len};
	char err[256];
	if (is_cubin(data, len)) {
		char tmp[] = "/tmp/pb-static-XXXXXX.cubin";
		if (write_temp(tmp, 6, data, len))
			return pb_error_in(ctx, NULL, "cannot write a "
					   "temporary file");
		missing(s, "registers, spills, shared memory, stack, "
			"occupancy", "a cubin: no ptxas report");
		int rc = disassemble(ctx, s, tmp);
		unlink(tmp);
		return rc;
	}
	if (is_listing(&in)) {
		if (pb_sass_parse(data, &s->sass))
			return pb_error_in(ctx, NULL, "no instructions in "
					   "the nvdisasm listing");
		s->has_sass = 1;
		target_of(data, len, s->arch, sizeof(s->arch));
		missing(s, "registers, spills, shared memory, stack, "
			"occupancy", "an nvdisasm listing: no ptxas report");
		return PB_OK;
	}
	s->plan = pb_plan_from_ptx(data, len, err, sizeof(err));
	if (s->plan && s->plan->arch)
		snprintf(s->arch, sizeof(s->arch), "%s", s->plan->arch);
	else
		target_of(data, len, s->arch, sizeof(s->arch));
	if (!s->plan)
		missing(s, "grid, block, occupancy", "no launch plan in the "
			"PTX");
	return assemble(ctx, s, data, len);
}

int pb_prof_static_run(struct pb_ctx *ctx, const char *data, size_t len,
		       const char *path, const struct pb_prof_costs *costs,
		       const char *tile_report, const struct pb_prof_opts *o,
		       struct pb_buf *report)
{
	struct sprof s;
	struct pb_buf tab = {0};
	memset(&s, 0, sizeof(s));
	snprintf(s.arch, sizeof(s.arch), "%s", ctx->arch ? ctx->arch : "sm_90");
	if (pb_sass_find_ptxas(s.ptxas, sizeof(s.ptxas)))
		s.ptxas[0] = '\0';
	if (pb_sass_find_nvdisasm(s.nvdisasm, sizeof(s.nvdisasm)))
		s.nvdisasm[0] = '\0';
	int rc = read_input(ctx, &s, data, len, path);
	if (rc == PB_OK)
		rc = load_target(ctx, &s);
	if (rc == PB_OK)
		rc = kernels(ctx, &s);
	if (rc == PB_OK) {
		occupancy(&s);
		for (int i = 0; costs && i < costs->n; i++)
			pb_prof_set_cost(s.p, &costs->c[i]);
		predictions(&s, tile_report);
		pb_prof_summarize(s.p);
		table(&s, &tab);
	}
	if (rc == PB_OK && o->json)
		rc = write_json(ctx, &s, o->json);
	if (rc == PB_OK && o->roofline) {
		if (!s.has_target)
			rc = pb_error_in(ctx, NULL, "--roofline: no target "
					 "description of %s", s.arch);
		else
			rc = pb_prof_roofline(ctx, s.p, &s.target,
					      "predicted (pb-prof --static)",
					      o->roofline);
	}
	if (rc == PB_OK) /* no partial output: the table after the files */
		pb_buf_append(report, tab.data, tab.len);
	pb_buf_free(&tab);
	clear(&s);
	return rc;
}
