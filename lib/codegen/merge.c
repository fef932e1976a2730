/* After gpu-kernel-outlining: one gpu.module for all kernels (one PTX
 * module), and the provenance of each kernel recorded on it. */
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"

#include "codegen/internal.h"

static MlirBlock body_of(MlirOperation op)
{
	return mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
}

/* Does "blk" hold an operation with symbol name "name"? */
static int has_symbol(MlirBlock blk, MlirStringRef name)
{
	for (MlirOperation op = mlirBlockGetFirstOperation(blk);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		MlirStringRef s = pb_ir_str_attr(op, "sym_name");
		if (s.data && s.length == name.length &&
		    !strncmp(s.data, name.data, s.length))
			return 1;
	}
	return 0;
}

/* Move the symbols of gpu.module "from" into the body "to" of the merged
 * module; its kernel gpu.func takes the name of "from" (unique), other
 * symbols already present (the same global cloned twice) are dropped. */
static void move_module(MlirOperation from, MlirBlock to)
{
	MlirContext mctx = mlirOperationGetContext(from);
	MlirStringRef mname = pb_ir_str_attr(from, "sym_name");
	MlirAttribute name = mlirStringAttrGet(mctx, mname);
	MlirOperation op = mlirBlockGetFirstOperation(body_of(from)), next;
	for (; !mlirOperationIsNull(op); op = next) {
		next = mlirOperationGetNextInBlock(op);
		if (pb_ir_op_is(op, "gpu.module_end"))
			continue;
		if (pb_ir_op_is(op, "gpu.func") &&
		    !mlirAttributeIsNull(pb_ir_attr(op, "gpu.kernel")))
			pb_ir_set_attr(op, "sym_name", name);
		MlirStringRef s = pb_ir_str_attr(op, "sym_name");
		if (s.data && has_symbol(to, s)) {
			mlirOperationDestroy(op);
			continue;
		}
		mlirOperationRemoveFromParent(op);
		mlirBlockAppendOwnedOperation(to, op);
	}
}

/* The func.func around "op", or a null operation. */
static MlirOperation parent_func(MlirOperation op)
{
	while (!mlirOperationIsNull(op) && !pb_ir_op_is(op, "func.func"))
		op = mlirOperationGetParentOperation(op);
	return op;
}

/* The gpu.func named "name" in "blk". */
static MlirOperation find_func(MlirBlock blk, MlirStringRef name)
{
	for (MlirOperation op = mlirBlockGetFirstOperation(blk);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		MlirStringRef s = pb_ir_str_attr(op, "sym_name");
		if (pb_ir_op_is(op, "gpu.func") && s.data &&
		    s.length == name.length && !strncmp(s.data, name.data, s.length))
			return op;
	}
	return (MlirOperation){NULL};
}

/* Point launch "l" at the merged module "mod" and record where it came
 * from on it and on its kernel. */
static void retarget(MlirOperation l, MlirOperation mod)
{
	MlirContext mctx = mlirOperationGetContext(l);
	MlirAttribute k = pb_ir_attr(l, "kernel");
	MlirStringRef modname = mlirSymbolRefAttrGetRootReference(k);
	MlirAttribute leaf = mlirFlatSymbolRefAttrGet(mctx, modname);
	MlirAttribute ref = mlirSymbolRefAttrGet(mctx, pb_str(PB_CODEGEN_MODULE),
						 1, &leaf);
	MlirOperation kernel = find_func(body_of(mod), modname);
	pb_ir_set_attr(l, "kernel", ref);
	MlirOperation f = parent_func(l);
	if (mlirOperationIsNull(f))
		return;
	MlirAttribute origin = mlirStringAttrGet(mctx, pb_ir_str_attr(f, "sym_name"));
	MlirAttribute nodes = pb_ir_attr(f, "pb.nodes");
	pb_ir_set_attr(l, "pb.origin", origin);
	if (!mlirOperationIsNull(kernel))
		pb_ir_set_attr(kernel, "pb.origin", origin);
	if (mlirAttributeIsNull(nodes))
		return;
	pb_ir_set_attr(l, "pb.nodes", nodes);
	if (!mlirOperationIsNull(kernel))
		pb_ir_set_attr(kernel, "pb.nodes", nodes);
}

int pb_codegen_merge(struct pb_ctx *ctx, MlirModule m)
{
	struct pb_codegen_ops mods = {0}, launches = {0};
	MlirOperation first = {NULL};
	(void)ctx;
	pb_codegen_block_ops(mlirModuleGetBody(m), &mods);
	pb_codegen_collect(mlirModuleGetOperation(m), "gpu.launch_func",
			   &launches);
	for (int i = 0; i < mods.n; i++) {
		if (!pb_ir_op_is(mods.v[i], "gpu.module"))
			continue;
		if (mlirOperationIsNull(first)) {
			/* the first module becomes the merged one, emptied
			 * into itself so that its kernel is renamed too */
			first = mods.v[i];
			MlirStringRef n = pb_ir_str_attr(first, "sym_name");
			MlirAttribute old = mlirStringAttrGet(
				mlirOperationGetContext(first), n);
			MlirOperation k = mlirBlockGetFirstOperation(body_of(first));
			for (; !mlirOperationIsNull(k);
			     k = mlirOperationGetNextInBlock(k))
				if (pb_ir_op_is(k, "gpu.func") &&
				    !mlirAttributeIsNull(pb_ir_attr(k, "gpu.kernel")))
					pb_ir_set_attr(k, "sym_name", old);
			continue;
		}
		move_module(mods.v[i], body_of(first));
	}
	for (int i = 0; i < launches.n; i++)
		retarget(launches.v[i], first);
	if (!mlirOperationIsNull(first))
		pb_ir_set_attr(first, "sym_name",
			       mlirStringAttrGet(mlirOperationGetContext(first),
						 pb_str(PB_CODEGEN_MODULE)));
	for (int i = 0; i < mods.n; i++)
		if (pb_ir_op_is(mods.v[i], "gpu.module") &&
		    !mlirOperationEqual(mods.v[i], first))
			mlirOperationDestroy(mods.v[i]);
	pb_codegen_ops_free(&mods);
	pb_codegen_ops_free(&launches);
	return PB_OK;
}
