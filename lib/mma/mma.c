/* pb-mma: contractions onto tensor cores (docs/pb-mma.md).
 *
 * pb-tile leaves each nest that pb_mma_candidate accepts unmapped and
 * marked pb.mma. Here each such nest is matched again (match.c), its
 * block and warp tiles chosen, and the nest rewritten into warp tiles of
 * vector.contract (rewrite.c). With --no-mma (or a nest that no longer
 * matches) the mark stays, and the stage driver (lib/pipeline) has pb-tile
 * map the nest for CUDA cores. */
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "ir/contract.h"
#include "mma/internal.h"

static const char *elt_name(MlirType t)
{
	return mlirTypeIsAF16(t) ? "f16" : "bf16";
}

/* Map nest "op" of kernel "func", marked pb.mma by pb-tile. */
static int map_nest(struct pb_ctx *ctx, const struct pb_mma_opts *o,
		    const struct pb_target *t, MlirOperation op)
{
	struct pb_kernel_contraction c;
	struct pb_kernel_mma_tiles s;
	const char *why = "--no-mma";
	MlirLocation loc = mlirOperationGetLocation(op);
	if (!o->no_mma && pb_kernel_contraction_of(op, &c, &why) &&
	    pb_kernel_mma_tiles(t, &c, &s, &why)) {
		if (o->remarks)
			pb_remark_at(ctx, loc, "on tensor cores: mma.sync "
				     "m16n8k16 %s -> f32, block tile %lldx%lld, "
				     "warp tile %lldx%lld (%lld warps)",
				     elt_name(c.elt), (long long)s.bm,
				     (long long)s.bn, (long long)s.wm,
				     (long long)s.wn,
				     (long long)(s.bm / s.wm * (s.bn / s.wn)));
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
	int rc = PB_OK;
	if (!o)
		o = &defaults;
	if (pb_ir_get_stage(m) >= PB_STAGE_MMA)
		return PB_OK;
	if (!(t = pb_target_of(ctx)))
		return PB_ERR;
	pb_kernel_mma_marked(m, &funcs, &nests);
	for (int i = 0; i < nests.n && rc == PB_OK; i++)
		rc = map_nest(ctx, o, t, nests.v[i]);
	pb_ir_ops_free(&nests);
	pb_ir_ops_free(&funcs);
	if (rc == PB_OK)
		pb_ir_advance_stage(m, PB_STAGE_MMA);
	return rc;
}
