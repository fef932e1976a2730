/* --dump-sizes: pb-tile's choice in --sizes form (lib/kernel/sizes.c
 * reads it). */
#include <string.h>

#include "tile/internal.h"

/* Append "kernel[k] -> name[v0, ...]" (kernel[k, nest] for a nest but
 * the first) for the "n" values "v". */
static void print_one(struct pb_buf *out, int k, int nest, const char *name,
		      const int64_t *v, int n)
{
	if (out->len)
		pb_buf_puts(out, "; ");
	if (nest > 0)
		pb_buf_printf(out, "kernel[%d, %d] -> %s[", k, nest, name);
	else
		pb_buf_printf(out, "kernel[%d] -> %s[", k, name);
	for (int i = 0; i < n; i++)
		pb_buf_printf(out, "%s%lld", i ? ", " : "", (long long)v[i]);
	pb_buf_puts(out, "]");
}

void pb_tile_sizes_print(struct pb_buf *out, int k, int nest,
			 const struct pb_tile_choice *c)
{
	int64_t one = 0;
	switch (c->mode) {
	case PB_TILE_TILE: {
		int64_t t[2 * PB_KERNEL_MAXD];
		if (c->linear) {
			t[0] = c->tile[0];
			t[1] = c->block[0];
			print_one(out, k, nest, "linear", t, 2);
			one = c->jam;
			print_one(out, k, nest, "jam", &one, 1);
			break;
		}
		memcpy(t, c->tile, c->n * sizeof(*t));
		memcpy(t + c->n, c->ktile, c->nk * sizeof(*t));
		print_one(out, k, nest, "tile", t, c->n + c->nk);
		print_one(out, k, nest, "block", c->block, c->n);
		one = c->jam;
		print_one(out, k, nest, "jam", &one, 1);
		if (c->contig) {
			for (int d = 0; d < c->n; d++)
				t[d] = (c->contig >> d) & 1;
			print_one(out, k, nest, "contig", t, c->n);
		}
		if (c->skt > 0) {
			t[0] = c->skt;
			t[1] = c->sst;
			print_one(out, k, nest, "smem", t, 2);
		} else if (c->skt < 0) {
			print_one(out, k, nest, "smem", t, 0);
		}
		break;
	}
	case PB_TILE_REDUCE:
		one = c->threads;
		print_one(out, k, nest, "reduce", &one, 1);
		break;
	case PB_TILE_NONE:
		print_one(out, k, nest, "none", &one, 0);
		break;
	}
}
