/* Block-level mapping of the work below a band: parallel reductions.
 *
 * A nest whose band is small and whose body holds much work in inner loops
 * (softmax and LayerNorm rows, global pooling windows) runs one block per
 * band point. Each top-level operation of the band's body becomes one of
 *
 *   - block-level code: an allocation private to the band point (it moves
 *     to workgroup memory), or pure arithmetic and loads from buffers the
 *     body never writes, on values defined outside the body or by other
 *     block-level code (constants, index computations, a bias; every
 *     thread computes it);
 *   - a parallel nest: its outermost loops with constant bounds (as many
 *     as carry no dependence, linearized) are distributed cyclically over
 *     the threads;
 *   - a reduction nest: a perfect nest of loops with constant bounds whose
 *     straight-line body updates accumulators acc = op(acc, x) (or
 *     acc = c ? op(acc, x) : acc) at locations invariant in the nest;
 *     each thread reduces its cyclic share of the (linearized) iterations
 *     into its own element of a workgroup buffer of partials starting at
 *     op's identity, a tree in shared memory (log2(threads) steps)
 *     combines the partials, and one thread folds the result into the
 *     accumulator;
 *   - scalar work: anything else (loads and stores outside loops, nests
 *     that are neither of the above), run by one thread; consecutive
 *     scalar operations share one thread loop.
 *
 * Every step is a sibling affine.parallel {pb.map = "thread"}, separated
 * from the previous one by gpu.barrier (but between two loops of one
 * thread, which pb-codegen runs on the same thread), inside one n-d
 * affine.parallel {pb.map = "block"} over the band:
 *
 *	affine.parallel (band) {pb.map = "block"}
 *	  |  memref.alloc (workgroup): former allocas, partials
 *	  |  thread(1) { scalar work }
 *	  |  gpu.barrier
 *	  |  thread(P) { part[t] = id; for l = t to N step P { body } }
 *	  |  gpu.barrier
 *	  |  thread(P/2) { part[t] = op(part[t], part[t + P/2]) }
 *	  |  ... gpu.barrier
 *	  |  thread(1) { part[0] = op(part[0], part[1]) }
 *	  |  thread(1) { acc = op(acc, part[0]) }
 *	  |  gpu.barrier
 *	  |  thread(P') { for l = t to N' step P' { parallel body } }
 *	  |  memref.dealloc (workgroup)
 *
 * Run one after another on the CPU, the sibling loops compute what the
 * original body computed, up to the reassociation of the reductions.
 *
 * What is proven, and how: a nest is parallel over its outermost "d"
 * loops when no two distinct iterations of these loops access the same
 * element of a buffer with one of the accesses a write. This is checked
 * with isl on access relations K[k0, ..., kd-1] -> B[...] built here for
 * every load and store in the nest (at any depth): values defined outside
 * the nest (band counters, block-level index arithmetic) are parameters
 * (the check holds for all their values), counters of inner loops and
 * other values defined in the nest are existentially quantified
 * (unconstrained), subscripts that are not affine and accesses through
 * views that do not compose give the whole buffer. Buffers allocated in
 * the nest are private to an iteration and ignored. Distinct root buffers
 * (allocations, function arguments) are assumed not to alias, as lib/poly
 * assumes. A reduction nest is parallel in this sense once the
 * accumulator updates are taken out, and each accumulator location is
 * accessed in the nest by its one load -> op -> store chain only (no
 * other access to its root buffer), so the only dependence the nest
 * carries is the one through op, which is associative and commutative. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <isl/aff.h>
#include <isl/ctx.h>
#include <isl/id.h>
#include <isl/local_space.h>
#include <isl/map.h>
#include <isl/options.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/val.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "poly/internal.h"
#include "tile/internal.h"

#define MAXACC 8    /* accumulators of one reduction nest */
#define MAXPAR 32   /* parameters of one nest's access relations */
#define MAXROOT 64  /* buffers accessed by one nest */
#define MAXSUB 16   /* subscripts of one access */

/* The identity of a reduction operation. */
enum ident { ID_ZERO, ID_ONE, ID_NEG_INF, ID_POS_INF, ID_SMIN, ID_SMAX,
	     ID_ONES };

/* A reduction operation: associative and commutative, with an identity. */
struct red_op {
	const char *name;
	int is_float;
	enum ident id;
};

static const struct red_op red_ops[] = {
	{"arith.addf", 1, ID_ZERO},	{"arith.mulf", 1, ID_ONE},
	{"arith.maximumf", 1, ID_NEG_INF}, {"arith.minimumf", 1, ID_POS_INF},
	{"arith.maxnumf", 1, ID_NEG_INF}, {"arith.minnumf", 1, ID_POS_INF},
	{"arith.addi", 0, ID_ZERO},	{"arith.muli", 0, ID_ONE},
	{"arith.maxsi", 0, ID_SMIN},	{"arith.minsi", 0, ID_SMAX},
	{"arith.maxui", 0, ID_ZERO},	{"arith.minui", 0, ID_ONES},
	{"arith.andi", 0, ID_ONES},	{"arith.ori", 0, ID_ZERO},
	{"arith.xori", 0, ID_ZERO},	{NULL, 0, ID_ZERO},
};

/* What a top-level operation of the band's body becomes. */
enum kind {
	K_KEEP,	  /* block-level: pure arithmetic, read-only loads */
	K_ALLOCA, /* private buffer: moves to workgroup memory */
	K_SCALAR, /* one thread */
	K_PAR,	  /* parallel nest */
	K_RED,	  /* reduction nest */
};

/* An accumulator of a reduction nest: the chain load -> comb -> store. */
struct acc {
	MlirOperation load, comb, store;
	const struct red_op *r;
	MlirType type;
};

/* The plan for one top-level operation "op". */
struct step {
	enum kind kind;
	MlirOperation op;
	int run; /* K_SCALAR: the index of its run of scalar operations */
	/* K_PAR, K_RED: the "d" outermost loops are distributed */
	int d;
	MlirOperation loop[PB_TILE_MAXD];
	int64_t lb[PB_TILE_MAXD], step[PB_TILE_MAXD], trip[PB_TILE_MAXD];
	int64_t n;     /* iterations of the distributed loops */
	int64_t nthr;  /* threads of the step */
	int nacc;      /* K_RED */
	struct acc acc[MAXACC];
};

/* The plan for a whole band body. */
struct plan {
	int n;
	struct step *s;
	int64_t work, smem;
};

/* The isl model of the accesses of one nest over its "d" outermost
 * loops. */
struct model {
	isl_ctx *ctx;
	MlirOperation nest;
	const struct step *st;
	int d;
	int np;
	MlirValue par[MAXPAR];
	int nroot;
	MlirValue root[MAXROOT];
	isl_space *dom; /* K[k0, ..., k<d-1>] with the parameters */
	isl_set *domain;
};

/* One access relation of a nest. */
struct rel {
	MlirOperation op;
	int write;
	int root;
	isl_map *map;
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

/* Is "op" a load or a store; "*mem" gets the position of its memref
 * operand (its subscripts follow it). */
static int is_access(MlirOperation op, int *mem, int *write)
{
	if (pb_ir_op_is(op, "affine.load") || pb_ir_op_is(op, "memref.load")) {
		*mem = 0;
		*write = 0;
		return 1;
	}
	if (pb_ir_op_is(op, "affine.store") || pb_ir_op_is(op, "memref.store")) {
		*mem = 1;
		*write = 1;
		return 1;
	}
	return 0;
}

/* Is "v" defined in "op" (by an operation in it, or as an argument of one
 * of its blocks)? */
static int defined_in(MlirValue v, MlirOperation op)
{
	return pb_ir_is_inside(pb_ir_value_parent(v), op);
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

/* Append the identity of "r" on type "t" as an arith.constant value to
 * "out" ("0.000000e+00 : f32"). */
static void ident_text(struct pb_buf *out, const struct red_op *r, MlirType t)
{
	if (r->is_float) {
		int w = (int)mlirFloatTypeGetWidth(t);
		int bf = mlirTypeIsABF16(t);
		const char *neg = w == 64 ? "0xFFF0000000000000"
				  : w == 32 ? "0xFF800000"
				  : bf	    ? "0xFF80"
					    : "0xFC00";
		const char *pos = w == 64 ? "0x7FF0000000000000"
				  : w == 32 ? "0x7F800000"
				  : bf	    ? "0x7F80"
					    : "0x7C00";
		pb_buf_puts(out, r->id == ID_ZERO     ? "0.000000e+00"
				 : r->id == ID_ONE    ? "1.000000e+00"
				 : r->id == ID_NEG_INF ? neg
						       : pos);
	} else {
		unsigned w = mlirIntegerTypeGetWidth(t);
		switch (r->id) {
		case ID_ONE:
			pb_buf_puts(out, "1");
			break;
		case ID_SMIN:
			if (w == 64)
				pb_buf_puts(out, "-9223372036854775808");
			else
				pb_buf_printf(out, "%lld", -(1LL << (w - 1)));
			break;
		case ID_SMAX:
			pb_buf_printf(out, "%lld",
				      (long long)((1ULL << (w - 1)) - 1));
			break;
		case ID_ONES:
			pb_buf_puts(out, "-1");
			break;
		default:
			pb_buf_puts(out, "0");
		}
	}
	pb_buf_puts(out, " : ");
	pb_ir_type_print(t, out);
}

/* The reduction operation named like "op", or NULL. */
static const struct red_op *red_op_of(MlirOperation op)
{
	for (const struct red_op *r = red_ops; r->name; r++)
		if (pb_ir_op_is(op, r->name))
			return r;
	return NULL;
}

/* Is "op" allowed in a nest that is distributed over threads: loops,
 * conditionals, accesses, private allocations, views and arithmetic? */
static int nest_op_ok(MlirOperation op)
{
	int mem, w;
	if (is_pure(op) || is_access(op, &mem, &w) || pb_poly_is_view(op))
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
		if (!is_access(o, &mem, &w) ||
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

/* The integer constant "v" holds into "*c"; 0 when it holds one. */
static int const_index(MlirValue v, int64_t *c)
{
	if (!mlirValueIsAOpResult(v))
		return -1;
	MlirOperation def = mlirOpResultGetOwner(v);
	MlirAttribute a = pb_ir_attr(def, "value");
	if (!(pb_ir_op_is(def, "arith.constant") ||
	      pb_ir_op_is(def, "index.constant")) ||
	    mlirAttributeIsNull(a) || !mlirAttributeIsAInteger(a))
		return -1;
	*c = mlirIntegerAttrGetValueInt(a);
	return 0;
}

/* The index of "v" in the "n" values "l", appending it when absent and
 * "max" allows; -1 when full. */
static int value_index(MlirValue *l, int *n, int max, MlirValue v)
{
	for (int i = 0; i < *n; i++)
		if (mlirValueEqual(l[i], v))
			return i;
	if (*n >= max)
		return -1;
	l[*n] = v;
	return (*n)++;
}

/* The position of "v" among the distributed loop counters of "m", or -1. */
static int iv_pos(const struct model *m, MlirValue v)
{
	for (int k = 0; k < m->d; k++)
		if (mlirValueEqual(v, mlirBlockGetArgument(
					      body_of(m->st->loop[k]), 0)))
			return k;
	return -1;
}

/* The access relation K[k] -> B<root>[...] of the load or store "op" of
 * the nest of "m" whose memref operand is operand "mem" of "op"; the whole
 * buffer when the subscripts are not affine in the counters and
 * parameters (see the comment at the top). NULL on an error. */
static __isl_give isl_map *access_map(struct model *m, MlirOperation op,
				      int mem, int root)
{
	MlirValue v = mlirOperationGetOperand(op, mem);
	MlirValue rv = m->root[root];
	int nops = (int)mlirOperationGetNumOperands(op) - mem - 1;
	int rank = (int)mlirShapedTypeGetRank(mlirValueGetType(rv));
	MlirValue unk[MAXSUB];
	int nu = 0, ok = nops <= MAXSUB;
	char name[16];
	/* the unknown operands become extra dimensions projected out */
	for (int i = 0; ok && i < nops; i++) {
		MlirValue o = mlirOperationGetOperand(op, mem + 1 + i);
		int64_t c;
		if (iv_pos(m, o) < 0 && const_index(o, &c) &&
		    defined_in(o, m->nest))
			value_index(unk, &nu, MAXSUB, o);
	}
	isl_space *sp = isl_space_add_dims(isl_space_copy(m->dom), isl_dim_set,
					   nu);
	isl_aff **ops = calloc(nops > 0 ? nops : 1, sizeof(*ops));
	for (int i = 0; ok && i < nops; i++) {
		MlirValue o = mlirOperationGetOperand(op, mem + 1 + i);
		isl_local_space *ls = isl_local_space_from_space(
			isl_space_copy(sp));
		int k = iv_pos(m, o), p;
		int64_t c;
		if (k >= 0) {
			isl_aff *a = isl_aff_var_on_domain(ls, isl_dim_set, k);
			a = isl_aff_scale_val(a, isl_val_int_from_si(
							 m->ctx, m->st->step[k]));
			ops[i] = isl_aff_add_constant_si(a, m->st->lb[k]);
		} else if (!const_index(o, &c)) {
			ops[i] = isl_aff_val_on_domain(
				ls, isl_val_int_from_si(m->ctx, c));
		} else if (defined_in(o, m->nest)) {
			p = value_index(unk, &nu, MAXSUB, o);
			ops[i] = isl_aff_var_on_domain(ls, isl_dim_set,
						       m->d + p);
		} else {
			p = value_index(m->par, &m->np, MAXPAR, o);
			isl_local_space_free(ls);
			ok = p >= 0 && p < (int)isl_space_dim(sp, isl_dim_param);
			ops[i] = ok ? isl_aff_var_on_domain(
					      isl_local_space_from_space(
						      isl_space_copy(sp)),
					      isl_dim_param, p)
				    : NULL;
		}
		ok = ok && ops[i];
	}
	isl_aff_list *l = NULL;
	MlirAttribute ma = pb_ir_attr(op, "map");
	if (ok && mlirAttributeIsNull(ma)) {
		l = isl_aff_list_alloc(m->ctx, nops);
		for (int i = 0; i < nops; i++)
			l = isl_aff_list_add(l, isl_aff_copy(ops[i]));
	} else if (ok && mlirAttributeIsAAffineMap(ma)) {
		MlirAffineMap map = mlirAffineMapAttrGetValue(ma);
		int nd = (int)mlirAffineMapGetNumDims(map);
		int nr = (int)mlirAffineMapGetNumResults(map);
		l = mlirAffineMapGetNumInputs(map) == nops
			    ? isl_aff_list_alloc(m->ctx, nr) : NULL;
		for (int r = 0; l && r < nr; r++) {
			isl_aff *a = pb_poly_expr_aff(
				mlirAffineMapGetResult(map, r), sp, ops, nd,
				nops);
			l = a ? isl_aff_list_add(l, a) : isl_aff_list_free(l);
		}
	}
	for (int i = 0; i < nops; i++)
		isl_aff_free(ops[i]);
	free(ops);
	if (l && !mlirValueEqual(v, rv))
		l = pb_poly_view_compose(v, sp, l);
	if (l && isl_aff_list_n_aff(l) != rank)
		l = isl_aff_list_free(l);
	snprintf(name, sizeof(name), "B%d", root);
	isl_space *ran = isl_space_set_from_params(isl_space_params(
		isl_space_copy(sp)));
	ran = isl_space_add_dims(ran, isl_dim_set, rank);
	ran = isl_space_set_tuple_name(ran, isl_dim_set, name);
	isl_map *map;
	if (l) {
		isl_space *ms = isl_space_map_from_domain_and_range(sp, ran);
		map = isl_map_from_multi_aff(isl_multi_aff_from_aff_list(ms, l));
		map = isl_map_project_out(map, isl_dim_in, m->d, nu);
	} else {
		isl_space_free(sp);
		map = isl_map_from_domain_and_range(
			isl_set_copy(m->domain), isl_set_universe(ran));
	}
	map = isl_map_set_tuple_name(map, isl_dim_in, "K");
	return isl_map_intersect_domain(map, isl_set_copy(m->domain));
}

/* Count the parameters of the accesses in "ops" for "m" (values defined
 * outside the nest that are not constants); -1 when there are too many. */
static int collect_params(struct model *m, const struct pb_ir_ops *ops)
{
	for (int i = 0; i < ops->n; i++) {
		int mem, w;
		if (!is_access(ops->v[i], &mem, &w))
			continue;
		for (intptr_t j = mem + 1;
		     j < mlirOperationGetNumOperands(ops->v[i]); j++) {
			MlirValue o = mlirOperationGetOperand(ops->v[i], j);
			int64_t c;
			if (iv_pos(m, o) >= 0 || !const_index(o, &c) ||
			    defined_in(o, m->nest))
				continue;
			if (value_index(m->par, &m->np, MAXPAR, o) < 0)
				return -1;
		}
	}
	return 0;
}

/* Is the nest of "st" free of conflicts over its "d" outermost loops:
 * no two distinct iterations of them access one element with one of the
 * accesses a write? The "nskip" operations "skip" (accumulator chains)
 * are left out. Returns 1 when proven, 0 otherwise. */
static int conflict_free(isl_ctx *ctx, const struct step *st, int d,
			 const MlirOperation *skip, int nskip)
{
	struct model m = {0};
	struct pb_ir_ops ops = {0};
	struct rel *r = NULL;
	int nr = 0, ok = 1;
	m.ctx = ctx;
	m.nest = st->op;
	m.st = st;
	m.d = d;
	pb_ir_collect(st->op, NULL, &ops);
	if (collect_params(&m, &ops)) {
		pb_ir_ops_free(&ops);
		return 0;
	}
	m.dom = isl_space_set_alloc(ctx, m.np, d);
	for (int i = 0; i < m.np; i++) {
		char name[16];
		snprintf(name, sizeof(name), "p%d", i);
		m.dom = isl_space_set_dim_id(m.dom, isl_dim_param, i,
					     isl_id_alloc(ctx, name, NULL));
	}
	m.dom = isl_space_set_tuple_name(m.dom, isl_dim_set, "K");
	m.domain = isl_set_universe(isl_space_copy(m.dom));
	for (int k = 0; k < d; k++) {
		m.domain = isl_set_lower_bound_si(m.domain, isl_dim_set, k, 0);
		m.domain = isl_set_upper_bound_si(m.domain, isl_dim_set, k,
						  st->trip[k] - 1);
	}
	r = calloc(ops.n + 1, sizeof(*r));
	for (int i = 0; ok && i < ops.n; i++) {
		MlirOperation op = ops.v[i];
		int mem, w, skipped = 0;
		if (!nest_op_ok(op)) {
			ok = 0;
			break;
		}
		if (!is_access(op, &mem, &w))
			continue;
		for (int j = 0; j < nskip; j++)
			skipped |= mlirOperationEqual(op, skip[j]);
		MlirValue root = pb_poly_root(mlirOperationGetOperand(op, mem));
		if (skipped || defined_in(root, st->op))
			continue;
		if (!mlirTypeIsAMemRef(mlirValueGetType(root))) {
			ok = 0;
			break;
		}
		int ri = value_index(m.root, &m.nroot, MAXROOT, root);
		if (ri < 0) {
			ok = 0;
			break;
		}
		r[nr].op = op;
		r[nr].write = w;
		r[nr].root = ri;
		r[nr].map = access_map(&m, op, mem, ri);
		ok = r[nr++].map != NULL;
	}
	isl_map *id = isl_map_identity(isl_space_map_from_set(
		isl_space_copy(m.dom)));
	for (int i = 0; ok && i < nr; i++) {
		if (!r[i].write)
			continue;
		for (int j = 0; ok && j < nr; j++) {
			if (r[i].root != r[j].root)
				continue;
			isl_map *c = isl_map_apply_range(
				isl_map_copy(r[i].map),
				isl_map_reverse(isl_map_copy(r[j].map)));
			c = isl_map_subtract(c, isl_map_copy(id));
			ok = isl_map_is_empty(c) == isl_bool_true;
			isl_map_free(c);
		}
	}
	isl_map_free(id);
	for (int i = 0; i < nr; i++)
		isl_map_free(r[i].map);
	free(r);
	isl_set_free(m.domain);
	isl_space_free(m.dom);
	pb_ir_ops_free(&ops);
	return ok;
}

/* Are the operands of "a" from "fa" on and those of "b" from "fb" on the
 * same values (and as many)? */
static int same_operands(MlirOperation a, int fa, MlirOperation b, int fb)
{
	intptr_t na = mlirOperationGetNumOperands(a) - fa;
	if (na != mlirOperationGetNumOperands(b) - fb)
		return 0;
	for (intptr_t i = 0; i < na; i++)
		if (!mlirValueEqual(mlirOperationGetOperand(a, fa + i),
				    mlirOperationGetOperand(b, fb + i)))
			return 0;
	return 1;
}

/* Fill "a" when affine.store "s" in the body of nest "nest" ends an
 * accumulator chain: %x = affine.load M[sub]; %y = op %x, %v (or %v, %x);
 * affine.store %y, M[sub] with M and sub defined outside the nest, op a
 * reduction operation and %x, %y used once; or the conditional form
 * (ArgMax's index) %z = arith.select %c, %y, %x (or %c, %x, %y) stored
 * instead of %y, which is op(%x, %c ? %v : identity), with %x used by op
 * and the select only (so %c does not depend on it). Returns 1 when it
 * does. */
static int acc_chain(MlirOperation s, MlirOperation nest, struct acc *a)
{
	int bytes, sel = 0;
	MlirValue y = mlirOperationGetOperand(s, 0), other = {NULL};
	if (!pb_ir_op_is(s, "affine.store") || !mlirValueIsAOpResult(y) ||
	    num_uses(y) != 1)
		return 0;
	for (intptr_t i = 1; i < mlirOperationGetNumOperands(s); i++)
		if (defined_in(mlirOperationGetOperand(s, i), nest))
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
	const struct red_op *r = red_op_of(c);
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
		    !same_operands(l, 0, s, 1))
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
static int loop_prefix(MlirOperation op, struct step *st)
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
static int64_t prefix_iters(const struct step *st, int d)
{
	int64_t n = 1;
	for (int k = 0; k < d; k++) {
		if (st->trip[k] && n > INT64_MAX / 4 / st->trip[k])
			return -1;
		n *= st->trip[k];
	}
	return n;
}

/* The smallest power of 2 not below "n". */
static int64_t pow2_ceil(int64_t n)
{
	int64_t p = 1;
	while (p < n)
		p *= 2;
	return p;
}

/* Classify the affine.for nest of "st" as a reduction or a parallel nest
 * (K_SCALAR when it is neither), for "threads" threads. */
static void classify_nest(isl_ctx *ctx, struct step *st, int threads)
{
	int p = loop_prefix(st->op, st);
	MlirOperation skip[2 * MAXACC];
	st->kind = K_SCALAR;
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
		if (straight && st->nacc < MAXACC &&
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
				if (!is_access(all.v[i], &mem, &w) ||
				    mlirOperationEqual(all.v[i], st->acc[a].load) ||
				    mlirOperationEqual(all.v[i], st->acc[a].store))
					continue;
				ok = !mlirValueEqual(root, pb_poly_root(
					mlirOperationGetOperand(all.v[i], mem)));
			}
		}
		pb_ir_ops_free(&all);
		if (ok && conflict_free(ctx, st, p, skip, 2 * st->nacc)) {
			st->kind = K_RED;
			st->d = p;
			st->nthr = pow2_ceil(st->n) < threads ? pow2_ceil(st->n)
							      : threads;
			return;
		}
	}
	st->nacc = 0;
	/* a parallel nest over as many outer loops as possible */
	for (int d = p; d >= 1; d--) {
		st->n = prefix_iters(st, d);
		if (st->n > 0 && conflict_free(ctx, st, d, NULL, 0)) {
			st->kind = K_PAR;
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
static struct step *step_of(const struct plan *p, MlirOperation op)
{
	for (int i = 0; i < p->n; i++)
		if (mlirOperationEqual(p->s[i].op, op))
			return &p->s[i];
	return NULL;
}

/* Is a value computed by scalar work used outside its run? Values must
 * not cross thread loops. */
static int escapes(const struct plan *p, MlirBlock body)
{
	for (int i = 0; i < p->n; i++) {
		const struct step *st = &p->s[i];
		if (st->kind != K_SCALAR)
			continue;
		for (intptr_t r = 0; r < mlirOperationGetNumResults(st->op); r++) {
			MlirValue v = mlirOperationGetResult(st->op, r);
			for (MlirOpOperand u = mlirValueGetFirstUse(v);
			     !mlirOpOperandIsNull(u);
			     u = mlirOpOperandGetNextUse(u)) {
				MlirOperation a = pb_ir_ancestor_in(
					mlirOpOperandGetOwner(u), body);
				const struct step *o = mlirOperationIsNull(a)
					? NULL : step_of(p, a);
				if (!o || o->kind != K_SCALAR ||
				    o->run != st->run)
					return 1;
			}
		}
	}
	return 0;
}

/* Free the steps of "p". */
static void plan_free(struct plan *p)
{
	free(p->s);
	p->s = NULL;
	p->n = 0;
}

/* Is every operand of "op" defined outside "body" or by a K_KEEP step
 * of "p"? */
static int block_level(const struct plan *p, MlirOperation op, MlirBlock body)
{
	for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); i++) {
		MlirValue v = mlirOperationGetOperand(op, i);
		MlirOperation d = pb_ir_value_parent(v);
		if (mlirValueIsABlockArgument(v) ||
		    !mlirBlockEqual(mlirOperationGetBlock(d), body))
			continue;
		const struct step *s = step_of(p, d);
		if (!s || s->kind != K_KEEP)
			return 0;
	}
	return 1;
}

/* Is "op" a load from a buffer that nothing in "body" writes? Every
 * thread may then perform it at block level (no other band point writes
 * the buffer either: the band carries no dependence). */
static int read_only_load(MlirOperation op, MlirBlock body)
{
	int mem, w;
	if (!is_access(op, &mem, &w) || w)
		return 0;
	MlirValue root = pb_poly_root(mlirOperationGetOperand(op, mem));
	MlirOperation parent = mlirBlockGetParentOperation(body);
	struct pb_ir_ops all = {0};
	int ro = 1;
	pb_ir_collect(parent, NULL, &all);
	for (int i = 0; ro && i < all.n; i++)
		if (is_access(all.v[i], &mem, &w) && w)
			ro = !mlirValueEqual(root, pb_poly_root(
				mlirOperationGetOperand(all.v[i], mem)));
	pb_ir_ops_free(&all);
	return ro;
}

/* Plan the block-level mapping of the body of "b" with "threads" threads
 * into "p"; 1 when it applies (see pb_tile_reduce_match). */
static int analyse(isl_ctx *ctx, const struct pb_kernel_band *b, int threads,
		   struct plan *p)
{
	MlirBlock body = pb_kernel_band_body(b);
	struct pb_ir_ops ops = {0};
	int ok = 1, run = 0, dist = 0;
	memset(p, 0, sizeof(*p));
	if (threads < 32 || threads > 1024 || (threads & (threads - 1)) ||
	    b->n < 1)
		return 0;
	pb_ir_block_ops(body, &ops);
	p->s = calloc(ops.n + 1, sizeof(*p->s));
	for (int i = 0; ok && i < ops.n; i++) {
		MlirOperation op = ops.v[i];
		struct step *st = &p->s[p->n];
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
			st->kind = K_ALLOCA;
			p->smem += bytes;
			continue;
		}
		if ((is_pure(op) || read_only_load(op, body)) &&
		    block_level(p, op, body)) {
			st->kind = K_KEEP;
			continue;
		}
		if (pb_ir_op_is(op, "affine.for")) {
			classify_nest(ctx, st, threads);
			p->work += iterations(op);
		} else {
			st->kind = K_SCALAR;
		}
		if (st->kind == K_SCALAR) {
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
	if (ok && (!dist || escapes(p, body)))
		ok = 0;
	if (!ok)
		plan_free(p);
	return ok;
}

int pb_tile_reduce_match(const struct pb_kernel_band *b, int threads,
			 int64_t *work, int64_t *smem)
{
	struct plan p;
	isl_ctx *ctx = isl_ctx_alloc();
	if (ctx)
		isl_options_set_on_error(ctx, ISL_ON_ERROR_CONTINUE);
	int ok = ctx && analyse(ctx, b, threads, &p);
	if (ok) {
		*work = p.work;
		*smem = p.smem;
		plan_free(&p);
	}
	isl_ctx_free(ctx);
	return ok;
}

/* Rewriting. */

/* Where the rewrite is: the context, the location of the nest, the body
 * of the new block loop, how many thread loops were emitted already and
 * whether the last one had one thread (see thread_open). */
struct site {
	struct pb_ctx *ctx;
	MlirLocation loc;
	MlirBlock body;
	int nthread;
	int last_one;
	struct pb_ir_ops wg; /* workgroup allocations, to deallocate */
};

/* Append the type of "t" in workgroup memory ("memref<4x32xf32,
 * #gpu.address_space<workgroup>>" for a memref, "memref<nxt, ...>" for an
 * element type with "n" > 0) to "out". */
static void wg_type(struct pb_buf *out, MlirType t, int64_t n)
{
	pb_buf_puts(out, "memref<");
	if (n > 0) {
		pb_buf_printf(out, "%lldx", (long long)n);
	} else {
		for (intptr_t i = 0; i < mlirShapedTypeGetRank(t); i++)
			pb_buf_printf(out, "%lldx",
				      (long long)mlirShapedTypeGetDimSize(t, i));
		t = mlirShapedTypeGetElementType(t);
	}
	pb_ir_type_print(t, out);
	pb_buf_puts(out, ", #gpu.address_space<workgroup>>");
}

/* Instantiate the function text "t" (freed) before "before" with the "n"
 * arguments "args"; the new operations into "out". */
static int emit(struct site *s, struct pb_buf *t, MlirOperation before,
		int n, const MlirValue *args, struct pb_ir_ops *out)
{
	int rc = pb_ir_instantiate(s->ctx, t->data, before, n, args, s->loc,
				   out);
	pb_buf_free(t);
	return rc;
}

/* A workgroup allocation of "type" (text) at the start of the body of
 * "s"; its value into "*v". */
static int wg_alloc(struct site *s, const char *type, MlirOperation before,
		    MlirValue *v)
{
	struct pb_buf t = {0};
	struct pb_ir_ops out = {0};
	pb_buf_printf(&t, "func.func @t() {\n  %%a = memref.alloc() : %s\n"
		      "  return\n}\n", type);
	int rc = emit(s, &t, before, 0, NULL, &out);
	if (rc == PB_OK) {
		*v = mlirOperationGetResult(out.v[0], 0);
		pb_ir_ops_push(&s->wg, out.v[0]);
	}
	pb_ir_ops_free(&out);
	return rc;
}

/* Append to "t" the text of a thread loop over "n" threads, left open,
 * preceded by a barrier when a thread loop was emitted before, unless
 * both have one thread: pb-codegen runs both on thread 0, in order. */
static void thread_open(struct site *s, struct pb_buf *t, int64_t n)
{
	if (s->nthread++ && !(s->last_one && n == 1))
		pb_buf_puts(t, "  gpu.barrier\n");
	s->last_one = n == 1;
	pb_buf_printf(t, "  affine.parallel (%%t) = (0) to (%lld) {\n",
		      (long long)n);
}

/* Close the thread loop opened by thread_open. */
static void thread_close(struct pb_buf *t)
{
	pb_buf_puts(t, "  } {pb.map = \"thread\"}\n");
}

/* Is the one distributed loop of "st" counted from 0 by 1, so that its
 * counter is the linear iteration itself? */
static int direct(const struct step *st)
{
	return st->d == 1 && st->lb[0] == 0 && st->step[0] == 1;
}

/* Append to "t" the loop over the iterations of "st" of thread "%t" and
 * the counters of its distributed loops (%i0, ...) computed from the
 * linear iteration (none when direct); the loop is left open unless every
 * thread has exactly one iteration ("*open" says which; a reduction
 * rounds its threads up to a power of 2, so some may have none). */
static void iter_open(struct pb_buf *t, const struct step *st, int *open)
{
	const char *l = "%t";
	*open = st->n != st->nthr;
	if (*open) {
		pb_buf_printf(t, "    affine.for %%l = affine_map<(t) -> (t)>"
			      "(%%t) to %lld step %lld {\n",
			      (long long)st->n, (long long)st->nthr);
		l = "%l";
	}
	for (int k = 0; k < st->d && !direct(st); k++) {
		int64_t s = 1;
		for (int e = k + 1; e < st->d; e++)
			s *= st->trip[e];
		pb_buf_printf(t, "      %%i%d = affine.apply affine_map<(l) -> "
			      "(((l", k);
		if (s > 1)
			pb_buf_printf(t, " floordiv %lld", (long long)s);
		pb_buf_puts(t, ")");
		if (k > 0)
			pb_buf_printf(t, " mod %lld", (long long)st->trip[k]);
		pb_buf_printf(t, ") * %lld + %lld)>(%s)\n",
			      (long long)st->step[k], (long long)st->lb[k], l);
	}
}

/* Where the iterations of "st" run in the thread loop "tl" emitted with
 * iter_open: the body of the affine.for over the iterations, or of "tl"
 * itself, into "*blk", and the counters of the distributed loops into
 * "iv". */
static void iter_site(MlirOperation tl, int open, const struct step *st,
		      MlirBlock *blk, MlirValue *iv)
{
	MlirBlock b = body_of(tl);
	MlirOperation op = mlirBlockGetFirstOperation(b);
	if (open) {
		while (!pb_ir_op_is(op, "affine.for"))
			op = mlirOperationGetNextInBlock(op);
		b = body_of(op);
		op = mlirBlockGetFirstOperation(b);
	} else {
		while (!direct(st) && !pb_ir_op_is(op, "affine.apply"))
			op = mlirOperationGetNextInBlock(op);
	}
	*blk = b;
	if (direct(st)) {
		iv[0] = mlirBlockGetArgument(b, 0);
		return;
	}
	for (int k = 0; k < st->d; k++, op = mlirOperationGetNextInBlock(op))
		iv[k] = mlirOperationGetResult(op, 0);
}

/* Move the operations of "from" but its terminator before the terminator
 * of "to". */
static void move_body(MlirBlock from, MlirBlock to)
{
	MlirOperation end = mlirBlockGetTerminator(to), next;
	for (MlirOperation op = mlirBlockGetFirstOperation(from);
	     !mlirOperationIsNull(op); op = next) {
		next = mlirOperationGetNextInBlock(op);
		if (mlirOperationIsNull(next))
			break;
		mlirOperationMoveBefore(op, end);
	}
}

/* The last thread loop (affine.parallel) among "out". */
static MlirOperation last_thread_loop(const struct pb_ir_ops *out, int first)
{
	MlirOperation r = {NULL};
	for (int i = 0; i < out->n; i++)
		if (pb_ir_op_is(out->v[i], "affine.parallel")) {
			r = out->v[i];
			if (first)
				break;
		}
	return r;
}

/* Replace the distributed loops of "st" by the thread loop whose
 * iterations run in block "blk" with counters "iv": move the body of the
 * innermost distributed loop there and destroy the nest. */
static void replace_nest(const struct step *st, MlirBlock blk, MlirValue *iv)
{
	move_body(body_of(st->loop[st->d - 1]), blk);
	for (int k = 0; k < st->d; k++)
		mlirValueReplaceAllUsesOfWith(
			mlirBlockGetArgument(body_of(st->loop[k]), 0), iv[k]);
	mlirOperationDestroy(st->op);
}

/* Map the parallel nest of "st". */
static int map_par(struct site *s, const struct step *st)
{
	struct pb_buf t = {0};
	struct pb_ir_ops out = {0};
	MlirValue iv[PB_TILE_MAXD];
	MlirBlock blk;
	int open;
	pb_buf_puts(&t, "func.func @t() {\n");
	thread_open(s, &t, st->nthr);
	iter_open(&t, st, &open);
	if (open)
		pb_buf_puts(&t, "    }\n");
	thread_close(&t);
	pb_buf_puts(&t, "  return\n}\n");
	int rc = emit(s, &t, st->op, 0, NULL, &out);
	if (rc == PB_OK) {
		iter_site(last_thread_loop(&out, 0), open, st, &blk, iv);
		replace_nest(st, blk, iv);
	}
	pb_ir_ops_free(&out);
	return rc;
}

/* Append to "t" the type of partial buffer "a" of "st". */
static void part_type(struct pb_buf *t, const struct step *st, int a)
{
	wg_type(t, st->acc[a].type, st->nthr);
}

/* Instantiate "%v = affine.load %p[%t]" before "before" ("idx" names the
 * subscript) on partial buffer "part" of type text "ty"; the loaded value
 * into "*v". */
static int part_load(struct site *s, MlirValue part, const char *ty,
		     MlirValue tv, MlirOperation before, MlirValue *v)
{
	struct pb_buf t = {0};
	struct pb_ir_ops out = {0};
	MlirValue args[2] = {part, tv};
	pb_buf_printf(&t, "func.func @t(%%p: %s, %%t: index) {\n"
		      "  %%v = affine.load %%p[%%t] : %s\n  return\n}\n",
		      ty, ty);
	int rc = emit(s, &t, before, 2, args, &out);
	if (rc == PB_OK)
		*v = mlirOperationGetResult(out.v[0], 0);
	pb_ir_ops_free(&out);
	return rc;
}

/* Map the reduction nest of "st": partials, tree, final combination. */
static int map_red(struct site *s, const struct step *st)
{
	struct pb_buf t = {0}, ty[MAXACC];
	struct pb_ir_ops out = {0};
	MlirValue part[MAXACC], iv[PB_TILE_MAXD];
	MlirBlock blk;
	int open, rc = PB_OK;
	MlirOperation first = mlirBlockGetFirstOperation(s->body);
	for (int a = 0; a < st->nacc && rc == PB_OK; a++) {
		memset(&ty[a], 0, sizeof(ty[a]));
		part_type(&ty[a], st, a);
		rc = wg_alloc(s, ty[a].data, first, &part[a]);
	}
	if (rc) {
		for (int a = 0; a < st->nacc; a++)
			pb_buf_free(&ty[a]);
		return rc;
	}
	/* per-thread partials */
	pb_buf_puts(&t, "func.func @t(");
	for (int a = 0; a < st->nacc; a++)
		pb_buf_printf(&t, "%s%%p%d: %s", a ? ", " : "", a, ty[a].data);
	pb_buf_puts(&t, ") {\n");
	thread_open(s, &t, st->nthr);
	for (int a = 0; a < st->nacc; a++) {
		pb_buf_printf(&t, "    %%e%d = arith.constant ", a);
		ident_text(&t, st->acc[a].r, st->acc[a].type);
		pb_buf_printf(&t, "\n    affine.store %%e%d, %%p%d[%%t] : %s\n",
			      a, a, ty[a].data);
	}
	iter_open(&t, st, &open);
	if (open)
		pb_buf_puts(&t, "    }\n");
	thread_close(&t);
	/* the tree */
	for (int64_t h = st->nthr / 2; h >= 1; h /= 2) {
		thread_open(s, &t, h);
		for (int a = 0; a < st->nacc; a++) {
			pb_buf_printf(&t, "    %%a%d = affine.load %%p%d[%%t] : "
				      "%s\n", a, a, ty[a].data);
			pb_buf_printf(&t, "    %%b%d = affine.load %%p%d[%%t + "
				      "%lld] : %s\n", a, a, (long long)h,
				      ty[a].data);
			pb_buf_printf(&t, "    %%c%d = %s %%a%d, %%b%d : ", a,
				      st->acc[a].r->name, a, a);
			pb_ir_type_print(st->acc[a].type, &t);
			pb_buf_printf(&t, "\n    affine.store %%c%d, %%p%d[%%t] : "
				      "%s\n", a, a, ty[a].data);
		}
		thread_close(&t);
	}
	/* the final combination, filled below */
	thread_open(s, &t, 1);
	thread_close(&t);
	pb_buf_puts(&t, "  return\n}\n");
	rc = emit(s, &t, st->op, st->nacc, part, &out);
	if (rc == PB_OK) {
		MlirOperation tl = last_thread_loop(&out, 1);
		MlirOperation fin = last_thread_loop(&out, 0);
		MlirValue tv = mlirBlockGetArgument(body_of(tl), 0);
		MlirOperation end = mlirBlockGetTerminator(body_of(fin));
		MlirValue zero = mlirBlockGetArgument(body_of(fin), 0);
		/* acc = op(acc, part[0]): fin runs one thread, %t is 0 */
		for (int a = 0; a < st->nacc && rc == PB_OK; a++) {
			const struct acc *ac = &st->acc[a];
			MlirValue r;
			rc = part_load(s, part[a], ty[a].data, zero, end, &r);
			if (rc)
				break;
			MlirOperation l = mlirOperationClone(ac->load);
			MlirOperation c = mlirOperationClone(ac->comb);
			MlirOperation w = mlirOperationClone(ac->store);
			MlirBlock fb = body_of(fin);
			mlirBlockInsertOwnedOperationBefore(fb, end, l);
			mlirBlockInsertOwnedOperationBefore(fb, end, c);
			mlirBlockInsertOwnedOperationBefore(fb, end, w);
			MlirValue lv = mlirOperationGetResult(ac->load, 0);
			for (int k = 0; k < 2; k++)
				mlirOperationSetOperand(
					c, k,
					mlirValueEqual(mlirOperationGetOperand(
							       ac->comb, k), lv)
						? mlirOperationGetResult(l, 0)
						: r);
			mlirOperationSetOperand(w, 0, mlirOperationGetResult(c, 0));
		}
		/* the body accumulates into the thread's partial */
		iter_site(tl, open, st, &blk, iv);
		for (int a = 0; a < st->nacc && rc == PB_OK; a++) {
			const struct acc *ac = &st->acc[a];
			MlirValue v;
			struct pb_buf w = {0};
			MlirValue args[3];
			rc = part_load(s, part[a], ty[a].data, tv, ac->load, &v);
			if (rc)
				break;
			mlirValueReplaceAllUsesOfWith(
				mlirOperationGetResult(ac->load, 0), v);
			mlirOperationDestroy(ac->load);
			args[0] = mlirOperationGetOperand(ac->store, 0);
			args[1] = part[a];
			args[2] = tv;
			pb_buf_puts(&w, "func.func @t(%v: ");
			pb_ir_type_print(ac->type, &w);
			pb_buf_printf(&w, ", %%p: %s, %%t: index) {\n"
				      "  affine.store %%v, %%p[%%t] : %s\n"
				      "  return\n}\n", ty[a].data, ty[a].data);
			rc = emit(s, &w, ac->store, 3, args, NULL);
			if (rc == PB_OK)
				mlirOperationDestroy(ac->store);
		}
		if (rc == PB_OK)
			replace_nest(st, blk, iv);
	}
	for (int a = 0; a < st->nacc; a++)
		pb_buf_free(&ty[a]);
	pb_ir_ops_free(&out);
	return rc;
}

/* Run the scalar operations of run "run" of "p" in one thread: a thread
 * loop after the last of them. */
static int map_scalar(struct site *s, const struct plan *p, int run)
{
	struct pb_buf t = {0};
	struct pb_ir_ops out = {0};
	MlirOperation last = {NULL};
	for (int i = 0; i < p->n; i++)
		if (p->s[i].kind == K_SCALAR && p->s[i].run == run)
			last = p->s[i].op;
	pb_buf_puts(&t, "func.func @t() {\n");
	thread_open(s, &t, 1);
	thread_close(&t);
	pb_buf_puts(&t, "  return\n}\n");
	int rc = emit(s, &t, mlirOperationGetNextInBlock(last), 0, NULL, &out);
	if (rc == PB_OK) {
		MlirOperation tl = last_thread_loop(&out, 0);
		MlirOperation end = mlirBlockGetTerminator(body_of(tl));
		for (int i = 0; i < p->n; i++)
			if (p->s[i].kind == K_SCALAR && p->s[i].run == run)
				mlirOperationMoveBefore(p->s[i].op, end);
	}
	pb_ir_ops_free(&out);
	return rc;
}

/* Move the private allocation "op" to workgroup memory. */
static int map_alloca(struct site *s, MlirOperation op)
{
	struct pb_buf ty = {0};
	MlirValue old = mlirOperationGetResult(op, 0), v;
	wg_type(&ty, mlirValueGetType(old), 0);
	int rc = wg_alloc(s, ty.data, op, &v);
	pb_buf_free(&ty);
	if (rc == PB_OK) {
		mlirValueReplaceAllUsesOfWith(old, v);
		mlirOperationDestroy(op);
	}
	return rc;
}

/* The new block loop over the band "b", before its root; its body
 * receives the band's body. Returns a null operation on failure. */
static MlirOperation block_loop(struct site *s, const struct pb_kernel_band *b)
{
	struct pb_buf t = {0}, iv = {0}, lb = {0}, ub = {0}, st = {0};
	struct pb_ir_ops out = {0};
	MlirOperation r = {NULL};
	for (int d = 0; d < b->n; d++) {
		const char *sep = d ? ", " : "";
		pb_buf_printf(&iv, "%s%%i%d", sep, d);
		pb_buf_printf(&lb, "%s%lld", sep, (long long)b->lb[d]);
		pb_buf_printf(&ub, "%s%lld", sep,
			      (long long)(b->lb[d] + b->extent[d] * b->step[d]));
		pb_buf_printf(&st, "%s%lld", sep, (long long)b->step[d]);
	}
	pb_buf_printf(&t, "func.func @t() {\n  affine.parallel (%s) = (%s) to "
		      "(%s) step (%s) {\n  } {pb.map = \"block\"}\n  return\n}\n",
		      iv.data, lb.data, ub.data, st.data);
	pb_buf_free(&iv);
	pb_buf_free(&lb);
	pb_buf_free(&ub);
	pb_buf_free(&st);
	if (emit(s, &t, b->root, 0, NULL, &out) == PB_OK) {
		r = out.v[0];
		move_body(pb_kernel_band_body(b), body_of(r));
		for (int d = 0; d < b->n; d++)
			mlirValueReplaceAllUsesOfWith(
				b->iv[d], mlirBlockGetArgument(body_of(r), d));
		mlirOperationDestroy(b->root);
	}
	pb_ir_ops_free(&out);
	return r;
}

/* Deallocate the workgroup buffers of "s" at the end of its body. */
static int deallocs(struct site *s)
{
	int rc = PB_OK;
	MlirOperation end = mlirBlockGetTerminator(s->body);
	for (int i = 0; i < s->wg.n && rc == PB_OK; i++) {
		struct pb_buf t = {0};
		MlirValue v = mlirOperationGetResult(s->wg.v[i], 0);
		pb_buf_puts(&t, "func.func @t(%a: ");
		pb_ir_type_print(mlirValueGetType(v), &t);
		pb_buf_puts(&t, ") {\n  memref.dealloc %a : ");
		pb_ir_type_print(mlirValueGetType(v), &t);
		pb_buf_puts(&t, "\n  return\n}\n");
		rc = emit(s, &t, end, 1, &v, NULL);
	}
	return rc;
}

/* Is step "i" of "p" the last scalar step of its run? (K_KEEP and
 * K_ALLOCA steps between scalar steps stay before the run's thread
 * loop.) */
static int last_of_run(const struct plan *p, int i)
{
	for (int j = i + 1; j < p->n; j++)
		if (p->s[j].kind == K_SCALAR && p->s[j].run == p->s[i].run)
			return 0;
	return 1;
}

int pb_tile_reduce_apply(struct pb_ctx *ctx, const struct pb_kernel_band *b,
			 int threads)
{
	struct plan p;
	struct site s = {0};
	int rc = PB_OK;
	s.ctx = ctx;
	s.loc = mlirOperationGetLocation(b->root);
	if (!analyse(ctx->isl, b, threads, &p)) {
		pb_error_at(ctx, s.loc, "internal: nest does not fit the "
			    "block-level reduction mapping");
		return PB_ERR;
	}
	MlirOperation blk = block_loop(&s, b);
	if (mlirOperationIsNull(blk)) {
		plan_free(&p);
		return PB_ERR;
	}
	s.body = body_of(blk);
	for (int i = 0; i < p.n && rc == PB_OK; i++) {
		struct step *st = &p.s[i];
		if (st->kind == K_ALLOCA)
			rc = map_alloca(&s, st->op);
		else if (st->kind == K_PAR)
			rc = map_par(&s, st);
		else if (st->kind == K_RED)
			rc = map_red(&s, st);
		else if (st->kind == K_SCALAR && last_of_run(&p, i))
			rc = map_scalar(&s, &p, st->run);
	}
	if (rc == PB_OK)
		rc = deallocs(&s);
	pb_ir_ops_free(&s.wg);
	plan_free(&p);
	return rc;
}
