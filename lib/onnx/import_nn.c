/* Op lowerings for neural-network layers: Conv, MaxPool, AveragePool,
 * the global pools and BatchNormalization (inference). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/import.h"

/* The window of a convolution or pooling node over "sr" spatial dims. */
struct window {
	int sr;
	int64_t k[3], stride[3], dil[3], lo[3], hi[3], hi0[3];
	int64_t in[3], out[3];
};

/* Read a list attribute "name" of "sr" values into "v" (default "dflt"). */
static int spatial_attr(struct imp *s, const char *name, int sr, int64_t *v,
			int64_t dflt)
{
	int64_t tmp[6];
	int n = pb_imp_attr_ints(s, name, tmp, 6);
	if (n == -2)
		return PB_ERR;
	if (n >= 0 && n != sr)
		return pb_imp_node_error(s, "attribute '%s' has %d values, "
					 "expected %d", name, n, sr);
	for (int i = 0; i < sr; i++)
		v[i] = n < 0 ? dflt : tmp[i];
	return PB_OK;
}

/* Fill "w" from the strides, dilations, pads, auto_pad and ("pool")
 * ceil_mode attributes, the kernel "k" and the spatial input dims of
 * "x", and compute the output dims. */
static int window_setup(struct imp *s, struct window *w, const struct shape *x,
			const int64_t *k, int pool)
{
	int sr = w->sr;
	int64_t pads[6];
	int np = pb_imp_attr_ints(s, "pads", pads, 6);
	if (np == -2 || spatial_attr(s, "strides", sr, w->stride, 1) ||
	    spatial_attr(s, "dilations", sr, w->dil, 1))
		return PB_ERR;
	if (np >= 0 && np != 2 * sr)
		return pb_imp_node_error(s, "attribute 'pads' has %d values, "
					 "expected %d", np, 2 * sr);
	const char *ap = pb_imp_attr_str(s, "auto_pad", "NOTSET");
	int ceil_mode = pool && pb_imp_attr_int(s, "ceil_mode", 0);
	for (int i = 0; i < sr; i++) {
		int64_t in = x->d[2 + i], ek = (k[i] - 1) * w->dil[i] + 1;
		int64_t st = w->stride[i];
		w->k[i] = k[i];
		w->in[i] = in;
		if (st < 1 || w->dil[i] < 1 || k[i] < 1)
			return pb_imp_node_error(s, "strides, dilations and kernel "
						 "must be positive");
		if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
			int64_t out = (in + st - 1) / st;
			int64_t tot = (out - 1) * st + ek - in;
			tot = tot < 0 ? 0 : tot;
			int upper = !strcmp(ap, "SAME_UPPER");
			w->lo[i] = upper ? tot / 2 : tot - tot / 2;
			w->hi[i] = tot - w->lo[i];
		} else if (!strcmp(ap, "VALID") || np < 0) {
			w->lo[i] = w->hi[i] = 0;
		} else if (!strcmp(ap, "NOTSET")) {
			w->lo[i] = pads[i];
			w->hi[i] = pads[sr + i];
			if (pool && (pads[i] < 0 || pads[sr + i] < 0 ||
				     pads[i] >= ek || pads[sr + i] >= ek))
				return pb_imp_node_error(s, "pads must be "
							 "smaller than the "
							 "kernel");
		} else {
			return pb_imp_node_error(s, "auto_pad '%s' is not "
						 "supported", ap);
		}
		int64_t span = in + w->lo[i] + w->hi[i] - ek;
		if (span < 0)
			return pb_imp_node_error(s, "the window is larger than the "
						 "padded input");
		int64_t out = ceil_mode ? (span + st - 1) / st + 1 : span / st + 1;
		if (ceil_mode && (out - 1) * st >= in + w->lo[i])
			out--;
		w->out[i] = out;
		w->hi0[i] = w->hi[i];
		/* ceil_mode: pad the end so that the last window fits */
		int64_t need = (out - 1) * st + ek - (in + w->lo[i] + w->hi[i]);
		if (need > 0)
			w->hi[i] += need;
	}
	return PB_OK;
}

/* Emit tensor.pad of "x" (shape "sh", element type "dt", N and C
 * unpadded) by the window's lo/hi with value "v"; updates "sh". Returns
 * "x" when nothing pads. */
static struct name pad(struct imp *s, const char *x, struct shape *sh,
		       enum pb_dtype dt, const struct window *w, double v)
{
	int64_t lo[PB_MAX_RANK] = {0}, hi[PB_MAX_RANK] = {0};
	for (int i = 0; i < w->sr; i++) {
		lo[2 + i] = w->lo[i];
		hi[2 + i] = w->hi[i];
	}
	return pb_imp_pad_dt(s, x, sh, dt, lo, hi, v);
}

/* The "{dilations = .., strides = ..}" attributes of window "w". */
static struct text window_attrs(const struct window *w)
{
	struct text t, d = pb_imp_ints(w->sr, w->dil),
		       st = pb_imp_ints(w->sr, w->stride);
	d.s[200] = st.s[200] = 0; /* at most 3 numbers each */
	snprintf(t.s, sizeof(t.s),
		 "{dilations = dense<%.200s> : tensor<%dxi64>, strides = "
		 "dense<%.200s> : tensor<%dxi64>}", d.s, w->sr, st.s, w->sr);
	return t;
}

/* The init of a convolution's result "out": the bias "b" broadcast along
 * dim 1, or zeros. */
static struct name conv_init(struct imp *s, struct val *b,
			     const struct shape *out)
{
	if (!b)
		return pb_imp_fill(s, out, 0);
	const char *bn = pb_imp_use(s, b);
	struct name r = {""};
	if (!bn)
		return r;
	int all[PB_MAX_RANK], one = 1;
	for (int i = 0; i < out->rank; i++)
		all[i] = i;
	struct text bm = pb_imp_map(out->rank, 1, &one),
		    om = pb_imp_map(out->rank, out->rank, all);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', out->rank);
	struct name e = pb_imp_empty(s, out);
	struct gen g;
	pb_imp_gen_begin(s, &g, out->rank, iters, 1, &bn, &b->sh, &bm, e.s,
			 out, &om);
	return pb_imp_gen_end(s, &g, g.arg[0].s);
}

/* Check the input "xv" and weights "wv" (and bias "bv", may be NULL) of
 * the current convolution node, set up its window "w" and output shape
 * "out" and its group count "*G". */
static int conv_setup(struct imp *s, struct val *xv, struct val *wv,
		      struct val *bv, struct window *w, struct shape *out,
		      int64_t *G)
{
	if (!xv || !wv)
		return pb_imp_node_error(s, "expected X and W");
	int sr = xv->sh.rank - 2;
	if (sr < 1 || sr > 3 || wv->sh.rank != xv->sh.rank)
		return pb_imp_node_error(s, "only 1-d, 2-d and 3-d convolutions "
					 "are supported");
	*G = pb_imp_attr_int(s, "group", 1);
	int64_t N = xv->sh.d[0], C = xv->sh.d[1], F = wv->sh.d[0];
	if (*G < 1 || C % *G || F % *G || wv->sh.d[1] != C / *G)
		return pb_imp_node_error(s, "W of shape %s does not match %lld "
					 "input channels in %lld groups",
					 pb_imp_ty(&wv->sh).s, (long long)C,
					 (long long)*G);
	if (bv && (bv->sh.rank != 1 || bv->sh.d[0] != F))
		return pb_imp_node_error(s, "B must have shape [%lld]",
					 (long long)F);
	int64_t ks[3];
	if (spatial_attr(s, "kernel_shape", sr, ks, 0))
		return PB_ERR;
	for (int i = 0; i < sr; i++)
		if (ks[i] && ks[i] != wv->sh.d[2 + i])
			return pb_imp_node_error(s, "kernel_shape does not match "
						 "W");
	*w = (struct window){.sr = sr};
	if (window_setup(s, w, &xv->sh, wv->sh.d + 2, 0))
		return PB_ERR;
	*out = (struct shape){xv->sh.rank, {N, F}};
	for (int i = 0; i < sr; i++)
		out->d[2 + i] = w->out[i];
	return PB_OK;
}

/* Emit the convolution of the padded input "xp" (shape "xsh", type
 * "xdt") by weights "wt" ("wsh", "wdt") in "G" groups over window "w"
 * into "init" of shape "out" and type "odt": linalg.conv_* (for G > 1
 * in 2-d the depthwise and grouped forms, in 1-d and 3-d one convolution
 * per group on slices). */
static struct name conv_emit(struct imp *s, const char *xp,
			     const struct shape *xsh, enum pb_dtype xdt,
			     const char *wt, const struct shape *wsh,
			     enum pb_dtype wdt, const char *init,
			     const struct shape *out, enum pb_dtype odt,
			     const struct window *w, int64_t G)
{
	static const char *named[] = {"", "conv_1d_ncw_fcw", "conv_2d_nchw_fchw",
				      "conv_3d_ncdhw_fcdhw"};
	int64_t N = xsh->d[0], C = xsh->d[1], F = wsh->d[0];
	int depthwise = G > 1 && G == C && F == C && w->sr == 2;
	struct text attrs = window_attrs(w);
	struct text oty = pb_imp_ty_dt(out, odt);
	struct name r = pb_imp_fresh(s);
	if (G == 1) {
		pb_imp_emit(s, "%s = linalg.%s %s ins(%s, %s : %s, %s) outs(%s : "
			    "%s) -> %s", r.s, named[w->sr], attrs.s, xp, wt,
			    pb_imp_ty_dt(xsh, xdt).s, pb_imp_ty_dt(wsh, wdt).s,
			    init, oty.s, oty.s);
	} else if (w->sr != 2) {
		/* 1-d and 3-d groups: one convolution per group on slices of
		 * x, w and the init, inserted into the result */
		struct shape xg = *xsh, wg = *wsh, og = *out;
		xg.d[1] = C / G, wg.d[0] = F / G, og.d[0] = N, og.d[1] = F / G;
		int rank = xsh->rank;
		char zeros[64] = "", ones[64] = "";
		for (int i = 2; i < rank; i++) {
			strcat(zeros, ", 0");
			strcat(ones, ", 1");
		}
		snprintf(r.s, sizeof(r.s), "%s", init);
		for (int64_t g = 0; g < G; g++) {
			struct name xs = pb_imp_fresh(s), ws = pb_imp_fresh(s),
				    is = pb_imp_fresh(s), c = pb_imp_fresh(s),
				    t = pb_imp_fresh(s);
			pb_imp_emit(s, "%s = tensor.extract_slice %s[0, %lld%s] "
				    "%s [1, 1%s] : %s to %s", xs.s, xp,
				    (long long)(g * (C / G)), zeros,
				    pb_imp_ints(rank, xg.d).s, ones,
				    pb_imp_ty_dt(xsh, xdt).s,
				    pb_imp_ty_dt(&xg, xdt).s);
			pb_imp_emit(s, "%s = tensor.extract_slice %s[%lld, 0%s] "
				    "%s [1, 1%s] : %s to %s", ws.s, wt,
				    (long long)(g * (F / G)), zeros,
				    pb_imp_ints(rank, wg.d).s, ones,
				    pb_imp_ty_dt(wsh, wdt).s,
				    pb_imp_ty_dt(&wg, wdt).s);
			pb_imp_emit(s, "%s = tensor.extract_slice %s[0, %lld%s] "
				    "%s [1, 1%s] : %s to %s", is.s, init,
				    (long long)(g * (F / G)), zeros,
				    pb_imp_ints(rank, og.d).s, ones, oty.s,
				    pb_imp_ty_dt(&og, odt).s);
			struct text gty = pb_imp_ty_dt(&og, odt);
			pb_imp_emit(s, "%s = linalg.%s %s ins(%s, %s : %s, %s) "
				    "outs(%s : %s) -> %s", c.s, named[w->sr],
				    attrs.s, xs.s, ws.s,
				    pb_imp_ty_dt(&xg, xdt).s,
				    pb_imp_ty_dt(&wg, wdt).s, is.s, gty.s,
				    gty.s);
			pb_imp_emit(s, "%s = tensor.insert_slice %s into %s[0, "
				    "%lld%s] %s [1, 1%s] : %s into %s", t.s,
				    c.s, r.s, (long long)(g * (F / G)), zeros,
				    pb_imp_ints(rank, og.d).s, ones, gty.s,
				    oty.s);
			r = t;
		}
	} else if (depthwise) {
		struct shape w3 = {3, {C, wsh->d[2], wsh->d[3]}};
		struct name wc = pb_imp_reshape_dt(s, wt, wsh, &w3, wdt);
		pb_imp_emit(s, "%s = linalg.depthwise_conv_2d_nchw_chw %s ins(%s, "
			    "%s : %s, %s) outs(%s : %s) -> %s", r.s, attrs.s,
			    xp, wc.s, pb_imp_ty_dt(xsh, xdt).s,
			    pb_imp_ty_dt(&w3, wdt).s, init, oty.s, oty.s);
	} else {
		struct shape x5 = {5, {N, G, C / G, xsh->d[2], xsh->d[3]}};
		struct shape w5 = {5, {G, F / G, C / G, wsh->d[2], wsh->d[3]}};
		struct shape o5 = {5, {N, G, F / G, out->d[2], out->d[3]}};
		struct name xe = pb_imp_reshape_dt(s, xp, xsh, &x5, xdt);
		struct name we = pb_imp_reshape_dt(s, wt, wsh, &w5, wdt);
		struct name ie = pb_imp_reshape_dt(s, init, out, &o5, odt);
		struct text o5ty = pb_imp_ty_dt(&o5, odt);
		pb_imp_emit(s, "%s = linalg.conv_2d_ngchw_gfchw %s ins(%s, %s : "
			    "%s, %s) outs(%s : %s) -> %s", r.s, attrs.s, xe.s,
			    we.s, pb_imp_ty_dt(&x5, xdt).s,
			    pb_imp_ty_dt(&w5, wdt).s, ie.s, o5ty.s, o5ty.s);
		r = pb_imp_reshape_dt(s, r.s, &o5, out, odt);
	}
	return r;
}

/* Conv (1-d, 2-d, 3-d; any number of groups): padding
 * by tensor.pad, the bias as the init, then linalg.conv_*. */
static int op_conv(struct imp *s)
{
	struct val *xv = pb_imp_in(s, 0), *wv = pb_imp_in(s, 1),
		   *bv = pb_imp_in(s, 2);
	struct window w;
	struct shape out;
	int64_t G;
	if (conv_setup(s, xv, wv, bv, &w, &out, &G))
		return PB_ERR;
	/* float16/bfloat16 operands accumulate in the f32 init */
	enum pb_dtype xdt, wdt;
	const char *x = pb_imp_use_operand(s, xv, &xdt);
	const char *wt = x ? pb_imp_use_operand(s, wv, &wdt) : NULL;
	if (!wt)
		return PB_ERR;
	struct shape xsh = xv->sh;
	struct name xp = pad(s, x, &xsh, xdt, &w, 0);
	struct name init = conv_init(s, bv, &out);
	if (!init.s[0])
		return PB_ERR;
	struct name r = conv_emit(s, xp.s, &xsh, xdt, wt, &wv->sh, wdt, init.s,
				  &out, PB_DT_F32, &w, G);
	return pb_imp_def_ssa(s, r, PB_DT_F32, &out);
}

/* The i32 convolution of the current node's 8-bit x and w shifted by
 * their zero points (inputs "ix", "ixz", "iw", "iwz"; x's per tensor,
 * w's per tensor or per output channel), padded with x's zero point
 * (0 after the shift), into "r" of shape "out". */
static int conv_integer(struct imp *s, int ix, int ixz, int iw, int iwz,
			struct name *r, struct shape *out)
{
	struct val *xv = pb_imp_in(s, ix), *wv = pb_imp_in(s, iw);
	struct window w;
	int64_t G;
	if (conv_setup(s, xv, wv, NULL, &w, out, &G))
		return PB_ERR;
	struct val *xz = pb_imp_in(s, ixz);
	if (xz && pb_imp_numel(&xz->sh) != 1)
		return pb_imp_node_error(s, "x_zero_point must have one "
					 "element");
	struct name x = pb_imp_qshift(s, xv, xz, 0);
	if (!x.s[0])
		return PB_ERR;
	struct name wt = pb_imp_qshift(s, wv, pb_imp_in(s, iwz), 0);
	if (!wt.s[0])
		return PB_ERR;
	struct shape xsh = xv->sh;
	struct name xp = pad(s, x.s, &xsh, PB_DT_I32, &w, 0);
	struct name init = pb_imp_fill_dt(s, out, PB_DT_I32, 0);
	*r = conv_emit(s, xp.s, &xsh, PB_DT_I32, wt.s, &wv->sh, PB_DT_I32,
		       init.s, out, PB_DT_I32, &w, G);
	return PB_OK;
}

/* ConvInteger: x, w, x_zero_point, w_zero_point: the i32 convolution of
 * the shifted operands (conv_integer). */
static int op_conv_integer(struct imp *s)
{
	struct name r;
	struct shape out;
	if (conv_integer(s, 0, 2, 1, 3, &r, &out))
		return PB_ERR;
	return pb_imp_def_ssa(s, r, PB_DT_I32, &out);
}

/* QLinearConv: x, x_scale, x_zero_point, w, w_scale, w_zero_point,
 * y_scale, y_zero_point, B: the i32 convolution of the shifted operands
 * plus B, requantized (w_scale per tensor or per output channel). */
static int op_qlinear_conv(struct imp *s)
{
	if (pb_imp_nin(s) < 8)
		return pb_imp_node_error(s, "expected 8 or 9 inputs, got %d",
					 pb_imp_nin(s));
	struct name r;
	struct shape out;
	if (conv_integer(s, 0, 2, 3, 5, &r, &out))
		return PB_ERR;
	return pb_imp_requant_out(s, r.s, &out, pb_imp_in(s, 1),
				  pb_imp_in(s, 4), 1, pb_imp_in(s, 6),
				  pb_imp_in(s, 7), pb_imp_in(s, 8));
}

/* The number of input (or, with "incl", padded-input) elements under
 * each output position of window "w", as a known [out..] tensor. */
static struct pb_tensor *pool_counts(const struct window *w, int incl)
{
	struct shape sh = {w->sr, {0}};
	for (int i = 0; i < w->sr; i++)
		sh.d[i] = w->out[i];
	struct pb_tensor *t = pb_imp_new_known(PB_DT_F32, &sh);
	if (!t)
		return NULL;
	int64_t n = pb_imp_numel(&sh);
	for (int64_t o = 0; o < n; o++) {
		int64_t rem = o, cnt = 1;
		for (int i = w->sr - 1; i >= 0; i--) {
			int64_t p = rem % w->out[i], c = 0;
			rem /= w->out[i];
			/* the explicit pads count with count_include_pad, the
			 * ceil_mode extension never does */
			int64_t lo = incl ? -w->lo[i] : 0;
			int64_t hi = w->in[i] + (incl ? w->hi0[i] : 0);
			for (int64_t j = 0; j < w->k[i]; j++) {
				int64_t at = p * w->stride[i] - w->lo[i] +
					     j * w->dil[i];
				c += at >= lo && at < hi;
			}
			cnt *= c;
		}
		((float *)t->data)[o] = (float)cnt;
	}
	return t;
}

/* Divide the pooled sums "sum" (shape "out") by the element counts of
 * window "w"; a scalar when all counts agree. */
static struct name pool_divide(struct imp *s, const char *sum,
			       const struct shape *out, const struct window *w,
			       int incl)
{
	struct name r = {""};
	struct pb_tensor *cnt = pool_counts(w, incl);
	if (!cnt)
		return r;
	int64_t n = pb_tensor_numel(cnt);
	float *c = cnt->data;
	int uniform = 1;
	for (int64_t i = 1; i < n; i++)
		uniform &= c[i] == c[0];
	int all[PB_MAX_RANK], sp[3];
	for (int i = 0; i < out->rank; i++)
		all[i] = i;
	for (int i = 0; i < w->sr; i++)
		sp[i] = 2 + i;
	struct text id = pb_imp_map(out->rank, out->rank, all);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', out->rank);
	const char *ins[2] = {sum, NULL};
	struct shape shs[2] = {*out, {w->sr, {0}}};
	struct text maps[2] = {id, pb_imp_map(out->rank, w->sr, sp)};
	int nin = 1;
	if (!uniform) {
		struct shape csh = {w->sr, {0}};
		for (int i = 0; i < w->sr; i++)
			csh.d[i] = w->out[i];
		struct val tmp = {.name = "counts", .dtype = PB_DT_F32,
				  .sh = csh, .k = cnt};
		const char *cn = pb_imp_use(s, &tmp);
		snprintf(r.s, sizeof(r.s), "%s", cn ? cn : "");
		if (!cn) {
			pb_tensor_clear(cnt);
			free(cnt);
			return r;
		}
		shs[1] = csh;
		ins[1] = r.s;
		nin = 2;
	}
	struct name e = pb_imp_empty(s, out);
	struct gen g;
	pb_imp_gen_begin(s, &g, out->rank, iters, nin, ins, shs, maps, e.s, out,
			 &id);
	struct name d = uniform ? pb_imp_scalar(s, c[0]) : g.arg[1];
	struct name q = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.divf %s, %s : f32", q.s, g.arg[0].s, d.s);
	r = pb_imp_gen_end(s, &g, q.s);
	pb_tensor_clear(cnt);
	free(cnt);
	return r;
}

/* MaxPool's Indices output: for each output element, the flattened index
 * into x (row-major, or with "col" the spatial dims column-major) of the
 * first element of its window equal to the max "mx": one generic over the
 * output and the window (reduction), reading x with tensor.extract. */
static struct name pool_indices(struct imp *s, const char *x,
				const struct shape *xs, const char *mx,
				const struct shape *out, const struct window *w,
				const int64_t *k, int col)
{
	int r = out->rank, sr = w->sr, all[PB_MAX_RANK];
	for (int i = 0; i < r; i++)
		all[i] = i;
	struct text im = pb_imp_map(r + sr, r, all);
	char iters[PB_MAX_RANK + 4];
	for (int i = 0; i < r + sr; i++)
		iters[i] = i < r ? 'p' : 'r';
	struct name init = pb_imp_fill_dt(s, out, PB_DT_I64, -1);
	/* the window loops' extent comes from an unread [k..] operand, as
	 * in linalg's pooling ops */
	struct shape ksh = {sr, {0}};
	int km[3];
	for (int i = 0; i < sr; i++) {
		ksh.d[i] = k[i];
		km[i] = r + i;
	}
	struct name win = pb_imp_empty(s, &ksh);
	const char *ins[2] = {mx, win.s};
	struct shape shs[2] = {*out, ksh};
	enum pb_dtype dts[2] = {PB_DT_F32, PB_DT_F32};
	struct text maps[2] = {im, pb_imp_map(r + sr, sr, km)};
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, r + sr, iters, 2, ins, shs, dts, maps,
			    init.s, out, PB_DT_I64, &im);
	struct name idx[PB_MAX_RANK], ok = {{0}};
	idx[0] = pb_imp_loop_index(s, 0);
	idx[1] = pb_imp_loop_index(s, 1);
	struct name h[3];
	for (int i = 0; i < sr; i++) {
		struct name o = pb_imp_loop_index(s, 2 + i);
		struct name kk = pb_imp_loop_index(s, r + i);
		struct name a = pb_imp_fresh(s), b = pb_imp_fresh(s),
			    c = pb_imp_fresh(s), ge = pb_imp_fresh(s),
			    lt = pb_imp_fresh(s), in = pb_imp_fresh(s);
		/* h = o * stride - lo + k * dil, as i64 */
		pb_imp_emit(s, "%s = arith.index_cast %s : index to i64", a.s,
			    o.s);
		pb_imp_emit(s, "%s = arith.index_cast %s : index to i64", b.s,
			    kk.s);
		struct name st = pb_imp_scalar_dt(s, PB_DT_I64,
						  (double)w->stride[i]);
		struct name dl = pb_imp_scalar_dt(s, PB_DT_I64,
						  (double)w->dil[i]);
		struct name lo = pb_imp_scalar_dt(s, PB_DT_I64,
						  (double)w->lo[i]);
		struct name zero = pb_imp_scalar_dt(s, PB_DT_I64, 0);
		struct name n = pb_imp_scalar_dt(s, PB_DT_I64,
						 (double)w->in[i]);
		struct name t1 = pb_imp_fresh(s), t2 = pb_imp_fresh(s),
			    t3 = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.muli %s, %s : i64", t1.s, a.s, st.s);
		pb_imp_emit(s, "%s = arith.muli %s, %s : i64", t2.s, b.s, dl.s);
		pb_imp_emit(s, "%s = arith.subi %s, %s : i64", t3.s, t1.s, lo.s);
		pb_imp_emit(s, "%s = arith.addi %s, %s : i64", c.s, t3.s, t2.s);
		pb_imp_emit(s, "%s = arith.cmpi sge, %s, %s : i64", ge.s, c.s,
			    zero.s);
		pb_imp_emit(s, "%s = arith.cmpi slt, %s, %s : i64", lt.s, c.s,
			    n.s);
		pb_imp_emit(s, "%s = arith.andi %s, %s : i1", in.s, ge.s, lt.s);
		if (ok.s[0]) {
			struct name both = pb_imp_fresh(s);
			pb_imp_emit(s, "%s = arith.andi %s, %s : i1", both.s,
				    ok.s, in.s);
			ok = both;
		} else {
			ok = in;
		}
		h[i] = c;
		idx[2 + i] = pb_imp_index_of(s, c.s, PB_DT_I64, w->in[i]);
	}
	struct name v = pb_imp_extract(s, x, xs, PB_DT_F32, idx);
	struct name eq = pb_imp_fresh(s), un = pb_imp_fresh(s),
		    m1 = pb_imp_scalar_dt(s, PB_DT_I64, -1), a1 = pb_imp_fresh(s),
		    a2 = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.cmpf oeq, %s, %s : f32", eq.s, v.s,
		    g.arg[0].s);
	pb_imp_emit(s, "%s = arith.cmpi eq, %s, %s : i64", un.s, g.arg[2].s,
		    m1.s);
	pb_imp_emit(s, "%s = arith.andi %s, %s : i1", a1.s, ok.s, eq.s);
	pb_imp_emit(s, "%s = arith.andi %s, %s : i1", a2.s, a1.s, un.s);
	/* (n * C + c) * prod(spatial) + the spatial offset */
	struct name nn = pb_imp_fresh(s), cc = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.index_cast %s : index to i64", nn.s,
		    idx[0].s);
	pb_imp_emit(s, "%s = arith.index_cast %s : index to i64", cc.s,
		    idx[1].s);
	struct name lin = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.muli %s, %s : i64", lin.s, nn.s,
		    pb_imp_scalar_dt(s, PB_DT_I64, (double)xs->d[1]).s);
	struct name l2 = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.addi %s, %s : i64", l2.s, lin.s, cc.s);
	lin = l2;
	for (int j = 0; j < sr; j++) {
		int i = col ? sr - 1 - j : j;
		struct name m = pb_imp_fresh(s), a = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.muli %s, %s : i64", m.s, lin.s,
			    pb_imp_scalar_dt(s, PB_DT_I64,
					     (double)w->in[i]).s);
		pb_imp_emit(s, "%s = arith.addi %s, %s : i64", a.s, m.s,
			    h[i].s);
		lin = a;
	}
	struct name y = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.select %s, %s, %s : i64", y.s, a2.s, lin.s,
		    g.arg[2].s);
	return pb_imp_gen_end(s, &g, y.s);
}

/* MaxPool and AveragePool in 1-d, 2-d and 3-d: tensor.pad (-inf or 0),
 * then linalg.pooling_{nchw,ncw}_{max,sum} (3-d: the same window loops
 * as a linalg.generic); an average divides by the counts
 * of window elements (count_include_pad decides whether pads count);
 * MaxPool's Indices output: pool_indices. */
static int op_pool(struct imp *s)
{
	int is_max = !strcmp(s->node->op_type, "MaxPool");
	struct val *xv = pb_imp_in(s, 0);
	int sr = xv->sh.rank - 2;
	if (sr < 1 || sr > 3)
		return pb_imp_node_error(s, "only 1-d, 2-d and 3-d pooling is "
					 "supported");
	int64_t k[3];
	int nk = pb_imp_attr_ints(s, "kernel_shape", k, 3);
	if (nk == -2)
		return PB_ERR;
	if (nk != sr)
		return pb_imp_node_error(s, "kernel_shape must have %d values",
					 sr);
	struct window w = {.sr = sr};
	if (window_setup(s, &w, &xv->sh, k, 1))
		return PB_ERR;
	struct shape out = xv->sh;
	for (int i = 0; i < sr; i++)
		out.d[2 + i] = w.out[i];
	const char *x = pb_imp_use(s, xv);
	if (!x)
		return PB_ERR;
	double fill = is_max ? -INFINITY : 0;
	struct shape xsh = xv->sh;
	struct name xp = pad(s, x, &xsh, PB_DT_F32, &w, fill);
	struct shape ksh = {sr, {k[0], k[1], k[2]}};
	struct name win = pb_imp_empty(s, &ksh);
	struct name init = pb_imp_fill(s, &out, fill);
	struct name r = pb_imp_fresh(s);
	if (sr == 3) {
		/* no NCDHW pooling op in linalg: the same window loops as a
		 * generic, x read at o * stride + k * dil */
		char iters[9] = "ppppprrr", xm[200], km[80], om[80];
		snprintf(xm, sizeof(xm), "affine_map<(d0, d1, d2, d3, d4, d5, "
			 "d6, d7) -> (d0, d1, d2 * %lld + d5 * %lld, d3 * %lld "
			 "+ d6 * %lld, d4 * %lld + d7 * %lld)>",
			 (long long)w.stride[0], (long long)w.dil[0],
			 (long long)w.stride[1], (long long)w.dil[1],
			 (long long)w.stride[2], (long long)w.dil[2]);
		snprintf(km, sizeof(km), "affine_map<(d0, d1, d2, d3, d4, d5, "
			 "d6, d7) -> (d5, d6, d7)>");
		snprintf(om, sizeof(om), "affine_map<(d0, d1, d2, d3, d4, d5, "
			 "d6, d7) -> (d0, d1, d2, d3, d4)>");
		struct text maps[2], omap;
		snprintf(maps[0].s, sizeof(maps[0].s), "%s", xm);
		snprintf(maps[1].s, sizeof(maps[1].s), "%s", km);
		snprintf(omap.s, sizeof(omap.s), "%s", om);
		const char *ins[2] = {xp.s, win.s};
		struct shape shs[2] = {xsh, ksh};
		struct gen g;
		pb_imp_gen_begin(s, &g, 8, iters, 2, ins, shs, maps, init.s,
				 &out, &omap);
		struct name y = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.%s %s, %s : f32", y.s,
			    is_max ? "maximumf" : "addf", g.arg[0].s,
			    g.arg[2].s);
		r = pb_imp_gen_end(s, &g, y.s);
	} else {
		pb_imp_emit(s, "%s = linalg.pooling_%s_%s %s ins(%s, %s : %s, "
			    "%s) outs(%s : %s) -> %s", r.s,
			    sr == 2 ? "nchw" : "ncw", is_max ? "max" : "sum",
			    window_attrs(&w).s, xp.s, win.s, pb_imp_ty(&xsh).s,
			    pb_imp_ty(&ksh).s, init.s, pb_imp_ty(&out).s,
			    pb_imp_ty(&out).s);
	}
	if (!is_max) {
		int incl = pb_imp_attr_int(s, "count_include_pad", 0) != 0;
		r = pool_divide(s, r.s, &out, &w, incl);
		if (!r.s[0])
			return PB_ERR;
	}
	if (pb_imp_def_ssa(s, r, PB_DT_F32, &out))
		return PB_ERR;
	if (is_max && s->node->n_output > 1 && s->node->output[1][0]) {
		int col = pb_imp_attr_int(s, "storage_order", 0) != 0;
		struct name ix = pool_indices(s, x, &xv->sh, r.s, &out, &w, k,
					      col);
		struct val *v = pb_imp_def(s, 1, PB_DT_I64, &out);
		if (v)
			v->ssa = ix;
	}
	return PB_OK;
}

/* GlobalAveragePool and GlobalMaxPool: a reduction over the spatial dims
 * that keeps them as 1. */
static int op_global_pool(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0);
	if (x->sh.rank < 3)
		return pb_imp_node_error(s, "input must have rank >= 3");
	unsigned red = ((1u << x->sh.rank) - 1) & ~3u;
	int is_max = !strcmp(s->node->op_type, "GlobalMaxPool");
	struct name r;
	struct shape sh;
	if (pb_imp_reduce(s, x, red, is_max ? "max" : "mean", 1, &r, &sh))
		return PB_ERR;
	return pb_imp_def_ssa(s, r, PB_DT_F32, &sh);
}

/* Emit "%r = arith.<op> a, b : f32". */
static struct name bn_op(struct imp *s, const char *op, const char *a,
			 const char *b)
{
	struct name r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.%s %s, %s : f32", r.s, op, a, b);
	return r;
}

/* BatchNormalization in training mode (opset 14 on): the batch statistics
 * per channel (the mean, then the biased variance, each a reduction
 * generic over every dim but 1) normalize x; the running mean and
 * variance outputs are input * momentum + batch * (1 - momentum). "ins"
 * are x, scale, B, input_mean, input_var. */
static int batchnorm_train(struct imp *s, const char *const *ins,
			   const struct shape *xs)
{
	int r = xs->rank, one = 1, all[PB_MAX_RANK];
	struct shape cs = {1, {xs->d[1]}};
	int64_t count = pb_imp_numel(xs) / (xs->d[1] ? xs->d[1] : 1);
	double eps = pb_imp_attr_float(s, "epsilon", 1e-5f);
	double mom = pb_imp_attr_float(s, "momentum", 0.9f);
	for (int i = 0; i < r; i++)
		all[i] = i;
	struct text xm = pb_imp_map(r, r, all), cm = pb_imp_map(r, 1, &one);
	struct text c1 = pb_imp_map(1, 1, all);
	char iters[PB_MAX_RANK + 1], piters[PB_MAX_RANK + 1];
	for (int i = 0; i < r; i++) {
		iters[i] = i == 1 ? 'p' : 'r';
		piters[i] = 'p';
	}
	struct gen g;
	/* mean */
	struct name z = pb_imp_fill(s, &cs, 0);
	pb_imp_gen_begin(s, &g, r, iters, 1, &ins[0], xs, &xm, z.s, &cs, &cm);
	struct name sum = pb_imp_gen_end(s, &g,
		bn_op(s, "addf", g.arg[0].s, g.arg[1].s).s);
	struct name e = pb_imp_empty(s, &cs);
	pb_imp_gen_begin(s, &g, 1, "p", 1, (const char *[]){sum.s}, &cs, &c1,
			 e.s, &cs, &c1);
	struct name mean = pb_imp_gen_end(s, &g, bn_op(s, "divf", g.arg[0].s,
		pb_imp_scalar(s, (double)count).s).s);
	/* biased variance */
	const char *vin[2] = {ins[0], mean.s};
	struct shape vsh[2] = {*xs, cs};
	struct text vm[2] = {xm, cm};
	z = pb_imp_fill(s, &cs, 0);
	pb_imp_gen_begin(s, &g, r, iters, 2, vin, vsh, vm, z.s, &cs, &cm);
	struct name d = bn_op(s, "subf", g.arg[0].s, g.arg[1].s);
	d = bn_op(s, "mulf", d.s, d.s);
	struct name sq = pb_imp_gen_end(s, &g,
		bn_op(s, "addf", d.s, g.arg[2].s).s);
	e = pb_imp_empty(s, &cs);
	pb_imp_gen_begin(s, &g, 1, "p", 1, (const char *[]){sq.s}, &cs, &c1,
			 e.s, &cs, &c1);
	struct name var = pb_imp_gen_end(s, &g, bn_op(s, "divf", g.arg[0].s,
		pb_imp_scalar(s, (double)count).s).s);
	/* y */
	const char *yin[5] = {ins[0], ins[1], ins[2], mean.s, var.s};
	struct shape ysh[5] = {*xs, cs, cs, cs, cs};
	struct text ym[5] = {xm, cm, cm, cm, cm};
	e = pb_imp_empty(s, xs);
	pb_imp_gen_begin(s, &g, r, piters, 5, yin, ysh, ym, e.s, xs, &xm);
	struct name t = bn_op(s, "subf", g.arg[0].s, g.arg[3].s);
	struct name v = bn_op(s, "addf", g.arg[4].s,
			      pb_imp_scalar(s, eps).s);
	struct name sd = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = math.sqrt %s : f32", sd.s, v.s);
	t = bn_op(s, "divf", t.s, sd.s);
	t = bn_op(s, "mulf", t.s, g.arg[1].s);
	struct name y = pb_imp_gen_end(s, &g,
				       bn_op(s, "addf", t.s, g.arg[2].s).s);
	if (pb_imp_def_ssa(s, y, PB_DT_F32, xs))
		return PB_ERR;
	/* running statistics */
	for (int o = 1; o <= 2; o++) {
		if ((size_t)o >= s->node->n_output || !s->node->output[o][0])
			continue;
		const char *rin[2] = {ins[2 + o], o == 1 ? mean.s : var.s};
		struct shape rsh[2] = {cs, cs};
		struct text rm[2] = {c1, c1};
		e = pb_imp_empty(s, &cs);
		pb_imp_gen_begin(s, &g, 1, "p", 2, rin, rsh, rm, e.s, &cs, &c1);
		struct name a = bn_op(s, "mulf", g.arg[0].s,
				      pb_imp_scalar(s, mom).s);
		struct name b = bn_op(s, "mulf", g.arg[1].s,
				      pb_imp_scalar(s, 1 - mom).s);
		struct name rv = pb_imp_gen_end(s, &g,
						bn_op(s, "addf", a.s, b.s).s);
		struct val *ov = pb_imp_def(s, o, PB_DT_F32, &cs);
		if (ov)
			ov->ssa = rv;
	}
	return PB_OK;
}

/* BatchNormalization in inference mode: (x - mean) / sqrt(var + eps) *
 * scale + B per channel (dim 1), one linalg.generic; training mode:
 * batchnorm_train. */
static int op_batchnorm(struct imp *s)
{
	struct val *in[5];
	for (int i = 0; i < 5; i++)
		if (!(in[i] = pb_imp_in(s, i)))
			return pb_imp_node_error(s, "expected 5 inputs");
	int train = pb_imp_attr_int(s, "training_mode", 0) != 0;
	if (train && s->opset < 14)
		return pb_imp_node_error(s, "training_mode=1 is not supported");
	if (!pb_imp_attr_int(s, "spatial", 1))
		return pb_imp_node_error(s, "spatial=0 is not supported");
	const struct shape *xs = &in[0]->sh;
	if (xs->rank < 2)
		return pb_imp_node_error(s, "input must have rank >= 2");
	for (int i = 1; i < 5; i++)
		if (in[i]->sh.rank != 1 || in[i]->sh.d[0] != xs->d[1])
			return pb_imp_node_error(s, "input %d must have shape "
						 "[%lld]", i,
						 (long long)xs->d[1]);
	const char *ins[5];
	struct shape shs[5];
	struct text maps[5];
	int all[PB_MAX_RANK], one = 1;
	for (int i = 0; i < xs->rank; i++)
		all[i] = i;
	for (int i = 0; i < 5; i++) {
		if (!(ins[i] = pb_imp_use(s, in[i])))
			return PB_ERR;
		shs[i] = in[i]->sh;
		maps[i] = i ? pb_imp_map(xs->rank, 1, &one)
			    : pb_imp_map(xs->rank, xs->rank, all);
	}
	if (train)
		return batchnorm_train(s, ins, xs);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', xs->rank);
	struct name e = pb_imp_empty(s, xs);
	struct gen g;
	pb_imp_gen_begin(s, &g, xs->rank, iters, 5, ins, shs, maps, e.s, xs,
			 &maps[0]);
	struct name eps = pb_imp_scalar(s, pb_imp_attr_float(s, "epsilon",
							     1e-5f));
	struct name t[6];
	for (int i = 0; i < 6; i++)
		t[i] = pb_imp_fresh(s);
	/* args: x, scale, B, mean, var */
	pb_imp_emit(s, "%s = arith.subf %s, %s : f32", t[0].s, g.arg[0].s,
		    g.arg[3].s);
	pb_imp_emit(s, "%s = arith.addf %s, %s : f32", t[1].s, g.arg[4].s,
		    eps.s);
	pb_imp_emit(s, "%s = math.sqrt %s : f32", t[2].s, t[1].s);
	pb_imp_emit(s, "%s = arith.divf %s, %s : f32", t[3].s, t[0].s, t[2].s);
	pb_imp_emit(s, "%s = arith.mulf %s, %s : f32", t[4].s, t[3].s,
		    g.arg[1].s);
	pb_imp_emit(s, "%s = arith.addf %s, %s : f32", t[5].s, t[4].s,
		    g.arg[2].s);
	struct name r = pb_imp_gen_end(s, &g, t[5].s);
	return pb_imp_def_ssa(s, r, PB_DT_F32, xs);
}

/* The identity map of rank "n". */
static struct text id_map(int n)
{
	int all[PB_MAX_RANK];
	for (int i = 0; i < n; i++)
		all[i] = i;
	return pb_imp_map(n, n, all);
}

/* Normalize "x" over the dims in "red": "*mean" (shape "*part", the
 * reduced dims dropped), "*d" = x - mean (x's shape) and "*inv" =
 * 1 / sqrt(mean(d * d) + eps) (shape "*part"). */
static int normalize(struct imp *s, struct val *x, unsigned red, double eps,
		     struct name *mean, struct name *d, struct name *inv,
		     struct shape *part)
{
	const struct shape *full = &x->sh;
	if (pb_imp_reduce(s, x, red, "mean", 0, mean, part))
		return PB_ERR;
	const char *in = pb_imp_use(s, x);
	int kept[PB_MAX_RANK], nk = 0;
	for (int i = 0; i < full->rank; i++)
		if (!(red >> i & 1))
			kept[nk++] = i;
	char iters[PB_MAX_RANK + 1] = "pppppppppppppppp";
	const char *ins[2] = {in, mean->s};
	struct shape shs[2] = {*full, *part};
	struct text id = id_map(full->rank);
	struct text maps[2] = {id, pb_imp_map(full->rank, nk, kept)};
	struct name e = pb_imp_empty(s, full);
	struct gen g;
	pb_imp_gen_begin(s, &g, full->rank, iters, 2, ins, shs, maps, e.s, full,
			 &id);
	struct name t = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.subf %s, %s : f32", t.s, g.arg[0].s,
		    g.arg[1].s);
	*d = pb_imp_gen_end(s, &g, t.s);
	struct val dv = {.name = x->name, .dtype = PB_DT_F32, .sh = *full};
	dv.ssa = *d;
	struct name var;
	struct shape vsh;
	if (pb_imp_reduce(s, &dv, red, "meansquare", 0, &var, &vsh))
		return PB_ERR;
	struct text pid = id_map(part->rank);
	const char *vin = var.s;
	e = pb_imp_empty(s, part);
	pb_imp_gen_begin(s, &g, part->rank, iters, 1, &vin, part, &pid, e.s,
			 part, &pid);
	struct name ep = pb_imp_scalar(s, eps), one = pb_imp_scalar(s, 1);
	struct name a = pb_imp_fresh(s), q = pb_imp_fresh(s), r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.addf %s, %s : f32", a.s, g.arg[0].s, ep.s);
	pb_imp_emit(s, "%s = math.sqrt %s : f32", q.s, a.s);
	pb_imp_emit(s, "%s = arith.divf %s, %s : f32", r.s, one.s, q.s);
	*inv = pb_imp_gen_end(s, &g, r.s);
	return PB_OK;
}

/* Y = d * inv * scale + bias over "full", "inv" read through the kept
 * dims of "red", "scale"/"bias" (NULL: none) through "smap". */
static struct name scale_shift(struct imp *s, const struct shape *full,
			       unsigned red, const char *d, const char *inv,
			       const struct shape *part, struct val *scale,
			       struct val *bias, const struct text *smap)
{
	struct name r = {""};
	int kept[PB_MAX_RANK], nk = 0;
	for (int i = 0; i < full->rank; i++)
		if (!(red >> i & 1))
			kept[nk++] = i;
	const char *ins[4] = {d, inv};
	struct shape shs[4] = {*full, *part};
	struct text id = id_map(full->rank);
	struct text maps[4] = {id, pb_imp_map(full->rank, nk, kept)};
	/* scale multiplies, bias adds: each an input when given */
	struct val *opt[2] = {scale, bias};
	static const char *const opt_op[2] = {"arith.mulf", "arith.addf"};
	int n = 2, at[2] = {-1, -1};
	for (int j = 0; j < 2; j++) {
		if (!opt[j])
			continue;
		if (!(ins[n] = pb_imp_use(s, opt[j])))
			return r;
		shs[n] = opt[j]->sh;
		maps[n] = smap[j];
		at[j] = n++;
	}
	char iters[PB_MAX_RANK + 1] = "pppppppppppppppp";
	struct name e = pb_imp_empty(s, full);
	struct gen g;
	pb_imp_gen_begin(s, &g, full->rank, iters, n, ins, shs, maps, e.s, full,
			 &id);
	struct name y = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.mulf %s, %s : f32", y.s, g.arg[0].s,
		    g.arg[1].s);
	for (int j = 0; j < 2; j++) {
		if (at[j] < 0)
			continue;
		struct name t = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = %s %s, %s : f32", t.s, opt_op[j], y.s,
			    g.arg[at[j]].s);
		y = t;
	}
	return pb_imp_gen_end(s, &g, y.s);
}

/* LayerNormalization (opset 17): normalize over the dims from "axis" on,
 * scale and shift broadcast from the right; the optional Mean and
 * InvStdDev outputs keep the normalized dims as 1. */
static int op_layernorm(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0), *w = pb_imp_in(s, 1),
		   *b = pb_imp_in(s, 2);
	int axis;
	if (!w || pb_imp_axis(s, pb_imp_attr_int(s, "axis", -1), x->sh.rank,
			      &axis))
		return w ? PB_ERR : pb_imp_node_error(s, "missing Scale");
	unsigned red = ((1u << x->sh.rank) - 1) & ~((1u << axis) - 1);
	struct shape bc;
	if (pb_imp_broadcast(s, &x->sh, &w->sh, &bc) ||
	    (b && pb_imp_broadcast(s, &x->sh, &b->sh, &bc)))
		return PB_ERR;
	struct name mean, d, inv;
	struct shape part;
	if (normalize(s, x, red, pb_imp_attr_float(s, "epsilon", 1e-5f), &mean,
		      &d, &inv, &part))
		return PB_ERR;
	struct text smap[2] = {pb_imp_bcast_map(&x->sh, &w->sh),
			       b ? pb_imp_bcast_map(&x->sh, &b->sh)
				 : pb_imp_bcast_map(&x->sh, &w->sh)};
	struct name y = scale_shift(s, &x->sh, red, d.s, inv.s, &part, w, b,
				    smap);
	if (!y.s[0])
		return PB_ERR;
	struct shape keep = x->sh;
	for (int i = axis; i < keep.rank; i++)
		keep.d[i] = 1;
	struct val *v = pb_imp_def(s, 0, PB_DT_F32, &x->sh);
	if (v)
		v->ssa = y;
	if ((v = pb_imp_def(s, 1, PB_DT_F32, &keep)))
		v->ssa = pb_imp_reshape(s, mean.s, &part, &keep);
	if ((v = pb_imp_def(s, 2, PB_DT_F32, &keep)))
		v->ssa = pb_imp_reshape(s, inv.s, &part, &keep);
	return PB_OK;
}

/* InstanceNormalization: normalize each (n, c) over the spatial dims,
 * then scale and shift per channel. */
static int op_instancenorm(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0), *sc = pb_imp_in(s, 1),
		   *b = pb_imp_in(s, 2);
	if (!sc || !b || x->sh.rank < 3)
		return pb_imp_node_error(s, "expected input of rank >= 3, scale "
					 "and B");
	for (int i = 1; i < 3; i++) {
		struct val *p = i == 1 ? sc : b;
		if (p->sh.rank != 1 || p->sh.d[0] != x->sh.d[1])
			return pb_imp_node_error(s, "input %d must have shape "
						 "[%lld]", i,
						 (long long)x->sh.d[1]);
	}
	unsigned red = ((1u << x->sh.rank) - 1) & ~3u;
	struct name mean, d, inv;
	struct shape part;
	if (normalize(s, x, red, pb_imp_attr_float(s, "epsilon", 1e-5f), &mean,
		      &d, &inv, &part))
		return PB_ERR;
	int one = 1;
	struct text cm = pb_imp_map(x->sh.rank, 1, &one);
	struct text smap[2] = {cm, cm};
	struct name y = scale_shift(s, &x->sh, red, d.s, inv.s, &part, sc, b,
				    smap);
	if (!y.s[0])
		return PB_ERR;
	return pb_imp_def_ssa(s, y, PB_DT_F32, &x->sh);
}

/* ConvTranspose in 1-d, 2-d and 3-d, group 1: the input is spread out
 * by the strides (tensor.insert_slice with strides into zeros, which also
 * pads by dil * (k - 1) - pads), W is transposed and flipped by a
 * linalg.generic, then a stride-1 linalg.conv with the dilations, the
 * bias as its init. Output size per dim: (in - 1) * stride + (k - 1) *
 * dil + 1 - pads + output_padding (or from output_shape). */
static int op_conv_transpose(struct imp *s)
{
	static const char *named[] = {"", "conv_1d_ncw_fcw",
				      "conv_2d_nchw_fchw", "conv_3d_ncdhw_fcdhw"};
	struct val *xv = pb_imp_in(s, 0), *wv = pb_imp_in(s, 1),
		   *bv = pb_imp_in(s, 2);
	int sr = xv->sh.rank - 2;
	if (!wv || sr < 1 || sr > 3 || wv->sh.rank != xv->sh.rank)
		return pb_imp_node_error(s, "only 1-d, 2-d and 3-d transposed "
					 "convolutions are supported");
	if (pb_imp_attr_int(s, "group", 1) != 1)
		return pb_imp_node_error(s, "group=%lld: not supported",
					 (long long)pb_imp_attr_int(s, "group",
								    1));
	int64_t C = xv->sh.d[1], F = wv->sh.d[1], st[3], dil[3], op[3],
		ks[3], osh[3], pads[6];
	if (wv->sh.d[0] != C)
		return pb_imp_node_error(s, "W of shape %s does not match %lld "
					 "input channels", pb_imp_ty(&wv->sh).s,
					 (long long)C);
	if (bv && (bv->sh.rank != 1 || bv->sh.d[0] != F))
		return pb_imp_node_error(s, "B must have shape [%lld]",
					 (long long)F);
	if (spatial_attr(s, "strides", sr, st, 1) ||
	    spatial_attr(s, "dilations", sr, dil, 1) ||
	    spatial_attr(s, "output_padding", sr, op, 0) ||
	    spatial_attr(s, "kernel_shape", sr, ks, 0) ||
	    spatial_attr(s, "output_shape", sr, osh, -1))
		return PB_ERR;
	int np = pb_imp_attr_ints(s, "pads", pads, 6);
	if (np == -2)
		return PB_ERR;
	if (np >= 0 && np != 2 * sr)
		return pb_imp_node_error(s, "attribute 'pads' has %d values, "
					 "expected %d", np, 2 * sr);
	const char *ap = pb_imp_attr_str(s, "auto_pad", "NOTSET");
	struct shape out = {xv->sh.rank, {xv->sh.d[0], F}};
	int64_t lo[PB_MAX_RANK] = {0}, full[PB_MAX_RANK], stride[PB_MAX_RANK];
	struct shape up = xv->sh;
	up.d[1] = C;
	stride[0] = stride[1] = 1;
	for (int i = 0; i < sr; i++) {
		int64_t in = xv->sh.d[2 + i], k = wv->sh.d[2 + i];
		int64_t ek = (k - 1) * dil[i] + 1, pb = 0, pe = 0;
		if (ks[i] && ks[i] != k)
			return pb_imp_node_error(s, "kernel_shape does not match "
						 "W");
		int64_t natural = (in - 1) * st[i] + ek + op[i];
		int same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
		int64_t want = osh[i] >= 0 ? osh[i] : same ? in * st[i] : -1;
		if (want >= 0) {
			int64_t tot = natural - want;
			int upper = strcmp(ap, "SAME_LOWER") != 0;
			pb = upper ? tot / 2 : tot - tot / 2;
			pe = tot - pb;
		} else if (np >= 0 && strcmp(ap, "VALID")) {
			pb = pads[i];
			pe = pads[sr + i];
		}
		out.d[2 + i] = natural - pb - pe;
		if (out.d[2 + i] < 1 || pb > ek - 1 || pe - op[i] > ek - 1)
			return pb_imp_node_error(s, "pads larger than the kernel "
						 "are not supported");
		/* spread input: in - 1 gaps of stride - 1 zeros, padded */
		lo[2 + i] = ek - 1 - pb;
		full[2 + i] = (in - 1) * st[i] + 1 + lo[2 + i] + ek - 1 - pe +
			      op[i];
		up.d[2 + i] = full[2 + i];
		stride[2 + i] = st[i];
	}
	const char *x = pb_imp_use(s, xv), *w = x ? pb_imp_use(s, wv) : NULL;
	if (!w)
		return PB_ERR;
	/* the spread, padded input */
	struct name z = pb_imp_fill(s, &up, 0), xs = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = tensor.insert_slice %s into %s%s %s %s : %s into "
		    "%s", xs.s, x, z.s, pb_imp_ints(up.rank, lo).s,
		    pb_imp_ints(up.rank, xv->sh.d).s,
		    pb_imp_ints(up.rank, stride).s, pb_imp_ty(&xv->sh).s,
		    pb_imp_ty(&up).s);
	/* W [C, F, k..] -> [F, C, k..] flipped */
	struct shape wt = wv->sh;
	wt.d[0] = F;
	wt.d[1] = C;
	struct text m;
	size_t k = snprintf(m.s, sizeof(m.s), "affine_map<(d0, d1, d2%s%s) -> "
			    "(d1, d0", sr >= 2 ? ", d3" : "", sr == 3 ? ", d4" : "");
	for (int i = 0; i < sr; i++)
		k += snprintf(m.s + k, sizeof(m.s) - k, ", %lld - d%d",
			      (long long)(wv->sh.d[2 + i] - 1), 2 + i);
	snprintf(m.s + k, sizeof(m.s) - k, ")>");
	int all[5] = {0, 1, 2, 3, 4};
	struct text id = pb_imp_map(wt.rank, wt.rank, all);
	struct name e = pb_imp_empty(s, &wt);
	struct gen g;
	pb_imp_gen_begin(s, &g, wt.rank, "ppppp", 1, &w, &wv->sh, &m, e.s, &wt,
			 &id);
	struct name wf = pb_imp_gen_end(s, &g, g.arg[0].s);
	struct name init = conv_init(s, bv, &out);
	if (!init.s[0])
		return PB_ERR;
	struct window win = {.sr = sr};
	for (int i = 0; i < sr; i++) {
		win.dil[i] = dil[i];
		win.stride[i] = 1;
	}
	struct name r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = linalg.%s %s ins(%s, %s : %s, %s) outs(%s : %s) "
		    "-> %s", r.s, named[sr], window_attrs(&win).s, xs.s, wf.s,
		    pb_imp_ty(&up).s, pb_imp_ty(&wt).s, init.s,
		    pb_imp_ty(&out).s, pb_imp_ty(&out).s);
	return pb_imp_def_ssa(s, r, PB_DT_F32, &out);
}

const struct pb_imp_op pb_imp_ops_nn[] = {
	{"Conv", op_conv, "auto_pad,dilations,group,kernel_shape,pads,strides", 1, 0, PB_IMP_WIDEN},
	{"ConvInteger", op_conv_integer, "auto_pad,dilations,group,"
		"kernel_shape,pads,strides", 10, 0, 0},
	{"QLinearConv", op_qlinear_conv, "auto_pad,dilations,group,"
		"kernel_shape,pads,strides", 10, 0, 0},
	{"ConvTranspose", op_conv_transpose, "auto_pad,dilations,group,"
		"kernel_shape,output_padding,output_shape,pads,strides", 1, 0, PB_IMP_WIDEN},
	{"MaxPool", op_pool, "auto_pad,ceil_mode,dilations,kernel_shape,pads,"
			     "storage_order,strides", 1, 0, PB_IMP_WIDEN_INT},
	{"AveragePool", op_pool, "auto_pad,ceil_mode,count_include_pad,"
				 "dilations,kernel_shape,pads,strides", 1, 0, PB_IMP_WIDEN},
	{"GlobalAveragePool", op_global_pool, "", 1, 0, PB_IMP_WIDEN},
	{"GlobalMaxPool", op_global_pool, "", 1, 0, PB_IMP_WIDEN},
	{"BatchNormalization", op_batchnorm, "consumed_inputs,epsilon,is_test,"
					     "momentum,spatial,training_mode", 1, 0, PB_IMP_WIDEN},
	{"LayerNormalization", op_layernorm, "axis,epsilon,stash_type", 17, 0, PB_IMP_WIDEN_FIRST},
	{"InstanceNormalization", op_instancenorm, "epsilon", 1, 0, PB_IMP_WIDEN},
	{NULL, NULL, NULL, 0, 0, 0},
};
