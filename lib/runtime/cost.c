/* Static cost estimates of pb.kernel functions for pb-prof: floating-point
 * operations from the loop nests (trip counts times the arithmetic ops in
 * the body) and bytes from the memref arguments of a call. Estimates, not
 * counts: see docs/pb-prof.md for the rules.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "ir/contract.h"
#include "ir/ir.h"
#include "runtime/runtime.h"

/* Float binary/unary arith ops that count one flop per element. */
static const char *arith_flops[] = {
	"arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.remf",
	"arith.negf", "arith.maximumf", "arith.minimumf", "arith.maxnumf",
	"arith.minnumf", "arith.cmpf", NULL};

/* The number of elements of "t": 1 for a scalar, the product of the
 * static dimensions of a shaped type. */
static double numel(MlirType t)
{
	if (!mlirTypeIsAShaped(t) || !mlirShapedTypeHasRank(t))
		return 1;
	double n = 1;
	for (intptr_t i = 0; i < mlirShapedTypeGetRank(t); i++) {
		int64_t d = mlirShapedTypeGetDimSize(t, i);
		n *= d < 0 ? 1 : (double)d;
	}
	return n;
}

/* The element type of "t", or "t" when it is not shaped. */
static MlirType elem(MlirType t)
{
	return mlirTypeIsAShaped(t) ? mlirShapedTypeGetElementType(t) : t;
}

/* The flops of one execution of "op" (not counting nested regions). */
static double op_flops(MlirOperation op)
{
	MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
	MlirType t = mlirOperationGetNumResults(op)
		? mlirValueGetType(mlirOperationGetResult(op, 0))
		: (MlirType){NULL};
	if (pb_ir_op_is(op, "arith.cmpf") && mlirOperationGetNumOperands(op))
		t = mlirValueGetType(mlirOperationGetOperand(op, 0));
	if (mlirTypeIsNull(t))
		return 0;
	if (pb_ir_op_is(op, "vector.contract") &&
	    mlirOperationGetNumOperands(op) >= 3) {
		double a = numel(mlirValueGetType(mlirOperationGetOperand(op, 0)));
		double b = numel(mlirValueGetType(mlirOperationGetOperand(op, 1)));
		return 2 * sqrt(a * b * numel(t));
	}
	if (!mlirTypeIsAFloat(elem(t)))
		return 0;
	if (pb_ir_op_is(op, "math.fma") || pb_ir_op_is(op, "vector.fma"))
		return 2 * numel(t);
	for (const char **a = arith_flops; *a; a++)
		if (pb_ir_op_is(op, *a))
			return numel(t);
	if (name.length > 5 && !strncmp(name.data, "math.", 5))
		return numel(t);
	return 0;
}

/* The value of result "r" of map "m" applied to "ops" as
 * "base operand + constant": *v is the operand (null value for a pure
 * constant) and *c the constant. Returns 0 when "r" has another form. */
static int linear(MlirAffineMap m, intptr_t r, MlirOperation op, int first,
		  MlirValue *v, int64_t *c)
{
	MlirAffineExpr e = mlirAffineMapGetResult(m, r), x = e;
	*c = 0;
	*v = (MlirValue){NULL};
	if (mlirAffineExprIsAAdd(e)) {
		MlirAffineExpr l = mlirAffineBinaryOpExprGetLHS(e);
		MlirAffineExpr rr = mlirAffineBinaryOpExprGetRHS(e);
		if (!mlirAffineExprIsAConstant(rr))
			return 0;
		*c = mlirAffineConstantExprGetValue(rr);
		x = l;
	}
	if (mlirAffineExprIsAConstant(x)) {
		*c += mlirAffineConstantExprGetValue(x);
		return 1;
	}
	intptr_t pos;
	if (mlirAffineExprIsADim(x))
		pos = mlirAffineDimExprGetPosition(x);
	else if (mlirAffineExprIsASymbol(x))
		pos = mlirAffineMapGetNumDims(m) + mlirAffineSymbolExprGetPosition(x);
	else
		return 0;
	if (first + pos >= mlirOperationGetNumOperands(op))
		return 0;
	*v = mlirOperationGetOperand(op, first + pos);
	return 1;
}

/* The trip count of a loop from lower bound results [l0, l1) of map "lb"
 * (operands from "lf") and upper bound results [u0, u1) of "ub" (operands
 * from "uf") of "op", with step "step": the lower bound is the max of its
 * results, the upper bound the min of its. Pairs of results that differ
 * by a constant give the count; otherwise the pair is skipped (1 when no
 * pair is usable). */
static double trips(MlirOperation op, MlirAffineMap lb, int lf, int l0, int l1,
		    MlirAffineMap ub, int uf, int u0, int u1, int64_t step)
{
	double best = -1;
	for (int i = l0; i < l1; i++)
		for (int j = u0; j < u1; j++) {
			MlirValue a, b;
			int64_t ca, cb;
			if (!linear(lb, i, op, lf, &a, &ca) ||
			    !linear(ub, j, op, uf, &b, &cb))
				continue;
			if (mlirValueIsNull(a) != mlirValueIsNull(b) ||
			    (!mlirValueIsNull(a) && !mlirValueEqual(a, b)))
				continue;
			double n = cb > ca ? (double)((cb - ca + step - 1) / step) : 0;
			if (best < 0 || n < best)
				best = n;
		}
	return best < 0 ? 1 : best;
}

/* The integer value of attribute "a" (IntegerAttr), or "dflt". */
static int64_t int_attr(MlirAttribute a, int64_t dflt)
{
	return !mlirAttributeIsNull(a) && mlirAttributeIsAInteger(a)
		? mlirIntegerAttrGetValueInt(a) : dflt;
}

/* Iterations of one execution of affine.for "op". */
static double for_trips(MlirOperation op)
{
	MlirAttribute l = pb_ir_attr(op, "lowerBoundMap");
	MlirAttribute u = pb_ir_attr(op, "upperBoundMap");
	if (mlirAttributeIsNull(l) || mlirAttributeIsNull(u))
		return 1;
	MlirAffineMap lb = mlirAffineMapAttrGetValue(l);
	MlirAffineMap ub = mlirAffineMapAttrGetValue(u);
	int64_t step = int_attr(pb_ir_attr(op, "step"), 1);
	int nl = (int)mlirAffineMapGetNumInputs(lb);
	return trips(op, lb, 0, 0, (int)mlirAffineMapGetNumResults(lb), ub, nl,
		     0, (int)mlirAffineMapGetNumResults(ub), step > 0 ? step : 1);
}

/* Entry "i" of the group-size attribute "a" (dense i32), or 1. */
static int group(MlirAttribute a, intptr_t i)
{
	if (mlirAttributeIsNull(a) || !mlirAttributeIsADenseElements(a) ||
	    i >= mlirElementsAttrGetNumElements(a))
		return 1;
	return mlirDenseElementsAttrGetInt32Value(a, i);
}

/* Iterations of one execution of affine.parallel "op" (all dimensions). */
static double parallel_trips(MlirOperation op)
{
	MlirAttribute l = pb_ir_attr(op, "lowerBoundsMap");
	MlirAttribute u = pb_ir_attr(op, "upperBoundsMap");
	MlirAttribute lg = pb_ir_attr(op, "lowerBoundsGroups");
	MlirAttribute ug = pb_ir_attr(op, "upperBoundsGroups");
	MlirAttribute steps = pb_ir_attr(op, "steps");
	if (mlirAttributeIsNull(l) || mlirAttributeIsNull(u) ||
	    mlirAttributeIsNull(steps) || !mlirAttributeIsAArray(steps))
		return 1;
	MlirAffineMap lb = mlirAffineMapAttrGetValue(l);
	MlirAffineMap ub = mlirAffineMapAttrGetValue(u);
	int nl = (int)mlirAffineMapGetNumInputs(lb), lo = 0, uo = 0;
	double n = 1;
	for (intptr_t d = 0; d < mlirArrayAttrGetNumElements(steps); d++) {
		int64_t s = int_attr(mlirArrayAttrGetElement(steps, d), 1);
		int gl = group(lg, d), gu = group(ug, d);
		n *= trips(op, lb, 0, lo, lo + gl, ub, nl, uo, uo + gu,
			   s > 0 ? s : 1);
		lo += gl;
		uo += gu;
	}
	return n;
}

/* The constant integer value of "v" (arith.constant), or "dflt". */
static int64_t const_value(MlirValue v, int64_t dflt)
{
	if (!mlirValueIsAOpResult(v))
		return dflt;
	MlirOperation d = mlirOpResultGetOwner(v);
	if (!pb_ir_op_is(d, "arith.constant"))
		return dflt;
	return int_attr(pb_ir_attr(d, "value"), dflt);
}

/* Iterations of one execution of scf.for "op" with constant bounds, else
 * 1. */
static double scf_trips(MlirOperation op)
{
	if (mlirOperationGetNumOperands(op) < 3)
		return 1;
	int64_t lb = const_value(mlirOperationGetOperand(op, 0), 0);
	int64_t ub = const_value(mlirOperationGetOperand(op, 1), -1);
	int64_t st = const_value(mlirOperationGetOperand(op, 2), 0);
	if (ub < 0 || st <= 0)
		return 1;
	return ub > lb ? (double)((ub - lb + st - 1) / st) : 0;
}

static double region_flops(MlirRegion r);

/* The flops of "op" and everything nested in it. */
static double nest_flops(MlirOperation op)
{
	double mult = 1, body = 0;
	if (pb_ir_op_is(op, "affine.for"))
		mult = for_trips(op);
	else if (pb_ir_op_is(op, "affine.parallel"))
		mult = parallel_trips(op);
	else if (pb_ir_op_is(op, "scf.for"))
		mult = scf_trips(op);
	int branches = pb_ir_op_is(op, "affine.if") || pb_ir_op_is(op, "scf.if");
	for (MlirRegion r = mlirOperationGetFirstRegion(op); !mlirRegionIsNull(r);
	     r = mlirRegionGetNextInOperation(r)) {
		double f = region_flops(r);
		body = branches ? (f > body ? f : body) : body + f;
	}
	return op_flops(op) + mult * body;
}

/* The flops of every operation in region "r". */
static double region_flops(MlirRegion r)
{
	double f = 0;
	for (MlirBlock b = mlirRegionGetFirstBlock(r); !mlirBlockIsNull(b);
	     b = mlirBlockGetNextInRegion(b))
		for (MlirOperation op = mlirBlockGetFirstOperation(b);
		     !mlirOperationIsNull(op);
		     op = mlirOperationGetNextInBlock(op))
			f += nest_flops(op);
	return f;
}

/* Is "op" a loop: a top-level one makes a launch of its own? */
static int is_loop(MlirOperation op)
{
	return pb_ir_op_is(op, "affine.for") || pb_ir_op_is(op, "affine.parallel") ||
	       pb_ir_op_is(op, "scf.for") || pb_ir_op_is(op, "scf.parallel");
}

void pb_runtime_cost_of(MlirOperation fn, struct pb_prof_cost *c)
{
	MlirStringRef name = pb_ir_str_attr(fn, "sym_name");
	memset(c, 0, sizeof(*c));
	c->origin = name.data ? strndup(name.data, name.length) : NULL;
	MlirBlock b = pb_ir_entry_block(fn);
	if (mlirBlockIsNull(b))
		return;
	for (MlirOperation op = mlirBlockGetFirstOperation(b);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		double f = nest_flops(op);
		c->flops += f;
		if (!is_loop(op))
			continue;
		double *v = realloc(c->nests, sizeof(double) * (c->nnests + 1));
		if (!v)
			continue;
		c->nests = v;
		c->nests[c->nnests++] = f;
	}
}

/* Bytes per element of "t" (index: 8, i1: 1). */
static int64_t elem_bytes(MlirType t)
{
	if (mlirTypeIsAIndex(t))
		return 8;
	if (mlirTypeIsAFloat(t))
		return (mlirFloatTypeGetWidth(t) + 7) / 8;
	if (mlirTypeIsAInteger(t))
		return (mlirIntegerTypeGetWidth(t) + 7) / 8;
	return 0;
}

int64_t pb_runtime_cost_bytes(MlirOperation call)
{
	int64_t n = 0;
	for (intptr_t i = 0; i < mlirOperationGetNumOperands(call); i++) {
		MlirType t = mlirValueGetType(mlirOperationGetOperand(call, i));
		if (mlirTypeIsAMemRef(t))
			n += (int64_t)numel(t) * elem_bytes(elem(t));
	}
	return n;
}

int pb_runtime_costs(struct pb_ctx *ctx, MlirModule m,
		     struct pb_prof_costs *c)
{
	memset(c, 0, sizeof(*c));
	for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		if (!pb_ir_op_is(op, "func.func") ||
		    !pb_contract_is_kernel(op))
			continue;
		struct pb_prof_cost *v = realloc(c->c, sizeof(*v) * (c->n + 1));
		if (!v) {
			pb_error(ctx, "out of memory");
			return PB_ERR;
		}
		c->c = v;
		pb_runtime_cost_of(op, &c->c[c->n]);
		if (c->c[c->n].origin)
			c->n++;
	}
	return PB_OK;
}

void pb_prof_costs_free(struct pb_prof_costs *c)
{
	for (int i = 0; i < c->n; i++) {
		free(c->c[i].origin);
		free(c->c[i].nests);
	}
	free(c->c);
	memset(c, 0, sizeof(*c));
}
