/* Concatenation in place (docs/pb-fuse.md, "Concatenation").
 *
 * Bufferized as it is, tensor.concat allocates its result and copies
 * every operand into its slice: a kernel per operand, and DenseNet's
 * blocks, where layer k concatenates the block input and the k features
 * so far (each concat the one before it plus one operand), copy O(L^2)
 * feature maps. Before bufferization each concat becomes insertions into
 * one tensor:
 *
 *	%c1 = tensor.concat dim(1) %x, %f1        %E = tensor.empty  (whole block)
 *	...                                 ->    %t1 = insert_slice %x into %E
 *	%c2 = tensor.concat dim(1) %x, %f1, %f2   %t2 = insert_slice %f1 into %t1
 *	                                          %c1 = extract_slice %t2 (prefix)
 *	                                          ...
 *	                                          %t3 = insert_slice %f2 into %t2
 *	                                          %c2 = %t3
 *
 * A concat whose operands extend those of an earlier one (a prefix, along
 * the same dimension) joins that one's chain; the chain's tensor has the
 * type of its last concat, each earlier concat is the prefix of it that
 * it covers, and each operand is inserted once. Upstream
 * eliminate-empty-tensors then lets the producer of an operand used only
 * there write straight into its slice, and one-shot bufferization keeps
 * the chain in one buffer (it copies where that would be wrong, so the
 * rewrite never changes a value). */
#include <stdlib.h>
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "fuse/internal.h"
#include "ir/ir.h"

/* A chain of concats: "op" (n of them, in block order), the last one's
 * result type is the type of the whole. */
struct chain {
	int n;
	MlirOperation *op;
};

/* The dimension attribute of tensor.concat "op". */
static int64_t concat_dim(MlirOperation op)
{
	return mlirIntegerAttrGetValueInt(pb_ir_attr(op, "dim"));
}

/* Does concat "b" extend concat "a": the same dimension and rank, and
 * a's operands the first ones of b's (fewer of them)? */
static int extends(MlirOperation a, MlirOperation b)
{
	intptr_t na = mlirOperationGetNumOperands(a);
	intptr_t nb = mlirOperationGetNumOperands(b);
	if (na >= nb || concat_dim(a) != concat_dim(b))
		return 0;
	for (intptr_t i = 0; i < na; i++)
		if (!mlirValueEqual(mlirOperationGetOperand(a, i),
				    mlirOperationGetOperand(b, i)))
			return 0;
	return 1;
}

/* Print "tensor<...>" type of "v" into "out" (reset first). */
static void type_of(MlirValue v, struct pb_buf *out)
{
	out->len = 0;
	if (out->data)
		out->data[0] = 0;
	pb_ir_type_print(mlirValueGetType(v), out);
}

/* Print the offsets, sizes and unit strides of the slice of shape
 * "type" at offset "off" along "dim". */
static void slice_of(struct pb_buf *b, MlirType type, int64_t dim,
		     int64_t off)
{
	intptr_t r = mlirShapedTypeGetRank(type);
	pb_buf_puts(b, "[");
	for (intptr_t i = 0; i < r; i++)
		pb_buf_printf(b, "%s%lld", i ? ", " : "",
			      (long long)(i == dim ? off : 0));
	pb_buf_puts(b, "] [");
	for (intptr_t i = 0; i < r; i++)
		pb_buf_printf(b, "%s%lld", i ? ", " : "",
			      (long long)mlirShapedTypeGetDimSize(type, i));
	pb_buf_puts(b, "] [");
	for (intptr_t i = 0; i < r; i++)
		pb_buf_printf(b, "%s1", i ? ", " : "");
	pb_buf_puts(b, "]");
}

/* Instantiate the one-operation template "text" (a func.func @t on
 * "nargs" arguments "args" returning the result of its only operation)
 * before "before" at "loc"; returns the new result, or a null value. */
static MlirValue emit(struct pb_ctx *ctx, const char *text,
		      MlirOperation before, int nargs, const MlirValue *args,
		      MlirLocation loc)
{
	struct pb_ir_ops out = {0};
	MlirValue r = {NULL};
	if (pb_ir_instantiate(ctx, text, before, nargs, args, loc, &out) ==
		    PB_OK &&
	    out.n == 1)
		r = mlirOperationGetResult(out.v[0], 0);
	pb_ir_ops_free(&out);
	return r;
}

/* Rewrite chain "c" of "body" into insertions into one tensor (the file
 * comment). Returns PB_OK or PB_ERR (an internal error). */
static int rewrite(struct pb_ctx *ctx, MlirBlock body, const struct chain *c)
{
	MlirOperation last = c->op[c->n - 1];
	MlirValue whole = mlirOperationGetResult(last, 0);
	MlirType wt = mlirValueGetType(whole);
	int64_t dim = concat_dim(last);
	struct pb_buf tw = {0}, tv = {0}, text = {0};
	type_of(whole, &tw);
	pb_buf_printf(&text,
		      "func.func @t() -> %s {\n"
		      "  %%e = tensor.empty() : %s\n  return %%e : %s\n}\n",
		      tw.data, tw.data, tw.data);
	MlirValue t = emit(ctx, text.data, mlirBlockGetFirstOperation(body), 0,
			   NULL, mlirOperationGetLocation(c->op[0]));
	int done = 0, rc = mlirValueIsNull(t) ? PB_ERR : PB_OK;
	int64_t off = 0;
	for (int j = 0; j < c->n && rc == PB_OK; j++) {
		MlirOperation op = c->op[j];
		MlirLocation loc = mlirOperationGetLocation(op);
		int n = (int)mlirOperationGetNumOperands(op);
		for (; done < n && rc == PB_OK; done++) {
			MlirValue v = mlirOperationGetOperand(op, done);
			MlirType vt = mlirValueGetType(v);
			MlirValue args[2] = {v, t};
			type_of(v, &tv);
			text.len = 0;
			pb_buf_printf(&text,
				      "func.func @t(%%v: %s, %%d: %s) -> %s {\n"
				      "  %%r = tensor.insert_slice %%v into %%d",
				      tv.data, tw.data, tw.data);
			slice_of(&text, vt, dim, off);
			pb_buf_printf(&text,
				      " : %s into %s\n  return %%r : %s\n}\n",
				      tv.data, tw.data, tw.data);
			t = emit(ctx, text.data, op, 2, args, loc);
			rc = mlirValueIsNull(t) ? PB_ERR : PB_OK;
			off += mlirShapedTypeGetDimSize(vt, dim);
		}
		if (rc != PB_OK)
			break;
		MlirValue res = mlirOperationGetResult(op, 0), r = t;
		if (j + 1 < c->n) {
			MlirValue args[1] = {t};
			type_of(res, &tv);
			text.len = 0;
			pb_buf_printf(&text,
				      "func.func @t(%%d: %s) -> %s {\n"
				      "  %%r = tensor.extract_slice %%d",
				      tw.data, tv.data);
			slice_of(&text, mlirValueGetType(res), dim, 0);
			pb_buf_printf(&text,
				      " : %s to %s\n  return %%r : %s\n}\n",
				      tw.data, tv.data, tv.data);
			r = emit(ctx, text.data, op, 1, args, loc);
			rc = mlirValueIsNull(r) ? PB_ERR : PB_OK;
		}
		if (rc == PB_OK) {
			mlirValueReplaceAllUsesOfWith(res, r);
			mlirOperationDestroy(op);
		}
	}
	(void)wt;
	pb_buf_free(&tw);
	pb_buf_free(&tv);
	pb_buf_free(&text);
	if (rc != PB_OK)
		pb_error(ctx, "internal: cannot rewrite a tensor.concat in "
			      "place");
	return rc;
}

int pb_fuse_concat_in_place(struct pb_ctx *ctx, MlirBlock body)
{
	struct pb_ir_ops all = {0};
	for (MlirOperation op = mlirBlockGetFirstOperation(body);
	     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
		if (pb_ir_op_is(op, "tensor.concat") &&
		    pb_ir_type_is_static(mlirValueGetType(
			    mlirOperationGetResult(op, 0))))
			pb_ir_ops_push(&all, op);
	struct chain *ch = calloc(all.n + 1, sizeof(*ch));
	int nch = 0, rc = PB_OK;
	if (!ch)
		abort();
	/* each concat joins the chain whose last concat it extends (the
	 * latest such chain), else starts one */
	for (int i = 0; i < all.n; i++) {
		int k = nch - 1;
		for (; k >= 0; k--)
			if (extends(ch[k].op[ch[k].n - 1], all.v[i]))
				break;
		if (k < 0)
			k = nch++;
		ch[k].op = realloc(ch[k].op, sizeof(*ch[k].op) * (ch[k].n + 1));
		if (!ch[k].op)
			abort();
		ch[k].op[ch[k].n++] = all.v[i];
	}
	/* a lone concat keeps its copies for now: written in place, the
	 * branches of SqueezeNet's fire modules spill registers on sm_90
	 * after pb-smem (the quadratic copies are the chains') */
	for (int k = 0; k < nch; k++) {
		if (rc == PB_OK && ch[k].n > 1)
			rc = rewrite(ctx, body, &ch[k]);
		free(ch[k].op);
	}
	free(ch);
	pb_ir_ops_free(&all);
	return rc;
}
