/* The memory plan of pb-run's CPU path: the intermediate buffers of @main
 * (its top-level memref.alloc) packed by liveness into one arena, as
 * pb-codegen packs the scratch buffers of a launch plan (lib/plan/arena.c,
 * the same packer), so that the CPU run checks by numbers that reusing
 * memory changes no result.
 *
 * A buffer lives from the first to the last top-level operation of @main
 * that uses it, directly or through views (subview, reshapes, casts). Each
 * packed allocation becomes a memref.view of the arena at its offset:
 *
 *   %a = memref.alloc() : memref<8x16xf32>        %arena = memref.alloc()
 *   call @k0(%x, %a)                                {alignment = 256}
 *   %b = memref.alloc() : memref<8x16xf32>    ->      : memref<512xi8>
 *   call @k1(%a, %b)                               %a = memref.view %arena[%c0][]
 *   %c = memref.alloc() : memref<8x16xf32>         ...
 *   call @k2(%b, %c)                               %c = memref.view %arena[%c0][]
 *
 * (%a and %c share bytes: %a is dead after @k1.) */
#include <stdlib.h>
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "ir/ir.h"
#include "plan/plan.h"
#include "runtime/runtime.h"

/* The operations that make a view of their first operand. */
static const char *const views[] = {
	"memref.subview", "memref.collapse_shape", "memref.expand_shape",
	"memref.reinterpret_cast", "memref.cast", "memref.view",
	"memref.assume_alignment", NULL};

static int is_view(MlirOperation op)
{
	for (int i = 0; views[i]; i++)
		if (pb_ir_op_is(op, views[i]))
			return 1;
	return 0;
}

/* Bytes per element of memref element type "t" as the CPU lowering lays
 * it out, or 0 for a type the arena does not take. */
static int64_t elem_size(MlirType t)
{
	if (mlirTypeIsAF32(t))
		return 4;
	if (mlirTypeIsAF16(t) || mlirTypeIsABF16(t))
		return 2;
	if (mlirTypeIsAF64(t) || mlirTypeIsAIndex(t))
		return 8;
	if (mlirTypeIsAInteger(t)) {
		unsigned w = mlirIntegerTypeGetWidth(t);
		return w == 1 || w == 8 ? 1 : w == 16 ? 2 : w == 32 ? 4
					: w == 64 ? 8 : 0;
	}
	return 0;
}

/* The bytes of the result of allocation "op" when the arena can hold it
 * (static shape, identity layout, default memory space, known element
 * size), else -1. */
static int64_t alloc_bytes(MlirOperation op)
{
	MlirType t = mlirValueGetType(mlirOperationGetResult(op, 0));
	if (mlirOperationGetNumOperands(op) || !mlirTypeIsAMemRef(t) ||
	    !mlirShapedTypeHasStaticShape(t) ||
	    !mlirAttributeIsNull(mlirMemRefTypeGetMemorySpace(t)) ||
	    !mlirAffineMapIsIdentity(mlirMemRefTypeGetAffineMap(t)))
		return -1;
	int64_t n = elem_size(mlirShapedTypeGetElementType(t));
	for (intptr_t d = 0; n > 0 && d < mlirShapedTypeGetRank(t); d++)
		if (__builtin_mul_overflow(n, mlirShapedTypeGetDimSize(t, d),
					   &n))
			return -1;
	return n > 0 ? n : -1;
}

/* The top-level operations of @main by address, for their positions. */
struct pos {
	const void *op;
	int pos;
};

static int by_op(const void *x, const void *y)
{
	const struct pos *a = x, *b = y;
	return a->op < b->op ? -1 : a->op > b->op;
}

/* The position of top-level operation "op" in the "n" sorted "index". */
static int position(const struct pos *index, int n, MlirOperation op)
{
	struct pos key = {op.ptr, 0};
	const struct pos *p = bsearch(&key, index, n, sizeof(key), by_op);
	return p ? p->pos : -1;
}

/* One allocation of @main and what its live range needs. */
struct cand {
	MlirOperation alloc;
	struct pb_ir_ops deallocs;
};

/* Find the live range of the allocation of "c" over the "nops" top-level
 * operations of "body" ("index": their positions) into "it"; 0, or -1
 * when a use lets the buffer escape what the range can see (a memref
 * result of an operation other than a view, a yield or branch). */
static int live_range(MlirBlock body, const struct pos *index, int nops,
		      struct cand *c, struct pb_arena_item *it)
{
	MlirValue *work = NULL;
	int nw = 0, cap = 0, rc = 0;
	MlirValue v0 = mlirOperationGetResult(c->alloc, 0);
	work = pb_xrealloc(work, cap = 16, sizeof(*work));
	work[nw++] = v0;
	it->first = it->last = -1;
	while (nw && !rc) {
		MlirValue v = work[--nw];
		for (MlirOpOperand u = mlirValueGetFirstUse(v);
		     !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u)) {
			MlirOperation op = mlirOpOperandGetOwner(u);
			if (is_view(op) && mlirOpOperandGetOperandNumber(u) == 0 &&
			    mlirOperationGetNumResults(op)) {
				if (nw == cap)
					work = pb_xrealloc(work, cap *= 2,
							   sizeof(*work));
				work[nw++] = mlirOperationGetResult(op, 0);
				continue;
			}
			if (pb_ir_op_is(op, "memref.dealloc")) {
				if (mlirValueEqual(v, v0))
					pb_ir_ops_push(&c->deallocs, op);
				else
					rc = -1;
				continue;
			}
			MlirStringRef n = pb_ir_op_short_name(op);
			int escapes = mlirOperationGetNumSuccessors(op) > 0 ||
				      (n.length == 5 && !memcmp(n.data, "yield", 5)) ||
				      pb_ir_op_is(op, "func.return");
			for (intptr_t r = 0; r < mlirOperationGetNumResults(op); r++)
				escapes |= mlirTypeIsAMemRef(mlirValueGetType(
					mlirOperationGetResult(op, r)));
			MlirOperation top = pb_ir_ancestor_in(op, body);
			if (escapes || mlirOperationIsNull(top)) {
				rc = -1;
				break;
			}
			int pos = position(index, nops, top);
			if (it->first < 0 || pos < it->first)
				it->first = pos;
			if (pos > it->last)
				it->last = pos;
		}
	}
	free(work);
	return rc;
}

/* A detached "memref.alloc" of "bytes" i8, 256-byte aligned, at "loc". */
static MlirOperation arena_alloc(MlirContext mctx, MlirLocation loc,
				 int64_t bytes)
{
	MlirType t = mlirMemRefTypeContiguousGet(mlirIntegerTypeGet(mctx, 8), 1,
						 &bytes, mlirAttributeGetNull());
	int32_t seg[2] = {0, 0};
	MlirNamedAttribute a[2] = {
		mlirNamedAttributeGet(mlirIdentifierGet(mctx, pb_str("alignment")),
				      mlirIntegerAttrGet(mlirIntegerTypeGet(mctx, 64),
							 PB_PLAN_ALIGN)),
		mlirNamedAttributeGet(
			mlirIdentifierGet(mctx, pb_str("operandSegmentSizes")),
			mlirDenseI32ArrayGet(mctx, 2, seg)),
	};
	MlirOperationState st = mlirOperationStateGet(pb_str("memref.alloc"),
						      loc);
	mlirOperationStateAddResults(&st, 1, &t);
	mlirOperationStateAddAttributes(&st, 2, a);
	return mlirOperationCreate(&st);
}

/* Replace allocation "alloc" by a view of "arena" at byte "offset". */
static void carve(MlirContext mctx, MlirOperation alloc, MlirValue arena,
		  int64_t offset)
{
	MlirLocation loc = mlirOperationGetLocation(alloc);
	MlirBlock b = mlirOperationGetBlock(alloc);
	MlirValue old = mlirOperationGetResult(alloc, 0);
	MlirType t = mlirValueGetType(old);
	MlirOperation c = pb_ir_int_constant(mlirIndexTypeGet(mctx), loc, offset);
	mlirBlockInsertOwnedOperationBefore(b, alloc, c);
	MlirValue ops[2] = {arena, mlirOperationGetResult(c, 0)};
	MlirOperationState vs = mlirOperationStateGet(pb_str("memref.view"), loc);
	mlirOperationStateAddOperands(&vs, 2, ops);
	mlirOperationStateAddResults(&vs, 1, &t);
	MlirOperation v = mlirOperationCreate(&vs);
	mlirBlockInsertOwnedOperationBefore(b, alloc, v);
	mlirValueReplaceAllUsesOfWith(old, mlirOperationGetResult(v, 0));
	mlirOperationDestroy(alloc);
}

int pb_runtime_cpu_arena(struct pb_ctx *ctx, MlirModule m, int apply,
			 struct pb_plan_memory *mem)
{
	MlirOperation main_fn = pb_ir_lookup_func(m, "main");
	memset(mem, 0, sizeof(*mem));
	mem->arena = -1;
	if (mlirOperationIsNull(main_fn))
		return PB_OK; /* the run reports it */
	MlirBlock body = pb_ir_entry_block(main_fn);
	struct pb_ir_ops ops = {0};
	pb_ir_block_ops(body, &ops);
	struct pos *index = calloc(ops.n + 1, sizeof(*index));
	struct cand *c = calloc(ops.n + 1, sizeof(*c));
	struct pb_arena_item *it = calloc(ops.n + 1, sizeof(*it));
	int64_t *off = calloc(ops.n + 1, sizeof(*off));
	int n = 0;
	if (!index || !c || !it || !off)
		abort();
	for (int i = 0; i < ops.n; i++)
		index[i] = (struct pos){ops.v[i].ptr, i};
	qsort(index, ops.n, sizeof(*index), by_op);
	for (int i = 0; i < ops.n; i++) {
		if (!pb_ir_op_is(ops.v[i], "memref.alloc"))
			continue;
		int64_t bytes = alloc_bytes(ops.v[i]);
		if (bytes < 0)
			continue;
		mem->intermediates += bytes;
		c[n] = (struct cand){ops.v[i], {0}};
		it[n] = (struct pb_arena_item){n, bytes, -1, -1};
		if (live_range(body, index, ops.n, &c[n], &it[n]) ||
		    it[n].first < 0) {
			mem->peak += bytes; /* kept whole */
			pb_ir_ops_free(&c[n].deallocs);
			continue;
		}
		n++;
	}
	if (n && !apply)
		for (int i = 0; i < n; i++)
			mem->peak += it[i].bytes;
	if (n && apply) {
		mem->arena = pb_arena_pack(n, it, PB_PLAN_ALIGN, off);
		mem->peak += mem->arena;
		MlirLocation loc = mlirOperationGetLocation(main_fn);
		MlirOperation a = arena_alloc(ctx->mlir, loc, mem->arena);
		mlirBlockInsertOwnedOperation(body, 0, a);
		MlirValue arena = mlirOperationGetResult(a, 0);
		for (int i = 0; i < n; i++) {
			for (int d = 0; d < c[i].deallocs.n; d++)
				mlirOperationDestroy(c[i].deallocs.v[d]);
			carve(ctx->mlir, c[i].alloc, arena, off[i]);
		}
		/* free it where @main returns, as pb-prof runs @main often */
		MlirOperation ret = mlirBlockGetTerminator(body);
		if (!mlirOperationIsNull(ret))
			mlirBlockInsertOwnedOperationBefore(
				body, ret, pb_ir_op_create(loc, "memref.dealloc",
							   1, &arena));
	}
	/* the most bytes live at one operation: a sweep over the starts
	 * and ends ("off" reused for the changes) */
	memset(off, 0, sizeof(*off) * (ops.n + 1));
	for (int i = 0; i < n; i++) {
		off[it[i].first] += it[i].bytes;
		off[it[i].last + 1] -= it[i].bytes;
	}
	int64_t live = 0;
	for (int p = 0; p < ops.n; p++) {
		live += off[p];
		mem->live_max = live > mem->live_max ? live : mem->live_max;
	}
	for (int i = 0; i < n; i++)
		pb_ir_ops_free(&c[i].deallocs);
	free(index);
	free(c);
	free(it);
	free(off);
	pb_ir_ops_free(&ops);
	return PB_OK;
}
