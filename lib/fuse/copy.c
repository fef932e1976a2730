/* Folding copies into their readers (docs/pb-fuse.md, "Copies").
 *
 * A Transpose, or a reshape that bufferization could not make a view,
 * is a nest C copying X into a new buffer T with the loop counters
 * permuted: T[g(i)] = X[f(i)]. When T is used by nothing else and X is
 * not written between C and the last reader, every load T[e] of a later
 * nest becomes the load X[f(g^-1(e))], still affine, and C and T go.
 *
 * This moves the permutation from C's stores to the readers' loads. It is
 * done when that cannot make the readers' loads worse: the copy keeps the
 * order of the dimensions that are not 1 (T is X reshaped: the same
 * elements in the same order), or every reader reads each element of T
 * once (an elementwise consumer, not a matmul reading it again and again
 * along a reduction). */
#include <stdlib.h>
#include <string.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "fuse/internal.h"

#define MAXR 12

/* The induction variable of loop "l". */
static MlirValue iv_of(MlirOperation l)
{
	return mlirBlockGetArgument(
		mlirRegionGetFirstBlock(mlirOperationGetRegion(l, 0)), 0);
}

/* The loop of "st" whose counter is "v", or -1. */
static int loop_of(const struct pb_poly_stmt *st, MlirValue v)
{
	for (int u = 0; u < st->depth; u++)
		if (mlirValueEqual(v, iv_of(st->loops[u])))
			return u;
	return -1;
}

/* Is "v" the index constant 0? */
static int is_zero(MlirValue v)
{
	if (!mlirValueIsAOpResult(v))
		return 0;
	MlirOperation def = mlirOpResultGetOwner(v);
	MlirAttribute c = pb_ir_attr(def, "value");
	return pb_ir_op_is(def, "arith.constant") && !mlirAttributeIsNull(c) &&
	       mlirAttributeIsAInteger(c) && !mlirIntegerAttrGetValueInt(c);
}

/* For each result of the map of access "a" of "st": the loop whose
 * counter it is ("loop[k]"), or -1 for the constant 0 in a dimension of
 * size 1. Returns the number of results, or -1 when some result is
 * anything else (or the map has symbols). */
static int result_loops(const struct pb_poly_stmt *st,
			const struct pb_poly_access *a, int *loop)
{
	MlirAttribute ma = pb_ir_attr(a->op, "map");
	MlirType t = mlirValueGetType(pb_fuse_access_memref(a));
	int first = a->write ? 2 : 1;
	if (mlirAttributeIsNull(ma) || !mlirAttributeIsAAffineMap(ma))
		return -1;
	MlirAffineMap map = mlirAffineMapAttrGetValue(ma);
	int n = mlirAffineMapGetNumResults(map);
	if (n > MAXR || mlirAffineMapGetNumSymbols(map))
		return -1;
	for (int k = 0; k < n; k++) {
		MlirAffineExpr e = mlirAffineMapGetResult(map, k);
		int one = mlirShapedTypeGetDimSize(t, k) == 1;
		loop[k] = -1;
		if (mlirAffineExprIsAConstant(e) && one &&
		    !mlirAffineConstantExprGetValue(e))
			continue;
		if (!mlirAffineExprIsADim(e))
			return -1;
		MlirValue v = mlirOperationGetOperand(
			a->op, first + mlirAffineDimExprGetPosition(e));
		loop[k] = loop_of(st, v);
		if (loop[k] < 0 && !(one && is_zero(v)))
			return -1;
	}
	return n;
}

/* The copy C = statement "c" of "s": its load and its store. */
struct copy {
	int c;
	const struct pb_poly_access *ld, *st;
	int pos[MAXR]; /* per loop of C: the dimension of T it indexes */
};

/* Is statement "c" a permuting copy from a load to a store into all of
 * buffer "b"? Fills "cp". */
static int is_copy(const struct pb_poly_scop *s, int c, int b, struct copy *cp)
{
	const struct pb_poly_stmt *st = &s->stmt[c];
	int loop[MAXR], seen = 0;
	if (st->kind != PB_POLY_NEST || st->naccess != 2 || st->depth > MAXR)
		return 0;
	const struct pb_poly_access *ld = &st->access[0], *sto = &st->access[1];
	if (ld->write || !sto->write || sto->buf != b || ld->buf == b ||
	    !sto->direct || !sto->exact || !ld->exact ||
	    !pb_ir_op_is(ld->op, "affine.load") ||
	    !mlirValueEqual(mlirOperationGetOperand(sto->op, 0),
			    mlirOperationGetResult(ld->op, 0)))
		return 0;
	int n = result_loops(st, sto, loop);
	if (n != s->buf[b].rank)
		return 0;
	for (int k = 0; k < n; k++) {
		if (loop[k] < 0)
			continue;
		if (seen & (1 << loop[k]) ||
		    st->extent[loop[k]] != s->buf[b].shape[k])
			return 0;
		seen |= 1 << loop[k];
		cp->pos[loop[k]] = k;
	}
	if (seen != (1 << st->depth) - 1)
		return 0;
	if (mlirAffineMapGetNumSymbols(
		    mlirAffineMapAttrGetValue(pb_ir_attr(ld->op, "map"))))
		return 0;
	cp->c = c;
	cp->ld = ld;
	cp->st = sto;
	return 1;
}

/* Does the copy keep the order of the loops between its load and its
 * store (the same elements in the same order)? */
static int keeps_order(const struct pb_poly_scop *s, const struct copy *cp)
{
	const struct pb_poly_stmt *st = &s->stmt[cp->c];
	int in[MAXR], out[MAXR], a = 0, b = 0;
	int n = result_loops(st, cp->ld, in), m = result_loops(st, cp->st, out);
	if (n < 0 || m < 0)
		return 0;
	for (int i = 0; i < n; i++)
		if (in[i] >= 0)
			in[a++] = in[i];
	for (int j = 0; j < m; j++)
		if (out[j] >= 0)
			out[b++] = out[j];
	return a == b && !memcmp(in, out, sizeof(*in) * a);
}

/* Does the load "a" of statement "st" read each element once (distinct
 * loop counters, one per loop of "st")? */
static int reads_once(const struct pb_poly_stmt *st,
		      const struct pb_poly_access *a)
{
	int loop[MAXR], seen = 0, cnt = 0;
	int n = result_loops(st, a, loop);
	if (n < 0)
		return 0;
	for (int k = 0; k < n; k++) {
		if (loop[k] < 0)
			continue;
		if (seen & (1 << loop[k]))
			return 0;
		seen |= 1 << loop[k];
		cnt++;
	}
	return cnt == st->depth;
}

/* Rewrite the load "r" of T into a load of the copy's source. */
static void rewrite(const struct pb_poly_scop *s, const struct copy *cp,
		    MlirOperation r)
{
	const struct pb_poly_stmt *st = &s->stmt[cp->c];
	MlirContext mctx = mlirOperationGetContext(r);
	MlirAffineMap rm = mlirAffineMapAttrGetValue(pb_ir_attr(r, "map"));
	MlirAffineMap fm = mlirAffineMapAttrGetValue(pb_ir_attr(cp->ld->op, "map"));
	int rd = mlirAffineMapGetNumDims(rm), fd = mlirAffineMapGetNumDims(fm);
	int nr = mlirOperationGetNumOperands(r) - 1;
	MlirValue *ops = malloc(sizeof(*ops) * (nr + fd + 1));
	MlirAffineExpr *sub = malloc(sizeof(*sub) * (fd + 1));
	if (!ops || !sub)
		abort();
	for (int i = 0; i < nr; i++)
		ops[i] = mlirOperationGetOperand(r, i + 1);
	int nops = nr, dims = rd;
	/* each dimension of the source's map: the reader's subscript of T
	 * for a loop counter of C, a new dimension for anything else */
	for (int j = 0; j < fd; j++) {
		MlirValue v = mlirOperationGetOperand(cp->ld->op, 1 + j);
		int u = loop_of(st, v);
		if (u >= 0) {
			sub[j] = mlirAffineMapGetResult(rm, cp->pos[u]);
		} else {
			sub[j] = mlirAffineDimExprGet(mctx, dims++);
			ops[nops++] = v;
		}
	}
	MlirAffineMap subst = mlirAffineMapGet(mctx, dims, 0, fd, sub);
	int nres = mlirAffineMapGetNumResults(fm);
	MlirAffineExpr *res = malloc(sizeof(*res) * (nres + 1));
	if (!res)
		abort();
	for (int k = 0; k < nres; k++)
		res[k] = mlirAffineExprCompose(mlirAffineMapGetResult(fm, k),
					       subst);
	MlirAffineMap nm = mlirAffineMapGet(mctx, dims, 0, nres, res);
	/* the new load: the old one with a new memref, map and operands */
	MlirOperationState state = mlirOperationStateGet(
		pb_str("affine.load"), mlirOperationGetLocation(r));
	MlirValue *all = malloc(sizeof(*all) * (nops + 1));
	if (!all)
		abort();
	all[0] = pb_fuse_access_memref(cp->ld);
	memcpy(all + 1, ops, sizeof(*ops) * nops);
	MlirType t = mlirValueGetType(mlirOperationGetResult(r, 0));
	MlirNamedAttribute na = mlirNamedAttributeGet(
		mlirIdentifierGet(mctx, pb_str("map")), mlirAffineMapAttrGet(nm));
	mlirOperationStateAddOperands(&state, nops + 1, all);
	mlirOperationStateAddResults(&state, 1, &t);
	mlirOperationStateAddAttributes(&state, 1, &na);
	MlirOperation ld = mlirOperationCreate(&state);
	mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(r), r, ld);
	mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(r, 0),
				      mlirOperationGetResult(ld, 0));
	mlirOperationDestroy(r);
	free(all);
	free(ops);
	free(sub);
	free(res);
}

/* Fold the copy into buffer "b" of "s" if the conditions of the file
 * comment hold; 1 when done. */
static int fold(struct pb_ctx *ctx, const struct pb_fuse_opts *o,
		const struct pb_poly_scop *s, int b)
{
	const struct pb_poly_buf *buf = &s->buf[b];
	MlirOperation alloc = pb_ir_value_parent(buf->root);
	struct copy cp = {.c = -1};
	int nread = 0, last = -1, once = 1;
	if (buf->is_arg || !pb_ir_op_is(alloc, "memref.alloc") ||
	    buf->rank > MAXR)
		return 0;
	for (int i = 0; i < s->nstmt; i++) {
		const struct pb_poly_stmt *st = &s->stmt[i];
		for (int k = 0; k < st->naccess; k++) {
			const struct pb_poly_access *a = &st->access[k];
			if (a->buf != b)
				continue;
			if (cp.c < 0 && a->write && is_copy(s, i, b, &cp))
				continue;
			if (cp.c < 0 || a->write || !a->direct || !a->exact ||
			    !pb_ir_op_is(a->op, "affine.load") ||
			    mlirAffineMapGetNumSymbols(mlirAffineMapAttrGetValue(
				    pb_ir_attr(a->op, "map"))))
				return 0;
			once &= reads_once(st, a);
			nread++;
			last = i;
		}
	}
	if (cp.c < 0 || !nread || pb_fuse_num_uses(buf->root) != nread + 1 ||
	    (!once && !keeps_order(s, &cp)))
		return 0;
	if (!pb_fuse_unwritten(s, cp.c + 1, last, cp.ld->buf))
		return 0;
	if (o->remarks)
		pb_remark_at(ctx, mlirOperationGetLocation(cp.st->op),
			     "copy folded into its %d reads: they load its "
			     "source",
			     nread);
	for (int i = cp.c + 1; i <= last; i++) {
		const struct pb_poly_stmt *st = &s->stmt[i];
		for (int k = 0; k < st->naccess; k++)
			if (st->access[k].buf == b)
				rewrite(s, &cp, st->access[k].op);
	}
	mlirOperationDestroy(s->stmt[cp.c].op);
	mlirOperationDestroy(alloc);
	return 1;
}

int pb_fuse_fold_copies(struct pb_ctx *ctx, const struct pb_fuse_opts *o,
			const struct pb_poly_scop *s)
{
	int n = 0;
	for (int b = 0; b < s->nbuf; b++)
		n += fold(ctx, o, s, b);
	return n;
}
