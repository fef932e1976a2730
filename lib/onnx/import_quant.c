/* Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
 * MatMulInteger and QLinearMatMul (ConvInteger and QLinearConv are in
 * import_nn.c, on these building blocks). Quantized data is 8-bit (u8 or
 * i8, signless i8 in the IR with the signedness chosen at import),
 * products accumulate in i32, and requantization rounds half to even
 * (math.roundeven) and saturates, as ONNX's reference does. */
#include <math.h>
#include <string.h>

#include "onnx/import.h"

/* The map of the quantization parameter "p" (a scale or zero point:
 * one element, or a 1-d tensor along dim "axis") in a generic over
 * "out"; reports a parameter of another shape. */
int pb_imp_qparam_map(struct imp *s, const struct val *p,
		      const struct shape *out, int axis, struct text *map)
{
	int res[PB_MAX_RANK];
	if (pb_imp_numel(&p->sh) == 1) {
		for (int i = 0; i < p->sh.rank; i++)
			res[i] = -1;
		*map = pb_imp_map(out->rank, p->sh.rank, res);
		return PB_OK;
	}
	if (p->sh.rank != 1 || axis < 0 || axis >= out->rank ||
	    p->sh.d[0] != out->d[axis])
		return pb_imp_node_error(s, "'%s' of shape %s is neither a "
					 "scalar nor a 1-d tensor along axis "
					 "%d of %s", p->name,
					 pb_imp_ty_dt(&p->sh, p->dtype).s, axis,
					 pb_imp_ty(out).s);
	res[0] = axis;
	*map = pb_imp_map(out->rank, 1, res);
	return PB_OK;
}

/* Add input "v" (may be NULL) of a generic over "out" to the "*n" inputs
 * "ins", "sh", "dt", "maps", reading it as a quantization parameter
 * along "axis" (pb_imp_qparam_map) unless "full" (then it has the
 * shape "out"); its slot into "*slot" (-1 for NULL). */
static int add_in(struct imp *s, struct val *v, const struct shape *out,
		  int axis, int full, const char **ins, struct shape *sh,
		  enum pb_dtype *dt, struct text *maps, int *n, int *slot)
{
	*slot = -1;
	if (!v)
		return PB_OK;
	if (!pb_imp_elt(v->dtype))
		return pb_imp_check_type(s, v, 0);
	if (full) {
		maps[*n] = pb_imp_bcast_map(out, &v->sh);
	} else if (pb_imp_qparam_map(s, v, out, axis, &maps[*n])) {
		return PB_ERR;
	}
	if (!(ins[*n] = pb_imp_use_dt(s, v)))
		return PB_ERR;
	sh[*n] = v->sh;
	dt[*n] = v->dtype;
	*slot = (*n)++;
	return PB_OK;
}

/* Emit the quantization of f32 scalar "y" (already divided by the scale)
 * to type "dt": round half to even, add the zero point "zp" (of type
 * "zdt"; NULL: 0), saturate to the range of "dt" and convert. */
struct name pb_imp_requant(struct imp *s, const char *y, const char *zp,
			   enum pb_dtype zdt, enum pb_dtype dt)
{
	double lo, hi;
	pb_imp_int_range(dt, &lo, &hi);
	struct name r = pb_imp_scalar_op(s, "math.roundeven", y, NULL);
	if (zp) {
		struct name z = pb_imp_convert(s, zp, zdt, PB_DT_F32);
		r = pb_imp_scalar_op(s, "arith.addf", r.s, z.s);
	}
	r = pb_imp_scalar_op(s, "arith.maximumf", r.s, pb_imp_scalar(s, lo).s);
	r = pb_imp_scalar_op(s, "arith.minimumf", r.s, pb_imp_scalar(s, hi).s);
	return pb_imp_convert(s, r.s, PB_DT_F32, dt);
}

/* Check that "v" is 8-bit quantized data (u8 or i8). */
static int check_q8(struct imp *s, const struct val *v)
{
	if (v->dtype != PB_DT_U8 && v->dtype != PB_DT_I8)
		return pb_imp_node_error(s, "'%s' has type %s: expected u8 or "
					 "i8", v->name,
					 pb_dtype_name(v->dtype));
	return PB_OK;
}

/* The axis of the per-axis parameters of the current node along "rank"
 * dims (attribute "axis", default 1) into "*axis"; -1 when the default
 * does not exist (per-tensor parameters need none). */
static int param_axis(struct imp *s, int rank, int *axis)
{
	if (!pb_imp_attr(s, "axis")) {
		*axis = rank > 1 ? 1 : -1;
		return PB_OK;
	}
	return pb_imp_axis(s, pb_imp_attr_int(s, "axis", 1), rank, axis);
}

/* QuantizeLinear: y = saturate(round(x / y_scale) + y_zero_point), of
 * the zero point's type (u8 without one); scale and zero point per
 * tensor or along "axis". */
static int op_quantize(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0), *sc = pb_imp_in(s, 1),
		   *zp = pb_imp_in(s, 2);
	if (!sc)
		return pb_imp_node_error(s, "expected x and y_scale");
	enum pb_dtype odt = zp ? zp->dtype : PB_DT_U8;
	if ((zp && check_q8(s, zp)) || pb_imp_check_type(s, x, 0))
		return PB_ERR;
	if (x->dtype != PB_DT_F32 || sc->dtype != PB_DT_F32)
		return pb_imp_node_error(s, "x and y_scale must be float32");
	int axis;
	if (param_axis(s, x->sh.rank, &axis))
		return PB_ERR;
	const char *ins[3];
	struct shape sh[3];
	enum pb_dtype dt[3];
	struct text maps[3];
	int n = 0, sx, ss, sz;
	if (add_in(s, x, &x->sh, 0, 1, ins, sh, dt, maps, &n, &sx) ||
	    add_in(s, sc, &x->sh, axis, 0, ins, sh, dt, maps, &n, &ss) ||
	    add_in(s, zp, &x->sh, axis, 0, ins, sh, dt, maps, &n, &sz))
		return PB_ERR;
	struct name e = pb_imp_empty_dt(s, &x->sh, odt);
	struct text om = pb_imp_bcast_map(&x->sh, &x->sh);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', x->sh.rank);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, x->sh.rank, iters, n, ins, sh, dt, maps,
			    e.s, &x->sh, odt, &om);
	struct name q = pb_imp_scalar_op(s, "arith.divf", g.arg[sx].s,
					 g.arg[ss].s);
	struct name y = pb_imp_requant(s, q.s, zp ? g.arg[sz].s : NULL,
				       odt, odt);
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, y.s), odt, &x->sh);
}

/* In generic "g": its argument "sx" (an element of "x") minus argument
 * "sz" (of the zero point "zp", when not NULL), both widened to i32,
 * which holds the difference exactly. */
static struct name minus_zp(struct imp *s, struct gen *g, struct val *x,
			    int sx, struct val *zp, int sz)
{
	struct name d = pb_imp_convert(s, g->arg[sx].s, x->dtype, PB_DT_I32);
	if (!zp)
		return d;
	struct name z = pb_imp_convert(s, g->arg[sz].s, zp->dtype, PB_DT_I32);
	struct name t = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.subi %s, %s : i32", t.s, d.s, z.s);
	return t;
}

/* DequantizeLinear: y = (x - x_zero_point) * x_scale in float32, x of
 * type u8, i8 or i32; scale and zero point per tensor or along "axis". */
static int op_dequantize(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0), *sc = pb_imp_in(s, 1),
		   *zp = pb_imp_in(s, 2);
	if (!sc)
		return pb_imp_node_error(s, "expected x and x_scale");
	if (pb_imp_check_type(s, x, 0))
		return PB_ERR;
	if (x->dtype != PB_DT_I32 && check_q8(s, x))
		return PB_ERR;
	if (zp && zp->dtype != x->dtype)
		return pb_imp_node_error(s, "x_zero_point must have x's type");
	if (sc->dtype != PB_DT_F32)
		return pb_imp_node_error(s, "x_scale must be float32");
	int axis;
	if (param_axis(s, x->sh.rank, &axis))
		return PB_ERR;
	const char *ins[3];
	struct shape sh[3];
	enum pb_dtype dt[3];
	struct text maps[3];
	int n = 0, sx, ss, sz;
	if (add_in(s, x, &x->sh, 0, 1, ins, sh, dt, maps, &n, &sx) ||
	    add_in(s, sc, &x->sh, axis, 0, ins, sh, dt, maps, &n, &ss) ||
	    add_in(s, zp, &x->sh, axis, 0, ins, sh, dt, maps, &n, &sz))
		return PB_ERR;
	struct name e = pb_imp_empty(s, &x->sh);
	struct text om = pb_imp_bcast_map(&x->sh, &x->sh);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', x->sh.rank);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, x->sh.rank, iters, n, ins, sh, dt, maps,
			    e.s, &x->sh, PB_DT_F32, &om);
	/* the difference in i32 is exact; then one conversion */
	struct name d = minus_zp(s, &g, x, sx, zp, sz);
	struct name f = pb_imp_convert(s, d.s, PB_DT_I32, PB_DT_F32);
	struct name y = pb_imp_scalar_op(s, "arith.mulf", f.s, g.arg[ss].s);
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, y.s), PB_DT_F32,
			      &x->sh);
}

/* A rank-0 generic over the rank-0 f32 tensors "a" and "b" yielding
 * type "dt": begins it into "g". */
static void scalar_gen(struct imp *s, struct gen *g, const char *a,
		       const char *b, enum pb_dtype dt)
{
	const char *ins[2] = {a, b};
	struct shape sh[2] = {{0, {0}}, {0, {0}}}, out = {0, {0}};
	enum pb_dtype dts[2] = {PB_DT_F32, PB_DT_F32};
	struct text maps[2] = {pb_imp_map(0, 0, NULL), pb_imp_map(0, 0, NULL)};
	struct name e = pb_imp_empty_dt(s, &out, dt);
	pb_imp_gen_begin_dt(s, g, 0, "", 2, ins, sh, dts, maps, e.s, &out, dt,
			    &maps[0]);
}

/* DynamicQuantizeLinear: the u8 scale and zero point of float32 x from
 * its range (widened to hold 0), then x quantized with them:
 *   scale = (max(0, max x) - min(0, min x)) / 255,
 *   zero_point = saturate(round(-min(0, min x) / scale)). */
static int op_dyn_quantize(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0);
	if (pb_imp_check_type(s, x, 0))
		return PB_ERR;
	if (x->dtype != PB_DT_F32)
		return pb_imp_node_error(s, "x must be float32");
	unsigned all = (1u << x->sh.rank) - 1;
	struct name mn, mx;
	struct shape sh0;
	if (pb_imp_reduce(s, x, all, "min", 0, &mn, &sh0) ||
	    pb_imp_reduce(s, x, all, "max", 0, &mx, &sh0))
		return PB_ERR;
	struct gen g;
	scalar_gen(s, &g, mn.s, mx.s, PB_DT_F32);
	struct name z = pb_imp_scalar(s, 0);
	struct name lo = pb_imp_scalar_op(s, "arith.minimumf", g.arg[0].s, z.s);
	struct name hi = pb_imp_scalar_op(s, "arith.maximumf", g.arg[1].s, z.s);
	struct name d = pb_imp_scalar_op(s, "arith.subf", hi.s, lo.s);
	struct name q = pb_imp_scalar_op(s, "arith.divf", d.s,
					 pb_imp_scalar(s, 255).s);
	struct name scale = pb_imp_gen_end(s, &g, q.s);
	scalar_gen(s, &g, mn.s, scale.s, PB_DT_U8);
	lo = pb_imp_scalar_op(s, "arith.minimumf", g.arg[0].s,
			      pb_imp_scalar(s, 0).s);
	struct name t = pb_imp_scalar_op(s, "arith.divf", lo.s, g.arg[1].s);
	t = pb_imp_scalar_op(s, "arith.negf", t.s, NULL);
	struct name zp = pb_imp_gen_end(
		s, &g, pb_imp_requant(s, t.s, NULL, PB_DT_U8, PB_DT_U8).s);
	/* y */
	const char *xin = pb_imp_use_dt(s, x);
	if (!xin)
		return PB_ERR;
	const char *ins[3] = {xin, scale.s, zp.s};
	struct shape sh[3] = {x->sh, sh0, sh0};
	enum pb_dtype dt[3] = {PB_DT_F32, PB_DT_F32, PB_DT_U8};
	struct text m0 = pb_imp_map(x->sh.rank, 0, NULL);
	struct text maps[3] = {pb_imp_bcast_map(&x->sh, &x->sh), m0, m0};
	struct name e = pb_imp_empty_dt(s, &x->sh, PB_DT_U8);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', x->sh.rank);
	pb_imp_gen_begin_dt(s, &g, x->sh.rank, iters, 3, ins, sh, dt, maps,
			    e.s, &x->sh, PB_DT_U8, &maps[0]);
	q = pb_imp_scalar_op(s, "arith.divf", g.arg[0].s, g.arg[1].s);
	struct name y = pb_imp_gen_end(
		s, &g, pb_imp_requant(s, q.s, g.arg[2].s, PB_DT_U8,
				      PB_DT_U8).s);
	if (pb_imp_def_ssa(s, y, PB_DT_U8, &x->sh))
		return PB_ERR;
	struct val *v = pb_imp_def(s, 1, PB_DT_F32, &sh0);
	if (v)
		v->ssa = scale;
	if ((v = pb_imp_def(s, 2, PB_DT_U8, &sh0)))
		v->ssa = zp;
	return PB_OK;
}

/* The i32 tensor "x - zp" of 8-bit "x" (shape "x->sh"), its zero point
 * "zp" (may be NULL) read along dim "axis" of x (pb_imp_qparam_map).
 * Empty name after reporting an error. */
struct name pb_imp_qshift(struct imp *s, struct val *x, struct val *zp,
			  int axis)
{
	struct name bad = {{0}};
	if (check_q8(s, x))
		return bad;
	if (zp && zp->dtype != x->dtype) {
		pb_imp_node_error(s, "the zero point of '%s' must have its "
				  "type", x->name);
		return bad;
	}
	const char *ins[2];
	struct shape sh[2];
	enum pb_dtype dt[2];
	struct text maps[2];
	int n = 0, sx, sz;
	if (add_in(s, x, &x->sh, 0, 1, ins, sh, dt, maps, &n, &sx) ||
	    add_in(s, zp, &x->sh, axis, 0, ins, sh, dt, maps, &n, &sz))
		return bad;
	struct name e = pb_imp_empty_dt(s, &x->sh, PB_DT_I32);
	struct text om = pb_imp_bcast_map(&x->sh, &x->sh);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', x->sh.rank);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, x->sh.rank, iters, n, ins, sh, dt, maps,
			    e.s, &x->sh, PB_DT_I32, &om);
	struct name d = minus_zp(s, &g, x, sx, zp, sz);
	return pb_imp_gen_end(s, &g, d.s);
}

/* The i32 product of the i32 tensors "a" (shape "as", [.., M, K]) and
 * "b" ("bs", [.., K, N]), batch dims broadcast NumPy-style, into "out";
 * one generic (muli, addi). Empty name after reporting an error. */
static struct name int_matmul(struct imp *s, const char *a,
			      const struct shape *as, const char *b,
			      const struct shape *bs, struct shape *out)
{
	struct name bad = {{0}};
	if (as->rank < 2 || bs->rank < 2 ||
	    as->d[as->rank - 1] != bs->d[bs->rank - 2]) {
		pb_imp_node_error(s, "shapes %s and %s do not multiply (both "
				  "must have rank 2 or more)",
				  pb_imp_ty_dt(as, PB_DT_I32).s,
				  pb_imp_ty_dt(bs, PB_DT_I32).s);
		return bad;
	}
	struct shape ab = {as->rank - 2, {0}}, bb = {bs->rank - 2, {0}};
	memcpy(ab.d, as->d, sizeof(*ab.d) * ab.rank);
	memcpy(bb.d, bs->d, sizeof(*bb.d) * bb.rank);
	struct shape batch;
	if (pb_imp_broadcast(s, &ab, &bb, &batch))
		return bad;
	int nb = batch.rank, nd = nb + 3; /* batch.., m, n, k */
	*out = batch;
	out->d[nb] = as->d[as->rank - 2];
	out->d[nb + 1] = bs->d[bs->rank - 1];
	out->rank = nb + 2;
	int am[PB_MAX_RANK], bm[PB_MAX_RANK], om[PB_MAX_RANK];
	for (int i = 0; i < ab.rank; i++) {
		int o = i + nb - ab.rank;
		am[i] = ab.d[i] == 1 && batch.d[o] != 1 ? -1 : o;
	}
	for (int i = 0; i < bb.rank; i++) {
		int o = i + nb - bb.rank;
		bm[i] = bb.d[i] == 1 && batch.d[o] != 1 ? -1 : o;
	}
	am[ab.rank] = nb, am[ab.rank + 1] = nb + 2;
	bm[bb.rank] = nb + 2, bm[bb.rank + 1] = nb + 1;
	for (int i = 0; i < nb + 2; i++)
		om[i] = i;
	const char *ins[2] = {a, b};
	struct shape sh[2] = {*as, *bs};
	enum pb_dtype dt[2] = {PB_DT_I32, PB_DT_I32};
	struct text maps[2] = {pb_imp_map(nd, as->rank, am),
			       pb_imp_map(nd, bs->rank, bm)};
	struct text omap = pb_imp_map(nd, nb + 2, om);
	char iters[PB_MAX_RANK + 4];
	memset(iters, 'p', nd - 1);
	iters[nd - 1] = 'r';
	iters[nd] = 0;
	struct name init = pb_imp_fill_dt(s, out, PB_DT_I32, 0);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, nd, iters, 2, ins, sh, dt, maps, init.s,
			    out, PB_DT_I32, &omap);
	struct name p = pb_imp_fresh(s), r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.muli %s, %s : i32", p.s, g.arg[0].s,
		    g.arg[1].s);
	pb_imp_emit(s, "%s = arith.addi %s, %s : i32", r.s, p.s, g.arg[2].s);
	return pb_imp_gen_end(s, &g, r.s);
}

/* The i32 product (A - a_zero_point) x (B - b_zero_point) of the inputs
 * "ia", "iza", "ib", "izb" of the current node into "r", "out"; A's zero
 * point per row (dim -2), B's per column (dim -1). */
static int shifted_matmul(struct imp *s, int ia, int iza, int ib, int izb,
			  struct name *r, struct shape *out)
{
	struct val *a = pb_imp_in(s, ia), *b = pb_imp_in(s, ib);
	struct val *za = pb_imp_in(s, iza), *zb = pb_imp_in(s, izb);
	if (!a || !b)
		return pb_imp_node_error(s, "expected A and B");
	if (a->sh.rank < 2 || b->sh.rank < 2)
		return pb_imp_node_error(s, "A and B must have rank 2 or more");
	struct name sa = pb_imp_qshift(s, a, za, a->sh.rank - 2);
	if (!sa.s[0])
		return PB_ERR;
	struct name sb = pb_imp_qshift(s, b, zb, b->sh.rank - 1);
	if (!sb.s[0])
		return PB_ERR;
	*r = int_matmul(s, sa.s, &a->sh, sb.s, &b->sh, out);
	return r->s[0] ? PB_OK : PB_ERR;
}

/* MatMulInteger: (A - a_zero_point) x (B - b_zero_point) in i32. */
static int op_matmul_integer(struct imp *s)
{
	struct name r;
	struct shape out;
	if (shifted_matmul(s, 0, 2, 1, 3, &r, &out))
		return PB_ERR;
	return pb_imp_def_ssa(s, r, PB_DT_I32, &out);
}

/* Requantize the i32 accumulator "acc" (shape "out") into the type of
 * the zero point "yz": y = saturate(round(acc * (xs * ws / ys)) + yz),
 * the scales "xs", "ws" (per tensor, or "ws" along "waxis"), "ys" per
 * tensor; "bias" (i32 along "waxis", may be NULL) is added to acc first
 * (QLinearConv's B). Defines output 0. */
int pb_imp_requant_out(struct imp *s, const char *acc,
		       const struct shape *out, struct val *xs,
		       struct val *ws, int waxis, struct val *ys,
		       struct val *yz, struct val *bias)
{
	enum pb_dtype odt = yz ? yz->dtype : PB_DT_U8;
	if (yz && check_q8(s, yz))
		return PB_ERR;
	if (xs->dtype != PB_DT_F32 || ws->dtype != PB_DT_F32 ||
	    ys->dtype != PB_DT_F32)
		return pb_imp_node_error(s, "scales must be float32");
	if (bias && bias->dtype != PB_DT_I32)
		return pb_imp_node_error(s, "B must be int32");
	const char *ins[6] = {acc};
	struct shape sh[6] = {*out};
	enum pb_dtype dt[6] = {PB_DT_I32};
	struct text maps[6] = {pb_imp_bcast_map(out, out)};
	int n = 1, sx, sw, sy, sz, sb;
	if (add_in(s, xs, out, 0, 0, ins, sh, dt, maps, &n, &sx) ||
	    add_in(s, ws, out, waxis, 0, ins, sh, dt, maps, &n, &sw) ||
	    add_in(s, ys, out, 0, 0, ins, sh, dt, maps, &n, &sy) ||
	    add_in(s, yz, out, 0, 0, ins, sh, dt, maps, &n, &sz) ||
	    add_in(s, bias, out, waxis, 0, ins, sh, dt, maps, &n, &sb))
		return PB_ERR;
	struct name e = pb_imp_empty_dt(s, out, odt);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', out->rank);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, out->rank, iters, n, ins, sh, dt, maps,
			    e.s, out, odt, &maps[0]);
	struct name a = g.arg[0];
	if (bias) {
		struct name t = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.addi %s, %s : i32", t.s, a.s,
			    g.arg[sb].s);
		a = t;
	}
	struct name f = pb_imp_convert(s, a.s, PB_DT_I32, PB_DT_F32);
	struct name m = pb_imp_scalar_op(s, "arith.mulf", g.arg[sx].s,
					 g.arg[sw].s);
	m = pb_imp_scalar_op(s, "arith.divf", m.s, g.arg[sy].s);
	struct name y = pb_imp_scalar_op(s, "arith.mulf", f.s, m.s);
	y = pb_imp_requant(s, y.s, yz ? g.arg[sz].s : NULL, odt, odt);
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, y.s), odt, out);
}

/* QLinearMatMul: a, a_scale, a_zero_point, b, b_scale, b_zero_point,
 * y_scale, y_zero_point: the i32 product of the shifted operands,
 * requantized (pb_imp_requant_out). */
static int op_qlinear_matmul(struct imp *s)
{
	if (pb_imp_nin(s) != 8)
		return pb_imp_node_error(s, "expected 8 inputs, got %d",
					 pb_imp_nin(s));
	struct name r;
	struct shape out;
	if (shifted_matmul(s, 0, 2, 3, 5, &r, &out))
		return PB_ERR;
	struct val *bs = pb_imp_in(s, 4);
	if (pb_imp_numel(&bs->sh) != 1)
		return pb_imp_node_error(s, "b_scale must have one element");
	return pb_imp_requant_out(s, r.s, &out, pb_imp_in(s, 1), bs, 0,
				  pb_imp_in(s, 6), pb_imp_in(s, 7), NULL);
}

const struct pb_imp_op pb_imp_ops_quant[] = {
	{"QuantizeLinear", op_quantize, "axis", 10, 0, 0},
	{"DequantizeLinear", op_dequantize, "axis", 10, 0, 0},
	{"DynamicQuantizeLinear", op_dyn_quantize, "", 11, 0, 0},
	{"MatMulInteger", op_matmul_integer, "", 10, 0, 0},
	{"QLinearMatMul", op_qlinear_matmul, "", 10, 0, 0},
	{NULL, NULL, NULL, 0, 0, 0},
};
