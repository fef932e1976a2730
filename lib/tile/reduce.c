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
 * Which bands fit, and the plan (the kind of each step, with the proof
 * that its nest is parallel or a reduction), are reduce_match.c's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "tile/internal.h"

/* The first block of the first region of "op". */
static MlirBlock body_of(MlirOperation op)
{
	return mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
}

/* Append the identity of "r" on type "t" as an arith.constant value to
 * "out" ("0.000000e+00 : f32"). */
static void ident_text(struct pb_buf *out, const struct pb_tile_red_op *r,
		       MlirType t)
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
		pb_buf_puts(out, r->id == PB_TILE_ID_ZERO     ? "0.000000e+00"
				 : r->id == PB_TILE_ID_ONE    ? "1.000000e+00"
				 : r->id == PB_TILE_ID_NEG_INF ? neg
						       : pos);
	} else {
		unsigned w = mlirIntegerTypeGetWidth(t);
		switch (r->id) {
		case PB_TILE_ID_ONE:
			pb_buf_puts(out, "1");
			break;
		case PB_TILE_ID_SMIN:
			if (w == 64)
				pb_buf_puts(out, "-9223372036854775808");
			else
				pb_buf_printf(out, "%lld", -(1LL << (w - 1)));
			break;
		case PB_TILE_ID_SMAX:
			pb_buf_printf(out, "%lld",
				      (long long)((1ULL << (w - 1)) - 1));
			break;
		case PB_TILE_ID_ONES:
			pb_buf_puts(out, "-1");
			break;
		default:
			pb_buf_puts(out, "0");
		}
	}
	pb_buf_puts(out, " : ");
	pb_ir_type_print(t, out);
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

/* A workgroup allocation of "type" (text) before "before" in "s"; its
 * value into "*v". */
static int wg_alloc(struct site *s, const char *type, MlirOperation before,
		    MlirValue *v)
{
	MlirOperation alloc;
	int rc = pb_kernel_workgroup_alloc(s->ctx, type, before, s->loc,
					   &alloc);
	if (rc == PB_OK) {
		*v = mlirOperationGetResult(alloc, 0);
		pb_ir_ops_push(&s->wg, alloc);
	}
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
	pb_buf_puts(t, "  } {" PB_ATTR_MAP " = \"thread\"}\n");
}

/* Is the one distributed loop of "st" counted from 0 by 1, so that its
 * counter is the linear iteration itself? */
static int direct(const struct pb_tile_step *st)
{
	return st->d == 1 && st->lb[0] == 0 && st->step[0] == 1;
}

/* Append to "t" the loop over the iterations of "st" of thread "%t" and
 * the counters of its distributed loops (%i0, ...) computed from the
 * linear iteration (none when direct); the loop is left open unless every
 * thread has exactly one iteration ("*open" says which; a reduction
 * rounds its threads up to a power of 2, so some may have none). */
static void iter_open(struct pb_buf *t, const struct pb_tile_step *st,
		      int *open)
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
static void iter_site(MlirOperation tl, int open, const struct pb_tile_step *st,
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
static void replace_nest(const struct pb_tile_step *st, MlirBlock blk,
			 MlirValue *iv)
{
	move_body(body_of(st->loop[st->d - 1]), blk);
	for (int k = 0; k < st->d; k++)
		mlirValueReplaceAllUsesOfWith(
			mlirBlockGetArgument(body_of(st->loop[k]), 0), iv[k]);
	mlirOperationDestroy(st->op);
}

/* Map the parallel nest of "st". */
static int map_par(struct site *s, const struct pb_tile_step *st)
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
static void part_type(struct pb_buf *t, const struct pb_tile_step *st, int a)
{
	pb_kernel_workgroup_type_text(t, st->acc[a].type, st->nthr);
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
static int map_red(struct site *s, const struct pb_tile_step *st)
{
	struct pb_buf t = {0}, ty[PB_TILE_MAXACC];
	struct pb_ir_ops out = {0};
	MlirValue part[PB_TILE_MAXACC], iv[PB_TILE_MAXD];
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
			const struct pb_tile_acc *ac = &st->acc[a];
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
			const struct pb_tile_acc *ac = &st->acc[a];
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
static int map_scalar(struct site *s, const struct pb_tile_plan *p, int run)
{
	struct pb_buf t = {0};
	struct pb_ir_ops out = {0};
	MlirOperation last = {NULL};
	for (int i = 0; i < p->n; i++)
		if (p->s[i].kind == PB_TILE_STEP_SCALAR && p->s[i].run == run)
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
			if (p->s[i].kind == PB_TILE_STEP_SCALAR && p->s[i].run == run)
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
	pb_kernel_workgroup_type_text(&ty, mlirValueGetType(old), 0);
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
		      "(%s) step (%s) {\n  } {" PB_ATTR_MAP " = \"block\"}\n  return\n}\n",
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

/* Is step "i" of "p" the last scalar step of its run? (KEEP and ALLOCA
 * steps between scalar steps stay before the run's thread loop.) */
static int last_of_run(const struct pb_tile_plan *p, int i)
{
	for (int j = i + 1; j < p->n; j++)
		if (p->s[j].kind == PB_TILE_STEP_SCALAR && p->s[j].run == p->s[i].run)
			return 0;
	return 1;
}

int pb_tile_reduce_apply(struct pb_ctx *ctx, const struct pb_kernel_band *b,
			 int threads)
{
	struct pb_tile_plan p;
	struct site s = {0};
	int rc = PB_OK;
	s.ctx = ctx;
	s.loc = mlirOperationGetLocation(b->root);
	if (!pb_tile_reduce_plan(ctx->isl, b, threads, &p)) {
		pb_error_at(ctx, s.loc, "internal: nest does not fit the "
			    "block-level reduction mapping");
		return PB_ERR;
	}
	MlirOperation blk = block_loop(&s, b);
	if (mlirOperationIsNull(blk)) {
		pb_tile_reduce_plan_free(&p);
		return PB_ERR;
	}
	s.body = body_of(blk);
	for (int i = 0; i < p.n && rc == PB_OK; i++) {
		struct pb_tile_step *st = &p.s[i];
		if (st->kind == PB_TILE_STEP_ALLOCA)
			rc = map_alloca(&s, st->op);
		else if (st->kind == PB_TILE_STEP_PAR)
			rc = map_par(&s, st);
		else if (st->kind == PB_TILE_STEP_RED)
			rc = map_red(&s, st);
		else if (st->kind == PB_TILE_STEP_SCALAR && last_of_run(&p, i))
			rc = map_scalar(&s, &p, st->run);
	}
	if (rc == PB_OK)
		rc = deallocs(&s);
	pb_ir_ops_free(&s.wg);
	pb_tile_reduce_plan_free(&p);
	return rc;
}

