/* A kernel nest of the fuse stage as a Tile IR block-level program
 * (docs/tileir.md, "The translation").
 *
 * A kernel function of pb-fuse holds nests whose outer loops are a band
 * of parallel loops; everything inside is per band point: loads and
 * stores of the kernel's buffers, private buffers (memref.alloca), inner
 * affine.for loops (maps and reductions), and scalar arithmetic. The
 * translation runs that body once on tiles instead of scalars:
 *
 * - every loop is a dimension: a band loop's dimension is cut into block
 *   tiles (the grid: one Tile IR block per tile, get_tile_block_id), an
 *   inner loop's is covered by one tile of its whole (padded) extent;
 *   sibling inner loops at the same depth with the same extent share one
 *   dimension, so that what one stores into a private buffer the next
 *   reads back element for element;
 * - a scalar value becomes a tile over the dimensions it varies with
 *   (its "mask"), in the order of the dimensions; operands of different
 *   masks are reshaped and broadcast to their union;
 * - a load whose subscripts are loop counters or constants reads a tile
 *   of a partition view of the buffer's tensor view (reshaped and
 *   permuted to the dimensions' order); stores are deferred to the end
 *   of the band point, so that a buffer written and read again in the
 *   same kernel (an accumulator in global memory) is forwarded;
 * - private buffers and written global buffers are state: the tile last
 *   stored at each access pattern;
 * - a value read from state inside a loop that the pattern does not
 *   follow, combined by addf, mulf, maximumf or minimumf with a value of
 *   the loop and stored back is a reduction: reduce (masked with the
 *   identity where the tile pads the extent) and combine with the state;
 * - a loop whose body is "acc += ext(A[.., k]) * ext(B[k, ..])" is a
 *   contraction: a Tile IR for over k tiles with two loads and mmaf.
 *
 * - integers and booleans are tiles of i1 .. i64 (index as i32; a
 *   boolean buffer holds bytes), signedness the operation's, as in arith;
 *   a constant buffer is a global of the module (get_global); a run of
 *   top-level operations outside loops is a nest of 0-d tiles.
 *
 * What this cannot express (a loop-carried value that is neither a
 * reduction, a select of one nor an inclusive scan; a store through a
 * subscript that is not a counter or a constant) is reported at the
 * operation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "core/tensor.h"
#include "tileir/internal.h"
#include "tileir/ops.h"

#define MAXD 16
#define MAXR 8
/* The most elements of the tile of a nest's non-contraction values. */
#define TILE_BUDGET 4096

struct dim {
	int64_t extent, tile;
	int band;  /* a band dimension (else an inner loop's) */
	int depth; /* inner loops: nesting depth below the band */
	int grid;  /* the block id component (0 x, 1 y, 2 z: the z of
		      every dimension past the third, delinearized) or -1 */
	int64_t blocks; /* the number of its blocks */
	int blk;   /* the value of its block index (when grid >= 0) */
};

enum kind { VAL, CARRIED, RED };

/* A value of the program: Tile IR value "id", a tile of "elem" over the
 * dimensions in "mask". CARRIED: the state of location "loc" read in a
 * loop it does not follow (its value before the loop); RED: such a state
 * combined by "op" with the value "id" over "mask". */
struct tval {
	int id;
	uint32_t mask;
	enum pb_tileir_elem elem;
	enum kind kind;
	int loc;
	const char *op;
};

/* A location of state: a buffer and an access pattern (per subscript a
 * dimension, or -1 and a constant). */
struct loc {
	MlirValue mem;
	int global;
	int n;
	int sub[MAXR];
	int64_t cst[MAXR];
	struct tval val;
	int store_level; /* loop level of the last store, -1 none */
	MlirOperation where; /* the last store */
	int order;	     /* when it was stored (a global's is written
				back in this order), 0 when not */
};

struct tr {
	struct pb_ctx *ctx;
	struct pb_tileir *w;
	MlirOperation func;
	int ndims, nband;
	struct dim d[MAXD];
	struct {
		MlirValue v;
		int dim;
	} iv[64];
	int niv;
	struct {
		MlirValue v;
		struct tval t;
	} *vals;
	int nvals, capvals;
	struct loc *locs;
	int nlocs, caplocs;
	int loops[MAXD]; /* the dimensions of the enclosing inner loops */
	MlirOperation loop_ops[MAXD]; /* and the loops */
	int nloops;
	int token, bid, i32, tok;
	int *argv; /* per kernel argument: its pointer value */
	int dimidx[MAXD]; /* per dimension its index tile, or -1 */
	int zero_i32;
	/* the contraction of the nest, for the tile sizes */
	int mm_m, mm_n;
	enum pb_tileir_elem mm_elem;
	int nstores;
};

static int body(struct tr *t, MlirBlock b);
static int loop(struct tr *t, MlirOperation op, int64_t extent, MlirBlock b);
static int inner_parallel(struct tr *t, MlirOperation op);

/* Report "msg" at "op". */
static int fail(struct tr *t, MlirOperation op, const char *msg)
{
	MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
	pb_error_at(t->ctx, mlirOperationGetLocation(op),
		    "cannot translate '%.*s' to Tile IR: %s", (int)n.length,
		    n.data, msg);
	return PB_ERR;
}

static int64_t pow2ceil(int64_t x)
{
	int64_t p = 1;
	while (p < x)
		p <<= 1;
	return p;
}

/* The Tile IR element type of the MLIR scalar type "ty" (index as i32,
 * integers signless as in MLIR); -1 when none. */
static int elem_of(MlirType ty)
{
	if (mlirTypeIsAF32(ty))
		return PB_TILEIR_F32;
	if (mlirTypeIsAF16(ty))
		return PB_TILEIR_F16;
	if (mlirTypeIsABF16(ty))
		return PB_TILEIR_BF16;
	if (mlirTypeIsAF64(ty))
		return PB_TILEIR_F64;
	if (mlirTypeIsAIndex(ty))
		return PB_TILEIR_I32;
	if (!mlirTypeIsAInteger(ty))
		return -1;
	switch (mlirIntegerTypeGetWidth(ty)) {
	case 1:
		return PB_TILEIR_I1;
	case 8:
		return PB_TILEIR_I8;
	case 16:
		return PB_TILEIR_I16;
	case 32:
		return PB_TILEIR_I32;
	case 64:
		return PB_TILEIR_I64;
	}
	return -1;
}

static int is_float(int e)
{
	return e == PB_TILEIR_F16 || e == PB_TILEIR_BF16 || e == PB_TILEIR_F32 ||
	       e == PB_TILEIR_F64;
}

/* The bits of element type "e". */
static int bits_of(int e)
{
	switch (e) {
	case PB_TILEIR_I1:
		return 1;
	case PB_TILEIR_I8:
		return 8;
	case PB_TILEIR_I16:
	case PB_TILEIR_F16:
	case PB_TILEIR_BF16:
		return 16;
	case PB_TILEIR_I64:
	case PB_TILEIR_F64:
		return 64;
	}
	return 32;
}

/* The element type a buffer of "e" holds in memory: a byte per i1, as
 * pb's runtimes lay out booleans. */
static int stored(int e)
{
	return e == PB_TILEIR_I1 ? PB_TILEIR_I8 : e;
}

/* The element type of the buffer "mem", -1 when Tile IR has none. */
static int mem_elem(MlirValue mem)
{
	MlirType mt = mlirValueGetType(mem);
	return mlirTypeIsAMemRef(mt) ? elem_of(mlirShapedTypeGetElementType(mt))
				     : -1;
}

/* The shape of a tile over "mask" into "shape"; its rank. */
static int shape_of(const struct tr *t, uint32_t mask, int64_t *shape)
{
	int r = 0;
	for (int i = 0; i < t->ndims; i++)
		if (mask & (1u << i))
			shape[r++] = t->d[i].tile;
	return r;
}

/* The type of a tile of "elem" over "mask". */
static int tile_ty(struct tr *t, enum pb_tileir_elem elem, uint32_t mask)
{
	int64_t shape[MAXD];
	int r = shape_of(t, mask, shape);
	return pb_tileir_type_tile(t->w, pb_tileir_type_elem(t->w, elem),
				   shape, r);
}

static int popcount(uint32_t m)
{
	return __builtin_popcount(m);
}

/* The position of dimension "dim" among those of "mask". */
static int pos_in(uint32_t mask, int dim)
{
	return popcount(mask & ((1u << dim) - 1));
}

/* "x" reshaped and broadcast to the dimensions "to" (a superset). */
static int bring(struct tr *t, const struct tval *x, uint32_t to)
{
	if (x->mask == to)
		return x->id;
	int64_t shape[MAXD];
	int r = 0;
	for (int i = 0; i < t->ndims; i++)
		if (to & (1u << i))
			shape[r++] = x->mask & (1u << i) ? t->d[i].tile : 1;
	int el = pb_tileir_type_elem(t->w, x->elem);
	int v = pb_tileir_reshape(t->w, pb_tileir_type_tile(t->w, el, shape, r),
				  x->id);
	return pb_tileir_broadcast(t->w, tile_ty(t, x->elem, to), v);
}

static void set_val(struct tr *t, MlirValue v, struct tval x)
{
	if (t->nvals == t->capvals) {
		t->capvals = t->capvals ? 2 * t->capvals : 64;
		t->vals = realloc(t->vals, t->capvals * sizeof(*t->vals));
	}
	t->vals[t->nvals].v = v;
	t->vals[t->nvals++].t = x;
}

static int find_val(const struct tr *t, MlirValue v)
{
	for (int i = t->nvals - 1; i >= 0; i--)
		if (mlirValueEqual(t->vals[i].v, v))
			return i;
	return -1;
}

/* The dimension of loop counter "v", or -1. */
static int iv_dim(const struct tr *t, MlirValue v)
{
	for (int i = t->niv - 1; i >= 0; i--)
		if (mlirValueEqual(t->iv[i].v, v))
			return t->iv[i].dim;
	return -1;
}

/* The bytes of the float "x" as element type "e". */
static size_t float_bytes(double x, enum pb_tileir_elem e, uint8_t *out)
{
	if (e == PB_TILEIR_F16 || e == PB_TILEIR_BF16) {
		uint16_t h = e == PB_TILEIR_F16 ? pb_f16_from_float((float)x)
						: pb_bf16_from_float((float)x);
		memcpy(out, &h, 2);
		return 2;
	}
	if (e == PB_TILEIR_F64) {
		memcpy(out, &x, 8);
		return 8;
	}
	float f = (float)x;
	memcpy(out, &f, 4);
	return 4;
}

/* The bytes of the integer "x" as element type "e" (an i1 true is all
 * ones, as MLIR's dense elements hold it). */
static size_t int_bytes(int64_t x, enum pb_tileir_elem e, uint8_t *out)
{
	if (e == PB_TILEIR_I1) {
		out[0] = x & 1 ? 0xff : 0;
		return 1;
	}
	size_t n = bits_of(e) / 8;
	for (size_t i = 0; i < n; i++)
		out[i] = (uint64_t)x >> (8 * i) & 0xff;
	return n;
}

/* A constant scalar tile of "e" holding "x". */
static struct tval fconst(struct tr *t, double x, enum pb_tileir_elem e)
{
	uint8_t b[8];
	size_t n = float_bytes(x, e, b);
	int id = pb_tileir_const(t->w, tile_ty(t, e, 0), b, n);
	return (struct tval){id, 0, e, VAL, -1, NULL};
}

/* A constant scalar tile of the integer type "e" holding "x". */
static struct tval intconst(struct tr *t, int64_t x, enum pb_tileir_elem e)
{
	uint8_t b[8];
	size_t n = int_bytes(x, e, b);
	int id = pb_tileir_const(t->w, tile_ty(t, e, 0), b, n);
	return (struct tval){id, 0, e, VAL, -1, NULL};
}

/* A scalar i32 tile holding "x". */
static int iconst(struct tr *t, int32_t x)
{
	return pb_tileir_const(t->w, t->i32, &x, 4);
}

/* The index tile of dimension "dim": its counter's values in the block,
 * iota(T) plus the block's first (block id times T) along the grid. */
static int dim_index(struct tr *t, int dim)
{
	if (t->dimidx[dim] >= 0)
		return t->dimidx[dim];
	int64_t n = t->d[dim].tile;
	int ty = pb_tileir_type_tile(t->w, pb_tileir_type_elem(t->w, PB_TILEIR_I32),
				     &n, 1);
	int v = pb_tileir_iota(t->w, ty);
	if (t->d[dim].grid >= 0) {
		int first = pb_tileir_ibin(t->w, PB_TILEIR_MULI, t->i32,
					   t->d[dim].blk,
					   iconst(t, (int32_t)n));
		struct tval f = {first, 0, PB_TILEIR_I32, VAL, -1, NULL};
		v = pb_tileir_ibin(t->w, PB_TILEIR_ADDI, ty, v,
				   bring(t, &f, 1u << dim));
	}
	return t->dimidx[dim] = v;
}

/* The value of "v" into "*x": translated already, or an arith.constant
 * (a float scalar) translated here. */
static int get(struct tr *t, MlirOperation user, MlirValue v, struct tval *x)
{
	int i = find_val(t, v);
	if (i >= 0) {
		*x = t->vals[i].t;
		return PB_OK;
	}
	int dim = iv_dim(t, v);
	if (dim >= 0) {
		*x = (struct tval){dim_index(t, dim), 1u << dim, PB_TILEIR_I32,
				   VAL, -1, NULL};
		return PB_OK;
	}
	MlirOperation d = mlirValueIsAOpResult(v) ? mlirOpResultGetOwner(v)
						  : (MlirOperation){NULL};
	if (mlirOperationIsNull(d) || !pb_ir_op_is(d, "arith.constant"))
		return fail(t, user, "an operand is neither a value of the "
				     "nest nor a constant");
	MlirAttribute a = pb_ir_attr(d, "value");
	MlirType vt = mlirValueGetType(v);
	int e = elem_of(vt);
	if (mlirAttributeIsAInteger(a) && e >= 0 && !is_float(e)) {
		int64_t c = mlirIntegerAttrGetValueInt(a);
		if (mlirTypeIsAIndex(vt) && c != (int32_t)c)
			return fail(t, user, "an index constant past 32 bits");
		*x = intconst(t, c, e);
	} else if (mlirAttributeIsAFloat(a) && e >= 0 && is_float(e)) {
		*x = fconst(t, mlirFloatAttrGetValueDouble(a), e);
	} else {
		return fail(t, user, "an operand is a constant that is not an "
				     "integer or float scalar");
	}
	set_val(t, v, *x);
	return PB_OK;
}

/* An operand of "op" that must be a plain value. */
static int operand(struct tr *t, MlirOperation op, int i, struct tval *x)
{
	if (get(t, op, mlirOperationGetOperand(op, i), x))
		return PB_ERR;
	if (x->kind != VAL)
		return fail(t, op, "a value read in a loop it does not follow "
				   "is used other than as a reduction");
	return PB_OK;
}

/* The access of affine.load/affine.store "op" (memref operand "mi",
 * subscripts after it) as a pattern into "l"; its memref type into
 * "*mt". */
static int access_q(struct tr *t, MlirOperation op, int mi, struct loc *l,
		    int quiet)
{
	MlirAffineMap map = mlirAffineMapAttrGetValue(pb_ir_attr(op, "map"));
	l->mem = mlirOperationGetOperand(op, mi);
	l->n = mlirAffineMapGetNumResults(map);
	if (l->n > MAXR)
		return fail(t, op, "too many subscripts");
	uint32_t seen = 0;
	for (int k = 0; k < l->n; k++) {
		MlirAffineExpr e = mlirAffineMapGetResult(map, k);
		l->sub[k] = -1;
		l->cst[k] = 0;
		if (mlirAffineExprIsAConstant(e)) {
			l->cst[k] = mlirAffineConstantExprGetValue(e);
			continue;
		}
		int dim = -1;
		if (mlirAffineExprIsADim(e))
			dim = iv_dim(t, mlirOperationGetOperand(
					       op, mi + 1 +
							   mlirAffineDimExprGetPosition(e)));
		if (dim < 0 && quiet)
			return PB_ERR;
		if (dim < 0)
			return fail(t, op, "a subscript is neither a loop "
					   "counter nor a constant (no tile "
					   "of a tensor view reads it)");
		if (seen & (1u << dim) && quiet)
			return PB_ERR;
		if (seen & (1u << dim))
			return fail(t, op, "two subscripts follow the same loop");
		seen |= 1u << dim;
		l->sub[k] = dim;
	}
	return PB_OK;
}

static int access(struct tr *t, MlirOperation op, int mi, struct loc *l)
{
	return access_q(t, op, mi, l, 0);
}

static uint32_t loc_mask(const struct loc *l)
{
	uint32_t m = 0;
	for (int k = 0; k < l->n; k++)
		if (l->sub[k] >= 0)
			m |= 1u << l->sub[k];
	return m;
}

/* The state location of pattern "l" (added when new; NULL for a global
 * buffer with no state when "add" is 0). Reports (returns -2) a global
 * buffer accessed with another pattern than the one stored. */
static int find_loc(struct tr *t, MlirOperation op, const struct loc *l,
		    int add)
{
	for (int i = 0; i < t->nlocs; i++) {
		struct loc *s = &t->locs[i];
		if (!mlirValueEqual(s->mem, l->mem))
			continue;
		if (s->n == l->n && !memcmp(s->sub, l->sub, l->n * sizeof(int)) &&
		    !memcmp(s->cst, l->cst, l->n * sizeof(int64_t)))
			return i;
		if (s->global) {
			fail(t, op, "a buffer written in the kernel is accessed "
				    "with another pattern");
			return -2;
		}
	}
	if (!add)
		return -1;
	if (t->nlocs == t->caplocs) {
		t->caplocs = t->caplocs ? 2 * t->caplocs : 16;
		t->locs = realloc(t->locs, t->caplocs * sizeof(*t->locs));
	}
	struct loc *s = &t->locs[t->nlocs];
	*s = *l;
	s->global = mlirValueIsABlockArgument(l->mem);
	s->store_level = -1;
	s->where = (MlirOperation){NULL};
	s->order = 0;
	s->val.kind = VAL;
	s->val.id = -1;
	return t->nlocs++;
}

/* The argument number of the kernel buffer "mem", or -1. */
static int arg_no(const struct tr *t, MlirValue mem)
{
	MlirBlock entry = pb_ir_entry_block(t->func);
	for (intptr_t i = 0; i < mlirBlockGetNumArguments(entry); i++)
		if (mlirValueEqual(mlirBlockGetArgument(entry, i), mem))
			return (int)i;
	return -1;
}

/* The pointer to the first element of buffer "mem" (a view's offset
 * not added): a kernel argument's, or a constant global's (get_global at
 * the nest's start); -1 reported at "op". */
static int base_of(struct tr *t, MlirOperation op, MlirValue mem)
{
	MlirType mt = mlirValueGetType(mem);
	int arg = arg_no(t, mem), i = find_val(t, mem);
	if (!mlirTypeIsAMemRef(mt) || !mlirShapedTypeHasStaticShape(mt) ||
	    (arg < 0 && i < 0)) {
		fail(t, op, "the buffer is not a statically shaped argument of "
			    "the kernel or constant global");
		return -1;
	}
	if (mem_elem(mem) < 0) {
		fail(t, op, "the buffer's element type has no Tile IR form");
		return -1;
	}
	return arg >= 0 ? t->argv[arg] : t->vals[i].t.id;
}

/* A partition view of kernel buffer "l->mem" in tiles of the pattern's
 * dimensions (the tile of "tiles" when given, for a contraction's k),
 * with zero padding when "pad". Its tile type into "*ty", the block
 * indices into "idx" (the dimension "kdim" indexed by "kidx"). */
static int view(struct tr *t, MlirOperation op, const struct loc *l, int pad,
		int kdim, int64_t ktile, int kidx, int *ty, int *idx)
{
	MlirType mt = mlirValueGetType(l->mem);
	int base = base_of(t, op, l->mem);
	if (base < 0)
		return PB_ERR;
	int e = stored(mem_elem(l->mem));
	int64_t shape[MAXR], strides[MAXR], off = 0, tile[MAXR];
	int r = mlirShapedTypeGetRank(mt);
	if (mlirLogicalResultIsFailure(
		    mlirMemRefTypeGetStridesAndOffset(mt, strides, &off)))
		return fail(t, op, "the buffer has no strided layout");
	for (int k = 0; k < r; k++) {
		shape[k] = mlirShapedTypeGetDimSize(mt, k);
		int dim = l->sub[k];
		tile[k] = dim < 0 ? 1 : dim == kdim ? ktile : t->d[dim].tile;
		if (dim < 0)
			idx[k] = iconst(t, (int32_t)l->cst[k]);
		else if (dim == kdim)
			idx[k] = kidx;
		else if (t->d[dim].grid >= 0)
			idx[k] = t->d[dim].blk;
		else
			idx[k] = t->zero_i32;
		/* a stored tile past the loop's extent inside the buffer
		 * would write elements the loop does not touch */
		if (!pad && dim >= 0 && shape[k] > t->d[dim].extent &&
		    t->d[dim].extent % t->d[dim].tile)
			return fail(t, op, "a tile would cover elements past "
					   "the loop's extent");
	}
	int el = pb_tileir_type_elem(t->w, e);
	int ptr_ty = pb_tileir_type_tile(t->w, pb_tileir_type_ptr(t->w, el),
					 NULL, 0);
	if (off)
		base = pb_tileir_offset(t->w, ptr_ty, base, iconst(t, (int32_t)off));
	int tv_ty = pb_tileir_type_tensor_view(t->w, el, shape, strides, r);
	int pv_ty = pb_tileir_type_partition_view(
		t->w, tile, r, tv_ty, NULL, pad ? PB_TILEIR_PAD_ZERO : -1);
	*ty = pb_tileir_type_tile(t->w, el, tile, r);
	int tv = pb_tileir_make_tensor_view(t->w, tv_ty, base);
	return pb_tileir_make_partition_view(t->w, pv_ty, tv);
}

/* The permutation that sorts the dimensions "sub" (memref order, -1s
 * dropped) into ascending order into "perm"; 1 when it is not the
 * identity. Their number into "*n". */
static int sort_perm(const struct loc *l, int64_t *perm, int *n)
{
	int dims[MAXR], k = 0, moved = 0;
	for (int i = 0; i < l->n; i++)
		if (l->sub[i] >= 0)
			dims[k++] = l->sub[i];
	*n = k;
	/* perm[i]: the source position of the i-th smallest dimension */
	for (int i = 0; i < k; i++) {
		int rank = 0;
		for (int j = 0; j < k; j++)
			rank += dims[j] < dims[i];
		perm[rank] = i;
	}
	for (int i = 0; i < k; i++)
		moved |= perm[i] != i;
	return moved;
}

/* Load from partition view "pv" (tile type "ty", block indices "idx")
 * the tile of kernel buffer pattern "l" (the contraction's "kdim" in
 * tiles of "ktile"): without its constant subscripts' dimensions and,
 * with "sort", permuted into the order of the dimensions (a value over
 * them); else in the buffer's order. */
static void load_from(struct tr *t, const struct loc *l, int pv, int ty,
		      const int *idx, int kdim, int64_t ktile, int sort,
		      struct tval *x)
{
	enum pb_tileir_elem e = stored(mem_elem(l->mem));
	int v = pb_tileir_load_view(t->w, ty, t->tok, pv, idx, l->n, t->token);
	int64_t perm[MAXR], shape[MAXD];
	int n;
	int moved = sort_perm(l, perm, &n);
	int el = pb_tileir_type_elem(t->w, e);
	int r = 0;
	for (int k = 0; k < l->n; k++)
		if (l->sub[k] >= 0)
			shape[r++] = l->sub[k] == kdim ? ktile
							: t->d[l->sub[k]].tile;
	if (r != l->n)
		v = pb_tileir_reshape(t->w, pb_tileir_type_tile(t->w, el, shape, r),
				      v);
	if (moved && sort) {
		int64_t sorted[MAXD];
		for (int i = 0; i < n; i++)
			sorted[i] = shape[perm[i]];
		v = pb_tileir_permute(t->w, pb_tileir_type_tile(t->w, el, sorted, n),
				      v, perm, n);
	}
	*x = (struct tval){v, loc_mask(l), e, VAL, -1, NULL};
}

/* The i1 tile of the bytes "x" of a boolean buffer (nonzero is true). */
static struct tval to_bool(struct tr *t, const struct tval *x)
{
	struct tval z = intconst(t, 0, x->elem);
	int id = pb_tileir_cmpi(t->w, tile_ty(t, PB_TILEIR_I1, x->mask),
				PB_TILEIR_NE, 0, x->id, bring(t, &z, x->mask));
	return (struct tval){id, x->mask, PB_TILEIR_I1, VAL, -1, NULL};
}

/* Load the tile of kernel buffer pattern "l" as a value over its
 * dimensions. */
static int load(struct tr *t, MlirOperation op, const struct loc *l,
		struct tval *x)
{
	int idx[MAXR], ty;
	int pv = view(t, op, l, 1, -1, 0, 0, &ty, idx);
	if (pv < 0)
		return PB_ERR;
	load_from(t, l, pv, ty, idx, -1, 0, 1, x);
	if (mem_elem(l->mem) == PB_TILEIR_I1)
		*x = to_bool(t, x);
	return PB_OK;
}

/* Store value "x" (its mask within the pattern's) to kernel buffer
 * pattern "l". */
static int store(struct tr *t, MlirOperation op, const struct loc *l,
		 const struct tval *x)
{
	uint32_t mask = loc_mask(l);
	if (x->mask & ~mask)
		return fail(t, op, "the stored value varies along a loop the "
				   "store does not follow");
	if (mem_elem(l->mem) != (int)x->elem)
		return fail(t, op, "the stored value's type is not the "
				   "buffer's");
	int v = bring(t, x, mask);
	int e = stored(x->elem);
	if (e != (int)x->elem) /* a boolean as a byte */
		v = pb_tileir_exti(t->w, tile_ty(t, e, mask), v, 1);
	int64_t perm[MAXR], inv[MAXR], shape[MAXD], mshape[MAXR];
	int n;
	int moved = sort_perm(l, perm, &n);
	int el = pb_tileir_type_elem(t->w, e);
	int r = 0;
	for (int k = 0; k < l->n; k++)
		if (l->sub[k] >= 0)
			shape[r++] = t->d[l->sub[k]].tile;
	if (moved) {
		for (int i = 0; i < n; i++)
			inv[perm[i]] = i;
		v = pb_tileir_permute(t->w, pb_tileir_type_tile(t->w, el, shape, r),
				      v, inv, n);
	}
	int idx[MAXR], ty;
	int pv = view(t, op, l, 0, -1, 0, 0, &ty, idx);
	if (pv < 0)
		return PB_ERR;
	for (int k = 0; k < l->n; k++)
		mshape[k] = l->sub[k] >= 0 ? t->d[l->sub[k]].tile : 1;
	if (r != l->n)
		v = pb_tileir_reshape(t->w, pb_tileir_type_tile(t->w, el, mshape,
								 l->n), v);
	pb_tileir_store_view(t->w, t->tok, v, pv, idx, l->n, t->token);
	return PB_OK;
}

/* The integer operations of arith (and math) with their Tile IR form:
 * unsigned when "uns", divi rounded by "rounding". */
static const struct iop {
	const char *name;
	enum pb_tileir_ibin op;
	int uns, rounding;
} iops[] = {
	{"arith.addi", PB_TILEIR_ADDI, 0, 0},
	{"arith.subi", PB_TILEIR_SUBI, 0, 0},
	{"arith.muli", PB_TILEIR_MULI, 0, 0},
	{"arith.divsi", PB_TILEIR_DIVI, 0, PB_TILEIR_RZ},
	{"arith.divui", PB_TILEIR_DIVI, 1, PB_TILEIR_RZ},
	{"arith.floordivsi", PB_TILEIR_DIVI, 0, PB_TILEIR_RM},
	{"arith.ceildivsi", PB_TILEIR_DIVI, 0, PB_TILEIR_RP},
	{"arith.ceildivui", PB_TILEIR_DIVI, 1, PB_TILEIR_RP},
	{"arith.remsi", PB_TILEIR_REMI, 0, 0},
	{"arith.remui", PB_TILEIR_REMI, 1, 0},
	{"arith.andi", PB_TILEIR_ANDI, 0, 0},
	{"arith.ori", PB_TILEIR_ORI, 0, 0},
	{"arith.xori", PB_TILEIR_XORI, 0, 0},
	{"arith.maxsi", PB_TILEIR_MAXI, 0, 0},
	{"arith.maxui", PB_TILEIR_MAXI, 1, 0},
	{"arith.minsi", PB_TILEIR_MINI, 0, 0},
	{"arith.minui", PB_TILEIR_MINI, 1, 0},
	{"arith.shli", PB_TILEIR_SHLI, 0, 0},
	{"arith.shrsi", PB_TILEIR_SHRI, 0, 0},
	{"arith.shrui", PB_TILEIR_SHRI, 1, 0},
	{NULL, 0, 0, 0},
};

/* The integer operation "name", or NULL. */
static const struct iop *find_iop(const char *name)
{
	for (int i = 0; iops[i].name; i++)
		if (!strcmp(iops[i].name, name))
			return &iops[i];
	return NULL;
}

/* The identity of reduction "op" on element type "e": the bits of its
 * bytes (little endian). */
static uint64_t identity_bits(const char *op, enum pb_tileir_elem e)
{
	uint8_t b[8] = {0};
	uint64_t bits;
	if (is_float(e)) {
		double f = 0;
		if (!strcmp(op, "arith.mulf"))
			f = 1;
		else if (!strcmp(op, "arith.maximumf") ||
			 !strcmp(op, "arith.maxnumf"))
			f = -INFINITY;
		else if (!strcmp(op, "arith.minimumf") ||
			 !strcmp(op, "arith.minnumf"))
			f = INFINITY;
		float_bytes(f, e, b);
	} else {
		int n = bits_of(e);
		int64_t smin = n == 64 ? INT64_MIN : -((int64_t)1 << (n - 1));
		int64_t i = 0;
		if (!strcmp(op, "arith.muli"))
			i = 1;
		else if (!strcmp(op, "arith.maxsi"))
			i = smin;
		else if (!strcmp(op, "arith.minsi"))
			i = -(smin + 1);
		else if (!strcmp(op, "arith.minui") || !strcmp(op, "arith.andi"))
			i = -1; /* all ones */
		int_bytes(i, e, b);
	}
	memcpy(&bits, b, 8);
	return bits;
}

/* The identity of reduction "op" on element type "e" as a constant
 * scalar tile. */
static struct tval identity(struct tr *t, const char *op,
			    enum pb_tileir_elem e)
{
	uint64_t bits = identity_bits(op, e);
	size_t n = e == PB_TILEIR_I1 ? 1 : bits_of(e) / 8;
	int id = pb_tileir_const(t->w, tile_ty(t, e, 0), &bits, n);
	return (struct tval){id, 0, e, VAL, -1, NULL};
}

/* Combine "a" and "b" (plain values of one element type) by the
 * operation "op" of arith or math. */
static int combine(struct tr *t, MlirOperation at, const char *op,
		   const struct tval *a, const struct tval *b, struct tval *r)
{
	uint32_t m = a->mask | b->mask;
	int ty = tile_ty(t, a->elem, m);
	if (a->elem != b->elem)
		return fail(t, at, "operands of different types");
	int x = bring(t, a, m), y = bring(t, b, m);
	int id, flt = is_float(a->elem);
	const struct iop *io = find_iop(op);
	if (io && !flt)
		id = pb_tileir_iarith(t->w, io->op, ty, io->uns, io->rounding, x,
				      y);
	else if (io || !flt)
		return fail(t, at, "an operation of the wrong type");
	else if (!strcmp(op, "arith.addf"))
		id = pb_tileir_fbin(t->w, PB_TILEIR_ADDF, ty, x, y);
	else if (!strcmp(op, "arith.subf"))
		id = pb_tileir_fbin(t->w, PB_TILEIR_SUBF, ty, x, y);
	else if (!strcmp(op, "arith.mulf"))
		id = pb_tileir_fbin(t->w, PB_TILEIR_MULF, ty, x, y);
	else if (!strcmp(op, "arith.divf"))
		id = pb_tileir_fbin(t->w, PB_TILEIR_DIVF, ty, x, y);
	else if (!strcmp(op, "arith.maximumf") || !strcmp(op, "arith.maxnumf"))
		id = pb_tileir_fminmax(t->w, PB_TILEIR_MAXF, ty, x, y);
	else if (!strcmp(op, "arith.minimumf") || !strcmp(op, "arith.minnumf"))
		id = pb_tileir_fminmax(t->w, PB_TILEIR_MINF, ty, x, y);
	else if (!strcmp(op, "math.powf"))
		id = pb_tileir_fpow(t->w, ty, x, y);
	else
		return fail(t, at, "not a float operation of Tile IR");
	*r = (struct tval){id, m, a->elem, VAL, -1, NULL};
	return PB_OK;
}

/* "x" reduced by "op" along dimension "dim" (in its mask), the tile's
 * padding past the loop's extent replaced by the identity first. */
static int reduce_dim(struct tr *t, MlirOperation at, const char *op,
		      struct tval *x, int dim)
{
	const struct dim *d = &t->d[dim];
	if (d->extent < d->tile) {
		struct tval idv = identity(t, op, x->elem);
		/* iota < extent along dim, broadcast: select x or identity */
		int64_t n = d->tile;
		int i32 = pb_tileir_type_elem(t->w, PB_TILEIR_I32);
		int iota_ty = pb_tileir_type_tile(t->w, i32, &n, 1);
		int i1_ty = pb_tileir_type_tile(t->w, 0, &n, 1);
		int io = pb_tileir_iota(t->w, iota_ty);
		int32_t e = (int32_t)d->extent;
		int lim = pb_tileir_broadcast(
			t->w, iota_ty,
			pb_tileir_reshape(t->w,
					  pb_tileir_type_tile(t->w, i32, (int64_t[]){1}, 1),
					  pb_tileir_const(t->w, t->i32, &e, 4)));
		int in = pb_tileir_cmpi(t->w, i1_ty, PB_TILEIR_LT, 0, io, lim);
		struct tval c = {in, 1u << dim, PB_TILEIR_I1, VAL, -1, NULL};
		int cm = bring(t, &c, x->mask);
		int iv = bring(t, &idv, x->mask);
		x->id = pb_tileir_select(t->w, tile_ty(t, x->elem, x->mask), cm,
					 x->id, iv);
	}
	uint32_t m = x->mask & ~(1u << dim);
	int el = pb_tileir_type_elem(t->w, x->elem);
	int scalar = pb_tileir_type_tile(t->w, el, NULL, 0);
	int flt = is_float(x->elem);
	uint64_t bits = identity_bits(op, x->elem);
	int first;
	pb_tileir_reduce(t->w, tile_ty(t, x->elem, m), x->id,
			 pos_in(x->mask, dim), el, !flt, bits, bits_of(x->elem),
			 scalar, &first);
	struct tval p = {first, 0, x->elem, VAL, -1, NULL};
	struct tval q = {first + 1, 0, x->elem, VAL, -1, NULL};
	struct tval r;
	if (combine(t, at, op, &p, &q, &r))
		return PB_ERR;
	pb_tileir_yield(t->w, &r.id, 1);
	x->id = pb_tileir_block_end(t->w, 1);
	x->mask = m;
	return PB_OK;
}

/* Loop level of the outermost enclosing inner loop at level "from" or
 * deeper whose dimension the pattern "l" does not follow; -1 when it
 * follows all. A location last stored at level L is carried only by the
 * loops below L: those above store it anew at each iteration. */
static int carried_level(const struct tr *t, const struct loc *l, int from)
{
	uint32_t m = loc_mask(l);
	for (int i = from > 0 ? from : 0; i < t->nloops; i++)
		if (!(m & (1u << t->loops[i])))
			return i;
	return -1;
}

/* Integer operation "op" (signed) on integer tiles "a" and "b" of one
 * type. */
static struct tval ibin(struct tr *t, enum pb_tileir_ibin op,
		       const struct tval *a, const struct tval *b)
{
	uint32_t m = a->mask | b->mask;
	int id = pb_tileir_ibin(t->w, op, tile_ty(t, a->elem, m), bring(t, a, m),
				bring(t, b, m));
	return (struct tval){id, m, a->elem, VAL, -1, NULL};
}

static struct tval ival(struct tr *t, int32_t c)
{
	return (struct tval){iconst(t, c), 0, PB_TILEIR_I32, VAL, -1, NULL};
}

/* The affine expression "e" over the index tiles "ops" (dimensions, then
 * symbols from "ndims" on) into "*x". */
static int aexpr(struct tr *t, MlirOperation at, MlirAffineExpr e,
		 const struct tval *ops, int ndims, struct tval *x)
{
	if (mlirAffineExprIsADim(e)) {
		*x = ops[mlirAffineDimExprGetPosition(e)];
		return PB_OK;
	}
	if (mlirAffineExprIsASymbol(e)) {
		*x = ops[ndims + mlirAffineSymbolExprGetPosition(e)];
		return PB_OK;
	}
	if (mlirAffineExprIsAConstant(e)) {
		int64_t c = mlirAffineConstantExprGetValue(e);
		if (c != (int32_t)c)
			return fail(t, at, "an affine constant past 32 bits");
		*x = ival(t, (int32_t)c);
		return PB_OK;
	}
	struct tval a, b;
	if (!mlirAffineExprIsABinary(e) ||
	    aexpr(t, at, mlirAffineBinaryOpExprGetLHS(e), ops, ndims, &a) ||
	    aexpr(t, at, mlirAffineBinaryOpExprGetRHS(e), ops, ndims, &b))
		return mlirAffineExprIsABinary(e)
			       ? PB_ERR
			       : fail(t, at, "an affine expression of no kind "
					     "known");
	if (mlirAffineExprIsAAdd(e)) {
		*x = ibin(t, PB_TILEIR_ADDI, &a, &b);
	} else if (mlirAffineExprIsAMul(e)) {
		*x = ibin(t, PB_TILEIR_MULI, &a, &b);
	} else if (mlirAffineExprIsAFloorDiv(e)) {
		*x = ibin(t, PB_TILEIR_DIVI, &a, &b);
	} else if (mlirAffineExprIsAMod(e)) {
		/* a - floordiv(a, b) * b: never negative for b > 0 */
		struct tval q = ibin(t, PB_TILEIR_DIVI, &a, &b);
		q = ibin(t, PB_TILEIR_MULI, &q, &b);
		*x = ibin(t, PB_TILEIR_SUBI, &a, &q);
	} else {
		return fail(t, at, "a ceildiv in an affine expression");
	}
	return PB_OK;
}

/* affine.apply, affine.max, affine.min "op": the results of its map
 * over its operands, combined by "fold" (max, min) when several. */
static int do_affine(struct tr *t, MlirOperation op, enum pb_tileir_ibin fold)
{
	MlirAffineMap map = mlirAffineMapAttrGetValue(pb_ir_attr(op, "map"));
	int n = mlirOperationGetNumOperands(op);
	struct tval ops[MAXD + MAXR], x, r;
	if (n > MAXD + MAXR)
		return fail(t, op, "too many operands");
	for (int i = 0; i < n; i++)
		if (operand(t, op, i, &ops[i]))
			return PB_ERR;
	for (intptr_t i = 0; i < mlirAffineMapGetNumResults(map); i++) {
		if (aexpr(t, op, mlirAffineMapGetResult(map, i), ops,
			  mlirAffineMapGetNumDims(map), &x))
			return PB_ERR;
		r = i ? ibin(t, fold, &r, &x) : x;
	}
	set_val(t, mlirOperationGetResult(op, 0), r);
	return PB_OK;
}

/* Gather from kernel buffer "mem" the elements at the index tiles "idx"
 * (one per dimension of the buffer; elements outside it read 0): a tile
 * of pointers (the base offset by the linearized indices) loaded where
 * every index is within the buffer. */
static int gather(struct tr *t, MlirOperation op, MlirValue mem,
		  const struct tval *idx, struct tval *x)
{
	MlirType mt = mlirValueGetType(mem);
	int base = base_of(t, op, mem);
	if (base < 0)
		return PB_ERR;
	int e = stored(mem_elem(mem));
	int64_t strides[MAXR], off = 0;
	int r = mlirShapedTypeGetRank(mt);
	if (r > MAXR || mlirLogicalResultIsFailure(mlirMemRefTypeGetStridesAndOffset(
				mt, strides, &off)))
		return fail(t, op, "the buffer is not a strided buffer");
	struct tval lin = ival(t, (int32_t)off), in = {0}, k;
	for (int i = 0; i < r; i++) {
		struct tval s = ival(t, (int32_t)strides[i]);
		struct tval p = ibin(t, PB_TILEIR_MULI, &idx[i], &s);
		lin = ibin(t, PB_TILEIR_ADDI, &lin, &p);
		/* 0 <= idx < size */
		struct tval z = ival(t, 0), n = ival(t, (int32_t)
					mlirShapedTypeGetDimSize(mt, i));
		uint32_t m = idx[i].mask;
		int i1 = tile_ty(t, PB_TILEIR_I1, m);
		k = (struct tval){pb_tileir_cmpi(t->w, i1, PB_TILEIR_GE, 0, idx[i].id,
						 bring(t, &z, m)),
				  m, PB_TILEIR_I1, VAL, -1, NULL};
		struct tval k2 = {pb_tileir_cmpi(t->w, i1, PB_TILEIR_LT, 0, idx[i].id,
						 bring(t, &n, m)),
				  m, PB_TILEIR_I1, VAL, -1, NULL};
		k = ibin(t, PB_TILEIR_ANDI, &k, &k2);
		in = i ? ibin(t, PB_TILEIR_ANDI, &in, &k) : k;
	}
	if (!r)
		return fail(t, op, "a gather from a scalar buffer");
	uint32_t m = lin.mask | in.mask;
	int64_t shape[MAXD], ones[MAXD];
	int rank = shape_of(t, m, shape);
	for (int i = 0; i < rank; i++)
		ones[i] = 1;
	int el = pb_tileir_type_elem(t->w, e);
	int ptr = pb_tileir_type_ptr(t->w, el);
	if (rank) {
		base = pb_tileir_reshape(
			t->w, pb_tileir_type_tile(t->w, ptr, ones, rank), base);
		base = pb_tileir_broadcast(
			t->w, pb_tileir_type_tile(t->w, ptr, shape, rank), base);
	}
	int ptrs = pb_tileir_offset(t->w, pb_tileir_type_tile(t->w, ptr, shape,
							      rank),
				    base, bring(t, &lin, m));
	struct tval zero = is_float(e) ? fconst(t, 0, e) : intconst(t, 0, e);
	int v = pb_tileir_load_ptr(t->w, tile_ty(t, e, m), t->tok, ptrs,
				   bring(t, &in, m), bring(t, &zero, m),
				   t->token);
	*x = (struct tval){v, m, e, VAL, -1, NULL};
	if (mem_elem(mem) == PB_TILEIR_I1)
		*x = to_bool(t, x);
	return PB_OK;
}

/* Does loop "loop" store into buffer "mem"? */
static int stores_to(MlirOperation loop, MlirValue mem)
{
	struct pb_ir_ops st = {0};
	int found = 0;
	pb_ir_collect(loop, "affine.store", &st);
	for (int i = 0; i < st.n && !found; i++)
		found = mlirValueEqual(mlirOperationGetOperand(st.v[i], 1), mem);
	pb_ir_ops_free(&st);
	return found;
}

/* Is subscript "e" of affine.load "op" (its map's dimensions operands
 * 1..) "c * i + k" with the loop of "k" exactly "c" iterations (its
 * whole tile)? Then the dimensions of "i" and "k" into "outer" and
 * "inner" and "c" into "*c". */
static int split_of(struct tr *t, MlirOperation op, MlirAffineExpr e,
		    int *outer, int *inner, int64_t *c)
{
	if (!mlirAffineExprIsAAdd(e))
		return 0;
	for (int swap = 0; swap < 2; swap++) {
		MlirAffineExpr m = swap ? mlirAffineBinaryOpExprGetRHS(e)
					: mlirAffineBinaryOpExprGetLHS(e);
		MlirAffineExpr k = swap ? mlirAffineBinaryOpExprGetLHS(e)
					: mlirAffineBinaryOpExprGetRHS(e);
		if (!mlirAffineExprIsAMul(m) || !mlirAffineExprIsADim(k))
			continue;
		MlirAffineExpr ml = mlirAffineBinaryOpExprGetLHS(m);
		MlirAffineExpr mr = mlirAffineBinaryOpExprGetRHS(m);
		if (mlirAffineExprIsAConstant(ml)) {
			MlirAffineExpr x = ml;
			ml = mr;
			mr = x;
		}
		if (!mlirAffineExprIsADim(ml) || !mlirAffineExprIsAConstant(mr))
			continue;
		int di = iv_dim(t, mlirOperationGetOperand(
					   op, 1 + mlirAffineDimExprGetPosition(ml)));
		int dk = iv_dim(t, mlirOperationGetOperand(
					   op, 1 + mlirAffineDimExprGetPosition(k)));
		*c = mlirAffineConstantExprGetValue(mr);
		if (di >= 0 && dk >= 0 && di != dk && t->d[dk].extent == *c &&
		    t->d[dk].tile == *c) {
			*outer = di;
			*inner = dk;
			return 1;
		}
	}
	return 0;
}

/* affine.load "op" of a private buffer "mem" through subscripts that
 * split the dimensions of its state ("c * i + k": a pooling window as
 * wide as its stride, the state's tile seen as i by k) or rename them
 * (a loop of the same tile): the state reshaped and permuted into the
 * order of the dimensions, into "x". 1 when done, 0 when "op" is not
 * such a load (nothing written). */
static int window(struct tr *t, MlirOperation op, MlirValue mem,
		  struct tval *x)
{
	int li = -1;
	for (int i = 0; i < t->nlocs; i++)
		if (mlirValueEqual(t->locs[i].mem, mem)) {
			if (li >= 0)
				return 0;
			li = i;
		}
	if (li < 0 || !pb_ir_op_is(op, "affine.load"))
		return 0;
	const struct loc *s = &t->locs[li];
	uint32_t pm = loc_mask(s), band = (1u << t->nband) - 1;
	if (s->global || s->val.id < 0 || s->val.kind != VAL ||
	    (s->val.mask & ~pm & ~band))
		return 0;
	for (int i = 0; i < t->nloops; i++)
		if (stores_to(t->loop_ops[i], mem))
			return 0;
	MlirAffineMap map = mlirAffineMapAttrGetValue(pb_ir_attr(op, "map"));
	if (mlirAffineMapGetNumResults(map) != s->n)
		return 0;
	int outer[MAXR], inner[MAXR];
	uint32_t seen = 0;
	for (int k = 0; k < s->n; k++) {
		MlirAffineExpr e = mlirAffineMapGetResult(map, k);
		int64_t c;
		inner[k] = -1;
		if (s->sub[k] < 0) {
			if (!mlirAffineExprIsAConstant(e) ||
			    mlirAffineConstantExprGetValue(e) != s->cst[k])
				return 0;
			continue;
		}
		int64_t tile = t->d[s->sub[k]].tile;
		if (mlirAffineExprIsADim(e)) {
			outer[k] = iv_dim(t, mlirOperationGetOperand(
						     op, 1 + mlirAffineDimExprGetPosition(e)));
			if (outer[k] < 0 || t->d[outer[k]].tile != tile)
				return 0;
		} else if (!split_of(t, op, e, &outer[k], &inner[k], &c) ||
			   t->d[outer[k]].tile * c != tile) {
			return 0;
		}
		for (int j = 0; j < 2; j++) {
			int d = j ? inner[k] : outer[k];
			if (d < 0)
				continue;
			if (seen & (1u << d) || d < t->nband)
				return 0;
			seen |= 1u << d;
		}
	}
	/* the state's axes in dimension order (the band's as they are),
	 * each of the pattern's split in two or renamed */
	struct tval v = s->val;
	uint32_t vb = v.mask & band;
	int id = bring(t, &v, pm | vb), axes[MAXD], na = 0;
	int64_t shape[MAXD], perm[MAXD], sorted[MAXD];
	for (int d = 0; d < t->ndims; d++) {
		if (vb & (1u << d)) {
			axes[na] = d;
			shape[na++] = t->d[d].tile;
		}
		if (!(pm & (1u << d)))
			continue;
		for (int k = 0; k < s->n; k++) {
			if (s->sub[k] != d)
				continue;
			axes[na] = outer[k];
			shape[na++] = t->d[outer[k]].tile;
			if (inner[k] >= 0) {
				axes[na] = inner[k];
				shape[na++] = t->d[inner[k]].tile;
			}
		}
	}
	int el = pb_tileir_type_elem(t->w, v.elem);
	id = pb_tileir_reshape(t->w, pb_tileir_type_tile(t->w, el, shape, na), id);
	int moved = 0;
	for (int i = 0; i < na; i++) { /* perm[i]: the axis of the i-th dim */
		int rank = 0;
		for (int j = 0; j < na; j++)
			rank += axes[j] < axes[i];
		perm[rank] = i;
	}
	for (int i = 0; i < na; i++) {
		sorted[i] = shape[perm[i]];
		moved |= perm[i] != i;
	}
	if (moved)
		id = pb_tileir_permute(t->w, pb_tileir_type_tile(t->w, el, sorted,
								 na),
				       id, perm, na);
	*x = (struct tval){id, seen | vb, v.elem, VAL, -1, NULL};
	return 1;
}

/* memref.load, or an affine.load whose subscripts are not all counters
 * and constants: a gather of the subscripts' index tiles (or a window of
 * a private buffer's state). */
static int do_gather(struct tr *t, MlirOperation op)
{
	struct tval idx[MAXR], ops[MAXD + MAXR], w;
	MlirValue mem = mlirOperationGetOperand(op, 0);
	int n = mlirOperationGetNumOperands(op) - 1;
	if (window(t, op, mem, &w)) {
		set_val(t, mlirOperationGetResult(op, 0), w);
		return PB_OK;
	}
	if (n > MAXD + MAXR)
		return fail(t, op, "too many subscripts");
	for (int i = 0; i < n; i++)
		if (operand(t, op, i + 1, &ops[i]))
			return PB_ERR;
	for (int i = 0; i < t->nlocs; i++)
		if (mlirValueEqual(t->locs[i].mem, mem))
			return fail(t, op, "a gather from a buffer the kernel "
					   "writes");
	if (pb_ir_op_is(op, "memref.load")) {
		if (n > MAXR)
			return fail(t, op, "too many subscripts");
		for (int i = 0; i < n; i++)
			idx[i] = ops[i];
	} else {
		MlirAffineMap map = mlirAffineMapAttrGetValue(pb_ir_attr(op, "map"));
		if (mlirAffineMapGetNumResults(map) > MAXR)
			return fail(t, op, "too many subscripts");
		for (intptr_t i = 0; i < mlirAffineMapGetNumResults(map); i++)
			if (aexpr(t, op, mlirAffineMapGetResult(map, i), ops,
				  mlirAffineMapGetNumDims(map), &idx[i]))
				return PB_ERR;
	}
	struct tval x;
	if (gather(t, op, mem, idx, &x))
		return PB_ERR;
	set_val(t, mlirOperationGetResult(op, 0), x);
	return PB_OK;
}

static int do_load(struct tr *t, MlirOperation op)
{
	struct loc l;
	struct tval x;
	if (access_q(t, op, 0, &l, 1))
		return do_gather(t, op);
	int li = find_loc(t, op, &l, 0);
	if (li == -2)
		return PB_ERR;
	MlirValue res = mlirOperationGetResult(op, 0);
	if (li < 0) {
		if (!mlirValueIsABlockArgument(l.mem) &&
		    !pb_ir_op_is(pb_ir_value_parent(l.mem), "memref.get_global"))
			return fail(t, op, "reads a private buffer before it is "
					   "written");
		/* a buffer the kernel writes in a loop this read does not
		 * follow: state (a reduction begun by an earlier kernel) */
		int lvl = carried_level(t, &l, 0);
		if (lvl < 0 || !stores_to(t->loop_ops[lvl], l.mem)) {
			if (load(t, op, &l, &x))
				return PB_ERR;
			set_val(t, res, x);
			return PB_OK;
		}
		if ((li = find_loc(t, op, &l, 1)) < 0)
			return PB_ERR;
	}
	struct loc *s = &t->locs[li];
	if (s->val.id < 0) {
		if (!s->global)
			return fail(t, op, "reads a private buffer before it is "
					   "written");
		if (load(t, op, &l, &s->val))
			return PB_ERR;
	}
	x = s->val;
	int lvl = carried_level(t, s, s->store_level);
	if (lvl >= 0 && s->store_level <= lvl &&
	    stores_to(t->loop_ops[lvl], s->mem)) {
		x.kind = CARRIED;
		x.loc = li;
	}
	set_val(t, res, x);
	return PB_OK;
}

/* The running reduction "x" (accumulating into location x->loc) stored
 * at each step of the one loop that carries it into location "l": its
 * inclusive scan along that loop (a tile's padding comes after the
 * extent, so it does not reach the elements stored) combined with the
 * state before the loop, into "x". */
static int scan(struct tr *t, MlirOperation op, const struct loc *l,
		struct tval *x)
{
	const struct loc *a = &t->locs[x->loc];
	uint32_t carried = 0, am = loc_mask(a);
	for (int i = carried_level(t, a, a->store_level);
	     i >= 0 && i < t->nloops; i++)
		if (!(am & (1u << t->loops[i])))
			carried |= 1u << t->loops[i];
	if (popcount(carried) != 1 || !(loc_mask(l) & carried))
		return fail(t, op, "a running reduction is stored into another "
				   "buffer that does not follow the one loop it "
				   "runs over (a scan of several: not "
				   "translated)");
	int k = __builtin_ctz(carried), first;
	struct tval r = *x, p, q, c, old = a->val;
	r.kind = VAL;
	r.id = bring(t, &r, r.mask | carried);
	r.mask |= carried;
	int el = pb_tileir_type_elem(t->w, r.elem);
	pb_tileir_scan(t->w, tile_ty(t, r.elem, r.mask), r.id, pos_in(r.mask, k),
		       el, !is_float(r.elem), identity_bits(x->op, r.elem),
		       bits_of(r.elem), pb_tileir_type_tile(t->w, el, NULL, 0),
		       &first);
	p = (struct tval){first, 0, r.elem, VAL, -1, NULL};
	q = (struct tval){first + 1, 0, r.elem, VAL, -1, NULL};
	if (combine(t, op, x->op, &p, &q, &c))
		return PB_ERR;
	pb_tileir_yield(t->w, &c.id, 1);
	r.id = pb_tileir_block_end(t->w, 1);
	old.kind = VAL;
	return combine(t, op, x->op, &old, &r, x);
}

static int do_store(struct tr *t, MlirOperation op)
{
	struct loc l;
	struct tval x;
	if (access(t, op, 1, &l) || get(t, op, mlirOperationGetOperand(op, 0), &x))
		return PB_ERR;
	int li = find_loc(t, op, &l, 1);
	if (li < 0)
		return PB_ERR;
	struct loc *s = &t->locs[li];
	if (x.kind == CARRIED && x.loc == li) {
		x.kind = VAL; /* stores back what it read */
	} else if (x.kind == RED && x.loc != li) {
		if (scan(t, op, s, &x))
			return PB_ERR;
	} else if (x.kind == RED) {
		struct tval r = x;
		r.kind = VAL;
		uint32_t carried = 0, pm = loc_mask(s);
		for (int i = carried_level(t, s, s->store_level);
		     i >= 0 && i < t->nloops; i++)
			if (!(pm & (1u << t->loops[i])))
				carried |= 1u << t->loops[i];
		/* it may vary along the band and the loops around the store
		 * that began it (it is theirs, begun anew at each iteration) */
		uint32_t stray = r.mask & ~carried & ~pm;
		for (int i = 0; i < t->nband; i++)
			stray &= ~(1u << i);
		for (int i = 0; i < s->store_level && i < t->nloops; i++)
			stray &= ~(1u << t->loops[i]);
		if (stray)
			return fail(t, op, "the reduced value varies along a "
					   "loop it is not reduced over");
		r.id = bring(t, &r, r.mask | carried);
		r.mask |= carried;
		for (int dim = t->ndims - 1; dim >= 0; dim--)
			if ((carried & (1u << dim)) &&
			    reduce_dim(t, op, x.op, &r, dim))
				return PB_ERR;
		struct tval old = s->val;
		old.kind = VAL;
		if (combine(t, op, x.op, &old, &r, &x))
			return PB_ERR;
	} else if (x.kind != VAL) {
		return fail(t, op, "stores a value read in a loop it does not "
				   "follow into another buffer (an exclusive "
				   "scan: not translated)");
	}
	s->val = x;
	s->store_level = t->nloops;
	s->where = op;
	s->order = ++t->nstores;
	return PB_OK;
}

/* The operations that may carry a reduction: the name "n" as a
 * string that outlives the translation, or NULL. */
static const char *is_reduction_op(const char *n)
{
	static const char *ops[] = {
		"arith.addf",	  "arith.mulf",	    "arith.maximumf",
		"arith.minimumf", "arith.maxnumf",  "arith.minnumf",
		"arith.addi",	  "arith.muli",	    "arith.maxsi",
		"arith.minsi",	  "arith.maxui",    "arith.minui",
		"arith.andi",	  "arith.ori",	    "arith.xori",
		NULL};
	for (int i = 0; ops[i]; i++)
		if (!strcmp(n, ops[i]))
			return ops[i];
	return NULL;
}

static int do_binary(struct tr *t, MlirOperation op, const char *name)
{
	struct tval a, b, r;
	if (get(t, op, mlirOperationGetOperand(op, 0), &a) ||
	    get(t, op, mlirOperationGetOperand(op, 1), &b))
		return PB_ERR;
	if (a.kind == CARRIED || b.kind == CARRIED) {
		struct tval *c = a.kind == CARRIED ? &a : &b;
		struct tval *x = a.kind == CARRIED ? &b : &a;
		if (!is_reduction_op(name) || x->kind != VAL)
			return fail(t, op, "a value read in a loop it does not "
					   "follow is not reduced by an "
					   "associative operation (add, mul, "
					   "max, min, and, or, xor)");
		if (x->elem != c->elem)
			return fail(t, op, "a reduction of mixed types");
		r = *x;
		r.kind = RED;
		r.loc = c->loc;
		r.op = is_reduction_op(name);
		set_val(t, mlirOperationGetResult(op, 0), r);
		return PB_OK;
	}
	if (a.kind != VAL || b.kind != VAL)
		return fail(t, op, "a reduction is used before it is stored");
	if (combine(t, op, name, &a, &b, &r))
		return PB_ERR;
	set_val(t, mlirOperationGetResult(op, 0), r);
	return PB_OK;
}

/* "a" op the constant "c". */
static struct tval with_const(struct tr *t, MlirOperation at, const char *op,
			      const struct tval *a, double c)
{
	struct tval k = fconst(t, c, a->elem), r;
	combine(t, at, op, a, &k, &r);
	return r;
}

/* erf("x") (Tile IR has none): Abramowitz and Stegun 7.1.26, absolute
 * error below 1.5e-7: with u = 1 / (1 + p |x|), erf(|x|) = 1 - (a1 u +
 * a2 u^2 + ... + a5 u^5) exp(-x^2), and the sign of x. */
static struct tval erf_tile(struct tr *t, MlirOperation at,
			    const struct tval *x)
{
	static const double a[5] = {0.254829592, -0.284496736, 1.421413741,
				    -1.453152027, 1.061405429};
	int ty = tile_ty(t, x->elem, x->mask);
	struct tval ax = *x, u, p, e, one = fconst(t, 1, x->elem), r;
	ax.id = pb_tileir_fun(t->w, PB_TILEIR_ABSF, ty, x->id);
	struct tval den = with_const(t, at, "arith.mulf", &ax, 0.3275911);
	den = with_const(t, at, "arith.addf", &den, 1);
	combine(t, at, "arith.divf", &one, &den, &u);
	/* Horner: ((((a5 u + a4) u + a3) u + a2) u + a1) u */
	p = with_const(t, at, "arith.mulf", &u, a[4]);
	for (int i = 3; i >= 0; i--) {
		p = with_const(t, at, "arith.addf", &p, a[i]);
		combine(t, at, "arith.mulf", &p, &u, &p);
	}
	combine(t, at, "arith.mulf", x, x, &e);
	e.id = pb_tileir_fun(t->w, PB_TILEIR_NEGF, ty, e.id);
	e.id = pb_tileir_fun(t->w, PB_TILEIR_EXP, ty, e.id);
	combine(t, at, "arith.mulf", &p, &e, &p);
	combine(t, at, "arith.subf", &one, &p, &r); /* erf(|x|) */
	struct tval neg = r, zero = fconst(t, 0, x->elem);
	neg.id = pb_tileir_fun(t->w, PB_TILEIR_NEGF, ty, r.id);
	int lt = pb_tileir_cmpf(t->w, tile_ty(t, PB_TILEIR_I1, x->mask),
				PB_TILEIR_LT, 1, x->id, bring(t, &zero, x->mask));
	r.id = pb_tileir_select(t->w, ty, lt, neg.id, r.id);
	return r;
}

/* arith.cmpf predicates (0 false ... 15 true) as Tile IR's predicate and
 * ordering; -1 for the constant ones. */
static int cmpf_pred(int64_t p, int *ordered)
{
	static const int map[16] = {-1, PB_TILEIR_EQ, PB_TILEIR_GT, PB_TILEIR_GE,
				    PB_TILEIR_LT, PB_TILEIR_LE, PB_TILEIR_NE, -1,
				    PB_TILEIR_EQ, PB_TILEIR_GT, PB_TILEIR_GE,
				    PB_TILEIR_LT, PB_TILEIR_LE, PB_TILEIR_NE, -1,
				    -1};
	*ordered = p >= 1 && p <= 6;
	return p >= 0 && p < 16 ? map[p] : -1;
}

/* Is "name" a conversion between scalar types? */
static int is_cast(const char *name)
{
	static const char *casts[] = {
		"arith.extf",	"arith.truncf",	 "arith.extsi",
		"arith.extui",	"arith.trunci",	 "arith.index_cast",
		"arith.index_castui", "arith.sitofp", "arith.uitofp",
		"arith.fptosi", "arith.fptoui",	 NULL};
	for (int i = 0; casts[i]; i++)
		if (!strcmp(name, casts[i]))
			return 1;
	return 0;
}

/* The conversion "op" ("name"): ftof between floats, exti or trunci
 * between integers (index is i32; zero-extended for the unsigned forms),
 * itof and ftoi between the two (signed or unsigned). */
static int do_cast(struct tr *t, MlirOperation op, const char *name)
{
	struct tval a, r;
	int e = elem_of(mlirValueGetType(mlirOperationGetResult(op, 0)));
	if (operand(t, op, 0, &a))
		return PB_ERR;
	if (e < 0)
		return fail(t, op, "converts to a type Tile IR lacks");
	int uns = !strcmp(name, "arith.extui") ||
		  !strcmp(name, "arith.index_castui") ||
		  !strcmp(name, "arith.uitofp") || !strcmp(name, "arith.fptoui");
	int ty = tile_ty(t, e, a.mask);
	r = a;
	r.elem = e;
	if (a.elem == PB_TILEIR_I1 && is_float(e)) {
		/* via i32: 0 or 1 (-1 when signed) */
		a.id = pb_tileir_exti(t->w, tile_ty(t, PB_TILEIR_I32, a.mask),
				      a.id, uns);
		a.elem = PB_TILEIR_I32;
	}
	if ((int)a.elem != e && is_float(a.elem) && is_float(e))
		r.id = pb_tileir_ftof(t->w, ty, a.id);
	else if (is_float(a.elem) && !is_float(e))
		r.id = pb_tileir_ftoi(t->w, ty, a.id, uns);
	else if (!is_float(a.elem) && is_float(e))
		r.id = pb_tileir_itof(t->w, ty, a.id, uns);
	else if (bits_of(e) > bits_of(a.elem))
		r.id = pb_tileir_exti(t->w, ty, a.id, uns);
	else if (bits_of(e) < bits_of(a.elem))
		r.id = pb_tileir_trunci(t->w, ty, a.id);
	set_val(t, mlirOperationGetResult(op, 0), r);
	return PB_OK;
}

/* arith.select "op". A select between a reduction and the state it
 * reduces into ("c ? acc op x : acc", an argmax's index, a masked sum)
 * is that reduction of "c ? x : identity". */
static int do_select(struct tr *t, MlirOperation op)
{
	struct tval a, b, c, r;
	if (operand(t, op, 0, &c) ||
	    get(t, op, mlirOperationGetOperand(op, 1), &a) ||
	    get(t, op, mlirOperationGetOperand(op, 2), &b))
		return PB_ERR;
	if (c.elem != PB_TILEIR_I1 || a.elem != b.elem)
		return fail(t, op, "expected an i1 condition choosing between "
				   "values of one type");
	struct tval *red = NULL;
	if (a.kind == RED && b.kind == CARRIED && a.loc == b.loc)
		red = &a;
	else if (b.kind == RED && a.kind == CARRIED && a.loc == b.loc)
		red = &b;
	if (red) {
		struct tval x = *red, id = identity(t, red->op, red->elem);
		x.kind = VAL;
		if (red == &a)
			a = x, b = id;
		else
			a = id, b = x;
	} else if (a.kind != VAL || b.kind != VAL) {
		return fail(t, op, "a value read in a loop it does not follow "
				   "is used other than as a reduction");
	}
	uint32_t m = a.mask | b.mask | c.mask;
	r = (struct tval){0, m, a.elem, VAL, -1, NULL};
	r.id = pb_tileir_select(t->w, tile_ty(t, a.elem, m), bring(t, &c, m),
				bring(t, &a, m), bring(t, &b, m));
	if (red) {
		r.kind = RED;
		r.loc = red->loc;
		r.op = red->op;
	}
	set_val(t, mlirOperationGetResult(op, 0), r);
	return PB_OK;
}

static int do_op(struct tr *t, MlirOperation op)
{
	MlirStringRef nr = mlirIdentifierStr(mlirOperationGetName(op));
	char name[64];
	snprintf(name, sizeof(name), "%.*s", (int)nr.length, nr.data);
	struct tval a, b, c, r;
	if (!strcmp(name, "affine.load"))
		return do_load(t, op);
	if (!strcmp(name, "affine.store"))
		return do_store(t, op);
	if (!strcmp(name, "memref.alloca") || !strcmp(name, "arith.constant") ||
	    !strcmp(name, "affine.yield") || !strcmp(name, "memref.get_global"))
		return PB_OK;
	if (!strcmp(name, "affine.parallel"))
		return inner_parallel(t, op);
	if (!strcmp(name, "affine.for")) {
		MlirRegion reg = mlirOperationGetRegion(op, 0);
		int64_t lb, ub, step;
		MlirAttribute st = pb_ir_attr(op, "step");
		if (mlirOperationGetNumResults(op) ||
		    pb_ir_const_map(op, "lowerBoundMap", 1, &lb) ||
		    pb_ir_const_map(op, "upperBoundMap", 1, &ub) ||
		    mlirAttributeIsNull(st) ||
		    (step = mlirIntegerAttrGetValueInt(st)) != 1 || lb != 0 ||
		    ub <= 0)
			return fail(t, op, "expected a loop from 0 with step 1 "
					   "to a constant, without results");
		return loop(t, op, ub, mlirRegionGetFirstBlock(reg));
	}
	if (is_reduction_op(name) || find_iop(name) ||
	    !strcmp(name, "arith.subf") || !strcmp(name, "arith.divf") ||
	    !strcmp(name, "math.powf"))
		return do_binary(t, op, name);
	if (is_cast(name))
		return do_cast(t, op, name);
	static const struct {
		const char *name;
		enum pb_tileir_fun fun;
	} funs[] = {
		{"math.absf", PB_TILEIR_ABSF}, {"arith.negf", PB_TILEIR_NEGF},
		{"math.exp", PB_TILEIR_EXP},   {"math.log", PB_TILEIR_LOG},
		{"math.sqrt", PB_TILEIR_SQRT}, {"math.rsqrt", PB_TILEIR_RSQRT},
		{"math.tanh", PB_TILEIR_TANH},
	};
	for (size_t i = 0; i < sizeof(funs) / sizeof(funs[0]); i++) {
		if (strcmp(name, funs[i].name))
			continue;
		if (operand(t, op, 0, &a))
			return PB_ERR;
		r = a;
		r.id = pb_tileir_fun(t->w, funs[i].fun, tile_ty(t, a.elem, a.mask),
				     a.id);
		set_val(t, mlirOperationGetResult(op, 0), r);
		return PB_OK;
	}
	if (!strcmp(name, "memref.load"))
		return do_gather(t, op);
	if (!strcmp(name, "affine.apply"))
		return do_affine(t, op, PB_TILEIR_ADDI);
	if (!strcmp(name, "affine.max"))
		return do_affine(t, op, PB_TILEIR_MAXI);
	if (!strcmp(name, "affine.min"))
		return do_affine(t, op, PB_TILEIR_MINI);
	if (!strcmp(name, "arith.cmpi")) {
		/* eq, ne, then slt .. sge, then ult .. uge */
		static const int preds[10] = {
			PB_TILEIR_EQ, PB_TILEIR_NE, PB_TILEIR_LT, PB_TILEIR_LE,
			PB_TILEIR_GT, PB_TILEIR_GE, PB_TILEIR_LT, PB_TILEIR_LE,
			PB_TILEIR_GT, PB_TILEIR_GE};
		int64_t p = mlirIntegerAttrGetValueInt(pb_ir_attr(op, "predicate"));
		if (p < 0 || p > 9)
			return fail(t, op, "an unknown predicate");
		if (operand(t, op, 0, &a) || operand(t, op, 1, &b))
			return PB_ERR;
		uint32_t m = a.mask | b.mask;
		r = (struct tval){0, m, PB_TILEIR_I1, VAL, -1, NULL};
		r.id = pb_tileir_cmpi(t->w, tile_ty(t, PB_TILEIR_I1, m), preds[p],
				      p >= 6, bring(t, &a, m), bring(t, &b, m));
		set_val(t, mlirOperationGetResult(op, 0), r);
		return PB_OK;
	}
	if (!strcmp(name, "math.erf")) {
		if (operand(t, op, 0, &a))
			return PB_ERR;
		set_val(t, mlirOperationGetResult(op, 0), erf_tile(t, op, &a));
		return PB_OK;
	}
	if (!strcmp(name, "math.fma")) {
		if (operand(t, op, 0, &a) || operand(t, op, 1, &b) ||
		    operand(t, op, 2, &c))
			return PB_ERR;
		uint32_t m = a.mask | b.mask | c.mask;
		r = (struct tval){0, m, a.elem, VAL, -1, NULL};
		r.id = pb_tileir_fma(t->w, tile_ty(t, a.elem, m), bring(t, &a, m),
				     bring(t, &b, m), bring(t, &c, m));
		set_val(t, mlirOperationGetResult(op, 0), r);
		return PB_OK;
	}
	if (!strcmp(name, "arith.cmpf")) {
		int ordered;
		int p = cmpf_pred(mlirIntegerAttrGetValueInt(
					  pb_ir_attr(op, "predicate")),
				  &ordered);
		if (p < 0)
			return fail(t, op, "a constant or (un)ordered-only "
					   "predicate");
		if (operand(t, op, 0, &a) || operand(t, op, 1, &b))
			return PB_ERR;
		uint32_t m = a.mask | b.mask;
		r = (struct tval){0, m, PB_TILEIR_I1, VAL, -1, NULL};
		r.id = pb_tileir_cmpf(t->w, tile_ty(t, PB_TILEIR_I1, m), p,
				      ordered, bring(t, &a, m), bring(t, &b, m));
		set_val(t, mlirOperationGetResult(op, 0), r);
		return PB_OK;
	}
	if (!strcmp(name, "arith.select"))
		return do_select(t, op);
	return fail(t, op, "no Tile IR translation of this operation");
}

static int body(struct tr *t, MlirBlock b)
{
	for (MlirOperation op = mlirBlockGetFirstOperation(b);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
		if (do_op(t, op))
			return PB_ERR;
	return PB_OK;
}

/* The dimension of an inner loop of "extent" at the current depth:
 * shared with a sibling loop of the same extent. */
static int loop_dim(struct tr *t, int64_t extent)
{
	for (int i = t->nband; i < t->ndims; i++)
		if (t->d[i].depth == t->nloops && t->d[i].extent == extent)
			return i;
	if (t->ndims == MAXD)
		return -1;
	t->d[t->ndims] = (struct dim){extent, pow2ceil(extent), 0, t->nloops,
				      -1, 1, -1};
	return t->ndims++;
}

/* The contraction of loop body "b" (counter "k"): "acc = acc +
 * ext(A[..k..]) * ext(B[..k..])", the loads into "la", "lb", the
 * accumulator's load and store into "lacc", "sacc". 1 when it is one. */
static int match_mm(MlirBlock b, MlirValue k, MlirOperation *la,
		    MlirOperation *lb, MlirOperation *sacc)
{
	MlirOperation st = {NULL};
	int n = 0;
	for (MlirOperation op = mlirBlockGetFirstOperation(b);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		if (pb_ir_op_is(op, "affine.store")) {
			if (!mlirOperationIsNull(st))
				return 0;
			st = op;
		}
		n++;
	}
	if (mlirOperationIsNull(st) || n > 10)
		return 0;
	MlirValue v = mlirOperationGetOperand(st, 0);
	if (!mlirValueIsAOpResult(v))
		return 0;
	MlirOperation add = mlirOpResultGetOwner(v);
	if (!pb_ir_op_is(add, "arith.addf"))
		return 0;
	MlirOperation x[2], mul = {NULL}, acc = {NULL};
	for (int i = 0; i < 2; i++) {
		MlirValue o = mlirOperationGetOperand(add, i);
		x[i] = mlirValueIsAOpResult(o) ? mlirOpResultGetOwner(o)
					       : (MlirOperation){NULL};
		if (mlirOperationIsNull(x[i]))
			return 0;
		if (pb_ir_op_is(x[i], "arith.mulf"))
			mul = x[i];
		else if (pb_ir_op_is(x[i], "affine.load"))
			acc = x[i];
	}
	if (mlirOperationIsNull(mul) || mlirOperationIsNull(acc) ||
	    !pb_ir_same_operands(acc, 0, st, 1) ||
	    !mlirAttributeEqual(pb_ir_attr(acc, "map"), pb_ir_attr(st, "map")))
		return 0;
	MlirOperation ld[2];
	for (int i = 0; i < 2; i++) {
		MlirValue o = mlirOperationGetOperand(mul, i);
		MlirOperation d = mlirValueIsAOpResult(o) ? mlirOpResultGetOwner(o)
							  : (MlirOperation){NULL};
		if (!mlirOperationIsNull(d) && pb_ir_op_is(d, "arith.extf")) {
			o = mlirOperationGetOperand(d, 0);
			d = mlirValueIsAOpResult(o) ? mlirOpResultGetOwner(o)
						    : (MlirOperation){NULL};
		}
		if (mlirOperationIsNull(d) || !pb_ir_op_is(d, "affine.load") ||
		    !mlirValueIsABlockArgument(mlirOperationGetOperand(d, 0)))
			return 0;
		int uses_k = 0;
		for (intptr_t j = 1; j < mlirOperationGetNumOperands(d); j++)
			uses_k |= mlirValueEqual(mlirOperationGetOperand(d, j), k);
		MlirAffineMap map = mlirAffineMapAttrGetValue(pb_ir_attr(d, "map"));
		for (intptr_t j = 0; j < mlirAffineMapGetNumResults(map); j++) {
			MlirAffineExpr e = mlirAffineMapGetResult(map, j);
			if (!mlirAffineExprIsADim(e) && !mlirAffineExprIsAConstant(e))
				uses_k = 0;
		}
		if (!uses_k)
			return 0;
		ld[i] = d;
	}
	*la = ld[0];
	*lb = ld[1];
	*sacc = st;
	return 1;
}

/* The element type a contraction's operand "ld" multiplies in. */
static int mm_elem(MlirOperation ld)
{
	return elem_of(mlirShapedTypeGetElementType(
		mlirValueGetType(mlirOperationGetOperand(ld, 0))));
}

/* The k tile of a contraction. */
#define MM_KTILE 32

/* The tile "v" of pattern "l" (its dimensions in the buffer's order,
 * constants dropped) permuted into the order of dimensions "want" ("n"
 * of them, the shape "shape"). */
static int to_order(struct tr *t, const struct loc *l, int v, int el,
		    const int *want, int n, const int64_t *shape)
{
	int have[MAXR], k = 0, moved = 0;
	int64_t perm[MAXR];
	for (int i = 0; i < l->n; i++)
		if (l->sub[i] >= 0)
			have[k++] = l->sub[i];
	for (int i = 0; i < n; i++) {
		perm[i] = 0;
		for (int j = 0; j < k; j++)
			if (have[j] == want[i])
				perm[i] = j;
		moved |= perm[i] != i;
	}
	if (!moved)
		return v;
	return pb_tileir_permute(t->w, pb_tileir_type_tile(t->w, el, shape, n),
				 v, perm, n);
}

/* Translate the contraction loop "op" (dimension "kd") whose body
 * multiplies the loads "la" and "lb" into the accumulator stored by
 * "st": a Tile IR for over k tiles of MM_KTILE with two loads and mmaf
 * into the accumulator's state. -2 (nothing written) when the loads are
 * not a matrix product: one m and one n dimension, at most one batch. */
static int contraction(struct tr *t, MlirOperation op, int kd,
		       MlirOperation la, MlirOperation lb, MlirOperation st)
{
	struct loc A, B, acc;
	if (access(t, la, 0, &A) || access(t, lb, 0, &B) ||
	    access(t, st, 1, &acc))
		return PB_ERR;
	uint32_t ma = loc_mask(&A) & ~(1u << kd), mb = loc_mask(&B) & ~(1u << kd);
	uint32_t batch = ma & mb, m = ma & ~batch, n = mb & ~batch;
	if (popcount(m) != 1 || popcount(n) != 1 || popcount(batch) > 1)
		return -2; /* not a matrix product: the generic way */
	int dm = __builtin_ctz(m), dn = __builtin_ctz(n);
	int ai = find_loc(t, st, &acc, 1);
	if (ai < 0)
		return PB_ERR;
	struct loc *s = &t->locs[ai];
	if (s->val.id < 0) {
		if (!s->global)
			return fail(t, st, "accumulates into a private buffer "
					   "before it is written");
		if (load(t, st, &acc, &s->val))
			return PB_ERR;
	}
	int ea = mm_elem(la), eb = mm_elem(lb);
	if (ea != eb || s->val.elem != PB_TILEIR_F32)
		return fail(t, op, "a contraction of mixed operand types or "
				   "without an f32 accumulator");
	/* dimensions of the mmaf operands: [batch,] m, k / k, n / m, n */
	uint32_t out = batch | m | n;
	if (s->val.mask & ~out)
		return fail(t, op, "the accumulator varies along a loop the "
				   "product does not");
	int64_t ktile = MM_KTILE < pow2ceil(t->d[kd].extent)
				? MM_KTILE
				: pow2ceil(t->d[kd].extent);
	int nb = popcount(batch), db = nb ? __builtin_ctz(batch) : -1;
	int64_t sa[3], sb[3], sc[3];
	int r = 0;
	if (nb)
		sa[r] = sb[r] = sc[r] = t->d[db].tile, r++;
	sa[r] = sc[r] = t->d[dm].tile;
	sb[r] = ktile;
	sa[r + 1] = ktile;
	sb[r + 1] = sc[r + 1] = t->d[dn].tile;
	int f32 = pb_tileir_type_elem(t->w, PB_TILEIR_F32);
	int acc_ty = pb_tileir_type_tile(t->w, f32, sc, r + 2);
	/* the accumulator in [batch,] m, n order */
	struct tval a0 = s->val;
	int init = bring(t, &a0, out);
	int flip = dm > dn;
	int64_t swap[3] = {0, 1, 2};
	if (flip) {
		swap[r] = r + 1;
		swap[r + 1] = r;
		init = pb_tileir_permute(t->w, acc_ty, init, swap, r + 2);
	}
	int32_t nk = (int32_t)((t->d[kd].extent + ktile - 1) / ktile);
	int lo = t->zero_i32, hi = iconst(t, nk), one = iconst(t, 1);
	int ia[MAXR], ib[MAXR], tya, tyb;
	int pva = view(t, la, &A, 1, kd, ktile, 0, &tya, ia);
	int pvb = pva < 0 ? -1 : view(t, lb, &B, 1, kd, ktile, 0, &tyb, ib);
	if (pvb < 0)
		return PB_ERR;
	int first;
	pb_tileir_for(t->w, &acc_ty, lo, hi, one, &init, 1, t->i32, &first);
	for (int k = 0; k < A.n; k++)
		if (A.sub[k] == kd)
			ia[k] = first;
	for (int k = 0; k < B.n; k++)
		if (B.sub[k] == kd)
			ib[k] = first;
	struct tval x, y;
	load_from(t, &A, pva, tya, ia, kd, ktile, 0, &x);
	load_from(t, &B, pvb, tyb, ib, kd, ktile, 0, &y);
	/* from the buffers' order to [batch,] m, k and [batch,] k, n */
	int el = pb_tileir_type_elem(t->w, ea);
	int wa[3] = {db, dm, kd}, wb[3] = {db, kd, dn};
	x.id = to_order(t, &A, x.id, el, wa + !nb, r + 2, sa);
	y.id = to_order(t, &B, y.id, el, wb + !nb, r + 2, sb);
	int prod = pb_tileir_mmaf(t->w, acc_ty, x.id, y.id, first + 1);
	pb_tileir_continue(t->w, &prod, 1);
	int res = pb_tileir_block_end(t->w, 1);
	if (flip)
		res = pb_tileir_permute(t->w, tile_ty(t, PB_TILEIR_F32, out), res,
					swap, r + 2);
	s->val = (struct tval){res, out, PB_TILEIR_F32, VAL, -1, NULL};
	s->store_level = t->nloops;
	s->where = st;
	s->order = ++t->nstores;
	return PB_OK;
}

/* Translate affine.for "op" of "extent" iterations with body "b": as a
 * contraction, or its body once on tiles over the loop's dimension. */
static int loop(struct tr *t, MlirOperation op, int64_t extent, MlirBlock b)
{
	int dim = loop_dim(t, extent);
	if (dim < 0)
		return fail(t, op, "too many loop dimensions");
	MlirValue k = mlirBlockGetArgument(b, 0);
	MlirOperation la, lb, st;
	if (t->mm_m >= 0 && match_mm(b, k, &la, &lb, &st)) {
		t->iv[t->niv].v = k;
		t->iv[t->niv++].dim = dim;
		t->loop_ops[t->nloops] = op;
		t->loops[t->nloops++] = dim;
		int rc = contraction(t, op, dim, la, lb, st);
		t->nloops--;
		if (rc != -2)
			return rc;
		t->niv--;
	}
	if (t->niv == 64)
		return fail(t, op, "too many loops");
	t->iv[t->niv].v = k;
	t->iv[t->niv++].dim = dim;
	t->loop_ops[t->nloops] = op;
	t->loops[t->nloops++] = dim;
	int rc = body(t, b);
	t->nloops--;
	for (int i = 0; i < t->nlocs; i++)
		if (t->locs[i].store_level > t->nloops)
			t->locs[i].store_level = t->nloops;
	return rc;
}

/* An affine.parallel "op" inside the band (below a private buffer's
 * allocation, say): its loops as inner loops, one dimension each, nested
 * in order, each covered by one tile; its body once over them. */
static int inner_parallel(struct tr *t, MlirOperation op)
{
	int64_t lb[MAXD], step[MAXD], count[MAXD];
	MlirValue iv[MAXD];
	int n = pb_ir_parallel_dims(op, MAXD, lb, step, count, iv);
	if (n < 0 || mlirOperationGetNumResults(op))
		return fail(t, op, "expected a parallel loop with constant "
				   "bounds, without results");
	int nloops = t->nloops, niv = t->niv, rc;
	for (int i = 0; i < n; i++) {
		int dim = loop_dim(t, count[i]);
		if (lb[i] != 0 || step[i] != 1)
			return fail(t, op, "expected a parallel loop from 0 with "
					   "step 1");
		if (dim < 0 || t->niv == 64)
			return fail(t, op, "too many loop dimensions");
		t->iv[t->niv].v = iv[i];
		t->iv[t->niv++].dim = dim;
		t->loop_ops[t->nloops] = op;
		t->loops[t->nloops++] = dim;
	}
	rc = body(t, mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0)));
	t->nloops = nloops;
	t->niv = niv;
	for (int i = 0; i < t->nlocs; i++)
		if (t->locs[i].store_level > t->nloops)
			t->locs[i].store_level = t->nloops;
	return rc;
}

/* Find the contraction of the nest below "b" (its m and n dimensions
 * are the band's loops "iv"): sets t->mm_m, mm_n, mm_elem. */
static void find_mm(struct tr *t, MlirOperation root)
{
	struct pb_ir_ops fors = {0};
	pb_ir_collect(root, "affine.for", &fors);
	for (int i = 0; i < fors.n && t->mm_m < 0; i++) {
		MlirBlock b = mlirRegionGetFirstBlock(
			mlirOperationGetRegion(fors.v[i], 0));
		MlirOperation la, lb, st;
		if (!match_mm(b, mlirBlockGetArgument(b, 0), &la, &lb, &st))
			continue;
		/* the band dimensions A and B follow, apart from each other */
		uint32_t ma = 0, mb = 0;
		for (intptr_t j = 1; j < mlirOperationGetNumOperands(la); j++) {
			int d = iv_dim(t, mlirOperationGetOperand(la, j));
			if (d >= 0)
				ma |= 1u << d;
		}
		for (intptr_t j = 1; j < mlirOperationGetNumOperands(lb); j++) {
			int d = iv_dim(t, mlirOperationGetOperand(lb, j));
			if (d >= 0)
				mb |= 1u << d;
		}
		uint32_t m = ma & ~mb, n = mb & ~ma;
		int e = mm_elem(la);
		if (popcount(m) == 1 && popcount(n) == 1 &&
		    (e == PB_TILEIR_F16 || e == PB_TILEIR_BF16 ||
		     e == PB_TILEIR_F32)) {
			t->mm_m = __builtin_ctz(m);
			t->mm_n = __builtin_ctz(n);
			t->mm_elem = mm_elem(la);
		}
	}
	pb_ir_ops_free(&fors);
}

/* The product of the padded extents of the deepest chain of inner loops
 * (affine.for, and affine.parallel inside the band) in "op" (1 for
 * none). */
static int64_t loop_volume(MlirOperation op)
{
	int64_t best = 1;
	for (intptr_t r = 0; r < mlirOperationGetNumRegions(op); r++) {
		MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, r));
		for (; !mlirBlockIsNull(b); b = mlirBlockGetNextInRegion(b))
			for (MlirOperation o = mlirBlockGetFirstOperation(b);
			     !mlirOperationIsNull(o);
			     o = mlirOperationGetNextInBlock(o)) {
				int64_t v = loop_volume(o), ub;
				int64_t lb[MAXD], step[MAXD], count[MAXD];
				MlirValue iv[MAXD];
				int n = pb_ir_op_is(o, "affine.parallel")
						? pb_ir_parallel_dims(o, MAXD, lb, step,
								      count, iv)
						: 0;
				if (pb_ir_op_is(o, "affine.for") &&
				    !pb_ir_const_map(o, "upperBoundMap", 1, &ub))
					v *= pow2ceil(ub);
				for (int i = 0; i < n; i++)
					v *= pow2ceil(count[i]);
				if (v > best)
					best = v;
			}
	}
	return best;
}

/* Choose the tiles of the band: a contraction's m and n in tiles of 128
 * (16-bit operands) or 64 (f32), its other band dimensions in tiles of
 * 1; otherwise the innermost dimensions first within TILE_BUDGET
 * elements (with the inner loops' tiles). Then the grid. */
static int choose_tiles(struct tr *t, MlirOperation root, int64_t grid[3])
{
	if (t->mm_m >= 0) {
		int64_t mt = t->mm_elem == PB_TILEIR_F32 ? 64 : 128;
		for (int i = 0; i < t->nband; i++) {
			int64_t p = pow2ceil(t->d[i].extent);
			t->d[i].tile = i == t->mm_m || i == t->mm_n
					       ? (p < mt ? p : mt)
					       : 1;
		}
	} else {
		int64_t budget = TILE_BUDGET / loop_volume(root);
		for (int i = t->nband - 1; i >= 0; i--) {
			int64_t p = pow2ceil(t->d[i].extent);
			t->d[i].tile = p < budget ? p : budget > 1 ? budget : 1;
			budget /= t->d[i].tile;
		}
	}
	int g = 0;
	grid[0] = grid[1] = grid[2] = 1;
	for (int i = t->nband - 1; i >= 0; i--) {
		int64_t n = (t->d[i].extent + t->d[i].tile - 1) / t->d[i].tile;
		t->d[i].grid = -1;
		t->d[i].blocks = n;
		if (n == 1)
			continue;
		t->d[i].grid = g < 2 ? g : 2;
		grid[t->d[i].grid] *= n;
		g++;
		if ((g > 1 && grid[t->d[i].grid] > 65535) || grid[0] > INT32_MAX)
			return fail(t, root, "a grid past 65535 blocks in y or "
					     "z, or 2^31-1 in x");
	}
	return PB_OK;
}

/* The bytes of the elements of dense elements "a" of element type "e"
 * (booleans a byte each) into "out". */
static void dense_bytes(MlirAttribute a, int e, struct pb_buf *out)
{
	int64_t n = mlirElementsAttrGetNumElements(a);
	size_t w = e == PB_TILEIR_I1 ? 1 : bits_of(e) / 8;
	const uint8_t *raw = mlirDenseElementsAttrGetRawData(a);
	int splat = mlirDenseElementsAttrIsSplat(a);
	for (int64_t i = 0; i < n; i++) {
		uint8_t b = 0;
		if (e == PB_TILEIR_I1) {
			b = mlirDenseElementsAttrGetBoolValue(a, splat ? 0 : i);
			pb_buf_append(out, &b, 1);
		} else {
			pb_buf_append(out, raw + (splat ? 0 : i * w), w);
		}
	}
}

/* The constant buffers (memref.get_global) at the top of the kernel
 * function: each a global of the module (its memref.global's elements)
 * and a pointer to it (get_global), the value of the buffer. */
static int globals(struct tr *t)
{
	MlirOperation mod = mlirOperationGetParentOperation(t->func);
	MlirBlock fb = pb_ir_entry_block(t->func);
	for (MlirOperation op = mlirBlockGetFirstOperation(fb);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		if (!pb_ir_op_is(op, "memref.get_global"))
			continue;
		MlirStringRef sym = mlirFlatSymbolRefAttrGetValue(
			pb_ir_attr(op, "name"));
		MlirOperation g = {NULL};
		MlirBlock mb = mlirRegionGetFirstBlock(mlirOperationGetRegion(mod, 0));
		for (MlirOperation o = mlirBlockGetFirstOperation(mb);
		     !mlirOperationIsNull(o) && mlirOperationIsNull(g);
		     o = mlirOperationGetNextInBlock(o)) {
			MlirStringRef n = pb_ir_str_attr(o, "sym_name");
			if (pb_ir_op_is(o, "memref.global") && n.data &&
			    mlirStringRefEqual(n, sym))
				g = o;
		}
		MlirValue v = mlirOperationGetResult(op, 0);
		MlirType mt = mlirValueGetType(v);
		MlirAttribute init = mlirOperationIsNull(g)
					     ? (MlirAttribute){NULL}
					     : pb_ir_attr(g, "initial_value");
		int e = mem_elem(v);
		if (mlirAttributeIsNull(init) ||
		    !mlirAttributeIsADenseElements(init) || e < 0 ||
		    !mlirShapedTypeHasStaticShape(mt))
			return fail(t, op, "expected a constant global of "
					   "static shape with dense elements "
					   "of a Tile IR element type");
		struct pb_buf data = {0}, name = {0};
		dense_bytes(init, e, &data);
		pb_buf_append(&name, sym.data, sym.length);
		int el = pb_tileir_type_elem(t->w, stored(e));
		/* a tile type's extent is a power of two: zeros past the
		 * elements, which the buffer's views never reach */
		int64_t n = pow2ceil(mlirElementsAttrGetNumElements(init));
		size_t w = e == PB_TILEIR_I1 ? 1 : bits_of(e) / 8;
		while (data.len < (size_t)n * w)
			pb_buf_append(&data, "", 1);
		pb_tileir_global(t->w, name.data,
				 pb_tileir_type_tile(t->w, el, &n, 1), data.data,
				 data.len, 16);
		int ptr = pb_tileir_type_tile(t->w, pb_tileir_type_ptr(t->w, el),
					      NULL, 0);
		set_val(t, v, (struct tval){pb_tileir_get_global(t->w, ptr, name.data),
					    0, stored(e), VAL, -1, NULL});
		pb_buf_free(&data);
		pb_buf_free(&name);
	}
	return PB_OK;
}

/* Write the Tile IR entry "name" for nest "root" (the top-level loop of
 * kernel function "func"); its grid into "grid". */
int pb_tileir_nest(struct pb_ctx *ctx, struct pb_tileir *w,
		   MlirOperation func, MlirOperation root, int count,
		   const char *name, const int *aligned, int64_t grid[3])
{
	struct tr t = {.ctx = ctx, .w = w, .func = func, .mm_m = -1, .mm_n = -1};
	int rc = PB_OK;
	MlirOperation inner = root;
	MlirBlock b = {NULL};
	/* the band: perfectly nested affine.parallel loops */
	while (pb_ir_op_is(inner, "affine.parallel")) {
		int64_t lb[MAXD], step[MAXD], count[MAXD];
		MlirValue iv[MAXD];
		int n = pb_ir_parallel_dims(inner, MAXD - t.nband, lb, step,
					    count, iv);
		if (n < 0)
			return fail(&t, inner, "expected a parallel loop with "
					       "constant bounds");
		for (int i = 0; i < n; i++) {
			if (lb[i] != 0 || step[i] != 1)
				return fail(&t, inner, "expected a parallel loop "
						       "from 0 with step 1");
			t.d[t.nband] = (struct dim){count[i], 1, 1, 0, -1, 1, -1};
			t.iv[t.niv].v = iv[i];
			t.iv[t.niv++].dim = t.nband++;
		}
		b = mlirRegionGetFirstBlock(mlirOperationGetRegion(inner, 0));
		MlirOperation first = mlirBlockGetFirstOperation(b);
		MlirOperation next = mlirOperationGetNextInBlock(first);
		if (pb_ir_op_is(first, "affine.parallel") &&
		    (mlirOperationIsNull(next) ||
		     (pb_ir_op_is(next, "affine.yield") &&
		      mlirOperationIsNull(mlirOperationGetNextInBlock(next)))))
			inner = first;
		else
			break;
	}
	t.ndims = t.nband;
	for (int i = 0; i < MAXD; i++)
		t.dimidx[i] = -1;
	find_mm(&t, root);
	if (choose_tiles(&t, inner, grid))
		return PB_ERR;

	int np = pb_ir_func_num_args(func);
	int *params = calloc(np + 1, sizeof(int));
	MlirBlock entry = pb_ir_entry_block(func);
	for (int i = 0; i < np; i++) {
		MlirType ty = mlirValueGetType(mlirBlockGetArgument(entry, i));
		int e = mlirTypeIsAMemRef(ty)
				? elem_of(mlirShapedTypeGetElementType(ty))
				: -1;
		if (e < 0) {
			free(params);
			return fail(&t, func, "a kernel argument is not a "
					      "buffer of a Tile IR element "
					      "type");
		}
		params[i] = pb_tileir_type_tile(
			w, pb_tileir_type_ptr(w, pb_tileir_type_elem(w, stored(e))),
			NULL, 0);
	}
	pb_tileir_func_begin(w, name, params, np, 1);
	/* buffers 16-byte aligned at every launch: TMA may move them */
	t.argv = calloc(np + 1, sizeof(int));
	for (int i = 0; i < np; i++)
		t.argv[i] = aligned && aligned[i]
				    ? pb_tileir_assume_div_by(w, params[i], i, 16)
				    : i;
	free(params);
	t.i32 = pb_tileir_type_tile(w, pb_tileir_type_elem(w, PB_TILEIR_I32),
				    NULL, 0);
	t.tok = pb_tileir_type_elem(w, PB_TILEIR_TOKEN);
	t.token = pb_tileir_make_token(w, t.tok);
	t.bid = pb_tileir_block_id(w, t.i32);
	t.zero_i32 = iconst(&t, 0);
	if (rc == PB_OK)
		rc = globals(&t);
	/* the block index of each band dimension: x and y directly, the
	 * dimensions in z delinearized from it (the innermost fastest) */
	int z = t.bid + 2;
	int zdims = 0;
	for (int i = 0; i < t.nband; i++)
		zdims += t.d[i].grid == 2;
	for (int i = t.nband - 1; i >= 0; i--) {
		struct dim *d = &t.d[i];
		if (d->grid < 2 || zdims == 1) {
			d->blk = t.bid + (d->grid < 0 ? 0 : d->grid);
			continue;
		}
		int n = iconst(&t, (int32_t)d->blocks);
		d->blk = pb_tileir_ibin(w, PB_TILEIR_REMI, t.i32, z, n);
		z = pb_tileir_ibin(w, PB_TILEIR_DIVI, t.i32, z, n);
	}
	if (rc == PB_OK && pb_ir_op_is(root, "affine.parallel")) {
		rc = body(&t, b);
	} else {
		MlirOperation op = root;
		for (int i = 0; rc == PB_OK && i < count; i++) {
			rc = do_op(&t, op);
			op = mlirOperationGetNextInBlock(op);
		}
	}
	/* the deferred stores, in the order of their last write */
	for (int done = 0; rc == PB_OK && !done;) {
		int best = -1;
		for (int i = 0; i < t.nlocs; i++) {
			struct loc *s = &t.locs[i];
			if (s->global && s->order &&
			    (best < 0 || s->order < t.locs[best].order))
				best = i;
		}
		if (best < 0) {
			done = 1;
			continue;
		}
		rc = store(&t, t.locs[best].where, &t.locs[best], &t.locs[best].val);
		t.locs[best].order = 0;
	}
	pb_tileir_return(w);
	pb_tileir_func_end(w);
	free(t.vals);
	free(t.locs);
	free(t.argv);
	return rc;
}
