/* Identical kernels compiled once. A model's repeated blocks (ResNet's
 * bottlenecks, ConvNeXt's and Swin's stages) give kernels that differ
 * only in their names and provenance: the NVVM lowering and LLVM's NVPTX
 * back end, most of pb-codegen's time, run on one of each, and the PTX of
 * the others is the representative's with its symbols renamed, written in
 * the order and with the numbering the whole module's PTX has (each
 * kernel's text depends only on its own body, its labels $L__BB<F>_<n>
 * and local depot on its place F among the module's functions):
 *
 *   gpu.module: k0 k1 k2 k3 (k2 == k0)  ->  compile k0 k1 k3  ->
 *   PTX: header, demoted shared arrays of k0 k1 [k2 from k0] k3,
 *        entries k0 k1 [k2 = k0 renamed, labels $L__BB2_] k3
 *
 * Any PTX not in the form expected is reported to the caller, which then
 * compiles every kernel. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"

#include "codegen/internal.h"

struct pb_codegen_dedup {
	int n;	    /* kernels of the gpu.module, in order */
	char **name; /* their symbol names */
	int *rep;   /* the first kernel with the same body (itself if none) */
	int nrep;   /* kernels compiled */
};

/* FNV-1a of the "len" bytes at "s". */
static uint64_t hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* Is "op" a kernel gpu.func? */
static int is_kernel(MlirOperation op)
{
	return pb_ir_op_is(op, "gpu.func") &&
	       !mlirAttributeIsNull(pb_ir_attr(op, "gpu.kernel"));
}

/* The text of kernel "op" with what does not reach its code taken out:
 * its name and pb's provenance attributes (pb.nodes, pb.origin), printed
 * without locations into "out". */
static void body_key(MlirOperation op, struct pb_buf *out)
{
	MlirOperation c = mlirOperationClone(op);
	MlirContext mctx = mlirOperationGetContext(op);
	pb_ir_set_attr(c, "sym_name", mlirStringAttrGet(mctx, pb_str("k")));
	for (intptr_t i = mlirOperationGetNumAttributes(c) - 1; i >= 0; i--) {
		MlirStringRef s = mlirIdentifierStr(
			mlirOperationGetAttribute(c, i).name);
		if (s.length > 3 && !strncmp(s.data, "pb.", 3)) {
			char name[128];
			snprintf(name, sizeof(name), "%.*s", (int)s.length, s.data);
			mlirOperationRemoveAttributeByName(c, pb_str(name));
		}
	}
	mlirOperationPrint(c, pb_buf_mlir_callback, out);
	mlirOperationDestroy(c);
}

struct pb_codegen_dedup *pb_codegen_dedup_find(MlirOperation mod)
{
	struct pb_codegen_dedup *d = calloc(1, sizeof(*d));
	MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(mod, 0));
	int cap = 0;
	struct pb_buf *keys = NULL;
	uint64_t *h = NULL;
	for (MlirOperation op = mlirBlockGetFirstOperation(body);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		if (!is_kernel(op))
			continue;
		if (d->n == cap) {
			cap = cap ? 2 * cap : 16;
			d->name = pb_xrealloc(d->name, cap, sizeof(*d->name));
			d->rep = pb_xrealloc(d->rep, cap, sizeof(*d->rep));
			keys = pb_xrealloc(keys, cap, sizeof(*keys));
			h = pb_xrealloc(h, cap, sizeof(*h));
		}
		MlirStringRef s = pb_ir_str_attr(op, "sym_name");
		d->name[d->n] = strndup(s.data, s.length);
		keys[d->n] = (struct pb_buf){0};
		body_key(op, &keys[d->n]);
		h[d->n] = hash(keys[d->n].data, keys[d->n].len);
		d->n++;
	}
	/* a chained hash table over the representatives */
	size_t nb = 1;
	while (nb < 2 * (size_t)d->n)
		nb *= 2;
	int *head = pb_xrealloc(NULL, nb, sizeof(*head));
	int *next = pb_xrealloc(NULL, d->n, sizeof(*next));
	for (size_t b = 0; b < nb; b++)
		head[b] = -1;
	for (int i = 0; i < d->n; i++) {
		int b = h[i] & (nb - 1), r = head[b];
		while (r >= 0 && (h[r] != h[i] || keys[r].len != keys[i].len ||
				  memcmp(keys[r].data, keys[i].data, keys[i].len)))
			r = next[r];
		d->rep[i] = r >= 0 ? r : i;
		if (r < 0) {
			next[i] = head[b];
			head[b] = i;
			d->nrep++;
		}
	}
	for (int i = 0; i < d->n; i++)
		pb_buf_free(&keys[i]);
	free(keys);
	free(h);
	free(head);
	free(next);
	return d;
}

int pb_codegen_dedup_count(const struct pb_codegen_dedup *d)
{
	return d->n - d->nrep;
}

void pb_codegen_dedup_erase(const struct pb_codegen_dedup *d,
			    MlirOperation mod)
{
	MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(mod, 0));
	MlirOperation op = mlirBlockGetFirstOperation(body), next;
	for (int i = 0; !mlirOperationIsNull(op); op = next) {
		next = mlirOperationGetNextInBlock(op);
		if (!is_kernel(op))
			continue;
		if (d->rep[i] != i)
			mlirOperationDestroy(op);
		i++;
	}
}

void pb_codegen_dedup_free(struct pb_codegen_dedup *d)
{
	if (!d)
		return;
	for (int i = 0; i < d->n; i++)
		free(d->name[i]);
	free(d->name);
	free(d->rep);
	free(d);
}

/* A span of the representatives' PTX. */
struct span {
	const char *p;
	size_t len;
};

/* The PTX of the representatives, cut up: "pre", the lines before the
 * first entry with those of the demoted shared arrays ("// __wg_<kernel>_..
 * has been demoted") of representative r at [first[r], last[r]] (-1: none),
 * "entry"[r] from ".visible .entry" to its closing "}" line, "post" after
 * the last. */
struct cut {
	int nline;
	struct span *line;
	int *first, *last;
	struct span *entry;
	struct span post;
};

static int is_ident(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '$';
}

/* Does the span at "p" (to "end") start with the string "s"? */
static int starts(const char *p, const char *end, const char *s)
{
	size_t n = strlen(s);
	return (size_t)(end - p) >= n && !memcmp(p, s, n);
}

/* Is the identifier at "p" (to "end") exactly "s" ("tail" NULL), or
 * does it start with "s" followed by "tail"? */
static int ident_is(const char *p, const char *end, const char *s,
		    const char *tail)
{
	size_t n = strlen(s);
	if ((size_t)(end - p) < n || memcmp(p, s, n))
		return 0;
	if (!tail)
		return p + n == end || !is_ident(p[n]);
	return starts(p + n, end, tail);
}

/* The number after "$L__BB" (or "__local_depot") at "p", its length in
 * "*len"; -1 when none. */
static long number_at(const char *p, const char *end, int *len)
{
	long v = 0;
	int k = 0;
	while (p + k < end && p[k] >= '0' && p[k] <= '9' && k < 9)
		v = 10 * v + (p[k++] - '0');
	*len = k;
	return k ? v : -1;
}

/* Append "n" bytes of representative "r"'s PTX at "p" to "out" as kernel
 * "i"'s: the identifiers naming r (its entry, parameters and shared
 * arrays) name i, its labels and local depot carry i's function number
 * instead of r's ("fr"). Returns -1 when a label's number is not "fr"
 * (the PTX is not in the form expected). */
static int rename_into(const struct pb_codegen_dedup *d, int r, long fr,
		       int i, const char *p, size_t n, struct pb_buf *out)
{
	const char *start = p, *end = p + n, *from = p;
	const char *rn = d->name[r], *in = d->name[i];
	size_t rl = strlen(rn);
	while (p < end) {
		if (!is_ident(*p) || (p > start && (is_ident(p[-1]) ||
						     p[-1] == '%' || p[-1] == '.'))) {
			p++;
			continue;
		}
		const char *id = p;
		while (p < end && is_ident(*p))
			p++;
		const char *num = NULL;
		if (starts(id, p, "$L__BB"))
			num = id + 6;
		else if (starts(id, p, "__local_depot"))
			num = id + 13;
		if (num) {
			int len;
			if (number_at(num, p, &len) != fr)
				return -1;
			pb_buf_append(out, from, num - from);
			pb_buf_printf(out, "%d", i);
			from = num + len;
			continue;
		}
		const char *at = NULL;
		if (ident_is(id, p, rn, NULL) || ident_is(id, p, rn, "_param_"))
			at = id;
		else if (starts(id, p, "__wg_") && ident_is(id + 5, p, rn, "_"))
			at = id + 5;
		if (at) {
			pb_buf_append(out, from, at - from);
			pb_buf_puts(out, in);
			from = at + rl;
		}
	}
	pb_buf_append(out, from, end - from);
	return 0;
}

/* The representative whose demoted shared array line "l" names, searched
 * from representative "from" on (they come in module order); -1 if
 * "l" is no such line, -2 if it names no representative. */
static int demoted_of(const struct pb_codegen_dedup *d, struct span l,
		      int from)
{
	const char *end = l.p + l.len;
	if (!starts(l.p, end, "// __wg_") || l.len < 20 ||
	    memcmp(end - 18, " has been demoted\n", 18))
		return -1;
	for (int r = from; r < d->n; r++)
		if (d->rep[r] == r && ident_is(l.p + 8, end, d->name[r], "_"))
			return r;
	return -2;
}

static void cut_free(struct cut *c)
{
	free(c->line);
	free(c->first);
	free(c->last);
	free(c->entry);
}

/* Cut "ptx" (the representatives' PTX) into "c"; -1 when it is not the
 * header, demoted lines and entries of the representatives in order,
 * separated by their ".globl" comments. */
static int cut_ptx(const struct pb_codegen_dedup *d, const char *ptx,
		   size_t len, struct cut *c)
{
	const char *p = ptx, *end = ptx + len;
	int cap = 0, r = 0;
	c->first = malloc(d->n * sizeof(int));
	c->last = malloc(d->n * sizeof(int));
	c->entry = calloc(d->n, sizeof(struct span));
	for (int i = 0; i < d->n; i++)
		c->first[i] = c->last[i] = -1;
	/* the lines before the first entry */
	while (p < end && !starts(p, end, ".visible .entry ")) {
		const char *e = memchr(p, '\n', end - p);
		e = e ? e + 1 : end;
		if (c->nline == cap) {
			cap = cap ? 2 * cap : 64;
			c->line = pb_xrealloc(c->line, cap, sizeof(*c->line));
		}
		struct span l = {p, e - p};
		int k = demoted_of(d, l, r);
		if (k == -2 || (k >= 0 && c->first[k] >= 0 &&
				c->last[k] != c->nline - 1))
			return -1;
		if (k >= 0) {
			if (c->first[k] < 0)
				c->first[k] = c->nline;
			c->last[k] = c->nline;
			r = k;
		}
		c->line[c->nline++] = l;
		p = e;
	}
	/* the entries, each after the ".globl" comment of the one before */
	for (r = 0; r < d->n; r++) {
		if (d->rep[r] != r)
			continue;
		char sep[600];
		snprintf(sep, sizeof(sep), "\t// .globl\t%s\n", d->name[r]);
		if (r > 0) {
			if (!starts(p, end, sep))
				return -1;
			p += strlen(sep);
		}
		snprintf(sep, sizeof(sep), ".visible .entry %s(", d->name[r]);
		if (!starts(p, end, sep))
			return -1;
		const char *e = p;
		while (e < end && !starts(e, end, "\n}\n"))
			e++;
		if (e == end)
			return -1;
		e += 3;
		c->entry[r] = (struct span){p, e - p};
		p = e;
	}
	c->post = (struct span){p, end - p};
	for (const char *q = p; q < end; q++)
		if (*q == '{' || *q == '$')
			return -1;
	return 0;
}

int pb_codegen_dedup_expand(const struct pb_codegen_dedup *d, const char *ptx,
			    size_t len, struct pb_buf *out)
{
	struct cut c = {0};
	int rc = cut_ptx(d, ptx, len, &c);
	long *f = malloc(d->n * sizeof(*f));
	int *head = NULL, *tail = NULL, *next = malloc(d->n * sizeof(int));
	if (rc == 0) {
		head = malloc((c.nline ? c.nline : 1) * sizeof(int));
		tail = malloc((c.nline ? c.nline : 1) * sizeof(int));
		for (int x = 0; x < c.nline; x++)
			head[x] = tail[x] = -1;
	}
	/* each representative's function number in "ptx"; each copy's
	   demoted lines go after those of the nearest kernel before it that
	   has some */
	for (int i = 0, nr = 0, anchor = -1; rc == 0 && i < d->n; i++) {
		int r = d->rep[i];
		next[i] = -1;
		if (r == i) {
			f[i] = nr++;
			if (c.first[i] >= 0)
				anchor = c.last[i];
		} else if (c.first[r] >= 0) {
			if (tail[anchor] >= 0)
				next[tail[anchor]] = i;
			else
				head[anchor] = i;
			tail[anchor] = i;
		}
	}
	struct pb_buf o = {0};
	for (int x = 0; rc == 0 && x < c.nline; x++) {
		pb_buf_append(&o, c.line[x].p, c.line[x].len);
		for (int i = head[x]; rc == 0 && i >= 0; i = next[i]) {
			int r = d->rep[i];
			for (int y = c.first[r]; rc == 0 && y <= c.last[r]; y++)
				rc = rename_into(d, r, f[r], i, c.line[y].p,
						 c.line[y].len, &o);
		}
	}
	for (int i = 0; rc == 0 && i < d->n; i++) {
		int r = d->rep[i];
		if (i > 0)
			pb_buf_printf(&o, "\t// .globl\t%s\n", d->name[i]);
		rc = rename_into(d, r, f[r], i, c.entry[r].p, c.entry[r].len,
				 &o);
	}
	if (rc == 0) {
		pb_buf_append(&o, c.post.p, c.post.len);
		pb_buf_append(out, o.data, o.len);
	}
	pb_buf_free(&o);
	free(f);
	free(head);
	free(tail);
	free(next);
	cut_free(&c);
	return rc;
}
