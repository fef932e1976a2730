/* --sizes of pb-tile and pb-mma: per-kernel sizes as an isl union map,
 * the form PPCG reads (ppcg --sizes):
 *
 *   { kernel[3] -> tile[64, 128]; kernel[3] -> block[16, 32];
 *     kernel[5] -> mma[128, 128, 64, 64] }
 *
 * The domain names a kernel by its number (k3_... is kernel[3]; a nest
 * but the first of a kernel is kernel[3, n]); a parametric or ranged
 * domain ("kernel[i] -> block[8, 32] : i >= 2") gives several kernels the
 * same sizes. "kernel_3 -> ..." (a tuple without brackets) is accepted as
 * kernel[3]. Each stage reads the names it knows (pb-tile: tile, block,
 * reduce, jam, none, linear; pb-mma: mma). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <isl/ctx.h>
#include <isl/point.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/val.h>

#include "kernel/kernel.h"

struct pb_kernel_sizes {
	isl_union_map *map;
};

/* "text" with every "kernel_<N>" not followed by "[" written as
 * "kernel[<N>]" (malloc'ed). */
static char *normalise(const char *text)
{
	size_t n = strlen(text);
	char *out = malloc(2 * n + 1), *o = out;
	if (!out)
		abort();
	for (const char *p = text; *p;) {
		const char *q = p + 7, *e;
		int word = p == text || !(isalnum((unsigned char)p[-1]) ||
					  p[-1] == '_');
		if (word && !strncmp(p, "kernel_", 7) &&
		    isdigit((unsigned char)*q)) {
			for (e = q; isdigit((unsigned char)*e); e++)
				;
			const char *f = e;
			while (*f == ' ' || *f == '\t')
				f++;
			if (*f != '[' && !isalnum((unsigned char)*e) &&
			    *e != '_') {
				o += sprintf(o, "kernel[%.*s]", (int)(e - q), q);
				p = e;
				continue;
			}
		}
		*o++ = *p++;
	}
	*o = 0;
	return out;
}

struct pb_kernel_sizes *pb_kernel_sizes_parse(struct pb_ctx *ctx, const char *text)
{
	char *norm = normalise(text);
	isl_union_map *m = isl_union_map_read_from_str(ctx->isl, norm);
	free(norm);
	if (!m) {
		pb_error(ctx, "--sizes: cannot parse '%s' as an isl union map "
			      "such as '{ kernel[0] -> tile[32, 32]; kernel[0] -> "
			      "block[8, 32] }'", text);
		return NULL;
	}
	struct pb_kernel_sizes *s = malloc(sizeof(*s));
	if (!s)
		abort();
	s->map = m;
	return s;
}

void pb_kernel_sizes_free(struct pb_kernel_sizes *s)
{
	if (!s)
		return;
	isl_union_map_free(s->map);
	free(s);
}

static int get_in(struct pb_kernel_sizes *s, const char *text, const char *what,
		  int64_t *v);

struct get {
	const char *what;
	int n;	     /* number of values, -1 when absent, -2 ambiguous */
	int64_t *v;
};

/* isl_union_set_foreach_set callback: the set "set" named "g->what". */
static isl_stat get_one(__isl_take isl_set *set, void *user)
{
	struct get *g = user;
	const char *name = isl_set_get_tuple_name(set);
	if (!name || strcmp(name, g->what)) {
		isl_set_free(set);
		return isl_stat_ok;
	}
	isl_bool single = isl_set_is_singleton(set);
	int dim = isl_set_dim(set, isl_dim_set);
	if (g->n != -1 || single != isl_bool_true || dim > PB_KERNEL_MAXD) {
		g->n = -2;
		isl_set_free(set);
		return isl_stat_ok;
	}
	isl_point *pt = isl_set_sample_point(set);
	for (int i = 0; i < dim; i++) {
		isl_val *v = isl_point_get_coordinate_val(pt, isl_dim_set, i);
		g->v[i] = isl_val_get_num_si(v);
		isl_val_free(v);
	}
	isl_point_free(pt);
	g->n = dim;
	return isl_stat_ok;
}

int pb_kernel_sizes_get(struct pb_kernel_sizes *s, int k, int nest,
		      const char *what, int64_t *v)
{
	if (!s)
		return -1;
	isl_ctx *ctx = isl_union_map_get_ctx(s->map);
	char text[64];
	if (nest > 0) {
		snprintf(text, sizeof(text), "{ kernel[%d, %d] }", k, nest);
		isl_union_set *dom = isl_union_set_read_from_str(ctx, text);
		isl_union_set *img = isl_union_set_apply(
			dom, isl_union_map_copy(s->map));
		int empty = isl_union_set_is_empty(img) == isl_bool_true;
		isl_union_set_free(img);
		if (!empty)
			return get_in(s, text, what, v);
	}
	snprintf(text, sizeof(text), "{ kernel[%d] }", k);
	return get_in(s, text, what, v);
}

/* The sizes named "what" that the map of "s" gives the domain "text". */
static int get_in(struct pb_kernel_sizes *s, const char *text, const char *what,
		  int64_t *v)
{
	isl_ctx *ctx = isl_union_map_get_ctx(s->map);
	isl_union_set *dom = isl_union_set_read_from_str(ctx, text);
	isl_union_set *img = isl_union_set_apply(
		dom, isl_union_map_copy(s->map));
	struct get g = {what, -1, v};
	isl_union_set_foreach_set(img, get_one, &g);
	isl_union_set_free(img);
	return g.n;
}

