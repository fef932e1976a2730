/* The attention nest of pb-fuse (--fuse-attention, lib/fuse/attention.c)
 * in the kernel model: its roles, read back from the nest alone, so that
 * pb-tile can leave it to pb-mma and pb-mma can put both of its products
 * on tensor cores (docs/kernel-model.md, "Attention").
 *
 * The nest is a band over the rows r (batch dimensions and the query
 * rows i) whose body is FlashAttention's recurrence:
 *
 *     m[] = -inf; l[] = 0; for e: acc[e] = 0
 *     for j = 0 to NK:                                    (jloop)
 *       s[] = 0; for d = 0 to D: s[] += Q[..i..d] * K[..j..d]   (dloop)
 *       x = s[] (* c or / c) (+ mask[..r..j], maybe widened,
 *           or cond[..r..j] ? x : fill, either way round)
 *       mn = max(x, m[])
 *       k = mn == -inf ? 0 : mn; a = exp(m[] - k); p = exp(x - k)
 *       l[] = l[] * a + p
 *       for e = 0 to E: acc[e] = acc[e] * a + p * V[..j..e]     (eloop)
 *       m[] = mn
 *     for e = 0 to E: O[..i..e] = acc[e] / l[]                   (oloop)
 *
 * Each operand may be widened (arith.extf) after its load: f16 or bf16
 * data. The matcher checks this form operation by operation: it is the
 * contract between pb-fuse and the mapping stages, and pb-mma rewrites
 * the nest from the roles alone. */
#include <math.h>
#include <string.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "ir/contract.h"
#include "kernel/kernel.h"
#include "target/target.h"

static const char not_attention[] = "not an attention nest";

/* The counter of loop "loop". */
static MlirValue iv_of(MlirOperation loop)
{
	return mlirBlockGetArgument(
		mlirRegionGetFirstBlock(mlirOperationGetRegion(loop, 0)), 0);
}

/* The body of loop "loop". */
static MlirBlock body_of(MlirOperation loop)
{
	return mlirRegionGetFirstBlock(mlirOperationGetRegion(loop, 0));
}

/* The trip count of affine.for "loop" from 0 by 1 without results, or
 * -1. */
static int64_t trip(MlirOperation loop)
{
	int64_t lb, ub;
	if (!pb_ir_op_is(loop, "affine.for") ||
	    mlirOperationGetNumResults(loop) ||
	    pb_ir_const_map(loop, "lowerBoundMap", 1, &lb) ||
	    pb_ir_const_map(loop, "upperBoundMap", 1, &ub) || lb != 0 ||
	    mlirIntegerAttrGetValueInt(pb_ir_attr(loop, "step")) != 1)
		return -1;
	return ub;
}

/* The role of index value "v" in the attention nest "user": a band
 * dimension, the counter of the key, head or value loop, or
 * PB_KERNEL_SUB_NONE. */
static int role_of(const void *user, MlirValue v)
{
	const struct pb_kernel_attention *a = user;
	MlirOperation loops[3] = {a->jloop, a->dloop, a->eloop};
	static const int roles[3] = {PB_KERNEL_ATT_J, PB_KERNEL_ATT_D,
				     PB_KERNEL_ATT_E};
	for (int d = 0; d < a->b.n; d++)
		if (mlirValueEqual(v, a->b.iv[d]))
			return d;
	for (int k = 0; k < 3; k++)
		if (!mlirOperationIsNull(loops[k]) &&
		    mlirValueEqual(v, iv_of(loops[k])))
			return roles[k];
	return PB_KERNEL_SUB_NONE;
}

/* The access "op" (affine.load or affine.store) of "a" into "x"; 0 when
 * a subscript is not a role or a constant. */
static int access_of(const struct pb_kernel_attention *a, MlirOperation op,
		     struct pb_kernel_access *x)
{
	return pb_kernel_access_parse(op, role_of, a, x);
}

/* How often role "d" subscripts "x". */
static int uses(const struct pb_kernel_access *x, int d)
{
	int n = 0;
	for (int r = 0; r < x->rank; r++)
		n += x->sub[r] == d;
	return n;
}

/* Is "v" defined outside the band of "a" (a kernel argument or a buffer
 * of the kernel's own)? */
static int outside(const struct pb_kernel_attention *a, MlirValue v)
{
	return !pb_ir_defined_in(v, a->b.root);
}

/* The names of the operations from "*op" on match "pat", NULL-terminated;
 * an entry "?name" is optional. The operations matched into "ops" (null
 * where an optional one is absent), "*op" moved past them; left where it
 * was when they do not match. The terminator of "block" matches nothing. */
static int sequence_at(MlirBlock block, MlirOperation *op,
		       const char *const *pat, MlirOperation *ops)
{
	MlirOperation cur = *op;
	for (int k = 0; pat[k]; k++) {
		int opt = pat[k][0] == '?';
		const char *name = pat[k] + opt;
		ops[k] = (MlirOperation){NULL};
		if (mlirOperationIsNull(cur) ||
		    mlirOperationEqual(cur, mlirBlockGetTerminator(block)) ||
		    !pb_ir_op_is(cur, name)) {
			if (opt)
				continue;
			return 0;
		}
		ops[k] = cur;
		cur = mlirOperationGetNextInBlock(cur);
	}
	*op = cur;
	return 1;
}

/* The names of the operations of "block" (without its terminator) match
 * "pat" (sequence_at), all of them. */
static int sequence(MlirBlock block, const char *const *pat,
		    MlirOperation *ops)
{
	MlirOperation op = mlirBlockGetFirstOperation(block);
	return sequence_at(block, &op, pat, ops) &&
	       mlirOperationEqual(op, mlirBlockGetTerminator(block));
}

/* The value of "v", a float arith.constant, into "*c". */
static int float_constant(MlirValue v, double *c)
{
	if (!mlirValueIsAOpResult(v) ||
	    !pb_ir_op_is(mlirOpResultGetOwner(v), "arith.constant"))
		return 0;
	MlirAttribute at = pb_ir_attr(mlirOpResultGetOwner(v), "value");
	if (!mlirAttributeIsAFloat(at))
		return 0;
	*c = mlirFloatAttrGetValueDouble(at);
	return 1;
}

/* Is "v" the result of operation "op"? */
static int is_result(MlirValue v, MlirOperation op)
{
	return !mlirOperationIsNull(op) && mlirValueIsAOpResult(v) &&
	       mlirOperationEqual(mlirOpResultGetOwner(v), op);
}

/* The load of an operand, "ld", and its widening "ext" (or null): does
 * "v" come from them? */
static int loaded(MlirValue v, MlirOperation ld, MlirOperation ext)
{
	return mlirOperationIsNull(ext) ? is_result(v, ld)
					: is_result(v, ext) &&
						  is_result(mlirOperationGetOperand(
								    ext, 0),
							    ld);
}

/* The update of a running sum "acc[..] += x * y" in loop body "body",
 * the two loads "ld[0..1]" of x and y (the operands of the product in
 * either order), into "ops": load acc, load, ?extf, load, ?extf, mulf,
 * addf, store acc. */
static int update(MlirBlock body, MlirOperation *ops, MlirOperation *ld)
{
	static const char *const pat[] = {
		"affine.load", "affine.load", "?arith.extf", "affine.load",
		"?arith.extf", "arith.mulf",  "arith.addf",  "affine.store",
		NULL};
	if (!sequence(body, pat, ops))
		return 0;
	MlirOperation mul = ops[5], add = ops[6];
	MlirValue x = mlirOperationGetOperand(mul, 0);
	MlirValue y = mlirOperationGetOperand(mul, 1);
	int swap = !loaded(x, ops[1], ops[2]);
	if (swap) {
		MlirValue t = x;
		x = y;
		y = t;
	}
	ld[0] = ops[1];
	ld[1] = ops[3];
	return loaded(x, ops[1], ops[2]) && loaded(y, ops[3], ops[4]) &&
	       is_result(mlirOperationGetOperand(add, 0), ops[0]) &&
	       is_result(mlirOperationGetOperand(add, 1), mul) &&
	       is_result(mlirOperationGetOperand(ops[7], 0), add) &&
	       mlirValueEqual(mlirOperationGetOperand(ops[0], 0),
			      mlirOperationGetOperand(ops[7], 1));
}

/* The element type of the load "ld" widened by "ext" (or not). */
static MlirType data_type(MlirOperation ld)
{
	return mlirValueGetType(mlirOperationGetResult(ld, 0));
}

/* Is mask "mk" of "a" read at [0.., query row, key] and marked "name"
 * (pb.causal or pb.future, ir/contract.h)? Its offset into *c. */
static int causal_mark(const struct pb_kernel_attention *a,
		       const struct pb_kernel_att_mask *mk, const char *name,
		       int64_t *c)
{
	const struct pb_kernel_access *m = &mk->mask;
	MlirAttribute at = pb_ir_attr(m->op, name);
	int r = m->rank;
	if (mlirAttributeIsNull(at) || !mlirAttributeIsAInteger(at) || r < 2 ||
	    m->sub[r - 1] != PB_KERNEL_ATT_J || m->sub[r - 2] != a->m)
		return 0;
	for (int k = 0; k + 2 < r; k++)
		if (m->sub[k] != PB_KERNEL_SUB_CST || m->cst[k])
			return 0;
	*c = mlirIntegerAttrGetValueInt(at);
	return *c >= 0;
}

/* The operations of the two kinds of masks. */
static const char *const add_pat[] = {"affine.load", "?arith.extf",
				      "arith.addf", NULL};
static const char *const where_pat[] = {"affine.load", "?affine.load",
					"?arith.extf", "arith.select", NULL};

/* The mask after "*op" in "body", on the scores "*x": x + mask[..] (load,
 * ?extf, addf) or cond[..] ? x : fill (load cond, ?load fill, ?its
 * widening, select; either way round), subscripts the band's and the
 * key's. Into "mk", "*op" and "*x" moved past it; 0 when there is none. */
static int match_mask(struct pb_kernel_attention *a, MlirBlock body,
		      MlirOperation *op, MlirValue *x,
		      struct pb_kernel_att_mask *mk)
{
	MlirOperation m[4], at = *op;
	memset(mk, 0, sizeof(*mk));
	if (sequence_at(body, &at, add_pat, m)) {
		mk->kind = PB_KERNEL_ATT_ADD;
		if (!mlirValueEqual(mlirOperationGetOperand(m[2], 0), *x) ||
		    !loaded(mlirOperationGetOperand(m[2], 1), m[0], m[1]))
			return 0;
	} else if (sequence_at(body, &at, where_pat, m)) {
		mk->kind = PB_KERNEL_ATT_WHERE;
		/* the fill's widening, if any, goes with its load */
		mk->fill_ext = m[2];
		m[2] = m[3];
		MlirValue c = mlirOperationGetOperand(m[2], 1);
		mk->where_true = mlirValueEqual(c, *x);
		if (mk->where_true)
			c = mlirOperationGetOperand(m[2], 2);
		else if (!mlirValueEqual(mlirOperationGetOperand(m[2], 2), *x))
			return 0;
		mk->fillv = c;
		if (!is_result(mlirOperationGetOperand(m[2], 0), m[0]) ||
		    (mlirOperationIsNull(m[1])
			     ? !outside(a, c) || !mlirOperationIsNull(mk->fill_ext)
			     : !loaded(c, m[1], mk->fill_ext) ||
				       !access_of(a, m[1], &mk->fill) ||
				       !outside(a, mk->fill.mem)))
			return 0;
	} else {
		return 0;
	}
	if (!access_of(a, m[0], &mk->mask) || !outside(a, mk->mask.mem))
		return 0;
	for (int r = 0; r < mk->mask.rank; r++)
		if (mk->mask.sub[r] == PB_KERNEL_ATT_D ||
		    mk->mask.sub[r] == PB_KERNEL_ATT_E)
			return 0;
	*x = mlirOperationGetResult(m[2], 0);
	*op = at;
	return 1;
}

/* Is mask "mk" of "a" a causal one: -inf (or what acts as -inf) for the
 * keys past query row + c, the scores unchanged at and before? Its c
 * into *c. An additive mask marked pb.causal; or a Where that keeps the
 * scores where a condition marked pb.causal is true (GPT-2's tril), or
 * where one marked pb.future is false (nanoGPT's masked_fill of
 * `bias == 0`), whose other value is a constant no kept score comes
 * near (-inf, or at most float16's lowest, -65504: finfo.min of the
 * model's type). Every row keeps keys 0 .. c, so exp(fill - max) is 0
 * in f32, as the -inf of the computed mask gives. */
static int causal(const struct pb_kernel_attention *a,
		  const struct pb_kernel_att_mask *mk, int64_t *c)
{
	double f;
	if (mk->kind == PB_KERNEL_ATT_ADD)
		return causal_mark(a, mk, PB_ATTR_CAUSAL, c);
	if (!mlirOperationIsNull(mk->fill.op) ||
	    !float_constant(mk->fillv, &f) || f > -65504.0)
		return 0;
	return mk->where_true ? causal_mark(a, mk, PB_ATTR_CAUSAL, c)
			      : causal_mark(a, mk, PB_ATTR_FUTURE, c);
}

/* Is mask "mk" -inf or what keeps -inf: a constant -inf as a Where's
 * other value, or an additive mask (-inf + m is -inf for every m but
 * +inf)? */
static int keeps_ninf(const struct pb_kernel_att_mask *mk)
{
	double f;
	return mk->kind == PB_KERNEL_ATT_ADD ||
	       (mlirOperationIsNull(mk->fill.op) &&
		float_constant(mk->fillv, &f) && isinf(f) && f < 0);
}

/* Can the masks of "a" be computed as one causal mask (causal()) whose
 * key tiles past the diagonal are skipped? The only mask; or, among
 * several, one that gives -inf exactly (additive, or a Where whose
 * other value is -inf: a finite one counts as -inf only where every
 * row keeps a key) followed by masks that keep -inf (keeps_ninf): the
 * scores it hides are -inf whatever the others do, the others are
 * applied first and it last. Its index into *u, its c into *c. */
static int causal_of(const struct pb_kernel_attention *a, int *u, int64_t *c)
{
	for (*u = 0; *u < a->nmask; ++*u) {
		if (!causal(a, &a->mk[*u], c))
			continue;
		if (a->nmask == 1)
			return 1;
		if (!keeps_ninf(&a->mk[*u]))
			return 0;
		for (int v = *u + 1; v < a->nmask; v++)
			if (!keeps_ninf(&a->mk[v]))
				return 0;
		return 1;
	}
	return 0;
}

/* The body of the key loop: the score's reduction (dloop) and scaling,
 * the masks, the online softmax, the value loop (eloop). */
static int match_keys(struct pb_kernel_attention *a)
{
	/* the scores and their scale, then the masks (match_mask), then
	   the online softmax: o[0 .. 4] and o[5 .. 18] */
	static const char *const pre[] = {
		"affine.store", "affine.for", "affine.load", "?arith.mulf",
		"?arith.divf", NULL};
	static const char *const post[] = {
		"affine.load", "arith.maximumf", "arith.cmpf", "arith.select",
		"arith.subf",  "math.exp",	 "arith.subf", "math.exp",
		"affine.load", "arith.mulf",	 "arith.addf", "affine.store",
		"affine.for",  "affine.store",	 NULL};
	MlirOperation o[24], u[8], ld[2];
	MlirBlock body = body_of(a->jloop);
	MlirOperation at = mlirBlockGetFirstOperation(body), mat;
	if (!sequence_at(body, &at, pre, o))
		return 0;
	/* the masks are matched below, once the scores are known */
	mat = at;
	a->nmask = 0;
	for (;;) {
		MlirOperation m[4];
		if (!sequence_at(body, &at, add_pat, m) &&
		    !sequence_at(body, &at, where_pat, m))
			break;
		if (++a->nmask > PB_KERNEL_ATT_MAXM)
			return 0;
	}
	if (!sequence_at(body, &at, post, o + 5) ||
	    !mlirOperationEqual(at, mlirBlockGetTerminator(body)))
		return 0;
	a->dloop = o[1];
	a->eloop = o[17];
	if ((a->d = trip(a->dloop)) < 1 || (a->e = trip(a->eloop)) < 1)
		return 0;
	/* s[] += Q * K over d */
	if (!update(body_of(a->dloop), u, ld))
		return 0;
	MlirValue s = mlirOperationGetOperand(u[0], 0);
	if (!mlirValueEqual(mlirOperationGetOperand(o[0], 1), s) ||
	    !mlirValueEqual(mlirOperationGetOperand(o[2], 0), s) ||
	    !access_of(a, ld[0], &a->q) || !access_of(a, ld[1], &a->k))
		return 0;
	/* K is the operand subscripted by the key */
	if (uses(&a->q, PB_KERNEL_ATT_J)) {
		struct pb_kernel_access t = a->q;
		a->q = a->k;
		a->k = t;
	}
	a->elt = data_type(a->q.op);
	if (!mlirTypeEqual(a->elt, data_type(a->k.op)))
		return 0;
	/* the scale: x = s * c or s / c */
	MlirOperation sc = mlirOperationIsNull(o[3]) ? o[4] : o[3];
	MlirValue x = mlirOperationGetResult(o[2], 0);
	a->scale = 1;
	a->divide = 0;
	if (!mlirOperationIsNull(o[3]) && !mlirOperationIsNull(o[4]))
		return 0;
	if (!mlirOperationIsNull(sc)) {
		if (!is_result(mlirOperationGetOperand(sc, 0), o[2]) ||
		    !float_constant(mlirOperationGetOperand(sc, 1), &a->scale))
			return 0;
		a->divide = !mlirOperationIsNull(o[4]);
		x = mlirOperationGetResult(sc, 0);
	}
	/* the masks, in order */
	for (int i = 0; i < a->nmask; i++)
		if (!match_mask(a, body, &mat, &x, &a->mk[i]))
			return 0;

	/* mn = max(x, m); k = mn == -inf ? 0 : mn; a = exp(m - k);
	   p = exp(x - k); l = l * a + p */
	MlirValue m = mlirOperationGetOperand(o[5], 0);
	MlirOperation mx = o[6], eq = o[7], sel = o[8];
	double ninf, zero;
	if (!float_constant(mlirOperationGetOperand(eq, 1), &ninf) ||
	    !isinf(ninf) || ninf > 0 ||
	    !float_constant(mlirOperationGetOperand(sel, 1), &zero) ||
	    zero != 0)
		return 0;
	a->mbuf = m;
	a->lbuf = mlirOperationGetOperand(o[13], 0);
	if (!mlirValueEqual(mlirOperationGetOperand(mx, 0), x) ||
	    !is_result(mlirOperationGetOperand(mx, 1), o[5]) ||
	    !is_result(mlirOperationGetOperand(eq, 0), mx) ||
	    !is_result(mlirOperationGetOperand(sel, 0), eq) ||
	    !is_result(mlirOperationGetOperand(sel, 2), mx) ||
	    !is_result(mlirOperationGetOperand(o[9], 0), o[5]) ||
	    !is_result(mlirOperationGetOperand(o[9], 1), sel) ||
	    !is_result(mlirOperationGetOperand(o[10], 0), o[9]) ||
	    !mlirValueEqual(mlirOperationGetOperand(o[11], 0), x) ||
	    !is_result(mlirOperationGetOperand(o[11], 1), sel) ||
	    !is_result(mlirOperationGetOperand(o[12], 0), o[11]) ||
	    !is_result(mlirOperationGetOperand(o[14], 0), o[13]) ||
	    !is_result(mlirOperationGetOperand(o[14], 1), o[10]) ||
	    !is_result(mlirOperationGetOperand(o[15], 0), o[14]) ||
	    !is_result(mlirOperationGetOperand(o[15], 1), o[12]) ||
	    !is_result(mlirOperationGetOperand(o[16], 0), o[15]) ||
	    !mlirValueEqual(mlirOperationGetOperand(o[16], 1),
			    mlirOperationGetOperand(o[13], 0)) ||
	    !is_result(mlirOperationGetOperand(o[18], 0), mx) ||
	    !mlirValueEqual(mlirOperationGetOperand(o[18], 1), m))
		return 0;
	/* acc[e] = acc[e] * a + p * V over e */
	static const char *const vpat[] = {
		"affine.load", "affine.load", "?arith.extf", "arith.mulf",
		"arith.mulf",  "arith.addf",  "affine.store", NULL};
	MlirOperation v[7];
	if (!sequence(body_of(a->eloop), vpat, v) ||
	    !access_of(a, v[1], &a->v) ||
	    !mlirTypeEqual(data_type(v[1]), a->elt) ||
	    !is_result(mlirOperationGetOperand(v[3], 0), o[12]) ||
	    !loaded(mlirOperationGetOperand(v[3], 1), v[1], v[2]) ||
	    !is_result(mlirOperationGetOperand(v[4], 0), v[0]) ||
	    !is_result(mlirOperationGetOperand(v[4], 1), o[10]) ||
	    !is_result(mlirOperationGetOperand(v[5], 0), v[4]) ||
	    !is_result(mlirOperationGetOperand(v[5], 1), v[3]) ||
	    !is_result(mlirOperationGetOperand(v[6], 0), v[5]) ||
	    !mlirValueEqual(mlirOperationGetOperand(v[6], 1),
			    mlirOperationGetOperand(v[0], 0)))
		return 0;
	a->accbuf = mlirOperationGetOperand(v[0], 0);
	return 1;
}

/* The output loop: O[..] = acc[e] / l[] (narrowed to O's type). */
static int match_out(struct pb_kernel_attention *a, MlirOperation lload)
{
	static const char *const pat[] = {"affine.load", "arith.divf",
					  "?arith.truncf", "affine.store",
					  NULL};
	MlirOperation o[4];
	if (trip(a->oloop) != a->e || !sequence(body_of(a->oloop), pat, o))
		return 0;
	MlirOperation last = mlirOperationIsNull(o[2]) ? o[1] : o[2];
	/* the value loop's counter is the output loop's here */
	MlirOperation eloop = a->eloop;
	a->eloop = a->oloop;
	int ok = access_of(a, o[3], &a->o);
	a->eloop = eloop;
	return ok && mlirValueEqual(mlirOperationGetOperand(o[0], 0),
				    a->accbuf) &&
	       mlirValueEqual(mlirOperationGetOperand(lload, 0), a->lbuf) &&
	       is_result(mlirOperationGetOperand(o[1], 0), o[0]) &&
	       is_result(mlirOperationGetOperand(o[1], 1), lload) &&
	       is_result(mlirOperationGetOperand(o[3], 0), last) &&
	       (mlirOperationIsNull(o[2]) || is_result(mlirOperationGetOperand(o[2], 0), o[1]));
}

/* Is "buf" given the constant "c" by one of the stores "st[0..n-1]"
 * (or, for "acc[e]", the store in loop "loop")? */
static int starts_at(MlirValue buf, double c, MlirOperation *st, int n)
{
	for (int i = 0; i < n; i++) {
		double v;
		MlirOperation s = st[i];
		if (pb_ir_op_is(s, "affine.for"))
			s = mlirBlockGetFirstOperation(body_of(s));
		if (pb_ir_op_is(s, "affine.store") &&
		    mlirValueEqual(mlirOperationGetOperand(s, 1), buf) &&
		    float_constant(mlirOperationGetOperand(s, 0), &v))
			return v == c || (isinf(c) && isinf(v) && (c < 0) == (v < 0));
	}
	return 0;
}

/* The roles of the subscripts: K by batch dimensions, the key and d;
 * V by batch dimensions, the key and e; Q by batch dimensions, the query
 * row and d; O by every band dimension once and e. The query row "m" is
 * the band dimension of Q and O that K does not use. */
static int match_roles(struct pb_kernel_attention *a)
{
	const struct pb_kernel_access *x[4] = {&a->q, &a->k, &a->v, &a->o};
	/* the query rows: a dimension of Q's and O's that K and V do not
	 * have; of several (K and V broadcast over the query heads of a
	 * group: grouped-query attention as [batch, kv heads, group, rows,
	 * d] tensors), the one innermost in Q's subscripts, the others
	 * batch dimensions */
	a->m = -1;
	int at = -1;
	for (int d = 0; d < a->b.n; d++) {
		if (uses(&a->o, d) != 1)
			return 0;
		if (!uses(&a->k, d) && !uses(&a->v, d)) {
			if (uses(&a->q, d) != 1)
				return 0;
			int r = 0;
			while (a->q.sub[r] != d)
				r++;
			if (r > at) {
				a->m = d;
				at = r;
			}
		}
	}
	if (a->m < 0 || uses(&a->k, a->m) || uses(&a->v, a->m))
		return 0;
	/* each operand's two fragment dimensions once */
	static const int need[4][2] = {{-4, PB_KERNEL_ATT_D},
				       {PB_KERNEL_ATT_J, PB_KERNEL_ATT_D},
				       {PB_KERNEL_ATT_J, PB_KERNEL_ATT_E},
				       {-4, PB_KERNEL_ATT_E}};
	for (int i = 0; i < 4; i++) {
		int r0 = need[i][0] == -4 ? a->m : need[i][0];
		if (uses(x[i], r0) != 1 || uses(x[i], need[i][1]) != 1)
			return 0;
		for (int r = 0; r < x[i]->rank; r++)
			if (x[i]->sub[r] <= PB_KERNEL_ATT_J &&
			    x[i]->sub[r] != r0 && x[i]->sub[r] != need[i][1])
				return 0;
		if (!outside(a, x[i]->mem))
			return 0;
	}
	return 1;
}

int pb_kernel_attention_of(MlirOperation nest, struct pb_kernel_attention *a,
			   const char **why)
{
	struct pb_ir_ops ops = {0};
	int ok = 0, i = 0;
	memset(a, 0, sizeof(*a));
	*why = not_attention;
	if (!pb_kernel_band_of(nest, &a->b) || a->b.n < 1)
		return 0;
	for (int d = 0; d < a->b.n; d++)
		if (a->b.lb[d] != 0 || a->b.step[d] != 1)
			return 0;
	pb_ir_block_ops(pb_kernel_band_body(&a->b), &ops);
	/* m, l, acc and s; their first values; the loops */
	for (; i < ops.n && pb_ir_op_is(ops.v[i], "memref.alloca"); i++)
		;
	int first = i;
	for (; i < ops.n && (pb_ir_op_is(ops.v[i], "affine.store") ||
			     pb_ir_op_is(ops.v[i], "arith.constant"));
	     i++)
		;
	/* acc[e] = 0, the key loop, l[], the output loop, the terminator */
	if (i + 5 != ops.n || trip(ops.v[i]) < 1 ||
	    !pb_ir_op_is(ops.v[i + 2], "affine.load"))
		goto out;
	a->jloop = ops.v[i + 1];
	a->oloop = ops.v[i + 3];
	if ((a->nk = trip(a->jloop)) < 1 || !match_keys(a) ||
	    trip(ops.v[i]) != a->e || !match_out(a, ops.v[i + 2]) ||
	    !match_roles(a) ||
	    !starts_at(a->mbuf, -INFINITY, ops.v + first, i - first) ||
	    !starts_at(a->lbuf, 0, ops.v + first, i - first) ||
	    !starts_at(a->accbuf, 0, ops.v + i, 1))
		goto out;
	if (!mlirTypeIsAF32(a->elt) && !mlirTypeIsAF16(a->elt) &&
	    !mlirTypeIsABF16(a->elt))
		goto out;
	a->causal = causal_of(a, &a->causal_u, &a->causal_off);
	ok = 1;
out:
	pb_ir_ops_free(&ops);
	return ok;
}

/* Can the tensor cores' step read mask "mk": an additive mask as
 * fragments of the scores' shape, a Where's condition as boolean ones,
 * its other value a constant broadcast to them? Else 0 with "*why". */
static int mask_operands(const struct pb_kernel_att_mask *mk,
			 const char **why)
{
	double fill;
	int scalar = !mlirOperationIsNull(mk->fill.op);
	MlirType et = mlirShapedTypeGetElementType(
		mlirValueGetType(mk->mask.mem));
	for (int r = 0; scalar && r < mk->fill.rank; r++)
		scalar = mk->fill.sub[r] == PB_KERNEL_SUB_CST;
	*why = "the Where's other value is neither a constant nor one value "
	       "read from a buffer";
	if (mk->kind == PB_KERNEL_ATT_WHERE &&
	    (mlirOperationIsNull(mk->fill.op) ? !float_constant(mk->fillv, &fill)
					      : !scalar))
		return 0;
	*why = "the Where's condition is not a boolean buffer";
	if (mk->kind == PB_KERNEL_ATT_WHERE && !mlirTypeIsAInteger(et))
		return 0;
	*why = "the additive mask is not a float buffer";
	return mk->kind != PB_KERNEL_ATT_ADD || mlirTypeIsAFloat(et);
}

int pb_kernel_attention_operands(struct pb_kernel_attention *a,
				 enum pb_precision p, const char **why)
{
	MlirContext ctx = mlirTypeGetContext(a->elt);
	a->tc = a->elt;
	if (!mlirTypeIsAF32(a->elt))
		return 1;
	*why = p == PB_PRECISION_TF32
		       ? "tf32 attention: P's fragments are not in the layout "
			 "of a tf32 A operand (fp16 or bf16 runs it on tensor "
			 "cores)"
		       : "f32 operands, computed exactly (--precision=fp16 or "
			 "bf16 runs attention on tensor cores)";
	if (p == PB_PRECISION_FP16)
		a->tc = mlirF16TypeGet(ctx);
	else if (p == PB_PRECISION_BF16)
		a->tc = mlirBF16TypeGet(ctx);
	else
		return 0;
	return 1;
}

/* The size of the buffer of "x" along its subscript of role "d". */
static int64_t extent_along(const struct pb_kernel_access *x, int d)
{
	for (int r = 0; r < x->rank; r++)
		if (x->sub[r] == d)
			return mlirShapedTypeGetDimSize(mlirValueGetType(x->mem),
							r);
	return -1;
}

/* The registers a thread of "a" mapped with "s" is estimated to need:
 * per row fragment its scores, output and Q fragments, 48 more (the
 * rows' values, addressing). */
static int attention_regs(const struct pb_kernel_attention *a,
			  const struct pb_kernel_attention_tiles *s)
{
	int64_t nd = (a->d + 15) / 16, ne = (a->e + 7) / 8, nf = s->bn / 8;
	return (int)(s->wm / 16 * (4 * nf + 4 * ne + 4 * nd) + 48);
}

int pb_kernel_attention_wgmma(const struct pb_target *t,
			      const struct pb_kernel_attention *a,
			      const char **why)
{
	int half = mlirTypeIsAF16(a->elt) || mlirTypeIsABF16(a->elt);
	*why = "the target has no wgmma (sm_90a)";
	if (!pb_target_has_wgmma(t))
		return 0;
	*why = "wgmma takes f16 or bf16 operands from shared memory";
	if (!half || !mlirTypeEqual(a->elt, a->tc))
		return 0;
	/* K's rows (keys) of D elements in one swizzle's width (at most
	   128 bytes) or in panels of 64, V's columns in panels of 16, 32
	   or 64 */
	*why = "the head dimension is not 16, 32 or a multiple of 64 up to "
	       "256";
	if (a->d != 16 && a->d != 32 && (a->d % 64 || a->d > 256))
		return 0;
	*why = "the value dimension is not a multiple of 16 up to 256";
	if (a->e % 16 || a->e > 256)
		return 0;
	*why = "K or V is not stored with the head or value dimension "
	       "innermost";
	if (a->k.sub[a->k.rank - 1] != PB_KERNEL_ATT_D ||
	    a->v.sub[a->v.rank - 1] != PB_KERNEL_ATT_E ||
	    extent_along(&a->k, PB_KERNEL_ATT_D) != a->d ||
	    extent_along(&a->v, PB_KERNEL_ATT_E) != a->e)
		return 0;
	*why = "fewer than 64 query rows";
	return a->b.extent[a->m] >= 64;
}

int pb_kernel_attention_tiles(const struct pb_target *t,
			      const struct pb_kernel_attention *a,
			      struct pb_kernel_attention_tiles *s,
			      const char **why)
{
	int64_t rows = a->b.extent[a->m];
	/* the head dimension in steps of 16: the last one reads zeros
	   past D, which both operands must end at */
	*why = "the head dimension is not a multiple of 16 and an operand "
	       "extends past it";
	if (a->d % 16 && (extent_along(&a->q, PB_KERNEL_ATT_D) != a->d ||
			  extent_along(&a->k, PB_KERNEL_ATT_D) != a->d))
		return 0;
	/* an additive mask is read as fragments of the scores' shape, a
	   Where's condition as boolean ones, its other value a constant
	   broadcast to them */
	for (int i = 0; i < a->nmask; i++)
		if (!mask_operands(&a->mk[i], why))
			return 0;
	/* keys past the last multiple of 16: the last step's scores past
	   them -inf (vector.create_mask), K and V read as zeros there, which
	   both must end at; an additive mask read masked past its end (its
	   values past NK, if any, do not count) */
	*why = "the number of keys is not a multiple of 16 and K or V "
	       "extends past them";
	if (a->nk % 16 && (extent_along(&a->k, PB_KERNEL_ATT_J) != a->nk ||
			   extent_along(&a->v, PB_KERNEL_ATT_J) != a->nk))
		return 0;
	*why = "the value dimension is over 256";
	if (a->e > 256 || a->d > 256)
		return 0;
	/* keys per step: 64 where they divide, so that the scores of a
	   step fill 8 fragments */
	int64_t bn = a->nk % 16 ? (a->nk > 32 ? 64 : a->nk > 16 ? 32 : 16)
		     : a->nk % 64 == 0 ? 64
		     : a->nk % 32 == 0 ? 32
				       : 16;
	/* on sm_90a, wgmma: a warpgroup of 4 warps, 16 rows each, owns 64
	   rows (the accumulator of one wgmma m64nNk16); two warpgroups
	   share each K and V tile where there are 128 rows. 128 keys a
	   step where they divide, there are 512 or more (long loops) and
	   d, e are at most 64 (S m64n128k16:
	   the step's own work, its barrier, copies and rows' reductions,
	   over twice the scores; 170 registers, one block of 8 warps an
	   SM, as Triton's 128x64 tile of 4 warps with 32 rows each) */
	const char *wwhy;
	if (pb_kernel_attention_wgmma(t, a, &wwhy)) {
		s->wm = 16;
		s->bn = a->nk % 128 == 0 && a->nk >= 512 && a->d <= 64 &&
				a->e <= 64
			? 128
			: bn;
		s->bm = rows >= 128 ? 128 : 64;
		return 1;
	}
	/* 16 or 32 query rows a warp (one or two row fragments: the
	   second doubles the mma each K and V fragment feeds), 2 or 4 warps
	   a block, not more rows than there are: the least predicted time
	   among those whose registers fit */
	static const int64_t cand[][2] = {{16, 4}, {32, 4}, {32, 2}, {16, 2}};
	double best = 0;
	int found = 0;
	*why = "no tile's registers fit";
	for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
		struct pb_kernel_attention_tiles x;
		struct pb_kernel_summary sum;
		int64_t warps = (rows + cand[i][0] - 1) / cand[i][0];
		x.wm = cand[i][0];
		x.bn = bn;
		x.bm = x.wm * (warps < cand[i][1] ? warps : cand[i][1]);
		if (attention_regs(a, &x) > 224)
			continue;
		pb_kernel_attention_predict(t, a, &x, &sum);
		if (!found || sum.predicted_s < best) {
			*s = x;
			best = sum.predicted_s;
			found = 1;
		}
	}
	return found;
}

int pb_kernel_attention_candidate(MlirOperation nest, const struct pb_target *t,
				  enum pb_precision p, const char **kind,
				  const char **why)
{
	struct pb_kernel_attention a;
	struct pb_kernel_attention_tiles s;
	if (!pb_kernel_attention_of(nest, &a, why) ||
	    !pb_kernel_attention_operands(&a, p, why) ||
	    !pb_kernel_attention_tiles(t, &a, &s, why))
		return 0;
	*kind = pb_kernel_mma_kind(a.tc);
	return 1;
}

/* The size in bytes of an element of buffer "mem". */
static int64_t elt_bytes(MlirValue mem)
{
	MlirType e = mlirShapedTypeGetElementType(mlirValueGetType(mem));
	return mlirTypeIsAFloat(e) ? mlirFloatTypeGetWidth(e) / 8 : 4;
}

void pb_kernel_attention_predict(const struct pb_target *t,
				 const struct pb_kernel_attention *a,
				 const struct pb_kernel_attention_tiles *s,
				 struct pb_kernel_summary *sum)
{
	int64_t rows = a->b.extent[a->m], batch = 1;
	for (int d = 0; d < a->b.n; d++)
		if (d != a->m)
			batch *= a->b.extent[d];
	int64_t nd = (a->d + 15) / 16, ne = (a->e + 7) / 8, nf = s->bn / 8;
	int64_t warps = s->bm / s->wm, blocks = (rows + s->bm - 1) / s->bm;
	pb_kernel_summary_init(sum);
	sum->grid = batch * blocks;
	sum->res.threads = (int)(32 * warps);
	/* S, the output, Q's fragments, the rows' values and addressing */
	sum->res.regs = attention_regs(a, s);
	sum->res.smem = 0;
	sum->tc = 1;
	pb_kernel_summary_occupancy(t, sum);
	/* a warp's step: m mma.sync, each holding the tensor pipe two issue
	   cycles, beside the softmax (about 35 instructions per score
	   fragment of each row fragment), the K and V fragment loads and
	   addressing (about 10 per score fragment, shared by the row
	   fragments): the SASS of a 64-key step of a head of 64, 16 rows a
	   warp, has 423 instructions for 64 mma; it takes the longer of the
	   tensor pipe and the issue slots */
	int64_t fm = s->wm / 16;
	double m = (double)(fm * (nf * nd + nf / 2 * ne));
	double other = (35.0 * (double)fm + 10.0) * (double)nf + 40.0;
	double eff = 2.0 * m / (2.0 * m > m + other ? 2.0 * m : m + other);
	double rate = mlirTypeIsABF16(a->tc) ? t->tc_bf16_flops
					     : t->tc_fp16_flops;
	sum->flops = 2.0 * (double)(batch * rows * a->nk) *
		     (double)(16 * nd + 8 * ne);
	/* the tensor cores compute the blocks' rows, masked ones too, an
	   SM its blocks one wave after another; fewer than 8 resident
	   warps an SM do not hide the pipeline's latency */
	int64_t per_sm = (sum->grid + t->sm_count - 1) / t->sm_count;
	int64_t resident = warps * (per_sm < sum->occ.blocks_per_sm
					    ? per_sm
					    : sum->occ.blocks_per_sm);
	/* causal: a block of rows walks the keys up to its last row + c */
	double visited = 1;
	int64_t steps = (a->nk + s->bn - 1) / s->bn;
	if (a->causal) {
		int64_t all = 0;
		for (int64_t b = 0; b < blocks; b++) {
			int64_t n = ((b + 1) * s->bm + a->causal_off + s->bn - 1) /
				    s->bn;
			all += n < steps ? n : steps;
		}
		visited = (double)all / (double)(blocks * steps);
	}
	sum->flops *= visited;
	double work = 2.0 * visited *
		      (double)(per_sm * t->sm_count * s->bm * a->nk) *
		      (double)(16 * nd + 8 * ne);
	double compute = work / (rate * eff);
	if (resident > 0 && resident < 8)
		compute *= 8.0 / (double)resident;
	/* memory: Q, K, V and O once from DRAM; K and V again for each block
	   of rows from L2 */
	double q = (double)(batch * rows * a->d * elt_bytes(a->q.mem));
	double kv = (double)(batch * a->nk * (a->d * elt_bytes(a->k.mem) +
					      a->e * elt_bytes(a->v.mem)));
	double o = (double)(batch * rows * a->e * elt_bytes(a->o.mem));
	double unique = q + kv + o;
	double moved = q + o + kv * (double)blocks * visited;
	double memory = unique / (t->dram_bytes_per_s * t->model.dram_efficiency);
	double l2 = moved / (t->dram_bytes_per_s * t->model.l2_over_dram);
	if (l2 > memory)
		memory = l2;
	sum->bytes = unique;
	sum->predicted_s = t->launch_s + (compute > memory ? compute : memory);
}
