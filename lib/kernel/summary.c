/* The fields of a kernel that pb-tile's --report, pb-smem's --report and
 * pb-prof --static --json share (docs/kernel-model.md, "Reports"): its
 * block's resources, the occupancy they allow, the predicted time and the
 * roof that bounds it, computed and written here once. */
#include <jansson.h>

#include "kernel/kernel.h"

void pb_kernel_summary_init(struct pb_kernel_summary *s)
{
	s->grid = -1;
	s->res.threads = -1;
	s->res.regs = -1;
	s->res.smem = -1;
	s->has_occ = 0;
	s->predicted_s = -1;
	s->flops = -1;
	s->bytes = -1;
	s->tc = 0;
}

void pb_kernel_summary_occupancy(const struct pb_target *t,
				 struct pb_kernel_summary *s)
{
	struct pb_kernel_resources r = s->res;
	if (r.threads < 1 || s->grid < 0)
		return;
	if (r.regs < 0)
		r.regs = 0;
	if (r.smem < 0)
		r.smem = 0;
	pb_kernel_occupancy(t, &r, s->grid, &s->occ);
	s->has_occ = 1;
}

const char *pb_kernel_bound(const struct pb_target *t, double flops,
			    double bytes, double predicted_s, int tc)
{
	double peak = tc ? t->tc_fp16_flops : t->fp32_flops;
	double c = peak > 0 ? flops / peak : 0;
	double m = t->dram_bytes_per_s > 0 ? bytes / t->dram_bytes_per_s : 0;
	double r = c > m ? c : m;
	if (t->launch_s > r && predicted_s <= 2 * t->launch_s)
		return "launch";
	if (predicted_s > 2 * (r > t->launch_s ? r : t->launch_s))
		return "latency";
	return c >= m ? "compute" : "memory";
}

const char *pb_kernel_summary_bound(const struct pb_target *t,
				    const struct pb_kernel_summary *s)
{
	if (s->predicted_s < 0 || s->flops < 0 || s->bytes < 0)
		return NULL;
	return pb_kernel_bound(t, s->flops, s->bytes, s->predicted_s, s->tc);
}

void pb_kernel_summary_json(const struct pb_target *t,
			    const struct pb_kernel_summary *s, json_t *o)
{
	if (s->res.threads >= 0)
		json_object_set_new(o, "threads", json_integer(s->res.threads));
	if (s->res.regs >= 0)
		json_object_set_new(o, "registers", json_integer(s->res.regs));
	if (s->res.smem >= 0)
		json_object_set_new(o, "shared_bytes", json_integer(s->res.smem));
	if (s->has_occ) {
		json_object_set_new(o, "blocks_per_sm",
				    json_integer(s->occ.blocks_per_sm));
		json_object_set_new(o, "occupancy", json_real(s->occ.occupancy));
		json_object_set_new(o, "waves", json_real(s->occ.waves));
	}
	if (s->predicted_s >= 0)
		json_object_set_new(o, "predicted_s", json_real(s->predicted_s));
	const char *b = pb_kernel_summary_bound(t, s);
	if (b)
		json_object_set_new(o, "bound", json_string(b));
}
