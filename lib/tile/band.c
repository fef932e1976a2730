/* The band of a nest: its outermost perfectly nested parallel loops. */
#include <string.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"

#include "tile/internal.h"

/* Add the dimensions of "op" to "b" when "op" is an unmapped
 * affine.parallel with constant bounds and no results; 1 when added. */
static int band_add(MlirOperation op, struct pb_tile_band *b)
{
	int64_t lb[PB_TILE_MAXD], ub[PB_TILE_MAXD];
	if (!pb_ir_op_is(op, "affine.parallel") ||
	    pb_ir_str_attr(op, "pb.map").data ||
	    mlirOperationGetNumResults(op) || mlirOperationGetNumOperands(op))
		return 0;
	MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
	int n = mlirBlockGetNumArguments(body);
	MlirAttribute steps = pb_ir_attr(op, "steps");
	if (b->n + n > PB_TILE_MAXD || pb_ir_const_map(op, "lowerBoundsMap", n, lb) ||
	    pb_ir_const_map(op, "upperBoundsMap", n, ub) ||
	    mlirAttributeIsNull(steps) || !mlirAttributeIsAArray(steps) ||
	    mlirArrayAttrGetNumElements(steps) != n)
		return 0;
	for (int i = 0; i < n; i++) {
		int64_t s = mlirIntegerAttrGetValueInt(
			mlirArrayAttrGetElement(steps, i));
		if (s < 1)
			return 0;
	}
	for (int i = 0; i < n; i++) {
		int64_t s = mlirIntegerAttrGetValueInt(
			mlirArrayAttrGetElement(steps, i));
		int d = b->n + i;
		b->lb[d] = lb[i];
		b->step[d] = s;
		b->extent[d] = ub[i] > lb[i] ? (ub[i] - lb[i] + s - 1) / s : 0;
		b->iv[d] = mlirBlockGetArgument(body, i);
	}
	b->n += n;
	b->inner = op;
	return 1;
}

int pb_tile_band_of(MlirOperation op, struct pb_tile_band *b)
{
	memset(b, 0, sizeof(*b));
	if (!band_add(op, b))
		return 0;
	b->root = op;
	for (;;) {
		MlirBlock body = pb_tile_band_body(b);
		MlirOperation first = mlirBlockGetFirstOperation(body);
		MlirOperation next = mlirOperationGetNextInBlock(first);
		if (mlirOperationIsNull(next) ||
		    !pb_ir_op_is(next, "affine.yield") || !band_add(first, b))
			return 1;
	}
}

MlirBlock pb_tile_band_body(const struct pb_tile_band *b)
{
	return mlirRegionGetFirstBlock(mlirOperationGetRegion(b->inner, 0));
}
