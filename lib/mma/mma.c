/* pb-mma: contractions onto tensor cores (docs/pb-mma.md).
 *
 * pb-tile leaves each nest that pb_mma_candidate accepts unmapped and
 * marked pb.mma. Here each such nest is matched again (match.c), its
 * block and warp tiles chosen, and the nest rewritten into warp tiles of
 * vector.contract (rewrite.c). With --no-mma (or a nest that no longer
 * matches) the mark stays, and the stage driver (lib/pipeline) has pb-tile
 * map the nest for CUDA cores. */
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "ir/contract.h"
#include "mma/internal.h"
#include "target/target.h"


/* The tiles --sizes gives nest "nest" of kernel "k" into "s": 1, 0 when
 * it gives none, -1 (reported) when they do not fit "c". */
static int given(struct pb_ctx *ctx, struct pb_kernel_sizes *sz, int k,
		 int nest, const struct pb_kernel_contraction *c,
		 struct pb_kernel_mma_tiles *s, MlirLocation loc)
{
	int64_t v[PB_KERNEL_MAXD];
	int n = sz ? pb_kernel_sizes_get(sz, k, nest, "mma", v) : -1;
	if (n == -1)
		return 0;
	s->bm = v[0];
	s->bn = v[1];
	s->wm = v[2];
	s->wn = v[3];
	s->bh = n == 5 ? v[4] : 0;
	int hd = pb_kernel_window_rows(c);
	if ((n != 4 && n != 5) || s->wm <= 0 || s->wn <= 0 ||
	    s->wm % PB_KERNEL_FRAG_M || s->wn % PB_KERNEL_FRAG_N ||
	    s->bm % s->wm || s->bn % s->wn ||
	    (n == 5 && (s->bh < 1 ||
			(s->bh > 1 && (hd < 0 || c->b.extent[hd] % s->bh)))) ||
	    pb_kernel_mma_warps(s) > 32) {
		pb_error_at(ctx, loc, "--sizes: kernel[%d] -> mma[BM, BN, WM, "
			    "WN(, BH)] takes 4 sizes, or 5 for a convolution: "
			    "warp tiles of multiples of 16x8 that divide the "
			    "block tile, BH image rows a block that divide "
			    "the image's, at most 32 warps (C is %lldx%lld)",
			    k, (long long)c->b.extent[c->m],
			    (long long)c->b.extent[c->n]);
		return -1;
	}
	return 1;
}

/* Can "c" go to wgmma on "t" (docs/pb-mma.md, "wgmma on sm_90a"): f16
 * or bf16 operands in memory (not f32 ones rounded in registers), A
 * stored with k innermost and B with k or n innermost, so that pb-smem's
 * swizzled rings hold them as wgmma reads them, K whole k steps? C's
 * rows need not be whole warpgroups, nor its columns whole blocks: the
 * last block's rows (columns) past C's are zeros in the staged tiles
 * (pb-smem's guarded copies: whole rows of A's ring, or of B's stored
 * with k innermost; chunks of B's rows stored [k][n], swizzled like the
 * chunks they stand for), and their stores are guarded. "*why" when
 * not. */
static int wgmma_fits(const struct pb_target *t,
		      const struct pb_kernel_contraction *c, const char **why)
{
	const struct pb_kernel_access *a = &c->a, *b = &c->b_;
	*why = "the target has no wgmma (sm_90a)";
	if (!pb_target_has_wgmma(t))
		return 0;
	*why = "a convolution's window (implicit GEMM) is mma.sync's";
	if (c->ntap)
		return 0;
	*why = "wgmma takes f16 or bf16 operands from shared memory";
	if (mlirTypeIsAF32(c->elt) || !mlirTypeEqual(c->elt, c->tc))
		return 0;
	*why = "A not stored with k innermost, or B with neither k nor n";
	if (a->sub[a->rank - 1] != PB_KERNEL_SUB_K ||
	    (b->sub[b->rank - 1] != PB_KERNEL_SUB_K &&
	     b->sub[b->rank - 1] != c->n))
		return 0;
	*why = "K not a multiple of 16";
	return c->k % 16 == 0;
}

/* Does a block tile of "bm" x "bn" cover C of "em" x "en": whole blocks
 * where C's rows (columns) are whole warpgroups, else masked ones, less
 * than 64 rows (columns) of them past C? */
static int covers(int64_t em, int64_t en, int64_t bm, int64_t bn)
{
	return (em % 64 ? bm < em + 64 : em % bm == 0) &&
	       (en % 64 ? bn < en + 64 : en % bn == 0);
}

/* The tiles of "c" for wgmma into "s": warpgroups of 4 warps, each warp
 * 16 rows of C by the block's columns (so that the 4 warps of a
 * warpgroup hold the 64xN accumulator of one wgmma m64nNk16, in the
 * layout of mma.sync's fragments): the first of two warpgroups of
 * 128x128, one of 64x128 and one of 64x64 whose blocks fill three
 * quarters of the SMs, else the smallest that covers C (divides it, or
 * masks its rows or columns where they are not multiples of 64). Two
 * warpgroups share each B tile (half the copies and shared memory per
 * flop of 64x128) and, with the opt-in shared memory, take pb-smem's
 * rings of k-tiles of 64 in 4 stages (128 KiB; in the 48 KiB of static
 * shared memory only k-tiles of 32: 2 wgmma per 102-instruction loop;
 * bench/RESULTS.md). 0 with "*why" when none divides C. */
static int wgmma_tiles(const struct pb_target *t,
		       const struct pb_kernel_contraction *c,
		       struct pb_kernel_mma_tiles *s, const char **why)
{
	static const struct pb_kernel_mma_tiles cand[] = {
		{128, 128, 16, 128, 1}, {64, 128, 16, 128, 1}, {64, 64, 16, 64, 1}};
	int64_t em = c->b.extent[c->m], en = c->b.extent[c->n], rest = 1;
	int best = -1;
	if (!wgmma_fits(t, c, why))
		return 0;
	for (int d = 0; d < c->b.n; d++)
		if (d != c->m && d != c->n)
			rest *= c->b.extent[d];
	for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
		int64_t nb = rest * ((em + cand[i].bm - 1) / cand[i].bm) *
			     ((en + cand[i].bn - 1) / cand[i].bn);
		if (!covers(em, en, cand[i].bm, cand[i].bn))
			continue;
		best = (int)i;
		if (4 * nb >= 3 * t->sm_count)
			break;
	}
	*why = "no wgmma block tile covers C";
	if (best < 0)
		return 0;
	*s = cand[best];
	return 1;
}

/* Exchange the roles of the operands of "c": C transposed, its rows
 * what were its columns (B's n) and its columns its rows (A's m), A the
 * operand that was B. pb-mma's tiles of the exchanged contraction write
 * C through the same subscripts, so the nest computes the same. */
static void transpose(struct pb_kernel_contraction *c)
{
	struct pb_kernel_access x = c->a;
	int d = c->m;
	c->a = c->b_;
	c->b_ = x;
	c->m = c->n;
	c->n = d;
}

/* The tiles of "c" for wgmma into "s", in the orientation its operands'
 * storage gives (docs/pb-mma.md, "wgmma on sm_90a"): wgmma reads A with
 * k innermost only (a 16-bit A [k][m] has no transposed descriptor
 * form pb-smem stages), B either way; so where A is stored [k][m] and B
 * with k innermost, as a 1x1 convolution in NCHW with its weights
 * stored [o][1][1][c] (pb.perm) reads them (A the image's rows, B the
 * weights), C transposed takes wgmma: its rows the output channels (A
 * the weights), its columns the pixels (B the image, n innermost:
 * wgmma's transposed B); not a strided one (pb-mma reads its input
 * through a view that only A takes). 1 with "*tr" set when "c" was
 * transposed. */
static int wgmma_oriented(const struct pb_target *t,
			  struct pb_kernel_contraction *c,
			  struct pb_kernel_mma_tiles *s, int *tr,
			  const char **why)
{
	struct pb_kernel_contraction ct = *c;
	const char *twhy;
	*tr = 0;
	if (wgmma_tiles(t, c, s, why))
		return 1;
	if (!pb_target_has_wgmma(t) || c->ntap ||
	    c->a.sub[c->a.rank - 1] == PB_KERNEL_SUB_K)
		return 0;
	/* a strided 1x1's input is read through a view of A (C's rows S
	   apart), which pb-mma builds for A only */
	for (int r = 0; r < c->a.rank; r++)
		if (pb_kernel_stride(&c->a, r) > 1)
			return 0;
	for (int r = 0; r < c->b_.rank; r++)
		if (pb_kernel_stride(&c->b_, r) > 1)
			return 0;
	transpose(&ct);
	if (!wgmma_tiles(t, &ct, s, &twhy))
		return 0;
	*c = ct;
	*tr = 1;
	return 1;
}

/* Are "s" tiles of wgmma shape (wgmma_tiles)? */
static int is_wgmma_shape(const struct pb_kernel_mma_tiles *s)
{
	return s->wm == 16 && s->wn == s->bn && s->bm % 64 == 0 &&
	       s->wn % 8 == 0 && s->wn <= 256;
}

/* The precision pb-tile's mark "m" (pb_kernel_mma_kind) asks of f32
 * operands. */
static enum pb_precision mark_precision(MlirStringRef m)
{
	static const struct {
		const char *kind;
		enum pb_precision p;
	} kinds[] = {{"tf32", PB_PRECISION_TF32},
		     {"f16", PB_PRECISION_FP16},
		     {"bf16", PB_PRECISION_BF16}};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (m.length == strlen(kinds[i].kind) &&
		    !strncmp(m.data, kinds[i].kind, m.length))
			return kinds[i].p;
	return PB_PRECISION_FP32;
}

/* Map attention nest "a" ("op"), marked pb.mma by pb-tile: both of its
 * products on tensor cores (attention.c). */
/* The tiles --sizes gives attention nest "nest" of kernel "k" into "s":
 * 1, 0 when it gives none, -1 (reported) when they do not fit "a". */
static int given_attention(struct pb_ctx *ctx, struct pb_kernel_sizes *sz,
			   int k, int nest, const struct pb_kernel_attention *a,
			   struct pb_kernel_attention_tiles *s, MlirLocation loc)
{
	int64_t v[PB_KERNEL_MAXD];
	int n = sz ? pb_kernel_sizes_get(sz, k, nest, "attention", v) : -1;
	if (n == -1)
		return 0;
	s->bm = v[0];
	s->wm = v[1];
	s->bn = v[2];
	if (n != 3 || (s->wm != 16 && s->wm != 32) || s->bm <= 0 ||
	    s->bm % s->wm || s->bm / s->wm > 8 ||
	    (s->bn != 16 && s->bn != 32 && s->bn != 64) ||
	    (a->nk % 16 == 0 && a->nk % s->bn)) {
		pb_error_at(ctx, loc, "--sizes: kernel[%d] -> attention[BM, WM, "
			    "BN] takes 3 sizes: query rows a block, a multiple "
			    "of the rows a warp (16 or 32), at most 8 warps; "
			    "keys a step (16, 32 or 64) dividing the %lld keys",
			    k, (long long)a->nk);
		return -1;
	}
	return 1;
}

static int map_attention(struct pb_ctx *ctx, const struct pb_mma_opts *o,
			 const struct pb_target *t, struct pb_kernel_sizes *sz,
			 int k, int nest, struct pb_kernel_attention *a,
			 MlirOperation op)
{
	struct pb_kernel_attention_tiles s;
	const char *why;
	MlirStringRef mark = pb_ir_str_attr(op, PB_ATTR_MMA);
	int g = 0;
	int ok = pb_kernel_attention_operands(a, mark_precision(mark), &why) &&
		 pb_kernel_attention_tiles(t, a, &s, &why);
	if (ok && (g = given_attention(ctx, sz, k, nest, a, &s,
				       mlirOperationGetLocation(op))) < 0)
		return PB_ERR;
	if (ok && (mark.length != strlen(pb_kernel_mma_kind(a->tc)) ||
		   strncmp(mark.data, pb_kernel_mma_kind(a->tc), mark.length))) {
		why = "the operands are not the type pb-tile marked";
		ok = 0;
	}
	if (!ok) {
		if (o->remarks)
			pb_remark_at(ctx, mlirOperationGetLocation(op),
				     "attention on CUDA cores: %s", why);
		return PB_OK;
	}
	/* wgmma (on sm_90a) where both products fit it and the tiles are
	   its warpgroups' (not --sizes' 32 rows a warp) */
	const char *wwhy;
	int wg = pb_kernel_attention_wgmma(t, a, &wwhy);
	if (wg)
		wwhy = "--sizes gives other than 16 rows a warp and a "
		       "multiple of 64 a block";
	wg = wg && s.wm == 16 && s.bm % 64 == 0;
	if (o->remarks && wg)
		pb_remark_at(ctx, mlirOperationGetLocation(op),
			     "attention on tensor cores: wgmma m64n%lldk16 "
			     "(QK^T, K from shared memory) and m64n%lldk16 (PV, "
			     "P from registers) %s -> f32, %lld query rows a "
			     "block, %lld warpgroup(s) of 4 warps, %lld keys a "
			     "step%s", (long long)s.bn, (long long)a->e,
			     pb_kernel_mma_kind(a->tc), (long long)s.bm,
			     (long long)(s.bm / 64), (long long)s.bn,
			     a->causal ? "; causal: the mask computed, the key "
					 "tiles past the diagonal skipped"
				       : "");
	else if (o->remarks)
		pb_remark_at(ctx, mlirOperationGetLocation(op),
			     "attention on tensor cores: mma.sync m16n8k16 %s "
			     "-> f32 for QK^T and PV, P in registers, %lld "
			     "query rows a block, %lld a warp, %lld keys a "
			     "step%s%s%s", pb_kernel_mma_kind(a->tc),
			     (long long)s.bm, (long long)s.wm, (long long)s.bn,
			     a->causal ? "; causal: the mask computed, the key "
					 "tiles past the diagonal skipped"
				       : "",
			     pb_target_has_wgmma(t) ? "; not wgmma: " : "",
			     pb_target_has_wgmma(t) ? wwhy : "");
	return pb_mma_attention(ctx, a, &s);
}

/* Store the weights of convolution "c" (nest "op") in the layout the
 * tensor cores read when they are a weight of @main (wpack.c), and read
 * "c" again; say so with --remarks. */
static int weights(struct pb_ctx *ctx, const struct pb_mma_opts *o,
		   MlirOperation op, struct pb_kernel_contraction *c,
		   enum pb_precision p)
{
	int perm[PB_KERNEL_MAXR];
	const char *why;
	MlirLocation loc = mlirOperationGetLocation(op);
	if (!pb_mma_pack_weights(c, perm, &why)) {
		if (o->remarks && why)
			pb_remark_at(ctx, loc, "weights kept as stored: %s", why);
		return PB_OK;
	}
	if (!pb_kernel_contraction_of(op, c, &why) ||
	    !pb_kernel_mma_operands(c, p, &why)) {
		pb_error_at(ctx, loc, "internal: the contraction with its "
			    "weights permuted: %s", why);
		return PB_ERR;
	}
	if (o->remarks) {
		char s[64] = "";
		for (int i = 0, n = 0; i < c->b_.rank; i++)
			n += snprintf(s + n, sizeof(s) - n, "%s%d", i ? ", " : "",
				      perm[i]);
		pb_remark_at(ctx, loc, "weights stored [n][window][k] "
			     "(pb.perm = [%s], applied at load): k innermost, "
			     "copied 16 bytes at a time, read untransposed "
			     "(ldmatrix, or wgmma's descriptor)", s);
	}
	return PB_OK;
}

/* The remark's words for the image rows of a block of "s" (a static
 * buffer: one remark at a time). */
static const char *rows_text(const struct pb_kernel_mma_tiles *s)
{
	static char b[128];
	b[0] = 0;
	if (s->bh > 1)
		snprintf(b, sizeof(b), " on %lld image rows (a row of warps "
			 "each, the window's rows staged once for them)",
			 (long long)s->bh);
	return b;
}

/* Map nest "op" (number "nest" of kernel number "k"), marked pb.mma by
 * pb-tile. */
static int map_nest(struct pb_ctx *ctx, const struct pb_mma_opts *o,
		    const struct pb_target *t, struct pb_kernel_sizes *sz,
		    int k, int nest, MlirOperation op)
{
	struct pb_kernel_contraction c;
	struct pb_kernel_mma_tiles s;
	struct pb_kernel_attention a;
	const char *why = "--no-mma";
	MlirLocation loc = mlirOperationGetLocation(op);
	if (!o->no_mma && pb_kernel_attention_of(op, &a, &why))
		return map_attention(ctx, o, t, sz, k, nest, &a, op);
	int g = 0, ok = !o->no_mma && pb_kernel_contraction_of(op, &c, &why);
	/* the operands' type on tensor cores is pb-tile's mark (for f32
	   operands: its --precision) */
	MlirStringRef mark = pb_ir_str_attr(op, PB_ATTR_MMA);
	if (ok && !pb_kernel_mma_operands(&c, mark_precision(mark), &why))
		ok = 0;
	if (ok && (mark.length != strlen(pb_kernel_mma_kind(c.tc)) ||
		   strncmp(mark.data, pb_kernel_mma_kind(c.tc), mark.length))) {
		why = "the operands are not the type pb-tile marked";
		ok = 0;
	}
	if (ok && (g = given(ctx, sz, k, nest, &c, &s, loc)) < 0)
		return PB_ERR;
	/* a convolution's weights stored as the tensor cores read them
	   first: wgmma's orientation depends on their layout */
	if (ok && weights(ctx, o, op, &c, mark_precision(mark)) != PB_OK)
		return PB_ERR;
	const char *wwhy = NULL;
	int tr = 0;
	if (ok && (g || wgmma_oriented(t, &c, &s, &tr, &wwhy) ||
		   pb_kernel_mma_tiles(t, &c, &s, &why))) {
		if (o->remarks && pb_target_has_wgmma(t) &&
		    is_wgmma_shape(&s) && (g ? wgmma_fits(t, &c, &wwhy) : 1))
			pb_remark_at(ctx, loc, "on tensor cores: wgmma "
				     "m64n%lldk16 %s -> f32, block tile "
				     "%lldx%lld, %lld warpgroup(s) of 4 warps "
				     "(warp tile %lldx%lld)%s",
				     (long long)s.wn, pb_kernel_mma_kind(c.tc),
				     (long long)s.bm, (long long)s.bn,
				     (long long)(s.bm / 64), (long long)s.wm,
				     (long long)s.wn,
				     tr ? "; C transposed: A stored [k][m] "
					  "and B with k innermost, so B's "
					  "rows (a 1x1 convolution's output "
					  "channels) are C's rows and A's (its "
					  "pixels) C's columns"
					: "");
		else if (o->remarks)
			pb_remark_at(ctx, loc, "on tensor cores: mma.sync "
				     "m16n8k%lld %s -> f32, block tile "
				     "%lldx%lld%s, warp tile %lldx%lld (%lld "
				     "warps)%s%s",
				     (long long)pb_kernel_frag_k(c.tc),
				     pb_kernel_mma_kind(c.tc), (long long)s.bm,
				     (long long)s.bn, rows_text(&s),
				     (long long)s.wm, (long long)s.wn,
				     (long long)pb_kernel_mma_warps(&s),
				     pb_target_has_wgmma(t) && wwhy
					     ? "; not wgmma: " : "",
				     pb_target_has_wgmma(t) && wwhy ? wwhy : "");
		return pb_mma_rewrite(ctx, &c, &s);
	}
	if (o->remarks)
		pb_remark_at(ctx, loc, "on CUDA cores: %s", why);
	return PB_OK;
}

int pb_mma_run(struct pb_ctx *ctx, MlirModule m, const struct pb_mma_opts *o)
{
	static const struct pb_mma_opts defaults;
	const struct pb_target *t;
	struct pb_ir_ops funcs = {0}, nests = {0};
	struct pb_kernel_sizes *sz = NULL;
	int rc = PB_OK;
	if (!o)
		o = &defaults;
	if (pb_ir_get_stage(m) >= PB_STAGE_MMA)
		return PB_OK;
	if (!(t = pb_target_of(ctx)))
		return PB_ERR;
	if (o->sizes && !(sz = pb_kernel_sizes_parse(ctx, o->sizes)))
		return PB_ERR;
	pb_kernel_mma_marked(m, &funcs, &nests);
	for (int i = 0; i < nests.n && rc == PB_OK; i++) {
		int k, nest;
		pb_kernel_nest_number(m, nests.v[i], &k, &nest);
		rc = map_nest(ctx, o, t, sz, k, nest, nests.v[i]);
	}
	pb_kernel_sizes_free(sz);
	pb_ir_ops_free(&nests);
	pb_ir_ops_free(&funcs);
	if (rc == PB_OK)
		pb_ir_advance_stage(m, PB_STAGE_MMA);
	return rc;
}
