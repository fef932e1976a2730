/* The rounds of pb-smem's cooperative copies (internal.h): the block's
 * threads copy a tile of units numbered row-major, thread t the units
 * t + e * T of its rounds e (T threads). Each unit's coordinates are the
 * digits of its number in the tile's extents. When T is a multiple of
 * the units inside some dimension j and divides the units inside
 * dimension j - 1 (or j is the outermost), adding e * T to t carries
 * between no two digits: every coordinate of round e is the thread's own
 * plus a constant of the round. The thread's digits (the divisions) are
 * then taken once, outside the rounds and the k-tile loop, and a round
 * adds constants only. */
#include <stdio.h>

#include "smem/internal.h"

void pb_smem_digits_init(struct pb_smem_digits *g, int n, const int64_t *ext,
			 const int64_t *scale, int64_t per, int64_t rounds)
{
	g->n = n;
	g->per = per;
	g->rounds = rounds;
	for (int d = 0; d < n; d++) {
		g->ext[d] = ext[d];
		g->scale[d] = scale ? scale[d] : 1;
	}
	g->div[n - 1] = 1;
	for (int d = n - 2; d >= 0; d--)
		g->div[d] = g->div[d + 1] * ext[d + 1];
	int64_t units = 1;
	for (int d = 0; d < n; d++)
		units *= ext[d];
	g->split = 0;
	for (int j = 0; j < n && rounds > 1; j++)
		if (per % g->div[j] == 0 && (j == 0 || g->div[j - 1] % per == 0))
			g->split = 1;
	g->lin = !g->split || units % per;
}

/* Append to "t" digit "d" of "g" of "x" in 0 .. "max" (a map dimension
 * "x", or x = e * per with "e" the round dimension when "round"), scaled,
 * without the division or the modulo its range makes useless. */
static void digit_text(struct pb_buf *t, const struct pb_smem_digits *g,
		       int d, const char *x, int64_t max, int round)
{
	int64_t dv = g->div[d], top = max / dv;
	int wrap = d && top >= g->ext[d];
	if (max < dv) {
		pb_buf_puts(t, "0");
		return;
	}
	pb_buf_puts(t, wrap ? "((" : "(");
	if (round && g->per % dv == 0)
		pb_buf_printf(t, "%s * %lld", x, (long long)(g->per / dv));
	else if (round)
		pb_buf_printf(t, "%s floordiv %lld", x,
			      (long long)(dv / g->per));
	else if (dv > 1)
		pb_buf_printf(t, "%s floordiv %lld", x, (long long)dv);
	else
		pb_buf_puts(t, x);
	if (wrap)
		pb_buf_printf(t, ") mod %lld", (long long)g->ext[d]);
	pb_buf_printf(t, ") * %lld", (long long)g->scale[d]);
}

void pb_smem_digits_thread_text(struct pb_buf *t, int ind,
				const struct pb_smem_digits *g,
				const char *const *name, const char *tid)
{
	for (int d = 0; g->split && d < g->n; d++) {
		pb_buf_printf(t, "%*s%%%s_t = affine.apply affine_map<(i) -> (",
			      ind, "", name[d]);
		digit_text(t, g, d, "i", g->per - 1, 0);
		pb_buf_printf(t, ")>(%s)\n", tid);
	}
}

void pb_smem_digits_round_text(struct pb_buf *t, int ind,
			       const struct pb_smem_digits *g,
			       const char *const *name, const char *round,
			       const char *lin)
{
	for (int d = 0; d < g->n; d++) {
		pb_buf_printf(t, "%*s%%%s = affine.apply affine_map<", ind, "",
			      name[d]);
		if (g->split) {
			pb_buf_puts(t, "(b, e) -> (b + ");
			digit_text(t, g, d, "e", (g->rounds - 1) * g->per, 1);
			pb_buf_printf(t, ")>(%%%s_t, %s)\n", name[d], round);
		} else {
			pb_buf_puts(t, "(i) -> (");
			digit_text(t, g, d, "i", g->rounds * g->per - 1, 0);
			pb_buf_printf(t, ")>(%s)\n", lin);
		}
	}
}

void pb_smem_rounds_text(struct pb_buf *t, int ind, int64_t nw, int64_t nq,
			 const struct pb_smem_digits *g,
			 const char *const *name)
{
	pb_buf_printf(t, "%*saffine.for %%ws = 0 to %lld {\n"
		      "%*saffine.parallel (%%l) = (0) to (32) {\n",
		      ind, "", (long long)nw, ind, "");
	if (g->split) {
		pb_buf_printf(t, "%*s%%tid = affine.apply affine_map<(w, l) -> "
			      "(w * 32 + l)>(%%ws, %%l)\n", ind + 4, "");
		pb_smem_digits_thread_text(t, ind + 4, g, name, "%tid");
	}
	pb_buf_printf(t, "%*saffine.for %%q = 0 to %lld {\n", ind + 2, "",
		      (long long)nq);
	if (g->lin)
		pb_buf_printf(t, "%*s%%ci = affine.apply affine_map<(q, w, l) -> "
			      "((q * %lld + w) * 32 + l)>(%%q, %%ws, %%l)\n",
			      ind + 4, "", (long long)nw);
	pb_smem_digits_round_text(t, ind + 4, g, name, "%q", "%ci");
}

void pb_smem_slot_bound_text(struct pb_buf *t, int64_t trip, int64_t kt,
			     int stages)
{
	if ((trip / kt) % stages == 0)
		pb_buf_printf(t, "%d", stages);
	else
		pb_buf_printf(t, "min affine_map<(d0) -> (%d, (%lld - d0) "
			      "floordiv %lld)>(%%k0)", stages, (long long)trip,
			      (long long)kt);
}
