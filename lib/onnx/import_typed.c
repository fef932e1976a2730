/* Op lowerings on data of any type the importer computes on (float32,
 * float64, int64, int32, bool; see pb_imp_elt): comparisons, logic,
 * Where, Gather and GatherElements with run-time indices, ArgMax/ArgMin,
 * CumSum and Einsum. Each is folded at import time when its inputs are
 * known and small, else one or two linalg.generic ops. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/import.h"

/* The identity map of rank "n". */
static struct text id_map(int n)
{
	int all[PB_MAX_RANK];
	for (int i = 0; i < n; i++)
		all[i] = i;
	return pb_imp_map(n, n, all);
}

/* Check that input "v" is present, has a type the importer computes on,
 * and (when "want" is not PB_DT_UNDEFINED) that it is "want". */
int pb_imp_check_type(struct imp *s, struct val *v, enum pb_dtype want)
{
	if (!v)
		return pb_imp_node_error(s, "an input is missing");
	if (!pb_imp_elt(v->dtype) || (want && v->dtype != want))
		return pb_imp_node_error(s, "input '%s' has type %s: %s",
					 v->name, pb_dtype_name(v->dtype),
					 want ? "expected bool" : "only "
					 "float, integer "
					 "and bool are supported");
	return PB_OK;
}

/* An elementwise node over the "nin" inputs "in" broadcast NumPy-style:
 * the output shape, known contents when every input is known and small. */
struct bcast {
	int nin;
	struct val *in[3];
	struct shape out;
	int fold;
};

/* Broadcast the inputs of "b" (set by the caller) into b->out; decide
 * whether to fold. */
static int bcast_shape(struct imp *s, struct bcast *b)
{
	b->out = b->in[0]->sh;
	b->fold = 1;
	for (int i = 0; i < b->nin; i++) {
		if (i && pb_imp_broadcast(s, &b->out, &b->in[i]->sh, &b->out))
			return PB_ERR;
		b->fold &= pb_imp_fold_ok(b->in[i]);
	}
	b->fold &= pb_imp_numel(&b->out) <= PB_FOLD_MAX;
	return PB_OK;
}

/* Begin the generic of "b" producing type "odt"; its block arguments are
 * g->arg[0..nin). */
static int bcast_begin(struct imp *s, struct bcast *b, struct gen *g,
		       enum pb_dtype odt)
{
	const char *ins[3];
	struct shape sh[3];
	struct text maps[3];
	enum pb_dtype dt[3];
	for (int i = 0; i < b->nin; i++) {
		if (!(ins[i] = pb_imp_use_dt(s, b->in[i])))
			return PB_ERR;
		sh[i] = b->in[i]->sh;
		maps[i] = pb_imp_bcast_map(&b->out, &sh[i]);
		dt[i] = b->in[i]->dtype;
	}
	struct name e = pb_imp_empty_dt(s, &b->out, odt);
	struct text om = id_map(b->out.rank);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', b->out.rank);
	pb_imp_gen_begin_dt(s, g, b->out.rank, iters, b->nin, ins, sh, dt,
			    maps, e.s, &b->out, odt, &om);
	return PB_OK;
}

/* The comparison and logic ops: ONNX name, arity, the predicates of
 * arith.cmpf and arith.cmpi (NULL: no such comparison), or the i1 op. */
static const struct cmp_op {
	const char *name;
	int arity;
	const char *fpred, *ipred, *logic;
} cmp_ops[] = {
	{"Equal", 2, "oeq", "eq", NULL},
	{"Less", 2, "olt", "slt", NULL},
	{"Greater", 2, "ogt", "sgt", NULL},
	{"LessOrEqual", 2, "ole", "sle", NULL},
	{"GreaterOrEqual", 2, "oge", "sge", NULL},
	{"And", 2, NULL, NULL, "andi"},
	{"Or", 2, NULL, NULL, "ori"},
	{"Xor", 2, NULL, NULL, "xori"},
	{"Not", 1, NULL, NULL, "xori"},
	{NULL, 0, NULL, NULL, NULL},
};

/* The known result of comparison or logic op "c" on "a" and "b". */
static int cmp_fold1(const struct cmp_op *c, double a, double b)
{
	switch (c->name[0] == 'G' ? (c->name[7] ? 'g' : '>')
		: c->name[0] == 'L' ? (c->name[4] ? 'l' : '<')
		: c->name[0]) {
	case 'E': return a == b;
	case '<': return a < b;
	case '>': return a > b;
	case 'l': return a <= b;
	case 'g': return a >= b;
	case 'A': return a != 0 && b != 0;
	case 'O': return a != 0 || b != 0;
	case 'X': return (a != 0) != (b != 0);
	default: return a == 0; /* Not */
	}
}

/* Equal, Less, Greater, LessOrEqual, GreaterOrEqual (float or integer
 * operands of one type, Equal also bool), And, Or, Xor, Not (bool): a
 * bool result, broadcast NumPy-style. */
static int op_compare(struct imp *s)
{
	const struct cmp_op *c = cmp_ops;
	while (strcmp(c->name, s->node->op_type))
		c++;
	struct bcast b = {.nin = c->arity};
	if (pb_imp_nin(s) != c->arity)
		return pb_imp_node_error(s, "expected %d inputs, got %d",
					 c->arity, pb_imp_nin(s));
	for (int i = 0; i < b.nin; i++) {
		b.in[i] = pb_imp_in(s, i);
		if (pb_imp_check_type(s, b.in[i], c->logic ? PB_DT_BOOL : 0))
			return PB_ERR;
	}
	enum pb_dtype dt = b.in[0]->dtype;
	if (b.nin == 2 && b.in[1]->dtype != dt)
		return pb_imp_node_error(s, "inputs of types %s and %s differ",
					 pb_dtype_name(dt),
					 pb_dtype_name(b.in[1]->dtype));
	if (!c->logic && dt == PB_DT_BOOL && strcmp(c->name, "Equal"))
		return pb_imp_node_error(s, "bool operands are not ordered");
	if (bcast_shape(s, &b))
		return PB_ERR;
	if (b.fold) {
		struct pb_tensor *k[2], *t;
		for (int i = 0; i < b.nin; i++)
			if (!(k[i] = pb_imp_known(s, b.in[i])))
				return PB_ERR;
		if (!(t = pb_imp_new_known(PB_DT_BOOL, &b.out)))
			return pb_imp_node_error(s, "out of memory");
		for (int64_t o = 0; o < pb_imp_numel(&b.out); o++) {
			double x = pb_imp_elem_get(k[0], pb_imp_bcast_index(
				&b.out, &b.in[0]->sh, o));
			double y = b.nin < 2 ? 0 : pb_imp_elem_get(k[1],
				pb_imp_bcast_index(&b.out, &b.in[1]->sh, o));
			((unsigned char *)t->data)[o] = cmp_fold1(c, x, y);
		}
		pb_imp_def_known(s, 0, t);
		return PB_OK;
	}
	struct gen g;
	if (bcast_begin(s, &b, &g, PB_DT_BOOL))
		return PB_ERR;
	struct name r = pb_imp_fresh(s);
	if (c->logic && b.nin == 1) {
		struct name t = pb_imp_scalar_dt(s, PB_DT_BOOL, 1);
		pb_imp_emit(s, "%s = arith.xori %s, %s : i1", r.s, g.arg[0].s,
			    t.s);
	} else if (c->logic) {
		pb_imp_emit(s, "%s = arith.%s %s, %s : i1", r.s, c->logic,
			    g.arg[0].s, g.arg[1].s);
	} else {
		int fl = pb_imp_is_float(dt);
		pb_imp_emit(s, "%s = arith.%s %s, %s, %s : %s", r.s,
			    fl ? "cmpf" : "cmpi",
			    fl ? c->fpred : pb_imp_iop(dt, c->ipred),
			    g.arg[0].s, g.arg[1].s, pb_imp_elt(dt));
	}
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, r.s), PB_DT_BOOL,
			      &b.out);
}

/* IsNaN, and IsInf (detect_positive, detect_negative: which infinities
 * count, both by default): one generic of float data into bool. */
static int op_isinf(struct imp *s)
{
	struct bcast b = {.nin = 1};
	int nan = !strcmp(s->node->op_type, "IsNaN");
	int pos = pb_imp_attr_int(s, "detect_positive", 1) != 0;
	int neg = pb_imp_attr_int(s, "detect_negative", 1) != 0;
	if (pb_imp_check_type(s, b.in[0] = pb_imp_in(s, 0), 0))
		return PB_ERR;
	enum pb_dtype dt = b.in[0]->dtype;
	if (!pb_imp_is_float(dt))
		return pb_imp_node_error(s, "input '%s' has type %s: expected "
					 "a float type", b.in[0]->name,
					 pb_dtype_name(dt));
	if (bcast_shape(s, &b))
		return PB_ERR;
	if (b.fold) {
		struct pb_tensor *k = pb_imp_known(s, b.in[0]), *t;
		if (!k)
			return PB_ERR;
		if (!(t = pb_imp_new_known(PB_DT_BOOL, &b.out)))
			return pb_imp_node_error(s, "out of memory");
		for (int64_t o = 0; o < pb_imp_numel(&b.out); o++) {
			double x = pb_imp_elem_get(k, o);
			((unsigned char *)t->data)[o] =
				nan ? isnan(x) : isinf(x) && (x > 0 ? pos : neg);
		}
		pb_imp_def_known(s, 0, t);
		return PB_OK;
	}
	struct gen g;
	if (bcast_begin(s, &b, &g, PB_DT_BOOL))
		return PB_ERR;
	const char *el = pb_imp_elt(dt), *x = g.arg[0].s;
	struct name r = pb_imp_fresh(s);
	if (nan) {
		pb_imp_emit(s, "%s = arith.cmpf uno, %s, %s : %s", r.s, x, x, el);
	} else if (!pos && !neg) {
		pb_imp_emit(s, "%s = arith.constant false", r.s);
	} else if (pos && neg) {
		/* |x| == inf */
		struct name pi = pb_imp_scalar_dt(s, dt, INFINITY);
		struct name a = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = math.absf %s : %s", a.s, x, el);
		pb_imp_emit(s, "%s = arith.cmpf oeq, %s, %s : %s", r.s, a.s,
			    pi.s, el);
	} else {
		struct name inf = pb_imp_scalar_dt(s, dt,
						   pos ? INFINITY : -INFINITY);
		pb_imp_emit(s, "%s = arith.cmpf oeq, %s, %s : %s", r.s, x,
			    inf.s, el);
	}
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, r.s), PB_DT_BOOL,
			      &b.out);
}

/* Where(condition, X, Y): X where the bool condition holds, else Y, all
 * three broadcast NumPy-style. */
static int op_where(struct imp *s)
{
	struct bcast b = {.nin = 3};
	if (pb_imp_nin(s) != 3)
		return pb_imp_node_error(s, "expected 3 inputs, got %d",
					 pb_imp_nin(s));
	for (int i = 0; i < 3; i++)
		b.in[i] = pb_imp_in(s, i);
	if (pb_imp_check_type(s, b.in[0], PB_DT_BOOL) || pb_imp_check_type(s, b.in[1], 0) ||
	    pb_imp_check_type(s, b.in[2], 0))
		return PB_ERR;
	enum pb_dtype dt = b.in[1]->dtype;
	if (b.in[2]->dtype != dt)
		return pb_imp_node_error(s, "X and Y have types %s and %s",
					 pb_imp_elt(dt),
					 pb_imp_elt(b.in[2]->dtype));
	if (bcast_shape(s, &b))
		return PB_ERR;
	if (b.fold) {
		struct pb_tensor *k[3], *t;
		for (int i = 0; i < 3; i++)
			if (!(k[i] = pb_imp_known(s, b.in[i])))
				return PB_ERR;
		if (!(t = pb_imp_new_known(dt, &b.out)))
			return pb_imp_node_error(s, "out of memory");
		size_t esz = pb_dtype_size(dt);
		for (int64_t o = 0; o < pb_imp_numel(&b.out); o++) {
			int64_t j = pb_imp_bcast_index(&b.out, &b.in[0]->sh, o);
			int w = ((unsigned char *)k[0]->data)[j] ? 1 : 2;
			j = pb_imp_bcast_index(&b.out, &b.in[w]->sh, o);
			memcpy((char *)t->data + o * esz,
			       (char *)k[w]->data + j * esz, esz);
		}
		pb_imp_def_known(s, 0, t);
		return PB_OK;
	}
	struct gen g;
	if (bcast_begin(s, &b, &g, dt))
		return PB_ERR;
	struct name r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.select %s, %s, %s : %s", r.s, g.arg[0].s,
		    g.arg[1].s, g.arg[2].s, pb_imp_elt(dt));
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, r.s), dt, &b.out);
}

/* Element "i" of known integer tensor "t", exactly. */
static int64_t known_int(const struct pb_tensor *t, int64_t i)
{
	if (t->dtype == PB_DT_I64)
		return ((int64_t *)t->data)[i];
	return (int64_t)pb_imp_elem_get(t, i);
}

/* Fold Mod over the known inputs of "b": C's remainder (fmod = 1), or
 * with the divisor's sign (fmod = 0, integers), as the lowering below. A
 * zero integer divisor is an error (undefined in ONNX and in C). */
static int fold_mod(struct imp *s, struct bcast *b, int c_rem)
{
	struct pb_tensor *k[2], *t;
	enum pb_dtype dt = b->in[0]->dtype;
	for (int i = 0; i < 2; i++)
		if (!(k[i] = pb_imp_known(s, b->in[i])))
			return PB_ERR;
	if (!(t = pb_imp_new_known(dt, &b->out)))
		return pb_imp_node_error(s, "out of memory");
	for (int64_t o = 0; o < pb_imp_numel(&b->out); o++) {
		double x = pb_imp_elem_get(k[0], pb_imp_bcast_index(&b->out,
						&b->in[0]->sh, o));
		double y = pb_imp_elem_get(k[1], pb_imp_bcast_index(&b->out,
						&b->in[1]->sh, o));
		if (pb_imp_is_float(dt)) {
			pb_imp_elem_set(t, o, fmod(x, y));
			continue;
		}
		if (y == 0) {
			pb_tensor_clear(t);
			free(t);
			return pb_imp_node_error(s, "integer division by zero");
		}
		/* exact on int64 (doubles hold 53 bits) */
		int64_t xi = known_int(k[0], pb_imp_bcast_index(&b->out,
						&b->in[0]->sh, o));
		int64_t yi = known_int(k[1], pb_imp_bcast_index(&b->out,
						&b->in[1]->sh, o));
		int64_t r = yi == -1 ? 0 : xi % yi; /* INT64_MIN % -1 traps */
		if (!c_rem && r && ((r < 0) != (yi < 0)))
			r += yi;
		if (dt == PB_DT_I64)
			((int64_t *)t->data)[o] = r;
		else
			pb_imp_elem_set(t, o, (double)r);
	}
	pb_imp_def_known(s, 0, t);
	return PB_OK;
}

/* Mod: the remainder with the sign of the divisor (integers, fmod = 0)
 * or of the dividend (fmod = 1: arith.remsi, or arith.remf for floats,
 * where fmod = 0 is not defined), broadcast NumPy-style; folded when the
 * inputs are known. */
static int op_mod(struct imp *s)
{
	struct bcast b = {.nin = 2};
	int fmod = pb_imp_attr_int(s, "fmod", 0) != 0;
	if (pb_imp_nin(s) != 2)
		return pb_imp_node_error(s, "expected 2 inputs, got %d",
					 pb_imp_nin(s));
	for (int i = 0; i < 2; i++)
		if (pb_imp_check_type(s, b.in[i] = pb_imp_in(s, i), 0))
			return PB_ERR;
	enum pb_dtype dt = b.in[0]->dtype;
	int fl = pb_imp_is_float(dt);
	if (b.in[1]->dtype != dt || dt == PB_DT_BOOL)
		return pb_imp_node_error(s, "inputs must be numbers of one type");
	if (fl && !fmod)
		return pb_imp_node_error(s, "fmod=0 with float inputs is not "
					 "supported");
	if (bcast_shape(s, &b))
		return PB_ERR;
	if (b.fold)
		return fold_mod(s, &b, fmod);
	struct gen g;
	if (bcast_begin(s, &b, &g, dt))
		return PB_ERR;
	const char *el = pb_imp_elt(dt);
	struct name r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.%s %s, %s : %s", r.s,
		    fl ? "remf" : pb_imp_iop(dt, "remsi"), g.arg[0].s,
		    g.arg[1].s, el);
	if (!fmod && !pb_imp_is_unsigned(dt)) {
		/* r != 0 and sign(r) != sign(b): r + b */
		struct name z = pb_imp_scalar_dt(s, dt, 0);
		struct name nz = pb_imp_fresh(s), rn = pb_imp_fresh(s),
			    bn = pb_imp_fresh(s), diff = pb_imp_fresh(s),
			    fix = pb_imp_fresh(s), sum = pb_imp_fresh(s),
			    y = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.cmpi ne, %s, %s : %s", nz.s, r.s, z.s,
			    el);
		pb_imp_emit(s, "%s = arith.cmpi slt, %s, %s : %s", rn.s, r.s, z.s,
			    el);
		pb_imp_emit(s, "%s = arith.cmpi slt, %s, %s : %s", bn.s,
			    g.arg[1].s, z.s, el);
		pb_imp_emit(s, "%s = arith.xori %s, %s : i1", diff.s, rn.s, bn.s);
		pb_imp_emit(s, "%s = arith.andi %s, %s : i1", fix.s, nz.s, diff.s);
		pb_imp_emit(s, "%s = arith.addi %s, %s : %s", sum.s, r.s,
			    g.arg[1].s, el);
		pb_imp_emit(s, "%s = arith.select %s, %s, %s : %s", y.s, fix.s,
			    sum.s, r.s, el);
		r = y;
	}
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, r.s), dt, &b.out);
}

/* BitShift (direction "LEFT" or "RIGHT") of unsigned integers,
 * broadcast NumPy-style: arith.shli or arith.shrui. */
static int op_bitshift(struct imp *s)
{
	struct bcast b = {.nin = 2};
	const char *dir = pb_imp_attr_str(s, "direction", "");
	int left = !strcmp(dir, "LEFT");
	if (!left && strcmp(dir, "RIGHT"))
		return pb_imp_node_error(s, "direction '%s': expected LEFT or "
					 "RIGHT", dir);
	if (pb_imp_nin(s) != 2)
		return pb_imp_node_error(s, "expected 2 inputs, got %d",
					 pb_imp_nin(s));
	for (int i = 0; i < 2; i++)
		if (pb_imp_check_type(s, b.in[i] = pb_imp_in(s, i), 0))
			return PB_ERR;
	enum pb_dtype dt = b.in[0]->dtype;
	if (b.in[1]->dtype != dt || !pb_imp_is_unsigned(dt))
		return pb_imp_node_error(s, "inputs must be unsigned integers "
					 "of one type");
	if (bcast_shape(s, &b))
		return PB_ERR;
	struct gen g;
	if (bcast_begin(s, &b, &g, dt))
		return PB_ERR;
	struct name r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.%s %s, %s : %s", r.s,
		    left ? "shli" : "shrui", g.arg[0].s, g.arg[1].s,
		    pb_imp_elt(dt));
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, r.s), dt, &b.out);
}

/* Emit "%i = linalg.index <d> : index" and return %i. */
struct name pb_imp_loop_index(struct imp *s, int d)
{
	struct name i = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = linalg.index %d : index", i.s, d);
	return i;
}

/* Emit the index into a dim of size "n" of the integer "idx" of type
 * "dt": negative values count from the end; the result is clamped into
 * [0, n) so that an out-of-range index cannot read outside the tensor. */
struct name pb_imp_index_of(struct imp *s, const char *idx, enum pb_dtype dt,
			    int64_t n)
{
	const char *el = pb_imp_elt(dt);
	struct name z = pb_imp_scalar_dt(s, dt, 0);
	struct name nn = pb_imp_scalar_dt(s, dt, (double)n);
	struct name hi = pb_imp_scalar_dt(s, dt, (double)(n - 1));
	struct name neg = pb_imp_fresh(s), add = pb_imp_fresh(s),
		    sel = pb_imp_fresh(s), lo = pb_imp_fresh(s),
		    cl = pb_imp_fresh(s), r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.%s %s, %s : %s", neg.s,
		    pb_imp_iop(dt, "cmpi slt,"), idx, z.s, el);
	pb_imp_emit(s, "%s = arith.addi %s, %s : %s", add.s, idx, nn.s, el);
	pb_imp_emit(s, "%s = arith.select %s, %s, %s : %s", sel.s, neg.s,
		    add.s, idx, el);
	pb_imp_emit(s, "%s = arith.%s %s, %s : %s", lo.s,
		    pb_imp_iop(dt, "maxsi"), sel.s, z.s, el);
	pb_imp_emit(s, "%s = arith.%s %s, %s : %s", cl.s,
		    pb_imp_iop(dt, "minsi"), lo.s, hi.s, el);
	pb_imp_emit(s, "%s = arith.index_cast%s %s : %s to index", r.s,
		    pb_imp_is_unsigned(dt) ? "ui" : "", cl.s, el);
	return r;
}

/* Emit "tensor.extract <x>[<idx>..]" of "x" (shape "sh", type "dt"). */
struct name pb_imp_extract(struct imp *s, const char *x,
			   const struct shape *sh, enum pb_dtype dt,
			   const struct name *idx)
{
	struct pb_buf b = {0};
	for (int i = 0; i < sh->rank; i++)
		pb_buf_printf(&b, "%s%s", i ? ", " : "", idx[i].s);
	struct name r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = tensor.extract %s[%s] : %s", r.s, x,
		    b.data ? b.data : "", pb_imp_ty_dt(sh, dt).s);
	pb_buf_free(&b);
	return r;
}

/* Gather (run-time indices) and GatherElements: one generic over the
 * output reading the indices through a map and the data with
 * tensor.extract. Gather: out = data.shape[:axis] + ind.shape +
 * data.shape[axis+1:]; GatherElements: out = ind.shape, the index
 * replacing the coordinate along "axis". */
int pb_imp_gather_rt(struct imp *s, struct val *x, struct val *iv, int axis,
		     int elements)
{
	if (pb_imp_check_type(s, x, 0) || pb_imp_check_type(s, iv, 0))
		return PB_ERR;
	if (iv->dtype != PB_DT_I64 && iv->dtype != PB_DT_I32)
		return pb_imp_node_error(s, "indices have type %s: expected "
					 "int64 or int32",
					 pb_dtype_name(iv->dtype));
	int r = x->sh.rank, q = iv->sh.rank;
	struct shape out = {0};
	int imap[PB_MAX_RANK];
	if (elements) {
		if (q != r)
			return pb_imp_node_error(s, "indices of rank %d for data "
						 "of rank %d", q, r);
		out = iv->sh;
		for (int i = 0; i < q; i++)
			imap[i] = i;
	} else {
		if (r + q - 1 > PB_MAX_RANK)
			return pb_imp_node_error(s, "the result has rank %d: at "
						 "most %d is supported",
						 r + q - 1, PB_MAX_RANK);
		for (int i = 0; i < axis; i++)
			out.d[out.rank++] = x->sh.d[i];
		for (int i = 0; i < q; i++) {
			imap[i] = out.rank;
			out.d[out.rank++] = iv->sh.d[i];
		}
		for (int i = axis + 1; i < r; i++)
			out.d[out.rank++] = x->sh.d[i];
	}
	const char *data = pb_imp_use_dt(s, x);
	const char *ind = data ? pb_imp_use_dt(s, iv) : NULL;
	if (!ind)
		return PB_ERR;
	struct text im = pb_imp_map(out.rank, q, imap), om = id_map(out.rank);
	struct name e = pb_imp_empty_dt(s, &out, x->dtype);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', out.rank);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, out.rank, iters, 1, &ind, &iv->sh,
			    &iv->dtype, &im, e.s, &out, x->dtype, &om);
	struct name idx[PB_MAX_RANK];
	for (int i = 0; i < r; i++) {
		if (i == axis)
			idx[i] = pb_imp_index_of(s, g.arg[0].s, iv->dtype,
					  x->sh.d[axis]);
		else
			idx[i] = pb_imp_loop_index(s, elements || i < axis ? i
							   : i - 1 + q);
	}
	struct name y = pb_imp_extract(s, data, &x->sh, x->dtype, idx);
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, y.s), x->dtype, &out);
}

/* The data "*x", indices "*iv" and "axis" attribute (default 0) of the
 * current Gather or GatherElements node into "*axis". */
int pb_imp_gather_args(struct imp *s, struct val **x, struct val **iv,
		       int *axis)
{
	*x = pb_imp_in(s, 0);
	*iv = pb_imp_in(s, 1);
	if (!*iv)
		return pb_imp_node_error(s, "expected 2 inputs");
	return pb_imp_axis(s, pb_imp_attr_int(s, "axis", 0), (*x)->sh.rank,
			   axis);
}

/* GatherElements along "axis" (default 0). */
static int op_gather_elements(struct imp *s)
{
	struct val *x, *iv;
	int axis;
	if (pb_imp_gather_args(s, &x, &iv, &axis))
		return PB_ERR;
	return pb_imp_gather_rt(s, x, iv, axis, 1);
}

/* The index along "axis" of the max (min: "is_min") of float32 "x",
 * the first one holding it (the last: "last"), as an i64 tensor of x's
 * shape without "axis" ("*part"): the max reduction first, then a second
 * reduction over the indices holding it, into an init filled with the
 * dim size (-1). */
static int arg_index(struct imp *s, struct val *x, int axis, int is_min,
		     int last, struct name *res, struct shape *part)
{
	struct name m;
	struct shape msh, full = x->sh;
	if (pb_imp_reduce(s, x, 1u << axis, is_min ? "min" : "max", 0, &m,
			  &msh))
		return PB_ERR;
	const char *ins[2] = {pb_imp_use(s, x), m.s};
	int kept[PB_MAX_RANK];
	part->rank = 0;
	for (int i = 0; i < full.rank; i++)
		if (i != axis) {
			kept[part->rank] = i;
			part->d[part->rank++] = full.d[i];
		}
	struct text maps[2] = {id_map(full.rank),
			       pb_imp_map(full.rank, part->rank, kept)};
	struct shape shs[2] = {full, *part};
	enum pb_dtype dts[2] = {PB_DT_F32, PB_DT_F32};
	struct name init = pb_imp_fill_dt(s, part, PB_DT_I64,
					  last ? -1 : (double)full.d[axis]);
	char iters[PB_MAX_RANK + 1];
	for (int i = 0; i < full.rank; i++)
		iters[i] = i == axis ? 'r' : 'p';
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, full.rank, iters, 2, ins, shs, dts, maps,
			    init.s, part, PB_DT_I64, &maps[1]);
	struct name i = pb_imp_loop_index(s, axis), ii = pb_imp_fresh(s),
		    eq = pb_imp_fresh(s), best = pb_imp_fresh(s),
		    r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.index_cast %s : index to i64", ii.s, i.s);
	pb_imp_emit(s, "%s = arith.cmpf oeq, %s, %s : f32", eq.s, g.arg[0].s,
		    g.arg[1].s);
	pb_imp_emit(s, "%s = arith.%s %s, %s : i64", best.s,
		    last ? "maxsi" : "minsi", g.arg[2].s, ii.s);
	pb_imp_emit(s, "%s = arith.select %s, %s, %s : i64", r.s, eq.s, best.s,
		    g.arg[2].s);
	*res = pb_imp_gen_end(s, &g, r.s);
	return PB_OK;
}

/* Check that "x" is float32 and normalize attribute "axis" (default
 * "dflt") into "*axis". */
static int arg_input(struct imp *s, struct val *x, int64_t dflt, int *axis)
{
	if (pb_imp_check_type(s, x, 0))
		return PB_ERR;
	if (x->dtype != PB_DT_F32)
		return pb_imp_node_error(s, "input '%s' has type %s: only "
					 "float32 is supported", x->name,
					 pb_dtype_name(x->dtype));
	return pb_imp_axis(s, pb_imp_attr_int(s, "axis", dflt), x->sh.rank,
			   axis);
}

/* ArgMax and ArgMin along "axis" (default 0), keepdims (default 1),
 * select_last_index (see arg_index). int64 result. */
static int op_argmax(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0);
	int is_min = !strcmp(s->node->op_type, "ArgMin"), axis;
	int keep = pb_imp_attr_int(s, "keepdims", 1) != 0;
	int last = pb_imp_attr_int(s, "select_last_index", 0) != 0;
	struct name res;
	struct shape part;
	if (arg_input(s, x, 0, &axis) ||
	    arg_index(s, x, axis, is_min, last, &res, &part))
		return PB_ERR;
	struct shape out = part;
	if (keep) {
		out = x->sh;
		out.d[axis] = 1;
		res = pb_imp_reshape_dt(s, res.s, &part, &out, PB_DT_I64);
	}
	return pb_imp_def_ssa(s, res, PB_DT_I64, &out);
}

/* Hardmax (opset 13 on) along "axis" (default -1): 1 at the first index
 * of the max, 0 elsewhere. */
static int op_hardmax(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0);
	int axis;
	struct name idx;
	struct shape part, full = x->sh;
	if (arg_input(s, x, -1, &axis) ||
	    arg_index(s, x, axis, 0, 0, &idx, &part))
		return PB_ERR;
	int kept[PB_MAX_RANK], nk = 0;
	for (int i = 0; i < full.rank; i++)
		if (i != axis)
			kept[nk++] = i;
	struct text im = pb_imp_map(full.rank, nk, kept), om = id_map(full.rank);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', full.rank);
	enum pb_dtype dt = PB_DT_I64;
	struct name e = pb_imp_empty(s, &full);
	const char *in = idx.s;
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, full.rank, iters, 1, &in, &part, &dt, &im,
			    e.s, &full, PB_DT_F32, &om);
	struct name i = pb_imp_loop_index(s, axis), ii = pb_imp_fresh(s),
		    eq = pb_imp_fresh(s), y = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.index_cast %s : index to i64", ii.s, i.s);
	pb_imp_emit(s, "%s = arith.cmpi eq, %s, %s : i64", eq.s, ii.s,
		    g.arg[0].s);
	struct name one = pb_imp_scalar(s, 1), zero = pb_imp_scalar(s, 0);
	pb_imp_emit(s, "%s = arith.select %s, %s, %s : f32", y.s, eq.s, one.s,
		    zero.s);
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, y.s), PB_DT_F32, &full);
}

/* CumSum(x, axis) with exclusive and reverse: y[.., i, ..] = sum of
 * x[.., k, ..] over k <= i (k < i exclusive; k >= i, k > i reversed),
 * one generic whose extra reduction loop k reads x along the axis and
 * adds only the selected terms. The axis must be known, or x 1-d. */
static int op_cumsum(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0), *av = pb_imp_in(s, 1);
	int exclusive = pb_imp_attr_int(s, "exclusive", 0) != 0;
	int reverse = pb_imp_attr_int(s, "reverse", 0) != 0;
	int r = x->sh.rank, axis;
	int64_t a;
	if (!av)
		return pb_imp_node_error(s, "expected 2 inputs");
	if (pb_imp_check_type(s, x, 0))
		return PB_ERR;
	if (x->dtype == PB_DT_BOOL)
		return pb_imp_node_error(s, "input '%s' has type bool: "
					 "expected a number", x->name);
	if (r == 1 && !av->k && !av->init)
		a = 0; /* the only axis of a 1-d input */
	else if (pb_imp_known_ints(s, av, &a, 1, "axis") != 1)
		return s->ctx->nerrors ? PB_ERR
		       : pb_imp_node_error(s, "axis must be a scalar");
	if (r >= PB_MAX_RANK)
		return pb_imp_node_error(s, "rank %d: at most %d is supported",
					 r, PB_MAX_RANK - 1);
	if (pb_imp_axis(s, a, r, &axis))
		return PB_ERR;
	const char *in = pb_imp_use_dt(s, x);
	if (!in)
		return PB_ERR;
	/* loops: the output's dims, then k */
	int xm[PB_MAX_RANK];
	for (int i = 0; i < r; i++)
		xm[i] = i == axis ? r : i;
	struct text im = pb_imp_map(r + 1, r, xm), om;
	for (int i = 0; i < r; i++)
		xm[i] = i;
	om = pb_imp_map(r + 1, r, xm);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', r);
	iters[r] = 'r';
	struct name init = pb_imp_fill_dt(s, &x->sh, x->dtype, 0);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, r + 1, iters, 1, &in, &x->sh, &x->dtype,
			    &im, init.s, &x->sh, x->dtype, &om);
	const char *el = pb_imp_elt(x->dtype);
	int fl = pb_imp_is_float(x->dtype);
	struct name i = pb_imp_loop_index(s, axis), k = pb_imp_loop_index(s, r);
	struct name c = pb_imp_fresh(s), sum = pb_imp_fresh(s),
		    y = pb_imp_fresh(s);
	const char *pred = reverse ? (exclusive ? "ugt" : "uge")
				   : (exclusive ? "ult" : "ule");
	pb_imp_emit(s, "%s = arith.cmpi %s, %s, %s : index", c.s, pred, k.s,
		    i.s);
	pb_imp_emit(s, "%s = arith.%s %s, %s : %s", sum.s, fl ? "addf" : "addi",
		    g.arg[1].s, g.arg[0].s, el);
	pb_imp_emit(s, "%s = arith.select %s, %s, %s : %s", y.s, c.s, sum.s,
		    g.arg[1].s, el);
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, y.s), x->dtype, &x->sh);
}

/* Einsum: the equation's letters become the loops of one generic (the
 * output's letters parallel, in their order, then the summed ones), each
 * operand read through the map of its letters (a repeated letter reads a
 * diagonal), the product of the operands accumulated into zeros. An
 * ellipsis stands for the same leading dims in every operand and the
 * output. Without "->" the output is the letters that occur once, in
 * alphabetical order. */
static int op_einsum(struct imp *s)
{
	const char *eq = pb_imp_attr_str(s, "equation", NULL);
	int nin = pb_imp_nin(s);
	struct val *in[8];
	if (!eq)
		return pb_imp_node_error(s, "attribute 'equation' is missing");
	if (nin < 1 || nin > 8)
		return pb_imp_node_error(s, "expected 1 to 8 inputs, got %d",
					 nin);
	for (int i = 0; i < nin; i++) {
		in[i] = pb_imp_in(s, i);
		if (!in[i] || pb_imp_check_type(s, in[i], 0))
			return in[i] ? PB_ERR
			       : pb_imp_node_error(s, "input %d is missing", i);
		if (in[i]->dtype != in[0]->dtype || in[i]->dtype == PB_DT_BOOL)
			return pb_imp_node_error(s, "inputs must be numbers of "
						 "one type");
	}
	enum pb_dtype dt = in[0]->dtype;
	/* the terms: letters per operand, the output's after "->";
	 * '.' marks an ellipsis */
	char terms[9][PB_MAX_RANK + 1];
	int nterm = 0, len = 0, has_out = 0, ell_rank = -1;
	for (const char *p = eq;; p++) {
		if (*p == ' ')
			continue;
		if (*p == ',' || *p == '-' || !*p) {
			if (nterm == 9)
				break;
			terms[nterm++][len] = 0;
			len = 0;
			if (*p == '-') {
				if (p[1] != '>' || has_out)
					return pb_imp_node_error(
						s, "bad equation '%s'", eq);
				has_out = 1;
				p++;
			}
			if (!*p)
				break;
			continue;
		}
		if (*p == '.' && p[1] == '.' && p[2] == '.') {
			p += 2;
		} else if (!((*p >= 'a' && *p <= 'z') ||
			     (*p >= 'A' && *p <= 'Z'))) {
			return pb_imp_node_error(s, "bad equation '%s'", eq);
		}
		if (len == PB_MAX_RANK)
			return pb_imp_node_error(s, "bad equation '%s'", eq);
		terms[nterm][len++] = *p;
	}
	if (nterm != nin + has_out)
		return pb_imp_node_error(s, "equation '%s' has %d operands for %d "
					 "inputs", eq, nterm - has_out, nin);
	/* letters: their sizes; ellipsis dims get the letters '0'.. */
	int64_t size[128];
	int seen[128] = {0};
	char full[9][2 * PB_MAX_RANK + 1];
	for (int t = 0; t < nin; t++) {
		int nl = (int)strlen(terms[t]), e = strchr(terms[t], '.') != NULL;
		int er = in[t]->sh.rank - (nl - e);
		if ((!e && er) || er < 0 || (e && ell_rank >= 0 && er != ell_rank))
			return pb_imp_node_error(s, "equation term '%s' does not "
						 "match input of rank %d",
						 terms[t], in[t]->sh.rank);
		if (e)
			ell_rank = er;
		int d = 0, k = 0;
		for (const char *p = terms[t]; *p; p++) {
			if (*p == '.') {
				for (int j = 0; j < er; j++)
					full[t][k++] = (char)('0' + j);
			} else {
				full[t][k++] = *p;
			}
		}
		full[t][k] = 0;
		for (k = 0; full[t][k]; k++, d++) {
			int l = (unsigned char)full[t][k];
			if (seen[l] && size[l] != in[t]->sh.d[d])
				return pb_imp_node_error(s, "letter '%c' has sizes "
							 "%lld and %lld",
							 full[t][k],
							 (long long)size[l],
							 (long long)in[t]->sh.d[d]);
			seen[l]++;
			size[l] = in[t]->sh.d[d];
		}
	}
	char outl[2 * PB_MAX_RANK + 1] = "";
	int no = 0;
	if (has_out) {
		for (const char *p = terms[nin]; *p; p++) {
			if (*p == '.') {
				for (int j = 0; j < (ell_rank > 0 ? ell_rank : 0);
				     j++)
					outl[no++] = (char)('0' + j);
			} else {
				if (!seen[(unsigned char)*p] || strchr(outl, *p))
					return pb_imp_node_error(
						s, "bad output term '%s'",
						terms[nin]);
				outl[no++] = *p;
			}
			outl[no] = 0;
		}
	} else {
		for (int j = 0; j < (ell_rank > 0 ? ell_rank : 0); j++)
			outl[no++] = (char)('0' + j);
		for (int l = 'A'; l <= 'z' && no < PB_MAX_RANK + 1; l++)
			if (seen[l] == 1 && l > '9')
				outl[no++] = (char)l;
	}
	outl[no] = 0;
	/* loops: output letters, then the summed ones */
	char loops[128];
	int nl = 0;
	memcpy(loops, outl, no);
	nl = no;
	for (int t = 0; t < nin; t++)
		for (const char *p = full[t]; *p; p++)
			if (!memchr(loops, *p, nl) && nl < (int)sizeof(loops))
				loops[nl++] = *p;
	if (nl > 2 * PB_MAX_RANK || no > PB_MAX_RANK)
		return pb_imp_node_error(s, "equation '%s' has too many indices",
					 eq);
	struct shape out = {no, {0}};
	char iters[2 * PB_MAX_RANK + 1];
	int res[PB_MAX_RANK];
	for (int i = 0; i < nl; i++) {
		iters[i] = i < no ? 'p' : 'r';
		if (i < no)
			out.d[i] = size[(unsigned char)loops[i]];
	}
	const char *ins[8];
	struct shape shs[8];
	struct text maps[8];
	enum pb_dtype dts[8];
	for (int t = 0; t < nin; t++) {
		if (!(ins[t] = pb_imp_use_dt(s, in[t])))
			return PB_ERR;
		shs[t] = in[t]->sh;
		dts[t] = dt;
		for (int k = 0; full[t][k]; k++)
			res[k] = (int)((char *)memchr(loops, full[t][k], nl) -
				       loops);
		maps[t] = pb_imp_map(nl, in[t]->sh.rank, res);
	}
	for (int i = 0; i < no; i++)
		res[i] = i;
	struct text om = pb_imp_map(nl, no, res);
	struct name init = pb_imp_fill_dt(s, &out, dt, 0);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, nl, iters, nin, ins, shs, dts, maps, init.s,
			    &out, dt, &om);
	const char *el = pb_imp_elt(dt);
	int fl = pb_imp_is_float(dt);
	struct name p = g.arg[0];
	for (int t = 1; t < nin; t++) {
		struct name q = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.%s %s, %s : %s", q.s,
			    fl ? "mulf" : "muli", p.s, g.arg[t].s, el);
		p = q;
	}
	struct name y = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.%s %s, %s : %s", y.s, fl ? "addf" : "addi",
		    g.arg[nin].s, p.s, el);
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, y.s), dt, &out);
}

/* Emit the known int64 (or f32 when "w") 1-d table "v" of "n" values as
 * a dense constant; returns its name. */
static struct name table(struct imp *s, const double *v, int64_t n, int w)
{
	struct shape sh = {1, {n}};
	struct val t = {.name = "table", .dtype = w ? PB_DT_F32 : PB_DT_I64,
			.sh = sh};
	struct name r = {{0}};
	t.k = pb_imp_new_known(t.dtype, &sh);
	if (!t.k) {
		pb_imp_node_error(s, "out of memory");
		return r;
	}
	for (int64_t i = 0; i < n; i++)
		pb_imp_elem_set(t.k, i, v[i]);
	const char *c = pb_imp_use_dt(s, &t);
	if (c)
		snprintf(r.s, sizeof(r.s), "%s", c);
	pb_tensor_clear(t.k);
	free(t.k);
	return r;
}

/* Resample "x" into shape "out": along each dim d with lo[d] set, output
 * coordinate i reads input coordinate lo[d][i] (nearest, pads), or, with
 * hi[d] and w[d] set, (1 - w) * x[lo] + w * x[hi] (linear; the corners of
 * all such dims are combined). Other dims are copied. The tables are
 * constants read through 1-d maps; the data is read with tensor.extract.
 * Defines output 0. */
int pb_imp_resample(struct imp *s, struct val *x, const struct shape *out,
		    double *const *lo, double *const *hi,
		    double *const *w)
{
	int r = out->rank, nt = 0, lin[PB_MAX_RANK], nlin = 0;
	const char *ins[3 * PB_MAX_RANK];
	struct name tn[3 * PB_MAX_RANK];
	struct shape shs[3 * PB_MAX_RANK];
	struct text maps[3 * PB_MAX_RANK];
	enum pb_dtype dts[3 * PB_MAX_RANK];
	int slot[PB_MAX_RANK][3];
	if (pb_imp_check_type(s, x, 0))
		return PB_ERR;
	if (r < 0 || r > PB_MAX_RANK || r != x->sh.rank)
		return pb_imp_node_error(s, "bad rank %d", r);
	if (hi && w && !pb_imp_is_float(x->dtype))
		return pb_imp_node_error(s, "linear interpolation of %s data is "
					 "not supported",
					 pb_dtype_name(x->dtype));
	const char *data = pb_imp_use_dt(s, x);
	if (!data)
		return PB_ERR;
	for (int d = 0; d < r; d++) {
		double *const tabs[3] = {lo[d], hi ? hi[d] : NULL,
					 w ? w[d] : NULL};
		if (tabs[1])
			lin[nlin++] = d;
		for (int k = 0; k < 3; k++) {
			slot[d][k] = -1;
			if (!tabs[k])
				continue;
			tn[nt] = table(s, tabs[k], out->d[d], k == 2);
			if (!tn[nt].s[0])
				return PB_ERR;
			ins[nt] = tn[nt].s;
			shs[nt] = (struct shape){1, {out->d[d]}};
			maps[nt] = pb_imp_map(r, 1, &d);
			dts[nt] = k == 2 ? PB_DT_F32 : PB_DT_I64;
			slot[d][k] = nt++;
		}
	}
	struct name e = pb_imp_empty_dt(s, out, x->dtype);
	struct text om = id_map(r);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', r);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, r, iters, nt, ins, shs, dts, maps, e.s,
			    out, x->dtype, &om);
	const char *el = pb_imp_elt(x->dtype);
	struct name idx[PB_MAX_RANK], acc = {{0}};
	for (int d = 0; d < r; d++) {
		if (slot[d][0] < 0) {
			idx[d] = pb_imp_loop_index(s, d);
		} else {
			idx[d] = pb_imp_fresh(s);
			pb_imp_emit(s, "%s = arith.index_cast %s : i64 to index",
				    idx[d].s, g.arg[slot[d][0]].s);
		}
	}
	for (int c = 0; c < 1 << nlin; c++) {
		struct name ci[PB_MAX_RANK], wt = {{0}};
		memcpy(ci, idx, sizeof(idx[0]) * r);
		for (int j = 0; j < nlin; j++) {
			int d = lin[j], up = c >> j & 1;
			struct name f = g.arg[slot[d][2]];
			if (up) {
				ci[d] = pb_imp_fresh(s);
				pb_imp_emit(s, "%s = arith.index_cast %s : i64 to "
					    "index", ci[d].s,
					    g.arg[slot[d][1]].s);
			} else {
				struct name one = pb_imp_scalar(s, 1);
				f = pb_imp_fresh(s);
				pb_imp_emit(s, "%s = arith.subf %s, %s : f32",
					    f.s, one.s, g.arg[slot[d][2]].s);
			}
			if (!wt.s[0]) {
				wt = f;
			} else {
				struct name m = pb_imp_fresh(s);
				pb_imp_emit(s, "%s = arith.mulf %s, %s : f32",
					    m.s, wt.s, f.s);
				wt = m;
			}
		}
		struct name v = pb_imp_extract(s, data, &x->sh, x->dtype, ci);
		if (!nlin) {
			acc = v;
			break;
		}
		struct name wv = pb_imp_convert(s, wt.s, PB_DT_F32, x->dtype);
		struct name p = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.mulf %s, %s : %s", p.s, v.s, wv.s, el);
		if (!acc.s[0]) {
			acc = p;
		} else {
			struct name a2 = pb_imp_fresh(s);
			pb_imp_emit(s, "%s = arith.addf %s, %s : %s", a2.s, acc.s,
				    p.s, el);
			acc = a2;
		}
	}
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, acc.s), x->dtype, out);
}

/* Resample float32 "x" (shape "*sh") along dim "d" to "m" elements with
 * "ntap" taps: output coordinate i along d is the sum over t of
 * w[t][i] * x[.., idx[t][i], ..] (the tables are constants read through
 * 1-d maps, the data with tensor.extract). Updates "*sh"; returns the
 * result (empty after reporting an error). */
static struct name resample_taps(struct imp *s, const char *x,
				 struct shape *sh, int d, int64_t m, int ntap,
				 double *const *idx, double *const *w)
{
	struct name bad = {{0}};
	struct shape out = *sh;
	int r = sh->rank;
	if (r < 1 || r > PB_MAX_RANK || d < 0 || d >= r || ntap > 4)
		return bad;
	out.d[d] = m;
	const char *ins[8];
	struct name tn[8];
	struct shape shs[8];
	struct text maps[8];
	enum pb_dtype dts[8];
	for (int k = 0; k < 2 * ntap; k++) {
		tn[k] = table(s, k < ntap ? idx[k] : w[k - ntap], m, k >= ntap);
		if (!tn[k].s[0])
			return bad;
		ins[k] = tn[k].s;
		shs[k] = (struct shape){1, {m}};
		maps[k] = pb_imp_map(r, 1, &d);
		dts[k] = k < ntap ? PB_DT_I64 : PB_DT_F32;
	}
	struct name e = pb_imp_empty(s, &out);
	struct text om = id_map(r);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', r);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, r, iters, 2 * ntap, ins, shs, dts, maps, e.s,
			    &out, PB_DT_F32, &om);
	struct name ci[PB_MAX_RANK], acc = {{0}};
	for (int j = 0; j < r; j++)
		if (j != d)
			ci[j] = pb_imp_loop_index(s, j);
	for (int t = 0; t < ntap; t++) {
		ci[d] = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.index_cast %s : i64 to index",
			    ci[d].s, g.arg[t].s);
		struct name v = pb_imp_extract(s, x, sh, PB_DT_F32, ci);
		struct name p = pb_imp_scalar_op(s, "arith.mulf", v.s,
						 g.arg[ntap + t].s);
		acc = t ? pb_imp_scalar_op(s, "arith.addf", acc.s, p.s) : p;
	}
	*sh = out;
	return pb_imp_gen_end(s, &g, acc.s);
}

/* The cubic convolution weights (Keys, coefficient "a") of the four taps
 * at distances 1 + ratio, ratio, 1 - ratio, 2 - ratio into "c". */
static void cubic_coeffs(double ratio, double a, double *c)
{
	double x[4] = {1 + ratio, ratio, 1 - ratio, 2 - ratio};
	for (int t = 0; t < 4; t++) {
		double v = x[t];
		c[t] = v <= 1 ? ((a + 2) * v - (a + 3)) * v * v + 1
			      : ((a * v - 5 * a) * v + 8 * a) * v - 4 * a;
	}
}

/* The four taps of cubic resampling at input coordinate "c" of a dim of
 * "n" elements, as ONNX's reference picks them: ratio = c - floor(c) in
 * (0, 1] (1 when c is whole: the taps floor(c) - 2 .. floor(c) + 1),
 * the taps the four indices nearest c (ties to the lower), their
 * weights cubic_coeffs; with "excl" the taps outside the input get 0 and
 * the weights are renormalized; indices are clamped into the input
 * (edge padding). */
static void cubic_taps(double c, int64_t n, double a, int excl,
		       double *idx, double *w)
{
	double f = floor(c), ratio = c == f ? 1 : c - f;
	double first = c == f ? f - 2 : f - 1, sum = 0;
	cubic_coeffs(ratio, a, w);
	for (int t = 0; t < 4; t++) {
		idx[t] = first + t;
		if (excl && (idx[t] < 0 || idx[t] > n - 1))
			w[t] = 0;
		sum += w[t];
	}
	for (int t = 0; t < 4; t++) {
		if (excl)
			w[t] /= sum;
		idx[t] = idx[t] < 0 ? 0 : idx[t] > n - 1 ? n - 1 : idx[t];
	}
}

/* The input coordinate of output coordinate "i" along a dim resized from
 * "n" to "m" by "scale" under coordinate transformation "mode" (NULL
 * when the mode is not supported). */
static int src_coord(const char *mode, double i, int64_t n, int64_t m,
		     double scale, double *x)
{
	if (!strcmp(mode, "half_pixel"))
		*x = (i + 0.5) / scale - 0.5;
	else if (!strcmp(mode, "pytorch_half_pixel"))
		*x = m > 1 ? (i + 0.5) / scale - 0.5 : 0;
	else if (!strcmp(mode, "align_corners"))
		/* the resized length unrounded, as ONNX's reference has it
		 * (m itself when sizes are given) */
		*x = m == 1 ? 0 : i * (double)(n - 1) / (n * scale - 1);
	else if (!strcmp(mode, "asymmetric"))
		*x = i / scale;
	else if (!strcmp(mode, "tf_half_pixel_for_nn"))
		*x = (i + 0.5) / scale;
	else
		return PB_ERR;
	return PB_OK;
}

/* Round "x" to an integer by nearest_mode "mode" (PB_ERR when unknown). */
static int nearest(const char *mode, double x, double *r)
{
	if (!strcmp(mode, "round_prefer_floor"))
		*r = x - floor(x) == 0.5 ? floor(x) : round(x);
	else if (!strcmp(mode, "round_prefer_ceil"))
		*r = x - floor(x) == 0.5 ? ceil(x) : round(x);
	else if (!strcmp(mode, "floor"))
		*r = floor(x);
	else if (!strcmp(mode, "ceil"))
		*r = ceil(x);
	else
		return PB_ERR;
	return PB_OK;
}

/* Cubic Resize of "x" into "out" (scales "scale", coordinate
 * transformation "ctm", coefficient "a", exclude_outside "excl"): one
 * four-tap resample_taps generic per resized dim, computed in float32.
 * Defines output 0. */
static int resize_cubic(struct imp *s, struct val *x, const struct shape *out,
			const double *scale, const char *ctm, double a,
			int excl)
{
	if (x->dtype != PB_DT_F32)
		return pb_imp_node_error(s, "cubic interpolation of %s data is "
					 "not supported",
					 pb_dtype_name(x->dtype));
	const char *cur = pb_imp_use(s, x);
	if (!cur)
		return PB_ERR;
	struct name r;
	snprintf(r.s, sizeof(r.s), "%s", cur);
	struct shape sh = x->sh;
	for (int d = 0; d < out->rank; d++) {
		int64_t n = x->sh.d[d], mm = out->d[d];
		if (n == mm && scale[d] == 1.0)
			continue;
		double *idx[4], *w[4];
		int ok = 1;
		for (int t = 0; t < 4; t++) {
			idx[t] = calloc(mm ? mm : 1, sizeof(double));
			w[t] = calloc(mm ? mm : 1, sizeof(double));
			ok &= idx[t] && w[t];
		}
		for (int64_t i = 0; ok && i < mm; i++) {
			double c, ti[4], tw[4];
			src_coord(ctm, (double)i, n, mm, scale[d], &c);
			cubic_taps(c, n, a, excl, ti, tw);
			for (int t = 0; t < 4; t++) {
				idx[t][i] = ti[t];
				w[t][i] = tw[t];
			}
		}
		if (ok)
			r = resample_taps(s, r.s, &sh, d, mm, 4, idx, w);
		for (int t = 0; t < 4; t++) {
			free(idx[t]);
			free(w[t]);
		}
		if (!ok)
			return pb_imp_node_error(s, "out of memory");
		if (!r.s[0])
			return PB_ERR;
	}
	return pb_imp_def_ssa(s, r, PB_DT_F32, &sh);
}

/* Resize (opset 10 on) and Upsample: nearest and linear modes; scales
 * known (attribute of Upsample 7, else an input), or sizes known, or the
 * output's shape declared (then the scales are out / in). Coordinates
 * and weights are computed at import into tables (pb_imp_resample).
 * Before opset 11: asymmetric coordinates, nearest rounds down. */
static int op_resize(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0);
	int up = !strcmp(s->node->op_type, "Upsample"), r = x->sh.rank;
	int old = up || s->opset < 11;
	const char *m = pb_imp_attr_str(s, "mode", "nearest");
	int lin = !strcmp(m, "linear") || !strcmp(m, "bilinear");
	int cubic = !strcmp(m, "cubic") && !old;
	double ca = pb_imp_attr_float(s, "cubic_coeff_a", -0.75f);
	int excl = pb_imp_attr_int(s, "exclude_outside", 0) != 0;
	if (!lin && !cubic && strcmp(m, "nearest"))
		return pb_imp_node_error(s, "mode '%s' is not supported", m);
	char ctm[64], nm[64];
	snprintf(ctm, sizeof(ctm), "%s", old ? "asymmetric"
		 : pb_imp_attr_str(s, "coordinate_transformation_mode",
				   "half_pixel"));
	snprintf(nm, sizeof(nm), "%s", old ? "floor"
		 : pb_imp_attr_str(s, "nearest_mode", "round_prefer_floor"));
	if (pb_imp_attr_int(s, "antialias", 0))
		return pb_imp_node_error(s, "antialias=1 is not supported");
	if (strcmp(pb_imp_attr_str(s, "keep_aspect_ratio_policy", "stretch"),
		   "stretch"))
		return pb_imp_node_error(s, "keep_aspect_ratio_policy '%s' is "
					 "not supported", pb_imp_attr_str(
					 s, "keep_aspect_ratio_policy", ""));
	if (pb_imp_attr(s, "axes"))
		return pb_imp_node_error(s, "attribute 'axes' is not supported");
	double scale[PB_MAX_RANK], dummy;
	struct shape out = x->sh;
	struct val *sv = up || s->opset < 11 ? pb_imp_in(s, 1)
			 : pb_imp_in(s, 2);
	struct val *zv = up || s->opset < 11 ? NULL : pb_imp_in(s, 3);
	struct pb_tensor *sk = sv && pb_imp_numel(&sv->sh) ? pb_imp_known(s, sv)
				: NULL;
	struct pb_tensor *zk = zv ? pb_imp_known(s, zv) : NULL;
	const Onnx__AttributeProto *sa = pb_imp_attr(s, "scales");
	if (s->ctx->nerrors)
		return PB_ERR;
	if (sa) {
		if ((int)sa->n_floats != r)
			return pb_imp_node_error(s, "scales has %zu values for "
						 "rank %d", sa->n_floats, r);
		for (int d = 0; d < r; d++)
			scale[d] = sa->floats[d];
	} else if (sk) {
		if (pb_tensor_numel(sk) != r || sk->dtype != PB_DT_F32)
			return pb_imp_node_error(s, "scales must be %d float "
						 "values", r);
		for (int d = 0; d < r; d++)
			scale[d] = ((float *)sk->data)[d];
	} else if (zk || (zv && !pb_imp_declared_shape(s, s->node->output[0],
						       &out))) {
		int64_t sz[PB_MAX_RANK];
		if (zk && pb_imp_known_ints(s, zv, sz, PB_MAX_RANK,
					    "sizes") != r)
			return s->ctx->nerrors ? PB_ERR
			       : pb_imp_node_error(s, "sizes must have %d "
						   "values", r);
		for (int d = 0; d < r; d++) {
			out.d[d] = zk ? sz[d] : out.d[d];
			scale[d] = (double)out.d[d] / (double)x->sh.d[d];
		}
		if (out.rank != r)
			return pb_imp_node_error(s, "the declared output has rank "
						 "%d for rank %d", out.rank, r);
	} else {
		return pb_imp_node_error(s, "scales or sizes must be known at "
					 "import time");
	}
	if (!sa && !sk) {
	} else {
		for (int d = 0; d < r; d++) {
			if (!(scale[d] > 0))
				return pb_imp_node_error(s, "scale %g is not "
							 "positive", scale[d]);
			out.d[d] = (int64_t)floor(x->sh.d[d] * scale[d]);
		}
	}
	if (src_coord(ctm, 0, 1, 1, 1, &dummy))
		return pb_imp_node_error(s, "coordinate_transformation_mode "
					 "'%s' is not supported", ctm);
	if (!lin && !cubic && nearest(nm, 0, &dummy))
		return pb_imp_node_error(s, "nearest_mode '%s' is not supported",
					 nm);
	if (pb_imp_numel(&out) > ((int64_t)1 << 31))
		return pb_imp_node_error(s, "the output is too large");
	if (cubic)
		return resize_cubic(s, x, &out, scale, ctm, ca, excl);
	double *lo[PB_MAX_RANK] = {0}, *hi[PB_MAX_RANK] = {0},
	       *w[PB_MAX_RANK] = {0};
	int rc = PB_OK;
	for (int d = 0; d < r && !rc; d++) {
		int64_t n = x->sh.d[d], mm = out.d[d];
		if (n == mm && scale[d] == 1.0)
			continue;
		lo[d] = calloc(mm ? mm : 1, sizeof(double));
		hi[d] = calloc(mm ? mm : 1, sizeof(double));
		w[d] = calloc(mm ? mm : 1, sizeof(double));
		if (!lo[d] || !hi[d] || !w[d]) {
			rc = pb_imp_node_error(s, "out of memory");
			break;
		}
		for (int64_t i = 0; i < mm; i++) {
			double c, k;
			src_coord(ctm, (double)i, n, mm, scale[d], &c);
			if (lin) {
				c = c < 0 ? 0 : c > n - 1 ? n - 1 : c;
				k = floor(c);
				lo[d][i] = k;
				hi[d][i] = k + 1 < n ? k + 1 : n - 1;
				w[d][i] = c - k;
			} else {
				nearest(nm, c, &k);
				lo[d][i] = k < 0 ? 0 : k > n - 1 ? n - 1 : k;
			}
		}
		if (!lin) {
			free(hi[d]);
			free(w[d]);
			hi[d] = w[d] = NULL;
		}
	}
	if (!rc)
		rc = pb_imp_resample(s, x, &out, lo, lin ? hi : NULL,
				     lin ? w : NULL);
	for (int d = 0; d < r; d++) {
		free(lo[d]);
		free(hi[d]);
		free(w[d]);
	}
	return rc;
}

/* Trilu: the upper (upper = 1, default) or lower triangle of the last two
 * dims, above or below diagonal k (input 1, default 0; read with
 * tensor.extract when it is given at run time), the rest zero. */
static int op_trilu(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0), *kv = pb_imp_in(s, 1);
	int upper = pb_imp_attr_int(s, "upper", 1) != 0, r = x->sh.rank;
	if (pb_imp_check_type(s, x, 0))
		return PB_ERR;
	if (r < 2)
		return pb_imp_node_error(s, "input must have rank >= 2");
	if (kv && (kv->dtype != PB_DT_I64 || pb_imp_numel(&kv->sh) != 1))
		return pb_imp_node_error(s, "k must be an int64 scalar");
	int64_t k = 0;
	const char *kt = NULL;
	if (kv && (kv->k || kv->init)) {
		if (pb_imp_known_ints(s, kv, &k, 1, "k") != 1)
			return PB_ERR;
	} else if (kv && kv->sh.rank) {
		return pb_imp_node_error(s, "k given at run time must have "
					 "rank 0");
	} else if (kv && !(kt = pb_imp_use_dt(s, kv))) {
		return PB_ERR;
	}
	const char *in = pb_imp_use_dt(s, x);
	if (!in)
		return PB_ERR;
	struct text id = id_map(r);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', r);
	struct name e = pb_imp_empty_dt(s, &x->sh, x->dtype);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, r, iters, 1, &in, &x->sh, &x->dtype, &id,
			    e.s, &x->sh, x->dtype, &id);
	struct name i = pb_imp_loop_index(s, r - 2), j = pb_imp_loop_index(s, r - 1);
	struct name ii = pb_imp_fresh(s), jj = pb_imp_fresh(s),
		    d = pb_imp_fresh(s), c = pb_imp_fresh(s), y = pb_imp_fresh(s);
	struct name kk;
	if (kt) {
		kk = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = tensor.extract %s[] : %s", kk.s, kt,
			    pb_imp_ty_dt(&kv->sh, PB_DT_I64).s);
	} else {
		kk = pb_imp_scalar_dt(s, PB_DT_I64, (double)k);
	}
	pb_imp_emit(s, "%s = arith.index_cast %s : index to i64", ii.s, i.s);
	pb_imp_emit(s, "%s = arith.index_cast %s : index to i64", jj.s, j.s);
	pb_imp_emit(s, "%s = arith.subi %s, %s : i64", d.s, jj.s, ii.s);
	pb_imp_emit(s, "%s = arith.cmpi %s, %s, %s : i64", c.s,
		    upper ? "sge" : "sle", d.s, kk.s);
	struct name z = pb_imp_scalar_dt(s, x->dtype, 0);
	pb_imp_emit(s, "%s = arith.select %s, %s, %s : %s", y.s, c.s,
		    g.arg[0].s, z.s, pb_imp_elt(x->dtype));
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, y.s), x->dtype, &x->sh);
}

/* DepthToSpace (modes DCR, CRD) and SpaceToDepth with "blocksize" b on
 * NCHW: a reshape to 6-d, a linalg.transpose, a reshape back to 4-d. */
static int op_depth_space(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0);
	int to_space = !strcmp(s->node->op_type, "DepthToSpace");
	int64_t b = pb_imp_attr_int(s, "blocksize", 0);
	char mode[8];
	snprintf(mode, sizeof(mode), "%s", pb_imp_attr_str(s, "mode", "DCR"));
	if (pb_imp_check_type(s, x, 0))
		return PB_ERR;
	if (x->sh.rank != 4)
		return pb_imp_node_error(s, "input must have rank 4");
	int64_t N = x->sh.d[0], C = x->sh.d[1], H = x->sh.d[2], W = x->sh.d[3];
	if (b < 1 || (to_space ? C % (b * b) : H % b || W % b))
		return pb_imp_node_error(s, "blocksize %lld does not divide the "
					 "input %s", (long long)b,
					 pb_imp_ty(&x->sh).s);
	int crd = !strcmp(mode, "CRD");
	if (to_space && !crd && strcmp(mode, "DCR"))
		return pb_imp_node_error(s, "mode '%s' is not supported", mode);
	struct shape six, perm6, out;
	int64_t perm[6];
	static const int64_t dcr[6] = {0, 3, 4, 1, 5, 2},
			     crdp[6] = {0, 1, 4, 2, 5, 3},
			     s2d[6] = {0, 3, 5, 1, 2, 4};
	if (to_space) {
		int64_t c = C / (b * b);
		six = crd ? (struct shape){6, {N, c, b, b, H, W}}
			  : (struct shape){6, {N, b, b, c, H, W}};
		memcpy(perm, crd ? crdp : dcr, sizeof(perm));
		out = (struct shape){4, {N, c, H * b, W * b}};
	} else {
		six = (struct shape){6, {N, C, H / b, b, W / b, b}};
		memcpy(perm, s2d, sizeof(perm));
		out = (struct shape){4, {N, C * b * b, H / b, W / b}};
	}
	perm6.rank = 6;
	for (int i = 0; i < 6; i++)
		perm6.d[i] = six.d[perm[i]];
	const char *in = pb_imp_use_dt(s, x);
	if (!in)
		return PB_ERR;
	struct name r = pb_imp_reshape_dt(s, in, &x->sh, &six, x->dtype);
	struct name e = pb_imp_empty_dt(s, &perm6, x->dtype),
		    t = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = linalg.transpose ins(%s : %s) outs(%s : %s) "
		    "permutation = %s", t.s, r.s,
		    pb_imp_ty_dt(&six, x->dtype).s, e.s,
		    pb_imp_ty_dt(&perm6, x->dtype).s, pb_imp_ints(6, perm).s);
	r = pb_imp_reshape_dt(s, t.s, &perm6, &out, x->dtype);
	return pb_imp_def_ssa(s, r, x->dtype, &out);
}

/* LRN over the channels (dim 1): y = x / (bias + alpha / size * sum of
 * x^2 over the window [c - (size - 1) / 2, c + size / 2])^beta. The
 * channels are zero-padded; a reduction generic with an extra loop k
 * reads padded[n, c + k, ..] (the map "d1 + dk"); an elementwise generic
 * divides. */
static int op_lrn(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0);
	int64_t size = pb_imp_attr_int(s, "size", 0);
	double alpha = pb_imp_attr_float(s, "alpha", 0.0001f);
	double beta = pb_imp_attr_float(s, "beta", 0.75f);
	double bias = pb_imp_attr_float(s, "bias", 1.0f);
	int r = x->sh.rank;
	if (r < 3 || r >= PB_MAX_RANK)
		return pb_imp_node_error(s, "input must have rank 3 to %d",
					 PB_MAX_RANK - 1);
	if (size < 1)
		return pb_imp_node_error(s, "size=%lld is not supported",
					 (long long)size);
	const char *in = pb_imp_use(s, x);
	if (!in)
		return PB_ERR;
	int64_t lo[PB_MAX_RANK] = {0}, hi[PB_MAX_RANK] = {0};
	lo[1] = (size - 1) / 2;
	hi[1] = size / 2;
	struct shape psh = x->sh;
	struct name p = pb_imp_pad(s, in, &psh, lo, hi, 0);
	/* the window sum: loops (d0 .. d<r-1>, k) */
	struct text pm;
	size_t n = snprintf(pm.s, sizeof(pm.s), "affine_map<(");
	for (int i = 0; i <= r; i++)
		n += snprintf(pm.s + n, sizeof(pm.s) - n, "%sd%d", i ? ", " : "",
			      i);
	n += snprintf(pm.s + n, sizeof(pm.s) - n, ") -> (");
	for (int i = 0; i < r; i++) {
		if (i == 1)
			n += snprintf(pm.s + n, sizeof(pm.s) - n, ", d1 + d%d", r);
		else
			n += snprintf(pm.s + n, sizeof(pm.s) - n, "%sd%d",
				      i ? ", " : "", i);
	}
	snprintf(pm.s + n, sizeof(pm.s) - n, ")>");
	int all[PB_MAX_RANK];
	for (int i = 0; i < r; i++)
		all[i] = i;
	struct text om = pb_imp_map(r + 1, r, all), id = id_map(r);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', r);
	iters[r] = 'r';
	/* the window operand (only its shape is used, as in linalg's
	 * pooling ops) makes the loop k appear alone in a map */
	struct shape wsh = {1, {size}};
	int kdim = r;
	struct name win = pb_imp_empty(s, &wsh);
	struct name z = pb_imp_fill(s, &x->sh, 0);
	const char *ps[2] = {p.s, win.s};
	struct shape pshs[2] = {psh, wsh};
	struct text pms[2] = {pm, pb_imp_map(r + 1, 1, &kdim)};
	struct gen g;
	pb_imp_gen_begin(s, &g, r + 1, iters, 2, ps, pshs, pms, z.s, &x->sh,
			 &om);
	struct name sq = pb_imp_fresh(s), acc = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.mulf %s, %s : f32", sq.s, g.arg[0].s,
		    g.arg[0].s);
	pb_imp_emit(s, "%s = arith.addf %s, %s : f32", acc.s, g.arg[2].s, sq.s);
	struct name sum = pb_imp_gen_end(s, &g, acc.s);
	/* x / (bias + alpha / size * sum)^beta */
	const char *ins[2] = {in, sum.s};
	struct shape shs[2] = {x->sh, x->sh};
	struct text maps[2] = {id, id};
	struct name e = pb_imp_empty(s, &x->sh);
	memset(iters, 'p', r);
	pb_imp_gen_begin(s, &g, r, iters, 2, ins, shs, maps, e.s, &x->sh, &id);
	struct name c = pb_imp_scalar(s, alpha / (double)size),
		    bs = pb_imp_scalar(s, bias), be = pb_imp_scalar(s, beta);
	struct name t = pb_imp_fresh(s), u = pb_imp_fresh(s),
		    v = pb_imp_fresh(s), y = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.mulf %s, %s : f32", t.s, g.arg[1].s, c.s);
	pb_imp_emit(s, "%s = arith.addf %s, %s : f32", u.s, t.s, bs.s);
	pb_imp_emit(s, "%s = math.powf %s, %s : f32", v.s, u.s, be.s);
	pb_imp_emit(s, "%s = arith.divf %s, %s : f32", y.s, g.arg[0].s, v.s);
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, y.s), PB_DT_F32, &x->sh);
}

/* OneHot(indices, depth, values) along "axis" (default -1): values[1]
 * where the output's coordinate along "axis" equals the index (negative
 * ones count from the end), values[0] elsewhere. depth must be known or
 * the output's shape declared; values are read with tensor.extract. */
static int op_onehot(struct imp *s)
{
	struct val *iv = pb_imp_in(s, 0), *dv = pb_imp_in(s, 1),
		   *vv = pb_imp_in(s, 2);
	if (!dv || !vv)
		return pb_imp_node_error(s, "expected 3 inputs");
	if (pb_imp_check_type(s, iv, 0) || pb_imp_check_type(s, vv, 0))
		return PB_ERR;
	if (iv->dtype == PB_DT_BOOL || pb_imp_numel(&vv->sh) != 2 ||
	    vv->sh.rank != 1)
		return pb_imp_node_error(s, "expected numeric indices and two "
					 "values");
	int r = iv->sh.rank + 1, axis;
	if (r > PB_MAX_RANK)
		return pb_imp_node_error(s, "rank too large");
	if (pb_imp_axis(s, pb_imp_attr_int(s, "axis", -1), r, &axis))
		return PB_ERR;
	struct shape out = {r, {0}};
	for (int i = 0, j = 0; i < r; i++)
		out.d[i] = i == axis ? 0 : iv->sh.d[j++];
	struct pb_tensor *dk = pb_imp_known(s, dv);
	struct shape decl;
	if (dk && pb_tensor_numel(dk) == 1) {
		out.d[axis] = (int64_t)pb_imp_elem_get(dk, 0);
	} else if (!dk && !pb_imp_declared_shape(s, s->node->output[0], &decl) &&
		   decl.rank == r) {
		out.d[axis] = decl.d[axis];
	} else {
		return s->ctx->nerrors ? PB_ERR
		       : pb_imp_node_error(s, "depth must be a known scalar or "
					   "the output's shape declared");
	}
	if (out.d[axis] < 1)
		return pb_imp_node_error(s, "depth %lld is not positive",
					 (long long)out.d[axis]);
	const char *ind = pb_imp_use_dt(s, iv);
	const char *vals = ind ? pb_imp_use_dt(s, vv) : NULL;
	if (!vals)
		return PB_ERR;
	int im[PB_MAX_RANK];
	for (int i = 0, j = 0; i < r; i++)
		if (i != axis)
			im[j++] = i;
	struct text imap = pb_imp_map(r, r - 1, im), om = id_map(r);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', r);
	enum pb_dtype dt = vv->dtype;
	struct name e = pb_imp_empty_dt(s, &out, dt);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, r, iters, 1, &ind, &iv->sh, &iv->dtype,
			    &imap, e.s, &out, dt, &om);
	struct name x = pb_imp_convert(s, g.arg[0].s, iv->dtype, PB_DT_I64);
	struct name z = pb_imp_scalar_dt(s, PB_DT_I64, 0),
		    dd = pb_imp_scalar_dt(s, PB_DT_I64, (double)out.d[axis]);
	struct name neg = pb_imp_fresh(s), add = pb_imp_fresh(s),
		    k = pb_imp_fresh(s), jj = pb_imp_fresh(s),
		    eq = pb_imp_fresh(s), c0 = pb_imp_fresh(s),
		    c1 = pb_imp_fresh(s), off = pb_imp_fresh(s),
		    on = pb_imp_fresh(s), y = pb_imp_fresh(s);
	struct name j = pb_imp_loop_index(s, axis);
	pb_imp_emit(s, "%s = arith.cmpi slt, %s, %s : i64", neg.s, x.s, z.s);
	pb_imp_emit(s, "%s = arith.addi %s, %s : i64", add.s, x.s, dd.s);
	pb_imp_emit(s, "%s = arith.select %s, %s, %s : i64", k.s, neg.s, add.s,
		    x.s);
	pb_imp_emit(s, "%s = arith.index_cast %s : index to i64", jj.s, j.s);
	pb_imp_emit(s, "%s = arith.cmpi eq, %s, %s : i64", eq.s, jj.s, k.s);
	pb_imp_emit(s, "%s = arith.constant 0 : index", c0.s);
	pb_imp_emit(s, "%s = arith.constant 1 : index", c1.s);
	pb_imp_emit(s, "%s = tensor.extract %s[%s] : %s", off.s, vals, c0.s,
		    pb_imp_ty_dt(&vv->sh, dt).s);
	pb_imp_emit(s, "%s = tensor.extract %s[%s] : %s", on.s, vals, c1.s,
		    pb_imp_ty_dt(&vv->sh, dt).s);
	pb_imp_emit(s, "%s = arith.select %s, %s, %s : %s", y.s, eq.s, on.s,
		    off.s, pb_imp_elt(dt));
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, y.s), dt, &out);
}

const struct pb_imp_op pb_imp_ops_typed[] = {
	{"Equal", op_compare, "", 7, 0, 0},
	{"Less", op_compare, "", 7, 0, 0},
	{"Greater", op_compare, "", 7, 0, 0},
	{"LessOrEqual", op_compare, "", 12, 0, 0},
	{"GreaterOrEqual", op_compare, "", 12, 0, 0},
	{"And", op_compare, "", 7, 0, 0},
	{"Or", op_compare, "", 7, 0, 0},
	{"Xor", op_compare, "", 7, 0, 0},
	{"Not", op_compare, "", 1, 0, 0},
	{"Where", op_where, "", 9, 0, 0},
	{"IsNaN", op_isinf, "", 9, 0, 0},
	{"IsInf", op_isinf, "detect_negative,detect_positive", 10, 0, 0},
	{"GatherElements", op_gather_elements, "axis", 11, 0, 0},
	{"ArgMax", op_argmax, "axis,keepdims,select_last_index", 1, 0, PB_IMP_WIDEN},
	{"ArgMin", op_argmax, "axis,keepdims,select_last_index", 1, 0, PB_IMP_WIDEN},
	{"CumSum", op_cumsum, "exclusive,reverse", 11, 0, PB_IMP_WIDEN},
	{"Einsum", op_einsum, "equation", 12, 0, PB_IMP_WIDEN},
	{"Resize", op_resize, "antialias,axes,coordinate_transformation_mode,"
			      "cubic_coeff_a,exclude_outside,"
			      "extrapolation_value,keep_aspect_ratio_policy,"
			      "mode,nearest_mode", 10, 0, PB_IMP_WIDEN},
	{"Upsample", op_resize, "mode,scales", 7, 9, PB_IMP_WIDEN},
	{"Trilu", op_trilu, "upper", 14, 0, 0},
	{"Mod", op_mod, "fmod", 10, 0, PB_IMP_WIDEN},
	{"BitShift", op_bitshift, "direction", 11, 0, 0},
	{"Hardmax", op_hardmax, "axis", 13, 0, PB_IMP_WIDEN},
	{"DepthToSpace", op_depth_space, "blocksize,mode", 1, 0, 0},
	{"SpaceToDepth", op_depth_space, "blocksize", 1, 0, 0},
	{"LRN", op_lrn, "alpha,beta,bias,size", 1, 0, PB_IMP_WIDEN},
	{"OneHot", op_onehot, "axis", 9, 0, 0},
	{NULL, NULL, NULL, 0, 0, 0},
};
