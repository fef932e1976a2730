/* Splitting a loop whose counter indexes two dimensions that a reshape
 * merged (docs/pb-fuse.md, "Grouped-query attention").
 *
 * Hugging Face's repeat_kv copies K [b, G, n, d] into T [b, G, R, n, d]
 * (Expand: R = H / G copies of each head) and reads T as [b, H, n, d]
 * through a memref.collapse_shape V merging T's dimensions [G, R]. A nest
 * reading V[.., h, ..], h the counter of a loop over 0..H, cannot take
 * the copy folded into it: the copy's source would be read at
 * h floordiv R, and the folds (and the kernel models after them) take
 * loop counters. When every use of h in the nest is the whole subscript
 * of a dimension of size H of a buffer defined outside the nest, the loop
 *
 *     for h in 0..G*R: .. V[.., h, ..] .. Q[.., h, ..] ..
 *
 * becomes two loops of the same kind (affine.for or affine.parallel)
 *
 *     for g in 0..G: for r in 0..R: .. T[.., g, r, ..] .. Q'[.., g, r, ..] ..
 *
 * with h = g * R + r: accesses through V name T itself, and any other
 * buffer gets a memref.expand_shape view Q' in @main splitting that
 * dimension into [G, R]. The nest computes the same values in the same
 * order, with every subscript a loop counter as before; its reads of T
 * are then direct, and the copy fold (copy.c) makes them read the copy's
 * source at [.., g, ..]. This is done for the views of the buffers that a
 * plain copy writes, the case it serves. */
#include <stdio.h>
#include <stdlib.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "fuse/internal.h"

#define MAXR PB_FUSE_MAXR

/* One split of the loop "l" with counter "h" over outer * inner
 * iterations, in the top-level operation "top" of "body". */
struct split {
	MlirBlock body;
	MlirOperation top, l;
	MlirValue h;
	int64_t outer, inner;
	MlirValue g, r;		  /* the new counters */
	MlirOperation at;	  /* where views are inserted */
	int nview, nthrough;	  /* expand_shape views made, accesses of T */
	MlirValue view_of[MAXR], view[MAXR];
	int view_dim[MAXR];
};

/* The loop whose counter is "v", when it runs from 0 to a constant with
 * step 1 (an affine.for without results or a one-dimensional
 * affine.parallel); its trip count into *n. Null otherwise. */
static MlirOperation full_loop(MlirValue v, int64_t *n)
{
	MlirOperation none = {NULL};
	if (!mlirValueIsABlockArgument(v))
		return none;
	MlirOperation l =
		mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(v));
	if (mlirOperationIsNull(l))
		return none;
	if (pb_ir_op_is(l, "affine.parallel")) {
		int64_t lb, step;
		MlirValue iv;
		if (pb_ir_parallel_dims(l, 1, &lb, &step, n, &iv) != 1 || lb ||
		    step != 1)
			return none;
		return l;
	}
	int64_t lb;
	MlirAttribute st = pb_ir_attr(l, "step");
	if (!pb_ir_op_is(l, "affine.for") || mlirOperationGetNumResults(l) ||
	    pb_ir_const_map(l, "lowerBoundMap", 1, &lb) || lb ||
	    pb_ir_const_map(l, "upperBoundMap", 1, n) ||
	    mlirAttributeIsNull(st) || !mlirAttributeIsAInteger(st) ||
	    mlirIntegerAttrGetValueInt(st) != 1)
		return none;
	return l;
}

/* Is "t" a memref of static shape and identity layout, of rank below
 * MAXR? */
static int plain_memref(MlirType t)
{
	return mlirTypeIsAMemRef(t) && mlirShapedTypeHasStaticShape(t) &&
	       mlirShapedTypeGetRank(t) < MAXR &&
	       mlirAffineMapIsIdentity(mlirMemRefTypeGetAffineMap(t));
}

/* The index of the first subscript operand of the access "acc". */
static int first_index(MlirOperation acc)
{
	return pb_ir_op_is(acc, "affine.store") ? 2 : 1;
}

/* The memref operand of the access "acc". */
static MlirValue memref_of(MlirOperation acc)
{
	return mlirOperationGetOperand(acc, first_index(acc) - 1);
}

/* For the use of the counter of "sp" as operand "i" of "acc": the result
 * of acc's map that is that dimension alone, over a dimension of size
 * outer * inner of a buffer defined outside the nest, no other result
 * using it; -1 when the use is anything else. */
static int split_result(const struct split *sp, MlirOperation acc, int i)
{
	if (!pb_ir_op_is(acc, "affine.load") &&
	    !pb_ir_op_is(acc, "affine.store"))
		return -1;
	int first = first_index(acc), j = i - first, k = -1;
	MlirValue m = memref_of(acc);
	MlirAttribute ma = pb_ir_attr(acc, "map");
	if (j < 0 || mlirAttributeIsNull(ma) ||
	    !plain_memref(mlirValueGetType(m)) ||
	    pb_ir_is_inside(pb_ir_value_parent(m), sp->top))
		return -1;
	MlirAffineMap map = mlirAffineMapAttrGetValue(ma);
	if (mlirAffineMapGetNumSymbols(map))
		return -1;
	for (int q = 0; q < mlirAffineMapGetNumResults(map); q++) {
		MlirAffineExpr e = mlirAffineMapGetResult(map, q);
		if (!mlirAffineExprIsFunctionOfDim(e, j))
			continue;
		if (k >= 0 || !mlirAffineExprIsADim(e))
			return -1;
		k = q;
	}
	if (k < 0 || mlirShapedTypeGetDimSize(mlirValueGetType(m), k) !=
			     sp->outer * sp->inner)
		return -1;
	return k;
}

/* The reassociation group of the collapse_shape "op" that dimension "k"
 * of its result comes from: its dimensions of the source into "dim", the
 * number of them returned. */
static int group(MlirOperation op, int k, int *dim)
{
	MlirAttribute grp =
		mlirArrayAttrGetElement(pb_ir_attr(op, "reassociation"), k);
	int n = mlirArrayAttrGetNumElements(grp);
	for (int j = 0; j < n; j++)
		dim[j] = mlirIntegerAttrGetValueInt(
			mlirArrayAttrGetElement(grp, j));
	return n;
}

/* When the memref of "acc" is a collapse_shape of some T whose result
 * dimension "k" merges two dimensions of T of sizes (outer, inner) of
 * "sp" (and dimensions of size 1), and every other result dimension
 * merges at most one dimension of size other than 1: fill "from" for
 * each dimension of T (the result of acc's map it takes, -1 for 0, -2
 * for the outer counter, -3 for the inner one) and return T. */
static MlirValue through(const struct split *sp, MlirOperation acc, int k,
			 int *from)
{
	MlirValue none = {NULL}, v = memref_of(acc);
	if (!mlirValueIsAOpResult(v))
		return none;
	MlirOperation op = mlirOpResultGetOwner(v);
	if (!pb_ir_op_is(op, "memref.collapse_shape"))
		return none;
	MlirValue t = mlirOperationGetOperand(op, 0);
	MlirType tt = mlirValueGetType(t);
	if (!plain_memref(tt))
		return none;
	for (int q = 0; q < mlirShapedTypeGetRank(mlirValueGetType(v)); q++) {
		int dim[MAXR], n = group(op, q, dim), real = 0;
		for (int j = 0; j < n; j++) {
			int64_t sz = mlirShapedTypeGetDimSize(tt, dim[j]);
			from[dim[j]] = -1;
			if (sz == 1)
				continue;
			if (q != k)
				from[dim[j]] = q;
			else if (real < 2)
				from[dim[j]] = real ? -3 : -2;
			if (q == k && sz != (real ? sp->inner : sp->outer))
				return none;
			real++;
		}
		if (q == k ? real != 2 : real > 1)
			return none;
	}
	return t;
}

/* Is "op" a perfect nest of loops whose innermost body holds no region
 * (what fusion may merge with other nests)? */
static int perfect(MlirOperation op)
{
	while (pb_ir_op_is(op, "affine.for") ||
	       pb_ir_op_is(op, "affine.parallel")) {
		MlirBlock b =
			mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
		MlirOperation first = mlirBlockGetFirstOperation(b);
		MlirOperation term = mlirBlockGetTerminator(b);
		if (mlirOperationEqual(mlirOperationGetNextInBlock(first),
				       term) &&
		    mlirOperationGetNumRegions(first)) {
			op = first;
			continue;
		}
		for (MlirOperation w = first; !mlirOperationEqual(w, term);
		     w = mlirOperationGetNextInBlock(w))
			if (mlirOperationGetNumRegions(w))
				return 0;
		return 1;
	}
	return 0;
}

/* Is "v" (a memref, or a view of one) used by no operation outside "top"
 * but views and deallocations? */
static int private_to(MlirValue v, MlirOperation top)
{
	for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u);
	     u = mlirOpOperandGetNextUse(u)) {
		MlirOperation w = mlirOpOperandGetOwner(u);
		if (pb_ir_is_inside(w, top) || pb_ir_op_is(w, "memref.dealloc"))
			continue;
		if (!pb_ir_op_is(w, "memref.collapse_shape") &&
		    !pb_ir_op_is(w, "memref.expand_shape"))
			return 0;
		if (!private_to(mlirOperationGetResult(w, 0), top))
			return 0;
	}
	return 1;
}

/* Would the split of "sp" leave the buffer of the access "acc" (re-indexed
 * at result "k") as it was for the other nests? A perfect nest shares
 * its loops with the nests it fuses with, so the local buffers it would
 * view (not those it reads under the collapse_shape) must be its own; an
 * imperfect one (a fused attention) is a kernel of its own. */
static int keeps_fusion(const struct split *sp, MlirOperation acc, int k)
{
	int from[MAXR + 1];
	MlirValue m = memref_of(acc);
	MlirOperation root = pb_ir_value_parent(m);
	if (!perfect(sp->top) || !mlirValueIsNull(through(sp, acc, k, from)))
		return 1;
	while (pb_ir_op_is(root, "memref.collapse_shape") ||
	       pb_ir_op_is(root, "memref.expand_shape"))
		root = pb_ir_value_parent(mlirOperationGetOperand(root, 0));
	return !pb_ir_op_is(root, "memref.alloc") ||
	       private_to(mlirOperationGetResult(root, 0), sp->top);
}

/* Can every use of the counter of "sp" be split (split_result)? */
static int splittable(const struct split *sp)
{
	for (MlirOpOperand u = mlirValueGetFirstUse(sp->h);
	     !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u)) {
		MlirOperation acc = mlirOpOperandGetOwner(u);
		int i = mlirOpOperandGetOperandNumber(u);
		for (int o = 0; o < mlirOperationGetNumOperands(acc); o++)
			if (o != i &&
			    mlirValueEqual(mlirOperationGetOperand(acc, o), sp->h))
				return 0;	/* h twice in one access */
		int k = split_result(sp, acc, i);
		if (k < 0 || !keeps_fusion(sp, acc, k))
			return 0;
	}
	return 1;
}

/* A memref.expand_shape view of "m" splitting its dimension "k" into
 * (outer, inner) of "sp", made once per buffer and dimension before the
 * nest. */
static MlirValue expanded(struct split *sp, MlirValue m, int k)
{
	for (int i = 0; i < sp->nview; i++)
		if (mlirValueEqual(sp->view_of[i], m) && sp->view_dim[i] == k)
			return sp->view[i];
	if (sp->nview == MAXR)
		abort();
	MlirType t = mlirValueGetType(m);
	int n = mlirShapedTypeGetRank(t);
	int64_t shape[MAXR];
	struct pb_buf text = {0}, ts = {0}, vs = {0};
	for (int q = 0, d = 0; q < n; q++) {
		int64_t sz = mlirShapedTypeGetDimSize(t, q);
		if (q == k) {
			shape[d++] = sp->outer;
			shape[d++] = sp->inner;
		} else {
			shape[d++] = sz;
		}
	}
	MlirType vt = mlirMemRefTypeContiguousGet(
		mlirShapedTypeGetElementType(t), n + 1, shape,
		mlirMemRefTypeGetMemorySpace(t));
	pb_ir_type_print(t, &ts);
	pb_ir_type_print(vt, &vs);
	pb_buf_printf(&text, "func.func @f(%%m: %s) {\n  %%v = "
		      "memref.expand_shape %%m [", ts.data);
	for (int q = 0, d = 0; q < n; q++, d++) {
		if (q == k) {
			pb_buf_printf(&text, "%s[%d, %d]", q ? ", " : "", d,
				      d + 1);
			d++;
		} else {
			pb_buf_printf(&text, "%s[%d]", q ? ", " : "", d);
		}
	}
	pb_buf_printf(&text, "] output_shape [");
	for (int d = 0; d <= n; d++)
		pb_buf_printf(&text, "%s%lld", d ? ", " : "",
			      (long long)shape[d]);
	pb_buf_printf(&text, "] : %s into %s\n  return\n}\n", ts.data,
		      vs.data);
	MlirOperation op = pb_ir_clone_from_text(mlirTypeGetContext(t),
						 text.data,
						 "memref.expand_shape", 1, &m);
	pb_buf_free(&text);
	pb_buf_free(&ts);
	pb_buf_free(&vs);
	if (mlirOperationIsNull(op))
		abort();
	mlirOperationSetLocation(op, mlirOperationGetLocation(sp->at));
	mlirBlockInsertOwnedOperationBefore(sp->body, sp->at, op);
	sp->view_of[sp->nview] = m;
	sp->view_dim[sp->nview] = k;
	sp->view[sp->nview] = mlirOperationGetResult(op, 0);
	return sp->view[sp->nview++];
}

/* Re-index the access "acc", whose operand "i" is the counter of "sp"
 * and the whole subscript "k": at the new counters, of the buffer under
 * its collapse_shape (through) or of an expanded view (expanded). */
static void reindex(struct split *sp, MlirOperation acc, int i, int k)
{
	MlirAffineMap map = mlirAffineMapAttrGetValue(pb_ir_attr(acc, "map"));
	MlirContext mctx = mlirAffineMapGetContext(map);
	int first = first_index(acc), j = i - first;
	int nd = mlirAffineMapGetNumDims(map);
	int nr = mlirAffineMapGetNumResults(map);
	int nops = mlirOperationGetNumOperands(acc), from[MAXR + 1], n = 0;
	MlirAffineExpr e[MAXR + 1];
	MlirValue mem = through(sp, acc, k, from);
	if (!mlirValueIsNull(mem)) {
		n = mlirShapedTypeGetRank(mlirValueGetType(mem));
		sp->nthrough++;
	} else {
		mem = expanded(sp, memref_of(acc), k);
		for (int q = 0; q < nr; q++) {
			from[n++] = q == k ? -2 : q;
			if (q == k)
				from[n++] = -3;
		}
	}
	for (int q = 0; q < n; q++)
		e[q] = from[q] >= 0   ? mlirAffineMapGetResult(map, from[q])
		       : from[q] == -1 ? mlirAffineConstantExprGet(mctx, 0)
		       : from[q] == -2 ? mlirAffineDimExprGet(mctx, j)
				       : mlirAffineDimExprGet(mctx, nd);
	MlirValue *ops = pb_xrealloc(NULL, nops + 1, sizeof(*ops));
	for (int q = 0; q < nops; q++)
		ops[q] = mlirOperationGetOperand(acc, q);
	ops[first - 1] = mem;
	ops[i] = sp->g;
	ops[nops] = sp->r;
	mlirOperationSetOperands(acc, nops + 1, ops);
	free(ops);
	pb_ir_set_attr(acc, "map",
		       mlirAffineMapAttrGet(
			       mlirAffineMapGet(mctx, nd + 1, 0, n, e)));
}

/* Split the loop of "sp" (splittable) into two of the same kind. */
static void split(struct split *sp)
{
	int par = pb_ir_op_is(sp->l, "affine.parallel");
	MlirLocation loc = mlirOperationGetLocation(sp->l);
	MlirOperation ot = pb_fuse_loop(sp->l, sp->outer, par, loc, &sp->g);
	MlirOperation it = pb_fuse_loop(ot, sp->inner, par, loc, &sp->r);
	sp->at = pb_ir_ancestor_in(ot, sp->body);
	MlirOpOperand u;
	while (!mlirOpOperandIsNull(u = mlirValueGetFirstUse(sp->h))) {
		MlirOperation acc = mlirOpOperandGetOwner(u);
		int i = mlirOpOperandGetOperandNumber(u);
		reindex(sp, acc, i, split_result(sp, acc, i));
	}
	pb_fuse_splice_body(sp->l, sp->g, it);
	mlirOperationDestroy(sp->l);
}

/* Try the split that the load "acc" of the collapse_shape "view" of a
 * copy's buffer asks for: its merged subscript a loop counter over the
 * whole dimension. Returns 1 when split. */
static int try_split(struct pb_ctx *ctx, const struct pb_fuse_opts *o,
		     MlirBlock body, MlirOperation view, MlirOperation acc)
{
	MlirType vt = mlirValueGetType(mlirOperationGetResult(view, 0));
	MlirType tt = mlirValueGetType(mlirOperationGetOperand(view, 0));
	MlirAttribute ma = pb_ir_attr(acc, "map");
	if (!pb_ir_op_is(acc, "affine.load") || mlirAttributeIsNull(ma) ||
	    !plain_memref(tt) || mlirShapedTypeGetRank(vt) > MAXR)
		return 0;
	MlirAffineMap map = mlirAffineMapAttrGetValue(ma);
	for (int k = 0; k < mlirShapedTypeGetRank(vt); k++) {
		int dim[MAXR], n = group(view, k, dim), real = 0;
		int64_t size[2] = {1, 1};
		for (int j = 0; j < n; j++) {
			int64_t sz = mlirShapedTypeGetDimSize(tt, dim[j]);
			if (sz != 1 && real < 2)
				size[real] = sz;
			real += sz != 1;
		}
		MlirAffineExpr e = mlirAffineMapGetResult(map, k);
		if (real != 2 || !mlirAffineExprIsADim(e))
			continue;
		struct split sp = {.body = body, .outer = size[0],
				   .inner = size[1]};
		int64_t trip;
		sp.h = mlirOperationGetOperand(
			acc, 1 + mlirAffineDimExprGetPosition(e));
		sp.l = full_loop(sp.h, &trip);
		if (mlirOperationIsNull(sp.l) || trip != size[0] * size[1])
			continue;
		sp.top = pb_ir_ancestor_in(sp.l, body);
		if (!splittable(&sp))
			continue;
		MlirLocation loc = mlirOperationGetLocation(sp.top);
		split(&sp);
		if (o->remarks)
			pb_remark_at(ctx, loc,
				     "loop over %lld split into %lld x %lld: "
				     "%d accesses read the buffer under a "
				     "collapse_shape at loop counters, %d "
				     "buffers viewed through an expand_shape",
				     (long long)trip, (long long)sp.outer,
				     (long long)sp.inner, sp.nthrough,
				     sp.nview);
		return 1;
	}
	return 0;
}

int pb_fuse_split_merged(struct pb_ctx *ctx, const struct pb_fuse_opts *o,
			 const struct pb_poly_scop *s, MlirBlock body)
{
	struct pb_ir_ops views = {0};
	int n = 0;
	/* the views first: a split makes "s" stale */
	for (int b = 0; b < s->nbuf; b++) {
		MlirValue root = s->buf[b].root;
		if (s->buf[b].is_arg || pb_fuse_copy_writer(s, b) < 0)
			continue;
		for (MlirOpOperand u = mlirValueGetFirstUse(root);
		     !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u))
			if (pb_ir_op_is(mlirOpOperandGetOwner(u),
					"memref.collapse_shape"))
				pb_ir_ops_push(&views,
					       mlirOpOperandGetOwner(u));
	}
	for (int i = 0; i < views.n; i++) {
		MlirValue v = mlirOperationGetResult(views.v[i], 0);
		/* a split re-aims the loads it splits: start again */
		for (MlirOpOperand u = mlirValueGetFirstUse(v);
		     !mlirOpOperandIsNull(u);) {
			if (try_split(ctx, o, body, views.v[i],
				      mlirOpOperandGetOwner(u))) {
				n++;
				u = mlirValueGetFirstUse(v);
			} else {
				u = mlirOpOperandGetNextUse(u);
			}
		}
	}
	pb_ir_ops_free(&views);
	if (n)
		pb_fuse_drop_unused_reshapes(body);
	return n;
}
