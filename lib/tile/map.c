/* The tiled mapping of a band (docs/pb-tile.md, "Mapping"):
 *
 *   affine.parallel (%b...) = (0...) to (E...) step (T...) {pb.map = "block"}
 *     affine.if <the tile is full> {            (only when some T does not
 *       FULL                                     divide its extent E)
 *     } else {
 *       PARTIAL
 *     }
 *
 * where each version is
 *
 *   affine.parallel (%w...) = (0...) to (B...) step (L...) {pb.map = "warp"}
 *     affine.parallel (%l...) = (0...) to (L...) {pb.map = "thread"}
 *       the thread's points: i = lb + step * (b + w + l + r * B),
 *       r = 0 .. T/B - 1 (the thread tile), or, along a dimension whose
 *       thread tile is contiguous (c->contig), i = lb + step * (b +
 *       (w + l) * T/B + r)
 *
 * with B threads and L lanes of a warp per dimension. Consecutive lanes
 * take consecutive points of the innermost dimension in every step r, so
 * that accesses stay coalesced. PARTIAL guards each point with i < E; FULL
 * has no guard, so full tiles pay nothing for the boundary.
 *
 * Without jamming, the thread runs its points one after another: loops
 * over r around a copy of the band's body. Jamming (register tiling) puts
 * the point loops innermost instead: the body is split into segments
 * (runs of straight-line operations, and loop nests), each segment runs
 * for all the thread's points, a loop nest with the point loops inside
 * its innermost loop, and every buffer private to a point (a memref.alloca
 * of the body, such as a matmul's accumulator) gets one element per
 * point. This is legal because the band's loops carry no dependence:
 * the points are independent, so distributing the body over them and
 * interchanging the point loops inward preserves every dependence. Loads
 * that do not vary along a jammed dimension are then shared by its points
 * once LLVM unrolls the point loops.
 *
 * Sizes beyond the band's (tile[64, 64, 32] for a matmul) strip-mine the
 * loops of the first loop nest of the body, outermost first: the k loop
 * becomes a loop over k tiles of 32 around a loop within the tile. A strip
 * keeps the order of the iterations, so it is legal whatever the loop
 * carries; it gives pb-smem the tile of operands to stage. */
#include <string.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "tile/internal.h"

#define MAXSEG 32

/* The first block of the first region of "op". */
static MlirBlock body_of(MlirOperation op)
{
	return mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
}

/* A segment of a band body: a run of straight-line operations
 * [first, last], or (loop set) one affine.for nest. */
struct seg {
	MlirOperation first, last;
	int loop;
};

/* The operations of the band's body but its terminator into "ops". */
static void body_ops(const struct pb_kernel_band *b, struct pb_ir_ops *ops)
{
	pb_ir_block_ops(pb_kernel_band_body(b), ops);
	if (ops->n && pb_ir_op_is(ops->v[ops->n - 1], "affine.yield"))
		ops->n--;
}

/* Is "op" a memref.alloca of static shape with no operands? */
static int is_alloca(MlirOperation op)
{
	return pb_ir_op_is(op, "memref.alloca") &&
	       !mlirOperationGetNumOperands(op);
}

/* Is every use of the result of alloca "op" a direct affine.load or
 * affine.store of it (as the memref)? */
static int alloca_ok(MlirOperation op)
{
	MlirValue v = mlirOperationGetResult(op, 0);
	for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u);
	     u = mlirOpOperandGetNextUse(u)) {
		MlirOperation user = mlirOpOperandGetOwner(u);
		unsigned i = mlirOpOperandGetOperandNumber(u);
		if (!(pb_ir_op_is(user, "affine.load") && i == 0) &&
		    !(pb_ir_op_is(user, "affine.store") && i == 1))
			return 0;
	}
	return 1;
}

/* Split the body of "b" into segments ("allocas" apart); -1 when it does
 * not split: an operation with regions that is not an affine.for, or too
 * many segments. */
static int segments(const struct pb_kernel_band *b, struct seg *s,
		    struct pb_ir_ops *allocas)
{
	struct pb_ir_ops ops = {0};
	int n = 0, rc = 0, cut = 0;
	body_ops(b, &ops);
	for (int i = 0; i < ops.n && rc == 0; i++) {
		MlirOperation op = ops.v[i];
		if (is_alloca(op)) {
			if (allocas)
				pb_ir_ops_push(allocas, op);
			cut = 1; /* a run never spans an allocation */
			continue;
		}
		int loop = pb_ir_op_is(op, "affine.for");
		if (!loop && mlirOperationGetNumRegions(op)) {
			rc = -1;
		} else if (!loop && n && !s[n - 1].loop && !cut) {
			s[n - 1].last = op;
		} else if (n == MAXSEG) {
			rc = -1;
		} else {
			s[n].first = s[n].last = op;
			s[n++].loop = loop;
		}
		cut = 0;
	}
	pb_ir_ops_free(&ops);
	return rc ? -1 : n;
}

/* The operations of segment "s" (the keys of "ops"). */
static void seg_ops(const struct seg *s, struct pb_ptrmap *ops)
{
	for (MlirOperation o = s->first;; o = mlirOperationGetNextInBlock(o)) {
		pb_ptrmap_put(ops, o.ptr, 1);
		if (mlirOperationEqual(o, s->last))
			return;
	}
}

/* Is operation "op" inside the segment of "body" whose operations are
 * "ops" (seg_ops), or one of them? */
static int in_seg(MlirOperation op, const struct pb_ptrmap *ops,
		  MlirBlock body)
{
	MlirOperation top = pb_ir_ancestor_in(op, body);
	return !mlirOperationIsNull(top) && pb_ptrmap_get(ops, top.ptr) >= 0;
}

struct use_check {
	struct pb_ptrmap ops; /* the segment's operations (seg_ops) */
	MlirBlock body;
	int bad;
};

/* Walk callback: does a result of "op" have a use outside segment
 * "u->s"? */
static MlirWalkResult uses_cb(MlirOperation op, void *user)
{
	struct use_check *u = user;
	for (intptr_t i = 0; i < mlirOperationGetNumResults(op); i++)
		for (MlirOpOperand x = mlirValueGetFirstUse(
			     mlirOperationGetResult(op, i));
		     !mlirOpOperandIsNull(x); x = mlirOpOperandGetNextUse(x))
			if (!in_seg(mlirOpOperandGetOwner(x), &u->ops, u->body))
				u->bad = 1;
	return u->bad ? MlirWalkResultInterrupt : MlirWalkResultAdvance;
}

/* The innermost loop of the perfect affine.for nest "op". */
static MlirOperation innermost(MlirOperation op)
{
	for (;;) {
		MlirOperation first = mlirBlockGetFirstOperation(body_of(op));
		MlirOperation next = mlirOperationGetNextInBlock(first);
		if (!pb_ir_op_is(first, "affine.for") || mlirOperationIsNull(next) ||
		    !pb_ir_op_is(next, "affine.yield"))
			return op;
		op = first;
	}
}

int pb_tile_jam_ok(const struct pb_kernel_band *b)
{
	struct seg s[MAXSEG];
	struct pb_ir_ops allocas = {0};
	int n = segments(b, s, &allocas), loops = 0, ok = n > 0;
	for (int i = 0; i < allocas.n && ok; i++)
		ok = alloca_ok(allocas.v[i]);
	for (int i = 0; i < n && ok; i++) {
		struct use_check u = {{0}, pb_kernel_band_body(b), 0};
		seg_ops(&s[i], &u.ops);
		for (MlirOperation o = s[i].first;;
		     o = mlirOperationGetNextInBlock(o)) {
			mlirOperationWalk(o, uses_cb, &u, MlirWalkPreOrder);
			if (mlirOperationEqual(o, s[i].last))
				break;
		}
		pb_ptrmap_free(&u.ops);
		ok = !u.bad;
		for (MlirOperation l = s[i].first; ok && s[i].loop;) {
			for (intptr_t k = 0; k < mlirOperationGetNumOperands(l); k++)
				ok &= pb_ir_is_inside(pb_ir_value_parent(
					mlirOperationGetOperand(l, k)), s[i].first);
			if (mlirOperationEqual(l, innermost(s[i].first)))
				break;
			l = mlirBlockGetFirstOperation(body_of(l));
		}
		loops += s[i].loop;
	}
	pb_ir_ops_free(&allocas);
	return ok && loops > 0;
}

/* The mapped loops of one version: the values every point index needs. */
struct site {
	MlirOperation thread;	/* the thread loop (its body gets the work) */
	MlirValue blk[PB_KERNEL_MAXD], warp[PB_KERNEL_MAXD];
	MlirValue lane[PB_KERNEL_MAXD];
	int guard;		/* PARTIAL: guard the points */
};

/* Append "%name<d>" or nothing to the operand list "args" / dim list
 * "dims" of the point map of dimension "d". */
static void point_terms(struct pb_buf *dims, struct pb_buf *args,
			struct pb_buf *expr, const char *name, int d,
			int64_t scale)
{
	pb_buf_printf(dims, "%s%s%d", dims->len ? ", " : "", name, d);
	pb_buf_printf(args, "%s%%%s%d", args->len ? ", " : "", name, d);
	if (scale == 1)
		pb_buf_printf(expr, " + %s%d", name, d);
	else
		pb_buf_printf(expr, " + %s%d * %lld", name, d, (long long)scale);
}

/* The text of a function @t(%b0.., %w0.., %l0..) holding the point loops
 * of "c" (dimensions with a thread tile), the point indices %i<d> and,
 * when "guard", an affine.if on the partial dimensions. */
static void points_text(struct pb_buf *t, const struct pb_kernel_band *b,
			const struct pb_tile_choice *c, const struct site *st,
			int guard)
{
	int n = b->n, depth = 0;
	pb_buf_puts(t, "func.func @t(");
	for (int d = 0; d < n; d++)
		pb_buf_printf(t, "%s%%b%d: index", d ? ", " : "", d);
	for (int d = 0; d < n; d++)
		pb_buf_printf(t, ", %%w%d: index, %%l%d: index", d, d);
	pb_buf_puts(t, ") {\n");
	for (int d = 0; d < n; d++)
		if (c->tile[d] > c->block[d]) {
			pb_buf_printf(t, "affine.for %%r%d = 0 to %lld {\n", d,
				      (long long)(c->tile[d] / c->block[d]));
			depth++;
		}
	struct pb_buf conds = {0}, gdims = {0}, gargs = {0};
	for (int d = 0; d < n; d++) {
		struct pb_buf dims = {0}, args = {0}, expr = {0};
		pb_buf_puts(&expr, "0");
		/* thread t = w + l of the dimension: its points t + r * B,
		 * or t * R + r when contiguous */
		int64_t rr = c->tile[d] / c->block[d];
		int cont = (c->contig >> d) & 1 && rr > 1;
		point_terms(&dims, &args, &expr, "b", d, 1);
		if (!mlirValueIsNull(st->warp[d]))
			point_terms(&dims, &args, &expr, "w", d, cont ? rr : 1);
		if (!mlirValueIsNull(st->lane[d]))
			point_terms(&dims, &args, &expr, "l", d, cont ? rr : 1);
		if (c->tile[d] > c->block[d])
			point_terms(&dims, &args, &expr, "r", d,
				    cont ? 1 : c->block[d]);
		pb_buf_printf(t, "%%i%d = affine.apply affine_map<(%s) -> "
			      "(%lld + (%s) * %lld)>(%s)\n", d, dims.data,
			      (long long)b->lb[d], expr.data,
			      (long long)b->step[d], args.data);
		if (guard && b->extent[d] % c->tile[d]) {
			/* i < lb + extent * step, as a condition on the
			 * iteration number (i - lb) / step */
			pb_buf_printf(&gdims, "%s%s", gdims.len ? ", " : "",
				      dims.data);
			pb_buf_printf(&gargs, "%s%s", gargs.len ? ", " : "",
				      args.data);
			pb_buf_printf(&conds, "%s%lld - (%s) >= 0",
				      conds.len ? ", " : "",
				      (long long)(b->extent[d] - 1), expr.data);
		}
		pb_buf_free(&dims);
		pb_buf_free(&args);
		pb_buf_free(&expr);
	}
	if (conds.len)
		pb_buf_printf(t, "affine.if affine_set<(%s) : (%s)>(%s) {\n}\n",
			      gdims.data, conds.data, gargs.data);
	pb_buf_free(&conds);
	pb_buf_free(&gdims);
	pb_buf_free(&gargs);
	for (int i = 0; i < depth; i++)
		pb_buf_puts(t, "}\n");
	pb_buf_puts(t, "return\n}\n");
}

/* Where the work of the points goes after points_text was instantiated:
 * the operation to insert before, the point indices, the point loops'
 * ivs (r[d], null when the dimension has no thread tile). */
struct points {
	MlirOperation before;
	MlirValue i[PB_KERNEL_MAXD], r[PB_KERNEL_MAXD];
};

/* Instantiate the point loops before "before" for site "st". */
static int points_at(struct pb_ctx *ctx, const struct pb_kernel_band *b,
		     const struct pb_tile_choice *c, const struct site *st,
		     MlirOperation before, struct points *p)
{
	struct pb_buf t = {0};
	struct pb_ir_ops out = {0};
	MlirValue args[3 * PB_KERNEL_MAXD];
	int n = b->n, na = 0;
	for (int d = 0; d < n; d++)
		args[na++] = st->blk[d];
	for (int d = 0; d < n; d++) {
		/* absent warp or lane ivs are never used: any index will do */
		args[na++] = mlirValueIsNull(st->warp[d]) ? st->blk[d] : st->warp[d];
		args[na++] = mlirValueIsNull(st->lane[d]) ? st->blk[d] : st->lane[d];
	}
	points_text(&t, b, c, st, st->guard);
	int rc = pb_ir_instantiate(ctx, t.data, before, na, args,
				   mlirOperationGetLocation(b->root), &out);
	pb_buf_free(&t);
	if (rc) {
		pb_ir_ops_free(&out);
		return rc;
	}
	memset(p, 0, sizeof(*p));
	/* walk down the point loops: the first op, then into each for */
	MlirOperation op = out.v[0];
	MlirBlock blk = mlirOperationGetBlock(op);
	for (int d = 0; d < n; d++) {
		if (c->tile[d] <= c->block[d])
			continue;
		p->r[d] = mlirBlockGetArgument(body_of(op), 0);
		blk = body_of(op);
		op = mlirBlockGetFirstOperation(blk);
	}
	/* the applies, then maybe the guard */
	for (int d = 0; d < n; d++) {
		p->i[d] = mlirOperationGetResult(op, 0);
		op = mlirOperationGetNextInBlock(op);
	}
	if (pb_ir_op_is(op, "affine.if")) {
		pb_ir_set_attr(op, PB_ATTR_POINT,
			       mlirUnitAttrGet(mlirOperationGetContext(op)));
		p->before = mlirBlockGetTerminator(body_of(op));
	}
	else if (mlirBlockEqual(blk, mlirOperationGetBlock(before)))
		p->before = before;
	else
		p->before = mlirBlockGetTerminator(blk);
	pb_ir_ops_free(&out);
	return PB_OK;
}

/* Clone the operations first..last before "before", mapping through "m"
 * (which learns the clones' results). */
static void clone_ops(MlirOperation first, MlirOperation last,
		      MlirOperation before, struct pb_ir_map *m)
{
	MlirBlock dest = mlirOperationGetBlock(before);
	for (MlirOperation o = first;; o = mlirOperationGetNextInBlock(o)) {
		MlirOperation c = mlirOperationClone(o);
		pb_ir_remap_operands(c, m);
		for (intptr_t i = 0; i < mlirOperationGetNumResults(o); i++)
			pb_ir_map_add(m, mlirOperationGetResult(o, i),
				      mlirOperationGetResult(c, i));
		mlirBlockInsertOwnedOperationBefore(dest, before, c);
		if (mlirOperationEqual(o, last))
			break;
	}
}

/* Rebuild the affine.load/store "op" of a jammed alloca with the point
 * indices "r" (n of them) in front of its subscripts. */
static void add_point_indices(MlirOperation op, const MlirValue *r, int n)
{
	int store = pb_ir_op_is(op, "affine.store");
	MlirAffineMap m = mlirAffineMapAttrGetValue(pb_ir_attr(op, "map"));
	int nd = mlirAffineMapGetNumDims(m), ns = mlirAffineMapGetNumSymbols(m);
	int nr = mlirAffineMapGetNumResults(m);
	MlirContext mctx = mlirOperationGetContext(op);
	MlirAffineExpr e[PB_KERNEL_MAXD + 16];
	for (int k = 0; k < n; k++)
		e[k] = mlirAffineDimExprGet(mctx, nd + k);
	for (int k = 0; k < nr && n + k < PB_KERNEL_MAXD + 16; k++)
		e[n + k] = mlirAffineMapGetResult(m, k);
	MlirAffineMap nm = mlirAffineMapGet(mctx, nd + n, ns, n + nr, e);
	int first = store ? 2 : 1;
	intptr_t nops = mlirOperationGetNumOperands(op);
	MlirValue ops[64];
	int k = 0;
	for (int i = 0; i < first; i++)
		ops[k++] = mlirOperationGetOperand(op, i);
	for (int i = 0; i < nd; i++)
		ops[k++] = mlirOperationGetOperand(op, first + i);
	for (int i = 0; i < n; i++)
		ops[k++] = r[i];
	for (int i = nd; i < nops - first && k < 64; i++)
		ops[k++] = mlirOperationGetOperand(op, first + i);
	MlirOperationState s = mlirOperationStateGet(
		mlirIdentifierStr(mlirOperationGetName(op)),
		mlirOperationGetLocation(op));
	mlirOperationStateAddOperands(&s, k, ops);
	MlirNamedAttribute a = mlirNamedAttributeGet(
		mlirIdentifierGet(mctx, mlirStringRefCreateFromCString("map")),
		mlirAffineMapAttrGet(nm));
	mlirOperationStateAddAttributes(&s, 1, &a);
	if (!store) {
		MlirType t = mlirValueGetType(mlirOperationGetResult(op, 0));
		mlirOperationStateAddResults(&s, 1, &t);
	}
	MlirOperation n_op = mlirOperationCreate(&s);
	mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(op), op, n_op);
	if (!store)
		mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0),
					      mlirOperationGetResult(n_op, 0));
	mlirOperationDestroy(op);
}

struct jam_fix {
	MlirValue *bufs;
	int nbufs;
	const MlirValue *r;
	int nr;
	struct pb_ir_ops todo;
};

/* Walk callback: collect the accesses of the jammed buffers. */
static MlirWalkResult jam_cb(MlirOperation op, void *user)
{
	struct jam_fix *f = user;
	int store = pb_ir_op_is(op, "affine.store");
	if (!store && !pb_ir_op_is(op, "affine.load"))
		return MlirWalkResultAdvance;
	MlirValue mem = mlirOperationGetOperand(op, store ? 1 : 0);
	for (int i = 0; i < f->nbufs; i++)
		if (mlirValueEqual(mem, f->bufs[i]))
			pb_ir_ops_push(&f->todo, op);
	return MlirWalkResultAdvance;
}

/* Fill the thread loop of "st" with the body of "b", per "c". */
static int fill(struct pb_ctx *ctx, const struct pb_kernel_band *b,
		const struct pb_tile_choice *c, const struct site *st)
{
	MlirOperation end = mlirBlockGetTerminator(body_of(st->thread));
	struct pb_ir_ops ops = {0}, allocas = {0};
	struct seg s[MAXSEG];
	struct points p;
	int rc = PB_OK, nseg;
	if (!c->jam) {
		body_ops(b, &ops);
		if (ops.n && (rc = points_at(ctx, b, c, st, end, &p)) == PB_OK) {
			struct pb_ir_map m = {0};
			for (int d = 0; d < b->n; d++)
				pb_ir_map_add(&m, b->iv[d], p.i[d]);
			clone_ops(ops.v[0], ops.v[ops.n - 1], p.before, &m);
			pb_ir_map_free(&m);
		}
		pb_ir_ops_free(&ops);
		return rc;
	}
	nseg = segments(b, s, &allocas);
	/* the private buffers, one element per point */
	int64_t pshape[PB_KERNEL_MAXD];
	int np = 0;
	for (int d = 0; d < b->n; d++)
		if (c->tile[d] > c->block[d])
			pshape[np++] = c->tile[d] / c->block[d];
	struct pb_ir_map m = {0};
	MlirValue bufs[64];
	int nbufs = 0;
	for (int i = 0; i < allocas.n && nbufs < 64; i++) {
		MlirOperation a = mlirOperationClone(allocas.v[i]);
		MlirValue v = mlirOperationGetResult(a, 0);
		MlirType t = mlirValueGetType(v);
		int64_t shape[2 * PB_KERNEL_MAXD];
		int rank = mlirShapedTypeGetRank(t);
		memcpy(shape, pshape, np * sizeof(int64_t));
		for (int k = 0; k < rank && np + k < 2 * PB_KERNEL_MAXD; k++)
			shape[np + k] = mlirShapedTypeGetDimSize(t, k);
		mlirValueSetType(v, mlirMemRefTypeContiguousGet(
			mlirShapedTypeGetElementType(t), np + rank, shape,
			mlirMemRefTypeGetMemorySpace(t)));
		mlirBlockInsertOwnedOperationBefore(body_of(st->thread), end, a);
		pb_ir_map_add(&m, mlirOperationGetResult(allocas.v[i], 0), v);
		bufs[nbufs++] = v;
	}
	for (int i = 0; i < nseg && rc == PB_OK; i++) {
		MlirOperation at = end;
		struct pb_ir_map pm = {0};
		MlirOperation nest = {0}, inner = {0};
		if (s[i].loop) {
			/* the nest without its innermost body's operations */
			nest = mlirOperationClone(s[i].first);
			mlirBlockInsertOwnedOperationBefore(body_of(st->thread),
							    end, nest);
			pb_ir_remap_operands(nest, &m);
			inner = innermost(nest);
			at = mlirBlockGetFirstOperation(body_of(inner));
		}
		rc = points_at(ctx, b, c, st, at, &p);
		if (rc)
			break;
		for (int d = 0; d < b->n; d++)
			pb_ir_map_add(&pm, b->iv[d], p.i[d]);
		if (s[i].loop) {
			/* move the innermost body's operations (after the
			 * point loops) to the points */
			MlirOperation o = at, next;
			MlirOperation term = mlirBlockGetTerminator(body_of(inner));
			for (; !mlirOperationEqual(o, term); o = next) {
				next = mlirOperationGetNextInBlock(o);
				mlirOperationMoveBefore(o, p.before);
				pb_ir_remap_operands(o, &pm);
			}
		} else {
			for (int k = 0; k < m.n; k++)
				pb_ir_map_add(&pm, m.from[k], m.to[k]);
			clone_ops(s[i].first, s[i].last, p.before, &pm);
		}
		pb_ir_map_free(&pm);
		/* the jammed buffers' accesses take the point indices */
		MlirValue r[PB_KERNEL_MAXD];
		int nr = 0;
		for (int d = 0; d < b->n; d++)
			if (!mlirValueIsNull(p.r[d]))
				r[nr++] = p.r[d];
		struct jam_fix f = {bufs, nbufs, r, nr, {0}};
		MlirOperation top = s[i].loop ? nest
			: pb_ir_ancestor_in(mlirBlockGetParentOperation(
				  mlirOperationGetBlock(p.before)),
				  body_of(st->thread));
		if (mlirOperationIsNull(top))
			top = mlirBlockGetParentOperation(
				mlirOperationGetBlock(p.before));
		mlirOperationWalk(top, jam_cb, &f, MlirWalkPreOrder);
		for (int k = 0; k < f.todo.n; k++)
			add_point_indices(f.todo.v[k], r, nr);
		pb_ir_ops_free(&f.todo);
	}
	pb_ir_map_free(&m);
	pb_ir_ops_free(&allocas);
	return rc;
}

/* Append the text of one version's warp and thread loops. */
static void version_text(struct pb_buf *t, const struct pb_kernel_band *b,
			 const struct pb_tile_choice *c)
{
	struct pb_buf wv = {0}, wl = {0}, wu = {0}, ws = {0};
	struct pb_buf tv = {0}, tl = {0}, tu = {0};
	for (int d = 0; d < b->n; d++) {
		if (c->block[d] > c->lanes[d]) {
			const char *sep = wv.len ? ", " : "";
			pb_buf_printf(&wv, "%s%%w%d", sep, d);
			pb_buf_printf(&wl, "%s0", sep);
			pb_buf_printf(&wu, "%s%lld", sep, (long long)c->block[d]);
			pb_buf_printf(&ws, "%s%lld", sep, (long long)c->lanes[d]);
		}
		if (c->lanes[d] > 1) {
			const char *sep = tv.len ? ", " : "";
			pb_buf_printf(&tv, "%s%%l%d", sep, d);
			pb_buf_printf(&tl, "%s0", sep);
			pb_buf_printf(&tu, "%s%lld", sep, (long long)c->lanes[d]);
		}
	}
	if (!wv.len) {
		pb_buf_puts(&wv, "%wx");
		pb_buf_puts(&wl, "0");
		pb_buf_puts(&wu, "1");
		pb_buf_puts(&ws, "1");
	}
	if (!tv.len) {
		pb_buf_puts(&tv, "%lx");
		pb_buf_puts(&tl, "0");
		pb_buf_puts(&tu, "1");
	}
	pb_buf_printf(t, "affine.parallel (%s) = (%s) to (%s) step (%s) {\n"
		      "affine.parallel (%s) = (%s) to (%s) {\n"
		      "} {" PB_ATTR_MAP " = \"thread\"}\n} {" PB_ATTR_MAP
		      " = \"warp\"}\n",
		      wv.data, wl.data, wu.data, ws.data, tv.data, tl.data,
		      tu.data);
	pb_buf_free(&wv);
	pb_buf_free(&wl);
	pb_buf_free(&wu);
	pb_buf_free(&ws);
	pb_buf_free(&tv);
	pb_buf_free(&tl);
	pb_buf_free(&tu);
}

/* The site of the warp loop "warp" of a version. */
static void site_of(MlirOperation warp, const struct pb_kernel_band *b,
		    const struct pb_tile_choice *c, const MlirValue *blk,
		    int guard, struct site *st)
{
	MlirBlock wb = body_of(warp);
	MlirOperation thread = mlirBlockGetFirstOperation(wb);
	MlirBlock tb = body_of(thread);
	int kw = 0, kt = 0;
	memset(st, 0, sizeof(*st));
	st->thread = thread;
	st->guard = guard;
	for (int d = 0; d < b->n; d++) {
		st->blk[d] = blk[d];
		if (c->block[d] > c->lanes[d])
			st->warp[d] = mlirBlockGetArgument(wb, kw++);
		if (c->lanes[d] > 1)
			st->lane[d] = mlirBlockGetArgument(tb, kt++);
	}
}

/* The first affine.for of the band's body, or null. */
static MlirOperation first_loop(const struct pb_kernel_band *b)
{
	MlirOperation op = mlirBlockGetFirstOperation(pb_kernel_band_body(b));
	while (!mlirOperationIsNull(op) && !pb_ir_op_is(op, "affine.for"))
		op = mlirOperationGetNextInBlock(op);
	return op;
}

int pb_tile_inner_depth(const struct pb_kernel_band *b)
{
	MlirOperation op = first_loop(b);
	int depth = 0;
	if (mlirOperationIsNull(op))
		return 0;
	for (MlirOperation in = innermost(op);; op = mlirBlockGetFirstOperation(
							body_of(op))) {
		depth++;
		if (mlirOperationEqual(op, in))
			return depth;
	}
}

/* Strip-mine affine.for "l" (constant bounds) by "t" iterations:
 * for kk in [lb, ub) step t*s { for k in [kk, min(kk + t*s, ub)) step s }.
 * Returns the inner loop (null on error, reported). */
static MlirOperation strip(struct pb_ctx *ctx, MlirOperation l, int64_t t)
{
	int64_t lb, ub, s = mlirIntegerAttrGetValueInt(pb_ir_attr(l, "step"));
	struct pb_buf text = {0};
	struct pb_ir_ops out = {0};
	if (pb_ir_const_map(l, "lowerBoundMap", 1, &lb) ||
	    pb_ir_const_map(l, "upperBoundMap", 1, &ub) || t < 1)
		return (MlirOperation){NULL};
	pb_buf_printf(&text, "func.func @t() {\n"
		      "affine.for %%kk = %lld to %lld step %lld {\n"
		      "affine.for %%k = affine_map<(d0) -> (d0)>(%%kk) to min "
		      "affine_map<(d0) -> (d0 + %lld, %lld)>(%%kk) step %lld {\n"
		      "}\n}\nreturn\n}\n", (long long)lb, (long long)ub,
		      (long long)(t * s), (long long)(t * s), (long long)ub,
		      (long long)s);
	int rc = pb_ir_instantiate(ctx, text.data, l, 0, NULL,
				   mlirOperationGetLocation(l), &out);
	pb_buf_free(&text);
	if (rc) {
		pb_ir_ops_free(&out);
		return (MlirOperation){NULL};
	}
	MlirOperation inner = mlirBlockGetFirstOperation(body_of(out.v[0]));
	pb_ir_ops_free(&out);
	MlirBlock from = body_of(l);
	MlirOperation end = mlirBlockGetTerminator(body_of(inner));
	for (MlirOperation o = mlirBlockGetFirstOperation(from), next;
	     !mlirOperationEqual(o, mlirBlockGetTerminator(from)); o = next) {
		next = mlirOperationGetNextInBlock(o);
		mlirOperationMoveBefore(o, end);
	}
	mlirValueReplaceAllUsesOfWith(mlirBlockGetArgument(from, 0),
				      mlirBlockGetArgument(body_of(inner), 0));
	mlirOperationDestroy(l);
	return inner;
}

/* Strip-mine the loops of the first nest of "b" by "c->ktile". */
static int strip_inner(struct pb_ctx *ctx, const struct pb_kernel_band *b,
		       const struct pb_tile_choice *c)
{
	MlirOperation l = first_loop(b);
	for (int i = 0; i < c->nk && !mlirOperationIsNull(l); i++) {
		MlirOperation inner = strip(ctx, l, c->ktile[i]);
		if (mlirOperationIsNull(inner)) {
			pb_error_at(ctx, mlirOperationGetLocation(l),
				    "--sizes: cannot strip-mine this loop (it "
				    "needs constant bounds)");
			return PB_ERR;
		}
		l = mlirBlockGetFirstOperation(body_of(inner));
		if (!pb_ir_op_is(l, "affine.for"))
			break;
	}
	return PB_OK;
}

/* Replace each use of the result of pure operation "op" by a copy of
 * "op" right before the user; then erase "op". */
static void sink(MlirOperation op)
{
	MlirValue v = mlirOperationGetResult(op, 0);
	struct pb_ir_ops users = {0};
	for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u);
	     u = mlirOpOperandGetNextUse(u))
		pb_ir_ops_push(&users, mlirOpOperandGetOwner(u));
	for (int i = 0; i < users.n; i++) {
		MlirOperation c = mlirOperationClone(op);
		mlirBlockInsertOwnedOperationBefore(
			mlirOperationGetBlock(users.v[i]), users.v[i], c);
		mlirOperationReplaceUsesOfWith(users.v[i], v,
					       mlirOperationGetResult(c, 0));
	}
	pb_ir_ops_free(&users);
	mlirOperationDestroy(op);
}

/* Collapse the band of "b" into one affine.parallel over its points in
 * row-major order, the band's indices computed from the point's number by
 * floordiv and mod; the new band into "out". The band's loops carry no
 * dependence, so any order of its points is legal. */
static int collapse(struct pb_ctx *ctx, const struct pb_kernel_band *b,
		    struct pb_kernel_band *out)
{
	struct pb_buf t = {0};
	struct pb_ir_ops ops = {0}, made = {0};
	int64_t points = 1, stride[PB_KERNEL_MAXD];
	for (int d = b->n - 1; d >= 0; d--) {
		stride[d] = points;
		points *= b->extent[d];
	}
	pb_buf_printf(&t, "func.func @t() {\naffine.parallel (%%x) = (0) to "
		      "(%lld) {\n", (long long)points);
	for (int d = 0; d < b->n; d++) {
		pb_buf_printf(&t, "%%i%d = affine.apply affine_map<(x) -> ((", d);
		pb_buf_printf(&t, stride[d] > 1 ? "x floordiv %lld" : "x",
			      (long long)stride[d]);
		if (d > 0)
			pb_buf_printf(&t, " mod %lld", (long long)b->extent[d]);
		pb_buf_printf(&t, ") * %lld + %lld)>(%%x)\n",
			      (long long)b->step[d], (long long)b->lb[d]);
	}
	pb_buf_puts(&t, "}\nreturn\n}\n");
	int rc = pb_ir_instantiate(ctx, t.data, b->root, 0, NULL,
				   mlirOperationGetLocation(b->root), &made);
	pb_buf_free(&t);
	if (rc) {
		pb_ir_ops_free(&made);
		return rc;
	}
	MlirOperation loop = made.v[made.n - 1];
	pb_ir_ops_free(&made);
	struct pb_ir_map m = {0};
	MlirOperation op = mlirBlockGetFirstOperation(body_of(loop));
	for (int d = 0; d < b->n; d++, op = mlirOperationGetNextInBlock(op))
		pb_ir_map_add(&m, b->iv[d], mlirOperationGetResult(op, 0));
	body_ops(b, &ops);
	if (ops.n)
		clone_ops(ops.v[0], ops.v[ops.n - 1],
			  mlirBlockGetTerminator(body_of(loop)), &m);
	pb_ir_map_free(&m);
	pb_ir_ops_free(&ops);
	mlirOperationDestroy(b->root);
	/* each use gets its own copy of the index computation, so that the
	 * body still splits into segments that share no value (jamming) */
	for (int d = 0; d < b->n; d++)
		sink(mlirBlockGetFirstOperation(body_of(loop)));
	if (!pb_kernel_band_of(loop, out) || out->n != 1) {
		pb_error(ctx, "internal: the collapsed band is not a band");
		return PB_ERR;
	}
	return PB_OK;
}

int pb_tile_apply(struct pb_ctx *ctx, const struct pb_kernel_band *band,
		  const struct pb_tile_choice *c)
{
	struct pb_kernel_band lin;
	const struct pb_kernel_band *b = band;
	if (c->nk && strip_inner(ctx, b, c))
		return PB_ERR;
	if (c->linear && b->n > 1) {
		if (collapse(ctx, b, &lin))
			return PB_ERR;
		b = &lin;
	}
	struct pb_buf t = {0}, lbs = {0}, ubs = {0}, sts = {0}, ivs = {0};
	struct pb_buf full = {0};
	struct pb_ir_ops out = {0};
	int n = b->n, partial = 0, never_full = 0;
	if (n < 1)
		return PB_OK;
	for (int d = 0; d < n; d++) {
		const char *sep = d ? ", " : "";
		pb_buf_printf(&ivs, "%s%%b%d", sep, d);
		pb_buf_printf(&lbs, "%s0", sep);
		pb_buf_printf(&ubs, "%s%lld", sep, (long long)b->extent[d]);
		pb_buf_printf(&sts, "%s%lld", sep, (long long)c->tile[d]);
		if (b->extent[d] % c->tile[d]) {
			partial = 1;
			pb_buf_printf(&full, "%s%lld - b%d >= 0",
				      full.len ? ", " : "",
				      (long long)(b->extent[d] - c->tile[d]), d);
			if (b->extent[d] < c->tile[d])
				never_full = 1;
		}
	}
	/* a tile larger than its whole dimension is never full */
	int split = partial && !never_full;
	pb_buf_printf(&t, "func.func @t() {\naffine.parallel (%s) = (%s) to (%s) "
		      "step (%s) {\n", ivs.data, lbs.data, ubs.data, sts.data);
	if (split) {
		pb_buf_printf(&t, "affine.if affine_set<(%s) : (%s)>(%s) {\n",
			      ivs.data, full.data, ivs.data);
		version_text(&t, b, c);
		pb_buf_puts(&t, "} else {\n");
		version_text(&t, b, c);
		pb_buf_puts(&t, "}\n");
	} else {
		version_text(&t, b, c);
	}
	pb_buf_puts(&t, "} {" PB_ATTR_MAP " = \"block\"}\nreturn\n}\n");
	/* the set's dims are named like the ivs without "%" */
	if (split) {
		char *p = strstr(t.data, "affine_set<(");
		for (p += 12; *p != ')'; p++)
			if (*p == '%')
				*p = ' ';
	}
	int rc = pb_ir_instantiate(ctx, t.data, b->root, 0, NULL,
				   mlirOperationGetLocation(b->root), &out);
	pb_buf_free(&t);
	pb_buf_free(&lbs);
	pb_buf_free(&ubs);
	pb_buf_free(&sts);
	pb_buf_free(&ivs);
	pb_buf_free(&full);
	if (rc) {
		pb_ir_ops_free(&out);
		return rc;
	}
	MlirOperation blk = out.v[out.n - 1];
	MlirValue bivs[PB_KERNEL_MAXD];
	if (c->skt) {
		/* the k-tile and slots priced for pb-smem (empty: none) */
		int64_t v[2] = {c->skt, c->sst};
		pb_ir_set_attr(blk, PB_ATTR_SMEM,
			       mlirDenseI64ArrayGet(mlirOperationGetContext(blk),
						    c->skt > 0 ? 2 : 0, v));
	}
	for (int d = 0; d < n; d++)
		bivs[d] = mlirBlockGetArgument(body_of(blk), d);
	pb_ir_ops_free(&out);
	struct site st[2];
	int ns = 0;
	MlirOperation first = mlirBlockGetFirstOperation(body_of(blk));
	if (split) {
		site_of(mlirBlockGetFirstOperation(body_of(first)), b, c, bivs, 0,
			&st[ns++]);
		MlirBlock eb = mlirRegionGetFirstBlock(
			mlirOperationGetRegion(first, 1));
		site_of(mlirBlockGetFirstOperation(eb), b, c, bivs, 1, &st[ns++]);
	} else {
		site_of(first, b, c, bivs, partial, &st[ns++]);
	}
	for (int i = 0; i < ns && rc == PB_OK; i++)
		rc = fill(ctx, b, c, &st[i]);
	if (rc == PB_OK)
		mlirOperationDestroy(b->root);
	return rc;
}
