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
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mlir-c/BuiltinTypes.h"

#include "ir/contract.h"
#include "mma/internal.h"

/* An index name per subscript role of an access: the batch dimensions'
 * block counters "%b<d>", the query rows' "row", and the key, head and
 * value positions given. */
struct names {
	const char *row, *j, *d, *e;
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
	pb_buf_printf(t, "]%s {in_bounds = [%s, %s], permutation_map = "
		      "affine_map<(", write ? "" : ", %pad",
		      mrows ? "false" : "true", mcols ? "false" : "true");
	for (int r = 0; r < x->rank; r++)
		pb_buf_printf(t, "%sd%d", r ? ", " : "", r);
	pb_buf_printf(t, ") -> (d%d, d%d)>} : ", pos_of(x, rr), pos_of(x, cr));
	if (write)
		pb_buf_printf(t, "vector<%dx%dx%s>, %s\n", rows, cols, et, mt);
	else
		pb_buf_printf(t, "%s, vector<%dx%dx%s>\n", mt, rows, cols, et);
}

/* The constant subscripts of "x" as index constants "%<cpre><r>". */
static void cst_text(struct pb_buf *t, const struct pb_kernel_access *x,
		     const char *cpre)
{
	for (int r = 0; r < x->rank; r++)
		if (x->sub[r] == PB_KERNEL_SUB_CST)
			pb_buf_printf(t, "      %%%s%d = arith.constant %lld : "
				      "index\n", cpre, r, (long long)x->cst[r]);
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

/* The scores of key step "%j": fragment n = 0 .. BN/8 - 1 in "%x<n>". */
static void scores_text(struct pb_buf *t, const struct pb_kernel_attention *a,
			const struct pb_kernel_attention_tiles *s,
			const char *mk, const char *et, const char *tc,
			int cut)
{
	int nd = (int)((a->d + 15) / 16);
	for (int n = 0; n < s->bn / 8; n++) {
		char jn[16];
		snprintf(jn, sizeof(jn), "jn%d", n);
		pb_buf_printf(t, "        %%jn%d = affine.apply affine_map<(j) -> "
			      "(j + %d)>(%%j)\n", n, 8 * n);
		for (int kk = 0; kk < nd; kk++) {
			char res[32], dc[16];
			struct names nm = {"row", jn, dc, NULL};
			snprintf(dc, sizeof(dc), "dc%d", kk);
			snprintf(res, sizeof(res), "k%d_%d%s", n, kk,
				 cut ? "x" : "");
			read_text(t, res, "K", mk, et, a, &a->k, "ck",
				  PB_KERNEL_ATT_D, PB_KERNEL_ATT_J, &nm, 16, 8,
				  16 * kk + 16 > a->d, 0, 0);
			snprintf(res, sizeof(res), "k%d_%d", n, kk);
			round_text(t, cut, res, 16, 8, tc);
			pb_buf_printf(t, "        %%s%d_%d = vector.contract "
				      "{indexing_maps = [#pba, #pbb, #pbc], "
				      "iterator_types = [\"parallel\", "
				      "\"parallel\", \"reduction\"], kind = "
				      "#vector.kind<add>} %%q%d, %%k%d_%d, ",
				      n, kk, kk, n, kk);
			if (kk)
				pb_buf_printf(t, "%%s%d_%d", n, kk - 1);
			else
				pb_buf_puts(t, "%zc");
			pb_buf_printf(t, " : vector<16x16x%s>, vector<16x8x%s> "
				      "into vector<16x8xf32>\n", tc, tc);
		}
		pb_buf_printf(t, "        %%x%d = arith.mulf %%s%d_%d, "
			      "%%scale : vector<16x8xf32>\n", n, n, nd - 1);
	}
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
	int nf = (int)(s->bn / 8);
	int64_t rows = a->b.extent[a->m];
	int mask_r = rows % s->bm != 0;
	char sc[32];
	/* the scores in base 2: exp(s c - m) = exp2(s c log2(e) - m') */
	f32_text(sc, sizeof(sc),
		 (a->divide ? 1 / a->scale : a->scale) * M_LOG2E);

	pb_buf_printf(t, "#pba = affine_map<(m, n, k) -> (m, k)>\n"
		      "#pbb = affine_map<(m, n, k) -> (k, n)>\n"
		      "#pbc = affine_map<(m, n, k) -> (m, n)>\n"
		      "func.func @t(%%Q: %s, %%K: %s, %%V: %s, %%O: %s) {\n",
		      mq.data, mk.data, mv.data, mo.data);
	pb_buf_puts(t, "  affine.parallel (");
	for (int d = 0; d < a->b.n; d++)
		pb_buf_printf(t, "%s%%b%d", d ? ", " : "", d);
	pb_buf_puts(t, ") = (");
	for (int d = 0; d < a->b.n; d++)
		pb_buf_printf(t, "%s0", d ? ", " : "");
	pb_buf_puts(t, ") to (");
	for (int d = 0; d < a->b.n; d++)
		pb_buf_printf(t, "%s%lld", d ? ", " : "",
			      (long long)(d == a->m ? round_up(rows, s->bm)
						    : a->b.extent[d]));
	pb_buf_puts(t, ") step (");
	for (int d = 0; d < a->b.n; d++)
		pb_buf_printf(t, "%s%lld", d ? ", " : "",
			      (long long)(d == a->m ? s->bm : 1));
	pb_buf_printf(t, ") {\n    affine.parallel (%%w) = (0) to (%lld) step "
		      "(16) {\n", (long long)s->bm);
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
		      "vector<16x8xf32>\n"
		      "      %%row = affine.apply affine_map<(a, b) -> (a + b)>"
		      "(%%b%d, %%w)\n",
		      et.data, tc.data, sc, a->m);
	for (int kk = 0; kk < nd; kk++)
		pb_buf_printf(t, "      %%dc%d = arith.constant %d : index\n",
			      kk, 16 * kk);
	for (int e = 0; e < ne; e++)
		pb_buf_printf(t, "      %%ec%d = arith.constant %d : index\n",
			      e, 8 * e);
	cst_text(t, &a->q, "cq");
	cst_text(t, &a->k, "ck");
	cst_text(t, &a->v, "cv");
	cst_text(t, &a->o, "co");
	/* Q, once */
	for (int kk = 0; kk < nd; kk++) {
		char res[16], dc[16];
		struct names nm = {"row", NULL, dc, NULL};
		snprintf(dc, sizeof(dc), "dc%d", kk);
		snprintf(res, sizeof(res), "q%d%s", kk, cut ? "x" : "");
		read_text(t, res, "Q", mq.data, et.data, a, &a->q, "cq", a->m,
			  PB_KERNEL_ATT_D, &nm, 16, 16, mask_r,
			  16 * kk + 16 > a->d, 0);
		snprintf(res, sizeof(res), "q%d", kk);
		round_text(t, cut, res, 16, 16, tc.data);
	}
	/* the key loop */
	pb_buf_printf(t, "      %%r:%d = affine.for %%j = 0 to %lld step %lld "
		      "iter_args(%%m = %%ninf, %%l = %%zr", 2 + ne,
		      (long long)a->nk, (long long)s->bn);
	for (int e = 0; e < ne; e++)
		pb_buf_printf(t, ", %%o%d = %%zc", e);
	pb_buf_puts(t, ") -> (vector<16xf32>, vector<16xf32>");
	for (int e = 0; e < ne; e++)
		pb_buf_puts(t, ", vector<16x8xf32>");
	pb_buf_puts(t, ") {\n");
	scores_text(t, a, s, mk.data, et.data, tc.data, cut);
	/* the online softmax */
	rows_text(t, "maximumf", "maximumf", "x", nf, "m", "mn");
	pb_buf_puts(t, "        %isinf = arith.cmpf oeq, %mn, %ninf : "
		    "vector<16xf32>\n"
		    "        %safe = arith.select %isinf, %zr, %mn : "
		    "vector<16xi1>, vector<16xf32>\n"
		    "        %dm = arith.subf %m, %safe : vector<16xf32>\n"
		    "        %a = math.exp2 %dm : vector<16xf32>\n");
	spread_text(t, "safe", "sb");
	for (int n = 0; n < nf; n++)
		pb_buf_printf(t, "        %%xs%d = arith.subf %%x%d, %%sb : "
			      "vector<16x8xf32>\n"
			      "        %%p%d = math.exp2 %%xs%d : "
			      "vector<16x8xf32>\n", n, n, n, n);
	rows_text(t, "add", "addf", "p", nf, "zr", "ps");
	pb_buf_puts(t, "        %la = arith.mulf %l, %a : vector<16xf32>\n"
		    "        %ln = arith.addf %la, %ps : vector<16xf32>\n");
	spread_text(t, "a", "ab");
	for (int e = 0; e < ne; e++)
		pb_buf_printf(t, "        %%os%d_0 = arith.mulf %%o%d, %%ab : "
			      "vector<16x8xf32>\n", e, e);
	/* P.V: P rounded, two fragments an A operand */
	for (int kk = 0; kk < nf / 2; kk++) {
		char jk[16];
		for (int h = 0; h < 2; h++)
			pb_buf_printf(t, "        %%ph%d = arith.truncf %%p%d : "
				      "vector<16x8xf32> to vector<16x8x%s>\n",
				      2 * kk + h, 2 * kk + h, tc.data);
		pb_buf_printf(t, "        %%pa%dh = vector.insert_strided_slice "
			      "%%ph%d, %%za {offsets = [0, 0], strides = [1, "
			      "1]} : vector<16x8x%s> into vector<16x16x%s>\n"
			      "        %%pa%d = vector.insert_strided_slice "
			      "%%ph%d, %%pa%dh {offsets = [0, 8], strides = [1, "
			      "1]} : vector<16x8x%s> into vector<16x16x%s>\n",
			      kk, 2 * kk, tc.data, tc.data, kk, 2 * kk + 1, kk,
			      tc.data, tc.data);
		snprintf(jk, sizeof(jk), "jk%d", kk);
		pb_buf_printf(t, "        %%jk%d = affine.apply affine_map<(j) -> "
			      "(j + %d)>(%%j)\n", kk, 16 * kk);
		for (int e = 0; e < ne; e++) {
			char res[32], ec[16];
			struct names nm = {"row", jk, NULL, ec};
			snprintf(ec, sizeof(ec), "ec%d", e);
			snprintf(res, sizeof(res), "v%d_%d%s", kk, e,
				 cut ? "x" : "");
			read_text(t, res, "V", mv.data, et.data, a, &a->v, "cv",
				  PB_KERNEL_ATT_J, PB_KERNEL_ATT_E, &nm, 16, 8,
				  0, 8 * e + 8 > a->e, 0);
			snprintf(res, sizeof(res), "v%d_%d", kk, e);
			round_text(t, cut, res, 16, 8, tc.data);
			pb_buf_printf(t, "        %%os%d_%d = vector.contract "
				      "{indexing_maps = [#pba, #pbb, #pbc], "
				      "iterator_types = [\"parallel\", "
				      "\"parallel\", \"reduction\"], kind = "
				      "#vector.kind<add>} %%pa%d, %%v%d_%d, "
				      "%%os%d_%d : vector<16x16x%s>, "
				      "vector<16x8x%s> into vector<16x8xf32>\n",
				      e, kk + 1, kk, kk, e, e, kk, tc.data,
				      tc.data);
		}
	}
	pb_buf_puts(t, "        affine.yield %mn, %ln");
	for (int e = 0; e < ne; e++)
		pb_buf_printf(t, ", %%os%d_%d", e, nf / 2);
	pb_buf_puts(t, " : vector<16xf32>, vector<16xf32>");
	for (int e = 0; e < ne; e++)
		pb_buf_puts(t, ", vector<16x8xf32>");
	pb_buf_puts(t, "\n      }\n");
	/* O / l, once */
	pb_buf_puts(t, "      %lr = vector.shape_cast %r#1 : vector<16xf32> to "
		    "vector<16x1xf32>\n"
		    "      %lb = vector.broadcast %lr : vector<16x1xf32> to "
		    "vector<16x8xf32>\n");
	for (int e = 0; e < ne; e++) {
		char res[16], ec[16];
		struct names nm = {"row", NULL, NULL, ec};
		snprintf(ec, sizeof(ec), "ec%d", e);
		pb_buf_printf(t, "      %%out%d = arith.divf %%r#%d, %%lb : "
			      "vector<16x8xf32>\n", e, 2 + e);
		snprintf(res, sizeof(res), "out%d", e);
		if (strcmp(ot.data, "f32")) {
			pb_buf_printf(t, "      %%outh%d = arith.truncf %%out%d : "
				      "vector<16x8xf32> to vector<16x8x%s>\n",
				      e, e, ot.data);
			snprintf(res, sizeof(res), "outh%d", e);
		}
		read_text(t, res, "O", mo.data, ot.data, a, &a->o, "co", a->m,
			  PB_KERNEL_ATT_E, &nm, 16, 8, mask_r, 8 * e + 8 > a->e,
			  1);
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
	MlirValue args[4] = {a->q.mem, a->k.mem, a->v.mem, a->o.mem};
	nest_text(&t, a, s);
	int rc = pb_ir_instantiate(ctx, t.data, a->b.root, 4, args,
				   mlirOperationGetLocation(a->b.root), &out);
	pb_buf_free(&t);
	if (rc == PB_OK && out.n == 1)
		mlirOperationDestroy(a->b.root); /* with its pb.mma mark */
	pb_ir_ops_free(&out);
	return rc;
}
