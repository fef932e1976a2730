/* Folding copies and inlining producers into their readers (docs/
 * pb-fuse.md, "Copies and inlining").
 *
 * A Transpose, or a reshape that bufferization could not make a view,
 * is a nest C copying X into a new buffer T with the loop counters
 * permuted: T[g(i)] = X[f(i)]. When T is used by nothing else and X is
 * not written between C and the last reader, every load T[e] of a later
 * nest becomes the load X[f(g^-1(e))], still affine, and C and T go.
 * This moves the permutation from C's stores to the readers' loads. It is
 * done when that cannot make the readers' loads worse: the copy keeps the
 * order of the dimensions that are not 1 (T is X reshaped: the same
 * elements in the same order), or every reader reads each element of T
 * once (an elementwise consumer, not a matmul reading it again and again
 * along a reduction).
 *
 * More generally C may compute T[g(i)] from loads X_k[f_k(i)] with
 * arithmetic (an elementwise producer). Each load T[e] then becomes a
 * copy of C's body with the loads X_k[f_k(g^-1(e))]: the producer is
 * inlined and recomputed once per read. That is done when the readers
 * read T at most --max-redundancy times per element in all (default 1:
 * no value computed twice), when some reader is not aligned with C (a
 * transposed or strided read, which the loop merging cannot fuse), and
 * when C does not read a reduction's result (then it is that
 * reduction's epilogue, and merging keeps the accumulator local). */
#include <stdlib.h>
#include <string.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "fuse/internal.h"

#define MAXR PB_FUSE_MAXR

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

int pb_fuse_result_loops(const struct pb_poly_stmt *st,
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

/* The copy or producer C = statement "c" of "s": its loads and store. */
struct copy {
	const struct pb_poly_scop *s;
	int c;
	const struct pb_poly_access *ld, *st; /* ld: the first load or NULL */
	int compute;	/* more than one load -> store of the loaded value */
	int pos[MAXR];	/* per loop of C: the dimension of T it indexes */
};

/* May "op" be recomputed in a reader: arithmetic without regions or
 * memory effects? */
static int pure(MlirOperation op)
{
	MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
	if (mlirOperationGetNumRegions(op))
		return 0;
	return (n.length > 6 && !strncmp(n.data, "arith.", 6)) ||
	       (n.length > 5 && !strncmp(n.data, "math.", 5));
}

/* Is statement "c" a permuting copy, or an elementwise producer, storing
 * into all of buffer "b"? Fills "cp". */
static int is_copy(const struct pb_poly_scop *s, int c, int b, struct copy *cp)
{
	const struct pb_poly_stmt *st = &s->stmt[c];
	int loop[MAXR], seen = 0;
	if (st->kind != PB_POLY_NEST || st->naccess < 1 || st->depth > MAXR)
		return 0;
	const struct pb_poly_access *sto = &st->access[st->naccess - 1];
	if (!sto->write || sto->buf != b || !sto->direct || !sto->exact)
		return 0;
	for (int k = 0; k + 1 < st->naccess; k++) {
		const struct pb_poly_access *ld = &st->access[k];
		if (ld->write || ld->buf == b || !ld->exact ||
		    !pb_ir_op_is(ld->op, "affine.load") ||
		    mlirAffineMapGetNumSymbols(mlirAffineMapAttrGetValue(
			    pb_ir_attr(ld->op, "map"))))
			return 0;
	}
	/* the body: the loads, arithmetic, the store last */
	MlirBlock body = st->body;
	MlirOperation term = mlirBlockGetTerminator(body);
	for (MlirOperation op = mlirBlockGetFirstOperation(body);
	     !mlirOperationEqual(op, term); op = mlirOperationGetNextInBlock(op))
		if (!pb_ir_op_is(op, "affine.load") &&
		    !mlirOperationEqual(op, sto->op) && !pure(op))
			return 0;
	if (!mlirOperationEqual(mlirOperationGetNextInBlock(sto->op), term))
		return 0;
	int n = pb_fuse_result_loops(st, sto, loop);
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
	cp->c = c;
	cp->ld = st->naccess > 1 ? &st->access[0] : NULL;
	cp->st = sto;
	cp->compute = !(st->naccess == 2 &&
			mlirValueEqual(mlirOperationGetOperand(sto->op, 0),
				       mlirOperationGetResult(cp->ld->op, 0)));
	return 1;
}

/* Is the producer "cp" a scaled copy: its one load, maybe widened, times
 * or over a value from outside, maybe narrowed, stored (torch's
 * scaled_dot_product_attention export scales Q and K^T so)? */
static int scaled(const struct copy *cp)
{
	static const char *const pat[] = {"affine.load", "?arith.extf",
					  "arith.mulf|arith.divf",
					  "?arith.truncf", "affine.store"};
	const struct pb_poly_stmt *st = &cp->s->stmt[cp->c];
	MlirOperation op = mlirBlockGetFirstOperation(st->body), prev = op;
	if (st->naccess != 2)
		return 0;
	for (int k = 0; k < 5; k++) {
		const char *p = pat[k] + (pat[k][0] == '?');
		int ok = strchr(p, '|') ? pb_ir_op_is(op, "arith.mulf") ||
						  pb_ir_op_is(op, "arith.divf")
					: pb_ir_op_is(op, p);
		if (!ok && pat[k][0] == '?')
			continue;
		if (!ok || (k && !mlirValueEqual(mlirOperationGetOperand(op, 0),
						 mlirOperationGetResult(prev,
									0))))
			return 0;
		if (k == 2 && pb_ir_defined_in(mlirOperationGetOperand(op, 1),
					       st->op))
			return 0;
		prev = op;
		op = mlirOperationGetNextInBlock(op);
	}
	return mlirOperationEqual(prev, cp->st->op);
}

/* Does the load "a" of statement "st" index its buffer with the loop
 * counters of "st" in order (an aligned consumer, which merging the
 * loops fuses without recomputation)? */
static int aligned(const struct pb_poly_stmt *st, const struct pb_poly_access *a)
{
	int loop[MAXR], next = 0;
	int n = pb_fuse_result_loops(st, a, loop);
	if (n < 0)
		return 0;
	for (int k = 0; k < n; k++)
		if (loop[k] >= 0 && loop[k] != next++)
			return 0;
	return next == st->depth;
}

/* Does statement "c" read a buffer that a reduction before it writes
 * (some statement writing an element from several iterations)? Such a
 * producer is the epilogue of that reduction: merging it into the
 * reduction's nest keeps the accumulator local, inlining it into its
 * readers would not. */
static int after_reduction(const struct pb_poly_scop *s, int c)
{
	const struct pb_poly_stmt *st = &s->stmt[c];
	for (int k = 0; k < st->naccess; k++) {
		if (st->access[k].write)
			continue;
		for (int w = 0; w < c; w++)
			for (int j = 0; j < s->stmt[w].naccess; j++) {
				const struct pb_poly_access *a =
					&s->stmt[w].access[j];
				if (a->write && a->buf == st->access[k].buf &&
				    isl_map_is_injective(a->rel) != isl_bool_true)
					return 1;
			}
	}
	return 0;
}

/* Does the copy keep the order of the loops between its load and its
 * store: the same elements in the same order, or a broadcast (the load's
 * loops those of the store with some left out, each element of the
 * source copied along the dimensions it lacks: Expand)? */
static int keeps_order(const struct pb_poly_scop *s, const struct copy *cp)
{
	const struct pb_poly_stmt *st = &s->stmt[cp->c];
	int in[MAXR], out[MAXR], a = 0, b = 0;
	int n = pb_fuse_result_loops(st, cp->ld, in), m = pb_fuse_result_loops(st, cp->st, out);
	if (n < 0 || m < 0)
		return 0;
	for (int i = 0; i < n; i++)
		if (in[i] >= 0)
			in[a++] = in[i];
	for (int j = 0; j < m; j++)
		if (out[j] >= 0)
			out[b++] = out[j];
	int k = 0;
	for (int j = 0; j < b && k < a; j++)
		k += out[j] == in[k];
	return k == a;
}

int pb_fuse_copy_writer(const struct pb_poly_scop *s, int b)
{
	struct copy cp = {.s = s, .c = -1};
	for (int i = 0; i < s->nstmt; i++)
		for (int k = 0; k < s->stmt[i].naccess; k++)
			if (s->stmt[i].access[k].write &&
			    s->stmt[i].access[k].buf == b)
				return is_copy(s, i, b, &cp) && !cp.compute &&
					       keeps_order(s, &cp)
					   ? i
					   : -1;
	return -1;
}

/* Does the load "a" of statement "st" read each element once (distinct
 * loop counters, one per loop of "st")? */
static int reads_once(const struct pb_poly_stmt *st,
		      const struct pb_poly_access *a)
{
	int loop[MAXR], seen = 0, cnt = 0;
	int n = pb_fuse_result_loops(st, a, loop);
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

/* A load of the producer's load "pl" at the element that the reader's
 * load "r" of T reads, inserted before "r"; returns its value. */
static MlirValue reload(const struct pb_poly_scop *s, const struct copy *cp,
			MlirOperation pl, MlirOperation r)
{
	const struct pb_poly_stmt *st = &s->stmt[cp->c];
	MlirContext mctx = mlirOperationGetContext(r);
	MlirAffineMap rm = mlirAffineMapAttrGetValue(pb_ir_attr(r, "map"));
	MlirAffineMap fm = mlirAffineMapAttrGetValue(pb_ir_attr(pl, "map"));
	int rd = mlirAffineMapGetNumDims(rm), fd = mlirAffineMapGetNumDims(fm);
	int nr = mlirOperationGetNumOperands(r) - 1;
	MlirValue *ops = malloc(sizeof(*ops) * (nr + fd + 2));
	MlirAffineExpr *sub = malloc(sizeof(*sub) * (fd + 1));
	if (!ops || !sub)
		abort();
	ops[0] = mlirOperationGetOperand(pl, 0);
	for (int i = 0; i < nr; i++)
		ops[1 + i] = mlirOperationGetOperand(r, i + 1);
	int nops = 1 + nr, dims = rd;
	/* each dimension of the producer's map: the reader's subscript of T
	 * for a loop counter of C, a new dimension for anything else */
	for (int j = 0; j < fd; j++) {
		MlirValue v = mlirOperationGetOperand(pl, 1 + j);
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
	MlirOperationState state = mlirOperationStateGet(
		pb_str("affine.load"), mlirOperationGetLocation(pl));
	MlirType t = mlirValueGetType(mlirOperationGetResult(pl, 0));
	MlirNamedAttribute na = mlirNamedAttributeGet(
		mlirIdentifierGet(mctx, pb_str("map")), mlirAffineMapAttrGet(nm));
	mlirOperationStateAddOperands(&state, nops, ops);
	mlirOperationStateAddResults(&state, 1, &t);
	mlirOperationStateAddAttributes(&state, 1, &na);
	MlirOperation ld = mlirOperationCreate(&state);
	mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(r), r, ld);
	free(ops);
	free(sub);
	free(res);
	return mlirOperationGetResult(ld, 0);
}

/* Replace the load "r" of T by the producer's value at that element:
 * its loads re-aimed (reload) and its arithmetic cloned before "r";
 * "user" is the copy. */
static void rewrite(MlirOperation r, void *user)
{
	const struct copy *cp = user;
	const struct pb_poly_scop *s = cp->s;
	const struct pb_poly_stmt *st = &s->stmt[cp->c];
	struct pb_ir_map map = {0};
	for (MlirOperation op = mlirBlockGetFirstOperation(st->body);
	     !mlirOperationEqual(op, cp->st->op);
	     op = mlirOperationGetNextInBlock(op)) {
		if (pb_ir_op_is(op, "affine.load")) {
			pb_ir_map_add(&map, mlirOperationGetResult(op, 0),
				      reload(s, cp, op, r));
			continue;
		}
		MlirOperation c = mlirOperationClone(op);
		pb_ir_remap_operands(c, &map);
		mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(r), r, c);
		for (intptr_t k = 0; k < mlirOperationGetNumResults(op); k++)
			pb_ir_map_add(&map, mlirOperationGetResult(op, k),
				      mlirOperationGetResult(c, k));
	}
	MlirValue v = mlirOperationGetOperand(cp->st->op, 0);
	MlirValue nv = pb_ir_map_lookup(&map, v);
	mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(r, 0),
				      mlirValueIsNull(nv) ? v : nv);
	mlirOperationDestroy(r);
	pb_ir_map_free(&map);
}

/* Is "op" an affine.load without symbols in its map? */
static int direct_load(MlirOperation op)
{
	return pb_ir_op_is(op, "affine.load") &&
	       !mlirAffineMapGetNumSymbols(
		       mlirAffineMapAttrGetValue(pb_ir_attr(op, "map")));
}

/* Append to "rd" the uses of buffer "root" inside the opaque statement
 * "op" (a fused attention nest) and return how many, when all of them
 * are such loads of "root" itself; -1 otherwise. */
static int opaque_loads(MlirOperation op, MlirValue root,
			struct pb_ir_ops *rd)
{
	int n = 0;
	for (MlirOpOperand u = mlirValueGetFirstUse(root);
	     !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u)) {
		MlirOperation w = mlirOpOperandGetOwner(u);
		if (!pb_ir_is_inside(w, op))
			continue;
		if (!direct_load(w) || mlirOpOperandGetOperandNumber(u))
			return -1;
		pb_ir_ops_push(rd, w);
		n++;
	}
	return n;
}

/* Fold the copy or producer into buffer "b" of "s" into its readers
 * (pb_fuse_fold_copy); with "any_order" a plain copy (2: or a scaled
 * one) is folded however its readers walk it (pb_fuse_fold_copy_always). */
static int fold(struct pb_ctx *ctx, const struct pb_fuse_opts *o,
		const struct pb_poly_scop *s, int b, int any_order)
{
	const struct pb_poly_buf *buf = &s->buf[b];
	MlirOperation alloc = pb_ir_value_parent(buf->root);
	struct copy cp = {.s = s, .c = -1};
	struct pb_ir_ops rd = {0}; /* the loads of T */
	int nread = 0, last = -1, once = 1, all_aligned = 1, opaque = 0;
	int done = 0;
	double reads = 0, elems = 1;
	if (buf->is_arg || !pb_ir_op_is(alloc, "memref.alloc") ||
	    buf->rank > MAXR)
		return 0;
	for (int k = 0; k < buf->rank; k++)
		elems *= (double)buf->shape[k];
	for (int i = 0; i < s->nstmt; i++) {
		const struct pb_poly_stmt *st = &s->stmt[i];
		if (st->kind == PB_POLY_OPAQUE && cp.c >= 0) {
			int k = opaque_loads(st->op, buf->root, &rd);
			if (k < 0)
				goto out;
			if (k) {
				nread += k;
				last = i;
				opaque = 1;
			}
			continue;
		}
		for (int k = 0; k < st->naccess; k++) {
			const struct pb_poly_access *a = &st->access[k];
			if (a->buf != b)
				continue;
			if (cp.c < 0 && a->write && is_copy(s, i, b, &cp))
				continue;
			if (cp.c < 0 || a->write || !direct_load(a->op) ||
			    !a->direct || !a->exact)
				goto out;
			double it = 1;
			for (int u = 0; u < st->depth; u++)
				it *= (double)st->extent[u];
			reads += it;
			once &= reads_once(st, a);
			all_aligned &= aligned(st, a);
			pb_ir_ops_push(&rd, a->op);
			nread++;
			last = i;
		}
	}
	if (cp.c < 0 || !nread || pb_fuse_num_uses(buf->root) != nread + 1)
		goto out;
	/* an opaque reader's loads are counted, not their iterations:
	 * only a plain copy that keeps the order folds into it */
	once &= !opaque;
	all_aligned &= !opaque;
	double redundancy = reads / elems;
	double limit = o->max_redundancy > 0 ? o->max_redundancy : 1.0;
	if (cp.compute && opaque)
		goto out;
	if (any_order ? cp.compute && !(any_order == 2 && scaled(&cp))
	    : cp.compute ? redundancy > limit || all_aligned ||
				   after_reduction(s, cp.c)
			 : !once && !keeps_order(s, &cp))
		goto out;
	const struct pb_poly_stmt *c = &s->stmt[cp.c];
	for (int k = 0; k + 1 < c->naccess; k++)
		if (!pb_fuse_unwritten(s, cp.c + 1, last, c->access[k].buf))
			goto out;
	if (o->remarks && any_order && cp.compute)
		pb_remark_at(ctx, mlirOperationGetLocation(cp.st->op),
			     "scaled copy folded into its %d reads (attention's "
			     "operand): they load its source, the scale goes "
			     "to the scores",
			     nread);
	else if (o->remarks && cp.compute)
		pb_remark_at(ctx, mlirOperationGetLocation(cp.st->op),
			     "producer inlined into its %d reads (computed %.2f "
			     "times per element, --max-redundancy=%g)",
			     nread, redundancy, limit);
	else if (o->remarks)
		pb_remark_at(ctx, mlirOperationGetLocation(cp.st->op),
			     "copy folded into its %d reads%s: they load its "
			     "source",
			     nread, any_order ? " (attention's operand)" : "");
	for (int i = 0; i < rd.n; i++)
		rewrite(rd.v[i], &cp);
	mlirOperationDestroy(s->stmt[cp.c].op);
	mlirOperationDestroy(alloc);
	done = 1;
out:
	pb_ir_ops_free(&rd);
	return done;
}

int pb_fuse_fold_copy(struct pb_ctx *ctx, const struct pb_fuse_opts *o,
		      const struct pb_poly_scop *s, int b)
{
	return fold(ctx, o, s, b, 0);
}

int pb_fuse_fold_copy_always(struct pb_ctx *ctx, const struct pb_fuse_opts *o,
			     const struct pb_poly_scop *s, int b, int scaled)
{
	return fold(ctx, o, s, b, 1 + !!scaled);
}
