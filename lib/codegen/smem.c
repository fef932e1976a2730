/* What pb-smem's output asks of the GPU mapping (docs/pb-smem.md), done
 * on a block-mapped nest before its loops become thread ids:
 *
 * - private arrays (lib/kernel/private.c): a block-level memref.alloca
 *   whose every access indexes it by the normalized counters of the warp
 *   and thread loops around it first becomes a buffer of the trailing
 *   dimensions only, one per thread (registers, once the accesses are
 *   constant after unrolling);
 * - asynchronous copies: in a thread loop marked "pb.async", a value
 *   loaded from global memory (affine.load or affine.vector_load) and
 *   stored unchanged into workgroup memory becomes one cp.async
 *   (nvgpu.device_async_copy of 1 to 4 elements, 4 to 16 bytes; a copy
 *   of another size, such as one f16 or bf16 element, stays a
 *   synchronous load and store, which the wait and barrier that follow
 *   order as well); the loop
 *   is followed by a commit of the group (cp.async.commit_group); a
 *   gpu.barrier with "pb.wait" = N first waits until at most N groups of
 *   this thread are in flight (cp.async.wait_group N).
 *
 * - unrolling: an affine.for marked "pb.unroll" (the k-tile loop of a
 *   staged nest) is unrolled fully, so that the tile's subscripts become
 *   constant offsets.
 *
 * On the CPU the same IR runs as written: the copies are synchronous and
 * the waits have nothing to wait for. */
#include <string.h>

#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "codegen/internal.h"
#include "ir/contract.h"
#include "kernel/kernel.h"
#include "poly/poly.h"

/* The memref.alloca ops of "root" outside its warp and thread loops. */
static void block_allocas(MlirOperation root, struct pb_ir_ops *l)
{
	struct pb_ir_ops all = {0};
	pb_ir_collect(root, "memref.alloca", &all);
	for (int i = 0; i < all.n; i++) {
		int inside = 0;
		for (MlirOperation p = mlirOperationGetParentOperation(all.v[i]);
		     !mlirOperationIsNull(p) && !mlirOperationEqual(p, root);
		     p = mlirOperationGetParentOperation(p))
			inside |= pb_contract_is_mapped(p);
		if (!inside)
			pb_ir_ops_push(l, all.v[i]);
	}
	pb_ir_ops_free(&all);
}

/* Is "alloca" (in block nest "root") a private array: every use an access
 * by the normalized counters of the same mapped dimensions, which are the
 * leading dimensions of its type? Their number into "*n". */
static int is_private(MlirOperation alloca, MlirOperation root, int *n)
{
	MlirValue v = mlirOperationGetResult(alloca, 0);
	MlirType t = mlirValueGetType(v);
	int uses = 0;
	*n = -1;
	if (mlirOperationGetNumOperands(alloca) || !mlirShapedTypeHasStaticShape(t))
		return 0;
	for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u);
	     u = mlirOpOperandGetNextUse(u)) {
		MlirOperation op = mlirOpOperandGetOwner(u);
		struct pb_kernel_band b;
		int mem = pb_ir_op_is(op, "affine.store") ? 1 : 0;
		if (mlirOpOperandGetOperandNumber(u) != (unsigned)mem ||
		    pb_kernel_private_loops(op, root, &b) <= 0 ||
		    (*n >= 0 && b.n != *n) || b.n > mlirShapedTypeGetRank(t) ||
		    !pb_kernel_private_access(op, &b))
			return 0;
		for (int d = 0; d < b.n; d++)
			if (mlirShapedTypeGetDimSize(t, d) != b.extent[d])
				return 0;
		*n = b.n;
		uses++;
	}
	return uses > 0;
}

/* Replace private array "alloca" of "root", whose first "n" dimensions
 * are its threads', by a buffer of the other dimensions. */
static int shrink(struct pb_ctx *ctx, MlirOperation alloca, MlirOperation root,
		  int n)
{
	MlirValue v = mlirOperationGetResult(alloca, 0);
	MlirType t = mlirValueGetType(v);
	int64_t shape[PB_KERNEL_MAXD + 16];
	int rank = (int)mlirShapedTypeGetRank(t);
	struct pb_ir_ops out = {0}, uses = {0};
	struct pb_buf text = {0};
	for (int d = n; d < rank; d++)
		shape[d - n] = mlirShapedTypeGetDimSize(t, d);
	MlirType nt = mlirMemRefTypeContiguousGet(
		mlirShapedTypeGetElementType(t), rank - n, shape,
		mlirAttributeGetNull());
	pb_buf_puts(&text, "func.func @t() {\n  %a = memref.alloca() : ");
	pb_codegen_type_str(nt, &text);
	pb_buf_puts(&text, "\n  return\n}\n");
	int rc = pb_ir_instantiate(ctx, text.data, alloca, 0, NULL,
				   mlirOperationGetLocation(alloca), &out);
	pb_buf_free(&text);
	if (rc) {
		pb_ir_ops_free(&out);
		return rc;
	}
	MlirValue nv = mlirOperationGetResult(out.v[0], 0);
	pb_ir_ops_free(&out);
	for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u);
	     u = mlirOpOperandGetNextUse(u))
		pb_ir_ops_push(&uses, mlirOpOperandGetOwner(u));
	for (int i = 0; i < uses.n && rc == PB_OK; i++) {
		struct pb_kernel_band b;
		pb_kernel_private_loops(uses.v[i], root, &b);
		if (mlirOperationIsNull(pb_kernel_private_rewrite(uses.v[i], nv,
								  &b, 1)))
			rc = PB_ERR;
	}
	pb_ir_ops_free(&uses);
	if (rc == PB_OK)
		mlirOperationDestroy(alloca);
	return rc;
}

int pb_codegen_private(struct pb_ctx *ctx, MlirOperation root)
{
	struct pb_ir_ops l = {0};
	int rc = PB_OK;
	block_allocas(root, &l);
	for (int i = 0; i < l.n && rc == PB_OK; i++) {
		int n;
		if (is_private(l.v[i], root, &n))
			rc = shrink(ctx, l.v[i], root, n);
	}
	pb_ir_ops_free(&l);
	return rc;
}

/* Create before "op" one affine.apply per result of the map of the
 * affine load or store "op" (whose map operands start at "first") into
 * "idx"; their number. */
static int indices(MlirOperation op, int first, MlirValue *idx, int max)
{
	MlirAffineMap map = mlirAffineMapAttrGetValue(pb_ir_attr(op, "map"));
	int nr = (int)mlirAffineMapGetNumResults(map);
	int nin = (int)mlirOperationGetNumOperands(op) - first;
	MlirValue ops[64];
	MlirType index = mlirIndexTypeGet(mlirOperationGetContext(op));
	if (nr > max || nin > 64)
		return -1;
	for (int i = 0; i < nin; i++)
		ops[i] = mlirOperationGetOperand(op, first + i);
	for (int r = 0; r < nr; r++) {
		intptr_t pos = r;
		MlirAffineMap sub = mlirAffineMapGetSubMap(map, 1, &pos);
		MlirOperationState st = mlirOperationStateGet(
			mlirStringRefCreateFromCString("affine.apply"),
			mlirOperationGetLocation(op));
		mlirOperationStateAddOperands(&st, nin, ops);
		MlirNamedAttribute na = mlirNamedAttributeGet(
			mlirIdentifierGet(mlirOperationGetContext(op),
					  mlirStringRefCreateFromCString("map")),
			mlirAffineMapAttrGet(sub));
		mlirOperationStateAddAttributes(&st, 1, &na);
		mlirOperationStateAddResults(&st, 1, &index);
		MlirOperation a = mlirOperationCreate(&st);
		mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(op), op,
						    a);
		idx[r] = mlirOperationGetResult(a, 0);
	}
	return nr;
}

/* The number of elements that affine.vector_load or affine.load "op"
 * reads. */
static int64_t elements(MlirOperation op)
{
	MlirType t = mlirValueGetType(mlirOperationGetResult(op, 0));
	int64_t n = 1;
	if (mlirTypeIsAVector(t))
		for (intptr_t d = 0; d < mlirShapedTypeGetRank(t); d++)
			n *= mlirShapedTypeGetDimSize(t, d);
	return n;
}

/* The number of bytes that affine.vector_load or affine.load "op" reads,
 * or 0 when its element type has no whole-byte width. */
static int64_t copy_bytes(MlirOperation op)
{
	MlirType t = mlirShapedTypeGetElementType(
		mlirValueGetType(mlirOperationGetOperand(op, 0)));
	unsigned bits = mlirTypeIsAFloat(t) ? mlirFloatTypeGetWidth(t)
			: mlirTypeIsAInteger(t) ? mlirIntegerTypeGetWidth(t) : 0;
	return bits % 8 ? 0 : elements(op) * (bits / 8);
}

/* Append to "t" the swizzled last index %sw of a store to a wgmma ring
 * (lib/ir/contract.h) of rows of "w" bytes, elements of "eb" bytes, at
 * indices %j0 .. %j<no-1>: 16-byte chunk c of row r is stored at chunk
 * c xor ((r W / 128) mod (W / 16)). */
static void swizzle_text(struct pb_buf *t, int64_t w, int64_t eb, int no)
{
	pb_buf_printf(t, "  %%x = affine.apply affine_map<(r) -> (((r "
		      "* %lld) floordiv 128) mod %lld * %lld)>(%%j%d)\n"
		      "  %%sw = arith.xori %%j%d, %%x : index\n",
		      (long long)w, (long long)(w / 16),
		      (long long)(16 / eb), no - 2, no - 1);
}

/* Replace the copy "store" (of the value of "load", global to
 * workgroup memory) by a cp.async; with "guard" (not null), the
 * affine.if around them whose else branch stores zeros instead, by one
 * that copies nothing and fills the chunk with zeros (src-size 0, zfill)
 * where the guard's condition is false. */
static int async_copy(struct pb_ctx *ctx, MlirOperation load,
		      MlirOperation store, MlirOperation guard)
{
	MlirValue args[2 + 2 * 16 + 16];
	MlirValue src = mlirOperationGetOperand(load, 0);
	MlirValue dst = mlirOperationGetOperand(store, 1);
	int ni = indices(load, 1, args + 1, 16);
	int no = ni < 0 ? -1 : indices(store, 2, args + 2 + ni, 16);
	int ng = mlirOperationIsNull(guard)
			 ? 0 : (int)mlirOperationGetNumOperands(guard);
	struct pb_buf t = {0};
	struct pb_ir_ops out = {0};
	if (no < 0 || ng > 16)
		return PB_ERR;
	args[0] = src;
	args[1 + ni] = dst;
	for (int i = 0; i < ng; i++)
		args[2 + ni + no + i] = mlirOperationGetOperand(guard, i);
	pb_buf_puts(&t, "func.func @t(%s: ");
	pb_codegen_type_str(mlirValueGetType(src), &t);
	for (int i = 0; i < ni; i++)
		pb_buf_printf(&t, ", %%i%d: index", i);
	pb_buf_puts(&t, ", %d: ");
	pb_codegen_type_str(mlirValueGetType(dst), &t);
	for (int i = 0; i < no; i++)
		pb_buf_printf(&t, ", %%j%d: index", i);
	for (int i = 0; i < ng; i++)
		pb_buf_printf(&t, ", %%g%d: index", i);
	pb_buf_puts(&t, ") {\n");
	if (ng) {
		/* the guard's condition as a value: the chunk's bytes to
		   read, the whole chunk or none */
		pb_buf_puts(&t, "  %ok = affine.if ");
		mlirAttributePrint(pb_ir_attr(guard, "condition"),
				   pb_buf_mlir_callback, &t);
		pb_buf_puts(&t, "(");
		for (int i = 0; i < ng; i++)
			pb_buf_printf(&t, "%s%%g%d", i ? ", " : "", i);
		pb_buf_printf(&t, ") -> i1 {\n"
			      "    %%y = arith.constant true\n"
			      "    affine.yield %%y : i1\n  } else {\n"
			      "    %%n = arith.constant false\n"
			      "    affine.yield %%n : i1\n  }\n"
			      "  %%all = arith.constant %lld : index\n"
			      "  %%none = arith.constant 0 : index\n"
			      "  %%ne = arith.select %%ok, %%all, %%none : index\n",
			      (long long)elements(load));
	}
	MlirAttribute sw = pb_ir_attr(store, PB_ATTR_SWIZZLE);
	if (!mlirAttributeIsNull(sw) && no >= 2) {
		/* a wgmma ring */
		swizzle_text(&t, mlirIntegerAttrGetValueInt(sw),
			     copy_bytes(load) / elements(load), no);
	}
	pb_buf_puts(&t, "  %c = nvgpu.device_async_copy %s[");
	for (int i = 0; i < ni; i++)
		pb_buf_printf(&t, "%s%%i%d", i ? ", " : "", i);
	pb_buf_puts(&t, "], %d[");
	for (int i = 0; i < no; i++)
		if (!mlirAttributeIsNull(sw) && no >= 2 && i == no - 1)
			pb_buf_puts(&t, ", %sw"); /* the last index swizzled */
		else
			pb_buf_printf(&t, "%s%%j%d", i ? ", " : "", i);
	/* 16-byte copies bypass L1 (cp.async.cg): the tile is reused from
	   shared memory, not from L1 */
	pb_buf_printf(&t, "], %lld%s%s : ", (long long)elements(load),
		      ng ? ", %ne" : "",
		      copy_bytes(load) == 16 ? " {bypassL1}" : "");
	pb_codegen_type_str(mlirValueGetType(src), &t);
	pb_buf_puts(&t, " to ");
	pb_codegen_type_str(mlirValueGetType(dst), &t);
	pb_buf_puts(&t, "\n  return\n}\n");
	int rc = pb_ir_instantiate(ctx, t.data, store, 2 + ni + no + ng, args,
				   mlirOperationGetLocation(store), &out);
	pb_buf_free(&t);
	pb_ir_ops_free(&out);
	if (rc)
		return rc;
	mlirOperationDestroy(store);
	if (mlirOpOperandIsNull(
		    mlirValueGetFirstUse(mlirOperationGetResult(load, 0))))
		mlirOperationDestroy(load);
	if (ng)
		mlirOperationDestroy(guard);
	return PB_OK;
}

/* Is "op" pb-smem's guarded copy of a chunk (copy_text): an affine.if
 * whose then branch stores to workgroup memory what it loads from
 * global memory, 4, 8 or 16 bytes, and whose else branch stores a
 * constant (zeros) at the same place? The load and the store into
 * "load", "store". */
static int guarded_copy(MlirOperation op, MlirOperation *load,
			MlirOperation *store)
{
	if (!pb_ir_op_is(op, "affine.if") || mlirOperationGetNumResults(op) ||
	    mlirOperationGetNumRegions(op) != 2)
		return 0;
	MlirBlock tb = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
	MlirBlock eb = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 1));
	if (mlirBlockIsNull(tb) || mlirBlockIsNull(eb))
		return 0;
	MlirOperation l = mlirBlockGetFirstOperation(tb);
	MlirOperation s = mlirOperationGetNextInBlock(l);
	MlirOperation zs = mlirBlockGetFirstOperation(eb);
	/* the zeros' constant, in the branch or hoisted before it */
	if (pb_ir_op_is(zs, "arith.constant"))
		zs = mlirOperationGetNextInBlock(zs);
	if (mlirOperationIsNull(s) || mlirOperationIsNull(zs) ||
	    !pb_ir_op_is(l, "affine.vector_load") ||
	    !pb_ir_op_is(s, "affine.vector_store") ||
	    !pb_ir_op_is(zs, "affine.vector_store") ||
	    !pb_ir_op_is(mlirOperationGetNextInBlock(s), "affine.yield") ||
	    !pb_ir_op_is(mlirOperationGetNextInBlock(zs), "affine.yield") ||
	    !mlirValueEqual(mlirOperationGetOperand(s, 0),
			    mlirOperationGetResult(l, 0)) ||
	    !mlirValueIsAOpResult(mlirOperationGetOperand(zs, 0)) ||
	    !pb_ir_op_is(mlirOpResultGetOwner(mlirOperationGetOperand(zs, 0)),
			 "arith.constant") ||
	    !pb_kernel_is_workgroup(mlirValueGetType(
		    mlirOperationGetOperand(s, 1))) ||
	    pb_kernel_is_workgroup(mlirValueGetType(
		    mlirOperationGetOperand(l, 0))))
		return 0;
	/* zeros, which the copy's zero fill writes */
	MlirAttribute zv = pb_ir_attr(mlirOpResultGetOwner(
					      mlirOperationGetOperand(zs, 0)),
				      "value");
	if (!mlirAttributeIsADenseElements(zv) ||
	    !mlirDenseElementsAttrIsSplat(zv) ||
	    !mlirAttributeIsAFloat(mlirDenseElementsAttrGetSplatValue(zv)) ||
	    mlirFloatAttrGetValueDouble(
		    mlirDenseElementsAttrGetSplatValue(zv)) != 0.0)
		return 0;
	/* the same place: the same memref, map and operands */
	intptr_t n = mlirOperationGetNumOperands(s);
	if (mlirOperationGetNumOperands(zs) != n ||
	    !mlirAttributeEqual(pb_ir_attr(s, "map"), pb_ir_attr(zs, "map")))
		return 0;
	for (intptr_t i = 1; i < n; i++)
		if (!mlirValueEqual(mlirOperationGetOperand(s, i),
				    mlirOperationGetOperand(zs, i)))
			return 0;
	int64_t bytes = copy_bytes(l);
	if (bytes != 4 && bytes != 8 && bytes != 16)
		return 0;
	*load = l;
	*store = s;
	return 1;
}

/* Replace "store" of a value computed in the copy loop (the zeros of a
 * guarded copy past its buffer's end) to a wgmma ring (pb.swizzle) by a
 * store at the swizzled address the chunk it stands for would have
 * (async_copy). */
static int swizzled_store(struct pb_ctx *ctx, MlirOperation store)
{
	MlirValue args[2 + 16];
	MlirValue v = mlirOperationGetOperand(store, 0);
	MlirValue dst = mlirOperationGetOperand(store, 1);
	MlirType vt = mlirValueGetType(v);
	int no = indices(store, 2, args + 2, 16);
	struct pb_buf t = {0};
	if (no < 2 || !mlirTypeIsAVector(vt))
		return no < 0 ? PB_ERR : PB_OK;
	int64_t w = mlirIntegerAttrGetValueInt(pb_ir_attr(store,
							   PB_ATTR_SWIZZLE));
	MlirType et = mlirShapedTypeGetElementType(vt);
	int64_t eb = mlirTypeIsAFloat(et) ? mlirFloatTypeGetWidth(et) / 8 : 2;
	args[0] = v;
	args[1] = dst;
	pb_buf_puts(&t, "func.func @t(%v: ");
	pb_codegen_type_str(vt, &t);
	pb_buf_puts(&t, ", %d: ");
	pb_codegen_type_str(mlirValueGetType(dst), &t);
	for (int i = 0; i < no; i++)
		pb_buf_printf(&t, ", %%j%d: index", i);
	pb_buf_puts(&t, ") {\n");
	swizzle_text(&t, w, eb, no);
	pb_buf_puts(&t, "  vector.store %v, %d[");
	for (int i = 0; i < no - 1; i++)
		pb_buf_printf(&t, "%%j%d, ", i);
	pb_buf_puts(&t, "%sw] : ");
	pb_codegen_type_str(mlirValueGetType(dst), &t);
	pb_buf_puts(&t, ", ");
	pb_codegen_type_str(vt, &t);
	pb_buf_puts(&t, "\n  return\n}\n");
	int rc = pb_ir_instantiate(ctx, t.data, store, 2 + no, args,
				   mlirOperationGetLocation(store), NULL);
	pb_buf_free(&t);
	if (rc)
		return rc;
	mlirOperationDestroy(store);
	return PB_OK;
}

/* Insert the NVVM operation "text" (no operands) before "before". */
static int nvvm_op(struct pb_ctx *ctx, const char *text, MlirOperation before)
{
	char t[160];
	snprintf(t, sizeof(t), "func.func @t() {\n  %s\n  return\n}\n", text);
	return pb_ir_instantiate(ctx, t, before, 0, NULL,
				 mlirOperationGetLocation(before), NULL);
}

/* Lower the asynchronous copy loop "loop". A guarded copy (zeros past
 * the buffer's end) becomes one cp.async that zero-fills (src-size 0)
 * where the guard is false, without a branch. */
static int async_loop(struct pb_ctx *ctx, MlirOperation loop)
{
	struct pb_ir_ops st = {0}, ifs = {0};
	int rc = PB_OK;
	pb_ir_collect(loop, "affine.if", &ifs);
	for (int i = 0; i < ifs.n && rc == PB_OK; i++) {
		MlirOperation l, s;
		if (!guarded_copy(ifs.v[i], &l, &s))
			continue;
		mlirOperationMoveBefore(l, ifs.v[i]);
		mlirOperationMoveBefore(s, ifs.v[i]);
		rc = async_copy(ctx, l, s, ifs.v[i]);
	}
	pb_ir_ops_free(&ifs);
	if (rc != PB_OK)
		return rc;
	pb_ir_collect(loop, NULL, &st);
	for (int i = 0; i < st.n && rc == PB_OK; i++) {
		MlirOperation s = st.v[i];
		if (!pb_ir_op_is(s, "affine.store") &&
		    !pb_ir_op_is(s, "affine.vector_store"))
			continue;
		MlirValue v = mlirOperationGetOperand(s, 0);
		MlirValue dst = mlirOperationGetOperand(s, 1);
		if (!mlirValueIsAOpResult(v) ||
		    !pb_kernel_is_workgroup(mlirValueGetType(dst)))
			continue;
		MlirOperation l = mlirOpResultGetOwner(v);
		if ((!pb_ir_op_is(l, "affine.load") &&
		     !pb_ir_op_is(l, "affine.vector_load")) ||
		    pb_kernel_is_workgroup(mlirValueGetType(
			    mlirOperationGetOperand(l, 0)))) {
			if (!mlirAttributeIsNull(pb_ir_attr(s, PB_ATTR_SWIZZLE)))
				rc = swizzled_store(ctx, s);
			continue;
		}
		int64_t bytes = copy_bytes(l);
		if (bytes != 4 && bytes != 8 && bytes != 16)
			continue; /* cp.async copies 4, 8 or 16 bytes */
		rc = async_copy(ctx, l, s, (MlirOperation){NULL});
	}
	pb_ir_ops_free(&st);
	mlirOperationRemoveAttributeByName(
		loop, mlirStringRefCreateFromCString("pb.async"));
	if (rc == PB_OK)
		rc = nvvm_op(ctx, "nvvm.cp.async.commit.group",
			     mlirOperationGetNextInBlock(loop));
	return rc;
}

/* Fully unroll "loop", an affine.for with constant bounds that pb-smem
 * marked "pb.unroll" (the k-tile loop of a staged nest); its carried
 * values pass from each copy of the body to the next. */
static int unroll(struct pb_ctx *ctx, MlirOperation loop)
{
	int64_t lb, ub, step = mlirIntegerAttrGetValueInt(
		pb_ir_attr(loop, "step"));
	MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(loop, 0));
	MlirValue iv = mlirBlockGetArgument(body, 0);
	MlirOperation end = mlirBlockGetTerminator(body);
	int nres = (int)mlirOperationGetNumResults(loop);
	int nops = (int)mlirOperationGetNumOperands(loop);
	MlirValue cur[64];
	if (pb_ir_const_map(loop, "lowerBoundMap", 1, &lb) ||
	    pb_ir_const_map(loop, "upperBoundMap", 1, &ub) || step < 1 ||
	    nres > 64)
		return PB_OK;
	/* the carried values start from the loop's last operands */
	for (int i = 0; i < nres; i++)
		cur[i] = mlirOperationGetOperand(loop, nops - nres + i);
	for (int64_t k = lb; k < ub; k += step) {
		char t[96];
		struct pb_ir_ops out = {0};
		struct pb_ir_map map = {0};
		snprintf(t, sizeof(t), "func.func @t() {\n  %%c = arith.constant "
			 "%lld : index\n  return\n}\n", (long long)k);
		if (pb_ir_instantiate(ctx, t, loop, 0, NULL,
				      mlirOperationGetLocation(loop), &out)) {
			pb_ir_ops_free(&out);
			return PB_ERR;
		}
		pb_ir_map_add(&map, iv, mlirOperationGetResult(out.v[0], 0));
		pb_ir_ops_free(&out);
		for (int i = 0; i < nres; i++)
			pb_ir_map_add(&map, mlirBlockGetArgument(body, 1 + i),
				      cur[i]);
		for (MlirOperation o = mlirBlockGetFirstOperation(body);
		     !mlirOperationEqual(o, end); o = mlirOperationGetNextInBlock(o)) {
			MlirOperation c = mlirOperationClone(o);
			mlirBlockInsertOwnedOperationBefore(
				mlirOperationGetBlock(loop), loop, c);
			pb_ir_remap_operands(c, &map);
			for (intptr_t r = 0; r < mlirOperationGetNumResults(o); r++)
				pb_ir_map_add(&map, mlirOperationGetResult(o, r),
					      mlirOperationGetResult(c, r));
		}
		/* what this copy yields, through the map */
		for (int i = 0; i < nres; i++) {
			MlirValue y = mlirOperationGetOperand(end, i);
			MlirValue m = pb_ir_map_lookup(&map, y);
			cur[i] = mlirValueIsNull(m) ? y : m;
		}
		pb_ir_map_free(&map);
	}
	for (int i = 0; i < nres; i++)
		mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(loop, i),
					      cur[i]);
	mlirOperationDestroy(loop);
	return PB_OK;
}

int pb_codegen_async(struct pb_ctx *ctx, MlirOperation root)
{
	struct pb_ir_ops all = {0}, work = {0};
	int rc = PB_OK;
	/* pick the work first: unrolling destroys what it unrolls */
	pb_ir_collect(root, NULL, &all);
	for (int i = 0; i < all.n; i++) {
		MlirOperation op = all.v[i];
		if ((pb_ir_op_is(op, "affine.for") &&
		     !mlirAttributeIsNull(pb_ir_attr(op, "pb.unroll"))) ||
		    (pb_ir_op_is(op, "affine.parallel") &&
		     !mlirAttributeIsNull(pb_ir_attr(op, "pb.async"))) ||
		    (pb_ir_op_is(op, "gpu.barrier") &&
		     !mlirAttributeIsNull(pb_ir_attr(op, "pb.wait"))))
			pb_ir_ops_push(&work, op);
	}
	pb_ir_ops_free(&all);
	for (int i = 0; i < work.n && rc == PB_OK; i++) {
		MlirOperation op = work.v[i];
		if (pb_ir_op_is(op, "affine.for")) {
			rc = unroll(ctx, op);
		} else if (pb_ir_op_is(op, "affine.parallel")) {
			rc = async_loop(ctx, op);
		} else {
			char t[64];
			snprintf(t, sizeof(t), "nvvm.cp.async.wait.group %lld",
				 (long long)mlirIntegerAttrGetValueInt(
					 pb_ir_attr(op, "pb.wait")));
			rc = nvvm_op(ctx, t, op);
		}
	}
	pb_ir_ops_free(&work);
	return rc;
}

/* The gpu.func of "mod" (the merged kernel module) named "name". */
static MlirOperation kernel_func(MlirOperation mod, MlirStringRef name)
{
	MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(mod, 0));
	for (MlirOperation op = mlirBlockGetFirstOperation(b);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		MlirStringRef s = pb_ir_str_attr(op, "sym_name");
		if (pb_ir_op_is(op, "gpu.func") && s.data &&
		    s.length == name.length &&
		    !strncmp(s.data, name.data, name.length))
			return op;
	}
	return (MlirOperation){NULL};
}

/* Does the kernel only read memref "v": loads and asynchronous copies
 * from it? */
static int only_read(MlirValue v)
{
	for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u);
	     u = mlirOpOperandGetNextUse(u)) {
		MlirOperation op = mlirOpOperandGetOwner(u);
		int pos = (int)mlirOpOperandGetOperandNumber(u);
		if (!((pb_ir_op_is(op, "memref.load") ||
		       pb_ir_op_is(op, "vector.load") ||
		       pb_ir_op_is(op, "nvgpu.device_async_copy")) &&
		      pos == 0))
			return 0;
	}
	return 1;
}

/* Is memref argument "i" of "kernel" a buffer no other argument of any of
 * its "n" launches "l" shares (distinct roots through views)? */
static int distinct(MlirOperation kernel, int i, MlirOperation *l, int n)
{
	/* the arguments, not the workgroup attributions after them */
	int nargs = pb_ir_func_num_args(kernel);
	for (int k = 0; k < n; k++) {
		int base = (int)mlirOperationGetNumOperands(l[k]) - nargs;
		if (base < 0)
			return 0;
		MlirValue ri = pb_poly_root(mlirOperationGetOperand(l[k], base + i));
		for (int j = 0; j < nargs; j++) {
			MlirValue o = mlirOperationGetOperand(l[k], base + j);
			if (j != i && mlirTypeIsAMemRef(mlirValueGetType(o)) &&
			    mlirValueEqual(pb_poly_root(o), ri))
				return 0;
		}
	}
	return n > 0;
}

/* Is memref argument "i" of "kernel" at each of its "n" launches "l" a
 * whole device allocation (an argument of the host function or a
 * memref.alloc, not a view into one): the runtime's allocations are
 * aligned to 256 bytes, so the kernel may assume 16. */
static int whole(MlirOperation kernel, int i, MlirOperation *l, int n)
{
	/* the arguments, not the workgroup attributions after them */
	int nargs = pb_ir_func_num_args(kernel);
	for (int k = 0; k < n; k++) {
		int base = (int)mlirOperationGetNumOperands(l[k]) - nargs;
		if (base < 0)
			return 0;
		MlirValue v = mlirOperationGetOperand(l[k], base + i);
		if (!mlirValueIsABlockArgument(v) &&
		    !pb_ir_op_is(pb_ir_value_parent(v), "memref.alloc"))
			return 0;
		if (mlirValueIsABlockArgument(v) &&
		    !pb_ir_op_is(pb_ir_value_parent(v), "func.func"))
			return 0;
	}
	return n > 0;
}

/* Align the workgroup attributions of gpu.func "f" whose address makes
 * a wgmma descriptor (a memref.extract_aligned_pointer_as_index marked
 * pb.swizzle, wgmma.c) to 1024 bytes, the period of the swizzle's
 * pattern: the swizzled copies and the descriptors assume it. */
static void align_wgmma_rings(MlirOperation f)
{
	MlirAttribute nwa = pb_ir_attr(f, "workgroup_attributions");
	MlirContext c = mlirOperationGetContext(f);
	MlirBlock entry = mlirRegionGetFirstBlock(mlirOperationGetRegion(f, 0));
	int nargs = pb_ir_func_num_args(f), any = 0;
	int64_t nw = mlirAttributeIsNull(nwa) ? 0 : mlirIntegerAttrGetValueInt(nwa);
	MlirAttribute dicts[64];
	if (nw <= 0 || nw > 64)
		return;
	MlirNamedAttribute align = mlirNamedAttributeGet(
		mlirIdentifierGet(c, mlirStringRefCreateFromCString("llvm.align")),
		mlirIntegerAttrGet(mlirIntegerTypeGet(c, 64), 1024));
	for (int i = 0; i < nw; i++) {
		MlirValue a = mlirBlockGetArgument(entry, nargs + i);
		int ring = 0;
		for (MlirOpOperand u = mlirValueGetFirstUse(a);
		     !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u))
			ring |= pb_ir_op_is(mlirOpOperandGetOwner(u),
					    "memref.extract_aligned_pointer_as_index") &&
				!mlirAttributeIsNull(pb_ir_attr(
					mlirOpOperandGetOwner(u), PB_ATTR_SWIZZLE));
		dicts[i] = mlirDictionaryAttrGet(c, ring ? 1 : 0, &align);
		any |= ring;
	}
	if (any)
		pb_ir_set_attr(f, "workgroup_attrib_attrs",
			       mlirArrayAttrGet(c, nw, dicts));
}

int pb_codegen_arg_attrs(MlirModule m)
{
	struct pb_ir_ops launches = {0}, mods = {0};
	pb_ir_collect(mlirModuleGetOperation(m), "gpu.launch_func", &launches);
	pb_ir_block_ops(mlirModuleGetBody(m), &mods);
	for (int g = 0; g < mods.n; g++) {
		if (!pb_ir_op_is(mods.v[g], "gpu.module"))
			continue;
		MlirBlock b = mlirRegionGetFirstBlock(
			mlirOperationGetRegion(mods.v[g], 0));
		for (MlirOperation f = mlirBlockGetFirstOperation(b);
		     !mlirOperationIsNull(f); f = mlirOperationGetNextInBlock(f)) {
			if (!pb_ir_op_is(f, "gpu.func"))
				continue;
			MlirStringRef name = pb_ir_str_attr(f, "sym_name");
			struct pb_ir_ops mine = {0};
			for (int k = 0; k < launches.n; k++) {
				MlirStringRef leaf = mlirSymbolRefAttrGetLeafReference(
					pb_ir_attr(launches.v[k], "kernel"));
				if (leaf.length == name.length &&
				    !strncmp(leaf.data, name.data, name.length) &&
				    mlirOperationEqual(
					    kernel_func(mods.v[g], leaf), f))
					pb_ir_ops_push(&mine, launches.v[k]);
			}
			align_wgmma_rings(f);
			MlirBlock entry = mlirRegionGetFirstBlock(
				mlirOperationGetRegion(f, 0));
			MlirContext c = mlirOperationGetContext(f);
			for (int i = 0; i < pb_ir_func_num_args(f); i++) {
				MlirValue a = mlirBlockGetArgument(entry, i);
				if (!mlirTypeIsAMemRef(mlirValueGetType(a)))
					continue;
				if (whole(f, i, mine.v, mine.n))
					pb_ir_func_set_arg_attr(
						f, i, "llvm.align",
						mlirIntegerAttrGet(
							mlirIntegerTypeGet(c, 64),
							16));
				if (!only_read(a) ||
				    !distinct(f, i, mine.v, mine.n))
					continue;
				pb_ir_func_set_arg_attr(f, i, "llvm.noalias",
							mlirUnitAttrGet(c));
				pb_ir_func_set_arg_attr(f, i, "llvm.readonly",
							mlirUnitAttrGet(c));
			}
			pb_ir_ops_free(&mine);
		}
	}
	pb_ir_ops_free(&launches);
	pb_ir_ops_free(&mods);
	return PB_OK;
}
