/* Localized access relations in lib/poly (poly.h, "Localized access
 * relations"): the loads and stores of one loop nest as isl maps from the
 * counters of some of its loops, with the values defined around the nest
 * as parameters; the proof that a nest's loops carry no conflict
 * (pb-tile's block-level reductions), and the footprints of its accesses
 * per tile and their box hulls (the cost model, shared-memory
 * promotion). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <isl/aff.h>
#include <isl/ctx.h>
#include <isl/fixed_box.h>
#include <isl/id.h>
#include <isl/local_space.h>
#include <isl/map.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/val.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "poly/internal.h"

#define MAXSUB 16   /* subscripts of one access */

int pb_poly_access_operand(MlirOperation op, int *mem, int *write)
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

/* The position of "v" among the domain dimensions of "l", or -1. */
static int dim_pos(const struct pb_poly_local *l, MlirValue v)
{
	for (int k = 0; k < l->d; k++)
		if (mlirValueEqual(v, l->dim[k].iv))
			return k;
	return -1;
}

/* Is "v" a parameter of "l": defined outside the nest, not a domain
 * dimension and not a constant? */
static int is_param(const struct pb_poly_local *l, MlirValue v)
{
	int64_t c;
	return dim_pos(l, v) < 0 && pb_ir_const_int(v, &c) &&
	       !pb_ir_defined_in(v, l->nest);
}

/* Bound dimension "pos" of "sp"'s set "s" by the constant bounds of the
 * affine.for whose counter is "v", when "v" is one. */
static __isl_give isl_set *bound_inner(__isl_take isl_set *s, MlirValue v,
				       int pos)
{
	int64_t lb, ub;
	if (!mlirValueIsABlockArgument(v) || mlirBlockArgumentGetArgNumber(v))
		return s;
	MlirOperation loop = mlirBlockGetParentOperation(
		mlirBlockArgumentGetOwner(v));
	if (!pb_ir_op_is(loop, "affine.for") ||
	    pb_ir_const_map(loop, "lowerBoundMap", 1, &lb) ||
	    pb_ir_const_map(loop, "upperBoundMap", 1, &ub))
		return s;
	if (ub <= lb) {
		isl_space *sp = isl_set_get_space(s);
		isl_set_free(s);
		return isl_set_empty(sp);
	}
	s = isl_set_lower_bound_si(s, isl_dim_set, pos, lb);
	return isl_set_upper_bound_si(s, isl_dim_set, pos, ub - 1);
}

/* The single-result affine.apply defined in the nest of "l" that "v" is
 * the result of, or a null operation. */
static MlirOperation nest_apply(const struct pb_poly_local *l, MlirValue v)
{
	MlirOperation none = {NULL};
	if (!mlirValueIsAOpResult(v) || !pb_ir_defined_in(v, l->nest))
		return none;
	MlirOperation def = mlirOpResultGetOwner(v);
	MlirAttribute ma = pb_ir_attr(def, "map");
	if (!pb_ir_op_is(def, "affine.apply") || mlirAttributeIsNull(ma) ||
	    mlirAffineMapGetNumResults(mlirAffineMapAttrGetValue(ma)) != 1)
		return none;
	return def;
}

/* Add to "unk" the values defined in the nest of "l" that subscript "o"
 * depends on and that are neither domain dimensions nor constants: "o"
 * itself, or through the affine.apply that defines it, its operands.
 * Returns -1 when there are more than MAXSUB of them. */
static int collect_unknowns(const struct pb_poly_local *l, MlirValue o,
			    MlirValue *unk, int *nu, int depth)
{
	int64_t c;
	if (dim_pos(l, o) >= 0 || !pb_ir_const_int(o, &c) ||
	    !pb_ir_defined_in(o, l->nest))
		return 0;
	MlirOperation def = nest_apply(l, o);
	if (mlirOperationIsNull(def) || depth > 8)
		return value_index(unk, nu, MAXSUB, o) < 0 ? -1 : 0;
	for (intptr_t i = 0; i < mlirOperationGetNumOperands(def); i++)
		if (collect_unknowns(l, mlirOperationGetOperand(def, i), unk,
				     nu, depth + 1))
			return -1;
	return 0;
}

/* Subscript operand "o" as an affine function on "sp" (the domain with
 * the "nu" unknowns "unk" appended): a domain dimension, a constant, a
 * parameter (added to l->par), an unknown, or the composition of the
 * affine.apply defining it in the nest. NULL when it is none of these. */
static __isl_give isl_aff *operand_aff(struct pb_poly_local *l, MlirValue o,
				       __isl_keep isl_space *sp,
				       MlirValue *unk, int *nu, int depth)
{
	isl_local_space *ls = isl_local_space_from_space(isl_space_copy(sp));
	int k = dim_pos(l, o), p;
	int64_t c;
	if (k >= 0) {
		isl_aff *a = isl_aff_var_on_domain(ls, isl_dim_set, k);
		a = isl_aff_scale_val(a, isl_val_int_from_si(l->ctx,
							     l->dim[k].step));
		return isl_aff_add_constant_si(a, l->dim[k].lb);
	}
	if (!pb_ir_const_int(o, &c))
		return isl_aff_val_on_domain(ls, isl_val_int_from_si(l->ctx,
								     c));
	MlirOperation def = nest_apply(l, o);
	if (!mlirOperationIsNull(def) && depth <= 8) {
		int n = (int)mlirOperationGetNumOperands(def), ok = 1;
		MlirAffineMap map = mlirAffineMapAttrGetValue(
			pb_ir_attr(def, "map"));
		isl_aff **ops = calloc(n > 0 ? n : 1, sizeof(*ops));
		isl_local_space_free(ls);
		for (int i = 0; ok && i < n; i++) {
			ops[i] = operand_aff(l, mlirOperationGetOperand(def, i),
					     sp, unk, nu, depth + 1);
			ok = ops[i] != NULL;
		}
		isl_aff *a = ok ? pb_poly_expr_aff(
					  mlirAffineMapGetResult(map, 0), sp,
					  ops, mlirAffineMapGetNumDims(map), n)
				: NULL;
		for (int i = 0; i < n; i++)
			isl_aff_free(ops[i]);
		free(ops);
		return a;
	}
	if (pb_ir_defined_in(o, l->nest)) {
		p = value_index(unk, nu, MAXSUB, o);
		return p < 0 ? isl_local_space_free(ls), NULL
			     : isl_aff_var_on_domain(ls, isl_dim_set, l->d + p);
	}
	isl_local_space_free(ls);
	p = value_index(l->par, &l->np, PB_POLY_LOCAL_MAXPAR, o);
	if (p < 0 || p >= (int)isl_space_dim(sp, isl_dim_param))
		return NULL;
	return isl_aff_var_on_domain(isl_local_space_from_space(
					     isl_space_copy(sp)),
				     isl_dim_param, p);
}

/* The access relation K[k] -> B<root>[...] of the load or store "op" of
 * the nest of "l" whose memref operand is operand "mem" of "op" into
 * "acc"; the whole buffer when the subscripts are not affine in the
 * counters and parameters. Subscripts computed by affine.apply in the
 * nest are composed. Returns -1 on an error. */
static int access_map(struct pb_poly_local *l, MlirOperation op, int mem,
		      struct pb_poly_laccess *acc)
{
	MlirValue v = mlirOperationGetOperand(op, mem);
	MlirValue rv = l->root[acc->root];
	int nops = (int)mlirOperationGetNumOperands(op) - mem - 1;
	int rank = (int)mlirShapedTypeGetRank(mlirValueGetType(rv));
	MlirValue unk[MAXSUB];
	int nu = 0, ok = nops <= MAXSUB;
	char name[16];
	/* the unknown operands become extra dimensions projected out */
	for (int i = 0; ok && i < nops; i++)
		ok = !collect_unknowns(l, mlirOperationGetOperand(op, mem + 1 + i),
				       unk, &nu, 0);
	isl_space *dom = isl_set_get_space(l->domain);
	isl_space *sp = isl_space_add_dims(isl_space_copy(dom), isl_dim_set,
					   nu);
	isl_aff **ops = calloc(nops > 0 ? nops : 1, sizeof(*ops));
	for (int i = 0; ok && i < nops; i++) {
		ops[i] = operand_aff(l, mlirOperationGetOperand(op, mem + 1 + i),
				     sp, unk, &nu, 0);
		ok = ops[i] != NULL;
	}
	isl_aff_list *list = NULL;
	MlirAttribute ma = pb_ir_attr(op, "map");
	if (ok && mlirAttributeIsNull(ma)) {
		list = isl_aff_list_alloc(l->ctx, nops);
		for (int i = 0; i < nops; i++)
			list = isl_aff_list_add(list, isl_aff_copy(ops[i]));
	} else if (ok && mlirAttributeIsAAffineMap(ma)) {
		MlirAffineMap map = mlirAffineMapAttrGetValue(ma);
		int nd = (int)mlirAffineMapGetNumDims(map);
		int nr = (int)mlirAffineMapGetNumResults(map);
		list = mlirAffineMapGetNumInputs(map) == nops
			       ? isl_aff_list_alloc(l->ctx, nr) : NULL;
		for (int r = 0; list && r < nr; r++) {
			isl_aff *a = pb_poly_expr_aff(
				mlirAffineMapGetResult(map, r), sp, ops, nd,
				nops);
			list = a ? isl_aff_list_add(list, a)
				 : isl_aff_list_free(list);
		}
	}
	for (int i = 0; i < nops; i++)
		isl_aff_free(ops[i]);
	free(ops);
	if (list && !mlirValueEqual(v, rv))
		list = pb_poly_view_compose(v, sp, list);
	if (list && isl_aff_list_n_aff(list) != rank)
		list = isl_aff_list_free(list);
	snprintf(name, sizeof(name), "B%d", acc->root);
	isl_space *ran = isl_space_set_from_params(isl_space_params(
		isl_space_copy(sp)));
	ran = isl_space_add_dims(ran, isl_dim_set, rank);
	ran = isl_space_set_tuple_name(ran, isl_dim_set, name);
	isl_map *map;
	acc->exact = list != NULL;
	if (list) {
		isl_space *ms = isl_space_map_from_domain_and_range(sp, ran);
		isl_multi_aff *sub = isl_multi_aff_from_aff_list(ms, list);
		map = isl_map_from_multi_aff(isl_multi_aff_copy(sub));
		if (l->flags & PB_POLY_LOCAL_INNER_BOUNDS) {
			isl_set *in = isl_set_universe(isl_space_domain(
				isl_map_get_space(map)));
			for (int u = 0; u < nu; u++)
				in = bound_inner(in, unk[u], l->d + u);
			map = isl_map_intersect_domain(map, in);
		}
		map = isl_map_project_out(map, isl_dim_in, l->d, nu);
		acc->sub = sub;
	} else {
		isl_space_free(sp);
		map = isl_map_from_domain_and_range(
			isl_set_copy(l->domain), isl_set_universe(ran));
	}
	isl_space_free(dom);
	map = isl_map_set_tuple_name(map, isl_dim_in, "K");
	acc->map = isl_map_intersect_domain(map, isl_set_copy(l->domain));
	return acc->map ? 0 : -1;
}

/* Add the parameters that subscript "o" uses (itself, or through the
 * affine.apply defining it in the nest, its operands') to "l"; -1 when
 * there are too many. */
static int add_params(struct pb_poly_local *l, MlirValue o, int depth)
{
	MlirOperation def = nest_apply(l, o);
	if (!mlirOperationIsNull(def) && depth <= 8) {
		for (intptr_t i = 0; i < mlirOperationGetNumOperands(def); i++)
			if (add_params(l, mlirOperationGetOperand(def, i),
				       depth + 1))
				return -1;
		return 0;
	}
	if (!is_param(l, o))
		return 0;
	return value_index(l->par, &l->np, PB_POLY_LOCAL_MAXPAR, o) < 0 ? -1
									: 0;
}

/* Collect the parameters of the accesses in "ops" for "l" (values defined
 * outside the nest that are not constants); -1 when there are too many. */
static int collect_params(struct pb_poly_local *l, const struct pb_ir_ops *ops)
{
	for (int i = 0; i < ops->n; i++) {
		int mem, w;
		if (!pb_poly_access_operand(ops->v[i], &mem, &w))
			continue;
		for (intptr_t j = mem + 1;
		     j < mlirOperationGetNumOperands(ops->v[i]); j++)
			if (add_params(l, mlirOperationGetOperand(ops->v[i], j),
				       0))
				return -1;
	}
	return 0;
}

/* The domain K[k] : 0 <= k < trip of "l", in its "np" parameters. */
static __isl_give isl_set *domain_of(const struct pb_poly_local *l)
{
	isl_space *sp = isl_space_set_alloc(l->ctx, l->np, l->d);
	for (int i = 0; i < l->np; i++) {
		char name[16];
		snprintf(name, sizeof(name), "p%d", i);
		sp = isl_space_set_dim_id(sp, isl_dim_param, i,
					  isl_id_alloc(l->ctx, name, NULL));
	}
	sp = isl_space_set_tuple_name(sp, isl_dim_set, "K");
	isl_set *s = isl_set_universe(sp);
	for (int k = 0; k < l->d; k++) {
		s = isl_set_lower_bound_si(s, isl_dim_set, k, 0);
		s = isl_set_upper_bound_si(s, isl_dim_set, k,
					   l->dim[k].trip - 1);
	}
	return s;
}

struct pb_poly_local *pb_poly_local_build(isl_ctx *ctx, MlirOperation nest,
					  int d, const struct pb_poly_dim *dim,
					  const MlirOperation *skip, int nskip,
					  unsigned flags)
{
	struct pb_ir_ops ops = {0};
	if (d < 0 || d > PB_POLY_LOCAL_MAXDIM)
		return NULL;
	struct pb_poly_local *l = calloc(1, sizeof(*l));
	l->ctx = ctx;
	l->nest = nest;
	l->flags = flags;
	l->d = d;
	for (int k = 0; k < d; k++)
		l->dim[k] = dim[k];
	pb_ir_collect(nest, NULL, &ops);
	int ok = !collect_params(l, &ops);
	if (ok)
		l->domain = domain_of(l);
	l->access = calloc(ops.n + 1, sizeof(*l->access));
	for (int i = 0; ok && i < ops.n; i++) {
		MlirOperation op = ops.v[i];
		int mem, w, skipped = 0;
		if (!pb_poly_access_operand(op, &mem, &w))
			continue;
		for (int j = 0; j < nskip; j++)
			skipped |= mlirOperationEqual(op, skip[j]);
		MlirValue root = pb_poly_root(mlirOperationGetOperand(op, mem));
		if (skipped || pb_ir_defined_in(root, nest))
			continue;
		int ri = mlirTypeIsAMemRef(mlirValueGetType(root))
			? value_index(l->root, &l->nroot,
				      PB_POLY_LOCAL_MAXROOT, root) : -1;
		if (ri < 0) {
			ok = 0;
			break;
		}
		struct pb_poly_laccess *a = &l->access[l->naccess++];
		a->op = op;
		a->write = w;
		a->root = ri;
		ok = !access_map(l, op, mem, a);
	}
	pb_ir_ops_free(&ops);
	if (!ok || !l->domain) {
		pb_poly_local_free(l);
		return NULL;
	}
	return l;
}

void pb_poly_local_free(struct pb_poly_local *l)
{
	if (!l)
		return;
	for (int i = 0; i < l->naccess; i++) {
		isl_map_free(l->access[i].map);
		isl_multi_aff_free(l->access[i].sub);
	}
	free(l->access);
	isl_set_free(l->domain);
	free(l);
}

int pb_poly_local_conflict_free(const struct pb_poly_local *l)
{
	int ok = 1;
	isl_map *id = isl_map_identity(isl_space_map_from_set(
		isl_set_get_space(l->domain)));
	for (int i = 0; ok && i < l->naccess; i++) {
		const struct pb_poly_laccess *a = &l->access[i];
		if (!a->write)
			continue;
		for (int j = 0; ok && j < l->naccess; j++) {
			const struct pb_poly_laccess *b = &l->access[j];
			if (a->root != b->root)
				continue;
			isl_map *c = isl_map_apply_range(
				isl_map_copy(a->map),
				isl_map_reverse(isl_map_copy(b->map)));
			c = isl_map_subtract(c, isl_map_copy(id));
			ok = isl_map_is_empty(c) == isl_bool_true;
			isl_map_free(c);
		}
	}
	isl_map_free(id);
	return ok;
}

/* The tile { K[k] : o<k> <= k < o<k> + tile[k] } of "l" in its parameters
 * and the tile origins o<k> (appended to them). */
static __isl_give isl_set *tile_of(const struct pb_poly_local *l,
				   const int64_t *tile)
{
	isl_space *sp = isl_set_get_space(l->domain);
	int np = (int)isl_space_dim(sp, isl_dim_param);
	sp = isl_space_add_dims(sp, isl_dim_param, l->d);
	for (int k = 0; k < l->d; k++) {
		char name[16];
		snprintf(name, sizeof(name), "o%d", k);
		sp = isl_space_set_dim_id(sp, isl_dim_param, np + k,
					  isl_id_alloc(l->ctx, name, NULL));
	}
	isl_set *s = isl_set_universe(isl_space_copy(sp));
	isl_local_space *ls = isl_local_space_from_space(sp);
	for (int k = 0; k < l->d; k++) {
		isl_aff *a = isl_aff_var_on_domain(isl_local_space_copy(ls),
						   isl_dim_set, k);
		a = isl_aff_sub(a, isl_aff_var_on_domain(
			isl_local_space_copy(ls), isl_dim_param, np + k));
		isl_aff *b = isl_aff_neg(isl_aff_copy(a));
		b = isl_aff_add_constant_si(b, tile[k] - 1);
		s = isl_set_intersect(s, isl_pw_aff_nonneg_set(
				      isl_pw_aff_from_aff(a)));
		s = isl_set_intersect(s, isl_pw_aff_nonneg_set(
				      isl_pw_aff_from_aff(b)));
	}
	isl_local_space_free(ls);
	return s;
}

__isl_give isl_set *pb_poly_local_footprint(const struct pb_poly_local *l,
					    int n, const int *acc,
					    const int64_t *tile)
{
	isl_set *dom = tile ? tile_of(l, tile) : NULL;
	isl_set *fp = NULL;
	for (int i = 0; i < n; i++) {
		isl_map *m = isl_map_copy(l->access[acc[i]].map);
		if (dom) {
			m = isl_map_align_params(m, isl_set_get_space(dom));
			m = isl_map_intersect_domain(m, isl_set_copy(dom));
		}
		isl_set *r = isl_map_range(m);
		fp = fp ? isl_set_union(fp, r) : r;
	}
	isl_set_free(dom);
	return n > 1 ? isl_set_coalesce(fp) : fp;
}

/* The whole buffer "rv" as a box on the parameters of "sp" (a set space
 * B<r>[...]), when its shape is static. */
static __isl_give isl_fixed_box *whole_box(MlirValue rv,
					   __isl_take isl_space *sp)
{
	MlirType t = mlirValueGetType(rv);
	isl_set *s = isl_set_universe(sp);
	for (int i = 0; i < (int)mlirShapedTypeGetRank(t); i++) {
		int64_t e = mlirShapedTypeGetDimSize(t, i);
		if (mlirShapedTypeIsDynamicSize(e))
			break;
		s = isl_set_lower_bound_si(s, isl_dim_set, i, 0);
		s = isl_set_upper_bound_si(s, isl_dim_set, i, e - 1);
	}
	isl_fixed_box *box = isl_set_get_simple_fixed_box_hull(s);
	isl_set_free(s);
	return box;
}

__isl_give isl_fixed_box *pb_poly_local_box(const struct pb_poly_local *l,
					    int n, const int *acc,
					    const int64_t *tile)
{
	isl_set *fp = pb_poly_local_footprint(l, n, acc, tile);
	if (!fp)
		return NULL;
	for (int i = 0; i < n; i++)
		if (!l->access[acc[i]].exact) {
			isl_fixed_box *box = whole_box(
				l->root[l->access[acc[i]].root],
				isl_set_get_space(fp));
			isl_set_free(fp);
			return box;
		}
	isl_fixed_box *box = isl_set_get_simple_fixed_box_hull(fp);
	isl_set_free(fp);
	return box;
}

int pb_poly_local_overlap(const struct pb_poly_local *l, int a, int b,
			  const int64_t *tile)
{
	isl_set *fa = pb_poly_local_footprint(l, 1, &a, tile);
	isl_set *fb = pb_poly_local_footprint(l, 1, &b, tile);
	isl_bool e = isl_set_is_disjoint(fa, fb);
	isl_set_free(fa);
	isl_set_free(fb);
	return e < 0 ? -1 : !e;
}

int pb_poly_local_coef(const struct pb_poly_local *l, int a, int i, int k,
		       int64_t *c)
{
	const struct pb_poly_laccess *acc = &l->access[a];
	if (!acc->exact || k < 0 || k >= l->d)
		return -1;
	isl_aff *f = isl_multi_aff_get_at(acc->sub, i);
	int ok = f != NULL;
	for (int j = 0; ok && j < isl_aff_dim(f, isl_dim_div); j++) {
		isl_aff *dv = isl_aff_get_div(f, j);
		ok = isl_aff_involves_dims(dv, isl_dim_in, k, 1) == isl_bool_false;
		isl_aff_free(dv);
	}
	isl_val *v = ok ? isl_aff_get_coefficient_val(f, isl_dim_in, k) : NULL;
	ok = ok && v && isl_val_is_int(v);
	if (ok)
		*c = isl_val_get_num_si(v);
	isl_val_free(v);
	isl_aff_free(f);
	return ok ? 0 : -1;
}
