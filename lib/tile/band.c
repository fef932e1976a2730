/* The band of a nest: its outermost perfectly nested parallel loops. */
#include <string.h>

#include "tile/internal.h"

/* Add the dimensions of "op" to "b" when "op" is an unmapped
 * affine.parallel with constant bounds and no results; 1 when added. */
static int band_add(MlirOperation op, struct pb_tile_band *b)
{
	if (pb_ir_str_attr(op, "pb.map").data)
		return 0;
	int n = pb_ir_parallel_dims(op, PB_TILE_MAXD - b->n, b->lb + b->n,
				    b->step + b->n, b->extent + b->n,
				    b->iv + b->n);
	if (n < 0)
		return 0;
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
