/* After gpu-kernel-outlining: one gpu.module for all kernels (one PTX
 * module), and the provenance of each kernel recorded on it. */
#include <stdlib.h>
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"

#include "codegen/internal.h"
#include "ir/contract.h"

/* The first block of the first region of "op". */
static MlirBlock body_of(MlirOperation op)
{
	return mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
}

/* The symbols of the merged module by name (open addressing; the names
 * are those of the symbols' StringAttrs, which live as long as the
 * context): one lookup per symbol moved and per launch, instead of a
 * walk of the merged module each. */
struct symtab {
	size_t cap, n;
	MlirStringRef *name;
	MlirOperation *op;
};

static size_t sym_hash(MlirStringRef s)
{
	size_t h = 1469598103934665603ull;
	for (size_t i = 0; i < s.length; i++)
		h = (h ^ (unsigned char)s.data[i]) * 1099511628211ull;
	return h;
}

/* The slot of "s" in "t": where it is, or the empty one where it goes. */
static size_t sym_slot(const struct symtab *t, MlirStringRef s)
{
	size_t i = sym_hash(s) & (t->cap - 1);
	while (t->name[i].data && (t->name[i].length != s.length ||
				   memcmp(t->name[i].data, s.data, s.length)))
		i = (i + 1) & (t->cap - 1);
	return i;
}

/* The operation named "s" in "t", or a null operation. */
static MlirOperation sym_find(const struct symtab *t, MlirStringRef s)
{
	if (!t->cap)
		return (MlirOperation){NULL};
	return t->op[sym_slot(t, s)];
}

/* Record "op", named "s", in "t" (the first of a name stays). */
static void sym_add(struct symtab *t, MlirStringRef s, MlirOperation op)
{
	if (2 * (t->n + 1) > t->cap) {
		struct symtab g = {t->cap ? 2 * t->cap : 64, 0, NULL, NULL};
		g.name = calloc(g.cap, sizeof(*g.name));
		g.op = calloc(g.cap, sizeof(*g.op));
		for (size_t i = 0; i < t->cap; i++)
			if (t->name[i].data)
				sym_add(&g, t->name[i], t->op[i]);
		free(t->name);
		free(t->op);
		*t = g;
	}
	size_t i = sym_slot(t, s);
	if (t->name[i].data)
		return;
	t->name[i] = s;
	t->op[i] = op;
	t->n++;
}

static void sym_free(struct symtab *t)
{
	free(t->name);
	free(t->op);
}

/* Move the symbols of gpu.module "from" into the body "to" of the merged
 * module, whose symbols "t" holds; its kernel gpu.func takes the name of
 * "from" (unique), other symbols already present (the same global cloned
 * twice) are dropped. */
static void move_module(MlirOperation from, MlirBlock to, struct symtab *t)
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
		if (s.data && !mlirOperationIsNull(sym_find(t, s))) {
			mlirOperationDestroy(op);
			continue;
		}
		mlirOperationRemoveFromParent(op);
		mlirBlockAppendOwnedOperation(to, op);
		if (s.data)
			sym_add(t, s, op);
	}
}

/* Point launch "l" at the merged module, whose symbols "t" holds, and
 * record where it came from on it and on its kernel. */
static void retarget(MlirOperation l, const struct symtab *t)
{
	MlirContext mctx = mlirOperationGetContext(l);
	MlirAttribute k = pb_ir_attr(l, "kernel");
	MlirStringRef modname = mlirSymbolRefAttrGetRootReference(k);
	MlirAttribute leaf = mlirFlatSymbolRefAttrGet(mctx, modname);
	MlirAttribute ref = mlirSymbolRefAttrGet(mctx, pb_str(PB_CODEGEN_MODULE),
						 1, &leaf);
	MlirOperation kernel = sym_find(t, modname);
	if (!mlirOperationIsNull(kernel) && !pb_ir_op_is(kernel, "gpu.func"))
		kernel = (MlirOperation){NULL};
	pb_ir_set_attr(l, "kernel", ref);
	MlirOperation f = pb_ir_parent_func(l);
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
	struct symtab t = {0};
	for (MlirOperation op = fresh ? mlirBlockGetFirstOperation(body_of(target))
				      : (MlirOperation){NULL};
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		MlirStringRef s = pb_ir_str_attr(op, "sym_name");
		if (s.data)
			sym_add(&t, s, op);
	}
	for (int i = 0; fresh && i < mods.n; i++)
		if (pb_ir_op_is(mods.v[i], "gpu.module") && !is_merged(mods.v[i]))
			move_module(mods.v[i], body_of(target), &t);
	for (int i = 0; fresh && i < launches.n; i++) {
		MlirStringRef root = mlirSymbolRefAttrGetRootReference(
			pb_ir_attr(launches.v[i], "kernel"));
		if (root.length != strlen(PB_CODEGEN_MODULE) ||
		    strncmp(root.data, PB_CODEGEN_MODULE, root.length))
			retarget(launches.v[i], &t);
	}
	for (int i = 0; i < mods.n; i++)
		if (pb_ir_op_is(mods.v[i], "gpu.module") && !is_merged(mods.v[i]))
			mlirOperationDestroy(mods.v[i]);
	sym_free(&t);
	pb_ir_ops_free(&mods);
	pb_ir_ops_free(&launches);
	return PB_OK;
}
