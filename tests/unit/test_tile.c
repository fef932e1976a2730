/* Unit tests of lib/tile: --sizes parsing and printing, the band of a
 * nest, and properties the cost model must have on the H100 description:
 * coalesced lanes for an elementwise nest, jammed thread tiles for a
 * matmul, partial tiles only where the extent needs them. */
#include <stdlib.h>
#include <string.h>

#include "mlir-c/IR.h"

#include "check.h"
#include "quiet.h"
#include "tile/internal.h"

static MlirStringRef str(const char *s)
{
	return mlirStringRefCreateFromCString(s);
}

/* pb_kernel_sizes_get of "text" for kernel "k", nest "nest", "what": the
 * count, with the values printed into "out" ("1,2"). */
static int get(struct pb_ctx *ctx, const char *text, int k, int nest,
	       const char *what, char *out)
{
	int64_t v[PB_TILE_MAXD];
	struct pb_kernel_sizes *s = pb_kernel_sizes_parse(ctx, text);
	int n = s ? pb_kernel_sizes_get(s, k, nest, what, v) : -9;
	out[0] = 0;
	for (int i = 0; i < n; i++)
		sprintf(out + strlen(out), "%s%lld", i ? "," : "", (long long)v[i]);
	pb_kernel_sizes_free(s);
	return n;
}

static void test_sizes(struct pb_ctx *ctx)
{
	char v[128];
	check(get(ctx, "{ kernel[3] -> tile[64, 128]; kernel[3] -> block[8, 32] }",
		  3, 0, "tile", v) == 2 && !strcmp(v, "64,128"), "tile of kernel[3]");
	check(get(ctx, "{ kernel[3] -> tile[64, 128]; kernel[3] -> block[8, 32] }",
		  3, 0, "block", v) == 2 && !strcmp(v, "8,32"), "block of kernel[3]");
	check(get(ctx, "{ kernel[3] -> tile[64, 128] }", 2, 0, "tile", v) == -1,
	      "kernel[2] is not given");
	check(get(ctx, "{ kernel_3 -> tile[128,128,32]; kernel_3 -> block[8,32] }",
		  3, 0, "tile", v) == 3 && !strcmp(v, "128,128,32"),
	      "kernel_3 reads as kernel[3]");
	check(get(ctx, "{ kernel[i] -> reduce[256] : i >= 2 }", 5, 0, "reduce",
		  v) == 1 && !strcmp(v, "256"), "a parametric domain");
	check(get(ctx, "{ kernel[i] -> reduce[256] : i >= 2 }", 1, 0, "reduce",
		  v) == -1, "outside a parametric domain");
	check(get(ctx, "{ kernel[0] -> tile[8]; kernel[0] -> tile[16] }", 0, 0,
		  "tile", v) == -2, "two tiles for one kernel are ambiguous");
	check(get(ctx, "{ kernel[4] -> none[] }", 4, 0, "none", v) == 0,
	      "none[] has no values");
	check(get(ctx, "{ kernel[4, 1] -> tile[4]; kernel[4] -> tile[8] }", 4, 1,
		  "tile", v) == 1 && !strcmp(v, "4"), "kernel[4, 1] for nest 1");
	check(get(ctx, "{ kernel[4, 1] -> tile[4]; kernel[4] -> tile[8] }", 4, 0,
		  "tile", v) == 1 && !strcmp(v, "8"), "kernel[4] for nest 0");
	check(get(ctx, "{ kernel[4] -> tile[8] }", 4, 2, "tile", v) == 1 &&
		      !strcmp(v, "8"), "kernel[4] for every nest");
	quiet(1);
	check(get(ctx, "{ kernel[0] -> tile[32", 0, 0, "tile", v) == -9,
	      "a broken map is an error");
	quiet(0);

	struct pb_tile_choice c = {0};
	struct pb_buf b = {0};
	c.mode = PB_TILE_TILE;
	c.n = 2;
	c.tile[0] = 64, c.tile[1] = 128, c.block[0] = 8, c.block[1] = 32;
	c.jam = 1;
	pb_tile_sizes_print(&b, 3, 0, &c);
	check(!strcmp(b.data, "kernel[3] -> tile[64, 128]; kernel[3] -> "
			      "block[8, 32]; kernel[3] -> jam[1]"),
	      "print a tiled nest");
	c.mode = PB_TILE_REDUCE;
	c.threads = 128;
	pb_tile_sizes_print(&b, 4, 1, &c);
	check(strstr(b.data, "; kernel[4, 1] -> reduce[128]") != NULL,
	      "print a reduction of a second nest");
	pb_buf_free(&b);
}

static const char *elementwise =
	"func.func @f(%a: memref<4096x4096xf32>, %b: memref<4096x4096xf32>) {\n"
	"  affine.parallel (%i) = (0) to (4096) {\n"
	"    affine.parallel (%j) = (0) to (4096) {\n"
	"      %x = affine.load %a[%i, %j] : memref<4096x4096xf32>\n"
	"      %y = arith.negf %x : f32\n"
	"      affine.store %y, %b[%i, %j] : memref<4096x4096xf32>\n"
	"    }\n  }\n  return\n}\n";

static const char *matmul =
	"func.func @f(%a: memref<1000x512xf32>, %b: memref<512x1024xf32>,"
	" %c: memref<1000x1024xf32>) {\n"
	"  %z = arith.constant 0.0 : f32\n"
	"  affine.parallel (%i) = (0) to (1000) {\n"
	"    affine.parallel (%j) = (0) to (1024) {\n"
	"      %acc = memref.alloca() : memref<f32>\n"
	"      affine.store %z, %acc[] : memref<f32>\n"
	"      affine.for %k = 0 to 512 {\n"
	"        %x = affine.load %a[%i, %k] : memref<1000x512xf32>\n"
	"        %y = affine.load %b[%k, %j] : memref<512x1024xf32>\n"
	"        %s = affine.load %acc[] : memref<f32>\n"
	"        %p = arith.mulf %x, %y : f32\n"
	"        %q = arith.addf %s, %p : f32\n"
	"        affine.store %q, %acc[] : memref<f32>\n"
	"      }\n"
	"      %r = affine.load %acc[] : memref<f32>\n"
	"      affine.store %r, %c[%i, %j] : memref<1000x1024xf32>\n"
	"    }\n  }\n  return\n}\n";

/* The band of the first operation of @f in "src" into "b" ("m" keeps the
 * module alive). */
static int band(struct pb_ctx *ctx, const char *src, MlirModule *m,
		struct pb_kernel_band *b)
{
	*m = mlirModuleCreateParse(ctx->mlir, str(src));
	if (mlirModuleIsNull(*m))
		return 0;
	MlirOperation f = pb_ir_lookup_func(*m, "f");
	MlirBlock body = pb_ir_entry_block(f);
	MlirOperation op = mlirBlockGetFirstOperation(body);
	while (!pb_ir_op_is(op, "affine.parallel"))
		op = mlirOperationGetNextInBlock(op);
	return pb_kernel_band_of(op, b);
}

static void test_model(struct pb_ctx *ctx)
{
	struct pb_target t;
	struct pb_kernel_band b;
	struct pb_tile_choice c, naive;
	MlirModule m;
	check(pb_target_get(ctx, "sm_90", NULL, &t) == PB_OK, "H100 target");

	check(band(ctx, elementwise, &m, &b) && b.n == 2 &&
		      b.extent[0] == 4096 && b.extent[1] == 4096,
	      "elementwise: a 2-d band");
	pb_tile_choose(&t, &b, 1u << PB_TILE_TILE, &c);
	check(c.mode == PB_TILE_TILE, "elementwise: tiled");
	check(c.linear ? c.lanes[0] == 32 : c.lanes[1] >= 8,
	      "elementwise: at least 8 lanes on the contiguous dimension "
	      "(full 32-byte sectors), or a linear tile");
	check(!c.jam, "elementwise: nothing to jam");
	check(c.global_bytes >= 2LL * 4096 * 4096 * 4 &&
		      c.global_bytes <= 3LL * 4096 * 4096 * 4,
	      "elementwise: global bytes are the two arrays");
	double bound = 2.0 * 4096 * 4096 * 4 / t.dram_bytes_per_s;
	check(c.predicted_s >= bound && c.predicted_s < 1.5 * bound + t.launch_s,
	      "elementwise: predicted near the DRAM bound");
	mlirModuleDestroy(m);

	check(band(ctx, matmul, &m, &b) && b.n == 2, "matmul: a 2-d band");
	check(pb_tile_jam_ok(&b), "matmul: the body jams");
	pb_tile_choose(&t, &b, 1u << PB_TILE_TILE, &c);
	memset(&naive, 0, sizeof(naive));
	naive.n = 2;
	naive.mode = PB_TILE_NONE;
	pb_tile_predict(&t, &b, &naive);
	check(c.mode == PB_TILE_TILE && c.jam, "matmul: jammed thread tiles");
	check(c.tile[0] > c.block[0] && c.tile[1] > c.block[1],
	      "matmul: thread tiles on both dimensions");
	check(c.predicted_s < naive.predicted_s / 1.5,
	      "matmul: predicted at least 1.5x faster than the naive mapping");
	check(c.flops == 2LL * 1000 * 1024 * 512 ||
		      c.flops >= 2LL * 1000 * 1024 * 512,
	      "matmul: flops count every point (with padding)");
	check(c.regs <= t.max_regs_per_thread, "matmul: registers fit");
	mlirModuleDestroy(m);
}

/* Apply "sizes" to the matmul and check the structure: "split" when the
 * full/partial versions are expected. */
static void test_apply(struct pb_ctx *ctx, int64_t t0, int64_t t1, int64_t b0,
		       int64_t b1, int split)
{
	struct pb_kernel_band b;
	struct pb_tile_choice c;
	MlirModule m;
	char what[128];
	band(ctx, matmul, &m, &b);
	memset(&c, 0, sizeof(c));
	c.mode = PB_TILE_TILE;
	c.n = 2;
	c.tile[0] = t0, c.tile[1] = t1, c.block[0] = b0, c.block[1] = b1;
	c.jam = -1;
	struct pb_target t;
	pb_target_get(ctx, "sm_90", NULL, &t);
	snprintf(what, sizeof(what), "apply %lldx%lld/%lldx%lld",
		 (long long)t0, (long long)t1, (long long)b0, (long long)b1);
	check(pb_tile_complete(ctx, &t, &b, &c) == PB_OK &&
		      pb_tile_apply(ctx, &b, &c) == PB_OK,
	      what);
	MlirOperation f = pb_ir_lookup_func(m, "f");
	check(mlirOperationVerify(f), what);
	struct pb_ir_ops ifs = {0}, par = {0};
	pb_ir_collect(f, "affine.if", &ifs);
	pb_ir_collect(f, "affine.parallel", &par);
	snprintf(what, sizeof(what), "apply %lldx%lld: %s", (long long)t0,
		 (long long)t1, split ? "full and partial tiles" : "one version");
	check((split ? ifs.n >= 2 : 1) && par.n == (split ? 5 : 3), what);
	pb_ir_ops_free(&ifs);
	pb_ir_ops_free(&par);
	mlirModuleDestroy(m);
}

int main(void)
{
	struct pb_ctx *ctx = pb_ctx_alloc("test_tile");
	test_sizes(ctx);
	test_model(ctx);
	test_apply(ctx, 64, 128, 8, 32, 1);	/* 1000 % 64 != 0 */
	test_apply(ctx, 8, 128, 8, 32, 0);	/* divides both */
	test_apply(ctx, 2048, 128, 256, 4, 0);	/* larger than the extent */
	pb_ctx_free(ctx);
	return check_summary("test_tile");
}
