/* The analysis of pb-smem (docs/pb-smem.md): for one mapped nest, its
 * chain of warp and thread loops and its reduction loop; the reads worth
 * staging, grouped per buffer, with their boxes per block and k-tile
 * from lib/poly's localized model; their layouts priced by the bank
 * model; the k-tile and the ring that fit the target's shared memory. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <isl/aff.h>
#include <isl/ctx.h>
#include <isl/fixed_box.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/val.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "core/tensor.h"
#include "kernel/kernel.h"
#include "poly/poly.h"
#include "smem/internal.h"
#include "target/target.h"

/* The first block of the first region of "op". */
MlirBlock pb_smem_body(MlirOperation op)
{
	return mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
}

/* A --remarks line at "op". */
void pb_smem_remark(struct promote *p, MlirOperation op, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	if (!p->o->remarks)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pb_remark_at(p->ctx, mlirOperationGetLocation(op), "%s", msg);
}

/* Is "op" side-effect free arithmetic that any sibling may recompute? */
int pb_smem_is_pure(MlirOperation op)
{
	MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
	return (n.length > 6 && !strncmp(n.data, "arith.", 6)) ||
	       (n.length > 6 && !strncmp(n.data, "index.", 6)) ||
	       (n.length > 5 && !strncmp(n.data, "math.", 5)) ||
	       pb_ir_op_is(op, "affine.apply") ||
	       pb_ir_op_is(op, "affine.min") || pb_ir_op_is(op, "affine.max");
}

int64_t pb_smem_for_trip(MlirOperation op, int64_t *lb, int64_t *step)
{
	int64_t ub;
	if (!pb_ir_op_is(op, "affine.for") ||
	    pb_ir_const_map(op, "lowerBoundMap", 1, lb) ||
	    pb_ir_const_map(op, "upperBoundMap", 1, &ub))
		return -1;
	*step = mlirIntegerAttrGetValueInt(pb_ir_attr(op, "step"));
	if (*step < 1)
		return -1;
	return ub > *lb ? (ub - *lb + *step - 1) / *step : 0;
}

/* The value "v" is a root buffer the kernel never writes: a memref
 * argument of the kernel function used only by loads. */
static int read_only_arg(MlirOperation func, MlirValue v)
{
	if (!mlirValueIsABlockArgument(v) ||
	    !mlirOperationEqual(mlirBlockGetParentOperation(
					mlirBlockArgumentGetOwner(v)),
				func) ||
	    !mlirTypeIsAMemRef(mlirValueGetType(v)))
		return 0;
	return pb_kernel_only_loaded(v);
}

/* May a buffer that kernel "func" writes be the memory of its argument
 * "root" at some call (docs/kernel-model.md, aliasing)? Any operation on a
 * memref other than a load, a view or a size query counts as a write. */
static int written_alias(MlirOperation func, MlirValue root)
{
	struct pb_ir_ops all = {0};
	MlirOperation module = mlirOperationGetParentOperation(func);
	int alias = 0;
	pb_ir_collect(func, NULL, &all);
	for (int i = 0; i < all.n && !alias; i++) {
		MlirOperation op = all.v[i];
		if (pb_ir_op_is(op, "affine.load") ||
		    pb_ir_op_is(op, "memref.load") ||
		    pb_ir_op_is(op, "affine.vector_load") ||
		    pb_ir_op_is(op, "memref.dim") || pb_poly_is_view(op))
			continue;
		for (intptr_t k = 0; k < mlirOperationGetNumOperands(op) && !alias;
		     k++) {
			MlirValue v = mlirOperationGetOperand(op, k);
			alias = mlirTypeIsAMemRef(mlirValueGetType(v)) &&
				pb_kernel_may_alias(module, func, v, root);
		}
	}
	pb_ir_ops_free(&all);
	return alias;
}

/* Find the mapped chain of "top" (warp loops perfectly nested down to one
 * thread loop, or a thread loop alone) into "n", with the threads of the
 * block: 32 per warp, or the thread loop's points; 0 when it has another
 * shape. */
int pb_smem_find_chain(MlirOperation top, struct nest *n)
{
	MlirOperation op = top;
	int nwarp = 0;
	memset(&n->chain, 0, sizeof(n->chain));
	for (;;) {
		enum pb_map_level l = pb_contract_map_of(op);
		if ((l != PB_MAP_WARP && l != PB_MAP_THREAD) ||
		    !pb_kernel_band_add(op, &n->chain))
			return 0;
		if (l == PB_MAP_THREAD) {
			n->thread = op;
			break;
		}
		nwarp = n->chain.n;
		MlirOperation inner = {NULL};
		for (MlirOperation o = mlirBlockGetFirstOperation(pb_smem_body(op));
		     !mlirOperationIsNull(o); o = mlirOperationGetNextInBlock(o)) {
			if (pb_ir_op_is(o, "affine.yield") || pb_smem_is_pure(o))
				continue;
			if (!mlirOperationIsNull(inner))
				return 0;
			inner = o;
		}
		if (mlirOperationIsNull(inner))
			return 0;
		op = inner;
	}
	n->chain.root = top;
	if (nwarp) {
		int64_t w = pb_numel(nwarp, n->chain.extent);
		int64_t lanes = pb_numel(n->chain.n - nwarp,
					 n->chain.extent + nwarp);
		if (lanes > 32)
			return 0;
		n->threads = 32 * w;
		n->nwarp = nwarp;
	} else {
		n->nwarp = 0;
		n->threads = pb_kernel_band_points(&n->chain);
	}
	return n->threads > 0 && n->threads <= 1024;
}

/* Does "op" use the counter "iv" in a subscript of one of the "np"
 * private buffers "priv" (np < 0: of any memref.alloca)? */
static int indexes_private(MlirOperation op, MlirValue iv,
			   const MlirValue *priv, int np)
{
	struct pb_ir_ops all = {0};
	int found = 0;
	pb_ir_collect(op, NULL, &all);
	for (int i = 0; i < all.n && !found; i++) {
		int mem, w;
		if (!pb_poly_access_operand(all.v[i], &mem, &w))
			continue;
		MlirValue b = mlirOperationGetOperand(all.v[i], mem);
		int priv_buf = np < 0 && mlirValueIsAOpResult(b) &&
			       pb_ir_op_is(mlirOpResultGetOwner(b),
					   "memref.alloca");
		for (int k = 0; k < np; k++)
			priv_buf |= mlirValueEqual(b, priv[k]);
		for (intptr_t j = mem + 1;
		     priv_buf && j < mlirOperationGetNumOperands(all.v[i]); j++)
			found |= mlirValueEqual(
				mlirOperationGetOperand(all.v[i], j), iv);
	}
	pb_ir_ops_free(&all);
	return found;
}

/* Is a result of "op" used outside "op" other than in the thread loop's
 * part "op" belongs to? Only pure operations may be recomputed by every
 * sibling. */
static int escapes(MlirOperation op, MlirBlock body)
{
	for (intptr_t r = 0; r < mlirOperationGetNumResults(op); r++)
		for (MlirOpOperand u = mlirValueGetFirstUse(
			     mlirOperationGetResult(op, r));
		     !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u)) {
			MlirOperation user = pb_ir_ancestor_in(
				mlirOpOperandGetOwner(u), body);
			if (mlirOperationIsNull(user) ||
			    !mlirOperationEqual(user, op))
				return 1;
		}
	return 0;
}

/* The reduction loop of the thread loop of "n": the first affine.for of
 * its body with constant bounds from 0 by 1, at least 2 iterations, that
 * reads a buffer the kernel never writes and whose counter indexes no
 * private buffer (those are the points of a thread tile). Every other
 * operation of the body must be pure, a private buffer, or keep its
 * results to itself. 0 when there is none (why into "why"). */
int pb_smem_find_loop(struct promote *p, struct nest *n, const char **why)
{
	MlirBlock body = pb_smem_body(n->thread);
	MlirValue priv[MAXPRIV];
	int np = 0, i = 0, crosses = 0;
	n->loop = (MlirOperation){NULL};
	for (MlirOperation o = mlirBlockGetFirstOperation(body);
	     !mlirOperationIsNull(o); o = mlirOperationGetNextInBlock(o))
		if (pb_ir_op_is(o, "memref.alloca")) {
			if (np == MAXPRIV) {
				*why = "too many private buffers";
				return 0;
			}
			priv[np++] = mlirOperationGetResult(o, 0);
		}
	for (MlirOperation o = mlirBlockGetFirstOperation(body);
	     !mlirOperationIsNull(o); o = mlirOperationGetNextInBlock(o), i++) {
		int64_t lb, step, trip = pb_smem_for_trip(o, &lb, &step);
		if (pb_ir_op_is(o, "affine.yield") || pb_smem_is_pure(o) ||
		    pb_ir_op_is(o, "memref.alloca"))
			continue;
		if (escapes(o, body))
			crosses = 1;
		if (!mlirOperationIsNull(n->loop) || trip < 2 || lb || step != 1)
			continue;
		MlirValue iv = mlirBlockGetArgument(pb_smem_body(o), 0);
		if (indexes_private(o, iv, priv, np))
			continue;
		struct pb_ir_ops all = {0};
		int reads = 0;
		pb_ir_collect(o, NULL, &all);
		for (int k = 0; k < all.n && !reads; k++) {
			int mem, w;
			if (pb_poly_access_operand(all.v[k], &mem, &w) && !w)
				reads = read_only_arg(
					p->func, pb_poly_root(mlirOperationGetOperand(
							 all.v[k], mem)));
		}
		pb_ir_ops_free(&all);
		if (!reads)
			continue;
		n->loop = o;
		n->at = i;
		n->trip = trip;
	}
	if (mlirOperationIsNull(n->loop)) {
		*why = "no reduction loop reading a buffer the kernel never "
		       "writes";
		return 0;
	}
	if (crosses) {
		*why = "a value of the thread's work crosses from one of its "
		       "loops to another";
		return 0;
	}
	return 1;
}

/* How many times one block executes "op" (nested in the top loop of "n")
 * per k-tile: the trip counts of the loops around it, the reduction
 * loop's replaced by the k-tile; loops with bounds not constant count
 * once. */
static int64_t executions(const struct nest *n, MlirOperation op)
{
	int64_t e = 1;
	for (MlirOperation q = mlirOperationGetParentOperation(op);
	     !mlirOperationIsNull(q); q = mlirOperationGetParentOperation(q)) {
		int64_t lb, step, t;
		if (mlirOperationEqual(q, n->loop)) {
			t = n->kt;
		} else if (pb_ir_op_is(q, "affine.parallel")) {
			int64_t l[PB_KERNEL_MAXD], st[PB_KERNEL_MAXD],
				c[PB_KERNEL_MAXD];
			MlirValue iv[PB_KERNEL_MAXD];
			int k = pb_ir_parallel_dims(q, PB_KERNEL_MAXD, l, st, c,
						    iv);
			t = k < 0 ? 1 : pb_numel(k, c);
		} else {
			t = pb_smem_for_trip(q, &lb, &step);
			if (t < 0)
				t = 1;
		}
		e *= t;
		if (mlirOperationEqual(q, n->top))
			break;
	}
	return e;
}

static int64_t sub_coef(MlirOperation op, int d, MlirValue iv);

/* How many distinct reads of the thread's "op" (a read of a group of
 * rank "rank" in the reduction loop of "n") one block issues per
 * k-tile: executions(), less the trips of the loops inside the
 * reduction loop (a jammed thread tile's point loops) that move none of
 * its subscripts. Once those loops unroll, their points read the same
 * element and LLVM keeps one load (a 1x1 convolution's input pixel is
 * read once for all the thread's output channels). */
static int64_t distinct_reads(const struct nest *n, MlirOperation op,
			      int rank)
{
	int64_t e = executions(n, op);
	for (MlirOperation q = mlirOperationGetParentOperation(op);
	     !mlirOperationIsNull(q) && !mlirOperationEqual(q, n->loop);
	     q = mlirOperationGetParentOperation(q)) {
		int64_t lb, step, t;
		if (!pb_ir_op_is(q, "affine.for"))
			continue;
		t = pb_smem_for_trip(q, &lb, &step);
		MlirValue iv = mlirBlockGetArgument(pb_smem_body(q), 0);
		int moves = t < 1;
		for (int d = 0; d < rank && !moves; d++)
			moves = sub_coef(op, d, iv) != 0;
		if (!moves)
			e /= t;
	}
	return e;
}

/* Does index value "v" depend on counter "iv" (through the operands of
 * the operations that define it)? */
static int depends(MlirValue v, MlirValue iv, int depth)
{
	if (mlirValueEqual(v, iv))
		return 1;
	if (depth > 16 || !mlirValueIsAOpResult(v))
		return 0;
	MlirOperation def = mlirOpResultGetOwner(v);
	for (intptr_t i = 0; i < mlirOperationGetNumOperands(def); i++)
		if (depends(mlirOperationGetOperand(def, i), iv, depth + 1))
			return 1;
	return 0;
}

/* The range [*lo, *hi] of parameter "i" of the model of "n" (i == np:
 * the k-tile origin): a counter of the block loop, or unknown (0). */
static int param_range(const struct nest *n, int i, int64_t *lo, int64_t *hi)
{
	if (i == n->l->np) {
		*lo = 0;
		*hi = n->trip - n->kt;
		return 1;
	}
	for (int d = 0; d < n->blk.n; d++)
		if (mlirValueEqual(n->l->par[i], n->blk.iv[d])) {
			*lo = n->blk.lb[d];
			*hi = n->blk.lb[d] + n->blk.step[d] * (n->blk.extent[d] - 1);
			return 1;
		}
	return 0;
}

/* The values the parameters of footprint "fp" of "n" take: the block
 * counters their range, the k-tile origin "o<d>" 0 to trip - KT. */
static __isl_give isl_set *param_context(const struct nest *n,
					 __isl_keep isl_set *fp)
{
	isl_set *c = isl_set_universe(isl_space_params(isl_set_get_space(fp)));
	char name[16];
	snprintf(name, sizeof(name), "o%d", n->chain.n);
	for (int i = 0; i < (int)isl_set_dim(c, isl_dim_param); i++) {
		const char *pn = isl_set_get_dim_name(c, isl_dim_param, i);
		int64_t lo, hi;
		int k = !pn ? -1 : !strcmp(pn, name) ? n->l->np
			: pn[0] == 'p' ? atoi(pn + 1) : -1;
		if (k < 0 || k > n->l->np || !param_range(n, k, &lo, &hi))
			continue;
		c = isl_set_lower_bound_si(c, isl_dim_param, i, lo);
		c = isl_set_upper_bound_si(c, isl_dim_param, i, hi);
	}
	return c;
}

/* isl_pw_aff_foreach_piece callback: keep the piece's function. */
static isl_stat keep_piece(__isl_take isl_set *set, __isl_take isl_aff *aff,
			   void *user)
{
	isl_aff **a = user;
	isl_set_free(set);
	isl_aff_free(*a);
	*a = aff;
	return isl_stat_ok;
}

/* The function of "pa", a piecewise function of one piece. */
static __isl_give isl_aff *single_aff(__isl_take isl_pw_aff *pa)
{
	isl_aff *a = NULL;
	if (isl_pw_aff_n_piece(pa) == 1)
		isl_pw_aff_foreach_piece(pa, &keep_piece, &a);
	isl_pw_aff_free(pa);
	return a;
}

/* A box group_box computed: for the accesses "acc" of a group of rank
 * "rank" at k-tile "kt", whether it exists ("ok") and its sizes and
 * offset. */
struct box_memo_entry {
	int64_t kt;
	int n, rank, ok;
	int acc[MAXACC];
	int64_t size[MAXR], cst[MAXR];
	int64_t coef[MAXR][PB_POLY_LOCAL_MAXPAR + 1];
};

/* The boxes of one nest's groups (its access model n->l and mapped
 * chain do not change while it is planned): the ring search asks for
 * every group's box at each k-tile and slot count it tries, and
 * pb_smem_fits and pb_smem_drop_largest ask again, but the box depends
 * only on the group's accesses and the k-tile. */
struct pb_smem_box_memo {
	int n, cap;
	struct box_memo_entry *e;
};

void pb_smem_box_memo_free(struct pb_smem_box_memo *m)
{
	if (!m)
		return;
	free(m->e);
	free(m);
}

/* The entry of "m" for group "g" at k-tile "kt", or NULL. */
static struct box_memo_entry *box_memo_find(struct pb_smem_box_memo *m,
					    const struct group *g, int64_t kt)
{
	for (int i = 0; m && i < m->n; i++) {
		struct box_memo_entry *e = &m->e[i];
		if (e->kt == kt && e->n == g->n && e->rank == g->rank &&
		    !memcmp(e->acc, g->acc, g->n * sizeof(g->acc[0])))
			return e;
	}
	return NULL;
}

/* Remember in "m" the box "ok" of group "g" at k-tile "kt". */
static void box_memo_add(struct pb_smem_box_memo *m, const struct group *g,
			 int64_t kt, int ok)
{
	if (!m)
		return;
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 16;
		m->e = pb_xrealloc(m->e, m->cap, sizeof(*m->e));
	}
	struct box_memo_entry *e = &m->e[m->n++];
	memset(e, 0, sizeof(*e));
	e->kt = kt;
	e->n = g->n;
	e->rank = g->rank;
	e->ok = ok;
	memcpy(e->acc, g->acc, g->n * sizeof(g->acc[0]));
	for (int d = 0; ok && d < g->rank; d++) {
		e->size[d] = g->size[d];
		e->cst[d] = g->cst[d];
		memcpy(e->coef[d], g->coef[d], sizeof(g->coef[d]));
	}
}

/* The box of group "g" of "n" per block and k-tile into "g": sizes and
 * the offset as coefficients of the parameters and the k-tile origin.
 * 0 when there is no such box (what is left in "g" is then not used).
 * Each group's box at each k-tile is computed once per nest (n->memo). */
static int box_of(struct nest *n, struct group *g);

static int group_box(struct nest *n, struct group *g)
{
	struct box_memo_entry *e = box_memo_find(n->memo, g, n->kt);
	if (e) {
		for (int d = 0; e->ok && d < g->rank; d++) {
			g->size[d] = e->size[d];
			g->cst[d] = e->cst[d];
			memcpy(g->coef[d], e->coef[d], sizeof(g->coef[d]));
		}
		return e->ok;
	}
	int ok = box_of(n, g);
	box_memo_add(n->memo, g, n->kt, ok);
	return ok;
}

/* group_box's computation. */
static int box_of(struct nest *n, struct group *g)
{
	int64_t tile[PB_POLY_LOCAL_MAXDIM];
	isl_aff *off[MAXR] = {NULL};
	char name[16];
	int ok = 1;
	for (int k = 0; k < n->chain.n; k++)
		tile[k] = n->chain.extent[k];
	tile[n->chain.n] = n->kt;
	isl_set *fp = pb_poly_local_footprint(n->l, g->n, g->acc, tile);
	for (int k = 0; k < n->chain.n && fp; k++) {
		snprintf(name, sizeof(name), "o%d", k);
		int pos = isl_set_find_dim_by_name(fp, isl_dim_param, name);
		if (pos < 0)
			continue;
		fp = isl_set_fix_si(fp, isl_dim_param, pos, 0);
		fp = isl_set_project_out(fp, isl_dim_param, pos, 1);
	}
	fp = fp ? isl_set_intersect_params(fp, param_context(n, fp)) : NULL;
	isl_fixed_box *box = fp ? isl_set_get_simple_fixed_box_hull(fp) : NULL;
	if (box && isl_fixed_box_is_valid(box) == isl_bool_true) {
		isl_multi_val *size = isl_fixed_box_get_size(box);
		isl_multi_aff *o = isl_fixed_box_get_offset(box);
		for (int d = 0; d < g->rank; d++) {
			isl_val *v = isl_multi_val_get_at(size, d);
			g->size[d] = isl_val_get_num_si(v);
			isl_val_free(v);
			off[d] = isl_multi_aff_get_at(o, d);
		}
		isl_multi_val_free(size);
		isl_multi_aff_free(o);
	} else {
		/* a footprint with existentials (the points of a thread tile
		 * interleaved with the other threads') has no simple box:
		 * bound each dimension by its exact minimum and maximum */
		for (int d = 0; d < g->rank && ok && fp; d++) {
			isl_pw_aff *lo = isl_set_dim_min(isl_set_copy(fp), d);
			isl_pw_aff *hi = isl_set_dim_max(isl_set_copy(fp), d);
			isl_pw_aff *w = isl_pw_aff_sub(isl_pw_aff_copy(hi),
						       isl_pw_aff_copy(lo));
			ok = isl_pw_aff_n_piece(lo) == 1 &&
			     isl_pw_aff_n_piece(w) == 1 &&
			     isl_pw_aff_is_cst(w) == isl_bool_true;
			if (ok) {
				isl_aff *wa = single_aff(w);
				isl_val *v = isl_aff_get_constant_val(wa);
				g->size[d] = isl_val_get_num_si(v) + 1;
				isl_val_free(v);
				isl_aff_free(wa);
				off[d] = single_aff(lo);
			} else {
				isl_pw_aff_free(w);
				isl_pw_aff_free(lo);
			}
			isl_pw_aff_free(hi);
		}
		ok = ok && fp;
	}
	isl_fixed_box_free(box);
	isl_set_free(fp);
	snprintf(name, sizeof(name), "o%d", n->chain.n);
	for (int d = 0; d < g->rank && ok; d++) {
		isl_aff *a = off[d];
		ok = a && isl_aff_dim(a, isl_dim_div) == 0 && g->size[d] > 0;
		memset(g->coef[d], 0, sizeof(g->coef[d]));
		for (int i = 0; ok && i < isl_aff_dim(a, isl_dim_param); i++) {
			isl_val *c = isl_aff_get_coefficient_val(a, isl_dim_param,
								 i);
			const char *pn = isl_aff_get_dim_name(a, isl_dim_param,
							      i);
			int64_t cv = isl_val_get_num_si(c);
			ok = isl_val_is_int(c) == isl_bool_true && pn;
			isl_val_free(c);
			if (!ok || !cv)
				continue;
			if (!strcmp(pn, name))
				g->coef[d][n->l->np] = cv;
			else if (pn[0] == 'p' && atoi(pn + 1) < n->l->np)
				g->coef[d][atoi(pn + 1)] = cv;
			else
				ok = 0;
		}
		if (ok) {
			isl_val *c = isl_aff_get_constant_val(a);
			ok = isl_val_is_int(c) == isl_bool_true;
			g->cst[d] = isl_val_get_num_si(c);
			isl_val_free(c);
		}
	}
	for (int d = 0; d < MAXR; d++)
		isl_aff_free(off[d]);
	return ok;
}

/* The values of parameter "i" of the model of "n" are lo + step * j: a
 * counter of the block loop, the k-tile origin (multiples of the k-tile),
 * or anything (step 1). */
static void param_steps(const struct nest *n, int i, int64_t *lo,
			int64_t *step)
{
	*lo = 0;
	*step = 1;
	if (i == n->l->np) {
		*step = n->kt;
		return;
	}
	for (int d = 0; d < n->blk.n; d++)
		if (mlirValueEqual(n->l->par[i], n->blk.iv[d])) {
			*lo = n->blk.lb[d];
			*step = n->blk.step[d];
		}
}

/* Which dimensions of "g" may leave its buffer for some block and
 * k-tile: those get guarded copies with zero fill. */
static void find_guards(const struct nest *n, struct group *g)
{
	for (int d = 0; d < g->rank; d++) {
		int64_t lo = g->cst[d], hi = g->cst[d];
		int known = 1;
		for (int i = 0; i <= n->l->np && known; i++) {
			int64_t c = g->coef[d][i], a = 0, b = 0;
			if (!c)
				continue;
			known = param_range(n, i, &a, &b);
			lo += c > 0 ? c * a : c * b;
			hi += c > 0 ? c * b : c * a;
		}
		g->guard[d] = !known || lo < 0 || hi + g->size[d] > g->dim[d];
	}
}

/* The layout of a staged tile: the box dimension each dimension of the
 * buffer holds ("perm", outermost first) and the padding of the
 * innermost one. */
struct layout {
	int perm[MAXR];
	int64_t pad;
	/* the tile dimension the point loop of a jammed thread tile walks
	 * by one in every access (point_dim), -1 when none, and that loop's
	 * trip count */
	int pd;
	int64_t pt;
};

/* The tile dimension the copies of "g" run along in layout "lay": the
 * buffer's innermost one, when the global buffer has no other dimension
 * inside it but ones of one element (a 1x1 convolution's weights
 * [f][c][1][1] stored [f][1][1][c]: copied along c through a collapsed
 * view of the weights); -1 otherwise. */
static int copy_dim(const struct group *g, const struct layout *lay)
{
	int x = lay->perm[g->rank - 1];
	for (int e = x + 1; e < g->rank; e++)
		if (g->dim[e] != 1)
			return -1;
	return x;
}

/* The widest copy of "g" in layout "lay": elements per copy (16 bytes at
 * most, along the copy dimension of both the buffer and the tile,
 * copy_dim) such that every copy is aligned in the buffer and in the tile
 * and either wholly inside the buffer or wholly outside. */
static int64_t copy_width(const struct nest *n, const struct group *g,
			  const struct layout *lay)
{
	int r = copy_dim(g, lay);
	if (r < 0)
		return 1;
	int64_t inner = g->size[r] + lay->pad;
	for (int64_t v = 16 / g->elem; v > 1; v /= 2) {
		int ok = g->size[r] % v == 0 && inner % v == 0 &&
			 g->dim[r] % v == 0 && g->cst[r] % v == 0;
		/* the parameters take the values lo + step * j */
		for (int i = 0; i <= n->l->np && ok; i++) {
			int64_t lo, step;
			param_steps(n, i, &lo, &step);
			ok = (g->coef[r][i] * step) % v == 0 &&
			     (g->coef[r][i] * lo) % v == 0;
		}
		if (ok)
			return v;
	}
	return 1;
}

/* The size of buffer dimension "s" of "g" in layout "lay". */
static int64_t buf_size(const struct group *g, const struct layout *lay, int s)
{
	return g->size[lay->perm[s]] + (s == g->rank - 1 ? lay->pad : 0);
}

/* The strides in elements in the buffer of "g" (layout "lay") of each
 * dimension of the tile. */
static void tile_strides(const struct group *g, const struct layout *lay,
			 int64_t *stride)
{
	int64_t st = 1;
	for (int s = g->rank - 1; s >= 0; s--) {
		stride[lay->perm[s]] = st;
		st *= buf_size(g, lay, s);
	}
}

/* Are the loops inside the reduction loop of "n" only the points of a
 * thread tile (no window loops), so that pb-smem may unroll its k-tile
 * (pb_smem_unrollable)? */
static int points_only(const struct nest *n)
{
	struct pb_ir_ops loops = {0};
	int ok = 1;
	pb_ir_collect(n->loop, "affine.for", &loops);
	for (int i = 0; i < loops.n && ok; i++)
		ok = mlirOperationEqual(loops.v[i], n->loop) ||
		     indexes_private(loops.v[i],
				     mlirBlockGetArgument(pb_smem_body(loops.v[i]),
							  0), NULL, -1);
	pb_ir_ops_free(&loops);
	return ok;
}

/* Elements per shared-memory read of the warps' accesses of "g" in
 * layout "lay" once the k-tile loop is unrolled: 128 bits when the
 * innermost buffer dimension is the one the reduction counter walks by
 * one in every access and every read of 16 bytes stays aligned. */
static int64_t read_width(const struct nest *n, const struct group *g,
			  const struct layout *lay)
{
	int r = g->rank - 1, d = lay->perm[r], kdim = n->chain.n;
	int64_t v = 16 / g->elem, stride[MAXR], c;
	if (d == lay->pd) {
		/* a thread's points along the innermost dimension: as many
		 * of them at a time as divide the loop, up to 16 bytes */
		tile_strides(g, lay, stride);
		for (; v > 1; v /= 2) {
			int ok = lay->pt % v == 0;
			for (int s = 0; s < r && ok; s++)
				ok = stride[lay->perm[s]] % v == 0;
			if (ok)
				return v;
		}
		return 1;
	}
	if (n->kt % v || !points_only(n))
		return 1;
	tile_strides(g, lay, stride);
	for (int s = 0; s < r; s++)
		if (stride[lay->perm[s]] % v)
			return 1;
	for (int i = 0; i < g->n; i++) {
		if (pb_poly_local_coef(n->l, g->acc[i], d, kdim, &c) || c != 1)
			return 1;
		for (int e = 0; e < g->rank; e++)
			if (e != d && (pb_poly_local_coef(n->l, g->acc[i], e,
							  kdim, &c) || c))
				return 1;
	}
	return v;
}

/* The cost of layout "lay" for "g": the warp-wide shared-memory
 * instructions per k-tile of the warps' reads (each read
 * "width" elements, see read_width) and of the copy's stores and loads,
 * each times the bank-conflict degree of its accesses; -1 when a read's
 * lanes cannot be told apart (not affine in the thread counters). The
 * worst read degree into "*degree". */
static int64_t layout_cost(const struct nest *n, const struct group *g,
			   const struct layout *lay, int *degree)
{
	int64_t stride[MAXR], word[32], cost = 0;
	int nt = n->chain.n - n->nwarp;
	int64_t lanes = pb_numel(nt, n->chain.extent + n->nwarp);
	int64_t width = read_width(n, g, lay);
	int ww = (int)(width * g->elem / 4);
	if (lanes > 32)
		lanes = 32;
	tile_strides(g, lay, stride);
	*degree = 1;
	for (int i = 0; i < g->n; i++) {
		for (int l = 0; l < lanes; l++) {
			int64_t rest = l, idx[PB_KERNEL_MAXD], w = 0;
			for (int k = n->chain.n - 1; k >= n->nwarp; k--) {
				idx[k] = rest % n->chain.extent[k];
				rest /= n->chain.extent[k];
			}
			for (int d = 0; d < g->rank; d++) {
				int64_t s = 0, c;
				for (int k = n->nwarp; k < n->chain.n; k++) {
					if (pb_poly_local_coef(n->l, g->acc[i], d,
							       k, &c))
						return -1;
					s += c * idx[k];
				}
				w += s * stride[d];
			}
			word[l] = w * g->elem / 4;
		}
		int deg = pb_smem_bank_degree(word, (int)lanes, ww < 1 ? 1 : ww);
		if (deg > *degree)
			*degree = deg;
		cost += deg * (distinct_reads(n, n->l->access[g->acc[i]].op,
					      g->rank) /
				       n->threads / width + 1);
	}
	/* the copy: lane l stores unit l, in the order of the tile */
	int64_t v = copy_width(n, g, lay), units = 1;
	int cd = v > 1 ? copy_dim(g, lay) : g->rank - 1;
	for (int d = 0; d < g->rank; d++)
		units *= d == cd ? g->size[d] / v : g->size[d];
	for (int l = 0; l < 32; l++) {
		int64_t rest = l % units, w = 0;
		for (int d = g->rank - 1; d >= 0; d--) {
			int64_t q = d == cd ? g->size[d] / v : g->size[d];
			int64_t c = rest % q;
			rest /= q;
			w += (d == cd ? c * v : c) * stride[d];
		}
		word[l] = w * g->elem / 4;
	}
	/* a round issues its load and store and its address arithmetic
	 * (two issue slots, as a read); a conflicting store (an
	 * asynchronous copy's lands in the background) one more */
	int wv = (int)(v * g->elem / 4);
	cost += (2 + (pb_smem_bank_degree(word, 32, wv < 1 ? 1 : wv) > 1)) *
		((units + n->threads - 1) / n->threads);
	return cost;
}

/* The value of the linear affine expression "e" at "in" ("nd" dims,
 * then symbols); 0 with "*ok" cleared when "e" is not linear. */
static int64_t expr_at(MlirAffineExpr e, const int64_t *in, int nd, int *ok)
{
	if (mlirAffineExprIsAConstant(e))
		return mlirAffineConstantExprGetValue(e);
	if (mlirAffineExprIsADim(e))
		return in[mlirAffineDimExprGetPosition(e)];
	if (mlirAffineExprIsASymbol(e))
		return in[nd + mlirAffineSymbolExprGetPosition(e)];
	if (mlirAffineExprIsAAdd(e) || mlirAffineExprIsAMul(e)) {
		int64_t a = expr_at(mlirAffineBinaryOpExprGetLHS(e), in, nd, ok);
		int64_t b = expr_at(mlirAffineBinaryOpExprGetRHS(e), in, nd, ok);
		return mlirAffineExprIsAAdd(e) ? a + b : a * b;
	}
	*ok = 0;
	return 0;
}

/* The coefficient of counter "iv" in index value "v" (affine.apply
 * chains of linear maps); INT64_MAX when not known to be affine in it. */
static int64_t iv_coef(MlirValue v, MlirValue iv, int depth)
{
	if (mlirValueEqual(v, iv))
		return 1;
	if (!mlirValueIsAOpResult(v))
		return 0;
	MlirOperation def = mlirOpResultGetOwner(v);
	if (pb_ir_op_is(def, "arith.constant"))
		return 0;
	if (depth > 16 || !pb_ir_op_is(def, "affine.apply"))
		return depends(v, iv, 0) ? INT64_MAX : 0;
	MlirAffineMap m = mlirAffineMapAttrGetValue(pb_ir_attr(def, "map"));
	int nin = mlirAffineMapGetNumInputs(m), ok = 1;
	int64_t cin[32], zero[32] = {0};
	if (nin > 32)
		return INT64_MAX;
	for (int k = 0; k < nin; k++) {
		cin[k] = iv_coef(mlirOperationGetOperand(def, k), iv, depth + 1);
		if (cin[k] == INT64_MAX)
			return INT64_MAX;
	}
	MlirAffineExpr e = mlirAffineMapGetResult(m, 0);
	int nd = mlirAffineMapGetNumDims(m);
	int64_t c = expr_at(e, cin, nd, &ok) - expr_at(e, zero, nd, &ok);
	return ok ? c : INT64_MAX;
}

/* The coefficient of counter "iv" in subscript "d" of access "op" (an
 * affine.load, or a load with index operands); INT64_MAX when unknown. */
static int64_t sub_coef(MlirOperation op, int d, MlirValue iv)
{
	int mem, w;
	if (!pb_poly_access_operand(op, &mem, &w))
		return INT64_MAX;
	MlirAttribute ma = pb_ir_attr(op, "map");
	if (mlirAttributeIsNull(ma))
		return iv_coef(mlirOperationGetOperand(op, mem + 1 + d), iv, 0);
	MlirAffineMap m = mlirAffineMapAttrGetValue(ma);
	int nin = mlirAffineMapGetNumInputs(m), ok = 1;
	int64_t cin[32], zero[32] = {0};
	if (nin > 32 || d >= mlirAffineMapGetNumResults(m))
		return INT64_MAX;
	for (int k = 0; k < nin; k++) {
		cin[k] = iv_coef(mlirOperationGetOperand(op, mem + 1 + k), iv, 0);
		if (cin[k] == INT64_MAX)
			return INT64_MAX;
	}
	MlirAffineExpr e = mlirAffineMapGetResult(m, d);
	int nd = mlirAffineMapGetNumDims(m);
	int64_t c = expr_at(e, cin, nd, &ok) - expr_at(e, zero, nd, &ok);
	return ok ? c : INT64_MAX;
}

/* The tile dimension of "g" that one point loop of a jammed thread tile
 * (an affine.for in the reduction loop indexing a private buffer) walks
 * by one in every access of "g", its whole extent (the tile's size there
 * is the loop's trip count), with no other counter of the nest moving
 * it and the loop moving no other dimension: the dimension a thread's
 * contiguous points read, so that stored innermost they read 16 bytes at
 * a time once the point loop unrolls (a convolution's weights over its
 * output channels). Or, for a group of one read, a tile of several
 * threads' runs: the warp and thread counters move it by multiples of
 * the trip, so each run starts aligned to it (pb-tile's contiguous
 * thread tiles: a 1x1 convolution's input columns). -1 when none; the
 * trip into "*trip". */
static int point_dim(const struct nest *n, const struct group *g,
		     int64_t *trip)
{
	struct pb_ir_ops loops = {0};
	int found = -1;
	pb_ir_collect(n->loop, "affine.for", &loops);
	for (int d = 0; d < g->rank && found < 0; d++) {
		for (int q = 0; q < loops.n && found < 0; q++) {
			int64_t lb, step,
				t = pb_smem_for_trip(loops.v[q], &lb, &step);
			MlirValue iv = mlirBlockGetArgument(
				pb_smem_body(loops.v[q]), 0);
			int ok = t > 1 && g->size[d] % t == 0 && lb == 0 &&
				 step == 1 &&
				 !mlirOperationEqual(loops.v[q], n->loop) &&
				 indexes_private(loops.v[q], iv, NULL, -1);
			/* a tile of several threads' points (a contiguous
			 * thread tile): one access, the warp and thread
			 * counters moving it by whole runs of points */
			int whole = t == g->size[d];
			ok = ok && (whole || g->n == 1);
			for (int i = 0; i < g->n && ok; i++) {
				MlirOperation op = n->l->access[g->acc[i]].op;
				ok = pb_ir_is_inside(op, loops.v[q]);
				for (int e = 0; e < g->rank && ok; e++)
					ok = sub_coef(op, e, iv) == (e == d);
				/* no other loop of the nest moves it */
				for (int o = 0; o < loops.n && ok; o++) {
					MlirValue ov = mlirBlockGetArgument(
						pb_smem_body(loops.v[o]), 0);
					if (o != q && pb_ir_is_inside(op, loops.v[o]))
						ok = sub_coef(op, d, ov) == 0;
				}
				for (int k = 0; k <= n->chain.n && ok; k++) {
					int64_t c;
					ok = !pb_poly_local_coef(n->l, g->acc[i], d,
								 k, &c) &&
					     (c == 0 ||
					      (!whole && k < n->chain.n &&
					       c > 0 && c % t == 0));
				}
			}
			if (ok) {
				found = d;
				*trip = t;
			}
		}
	}
	pb_ir_ops_free(&loops);
	return found;
}

/* The dimension of the tile of "g" that the reduction counter moves in
 * its accesses, when there is exactly one; -1 otherwise. */
static int k_dim(const struct nest *n, const struct group *g)
{
	int found = -1;
	for (int d = 0; d < g->rank; d++)
		for (int i = 0; i < g->n; i++) {
			int64_t c;
			if (pb_poly_local_coef(n->l, g->acc[i], d, n->chain.n,
					       &c) || !c)
				continue;
			if (found >= 0 && found != d)
				return -1;
			found = d;
		}
	return found;
}

/* Choose the layout of "g" (the tile's order, or the dimension the
 * reduction walks moved innermost so that a thread's reads along it are
 * contiguous; no padding, 16 bytes or one element of padding) with the
 * least cost, and the copy width it allows. */
static void choose_layout(const struct nest *n, struct group *g)
{
	struct layout cand[3], best;
	int64_t pads[3] = {0, 16 / g->elem, 1}, bc = -1, pt = 0;
	int nc = 1, kd = k_dim(n, g), pd = point_dim(n, g, &pt);
	for (int d = 0; d < g->rank; d++)
		cand[0].perm[d] = d;
	/* the dimension the reduction walks innermost, and the one a
	 * thread's points walk */
	int inner[2] = {kd, pd};
	for (int j = 0; j < 2; j++) {
		int s = 0, x = inner[j];
		if (x < 0 || x == g->rank - 1 || (j == 1 && x == kd))
			continue;
		for (int d = 0; d < g->rank; d++)
			if (d != x)
				cand[nc].perm[s++] = d;
		cand[nc++].perm[s] = x;
	}
	for (int c = 0; c < nc; c++) {
		cand[c].pd = pd;
		cand[c].pt = pt;
	}
	best = cand[0];
	best.pad = 0;
	g->degree = 0;
	for (int c = 0; c < nc; c++)
		for (int i = 0; i < 3; i++) {
			int deg;
			struct layout lay = cand[c];
			lay.pad = pads[i];
			int64_t cost = layout_cost(n, g, &lay, &deg);
			if (cost < 0)
				continue;
			if (bc < 0 || cost < bc) {
				bc = cost;
				best = lay;
				g->degree = deg;
			}
		}
	memcpy(g->perm, best.perm, sizeof(g->perm));
	g->inner = best.perm[g->rank - 1] == g->rank - 1 ? 0
		   : best.perm[g->rank - 1] == kd ? 1 : 2;
	g->pad = best.pad;
	g->vec = copy_width(n, g, &best);
	g->vdim = g->vec > 1 ? copy_dim(g, &best) : g->rank - 1;
	g->rvec = read_width(n, g, &best);
	int64_t e = g->elem;
	for (int s = 0; s < g->rank; s++)
		e *= buf_size(g, &best, s);
	g->bytes = e;
}

/* The padded read of "n" whose clamped load ("virt" 0) or virtual read
 * ("virt" 1) is "op", or NULL. */
struct pb_smem_pad *pb_smem_pad_of(const struct nest *n, MlirOperation op,
				  int virt)
{
	for (int i = 0; i < n->npad; i++)
		if (mlirOperationEqual(virt ? n->pads[i].virt : n->pads[i].load,
				       op))
			return &n->pads[i];
	return NULL;
}

/* Collect the groups of "n": per buffer the kernel never writes, the
 * affine loads of it in the reduction loop through the buffer itself. */
void pb_smem_collect_groups(struct promote *p, struct nest *n)
{
	struct pb_poly_local *l = n->l;
	n->ng = 0;
	pb_smem_box_memo_free(n->memo);
	n->memo = pb_xrealloc(NULL, 1, sizeof(*n->memo));
	memset(n->memo, 0, sizeof(*n->memo));
	for (int a = 0; a < l->naccess; a++) {
		struct pb_poly_laccess *acc = &l->access[a];
		MlirValue root = l->root[acc->root];
		int mem, w;
		if (acc->write || !pb_ir_is_inside(acc->op, n->loop) ||
		    !read_only_arg(p->func, root) || pb_smem_pad_of(n, acc->op, 0))
			continue;
		if (written_alias(p->func, root)) {
			pb_smem_remark(p, acc->op, "not staged: the buffer may be the "
			       "memory the kernel writes (aliased arguments)");
			continue;
		}
		pb_poly_access_operand(acc->op, &mem, &w);
		if (!acc->exact || !pb_ir_op_is(acc->op, "affine.load") ||
		    !mlirValueEqual(mlirOperationGetOperand(acc->op, mem), root)) {
			pb_smem_remark(p, acc->op, "not staged: %s",
			       acc->exact ? "read through a view"
					  : "subscripts not affine");
			continue;
		}
		MlirType t = mlirValueGetType(root);
		int gi = 0;
		while (gi < n->ng && !mlirValueEqual(n->g[gi].src, root))
			gi++;
		if (gi == n->ng) {
			if (n->ng == MAXG ||
			    mlirShapedTypeGetRank(t) > MAXR ||
			    !mlirShapedTypeHasStaticShape(t) ||
			    !mlirTypeIsAFloat(mlirShapedTypeGetElementType(t)))
				continue;
			struct group *g = &n->g[n->ng++];
			memset(g, 0, sizeof(*g));
			g->src = root;
			g->root = acc->root;
			g->rank = (int)mlirShapedTypeGetRank(t);
			for (int d = 0; d < g->rank; d++)
				g->dim[d] = mlirShapedTypeGetDimSize(t, d);
			g->elem = mlirFloatTypeGetWidth(
					  mlirShapedTypeGetElementType(t)) / 8;
		}
		struct pb_smem_pad *pad = pb_smem_pad_of(n, acc->op, 1);
		if (pad) {
			/* one pad value per buffer: the copy fills with it */
			if (!mlirAttributeIsNull(n->g[gi].fill) &&
			    !mlirAttributeEqual(n->g[gi].fill, pad->fill))
				continue;
			n->g[gi].fill = pad->fill;
		}
		if (n->g[gi].n < MAXACC)
			n->g[gi].acc[n->g[gi].n++] = a;
	}
}

/* Leave out the group of read "op" of "n" for reason "why": a remark
 * now when "say", else kept for one (see plan). */
static void drop(struct promote *p, struct nest *n, MlirOperation op,
		 const char *why, int say)
{
	if (say)
		pb_smem_remark(p, op, "not staged: %s", why);
	else if (n->ndropped < MAXG) {
		n->dropped[n->ndropped] = op;
		n->why[n->ndropped++] = why;
	}
}

/* Size the groups of "n" for k-tile n->kt: boxes, reuse, guards and
 * layouts; drop the groups that are not worth staging (with a remark
 * when "say"). The shared memory of one stage, in bytes. */
static int64_t size_groups(struct promote *p, struct nest *n, int say)
{
	int64_t bytes = 0;
	int k = 0;
	n->ndropped = 0;
	for (int i = 0; i < n->ng; i++) {
		struct group *g = &n->g[i];
		MlirOperation first = n->l->access[g->acc[0]].op;
		if (!group_box(n, g)) {
			drop(p, n, first, "its footprint per block and k-tile "
			     "is not a box of fixed size", say);
			continue;
		}
		int64_t elems = 1, execs = 0;
		for (int d = 0; d < g->rank; d++)
			elems *= g->size[d];
		for (int a = 0; a < g->n; a++)
			execs += executions(n, n->l->access[g->acc[a]].op);
		g->reuse = execs / elems;
		if (g->reuse <= 1) {
			drop(p, n, first, "each element is read once per block "
			     "(no reuse across threads)", say);
			continue;
		}
		find_guards(n, g);
		choose_layout(n, g);
		bytes += g->bytes;
		n->g[k++] = *g;
	}
	n->ng = k;
	return bytes;
}

/* The type text of the ring of buffers of "g" for "n" into "w". */
void pb_smem_ring_type(const struct nest *n, const struct group *g,
		      struct pb_buf *w)
{
	struct pb_buf e = {0};
	pb_ir_type_print(mlirShapedTypeGetElementType(mlirValueGetType(g->src)),
			 &e);
	pb_buf_printf(w, "memref<%dx", n->stages);
	for (int d = 0; d < g->rank; d++)
		pb_buf_printf(w, "%lldx",
			      (long long)(g->size[g->perm[d]] +
					  (d == g->rank - 1 ? g->pad : 0)));
	pb_buf_printf(w, "%s, #gpu.address_space<workgroup>>", e.data);
	pb_buf_free(&e);
}

/* The workgroup buffer of the block of "n" of type "text" that none of
 * the first "ng" groups of "n" uses yet (an earlier nest of the block,
 * such as the full-tile version of a partial one, staged the same tiles:
 * it ended with a barrier, so its buffers are free again), or a null
 * value. */
MlirValue pb_smem_free_buffer(const struct nest *n, const char *text, int ng)
{
	struct pb_ir_ops l = {0};
	MlirValue found = {NULL};
	pb_kernel_workgroup_buffers(n->block, &l);
	for (int i = 0; i < l.n && mlirValueIsNull(found); i++) {
		MlirValue v = mlirOperationGetResult(l.v[i], 0);
		struct pb_buf t = {0};
		int used = 0;
		pb_ir_type_print(mlirValueGetType(v), &t);
		for (int k = 0; k < ng; k++)
			used |= !mlirValueIsNull(n->g[k].buf) &&
				mlirValueEqual(n->g[k].buf, v);
		if (!used && t.data && !strcmp(t.data, text))
			found = v;
		pb_buf_free(&t);
	}
	pb_ir_ops_free(&l);
	return found;
}

/* The bytes of shared memory the block of "n" needs in all once its
 * groups are staged: what it has, and the rings of the groups that
 * cannot reuse one of its buffers (free_buffer). */
static int64_t block_bytes(struct nest *n)
{
	int64_t bytes = pb_kernel_workgroup_bytes(n->block);
	for (int i = 0; i < n->ng; i++) {
		struct pb_buf t = {0};
		pb_smem_ring_type(n, &n->g[i], &t);
		n->g[i].buf = pb_smem_free_buffer(n, t.data, i);
		if (mlirValueIsNull(n->g[i].buf))
			bytes += n->g[i].bytes * n->stages;
		pb_buf_free(&t);
	}
	for (int i = 0; i < n->ng; i++)
		n->g[i].buf = (MlirValue){NULL};
	return bytes;
}

/* pb_kernel_ring_search's question for "n" (struct plan_fit): do its
 * groups, sized for k-tile "kt", fit the block's shared memory in a ring
 * of "stages" slots? */
struct plan_fit {
	struct promote *p;
	struct nest *n;
	struct group saved[MAXG];
	int nsaved;
};

static int plan_fits(void *user, int64_t kt, int stages)
{
	struct plan_fit *f = user;
	struct nest *n = f->n;
	n->kt = kt;
	memcpy(n->g, f->saved, sizeof(f->saved));
	n->ng = f->nsaved;
	size_groups(f->p, n, 0);
	n->stages = stages;
	if (!n->ng)
		return -1;
	return block_bytes(n) <= f->p->t->smem_per_block;
}

/* Choose the k-tile and the stages of "n" (--k-tile, --stages, pb-tile's
 * "pb.smem" choice on the block loop, or pb_kernel_ring_search's). 0 when
 * nothing is staged. */
int pb_smem_plan(struct promote *p, struct nest *n)
{
	int64_t kts[] = {16, 32, 8, 4, n->trip <= 32 ? n->trip : 4};
	int64_t limit = p->t->smem_per_block;
	int nk = (int)(sizeof(kts) / sizeof(kts[0]));
	int64_t k_tile = p->o->k_tile, kt;
	int stages = (int)p->o->stages, ns;
	struct plan_fit f;
	f.p = p;
	f.n = n;
	f.nsaved = n->ng;
	memcpy(f.saved, n->g, sizeof(f.saved));
	if (!k_tile && !stages && n->want_kt > 0) {
		/* pb-tile's choice first (exactly: the --stages rule of trying
	 * fewer slots is the search's), the search when it does not fit */
		k_tile = n->want_kt;
		stages = n->want_stages;
		int64_t tiles = n->trip / k_tile;
		if (pb_kernel_ring_search(p->t, n->trip, k_tile, stages,
					  plan_fits, &f, &kt, &ns) &&
		    (!stages || ns == (stages < tiles ? stages : tiles)))
			goto found; /* as pb-tile priced it */
		k_tile = 0;
		stages = 0;
	}
	if (pb_kernel_ring_search(p->t, n->trip, k_tile, stages, plan_fits, &f,
				&kt, &ns))
		goto found;
	if (k_tile)
		nk = 1;
	/* nothing fits: say why with the preferred tile */
	memcpy(n->g, f.saved, sizeof(f.saved));
	n->ng = f.nsaved;
	n->kt = k_tile ? k_tile : kts[0];
	for (int i = 0; i < nk && !k_tile; i++)
		if (kts[i] <= n->trip && n->trip % kts[i] == 0) {
			n->kt = kts[i];
			break;
		}
	if (n->trip % n->kt) {
		pb_smem_remark(p, n->loop, "not staged: the k-tile %lld does not divide "
		       "the %lld iterations of the loop", (long long)n->kt,
		       (long long)n->trip);
		return 0;
	}
	size_groups(p, n, 1);
	n->stages = stages ? stages : 1;
	if (n->ng)
		pb_smem_remark(p, n->loop, "not staged: %lld bytes of shared memory "
		       "(%d stage%s of k-tile %lld) do not fit %lld bytes per "
		       "block (%s)", (long long)block_bytes(n), n->stages,
		       n->stages > 1 ? "s" : "", (long long)n->kt,
		       (long long)limit, p->t->arch);
	return 0;
found:
	/* the search returned at the accepted try: "n" is sized for it */
	for (int d = 0; d < n->ndropped; d++)
		pb_smem_remark(p, n->dropped[d], "not staged: %s", n->why[d]);
	return 1;
}

/* Is the k-tile loop of "n" worth unrolling fully: every read of a
 * buffer the kernel never writes in it staged (no global load left whose
 * address arithmetic would multiply), and at most 1024 points per thread
 * (k-tile times the points of its inner loops)? */
int pb_smem_unrollable(const struct nest *n)
{
	int64_t staged = 0, reads = 0, work = n->kt;
	for (int i = 0; i < n->ng; i++)
		staged += n->g[i].n;
	for (int a = 0; a < n->l->naccess; a++) {
		const struct pb_poly_laccess *acc = &n->l->access[a];
		reads += !acc->write && pb_ir_is_inside(acc->op, n->loop) &&
			 !pb_smem_pad_of(n, acc->op, 0) &&
			 read_only_arg(pb_ir_value_parent(
					       n->l->root[acc->root]),
				       n->l->root[acc->root]);
	}
	/* only the points of the thread tile inside: a convolution's window
	 * loops would multiply the live values past the registers */
	struct pb_ir_ops loops = {0};
	int points = 1;
	pb_ir_collect(n->loop, "affine.for", &loops);
	for (int i = 0; i < loops.n; i++) {
		int64_t lb, step, t = pb_smem_for_trip(loops.v[i], &lb, &step);
		if (mlirOperationEqual(loops.v[i], n->loop))
			continue;
		work *= t < 0 ? 1024 : t;
		points &= indexes_private(loops.v[i],
					  mlirBlockGetArgument(
						  pb_smem_body(loops.v[i]), 0),
					  NULL, -1);
	}
	pb_ir_ops_free(&loops);
	/* nor guarded points (a partial tile): their reads do not combine */
	struct pb_ir_ops guards = {0};
	pb_ir_collect(n->loop, "affine.if", &guards);
	int guarded = guards.n > 0;
	pb_ir_ops_free(&guards);
	return staged == reads && points && !guarded && work <= 1024;
}

/* Would pb_smem_plan() find a k-tile and stages for the groups of "n"? (It
 * leaves "n" as it was.) */
int pb_smem_fits(struct promote *p, struct nest *n)
{
	struct nest copy = *n;
	struct pb_smem_opts quiet = *p->o;
	const struct pb_smem_opts *o = p->o;
	quiet.remarks = 0;
	p->o = &quiet;
	int ok = pb_smem_plan(p, &copy);
	p->o = o;
	return ok;
}

/* Leave out the group of "n" whose tile takes the most shared memory at
 * the preferred k-tile, with a remark. */
void pb_smem_drop_largest(struct promote *p, struct nest *n)
{
	struct nest copy = *n;
	int big = 0;
	int64_t most = -1;
	copy.kt = n->trip < 16 ? n->trip : 16;
	for (int i = 0; i < n->ng; i++) {
		struct nest one = copy;
		one.g[0] = n->g[i];
		one.ng = 1;
		size_groups(p, &one, 0);
		int64_t b = one.ng ? one.g[0].bytes : 0;
		if (b > most) {
			most = b;
			big = i;
		}
	}
	pb_smem_remark(p, n->l->access[n->g[big].acc[0]].op, "not staged: its tile "
	       "does not fit in shared memory with the others");
	n->g[big] = n->g[--n->ng];
}
