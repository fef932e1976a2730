/* pb-tile: multi-level tiling and mapping of every kernel nest onto
 * blocks, warps and threads (docs/pb-tile.md).
 *
 * For each kernel (a pb.kernel function, numbered in module order as
 * kernel[0], kernel[1], ...) and each nest of it whose outer loops form a
 * band of affine.parallel loops (pb-fuse proved them parallel with isl),
 * the mapping comes from --sizes when given, else from the cost model
 * (cost.c):
 *   - tile: block, warp and thread tiles of the band (map.c);
 *   - reduce: one block per band point, its threads sharing the inner
 *     loops, reductions through a shared-memory tree (reduce.c);
 *   - none: left to pb-codegen's naive mapping. */
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "ir/contract.h"
#include "tile/internal.h"

/* The sizes --sizes gives nest "nest" of kernel "k" (band "b") into "c"; 0 when it
 * gives none, -1 on error (reported). */
static int given(struct pb_ctx *ctx, struct pb_kernel_sizes *sz, int k,
		 int nest, const struct pb_kernel_band *b,
		 struct pb_tile_choice *c)
{
	int64_t tile[PB_TILE_MAXD], block[PB_TILE_MAXD], red[PB_TILE_MAXD];
	int64_t jam[PB_TILE_MAXD], none[PB_TILE_MAXD], lin[PB_TILE_MAXD];
	int64_t sm[PB_TILE_MAXD], con[PB_TILE_MAXD];
	int nt = pb_kernel_sizes_get(sz, k, nest, "tile", tile);
	int nb = pb_kernel_sizes_get(sz, k, nest, "block", block);
	int nr = pb_kernel_sizes_get(sz, k, nest, "reduce", red);
	int nj = pb_kernel_sizes_get(sz, k, nest, "jam", jam);
	int nn = pb_kernel_sizes_get(sz, k, nest, "none", none);
	int nl = pb_kernel_sizes_get(sz, k, nest, "linear", lin);
	int ns = pb_kernel_sizes_get(sz, k, nest, "smem", sm);
	int nc = pb_kernel_sizes_get(sz, k, nest, "contig", con);
	MlirLocation loc = mlirOperationGetLocation(b->root);
	memset(c, 0, sizeof(*c));
	c->n = b->n;
	if (nt < -1 || nb < -1 || nr < -1 || nj < -1 || nn < -1 || nl < -1 ||
	    ns < -1 || nc < -1) {
		pb_error_at(ctx, loc, "--sizes: kernel[%d] is given one kind "
			    "of size twice", k);
		return -1;
	}
	if (nn < 0 && nt < 0 && nb < 0 && nr < 0 && nj < 0 && nl < 0 &&
	    ns < 0 && nc < 0)
		return 0;
	if (nc >= 0 && (nc != b->n || nt < 0 || nl >= 0)) {
		pb_error_at(ctx, loc, "--sizes: kernel[%d] -> contig[...] takes "
			    "one 0 or 1 per band dimension (%d), with tile[...]",
			    k, b->n);
		return -1;
	}
	for (int d = 0; d < nc; d++)
		if (con[d])
			c->contig |= 1u << d;
	if (ns > 2 || (ns > 0 && sm[0] < 1) ||
	    (ns == 2 && (sm[1] < 1 || sm[1] > 4)) ||
	    (ns >= 0 && (nt < 0 || nl >= 0))) {
		pb_error_at(ctx, loc, "--sizes: kernel[%d] -> smem[KT, S] takes "
			    "a k-tile of 1 or more and 1 to 4 slots (or "
			    "smem[] for none), with tile[...]", k);
		return -1;
	}
	c->sgiven = ns >= 0;
	c->skt = ns > 0 ? sm[0] : ns == 0 ? -1 : 0;
	c->sst = ns == 2 ? (int)sm[1] : 0;
	if (nn >= 0) {
		c->mode = PB_TILE_NONE;
		return 1;
	}
	if (nl >= 0) {
		if (nl != 2 || nt >= 0 || nb >= 0 || nr >= 0 ||
		    (nj >= 0 && nj != 1)) {
			pb_error_at(ctx, loc, "--sizes: kernel[%d] -> linear[T, B] "
				    "takes two sizes (points and threads), no "
				    "tile, block or reduce", k);
			return -1;
		}
		c->mode = PB_TILE_TILE;
		c->linear = 1;
		c->n = 1;
		c->tile[0] = lin[0];
		c->block[0] = lin[1];
		c->jam = nj == 1 ? (int)jam[0] != 0 : -1;
		return 1;
	}
	if (nr >= 0) {
		if (nr != 1 || nt >= 0 || nb >= 0) {
			pb_error_at(ctx, loc, "--sizes: kernel[%d] -> reduce[T] "
				    "takes one size and no tile or block", k);
			return -1;
		}
		c->mode = PB_TILE_REDUCE;
		c->threads = (int)red[0];
		return 1;
	}
	int depth = pb_tile_inner_depth(b);
	if ((nt >= 0 && (nt < b->n || nt > b->n + depth)) ||
	    (nb >= 0 && nb != b->n) || (nj >= 0 && nj != 1)) {
		struct pb_buf e = {0};
		for (int d = 0; d < b->n; d++)
			pb_buf_printf(&e, "%s%lld", d ? ", " : "",
				      (long long)b->extent[d]);
		pb_error_at(ctx, loc, "--sizes: kernel[%d] needs %d sizes in "
			    "block[...] and %d to %d in tile[...] (its band is "
			    "[%s], then %d inner loops)%s", k, b->n, b->n,
			    b->n + depth, e.data, depth,
			    nj >= 0 && nj != 1 ? ", jam[0|1] one" : "");
		pb_buf_free(&e);
		return -1;
	}
	c->mode = PB_TILE_TILE;
	for (int d = 0; d < b->n; d++) {
		c->tile[d] = nt >= 0 ? tile[d] : nb >= 0 ? block[d] : 1;
		c->block[d] = nb >= 0 ? block[d] : 1;
	}
	if (nt >= 0 && nb < 0) {
		/* threads from the innermost dimension out, at most those
		   of a naive block */
		int64_t left = PB_KERNEL_NAIVE_BLOCK;
		for (int d = b->n - 1; d >= 0; d--) {
			int64_t x = 1;
			while (x * 2 <= left && c->tile[d] % (x * 2) == 0)
				x *= 2;
			c->block[d] = x;
			left /= x;
		}
	}
	c->nk = nt > b->n ? nt - b->n : 0;
	for (int i = 0; i < c->nk; i++) {
		c->ktile[i] = tile[b->n + i];
		if (c->ktile[i] < 1) {
			pb_error_at(ctx, loc, "--sizes: tile size %lld of inner "
				    "loop %d must be positive",
				    (long long)c->ktile[i], i);
			return -1;
		}
	}
	c->jam = nj == 1 ? (int)jam[0] != 0 : -1;
	return 1;
}

/* Map nest "op" of kernel "func" (number "k"): returns PB_OK or PB_ERR. */
static int map_nest(struct pb_ctx *ctx, const struct pb_tile_opts *o,
		    const struct pb_target *t, struct pb_kernel_sizes *sz,
		    MlirOperation module, MlirOperation func, int k, int nest,
		    MlirOperation op, struct pb_buf *dump,
		    struct pb_tile_report *rep)
{
	struct pb_kernel_band b;
	struct pb_tile_choice c;
	const char *why, *kind;
	if (!pb_kernel_band_of(op, &b))
		return PB_OK;
	int g = sz ? given(ctx, sz, k, nest, &b, &c) : 0;
	if (g < 0)
		return PB_ERR;
	struct pb_kernel_attention att;
	int try = g == 0 && !o->no_tile && !o->no_mma;
	int is_att = try && pb_kernel_attention_of(op, &att, &why);
	int mma = is_att ? pb_kernel_attention_candidate(op, t, ctx->precision,
							 &kind, &why)
			 : try && pb_kernel_mma_candidate(op, t, ctx->precision,
							  &kind, &why);
	if (o->remarks && !mma && try &&
	    (is_att || pb_kernel_is_reduction_why(why)))
		pb_remark_at(ctx, mlirOperationGetLocation(op),
			     "not for tensor cores: %s", why);
	if (mma) {
		/* a contraction (or attention) for tensor cores: pb-mma
		   maps it */
		if (o->remarks)
			pb_remark_at(ctx, mlirOperationGetLocation(op),
				     "left to pb-mma: %s for tensor cores",
				     is_att ? "attention" : "a contraction");
		if (rep)
			pb_tile_report_add_mma(rep, func, k, nest, op,
					       ctx->precision);
		pb_ir_set_attr(op, PB_ATTR_MMA,
			       mlirStringAttrGet(
				       mlirOperationGetContext(op),
				       mlirStringRefCreateFromCString(kind)));
		return PB_OK;
	}
	if (!o->no_tile && pb_tile_promote(ctx, module, func, &b))
		return PB_ERR;
	if (g > 0 && pb_tile_complete(ctx, t, &b, &c))
		return PB_ERR;
	if (g > 0 && c.mode == PB_TILE_NONE)
		pb_tile_predict(t, &b, &c);
	if (g == 0) {
		unsigned allow = 1u << PB_TILE_NONE;
		if (!o->no_tile)
			allow |= 1u << PB_TILE_TILE | 1u << PB_TILE_REDUCE;
		pb_tile_choose(t, &b, allow, &c);
	}
	if (o->remarks) {
		struct pb_buf s = {0};
		char lds[64] = "";
		/* why it won: the operands its thread tile's points share */
		if (c.lds_per_fma > 0)
			snprintf(lds, sizeof(lds),
				 ", %.3g shared loads per FMA", c.lds_per_fma);
		pb_tile_sizes_print(&s, k, nest, &c);
		pb_remark_at(ctx, mlirOperationGetLocation(op),
			     "mapped as { %s }: %lld blocks of %lld threads, "
			     "occupancy %.2f, %.3g waves, predicted %.3g us "
			     "(%s-bound%s)",
			     s.data, (long long)c.grid,
			     (long long)pb_tile_threads(&c), c.occupancy,
			     c.waves, c.predicted_s * 1e6,
			     c.compute_s >= c.memory_s ? "issue" : "memory",
			     lds);
		pb_buf_free(&s);
	}
	pb_tile_sizes_print(dump, k, nest, &c);
	if (rep)
		pb_tile_report_add(rep, func, k, nest, &b, &c);
	switch (c.mode) {
	case PB_TILE_TILE:
		return pb_tile_apply(ctx, &b, &c);
	case PB_TILE_REDUCE:
		return pb_tile_reduce_apply(ctx, &b, c.threads);
	default:
		return PB_OK;
	}
}

/* Map the nests of kernel "func" (number "k"). */
static int map_kernel(struct pb_ctx *ctx, const struct pb_tile_opts *o,
		      const struct pb_target *t, struct pb_kernel_sizes *sz,
		      MlirOperation module, MlirOperation func, int k,
		      struct pb_buf *dump, struct pb_tile_report *rep)
{
	struct pb_ir_ops ops = {0};
	int rc = PB_OK, nest = 0;
	MlirBlock body = pb_ir_entry_block(func);
	if (mlirBlockIsNull(body)) {
		pb_error_at(ctx, mlirOperationGetLocation(func),
			    "kernel function has no body");
		return PB_ERR;
	}
	pb_ir_block_ops(body, &ops);
	for (int i = 0; i < ops.n && rc == PB_OK; i++) {
		struct pb_kernel_band b;
		if (!pb_kernel_band_of(ops.v[i], &b))
			continue;
		rc = map_nest(ctx, o, t, sz, module, func, k, nest++, ops.v[i],
			      dump, rep);
	}
	pb_ir_ops_free(&ops);
	return rc;
}

int pb_tile_map_marked(struct pb_ctx *ctx, MlirModule m)
{
	static const struct pb_tile_opts defaults = {.no_mma = 1};
	const struct pb_target *t = NULL;
	struct pb_ir_ops funcs = {0}, nests = {0};
	struct pb_buf dump = {0};
	int rc = PB_OK;
	pb_kernel_mma_marked(m, &funcs, &nests);
	for (int i = 0; i < nests.n && rc == PB_OK; i++) {
		mlirOperationRemoveAttributeByName(
			nests.v[i], mlirStringRefCreateFromCString(PB_ATTR_MMA));
		if (!t && !(t = pb_target_of(ctx)))
			rc = PB_ERR;
		else
			rc = map_nest(ctx, &defaults, t, NULL,
				      mlirModuleGetOperation(m), funcs.v[i], -1,
				      i, nests.v[i], &dump, NULL);
	}
	pb_ir_ops_free(&funcs);
	pb_ir_ops_free(&nests);
	pb_buf_free(&dump);
	return rc;
}

int pb_tile_run(struct pb_ctx *ctx, MlirModule m, const struct pb_tile_opts *o)
{
	static const struct pb_tile_opts defaults;
	const struct pb_target *t;
	struct pb_kernel_sizes *sz = NULL;
	struct pb_tile_report *rep = NULL;
	struct pb_ir_ops funcs = {0};
	struct pb_buf dump = {0};
	int rc = PB_OK, k = 0;
	if (!o)
		o = &defaults;
	if (pb_ir_get_stage(m) >= PB_STAGE_TILE)
		return PB_OK;
	if (!(t = pb_target_of(ctx)))
		return PB_ERR;
	if (o->sizes && !(sz = pb_kernel_sizes_parse(ctx, o->sizes)))
		return PB_ERR;
	if (o->report)
		rep = pb_tile_report_new(t);
	pb_ir_block_ops(mlirModuleGetBody(m), &funcs);
	for (int i = 0; i < funcs.n && rc == PB_OK; i++) {
		MlirOperation f = funcs.v[i];
		if (!pb_ir_op_is(f, "func.func") ||
		    !pb_contract_is_kernel(f))
			continue;
		rc = map_kernel(ctx, o, t, sz, mlirModuleGetOperation(m), f,
				k++, &dump, rep);
	}
	if (rc == PB_OK && o->dump_sizes)
		fprintf(stderr, "{ %s }\n", dump.data ? dump.data : "");
	if (rc == PB_OK && rep)
		rc = pb_tile_report_write(ctx, rep, o->report);
	pb_ir_ops_free(&funcs);
	pb_buf_free(&dump);
	pb_kernel_sizes_free(sz);
	pb_tile_report_free(rep);
	if (rc == PB_OK)
		pb_ir_set_stage(m, PB_STAGE_TILE);
	return rc;
}
