/* Memref views in lib/poly: which operations alias their source, the root
 * buffer of a memref value, and how subscripts of a view become subscripts
 * of its source (cast, collapse_shape, expand_shape, static subview). */
#include <stdint.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "poly/internal.h"

/* The view operations: their result is a memref aliasing operand 0. */
static const char *const view_ops[] = {
	"memref.cast",
	"memref.collapse_shape",
	"memref.expand_shape",
	"memref.subview",
	"memref.reinterpret_cast",
	"memref.reshape",
	"memref.transpose",
	"memref.view",
	"memref.memory_space_cast",
	"memref.assume_alignment",
	NULL,
};

int pb_poly_is_view(MlirOperation op)
{
	for (const char *const *p = view_ops; *p; p++)
		if (pb_ir_op_is(op, *p))
			return 1;
	return 0;
}

int pb_poly_is_memref(MlirValue v)
{
	MlirType t = mlirValueGetType(v);
	return mlirTypeIsAMemRef(t) || mlirTypeIsAUnrankedMemRef(t);
}

MlirValue pb_poly_root(MlirValue v)
{
	while (mlirValueIsAOpResult(v)) {
		MlirOperation def = mlirOpResultGetOwner(v);
		if (!pb_poly_is_view(def) ||
		    mlirOperationGetNumOperands(def) < 1)
			break;
		v = mlirOperationGetOperand(def, 0);
	}
	return v;
}

/* Dimension "i" of the static shape of ranked memref "v", or -1 when it
 * is dynamic (or "v" is not ranked). */
static int64_t dim_of(MlirValue v, int i)
{
	MlirType t = mlirValueGetType(v);
	if (!mlirTypeIsAMemRef(t) || i >= mlirShapedTypeGetRank(t) ||
	    mlirShapedTypeIsDynamicDim(t, i))
		return -1;
	return mlirShapedTypeGetDimSize(t, i);
}

/* Rank of memref "v", or -1 when unranked. */
static int rank_of(MlirValue v)
{
	MlirType t = mlirValueGetType(v);
	return mlirTypeIsAMemRef(t) ? (int)mlirShapedTypeGetRank(t) : -1;
}

/* A list of "n" zero subscripts on domain space "dom". */
static __isl_give isl_aff_list *zeros(__isl_keep isl_space *dom, int n)
{
	isl_aff_list *l = isl_aff_list_alloc(isl_space_get_ctx(dom), n);
	for (int i = 0; i < n; i++)
		l = isl_aff_list_add(l, isl_aff_zero_on_domain(
				isl_local_space_from_space(isl_space_copy(dom))));
	return l;
}

/* Entry "j" of group "g" of reassociation attribute "ra". */
static int reassoc_at(MlirAttribute ra, intptr_t g, intptr_t j)
{
	MlirAttribute grp = mlirArrayAttrGetElement(ra, g);
	return (int)mlirIntegerAttrGetValueInt(mlirArrayAttrGetElement(grp, j));
}

/* Number of entries of group "g" of reassociation attribute "ra". */
static intptr_t reassoc_len(MlirAttribute ra, intptr_t g)
{
	return mlirArrayAttrGetNumElements(mlirArrayAttrGetElement(ra, g));
}

/* The reassociation attribute of "op" when it has "n" groups, or a null
 * attribute when it is missing or malformed. */
static MlirAttribute reassoc(MlirOperation op, int n)
{
	MlirAttribute ra = pb_ir_attr(op, "reassociation");
	if (mlirAttributeIsNull(ra) || !mlirAttributeIsAArray(ra) ||
	    mlirArrayAttrGetNumElements(ra) != n)
		return (MlirAttribute){NULL};
	for (intptr_t g = 0; g < n; g++)
		if (!mlirAttributeIsAArray(mlirArrayAttrGetElement(ra, g)))
			return (MlirAttribute){NULL};
	return ra;
}

/* collapse_shape "op" from "src": result subscript x of a group of source
 * dimensions [s0, ..., sk] with static sizes n1..nk (n0 may be dynamic)
 * becomes s_j = (x floordiv (n_{j+1} * ... * n_k)) mod n_j, s_0 without
 * the mod. Source dimensions in no group (all of size 1) get 0. */
static __isl_give isl_aff_list *collapse(MlirOperation op, MlirValue src,
					 __isl_keep isl_space *dom,
					 __isl_take isl_aff_list *idx)
{
	int m = isl_aff_list_n_aff(idx), n = rank_of(src);
	MlirAttribute ra = reassoc(op, m);
	isl_ctx *ctx = isl_space_get_ctx(dom);
	if (mlirAttributeIsNull(ra) || n < 0)
		return isl_aff_list_free(idx);
	isl_aff_list *out = zeros(dom, n);
	for (intptr_t g = 0; out && g < m; g++) {
		int64_t below = 1;
		for (intptr_t j = reassoc_len(ra, g) - 1; j >= 0; j--) {
			int s = reassoc_at(ra, g, j);
			int64_t size = s >= 0 && s < n ? dim_of(src, s) : -1;
			if (s < 0 || s >= n || (j > 0 && size <= 0))
				goto error;
			isl_aff *a = isl_aff_list_get_aff(idx, g);
			a = isl_aff_floor(isl_aff_scale_down_val(a,
					isl_val_int_from_si(ctx, below)));
			if (j > 0)
				a = isl_aff_mod_val(a,
					isl_val_int_from_si(ctx, size));
			out = isl_aff_list_set_aff(out, s, a);
			below *= size;
		}
	}
	isl_aff_list_free(idx);
	return out;
error:
	isl_aff_list_free(out);
	return isl_aff_list_free(idx);
}

/* expand_shape "op" from "src" to "res": the result subscripts x_r0..x_rk
 * of the group of source dimension d (result sizes m_r1..m_rk static) give
 * s_d = sum_j x_rj * (m_r(j+1) * ... * m_rk). */
static __isl_give isl_aff_list *expand(MlirOperation op, MlirValue src,
				       MlirValue res, __isl_keep isl_space *dom,
				       __isl_take isl_aff_list *idx)
{
	int m = isl_aff_list_n_aff(idx), n = rank_of(src);
	MlirAttribute ra = reassoc(op, n);
	isl_ctx *ctx = isl_space_get_ctx(dom);
	if (mlirAttributeIsNull(ra) || n < 0)
		return isl_aff_list_free(idx);
	isl_aff_list *out = zeros(dom, n);
	for (intptr_t d = 0; out && d < n; d++) {
		isl_aff *sum = isl_aff_list_get_aff(out, d);
		int64_t below = 1;
		for (intptr_t j = reassoc_len(ra, d) - 1; j >= 0; j--) {
			int r = reassoc_at(ra, d, j);
			int64_t size = r >= 0 && r < m ? dim_of(res, r) : -1;
			if (r < 0 || r >= m || (j > 0 && size <= 0)) {
				isl_aff_free(sum);
				goto error;
			}
			isl_aff *a = isl_aff_list_get_aff(idx, r);
			a = isl_aff_scale_val(a, isl_val_int_from_si(ctx, below));
			sum = isl_aff_add(sum, a);
			below *= size;
		}
		out = isl_aff_list_set_aff(out, d, sum);
	}
	isl_aff_list_free(idx);
	return out;
error:
	isl_aff_list_free(out);
	return isl_aff_list_free(idx);
}

/* Static array attribute "name" of "op" with "n" entries, or a null one. */
static MlirAttribute static_array(MlirOperation op, const char *name, int n)
{
	MlirAttribute a = pb_ir_attr(op, name);
	if (mlirAttributeIsNull(a) || !mlirAttributeIsADenseI64Array(a) ||
	    mlirDenseArrayGetNumElements(a) != n)
		return (MlirAttribute){NULL};
	return a;
}

/* subview "op" of "src" to "res" with static offsets and strides: source
 * dimension j kept as result dimension r gets off_j + stride_j * x_r, a
 * dropped one (size 1, as many as the rank falls, leftmost first) gets
 * off_j. Which of several size-1 dimensions is dropped does not change
 * the subscripts of in-bounds accesses (they are all 0). */
static __isl_give isl_aff_list *subview(MlirOperation op, MlirValue src,
					MlirValue res, __isl_keep isl_space *dom,
					__isl_take isl_aff_list *idx)
{
	int m = isl_aff_list_n_aff(idx), n = rank_of(src);
	isl_ctx *ctx = isl_space_get_ctx(dom);
	MlirAttribute off = static_array(op, "static_offsets", n);
	MlirAttribute size = static_array(op, "static_sizes", n);
	MlirAttribute str = static_array(op, "static_strides", n);
	if (n < m || rank_of(res) != m || mlirAttributeIsNull(off) ||
	    mlirAttributeIsNull(size) || mlirAttributeIsNull(str))
		return isl_aff_list_free(idx);
	isl_aff_list *out = zeros(dom, n);
	int r = 0;
	for (int j = 0; out && j < n; j++) {
		int64_t o = mlirDenseI64ArrayGetElement(off, j);
		int64_t z = mlirDenseI64ArrayGetElement(size, j);
		int64_t s = mlirDenseI64ArrayGetElement(str, j);
		int keep = m - r == n - j || z != 1;
		if (mlirShapedTypeIsDynamicStrideOrOffset(o) ||
		    mlirShapedTypeIsDynamicStrideOrOffset(s) || (keep && r >= m))
			goto error;
		isl_aff *a = isl_aff_list_get_aff(out, j);
		if (keep) {
			isl_aff *x = isl_aff_list_get_aff(idx, r++);
			x = isl_aff_scale_val(x, isl_val_int_from_si(ctx, s));
			a = isl_aff_add(a, x);
		}
		a = isl_aff_add_constant_si(a, o);
		out = isl_aff_list_set_aff(out, j, a);
	}
	isl_aff_list_free(idx);
	return out;
error:
	isl_aff_list_free(out);
	return isl_aff_list_free(idx);
}

/* Is "op" a view whose subscripts are those of its source? */
static int is_identity_view(MlirOperation op)
{
	return pb_ir_op_is(op, "memref.cast") ||
	       pb_ir_op_is(op, "memref.memory_space_cast") ||
	       pb_ir_op_is(op, "memref.assume_alignment");
}

__isl_give isl_aff_list *pb_poly_view_compose(MlirValue v,
					      __isl_keep isl_space *dom,
					      __isl_take isl_aff_list *idx)
{
	while (idx && mlirValueIsAOpResult(v)) {
		MlirOperation def = mlirOpResultGetOwner(v);
		if (!pb_poly_is_view(def))
			break;
		MlirValue src = mlirOperationGetOperand(def, 0);
		if (pb_ir_op_is(def, "memref.collapse_shape"))
			idx = collapse(def, src, dom, idx);
		else if (pb_ir_op_is(def, "memref.expand_shape"))
			idx = expand(def, src, v, dom, idx);
		else if (pb_ir_op_is(def, "memref.subview"))
			idx = subview(def, src, v, dom, idx);
		else if (!is_identity_view(def) || rank_of(src) != rank_of(v))
			idx = isl_aff_list_free(idx);
		v = src;
	}
	return idx;
}
