/* 32-bit index arithmetic in the kernels (docs/pb-codegen.md, "32-bit
 * indices"): the gpu.module lowered as gpu-lower-to-nvvm-pipeline
 * lowers it, but with every index conversion at 32 bits, where the
 * buffers' sizes prove that no index can reach 2^31.
 *
 * Upstream's pipeline with index-bitwidth=32 fails in translation
 * (unrealized casts) on pb's kernels: it converts arith and the kernel
 * arguments at the requested width, but convert-nvgpu-to-nvvm (the
 * cp.async and ldmatrix of pb-smem and pb-mma) has no such option and
 * builds 64-bit memref descriptors and offsets. Here the device
 * conversions run nested in the gpu.module at 32 bits, nvgpu last; each
 * chain of casts it leaves from a 32-bit value to its 64-bit form (an
 * index i32 -> index -> i64, a descriptor struct<(ptr, ptr, i32, ...)>
 * -> memref -> struct<(ptr, ptr, i64, ...)>) becomes a sign extension
 * (of each field), and the casts reconcile. Only the address arithmetic
 * of those copies stays 64-bit. pb-codegen --index32 asks for it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "codegen/internal.h"
#include "ir/ir.h"
#include "kernel/kernel.h"

/* The most elements (and threads of a launch) whose indices fit in a
 * signed 32-bit integer with room for the one-past-the-end bounds of
 * loops and the sum of two in-bounds offsets. */
#define INDEX32_LIMIT ((int64_t)1 << 30)

/* Is "t" a memref of static shape with fewer than INDEX32_LIMIT
 * elements (or not a memref)? */
static int small_type(MlirType t)
{
	if (!mlirTypeIsAMemRef(t))
		return !mlirTypeIsAUnrankedMemRef(t);
	if (!mlirShapedTypeHasStaticShape(t))
		return 0;
	int64_t n = 1;
	for (intptr_t d = 0; d < mlirShapedTypeGetRank(t); d++) {
		n *= mlirShapedTypeGetDimSize(t, d);
		if (n >= INDEX32_LIMIT)
			return 0;
	}
	return 1;
}

/* The product of the three values of dense i32 array attribute "name"
 * of "op", -1 when absent. */
static int64_t dims_product(MlirOperation op, const char *name)
{
	MlirAttribute a = pb_ir_attr(op, name);
	if (mlirAttributeIsNull(a) || !mlirAttributeIsADenseI32Array(a))
		return -1;
	int64_t p = 1;
	for (intptr_t i = 0; i < mlirDenseArrayGetNumElements(a); i++)
		p *= mlirDenseI32ArrayGetElement(a, i);
	return p;
}

int pb_codegen_index32_ok(MlirOperation mod)
{
	struct pb_ir_ops all = {0};
	int ok = 1;
	pb_ir_collect(mod, NULL, &all);
	for (int i = 0; i < all.n && ok; i++) {
		MlirOperation op = all.v[i];
		if (pb_ir_op_is(op, "gpu.func")) {
			int64_t g = dims_product(op, "known_grid_size");
			int64_t b = dims_product(op, "known_block_size");
			ok = g > 0 && b > 0 && g * b < INDEX32_LIMIT;
		}
		/* every buffer an operation touches or makes, and every
		 * block argument (kernel arguments, workgroup buffers) */
		for (intptr_t k = 0; ok && k < mlirOperationGetNumOperands(op); k++)
			ok = small_type(mlirValueGetType(
				mlirOperationGetOperand(op, k)));
		for (intptr_t k = 0; ok && k < mlirOperationGetNumResults(op); k++)
			ok = small_type(mlirValueGetType(
				mlirOperationGetResult(op, k)));
		for (intptr_t r = 0; ok && r < mlirOperationGetNumRegions(op); r++)
			for (MlirBlock b = mlirRegionGetFirstBlock(
				     mlirOperationGetRegion(op, r));
			     ok && !mlirBlockIsNull(b); b = mlirBlockGetNextInRegion(b))
				for (intptr_t k = 0;
				     ok && k < mlirBlockGetNumArguments(b); k++)
					ok = small_type(mlirValueGetType(
						mlirBlockGetArgument(b, k)));
	}
	pb_ir_ops_free(&all);
	return ok;
}

/* Is "t" an LLVM struct of a memref descriptor: two pointers, the
 * offset, and for rank r > 0 two arrays of r sizes and strides, all of
 * integers of "width" bits (!llvm.struct<(ptr, ptr, i32, array<2 x i32>,
 * array<2 x i32>)>)? Its rank into "*rank". */
static int descriptor(MlirType t, unsigned width, int *rank)
{
	struct pb_buf s = {0};
	char w[64];
	int ok = 0, as = 0, r = 0;
	pb_ir_type_print(t, &s);
	if (s.data && sscanf(s.data, "!llvm.struct<(ptr%n", &as) == 0 && as) {
		/* the pointers may carry an address space: ptr<3> */
		const char *p = strchr(s.data + as, ',');
		p = p ? strchr(p + 1, ',') : NULL;
		snprintf(w, sizeof(w), ", i%u)>", width);
		if (p && !strcmp(p, w)) {
			ok = 1;
		} else if (p && sscanf(p, ", i%*u, array<%d x i", &r) == 1) {
			struct pb_buf e = {0};
			pb_buf_printf(&e, ", i%u, array<%d x i%u>, array<%d x i%u>)>",
				      width, r, width, r, width);
			ok = r > 0 && !strcmp(p, e.data);
			pb_buf_free(&e);
		}
	}
	pb_buf_free(&s);
	*rank = r;
	return ok;
}

/* Replace the result of cast "x" (of the 32-bit value "v" through an
 * intermediate type) by its sign extension to x's 64-bit type: an
 * integer, or each integer field of a memref descriptor. */
static int widen(struct pb_ctx *ctx, MlirOperation x, MlirValue v)
{
	MlirType from = mlirValueGetType(v);
	MlirType to = mlirValueGetType(mlirOperationGetResult(x, 0));
	struct pb_buf t = {0}, ft = {0}, tt = {0};
	struct pb_ir_ops out = {0};
	int rf, rt;
	pb_ir_type_print(from, &ft);
	pb_ir_type_print(to, &tt);
	pb_buf_printf(&t, "func.func @t(%%s: %s) {\n", ft.data);
	if (mlirTypeIsAInteger(from) && mlirTypeIsAInteger(to)) {
		pb_buf_printf(&t, "  %%r = llvm.%s %%s : %s to %s\n",
			      mlirIntegerTypeGetWidth(from) <
					      mlirIntegerTypeGetWidth(to)
				      ? "sext" : "trunc",
			      ft.data, tt.data);
	} else if (descriptor(from, 32, &rf) && descriptor(to, 64, &rt) &&
		   rf == rt) {
		int k = 0;
		pb_buf_printf(&t, "  %%u%d = llvm.mlir.poison : %s\n", k, tt.data);
		for (int f = 0; f < 2; f++, k++)
			pb_buf_printf(&t, "  %%p%d = llvm.extractvalue %%s[%d] : %s\n"
				      "  %%u%d = llvm.insertvalue %%p%d, %%u%d[%d] : "
				      "%s\n", k, f, ft.data, k + 1, k, k, f,
				      tt.data);
		for (int f = 2; f < (rf ? 5 : 3); f++)
			for (int d = 0; d < (f == 2 ? 1 : rf); d++, k++) {
				char pos[24];
				if (f == 2)
					snprintf(pos, sizeof(pos), "2");
				else
					snprintf(pos, sizeof(pos), "%d, %d", f, d);
				pb_buf_printf(&t, "  %%p%d = llvm.extractvalue %%s[%s] : "
					      "%s\n  %%w%d = llvm.sext %%p%d : i32 "
					      "to i64\n  %%u%d = llvm.insertvalue "
					      "%%w%d, %%u%d[%s] : %s\n", k, pos,
					      ft.data, k, k, k + 1, k, k, pos,
					      tt.data);
			}
	} else {
		pb_buf_free(&t);
		pb_buf_free(&ft);
		pb_buf_free(&tt);
		return PB_OK; /* not a widening: left to reconcile */
	}
	pb_buf_puts(&t, "  return\n}\n");
	int rc = pb_ir_instantiate(ctx, t.data, x, 1, &v,
				   mlirOperationGetLocation(x), &out);
	if (rc == PB_OK) {
		mlirValueReplaceAllUsesOfWith(
			mlirOperationGetResult(x, 0),
			mlirOperationGetResult(out.v[out.n - 1], 0));
		mlirOperationDestroy(x);
	}
	pb_ir_ops_free(&out);
	pb_buf_free(&t);
	pb_buf_free(&ft);
	pb_buf_free(&tt);
	return rc;
}

/* Sign-extend every chain of two unrealized casts in "root" that takes a
 * 32-bit value to its 64-bit form (see the top of this file). */
static int widen_casts(struct pb_ctx *ctx, MlirOperation root)
{
	struct pb_ir_ops casts = {0};
	int rc = PB_OK;
	pb_ir_collect(root, "builtin.unrealized_conversion_cast", &casts);
	for (int i = 0; i < casts.n && rc == PB_OK; i++) {
		MlirOperation x = casts.v[i];
		if (mlirOperationGetNumOperands(x) != 1 ||
		    mlirOperationGetNumResults(x) != 1)
			continue;
		MlirValue m = mlirOperationGetOperand(x, 0);
		if (!mlirValueIsAOpResult(m))
			continue;
		MlirOperation y = mlirOpResultGetOwner(m);
		if (!pb_ir_op_is(y, "builtin.unrealized_conversion_cast") ||
		    mlirOperationGetNumOperands(y) != 1)
			continue;
		MlirValue v = mlirOperationGetOperand(y, 0);
		if (mlirTypeEqual(mlirValueGetType(v),
				  mlirValueGetType(mlirOperationGetResult(x, 0))))
			continue;
		rc = widen(ctx, x, v);
	}
	pb_ir_ops_free(&casts);
	return rc;
}

/* Mark every index addition, subtraction and multiplication in "root"
 * as not wrapping when signed (arith's nsw): the kernel's buffers bound
 * every index below 2^30 in magnitude (pb_codegen_index32_ok), so no sum
 * or product of two of them in a subscript reaches 2^31. Without it LLVM
 * cannot tell that a 32-bit offset + 1 is the next element once
 * sign-extended, and no longer combines a thread's contiguous loads. */
static void no_wrap(MlirOperation root)
{
	static const char *ops[] = {"arith.addi", "arith.subi", "arith.muli"};
	MlirContext c = mlirOperationGetContext(root);
	MlirAttribute nsw = mlirAttributeParseGet(
		c, mlirStringRefCreateFromCString("#arith.overflow<nsw>"));
	for (unsigned k = 0; k < sizeof(ops) / sizeof(*ops); k++) {
		struct pb_ir_ops l = {0};
		pb_ir_collect(root, ops[k], &l);
		for (int i = 0; i < l.n; i++)
			if (mlirTypeIsAIndex(mlirValueGetType(
				    mlirOperationGetResult(l.v[i], 0))))
				pb_ir_set_attr(l.v[i], "overflowFlags", nsw);
		pb_ir_ops_free(&l);
	}
}

int pb_codegen_index32_lower(struct pb_ctx *ctx, MlirModule dev,
			     const char *arch, int isa)
{
	char binary[256];
	static const char structured[] =
		"builtin.module(gpu.module(convert-vector-to-scf,"
		"convert-scf-to-cf,convert-nvvm-to-llvm,expand-strided-metadata,"
		"lower-affine))";
	static const char device[] =
		"builtin.module(gpu.module(convert-arith-to-llvm{index-bitwidth=32},"
		"convert-index-to-llvm{index-bitwidth=32},canonicalize,cse,"
		"convert-gpu-to-nvvm{index-bitwidth=32 "
		"use-bare-ptr-memref-call-conv=true},convert-nvgpu-to-nvvm,"
		"convert-nvvm-to-llvm))";
	snprintf(binary, sizeof(binary),
		 "builtin.module(gpu.module(canonicalize,cse,"
		 "reconcile-unrealized-casts),nvvm-attach-target{O=3 chip=%s "
		 "features=+ptx%d},gpu-module-to-binary{format=isa})",
		 arch, isa);
	if (pb_ir_run_pipeline(ctx, dev, structured))
		return PB_ERR;
	no_wrap(mlirModuleGetOperation(dev));
	if (pb_ir_run_pipeline(ctx, dev, device) ||
	    widen_casts(ctx, mlirModuleGetOperation(dev)) ||
	    pb_ir_run_pipeline(ctx, dev, binary))
		return PB_ERR;
	return PB_OK;
}
