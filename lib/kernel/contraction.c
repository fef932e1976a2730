/* Contractions recognised from their access functions (docs/kernel-model.md,
 * docs/pb-mma.md): the tensor-core view of a nest that pb-tile and pb-mma
 * share.
 *
 * A nest is a contraction when, in pb-fuse's form, its band computes
 * acc = sum over k of ext(A[s_A]) * ext(B[s_B]) into a scalar
 * accumulator and then writes functions of acc to buffers indexed by the
 * band. The roles come from the subscripts alone, not from op names: the
 * band dimensions that subscript both A and B are batch dimensions, the
 * one only A's subscripts use is the rows m of C, the one only B's use is
 * its columns n, and k subscripts each operand exactly once. So a MatMul,
 * a batched MatMul, a Gemm with its epilogue or an Einsum of this shape
 * are all found, with either operand transposed. */
#include <string.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "ir/contract.h"
#include "kernel/kernel.h"
#include "target/target.h"

static MlirOperation def_of(MlirValue v)
{
	MlirOperation none = {NULL};
	return mlirValueIsAOpResult(v) ? mlirOpResultGetOwner(v) : none;
}

/* The band dimension whose counter is "v", PB_KERNEL_SUB_K for the
 * reduction counter, PB_KERNEL_SUB_NONE otherwise. */
static int role_of(const struct pb_kernel_contraction *c, MlirValue v)
{
	for (int d = 0; d < c->b.n; d++)
		if (mlirValueEqual(v, c->b.iv[d]))
			return d;
	if (!mlirOperationIsNull(c->kloop) &&
	    mlirValueEqual(v, mlirBlockGetArgument(
				      mlirRegionGetFirstBlock(
					      mlirOperationGetRegion(c->kloop, 0)),
				      0)))
		return PB_KERNEL_SUB_K;
	for (int t = 0; t < c->ntap; t++)
		if (mlirValueEqual(v, mlirBlockGetArgument(
					      mlirRegionGetFirstBlock(
						      mlirOperationGetRegion(
							      c->tloop[t], 0)),
					      0)))
			return PB_KERNEL_SUB_TAP - t;
	return PB_KERNEL_SUB_NONE;
}

int pb_kernel_access_parse(MlirOperation op,
			   int (*role)(const void *user, MlirValue v),
			   const void *user, struct pb_kernel_access *acc)
{
	int store = pb_ir_op_is(op, "affine.store");
	if (!store && !pb_ir_op_is(op, "affine.load"))
		return 0;
	MlirAffineMap map = mlirAffineMapAttrGetValue(pb_ir_attr(op, "map"));
	int first = store ? 2 : 1;
	memset(acc, 0, sizeof(*acc));
	acc->op = op;
	acc->mem = mlirOperationGetOperand(op, first - 1);
	acc->rank = (int)mlirAffineMapGetNumResults(map);
	if (acc->rank > PB_KERNEL_MAXR || mlirAffineMapGetNumSymbols(map))
		return 0;
	for (int r = 0; r < acc->rank; r++) {
		MlirAffineExpr e = mlirAffineMapGetResult(map, r);
		if (mlirAffineExprIsAConstant(e)) {
			acc->sub[r] = PB_KERNEL_SUB_CST;
			acc->cst[r] = mlirAffineConstantExprGetValue(e);
			continue;
		}
		if (!mlirAffineExprIsADim(e))
			return 0;
		int p = (int)mlirAffineDimExprGetPosition(e);
		acc->sub[r] = role(user, mlirOperationGetOperand(op, first + p));
		if (acc->sub[r] == PB_KERNEL_SUB_NONE)
			return 0;
	}
	return 1;
}

static int contraction_role(const void *user, MlirValue v)
{
	return role_of(user, v);
}

int pb_kernel_access_of(const struct pb_kernel_contraction *c, MlirOperation op,
		     struct pb_kernel_access *acc)
{
	return pb_kernel_access_parse(op, contraction_role, c, acc);
}

/* How often band dimension "d" (or PB_KERNEL_SUB_K) subscripts "a". */
static int uses(const struct pb_kernel_access *a, int d)
{
	int n = 0;
	for (int r = 0; r < a->rank; r++)
		n += a->sub[r] == d;
	return n;
}

static int is_float_zero(MlirValue v)
{
	MlirOperation d = def_of(v);
	if (mlirOperationIsNull(d) || !pb_ir_op_is(d, "arith.constant"))
		return 0;
	MlirAttribute a = pb_ir_attr(d, "value");
	return mlirAttributeIsAFloat(a) &&
	       mlirFloatAttrGetValueDouble(a) == 0.0;
}

/* Is memref "v" a scalar temporary: no dimension other than 1? */
static int is_local(MlirValue v)
{
	MlirType t = mlirValueGetType(v);
	if (!mlirTypeIsAMemRef(t) || !mlirShapedTypeHasStaticShape(t))
		return 0;
	for (intptr_t d = 0; d < mlirShapedTypeGetRank(t); d++)
		if (mlirShapedTypeGetDimSize(t, d) != 1)
			return 0;
	return 1;
}

int pb_kernel_is_local(const struct pb_kernel_contraction *c, MlirValue v)
{
	return mlirValueIsAOpResult(v) &&
	       pb_ir_op_is(mlirOpResultGetOwner(v), "memref.alloca") &&
	       !mlirOperationEqual(mlirOpResultGetOwner(v), c->alloca) &&
	       pb_ir_defined_in(v, c->b.root) && is_local(v);
}

/* The operand load behind "v": "v" itself or its arith.extf to f32; an
 * affine.load, or the arith.select of a window read (window_access). */
static MlirOperation operand_load(MlirValue v)
{
	MlirOperation d = def_of(v);
	if (!mlirOperationIsNull(d) && pb_ir_op_is(d, "arith.extf"))
		d = def_of(mlirOperationGetOperand(d, 0));
	if (!mlirOperationIsNull(d) && (pb_ir_op_is(d, "affine.load") ||
					pb_ir_op_is(d, "arith.select")))
		return d;
	MlirOperation none = {NULL};
	return none;
}

/* The operation defining "v" when it is "name" with a "map" attribute of
 * one result, else null. */
static MlirOperation def_map(MlirValue v, const char *name)
{
	MlirOperation d = def_of(v);
	if (mlirOperationIsNull(d) || !pb_ir_op_is(d, name))
		return (MlirOperation){NULL};
	return d;
}

/* The result of the two-result map of "op" beside the constant one,
 * the constant into "*k"; null when the map is not of that shape. */
static MlirAffineExpr beside_const(MlirOperation op, int64_t *k)
{
	MlirAffineMap m = mlirAffineMapAttrGetValue(pb_ir_attr(op, "map"));
	if (mlirAffineMapGetNumResults(m) != 2 || mlirAffineMapGetNumSymbols(m))
		return (MlirAffineExpr){NULL};
	for (int i = 0; i < 2; i++) {
		MlirAffineExpr e = mlirAffineMapGetResult(m, i);
		if (mlirAffineExprIsAConstant(e)) {
			*k = mlirAffineConstantExprGetValue(e);
			return mlirAffineMapGetResult(m, 1 - i);
		}
	}
	return (MlirAffineExpr){NULL};
}

/* The linear form of "e" over its first "n" dimensions into "co" and
 * the constant into "*k"; 0 when it is none. */
static int linear_n(MlirAffineExpr e, int n, int64_t *co, int64_t *k)
{
	if (mlirAffineExprIsAConstant(e)) {
		*k += mlirAffineConstantExprGetValue(e);
		return 1;
	}
	if (mlirAffineExprIsADim(e)) {
		intptr_t p = mlirAffineDimExprGetPosition(e);
		if (p >= n)
			return 0;
		co[p] += 1;
		return 1;
	}
	if (mlirAffineExprIsAAdd(e))
		return linear_n(mlirAffineBinaryOpExprGetLHS(e), n, co, k) &&
		       linear_n(mlirAffineBinaryOpExprGetRHS(e), n, co, k);
	if (mlirAffineExprIsAMul(e) &&
	    mlirAffineExprIsAConstant(mlirAffineBinaryOpExprGetRHS(e)) &&
	    mlirAffineExprIsADim(mlirAffineBinaryOpExprGetLHS(e))) {
		intptr_t p = mlirAffineDimExprGetPosition(
			mlirAffineBinaryOpExprGetLHS(e));
		if (p >= n)
			return 0;
		co[p] += mlirAffineConstantExprGetValue(
			mlirAffineBinaryOpExprGetRHS(e));
		return 1;
	}
	return 0;
}

/* One subscript of a window read: min(max(0, S d + t + off), size - 1),
 * the clamp pb-fuse writes for a folded pad (lib/fuse/pad.c), with "d" a
 * band dimension, "S" the stride and "t" a window counter of "c" into
 * subscript "r" of "acc"; the affine.max into "*mx". */
static int window_sub(const struct pb_kernel_contraction *c, MlirValue v,
		      int64_t size, int r, struct pb_kernel_access *acc,
		      MlirOperation *mx)
{
	int64_t hi = -1, lo = -1, co[2] = {0, 0}, k = 0;
	MlirOperation mn = def_map(v, "affine.min");
	if (mlirOperationIsNull(mn) || mlirOperationGetNumOperands(mn) != 1)
		return 0;
	MlirAffineExpr e = beside_const(mn, &hi);
	*mx = def_map(mlirOperationGetOperand(mn, 0), "affine.max");
	if (mlirAffineExprIsNull(e) || !mlirAffineExprIsADim(e) ||
	    hi != size - 1 || mlirOperationIsNull(*mx) ||
	    mlirOperationGetNumOperands(*mx) != 2)
		return 0;
	e = beside_const(*mx, &lo);
	if (mlirAffineExprIsNull(e) || lo != 0 || !linear_n(e, 2, co, &k) ||
	    co[0] < 1 || co[1] != 1)
		return 0;
	int d = role_of(c, mlirOperationGetOperand(*mx, 0));
	int t = role_of(c, mlirOperationGetOperand(*mx, 1));
	if (d < 0 || t > PB_KERNEL_SUB_TAP ||
	    t <= PB_KERNEL_SUB_TAP - c->ntap)
		return 0;
	acc->sub[r] = d;
	acc->tap[r] = 1 + PB_KERNEL_SUB_TAP - t;
	acc->off[r] = k;
	acc->str[r] = co[0];
	return 1;
}

int64_t pb_kernel_stride(const struct pb_kernel_access *x, int r)
{
	return x->str[r] > 1 ? x->str[r] : 1;
}

int64_t pb_kernel_row_stride(const struct pb_kernel_contraction *c)
{
	for (int r = 0; r < c->a.rank; r++)
		if (c->a.sub[r] == c->m)
			return pb_kernel_stride(&c->a, r);
	return 1;
}

/* Is "v" the comparison "x >= 0" or "x < size" of a clamped subscript
 * among "mx" (n of them, buffer sizes "size")? Marks it in "seen" (bit
 * 0: >= 0, bit 1: < size). */
static int window_bound(MlirValue v, MlirOperation *mx, const int64_t *size,
			int n, int *seen)
{
	MlirOperation cmp = def_of(v);
	int64_t b;
	if (mlirOperationIsNull(cmp) || !pb_ir_op_is(cmp, "arith.cmpi"))
		return 0;
	int64_t pred = mlirIntegerAttrGetValueInt(pb_ir_attr(cmp, "predicate"));
	MlirOperation ap = def_map(mlirOperationGetOperand(cmp, 0),
				   "affine.apply");
	if (mlirOperationIsNull(ap) ||
	    pb_ir_const_int(mlirOperationGetOperand(cmp, 1), &b))
		return 0;
	MlirAffineMap am = mlirAffineMapAttrGetValue(pb_ir_attr(ap, "map"));
	for (int i = 0; i < n; i++) {
		int64_t lo;
		MlirAffineExpr e = beside_const(mx[i], &lo);
		if (mlirAffineMapGetNumResults(am) != 1 ||
		    !mlirAffineExprEqual(mlirAffineMapGetResult(am, 0), e) ||
		    !pb_ir_same_operands(ap, 0, mx[i], 0))
			continue;
		/* arith.cmpi predicates: 5 sge, 2 slt */
		if (pred == 5 && b == 0) {
			seen[i] |= 1;
			return 1;
		}
		if (pred == 2 && b == size[i]) {
			seen[i] |= 2;
			return 1;
		}
	}
	return 0;
}

/* Is the i1 value "v" an arith.andi tree of bounds of the clamped
 * subscripts (window_bound)? */
static int window_cond(MlirValue v, MlirOperation *mx, const int64_t *size,
		       int n, int *seen, int depth)
{
	MlirOperation d = def_of(v);
	if (!mlirOperationIsNull(d) && pb_ir_op_is(d, "arith.andi") && depth)
		return window_cond(mlirOperationGetOperand(d, 0), mx, size, n,
				   seen, depth - 1) &&
		       window_cond(mlirOperationGetOperand(d, 1), mx, size, n,
				   seen, depth - 1);
	return window_bound(v, mx, size, n, seen);
}

/* A window read of "c" (a convolution's input with its padding folded
 * in by pb-fuse, lib/fuse/pad.c): arith.select "sel" of the load of X at
 * subscripts clamped into X, or 0 when one of them lies outside, where
 * each clamped subscript is a band dimension plus a window counter plus
 * a constant. Its access into "acc" (tap and off set). */
static int window_access(const struct pb_kernel_contraction *c,
			 MlirOperation sel, struct pb_kernel_access *acc)
{
	MlirOperation ld = def_of(mlirOperationGetOperand(sel, 1));
	MlirOperation mx[PB_KERNEL_MAXR];
	int64_t size[PB_KERNEL_MAXR];
	int seen[PB_KERNEL_MAXR] = {0}, n = 0;
	if (!c->ntap || mlirOperationIsNull(ld) ||
	    !pb_ir_op_is(ld, "memref.load") ||
	    !is_float_zero(mlirOperationGetOperand(sel, 2)))
		return 0;
	memset(acc, 0, sizeof(*acc));
	acc->op = ld;
	acc->sel = sel;
	acc->mem = mlirOperationGetOperand(ld, 0);
	acc->rank = (int)mlirOperationGetNumOperands(ld) - 1;
	MlirType mt = mlirValueGetType(acc->mem);
	if (acc->rank > PB_KERNEL_MAXR || !mlirShapedTypeHasStaticShape(mt) ||
	    !mlirAffineMapIsIdentity(mlirMemRefTypeGetAffineMap(mt)))
		return 0;
	for (int r = 0; r < acc->rank; r++) {
		MlirValue v = mlirOperationGetOperand(ld, 1 + r);
		int64_t k;
		if (!pb_ir_const_int(v, &k)) {
			acc->sub[r] = PB_KERNEL_SUB_CST;
			acc->cst[r] = k;
			continue;
		}
		acc->sub[r] = role_of(c, v);
		if (acc->sub[r] != PB_KERNEL_SUB_NONE)
			continue;
		size[n] = mlirShapedTypeGetDimSize(mt, r);
		if (!window_sub(c, v, size[n], r, acc, &mx[n]))
			return 0;
		n++;
	}
	if (!n || !window_cond(mlirOperationGetOperand(sel, 0), mx, size, n,
			       seen, 8))
		return 0;
	for (int i = 0; i < n; i++)
		if (seen[i] != 3)
			return 0;
	return 1;
}

/* An affine.load "op" of "c" whose subscripts are band dimensions,
 * window counters, constants or sums S d + t + off of a band dimension
 * times a stride S >= 1 and a window counter (a convolution without
 * padding), or S d (a strided 1x1 convolution) into "acc". */
static int window_load(const struct pb_kernel_contraction *c,
		       MlirOperation op, struct pb_kernel_access *acc)
{
	MlirAffineMap map = mlirAffineMapAttrGetValue(pb_ir_attr(op, "map"));
	memset(acc, 0, sizeof(*acc));
	acc->op = op;
	acc->mem = mlirOperationGetOperand(op, 0);
	acc->rank = (int)mlirAffineMapGetNumResults(map);
	if (acc->rank > PB_KERNEL_MAXR || mlirAffineMapGetNumSymbols(map))
		return 0;
	for (int r = 0; r < acc->rank; r++) {
		MlirAffineExpr e = mlirAffineMapGetResult(map, r);
		int64_t k = 0;
		if (mlirAffineExprIsAConstant(e)) {
			acc->sub[r] = PB_KERNEL_SUB_CST;
			acc->cst[r] = mlirAffineConstantExprGetValue(e);
			continue;
		}
		if (mlirAffineExprIsADim(e)) {
			acc->sub[r] = role_of(c, mlirOperationGetOperand(
				op, 1 + mlirAffineDimExprGetPosition(e)));
			if (acc->sub[r] == PB_KERNEL_SUB_NONE)
				return 0;
			continue;
		}
		/* S d + t + off: one band dimension (coefficient S >= 1)
		   and one window counter (coefficient 1) among the map's
		   dimensions; or S d alone, S > 1 */
		int64_t cs[PB_KERNEL_MAXD + 8] = {0};
		int nd = (int)mlirAffineMapGetNumDims(map), pos[2], np = 0;
		if (nd > PB_KERNEL_MAXD + 8 || !linear_n(e, nd, cs, &k))
			return 0;
		for (int i = 0; i < nd; i++)
			if (cs[i] && (np == 2 || cs[i] < 1))
				return 0;
			else if (cs[i])
				pos[np++] = i;
		if (!np)
			return 0;
		int a = role_of(c, mlirOperationGetOperand(op, 1 + pos[0]));
		if (np == 1 && a >= 0 && cs[pos[0]] > 1 && !k) {
			acc->sub[r] = a;
			acc->str[r] = cs[pos[0]];
			continue;
		}
		if (np != 2)
			return 0;
		int b = role_of(c, mlirOperationGetOperand(op, 1 + pos[1]));
		int64_t sa = cs[pos[0]], sb = cs[pos[1]];
		if (b >= 0) {
			int x = a;
			a = b;
			b = x;
			sa = sb;
			sb = cs[pos[0]];
		}
		if (a < 0 || b > PB_KERNEL_SUB_TAP || sb != 1 ||
		    b <= PB_KERNEL_SUB_TAP - c->ntap)
			return 0;
		acc->sub[r] = a;
		acc->tap[r] = 1 + PB_KERNEL_SUB_TAP - b;
		acc->off[r] = k;
		acc->str[r] = sa;
	}
	return 1;
}

/* Is "x" a window read (a subscript moved by a window counter)? */
static int is_window(const struct pb_kernel_access *x)
{
	for (int r = 0; r < x->rank; r++)
		if (x->tap[r])
			return 1;
	return 0;
}

/* The access of operand load "op" (operand_load) of "c" into "acc". */
static int operand_access(const struct pb_kernel_contraction *c,
			  MlirOperation op, struct pb_kernel_access *acc)
{
	if (pb_ir_op_is(op, "arith.select"))
		return window_access(c, op, acc);
	return window_load(c, op, acc);
}

/* How often window counter "t" subscripts "a": as a subscript of its
 * own or within a window subscript. */
static int tap_uses(const struct pb_kernel_access *a, int t)
{
	int n = 0;
	for (int r = 0; r < a->rank; r++)
		n += a->sub[r] == PB_KERNEL_SUB_TAP - t || a->tap[r] == 1 + t;
	return n;
}

int pb_kernel_is_acc(const struct pb_kernel_contraction *c, MlirOperation op)
{
	int store = pb_ir_op_is(op, "affine.store");
	if (mlirOperationIsNull(op) ||
	    (!store && !pb_ir_op_is(op, "affine.load")))
		return 0;
	MlirValue acc = mlirOperationGetOperand(c->accref, 1);
	if (!mlirValueEqual(mlirOperationGetOperand(op, store), acc))
		return 0;
	if (!mlirOperationIsNull(c->alloca))
		return 1;
	/* in place: the same subscripts as the accumulator's store */
	intptr_t n = mlirOperationGetNumOperands(op) - store;
	if (n != mlirOperationGetNumOperands(c->accref) - 1 ||
	    !mlirAttributeEqual(pb_ir_attr(op, "map"),
				pb_ir_attr(c->accref, "map")))
		return 0;
	for (intptr_t i = 1; i < n; i++)
		if (!mlirValueEqual(mlirOperationGetOperand(op, store + i),
				    mlirOperationGetOperand(c->accref, 1 + i)))
			return 0;
	return 1;
}

/* Is "v" a read of the accumulator of "c"? */
static int reads_acc(const struct pb_kernel_contraction *c, MlirValue v)
{
	return pb_kernel_is_acc(c, def_of(v)) &&
	       pb_ir_op_is(def_of(v), "affine.load");
}

/* Can the strides of "c" be read as pb-mma does (docs/pb-mma.md,
 * "Strided convolutions")? Only A's subscripts by dimensions B does not
 * use may be strided; along C's rows A is read as a view of its last
 * dimension split in (columns / S, S), so that subscript must be A's
 * last, of a multiple of S elements. */
static int strided_ok(const struct pb_kernel_contraction *c, const char **why)
{
	MlirType mt = mlirValueGetType(c->a.mem);
	*why = "the subscripts are not those of C[m,n] += A[m,k] * B[k,n] "
	       "(with batch dimensions)";
	for (int r = 0; r < c->b_.rank; r++)
		if (pb_kernel_stride(&c->b_, r) > 1)
			return 0;
	for (int r = 0; r < c->a.rank; r++) {
		int64_t st = pb_kernel_stride(&c->a, r);
		if (st == 1)
			continue;
		if (c->a.sub[r] < 0 || uses(&c->b_, c->a.sub[r]))
			return 0;
		*why = "a strided convolution's image columns are not its "
		       "input's last dimension, of a multiple of the stride";
		if (c->a.sub[r] == c->m &&
		    (r != c->a.rank - 1 || c->a.rank == PB_KERNEL_MAXR ||
		     mlirShapedTypeGetDimSize(mt, r) % st))
			return 0;
	}
	return 1;
}

/* The reduction loop body of "c": acc[] = acc[] + ext(A) * ext(B). */
static int match_update(struct pb_kernel_contraction *c, const char **why)
{
	struct pb_ir_ops ops = {0};
	MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(
		c->ntap ? c->tloop[c->ntap - 1] : c->kloop, 0));
	MlirOperation st = {NULL};
	int nst = 0;
	pb_ir_block_ops(body, &ops);
	for (int i = 0; i < ops.n; i++)
		if (pb_ir_op_is(ops.v[i], "affine.store")) {
			st = ops.v[i];
			nst++;
		}
	int n = ops.n;
	pb_ir_ops_free(&ops);
	*why = "the reduction loop is not acc += a * b";
	/* a window read adds the clamps and bounds of two subscripts */
	if (nst != 1 || n > (c->ntap ? 32 : 9))
		return 0;
	if (mlirOperationIsNull(c->init)) {
		/* in place from C's contents: the loop's store names C[..] */
		MlirValue m = mlirOperationGetOperand(st, 1);
		if (pb_ir_defined_in(m, c->b.root) ||
		    !mlirTypeIsAF32(mlirShapedTypeGetElementType(
			    mlirValueGetType(m))))
			return 0;
		c->accref = st;
	}
	if (!pb_kernel_is_acc(c, st))
		return 0;
	MlirOperation add = def_of(mlirOperationGetOperand(st, 0));
	if (mlirOperationIsNull(add) || !pb_ir_op_is(add, "arith.addf"))
		return 0;
	int pa = reads_acc(c, mlirOperationGetOperand(add, 0)) ? 1 : 0;
	if (!reads_acc(c, mlirOperationGetOperand(add, 1 - pa)))
		return 0;
	MlirOperation mul = def_of(mlirOperationGetOperand(add, pa));
	if (mlirOperationIsNull(mul) || !pb_ir_op_is(mul, "arith.mulf"))
		return 0;
	MlirOperation la = operand_load(mlirOperationGetOperand(mul, 0));
	MlirOperation lb = operand_load(mlirOperationGetOperand(mul, 1));
	if (mlirOperationIsNull(la) || mlirOperationIsNull(lb))
		return 0;
	if (!operand_access(c, la, &c->a) || !operand_access(c, lb, &c->b_))
		return 0;
	/* the input of a convolution is A (its rows the output pixels) */
	if (is_window(&c->b_) && !is_window(&c->a)) {
		struct pb_kernel_access x = c->a;
		c->a = c->b_;
		c->b_ = x;
	}
	c->elt = mlirShapedTypeGetElementType(mlirValueGetType(c->a.mem));
	c->tc = c->elt;
	MlirType eb = mlirShapedTypeGetElementType(mlirValueGetType(c->b_.mem));
	*why = "the operands are not both f16, bf16 or f32";
	if (!mlirTypeEqual(c->elt, eb) ||
	    !(mlirTypeIsAF16(c->elt) || mlirTypeIsABF16(c->elt) ||
	      mlirTypeIsAF32(c->elt)))
		return 0;
	/* the roles of the band dimensions */
	*why = "the subscripts are not those of C[m,n] += A[m,k] * B[k,n] "
	       "(with batch dimensions)";
	if (uses(&c->a, PB_KERNEL_SUB_K) != 1 || uses(&c->b_, PB_KERNEL_SUB_K) != 1)
		return 0;
	/* a convolution: each window counter moves a subscript of A (a
	   window read, B's subscripts plain) and one of B; A's subscript
	   moved by the window's columns is C's rows (below) */
	*why = "the window loops are not those of a convolution "
	       "(x[.., h + r, w + s] * w[.., r, s])";
	for (int t = 0; t < c->ntap; t++)
		if (tap_uses(&c->a, t) != 1 || tap_uses(&c->b_, t) != 1 ||
		    uses(&c->b_, PB_KERNEL_SUB_TAP - t) != 1 ||
		    is_window(&c->b_))
			return 0;
	*why = "the subscripts are not those of C[m,n] += A[m,k] * B[k,n] "
	       "(with batch dimensions)";
	/* of the dimensions only A uses, C's rows are the one A's last
	   subscript has (contiguous rows of A when it is stored [k][m]);
	   C's columns likewise of B's; the others, like those both use,
	   are batch dimensions (a 1x1 convolution's image rows) */
	c->m = c->n = -1;
	for (int d = 0; d < c->b.n; d++)
		if (uses(&c->a, d) > 1 || uses(&c->b_, d) > 1)
			return 0;
	for (int r = 0; r < c->a.rank; r++) {
		int d = c->a.sub[r];
		if (d >= 0 && !uses(&c->b_, d))
			c->m = d;
	}
	for (int r = 0; r < c->b_.rank; r++) {
		int d = c->b_.sub[r];
		if (d >= 0 && !uses(&c->a, d))
			c->n = d;
	}
	if (c->m < 0 || c->n < 0)
		return 0;
	/* the window's columns move C's rows, when it has columns */
	for (int r = 0; c->ntap && r < c->a.rank; r++)
		if (c->a.tap[r] == c->ntap && c->a.sub[r] != c->m)
			return 0;
	if (!strided_ok(c, why))
		return 0;
	/* in place: C[..], no operand, subscripted by every band dimension
	   once (and constants) */
	struct pb_kernel_access x;
	MlirValue acc = mlirOperationGetOperand(c->accref, 1);
	if (mlirOperationIsNull(c->alloca) &&
	    (!pb_kernel_access_of(c, c->accref, &x) ||
	     uses(&x, PB_KERNEL_SUB_K) || mlirValueEqual(acc, c->a.mem) ||
	     mlirValueEqual(acc, c->b_.mem)))
		return 0;
	for (int d = 0; mlirOperationIsNull(c->alloca) && d < c->b.n; d++)
		if (uses(&x, d) != 1)
			return 0;
	return 1;
}

/* Is affine.load/store "op" (outside the reduction loop of "c") one a
 * fragment can carry: subscripted by band dimensions and constants, not
 * k, each of C's rows and columns at most once? Its access into "x". */
static int fragment_access(const struct pb_kernel_contraction *c,
			   MlirOperation op, struct pb_kernel_access *x)
{
	return pb_kernel_access_of(c, op, x) && !uses(x, PB_KERNEL_SUB_K) &&
	       uses(x, c->m) <= 1 && uses(x, c->n) <= 1;
}

/* Is "op" one the epilogue can apply to a fragment element by element:
 * a pure arith or math operation on scalars? */
static int elementwise(MlirOperation op)
{
	MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
	if (mlirOperationGetNumRegions(op) ||
	    mlirOperationGetNumResults(op) != 1 ||
	    pb_ir_op_is(op, "arith.constant") ||
	    pb_ir_op_is(op, "arith.index_cast"))
		return 0;
	if (!(name.length > 6 && !strncmp(name.data, "arith.", 6)) &&
	    !(name.length > 5 && !strncmp(name.data, "math.", 5)))
		return 0;
	MlirType t = mlirValueGetType(mlirOperationGetResult(op, 0));
	return mlirTypeIsAFloat(t) || mlirTypeIsAInteger(t);
}

/* The operations after the reduction loop: reads and stores indexed by
 * the band (stores by both m and n), the accumulator's read, and
 * element-wise operations; every value they use comes from them or from
 * outside the band. */
static int match_post(struct pb_kernel_contraction *c, struct pb_ir_ops *ops,
		      int from, const char **why)
{
	MlirValue acc = mlirOperationGetOperand(c->accref, 1);
	/* in place, C[..] is stored at the end */
	int stores = mlirOperationIsNull(c->alloca);
	c->npost = 0;
	for (int i = from; i < ops->n; i++) {
		MlirOperation op = ops->v[i];
		struct pb_kernel_access x;
		*why = "the epilogue has an operation tensor-core fragments "
		       "cannot carry";
		if (pb_ir_op_is(op, "affine.yield") ||
		    pb_ir_op_is(op, "memref.dealloc"))
			continue;
		if (c->npost == (int)(sizeof(c->post) / sizeof(c->post[0])))
			return 0;
		if (pb_kernel_is_acc(c, op)) {
			c->post[c->npost++] = op;
			continue;
		}
		/* a scalar temporary: its value is carried along */
		if ((pb_ir_op_is(op, "affine.load") &&
		     pb_kernel_is_local(c, mlirOperationGetOperand(op, 0))) ||
		    (pb_ir_op_is(op, "affine.store") &&
		     pb_kernel_is_local(c, mlirOperationGetOperand(op, 1)))) {
			c->post[c->npost++] = op;
			continue;
		}
		if (pb_ir_op_is(op, "affine.load") ||
		    pb_ir_op_is(op, "affine.store")) {
			if (!fragment_access(c, op, &x))
				return 0;
			if (pb_ir_op_is(op, "affine.store")) {
				if (!uses(&x, c->m) || !uses(&x, c->n))
					return 0;
				stores++;
			}
			c->post[c->npost++] = op;
			continue;
		}
		if (!elementwise(op))
			return 0;
		c->post[c->npost++] = op;
	}
	/* every operand defined in the band comes from the epilogue */
	for (int i = 0; i < c->npost; i++)
		for (int j = 0; j < mlirOperationGetNumOperands(c->post[i]);
		     j++) {
			MlirValue v = mlirOperationGetOperand(c->post[i], j);
			if (!pb_ir_defined_in(v, c->b.root) ||
			    mlirValueEqual(v, acc) || pb_kernel_is_local(c, v))
				continue;
			int ok = role_of(c, v) >= 0;
			for (int p = 0; p < i && !ok; p++)
				ok = mlirOperationEqual(def_of(v), c->post[p]);
			if (!ok)
				return 0;
		}
	*why = "the nest stores no result indexed by C's rows and columns";
	return stores > 0;
}

/* The operations before the initial store "c->init": reads indexed by
 * the band (each of m and n at most once, not k) and element-wise
 * operations on them, ending in the value stored. */
static int match_pre(struct pb_kernel_contraction *c, const char **why)
{
	*why = "the accumulator's initial value is not one tensor-core "
	       "fragments can carry";
	for (int i = 0; i < c->npre; i++) {
		struct pb_kernel_access x;
		MlirOperation op = c->pre[i];
		if (pb_ir_op_is(op, "affine.load") &&
		    (!fragment_access(c, op, &x) || pb_kernel_is_acc(c, op)))
			return 0;
		for (intptr_t j = 0; j < mlirOperationGetNumOperands(op); j++) {
			MlirValue v = mlirOperationGetOperand(op, j);
			int ok = !pb_ir_defined_in(v, c->b.root) ||
				 role_of(c, v) >= 0;
			for (int p = 0; p < i && !ok; p++)
				ok = mlirOperationEqual(def_of(v), c->pre[p]);
			if (!ok)
				return 0;
		}
	}
	return !c->npre ||
	       mlirOperationEqual(def_of(mlirOperationGetOperand(c->init, 0)),
				  c->pre[c->npre - 1]);
}

static const char not_band[] = "not a band of parallel loops";
static const char no_acc[] =
	"no scalar accumulator zeroed before one reduction loop";

int pb_kernel_is_reduction_why(const char *why)
{
	return why && strcmp(why, no_acc) && strcmp(why, not_band);
}

int pb_kernel_contraction_of(MlirOperation nest, struct pb_kernel_contraction *c,
		 const char **why)
{
	struct pb_ir_ops ops = {0};
	int i = 0, ok = 0;
	memset(c, 0, sizeof(*c));
	*why = not_band;
	if (!pb_kernel_band_of(nest, &c->b) || c->b.n < 2)
		return 0;
	for (int d = 0; d < c->b.n; d++)
		if (c->b.lb[d] != 0 || c->b.step[d] != 1)
			return 0;
	pb_ir_block_ops(pb_kernel_band_body(&c->b), &ops);
	*why = no_acc;
	/* scalar temporaries (memref.alloca) of the band first, then
	   acc[] = 0.0: the accumulator, a memref<f32> among them */
	for (i = 0; i < ops.n && pb_ir_op_is(ops.v[i], "memref.alloca"); i++)
		if (!is_local(mlirOperationGetResult(ops.v[i], 0)))
			goto out;
	/* the operations computing the initial value, if not 0 */
	for (; i < ops.n && !pb_ir_op_is(ops.v[i], "affine.store") &&
	       !pb_ir_op_is(ops.v[i], "affine.for");
	     i++)
		if (c->npre == (int)(sizeof(c->pre) / sizeof(c->pre[0])) ||
		    !(pb_ir_op_is(ops.v[i], "affine.load") ||
		      elementwise(ops.v[i])))
			goto out;
		else
			c->pre[c->npre++] = ops.v[i];
	/* no initial store: in place from C's contents */
	int from_c = !c->npre && i < ops.n && pb_ir_op_is(ops.v[i], "affine.for");
	if (from_c)
		;
	else if (i + 2 >= ops.n || !pb_ir_op_is(ops.v[i], "affine.store") ||
		 (!c->npre &&
		  !is_float_zero(mlirOperationGetOperand(ops.v[i], 0))))
		goto out;
	else
		c->init = c->accref = ops.v[i];
	MlirValue acc = mlirOperationIsNull(c->init)
				? (MlirValue){NULL}
				: mlirOperationGetOperand(ops.v[i], 1);
	MlirType at = mlirValueIsNull(acc) ? (MlirType){NULL}
					   : mlirValueGetType(acc);
	if (!mlirValueIsNull(acc) &&
	    !mlirTypeIsAF32(mlirShapedTypeGetElementType(at)))
		goto out;
	if (mlirValueIsNull(acc))
		; /* C's, checked with the loop's store */
	else if (mlirValueIsAOpResult(acc) &&
	    pb_ir_op_is(mlirOpResultGetOwner(acc), "memref.alloca") &&
	    pb_ir_defined_in(acc, c->b.root)) {
		if (!is_local(acc))
			goto out;
		c->alloca = mlirOpResultGetOwner(acc);
	} else if (pb_ir_defined_in(acc, c->b.root)) {
		goto out; /* in place: a buffer from outside the band */
	}
	for (i += !from_c; i < ops.n && pb_ir_op_is(ops.v[i], "arith.constant");
	     i++)
		;
	if (i == ops.n || !pb_ir_op_is(ops.v[i], "affine.for"))
		goto out;
	c->kloop = ops.v[i];
	int64_t lb, ub, step;
	if (pb_ir_const_map(c->kloop, "lowerBoundMap", 1, &lb) ||
	    pb_ir_const_map(c->kloop, "upperBoundMap", 1, &ub) ||
	    mlirOperationGetNumResults(c->kloop))
		goto out;
	step = mlirIntegerAttrGetValueInt(pb_ir_attr(c->kloop, "step"));
	if (lb != 0 || step != 1)
		goto out;
	c->k = ub;
	/* a convolution's window loops, perfectly nested in it */
	for (MlirOperation l = c->kloop; c->ntap < PB_KERNEL_MAXTAP;) {
		MlirBlock lb0 = mlirRegionGetFirstBlock(
			mlirOperationGetRegion(l, 0));
		MlirOperation f = mlirBlockGetFirstOperation(lb0);
		int64_t tl, tu;
		if (mlirOperationIsNull(f) || !pb_ir_op_is(f, "affine.for") ||
		    !mlirOperationEqual(mlirOperationGetNextInBlock(f),
					mlirBlockGetTerminator(lb0)) ||
		    pb_ir_const_map(f, "lowerBoundMap", 1, &tl) ||
		    pb_ir_const_map(f, "upperBoundMap", 1, &tu) || tl != 0 ||
		    mlirIntegerAttrGetValueInt(pb_ir_attr(f, "step")) != 1 ||
		    mlirOperationGetNumResults(f))
			break;
		c->tloop[c->ntap] = f;
		c->tap_ext[c->ntap++] = tu;
		l = f;
	}
	if (!match_update(c, why) || !match_pre(c, why) ||
	    !match_post(c, &ops, i + 1, why))
		goto out;
	ok = 1;
out:
	pb_ir_ops_free(&ops);
	return ok;
}

/* The issue-slot efficiency of a warp tile of fm x fn fragments: its
 * mma.sync per k-step over all the instructions of one, the others being
 * the ldmatrix of its A and B fragments (fm + fn / 2) and a fixed part
 * (the copies, barrier and addressing of the step): read off the SASS of
 * pb's kernels (64x64: 32 HMMA in 107 instructions; 16x8: 1 in about
 * 40). */
static double tile_efficiency(int64_t fm, int64_t fn)
{
	double mma = (double)(fm * fn);
	return mma / (mma + 1.5 * (double)(fm + fn) + 40.0);
}

/* The registers of a thread of a warp tile of fm x fn fragments: 4 per
 * accumulator fragment, the operand fragments, 40 more. */
static int tile_regs(int64_t fm, int64_t fn)
{
	return (int)(4 * fm * fn + 4 * fm + 2 * fn + 40);
}

/* The tensor-core rate of "c"'s operands on "t", flops per second. */
static double tc_rate(const struct pb_target *t,
		      const struct pb_kernel_contraction *c)
{
	return mlirTypeIsAF32(c->tc)	 ? t->tc_tf32_flops
	       : mlirTypeIsABF16(c->tc) ? t->tc_bf16_flops
					 : t->tc_fp16_flops;
}

static int64_t elt_bytes(MlirValue mem)
{
	MlirType e = mlirShapedTypeGetElementType(mlirValueGetType(mem));
	return mlirTypeIsAFloat(e) ? mlirFloatTypeGetWidth(e) / 8 : 4;
}

/* The points of the batch dimensions of "c" (all but C's rows and
 * columns). */
static int64_t batch_points(const struct pb_kernel_contraction *c)
{
	int64_t n = 1;
	for (int d = 0; d < c->b.n; d++)
		if (d != c->m && d != c->n)
			n *= c->b.extent[d];
	return n;
}

/* The elements of one copy of a convolution's input along the image
 * columns (pb-smem's staged window tile): 8, 4 or 2 when the image's
 * width is a multiple of it (whole aligned copies), else 1. */
static int64_t window_copy(const struct pb_kernel_contraction *c)
{
	const struct pb_kernel_access *x = &c->a;
	for (int r = 0; r < x->rank; r++)
		if (x->sub[r] == c->m && r == x->rank - 1) {
			int64_t w = mlirShapedTypeGetDimSize(
				mlirValueGetType(x->mem), r);
			return w % 8 == 0 ? 8 : w % 4 == 0 ? 4 : w % 2 == 0 ? 2 : 1;
		}
	return 1;
}

int pb_kernel_window_rows(const struct pb_kernel_contraction *c)
{
	const struct pb_kernel_access *x = &c->a;
	if (c->ntap != 2)
		return -1;
	for (int r = 0; r < x->rank; r++) {
		int d = x->sub[r];
		if (x->tap[r] == 1 && d >= 0 && d != c->m && d != c->n &&
		    pb_kernel_stride(x, r) == 1 && !uses(&c->b_, d))
			return d;
	}
	return -1;
}

int64_t pb_kernel_mma_warps(const struct pb_kernel_mma_tiles *s)
{
	return (s->bh > 1 ? s->bh : 1) * (s->bm / s->wm) * (s->bn / s->wn);
}

static int64_t elt_bytes(MlirValue mem);

/* The bytes of pb-smem's rings of a convolution's block of tiles "s"
 * staged for all the window's positions in one slot of a k-tile of 16
 * (docs/pb-smem.md, "Convolutions"): the input's KH + bh - 1 rows of
 * BM + KW - 1 pixels (up to 7 before them and 7 after, for the
 * alignment of its copies) and the weights' KH x KW x BN rows, each of
 * 16 channels and 16 bytes of padding. */
static int64_t window_ring_bytes(const struct pb_kernel_contraction *c,
				 const struct pb_kernel_mma_tiles *s)
{
	int64_t kh = c->tap_ext[0], kw = c->tap_ext[1];
	int64_t bh = s->bh > 1 ? s->bh : 1;
	int64_t row = 16 * elt_bytes(c->a.mem) + 16;
	return row * ((kh + bh - 1) * (s->bm + kw + 14) +
		      pb_kernel_taps(c) * s->bn);
}

/* The product of "c" on "t" with tiles "s": its blocks' grid, a block's
 * resources and its occupancy into "sum"; returned, the mma steps of one
 * SM: the blocks it runs one after another (ceil(blocks / SMs)) times a
 * block's fragments, over the warp tile's issue efficiency, times 8 /
 * (resident warps) when fewer than 8 are resident to hide the latency of
 * the pipeline. */
static double sm_steps(const struct pb_target *t,
		       const struct pb_kernel_contraction *c,
		       const struct pb_kernel_mma_tiles *s,
		       struct pb_kernel_summary *sum)
{
	int64_t em = c->b.extent[c->m], en = c->b.extent[c->n];
	int64_t fm = s->wm / PB_KERNEL_FRAG_M, fn = s->wn / PB_KERNEL_FRAG_N;
	int64_t warps = pb_kernel_mma_warps(s);
	int64_t bh = s->bh > 1 ? s->bh : 1;
	pb_kernel_summary_init(sum);
	sum->grid = batch_points(c) / bh * ((em + s->bm - 1) / s->bm) *
		    ((en + s->bn - 1) / s->bn);
	sum->res.threads = (int)(32 * warps);
	sum->res.regs = tile_regs(fm, fn);
	sum->res.smem = 0;
	pb_kernel_summary_occupancy(t, sum);
	int64_t per_sm = (sum->grid + t->sm_count - 1) / t->sm_count;
	int64_t resident = warps * (per_sm < sum->occ.blocks_per_sm
					    ? per_sm
					    : sum->occ.blocks_per_sm);
	double eff = tile_efficiency(fm, fn);
	if (c->ntap) {
		/* a convolution (pb-smem, docs/pb-mma.md "Convolutions"):
		   a k-tile of 16 channels stages the block's input rows
		   with the window's halo once for all KHxKW positions,
		   (KH + bh - 1) x (S BM + KW + 6) pixels (S the stride,
		   bh the block's image rows: the window's rows shared by
		   theirs) (their start aligned) copied vw at a
		   time (a load, its bounds and address, about 6
		   instructions, then a shared store per element), and BN x
		   16 x KHxKW weights (a load and a store each); per
		   position and k step each warp issues its mma, the
		   ldmatrix of its fragments, its share of those copies and
		   of a fixed 40 (barrier, addressing). Read off the SASS of
		   ResNet-50's 3x3 convolutions (bench/RESULTS.md) */
		double mma = (double)(fm * fn), taps = (double)pb_kernel_taps(c);
		double kh = c->ntap > 1 ? (double)c->tap_ext[0] : 1.0;
		double kw = (double)c->tap_ext[c->ntap - 1];
		double vw = (double)window_copy(c);
		double st = (double)pb_kernel_row_stride(c);
		double a = (kh + (double)(bh - 1)) *
			   (st * (double)s->bm + kw + 6.0) * 16.0 *
			   (1.0 + 6.0 / vw);
		/* weights stored k innermost (pb-mma's pb.perm) are
		   16-byte copies, about 2.4 instructions each */
		int kin = c->b_.sub[c->b_.rank - 1] == PB_KERNEL_SUB_K;
		double b = (double)s->bn * 16.0 * taps * (kin ? 0.3 : 2.1);
		double copy = (a + b) / (32.0 * (double)warps * taps);
		eff = mma / (mma + 1.5 * (double)(fm + fn) + copy + 40.0 / taps);
	}
	double steps = (double)per_sm * (double)(fm * fn * warps) / eff;
	/* latency: 8 resident warps hide it. A stride-1 convolution's,
	   by the SM's 4 schedulers: each needs a warp (a tensor core
	   per scheduler), and 4 independent mma in flight to cover an
	   mma's latency (about 4 issues of the tensor pipe), from its
	   warps' fragments: 4 warps of 4 fragments, 2 of 8 (idle
	   schedulers), 16 of 1. (Strided windows keep the plain rule:
	   their copies' cost, by phase, is not priced well enough for
	   the larger tiles this favours.) */
	if (c->ntap && pb_kernel_row_stride(c) == 1) {
		double per = (double)resident / 4.0;
		if (per < 1.0) {
			steps *= 1.0 / per;
			per = 1.0;
		}
		if (per * (double)(fm * fn) < 4.0)
			steps *= 4.0 / (per * (double)(fm * fn));
	} else if (resident < 8)
		steps *= 8.0 / (double)resident;
	return steps;
}

void pb_kernel_mma_predict(const struct pb_target *t,
			   const struct pb_kernel_contraction *c,
			   const struct pb_kernel_mma_tiles *s,
			   struct pb_kernel_summary *sum)
{
	int64_t em = c->b.extent[c->m], en = c->b.extent[c->n];
	int64_t rest = batch_points(c);
	int64_t bm = (em + s->bm - 1) / s->bm, bn = (en + s->bn - 1) / s->bn;
	/* compute: an SM's mma steps, each a fragment's flops over K (the
	   last step whole when masked) at the SM's share of the tensor-core
	   rate */
	double frag_flops = 2.0 * (double)(PB_KERNEL_FRAG_M *
					   PB_KERNEL_FRAG_N *
					   pb_kernel_mma_k(c) *
					   pb_kernel_taps(c));
	double compute = sm_steps(t, c, s, sum) * frag_flops /
			 (tc_rate(t, c) / (double)t->sm_count);
	/* memory: A, B and C once from DRAM; A again for each column of
	   blocks and B for each row of them from L2 */
	int64_t kk = c->k * pb_kernel_taps(c);
	double a = (double)(rest * em * kk * elt_bytes(c->a.mem));
	double b = (double)(rest * en * kk * elt_bytes(c->b_.mem));
	double cc = (double)(rest * em * en * 4);
	double unique = a + b + cc;
	double moved = a * (double)bn + b * (double)bm + cc;
	double memory = unique / (t->dram_bytes_per_s * t->model.dram_efficiency);
	double l2 = moved / (t->dram_bytes_per_s * t->model.l2_over_dram);
	if (l2 > memory)
		memory = l2;
	sum->flops = 2.0 * (double)(rest * em * en * kk);
	sum->bytes = unique;
	sum->predicted_s = t->launch_s + (compute > memory ? compute : memory);
}

/* The size of operand "x"'s buffer along the reduction's subscript. */
static int64_t k_extent(const struct pb_kernel_access *x)
{
	for (int r = 0; r < x->rank; r++)
		if (x->sub[r] == PB_KERNEL_SUB_K)
			return mlirShapedTypeGetDimSize(mlirValueGetType(x->mem),
							r);
	return -1;
}

int pb_kernel_mma_tiles(const struct pb_target *t,
			const struct pb_kernel_contraction *c,
			struct pb_kernel_mma_tiles *s, const char **why)
{
	static const struct pb_kernel_mma_tiles cand[] = {
		{128, 128, 64, 64, 1}, {128, 64, 64, 32, 1}, {64, 64, 32, 32, 1},
		{64, 32, 32, 16, 1},   {32, 32, 16, 16, 1},  {16, 16, 16, 8, 1},
		{16, 8, 16, 8, 1},
		/* C's columns a multiple of 24, not 16 (MobileNetV2's 24
		   and 96 channels, 144 = 6 x 24): three fragments wide */
		{128, 96, 64, 48, 1},  {64, 48, 32, 24, 1},  {64, 24, 32, 24, 1},
		{32, 24, 16, 24, 1},
		/* for blocks of several image rows only (a row of warps
		   each along the image's columns, so one fragment of
		   them on a 7 or 14 wide image): wider rows of warps */
		{16, 64, 16, 32, 1}, {16, 32, 16, 16, 1}, {16, 64, 16, 16, 1},
		{16, 128, 16, 32, 1},
	};
	const size_t nrows_only = 4;
	int64_t em = c->b.extent[c->m], en = c->b.extent[c->n];
	double best_cost = 0;
	int64_t best_area = 0;
	int best = -1;
	/* the last mma step reads past K: zeros there, as both operands
	   end at K (their reads masked, docs/pb-mma.md) */
	*why = pb_kernel_frag_k(c->tc) == 16
		       ? "the reduction length is not a multiple of 16 and an "
			 "operand extends past it"
		       : "the reduction length is not a multiple of 8 and an "
			 "operand extends past it";
	if (c->k % pb_kernel_frag_k(c->tc) &&
	    (k_extent(&c->a) != c->k || k_extent(&c->b_) != c->k))
		return 0;
	*why = "no tile fits C's rows and columns";
	/* a convolution's blocks may cover several image rows (bh, a
	   divisor of the image's rows) when its image is at most two
	   fragments wide (28, 14, 7 columns: wider ones give blocks of
	   64 pixels along a row): more mma for each staged weight and
	   the window's rows shared by the block's (docs/pb-mma.md,
	   "Blocks of several image rows"), where the window's rings
	   still fit a slot of the static shared memory */
	int hd = em <= 2 * PB_KERNEL_FRAG_M ? pb_kernel_window_rows(c) : -1;
	int64_t eh = hd >= 0 ? c->b.extent[hd] : 1;
	size_t ncand = sizeof(cand) / sizeof(cand[0]);
	/* the least predicted time: the fewest mma steps per SM */
	for (size_t ci = 0; ci < ncand * 16; ci++) {
		struct pb_kernel_mma_tiles xt = cand[ci % ncand];
		const struct pb_kernel_mma_tiles *x = &xt;
		struct pb_kernel_summary sum;
		xt.bh = (int64_t)(ci / ncand) + 1;
		if (xt.bh == 1 && ci % ncand >= ncand - nrows_only)
			continue;
		/* three fragments wide only for columns of 24s (masked
		   24-wide blocks of a convolution's 64 channels measured
		   3x the instructions their model gives) */
		if (c->ntap && xt.bn % 24 == 0 && en % 24)
			continue;
		/* a stride-1 window's warp tile at most 4 fragments: its
		   KHxKW positions unrolled over 8 (32x32) took 206
		   registers on ResNet-50's 56x56 layer, which tile_regs
		   does not see */
		if (c->ntap && pb_kernel_row_stride(c) == 1 &&
		    (xt.wm / PB_KERNEL_FRAG_M) * (xt.wn / PB_KERNEL_FRAG_N) > 4)
			continue;
		if (xt.bh > 1 && (eh % xt.bh || pb_kernel_mma_warps(x) > 16 ||
				  window_ring_bytes(c, x) > t->smem_per_block))
			continue;
		/* C's rows and columns need not fill the last block: its
		   fragments are masked (docs/pb-mma.md), but a block tile
		   larger than C rounded up to fragments is only waste */
		if ((em % x->bm && x->bm > PB_KERNEL_FRAG_M * ((em + 15) / 16)) ||
		    (en % x->bn && x->bn > PB_KERNEL_FRAG_N * ((en + 7) / 8)))
			continue;
		/* tensor-core tiles may use every register */
		if (tile_regs(x->wm / PB_KERNEL_FRAG_M,
			      x->wn / PB_KERNEL_FRAG_N) > t->max_regs_per_thread)
			continue;
		/* at equal cost, the tile with the fewest masked points */
		double cost = sm_steps(t, c, x, &sum);
		int64_t area = (em + x->bm - 1) / x->bm * x->bm *
			       ((en + x->bn - 1) / x->bn * x->bn);
		if (best < 0 || cost < best_cost ||
		    (cost == best_cost && area < best_area)) {
			best = 1;
			*s = xt;
			best_cost = cost;
			best_area = area;
		}
	}
	return best > 0;
}

int64_t pb_kernel_frag_k(MlirType elt)
{
	return mlirTypeIsAF32(elt) ? 8 : 16;
}

int64_t pb_kernel_taps(const struct pb_kernel_contraction *c)
{
	int64_t n = 1;
	for (int t = 0; t < c->ntap; t++)
		n *= c->tap_ext[t];
	return n;
}

int64_t pb_kernel_mma_k(const struct pb_kernel_contraction *c)
{
	int64_t fk = pb_kernel_frag_k(c->tc);
	return (c->k + fk - 1) / fk * fk;
}

const char *pb_kernel_mma_kind(MlirType elt)
{
	return mlirTypeIsAF32(elt) ? "tf32" : mlirTypeIsAF16(elt) ? "f16" : "bf16";
}

int pb_kernel_mma_operands(struct pb_kernel_contraction *c,
			   enum pb_precision p, const char **why)
{
	MlirContext ctx = mlirTypeGetContext(c->elt);
	c->tc = c->elt;
	if (!mlirTypeIsAF32(c->elt))
		return 1;
	*why = "f32 operands, computed exactly (--precision=tf32, fp16 or "
	       "bf16 runs them on tensor cores)";
	if (p == PB_PRECISION_FP16)
		c->tc = mlirF16TypeGet(ctx);
	else if (p == PB_PRECISION_BF16)
		c->tc = mlirBF16TypeGet(ctx);
	if (p == PB_PRECISION_FP32)
		return 0;
	/* pb-mma's window mask is 16x16, a tf32 fragment 16x8
	   (docs/pb-mma.md, "Not done yet") */
	*why = "a convolution's window on tf32 tensor cores (not done: "
	       "--precision=fp16 or bf16 runs it)";
	return !(mlirTypeIsAF32(c->tc) && c->ntap);
}

int pb_kernel_mma_candidate(MlirOperation nest, const struct pb_target *t,
			    enum pb_precision p, const char **kind,
			    const char **why)
{
	struct pb_kernel_contraction c;
	struct pb_kernel_mma_tiles s;
	if (!pb_kernel_contraction_of(nest, &c, why) ||
	    !pb_kernel_mma_operands(&c, p, why))
		return 0;
	*kind = pb_kernel_mma_kind(c.tc);
	return pb_kernel_mma_tiles(t, &c, &s, why);
}

void pb_kernel_mma_marked(MlirModule m, struct pb_ir_ops *funcs,
			  struct pb_ir_ops *nests)
{
	struct pb_ir_ops all = {0};
	pb_ir_block_ops(mlirModuleGetBody(m), &all);
	for (int i = 0; i < all.n; i++) {
		struct pb_ir_ops ops = {0};
		if (!pb_ir_op_is(all.v[i], "func.func") ||
		    !pb_contract_is_kernel(all.v[i]))
			continue;
		pb_ir_block_ops(pb_ir_entry_block(all.v[i]), &ops);
		for (int j = 0; j < ops.n; j++)
			if (!mlirAttributeIsNull(pb_ir_attr(ops.v[j],
							    PB_ATTR_MMA))) {
				pb_ir_ops_push(funcs, all.v[i]);
				pb_ir_ops_push(nests, ops.v[j]);
			}
		pb_ir_ops_free(&ops);
	}
	pb_ir_ops_free(&all);
}

void pb_kernel_nest_number(MlirModule m, MlirOperation nest, int *k, int *n)
{
	MlirOperation func = mlirOperationGetParentOperation(nest);
	*k = *n = 0;
	for (MlirOperation f = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
	     !mlirOperationIsNull(f) && !mlirOperationEqual(f, func);
	     f = mlirOperationGetNextInBlock(f))
		*k += pb_ir_op_is(f, "func.func") && pb_contract_is_kernel(f);
	for (MlirOperation o = mlirBlockGetFirstOperation(
		     mlirOperationGetBlock(nest));
	     !mlirOperationEqual(o, nest); o = mlirOperationGetNextInBlock(o))
		*n += pb_ir_op_is(o, "affine.parallel");
}

int pb_kernel_transfer_dim(MlirOperation op, int d)
{
	MlirAffineMap m =
		mlirAffineMapAttrGetValue(pb_ir_attr(op, "permutation_map"));
	MlirAffineExpr e = mlirAffineMapGetResult(m, d);
	return mlirAffineExprIsADim(e) ? (int)mlirAffineDimExprGetPosition(e)
				       : -1;
}
