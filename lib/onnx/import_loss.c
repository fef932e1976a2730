/* Op lowerings of the training losses NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (float32; half data widened), on the input
 * [N, C, d1..dk] and the integer target [N, d1..dk]:
 *
 *   SoftmaxCrossEntropyLoss first computes log_prob = LogSoftmax(scores)
 *   over C (max-reduce, sum of exp(x - max), x - max - log(sum): three
 *   generics; log_prob is its optional second output);
 *   the loss per element: one parallel generic over [N, d1..dk] reading
 *   the target, then input[n, target, d..] (and weight[target]) with
 *   tensor.extract: -input * weight, 0 where target == ignore_index;
 *   reduction "sum": one generic reducing it to a scalar; "mean" (the
 *   default): that sum over the sum of the weights of the elements not
 *   ignored (their count without weights), a third generic and a divide.
 *
 * A target outside [0, C) other than ignore_index (undefined in ONNX) is
 * read as Gather's indices are: negative from the end, clamped into the
 * dim, so that no access falls outside the input. */
#include <math.h>
#include <string.h>

#include "onnx/import.h"

/* The identity map on "n" dims, and the map of "n" dims dropping dim 1
 * (the class dim) when "drop" is set. */
static struct text dims_map(int n, int drop)
{
	int res[PB_MAX_RANK], k = 0;
	for (int i = 0; i < n; i++)
		if (!drop || i != 1)
			res[k++] = i;
	return pb_imp_map(n, k, res);
}

/* Reduce "x" ([N, C, d..], f32) over C with "op" ("arith.maximumf" or,
 * for the sum of exp(x - m), "exp" with "m") into [N, d..]. */
static struct name reduce_c(struct imp *s, const char *x,
			    const struct shape *full, const struct shape *part,
			    const char *m)
{
	int n = full->rank;
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', n);
	iters[1] = 'r';
	struct name init = pb_imp_fill(s, part, m ? 0 : -INFINITY);
	struct text maps[2] = {dims_map(n, 0), dims_map(n, 1)};
	struct text om = dims_map(n, 1);
	const char *ins[2] = {x, m};
	struct shape sh[2] = {*full, *part};
	struct gen g;
	pb_imp_gen_begin(s, &g, n, iters, m ? 2 : 1, ins, sh, maps, init.s,
			 part, &om);
	struct name y;
	if (m) {
		struct name d = pb_imp_scalar_op(s, "arith.subf", g.arg[0].s, g.arg[1].s);
		d = pb_imp_scalar_op(s, "math.exp", d.s, NULL);
		y = pb_imp_scalar_op(s, "arith.addf", d.s, g.arg[2].s);
	} else {
		y = pb_imp_scalar_op(s, "arith.maximumf", g.arg[0].s, g.arg[1].s);
	}
	return pb_imp_gen_end(s, &g, y.s);
}

/* LogSoftmax of "x" over dim 1. */
static struct name log_softmax(struct imp *s, const char *x,
			       const struct shape *full,
			       const struct shape *part)
{
	struct name m = reduce_c(s, x, full, part, NULL);
	struct name sum = reduce_c(s, x, full, part, m.s);
	int n = full->rank;
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', n);
	struct text maps[3] = {dims_map(n, 0), dims_map(n, 1), dims_map(n, 1)};
	struct text om = dims_map(n, 0);
	const char *ins[3] = {x, m.s, sum.s};
	struct shape sh[3] = {*full, *part, *part};
	struct name e = pb_imp_empty(s, full);
	struct gen g;
	pb_imp_gen_begin(s, &g, n, iters, 3, ins, sh, maps, e.s, full, &om);
	struct name d = pb_imp_scalar_op(s, "arith.subf", g.arg[0].s, g.arg[1].s);
	struct name l = pb_imp_scalar_op(s, "math.log", g.arg[2].s, NULL);
	return pb_imp_gen_end(s, &g, pb_imp_scalar_op(s, "arith.subf", d.s, l.s).s);
}

/* Reduce the f32 tensor "x" of shape "sh" to a scalar sum. */
static struct name sum_all(struct imp *s, const char *x,
			   const struct shape *sh)
{
	struct shape sc = {0, {0}};
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'r', sh->rank);
	struct name init = pb_imp_fill(s, &sc, 0);
	struct text im = dims_map(sh->rank, 0), om = pb_imp_map(sh->rank, 0,
								 NULL);
	struct gen g;
	pb_imp_gen_begin(s, &g, sh->rank, iters, 1, &x, sh, &im, init.s, &sc,
			 &om);
	return pb_imp_gen_end(s, &g,
			      pb_imp_scalar_op(s, "arith.addf", g.arg[0].s, g.arg[1].s).s);
}

/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. */
static int op_loss(struct imp *s)
{
	int sce = !strcmp(s->node->op_type, "SoftmaxCrossEntropyLoss");
	struct val *x = pb_imp_in(s, 0), *t = pb_imp_in(s, 1);
	struct val *w = pb_imp_in(s, 2);
	const char *red = pb_imp_attr_str(s, "reduction", "mean");
	int has_ig = pb_imp_attr(s, "ignore_index") != NULL;
	int64_t ig = pb_imp_attr_int(s, "ignore_index", 0);
	if (!t)
		return pb_imp_node_error(s, "expected a target input");
	if (strcmp(red, "none") && strcmp(red, "sum") && strcmp(red, "mean"))
		return pb_imp_node_error(s, "reduction '%s' is not supported",
					 red);
	if (pb_imp_check_type(s, t, 0))
		return PB_ERR;
	if (t->dtype != PB_DT_I64 && t->dtype != PB_DT_I32)
		return pb_imp_node_error(s, "target has type %s: expected "
					 "int64 or int32",
					 pb_dtype_name(t->dtype));
	int n = x->sh.rank;
	struct shape part = {0};
	for (int i = 0; i < n; i++)
		if (i != 1)
			part.d[part.rank++] = x->sh.d[i];
	if (n < 2 || t->sh.rank != part.rank ||
	    memcmp(t->sh.d, part.d, sizeof(part.d[0]) * part.rank))
		return pb_imp_node_error(s, "input %s and target %s do not "
					 "match", pb_imp_ty(&x->sh).s,
					 pb_imp_ty(&t->sh).s);
	int64_t C = x->sh.d[1];
	if (w && (w->sh.rank != 1 || w->sh.d[0] != C))
		return pb_imp_node_error(s, "weight has shape %s: expected "
					 "[%lld]", pb_imp_ty(&w->sh).s,
					 (long long)C);
	const char *xs = pb_imp_use(s, x);
	const char *ts = xs ? pb_imp_use_dt(s, t) : NULL;
	const char *ws = ts && w ? pb_imp_use(s, w) : NULL;
	if (!ts || (w && !ws))
		return PB_ERR;
	struct name lp = {{0}};
	if (sce) {
		lp = log_softmax(s, xs, &x->sh, &part);
		xs = lp.s;
	}
	/* the loss (and, for "mean", the weight) of each element */
	int pr = part.rank, mean = !strcmp(red, "mean");
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', pr);
	struct text id = dims_map(pr, 0);
	struct name res[2];
	for (int k = 0; k < 1 + mean; k++) {
		struct name e = pb_imp_empty(s, &part);
		struct gen g;
		pb_imp_gen_begin_dt(s, &g, pr, iters, 1, &ts, &t->sh, &t->dtype,
				    &id, e.s, &part, PB_DT_F32, &id);
		struct name c = pb_imp_index_of(s, g.arg[0].s, t->dtype, C);
		struct name wv, v = {{0}};
		if (ws) {
			wv = pb_imp_extract(s, ws, &w->sh, PB_DT_F32, &c);
		} else {
			wv = pb_imp_scalar(s, 1);
		}
		if (k == 0) {
			struct name idx[PB_MAX_RANK];
			for (int i = 0, j = 0; i < n; i++)
				idx[i] = i == 1 ? c
					 : pb_imp_loop_index(s, j++);
			v = pb_imp_extract(s, xs, &x->sh, PB_DT_F32, idx);
			v = pb_imp_scalar_op(s, "arith.mulf", v.s, wv.s);
			v = pb_imp_scalar_op(s, "arith.negf", v.s, NULL);
		} else {
			v = wv;
		}
		if (has_ig) {
			struct name iv = pb_imp_scalar_dt(s, t->dtype,
							  (double)ig);
			struct name eq = pb_imp_fresh(s), r = pb_imp_fresh(s);
			struct name z = pb_imp_scalar(s, 0);
			pb_imp_emit(s, "%s = arith.cmpi eq, %s, %s : %s", eq.s,
				    g.arg[0].s, iv.s, pb_imp_elt(t->dtype));
			pb_imp_emit(s, "%s = arith.select %s, %s, %s : f32",
				    r.s, eq.s, z.s, v.s);
			v = r;
		}
		res[k] = pb_imp_gen_end(s, &g, v.s);
	}
	struct name loss = res[0];
	struct shape lsh = part;
	if (strcmp(red, "none")) {
		struct shape sc = {0, {0}};
		loss = sum_all(s, res[0].s, &part);
		lsh = sc;
		if (mean) {
			struct name den = sum_all(s, res[1].s, &part);
			const char *ins[2] = {loss.s, den.s};
			struct shape sh[2] = {sc, sc};
			struct text m0 = pb_imp_map(0, 0, NULL);
			struct text maps[2] = {m0, m0};
			struct name e = pb_imp_empty(s, &sc);
			struct gen g;
			pb_imp_gen_begin(s, &g, 0, "", 2, ins, sh, maps, e.s,
					 &sc, &m0);
			loss = pb_imp_gen_end(s, &g,
				pb_imp_scalar_op(s, "arith.divf", g.arg[0].s,
				    g.arg[1].s).s);
		}
	}
	if (pb_imp_def_ssa(s, loss, PB_DT_F32, &lsh))
		return PB_ERR;
	if (s->node->n_output > 1 && s->node->output[1][0]) {
		if (!sce)
			return pb_imp_node_error(s, "expected one output");
		struct val *v = pb_imp_def(s, 1, PB_DT_F32, &x->sh);
		if (v)
			v->ssa = lp;
	}
	return PB_OK;
}

const struct pb_imp_op pb_imp_ops_loss[] = {
	{"NegativeLogLikelihoodLoss", op_loss, "ignore_index,reduction", 12, 0,
	 PB_IMP_WIDEN},
	{"SoftmaxCrossEntropyLoss", op_loss, "ignore_index,reduction", 12, 0,
	 PB_IMP_WIDEN},
	{NULL, NULL, NULL, 0, 0, 0},
};
