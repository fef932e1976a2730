/* Warp-level tensor-core tiles to lanes (docs/pb-codegen.md, "Tensor
 * cores").
 *
 * pb-mma writes a warp's share of a contraction as warp-level vectors:
 * vector.contract of a 16x16 A tile and a 16x8 B tile into a 16x8 f32
 * accumulator, with vector.transfer_read/_write and element-wise
 * operations around it. In a gpu.launch every lane of the warp runs that
 * code, so each warp-level vector becomes the lane's fragment of it in
 * the register layout of mma.sync m16n8k16 (PTX ISA, "Matrix fragments
 * for mma.m16n8k16"), with g = lane / 4 and t = lane % 4:
 *
 *   C, 16x8 (and every element-wise value): vector<2x2>, [r][c] holds
 *      row g + 8r, column 2t + c;
 *   A, 16x16: vector<4x2>, [r][c] holds row g + 8(r % 2), column
 *      2t + c + 8(r / 2);
 *   B, 16x8 (k x n): vector<2x2>, [r][c] holds row 2t + c + 8r, column g.
 *
 * and of mma.sync m16n8k8 for f32 operands as tf32 (pb-mma cuts their
 * low mantissa bits with integer operations, so that the CPU computes
 * what the tensor core does; here the cut is left to the tensor core,
 * which reads only the tf32 bits of its operands):
 *
 *   A, 16x8: vector<4x1>, [r][0] holds row g + 8(r % 2), column t + 4(r / 2);
 *   B, 8x8 (k x n): vector<2x1>, [r][0] holds row t + 4r, column g.
 *
 * A value's layout is told by its use: operand 0 or 1 of a
 * vector.contract, directly or through element-wise operations (the
 * rounding), is A or B; any other 16x8 value is C.
 *
 * vector.contract becomes nvgpu.mma.sync; a read of A or B from workgroup
 * memory whose rows are contiguous becomes nvgpu.ldmatrix (x4 for A, x2
 * for B, transposed when B's rows are k), any other read and every write
 * one memref.load/store per element; element-wise operations, constants,
 * broadcasts and the reduction loop's carried values just change type. */
#include <stdlib.h>
#include <string.h>

#include "mlir-c/AffineExpr.h"
#include "mlir-c/AffineMap.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "codegen/internal.h"
#include "kernel/kernel.h"
#include "target/target.h"

enum layout { L_NONE, L_A, L_B, L_C, L_R };

/* The layout of warp-level vector type "t" by its shape alone: A for
 * 16x16, C for 16x8, B for 8x8 (tf32), R (one value per row of C) for
 * 16 or 16x1 floats or booleans, none otherwise; role_of tells A and B
 * of the other shapes by their use. */
static enum layout layout_of(MlirType t)
{
	if (!mlirTypeIsAVector(t))
		return L_NONE;
	int64_t m = mlirShapedTypeGetDimSize(t, 0);
	MlirType e = mlirShapedTypeGetElementType(t);
	int rowwise = mlirTypeIsAF32(e) || (mlirTypeIsAInteger(e) &&
			      mlirIntegerTypeGetWidth(e) == 1);
	if (mlirShapedTypeGetRank(t) == 1)
		return m == 16 && rowwise ? L_R : L_NONE;
	if (mlirShapedTypeGetRank(t) != 2)
		return L_NONE;
	int64_t n = mlirShapedTypeGetDimSize(t, 1);
	if (m == 16)
		return n == 16  ? L_A
		       : n == 8 ? L_C
		       : n == 1 && rowwise ? L_R
				 : L_NONE;
	return m == 8 && n == 8 ? L_B : L_NONE;
}

/* The layout of warp-level value "v": A or B when it is (through
 * element-wise operations, at most "depth" deep) operand 0 or 1 of a
 * vector.contract, else that of its shape. */
static enum layout role(MlirValue v, int depth)
{
	for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u);
	     u = mlirOpOperandGetNextUse(u)) {
		MlirOperation o = mlirOpOperandGetOwner(u);
		if (pb_ir_op_is(o, "vector.contract")) {
			unsigned k = mlirOpOperandGetOperandNumber(u);
			if (k < 2)
				return k == 0 ? L_A : L_B;
		} else if (depth > 0 && pb_codegen_op_has_prefix(o, "arith.") &&
			   mlirOperationGetNumResults(o) == 1) {
			enum layout l = role(mlirOperationGetResult(o, 0),
					     depth - 1);
			if (l == L_A || l == L_B)
				return l;
		}
	}
	return layout_of(mlirValueGetType(v));
}

/* Is warp-level operand type "t" in layout "l" a tf32 one, k steps of 8
 * (A 16x8, B 8x8), whose lanes hold one element per register? Its
 * elements are f32 (or their bits, i32, being cut). A 16x16 A or 16x8 B
 * of f32 is one being rounded to f16 or bf16 (--precision=fp16|bf16): in
 * the half layout, an f32 per element until the rounding. */
static int wide(enum layout l, MlirType t)
{
	return (l == L_A && mlirShapedTypeGetDimSize(t, 1) == 8) ||
	       (l == L_B && mlirShapedTypeGetDimSize(t, 0) == 8);
}

/* The fragment a lane holds of a warp-level value of type "t" in layout
 * "l". */
static MlirType frag_type(enum layout l, MlirType t)
{
	int64_t s[2] = {l == L_A ? 4 : 2, wide(l, t) ? 1 : 2};
	/* rows g and g + 8, of a 16 or a 16x1 row vector alike */
	return mlirVectorTypeGet(l == L_R ? 1 : 2, s,
				 mlirShapedTypeGetElementType(t));
}

/* The lowering of one gpu.launch. */
struct lower {
	struct pb_ctx *ctx;
	MlirValue lane;
	/* B reads already loaded with the read before them (one
	   ldmatrix.x4 for two fragments), and their fragments */
	struct pb_ir_ops paired;
	MlirValue *pval;
};

/* Instantiate "text" (with "n" arguments) before "op" and return the
 * result of its last operation (null when it has none). */
static MlirValue emit(struct lower *lw, const char *text, MlirOperation op,
		      int n, const MlirValue *args)
{
	struct pb_ir_ops out = {0};
	MlirValue v = {NULL};
	if (pb_ir_instantiate(lw->ctx, text, op, n, args,
			      mlirOperationGetLocation(op), &out) == PB_OK &&
	    out.n && mlirOperationGetNumResults(out.v[out.n - 1]))
		v = mlirOperationGetResult(out.v[out.n - 1], 0);
	pb_ir_ops_free(&out);
	return v;
}

/* Replace "op" by the result of template "t" (with "n" arguments),
 * instantiated before it; "t" is freed. */
static int replace(struct lower *lw, struct pb_buf *t, MlirOperation op,
		   int n, const MlirValue *args)
{
	int rc = pb_ir_replace_by_template(lw->ctx, t->data, op, n, args);
	pb_buf_free(t);
	return rc;
}

/* The element at [r][c] of a lane's fragment in layout "l" (of 32-bit
 * tf32 operands when "w"): its row and column offsets in the warp's tile,
 * as affine expressions of the lane "l" (text). */
static void elem_offsets(enum layout l, int w, int r, int c, char *row,
			 char *col, size_t n)
{
	if (w && l == L_A) {
		snprintf(row, n, "l floordiv 4 + %d", 8 * (r % 2));
		snprintf(col, n, "l mod 4 + %d", 4 * (r / 2));
		return;
	}
	if (w && l == L_B) {
		snprintf(row, n, "l mod 4 + %d", 4 * r);
		snprintf(col, n, "l floordiv 4");
		return;
	}
	switch (l) {
	case L_A:
		snprintf(row, n, "l floordiv 4 + %d", 8 * (r % 2));
		snprintf(col, n, "(l mod 4) * 2 + %d", c + 8 * (r / 2));
		break;
	case L_B:
		snprintf(row, n, "(l mod 4) * 2 + %d", c + 8 * r);
		snprintf(col, n, "l floordiv 4");
		break;
	default:
		snprintf(row, n, "l floordiv 4 + %d", 8 * r);
		snprintf(col, n, "(l mod 4) * 2 + %d", c);
		break;
	}
}

/* The function header of an access template: the buffer, the lane, the
 * transfer's indices (and the value written). */
static void header(struct pb_buf *t, MlirType mt, int rank, MlirType vt)
{
	pb_buf_puts(t, "func.func @t(%M: ");
	pb_codegen_type_str(mt, t);
	pb_buf_puts(t, ", %l: index");
	for (int p = 0; p < rank; p++)
		pb_buf_printf(t, ", %%i%d: index", p);
	if (!mlirTypeIsNull(vt)) {
		pb_buf_puts(t, ", %v: ");
		pb_codegen_type_str(vt, t);
	}
	pb_buf_puts(t, ") {\n");
}

/* The subscripts of element "e" at row offset "row" and column offset
 * "col" (along memref dimensions "d0" and "d1") as "%x<e>_<p>" values. */
static void elem_index(struct pb_buf *t, int e, int rank, int d0, int d1,
		       const char *row, const char *col)
{
	for (int p = 0; p < rank; p++) {
		const char *off = p == d0 ? row : p == d1 ? col : NULL;
		if (off)
			pb_buf_printf(t, "  %%x%d_%d = affine.apply affine_map<"
				      "(x, l) -> (x + %s)>(%%i%d, %%l)\n", e, p,
				      off, p);
	}
}

/* Print the subscripts of element "e" (see elem_index). */
static void subs_of(struct pb_buf *t, int e, int rank, int d0, int d1,
		    unsigned masked)
{
	for (int p = 0; p < rank; p++) {
		if (p == d0 || p == d1)
			pb_buf_printf(t, "%s%%%c%d_%d", p ? ", " : "",
				      masked >> p & 1 ? 'y' : 'x', e, p);
		else
			pb_buf_printf(t, "%s%%i%d", p ? ", " : "", p);
	}
}

/* The memref dimensions of transfer "op" that its tile may overrun (its
 * in_bounds false along them), as a bit set. */
static unsigned masked_dims(MlirOperation op)
{
	MlirAttribute ib = pb_ir_attr(op, "in_bounds");
	unsigned m = 0;
	for (int d = 0; d < 2 && !mlirAttributeIsNull(ib) &&
			mlirAttributeIsAArray(ib) &&
			d < mlirArrayAttrGetNumElements(ib);
	     d++) {
		MlirAttribute b = mlirArrayAttrGetElement(ib, d);
		if (mlirAttributeIsABool(b) && !mlirBoolAttrGetValue(b) &&
		    pb_kernel_transfer_dim(op, d) >= 0)
			m |= 1u << pb_kernel_transfer_dim(op, d);
	}
	return m;
}

/* The constants of a masked access template: the sizes "%n<p>" of the
 * masked dimensions of "mt", index 0, the element zero "%zero" and its
 * pair "%zv". */
static void mask_consts(struct pb_buf *t, MlirType mt, unsigned masked)
{
	MlirType e = mlirShapedTypeGetElementType(mt);
	for (int p = 0; p < (int)mlirShapedTypeGetRank(mt); p++)
		if (masked >> p & 1)
			pb_buf_printf(t, "  %%n%d = arith.constant %lld : index\n",
				      p, (long long)mlirShapedTypeGetDimSize(mt, p));
	/* an integer's zero (a Where's condition: false) or a float's */
	const char *z = mlirTypeIsAInteger(e) ? "0" : "0.000000e+00";
	pb_buf_printf(t, "  %%z0 = arith.constant 0 : index\n  %%zero = "
		      "arith.constant %s : ", z);
	pb_codegen_type_str(e, t);
	pb_buf_printf(t, "\n  %%zv = arith.constant dense<%s> : vector<2x", z);
	pb_codegen_type_str(e, t);
	pb_buf_puts(t, ">\n");
}

/* Whether element "e" lies in the buffer along the masked dimensions:
 * "%ok<e>", and its subscripts there clamped to 0 when not: "%y<e>_<p>". */
static void elem_guard(struct pb_buf *t, int e, int rank, unsigned masked)
{
	int dims[2] = {0, 0}, n = 0;
	for (int p = 0; p < rank && n < 2; p++)
		if (masked >> p & 1)
			dims[n++] = p;
	for (int i = 0; i < n; i++)
		pb_buf_printf(t, "  %%k%d_%d = arith.cmpi ult, %%x%d_%d, %%n%d : "
			      "index\n", e, dims[i], e, dims[i], dims[i]);
	if (n == 1)
		pb_buf_printf(t, "  %%ok%d = arith.andi %%k%d_%d, %%k%d_%d : i1\n",
			      e, e, dims[0], e, dims[0]);
	else
		pb_buf_printf(t, "  %%ok%d = arith.andi %%k%d_%d, %%k%d_%d : i1\n",
			      e, e, dims[0], e, dims[1]);
	for (int i = 0; i < n; i++)
		pb_buf_printf(t, "  %%y%d_%d = arith.select %%ok%d, %%x%d_%d, "
			      "%%z0 : index\n", e, dims[i], e, e, dims[i]);
}

/* The arguments of an access template for transfer "op" (buffer first,
 * then indices; "value" appended when not null). */
static int access_args(struct lower *lw, MlirOperation op, int first,
		       MlirValue value, MlirValue *args)
{
	int rank = (int)mlirShapedTypeGetRank(
		mlirValueGetType(mlirOperationGetOperand(op, first - 1)));
	int n = 0;
	args[n++] = mlirOperationGetOperand(op, first - 1);
	args[n++] = lw->lane;
	for (int p = 0; p < rank; p++)
		args[n++] = mlirOperationGetOperand(op, first + p);
	if (!mlirValueIsNull(value))
		args[n++] = value;
	return n;
}

/* Can the fragment of a read in layout "l" come from ldmatrix: a
 * workgroup buffer whose last dimension is one the tile runs along
 * (contiguous rows of 8 elements)? 1: the tile's columns are the last
 * dimension; 2: its rows are (B stored n-major, k innermost); 3: A's
 * rows are (A stored [k][m], a 1x1 convolution's input: transposed). */
static int ldmatrix_kind(MlirOperation op, enum layout l)
{
	MlirType mt = mlirValueGetType(mlirOperationGetOperand(op, 0));
	int rank = (int)mlirShapedTypeGetRank(mt);
	if (!pb_kernel_is_workgroup(mt) || l == L_C)
		return 0;
	int d0 = pb_kernel_transfer_dim(op, 0), d1 = pb_kernel_transfer_dim(op, 1);
	if (d0 < 0 || d1 < 0)
		return 0;
	/* strides of 16 bytes: every row start stays 16-byte aligned */
	int64_t last = mlirShapedTypeGetDimSize(mt, rank - 1);
	MlirType et = mlirShapedTypeGetElementType(mt);
	int64_t bytes = mlirTypeIsAFloat(et) ? mlirFloatTypeGetWidth(et) / 8 : 0;
	if (!bytes)
		return 0;
	if ((last * bytes) % 16)
		return 0;
	/* ldmatrix moves 16-bit elements: 32-bit ones only untransposed */
	if (d1 == rank - 1 && (bytes == 2 || l == L_A))
		return 1;
	if (d0 == rank - 1 && l == L_B)
		return 2;
	if (d0 == rank - 1 && l == L_A && bytes == 2)
		return 3;
	return 0;
}

/* Do the two elements [r][0] and [r][1] of a fragment in layout "l" lie
 * next to each other in memory, 4-byte aligned, for transfer "op" on
 * buffer type "mt" (vector dimensions along memref dimensions d0, d1)?
 * They do when the dimension they differ along (the columns; for B the
 * rows, k) is the buffer's innermost with an even extent: the tile's
 * offsets along it are even. */
static int pairs(MlirType mt, enum layout l, int d0, int d1)
{
	int rank = (int)mlirShapedTypeGetRank(mt);
	int pd = l == L_B ? d0 : d1;
	MlirType e = mlirShapedTypeGetElementType(mt);
	return pd >= 0 && pd == rank - 1 && mlirTypeIsAFloat(e) &&
	       mlirFloatTypeGetWidth(e) == 16 &&
	       mlirAffineMapIsIdentity(mlirMemRefTypeGetAffineMap(mt)) &&
	       mlirShapedTypeGetDimSize(mt, rank - 1) % 2 == 0;
}

/* Is "v" an affine.apply of one result "e" + "off" (off 0 when the
 * result is no sum with a constant)? Its operation into "*o". */
static int apply_plus(MlirValue v, MlirOperation *o, MlirAffineExpr *e,
		      int64_t *off)
{
	*o = mlirValueIsAOpResult(v) ? mlirOpResultGetOwner(v)
				     : (MlirOperation){NULL};
	if (mlirOperationIsNull(*o) || !pb_ir_op_is(*o, "affine.apply"))
		return 0;
	MlirAffineMap m = mlirAffineMapAttrGetValue(pb_ir_attr(*o, "map"));
	if (mlirAffineMapGetNumResults(m) != 1)
		return 0;
	*e = mlirAffineMapGetResult(m, 0);
	*off = 0;
	if (mlirAffineExprIsAAdd(*e) &&
	    mlirAffineExprIsAConstant(mlirAffineBinaryOpExprGetRHS(*e))) {
		*off = mlirAffineConstantExprGetValue(
			mlirAffineBinaryOpExprGetRHS(*e));
		*e = mlirAffineBinaryOpExprGetLHS(*e);
	}
	return 1;
}

/* The difference "*d" of index values "a" and "b" (b - a) when both are
 * constants, or the same value, or affine.apply of the same expression
 * plus constants on the same operands. */
static int index_diff(MlirValue a, MlirValue b, int64_t *d)
{
	int64_t ca, cb;
	MlirOperation oa, ob;
	MlirAffineExpr ea, eb;
	if (mlirValueEqual(a, b)) {
		*d = 0;
		return 1;
	}
	if (!pb_ir_const_int(a, &ca) && !pb_ir_const_int(b, &cb)) {
		*d = cb - ca;
		return 1;
	}
	if (!apply_plus(a, &oa, &ea, &ca) || !apply_plus(b, &ob, &eb, &cb) ||
	    !mlirAffineExprEqual(ea, eb) || !pb_ir_same_operands(oa, 0, ob, 0))
		return 0;
	*d = cb - ca;
	return 1;
}

/* The B read that "op" (a B read lowered with ldmatrix "kind") can load
 * with it, 8 columns (n) on: the same buffer, permutation and indices but
 * 8 more along n, later in the same block; null when none. */
static MlirOperation b_partner(MlirOperation op, enum layout l, int kind)
{
	MlirType mt = mlirValueGetType(mlirOperationGetOperand(op, 0));
	MlirType vt = mlirValueGetType(mlirOperationGetResult(op, 0));
	int rank = (int)mlirShapedTypeGetRank(mt);
	int d0 = pb_kernel_transfer_dim(op, 0), d1 = pb_kernel_transfer_dim(op, 1);
	if (l != L_B || (kind != 1 && kind != 2) || masked_dims(op))
		return (MlirOperation){NULL};
	for (MlirOperation o = mlirOperationGetNextInBlock(op);
	     !mlirOperationIsNull(o); o = mlirOperationGetNextInBlock(o)) {
		if (!pb_ir_op_is(o, "vector.transfer_read") ||
		    !mlirValueEqual(mlirOperationGetOperand(o, 0),
				    mlirOperationGetOperand(op, 0)) ||
		    !mlirTypeEqual(mlirValueGetType(mlirOperationGetResult(o, 0)),
				   vt) ||
		    pb_kernel_transfer_dim(o, 0) != d0 ||
		    pb_kernel_transfer_dim(o, 1) != d1 || masked_dims(o) ||
		    role(mlirOperationGetResult(o, 0), 4) != L_B)
			continue;
		int ok = 1;
		for (int p = 0; p < rank && ok; p++) {
			int64_t d;
			ok = index_diff(mlirOperationGetOperand(op, 1 + p),
					mlirOperationGetOperand(o, 1 + p), &d) &&
			     d == (p == d1 ? 8 : 0);
		}
		if (ok)
			return o;
	}
	return (MlirOperation){NULL};
}

/* The mask operand of transfer_read "op" when it is pb-mma's mask of a
 * convolution's window (docs/pb-mma.md, "Convolutions"): the elements
 * [i][j] of the vector with i < a and j < b (vector.create_mask a, b),
 * or the others when "*inv" (its arith.xori with a splat of true). The
 * create_mask into "*cm", the xori into "*x" (null when none); 0 when
 * "op" has no mask or another one. */
static int read_mask(MlirOperation op, MlirOperation *cm, MlirOperation *x,
		     int *inv)
{
	MlirType mt = mlirValueGetType(mlirOperationGetOperand(op, 0));
	int rank = (int)mlirShapedTypeGetRank(mt);
	*x = (MlirOperation){NULL};
	*inv = 0;
	if (mlirOperationGetNumOperands(op) != 3 + rank)
		return 0;
	MlirValue m = mlirOperationGetOperand(op, 2 + rank);
	*cm = mlirValueIsAOpResult(m) ? mlirOpResultGetOwner(m)
				      : (MlirOperation){NULL};
	if (!mlirOperationIsNull(*cm) && pb_ir_op_is(*cm, "arith.xori")) {
		for (int i = 0; i < 2; i++) {
			MlirValue a = mlirOperationGetOperand(*cm, i);
			MlirValue b = mlirOperationGetOperand(*cm, 1 - i);
			MlirOperation k = mlirValueIsAOpResult(b)
						  ? mlirOpResultGetOwner(b)
						  : (MlirOperation){NULL};
			MlirAttribute v = mlirOperationIsNull(k) ||
						  !pb_ir_op_is(k, "arith.constant")
					  ? (MlirAttribute){NULL}
					  : pb_ir_attr(k, "value");
			if (mlirAttributeIsNull(v) ||
			    !mlirAttributeIsADenseElements(v) ||
			    !mlirDenseElementsAttrIsSplat(v) ||
			    !mlirDenseElementsAttrGetBoolSplatValue(v) ||
			    !mlirValueIsAOpResult(a))
				continue;
			*x = *cm;
			*inv = 1;
			*cm = mlirOpResultGetOwner(a);
			break;
		}
		if (!*inv)
			return 0;
	}
	return !mlirOperationIsNull(*cm) &&
	       pb_ir_op_is(*cm, "vector.create_mask") &&
	       mlirOperationGetNumOperands(*cm) == 2;
}

/* Is "v" (a warp-level i1 vector) only a mask of reads read_mask takes,
 * directly or through its xori? Those reads compute it per element. */
static int only_read_mask(MlirValue v)
{
	int n = 0;
	for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u);
	     u = mlirOpOperandGetNextUse(u), n++) {
		MlirOperation o = mlirOpOperandGetOwner(u);
		MlirOperation cm, x;
		int inv;
		if (pb_ir_op_is(o, "arith.xori")) {
			if (!only_read_mask(mlirOperationGetResult(o, 0)))
				return 0;
			continue;
		}
		if (!pb_ir_op_is(o, "vector.transfer_read") ||
		    !read_mask(o, &cm, &x, &inv))
			return 0;
	}
	return n > 0;
}

/* A read in layout "l" (vector.transfer_read "op"). */
static int lower_read(struct lower *lw, MlirOperation op, enum layout l)
{
	/* loaded already, with the read before it */
	for (int i = 0; i < lw->paired.n; i++)
		if (mlirOperationEqual(lw->paired.v[i], op)) {
			mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0),
						      lw->pval[i]);
			mlirOperationDestroy(op);
			lw->paired.v[i] = (MlirOperation){NULL};
			return PB_OK;
		}
	MlirType mt = mlirValueGetType(mlirOperationGetOperand(op, 0));
	MlirType elt = mlirShapedTypeGetElementType(mt);
	MlirType vt = mlirValueGetType(mlirOperationGetResult(op, 0));
	MlirType ft = frag_type(l, vt);
	int rank = (int)mlirShapedTypeGetRank(mt);
	int d0 = pb_kernel_transfer_dim(op, 0), d1 = pb_kernel_transfer_dim(op, 1);
	int w = wide(l, vt), fc = w ? 1 : 2;
	/* 32-bit elements in the half layout: no ldmatrix (its 8x8 matrices
	   of 16-bit elements would give each lane the wrong halves) */
	int half = mlirTypeIsAFloat(elt) && mlirFloatTypeGetWidth(elt) == 16;
	int kind = w || half ? ldmatrix_kind(op, l) : 0;
	int ne = (l == L_A ? 4 : 2) * fc;
	/* ldmatrix's 8x8 matrices of 16-bit elements are 8 rows of 16 bytes:
	   4 elements of 32 bits */
	int ce = w ? 4 : 8;
	struct pb_buf t = {0};
	MlirValue args[2 + PB_KERNEL_MAXD + 1];
	int n = access_args(lw, op, 1, (MlirValue){NULL}, args);
	/* a tile that may overrun the buffer (in_bounds false): each element
	   read at a clamped subscript and replaced by 0 outside */
	unsigned mk = kind ? 0 : masked_dims(op);
	int pd = l == L_B ? d0 : d1;
	/* a convolution's window mask: each element computes its bit */
	MlirOperation mcm, mx;
	int minv, hasm = read_mask(op, &mcm, &mx, &minv);
	if (hasm) {
		kind = 0;
		mk = masked_dims(op);
	}
	if (hasm) {
		/* the header with the mask's bounds after the indices */
		pb_buf_puts(&t, "func.func @t(%M: ");
		pb_codegen_type_str(mt, &t);
		pb_buf_puts(&t, ", %l: index");
		for (int p = 0; p < rank; p++)
			pb_buf_printf(&t, ", %%i%d: index", p);
		pb_buf_puts(&t, ", %ma: index, %mb: index) {\n"
			    "  %mtrue = arith.constant true\n  %mzero = "
			    "arith.constant 0.000000e+00 : ");
		pb_codegen_type_str(elt, &t);
		pb_buf_puts(&t, "\n");
	} else {
		header(&t, mt, rank, (MlirType){NULL});
	}
	if (mk)
		mask_consts(&t, mt, mk);
	/* two B fragments 8 columns apart: one ldmatrix.x4 */
	MlirOperation partner = half && kind ? b_partner(op, l, kind)
					     : (MlirOperation){NULL};
	int x4 = l == L_A || !mlirOperationIsNull(partner);
	if (kind) {
		/* ldmatrix: lane l gives the address of row (l mod 16) of
		   the tile (x4: the columns from (l floordiv 16) * 8 on) */
		char a4[32], b2[40];
		snprintf(a4, sizeof(a4), "(l floordiv 16) * %d", ce);
		snprintf(b2, sizeof(b2), "((l floordiv 8) mod 2) * %d", ce);
		const char *roff = "l mod 16", *coff = a4;
		int rd = d0, cd = d1;
		if (kind == 2) {
			/* B as [n][k]: rows n, two 8x8 halves along k (x4:
			   lanes 16-31 the next 8 rows n) */
			roff = x4 ? "l mod 8 + (l floordiv 16) * 8" : "l mod 8";
			coff = b2;
			rd = d1;
			cd = d0;
		} else if (kind == 3) {
			/* A as [k][m], transposed: matrix q = l / 8 holds k
			   rows 8 (q / 2) on, m columns 8 (q mod 2) on */
			roff = "l mod 8 + (l floordiv 16) * 8";
			coff = "((l floordiv 8) mod 2) * 8";
			rd = d1;
			cd = d0;
		} else if (l == L_B) {
			/* B as [k][n], transposed (x4: lanes 16-31 the next
			   8 columns n) */
			coff = x4 ? "(l floordiv 16) * 8" : NULL;
		}
		elem_index(&t, 0, rank, rd, coff ? cd : -1, roff, coff);
		pb_buf_printf(&t, "  %%%s = nvgpu.ldmatrix %%M[",
			      l == L_B && x4 ? "q" : "r");
		subs_of(&t, 0, rank, rd, coff ? cd : -1, 0);
		pb_buf_printf(&t, "] {numTiles = %d : i32, transpose = %s} : ",
			      x4 ? 4 : 2,
			      (l == L_B && kind == 1) || kind == 3 ? "true"
								     : "false");
		pb_codegen_type_str(mt, &t);
		pb_buf_puts(&t, " -> ");
		if (l == L_B && x4) {
			/* matrices 0-1 this fragment, 2-3 the partner's */
			struct pb_buf et = {0};
			pb_codegen_type_str(elt, &et);
			pb_buf_printf(&t, "vector<4x2x%s>\n", et.data);
			for (int h = 0; h < 2; h++) {
				for (int r = 0; r < 2; r++)
					for (int c = 0; c < 2; c++)
						pb_buf_printf(&t, "  %%h%d_%d_%d = "
							      "vector.extract %%q"
							      "[%d, %d] : %s from "
							      "vector<4x2x%s>\n",
							      h, r, c, 2 * h + r, c,
							      et.data, et.data);
				pb_buf_printf(&t, "  %%%s = vector.from_elements "
					      "%%h%d_0_0, %%h%d_0_1, %%h%d_1_0, "
					      "%%h%d_1_1 : ", h ? "r" : "p",
					      h, h, h, h);
				pb_codegen_type_str(ft, &t);
				pb_buf_puts(&t, "\n");
			}
			pb_buf_free(&et);
		} else {
			pb_codegen_type_str(ft, &t);
			pb_buf_puts(&t, "\n");
		}
	} else {
		/* 32-bit loads of the element pairs where they are contiguous,
		   else one load per element; "%v<e>" the element */
		int pr = pairs(mt, l, d0, d1) && !(pd >= 0 && mk >> pd & 1) &&
			 !hasm;
		struct pb_buf vt = {0};
		if (pr)
			pb_buf_puts(&vt, "vector<2x");
		pb_codegen_type_str(elt, &vt);
		if (pr)
			pb_buf_puts(&vt, ">");
		char val = pr ? 'w' : hasm ? 'o' : 'v';
		for (int e = 0; e < ne; e += pr ? 2 : 1) {
			char row[64], col[64];
			elem_offsets(l, w, e / fc, pr ? 0 : e % fc, row, col,
				     sizeof(row));
			elem_index(&t, e, rank, d0, d1, row, col);
			if (mk)
				elem_guard(&t, e, rank, mk);
			pb_buf_printf(&t, "  %%%c%d = %s %%M[", mk ? 'u' : val, e,
				      pr ? "vector.load" : "memref.load");
			subs_of(&t, e, rank, d0, d1, mk);
			pb_buf_puts(&t, pr ? "] {alignment = 4} : " : "] : ");
			pb_codegen_type_str(mt, &t);
			if (pr)
				pb_buf_printf(&t, ", %s", vt.data);
			pb_buf_puts(&t, "\n");
			if (mk)
				pb_buf_printf(&t, "  %%%c%d = arith.select %%ok%d, "
					      "%%u%d, %s : %s\n", val, e, e, e,
					      pr ? "%zv" : "%zero", vt.data);
			for (int c = 0; pr && c < 2; c++) {
				pb_buf_printf(&t, "  %%v%d = vector.extract "
					      "%%w%d[%d] : ", e + c, e, c);
				pb_codegen_type_str(elt, &t);
				pb_buf_printf(&t, " from %s\n", vt.data);
			}
			if (hasm) {
				pb_buf_printf(&t, "  %%mr%d = affine.apply "
					      "affine_map<(l) -> (%s)>(%%l)\n"
					      "  %%mc%d = affine.apply "
					      "affine_map<(l) -> (%s)>(%%l)\n"
					      "  %%mp%d = arith.cmpi slt, %%mr%d, "
					      "%%ma : index\n"
					      "  %%mq%d = arith.cmpi slt, %%mc%d, "
					      "%%mb : index\n"
					      "  %%mm%d = arith.andi %%mp%d, %%mq%d "
					      ": i1\n",
					      e, row, e, col, e, e, e, e, e, e, e);
				if (minv)
					pb_buf_printf(&t, "  %%mv%d = arith.xori "
						      "%%mm%d, %%mtrue : i1\n",
						      e, e);
				pb_buf_printf(&t, "  %%v%d = arith.select %%m%c%d, "
					      "%%o%d, %%mzero : ", e,
					      minv ? 'v' : 'm', e, e);
				pb_codegen_type_str(elt, &t);
				pb_buf_puts(&t, "\n");
			}
		}
		pb_buf_free(&vt);
	}
	if (!kind) {
		pb_buf_puts(&t, "  %r = vector.from_elements ");
		for (int e = 0; e < ne; e++)
			pb_buf_printf(&t, "%s%%v%d", e ? ", " : "", e);
		pb_buf_puts(&t, " : ");
		pb_codegen_type_str(ft, &t);
		pb_buf_puts(&t, "\n");
	}
	pb_buf_puts(&t, "  return\n}\n");
	if (hasm) {
		args[n++] = mlirOperationGetOperand(mcm, 0);
		args[n++] = mlirOperationGetOperand(mcm, 1);
		MlirValue mv = mlirOperationGetOperand(op, 2 + rank);
		int rc = replace(lw, &t, op, n, args);
		/* the mask, computed per element, once no other read uses
		   it (its operations were passed over: only_read_mask) */
		if (rc == PB_OK && mlirOpOperandIsNull(mlirValueGetFirstUse(mv))) {
			MlirOperation one = {NULL};
			if (!mlirOperationIsNull(mx)) {
				for (int i = 0; i < 2; i++)
					if (!mlirOperationEqual(
						    mlirOpResultGetOwner(
							    mlirOperationGetOperand(
								    mx, i)),
						    mcm))
						one = mlirOpResultGetOwner(
							mlirOperationGetOperand(
								mx, i));
				mlirOperationDestroy(mx);
			}
			if (mlirOpOperandIsNull(mlirValueGetFirstUse(
				    mlirOperationGetResult(mcm, 0))))
				mlirOperationDestroy(mcm);
			if (!mlirOperationIsNull(one) &&
			    mlirOpOperandIsNull(mlirValueGetFirstUse(
				    mlirOperationGetResult(one, 0))))
				mlirOperationDestroy(one);
		}
		return rc;
	}
	if (mlirOperationIsNull(partner) || !kind)
		return replace(lw, &t, op, n, args);
	/* the template's last value is the partner's fragment, the one
	   before it this read's */
	struct pb_ir_ops out = {0};
	int rc = pb_ir_instantiate(lw->ctx, t.data, op, n, args,
				   mlirOperationGetLocation(op), &out);
	pb_buf_free(&t);
	if (rc != PB_OK || out.n < 2) {
		pb_ir_ops_free(&out);
		return PB_ERR;
	}
	MlirValue mine = mlirOperationGetResult(out.v[out.n - 6], 0);
	MlirValue theirs = mlirOperationGetResult(out.v[out.n - 1], 0);
	pb_ir_ops_free(&out);
	mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), mine);
	mlirOperationDestroy(op);
	pb_ir_ops_push(&lw->paired, partner);
	lw->pval = realloc(lw->pval, sizeof(MlirValue) * lw->paired.cap);
	lw->pval[lw->paired.n - 1] = theirs;
	return PB_OK;
}

/* A write of a C-layout fragment (vector.transfer_write "op"). */
static int lower_write(struct lower *lw, MlirOperation op)
{
	MlirValue v = mlirOperationGetOperand(op, 0);
	MlirType mt = mlirValueGetType(mlirOperationGetOperand(op, 1));
	MlirType elt = mlirShapedTypeGetElementType(mt);
	int rank = (int)mlirShapedTypeGetRank(mt);
	int d0 = pb_kernel_transfer_dim(op, 0), d1 = pb_kernel_transfer_dim(op, 1);
	struct pb_buf t = {0};
	struct pb_ir_ops out = {0};
	MlirValue args[3 + PB_KERNEL_MAXD];
	int n = access_args(lw, op, 2, v, args);
	/* a tile that may overrun the buffer: the stores outside skipped */
	unsigned mk = masked_dims(op);
	header(&t, mt, rank, mlirValueGetType(v));
	if (mk)
		mask_consts(&t, mt, mk);
	/* 32-bit stores of the element pairs where they are contiguous,
	   else one store per element */
	int pr = pairs(mt, L_C, d0, d1) && !(d1 >= 0 && mk >> d1 & 1);
	for (int e = 0; e < 4; e += pr ? 2 : 1) {
		char row[64], col[64];
		elem_offsets(L_C, 0, e / 2, pr ? 0 : e % 2, row, col,
			     sizeof(row));
		elem_index(&t, e, rank, d0, d1, row, col);
		if (mk) {
			elem_guard(&t, e, rank, mk);
			pb_buf_printf(&t, "  scf.if %%ok%d {\n", e);
		}
		pb_buf_printf(&t, "  %%p%d = vector.extract %%v[%d", e, e / 2);
		if (pr)
			pb_buf_puts(&t, "] : vector<2x");
		else
			pb_buf_printf(&t, ", %d] : ", e % 2);
		pb_codegen_type_str(elt, &t);
		pb_buf_puts(&t, pr ? "> from " : " from ");
		pb_codegen_type_str(mlirValueGetType(v), &t);
		pb_buf_printf(&t, "\n  %s %%p%d, %%M[",
			      pr ? "vector.store" : "memref.store", e);
		subs_of(&t, e, rank, d0, d1, 0);
		pb_buf_puts(&t, pr ? "] {alignment = 4} : " : "] : ");
		pb_codegen_type_str(mt, &t);
		if (pr) {
			pb_buf_puts(&t, ", vector<2x");
			pb_codegen_type_str(elt, &t);
			pb_buf_puts(&t, ">");
		}
		pb_buf_puts(&t, mk ? "\n  }\n" : "\n");
	}
	pb_buf_puts(&t, "  return\n}\n");
	int rc = pb_ir_instantiate(lw->ctx, t.data, op, n, args,
				   mlirOperationGetLocation(op), &out);
	pb_ir_ops_free(&out);
	pb_buf_free(&t);
	if (rc == PB_OK)
		mlirOperationDestroy(op);
	return rc;
}

/* vector.contract "op" on fragments: nvgpu.mma.sync m16n8k16. */
static int lower_contract(struct lower *lw, MlirOperation op)
{
	MlirValue args[3];
	struct pb_buf t = {0};
	for (int i = 0; i < 3; i++)
		args[i] = mlirOperationGetOperand(op, i);
	pb_buf_puts(&t, "func.func @t(%a: ");
	pb_codegen_type_str(mlirValueGetType(args[0]), &t);
	pb_buf_puts(&t, ", %b: ");
	pb_codegen_type_str(mlirValueGetType(args[1]), &t);
	pb_buf_puts(&t, ", %c: ");
	pb_codegen_type_str(mlirValueGetType(args[2]), &t);
	pb_buf_puts(&t, ") {\n");
	if (mlirTypeIsABF16(mlirShapedTypeGetElementType(
		    mlirValueGetType(args[0])))) {
		/* nvgpu.mma.sync takes no bf16: NVVM's, on the 32-bit
		   registers that hold two elements each */
		for (int i = 0; i < 6; i++)
			pb_buf_printf(&t,
				      "  %%p%d = vector.extract %%%c[%d] : "
				      "vector<2xbf16> from vector<%dx2xbf16>\n"
				      "  %%q%d = vector.bitcast %%p%d : "
				      "vector<2xbf16> to vector<1xi32>\n"
				      "  %%r%d = vector.extract %%q%d[0] : i32 "
				      "from vector<1xi32>\n",
				      i, i < 4 ? 'a' : 'b', i < 4 ? i : i - 4,
				      i < 4 ? 4 : 2, i, i, i, i);
		for (int i = 0; i < 4; i++)
			pb_buf_printf(&t, "  %%c%d = vector.extract %%c[%d, %d] "
				      ": f32 from vector<2x2xf32>\n",
				      i, i / 2, i % 2);
		pb_buf_puts(&t,
			    "  %m = nvvm.mma.sync A[%r0, %r1, %r2, %r3] "
			    "B[%r4, %r5] C[%c0, %c1, %c2, %c3] {layoutA = "
			    "#nvvm.mma_layout<row>, layoutB = "
			    "#nvvm.mma_layout<col>, multiplicandAPtxType = "
			    "#nvvm.mma_type<bf16>, multiplicandBPtxType = "
			    "#nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, "
			    "n = 8, k = 16>} : (i32, i32, f32) -> "
			    "!llvm.struct<(f32, f32, f32, f32)>\n");
		for (int i = 0; i < 4; i++)
			pb_buf_printf(&t, "  %%d%d = llvm.extractvalue %%m[%d] : "
				      "!llvm.struct<(f32, f32, f32, f32)>\n",
				      i, i);
		pb_buf_puts(&t, "  %d = vector.from_elements %d0, %d1, %d2, "
			    "%d3 : vector<2x2xf32>\n  return\n}\n");
	} else {
		/* tf32: A's fragment one f32 per register */
		pb_buf_puts(&t, mlirShapedTypeGetDimSize(
					mlirValueGetType(args[0]), 1) == 1
					? "  %d = nvgpu.mma.sync(%a, %b, %c) {mmaShape "
					  "= [16, 8, 8], tf32Enabled} : ("
					: "  %d = nvgpu.mma.sync(%a, %b, %c) {mmaShape "
					  "= [16, 8, 16]} : (");
		for (int i = 0; i < 3; i++) {
			pb_buf_puts(&t, i ? ", " : "");
			pb_codegen_type_str(mlirValueGetType(args[i]), &t);
		}
		pb_buf_puts(&t, ") -> ");
		pb_codegen_type_str(mlirValueGetType(args[2]), &t);
		pb_buf_puts(&t, "\n  return\n}\n");
	}
	return replace(lw, &t, op, 3, args);
}

/* A 16x8 i32 constant whose elements are v + ar r + ac c at row r,
 * column c (the col - row of causal attention's mask, lib/mma/
 * attention.c): each lane's elements computed from the lane. */
static int lower_affine_constant(struct lower *lw, MlirOperation op,
				 MlirAttribute a)
{
	int32_t v = mlirDenseElementsAttrGetInt32Value(a, 0);
	int32_t ar = mlirDenseElementsAttrGetInt32Value(a, 8) - v;
	int32_t ac = mlirDenseElementsAttrGetInt32Value(a, 1) - v;
	for (int r = 0; r < 16; r++)
		for (int c = 0; c < 8; c++)
			if (mlirDenseElementsAttrGetInt32Value(a, 8 * r + c) !=
			    v + ar * r + ac * c) {
				pb_error_at(lw->ctx,
					    mlirOperationGetLocation(op),
					    "internal: a warp-level constant "
					    "that is neither a splat nor affine "
					    "in the row and column");
				return PB_ERR;
			}
	struct pb_buf t = {0};
	pb_buf_puts(&t, "func.func @t(%l: index) {\n");
	for (int r = 0; r < 2; r++)
		for (int c = 0; c < 2; c++) {
			char row[64], col[64];
			elem_offsets(L_C, 0, r, c, row, col, sizeof(row));
			pb_buf_printf(&t, "  %%e%d%d = affine.apply affine_map<(l) "
				      "-> (%d + (%s) * %d + (%s) * %d)>(%%l)\n"
				      "  %%i%d%d = arith.index_cast %%e%d%d : "
				      "index to i32\n",
				      r, c, v, row, ar, col, ac, r, c, r, c);
		}
	pb_buf_puts(&t, "  %r = vector.from_elements %i00, %i01, %i10, %i11 : "
		    "vector<2x2xi32>\n  return\n}\n");
	return replace(lw, &t, op, 1, &lw->lane);
}

/* A splat constant of a warp-level vector type: the same splat of the
 * fragment's; or a C fragment affine in its rows and columns. */
static int lower_constant(struct lower *lw, MlirOperation op, enum layout l)
{
	MlirAttribute a = pb_ir_attr(op, "value");
	MlirType rt = mlirValueGetType(mlirOperationGetResult(op, 0));
	MlirType et = mlirShapedTypeGetElementType(rt);
	if (mlirAttributeIsADenseElements(a) &&
	    !mlirDenseElementsAttrIsSplat(a) && l == L_C &&
	    mlirTypeIsAInteger(et) && mlirIntegerTypeGetWidth(et) == 32)
		return lower_affine_constant(lw, op, a);
	if (!mlirAttributeIsADenseElements(a) ||
	    !mlirDenseElementsAttrIsSplat(a)) {
		pb_error_at(lw->ctx, mlirOperationGetLocation(op),
			    "internal: a warp-level constant that is not a "
			    "splat");
		return PB_ERR;
	}
	MlirType ft = frag_type(l, mlirValueGetType(mlirOperationGetResult(op, 0)));
	MlirAttribute s = mlirDenseElementsAttrSplatGet(
		ft, mlirDenseElementsAttrGetSplatValue(a));
	pb_ir_set_attr(op, "value", s);
	mlirValueSetType(mlirOperationGetResult(op, 0), ft);
	return PB_OK;
}

/* The number of integers in array attribute "a" (an array of integer
 * attributes or a dense i64 array), "max" + 1 when it is neither. */
static intptr_t ints_of(MlirAttribute a, intptr_t max)
{
	if (mlirAttributeIsADenseI64Array(a))
		return mlirDenseArrayGetNumElements(a);
	if (!mlirAttributeIsAArray(a))
		return max + 1;
	for (intptr_t i = 0; i < mlirArrayAttrGetNumElements(a); i++)
		if (!mlirAttributeIsAInteger(mlirArrayAttrGetElement(a, i)))
			return max + 1;
	return mlirArrayAttrGetNumElements(a);
}

/* Integer "i" of "a" (ints_of counted it). */
static int64_t int_at(MlirAttribute a, intptr_t i)
{
	if (mlirAttributeIsADenseI64Array(a))
		return mlirDenseI64ArrayGetElement(a, i);
	return mlirIntegerAttrGetValueInt(mlirArrayAttrGetElement(a, i));
}

/* The arith operation of vector.multi_reduction "op"'s kind, or NULL. */
static const char *kind_op(MlirOperation op)
{
	static const char *const kinds[][2] = {
		{"add", "addf"},	   {"mul", "mulf"},
		{"maximumf", "maximumf"}, {"minimumf", "minimumf"},
		{"maxnumf", "maxnumf"},	   {"minnumf", "minnumf"}};
	struct pb_buf k = {0};
	const char *r = NULL;
	mlirAttributePrint(pb_ir_attr(op, "kind"), pb_buf_mlir_callback, &k);
	for (size_t i = 0; k.data && i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		char want[32];
		snprintf(want, sizeof(want), "<%s>", kinds[i][0]);
		if (strstr(k.data, want))
			r = kinds[i][1];
	}
	pb_buf_free(&k);
	return r;
}

/* vector.multi_reduction of a C fragment over its columns into a row
 * vector (R): each lane combines its two columns of rows g and g + 8,
 * then the four lanes of a row (t = 0 .. 3) by butterfly shuffles, and
 * the result with the accumulator. */
static int lower_rows(struct lower *lw, MlirOperation op)
{
	MlirValue src = mlirOperationGetOperand(op, 0);
	MlirValue acc = mlirOperationGetOperand(op, 1);
	MlirAttribute dims = pb_ir_attr(op, "reduction_dims");
	const char *k = kind_op(op);
	MlirType st = mlirValueGetType(src), at = mlirValueGetType(acc);
	if (!k || mlirAttributeIsNull(dims) || ints_of(dims, 2) != 1 ||
	    int_at(dims, 0) != 1 ||
	    mlirShapedTypeGetRank(st) != 2 ||
	    mlirShapedTypeGetDimSize(st, 0) != 2 ||
	    mlirShapedTypeGetDimSize(st, 1) != 2 ||
	    !mlirTypeIsAF32(mlirShapedTypeGetElementType(st))) {
		pb_error_at(lw->ctx, mlirOperationGetLocation(op),
			    "cannot distribute 'vector.multi_reduction' to "
			    "lanes: only f32 sums, products, maxima and minima "
			    "of a 16x8 fragment's rows");
		return PB_ERR;
	}
	struct pb_buf t = {0};
	pb_buf_puts(&t, "func.func @t(%s: vector<2x2xf32>, %a: ");
	pb_codegen_type_str(at, &t);
	pb_buf_puts(&t, ") {\n  %c1 = arith.constant 1 : i32\n"
		    "  %c2 = arith.constant 2 : i32\n"
		    "  %w = arith.constant 32 : i32\n");
	for (int r = 0; r < 2; r++)
		pb_buf_printf(&t, "  %%e%d0 = vector.extract %%s[%d, 0] : f32 "
			      "from vector<2x2xf32>\n"
			      "  %%e%d1 = vector.extract %%s[%d, 1] : f32 "
			      "from vector<2x2xf32>\n"
			      "  %%r%d = arith.%s %%e%d0, %%e%d1 : f32\n"
			      "  %%h%d, %%v%d = gpu.shuffle xor %%r%d, %%c1, %%w "
			      ": f32\n"
			      "  %%q%d = arith.%s %%r%d, %%h%d : f32\n"
			      "  %%k%d, %%u%d = gpu.shuffle xor %%q%d, %%c2, %%w "
			      ": f32\n"
			      "  %%t%d = arith.%s %%q%d, %%k%d : f32\n",
			      r, r, r, r, r, k, r, r, r, r, r, r, k, r, r, r,
			      r, r, r, k, r, r);
	pb_buf_puts(&t, "  %x = vector.from_elements %t0, %t1 : ");
	pb_codegen_type_str(at, &t);
	pb_buf_printf(&t, "\n  %%y = arith.%s %%x, %%a : ", k);
	pb_codegen_type_str(at, &t);
	pb_buf_puts(&t, "\n  return\n}\n");
	MlirValue args[2] = {src, acc};
	return replace(lw, &t, op, 2, args);
}

/* vector.insert_strided_slice of a 16x8 C fragment into a 16x16 A one at
 * columns 0 or 8: lane for lane, the C fragment's two rows are rows
 * 0-1 or 2-3 of the A fragment (the layouts above), so P's fragments
 * become P.V's A operand in registers. */
static int lower_insert(struct lower *lw, MlirOperation op)
{
	MlirAttribute off = pb_ir_attr(op, "offsets");
	MlirValue src = mlirOperationGetOperand(op, 0);
	MlirValue dst = mlirOperationGetOperand(op, 1);
	MlirType rt = mlirValueGetType(mlirOperationGetResult(op, 0));
	int64_t c = ints_of(off, 2) == 2 ? int_at(off, 1) : -1;
	if (layout_of(rt) != L_A || int_at(off, 0) != 0 ||
	    (c != 0 && c != 8) || mlirShapedTypeGetRank(mlirValueGetType(src)) != 2 ||
	    mlirShapedTypeGetDimSize(mlirValueGetType(src), 0) != 2 ||
	    mlirShapedTypeGetDimSize(mlirValueGetType(dst), 0) != 4) {
		pb_error_at(lw->ctx, mlirOperationGetLocation(op),
			    "cannot distribute 'vector.insert_strided_slice' "
			    "to lanes: only a 16x8 fragment into columns 0 or "
			    "8 of a 16x16 one");
		return PB_ERR;
	}
	/* row by row: NVVM's vector lowering takes n-d vector.insert, not
	   n-d vector.insert_strided_slice */
	struct pb_buf t = {0}, st = {0}, dt = {0}, et = {0};
	pb_codegen_type_str(mlirValueGetType(src), &st);
	pb_codegen_type_str(mlirValueGetType(dst), &dt);
	pb_codegen_type_str(mlirShapedTypeGetElementType(rt), &et);
	pb_buf_printf(&t, "func.func @t(%%s: %s, %%d: %s) {\n", st.data,
		      dt.data);
	for (int r = 0; r < 2; r++)
		pb_buf_printf(&t, "  %%r%d = vector.extract %%s[%d] : "
			      "vector<2x%s> from %s\n"
			      "  %%d%d = vector.insert %%r%d, %%d%s [%d] : "
			      "vector<2x%s> into %s\n",
			      r, r, et.data, st.data, r + 1, r, r ? "1" : "",
			      (c ? 2 : 0) + r, et.data, dt.data);
	pb_buf_puts(&t, "  return\n}\n");
	pb_buf_free(&st);
	pb_buf_free(&dt);
	pb_buf_free(&et);
	MlirValue args[2] = {src, dst};
	return replace(lw, &t, op, 2, args);
}

/* vector.create_mask of a 16x8 C fragment (rows below its first operand,
 * columns below its second, each clamped as the op does): each lane
 * compares its rows g, g + 8 and columns 2t, 2t + 1. */
static int lower_create_mask(struct lower *lw, MlirOperation op,
			     enum layout l)
{
	if (l != L_C || mlirOperationGetNumOperands(op) != 2) {
		pb_error_at(lw->ctx, mlirOperationGetLocation(op),
			    "cannot distribute 'vector.create_mask' to lanes: "
			    "only a 16x8 fragment's");
		return PB_ERR;
	}
	struct pb_buf t = {0};
	pb_buf_puts(&t, "func.func @t(%l: index, %a: index, %b: index) {\n"
		    "  %r0 = affine.apply affine_map<(l) -> (l floordiv 4)>(%l)\n"
		    "  %r1 = affine.apply affine_map<(l) -> (l floordiv 4 + 8)>"
		    "(%l)\n"
		    "  %c0 = affine.apply affine_map<(l) -> ((l mod 4) * 2)>(%l)\n"
		    "  %c1 = affine.apply affine_map<(l) -> ((l mod 4) * 2 + 1)>"
		    "(%l)\n");
	for (int r = 0; r < 2; r++)
		for (int c = 0; c < 2; c++)
			pb_buf_printf(&t, "  %%p%d%d = arith.cmpi slt, %%r%d, %%a : "
				      "index\n"
				      "  %%q%d%d = arith.cmpi slt, %%c%d, %%b : "
				      "index\n"
				      "  %%e%d%d = arith.andi %%p%d%d, %%q%d%d : i1\n",
				      r, c, r, r, c, c, r, c, r, c, r, c);
	pb_buf_puts(&t, "  %m = vector.from_elements %e00, %e01, %e10, %e11 : "
		    "vector<2x2xi1>\n  return\n}\n");
	MlirValue args[3] = {lw->lane, mlirOperationGetOperand(op, 0),
			     mlirOperationGetOperand(op, 1)};
	return replace(lw, &t, op, 3, args);
}

/* math.exp2 of an f32 fragment: ex2.approx.ftz per element, one MUFU.EX2
 * (the libdevice path of llvm.exp2 adds a denormal check and two
 * multiplies around it); its relative error, about 2^-22, is far below
 * the f16 rounding of the attention's P that it feeds, and its flushing
 * of results below 2^-126 to 0 drops nothing that rounding to f16 keeps. */
static int lower_exp2(struct lower *lw, MlirOperation op, enum layout l)
{
	MlirValue x = mlirOperationGetOperand(op, 0);
	MlirType ft = frag_type(l, mlirValueGetType(mlirOperationGetResult(op, 0)));
	int rank = (int)mlirShapedTypeGetRank(ft);
	int64_t d0 = mlirShapedTypeGetDimSize(ft, 0);
	int64_t d1 = rank == 2 ? mlirShapedTypeGetDimSize(ft, 1) : 1;
	struct pb_buf t = {0}, ts = {0};
	pb_codegen_type_str(ft, &ts);
	pb_buf_printf(&t, "func.func @t(%%x: %s) {\n", ts.data);
	for (int64_t i = 0; i < d0; i++)
		for (int64_t j = 0; j < d1; j++) {
			if (rank == 2)
				pb_buf_printf(&t, "  %%e%lld_%lld = vector.extract "
					      "%%x[%lld, %lld] : f32 from %s\n",
					      (long long)i, (long long)j,
					      (long long)i, (long long)j, ts.data);
			else
				pb_buf_printf(&t, "  %%e%lld_%lld = vector.extract "
					      "%%x[%lld] : f32 from %s\n",
					      (long long)i, (long long)j,
					      (long long)i, ts.data);
			pb_buf_printf(&t, "  %%y%lld_%lld = llvm.call_intrinsic "
				      "\"llvm.nvvm.ex2.approx.ftz.f\"(%%e%lld_%lld) "
				      ": (f32) -> f32\n",
				      (long long)i, (long long)j, (long long)i,
				      (long long)j);
		}
	pb_buf_puts(&t, "  %r = vector.from_elements ");
	for (int64_t i = 0; i < d0; i++)
		for (int64_t j = 0; j < d1; j++)
			pb_buf_printf(&t, "%s%%y%lld_%lld", i || j ? ", " : "",
				      (long long)i, (long long)j);
	pb_buf_printf(&t, " : %s\n  return\n}\n", ts.data);
	pb_buf_free(&ts);
	return replace(lw, &t, op, 1, &x);
}

/* Is "t" a lane's fragment of a row vector (operands are lowered before
 * their users)? */
static int is_row_frag(MlirType t)
{
	return mlirTypeIsAVector(t) && mlirShapedTypeGetRank(t) == 1 &&
	       mlirShapedTypeGetDimSize(t, 0) == 2;
}

/* vector.shape_cast between the row vectors 16 and 16x1: the same
 * fragment. */
static int lower_shape_cast(struct lower *lw, MlirOperation op)
{
	MlirValue x = mlirOperationGetOperand(op, 0);
	MlirValue r = mlirOperationGetResult(op, 0);
	if (layout_of(mlirValueGetType(r)) != L_R ||
	    !is_row_frag(mlirValueGetType(x))) {
		pb_error_at(lw->ctx, mlirOperationGetLocation(op),
			    "cannot distribute 'vector.shape_cast' to lanes: "
			    "only between 16 and 16x1 row vectors");
		return PB_ERR;
	}
	mlirValueReplaceAllUsesOfWith(r, x);
	mlirOperationDestroy(op);
	return PB_OK;
}

/* vector.broadcast of a 16x1 row vector to a 16x8 fragment: the lane's
 * rows g and g + 8 in both of its columns. */
static int lower_spread(struct lower *lw, MlirOperation op)
{
	MlirValue x = mlirOperationGetOperand(op, 0);
	MlirType rt = mlirValueGetType(mlirOperationGetResult(op, 0));
	if (layout_of(rt) != L_C) {
		pb_error_at(lw->ctx, mlirOperationGetLocation(op),
			    "cannot distribute 'vector.broadcast' to lanes: "
			    "a row vector only to a 16x8 fragment");
		return PB_ERR;
	}
	struct pb_buf t = {0}, et = {0};
	pb_codegen_type_str(mlirShapedTypeGetElementType(rt), &et);
	pb_buf_printf(&t, "func.func @t(%%x: vector<2x%s>) {\n"
		      "  %%a = vector.extract %%x[0] : %s from vector<2x%s>\n"
		      "  %%b = vector.extract %%x[1] : %s from vector<2x%s>\n"
		      "  %%r = vector.from_elements %%a, %%a, %%b, %%b : "
		      "vector<2x2x%s>\n  return\n}\n",
		      et.data, et.data, et.data, et.data, et.data, et.data);
	pb_buf_free(&et);
	return replace(lw, &t, op, 1, &x);
}

/* Retype the results of "op" (and, for a loop, its carried values) from
 * warp-level vectors to fragments: the loops' C fragments, an
 * element-wise operation's in layout "l". */
static void retype(MlirOperation op, enum layout l)
{
	int for_ = pb_ir_op_is(op, "affine.for") || pb_ir_op_is(op, "scf.for");
	MlirBlock body = for_ ? mlirRegionGetFirstBlock(
					mlirOperationGetRegion(op, 0))
			      : (MlirBlock){NULL};
	for (intptr_t i = 0; i < mlirOperationGetNumResults(op); i++) {
		MlirValue r = mlirOperationGetResult(op, i);
		MlirType t = mlirValueGetType(r);
		enum layout rl = for_ ? layout_of(t) : l;
		if (!layout_of(t) || (for_ && rl != L_C && rl != L_R))
			continue;
		MlirType ft = frag_type(rl, t);
		mlirValueSetType(r, ft);
		if (for_)
			mlirValueSetType(mlirBlockGetArgument(body, 1 + i), ft);
	}
}

/* Does "op" have a warp-level vector operand or result? */
static int is_warp_level(MlirOperation op)
{
	for (intptr_t i = 0; i < mlirOperationGetNumResults(op); i++)
		if (layout_of(mlirValueGetType(mlirOperationGetResult(op, i))))
			return 1;
	for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); i++)
		if (layout_of(mlirValueGetType(mlirOperationGetOperand(op, i))))
			return 1;
	return 0;
}

static int lower_op(struct lower *lw, MlirOperation op)
{
	if (pb_ir_op_is(op, "vector.contract"))
		return lower_contract(lw, op);
	if (pb_ir_op_is(op, "vector.transfer_write"))
		return lower_write(lw, op);
	if (pb_ir_op_is(op, "builtin.unrealized_conversion_cast")) {
		/* between a warp-level value and its fragment (wgmma.c):
		   the fragment once both are */
		mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0),
					      mlirOperationGetOperand(op, 0));
		mlirOperationDestroy(op);
		return PB_OK;
	}
	MlirType t = mlirOperationGetNumResults(op)
			     ? mlirValueGetType(mlirOperationGetResult(op, 0))
			     : (MlirType){NULL};
	enum layout l = mlirTypeIsNull(t) || !layout_of(t)
				? L_NONE
				: role(mlirOperationGetResult(op, 0), 4);
	if (pb_ir_op_is(op, "vector.transfer_read"))
		return lower_read(lw, op, l);
	/* a window mask: its reads compute it (read_mask) */
	if (mlirOperationGetNumResults(op) == 1 &&
	    (pb_ir_op_is(op, "vector.create_mask") ||
	     pb_ir_op_is(op, "arith.xori") ||
	     pb_ir_op_is(op, "arith.constant")) &&
	    mlirTypeIsAVector(t) &&
	    mlirTypeIsAInteger(mlirShapedTypeGetElementType(t)) &&
	    only_read_mask(mlirOperationGetResult(op, 0)))
		return PB_OK;
	if (pb_ir_op_is(op, "arith.constant"))
		return lower_constant(lw, op, l);
	if (pb_ir_op_is(op, "vector.multi_reduction"))
		return lower_rows(lw, op);
	if (pb_ir_op_is(op, "vector.insert_strided_slice"))
		return lower_insert(lw, op);
	if (pb_ir_op_is(op, "vector.shape_cast"))
		return lower_shape_cast(lw, op);
	if (pb_ir_op_is(op, "vector.create_mask"))
		return lower_create_mask(lw, op, l);
	if (pb_ir_op_is(op, "math.exp2") &&
	    mlirTypeIsAF32(mlirShapedTypeGetElementType(t)))
		return lower_exp2(lw, op, l);
	if (pb_ir_op_is(op, "vector.broadcast") &&
	    is_row_frag(mlirValueGetType(mlirOperationGetOperand(op, 0))))
		return lower_spread(lw, op);
	if (pb_ir_op_is(op, "vector.broadcast") ||
	    pb_ir_op_is(op, "affine.for") || pb_ir_op_is(op, "scf.for") ||
	    pb_ir_op_is(op, "scf.if") ||
	    pb_ir_op_is(op, "affine.yield") || pb_ir_op_is(op, "scf.yield") ||
	    pb_codegen_op_has_prefix(op, "arith.") ||
	    pb_codegen_op_has_prefix(op, "math.")) {
		retype(op, l);
		return PB_OK;
	}
	pb_error_at(lw->ctx, mlirOperationGetLocation(op),
		    "cannot distribute '%.*s' on warp-level vectors to lanes",
		    (int)mlirIdentifierStr(mlirOperationGetName(op)).length,
		    mlirIdentifierStr(mlirOperationGetName(op)).data);
	return PB_ERR;
}

/* The operation defining "v" when it is named "name", else null. */
static MlirOperation def_named(MlirValue v, const char *name)
{
	MlirOperation d = mlirValueIsAOpResult(v) ? mlirOpResultGetOwner(v)
						  : (MlirOperation){NULL};
	return !mlirOperationIsNull(d) && pb_ir_op_is(d, name)
		       ? d
		       : (MlirOperation){NULL};
}

/* Is "v" a splat constant of PB_KERNEL_TF32_MASK? */
static int is_tf32_mask(MlirValue v)
{
	MlirOperation d = def_named(v, "arith.constant");
	MlirAttribute a = mlirOperationIsNull(d) ? (MlirAttribute){NULL}
						 : pb_ir_attr(d, "value");
	return !mlirAttributeIsNull(a) && mlirAttributeIsADenseElements(a) &&
	       mlirDenseElementsAttrIsSplat(a) &&
	       mlirTypeIsAInteger(mlirShapedTypeGetElementType(
		       mlirAttributeGetType(a))) &&
	       mlirDenseElementsAttrGetInt32SplatValue(a) == PB_KERNEL_TF32_MASK;
}

/* Erase the cut's operations "b1" (bitcast), "and" and "b0" (bitcast)
 * and the mask "mask" in turn while they are left without uses. */
static void erase_cut(MlirOperation b1, MlirOperation and, MlirOperation b0,
		      MlirOperation mask)
{
	MlirOperation ops[4] = {b1, and, b0, mask};
	for (int i = 0; i < 4; i++) {
		if (!mlirOpOperandIsNull(mlirValueGetFirstUse(
			    mlirOperationGetResult(ops[i], 0))))
			return;
		mlirOperationDestroy(ops[i]);
	}
}

/* The tf32 cut of the f32 operands of the vector.contracts of "launch"
 * (bitcast, andi with PB_KERNEL_TF32_MASK, bitcast back): left to the
 * tensor core, which reads only the tf32 bits of its operands. */
static void drop_tf32_cuts(MlirOperation launch)
{
	struct pb_ir_ops cs = {0};
	pb_ir_collect(launch, "vector.contract", &cs);
	for (int i = 0; i < cs.n; i++)
		for (int k = 0; k < 2; k++) {
			MlirValue v = mlirOperationGetOperand(cs.v[i], k);
			MlirOperation b1 = def_named(v, "arith.bitcast");
			MlirOperation and = mlirOperationIsNull(b1)
				? b1
				: def_named(mlirOperationGetOperand(b1, 0),
					    "arith.andi");
			if (mlirOperationIsNull(and))
				continue;
			int m = is_tf32_mask(mlirOperationGetOperand(and, 1));
			MlirValue x = mlirOperationGetOperand(and, m ? 0 : 1);
			MlirOperation b0 = def_named(x, "arith.bitcast");
			if ((!m && !is_tf32_mask(mlirOperationGetOperand(and, 0))) ||
			    mlirOperationIsNull(b0))
				continue;
			MlirValue f = mlirOperationGetOperand(b0, 0);
			if (!mlirTypeEqual(mlirValueGetType(f), mlirValueGetType(v)))
				continue;
			mlirOperationSetOperand(cs.v[i], k, f);
			erase_cut(b1, and, b0,
				  mlirOpResultGetOwner(mlirOperationGetOperand(
					  and, m ? 1 : 0)));
		}
	pb_ir_ops_free(&cs);
}

/* Lower the warp-level vector operations of gpu.launch "launch". */
static int lower_launch(struct pb_ctx *ctx, MlirOperation launch)
{
	struct pb_ir_ops all = {0}, todo = {0};
	struct lower lw = {ctx, {NULL}, {0}, NULL};
	int rc = PB_OK;
	drop_tf32_cuts(launch);
	const struct pb_target *t = pb_target_of(ctx);
	if (pb_target_has_wgmma(t) && pb_codegen_wgmma(ctx, launch))
		return PB_ERR;
	pb_ir_collect(launch, NULL, &all);
	/* warp-level constants the mapping left outside the launch: a
	   copy inside, to become the lanes' fragments */
	MlirBlock body0 = mlirRegionGetFirstBlock(
		mlirOperationGetRegion(launch, 0));
	for (int i = 0; i < all.n; i++)
		for (intptr_t j = 0; j < mlirOperationGetNumOperands(all.v[i]);
		     j++) {
			MlirValue v = mlirOperationGetOperand(all.v[i], j);
			if (!layout_of(mlirValueGetType(v)) ||
			    pb_ir_defined_in(v, launch) ||
			    !mlirValueIsAOpResult(v) ||
			    !pb_ir_op_is(mlirOpResultGetOwner(v),
					 "arith.constant"))
				continue;
			MlirOperation k =
				mlirOperationClone(mlirOpResultGetOwner(v));
			mlirBlockInsertOwnedOperationBefore(
				body0, mlirBlockGetFirstOperation(body0), k);
			mlirOperationSetOperand(all.v[i], j,
						mlirOperationGetResult(k, 0));
			pb_ir_ops_push(&todo, k);
		}
	for (int i = 0; i < all.n; i++)
		if (is_warp_level(all.v[i]))
			pb_ir_ops_push(&todo, all.v[i]);
	pb_ir_ops_free(&all);
	if (todo.n) {
		MlirBlock body = mlirRegionGetFirstBlock(
			mlirOperationGetRegion(launch, 0));
		lw.lane = emit(&lw, "func.func @t() {\n  %l = gpu.lane_id\n"
			       "  return\n}\n",
			       mlirBlockGetFirstOperation(body), 0, NULL);
		if (mlirValueIsNull(lw.lane))
			rc = PB_ERR;
	}
	for (int i = 0; i < todo.n && rc == PB_OK; i++)
		rc = lower_op(&lw, todo.v[i]);
	pb_ir_ops_free(&todo);
	pb_ir_ops_free(&lw.paired);
	free(lw.pval);
	return rc;
}

int pb_codegen_mma(struct pb_ctx *ctx, MlirModule m)
{
	struct pb_ir_ops launches = {0};
	int rc = PB_OK;
	pb_ir_collect(mlirModuleGetOperation(m), "gpu.launch", &launches);
	for (int i = 0; i < launches.n && rc == PB_OK; i++)
		rc = lower_launch(ctx, launches.v[i]);
	pb_ir_ops_free(&launches);
	return rc;
}

void pb_codegen_mma_registers(MlirModule m)
{
	struct pb_ir_ops funcs = {0};
	pb_ir_collect(mlirModuleGetOperation(m), "gpu.func", &funcs);
	for (int i = 0; i < funcs.n; i++) {
		struct pb_ir_ops mma = {0};
		if (mlirAttributeIsNull(pb_ir_attr(funcs.v[i], "gpu.kernel")))
			continue;
		pb_ir_collect(funcs.v[i], "nvgpu.mma.sync", &mma);
		if (mma.n)
			pb_ir_set_attr(funcs.v[i], "nvvm.minctasm",
				       mlirIntegerAttrGet(
					       mlirIntegerTypeGet(
						       mlirOperationGetContext(
							       funcs.v[i]),
						       32),
					       1));
		pb_ir_ops_free(&mma);
	}
	pb_ir_ops_free(&funcs);
}
