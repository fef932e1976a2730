/* Aliasing of a kernel's buffers (kernel.h): which arguments may be the
 * same memory at some call of the kernel in the module. pb-tile's register
 * promotion and pb-smem's staging both ask. */
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"

#include "kernel/kernel.h"
#include "poly/poly.h"

/* The number of the argument "v" is of kernel "func", or -1. */
int pb_kernel_arg_no(MlirOperation func, MlirValue v)
{
	MlirBlock entry = pb_ir_entry_block(func);
	for (intptr_t i = 0; i < mlirBlockGetNumArguments(entry); i++)
		if (mlirValueEqual(v, mlirBlockGetArgument(entry, i)))
			return (int)i;
	return -1;
}

struct calls {
	MlirStringRef name;
	struct pb_ir_ops v;
};

/* Walk callback: collect the func.call operations of "c->name"; the
 * kernels' bodies (most of a module, and no kernel calls one) are
 * skipped. */
static MlirWalkResult call_cb(MlirOperation op, void *user)
{
	struct calls *c = user;
	if (pb_ir_op_is(op, "func.func") &&
	    !mlirAttributeIsNull(pb_ir_attr(op, "pb.kernel")))
		return MlirWalkResultSkip;
	if (pb_ir_op_is(op, "func.call")) {
		MlirAttribute a = pb_ir_attr(op, "callee");
		MlirStringRef s = mlirFlatSymbolRefAttrGetValue(a);
		if (s.length == c->name.length &&
		    !strncmp(s.data, c->name.data, s.length))
			pb_ir_ops_push(&c->v, op);
	}
	return MlirWalkResultAdvance;
}

/* May buffers "x" and "y" of kernel "func" be the same memory? Values of
 * the kernel's own are distinct roots; two arguments may alias unless
 * every call (there is at least one) binds them to different roots. */
int pb_kernel_may_alias(MlirOperation module, MlirOperation func,
			MlirValue x, MlirValue y)
{
	MlirValue rx = pb_poly_root(x), ry = pb_poly_root(y);
	if (mlirValueEqual(rx, ry))
		return 1;
	int ax = pb_kernel_arg_no(func, rx), ay = pb_kernel_arg_no(func, ry);
	if (ax < 0 || ay < 0)
		return 0;
	struct calls c = {mlirStringAttrGetValue(pb_ir_attr(func, "sym_name")),
			  {0}};
	mlirOperationWalk(module, call_cb, &c, MlirWalkPreOrder);
	int alias = c.v.n == 0;
	for (int i = 0; i < c.v.n && !alias; i++) {
		MlirOperation call = c.v.v[i];
		if (mlirOperationGetNumOperands(call) <= (ax > ay ? ax : ay)) {
			alias = 1;
			break;
		}
		alias = mlirValueEqual(
			pb_poly_root(mlirOperationGetOperand(call, ax)),
			pb_poly_root(mlirOperationGetOperand(call, ay)));
	}
	pb_ir_ops_free(&c.v);
	return alias;
}

int pb_kernel_only_loaded(MlirValue v)
{
	for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u);
	     u = mlirOpOperandGetNextUse(u)) {
		MlirOperation op = mlirOpOperandGetOwner(u);
		if (!pb_ir_op_is(op, "affine.load") &&
		    !pb_ir_op_is(op, "memref.load"))
			return 0;
	}
	return 1;
}
