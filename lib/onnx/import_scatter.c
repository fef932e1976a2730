/* Op lowerings of the scatter/gather family on tuples of indices:
 * GatherND, ScatterND and ScatterElements. Each is folded at import time
 * when its inputs are known (pb_imp_fold_ok: shape subgraphs, masks built
 * from constants); otherwise it becomes one linalg.generic on the run-time
 * data:
 *
 *   GatherND         a parallel generic over the output, reading the k
 *                    indices of its tuple and then the data with
 *                    tensor.extract (as Gather with run-time indices);
 *   ScatterND,       a generic over the output (parallel) and the index
 *   ScatterElements  tuples (reduction) whose init is the data: each
 *                    tuple that addresses the output element replaces it
 *                    by its update, or combines them (reduction add, mul,
 *                    max, min), in the order of the tuples, so that the
 *                    last of duplicate indices wins, as in ONNX's
 *                    reference.
 *
 * Indices are int64 or int32; negative ones count from the end of their
 * dim. At run time an index is clamped into its dim (no access falls
 * outside a tensor); folding rejects one out of range. */
#include <stdlib.h>
#include <string.h>

#include "onnx/import.h"

/* The "reduction" attribute (opset 16 on): 0 none, else "add", "mul",
 * "max", "min". Returns -1 (reported) for another value. */
static int reduction(struct imp *s, const char **kind)
{
	static const char *const kinds[] = {"none", "add", "mul", "max", "min"};
	const char *r = pb_imp_attr_str(s, "reduction", "none");
	for (int i = 0; i < 5; i++)
		if (!strcmp(r, kinds[i])) {
			*kind = kinds[i];
			return i;
		}
	return pb_imp_node_error(s, "reduction '%s' is not supported", r), -1;
}

/* Check the indices "iv" (integer, present). */
static int check_indices(struct imp *s, struct val *iv)
{
	if (pb_imp_check_type(s, iv, 0))
		return PB_ERR;
	if (iv->dtype != PB_DT_I64 && iv->dtype != PB_DT_I32)
		return pb_imp_node_error(s, "indices have type %s: expected "
					 "int64 or int32",
					 pb_dtype_name(iv->dtype));
	return PB_OK;
}

/* Known index "i" of "t" into a dim of size "n", negative from the end,
 * into "*r"; an index outside [-n, n) is an error. */
static int known_index(struct imp *s, const struct pb_tensor *t, int64_t i,
		       int64_t n, int64_t *r)
{
	int64_t x = t->dtype == PB_DT_I64 ? ((int64_t *)t->data)[i]
					  : ((int32_t *)t->data)[i];
	if (x < -n || x >= n)
		return pb_imp_node_error(s, "index %lld is out of range for a "
					 "dim of size %lld", (long long)x,
					 (long long)n);
	*r = x < 0 ? x + n : x;
	return PB_OK;
}

/* Combine element "o" of known "t" with "x" by reduction "red". */
static void combine_known(struct pb_tensor *t, int64_t o,
			  const struct pb_tensor *u, int64_t j, int red)
{
	if (!red) {
		size_t esz = pb_dtype_size(t->dtype);
		memcpy((char *)t->data + o * esz, (char *)u->data + j * esz,
		       esz);
		return;
	}
	double a = pb_imp_elem_get(t, o), b = pb_imp_elem_get(u, j);
	double r = red == 1 ? a + b : red == 2 ? a * b : red == 3 ? (a > b ? a : b)
							 : (a < b ? a : b);
	pb_imp_elem_set(t, o, r);
}

/* Emit the combination of the accumulator "acc" with the update "u" of
 * type "dt" by reduction "red" (0: the update itself). */
static struct name combine(struct imp *s, const char *acc, const char *u,
			   enum pb_dtype dt, int red)
{
	static const char *const fops[] = {"", "addf", "mulf", "maximumf",
					   "minimumf"};
	static const char *const iops[] = {"", "addi", "muli", "maxsi",
					   "minsi"};
	struct name r;
	if (!red) {
		snprintf(r.s, sizeof(r.s), "%s", u);
		return r;
	}
	r = pb_imp_fresh(s);
	if (pb_dtype_is_half(dt)) {
		struct name a = pb_imp_fresh(s), b = pb_imp_fresh(s),
			    c = pb_imp_fresh(s);
		const char *el = pb_imp_elt(dt);
		pb_imp_emit(s, "%s = arith.extf %s : %s to f32", a.s, acc, el);
		pb_imp_emit(s, "%s = arith.extf %s : %s to f32", b.s, u, el);
		pb_imp_emit(s, "%s = arith.%s %s, %s : f32", c.s, fops[red], a.s,
			    b.s);
		pb_imp_emit(s, "%s = arith.truncf %s : f32 to %s", r.s, c.s, el);
		return r;
	}
	if (dt == PB_DT_BOOL) /* add is or, mul/min is and, max is or */
		pb_imp_emit(s, "%s = arith.%s %s, %s : i1", r.s,
			    red == 1 || red == 3 ? "ori" : "andi", acc, u);
	else
		pb_imp_emit(s, "%s = arith.%s %s, %s : %s", r.s,
			    pb_imp_is_float(dt) ? fops[red] : iops[red], acc, u,
			    pb_imp_elt(dt));
	return r;
}

/* Emit "a and b" on i1 ("a" may be empty: then "b"). */
static struct name and_i1(struct imp *s, const struct name *a,
			  const struct name *b)
{
	if (!a->s[0])
		return *b;
	struct name r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.andi %s, %s : i1", r.s, a->s, b->s);
	return r;
}

/* Emit "i == j" on two index values. */
static struct name eq_index(struct imp *s, const char *i, const char *j)
{
	struct name r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.cmpi eq, %s, %s : index", r.s, i, j);
	return r;
}

/* Emit an index constant. */
static struct name cst_index(struct imp *s, int64_t v)
{
	struct name r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.constant %lld : index", r.s, (long long)v);
	return r;
}

/* GatherND(data, indices), batch_dims b (opset 12 on): the output is
 * indices.shape[:-1] + data.shape[b + k:], k = indices.shape[-1]; the
 * first b dims of data and indices are shared batch dims. */
static int op_gather_nd(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0), *iv = pb_imp_in(s, 1);
	int64_t b = pb_imp_attr_int(s, "batch_dims", 0);
	if (pb_imp_check_type(s, x, 0) || check_indices(s, iv))
		return PB_ERR;
	int r = x->sh.rank, q = iv->sh.rank;
	if (q < 1 || b < 0 || b >= q || b >= r)
		return pb_imp_node_error(s, "batch_dims %lld for data of rank "
					 "%d and indices of rank %d",
					 (long long)b, r, q);
	int64_t k = iv->sh.d[q - 1];
	if (k < 1 || b + k > r)
		return pb_imp_node_error(s, "index tuples of %lld for data of "
					 "rank %d (batch_dims %lld)",
					 (long long)k, r, (long long)b);
	for (int i = 0; i < b; i++)
		if (x->sh.d[i] != iv->sh.d[i])
			return pb_imp_node_error(s, "batch dim %d differs: %lld "
						 "and %lld", i,
						 (long long)x->sh.d[i],
						 (long long)iv->sh.d[i]);
	struct shape out = {0};
	for (int i = 0; i < q - 1; i++)
		out.d[out.rank++] = iv->sh.d[i];
	for (int i = b + k; i < r; i++) {
		if (out.rank == PB_MAX_RANK)
			return pb_imp_node_error(s, "the result has too high a "
						 "rank");
		out.d[out.rank++] = x->sh.d[i];
	}
	int64_t inner = 1; /* elements of one gathered slice */
	for (int i = b + k; i < r; i++)
		inner *= x->sh.d[i];
	if (pb_imp_fold_ok(x) && pb_imp_fold_ok(iv) &&
	    pb_imp_numel(&out) <= PB_FOLD_MAX) {
		struct pb_tensor *kx = pb_imp_known(s, x),
				 *ki = kx ? pb_imp_known(s, iv) : NULL, *t;
		if (!ki)
			return PB_ERR;
		if (!(t = pb_imp_new_known(x->dtype, &out)))
			return pb_imp_node_error(s, "out of memory");
		size_t esz = pb_dtype_size(x->dtype);
		int64_t ntup = pb_imp_numel(&out) / (inner ? inner : 1);
		int64_t per_batch = 1; /* tuples per batch */
		for (int i = b; i < q - 1; i++)
			per_batch *= iv->sh.d[i];
		int64_t bstride = 1; /* data elements per batch */
		for (int i = b; i < r; i++)
			bstride *= x->sh.d[i];
		for (int64_t tp = 0; inner && tp < ntup; tp++) {
			int64_t off = (tp / per_batch) * bstride, stride = inner;
			int64_t c[PB_MAX_RANK];
			for (int j = 0; j < k; j++)
				if (known_index(s, ki, tp * k + j,
						x->sh.d[b + j], &c[j])) {
					pb_tensor_clear(t);
					free(t);
					return PB_ERR;
				}
			for (int j = k - 1; j >= 0; j--) {
				off += c[j] * stride;
				stride *= x->sh.d[b + j];
			}
			memcpy((char *)t->data + tp * inner * esz,
			       (char *)kx->data + off * esz, inner * esz);
		}
		pb_imp_def_known(s, 0, t);
		return PB_OK;
	}
	const char *data = pb_imp_use_dt(s, x);
	const char *ind = data ? pb_imp_use_dt(s, iv) : NULL;
	if (!ind)
		return PB_ERR;
	int all[PB_MAX_RANK];
	for (int i = 0; i < out.rank; i++)
		all[i] = i;
	struct text om = pb_imp_map(out.rank, out.rank, all);
	struct name e = pb_imp_empty_dt(s, &out, x->dtype);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', out.rank);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, out.rank, iters, 0, NULL, NULL, NULL, NULL,
			    e.s, &out, x->dtype, &om);
	/* the tuple's coordinates: the output's first q - 1 loops, then j */
	struct name ic[PB_MAX_RANK], idx[PB_MAX_RANK];
	for (int i = 0; i < q - 1; i++)
		ic[i] = pb_imp_loop_index(s, i);
	for (int i = 0; i < b; i++)
		idx[i] = ic[i];
	for (int j = 0; j < k; j++) {
		ic[q - 1] = cst_index(s, j);
		struct name v = pb_imp_extract(s, ind, &iv->sh, iv->dtype, ic);
		idx[b + j] = pb_imp_index_of(s, v.s, iv->dtype,
					     x->sh.d[b + j]);
	}
	for (int i = b + k; i < r; i++)
		idx[i] = pb_imp_loop_index(s, q - 1 + i - (b + k));
	struct name y = pb_imp_extract(s, data, &x->sh, x->dtype, idx);
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, y.s), x->dtype, &out);
}

/* The data, indices and updates of a scatter node, checked: one element
 * type for data and updates. */
static int scatter_args(struct imp *s, struct val **x, struct val **iv,
			struct val **u)
{
	*x = pb_imp_in(s, 0);
	*iv = pb_imp_in(s, 1);
	*u = pb_imp_in(s, 2);
	if (pb_imp_check_type(s, *x, 0) || check_indices(s, *iv) ||
	    pb_imp_check_type(s, *u, 0))
		return PB_ERR;
	if ((*u)->dtype != (*x)->dtype)
		return pb_imp_node_error(s, "updates have type %s, data %s",
					 pb_dtype_name((*u)->dtype),
					 pb_dtype_name((*x)->dtype));
	return PB_OK;
}

/* The start of a folded scatter: the known indices "*ki" and updates
 * "*ku", and "*t", a new known copy of "x" to scatter into. PB_ERR when
 * one of them is not known or on running out of memory (reported). */
static int fold_start(struct imp *s, struct val *x, struct val *iv,
		      struct val *u, struct pb_tensor **ki,
		      struct pb_tensor **ku, struct pb_tensor **t)
{
	struct pb_tensor *kx = pb_imp_known(s, x);
	*ki = kx ? pb_imp_known(s, iv) : NULL;
	*ku = *ki ? pb_imp_known(s, u) : NULL;
	if (!*ku)
		return PB_ERR;
	if (!(*t = pb_imp_new_known(x->dtype, &x->sh)))
		return pb_imp_node_error(s, "out of memory");
	memcpy((*t)->data, kx->data, (*t)->nbytes);
	return PB_OK;
}

/* Fold a scatter: a copy of known "x" where, for each of the "ntup"
 * index tuples, "inner" elements at the offset "off(tuple)" combine with
 * the tuple's updates (ScatterND: k indices per tuple into the leading
 * dims; ScatterElements: tuple = one index position, see below). */
static int fold_scatter_nd(struct imp *s, struct val *x, struct val *iv,
			   struct val *u, int red)
{
	struct pb_tensor *ki, *ku, *t;
	int rc = fold_start(s, x, iv, u, &ki, &ku, &t);
	if (rc)
		return rc;
	int r = x->sh.rank, q = iv->sh.rank;
	int64_t k = iv->sh.d[q - 1], inner = 1;
	for (int i = k; i < r; i++)
		inner *= x->sh.d[i];
	int64_t ntup = pb_imp_numel(&iv->sh) / (k ? k : 1);
	for (int64_t tp = 0; tp < ntup; tp++) {
		int64_t off = 0, stride = inner, c;
		for (int j = k - 1; j >= 0; j--) {
			if (known_index(s, ki, tp * k + j, x->sh.d[j], &c)) {
				pb_tensor_clear(t);
				free(t);
				return PB_ERR;
			}
			off += c * stride;
			stride *= x->sh.d[j];
		}
		for (int64_t e = 0; e < inner; e++)
			combine_known(t, off + e, ku, tp * inner + e, red);
	}
	pb_imp_def_known(s, 0, t);
	return PB_OK;
}

/* ScatterND(data, indices, updates): indices of shape [.., k] address
 * the first k dims of data; updates has shape indices.shape[:-1] +
 * data.shape[k:]. At run time: loops over the output (r, parallel) and
 * the tuples (q - 1, reduction); the tuple's k indices are read with
 * tensor.extract, and the update through the map (tuple, d_k..d_r-1). */
static int op_scatter_nd(struct imp *s)
{
	struct val *x, *iv, *u;
	const char *kind;
	int red = reduction(s, &kind);
	if (red < 0 || scatter_args(s, &x, &iv, &u))
		return PB_ERR;
	int r = x->sh.rank, q = iv->sh.rank;
	int64_t k = q ? iv->sh.d[q - 1] : 0;
	if (q < 1 || k < 1 || k > r)
		return pb_imp_node_error(s, "indices of shape %s for data of "
					 "rank %d", pb_imp_ty(&iv->sh).s, r);
	struct shape ush = {0};
	for (int i = 0; i < q - 1; i++)
		ush.d[ush.rank++] = iv->sh.d[i];
	for (int i = k; i < r && ush.rank < PB_MAX_RANK; i++)
		ush.d[ush.rank++] = x->sh.d[i];
	if (ush.rank != u->sh.rank ||
	    memcmp(ush.d, u->sh.d, sizeof(ush.d[0]) * ush.rank))
		return pb_imp_node_error(s, "updates have shape %s: expected "
					 "%s", pb_imp_ty(&u->sh).s,
					 pb_imp_ty(&ush).s);
	int nd = r + q - 1;
	if (nd > PB_MAX_RANK)
		return pb_imp_node_error(s, "%d loops: at most %d are "
					 "supported", nd, PB_MAX_RANK);
	if (pb_imp_fold_ok(x) && pb_imp_fold_ok(iv) && pb_imp_fold_ok(u) &&
	    pb_imp_numel(&x->sh) <= PB_FOLD_MAX)
		return fold_scatter_nd(s, x, iv, u, red);
	const char *data = pb_imp_use_dt(s, x);
	const char *ind = data ? pb_imp_use_dt(s, iv) : NULL;
	const char *upd = ind ? pb_imp_use_dt(s, u) : NULL;
	if (!upd)
		return PB_ERR;
	int um[PB_MAX_RANK], om[PB_MAX_RANK];
	for (int i = 0; i < q - 1; i++)
		um[i] = r + i;
	for (int i = k; i < r; i++)
		um[q - 1 + i - k] = i;
	for (int i = 0; i < r; i++)
		om[i] = i;
	struct text umap = pb_imp_map(nd, u->sh.rank, um);
	struct text omap = pb_imp_map(nd, r, om);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', r);
	memset(iters + r, 'r', q - 1);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, nd, iters, 1, &upd, &u->sh, &u->dtype,
			    &umap, data, &x->sh, x->dtype, &omap);
	struct name ic[PB_MAX_RANK], match = {{0}};
	for (int i = 0; i < q - 1; i++)
		ic[i] = pb_imp_loop_index(s, r + i);
	for (int j = 0; j < k; j++) {
		ic[q - 1] = cst_index(s, j);
		struct name v = pb_imp_extract(s, ind, &iv->sh, iv->dtype, ic);
		struct name c = pb_imp_index_of(s, v.s, iv->dtype, x->sh.d[j]);
		struct name d = pb_imp_loop_index(s, j);
		struct name e = eq_index(s, c.s, d.s);
		match = and_i1(s, &match, &e);
	}
	struct name v = combine(s, g.arg[1].s, g.arg[0].s, x->dtype, red);
	struct name y = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.select %s, %s, %s : %s", y.s, match.s, v.s,
		    g.arg[1].s, pb_imp_elt(x->dtype));
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, y.s), x->dtype, &x->sh);
}

/* ScatterElements(data, indices, updates), axis (and Scatter, its
 * opset 9 form): updates[p] goes to data[p with p[axis] replaced by
 * indices[p]]. At run time: loops over the output (r, parallel) and
 * the index positions p (r, reduction); p addresses the output element
 * when p[i] = o[i] for i != axis and its index is o[axis]. */
static int op_scatter_elements(struct imp *s)
{
	struct val *x, *iv, *u;
	const char *kind;
	int red = reduction(s, &kind), axis;
	if (red < 0 || scatter_args(s, &x, &iv, &u))
		return PB_ERR;
	int r = x->sh.rank;
	if (pb_imp_axis(s, pb_imp_attr_int(s, "axis", 0), r, &axis))
		return PB_ERR;
	if (iv->sh.rank != r || u->sh.rank != r ||
	    memcmp(iv->sh.d, u->sh.d, sizeof(iv->sh.d[0]) * r))
		return pb_imp_node_error(s, "indices %s and updates %s must "
					 "have one shape of data's rank %d",
					 pb_imp_ty(&iv->sh).s,
					 pb_imp_ty(&u->sh).s, r);
	for (int i = 0; i < r; i++)
		if (i != axis && iv->sh.d[i] > x->sh.d[i])
			return pb_imp_node_error(s, "indices %s exceed data %s",
						 pb_imp_ty(&iv->sh).s,
						 pb_imp_ty(&x->sh).s);
	if (pb_imp_fold_ok(x) && pb_imp_fold_ok(iv) && pb_imp_fold_ok(u) &&
	    pb_imp_numel(&x->sh) <= PB_FOLD_MAX) {
		struct pb_tensor *ki, *ku, *t;
		int rc = fold_start(s, x, iv, u, &ki, &ku, &t);
		if (rc)
			return rc;
		for (int64_t p = 0; p < pb_imp_numel(&iv->sh); p++) {
			int64_t rem = p, c[PB_MAX_RANK], off = 0;
			for (int i = r - 1; i >= 0; i--) {
				c[i] = rem % iv->sh.d[i];
				rem /= iv->sh.d[i];
			}
			if (known_index(s, ki, p, x->sh.d[axis], &c[axis])) {
				pb_tensor_clear(t);
				free(t);
				return PB_ERR;
			}
			for (int i = 0; i < r; i++)
				off = off * x->sh.d[i] + c[i];
			combine_known(t, off, ku, p, red);
		}
		pb_imp_def_known(s, 0, t);
		return PB_OK;
	}
	if (2 * r > PB_MAX_RANK)
		return pb_imp_node_error(s, "rank %d: at most %d is supported",
					 r, PB_MAX_RANK / 2);
	const char *data = pb_imp_use_dt(s, x);
	const char *ind = data ? pb_imp_use_dt(s, iv) : NULL;
	const char *upd = ind ? pb_imp_use_dt(s, u) : NULL;
	if (!upd)
		return PB_ERR;
	int pm[PB_MAX_RANK], om[PB_MAX_RANK];
	for (int i = 0; i < r; i++) {
		pm[i] = r + i;
		om[i] = i;
	}
	struct text maps[2] = {pb_imp_map(2 * r, r, pm),
			       pb_imp_map(2 * r, r, pm)};
	struct text omap = pb_imp_map(2 * r, r, om);
	const char *ins[2] = {ind, upd};
	struct shape sh[2] = {iv->sh, u->sh};
	enum pb_dtype dts[2] = {iv->dtype, u->dtype};
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', r);
	memset(iters + r, 'r', r);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, 2 * r, iters, 2, ins, sh, dts, maps, data,
			    &x->sh, x->dtype, &omap);
	struct name match = {{0}};
	for (int i = 0; i < r; i++) {
		struct name o = pb_imp_loop_index(s, i), e;
		if (i == axis) {
			struct name c = pb_imp_index_of(s, g.arg[0].s,
							iv->dtype,
							x->sh.d[axis]);
			e = eq_index(s, c.s, o.s);
		} else {
			struct name p = pb_imp_loop_index(s, r + i);
			e = eq_index(s, p.s, o.s);
		}
		match = and_i1(s, &match, &e);
	}
	struct name v = combine(s, g.arg[2].s, g.arg[1].s, x->dtype, red);
	struct name y = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.select %s, %s, %s : %s", y.s, match.s, v.s,
		    g.arg[2].s, pb_imp_elt(x->dtype));
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, y.s), x->dtype, &x->sh);
}

const struct pb_imp_op pb_imp_ops_scatter[] = {
	{"GatherND", op_gather_nd, "batch_dims", 11, 0, 0},
	{"ScatterND", op_scatter_nd, "reduction", 11, 0, 0},
	{"ScatterElements", op_scatter_elements, "axis,reduction", 11, 0, 0},
	{"Scatter", op_scatter_elements, "axis", 9, 10, 0},
	{NULL, NULL, NULL, 0, 0, 0},
};
