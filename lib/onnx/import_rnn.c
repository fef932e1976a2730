/* Op lowerings of the recurrent ops LSTM, GRU and RNN (ONNX's gate
 * equations, float32; half data is widened around them). The sequence
 * length is static, so the recurrence is unrolled at import:
 *
 *   per direction, X W^T for every step at once: one linalg.matmul of X
 *   as [seq * batch, input] by W^T, viewed as [seq, batch, gates, hidden];
 *   per step t, H(t-1) R^T (linalg.matmul, viewed as [batch, gates,
 *   hidden]), then linalg.generics over [batch, hidden] that read the
 *   gate slices through maps with constant coordinates (step, gate), add
 *   the biases and compute the gates, the cell state and the hidden state
 *   (LSTM: one generic for C(t), one for H(t); GRU: one, or with
 *   linear_before_reset = 0 one for r * H(t-1), its product with R_h^T,
 *   then one for H(t); RNN: one).
 *
 * Y is the concatenation of the steps' H(t) (and of the directions), Y_h
 * and Y_c the last states. Attributes: direction (forward, reverse,
 * bidirectional), activations with activation_alpha/beta (Sigmoid, Tanh,
 * Relu, HardSigmoid, LeakyRelu, ThresholdedRelu, ScaledTanh, Elu,
 * Softsign, Softplus, Affine), clip, input_forget (LSTM),
 * linear_before_reset (GRU), layout (batch first, opset 14 on). Initial
 * states and LSTM peepholes are optional inputs. sequence_lens: steps at
 * or past a sequence's length keep its state and write zeros to Y
 * (forward direction; reverse directions need every length equal to the
 * sequence length). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "onnx/import.h"

/* An activation function and its parameters. */
struct act {
	char name[20];
	double alpha, beta;
};

/* The state of one recurrent node's lowering. */
struct rnn {
	int lstm, gru;
	int ng;           /* gates: 4 (i, o, f, c), 3 (z, r, h), 1 */
	int nd;           /* directions */
	int64_t S, B, I, H;
	struct act act[2][3]; /* per direction: f, g, h */
	int nact;
	int has_clip;
	double clip;
	int input_forget, lbr;
	const char *x;    /* X as [S, B, I] */
	struct val *w, *r, *b, *lens, *h0, *c0, *p;
	const char *lens_ssa; /* sequence_lens when steps are masked */
};

/* Emit "c ? a : b" with the comparison "x <pred> y" on f32. */
static struct name sel_cmp(struct imp *s, const char *pred, const char *x,
			   const char *y, const char *a, const char *b)
{
	struct name c = pb_imp_fresh(s), r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.cmpf %s, %s, %s : f32", c.s, pred, x, y);
	pb_imp_emit(s, "%s = arith.select %s, %s, %s : f32", r.s, c.s, a, b);
	return r;
}

/* Emit activation "a" of "x". */
static struct name activate(struct imp *s, const struct act *a,
			    struct name x)
{
	const char *n = a->name;
	if (!strcmp(n, "Sigmoid")) {
		struct name e = pb_imp_scalar_op(s, "math.exp", pb_imp_scalar_op(s, "arith.negf", x.s,
						       NULL).s, NULL);
		struct name one = pb_imp_scalar(s, 1);
		return pb_imp_scalar_op(s, "arith.divf", one.s,
			   pb_imp_scalar_op(s, "arith.addf", one.s, e.s).s);
	}
	if (!strcmp(n, "Tanh"))
		return pb_imp_scalar_op(s, "math.tanh", x.s, NULL);
	if (!strcmp(n, "Relu"))
		return pb_imp_scalar_op(s, "arith.maximumf", x.s, pb_imp_scalar(s, 0).s);
	if (!strcmp(n, "HardSigmoid")) {
		struct name r = pb_imp_scalar_op(s, "arith.mulf", x.s, pb_imp_scalar(s, a->alpha).s);
		r = pb_imp_scalar_op(s, "arith.addf", r.s, pb_imp_scalar(s, a->beta).s);
		r = pb_imp_scalar_op(s, "arith.maximumf", r.s, pb_imp_scalar(s, 0).s);
		return pb_imp_scalar_op(s, "arith.minimumf", r.s, pb_imp_scalar(s, 1).s);
	}
	if (!strcmp(n, "LeakyRelu")) {
		struct name m = pb_imp_scalar_op(s, "arith.mulf", x.s, pb_imp_scalar(s, a->alpha).s);
		return sel_cmp(s, "ogt", x.s, pb_imp_scalar(s, 0).s, x.s, m.s);
	}
	if (!strcmp(n, "ThresholdedRelu"))
		return sel_cmp(s, "ogt", x.s, pb_imp_scalar(s, a->alpha).s, x.s,
			       pb_imp_scalar(s, 0).s);
	if (!strcmp(n, "ScaledTanh")) {
		struct name r = pb_imp_scalar_op(s, "arith.mulf", x.s, pb_imp_scalar(s, a->beta).s);
		r = pb_imp_scalar_op(s, "math.tanh", r.s, NULL);
		return pb_imp_scalar_op(s, "arith.mulf", r.s, pb_imp_scalar(s, a->alpha).s);
	}
	if (!strcmp(n, "Elu")) {
		struct name e = pb_imp_scalar_op(s, "math.exp", x.s, NULL);
		e = pb_imp_scalar_op(s, "arith.subf", e.s, pb_imp_scalar(s, 1).s);
		e = pb_imp_scalar_op(s, "arith.mulf", e.s, pb_imp_scalar(s, a->alpha).s);
		return sel_cmp(s, "olt", x.s, pb_imp_scalar(s, 0).s, e.s, x.s);
	}
	if (!strcmp(n, "Softsign")) {
		struct name d = pb_imp_scalar_op(s, "math.absf", x.s, NULL);
		d = pb_imp_scalar_op(s, "arith.addf", d.s, pb_imp_scalar(s, 1).s);
		return pb_imp_scalar_op(s, "arith.divf", x.s, d.s);
	}
	if (!strcmp(n, "Softplus")) {
		struct name e = pb_imp_scalar_op(s, "math.exp", x.s, NULL);
		return pb_imp_scalar_op(s, "math.log1p", e.s, NULL);
	}
	/* Affine */
	struct name r = pb_imp_scalar_op(s, "arith.mulf", x.s, pb_imp_scalar(s, a->alpha).s);
	return pb_imp_scalar_op(s, "arith.addf", r.s, pb_imp_scalar(s, a->beta).s);
}

/* The default alpha and beta of activation "n" (any case; rewritten in
 * ONNX's spelling). Returns how many of (alpha, beta) it takes, -1 when
 * the function is unknown. */
static int act_params(char *n, double *alpha, double *beta)
{
	static const struct {
		const char *name;
		int np;
		double alpha, beta;
	} tab[] = {
		{"Sigmoid", 0, 0, 0},        {"Tanh", 0, 0, 0},
		{"Relu", 0, 0, 0},           {"Softsign", 0, 0, 0},
		{"Softplus", 0, 0, 0},       {"HardSigmoid", 2, 0.2, 0.5},
		{"LeakyRelu", 1, 0.01, 0},   {"ThresholdedRelu", 1, 1.0, 0},
		{"ScaledTanh", 2, 1.0, 1.0}, {"Elu", 1, 1.0, 0},
		{"Affine", 2, 1.0, 0},
	};
	for (size_t i = 0; i < sizeof(tab) / sizeof(*tab); i++)
		if (!strcasecmp(n, tab[i].name)) {
			strcpy(n, tab[i].name); /* the canonical spelling */
			*alpha = tab[i].alpha;
			*beta = tab[i].beta;
			return tab[i].np;
		}
	return -1;
}

/* Read the activations (defaults: LSTM Sigmoid, Tanh, Tanh; GRU Sigmoid,
 * Tanh; RNN Tanh), each direction its own; activation_alpha/beta are
 * consumed in order by the functions that take them. */
static int read_acts(struct imp *s, struct rnn *r)
{
	static const char *const dflt[] = {"Sigmoid", "Tanh", "Tanh"};
	const Onnx__AttributeProto *a = pb_imp_attr(s, "activations");
	const Onnx__AttributeProto *al = pb_imp_attr(s, "activation_alpha");
	const Onnx__AttributeProto *be = pb_imp_attr(s, "activation_beta");
	size_t na = 0, nb = 0;
	r->nact = r->lstm ? 3 : r->gru ? 2 : 1;
	if (a && a->n_strings != (size_t)(r->nact * r->nd))
		return pb_imp_node_error(s, "%zu activations: expected %d",
					 a->n_strings, r->nact * r->nd);
	for (int d = 0; d < r->nd; d++)
		for (int k = 0; k < r->nact; k++) {
			struct act *x = &r->act[d][k];
			if (a) {
				const ProtobufCBinaryData *str =
					&a->strings[d * r->nact + k];
				if (str->len >= sizeof(x->name))
					return pb_imp_node_error(
						s, "activation name too long");
				memcpy(x->name, str->data, str->len);
				x->name[str->len] = 0;
			} else {
				snprintf(x->name, sizeof(x->name), "%s",
					 r->nact == 1 ? "Tanh" : dflt[k]);
			}
			int np = act_params(x->name, &x->alpha, &x->beta);
			if (np < 0)
				return pb_imp_node_error(s, "activation '%s' is "
							 "not supported",
							 x->name);
			if (np >= 1 && al && na < al->n_floats)
				x->alpha = al->floats[na++];
			if (np >= 2 && be && nb < be->n_floats)
				x->beta = be->floats[nb++];
		}
	return PB_OK;
}

/* Emit "tensor.extract_slice src[d, 0..] [1, dims..]" dropping the
 * leading dim: slice "d" of "src" (shape "sh") as a tensor of sh[1:]. */
static struct name slice0(struct imp *s, const char *src,
			  const struct shape *sh, int64_t d)
{
	struct shape o = {sh->rank - 1, {0}};
	struct pb_buf off = {0}, sz = {0}, st = {0};
	memcpy(o.d, sh->d + 1, sizeof(o.d[0]) * o.rank);
	for (int i = 0; i < sh->rank; i++) {
		pb_buf_printf(&off, "%s%lld", i ? ", " : "",
			      (long long)(i ? 0 : d));
		pb_buf_printf(&sz, "%s%lld", i ? ", " : "",
			      (long long)(i ? sh->d[i] : 1));
		pb_buf_printf(&st, "%s1", i ? ", " : "");
	}
	struct name r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = tensor.extract_slice %s[%s] [%s] [%s] : %s to %s",
		    r.s, src, off.data, sz.data, st.data, pb_imp_ty(sh).s,
		    pb_imp_ty(&o).s);
	pb_buf_free(&off);
	pb_buf_free(&sz);
	pb_buf_free(&st);
	return r;
}

/* Emit the transpose of 2-d "x" of shape "sh". */
static struct name transpose2(struct imp *s, const char *x,
			      const struct shape *sh)
{
	struct shape t = {2, {sh->d[1], sh->d[0]}};
	struct name e = pb_imp_empty(s, &t), r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = linalg.transpose ins(%s : %s) outs(%s : %s) "
		    "permutation = [1, 0]", r.s, x, pb_imp_ty(sh).s, e.s,
		    pb_imp_ty(&t).s);
	return r;
}

/* Emit the transpose of "x" (shape "sh") by "perm". */
static struct name transpose(struct imp *s, const char *x,
			     const struct shape *sh, const int64_t *perm,
			     struct shape *out)
{
	out->rank = sh->rank;
	for (int i = 0; i < sh->rank; i++)
		out->d[i] = sh->d[perm[i]];
	struct name e = pb_imp_empty(s, out), r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = linalg.transpose ins(%s : %s) outs(%s : %s) "
		    "permutation = %s", r.s, x, pb_imp_ty(sh).s, e.s,
		    pb_imp_ty(out).s, pb_imp_ints(sh->rank, perm).s);
	return r;
}

/* Emit "a @ b" ([m, k] x [k, n]) into zeros. */
static struct name matmul(struct imp *s, const char *a, const struct shape *as,
			  const char *b, const struct shape *bs)
{
	struct shape o = {2, {as->d[0], bs->d[1]}};
	struct name init = pb_imp_fill(s, &o, 0), r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = linalg.matmul ins(%s, %s : %s, %s) outs(%s : %s) "
		    "-> %s", r.s, a, b, pb_imp_ty(as).s, pb_imp_ty(bs).s,
		    init.s, pb_imp_ty(&o).s, pb_imp_ty(&o).s);
	return r;
}

/* The map "(d0, d1) -> (<res>)" of the step generics over [B, H]. */
static struct text map2(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static struct text map2(const char *fmt, ...)
{
	struct text t;
	char res[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(res, sizeof(res), fmt, ap);
	va_end(ap);
	snprintf(t.s, sizeof(t.s), "affine_map<(d0, d1) -> (%s)>", res);
	return t;
}

/* The inputs of one step generic over [B, H], collected. */
struct ins {
	int n;
	const char *x[PB_IMP_MAXIN];
	struct shape sh[PB_IMP_MAXIN];
	struct text map[PB_IMP_MAXIN];
	enum pb_dtype dt[PB_IMP_MAXIN]; /* f32 but for sequence_lens */
};

/* Add input "x" of shape "sh" read through "map"; returns its slot. */
static int add_in(struct ins *in, const char *x, const struct shape *sh,
		  struct text map)
{
	in->x[in->n] = x;
	in->sh[in->n] = *sh;
	in->map[in->n] = map;
	in->dt[in->n] = PB_DT_F32;
	return in->n++;
}

/* The per-direction operands of the recurrence. */
struct dir {
	const char *xw;      /* X W^T as [S, B, G, H] */
	struct shape xw_sh;
	const char *rt;      /* R^T, [H, G * H] */
	struct shape rt_sh;
	const char *bias;    /* [2, G, H] or NULL */
	struct shape b_sh;
	const char *peep;    /* [3, H] or NULL */
	struct shape p_sh;
	const char *rht;     /* GRU, linear_before_reset = 0: R_h^T [H, H] */
};

/* Gate "g" of step "t" before its activation: X W^T + H R^T (the slot
 * "hr" of [B, G, H], or -1) + Wb + Rb, from the block arguments "a". */
struct gate_in {
	int xw, hr, wb, rb;
};

static struct gate_in add_gate(struct imp *s, struct ins *in,
			       const struct dir *dr, const char *hr,
			       const struct shape *hr_sh, int64_t t, int g)
{
	struct gate_in gi = {-1, -1, -1, -1};
	(void)s;
	gi.xw = add_in(in, dr->xw, &dr->xw_sh,
		       map2("%lld, d0, %d, d1", (long long)t, g));
	if (hr)
		gi.hr = add_in(in, hr, hr_sh, map2("d0, %d, d1", g));
	if (dr->bias) {
		gi.wb = add_in(in, dr->bias, &dr->b_sh, map2("0, %d, d1", g));
		gi.rb = add_in(in, dr->bias, &dr->b_sh, map2("1, %d, d1", g));
	}
	return gi;
}

/* Emit the sum of the parts of gate "gi" (plus "extra" if non-empty). */
static struct name gate_sum(struct imp *s, const struct gen *g,
			    const struct gate_in *gi, const char *extra)
{
	struct name r = g->arg[gi->xw];
	if (gi->hr >= 0)
		r = pb_imp_scalar_op(s, "arith.addf", r.s, g->arg[gi->hr].s);
	if (gi->wb >= 0) {
		r = pb_imp_scalar_op(s, "arith.addf", r.s, g->arg[gi->wb].s);
		r = pb_imp_scalar_op(s, "arith.addf", r.s, g->arg[gi->rb].s);
	}
	if (extra && *extra)
		r = pb_imp_scalar_op(s, "arith.addf", r.s, extra);
	return r;
}

/* Clip "x" into [-clip, clip] when the node has a clip. */
static struct name clipped(struct imp *s, const struct rnn *r, struct name x)
{
	if (!r->has_clip)
		return x;
	x = pb_imp_scalar_op(s, "arith.maximumf", x.s, pb_imp_scalar(s, -r->clip).s);
	return pb_imp_scalar_op(s, "arith.minimumf", x.s, pb_imp_scalar(s, r->clip).s);
}

/* Begin a step generic over [B, H] with the inputs "in" into a new
 * empty [B, H] tensor. */
static void step_begin(struct imp *s, const struct rnn *r, struct gen *g,
		       const struct ins *in)
{
	struct shape o = {2, {r->B, r->H}};
	struct name e = pb_imp_empty(s, &o);
	struct text om = map2("d0, d1");
	pb_imp_gen_begin_dt(s, g, 2, "pp", in->n, in->x, in->sh, in->dt,
			    in->map, e.s, &o, PB_DT_F32, &om);
}

/* With sequence_lens: emit "t < lens[b] ? x : y" (slot "ls" holds the
 * length of the block's batch row). */
static struct name masked(struct imp *s, const struct gen *g, int ls,
			  int64_t t, struct name x, const char *y)
{
	if (ls < 0)
		return x;
	struct name tv = pb_imp_fresh(s), c = pb_imp_fresh(s),
		    r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = arith.constant %lld : i32", tv.s, (long long)t);
	pb_imp_emit(s, "%s = arith.cmpi slt, %s, %s : i32", c.s, tv.s,
		    g->arg[ls].s);
	pb_imp_emit(s, "%s = arith.select %s, %s, %s : f32", r.s, c.s, x.s, y);
	return r;
}

/* Add the sequence_lens input (when steps are masked); its slot or -1. */
static int add_lens(struct imp *s, const struct rnn *r, struct ins *in)
{
	(void)s;
	if (!r->lens_ssa)
		return -1;
	int i = add_in(in, r->lens_ssa, &r->lens->sh, map2("d0"));
	in->dt[i] = PB_DT_I32;
	return i;
}

/* One step of direction "dr" at time "t" from the states "*h" (and "*c"),
 * replaced by the new ones; "*y" gets the step's output. "hzero": H is
 * known to be zero (the first step without initial_h). */
static int step(struct imp *s, const struct rnn *r, const struct dir *dr,
		const struct act *act, int64_t t, int hzero, struct name *h,
		struct name *c, struct name *y)
{
	struct shape hs = {2, {r->B, r->H}};
	struct shape hr2 = {2, {r->B, r->ng * r->H}};
	struct shape hr3 = {3, {r->B, r->ng, r->H}};
	struct name hr = {{0}};
	const char *hrs = NULL; /* H(t-1) R^T; none while H is zero */
	if (!hzero) {
		hr = matmul(s, h->s, &hs, dr->rt, &dr->rt_sh);
		hr = pb_imp_reshape(s, hr.s, &hr2, &hr3);
		hrs = hr.s;
	}
	struct text id = map2("d0, d1");
	struct gen g;
	struct ins in = {0};
	if (r->lstm) {
		/* gates i, o, f, c; C(t) = f C + i g(c~), H(t) = o h(C(t)) */
		struct gate_in gi = add_gate(s, &in, dr, hrs, &hr3, t, 0);
		struct gate_in gf = add_gate(s, &in, dr, hrs, &hr3, t, 2);
		struct gate_in gc = add_gate(s, &in, dr, hrs, &hr3, t, 3);
		int cp = add_in(&in, c->s, &hs, id), pi = -1, pf = -1;
		if (dr->peep) {
			pi = add_in(&in, dr->peep, &dr->p_sh, map2("0, d1"));
			pf = add_in(&in, dr->peep, &dr->p_sh, map2("2, d1"));
		}
		int ls = add_lens(s, r, &in);
		step_begin(s, r, &g, &in);
		struct name ci = {{0}}, cf = {{0}};
		if (pi >= 0) {
			ci = pb_imp_scalar_op(s, "arith.mulf", g.arg[pi].s, g.arg[cp].s);
			cf = pb_imp_scalar_op(s, "arith.mulf", g.arg[pf].s, g.arg[cp].s);
		}
		struct name i = activate(s, &act[0],
			clipped(s, r, gate_sum(s, &g, &gi, ci.s)));
		struct name f;
		if (r->input_forget)
			f = pb_imp_scalar_op(s, "arith.subf", pb_imp_scalar(s, 1).s, i.s);
		else
			f = activate(s, &act[0],
				clipped(s, r, gate_sum(s, &g, &gf, cf.s)));
		struct name cc = activate(s, &act[1],
			clipped(s, r, gate_sum(s, &g, &gc, NULL)));
		struct name nc = pb_imp_scalar_op(s, "arith.mulf", f.s, g.arg[cp].s);
		nc = pb_imp_scalar_op(s, "arith.addf", nc.s,
			 pb_imp_scalar_op(s, "arith.mulf", i.s, cc.s).s);
		nc = masked(s, &g, ls, t, nc, g.arg[cp].s);
		struct name cn = pb_imp_gen_end(s, &g, nc.s);
		/* H(t) */
		struct ins in2 = {0};
		struct gate_in go = add_gate(s, &in2, dr, hrs, &hr3, t, 1);
		int cn_i = add_in(&in2, cn.s, &hs, id), po = -1;
		int hp = r->lens_ssa ? add_in(&in2, h->s, &hs, id) : -1;
		if (dr->peep)
			po = add_in(&in2, dr->peep, &dr->p_sh, map2("1, d1"));
		int ls2 = add_lens(s, r, &in2);
		step_begin(s, r, &g, &in2);
		struct name co = {{0}};
		if (po >= 0)
			co = pb_imp_scalar_op(s, "arith.mulf", g.arg[po].s, g.arg[cn_i].s);
		struct name o = activate(s, &act[0],
			clipped(s, r, gate_sum(s, &g, &go, co.s)));
		struct name nh = pb_imp_scalar_op(s, "arith.mulf", o.s,
				     activate(s, &act[2], g.arg[cn_i]).s);
		if (hp >= 0)
			nh = masked(s, &g, ls2, t, nh, g.arg[hp].s);
		*h = pb_imp_gen_end(s, &g, nh.s);
		*c = cn;
	} else if (r->gru) {
		/* gates z, r, h: H(t) = (1 - z) h~ + z H(t-1) */
		struct name rhr = {{0}};
		if (!r->lbr) {
			/* r * H(t-1), then (r H(t-1)) R_h^T */
			struct gate_in gr = add_gate(s, &in, dr, hrs, &hr3, t, 1);
			int hp = add_in(&in, h->s, &hs, id);
			step_begin(s, r, &g, &in);
			struct name rg = activate(s, &act[0],
				clipped(s, r, gate_sum(s, &g, &gr, NULL)));
			struct name rh = pb_imp_gen_end(s, &g,
				pb_imp_scalar_op(s, "arith.mulf", rg.s, g.arg[hp].s).s);
			struct shape hh = {2, {r->H, r->H}};
			rhr = matmul(s, rh.s, &hs, dr->rht, &hh);
			memset(&in, 0, sizeof(in));
		}
		struct gate_in gz = add_gate(s, &in, dr, hrs, &hr3, t, 0);
		struct gate_in gr = {-1, -1, -1, -1}, gh;
		int rh_i = -1;
		if (r->lbr) {
			gr = add_gate(s, &in, dr, hrs, &hr3, t, 1);
			gh = add_gate(s, &in, dr, hrs, &hr3, t, 2);
		} else {
			gh = add_gate(s, &in, dr, NULL, NULL, t, 2);
			rh_i = add_in(&in, rhr.s, &hs, id);
		}
		int hp = add_in(&in, h->s, &hs, id);
		int ls = add_lens(s, r, &in);
		step_begin(s, r, &g, &in);
		struct name z = activate(s, &act[0],
			clipped(s, r, gate_sum(s, &g, &gz, NULL)));
		struct name hh;
		if (r->lbr) {
			/* h~ = g(X W_h + Wb_h + r (H R_h + Rb_h)) */
			struct name rg = activate(s, &act[0],
				clipped(s, r, gate_sum(s, &g, &gr, NULL)));
			struct name rec = gh.hr >= 0 ? g.arg[gh.hr]
						      : pb_imp_scalar(s, 0);
			if (gh.rb >= 0)
				rec = pb_imp_scalar_op(s, "arith.addf", rec.s,
					  g.arg[gh.rb].s);
			rec = pb_imp_scalar_op(s, "arith.mulf", rg.s, rec.s);
			hh = pb_imp_scalar_op(s, "arith.addf", g.arg[gh.xw].s, rec.s);
			if (gh.wb >= 0)
				hh = pb_imp_scalar_op(s, "arith.addf", hh.s, g.arg[gh.wb].s);
		} else {
			/* h~ = g(X W_h + (r H) R_h + Wb_h + Rb_h) */
			hh = gate_sum(s, &g, &gh, g.arg[rh_i].s);
		}
		hh = activate(s, &act[1], clipped(s, r, hh));
		struct name one_z = pb_imp_scalar_op(s, "arith.subf", pb_imp_scalar(s, 1).s, z.s);
		struct name nh = pb_imp_scalar_op(s, "arith.mulf", one_z.s, hh.s);
		nh = pb_imp_scalar_op(s, "arith.addf", nh.s,
			 pb_imp_scalar_op(s, "arith.mulf", z.s, g.arg[hp].s).s);
		nh = masked(s, &g, ls, t, nh, g.arg[hp].s);
		*h = pb_imp_gen_end(s, &g, nh.s);
	} else {
		struct gate_in gi = add_gate(s, &in, dr, hrs, &hr3, t, 0);
		int hp = r->lens_ssa ? add_in(&in, h->s, &hs, id) : -1;
		int ls = add_lens(s, r, &in);
		step_begin(s, r, &g, &in);
		struct name nh = activate(s, &act[0],
			clipped(s, r, gate_sum(s, &g, &gi, NULL)));
		if (hp >= 0)
			nh = masked(s, &g, ls, t, nh, g.arg[hp].s);
		*h = pb_imp_gen_end(s, &g, nh.s);
	}
	*y = *h;
	if (r->lens_ssa) {
		/* Y is zero past a sequence's end */
		struct ins iy = {0};
		int hi = add_in(&iy, h->s, &hs, id);
		int ls = add_lens(s, r, &iy);
		step_begin(s, r, &g, &iy);
		struct name v = masked(s, &g, ls, t, g.arg[hi],
				       pb_imp_scalar(s, 0).s);
		*y = pb_imp_gen_end(s, &g, v.s);
	}
	return PB_OK;
}

/* Emit "tensor.concat dim(axis)" of the "n" tensors "x" of shape "sh"
 * each (their dim "axis" summed). */
static struct name concat(struct imp *s, int n, const struct name *x,
			  const struct shape *sh, int axis, struct shape *out)
{
	*out = *sh;
	out->d[axis] = sh->d[axis] * n;
	if (n == 1)
		return x[0];
	struct pb_buf a = {0}, t = {0};
	for (int i = 0; i < n; i++) {
		pb_buf_printf(&a, "%s%s", i ? ", " : "", x[i].s);
		pb_buf_printf(&t, "%s%s", i ? ", " : "", pb_imp_ty(sh).s);
	}
	struct name r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = tensor.concat dim(%d) %s : (%s) -> %s", r.s, axis,
		    a.data, t.data, pb_imp_ty(out).s);
	pb_buf_free(&a);
	pb_buf_free(&t);
	return r;
}

/* Check the shape of optional input "v": "rank" dims "d". */
static int check_shape(struct imp *s, struct val *v, const char *what,
		       int rank, const int64_t *d)
{
	struct shape want = {rank, {0}};
	memcpy(want.d, d, sizeof(d[0]) * rank);
	if (v && (v->sh.rank != rank ||
		  memcmp(v->sh.d, d, sizeof(d[0]) * rank)))
		return pb_imp_node_error(s, "%s has shape %s: expected %s",
					 what, pb_imp_ty(&v->sh).s,
					 pb_imp_ty(&want).s);
	return PB_OK;
}

/* Read the inputs and attributes of the node into "r". */
static int setup(struct imp *s, struct rnn *r)
{
	const char *op = s->node->op_type;
	r->lstm = !strcmp(op, "LSTM");
	r->gru = !strcmp(op, "GRU");
	r->ng = r->lstm ? 4 : r->gru ? 3 : 1;
	struct val *x = pb_imp_in(s, 0);
	r->w = pb_imp_in(s, 1);
	r->r = pb_imp_in(s, 2);
	r->b = pb_imp_in(s, 3);
	r->lens = pb_imp_in(s, 4);
	r->h0 = pb_imp_in(s, 5);
	r->c0 = r->lstm ? pb_imp_in(s, 6) : NULL;
	r->p = r->lstm ? pb_imp_in(s, 7) : NULL;
	if (!r->w || !r->r)
		return pb_imp_node_error(s, "W and R are required");
	char dir[16]; /* pb_imp_attr_str's buffer is reused */
	snprintf(dir, sizeof(dir), "%s",
		 pb_imp_attr_str(s, "direction", "forward"));
	int layout = pb_imp_attr_int(s, "layout", 0) != 0;
	r->nd = !strcmp(dir, "bidirectional") ? 2 : 1;
	if (strcmp(dir, "forward") && strcmp(dir, "reverse") && r->nd == 1)
		return pb_imp_node_error(s, "direction '%s' is not supported",
					 dir);
	if (x->sh.rank != 3 || r->w->sh.rank != 3 || r->r->sh.rank != 3)
		return pb_imp_node_error(s, "X, W and R must be 3-d");
	r->S = x->sh.d[layout ? 1 : 0];
	r->B = x->sh.d[layout ? 0 : 1];
	r->I = x->sh.d[2];
	r->H = pb_imp_attr_int(s, "hidden_size", r->r->sh.d[2]);
	int64_t gh = r->ng * r->H;
	if (r->S < 1 || r->B < 1 || r->H < 1)
		return pb_imp_node_error(s, "empty sequence, batch or hidden "
					 "size");
	if (r->S > 4096)
		return pb_imp_node_error(s, "a sequence of %lld steps: at most "
					 "4096 are unrolled",
					 (long long)r->S);
	int64_t wd[3] = {r->nd, gh, r->I}, rd[3] = {r->nd, gh, r->H},
		bd[2] = {r->nd, 2 * gh}, hd[3] = {r->nd, r->B, r->H},
		pd[2] = {r->nd, 3 * r->H}, ld[1] = {r->B};
	if (layout) {
		hd[0] = r->B;
		hd[1] = r->nd;
	}
	if (check_shape(s, r->w, "W", 3, wd) ||
	    check_shape(s, r->r, "R", 3, rd) ||
	    check_shape(s, r->b, "B", 2, bd) ||
	    check_shape(s, r->h0, "initial_h", 3, hd) ||
	    check_shape(s, r->c0, "initial_c", 3, hd) ||
	    check_shape(s, r->p, "P", 2, pd) ||
	    check_shape(s, r->lens, "sequence_lens", 1, ld))
		return PB_ERR;
	r->has_clip = pb_imp_attr(s, "clip") != NULL;
	r->clip = pb_imp_attr_float(s, "clip", 0);
	r->input_forget = pb_imp_attr_int(s, "input_forget", 0) != 0;
	r->lbr = pb_imp_attr_int(s, "linear_before_reset", 0) != 0;
	if (read_acts(s, r))
		return PB_ERR;
	/* sequence_lens: masking only where some length is short */
	if (r->lens) {
		if (r->lens->dtype != PB_DT_I32)
			return pb_imp_node_error(s, "sequence_lens has type %s: "
						 "expected int32",
						 pb_dtype_name(r->lens->dtype));
		int all_full = 0;
		if (pb_imp_fold_ok(r->lens)) {
			struct pb_tensor *k = pb_imp_known(s, r->lens);
			if (!k)
				return PB_ERR;
			all_full = 1;
			for (int64_t i = 0; i < r->B; i++)
				all_full &= ((int32_t *)k->data)[i] == r->S;
		}
		if (!all_full) {
			if (r->nd == 2 || !strcmp(dir, "reverse"))
				return pb_imp_node_error(s, "sequence_lens "
					"not all equal to the sequence length "
					"(or given at run time): supported in "
					"the forward direction only");
			if (!(r->lens_ssa = pb_imp_use_dt(s, r->lens)))
				return PB_ERR;
		}
	}
	const char *xs = pb_imp_use(s, x);
	if (!xs)
		return PB_ERR;
	if (layout) {
		static const int64_t perm[3] = {1, 0, 2};
		struct shape t;
		r->x = transpose(s, xs, &x->sh, perm, &t).s;
		r->x = strdup(r->x);
	} else {
		r->x = strdup(xs);
	}
	return PB_OK;
}

/* Is "v" known to hold zeros only (PyTorch exports its default initial
 * states as an Expand of a zero)? */
static int known_zero(struct imp *s, struct val *v)
{
	struct pb_tensor *t;
	if (!pb_imp_fold_ok(v) || !(t = pb_imp_known(s, v)))
		return 0;
	for (int64_t i = 0; i < pb_tensor_numel(t); i++)
		if (pb_imp_elem_get(t, i) != 0)
			return 0;
	return 1;
}

/* Initial state "v" ([D, B, H], or [B, D, H] with layout) of direction
 * "d" as [B, H]; zeros when absent or known to be zero. */
static struct name init_state(struct imp *s, const struct rnn *r,
			      struct val *v, int d, int layout)
{
	struct shape hs = {2, {r->B, r->H}};
	if (!v || known_zero(s, v))
		return pb_imp_fill(s, &hs, 0);
	const char *x = pb_imp_use(s, v);
	if (!x)
		return (struct name){{0}};
	struct name a = {{0}};
	snprintf(a.s, sizeof(a.s), "%s", x);
	if (layout) {
		static const int64_t perm[3] = {1, 0, 2};
		struct shape t;
		a = transpose(s, a.s, &v->sh, perm, &t);
		return slice0(s, a.s, &t, d);
	}
	return slice0(s, a.s, &v->sh, d);
}

/* LSTM, GRU and RNN. */
static int op_rnn(struct imp *s)
{
	struct rnn r = {0};
	if (setup(s, &r))
		return PB_ERR;
	int layout = pb_imp_attr_int(s, "layout", 0) != 0;
	int reverse = !strcmp(pb_imp_attr_str(s, "direction", "forward"),
			      "reverse");
	const char *w = pb_imp_use(s, r.w), *rr = w ? pb_imp_use(s, r.r) : NULL;
	const char *b = r.b && rr ? pb_imp_use(s, r.b) : NULL;
	const char *p = r.p && rr ? pb_imp_use(s, r.p) : NULL;
	if (!rr || (r.b && !b) || (r.p && !p)) {
		free((char *)r.x);
		return PB_ERR;
	}
	int64_t gh = r.ng * r.H;
	struct shape xs = {3, {r.S, r.B, r.I}}, x2 = {2, {r.S * r.B, r.I}};
	struct name xf = pb_imp_reshape(s, r.x, &xs, &x2);
	struct name *y = calloc(r.S * r.nd, sizeof(*y));
	struct name hl[2], cl[2];
	if (!y) {
		free((char *)r.x);
		return pb_imp_node_error(s, "out of memory");
	}
	for (int d = 0; d < r.nd; d++) {
		struct dir dr = {0};
		struct shape wsh = r.w->sh, wd = {2, {gh, r.I}};
		struct name wt = transpose2(s, slice0(s, w, &wsh, d).s, &wd);
		struct shape wt_sh = {2, {r.I, gh}};
		struct name xw = matmul(s, xf.s, &x2, wt.s, &wt_sh);
		struct shape xw2 = {2, {r.S * r.B, gh}};
		dr.xw_sh = (struct shape){4, {r.S, r.B, r.ng, r.H}};
		struct name xw4 = pb_imp_reshape(s, xw.s, &xw2, &dr.xw_sh);
		dr.xw = xw4.s;
		struct shape rd = {2, {gh, r.H}};
		struct name rd_s = slice0(s, rr, &r.r->sh, d);
		struct name rt = transpose2(s, rd_s.s, &rd);
		dr.rt = rt.s;
		dr.rt_sh = (struct shape){2, {r.H, gh}};
		struct name rht = {{0}};
		if (r.gru && !r.lbr) {
			/* rows 2H..3H of R[d], transposed */
			struct shape hh = {2, {r.H, r.H}};
			struct name sl = pb_imp_fresh(s);
			pb_imp_emit(s, "%s = tensor.extract_slice %s[%lld, 0] "
				    "[%lld, %lld] [1, 1] : %s to %s", sl.s,
				    rd_s.s, (long long)(2 * r.H),
				    (long long)r.H, (long long)r.H,
				    pb_imp_ty(&rd).s, pb_imp_ty(&hh).s);
			rht = transpose2(s, sl.s, &hh);
			dr.rht = rht.s;
		}
		struct name bias = {{0}}, peep = {{0}};
		if (b) {
			struct shape b1 = {1, {2 * gh}};
			dr.b_sh = (struct shape){3, {2, r.ng, r.H}};
			bias = pb_imp_reshape(s, slice0(s, b, &r.b->sh, d).s,
					      &b1, &dr.b_sh);
			dr.bias = bias.s;
		}
		if (p) {
			struct shape p1 = {1, {3 * r.H}};
			dr.p_sh = (struct shape){2, {3, r.H}};
			peep = pb_imp_reshape(s, slice0(s, p, &r.p->sh, d).s,
					      &p1, &dr.p_sh);
			dr.peep = peep.s;
		}
		struct name h = init_state(s, &r, r.h0, d, layout);
		struct name c = r.lstm ? init_state(s, &r, r.c0, d, layout)
				       : h;
		if (!h.s[0] || !c.s[0]) {
			free(y);
			free((char *)r.x);
			return PB_ERR;
		}
		int rev = reverse || d == 1;
		int h0_zero = !r.h0 || known_zero(s, r.h0);
		for (int64_t k = 0; k < r.S; k++) {
			int64_t t = rev ? r.S - 1 - k : k;
			step(s, &r, &dr, r.act[d], t, !k && h0_zero, &h, &c,
			     &y[t * r.nd + d]);
		}
		hl[d] = h;
		cl[d] = c;
	}
	/* Y: [S, D, B, H] from the steps' [B, H] */
	struct shape hs = {2, {r.B, r.H}}, h4 = {4, {1, 1, r.B, r.H}};
	struct shape h3 = {3, {1, r.B, r.H}};
	struct name *parts = calloc(r.S, sizeof(*parts));
	struct name dirs[2];
	struct shape ysh, ydsh;
	for (int d = 0; d < r.nd; d++) {
		for (int64_t t = 0; t < r.S; t++)
			parts[t] = pb_imp_reshape(s, y[t * r.nd + d].s, &hs,
						  &h4);
		dirs[d] = concat(s, r.S, parts, &h4, 0, &ydsh);
	}
	struct name yv = concat(s, r.nd, dirs, &ydsh, 1, &ysh);
	free(parts);
	free(y);
	/* Y_h, Y_c: [D, B, H] */
	struct name hp[2], cp[2], yh, yc;
	struct shape hsh;
	for (int d = 0; d < r.nd; d++) {
		hp[d] = pb_imp_reshape(s, hl[d].s, &hs, &h3);
		if (r.lstm)
			cp[d] = pb_imp_reshape(s, cl[d].s, &hs, &h3);
	}
	yh = concat(s, r.nd, hp, &h3, 0, &hsh);
	if (r.lstm)
		yc = concat(s, r.nd, cp, &h3, 0, &hsh);
	if (layout) {
		static const int64_t py[4] = {2, 0, 1, 3}, ph[3] = {1, 0, 2};
		struct shape t;
		yv = transpose(s, yv.s, &ysh, py, &t);
		ysh = t;
		yh = transpose(s, yh.s, &hsh, ph, &t);
		if (r.lstm)
			yc = transpose(s, yc.s, &hsh, ph, &t);
		hsh = t;
	}
	free((char *)r.x);
	struct name outs[3] = {yv, yh, r.lstm ? yc : yh};
	const struct shape *shs[3] = {&ysh, &hsh, &hsh};
	for (size_t i = 0; i < s->node->n_output && i < 3; i++) {
		if (!s->node->output[i][0] || (i == 2 && !r.lstm))
			continue;
		struct val *v = pb_imp_def(s, i, PB_DT_F32, shs[i]);
		if (v)
			v->ssa = outs[i];
	}
	return PB_OK;
}

const struct pb_imp_op pb_imp_ops_rnn[] = {
	{"LSTM", op_rnn,
	 "activation_alpha,activation_beta,activations,clip,direction,"
	 "hidden_size,input_forget,layout", 7, 0, PB_IMP_WIDEN},
	{"GRU", op_rnn,
	 "activation_alpha,activation_beta,activations,clip,direction,"
	 "hidden_size,linear_before_reset,layout", 7, 0, PB_IMP_WIDEN},
	{"RNN", op_rnn,
	 "activation_alpha,activation_beta,activations,clip,direction,"
	 "hidden_size,layout", 7, 0, PB_IMP_WIDEN},
	{NULL, NULL, NULL, 0, 0, 0},
};
