/* Register promotion of accumulations in global memory (docs/pb-tile.md,
 * "Accumulators"): in a band's body, a loop nest that reads and writes one
 * element of a buffer at the same subscripts in every iteration (a matmul
 * without bias accumulating into C[i, j] across k) keeps that element in a
 * private buffer instead, loaded before the nest and stored after it:
 *
 *   affine.for %k { C[i, j] = C[i, j] + A[i, k] * B[k, j] }
 * becomes
 *   acc[] = C[i, j]
 *   affine.for %k { acc[] = acc[] + A[i, k] * B[k, j] }
 *   C[i, j] = acc[]
 *
 * Only the kernel's arguments (global memory) are promoted. Legal when
 * nothing else in the nest may access the element: every
 * access of the nest to the buffer uses exactly those subscripts, defined
 * outside the nest, and every other buffer the nest accesses is another
 * root at every call of the kernel (an argument bound to a different
 * allocation, or a buffer of the kernel's own). The private buffer is a
 * memref.alloca of the band's body, so jamming gives each point its own
 * element, in registers. */
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "poly/poly.h"
#include "tile/internal.h"

#define MAXACC 64

/* An affine.load or affine.store and its memref. */
struct access {
	MlirOperation op;
	MlirValue mem;
	int store;
};

/* Walk callback: collect the accesses (any memref operation that is not
 * an affine.load/store counts as an unknown access: op set, mem null). */
static MlirWalkResult acc_cb(MlirOperation op, void *user)
{
	struct pb_ir_ops *l = user;
	for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); i++)
		if (mlirTypeIsAMemRef(mlirValueGetType(
			    mlirOperationGetOperand(op, i)))) {
			pb_ir_ops_push(l, op);
			break;
		}
	return MlirWalkResultAdvance;
}

/* Does access "op" use the same map and subscripts as "ref"? */
static int same_subscripts(MlirOperation op, MlirOperation ref)
{
	int so = pb_ir_op_is(op, "affine.store"), sr = pb_ir_op_is(ref, "affine.store");
	return mlirAttributeEqual(pb_ir_attr(op, "map"), pb_ir_attr(ref, "map")) &&
	       pb_ir_same_operands(op, so + 1, ref, sr + 1);
}

/* Are the subscript operands of access "op" defined outside "nest"? */
static int invariant(MlirOperation op, MlirOperation nest)
{
	int s = pb_ir_op_is(op, "affine.store");
	for (intptr_t i = s + 1; i < mlirOperationGetNumOperands(op); i++)
		if (pb_ir_is_inside(pb_ir_value_parent(
			    mlirOperationGetOperand(op, i)), nest))
			return 0;
	return 1;
}

/* The memref operand of affine access "op". */
static MlirValue mem_of(MlirOperation op)
{
	return mlirOperationGetOperand(op, pb_ir_op_is(op, "affine.store"));
}

/* Append the generic form of an affine.load of %m (or, when "store", an
 * affine.store of %v to it) at subscripts %s0 ... %s<nsub-1> through map
 * "map", "mty" the memref's type and "ety" its element type. */
static void generic_access(struct pb_buf *t, int store, const char *map,
			   const char *mty, const char *ety, intptr_t nsub)
{
	pb_buf_printf(t, "\"affine.%s\"(%s%%m", store ? "store" : "load",
		      store ? "%v, " : "");
	for (intptr_t i = 0; i < nsub; i++)
		pb_buf_printf(t, ", %%s%ld", (long)i);
	pb_buf_printf(t, ") {map = %s} : (", map);
	if (store)
		pb_buf_printf(t, "%s, ", ety);
	pb_buf_puts(t, mty);
	for (intptr_t i = 0; i < nsub; i++)
		pb_buf_puts(t, ", index");
	pb_buf_printf(t, ") -> %s\n", store ? "()" : ety);
}

/* Promote the element "ref" accesses in loop nest "nest" (checked). */
static int promote_one(struct pb_ctx *ctx, MlirBlock body, MlirOperation nest,
		       MlirOperation ref, struct pb_ir_ops *accs)
{
	MlirValue mem = mem_of(ref);
	struct pb_buf t = {0}, ty = {0};
	struct pb_ir_ops out = {0};
	int s = pb_ir_op_is(ref, "affine.store");
	intptr_t nsub = mlirOperationGetNumOperands(ref) - s - 1;
	MlirValue args[2 + 64];
	if (nsub > 64)
		return PB_OK;
	MlirType elem = mlirShapedTypeGetElementType(mlirValueGetType(mem));
	mlirTypePrint(mlirValueGetType(mem), pb_buf_mlir_callback, &ty);
	struct pb_buf et = {0}, map = {0};
	mlirTypePrint(elem, pb_buf_mlir_callback, &et);
	mlirAttributePrint(pb_ir_attr(ref, "map"), pb_buf_mlir_callback, &map);
	args[0] = mem;
	for (intptr_t i = 0; i < nsub; i++)
		args[1 + i] = mlirOperationGetOperand(ref, s + 1 + i);
	/* before the nest: acc = mem[...]; after: mem[...] = acc */
	pb_buf_printf(&t, "func.func @t(%%m: %s", ty.data);
	for (intptr_t i = 0; i < nsub; i++)
		pb_buf_printf(&t, ", %%s%ld: index", (long)i);
	pb_buf_printf(&t, ", %%acc: memref<%s>) {\n%%v = ", et.data);
	generic_access(&t, 0, map.data, ty.data, et.data, nsub);
	pb_buf_printf(&t, "affine.store %%v, %%acc[] : memref<%s>\n"
		      "return\n}\n", et.data);
	/* the private element at the start of the band's body (where
	 * pb-fuse puts the buffers it contracts) */
	struct pb_buf a = {0};
	pb_buf_printf(&a, "func.func @t() {\n%%acc = memref.alloca() : "
		      "memref<%s>\nreturn\n}\n", et.data);
	int rc = pb_ir_instantiate(ctx, a.data, mlirBlockGetFirstOperation(body),
				   0, NULL, mlirOperationGetLocation(nest), &out);
	pb_buf_free(&a);
	if (rc)
		goto done;
	MlirValue acc = mlirOperationGetResult(out.v[0], 0);
	pb_ir_ops_free(&out);
	args[1 + nsub] = acc;
	rc = pb_ir_instantiate(ctx, t.data, nest, 2 + (int)nsub, args,
			       mlirOperationGetLocation(nest), &out);
	pb_buf_free(&t);
	if (rc)
		goto done;
	pb_ir_ops_free(&out);
	/* the store after the nest */
	pb_buf_printf(&t, "func.func @t(%%m: %s, %%acc: memref<%s>", ty.data,
		      et.data);
	for (intptr_t i = 0; i < nsub; i++)
		pb_buf_printf(&t, ", %%s%ld: index", (long)i);
	pb_buf_printf(&t, ") {\n%%v = affine.load %%acc[] : memref<%s>\n",
		      et.data);
	generic_access(&t, 1, map.data, ty.data, et.data, nsub);
	pb_buf_puts(&t, "return\n}\n");
	MlirValue args2[2 + 64];
	args2[0] = mem;
	args2[1] = acc;
	for (intptr_t i = 0; i < nsub; i++)
		args2[2 + i] = args[1 + i];
	rc = pb_ir_instantiate(ctx, t.data, mlirOperationGetNextInBlock(nest),
			       2 + (int)nsub, args2,
			       mlirOperationGetLocation(nest), &out);
	if (rc)
		goto done;
	/* the nest's accesses go to the private element */
	for (int i = 0; i < accs->n; i++) {
		MlirOperation op = accs->v[i];
		if (!mlirValueEqual(mem_of(op), mem))
			continue;
		int st = pb_ir_op_is(op, "affine.store");
		struct pb_buf r = {0};
		if (st)
			pb_buf_printf(&r, "func.func @t(%%v: %s, %%acc: memref<%s>) "
				      "{\naffine.store %%v, %%acc[] : memref<%s>\n"
				      "return\n}\n", et.data, et.data, et.data);
		else
			pb_buf_printf(&r, "func.func @t(%%acc: memref<%s>) {\n"
				      "%%v = affine.load %%acc[] : memref<%s>\n"
				      "return\n}\n", et.data, et.data);
		MlirValue a[2] = {st ? mlirOperationGetOperand(op, 0) : acc, acc};
		struct pb_ir_ops made = {0};
		rc = pb_ir_instantiate(ctx, r.data, op, st ? 2 : 1, a,
				       mlirOperationGetLocation(op), &made);
		pb_buf_free(&r);
		if (rc == PB_OK && !st)
			mlirValueReplaceAllUsesOfWith(
				mlirOperationGetResult(op, 0),
				mlirOperationGetResult(made.v[0], 0));
		pb_ir_ops_free(&made);
		if (rc)
			break;
		mlirOperationDestroy(op);
		accs->v[i] = (MlirOperation){NULL};
	}
done:
	pb_buf_free(&t);
	pb_buf_free(&ty);
	pb_buf_free(&et);
	pb_buf_free(&map);
	pb_ir_ops_free(&out);
	return rc;
}

/* Promote what can be in loop nest "nest" of kernel "func". */
static int promote_nest(struct pb_ctx *ctx, MlirOperation module,
			MlirOperation func, MlirBlock body, MlirOperation nest)
{
	struct pb_ir_ops accs = {0};
	int rc = PB_OK;
	mlirOperationWalk(nest, acc_cb, &accs, MlirWalkPreOrder);
	for (int i = 0; i < accs.n && rc == PB_OK; i++) {
		MlirOperation ref = accs.v[i];
		if (mlirOperationIsNull(ref) || !pb_ir_op_is(ref, "affine.store"))
			continue;
		MlirValue mem = mem_of(ref);
		/* only global memory: the kernel's arguments (its own
		 * buffers are private already) */
		if (pb_kernel_arg_no(func, pb_poly_root(mem)) < 0 ||
		    mlirShapedTypeGetRank(mlirValueGetType(mem)) > 8 ||
		    !invariant(ref, nest))
			continue;
		int ok = 1;
		for (int j = 0; j < accs.n && ok; j++) {
			MlirOperation op = accs.v[j];
			if (mlirOperationIsNull(op))
				continue;
			int affine = pb_ir_op_is(op, "affine.load") ||
				     pb_ir_op_is(op, "affine.store");
			if (affine && mlirValueEqual(mem_of(op), mem)) {
				ok = same_subscripts(op, ref);
				continue;
			}
			/* any other memref operand must be another root */
			for (intptr_t k = 0; ok && k < mlirOperationGetNumOperands(op);
			     k++) {
				MlirValue v = mlirOperationGetOperand(op, k);
				if (mlirTypeIsAMemRef(mlirValueGetType(v)) &&
				    !pb_ir_is_inside(pb_ir_value_parent(pb_poly_root(v)),
						     nest))
					ok = !pb_kernel_may_alias(module, func, v, mem);
			}
		}
		if (ok)
			rc = promote_one(ctx, body, nest, ref, &accs);
	}
	pb_ir_ops_free(&accs);
	return rc;
}

int pb_tile_promote(struct pb_ctx *ctx, MlirOperation module,
		    MlirOperation func, const struct pb_kernel_band *b)
{
	struct pb_ir_ops ops = {0};
	int rc = PB_OK;
	pb_ir_block_ops(pb_kernel_band_body(b), &ops);
	for (int i = 0; i < ops.n && rc == PB_OK; i++)
		if (pb_ir_op_is(ops.v[i], "affine.for"))
			rc = promote_nest(ctx, module, func,
					  pb_kernel_band_body(b), ops.v[i]);
	pb_ir_ops_free(&ops);
	return rc;
}
