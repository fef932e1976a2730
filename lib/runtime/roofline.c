/* pb-prof --roofline: the kernels of a profile against the roofs of the
 * target as an SVG picture (docs/pb-prof.md, "--roofline"). No MLIR.
 *
 *   GFLOP/s (log)
 *     |            ____________________ tensor cores fp16
 *     |           /   ________________ tensor cores tf32
 *     |      L2  /   /
 *     |         / __/_________________ CUDA cores fp32
 *     |        / /  o  <- a kernel: area = its share of the time
 *     |  DRAM / /
 *     +--------------------------------- flops per byte (log)
 *
 * x is a kernel's flops over the bytes of its buffers (pb-prof's "bytes":
 * each buffer moved once), y its flops over its time. A kernel on a
 * diagonal runs at that bandwidth, one under a flat roof at that share of
 * the peak; the gap to the roof above it is what there is to gain. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "target/target.h"

/* The plot area of the picture, in pixels. */
enum { W = 1060, H = 540, X0 = 80, X1 = 620, Y0 = 50, Y1 = 470, LX = 780 };

/* The fill colours of the kernels (largest share first), opaque so that
 * a test can find them in a rendering. */
static const char *const colors[] = {"#d62728", "#1f77b4", "#2ca02c",
				     "#9467bd", "#ff7f0e", "#8c564b",
				     "#e377c2", "#17becf"};

/* The axes: decades [lx0, lx1] of intensity, [ly0, ly1] of GFLOP/s. */
struct axes {
	double lx0, lx1, ly0, ly1;
};

static double px(const struct axes *a, double x)
{
	return X0 + (log10(x) - a->lx0) / (a->lx1 - a->lx0) * (X1 - X0);
}

static double py(const struct axes *a, double y)
{
	return Y1 - (log10(y) - a->ly0) / (a->ly1 - a->ly0) * (Y1 - Y0);
}

/* "s" escaped for XML text into "b". */
static void text(struct pb_buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '&')
			pb_buf_puts(b, "&amp;");
		else if (*s == '<')
			pb_buf_puts(b, "&lt;");
		else if (*s == '>')
			pb_buf_puts(b, "&gt;");
		else
			pb_buf_append(b, s, 1);
	}
}

/* Can kernel "k" be placed: known positive flops, bytes and time? */
static int placed(const struct pb_prof_kernel *k)
{
	return k->flops > 0 && k->bytes > 0 && k->median > 0;
}

/* A flat compute roof of "peak" flops/s named "name" from its ridge with
 * the DRAM diagonal to the right edge. */
static void compute_roof(struct pb_buf *b, const struct axes *a,
			 const struct pb_target *t, double peak,
			 const char *name, const char *color)
{
	if (peak <= 0)
		return;
	double g = peak / 1e9, ridge = peak / t->dram_bytes_per_s;
	double xl = pow(10, a->lx0), xs = ridge > xl ? ridge : xl;
	pb_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
		      "stroke=\"%s\" stroke-width=\"2\"/>\n", px(a, xs),
		      py(a, g), X1, py(a, g), color);
	pb_buf_printf(b, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" "
		      "fill=\"%s\">%s %.3g TFLOP/s</text>\n", X1 + 4,
		      py(a, g) + 4, color, name, g / 1e3);
}

/* A diagonal bandwidth roof of "bw" bytes/s up to "top" GFLOP/s. */
static void bandwidth_roof(struct pb_buf *b, const struct axes *a, double bw,
			   double top, const char *name, const char *dash)
{
	double xl = pow(10, a->lx0), yl = xl * bw / 1e9;
	double yb = pow(10, a->ly0);
	if (yl < yb) { /* start where the diagonal enters the plot */
		xl = yb * 1e9 / bw;
		yl = yb;
	}
	double xr = top * 1e9 / bw, xmax = pow(10, a->lx1);
	if (xr > xmax) /* leave at the right edge */
		xr = xmax;
	top = xr * bw / 1e9;
	pb_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		      "y2=\"%.1f\" stroke=\"#555555\" stroke-width=\"2\"%s/>\n",
		      px(a, xl), py(a, yl), px(a, xr), py(a, top), dash);
	double xm = sqrt(xl * xr) / 3, ym = xm * bw / 1e9;
	if (xm < xl)
		xm = xl, ym = yl;
	pb_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
		      "fill=\"#555555\" transform=\"rotate(-30 %.1f %.1f)\">"
		      "%s %.3g TB/s</text>\n", px(a, xm) - 10, py(a, ym) - 6,
		      px(a, xm) - 10, py(a, ym) - 6, name, bw / 1e12);
}

/* The axes that hold the roofs and every placed kernel of "p". */
static void fit_axes(const struct pb_prof *p, const struct pb_target *t,
		     struct axes *a)
{
	double xmin = 0.1, xmax = 1000, ymin = 10;
	double ymax = (t->tc_fp16_flops > t->fp32_flops ? t->tc_fp16_flops
							: t->fp32_flops) / 1e9;
	for (int i = 0; i < p->n; i++) {
		const struct pb_prof_kernel *k = &p->k[i];
		if (!placed(k))
			continue;
		double x = k->flops / k->bytes, y = k->flops / k->median / 1e6;
		xmin = x < xmin ? x : xmin;
		xmax = x > xmax ? x : xmax;
		ymin = y < ymin ? y : ymin;
		ymax = y > ymax ? y : ymax;
	}
	a->lx0 = floor(log10(xmin));
	a->lx1 = ceil(log10(xmax));
	a->ly0 = floor(log10(ymin));
	a->ly1 = ceil(log10(ymax * 1.5));
}

/* The grid lines and decade labels of "a". */
static void grid(struct pb_buf *b, const struct axes *a)
{
	for (double d = a->lx0; d <= a->lx1; d++) {
		double x = px(a, pow(10, d));
		pb_buf_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
			      "y2=\"%d\" stroke=\"#dddddd\"/>\n<text x=\"%.1f\" "
			      "y=\"%d\" font-size=\"11\" text-anchor=\"middle\">"
			      "%g</text>\n", x, Y0, x, Y1, x, Y1 + 16,
			      pow(10, d));
	}
	for (double d = a->ly0; d <= a->ly1; d++) {
		double y = py(a, pow(10, d));
		pb_buf_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
			      "y2=\"%.1f\" stroke=\"#dddddd\"/>\n<text x=\"%d\" "
			      "y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">"
			      "%g</text>\n", X0, y, X1, y, X0 - 6, y + 4,
			      pow(10, d));
	}
	pb_buf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
		      "fill=\"none\" stroke=\"#000000\"/>\n", X0, Y0, X1 - X0,
		      Y1 - Y0);
	pb_buf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"12\" "
		      "text-anchor=\"middle\">arithmetic intensity (flops per "
		      "byte of the kernel's buffers)</text>\n", (X0 + X1) / 2,
		      Y1 + 36);
	pb_buf_printf(b, "<text x=\"18\" y=\"%d\" font-size=\"12\" "
		      "text-anchor=\"middle\" transform=\"rotate(-90 18 %d)\">"
		      "GFLOP/s</text>\n", (Y0 + Y1) / 2, (Y0 + Y1) / 2);
}

/* The most kernels the legend names. */
#define LEGEND 24

/* Line "r" of the legend: kernel "k" (rank r + 1, its colour, "pct" of
 * the time and its ONNX nodes, the first two, cut to 36 characters from
 * the end, where ONNX names say most). */
static void legend(struct pb_buf *b, int r, const struct pb_prof_kernel *k,
		   double pct)
{
	char nodes[256] = "";
	size_t len = 0;
	for (int j = 0; j < k->nnodes && j < 2 && len < sizeof(nodes); j++)
		len += snprintf(nodes + len, sizeof(nodes) - len, "%s%s",
				j ? " " : "", k->nodes[j]);
	if (!k->nnodes)
		snprintf(nodes, sizeof(nodes), "%s", k->name);
	len = strlen(nodes);
	const char *shown = len > 36 ? nodes + len - 36 : nodes;
	double y = Y0 + 16 * r;
	pb_buf_printf(b, "<circle cx=\"%d\" cy=\"%.1f\" r=\"5\" "
		      "fill=\"%s\"/>\n<text x=\"%d\" y=\"%.1f\" "
		      "font-size=\"10\">%d %4.1f%% %s", LX, y,
		      colors[r % (sizeof(colors) / sizeof(colors[0]))], LX + 9,
		      y + 4, r + 1, pct, len > 36 ? "..." : "");
	text(b, shown);
	pb_buf_printf(b, "%s</text>\n", k->nnodes > 2 ? " +" : "");
}

/* The kernels of "p", largest share first (so that small ones stay
 * visible on top), each a circle of area proportional to its share and
 * its nodes as label. Returns the number drawn. */
static int draw_kernels(struct pb_buf *b, const struct axes *a,
			const struct pb_prof *p, double *undrawn)
{
	int n = 0, *order = calloc(p->n + 1, sizeof(int));
	double sum = p->sum_median > 0 ? p->sum_median : 1;
	*undrawn = 0;
	for (int i = 0; order && i < p->n; i++) {
		if (!placed(&p->k[i])) {
			*undrawn += p->k[i].median / sum;
			continue;
		}
		int j = n++;
		while (j > 0 && p->k[order[j - 1]].median < p->k[i].median) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	for (int r = 0; r < n; r++) {
		const struct pb_prof_kernel *k = &p->k[order[r]];
		double x = px(a, k->flops / k->bytes);
		double y = py(a, k->flops / k->median / 1e6);
		double rad = 4 + 26 * sqrt(k->median / sum);
		pb_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" "
			      "fill=\"%s\" stroke=\"#000000\" "
			      "stroke-width=\"0.5\"><title>", x, y, rad,
			      colors[r % (sizeof(colors) / sizeof(colors[0]))]);
		text(b, k->name);
		pb_buf_printf(b, ": %.1f%% of the time</title></circle>\n",
			      100 * k->median / sum);
		if (r >= LEGEND)
			continue;
		pb_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" "
			      "font-size=\"10\">%d</text>\n", x + rad + 2,
			      y + 3, r + 1);
		legend(b, r, k, 100 * k->median / sum);
	}
	if (n > LEGEND)
		pb_buf_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"10\">"
			      "and %d more</text>\n", LX, Y0 + 16 * LEGEND + 4,
			      n - LEGEND);
	free(order);
	return n;
}

int pb_prof_roofline(struct pb_ctx *ctx, const struct pb_prof *p,
		     const struct pb_target *t, const char *title,
		     const char *path)
{
	struct pb_buf b = {0};
	struct axes a;
	double undrawn;
	fit_axes(p, t, &a);
	double top = pow(10, a.ly1);
	pb_buf_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		      "height=\"%d\" viewBox=\"0 0 %d %d\" "
		      "font-family=\"sans-serif\">\n<rect width=\"%d\" "
		      "height=\"%d\" fill=\"#ffffff\"/>\n", W, H, W, H, W, H);
	pb_buf_printf(&b, "<text x=\"%d\" y=\"24\" font-size=\"14\" "
		      "font-weight=\"bold\">", X0);
	text(&b, t->name);
	pb_buf_puts(&b, ": ");
	text(&b, title);
	pb_buf_puts(&b, "</text>\n");
	grid(&b, &a);
	bandwidth_roof(&b, &a, t->model.l2_over_dram * t->dram_bytes_per_s, top,
		       "L2 (model)", " stroke-dasharray=\"6,4\"");
	bandwidth_roof(&b, &a, t->dram_bytes_per_s, top, "DRAM", "");
	compute_roof(&b, &a, t, t->tc_fp16_flops, "TC fp16", "#b8860b");
	compute_roof(&b, &a, t, t->tc_tf32_flops, "TC tf32", "#808000");
	compute_roof(&b, &a, t, t->fp32_flops, "fp32", "#006400");
	int n = draw_kernels(&b, &a, p, &undrawn);
	pb_buf_printf(&b, "<text x=\"%d\" y=\"%d\" font-size=\"11\">%d of %d "
		      "kernels drawn (area: share of the time); %d without "
		      "known flops or time (%.1f%% of the time) left out"
		      "</text>\n</svg>\n", X0, H - 8, n, p->n, p->n - n,
		      100 * undrawn);
	int rc = pb_write_file(path, b.data, b.len);
	pb_buf_free(&b);
	if (rc < 0)
		return pb_error_in(ctx, path, "cannot write: %s",
				   strerror(errno));
	return PB_OK;
}
