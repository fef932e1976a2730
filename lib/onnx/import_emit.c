/* The importer's text emitter: SSA names, types, affine maps, attribute
 * access, and the building blocks that op lowerings share (empty/fill,
 * reshapes, linalg.generic, broadcasting). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/contract.h"
#include "onnx/import.h"

/* A fresh SSA name "%v<N>". */
struct name pb_imp_fresh(struct imp *s)
{
	struct name n;
	snprintf(n.s, sizeof(n.s), "%%v%d", s->nssa++);
	return n;
}

/* The tensor type "tensor<AxBxf32>" of rank "rank" and dims "d". */
struct text pb_imp_ty_rank(int rank, const int64_t *d)
{
	struct text t;
	size_t k = 0;
	k += snprintf(t.s + k, sizeof(t.s) - k, "tensor<");
	for (int i = 0; i < rank && k < sizeof(t.s); i++)
		k += snprintf(t.s + k, sizeof(t.s) - k, "%lldx", (long long)d[i]);
	if (k < sizeof(t.s))
		snprintf(t.s + k, sizeof(t.s) - k, "f32>");
	return t;
}

/* The MLIR element type of ONNX type "dt" ("f32", "i64", "i1", ..), or
 * NULL when the importer cannot compute on it. MLIR's integer types are
 * signless: u8 and i8 are both "i8", and the importer picks the signed or
 * unsigned arith op from "dt" (pb_imp_iop); @main's arguments and results
 * of an unsigned type say so in PB_ATTR_DTYPE. */
const char *pb_imp_elt(enum pb_dtype dt)
{
	switch (dt) {
	case PB_DT_F32: return "f32";
	case PB_DT_F64: return "f64";
	case PB_DT_F16: return "f16";
	case PB_DT_BF16: return "bf16";
	case PB_DT_I64: case PB_DT_U64: return "i64";
	case PB_DT_I32: case PB_DT_U32: return "i32";
	case PB_DT_I16: case PB_DT_U16: return "i16";
	case PB_DT_I8: case PB_DT_U8: return "i8";
	case PB_DT_BOOL: return "i1";
	default: return NULL;
	}
}

/* Append ", pb.dtype = "u8"" to the attribute dictionary in "b" when "dt"
 * is unsigned: the MLIR type of its tensors is signless (pb_imp_elt). */
void pb_imp_dtype_attr(struct pb_buf *b, enum pb_dtype dt)
{
	if (pb_imp_is_unsigned(dt))
		pb_buf_printf(b, ", " PB_ATTR_DTYPE " = \"%s\"",
			      pb_dtype_name(dt));
}

/* Is "dt" an integer type (signed or unsigned, not bool)? */
int pb_imp_is_int(enum pb_dtype dt)
{
	return dt == PB_DT_I8 || dt == PB_DT_I16 || dt == PB_DT_I32 ||
	       dt == PB_DT_I64 || pb_imp_is_unsigned(dt);
}

/* Is "dt" an unsigned integer type? */
int pb_imp_is_unsigned(enum pb_dtype dt)
{
	return dt == PB_DT_U8 || dt == PB_DT_U16 || dt == PB_DT_U32 ||
	       dt == PB_DT_U64;
}

/* The arith op "op" ("divsi", "remsi", "maxsi", "minsi", "shrsi",
 * "extsi", "sitofp", "fptosi", or a comparison "cmpi slt," and the like)
 * for integer type "dt": its unsigned form ("divui", "cmpi ult,", ..) when
 * "dt" is unsigned, "op" itself otherwise. */
const char *pb_imp_iop(enum pb_dtype dt, const char *op)
{
	static const char *const pairs[][2] = {
		{"divsi", "divui"},	  {"remsi", "remui"},
		{"maxsi", "maxui"},	  {"minsi", "minui"},
		{"shrsi", "shrui"},	  {"extsi", "extui"},
		{"sitofp", "uitofp"},	  {"fptosi", "fptoui"},
		{"ceildivsi", "ceildivui"}, {"cmpi slt,", "cmpi ult,"},
		{"cmpi sle,", "cmpi ule,"}, {"cmpi sgt,", "cmpi ugt,"},
		{"cmpi sge,", "cmpi uge,"}, {"slt", "ult"},
		{"sle", "ule"},		  {"sgt", "ugt"},
		{"sge", "uge"},
	};
	if (!pb_imp_is_unsigned(dt))
		return op;
	for (size_t i = 0; i < sizeof(pairs) / sizeof(*pairs); i++)
		if (!strcmp(pairs[i][0], op))
			return pairs[i][1];
	return op;
}

/* The smallest and largest value of integer type "dt" (as doubles: the
 * 64-bit bounds round to the nearest representable value). */
void pb_imp_int_range(enum pb_dtype dt, double *lo, double *hi)
{
	int bits = 8 * (int)pb_dtype_size(dt);
	if (pb_imp_is_unsigned(dt)) {
		*lo = 0;
		*hi = ldexp(1, bits) - 1;
	} else {
		*lo = -ldexp(1, bits - 1);
		*hi = ldexp(1, bits - 1) - 1;
	}
}

/* Is "dt" a float type the importer computes on? */
int pb_imp_is_float(enum pb_dtype dt)
{
	return dt == PB_DT_F32 || dt == PB_DT_F64 || pb_dtype_is_half(dt);
}

/* The tensor type of shape "sh" and element type "dt" (f32 when the
 * importer has no element type for "dt"). */
struct text pb_imp_ty_dt(const struct shape *sh, enum pb_dtype dt)
{
	struct text t = pb_imp_ty(sh);
	const char *el = pb_imp_elt(dt);
	size_t n = strlen(t.s);
	if (n >= 4 && el && strcmp(el, "f32")) {
		t.s[n - 4] = 0; /* drop "f32>" */
		snprintf(t.s + n - 4, sizeof(t.s) - (n - 4), "%s>", el);
	}
	return t;
}

/* The f32 tensor type of shape "sh". */
struct text pb_imp_ty(const struct shape *sh)
{
	return pb_imp_ty_rank(sh->rank, sh->d);
}

/* The affine map "(d0, .., d<ndims-1>) -> (..)" whose "nres" results are
 * the dims "res" (a negative entry is the constant 0), each taken modulo
 * "mod" where "mod" (may be NULL) has a non-negative entry. */
struct text pb_imp_map_mod(int ndims, int nres, const int *res,
			   const int64_t *mod)
{
	struct text t;
	size_t k = snprintf(t.s, sizeof(t.s), "affine_map<(");
	for (int i = 0; i < ndims; i++)
		k += snprintf(t.s + k, sizeof(t.s) - k, "%sd%d", i ? ", " : "", i);
	k += snprintf(t.s + k, sizeof(t.s) - k, ") -> (");
	for (int i = 0; i < nres; i++) {
		const char *sep = i ? ", " : "";
		if (res[i] < 0)
			k += snprintf(t.s + k, sizeof(t.s) - k, "%s0", sep);
		else if (mod && mod[i] >= 0)
			k += snprintf(t.s + k, sizeof(t.s) - k,
				      "%sd%d mod %lld", sep, res[i],
				      (long long)mod[i]);
		else
			k += snprintf(t.s + k, sizeof(t.s) - k, "%sd%d", sep,
				      res[i]);
	}
	snprintf(t.s + k, sizeof(t.s) - k, ")>");
	return t;
}

/* The affine map of "res" as in pb_imp_map_mod, without modulo. */
struct text pb_imp_map(int ndims, int nres, const int *res)
{
	return pb_imp_map_mod(ndims, nres, res, NULL);
}

/* "[v0, v1, ..]" for the "n" integers "v". */
struct text pb_imp_ints(int n, const int64_t *v)
{
	struct text t;
	size_t k = snprintf(t.s, sizeof(t.s), "[");
	for (int i = 0; i < n && k < sizeof(t.s); i++)
		k += snprintf(t.s + k, sizeof(t.s) - k, "%s%lld", i ? ", " : "",
			      (long long)v[i]);
	if (k < sizeof(t.s))
		snprintf(t.s + k, sizeof(t.s) - k, "]");
	return t;
}

/* "x" rounded to f32, as an exact hex literal "0x3F800000". */
struct text pb_imp_f32(double x)
{
	struct text t;
	float f = (float)x;
	uint32_t bits;
	memcpy(&bits, &f, 4);
	snprintf(t.s, sizeof(t.s), "0x%08X", bits);
	return t;
}

/* Append "str" to "b" as an MLIR string literal (quoted, escaped). */
void pb_imp_str(struct pb_buf *b, const char *str)
{
	pb_buf_append(b, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)str; *p; p++) {
		if (*p == '"' || *p == '\\' || *p < 0x20 || *p >= 0x7f)
			pb_buf_printf(b, "\\%02X", *p);
		else
			pb_buf_append(b, p, 1);
	}
	pb_buf_append(b, "\"", 1);
}

/* Append one op line "fmt" to the body, located at the current node. */
void pb_imp_emit(struct imp *s, const char *fmt, ...)
{
	va_list ap;
	pb_buf_puts(&s->body, "    ");
	va_start(ap, fmt);
	pb_buf_vprintf(&s->body, fmt, ap);
	va_end(ap);
	if (s->loc >= 0)
		pb_buf_printf(&s->body, " loc(#l%d)\n", s->loc);
	else
		pb_buf_puts(&s->body, " loc(unknown)\n");
}

/* Append a line "fmt" that is not an op (a block header) to the body. */
void pb_imp_raw(struct imp *s, const char *fmt, ...)
{
	va_list ap;
	pb_buf_puts(&s->body, "    ");
	va_start(ap, fmt);
	pb_buf_vprintf(&s->body, fmt, ap);
	va_end(ap);
	pb_buf_puts(&s->body, "\n");
}

/* Report "fmt" as an error of the current node: "node 'N' (Op, opset V):
 * <msg>". Returns PB_ERR. */
int pb_imp_node_error(struct imp *s, const char *fmt, ...)
{
	struct pb_buf msg = {0};
	va_list ap;
	if (s->node)
		pb_buf_printf(&msg, "node '%s' (%s, opset %lld): ",
			      s->node_name, s->node->op_type,
			      (long long)s->opset);
	va_start(ap, fmt);
	pb_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	pb_error(s->ctx, "%s", msg.data);
	pb_buf_free(&msg);
	return PB_ERR;
}

/* The attribute "name" of the current node, or NULL. */
const Onnx__AttributeProto *pb_imp_attr(struct imp *s, const char *name)
{
	for (size_t i = 0; i < s->node->n_attribute; i++)
		if (!strcmp(s->node->attribute[i]->name, name))
			return s->node->attribute[i];
	return NULL;
}

/* Integer attribute "name" of the current node, "dflt" when absent. */
int64_t pb_imp_attr_int(struct imp *s, const char *name, int64_t dflt)
{
	const Onnx__AttributeProto *a = pb_imp_attr(s, name);
	return a && a->has_i ? a->i : dflt;
}

/* Float attribute "name" of the current node, "dflt" when absent. */
float pb_imp_attr_float(struct imp *s, const char *name, float dflt)
{
	const Onnx__AttributeProto *a = pb_imp_attr(s, name);
	return a && a->has_f ? a->f : dflt;
}

/* String attribute "name" of the current node (static storage of the
 * node, NUL-terminated up to 63 bytes), "dflt" when absent. */
const char *pb_imp_attr_str(struct imp *s, const char *name, const char *dflt)
{
	static char buf[64];
	const Onnx__AttributeProto *a = pb_imp_attr(s, name);
	if (!a || !a->has_s)
		return dflt;
	size_t n = a->s.len < sizeof(buf) - 1 ? a->s.len : sizeof(buf) - 1;
	memcpy(buf, a->s.data, n);
	buf[n] = 0;
	return buf;
}

/* Integer list attribute "name" into "v" (at most "max"). Returns the
 * count, -1 when absent, -2 when longer than "max" (reported). */
int pb_imp_attr_ints(struct imp *s, const char *name, int64_t *v, int max)
{
	const Onnx__AttributeProto *a = pb_imp_attr(s, name);
	if (!a)
		return -1;
	if (a->n_ints > (size_t)max) {
		pb_imp_node_error(s, "attribute '%s' has %zu values: at most %d "
				  "are supported", name, a->n_ints, max);
		return -2;
	}
	if (a->n_ints)
		memcpy(v, a->ints, a->n_ints * sizeof(*v));
	return (int)a->n_ints;
}

/* The number of elements of "sh" (INT64_MAX when that overflows). */
int64_t pb_imp_numel(const struct shape *sh)
{
	int64_t n = 1;
	for (int i = 0; i < sh->rank; i++)
		if (__builtin_mul_overflow(n, sh->d[i], &n))
			return INT64_MAX;
	return n;
}

/* Normalize "axis" (negative: from the end) of a rank-"rank" tensor into
 * "*out"; reports an out-of-range axis. */
int pb_imp_axis(struct imp *s, int64_t axis, int rank, int *out)
{
	if (axis < -rank || axis >= rank) {
		pb_imp_node_error(s, "axis %lld is out of range for rank %d",
				  (long long)axis, rank);
		return PB_ERR;
	}
	*out = (int)(axis < 0 ? axis + rank : axis);
	return PB_OK;
}

/* NumPy (multidirectional) broadcast of shapes "a" and "b" into "out". */
int pb_imp_broadcast(struct imp *s, const struct shape *a,
		     const struct shape *b, struct shape *out)
{
	int r = a->rank > b->rank ? a->rank : b->rank;
	struct shape res = {r, {0}};
	for (int i = 0; i < r; i++) {
		int ia = i - (r - a->rank), ib = i - (r - b->rank);
		int64_t da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
		if (da != db && da != 1 && db != 1) {
			pb_imp_node_error(s, "shapes %s and %s do not broadcast",
					  pb_imp_ty(a).s, pb_imp_ty(b).s);
			return PB_ERR;
		}
		res.d[i] = da == 1 ? db : da;
	}
	*out = res;
	return PB_OK;
}

/* Emit "tensor.empty" of shape "sh" and type "dt". */
struct name pb_imp_empty_dt(struct imp *s, const struct shape *sh,
			    enum pb_dtype dt)
{
	struct name e = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = tensor.empty() : %s", e.s, pb_imp_ty_dt(sh, dt).s);
	return e;
}

/* Emit "tensor.empty" of shape "sh" (f32). */
struct name pb_imp_empty(struct imp *s, const struct shape *sh)
{
	return pb_imp_empty_dt(s, sh, PB_DT_F32);
}

/* The bits of unsigned value "x" of type "dt" as a signed integer of
 * its width (255 as u8 is -1), the form MLIR prints signless constants
 * in; values outside the type are clamped. */
static int64_t int_bits(enum pb_dtype dt, double x)
{
	double lo, hi;
	pb_imp_int_range(dt, &lo, &hi);
	uint64_t u = x <= lo ? 0 : x >= hi ? UINT64_MAX : (uint64_t)x;
	int bits = 8 * (int)pb_dtype_size(dt);
	if (bits < 64)
		u &= ((uint64_t)1 << bits) - 1;
	if (bits < 64 && (u >> (bits - 1)))
		return (int64_t)u - ((int64_t)1 << bits);
	return (int64_t)u;
}

/* Emit a scalar constant "x" of type "dt" (floats exactly, as hex). */
struct name pb_imp_scalar_dt(struct imp *s, enum pb_dtype dt, double x)
{
	struct name c = pb_imp_fresh(s);
	if (dt == PB_DT_F64) {
		uint64_t bits;
		memcpy(&bits, &x, 8);
		pb_imp_emit(s, "%s = arith.constant 0x%016llX : f64", c.s,
			    (unsigned long long)bits);
	} else if (dt == PB_DT_F16) {
		pb_imp_emit(s, "%s = arith.constant 0x%04X : f16", c.s,
			    pb_f16_from_float((float)x));
	} else if (dt == PB_DT_BF16) {
		pb_imp_emit(s, "%s = arith.constant 0x%04X : bf16", c.s,
			    pb_bf16_from_float((float)x));
	} else if (dt == PB_DT_BOOL) {
		pb_imp_emit(s, "%s = arith.constant %s", c.s,
			    x != 0 ? "true" : "false");
	} else if (pb_imp_is_unsigned(dt)) {
		/* a signless constant holds the unsigned value's bits */
		pb_imp_emit(s, "%s = arith.constant %lld : %s", c.s,
			    (long long)int_bits(dt, x), pb_imp_elt(dt));
	} else if (!pb_imp_is_float(dt)) {
		pb_imp_emit(s, "%s = arith.constant %lld : %s", c.s,
			    (long long)x, pb_imp_elt(dt));
	} else {
		pb_imp_emit(s, "%s = arith.constant %s : f32", c.s,
			    pb_imp_f32(x).s);
	}
	return c;
}

/* Emit an f32 scalar constant "x". */
struct name pb_imp_scalar(struct imp *s, double x)
{
	return pb_imp_scalar_dt(s, PB_DT_F32, x);
}

/* Emit a tensor of shape "sh" and type "dt" filled with "x". */
struct name pb_imp_fill_dt(struct imp *s, const struct shape *sh,
			   enum pb_dtype dt, double x)
{
	struct name c = pb_imp_scalar_dt(s, dt, x);
	struct name e = pb_imp_empty_dt(s, sh, dt);
	struct name r = pb_imp_fresh(s);
	struct text t = pb_imp_ty_dt(sh, dt);
	pb_imp_emit(s, "%s = linalg.fill ins(%s : %s) outs(%s : %s) -> %s",
		    r.s, c.s, pb_imp_elt(dt), e.s, t.s, t.s);
	return r;
}

/* Emit a tensor of shape "sh" filled with the f32 "x". */
struct name pb_imp_fill(struct imp *s, const struct shape *sh, double x)
{
	return pb_imp_fill_dt(s, sh, PB_DT_F32, x);
}

/* Group the dims of "a" and "b" (same element count) into "n" runs of
 * equal products: run i covers a[ga[i]..ga[i+1]) and b[gb[i]..gb[i+1]).
 * Dims of size 1 after the last run join it. */
static int group_dims(const struct shape *a, const struct shape *b, int *ga,
		      int *gb)
{
	int i = 0, j = 0, n = 0;
	ga[0] = gb[0] = 0;
	while (i < a->rank && j < b->rank) {
		int64_t pa = a->d[i++], pb = b->d[j++];
		while (pa != pb) {
			if (pa < pb && i < a->rank)
				pa *= a->d[i++];
			else if (pb < pa && j < b->rank)
				pb *= b->d[j++];
			else
				return -1;
		}
		n++;
		ga[n] = i;
		gb[n] = j;
	}
	if (!n)
		return 0;
	ga[n] = a->rank;
	gb[n] = b->rank;
	return n;
}

/* Append the reassociation "[[0, 1], [2]]" of the "n" runs "g". */
static void reassoc(struct pb_buf *b, int n, const int *g)
{
	pb_buf_puts(b, "[");
	for (int i = 0; i < n; i++) {
		pb_buf_puts(b, i ? ", [" : "[");
		for (int k = g[i]; k < g[i + 1]; k++)
			pb_buf_printf(b, "%s%d", k > g[i] ? ", " : "", k);
		pb_buf_puts(b, "]");
	}
	pb_buf_puts(b, "]");
}

/* Emit a collapse ("expand" = 0) or expand of "x" from "from" to "to"
 * with the "n" runs "g" of the larger-rank side. */
static struct name collapse_expand(struct imp *s, int expand, const char *x,
				   const struct shape *from,
				   const struct shape *to, enum pb_dtype dt,
				   int n, const int *g)
{
	struct name r = pb_imp_fresh(s);
	struct pb_buf ra = {0};
	reassoc(&ra, n, g);
	if (expand)
		pb_imp_emit(s, "%s = tensor.expand_shape %s %s output_shape %s "
			    ": %s into %s", r.s, x, ra.data ? ra.data : "[]",
			    pb_imp_ints(to->rank, to->d).s,
			    pb_imp_ty_dt(from, dt).s, pb_imp_ty_dt(to, dt).s);
	else
		pb_imp_emit(s, "%s = tensor.collapse_shape %s %s : %s into %s",
			    r.s, x, ra.data ? ra.data : "[]",
			    pb_imp_ty_dt(from, dt).s, pb_imp_ty_dt(to, dt).s);
	pb_buf_free(&ra);
	return r;
}

/* Emit a reshape of "x" (element type "dt") from "from" to "to" (same
 * element count) as a collapse_shape, an expand_shape, or a collapse
 * followed by an expand (all views of the same buffer). Returns "x" when
 * the shapes agree. */
struct name pb_imp_reshape_dt(struct imp *s, const char *x,
			      const struct shape *from, const struct shape *to,
			      enum pb_dtype dt)
{
	struct name r;
	int ga[PB_MAX_RANK + 1], gb[PB_MAX_RANK + 1];
	int same = from->rank == to->rank;
	for (int i = 0; same && i < from->rank; i++)
		same = from->d[i] == to->d[i];
	if (same) {
		snprintf(r.s, sizeof(r.s), "%s", x);
		return r;
	}
	int n = group_dims(from, to, ga, gb);
	if (n == 0) /* a rank-0 side: all dims are 1 */
		return collapse_expand(s, from->rank == 0, x, from, to, dt, 0,
				       ga);
	if (n < 0 || pb_imp_numel(from) == 0) {
		/* no common grouping: go through the flat vector */
		struct shape flat = {1, {pb_imp_numel(from)}};
		int g1[2] = {0, from->rank}, g2[2] = {0, to->rank};
		struct name f = collapse_expand(s, 0, x, from, &flat, dt, 1, g1);
		return collapse_expand(s, 1, f.s, &flat, to, dt, 1, g2);
	}
	int need_collapse = 0, need_expand = 0;
	struct shape mid = {n, {0}};
	for (int i = 0; i < n; i++) {
		need_collapse |= ga[i + 1] - ga[i] != 1;
		need_expand |= gb[i + 1] - gb[i] != 1;
		mid.d[i] = 1;
		for (int k = ga[i]; k < ga[i + 1]; k++)
			mid.d[i] *= from->d[k];
	}
	snprintf(r.s, sizeof(r.s), "%s", x);
	if (need_collapse)
		r = collapse_expand(s, 0, r.s, from, &mid, dt, n, ga);
	if (need_expand)
		r = collapse_expand(s, 1, r.s, &mid, to, dt, n, gb);
	return r;
}

/* pb_imp_reshape_dt of an f32 "x". */
struct name pb_imp_reshape(struct imp *s, const char *x,
			   const struct shape *from, const struct shape *to)
{
	return pb_imp_reshape_dt(s, x, from, to, PB_DT_F32);
}

/* Begin a linalg.generic with "ndims" loops of kinds "iters" ('p'
 * parallel, 'r' reduction), "nin" inputs "ins" of shapes "in_sh" and
 * element types "in_dt" (NULL: all f32) read through "in_maps", and init
 * "init" of shape "out" and type "out_dt" written through "out_map".
 * Emits the header and the block; the caller emits the body over
 * g->arg[] and ends it with pb_imp_gen_end. */
void pb_imp_gen_begin_dt(struct imp *s, struct gen *g, int ndims,
			 const char *iters, int nin, const char *const *ins,
			 const struct shape *in_sh, const enum pb_dtype *in_dt,
			 const struct text *in_maps, const char *init,
			 const struct shape *out, enum pb_dtype out_dt,
			 const struct text *out_map)
{
	struct pb_buf b = {0};
	g->ndims = ndims;
	g->nin = nin;
	g->out = *out;
	for (int i = 0; i < nin; i++)
		g->dt[i] = in_dt ? in_dt[i] : PB_DT_F32;
	g->dt[nin] = out_dt;
	g->arg[PB_IMP_MAXIN + 1] = pb_imp_fresh(s); /* the result */
	pb_buf_printf(&b, "%s = linalg.generic {indexing_maps = [",
		      g->arg[PB_IMP_MAXIN + 1].s);
	for (int i = 0; i < nin; i++)
		pb_buf_printf(&b, "%s, ", in_maps[i].s);
	pb_buf_printf(&b, "%s], iterator_types = [", out_map->s);
	for (int i = 0; i < ndims; i++)
		pb_buf_printf(&b, "%s\"%s\"", i ? ", " : "",
			      iters[i] == 'r' ? "reduction" : "parallel");
	pb_buf_puts(&b, "]}");
	if (nin) {
		pb_buf_puts(&b, " ins(");
		for (int i = 0; i < nin; i++)
			pb_buf_printf(&b, "%s%s", i ? ", " : "", ins[i]);
		pb_buf_puts(&b, " : ");
		for (int i = 0; i < nin; i++)
			pb_buf_printf(&b, "%s%s", i ? ", " : "",
				      pb_imp_ty_dt(&in_sh[i], g->dt[i]).s);
		pb_buf_puts(&b, ")");
	}
	pb_buf_printf(&b, " outs(%s : %s) {", init,
		      pb_imp_ty_dt(out, out_dt).s);
	pb_imp_raw(s, "%s", b.data);
	pb_buf_free(&b);
	pb_buf_puts(&s->body, "    ^bb0(");
	for (int i = 0; i <= nin; i++) {
		g->arg[i] = pb_imp_fresh(s);
		pb_buf_printf(&s->body, "%s%s: %s loc(#l%d)", i ? ", " : "",
			      g->arg[i].s, pb_imp_elt(g->dt[i]), s->loc);
	}
	pb_buf_puts(&s->body, "):\n");
}

/* pb_imp_gen_begin_dt with every operand f32. */
void pb_imp_gen_begin(struct imp *s, struct gen *g, int ndims,
		      const char *iters, int nin, const char *const *ins,
		      const struct shape *in_sh, const struct text *in_maps,
		      const char *init, const struct shape *out,
		      const struct text *out_map)
{
	pb_imp_gen_begin_dt(s, g, ndims, iters, nin, ins, in_sh, NULL,
			    in_maps, init, out, PB_DT_F32, out_map);
}

/* End the generic "g" yielding "yield"; returns its result. */
struct name pb_imp_gen_end(struct imp *s, struct gen *g, const char *yield)
{
	const char *el = pb_imp_elt(g->dt[g->nin]);
	pb_imp_emit(s, "  linalg.yield %s : %s", yield, el);
	pb_imp_emit(s, "} -> %s", pb_imp_ty_dt(&g->out, g->dt[g->nin]).s);
	return g->arg[PB_IMP_MAXIN + 1];
}

/* The index into a tensor of shape "in" (broadcast NumPy-style to "out")
 * of the element at linear index "o" of "out". */
int64_t pb_imp_bcast_index(const struct shape *out, const struct shape *in,
			   int64_t o)
{
	int64_t idx = 0, stride = 1;
	for (int i = out->rank - 1; i >= 0; i--) {
		int64_t c = o % out->d[i];
		o /= out->d[i];
		int j = i - (out->rank - in->rank);
		if (j < 0)
			continue;
		if (in->d[j] != 1)
			idx += c * stride;
		stride *= in->d[j];
	}
	return idx;
}

/* A new zeroed known tensor of type "dt" and shape "sh". */
struct pb_tensor *pb_imp_new_known(enum pb_dtype dt, const struct shape *sh)
{
	struct pb_tensor *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->dtype = dt;
	t->rank = sh->rank;
	memcpy(t->dims, sh->d, sizeof(sh->d[0]) * sh->rank);
	t->nbytes = (size_t)pb_imp_numel(sh) * pb_dtype_size(dt);
	t->data = calloc(1, t->nbytes ? t->nbytes : 1);
	if (!t->data) {
		free(t);
		return NULL;
	}
	return t;
}

/* Should an op on "v" be folded at import time? Integer data always (it
 * is shape data); float data when it is known, small and not a graph
 * initializer (weights stay parameters). */
int pb_imp_fold_ok(struct val *v)
{
	if (!v->k && !v->init)
		return 0;
	if (!pb_imp_is_float(v->dtype))
		return 1;
	if (!v->init) /* computed at import (ConstantOfShape, ...) */
		return pb_imp_numel(&v->sh) <= PB_FOLD_MAX;
	return !v->is_init && pb_imp_numel(&v->sh) <= PB_INLINE_MAX;
}

/* Emit tensor.pad of "x" (shape "*sh") by "lo"/"hi" (non-negative, per
 * dim) with the value "v"; updates "*sh". Returns "x" when nothing pads. */
struct name pb_imp_pad(struct imp *s, const char *x, struct shape *sh,
		       const int64_t *lo, const int64_t *hi, double v)
{
	return pb_imp_pad_dt(s, x, sh, PB_DT_F32, lo, hi, v);
}

/* pb_imp_pad of "x" of element type "dt". */
struct name pb_imp_pad_dt(struct imp *s, const char *x, struct shape *sh,
			  enum pb_dtype dt, const int64_t *lo,
			  const int64_t *hi, double v)
{
	struct name r;
	struct shape to = *sh;
	int any = 0;
	for (int i = 0; i < sh->rank; i++) {
		to.d[i] += lo[i] + hi[i];
		any |= lo[i] || hi[i];
	}
	snprintf(r.s, sizeof(r.s), "%s", x);
	if (!any)
		return r;
	struct name c = pb_imp_scalar_dt(s, dt, v);
	r = pb_imp_fresh(s);
	pb_imp_raw(s, "%s = tensor.pad %s low%s high%s {", r.s, x,
		   pb_imp_ints(sh->rank, lo).s, pb_imp_ints(sh->rank, hi).s);
	pb_buf_puts(&s->body, "    ^bb0(");
	for (int i = 0; i < sh->rank; i++) {
		struct name a = pb_imp_fresh(s);
		pb_buf_printf(&s->body, "%s%s: index loc(#l%d)", i ? ", " : "",
			      a.s, s->loc);
	}
	pb_buf_puts(&s->body, "):\n");
	pb_imp_emit(s, "  tensor.yield %s : %s", c.s, pb_imp_elt(dt));
	pb_imp_emit(s, "} : %s to %s", pb_imp_ty_dt(sh, dt).s,
		    pb_imp_ty_dt(&to, dt).s);
	*sh = to;
	return r;
}

/* The map that reads a tensor of shape "in" broadcast (NumPy-style,
 * aligned to the right) to "out". */
struct text pb_imp_bcast_map(const struct shape *out, const struct shape *in)
{
	int res[PB_MAX_RANK];
	for (int i = 0; i < in->rank; i++) {
		int o = i + out->rank - in->rank;
		res[i] = in->d[i] == 1 && out->d[o] != 1 ? -1 : o;
	}
	return pb_imp_map(out->rank, in->rank, res);
}

/* Element "i" of known "t" as a double. */
double pb_imp_elem_get(const struct pb_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case PB_DT_F32: return ((float *)t->data)[i];
	case PB_DT_F64: return ((double *)t->data)[i];
	case PB_DT_F16: return pb_f16_to_float(((uint16_t *)t->data)[i]);
	case PB_DT_BF16: return pb_bf16_to_float(((uint16_t *)t->data)[i]);
	case PB_DT_I64: return (double)((int64_t *)t->data)[i];
	case PB_DT_I32: return ((int32_t *)t->data)[i];
	case PB_DT_I16: return ((int16_t *)t->data)[i];
	case PB_DT_I8: return ((int8_t *)t->data)[i];
	case PB_DT_U64: return (double)((uint64_t *)t->data)[i];
	case PB_DT_U32: return ((uint32_t *)t->data)[i];
	case PB_DT_U16: return ((uint16_t *)t->data)[i];
	case PB_DT_U8: case PB_DT_BOOL: return ((uint8_t *)t->data)[i];
	default: return NAN;
	}
}

/* "x" truncated toward zero to a 64-bit pattern, so that a narrower
 * integer type keeps its low bits (NumPy's astype wraps alike); values
 * beyond the 64-bit range saturate, NaN is 0 (a C conversion of them
 * would be undefined). */
static uint64_t int_pattern(double x)
{
	if (x != x)
		return 0;
	if (x >= 18446744073709551615.0)
		return UINT64_MAX;
	if (x >= 9223372036854775807.0)
		return (uint64_t)x;
	if (x <= -9223372036854775808.0)
		return (uint64_t)INT64_MIN;
	return (uint64_t)(int64_t)x;
}

/* Store "x" as element "i" of known "t". */
void pb_imp_elem_set(struct pb_tensor *t, int64_t i, double x)
{
	if (pb_imp_is_int(t->dtype)) {
		uint64_t u = int_pattern(x);
		switch (pb_dtype_size(t->dtype)) {
		case 1: ((uint8_t *)t->data)[i] = (uint8_t)u; break;
		case 2: ((uint16_t *)t->data)[i] = (uint16_t)u; break;
		case 4: ((uint32_t *)t->data)[i] = (uint32_t)u; break;
		default: ((uint64_t *)t->data)[i] = u; break;
		}
		return;
	}
	switch (t->dtype) {
	case PB_DT_F32: ((float *)t->data)[i] = (float)x; break;
	case PB_DT_F64: ((double *)t->data)[i] = x; break;
	case PB_DT_F16:
		((uint16_t *)t->data)[i] = pb_f16_from_float((float)x);
		break;
	case PB_DT_BF16:
		((uint16_t *)t->data)[i] = pb_bf16_from_float((float)x);
		break;
	case PB_DT_BOOL: ((uint8_t *)t->data)[i] = x != 0; break;
	default: break;
	}
}

/* Emit the conversion of scalar "x" from type "from" to type "to"
 * (ONNX Cast: floats truncate toward zero into integers, anything nonzero
 * is true); returns the converted value. */
struct name pb_imp_convert(struct imp *s, const char *x, enum pb_dtype from,
			   enum pb_dtype to)
{
	struct name r = pb_imp_fresh(s);
	const char *f = pb_imp_elt(from), *t = pb_imp_elt(to);
	int ff = pb_imp_is_float(from), tf = pb_imp_is_float(to);
	size_t fb = from == PB_DT_BOOL ? 1 : 8 * pb_dtype_size(from);
	size_t tb = to == PB_DT_BOOL ? 1 : 8 * pb_dtype_size(to);
	if (from == to) {
		snprintf(r.s, sizeof(r.s), "%s", x);
	} else if (to == PB_DT_BOOL) {
		struct name z = pb_imp_scalar_dt(s, from, 0);
		pb_imp_emit(s, "%s = arith.%s %s, %s : %s", r.s,
			    ff ? "cmpf une," : "cmpi ne,", x, z.s, f);
	} else if (ff && tf && fb == tb) { /* f16 <-> bf16, through f32 */
		struct name w = pb_imp_convert(s, x, from, PB_DT_F32);
		return pb_imp_convert(s, w.s, PB_DT_F32, to);
	} else if (ff && tf) {
		pb_imp_emit(s, "%s = arith.%s %s : %s to %s", r.s,
			    fb < tb ? "extf" : "truncf", x, f, t);
	} else if (ff) {
		pb_imp_emit(s, "%s = arith.%s %s : %s to %s", r.s,
			    pb_imp_iop(to, "fptosi"), x, f, t);
	} else if (tf) {
		pb_imp_emit(s, "%s = arith.%s %s : %s to %s", r.s,
			    from == PB_DT_BOOL ? "uitofp"
					       : pb_imp_iop(from, "sitofp"),
			    x, f, t);
	} else if (fb == tb) { /* the same bits: signedness only */
		snprintf(r.s, sizeof(r.s), "%s", x);
	} else {
		pb_imp_emit(s, "%s = arith.%s %s : %s to %s", r.s,
			    fb > tb ? "trunci" : from == PB_DT_BOOL ? "extui"
					       : pb_imp_iop(from, "extsi"),
			    x, f, t);
	}
	return r;
}

/* Emit a linalg.generic converting tensor "x" of shape "sh" from element
 * type "from" to "to" elementwise (pb_imp_convert); returns the result. */
struct name pb_imp_convert_tensor(struct imp *s, const char *x,
				  const struct shape *sh, enum pb_dtype from,
				  enum pb_dtype to)
{
	int all[PB_MAX_RANK];
	for (int i = 0; i < sh->rank; i++)
		all[i] = i;
	struct text id = pb_imp_map(sh->rank, sh->rank, all);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', sh->rank);
	struct name e = pb_imp_empty_dt(s, sh, to);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, sh->rank, iters, 1, &x, sh, &from, &id,
			    e.s, sh, to, &id);
	struct name y = pb_imp_convert(s, g.arg[0].s, from, to);
	return pb_imp_gen_end(s, &g, y.s);
}
