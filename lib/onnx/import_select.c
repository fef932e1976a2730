/* Op lowerings that select elements by their values, as reductions
 * quadratic in the axis length (no sort or prefix scan in the IR).
 *
 * TopK: the k largest (or smallest) elements along an axis and their
 * indices, sorted, as two kinds of generics:
 *
 *   the rank of each element: a reduction over the axis counting the
 *   elements that come before it (greater, or equal at a smaller index:
 *   ties keep their order, as ONNX asks), into i64;
 *   the outputs: for each of the k positions, a reduction over the axis
 *   picking the element (and the index) whose rank is the position.
 *
 * k is known at import, or given at run time with the outputs' shape
 * declared.
 *
 * Compress: the slices along an axis (of the flattened input without
 * one) whose condition is true: the count of true conditions up to each
 * position (a reduction), then per output position a reduction picking
 * the slice whose count is the position + 1. The output's length is the
 * number of true conditions: known when the condition is, else the
 * declared one.
 *
 * ReverseSequence: one generic reading each element at its reflected
 * time index (within the batch entry's length). */
#include <string.h>

#include "onnx/import.h"

/* The maps over the loops (x's dims, then j along the axis) reading x at
 * the loop indices, and at j along "axis". */
static void maps(int r, int axis, struct text *at_i, struct text *at_j)
{
	int a[PB_MAX_RANK], b[PB_MAX_RANK];
	for (int d = 0; d < r; d++) {
		a[d] = d;
		b[d] = d == axis ? r : d;
	}
	*at_i = pb_imp_map(r + 1, r, a);
	*at_j = pb_imp_map(r + 1, r, b);
}

static int op_topk(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0), *kv = pb_imp_in(s, 1);
	int largest = pb_imp_attr_int(s, "largest", 1) != 0, axis;
	int r = x->sh.rank;
	if (pb_imp_check_type(s, x, 0))
		return PB_ERR;
	if (x->dtype == PB_DT_BOOL)
		return pb_imp_node_error(s, "bool input is not ordered");
	if (r < 1 || r >= PB_MAX_RANK)
		return pb_imp_node_error(s, "rank %d: 1 to %d is supported", r,
					 PB_MAX_RANK - 1);
	if (pb_imp_axis(s, pb_imp_attr_int(s, "axis", -1), r, &axis))
		return PB_ERR;
	int64_t k, n = x->sh.d[axis];
	struct shape out = x->sh;
	if (s->opset < 10) {
		k = pb_imp_attr_int(s, "k", -1);
	} else if (kv && (kv->k || kv->init)) {
		if (pb_imp_known_ints(s, kv, &k, 1, "k") != 1)
			return s->ctx->nerrors ? PB_ERR
			       : pb_imp_node_error(s, "k must be one value");
	} else if (kv && !pb_imp_declared_shape(s, s->node->output[0], &out) &&
		   out.rank == r) {
		k = out.d[axis];
	} else {
		return pb_imp_node_error(s, "k must be known at import time, or "
					 "the outputs' shape declared");
	}
	if (k < 0 || k > n)
		return pb_imp_node_error(s, "k = %lld for an axis of %lld",
					 (long long)k, (long long)n);
	out = x->sh;
	out.d[axis] = k;
	const char *in = pb_imp_use_dt(s, x);
	if (!in)
		return PB_ERR;
	const char *el = pb_imp_elt(x->dtype);
	int fl = pb_imp_is_float(x->dtype);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', r);
	iters[r] = 'r';
	/* rank[i] = #{j : x[j] before x[i]} */
	struct text mi, mj;
	maps(r, axis, &mi, &mj);
	const char *ins[2] = {in, in};
	struct shape sh[2] = {x->sh, x->sh};
	enum pb_dtype dts[2] = {x->dtype, x->dtype};
	struct text im[2] = {mi, mj};
	struct name z = pb_imp_fill_dt(s, &x->sh, PB_DT_I64, 0);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, r + 1, iters, 2, ins, sh, dts, im, z.s,
			    &x->sh, PB_DT_I64, &mi);
	struct name i = pb_imp_loop_index(s, axis), j = pb_imp_loop_index(s, r);
	struct name gt = pb_imp_fresh(s), eq = pb_imp_fresh(s),
		    lt = pb_imp_fresh(s), tie = pb_imp_fresh(s),
		    bef = pb_imp_fresh(s), one = pb_imp_fresh(s),
		    zero = pb_imp_fresh(s), inc = pb_imp_fresh(s),
		    acc = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.%s %s, %s, %s : %s", gt.s,
		    fl ? "cmpf" : "cmpi",
		    fl ? (largest ? "ogt" : "olt") : (largest ? "sgt" : "slt"),
		    g.arg[1].s, g.arg[0].s, el);
	pb_imp_emit(s, "%s = arith.%s %s, %s, %s : %s", eq.s,
		    fl ? "cmpf" : "cmpi", fl ? "oeq" : "eq", g.arg[1].s,
		    g.arg[0].s, el);
	pb_imp_emit(s, "%s = arith.cmpi ult, %s, %s : index", lt.s, j.s, i.s);
	pb_imp_emit(s, "%s = arith.andi %s, %s : i1", tie.s, eq.s, lt.s);
	pb_imp_emit(s, "%s = arith.ori %s, %s : i1", bef.s, gt.s, tie.s);
	pb_imp_emit(s, "%s = arith.constant 1 : i64", one.s);
	pb_imp_emit(s, "%s = arith.constant 0 : i64", zero.s);
	pb_imp_emit(s, "%s = arith.select %s, %s, %s : i64", inc.s, bef.s,
		    one.s, zero.s);
	pb_imp_emit(s, "%s = arith.addi %s, %s : i64", acc.s, g.arg[2].s,
		    inc.s);
	struct name rank = pb_imp_gen_end(s, &g, acc.s);
	/* the outputs: position p along the axis takes the element of rank p
	 * (loops: the output's dims, then i along the axis of x) */
	struct text om;
	maps(r, axis, &om, &mj);
	for (int o = 0; o < 2; o++) {
		if ((size_t)o >= s->node->n_output || !s->node->output[o][0])
			continue;
		enum pb_dtype odt = o ? PB_DT_I64 : x->dtype;
		const char *oins[2] = {in, rank.s};
		enum pb_dtype odts[2] = {x->dtype, PB_DT_I64};
		struct text omaps[2] = {mj, mj};
		struct name init = pb_imp_fill_dt(s, &out, odt, 0);
		pb_imp_gen_begin_dt(s, &g, r + 1, iters, 2, oins, sh, odts,
				    omaps, init.s, &out, odt, &om);
		struct name p = pb_imp_loop_index(s, axis), pi = pb_imp_fresh(s),
			    hit = pb_imp_fresh(s), y = pb_imp_fresh(s), v;
		pb_imp_emit(s, "%s = arith.index_cast %s : index to i64", pi.s,
			    p.s);
		pb_imp_emit(s, "%s = arith.cmpi eq, %s, %s : i64", hit.s,
			    g.arg[1].s, pi.s);
		if (o) {
			struct name ii = pb_imp_loop_index(s, r);
			v = pb_imp_fresh(s);
			pb_imp_emit(s, "%s = arith.index_cast %s : index to i64",
				    v.s, ii.s);
		} else {
			v = g.arg[0];
		}
		pb_imp_emit(s, "%s = arith.select %s, %s, %s : %s", y.s, hit.s,
			    v.s, g.arg[2].s, pb_imp_elt(odt));
		struct name res = pb_imp_gen_end(s, &g, y.s);
		struct val *d = pb_imp_def(s, o, odt, &out);
		if (d)
			d->ssa = res;
	}
	return PB_OK;
}

static int op_compress(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0), *cv = pb_imp_in(s, 1);
	int has_axis = pb_imp_attr(s, "axis") != NULL, axis = 0;
	if (pb_imp_check_type(s, x, 0) || pb_imp_check_type(s, cv, PB_DT_BOOL))
		return PB_ERR;
	struct shape xs = x->sh, out;
	if (!has_axis) /* the flattened input */
		xs = (struct shape){1, {pb_imp_numel(&x->sh)}};
	else if (pb_imp_axis(s, pb_imp_attr_int(s, "axis", 0), xs.rank, &axis))
		return PB_ERR;
	int r = xs.rank;
	int64_t n = xs.d[axis], nc = cv->sh.rank == 1 ? cv->sh.d[0] : -1;
	if (nc < 1 || nc > n)
		return pb_imp_node_error(s, "condition of shape %s for an axis "
					 "of %lld", pb_imp_ty(&cv->sh).s,
					 (long long)n);
	if (r >= PB_MAX_RANK)
		return pb_imp_node_error(s, "rank %d: at most %d is supported",
					 r, PB_MAX_RANK - 1);
	out = xs;
	if (cv->k || cv->init) {
		struct pb_tensor *k = pb_imp_known(s, cv);
		if (!k)
			return PB_ERR;
		out.d[axis] = 0;
		for (int64_t i = 0; i < nc; i++)
			out.d[axis] += ((unsigned char *)k->data)[i] != 0;
	} else {
		struct shape dec;
		if (pb_imp_declared_shape(s, s->node->output[0], &dec) ||
		    dec.rank != r || dec.d[axis] > nc)
			return pb_imp_node_error(s, "condition must be known at "
						 "import time, or the output's "
						 "shape declared");
		out.d[axis] = dec.d[axis];
	}
	const char *xin = pb_imp_use_dt(s, x), *cs = xin ? pb_imp_use_dt(s, cv)
						       : NULL;
	if (!cs)
		return PB_ERR;
	struct name in;
	if (!has_axis)
		in = pb_imp_reshape_dt(s, xin, &x->sh, &xs, x->dtype);
	else
		snprintf(in.s, sizeof(in.s), "%s", xin);
	/* key[i] = #{j <= i : cond[j]} where cond[i], else 0: loops i (n,
	 * parallel), j (nc, reduction) */
	struct shape kn = {1, {n}};
	struct name z = pb_imp_fill_dt(s, &kn, PB_DT_I64, 0);
	struct text cm = pb_imp_map(2, 1, (int[]){1});
	struct text km = pb_imp_map(2, 1, (int[]){0});
	enum pb_dtype bt = PB_DT_BOOL;
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, 2, "pr", 1, &cs, &cv->sh, &bt, &cm, z.s,
			    &kn, PB_DT_I64, &km);
	struct name i = pb_imp_loop_index(s, 0), j = pb_imp_loop_index(s, 1);
	struct name last = pb_imp_fresh(s), lim = pb_imp_fresh(s),
		    ii = pb_imp_fresh(s), inr = pb_imp_fresh(s),
		    le = pb_imp_fresh(s), a = pb_imp_fresh(s),
		    b = pb_imp_fresh(s), c = pb_imp_fresh(s),
		    ext = pb_imp_fresh(s), acc = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.constant %lld : index", last.s,
		    (long long)(nc - 1));
	pb_imp_emit(s, "%s = arith.constant %lld : index", lim.s,
		    (long long)nc);
	pb_imp_emit(s, "%s = arith.minui %s, %s : index", ii.s, i.s, last.s);
	struct name ci = pb_imp_extract(s, cs, &cv->sh, PB_DT_BOOL, &ii);
	pb_imp_emit(s, "%s = arith.cmpi ult, %s, %s : index", inr.s, i.s,
		    lim.s);
	pb_imp_emit(s, "%s = arith.cmpi ule, %s, %s : index", le.s, j.s, i.s);
	pb_imp_emit(s, "%s = arith.andi %s, %s : i1", a.s, ci.s, inr.s);
	pb_imp_emit(s, "%s = arith.andi %s, %s : i1", b.s, a.s, le.s);
	pb_imp_emit(s, "%s = arith.andi %s, %s : i1", c.s, b.s, g.arg[0].s);
	pb_imp_emit(s, "%s = arith.extui %s : i1 to i64", ext.s, c.s);
	pb_imp_emit(s, "%s = arith.addi %s, %s : i64", acc.s, g.arg[1].s,
		    ext.s);
	struct name key = pb_imp_gen_end(s, &g, acc.s);
	/* out[.., p, ..] = x[.., i, ..] where key[i] == p + 1: loops the
	 * output's dims, then i (reduction) */
	int xm[PB_MAX_RANK], om[PB_MAX_RANK];
	for (int d = 0; d < r; d++) {
		xm[d] = d == axis ? r : d;
		om[d] = d;
	}
	const char *ins[2] = {in.s, key.s};
	struct shape shs[2] = {xs, kn};
	enum pb_dtype dts[2] = {x->dtype, PB_DT_I64};
	struct text maps[2] = {pb_imp_map(r + 1, r, xm),
			       pb_imp_map(r + 1, 1, (int[]){r})};
	struct text omap = pb_imp_map(r + 1, r, om);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', r);
	iters[r] = 'r';
	struct name init = pb_imp_fill_dt(s, &out, x->dtype, 0);
	pb_imp_gen_begin_dt(s, &g, r + 1, iters, 2, ins, shs, dts, maps,
			    init.s, &out, x->dtype, &omap);
	struct name p = pb_imp_loop_index(s, axis), pi = pb_imp_fresh(s),
		    one = pb_imp_fresh(s), p1 = pb_imp_fresh(s),
		    hit = pb_imp_fresh(s), y = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.index_cast %s : index to i64", pi.s, p.s);
	pb_imp_emit(s, "%s = arith.constant 1 : i64", one.s);
	pb_imp_emit(s, "%s = arith.addi %s, %s : i64", p1.s, pi.s, one.s);
	pb_imp_emit(s, "%s = arith.cmpi eq, %s, %s : i64", hit.s, g.arg[1].s,
		    p1.s);
	pb_imp_emit(s, "%s = arith.select %s, %s, %s : %s", y.s, hit.s,
		    g.arg[0].s, g.arg[2].s, pb_imp_elt(x->dtype));
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, y.s), x->dtype, &out);
}

/* ReverseSequence: along time_axis, the first sequence_lens[b] elements
 * of each batch entry b reversed, the rest copied: one generic over the
 * output reading the length through a map and the input with
 * tensor.extract at the reflected time index. */
static int op_reverse_sequence(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0), *lv = pb_imp_in(s, 1);
	int r = x->sh.rank, ta, ba;
	if (pb_imp_check_type(s, x, 0) || pb_imp_check_type(s, lv, 0))
		return PB_ERR;
	if (r < 2)
		return pb_imp_node_error(s, "input of rank %d: expected 2 or "
					 "more", r);
	if (pb_imp_axis(s, pb_imp_attr_int(s, "time_axis", 0), r, &ta) ||
	    pb_imp_axis(s, pb_imp_attr_int(s, "batch_axis", 1), r, &ba))
		return PB_ERR;
	if (ta == ba || ta > 1 || ba > 1)
		return pb_imp_node_error(s, "time_axis and batch_axis must be 0 "
					 "and 1");
	if ((lv->dtype != PB_DT_I64 && lv->dtype != PB_DT_I32) ||
	    lv->sh.rank != 1 || lv->sh.d[0] != x->sh.d[ba])
		return pb_imp_node_error(s, "sequence_lens must be %lld "
					 "integers", (long long)x->sh.d[ba]);
	const char *in = pb_imp_use_dt(s, x), *ls = in ? pb_imp_use_dt(s, lv)
						      : NULL;
	if (!ls)
		return PB_ERR;
	int om[PB_MAX_RANK];
	for (int d = 0; d < r; d++)
		om[d] = d;
	struct text lm = pb_imp_map(r, 1, &ba), omap = pb_imp_map(r, r, om);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', r);
	struct name e = pb_imp_empty_dt(s, &x->sh, x->dtype);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, r, iters, 1, &ls, &lv->sh, &lv->dtype, &lm,
			    e.s, &x->sh, x->dtype, &omap);
	const char *el = pb_imp_elt(lv->dtype);
	struct name t = pb_imp_loop_index(s, ta), ti = pb_imp_fresh(s),
		    lt = pb_imp_fresh(s), one = pb_imp_fresh(s),
		    l1 = pb_imp_fresh(s), rv = pb_imp_fresh(s),
		    src = pb_imp_fresh(s), idx[PB_MAX_RANK];
	pb_imp_emit(s, "%s = arith.index_cast %s : index to %s", ti.s, t.s, el);
	pb_imp_emit(s, "%s = arith.cmpi slt, %s, %s : %s", lt.s, ti.s,
		    g.arg[0].s, el);
	pb_imp_emit(s, "%s = arith.constant 1 : %s", one.s, el);
	pb_imp_emit(s, "%s = arith.subi %s, %s : %s", l1.s, g.arg[0].s, one.s,
		    el);
	pb_imp_emit(s, "%s = arith.subi %s, %s : %s", rv.s, l1.s, ti.s, el);
	pb_imp_emit(s, "%s = arith.select %s, %s, %s : %s", src.s, lt.s, rv.s,
		    ti.s, el);
	for (int d = 0; d < r; d++)
		idx[d] = d == ta ? pb_imp_index_of(s, src.s, lv->dtype,
						   x->sh.d[ta])
				 : pb_imp_loop_index(s, d);
	struct name y = pb_imp_extract(s, in, &x->sh, x->dtype, idx);
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, y.s), x->dtype, &x->sh);
}

const struct pb_imp_op pb_imp_ops_select[] = {
	{"TopK", op_topk, "axis,k,largest,sorted", 1, 0, 0},
	{"Compress", op_compress, "axis", 9, 0, 0},
	{"ReverseSequence", op_reverse_sequence, "batch_axis,time_axis", 10, 0,
	 0},
	{NULL, NULL, NULL, 0, 0, 0},
};
