/* A contraction nest in its tensor-core form (docs/pb-mma.md):
 *
 *   affine.parallel (.., %i0, .., %j0) step (.., BM, .., BN)  {pb.map = "block"}
 *     affine.parallel (%wm, %wn) = (0, 0) to (BM, BN) step (WM, WN)
 *                                                         {pb.map = "warp"}
 *       %acc:F = affine.for %k = 0 to K step 16 iter_args(zero fragments) {
 *         A fragments vector<16x16>: vector.transfer_read A[.., rows, k]
 *         B fragments vector<16x8>:  vector.transfer_read B[.., k, cols]
 *         F = (WM/16)(WN/8) vector.contract into vector<16x8xf32>
 *       }
 *
 *       (f32 operands on tf32 tensor cores: k steps of 8, A fragments
 *       vector<16x8xf32>, B vector<8x8xf32>, each cut to tf32 as the
 *       tensor core reads it, its 13 low mantissa bits dropped: bits &
 *       0xffffe000, which pb-codegen leaves to the tensor core)
 *       per fragment: the epilogue, element-wise on vector<16x8>, its
 *       reads as vector.transfer_read and its stores as
 *       vector.transfer_write
 *
 * Everything is warp-level: the vectors are a warp's, not a lane's. On
 * the CPU they lower through upstream vector-to-scf/LLVM; pb-codegen
 * distributes them to the lanes as mma.sync fragments. */
#include <string.h>

#include "mlir-c/BuiltinTypes.h"

#include "ir/contract.h"
#include "mma/internal.h"

/* The subscript list of access "x" into "t": band dimension d is
 * "%<pre><d>" ("%<rows>"/"%<cols>" for m and n, when given), k "%k",
 * constants "%<cpre><r>" (defined by pb_mma_cst_text); a convolution's
 * window subscripts and strided ones (A's, given "rows") are those of
 * window_text and window_mask_text, C's rows when strided an index of
 * A's view (columns / S, S) and the phase "%wq". */
static void subs_text(struct pb_buf *t, const struct pb_kernel_contraction *c,
		      const struct pb_kernel_access *x, const char *rows,
		      const char *cols, const char *cpre)
{
	for (int r = 0; r < x->rank; r++) {
		int d = x->sub[r];
		pb_buf_puts(t, r ? ", " : "");
		int64_t st = pb_kernel_stride(x, r);
		if (x->tap[r] && d == c->m && rows)
			pb_buf_printf(t, "%%w%s", rows);
		else if (x->tap[r])
			pb_buf_printf(t, "%%wc%d", r);
		else if (st > 1 && d == c->m && rows)
			pb_buf_printf(t, "%%%s", rows);
		else if (st > 1)
			pb_buf_printf(t, "%%ws%d", r);
		else if (d == PB_KERNEL_SUB_K)
			pb_buf_puts(t, "%k");
		else if (d <= PB_KERNEL_SUB_TAP)
			pb_buf_printf(t, "%%t%d", PB_KERNEL_SUB_TAP - d);
		else if (d == PB_KERNEL_SUB_CST)
			pb_buf_printf(t, "%%%s%d", cpre, r);
		else if (d == c->m && rows)
			pb_buf_printf(t, "%%%s", rows);
		else if (d == c->n && cols)
			pb_buf_printf(t, "%%%s", cols);
		else
			pb_buf_printf(t, "%%d%d", d);
		if (st > 1 && d == c->m && rows)
			pb_buf_puts(t, ", %wq");
	}
}

/* Is any subscript of "x" strided? */
static int strided(const struct pb_kernel_access *x)
{
	for (int r = 0; r < x->rank; r++)
		if (pb_kernel_stride(x, r) > 1)
			return 1;
	return 0;
}

/* The type of A as pb-mma reads it into "t": its own, or, strided along
 * C's rows (docs/pb-mma.md, "Strided convolutions"), the view of its
 * last dimension W split into (W / S, S). */
static void a_type_text(struct pb_buf *t, const struct pb_kernel_contraction *c)
{
	MlirType mt = mlirValueGetType(c->a.mem);
	int64_t st = pb_kernel_row_stride(c);
	if (st == 1) {
		pb_ir_type_print(mt, t);
		return;
	}
	pb_buf_puts(t, "memref<");
	for (int r = 0; r < c->a.rank; r++) {
		int64_t n = mlirShapedTypeGetDimSize(mt, r);
		if (r == c->a.rank - 1)
			pb_buf_printf(t, "%lldx%lldx", (long long)(n / st),
				      (long long)st);
		else
			pb_buf_printf(t, "%lldx", (long long)n);
	}
	pb_ir_type_print(mlirShapedTypeGetElementType(mt), t);
	pb_buf_puts(t, ">");
}

/* The view "%Ax" of A strided along C's rows: its last dimension split
 * in (W / S, S), so that the rows S elements apart of a window column's
 * phase are consecutive (a_type_text). */
static void a_view_text(struct pb_buf *t, const struct pb_kernel_contraction *c)
{
	MlirType mt = mlirValueGetType(c->a.mem);
	int64_t st = pb_kernel_row_stride(c);
	int rank = c->a.rank;
	pb_buf_puts(t, "  %Ax = memref.expand_shape %A [");
	for (int r = 0; r < rank - 1; r++)
		pb_buf_printf(t, "[%d], ", r);
	pb_buf_printf(t, "[%d, %d]] output_shape [", rank - 1, rank);
	for (int r = 0; r < rank; r++) {
		int64_t n = mlirShapedTypeGetDimSize(mt, r);
		if (r == rank - 1)
			pb_buf_printf(t, "%lld, %lld", (long long)(n / st),
				      (long long)st);
		else
			pb_buf_printf(t, "%lld, ", (long long)n);
	}
	pb_buf_puts(t, "] : ");
	pb_ir_type_print(mt, t);
	pb_buf_puts(t, " into ");
	a_type_text(t, c);
	pb_buf_puts(t, "\n");
}

void pb_mma_cst_text(struct pb_buf *t, const struct pb_kernel_access *x,
		     const char *cpre)
{
	for (int r = 0; r < x->rank; r++)
		if (x->sub[r] == PB_KERNEL_SUB_CST)
			pb_buf_printf(t, "      %%%s%d = arith.constant %lld : "
				      "index\n", cpre, r, (long long)x->cst[r]);
}

/* The position of role "d" among the subscripts of "x", -1 if none. */
static int pos_of(const struct pb_kernel_access *x, int d)
{
	for (int r = 0; r < x->rank; r++)
		if (x->sub[r] == d)
			return r;
	return -1;
}

/* permutation_map of a 2-d vector whose rows are subscript "r0" of a
 * rank "rank" buffer and columns subscript "r1" (-1: broadcast). */
static void perm_text(struct pb_buf *t, int rank, int r0, int r1)
{
	pb_buf_puts(t, "affine_map<(");
	for (int r = 0; r < rank; r++)
		pb_buf_printf(t, "%sd%d", r ? ", " : "", r);
	pb_buf_puts(t, ") -> (");
	if (r0 >= 0)
		pb_buf_printf(t, "d%d", r0);
	else
		pb_buf_puts(t, "0");
	if (r1 >= 0)
		pb_buf_printf(t, ", d%d)>", r1);
	else
		pb_buf_puts(t, ", 0)>");
}

/* The zero of element type "e" as an attribute's text. */
static const char *zero_of(MlirType e)
{
	return mlirTypeIsAFloat(e) ? "0.000000e+00" : "0";
}

static int64_t round_up(int64_t x, int64_t m)
{
	return (x + m - 1) / m * m;
}

/* Does the last block of "s" overrun C's rows (its fragments masked)? */
static int masked(const struct pb_kernel_contraction *c,
		  const struct pb_kernel_mma_tiles *s)
{
	return c->b.extent[c->m] % s->bm != 0;
}

/* Does the last block of "s" overrun C's columns? */
static int masked_cols(const struct pb_kernel_contraction *c,
		       const struct pb_kernel_mma_tiles *s)
{
	return c->b.extent[c->n] % s->bn != 0;
}

/* Does the last mma step overrun K (its operands masked along k)? */
static int masked_k(const struct pb_kernel_contraction *c)
{
	return c->k % pb_kernel_frag_k(c->tc) != 0;
}

static const char *in_bounds(int masked)
{
	return masked ? "false" : "true";
}

/* The text of "%<v><i>": "%<v>x<i>" (a rows x cols f32 operand fragment)
 * as a tf32 tensor core reads it: its 13 low mantissa bits dropped
 * (PB_KERNEL_TF32_MASK). */
static void round_text(struct pb_buf *t, const char *v, int i, int rows,
		       int cols)
{
	char vt[64];
	snprintf(vt, sizeof(vt), "vector<%dx%dxi32>", rows, cols);
	pb_buf_printf(t, "        %%%sm%d = arith.constant dense<%d> : %s\n"
		      "        %%%si%d = arith.bitcast %%%sx%d : vector<%dx%dxf32> "
		      "to %s\n"
		      "        %%%sk%d = arith.andi %%%si%d, %%%sm%d : %s\n"
		      "        %%%s%d = arith.bitcast %%%sk%d : %s to "
		      "vector<%dx%dxf32>\n",
		      v, i, PB_KERNEL_TF32_MASK, vt, v, i, v, i, rows, cols, vt,
		      v, i, v, i, v, i, vt, v, i, v, i, vt, rows, cols);
}

/* The text of "%<v><i>": "%<v>x<i>" (a rows x cols f32 operand fragment)
 * rounded to the tensor cores' half type "tc" (--precision=fp16|bf16), to
 * nearest even as cvt.rn does on the GPU. */
static void trunc_text(struct pb_buf *t, const char *v, int i, int rows,
		       int cols, const char *tc)
{
	pb_buf_printf(t, "        %%%s%d = arith.truncf %%%sx%d : "
		      "vector<%dx%dxf32> to vector<%dx%dx%s>\n",
		      v, i, v, i, rows, cols, rows, cols, tc);
}

void pb_mma_block_loop_text(struct pb_buf *t, const char *pre,
			    const struct pb_kernel_band *b, const int64_t *tile,
			    int alt)
{
	pb_buf_puts(t, "  affine.parallel (");
	for (int d = 0; d < b->n; d++)
		if (d == alt)
			pb_buf_printf(t, "%s%%%sh", d ? ", " : "", pre);
		else
			pb_buf_printf(t, "%s%%%s%d", d ? ", " : "", pre, d);
	pb_buf_puts(t, ") = (");
	for (int d = 0; d < b->n; d++)
		pb_buf_printf(t, "%s0", d ? ", " : "");
	pb_buf_puts(t, ") to (");
	for (int d = 0; d < b->n; d++)
		pb_buf_printf(t, "%s%lld", d ? ", " : "",
			      (long long)round_up(b->extent[d], tile[d]));
	pb_buf_puts(t, ") step (");
	for (int d = 0; d < b->n; d++)
		pb_buf_printf(t, "%s%lld", d ? ", " : "", (long long)tile[d]);
	pb_buf_puts(t, ") {\n");
}

/* The window subscripts of A (a convolution's input, docs/pb-mma.md,
 * "Convolutions") other than C's rows', which a fragment's rows share:
 * "%wc<r>" (S d + t + off, S the stride), clamped into the buffer, and
 * "%wok", whether all of them lie in it (a window row above or below the
 * image reads zeros); a strided subscript without a window "%ws<r>"
 * (S d); strided along C's rows, the phase "%wq" of the window's column,
 * (t + off) mod S. */
static void window_text(struct pb_buf *t, const struct pb_kernel_contraction *c)
{
	const struct pb_kernel_access *x = &c->a;
	MlirType mt = mlirValueGetType(x->mem);
	char prev[16] = "wtrue";
	pb_buf_puts(t, "        %wtrue = arith.constant true\n"
		    "        %wzero = arith.constant 0 : index\n");
	for (int r = 0; r < x->rank; r++) {
		long long st = (long long)pb_kernel_stride(x, r);
		long long off = (long long)x->off[r];
		int d = x->sub[r], tp = x->tap[r] - 1;
		if (st > 1 && d == c->m && x->tap[r])
			pb_buf_printf(t, "        %%wq = affine.apply affine_map<"
				      "(b) -> ((b + %lld) mod %lld)>(%%t%d)\n",
				      off, st, tp);
		else if (st > 1 && d == c->m)
			pb_buf_printf(t, "        %%wq = arith.constant %lld : "
				      "index\n", off);
		else if (st > 1 && !x->tap[r])
			pb_buf_printf(t, "        %%ws%d = affine.apply "
				      "affine_map<(a) -> (a * %lld + %lld)>"
				      "(%%d%d)\n", r, st, off, d);
		if (!x->tap[r] || d == c->m)
			continue;
		long long n = (long long)mlirShapedTypeGetDimSize(mt, r);
		pb_buf_printf(t, "        %%wv%d = affine.apply affine_map<(a, "
			      "b) -> (a * %lld + b + %lld)>(%%d%d, %%t%d)\n"
			      "        %%wm%d = affine.max affine_map<(a, b) -> "
			      "(0, a * %lld + b + %lld)>(%%d%d, %%t%d)\n"
			      "        %%wc%d = affine.min affine_map<(a) -> "
			      "(%lld, a)>(%%wm%d)\n"
			      "        %%wn%d = arith.constant %lld : index\n"
			      "        %%wl%d = arith.cmpi sge, %%wv%d, %%wzero : "
			      "index\n"
			      "        %%wh%d = arith.cmpi slt, %%wv%d, %%wn%d : "
			      "index\n"
			      "        %%wb%d = arith.andi %%wl%d, %%wh%d : i1\n"
			      "        %%wk%d = arith.andi %%%s, %%wb%d : i1\n",
			      r, st, off, d, tp, r, st, off, d, tp, r, n - 1, r, r, n,
			      r, r, r, r, r, r, r, r, r, prev, r);
		snprintf(prev, sizeof(prev), "wk%d", r);
	}
	pb_buf_printf(t, "        %%wok = arith.andi %%wtrue, %%%s : i1\n",
		      prev);
}

/* The mask of A fragment row "i" of a convolution (after window_text):
 * its rows from "lo" on, "lo" the first whose column of the image is not
 * left of it (the window's left part reads zeros; the right part is past
 * the buffer's end, in_bounds false), all rows off when "%wok" is false.
 * Strided by S, row i's column of the image is S (row + j) + t + off,
 * that is index row + j + (t + off) floordiv S of the view (columns / S,
 * S) at phase (t + off) mod S.
 * The mask is in the vector's order (rows, k): upstream's lowering reads
 * it so for a transposing permutation map (checked on the CPU). */
static void window_mask_text(struct pb_buf *t,
			     const struct pb_kernel_contraction *c, int i)
{
	const struct pb_kernel_access *x = &c->a;
	int rm = -1;
	for (int r = 0; r < x->rank; r++)
		if (x->sub[r] == c->m)
			rm = r;
	long long st = (long long)pb_kernel_stride(x, rm);
	if (x->tap[rm])
		pb_buf_printf(t, "        %%wrow%d = affine.apply affine_map<"
			      "(a, b) -> (a + (b + %lld) floordiv %lld)>"
			      "(%%row%d, %%t%d)\n"
			      "        %%wlo%d = affine.max affine_map<(a) -> "
			      "(0, -a)>(%%wrow%d)\n",
			      i, (long long)x->off[rm], st, i, x->tap[rm] - 1,
			      i, i);
	else
		pb_buf_printf(t, "        %%wlo%d = arith.constant 0 : index\n",
			      i);
	pb_buf_printf(t, "        %%wall%d = arith.constant 16 : index\n"
		      "        %%wlm%d = arith.select %%wok, %%wlo%d, %%wall%d : "
		      "index\n", i, i, i, i);
	pb_buf_printf(t, "        %%wcm%d = vector.create_mask %%wlm%d, "
		      "%%wall%d : vector<16x16xi1>\n", i, i, i);
	pb_buf_printf(t, "        %%wone%d = arith.constant dense<true> : "
		      "vector<16x16xi1>\n"
		      "        %%wmask%d = arith.xori %%wcm%d, %%wone%d : "
		      "vector<16x16xi1>\n", i, i, i, i);
}

/* The band dimension of the image rows a block of "s" covers several of
 * (docs/pb-mma.md, "Blocks of several image rows"), -1 when one. */
static int rows_dim(const struct pb_kernel_contraction *c,
		    const struct pb_kernel_mma_tiles *s)
{
	return s->bh > 1 ? pb_kernel_window_rows(c) : -1;
}

/* The text of the block and warp loops and the reduction on fragments. */
static void skeleton_text(struct pb_buf *t,
			  const struct pb_kernel_contraction *c,
			  const struct pb_kernel_mma_tiles *s)
{
	int fm = (int)(s->wm / PB_KERNEL_FRAG_M), fn = (int)(s->wn / PB_KERNEL_FRAG_N);
	int nf = fm * fn, fk = (int)pb_kernel_frag_k(c->tc);
	/* f32 operands: cut to tf32, or rounded to f16/bf16 */
	int tf32 = mlirTypeIsAF32(c->tc);
	int cut = tf32 || !mlirTypeEqual(c->elt, c->tc);
	struct pb_buf ta = {0}, tb = {0}, e = {0}, tc = {0};
	int view = pb_kernel_row_stride(c) > 1;
	pb_ir_type_print(mlirValueGetType(c->a.mem), &ta);
	pb_ir_type_print(mlirValueGetType(c->b_.mem), &tb);
	pb_ir_type_print(c->elt, &e);
	pb_ir_type_print(c->tc, &tc);
	pb_buf_printf(t, "func.func @t(%%A: %s, %%B: %s) {\n", ta.data, tb.data);
	if (view) {
		a_view_text(t, c);
		pb_buf_free(&ta);
		ta = (struct pb_buf){0};
		a_type_text(&ta, c);
	}
	int64_t tile[PB_KERNEL_MAXD];
	int hd = rows_dim(c, s);
	for (int d = 0; d < c->b.n; d++)
		tile[d] = d == c->m ? s->bm : d == c->n ? s->bn : 1;
	if (hd >= 0)
		tile[hd] = s->bh;
	pb_mma_block_loop_text(t, "d", &c->b, tile, hd);
	if (hd >= 0)
		/* bh image rows a block: a row of warps each, the warp's
		   row "%d<h>" the block's "%dh" + its own */
		pb_buf_printf(t, "    affine.parallel (%%wh, %%wm, %%wn) = (0, "
			      "0, 0) to (%lld, %lld, %lld) step (1, %lld, "
			      "%lld) {\n      %%d%d = affine.apply affine_map<"
			      "(a, b) -> (a + b)>(%%dh, %%wh)\n",
			      (long long)s->bh, (long long)s->bm,
			      (long long)s->bn, (long long)s->wm,
			      (long long)s->wn, hd);
	else
		pb_buf_printf(t, "    affine.parallel (%%wm, %%wn) = (0, 0) to "
			      "(%lld, %lld) step (%lld, %lld) {\n",
			      (long long)s->bm, (long long)s->bn,
			      (long long)s->wm, (long long)s->wn);
	pb_buf_printf(t, "      %%z = arith.constant dense<0.000000e+00> : "
		      "vector<16x8xf32>\n      %%pad = arith.constant %s : "
		      "%s\n", zero_of(c->elt), e.data);
	pb_mma_cst_text(t, &c->a, "ca");
	pb_mma_cst_text(t, &c->b_, "cb");
	/* a convolution's window loops around the k loop, the
	   accumulators carried through them */
	for (int w = 0; w < c->ntap; w++) {
		pb_buf_printf(t, "      %%r%d:%d = affine.for %%t%d = 0 to %lld "
			      "iter_args(", w, nf, w, (long long)c->tap_ext[w]);
		for (int f = 0; f < nf; f++)
			if (w)
				pb_buf_printf(t, "%s%%e%d_%d = %%e%d_%d",
					      f ? ", " : "", w, f, w - 1, f);
			else
				pb_buf_printf(t, "%s%%e0_%d = %%z", f ? ", " : "",
					      f);
		pb_buf_puts(t, ") -> (");
		for (int f = 0; f < nf; f++)
			pb_buf_printf(t, "%svector<16x8xf32>", f ? ", " : "");
		pb_buf_puts(t, ") {\n");
	}
	if (c->ntap || strided(&c->a))
		window_text(t, c);
	pb_buf_printf(t, "      %%r:%d = affine.for %%k = 0 to %lld step %d "
		      "iter_args(", nf, (long long)pb_kernel_mma_k(c), fk);
	for (int f = 0; f < nf; f++)
		if (c->ntap)
			pb_buf_printf(t, "%s%%c%d = %%e%d_%d", f ? ", " : "", f,
				      c->ntap - 1, f);
		else
			pb_buf_printf(t, "%s%%c%d = %%z", f ? ", " : "", f);
	pb_buf_puts(t, ") -> (");
	for (int f = 0; f < nf; f++)
		pb_buf_printf(t, "%svector<16x8xf32>", f ? ", " : "");
	pb_buf_puts(t, ") {\n");
	for (int i = 0; i < fm; i++) {
		pb_buf_printf(t, "        %%row%d = affine.apply affine_map<"
			      "(a, b) -> (a + b + %d)>(%%d%d, %%wm)\n", i,
			      16 * i, c->m);
		if (c->ntap)
			window_mask_text(t, c, i);
		pb_buf_printf(t, "        %%a%s%d = vector.transfer_read %%A%s[",
			      cut ? "x" : "", i, view ? "x" : "");
		char rows[16];
		snprintf(rows, sizeof(rows), "row%d", i);
		subs_text(t, c, &c->a, rows, NULL, "ca");
		if (c->ntap)
			pb_buf_printf(t, "], %%pad, %%wmask%d", i);
		else
			pb_buf_puts(t, "], %pad");
		pb_buf_printf(t, " {in_bounds = [%s, %s], "
			      "permutation_map = ",
			      in_bounds(masked(c, s) || c->ntap),
			      in_bounds(masked_k(c)));
		perm_text(t, c->a.rank + view, pos_of(&c->a, c->m),
			  pos_of(&c->a, PB_KERNEL_SUB_K));
		pb_buf_printf(t, "} : %s, vector<16x%dx%s>\n", ta.data, fk,
			      e.data);
		if (tf32)
			round_text(t, "a", i, 16, fk);
		else if (cut)
			trunc_text(t, "a", i, 16, fk, tc.data);
	}
	for (int j = 0; j < fn; j++) {
		char cols[16];
		snprintf(cols, sizeof(cols), "col%d", j);
		pb_buf_printf(t, "        %%col%d = affine.apply affine_map<"
			      "(a, b) -> (a + b + %d)>(%%d%d, %%wn)\n", j,
			      8 * j, c->n);
		pb_buf_printf(t, "        %%b%s%d = vector.transfer_read %%B[",
			      cut ? "x" : "", j);
		subs_text(t, c, &c->b_, NULL, cols, "cb");
		pb_buf_printf(t, "], %%pad {in_bounds = [%s, %s], "
			      "permutation_map = ", in_bounds(masked_k(c)),
			      in_bounds(masked_cols(c, s)));
		perm_text(t, c->b_.rank, pos_of(&c->b_, PB_KERNEL_SUB_K),
			  pos_of(&c->b_, c->n));
		pb_buf_printf(t, "} : %s, vector<%dx8x%s>\n", tb.data, fk,
			      e.data);
		if (tf32)
			round_text(t, "b", j, fk, 8);
		else if (cut)
			trunc_text(t, "b", j, fk, 8, tc.data);
	}
	for (int i = 0; i < fm; i++)
		for (int j = 0; j < fn; j++)
			pb_buf_printf(
				t,
				"        %%n%d = vector.contract {indexing_maps = "
				"[affine_map<(m, n, k) -> (m, k)>, "
				"affine_map<(m, n, k) -> (k, n)>, "
				"affine_map<(m, n, k) -> (m, n)>], "
				"iterator_types = [\"parallel\", \"parallel\", "
				"\"reduction\"], kind = #vector.kind<add>} "
				"%%a%d, %%b%d, %%c%d : vector<16x%dx%s>, "
				"vector<%dx8x%s> into vector<16x8xf32>\n",
				i * fn + j, i, j, i * fn + j, fk, tc.data, fk,
				tc.data);
	pb_buf_puts(t, "        affine.yield ");
	for (int f = 0; f < nf; f++)
		pb_buf_printf(t, "%s%%n%d", f ? ", " : "", f);
	pb_buf_puts(t, " : ");
	for (int f = 0; f < nf; f++)
		pb_buf_printf(t, "%svector<16x8xf32>", f ? ", " : "");
	pb_buf_puts(t, "\n      }\n");
	for (int w = c->ntap - 1; w >= 0; w--) {
		pb_buf_puts(t, "      affine.yield ");
		for (int f = 0; f < nf; f++)
			if (w == c->ntap - 1)
				pb_buf_printf(t, "%s%%r#%d", f ? ", " : "", f);
			else
				pb_buf_printf(t, "%s%%r%d#%d", f ? ", " : "",
					      w + 1, f);
		pb_buf_puts(t, " : ");
		for (int f = 0; f < nf; f++)
			pb_buf_printf(t, "%svector<16x8xf32>", f ? ", " : "");
		pb_buf_puts(t, "\n      }\n");
	}
	pb_buf_printf(t, "    } {" PB_ATTR_MAP " = \"warp\"}\n"
		      "  } {" PB_ATTR_MAP " = \"block\"}\n  return\n}\n");
	pb_buf_free(&ta);
	pb_buf_free(&tb);
	pb_buf_free(&e);
	pb_buf_free(&tc);
}

/* The epilogue of one fragment, built before "yield". */
struct frag {
	struct pb_ctx *ctx;
	const struct pb_kernel_contraction *c;
	MlirOperation yield;
	MlirLocation loc;
	MlirValue sub[PB_KERNEL_MAXD]; /* band dimension d's value */
	MlirValue acc;		       /* the fragment's accumulator */
	struct pb_ir_map map;	       /* epilogue values to vectors */
	MlirValue local[16], lval[16]; /* scalar temporaries, their values */
	int nlocal;
	int masked, masked_cols;       /* the rows, the columns may
					  overrun C */
};

/* The slot of scalar temporary "m" in "f" (a new one when absent); -1
 * when there is no room. */
static int local_slot(struct frag *f, MlirValue m)
{
	for (int i = 0; i < f->nlocal; i++)
		if (mlirValueEqual(f->local[i], m))
			return i;
	if (f->nlocal == 16)
		return -1;
	f->local[f->nlocal] = m;
	f->lval[f->nlocal].ptr = NULL;
	return f->nlocal++;
}

static MlirType vec_of(MlirType e)
{
	int64_t shape[2] = {PB_KERNEL_FRAG_M, PB_KERNEL_FRAG_N};
	return mlirVectorTypeGet(2, shape, e);
}

/* Instantiate "text" (taking "n" arguments "args") before the yield;
 * the result of its last operation, or a null value. */
static MlirValue emit(struct frag *f, const char *text, int n,
		      const MlirValue *args)
{
	struct pb_ir_ops out = {0};
	MlirValue v = {NULL};
	if (pb_ir_instantiate(f->ctx, text, f->yield, n, args, f->loc, &out) ==
		    PB_OK &&
	    out.n && mlirOperationGetNumResults(out.v[out.n - 1]))
		v = mlirOperationGetResult(out.v[out.n - 1], 0);
	pb_ir_ops_free(&out);
	return v;
}

/* The arguments of an access template: the buffer, then every band
 * dimension's value. */
static int access_args(struct frag *f, MlirValue mem, MlirValue *args)
{
	args[0] = mem;
	for (int d = 0; d < f->c->b.n; d++)
		args[1 + d] = f->sub[d];
	return 1 + f->c->b.n;
}

static void access_sig(struct pb_buf *t, struct frag *f, MlirType mt,
		       MlirValue v)
{
	pb_buf_puts(t, "func.func @t(%X: ");
	pb_ir_type_print(mt, t);
	for (int d = 0; d < f->c->b.n; d++)
		pb_buf_printf(t, ", %%d%d: index", d);
	if (!mlirValueIsNull(v)) {
		pb_buf_puts(t, ", %v: ");
		pb_ir_type_print(mlirValueGetType(v), t);
	}
	pb_buf_puts(t, ") {\n");
}

/* A vector of "v" (a scalar defined outside the nest, or a constant in
 * it: copied, as the nest goes). */
static MlirValue broadcast(struct frag *f, MlirValue v)
{
	struct pb_buf t = {0};
	MlirType ty = mlirValueGetType(v);
	if (mlirValueIsAOpResult(v) &&
	    pb_ir_op_is(mlirOpResultGetOwner(v), "arith.constant") &&
	    pb_ir_defined_in(v, f->c->b.root)) {
		MlirOperation k = mlirOperationClone(mlirOpResultGetOwner(v));
		mlirBlockInsertOwnedOperationBefore(
			mlirOperationGetBlock(f->yield), f->yield, k);
		v = mlirOperationGetResult(k, 0);
	}
	pb_buf_puts(&t, "func.func @t(%x: ");
	pb_ir_type_print(ty, &t);
	pb_buf_puts(&t, ") {\n  %v = vector.broadcast %x : ");
	pb_ir_type_print(ty, &t);
	pb_buf_puts(&t, " to ");
	pb_ir_type_print(vec_of(ty), &t);
	pb_buf_puts(&t, "\n  return\n}\n");
	MlirValue r = emit(f, t.data, 1, &v);
	pb_buf_free(&t);
	return r;
}

/* An epilogue read: a fragment-shaped transfer_read (rows along m,
 * columns along n, broadcast where the read has neither), or a scalar
 * read broadcast. */
static MlirValue read_text(struct frag *f, MlirOperation op)
{
	struct pb_kernel_access x;
	struct pb_buf t = {0};
	MlirValue args[1 + PB_KERNEL_MAXD];
	pb_kernel_access_of(f->c, op, &x);
	MlirType mt = mlirValueGetType(x.mem);
	MlirType e = mlirShapedTypeGetElementType(mt);
	int r0 = pos_of(&x, f->c->m), r1 = pos_of(&x, f->c->n);
	int n = access_args(f, x.mem, args);
	access_sig(&t, f, mt, (MlirValue){NULL});
	pb_mma_cst_text(&t, &x, "x");
	if (r0 < 0 && r1 < 0) {
		pb_buf_puts(&t, "  %e = memref.load %X[");
		subs_text(&t, f->c, &x, NULL, NULL, "x");
		pb_buf_puts(&t, "] : ");
		pb_ir_type_print(mt, &t);
		pb_buf_puts(&t, "\n  %v = vector.broadcast %e : ");
		pb_ir_type_print(e, &t);
		pb_buf_puts(&t, " to ");
		pb_ir_type_print(vec_of(e), &t);
	} else {
		pb_buf_printf(&t, "  %%p = arith.constant %s : ", zero_of(e));
		pb_ir_type_print(e, &t);
		pb_buf_puts(&t, "\n  %v = vector.transfer_read %X[");
		subs_text(&t, f->c, &x, NULL, NULL, "x");
		pb_buf_printf(&t, "], %%p {in_bounds = [%s, %s], "
			      "permutation_map = ",
			      in_bounds(r0 >= 0 && f->masked),
			      in_bounds(r1 >= 0 && f->masked_cols));
		perm_text(&t, x.rank, r0, r1);
		pb_buf_puts(&t, "} : ");
		pb_ir_type_print(mt, &t);
		pb_buf_puts(&t, ", ");
		pb_ir_type_print(vec_of(e), &t);
	}
	pb_buf_puts(&t, "\n  return\n}\n");
	MlirValue v = emit(f, t.data, n, args);
	pb_buf_free(&t);
	return v;
}

static int write_text(struct frag *f, MlirOperation op, MlirValue v)
{
	struct pb_kernel_access x;
	struct pb_buf t = {0};
	MlirValue args[2 + PB_KERNEL_MAXD];
	pb_kernel_access_of(f->c, op, &x);
	MlirType mt = mlirValueGetType(x.mem);
	int n = access_args(f, x.mem, args);
	args[n++] = v;
	access_sig(&t, f, mt, v);
	pb_mma_cst_text(&t, &x, "x");
	pb_buf_puts(&t, "  vector.transfer_write %v, %X[");
	subs_text(&t, f->c, &x, NULL, NULL, "x");
	pb_buf_printf(&t, "] {in_bounds = [%s, %s], permutation_map = ",
		      in_bounds(f->masked), in_bounds(f->masked_cols));
	perm_text(&t, x.rank, pos_of(&x, f->c->m), pos_of(&x, f->c->n));
	pb_buf_puts(&t, "} : ");
	pb_ir_type_print(mlirValueGetType(v), &t);
	pb_buf_puts(&t, ", ");
	pb_ir_type_print(mt, &t);
	pb_buf_puts(&t, "\n  return\n}\n");
	struct pb_ir_ops out = {0};
	int rc = pb_ir_instantiate(f->ctx, t.data, f->yield, n, args, f->loc,
				   &out);
	pb_ir_ops_free(&out);
	pb_buf_free(&t);
	return rc;
}

/* An element-wise operation on fragments: "op" with vector operands and
 * results. */
static MlirValue elementwise(struct frag *f, MlirOperation op)
{
	MlirOperationState st = mlirOperationStateGet(
		mlirIdentifierStr(mlirOperationGetName(op)), f->loc);
	int n = (int)mlirOperationGetNumOperands(op);
	MlirValue ops[8];
	if (n > 8)
		return (MlirValue){NULL};
	for (int i = 0; i < n; i++) {
		MlirValue v = mlirOperationGetOperand(op, i);
		MlirValue m = pb_ir_map_lookup(&f->map, v);
		ops[i] = mlirValueIsNull(m) ? broadcast(f, v) : m;
		if (mlirValueIsNull(ops[i]))
			return ops[i];
	}
	mlirOperationStateAddOperands(&st, n, ops);
	MlirType rt = vec_of(mlirValueGetType(mlirOperationGetResult(op, 0)));
	mlirOperationStateAddResults(&st, 1, &rt);
	for (intptr_t i = 0; i < mlirOperationGetNumAttributes(op); i++) {
		MlirNamedAttribute a = mlirOperationGetAttribute(op, i);
		mlirOperationStateAddAttributes(&st, 1, &a);
	}
	MlirOperation nop = mlirOperationCreate(&st);
	mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(f->yield),
					    f->yield, nop);
	return mlirOperationGetResult(nop, 0);
}

/* Report that epilogue operation "op" could not be carried onto the
 * fragments (the matcher accepted it: an internal error). */
static int fail(struct frag *f, MlirOperation op)
{
	MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
	pb_error_at(f->ctx, mlirOperationGetLocation(op),
		    "internal: cannot apply '%.*s' of the epilogue to "
		    "tensor-core fragments", (int)n.length, n.data);
	return PB_ERR;
}

/* The epilogue of "c" on one fragment "f". */
static int epilogue(struct frag *f)
{
	const struct pb_kernel_contraction *c = f->c;
	for (int i = 0; i < c->npost; i++) {
		MlirOperation op = c->post[i];
		MlirValue v = {NULL};
		/* the accumulator: its value carried along */
		if (pb_kernel_is_acc(c, op) && pb_ir_op_is(op, "affine.store")) {
			MlirValue x = pb_ir_map_lookup(
				&f->map, mlirOperationGetOperand(op, 0));
			f->acc = mlirValueIsNull(x)
					 ? broadcast(f, mlirOperationGetOperand(op, 0))
					 : x;
			if (mlirValueIsNull(f->acc))
				return fail(f, op);
			continue;
		}
		if (pb_kernel_is_acc(c, op)) {
			pb_ir_map_add(&f->map, mlirOperationGetResult(op, 0),
				      f->acc);
			continue;
		}
		if (pb_ir_op_is(op, "affine.store") &&
		    pb_kernel_is_local(c, mlirOperationGetOperand(op, 1))) {
			int k = local_slot(f, mlirOperationGetOperand(op, 1));
			MlirValue x = pb_ir_map_lookup(
				&f->map, mlirOperationGetOperand(op, 0));
			if (k < 0)
				return fail(f, op);
			f->lval[k] = mlirValueIsNull(x)
					     ? broadcast(f, mlirOperationGetOperand(op, 0))
					     : x;
			continue;
		}
		if (pb_ir_op_is(op, "affine.load") &&
		    pb_kernel_is_local(c, mlirOperationGetOperand(op, 0))) {
			int k = local_slot(f, mlirOperationGetOperand(op, 0));
			if (k < 0 || mlirValueIsNull(f->lval[k]))
				return fail(f, op);
			pb_ir_map_add(&f->map, mlirOperationGetResult(op, 0),
				      f->lval[k]);
			continue;
		}
		if (pb_ir_op_is(op, "affine.store")) {
			MlirValue x = pb_ir_map_lookup(
				&f->map, mlirOperationGetOperand(op, 0));
			if (mlirValueIsNull(x))
				x = broadcast(f, mlirOperationGetOperand(op, 0));
			if (mlirValueIsNull(x) || write_text(f, op, x))
				return fail(f, op);
			continue;
		}
		if (pb_ir_op_is(op, "affine.load"))
			v = read_text(f, op);
		else
			v = elementwise(f, op);
		if (mlirValueIsNull(v))
			return fail(f, op);
		pb_ir_map_add(&f->map, mlirOperationGetResult(op, 0), v);
	}
	/* in place, C[..] holds the accumulator's last value */
	if (mlirOperationIsNull(c->alloca) && write_text(f, c->accref, f->acc))
		return fail(f, c->accref);
	return PB_OK;
}

/* The accumulator's initial value on fragment "f" (c->pre, or C's
 * contents, inserted before the reduction loop) into f->acc. */
static int start(struct frag *f)
{
	const struct pb_kernel_contraction *c = f->c;
	if (mlirOperationIsNull(c->init)) {
		f->acc = read_text(f, c->accref);
		return mlirValueIsNull(f->acc) ? fail(f, c->accref) : PB_OK;
	}
	for (int i = 0; i < c->npre; i++) {
		MlirOperation op = c->pre[i];
		MlirValue v = pb_ir_op_is(op, "affine.load") ? read_text(f, op)
							      : elementwise(f, op);
		if (mlirValueIsNull(v))
			return fail(f, op);
		pb_ir_map_add(&f->map, mlirOperationGetResult(op, 0), v);
	}
	f->acc = pb_ir_map_lookup(&f->map, mlirOperationGetOperand(c->init, 0));
	return mlirValueIsNull(f->acc) ? fail(f, c->init) : PB_OK;
}

/* Fragment (i, j) of the warp tile, its code inserted before "at":
 * the band dimensions' values, C's rows and columns at the fragment's. */
static void frag_init(struct frag *f, struct pb_ctx *ctx,
		      const struct pb_kernel_contraction *c,
		      const struct pb_kernel_mma_tiles *s, MlirOperation at,
		      MlirBlock bb, MlirBlock wb, int i, int j)
{
	memset(f, 0, sizeof(*f));
	f->ctx = ctx;
	f->c = c;
	f->yield = at;
	f->loc = mlirOperationGetLocation(c->b.root);
	f->masked = masked(c, s);
	f->masked_cols = masked_cols(c, s);
	/* C's rows and columns: the block's origin + the warp's + the
	   fragment's offset; several image rows a block: the image row
	   the block's + the warp's */
	int hd = rows_dim(c, s), w0 = hd >= 0;
	int dim[3] = {c->m, c->n, hd}, off[3] = {16 * i, 8 * j, 0};
	for (int d = 0; d < c->b.n; d++)
		f->sub[d] = mlirBlockGetArgument(bb, d);
	for (int r = 0; r < 2 + w0; r++) {
		char text[200];
		MlirValue ab[2] = {mlirBlockGetArgument(bb, dim[r]),
				   mlirBlockGetArgument(wb, r < 2 ? r + w0 : 0)};
		snprintf(text, sizeof(text),
			 "func.func @t(%%a: index, %%b: index) {\n"
			 "  %%r = affine.apply affine_map<(a, b) -> "
			 "(a + b + %d)>(%%a, %%b)\n  return\n}\n",
			 off[r]);
		f->sub[dim[r]] = emit(f, text, 2, ab);
	}
}

/* The first operation in "root" (or "root") that is an affine.parallel
 * mapped at "level", or an affine.for when "level" is PB_MAP_NONE. */
static MlirOperation find(MlirOperation root, enum pb_map_level level)
{
	struct pb_ir_ops l = {0};
	MlirOperation r = {NULL};
	pb_ir_collect(root, level == PB_MAP_NONE ? "affine.for"
						 : "affine.parallel", &l);
	for (int i = 0; i < l.n && mlirOperationIsNull(r); i++)
		if (level == PB_MAP_NONE || pb_contract_map_of(l.v[i]) == level)
			r = l.v[i];
	pb_ir_ops_free(&l);
	return r;
}

int pb_mma_rewrite(struct pb_ctx *ctx, const struct pb_kernel_contraction *c,
		   const struct pb_kernel_mma_tiles *s)
{
	struct pb_buf t = {0};
	struct pb_ir_ops out = {0};
	MlirLocation loc = mlirOperationGetLocation(c->b.root);
	MlirValue args[2] = {c->a.mem, c->b_.mem};
	skeleton_text(&t, c, s);
	int rc = pb_ir_instantiate(ctx, t.data, c->b.root, 2, args, loc, &out);
	pb_buf_free(&t);
	/* the block loop, after A's strided view (a_view_text) */
	if (rc != PB_OK || out.n != 1 + (pb_kernel_row_stride(c) > 1)) {
		pb_ir_ops_free(&out);
		return PB_ERR;
	}
	MlirOperation block = out.v[out.n - 1];
	MlirOperation warp = find(block, PB_MAP_WARP);
	MlirOperation kloop = find(block, PB_MAP_NONE);
	pb_ir_ops_free(&out);
	MlirBlock wb = mlirRegionGetFirstBlock(mlirOperationGetRegion(warp, 0));
	MlirBlock bb = mlirRegionGetFirstBlock(mlirOperationGetRegion(block, 0));
	int fm = (int)(s->wm / PB_KERNEL_FRAG_M), fn = (int)(s->wn / PB_KERNEL_FRAG_N);
	for (int i = 0; i < fm && rc == PB_OK; i++)
		for (int j = 0; j < fn && rc == PB_OK; j++) {
			struct frag f;
			/* the initial value, when not 0, before the loop */
			if (c->npre || mlirOperationIsNull(c->init)) {
				frag_init(&f, ctx, c, s, kloop, bb, wb, i, j);
				rc = start(&f);
				if (rc == PB_OK)
					mlirOperationSetOperand(kloop, i * fn + j,
								f.acc);
				pb_ir_map_free(&f.map);
			}
			frag_init(&f, ctx, c, s, mlirBlockGetTerminator(wb), bb,
				  wb, i, j);
			f.acc = mlirOperationGetResult(kloop, i * fn + j);
			if (rc == PB_OK)
				rc = epilogue(&f);
			pb_ir_map_free(&f.map);
		}
	if (rc == PB_OK)
		mlirOperationDestroy(c->b.root); /* with its pb.mma mark */
	else
		mlirOperationDestroy(block);
	return rc;
}
