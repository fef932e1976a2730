/* Warpgroup MMA on sm_90a (docs/pb-codegen.md, "wgmma on sm_90a").
 *
 * pb-mma's wgmma tiles (docs/pb-mma.md) give each warp 16 rows of C by
 * the block's N columns, warps 4g .. 4g+3 (a warpgroup) rows 64g .. 64g+63
 * of the block's tile; pb-smem (docs/pb-smem.md) stages both operands in
 * rings of wgmma's swizzled layout and marks their reads pb.swizzle. In a
 * k step each warp then has one A read (16x16), N / 8 B reads (16x8) and
 * N / 8 vector.contract into its accumulators, in the order of C's
 * columns:
 *
 *   %a  = vector.transfer_read %SA[%s, %r, %k] {pb.swizzle = W}
 *   %bj = vector.transfer_read %SB[%s, .., %k, ..] {pb.swizzle = W}
 *   %cj = vector.contract %a, %bj, %accj       j = 0 .. N/8 - 1
 *
 * which together are the warp's quarter of one wgmma.mma_async m64nNk16
 * of its warpgroup: its accumulator registers are, fragment by fragment,
 * those of the warp's mma.sync fragments (PTX ISA, "Register fragments
 * for wgmma .m64nNk16": d[4j + 2r + c] is row g + 8r, column 8j + 2t + c of
 * the warp's 16 rows). So the group becomes
 *
 *   [nvvm.wgmma.fence.aligned]              the k-tile's first step
 *   %d = nvvm.wgmma.mma_async %descA, %descB, {accs}, m64nNk16
 *   [nvvm.wgmma.commit.group; wait.group 0]  the k-tile's last step
 *
 * with the shared-memory matrix descriptors of the warpgroup's 64 rows of
 * A (r rounded down to 64) and of B at the group's first column, and the
 * accumulators passed between the warp-level vectors and the lanes'
 * fragments through unrealized casts that the lane distribution (mma.c)
 * folds. The copies into the rings are swizzled where cp.async is formed
 * (smem.c); the rings are aligned to 1024 bytes (pb_codegen_arg_attrs),
 * as the swizzle's pattern repeats every 1024 bytes; every barrier of
 * the block is preceded by fence.proxy.async, which makes the threads'
 * copies visible to the tensor core's (async proxy) reads.
 *
 * Attention's contracts (docs/pb-mma.md, "Attention") read B from a ring
 * but A from registers: Q's fragments and P, the rounded scores. They
 * group by their A value the same way and become the register-A form of
 * wgmma.mma_async (inline assembly: NVVM's op takes A only from a
 * descriptor), whose 4 registers are the warp's mma.sync A fragment; the
 * tensor core reads them and the accumulators asynchronously, so a
 * chain of them waits (wait_group 0) before others read its results. */
#include <stdlib.h>
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "codegen/internal.h"
#include "ir/contract.h"
#include "kernel/kernel.h"

#define MAXF 32 /* N / 8 for N up to 256 */

/* One wgmma: the contracts of one A read, in the order of C's columns. */
struct group {
	MlirOperation c[MAXF];
	int n;
	MlirOperation a, b;	/* the A read (null: A from registers), the
				   first B read */
	int wait;		/* A from registers: its accumulators are
				   read by other than a wgmma after it */
};

/* The vector.transfer_read defining "v" when pb-smem marked it
 * pb.swizzle, else null. */
static MlirOperation swizzled_read(MlirValue v)
{
	MlirOperation d = mlirValueIsAOpResult(v) ? mlirOpResultGetOwner(v)
						  : (MlirOperation){NULL};
	if (mlirOperationIsNull(d) || !pb_ir_op_is(d, "vector.transfer_read") ||
	    mlirAttributeIsNull(pb_ir_attr(d, PB_ATTR_SWIZZLE)))
		return (MlirOperation){NULL};
	return d;
}

/* The swizzle mode of descriptor bits 62-63 for a width of "w" bytes. */
static int64_t swizzle_mode(int64_t w)
{
	return w == 128 ? 1 : w == 64 ? 2 : 3;
}

/* The text of descriptor "%d<x>" of ring "%S<x>" (type "rt") whose
 * element offset is "%e<x>" (computed before): the constant fields "hi"
 * plus the address in 16-byte units. That is the 14-bit field of bits
 * 0-13 without a mask: shared memory's addresses are below 2^18 (228
 * KiB), and the operands' offsets are whole 16-byte units, so the sum is
 * the ring's (loop-invariant) part plus the offset's, which the k steps
 * make constants. */
static void desc_text(struct pb_buf *t, char x, const char *rt, int64_t w,
		      uint64_t hi)
{
	pb_buf_printf(t, "  %%p%c = memref.extract_aligned_pointer_as_index "
		      "%%S%c : %s -> index {" PB_ATTR_SWIZZLE " = %lld : i64}\n"
		      "  %%i%c = arith.index_cast %%p%c : index to i64\n"
		      "  %%y%c = arith.shrui %%i%c, %%k4 : i64\n"
		      "  %%h%c = arith.constant %lld : i64\n"
		      "  %%r%c = arith.addi %%y%c, %%h%c : i64\n"
		      "  %%o%c = affine.apply affine_map<(e) -> (e floordiv 8)>"
		      "(%%e%c)\n"
		      "  %%q%c = arith.index_cast %%o%c : index to i64\n"
		      "  %%d%c = arith.addi %%r%c, %%q%c : i64\n",
		      x, x, rt, (long long)w, x, x, x, x, x, (long long)hi, x,
		      x, x, x, x, x, x, x, x, x);
}

/* The fields of a descriptor but its address: leading and stride byte
 * offsets "lbo", "sbo" (16-byte units in bits 16-29, 32-45) and the
 * swizzle of "w" bytes (bits 62-63); base offset 0, the rings being
 * aligned to the swizzle's pattern. */
static uint64_t desc_hi(int64_t lbo, int64_t sbo, int64_t w)
{
	return ((uint64_t)(lbo >> 4) & 0x3fff) << 16 |
	       ((uint64_t)(sbo >> 4) & 0x3fff) << 32 |
	       (uint64_t)swizzle_mode(w) << 62;
}

/* The text of B's descriptor "%dB" of B read "b" (ring "%SB" of type
 * "rt", the read's subscripts "%b1" ..): k innermost, [slot][n][k] like
 * A or [slot][k / P][n][k mod P] in panels of P along k (attention's K
 * past 64 of d, read with k along the ring's dimension 3), or n
 * innermost, [slot][n / P][k][n mod P] in panels of P; 1 when it is the
 * latter (wgmma's transposed B). */
static int b_desc_text(struct pb_buf *t, MlirOperation b, MlirType tb,
		       const char *rt, int64_t wb)
{
	if (mlirShapedTypeGetRank(tb) == 3) {
		int64_t bn = mlirShapedTypeGetDimSize(tb, 1);
		int64_t ktb = mlirShapedTypeGetDimSize(tb, 2);
		pb_buf_printf(t, "  %%eB = affine.apply affine_map<(s, n, k) "
			      "-> ((s * %lld + n) * %lld + k)>(%%b1, %%b2, "
			      "%%b3)\n", (long long)bn, (long long)ktb);
		desc_text(t, 'B', rt, wb, desc_hi(16, 8 * wb, wb));
		return 0;
	}
	/* panels of P columns, KT rows of W bytes each; LBO the panels'
	   stride, SBO 8 rows' */
	int64_t np = mlirShapedTypeGetDimSize(tb, 1);
	int64_t ktb = mlirShapedTypeGetDimSize(tb, 2);
	int64_t p = mlirShapedTypeGetDimSize(tb, 3);
	pb_buf_printf(t, "  %%eB = affine.apply affine_map<(s, q, k, c) "
		      "-> (((s * %lld + q) * %lld + k) * %lld + c)>("
		      "%%b1, %%b2, %%b3, %%b4)\n", (long long)np,
		      (long long)ktb, (long long)p);
	if (pb_kernel_transfer_dim(b, 0) == 3) {
		/* k-major panels: a wgmma's 16 of k within one, its n
		   rows of W bytes as for [slot][n][k] */
		desc_text(t, 'B', rt, wb, desc_hi(16, 8 * wb, wb));
		return 0;
	}
	desc_text(t, 'B', rt, wb, desc_hi(ktb * wb, 8 * wb, wb));
	return 1;
}

/* The wgmma with A from registers, "%w" (of struct type "st", "nregs"
 * f32 accumulators "%v<i>", PTX element type "ty", MLIR's "at"): A's
 * fragment "%A" (16x16, the warp's 16
 * rows of the warpgroup's 64, in mma.sync's A layout, which is wgmma's:
 * PTX ISA, "Register fragments for wgmma .m64nNk16") as four 32-bit
 * registers of element pairs, B's descriptor "%dB". NVVM's
 * wgmma.mma_async takes A only from a descriptor, so this is the inline
 * assembly convert-nvvm-to-llvm writes for it, with A's registers. */
static void reg_mma_text(struct pb_buf *t, const char *ty, const char *at,
			 int64_t n, int64_t nregs, int trans_b,
			 const char *st)
{
	pb_buf_printf(t, "  %%af = builtin.unrealized_conversion_cast %%A : "
		      "vector<16x16x%s> to vector<4x2x%s>\n", at, at);
	for (int i = 0; i < 4; i++)
		pb_buf_printf(t, "  %%ar%d = vector.extract %%af[%d] : "
			      "vector<2x%s> from vector<4x2x%s>\n"
			      "  %%ab%d = vector.bitcast %%ar%d : vector<2x%s> "
			      "to vector<1xi32>\n"
			      "  %%ai%d = vector.extract %%ab%d[0] : i32 from "
			      "vector<1xi32>\n",
			      i, i, at, at, i, i, at, i, i);
	pb_buf_puts(t, "  %one = llvm.mlir.constant(1 : i32) : i32\n"
		    "  nvvm.wgmma.fence.aligned\n"
		    "  %w = llvm.inline_asm has_side_effects asm_dialect = att "
		    "\"{\\0A.reg .pred p;\\0Asetp.ne.b32 p, $");
	pb_buf_printf(t, "%lld, 0;\\0Awgmma.mma_async.sync.aligned.m64n%lldk16."
		      "f32.%s.%s {", (long long)(nregs + 5), (long long)n, ty,
		      ty);
	for (int i = 0; i < nregs; i++)
		pb_buf_printf(t, "%s$%d", i ? ", " : "", i);
	pb_buf_printf(t, "}, {$%lld, $%lld, $%lld, $%lld}, $%lld, p, 1, 1, "
		      "%d;\\0A}\\0A\", \"", (long long)nregs,
		      (long long)nregs + 1, (long long)nregs + 2,
		      (long long)nregs + 3, (long long)nregs + 4, trans_b);
	for (int i = 0; i < nregs; i++)
		pb_buf_puts(t, "=f,");
	pb_buf_puts(t, "r,r,r,r,l,n");
	for (int i = 0; i < nregs; i++)
		pb_buf_printf(t, ",%d", i);
	pb_buf_puts(t, "\" %ai0, %ai1, %ai2, %ai3, %dB, %one");
	for (int i = 0; i < nregs; i++)
		pb_buf_printf(t, ", %%v%d", i);
	pb_buf_puts(t, " : (i32, i32, i32, i32, i64, i32");
	for (int i = 0; i < nregs; i++)
		pb_buf_puts(t, ", f32");
	pb_buf_printf(t, ") -> %s\n", st);
}

/* Replace group "g" by one wgmma.mma_async between a fence and a
 * commit; with A from registers, the wait for it after the commit when
 * others than wgmmas read its accumulators (g->wait). */
static int lower_group(struct pb_ctx *ctx, struct group *g)
{
	int reg = mlirOperationIsNull(g->a);
	MlirValue sa = reg ? mlirOperationGetOperand(g->c[0], 0)
			   : mlirOperationGetOperand(g->a, 0);
	MlirValue sb = mlirOperationGetOperand(g->b, 0);
	MlirType ta = mlirValueGetType(sa), tb = mlirValueGetType(sb);
	MlirType elt = mlirShapedTypeGetElementType(ta);
	int rb = (int)mlirShapedTypeGetRank(tb);
	int64_t wb = mlirIntegerAttrGetValueInt(pb_ir_attr(g->b, PB_ATTR_SWIZZLE));
	int64_t n = 8 * g->n, nregs = n / 2;
	struct pb_buf t = {0}, ra = {0}, rb_ = {0}, st = {0};
	struct pb_ir_ops out = {0};
	MlirValue args[5 + 4 + MAXF];
	int na = 0;
	if ((!reg && mlirShapedTypeGetRank(ta) != 3) ||
	    (reg && (mlirShapedTypeGetRank(ta) != 2 ||
		     mlirShapedTypeGetDimSize(ta, 0) != 16 ||
		     mlirShapedTypeGetDimSize(ta, 1) != 16)) ||
	    (rb != 3 && rb != 4)) {
		pb_error_at(ctx, mlirOperationGetLocation(g->c[0]),
			    "internal: a wgmma ring that is not [slot][row][k] "
			    "(A) or [slot][n][k], [slot][panel][k][n] (B), or "
			    "an A from registers not 16x16");
		return PB_ERR;
	}
	pb_codegen_type_str(ta, &ra);
	pb_codegen_type_str(tb, &rb_);
	pb_buf_puts(&st, "!llvm.struct<(");
	for (int i = 0; i < nregs; i++)
		pb_buf_puts(&st, i ? ", f32" : "f32");
	pb_buf_puts(&st, ")>");
	/* A [slot][row][k] or a 16x16 fragment, B [slot][n][k] (k
	   innermost) or [slot][n / P][k][n mod P] (n innermost, in panels
	   of P) */
	args[na++] = sa;
	for (int i = 1; !reg && i <= 3; i++)
		args[na++] = mlirOperationGetOperand(g->a, i);
	args[na++] = sb;
	for (int i = 1; i <= rb; i++)
		args[na++] = mlirOperationGetOperand(g->b, i);
	for (int j = 0; j < g->n; j++)
		args[na++] = mlirOperationGetOperand(g->c[j], 2);
	if (reg)
		pb_buf_printf(&t, "func.func @t(%%A: %s, %%SB: %s", ra.data,
			      rb_.data);
	else
		pb_buf_printf(&t, "func.func @t(%%SA: %s, %%as: index, "
			      "%%ar: index, %%ak: index, %%SB: %s", ra.data,
			      rb_.data);
	for (int i = 1; i <= rb; i++)
		pb_buf_printf(&t, ", %%b%d: index", i);
	for (int j = 0; j < g->n; j++)
		pb_buf_printf(&t, ", %%c%d: vector<16x8xf32>", j);
	pb_buf_puts(&t, ") {\n  %k4 = arith.constant 4 : i64\n");
	if (!reg) {
		/* A: the warpgroup's 64 rows from row r rounded down to 64;
		   k-major rows of W bytes, 8-row atoms SBO = 8 W apart (LBO
		   unused: 1) */
		int64_t wa = mlirIntegerAttrGetValueInt(
			pb_ir_attr(g->a, PB_ATTR_SWIZZLE));
		int64_t bm = mlirShapedTypeGetDimSize(ta, 1);
		int64_t kta = mlirShapedTypeGetDimSize(ta, 2);
		pb_buf_printf(&t, "  %%eA = affine.apply affine_map<(s, r, k) "
			      "-> ((s * %lld + (r floordiv 64) * 64) * %lld + "
			      "k)>(%%as, %%ar, %%ak)\n", (long long)bm,
			      (long long)kta);
		desc_text(&t, 'A', ra.data, wa, desc_hi(16, 8 * wa, wa));
	}
	int trans_b = b_desc_text(&t, g->b, tb, rb_.data, wb);
	/* the accumulators: fragment j's [r][c] is register 4j + 2r + c */
	if (!reg)
		pb_buf_printf(&t, "  %%u = llvm.mlir.undef : %s\n", st.data);
	for (int j = 0; j < g->n; j++) {
		pb_buf_printf(&t, "  %%f%d = builtin.unrealized_conversion_cast "
			      "%%c%d : vector<16x8xf32> to vector<2x2xf32>\n",
			      j, j);
		for (int e = 0; e < 4; e++) {
			int i = 4 * j + e;
			pb_buf_printf(&t, "  %%v%d = vector.extract %%f%d[%d, %d] "
				      ": f32 from vector<2x2xf32>\n", i, j,
				      e / 2, e % 2);
			if (reg)
				continue;
			if (i)
				pb_buf_printf(&t, "  %%u%d = llvm.insertvalue %%v%d, "
					      "%%u%d[%d] : %s\n", i, i, i - 1,
					      i, st.data);
			else
				pb_buf_printf(&t, "  %%u0 = llvm.insertvalue %%v0, "
					      "%%u[0] : %s\n", st.data);
		}
	}
	const char *ty = mlirTypeIsABF16(elt) ? "bf16" : "f16";
	if (reg) {
		reg_mma_text(&t, ty, ty, n, nregs, trans_b, st.data);
	} else {
		pb_buf_puts(&t, "  nvvm.wgmma.fence.aligned\n");
		pb_buf_printf(&t, "  %%w = nvvm.wgmma.mma_async %%dA, %%dB, "
			      "%%u%lld, #nvvm.shape<m = 64, n = %lld, k = 16>, "
			      "D [<f32>, <one>], A [<%s>, <one>, <row>], B "
			      "[<%s>, <one>, <%s>] : %s -> %s\n",
			      (long long)(nregs - 1), (long long)n, ty, ty,
			      trans_b ? "row" : "col", st.data, st.data);
	}
	pb_buf_puts(&t, "  nvvm.wgmma.commit.group.sync.aligned\n");
	if (g->wait)
		pb_buf_puts(&t, "  nvvm.wgmma.wait.group.sync.aligned 0\n");
	for (int j = 0; j < g->n; j++) {
		for (int e = 0; e < 4; e++)
			pb_buf_printf(&t, "  %%o%d = llvm.extractvalue %%w[%d] : "
				      "%s\n", 4 * j + e, 4 * j + e, st.data);
		pb_buf_printf(&t, "  %%g%d = vector.from_elements %%o%d, %%o%d, "
			      "%%o%d, %%o%d : vector<2x2xf32>\n"
			      "  %%r%d = builtin.unrealized_conversion_cast "
			      "%%g%d : vector<2x2xf32> to vector<16x8xf32>\n",
			      j, 4 * j, 4 * j + 1, 4 * j + 2, 4 * j + 3, j, j);
	}
	pb_buf_puts(&t, "  return\n}\n");
	int rc = pb_ir_instantiate(ctx, t.data, g->c[0], na, args,
				   mlirOperationGetLocation(g->c[0]), &out);
	if (rc == PB_OK) {
		/* the last g->n casts are the new accumulators */
		int j = g->n;
		for (int i = out.n - 1; i >= 0 && j > 0; i--)
			if (pb_ir_op_is(out.v[i],
					"builtin.unrealized_conversion_cast") &&
			    mlirTypeIsAVector(mlirValueGetType(
				    mlirOperationGetResult(out.v[i], 0))) &&
			    mlirShapedTypeGetDimSize(mlirValueGetType(
				    mlirOperationGetResult(out.v[i], 0)), 0) == 16)
				mlirValueReplaceAllUsesOfWith(
					mlirOperationGetResult(g->c[--j], 0),
					mlirOperationGetResult(out.v[i], 0));
		if (j) {
			pb_error_at(ctx, mlirOperationGetLocation(g->c[0]),
				    "internal: a wgmma without its accumulators");
			rc = PB_ERR;
		}
	}
	pb_ir_ops_free(&out);
	pb_buf_free(&t);
	pb_buf_free(&ra);
	pb_buf_free(&rb_);
	pb_buf_free(&st);
	return rc;
}

/* Insert "text" (an operation without operands) before "before". */
static int insert_op(struct pb_ctx *ctx, const char *text,
		     MlirOperation before)
{
	char t[192];
	snprintf(t, sizeof(t), "func.func @t() {\n  %s\n  return\n}\n", text);
	return pb_ir_instantiate(ctx, t, before, 0, NULL,
				 mlirOperationGetLocation(before), NULL);
}

/* The group of "c" (the first contract of its A read) into "g": the
 * contracts after it in its block that read the same A, in order; 0
 * when its A is not a read of a wgmma ring, -1 (reported) when the
 * group is not one wgmma's. */
static int group_of(struct pb_ctx *ctx, MlirOperation c, struct group *g)
{
	MlirValue a = mlirOperationGetOperand(c, 0);
	memset(g, 0, sizeof(*g));
	g->a = swizzled_read(a);
	g->b = swizzled_read(mlirOperationGetOperand(c, 1));
	/* A from registers (attention's Q and P) with B from a ring */
	if (mlirOperationIsNull(g->a) && mlirOperationIsNull(g->b))
		return 0;
	for (MlirOperation o = c; !mlirOperationIsNull(o);
	     o = mlirOperationGetNextInBlock(o)) {
		if (!pb_ir_op_is(o, "vector.contract") ||
		    !mlirValueEqual(mlirOperationGetOperand(o, 0), a))
			continue;
		MlirOperation b = swizzled_read(mlirOperationGetOperand(o, 1));
		if (g->n == MAXF || mlirOperationIsNull(b) ||
		    mlirOperationIsNull(g->b) ||
		    !mlirValueEqual(mlirOperationGetOperand(b, 0),
				    mlirOperationGetOperand(g->b, 0)))
			goto bad;
		g->c[g->n++] = o;
	}
	return 1;
bad:
	pb_error_at(ctx, mlirOperationGetLocation(c),
		    "internal: the contractions of a wgmma ring's read are "
		    "not one wgmma m64nNk16 (N up to 256)");
	return -1;
}

/* Is "op" a contract of one of groups "gs[0 .. ng-1]"? */
static int in_group(const struct group *gs, int ng, MlirOperation op)
{
	for (int k = 0; k < ng; k++)
		for (int j = 0; j < gs[k].n; j++)
			if (mlirOperationEqual(gs[k].c[j], op))
				return 1;
	return 0;
}

/* Destroy "op" when its results have no uses. */
static void drop_unused(MlirOperation op)
{
	if (mlirOpOperandIsNull(mlirValueGetFirstUse(
		    mlirOperationGetResult(op, 0))))
		mlirOperationDestroy(op);
}

int pb_codegen_wgmma(struct pb_ctx *ctx, MlirOperation launch)
{
	struct pb_ir_ops cs = {0}, reads = {0}, bars = {0};
	struct group *gs = NULL;
	int ng = 0, rc = PB_OK;
	pb_ir_collect(launch, "vector.contract", &cs);
	gs = calloc(cs.n ? (size_t)cs.n : 1, sizeof(*gs));
	for (int i = 0; i < cs.n && rc == PB_OK; i++) {
		int grouped = 0;
		for (int k = 0; k < ng && !grouped; k++)
			for (int j = 0; j < gs[k].n; j++)
				grouped |= mlirOperationEqual(gs[k].c[j], cs.v[i]);
		if (grouped)
			continue;
		int r = group_of(ctx, cs.v[i], &gs[ng]);
		if (r < 0)
			rc = PB_ERR;
		else if (r > 0)
			ng++;
	}
	/* A from registers: wait for a wgmma whose accumulators others
	   than the next wgmmas read (attention's scores, its output
	   rescaled in the next step) */
	for (int k = 0; k < ng; k++)
		for (int j = 0; j < gs[k].n && mlirOperationIsNull(gs[k].a); j++)
			for (MlirOpOperand u = mlirValueGetFirstUse(
				     mlirOperationGetResult(gs[k].c[j], 0));
			     !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u))
				gs[k].wait |= !in_group(gs, ng,
							mlirOpOperandGetOwner(u));
	/* the outermost loop of the wgmmas: the epilogue after it reads
	   their accumulators */
	MlirOperation outer = {NULL};
	for (int k = 0; k < ng; k++)
		for (MlirOperation p = mlirOperationGetParentOperation(gs[k].c[0]);
		     !mlirOperationIsNull(p) && !mlirOperationEqual(p, launch);
		     p = mlirOperationGetParentOperation(p))
			if (pb_ir_op_is(p, "affine.for") || pb_ir_op_is(p, "scf.for"))
				outer = p;
	for (int k = 0; k < ng && rc == PB_OK; k++) {
		rc = lower_group(ctx, &gs[k]);
		for (int j = gs[k].n - 1; j >= 0 && rc == PB_OK; j--) {
			MlirOperation b = mlirOpResultGetOwner(
				mlirOperationGetOperand(gs[k].c[j], 1));
			mlirOperationDestroy(gs[k].c[j]);
			drop_unused(b);
		}
		if (rc == PB_OK && !mlirOperationIsNull(gs[k].a))
			drop_unused(gs[k].a);
	}
	free(gs);
	pb_ir_ops_free(&cs);
	/* every read of a wgmma ring is the tensor core's now */
	pb_ir_collect(launch, "vector.transfer_read", &reads);
	for (int i = 0; i < reads.n && rc == PB_OK; i++)
		if (!mlirAttributeIsNull(pb_ir_attr(reads.v[i], PB_ATTR_SWIZZLE))) {
			pb_error_at(ctx, mlirOperationGetLocation(reads.v[i]),
				    "internal: a read of a wgmma ring that "
				    "is no wgmma operand");
			rc = PB_ERR;
		}
	pb_ir_ops_free(&reads);
	/* before each barrier: the wgmmas done (the copies after it may
	   overwrite what they read), the threads' copies into the rings
	   seen by the tensor core's (async proxy) reads after it; after
	   the loops, the accumulators ready for the epilogue */
	if (ng && rc == PB_OK)
		pb_ir_collect(launch, "gpu.barrier", &bars);
	for (int i = 0; i < bars.n && rc == PB_OK; i++)
		rc = insert_op(ctx, "nvvm.wgmma.wait.group.sync.aligned 0",
			       bars.v[i]) ||
		     insert_op(ctx, "nvvm.fence.proxy {kind = "
			       "#nvvm.proxy_kind<async.shared>, space = "
			       "#nvvm.shared_space<cta>}", bars.v[i]);
	if (ng && rc == PB_OK && !mlirOperationIsNull(outer))
		rc = insert_op(ctx, "nvvm.wgmma.wait.group.sync.aligned 0",
			       mlirOperationGetNextInBlock(outer));
	pb_ir_ops_free(&bars);
	return rc;
}
