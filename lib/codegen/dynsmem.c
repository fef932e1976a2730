/* Dynamic shared memory (docs/pb-codegen.md, "Dynamic shared memory").
 *
 * A block's workgroup buffers become static `.shared` arrays of the PTX
 * (the launch's workgroup attributions) while they fit the target's
 * shared memory per block without opt-in (`smem_per_block`, 48 KiB): a
 * kernel may declare no more statically. A block that needs more (two
 * warpgroups' wgmma rings with k-tiles of 64, an attention block's
 * deeper K/V rings) takes all its buffers from one region of dynamic
 * shared memory instead, up to the opt-in limit
 * (`smem_per_block_optin`: 227 KiB on sm_90, 163 KiB on sm_80):
 *
 *   gpu.launch ... dynamic_shared_memory_size %bytes {
 *     %d = gpu.dynamic_shared_memory : memref<?xi8, workgroup>
 *     %r0 = memref.view %d[%c0][] : ... to memref<3x128x64xf16, workgroup>
 *     %r1 = memref.view %d[%c49152][] : ... to memref<3x64x128xf16, ...>
 *
 * The buffers whose size is a multiple of 1024 bytes (every wgmma ring)
 * come first, each at a multiple of 1024, the swizzle's period; the
 * others follow at multiples of 16. The launch's dynamic size becomes
 * the plan's "smem" (host.c), and the runtime sets the function's
 * CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES before launching it
 * with that size (lib/runtime/cuda.c).
 *
 * MLIR 22's own lowering of gpu.dynamic_shared_memory (convert-gpu-to-
 * nvvm) declares an *internal* zero-sized global aligned to 16 bytes,
 * which LLVM's NVPTX back end demotes into the kernel as a one-byte
 * static `.shared` variable (checked with ptxas: "1 bytes smem"), not the
 * `.extern` array the driver places the dynamic region at. So pb lowers
 * it itself, after outlining: one external global per gpu.module,
 *
 *   llvm.mlir.global external @pb_dyn_smem() {addr_space = 3,
 *       alignment = 1024} : !llvm.array<0 x i8>
 *
 * (PTX: `.extern .shared .align 1024 .b8 pb_dyn_smem[];`), and each
 * gpu.dynamic_shared_memory becomes a memref descriptor of its address
 * (llvm.mlir.addressof, llvm.insertvalue) cast to the memref type with
 * builtin.unrealized_conversion_cast, which the NVVM pipeline's
 * reconcile-unrealized-casts folds into the views' lowering. A block
 * with dynamic shared memory has no static shared arrays, so the region
 * starts at the block's shared window, 1024-byte aligned as declared. */
#include <stdlib.h>
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "codegen/internal.h"
#include "kernel/kernel.h"
#include "target/target.h"

/* The symbol of the dynamic shared memory of every kernel. */
#define DYN_SYMBOL "pb_dyn_smem"

/* "at" rounded up to a multiple of "align". */
static int64_t round_up(int64_t at, int64_t align)
{
	return (at + align - 1) / align * align;
}

int64_t pb_codegen_dyn_layout(struct pb_ctx *ctx, MlirOperation root,
			      const struct pb_ir_ops *wg, int64_t *off)
{
	const struct pb_target *t = pb_target_of(ctx);
	int64_t total = 0, at = 0;
	if (!t)
		return -1;
	for (int i = 0; i < wg->n; i++) {
		int64_t b = pb_kernel_type_bytes(
			mlirValueGetType(mlirOperationGetResult(wg->v[i], 0)));
		if (b < 0)
			return 0; /* not ours to size: left static */
		total += b;
	}
	if (total <= t->smem_per_block)
		return 0;
	/* the 1024-byte multiples first, aligned to 1024, then the rest */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < wg->n; i++) {
			int64_t b = pb_kernel_type_bytes(mlirValueGetType(
				mlirOperationGetResult(wg->v[i], 0)));
			if ((b % 1024 == 0) != (pass == 0))
				continue;
			off[i] = round_up(at, pass ? 16 : 1024);
			at = off[i] + b;
		}
	if (at > t->smem_per_block_optin) {
		pb_error_at(ctx, mlirOperationGetLocation(root),
			    "the block needs %lld bytes of shared memory, more "
			    "than the %lld of the target (%s) with opt-in",
			    (long long)at, (long long)t->smem_per_block_optin,
			    t->arch);
		return -1;
	}
	return at;
}

int pb_codegen_dyn_views(struct pb_ctx *ctx, MlirOperation launch,
			 const struct pb_ir_ops *wg, const int64_t *off,
			 MlirValue *views)
{
	MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(launch, 0));
	MlirOperation before = mlirBlockGetFirstOperation(body);
	struct pb_buf t = {0};
	struct pb_ir_ops out = {0};
	pb_buf_puts(&t, "func.func @t() {\n"
			"  %d = gpu.dynamic_shared_memory : memref<?xi8, "
			"#gpu.address_space<workgroup>>\n");
	for (int i = 0; i < wg->n; i++) {
		pb_buf_printf(&t, "  %%o%d = arith.constant %lld : index\n"
			      "  %%v%d = memref.view %%d[%%o%d][] : memref<?xi8, "
			      "#gpu.address_space<workgroup>> to ",
			      i, (long long)off[i], i, i);
		pb_codegen_type_str(mlirValueGetType(
			mlirOperationGetResult(wg->v[i], 0)), &t);
		pb_buf_puts(&t, "\n");
	}
	pb_buf_puts(&t, "  return\n}\n");
	int rc = pb_ir_instantiate(ctx, t.data, before, 0, NULL,
				   mlirOperationGetLocation(launch), &out);
	for (int i = 0, k = 0; i < out.n && rc == PB_OK; i++)
		if (pb_ir_op_is(out.v[i], "memref.view"))
			views[k++] = mlirOperationGetResult(out.v[i], 0);
	pb_buf_free(&t);
	pb_ir_ops_free(&out);
	return rc;
}

/* The text of a function whose body is the descriptor of the dynamic
 * region as a value of memref type "mt", with the global after it (so
 * that the template verifies). */
static void lower_text(struct pb_buf *t, const char *mt)
{
	static const char st[] = "!llvm.struct<(ptr<3>, ptr<3>, i64, "
				 "array<1 x i64>, array<1 x i64>)>";
	pb_buf_printf(t,
		      "func.func @t() {\n"
		      "  %%p = llvm.mlir.addressof @" DYN_SYMBOL " : !llvm.ptr<3>\n"
		      "  %%u = llvm.mlir.poison : %s\n"
		      "  %%a = llvm.insertvalue %%p, %%u[0] : %s\n"
		      "  %%b = llvm.insertvalue %%p, %%a[1] : %s\n"
		      "  %%z = llvm.mlir.constant(0 : i64) : i64\n"
		      "  %%n = llvm.mlir.constant(0 : i64) : i64\n"
		      "  %%one = llvm.mlir.constant(1 : i64) : i64\n"
		      "  %%c = llvm.insertvalue %%z, %%b[2] : %s\n"
		      "  %%e = llvm.insertvalue %%n, %%c[3, 0] : %s\n"
		      "  %%f = llvm.insertvalue %%one, %%e[4, 0] : %s\n"
		      "  %%m = builtin.unrealized_conversion_cast %%f : %s to %s\n"
		      "  return\n}\n"
		      "llvm.mlir.global external @" DYN_SYMBOL "() {addr_space "
		      "= 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>\n",
		      st, st, st, st, st, st, st, mt);
}

/* Lower the gpu.dynamic_shared_memory ops of gpu.module "mod". */
static int lower_module(struct pb_ctx *ctx, MlirOperation mod)
{
	struct pb_ir_ops ops = {0};
	int rc = PB_OK;
	pb_ir_collect(mod, "gpu.dynamic_shared_memory", &ops);
	MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(mod, 0));
	for (int i = 0; i < ops.n && rc == PB_OK; i++) {
		struct pb_buf t = {0}, mt = {0};
		struct pb_ir_ops out = {0};
		MlirValue d = mlirOperationGetResult(ops.v[i], 0);
		pb_codegen_type_str(mlirValueGetType(d), &mt);
		lower_text(&t, mt.data);
		if (i == 0) {
			MlirOperation g = pb_ir_clone_from_text(
				ctx->mlir, t.data, "llvm.mlir.global", 0, NULL);
			if (mlirOperationIsNull(g)) {
				pb_error(ctx, "internal: bad IR template:\n%s",
					 t.data);
				rc = PB_ERR;
			} else {
				mlirBlockInsertOwnedOperation(b, 0, g);
			}
		}
		if (rc == PB_OK)
			rc = pb_ir_instantiate(ctx, t.data, ops.v[i], 0, NULL,
					       mlirOperationGetLocation(ops.v[i]),
					       &out);
		if (rc == PB_OK) {
			mlirValueReplaceAllUsesOfWith(
				d, mlirOperationGetResult(out.v[out.n - 1], 0));
			mlirOperationDestroy(ops.v[i]);
		}
		pb_ir_ops_free(&out);
		pb_buf_free(&t);
		pb_buf_free(&mt);
	}
	pb_ir_ops_free(&ops);
	return rc;
}

int pb_codegen_dyn_lower(struct pb_ctx *ctx, MlirModule m)
{
	int rc = PB_OK;
	for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
	     !mlirOperationIsNull(op) && rc == PB_OK;
	     op = mlirOperationGetNextInBlock(op))
		if (pb_ir_op_is(op, "gpu.module"))
			rc = lower_module(ctx, op);
	return rc;
}
