/* The band of a nest: its outermost perfectly nested parallel loops. */
#include <string.h>

#include "core/tensor.h"
#include "kernel/kernel.h"

int pb_kernel_band_add(MlirOperation op, struct pb_kernel_band *b)
{
	int n = pb_ir_parallel_dims(op, PB_KERNEL_MAXD - b->n, b->lb + b->n,
				    b->step + b->n, b->extent + b->n,
				    b->iv + b->n);
	if (n < 0)
		return 0;
	b->n += n;
	b->inner = op;
	return 1;
}

/* Add the dimensions of "op" to "b" when "op" is an unmapped loop that
 * pb_kernel_band_add takes; 1 when added. */
static int add_unmapped(MlirOperation op, struct pb_kernel_band *b)
{
	return !pb_contract_is_mapped(op) && pb_kernel_band_add(op, b);
}

int pb_kernel_band_of(MlirOperation op, struct pb_kernel_band *b)
{
	memset(b, 0, sizeof(*b));
	if (!add_unmapped(op, b))
		return 0;
	b->root = op;
	for (;;) {
		MlirBlock body = pb_kernel_band_body(b);
		MlirOperation first = mlirBlockGetFirstOperation(body);
		MlirOperation next = mlirOperationGetNextInBlock(first);
		if (mlirOperationIsNull(next) ||
		    !pb_ir_op_is(next, "affine.yield") || !add_unmapped(first, b))
			return 1;
	}
}

MlirBlock pb_kernel_band_body(const struct pb_kernel_band *b)
{
	return mlirRegionGetFirstBlock(mlirOperationGetRegion(b->inner, 0));
}

int64_t pb_kernel_band_points(const struct pb_kernel_band *b)
{
	int64_t t = pb_numel(b->n, b->extent);
	return t < 0 ? INT64_MAX : t;
}
