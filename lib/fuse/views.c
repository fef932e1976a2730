/* Accesses through reshapes that only add or drop dimensions of size 1
 * become accesses of the reshaped buffer itself (docs/pb-fuse.md,
 * "Contraction").
 *
 * A model's [32, 384] matmul result read as [32, 1, 384] by the bias add
 * after it goes through a memref.expand_shape; contraction only rewrites
 * direct accesses, so the accumulator would stay in memory. When every
 * reassociation group of the reshape holds at most one dimension whose
 * size is not 1, each subscript of the source is either one subscript of
 * the view (that dimension's) or 0, and the access can name the source
 * directly with the same operands. */
#include <stdlib.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "fuse/internal.h"

#define MAXR 16

/* For the reshape "op" (expand_shape or collapse_shape of "src" to
 * "view"), fill from[s] for each dimension s of the source: the view
 * dimension whose subscript it takes, or -1 for the constant 0. Returns
 * 0 unless each group has at most one dimension of size other than 1. */
static int unit_reshape(MlirOperation op, MlirValue src, MlirValue view,
			int *from)
{
	int expand = pb_ir_op_is(op, "memref.expand_shape");
	MlirType st = mlirValueGetType(src), vt = mlirValueGetType(view);
	MlirAttribute ra = pb_ir_attr(op, "reassociation");
	if (mlirAttributeIsNull(ra) || !mlirAttributeIsAArray(ra) ||
	    !mlirTypeIsAMemRef(st) || !mlirTypeIsAMemRef(vt) ||
	    !mlirShapedTypeHasStaticShape(st) ||
	    !mlirShapedTypeHasStaticShape(vt) ||
	    mlirShapedTypeGetRank(st) > MAXR || mlirShapedTypeGetRank(vt) > MAXR)
		return 0;
	/* the groups are over the bigger type's dimensions */
	MlirType big = expand ? vt : st;
	for (int s = 0; s < mlirShapedTypeGetRank(st); s++)
		from[s] = -1;
	for (intptr_t g = 0; g < mlirArrayAttrGetNumElements(ra); g++) {
		MlirAttribute grp = mlirArrayAttrGetElement(ra, g);
		int real = -1;
		for (intptr_t j = 0; j < mlirArrayAttrGetNumElements(grp); j++) {
			int d = mlirIntegerAttrGetValueInt(
				mlirArrayAttrGetElement(grp, j));
			if (mlirShapedTypeGetDimSize(big, d) == 1)
				continue;
			if (real >= 0)
				return 0;
			real = d;
		}
		if (expand)
			from[g] = real;	/* source dim g <- view dim real */
		else if (real >= 0)
			from[real] = g;	/* source dim real <- view dim g */
	}
	return 1;
}

/* Rewrite the affine load or store "acc" through the reshape "op" of
 * "src" into an access of "src". */
static void bypass(MlirOperation acc, MlirOperation op, MlirValue src,
		   const int *from)
{
	int write = pb_ir_op_is(acc, "affine.store");
	MlirAffineMap map = mlirAffineMapAttrGetValue(pb_ir_attr(acc, "map"));
	MlirContext mctx = mlirAffineMapGetContext(map);
	int n = mlirShapedTypeGetRank(mlirValueGetType(src));
	MlirAffineExpr e[MAXR];
	for (int s = 0; s < n; s++)
		e[s] = from[s] >= 0 ? mlirAffineMapGetResult(map, from[s])
				    : mlirAffineConstantExprGet(mctx, 0);
	MlirAffineMap nm = mlirAffineMapGet(mctx, mlirAffineMapGetNumDims(map),
					    mlirAffineMapGetNumSymbols(map), n, e);
	(void)op;
	mlirOperationSetOperand(acc, write ? 1 : 0, src);
	pb_ir_set_attr(acc, "map", mlirAffineMapAttrGet(nm));
}

int pb_fuse_bypass_unit_reshapes(MlirBlock body)
{
	struct pb_ir_ops acc = {0};
	int n = 0;
	for (MlirOperation op = mlirBlockGetFirstOperation(body);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
		if (pb_ir_op_is(op, "affine.for")) {
			pb_ir_collect(op, "affine.load", &acc);
			pb_ir_collect(op, "affine.store", &acc);
		}
	for (int i = 0; i < acc.n; i++) {
		MlirOperation a = acc.v[i];
		int write = pb_ir_op_is(a, "affine.store");
		/* peel reshapes until the access is direct or cannot go on */
		for (;;) {
			MlirValue mem = mlirOperationGetOperand(a, write ? 1 : 0);
			if (!mlirValueIsAOpResult(mem))
				break;
			MlirOperation def = mlirOpResultGetOwner(mem);
			int from[MAXR];
			if ((!pb_ir_op_is(def, "memref.expand_shape") &&
			     !pb_ir_op_is(def, "memref.collapse_shape")) ||
			    !unit_reshape(def, mlirOperationGetOperand(def, 0),
					  mem, from))
				break;
			bypass(a, def, mlirOperationGetOperand(def, 0), from);
			n++;
		}
	}
	pb_ir_ops_free(&acc);
	/* reshapes left without uses go, so that the buffers they viewed
	 * can be contracted */
	pb_fuse_drop_unused_reshapes(body);
	return n;
}

void pb_fuse_drop_unused_reshapes(MlirBlock body)
{
	for (int changed = 1; changed;) {
		changed = 0;
		for (MlirOperation op = mlirBlockGetFirstOperation(body);
		     !mlirOperationIsNull(op);) {
			MlirOperation next = mlirOperationGetNextInBlock(op);
			if ((pb_ir_op_is(op, "memref.expand_shape") ||
			     pb_ir_op_is(op, "memref.collapse_shape")) &&
			    !pb_fuse_num_uses(mlirOperationGetResult(op, 0))) {
				mlirOperationDestroy(op);
				changed = 1;
			}
			op = next;
		}
	}
}
