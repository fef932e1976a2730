/* Identical kernels compiled once, and kernels compiled apart. A model's
 * repeated blocks (ResNet's bottlenecks, ConvNeXt's and Swin's stages)
 * give kernels that differ only in their names and provenance: the NVVM
 * lowering and LLVM's NVPTX back end, most of pb-codegen's time, run on
 * one of each (its representative), and the PTX of the others is the
 * representative's with its symbols renamed. The representatives are
 * compiled in one module or in several (each on a thread of its own,
 * ptx.c); the PTX of every kernel is then written in the order and with
 * the numbering the whole module's PTX has. Each kernel's text depends
 * only on its own body, its labels $L__BB<F>_<n> and local depot on its
 * place F among the module's functions, and the lines before the first
 * entry list the device globals and each kernel's demoted shared arrays
 * in the gpu.module's order:
 *
 *   gpu.module: g k0 k1 k2 k3 (k2 == k0)  ->  compile {k0 k1} {k3}  ->
 *   PTX: header, .globl k0, g, demoted shared arrays of k0 k1
 *        [k2 from k0] k3, entries k0 k1 [k2 = k0 renamed, labels
 *        $L__BB2_] k3 [labels $L__BB0_ -> $L__BB3_]
 *
 * Any PTX not in the form expected is reported to the caller, which then
 * compiles the whole gpu.module as it is. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "codegen/internal.h"

#define MAXR 16 /* the largest rank same_addresses compares */

struct pb_codegen_dedup {
	int n;	     /* kernels of the gpu.module, in order */
	char **name; /* their symbol names */
	MlirOperation *op; /* the kernels */
	int *rep;    /* the first kernel of its group (itself if none) */
	int *item;   /* each kernel's place among the items */
	int nrep;    /* kernels compiled */
	int *reps;   /* their indices, in order */
	int32_t (*grid)[3]; /* per representative: the largest grid of its
			       group, where it is larger than its own */
	int *regrid; /* per representative: has it such a grid? */
	int nitem;   /* the kernels and globals of the gpu.module, in order */
	int *kernel; /* per item: its kernel, or -1 for a global */
	char **global; /* per item: the global's name, or NULL */
	int other;   /* operations that are neither */
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

/* Is "op" a device global (memref.global, or llvm.mlir.global)? */
static int is_global(MlirOperation op)
{
	return pb_ir_op_is(op, "memref.global") ||
	       pb_ir_op_is(op, "llvm.mlir.global");
}

/* The text of kernel "op" with what does not reach its code taken out:
 * its name and pb's provenance attributes (pb.nodes, pb.origin), printed
 * without locations in the local scope (by "flags") into "out". The
 * kernel itself is changed only while it is printed: a clone of each
 * kernel cost as much as printing it. */
static void body_key(MlirOperation op, MlirOpPrintingFlags flags,
		     struct pb_buf *out)
{
	MlirContext mctx = mlirOperationGetContext(op);
	MlirAttribute name = pb_ir_attr(op, "sym_name");
	intptr_t n = mlirOperationGetNumAttributes(op), np = 0;
	MlirNamedAttribute *pb = pb_xrealloc(NULL, n ? n : 1, sizeof(*pb));
	for (intptr_t i = 0; i < n; i++) {
		MlirNamedAttribute a = mlirOperationGetAttribute(op, i);
		MlirStringRef s = mlirIdentifierStr(a.name);
		if (s.length > 3 && !strncmp(s.data, "pb.", 3))
			pb[np++] = a;
	}
	for (intptr_t i = 0; i < np; i++)
		mlirOperationRemoveAttributeByName(op,
						   mlirIdentifierStr(pb[i].name));
	pb_ir_set_attr(op, "sym_name", mlirStringAttrGet(mctx, pb_str("k")));
	mlirOperationPrintWithFlags(op, flags, pb_buf_mlir_callback, out);
	pb_ir_set_attr(op, "sym_name", name);
	for (intptr_t i = 0; i < np; i++)
		mlirOperationSetAttributeByName(op, mlirIdentifierStr(pb[i].name),
						pb[i].attribute);
	free(pb);
}

/* Does the span at "p" (to "end") start with the string "s"? */
static int starts(const char *p, const char *end, const char *s)
{
	size_t n = strlen(s);
	return (size_t)(end - p) >= n && !memcmp(p, s, n);
}

/* Into "out" the text "key" with the sizes of every memref type and the
 * kernel's known_grid_size replaced by "#": memref<1x96x56x56xf32,
 * strided<[802816, 3136, 56, 1]>> -> memref<#x#x#x#xf32, strided<[802816,
 * 3136, 56, 1]>> (layouts, vector shapes and everything else stay). */
static void relax(const struct pb_buf *key, struct pb_buf *out)
{
	static const char mr[] = "memref<", grid[] = "known_grid_size = ";
	const char *p = key->data, *end = p + key->len, *from = p;
	while (p < end) {
		if (starts(p, end, mr)) {
			p += strlen(mr);
			pb_buf_append(out, from, p - from);
			/* the sizes: digits (or ?) each followed by "x" */
			for (;;) {
				const char *q = p;
				while (q < end && ((*q >= '0' && *q <= '9') ||
						   *q == '?'))
					q++;
				if (q == p || q == end || *q != 'x')
					break;
				pb_buf_puts(out, "#x");
				p = q + 1;
			}
			from = p;
		} else if (starts(p, end, grid)) {
			p += strlen(grid);
			pb_buf_append(out, from, p - from);
			pb_buf_puts(out, "#");
			while (p < end && *p != '>')
				p++;
			from = p < end ? p + 1 : p;
			p = from;
		} else {
			p++;
		}
	}
	pb_buf_append(out, from, end - from);
}

/* Operations that take a memref operand only to address its elements,
 * by its strides (their results do not depend on its sizes), and views
 * whose result's layout is checked as the operand's. */
static const char *const addressing[] = {
	"memref.load", "memref.store", "vector.load", "vector.store",
	"vector.maskedload", "vector.maskedstore",
	"nvgpu.device_async_copy", "nvgpu.ldmatrix",
	"gpu.subgroup_mma_load_matrix", "gpu.subgroup_mma_store_matrix",
	NULL};
static const char *const views[] = {
	"memref.collapse_shape", "memref.expand_shape", "memref.subview",
	"memref.cast", NULL};

static int op_in(MlirOperation op, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (pb_ir_op_is(op, names[i]))
			return 1;
	return 0;
}

/* Is "op" a vector transfer whose every dimension is in bounds (so that
 * no mask is computed from its memref's sizes)? */
static int transfer_in_bounds(MlirOperation op)
{
	if (!pb_ir_op_is(op, "vector.transfer_read") &&
	    !pb_ir_op_is(op, "vector.transfer_write"))
		return 0;
	MlirAttribute a = pb_ir_attr(op, "in_bounds");
	if (mlirAttributeIsNull(a) || !mlirAttributeIsAArray(a))
		return 0;
	for (intptr_t i = 0; i < mlirArrayAttrGetNumElements(a); i++) {
		MlirAttribute b = mlirArrayAttrGetElement(a, i);
		if (!mlirAttributeIsABool(b) || !mlirBoolAttrGetValue(b))
			return 0;
	}
	return 1;
}

/* Do memref types "a" and "b" (of the same text but for their sizes)
 * give every element that exists in both the same address: the same
 * element type, memory space and layout offset, and the same stride
 * along every dimension that has more than one element in either (along
 * the others the only index is 0)? */
static int same_addresses(MlirType a, MlirType b)
{
	int64_t sa[MAXR], sb[MAXR], oa, ob;
	if (!mlirTypeIsAMemRef(a) || !mlirTypeIsAMemRef(b))
		return 0;
	intptr_t r = mlirShapedTypeGetRank(a);
	if (r != mlirShapedTypeGetRank(b) || r > MAXR ||
	    !mlirShapedTypeHasStaticShape(a) ||
	    !mlirShapedTypeHasStaticShape(b) ||
	    !mlirTypeEqual(mlirShapedTypeGetElementType(a),
			   mlirShapedTypeGetElementType(b)) ||
	    !mlirAttributeEqual(mlirMemRefTypeGetMemorySpace(a),
				mlirMemRefTypeGetMemorySpace(b)) ||
	    mlirLogicalResultIsFailure(
		    mlirMemRefTypeGetStridesAndOffset(a, sa, &oa)) ||
	    mlirLogicalResultIsFailure(
		    mlirMemRefTypeGetStridesAndOffset(b, sb, &ob)) ||
	    oa != ob || mlirShapedTypeIsDynamicStrideOrOffset(oa))
		return 0;
	for (intptr_t d = 0; d < r; d++)
		if ((mlirShapedTypeGetDimSize(a, d) > 1 ||
		     mlirShapedTypeGetDimSize(b, d) > 1) &&
		    (sa[d] != sb[d] || mlirShapedTypeIsDynamicStrideOrOffset(sa[d])))
			return 0;
	return 1;
}

/* Does operation "op" read the grid's size (which the kernels of a group
 * do not share)? */
static int reads_grid(MlirOperation op)
{
	MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
	char name[128];
	snprintf(name, sizeof(name), "%.*s", (int)s.length, s.data);
	return strstr(name, "grid_dim") || strstr(name, "cluster") ||
	       strstr(name, "nctaid");
}

static int same_ops(MlirOperation a, MlirOperation b, int *grid);

/* Do the blocks of regions "a" and "b" (kernels of the same text but for
 * memref sizes) compute the same, their arguments' types equal but for
 * the first "nargs" of the first block (a kernel's arguments), which
 * may differ as same_addresses allows? Sets "*grid" if they read the
 * grid's size. */
static int same_regions(MlirRegion a, MlirRegion b, int nargs, int *grid)
{
	MlirBlock x = mlirRegionGetFirstBlock(a), y = mlirRegionGetFirstBlock(b);
	for (; !mlirBlockIsNull(x) && !mlirBlockIsNull(y);
	     x = mlirBlockGetNextInRegion(x), y = mlirBlockGetNextInRegion(y)) {
		intptr_t n = mlirBlockGetNumArguments(x);
		if (n != mlirBlockGetNumArguments(y))
			return 0;
		for (intptr_t i = 0; i < n; i++) {
			MlirType s = mlirValueGetType(mlirBlockGetArgument(x, i));
			MlirType t = mlirValueGetType(mlirBlockGetArgument(y, i));
			if (!mlirTypeEqual(s, t) &&
			    (i >= nargs || !same_addresses(s, t)))
				return 0;
		}
		nargs = 0;
		MlirOperation o = mlirBlockGetFirstOperation(x);
		MlirOperation p = mlirBlockGetFirstOperation(y);
		for (; !mlirOperationIsNull(o) && !mlirOperationIsNull(p);
		     o = mlirOperationGetNextInBlock(o),
		     p = mlirOperationGetNextInBlock(p))
			if (!same_ops(o, p, grid))
				return 0;
		if (!mlirOperationIsNull(o) || !mlirOperationIsNull(p))
			return 0;
	}
	return mlirBlockIsNull(x) && mlirBlockIsNull(y);
}

/* Do operations "a" and "b" (of the same text but for memref sizes)
 * compute the same: where an operand's type differs, "a" addresses it
 * (or is an in-bounds vector transfer, or a view), and where a result's
 * type differs, "a" is a view and the two types give the same addresses
 * (same_addresses). Sets "*grid" if they read the grid's size. */
static int same_ops(MlirOperation a, MlirOperation b, int *grid)
{
	intptr_t no = mlirOperationGetNumOperands(a);
	intptr_t nr = mlirOperationGetNumResults(a);
	intptr_t ng = mlirOperationGetNumRegions(a);
	if (!mlirIdentifierEqual(mlirOperationGetName(a),
				 mlirOperationGetName(b)) ||
	    no != mlirOperationGetNumOperands(b) ||
	    nr != mlirOperationGetNumResults(b) ||
	    ng != mlirOperationGetNumRegions(b))
		return 0;
	if (reads_grid(a))
		*grid = 1;
	int view = op_in(a, views);
	for (intptr_t i = 0; i < no; i++)
		if (!mlirTypeEqual(mlirValueGetType(mlirOperationGetOperand(a, i)),
				   mlirValueGetType(mlirOperationGetOperand(b, i))) &&
		    !view && !op_in(a, addressing) && !transfer_in_bounds(a))
			return 0;
	for (intptr_t i = 0; i < nr; i++) {
		MlirType s = mlirValueGetType(mlirOperationGetResult(a, i));
		MlirType t = mlirValueGetType(mlirOperationGetResult(b, i));
		if (!mlirTypeEqual(s, t) && (!view || !same_addresses(s, t)))
			return 0;
	}
	int nargs = pb_ir_op_is(a, "gpu.func") ? pb_ir_func_num_args(a) : 0;
	for (intptr_t r = 0; r < ng; r++)
		if (!same_regions(mlirOperationGetRegion(a, r),
				  mlirOperationGetRegion(b, r), nargs, grid))
			return 0;
	return 1;
}

/* The known_grid_size of kernel "op" into "g"; 0 when it has one. */
static int known_grid(MlirOperation op, int32_t g[3])
{
	MlirAttribute a = pb_ir_attr(op, "known_grid_size");
	if (mlirAttributeIsNull(a) || !mlirAttributeIsADenseI32Array(a) ||
	    mlirDenseArrayGetNumElements(a) != 3)
		return -1;
	for (int i = 0; i < 3; i++)
		g[i] = mlirDenseI32ArrayGetElement(a, i);
	return 0;
}

/* Can kernel "b" be compiled as kernel "a" (their texts equal but for
 * memref sizes and grids), "a" with the larger of the two grids: do they
 * compute the same (same_ops), and, if they read the grid's size, have
 * they the same grid? */
static int same_but_sizes(MlirOperation a, MlirOperation b)
{
	int grid = 0;
	int32_t ga[3], gb[3];
	if (!same_ops(a, b, &grid))
		return 0;
	int ha = known_grid(a, ga) == 0, hb = known_grid(b, gb) == 0;
	if (ha != hb)
		return 0;
	return !grid || !ha || !memcmp(ga, gb, sizeof(ga));
}

/* Append item "kernel" (or -1, a global named "global") to "d". */
static void add_item(struct pb_codegen_dedup *d, int *cap, int kernel,
		     MlirStringRef global)
{
	if (d->nitem == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		d->kernel = pb_xrealloc(d->kernel, *cap, sizeof(*d->kernel));
		d->global = pb_xrealloc(d->global, *cap, sizeof(*d->global));
	}
	d->kernel[d->nitem] = kernel;
	d->global[d->nitem] = kernel < 0 ? strndup(global.data, global.length)
					 : NULL;
	d->nitem++;
}

/* A chained hash table over "n" keys "keys" with hashes "h": "head" of
 * "nb" buckets (a power of 2) and "next" per key, empty. */
struct table {
	int *head, *next;
	size_t nb;
};

static void table_init(struct table *t, int n)
{
	t->nb = 1;
	while (t->nb < 2 * (size_t)n)
		t->nb *= 2;
	t->head = pb_xrealloc(NULL, t->nb, sizeof(*t->head));
	t->next = pb_xrealloc(NULL, n ? n : 1, sizeof(*t->next));
	for (size_t b = 0; b < t->nb; b++)
		t->head[b] = -1;
}

static void table_free(struct table *t)
{
	free(t->head);
	free(t->next);
}

/* The next key after "r" (-1: the first) in "t"'s bucket of "h" that
 * equals key "k" of "keys"; -1 when none. */
static int table_next(const struct table *t, const struct pb_buf *keys,
		      const uint64_t *hs, int k, int r)
{
	r = r < 0 ? t->head[hs[k] & (t->nb - 1)] : t->next[r];
	while (r >= 0 && (hs[r] != hs[k] || keys[r].len != keys[k].len ||
			  memcmp(keys[r].data, keys[k].data, keys[k].len)))
		r = t->next[r];
	return r;
}

static void table_add(struct table *t, const uint64_t *hs, int k)
{
	size_t b = hs[k] & (t->nb - 1);
	t->next[k] = t->head[b];
	t->head[b] = k;
}

/* Group the kernels of "d" whose keys "keys" (hashes "h") are the same:
 * each gets the first of its group as representative. Then, if "sizes",
 * the representatives whose keys differ only in memref sizes and grids
 * (relax) and that compute the same (same_but_sizes) are grouped too,
 * each group under its first with the largest grid of the group. */
static void group(struct pb_codegen_dedup *d, const struct pb_buf *keys,
		  const uint64_t *h, int dedup, int sizes)
{
	struct table t;
	table_init(&t, d->n);
	for (int i = 0; i < d->n; i++) {
		int r = dedup ? table_next(&t, keys, h, i, -1) : -1;
		d->rep[i] = r >= 0 ? r : i;
		if (r < 0)
			table_add(&t, h, i);
	}
	table_free(&t);
	if (sizes) {
		struct pb_buf *rk = calloc(d->n ? d->n : 1, sizeof(*rk));
		uint64_t *rh = calloc(d->n ? d->n : 1, sizeof(*rh));
		table_init(&t, d->n);
		for (int i = 0; i < d->n; i++) {
			if (d->rep[i] != i)
				continue;
			relax(&keys[i], &rk[i]);
			rh[i] = hash(rk[i].data, rk[i].len);
			int r = table_next(&t, rk, rh, i, -1);
			while (r >= 0 && !same_but_sizes(d->op[r], d->op[i]))
				r = table_next(&t, rk, rh, i, r);
			if (r < 0) {
				table_add(&t, rh, i);
				continue;
			}
			d->rep[i] = r;
			/* same_but_sizes: both have a grid or neither */
			int32_t gr[3], gi[3];
			if (known_grid(d->op[i], gi) || known_grid(d->op[r], gr))
				continue;
			if (!d->regrid[r])
				memcpy(d->grid[r], gr, sizeof(gr));
			for (int x = 0; x < 3; x++)
				if (gi[x] > d->grid[r][x]) {
					d->grid[r][x] = gi[x];
					d->regrid[r] = 1;
				}
		}
		/* the copies of a kernel now grouped follow its group */
		for (int i = 0; i < d->n; i++)
			d->rep[i] = d->rep[d->rep[i]];
		for (int i = 0; i < d->n; i++)
			pb_buf_free(&rk[i]);
		free(rk);
		free(rh);
		table_free(&t);
	}
	for (int i = 0; i < d->n; i++)
		if (d->rep[i] == i)
			d->reps[d->nrep++] = i;
}

struct pb_codegen_dedup *pb_codegen_dedup_find(MlirOperation mod, int dedup,
					       int sizes)
{
	struct pb_codegen_dedup *d = calloc(1, sizeof(*d));
	MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(mod, 0));
	int cap = 0, icap = 0;
	struct pb_buf *keys = NULL;
	uint64_t *h = NULL;
	MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate();
	mlirOpPrintingFlagsUseLocalScope(flags);
	for (MlirOperation op = mlirBlockGetFirstOperation(body);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		if (is_global(op)) {
			add_item(d, &icap, -1, pb_ir_str_attr(op, "sym_name"));
			continue;
		}
		if (!is_kernel(op)) {
			d->other++;
			continue;
		}
		if (d->n == cap) {
			cap = cap ? 2 * cap : 16;
			d->name = pb_xrealloc(d->name, cap, sizeof(*d->name));
			d->op = pb_xrealloc(d->op, cap, sizeof(*d->op));
			d->item = pb_xrealloc(d->item, cap, sizeof(*d->item));
			keys = pb_xrealloc(keys, cap, sizeof(*keys));
			h = pb_xrealloc(h, cap, sizeof(*h));
		}
		MlirStringRef s = pb_ir_str_attr(op, "sym_name");
		d->name[d->n] = strndup(s.data, s.length);
		d->op[d->n] = op;
		d->item[d->n] = d->nitem;
		add_item(d, &icap, d->n, s);
		keys[d->n] = (struct pb_buf){0};
		if (dedup)
			body_key(op, flags, &keys[d->n]);
		h[d->n] = hash(keys[d->n].data, keys[d->n].len);
		d->n++;
	}
	mlirOpPrintingFlagsDestroy(flags);
	int n = d->n ? d->n : 1;
	d->rep = pb_xrealloc(NULL, n, sizeof(*d->rep));
	d->reps = pb_xrealloc(NULL, n, sizeof(*d->reps));
	d->grid = calloc(n, sizeof(*d->grid));
	d->regrid = calloc(n, sizeof(*d->regrid));
	group(d, keys, h, dedup, dedup && sizes);
	for (int i = 0; i < d->n; i++)
		pb_buf_free(&keys[i]);
	free(keys);
	free(h);
	return d;
}

int pb_codegen_dedup_grid(const struct pb_codegen_dedup *d, int i,
			  int32_t grid[3])
{
	if (!d->regrid[i])
		return 0;
	memcpy(grid, d->grid[i], sizeof(d->grid[i]));
	return 1;
}

int pb_codegen_dedup_nrep(const struct pb_codegen_dedup *d)
{
	return d->other ? -1 : d->nrep;
}

int pb_codegen_dedup_count(const struct pb_codegen_dedup *d)
{
	return d->n;
}

int pb_codegen_dedup_rep(const struct pb_codegen_dedup *d, int k)
{
	return d->reps[k];
}

int pb_codegen_dedup_keep(const struct pb_codegen_dedup *d, int i, int first,
			  int n)
{
	int hi = first + n < d->nrep ? d->reps[first + n] : d->n;
	return d->rep[i] == i && i >= d->reps[first] && i < hi;
}

const char *pb_codegen_dedup_name(const struct pb_codegen_dedup *d, int i)
{
	return d->name[i];
}

void pb_codegen_dedup_free(struct pb_codegen_dedup *d)
{
	if (!d)
		return;
	for (int i = 0; i < d->n; i++)
		free(d->name[i]);
	for (int i = 0; i < d->nitem; i++)
		free(d->global[i]);
	free(d->name);
	free(d->op);
	free(d->rep);
	free(d->grid);
	free(d->regrid);
	free(d->item);
	free(d->reps);
	free(d->kernel);
	free(d->global);
	free(d);
}

/* A span of PTX text. */
struct span {
	const char *p;
	size_t len;
};

static int span_eq(struct span a, struct span b)
{
	return a.len == b.len && !memcmp(a.p, b.p, a.len);
}

/* The compiled PTX, cut up: "head", the lines before the first entry's
 * ".globl" comment (the same in every part); per item, "line": a
 * global's line, or the demoted shared array lines ("// __wg_<kernel>_..
 * has been demoted") of a representative; per representative its
 * "entry", from ".visible .entry" to its closing "}" line, and "fnum",
 * its place among the functions of its part; "post" after the last
 * entry (the same in every part). */
struct cut {
	struct span head, post;
	struct span *line;
	struct span *entry;
	long *fnum;
	int nparts;
};

static int is_ident(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '$';
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
		if (r != i && (ident_is(id, p, rn, NULL) ||
			       ident_is(id, p, rn, "_param_")))
			at = id;
		else if (r != i && starts(id, p, "__wg_") &&
			 ident_is(id + 5, p, rn, "_"))
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

/* The item that line "l" before the first entry of a part declares: a
 * demoted shared array of one of the part's representatives "reps"
 * ("n" of them) from the "*at"-th on (they come in module order; "*at"
 * moves to it), or a device global of "d"; -1 if none. */
static int line_item(const struct pb_codegen_dedup *d, struct span l,
		     const int *reps, int n, int *at)
{
	const char *end = l.p + l.len;
	if (starts(l.p, end, "// __wg_")) {
		if (l.len < 20 || memcmp(end - 18, " has been demoted\n", 18))
			return -1;
		for (int k = *at; k < n; k++)
			if (ident_is(l.p + 8, end, d->name[reps[k]], "_")) {
				*at = k;
				return d->item[reps[k]];
			}
		return -1;
	}
	if (!starts(l.p, end, ".global ") && !starts(l.p, end, ".const "))
		return -1;
	/* the global's name: the identifier before its size, initializer
	   or the end of the declaration */
	const char *e = l.p;
	while (e < end && *e != '[' && *e != '=' && *e != ';')
		e++;
	while (e > l.p && e[-1] == ' ')
		e--;
	const char *s = e;
	while (s > l.p && is_ident(s[-1]))
		s--;
	for (int x = 0; x < d->nitem; x++)
		if (d->global[x] && strlen(d->global[x]) == (size_t)(e - s) &&
		    !memcmp(d->global[x], s, e - s))
			return x;
	return -1;
}

/* Cut part "ptx" (length "len"), the PTX of representatives "reps" ("n"
 * of them, in module order) compiled together, into "c"; -1 when it is
 * not the head, the ".globl" comment of the first, global and demoted
 * lines in module order, a blank line and the entries, each after the
 * ".globl" comment of its own, or its head or tail differ from an
 * earlier part's. */
static int cut_part(const struct pb_codegen_dedup *d, const char *ptx,
		    size_t len, const int *reps, int n, struct cut *c)
{
	const char *p = ptx, *end = ptx + len;
	char sep[600];
	snprintf(sep, sizeof(sep), "\t// .globl\t%s\n", d->name[reps[0]]);
	const char *g = p;
	while (g < end && !starts(g, end, sep)) {
		const char *e = memchr(g, '\n', end - g);
		g = e ? e + 1 : end;
	}
	struct span head = {p, g - p};
	if (g == end || (c->nparts && !span_eq(head, c->head)))
		return -1;
	c->head = head;
	p = g + strlen(sep);
	/* the globals and demoted arrays, in module order */
	int pos = -1, at = 0;
	while (p < end && *p != '\n') {
		const char *e = memchr(p, '\n', end - p);
		if (!e)
			return -1;
		struct span l = {p, e + 1 - p};
		int x = line_item(d, l, reps, n, &at);
		if (x < 0 || x < pos)
			return -1;
		if (d->kernel[x] >= 0 && x == pos) {
			c->line[x].len += l.len;
		} else if (d->kernel[x] >= 0 || !c->line[x].p) {
			if (c->line[x].p)
				return -1;
			c->line[x] = l;
		} else if (!span_eq(c->line[x], l)) {
			return -1;
		}
		pos = x;
		p = e + 1;
	}
	if (p == end)
		return -1;
	p++;
	/* the entries */
	for (int k = 0; k < n; k++) {
		int r = reps[k];
		snprintf(sep, sizeof(sep), "\t// .globl\t%s\n", d->name[r]);
		if (k > 0) {
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
		c->fnum[r] = k;
		p = e;
	}
	struct span post = {p, end - p};
	for (const char *q = p; q < end; q++)
		if (*q == '{' || *q == '$')
			return -1;
	if (c->nparts && !span_eq(post, c->post))
		return -1;
	c->post = post;
	c->nparts++;
	return 0;
}

int pb_codegen_dedup_assemble(const struct pb_codegen_dedup *d, int nparts,
			      const int *first, const struct pb_buf *ptx,
			      struct pb_buf *out)
{
	struct cut c = {0};
	int rc = d->n && !d->other ? 0 : -1;
	c.line = calloc(d->nitem ? d->nitem : 1, sizeof(*c.line));
	c.entry = calloc(d->n ? d->n : 1, sizeof(*c.entry));
	c.fnum = calloc(d->n ? d->n : 1, sizeof(*c.fnum));
	for (int t = 0; rc == 0 && t < nparts; t++) {
		int n = (t + 1 < nparts ? first[t + 1] : d->nrep) - first[t];
		rc = n > 0 ? cut_part(d, ptx[t].data, ptx[t].len,
				      d->reps + first[t], n, &c)
			   : -1;
	}
	struct pb_buf o = {0};
	if (rc == 0) {
		pb_buf_append(&o, c.head.p, c.head.len);
		pb_buf_printf(&o, "\t// .globl\t%s\n", d->name[0]);
	}
	for (int x = 0; rc == 0 && x < d->nitem; x++) {
		int i = d->kernel[x], r = i >= 0 ? d->rep[i] : -1;
		struct span l = i >= 0 ? c.line[d->item[r]] : c.line[x];
		if (i < 0)
			pb_buf_append(&o, l.p, l.len);
		else if (l.p)
			rc = rename_into(d, r, c.fnum[r], i, l.p, l.len, &o);
	}
	if (rc == 0)
		pb_buf_puts(&o, "\n");
	for (int i = 0; rc == 0 && i < d->n; i++) {
		int r = d->rep[i];
		if (i > 0)
			pb_buf_printf(&o, "\t// .globl\t%s\n", d->name[i]);
		rc = rename_into(d, r, c.fnum[r], i, c.entry[r].p,
				 c.entry[r].len, &o);
	}
	if (rc == 0) {
		pb_buf_append(&o, c.post.p, c.post.len);
		pb_buf_append(out, o.data, o.len);
	}
	pb_buf_free(&o);
	free(c.line);
	free(c.entry);
	free(c.fnum);
	return rc;
}
