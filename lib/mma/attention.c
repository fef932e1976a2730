/* pb-fuse's attention nest on tensor cores (docs/pb-mma.md, "Attention"),
 * as FlashAttention-2 maps it: a block owns bm query rows, each of its
 * warps 16 of them, and walks the keys bn at a time:
 *
 *   affine.parallel (batch.., %i0) step (1.., BM)          {pb.map = "block"}
 *     affine.parallel (%w) = (0) to (BM) step (16)          {pb.map = "warp"}
 *       Q fragments vector<16x16>, read once (D / 16 of them)
 *       %r = affine.for %j = 0 to NK step BN
 *                 iter_args(m: vector<16xf32>, l: vector<16xf32>,
 *                           O: E / 8 x vector<16x8xf32>)
 *         S = Q.K^T: BN / 8 fragments vector<16x8xf32>, each D / 16
 *             vector.contract of Q and a K fragment (16x8, k = d)
 *         scaled, by c log2(e); mn = max(m, the rows' maxima:
 *             vector.multi_reduction)
 *         k = mn == -inf ? 0 : mn; a = exp2(m - k); P = exp2(S - k)
 *         l = l a + the rows' sums of P;  O = O a
 *         O += P.V: P rounded to the tensor cores' type, two 16x8
 *             fragments side by side (vector.insert_strided_slice) the
 *             16x16 A operand, V fragments 16x8 (k = the key)
 *       O / l written once
 *
 * Row quantities (m, l, a) are vector<16xf32>, one element per row;
 * vector.shape_cast to 16x1 and vector.broadcast give them a fragment's
 * shape. P never leaves registers: on the GPU the accumulator fragments
 * of S are, lane for lane, the A fragments of P.V (docs/pb-codegen.md).
 * Everything is warp-level and runs on the CPU as it stands. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "ir/contract.h"
#include "mma/internal.h"

/* An index name per subscript role of an access: the batch dimensions'
 * block counters "%b<d>", the query rows' "row", and the key, head and
 * value positions given. */
struct names {
	const char *row, *j, *d, *e;
	const char *pad; /* the padding value's name, "pad" if null */
};

/* The memref position of role "d" in "x", -1 if none. */
static int pos_of(const struct pb_kernel_access *x, int d)
{
	for (int r = 0; r < x->rank; r++)
		if (x->sub[r] == d)
			return r;
	return -1;
}

/* The text of "%<res> = vector.transfer_read" of access "x" (buffer
 * "%<mem>" of type "mt", element "et", constants "%<cpre><r>") as a
 * rows x cols vector whose rows run along role "rr" and columns along
 * "cr", the positions named by "n"; masked rows/columns read zeros. */
static void read_text(struct pb_buf *t, const char *res, const char *mem,
		      const char *mt, const char *et,
		      const struct pb_kernel_attention *a,
		      const struct pb_kernel_access *x, const char *cpre,
		      int rr, int cr, const struct names *n, int rows,
		      int cols, int mrows, int mcols, int write)
{
	if (write)
		pb_buf_printf(t, "        vector.transfer_write %%%s, %%%s[", res,
			      mem);
	else
		pb_buf_printf(t, "        %%%s = vector.transfer_read %%%s[", res,
			      mem);
	for (int r = 0; r < x->rank; r++) {
		int s = x->sub[r];
		pb_buf_puts(t, r ? ", " : "");
		if (s == PB_KERNEL_SUB_CST)
			pb_buf_printf(t, "%%%s%d", cpre, r);
		else if (s == PB_KERNEL_ATT_J)
			pb_buf_printf(t, "%%%s", n->j);
		else if (s == PB_KERNEL_ATT_D)
			pb_buf_printf(t, "%%%s", n->d);
		else if (s == PB_KERNEL_ATT_E)
			pb_buf_printf(t, "%%%s", n->e);
		else if (s == a->m)
			pb_buf_printf(t, "%%%s", n->row);
		else
			pb_buf_printf(t, "%%b%d", s);
	}
	pb_buf_printf(t, "]%s%s {in_bounds = [%s, %s], permutation_map = "
		      "affine_map<(", write ? "" : ", %",
		      write ? "" : n->pad ? n->pad : "pad",
		      mrows && pos_of(x, rr) >= 0 ? "false" : "true",
		      mcols && pos_of(x, cr) >= 0 ? "false" : "true");
	for (int r = 0; r < x->rank; r++)
		pb_buf_printf(t, "%sd%d", r ? ", " : "", r);
	/* a dimension the access does not have: broadcast */
	int pr = pos_of(x, rr), pc = pos_of(x, cr);
	pb_buf_puts(t, ") -> (");
	if (pr < 0)
		pb_buf_puts(t, "0, ");
	else
		pb_buf_printf(t, "d%d, ", pr);
	if (pc < 0)
		pb_buf_puts(t, "0)>} : ");
	else
		pb_buf_printf(t, "d%d)>} : ", pc);
	if (write)
		pb_buf_printf(t, "vector<%dx%dx%s>, %s\n", rows, cols, et, mt);
	else
		pb_buf_printf(t, "%s, vector<%dx%dx%s>\n", mt, rows, cols, et);
}

/* "%<v>" rounded from "%<v>x" (f32) to "tc", when "cut". */
static void round_text(struct pb_buf *t, int cut, const char *v, int rows,
		       int cols, const char *tc)
{
	if (cut)
		pb_buf_printf(t, "        %%%s = arith.truncf %%%sx : "
			      "vector<%dx%dxf32> to vector<%dx%dx%s>\n",
			      v, v, rows, cols, rows, cols, tc);
}

/* The element type of buffer "v" as text into "out". */
static void elt_text(MlirValue v, struct pb_buf *out)
{
	pb_ir_type_print(mlirShapedTypeGetElementType(mlirValueGetType(v)), out);
}

static int64_t round_up(int64_t x, int64_t m)
{
	return (x + m - 1) / m * m;
}

/* The f32 "x" as the hexadecimal text MLIR reads exactly. */
static void f32_text(char *s, size_t n, double x)
{
	float f = (float)x;
	uint32_t bits;
	memcpy(&bits, &f, sizeof(bits));
	snprintf(s, n, "0x%08X", bits);
}

/* The fragment of mask "u" of "a" (an additive mask or a Where's
 * condition; buffer "%M<u>", constants "%cm<u>_<r>", padding "%mpad<u>")
 * for row fragment "i" and key fragment "n", read into
 * "%<pre><u>_<i'>_<n><suf>" (i' = i, or 0 for a mask without the query
 * rows: a padding mask broadcast over them, read once for all row
 * fragments) when "i" is the first to need it. Returns i'. */
static int mask_read_text(struct pb_buf *t,
			  const struct pb_kernel_attention *a, int u, int i,
			  int n, int mask_r, int keys, const char *pre,
			  const char *suf)
{
	const struct pb_kernel_access *x = &a->mk[u].mask;
	int mi = pos_of(x, a->m) >= 0 ? i : 0;
	if (mi == i) {
		struct pb_buf mt = {0}, e = {0};
		char res[32], row[32], jn[32], mem[16], cpre[16], pad[16];
		struct names nm = {row, jn, NULL, NULL, pad};
		pb_ir_type_print(mlirValueGetType(x->mem), &mt);
		elt_text(x->mem, &e);
		snprintf(row, sizeof(row), "row%d", i);
		snprintf(jn, sizeof(jn), "jn%d", n);
		snprintf(mem, sizeof(mem), "M%d", u);
		snprintf(cpre, sizeof(cpre), "cm%d_", u);
		snprintf(pad, sizeof(pad), "mpad%d", u);
		snprintf(res, sizeof(res), "%s%d_%d_%d%s", pre, u, mi, n, suf);
		read_text(t, res, mem, mt.data, e.data, a, x, cpre, a->m,
			  PB_KERNEL_ATT_J, &nm, 16, 8, mask_r, keys, 0);
		pb_buf_free(&mt);
		pb_buf_free(&e);
	}
	return mi;
}

/* Additive mask "u" of "a" on the scores "%<in><i>_<n>" of row fragment
 * "i" and key fragment "n" (in base 2): "%<out><i>_<n>" = those + the
 * mask's fragment times log2(e), widened first when f16 or bf16. */
static void mask_text(struct pb_buf *t, const struct pb_kernel_attention *a,
		      int u, int i, int n, int mask_r, int keys,
		      const char *in, const char *out)
{
	MlirType et = mlirShapedTypeGetElementType(
		mlirValueGetType(a->mk[u].mask.mem));
	int f32 = mlirTypeIsAF32(et);
	int mi = mask_read_text(t, a, u, i, n, mask_r, keys, "mk",
				f32 ? "" : "h");
	if (mi == i) {
		if (!f32) {
			pb_buf_printf(t, "        %%mk%d_%d_%d = arith.extf "
				      "%%mk%d_%d_%dh : vector<16x8x", u, mi, n,
				      u, mi, n);
			pb_ir_type_print(et, t);
			pb_buf_puts(t, "> to vector<16x8xf32>\n");
		}
		pb_buf_printf(t, "        %%ml%d_%d_%d = arith.mulf "
			      "%%mk%d_%d_%d, %%log2e : vector<16x8xf32>\n",
			      u, mi, n, u, mi, n);
	}
	pb_buf_printf(t, "        %%%s%d_%d = arith.addf %%%s%d_%d, "
		      "%%ml%d_%d_%d : vector<16x8xf32>\n", out, i, n, in, i, n,
		      u, mi, n);
}

/* The Where "u" of "a" on the scores "%<in><i>_<n>" of row fragment "i"
 * and key fragment "n" (in base 2): "%<out><i>_<n>" = those where the
 * condition's fragment says so, else the other value (times log2(e):
 * "%fill<u>"). */
static void where_text(struct pb_buf *t, const struct pb_kernel_attention *a,
		       int u, int i, int n, int mask_r, int keys,
		       const char *in, const char *out)
{
	int mi = mask_read_text(t, a, u, i, n, mask_r, keys, "wc", "");
	pb_buf_printf(t, "        %%%s%d_%d = arith.select %%wc%d_%d_%d, ",
		      out, i, n, u, mi, n);
	if (a->mk[u].where_true)
		pb_buf_printf(t, "%%%s%d_%d, %%fill%d", in, i, n, u);
	else
		pb_buf_printf(t, "%%fill%d, %%%s%d_%d", u, in, i, n);
	pb_buf_puts(t, " : vector<16x8xi1>, vector<16x8xf32>\n");
}

/* Is mask "u" of "a" the causal one, computed (causal_step_text) rather
 * than read? */
static int computed(const struct pb_kernel_attention *a, int u)
{
	return a->causal && u == a->causal_u;
}

/* The masks of "a" in order on the scores "%xq<i>_<n>" of row fragment
 * "i" and key fragment "n" (in base 2), into "%<last><i>_<n>";
 * "%xm<u>_<i>_<n>" between them. A causal one (computed by
 * causal_step_text) is left out. */
static void masks_text(struct pb_buf *t, const struct pb_kernel_attention *a,
		       int i, int n, int mask_r, int keys, const char *last)
{
	char in[16] = "xq", out[16];
	int end = a->nmask;
	if (computed(a, end - 1))
		end--;
	for (int u = 0; u < end; u++) {
		if (computed(a, u))
			continue;
		if (u + 1 < end)
			snprintf(out, sizeof(out), "xm%d_", u);
		else
			snprintf(out, sizeof(out), "%s", last);
		if (a->mk[u].kind == PB_KERNEL_ATT_WHERE)
			where_text(t, a, u, i, n, mask_r, keys, in, out);
		else
			mask_text(t, a, u, i, n, mask_r, keys, in, out);
		memcpy(in, out, sizeof(in));
	}
}

/* The Where's other value in base 2 as an f32 constant's text: times
 * log2(e), a finite one kept finite (finfo.min times log2(e) would be
 * -inf, and a row whose keys are all masked would then divide 0 by 0
 * where the scores' softmax is uniform). */
static void fill_text(char *s, size_t n, double fill)
{
	double f = fill * M_LOG2E;
	if (isfinite(fill) && f < -FLT_MAX)
		f = -FLT_MAX;
	if (isfinite(fill) && f > FLT_MAX)
		f = FLT_MAX;
	f32_text(s, n, f);
}

/* The other value of Where "u" of "a" read from its buffer "%F<u>" (one
 * element), in base 2 as fill_text computes it, broadcast: "%fill<u>". */
static void fill_load_text(struct pb_buf *t,
			   const struct pb_kernel_attention *a, int u)
{
	const struct pb_kernel_access *f = &a->mk[u].fill;
	char cpre[16];
	int f32 = mlirTypeIsAF32(
		mlirShapedTypeGetElementType(mlirValueGetType(f->mem)));
	snprintf(cpre, sizeof(cpre), "cf%d_", u);
	pb_mma_cst_text(t, f, cpre);
	pb_buf_printf(t, "      %%f%s%d = memref.load %%F%d[", f32 ? "s" : "h",
		      u, u);
	for (int r = 0; r < f->rank; r++)
		pb_buf_printf(t, "%s%%%s%d", r ? ", " : "", cpre, r);
	pb_buf_puts(t, "] : ");
	pb_ir_type_print(mlirValueGetType(f->mem), t);
	pb_buf_puts(t, "\n");
	if (!f32) {
		/* f16 or bf16 data's value, widened as the nest widens it */
		pb_buf_printf(t, "      %%fs%d = arith.extf %%fh%d : ", u, u);
		elt_text(f->mem, t);
		pb_buf_puts(t, " to f32\n");
	}
	pb_buf_printf(t,
		      "      %%fl2_%d = arith.constant 1.44269502 : f32\n"
		      "      %%fmax%d = arith.constant 3.40282347E+38 : f32\n"
		      "      %%fmin%d = arith.constant -3.40282347E+38 : f32\n"
		      "      %%finf%d = arith.constant 0x7F800000 : f32\n"
		      "      %%f2_%d = arith.mulf %%fs%d, %%fl2_%d : f32\n"
		      "      %%f3_%d = arith.maximumf %%f2_%d, %%fmin%d : f32\n"
		      "      %%f4_%d = arith.minimumf %%f3_%d, %%fmax%d : f32\n"
		      "      %%fa%d = math.absf %%fs%d : f32\n"
		      "      %%fi%d = arith.cmpf oeq, %%fa%d, %%finf%d : f32\n"
		      "      %%f5_%d = arith.select %%fi%d, %%f2_%d, %%f4_%d : "
		      "f32\n"
		      "      %%fill%d = vector.broadcast %%f5_%d : f32 to "
		      "vector<16x8xf32>\n",
		      u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u,
		      u, u, u, u, u);
}

/* The scores "%xk<i>_<n>" of row fragment "i" and key fragment "n" past
 * NK (the ragged last step's, "%km<n>" false) -inf, into "%x<i>_<n>". */
static void keys_text(struct pb_buf *t, int i, int n)
{
	pb_buf_printf(t, "        %%x%d_%d = arith.select %%km%d, %%xk%d_%d, "
		      "%%ninfc : vector<16x8xi1>, vector<16x8xf32>\n",
		      i, n, n, i, n);
}

/* The name of the scores of row fragment "i" and key fragment "n" of a
 * causal step before its mask: the sums "%s<i>_<n>_<nd-1>" when the mask
 * goes before the scale ("pre": a positive scale keeps -inf, and the
 * product stays next to the softmax's subtraction, one FFMA), else the
 * scaled "%xq<i>_<n>", or "%xo<i>_<n>" after the other masks of "a". */
static void causal_in(struct pb_buf *t, const struct pb_kernel_attention *a,
		      int pre, int i, int n, int nd)
{
	if (pre)
		pb_buf_printf(t, "%%s%d_%d_%d", i, n, nd - 1);
	else
		pb_buf_printf(t, "%%%s%d_%d", a->nmask > 1 ? "xo" : "xq", i, n);
}

/* The causal mask of "a" on the scores of row fragment "i" and key
 * fragment "n", into "%xc<i>_<n>": -inf where key jn + col > row + r + c,
 * that is where col - r (the constant "%dg") > row + c - jn, computed
 * rather than read. */
static void causal_text(struct pb_buf *t, const struct pb_kernel_attention *a,
			int pre, int i, int n, int nd)
{
	pb_buf_printf(t, "          %%th%d_%d = affine.apply affine_map<(r, j) "
		      "-> (r - j + %lld)>(%%row%d, %%jn%d)\n"
		      "          %%ti%d_%d = arith.index_cast %%th%d_%d : index "
		      "to i32\n"
		      "          %%tb%d_%d = vector.broadcast %%ti%d_%d : i32 to "
		      "vector<16x8xi32>\n"
		      "          %%cm%d_%d = arith.cmpi sle, %%dg, %%tb%d_%d : "
		      "vector<16x8xi32>\n"
		      "          %%xc%d_%d = arith.select %%cm%d_%d, ",
		      i, n, (long long)a->causal_off, i, n, i, n, i, n, i, n,
		      i, n, i, n, i, n, i, n, i, n);
	causal_in(t, a, pre, i, n, nd);
	pb_buf_puts(t, ", %ninfc : vector<16x8xi1>, vector<16x8xf32>\n");
}

/* The causal mask of "a" on the step's scores (fm row fragments, nf key
 * fragments), into "%x<i>_<n>": only in the steps that reach past the
 * diagonal for the warp's first row (key j + BN - 1 > row + c), a branch
 * the warp takes as one; the scale after it when "pre"; then the keys
 * past NK (the ragged last step, "keys"). */
static void causal_step_text(struct pb_buf *t,
			     const struct pb_kernel_attention *a,
			     const struct pb_kernel_attention_tiles *s, int fm,
			     int nf, int nd, int pre, int keys)
{
	const char *res = pre ? "xm" : keys ? "xk" : "x";
	pb_buf_printf(t, "        %%dj = affine.apply affine_map<(j, r) -> (j - r "
		      "+ %lld)>(%%j, %%row0)\n"
		      "        %%diag = arith.cmpi sgt, %%dj, %%c0i : index\n"
		      "        ",
		      (long long)(s->bn - 1 - a->causal_off));
	for (int i = 0; i < fm; i++)
		for (int n = 0; n < nf; n++)
			pb_buf_printf(t, "%s%%%s%d_%d", i || n ? ", " : "", res, i,
				      n);
	pb_buf_puts(t, " = scf.if %diag -> (");
	for (int k = 0; k < fm * nf; k++)
		pb_buf_printf(t, "%svector<16x8xf32>", k ? ", " : "");
	pb_buf_puts(t, ") {\n");
	for (int i = 0; i < fm; i++)
		for (int n = 0; n < nf; n++)
			causal_text(t, a, pre, i, n, nd);
	for (int e = 0; e < 2; e++) {
		pb_buf_puts(t, e ? "        } else {\n          scf.yield "
				 : "          scf.yield ");
		for (int i = 0; i < fm; i++)
			for (int n = 0; n < nf; n++) {
				pb_buf_puts(t, i || n ? ", " : "");
				if (e)
					causal_in(t, a, pre, i, n, nd);
				else
					pb_buf_printf(t, "%%xc%d_%d", i, n);
			}
		pb_buf_puts(t, " : ");
		for (int k = 0; k < fm * nf; k++)
			pb_buf_printf(t, "%svector<16x8xf32>", k ? ", " : "");
		pb_buf_puts(t, "\n");
	}
	pb_buf_puts(t, "        }\n");
	for (int n = 0; n < nf; n++)
		for (int i = 0; i < fm; i++) {
			if (pre)
				pb_buf_printf(t, "        %%%s%d_%d = arith.mulf "
					      "%%xm%d_%d, %%scale : "
					      "vector<16x8xf32>\n",
					      keys ? "xk" : "x", i, n, i, n);
			if (keys)
				keys_text(t, i, n);
		}
}

/* The scores of key step "%j" of the warp's "fm" row fragments: "%x<i>_<n>"
 * for row fragment i and key fragment n = 0 .. BN/8 - 1, each K fragment
 * read once for all row fragments. */
static void scores_text(struct pb_buf *t, const struct pb_kernel_attention *a,
			const struct pb_kernel_attention_tiles *s,
			const char *mk, const char *et, const char *tc,
			int cut, int fm, int mask_r)
{
	int nd = (int)((a->d + 15) / 16);
	/* a causal mask (the only one) before a positive scale (causal_in) */
	int pre = a->scale > 0 && a->nmask == 1;
	for (int n = 0; n < s->bn / 8; n++) {
		char jn[16];
		snprintf(jn, sizeof(jn), "jn%d", n);
		pb_buf_printf(t, "        %%jn%d = affine.apply affine_map<(j) -> "
			      "(j + %d)>(%%j)\n", n, 8 * n);
		for (int kk = 0; kk < nd; kk++) {
			char res[32], dc[16];
			struct names nm = {"row0", jn, dc, NULL, NULL};
			snprintf(dc, sizeof(dc), "dc%d", kk);
			snprintf(res, sizeof(res), "k%d_%d%s", n, kk,
				 cut ? "x" : "");
			read_text(t, res, "K", mk, et, a, &a->k, "ck",
				  PB_KERNEL_ATT_D, PB_KERNEL_ATT_J, &nm, 16, 8,
				  16 * kk + 16 > a->d, a->nk % s->bn != 0, 0);
			snprintf(res, sizeof(res), "k%d_%d", n, kk);
			round_text(t, cut, res, 16, 8, tc);
			for (int i = 0; i < fm; i++) {
				pb_buf_printf(t, "        %%s%d_%d_%d = "
					      "vector.contract {indexing_maps "
					      "= [#pba, #pbb, #pbc], "
					      "iterator_types = [\"parallel\", "
					      "\"parallel\", \"reduction\"], "
					      "kind = #vector.kind<add>} "
					      "%%q%d_%d, %%k%d_%d, ",
					      i, n, kk, i, kk, n, kk);
				if (kk)
					pb_buf_printf(t, "%%s%d_%d_%d", i, n,
						      kk - 1);
				else
					pb_buf_puts(t, "%zc");
				pb_buf_printf(t, " : vector<16x16x%s>, "
					      "vector<16x8x%s> into "
					      "vector<16x8xf32>\n", tc, tc);
			}
		}
		/* keys past NK (the last step's): -inf */
		int keys = a->nk % s->bn != 0;
		if (keys)
			pb_buf_printf(t, "        %%kv%d = affine.apply "
				      "affine_map<(j) -> (%lld - j)>(%%jn%d)\n"
				      "        %%km%d = vector.create_mask %%c16, "
				      "%%kv%d : vector<16x8xi1>\n",
				      n, (long long)a->nk, n, n, n);
		for (int i = 0; i < fm; i++) {
			if (a->causal && pre)
				continue;
			pb_buf_printf(t, "        %%%s%d_%d = arith.mulf "
				      "%%s%d_%d_%d, %%scale : "
				      "vector<16x8xf32>\n",
				      a->nmask ? "xq" : keys ? "xk" : "x", i, n,
				      i, n, nd - 1);
			if (a->causal) {
				masks_text(t, a, i, n, mask_r, keys, "xo");
				continue;
			}
			masks_text(t, a, i, n, mask_r, keys, keys ? "xk" : "x");
			if (keys)
				keys_text(t, i, n);
		}
	}
	if (a->causal)
		causal_step_text(t, a, s, fm, (int)(s->bn / 8), nd, pre,
				 a->nk % s->bn != 0);
}

/* The rows' reduction "kind" (arith "op" element-wise) of fragments
 * "%<v>0 .." (nf of them) starting from "%<init>", into "%<res>": the
 * fragments combined element by element first, then one reduction of
 * the rows (on the GPU: a lane's own columns, then two shuffles). */
static void rows_text(struct pb_buf *t, const char *kind, const char *op,
		      const char *v, int nf, const char *init, const char *res)
{
	for (int n = 1; n < nf; n++) {
		pb_buf_printf(t, "        %%%sc%d = arith.%s ", res, n, op);
		if (n == 1)
			pb_buf_printf(t, "%%%s0", v);
		else
			pb_buf_printf(t, "%%%sc%d", res, n - 1);
		pb_buf_printf(t, ", %%%s%d : vector<16x8xf32>\n", v, n);
	}
	pb_buf_printf(t, "        %%%s = vector.multi_reduction <%s>, ", res,
		      kind);
	if (nf > 1)
		pb_buf_printf(t, "%%%sc%d", res, nf - 1);
	else
		pb_buf_printf(t, "%%%s0", v);
	pb_buf_printf(t, ", %%%s [1] : vector<16x8xf32> to vector<16xf32>\n",
		      init);
}

/* Row vector "%<v>" as a fragment "%<res>". */
static void spread_text(struct pb_buf *t, const char *v, const char *res)
{
	pb_buf_printf(t, "        %%%s1 = vector.shape_cast %%%s : "
		      "vector<16xf32> to vector<16x1xf32>\n"
		      "        %%%s = vector.broadcast %%%s1 : "
		      "vector<16x1xf32> to vector<16x8xf32>\n",
		      res, v, res, res);
}

/* The online softmax of row fragment "i" on its scores "%x<i>_<n>":
 * the new maxima "%mn<i>", the rescaling "%a<i>", the probabilities
 * "%p<i>_<n>", the sums "%ln<i>", the output rescaled "%os<i>_<e>_0". */
static void softmax_text(struct pb_buf *t, int i, int nf, int ne)
{
	char v[16], res[16], init[16];
	snprintf(v, sizeof(v), "x%d_", i);
	snprintf(res, sizeof(res), "mn%d", i);
	snprintf(init, sizeof(init), "m%d", i);
	rows_text(t, "maximumf", "maximumf", v, nf, init, res);
	pb_buf_printf(t, "        %%isinf%d = arith.cmpf oeq, %%mn%d, %%ninf : "
		      "vector<16xf32>\n"
		      "        %%safe%d = arith.select %%isinf%d, %%zr, %%mn%d : "
		      "vector<16xi1>, vector<16xf32>\n"
		      "        %%dm%d = arith.subf %%m%d, %%safe%d : "
		      "vector<16xf32>\n"
		      "        %%a%d = math.exp2 %%dm%d : vector<16xf32>\n",
		      i, i, i, i, i, i, i, i, i, i);
	snprintf(v, sizeof(v), "safe%d", i);
	snprintf(res, sizeof(res), "sb%d", i);
	spread_text(t, v, res);
	for (int n = 0; n < nf; n++)
		pb_buf_printf(t, "        %%xs%d_%d = arith.subf %%x%d_%d, "
			      "%%sb%d : vector<16x8xf32>\n"
			      "        %%p%d_%d = math.exp2 %%xs%d_%d : "
			      "vector<16x8xf32>\n",
			      i, n, i, n, i, i, n, i, n);
	snprintf(v, sizeof(v), "p%d_", i);
	snprintf(res, sizeof(res), "ps%d", i);
	rows_text(t, "add", "addf", v, nf, "zr", res);
	pb_buf_printf(t, "        %%la%d = arith.mulf %%l%d, %%a%d : "
		      "vector<16xf32>\n"
		      "        %%ln%d = arith.addf %%la%d, %%ps%d : "
		      "vector<16xf32>\n", i, i, i, i, i, i);
	snprintf(v, sizeof(v), "a%d", i);
	snprintf(res, sizeof(res), "ab%d", i);
	spread_text(t, v, res);
	for (int e = 0; e < ne; e++)
		pb_buf_printf(t, "        %%os%d_%d_0 = arith.mulf %%o%d_%d, "
			      "%%ab%d : vector<16x8xf32>\n", i, e, i, e, i);
}

/* O += P.V for the step's keys 16 kk .. 16 kk + 15: each row fragment's
 * P rounded, two of its fragments an A operand; each V fragment read
 * once for all row fragments. */
static void pv_text(struct pb_buf *t, const struct pb_kernel_attention *a,
		    const char *mv, const char *et, const char *tc, int cut,
		    int fm, int kk, int mkeys)
{
	int ne = (int)((a->e + 7) / 8);
	char jk[16];
	for (int i = 0; i < fm; i++) {
		for (int h = 0; h < 2; h++)
			pb_buf_printf(t, "        %%ph%d_%d = arith.truncf "
				      "%%p%d_%d : vector<16x8xf32> to "
				      "vector<16x8x%s>\n",
				      i, 2 * kk + h, i, 2 * kk + h, tc);
		pb_buf_printf(t, "        %%pa%d_%dh = vector.insert_strided_slice "
			      "%%ph%d_%d, %%za {offsets = [0, 0], strides = "
			      "[1, 1]} : vector<16x8x%s> into vector<16x16x%s>\n"
			      "        %%pa%d_%d = vector.insert_strided_slice "
			      "%%ph%d_%d, %%pa%d_%dh {offsets = [0, 8], strides "
			      "= [1, 1]} : vector<16x8x%s> into "
			      "vector<16x16x%s>\n",
			      i, kk, i, 2 * kk, tc, tc, i, kk, i, 2 * kk + 1, i,
			      kk, tc, tc);
	}
	snprintf(jk, sizeof(jk), "jk%d", kk);
	pb_buf_printf(t, "        %%jk%d = affine.apply affine_map<(j) -> "
		      "(j + %d)>(%%j)\n", kk, 16 * kk);
	for (int e = 0; e < ne; e++) {
		char res[32], ec[16];
		struct names nm = {"row0", jk, NULL, ec, NULL};
		snprintf(ec, sizeof(ec), "ec%d", e);
		snprintf(res, sizeof(res), "v%d_%d%s", kk, e, cut ? "x" : "");
		read_text(t, res, "V", mv, et, a, &a->v, "cv", PB_KERNEL_ATT_J,
			  PB_KERNEL_ATT_E, &nm, 16, 8, mkeys, 8 * e + 8 > a->e,
			  0);
		snprintf(res, sizeof(res), "v%d_%d", kk, e);
		round_text(t, cut, res, 16, 8, tc);
		for (int i = 0; i < fm; i++)
			pb_buf_printf(t, "        %%os%d_%d_%d = vector.contract "
				      "{indexing_maps = [#pba, #pbb, #pbc], "
				      "iterator_types = [\"parallel\", "
				      "\"parallel\", \"reduction\"], kind = "
				      "#vector.kind<add>} %%pa%d_%d, %%v%d_%d, "
				      "%%os%d_%d_%d : vector<16x16x%s>, "
				      "vector<16x8x%s> into vector<16x8xf32>\n",
				      i, e, kk + 1, i, kk, kk, e, i, e, kk, tc,
				      tc);
	}
}

/* The nest of "a" with tiles "s", as text. */
static void nest_text(struct pb_buf *t, const struct pb_kernel_attention *a,
		      const struct pb_kernel_attention_tiles *s)
{
	struct pb_buf mq = {0}, mk = {0}, mv = {0}, mo = {0}, et = {0},
		      tc = {0}, ot = {0};
	pb_ir_type_print(mlirValueGetType(a->q.mem), &mq);
	pb_ir_type_print(mlirValueGetType(a->k.mem), &mk);
	pb_ir_type_print(mlirValueGetType(a->v.mem), &mv);
	pb_ir_type_print(mlirValueGetType(a->o.mem), &mo);
	pb_ir_type_print(a->elt, &et);
	pb_ir_type_print(a->tc, &tc);
	elt_text(a->o.mem, &ot);
	int cut = !mlirTypeEqual(a->elt, a->tc);
	int nd = (int)((a->d + 15) / 16), ne = (int)((a->e + 7) / 8);
	int nf = (int)(s->bn / 8), fm = (int)(s->wm / 16);
	int64_t rows = a->b.extent[a->m];
	int mask_r = rows % s->bm != 0;
	char sc[32];
	/* the scores in base 2: exp(s c - m) = exp2(s c log2(e) - m') */
	f32_text(sc, sizeof(sc),
		 (a->divide ? 1 / a->scale : a->scale) * M_LOG2E);

	pb_buf_printf(t, "#pba = affine_map<(m, n, k) -> (m, k)>\n"
		      "#pbb = affine_map<(m, n, k) -> (k, n)>\n"
		      "#pbc = affine_map<(m, n, k) -> (m, n)>\n"
		      "func.func @t(%%Q: %s, %%K: %s, %%V: %s, %%O: %s",
		      mq.data, mk.data, mv.data, mo.data);
	for (int u = 0; u < a->nmask; u++) {
		pb_buf_printf(t, ", %%M%d: ", u);
		pb_ir_type_print(mlirValueGetType(a->mk[u].mask.mem), t);
		if (!mlirOperationIsNull(a->mk[u].fill.op)) {
			pb_buf_printf(t, ", %%F%d: ", u);
			pb_ir_type_print(mlirValueGetType(a->mk[u].fill.mem), t);
		}
	}
	pb_buf_puts(t, ") {\n");
	int64_t tile[PB_KERNEL_MAXD];
	for (int d = 0; d < a->b.n; d++)
		tile[d] = d == a->m ? s->bm : 1;
	pb_mma_block_loop_text(t, "b", &a->b, tile, -1);
	pb_buf_printf(t, "    affine.parallel (%%w) = (0) to (%lld) step "
		      "(%lld) {\n", (long long)s->bm, (long long)s->wm);
	pb_buf_printf(t, "      %%pad = arith.constant 0.000000e+00 : %s\n"
		      "      %%zc = arith.constant dense<0.000000e+00> : "
		      "vector<16x8xf32>\n"
		      "      %%zr = arith.constant dense<0.000000e+00> : "
		      "vector<16xf32>\n"
		      "      %%ninf = arith.constant dense<0xFF800000> : "
		      "vector<16xf32>\n"
		      "      %%za = arith.constant dense<0.000000e+00> : "
		      "vector<16x16x%s>\n"
		      "      %%scale = arith.constant dense<%s> : "
		      "vector<16x8xf32>\n",
		      et.data, tc.data, sc);
	if (a->nk % s->bn)
		pb_buf_puts(t, "      %c16 = arith.constant 16 : index\n");
	if (a->causal)
		pb_buf_puts(t, "      %c0i = arith.constant 0 : index\n");
	if (a->nk % s->bn || a->causal)
		pb_buf_puts(t, "      %ninfc = arith.constant dense<0xFF800000> : "
			    "vector<16x8xf32>\n");
	if (a->causal) {
		/* col - r of a 16x8 fragment */
		pb_buf_puts(t, "      %dg = arith.constant dense<[");
		for (int r = 0; r < 16; r++) {
			pb_buf_puts(t, r ? ", [" : "[");
			for (int c = 0; c < 8; c++)
				pb_buf_printf(t, "%s%d", c ? ", " : "", c - r);
			pb_buf_puts(t, "]");
		}
		pb_buf_puts(t, "]> : vector<16x8xi32>\n");
	}
	/* the block's first row "%bq": causal blocks in reverse order, the
	 * last rows (which walk the most keys) first, so that the longest
	 * blocks start first and the short ones fill the last wave */
	if (a->causal)
		pb_buf_printf(t, "      %%bq = affine.apply affine_map<(b) -> "
			      "(%lld - b)>(%%b%d)\n",
			      (long long)(round_up(rows, s->bm) - s->bm), a->m);
	else
		pb_buf_printf(t, "      %%bq = affine.apply affine_map<(b) -> "
			      "(b)>(%%b%d)\n", a->m);
	for (int i = 0; i < fm; i++)
		pb_buf_printf(t, "      %%row%d = affine.apply affine_map<(a, b) "
			      "-> (a + b + %d)>(%%bq, %%w)\n", i, 16 * i);
	for (int kk = 0; kk < nd; kk++)
		pb_buf_printf(t, "      %%dc%d = arith.constant %d : index\n",
			      kk, 16 * kk);
	for (int e = 0; e < ne; e++)
		pb_buf_printf(t, "      %%ec%d = arith.constant %d : index\n",
			      e, 8 * e);
	pb_mma_cst_text(t, &a->q, "cq");
	pb_mma_cst_text(t, &a->k, "ck");
	pb_mma_cst_text(t, &a->v, "cv");
	pb_mma_cst_text(t, &a->o, "co");
	for (int u = 0; u < a->nmask; u++) {
		const struct pb_kernel_att_mask *mk = &a->mk[u];
		if (computed(a, u))
			continue;
		char cpre[16];
		snprintf(cpre, sizeof(cpre), "cm%d_", u);
		pb_mma_cst_text(t, &mk->mask, cpre);
		if (mk->kind == PB_KERNEL_ATT_WHERE) {
			/* the condition read as booleans, false past its
			   end */
			pb_buf_printf(t, "      %%mpad%d = arith.constant "
				      "false\n", u);
			if (mlirOperationIsNull(mk->fill.op)) {
				char fs[32];
				MlirAttribute fa = pb_ir_attr(
					mlirOpResultGetOwner(mk->fillv),
					"value");
				fill_text(fs, sizeof(fs),
					  mlirFloatAttrGetValueDouble(fa));
				pb_buf_printf(t, "      %%fill%d = "
					      "arith.constant dense<%s> : "
					      "vector<16x8xf32>\n", u, fs);
			} else {
				fill_load_text(t, a, u);
			}
		} else {
			pb_buf_printf(t, "      %%mpad%d = arith.constant "
				      "0.000000e+00 : ", u);
			elt_text(mk->mask.mem, t);
			pb_buf_puts(t, "\n");
		}
	}
	for (int u = 0; u < a->nmask; u++)
		if (a->mk[u].kind == PB_KERNEL_ATT_ADD && !computed(a, u)) {
			pb_buf_puts(t, "      %log2e = arith.constant "
				    "dense<1.44269502> : vector<16x8xf32>\n");
			break;
		}
	/* Q, once */
	for (int i = 0; i < fm; i++)
		for (int kk = 0; kk < nd; kk++) {
			char res[32], dc[32], row[32];
			struct names nm = {row, NULL, dc, NULL, NULL};
			snprintf(row, sizeof(row), "row%d", i);
			snprintf(dc, sizeof(dc), "dc%d", kk);
			snprintf(res, sizeof(res), "q%d_%d%s", i, kk,
				 cut ? "x" : "");
			read_text(t, res, "Q", mq.data, et.data, a, &a->q, "cq",
				  a->m, PB_KERNEL_ATT_D, &nm, 16, 16, mask_r,
				  16 * kk + 16 > a->d, 0);
			snprintf(res, sizeof(res), "q%d_%d", i, kk);
			round_text(t, cut, res, 16, 16, tc.data);
		}
	/* the key loop: each row fragment's maxima and sums, then the
	   output fragments */
	/* causal: the keys up to the block's last row + c, no further */
	if (a->causal)
		pb_buf_printf(t, "      %%r:%d = affine.for %%j = 0 to min "
			      "affine_map<(b) -> (%lld, b + %lld)>(%%bq) "
			      "step %lld iter_args(",
			      fm * (2 + ne), (long long)round_up(a->nk, s->bn),
			      (long long)(s->bm + a->causal_off),
			      (long long)s->bn);
	else
		pb_buf_printf(t, "      %%r:%d = affine.for %%j = 0 to %lld "
			      "step %lld iter_args(", fm * (2 + ne),
			      (long long)round_up(a->nk, s->bn),
			      (long long)s->bn);
	for (int i = 0; i < fm; i++)
		pb_buf_printf(t, "%s%%m%d = %%ninf, %%l%d = %%zr", i ? ", " : "",
			      i, i);
	for (int i = 0; i < fm; i++)
		for (int e = 0; e < ne; e++)
			pb_buf_printf(t, ", %%o%d_%d = %%zc", i, e);
	pb_buf_puts(t, ") -> (");
	for (int i = 0; i < fm; i++)
		pb_buf_printf(t, "%svector<16xf32>, vector<16xf32>",
			      i ? ", " : "");
	for (int i = 0; i < fm * ne; i++)
		pb_buf_puts(t, ", vector<16x8xf32>");
	pb_buf_puts(t, ") {\n");
	scores_text(t, a, s, mk.data, et.data, tc.data, cut, fm, mask_r);
	for (int i = 0; i < fm; i++)
		softmax_text(t, i, nf, ne);
	for (int kk = 0; kk < nf / 2; kk++)
		pv_text(t, a, mv.data, et.data, tc.data, cut, fm, kk,
			a->nk % s->bn != 0);
	pb_buf_puts(t, "        affine.yield ");
	for (int i = 0; i < fm; i++)
		pb_buf_printf(t, "%s%%mn%d, %%ln%d", i ? ", " : "", i, i);
	for (int i = 0; i < fm; i++)
		for (int e = 0; e < ne; e++)
			pb_buf_printf(t, ", %%os%d_%d_%d", i, e, nf / 2);
	pb_buf_puts(t, " : ");
	for (int i = 0; i < fm; i++)
		pb_buf_printf(t, "%svector<16xf32>, vector<16xf32>",
			      i ? ", " : "");
	for (int i = 0; i < fm * ne; i++)
		pb_buf_puts(t, ", vector<16x8xf32>");
	pb_buf_puts(t, "\n      }\n");
	/* O / l, once */
	for (int i = 0; i < fm; i++) {
		pb_buf_printf(t, "      %%lr%d = vector.shape_cast %%r#%d : "
			      "vector<16xf32> to vector<16x1xf32>\n"
			      "      %%lb%d = vector.broadcast %%lr%d : "
			      "vector<16x1xf32> to vector<16x8xf32>\n",
			      i, 2 * i + 1, i, i);
		for (int e = 0; e < ne; e++) {
			char res[32], ec[32], row[32];
			struct names nm = {row, NULL, NULL, ec, NULL};
			snprintf(row, sizeof(row), "row%d", i);
			snprintf(ec, sizeof(ec), "ec%d", e);
			pb_buf_printf(t, "      %%out%d_%d = arith.divf %%r#%d, "
				      "%%lb%d : vector<16x8xf32>\n", i, e,
				      2 * fm + i * ne + e, i);
			snprintf(res, sizeof(res), "out%d_%d", i, e);
			if (strcmp(ot.data, "f32")) {
				pb_buf_printf(t, "      %%outh%d_%d = arith.truncf "
					      "%%out%d_%d : vector<16x8xf32> to "
					      "vector<16x8x%s>\n",
					      i, e, i, e, ot.data);
				snprintf(res, sizeof(res), "outh%d_%d", i, e);
			}
			read_text(t, res, "O", mo.data, ot.data, a, &a->o, "co",
				  a->m, PB_KERNEL_ATT_E, &nm, 16, 8, mask_r,
				  8 * e + 8 > a->e, 1);
		}
	}
	pb_buf_puts(t, "    } {pb.map = \"warp\"}\n  } {pb.map = \"block\"}\n"
		    "  return\n}\n");
	pb_buf_free(&mq);
	pb_buf_free(&mk);
	pb_buf_free(&mv);
	pb_buf_free(&mo);
	pb_buf_free(&et);
	pb_buf_free(&tc);
	pb_buf_free(&ot);
}

int pb_mma_attention(struct pb_ctx *ctx, const struct pb_kernel_attention *a,
		     const struct pb_kernel_attention_tiles *s)
{
	struct pb_buf t = {0};
	struct pb_ir_ops out = {0};
	MlirValue args[4 + 2 * PB_KERNEL_ATT_MAXM] = {a->q.mem, a->k.mem,
						      a->v.mem, a->o.mem};
	int nargs = 4;
	for (int u = 0; u < a->nmask; u++) {
		args[nargs++] = a->mk[u].mask.mem;
		if (!mlirOperationIsNull(a->mk[u].fill.op))
			args[nargs++] = a->mk[u].fill.mem;
	}
	nest_text(&t, a, s);
	int rc = pb_ir_instantiate(ctx, t.data, a->b.root, nargs, args,
				   mlirOperationGetLocation(a->b.root), &out);
	pb_buf_free(&t);
	if (rc == PB_OK && out.n == 1)
		mlirOperationDestroy(a->b.root); /* with its pb.mma mark */
	pb_ir_ops_free(&out);
	return rc;
}
