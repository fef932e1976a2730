// RUN: split-file %s %t
// Strided convolutions as implicit GEMM on mma.sync (docs/pb-mma.md,
// "Strided convolutions"): A's rows are S columns of the image apart, so
// pb-mma reads the input through a view of its last dimension split in
// (W / S, S): a window column s is the phase (s + off) mod S of it, its
// rows consecutive from row + (s + off) floordiv S.
// s2: 3x3/2, padding 1, batch 2, f16, 12x12 -> 6x6 (a masked block);
// k7: 7x7/2, padding 3, 3 input channels (ResNet-50's stem, masked k);
// p1: 1x1/2, no padding (ResNet-50's downsampling projection);
// bf: 3x3/2 in bf16; f32: 3x3/2 in f32 at --precision=fp16;
// odd: 3x3/2 over 11 columns, which the view cannot split: CUDA cores;
// f32 at --precision=tf32: a window on tf32 is not done, CUDA cores.
// RUN: pb-tile --remarks %t/s2.mlir -o %t/s2.tile.mlir 2>&1 | FileCheck --check-prefix=TILE %s
// RUN: pb-tile --remarks %t/k7.mlir -o %t/k7.tile.mlir 2>&1 | FileCheck --check-prefix=TILE %s
// RUN: pb-tile --remarks %t/p1.mlir -o %t/p1.tile.mlir 2>&1 | FileCheck --check-prefix=TILE %s
// RUN: pb-tile --remarks %t/bf.mlir -o %t/bf.tile.mlir 2>&1 | FileCheck --check-prefix=TILE %s
// RUN: pb-tile --precision=fp16 --remarks %t/f32.mlir -o %t/f32.tile.mlir 2>&1 | FileCheck --check-prefix=TILE %s
// RUN: pb-mma --remarks %t/s2.tile.mlir -o %t/s2.mma.mlir 2>&1 | FileCheck --check-prefix=REM %s
// RUN: pb-mma --remarks %t/k7.tile.mlir -o %t/k7.mma.mlir 2>&1 | FileCheck --check-prefix=REM %s
// RUN: pb-mma --remarks %t/p1.tile.mlir -o %t/p1.mma.mlir 2>&1 | FileCheck --check-prefix=REM %s
// RUN: pb-mma --remarks %t/bf.tile.mlir -o %t/bf.mma.mlir 2>&1 | FileCheck --check-prefix=REMBF %s
// RUN: pb-mma --precision=fp16 --remarks %t/f32.tile.mlir -o %t/f32.mma.mlir 2>&1 | FileCheck --check-prefix=REM %s
// RUN: FileCheck %s < %t/s2.mma.mlir
// RUN: FileCheck --check-prefix=ONE %s < %t/p1.mma.mlir
// RUN: FileCheck --check-prefix=F32 %s < %t/f32.mma.mlir
// RUN: pb-tile --remarks %t/odd.mlir 2>&1 >/dev/null | FileCheck --check-prefix=ODD %s
// RUN: pb-tile --precision=tf32 --remarks %t/f32.mlir 2>&1 >/dev/null | FileCheck --check-prefix=TF32 %s

// The numbers, against the fuse-level nests (CUDA cores' order of the
// sums). f32 at fp16 rounds the operands: within 2^-11 of each term.
// RUN: pb-run --random=1 --output %t/r2 %t/s2.mlir
// RUN: pb-run --random=1 --output %t/r7 %t/k7.mlir
// RUN: pb-run --random=1 --output %t/r1 %t/p1.mlir
// RUN: pb-run --random=1 --output %t/rb %t/bf.mlir
// RUN: pb-run --random=1 --output %t/rf %t/f32.mlir
// RUN: pb-run --random=1 --rtol=2e-3 --check %t/r2/y.npy %t/s2.mma.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --rtol=2e-3 --check %t/r7/y.npy %t/k7.mma.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --rtol=2e-3 --check %t/r1/y.npy %t/p1.mma.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --rtol=1e-2 --check %t/rb/y.npy %t/bf.mma.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --rtol=1e-2 --atol=1e-2 --check %t/rf/y.npy %t/f32.mma.mlir | FileCheck --check-prefix=NUM %s

// TILE: remark: left to pb-mma: a contraction for tensor cores
// REM: remark: on tensor cores: mma.sync m16n8k16 f16 -> f32
// REMBF: remark: on tensor cores: mma.sync m16n8k16 bf16 -> f32
// Other strides: 5x5/3 with padding 2 (24 columns: the view (8, 3)),
// strides (2, 1) and (1, 2); at pb-mma's stage and staged in one slot.
// RUN: pb-tile %t/k5s3.mlir | pb-mma -o %t/k5s3.mma.mlir
// RUN: pb-tile %t/s21.mlir | pb-mma -o %t/s21.mma.mlir
// RUN: pb-tile %t/s12.mlir | pb-mma -o %t/s12.mma.mlir
// RUN: FileCheck --check-prefix=K5 %s < %t/k5s3.mma.mlir
// RUN: pb-run --random=1 --output %t/r53 %t/k5s3.mlir
// RUN: pb-run --random=1 --output %t/r21 %t/s21.mlir
// RUN: pb-run --random=1 --output %t/r12 %t/s12.mlir
// RUN: pb-run --random=1 --rtol=2e-3 --check %t/r53/y.npy %t/k5s3.mma.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --rtol=2e-3 --check %t/r21/y.npy %t/s21.mma.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --rtol=2e-3 --check %t/r12/y.npy %t/s12.mma.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=1 %t/k5s3.mma.mlir | pb-run --random=1 --rtol=2e-3 --check %t/r53/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=1 %t/s21.mma.mlir | pb-run --random=1 --rtol=2e-3 --check %t/r21/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=1 %t/s12.mma.mlir | pb-run --random=1 --rtol=2e-3 --check %t/r12/y.npy - | FileCheck --check-prefix=NUM %s
// K5-DAG: affine_map<(d0) -> ((d0 - 2) mod 3)>
// K5-DAG: affine_map<(d0, d1) -> (d0 + (d1 - 2) floordiv 3)>
// K5: memref.expand_shape {{.*}} output_shape [1, 16, 24, 8, 3]

// NUM: output 'y': {{.*}}: ok
// ODD: remark: not for tensor cores: a strided convolution's image columns are not its input's last dimension, of a multiple of the stride
// TF32: remark: not for tensor cores: a convolution's window on tf32 tensor cores

// The view (6, 2) of the image's 12 columns, before the block loop; the
// window row 2h + r - 1 clamped, as at stride 1; the window column's
// phase (s - 1) mod 2, its rows from row + (s - 1) floordiv 2, masked
// before the image; rows along the view's columns, k along the channels.
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0 * 2 + d1 - 1)>
// CHECK-DAG: #[[PH:.*]] = affine_map<(d0) -> ((d0 - 1) mod 2)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d0 + (d1 - 1) floordiv 2)>
// CHECK-DAG: #[[PERM:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, d1)>
// CHECK-LABEL: func.func private @k1_Conv_0
// CHECK: %[[X:.*]] = memref.expand_shape %arg1 {{\[\[}}0], [1], [2], [3, 4]] output_shape [2, 32, 12, 6, 2] : memref<2x32x12x12xf16> into memref<2x32x12x6x2xf16>
// CHECK: affine.parallel ({{.*}}) = (0, 0, 0, 0) to (2, 16, 6, 16) step (1, 16, 1, 16)
// CHECK: affine.for %[[R:.*]] = 0 to 3 iter_args
// CHECK-NEXT: affine.for %[[S:.*]] = 0 to 3 iter_args
// CHECK: affine.apply #[[ROW]](%{{.*}}, %[[R]])
// CHECK: %[[Q:.*]] = affine.apply #[[PH]](%[[S]])
// CHECK: affine.for %[[K:.*]] = 0 to 32 step 16 iter_args
// CHECK: %[[C:.*]] = affine.apply #[[COL]](%{{.*}}, %[[S]])
// CHECK: %[[M:.*]] = arith.xori
// CHECK: vector.transfer_read %[[X]][%{{.*}}, %[[K]], %{{.*}}, %[[C]], %[[Q]]], %{{.*}}, %[[M]] {in_bounds = [false, true], permutation_map = #[[PERM]]} : memref<2x32x12x6x2xf16>, vector<16x16xf16>
// CHECK: vector.transfer_read %arg2[%{{.*}}, %[[K]], %[[R]], %[[S]]]
// CHECK: vector.contract

// 1x1/2: no window loops; the image rows 2h, the columns the view's
// (8, 2) at phase 0, unmasked.
// ONE-DAG: #[[TWO:.*]] = affine_map<(d0) -> (d0 * 2)>
// ONE-LABEL: func.func private @k1_Conv_0
// ONE: %[[X:.*]] = memref.expand_shape %arg0 {{\[\[}}0], [1], [2], [3, 4]] output_shape [1, 32, 16, 8, 2]
// ONE-NOT: affine.for %{{.*}} = 0 to 1 iter_args
// ONE: %[[H:.*]] = affine.apply #[[TWO]](%arg
// ONE: affine.for %[[K:.*]] = 0 to 32 step 16 iter_args
// ONE: vector.transfer_read %[[X]][%{{.*}}, %[[K]], %[[H]], %{{.*}}, %c0{{.*}}], %{{.*}} {in_bounds = [false, true], {{.*}}} : memref<1x32x16x8x2xf16>, vector<16x16xf16>

// f32 data at fp16: read from the f32 view, rounded to f16.
// F32: memref.expand_shape %arg1 {{.*}} into memref<1x32x12x6x2xf32>
// F32: %[[A:.*]] = vector.transfer_read {{.*}} : memref<1x32x12x6x2xf32>, vector<16x16xf32>
// F32-NEXT: arith.truncf %[[A]] : vector<16x16xf32> to vector<16x16xf16>

//--- s2.mlir
#map = affine_map<(d0, d1) -> (d0 * 2 + d1 - 1)>
#map1 = affine_map<(d0, d1) -> (0, d0 * 2 + d1 - 1)>
#map2 = affine_map<(d0) -> (11, d0)>
module attributes {pb.stage = "fuse"} {
  func.func private @k0_Conv_0(%arg0: memref<16xf16>, %arg1: memref<16xf32>) attributes {pb.kernel, pb.nodes = ["Conv_0"]} {
    affine.parallel (%arg2) = (0) to (16) {
      %0 = affine.load %arg0[%arg2] : memref<16xf16>
      %1 = arith.extf %0 : f16 to f32
      affine.store %1, %arg1[%arg2] : memref<16xf32>
    }
    return
  }
  func.func private @k1_Conv_0(%arg0: memref<16xf32>, %arg1: memref<2x32x12x12xf16>, %arg2: memref<16x32x3x3xf16>, %arg3: memref<2x16x6x6xf16>) attributes {pb.kernel, pb.nodes = ["Conv_0", "Relu_1"]} {
    %c12 = arith.constant 12 : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f16
    %cst_0 = arith.constant 0.000000e+00 : f32
    affine.parallel (%arg4) = (0) to (2) {
      affine.parallel (%arg5) = (0) to (16) {
        affine.parallel (%arg6) = (0) to (6) {
          affine.parallel (%arg7) = (0) to (6) {
            %alloca = memref.alloca() : memref<f16>
            %alloca_1 = memref.alloca() : memref<f32>
            %0 = affine.load %arg0[%arg5] : memref<16xf32>
            affine.store %0, %alloca_1[] : memref<f32>
            affine.for %arg8 = 0 to 32 {
              affine.for %arg9 = 0 to 3 {
                affine.for %arg10 = 0 to 3 {
                  %7 = affine.apply #map(%arg6, %arg9)
                  %8 = arith.cmpi sge, %7, %c0 : index
                  %9 = arith.cmpi slt, %7, %c12 : index
                  %10 = arith.andi %8, %9 : i1
                  %11 = affine.max #map1(%arg6, %arg9)
                  %12 = affine.min #map2(%11)
                  %13 = affine.apply #map(%arg7, %arg10)
                  %14 = arith.cmpi sge, %13, %c0 : index
                  %15 = arith.cmpi slt, %13, %c12 : index
                  %16 = arith.andi %14, %15 : i1
                  %17 = arith.andi %10, %16 : i1
                  %18 = affine.max #map1(%arg7, %arg10)
                  %19 = affine.min #map2(%18)
                  %20 = memref.load %arg1[%arg4, %arg8, %12, %19] : memref<2x32x12x12xf16>
                  %21 = arith.select %17, %20, %cst : f16
                  %22 = affine.load %arg2[%arg5, %arg8, %arg9, %arg10] : memref<16x32x3x3xf16>
                  %23 = affine.load %alloca_1[] : memref<f32>
                  %24 = arith.extf %21 : f16 to f32
                  %25 = arith.extf %22 : f16 to f32
                  %26 = arith.mulf %24, %25 : f32
                  %27 = arith.addf %23, %26 : f32
                  affine.store %27, %alloca_1[] : memref<f32>
                }
              }
            }
            %1 = affine.load %alloca_1[] : memref<f32>
            %2 = arith.truncf %1 : f32 to f16
            affine.store %2, %alloca[] : memref<f16>
            %3 = affine.load %alloca[] : memref<f16>
            %4 = arith.extf %3 : f16 to f32
            %5 = arith.maximumf %4, %cst_0 : f32
            %6 = arith.truncf %5 : f32 to f16
            affine.store %6, %arg3[%arg4, %arg5, %arg6, %arg7] : memref<2x16x6x6xf16>
          }
        }
      }
    }
    return
  }
  func.func @main(%arg0: memref<2x32x12x12xf16> {pb.name = "x"}, %arg1: memref<16x32x3x3xf16> {pb.name = "w"}, %arg2: memref<16xf16> {pb.name = "b"}, %arg3: memref<2x16x6x6xf16> {pb.name = "y", pb.output}) {
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    call @k0_Conv_0(%arg2, %alloc) : (memref<16xf16>, memref<16xf32>) -> ()
    call @k1_Conv_0(%alloc, %arg0, %arg1, %arg3) : (memref<16xf32>, memref<2x32x12x12xf16>, memref<16x32x3x3xf16>, memref<2x16x6x6xf16>) -> ()
    memref.dealloc %alloc : memref<16xf32>
    return
  }
}

//--- k7.mlir
#map = affine_map<(d0, d1) -> (d0 * 2 + d1 - 3)>
#map1 = affine_map<(d0, d1) -> (0, d0 * 2 + d1 - 3)>
#map2 = affine_map<(d0) -> (15, d0)>
module attributes {pb.stage = "fuse"} {
  func.func private @k0_Conv_0(%arg0: memref<16xf16>, %arg1: memref<1x16x8x8xf32>) attributes {pb.kernel, pb.nodes = ["Conv_0"]} {
    affine.parallel (%arg2) = (0) to (16) {
      %alloca = memref.alloca() : memref<f32>
      %0 = affine.load %arg0[%arg2] : memref<16xf16>
      %1 = arith.extf %0 : f16 to f32
      affine.store %1, %alloca[] : memref<f32>
      affine.for %arg3 = 0 to 8 {
        affine.for %arg4 = 0 to 8 {
          %2 = affine.load %alloca[] : memref<f32>
          affine.store %2, %arg1[0, %arg2, %arg3, %arg4] : memref<1x16x8x8xf32>
        }
      }
    }
    return
  }
  func.func private @k1_Conv_0(%arg0: memref<1x3x16x16xf16>, %arg1: memref<16x3x7x7xf16>, %arg2: memref<1x16x8x8xf32>, %arg3: memref<1x16x8x8xf16>) attributes {pb.kernel, pb.nodes = ["Conv_0", "Relu_1"]} {
    %c16 = arith.constant 16 : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f16
    %cst_0 = arith.constant 0.000000e+00 : f32
    affine.parallel (%arg4) = (0) to (16) {
      affine.parallel (%arg5) = (0) to (8) {
        affine.parallel (%arg6) = (0) to (8) {
          %alloca = memref.alloca() : memref<1xf16>
          affine.for %arg7 = 0 to 3 {
            affine.for %arg8 = 0 to 7 {
              affine.for %arg9 = 0 to 7 {
                %6 = affine.apply #map(%arg5, %arg8)
                %7 = arith.cmpi sge, %6, %c0 : index
                %8 = arith.cmpi slt, %6, %c16 : index
                %9 = arith.andi %7, %8 : i1
                %10 = affine.max #map1(%arg5, %arg8)
                %11 = affine.min #map2(%10)
                %12 = affine.apply #map(%arg6, %arg9)
                %13 = arith.cmpi sge, %12, %c0 : index
                %14 = arith.cmpi slt, %12, %c16 : index
                %15 = arith.andi %13, %14 : i1
                %16 = arith.andi %9, %15 : i1
                %17 = affine.max #map1(%arg6, %arg9)
                %18 = affine.min #map2(%17)
                %19 = memref.load %arg0[%c0, %arg7, %11, %18] : memref<1x3x16x16xf16>
                %20 = arith.select %16, %19, %cst : f16
                %21 = affine.load %arg1[%arg4, %arg7, %arg8, %arg9] : memref<16x3x7x7xf16>
                %22 = affine.load %arg2[0, %arg4, %arg5, %arg6] : memref<1x16x8x8xf32>
                %23 = arith.extf %20 : f16 to f32
                %24 = arith.extf %21 : f16 to f32
                %25 = arith.mulf %23, %24 : f32
                %26 = arith.addf %22, %25 : f32
                affine.store %26, %arg2[0, %arg4, %arg5, %arg6] : memref<1x16x8x8xf32>
              }
            }
          }
          %0 = affine.load %arg2[0, %arg4, %arg5, %arg6] : memref<1x16x8x8xf32>
          %1 = arith.truncf %0 : f32 to f16
          affine.store %1, %alloca[0] : memref<1xf16>
          %2 = affine.load %alloca[0] : memref<1xf16>
          %3 = arith.extf %2 : f16 to f32
          %4 = arith.maximumf %3, %cst_0 : f32
          %5 = arith.truncf %4 : f32 to f16
          affine.store %5, %arg3[0, %arg4, %arg5, %arg6] : memref<1x16x8x8xf16>
        }
      }
    }
    return
  }
  func.func @main(%arg0: memref<1x3x16x16xf16> {pb.name = "x"}, %arg1: memref<16x3x7x7xf16> {pb.name = "w"}, %arg2: memref<16xf16> {pb.name = "b"}, %arg3: memref<1x16x8x8xf16> {pb.name = "y", pb.output}) {
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<1x16x8x8xf32>
    call @k0_Conv_0(%arg2, %alloc) : (memref<16xf16>, memref<1x16x8x8xf32>) -> ()
    call @k1_Conv_0(%arg0, %arg1, %alloc, %arg3) : (memref<1x3x16x16xf16>, memref<16x3x7x7xf16>, memref<1x16x8x8xf32>, memref<1x16x8x8xf16>) -> ()
    memref.dealloc %alloc : memref<1x16x8x8xf32>
    return
  }
}

//--- p1.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_Conv_0(%arg0: memref<24xf16>, %arg1: memref<1x24x8x8xf32>) attributes {pb.kernel, pb.nodes = ["Conv_0"]} {
    affine.parallel (%arg2) = (0) to (24) {
      %alloca = memref.alloca() : memref<f32>
      %0 = affine.load %arg0[%arg2] : memref<24xf16>
      %1 = arith.extf %0 : f16 to f32
      affine.store %1, %alloca[] : memref<f32>
      affine.for %arg3 = 0 to 8 {
        affine.for %arg4 = 0 to 8 {
          %2 = affine.load %alloca[] : memref<f32>
          affine.store %2, %arg1[0, %arg2, %arg3, %arg4] : memref<1x24x8x8xf32>
        }
      }
    }
    return
  }
  func.func private @k1_Conv_0(%arg0: memref<1x32x16x16xf16>, %arg1: memref<24x32x1x1xf16>, %arg2: memref<1x24x8x8xf32>, %arg3: memref<1x24x8x8xf16>) attributes {pb.kernel, pb.nodes = ["Conv_0", "Relu_1"]} {
    %cst = arith.constant 0.000000e+00 : f32
    affine.parallel (%arg4) = (0) to (24) {
      affine.parallel (%arg5) = (0) to (8) {
        affine.parallel (%arg6) = (0) to (8) {
          %alloca = memref.alloca() : memref<1xf16>
          affine.for %arg7 = 0 to 32 {
            %6 = affine.load %arg0[0, %arg7, %arg5 * 2, %arg6 * 2] : memref<1x32x16x16xf16>
            %7 = affine.load %arg1[%arg4, %arg7, 0, 0] : memref<24x32x1x1xf16>
            %8 = affine.load %arg2[0, %arg4, %arg5, %arg6] : memref<1x24x8x8xf32>
            %9 = arith.extf %6 : f16 to f32
            %10 = arith.extf %7 : f16 to f32
            %11 = arith.mulf %9, %10 : f32
            %12 = arith.addf %8, %11 : f32
            affine.store %12, %arg2[0, %arg4, %arg5, %arg6] : memref<1x24x8x8xf32>
          }
          %0 = affine.load %arg2[0, %arg4, %arg5, %arg6] : memref<1x24x8x8xf32>
          %1 = arith.truncf %0 : f32 to f16
          affine.store %1, %alloca[0] : memref<1xf16>
          %2 = affine.load %alloca[0] : memref<1xf16>
          %3 = arith.extf %2 : f16 to f32
          %4 = arith.maximumf %3, %cst : f32
          %5 = arith.truncf %4 : f32 to f16
          affine.store %5, %arg3[0, %arg4, %arg5, %arg6] : memref<1x24x8x8xf16>
        }
      }
    }
    return
  }
  func.func @main(%arg0: memref<1x32x16x16xf16> {pb.name = "x"}, %arg1: memref<24x32x1x1xf16> {pb.name = "w"}, %arg2: memref<24xf16> {pb.name = "b"}, %arg3: memref<1x24x8x8xf16> {pb.name = "y", pb.output}) {
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<1x24x8x8xf32>
    call @k0_Conv_0(%arg2, %alloc) : (memref<24xf16>, memref<1x24x8x8xf32>) -> ()
    call @k1_Conv_0(%arg0, %arg1, %alloc, %arg3) : (memref<1x32x16x16xf16>, memref<24x32x1x1xf16>, memref<1x24x8x8xf32>, memref<1x24x8x8xf16>) -> ()
    memref.dealloc %alloc : memref<1x24x8x8xf32>
    return
  }
}

//--- bf.mlir
#map = affine_map<(d0, d1) -> (d0 * 2 + d1 - 1)>
#map1 = affine_map<(d0, d1) -> (0, d0 * 2 + d1 - 1)>
#map2 = affine_map<(d0) -> (11, d0)>
module attributes {pb.stage = "fuse"} {
  func.func private @k0_Conv_0(%arg0: memref<16xbf16>, %arg1: memref<1x16x6x6xf32>) attributes {pb.kernel, pb.nodes = ["Conv_0"]} {
    affine.parallel (%arg2) = (0) to (16) {
      %alloca = memref.alloca() : memref<f32>
      %0 = affine.load %arg0[%arg2] : memref<16xbf16>
      %1 = arith.extf %0 : bf16 to f32
      affine.store %1, %alloca[] : memref<f32>
      affine.for %arg3 = 0 to 6 {
        affine.for %arg4 = 0 to 6 {
          %2 = affine.load %alloca[] : memref<f32>
          affine.store %2, %arg1[0, %arg2, %arg3, %arg4] : memref<1x16x6x6xf32>
        }
      }
    }
    return
  }
  func.func private @k1_Conv_0(%arg0: memref<1x32x12x12xbf16>, %arg1: memref<16x32x3x3xbf16>, %arg2: memref<1x16x6x6xf32>, %arg3: memref<1x16x6x6xbf16>) attributes {pb.kernel, pb.nodes = ["Conv_0", "Relu_1"]} {
    %c12 = arith.constant 12 : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : bf16
    %cst_0 = arith.constant 0.000000e+00 : f32
    affine.parallel (%arg4) = (0) to (16) {
      affine.parallel (%arg5) = (0) to (6) {
        affine.parallel (%arg6) = (0) to (6) {
          %alloca = memref.alloca() : memref<1xbf16>
          affine.for %arg7 = 0 to 32 {
            affine.for %arg8 = 0 to 3 {
              affine.for %arg9 = 0 to 3 {
                %6 = affine.apply #map(%arg5, %arg8)
                %7 = arith.cmpi sge, %6, %c0 : index
                %8 = arith.cmpi slt, %6, %c12 : index
                %9 = arith.andi %7, %8 : i1
                %10 = affine.max #map1(%arg5, %arg8)
                %11 = affine.min #map2(%10)
                %12 = affine.apply #map(%arg6, %arg9)
                %13 = arith.cmpi sge, %12, %c0 : index
                %14 = arith.cmpi slt, %12, %c12 : index
                %15 = arith.andi %13, %14 : i1
                %16 = arith.andi %9, %15 : i1
                %17 = affine.max #map1(%arg6, %arg9)
                %18 = affine.min #map2(%17)
                %19 = memref.load %arg0[%c0, %arg7, %11, %18] : memref<1x32x12x12xbf16>
                %20 = arith.select %16, %19, %cst : bf16
                %21 = affine.load %arg1[%arg4, %arg7, %arg8, %arg9] : memref<16x32x3x3xbf16>
                %22 = affine.load %arg2[0, %arg4, %arg5, %arg6] : memref<1x16x6x6xf32>
                %23 = arith.extf %20 : bf16 to f32
                %24 = arith.extf %21 : bf16 to f32
                %25 = arith.mulf %23, %24 : f32
                %26 = arith.addf %22, %25 : f32
                affine.store %26, %arg2[0, %arg4, %arg5, %arg6] : memref<1x16x6x6xf32>
              }
            }
          }
          %0 = affine.load %arg2[0, %arg4, %arg5, %arg6] : memref<1x16x6x6xf32>
          %1 = arith.truncf %0 : f32 to bf16
          affine.store %1, %alloca[0] : memref<1xbf16>
          %2 = affine.load %alloca[0] : memref<1xbf16>
          %3 = arith.extf %2 : bf16 to f32
          %4 = arith.maximumf %3, %cst_0 : f32
          %5 = arith.truncf %4 : f32 to bf16
          affine.store %5, %arg3[0, %arg4, %arg5, %arg6] : memref<1x16x6x6xbf16>
        }
      }
    }
    return
  }
  func.func @main(%arg0: memref<1x32x12x12xbf16> {pb.name = "x"}, %arg1: memref<16x32x3x3xbf16> {pb.name = "w"}, %arg2: memref<16xbf16> {pb.name = "b"}, %arg3: memref<1x16x6x6xbf16> {pb.name = "y", pb.output}) {
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<1x16x6x6xf32>
    call @k0_Conv_0(%arg2, %alloc) : (memref<16xbf16>, memref<1x16x6x6xf32>) -> ()
    call @k1_Conv_0(%arg0, %arg1, %alloc, %arg3) : (memref<1x32x12x12xbf16>, memref<16x32x3x3xbf16>, memref<1x16x6x6xf32>, memref<1x16x6x6xbf16>) -> ()
    memref.dealloc %alloc : memref<1x16x6x6xf32>
    return
  }
}

//--- f32.mlir
#map = affine_map<(d0, d1) -> (d0 * 2 + d1 - 1)>
#map1 = affine_map<(d0, d1) -> (0, d0 * 2 + d1 - 1)>
#map2 = affine_map<(d0) -> (11, d0)>
module attributes {pb.stage = "fuse"} {
  func.func private @k0_Conv_0(%arg0: memref<16xf32>, %arg1: memref<1x32x12x12xf32>, %arg2: memref<16x32x3x3xf32>, %arg3: memref<1x16x6x6xf32>) attributes {pb.kernel, pb.nodes = ["Conv_0", "Relu_1"]} {
    %c12 = arith.constant 12 : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f32
    affine.parallel (%arg4) = (0) to (16) {
      affine.parallel (%arg5) = (0) to (6) {
        affine.parallel (%arg6) = (0) to (6) {
          %alloca = memref.alloca() : memref<1xf32>
          %0 = affine.load %arg0[%arg4] : memref<16xf32>
          affine.store %0, %alloca[0] : memref<1xf32>
          affine.for %arg7 = 0 to 32 {
            affine.for %arg8 = 0 to 3 {
              affine.for %arg9 = 0 to 3 {
                %3 = affine.apply #map(%arg5, %arg8)
                %4 = arith.cmpi sge, %3, %c0 : index
                %5 = arith.cmpi slt, %3, %c12 : index
                %6 = arith.andi %4, %5 : i1
                %7 = affine.max #map1(%arg5, %arg8)
                %8 = affine.min #map2(%7)
                %9 = affine.apply #map(%arg6, %arg9)
                %10 = arith.cmpi sge, %9, %c0 : index
                %11 = arith.cmpi slt, %9, %c12 : index
                %12 = arith.andi %10, %11 : i1
                %13 = arith.andi %6, %12 : i1
                %14 = affine.max #map1(%arg6, %arg9)
                %15 = affine.min #map2(%14)
                %16 = memref.load %arg1[%c0, %arg7, %8, %15] : memref<1x32x12x12xf32>
                %17 = arith.select %13, %16, %cst : f32
                %18 = affine.load %arg2[%arg4, %arg7, %arg8, %arg9] : memref<16x32x3x3xf32>
                %19 = affine.load %alloca[0] : memref<1xf32>
                %20 = arith.mulf %17, %18 : f32
                %21 = arith.addf %19, %20 : f32
                affine.store %21, %alloca[0] : memref<1xf32>
              }
            }
          }
          %1 = affine.load %alloca[0] : memref<1xf32>
          %2 = arith.maximumf %1, %cst : f32
          affine.store %2, %arg3[0, %arg4, %arg5, %arg6] : memref<1x16x6x6xf32>
        }
      }
    }
    return
  }
  func.func @main(%arg0: memref<1x32x12x12xf32> {pb.name = "x"}, %arg1: memref<16x32x3x3xf32> {pb.name = "w"}, %arg2: memref<16xf32> {pb.name = "b"}, %arg3: memref<1x16x6x6xf32> {pb.name = "y", pb.output}) {
    call @k0_Conv_0(%arg2, %arg0, %arg1, %arg3) : (memref<16xf32>, memref<1x32x12x12xf32>, memref<16x32x3x3xf32>, memref<1x16x6x6xf32>) -> ()
    return
  }
}

//--- odd.mlir
#map = affine_map<(d0, d1) -> (d0 * 2 + d1 - 1)>
#map1 = affine_map<(d0, d1) -> (0, d0 * 2 + d1 - 1)>
#map2 = affine_map<(d0) -> (10, d0)>
module attributes {pb.stage = "fuse"} {
  func.func private @k0_Conv_0(%arg0: memref<16xf16>, %arg1: memref<1x16x6x6xf32>) attributes {pb.kernel, pb.nodes = ["Conv_0"]} {
    affine.parallel (%arg2) = (0) to (16) {
      %alloca = memref.alloca() : memref<f32>
      %0 = affine.load %arg0[%arg2] : memref<16xf16>
      %1 = arith.extf %0 : f16 to f32
      affine.store %1, %alloca[] : memref<f32>
      affine.for %arg3 = 0 to 6 {
        affine.for %arg4 = 0 to 6 {
          %2 = affine.load %alloca[] : memref<f32>
          affine.store %2, %arg1[0, %arg2, %arg3, %arg4] : memref<1x16x6x6xf32>
        }
      }
    }
    return
  }
  func.func private @k1_Conv_0(%arg0: memref<1x16x11x11xf16>, %arg1: memref<16x16x3x3xf16>, %arg2: memref<1x16x6x6xf32>, %arg3: memref<1x16x6x6xf16>) attributes {pb.kernel, pb.nodes = ["Conv_0", "Relu_1"]} {
    %c11 = arith.constant 11 : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f16
    %cst_0 = arith.constant 0.000000e+00 : f32
    affine.parallel (%arg4) = (0) to (16) {
      affine.parallel (%arg5) = (0) to (6) {
        affine.parallel (%arg6) = (0) to (6) {
          %alloca = memref.alloca() : memref<1xf16>
          affine.for %arg7 = 0 to 16 {
            affine.for %arg8 = 0 to 3 {
              affine.for %arg9 = 0 to 3 {
                %6 = affine.apply #map(%arg5, %arg8)
                %7 = arith.cmpi sge, %6, %c0 : index
                %8 = arith.cmpi slt, %6, %c11 : index
                %9 = arith.andi %7, %8 : i1
                %10 = affine.max #map1(%arg5, %arg8)
                %11 = affine.min #map2(%10)
                %12 = affine.apply #map(%arg6, %arg9)
                %13 = arith.cmpi sge, %12, %c0 : index
                %14 = arith.cmpi slt, %12, %c11 : index
                %15 = arith.andi %13, %14 : i1
                %16 = arith.andi %9, %15 : i1
                %17 = affine.max #map1(%arg6, %arg9)
                %18 = affine.min #map2(%17)
                %19 = memref.load %arg0[%c0, %arg7, %11, %18] : memref<1x16x11x11xf16>
                %20 = arith.select %16, %19, %cst : f16
                %21 = affine.load %arg1[%arg4, %arg7, %arg8, %arg9] : memref<16x16x3x3xf16>
                %22 = affine.load %arg2[0, %arg4, %arg5, %arg6] : memref<1x16x6x6xf32>
                %23 = arith.extf %20 : f16 to f32
                %24 = arith.extf %21 : f16 to f32
                %25 = arith.mulf %23, %24 : f32
                %26 = arith.addf %22, %25 : f32
                affine.store %26, %arg2[0, %arg4, %arg5, %arg6] : memref<1x16x6x6xf32>
              }
            }
          }
          %0 = affine.load %arg2[0, %arg4, %arg5, %arg6] : memref<1x16x6x6xf32>
          %1 = arith.truncf %0 : f32 to f16
          affine.store %1, %alloca[0] : memref<1xf16>
          %2 = affine.load %alloca[0] : memref<1xf16>
          %3 = arith.extf %2 : f16 to f32
          %4 = arith.maximumf %3, %cst_0 : f32
          %5 = arith.truncf %4 : f32 to f16
          affine.store %5, %arg3[0, %arg4, %arg5, %arg6] : memref<1x16x6x6xf16>
        }
      }
    }
    return
  }
  func.func @main(%arg0: memref<1x16x11x11xf16> {pb.name = "x"}, %arg1: memref<16x16x3x3xf16> {pb.name = "w"}, %arg2: memref<16xf16> {pb.name = "b"}, %arg3: memref<1x16x6x6xf16> {pb.name = "y", pb.output}) {
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<1x16x6x6xf32>
    call @k0_Conv_0(%arg2, %alloc) : (memref<16xf16>, memref<1x16x6x6xf32>) -> ()
    call @k1_Conv_0(%arg0, %arg1, %alloc, %arg3) : (memref<1x16x11x11xf16>, memref<16x16x3x3xf16>, memref<1x16x6x6xf32>, memref<1x16x6x6xf16>) -> ()
    memref.dealloc %alloc : memref<1x16x6x6xf32>
    return
  }
}

//--- k5s3.mlir
#map = affine_map<(d0, d1) -> (d0 * 3 + d1 - 2)>
#map1 = affine_map<(d0, d1) -> (0, d0 * 3 + d1 - 2)>
#map2 = affine_map<(d0) -> (23, d0)>
module attributes {pb.stage = "fuse"} {
  func.func private @k0_Conv_0(%arg0: memref<24xf16>, %arg1: memref<1x24x8x8xf32>) attributes {pb.kernel, pb.nodes = ["Conv_0"]} {
    affine.parallel (%arg2) = (0) to (24) {
      %alloca = memref.alloca() : memref<f32>
      %0 = affine.load %arg0[%arg2] : memref<24xf16>
      %1 = arith.extf %0 : f16 to f32
      affine.store %1, %alloca[] : memref<f32>
      affine.for %arg3 = 0 to 8 {
        affine.for %arg4 = 0 to 8 {
          %2 = affine.load %alloca[] : memref<f32>
          affine.store %2, %arg1[0, %arg2, %arg3, %arg4] : memref<1x24x8x8xf32>
        }
      }
    }
    return
  }
  func.func private @k1_Conv_0(%arg0: memref<1x16x24x24xf16>, %arg1: memref<24x16x5x5xf16>, %arg2: memref<1x24x8x8xf32>, %arg3: memref<1x24x8x8xf16>) attributes {pb.kernel, pb.nodes = ["Conv_0", "Relu_1"]} {
    %c24 = arith.constant 24 : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f16
    %cst_0 = arith.constant 0.000000e+00 : f32
    affine.parallel (%arg4) = (0) to (24) {
      affine.parallel (%arg5) = (0) to (8) {
        affine.parallel (%arg6) = (0) to (8) {
          %alloca = memref.alloca() : memref<1xf16>
          affine.for %arg7 = 0 to 16 {
            affine.for %arg8 = 0 to 5 {
              affine.for %arg9 = 0 to 5 {
                %6 = affine.apply #map(%arg5, %arg8)
                %7 = arith.cmpi sge, %6, %c0 : index
                %8 = arith.cmpi slt, %6, %c24 : index
                %9 = arith.andi %7, %8 : i1
                %10 = affine.max #map1(%arg5, %arg8)
                %11 = affine.min #map2(%10)
                %12 = affine.apply #map(%arg6, %arg9)
                %13 = arith.cmpi sge, %12, %c0 : index
                %14 = arith.cmpi slt, %12, %c24 : index
                %15 = arith.andi %13, %14 : i1
                %16 = arith.andi %9, %15 : i1
                %17 = affine.max #map1(%arg6, %arg9)
                %18 = affine.min #map2(%17)
                %19 = memref.load %arg0[%c0, %arg7, %11, %18] : memref<1x16x24x24xf16>
                %20 = arith.select %16, %19, %cst : f16
                %21 = affine.load %arg1[%arg4, %arg7, %arg8, %arg9] : memref<24x16x5x5xf16>
                %22 = affine.load %arg2[0, %arg4, %arg5, %arg6] : memref<1x24x8x8xf32>
                %23 = arith.extf %20 : f16 to f32
                %24 = arith.extf %21 : f16 to f32
                %25 = arith.mulf %23, %24 : f32
                %26 = arith.addf %22, %25 : f32
                affine.store %26, %arg2[0, %arg4, %arg5, %arg6] : memref<1x24x8x8xf32>
              }
            }
          }
          %0 = affine.load %arg2[0, %arg4, %arg5, %arg6] : memref<1x24x8x8xf32>
          %1 = arith.truncf %0 : f32 to f16
          affine.store %1, %alloca[0] : memref<1xf16>
          %2 = affine.load %alloca[0] : memref<1xf16>
          %3 = arith.extf %2 : f16 to f32
          %4 = arith.maximumf %3, %cst_0 : f32
          %5 = arith.truncf %4 : f32 to f16
          affine.store %5, %arg3[0, %arg4, %arg5, %arg6] : memref<1x24x8x8xf16>
        }
      }
    }
    return
  }
  func.func @main(%arg0: memref<1x16x24x24xf16> {pb.name = "x"}, %arg1: memref<24x16x5x5xf16> {pb.name = "w"}, %arg2: memref<24xf16> {pb.name = "b"}, %arg3: memref<1x24x8x8xf16> {pb.name = "y", pb.output}) {
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<1x24x8x8xf32>
    call @k0_Conv_0(%arg2, %alloc) : (memref<24xf16>, memref<1x24x8x8xf32>) -> ()
    call @k1_Conv_0(%arg0, %arg1, %alloc, %arg3) : (memref<1x16x24x24xf16>, memref<24x16x5x5xf16>, memref<1x24x8x8xf32>, memref<1x24x8x8xf16>) -> ()
    memref.dealloc %alloc : memref<1x24x8x8xf32>
    return
  }
}

//--- s21.mlir
#map = affine_map<(d0, d1) -> (d0 * 2 + d1 - 1)>
#map1 = affine_map<(d0, d1) -> (0, d0 * 2 + d1 - 1)>
#map2 = affine_map<(d0) -> (11, d0)>
#map3 = affine_map<(d0, d1) -> (d0 + d1 - 1)>
#map4 = affine_map<(d0, d1) -> (0, d0 + d1 - 1)>
module attributes {pb.stage = "fuse"} {
  func.func private @k0_Conv_0(%arg0: memref<16xf16>, %arg1: memref<1x16x6x12xf32>) attributes {pb.kernel, pb.nodes = ["Conv_0"]} {
    affine.parallel (%arg2) = (0) to (16) {
      %alloca = memref.alloca() : memref<f32>
      %0 = affine.load %arg0[%arg2] : memref<16xf16>
      %1 = arith.extf %0 : f16 to f32
      affine.store %1, %alloca[] : memref<f32>
      affine.for %arg3 = 0 to 6 {
        affine.for %arg4 = 0 to 12 {
          %2 = affine.load %alloca[] : memref<f32>
          affine.store %2, %arg1[0, %arg2, %arg3, %arg4] : memref<1x16x6x12xf32>
        }
      }
    }
    return
  }
  func.func private @k1_Conv_0(%arg0: memref<1x16x12x12xf16>, %arg1: memref<16x16x3x3xf16>, %arg2: memref<1x16x6x12xf32>, %arg3: memref<1x16x6x12xf16>) attributes {pb.kernel, pb.nodes = ["Conv_0", "Relu_1"]} {
    %c12 = arith.constant 12 : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f16
    %cst_0 = arith.constant 0.000000e+00 : f32
    affine.parallel (%arg4) = (0) to (16) {
      affine.parallel (%arg5) = (0) to (6) {
        affine.parallel (%arg6) = (0) to (12) {
          %alloca = memref.alloca() : memref<1xf16>
          affine.for %arg7 = 0 to 16 {
            affine.for %arg8 = 0 to 3 {
              affine.for %arg9 = 0 to 3 {
                %6 = affine.apply #map(%arg5, %arg8)
                %7 = arith.cmpi sge, %6, %c0 : index
                %8 = arith.cmpi slt, %6, %c12 : index
                %9 = arith.andi %7, %8 : i1
                %10 = affine.max #map1(%arg5, %arg8)
                %11 = affine.min #map2(%10)
                %12 = affine.apply #map3(%arg6, %arg9)
                %13 = arith.cmpi sge, %12, %c0 : index
                %14 = arith.cmpi slt, %12, %c12 : index
                %15 = arith.andi %13, %14 : i1
                %16 = arith.andi %9, %15 : i1
                %17 = affine.max #map4(%arg6, %arg9)
                %18 = affine.min #map2(%17)
                %19 = memref.load %arg0[%c0, %arg7, %11, %18] : memref<1x16x12x12xf16>
                %20 = arith.select %16, %19, %cst : f16
                %21 = affine.load %arg1[%arg4, %arg7, %arg8, %arg9] : memref<16x16x3x3xf16>
                %22 = affine.load %arg2[0, %arg4, %arg5, %arg6] : memref<1x16x6x12xf32>
                %23 = arith.extf %20 : f16 to f32
                %24 = arith.extf %21 : f16 to f32
                %25 = arith.mulf %23, %24 : f32
                %26 = arith.addf %22, %25 : f32
                affine.store %26, %arg2[0, %arg4, %arg5, %arg6] : memref<1x16x6x12xf32>
              }
            }
          }
          %0 = affine.load %arg2[0, %arg4, %arg5, %arg6] : memref<1x16x6x12xf32>
          %1 = arith.truncf %0 : f32 to f16
          affine.store %1, %alloca[0] : memref<1xf16>
          %2 = affine.load %alloca[0] : memref<1xf16>
          %3 = arith.extf %2 : f16 to f32
          %4 = arith.maximumf %3, %cst_0 : f32
          %5 = arith.truncf %4 : f32 to f16
          affine.store %5, %arg3[0, %arg4, %arg5, %arg6] : memref<1x16x6x12xf16>
        }
      }
    }
    return
  }
  func.func @main(%arg0: memref<1x16x12x12xf16> {pb.name = "x"}, %arg1: memref<16x16x3x3xf16> {pb.name = "w"}, %arg2: memref<16xf16> {pb.name = "b"}, %arg3: memref<1x16x6x12xf16> {pb.name = "y", pb.output}) {
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<1x16x6x12xf32>
    call @k0_Conv_0(%arg2, %alloc) : (memref<16xf16>, memref<1x16x6x12xf32>) -> ()
    call @k1_Conv_0(%arg0, %arg1, %alloc, %arg3) : (memref<1x16x12x12xf16>, memref<16x16x3x3xf16>, memref<1x16x6x12xf32>, memref<1x16x6x12xf16>) -> ()
    memref.dealloc %alloc : memref<1x16x6x12xf32>
    return
  }
}

//--- s12.mlir
#map = affine_map<(d0, d1) -> (d0 + d1 - 1)>
#map1 = affine_map<(d0, d1) -> (0, d0 + d1 - 1)>
#map2 = affine_map<(d0) -> (11, d0)>
#map3 = affine_map<(d0, d1) -> (d0 * 2 + d1 - 1)>
#map4 = affine_map<(d0, d1) -> (0, d0 * 2 + d1 - 1)>
module attributes {pb.stage = "fuse"} {
  func.func private @k0_Conv_0(%arg0: memref<16xf16>, %arg1: memref<1x16x12x6xf32>) attributes {pb.kernel, pb.nodes = ["Conv_0"]} {
    affine.parallel (%arg2) = (0) to (16) {
      %alloca = memref.alloca() : memref<f32>
      %0 = affine.load %arg0[%arg2] : memref<16xf16>
      %1 = arith.extf %0 : f16 to f32
      affine.store %1, %alloca[] : memref<f32>
      affine.for %arg3 = 0 to 12 {
        affine.for %arg4 = 0 to 6 {
          %2 = affine.load %alloca[] : memref<f32>
          affine.store %2, %arg1[0, %arg2, %arg3, %arg4] : memref<1x16x12x6xf32>
        }
      }
    }
    return
  }
  func.func private @k1_Conv_0(%arg0: memref<1x16x12x12xf16>, %arg1: memref<16x16x3x3xf16>, %arg2: memref<1x16x12x6xf32>, %arg3: memref<1x16x12x6xf16>) attributes {pb.kernel, pb.nodes = ["Conv_0", "Relu_1"]} {
    %c12 = arith.constant 12 : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f16
    %cst_0 = arith.constant 0.000000e+00 : f32
    affine.parallel (%arg4) = (0) to (16) {
      affine.parallel (%arg5) = (0) to (12) {
        affine.parallel (%arg6) = (0) to (6) {
          %alloca = memref.alloca() : memref<1xf16>
          affine.for %arg7 = 0 to 16 {
            affine.for %arg8 = 0 to 3 {
              affine.for %arg9 = 0 to 3 {
                %6 = affine.apply #map(%arg5, %arg8)
                %7 = arith.cmpi sge, %6, %c0 : index
                %8 = arith.cmpi slt, %6, %c12 : index
                %9 = arith.andi %7, %8 : i1
                %10 = affine.max #map1(%arg5, %arg8)
                %11 = affine.min #map2(%10)
                %12 = affine.apply #map3(%arg6, %arg9)
                %13 = arith.cmpi sge, %12, %c0 : index
                %14 = arith.cmpi slt, %12, %c12 : index
                %15 = arith.andi %13, %14 : i1
                %16 = arith.andi %9, %15 : i1
                %17 = affine.max #map4(%arg6, %arg9)
                %18 = affine.min #map2(%17)
                %19 = memref.load %arg0[%c0, %arg7, %11, %18] : memref<1x16x12x12xf16>
                %20 = arith.select %16, %19, %cst : f16
                %21 = affine.load %arg1[%arg4, %arg7, %arg8, %arg9] : memref<16x16x3x3xf16>
                %22 = affine.load %arg2[0, %arg4, %arg5, %arg6] : memref<1x16x12x6xf32>
                %23 = arith.extf %20 : f16 to f32
                %24 = arith.extf %21 : f16 to f32
                %25 = arith.mulf %23, %24 : f32
                %26 = arith.addf %22, %25 : f32
                affine.store %26, %arg2[0, %arg4, %arg5, %arg6] : memref<1x16x12x6xf32>
              }
            }
          }
          %0 = affine.load %arg2[0, %arg4, %arg5, %arg6] : memref<1x16x12x6xf32>
          %1 = arith.truncf %0 : f32 to f16
          affine.store %1, %alloca[0] : memref<1xf16>
          %2 = affine.load %alloca[0] : memref<1xf16>
          %3 = arith.extf %2 : f16 to f32
          %4 = arith.maximumf %3, %cst_0 : f32
          %5 = arith.truncf %4 : f32 to f16
          affine.store %5, %arg3[0, %arg4, %arg5, %arg6] : memref<1x16x12x6xf16>
        }
      }
    }
    return
  }
  func.func @main(%arg0: memref<1x16x12x12xf16> {pb.name = "x"}, %arg1: memref<16x16x3x3xf16> {pb.name = "w"}, %arg2: memref<16xf16> {pb.name = "b"}, %arg3: memref<1x16x12x6xf16> {pb.name = "y", pb.output}) {
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<1x16x12x6xf32>
    call @k0_Conv_0(%arg2, %alloc) : (memref<16xf16>, memref<1x16x12x6xf32>) -> ()
    call @k1_Conv_0(%arg0, %arg1, %alloc, %arg3) : (memref<1x16x12x12xf16>, memref<16x16x3x3xf16>, memref<1x16x12x6xf32>, memref<1x16x12x6xf16>) -> ()
    memref.dealloc %alloc : memref<1x16x12x6xf32>
    return
  }
}

