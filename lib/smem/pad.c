/* Padded reads (docs/pb-smem.md, "Padded reads"). pb-fuse folds a pad
 * into the convolution or pooling that reads it (lib/fuse/pad.c): a read
 * of the padded buffer becomes
 *
 *     t_k = affine.apply (e_k - off_k)         per dimension k
 *     in  = AND over the padded k of (t_k >= 0 and t_k < size_k)
 *     v   = memref.load X[min(max(t_k, 0), size_k - 1) or t_k]
 *     r   = arith.select in, v, c
 *
 * which is X padded with c, read at t: the value X[t] where t lies in X,
 * c elsewhere. lib/poly sees the clamped subscripts as a whole-buffer
 * read. When the read's box is staged, the copy fills what lies outside X
 * with c, so the computation can read the tile at t with neither clamps
 * nor select. pb_smem_pads_find proves the pattern and puts the read
 * X[t] next to it as an affine.load (the "virtual" read lib/poly models
 * exactly); once staged, pb_smem_pad_commit makes it the value of the
 * select, or pb_smem_pad_drop removes it. */
#include <stdlib.h>
#include <string.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "smem/internal.h"

#define MAXRANK 8

/* The operation defining "v" when it is "name", else null. */
static MlirOperation def_is(MlirValue v, const char *name)
{
	MlirOperation none = {NULL};
	if (!mlirValueIsAOpResult(v))
		return none;
	MlirOperation d = mlirOpResultGetOwner(v);
	return pb_ir_op_is(d, name) ? d : none;
}

/* The result of map attribute "name" of "op" that is not the constant
 * "c" when the map has two results and the other one is "c" (in either
 * order); null otherwise. */
static MlirAffineExpr other_than(MlirOperation op, int64_t *c, int any)
{
	MlirAffineExpr none = {NULL};
	MlirAttribute a = pb_ir_attr(op, "map");
	if (mlirAttributeIsNull(a))
		return none;
	MlirAffineMap m = mlirAffineMapAttrGetValue(a);
	if (mlirAffineMapGetNumResults(m) != 2)
		return none;
	for (int i = 0; i < 2; i++) {
		MlirAffineExpr k = mlirAffineMapGetResult(m, i);
		if (!mlirAffineExprIsAConstant(k) ||
		    (!any && mlirAffineConstantExprGetValue(k) != *c))
			continue;
		*c = mlirAffineConstantExprGetValue(k);
		return mlirAffineMapGetResult(m, 1 - i);
	}
	return none;
}

/* Is "t" the value the affine.max "mx" clamps: its operand through the
 * identity, or an affine.apply of the max's other result on the same
 * operands? */
static int clamps(MlirOperation mx, MlirAffineExpr e, MlirValue t)
{
	if (mlirAffineExprIsADim(e) && mlirOperationGetNumOperands(mx) == 1 &&
	    mlirValueEqual(mlirOperationGetOperand(mx, 0), t))
		return 1;
	if (!mlirValueIsAOpResult(t))
		return 0;
	MlirOperation ap = mlirOpResultGetOwner(t);
	MlirAttribute a = pb_ir_attr(ap, "map");
	if (!pb_ir_op_is(ap, "affine.apply") || mlirAttributeIsNull(a))
		return 0;
	MlirAffineMap am = mlirAffineMapAttrGetValue(a);
	MlirAffineMap xm = mlirAffineMapAttrGetValue(pb_ir_attr(mx, "map"));
	return mlirAffineMapGetNumResults(am) == 1 &&
	       mlirAffineMapGetNumDims(am) == mlirAffineMapGetNumDims(xm) &&
	       mlirAffineMapGetNumSymbols(am) ==
		       mlirAffineMapGetNumSymbols(xm) &&
	       mlirAffineExprEqual(mlirAffineMapGetResult(am, 0), e) &&
	       pb_ir_same_operands(ap, 0, mx, 0);
}

/* The bound checks of "in" (an AND tree of arith.cmpi) into "lo"/"hi":
 * for value t, lo[i] = t when "t >= 0" is checked (sge, predicate 5),
 * hi[i] = t with bound hb[i] when "t < hb" (slt, predicate 2). Returns
 * -1 on any other leaf. */
static int leaves(MlirValue in, MlirValue *lo, int *nlo, MlirValue *hi,
		  int64_t *hb, int *nhi, int depth)
{
	MlirOperation a = def_is(in, "arith.andi");
	if (!mlirOperationIsNull(a) && depth < 16)
		return leaves(mlirOperationGetOperand(a, 0), lo, nlo, hi, hb, nhi,
			      depth + 1) ||
		       leaves(mlirOperationGetOperand(a, 1), lo, nlo, hi, hb, nhi,
			      depth + 1);
	MlirOperation c = def_is(in, "arith.cmpi");
	int64_t b;
	if (mlirOperationIsNull(c) || *nlo >= MAXRANK || *nhi >= MAXRANK ||
	    pb_ir_const_int(mlirOperationGetOperand(c, 1), &b))
		return -1;
	int64_t pred = mlirIntegerAttrGetValueInt(pb_ir_attr(c, "predicate"));
	MlirValue t = mlirOperationGetOperand(c, 0);
	if (pred == 5 && b == 0) {
		lo[(*nlo)++] = t;
		return 0;
	}
	if (pred == 2) {
		hb[*nhi] = b;
		hi[(*nhi)++] = t;
		return 0;
	}
	return -1;
}

/* Is "v" among the "n" values "l" (with bound "b" equal to "want" when
 * "b" is given)? */
static int among(MlirValue v, const MlirValue *l, int n, const int64_t *b,
		 int64_t want)
{
	for (int i = 0; i < n; i++)
		if (mlirValueEqual(v, l[i]) && (!b || b[i] == want))
			return 1;
	return 0;
}

/* The virtual read of select "sel" of a padded read: prove the pattern
 * and create affine.load X[t] before the load; 0 when "sel" is not one. */
static int find_one(struct pb_ctx *ctx, MlirOperation sel,
		    struct pb_smem_pad *p)
{
	MlirValue in = mlirOperationGetOperand(sel, 0);
	MlirValue v = mlirOperationGetOperand(sel, 1);
	MlirOperation ld = def_is(v, "memref.load");
	MlirOperation cst = def_is(mlirOperationGetOperand(sel, 2),
				   "arith.constant");
	MlirValue t[MAXRANK], lo[MAXRANK], hi[MAXRANK];
	int64_t hb[MAXRANK];
	int nlo = 0, nhi = 0, npad = 0;
	if (mlirOperationIsNull(ld) || mlirOperationIsNull(cst) ||
	    !mlirOpOperandIsNull(mlirOpOperandGetNextUse(mlirValueGetFirstUse(v))))
		return 0;
	MlirValue x = mlirOperationGetOperand(ld, 0);
	MlirType xt = mlirValueGetType(x);
	int rank = (int)mlirOperationGetNumOperands(ld) - 1;
	if (rank > MAXRANK || !mlirTypeIsAMemRef(xt) ||
	    !mlirShapedTypeHasStaticShape(xt) ||
	    leaves(in, lo, &nlo, hi, hb, &nhi, 0))
		return 0;
	for (int k = 0; k < rank; k++) {
		MlirValue i = mlirOperationGetOperand(ld, 1 + k);
		int64_t size = mlirShapedTypeGetDimSize(xt, k), top;
		MlirOperation mn = def_is(i, "affine.min");
		if (mlirOperationIsNull(mn)) {
			t[k] = i;
			continue;
		}
		MlirOperation mx = mlirOperationGetNumOperands(mn) == 1
			? def_is(mlirOperationGetOperand(mn, 0), "affine.max")
			: (MlirOperation){NULL};
		int64_t zero = 0;
		if (mlirOperationIsNull(mx))
			return 0;
		MlirAffineExpr d = other_than(mn, &top, 1);
		MlirAffineExpr e = other_than(mx, &zero, 0);
		if (mlirAffineExprIsNull(d) || !mlirAffineExprIsADim(d) ||
		    mlirAffineExprIsNull(e) || top != size - 1)
			return 0;
		/* t: the value both checks are of, which the max clamps */
		t[k] = (MlirValue){NULL};
		for (int j = 0; j < nlo && mlirValueIsNull(t[k]); j++)
			if (clamps(mx, e, lo[j]) &&
			    among(lo[j], hi, nhi, hb, size))
				t[k] = lo[j];
		if (mlirValueIsNull(t[k]))
			return 0;
		npad++;
	}
	/* every check is one of a clamped dimension */
	if (!npad || nlo != npad || nhi != npad)
		return 0;
	struct pb_buf text = {0};
	struct pb_ir_ops out = {0};
	MlirValue args[1 + MAXRANK];
	args[0] = x;
	pb_buf_puts(&text, "func.func @t(%x: ");
	pb_ir_type_print(xt, &text);
	for (int k = 0; k < rank; k++) {
		pb_buf_printf(&text, ", %%t%d: index", k);
		args[1 + k] = t[k];
	}
	pb_buf_puts(&text, ") {\n  %v = affine.load %x[");
	for (int k = 0; k < rank; k++)
		pb_buf_printf(&text, "%s%%t%d", k ? ", " : "", k);
	pb_buf_puts(&text, "] : ");
	pb_ir_type_print(xt, &text);
	pb_buf_puts(&text, "\n  return\n}\n");
	int rc = pb_ir_instantiate(ctx, text.data, ld, 1 + rank, args,
				   mlirOperationGetLocation(ld), &out);
	pb_buf_free(&text);
	if (rc == PB_OK && out.n == 1) {
		p->load = ld;
		p->select = sel;
		p->virt = out.v[0];
		p->fill = pb_ir_attr(cst, "value");
	}
	pb_ir_ops_free(&out);
	return rc == PB_OK;
}

int pb_smem_pads_find(struct pb_ctx *ctx, MlirOperation loop,
		      struct pb_smem_pad **pads)
{
	struct pb_ir_ops sel = {0};
	int n = 0;
	*pads = NULL;
	pb_ir_collect(loop, "arith.select", &sel);
	if (sel.n)
		*pads = calloc(sel.n, sizeof(**pads));
	for (int i = 0; i < sel.n; i++)
		n += find_one(ctx, sel.v[i], &(*pads)[n]);
	pb_ir_ops_free(&sel);
	return n;
}

void pb_smem_pad_commit(struct pb_smem_pad *p, MlirValue staged)
{
	mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(p->select, 0),
				      staged);
	mlirOperationDestroy(p->select);
	mlirOperationDestroy(p->load);
}

void pb_smem_pad_drop(struct pb_smem_pad *p)
{
	mlirOperationDestroy(p->virt);
}
