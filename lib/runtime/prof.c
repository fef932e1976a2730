/* pb-prof without MLIR: the timing record of a profile, timing a launch
 * plan on the GPU with CUDA events, reading kernel costs from an earlier
 * profile, and writing the table, the JSON report and the Chrome trace.
 * The CPU side (instrumenting @main, JIT, cost estimates from the loop
 * nests) is in cpu.c and cost.c. See docs/pb-prof.md.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "plan/plan.h"
#include "runtime/runtime.h"
#include "target/target.h"

void pb_prof_opts_init(struct pb_prof_opts *o)
{
	memset(o, 0, sizeof(*o));
	pb_runtime_opts_init(&o->run);
	o->warmup = 3;
	o->repeat = 20;
}

int pb_prof_check_opts(struct pb_ctx *ctx, const struct pb_prof_opts *o)
{
	if (o->warmup < 0 || o->warmup > 1000000) {
		pb_error(ctx, "bad --warmup %ld (expected 0 or more)", o->warmup);
		return PB_ERR;
	}
	if (o->repeat < 1 || o->repeat > 1000000) {
		pb_error(ctx, "bad --repeat %ld (expected 1 or more)", o->repeat);
		return PB_ERR;
	}
	return PB_OK;
}

struct pb_prof *pb_prof_alloc(const char *device, int gpu, int n, int warmup,
			      int repeat)
{
	struct pb_prof *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->device = strdup(device);
	p->gpu = gpu;
	p->n = n;
	p->warmup = warmup;
	p->repeat = repeat;
	p->k = calloc(n + 1, sizeof(*p->k));
	int ok = p->device && p->k;
	for (int i = 0; ok && i < n; i++) {
		p->k[i].flops = -1;
		p->k[i].ms = calloc(repeat, sizeof(double));
		p->k[i].start = calloc(repeat, sizeof(double));
		ok = p->k[i].ms && p->k[i].start;
	}
	if (!ok) {
		pb_prof_free(p);
		return NULL;
	}
	return p;
}

void pb_prof_free(struct pb_prof *p)
{
	if (!p)
		return;
	for (int i = 0; p->k && i < p->n; i++) {
		struct pb_prof_kernel *k = &p->k[i];
		free(k->name);
		free(k->origin);
		for (int j = 0; j < k->nnodes; j++)
			free(k->nodes[j]);
		free(k->nodes);
		free(k->ms);
		free(k->start);
		free(k->nests);
	}
	free(p->k);
	free(p->device);
	free(p);
}

void pb_prof_kernel_set(struct pb_prof_kernel *k, const char *name,
			const char *origin, int nnodes, char *const *nodes)
{
	k->name = strdup(name ? name : "?");
	k->origin = strdup(origin ? origin : k->name);
	k->nodes = calloc(nnodes + 1, sizeof(*k->nodes));
	for (int i = 0; k->nodes && i < nnodes; i++)
		k->nodes[k->nnodes++] = strdup(nodes[i]);
}

/* qsort comparison of doubles "a" and "b". */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median of the "n" values "v" (not changed). */
static double median(const double *v, int n)
{
	double *s = malloc(sizeof(double) * (n ? n : 1));
	if (!s || !n) {
		free(s);
		return 0;
	}
	memcpy(s, v, sizeof(double) * n);
	qsort(s, n, sizeof(double), cmp_double);
	double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

/* The minimum of the "n" values "v". */
static double minimum(const double *v, int n)
{
	double m = n ? v[0] : 0;
	for (int i = 1; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

void pb_prof_summarize(struct pb_prof *p)
{
	double *tot = calloc(p->repeat + 1, sizeof(double));
	p->sum_median = 0;
	for (int i = 0; i < p->n; i++) {
		struct pb_prof_kernel *k = &p->k[i];
		k->median = median(k->ms, p->repeat);
		k->min = minimum(k->ms, p->repeat);
		p->sum_median += k->median;
		for (int r = 0; tot && r < p->repeat; r++)
			tot[r] += k->ms[r];
	}
	p->total_median = tot ? median(tot, p->repeat) : 0;
	p->total_min = tot ? minimum(tot, p->repeat) : 0;
	free(tot);
}

int pb_prof_gpu(struct pb_ctx *ctx, struct pb_runtime_gpu *g,
		const struct pb_plan *plan, int warmup, int repeat,
		struct pb_prof **out)
{
	int n = plan->nlaunches;
	struct pb_prof *p = pb_prof_alloc(pb_runtime_gpu_device(g), 1, n,
					  warmup, repeat);
	double *ms = calloc((size_t)repeat * n + 1, sizeof(double));
	double *start = calloc((size_t)repeat * (n + 1) + 1, sizeof(double));
	int rc = p && ms && start ? PB_OK : PB_ERR;
	if (rc != PB_OK)
		pb_error(ctx, "out of memory");
	for (int i = 0; rc == PB_OK && i < n; i++) {
		const struct pb_plan_launch *l = &plan->launches[i];
		struct pb_prof_kernel *k = &p->k[i];
		pb_prof_kernel_set(k, l->kernel, l->origin, l->nnodes, l->nodes);
		memcpy(k->grid, l->grid, sizeof(k->grid));
		memcpy(k->block, l->block, sizeof(k->block));
		for (int a = 0; a < l->nargs; a++)
			if (l->args[a].kind == PB_PLAN_ARG_BUFFER)
				k->bytes += plan->buffers[l->args[a].buffer].bytes;
	}
	if (rc == PB_OK && n)
		rc = pb_runtime_gpu_time(ctx, g, warmup, repeat, ms, start);
	for (int i = 0; rc == PB_OK && i < n; i++)
		for (int r = 0; r < repeat; r++) {
			p->k[i].ms[r] = ms[(size_t)r * n + i];
			p->k[i].start[r] = start[(size_t)r * (n + 1) + i];
		}
	free(ms);
	free(start);
	if (rc != PB_OK) {
		pb_prof_free(p);
		return PB_ERR;
	}
	pb_prof_summarize(p);
	pb_plan_memory(plan, &p->memory);
	p->has_memory = 1;
	*out = p;
	return PB_OK;
}

void pb_prof_set_cost(struct pb_prof *p, const struct pb_prof_cost *c)
{
	int n = 0, j = 0;
	for (int i = 0; i < p->n; i++)
		n += !strcmp(p->k[i].origin, c->origin);
	if (n != 1 && n != c->nnests)
		return;
	for (int i = 0; i < p->n; i++)
		if (!strcmp(p->k[i].origin, c->origin))
			p->k[i].flops = n == 1 ? c->flops : c->nests[j++];
}

int pb_prof_read_costs(struct pb_ctx *ctx, struct pb_prof *p,
		       const char *path)
{
	json_error_t e;
	json_t *root = json_load_file(path, 0, &e);
	json_t *ks = root ? json_object_get(root, "kernels") : NULL;
	if (!json_is_array(ks)) {
		pb_error_in(ctx, path, "cannot read kernel costs: %s",
			     root ? "no \"kernels\" array" : e.text);
		json_decref(root);
		return PB_ERR;
	}
	size_t i;
	json_t *k;
	json_array_foreach(ks, i, k) {
		const char *origin = json_string_value(json_object_get(k, "origin"));
		json_t *f = json_object_get(k, "flops");
		json_t *nests = json_object_get(k, "nest_flops");
		size_t nn = json_array_size(nests);
		double *v = calloc(nn + 1, sizeof(double));
		for (size_t j = 0; v && j < nn; j++)
			v[j] = json_number_value(json_array_get(nests, j));
		struct pb_prof_cost c = {(char *)origin, json_number_value(f),
					 v ? (int)nn : 0, v};
		if (origin && json_is_number(f))
			pb_prof_set_cost(p, &c);
		free(v);
	}
	json_decref(root);
	return PB_OK;
}

/* "v" formatted with "fmt" into "buf" (size "n"), or "-" when "ok" is 0. */
static const char *num(char *buf, size_t n, const char *fmt, double v, int ok)
{
	if (ok)
		snprintf(buf, n, fmt, v);
	else
		snprintf(buf, n, "-");
	return buf;
}

/* The ONNX nodes of "k" as "a,b,c" cut to at most "w" characters. */
static void nodes_str(const struct pb_prof_kernel *k, char *buf, size_t w)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < k->nnodes; i++) {
		int m = snprintf(buf + len, w + 1 - len, "%s%s", i ? "," : "",
				 k->nodes[i]);
		if (m < 0 || len + m > w) {
			if (w >= 3)
				strcpy(buf + w - 3, "...");
			return;
		}
		len += m;
	}
	if (!k->nnodes)
		snprintf(buf, w + 1, "-");
}

/* Seconds from milliseconds "ms", or 0 when "ms" is not positive. */
static double secs(double ms)
{
	return ms > 0 ? ms / 1e3 : 0;
}

/* "bytes" for people into "out" (of "n" bytes): "900 B", "12.0 KiB",
 * "44.8 MiB", "1.25 GiB". */
static const char *mib(char *out, size_t n, int64_t bytes)
{
	double k = 1024.0;
	if (bytes < 1024)
		snprintf(out, n, "%lld B", (long long)bytes);
	else if (bytes < 1024 * 1024)
		snprintf(out, n, "%.1f KiB", bytes / k);
	else if (bytes < 1024LL * 1024 * 1024)
		snprintf(out, n, "%.1f MiB", bytes / (k * k));
	else
		snprintf(out, n, "%.2f GiB", bytes / (k * k * k));
	return out;
}

void pb_prof_memory_line(const struct pb_prof *p, struct pb_buf *b)
{
	const struct pb_plan_memory *m = &p->memory;
	char pk[32], ar[32], in[32], io[32], pa[32], lv[32];
	if (!p->has_memory)
		return;
	pb_buf_printf(b, "memory: peak %s = %s %s + inputs/outputs %s + "
		      "weights %s; intermediates %s without reuse, %s live at "
		      "most\n", mib(pk, sizeof(pk), m->peak),
		      m->arena >= 0 ? "arena" : "intermediates (no arena)",
		      mib(ar, sizeof(ar), m->arena >= 0 ? m->arena
							: m->intermediates),
		      mib(io, sizeof(io), m->inputs + m->outputs),
		      mib(pa, sizeof(pa), m->params),
		      mib(in, sizeof(in), m->intermediates),
		      mib(lv, sizeof(lv), m->live_max));
}

void pb_prof_table(const struct pb_prof *p, struct pb_buf *b)
{
	char med[32], mn[32], gb[32], gf[32], nodes[32], gr[48], bl[48];
	pb_buf_printf(b, "pb-prof: %s, %d kernel%s, warmup %d, repeat %d: "
		      "%.2f us per run (median; min %.2f)\n", p->device, p->n,
		      p->n == 1 ? "" : "s", p->warmup, p->repeat,
		      p->total_median * 1e3, p->total_min * 1e3);
	pb_prof_memory_line(p, b);
	int w = 6;
	for (int i = 0; i < p->n; i++) {
		int n = (int)strlen(p->k[i].name);
		w = n > w ? (n < 64 ? n : 64) : w;
	}
	pb_buf_printf(b, "%3s  %-*s %-24s ", "#", w, "kernel", "nodes");
	if (p->gpu)
		pb_buf_printf(b, "%-12s %-12s ", "grid", "block");
	pb_buf_printf(b, "%10s %10s %6s %9s %9s\n", "median us", "min us",
		      "share", "GB/s", "GFLOP/s");
	for (int i = 0; i < p->n; i++) {
		const struct pb_prof_kernel *k = &p->k[i];
		double s = secs(k->median);
		nodes_str(k, nodes, 24);
		pb_buf_printf(b, "%3d  %-*s %-24s ", i, w, k->name, nodes);
		if (p->gpu) {
			pb_prof_dim3(gr, sizeof(gr), k->grid);
			pb_prof_dim3(bl, sizeof(bl), k->block);
			pb_buf_printf(b, "%-12s %-12s ", gr, bl);
		}
		pb_buf_printf(b, "%10s %10s %5.1f%% %9s %9s\n",
			      num(med, sizeof(med), "%.2f", k->median * 1e3, 1),
			      num(mn, sizeof(mn), "%.2f", k->min * 1e3, 1),
			      p->sum_median > 0 ? 100 * k->median / p->sum_median
						: 0.0,
			      num(gb, sizeof(gb), "%.2f",
				  s > 0 ? k->bytes / s / 1e9 : 0, s > 0),
			      num(gf, sizeof(gf), "%.2f",
				  s > 0 ? k->flops / s / 1e9 : 0,
				  s > 0 && k->flops >= 0));
	}
}

/* The groups of pb_prof_compare: every ONNX node name of the profiles
 * (one entry per distinct name) with a union-find parent; kernels without
 * nodes share the group of the name "-". */
struct groups {
	const char **name;
	int *parent;
	int n, cap;
};

/* The group root of node "i". */
static int root_of(struct groups *g, int i)
{
	while (g->parent[i] != i)
		i = g->parent[i] = g->parent[g->parent[i]];
	return i;
}

/* The index of node "name" in "g", added when new. */
static int node_id(struct groups *g, const char *name)
{
	for (int i = 0; i < g->n; i++)
		if (!strcmp(g->name[i], name))
			return i;
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 64;
		g->name = pb_xrealloc(g->name, g->cap, sizeof(*g->name));
		g->parent = pb_xrealloc(g->parent, g->cap, sizeof(*g->parent));
	}
	g->name[g->n] = name;
	g->parent[g->n] = g->n;
	return g->n++;
}

/* The group root of kernel "k" (that of its first node, "-" for none). */
static int kernel_root(struct groups *g, const struct pb_prof_kernel *k)
{
	return root_of(g, node_id(g, k->nnodes ? k->nodes[0] : "-"));
}

/* Join the nodes of kernel "k" into one group. */
static void join_kernel(struct groups *g, const struct pb_prof_kernel *k)
{
	int r = kernel_root(g, k);
	for (int j = 1; j < k->nnodes; j++) {
		int o = root_of(g, node_id(g, k->nodes[j]));
		if (o != r)
			g->parent[o] = r;
	}
}

void pb_prof_compare(struct pb_prof *const *p, const char *const *names,
		     int n, struct pb_buf *b)
{
	struct groups g = {0};
	for (int i = 0; i < n; i++)
		for (int j = 0; j < p[i]->n; j++)
			join_kernel(&g, &p[i]->k[j]);
	/* per group root: its first node's label and times per pipeline */
	double *ms = calloc((size_t)g.n * n + 1, sizeof(*ms));
	int *kernels = calloc((size_t)g.n * n + 1, sizeof(*kernels));
	if (!ms || !kernels)
		abort();
	for (int i = 0; i < n; i++)
		for (int j = 0; j < p[i]->n; j++) {
			int r = kernel_root(&g, &p[i]->k[j]);
			ms[r * n + i] += p[i]->k[j].median;
			kernels[r * n + i]++;
		}
	pb_buf_printf(b, "pb-prof: %d pipelines side by side: median us per "
		      "run of each group of kernels (the kernels computing the "
		      "same ONNX nodes), ratio to %s\n", n, names[0]);
	pb_buf_printf(b, "%-24s", "nodes");
	for (int i = 0; i < n; i++)
		pb_buf_printf(b, " %14.14s %3s", names[i], "k");
	for (int i = 1; i < n; i++)
		pb_buf_printf(b, " %8.8s", names[i]);
	pb_buf_puts(b, "\n");
	for (int r = 0; r < g.n; r++) {
		if (root_of(&g, r) != r)
			continue;
		char label[32];
		int more = 0;
		for (int x = r + 1; x < g.n; x++)
			more += root_of(&g, x) == r;
		if (more)
			snprintf(label, sizeof(label), "%.16s +%d", g.name[r], more);
		else
			snprintf(label, sizeof(label), "%.24s", g.name[r]);
		pb_buf_printf(b, "%-24s", label);
		for (int i = 0; i < n; i++)
			pb_buf_printf(b, " %14.2f %3d", ms[r * n + i] * 1e3,
				      kernels[r * n + i]);
		for (int i = 1; i < n; i++)
			pb_buf_printf(b, " %7.2fx", ms[r * n] > 0
				      ? ms[r * n + i] / ms[r * n] : 0.0);
		pb_buf_puts(b, "\n");
	}
	pb_buf_printf(b, "%-24s", "total (per run)");
	for (int i = 0; i < n; i++)
		pb_buf_printf(b, " %14.2f %3d", p[i]->total_median * 1e3,
			      p[i]->n);
	for (int i = 1; i < n; i++)
		pb_buf_printf(b, " %7.2fx", p[0]->total_median > 0
			      ? p[i]->total_median / p[0]->total_median : 0.0);
	pb_buf_puts(b, "\n");
	free(ms);
	free(kernels);
	free(g.name);
	free(g.parent);
}

/* A JSON array of the 3 sizes "v". */
static json_t *dims3(const int64_t *v)
{
	json_t *a = json_array();
	for (int i = 0; i < 3; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

/* The JSON object of kernel "k" (index "i") of profile "p". */
static json_t *kernel_json(const struct pb_prof *p,
			   const struct pb_prof_kernel *k, int i)
{
	json_t *o = json_object(), *nodes = json_array(), *t = json_array();
	double s = secs(k->median);
	for (int j = 0; j < k->nnodes; j++)
		json_array_append_new(nodes, json_string(k->nodes[j]));
	for (int r = 0; r < p->repeat; r++)
		json_array_append_new(t, json_real(k->ms[r]));
	json_object_set_new(o, "index", json_integer(i));
	json_object_set_new(o, "kernel", json_string(k->name));
	json_object_set_new(o, "origin", json_string(k->origin));
	json_object_set_new(o, "nodes", nodes);
	if (p->gpu) {
		json_object_set_new(o, "grid", dims3(k->grid));
		json_object_set_new(o, "block", dims3(k->block));
	}
	json_object_set_new(o, "median_ms", json_real(k->median));
	json_object_set_new(o, "min_ms", json_real(k->min));
	json_object_set_new(o, "share", json_real(p->sum_median > 0
						 ? k->median / p->sum_median : 0));
	json_object_set_new(o, "bytes", json_integer(k->bytes));
	json_object_set_new(o, "flops", k->flops >= 0 ? json_real(k->flops)
						     : json_null());
	if (k->nnests) {
		json_t *nests = json_array();
		for (int j = 0; j < k->nnests; j++)
			json_array_append_new(nests, json_real(k->nests[j]));
		json_object_set_new(o, "nest_flops", nests);
	}
	json_object_set_new(o, "gbps", s > 0 ? json_real(k->bytes / s / 1e9)
					     : json_null());
	json_object_set_new(o, "gflops", s > 0 && k->flops >= 0
				 ? json_real(k->flops / s / 1e9) : json_null());
	json_object_set_new(o, "times_ms", t);
	return o;
}

/* Write "root" (taken) as JSON to "path" atomically. */
static int write_json(struct pb_ctx *ctx, json_t *root, const char *path)
{
	int rc = pb_write_json(root, path,
			       JSON_INDENT(1) | JSON_REAL_PRECISION(9));
	json_decref(root);
	if (rc < 0) {
		pb_error_in(ctx, path, "cannot write: %s", strerror(errno));
		return PB_ERR;
	}
	return PB_OK;
}

int pb_prof_write_json(struct pb_ctx *ctx, const struct pb_prof *p,
		       const char *path)
{
	json_t *root = json_object(), *ks = json_array();
	json_object_set_new(root, "tool", json_string("pb-prof"));
	json_object_set_new(root, "version", json_string(PB_VERSION));
	json_object_set_new(root, "device", json_string(p->device));
	json_object_set_new(root, "target", json_string(p->gpu ? "gpu" : "cpu"));
	json_object_set_new(root, "warmup", json_integer(p->warmup));
	json_object_set_new(root, "repeat", json_integer(p->repeat));
	json_object_set_new(root, "total_median_ms", json_real(p->total_median));
	json_object_set_new(root, "total_min_ms", json_real(p->total_min));
	if (p->has_memory) {
		const struct pb_plan_memory *m = &p->memory;
		json_t *mo = json_object();
		json_object_set_new(mo, "peak", json_integer(m->peak));
		json_object_set_new(mo, "arena", m->arena >= 0
							 ? json_integer(m->arena)
							 : json_null());
		json_object_set_new(mo, "intermediates",
				    json_integer(m->intermediates));
		json_object_set_new(mo, "live_max", json_integer(m->live_max));
		json_object_set_new(mo, "inputs", json_integer(m->inputs));
		json_object_set_new(mo, "outputs", json_integer(m->outputs));
		json_object_set_new(mo, "params", json_integer(m->params));
		json_object_set_new(root, "memory", mo);
	}
	for (int i = 0; i < p->n; i++)
		json_array_append_new(ks, kernel_json(p, &p->k[i], i));
	json_object_set_new(root, "kernels", ks);
	return write_json(ctx, root, path);
}

int pb_prof_write_trace(struct pb_ctx *ctx, const struct pb_prof *p,
			const char *path)
{
	json_t *root = json_object(), *ev = json_array();
	json_t *meta = json_object(), *margs = json_object();
	json_object_set_new(meta, "name", json_string("process_name"));
	json_object_set_new(meta, "ph", json_string("M"));
	json_object_set_new(meta, "pid", json_integer(1));
	json_object_set_new(meta, "tid", json_integer(1));
	json_object_set_new(margs, "name", json_string(p->device));
	json_object_set_new(meta, "args", margs);
	json_array_append_new(ev, meta);
	for (int r = 0; r < p->repeat; r++)
		for (int i = 0; i < p->n; i++) {
			const struct pb_prof_kernel *k = &p->k[i];
			json_t *e = json_object(), *args = json_object();
			json_t *nodes = json_array();
			for (int j = 0; j < k->nnodes; j++)
				json_array_append_new(nodes,
						      json_string(k->nodes[j]));
			json_object_set_new(args, "nodes", nodes);
			json_object_set_new(args, "origin", json_string(k->origin));
			json_object_set_new(args, "run", json_integer(r));
			json_object_set_new(e, "name", json_string(k->name));
			json_object_set_new(e, "cat", json_string(p->gpu ? "gpu"
									 : "cpu"));
			json_object_set_new(e, "ph", json_string("X"));
			json_object_set_new(e, "ts", json_real(k->start[r] * 1e3));
			json_object_set_new(e, "dur", json_real(k->ms[r] * 1e3));
			json_object_set_new(e, "pid", json_integer(1));
			json_object_set_new(e, "tid", json_integer(1));
			json_object_set_new(e, "args", args);
			json_array_append_new(ev, e);
		}
	json_object_set_new(root, "traceEvents", ev);
	json_object_set_new(root, "displayTimeUnit", json_string("ms"));
	return write_json(ctx, root, path);
}

int pb_prof_report(struct pb_ctx *ctx, struct pb_prof *p,
		   const struct pb_prof_opts *o, struct pb_buf *report)
{
	int rc = PB_OK;
	if (o->costs && pb_prof_read_costs(ctx, p, o->costs) != PB_OK)
		return PB_ERR;
	pb_prof_table(p, report);
	if (o->json && pb_prof_write_json(ctx, p, o->json) != PB_OK)
		rc = PB_ERR;
	if (o->trace && pb_prof_write_trace(ctx, p, o->trace) != PB_OK)
		rc = PB_ERR;
	if (o->roofline) {
		const struct pb_target *t = pb_target_of(ctx);
		if (!t || pb_prof_roofline(ctx, p, t, "measured (pb-prof)",
					   o->roofline) != PB_OK)
			rc = PB_ERR;
	}
	return rc;
}

int pb_prof_ptx_run(struct pb_ctx *ctx, const char *ptx, size_t len,
		    const char *path, const struct pb_prof_opts *o,
		    const struct pb_prof_costs *costs, struct pb_buf *report,
		    struct pb_prof **out)
{
	struct pb_runtime_ptx r;
	struct pb_runtime_gpu *g = NULL;
	struct pb_prof *p = NULL;
	int rc = pb_runtime_ptx_bind(ctx, ptx, len, path, &o->run, &r);
	if (rc == PB_OK && !(g = pb_runtime_gpu_load(ctx, r.plan, ptx, len)))
		rc = PB_ERR;
	/* the checked run: once, outputs zeroed as in pb-run */
	if (rc == PB_OK)
		rc = pb_runtime_gpu_upload(ctx, g, &r.sig, r.vals);
	for (int i = 0; rc == PB_OK && i < r.plan->nlaunches; i++) {
		rc = pb_runtime_gpu_launch(ctx, g, i);
		if (rc == PB_OK)
			rc = pb_runtime_gpu_sync(ctx, g, i);
	}
	if (rc == PB_OK)
		rc = pb_runtime_gpu_download(ctx, g, &r.sig, r.vals);
	if (rc == PB_OK)
		rc = pb_runtime_finish(ctx, &r.sig, &o->run, r.vals, report);
	if (rc == PB_OK)
		rc = pb_prof_gpu(ctx, g, r.plan, (int)o->warmup, (int)o->repeat,
				 &p);
	for (int i = 0; rc == PB_OK && costs && i < costs->n; i++)
		pb_prof_set_cost(p, &costs->c[i]);
	pb_runtime_gpu_free(g);
	pb_runtime_ptx_clear(&r);
	if (rc != PB_OK)
		pb_prof_free(p);
	*out = rc == PB_OK ? p : NULL;
	return rc;
}

int pb_prof_ptx_main(struct pb_ctx *ctx, const char *ptx, size_t len,
		     const char *path, const struct pb_prof_opts *o,
		     const struct pb_prof_costs *costs, struct pb_buf *report)
{
	struct pb_prof *p;
	int rc = pb_prof_ptx_run(ctx, ptx, len, path, o, costs, report, &p);
	if (rc == PB_OK)
		rc = pb_prof_report(ctx, p, o, report);
	pb_prof_free(p);
	return rc;
}

#ifdef PB_NO_MLIR
/* pb-prof-lite: profile the PTX input "in" on the GPU with options "o";
 * the table (and check lines) go to "report". */
int pb_prof_main(struct pb_ctx *ctx, const struct pb_input *in,
		 const struct pb_prof_opts *o, struct pb_buf *report)
{
	if (pb_prof_check_opts(ctx, o) != PB_OK ||
	    pb_runtime_lite_input(ctx, in, o->run.device, "pb-prof",
				  "profiles"))
		return PB_ERR;
	return pb_prof_ptx_main(ctx, in->data, in->len, in->path, o, NULL,
				report);
}
#endif

void pb_prof_dim3(char *out, size_t n, const int64_t *v)
{
	snprintf(out, n, "%lldx%lldx%lld", (long long)v[0], (long long)v[1],
		 (long long)v[2]);
}
