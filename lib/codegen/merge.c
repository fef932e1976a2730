/* After gpu-kernel-outlining: one gpu.module for all kernels (one PTX
 * module), and the provenance of each kernel recorded on it. */
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"

#include "codegen/internal.h"
#include "ir/contract.h"

/* The first block of the first region of "op". */
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
	MlirAttribute nodes = pb_contract_nodes(f);
	pb_contract_set_origin(l, origin);
	if (!mlirOperationIsNull(kernel))
		pb_contract_set_origin(kernel, origin);
	if (mlirAttributeIsNull(nodes))
		return;
	pb_contract_set_nodes(l, nodes);
	if (!mlirOperationIsNull(kernel))
		pb_contract_set_nodes(kernel, nodes);
}

/* Is "op" the merged gpu.module (from an earlier run on this module)? */
static int is_merged(MlirOperation op)
{
	MlirStringRef n = pb_ir_str_attr(op, "sym_name");
	return n.data && n.length == strlen(PB_CODEGEN_MODULE) &&
	       !strncmp(n.data, PB_CODEGEN_MODULE, n.length);
}

/* The merged gpu.module of "m", created before "where" when absent. */
static MlirOperation merged_module(struct pb_ctx *ctx, MlirModule m,
				   MlirOperation where)
{
	MlirBlock body = mlirModuleGetBody(m);
	for (MlirOperation op = mlirBlockGetFirstOperation(body);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
		if (pb_ir_op_is(op, "gpu.module") && is_merged(op))
			return op;
	MlirModule t = mlirModuleCreateParse(
		ctx->mlir, pb_str("gpu.module @" PB_CODEGEN_MODULE " {}"));
	if (mlirModuleIsNull(t))
		return (MlirOperation){NULL};
	MlirOperation mod = mlirOperationClone(
		mlirBlockGetFirstOperation(mlirModuleGetBody(t)));
	mlirModuleDestroy(t);
	mlirBlockInsertOwnedOperationBefore(body, where, mod);
	return mod;
}

int pb_codegen_merge(struct pb_ctx *ctx, MlirModule m)
{
	struct pb_ir_ops mods = {0}, launches = {0};
	pb_ir_block_ops(mlirModuleGetBody(m), &mods);
	pb_ir_collect(mlirModuleGetOperation(m), "gpu.launch_func",
			   &launches);
	MlirOperation first = {NULL}, target = {NULL};
	for (int i = 0; i < mods.n && mlirOperationIsNull(first); i++)
		if (pb_ir_op_is(mods.v[i], "gpu.module") && !is_merged(mods.v[i]))
			first = mods.v[i];
	int fresh = !mlirOperationIsNull(first);
	if (fresh)
		target = merged_module(ctx, m, first);
	if (fresh && mlirOperationIsNull(target)) {
		pb_error(ctx, "internal: cannot create the kernel module");
		return PB_ERR;
	}
	for (int i = 0; fresh && i < mods.n; i++)
		if (pb_ir_op_is(mods.v[i], "gpu.module") && !is_merged(mods.v[i]))
			move_module(mods.v[i], body_of(target));
	for (int i = 0; fresh && i < launches.n; i++) {
		MlirStringRef root = mlirSymbolRefAttrGetRootReference(
			pb_ir_attr(launches.v[i], "kernel"));
		if (root.length != strlen(PB_CODEGEN_MODULE) ||
		    strncmp(root.data, PB_CODEGEN_MODULE, root.length))
			retarget(launches.v[i], target);
	}
	for (int i = 0; i < mods.n; i++)
		if (pb_ir_op_is(mods.v[i], "gpu.module") && !is_merged(mods.v[i]))
			mlirOperationDestroy(mods.v[i]);
	pb_ir_ops_free(&mods);
	pb_ir_ops_free(&launches);
	return PB_OK;
}
