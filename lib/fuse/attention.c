/* Attention as one nest with an online softmax (--fuse-attention; the
 * attention row of docs/pb-fuse.md's fusion kinds).
 *
 * Bufferized attention is a chain of nests over rows r (batch and query
 * loops) and keys j:
 *
 *     FS: S[r,j] = 0            A:  S[r,j] += x[r,j,d] * y[r,j,d]  (Q.K^T)
 *     T:  X[r,j] = S[r,j] * c   (or / c; optional, else X is S)
 *     MF: M[r] = m0             R1: M[r] = max(X[r,j], M[r])
 *     E:  E[r,j] = exp(X[r,j] - M[r])
 *     LF: L[r] = 0              R2: L[r] = E[r,j] + L[r]
 *     D:  P[r,j] = E[r,j] / L[r]
 *     OF: O[.] = 0              PV: O[r,e] += P[r,j] * v[r,e,j]    (P.V)
 *
 * recognised from the statements' bodies and access relations (the
 * intermediates S, X, M, E, L and P indexed by the loops in order, each a
 * buffer of its own used by nothing else). With f16 or bf16 data
 * (pb-import --cast) the products widen their operands (arith.extf after
 * the loads), and elementwise nests round S to the data type and back
 * before the softmax (T may be one of them: extf, * c, truncf) and P
 * after it; O is narrowed by a last nest. Any run of such roundings
 * (arith.truncf, arith.extf) with at most one scale, then at most one
 * mask (X = S * c + mask[..], the mask read at loop counters or 0, maybe
 * widened; or X = cond[..] ? S * c : fill, a Where) between S and X, and
 * of roundings between P and PV, is taken. Copies of O (into an output
 * of another shape, through an expand_shape) and its narrowing are
 * folded into the nest's store, and permuting copies into Q, K or V (an
 * exported K^T) into its loads (copy.c, pb_fuse_fold_copy_always). They
 * become one nest, the recurrence of FlashAttention:
 *
 *     for r (parallel): m = m0; l = 0; acc[e] = 0
 *       for j: s = sum_d x * y (* c) (+ mask); mn = max(m, s)
 *              k = mn == -inf ? 0 : mn (a row masked so far stays 0)
 *              a = exp(m - k); p = exp(s - k)
 *              l = l * a + p; acc[e] = acc[e] * a + p * v[e]; m = mn
 *       for e: O[r,e] = acc[e] / l
 *
 * placed where PV was. The loads of x, y, v (and their widenings) and
 * the store of O are clones of the original ones with the induction
 * variables remapped, so any layout of Q, K, V and O keeps working. The
 * roundings of S and P between the ops are dropped: the nest keeps them
 * in the softmax's type (f32), as FlashAttention does. The form of the
 * nest is what lib/kernel/attention.c reads back for pb-mma. The nest is
 * imperfect, so later passes see it as one opaque statement: a kernel of
 * its own. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "fuse/attention.h"

/* Is "v" defined outside statement "st"? */
static int outside(const struct pb_poly_stmt *st, MlirValue v)
{
	return !pb_ir_is_inside(pb_ir_value_parent(v), st->op);
}

/* Operations in the body of "st" (without the terminator). */
static int body_ops(const struct pb_poly_stmt *st)
{
	int n = 0;
	for (MlirOperation op = mlirBlockGetFirstOperation(st->body);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
		n++;
	return n - 1;
}

/* Is operand "i" of "op" the load of access "k" of "st"? */
static int opnd(const struct pb_poly_stmt *st, MlirOperation op, int i, int k)
{
	return k >= 0 &&
	       pb_attn_load_of(st, mlirOperationGetOperand(op, i)) == k;
}

/* Does access "k" of "st" (an affine access of its buffer itself, exact)
 * index the buffer with loops want[0..n-1] in order, dimensions of size 1
 * indexed by the constant 0 aside? */
static int pattern(const struct pb_poly_stmt *st, int k, const int *want,
		   int n)
{
	const struct pb_poly_access *a = &st->access[k];
	return a->direct && a->exact && pb_fuse_access_is(st, a, want, n);
}

/* Loops 0..n-1; "skip" >= 0 leaves that one out (P in PV). */
static int pat(const struct pb_poly_stmt *st, int k, int n, int skip)
{
	int want[16], m = 0;
	for (int i = 0; i < n && m < 16; i++)
		if (i != skip)
			want[m++] = i;
	return n <= 16 && pattern(st, k, want, m);
}

/* Is the float constant "v" zero? */
static int is_zero(MlirValue v)
{
	MlirOperation d = pb_attn_def(v);
	MlirAttribute c = mlirOperationIsNull(d) ? (MlirAttribute){NULL}
						 : pb_ir_attr(d, "value");
	return !mlirAttributeIsNull(c) && mlirAttributeIsAFloat(c) &&
	       mlirFloatAttrGetValueDouble(c) == 0.0;
}

/* Is statement "i" a fill of buffer "b" (all of it, "depth" loops in
 * order) with a constant, *v? */
static int fill(const struct pb_poly_scop *s, int i, int b, int depth,
		MlirValue *v)
{
	const struct pb_poly_stmt *st = &s->stmt[i];
	if (st->kind != PB_POLY_NEST || st->naccess != 1 ||
	    !st->access[0].write || st->access[0].buf != b ||
	    st->depth != depth || body_ops(st) != 1 || !pat(st, 0, depth, -1))
		return 0;
	*v = mlirOperationGetOperand(st->access[0].op, 0);
	return pb_ir_op_is(pb_attn_def(*v), "arith.constant") &&
	       outside(st, *v);
}

/* Is "st" a contraction: acc[..] = acc[..] + x * y, the store and the
 * load of acc alike, x and y loaded and maybe widened (arith.extf: f16
 * or bf16 data summed in f32) and maybe scaled by constants (QK^T of
 * prescaled operands, pb_attn_factor, when "pre" is not null)? Sets the
 * accesses of x, y and acc's load, and *pre to the product of the
 * factors' scales. */
static int contraction(const struct pb_poly_stmt *st, int *x, int *y,
		       int *acc, double *pre)
{
	int k;
	MlirOperation add = pb_attn_stored(st, &k);
	if (mlirOperationIsNull(add) || st->naccess != 4 ||
	    !pb_ir_op_is(add, "arith.addf"))
		return 0;
	for (int o = 0; o < 2; o++) {
		int l = pb_attn_load_of(st, mlirOperationGetOperand(add, o));
		MlirValue mv = mlirOperationGetOperand(add, 1 - o);
		MlirOperation mul = pb_attn_def(mv);
		if (l < 0 || !pb_ir_op_is(mul, "arith.mulf"))
			continue;
		MlirOperation ld = st->access[l].op, sto = st->access[k].op;
		int n = mlirOperationGetNumOperands(ld);
		if (n + 1 != mlirOperationGetNumOperands(sto) ||
		    !mlirAttributeEqual(pb_ir_attr(ld, "map"),
					pb_ir_attr(sto, "map")))
			continue;
		int same = 1;
		for (int i = 0; i < n; i++)
			same &= mlirValueEqual(mlirOperationGetOperand(ld, i),
					       mlirOperationGetOperand(sto,
								       i + 1));
		struct pb_attn_factor f[2];
		*x = pb_attn_factor(st, mlirOperationGetOperand(mul, 0), &f[0]);
		*y = pb_attn_factor(st, mlirOperationGetOperand(mul, 1), &f[1]);
		*acc = l;
		if (!pre && (!mlirOperationIsNull(f[0].scale) ||
			     !mlirOperationIsNull(f[1].scale)))
			return 0;
		if (pre)
			*pre = f[0].value * f[1].value;
		int nops = 6 + f[0].nops + f[1].nops;
		if (same && *x >= 0 && *y >= 0 && *x != l && *y != l &&
		    *x != *y && body_ops(st) == nops)
			return 1;
	}
	return 0;
}

/* The first statement after "from" that reads buffer "b", or -1. */
static int reader(const struct pb_poly_scop *s, const char *dead, int from,
		  int b)
{
	for (int i = from + 1; i < s->nstmt; i++)
		for (int k = 0; k < s->stmt[i].naccess && !dead[i]; k++)
			if (s->stmt[i].access[k].buf == b &&
			    !s->stmt[i].access[k].write)
				return i;
	return -1;
}

/* The last fill of "b" before "to" (constant in *v), or -1. */
static int fill_before(const struct pb_poly_scop *s, const char *dead,
		       int to, int b, int depth, MlirValue *v)
{
	for (int i = to - 1; i >= 0; i--)
		if (!dead[i] && fill(s, i, b, depth, v))
			return i;
	return -1;
}

/* Is buffer "b" of "s" a memref.alloc of @main? */
static int local(const struct pb_poly_scop *s, int b)
{
	return !s->buf[b].is_arg &&
	       pb_ir_op_is(pb_ir_value_parent(s->buf[b].root), "memref.alloc");
}

/* May statement "t" access buffer "b" (only write it with "writes")? */
static int touches(const struct pb_poly_scop *s, int t, int b, int writes)
{
	char sn[16], bn[16];
	snprintf(sn, sizeof(sn), "S%d", t);
	snprintf(bn, sizeof(bn), "B%d", b);
	int hit = 0;
	for (int w = 0; w < 2 - writes; w++) {
		isl_space *sp = isl_space_alloc(s->ctx, 0, s->stmt[t].depth,
						s->buf[b].rank);
		sp = isl_space_set_tuple_name(sp, isl_dim_in, sn);
		sp = isl_space_set_tuple_name(sp, isl_dim_out, bn);
		isl_map *m = isl_union_map_extract_map(
			w ? s->reads : s->may_writes, sp);
		hit |= isl_map_is_empty(m) != isl_bool_true;
		isl_map_free(m);
	}
	return hit;
}

/* Number of uses of "v" other than memref.dealloc. */
static int uses(MlirValue v)
{
	int n = 0;
	for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u);
	     u = mlirOpOperandGetNextUse(u))
		n += !pb_ir_op_is(mlirOpOperandGetOwner(u), "memref.dealloc");
	return n;
}

/* Statement "i" of "s" (none when "i" < 0) when it has "depth" loops,
 * "nacc" accesses and "nops" operations in its body and stores the result
 * of an operation "name": that operation into "*op", the store's access
 * into "*k". NULL otherwise. */
static const struct pb_poly_stmt *nest_storing(const struct pb_poly_scop *s,
					       int i, const char *name,
					       int depth, int nacc, int nops,
					       MlirOperation *op, int *k)
{
	if (i < 0)
		return NULL;
	const struct pb_poly_stmt *st = &s->stmt[i];
	*op = pb_attn_stored(st, k);
	if (mlirOperationIsNull(*op) || !pb_ir_op_is(*op, name) ||
	    st->naccess != nacc || body_ops(st) != nops || st->depth != depth)
		return NULL;
	return st;
}

/* Is "v" available before "at", an operation of @main's block: an
 * argument of that block or the result of an operation before "at"? */
static int available(MlirValue v, MlirOperation at)
{
	MlirBlock b = mlirOperationGetBlock(at);
	if (mlirValueIsABlockArgument(v))
		return mlirBlockEqual(mlirBlockArgumentGetOwner(v), b);
	MlirOperation d = mlirOpResultGetOwner(v);
	return mlirBlockEqual(mlirOperationGetBlock(d), b) &&
	       mlirOperationIsBeforeInBlock(d, at);
}

/* Is the value stored by "st" (its access "w") computed from its load
 * "in" through roundings (arith.truncf, arith.extf) and, when "scale" is
 * not null and *scale is, one product by or quotient over a value from
 * outside the nest (the scale, into *scale), then, when "mk" >= 0, one
 * mask into *mask: a sum with the load "mk", maybe widened (an additive
 * mask), or an arith.select on the load "mk" (a Where) of the value and
 * the load "fk" (or, when "fk" < 0, a value from outside the nest)? The
 * body holds the loads, those operations and the store last. */
static int rounded(const struct pb_poly_stmt *st, int in, int mk, int fk,
		   int w, MlirOperation *scale, MlirOperation *mask)
{
	MlirOperation sto = st->access[w].op, ld = st->access[in].op;
	MlirOperation ml = mk >= 0 ? st->access[mk].op : (MlirOperation){NULL};
	MlirOperation fl = fk >= 0 ? st->access[fk].op : (MlirOperation){NULL};
	MlirValue cur = mlirOperationGetResult(ld, 0);
	MlirValue mv = mk >= 0 ? mlirOperationGetResult(ml, 0) : (MlirValue){NULL};
	MlirOperation op = mlirBlockGetFirstOperation(st->body);
	for (; !mlirOperationEqual(op, sto); op = mlirOperationGetNextInBlock(op)) {
		if (mlirOperationEqual(op, ld) ||
		    (mk >= 0 && mlirOperationEqual(op, ml)) ||
		    (fk >= 0 && mlirOperationEqual(op, fl)))
			continue;
		int n = mlirOperationGetNumOperands(op);
		MlirValue a = mlirOperationGetOperand(op, 0);
		MlirValue b = n > 1 ? mlirOperationGetOperand(op, 1) : a;
		int ext = pb_ir_op_is(op, "arith.extf");
		if (mk >= 0 && fk < 0 && ext && mlirValueEqual(a, mv) &&
		    mlirValueEqual(mv, mlirOperationGetResult(ml, 0))) {
			mv = mlirOperationGetResult(op, 0);
			continue;
		}
		if ((ext || pb_ir_op_is(op, "arith.truncf")) &&
		    mlirValueEqual(a, cur)) {
		} else if (scale && mlirOperationIsNull(*scale) &&
			   (mk < 0 || mlirOperationIsNull(*mask)) && n == 2 &&
			   (pb_ir_op_is(op, "arith.mulf") ||
			    pb_ir_op_is(op, "arith.divf"))) {
			int mul = pb_ir_op_is(op, "arith.mulf");
			if (!(mlirValueEqual(a, cur) && outside(st, b)) &&
			    !(mul && mlirValueEqual(b, cur) && outside(st, a)))
				return 0;
			*scale = op;
		} else if (mk >= 0 && fk < 0 && mlirOperationIsNull(*mask) &&
			   n == 2 && pb_ir_op_is(op, "arith.addf") &&
			   ((mlirValueEqual(a, cur) && mlirValueEqual(b, mv)) ||
			    (mlirValueEqual(b, cur) && mlirValueEqual(a, mv)))) {
			*mask = op;
		} else if (mk >= 0 && mlirOperationIsNull(*mask) && n == 3 &&
			   pb_ir_op_is(op, "arith.select") &&
			   mlirValueEqual(a, mv)) {
			MlirValue c = mlirOperationGetOperand(op, 2);
			if (mlirValueEqual(c, cur))
				c = b;
			else if (!mlirValueEqual(b, cur))
				return 0;
			if (fk >= 0 ? !mlirValueEqual(c, mlirOperationGetResult(fl, 0))
				    : !outside(st, c))
				return 0;
			*mask = op;
		} else {
			return 0;
		}
		cur = mlirOperationGetResult(op, 0);
	}
	return mlirValueEqual(mlirOperationGetOperand(sto, 0), cur) &&
	       mlirOperationEqual(mlirOperationGetNextInBlock(sto),
				  mlirBlockGetTerminator(st->body)) &&
	       (mk < 0 || !mlirOperationIsNull(*mask));
}

/* Is access "a" of "st" an exact read at loop counters, or 0 in
 * dimensions of size 1 (a broadcast)? */
static int broadcast(const struct pb_poly_stmt *st,
		     const struct pb_poly_access *a)
{
	int loop[PB_FUSE_MAXR];
	return !a->write && a->exact && pb_fuse_result_loops(st, a, loop) >= 0;
}

/* Is statement "i" of "s" an elementwise nest of "depth" loops reading
 * buffer "b" and writing another, *out, both with the loops in order,
 * the value rounded (above)? With "t", it may apply a mask (fewer than
 * PB_ATTN_MAXM in "t" yet) read with broadcast(), appended to t->mask: a
 * buffer added, or a condition (i1) choosing between the value and
 * another, from a buffer or outside. The scale comes before the masks,
 * as the nest applies them. */
static int rounding(const struct pb_poly_scop *s, int i, int b, int depth,
		    MlirOperation *scale, struct pb_attn *t, int *out)
{
	const struct pb_poly_stmt *st = &s->stmt[i];
	int in = -1, mk = -1, fk = -1, w = -1, nx = 0, x[2];
	if (st->kind != PB_POLY_NEST || st->depth != depth ||
	    st->naccess > 2 + 2 * (t && t->nmask < PB_ATTN_MAXM))
		return 0;
	if (t && t->nmask)
		scale = NULL;
	for (int k = 0; k < st->naccess; k++) {
		const struct pb_poly_access *a = &st->access[k];
		if (a->write)
			w = w < 0 ? k : -2;
		else if (a->buf == b && in < 0)
			in = k;
		else
			x[nx++] = k;
	}
	if (w < 0 || in < 0 || st->access[w].buf == b)
		return 0;
	for (int k = 0; k < nx; k++) {
		const struct pb_poly_access *a = &st->access[x[k]];
		if (a->buf == b || a->buf == st->access[w].buf ||
		    !broadcast(st, a))
			return 0;
		MlirType et = mlirValueGetType(mlirOperationGetResult(a->op, 0));
		if (nx == 1 || mlirTypeIsAInteger(et))
			mk = x[k];
		else
			fk = x[k];
	}
	if (nx == 2 && (mk < 0 || fk < 0))
		return 0;
	MlirOperation m = {NULL};
	if (!rounded(st, in, mk, fk, w, scale, &m) || !pat(st, in, depth, -1) ||
	    !pat(st, w, depth, -1))
		return 0;
	if (mk >= 0) {
		struct pb_attn_mask *mm = &t->mask[t->nmask++];
		mm->op = m;
		mm->stmt = i;
		mm->acc = mk;
		mm->buf = st->access[mk].buf;
		mm->fill = fk;
		mm->bfill = fk >= 0 ? st->access[fk].buf : -1;
	}
	*out = st->access[w].buf;
	return 1;
}

/* Does nest "i" of "s", reading "b" after a mask of chain "t", scale
 * the masked scores (a rounding() that would take it if the masks came
 * after)? */
static int scaled_after_mask(const struct pb_poly_scop *s, int i, int b,
			     int depth, const struct pb_attn *t)
{
	struct pb_attn u = *t;
	MlirOperation scale = {NULL};
	int nb;
	if (!t->nmask || !mlirOperationIsNull(t->scale))
		return 0;
	u.nmask = 0;
	return rounding(s, i, b, depth, &scale, &u, &nb) &&
	       !mlirOperationIsNull(scale);
}

/* Is statement "i" of "s" a nest copying buffer "b" (maybe rounded) into
 * another, *out: reading every element of "*written" once, and nothing
 * else of "b", with a loop counter in each subscript but the constant 0
 * in dimensions of size 1, and writing each element once at subscripts
 * of the same kind that are available before "at"? Then *written becomes
 * the elements it writes. */
static int copy_out(const struct pb_poly_scop *s, int i, int b,
		    isl_set **written, MlirOperation at, int *out)
{
	const struct pb_poly_stmt *st = &s->stmt[i];
	int loop[PB_FUSE_MAXR], seen = 0;
	if (st->kind != PB_POLY_NEST || st->naccess != 2 ||
	    st->depth > PB_FUSE_MAXR || st->access[0].buf != b ||
	    st->access[0].write || !st->access[1].write ||
	    st->access[1].buf == b || !st->access[0].direct ||
	    !st->access[0].exact || !st->access[1].exact ||
	    !rounded(st, 0, -1, -1, 1, NULL, NULL) ||
	    pb_fuse_result_loops(st, &st->access[1], loop) < 0 ||
	    !available(pb_fuse_access_memref(&st->access[1]), at))
		return 0;
	int n = pb_fuse_result_loops(st, &st->access[0], loop);
	for (int k = 0; k < n; k++)
		if (loop[k] >= 0) {
			if (seen & (1 << loop[k]))
				return 0;
			seen |= 1 << loop[k];
		}
	if (n < 0 || seen != (1 << st->depth) - 1)
		return 0;
	isl_set *r = isl_map_range(isl_map_copy(st->access[0].rel));
	int ok = isl_set_is_equal(r, *written) == isl_bool_true &&
		 isl_map_is_injective(st->access[1].rel) == isl_bool_true;
	isl_set_free(r);
	if (!ok)
		return 0;
	isl_set_free(*written);
	*written = isl_map_range(isl_map_copy(st->access[1].rel));
	*out = st->access[1].buf;
	return 1;
}

/* Softmax over the rows of X (statements after "from"): R1, E, R2, D and
 * their fills. */
static int softmax(const struct pb_poly_scop *s, const char *dead, int from,
		   struct pb_attn *t)
{
	int R = t->rows, k, x, m;
	MlirOperation op;
	t->r1 = reader(s, dead, from, t->bx);
	if (t->r1 < 0)
		return 0;
	const struct pb_poly_stmt *st = &s->stmt[t->r1];
	op = pb_attn_stored(st, &k);
	if (mlirOperationIsNull(op) || st->depth != R + 1 ||
	    st->naccess != 3 || body_ops(st) != 4 ||
	    !(pb_ir_op_is(op, "arith.maximumf") ||
	      pb_ir_op_is(op, "arith.maxnumf")))
		return 0;
	for (int o = 0; o < 2; o++) {
		x = pb_attn_load_of(st, mlirOperationGetOperand(op, o));
		m = pb_attn_load_of(st, mlirOperationGetOperand(op, 1 - o));
		if (x >= 0 && m >= 0 && st->access[x].buf == t->bx &&
		    st->access[m].buf == st->access[k].buf)
			break;
		x = -1;
	}
	if (x < 0 || !pat(st, x, R + 1, -1) || !pat(st, m, R, -1) ||
	    !pat(st, k, R, -1))
		return 0;
	t->bm = st->access[k].buf;
	/* from here on it looks like attention: say why it is not */
	t->why = "the row maximum is not filled with a constant before";
	t->mf = fill_before(s, dead, t->r1, t->bm, R, &t->m0);
	if (t->mf < 0)
		return 0;
	t->why = "no exp(S - max) nest after the row maximum";
	t->e = reader(s, dead, t->r1, t->bm);
	st = nest_storing(s, t->e, "math.exp", R + 1, 3, 5, &op, &k);
	if (!st)
		return 0;
	MlirOperation sub = pb_attn_def(mlirOperationGetOperand(op, 0));
	if (!pb_ir_op_is(sub, "arith.subf") || !opnd(st, sub, 0, 0) ||
	    !opnd(st, sub, 1, 1) || st->access[0].buf != t->bx ||
	    st->access[1].buf != t->bm || !pat(st, 0, R + 1, -1) ||
	    !pat(st, 1, R, -1) || !pat(st, k, R + 1, -1))
		return 0;
	t->be = st->access[k].buf;
	t->why = "no row sum of the exponentials";
	t->r2 = reader(s, dead, t->e, t->be);
	st = nest_storing(s, t->r2, "arith.addf", R + 1, 3, 4, &op, &k);
	if (!st)
		return 0;
	x = pb_attn_load_of(st, mlirOperationGetOperand(op, 0));
	m = pb_attn_load_of(st, mlirOperationGetOperand(op, 1));
	if (x >= 0 && m >= 0 && st->access[x].buf != t->be) {
		int tmp = x;
		x = m;
		m = tmp;
	}
	if (x < 0 || m < 0 || st->access[x].buf != t->be ||
	    st->access[m].buf != st->access[k].buf || !pat(st, x, R + 1, -1) ||
	    !pat(st, m, R, -1) || !pat(st, k, R, -1))
		return 0;
	t->bl = st->access[k].buf;
	t->why = "the row sum is not filled with zero before";
	t->lf = fill_before(s, dead, t->r2, t->bl, R, &t->zero);
	if (t->lf < 0 || !is_zero(t->zero))
		return 0;
	t->why = "no division by the row sum";
	t->d = reader(s, dead, t->r2, t->bl);
	st = nest_storing(s, t->d, "arith.divf", R + 1, 3, 4, &op, &k);
	if (!st || !opnd(st, op, 0, 0) || !opnd(st, op, 1, 1) ||
	    st->access[0].buf != t->be || st->access[1].buf != t->bl ||
	    !pat(st, 0, R + 1, -1) || !pat(st, 1, R, -1) ||
	    !pat(st, k, R + 1, -1))
		return 0;
	t->bp = st->access[k].buf;
	return 1;
}

/* P.V after D: the contraction PV and the fill of its output. */
static int pv(const struct pb_poly_scop *s, const char *dead, struct pb_attn *t)
{
	int R = t->rows, x, y, acc;
	MlirValue z;
	/* P rounded to the data type first (f16 or bf16 models) */
	int from = t->d, b = t->bp, nb;
	for (t->npost = 0; t->npost < PB_ATTN_MAXC; from = t->post[t->npost++]) {
		int n = reader(s, dead, from, b);
		if (n < 0 || !rounding(s, n, b, R + 1, NULL, NULL, &nb))
			break;
		t->post[t->npost] = n;
		t->bpost[t->npost] = b = nb;
	}
	t->bpv = b;
	t->why = "the softmax's result is not read by a matmul over the keys";
	t->pv = reader(s, dead, from, b);
	if (t->pv < 0)
		return 0;
	const struct pb_poly_stmt *st = &s->stmt[t->pv];
	if (st->depth != R + 2 || !contraction(st, &x, &y, &acc, NULL))
		return 0;
	if (st->access[y].buf == t->bp) {
		int tmp = x;
		x = y;
		y = tmp;
	}
	if (st->access[x].buf != t->bpv || !pat(st, x, R + 2, R))
		return 0;
	t->vp = x;
	t->vv = y;
	t->vo = acc;
	t->bo = st->access[acc].buf;
	/* O[r, e] written once per (r, e), not depending on j */
	t->why = "the output of P.V is not indexed by the rows and its own "
		 "loop";
	const struct pb_poly_access *w = &st->access[acc];
	for (int k = 0; k < st->naccess; k++)
		if (st->access[k].write)
			w = &st->access[k];
	for (int i = 0; i < mlirOperationGetNumOperands(w->op); i++)
		if (mlirValueEqual(mlirOperationGetOperand(w->op, i),
				   pb_attn_iv(st, R + 1)))
			return 0;
	isl_map *same = isl_map_apply_range(
		isl_map_copy(w->rel), isl_map_reverse(isl_map_copy(w->rel)));
	isl_map *eq = isl_map_identity(isl_space_map_from_set(
		isl_space_domain(isl_map_get_space(w->rel))));
	eq = isl_map_project_out(eq, isl_dim_out, R + 1, 1);
	eq = isl_map_insert_dims(eq, isl_dim_out, R + 1, 1);
	eq = isl_map_set_tuple_name(eq, isl_dim_out,
				    isl_map_get_tuple_name(w->rel, isl_dim_in));
	int inj = w->exact && isl_map_is_subset(same, eq) == isl_bool_true;
	isl_map_free(same);
	isl_map_free(eq);
	if (!inj)
		return 0;
	/* its fill: zero, exactly what PV writes */
	t->why = "the output of P.V is not filled with zero before";
	t->of = -1;
	isl_set *out = isl_map_range(isl_map_copy(w->rel));
	for (int i = t->pv - 1; i >= 0 && t->of < 0; i--) {
		const struct pb_poly_stmt *f = &s->stmt[i];
		if (dead[i] || f->kind != PB_POLY_NEST || f->naccess != 1 ||
		    !f->access[0].write || f->access[0].buf != t->bo ||
		    !f->access[0].exact || body_ops(f) != 1)
			continue;
		z = mlirOperationGetOperand(f->access[0].op, 0);
		isl_set *fr = isl_map_range(isl_map_copy(f->access[0].rel));
		if (is_zero(z) && outside(f, z) &&
		    isl_set_is_equal(fr, out) == isl_bool_true)
			t->of = i;
		isl_set_free(fr);
	}
	/* O copied (into a view of another shape, an output) or narrowed to
	 * the data type: the nest writes that instead */
	from = t->pv;
	b = t->bo;
	for (t->nout = 0; t->nout < PB_ATTN_MAXC && local(s, b);
	     from = t->out[t->nout++]) {
		int n = reader(s, dead, from, b);
		if (n < 0 || !copy_out(s, n, b, &out, st->op, &nb))
			break;
		t->out[t->nout] = n;
		t->bout[t->nout] = b = nb;
	}
	isl_set_free(out);
	return t->of >= 0;
}

/* The statements of chain "t" into "c"; returns how many. */
static int stmts_of(const struct pb_attn *t, int *c)
{
	int fixed[10] = {t->fs, t->a,  t->mf, t->r1, t->e,
			 t->lf, t->r2, t->d,  t->of, t->pv};
	int n = 0;
	for (int i = 0; i < 10; i++)
		c[n++] = fixed[i];
	for (int i = 0; i < t->npre; i++)
		c[n++] = t->pre[i];
	for (int i = 0; i < t->npost; i++)
		c[n++] = t->post[i];
	for (int i = 0; i < t->nout; i++)
		c[n++] = t->out[i];
	return n;
}

/* The intermediate buffers of chain "t" into "b", what each is into
 * "role": S to P first (*nsp of them), then O and its copies but the
 * last when O is copied. Returns how many. */
static int bufs_of(const struct pb_attn *t, int *b, const char **role,
		   int *nsp)
{
	int n = 0;
	b[n] = t->bs;
	role[n++] = "S";
	for (int i = 0; i < t->npre; i++) {
		b[n] = t->bpre[i];
		role[n++] = "the scaled or rounded S";
	}
	int mid[4] = {t->bm, t->be, t->bl, t->bp};
	static const char *what[4] = {"the row maximum", "exp(S - max)",
				      "the row sum", "P"};
	for (int i = 0; i < 4; i++) {
		b[n] = mid[i];
		role[n++] = what[i];
	}
	for (int i = 0; i < t->npost; i++) {
		b[n] = t->bpost[i];
		role[n++] = "the rounded P";
	}
	*nsp = n;
	for (int i = 0; i < t->nout; i++) {
		b[n] = i ? t->bout[i - 1] : t->bo;
		role[n++] = "the output of P.V";
	}
	return n;
}

/* The value from outside its nest that the Where "m" of "s" selects
 * where its condition masks the scores (null when it is loaded). */
static MlirValue where_fill(const struct pb_poly_scop *s,
			    const struct pb_attn_mask *m)
{
	MlirOperation nest = s->stmt[m->stmt].op;
	for (int i = 1; i < 3; i++) {
		MlirValue v = mlirOperationGetOperand(m->op, i);
		if (!pb_ir_defined_in(v, nest))
			return v;
	}
	return (MlirValue){NULL};
}

/* The element type of buffer "b" of "s". */
static MlirType elt(const struct pb_poly_scop *s, int b)
{
	return mlirShapedTypeGetElementType(mlirValueGetType(s->buf[b].root));
}

/* Match the chain starting at contraction "a"; 1 when it is attention
 * that can be fused, else 0 with t->why set when it looked like one. */
static int match(const struct pb_poly_scop *s, const char *dead, int a,
		 struct pb_attn *t)
{
	const struct pb_poly_stmt *st = &s->stmt[a];
	int k, R = st->depth - 2;
	memset(t, 0, sizeof(*t));
	t->a = a;
	t->rows = R;
	if (st->kind != PB_POLY_NEST || R < 1 ||
	    !contraction(st, &t->ax, &t->ay, &t->aacc, &t->prescale))
		return 0;
	pb_attn_stored(st, &k);
	if (!pat(st, k, R + 1, -1))
		return 0;
	t->bs = st->access[k].buf;
	MlirValue z;
	t->fs = fill_before(s, dead, a, t->bs, R + 1, &z);
	if (t->fs < 0 || !is_zero(z))
		return 0;
	/* elementwise nests from S to X: the scale S * c, c * S or S / c,
	 * roundings to the data type and back (f16 or bf16 models) */
	int from = a, b = t->bs, nb;
	for (; t->npre < PB_ATTN_MAXC; from = t->pre[t->npre++]) {
		int n = reader(s, dead, from, b);
		if (n >= 0 && scaled_after_mask(s, n, b, R + 1, t)) {
			t->why = "the scores are scaled after a mask (the fused "
				 "nest scales first)";
			return 0;
		}
		if (n < 0 ||
		    !rounding(s, n, b, R + 1, &t->scale, t, &nb))
			break;
		t->pre[t->npre] = n;
		t->bpre[t->npre] = b = nb;
	}
	t->bx = b;
	if (!softmax(s, dead, from, t) || !pv(s, dead, t))
		return 0;
	/* the softmax in S's type (f32 for f16 data, as torch does) */
	t->why = "the softmax is not computed in the type of QK^T's sum";
	MlirType ft = elt(s, t->bs);
	if (!mlirTypeEqual(elt(s, t->bx), ft) ||
	    !mlirTypeEqual(elt(s, t->bp), ft) ||
	    !mlirTypeEqual(mlirValueGetType(t->zero), ft) ||
	    (!mlirOperationIsNull(t->scale) &&
	     !mlirTypeEqual(mlirValueGetType(mlirOperationGetResult(
				    t->scale, 0)),
			    ft)))
		return 0;
	/* the intermediates: allocations of their own, used only here */
	int chain[PB_ATTN_MAXS], bufs[PB_ATTN_MAXS], nsp;
	const char *role[PB_ATTN_MAXS];
	int nc = stmts_of(t, chain), nb_ = bufs_of(t, bufs, role, &nsp);
	int dst = t->nout ? t->bout[t->nout - 1] : t->bo;
	int qkv[3] = {s->stmt[a].access[t->ax].buf,
		      s->stmt[a].access[t->ay].buf,
		      s->stmt[t->pv].access[t->vv].buf};
	t->why = t->whybuf;
	for (int i = 0; i < nb_; i++) {
		int b = bufs[i], n = 0;
		snprintf(t->whybuf, sizeof(t->whybuf),
			 "%s is not a buffer of its own (a function argument, "
			 "an output?)",
			 role[i]);
		if (!local(s, b))
			return 0;
		for (int j = 0; j < i; j++)
			if (bufs[j] == b)
				return 0;
		snprintf(t->whybuf, sizeof(t->whybuf),
			 "%s is also used outside QK^T -> softmax -> PV",
			 role[i]);
		if (b == dst || b == qkv[0] || b == qkv[1] || b == qkv[2])
			return 0;
		for (int c = 0; c < s->nstmt; c++) {
			int in = 0;
			for (int j = 0; j < nc; j++)
				in |= chain[j] == c;
			if (in) {
				for (int j = 0; j < s->stmt[c].naccess; j++)
					n += s->stmt[c].access[j].buf == b;
			} else if (touches(s, c, b, 0)) {
				return 0;
			}
		}
		if (uses(s->buf[b].root) != n)
			return 0;
	}
	/* Q and K keep their values until PV, nothing else sees O between
	 * its fill and PV, nor its destination between PV and the copy
	 * into it */
	t->why = "Q, K, the mask or the output is accessed between the nests";
	int last = t->nout ? t->out[t->nout - 1] : t->pv;
	for (int c = 0; c < last; c++) {
		int in = 0;
		for (int j = 0; j < nc; j++)
			in |= chain[j] == c;
		if (in || dead[c])
			continue;
		if (c > a && c < t->pv &&
		    (touches(s, c, qkv[0], 1) || touches(s, c, qkv[1], 1)))
			return 0;
		if (c > t->of && c < t->pv && touches(s, c, t->bo, 0))
			return 0;
		if (c > t->pv && touches(s, c, dst, 0))
			return 0;
		/* the masks keep their values until PV */
		for (int i = 0; i < t->nmask; i++) {
			const struct pb_attn_mask *mm = &t->mask[i];
			if (c > mm->stmt && c < t->pv &&
			    (touches(s, c, mm->buf, 1) ||
			     (mm->bfill >= 0 && touches(s, c, mm->bfill, 1))))
				return 0;
		}
	}
	if (dst == qkv[0] || dst == qkv[1] || dst == qkv[2])
		return 0;
	t->why = "the mask is written by the chain";
	for (int m = 0; m < t->nmask; m++)
		for (int i = 0; i < nb_; i++)
			for (int k = 0; k < 2; k++) {
				int mb = k ? t->mask[m].bfill : t->mask[m].buf;
				if (mb >= 0 && (bufs[i] == mb || mb == t->bo ||
						mb == dst))
					return 0;
			}
	/* the masked scores in their sum's type; a Where may choose
	 * between the rounded scores and a constant or loaded value of their
	 * type (f16 or bf16 data: a select needs no widening), which the
	 * nest widens, as it keeps the scores unrounded */
	t->why = "the mask is not applied in the type of QK^T's sum";
	for (int m = 0; m < t->nmask; m++) {
		const struct pb_attn_mask *mm = &t->mask[m];
		MlirType mt = mlirValueGetType(mlirOperationGetResult(mm->op, 0));
		double fv;
		if (!mlirTypeEqual(mt, ft) &&
		    !(pb_ir_op_is(mm->op, "arith.select") &&
		      mlirTypeIsAFloat(mt) &&
		      mlirFloatTypeGetWidth(mt) < mlirFloatTypeGetWidth(ft) &&
		      (mm->fill >= 0 ||
		       pb_attn_float_constant(where_fill(s, mm), &fv))))
			return 0;
	}
	return 1;
}

/* Fold the copies into Q, K or V of the chains of "*s" (a Transpose of K
 * read along QK^T's reduction, which copy.c keeps) into their reads, one
 * per chain and round, lifting "*s" again after each round. Returns how
 * many, or -1 (and "*s" NULL) on error. */
static int fold_operands(struct pb_ctx *ctx, const struct pb_fuse_opts *o,
			 struct pb_poly_scop **s)
{
	int total = 0;
	for (;;) {
		const struct pb_poly_scop *sc = *s;
		char *dead = calloc(sc->nstmt + 1, 1);
		int folded = 0, chain[PB_ATTN_MAXS];
		struct pb_attn t;
		if (!dead)
			abort();
		for (int a = 0; a < sc->nstmt; a++) {
			if (dead[a] || !match(sc, dead, a, &t))
				continue;
			int n = stmts_of(&t, chain);
			for (int i = 0; i < n; i++)
				dead[chain[i]] = 1;
			int qkv[3] = {sc->stmt[a].access[t.ax].buf,
				      sc->stmt[a].access[t.ay].buf,
				      sc->stmt[t.pv].access[t.vv].buf};
			for (int i = 0; i < 3; i++) {
				int w = -1, b = qkv[i];
				for (int c = 0; c < a && local(sc, b); c++)
					if (!dead[c] && touches(sc, c, b, 1))
						w = c;
				if (w >= 0 &&
				    pb_fuse_fold_copy_always(ctx, o, sc, b,
							     i < 2)) {
					/* the copy is gone */
					dead[w] = 1;
					folded++;
					break;
				}
			}
		}
		free(dead);
		if (!folded)
			return total;
		total += folded;
		*s = pb_poly_extract_update(ctx, *s);
		if (!*s)
			return -1;
	}
}

int pb_fuse_attention(struct pb_ctx *ctx, const struct pb_fuse_opts *o,
		      struct pb_poly_scop **sp)
{
	if (fold_operands(ctx, o, sp) < 0)
		return -1;
	const struct pb_poly_scop *s = *sp;
	char *dead = calloc(s->nstmt + 1, 1);
	int n = 0;
	struct pb_attn t;
	if (!dead)
		abort();
	for (int a = 0; a < s->nstmt; a++) {
		if (dead[a])
			continue;
		MlirLocation loc = mlirOperationGetLocation(s->stmt[a].op);
		if (!match(s, dead, a, &t)) {
			if (t.why && o->remarks)
				pb_remark_at(ctx, loc,
					     "attention not fused: %s", t.why);
			continue;
		}
		int chain[PB_ATTN_MAXS], bufs[PB_ATTN_MAXS], nsp;
		const char *role[PB_ATTN_MAXS];
		int nc = stmts_of(&t, chain), nb = bufs_of(&t, bufs, role, &nsp);
		int64_t bytes = 0;
		for (int i = 0; i < nsp; i++) {
			int64_t sz = s->buf[bufs[i]].elem_bytes;
			for (int k = 0; k < s->buf[bufs[i]].rank; k++)
				sz *= s->buf[bufs[i]].shape[k];
			bytes += sz;
		}
		if (o->remarks)
			pb_remark_at(ctx, loc,
				     "attention fused: QK^T, softmax and PV in "
				     "one nest (online softmax), S and P (%lld "
				     "bytes) never stored%s",
				     (long long)bytes,
				     t.nout ? ", the output written in place"
					    : "");
		pb_attn_build(s, &t);
		for (int i = 0; i < nc; i++) {
			dead[chain[i]] = 1;
			mlirOperationDestroy(s->stmt[chain[i]].op);
		}
		/* the intermediates' allocations and deallocations go */
		for (int i = 0; i < nb; i++) {
			MlirValue root = s->buf[bufs[i]].root;
			MlirOpOperand u;
			while (!mlirOpOperandIsNull(
				u = mlirValueGetFirstUse(root)))
				mlirOperationDestroy(mlirOpOperandGetOwner(u));
			mlirOperationDestroy(pb_ir_value_parent(root));
		}
		n++;
	}
	free(dead);
	return n;
}
