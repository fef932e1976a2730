/* A partial tile's points computed without their guards (docs/pb-smem.md,
 * "Partial tiles").
 *
 * pb-tile gives a tile that overhangs the band (7x7 maps in tiles of 8)
 * a version of its own in which every point is guarded: an affine.if
 * marked pb.point (ir/contract.h) whose condition is the point's being
 * inside the band. In the reduction the guards keep the points apart, so
 * each point loads its operands again (twice the loads of a full tile,
 * predicated by ptxas). Once the operands are staged, a guarded body
 * that reads only workgroup memory and the thread's private allocas and
 * writes only an alloca, at subscripts that name the point, can run for
 * every point of the tile: the staged tile covers the whole block tile
 * (zeros or halo past the band), and what a point outside the band
 * computes lands in accumulator entries of its own, which the guarded
 * initialization and store never read nor write out. The points then
 * share their loads as a full tile's do. */
#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "ir/contract.h"
#include "smem/internal.h"

/* The values an index takes, both ends included. */
struct range {
	int64_t lo, hi;
};

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* The range of "e" over the ranges "in" of its dims and then symbols
 * ("nd" dims) into "r"; 0 when unknown (a product of two non-constants,
 * a division by a non-positive or non-constant value). */
static int expr_range(MlirAffineExpr e, int nd, const struct range *in,
		      struct range *r)
{
	if (mlirAffineExprIsAConstant(e)) {
		r->lo = r->hi = mlirAffineConstantExprGetValue(e);
		return 1;
	}
	if (mlirAffineExprIsADim(e)) {
		*r = in[mlirAffineDimExprGetPosition(e)];
		return 1;
	}
	if (mlirAffineExprIsASymbol(e)) {
		*r = in[nd + mlirAffineSymbolExprGetPosition(e)];
		return 1;
	}
	if (!mlirAffineExprIsABinary(e))
		return 0;
	struct range a, b;
	if (!expr_range(mlirAffineBinaryOpExprGetLHS(e), nd, in, &a) ||
	    !expr_range(mlirAffineBinaryOpExprGetRHS(e), nd, in, &b))
		return 0;
	if (mlirAffineExprIsAAdd(e)) {
		r->lo = a.lo + b.lo;
		r->hi = a.hi + b.hi;
		return 1;
	}
	if (b.lo != b.hi)
		return 0;
	int64_t c = b.lo;
	if (mlirAffineExprIsAMul(e)) {
		r->lo = c >= 0 ? a.lo * c : a.hi * c;
		r->hi = c >= 0 ? a.hi * c : a.lo * c;
		return 1;
	}
	if (c <= 0)
		return 0;
	if (mlirAffineExprIsAFloorDiv(e)) {
		r->lo = floor_div(a.lo, c);
		r->hi = floor_div(a.hi, c);
		return 1;
	}
	if (mlirAffineExprIsACeilDiv(e)) {
		r->lo = -floor_div(-a.lo, c);
		r->hi = -floor_div(-a.hi, c);
		return 1;
	}
	if (mlirAffineExprIsAMod(e)) {
		if (floor_div(a.lo, c) == floor_div(a.hi, c)) {
			r->lo = a.lo - c * floor_div(a.lo, c);
			r->hi = a.hi - c * floor_div(a.hi, c);
		} else {
			r->lo = 0;
			r->hi = c - 1;
		}
		return 1;
	}
	return 0;
}

static int value_range(MlirValue v, struct range *r, int depth);

/* The values an expression is written over (affine.apply composed away)
 * and their ranges. */
struct leaves {
	int n;
	MlirValue v[24];
	struct range r[24];
};

static int subst(MlirAffineExpr e, int nd, MlirOperation op, int first,
		 struct leaves *l, MlirAffineExpr *out, int depth);

/* Index value "v" as an expression over the leaves "l": an affine.apply
 * composed, anything else a dimension of its own (value_range). */
static int value_expr(MlirValue v, struct leaves *l, MlirContext c,
		      MlirAffineExpr *e, int depth)
{
	if (depth > 16)
		return 0;
	if (mlirValueIsAOpResult(v) &&
	    pb_ir_op_is(mlirOpResultGetOwner(v), "affine.apply")) {
		MlirOperation def = mlirOpResultGetOwner(v);
		MlirAffineMap map =
			mlirAffineMapAttrGetValue(pb_ir_attr(def, "map"));
		return subst(mlirAffineMapGetResult(map, 0),
			     (int)mlirAffineMapGetNumDims(map), def, 0, l, e,
			     depth + 1);
	}
	int i;
	for (i = 0; i < l->n && !mlirValueEqual(l->v[i], v); i++)
		;
	if (i == l->n) {
		if (l->n == (int)(sizeof(l->v) / sizeof(l->v[0])) ||
		    !value_range(v, &l->r[i], depth + 1))
			return 0;
		l->v[l->n++] = v;
	}
	*e = mlirAffineDimExprGet(c, i);
	return 1;
}

/* "e", over the operands of "op" from "first" on ("nd" dims, then
 * symbols), as an expression over the leaves "l" into "*out". */
static int subst(MlirAffineExpr e, int nd, MlirOperation op, int first,
		 struct leaves *l, MlirAffineExpr *out, int depth)
{
	MlirContext c = mlirAffineExprGetContext(e);
	if (mlirAffineExprIsAConstant(e)) {
		*out = e;
		return 1;
	}
	if (mlirAffineExprIsADim(e) || mlirAffineExprIsASymbol(e)) {
		intptr_t k = mlirAffineExprIsADim(e)
				     ? mlirAffineDimExprGetPosition(e)
				     : nd + mlirAffineSymbolExprGetPosition(e);
		if (first + k >= mlirOperationGetNumOperands(op))
			return 0;
		return value_expr(mlirOperationGetOperand(op, first + k), l, c,
				  out, depth);
	}
	MlirAffineExpr a, b;
	if (!mlirAffineExprIsABinary(e) ||
	    !subst(mlirAffineBinaryOpExprGetLHS(e), nd, op, first, l, &a,
		   depth) ||
	    !subst(mlirAffineBinaryOpExprGetRHS(e), nd, op, first, l, &b,
		   depth))
		return 0;
	*out = mlirAffineExprIsAAdd(e)	     ? mlirAffineAddExprGet(a, b)
	       : mlirAffineExprIsAMul(e)     ? mlirAffineMulExprGet(a, b)
	       : mlirAffineExprIsAMod(e)     ? mlirAffineModExprGet(a, b)
	       : mlirAffineExprIsAFloorDiv(e) ? mlirAffineFloorDivExprGet(a, b)
					      : mlirAffineCeilDivExprGet(a, b);
	return 1;
}

/* The range of result "res" of affine map attribute "name" of "op" over
 * its operands from "first" on, the affine.apply among them composed and
 * the whole simplified (so that (k + i) - k is i). */
static int map_range(MlirOperation op, const char *name, int first, int res,
		     struct range *r, int depth)
{
	MlirAttribute a = pb_ir_attr(op, name);
	struct leaves l;
	MlirAffineExpr e;
	if (mlirAttributeIsNull(a) || !mlirAttributeIsAAffineMap(a))
		return 0;
	MlirAffineMap map = mlirAffineMapAttrGetValue(a);
	l.n = 0;
	if (!subst(mlirAffineMapGetResult(map, res),
		   (int)mlirAffineMapGetNumDims(map), op, first, &l, &e, depth))
		return 0;
	e = mlirSimplifyAffineExpr(e, (uint32_t)l.n, 0);
	return expr_range(e, l.n, l.r, r);
}

/* The range of index value "v": a constant, a counter of a loop with
 * constant bounds, an affine.apply, affine.min or affine.max of such;
 * 0 when unknown. */
static int value_range(MlirValue v, struct range *r, int depth)
{
	int64_t c, lb[PB_KERNEL_MAXD], step[PB_KERNEL_MAXD],
		count[PB_KERNEL_MAXD];
	MlirValue iv[PB_KERNEL_MAXD];
	if (depth > 16)
		return 0;
	if (!pb_ir_const_int(v, &c)) {
		r->lo = r->hi = c;
		return 1;
	}
	if (mlirValueIsABlockArgument(v)) {
		MlirOperation o = mlirBlockGetParentOperation(
			mlirBlockArgumentGetOwner(v));
		if (pb_ir_op_is(o, "affine.for")) {
			int64_t n = pb_smem_for_trip(o, &lb[0], &step[0]);
			if (n < 1)
				return 0;
			r->lo = lb[0];
			r->hi = lb[0] + step[0] * (n - 1);
			return 1;
		}
		int nd = pb_ir_parallel_dims(o, PB_KERNEL_MAXD, lb, step, count,
					     iv);
		for (int d = 0; d < nd; d++)
			if (mlirValueEqual(iv[d], v) && count[d] > 0) {
				r->lo = lb[d];
				r->hi = lb[d] + step[d] * (count[d] - 1);
				return 1;
			}
		return 0;
	}
	MlirOperation def = mlirOpResultGetOwner(v);
	if (pb_ir_op_is(def, "affine.apply"))
		return map_range(def, "map", 0, 0, r, depth);
	int mn = pb_ir_op_is(def, "affine.min");
	if (!mn && !pb_ir_op_is(def, "affine.max"))
		return 0;
	MlirAffineMap map = mlirAffineMapAttrGetValue(pb_ir_attr(def, "map"));
	for (intptr_t i = 0; i < mlirAffineMapGetNumResults(map); i++) {
		struct range x;
		if (!map_range(def, "map", 0, (int)i, &x, depth))
			return 0;
		if (!i)
			*r = x;
		r->lo = mn ? (x.lo < r->lo ? x.lo : r->lo)
			   : (x.lo > r->lo ? x.lo : r->lo);
		r->hi = mn ? (x.hi < r->hi ? x.hi : r->hi)
			   : (x.hi > r->hi ? x.hi : r->hi);
	}
	return 1;
}

/* Does access "op" (a load or store of buffer operand "mem", its
 * subscripts the operands from "first" on, through the map "map" when
 * affine, "len" elements along the last dimension) stay inside its
 * buffer whatever the loops around it, guards aside, do? */
static int inside(MlirOperation op, int mem, int first, int len)
{
	MlirType t = mlirValueGetType(mlirOperationGetOperand(op, mem));
	intptr_t rank = mlirShapedTypeGetRank(t);
	int affine = !mlirAttributeIsNull(pb_ir_attr(op, "map"));
	if (!affine &&
	    mlirOperationGetNumOperands(op) != first + rank)
		return 0;
	for (intptr_t d = 0; d < rank; d++) {
		struct range r;
		int64_t n = mlirShapedTypeGetDimSize(t, d);
		if (mlirShapedTypeIsDynamicSize(n) ||
		    !(affine ? map_range(op, "map", first, (int)d, &r, 0)
			     : value_range(mlirOperationGetOperand(op, first + d),
					   &r, 0)) ||
		    r.lo < 0 || r.hi + (d == rank - 1 ? len - 1 : 0) >= n)
			return 0;
	}
	return 1;
}

/* The elements a vector load reads along the last dimension. */
static int vector_len(MlirOperation op)
{
	MlirType vt = mlirValueGetType(mlirOperationGetResult(op, 0));
	intptr_t r = mlirShapedTypeGetRank(vt);
	return (int)mlirShapedTypeGetDimSize(vt, r - 1);
}

/* Is "v" a thread's private buffer (a memref.alloca)? */
static int is_alloca(MlirValue v)
{
	return mlirValueIsAOpResult(v) &&
	       pb_ir_op_is(mlirOpResultGetOwner(v), "memref.alloca");
}

/* Is "v" a buffer the thread may read anywhere in: workgroup memory (a
 * staged tile) or an alloca? */
static int readable(MlirValue v)
{
	return pb_kernel_is_workgroup(mlirValueGetType(v)) || is_alloca(v);
}

/* Does store "st" (operand 1 its buffer, its subscripts after it) write
 * an alloca at subscripts among which every value of "ivs" is? */
static int point_store(MlirOperation st, const MlirValue *ivs, int n)
{
	if (!is_alloca(mlirOperationGetOperand(st, 1)))
		return 0;
	intptr_t no = mlirOperationGetNumOperands(st);
	for (int i = 0; i < n; i++) {
		intptr_t k;
		for (k = 2; k < no; k++)
			if (mlirValueEqual(mlirOperationGetOperand(st, k),
					   ivs[i]))
				break;
		if (k == no)
			return 0;
	}
	return 1;
}

/* May every operation of "b" (and of the blocks in it) run for a point
 * outside the band: reads of readable() buffers, pure arithmetic, stores
 * by point_store()? */
static int harmless(MlirBlock b, const MlirValue *ivs, int n)
{
	for (MlirOperation op = mlirBlockGetFirstOperation(b);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		if (pb_ir_op_is(op, "affine.load") ||
		    pb_ir_op_is(op, "memref.load")) {
			if (!readable(mlirOperationGetOperand(op, 0)) ||
			    !inside(op, 0, 1, 1))
				return 0;
		} else if (pb_ir_op_is(op, "affine.vector_load")) {
			if (!readable(mlirOperationGetOperand(op, 0)) ||
			    !inside(op, 0, 1, vector_len(op)))
				return 0;
		} else if (pb_ir_op_is(op, "affine.store") ||
			   pb_ir_op_is(op, "memref.store")) {
			if (!point_store(op, ivs, n) || !inside(op, 1, 2, 1))
				return 0;
		} else if (pb_ir_op_is(op, "affine.for")) {
			if (!harmless(pb_smem_body(op), ivs, n))
				return 0;
		} else if (!pb_ir_op_is(op, "affine.yield") &&
			   !pb_smem_is_pure(op)) {
			return 0;
		}
	}
	return 1;
}

/* Can the guard "g" go: marked pb.point, no else, its condition on
 * values from outside the loops around it but the point loops' counters
 * (affine.for ivs, into "ivs"), its body harmless()? */
static int removable(MlirOperation g)
{
	MlirValue ivs[2 * PB_KERNEL_MAXD];
	int n = 0;
	if (mlirAttributeIsNull(pb_ir_attr(g, PB_ATTR_POINT)) ||
	    mlirRegionIsNull(mlirOperationGetRegion(g, 1)) ||
	    !mlirBlockIsNull(
		    mlirRegionGetFirstBlock(mlirOperationGetRegion(g, 1))))
		return 0;
	for (intptr_t i = 0; i < mlirOperationGetNumOperands(g); i++) {
		MlirValue v = mlirOperationGetOperand(g, i);
		if (!mlirValueIsABlockArgument(v))
			return 0;
		MlirOperation owner = mlirBlockGetParentOperation(
			mlirBlockArgumentGetOwner(v));
		if (pb_ir_op_is(owner, "affine.parallel"))
			continue;
		if (!pb_ir_op_is(owner, "affine.for") ||
		    n == (int)(sizeof(ivs) / sizeof(ivs[0])))
			return 0;
		ivs[n++] = v;
	}
	return harmless(pb_smem_body(g), ivs, n);
}

/* Is guard "g" in a reduction: inside a loop (below the thread's
 * parallel loops) that is none of its point loops? The guards of the
 * initialization and the store of a partial tile keep theirs: they cost
 * a branch per point once, not per step of the reduction. */
static int in_reduction(MlirOperation g)
{
	for (MlirOperation p = mlirOperationGetParentOperation(g);
	     !mlirOperationIsNull(p) && !pb_ir_op_is(p, "affine.parallel");
	     p = mlirOperationGetParentOperation(p)) {
		if (!pb_ir_op_is(p, "affine.for"))
			continue;
		MlirValue iv = mlirBlockGetArgument(pb_smem_body(p), 0);
		intptr_t i, n = mlirOperationGetNumOperands(g);
		for (i = 0; i < n; i++)
			if (mlirValueEqual(mlirOperationGetOperand(g, i), iv))
				break;
		if (i == n)
			return 1;
	}
	return 0;
}

/* Move the body of guard "g" before it and erase it. */
static void unguard(MlirOperation g)
{
	MlirBlock b = pb_smem_body(g);
	MlirOperation op = mlirBlockGetFirstOperation(b);
	while (!mlirOperationIsNull(op) && !pb_ir_op_is(op, "affine.yield")) {
		MlirOperation next = mlirOperationGetNextInBlock(op);
		mlirOperationMoveBefore(op, g);
		op = next;
	}
	mlirOperationDestroy(g);
}

int pb_smem_unguard(MlirModule m)
{
	struct pb_ir_ops ifs = {0};
	pb_ir_collect(mlirModuleGetOperation(m), "affine.if", &ifs);
	for (int i = 0; i < ifs.n; i++)
		if (in_reduction(ifs.v[i]) && removable(ifs.v[i]))
			unguard(ifs.v[i]);
	pb_ir_ops_free(&ifs);
	return PB_OK;
}
