/* The GPU mapping of pb-codegen: every top-level piece of work of a host
 * function (a kernel function or @main) becomes one gpu.launch.
 *
 * - A loop nest whose outermost loops are parallel (affine.parallel with
 *   constant bounds, after affine-parallelize) gets the naive mapping: the
 *   perfectly nested band of parallel loops (lib/kernel's band) is
 *   linearized onto grid.x * block.x threads (PB_KERNEL_NAIVE_BLOCK per
 *   block, the innermost loop fastest, so consecutive threads touch
 *   consecutive elements), with a guard when the grid overshoots; the rest
 *   of the nest runs in each thread.
 * - A nest mapped by an earlier stage (affine.parallel {pb.map = "block"}
 *   holding affine.parallel {pb.map = "warp"} and {pb.map = "thread"}
 *   loops, gpu.barrier and workgroup buffers) is honoured: the block loops
 *   are linearized onto grid.x; a warp nest (warp loops perfectly nested)
 *   takes its dimensions from the warp id thread.x floordiv 32 and gives
 *   the thread loops inside it the lane thread.x mod 32; the thread loops
 *   outside warp loops are linearized onto thread.x; each is guarded when
 *   it is shorter than the block (or the warp); workgroup buffers become
 *   launch attributions.
 * - Everything else (a nest with no parallel loop, such as a full
 *   reduction, or scalar work) runs in a single thread; consecutive such
 *   operations share one launch.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "codegen/internal.h"
#include "kernel/kernel.h"
#include "target/target.h"

/* What a launch looks like, see launch_text. */
struct spec {
	int64_t grid, block;
	const char *wg;       /* "workgroup(...)" or "" */
	int lin;              /* 0: no ids, 1: bx * block + tx, 2: bx */
	int64_t guard;        /* run only ids below this; 0: no guard */
	const struct pb_kernel_band *b; /* the dimensions computed from the id */
	int64_t dyn;          /* bytes of dynamic shared memory, or 0 */
};

/* The first block of the first region of "op". */
static MlirBlock body_of(MlirOperation op)
{
	return mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
}

/* Is "op" pure arithmetic that may stay on the host? */
static int is_pure(MlirOperation op)
{
	return pb_codegen_op_has_prefix(op, "arith.") ||
	       pb_codegen_op_has_prefix(op, "index.") ||
	       pb_codegen_op_has_prefix(op, "math.") ||
	       pb_ir_op_is(op, "affine.apply") ||
	       pb_ir_op_is(op, "affine.min") || pb_ir_op_is(op, "affine.max") ||
	       pb_ir_op_is(op, "ub.poison");
}

/* Append to "t" the affine map computing dimension "d" of "b" from the
 * linear id "l" (the innermost dimension varies fastest). */
static void iv_map(struct pb_buf *t, const struct pb_kernel_band *b, int d)
{
	int64_t s = 1;
	for (int e = d + 1; e < b->n; e++)
		s *= b->extent[e];
	pb_buf_puts(t, "affine_map<(l) -> (((l");
	if (s > 1)
		pb_buf_printf(t, " floordiv %lld", (long long)s);
	pb_buf_puts(t, ")");
	if (d > 0)
		pb_buf_printf(t, " mod %lld", (long long)b->extent[d]);
	pb_buf_printf(t, ") * %lld + %lld)>", (long long)b->step[d],
		      (long long)b->lb[d]);
}

/* Append to "t" the guard "id < guard" (when "guard") and the dimensions
 * of "b" computed from the value "id"; "close" gets the text that closes
 * the guard. */
static void ids_text(struct pb_buf *t, const char *id, int64_t guard,
		     const struct pb_kernel_band *b)
{
	if (guard)
		pb_buf_printf(t, "    affine.if affine_set<(l) : (%lld - l >= 0)>"
			      "(%s) {\n", (long long)(guard - 1), id);
	for (int d = 0; b && d < b->n; d++) {
		pb_buf_printf(t, "      %%i%d = affine.apply ", d);
		iv_map(t, b, d);
		pb_buf_printf(t, "(%s)\n", id);
	}
	if (guard)
		pb_buf_puts(t, "    }\n");
}

/* The text of a function holding the launch described by "s". */
static void launch_text(struct pb_buf *t, const struct spec *s)
{
	struct pb_buf dyn = {0};
	if (s->dyn)
		pb_buf_printf(&dyn, "  %%cd = arith.constant %lld : i32\n",
			      (long long)s->dyn);
	pb_buf_printf(t, "func.func @t() {\n"
		      "  %%c1 = arith.constant 1 : index\n"
		      "  %%cg = arith.constant %lld : index\n"
		      "  %%cb = arith.constant %lld : index\n"
		      "%s"
		      "  gpu.launch blocks(%%bx, %%by, %%bz) in (%%gx = %%cg, "
		      "%%gy = %%c1, %%gz = %%c1) threads(%%tx, %%ty, %%tz) in "
		      "(%%sx = %%cb, %%sy = %%c1, %%sz = %%c1) %s%s {\n",
		      (long long)s->grid, (long long)s->block, dyn.data ? dyn.data : "",
		      s->dyn ? "dynamic_shared_memory_size %cd " : "", s->wg);
	pb_buf_free(&dyn);
	if (s->lin == 1)
		pb_buf_printf(t, "    %%lin = affine.apply affine_map<(b, t) -> "
			      "(b * %lld + t)>(%%bx, %%tx)\n",
			      (long long)s->block);
	if (s->lin)
		ids_text(t, s->lin == 1 ? "%lin" : "%bx", s->guard, s->b);
	pb_buf_puts(t, "    gpu.terminator\n  }\n  return\n}\n");
}

/* Where the work of a launch or a guard goes: the operation to insert
 * before, and the values of the band's dimensions. */
struct site {
	MlirOperation before;
	MlirValue iv[PB_KERNEL_MAXD];
};

/* Fill "s" from the block "blk" that holds the dimension computations
 * (affine.apply, after "skip" others) and ends in the work's terminator. */
static void site_from(MlirBlock blk, int skip, struct site *s)
{
	int d = 0;
	for (MlirOperation op = mlirBlockGetFirstOperation(blk);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
		if (pb_ir_op_is(op, "affine.apply") && skip-- <= 0 &&
		    d < PB_KERNEL_MAXD)
			s->iv[d++] = mlirOperationGetResult(op, 0);
	s->before = mlirBlockGetTerminator(blk);
}

/* Create the launch described by "sp" before "before" at "loc"; its
 * operation into "*launch" and where its work goes into "site". */
static int make_launch(struct pb_ctx *ctx, const struct spec *sp,
		       MlirOperation before, MlirLocation loc,
		       MlirOperation *launch, struct site *site)
{
	struct pb_buf t = {0};
	struct pb_ir_ops out = {0};
	launch_text(&t, sp);
	int rc = pb_ir_instantiate(ctx, t.data, before, 0, NULL, loc, &out);
	pb_buf_free(&t);
	if (rc) {
		pb_ir_ops_free(&out);
		return rc;
	}
	*launch = out.v[out.n - 1];
	pb_ir_ops_free(&out);
	MlirBlock body = body_of(*launch);
	if (sp->guard) {
		MlirOperation op = mlirBlockGetFirstOperation(body);
		while (!pb_ir_op_is(op, "affine.if"))
			op = mlirOperationGetNextInBlock(op);
		site_from(body_of(op), 0, site);
	} else {
		site_from(body, sp->lin == 1, site);
	}
	return PB_OK;
}

/* Move the operations of "blk" but its terminator before "before". */
static void move_ops(MlirBlock blk, MlirOperation before)
{
	MlirOperation op = mlirBlockGetFirstOperation(blk), next;
	for (; !mlirOperationIsNull(op); op = next) {
		next = mlirOperationGetNextInBlock(op);
		if (mlirOperationIsNull(next))
			break;
		mlirOperationMoveBefore(op, before);
	}
}

/* Replace the induction variables of "b" by the values of "s". */
static void replace_ivs(const struct pb_kernel_band *b, const struct site *s)
{
	for (int d = 0; d < b->n; d++)
		mlirValueReplaceAllUsesOfWith(b->iv[d], s->iv[d]);
}

/* The most blocks of one launch: CUDA's limit on grid.x, the only grid
 * dimension pb uses. */
#define GRID_MAX 2147483647

/* Report that "what", nest "op" of "n" (pb_kernel_band_points, so
 * INT64_MAX when that overflowed) "unit", needs a grid beyond GRID_MAX
 * blocks. */
static int grid_error(struct pb_ctx *ctx, MlirOperation op, const char *what,
		      int64_t n, const char *unit)
{
	char num[32];
	if (n == INT64_MAX)
		snprintf(num, sizeof(num), "more than 2^63");
	else
		snprintf(num, sizeof(num), "%lld", (long long)n);
	pb_error_at(ctx, mlirOperationGetLocation(op), "%s of %s %s is too "
		    "large for one grid (at most 2147483647 blocks)", what, num,
		    unit);
	return PB_ERR;
}

/* The naive mapping of the nest "op" whose band is "b". */
static int map_band(struct pb_ctx *ctx, MlirOperation op,
		    struct pb_kernel_band *b)
{
	int64_t total = pb_kernel_band_points(b);
	MlirOperation launch;
	struct site site;
	if (total == 0) {
		mlirOperationDestroy(op);
		return PB_OK;
	}
	struct spec sp = {0};
	sp.block = total < PB_KERNEL_NAIVE_BLOCK ? total
						 : PB_KERNEL_NAIVE_BLOCK;
	sp.grid = total / sp.block + (total % sp.block != 0);
	if (sp.grid > GRID_MAX)
		return grid_error(ctx, op, "loop nest", total, "iterations");
	sp.wg = "";
	sp.lin = 1;
	sp.guard = sp.grid * sp.block != total ? total : 0;
	sp.b = b;
	if (make_launch(ctx, &sp, op, mlirOperationGetLocation(op), &launch,
			&site))
		return PB_ERR;
	move_ops(body_of(b->inner), site.before);
	replace_ivs(b, &site);
	mlirOperationDestroy(op);
	return PB_OK;
}

/* The dimensions of a thread-mapped loop: constant lower bounds and
 * steps; an upper bound is constant, or the minimum of results of which
 * one is constant (a partial tile: min(32, N - i)). "b" gets the constant
 * extents; "dyn[d]" the results of the upper bound of a dimension "d" that
 * needs a run-time check (null map when none), "ub" the bound's map. */
struct tdims {
	struct pb_kernel_band b;
	MlirAffineMap ub;
	int first[PB_KERNEL_MAXD], nres[PB_KERNEL_MAXD], dyn[PB_KERNEL_MAXD];
};

/* Fill "t" from thread loop "op"; -1 when its bounds do not fit. */
static int thread_dims(MlirOperation op, struct tdims *t)
{
	MlirAttribute lbm = pb_ir_attr(op, "lowerBoundsMap");
	MlirAttribute ubm = pb_ir_attr(op, "upperBoundsMap");
	MlirAttribute groups = pb_ir_attr(op, "upperBoundsGroups");
	MlirAttribute steps = pb_ir_attr(op, "steps");
	MlirBlock body = body_of(op);
	int n = mlirBlockGetNumArguments(body), r = 0;
	int64_t lb[PB_KERNEL_MAXD];
	memset(t, 0, sizeof(*t));
	if (!pb_ir_op_is(op, "affine.parallel") || mlirOperationGetNumResults(op) ||
	    n > PB_KERNEL_MAXD ||
	    pb_ir_const_map(op, "lowerBoundsMap", n, lb) ||
	    mlirAttributeIsNull(ubm) || mlirAttributeIsNull(groups) ||
	    mlirAttributeIsNull(steps) || mlirAttributeIsNull(lbm))
		return -1;
	t->ub = mlirAffineMapAttrGetValue(ubm);
	for (int d = 0; d < n; d++) {
		int64_t step = mlirIntegerAttrGetValueInt(
			mlirArrayAttrGetElement(steps, d));
		int64_t hi = INT64_MIN;
		t->first[d] = r;
		t->nres[d] = mlirDenseElementsAttrGetInt32Value(groups, d);
		for (int k = 0; k < t->nres[d]; k++, r++) {
			MlirAffineExpr e = mlirAffineMapGetResult(t->ub, r);
			if (!mlirAffineExprIsAConstant(e))
				t->dyn[d] = 1;
			else if (mlirAffineConstantExprGetValue(e) > hi)
				hi = mlirAffineConstantExprGetValue(e);
		}
		if (hi == INT64_MIN || step < 1)
			return -1;
		t->b.lb[d] = lb[d];
		t->b.step[d] = step;
		t->b.extent[d] =
			hi > lb[d] ? (hi - lb[d] + step - 1) / step : 0;
		t->b.iv[d] = mlirBlockGetArgument(body, d);
	}
	t->b.n = n;
	t->b.inner = op;
	return 0;
}

/* Append to "t" the run-time upper bound of dimension "d" of "td" as an
 * affine.min "%u<d>" on the template arguments "%o<k>". */
static void ub_text(struct pb_buf *t, const struct tdims *td, int d)
{
	MlirAffineExpr e[64];
	int nd = mlirAffineMapGetNumDims(td->ub);
	int ns = mlirAffineMapGetNumSymbols(td->ub);
	for (int k = 0; k < td->nres[d] && k < 64; k++)
		e[k] = mlirAffineMapGetResult(td->ub, td->first[d] + k);
	MlirAffineMap m = mlirAffineMapGet(mlirAffineMapGetContext(td->ub), nd,
					   ns, td->nres[d], e);
	pb_buf_printf(t, "  %%u%d = affine.min affine_map<", d);
	mlirAffineMapPrint(m, pb_buf_mlir_callback, t);
	pb_buf_puts(t, ">(");
	for (int k = 0; k < nd; k++)
		pb_buf_printf(t, "%s%%o%d", k ? ", " : "", k);
	pb_buf_puts(t, ")[");
	for (int k = 0; k < ns; k++)
		pb_buf_printf(t, "%s%%o%d", k ? ", " : "", nd + k);
	pb_buf_puts(t, "]\n");
}

/* The text of a function "@t(%tx, %o0, ...)" that computes the
 * dimensions of thread loop "td" from "%tx" and guards the work with
 * "%tx < total" (when the loop is narrower than the block, "guard") and
 * "iv < upper bound" for the dimensions checked at run time. */
static void thread_text(struct pb_buf *t, const struct tdims *td, int guard,
			int64_t total)
{
	int nin = mlirAffineMapGetNumInputs(td->ub), ncond = guard;
	pb_buf_puts(t, "func.func @t(%tx: index");
	for (int k = 0; k < nin; k++)
		pb_buf_printf(t, ", %%o%d: index", k);
	pb_buf_puts(t, ") {\n");
	for (int d = 0; d < td->b.n; d++) {
		pb_buf_printf(t, "  %%i%d = affine.apply ", d);
		iv_map(t, &td->b, d);
		pb_buf_puts(t, "(%tx)\n");
	}
	for (int d = 0; d < td->b.n; d++)
		if (td->dyn[d]) {
			ub_text(t, td, d);
			ncond++;
		}
	if (ncond) {
		/* one set over (tx, i0, u0, i1, u1, ...) */
		struct pb_buf dims = {0}, conds = {0}, args = {0};
		pb_buf_puts(&dims, "t");
		pb_buf_puts(&args, "%tx");
		if (guard)
			pb_buf_printf(&conds, "%lld - t >= 0", (long long)(total - 1));
		for (int d = 0; d < td->b.n; d++) {
			if (!td->dyn[d])
				continue;
			pb_buf_printf(&dims, ", i%d, u%d", d, d);
			pb_buf_printf(&args, ", %%i%d, %%u%d", d, d);
			pb_buf_printf(&conds, "%su%d - i%d - 1 >= 0",
				      conds.len ? ", " : "", d, d);
		}
		pb_buf_printf(t, "  affine.if affine_set<(%s) : (%s)>(%s) {\n  }\n",
			      dims.data, conds.data, args.data);
		pb_buf_free(&dims);
		pb_buf_free(&conds);
		pb_buf_free(&args);
	}
	pb_buf_puts(t, "  return\n}\n");
}

/* Rewrite thread loop "op" whose thread id is "id" among "width" threads
 * (the block's thread.x, or a warp's lane among 32): its dimensions come
 * from "id", guarded as needed. */
static int map_thread_loop(struct pb_ctx *ctx, MlirOperation op,
			   MlirValue id, int64_t width)
{
	struct pb_buf t = {0};
	struct pb_ir_ops out = {0};
	struct tdims td;
	struct site site;
	MlirValue args[1 + 64];
	if (thread_dims(op, &td))
		return PB_ERR; /* checked by collect_mapped */
	int64_t total = pb_kernel_band_points(&td.b);
	int nin = mlirAffineMapGetNumInputs(td.ub);
	intptr_t nops = mlirOperationGetNumOperands(op);
	if (nin > 64 || nin > nops)
		return PB_ERR;
	args[0] = id;
	for (int k = 0; k < nin; k++)
		args[1 + k] = mlirOperationGetOperand(op, nops - nin + k);
	thread_text(&t, &td, total < width, total);
	int rc = pb_ir_instantiate(ctx, t.data, op, 1 + nin, args,
					mlirOperationGetLocation(op), &out);
	pb_buf_free(&t);
	if (rc == PB_OK) {
		MlirOperation last = out.v[out.n - 1];
		for (int d = 0; d < td.b.n; d++)
			site.iv[d] = mlirOperationGetResult(out.v[d], 0);
		site.before = pb_ir_op_is(last, "affine.if")
				      ? mlirBlockGetTerminator(body_of(last))
				      : op;
	}
	pb_ir_ops_free(&out);
	if (rc)
		return rc;
	move_ops(body_of(op), site.before);
	replace_ivs(&td.b, &site);
	mlirOperationDestroy(op);
	return PB_OK;
}

/* A warp nest: a warp-mapped loop with the warp-mapped loops perfectly
 * nested in it ("loop[0]" outermost), whose dimensions "b" (all of them,
 * outermost first) are the warps of a block; "lane" is the lane id its
 * thread loops use once it is mapped. */
struct warp {
	int n;
	MlirOperation loop[PB_KERNEL_MAXD];
	struct pb_kernel_band b;
	MlirValue lane;
};

/* The loops of a block that the mapping rewrites: the warp nests, the
 * thread loops (each with the index of the warp nest it lies in, or -1
 * when it spreads over the whole block) and the threads the block needs. */
struct mapped {
	struct warp *w;
	int nw;
	struct pb_ir_ops threads;
	int *owner;
	int64_t nthreads;
};

/* Free the lists of "m". */
static void mapped_free(struct mapped *m)
{
	free(m->w);
	free(m->owner);
	pb_ir_ops_free(&m->threads);
}

/* Is "op", nested in the innermost loop of warp nest "w", that loop's only
 * operation besides pure arithmetic (a perfectly nested warp loop)? */
static int warp_extends(const struct warp *w, MlirOperation op)
{
	MlirOperation last = w->loop[w->n - 1];
	MlirOperation parent = mlirOperationGetParentOperation(op);
	if (!mlirOperationEqual(parent, last) || w->n == PB_KERNEL_MAXD)
		return 0;
	for (MlirOperation o = mlirBlockGetFirstOperation(body_of(last));
	     !mlirOperationIsNull(o); o = mlirOperationGetNextInBlock(o))
		if (!mlirOperationEqual(o, op) && !is_pure(o) &&
		    !pb_ir_op_is(o, "affine.yield"))
			return 0;
	return 1;
}

/* Is "op" inside one of the thread-mapped loops of "m"? Then "what"
 * cannot be lowered (reported at "op"). */
static int in_thread_loop(struct pb_ctx *ctx, MlirOperation op,
			  const struct mapped *m, const char *what)
{
	for (int i = 0; i < m->threads.n; i++)
		if (pb_ir_is_inside(op, m->threads.v[i])) {
			pb_error_at(ctx, mlirOperationGetLocation(op),
				    "cannot lower %s", what);
			return 1;
		}
	return 0;
}

/* The (innermost) warp nest of "m" that "op" lies in, -1 when none. */
static int warp_of(const struct mapped *m, MlirOperation op)
{
	int owner = -1;
	for (int i = 0; i < m->nw; i++)
		if (pb_ir_is_inside(op, m->w[i].loop[0]))
			owner = i;
	return owner;
}

/* Add warp-mapped loop "op" to "m": a new warp nest, or the next level of
 * the nest it is perfectly nested in. */
static int add_warp(struct pb_ctx *ctx, MlirOperation op, struct mapped *m)
{
	MlirLocation loc = mlirOperationGetLocation(op);
	if (in_thread_loop(ctx, op, m, "a warp-mapped loop inside a "
				       "thread-mapped loop"))
		return PB_ERR;
	int owner = warp_of(m, op);
	struct warp *w = owner >= 0 ? &m->w[owner] : NULL;
	if (w && !warp_extends(w, op)) {
		pb_error_at(ctx, loc, "cannot lower a warp-mapped loop nested "
			    "in another one other than as its only loop");
		return PB_ERR;
	}
	if (!w) {
		struct warp *nw = realloc(m->w, sizeof(*nw) * (m->nw + 1));
		if (!nw)
			return PB_ERR;
		m->w = nw;
		w = &m->w[m->nw++];
		memset(w, 0, sizeof(*w));
	}
	if (!pb_kernel_band_add(op, &w->b)) {
		pb_error_at(ctx, loc, "warp-mapped loop needs constant bounds "
			    "and steps");
		return PB_ERR;
	}
	w->loop[w->n++] = op;
	if (pb_kernel_band_points(&w->b) > 32) {
		pb_error_at(ctx, loc, "warp-mapped loop of %lld iterations "
			    "exceeds 32 warps per block",
			    (long long)pb_kernel_band_points(&w->b));
		return PB_ERR;
	}
	return PB_OK;
}

/* Add thread-mapped loop "op" to "m", spread over the block or over the
 * lanes of the warp nest it lies in. */
static int add_thread(struct pb_ctx *ctx, MlirOperation op, struct mapped *m)
{
	MlirLocation loc = mlirOperationGetLocation(op);
	struct tdims td;
	if (thread_dims(op, &td)) {
		pb_error_at(ctx, loc, "thread-mapped loop needs constant lower "
			    "bounds and steps and a constant (or "
			    "min-with-a-constant) upper bound");
		return PB_ERR;
	}
	int64_t total = pb_kernel_band_points(&td.b);
	const struct pb_target *t = pb_target_of(ctx);
	if (!t)
		return PB_ERR;
	if (total > t->max_threads_per_block) {
		pb_error_at(ctx, loc, "thread-mapped loop of %lld iterations "
			    "exceeds %d threads per block (%s)",
			    (long long)total, t->max_threads_per_block, t->name);
		return PB_ERR;
	}
	if (in_thread_loop(ctx, op, m, "nested thread-mapped loops"))
		return PB_ERR;
	int owner = warp_of(m, op);
	if (owner >= 0 && total > t->warp_size) {
		pb_error_at(ctx, loc, "thread-mapped loop of %lld iterations "
			    "inside a warp-mapped loop exceeds %d lanes",
			    (long long)total, t->warp_size);
		return PB_ERR;
	}
	int *no = realloc(m->owner, sizeof(*no) * (m->threads.n + 1));
	if (!no)
		return PB_ERR;
	m->owner = no;
	m->owner[m->threads.n] = owner;
	pb_ir_ops_push(&m->threads, op);
	if (owner < 0 && total > m->nthreads)
		m->nthreads = total;
	return PB_OK;
}

/* Reject a gpu.barrier inside a warp nest of "m" unless every thread of
 * the block reaches it: one warp nest, no thread loop outside it, and the
 * barrier not inside a thread loop (whose guard may leave lanes out). */
static int check_warp_barriers(struct pb_ctx *ctx, const struct mapped *m)
{
	int outside = 0;
	for (int i = 0; i < m->threads.n; i++)
		outside += m->owner[i] < 0;
	for (int i = 0; i < m->nw; i++) {
		struct pb_ir_ops bar = {0};
		MlirOperation bad = {NULL};
		pb_ir_collect(m->w[i].loop[0], "gpu.barrier", &bar);
		for (int j = 0; j < bar.n && mlirOperationIsNull(bad); j++) {
			int ok = m->nw == 1 && !outside;
			for (int k = 0; k < m->threads.n && ok; k++)
				ok = !pb_ir_is_inside(bar.v[j], m->threads.v[k]);
			if (!ok)
				bad = bar.v[j];
		}
		pb_ir_ops_free(&bar);
		if (!mlirOperationIsNull(bad)) {
			pb_error_at(ctx, mlirOperationGetLocation(bad),
				    "cannot lower 'gpu.barrier' inside a "
				    "warp-mapped loop");
			return PB_ERR;
		}
	}
	return PB_OK;
}

/* The warp and thread loops of "root" (a block-mapped loop, or a warp- or
 * thread-mapped loop alone) into "m", with the number of threads its block
 * needs: the widest thread loop outside warp loops and 32 times the most
 * warps of a warp nest, rounded up to whole warps when there are warps. */
static int collect_mapped(struct pb_ctx *ctx, MlirOperation root,
			  struct mapped *m)
{
	struct pb_ir_ops all = {0};
	int rc = PB_OK;
	memset(m, 0, sizeof(*m));
	m->nthreads = 1;
	pb_kernel_mapped_loops(root, &all);
	for (int i = 0; i < all.n && rc == PB_OK; i++) {
		MlirOperation op = all.v[i];
		enum pb_map_level level = pb_contract_map_of(op);
		if (level == PB_MAP_THREAD) {
			rc = add_thread(ctx, op, m);
		} else if (level == PB_MAP_WARP) {
			rc = add_warp(ctx, op, m);
		} else {
			MlirStringRef s = pb_contract_map_str(op);
			pb_error_at(ctx, mlirOperationGetLocation(op),
				    "cannot lower a loop mapped to '%.*s' inside "
				    "a block", (int)s.length, s.data);
			rc = PB_ERR;
		}
	}
	pb_ir_ops_free(&all);
	if (rc == PB_OK)
		rc = check_warp_barriers(ctx, m);
	for (int i = 0; i < m->nw && rc == PB_OK; i++)
		if (32 * pb_kernel_band_points(&m->w[i].b) > m->nthreads)
			m->nthreads = 32 * pb_kernel_band_points(&m->w[i].b);
	if (m->nw)
		m->nthreads = (m->nthreads + 31) / 32 * 32;
	return rc;
}

/* The loops of warp nest "w" whose iterations are the warps' (pb.share,
 * lib/ir/contract.h) into "l"; an error unless each runs from 0 to the
 * nest's warps by 1. */
static int shared_loops(struct pb_ctx *ctx, struct warp *w, struct pb_ir_ops *l)
{
	struct pb_ir_ops all = {0};
	int64_t total = pb_kernel_band_points(&w->b), lb, ub;
	int rc = PB_OK;
	pb_ir_collect(w->loop[0], "affine.for", &all);
	for (int i = 0; i < all.n && rc == PB_OK; i++) {
		MlirOperation op = all.v[i];
		if (mlirAttributeIsNull(pb_ir_attr(op, PB_ATTR_SHARE)))
			continue;
		if (pb_ir_const_map(op, "lowerBoundMap", 1, &lb) ||
		    pb_ir_const_map(op, "upperBoundMap", 1, &ub) || lb != 0 ||
		    ub != total ||
		    mlirIntegerAttrGetValueInt(pb_ir_attr(op, "step")) != 1 ||
		    mlirOperationGetNumResults(op)) {
			pb_error_at(ctx, mlirOperationGetLocation(op),
				    "a loop shared by the warps (" PB_ATTR_SHARE
				    ") must run from 0 to their number (%lld) "
				    "by 1", (long long)total);
			rc = PB_ERR;
		}
		pb_ir_ops_push(l, op);
	}
	pb_ir_ops_free(&all);
	return rc;
}

/* Run iteration "id" of each loop of "l" (the warp's own) in its place. */
static void run_shared(struct pb_ir_ops *l, MlirValue id)
{
	for (int i = 0; i < l->n; i++) {
		MlirBlock b = body_of(l->v[i]);
		mlirValueReplaceAllUsesOfWith(mlirBlockGetArgument(b, 0), id);
		move_ops(b, l->v[i]);
		mlirOperationDestroy(l->v[i]);
	}
}

/* Rewrite warp nest "w" of a block of "nthreads" threads whose thread id
 * is "tx": the warp id tx floordiv 32 gives its dimensions (innermost
 * fastest), guarded when the block has more warps than the nest; the lane
 * tx mod 32 goes into w->lane for its thread loops. */
static int map_warp(struct pb_ctx *ctx, struct warp *w, MlirValue tx,
		    int64_t nthreads)
{
	struct pb_buf t = {0};
	struct pb_ir_ops out = {0}, shared = {0};
	struct site site;
	MlirOperation outer = w->loop[0];
	int64_t total = pb_kernel_band_points(&w->b);
	int64_t guard = total < nthreads / 32 ? total : 0;
	if (total && shared_loops(ctx, w, &shared)) {
		pb_ir_ops_free(&shared);
		return PB_ERR;
	}
	if (!total) {
		/* no warp runs it (nor its thread loops) */
		mlirOperationDestroy(outer);
		return PB_OK;
	}
	pb_buf_puts(&t, "func.func @t(%tx: index) {\n"
		    "    %w = affine.apply affine_map<(t) -> (t floordiv 32)>"
		    "(%tx)\n"
		    "    %l = affine.apply affine_map<(t) -> (t mod 32)>(%tx)\n");
	ids_text(&t, "%w", guard, &w->b);
	pb_buf_puts(&t, "  return\n}\n");
	int rc = pb_ir_instantiate(ctx, t.data, outer, 1, &tx,
				   mlirOperationGetLocation(outer), &out);
	pb_buf_free(&t);
	if (rc) {
		pb_ir_ops_free(&out);
		pb_ir_ops_free(&shared);
		return rc;
	}
	w->lane = mlirOperationGetResult(out.v[1], 0);
	run_shared(&shared, mlirOperationGetResult(out.v[0], 0));
	pb_ir_ops_free(&shared);
	if (guard) {
		site_from(body_of(out.v[2]), 0, &site);
	} else {
		for (int d = 0; d < w->b.n; d++)
			site.iv[d] = mlirOperationGetResult(out.v[2 + d], 0);
		site.before = outer;
	}
	pb_ir_ops_free(&out);
	replace_ivs(&w->b, &site);
	move_ops(body_of(outer), site.before);
	mlirOperationDestroy(outer);
	for (int i = 1; i < w->n; i++) {
		move_ops(body_of(w->loop[i]), w->loop[i]);
		mlirOperationDestroy(w->loop[i]);
	}
	return PB_OK;
}

/* The workgroup buffers allocated in "root" into "l", and the text of the
 * matching launch attributions into "wg". */
static void workgroup_allocs(MlirOperation root, struct pb_ir_ops *l,
			     struct pb_buf *wg)
{
	pb_kernel_workgroup_buffers(root, l);
	pb_buf_puts(wg, "");
	for (int i = 0; i < l->n; i++) {
		MlirValue v = mlirOperationGetResult(l->v[i], 0);
		pb_buf_puts(wg, i ? ", " : "workgroup(");
		pb_buf_printf(wg, "%%w%d : ", i);
		pb_codegen_type_str(mlirValueGetType(v), wg);
	}
	if (l->n)
		pb_buf_puts(wg, ")");
}

/* Destroy the memref.dealloc users of "v". */
static void drop_deallocs(MlirValue v)
{
	struct pb_ir_ops d = {0};
	for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u);
	     u = mlirOpOperandGetNextUse(u))
		if (pb_ir_op_is(mlirOpOperandGetOwner(u), "memref.dealloc"))
			pb_ir_ops_push(&d, mlirOpOperandGetOwner(u));
	for (int i = 0; i < d.n; i++)
		mlirOperationDestroy(d.v[i]);
	pb_ir_ops_free(&d);
}

/* The mapping chosen by an earlier stage for nest "op": a block-mapped
 * loop, or a warp- or thread-mapped loop alone (one block). */
static int map_mapped(struct pb_ctx *ctx, MlirOperation op)
{
	struct pb_kernel_band b = {0};
	struct mapped m = {0};
	struct pb_ir_ops wg = {0};
	struct pb_buf wgtext = {0};
	struct spec sp = {0};
	struct site site;
	MlirOperation launch;
	int64_t *off = NULL;
	MlirValue *views = NULL;
	int is_block = pb_contract_map_of(op) == PB_MAP_BLOCK, rc;
	if (is_block && !pb_kernel_band_add(op, &b)) {
		pb_error_at(ctx, mlirOperationGetLocation(op),
			    "block-mapped loop needs constant bounds");
		return PB_ERR;
	}
	rc = pb_codegen_private(ctx, op);
	if (rc == PB_OK)
		rc = pb_codegen_async(ctx, op);
	if (rc == PB_OK)
		rc = collect_mapped(ctx, op, &m);
	if (rc == PB_OK) {
		workgroup_allocs(op, &wg, &wgtext);
		off = calloc(wg.n + 1, sizeof(*off));
		views = calloc(wg.n + 1, sizeof(*views));
		sp.dyn = pb_codegen_dyn_layout(ctx, op, &wg, off);
		if (sp.dyn < 0)
			rc = PB_ERR;
		sp.block = m.nthreads;
		sp.grid = is_block ? pb_kernel_band_points(&b) : 1;
		sp.wg = sp.dyn ? "" : wgtext.data;
		sp.lin = is_block ? 2 : 0;
		sp.b = &b;
		if (rc != PB_OK)
			;
		else if (sp.grid > GRID_MAX)
			rc = grid_error(ctx, op, "block-mapped loop", sp.grid,
					"blocks");
		else if (sp.grid)
			rc = make_launch(ctx, &sp, op,
					 mlirOperationGetLocation(op), &launch,
					 &site);
		if (rc == PB_OK && sp.grid && sp.dyn)
			rc = pb_codegen_dyn_views(ctx, launch, &wg, off, views);
	}
	if (rc == PB_OK && !sp.grid) {
		mlirOperationDestroy(op);
	} else if (rc == PB_OK) {
		MlirBlock body = body_of(launch);
		if (is_block) {
			move_ops(body_of(op), site.before);
			replace_ivs(&b, &site);
			mlirOperationDestroy(op);
		} else {
			mlirOperationMoveBefore(op, site.before);
		}
		for (int i = 0; i < wg.n; i++) {
			MlirValue v = mlirOperationGetResult(wg.v[i], 0);
			drop_deallocs(v);
			mlirValueReplaceAllUsesOfWith(
				v, sp.dyn ? views[i]
					  : mlirBlockGetArgument(body, 12 + i));
			mlirOperationDestroy(wg.v[i]);
		}
		MlirValue tx = mlirBlockGetArgument(body, 3);
		for (int i = 0; i < m.nw && rc == PB_OK; i++)
			rc = map_warp(ctx, &m.w[i], tx, sp.block);
		for (int i = 0; i < m.threads.n && rc == PB_OK; i++) {
			int w = m.owner[i];
			if (w < 0)
				rc = map_thread_loop(ctx, m.threads.v[i], tx,
						     sp.block);
			else if (!mlirValueIsNull(m.w[w].lane))
				rc = map_thread_loop(ctx, m.threads.v[i],
						     m.w[w].lane, 32);
		}
	}
	mapped_free(&m);
	pb_ir_ops_free(&wg);
	pb_buf_free(&wgtext);
	free(off);
	free(views);
	return rc;
}

/* Does "op" belong to the host side of a function: buffers, views,
 * calls and launches? */
static int is_host(MlirOperation op)
{
	static const char *names[] = {
		"func.return", "func.call", "memref.alloc", "memref.alloca",
		"memref.dealloc", "memref.subview", "memref.collapse_shape",
		"memref.expand_shape", "memref.reinterpret_cast", "memref.cast",
		"memref.view", "memref.get_global", "memref.assume_alignment",
		"gpu.launch", "gpu.launch_func", NULL};
	for (int i = 0; names[i]; i++)
		if (pb_ir_op_is(op, names[i]))
			return 1;
	return 0;
}

/* Does an operand of "op" come from one of the "n" operations "g"? */
static int uses_group(MlirOperation op, MlirOperation *g, int n)
{
	for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); i++) {
		MlirOperation d = pb_ir_value_parent(mlirOperationGetOperand(op, i));
		for (int j = 0; j < n; j++)
			if (mlirOperationEqual(d, g[j]))
				return 1;
	}
	return 0;
}

struct uses {
	MlirOperation *g;
	int n, found;
};

/* Walk callback of uses_group_deep on "op" ("user": struct uses). */
static MlirWalkResult uses_cb(MlirOperation op, void *user)
{
	struct uses *u = user;
	u->found |= uses_group(op, u->g, u->n);
	return u->found ? MlirWalkResultInterrupt : MlirWalkResultAdvance;
}

/* Does "op" or an operation nested in it use a result of the "n"
 * operations "g"? */
static int uses_group_deep(MlirOperation op, MlirOperation *g, int n)
{
	struct uses u = {g, n, 0};
	if (n)
		mlirOperationWalk(op, uses_cb, &u, MlirWalkPreOrder);
	return u.found;
}

/* Report a result of "op" used outside "launch". */
static int check_escape(struct pb_ctx *ctx, MlirOperation op,
			MlirOperation launch)
{
	for (intptr_t i = 0; i < mlirOperationGetNumResults(op); i++) {
		MlirValue v = mlirOperationGetResult(op, i);
		for (MlirOpOperand u = mlirValueGetFirstUse(v);
		     !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u))
			if (!pb_ir_is_inside(mlirOpOperandGetOwner(u), launch)) {
				pb_error_at(ctx, mlirOperationGetLocation(op),
					    "cannot lower '%.*s': its result is "
					    "used outside its kernel",
					    (int)mlirIdentifierStr(mlirOperationGetName(op)).length,
					    mlirIdentifierStr(mlirOperationGetName(op)).data);
				return PB_ERR;
			}
	}
	return PB_OK;
}

/* Run the "n" operations "g" (in order) in one single-thread launch. */
static int flush(struct pb_ctx *ctx, struct pb_ir_ops *g)
{
	struct spec sp = {1, 1, "", 0, 0, NULL, 0};
	struct site site;
	MlirOperation launch;
	int rc = PB_OK;
	if (!g->n)
		return PB_OK;
	MlirOperation last = g->v[g->n - 1];
	rc = make_launch(ctx, &sp, last, mlirOperationGetLocation(g->v[0]),
			 &launch, &site);
	for (int i = 0; i < g->n && rc == PB_OK; i++)
		mlirOperationMoveBefore(g->v[i], site.before);
	for (int i = 0; i < g->n && rc == PB_OK; i++)
		rc = check_escape(ctx, g->v[i], launch);
	g->n = 0;
	return rc;
}

/* Map the top-level work of the body of function "func". */
static int map_func(struct pb_ctx *ctx, MlirOperation func)
{
	struct pb_ir_ops ops = {0}, group = {0};
	int rc = PB_OK;
	pb_ir_block_ops(body_of(func), &ops);
	for (int i = 0; i < ops.n && rc == PB_OK; i++) {
		MlirOperation op = ops.v[i];
		struct pb_kernel_band b;
		if (is_pure(op) && !uses_group(op, group.v, group.n))
			continue;
		if (is_host(op)) {
			rc = flush(ctx, &group);
			continue;
		}
		if (pb_contract_is_mapped(op)) {
			rc = flush(ctx, &group);
			if (rc == PB_OK)
				rc = map_mapped(ctx, op);
			continue;
		}
		if (uses_group_deep(op, group.v, group.n)) {
			/* it needs values computed by the pending serial
			 * work: run it in the same thread */
			pb_ir_ops_push(&group, op);
			continue;
		}
		pb_kernel_band_of(op, &b);
		if (b.n) {
			rc = flush(ctx, &group);
			if (rc == PB_OK)
				rc = map_band(ctx, op, &b);
			continue;
		}
		pb_ir_ops_push(&group, op);
	}
	if (rc == PB_OK)
		rc = flush(ctx, &group);
	pb_ir_ops_free(&ops);
	pb_ir_ops_free(&group);
	return rc;
}

/* Give every buffer allocated inside "launch" a static private
 * allocation at the start of the kernel (no device-side malloc). */
static int private_allocs(struct pb_ctx *ctx, MlirOperation launch)
{
	struct pb_ir_ops all = {0};
	MlirBlock body = body_of(launch);
	int rc = PB_OK;
	pb_ir_collect(launch, NULL, &all);
	for (int i = 0; i < all.n && rc == PB_OK; i++) {
		MlirOperation op = all.v[i];
		int alloc = pb_ir_op_is(op, "memref.alloc");
		if (!alloc && !pb_ir_op_is(op, "memref.alloca"))
			continue;
		MlirValue v = mlirOperationGetResult(op, 0);
		if (mlirOperationGetNumOperands(op)) {
			pb_error_at(ctx, mlirOperationGetLocation(op),
				    "cannot lower a dynamically sized "
				    "allocation inside a kernel");
			rc = PB_ERR;
			break;
		}
		MlirOperation first = mlirBlockGetFirstOperation(body);
		if (!alloc) {
			mlirOperationMoveBefore(op, first);
			continue;
		}
		struct pb_buf t = {0};
		struct pb_ir_ops out = {0};
		pb_buf_puts(&t, "func.func @t() {\n  %a = memref.alloca() : ");
		pb_codegen_type_str(mlirValueGetType(v), &t);
		pb_buf_puts(&t, "\n  return\n}\n");
		rc = pb_ir_instantiate(ctx, t.data, first, 0, NULL,
					    mlirOperationGetLocation(op), &out);
		if (rc == PB_OK) {
			drop_deallocs(v);
			mlirValueReplaceAllUsesOfWith(
				v, mlirOperationGetResult(out.v[0], 0));
			mlirOperationDestroy(op);
		}
		pb_buf_free(&t);
		pb_ir_ops_free(&out);
	}
	pb_ir_ops_free(&all);
	return rc;
}

/* Give "launch" its own copy of each constant buffer (memref.get_global)
 * it uses from outside: kernels read them from device globals. */
static void sink_globals(MlirOperation launch)
{
	struct pb_ir_ops all = {0};
	MlirBlock body = body_of(launch);
	pb_ir_collect(launch, NULL, &all);
	for (int i = 0; i < all.n; i++)
		for (intptr_t j = 0; j < mlirOperationGetNumOperands(all.v[i]); j++) {
			MlirValue v = mlirOperationGetOperand(all.v[i], j);
			MlirOperation d = pb_ir_value_parent(v);
			if (mlirOperationIsNull(d) ||
			    !pb_codegen_is_constant_view(d) ||
			    pb_ir_is_inside(d, launch))
				continue;
			MlirOperation c = pb_codegen_clone_chain(
				d, mlirBlockGetFirstOperation(body));
			for (int k = i; k < all.n; k++)
				mlirOperationReplaceUsesOfWith(
					all.v[k], v, mlirOperationGetResult(c, 0));
		}
	pb_ir_ops_free(&all);
}

int pb_codegen_map(struct pb_ctx *ctx, MlirModule m)
{
	struct pb_ir_ops funcs = {0}, launches = {0};
	int rc = PB_OK;
	pb_ir_block_ops(mlirModuleGetBody(m), &funcs);
	for (int i = 0; i < funcs.n && rc == PB_OK; i++)
		if (pb_ir_op_is(funcs.v[i], "func.func") &&
		    !mlirRegionIsNull(mlirOperationGetRegion(funcs.v[i], 0)) &&
		    !mlirBlockIsNull(body_of(funcs.v[i])))
			rc = map_func(ctx, funcs.v[i]);
	if (rc == PB_OK)
		pb_ir_collect(mlirModuleGetOperation(m), "gpu.launch",
				   &launches);
	for (int i = 0; i < launches.n && rc == PB_OK; i++) {
		sink_globals(launches.v[i]);
		rc = private_allocs(ctx, launches.v[i]);
	}
	if (rc == PB_OK)
		pb_codegen_drop_dead_views(m);
	pb_ir_ops_free(&funcs);
	pb_ir_ops_free(&launches);
	return rc;
}
