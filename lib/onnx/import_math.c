/* Op lowerings: elementwise arithmetic with NumPy broadcasting (folded at
 * import time when all inputs are known), MatMul, Gemm, reductions and
 * Softmax. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/import.h"

/* The elementwise ops: ONNX name, arity (0: variadic) and the MLIR op
 * that computes one element ("" for those with their own body). */
static const struct ew {
	const char *name;
	int arity;
	const char *op;
} ew_ops[] = {
	{"Add", 2, "arith.addf"},   {"Sub", 2, "arith.subf"},
	{"Mul", 2, "arith.mulf"},   {"Div", 2, "arith.divf"},
	{"Pow", 2, ""},             {"Max", 0, "arith.maximumf"},
	{"Min", 0, "arith.minimumf"}, {"Sum", 0, "arith.addf"},
	{"Mean", 0, ""},            {"Relu", 1, ""},
	{"LeakyRelu", 1, ""},       {"Sigmoid", 1, ""},
	{"HardSigmoid", 1, ""},     {"Clip", 1, ""},
	{"Sqrt", 1, "math.sqrt"},   {"Exp", 1, "math.exp"},
	{"Log", 1, "math.log"},     {"Tanh", 1, "math.tanh"},
	{"Erf", 1, "math.erf"},     {"Neg", 1, "arith.negf"},
	{"Abs", 1, "math.absf"},    {"Floor", 1, "math.floor"},
	{"Ceil", 1, "math.ceil"},   {"Reciprocal", 1, ""},
	{"Softplus", 1, ""},        {"Elu", 1, ""},
	{"Selu", 1, ""},            {"Sin", 1, "math.sin"},
	{"Cos", 1, "math.cos"},     {"HardSwish", 1, ""},
	{"Tan", 1, "math.tan"},     {"Sinh", 1, "math.sinh"},
	{"Cosh", 1, "math.cosh"},   {"Asin", 1, "math.asin"},
	{"Acos", 1, "math.acos"},   {"Atan", 1, "math.atan"},
	{"Asinh", 1, "math.asinh"}, {"Acosh", 1, "math.acosh"},
	{"Atanh", 1, "math.atanh"}, {"Round", 1, "math.roundeven"},
	{"Sign", 1, ""},            {"Softsign", 1, ""},
	{"ThresholdedRelu", 1, ""}, {"Shrink", 1, ""},
	{"Celu", 1, ""},            {"Mish", 1, ""},
	{"PRelu", 2, ""},           {"Gelu", 1, ""},
	{NULL, 0, NULL},
};

/* The entry of "name" in ew_ops. */
static const struct ew *find_ew(const char *name)
{
	for (const struct ew *e = ew_ops; e->name; e++)
		if (!strcmp(e->name, name))
			return e;
	return NULL;
}

/* Element "i" of known tensor "t" as a double. */
static double get_f(const struct pb_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case PB_DT_F32: return ((float *)t->data)[i];
	case PB_DT_F64: return ((double *)t->data)[i];
	case PB_DT_I64: return (double)((int64_t *)t->data)[i];
	case PB_DT_I32: return ((int32_t *)t->data)[i];
	default: return 0;
	}
}

/* Element "i" of known integer tensor "t". */
static int64_t get_i(const struct pb_tensor *t, int64_t i)
{
	return t->dtype == PB_DT_I64 ? ((int64_t *)t->data)[i]
				     : ((int32_t *)t->data)[i];
}

/* Apply binary integer op "op" to "a" and "b"; 0 when undefined. */
static int64_t int_op(const char *op, int64_t a, int64_t b)
{
	if (!strcmp(op, "Add") || !strcmp(op, "Sum"))
		return a + b;
	if (!strcmp(op, "Sub"))
		return a - b;
	if (!strcmp(op, "Mul"))
		return a * b;
	if (!strcmp(op, "Div"))
		return b ? a / b : 0;
	if (!strcmp(op, "Max"))
		return a > b ? a : b;
	if (!strcmp(op, "Min"))
		return a < b ? a : b;
	if (!strcmp(op, "Neg"))
		return -a;
	if (!strcmp(op, "Abs"))
		return a < 0 ? -a : a;
	if (!strcmp(op, "Relu"))
		return a < 0 ? 0 : a;
	return 0;
}

/* Apply float op "op" to "a" (and "b"). */
static double float_op(const char *op, double a, double b)
{
	if (!strcmp(op, "Add") || !strcmp(op, "Sum"))
		return (float)a + (float)b;
	if (!strcmp(op, "Sub"))
		return (float)a - (float)b;
	if (!strcmp(op, "Mul"))
		return (float)a * (float)b;
	if (!strcmp(op, "Div"))
		return (float)a / (float)b;
	if (!strcmp(op, "Pow"))
		return powf(a, b);
	if (!strcmp(op, "Max"))
		return a > b ? a : b;
	if (!strcmp(op, "Min"))
		return a < b ? a : b;
	if (!strcmp(op, "Neg"))
		return -a;
	if (!strcmp(op, "Abs"))
		return fabs(a);
	if (!strcmp(op, "Relu"))
		return a < 0 ? 0 : a;
	if (!strcmp(op, "Sqrt"))
		return sqrtf(a);
	if (!strcmp(op, "Exp"))
		return expf(a);
	if (!strcmp(op, "Floor"))
		return floorf(a);
	if (!strcmp(op, "Ceil"))
		return ceilf(a);
	if (!strcmp(op, "Reciprocal"))
		return 1.0f / (float)a;
	return NAN;
}

/* Can "op" be folded over known inputs of type "dt"? */
static int foldable(const char *op, enum pb_dtype dt)
{
	static const char *iops = ",Add,Sub,Mul,Div,Max,Min,Sum,Neg,Abs,Relu,";
	static const char *fops = ",Add,Sub,Mul,Div,Pow,Max,Min,Sum,Neg,Abs,"
				  "Relu,Sqrt,Exp,Floor,Ceil,Reciprocal,";
	char key[32];
	snprintf(key, sizeof(key), ",%s,", op);
	if (dt == PB_DT_I64 || dt == PB_DT_I32)
		return strstr(iops, key) != NULL;
	if (dt == PB_DT_F32)
		return strstr(fops, key) != NULL;
	return 0;
}

/* Fold elementwise op "op" over the "nin" known inputs "in" into output
 * 0 of shape "out". */
static int fold_ew(struct imp *s, const char *op, int nin, struct val **in,
		   const struct shape *out)
{
	struct pb_tensor *k[PB_IMP_MAXIN];
	for (int i = 0; i < nin; i++)
		if (!(k[i] = pb_imp_known(s, in[i])))
			return PB_ERR;
	enum pb_dtype dt = in[0]->dtype;
	struct pb_tensor *t = pb_imp_new_known(dt, out);
	if (!t)
		return pb_imp_node_error(s, "out of memory");
	int64_t n = pb_imp_numel(out);
	for (int64_t o = 0; o < n; o++) {
		int64_t j = pb_imp_bcast_index(out, &in[0]->sh, o);
		if (dt == PB_DT_F32) {
			double acc = get_f(k[0], j);
			if (nin == 1)
				acc = float_op(op, acc, 0);
			for (int i = 1; i < nin; i++)
				acc = float_op(op, acc, get_f(k[i],
					pb_imp_bcast_index(out, &in[i]->sh, o)));
			((float *)t->data)[o] = (float)acc;
		} else {
			int64_t acc = get_i(k[0], j);
			if (nin == 1)
				acc = int_op(op, acc, 0);
			for (int i = 1; i < nin; i++)
				acc = int_op(op, acc, get_i(k[i],
					pb_imp_bcast_index(out, &in[i]->sh, o)));
			if (dt == PB_DT_I64)
				((int64_t *)t->data)[o] = acc;
			else
				((int32_t *)t->data)[o] = (int32_t)acc;
		}
	}
	pb_imp_def_known(s, 0, t);
	return PB_OK;
}

/* Is "v" a known float32, float16 or bfloat16 scalar (one element)? Its
 * value into "*x". */
static int known_scalar(struct imp *s, struct val *v, double *x)
{
	if ((v->dtype != PB_DT_F32 && !pb_dtype_is_half(v->dtype)) ||
	    pb_imp_numel(&v->sh) != 1 || (!v->k && !v->init))
		return 0;
	struct pb_tensor *t = pb_imp_known(s, v);
	if (!t)
		return 0;
	*x = pb_imp_elem_get(t, 0);
	return 1;
}

struct name pb_imp_scalar_op(struct imp *s, const char *op, const char *a,
			     const char *b)
{
	struct name r = pb_imp_fresh(s);
	if (b)
		pb_imp_emit(s, "%s = %s %s, %s : f32", r.s, op, a, b);
	else
		pb_imp_emit(s, "%s = %s %s : f32", r.s, op, a);
	return r;
}

/* Emit a constant "x" inside the body and return it. */
static struct name cst(struct imp *s, double x)
{
	return pb_imp_scalar(s, x);
}

/* Emit the scalar body of elementwise op "e" over the block arguments
 * "a" ("n" of them; "expo" is Pow's known exponent when "has_expo").
 * Returns the value to yield. */
static struct name ew_body(struct imp *s, const struct ew *e,
			   const struct name *a, int n, int has_expo,
			   double expo)
{
	const char *op = e->name;
	struct name r = a[0];
	if (e->op[0] && e->arity != 1) {
		for (int i = 1; i < n; i++)
			r = pb_imp_scalar_op(s, e->op, r.s, a[i].s);
		return r;
	}
	if (e->op[0])
		return pb_imp_scalar_op(s, e->op, a[0].s, NULL);
	if (!strcmp(op, "Mean")) {
		for (int i = 1; i < n; i++)
			r = pb_imp_scalar_op(s, "arith.addf", r.s, a[i].s);
		return pb_imp_scalar_op(s, "arith.divf", r.s, cst(s, n).s);
	}
	if (!strcmp(op, "Pow")) {
		if (has_expo && expo == 1.0)
			return a[0];
		if (has_expo && expo == 2.0)
			return pb_imp_scalar_op(s, "arith.mulf", a[0].s, a[0].s);
		if (has_expo && expo == 3.0) {
			r = pb_imp_scalar_op(s, "arith.mulf", a[0].s, a[0].s);
			return pb_imp_scalar_op(s, "arith.mulf", r.s, a[0].s);
		}
		if (has_expo && expo == 0.5)
			return pb_imp_scalar_op(s, "math.sqrt", a[0].s, NULL);
		return pb_imp_scalar_op(s, "math.powf", a[0].s, a[1].s);
	}
	if (!strcmp(op, "Relu"))
		return pb_imp_scalar_op(s, "arith.maximumf", a[0].s, cst(s, 0).s);
	if (!strcmp(op, "LeakyRelu")) {
		struct name m = pb_imp_scalar_op(s, "arith.mulf", a[0].s,
			cst(s, pb_imp_attr_float(s, "alpha", 0.01f)).s);
		struct name c = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.cmpf ogt, %s, %s : f32", c.s,
			    a[0].s, cst(s, 0).s);
		r = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.select %s, %s, %s : f32", r.s, c.s,
			    a[0].s, m.s);
		return r;
	}
	if (!strcmp(op, "Sigmoid")) {
		struct name ng = pb_imp_scalar_op(s, "arith.negf", a[0].s, NULL);
		struct name ex = pb_imp_scalar_op(s, "math.exp", ng.s, NULL);
		struct name one = cst(s, 1);
		struct name den = pb_imp_scalar_op(s, "arith.addf", one.s, ex.s);
		return pb_imp_scalar_op(s, "arith.divf", one.s, den.s);
	}
	if (!strcmp(op, "HardSigmoid") || !strcmp(op, "HardSwish")) {
		int swish = !strcmp(op, "HardSwish");
		double al = swish ? 1.0 / 6 : pb_imp_attr_float(s, "alpha", 0.2f);
		double be = swish ? 0.5 : pb_imp_attr_float(s, "beta", 0.5f);
		r = pb_imp_scalar_op(s, "arith.mulf", a[0].s, cst(s, al).s);
		r = pb_imp_scalar_op(s, "arith.addf", r.s, cst(s, be).s);
		r = pb_imp_scalar_op(s, "arith.maximumf", r.s, cst(s, 0).s);
		r = pb_imp_scalar_op(s, "arith.minimumf", r.s, cst(s, 1).s);
		return swish ? pb_imp_scalar_op(s, "arith.mulf", a[0].s, r.s) : r;
	}
	if (!strcmp(op, "Clip")) {
		/* a[1], a[2]: min and max (bounds materialized by op_ew) */
		if (n > 1 && a[1].s[0])
			r = pb_imp_scalar_op(s, "arith.maximumf", r.s, a[1].s);
		if (n > 2 && a[2].s[0])
			r = pb_imp_scalar_op(s, "arith.minimumf", r.s, a[2].s);
		return r;
	}
	if (!strcmp(op, "PRelu") || !strcmp(op, "ThresholdedRelu")) {
		/* x < 0 ? slope * x : x;  x > alpha ? x : 0 */
		int th = !strcmp(op, "ThresholdedRelu");
		struct name c = pb_imp_fresh(s), alt;
		if (th) {
			struct name al = cst(s, pb_imp_attr_float(s, "alpha", 1));
			pb_imp_emit(s, "%s = arith.cmpf ogt, %s, %s : f32", c.s,
				    a[0].s, al.s);
			alt = cst(s, 0);
		} else {
			pb_imp_emit(s, "%s = arith.cmpf olt, %s, %s : f32", c.s,
				    a[0].s, cst(s, 0).s);
			alt = pb_imp_scalar_op(s, "arith.mulf", a[0].s, a[1].s);
		}
		r = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.select %s, %s, %s : f32", r.s, c.s,
			    th ? a[0].s : alt.s, th ? alt.s : a[0].s);
		return r;
	}
	if (!strcmp(op, "Sign")) {
		/* (x > 0) - (x < 0) */
		struct name z = cst(s, 0), p = pb_imp_fresh(s), n = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.cmpf ogt, %s, %s : f32", p.s, a[0].s,
			    z.s);
		pb_imp_emit(s, "%s = arith.cmpf olt, %s, %s : f32", n.s, a[0].s,
			    z.s);
		struct name pf = pb_imp_fresh(s), nf = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.uitofp %s : i1 to f32", pf.s, p.s);
		pb_imp_emit(s, "%s = arith.uitofp %s : i1 to f32", nf.s, n.s);
		return pb_imp_scalar_op(s, "arith.subf", pf.s, nf.s);
	}
	if (!strcmp(op, "Softsign")) {
		r = pb_imp_scalar_op(s, "math.absf", a[0].s, NULL);
		r = pb_imp_scalar_op(s, "arith.addf", r.s, cst(s, 1).s);
		return pb_imp_scalar_op(s, "arith.divf", a[0].s, r.s);
	}
	if (!strcmp(op, "Shrink")) {
		/* x < -l ? x + b : x > l ? x - b : 0 */
		double l = pb_imp_attr_float(s, "lambd", 0.5f);
		double b = pb_imp_attr_float(s, "bias", 0);
		struct name lo = pb_imp_fresh(s), hi = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.cmpf olt, %s, %s : f32", lo.s, a[0].s,
			    cst(s, -l).s);
		pb_imp_emit(s, "%s = arith.cmpf ogt, %s, %s : f32", hi.s, a[0].s,
			    cst(s, l).s);
		struct name up = pb_imp_scalar_op(s, "arith.addf", a[0].s, cst(s, b).s);
		struct name dn = pb_imp_scalar_op(s, "arith.subf", a[0].s, cst(s, b).s);
		struct name t = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.select %s, %s, %s : f32", t.s, hi.s,
			    dn.s, cst(s, 0).s);
		r = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.select %s, %s, %s : f32", r.s, lo.s,
			    up.s, t.s);
		return r;
	}
	if (!strcmp(op, "Celu")) {
		/* max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) */
		struct name al = cst(s, pb_imp_attr_float(s, "alpha", 1));
		struct name z = cst(s, 0);
		struct name q = pb_imp_scalar_op(s, "arith.divf", a[0].s, al.s);
		struct name e = pb_imp_scalar_op(s, "math.expm1", q.s, NULL);
		struct name m = pb_imp_scalar_op(s, "arith.mulf", al.s, e.s);
		struct name neg = pb_imp_scalar_op(s, "arith.minimumf", z.s, m.s);
		struct name pos = pb_imp_scalar_op(s, "arith.maximumf", z.s, a[0].s);
		return pb_imp_scalar_op(s, "arith.addf", pos.s, neg.s);
	}
	if (!strcmp(op, "Mish")) {
		/* x * tanh(log1p(exp(x))) */
		r = pb_imp_scalar_op(s, "math.exp", a[0].s, NULL);
		r = pb_imp_scalar_op(s, "math.log1p", r.s, NULL);
		r = pb_imp_scalar_op(s, "math.tanh", r.s, NULL);
		return pb_imp_scalar_op(s, "arith.mulf", a[0].s, r.s);
	}
	if (!strcmp(op, "Gelu")) {
		/* 0.5 x (1 + erf(x / sqrt 2)), or with approximate = "tanh"
		 * 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) */
		if (!strcmp(pb_imp_attr_str(s, "approximate", "none"), "tanh")) {
			r = pb_imp_scalar_op(s, "arith.mulf", a[0].s, a[0].s);
			r = pb_imp_scalar_op(s, "arith.mulf", r.s, a[0].s);
			r = pb_imp_scalar_op(s, "arith.mulf", r.s, cst(s, 0.044715).s);
			r = pb_imp_scalar_op(s, "arith.addf", r.s, a[0].s);
			r = pb_imp_scalar_op(s, "arith.mulf", r.s,
				      cst(s, sqrt(2 / M_PI)).s);
			r = pb_imp_scalar_op(s, "math.tanh", r.s, NULL);
		} else {
			r = pb_imp_scalar_op(s, "arith.mulf", a[0].s,
				      cst(s, 1 / sqrt(2.0)).s);
			r = pb_imp_scalar_op(s, "math.erf", r.s, NULL);
		}
		r = pb_imp_scalar_op(s, "arith.addf", r.s, cst(s, 1).s);
		r = pb_imp_scalar_op(s, "arith.mulf", r.s, a[0].s);
		return pb_imp_scalar_op(s, "arith.mulf", r.s, cst(s, 0.5).s);
	}
	if (!strcmp(op, "Reciprocal"))
		return pb_imp_scalar_op(s, "arith.divf", cst(s, 1).s, a[0].s);
	if (!strcmp(op, "Softplus")) {
		r = pb_imp_scalar_op(s, "math.exp", a[0].s, NULL);
		return pb_imp_scalar_op(s, "math.log1p", r.s, NULL);
	}
	if (!strcmp(op, "Elu") || !strcmp(op, "Selu")) {
		int selu = !strcmp(op, "Selu");
		double al = pb_imp_attr_float(s, "alpha",
					      selu ? 1.67326319217681884765625f
						   : 1.0f);
		double ga = pb_imp_attr_float(s, "gamma",
					      1.05070102214813232421875f);
		struct name ex = pb_imp_scalar_op(s, "math.expm1", a[0].s, NULL);
		struct name neg = pb_imp_scalar_op(s, "arith.mulf", ex.s, cst(s, al).s);
		struct name c = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.cmpf ogt, %s, %s : f32", c.s,
			    a[0].s, cst(s, 0).s);
		r = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = arith.select %s, %s, %s : f32", r.s, c.s,
			    a[0].s, neg.s);
		return selu ? pb_imp_scalar_op(s, "arith.mulf", r.s, cst(s, ga).s) : r;
	}
	return r;
}

/* Does "b" match "out" from dim "axis" on (legacy broadcasting of opset
 * < 7: b's dims are a run of out's, or 1)? */
static int legacy_ok(const struct shape *out, const struct shape *b, int axis)
{
	if (axis < 0 || axis + b->rank > out->rank)
		return 0;
	for (int j = 0; j < b->rank; j++)
		if (b->d[j] != 1 && b->d[j] != out->d[axis + j])
			return 0;
	return 1;
}

/* The map reading "b" aligned at dim "axis" of "out". */
static struct text legacy_map(const struct shape *out, const struct shape *b,
			      int axis)
{
	int res[PB_MAX_RANK];
	for (int j = 0; j < b->rank; j++)
		res[j] = b->d[j] == 1 && out->d[axis + j] != 1 ? -1 : axis + j;
	return pb_imp_map(out->rank, b->rank, res);
}

/* The arith op computing integer elementwise op "name" on type "dt" (the
 * unsigned form for unsigned "dt"; "" when it has its own body), or NULL
 * when there is none. */
static const char *int_ew_op(const char *name, enum pb_dtype dt)
{
	static const char *ops[][2] = {
		{"Add", "arith.addi"}, {"Sub", "arith.subi"},
		{"Mul", "arith.muli"}, {"Div", "arith.divsi"},
		{"Max", "arith.maxsi"}, {"Min", "arith.minsi"},
		{"Sum", "arith.addi"}, {"Neg", ""}, {"Abs", "math.absi"},
		{"Relu", ""}, {"Clip", ""},
	};
	static const char *uops[][2] = {
		{"Div", "arith.divui"}, {"Max", "arith.maxui"},
		{"Min", "arith.minui"}, {"Abs", ""},
	};
	for (size_t i = 0;
	     pb_imp_is_unsigned(dt) && i < sizeof(uops) / sizeof(*uops); i++)
		if (!strcmp(uops[i][0], name))
			return uops[i][1];
	for (size_t i = 0; i < sizeof(ops) / sizeof(*ops); i++)
		if (!strcmp(ops[i][0], name))
			return ops[i][1];
	return NULL;
}

/* Lower elementwise node "e" over the "nin" inputs "in" of one integer
 * type (see int_ew_op; Div truncates toward zero, as ONNX's integer Div
 * does), or of float64 (the ops of ew_ops with one MLIR op),
 * into one generic of shape "out". */
static int lower_ew_typed(struct imp *s, const struct ew *e, int nin,
			struct val **in, const struct shape *out, int legacy)
{
	enum pb_dtype dt = in[0]->dtype;
	const char *ins[PB_IMP_MAXIN], *el = pb_imp_elt(dt);
	const char *op = pb_imp_is_float(dt) ? e->op : int_ew_op(e->name, dt);
	struct shape in_sh[PB_IMP_MAXIN];
	struct text maps[PB_IMP_MAXIN];
	enum pb_dtype dts[PB_IMP_MAXIN];
	int pw = !strcmp(e->name, "Pow");
	int clip = !strcmp(e->name, "Clip") && !pb_imp_is_float(dt);
	int slot[PB_IMP_MAXIN], nrt = 0;
	for (int i = 0; i < nin; i++) {
		if (!in[i]) /* Clip's absent bounds */
			continue;
		/* Pow's exponent may be float32 or another integer type */
		if (in[i]->dtype != dt &&
		    !(pw && (in[i]->dtype == PB_DT_F32 ||
			     pb_imp_is_int(in[i]->dtype))))
			return pb_imp_node_error(s, "inputs of types %s and %s "
						 "differ", pb_dtype_name(dt),
						 pb_dtype_name(in[i]->dtype));
		if (!(ins[nrt] = pb_imp_use_dt(s, in[i])))
			return PB_ERR;
		in_sh[nrt] = in[i]->sh;
		maps[nrt] = i == 1 && legacy >= 0
				  ? legacy_map(out, &in[i]->sh, legacy)
				  : pb_imp_bcast_map(out, &in[i]->sh);
		dts[nrt] = in[i]->dtype;
		slot[i] = nrt++;
	}
	struct name init = pb_imp_empty_dt(s, out, dt);
	struct text omap = pb_imp_bcast_map(out, out);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', out->rank);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, out->rank, iters, nrt, ins, in_sh, dts,
			    maps, init.s, out, dt, &omap);
	struct name r = g.arg[0];
	if (clip) {
		/* max(x, min) then min(.., max), each bound when given */
		static const char *const bop[] = {NULL, "maxsi", "minsi"};
		for (int i = 1; i < nin && i < 3; i++) {
			if (!in[i])
				continue;
			struct name t = pb_imp_fresh(s);
			pb_imp_emit(s, "%s = arith.%s %s, %s : %s", t.s,
				    pb_imp_iop(dt, bop[i]), r.s,
				    g.arg[slot[i]].s, el);
			r = t;
		}
		nin = 1;
	} else if (pw && !pb_imp_is_float(dt)) {
		/* in float64, truncated back to the base's type */
		struct name x = pb_imp_convert(s, g.arg[0].s, dt, PB_DT_F64);
		struct name y = pb_imp_convert(s, g.arg[1].s, dts[1],
					       PB_DT_F64);
		struct name p = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = math.powf %s, %s : f64", p.s, x.s, y.s);
		r = pb_imp_convert(s, p.s, PB_DT_F64, dt);
		nin = 1;
	} else if (!pb_imp_is_float(dt) && (!strcmp(e->name, "Neg") ||
					    !strcmp(e->name, "Relu"))) {
		struct name z = pb_imp_scalar_dt(s, dt, 0);
		r = pb_imp_fresh(s);
		if (!strcmp(e->name, "Neg"))
			pb_imp_emit(s, "%s = arith.subi %s, %s : %s", r.s, z.s,
				    g.arg[0].s, el);
		else
			pb_imp_emit(s, "%s = arith.%s %s, %s : %s", r.s,
				    pb_imp_iop(dt, "maxsi"), g.arg[0].s, z.s,
				    el);
	} else if (!*op) { /* Abs of an unsigned value: itself */
		nin = 1;
	} else if (nin == 1) {
		r = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = %s %s : %s", r.s, op, g.arg[0].s, el);
	}
	for (int i = 1; i < nin; i++) {
		struct name t = pb_imp_fresh(s);
		pb_imp_emit(s, "%s = %s %s, %s : %s", t.s, op, r.s, g.arg[i].s,
			    el);
		r = t;
	}
	r = pb_imp_gen_end(s, &g, r.s);
	return pb_imp_def_ssa(s, r, dt, out);
}

/* Lower elementwise node "e" over the "nin" inputs "in" (NULL entries are
 * absent optional inputs) into one linalg.generic with broadcasting maps.
 * Known scalar inputs become constants in the body; all-known inputs are
 * folded. */
static int lower_ew(struct imp *s, const struct ew *e, int nin,
		    struct val **in, int legacy)
{
	struct shape out = in[0]->sh;
	int all_known = legacy < 0, nrt = 0;
	for (int i = 0; i < nin; i++) {
		if (!in[i])
			continue;
		if (i && strcmp(e->name, "Clip") && legacy < 0 &&
		    pb_imp_broadcast(s, &out, &in[i]->sh, &out))
			return PB_ERR;
		all_known &= pb_imp_fold_ok(in[i]);
	}
	if (legacy >= 0 && !legacy_ok(&out, &in[1]->sh, legacy))
		return pb_imp_node_error(s, "shape %s does not broadcast to %s "
					 "at axis %d", pb_imp_ty(&in[1]->sh).s,
					 pb_imp_ty(&out).s, legacy);
	if (all_known && foldable(e->name, in[0]->dtype) &&
	    pb_imp_numel(&out) <= PB_FOLD_MAX)
		return fold_ew(s, e->name, nin, in, &out);

	if (pb_imp_is_int(in[0]->dtype) &&
	    (int_ew_op(e->name, in[0]->dtype) || !strcmp(e->name, "Pow")))
		return lower_ew_typed(s, e, nin, in, &out, legacy);
	if (in[0]->dtype == PB_DT_F64 && e->op[0])
		return lower_ew_typed(s, e, nin, in, &out, legacy);
	/* float16 and bfloat16 compute in float32 inside the body and round
	 * the result once, as PyTorch does; a float32 tensor operand (not a
	 * known scalar) makes the result float32 */
	enum pb_dtype odt = PB_DT_UNDEFINED;
	const char *ins[PB_IMP_MAXIN];
	struct shape in_sh[PB_IMP_MAXIN];
	struct text maps[PB_IMP_MAXIN];
	enum pb_dtype dts[PB_IMP_MAXIN];
	int is_scalar[PB_IMP_MAXIN] = {0}, slot[PB_IMP_MAXIN];
	double sval[PB_IMP_MAXIN];
	for (int i = 0; i < nin; i++) {
		if (!in[i])
			continue;
		/* Pow's exponent may be an integer */
		int int_expo = i == 1 && !strcmp(e->name, "Pow") &&
			       pb_imp_is_int(in[i]->dtype);
		if (in[i]->dtype != PB_DT_F32 &&
		    !pb_dtype_is_half(in[i]->dtype) && !int_expo)
			return pb_imp_node_error(s, "input '%s' has type %s: "
						 "only float32, float16 and "
						 "bfloat16 are supported",
						 in[i]->name,
						 pb_dtype_name(in[i]->dtype));
		if (known_scalar(s, in[i], &sval[i])) {
			is_scalar[i] = 1;
			continue;
		}
		/* Pow's result has the base's type */
		int expo = i == 1 && !strcmp(e->name, "Pow");
		if (!expo && (!odt || in[i]->dtype == PB_DT_F32))
			odt = in[i]->dtype;
		if (!(ins[nrt] = pb_imp_use_dt(s, in[i])))
			return PB_ERR;
		in_sh[nrt] = in[i]->sh;
		dts[nrt] = in[i]->dtype;
		maps[nrt] = i == 1 && legacy >= 0
				    ? legacy_map(&out, &in[i]->sh, legacy)
				    : pb_imp_bcast_map(&out, &in[i]->sh);
		slot[i] = nrt++;
	}
	if (!odt) /* only known scalars: the base's type */
		odt = pb_dtype_is_half(in[0]->dtype) ? in[0]->dtype : PB_DT_F32;
	struct name init = pb_imp_empty_dt(s, &out, odt);
	struct text omap = pb_imp_bcast_map(&out, &out);
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', out.rank);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, out.rank, iters, nrt, ins, in_sh, dts,
			    maps, init.s, &out, odt, &omap);
	struct name a[PB_IMP_MAXIN];
	for (int i = 0; i < nin; i++) {
		if (!in[i])
			a[i].s[0] = 0;
		else if (is_scalar[i])
			a[i] = cst(s, sval[i]);
		else
			a[i] = pb_imp_convert(s, g.arg[slot[i]].s,
					      in[i]->dtype, PB_DT_F32);
	}
	int has_expo = !strcmp(e->name, "Pow") && nin > 1 && is_scalar[1];
	struct name y = ew_body(s, e, a, nin, has_expo,
				has_expo ? sval[1] : 0);
	y = pb_imp_convert(s, y.s, PB_DT_F32, odt);
	struct name r = pb_imp_gen_end(s, &g, y.s);
	return pb_imp_def_ssa(s, r, odt, &out);
}

/* Elementwise ops (Add, Mul, Relu, ...; see ew_ops). */
static int op_ew(struct imp *s)
{
	const struct ew *e = find_ew(s->node->op_type);
	int nin = pb_imp_nin(s);
	struct val *in[PB_IMP_MAXIN];
	if (nin < 1 || nin > PB_IMP_MAXIN || (e->arity == 2 && nin != 2) ||
	    (e->arity == 1 && strcmp(e->name, "Clip") && nin != 1)) {
		if (!e->arity)
			return pb_imp_node_error(s, "expected 1 to %d inputs, "
						 "got %d", PB_IMP_MAXIN, nin);
		return pb_imp_node_error(s, "expected %d inputs, got %d",
					 e->arity, nin);
	}
	for (int i = 0; i < nin; i++)
		in[i] = pb_imp_in(s, i);
	const char *appr = pb_imp_attr_str(s, "approximate", "none");
	if (strcmp(appr, "none") && strcmp(appr, "tanh"))
		return pb_imp_node_error(s, "approximate '%s' is not supported",
					 appr);
	/* min and max were attributes of Clip before opset 11 */
	float flo = pb_imp_attr_float(s, "min", -INFINITY);
	float fhi = pb_imp_attr_float(s, "max", INFINITY);
	struct pb_tensor tlo = {.dtype = PB_DT_F32, .data = &flo, .nbytes = 4};
	struct pb_tensor thi = {.dtype = PB_DT_F32, .data = &fhi, .nbytes = 4};
	struct val lo = {.name = "min", .dtype = PB_DT_F32, .k = &tlo};
	struct val hi = {.name = "max", .dtype = PB_DT_F32, .k = &thi};
	if (!strcmp(e->name, "Clip") && s->opset < 11) {
		in[1] = &lo;
		in[2] = &hi;
		nin = 3;
	}
	/* before opset 7, B broadcasts only with broadcast=1, aligned at
	 * "axis" (default: the trailing dims); PRelu's slope per channel */
	int legacy = -1;
	if (s->opset < 7 && nin == 2 && e->arity == 2 && in[1]->sh.rank &&
	    (pb_imp_attr_int(s, "broadcast", 0) || !strcmp(e->name, "PRelu"))) {
		int64_t ax = pb_imp_attr_int(s, "axis", -1);
		if (!strcmp(e->name, "PRelu") && ax < 0)
			ax = in[1]->sh.rank == 1 && in[0]->sh.rank > 1 &&
			     in[1]->sh.d[0] != in[0]->sh.d[in[0]->sh.rank - 1]
				     ? 1 : -1;
		legacy = ax < 0 ? in[0]->sh.rank - in[1]->sh.rank : (int)ax;
	}
	return lower_ew(s, e, nin, in, legacy);
}

/* Emit "linalg.<named>" (matmul or batch_matmul) of "a" and "b" (of
 * element types "dt[0]" and "dt[1]": f16 and bf16 operands accumulate in
 * the f32 "init") into "out"; returns the result. */
static struct name named_contract(struct imp *s, const char *named,
				  const char *a, const struct shape *ash,
				  const char *b, const struct shape *bsh,
				  const enum pb_dtype *dt, const char *init,
				  const struct shape *out)
{
	struct name r = pb_imp_fresh(s);
	pb_imp_emit(s, "%s = linalg.%s ins(%s, %s : %s, %s) outs(%s : %s) -> %s",
		    r.s, named, a, b, pb_imp_ty_dt(ash, dt[0]).s,
		    pb_imp_ty_dt(bsh, dt[1]).s, init, pb_imp_ty(out).s,
		    pb_imp_ty(out).s);
	return r;
}

/* Emit a contraction as a linalg.generic: "ndims" loops "iters", inputs
 * "a" and "b" (element types "dt[0]", "dt[1]", extended to f32) through
 * maps "am" and "bm", accumulating into the f32 "init" through "om", each
 * product scaled by "alpha" unless it is 1. */
static struct name generic_contract(struct imp *s, int ndims,
				    const char *iters, const char *a,
				    const struct shape *ash,
				    const struct text *am, const char *b,
				    const struct shape *bsh,
				    const struct text *bm,
				    const enum pb_dtype *dt, const char *init,
				    const struct shape *out,
				    const struct text *om, double alpha)
{
	const char *ins[2] = {a, b};
	struct shape sh[2] = {*ash, *bsh};
	struct text maps[2] = {*am, *bm};
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, ndims, iters, 2, ins, sh, dt, maps, init,
			    out, PB_DT_F32, om);
	struct name x = pb_imp_convert(s, g.arg[0].s, dt[0], PB_DT_F32);
	struct name y = pb_imp_convert(s, g.arg[1].s, dt[1], PB_DT_F32);
	struct name p = pb_imp_scalar_op(s, "arith.mulf", x.s, y.s);
	if (alpha != 1.0)
		p = pb_imp_scalar_op(s, "arith.mulf", p.s, cst(s, alpha).s);
	struct name acc = pb_imp_scalar_op(s, "arith.addf", g.arg[2].s, p.s);
	return pb_imp_gen_end(s, &g, acc.s);
}

/* MatMul with NumPy semantics: 2-d x 2-d is linalg.matmul; a batch of
 * matrices times a matrix collapses the batch into rows; equal batches
 * are linalg.batch_matmul; the rest (1-d operands, broadcast batches) is
 * one linalg.generic. */
static int op_matmul(struct imp *s)
{
	struct val *av = pb_imp_in(s, 0), *bv = pb_imp_in(s, 1);
	if (!av || !bv)
		return pb_imp_node_error(s, "expected 2 inputs");
	struct shape A = av->sh, B = bv->sh, out;
	int ra = A.rank, rb = B.rank;
	if (!ra || !rb)
		return pb_imp_node_error(s, "operands must have rank >= 1");
	int64_t K = A.d[ra - 1], Kb = B.d[rb >= 2 ? rb - 2 : 0];
	if (K != Kb)
		return pb_imp_node_error(s, "inner dimensions %lld and %lld "
					 "differ", (long long)K, (long long)Kb);
	struct shape ba = {ra > 2 ? ra - 2 : 0, {0}},
		     bb = {rb > 2 ? rb - 2 : 0, {0}}, bo;
	memcpy(ba.d, A.d, sizeof(A.d[0]) * ba.rank);
	memcpy(bb.d, B.d, sizeof(B.d[0]) * bb.rank);
	if (pb_imp_broadcast(s, &ba, &bb, &bo))
		return PB_ERR;
	int nb = bo.rank, hm = ra >= 2, hn = rb >= 2;
	out = bo;
	if (hm)
		out.d[out.rank++] = A.d[ra - 2];
	if (hn)
		out.d[out.rank++] = B.d[rb - 1];
	enum pb_dtype dt[2];
	const char *a = pb_imp_use_operand(s, av, &dt[0]);
	const char *b = a ? pb_imp_use_operand(s, bv, &dt[1]) : NULL;
	if (!b)
		return PB_ERR;
	struct name r;
	int same_batch = ra == rb && ra >= 3 &&
			 !memcmp(ba.d, bb.d, sizeof(ba.d[0]) * ba.rank);
	if (ra == 2 && rb == 2) {
		struct name init = pb_imp_fill(s, &out, 0);
		r = named_contract(s, "matmul", a, &A, b, &B, dt, init.s, &out);
	} else if (ra >= 3 && rb == 2) {
		struct shape a2 = {2, {pb_imp_numel(&A) / K, K}};
		struct shape o2 = {2, {a2.d[0], B.d[1]}};
		struct name x = pb_imp_reshape_dt(s, a, &A, &a2, dt[0]);
		struct name init = pb_imp_fill(s, &o2, 0);
		r = named_contract(s, "matmul", x.s, &a2, b, &B, dt, init.s,
				   &o2);
		r = pb_imp_reshape(s, r.s, &o2, &out);
	} else if (same_batch) {
		int64_t nbatch = pb_imp_numel(&ba);
		struct shape a3 = {3, {nbatch, A.d[ra - 2], K}};
		struct shape b3 = {3, {nbatch, K, B.d[rb - 1]}};
		struct shape o3 = {3, {nbatch, A.d[ra - 2], B.d[rb - 1]}};
		struct name x = pb_imp_reshape_dt(s, a, &A, &a3, dt[0]);
		struct name y = pb_imp_reshape_dt(s, b, &B, &b3, dt[1]);
		struct name init = pb_imp_fill(s, &o3, 0);
		r = named_contract(s, "batch_matmul", x.s, &a3, y.s, &b3, dt,
				   init.s, &o3);
		r = pb_imp_reshape(s, r.s, &o3, &out);
	} else {
		/* loops: batch.., m?, n?, k */
		int nd = nb + hm + hn + 1, k = nd - 1, m = nb, n = nb + hm;
		int ares[PB_MAX_RANK], bres[PB_MAX_RANK], ores[PB_MAX_RANK];
		char iters[PB_MAX_RANK + 4];
		for (int i = 0; i < ba.rank; i++) {
			int o = i + nb - ba.rank;
			ares[i] = ba.d[i] == 1 && bo.d[o] != 1 ? -1 : o;
		}
		for (int i = 0; i < bb.rank; i++) {
			int o = i + nb - bb.rank;
			bres[i] = bb.d[i] == 1 && bo.d[o] != 1 ? -1 : o;
		}
		int na = ba.rank, nbr = bb.rank, no = 0;
		if (hm)
			ares[na++] = m;
		ares[na++] = k;
		bres[nbr++] = k;
		if (hn)
			bres[nbr++] = n;
		for (int i = 0; i < nb + hm + hn; i++)
			ores[no++] = i;
		memset(iters, 'p', nd);
		iters[k] = 'r';
		struct text am = pb_imp_map(nd, na, ares),
			    bm = pb_imp_map(nd, nbr, bres),
			    om = pb_imp_map(nd, no, ores);
		struct name init = pb_imp_fill(s, &out, 0);
		r = generic_contract(s, nd, iters, a, &A, &am, b, &B, &bm, dt,
				     init.s, &out, &om, 1.0);
	}
	return pb_imp_def_ssa(s, r, PB_DT_F32, &out);
}

/* Gemm: Y = alpha * A' * B' + beta * C with A' and B' optionally
 * transposed and C broadcast to [M, N]. With alpha = 1 the product
 * accumulates onto beta * C (or zeros); otherwise the bias is added by a
 * second generic. Untransposed operands use linalg.matmul. */
static int op_gemm(struct imp *s)
{
	struct val *av = pb_imp_in(s, 0), *bv = pb_imp_in(s, 1),
		   *cv = pb_imp_in(s, 2);
	int ta = pb_imp_attr_int(s, "transA", 0) != 0;
	int tb = pb_imp_attr_int(s, "transB", 0) != 0;
	double alpha = pb_imp_attr_float(s, "alpha", 1.0f);
	double beta = pb_imp_attr_float(s, "beta", 1.0f);
	if (!av || !bv || av->sh.rank != 2 || bv->sh.rank != 2)
		return pb_imp_node_error(s, "A and B must be 2-d");
	int64_t M = av->sh.d[ta], K = av->sh.d[!ta];
	int64_t Kb = bv->sh.d[tb], N = bv->sh.d[!tb];
	if (K != Kb)
		return pb_imp_node_error(s, "inner dimensions %lld and %lld "
					 "differ", (long long)K, (long long)Kb);
	struct shape out = {2, {M, N}};
	if (cv) {
		struct shape bc;
		if (pb_imp_broadcast(s, &out, &cv->sh, &bc))
			return PB_ERR;
		if (bc.rank != 2 || bc.d[0] != M || bc.d[1] != N)
			return pb_imp_node_error(s, "C of shape %s does not "
						 "broadcast to [%lld, %lld]",
						 pb_imp_ty(&cv->sh).s,
						 (long long)M, (long long)N);
	}
	enum pb_dtype dt[2];
	const char *a = pb_imp_use_operand(s, av, &dt[0]);
	const char *b = a ? pb_imp_use_operand(s, bv, &dt[1]) : NULL;
	if (!b)
		return PB_ERR;
	int use_c = cv && beta != 0.0;
	const char *c = NULL;
	if (use_c && !(c = pb_imp_use(s, cv)))
		return PB_ERR;
	struct text id2 = pb_imp_map(2, 2, (int[]){0, 1});
	struct name init;
	if (use_c && alpha == 1.0) {
		/* init = beta * broadcast(C) */
		struct text cm = pb_imp_bcast_map(&out, &cv->sh);
		struct name e = pb_imp_empty(s, &out);
		struct gen g;
		pb_imp_gen_begin(s, &g, 2, "pp", 1, &c, &cv->sh, &cm, e.s, &out,
				 &id2);
		struct name y = g.arg[0];
		if (beta != 1.0)
			y = pb_imp_scalar_op(s, "arith.mulf", y.s, cst(s, beta).s);
		init = pb_imp_gen_end(s, &g, y.s);
	} else {
		init = pb_imp_fill(s, &out, 0);
	}
	struct name r;
	if (!ta && !tb) {
		r = named_contract(s, "matmul", a, &av->sh, b, &bv->sh, dt,
				   init.s, &out);
		if (alpha != 1.0 && !use_c) {
			struct name e = pb_imp_empty(s, &out);
			struct gen g;
			const char *x = r.s;
			pb_imp_gen_begin(s, &g, 2, "pp", 1, &x, &out, &id2, e.s,
					 &out, &id2);
			struct name y = pb_imp_scalar_op(s, "arith.mulf", g.arg[0].s,
						  cst(s, alpha).s);
			r = pb_imp_gen_end(s, &g, y.s);
		}
	} else {
		/* loops (m, n, k) */
		struct text am = pb_imp_map(3, 2, ta ? (int[]){2, 0}
						     : (int[]){0, 2});
		struct text bm = pb_imp_map(3, 2, tb ? (int[]){1, 2}
						     : (int[]){2, 1});
		struct text om = pb_imp_map(3, 2, (int[]){0, 1});
		r = generic_contract(s, 3, "ppr", a, &av->sh, &am, b, &bv->sh,
				     &bm, dt, init.s, &out, &om,
				     use_c ? 1.0 : alpha);
	}
	if (use_c && alpha != 1.0) {
		/* r = alpha * (A' B') + beta * C */
		const char *ins[2] = {r.s, c};
		struct shape sh[2] = {out, cv->sh};
		struct text maps[2] = {id2, pb_imp_bcast_map(&out, &cv->sh)};
		struct name e = pb_imp_empty(s, &out);
		struct gen g;
		pb_imp_gen_begin(s, &g, 2, "pp", 2, ins, sh, maps, e.s, &out,
				 &id2);
		struct name x = pb_imp_scalar_op(s, "arith.mulf", g.arg[0].s,
					  cst(s, alpha).s);
		struct name y = g.arg[1];
		if (beta != 1.0)
			y = pb_imp_scalar_op(s, "arith.mulf", y.s, cst(s, beta).s);
		r = pb_imp_gen_end(s, &g, pb_imp_scalar_op(s, "arith.addf", x.s, y.s).s);
	}
	return pb_imp_def_ssa(s, r, PB_DT_F32, &out);
}

/* The identity map of rank "n" and the map dropping the dims in "red". */
static void reduce_maps(int n, unsigned red, struct text *id,
			struct text *proj, struct shape *full,
			struct shape *part)
{
	int all[PB_MAX_RANK], kept[PB_MAX_RANK], nk = 0;
	part->rank = 0;
	for (int i = 0; i < n; i++) {
		all[i] = i;
		if (!(red >> i & 1)) {
			kept[nk++] = i;
			part->d[part->rank++] = full->d[i];
		}
	}
	*id = pb_imp_map(n, n, all);
	*proj = pb_imp_map(n, nk, kept);
}

/* Emit "%r = <op> <a>[, <b>] : <dt>" for float type "dt" (f32 or f64). */
static struct name sop(struct imp *s, enum pb_dtype dt, const char *op,
		       const char *a, const char *b)
{
	struct name r = pb_imp_fresh(s);
	const char *el = pb_imp_elt(dt);
	if (b)
		pb_imp_emit(s, "%s = %s %s, %s : %s", r.s, op, a, b, el);
	else
		pb_imp_emit(s, "%s = %s %s : %s", r.s, op, a, el);
	return r;
}

/* The SSA tensor of reduction input "x" (float32, or float64 that the
 * reductions compute on in its own type) and its type into "*dt". */
static const char *reduce_use(struct imp *s, struct val *x,
			      enum pb_dtype *dt)
{
	*dt = x->dtype == PB_DT_F64 ? PB_DT_F64 : PB_DT_F32;
	return *dt == PB_DT_F64 ? pb_imp_use_dt(s, x) : pb_imp_use(s, x);
}

/* Reduce "x" over the dims set in "red" with "kind" (sum, mean, max, min,
 * prod, sumsquare, meansquare, l1, l2, logsum) into "*res" of
 * shape "*res_sh" (the reduced dims kept as 1 when "keep"), of x's type
 * (float32, or float64). */
int pb_imp_reduce(struct imp *s, struct val *x, unsigned red,
		  const char *kind, int keep, struct name *res,
		  struct shape *res_sh)
{
	struct shape full = x->sh, part;
	struct text id, proj;
	enum pb_dtype dt;
	const char *in = reduce_use(s, x, &dt);
	if (!in)
		return PB_ERR;
	reduce_maps(full.rank, red, &id, &proj, &full, &part);
	int64_t count = 1;
	char iters[PB_MAX_RANK + 1];
	for (int i = 0; i < full.rank; i++) {
		iters[i] = red >> i & 1 ? 'r' : 'p';
		if (red >> i & 1)
			count *= full.d[i];
	}
	int is_max = !strcmp(kind, "max"), is_min = !strcmp(kind, "min");
	int is_prod = !strcmp(kind, "prod");
	double start = is_max ? -INFINITY : is_min ? INFINITY : is_prod ? 1 : 0;
	struct name init = pb_imp_fill_dt(s, &part, dt, start);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, full.rank, iters, 1, &in, &full, &dt, &id,
			    init.s, &part, dt, &proj);
	struct name e = g.arg[0], y;
	int mean = !strcmp(kind, "mean") || !strcmp(kind, "meansquare");
	if (!strcmp(kind, "sumsquare") || !strcmp(kind, "l2") ||
	    !strcmp(kind, "meansquare"))
		e = sop(s, dt, "arith.mulf", e.s, e.s);
	else if (!strcmp(kind, "l1"))
		e = sop(s, dt, "math.absf", e.s, NULL);
	if (is_max)
		y = sop(s, dt, "arith.maximumf", e.s, g.arg[1].s);
	else if (is_min)
		y = sop(s, dt, "arith.minimumf", e.s, g.arg[1].s);
	else if (is_prod)
		y = sop(s, dt, "arith.mulf", e.s, g.arg[1].s);
	else
		y = sop(s, dt, "arith.addf", e.s, g.arg[1].s);
	struct name r = pb_imp_gen_end(s, &g, y.s);
	if (mean || !strcmp(kind, "l2") || !strcmp(kind, "logsum")) {
		struct name e2 = pb_imp_empty_dt(s, &part, dt);
		struct text pid = pb_imp_map(part.rank, part.rank,
					     (int[PB_MAX_RANK]){0, 1, 2, 3, 4, 5,
						     6, 7, 8, 9, 10, 11, 12,
						     13, 14, 15});
		char piters[PB_MAX_RANK + 1];
		memset(piters, 'p', part.rank);
		const char *rin = r.s;
		pb_imp_gen_begin_dt(s, &g, part.rank, piters, 1, &rin, &part,
				    &dt, &pid, e2.s, &part, dt, &pid);
		if (mean)
			y = sop(s, dt, "arith.divf", g.arg[0].s,
				pb_imp_scalar_dt(s, dt, (double)count).s);
		else if (!strcmp(kind, "logsum"))
			y = sop(s, dt, "math.log", g.arg[0].s, NULL);
		else
			y = sop(s, dt, "math.sqrt", g.arg[0].s, NULL);
		r = pb_imp_gen_end(s, &g, y.s);
	}
	*res_sh = part;
	if (keep) {
		*res_sh = full;
		for (int i = 0; i < full.rank; i++)
			if (red >> i & 1)
				res_sh->d[i] = 1;
		r = pb_imp_reshape_dt(s, r.s, &part, res_sh, dt);
	}
	*res = r;
	return PB_OK;
}

/* log(sum(exp(x))) over the dims "red" of "x", computed as m + log(sum(
 * exp(x - m))) with m the max (so that large inputs do not overflow):
 * the max reduction kept as 1s, one generic for exp(x - m), the sum and
 * a generic for m + log(sum). Result and shape as pb_imp_reduce's. */
static int log_sum_exp(struct imp *s, struct val *x, unsigned red, int keep,
		       struct name *res, struct shape *res_sh)
{
	struct name m;
	struct shape msh, full = x->sh;
	enum pb_dtype dt;
	if (pb_imp_reduce(s, x, red, "max", 1, &m, &msh))
		return PB_ERR;
	const char *ins[2] = {reduce_use(s, x, &dt), m.s};
	enum pb_dtype dts[2] = {dt, dt};
	struct shape shs[2] = {full, msh};
	struct text maps[2] = {pb_imp_bcast_map(&full, &full),
			       pb_imp_bcast_map(&full, &msh)};
	char iters[PB_MAX_RANK + 1];
	memset(iters, 'p', full.rank);
	struct name e = pb_imp_empty_dt(s, &full, dt);
	struct gen g;
	pb_imp_gen_begin_dt(s, &g, full.rank, iters, 2, ins, shs, dts, maps,
			    e.s, &full, dt, &maps[0]);
	struct name d = sop(s, dt, "arith.subf", g.arg[0].s, g.arg[1].s);
	struct name ex = pb_imp_gen_end(s, &g,
					sop(s, dt, "math.exp", d.s, NULL).s);
	/* the sum of exp(x - m), as a value of x's shape */
	struct val tmp = {.name = x->name, .dtype = dt, .sh = full,
			  .ssa = ex};
	struct name sum;
	if (pb_imp_reduce(s, &tmp, red, "sum", 1, &sum, &msh))
		return PB_ERR;
	const char *ins2[2] = {m.s, sum.s};
	struct shape shs2[2] = {msh, msh};
	struct text id = pb_imp_bcast_map(&msh, &msh), maps2[2] = {id, id};
	memset(iters, 'p', msh.rank);
	struct name e2 = pb_imp_empty_dt(s, &msh, dt);
	pb_imp_gen_begin_dt(s, &g, msh.rank, iters, 2, ins2, shs2, dts, maps2,
			    e2.s, &msh, dt, &id);
	struct name l = sop(s, dt, "math.log", g.arg[1].s, NULL);
	struct name r = pb_imp_gen_end(
		s, &g, sop(s, dt, "arith.addf", g.arg[0].s, l.s).s);
	*res_sh = msh;
	if (!keep) {
		res_sh->rank = 0;
		for (int i = 0; i < full.rank; i++)
			if (!(red >> i & 1))
				res_sh->d[res_sh->rank++] = full.d[i];
		r = pb_imp_reshape_dt(s, r.s, &msh, res_sh, dt);
	}
	*res = r;
	return PB_OK;
}

/* Does reducing a dim of size 1 with "kind" keep the values? */
static int runtime_axes_ok(const char *kind)
{
	return !strcmp(kind, "sum") || !strcmp(kind, "mean") ||
	       !strcmp(kind, "max") || !strcmp(kind, "min") ||
	       !strcmp(kind, "prod");
}

/* ReduceMean, ReduceSum, ReduceMax, ...: axes from the attribute (or the
 * second input: ReduceSum from opset 13, the others from 18), keepdims,
 * noop_with_empty_axes. */
static int op_reduce(struct imp *s)
{
	static const char *kinds[][2] = {
		{"ReduceMean", "mean"}, {"ReduceSum", "sum"},
		{"ReduceMax", "max"},   {"ReduceMin", "min"},
		{"ReduceProd", "prod"}, {"ReduceSumSquare", "sumsquare"},
		{"ReduceL1", "l1"},     {"ReduceL2", "l2"},
		{"ReduceLogSum", "logsum"}, {"ReduceLogSumExp", "logsumexp"},
	};
	const char *kind = NULL;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(*kinds); i++)
		if (!strcmp(kinds[i][0], s->node->op_type))
			kind = kinds[i][1];
	struct val *x = pb_imp_in(s, 0), *ax = pb_imp_in(s, 1);
	int64_t axes[PB_MAX_RANK];
	int nax = pb_imp_attr_ints(s, "axes", axes, PB_MAX_RANK);
	if (nax == -2)
		return PB_ERR;
	int keep = pb_imp_attr_int(s, "keepdims", 1) != 0;
	unsigned red = 0;
	/* axes given at run time: with keepdims, the output's declared shape
	 * has 1 where a dim was reduced; reducing a dim of size 1 keeps the
	 * values for these kinds, so the dims that shrink to 1 decide */
	struct shape decl;
	if (ax && !ax->k && !ax->init && keep && runtime_axes_ok(kind) &&
	    !pb_imp_declared_shape(s, s->node->output[0], &decl)) {
		if (decl.rank != x->sh.rank)
			return pb_imp_node_error(s, "the declared shape %s does "
						 "not keep the dims of %s",
						 pb_imp_ty(&decl).s,
						 pb_imp_ty(&x->sh).s);
		for (int i = 0; i < decl.rank; i++) {
			if (decl.d[i] != x->sh.d[i] && decl.d[i] != 1)
				return pb_imp_node_error(s, "the declared shape "
							 "%s is not a reduction "
							 "of %s",
							 pb_imp_ty(&decl).s,
							 pb_imp_ty(&x->sh).s);
			if (decl.d[i] != x->sh.d[i])
				red |= 1u << i;
		}
		if (!red)
			return pb_imp_alias(s, 0, x);
		nax = 0;
	} else if (ax && (nax = pb_imp_known_ints(s, ax, axes, PB_MAX_RANK,
						  "axes")) < 0) {
		return PB_ERR;
	}
	if (nax <= 0 && !red) {
		if (pb_imp_attr_int(s, "noop_with_empty_axes", 0)) {
			return pb_imp_alias(s, 0, x);
		}
		red = (1u << x->sh.rank) - 1;
	}
	for (int i = 0; i < nax; i++) {
		int a;
		if (pb_imp_axis(s, axes[i], x->sh.rank, &a))
			return PB_ERR;
		red |= 1u << a;
	}
	struct name r;
	struct shape sh;
	if (!strcmp(kind, "logsumexp")) {
		if (log_sum_exp(s, x, red, keep, &r, &sh))
			return PB_ERR;
	} else if (pb_imp_reduce(s, x, red, kind, keep, &r, &sh)) {
		return PB_ERR;
	}
	return pb_imp_def_ssa(s, r, x->dtype == PB_DT_F64 ? PB_DT_F64
							 : PB_DT_F32, &sh);
}

/* Softmax and LogSoftmax over "axis": before opset 13 the input is seen
 * as 2-d [prod(d < axis), prod(d >= axis)] (axis default 1), from 13 on
 * only "axis" is reduced (default -1). Lowered as max-reduce, exp(x -
 * max), sum-reduce and divide (or subtract the log) generics. */
static int op_softmax(struct imp *s)
{
	struct val *x = pb_imp_in(s, 0);
	int log = !strcmp(s->node->op_type, "LogSoftmax");
	int old = s->opset < 13, axis;
	struct shape full = x->sh, part;
	if (!full.rank)
		return pb_imp_node_error(s, "input must have rank >= 1");
	if (pb_imp_axis(s, pb_imp_attr_int(s, "axis", old ? 1 : -1),
			full.rank, &axis))
		return PB_ERR;
	unsigned red = old ? ((1u << full.rank) - 1) & ~((1u << axis) - 1)
			   : 1u << axis;
	const char *in = pb_imp_use(s, x);
	if (!in)
		return PB_ERR;
	struct text id, proj;
	reduce_maps(full.rank, red, &id, &proj, &full, &part);
	char iters[PB_MAX_RANK + 1], piters[PB_MAX_RANK + 1];
	for (int i = 0; i < full.rank; i++) {
		iters[i] = red >> i & 1 ? 'r' : 'p';
		piters[i] = 'p';
	}
	struct gen g;
	/* max */
	struct name mx0 = pb_imp_fill(s, &part, -INFINITY);
	pb_imp_gen_begin(s, &g, full.rank, iters, 1, &in, &full, &id, mx0.s,
			 &part, &proj);
	struct name mx = pb_imp_gen_end(
		s, &g, pb_imp_scalar_op(s, "arith.maximumf", g.arg[0].s, g.arg[1].s).s);
	/* exp(x - max) */
	const char *ins[2] = {in, mx.s};
	struct shape shs[2] = {full, part};
	struct text maps[2] = {id, proj};
	struct name e0 = pb_imp_empty(s, &full);
	pb_imp_gen_begin(s, &g, full.rank, piters, 2, ins, shs, maps, e0.s,
			 &full, &id);
	struct name d = pb_imp_scalar_op(s, "arith.subf", g.arg[0].s, g.arg[1].s);
	struct name ex = pb_imp_gen_end(s, &g,
					pb_imp_scalar_op(s, "math.exp", d.s, NULL).s);
	/* sum */
	struct name s0 = pb_imp_fill(s, &part, 0);
	const char *exs = ex.s;
	pb_imp_gen_begin(s, &g, full.rank, iters, 1, &exs, &full, &id, s0.s,
			 &part, &proj);
	struct name sum = pb_imp_gen_end(
		s, &g, pb_imp_scalar_op(s, "arith.addf", g.arg[0].s, g.arg[1].s).s);
	/* exp / sum, or (x - max) - log(sum) */
	struct name y0 = pb_imp_empty(s, &full), r;
	if (log) {
		const char *ins3[3] = {in, mx.s, sum.s};
		struct shape sh3[3] = {full, part, part};
		struct text m3[3] = {id, proj, proj};
		pb_imp_gen_begin(s, &g, full.rank, piters, 3, ins3, sh3, m3,
				 y0.s, &full, &id);
		struct name t = pb_imp_scalar_op(s, "arith.subf", g.arg[0].s,
					  g.arg[1].s);
		struct name l = pb_imp_scalar_op(s, "math.log", g.arg[2].s, NULL);
		r = pb_imp_gen_end(s, &g,
				   pb_imp_scalar_op(s, "arith.subf", t.s, l.s).s);
	} else {
		ins[0] = ex.s;
		ins[1] = sum.s;
		pb_imp_gen_begin(s, &g, full.rank, piters, 2, ins, shs, maps,
				 y0.s, &full, &id);
		r = pb_imp_gen_end(
			s, &g,
			pb_imp_scalar_op(s, "arith.divf", g.arg[0].s, g.arg[1].s).s);
	}
	return pb_imp_def_ssa(s, r, PB_DT_F32, &full);
}

#define EW(n, since, until, attrs) {n, op_ew, attrs, since, until, 0}
#define LEGACY "axis,broadcast,consumed_inputs"
#define RED(n) {n, op_reduce, "axes,keepdims,noop_with_empty_axes", 1, 0, \
		 PB_IMP_WIDEN}
const struct pb_imp_op pb_imp_ops_math[] = {
	EW("Add", 1, 0, LEGACY), EW("Sub", 1, 0, LEGACY),
	EW("Mul", 1, 0, LEGACY), EW("Div", 1, 0, LEGACY),
	EW("Pow", 1, 0, LEGACY), EW("Max", 1, 0, ""), EW("Min", 1, 0, ""),
	EW("Sum", 1, 0, ""), EW("Mean", 1, 0, ""), EW("Relu", 1, 0, ""),
	EW("LeakyRelu", 1, 0, "alpha"), EW("Sigmoid", 1, 0, ""),
	EW("HardSigmoid", 1, 0, "alpha,beta"), EW("HardSwish", 14, 0, ""),
	EW("Clip", 1, 0, "min,max"), EW("Sqrt", 1, 0, ""), EW("Exp", 1, 0, ""),
	EW("Log", 1, 0, ""), EW("Tanh", 1, 0, ""), EW("Erf", 9, 0, ""),
	EW("Neg", 1, 0, ""), EW("Abs", 1, 0, ""), EW("Floor", 1, 0, ""),
	EW("Ceil", 1, 0, ""), EW("Reciprocal", 1, 0, ""),
	EW("Softplus", 1, 0, ""), EW("Elu", 1, 0, "alpha"),
	EW("Selu", 1, 0, "alpha,gamma"), EW("Sin", 7, 0, ""),
	EW("Cos", 7, 0, ""), EW("Tan", 7, 0, ""), EW("Sinh", 9, 0, ""),
	EW("Cosh", 9, 0, ""), EW("Asin", 7, 0, ""), EW("Acos", 7, 0, ""),
	EW("Atan", 7, 0, ""), EW("Asinh", 9, 0, ""), EW("Acosh", 9, 0, ""),
	EW("Atanh", 9, 0, ""), EW("Round", 11, 0, ""), EW("Sign", 9, 0, ""),
	EW("Softsign", 1, 0, ""), EW("ThresholdedRelu", 10, 0, "alpha"),
	EW("Shrink", 9, 0, "bias,lambd"), EW("Celu", 12, 0, "alpha"),
	EW("Mish", 18, 0, ""), EW("PRelu", 1, 0, ""),
	EW("Gelu", 20, 0, "approximate"),
	{"MatMul", op_matmul, "", 1, 0, PB_IMP_WIDEN},
	{"Gemm", op_gemm, "alpha,beta,broadcast,transA,transB", 1, 0, PB_IMP_WIDEN},
	RED("ReduceMean"), RED("ReduceSum"), RED("ReduceMax"),
	RED("ReduceMin"), RED("ReduceProd"), RED("ReduceSumSquare"),
	RED("ReduceL1"), RED("ReduceL2"), RED("ReduceLogSum"),
	RED("ReduceLogSumExp"),
	{"Softmax", op_softmax, "axis", 1, 0, PB_IMP_WIDEN},
	{"LogSoftmax", op_softmax, "axis", 1, 0, PB_IMP_WIDEN},
	{NULL, NULL, NULL, 0, 0, 0},
};
