/* GridSample (opset 16, 2-d): one generic over the output [N, C, Ho, Wo]
 * reading the grid's (x, y) through two maps and the input's taps with
 * tensor.extract: the grid unnormalized (align_corners), then nearest
 * (round half to even), bilinear (2 x 2 taps) or bicubic (4 x 4 taps,
 * A = -0.75) interpolation; padding_mode zeros (a tap outside is 0),
 * border (coordinates clamped into the input) or reflection (mirrored at
 * the borders, then clamped), as PyTorch's grid_sample: bilinear and
 * nearest pad the sampled coordinate, bicubic each tap. float32; half
 * data is widened. */
#include <string.h>

#include "onnx/import.h"

static struct name fop(struct imp *s, const char *op, const char *a,
		       const char *b)
{
	struct name r = pb_imp_fresh(s);
	if (b)
		pb_imp_emit(s, "%s = arith.%s %s, %s : f32", r.s, op, a, b);
	else
		pb_imp_emit(s, "%s = %s %s : f32", r.s, op, a);
	return r;
}

static const char *cf(struct imp *s, double x, struct name *keep)
{
	*keep = pb_imp_scalar(s, x);
	return keep->s;
}

/* The sampling state of one spatial dim. */
struct gdim {
	int64_t n;     /* input size */
	int align, pad; /* pad: 0 zeros, 1 border, 2 reflection */
};

/* Clamp coordinate "x" into [0, n - 1]. */
static struct name clip(struct imp *s, const struct gdim *d, struct name x)
{
	struct name k;
	x = fop(s, "maximumf", x.s, cf(s, 0, &k));
	return fop(s, "minimumf", x.s, cf(s, (double)(d->n - 1), &k));
}

/* Mirror "x" at the borders (PyTorch's reflect_coordinates), clamped. */
static struct name reflect(struct imp *s, const struct gdim *d, struct name x)
{
	struct name k;
	double lo = d->align ? 0 : -0.5;
	double span = d->align ? (double)(d->n - 1) : (double)d->n;
	if (span <= 0)
		return clip(s, d, x);
	struct name a = fop(s, "subf", x.s, cf(s, lo, &k));
	a = fop(s, "math.absf", a.s, NULL);
	struct name flips = fop(s, "divf", a.s, cf(s, span, &k));
	flips = fop(s, "math.floor", flips.s, NULL);
	struct name extra = fop(s, "mulf", flips.s, cf(s, span, &k));
	extra = fop(s, "subf", a.s, extra.s);
	/* flips even: extra + lo, else span - extra + lo */
	struct name half = fop(s, "mulf", flips.s, cf(s, 0.5, &k));
	struct name fl = fop(s, "math.floor", half.s, NULL);
	struct name odd = pb_imp_fresh(s), r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.cmpf one, %s, %s : f32", odd.s, half.s,
		    fl.s);
	struct name ev = fop(s, "addf", extra.s, cf(s, lo, &k));
	struct name od = fop(s, "subf", cf(s, span + lo, &k), extra.s);
	pb_imp_emit(s, "%s = arith.select %s, %s, %s : f32", r.s, odd.s, od.s,
		    ev.s);
	return clip(s, d, r);
}

/* Pad coordinate "x" of dim "d" by its padding mode (zeros: unchanged). */
static struct name pad_coord(struct imp *s, const struct gdim *d,
			     struct name x)
{
	return d->pad == 1 ? clip(s, d, x) : d->pad == 2 ? reflect(s, d, x)
							 : x;
}

/* The tap at integer coordinate "t" (f32) of dim "d": its index (clamped
 * into the dim) into "*idx", and whether it lies inside into "*in". */
static void tap(struct imp *s, const struct gdim *d, struct name t,
		struct name *idx, struct name *in)
{
	struct name k, ge = pb_imp_fresh(s), le = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.cmpf oge, %s, %s : f32", ge.s, t.s,
		    cf(s, 0, &k));
	pb_imp_emit(s, "%s = arith.cmpf ole, %s, %s : f32", le.s, t.s,
		    cf(s, (double)(d->n - 1), &k));
	*in = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.andi %s, %s : i1", in->s, ge.s, le.s);
	struct name c = clip(s, d, t), i = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.fptosi %s : f32 to i64", i.s, c.s);
	*idx = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.index_cast %s : i64 to index", idx->s, i.s);
}

/* The cubic convolution weights (A = -0.75) of fraction "t". */
static void cubic_w(struct imp *s, struct name t, struct name *w)
{
	const double A = -0.75;
	struct name k;
	for (int i = 0; i < 4; i++) {
		/* distance from the tap: 1 + t, t, 1 - t, 2 - t */
		struct name x;
		if (i == 0)
			x = fop(s, "addf", t.s, cf(s, 1, &k));
		else if (i == 1)
			x = t;
		else
			x = fop(s, "subf", cf(s, i == 2 ? 1 : 2, &k), t.s);
		if (i == 1 || i == 2) { /* ((A + 2) x - (A + 3)) x^2 + 1 */
			struct name a = fop(s, "mulf", x.s, cf(s, A + 2, &k));
			a = fop(s, "subf", a.s, cf(s, A + 3, &k));
			a = fop(s, "mulf", a.s, x.s);
			a = fop(s, "mulf", a.s, x.s);
			w[i] = fop(s, "addf", a.s, cf(s, 1, &k));
		} else { /* ((A x - 5A) x + 8A) x - 4A */
			struct name a = fop(s, "mulf", x.s, cf(s, A, &k));
			a = fop(s, "subf", a.s, cf(s, 5 * A, &k));
			a = fop(s, "mulf", a.s, x.s);
			a = fop(s, "addf", a.s, cf(s, 8 * A, &k));
			a = fop(s, "mulf", a.s, x.s);
			w[i] = fop(s, "subf", a.s, cf(s, 4 * A, &k));
		}
	}
}

static int op_grid_sample(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0), *gv = pb_imp_in(s, 1);
	char mode[16], pm[16]; /* pb_imp_attr_str's buffer is reused */
	snprintf(mode, sizeof(mode), "%s",
		 pb_imp_attr_str(s, "mode", "bilinear"));
	snprintf(pm, sizeof(pm), "%s",
		 pb_imp_attr_str(s, "padding_mode", "zeros"));
	int align = pb_imp_attr_int(s, "align_corners", 0) != 0;
	int m = !strcmp(mode, "nearest") ? 0 : !strcmp(mode, "bilinear") ? 1
		: !strcmp(mode, "bicubic") ? 2 : -1;
	int pad = !strcmp(pm, "zeros") ? 0 : !strcmp(pm, "border") ? 1
		: !strcmp(pm, "reflection") ? 2 : -1;
	if (m < 0)
		return pb_imp_node_error(s, "mode '%s' is not supported", mode);
	if (pad < 0)
		return pb_imp_node_error(s, "padding_mode '%s' is not supported",
					 pm);
	if (!gv)
		return pb_imp_node_error(s, "expected 2 inputs");
	if (x->sh.rank != 4 || gv->sh.rank != 4 || gv->sh.d[3] != 2 ||
	    gv->sh.d[0] != x->sh.d[0])
		return pb_imp_node_error(s, "input %s and grid %s: only 2-d "
					 "sampling ([N, C, H, W] by [N, Ho, "
					 "Wo, 2]) is supported",
					 pb_imp_ty(&x->sh).s,
					 pb_imp_ty(&gv->sh).s);
	const char *in = pb_imp_use(s, x), *gs = in ? pb_imp_use(s, gv) : NULL;
	if (!gs)
		return PB_ERR;
	struct shape out = {4, {x->sh.d[0], x->sh.d[1], gv->sh.d[1],
				gv->sh.d[2]}};
	struct text maps[2], om = pb_imp_map(4, 4, (int[]){0, 1, 2, 3});
	for (int c = 0; c < 2; c++)
		snprintf(maps[c].s, sizeof(maps[c].s), "affine_map<(d0, d1, d2, "
			 "d3) -> (d0, d2, d3, %d)>", c);
	const char *ins[2] = {gs, gs};
	struct shape sh[2] = {gv->sh, gv->sh};
	struct name e = pb_imp_empty(s, &out);
	struct gen g;
	pb_imp_gen_begin(s, &g, 4, "pppp", 2, ins, sh, maps, e.s, &out, &om);
	/* dim 0: x (width, input dim 3), dim 1: y (height, input dim 2) */
	struct gdim d[2] = {{x->sh.d[3], align, pad}, {x->sh.d[2], align, pad}};
	struct name co[2], k;
	for (int i = 0; i < 2; i++) {
		/* align: (g + 1) / 2 (n - 1); else ((g + 1) n - 1) / 2 */
		struct name a = fop(s, "addf", g.arg[i].s, cf(s, 1, &k));
		if (align) {
			a = fop(s, "mulf", a.s, cf(s, 0.5 * (double)(d[i].n - 1),
						   &k));
		} else {
			a = fop(s, "mulf", a.s, cf(s, (double)d[i].n, &k));
			a = fop(s, "subf", a.s, cf(s, 1, &k));
			a = fop(s, "mulf", a.s, cf(s, 0.5, &k));
		}
		co[i] = m == 2 ? a : pad_coord(s, &d[i], a);
	}
	struct name n = pb_imp_loop_index(s, 0), c = pb_imp_loop_index(s, 1);
	struct name zero = pb_imp_scalar(s, 0);
	int ntap = m == 0 ? 1 : m == 1 ? 2 : 4;
	struct name base[2], w[2][4], t[2][4];
	for (int i = 0; i < 2; i++) {
		if (m == 0) {
			base[i] = fop(s, "math.roundeven", co[i].s, NULL);
			w[i][0] = pb_imp_scalar(s, 1);
			t[i][0] = base[i];
			continue;
		}
		base[i] = fop(s, "math.floor", co[i].s, NULL);
		struct name fr = fop(s, "subf", co[i].s, base[i].s);
		if (m == 1) {
			w[i][0] = fop(s, "subf", cf(s, 1, &k), fr.s);
			w[i][1] = fr;
		} else {
			cubic_w(s, fr, w[i]);
		}
		for (int j = 0; j < ntap; j++) {
			double off = m == 1 ? j : j - 1;
			t[i][j] = fop(s, "addf", base[i].s, cf(s, off, &k));
			if (m == 2)
				t[i][j] = pad_coord(s, &d[i], t[i][j]);
		}
	}
	struct name acc = zero;
	for (int jy = 0; jy < ntap; jy++) {
		struct name iy, iny;
		tap(s, &d[1], t[1][jy], &iy, &iny);
		for (int jx = 0; jx < ntap; jx++) {
			struct name ix, inx, both = pb_imp_fresh(s),
				    v, sel = pb_imp_fresh(s);
			tap(s, &d[0], t[0][jx], &ix, &inx);
			pb_imp_emit(s, "%s = arith.andi %s, %s : i1", both.s,
				    iny.s, inx.s);
			struct name idx[4] = {n, c, iy, ix};
			v = pb_imp_extract(s, in, &x->sh, PB_DT_F32, idx);
			pb_imp_emit(s, "%s = arith.select %s, %s, %s : f32",
				    sel.s, both.s, v.s, zero.s);
			struct name wv = fop(s, "mulf", w[1][jy].s, w[0][jx].s);
			wv = fop(s, "mulf", wv.s, sel.s);
			acc = fop(s, "addf", acc.s, wv.s);
		}
	}
	return pb_imp_def_ssa(s, pb_imp_gen_end(s, &g, acc.s), PB_DT_F32,
			      &out);
}

const struct pb_imp_op pb_imp_ops_grid[] = {
	{"GridSample", op_grid_sample, "align_corners,mode,padding_mode", 16, 0,
	 PB_IMP_WIDEN},
	{NULL, NULL, NULL, 0, 0, 0},
};
