/* pb-mma: contractions onto tensor cores (docs/pb-mma.md).
 *
 * pb-tile leaves each nest that pb_mma_candidate accepts unmapped and
 * marked pb.mma. Here each such nest is matched again (match.c), its
 * block and warp tiles chosen, and the nest rewritten into warp tiles of
 * vector.contract (rewrite.c); with --no-mma it is tiled for CUDA cores
 * by pb-tile's own mapping instead. */
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

#include "ir/contract.h"
#include "mma/internal.h"
#include "tile/tile.h"

int pb_mma_candidate(MlirOperation nest, const struct pb_target *t,
		     const char **why)
{
	struct pb_mma_contraction c;
	struct pb_mma_tiles s;
	return pb_mma_match(nest, &c, why) && pb_mma_choose(t, &c, &s, why);
}

static const char *elt_name(MlirType t)
{
	return mlirTypeIsAF16(t) ? "f16" : "bf16";
}

/* Map nest "op" of kernel "func", marked pb.mma by pb-tile. */
static int map_nest(struct pb_ctx *ctx, const struct pb_mma_opts *o,
		    const struct pb_target *t, MlirOperation module,
		    MlirOperation func, MlirOperation op)
{
	struct pb_mma_contraction c;
	struct pb_mma_tiles s;
	const char *why = "--no-mma";
	MlirLocation loc = mlirOperationGetLocation(op);
	mlirOperationRemoveAttributeByName(
		op, mlirStringRefCreateFromCString(PB_ATTR_MMA));
	if (!o->no_mma && pb_mma_match(op, &c, &why) &&
	    pb_mma_choose(t, &c, &s, &why)) {
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
	return pb_tile_map_nest(ctx, module, func, op);
}

int pb_mma_run(struct pb_ctx *ctx, MlirModule m, const struct pb_mma_opts *o)
{
	static const struct pb_mma_opts defaults;
	const struct pb_target *t;
	struct pb_ir_ops funcs = {0};
	int rc = PB_OK;
	if (!o)
		o = &defaults;
	if (pb_ir_get_stage(m) >= PB_STAGE_MMA)
		return PB_OK;
	if (!(t = pb_target_of(ctx)))
		return PB_ERR;
	pb_ir_block_ops(mlirModuleGetBody(m), &funcs);
	for (int i = 0; i < funcs.n && rc == PB_OK; i++) {
		struct pb_ir_ops ops = {0};
		if (!pb_ir_op_is(funcs.v[i], "func.func") ||
		    !pb_contract_is_kernel(funcs.v[i]))
			continue;
		pb_ir_block_ops(pb_ir_entry_block(funcs.v[i]), &ops);
		for (int j = 0; j < ops.n && rc == PB_OK; j++)
			if (!mlirAttributeIsNull(pb_ir_attr(ops.v[j],
							    PB_ATTR_MMA)))
				rc = map_nest(ctx, o, t,
					      mlirModuleGetOperation(m),
					      funcs.v[i], ops.v[j]);
		pb_ir_ops_free(&ops);
	}
	pb_ir_ops_free(&funcs);
	if (rc == PB_OK)
		pb_ir_advance_stage(m, PB_STAGE_MMA);
	return rc;
}
