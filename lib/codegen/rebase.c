/* Kernel arguments addressed from the start of their slice. A kernel
 * that writes one slice of a concatenated buffer (DenseNet's layers
 * append 32 channels each to their block's feature map, Inception's
 * branches fill theirs) takes a view with a static layout offset,
 * memref<1x32x56x56xf32, strided<[802816, 3136, 56, 1], offset: 200704>>,
 * and adds that offset to every address it computes; kernels that differ
 * only in where their slice starts are then different kernels, each
 * lowered and compiled by LLVM on its own. Rebased, the argument's type
 * has offset 0 and the launch plan passes the slice's own address (a view
 * of the same root whose pointer is the old one plus the offset's bytes,
 * elem_offset 0): every element has the address it had, the kernels
 * differ no more, and dedup.c compiles them once.
 *
 * Only arguments whose every use addresses elements (loads, stores,
 * copies) are rebased: the type of nothing else depends on theirs. Only
 * the PTX path does it (after the launch plan is built, which it updates),
 * so the host IR that --emit=mlir prints, and runs on the CPU, keeps its
 * views. */
#include <stdlib.h>
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "codegen/internal.h"

#define MAXR 16

/* Ops that take a memref operand only to address its elements: their
 * result types do not depend on its layout. */
static const char *const addressing[] = {
	"memref.load", "memref.store", "vector.load", "vector.store",
	"vector.transfer_read", "vector.transfer_write",
	"vector.maskedload", "vector.maskedstore",
	"nvgpu.device_async_copy", "nvgpu.ldmatrix",
	"gpu.subgroup_mma_load_matrix", "gpu.subgroup_mma_store_matrix",
	NULL};

/* Does every use of "v" address its elements? */
static int only_addressed(MlirValue v)
{
	for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u);
	     u = mlirOpOperandGetNextUse(u)) {
		MlirOperation o = mlirOpOperandGetOwner(u);
		int ok = 0;
		for (int i = 0; addressing[i] && !ok; i++)
			ok = pb_ir_op_is(o, addressing[i]);
		if (!ok)
			return 0;
	}
	return 1;
}

/* The static strides and nonzero static offset of memref type "t" (of
 * rank at most MAXR, static shape) into "strides" and "offset"; 0 when it
 * has them. */
static int static_offset(MlirType t, int64_t *strides, int64_t *offset)
{
	if (!mlirTypeIsAMemRef(t) || !mlirShapedTypeHasStaticShape(t) ||
	    mlirShapedTypeGetRank(t) > MAXR ||
	    mlirLogicalResultIsFailure(
		    mlirMemRefTypeGetStridesAndOffset(t, strides, offset)) ||
	    mlirShapedTypeIsDynamicStrideOrOffset(*offset) || *offset <= 0)
		return -1;
	for (intptr_t i = 0; i < mlirShapedTypeGetRank(t); i++)
		if (mlirShapedTypeIsDynamicStrideOrOffset(strides[i]))
			return -1;
	return 0;
}

/* Do all launches "l" ("n" of them, at least one) of a kernel of "nargs"
 * arguments pass as argument "i" a view with layout offset "offset"? */
static int views_at(const struct pb_plan *p, struct pb_plan_launch **l,
		    int n, int nargs, int i, int64_t offset)
{
	for (int k = 0; k < n; k++) {
		if (l[k]->nargs != nargs ||
		    l[k]->args[i].kind != PB_PLAN_ARG_BUFFER)
			return 0;
		int b = l[k]->args[i].buffer;
		if (b < 0 || b >= p->nbuffers ||
		    p->buffers[b].kind != PB_PLAN_VIEW ||
		    p->buffers[b].elem_offset != offset ||
		    !pb_plan_dtype_size(p->buffers[b].dtype))
			return 0;
	}
	return 1;
}

/* Does a launch of "p" pass buffer "b" other than as argument "i" of
 * the launches "l" ("n")? */
static int used_elsewhere(const struct pb_plan *p, int b,
			  struct pb_plan_launch *const *l, int n, int i)
{
	for (int k = 0; k < p->nlaunches; k++) {
		const struct pb_plan_launch *x = &p->launches[k];
		int ours = 0;
		for (int j = 0; j < n && !ours; j++)
			ours = l[j] == x;
		for (int a = 0; a < x->nargs; a++)
			if (x->args[a].kind == PB_PLAN_ARG_BUFFER &&
			    x->args[a].buffer == b && !(ours && a == i))
				return 1;
	}
	return 0;
}

/* View "b" of "p" with its pointer "offset" elements on and its layout
 * offset that much less: "b" itself, changed, when no other argument
 * passes it; else an earlier such view, or a new one; -1 on failure. */
static int shifted_view(struct pb_plan *p, int b, int64_t offset,
			struct pb_plan_launch *const *l, int n, int i)
{
	struct pb_plan_buffer *v = &p->buffers[b];
	int64_t bytes = v->offset + offset * pb_plan_dtype_size(v->dtype);
	int64_t elem = v->elem_offset - offset;
	if (!used_elsewhere(p, b, l, n, i)) {
		v->offset = bytes;
		v->elem_offset = elem;
		return b;
	}
	for (int k = 0; k < p->nbuffers; k++) {
		const struct pb_plan_buffer *w = &p->buffers[k];
		if (w->kind == PB_PLAN_VIEW && w->base == v->base &&
		    w->offset == bytes && w->elem_offset == elem &&
		    !strcmp(w->dtype, v->dtype) && w->rank == v->rank &&
		    !memcmp(w->shape, v->shape, v->rank * sizeof(int64_t)) &&
		    !memcmp(w->strides, v->strides, v->rank * sizeof(int64_t)))
			return k;
	}
	/* copies: adding a buffer may move p->buffers */
	int rank = v->rank, base = v->base;
	int64_t shape[MAXR], strides[MAXR];
	memcpy(shape, v->shape, rank * sizeof(int64_t));
	memcpy(strides, v->strides, rank * sizeof(int64_t));
	char *dtype = strdup(v->dtype);
	int id = pb_plan_add_view(p, base, dtype, rank, shape, strides, bytes,
				  elem);
	free(dtype);
	return id;
}

/* Rebase the arguments of kernel "f" whose launches are "l" ("n"). */
static void rebase_kernel(struct pb_plan *p, MlirOperation f,
			  struct pb_plan_launch **l, int n)
{
	MlirBlock entry = mlirRegionGetFirstBlock(mlirOperationGetRegion(f, 0));
	int nargs = pb_ir_func_num_args(f), changed = 0;
	for (int i = 0; i < nargs; i++) {
		MlirValue a = mlirBlockGetArgument(entry, i);
		MlirType t = mlirValueGetType(a);
		int64_t strides[MAXR], offset;
		if (static_offset(t, strides, &offset) || !only_addressed(a) ||
		    !views_at(p, l, n, nargs, i, offset))
			continue;
		int rank = (int)mlirShapedTypeGetRank(t);
		int64_t shape[MAXR];
		for (int d = 0; d < rank; d++)
			shape[d] = mlirShapedTypeGetDimSize(t, d);
		MlirAttribute layout = mlirStridedLayoutAttrGet(
			mlirTypeGetContext(t), 0, rank, strides);
		MlirType nt = mlirMemRefTypeGet(mlirShapedTypeGetElementType(t),
						rank, shape, layout,
						mlirMemRefTypeGetMemorySpace(t));
		/* every launch's view moved: those that pass it alone, in
		   place (once), the others to a view of their own */
		int ok = 1;
		for (int k = 0; k < n && ok; k++) {
			int b = l[k]->args[i].buffer;
			if (p->buffers[b].elem_offset == offset)
				ok = (l[k]->args[i].buffer = shifted_view(
					      p, b, offset, l, n, i)) >= 0;
		}
		if (!ok)
			abort(); /* views_at checked the views */
		mlirValueSetType(a, nt);
		changed = 1;
	}
	if (!changed)
		return;
	/* the function type follows the arguments */
	pb_ir_func_retype(f);
}

void pb_codegen_rebase(MlirModule m, struct pb_plan *p)
{
	struct pb_plan_launch **l =
		pb_xrealloc(NULL, p->nlaunches ? p->nlaunches : 1, sizeof(*l));
	for (MlirOperation mod = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
	     !mlirOperationIsNull(mod); mod = mlirOperationGetNextInBlock(mod)) {
		if (!pb_ir_op_is(mod, "gpu.module"))
			continue;
		MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(mod, 0));
		for (MlirOperation f = mlirBlockGetFirstOperation(b);
		     !mlirOperationIsNull(f); f = mlirOperationGetNextInBlock(f)) {
			if (!pb_ir_op_is(f, "gpu.func") ||
			    mlirAttributeIsNull(pb_ir_attr(f, "gpu.kernel")))
				continue;
			MlirStringRef name = pb_ir_str_attr(f, "sym_name");
			int n = 0;
			for (int k = 0; k < p->nlaunches; k++)
				if (strlen(p->launches[k].kernel) == name.length &&
				    !strncmp(p->launches[k].kernel, name.data,
					     name.length))
					l[n++] = &p->launches[k];
			if (n)
				rebase_kernel(p, f, l, n);
		}
	}
	free(l);
}
