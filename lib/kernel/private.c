/* Private arrays: PPCG's "private memory" in pb's block-level form
 * (docs/kernel-model.md). When the work of one thread is split over
 * sibling mapped nests of a block (separated by gpu.barrier, so that
 * shared-memory tiles can be filled between them), a value a thread keeps
 * from one nest to the next (an accumulator) cannot live in a buffer of
 * one thread loop's body. It lives in a memref.alloca of the block's body
 * whose leading dimensions are the normalized counters of the mapped
 * loops around every access, warp loops then thread loops, outermost
 * first:
 *
 *   %acc = memref.alloca() : memref<4x4x8x8x8xf32>   // warps 4, threads 4x8
 *   affine.parallel (%w) = (0) to (16) step (4) {
 *     affine.parallel (%ti, %tj) = (0, 0) to (4, 8) {
 *       affine.store %c, %acc[%w floordiv 4, %ti, %tj, %p, %q]
 *
 * Run on the CPU, each thread has its own slice; pb-codegen proves the
 * form (every access indexes it so) and gives each thread only its slice,
 * in registers. */
#include <string.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"

#include "kernel/kernel.h"

int pb_kernel_private_loops(MlirOperation op, MlirOperation block,
			    struct pb_kernel_band *b)
{
	MlirOperation chain[PB_KERNEL_MAXD];
	int n = 0;
	memset(b, 0, sizeof(*b));
	for (MlirOperation p = mlirOperationGetParentOperation(op);
	     !mlirOperationIsNull(p) && !mlirOperationEqual(p, block);
	     p = mlirOperationGetParentOperation(p)) {
		enum pb_map_level l = pb_contract_map_of(p);
		if (l != PB_MAP_WARP && l != PB_MAP_THREAD)
			continue;
		if (n == PB_KERNEL_MAXD)
			return -1;
		chain[n++] = p;
	}
	for (int i = n - 1; i >= 0; i--)
		if (!pb_kernel_band_add(chain[i], b))
			return -1;
	if (n)
		b->root = chain[n - 1];
	return b->n;
}

MlirAffineExpr pb_kernel_private_expr(MlirContext c, int64_t lb,
				      int64_t step, int pos)
{
	MlirAffineExpr e = mlirAffineDimExprGet(c, pos);
	if (lb)
		e = mlirAffineAddExprGet(e, mlirAffineConstantExprGet(c, -lb));
	if (step != 1)
		e = mlirAffineFloorDivExprGet(e,
					      mlirAffineConstantExprGet(c, step));
	return e;
}

/* The position of the memref operand of affine load or store "op". */
static int memref_pos(MlirOperation op)
{
	return pb_ir_op_is(op, "affine.store") ? 1 : 0;
}

int pb_kernel_private_access(MlirOperation op, const struct pb_kernel_band *b)
{
	MlirAttribute ma = pb_ir_attr(op, "map");
	if (!(pb_ir_op_is(op, "affine.load") || pb_ir_op_is(op, "affine.store")) ||
	    mlirAttributeIsNull(ma))
		return 0;
	MlirAffineMap map = mlirAffineMapAttrGetValue(ma);
	MlirContext c = mlirAffineMapGetContext(map);
	int first = memref_pos(op) + 1;
	int nd = (int)mlirAffineMapGetNumDims(map);
	if (mlirAffineMapGetNumResults(map) < b->n)
		return 0;
	for (int d = 0; d < b->n; d++) {
		MlirAffineExpr r = mlirAffineMapGetResult(map, d);
		int found = 0;
		for (int k = 0; k < nd && !found; k++) {
			MlirValue o = mlirOperationGetOperand(op, first + k);
			found = mlirValueEqual(o, b->iv[d]) &&
				mlirAffineExprEqual(
					r, pb_kernel_private_expr(
						   c, b->lb[d], b->step[d], k));
		}
		if (!found)
			return 0;
	}
	return 1;
}

MlirOperation pb_kernel_private_rewrite(MlirOperation op, MlirValue buf,
					const struct pb_kernel_band *b,
					int drop)
{
	MlirAffineMap map =
		mlirAffineMapAttrGetValue(pb_ir_attr(op, "map"));
	MlirContext c = mlirAffineMapGetContext(map);
	int mem = memref_pos(op);
	int nd = (int)mlirAffineMapGetNumDims(map);
	int ns = (int)mlirAffineMapGetNumSymbols(map);
	int nr = (int)mlirAffineMapGetNumResults(map);
	int add = drop ? 0 : b->n;
	MlirAffineExpr e[2 * PB_KERNEL_MAXD + 16];
	MlirValue ops[2 * PB_KERNEL_MAXD + 64];
	int nres = 0, nops = 0;
	if (nr + add > (int)(sizeof(e) / sizeof(e[0])) ||
	    nd + ns + add + 2 > (int)(sizeof(ops) / sizeof(ops[0])) ||
	    (drop && nr < b->n))
		return (MlirOperation){NULL};
	for (int d = 0; d < add; d++)
		e[nres++] = pb_kernel_private_expr(c, b->lb[d], b->step[d],
						   nd + d);
	for (int r = drop ? b->n : 0; r < nr; r++)
		e[nres++] = mlirAffineMapGetResult(map, r);
	MlirAffineMap nm = mlirAffineMapGet(c, nd + add, ns, nres, e);
	if (mem)
		ops[nops++] = mlirOperationGetOperand(op, 0);
	ops[nops++] = buf;
	for (int k = 0; k < nd; k++)
		ops[nops++] = mlirOperationGetOperand(op, mem + 1 + k);
	for (int d = 0; d < add; d++)
		ops[nops++] = b->iv[d];
	for (int k = 0; k < ns; k++)
		ops[nops++] = mlirOperationGetOperand(op, mem + 1 + nd + k);
	MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
	MlirOperationState st = mlirOperationStateGet(
		name, mlirOperationGetLocation(op));
	mlirOperationStateAddOperands(&st, nops, ops);
	MlirNamedAttribute na = mlirNamedAttributeGet(
		mlirIdentifierGet(c, mlirStringRefCreateFromCString("map")),
		mlirAffineMapAttrGet(nm));
	mlirOperationStateAddAttributes(&st, 1, &na);
	if (!mem) {
		MlirType t = mlirValueGetType(mlirOperationGetResult(op, 0));
		mlirOperationStateAddResults(&st, 1, &t);
	}
	MlirOperation n = mlirOperationCreate(&st);
	mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(op), op, n);
	if (!mem)
		mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0),
					      mlirOperationGetResult(n, 0));
	mlirOperationDestroy(op);
	return n;
}
