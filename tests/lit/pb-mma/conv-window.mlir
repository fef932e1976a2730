// RUN: split-file %s %t
// Convolutions with a window (3x3, 7x7) as implicit GEMM on mma.sync
// (docs/pb-mma.md, "Convolutions"): the window loops r, s around the
// k loop over the input channels, C's rows the output pixels along w.
// p1: 3x3, padding 1, batch 2, 12 columns (a masked block of 16 rows);
// p0: 3x3, no padding, 24 input channels (K = 24 per window position:
// a masked k step); k7: 7x7, padding 3, 3 input channels (the stem's K);
// p8: 3x3, padding 1, 24 columns (the staged rows copied 8 at a time).
// p1, p8 and k7 keep one image row a block (the fifth size of --sizes,
// 1): the rings below are that mapping's; tests/lit/pb-mma/conv-rows.test
// has blocks of several image rows.
// RUN: pb-tile --remarks %t/p1.mlir -o %t/p1.tile.mlir 2>&1 | FileCheck --check-prefix=TILE %s
// RUN: pb-tile --remarks %t/p0.mlir -o %t/p0.tile.mlir 2>&1 | FileCheck --check-prefix=TILE %s
// RUN: pb-tile --remarks %t/k7.mlir -o %t/k7.tile.mlir 2>&1 | FileCheck --check-prefix=TILE %s
// RUN: pb-mma --remarks --sizes='{ kernel[1] -> mma[16, 16, 16, 8, 1] }' %t/p1.tile.mlir -o %t/p1.mma.mlir 2>&1 | FileCheck --check-prefix=REM %s
// RUN: pb-mma --remarks %t/p0.tile.mlir -o %t/p0.mma.mlir 2>&1 | FileCheck --check-prefix=REM %s
// RUN: pb-mma --remarks --sizes='{ kernel[1] -> mma[16, 16, 16, 8, 1] }' %t/k7.tile.mlir -o %t/k7.mma.mlir 2>&1 | FileCheck --check-prefix=REM %s
// RUN: FileCheck %s < %t/p1.mma.mlir
// RUN: pb-smem --remarks %t/p1.mma.mlir -o %t/p1.smem.mlir 2>&1 | FileCheck --check-prefix=SMEM %s
// RUN: FileCheck --check-prefix=RING %s < %t/p1.smem.mlir
// RUN: pb-codegen --arch=sm_80 %t/p1.smem.mlir | FileCheck --check-prefix=PTX %s
// RUN: pb-smem --no-smem %t/p1.mma.mlir | pb-codegen --arch=sm_80 | FileCheck --check-prefix=PTX-G %s
// RUN: pb-tile %t/p8.mlir | pb-mma --sizes='{ kernel[1] -> mma[16, 16, 16, 8, 1] }' -o %t/p8.mma.mlir
// RUN: pb-smem %t/p8.mma.mlir | FileCheck --check-prefix=RING8 %s
// RUN: pb-smem --remarks %t/k7.mma.mlir -o %t/k7.smem.mlir 2>&1 | FileCheck --check-prefix=SMEM7 %s
// RUN: pb-smem --stages=3 --remarks %t/k7.mma.mlir 2>&1 >/dev/null | FileCheck --check-prefix=REM7 %s
// RUN: pb-smem --stages=3 %t/k7.mma.mlir | FileCheck --check-prefix=RING7 %s

// The numbers, against the fuse-level nests, at pb-mma's stage and
// staged in 1, 2 and 3 slots. The outputs are f16: sums in another order
// may round to the neighbouring f16 (2^-10 relative).
// RUN: pb-run --random=1 --output %t/r1 %t/p1.mlir
// RUN: pb-run --random=1 --output %t/r0 %t/p0.mlir
// RUN: pb-run --random=1 --output %t/r7 %t/k7.mlir
// RUN: pb-run --random=1 --rtol=2e-3 --check %t/r1/y.npy %t/p1.mma.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --rtol=2e-3 --check %t/r0/y.npy %t/p0.mma.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --rtol=2e-3 --check %t/r7/y.npy %t/k7.mma.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=1 %t/p1.mma.mlir | pb-run --random=1 --rtol=2e-3 --check %t/r1/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=2 %t/p1.mma.mlir | pb-run --random=1 --rtol=2e-3 --check %t/r1/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=3 %t/p1.mma.mlir | pb-run --random=1 --rtol=2e-3 --check %t/r1/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=3 %t/p0.mma.mlir | pb-run --random=1 --rtol=2e-3 --check %t/r0/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=2 %t/k7.mma.mlir | pb-run --random=1 --rtol=2e-3 --check %t/r7/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --rtol=2e-3 --check %t/r7/y.npy %t/k7.smem.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=1 %t/p0.mma.mlir | pb-run --random=1 --rtol=2e-3 --check %t/r0/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --output %t/r8 %t/p8.mlir
// RUN: pb-smem --stages=1 %t/p8.mma.mlir | pb-run --random=1 --rtol=2e-3 --check %t/r8/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=2 %t/p8.mma.mlir | pb-run --random=1 --rtol=2e-3 --check %t/r8/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=3 %t/p8.mma.mlir | pb-run --random=1 --rtol=2e-3 --check %t/r8/y.npy - | FileCheck --check-prefix=NUM %s

// TILE: remark: left to pb-mma: a contraction for tensor cores
// REM: remark: on tensor cores: mma.sync m16n8k16 f16 -> f32
// NUM: output 'y': {{.*}}: ok

// The window positions r, s around the k loop; the window's rows as a
// clamped subscript and a bit (%[[OK]]); the input read at the window's
// column, its rows masked from the first one inside the image on.
// CHECK-LABEL: func.func private @k1_Conv_0
// CHECK: affine.for %[[R:.*]] = 0 to 3 iter_args
// CHECK-NEXT: affine.for %[[S:.*]] = 0 to 3 iter_args
// CHECK: arith.andi %true{{.*}} : i1
// CHECK-NEXT: %[[OK:.*]] = arith.andi %true{{.*}} : i1
// CHECK-NEXT: affine.for %[[K:.*]] = 0 to 32 step 16 iter_args
// CHECK: %[[LO:.*]] = arith.select %[[OK]], %{{.*}}, %{{.*}} : index
// CHECK: %[[CM:.*]] = vector.create_mask %[[LO]], %{{.*}} : vector<16x16xi1>
// CHECK: %[[M:.*]] = arith.xori %[[CM]], %{{.*}} : vector<16x16xi1>
// CHECK: vector.transfer_read %arg1[%{{.*}}, %[[K]], %{{.*}}, %{{.*}}], %{{.*}}, %[[M]] {in_bounds = [false, true], {{.*}}} : memref<2x32x6x12xf16>, vector<16x16xf16>
// CHECK: vector.transfer_read %arg2[%{{.*}}, %[[K]], %[[R]], %[[S]]], {{.*}} : memref<16x32x3x3xf16>, vector<16x8xf16>
// CHECK: vector.contract

// One staged tile of each operand serves all 9 window positions of a
// k-tile (docs/pb-smem.md, "Convolutions"): the weights as
// [slot][r][s][o][c], the input's 3 window rows of the block's 16
// columns and the window's halo as [slot][row][pixel][c] (k innermost,
// rows padded by 16 bytes; 24 pixels: the tile starts 3 before the
// window's first column, so that 12-column rows are copied 4 pixels at a
// time, aligned). The copies transpose in registers (a vector load,
// element stores); the window loops run inside the k-tile loop and read
// the rings unmasked, shifted by the window's column.
// SMEM: remark: warp tiles staged: 2 operands, 3 stages of k-tile 16, {{.*}}, one tile for all the window's positions
// RING: %[[W:.*]] = memref.alloc() : memref<3x3x3x16x24xf16, #gpu.address_space<workgroup>>
// RING: %[[X:.*]] = memref.alloc() : memref<3x3x24x24xf16, #gpu.address_space<workgroup>>
// RING: vector.load %arg1[{{.*}}] {alignment = 8 : i64} : memref<2x32x6x12xf16>, vector<4xf16>
// RING: memref.store {{.*}}, %[[X]][{{.*}}] : memref<3x3x24x24xf16, #gpu.address_space<workgroup>>
// RING: memref.load %arg2[{{.*}}] : memref<16x32x3x3xf16>
// RING: memref.store {{.*}}, %[[W]][{{.*}}] : memref<3x3x3x16x24xf16, #gpu.address_space<workgroup>>
// RING: affine.for %[[K0:.*]] = 0 to 32 step 48 iter_args
// RING-NEXT: affine.for %[[SL:.*]] = 0 to min #{{.*}}(%[[K0]]) iter_args
// RING: gpu.barrier
// RING: affine.for %[[R:.*]] = 0 to 3 iter_args
// RING-NEXT: affine.for %[[S:.*]] = 0 to 3 iter_args
// RING-NOT: vector.create_mask
// RING: affine.for %[[K:.*]] = 0 to 16 step 16 iter_args
// RING: vector.transfer_read %[[X]][%[[SL]], %[[R]], %{{.*}}, %[[K]]]
// RING: vector.transfer_read %[[W]][%[[SL]], %[[R]], %[[S]], %{{.*}}, %[[K]]]
// RING: vector.contract
// 24 columns: 8 pixels a copy (16 bytes).
// RING8: memref.alloc() : memref<3x3x32x24xf16, #gpu.address_space<workgroup>>
// RING8: vector.load %arg1[{{.*}}] {alignment = 16 : i64} : memref<1x32x4x24xf16>, vector<8xf16>
// The 7x7 window's rings fit one slot (49 positions of weights); in 3
// they do not, and each position's k loop has rings of its own.
// SMEM7: remark: warp tiles staged: 2 operands, 1 stages of k-tile 16, {{.*}}, one tile for all the window's positions
// REM7: remark: warp tiles staged: 2 operands, 3 stages of k-tile 16, {{.*}}, a ring fill per window position
// RING7-COUNT-2: memref.alloc() : memref<3x16x24xf16, #gpu.address_space<workgroup>>
// RING7: affine.for %{{.*}} = 0 to 7 iter_args
// RING7-NEXT: affine.for %{{.*}} = 0 to 7 iter_args
// RING7: affine.for %{{.*}} = 0 to 16 step 16 iter_args
// A and B from the rings by ldmatrix, not transposed: the channels are
// the rows' contiguous elements.
// PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// Not staged, each lane reads its elements, the mask computed per element.
// PTX-G-NOT: ldmatrix
// PTX-G: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

//--- p1.mlir
#map = affine_map<(d0, d1) -> (d0 + d1 - 1)>
#map1 = affine_map<(d0, d1) -> (0, d0 + d1 - 1)>
#map2 = affine_map<(d0) -> (5, d0)>
#map3 = affine_map<(d0) -> (11, d0)>
module attributes {pb.stage = "fuse"} {
  func.func private @k0_Conv_0(%arg0: memref<16xf16>, %arg1: memref<16xf32>) attributes {pb.kernel, pb.nodes = ["Conv_0"]} {
    affine.parallel (%arg2) = (0) to (16) {
      %0 = affine.load %arg0[%arg2] : memref<16xf16>
      %1 = arith.extf %0 : f16 to f32
      affine.store %1, %arg1[%arg2] : memref<16xf32>
    }
    return
  }
  func.func private @k1_Conv_0(%arg0: memref<16xf32>, %arg1: memref<2x32x6x12xf16>, %arg2: memref<16x32x3x3xf16>, %arg3: memref<2x16x6x12xf16>) attributes {pb.kernel, pb.nodes = ["Conv_0", "Relu_1"]} {
    %c12 = arith.constant 12 : index
    %c6 = arith.constant 6 : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f16
    %cst_0 = arith.constant 0.000000e+00 : f32
    affine.parallel (%arg4) = (0) to (2) {
      affine.parallel (%arg5) = (0) to (16) {
        affine.parallel (%arg6) = (0) to (6) {
          affine.parallel (%arg7) = (0) to (12) {
            %alloca = memref.alloca() : memref<f16>
            %alloca_1 = memref.alloca() : memref<f32>
            %0 = affine.load %arg0[%arg5] : memref<16xf32>
            affine.store %0, %alloca_1[] : memref<f32>
            affine.for %arg8 = 0 to 32 {
              affine.for %arg9 = 0 to 3 {
                affine.for %arg10 = 0 to 3 {
                  %7 = affine.apply #map(%arg6, %arg9)
                  %8 = arith.cmpi sge, %7, %c0 : index
                  %9 = arith.cmpi slt, %7, %c6 : index
                  %10 = arith.andi %8, %9 : i1
                  %11 = affine.max #map1(%arg6, %arg9)
                  %12 = affine.min #map2(%11)
                  %13 = affine.apply #map(%arg7, %arg10)
                  %14 = arith.cmpi sge, %13, %c0 : index
                  %15 = arith.cmpi slt, %13, %c12 : index
                  %16 = arith.andi %14, %15 : i1
                  %17 = arith.andi %10, %16 : i1
                  %18 = affine.max #map1(%arg7, %arg10)
                  %19 = affine.min #map3(%18)
                  %20 = memref.load %arg1[%arg4, %arg8, %12, %19] : memref<2x32x6x12xf16>
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
            affine.store %6, %arg3[%arg4, %arg5, %arg6, %arg7] : memref<2x16x6x12xf16>
          }
        }
      }
    }
    return
  }
  func.func @main(%arg0: memref<2x32x6x12xf16> {pb.name = "x"}, %arg1: memref<16x32x3x3xf16> {pb.name = "w"}, %arg2: memref<16xf16> {pb.name = "b"}, %arg3: memref<2x16x6x12xf16> {pb.name = "y", pb.output}) {
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    call @k0_Conv_0(%arg2, %alloc) : (memref<16xf16>, memref<16xf32>) -> ()
    call @k1_Conv_0(%alloc, %arg0, %arg1, %arg3) : (memref<16xf32>, memref<2x32x6x12xf16>, memref<16x32x3x3xf16>, memref<2x16x6x12xf16>) -> ()
    memref.dealloc %alloc : memref<16xf32>
    return
  }
}

//--- p0.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_Conv_0(%arg0: memref<8xf16>, %arg1: memref<1x8x7x8xf32>) attributes {pb.kernel, pb.nodes = ["Conv_0"]} {
    affine.parallel (%arg2) = (0) to (8) {
      %alloca = memref.alloca() : memref<f32>
      %0 = affine.load %arg0[%arg2] : memref<8xf16>
      %1 = arith.extf %0 : f16 to f32
      affine.store %1, %alloca[] : memref<f32>
      affine.for %arg3 = 0 to 7 {
        affine.for %arg4 = 0 to 8 {
          %2 = affine.load %alloca[] : memref<f32>
          affine.store %2, %arg1[0, %arg2, %arg3, %arg4] : memref<1x8x7x8xf32>
        }
      }
    }
    return
  }
  func.func private @k1_Conv_0(%arg0: memref<1x24x9x10xf16>, %arg1: memref<8x24x3x3xf16>, %arg2: memref<1x8x7x8xf32>, %arg3: memref<1x8x7x8xf16>) attributes {pb.kernel, pb.nodes = ["Conv_0", "Relu_1"]} {
    %cst = arith.constant 0.000000e+00 : f32
    affine.parallel (%arg4) = (0) to (8) {
      affine.parallel (%arg5) = (0) to (7) {
        affine.parallel (%arg6) = (0) to (8) {
          %alloca = memref.alloca() : memref<1xf16>
          affine.for %arg7 = 0 to 24 {
            affine.for %arg8 = 0 to 3 {
              affine.for %arg9 = 0 to 3 {
                %6 = affine.load %arg0[0, %arg7, %arg5 + %arg8, %arg6 + %arg9] : memref<1x24x9x10xf16>
                %7 = affine.load %arg1[%arg4, %arg7, %arg8, %arg9] : memref<8x24x3x3xf16>
                %8 = affine.load %arg2[0, %arg4, %arg5, %arg6] : memref<1x8x7x8xf32>
                %9 = arith.extf %6 : f16 to f32
                %10 = arith.extf %7 : f16 to f32
                %11 = arith.mulf %9, %10 : f32
                %12 = arith.addf %8, %11 : f32
                affine.store %12, %arg2[0, %arg4, %arg5, %arg6] : memref<1x8x7x8xf32>
              }
            }
          }
          %0 = affine.load %arg2[0, %arg4, %arg5, %arg6] : memref<1x8x7x8xf32>
          %1 = arith.truncf %0 : f32 to f16
          affine.store %1, %alloca[0] : memref<1xf16>
          %2 = affine.load %alloca[0] : memref<1xf16>
          %3 = arith.extf %2 : f16 to f32
          %4 = arith.maximumf %3, %cst : f32
          %5 = arith.truncf %4 : f32 to f16
          affine.store %5, %arg3[0, %arg4, %arg5, %arg6] : memref<1x8x7x8xf16>
        }
      }
    }
    return
  }
  func.func @main(%arg0: memref<1x24x9x10xf16> {pb.name = "x"}, %arg1: memref<8x24x3x3xf16> {pb.name = "w"}, %arg2: memref<8xf16> {pb.name = "b"}, %arg3: memref<1x8x7x8xf16> {pb.name = "y", pb.output}) {
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<1x8x7x8xf32>
    call @k0_Conv_0(%arg2, %alloc) : (memref<8xf16>, memref<1x8x7x8xf32>) -> ()
    call @k1_Conv_0(%arg0, %arg1, %alloc, %arg3) : (memref<1x24x9x10xf16>, memref<8x24x3x3xf16>, memref<1x8x7x8xf32>, memref<1x8x7x8xf16>) -> ()
    memref.dealloc %alloc : memref<1x8x7x8xf32>
    return
  }
}

//--- k7.mlir
#map = affine_map<(d0, d1) -> (d0 + d1 - 3)>
#map1 = affine_map<(d0, d1) -> (0, d0 + d1 - 3)>
#map2 = affine_map<(d0) -> (9, d0)>
#map3 = affine_map<(d0) -> (10, d0)>
module attributes {pb.stage = "fuse"} {
  func.func private @k0_Conv_0(%arg0: memref<16xf16>, %arg1: memref<1x16x10x11xf32>) attributes {pb.kernel, pb.nodes = ["Conv_0"]} {
    affine.parallel (%arg2) = (0) to (16) {
      %alloca = memref.alloca() : memref<f32>
      %0 = affine.load %arg0[%arg2] : memref<16xf16>
      %1 = arith.extf %0 : f16 to f32
      affine.store %1, %alloca[] : memref<f32>
      affine.for %arg3 = 0 to 10 {
        affine.for %arg4 = 0 to 11 {
          %2 = affine.load %alloca[] : memref<f32>
          affine.store %2, %arg1[0, %arg2, %arg3, %arg4] : memref<1x16x10x11xf32>
        }
      }
    }
    return
  }
  func.func private @k1_Conv_0(%arg0: memref<1x3x10x11xf16>, %arg1: memref<16x3x7x7xf16>, %arg2: memref<1x16x10x11xf32>, %arg3: memref<1x16x10x11xf16>) attributes {pb.kernel, pb.nodes = ["Conv_0", "Relu_1"]} {
    %c11 = arith.constant 11 : index
    %c10 = arith.constant 10 : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f16
    %cst_0 = arith.constant 0.000000e+00 : f32
    affine.parallel (%arg4) = (0) to (16) {
      affine.parallel (%arg5) = (0) to (10) {
        affine.parallel (%arg6) = (0) to (11) {
          %alloca = memref.alloca() : memref<1xf16>
          affine.for %arg7 = 0 to 3 {
            affine.for %arg8 = 0 to 7 {
              affine.for %arg9 = 0 to 7 {
                %6 = affine.apply #map(%arg5, %arg8)
                %7 = arith.cmpi sge, %6, %c0 : index
                %8 = arith.cmpi slt, %6, %c10 : index
                %9 = arith.andi %7, %8 : i1
                %10 = affine.max #map1(%arg5, %arg8)
                %11 = affine.min #map2(%10)
                %12 = affine.apply #map(%arg6, %arg9)
                %13 = arith.cmpi sge, %12, %c0 : index
                %14 = arith.cmpi slt, %12, %c11 : index
                %15 = arith.andi %13, %14 : i1
                %16 = arith.andi %9, %15 : i1
                %17 = affine.max #map1(%arg6, %arg9)
                %18 = affine.min #map3(%17)
                %19 = memref.load %arg0[%c0, %arg7, %11, %18] : memref<1x3x10x11xf16>
                %20 = arith.select %16, %19, %cst : f16
                %21 = affine.load %arg1[%arg4, %arg7, %arg8, %arg9] : memref<16x3x7x7xf16>
                %22 = affine.load %arg2[0, %arg4, %arg5, %arg6] : memref<1x16x10x11xf32>
                %23 = arith.extf %20 : f16 to f32
                %24 = arith.extf %21 : f16 to f32
                %25 = arith.mulf %23, %24 : f32
                %26 = arith.addf %22, %25 : f32
                affine.store %26, %arg2[0, %arg4, %arg5, %arg6] : memref<1x16x10x11xf32>
              }
            }
          }
          %0 = affine.load %arg2[0, %arg4, %arg5, %arg6] : memref<1x16x10x11xf32>
          %1 = arith.truncf %0 : f32 to f16
          affine.store %1, %alloca[0] : memref<1xf16>
          %2 = affine.load %alloca[0] : memref<1xf16>
          %3 = arith.extf %2 : f16 to f32
          %4 = arith.maximumf %3, %cst_0 : f32
          %5 = arith.truncf %4 : f32 to f16
          affine.store %5, %arg3[0, %arg4, %arg5, %arg6] : memref<1x16x10x11xf16>
        }
      }
    }
    return
  }
  func.func @main(%arg0: memref<1x3x10x11xf16> {pb.name = "x"}, %arg1: memref<16x3x7x7xf16> {pb.name = "w"}, %arg2: memref<16xf16> {pb.name = "b"}, %arg3: memref<1x16x10x11xf16> {pb.name = "y", pb.output}) {
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<1x16x10x11xf32>
    call @k0_Conv_0(%arg2, %alloc) : (memref<16xf16>, memref<1x16x10x11xf32>) -> ()
    call @k1_Conv_0(%arg0, %arg1, %alloc, %arg3) : (memref<1x3x10x11xf16>, memref<16x3x7x7xf16>, memref<1x16x10x11xf32>, memref<1x16x10x11xf16>) -> ()
    memref.dealloc %alloc : memref<1x16x10x11xf32>
    return
  }
}

//--- p8.mlir
#map = affine_map<(d0, d1) -> (d0 + d1 - 1)>
#map1 = affine_map<(d0, d1) -> (0, d0 + d1 - 1)>
#map2 = affine_map<(d0) -> (3, d0)>
#map3 = affine_map<(d0) -> (23, d0)>
module attributes {pb.stage = "fuse"} {
  func.func private @k0_Conv_0(%arg0: memref<16xf16>, %arg1: memref<16xf32>) attributes {pb.kernel, pb.nodes = ["Conv_0"]} {
    affine.parallel (%arg2) = (0) to (16) {
      %0 = affine.load %arg0[%arg2] : memref<16xf16>
      %1 = arith.extf %0 : f16 to f32
      affine.store %1, %arg1[%arg2] : memref<16xf32>
    }
    return
  }
  func.func private @k1_Conv_0(%arg0: memref<16xf32>, %arg1: memref<1x32x4x24xf16>, %arg2: memref<16x32x3x3xf16>, %arg3: memref<1x16x4x24xf16>) attributes {pb.kernel, pb.nodes = ["Conv_0", "Relu_1"]} {
    %c12 = arith.constant 24 : index
    %c6 = arith.constant 4 : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f16
    %cst_0 = arith.constant 0.000000e+00 : f32
    affine.parallel (%arg4) = (0) to (1) {
      affine.parallel (%arg5) = (0) to (16) {
        affine.parallel (%arg6) = (0) to (4) {
          affine.parallel (%arg7) = (0) to (24) {
            %alloca = memref.alloca() : memref<f16>
            %alloca_1 = memref.alloca() : memref<f32>
            %0 = affine.load %arg0[%arg5] : memref<16xf32>
            affine.store %0, %alloca_1[] : memref<f32>
            affine.for %arg8 = 0 to 32 {
              affine.for %arg9 = 0 to 3 {
                affine.for %arg10 = 0 to 3 {
                  %7 = affine.apply #map(%arg6, %arg9)
                  %8 = arith.cmpi sge, %7, %c0 : index
                  %9 = arith.cmpi slt, %7, %c6 : index
                  %10 = arith.andi %8, %9 : i1
                  %11 = affine.max #map1(%arg6, %arg9)
                  %12 = affine.min #map2(%11)
                  %13 = affine.apply #map(%arg7, %arg10)
                  %14 = arith.cmpi sge, %13, %c0 : index
                  %15 = arith.cmpi slt, %13, %c12 : index
                  %16 = arith.andi %14, %15 : i1
                  %17 = arith.andi %10, %16 : i1
                  %18 = affine.max #map1(%arg7, %arg10)
                  %19 = affine.min #map3(%18)
                  %20 = memref.load %arg1[%arg4, %arg8, %12, %19] : memref<1x32x4x24xf16>
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
            affine.store %6, %arg3[%arg4, %arg5, %arg6, %arg7] : memref<1x16x4x24xf16>
          }
        }
      }
    }
    return
  }
  func.func @main(%arg0: memref<1x32x4x24xf16> {pb.name = "x"}, %arg1: memref<16x32x3x3xf16> {pb.name = "w"}, %arg2: memref<16xf16> {pb.name = "b"}, %arg3: memref<1x16x4x24xf16> {pb.name = "y", pb.output}) {
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    call @k0_Conv_0(%arg2, %alloc) : (memref<16xf16>, memref<16xf32>) -> ()
    call @k1_Conv_0(%alloc, %arg0, %arg1, %arg3) : (memref<16xf32>, memref<1x32x4x24xf16>, memref<16x32x3x3xf16>, memref<1x16x4x24xf16>) -> ()
    memref.dealloc %alloc : memref<16xf32>
    return
  }
}

