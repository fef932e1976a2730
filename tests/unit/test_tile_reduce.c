/* Table-driven tests of lib/tile/reduce.c, the block-level mapping of
 * softmax, LayerNorm and pooling rows: for each kernel (as pb-fuse writes
 * them) pb_tile_reduce_match must accept or reject its band with the
 * expected work and workgroup bytes; an accepted band is rewritten by
 * pb_tile_reduce_apply, the module must verify and have the expected
 * numbers of block loops, thread loops and barriers, and it must compute
 * on the CPU what the original computes on random inputs (within float
 * reassociation). With PB_TEST_OUT=DIR set, each mapped module is written
 * to DIR/<case>.mlir (for pb-run and pb-codegen by hand) and the
 * comparison lines are printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "runtime/runtime.h"
#include "tile/internal.h"

#include "check.h"

struct red_case {
	const char *name;
	const char *src; /* a fuse-stage module: one kernel and @main */
	int threads;
	int match;
	int64_t work, smem;
	int nthread, nbarrier; /* after apply */
};

#define MOD_BEGIN "module attributes {pb.stage = \"fuse\"} {\n"
#define MOD_END "}\n"
/* The @main (and module end) of the 4x64 cases below: k0 on x to y, and
 * on x and a row scale s to y. */
#define MAIN_XY                                                               \
	"  func.func @main(%x: memref<4x64xf32> {pb.name = \"x\"}, "          \
	"%y: memref<4x64xf32> {pb.name = \"y\", pb.output}) {\n"              \
	"    call @k0(%x, %y) : (memref<4x64xf32>, memref<4x64xf32>) -> ()\n" \
	"    return\n  }\n" MOD_END
/* The end of a 4x64 case that adds "V" to each row "%r" of x into y. */
#define ADD_ROW_XSY(V)                                                        \
	"      affine.for %j = 0 to 64 {\n"                                     \
	"        %0 = affine.load %x[%r, %j] : memref<4x64xf32>\n"               \
	"        %2 = arith.addf %0, " V " : f32\n"                             \
	"        affine.store %2, %y[%r, %j] : memref<4x64xf32>\n"               \
	"      }\n    }\n    return\n  }\n" MAIN_XSY
#define MAIN_XSY                                                              \
	"  func.func @main(%x: memref<4x64xf32> {pb.name = \"x\"}, "          \
	"%s: memref<4xf32> {pb.name = \"s\"}, "                               \
	"%y: memref<4x64xf32> {pb.name = \"y\", pb.output}) {\n"              \
	"    call @k0(%x, %s, %y) : (memref<4x64xf32>, memref<4xf32>, "        \
	"memref<4x64xf32>) -> ()\n    return\n  }\n" MOD_END

/* fashion_lenet's softmax over rows of 10 (pb-fuse's output). */
#define SOFTMAX_BODY(N, T)                                                    \
	"      %a = memref.alloca() : memref<f32>\n"                          \
	"      %t = memref.alloca() : memref<" N "xf32>\n"                    \
	"      %m = memref.alloca() : memref<f32>\n"                          \
	"      affine.store %ninf, %m[] : memref<f32>\n"                       \
	"      affine.for %j = 0 to " N " {\n"                                \
	"        %0 = affine.load %x[" T ", %j] : memref<" X ">\n"            \
	"        %1 = affine.load %m[] : memref<f32>\n"                        \
	"        %2 = arith.maximumf %0, %1 : f32\n"                           \
	"        affine.store %2, %m[] : memref<f32>\n"                        \
	"      }\n"                                                            \
	"      affine.for %j = 0 to " N " {\n"                                \
	"        %0 = affine.load %x[" T ", %j] : memref<" X ">\n"            \
	"        %1 = affine.load %m[] : memref<f32>\n"                        \
	"        %2 = arith.subf %0, %1 : f32\n"                               \
	"        %3 = math.exp %2 : f32\n"                                     \
	"        affine.store %3, %t[%j] : memref<" N "xf32>\n"                \
	"      }\n"                                                            \
	"      affine.store %zero, %a[] : memref<f32>\n"                       \
	"      affine.for %j = 0 to " N " {\n"                                \
	"        %0 = affine.load %t[%j] : memref<" N "xf32>\n"                \
	"        %1 = affine.load %a[] : memref<f32>\n"                        \
	"        %2 = arith.addf %0, %1 : f32\n"                               \
	"        affine.store %2, %a[] : memref<f32>\n"                        \
	"      }\n"                                                            \
	"      affine.for %j = 0 to " N " {\n"                                \
	"        %0 = affine.load %t[%j] : memref<" N "xf32>\n"                \
	"        %1 = affine.load %a[] : memref<f32>\n"                        \
	"        %2 = arith.divf %0, %1 : f32\n"                               \
	"        affine.store %2, %y[" T ", %j] : memref<" X ">\n"            \
	"      }\n"

#define X "8x10xf32"
static const char softmax_rows[] =
	MOD_BEGIN
	"  func.func private @k0(%x: memref<8x10xf32>, %y: memref<8x10xf32>) "
	"attributes {pb.kernel} {\n"
	"    %ninf = arith.constant 0xFF800000 : f32\n"
	"    %zero = arith.constant 0.000000e+00 : f32\n"
	"    affine.parallel (%r) = (0) to (8) {\n"
	SOFTMAX_BODY("10", "%r")
	"    }\n"
	"    return\n"
	"  }\n"
	"  func.func @main(%x: memref<8x10xf32> {pb.name = \"x\"}, "
	"%y: memref<8x10xf32> {pb.name = \"y\", pb.output}) {\n"
	"    call @k0(%x, %y) : (memref<8x10xf32>, memref<8x10xf32>) -> ()\n"
	"    return\n"
	"  }\n"
	MOD_END;
#undef X

/* The attention softmax of tiny_transformer_encoder: a 2-d band. */
#define X "4x32x40xf32"
static const char softmax_2d[] =
	MOD_BEGIN
	"  func.func private @k0(%x: memref<4x32x40xf32>, "
	"%y: memref<4x32x40xf32>) attributes {pb.kernel} {\n"
	"    %ninf = arith.constant 0xFF800000 : f32\n"
	"    %zero = arith.constant 0.000000e+00 : f32\n"
	"    affine.parallel (%h) = (0) to (4) {\n"
	"    affine.parallel (%r) = (0) to (32) {\n"
	SOFTMAX_BODY("40", "%h, %r")
	"    }\n"
	"    }\n"
	"    return\n"
	"  }\n"
	"  func.func @main(%x: memref<4x32x40xf32> {pb.name = \"x\"}, "
	"%y: memref<4x32x40xf32> {pb.name = \"y\", pb.output}) {\n"
	"    call @k0(%x, %y) : (memref<4x32x40xf32>, memref<4x32x40xf32>) "
	"-> ()\n"
	"    return\n"
	"  }\n"
	MOD_END;
#undef X

/* tiny_transformer_encoder's LayerNorm (pb-fuse's output): scalar work
 * between the reductions, allocas inside the last loop. */
static const char layernorm[] =
	MOD_BEGIN
	"  func.func private @k0(%arg0: memref<1x32x128xf32>, "
	"%arg1: memref<128xf32>, %arg2: memref<128xf32>, "
	"%arg3: memref<1x32x128xf32>) attributes {pb.kernel} {\n"
	"    %cst = arith.constant 0.000000e+00 : f32\n"
	"    %cst_0 = arith.constant 1.280000e+02 : f32\n"
	"    %cst_1 = arith.constant 9.99999974E-6 : f32\n"
	"    affine.parallel (%arg4) = (0) to (32) {\n"
	"      %alloca = memref.alloca() : memref<1x1xf32>\n"
	"      %alloca_2 = memref.alloca() : memref<1x1xf32>\n"
	"      %alloca_3 = memref.alloca() : memref<1xf32>\n"
	"      %alloca_4 = memref.alloca() : memref<1xf32>\n"
	"      %alloca_5 = memref.alloca() : memref<1x128xf32>\n"
	"      %alloca_6 = memref.alloca() : memref<1x128xf32>\n"
	"      %alloca_7 = memref.alloca() : memref<1xf32>\n"
	"      %alloca_8 = memref.alloca() : memref<1xf32>\n"
	"      affine.store %cst, %alloca_8[0] : memref<1xf32>\n"
	"      affine.for %arg5 = 0 to 128 {\n"
	"        %8 = affine.load %arg0[0, %arg4, %arg5] : memref<1x32x128xf32>\n"
	"        %9 = affine.load %alloca_8[0] : memref<1xf32>\n"
	"        %10 = arith.addf %8, %9 : f32\n"
	"        affine.store %10, %alloca_8[0] : memref<1xf32>\n"
	"      }\n"
	"      %0 = affine.load %alloca_8[0] : memref<1xf32>\n"
	"      %1 = arith.divf %0, %cst_0 : f32\n"
	"      affine.store %1, %alloca_7[0] : memref<1xf32>\n"
	"      affine.for %arg5 = 0 to 128 {\n"
	"        %8 = affine.load %arg0[0, %arg4, %arg5] : memref<1x32x128xf32>\n"
	"        %9 = affine.load %alloca_7[0] : memref<1xf32>\n"
	"        %10 = arith.subf %8, %9 : f32\n"
	"        affine.store %10, %alloca_6[0, %arg5] : memref<1x128xf32>\n"
	"        %11 = affine.load %alloca_6[0, %arg5] : memref<1x128xf32>\n"
	"        %12 = arith.mulf %11, %11 : f32\n"
	"        affine.store %12, %alloca_5[0, %arg5] : memref<1x128xf32>\n"
	"      }\n"
	"      affine.store %cst, %alloca_4[0] : memref<1xf32>\n"
	"      affine.for %arg5 = 0 to 128 {\n"
	"        %8 = affine.load %alloca_5[0, %arg5] : memref<1x128xf32>\n"
	"        %9 = affine.load %alloca_4[0] : memref<1xf32>\n"
	"        %10 = arith.addf %8, %9 : f32\n"
	"        affine.store %10, %alloca_4[0] : memref<1xf32>\n"
	"      }\n"
	"      %2 = affine.load %alloca_4[0] : memref<1xf32>\n"
	"      %3 = arith.divf %2, %cst_0 : f32\n"
	"      affine.store %3, %alloca_3[0] : memref<1xf32>\n"
	"      %4 = affine.load %alloca_3[0] : memref<1xf32>\n"
	"      %5 = arith.addf %4, %cst_1 : f32\n"
	"      affine.store %5, %alloca_2[0, 0] : memref<1x1xf32>\n"
	"      %6 = affine.load %alloca_2[0, 0] : memref<1x1xf32>\n"
	"      %7 = math.sqrt %6 : f32\n"
	"      affine.store %7, %alloca[0, 0] : memref<1x1xf32>\n"
	"      affine.for %arg5 = 0 to 128 {\n"
	"        %alloca_9 = memref.alloca() : memref<1xf32>\n"
	"        %alloca_10 = memref.alloca() : memref<1xf32>\n"
	"        %8 = affine.load %alloca_6[0, %arg5] : memref<1x128xf32>\n"
	"        %9 = affine.load %alloca[0, 0] : memref<1x1xf32>\n"
	"        %10 = arith.divf %8, %9 : f32\n"
	"        affine.store %10, %alloca_10[0] : memref<1xf32>\n"
	"        %11 = affine.load %alloca_10[0] : memref<1xf32>\n"
	"        %12 = affine.load %arg1[%arg5] : memref<128xf32>\n"
	"        %13 = arith.mulf %11, %12 : f32\n"
	"        affine.store %13, %alloca_9[0] : memref<1xf32>\n"
	"        %14 = affine.load %alloca_9[0] : memref<1xf32>\n"
	"        %15 = affine.load %arg2[%arg5] : memref<128xf32>\n"
	"        %16 = arith.addf %14, %15 : f32\n"
	"        affine.store %16, %arg3[0, %arg4, %arg5] : memref<1x32x128xf32>\n"
	"      }\n"
	"    }\n"
	"    return\n"
	"  }\n"
	"  func.func @main(%x: memref<1x32x128xf32> {pb.name = \"x\"}, "
	"%g: memref<128xf32> {pb.name = \"g\"}, "
	"%b: memref<128xf32> {pb.name = \"b\"}, "
	"%y: memref<1x32x128xf32> {pb.name = \"y\", pb.output}) {\n"
	"    call @k0(%x, %g, %b, %y) : (memref<1x32x128xf32>, memref<128xf32>, "
	"memref<128xf32>, memref<1x32x128xf32>) -> ()\n"
	"    return\n"
	"  }\n"
	MOD_END;

/* squeezenet's GlobalAveragePool: a 2-loop reduction nest (linearized). */
static const char global_pool[] =
	MOD_BEGIN
	"  func.func private @k0(%arg0: memref<1x40x13x13xf32>, "
	"%arg1: memref<1x40xf32>) attributes {pb.kernel} {\n"
	"    %cst = arith.constant 0.000000e+00 : f32\n"
	"    %cst_0 = arith.constant 1.690000e+02 : f32\n"
	"    affine.parallel (%arg2) = (0) to (40) {\n"
	"      %alloca = memref.alloca() : memref<1xf32>\n"
	"      %alloca_1 = memref.alloca() : memref<1xf32>\n"
	"      affine.store %cst, %alloca_1[0] : memref<1xf32>\n"
	"      affine.for %arg3 = 0 to 13 {\n"
	"        affine.for %arg4 = 0 to 13 {\n"
	"          %3 = affine.load %arg0[0, %arg2, %arg3, %arg4] : "
	"memref<1x40x13x13xf32>\n"
	"          %4 = affine.load %alloca_1[0] : memref<1xf32>\n"
	"          %5 = arith.addf %3, %4 : f32\n"
	"          affine.store %5, %alloca_1[0] : memref<1xf32>\n"
	"        }\n"
	"      }\n"
	"      %0 = affine.load %alloca_1[0] : memref<1xf32>\n"
	"      %1 = arith.divf %0, %cst_0 : f32\n"
	"      affine.store %1, %alloca[0] : memref<1xf32>\n"
	"      %2 = affine.load %alloca[0] : memref<1xf32>\n"
	"      affine.store %2, %arg1[0, %arg2] : memref<1x40xf32>\n"
	"    }\n"
	"    return\n"
	"  }\n"
	"  func.func @main(%x: memref<1x40x13x13xf32> {pb.name = \"x\"}, "
	"%y: memref<1x40xf32> {pb.name = \"y\", pb.output}) {\n"
	"    call @k0(%x, %y) : (memref<1x40x13x13xf32>, memref<1x40xf32>) -> ()\n"
	"    return\n"
	"  }\n"
	MOD_END;

/* Two accumulators in one nest, kept in a function argument (no alloca):
 * y[r] = sum x[r, j], z[r] = max x[r, j] of integers. */
static const char two_acc_i32[] =
	MOD_BEGIN
	"  func.func private @k0(%x: memref<6x300xi32>, %y: memref<6xi32>, "
	"%z: memref<6xi32>) attributes {pb.kernel} {\n"
	"    %c0 = arith.constant 0 : i32\n"
	"    %cm = arith.constant -100 : i32\n"
	"    affine.parallel (%r) = (0) to (6) {\n"
	"      affine.store %c0, %y[%r] : memref<6xi32>\n"
	"      affine.store %cm, %z[%r] : memref<6xi32>\n"
	"      affine.for %j = 0 to 300 {\n"
	"        %0 = affine.load %x[%r, %j] : memref<6x300xi32>\n"
	"        %1 = affine.load %y[%r] : memref<6xi32>\n"
	"        %2 = arith.addi %1, %0 : i32\n"
	"        affine.store %2, %y[%r] : memref<6xi32>\n"
	"        %3 = affine.load %z[%r] : memref<6xi32>\n"
	"        %4 = arith.maxsi %0, %3 : i32\n"
	"        affine.store %4, %z[%r] : memref<6xi32>\n"
	"      }\n"
	"    }\n"
	"    return\n"
	"  }\n"
	"  func.func @main(%x: memref<6x300xi32> {pb.name = \"x\"}, "
	"%y: memref<6xi32> {pb.name = \"y\", pb.output}, "
	"%z: memref<6xi32> {pb.name = \"z\", pb.output}) {\n"
	"    call @k0(%x, %y, %z) : (memref<6x300xi32>, memref<6xi32>, "
	"memref<6xi32>) -> ()\n"
	"    return\n"
	"  }\n"
	MOD_END;

/* A nest parallel in its outer loop only (the inner one accumulates at a
 * location that depends on the outer counter), and a perfect 2-d parallel
 * nest: y[r, i] = sum_j x[r, i, j]; z[r, i, j] = 2 * x[r, i, j]. */
static const char partial_par[] =
	MOD_BEGIN
	"  func.func private @k0(%x: memref<3x16x24xf32>, %y: memref<3x16xf32>, "
	"%z: memref<3x16x24xf32>) attributes {pb.kernel} {\n"
	"    %c0 = arith.constant 0.000000e+00 : f32\n"
	"    %c2 = arith.constant 2.000000e+00 : f32\n"
	"    affine.parallel (%r) = (0) to (3) {\n"
	"      affine.for %i = 0 to 16 {\n"
	"        affine.store %c0, %y[%r, %i] : memref<3x16xf32>\n"
	"        affine.for %j = 0 to 24 {\n"
	"          %0 = affine.load %x[%r, %i, %j] : memref<3x16x24xf32>\n"
	"          %1 = affine.load %y[%r, %i] : memref<3x16xf32>\n"
	"          %2 = arith.addf %1, %0 : f32\n"
	"          affine.store %2, %y[%r, %i] : memref<3x16xf32>\n"
	"        }\n"
	"      }\n"
	"      affine.for %i = 0 to 16 {\n"
	"        affine.for %j = 0 to 24 {\n"
	"          %0 = affine.load %x[%r, %i, %j] : memref<3x16x24xf32>\n"
	"          %1 = arith.mulf %0, %c2 : f32\n"
	"          affine.store %1, %z[%r, %i, %j] : memref<3x16x24xf32>\n"
	"        }\n"
	"      }\n"
	"    }\n"
	"    return\n"
	"  }\n"
	"  func.func @main(%x: memref<3x16x24xf32> {pb.name = \"x\"}, "
	"%y: memref<3x16xf32> {pb.name = \"y\", pb.output}, "
	"%z: memref<3x16x24xf32> {pb.name = \"z\", pb.output}) {\n"
	"    call @k0(%x, %y, %z) : (memref<3x16x24xf32>, memref<3x16xf32>, "
	"memref<3x16x24xf32>) -> ()\n"
	"    return\n"
	"  }\n"
	MOD_END;

/* ArgMax over rows of 200 (pb-fuse's form): the index is a conditional
 * reduction, idx = x == max ? minsi(idx, j) : idx. */
static const char argmax[] =
	MOD_BEGIN
	"  func.func private @k0(%arg0: memref<5x200xf32>, "
	"%arg1: memref<5xi64>) attributes {pb.kernel} {\n"
	"    %cst = arith.constant 0xFF800000 : f32\n"
	"    %c200_i64 = arith.constant 200 : i64\n"
	"    affine.parallel (%arg2) = (0) to (5) {\n"
	"      %alloca = memref.alloca() : memref<i64>\n"
	"      %alloca_0 = memref.alloca() : memref<f32>\n"
	"      affine.store %cst, %alloca_0[] : memref<f32>\n"
	"      affine.for %arg4 = 0 to 200 {\n"
	"        %1 = affine.load %arg0[%arg2, %arg4] : memref<5x200xf32>\n"
	"        %2 = affine.load %alloca_0[] : memref<f32>\n"
	"        %3 = arith.maximumf %1, %2 : f32\n"
	"        affine.store %3, %alloca_0[] : memref<f32>\n"
	"      }\n"
	"      affine.store %c200_i64, %alloca[] : memref<i64>\n"
	"      affine.for %arg4 = 0 to 200 {\n"
	"        %1 = affine.load %arg0[%arg2, %arg4] : memref<5x200xf32>\n"
	"        %2 = affine.load %alloca_0[] : memref<f32>\n"
	"        %3 = affine.load %alloca[] : memref<i64>\n"
	"        %4 = arith.index_cast %arg4 : index to i64\n"
	"        %5 = arith.cmpf oeq, %1, %2 : f32\n"
	"        %6 = arith.minsi %3, %4 : i64\n"
	"        %7 = arith.select %5, %6, %3 : i64\n"
	"        affine.store %7, %alloca[] : memref<i64>\n"
	"      }\n"
	"      %0 = affine.load %alloca[] : memref<i64>\n"
	"      affine.store %0, %arg1[%arg2] : memref<5xi64>\n"
	"    }\n"
	"    return\n"
	"  }\n"
	"  func.func @main(%x: memref<5x200xf32> {pb.name = \"x\"}, "
	"%y: memref<5xi64> {pb.name = \"y\", pb.output}) {\n"
	"    call @k0(%x, %y) : (memref<5x200xf32>, memref<5xi64>) -> ()\n"
	"    return\n"
	"  }\n"
	MOD_END;

/* Other element types and operations: the minimum and maximum of f16
 * rows (identities +inf and -inf as f16), the product of f64 rows. */
static const char types[] =
	MOD_BEGIN
	"  func.func private @k0(%x: memref<3x100xf16>, %w: memref<3x20xf64>, "
	"%y: memref<3xf16>, %z: memref<3xf16>, %p: memref<3xf64>) "
	"attributes {pb.kernel} {\n"
	"    %hi = arith.constant 6.0e+04 : f16\n"
	"    %lo = arith.constant -6.0e+04 : f16\n"
	"    %one = arith.constant 1.0 : f64\n"
	"    affine.parallel (%r) = (0) to (3) {\n"
	"      affine.store %hi, %y[%r] : memref<3xf16>\n"
	"      affine.store %lo, %z[%r] : memref<3xf16>\n"
	"      affine.store %one, %p[%r] : memref<3xf64>\n"
	"      affine.for %j = 0 to 100 {\n"
	"        %0 = affine.load %x[%r, %j] : memref<3x100xf16>\n"
	"        %1 = affine.load %y[%r] : memref<3xf16>\n"
	"        %2 = arith.minimumf %1, %0 : f16\n"
	"        affine.store %2, %y[%r] : memref<3xf16>\n"
	"        %3 = affine.load %z[%r] : memref<3xf16>\n"
	"        %4 = arith.maximumf %3, %0 : f16\n"
	"        affine.store %4, %z[%r] : memref<3xf16>\n"
	"      }\n"
	"      affine.for %j = 0 to 20 {\n"
	"        %0 = affine.load %w[%r, %j] : memref<3x20xf64>\n"
	"        %1 = affine.load %p[%r] : memref<3xf64>\n"
	"        %2 = arith.mulf %0, %1 : f64\n"
	"        affine.store %2, %p[%r] : memref<3xf64>\n"
	"      }\n"
	"    }\n"
	"    return\n"
	"  }\n"
	"  func.func @main(%x: memref<3x100xf16> {pb.name = \"x\"}, "
	"%w: memref<3x20xf64> {pb.name = \"w\"}, "
	"%y: memref<3xf16> {pb.name = \"y\", pb.output}, "
	"%z: memref<3xf16> {pb.name = \"z\", pb.output}, "
	"%p: memref<3xf64> {pb.name = \"p\", pb.output}) {\n"
	"    call @k0(%x, %w, %y, %z, %p) : (memref<3x100xf16>, "
	"memref<3x20xf64>, memref<3xf16>, memref<3xf16>, memref<3xf64>) -> ()\n"
	"    return\n"
	"  }\n"
	MOD_END;

/* A private buffer used through a view cannot move to workgroup memory
 * (its type changes): the band is rejected. */
static const char view[] =
	MOD_BEGIN
	"  func.func private @k0(%x: memref<4x64xf32>, %y: memref<4x64xf32>) "
	"attributes {pb.kernel} {\n"
	"    affine.parallel (%r) = (0) to (4) {\n"
	"      %t = memref.alloca() : memref<64xf32>\n"
	"      %v = memref.expand_shape %t [[0, 1]] output_shape [8, 8] : "
	"memref<64xf32> into memref<8x8xf32>\n"
	"      affine.for %j = 0 to 64 {\n"
	"        %0 = affine.load %x[%r, %j] : memref<4x64xf32>\n"
	"        affine.store %0, %t[%j] : memref<64xf32>\n"
	"      }\n"
	"      affine.for %i = 0 to 8 {\n"
	"        affine.for %k = 0 to 8 {\n"
	"          %0 = affine.load %v[%i, %k] : memref<8x8xf32>\n"
	"          affine.store %0, %y[%r, %i * 8 + %k] : memref<4x64xf32>\n"
	"        }\n"
	"      }\n"
	"    }\n"
	"    return\n"
	"  }\n"
	MAIN_XY;

/* A prefix sum: the loop carries a dependence that is no reduction;
 * nothing to distribute, so the band is rejected. */
static const char scan[] =
	MOD_BEGIN
	"  func.func private @k0(%x: memref<4x64xf32>, %y: memref<4x64xf32>) "
	"attributes {pb.kernel} {\n"
	"    affine.parallel (%r) = (0) to (4) {\n"
	"      affine.for %j = 1 to 64 {\n"
	"        %0 = affine.load %x[%r, %j] : memref<4x64xf32>\n"
	"        %1 = affine.load %y[%r, %j - 1] : memref<4x64xf32>\n"
	"        %2 = arith.addf %0, %1 : f32\n"
	"        affine.store %2, %y[%r, %j] : memref<4x64xf32>\n"
	"      }\n"
	"    }\n"
	"    return\n"
	"  }\n"
	MAIN_XY;

/* A value loaded outside the loops from a buffer the body never writes
 * and used inside a loop: every thread loads it at block level. */
static const char ro_load[] =
	MOD_BEGIN
	"  func.func private @k0(%x: memref<4x64xf32>, %s: memref<4xf32>, "
	"%y: memref<4x64xf32>) attributes {pb.kernel} {\n"
	"    affine.parallel (%r) = (0) to (4) {\n"
	"      %v = affine.load %s[%r] : memref<4xf32>\n"
	"      %w = arith.mulf %v, %v : f32\n"
	ADD_ROW_XSY("%w");

/* A value loaded outside the loops from a buffer the body writes and used
 * inside a loop: it would cross thread loops, so the band is rejected. */
static const char escape[] =
	MOD_BEGIN
	"  func.func private @k0(%x: memref<4x64xf32>, %s: memref<4xf32>, "
	"%y: memref<4x64xf32>) attributes {pb.kernel} {\n"
	"    %c1 = arith.constant 1.000000e+00 : f32\n"
	"    affine.parallel (%r) = (0) to (4) {\n"
	"      %a = memref.alloca() : memref<f32>\n"
	"      %u = affine.load %s[%r] : memref<4xf32>\n"
	"      %u1 = arith.addf %u, %c1 : f32\n"
	"      affine.store %u1, %a[] : memref<f32>\n"
	"      %v = affine.load %a[] : memref<f32>\n"
	ADD_ROW_XSY("%v");

/* A reduction whose accumulator is also read elsewhere in the loop (an
 * online update): not a reduction, not parallel; nothing distributed. */
static const char acc_read[] =
	MOD_BEGIN
	"  func.func private @k0(%x: memref<4x64xf32>, %y: memref<4x64xf32>) "
	"attributes {pb.kernel} {\n"
	"    %c0 = arith.constant 0.000000e+00 : f32\n"
	"    affine.parallel (%r) = (0) to (4) {\n"
	"      %a = memref.alloca() : memref<f32>\n"
	"      affine.store %c0, %a[] : memref<f32>\n"
	"      affine.for %j = 0 to 64 {\n"
	"        %0 = affine.load %x[%r, %j] : memref<4x64xf32>\n"
	"        %1 = affine.load %a[] : memref<f32>\n"
	"        %2 = arith.addf %0, %1 : f32\n"
	"        affine.store %2, %a[] : memref<f32>\n"
	"        %3 = affine.load %a[] : memref<f32>\n"
	"        affine.store %3, %y[%r, %j] : memref<4x64xf32>\n"
	"      }\n"
	"    }\n"
	"    return\n"
	"  }\n"
	MAIN_XY;

/* Thread loops and barriers of a softmax row (per reduction over 2^k
 * partials: 1 partial loop, k tree levels, 1 final; 2 scalar and 2
 * parallel loops): 4 + 2 (2 + k) loops, a barrier between every two but
 * two loops of one thread in a row (the last tree level and the final
 * combination; the final combination and scalar work). */
static const struct red_case cases[] = {
	/* 48 B of allocas + 2 x 16 partials of f32 */
	{"softmax_rows", softmax_rows, 256, 1, 40, 48 + 2 * 64, 16, 13},
	/* 32 threads: 2 x 32 partials, 5 tree levels */
	{"softmax_2d", softmax_2d, 32, 1, 160, 168 + 2 * 128, 18, 15},
	/* 2 reductions over 128 (7 levels), 4 scalar runs, 2 parallel */
	{"layernorm", layernorm, 128, 1, 512,
	 4 + 4 + 4 + 4 + 512 + 512 + 4 + 4 + 2 * 512, 4 + 2 * 9 + 2, 19},
	/* 169 iterations over 256 partials (8 levels), 1 scalar */
	{"global_pool", global_pool, 256, 1, 169, 8 + 1024, 1 + 10 + 1, 9},
	/* two i32 accumulators over 300 with 64 threads (6 levels) */
	{"two_acc_i32", two_acc_i32, 64, 1, 300, 2 * 256, 1 + 8, 7},
	/* outer loop of the first nest, both loops of the second */
	{"partial_par", partial_par, 128, 1, 16 * 24 * 2, 0, 2, 1},
	/* f32 max and i64 index over 64 partials (6 levels), 3 scalar */
	{"argmax", argmax, 64, 1, 400, 12 + 64 * 4 + 64 * 8, 3 + 2 * 8, 14},
	/* 2 x 128 f16 partials and 32 f64 ones (7 + 5 levels) */
	{"types", types, 128, 1, 120, 2 * 128 * 2 + 32 * 8,
	 1 + 9 + 7, 14},
	{"view", view, 256, 0, 0, 0, 0, 0},
	{"scan", scan, 256, 0, 0, 0, 0, 0},
	/* block-level load and product, one parallel loop of 64 */
	{"ro_load", ro_load, 256, 1, 64, 0, 1, 0},
	{"escape", escape, 256, 0, 0, 0, 0, 0},
	{"acc_read", acc_read, 256, 0, 0, 0, 0, 0},
	/* not a power of 2 */
	{"bad_threads", softmax_rows, 100, 0, 0, 0, 0, 0},
};

/* Count the operations "name" in "root" whose "pb.map" is "map" (any
 * when NULL). */
static int count(MlirOperation root, const char *name, const char *map)
{
	struct pb_ir_ops all = {0};
	int n = 0;
	pb_ir_collect(root, name, &all);
	for (int i = 0; i < all.n; i++) {
		MlirStringRef s = pb_ir_str_attr(all.v[i], "pb.map");
		n += !map || (s.data && s.length == strlen(map) &&
			      !strncmp(s.data, map, s.length));
	}
	pb_ir_ops_free(&all);
	return n;
}

/* The band of the first nest of the first kernel of "m" into "b". */
static int first_band(MlirModule m, struct pb_kernel_band *b)
{
	for (MlirOperation f = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
	     !mlirOperationIsNull(f); f = mlirOperationGetNextInBlock(f)) {
		if (mlirAttributeIsNull(pb_ir_attr(f, "pb.kernel")))
			continue;
		for (MlirOperation op = mlirBlockGetFirstOperation(
			     pb_ir_entry_block(f));
		     !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
			if (pb_kernel_band_of(op, b))
				return 1;
	}
	return 0;
}

/* Parse "src" of case "name". */
static MlirModule parse(struct pb_ctx *ctx, const char *src, const char *name)
{
	struct pb_input in = {name, NULL, src, strlen(src)};
	return pb_ir_parse(ctx, &in);
}

/* Run "orig" and "mapped" on the CPU with the same random inputs and
 * compare their outputs; the comparison lines go to "report". */
static int same_numbers(struct pb_ctx *ctx, MlirModule orig,
			MlirModule mapped, struct pb_buf *report)
{
	struct pb_runtime_sig sig = {0};
	struct pb_runtime_opts o;
	int ok = 0;
	if (pb_runtime_cpu_signature(ctx, orig, &sig))
		return 0;
	struct pb_tensor *a = calloc(sig.nargs, sizeof(*a));
	struct pb_tensor *b = calloc(sig.nargs, sizeof(*b));
	pb_runtime_opts_init(&o);
	o.random = "7";
	if (!pb_runtime_bind(ctx, &sig, &o, NULL, a) &&
	    !pb_runtime_bind(ctx, &sig, &o, NULL, b) &&
	    !pb_runtime_cpu_run(ctx, orig, &sig, a) &&
	    !pb_runtime_cpu_run(ctx, mapped, &sig, b)) {
		ok = 1;
		for (int i = 0; i < sig.nargs; i++)
			if (sig.args[i].role == PB_RUNTIME_OUTPUT)
				ok &= !pb_runtime_compare(ctx, sig.args[i].name,
							  &b[i], &a[i], 1e-5,
							  1e-6, report);
	}
	pb_runtime_vals_free(a, sig.nargs);
	pb_runtime_vals_free(b, sig.nargs);
	pb_runtime_sig_free(&sig);
	return ok;
}

/* Write "m" to DIR/<name>.mlir when PB_TEST_OUT=DIR is set. */
static void dump(MlirModule m, const char *name)
{
	const char *dir = getenv("PB_TEST_OUT");
	char path[512];
	struct pb_buf t = {0};
	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s.mlir", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		return;
	mlirOperationPrint(mlirModuleGetOperation(m), pb_buf_mlir_callback, &t);
	fwrite(t.data, 1, t.len, f);
	fclose(f);
	pb_buf_free(&t);
}

/* Check case "c". */
static void run_case(struct pb_ctx *ctx, const struct red_case *c)
{
	char what[160];
	struct pb_kernel_band b;
	int64_t work = -1, smem = -1;
	MlirModule m = parse(ctx, c->src, c->name);
	snprintf(what, sizeof(what), "%s: parses with a band", c->name);
	check(!mlirModuleIsNull(m) && first_band(m, &b), what);
	if (mlirModuleIsNull(m))
		return;
	int got = pb_tile_reduce_match(&b, c->threads, &work, &smem);
	snprintf(what, sizeof(what), "%s: match %d (got %d)", c->name,
		 c->match, got);
	check(got == c->match, what);
	if (got && c->match) {
		snprintf(what, sizeof(what), "%s: work %lld smem %lld (got "
			 "%lld %lld)", c->name, (long long)c->work,
			 (long long)c->smem, (long long)work, (long long)smem);
		check(work == c->work && smem == c->smem, what);
		snprintf(what, sizeof(what), "%s: apply", c->name);
		check(pb_tile_reduce_apply(ctx, &b, c->threads) == PB_OK, what);
		MlirOperation top = mlirModuleGetOperation(m);
		snprintf(what, sizeof(what), "%s: verifies", c->name);
		int ok = mlirOperationVerify(top);
		check(ok, what);
		dump(m, c->name);
		int nb = count(top, "affine.parallel", "block");
		int nt = count(top, "affine.parallel", "thread");
		int nbar = count(top, "gpu.barrier", NULL);
		int nall = count(top, "affine.parallel", NULL);
		snprintf(what, sizeof(what), "%s: 1 block loop, %d thread loops, "
			 "%d barriers (got %d, %d, %d; %d unmapped)", c->name,
			 c->nthread, c->nbarrier, nb, nt, nbar,
			 nall - nb - nt);
		check(nb == 1 && nt == c->nthread && nbar == c->nbarrier &&
		      nall == nb + nt, what);
		MlirModule orig = parse(ctx, c->src, c->name);
		struct pb_buf report = {0};
		snprintf(what, sizeof(what), "%s: same numbers on the CPU",
			 c->name);
		check(ok && same_numbers(ctx, orig, m, &report), what);
		if (getenv("PB_TEST_OUT") && report.data)
			printf("%s: %s", c->name, report.data);
		pb_buf_free(&report);
		mlirModuleDestroy(orig);
	}
	mlirModuleDestroy(m);
}

int main(void)
{
	struct pb_ctx *ctx = pb_ctx_alloc("test_tile_reduce");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(ctx, &cases[i]);
	pb_ctx_free(ctx);
	return check_summary("test_tile_reduce");
}
