/* The workgroup (shared-memory) buffers of a kernel: memrefs in
 * #gpu.address_space<workgroup>, allocated inside the kernel's mapped
 * nest; pb-codegen turns them into launch attributions. */
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "kernel/kernel.h"

int pb_kernel_is_workgroup(MlirType t)
{
	struct pb_buf b = {0};
	int r;
	if (!mlirTypeIsAMemRef(t))
		return 0;
	MlirAttribute ms = mlirMemRefTypeGetMemorySpace(t);
	if (mlirAttributeIsNull(ms))
		return 0;
	mlirAttributePrint(ms, pb_buf_mlir_callback, &b);
	pb_buf_append(&b, "", 0);
	r = !strcmp(b.data, "#gpu.address_space<workgroup>") ||
	    !strcmp(b.data, "3 : i64") || !strcmp(b.data, "3 : i32");
	pb_buf_free(&b);
	return r;
}

void pb_kernel_workgroup_type_text(struct pb_buf *out, MlirType t, int64_t n)
{
	pb_buf_puts(out, "memref<");
	if (n > 0) {
		pb_buf_printf(out, "%lldx", (long long)n);
	} else {
		for (intptr_t i = 0; i < mlirShapedTypeGetRank(t); i++)
			pb_buf_printf(out, "%lldx",
				      (long long)mlirShapedTypeGetDimSize(t, i));
		t = mlirShapedTypeGetElementType(t);
	}
	pb_ir_type_print(t, out);
	pb_buf_puts(out, ", #gpu.address_space<workgroup>>");
}

int pb_kernel_workgroup_alloc(struct pb_ctx *ctx, const char *type,
			      MlirOperation before, MlirLocation loc,
			      MlirOperation *alloc)
{
	struct pb_buf t = {0};
	struct pb_ir_ops out = {0};
	pb_buf_printf(&t, "func.func @t() {\n  %%a = memref.alloc() : %s\n"
		      "  return\n}\n", type);
	int rc = pb_ir_instantiate(ctx, t.data, before, 0, NULL, loc, &out);
	pb_buf_free(&t);
	if (rc == PB_OK)
		*alloc = out.v[0];
	pb_ir_ops_free(&out);
	return rc;
}

void pb_kernel_workgroup_buffers(MlirOperation root, struct pb_ir_ops *l)
{
	struct pb_ir_ops all = {0};
	pb_ir_collect(root, NULL, &all);
	for (int i = 0; i < all.n; i++) {
		MlirOperation op = all.v[i];
		if ((pb_ir_op_is(op, "memref.alloc") ||
		     pb_ir_op_is(op, "memref.alloca")) &&
		    pb_kernel_is_workgroup(
			    mlirValueGetType(mlirOperationGetResult(op, 0))))
			pb_ir_ops_push(l, op);
	}
	pb_ir_ops_free(&all);
}

int64_t pb_kernel_type_bytes(MlirType t)
{
	if (!mlirTypeIsAMemRef(t) || !mlirShapedTypeHasStaticShape(t))
		return -1;
	MlirType e = mlirShapedTypeGetElementType(t);
	int64_t bits;
	if (mlirTypeIsAInteger(e))
		bits = mlirIntegerTypeGetWidth(e);
	else if (mlirTypeIsAFloat(e))
		bits = mlirFloatTypeGetWidth(e);
	else if (mlirTypeIsAIndex(e))
		bits = 64;
	else
		return -1;
	int64_t n = (bits + 7) / 8;
	for (intptr_t i = 0; i < mlirShapedTypeGetRank(t); i++)
		n *= mlirShapedTypeGetDimSize(t, i);
	return n;
}

int64_t pb_kernel_workgroup_bytes(MlirOperation root)
{
	struct pb_ir_ops l = {0};
	int64_t total = 0;
	pb_kernel_workgroup_buffers(root, &l);
	for (int i = 0; i < l.n && total >= 0; i++) {
		int64_t b = pb_kernel_type_bytes(
			mlirValueGetType(mlirOperationGetResult(l.v[i], 0)));
		total = b < 0 ? -1 : total + b;
	}
	pb_ir_ops_free(&l);
	return total;
}
