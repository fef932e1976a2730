/* The cost model of pb-tile (docs/pb-tile.md, "Cost model"): the
 * predicted time of a nest under a mapping, from the target description.
 *
 * A nest is summarised once (struct stats): the operations one band point
 * executes (inner loop trip counts multiplied out) and its global
 * accesses with the range of every subscript over a tile. For a mapping
 * (block tile T, threads B, thread tile R = T / B per dimension):
 *
 *   blocks     G = prod ceil(extent / T)
 *   occupancy  resident blocks per SM from threads, registers (estimated
 *              from the jammed accumulators) and shared memory
 *   waves      ceil(G / (SMs x resident blocks))
 *   compute    waves x resident blocks x threads x R x ops per point
 *              / (lanes per SM x latency hiding) / clock, where a load
 *              that does not vary along a jammed dimension is shared by
 *              its R points (register reuse)
 *   memory     max(unique bytes / DRAM bandwidth,
 *                  G x tile footprint x uncoalescing / L2 bandwidth)
 *   t          launch + max(compute, memory)
 *
 * The footprint of a tile is the box of elements each access touches when
 * the band's ivs range over the tile and the inner loops over their
 * bounds: data reuse inside a tile is what larger tiles buy. An access
 * whose innermost subscript does not move by one element along the
 * thread-x dimension costs a 32-byte sector per thread.
 *
 * The box and the coefficients of an access come from lib/poly's
 * localized access model of the nest (poly.h, pb_poly_local_build; the
 * band's ivs its domain, fixed at 0, inner loops bounded) when its
 * subscripts are affine in band ivs, inner loop counters with constant
 * bounds and constants, each operand distinct, on the root buffer itself.
 * The interval evaluator below (eval, ival_of, coef_of) remains for the
 * other subscripts, where isl would answer differently: chains of
 * affine.apply and the affine.min/max clamps of a folded pad (a clamp
 * moves with its non-constant result here; isl has no single affine
 * function for it), floordiv and mod (intervals here, quasi-affine
 * functions with divisions in isl), values defined around the nest
 * (unbounded here, parameters in isl) and accesses through views (the
 * view's index space here, the root's in lib/poly). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include <isl/ctx.h>
#include <isl/options.h>

#include "poly/poly.h"
#include "tile/internal.h"

/* The model's constants that are not datasheet numbers (L2 bandwidth
 * over DRAM's, the DRAM bandwidth a streaming kernel reaches, cycles per
 * operation of a dependent chain, the issue cost of a global access, the
 * occupancy that hides latency, a reduction tree's step) are the
 * target's "model" object, t->model (docs/targets.md): their defaults
 * are the values this file had as constants, the H200's are fitted to
 * measurements by bench/fit.py. */
#define MAXACC 64
/* The cycles of a global load's round trip (what a synchronous copy of
 * a staged tile waits for, once per k-tile). */
#define GLOBAL_LATENCY_CYCLES 600.0

/* An interval of index values. */
struct ival {
	int64_t lo, hi;
};

/* One global access of the nest. */
struct acc {
	MlirValue mem;
	int rank, elem;
	int64_t shape[PB_TILE_MAXD];
	double weight;	     /* executions per band point */
	/* per band dim d: coefficient of iv d in each subscript (0 when
	 * absent; INT64_MAX when not affine in it) */
	int64_t coef[PB_TILE_MAXD][PB_TILE_MAXD];
	struct ival box[PB_TILE_MAXD]; /* subscript ranges, band ivs at 0 */
	/* a read pb-smem may stage: of a kernel argument never written, in
	 * the reduction loop, with the coefficient of the loop's counter
	 * in each subscript */
	int stageable;
	int64_t kcoef[PB_TILE_MAXD];
	/* per subscript: the trip count of an inner loop other than the
	 * reduction loop whose counter moves it by exactly one (a
	 * convolution's window, kw), 0 when none: the points of a
	 * contiguous thread tile along a band dimension that moves the
	 * subscript by one share the window's elements */
	int64_t wtrip[PB_TILE_MAXD];
};

struct stats {
	const struct pb_kernel_band *b;
	double ops;		/* operations per band point */
	double mem;		/* of them global loads and stores */
	double flops;
	int nacc;
	struct acc acc[MAXACC];
	int jammable;
	int index_ops;		/* index arithmetic inside inner loops: live
				   per point of a jammed thread tile */
	struct pb_poly_local *model; /* lib/poly's accesses, while walking */
	/* the reduction loop pb-smem strip-mines into k-tiles: the first
	 * affine.for of the band's body from 0 by 1 with a constant trip
	 * count of 2 or more (its counter "kiv") */
	MlirOperation kloop;
	MlirValue kiv;
	int64_t ktrip;
	int kinner;		/* the reduction loop holds loops (a
				   convolution's window) */
	int several;		/* the body has several loops: priced, and
				   handed to pb-smem, unstaged */
	int nstageable;
	double apply_ops;	/* of "ops": affine.apply in inner loops,
				   which the points of a jammed thread tile
				   share once unrolled (their subscripts
				   differ by constants) */
	double guard_ops;	/* of "ops": a folded pad's clamps and
				   selects in the reduction loop, which a
				   staged window leaves behind (pad.c) */
};

/* Loop ivs and their ranges while walking the body. */
struct scope {
	int n;
	MlirValue iv[16];
	struct ival r[16];
};

static struct ival ival_of(const struct stats *st, const struct scope *sc,
			   MlirValue v, int depth);

/* The interval of affine expression "e" on operand intervals "in". */
static struct ival eval(MlirAffineExpr e, const struct ival *in, int nd)
{
	struct ival r = {0, 0}, a, b;
	if (mlirAffineExprIsAConstant(e)) {
		r.lo = r.hi = mlirAffineConstantExprGetValue(e);
	} else if (mlirAffineExprIsADim(e)) {
		r = in[mlirAffineDimExprGetPosition(e)];
	} else if (mlirAffineExprIsASymbol(e)) {
		r = in[nd + mlirAffineSymbolExprGetPosition(e)];
	} else if (mlirAffineExprIsABinary(e)) {
		a = eval(mlirAffineBinaryOpExprGetLHS(e), in, nd);
		b = eval(mlirAffineBinaryOpExprGetRHS(e), in, nd);
		if (mlirAffineExprIsAAdd(e)) {
			r.lo = a.lo + b.lo;
			r.hi = a.hi + b.hi;
		} else if (mlirAffineExprIsAMul(e)) {
			int64_t c[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo,
					a.hi * b.hi};
			r.lo = r.hi = c[0];
			for (int i = 1; i < 4; i++) {
				r.lo = c[i] < r.lo ? c[i] : r.lo;
				r.hi = c[i] > r.hi ? c[i] : r.hi;
			}
		} else if (mlirAffineExprIsAMod(e) && b.lo == b.hi && b.lo > 0) {
			r.lo = 0;
			r.hi = b.lo - 1;
			if (a.hi - a.lo < b.lo && a.lo >= 0 &&
			    a.lo / b.lo == a.hi / b.lo) {
				r.lo = a.lo % b.lo;
				r.hi = a.hi % b.lo;
			}
		} else if ((mlirAffineExprIsAFloorDiv(e) ||
			    mlirAffineExprIsACeilDiv(e)) &&
			   b.lo == b.hi && b.lo > 0) {
			r.lo = a.lo >= 0 ? a.lo / b.lo : -((-a.lo + b.lo - 1) / b.lo);
			r.hi = a.hi >= 0 ? (a.hi + b.lo - 1) / b.lo : a.hi / b.lo;
		} else {
			r.lo = INT64_MIN / 4;
			r.hi = INT64_MAX / 4;
		}
	}
	return r;
}

/* The interval of the results of map attribute "name" of "op" applied to
 * its operands from "first"; "combine" 0: hull, 1: min, 2: max. */
static struct ival eval_map(const struct stats *st, const struct scope *sc,
			    MlirOperation op, const char *name, int first,
			    int combine, int depth)
{
	struct ival in[32], r = {INT64_MIN / 4, INT64_MAX / 4};
	MlirAttribute a = pb_ir_attr(op, name);
	if (mlirAttributeIsNull(a) || !mlirAttributeIsAAffineMap(a))
		return r;
	MlirAffineMap m = mlirAffineMapAttrGetValue(a);
	int nin = mlirAffineMapGetNumInputs(m);
	if (nin > 32)
		return r;
	for (int i = 0; i < nin; i++)
		in[i] = ival_of(st, sc,
				mlirOperationGetOperand(op, first + i), depth + 1);
	for (int k = 0; k < mlirAffineMapGetNumResults(m); k++) {
		struct ival x = eval(mlirAffineMapGetResult(m, k), in,
				     mlirAffineMapGetNumDims(m));
		if (k == 0) {
			r = x;
		} else if (combine == 1) {
			r.lo = x.lo < r.lo ? x.lo : r.lo;
			r.hi = x.hi < r.hi ? x.hi : r.hi;
		} else if (combine == 2) {
			r.lo = x.lo > r.lo ? x.lo : r.lo;
			r.hi = x.hi > r.hi ? x.hi : r.hi;
		}
	}
	return r;
}

/* The interval of index value "v": a band iv over one tile (from 0), an
 * inner loop's iv over its bounds, a constant or affine arithmetic on
 * those; unbounded otherwise. */
static struct ival ival_of(const struct stats *st, const struct scope *sc,
			   MlirValue v, int depth)
{
	struct ival r = {INT64_MIN / 4, INT64_MAX / 4};
	for (int d = 0; d < st->b->n; d++)
		if (mlirValueEqual(v, st->b->iv[d])) {
			r.lo = 0;
			r.hi = 0; /* scaled by the caller through coef */
			return r;
		}
	for (int i = 0; i < sc->n; i++)
		if (mlirValueEqual(v, sc->iv[i]))
			return sc->r[i];
	if (depth > 8 || !mlirValueIsAOpResult(v))
		return r;
	MlirOperation op = mlirOpResultGetOwner(v);
	if (pb_ir_op_is(op, "arith.constant")) {
		MlirAttribute a = pb_ir_attr(op, "value");
		if (!mlirAttributeIsNull(a) && mlirAttributeIsAInteger(a))
			r.lo = r.hi = mlirIntegerAttrGetValueInt(a);
	} else if (pb_ir_op_is(op, "affine.apply")) {
		r = eval_map(st, sc, op, "map", 0, 0, depth);
	} else if (pb_ir_op_is(op, "affine.min")) {
		r = eval_map(st, sc, op, "map", 0, 1, depth);
	} else if (pb_ir_op_is(op, "affine.max")) {
		r = eval_map(st, sc, op, "map", 0, 2, depth);
	}
	return r;
}

/* How much affine expression "e" (of "nd" dims) moves when its "nin"
 * inputs move by "cin": INT64_MAX when an input moves by an unknown
 * amount. */
static int64_t expr_coef(MlirAffineExpr e, int nd, const int64_t *cin,
			 int nin)
{
	struct ival in[32], zero[32];
	if (nin > 32)
		return INT64_MAX;
	for (int k = 0; k < nin; k++) {
		if (cin[k] == INT64_MAX)
			return INT64_MAX;
		in[k].lo = in[k].hi = cin[k];
		zero[k].lo = zero[k].hi = 0;
	}
	return eval(e, in, nd).lo - eval(e, zero, nd).lo;
}

/* The coefficient of band iv "iv" in index value "v": the difference of
 * "v" when "iv" moves by one, if "v" is affine in it (INT64_MAX when not
 * known). Only affine.apply chains are followed. */
static int64_t coef_of(MlirValue v, MlirValue iv, int depth)
{
	if (mlirValueEqual(v, iv))
		return 1;
	if (depth > 8 || !mlirValueIsAOpResult(v))
		return mlirValueIsAOpResult(v) ? INT64_MAX : 0;
	MlirOperation op = mlirOpResultGetOwner(v);
	if (pb_ir_op_is(op, "arith.constant"))
		return 0;
	if (!pb_ir_op_is(op, "affine.apply") &&
	    !pb_ir_op_is(op, "affine.min") && !pb_ir_op_is(op, "affine.max")) {
		/* another operation: it may move with "iv" in any way */
		return INT64_MAX;
	}
	MlirAffineMap m = mlirAffineMapAttrGetValue(pb_ir_attr(op, "map"));
	int64_t cin[32];
	int nin = mlirAffineMapGetNumInputs(m), nd = mlirAffineMapGetNumDims(m);
	if (nin > 32)
		return INT64_MAX;
	for (int i = 0; i < nin; i++)
		cin[i] = coef_of(mlirOperationGetOperand(op, i), iv, depth + 1);
	/* a clamp (min or max with constants) moves with its one
	 * non-constant result, except at the boundary */
	int64_t c = INT64_MAX;
	for (int k = 0; k < mlirAffineMapGetNumResults(m); k++) {
		MlirAffineExpr e = mlirAffineMapGetResult(m, k);
		if (mlirAffineExprIsAConstant(e))
			continue;
		int64_t ck = expr_coef(e, nd, cin, nin);
		if (ck == INT64_MAX || (c != INT64_MAX && ck != c))
			return INT64_MAX;
		c = ck;
	}
	return c == INT64_MAX ? 0 : c;
}

/* Does "v" (a memref) come from an allocation inside the nest? */
static int is_private(const struct stats *st, MlirValue v)
{
	while (mlirValueIsAOpResult(v)) {
		MlirOperation op = mlirOpResultGetOwner(v);
		if (pb_ir_op_is(op, "memref.alloca") ||
		    pb_ir_op_is(op, "memref.alloc"))
			return pb_ir_is_inside(op, st->b->root);
		if (!mlirOperationGetNumOperands(op))
			return 0;
		v = mlirOperationGetOperand(op, 0);
	}
	return 0;
}

/* Is "e" built of constants, dims, symbols, sums and products only (no
 * floordiv, ceildiv or mod)? */
static int linear_expr(MlirAffineExpr e)
{
	if (mlirAffineExprIsAAdd(e) || mlirAffineExprIsAMul(e))
		return linear_expr(mlirAffineBinaryOpExprGetLHS(e)) &&
		       linear_expr(mlirAffineBinaryOpExprGetRHS(e));
	return mlirAffineExprIsAConstant(e) || mlirAffineExprIsADim(e) ||
	       mlirAffineExprIsASymbol(e);
}

/* Is subscript operand "v" a band iv, an iv of "sc" with constant bounds
 * or an arith.constant integer? */
static int plain_operand(const struct stats *st, const struct scope *sc,
			 MlirValue v)
{
	for (int d = 0; d < st->b->n; d++)
		if (mlirValueEqual(v, st->b->iv[d]))
			return 1;
	for (int i = 0; i < sc->n; i++)
		if (mlirValueEqual(v, sc->iv[i]))
			return sc->r[i].lo > INT64_MIN / 4;
	if (!mlirValueIsAOpResult(v))
		return 0;
	MlirOperation def = mlirOpResultGetOwner(v);
	MlirAttribute a = pb_ir_attr(def, "value");
	return pb_ir_op_is(def, "arith.constant") && !mlirAttributeIsNull(a) &&
	       mlirAttributeIsAInteger(a);
}

/* The box (band ivs at 0) and the coefficients of the band ivs of access
 * "op" to "mem" (subscripts from operand "first") into "a" from lib/poly's
 * model of the nest, for the subscripts where it answers as the interval
 * evaluator would (see the top); -1 (nothing set) for the others. */
static int poly_access(const struct stats *st, const struct scope *sc,
		       MlirOperation op, MlirValue mem, int first,
		       struct acc *a)
{
	const struct pb_poly_local *l = st->model;
	int x = -1, nops = (int)mlirOperationGetNumOperands(op) - first;
	for (int i = 0; l && x < 0 && i < l->naccess; i++)
		if (mlirOperationEqual(l->access[i].op, op))
			x = i;
	if (x < 0 || !l->access[x].exact ||
	    !mlirValueEqual(mem, l->root[l->access[x].root]))
		return -1;
	for (int i = 0; i < nops; i++) {
		MlirValue v = mlirOperationGetOperand(op, first + i);
		if (!plain_operand(st, sc, v))
			return -1;
		for (int j = 0; j < i; j++)
			if (mlirValueEqual(v, mlirOperationGetOperand(
						      op, first + j)))
				return -1;
	}
	MlirAttribute ma = pb_ir_attr(op, "map");
	if (!mlirAttributeIsNull(ma)) {
		MlirAffineMap m = mlirAffineMapAttrGetValue(ma);
		for (int i = 0; i < mlirAffineMapGetNumResults(m); i++)
			if (!linear_expr(mlirAffineMapGetResult(m, i)))
				return -1;
	}
	isl_set *fp = pb_poly_local_footprint(l, 1, &x, NULL);
	isl_fixed_box *box = fp && isl_set_is_empty(fp) == isl_bool_false
		? isl_set_get_simple_fixed_box_hull(fp) : NULL;
	isl_set_free(fp);
	isl_multi_aff *off = box && isl_fixed_box_is_valid(box) == isl_bool_true
		? isl_fixed_box_get_offset(box) : NULL;
	isl_multi_val *size = off ? isl_fixed_box_get_size(box) : NULL;
	int ok = off && size;
	struct ival r[PB_TILE_MAXD];
	for (int i = 0; ok && i < a->rank; i++) {
		isl_aff *o = isl_multi_aff_get_at(off, i);
		isl_val *lo = isl_aff_is_cst(o) == isl_bool_true
			? isl_aff_get_constant_val(o) : NULL;
		isl_val *n = isl_multi_val_get_at(size, i);
		ok = lo && n && isl_val_is_int(lo) && isl_val_is_int(n);
		if (ok) {
			r[i].lo = isl_val_get_num_si(lo);
			r[i].hi = r[i].lo + isl_val_get_num_si(n) - 1;
		}
		for (int d = 0; ok && d < st->b->n; d++)
			ok = !pb_poly_local_coef(l, x, i, d, &a->coef[i][d]);
		isl_val_free(lo);
		isl_val_free(n);
		isl_aff_free(o);
	}
	isl_multi_val_free(size);
	isl_multi_aff_free(off);
	isl_fixed_box_free(box);
	if (!ok) {
		memset(a->coef, 0, sizeof(a->coef));
		return -1;
	}
	for (int i = 0; i < a->rank; i++)
		a->box[i] = r[i];
	return 0;
}

/* Clamp the subscript range "r" to dimension "i" of "a"'s buffer. */
static struct ival clamp(const struct acc *a, int i, struct ival r)
{
	if (r.lo < 0)
		r.lo = 0;
	if (r.hi > a->shape[i] - 1)
		r.hi = a->shape[i] - 1;
	if (r.hi < r.lo)
		r.hi = r.lo;
	return r;
}

/* Is "v" an argument of the kernel function around the nest of "st"
 * that the kernel only reads (every use a load)? */
static int read_only_arg(const struct stats *st, MlirValue v)
{
	if (!mlirValueIsABlockArgument(v))
		return 0;
	MlirOperation f = mlirBlockGetParentOperation(
		mlirBlockArgumentGetOwner(v));
	return !mlirOperationIsNull(f) && pb_ir_op_is(f, "func.func") &&
	       pb_ir_is_inside(st->b->root, f) && pb_kernel_only_loaded(v);
}

/* How much subscript "i" of access "op" (its index operands from operand
 * "first") moves when counter "iv" moves by one: through the map of an
 * affine.load or affine.store, else coef_of its operand (INT64_MAX when
 * not known). */
static int64_t subscript_coef(MlirOperation op, int first, int i, MlirValue iv)
{
	if (!pb_ir_op_is(op, "affine.load") && !pb_ir_op_is(op, "affine.store"))
		return coef_of(mlirOperationGetOperand(op, first + i), iv, 0);
	MlirAffineMap m = mlirAffineMapAttrGetValue(pb_ir_attr(op, "map"));
	int nin = mlirAffineMapGetNumInputs(m);
	int64_t cin[32];
	if (nin > 32)
		return INT64_MAX;
	for (int k = 0; k < nin; k++)
		cin[k] = coef_of(mlirOperationGetOperand(op, first + k), iv, 0);
	return expr_coef(mlirAffineMapGetResult(m, i),
			 mlirAffineMapGetNumDims(m), cin, nin);
}

/* Mark load "op" of "a" (its subscripts from operand 1) stageable when
 * pb-smem may stage it: a read of a kernel argument the kernel never
 * writes, in the reduction loop, each subscript affine in the band's and
 * the loop's counters (a folded pad's clamps included: pb-smem stages
 * those windows with their halo, lib/smem/pad.c). */
static void stageable(struct stats *st, MlirOperation op, struct acc *a)
{
	if (mlirOperationIsNull(st->kloop) || !pb_ir_is_inside(op, st->kloop) ||
	    !read_only_arg(st, a->mem))
		return;
	for (int i = 0; i < a->rank; i++) {
		a->kcoef[i] = subscript_coef(op, 1, i, st->kiv);
		if (a->kcoef[i] == INT64_MAX)
			return;
		for (int d = 0; d < st->b->n; d++)
			if (a->coef[i][d] == INT64_MAX)
				return;
	}
	a->stageable = 1;
	st->nstageable++;
}

/* The window loops of access "op" of "a" (subscripts from operand
 * "first") into a->wtrip: per subscript, an inner loop of "sc" but the
 * reduction loop whose counter moves it by exactly one. */
static void window(const struct stats *st, const struct scope *sc,
		   MlirOperation op, int first, struct acc *a)
{
	for (int j = 0; j < sc->n; j++) {
		int64_t trip = sc->r[j].hi - sc->r[j].lo + 1;
		if ((!mlirValueIsNull(st->kiv) &&
		     mlirValueEqual(sc->iv[j], st->kiv)) ||
		    trip < 2 || sc->r[j].lo <= INT64_MIN / 4)
			continue;
		for (int i = 0; i < a->rank; i++)
			if (subscript_coef(op, first, i, sc->iv[j]) == 1 &&
			    !a->wtrip[i])
				a->wtrip[i] = trip;
	}
}

/* Record access "op" (a load or store) executed "w" times per point. */
static void add_access(struct stats *st, const struct scope *sc,
		       MlirOperation op, double w)
{
	int store = pb_ir_op_is(op, "affine.store") ||
		    pb_ir_op_is(op, "memref.store");
	int affine = pb_ir_op_is(op, "affine.load") ||
		     pb_ir_op_is(op, "affine.store");
	MlirValue mem = mlirOperationGetOperand(op, store ? 1 : 0);
	MlirType t = mlirValueGetType(mem);
	if (!mlirTypeIsAMemRef(t) || is_private(st, mem) ||
	    st->nacc == MAXACC)
		return;
	struct acc *a = &st->acc[st->nacc];
	memset(a, 0, sizeof(*a));
	a->mem = mem;
	a->rank = mlirShapedTypeGetRank(t);
	if (a->rank > PB_TILE_MAXD)
		return;
	MlirType et = mlirShapedTypeGetElementType(t);
	a->elem = mlirTypeIsAInteger(et) ? (mlirIntegerTypeGetWidth(et) + 7) / 8
		  : mlirTypeIsAF64(et) ? 8 : mlirTypeIsAF16(et) ? 2 : 4;
	for (int i = 0; i < a->rank; i++)
		a->shape[i] = mlirShapedTypeGetDimSize(t, i);
	a->weight = w;
	int first = store ? 2 : 1;
	MlirAffineMap m = {0};
	if (affine)
		m = mlirAffineMapAttrGetValue(pb_ir_attr(op, "map"));
	int nin = affine ? mlirAffineMapGetNumInputs(m) : 0;
	int nd = affine ? mlirAffineMapGetNumDims(m) : 0;
	struct ival in[32];
	if (nin > 32)
		return; /* not a subscript we can follow: leave it out */
	if (!store)
		window(st, sc, op, first, a);
	if (!poly_access(st, sc, op, mem, first, a)) {
		for (int i = 0; i < a->rank; i++)
			a->box[i] = clamp(a, i, a->box[i]);
		if (!store)
			stageable(st, op, a);
		st->nacc++;
		return;
	}
	for (int k = 0; k < nin; k++)
		in[k] = ival_of(st, sc, mlirOperationGetOperand(op, first + k), 0);
	for (int i = 0; i < a->rank; i++) {
		struct ival r =
			affine ? eval(mlirAffineMapGetResult(m, i), in, nd)
			       : ival_of(st, sc,
					 mlirOperationGetOperand(op, first + i),
					 0);
		for (int d = 0; d < st->b->n; d++)
			a->coef[i][d] = subscript_coef(op, first, i,
						       st->b->iv[d]);
		a->box[i] = clamp(a, i, r);
	}
	if (!store)
		stageable(st, op, a);
	st->nacc++;
}

/* The constant trip count of affine.for "op" into "r" (its iv range);
 * 0 when its bounds are not constant. */
static int for_range(MlirOperation op, struct ival *r, int64_t *trip)
{
	MlirAttribute st = pb_ir_attr(op, "step");
	int64_t a, b;
	if (pb_ir_const_map(op, "lowerBoundMap", 1, &a) ||
	    pb_ir_const_map(op, "upperBoundMap", 1, &b))
		return 0;
	int64_t s = mlirAttributeIsNull(st) ? 1 : mlirIntegerAttrGetValueInt(st);
	if (s < 1)
		s = 1;
	*trip = b > a ? (b - a + s - 1) / s : 0;
	r->lo = a;
	r->hi = b > a ? b - 1 : a;
	return 1;
}

/* Is "op" a floating-point or integer arithmetic operation? */
static int is_arith(MlirOperation op)
{
	MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
	return (s.length > 6 && !strncmp(s.data, "arith.", 6) &&
		strncmp(s.data, "arith.constant", 14)) ||
	       (s.length > 5 && !strncmp(s.data, "math.", 5));
}

/* Is "op" an addition of a product, which becomes one FMA? */
static int fused(MlirOperation op)
{
	if (!pb_ir_op_is(op, "arith.addf"))
		return 0;
	for (int i = 0; i < 2; i++) {
		MlirValue v = mlirOperationGetOperand(op, i);
		if (mlirValueIsAOpResult(v) &&
		    pb_ir_op_is(mlirOpResultGetOwner(v), "arith.mulf"))
			return 1;
	}
	return 0;
}

/* Is "op" in the reduction loop of "st"? */
static int in_kloop(const struct stats *st, MlirOperation op)
{
	return !mlirOperationIsNull(st->kloop) && pb_ir_is_inside(op, st->kloop);
}

/* Walk block "blk" executed "w" times per band point. */
static void walk_block(struct stats *st, struct scope *sc, MlirBlock blk, double w)
{
	for (MlirOperation op = mlirBlockGetFirstOperation(blk);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		if (pb_ir_op_is(op, "affine.for")) {
			struct ival r = {0, 0};
			int64_t trip = 1;
			if (!for_range(op, &r, &trip)) {
				trip = 16; /* unknown bounds: a guess */
				r.lo = INT64_MIN / 4;
				r.hi = INT64_MAX / 4;
			}
			if (sc->n < 16) {
				sc->iv[sc->n] = mlirBlockGetArgument(
					mlirRegionGetFirstBlock(
						mlirOperationGetRegion(op, 0)), 0);
				sc->r[sc->n++] = r;
			}
			walk_block(st, sc, mlirRegionGetFirstBlock(
					     mlirOperationGetRegion(op, 0)),
			     w * (double)trip);
			sc->n--;
			continue;
		}
		for (intptr_t i = 0; i < mlirOperationGetNumRegions(op); i++) {
			MlirRegion rg = mlirOperationGetRegion(op, i);
			MlirBlock b = mlirRegionGetFirstBlock(rg);
			if (!mlirBlockIsNull(b))
				walk_block(st, sc, b, w);
		}
		if (pb_ir_op_is(op, "affine.load") || pb_ir_op_is(op, "affine.store") ||
		    pb_ir_op_is(op, "memref.load") || pb_ir_op_is(op, "memref.store")) {
			int n0 = st->nacc;
			add_access(st, sc, op, w);
			if (st->nacc > n0) { /* private ones live in registers */
				st->ops += w;
				st->mem += w;
			}
		} else if (pb_ir_op_is(op, "affine.apply") ||
			   pb_ir_op_is(op, "affine.min") ||
			   pb_ir_op_is(op, "affine.max")) {
			/* index arithmetic: a folded pad's clamps */
			st->ops += w;
			st->index_ops += sc->n > 0;
			if (sc->n > 0 && pb_ir_op_is(op, "affine.apply"))
				st->apply_ops += w;
			if (!pb_ir_op_is(op, "affine.apply") && in_kloop(st, op))
				st->guard_ops += w;
		} else if (is_arith(op)) {
			if (!fused(op))
				st->ops += w;
			if ((pb_ir_op_is(op, "arith.cmpi") ||
			     pb_ir_op_is(op, "arith.andi") ||
			     pb_ir_op_is(op, "arith.select")) &&
			    in_kloop(st, op))
				st->guard_ops += w;
			if (sc->n > 0 && (pb_ir_op_is(op, "arith.cmpi") ||
					  pb_ir_op_is(op, "arith.andi") ||
					  pb_ir_op_is(op, "arith.select")))
				st->index_ops++;
			MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
			if (s.length > 1 && s.data[s.length - 1] == 'f')
				st->flops += w;
			else if (s.length > 5 && !strncmp(s.data, "math.", 5))
				st->flops += w;
		}
	}
}

/* Walk the body "blk" of the band of "st" ("w" times per band point)
 * with lib/poly's model of its nest at hand: the band's ivs its domain
 * (counters from 0, fixed at 0), inner loops bounded. */
static void walk(struct stats *st, struct scope *sc, MlirBlock blk, double w)
{
	struct pb_poly_dim dim[PB_TILE_MAXD];
	isl_ctx *ctx = isl_ctx_alloc();
	if (ctx)
		isl_options_set_on_error(ctx, ISL_ON_ERROR_CONTINUE);
	for (int d = 0; d < st->b->n; d++) {
		dim[d].iv = st->b->iv[d];
		dim[d].lb = 0;
		dim[d].step = 1;
		dim[d].trip = 1;
	}
	st->model = ctx ? pb_poly_local_build(ctx, st->b->root, st->b->n, dim,
					      NULL, 0,
					      PB_POLY_LOCAL_INNER_BOUNDS)
			: NULL;
	walk_block(st, sc, blk, w);
	pb_poly_local_free(st->model);
	st->model = NULL;
	isl_ctx_free(ctx);
}

static void stats_of(const struct pb_kernel_band *b, struct stats *st)
{
	struct scope sc = {0};
	memset(st, 0, sizeof(*st));
	st->b = b;
	for (MlirOperation op = mlirBlockGetFirstOperation(pb_kernel_band_body(b));
	     !mlirOperationIsNull(op) && mlirOperationIsNull(st->kloop);
	     op = mlirOperationGetNextInBlock(op)) {
		struct ival r;
		int64_t trip;
		MlirAttribute step = pb_ir_attr(op, "step");
		if (pb_ir_op_is(op, "affine.for") && for_range(op, &r, &trip) &&
		    r.lo == 0 && trip >= 2 && !mlirAttributeIsNull(step) &&
		    mlirIntegerAttrGetValueInt(step) == 1) {
			struct pb_ir_ops inner = {0};
			st->kloop = op;
			st->kiv = mlirBlockGetArgument(mlirRegionGetFirstBlock(
				mlirOperationGetRegion(op, 0)), 0);
			st->ktrip = trip;
			pb_ir_collect(op, "affine.for", &inner);
			st->kinner = inner.n > 1;
			pb_ir_ops_free(&inner);
		}
	}
	walk(st, &sc, pb_kernel_band_body(b), 1.0);
	st->jammable = pb_tile_jam_ok(b);
	/* pb-smem stages one reduction loop of a thread's work, and only
	 * when the work's other parts keep their values to themselves: a
	 * body with several loops (a fire module's two convolutions) is
	 * priced unstaged */
	int loops = 0;
	for (MlirOperation op = mlirBlockGetFirstOperation(pb_kernel_band_body(b));
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
		loops += pb_ir_op_is(op, "affine.for");
	st->several = loops > 1;
	if (loops > 1) {
		st->nstageable = 0;
		for (int i = 0; i < st->nacc; i++)
			st->acc[i].stageable = 0;
	}
}

int64_t pb_tile_threads(const struct pb_tile_choice *c)
{
	int64_t t = 1;
	if (c->mode != PB_TILE_TILE)
		return c->threads;
	for (int d = 0; d < c->n; d++)
		t *= c->block[d];
	return t;
}

/* The 32-byte sectors one warp's execution of access "a" moves, per the
 * sectors its lanes would need if every lane read its own: 1 when the
 * lanes of "c" read consecutive elements (or one element), up to 32 / elem
 * bytes when each lane needs a sector of its own. */
static double sectors(const struct acc *a, const struct pb_tile_choice *c,
		      double *nsec)
{
	double ext[PB_KERNEL_MAXD], rows = 1, all = 1;
	*nsec = 1;
	if (a->rank == 0)
		return 1;
	for (int i = 0; i < a->rank; i++) {
		ext[i] = 1;
		for (int d = 0; d < c->n; d++) {
			int64_t k = a->coef[i][d];
			if (c->lanes[d] <= 1 || k == 0)
				continue;
			/* the lanes of a contiguous thread tile are R
			 * points apart */
			double r = (c->contig >> d) & 1
				? (double)(c->tile[d] / c->block[d]) : 1;
			if (k == INT64_MAX)
				ext[i] *= (double)c->lanes[d];
			else
				ext[i] += (double)(k > 0 ? k : -k) * r *
					  (double)(c->lanes[d] - 1);
		}
		if (ext[i] > (double)a->shape[i])
			ext[i] = (double)a->shape[i];
		all *= ext[i];
		if (i < a->rank - 1)
			rows *= ext[i];
	}
	if (rows > 32)
		rows = 32;
	if (all > 32)
		all = 32;
	double sec = rows * ceil(ext[a->rank - 1] * a->elem / 32.0);
	if (sec > 32)
		sec = 32;
	*nsec = sec;
	double useful = all * a->elem < 32 ? 32 : all * a->elem;
	double w = sec * 32.0 / useful;
	return w < 1 ? 1 : w;
}

/* Global bytes moved per block tile for access "a" under "c" (with the
 * sector waste of uncoalesced accesses when "waste"). */
static double tile_bytes(const struct stats *st, const struct acc *a,
			 const struct pb_tile_choice *c, int waste)
{
	double elems = 1;
	for (int i = 0; i < a->rank; i++) {
		double lo = (double)a->box[i].lo, hi = (double)a->box[i].hi;
		for (int d = 0; d < st->b->n; d++) {
			int64_t k = a->coef[i][d];
			int64_t span = c->tile[d] < st->b->extent[d]
					       ? c->tile[d] : st->b->extent[d];
			if (k == INT64_MAX) {
				lo = 0;
				hi = (double)a->shape[i] - 1;
				break;
			}
			hi += (double)(k > 0 ? k : -k) * (double)(span - 1);
		}
		if (hi > (double)a->shape[i] - 1)
			hi = (double)a->shape[i] - 1;
		if (lo > hi)
			lo = hi;
		elems *= hi - lo + 1;
	}
	double nsec, f = waste ? sectors(a, c, &nsec) : 1;
	return elems * a->elem * f;
}

/* The loads of access "a" that the points of the contiguous thread tile
 * of "c" along band dimension "d" share: R points one apart along a
 * subscript that a window loop of K iterations also moves by one read
 * R + K - 1 elements, not R x K (LLVM keeps the shared ones once the
 * loops unroll); 1 when the tile is not contiguous there. */
static double window_share(const struct acc *a, const struct pb_tile_choice *c,
			   int d)
{
	int64_t r = c->tile[d] / c->block[d];
	if (!((c->contig >> d) & 1) || r < 2)
		return 1;
	for (int i = 0; i < a->rank; i++)
		if (a->coef[i][d] == 1 && a->wtrip[i] > 1)
			return (double)(r * a->wtrip[i]) /
			       (double)(r + a->wtrip[i] - 1);
	return 1;
}

/* Is access "a" the same as an earlier one of "st" (same buffer, same
 * box and coefficients)? Loads and stores of one element count once. */
static int repeated(const struct stats *st, int i)
{
	const struct acc *a = &st->acc[i];
	for (int j = 0; j < i; j++) {
		const struct acc *b = &st->acc[j];
		if (mlirValueEqual(a->mem, b->mem) &&
		    !memcmp(a->box, b->box, sizeof(a->box)) &&
		    !memcmp(a->coef, b->coef, sizeof(a->coef)))
			return 1;
	}
	return 0;
}

/* The n-d shape of the linear tile "c" of band "b" into "eq", for the
 * per-dimension parts of the model: a run of "c->tile[0]" consecutive
 * points (row-major) spans whole inner rows and part of an outer one;
 * a warp's 32 lanes likewise; "eq->block[d] < eq->tile[d]" marks the
 * dimensions along which one thread's points (block[0] apart) vary. */
static void linear_shape(const struct pb_kernel_band *b,
			 const struct pb_tile_choice *c, struct pb_tile_choice *eq)
{
	int64_t t = c->tile[0], l = c->block[0] < 32 ? c->block[0] : 32;
	int64_t stride = 1;
	memset(eq, 0, sizeof(*eq));
	eq->mode = PB_TILE_TILE;
	eq->n = b->n;
	for (int d = b->n - 1; d >= 0; d--) {
		int64_t e = b->extent[d] > 0 ? b->extent[d] : 1;
		eq->tile[d] = t < e ? t : e;
		eq->lanes[d] = l < e ? l : e;
		/* the thread's points step by block[0] points */
		eq->block[d] = stride >= c->tile[0] ? eq->tile[d]
			     : stride * e <= c->block[0] ? eq->tile[d] : 1;
		t = (t + e - 1) / e;
		l = (l + e - 1) / e;
		stride *= e;
	}
}

/* The tile of stageable access "a" per block of "c" (n-d) and k-tile
 * "kt": its elements into "*elems", those of its innermost dimension
 * into "*row"; returns the reads of it per block and k-tile. The box
 * over the whole loop (a->box) shrinks by the loop's coefficient times
 * the iterations left out and grows by each band dimension's times the
 * tile's span, as pb-smem's isl box does (lib/smem/plan.c). */
static double staged_tile(const struct stats *st, const struct acc *a,
			  const struct pb_tile_choice *c, int64_t kt,
			  double *elems, double *row)
{
	double e = 1, points = 1, ext = 1;
	*row = 1;
	for (int i = 0; i < a->rank; i++) {
		int64_t k = a->kcoef[i] < 0 ? -a->kcoef[i] : a->kcoef[i];
		ext = (double)(a->box[i].hi - a->box[i].lo + 1) -
		      (double)k * (double)(st->ktrip - kt);
		for (int d = 0; d < st->b->n; d++) {
			int64_t cd = a->coef[i][d] < 0 ? -a->coef[i][d]
						       : a->coef[i][d];
			int64_t span = c->tile[d] < st->b->extent[d]
					       ? c->tile[d] : st->b->extent[d];
			ext += (double)cd * (double)(span - 1);
		}
		if (ext > (double)a->shape[i])
			ext = (double)a->shape[i];
		if (ext < 1)
			ext = 1;
		e *= ext;
		/* the copies' rows: the innermost dimension of more than
		 * one element (pb-smem copies a 1x1 convolution's weights
		 * [f][c][1][1] along c, lib/smem/plan.c copy_dim) */
		if (a->shape[i] > 1)
			*row = ext;
	}
	for (int d = 0; d < st->b->n; d++)
		points *= (double)(c->tile[d] < st->b->extent[d]
					   ? c->tile[d] : st->b->extent[d]);
	*elems = e;
	return a->weight * (double)kt / (double)st->ktrip * points;
}

/* Is stageable access "i" of "st" staged under "c" at k-tile "kt": read
 * at least twice per element per block (reuse across threads, pb-smem's
 * rule) and not the same tile as an earlier access? Its tile's bytes
 * with a row padding of 16 bytes (pb-smem's usual layout) into
 * "*bytes", and its copy units into "*units". */
static int staged(const struct stats *st, int i,
		  const struct pb_tile_choice *c, int64_t kt, double *bytes,
		  double *units)
{
	const struct acc *a = &st->acc[i];
	double elems, row;
	if (!a->stageable || repeated(st, i))
		return 0;
	double reads = staged_tile(st, a, c, kt, &elems, &row);
	if (reads < 2 * elems)
		return 0;
	double pad = 16.0 / a->elem;
	*bytes = (elems + elems / row * pad) * a->elem;
	*units = elems / (fmod(row, pad) == 0 ? pad : 1);
	return 1;
}

/* The shared memory of one slot of the ring of "c" at k-tile "kt". */
static double ring_bytes(const struct stats *st,
			 const struct pb_tile_choice *c, int64_t kt)
{
	double all = 0, b, u;
	for (int i = 0; i < st->nacc; i++)
		if (staged(st, i, c, kt, &b, &u))
			all += b;
	return all;
}

/* pb_kernel_ring_search's question for a candidate (struct ring_fit). */
struct ring_fit {
	const struct stats *st;
	const struct pb_tile_choice *c;
	const struct pb_target *t;
};

static int ring_fits(void *user, int64_t kt, int stages)
{
	const struct ring_fit *f = user;
	double b = ring_bytes(f->st, f->c, kt);
	if (b <= 0)
		return -1;
	return b * stages + (double)f->c->smem <=
	       (double)f->t->smem_per_block;
}

/* The bytes of the ring of "c" (c->skt > 0: its k-tile and slots)
 * into c->staged_bytes. */
static void ring_size(const struct stats *st, struct pb_tile_choice *c)
{
	c->staged_bytes = c->skt > 0 ? (int64_t)ceil(ring_bytes(st, c, c->skt) *
						     c->sst)
				     : 0;
}

/* Predict "c" for "st" on "t" with the staging c->skt, c->sst says;
 * fills the cost fields of "c". */
static void predict_one(const struct pb_target *t, const struct stats *st,
			struct pb_tile_choice *c)
{
	const struct pb_kernel_band *b = st->b;
	int64_t grid = 1, rt = 1, points = 1;
	struct pb_tile_choice eq;
	const struct pb_tile_choice *g = c; /* per band dimension */
	for (int d = 0; d < b->n; d++) {
		int64_t tile = c->mode == PB_TILE_TILE && !c->linear ? c->tile[d] : 1;
		grid *= (b->extent[d] + tile - 1) / tile;
		points *= b->extent[d];
		if (c->mode == PB_TILE_TILE && !c->linear)
			rt *= c->tile[d] / c->block[d];
	}
	if (c->mode == PB_TILE_TILE && c->linear) {
		grid = (points + c->tile[0] - 1) / c->tile[0];
		rt = c->tile[0] / c->block[0];
		linear_shape(b, c, &eq);
		g = &eq;
	}
	if (c->mode == PB_TILE_NONE) {
		/* pb-codegen's naive mapping: PB_KERNEL_NAIVE_BLOCK threads
		 * per block, one per point */
		c->threads = points < PB_KERNEL_NAIVE_BLOCK
				     ? (int)points : PB_KERNEL_NAIVE_BLOCK;
		if (c->threads < 1)
			c->threads = 1;
		grid = (points + c->threads - 1) / c->threads;
		/* the same shape as a linear tile of as many points */
		struct pb_tile_choice lin = *c;
		lin.mode = PB_TILE_TILE;
		lin.tile[0] = lin.block[0] = c->threads;
		linear_shape(b, &lin, &eq);
		g = &eq;
	}
	int64_t threads = pb_tile_threads(c);
	/* registers: a base, and per point of a jammed thread tile its
	 * accumulator and the index values its subscripts need (a folded
	 * pad's clamps differ from point to point) */
	int regs = 30;
	if (c->mode == PB_TILE_TILE && c->jam) {
		/* a staged window is read unclamped: its subscripts are
		 * the tile's, constant offsets apart from point to point
		 * once unrolled, so a point keeps its accumulator and about
		 * one operand, and the index values are the thread's */
		if (c->skt > 0 && !c->linear && st->index_ops)
			regs += 2 * (int)rt + st->index_ops;
		else
			regs += (int)rt * (1 + st->index_ops);
		for (int d = 0; d < c->n; d++)
			regs += (int)(c->tile[d] / c->block[d]) - 1;
		/* the points of a linear tile are not affine in one another:
		 * each keeps its band indices (floordiv and mod) and an
		 * address per access that moves with the band, two registers
		 * each (indices and addresses are 64-bit) */
		if (c->linear) {
			int moving = 0;
			for (int i = 0; i < st->nacc; i++) {
				int uses = 0;
				for (int k = 0; k < st->acc[i].rank; k++)
					for (int d = 0; d < b->n; d++)
						uses |= st->acc[i].coef[k][d] != 0;
				moving += uses && !repeated(st, i);
			}
			regs += (int)rt * 2 * (b->n + moving);
		}
	}
	c->regs = regs;
	ring_size(st, c);
	struct pb_kernel_resources res = {threads, regs,
					  c->smem + c->staged_bytes};
	struct pb_kernel_occupancy occ;
	pb_kernel_occupancy(t, &res, grid, &occ);
	c->occupancy = occ.occupancy;
	c->waves = occ.waves;
	c->grid = grid;

	/* operations per point, loads shared by jammed points, but only in
	 * a full tile: a partial tile's points are each guarded (map.c), and
	 * pb-smem unrolls no guarded k-tile; staged reads are shared-memory
	 * loads (one issue, not "mem_cycles") */
	double ops = st->ops, mem = st->mem, full = 1;
	int ring[MAXACC] = {0};
	if (c->mode == PB_TILE_TILE) {
		/* the fraction of blocks that are full tiles */
		double all = 1, whole = 1;
		for (int d = 0; d < c->n; d++) {
			int64_t e = c->linear ? points : b->extent[d];
			all *= (double)((e + c->tile[d] - 1) / c->tile[d]);
			whole *= (double)(e / c->tile[d]);
		}
		full = whole / all;
	}
	if (c->skt > 0) {
		for (int i = 0; i < st->nacc; i++) {
			double by, units;
			if (!staged(st, i, c, c->skt, &by, &units))
				continue;
			/* the copies: per unit a load and a store (one
			 * cp.async), the copy loop's step, the unit's
			 * address (a floordiv, a mod and a multiply-add per
			 * dimension of the tile; about 10 instructions per
			 * 16x256 unit in the SASS of a staged GEMM), shared
			 * by the block's points once per k-tile */
			ring[i] = 1;
			ops += (double)(st->ktrip / c->skt) * units *
			       (4.0 + 3.0 * st->acc[i].rank) /
			       ((double)threads * (double)rt);
		}
		/* a staged window reads its tile unclamped: no guard */
		ops -= st->guard_ops;
		/* per k-tile and thread: the barrier, the wait for and the
		 * commit of the copies, the slot's arithmetic (about 32
		 * issue slots, shared by the thread's points); a ring of S
		 * slots not a power of 2 takes its read and write slots,
		 * (kk floordiv KT) mod S and (kk floordiv KT + S - 1) mod S,
		 * by a multiply-shift division each (about 9 instructions
		 * each, and 64-bit: the 1x1 convolution's loop in the SASS
		 * had 71 integer instructions with 3 slots, 53 with 2 or 4) */
		double slot = (c->sst & (c->sst - 1)) ? 18.0 : 0.0;
		ops += (double)(st->ktrip / c->skt) * (32.0 + slot) /
		       (double)rt;
		for (int i = 0; i < st->nacc; i++) /* the same tile */
			for (int j = 0; j < i && !ring[i]; j++)
				ring[i] = ring[j] && st->acc[i].stageable &&
					  mlirValueEqual(st->acc[i].mem,
							 st->acc[j].mem);
	}
	double lds = 0; /* shared-memory wavefronts per point */
	double ldsn = 0; /* shared-memory loads per point */
	for (int i = 0; i < st->nacc; i++) {
		const struct acc *a = &st->acc[i];
		double shared = 1;
		int lanes = 0; /* does it vary across a warp's lanes? */
		if (c->mode == PB_TILE_TILE && c->jam) {
			for (int d = 0; d < b->n; d++) {
				int uses = 0;
				for (int k = 0; k < a->rank; k++)
					uses |= a->coef[k][d] != 0;
				if (!uses && !c->linear)
					shared *= (double)(c->tile[d] / c->block[d]);
				else if (uses && c->linear &&
					 g->block[d] < g->tile[d])
					shared = -1; /* varies in the thread */
				else if (uses && !c->linear)
					shared *= window_share(a, c, d);
			}
			if (c->linear)
				shared = shared < 0 ? 1 : (double)rt;
		}
		for (int d = 0; d < g->n; d++)
			for (int k = 0; k < a->rank; k++)
				lanes |= g->lanes[d] > 1 && a->coef[k][d] != 0;
		/* pb-smem unrolls a k-tile loop that holds no other loop,
		 * and its layouts then read a staged tile 16 bytes at a time
		 * along the reduction (lib/smem/plan.c, read_width) */
		double vec = 1;
		if (ring[i] && !st->kinner && c->skt % (16 / a->elem) == 0)
			vec = 16.0 / a->elem;
		double w = a->weight * (full / (shared * vec) +
					(1.0 - full));
		ops -= a->weight - w;
		mem -= ring[i] ? a->weight : a->weight - w;
		/* a shared-memory read takes the pipe one wavefront per
		 * 32-bit word of a lane (a warp-wide broadcast: one) */
		if (ring[i]) {
			lds += w * (lanes ? vec : 1);
			ldsn += w;
		}
	}
	/* a warp's access to more than 4 sectors (128 bytes) takes one
	 * more pass of the load/store unit per 4 sectors */
	if (c->mode != PB_TILE_REDUCE)
		for (int i = 0; i < st->nacc; i++) {
			double nsec;
			if (ring[i])
				continue;
			sectors(&st->acc[i], g, &nsec);
			if (nsec > 4) {
				ops += st->acc[i].weight * (ceil(nsec / 4) - 1);
				mem += st->acc[i].weight * (ceil(nsec / 4) - 1);
			}
		}
	/* the index arithmetic of inner loops, once per thread */
	if (c->mode == PB_TILE_TILE && c->jam && !c->linear)
		ops -= st->apply_ops * (1.0 - 1.0 / (double)rt);
	/* a global access issues as "mem_cycles" arithmetic operations */
	ops += (t->model.mem_cycles - 1.0) * mem;
	double lanes = t->fp32_flops / (2.0 * t->sm_count * t->clock_hz);
	/* latency is hidden by resident warps times the independent
	 * chains of each thread: the points of a jammed thread tile (the
	 * four an FMA's latency needs at most) */
	double ilp = c->mode == PB_TILE_TILE && c->jam ? (double)rt : 1;
	double hide = c->occupancy * (ilp < 4 ? ilp : 4) /
		      t->model.hiding_occupancy;
	if (hide > 1)
		hide = 1;
	double per_sm_blocks = occ.wave_blocks;
	double compute = c->waves * per_sm_blocks * (double)threads *
			 (double)rt * ops / (lanes * hide) / t->clock_hz;
	/* no thread finishes faster than its own chain of operations; the
	 * points of a jammed thread tile are independent chains that
	 * interleave, so it then issues one operation per cycle at best */
	double cyc = t->model.chain_cycles;
	double chain = c->waves * (double)rt * ops * cyc / t->clock_hz;
	if (c->mode == PB_TILE_TILE && c->jam) {
		double one = ops * cyc, issue = (double)rt * ops;
		chain = c->waves * (one > issue ? one : issue) / t->clock_hz;
	}
	if (c->mode == PB_TILE_REDUCE) {
		/* the band point's work shared by the block's threads, plus
		 * the tree: log2(threads) barrier steps per reduction */
		compute = c->waves * per_sm_blocks * ops / (lanes * hide) /
			  t->clock_hz;
		compute += c->waves * log2((double)threads) *
			   t->model.tree_step_cycles / t->clock_hz;
		chain = c->waves * ops / (double)threads * cyc /
			t->clock_hz;
	} else if (c->mode == PB_TILE_NONE) {
		/* pb-codegen's naive mapping: one thread per point */
		compute = c->waves * per_sm_blocks * (double)threads * ops /
			  (lanes * hide) / t->clock_hz;
	}
	/* a ring of one slot copies synchronously: every k-tile waits for
	 * its copy's global round trip, which no other k-tile's work hides
	 * within the block */
	if (c->skt > 0 && c->sst == 1)
		chain += c->waves * (double)(st->ktrip / c->skt) *
			 GLOBAL_LATENCY_CYCLES / t->clock_hz;
	if (chain > compute)
		compute = chain;
	/* the shared-memory pipe serves one wavefront (32 words) per cycle
	 * and SM, a quarter of the FP32 lanes' rate: a tile whose points
	 * each read a staged operand per FMA is bound by it */
	double pipe = c->waves * per_sm_blocks * (double)threads / 32.0 *
		      (double)rt * lds / t->clock_hz;
	if (c->mode == PB_TILE_TILE && pipe > compute)
		compute = pipe;

	double unique = 0, moved = 0;
	for (int i = 0; i < st->nacc; i++) {
		const struct acc *a = &st->acc[i];
		if (repeated(st, i))
			continue;
		double whole = a->elem;
		for (int k = 0; k < a->rank; k++)
			whole *= (double)a->shape[k];
		struct pb_tile_choice one = *g;
		if (c->mode == PB_TILE_REDUCE) {
			/* a block per band point */
			one.mode = PB_TILE_TILE;
			one.n = b->n;
			for (int d = 0; d < b->n; d++) {
				one.tile[d] = 1;
				one.block[d] = 1;
				one.lanes[d] = 1;
			}
		}
		/* a staged tile is copied by consecutive threads, coalesced
		 * whatever the computing lanes' pattern */
		double tb = tile_bytes(st, a, &one, !ring[i]) * (double)grid;
		double tb0 = tile_bytes(st, a, &one, 0) * (double)grid;
		/* uncoalesced lanes waste DRAM sectors too, unless the
		 * sector's other elements are read while still in L2 */
		unique += (tb0 < whole ? tb0 : whole) * (tb0 > 0 ? sqrt(tb / tb0) : 1);
		moved += tb;
	}
	c->global_bytes = (int64_t)unique;
	c->flops = (int64_t)(st->flops * (double)grid *
			     (c->mode == PB_TILE_TILE ? (double)threads * rt : 1));
	if (c->mode != PB_TILE_TILE || c->linear) {
		double pts = 1;
		for (int d = 0; d < b->n; d++)
			pts *= (double)b->extent[d];
		c->flops = (int64_t)(st->flops * pts);
	}
	double memory = unique / (t->dram_bytes_per_s * t->model.dram_efficiency);
	double l2 = moved / (t->dram_bytes_per_s * t->model.l2_over_dram);
	if (l2 > memory)
		memory = l2;
	c->compute_s = compute;
	c->memory_s = memory;
	c->lds_per_fma = st->flops > 0 ? ldsn / (st->flops / 2.0) : 0;
	c->predicted_s = t->launch_s + (compute > memory ? compute : memory);
}

/* Predict "c" for "st" on "t" with the staging pb-smem will do: for a
 * tile (n-d, not linear) with reads worth staging, the ring of
 * pb_kernel_ring_search (the k-tile and slots pb-smem takes by default, or
 * those --sizes' smem[KT, S] forces) and, when not forced, the smaller
 * rings (fewer slots, smaller k-tiles down to 4) that cost less shared
 * memory and so less occupancy: the fastest prediction sets c->skt and
 * c->sst, which pb-tile hands to pb-smem (pb.smem). */
static void predict(const struct pb_target *t, const struct stats *st,
		    struct pb_tile_choice *c)
{
	struct ring_fit f = {st, c, t};
	int64_t want = c->sgiven ? c->skt : 0, kt;
	int wants = c->sgiven ? c->sst : 0, ns;
	if (c->mode != PB_TILE_TILE || c->linear || !st->nstageable ||
	    want < 0 || !pb_kernel_ring_search(t, st->ktrip, want, wants,
					     ring_fits, &f, &kt, &ns)) {
		if (!c->sgiven)
			c->skt = c->mode == PB_TILE_TILE && !c->linear &&
					 st->several ? -1 : 0;
		if (c->skt > 0)
			c->skt = 0; /* forced, but nothing to stage */
		predict_one(t, st, c);
		return;
	}
	c->skt = kt;
	c->sst = ns;
	predict_one(t, st, c);
	if (c->sgiven)
		return;
	struct pb_tile_choice best = *c;
	/* the smaller rings: k-tiles down to 4, each with the slots its
	 * k-tiles allow (at most pb-smem's, or 4 where cp.async gives a
	 * ring: a power of 2 whose slot arithmetic is a mask, tried before
	 * 2 so that at an equal prediction the deeper ring stays), two at
	 * least where cp.async gives a ring; one slot is pb-smem's choice
	 * only when no ring fits */
	int async = pb_kernel_async(t);
	for (int64_t k = kt; k >= 4; k /= 2) {
		int64_t tiles = st->ktrip / k;
		int top = async ? 4 : 1;
		if (st->ktrip % k || ring_bytes(st, c, k) <= 0)
			continue;
		for (int s = top < tiles ? top : (int)tiles;
		     s >= (async && tiles > 1 ? 2 : 1); s--) {
			struct pb_tile_choice o = *c;
			if ((s == ns && k == kt) || !ring_fits(&f, k, s))
				continue;
			o.skt = k;
			o.sst = s;
			predict_one(t, st, &o);
			/* at an equal prediction, a ring over synchronous
			 * copies: its copies overlap the work; and, when the
			 * k-tile loop is the innermost (no window inside,
			 * where the slot's divisions would sit in the loop
			 * around the hot one), slots a power of 2 over 3: a
			 * memory-bound nest hides the divisions in the
			 * prediction, not in the issue slots */
			int tie = o.predicted_s <= best.predicted_s * 1.001;
			if (o.predicted_s < best.predicted_s * 0.999 ||
			    (o.sst > 1 && best.sst == 1 && tie) ||
			    (!st->kinner && o.sst > 1 &&
			     !(o.sst & (o.sst - 1)) &&
			     (best.sst & (best.sst - 1)) && tie))
				best = o;
		}
	}
	*c = best;
}

void pb_tile_predict(const struct pb_target *t, const struct pb_kernel_band *b,
		     struct pb_tile_choice *c)
{
	struct stats *st = malloc(sizeof(*st));
	if (!st)
		abort();
	stats_of(b, st);
	predict(t, st, c);
	free(st);
}

/* Split the threads of "c" into warps: lanes from the innermost
 * dimension outwards, 32 in all (or all the block's threads). */
static void warp_lanes(struct pb_tile_choice *c)
{
	int64_t left = 32;
	for (int d = c->n - 1; d >= 0; d--) {
		int64_t l = c->block[d] < left ? c->block[d] : left;
		while (l > 1 && (c->block[d] % l || left % l))
			l--;
		c->lanes[d] = l < 1 ? 1 : l;
		left /= c->lanes[d];
	}
}

/* Consider the mapping "c" (tile, block, jam set) for "st": keep it in
 * "best" when it is predicted faster. */
static void consider(const struct pb_target *t, const struct stats *st,
		     struct pb_tile_choice *c, struct pb_tile_choice *best)
{
	if (pb_tile_threads(c) > t->max_threads_per_block)
		return;
	warp_lanes(c);
	predict(t, st, c);
	if (!pb_kernel_regs_fit(t, c->regs))
		return;
	/* within 2% a staged tile wins over one that is not: the model
	 * prices a global and a shared load alike (mem_cycles 1 unless
	 * fitted), but the staged one is served by shared memory, not by
	 * L1 and the load path, and its copies hide their latency */
	if ((c->predicted_s < best->predicted_s * 0.999 &&
	     (c->skt > 0 || best->skt <= 0 ||
	      c->predicted_s < best->predicted_s * 0.98)) ||
	    (c->skt > 0 && best->skt <= 0 &&
	     c->predicted_s <= best->predicted_s * 1.02))
		*best = *c;
	/* at an equal prediction (a memory-bound nest), the staged tile
	 * that issues a tenth fewer instructions: the same bytes, fewer
	 * of its issue slots on loads and bookkeeping */
	else if (c->skt > 0 && best->skt > 0 &&
		 c->predicted_s <= best->predicted_s * 1.001 &&
		 c->compute_s < best->compute_s * 0.9)
		*best = *c;
}

/* One candidate: "nt" threads per block spread from the innermost
 * dimension outwards with "x" threads on the innermost and, when "y" is
 * positive, "y" on the one outside it (the rest outwards from there;
 * otherwise as many as its extent takes), thread tiles "r[d]" per
 * dimension (NULL: none), contiguous along the dimensions of "contig". */
static void candidate(const struct pb_target *t, const struct stats *st,
		      int64_t nt, int64_t x, int64_t y, const int64_t *r,
		      unsigned contig, struct pb_tile_choice *best)
{
	const struct pb_kernel_band *b = st->b;
	struct pb_tile_choice c;
	int n = b->n;
	int64_t left = nt;
	memset(&c, 0, sizeof(c));
	c.mode = PB_TILE_TILE;
	c.n = n;
	if (x > pb_tile_pow2ceil(b->extent[n - 1]))
		return;
	if (y > 0 && (n < 3 || y > pb_tile_pow2ceil(b->extent[n - 2]) ||
		      x * y > nt))
		return;
	for (int d = n - 1; d >= 0; d--) {
		int64_t want = d == n - 1 ? x
			     : d == n - 2 && y > 0 ? y
			     : pb_tile_pow2ceil(b->extent[d]);
		int64_t bd = want < left ? want : left;
		int64_t rd = r ? r[d] : 1;
		c.block[d] = bd;
		left /= bd;
		c.tile[d] = bd * rd;
		c.jam |= rd > 1;
		if (rd > 1 && c.tile[d] > b->extent[d])
			return; /* a thread tile past the whole dimension */
	}
	if (left > 1 && nt > 32)
		return; /* fewer points than threads: one warp at most */
	c.contig = contig;
	consider(t, st, &c, best);
}

/* The candidate of "nt" threads ("x" on the innermost dimension, "y"
 * outside it when positive) with thread tiles "ra" on dimension "da",
 * "rb" on "db" and "rc" on "dc" (-1: none). */
static void candidate3(const struct pb_target *t, const struct stats *st,
		       int64_t nt, int64_t x, int64_t y, int da, int64_t ra,
		       int db, int64_t rb, int dc, int64_t rc, unsigned contig,
		       struct pb_tile_choice *best)
{
	int64_t r[PB_TILE_MAXD];
	for (int d = 0; d < st->b->n; d++)
		r[d] = d == da ? ra : d == db ? rb : d == dc ? rc : 1;
	candidate(t, st, nt, x, y, r, contig, best);
}

/* The linear candidates of a band of two or more dimensions: "nt"
 * threads, thread tiles of 1, 2, 4 or 8 consecutive-by-"nt" points. */
static void linear(const struct pb_target *t, const struct stats *st,
		   int64_t nt, struct pb_tile_choice *best)
{
	static const int64_t rs[] = {1, 2, 4, 8};
	int64_t points = 1;
	for (int d = 0; d < st->b->n; d++)
		points *= st->b->extent[d];
	for (unsigned i = 0; i < 4; i++) {
		struct pb_tile_choice c;
		if (st->b->n < 2 || (rs[i] > 1 && nt * rs[i] > points) ||
		    (nt > points && nt > 32))
			return;
		memset(&c, 0, sizeof(c));
		c.mode = PB_TILE_TILE;
		c.linear = 1;
		c.n = 1;
		c.block[0] = nt;
		c.tile[0] = nt * rs[i];
		c.jam = st->jammable && rs[i] > 1;
		consider(t, st, &c, best);
	}
}

/* 256 first: among equal predictions, the common block size wins */
static const int64_t nts[] = {256, 128, 512, 64, 32};
#define NNTS (sizeof(nts) / sizeof(*nts))
static const int64_t rs[] = {2, 4, 8};
#define NRS (sizeof(rs) / sizeof(*rs))
/* contiguous thread tiles on the innermost dimension: also 7 and 14
 * (ResNet's 56, 28, 14 and 7 maps) */
static const int64_t cs[] = {2, 4, 7, 8, 14};
#define NCS (sizeof(cs) / sizeof(*cs))

/* The candidates of "nt" threads, "x" on the innermost dimension and
 * "y" on the one outside it (tiles(), second pass): a contiguous thread
 * tile of the innermost dimension alone, with a tile of 2, 4 or 8 on
 * one other dimension or on two; and thread tiles of 2, 4 or 8 on two
 * dimensions. */
static void split(const struct pb_target *t, const struct stats *st,
		  int64_t nt, int64_t x, int64_t y, struct pb_tile_choice *best)
{
	int n = st->b->n;
	unsigned in = 1u << (n - 1);
	for (unsigned k = 0; k < NCS; k++) {
		candidate3(t, st, nt, x, y, n - 1, cs[k], -1, 1, -1, 1, in,
			   best);
		for (int da = 0; da < n - 1; da++)
			for (unsigned a = 0; a < NRS; a++) {
				candidate3(t, st, nt, x, y, da, rs[a], n - 1,
					   cs[k], -1, 1, in, best);
				for (int db = da + 1; db < n - 1; db++)
					for (unsigned c = 0; c < NRS; c++)
						candidate3(t, st, nt, x, y, da,
							   rs[a], db, rs[c],
							   n - 1, cs[k], in,
							   best);
			}
	}
	for (int da = 0; da < n; da++)
		for (unsigned a = 0; a < NRS; a++)
			for (int db = da + 1; db < n; db++)
				for (unsigned c = 0; c < NRS; c++)
					candidate3(t, st, nt, x, y, da, rs[a],
						   db, rs[c], -1, 1, 0, best);
}

/* The tile candidates: 256, 128, 512, 64 or 32 threads per block with any
 * power of 2 of them on the innermost dimension, and, when the body jams,
 * thread tiles of 2, 4 or 8 on one or two dimensions (on a conv's output
 * channels they share the input's loads, on its width the weights').
 *
 * Then, for bands of three or more dimensions whose body jams and whose
 * reduction loop holds no other loop (a 1x1 convolution: per k step a
 * point reads one weight and one pixel, so a thread's operands are
 * reused only across its own points), the shapes that reuse them from
 * registers along all of the convolution's output dimensions at once: the threads split between the innermost
 * dimension and the one outside it in every way (a conv's rows and
 * channels both get threads, "block[2, 4, 4]"), and contiguous thread
 * tiles of the innermost dimension with tiles of 2, 4 or 8 on two other
 * dimensions (8 output channels x 2 rows x 2 columns: per input channel
 * two 128-bit reads of weights and two 64-bit reads of pixels for 32
 * FMAs). They come after the shapes above, so they win only where
 * predicted faster. */
static void tiles(const struct pb_target *t, const struct stats *st,
		  struct pb_tile_choice *best)
{
	int n = st->b->n;
	unsigned in = 1u << (n - 1);
	for (unsigned i = 0; i < NNTS; i++)
		linear(t, st, nts[i], best);
	for (unsigned i = 0; i < NNTS; i++)
		for (int64_t x = 1; x <= nts[i]; x *= 2) {
			candidate(t, st, nts[i], x, 0, NULL, 0, best);
			if (!st->jammable)
				continue;
			for (int da = 0; da < n; da++)
				for (unsigned a = 0; a < NRS; a++) {
					candidate3(t, st, nts[i], x, 0, da, rs[a],
						   -1, 1, -1, 1, 0, best);
					for (int db = da + 1; db < n; db++)
						for (unsigned c = 0; c < NRS; c++)
							candidate3(t, st, nts[i], x, 0,
								   da, rs[a], db,
								   rs[c], -1, 1, 0,
								   best);
				}
			/* a contiguous tile of the innermost dimension, with
			 * or without a tile of another */
			for (unsigned k = 0; k < NCS; k++) {
				candidate3(t, st, nts[i], x, 0, n - 1, cs[k], -1,
					   1, -1, 1, in, best);
				for (int da = 0; da < n - 1; da++)
					for (unsigned a = 0; a < NRS; a++)
						candidate3(t, st, nts[i], x, 0, da,
							   rs[a], n - 1, cs[k], -1,
							   1, in, best);
			}
		}
	if (n < 3 || !st->jammable || st->kinner)
		return;
	for (unsigned i = 0; i < NNTS; i++)
		for (int64_t x = 1; x <= nts[i]; x *= 2)
			for (int64_t y = 1; x * y <= nts[i]; y *= 2)
				split(t, st, nts[i], x, y, best);
}

void pb_tile_choose(const struct pb_target *t, const struct pb_kernel_band *b,
		    unsigned allow, struct pb_tile_choice *c)
{
	struct stats *st = malloc(sizeof(*st));
	struct pb_tile_choice best;
	if (!st)
		abort();
	stats_of(b, st);
	memset(&best, 0, sizeof(best));
	best.n = b->n;
	best.mode = PB_TILE_NONE;
	predict(t, st, &best);
	struct pb_tile_choice none = best;
	best.predicted_s = INFINITY;
	if (allow & (1u << PB_TILE_TILE))
		tiles(t, st, &best);
	if (allow & (1u << PB_TILE_REDUCE))
		for (int64_t th = 32; th <= 1024 && th <= t->max_threads_per_block;
		     th *= 2) {
			int64_t work = 0, smem = 0;
			if (!pb_tile_reduce_match(b, (int)th, &work, &smem) ||
			    smem > t->smem_per_block)
				break;
			if (work < th * 2 && th > 32)
				break;
			struct pb_tile_choice r;
			memset(&r, 0, sizeof(r));
			r.mode = PB_TILE_REDUCE;
			r.n = b->n;
			r.threads = (int)th;
			r.smem = smem;
			predict(t, st, &r);
			if (r.predicted_s < best.predicted_s * 0.999)
				best = r;
		}
	/* the naive mapping, when allowed, only where it is predicted
	 * faster: at a tie pb-tile's own mapping wins */
	if (best.mode == PB_TILE_NONE ||
	    ((allow & (1u << PB_TILE_NONE)) &&
	     none.predicted_s < best.predicted_s * 0.999))
		best = none;
	*c = best;
	free(st);
}

int pb_tile_complete(struct pb_ctx *ctx, const struct pb_target *t,
		     const struct pb_kernel_band *b, struct pb_tile_choice *c)
{
	MlirLocation loc = mlirOperationGetLocation(b->root);
	if (c->mode == PB_TILE_REDUCE) {
		int64_t work, smem;
		if (c->threads < 32 || c->threads > t->max_threads_per_block ||
		    (c->threads & (c->threads - 1))) {
			pb_error_at(ctx, loc, "--sizes: reduce[%d] must be a power "
				    "of 2 from 32 to %d", c->threads,
				    t->max_threads_per_block);
			return PB_ERR;
		}
		if (!pb_tile_reduce_match(b, c->threads, &work, &smem)) {
			pb_error_at(ctx, loc, "--sizes: this nest cannot be mapped "
				    "as a block-level reduction");
			return PB_ERR;
		}
		c->smem = smem;
		pb_tile_predict(t, b, c);
		return PB_OK;
	}
	if (c->mode != PB_TILE_TILE)
		return PB_OK;
	for (int d = 0; d < c->n; d++) {
		if (c->tile[d] < 1 || c->block[d] < 1 ||
		    c->tile[d] % c->block[d]) {
			pb_error_at(ctx, loc, "--sizes: tile size %lld of "
				    "dimension %d is not a positive multiple of "
				    "its block size %lld", (long long)c->tile[d],
				    d, (long long)c->block[d]);
			return PB_ERR;
		}
	}
	if (pb_tile_threads(c) > t->max_threads_per_block) {
		pb_error_at(ctx, loc, "--sizes: %lld threads per block exceed "
			    "the target's %d", (long long)pb_tile_threads(c),
			    t->max_threads_per_block);
		return PB_ERR;
	}
	int jam = 0;
	for (int d = 0; d < c->n; d++)
		jam |= c->tile[d] > c->block[d];
	int jams = jam && pb_tile_jam_ok(b);
	if (c->jam < 0)
		c->jam = jams;
	else if (!jam)
		c->jam = 0; /* one point per thread: nothing to jam */
	if (c->jam && !jams) {
		pb_error_at(ctx, loc, "--sizes: jam[1]: the body of this nest "
			    "cannot be jammed (see docs/pb-tile.md)");
		return PB_ERR;
	}
	warp_lanes(c);
	pb_tile_predict(t, b, c);
	return PB_OK;
}
