/* Op lowerings that move data or compute shapes: Identity, Constant,
 * Reshape, Flatten, (Un)Squeeze, Transpose, Concat, Slice, Gather,
 * Expand, Shape, Cast, ConstantOfShape, Range. Known inputs are folded
 * at import time (pb_imp_fold_ok); the rest become tensor ops (views
 * where possible) or linalg.transpose/generic. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/import.h"

/* Define output 0 as a known copy of "t" with shape "sh" (same count). */
static int def_known_reshaped(struct imp *s, const struct pb_tensor *t,
			      const struct shape *sh)
{
	struct pb_tensor *c = pb_imp_new_known(t->dtype, sh);
	if (!c)
		return pb_imp_node_error(s, "out of memory");
	memcpy(c->data, t->data, t->nbytes);
	pb_imp_def_known(s, 0, c);
	return PB_OK;
}

/* Define output 0 as a value of shape "to" holding "x" reshaped: folded
 * when "x" is known, else a collapse/expand of its tensor. */
static int reshape_to(struct imp *s, struct val *x, const struct shape *to)
{
	if (pb_imp_numel(&x->sh) != pb_imp_numel(to))
		return pb_imp_node_error(s, "cannot reshape %s into %s",
					 pb_imp_ty(&x->sh).s, pb_imp_ty(to).s);
	if (pb_imp_fold_ok(x)) {
		struct pb_tensor *k = pb_imp_known(s, x);
		return k ? def_known_reshaped(s, k, to) : PB_ERR;
	}
	const char *in = pb_imp_use_dt(s, x);
	if (!in)
		return PB_ERR;
	struct name r = pb_imp_reshape_dt(s, in, &x->sh, to, x->dtype);
	return pb_imp_def_ssa(s, r, x->dtype, to);
}

/* Is the ratio of the current Dropout node (input 1, opset 12 on) known
 * to be 0 (nothing dropped, even in training mode)? */
static int dropout_ratio_zero(struct imp *s)
{
	struct val *r = pb_imp_in(s, 1);
	struct pb_tensor *t;
	if (!r || !pb_imp_fold_ok(r) || pb_imp_numel(&r->sh) != 1 ||
	    !pb_imp_is_float(r->dtype) || !(t = pb_imp_known(s, r)))
		return 0;
	return pb_imp_elem_get(t, 0) == 0;
}

/* Identity and Dropout (inference, or a ratio known to be 0 in any mode,
 * as PyTorch exports F.dropout(p=0.0, training=...)): the output is the
 * input. */
static int op_identity(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0);
	if (!strcmp(s->node->op_type, "Dropout")) {
		int64_t t;
		struct val *tm = pb_imp_in(s, 2);
		if (tm && !dropout_ratio_zero(s) &&
		    (pb_imp_known_ints(s, tm, &t, 1, "training_mode") < 0 || t))
			return s->ctx->nerrors ? PB_ERR
			       : pb_imp_node_error(s, "training_mode=1 is not "
						   "supported");
		/* the mask: all true (nothing dropped), known */
		if (s->node->n_output > 1 && s->node->output[1][0]) {
			struct pb_tensor *m = pb_imp_new_known(PB_DT_BOOL,
							       &x->sh);
			if (!m)
				return pb_imp_node_error(s, "out of memory");
			memset(m->data, 1, m->nbytes);
			pb_imp_def_known(s, 1, m);
		}
	}
	return pb_imp_alias(s, 0, x);
}

/* Constant: a known value (value, value_float(s), value_int(s)). */
static int op_constant(struct imp *s)
{
	const Onnx__TensorProto *t = pb_onnx_constant_value(s->node);
	if (t) {
		struct shape sh = {(int)t->n_dims, {0}};
		if (t->n_dims > PB_MAX_RANK)
			return pb_imp_node_error(s, "rank too large");
		for (size_t i = 0; i < t->n_dims; i++)
			sh.d[i] = t->dims[i];
		struct val *v = pb_imp_def(s, 0, pb_imp_data_type(s,
					   (enum pb_dtype)t->data_type), &sh);
		if (v)
			v->init = t;
		return v && !pb_imp_known(s, v) ? PB_ERR : PB_OK;
	}
	const Onnx__AttributeProto *a;
	struct pb_tensor *k;
	struct shape sh = {0};
	if ((a = pb_imp_attr(s, "value_float")) ||
	    (a = pb_imp_attr(s, "value_floats"))) {
		int list = !a->has_f;
		sh.rank = list;
		sh.d[0] = list ? (int64_t)a->n_floats : 1;
		if (!(k = pb_imp_new_known(PB_DT_F32, &sh)))
			return pb_imp_node_error(s, "out of memory");
		if (list)
			memcpy(k->data, a->floats, k->nbytes);
		else
			*(float *)k->data = a->f;
		if (pb_tensor_convert(k, pb_imp_data_type(s, PB_DT_F32)))
			return pb_imp_node_error(s, "out of memory");
	} else if ((a = pb_imp_attr(s, "value_int")) ||
		   (a = pb_imp_attr(s, "value_ints"))) {
		int list = !a->has_i;
		sh.rank = list;
		sh.d[0] = list ? (int64_t)a->n_ints : 1;
		if (!(k = pb_imp_new_known(PB_DT_I64, &sh)))
			return pb_imp_node_error(s, "out of memory");
		if (list)
			memcpy(k->data, a->ints, k->nbytes);
		else
			*(int64_t *)k->data = a->i;
	} else {
		return pb_imp_node_error(s, "only tensor, float and int "
					 "constants are supported");
	}
	pb_imp_def_known(s, 0, k);
	return PB_OK;
}

/* Reshape: the target shape from the second input (the "shape"
 * attribute before opset 5), with 0 copying a dim (unless allowzero) and
 * -1 inferred. */
static int op_reshape(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0), *shv = pb_imp_in(s, 1);
	int64_t d[PB_MAX_RANK];
	struct shape decl;
	if (s->opset >= 5 && shv && !shv->k && !shv->init &&
	    !pb_imp_declared_shape(s, s->node->output[0], &decl))
		return reshape_to(s, x, &decl); /* shape given at run time */
	int n = s->opset < 5 ? pb_imp_attr_ints(s, "shape", d, PB_MAX_RANK)
			     : pb_imp_known_ints(s, pb_imp_in(s, 1), d,
						 PB_MAX_RANK, "the shape");
	if (n < 0)
		return n == -1 && !s->ctx->nerrors
			       ? pb_imp_node_error(s, "missing shape")
			       : PB_ERR;
	int allowzero = pb_imp_attr_int(s, "allowzero", 0) != 0;
	struct shape to = {n, {0}};
	int infer = -1;
	int64_t known = 1;
	for (int i = 0; i < n; i++) {
		int64_t v = d[i];
		if (v == 0 && !allowzero) {
			if (i >= x->sh.rank)
				return pb_imp_node_error(s, "shape[%d] = 0 has no "
							 "input dim to copy", i);
			v = x->sh.d[i];
		}
		if (v == -1) {
			if (infer >= 0)
				return pb_imp_node_error(s, "more than one -1 in "
							 "the shape");
			infer = i;
			v = 1;
		} else if (v < 0) {
			return pb_imp_node_error(s, "bad shape value %lld",
						 (long long)v);
		}
		to.d[i] = v;
		if (__builtin_mul_overflow(known, v, &known))
			return pb_imp_node_error(s, "the shape is too large");
	}
	if (infer >= 0) {
		if (!known || pb_imp_numel(&x->sh) % known)
			return pb_imp_node_error(s, "cannot infer -1 reshaping "
						 "%s", pb_imp_ty(&x->sh).s);
		to.d[infer] = pb_imp_numel(&x->sh) / known;
	}
	return reshape_to(s, x, &to);
}

/* Flatten: [prod(d < axis), prod(d >= axis)] (axis default 1). */
static int op_flatten(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0);
	int64_t axis = pb_imp_attr_int(s, "axis", 1);
	if (axis < 0)
		axis += x->sh.rank;
	if (axis < 0 || axis > x->sh.rank)
		return pb_imp_node_error(s, "axis out of range");
	struct shape to = {2, {1, 1}};
	for (int i = 0; i < x->sh.rank; i++)
		to.d[i >= axis] *= x->sh.d[i];
	return reshape_to(s, x, &to);
}

/* The axes of (Un)Squeeze: the attribute before opset 13, the second
 * input from 13. Returns the count (-1: absent, -2: error, -3: given at
 * run time, not reported). */
static int squeeze_axes(struct imp *s, int64_t *axes)
{
	if (s->opset < 13)
		return pb_imp_attr_ints(s, "axes", axes, PB_MAX_RANK);
	struct val *a = pb_imp_in(s, 1);
	if (!a)
		return -1;
	if (!a->k && !a->init)
		return -3;
	int n = pb_imp_known_ints(s, a, axes, PB_MAX_RANK, "axes");
	return n < 0 ? -2 : n;
}

/* (Un)Squeeze whose axes are given at run time: the result is "x"
 * reshaped to the output's declared shape (the axes only decide that
 * shape), which must keep the dims other than 1 in order. */
static int squeeze_declared(struct imp *s, struct val *x)
{
	struct shape to;
	if (pb_imp_declared_shape(s, s->node->output[0], &to))
		return pb_imp_node_error(s, "axes must be a constant known at "
					 "import time");
	int i = 0, j = 0;
	for (;;) {
		while (i < x->sh.rank && x->sh.d[i] == 1)
			i++;
		while (j < to.rank && to.d[j] == 1)
			j++;
		if (i == x->sh.rank || j == to.rank)
			break;
		if (x->sh.d[i++] != to.d[j++])
			break;
	}
	if (i != x->sh.rank || j != to.rank)
		return pb_imp_node_error(s, "the declared shape %s does not "
					 "(un)squeeze %s", pb_imp_ty(&to).s,
					 pb_imp_ty(&x->sh).s);
	return reshape_to(s, x, &to);
}

/* Squeeze: drop the listed dims of size 1 (all of them by default). */
static int op_squeeze(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0);
	int64_t axes[PB_MAX_RANK];
	int n = squeeze_axes(s, axes);
	if (n == -2)
		return PB_ERR;
	if (n == -3)
		return squeeze_declared(s, x);
	unsigned drop = 0;
	for (int i = 0; i < n; i++) {
		int a;
		if (pb_imp_axis(s, axes[i], x->sh.rank, &a))
			return PB_ERR;
		if (x->sh.d[a] != 1)
			return pb_imp_node_error(s, "dim %d has size %lld, not 1",
						 a, (long long)x->sh.d[a]);
		drop |= 1u << a;
	}
	struct shape to = {0};
	for (int i = 0; i < x->sh.rank; i++)
		if (n < 0 ? x->sh.d[i] != 1 : !(drop >> i & 1))
			to.d[to.rank++] = x->sh.d[i];
	return reshape_to(s, x, &to);
}

/* Unsqueeze: insert dims of size 1 at the listed output positions. */
static int op_unsqueeze(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0);
	int64_t axes[PB_MAX_RANK];
	int n = squeeze_axes(s, axes);
	if (n == -3)
		return squeeze_declared(s, x);
	if (n < 0)
		return n == -1 ? pb_imp_node_error(s, "missing axes") : PB_ERR;
	int r = x->sh.rank + n;
	if (r > PB_MAX_RANK)
		return pb_imp_node_error(s, "rank too large");
	unsigned ins = 0;
	for (int i = 0; i < n; i++) {
		int a;
		if (pb_imp_axis(s, axes[i], r, &a))
			return PB_ERR;
		if (ins >> a & 1)
			return pb_imp_node_error(s, "repeated axis %d", a);
		ins |= 1u << a;
	}
	struct shape to = {r, {0}};
	for (int i = 0, j = 0; i < r; i++)
		to.d[i] = ins >> i & 1 ? 1 : x->sh.d[j++];
	return reshape_to(s, x, &to);
}

/* The linear index in shape "sh" of the multi-index "idx". */
static int64_t linear(const struct shape *sh, const int64_t *idx)
{
	int64_t l = 0;
	for (int i = 0; i < sh->rank; i++)
		l = l * sh->d[i] + idx[i];
	return l;
}

/* Multi-index "idx" of linear index "l" in shape "sh". */
static void unlinear(const struct shape *sh, int64_t l, int64_t *idx)
{
	for (int i = sh->rank - 1; i >= 0; i--) {
		idx[i] = l % sh->d[i];
		l /= sh->d[i];
	}
}

/* Fold into output "oi": element "idx" of shape "out" is element
 * fn(idx) of "k". */
typedef int64_t (*src_fn)(const struct shape *out, const int64_t *idx,
			  const void *u);
static int fold_into(struct imp *s, size_t oi, const struct pb_tensor *k,
		     const struct shape *out, src_fn fn, const void *u)
{
	struct pb_tensor *t = pb_imp_new_known(k->dtype, out);
	if (!t)
		return pb_imp_node_error(s, "out of memory");
	size_t esz = pb_dtype_size(k->dtype);
	int64_t n = pb_imp_numel(out), idx[PB_MAX_RANK];
	for (int64_t o = 0; o < n; o++) {
		unlinear(out, o, idx);
		memcpy((char *)t->data + o * esz,
		       (char *)k->data + fn(out, idx, u) * esz, esz);
	}
	pb_imp_def_known(s, oi, t);
	return PB_OK;
}

/* Fold into output 0 (see fold_into). */
static int fold_gather(struct imp *s, const struct pb_tensor *k,
		       const struct shape *out, src_fn fn, const void *u)
{
	return fold_into(s, 0, k, out, fn, u);
}

struct perm_u {
	const struct shape *in;
	const int64_t *perm;
};

/* Source index of a transposed element. */
static int64_t perm_src(const struct shape *out, const int64_t *idx,
			const void *u)
{
	const struct perm_u *p = u;
	int64_t in[PB_MAX_RANK];
	for (int i = 0; i < out->rank; i++)
		in[p->perm[i]] = idx[i];
	return linear(p->in, in);
}

/* Transpose by "perm" (default: reversed dims): linalg.transpose. */
static int op_transpose(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0);
	int r = x->sh.rank;
	int64_t perm[PB_MAX_RANK];
	int n = pb_imp_attr_ints(s, "perm", perm, PB_MAX_RANK);
	if (n == -2)
		return PB_ERR;
	if (n < 0)
		for (int i = 0; i < r; i++)
			perm[i] = r - 1 - i;
	else if (n != r)
		return pb_imp_node_error(s, "perm has %d values for rank %d", n,
					 r);
	unsigned seen = 0;
	struct shape out = {r, {0}};
	for (int i = 0; i < r; i++) {
		if (perm[i] < 0 || perm[i] >= r || (seen >> perm[i] & 1))
			return pb_imp_node_error(s, "bad perm");
		seen |= 1u << perm[i];
		out.d[i] = x->sh.d[perm[i]];
	}
	if (pb_imp_fold_ok(x)) {
		struct pb_tensor *k = pb_imp_known(s, x);
		struct perm_u u = {&x->sh, perm};
		return k ? fold_gather(s, k, &out, perm_src, &u) : PB_ERR;
	}
	const char *in = pb_imp_use_dt(s, x);
	if (!in)
		return PB_ERR;
	struct name e = pb_imp_empty_dt(s, &out, x->dtype),
		    res = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = linalg.transpose ins(%s : %s) outs(%s : %s) "
		    "permutation = %s", res.s, in,
		    pb_imp_ty_dt(&x->sh, x->dtype).s, e.s,
		    pb_imp_ty_dt(&out, x->dtype).s, pb_imp_ints(r, perm).s);
	return pb_imp_def_ssa(s, res, x->dtype, &out);
}

/* Concat along "axis": folded when every input is known, else
 * tensor.concat (inputs with no elements are skipped). */
static int op_concat(struct imp *s)
{
	int nin = pb_imp_nin(s), axis, fold = 1;
	struct val *in[64];
	if (nin < 1 || nin > 64)
		return pb_imp_node_error(s, "expected 1 to 64 inputs");
	for (int i = 0; i < nin; i++) {
		if (!(in[i] = pb_imp_in(s, i)))
			return pb_imp_node_error(s, "empty input name");
		fold &= pb_imp_fold_ok(in[i]);
	}
	struct shape out = in[0]->sh;
	if (pb_imp_axis(s, pb_imp_attr_int(s, "axis", 0), out.rank, &axis))
		return PB_ERR;
	out.d[axis] = 0;
	for (int i = 0; i < nin; i++) {
		const struct shape *sh = &in[i]->sh;
		int ok = sh->rank == out.rank && in[i]->dtype == in[0]->dtype;
		for (int j = 0; ok && j < out.rank; j++)
			ok = j == axis || sh->d[j] == out.d[j];
		if (!ok)
			return pb_imp_node_error(s, "input %d of shape %s does "
						 "not match", i,
						 pb_imp_ty(sh).s);
		out.d[axis] += sh->d[axis];
	}
	if (fold) {
		struct pb_tensor *t = pb_imp_new_known(in[0]->dtype, &out);
		if (!t)
			return pb_imp_node_error(s, "out of memory");
		size_t esz = pb_dtype_size(t->dtype);
		int64_t outer = 1, off = 0;
		for (int j = 0; j < axis; j++)
			outer *= out.d[j];
		int64_t row = (int64_t)(t->nbytes / esz) / (outer ? outer : 1);
		for (int i = 0; i < nin; i++) {
			struct pb_tensor *k = pb_imp_known(s, in[i]);
			if (!k) {
				pb_tensor_clear(t);
				free(t);
				return PB_ERR;
			}
			int64_t part = outer ? pb_tensor_numel(k) / outer : 0;
			for (int64_t o = 0; o < outer; o++)
				memcpy((char *)t->data + (o * row + off) * esz,
				       (char *)k->data + o * part * esz,
				       part * esz);
			off += part;
		}
		pb_imp_def_known(s, 0, t);
		return PB_OK;
	}
	struct pb_buf vals = {0}, tys = {0};
	int n = 0;
	const char *last = NULL;
	for (int i = 0; i < nin; i++) {
		if (!pb_imp_numel(&in[i]->sh))
			continue;
		const char *x = in[i]->dtype == in[0]->dtype
					? pb_imp_use_dt(s, in[i]) : NULL;
		if (!x) {
			pb_buf_free(&vals);
			pb_buf_free(&tys);
			return s->ctx->nerrors ? PB_ERR
			       : pb_imp_node_error(s, "inputs have types %s and "
						   "%s", pb_dtype_name(
						   in[0]->dtype), pb_dtype_name(
						   in[i]->dtype));
		}
		pb_buf_printf(&vals, "%s%s", n ? ", " : "", x);
		pb_buf_printf(&tys, "%s%s", n ? ", " : "",
			      pb_imp_ty_dt(&in[i]->sh, in[i]->dtype).s);
		last = x;
		n++;
	}
	struct name r;
	if (n == 1) {
		snprintf(r.s, sizeof(r.s), "%s", last);
	} else if (n == 0) {
		r = pb_imp_empty_dt(s, &out, in[0]->dtype);
	} else {
		r = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = tensor.concat dim(%d) %s : (%s) -> %s", r.s,
			    axis, vals.data, tys.data,
			    pb_imp_ty_dt(&out, in[0]->dtype).s);
	}
	pb_buf_free(&vals);
	pb_buf_free(&tys);
	return pb_imp_def_ssa(s, r, in[0]->dtype, &out);
}

struct slice_u {
	const struct shape *in;
	int64_t start[PB_MAX_RANK], step[PB_MAX_RANK];
};

/* Source index of a sliced element. */
static int64_t slice_src(const struct shape *out, const int64_t *idx,
			 const void *u)
{
	const struct slice_u *p = u;
	int64_t in[PB_MAX_RANK];
	for (int i = 0; i < out->rank; i++)
		in[i] = p->start[i] + idx[i] * p->step[i];
	return linear(p->in, in);
}

/* The (starts, ends, axes, steps) of Slice: attributes before opset 10,
 * inputs from 10. Returns the count of axes or -1 (reported). */
static int slice_params(struct imp *s, int64_t *st, int64_t *en, int64_t *ax,
			int64_t *sp)
{
	int n, ne, na, ns;
	if (s->opset < 10) {
		n = pb_imp_attr_ints(s, "starts", st, PB_MAX_RANK);
		ne = pb_imp_attr_ints(s, "ends", en, PB_MAX_RANK);
		na = pb_imp_attr_ints(s, "axes", ax, PB_MAX_RANK);
		ns = -1;
	} else {
		struct val *a = pb_imp_in(s, 3), *p = pb_imp_in(s, 4);
		n = pb_imp_known_ints(s, pb_imp_in(s, 1), st, PB_MAX_RANK,
				      "starts");
		ne = n < 0 ? -1 : pb_imp_known_ints(s, pb_imp_in(s, 2), en,
						    PB_MAX_RANK, "ends");
		na = ne < 0 || !a ? -1 : pb_imp_known_ints(s, a, ax,
							   PB_MAX_RANK, "axes");
		ns = ne < 0 || !p ? -1 : pb_imp_known_ints(s, p, sp,
							   PB_MAX_RANK, "steps");
		if (s->ctx->nerrors)
			return -1;
	}
	if (n < 0 || ne != n || (na >= 0 && na != n) || (ns >= 0 && ns != n)) {
		if (!s->ctx->nerrors)
			pb_imp_node_error(s, "starts, ends, axes and steps must "
					  "have the same length");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (na < 0)
			ax[i] = i;
		if (ns < 0)
			sp[i] = 1;
	}
	return n;
}

/* Emit the i64 value of element "k" of the run-time integer vector "v"
 * ("ssa"), inside a generic. */
static struct name elem_i64(struct imp *s, struct val *v, const char *ssa,
			    int k)
{
	struct name c = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.constant %d : index", c.s, k);
	struct name e = pb_imp_extract(s, ssa, &v->sh, v->dtype, &c);
	if (v->dtype == PB_DT_I64)
		return e;
	struct name r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.extsi %s : %s to i64", r.s, e.s,
		    pb_imp_elt(v->dtype));
	return r;
}

/* Emit "arith.<op> a, b : i64" ("op" may carry a predicate: "cmpi slt,"),
 * "b" a constant when "bs" is NULL. */
static struct name i64op(struct imp *s, const char *op, const char *a,
			 const char *bs, int64_t b)
{
	struct name r = pb_imp_fresh(s), c;
	if (!bs) {
		c = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.constant %lld : i64", c.s,
			    (long long)b);
		bs = c.s;
	}
	pb_imp_emit(s, "%s = arith.%s %s, %s : i64", r.s, op, a, bs);
	return r;
}

/* Emit "c ? a : b" on i64. */
static struct name sel64(struct imp *s, const char *c, const char *a,
			 const char *b)
{
	struct name r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.select %s, %s, %s : i64", r.s, c, a, b);
	return r;
}

/* Begin a generic with no inputs over every point of "out" (of element
 * type "dt"), its parallel loops the output's dimensions: the body reads
 * what it needs by index (tensor.extract). */
static void gen_over(struct imp *s, struct gen *g, const struct shape *out,
		     enum pb_dtype dt)
{
	int r = out->rank, all[PB_MAX_RANK];
	char iters[PB_MAX_RANK + 1];
	for (int i = 0; i < r; i++)
		all[i] = i;
	struct text om = pb_imp_map(r, r, all);
	memset(iters, 'p', r);
	struct name e = pb_imp_empty_dt(s, out, dt);
	pb_imp_gen_begin_dt(s, g, r, iters, 0, NULL, NULL, NULL, NULL, e.s, out,
			    dt, &om);
}

/* Slice whose starts, axes or steps are given at run time (ends only
 * bound the result, whose shape is then the declared one): one generic
 * over the output reading x[start + i * step] per dim with
 * tensor.extract, the start and step of each dim picked from the
 * run-time vectors (the entry whose axis is the dim; else 0 and 1),
 * normalized as ONNX says (negative from the end, clamped into the dim)
 * and the index clamped into the dim. */
static int slice_rt(struct imp *s, struct val *x)
{
	struct val *vs = pb_imp_in(s, 1), *va = pb_imp_in(s, 3),
		   *vp = pb_imp_in(s, 4);
	struct shape out;
	int r = x->sh.rank;
	if (r < 1 || pb_imp_declared_shape(s, s->node->output[0], &out) ||
	    out.rank != r)
		return pb_imp_node_error(s, "starts, ends, axes and steps must "
					 "be known at import time, or the "
					 "output's shape declared");
	struct val *v[3] = {vs, va, vp};
	const char *ssa[3] = {NULL, NULL, NULL};
	int n = vs->sh.rank == 1 ? (int)vs->sh.d[0] : -1;
	for (int i = 0; i < 3; i++) {
		if (!v[i])
			continue;
		if ((v[i]->dtype != PB_DT_I64 && v[i]->dtype != PB_DT_I32) ||
		    v[i]->sh.rank != 1 || v[i]->sh.d[0] != n)
			return pb_imp_node_error(s, "starts, axes and steps "
						 "must be integer vectors of "
						 "one length");
		if (!(ssa[i] = pb_imp_use_dt(s, v[i])))
			return PB_ERR;
	}
	const char *in = pb_imp_use_dt(s, x);
	if (!in)
		return PB_ERR;
	struct gen g;
	gen_over(s, &g, &out, x->dtype);
	struct name zero = pb_imp_fresh(s), one = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.constant 0 : i64", zero.s);
	pb_imp_emit(s, "%s = arith.constant 1 : i64", one.s);
	struct name idx[PB_MAX_RANK];
	for (int d = 0; d < r; d++) {
		int64_t dim = x->sh.d[d];
		struct name start = zero, step = one;
		for (int k = 0; k < n; k++) {
			struct name a, c = pb_imp_fresh(s);
			if (va) {
				a = elem_i64(s, va, ssa[1], k);
				struct name ng = i64op(s, "cmpi slt,", a.s,
						       NULL, 0);
				struct name ar = i64op(s, "addi", a.s, NULL, r);
				a = sel64(s, ng.s, ar.s, a.s);
			} else {
				a = pb_imp_fresh(s);
				pb_imp_emit(s, "%s = arith.constant %d : i64",
					    a.s, k);
			}
			struct name dc = pb_imp_fresh(s);
			pb_imp_emit(s, "%s = arith.constant %d : i64", dc.s, d);
			pb_imp_emit(s, "%s = arith.cmpi eq, %s, %s : i64", c.s,
				    a.s, dc.s);
			struct name st = elem_i64(s, vs, ssa[0], k);
			struct name sp = vp ? elem_i64(s, vp, ssa[2], k) : one;
			/* negative from the end; clamped into [0, dim] for a
			 * positive step, [0, dim - 1] for a negative one */
			struct name ng = i64op(s, "cmpi slt,", st.s, NULL, 0);
			struct name sd = i64op(s, "addi", st.s, NULL, dim);
			st = sel64(s, ng.s, sd.s, st.s);
			struct name pos = i64op(s, "cmpi sgt,", sp.s, NULL, 0);
			struct name hi1 = pb_imp_fresh(s), hi2 = pb_imp_fresh(s);
			pb_imp_emit(s, "%s = arith.constant %lld : i64", hi1.s,
				    (long long)dim);
			pb_imp_emit(s, "%s = arith.constant %lld : i64", hi2.s,
				    (long long)(dim - 1));
			struct name hi = sel64(s, pos.s, hi1.s, hi2.s);
			st = i64op(s, "maxsi", st.s, zero.s, 0);
			st = i64op(s, "minsi", st.s, hi.s, 0);
			start = sel64(s, c.s, st.s, start.s);
			step = sel64(s, c.s, sp.s, step.s);
		}
		struct name i = pb_imp_loop_index(s, d), ii = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.index_cast %s : index to i64", ii.s,
			    i.s);
		struct name src = i64op(s, "muli", ii.s, step.s, 0);
		src = i64op(s, "addi", src.s, start.s, 0);
		src = i64op(s, "maxsi", src.s, zero.s, 0);
		src = i64op(s, "minsi", src.s, NULL, dim > 0 ? dim - 1 : 0);
		idx[d] = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.index_cast %s : i64 to index",
			    idx[d].s, src.s);
	}
	struct name y = pb_imp_extract(s, in, &x->sh, x->dtype, idx);
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, y.s), x->dtype, &out);
}

/* Slice: known inputs fold; positive steps become tensor.extract_slice,
 * negative ones a linalg.generic reading through a reversed map; starts,
 * axes or steps given at run time: slice_rt. */
static int op_slice(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0);
	if (s->opset >= 10 && pb_imp_in(s, 1) && pb_imp_in(s, 2)) {
		for (int i = 1; i <= 4; i++) {
			struct val *v = pb_imp_in(s, i);
			if (v && !v->k && !v->init)
				return slice_rt(s, x);
		}
	}
	int64_t st[PB_MAX_RANK], en[PB_MAX_RANK], ax[PB_MAX_RANK],
		sp[PB_MAX_RANK];
	int n = slice_params(s, st, en, ax, sp);
	if (n < 0)
		return PB_ERR;
	struct slice_u u = {&x->sh, {0}, {0}};
	struct shape out = x->sh;
	int neg = 0;
	for (int i = 0; i < x->sh.rank; i++)
		u.step[i] = 1;
	for (int i = 0; i < n; i++) {
		int a;
		if (pb_imp_axis(s, ax[i], x->sh.rank, &a))
			return PB_ERR;
		int64_t d = x->sh.d[a], b = st[i], e = en[i], p = sp[i];
		if (!p)
			return pb_imp_node_error(s, "step 0");
		b = b < 0 ? b + d : b;
		e = e < 0 ? e + d : e;
		if (p > 0) {
			b = b < 0 ? 0 : b > d ? d : b;
			e = e < 0 ? 0 : e > d ? d : e;
			out.d[a] = e > b ? (e - b + p - 1) / p : 0;
		} else {
			b = b < 0 ? 0 : b > d - 1 ? d - 1 : b;
			e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
			out.d[a] = b > e ? (b - e - p - 1) / -p : 0;
			neg = 1;
		}
		u.start[a] = b;
		u.step[a] = p;
	}
	if (pb_imp_fold_ok(x)) {
		struct pb_tensor *k = pb_imp_known(s, x);
		return k ? fold_gather(s, k, &out, slice_src, &u) : PB_ERR;
	}
	const char *in = pb_imp_use(s, x);
	if (!in)
		return PB_ERR;
	struct name r;
	int r0 = x->sh.rank;
	if (!neg) {
		r = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = tensor.extract_slice %s%s %s %s : %s to %s",
			    r.s, in, pb_imp_ints(r0, u.start).s,
			    pb_imp_ints(r0, out.d).s, pb_imp_ints(r0, u.step).s,
			    pb_imp_ty(&x->sh).s, pb_imp_ty(&out).s);
	} else {
		/* in[i] = start + step * d_i, written as an affine map */
		struct text m;
		size_t k = snprintf(m.s, sizeof(m.s), "affine_map<(");
		for (int i = 0; i < r0; i++)
			k += snprintf(m.s + k, sizeof(m.s) - k, "%sd%d",
				      i ? ", " : "", i);
		k += snprintf(m.s + k, sizeof(m.s) - k, ") -> (");
		for (int i = 0; i < r0; i++)
			k += snprintf(m.s + k, sizeof(m.s) - k,
				      "%s%lld + d%d * %lld", i ? ", " : "",
				      (long long)u.start[i], i,
				      (long long)u.step[i]);
		snprintf(m.s + k, sizeof(m.s) - k, ")>");
		int all[PB_MAX_RANK];
		char iters[PB_MAX_RANK + 1];
		for (int i = 0; i < r0; i++)
			all[i] = i;
		memset(iters, 'p', r0);
		struct text id = pb_imp_map(r0, r0, all);
		struct name e = pb_imp_empty(s, &out);
		struct gen g;
		pb_imp_gen_begin(s, &g, r0, iters, 1, &in, &x->sh, &m, e.s, &out,
				 &id);
		r = pb_imp_gen_end(s, &g, g.arg[0].s);
	}
	return pb_imp_def_ssa(s, r, PB_DT_F32, &out);
}

/* Shape: the dims of the input (start/end from opset 15), known. */
static int op_shape(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0);
	int r = x->sh.rank;
	int64_t b = pb_imp_attr_int(s, "start", 0), e = pb_imp_attr_int(s, "end", r);
	b = b < 0 ? b + r : b;
	e = e < 0 ? e + r : e;
	b = b < 0 ? 0 : b > r ? r : b;
	e = e < 0 ? 0 : e > r ? r : e;
	struct shape sh = {1, {e > b ? e - b : 0}};
	struct pb_tensor *t = pb_imp_new_known(PB_DT_I64, &sh);
	if (!t)
		return pb_imp_node_error(s, "out of memory");
	for (int64_t i = b; i < e; i++)
		((int64_t *)t->data)[i - b] = x->sh.d[i];
	pb_imp_def_known(s, 0, t);
	return PB_OK;
}

/* Size: the element count of the input, known. */
static int op_size(struct imp *s)
{
	struct shape sh = {0};
	struct pb_tensor *t = pb_imp_new_known(PB_DT_I64, &sh);
	if (!t)
		return pb_imp_node_error(s, "out of memory");
	*(int64_t *)t->data = pb_imp_numel(&pb_imp_in(s, 0)->sh);
	pb_imp_def_known(s, 0, t);
	return PB_OK;
}

struct gather_u {
	const struct shape *in;
	int axis, irank;
	const int64_t *ind;
	const struct shape *ish;
};

/* Source index of a gathered element. */
static int64_t gather_src(const struct shape *out, const int64_t *idx,
			  const void *u)
{
	const struct gather_u *p = u;
	int64_t in[PB_MAX_RANK];
	(void)out;
	for (int i = 0; i < p->axis; i++)
		in[i] = idx[i];
	in[p->axis] = p->ind[linear(p->ish, idx + p->axis)];
	for (int i = p->axis + 1; i < p->in->rank; i++)
		in[i] = idx[i - 1 + p->irank];
	return linear(p->in, in);
}

/* Gather with known indices along "axis": folded for known data, else
 * one extract_slice per index (concatenated when several). */
static int op_gather(struct imp *s)
{
	struct val *x, *iv;
	int axis;
	if (pb_imp_gather_args(s, &x, &iv, &axis))
		return PB_ERR;
	int64_t ind[64];
	/* run-time or many indices, or data other than float32 that is not
	 * folded: one generic reading the indices */
	if ((!iv->k && !iv->init) || pb_imp_numel(&iv->sh) > 64 ||
	    (x->dtype != PB_DT_F32 && !pb_imp_fold_ok(x)))
		return pb_imp_gather_rt(s, x, iv, axis, 0);
	int ni = pb_imp_known_ints(s, iv, ind, 64, "the indices");
	if (ni < 0)
		return PB_ERR;
	int64_t d = x->sh.d[axis];
	for (int i = 0; i < ni; i++) {
		ind[i] = ind[i] < 0 ? ind[i] + d : ind[i];
		if (ind[i] < 0 || ind[i] >= d)
			return pb_imp_node_error(s, "index %lld is out of range",
						 (long long)ind[i]);
	}
	struct shape out = {0};
	for (int i = 0; i < axis; i++)
		out.d[out.rank++] = x->sh.d[i];
	for (int i = 0; i < iv->sh.rank; i++)
		out.d[out.rank++] = iv->sh.d[i];
	for (int i = axis + 1; i < x->sh.rank; i++)
		out.d[out.rank++] = x->sh.d[i];
	if (pb_imp_fold_ok(x)) {
		struct pb_tensor *k = pb_imp_known(s, x);
		struct gather_u u = {&x->sh, axis, iv->sh.rank, ind, &iv->sh};
		return k ? fold_gather(s, k, &out, gather_src, &u) : PB_ERR;
	}
	const char *in = pb_imp_use(s, x);
	if (!in)
		return PB_ERR;
	int r0 = x->sh.rank;
	struct shape one = x->sh, cat = x->sh;
	one.d[axis] = 1;
	cat.d[axis] = ni;
	int64_t off[PB_MAX_RANK] = {0}, str[PB_MAX_RANK];
	for (int i = 0; i < r0; i++)
		str[i] = 1;
	struct pb_buf vals = {0}, tys = {0};
	struct name r;
	for (int i = 0; i < ni; i++) {
		off[axis] = ind[i];
		r = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = tensor.extract_slice %s%s %s %s : %s to %s",
			    r.s, in, pb_imp_ints(r0, off).s,
			    pb_imp_ints(r0, one.d).s, pb_imp_ints(r0, str).s,
			    pb_imp_ty(&x->sh).s, pb_imp_ty(&one).s);
		pb_buf_printf(&vals, "%s%s", i ? ", " : "", r.s);
		pb_buf_printf(&tys, "%s%s", i ? ", " : "", pb_imp_ty(&one).s);
	}
	if (ni > 1) {
		r = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = tensor.concat dim(%d) %s : (%s) -> %s", r.s,
			    axis, vals.data, tys.data, pb_imp_ty(&cat).s);
	}
	pb_buf_free(&vals);
	pb_buf_free(&tys);
	if (!ni)
		r = pb_imp_empty(s, &cat);
	r = pb_imp_reshape(s, r.s, ni ? &cat : &cat, &out);
	return pb_imp_def_ssa(s, r, PB_DT_F32, &out);
}

/* Source index of a broadcast element ("u": the input's shape). */
static int64_t expand_src(const struct shape *out, const int64_t *idx,
			  const void *u)
{
	return pb_imp_bcast_index(out, u, linear(out, idx));
}

/* Expand: broadcast to the known shape (a copying linalg.generic). */
static int op_expand(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0), *sv = pb_imp_in(s, 1);
	struct shape want = {0}, out;
	if (sv && !sv->k && !sv->init &&
	    !pb_imp_declared_shape(s, s->node->output[0], &want)) {
		/* the shape is given at run time: use the declared one */
	} else {
		int n = pb_imp_known_ints(s, sv, want.d, PB_MAX_RANK,
					  "the shape");
		if (n < 0)
			return PB_ERR;
		want.rank = n;
	}
	if (pb_imp_broadcast(s, &x->sh, &want, &out))
		return PB_ERR;
	if (pb_imp_fold_ok(x) && pb_imp_numel(&out) <= PB_FOLD_MAX) {
		struct pb_tensor *k = pb_imp_known(s, x);
		return k ? fold_gather(s, k, &out, expand_src, &x->sh) : PB_ERR;
	}
	const char *in = pb_imp_use_dt(s, x);
	if (!in)
		return PB_ERR;
	int all[PB_MAX_RANK], res[PB_MAX_RANK];
	for (int i = 0; i < out.rank; i++)
		all[i] = i;
	for (int i = 0; i < x->sh.rank; i++) {
		int o = i + out.rank - x->sh.rank;
		res[i] = x->sh.d[i] == 1 && out.d[o] != 1 ? -1 : o;
	}
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', out.rank);
	struct text im = pb_imp_map(out.rank, x->sh.rank, res),
		    om = pb_imp_map(out.rank, out.rank, all);
	struct name e = pb_imp_empty_dt(s, &out, x->dtype);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, out.rank, iters, 1, &in, &x->sh, &x->dtype,
			    &im, e.s, &out, x->dtype, &om);
	struct name r = pb_imp_gen_end(s, &g, g.arg[0].s);
	return pb_imp_def_ssa(s, r, x->dtype, &out);
}

/* Is "dt" a type Cast can fold between? */
static int castable(enum pb_dtype dt)
{
	return dt == PB_DT_F32 || dt == PB_DT_F64 || pb_imp_is_int(dt) ||
	       dt == PB_DT_BOOL || pb_dtype_is_half(dt);
}

/* Cast and CastLike (the type of input 1): folded for known data; at run time a converting generic between
 * the types the importer computes on (pb_imp_elt). */
static int op_cast(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0);
	struct val *like = pb_imp_in(s, 1);
	enum pb_dtype to = (enum pb_dtype)pb_imp_attr_int(s, "to", 0);
	if (!strcmp(s->node->op_type, "CastLike")) {
		if (!like)
			return pb_imp_node_error(s, "expected 2 inputs");
		to = like->dtype;
	}
	if (x->k || x->init) {
		struct pb_tensor *k = pb_imp_known(s, x);
		if (!k)
			return PB_ERR;
		if (!castable(k->dtype) || !castable(to))
			return pb_imp_node_error(s, "cast from %s to %s is not "
						 "supported",
						 pb_dtype_name(k->dtype),
						 pb_dtype_name(to));
		struct pb_tensor *t = pb_imp_new_known(to, &x->sh);
		if (!t)
			return pb_imp_node_error(s, "out of memory");
		for (int64_t i = 0; i < pb_tensor_numel(k); i++)
			pb_imp_elem_set(t, i, pb_imp_elem_get(k, i));
		pb_imp_def_known(s, 0, t);
		return PB_OK;
	}
	if (x->dtype == to)
		return pb_imp_alias(s, 0, x);
	const char *in = pb_imp_elt(x->dtype) && pb_imp_elt(to)
				 ? pb_imp_use_dt(s, x) : NULL;
	if (!in)
		return s->ctx->nerrors ? PB_ERR
		       : pb_imp_node_error(s, "cast from %s to %s is not "
					   "supported", pb_dtype_name(x->dtype),
					   pb_dtype_name(to));
	struct name r = pb_imp_convert_tensor(s, in, &x->sh, x->dtype, to);
	return pb_imp_def_ssa(s, r, to, &x->sh);
}

/* ConstantOfShape: a known tensor of the "value" (default f32 0) of the
 * known shape, or of the declared output shape when the shape is given
 * at run time; large float ones become a fill. */
static int op_constant_of_shape(struct imp *s)
{
	struct shape sh = {0};
	struct val *in = pb_imp_in(s, 0);
	int n;
	if (in && !in->k && !in->init &&
	    !pb_imp_declared_shape(s, s->node->output[0], &sh))
		n = sh.rank; /* shape given at run time: the declared one */
	else if ((n = pb_imp_known_ints(s, in, sh.d, PB_MAX_RANK,
					"the shape")) < 0)
		return PB_ERR;
	sh.rank = n;
	int64_t numel = 1;
	for (int i = 0; i < n; i++) {
		if (sh.d[i] < 0)
			return pb_imp_node_error(s, "negative dimension %lld "
						 "in the shape",
						 (long long)sh.d[i]);
		if (sh.d[i] && numel > (INT64_C(1) << 32) / sh.d[i])
			return pb_imp_node_error(s, "the shape is too large");
		numel *= sh.d[i];
	}
	const Onnx__AttributeProto *a = pb_imp_attr(s, "value");
	struct pb_tensor val = {0};
	float zero = 0;
	if (a && a->t) {
		struct pb_buf where = {0};
		pb_buf_printf(&where, "%s: node '%s'", s->file, s->node_name);
		int rc = pb_onnx_tensor_from_proto(s->ctx, where.data,
						   s->path, a->t, &val);
		pb_buf_free(&where);
		if (rc)
			return PB_ERR;
		if (pb_tensor_numel(&val) != 1) {
			pb_tensor_clear(&val);
			return pb_imp_node_error(s, "value must have one "
						 "element");
		}
	} else {
		val.dtype = PB_DT_F32;
		val.data = malloc(4);
		memcpy(val.data, &zero, 4);
		val.nbytes = 4;
	}
	int rc = PB_OK;
	if (pb_imp_numel(&sh) > PB_FOLD_MAX && val.dtype == PB_DT_F32) {
		struct name r = pb_imp_fill(s, &sh, *(float *)val.data);
		struct val *v = pb_imp_def(s, 0, PB_DT_F32, &sh);
		if (v)
			v->ssa = r;
	} else if (numel > (1 << 24)) {
		rc = pb_imp_node_error(s, "a %s fill of %lld elements is not "
				       "supported", pb_dtype_name(val.dtype),
				       (long long)numel);
	} else {
		struct pb_tensor *t = pb_imp_new_known(val.dtype, &sh);
		size_t esz = pb_dtype_size(val.dtype);
		if (!t)
			rc = pb_imp_node_error(s, "out of memory");
		for (int64_t i = 0; t && i < pb_imp_numel(&sh); i++)
			memcpy((char *)t->data + i * esz, val.data, esz);
		if (t)
			pb_imp_def_known(s, 0, t);
	}
	pb_tensor_clear(&val);
	return rc;
}

/* Range of run-time scalars "v" into the output's declared shape: one
 * generic computing start + i * delta (integers, or floats). */
static int range_rt(struct imp *s, struct val **v)
{
	struct shape out;
	enum pb_dtype dt = v[0]->dtype;
	if (pb_imp_declared_shape(s, s->node->output[0], &out) ||
	    out.rank != 1)
		return pb_imp_node_error(s, "start, limit and delta must be "
					 "known scalars, or the output's "
					 "shape declared");
	for (int i = 0; i < 3; i++)
		if (v[i]->dtype != dt || pb_imp_numel(&v[i]->sh) != 1 ||
		    !castable(dt) || dt == PB_DT_BOOL)
			return pb_imp_node_error(s, "start, limit and delta "
						 "must be numeric scalars of "
						 "one type");
	const char *ins[2];
	struct shape sh[2] = {v[0]->sh, v[2]->sh};
	enum pb_dtype dts[2] = {dt, dt};
	int zero[PB_MAX_RANK] = {-1, -1, -1, -1, -1, -1, -1, -1,
				 -1, -1, -1, -1, -1, -1, -1, -1};
	struct text maps[2] = {pb_imp_map(1, sh[0].rank, zero),
			       pb_imp_map(1, sh[1].rank, zero)};
	struct text om = pb_imp_map(1, 1, (int[]){0});
	if (!(ins[0] = pb_imp_use_dt(s, v[0])) ||
	    !(ins[1] = pb_imp_use_dt(s, v[2])))
		return PB_ERR;
	struct name e = pb_imp_empty_dt(s, &out, dt);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, 1, "p", 2, ins, sh, dts, maps, e.s, &out,
			    dt, &om);
	const char *el = pb_imp_elt(dt);
	struct name i = pb_imp_fresh(s), n = pb_imp_fresh(s),
		    m = pb_imp_fresh(s), r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = linalg.index 0 : index", i.s);
	if (pb_imp_is_float(dt)) {
		struct name k = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.index_cast %s : index to i64", k.s,
			    i.s);
		pb_imp_emit(s, "%s = arith.sitofp %s : i64 to %s", n.s, k.s, el);
		pb_imp_emit(s, "%s = arith.mulf %s, %s : %s", m.s, n.s,
			    g.arg[1].s, el);
		pb_imp_emit(s, "%s = arith.addf %s, %s : %s", r.s, g.arg[0].s,
			    m.s, el);
	} else {
		pb_imp_emit(s, "%s = arith.index_cast %s : index to %s", n.s,
			    i.s, el);
		pb_imp_emit(s, "%s = arith.muli %s, %s : %s", m.s, n.s,
			    g.arg[1].s, el);
		pb_imp_emit(s, "%s = arith.addi %s, %s : %s", r.s, g.arg[0].s,
			    m.s, el);
	}
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, r.s), dt, &out);
}

/* Range: start, limit and delta known scalars: the result is known;
 * given at run time: computed (range_rt) into the declared shape. */
static int op_range(struct imp *s)
{
	struct val *v[3];
	struct pb_tensor *k[3];
	for (int i = 0; i < 3; i++)
		if (!(v[i] = pb_imp_in(s, i)))
			return pb_imp_node_error(s, "expected 3 inputs");
	for (int i = 0; i < 3; i++)
		if (!pb_imp_fold_ok(v[i]))
			return range_rt(s, v);
	for (int i = 0; i < 3; i++) {
		k[i] = pb_imp_known(s, v[i]);
		if (!k[i] || pb_tensor_numel(k[i]) != 1)
			return s->ctx->nerrors ? PB_ERR
			       : pb_imp_node_error(s, "start, limit and delta "
						   "must be known scalars");
	}
	double b = pb_imp_elem_get(k[0], 0), e = pb_imp_elem_get(k[1], 0), d = pb_imp_elem_get(k[2], 0);
	if (d == 0 || !castable(k[0]->dtype))
		return pb_imp_node_error(s, "bad range");
	double cnt = ceil((e - b) / d);
	struct shape sh = {1, {cnt > 0 ? (int64_t)cnt : 0}};
	if (sh.d[0] > PB_FOLD_MAX)
		return pb_imp_node_error(s, "range of %lld values is too long",
					 (long long)sh.d[0]);
	struct pb_tensor *t = pb_imp_new_known(k[0]->dtype, &sh);
	if (!t)
		return pb_imp_node_error(s, "out of memory");
	for (int64_t i = 0; i < sh.d[0]; i++)
		pb_imp_elem_set(t, i, b + i * d);
	pb_imp_def_known(s, 0, t);
	return PB_OK;
}

/* Split along "axis" into the node's outputs: sizes from the "split"
 * attribute (before opset 13) or input (from 13), else from the declared
 * output shapes when that input is given at run time, else equal parts
 * (num_outputs from opset 18, the last part may be smaller). Each part
 * is a tensor.extract_slice, or folded for known input. */
static int op_split(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0), *sp = pb_imp_in(s, 1);
	int axis, nout = (int)s->node->n_output;
	if (pb_imp_axis(s, pb_imp_attr_int(s, "axis", 0), x->sh.rank, &axis))
		return PB_ERR;
	int64_t d = x->sh.d[axis], sz[64];
	int n = -1;
	if (nout < 1 || nout > 64)
		return pb_imp_node_error(s, "expected 1 to 64 outputs");
	if (s->opset < 13) {
		if ((n = pb_imp_attr_ints(s, "split", sz, 64)) == -2)
			return PB_ERR;
	} else if (sp && (sp->k || sp->init)) {
		if ((n = pb_imp_known_ints(s, sp, sz, 64, "split")) < 0)
			return PB_ERR;
	} else if (sp) {
		for (n = 0; n < nout; n++) {
			struct shape dec;
			if (pb_imp_declared_shape(s, s->node->output[n], &dec) ||
			    dec.rank != x->sh.rank)
				return pb_imp_node_error(s, "split must be known "
							 "at import time");
			sz[n] = dec.d[axis];
		}
	}
	if (n < 0) {
		int64_t parts = pb_imp_attr_int(s, "num_outputs", nout);
		int64_t each = parts ? (d + parts - 1) / parts : 0;
		for (n = 0; n < nout; n++)
			sz[n] = n < nout - 1 ? each : d - each * (nout - 1);
	}
	int64_t sum = 0;
	for (int i = 0; i < n; i++)
		sum += sz[i] < 0 ? -1 : sz[i];
	if (n != nout || sum != d)
		return pb_imp_node_error(s, "split sizes do not add up to %lld "
					 "in %d outputs", (long long)d, nout);
	const char *in = NULL;
	int fold = pb_imp_fold_ok(x);
	if (!fold && !(in = pb_imp_use(s, x)))
		return PB_ERR;
	struct slice_u u = {&x->sh, {0}, {0}};
	for (int i = 0; i < x->sh.rank; i++)
		u.step[i] = 1;
	for (int i = 0, off = 0; i < nout; off += sz[i++]) {
		struct shape out = x->sh;
		out.d[axis] = sz[i];
		u.start[axis] = off;
		if (!s->node->output[i][0])
			continue;
		if (fold) {
			struct pb_tensor *k = pb_imp_known(s, x);
			if (!k || fold_into(s, i, k, &out, slice_src, &u))
				return PB_ERR;
			continue;
		}
		struct name r = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = tensor.extract_slice %s%s %s %s : %s to %s",
			    r.s, in, pb_imp_ints(x->sh.rank, u.start).s,
			    pb_imp_ints(x->sh.rank, out.d).s,
			    pb_imp_ints(x->sh.rank, u.step).s,
			    pb_imp_ty(&x->sh).s, pb_imp_ty(&out).s);
		struct val *v = pb_imp_def(s, i, PB_DT_F32, &out);
		if (v)
			v->ssa = r;
	}
	return PB_OK;
}

/* Pad "x" in mode "mode" (edge, reflect, wrap) by the "na" known pads
 * "pads" (begins, then ends) of dims "axes" (already checked): each
 * output coordinate reads an input coordinate from a table (clamped,
 * mirrored without repeating the edge, or wrapped around). */
static int pad_remap(struct imp *s, struct val *x, const char *mode,
		     const int64_t *pads, int na, const int64_t *axes)
{
	struct shape out = x->sh;
	double *tab[PB_MAX_RANK] = {0};
	int rc = PB_OK;
	for (int i = 0; i < na && !rc; i++) {
		int a = (int)(axes[i] < 0 ? axes[i] + x->sh.rank : axes[i]);
		int64_t n = x->sh.d[a], b = pads[i], e = pads[na + i];
		int64_t m = n + b + e;
		if (!b && !e)
			continue;
		if (!n || m > ((int64_t)1 << 31))
			return pb_imp_node_error(s, "cannot pad dim %d of size "
						 "%lld by %lld and %lld", a,
						 (long long)n, (long long)b,
						 (long long)e);
		out.d[a] = m;
		if (!(tab[a] = calloc(m ? m : 1, sizeof(double)))) {
			rc = pb_imp_node_error(s, "out of memory");
			break;
		}
		for (int64_t o = 0; o < m; o++) {
			int64_t j = o - b;
			if (!strcmp(mode, "edge")) {
				j = j < 0 ? 0 : j >= n ? n - 1 : j;
			} else if (!strcmp(mode, "wrap")) {
				j = ((j % n) + n) % n;
			} else {
				int64_t period = n > 1 ? 2 * (n - 1) : 1;
				j = ((j % period) + period) % period;
				j = j >= n ? period - j : j;
			}
			tab[a][o] = (double)j;
		}
	}
	if (!rc)
		rc = pb_imp_resample(s, x, &out, tab, NULL, NULL);
	for (int i = 0; i < PB_MAX_RANK; i++)
		free(tab[i]);
	return rc;
}

/* Pad with known pads (attribute before opset 11, input from 11; axes
 * from 18). Constant mode: tensor.pad for the positive part, then
 * tensor.extract_slice for negative pads; edge, reflect and wrap: see
 * pad_remap. */
/* Pad whose pads (or constant_value) are given at run time, into the
 * declared output shape: one generic over the output whose source index
 * per dim is o - pads[begin], read with tensor.extract where it is inside
 * the input (constant mode: else the value), clamped (edge), mirrored
 * (reflect) or wrapped (wrap). Axes, when given, must be known. */
static int pad_rt(struct imp *s, struct val *x, const char *mode)
{
	struct val *pv = pb_imp_in(s, 1), *cv = pb_imp_in(s, 2),
		   *av = pb_imp_in(s, 3);
	int r = x->sh.rank;
	int64_t axes[PB_MAX_RANK];
	struct shape out;
	if (r < 1 || pb_imp_declared_shape(s, s->node->output[0], &out) ||
	    out.rank != r)
		return pb_imp_node_error(s, "pads must be known at import time, "
					 "or the output's shape declared");
	int na = r;
	if (av) {
		if ((na = pb_imp_known_ints(s, av, axes, PB_MAX_RANK,
					    "axes")) < 0)
			return PB_ERR;
	} else {
		for (int i = 0; i < r; i++)
			axes[i] = i;
	}
	if ((pv->dtype != PB_DT_I64 && pv->dtype != PB_DT_I32) ||
	    pv->sh.rank != 1 || pv->sh.d[0] != 2 * na)
		return pb_imp_node_error(s, "pads must be %d integers", 2 * na);
	if (cv && (cv->dtype != x->dtype || pb_imp_numel(&cv->sh) != 1))
		return pb_imp_node_error(s, "constant_value must be a scalar of "
					 "the input's type");
	int slot[PB_MAX_RANK];
	for (int d = 0; d < r; d++)
		slot[d] = -1;
	for (int i = 0; i < na; i++) {
		int a;
		if (pb_imp_axis(s, axes[i], r, &a))
			return PB_ERR;
		slot[a] = i;
	}
	const char *in = pb_imp_use_dt(s, x), *ps = in ? pb_imp_use_dt(s, pv)
						      : NULL;
	const char *cs = ps && cv ? pb_imp_use_dt(s, cv) : NULL;
	if (!ps || (cv && !cs))
		return PB_ERR;
	struct gen g;
	gen_over(s, &g, &out, x->dtype);
	struct name zero = pb_imp_fresh(s), inside = {{0}};
	pb_imp_emit(s, "%s = arith.constant 0 : i64", zero.s);
	struct name idx[PB_MAX_RANK];
	for (int d = 0; d < r; d++) {
		int64_t n = x->sh.d[d];
		struct name o = pb_imp_loop_index(s, d), src = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.index_cast %s : index to i64", src.s,
			    o.s);
		if (slot[d] >= 0)
			src = i64op(s, "subi", src.s,
				    elem_i64(s, pv, ps, slot[d]).s, 0);
		if (!strcmp(mode, "constant")) {
			struct name ge = i64op(s, "cmpi sge,", src.s, zero.s, 0);
			struct name lt = i64op(s, "cmpi slt,", src.s, NULL, n);
			struct name in_d = pb_imp_fresh(s);
			pb_imp_emit(s, "%s = arith.andi %s, %s : i1", in_d.s,
				    ge.s, lt.s);
			if (inside.s[0]) {
				struct name a = pb_imp_fresh(s);
				pb_imp_emit(s, "%s = arith.andi %s, %s : i1",
					    a.s, inside.s, in_d.s);
				in_d = a;
			}
			inside = in_d;
		} else if (!strcmp(mode, "reflect")) {
			struct name ng = i64op(s, "cmpi slt,", src.s, zero.s, 0);
			struct name neg = i64op(s, "subi", zero.s, src.s, 0);
			src = sel64(s, ng.s, neg.s, src.s);
			struct name ov = i64op(s, "cmpi sge,", src.s, NULL, n);
			struct name m = pb_imp_fresh(s), back;
			pb_imp_emit(s, "%s = arith.constant %lld : i64", m.s,
				    (long long)(2 * (n - 1)));
			back = i64op(s, "subi", m.s, src.s, 0);
			src = sel64(s, ov.s, back.s, src.s);
		} else if (!strcmp(mode, "wrap")) {
			struct name rm = i64op(s, "remsi", src.s, NULL, n);
			struct name ng = i64op(s, "cmpi slt,", rm.s, zero.s, 0);
			struct name ad = i64op(s, "addi", rm.s, NULL, n);
			src = sel64(s, ng.s, ad.s, rm.s);
		}
		src = i64op(s, "maxsi", src.s, zero.s, 0);
		src = i64op(s, "minsi", src.s, NULL, n > 0 ? n - 1 : 0);
		idx[d] = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.index_cast %s : i64 to index",
			    idx[d].s, src.s);
	}
	struct name y = pb_imp_extract(s, in, &x->sh, x->dtype, idx);
	if (inside.s[0]) {
		struct name c, r2 = pb_imp_fresh(s);
		if (cs) {
			struct name z[PB_MAX_RANK];
			for (int i = 0; i < cv->sh.rank; i++) {
				z[i] = pb_imp_fresh(s);
				pb_imp_emit(s, "%s = arith.constant 0 : index",
					    z[i].s);
			}
			c = pb_imp_extract(s, cs, &cv->sh, cv->dtype, z);
		} else {
			c = pb_imp_scalar_dt(s, x->dtype,
					     pb_imp_attr_float(s, "value", 0));
		}
		pb_imp_emit(s, "%s = arith.select %s, %s, %s : %s", r2.s,
			    inside.s, y.s, c.s, pb_imp_elt(x->dtype));
		y = r2;
	}
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, y.s), x->dtype, &out);
}

static int op_pad(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0);
	int r = x->sh.rank, n;
	int64_t pads[2 * PB_MAX_RANK], axes[PB_MAX_RANK];
	char mode[16];
	snprintf(mode, sizeof(mode), "%s",
		 pb_imp_attr_str(s, "mode", "constant"));
	if (strcmp(mode, "constant") && strcmp(mode, "edge") &&
	    strcmp(mode, "reflect") && strcmp(mode, "wrap"))
		return pb_imp_node_error(s, "mode '%s' is not supported", mode);
	double value = pb_imp_attr_float(s, "value", 0);
	if (s->opset < 11) {
		n = pb_imp_attr_ints(s, "pads", pads, 2 * PB_MAX_RANK);
	} else {
		struct val *pv = pb_imp_in(s, 1), *vv = pb_imp_in(s, 2);
		if ((pv && !pv->k && !pv->init) ||
		    (vv && !vv->k && !vv->init))
			return pad_rt(s, x, mode);
		n = pb_imp_known_ints(s, pb_imp_in(s, 1), pads, 2 * PB_MAX_RANK,
				      "pads");
		if (n < 0)
			return PB_ERR;
		struct val *cv = pb_imp_in(s, 2);
		struct pb_tensor *ck = cv ? pb_imp_known(s, cv) : NULL;
		if (cv && (!ck || ck->dtype != PB_DT_F32 ||
			   pb_tensor_numel(ck) != 1))
			return pb_imp_node_error(s, "constant_value must be a "
						 "known float scalar");
		if (ck)
			value = *(float *)ck->data;
	}
	if (n < 0)
		return s->ctx->nerrors ? PB_ERR
				       : pb_imp_node_error(s, "missing pads");
	int na = n / 2;
	struct val *av = pb_imp_in(s, 3);
	if (av) {
		if (pb_imp_known_ints(s, av, axes, PB_MAX_RANK, "axes") != na)
			return s->ctx->nerrors ? PB_ERR
			       : pb_imp_node_error(s, "axes and pads differ");
	} else {
		if (n != 2 * r)
			return pb_imp_node_error(s, "pads has %d values for rank "
						 "%d", n, r);
		for (int i = 0; i < r; i++)
			axes[i] = i;
	}
	int64_t lo[PB_MAX_RANK] = {0}, hi[PB_MAX_RANK] = {0},
		cut_lo[PB_MAX_RANK] = {0}, cut_hi[PB_MAX_RANK] = {0};
	for (int i = 0; i < na; i++) {
		int a;
		if (pb_imp_axis(s, axes[i], r, &a))
			return PB_ERR;
		int64_t b = pads[i], e = pads[na + i];
		lo[a] = b > 0 ? b : 0;
		hi[a] = e > 0 ? e : 0;
		cut_lo[a] = b < 0 ? -b : 0;
		cut_hi[a] = e < 0 ? -e : 0;
		if (x->sh.d[a] + b + e < 0)
			return pb_imp_node_error(s, "pads remove more than dim "
						 "%d holds", a);
	}
	if (strcmp(mode, "constant"))
		return pad_remap(s, x, mode, pads, na, axes);
	const char *in = pb_imp_use(s, x);
	if (!in)
		return PB_ERR;
	struct shape sh = x->sh;
	struct name p = pb_imp_pad(s, in, &sh, lo, hi, value);
	int cut = 0;
	struct shape out = sh;
	int64_t one[PB_MAX_RANK];
	for (int i = 0; i < r; i++) {
		out.d[i] -= cut_lo[i] + cut_hi[i];
		cut |= cut_lo[i] || cut_hi[i];
		one[i] = 1;
	}
	if (cut) {
		struct name c = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = tensor.extract_slice %s%s %s %s : %s to %s",
			    c.s, p.s, pb_imp_ints(r, cut_lo).s,
			    pb_imp_ints(r, out.d).s, pb_imp_ints(r, one).s,
			    pb_imp_ty(&sh).s, pb_imp_ty(&out).s);
		p = c;
	}
	return pb_imp_def_ssa(s, p, PB_DT_F32, &out);
}

/* Source index of a tiled element ("u": the input's shape). */
static int64_t tile_src(const struct shape *out, const int64_t *idx,
			const void *u)
{
	const struct shape *sh = u;
	int64_t in[PB_MAX_RANK];
	for (int i = 0; i < out->rank; i++)
		in[i] = idx[i] % sh->d[i];
	return linear(sh, in);
}

/* Tile by known repeats: folded, or a copying linalg.generic reading
 * through "d mod size" maps. */
static int op_tile(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0), *rv = pb_imp_in(s, 1);
	int64_t rep[PB_MAX_RANK];
	struct shape dec;
	int n;
	if (rv && !rv->k && !rv->init &&
	    !pb_imp_declared_shape(s, s->node->output[0], &dec) &&
	    dec.rank == x->sh.rank) {
		/* repeats given at run time: from the declared shape */
		n = dec.rank;
		for (int i = 0; i < n; i++)
			rep[i] = x->sh.d[i] ? dec.d[i] / x->sh.d[i] : 0;
	} else if ((n = pb_imp_known_ints(s, rv, rep, PB_MAX_RANK,
					  "repeats")) < 0) {
		return PB_ERR;
	}
	if (n != x->sh.rank)
		return pb_imp_node_error(s, "repeats has %d values for rank %d",
					 n, x->sh.rank);
	struct shape out = x->sh;
	for (int i = 0; i < n; i++) {
		if (rep[i] < 0)
			return pb_imp_node_error(s, "negative repeat");
		out.d[i] *= rep[i];
	}
	if (pb_imp_fold_ok(x) && pb_imp_numel(&out) <= PB_FOLD_MAX) {
		struct pb_tensor *k = pb_imp_known(s, x);
		return k ? fold_gather(s, k, &out, tile_src, &x->sh) : PB_ERR;
	}
	const char *in = pb_imp_use(s, x);
	if (!in)
		return PB_ERR;
	int all[PB_MAX_RANK], src[PB_MAX_RANK];
	int64_t mod[PB_MAX_RANK];
	for (int i = 0; i < n; i++) {
		all[i] = i;
		src[i] = x->sh.d[i] == 1 ? -1 : i;
		mod[i] = rep[i] == 1 ? -1 : x->sh.d[i];
	}
	struct text m = pb_imp_map_mod(n, n, src, mod);
	char iters[PB_MAX_RANK + 1] = "pppppppppppppppp";
	struct text id = pb_imp_map(n, n, all);
	struct name e = pb_imp_empty(s, &out);
	struct gen g;
	pb_imp_gen_begin(s, &g, n, iters, 1, &in, &x->sh, &m, e.s, &out, &id);
	struct name r = pb_imp_gen_end(s, &g, g.arg[0].s);
	return pb_imp_def_ssa(s, r, PB_DT_F32, &out);
}

const struct pb_imp_op pb_imp_ops_shape[] = {
	{"Identity", op_identity, "", 1, 0, 0},
	{"Dropout", op_identity, "ratio,seed,is_test", 1, 0, 0},
	{"Constant", op_constant, "value,value_float,value_floats,value_int,"
				  "value_ints", 1, 0, 0},
	{"Reshape", op_reshape, "allowzero,shape", 1, 0, 0},
	{"Flatten", op_flatten, "axis", 1, 0, 0},
	{"Squeeze", op_squeeze, "axes", 1, 0, 0},
	{"Unsqueeze", op_unsqueeze, "axes", 1, 0, 0},
	{"Transpose", op_transpose, "perm", 1, 0, 0},
	{"Concat", op_concat, "axis", 1, 0, 0},
	{"Slice", op_slice, "starts,ends,axes", 1, 0, PB_IMP_WIDEN},
	{"Shape", op_shape, "start,end", 1, 0, 0},
	{"Size", op_size, "", 1, 0, 0},
	{"Gather", op_gather, "axis", 1, 0, 0},
	{"Expand", op_expand, "", 8, 0, 0},
	{"Cast", op_cast, "to,saturate", 1, 0, 0},
	{"CastLike", op_cast, "saturate", 15, 0, 0},
	{"ConstantOfShape", op_constant_of_shape, "value", 9, 0, 0},
	{"Range", op_range, "", 11, 0, 0},
	{"Split", op_split, "axis,num_outputs,split", 1, 0, PB_IMP_WIDEN},
	{"Pad", op_pad, "mode,pads,value", 2, 0, PB_IMP_WIDEN},
	{"Tile", op_tile, "", 6, 0, PB_IMP_WIDEN},
	{NULL, NULL, NULL, 0, 0, 0},
};
