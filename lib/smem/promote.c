/* Shared-memory promotion of operand tiles (docs/pb-smem.md): the
 * driver and the rewrite; the analysis that decides what to stage and how
 * is plan.c's.
 *
 * pb-tile leaves each block of a contraction as one mapped nest: warp and
 * thread loops around a thread's work, a reduction loop L (the k of a
 * GEMM, the input channels of a convolution) reading its operands from
 * global memory:
 *
 *   block { warp { thread { acc = alloca; init; L { acc += A * B }; store } } }
 *
 * For each such nest, the localized access relations of lib/poly (the
 * block's counters as parameters, the warp, thread and L counters as the
 * domain) give the footprint per block and per k-tile (L strip-mined by
 * KT) of every read of a buffer the kernel never writes. An access whose
 * footprint is a fixed box and that is reused across threads is staged:
 * the box gets a workgroup buffer (a ring of S slots), and the nest
 * becomes sibling nests separated by barriers, the accumulators living in
 * private arrays (lib/kernel/private.c):
 *
 *   block { As = alloc [S][box]; acc = alloca [threads][...]
 *     warp { thread { init } }
 *     copy k-tiles 0 .. S-2 (async)                      S > 1
 *     for kk step KT {
 *       barrier (waiting for k-tile kk)                   S > 1
 *       copy k-tile (kk + (S-1) KT) mod L (async)         S > 1
 *       copy k-tile kk; barrier                           S = 1
 *       warp { thread { L over kk .. kk+KT reading As[slot] } }
 *       barrier                                           S = 1
 *     }
 *     barrier, waiting for every copy                     S > 1
 *     warp { thread { store } } }
 *
 * The copies are cooperative (every thread of the block, consecutive
 * threads on consecutive elements: coalesced), as wide as alignment
 * allows (up to 16 bytes), guarded with zero fill where the box may leave
 * the buffer; the innermost dimension of a buffer is padded when that
 * removes bank conflicts of the warps' accesses (bank.c). Run on the CPU,
 * the siblings run one after another: the semantics of threads separated
 * by barriers. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "core/tensor.h"
#include "kernel/kernel.h"
#include "poly/poly.h"
#include "smem/internal.h"
#include "target/target.h"

/* The thread loop and its body's operations (but the terminator) of the
 * mapped chain starting at "top". */
static MlirOperation chain_thread(MlirOperation top)
{
	MlirOperation op = top;
	while (pb_contract_map_of(op) == PB_MAP_WARP) {
		MlirOperation o = mlirBlockGetFirstOperation(pb_smem_body(op));
		while (!mlirOperationIsNull(o) && pb_smem_is_pure(o))
			o = mlirOperationGetNextInBlock(o);
		op = o;
	}
	return op;
}

/* In the copy "top" of the nest, keep the operations of the thread body
 * that belong to "part" (-1: before the reduction loop at "at", 0: the
 * loop, 1: after it), the private buffers and the pure operations; the
 * private buffers' accesses go to the block-level arrays "priv" and the
 * buffers themselves and the pure operations left unused go away. */
static void keep_part(struct nest *n, MlirOperation top, int part,
		      const MlirValue *priv)
{
	MlirBlock body = pb_smem_body(chain_thread(top));
	struct pb_ir_ops ops = {0}, allocas = {0};
	pb_ir_block_ops(body, &ops);
	for (int j = ops.n - 1; j >= 0; j--) {
		MlirOperation o = ops.v[j];
		int at = j < n->at ? -1 : j > n->at;
		if (pb_ir_op_is(o, "affine.yield") || pb_smem_is_pure(o))
			continue;
		if (pb_ir_op_is(o, "memref.alloca")) {
			pb_ir_ops_push(&allocas, o);
			continue;
		}
		if (at != part)
			mlirOperationDestroy(o);
	}
	/* allocas were pushed last first */
	for (int k = 0; k < allocas.n; k++) {
		MlirValue v = mlirOperationGetResult(allocas.v[k], 0);
		MlirValue to = priv[allocas.n - 1 - k];
		struct pb_ir_ops uses = {0};
		for (MlirOpOperand u = mlirValueGetFirstUse(v);
		     !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u))
			pb_ir_ops_push(&uses, mlirOpOperandGetOwner(u));
		for (int i = 0; i < uses.n; i++) {
			struct pb_kernel_band b;
			pb_kernel_private_loops(uses.v[i], n->block, &b);
			pb_kernel_private_rewrite(uses.v[i], to, &b, 0);
		}
		pb_ir_ops_free(&uses);
		mlirOperationDestroy(allocas.v[k]);
	}
	for (int changed = 1; changed;) {
		struct pb_ir_ops left = {0};
		changed = 0;
		pb_ir_block_ops(body, &left);
		for (int j = left.n - 1; j >= 0; j--) {
			MlirOperation o = left.v[j];
			int used = 0;
			for (intptr_t r = 0; r < mlirOperationGetNumResults(o); r++)
				used |= !mlirOpOperandIsNull(mlirValueGetFirstUse(
					mlirOperationGetResult(o, r)));
			if (pb_smem_is_pure(o) && !used) {
				mlirOperationDestroy(o);
				changed = 1;
			}
		}
		pb_ir_ops_free(&left);
	}
	pb_ir_ops_free(&ops);
	pb_ir_ops_free(&allocas);
}

/* Does the thread body of the nest hold work of "part" (see keep_part)? */
static int has_part(struct nest *n, int part)
{
	struct pb_ir_ops ops = {0};
	int found = 0;
	pb_ir_block_ops(pb_smem_body(n->thread), &ops);
	for (int j = 0; j < ops.n; j++) {
		int at = j < n->at ? -1 : j > n->at;
		found |= at == part && !pb_ir_op_is(ops.v[j], "affine.yield") &&
			 !pb_smem_is_pure(ops.v[j]) &&
			 !pb_ir_op_is(ops.v[j], "memref.alloca");
	}
	pb_ir_ops_free(&ops);
	return found;
}

/* Create the block-level private arrays of the private buffers of the
 * thread body of "n" before its top loop into "priv"; their number. */
static int make_private(struct promote *p, struct nest *n, MlirValue *priv)
{
	int np = 0;
	for (MlirOperation o = mlirBlockGetFirstOperation(pb_smem_body(n->thread));
	     !mlirOperationIsNull(o); o = mlirOperationGetNextInBlock(o)) {
		if (!pb_ir_op_is(o, "memref.alloca"))
			continue;
		MlirType t = mlirValueGetType(mlirOperationGetResult(o, 0));
		int64_t shape[PB_KERNEL_MAXD + MAXR + 8];
		int rank = (int)mlirShapedTypeGetRank(t), r = 0;
		for (int d = 0; d < n->chain.n; d++)
			shape[r++] = n->chain.extent[d];
		for (int d = 0; d < rank && r < (int)(sizeof(shape) / 8); d++)
			shape[r++] = mlirShapedTypeGetDimSize(t, d);
		MlirType nt = mlirMemRefTypeContiguousGet(
			mlirShapedTypeGetElementType(t), r, shape,
			mlirAttributeGetNull());
		struct pb_buf text = {0};
		struct pb_ir_ops out = {0};
		pb_buf_puts(&text, "func.func @t() {\n  %a = memref.alloca() : ");
		pb_ir_type_print(nt, &text);
		pb_buf_puts(&text, "\n  return\n}\n");
		int rc = pb_ir_instantiate(p->ctx, text.data, n->top, 0, NULL,
					   mlirOperationGetLocation(o), &out);
		pb_buf_free(&text);
		if (rc == PB_OK)
			priv[np++] = mlirOperationGetResult(out.v[0], 0);
		pb_ir_ops_free(&out);
		if (rc)
			return -1;
	}
	return np;
}

/* Append to "t" the offset of dimension "d" of "g" as an affine
 * expression of map dimensions "q<i>" (the parameters) and "k" (the
 * k-tile origin). */
static void offset_text(struct pb_buf *t, const struct nest *n,
			const struct group *g, int d)
{
	pb_buf_printf(t, "%lld", (long long)g->cst[d]);
	for (int i = 0; i <= n->l->np; i++) {
		if (!g->coef[d][i])
			continue;
		if (i == n->l->np)
			pb_buf_printf(t, " + k * %lld", (long long)g->coef[d][i]);
		else
			pb_buf_printf(t, " + q%d * %lld", i,
				      (long long)g->coef[d][i]);
	}
}

/* Append to "t" the cooperative copy of group "g" (template values "src"
 * and "buf", the parameters "%p<i>") for the k-tile whose origin is the
 * value "kk" into the slot that is the value "slot": every thread of the
 * block copies units of g->vec elements, consecutive threads consecutive
 * units; guarded dimensions zero-fill what lies outside the buffer. The
 * thread loop is marked pb.async when "async". */
static void copy_text(struct pb_buf *t, const struct nest *n,
		      const struct group *g, const char *kk, const char *slot,
		      int async, const char *elt, const char *src,
		      const char *srct, const char *buf, const char *buft)
{
	int r = g->rank - 1, v = g->vdim, guards = 0;
	int64_t q[MAXR], units = 1, scale[MAXR];
	char name[MAXR][8];
	const char *names[MAXR];
	for (int d = 0; d <= r; d++) {
		q[d] = d == v ? g->size[d] / g->vec : g->size[d];
		scale[d] = d == v ? g->vec : 1;
		units *= q[d];
		guards += g->guard[d];
		snprintf(name[d], sizeof(name[d]), "c%d", d);
		names[d] = name[d];
	}
	int64_t iters = (units + n->threads - 1) / n->threads;
	struct pb_smem_digits dg;
	pb_smem_digits_init(&dg, r + 1, q, scale, n->threads, iters);
	pb_buf_printf(t, "    affine.parallel (%%t) = (0) to (%lld) {\n",
		      (long long)n->threads);
	pb_smem_digits_thread_text(t, 6, &dg, names, "%t");
	pb_buf_printf(t, "      affine.for %%e = 0 to %lld {\n",
		      (long long)iters);
	if (dg.lin)
		pb_buf_printf(t, "        %%u = affine.apply affine_map<(d0, d1) "
			      "-> (d0 + d1 * %lld)>(%%t, %%e)\n",
			      (long long)n->threads);
	if (units % n->threads)
		pb_buf_printf(t, "        affine.if affine_set<(d0) : (%lld - d0 "
			      ">= 0)>(%%u) {\n", (long long)(units - 1));
	pb_smem_digits_round_text(t, 8, &dg, names, "%e", "%u");
	for (int d = 0; d <= r; d++) {
		pb_buf_printf(t, "        %%g%d = affine.apply affine_map<(c, k",
			      d);
		for (int i = 0; i < n->l->np; i++)
			pb_buf_printf(t, ", q%d", i);
		pb_buf_puts(t, ") -> (c + ");
		offset_text(t, n, g, d);
		pb_buf_printf(t, ")>(%%c%d, %s", d, kk);
		for (int i = 0; i < n->l->np; i++)
			pb_buf_printf(t, ", %%p%d", i);
		pb_buf_puts(t, ")\n");
	}
	if (guards) {
		pb_buf_puts(t, "        affine.if affine_set<(");
		for (int d = 0; d <= r; d++)
			pb_buf_printf(t, "%sg%d", d ? ", " : "", d);
		pb_buf_puts(t, ") : (");
		int first = 1;
		for (int d = 0; d <= r; d++) {
			if (!g->guard[d])
				continue;
			pb_buf_printf(t, "%sg%d >= 0, %lld - g%d >= 0",
				      first ? "" : ", ", d,
				      (long long)(g->dim[d] -
						  (d == v ? g->vec : 1)),
				      d);
			first = 0;
		}
		pb_buf_puts(t, ")>(");
		for (int d = 0; d <= r; d++)
			pb_buf_printf(t, "%s%%g%d", d ? ", " : "", d);
		pb_buf_puts(t, ") {\n");
	}
	struct pb_buf gi = {0}, ci = {0}, vt = {0}, fill = {0};
	for (int d = 0; d <= r; d++) {
		pb_buf_printf(&gi, "%s%%g%d", d ? ", " : "", d);
		pb_buf_printf(&ci, ", %%c%d", g->perm[d]);
	}
	if (g->vec > 1 && v < r) {
		/* the buffer's unit dimensions inside v collapsed into v */
		struct pb_buf re = {0}, ct = {0};
		pb_buf_puts(&ct, "memref<");
		for (int d = 0; d <= v; d++) {
			pb_buf_printf(&re, "%s[%d", d ? "], " : "[", d);
			pb_buf_printf(&ct, "%lldx", (long long)g->dim[d]);
		}
		for (int d = v + 1; d <= r; d++)
			pb_buf_printf(&re, ", %d", d);
		pb_buf_printf(&ct, "%s>", elt);
		gi.len = 0;
		for (int d = 0; d <= v; d++)
			pb_buf_printf(&gi, "%s%%g%d", d ? ", " : "", d);
		pb_buf_printf(&vt, "vector<%lldx%s>", (long long)g->vec, elt);
		pb_buf_printf(t, "        %%cs = memref.collapse_shape %s %s]] : "
			      "%s into %s\n"
			      "        %%x = affine.vector_load %%cs[%s] : %s, "
			      "%s\n        affine.vector_store %%x, %s[%s%s] : "
			      "%s, %s\n",
			      src, re.data, srct, ct.data, gi.data, ct.data,
			      vt.data, buf, slot, ci.data, buft, vt.data);
		pb_buf_free(&re);
		pb_buf_free(&ct);
	} else if (g->vec > 1) {
		pb_buf_printf(&vt, "vector<%lldx%s>", (long long)g->vec, elt);
		pb_buf_printf(t, "        %%x = affine.vector_load %s[%s] : %s, "
			      "%s\n        affine.vector_store %%x, %s[%s%s] : "
			      "%s, %s\n",
			      src, gi.data, srct, vt.data, buf, slot, ci.data,
			      buft, vt.data);
	} else {
		pb_buf_printf(t, "        %%x = affine.load %s[%s] : %s\n"
			      "        affine.store %%x, %s[%s%s] : %s\n",
			      src, gi.data, srct, buf, slot, ci.data, buft);
	}
	if (guards) {
		if (mlirAttributeIsNull(g->fill))
			pb_buf_printf(&fill, "0.0 : %s", elt);
		else
			mlirAttributePrint(g->fill, pb_buf_mlir_callback, &fill);
		pb_buf_puts(t, "        } else {\n");
		if (g->vec > 1)
			pb_buf_printf(t, "        %%f0 = arith.constant %s\n"
				      "        %%z = vector.broadcast %%f0 : %s to "
				      "%s\n        affine.vector_store %%z, "
				      "%s[%s%s] : %s, %s\n",
				      fill.data, elt, vt.data, buf, slot, ci.data,
				      buft, vt.data);
		else
			pb_buf_printf(t, "        %%z = arith.constant %s\n"
				      "        affine.store %%z, %s[%s%s] : %s\n",
				      fill.data, buf, slot, ci.data, buft);
		pb_buf_puts(t, "        }\n");
	}
	if (units % n->threads)
		pb_buf_puts(t, "        }\n");
	pb_buf_printf(t, "      }\n    } {" PB_ATTR_MAP " = \"thread\"%s}\n",
		      async ? ", pb.async" : "");
	pb_buf_free(&gi);
	pb_buf_free(&ci);
	pb_buf_free(&vt);
	pb_buf_free(&fill);
}

/* Replace staged load "op" of group "g" by a load of its tile: slot
 * ((kk floordiv KT) mod S), subscripts minus the tile's offset. */
static MlirOperation stage_load(const struct nest *n, const struct group *g,
				MlirOperation op, MlirValue kk)
{
	MlirAffineMap map = mlirAffineMapAttrGetValue(pb_ir_attr(op, "map"));
	MlirContext c = mlirAffineMapGetContext(map);
	int nd = (int)mlirAffineMapGetNumDims(map);
	int ns = (int)mlirAffineMapGetNumSymbols(map);
	int np = n->l->np, nops = 0;
	MlirAffineExpr e[MAXR + 1];
	MlirValue ops[64 + PB_POLY_LOCAL_MAXPAR + 2];
	MlirAffineExpr k = mlirAffineDimExprGet(c, nd + np);
	e[0] = n->stages > 1
		       ? mlirAffineModExprGet(
				 mlirAffineFloorDivExprGet(
					 k, mlirAffineConstantExprGet(c, n->kt)),
				 mlirAffineConstantExprGet(c, n->stages))
		       : mlirAffineConstantExprGet(c, 0);
	for (int s = 0; s < g->rank; s++) {
		int d = g->perm[s];
		MlirAffineExpr off = mlirAffineConstantExprGet(c, g->cst[d]);
		for (int i = 0; i <= np; i++)
			if (g->coef[d][i])
				off = mlirAffineAddExprGet(
					off, mlirAffineMulExprGet(
						     mlirAffineDimExprGet(c, nd + i),
						     mlirAffineConstantExprGet(
							     c, g->coef[d][i])));
		e[1 + s] = mlirAffineAddExprGet(
			mlirAffineMapGetResult(map, d),
			mlirAffineMulExprGet(off, mlirAffineConstantExprGet(c, -1)));
	}
	MlirAffineMap nm = mlirAffineMapGet(c, nd + np + 1, ns, 1 + g->rank, e);
	ops[nops++] = g->buf;
	for (int i = 0; i < nd; i++)
		ops[nops++] = mlirOperationGetOperand(op, 1 + i);
	for (int i = 0; i < np; i++)
		ops[nops++] = n->l->par[i];
	ops[nops++] = kk;
	for (int i = 0; i < ns; i++)
		ops[nops++] = mlirOperationGetOperand(op, 1 + nd + i);
	MlirOperationState st = mlirOperationStateGet(
		mlirStringRefCreateFromCString("affine.load"),
		mlirOperationGetLocation(op));
	mlirOperationStateAddOperands(&st, nops, ops);
	MlirNamedAttribute na = mlirNamedAttributeGet(
		mlirIdentifierGet(c, mlirStringRefCreateFromCString("map")),
		mlirAffineMapAttrGet(nm));
	mlirOperationStateAddAttributes(&st, 1, &na);
	MlirType t = mlirValueGetType(mlirOperationGetResult(op, 0));
	mlirOperationStateAddResults(&st, 1, &t);
	MlirOperation l = mlirOperationCreate(&st);
	mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(op), op, l);
	mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0),
				      mlirOperationGetResult(l, 0));
	mlirOperationDestroy(op);
	return l;
}

/* Strip-mine the reduction loop of "n" onto the k-tile loop's counter
 * "kk": it runs 0 .. KT and its counter is kk + its own. */
static int strip_loop(struct promote *p, struct nest *n, MlirValue kk)
{
	char text[160];
	MlirBlock body = pb_smem_body(n->loop);
	MlirValue iv = mlirBlockGetArgument(body, 0), args[2] = {kk, iv};
	struct pb_ir_ops out = {0};
	snprintf(text, sizeof(text), "affine_map<() -> (%lld)>",
		 (long long)n->kt);
	MlirContext c = mlirOperationGetContext(n->loop);
	pb_ir_set_attr(n->loop, "upperBoundMap",
		       mlirAttributeParseGet(c, mlirStringRefCreateFromCString(
						   text)));
	if (n->unroll)
		pb_ir_set_attr(n->loop, "pb.unroll", mlirUnitAttrGet(c));
	int rc = pb_ir_instantiate(
		p->ctx,
		"func.func @t(%kk: index, %k: index) {\n"
		"  %i = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%kk, %k)\n"
		"  return\n}\n",
		mlirBlockGetFirstOperation(body), 2, args,
		mlirOperationGetLocation(n->loop), &out);
	if (rc == PB_OK) {
		MlirOperation a = out.v[0];
		MlirValue i = mlirOperationGetResult(a, 0);
		mlirValueReplaceAllUsesOfWith(iv, i);
		mlirOperationSetOperand(a, 1, iv);
	}
	pb_ir_ops_free(&out);
	return rc;
}

/* Append to "t" the copies of every group of "n" for the k-tile at "kk"
 * into slot "slot". */
static void copies_text(struct pb_buf *t, const struct nest *n, const char *kk,
			const char *slot, int async, char **elt, char **srct,
			char **buft)
{
	for (int i = 0; i < n->ng; i++) {
		char src[16], buf[16];
		snprintf(src, sizeof(src), "%%s%d", i);
		snprintf(buf, sizeof(buf), "%%b%d", i);
		copy_text(t, n, &n->g[i], kk, slot, async, elt[i], src, srct[i],
			  buf, buft[i]);
	}
}

/* The text of type "t". */
static char *type_text(MlirType t)
{
	struct pb_buf b = {0};
	pb_ir_type_print(t, &b);
	return b.data;
}

/* The template of the k-tile loop of "n" with its copies and barriers
 * (see the top of this file) into "t". One loop, the slot (kk floordiv
 * KT) mod S: split into rounds of S k-tiles around a loop over the slots
 * (mma.c's rings), LLVM unrolls the S slots and the body S times over
 * spilled where pb-tile's occupancy caps the registers (docs/pb-smem.md,
 * branch idx). */
static void loop_text(struct pb_buf *t, const struct nest *n, char **elt,
		      char **srct, char **buft)
{
	int s = n->stages;
	pb_buf_puts(t, "func.func @t(");
	for (int i = 0; i < n->l->np; i++)
		pb_buf_printf(t, "%%p%d: index, ", i);
	for (int i = 0; i < n->ng; i++)
		pb_buf_printf(t, "%s%%s%d: %s, %%b%d: %s", i ? ", " : "", i,
			      srct[i], i, buft[i]);
	pb_buf_puts(t, ") {\n");
	for (int k = 0; k + 1 < s; k++) {
		char kk[16], sl[16];
		pb_buf_printf(t, "  %%kc%d = arith.constant %lld : index\n"
			      "  %%sc%d = arith.constant %d : index\n",
			      k, (long long)(k * n->kt), k, k);
		snprintf(kk, sizeof(kk), "%%kc%d", k);
		snprintf(sl, sizeof(sl), "%%sc%d", k);
		copies_text(t, n, kk, sl, 1, elt, srct, buft);
	}
	pb_buf_printf(t, "  affine.for %%kk = 0 to %lld step %lld {\n",
		      (long long)n->trip, (long long)n->kt);
	if (s > 1) {
		pb_buf_printf(t, "    gpu.barrier {pb.wait = %d : i64}\n"
			      "    %%kn = affine.apply affine_map<(d0) -> ((d0 + "
			      "%lld) mod %lld)>(%%kk)\n"
			      "    %%sn = affine.apply affine_map<(d0) -> ((d0 "
			      "floordiv %lld + %d) mod %d)>(%%kk)\n",
			      s - 2, (long long)((s - 1) * n->kt),
			      (long long)n->trip, (long long)n->kt,
			      s - 1, s);
		copies_text(t, n, "%kn", "%sn", 1, elt, srct, buft);
	} else {
		pb_buf_puts(t, "    %z0 = arith.constant 0 : index\n");
		copies_text(t, n, "%kk", "%z0", 0, elt, srct, buft);
		pb_buf_puts(t, "    gpu.barrier\n    gpu.barrier\n");
	}
	pb_buf_puts(t, "  }\n");
	if (s > 1)
		pb_buf_puts(t, "  gpu.barrier {pb.wait = 0 : i64}\n");
	pb_buf_puts(t, "  return\n}\n");
}

/* Stage the groups of "n" (see the top of this file). */
static int rewrite(struct promote *p, struct nest *n)
{
	MlirValue priv[MAXPRIV], args[PB_POLY_LOCAL_MAXPAR + 2 * MAXG];
	MlirLocation loc = mlirOperationGetLocation(n->top);
	MlirBlock bb = pb_smem_body(n->block);
	char *elt[MAXG] = {0}, *srct[MAXG] = {0}, *buft[MAXG] = {0};
	struct pb_ir_ops out = {0};
	struct pb_buf t = {0};
	int nargs = 0, rc = PB_OK;
	for (int i = 0; i < n->ng && rc == PB_OK; i++) {
		struct group *g = &n->g[i];
		MlirType st = mlirValueGetType(g->src);
		MlirOperation a;
		elt[i] = type_text(mlirShapedTypeGetElementType(st));
		srct[i] = type_text(st);
		struct pb_buf w = {0};
		pb_smem_ring_type(n, g, &w);
		buft[i] = w.data;
		g->buf = pb_smem_free_buffer(n, buft[i], i);
		if (!mlirValueIsNull(g->buf))
			continue;
		rc = pb_kernel_workgroup_alloc(p->ctx, buft[i],
					       mlirBlockGetFirstOperation(bb),
					       loc, &a);
		if (rc == PB_OK) {
			/* freed at the end of the block (the CPU's malloc;
			   pb-codegen drops it with the allocation) */
			g->buf = mlirOperationGetResult(a, 0);
			MlirOperation d = pb_ir_op_create(loc, "memref.dealloc",
							  1, &g->buf);
			mlirBlockInsertOwnedOperationBefore(
				bb, mlirBlockGetTerminator(bb), d);
		}
	}
	int np = rc == PB_OK ? make_private(p, n, priv) : -1;
	if (np < 0)
		rc = PB_ERR;
	if (rc == PB_OK) {
		int pre = has_part(n, -1), post = has_part(n, 1);
		MlirOperation cpre = {NULL}, cpost = {NULL};
		if (pre) {
			cpre = mlirOperationClone(n->top);
			mlirBlockInsertOwnedOperationBefore(
				mlirOperationGetBlock(n->top), n->top, cpre);
		}
		if (post) {
			cpost = mlirOperationClone(n->top);
			mlirBlockInsertOwnedOperationAfter(
				mlirOperationGetBlock(n->top), n->top, cpost);
		}
		if (pre)
			keep_part(n, cpre, -1, priv);
		if (post)
			keep_part(n, cpost, 1, priv);
		for (int i = 0; i < n->l->np; i++)
			args[nargs++] = n->l->par[i];
		for (int i = 0; i < n->ng; i++) {
			args[nargs++] = n->g[i].src;
			args[nargs++] = n->g[i].buf;
		}
		loop_text(&t, n, elt, srct, buft);
		rc = pb_ir_instantiate(p->ctx, t.data, n->top, nargs, args, loc,
				       &out);
	}
	MlirOperation loop = {NULL};
	for (int i = 0; i < out.n && mlirOperationIsNull(loop); i++)
		if (pb_ir_op_is(out.v[i], "affine.for"))
			loop = out.v[i];
	if (rc == PB_OK && mlirOperationIsNull(loop))
		rc = PB_ERR;
	if (rc == PB_OK) {
		MlirBlock lb = pb_smem_body(loop);
		MlirOperation at = mlirBlockGetTerminator(lb);
		/* one stage: before the last barrier */
		if (n->stages == 1) {
			MlirOperation o = mlirBlockGetFirstOperation(lb);
			while (!mlirOperationEqual(mlirOperationGetNextInBlock(o),
						   at))
				o = mlirOperationGetNextInBlock(o);
			at = o;
		}
		mlirOperationMoveBefore(n->top, at);
		keep_part(n, n->top, 0, priv);
		MlirValue kk = mlirBlockGetArgument(lb, 0);
		rc = strip_loop(p, n, kk);
		for (int i = 0; i < n->ng && rc == PB_OK; i++)
			for (int a = 0; a < n->g[i].n; a++) {
				MlirOperation op = n->l->access[n->g[i].acc[a]].op;
				struct pb_smem_pad *pad = pb_smem_pad_of(n, op, 1);
				MlirOperation nl = stage_load(n, &n->g[i], op, kk);
				if (pad) {
					pb_smem_pad_commit(
						pad, mlirOperationGetResult(nl, 0));
					pad->virt = (MlirOperation){NULL};
				}
			}
	}
	for (int i = 0; i < MAXG; i++) {
		free(elt[i]);
		free(srct[i]);
		free(buft[i]);
	}
	pb_ir_ops_free(&out);
	pb_buf_free(&t);
	return rc;
}

/* Say what was staged for "n" under --remarks and into the report. */
static void tell(struct promote *p, const struct nest *n)
{
	int64_t bytes = 0;
	for (int i = 0; i < n->ng; i++) {
		const struct group *g = &n->g[i];
		struct pb_buf box = {0}, order = {0}, boxj = {0};
		for (int d = 0; d < g->rank; d++) {
			pb_buf_printf(&box, "%s%lld", d ? "x" : "",
				      (long long)g->size[d]);
			pb_buf_printf(&boxj, "%s%lld", d ? ", " : "",
				      (long long)g->size[d]);
			pb_buf_printf(&order, "%s%d", d ? ", " : "", g->perm[d]);
		}
		bytes += g->bytes * n->stages;
		int transposed = 0, guarded = 0;
		for (int d = 0; d < g->rank; d++) {
			transposed |= g->perm[d] != d;
			guarded |= g->guard[d];
		}
		pb_smem_remark(p, n->loop, "staged argument #%d: %s tile per block and "
		       "k-tile (reuse %lld)%s, padding %lld, %lld-bit copies%s, "
		       "%lld-bit reads, bank conflicts %d-way",
		       (int)mlirBlockArgumentGetArgNumber(g->src), box.data,
		       (long long)g->reuse,
		       g->inner == 1 ? ", reduction dimension innermost"
		       : g->inner == 2 ? ", points' dimension innermost"
		       : transposed ? ", reordered" : "",
		       (long long)g->pad, (long long)(g->vec * g->elem * 8),
		       guarded ? ", guarded with zero fill" : "",
		       (long long)(g->rvec * g->elem * 8), g->degree);
		if (p->o->report) {
			pb_buf_printf(&p->report,
				      "%s    {\"argument\": %d, \"box\": [%s], "
				      "\"order\": [%s], \"pad\": %lld, "
				      "\"copy_bits\": %lld, \"read_bits\": "
				      "%lld, \"guarded\": %s, \"reuse\": %lld, "
				      "\"bank_degree\": %d, \"bytes\": %lld}",
				      i ? ",\n" : "",
				      (int)mlirBlockArgumentGetArgNumber(g->src),
				      boxj.data, order.data, (long long)g->pad,
				      (long long)(g->vec * g->elem * 8),
				      (long long)(g->rvec * g->elem * 8),
				      guarded ? "true" : "false",
				      (long long)g->reuse, g->degree,
				      (long long)g->bytes);
		}
		pb_buf_free(&box);
		pb_buf_free(&order);
		pb_buf_free(&boxj);
	}
	/* what the block's shared memory and threads leave of the SM (the
	 * registers are ptxas's to tell: pb-prof --static) */
	struct pb_kernel_resources res = {n->threads, 0,
					  pb_kernel_workgroup_bytes(n->block)};
	struct pb_kernel_occupancy occ;
	pb_kernel_occupancy(p->t, &res, pb_kernel_band_points(&n->blk), &occ);
	pb_smem_remark(p, n->loop, "%d stage%s of k-tile %lld (%s copies), %lld bytes "
	       "of shared memory, %lld threads, at most %lld blocks per SM",
	       n->stages, n->stages > 1 ? "s" : "", (long long)n->kt,
	       n->stages > 1 ? "asynchronous" : "synchronous", (long long)bytes,
	       (long long)n->threads, (long long)occ.blocks_per_sm);
	if (p->o->report) {
		MlirStringRef name = mlirStringAttrGetValue(
			pb_ir_attr(p->func, "sym_name"));
		/* threads, shared_bytes (the block's), blocks_per_sm,
		 * occupancy, waves: as pb-tile's report and pb-prof --static
		 * write them (lib/kernel/summary.c) */
		struct pb_kernel_summary sum;
		pb_kernel_summary_init(&sum);
		sum.grid = pb_kernel_band_points(&n->blk);
		sum.res = res;
		sum.res.regs = -1;
		pb_kernel_summary_occupancy(p->t, &sum);
		json_t *o = json_object();
		pb_kernel_summary_json(p->t, &sum, o);
		char *fields = json_dumps(o, JSON_REAL_PRECISION(6));
		json_decref(o);
		size_t len = fields ? strlen(fields) : 0;
		pb_buf_printf(&p->report,
			      "\n  ], \"kernel\": \"%.*s\", \"k_tile\": %lld, "
			      "\"stages\": %d, \"smem_bytes\": %lld%s%.*s}",
			      (int)name.length, name.data, (long long)n->kt,
			      n->stages, (long long)bytes, len > 2 ? ", " : "",
			      len > 2 ? (int)len - 2 : 0,
			      len > 2 ? fields + 1 : "");
		free(fields);
	}
}

/* Stage what is worth staging in mapped nest "top" of block loop
 * "block". */
static int promote_nest(struct promote *p, MlirOperation block,
			MlirOperation top)
{
	struct nest n;
	struct pb_poly_dim dim[PB_POLY_LOCAL_MAXDIM];
	const char *why = NULL;
	struct pb_ir_ops busy = {0};
	memset(&n, 0, sizeof(n));
	n.block = block;
	n.top = top;
	pb_kernel_band_add(block, &n.blk);
	/* pb-tile's choice of k-tile and slots, priced by its cost model */
	MlirAttribute want = pb_ir_attr(block, PB_ATTR_SMEM);
	if (!mlirAttributeIsNull(want) && mlirAttributeIsADenseI64Array(want)) {
		intptr_t nw = mlirDenseArrayGetNumElements(want);
		n.want_kt = nw ? mlirDenseI64ArrayGetElement(want, 0) : -1;
		n.want_stages = nw > 1 ? (int)mlirDenseI64ArrayGetElement(want, 1)
				       : 0;
		if (n.want_stages < 0 || n.want_stages > 4)
			n.want_stages = 0;
	}
	if (n.want_kt < 0 && !p->o->k_tile && !p->o->stages)
		why = "pb-tile's sizes say not to stage this nest (smem[])";
	pb_ir_collect(top, "gpu.barrier", &busy);
	pb_ir_collect(top, "memref.alloc", &busy);
	if (!why && busy.n)
		why = "the nest already has barriers or shared memory";
	pb_ir_ops_free(&busy);
	if (!why && !pb_smem_find_chain(top, &n))
		why = "its mapped loops are not warp loops around one thread "
		      "loop";
	if (!why && n.chain.n + 1 > PB_POLY_LOCAL_MAXDIM)
		why = "too many mapped dimensions";
	if (!why && !pb_smem_find_loop(p, &n, &why)) {
	}
	if (why) {
		pb_smem_remark(p, top, "not staged: %s", why);
		return PB_OK;
	}
	for (int k = 0; k < n.chain.n; k++) {
		dim[k].iv = n.chain.iv[k];
		dim[k].lb = n.chain.lb[k];
		dim[k].step = n.chain.step[k];
		dim[k].trip = n.chain.extent[k];
	}
	dim[n.chain.n].iv = mlirBlockGetArgument(pb_smem_body(n.loop), 0);
	dim[n.chain.n].lb = 0;
	dim[n.chain.n].step = 1;
	dim[n.chain.n].trip = n.trip;
	n.npad = pb_smem_pads_find(p->ctx, n.loop, &n.pads);
	n.l = pb_poly_local_build(p->ctx->isl, top, n.chain.n + 1, dim, NULL,
				  0, PB_POLY_LOCAL_INNER_BOUNDS);
	int rc = PB_OK;
	if (!n.l) {
		pb_smem_remark(p, top, "not staged: no access model of the nest");
		goto done;
	}
	for (int i = 0; i < n.l->np; i++)
		if (!mlirTypeIsAIndex(mlirValueGetType(n.l->par[i]))) {
			pb_smem_remark(p, top, "not staged: a subscript depends on a "
			       "value that is not an index");
			goto done;
		}
	pb_smem_collect_groups(p, &n);
	if (!n.ng)
		pb_smem_remark(p, n.loop, "not staged: no affine read of a buffer the "
		       "kernel never writes");
	/* when the tiles do not fit together, leave out the largest */
	while (n.ng > 1 && !pb_smem_fits(p, &n))
		pb_smem_drop_largest(p, &n);
	if (!n.ng)
		;
	else if (pb_smem_plan(p, &n)) {
		if (p->o->report)
			pb_buf_printf(&p->report, "%s  {\"staged\": [\n",
				      p->nreport++ ? ",\n" : "");
		n.unroll = pb_smem_unrollable(&n);
		rc = rewrite(p, &n);
		if (rc == PB_OK)
			tell(p, &n);
	}
done:
	for (int i = 0; i < n.npad; i++)
		if (!mlirOperationIsNull(n.pads[i].virt))
			pb_smem_pad_drop(&n.pads[i]);
	free(n.pads);
	pb_smem_box_memo_free(n.memo);
	pb_poly_local_free(n.l);
	return rc;
}

/* The mapped loops of block loop "block" that no other mapped loop
 * below it encloses. */
static void top_nests(MlirOperation block, struct pb_ir_ops *l)
{
	struct pb_ir_ops all = {0};
	pb_kernel_mapped_loops(block, &all);
	for (int i = 0; i < all.n; i++) {
		int nested = 0;
		for (MlirOperation q = mlirOperationGetParentOperation(all.v[i]);
		     !mlirOperationEqual(q, block);
		     q = mlirOperationGetParentOperation(q))
			nested |= pb_contract_is_mapped(q);
		if (!nested)
			pb_ir_ops_push(l, all.v[i]);
	}
	pb_ir_ops_free(&all);
}

int pb_smem_promote(struct pb_ctx *ctx, MlirModule m,
		    const struct pb_smem_opts *o)
{
	struct promote p = {ctx, o, pb_target_of(ctx), {NULL}, 0, {0}, 0};
	struct pb_ir_ops funcs = {0};
	int rc = PB_OK;
	if (!p.t)
		return PB_ERR;
	p.async = pb_kernel_async(p.t);
	pb_ir_block_ops(mlirModuleGetBody(m), &funcs);
	for (int f = 0; f < funcs.n && rc == PB_OK; f++) {
		struct pb_ir_ops loops = {0};
		if (!pb_ir_op_is(funcs.v[f], "func.func") ||
		    !pb_contract_is_kernel(funcs.v[f]))
			continue;
		p.func = funcs.v[f];
		pb_ir_collect(p.func, "affine.parallel", &loops);
		for (int i = 0; i < loops.n && rc == PB_OK; i++) {
			struct pb_ir_ops tops = {0};
			if (pb_contract_map_of(loops.v[i]) != PB_MAP_BLOCK)
				continue;
			top_nests(loops.v[i], &tops);
			for (int j = 0; j < tops.n && rc == PB_OK; j++)
				rc = promote_nest(&p, loops.v[i], tops.v[j]);
			/* pb-tile's k-tile and slots are consumed here */
			mlirOperationRemoveAttributeByName(
				loops.v[i],
				mlirStringRefCreateFromCString(PB_ATTR_SMEM));
			pb_ir_ops_free(&tops);
		}
		pb_ir_ops_free(&loops);
	}
	pb_ir_ops_free(&funcs);
	if (rc == PB_OK && o->report) {
		struct pb_buf r = {0};
		pb_buf_printf(&r, "{\"arch\": \"%s\", \"kernels\": [\n%s\n]}\n",
			      p.t->arch, p.report.data ? p.report.data : "");
		if (pb_write_file(o->report, r.data, r.len))
			rc = pb_error_in(ctx, o->report, "cannot write the "
					 "report: %s", strerror(errno));
		pb_buf_free(&r);
	}
	pb_buf_free(&p.report);
	return rc;
}
