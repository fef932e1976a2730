/* The --report of pb-tile: one JSON object per mapped nest with the
 * chosen sizes and the cost model's view of them (docs/pb-tile.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mlir-c/BuiltinAttributes.h"

#include "tile/internal.h"

struct pb_tile_report {
	const struct pb_target *t;
	json_t *root, *kernels;
};

struct pb_tile_report *pb_tile_report_new(const struct pb_target *t)
{
	struct pb_tile_report *r = malloc(sizeof(*r));
	if (!r)
		abort();
	r->t = t;
	r->root = json_object();
	r->kernels = json_array();
	json_object_set_new(r->root, "arch", json_string(t->arch));
	json_object_set_new(r->root, "target", json_string(t->name));
	json_object_set(r->root, "kernels", r->kernels);
	return r;
}

/* A JSON array of the "n" values "v". */
static json_t *ints(const int64_t *v, int n)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

void pb_tile_report_add(struct pb_tile_report *r, MlirOperation func, int k,
			int nest, const struct pb_kernel_band *b,
			const struct pb_tile_choice *c)
{
	static const char *modes[] = {"none", "tile", "reduce"};
	json_t *o = json_object();
	MlirAttribute name = pb_ir_attr(func, "sym_name");
	MlirStringRef s = mlirStringAttrGetValue(name);
	json_object_set_new(o, "kernel", json_stringn(s.data, s.length));
	json_object_set_new(o, "index", json_integer(k));
	json_object_set_new(o, "nest", json_integer(nest));
	json_object_set_new(o, "mapping", json_string(modes[c->mode]));
	json_object_set_new(o, "band", ints(b->extent, b->n));
	if (c->mode == PB_TILE_TILE) {
		json_object_set_new(o, "tile", ints(c->tile, c->n));
		json_object_set_new(o, "block", ints(c->block, c->n));
		json_object_set_new(o, "lanes", ints(c->lanes, c->n));
		json_object_set_new(o, "jam", json_boolean(c->jam));
		int64_t con[PB_TILE_MAXD];
		for (int d = 0; d < c->n; d++)
			con[d] = (c->contig >> d) & 1;
		json_object_set_new(o, "contig", ints(con, c->n));
	}
	json_object_set_new(o, "grid", json_integer(c->grid));
	/* the fields pb-smem's report and pb-prof --static share
	 * (lib/kernel/summary.c): the model's registers */
	struct pb_kernel_summary sum;
	pb_kernel_summary_init(&sum);
	sum.grid = c->grid;
	sum.res.threads = pb_tile_threads(c);
	sum.res.regs = c->regs;
	sum.res.smem = c->smem;
	pb_kernel_summary_occupancy(r->t, &sum);
	sum.predicted_s = c->predicted_s;
	sum.flops = (double)c->flops;
	sum.bytes = (double)c->global_bytes;
	pb_kernel_summary_json(r->t, &sum, o);
	json_object_set_new(o, "global_bytes", json_integer(c->global_bytes));
	json_object_set_new(o, "flops", json_integer(c->flops));
	json_object_set_new(o, "compute_s", json_real(c->compute_s));
	json_object_set_new(o, "memory_s", json_real(c->memory_s));
	if (c->lds_per_fma > 0)
		json_object_set_new(o, "lds_per_fma", json_real(c->lds_per_fma));
	json_object_set_new(o, "intensity",
			    json_real(c->global_bytes
					      ? (double)c->flops / c->global_bytes
					      : 0));
	json_array_append_new(r->kernels, o);
}

void pb_tile_report_add_mma(struct pb_tile_report *r, MlirOperation func,
			    int k, int nest, MlirOperation op,
			    enum pb_precision p)
{
	struct pb_kernel_contraction c;
	struct pb_kernel_mma_tiles s;
	struct pb_kernel_attention a;
	struct pb_kernel_attention_tiles as;
	struct pb_kernel_summary sum;
	const struct pb_kernel_band *band;
	const char *why;
	int64_t tiles[4];
	int att = pb_kernel_attention_of(op, &a, &why);
	if (att) {
		if (!pb_kernel_attention_operands(&a, p, &why) ||
		    !pb_kernel_attention_tiles(r->t, &a, &as, &why))
			return;
		pb_kernel_attention_predict(r->t, &a, &as, &sum);
		band = &a.b;
		tiles[0] = as.bm;
		tiles[1] = as.bn;
		tiles[2] = as.wm;
		tiles[3] = as.bn;
	} else {
		if (!pb_kernel_contraction_of(op, &c, &why) ||
		    !pb_kernel_mma_operands(&c, p, &why) ||
		    !pb_kernel_mma_tiles(r->t, &c, &s, &why))
			return;
		pb_kernel_mma_predict(r->t, &c, &s, &sum);
		band = &c.b;
		tiles[0] = s.bm;
		tiles[1] = s.bn;
		tiles[2] = s.wm;
		tiles[3] = s.wn;
	}
	json_t *o = json_object();
	MlirStringRef n = mlirStringAttrGetValue(pb_ir_attr(func, "sym_name"));
	json_object_set_new(o, "kernel", json_stringn(n.data, n.length));
	json_object_set_new(o, "index", json_integer(k));
	json_object_set_new(o, "nest", json_integer(nest));
	json_object_set_new(o, "mapping", json_string(att ? "attention"
							   : "mma"));
	json_object_set_new(o, "band", ints(band->extent, band->n));
	json_object_set_new(o, "mma", ints(tiles, 4));
	json_object_set_new(o, "grid", json_integer(sum.grid));
	pb_kernel_summary_json(r->t, &sum, o);
	json_object_set_new(o, "global_bytes", json_integer((int64_t)sum.bytes));
	json_object_set_new(o, "flops", json_integer((int64_t)sum.flops));
	json_object_set_new(o, "intensity",
			    json_real(sum.bytes > 0 ? sum.flops / sum.bytes : 0));
	json_array_append_new(r->kernels, o);
}

int pb_tile_report_write(struct pb_ctx *ctx, struct pb_tile_report *r,
			 const char *path)
{
	int rc = pb_write_json(r->root, path,
			       JSON_INDENT(2) | JSON_REAL_PRECISION(6));
	if (rc < 0)
		pb_error(ctx, "--report: cannot write '%s': %s", path,
			 strerror(errno));
	return rc < 0 ? PB_ERR : PB_OK;
}

void pb_tile_report_free(struct pb_tile_report *r)
{
	if (!r)
		return;
	json_decref(r->kernels);
	json_decref(r->root);
	free(r);
}
