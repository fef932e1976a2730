/* The host launch plan: an abstract run of @main (after mapping, kernel
 * outlining and inlining) that records buffers, views and launches. */
#include <stdlib.h>
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "codegen/internal.h"
#include "core/tensor.h"
#include "ir/contract.h"

#define MAXR 64

/* The plan being built and what the host values of @main denote. */
struct host {
	struct pb_ctx *ctx;
	struct pb_plan *p;
	struct binding {
		MlirValue v;
		int buf;
	} *b; /* host value "v" denotes plan buffer "buf" */
	int n, cap;
	int depth;
	int calls; /* a launch per call of a pb.kernel function (the tile
		      backend, before any mapping) */
};

/* Record in "h" that value "v" denotes plan buffer "buf". */
static void bind(struct host *h, MlirValue v, int buf)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 64;
		h->b = pb_xrealloc(h->b, h->cap, sizeof(*h->b));
	}
	h->b[h->n++] = (struct binding){v, buf};
}

/* The buffer bound to "v", or -1. */
static int lookup(const struct host *h, MlirValue v)
{
	for (int i = h->n - 1; i >= 0; i--)
		if (mlirValueEqual(h->b[i].v, v))
			return h->b[i].buf;
	return -1;
}

/* Append the name of "op" ("memref.alloc") to "b". */
static void op_name(MlirOperation op, struct pb_buf *b)
{
	MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
	pb_buf_append(b, n.data, n.length);
}

/* Report "msg" about "op", naming it. */
static int fail_op(struct host *h, MlirOperation op, const char *msg)
{
	struct pb_buf n = {0};
	op_name(op, &n);
	pb_error_at(h->ctx, mlirOperationGetLocation(op), "cannot run '%s' on "
		    "the host: %s", n.data, msg);
	pb_buf_free(&n);
	return PB_ERR;
}

/* The plan dtype name of element type "t", or NULL. */
static const char *dtype_of(MlirType t)
{
	if (mlirTypeIsAF32(t))
		return "f32";
	if (mlirTypeIsAF16(t))
		return "f16";
	if (mlirTypeIsABF16(t))
		return "bf16";
	if (mlirTypeIsAF64(t))
		return "f64";
	if (mlirTypeIsAIndex(t))
		return "index";
	if (!mlirTypeIsAInteger(t))
		return NULL;
	switch (mlirIntegerTypeGetWidth(t)) {
	case 1:
		return "bool";
	case 8:
		return mlirIntegerTypeIsUnsigned(t) ? "u8" : "i8";
	case 16:
		return mlirIntegerTypeIsUnsigned(t) ? "u16" : "i16";
	case 32:
		return mlirIntegerTypeIsUnsigned(t) ? "u32" : "i32";
	case 64:
		return mlirIntegerTypeIsUnsigned(t) ? "u64" : "i64";
	}
	return NULL;
}

/* The static layout of a memref type. */
struct layout {
	const char *dtype;
	int rank;
	int64_t shape[MAXR], strides[MAXR], offset;
	char why[128]; /* why it is too large */
};

/* The static layout of memref type "t" into "l": dtype, rank, shape,
 * strides and offset; -1 (with "why" set) when it is not fully static,
 * -2 when it is larger than PB_MAX_BYTES. */
static int layout_of(MlirType t, struct layout *l, const char **why)
{
	*why = "expected a memref with a static shape and layout";
	if (!mlirTypeIsAMemRef(t) || !mlirShapedTypeHasStaticShape(t) ||
	    mlirShapedTypeGetRank(t) > MAXR)
		return -1;
	l->dtype = dtype_of(mlirShapedTypeGetElementType(t));
	if (!l->dtype) {
		*why = "unsupported element type";
		return -1;
	}
	l->rank = mlirShapedTypeGetRank(t);
	for (int i = 0; i < l->rank; i++)
		l->shape[i] = mlirShapedTypeGetDimSize(t, i);
	char big[80];
	if (pb_tensor_size_ok(pb_plan_dtype_size(l->dtype), l->rank, l->shape,
			      NULL, big, sizeof(big))) {
		snprintf(l->why, sizeof(l->why), "memref is too large: %s",
			 big);
		*why = l->why;
		return -2;
	}
	if (mlirLogicalResultIsFailure(mlirMemRefTypeGetStridesAndOffset(
		    t, l->strides, &l->offset)))
		return -1;
	int64_t s = 1;
	for (int i = l->rank - 1; i >= 0 && s; i--)
		s *= l->shape[i];
	if (!s) {
		/* no elements: MLIR leaves the strides dynamic */
		l->offset = 0;
		for (int i = l->rank - 1, t = 1; i >= 0; i--)
			l->strides[i] = t, t *= l->shape[i];
	}
	if (mlirShapedTypeIsDynamicStrideOrOffset(l->offset))
		return -1;
	for (int i = 0; i < l->rank; i++)
		if (mlirShapedTypeIsDynamicStrideOrOffset(l->strides[i]))
			return -1;
	return 0;
}

/* Is layout "l" the identity (row-major, offset 0)? */
static int is_row_major(const struct layout *l)
{
	int64_t s = 1;
	for (int i = l->rank - 1; i >= 0; i--) {
		if (l->shape[i] != 1 && l->strides[i] != s)
			return 0;
		s *= l->shape[i];
	}
	return l->offset == 0;
}

/* Add the arguments of @main "f" as input, param and output buffers. */
static int add_args(struct host *h, MlirOperation f)
{
	MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(f, 0));
	MlirAttribute all = pb_ir_attr(f, "arg_attrs");
	for (intptr_t i = 0; i < mlirBlockGetNumArguments(body); i++) {
		MlirValue v = mlirBlockGetArgument(body, i);
		MlirAttribute d = {NULL}, name = {NULL}, param = {NULL};
		MlirAttribute dt = {NULL};
		struct layout l;
		const char *why;
		if (!mlirAttributeIsNull(all) && i < mlirArrayAttrGetNumElements(all))
			d = mlirArrayAttrGetElement(all, i);
		if (!mlirAttributeIsNull(d) && mlirAttributeIsADictionary(d)) {
			name = mlirDictionaryAttrGetElementByName(d, pb_str(PB_ATTR_NAME));
			param = mlirDictionaryAttrGetElementByName(d, pb_str(PB_ATTR_PARAM));
			dt = mlirDictionaryAttrGetElementByName(d, pb_str(PB_ATTR_DTYPE));
		}
		int out = !mlirAttributeIsNull(d) && mlirAttributeIsADictionary(d) &&
			  !mlirAttributeIsNull(mlirDictionaryAttrGetElementByName(
				  d, pb_str(PB_ATTR_OUTPUT)));
		int rc = layout_of(mlirValueGetType(v), &l, &why);
		if (rc || !is_row_major(&l)) {
			pb_error_at(h->ctx, mlirOperationGetLocation(f),
				    "argument %d of @main: %s", (int)i,
				    rc == -2 ? why : "expected a memref with a "
				    "static shape and the identity layout");
			return PB_ERR;
		}
		struct pb_buf n = {0};
		MlirAttribute s = !mlirAttributeIsNull(param) ? param : name;
		enum pb_plan_kind k = !mlirAttributeIsNull(param) ? PB_PLAN_PARAM
				      : out			 ? PB_PLAN_OUTPUT
								 : PB_PLAN_INPUT;
		if (!mlirAttributeIsNull(s) && mlirAttributeIsAString(s)) {
			MlirStringRef r = mlirStringAttrGetValue(s);
			pb_buf_append(&n, r.data, r.length);
		} else {
			pb_buf_printf(&n, "arg%d", (int)i);
		}
		/* an unsigned type of the signless element type (pb.dtype) */
		struct pb_buf u = {0};
		if (!mlirAttributeIsNull(dt) && mlirAttributeIsAString(dt)) {
			MlirStringRef r = mlirStringAttrGetValue(dt);
			pb_buf_append(&u, r.data, r.length);
			pb_buf_append(&u, "", 0);
			if (pb_plan_dtype_size(u.data) !=
			    pb_plan_dtype_size(l.dtype)) {
				pb_buf_free(&u);
				pb_buf_free(&n);
				pb_error_at(h->ctx, mlirOperationGetLocation(f),
					    "argument %d of @main: its "
					    PB_ATTR_DTYPE " does not fit its "
					    "element type %s", (int)i, l.dtype);
				return PB_ERR;
			}
		}
		/* a weight stored transposed (pb.perm) */
		int perm[PB_MAX_RANK];
		int pr = l.rank <= PB_MAX_RANK
				 ? pb_contract_perm_of(d, l.rank, perm) : -1;
		if (pr < 0 || (pr > 0 && k != PB_PLAN_PARAM)) {
			pb_buf_free(&u);
			pb_buf_free(&n);
			pb_error_at(h->ctx, mlirOperationGetLocation(f),
				    "argument %d of @main: %s", (int)i,
				    pr < 0 ? "malformed " PB_ATTR_PERM
					     " (expected array<i64> permuting "
					     "its dimensions)"
					   : PB_ATTR_PERM " on an argument "
					     "that is no " PB_ATTR_PARAM);
			return PB_ERR;
		}
		int id = pb_plan_add_buffer(h->p, k, n.data, i,
					    u.data ? u.data : l.dtype, l.rank,
					    l.shape);
		if (pr > 0 && id >= 0)
			pb_plan_set_perm(h->p, id, perm);
		bind(h, v, id);
		pb_buf_free(&u);
		pb_buf_free(&n);
	}
	return PB_OK;
}

/* A buffer for the memref result of allocation "op". */
static int do_alloc(struct host *h, MlirOperation op)
{
	struct layout l;
	const char *why;
	MlirValue v = mlirOperationGetResult(op, 0);
	int rc = mlirOperationGetNumOperands(op)
			 ? -1
			 : layout_of(mlirValueGetType(v), &l, &why);
	if (rc)
		return fail_op(h, op, rc == -2 ? why
					       : "expected a static shape");
	if (!is_row_major(&l))
		return fail_op(h, op, "expected the identity layout");
	bind(h, v, pb_plan_add_buffer(h->p, PB_PLAN_SCRATCH, NULL, -1, l.dtype,
				      l.rank, l.shape));
	return PB_OK;
}

/* A view for the result of view operation "op" of its operand 0. */
static int do_view(struct host *h, MlirOperation op)
{
	struct layout l;
	const char *why;
	if (!mlirOperationGetNumResults(op))
		return PB_OK; /* assume_alignment without a result */
	MlirValue v = mlirOperationGetResult(op, 0);
	int src = lookup(h, mlirOperationGetOperand(op, 0));
	int64_t shift = 0;
	if (src < 0)
		return fail_op(h, op, "its source is no known buffer");
	if (layout_of(mlirValueGetType(v), &l, &why))
		return fail_op(h, op, why);
	if (pb_ir_op_is(op, "memref.view") &&
	    pb_ir_const_int(mlirOperationGetOperand(op, 1), &shift))
		return fail_op(h, op, "expected a constant byte shift");
	const struct pb_plan_buffer *s = &h->p->buffers[src];
	int base = s->kind == PB_PLAN_VIEW ? s->base : src;
	int id = pb_plan_add_view(h->p, base, l.dtype, l.rank, l.shape,
				  l.strides, s->offset + shift, l.offset);
	if (id < 0)
		return fail_op(h, op, "unsupported view");
	bind(h, v, id);
	return PB_OK;
}

/* The plan type of scalar "t", or NULL. */
static const char *scalar_type(MlirType t)
{
	if (mlirTypeIsAIndex(t))
		return "index";
	if (mlirTypeIsAF32(t))
		return "f32";
	if (mlirTypeIsAF64(t))
		return "f64";
	if (mlirTypeIsAInteger(t) && mlirIntegerTypeGetWidth(t) == 32)
		return "i32";
	if (mlirTypeIsAInteger(t) && mlirIntegerTypeGetWidth(t) == 64)
		return "i64";
	return NULL;
}

/* Add kernel argument "v" of launch "op" to "l". */
static int launch_arg(struct host *h, MlirOperation op,
		      struct pb_plan_launch *l, MlirValue v)
{
	const char *type = scalar_type(mlirValueGetType(v));
	int buf = lookup(h, v);
	if (buf >= 0) {
		pb_plan_launch_add_buffer(l, buf);
		return PB_OK;
	}
	MlirOperation d = mlirValueIsAOpResult(v) ? mlirOpResultGetOwner(v)
						  : (MlirOperation){NULL};
	MlirAttribute a = mlirOperationIsNull(d) ? (MlirAttribute){NULL}
						 : pb_ir_attr(d, "value");
	if (!mlirOperationIsNull(d) && pb_ir_op_is(d, "memref.get_global"))
		return fail_op(h, op, "a constant buffer (memref.get_global) "
				      "reaches a kernel through a view or a "
				      "shared function");
	if (!type || mlirOperationIsNull(d) || !pb_ir_op_is(d, "arith.constant"))
		return fail_op(h, op, "a kernel argument is neither a buffer "
				      "nor a constant scalar");
	if (mlirAttributeIsAFloat(a))
		pb_plan_launch_add_scalar(l, type, 0, mlirFloatAttrGetValueDouble(a));
	else
		pb_plan_launch_add_scalar(l, type, mlirIntegerAttrGetValueInt(a), 0);
	return PB_OK;
}

/* Append the names of the pb.nodes array "nodes" (may be null) to the
 * nodes of launch "l". */
static void add_nodes(struct pb_plan_launch *l, MlirAttribute nodes)
{
	int nn = !mlirAttributeIsNull(nodes) && mlirAttributeIsAArray(nodes)
			 ? (int)mlirArrayAttrGetNumElements(nodes)
			 : 0;
	for (int i = 0; i < nn; i++) {
		MlirAttribute s = mlirArrayAttrGetElement(nodes, i);
		if (!mlirAttributeIsAString(s))
			continue;
		MlirStringRef r = mlirStringAttrGetValue(s);
		l->nodes = realloc(l->nodes, (l->nnodes + 2) * sizeof(char *));
		l->nodes[l->nnodes++] = strndup(r.data, r.length);
	}
}

/* A launch for gpu.launch_func "op". */
static int do_launch(struct host *h, MlirOperation op)
{
	MlirAttribute seg = pb_ir_attr(op, "operandSegmentSizes");
	MlirAttribute nodes = pb_contract_nodes(op);
	MlirStringRef origin = pb_contract_origin(op);
	MlirStringRef kernel = mlirSymbolRefAttrGetLeafReference(
		pb_ir_attr(op, "kernel"));
	int64_t seg_v[16] = {0}, sizes[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, smem = 0;
	int nseg = mlirDenseArrayGetNumElements(seg);
	/* async deps, grid x y z, block x y z, cluster x y z, dynamic shared
	 * memory, kernel operands, async object */
	if (nseg != 13)
		return fail_op(h, op, "unexpected operand segments");
	for (int i = 0; i < nseg; i++)
		seg_v[i] = mlirDenseI32ArrayGetElement(seg, i);
	if (seg_v[0] || seg_v[nseg - 1])
		return fail_op(h, op, "asynchronous launches are not supported");
	int pos = 0;
	for (int i = 1; i <= 10; i++)
		for (int j = 0; j < seg_v[i]; j++, pos++)
			if ((i <= 9 ? pb_ir_const_int(mlirOperationGetOperand(op, pos),
						&sizes[i - 1])
				    : pb_ir_const_int(mlirOperationGetOperand(op, pos),
						&smem)))
				return fail_op(h, op, "grid, block and shared "
						      "memory sizes must be "
						      "constants");
	if (sizes[6] * sizes[7] * sizes[8] != 1)
		return fail_op(h, op, "thread block clusters are not supported");
	struct pb_buf k = {0}, o = {0};
	pb_buf_append(&k, kernel.data, kernel.length);
	if (origin.data)
		pb_buf_append(&o, origin.data, origin.length);
	struct pb_plan_launch *l = pb_plan_add_launch(
		h->p, k.data, origin.data ? o.data : NULL, 0, NULL, sizes,
		sizes + 3, smem);
	add_nodes(l, nodes);
	pb_buf_free(&k);
	pb_buf_free(&o);
	int rc = PB_OK;
	for (int j = 0; j < seg_v[11] && rc == PB_OK; j++, pos++)
		rc = launch_arg(h, op, l, mlirOperationGetOperand(op, pos));
	return rc;
}

static int run_func(struct host *h, MlirOperation f);

/* A call "op" of kernel function "f" as one launch of a kernel named as
 * "f", its arguments the call's operands; the grid and block are 1
 * until the backend that compiles "f" knows them. */
static int call_launch(struct host *h, MlirOperation op, MlirOperation f)
{
	MlirStringRef name = mlirSymbolRefAttrGetLeafReference(
		pb_ir_attr(op, "callee"));
	MlirAttribute nodes = pb_contract_nodes(f);
	int64_t one[3] = {1, 1, 1};
	struct pb_buf n = {0};
	pb_buf_append(&n, name.data, name.length);
	struct pb_plan_launch *l = pb_plan_add_launch(h->p, n.data, n.data, 0,
						      NULL, one, one, 0);
	pb_buf_free(&n);
	add_nodes(l, nodes);
	int rc = PB_OK;
	for (intptr_t i = 0; i < mlirOperationGetNumOperands(op) && rc == PB_OK;
	     i++)
		rc = launch_arg(h, op, l, mlirOperationGetOperand(op, i));
	return rc;
}

/* A call "op": run the callee with its arguments bound to the buffers of
 * the operands. */
static int do_call(struct host *h, MlirOperation op)
{
	MlirAttribute callee = pb_ir_attr(op, "callee");
	MlirOperation parent = mlirOperationGetParentOperation(op);
	while (!pb_ir_op_is(parent, "builtin.module"))
		parent = mlirOperationGetParentOperation(parent);
	MlirOperation f = pb_ir_lookup_func_ref(mlirModuleFromOperation(parent),
			mlirSymbolRefAttrGetLeafReference(callee));
	if (mlirOperationIsNull(f) || h->depth > 32 ||
	    mlirOperationGetNumResults(op) ||
	    mlirRegionIsNull(mlirOperationGetRegion(f, 0)))
		return fail_op(h, op, "only calls of defined functions without "
				      "results are supported");
	MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(f, 0));
	if (mlirBlockIsNull(body))
		return fail_op(h, op, "the callee has no body");
	if (h->calls && pb_contract_is_kernel(f))
		return call_launch(h, op, f);
	for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); i++) {
		int b = lookup(h, mlirOperationGetOperand(op, i));
		if (b >= 0)
			bind(h, mlirBlockGetArgument(body, i), b);
	}
	h->depth++;
	int rc = run_func(h, f);
	h->depth--;
	return rc;
}

/* Run the host operations of function "f". */
static int run_func(struct host *h, MlirOperation f)
{
	MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(f, 0));
	static const char *views[] = {
		"memref.subview", "memref.collapse_shape", "memref.expand_shape",
		"memref.reinterpret_cast", "memref.cast", "memref.view",
		"memref.assume_alignment", NULL};
	if (!mlirBlockIsNull(mlirBlockGetNextInRegion(body)))
		return fail_op(h, f, "expected a single block");
	for (MlirOperation op = mlirBlockGetFirstOperation(body);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
		int rc = PB_OK, view = 0;
		for (int i = 0; views[i]; i++)
			view |= pb_ir_op_is(op, views[i]);
		if (view)
			rc = do_view(h, op);
		else if (pb_ir_op_is(op, "memref.alloc") ||
			 pb_ir_op_is(op, "memref.alloca"))
			rc = do_alloc(h, op);
		else if (pb_ir_op_is(op, "gpu.launch_func"))
			rc = do_launch(h, op);
		else if (pb_ir_op_is(op, "func.call"))
			rc = do_call(h, op);
		else if (pb_ir_op_is(op, "func.return"))
			break;
		else if (!pb_ir_op_is(op, "memref.dealloc") &&
			 !pb_ir_op_is(op, "memref.get_global") &&
			 !pb_codegen_op_has_prefix(op, "arith."))
			rc = fail_op(h, op, "not a buffer, view or launch");
		if (rc)
			return rc;
	}
	return PB_OK;
}

/* The plan of @main of "m"; with "calls", one launch per call of a
 * kernel function. */
static struct pb_plan *plan(struct pb_ctx *ctx, MlirModule m, int calls)
{
	MlirOperation main = pb_ir_lookup_func(m, "main");
	MlirStringRef src = pb_contract_source(m);
	struct pb_buf s = {0};
	if (src.data)
		pb_buf_append(&s, src.data, src.length);
	struct host h = {ctx, pb_plan_alloc(ctx->arch, src.data ? s.data : NULL),
			 NULL, 0, 0, 0, calls};
	pb_buf_free(&s);
	int rc = PB_OK;
	if (mlirOperationIsNull(main)) {
		pb_error_at(ctx, mlirOperationGetLocation(mlirModuleGetOperation(m)),
			    "no func.func @main in the module");
		rc = PB_ERR;
	} else if (mlirFunctionTypeGetNumResults(mlirTypeAttrGetValue(
			   pb_ir_attr(main, "function_type")))) {
		pb_error_at(ctx, mlirOperationGetLocation(main),
			    "@main must return nothing (outputs are arguments "
			    "with pb.output)");
		rc = PB_ERR;
	}
	if (rc == PB_OK)
		rc = add_args(&h, main);
	if (rc == PB_OK)
		rc = run_func(&h, main);
	char err[256];
	if (rc == PB_OK && pb_plan_check(h.p, err, sizeof(err))) {
		pb_error(ctx, "internal: inconsistent launch plan: %s", err);
		rc = PB_ERR;
	}
	free(h.b);
	if (rc) {
		pb_plan_free(h.p);
		return NULL;
	}
	return h.p;
}

struct pb_plan *pb_codegen_plan(struct pb_ctx *ctx, MlirModule m)
{
	return plan(ctx, m, 0);
}

struct pb_plan *pb_codegen_plan_calls(struct pb_ctx *ctx, MlirModule m)
{
	return plan(ctx, m, 1);
}
