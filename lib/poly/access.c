/* Access relations in lib/poly: the affine map of an affine.load/store (or
 * the plain subscripts of a memref.load/store) over the loop counters of a
 * NEST statement, as an isl_map into the index space of the root buffer. */
#include <stdio.h>
#include <stdlib.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "poly/internal.h"

/* Position of the loop of "st" whose induction variable is "v", or -1. */
static int iv_pos(const struct pb_poly_stmt *st, MlirValue v)
{
	if (!mlirValueIsABlockArgument(v) || mlirBlockArgumentGetArgNumber(v))
		return -1;
	MlirBlock owner = mlirBlockArgumentGetOwner(v);
	for (int k = 0; k < st->depth; k++)
		if (mlirBlockEqual(owner, pb_ir_entry_block(st->loops[k])))
			return k;
	return -1;
}

/* The value of "v" as an affine function on "dom": a loop counter of "st"
 * or an integer constant; NULL otherwise. */
static __isl_give isl_aff *operand_aff(const struct pb_poly_stmt *st,
				       __isl_keep isl_space *dom, MlirValue v)
{
	isl_local_space *ls = isl_local_space_from_space(isl_space_copy(dom));
	int k = iv_pos(st, v);
	if (k >= 0)
		return isl_aff_var_on_domain(ls, isl_dim_set, k);
	if (mlirValueIsAOpResult(v)) {
		MlirOperation def = mlirOpResultGetOwner(v);
		MlirAttribute c = pb_ir_attr(def, "value");
		if ((pb_ir_op_is(def, "arith.constant") ||
		     pb_ir_op_is(def, "index.constant")) &&
		    !mlirAttributeIsNull(c) && mlirAttributeIsAInteger(c))
			return isl_aff_val_on_domain(ls, isl_val_int_from_si(
				isl_space_get_ctx(dom),
				mlirIntegerAttrGetValueInt(c)));
	}
	isl_local_space_free(ls);
	return NULL;
}

/* The positive constant right-hand side of binary expression "e", or 0. */
static long pos_rhs(MlirAffineExpr e)
{
	MlirAffineExpr r = mlirAffineBinaryOpExprGetRHS(e);
	if (!mlirAffineExprIsAConstant(r))
		return 0;
	long c = (long)mlirAffineConstantExprGetValue(r);
	return c > 0 ? c : 0;
}

__isl_give isl_aff *pb_poly_expr_aff(MlirAffineExpr e,
				     __isl_keep isl_space *dom, isl_aff **ops,
				     int nd, int nops)
{
	isl_ctx *ctx = isl_space_get_ctx(dom);
	if (mlirAffineExprIsAConstant(e)) {
		long c = (long)mlirAffineConstantExprGetValue(e);
		return isl_aff_val_on_domain(
			isl_local_space_from_space(isl_space_copy(dom)),
			isl_val_int_from_si(ctx, c));
	}
	if (mlirAffineExprIsADim(e) || mlirAffineExprIsASymbol(e)) {
		int p = mlirAffineExprIsADim(e)
			? (int)mlirAffineDimExprGetPosition(e)
			: nd + (int)mlirAffineSymbolExprGetPosition(e);
		return p < nops ? isl_aff_copy(ops[p]) : NULL;
	}
	if (!mlirAffineExprIsABinary(e))
		return NULL;
	isl_aff *l = pb_poly_expr_aff(mlirAffineBinaryOpExprGetLHS(e), dom,
				      ops, nd, nops);
	if (mlirAffineExprIsAAdd(e) || mlirAffineExprIsAMul(e)) {
		isl_aff *r = pb_poly_expr_aff(mlirAffineBinaryOpExprGetRHS(e),
					      dom, ops, nd, nops);
		if (!l || !r) {
			isl_aff_free(l);
			isl_aff_free(r);
			return NULL;
		}
		if (mlirAffineExprIsAAdd(e))
			return isl_aff_add(l, r);
		if (isl_aff_is_cst(l) != isl_bool_true &&
		    isl_aff_is_cst(r) != isl_bool_true) {
			isl_aff_free(l);
			isl_aff_free(r);
			return NULL;
		}
		return isl_aff_mul(l, r);
	}
	long c = pos_rhs(e);
	if (!l || !c)
		return isl_aff_free(l);
	isl_val *v = isl_val_int_from_si(ctx, c);
	if (mlirAffineExprIsAMod(e))
		return isl_aff_mod_val(l, v);
	l = isl_aff_scale_down_val(l, v);
	if (mlirAffineExprIsAFloorDiv(e))
		return isl_aff_floor(l);
	if (mlirAffineExprIsACeilDiv(e))
		return isl_aff_ceil(l);
	return isl_aff_free(l);
}

/* Free the "n" functions "ops" and the array. */
static void free_affs(isl_aff **ops, int n)
{
	for (int i = 0; i < n; i++)
		isl_aff_free(ops[i]);
	free(ops);
}

/* The subscripts of "op" (operands from "first" on, through its "map"
 * attribute for affine.load/store) as affine functions on "dom", or
 * NULL. */
static __isl_give isl_aff_list *subscripts(const struct pb_poly_stmt *st,
					   __isl_keep isl_space *dom,
					   MlirOperation op, int first)
{
	int nops = (int)mlirOperationGetNumOperands(op) - first;
	isl_ctx *ctx = isl_space_get_ctx(dom);
	isl_aff **ops = calloc(nops > 0 ? nops : 1, sizeof(*ops));
	for (int i = 0; i < nops; i++) {
		MlirValue v = mlirOperationGetOperand(op, first + i);
		if (!(ops[i] = operand_aff(st, dom, v))) {
			free_affs(ops, nops);
			return NULL;
		}
	}
	MlirAttribute ma = pb_ir_attr(op, "map");
	isl_aff_list *l;
	if (mlirAttributeIsNull(ma)) {
		l = isl_aff_list_alloc(ctx, nops);
		for (int i = 0; i < nops; i++)
			l = isl_aff_list_add(l, isl_aff_copy(ops[i]));
	} else if (!mlirAttributeIsAAffineMap(ma)) {
		l = NULL;
	} else {
		MlirAffineMap map = mlirAffineMapAttrGetValue(ma);
		int nd = (int)mlirAffineMapGetNumDims(map);
		int nr = (int)mlirAffineMapGetNumResults(map);
		l = mlirAffineMapGetNumInputs(map) == nops
			? isl_aff_list_alloc(ctx, nr) : NULL;
		for (int r = 0; l && r < nr; r++) {
			isl_aff *a = pb_poly_expr_aff(
				mlirAffineMapGetResult(map, r), dom, ops, nd,
				nops);
			l = a ? isl_aff_list_add(l, a) : isl_aff_list_free(l);
		}
	}
	free_affs(ops, nops);
	return l;
}

/* The isl_map S<id>[...] -> B<b>[...] of the multi-function "l" on the
 * domain of "st", intersected with that domain. */
static __isl_give isl_map *map_of(const struct pb_poly_stmt *st,
				  const struct pb_poly_buf *b,
				  __isl_take isl_aff_list *l)
{
	char name[32];
	isl_space *sp = isl_set_get_space(st->domain);
	snprintf(name, sizeof(name), "B%d", b->id);
	isl_space *ran = isl_space_set_alloc(isl_space_get_ctx(sp), 0, b->rank);
	ran = isl_space_set_tuple_name(ran, isl_dim_set, name);
	sp = isl_space_map_from_domain_and_range(sp, ran);
	isl_multi_aff *ma = isl_multi_aff_from_aff_list(sp, l);
	isl_map *m = isl_map_from_multi_aff(ma);
	return isl_map_intersect_domain(m, isl_set_copy(st->domain));
}

__isl_give isl_map *pb_poly_access_exact(const struct pb_poly_stmt *st,
					 const struct pb_poly_buf *b,
					 MlirOperation op, MlirValue mem)
{
	int first = -1;
	for (int i = 0; i < mlirOperationGetNumOperands(op); i++)
		if (mlirValueEqual(mlirOperationGetOperand(op, i), mem)) {
			first = i + 1;
			break;
		}
	if (first < 0 || !mlirTypeIsAMemRef(mlirValueGetType(b->root)))
		return NULL;
	isl_space *dom = isl_set_get_space(st->domain);
	isl_aff_list *l = subscripts(st, dom, op, first);
	l = pb_poly_view_compose(mem, dom, l);
	isl_space_free(dom);
	if (!l || isl_aff_list_n_aff(l) != b->rank) {
		isl_aff_list_free(l);
		return NULL;
	}
	return map_of(st, b, l);
}
