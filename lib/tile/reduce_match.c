/* Block-level mapping of the work below a band: which bands it applies
 * to, and the plan of each top-level operation of the body (the kinds of
 * steps are described in reduce.c, which rewrites the IR by the plan).
 *
 * What is proven, and how: a nest is parallel over its outermost "d"
 * loops when no two distinct iterations of these loops access the same
 * element of a buffer with one of the accesses a write. This is checked
 * with isl on lib/poly's localized access relations K[k0, ..., kd-1] ->
 * B[...] of every load and store in the nest (at any depth; poly.h,
 * pb_poly_local_build): values defined outside the nest (band counters,
 * block-level index arithmetic) are parameters (the check holds for all
 * their values), counters of inner loops and other values defined in the
 * nest are existentially quantified (unconstrained), subscripts that are
 * not affine and accesses through views that do not compose give the
 * whole buffer. Buffers allocated in the nest are private to an iteration
 * and ignored. Distinct root buffers (allocations, function arguments)
 * are assumed not to alias, as lib/poly assumes. A reduction nest is
 * parallel in this sense once the accumulator updates are taken out, and
 * each accumulator location is accessed in the nest by its one load -> op
 * -> store chain only (no other access to its root buffer), so the only
 * dependence the nest carries is the one through op, which is associative
 * and commutative. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <isl/ctx.h>
#include <isl/options.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "poly/poly.h"
#include "tile/internal.h"

/* The reduction operations. */
static const struct pb_tile_red_op red_ops[] = {
	{"arith.addf", 1, PB_TILE_ID_ZERO},
	{"arith.mulf", 1, PB_TILE_ID_ONE},
	{"arith.maximumf", 1, PB_TILE_ID_NEG_INF},
	{"arith.minimumf", 1, PB_TILE_ID_POS_INF},
	{"arith.maxnumf", 1, PB_TILE_ID_NEG_INF},
	{"arith.minnumf", 1, PB_TILE_ID_POS_INF},
	{"arith.addi", 0, PB_TILE_ID_ZERO},
	{"arith.muli", 0, PB_TILE_ID_ONE},
	{"arith.maxsi", 0, PB_TILE_ID_SMIN},
	{"arith.minsi", 0, PB_TILE_ID_SMAX},
	{"arith.maxui", 0, PB_TILE_ID_ZERO},
	{"arith.minui", 0, PB_TILE_ID_ONES},
	{"arith.andi", 0, PB_TILE_ID_ONES},
	{"arith.ori", 0, PB_TILE_ID_ZERO},
	{"arith.xori", 0, PB_TILE_ID_ZERO},
	{NULL, 0, PB_TILE_ID_ZERO},
};

/* The first block of the first region of "op". */
static MlirBlock body_of(MlirOperation op)
{
	return mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
}

/* Does the name of "op" start with "prefix"? */
static int has_prefix(MlirOperation op, const char *prefix)
{
	MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
	size_t n = strlen(prefix);
	return s.length >= n && !strncmp(s.data, prefix, n);
}

/* Is "op" pure arithmetic (no memory effects, no regions)? */
static int is_pure(MlirOperation op)
{
	return (has_prefix(op, "arith.") || has_prefix(op, "math.") ||
		has_prefix(op, "index.") || pb_ir_op_is(op, "affine.apply") ||
		pb_ir_op_is(op, "affine.min") || pb_ir_op_is(op, "affine.max") ||
		pb_ir_op_is(op, "ub.poison")) &&
	       !mlirOperationGetNumRegions(op);
}

/* The number of uses of "v". */
static int num_uses(MlirValue v)
{
	int n = 0;
	for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u);
	     u = mlirOpOperandGetNextUse(u))
		n++;
	return n;
}

/* The constant value of single-result affine map attribute "name" of "op"
 * into "*v"; -1 when it is not a constant. */
static int const_bound(MlirOperation op, const char *name, int64_t *v)
{
	MlirAttribute a = pb_ir_attr(op, name);
	if (mlirAttributeIsNull(a) || !mlirAttributeIsAAffineMap(a))
		return -1;
	MlirAffineMap m = mlirAffineMapAttrGetValue(a);
	if (mlirAffineMapGetNumResults(m) != 1 ||
	    !mlirAffineExprIsAConstant(mlirAffineMapGetResult(m, 0)))
		return -1;
	*v = mlirAffineConstantExprGetValue(mlirAffineMapGetResult(m, 0));
	return 0;
}

/* The bounds of affine.for "op" when they are constant and it has no
 * iteration arguments: lower bound, step and trip count; -1 otherwise. */
static int const_loop(MlirOperation op, int64_t *lb, int64_t *step,
		      int64_t *trip)
{
	int64_t ub;
	MlirAttribute s = pb_ir_attr(op, "step");
	if (!pb_ir_op_is(op, "affine.for") || mlirOperationGetNumResults(op) ||
	    mlirOperationGetNumOperands(op) || const_bound(op, "lowerBoundMap", lb) ||
	    const_bound(op, "upperBoundMap", &ub) || mlirAttributeIsNull(s) ||
	    !mlirAttributeIsAInteger(s))
		return -1;
	*step = mlirIntegerAttrGetValueInt(s);
	if (*step < 1)
		return -1;
	*trip = ub > *lb ? (ub - *lb + *step - 1) / *step : 0;
	return 0;
}

/* The number of innermost iterations of the loops in "op": the product of
 * the trip counts along each path (a loop with non-constant bounds counts
 * once), summed over sibling loops. */
static int64_t iterations(MlirOperation op)
{
	int64_t lb, step, trip = 1, inner = 0;
	if (!pb_ir_op_is(op, "affine.for"))
		return 0;
	if (const_loop(op, &lb, &step, &trip))
		trip = 1;
	for (MlirOperation c = mlirBlockGetFirstOperation(body_of(op));
	     !mlirOperationIsNull(c); c = mlirOperationGetNextInBlock(c))
		inner += iterations(c);
	return trip * (inner > 0 ? inner : 1);
}

/* Is "t" an element type a reduction can start from (with "*bytes" its
 * size)? Floats f16, bf16, f32, f64; integers of 8 to 64 bits. */
static int elem_ok(MlirType t, int is_float, int *bytes)
{
	if (is_float && (mlirTypeIsAF16(t) || mlirTypeIsABF16(t) ||
			 mlirTypeIsAF32(t) || mlirTypeIsAF64(t))) {
		*bytes = (int)mlirFloatTypeGetWidth(t) / 8;
		return 1;
	}
	if (!is_float && mlirTypeIsAInteger(t)) {
		unsigned w = mlirIntegerTypeGetWidth(t);
		*bytes = (int)w / 8;
		return w >= 8 && w <= 64 && !(w & 7);
	}
	return 0;
}

/* The reduction operation named like "op", or NULL. */
static const struct pb_tile_red_op *red_op_of(MlirOperation op)
{
	for (const struct pb_tile_red_op *r = red_ops; r->name; r++)
		if (pb_ir_op_is(op, r->name))
			return r;
	return NULL;
}

/* Is "op" allowed in a nest that is distributed over threads: loops,
 * conditionals, accesses, private allocations, views and arithmetic? */
static int nest_op_ok(MlirOperation op)
{
	int mem, w;
	if (is_pure(op) || pb_poly_access_operand(op, &mem, &w) || pb_poly_is_view(op))
		return 1;
	if (pb_ir_op_is(op, "memref.alloca"))
		return !mlirOperationGetNumOperands(op);
	return pb_ir_op_is(op, "affine.for") || pb_ir_op_is(op, "affine.if") ||
	       pb_ir_op_is(op, "affine.yield");
}

/* Is "op" allowed anywhere in the band's body? Nested parallel loops,
 * GPU operations, calls and heap allocations are not. */
static int body_op_ok(MlirOperation op)
{
	return !pb_ir_op_is(op, "affine.parallel") &&
	       !pb_ir_op_is(op, "scf.parallel") &&
	       !pb_ir_op_is(op, "scf.forall") && !has_prefix(op, "gpu.") &&
	       !pb_ir_op_is(op, "func.call") &&
	       !pb_ir_op_is(op, "memref.alloc") &&
	       !pb_ir_op_is(op, "memref.dealloc") &&
	       !(pb_ir_op_is(op, "memref.alloca") &&
		 mlirOperationGetNumOperands(op));
}

/* Is "v" (a memref) only loaded from and stored to, never passed on? */
static int only_accessed(MlirValue v)
{
	for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u);
	     u = mlirOpOperandGetNextUse(u)) {
		MlirOperation o = mlirOpOperandGetOwner(u);
		int mem, w;
		if (!pb_poly_access_operand(o, &mem, &w) ||
		    mlirOpOperandGetOperandNumber(u) != (unsigned)mem)
			return 0;
	}
	return 1;
}

/* The size in bytes of the statically shaped memref type "t" with an
 * identity layout, or -1. */
static int64_t memref_bytes(MlirType t)
{
	if (!mlirTypeIsAMemRef(t) || !pb_ir_type_is_static(t) ||
	    !mlirAffineMapIsIdentity(mlirMemRefTypeGetAffineMap(t)))
		return -1;
	MlirType e = mlirShapedTypeGetElementType(t);
	int64_t n = 1, bytes;
	if (mlirTypeIsAFloat(e))
		bytes = mlirFloatTypeGetWidth(e) / 8;
	else if (mlirTypeIsAInteger(e))
		bytes = (mlirIntegerTypeGetWidth(e) + 7) / 8;
	else if (mlirTypeIsAIndex(e))
		bytes = 8;
	else
		return -1;
	for (intptr_t i = 0; i < mlirShapedTypeGetRank(t); i++)
		n *= mlirShapedTypeGetDimSize(t, i);
	return n * bytes;
}

/* Is the nest of "st" free of conflicts over its "d" outermost loops:
 * no two distinct iterations of them access one element with one of the
 * accesses a write? The "nskip" operations "skip" (accumulator chains)
 * are left out. Returns 1 when proven, 0 otherwise. The proof is lib/poly's
 * (pb_poly_local_conflict_free) on the nest's localized accesses. */
static int conflict_free(isl_ctx *ctx, const struct pb_tile_step *st, int d,
			 const MlirOperation *skip, int nskip)
{
	struct pb_poly_dim dim[PB_TILE_MAXD];
	struct pb_ir_ops ops = {0};
	int ok = 1;
	pb_ir_collect(st->op, NULL, &ops);
	for (int i = 0; ok && i < ops.n; i++)
		ok = nest_op_ok(ops.v[i]);
	pb_ir_ops_free(&ops);
	if (!ok)
		return 0;
	for (int k = 0; k < d; k++) {
		dim[k].iv = mlirBlockGetArgument(body_of(st->loop[k]), 0);
		dim[k].lb = st->lb[k];
		dim[k].step = st->step[k];
		dim[k].trip = st->trip[k];
	}
	struct pb_poly_local *l = pb_poly_local_build(ctx, st->op, d, dim,
						      skip, nskip, 0);
	ok = l && pb_poly_local_conflict_free(l);
	pb_poly_local_free(l);
	return ok;
}

/* Fill "a" when affine.store "s" in the body of nest "nest" ends an
 * accumulator chain: %x = affine.load M[sub]; %y = op %x, %v (or %v, %x);
 * affine.store %y, M[sub] with M and sub defined outside the nest, op a
 * reduction operation and %x, %y used once; or the conditional form
 * (ArgMax's index) %z = arith.select %c, %y, %x (or %c, %x, %y) stored
 * instead of %y, which is op(%x, %c ? %v : identity), with %x used by op
 * and the select only (so %c does not depend on it). Returns 1 when it
 * does. */
static int acc_chain(MlirOperation s, MlirOperation nest,
		     struct pb_tile_acc *a)
{
	int bytes, sel = 0;
	if (!pb_ir_op_is(s, "affine.store"))
		return 0;
	MlirValue y = mlirOperationGetOperand(s, 0), other = {NULL};
	if (!mlirValueIsAOpResult(y) || num_uses(y) != 1)
		return 0;
	for (intptr_t i = 1; i < mlirOperationGetNumOperands(s); i++)
		if (pb_ir_defined_in(mlirOperationGetOperand(s, i), nest))
			return 0;
	MlirOperation c = mlirOpResultGetOwner(y);
	if (pb_ir_op_is(c, "arith.select") &&
	    mlirOperationGetNumOperands(c) == 3) {
		MlirValue t = mlirOperationGetOperand(c, 1);
		MlirValue f = mlirOperationGetOperand(c, 2);
		int k = mlirValueIsAOpResult(t) &&
			red_op_of(mlirOpResultGetOwner(t)) ? 1 : 2;
		y = k == 1 ? t : f;
		other = k == 1 ? f : t;
		if (!mlirValueIsAOpResult(y) || num_uses(y) != 1)
			return 0;
		c = mlirOpResultGetOwner(y);
		sel = 1;
	}
	const struct pb_tile_red_op *r = red_op_of(c);
	if (!r || mlirOperationGetNumOperands(c) != 2 ||
	    !elem_ok(mlirValueGetType(y), r->is_float, &bytes))
		return 0;
	for (int k = 0; k < 2; k++) {
		MlirValue x = mlirOperationGetOperand(c, k);
		if (!mlirValueIsAOpResult(x) || num_uses(x) != 1 + sel ||
		    (sel && !mlirValueEqual(x, other)))
			continue;
		MlirOperation l = mlirOpResultGetOwner(x);
		if (!pb_ir_op_is(l, "affine.load") ||
		    !mlirBlockEqual(mlirOperationGetBlock(l),
				    mlirOperationGetBlock(s)) ||
		    !mlirAttributeEqual(pb_ir_attr(l, "map"),
					pb_ir_attr(s, "map")) ||
		    !pb_ir_same_operands(l, 0, s, 1))
			continue;
		a->load = l;
		a->comb = c;
		a->store = s;
		a->r = r;
		a->type = mlirValueGetType(y);
		return 1;
	}
	return 0;
}

/* The perfect prefix of loops with constant bounds of nest "op" into
 * "st"; returns its depth. */
static int loop_prefix(MlirOperation op, struct pb_tile_step *st)
{
	int d = 0;
	while (d < PB_TILE_MAXD &&
	       !const_loop(op, &st->lb[d], &st->step[d], &st->trip[d])) {
		st->loop[d++] = op;
		MlirOperation first = mlirBlockGetFirstOperation(body_of(op));
		MlirOperation next = mlirOperationGetNextInBlock(first);
		if (mlirOperationIsNull(next) || !pb_ir_op_is(next, "affine.yield"))
			break;
		op = first;
	}
	return d;
}

/* The product of the first "d" trip counts of "st", or -1 on overflow. */
static int64_t prefix_iters(const struct pb_tile_step *st, int d)
{
	int64_t n = 1;
	for (int k = 0; k < d; k++) {
		if (st->trip[k] && n > INT64_MAX / 4 / st->trip[k])
			return -1;
		n *= st->trip[k];
	}
	return n;
}

int64_t pb_tile_pow2ceil(int64_t n)
{
	int64_t p = 1;
	while (p < n && p < ((int64_t)1 << 62))
		p *= 2;
	return p;
}

/* Classify the affine.for nest of "st" as a reduction or a parallel nest
 * (PB_TILE_STEP_SCALAR when it is neither), for "threads" threads. */
static void classify_nest(isl_ctx *ctx, struct pb_tile_step *st, int threads)
{
	int p = loop_prefix(st->op, st);
	MlirOperation skip[2 * PB_TILE_MAXACC];
	st->kind = PB_TILE_STEP_SCALAR;
	if (!p)
		return;
	/* a reduction: straight-line body with accumulator chains */
	MlirBlock body = body_of(st->loop[p - 1]);
	int straight = 1;
	st->nacc = 0;
	for (MlirOperation op = mlirBlockGetFirstOperation(body);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		if (mlirOperationGetNumRegions(op))
			straight = 0;
		if (straight && st->nacc < PB_TILE_MAXACC &&
		    acc_chain(op, st->op, &st->acc[st->nacc]))
			st->nacc++;
	}
	st->n = prefix_iters(st, p);
	if (straight && st->nacc && st->n > 0) {
		struct pb_ir_ops all = {0};
		int ok = 1;
		pb_ir_collect(st->op, NULL, &all);
		for (int a = 0; a < st->nacc; a++) {
			MlirValue root = pb_poly_root(
				mlirOperationGetOperand(st->acc[a].store, 1));
			skip[2 * a] = st->acc[a].load;
			skip[2 * a + 1] = st->acc[a].store;
			for (int i = 0; ok && i < all.n; i++) {
				int mem, w;
				if (!pb_poly_access_operand(all.v[i], &mem, &w) ||
				    mlirOperationEqual(all.v[i], st->acc[a].load) ||
				    mlirOperationEqual(all.v[i], st->acc[a].store))
					continue;
				ok = !mlirValueEqual(root, pb_poly_root(
					mlirOperationGetOperand(all.v[i], mem)));
			}
		}
		pb_ir_ops_free(&all);
		if (ok && conflict_free(ctx, st, p, skip, 2 * st->nacc)) {
			st->kind = PB_TILE_STEP_RED;
			st->d = p;
			st->nthr = pb_tile_pow2ceil(st->n) < threads
					   ? pb_tile_pow2ceil(st->n)
					   : threads;
			return;
		}
	}
	st->nacc = 0;
	/* a parallel nest over as many outer loops as possible */
	for (int d = p; d >= 1; d--) {
		st->n = prefix_iters(st, d);
		if (st->n > 0 && conflict_free(ctx, st, d, NULL, 0)) {
			st->kind = PB_TILE_STEP_PAR;
			st->d = d;
			st->nthr = st->n < threads ? st->n : threads;
			return;
		}
	}
}

/* Does any operation nested in "op" (or "op") fail body_op_ok? */
static int has_bad_op(MlirOperation op)
{
	struct pb_ir_ops all = {0};
	int bad = !body_op_ok(op);
	pb_ir_collect(op, NULL, &all);
	for (int i = 0; !bad && i < all.n; i++)
		bad = !body_op_ok(all.v[i]);
	pb_ir_ops_free(&all);
	return bad;
}

/* The step of "p" whose operation is "op", or NULL. */
static struct pb_tile_step *step_of(const struct pb_tile_plan *p,
				    MlirOperation op)
{
	for (int i = 0; i < p->n; i++)
		if (mlirOperationEqual(p->s[i].op, op))
			return &p->s[i];
	return NULL;
}

/* Is a value computed by scalar work used outside its run? Values must
 * not cross thread loops. */
static int escapes(const struct pb_tile_plan *p, MlirBlock body)
{
	for (int i = 0; i < p->n; i++) {
		const struct pb_tile_step *st = &p->s[i];
		if (st->kind != PB_TILE_STEP_SCALAR)
			continue;
		for (intptr_t r = 0; r < mlirOperationGetNumResults(st->op); r++) {
			MlirValue v = mlirOperationGetResult(st->op, r);
			for (MlirOpOperand u = mlirValueGetFirstUse(v);
			     !mlirOpOperandIsNull(u);
			     u = mlirOpOperandGetNextUse(u)) {
				MlirOperation a = pb_ir_ancestor_in(
					mlirOpOperandGetOwner(u), body);
				const struct pb_tile_step *o = mlirOperationIsNull(a)
					? NULL : step_of(p, a);
				if (!o || o->kind != PB_TILE_STEP_SCALAR ||
				    o->run != st->run)
					return 1;
			}
		}
	}
	return 0;
}

/* Free the steps of "p". */
void pb_tile_reduce_plan_free(struct pb_tile_plan *p)
{
	free(p->s);
	p->s = NULL;
	p->n = 0;
}

/* Is every operand of "op" defined outside "body" or by a
 * PB_TILE_STEP_KEEP step of "p"? */
static int block_level(const struct pb_tile_plan *p, MlirOperation op,
		       MlirBlock body)
{
	for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); i++) {
		MlirValue v = mlirOperationGetOperand(op, i);
		MlirOperation d = pb_ir_value_parent(v);
		if (mlirValueIsABlockArgument(v) ||
		    !mlirBlockEqual(mlirOperationGetBlock(d), body))
			continue;
		const struct pb_tile_step *s = step_of(p, d);
		if (!s || s->kind != PB_TILE_STEP_KEEP)
			return 0;
	}
	return 1;
}

/* The buffers (root values) that some operation in the operation owning
 * "body" writes, into "written" (the keys). */
static void written_roots(MlirBlock body, struct pb_ptrmap *written)
{
	struct pb_ir_ops all = {0};
	int mem, w;
	pb_ir_collect(mlirBlockGetParentOperation(body), NULL, &all);
	for (int i = 0; i < all.n; i++)
		if (pb_poly_access_operand(all.v[i], &mem, &w) && w)
			pb_ptrmap_put(written,
				      pb_poly_root(mlirOperationGetOperand(
							   all.v[i], mem)).ptr,
				      1);
	pb_ir_ops_free(&all);
}

/* Is "op" a load from a buffer that nothing in the body writes (not in
 * "written", the body's written_roots)? Every thread may then perform it
 * at block level (no other band point writes the buffer either: the band
 * carries no dependence). */
static int read_only_load(MlirOperation op, const struct pb_ptrmap *written)
{
	int mem, w;
	if (!pb_poly_access_operand(op, &mem, &w) || w)
		return 0;
	MlirValue root = pb_poly_root(mlirOperationGetOperand(op, mem));
	return pb_ptrmap_get(written, root.ptr) < 0;
}

/* Plan the block-level mapping of the body of "b" with "threads" threads
 * into "p"; 1 when it applies (see pb_tile_reduce_match). */
int pb_tile_reduce_plan(isl_ctx *ctx, const struct pb_kernel_band *b, int threads,
		   struct pb_tile_plan *p)
{
	MlirBlock body = pb_kernel_band_body(b);
	struct pb_ir_ops ops = {0};
	struct pb_ptrmap written = {0};
	int ok = 1, run = 0, dist = 0;
	memset(p, 0, sizeof(*p));
	if (threads < 32 || threads > 1024 || (threads & (threads - 1)) ||
	    b->n < 1)
		return 0;
	pb_ir_block_ops(body, &ops);
	written_roots(body, &written);
	p->s = calloc(ops.n + 1, sizeof(*p->s));
	for (int i = 0; ok && i < ops.n; i++) {
		MlirOperation op = ops.v[i];
		struct pb_tile_step *st = &p->s[p->n];
		if (mlirOperationIsNull(mlirOperationGetNextInBlock(op)))
			break; /* the terminator */
		if (has_bad_op(op)) {
			ok = 0;
			break;
		}
		p->n++;
		st->op = op;
		int64_t bytes;
		if (pb_ir_op_is(op, "memref.alloca")) {
			MlirValue v = mlirOperationGetResult(op, 0);
			bytes = memref_bytes(mlirValueGetType(v));
			ok = bytes >= 0 && only_accessed(v);
			st->kind = PB_TILE_STEP_ALLOCA;
			p->smem += bytes;
			continue;
		}
		if ((is_pure(op) || read_only_load(op, &written)) &&
		    block_level(p, op, body)) {
			st->kind = PB_TILE_STEP_KEEP;
			continue;
		}
		if (pb_ir_op_is(op, "affine.for")) {
			classify_nest(ctx, st, threads);
			p->work += iterations(op);
		} else {
			st->kind = PB_TILE_STEP_SCALAR;
		}
		if (st->kind == PB_TILE_STEP_SCALAR) {
			st->run = run;
		} else {
			run++;
			dist++;
		}
		for (int a = 0; a < st->nacc; a++) {
			int eb;
			elem_ok(st->acc[a].type, st->acc[a].r->is_float, &eb);
			p->smem += st->nthr * eb;
		}
	}
	pb_ir_ops_free(&ops);
	pb_ptrmap_free(&written);
	if (ok && (!dist || escapes(p, body)))
		ok = 0;
	if (!ok)
		pb_tile_reduce_plan_free(p);
	return ok;
}

int pb_tile_reduce_match(const struct pb_kernel_band *b, int threads,
			 int64_t *work, int64_t *smem)
{
	struct pb_tile_plan p;
	isl_ctx *ctx = isl_ctx_alloc();
	if (ctx)
		isl_options_set_on_error(ctx, ISL_ON_ERROR_CONTINUE);
	int ok = ctx && pb_tile_reduce_plan(ctx, b, threads, &p);
	if (ok) {
		*work = p.work;
		*smem = p.smem;
		pb_tile_reduce_plan_free(&p);
	}
	isl_ctx_free(ctx);
	return ok;
}

