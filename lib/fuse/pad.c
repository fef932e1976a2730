/* Folding pads into their readers (docs/pb-fuse.md, "Pads").
 *
 * tensor.pad bufferizes to a buffer P, a nest F filling all of P with the
 * pad value c, and a nest C copying X into the interior of P (a subview
 * with static offsets and unit strides); the convolution or pooling nests
 * K then read P. When P is used by nothing else and X is not written
 * between C and the last K, every load P[e] in K becomes
 *
 *     t_k = e_k - off_k                       (per padded dimension k)
 *     in  = AND_k (0 <= t_k < size_k)
 *     v   = memref.load X[clamp(t_k, 0, size_k - 1)]
 *     r   = select(in, v, c)
 *
 * and F, C, the subview and P go: two kernels and P's traffic fewer, at
 * the price of a bound check per load in K. The loads of X become
 * inexact for lib/poly (whole-buffer reads), which only matters for
 * fusing K with X's producer, and that fusion is never legal at the
 * stencil's depth anyway. */
#include <stdlib.h>
#include <string.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "fuse/internal.h"

MlirValue pb_fuse_build(MlirOperation at, const char *name, int n,
			const MlirValue *ops, MlirType t, int na,
			const char **names, const MlirAttribute *attrs)
{
	MlirContext mctx = mlirOperationGetContext(at);
	MlirOperationState st =
		mlirOperationStateGet(pb_str(name), mlirOperationGetLocation(at));
	MlirNamedAttribute nattr[4];
	for (int i = 0; i < na && i < 4; i++)
		nattr[i] = mlirNamedAttributeGet(
			mlirIdentifierGet(mctx, pb_str(names[i])), attrs[i]);
	mlirOperationStateAddOperands(&st, n, ops);
	if (!mlirTypeIsNull(t))
		mlirOperationStateAddResults(&st, 1, &t);
	mlirOperationStateAddAttributes(&st, na < 4 ? na : 4, nattr);
	MlirOperation op = mlirOperationCreate(&st);
	mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(at), at, op);
	return mlirTypeIsNull(t) ? (MlirValue){NULL}
				 : mlirOperationGetResult(op, 0);
}
#define make pb_fuse_build

/* An index constant "v" before "at". */
static MlirValue index_const(MlirOperation at, int64_t v)
{
	MlirType idx = mlirIndexTypeGet(mlirOperationGetContext(at));
	const char *name = "value";
	MlirAttribute a = mlirIntegerAttrGet(idx, v);
	return make(at, "arith.constant", 0, NULL, idx, 1, &name, &a);
}

/* affine.apply / affine.min / affine.max "kind" of "map" on "ops". */
static MlirValue affine_op(MlirOperation at, const char *kind,
			   MlirAffineMap map, int n, const MlirValue *ops)
{
	const char *name = "map";
	MlirAttribute a = mlirAffineMapAttrGet(map);
	return make(at, kind, n, ops,
		    mlirIndexTypeGet(mlirOperationGetContext(at)), 1, &name, &a);
}

/* arith.cmpi "pred" (MLIR's numbering: slt 2, sge 5) of "a" and "b". */
static MlirValue cmpi(MlirOperation at, int64_t pred, MlirValue a, MlirValue b)
{
	MlirContext mctx = mlirOperationGetContext(at);
	MlirValue ops[2] = {a, b};
	const char *name = "predicate";
	MlirAttribute p = mlirIntegerAttrGet(mlirIntegerTypeGet(mctx, 64), pred);
	return make(at, "arith.cmpi", 2, ops, mlirIntegerTypeGet(mctx, 1), 1,
		    &name, &p);
}

/* The pattern around buffer P. */
struct pad {
	int b;			/* P's buffer */
	int fill, copy;		/* statements F and C */
	MlirValue value;	/* the pad value c */
	MlirValue src;		/* X as C loads it */
	MlirOperation view;	/* the subview of P that C writes */
	int rank;
	int64_t off[8], size[8]; /* of the interior */
	int64_t shape[8];	 /* of P */
};

int pb_fuse_access_is(const struct pb_poly_stmt *st,
		      const struct pb_poly_access *a, const int *want, int n)
{
	int loop[PB_FUSE_MAXR], u = 0;
	MlirType t = mlirValueGetType(pb_fuse_access_memref(a));
	int rank = pb_fuse_result_loops(st, a, loop);
	if (rank < 0)
		return 0;
	for (int k = 0; k < rank; k++) {
		if (loop[k] < 0)
			continue;
		if (u >= n || loop[k] != want[u] ||
		    st->extent[loop[k]] != mlirShapedTypeGetDimSize(t, k))
			return 0;
		u++;
	}
	return u == n;
}

/* Does access "a" of "st" index its memref with the loop counters of
 * "st" in order (pb_fuse_access_is with all the loops)? */
static int identity_access(const struct pb_poly_stmt *st,
			   const struct pb_poly_access *a)
{
	int all[PB_FUSE_MAXR];
	if (st->depth > PB_FUSE_MAXR)
		return 0;
	for (int u = 0; u < st->depth; u++)
		all[u] = u;
	return pb_fuse_access_is(st, a, all, st->depth);
}

/* Is statement "i" the fill F of buffer "b": all of it, with one value
 * defined outside the nest? */
static int is_fill(const struct pb_poly_scop *s, int i, int b, struct pad *p)
{
	const struct pb_poly_stmt *st = &s->stmt[i];
	if (st->kind != PB_POLY_NEST || st->naccess != 1 ||
	    !st->access[0].write || !st->access[0].direct ||
	    st->access[0].buf != b || !identity_access(st, &st->access[0]))
		return 0;
	MlirValue v = mlirOperationGetOperand(st->access[0].op, 0);
	if (!mlirValueIsAOpResult(v) ||
	    !pb_ir_op_is(mlirOpResultGetOwner(v), "arith.constant") ||
	    pb_ir_is_inside(mlirOpResultGetOwner(v), st->op))
		return 0;
	p->value = v;
	return 1;
}

/* Is statement "i" the copy C of X into a subview of buffer "b"? */
static int is_copy(const struct pb_poly_scop *s, int i, int b, struct pad *p)
{
	const struct pb_poly_stmt *st = &s->stmt[i];
	if (st->kind != PB_POLY_NEST || st->naccess != 2)
		return 0;
	const struct pb_poly_access *ld = &st->access[0], *sto = &st->access[1];
	MlirValue view = pb_fuse_access_memref(sto), src = pb_fuse_access_memref(ld);
	if (ld->write || !sto->write || sto->buf != b || ld->buf == b ||
	    !mlirValueIsAOpResult(view) ||
	    !identity_access(st, ld) || !identity_access(st, sto) ||
	    !mlirValueEqual(mlirOperationGetOperand(sto->op, 0),
			    mlirOperationGetResult(ld->op, 0)))
		return 0;
	MlirOperation sv = mlirOpResultGetOwner(view);
	int rank = s->buf[b].rank;
	if (!pb_ir_op_is(sv, "memref.subview") ||
	    !mlirValueEqual(mlirOperationGetOperand(sv, 0), s->buf[b].root) ||
	    mlirOperationGetNumOperands(sv) != 1 || rank > 8 ||
	    mlirShapedTypeGetRank(mlirValueGetType(view)) != rank ||
	    mlirShapedTypeGetRank(mlirValueGetType(src)) != rank)
		return 0;
	MlirAttribute off = pb_ir_attr(sv, "static_offsets");
	MlirAttribute size = pb_ir_attr(sv, "static_sizes");
	MlirAttribute str = pb_ir_attr(sv, "static_strides");
	if (mlirAttributeIsNull(off) || mlirAttributeIsNull(size) ||
	    mlirAttributeIsNull(str))
		return 0;
	p->rank = rank;
	for (int k = 0; k < rank; k++) {
		p->shape[k] = s->buf[b].shape[k];
		p->off[k] = mlirDenseI64ArrayGetElement(off, k);
		p->size[k] = mlirDenseI64ArrayGetElement(size, k);
		if (mlirDenseI64ArrayGetElement(str, k) != 1 || p->off[k] < 0 ||
		    p->size[k] != mlirShapedTypeGetDimSize(mlirValueGetType(src),
							   k))
			return 0;
	}
	p->view = sv;
	p->src = src;
	return 1;
}

/* Rewrite the load "ld" of P (with map and operands of the padded
 * buffer) into a guarded load of the source; "user" is the pad. */
static void rewrite_load(MlirOperation ld, void *user)
{
	const struct pad *p = user;
	MlirContext mctx = mlirOperationGetContext(ld);
	MlirAffineMap map =
		mlirAffineMapAttrGetValue(pb_ir_attr(ld, "map"));
	int nd = mlirAffineMapGetNumDims(map), ns = mlirAffineMapGetNumSymbols(map);
	int nops = mlirOperationGetNumOperands(ld) - 1;
	MlirValue *ops = malloc(sizeof(*ops) * (nops + 1));
	MlirValue idx[8], in = {NULL};
	if (!ops)
		abort();
	for (int i = 0; i < nops; i++)
		ops[i] = mlirOperationGetOperand(ld, i + 1);
	for (int k = 0; k < p->rank; k++) {
		MlirAffineExpr e = mlirAffineAddExprGet(
			mlirAffineMapGetResult(map, k),
			mlirAffineConstantExprGet(mctx, -p->off[k]));
		MlirAffineMap one = mlirAffineMapGet(mctx, nd, ns, 1, &e);
		idx[k] = affine_op(ld, "affine.apply", one, nops, ops);
		if (p->off[k] == 0 && p->size[k] == p->shape[k])
			continue;
		MlirValue lo = cmpi(ld, 5, idx[k], index_const(ld, 0));
		MlirValue hi = cmpi(ld, 2, idx[k], index_const(ld, p->size[k]));
		MlirValue both[2] = {lo, hi};
		MlirValue ok = make(ld, "arith.andi", 2, both,
				    mlirIntegerTypeGet(mctx, 1), 0, NULL, NULL);
		if (mlirValueIsNull(in)) {
			in = ok;
		} else {
			MlirValue two[2] = {in, ok};
			in = make(ld, "arith.andi", 2, two,
				  mlirIntegerTypeGet(mctx, 1), 0, NULL, NULL);
		}
		/* clamp into [0, size - 1] */
		MlirAffineExpr d0 = mlirAffineDimExprGet(mctx, 0);
		MlirAffineExpr lo_e[2] = {d0, mlirAffineConstantExprGet(mctx, 0)};
		MlirAffineExpr hi_e[2] = {
			d0, mlirAffineConstantExprGet(mctx, p->size[k] - 1)};
		idx[k] = affine_op(ld, "affine.max",
				   mlirAffineMapGet(mctx, 1, 0, 2, lo_e), 1,
				   &idx[k]);
		idx[k] = affine_op(ld, "affine.min",
				   mlirAffineMapGet(mctx, 1, 0, 2, hi_e), 1,
				   &idx[k]);
	}
	MlirValue lops[9];
	lops[0] = p->src;
	memcpy(lops + 1, idx, sizeof(*idx) * p->rank);
	MlirValue res = mlirOperationGetResult(ld, 0);
	MlirValue v = make(ld, "memref.load", p->rank + 1, lops,
			   mlirValueGetType(res), 0, NULL, NULL);
	if (!mlirValueIsNull(in)) {
		MlirValue sel[3] = {in, v, p->value};
		v = make(ld, "arith.select", 3, sel, mlirValueGetType(res), 0,
			 NULL, NULL);
	}
	mlirValueReplaceAllUsesOfWith(res, v);
	mlirOperationDestroy(ld);
	free(ops);
}

int pb_fuse_fold_pad(struct pb_ctx *ctx, const struct pb_fuse_opts *o,
		     const struct pb_poly_scop *s, int b)
{
	struct pad p = {.b = b, .fill = -1, .copy = -1};
	const struct pb_poly_buf *buf = &s->buf[b];
	MlirOperation alloc = pb_ir_value_parent(buf->root);
	int nread = 0, last = -1, xbuf = -1;
	if (buf->is_arg || !pb_ir_op_is(alloc, "memref.alloc"))
		return 0;
	for (int i = 0; i < s->nstmt; i++) {
		const struct pb_poly_stmt *st = &s->stmt[i];
		for (int k = 0; k < st->naccess; k++) {
			const struct pb_poly_access *a = &st->access[k];
			if (a->buf != b)
				continue;
			if (!a->write && a->direct && a->exact &&
			    pb_ir_op_is(a->op, "affine.load") && p.copy >= 0) {
				nread++;
				last = i;
			} else if (a->write && p.fill < 0 && is_fill(s, i, b, &p)) {
				p.fill = i;
			} else if (a->write && p.fill >= 0 && p.copy < 0 &&
				   is_copy(s, i, b, &p)) {
				p.copy = i;
				xbuf = st->access[0].buf;
			} else {
				return 0;
			}
		}
	}
	if (p.fill < 0 || p.copy < 0 || !nread ||
	    pb_fuse_num_uses(buf->root) != nread + 2 ||
	    pb_fuse_num_uses(mlirOperationGetResult(p.view, 0)) != 1)
		return 0;
	/* X keeps its value from C to the last reader */
	if (!pb_fuse_unwritten(s, p.copy + 1, last, xbuf))
		return 0;
	if (o->remarks)
		pb_remark_at(ctx, mlirOperationGetLocation(s->stmt[p.copy].op),
			     "pad folded into its %d reads: they load the "
			     "unpadded buffer with a bound check",
			     nread);
	pb_fuse_foreach_access(s, p.copy + 1, last, b, rewrite_load, &p);
	mlirOperationDestroy(s->stmt[p.copy].op);
	mlirOperationDestroy(p.view);
	mlirOperationDestroy(s->stmt[p.fill].op);
	mlirOperationDestroy(alloc);
	return 1;
}
