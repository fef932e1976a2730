// RUN: split-file %s %t
// A strided convolution's input staged for tensor cores (docs/pb-smem.md,
// "Strided convolutions"): pb-mma reads it through the view (W / S, S)
// (tests/lit/pb-mma/conv-stride.mlir); pb-smem copies the image's own
// columns and stores column q of the staged tile at (q mod S) PP +
// q floordiv S, PP = the tile's columns / S, so that the columns S apart
// that a window position reads are consecutive rows of the ring (plain
// ldmatrix). s2: 3x3/2, padding 1, batch 2, 12x12 (f16); f32: the same
// in f32 at --precision=fp16, in 3 stages a ring fill per window position
// (the columns gathered S apart); k7: 7x7/2 with 3 input channels (a
// ring fill per position); p1: 1x1/2 (the columns gathered S apart).
// RUN: pb-tile %t/s2.mlir | pb-mma -o %t/s2.mma.mlir
// RUN: pb-tile --precision=fp16 %t/f32.mlir | pb-mma --precision=fp16 -o %t/f32.mma.mlir
// RUN: pb-tile %t/k7.mlir | pb-mma -o %t/k7.mma.mlir
// RUN: pb-tile %t/p1.mlir | pb-mma -o %t/p1.mma.mlir
// RUN: pb-smem --remarks %t/s2.mma.mlir -o %t/s2.smem.mlir 2>&1 | FileCheck --check-prefix=REM %s
// RUN: FileCheck %s < %t/s2.smem.mlir
// RUN: pb-smem --stages=3 --remarks %t/f32.mma.mlir 2>&1 -o %t/f32.smem.mlir | FileCheck --check-prefix=REMP %s
// RUN: FileCheck --check-prefix=POS %s < %t/f32.smem.mlir
// RUN: pb-smem --remarks %t/k7.mma.mlir 2>&1 -o %t/k7.smem.mlir | FileCheck --check-prefix=REMP %s
// RUN: pb-smem %t/p1.mma.mlir | FileCheck --check-prefix=ONE %s
// RUN: pb-codegen --arch=sm_80 %t/s2.smem.mlir | FileCheck --check-prefix=PTX %s
// RUN: pb-codegen --arch=sm_90 %t/s2.smem.mlir | FileCheck --check-prefix=PTX %s
// RUN: pb-codegen --arch=sm_80 %t/k7.smem.mlir | FileCheck --check-prefix=PTX %s
// RUN: pb-smem %t/p1.mma.mlir | pb-codegen --arch=sm_80 | FileCheck --check-prefix=PTX1 %s
// RUN: pb-smem --no-smem %t/s2.mma.mlir | pb-codegen --arch=sm_80 | FileCheck --check-prefix=PTXG %s

// The numbers, against pb-mma's warp tiles (the sums of each k-tile by
// window position: f16 outputs may round to the neighbouring f16).
// RUN: pb-run --random=1 --output %t/r2 %t/s2.mma.mlir
// RUN: pb-run --random=1 --output %t/rf %t/f32.mma.mlir
// RUN: pb-run --random=1 --output %t/r7 %t/k7.mma.mlir
// RUN: pb-run --random=1 --output %t/r1 %t/p1.mma.mlir
// RUN: pb-smem --stages=1 %t/s2.mma.mlir | pb-run --random=1 --rtol=2e-3 --check %t/r2/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=2 %t/s2.mma.mlir | pb-run --random=1 --rtol=2e-3 --check %t/r2/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --rtol=2e-3 --check %t/r2/y.npy %t/s2.smem.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=1 %t/f32.mma.mlir | pb-run --random=1 --rtol=1e-5 --check %t/rf/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --rtol=1e-5 --check %t/rf/y.npy %t/f32.smem.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --rtol=2e-3 --check %t/r7/y.npy %t/k7.smem.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=3 %t/k7.mma.mlir | pb-run --random=1 --rtol=2e-3 --check %t/r7/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=1 %t/p1.mma.mlir | pb-run --random=1 --rtol=2e-3 --check %t/r1/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=3 %t/p1.mma.mlir | pb-run --random=1 --rtol=2e-3 --check %t/r1/y.npy - | FileCheck --check-prefix=NUM %s
// NUM: output 'y': {{.*}}: ok

// REM: remark: warp tiles staged: 2 operands, 3 stages of k-tile 16, {{.*}}, one tile for all the window's positions
// REMP: remark: warp tiles staged: 2 operands, {{.*}}, a ring fill per window position

// 16 output columns a block: 2 x 16 image columns and the window's 2
// more, from 3 before its first (4-pixel copies aligned), 40 in all, 20
// a phase. The copies load 4 columns of the image itself and store each
// at its phase; window column s reads phase (s + 3) mod 2 from its
// column (s + 3) floordiv 2.
// CHECK-DAG: #[[ST:.*]] = affine_map<(d0) -> ((d0 mod 2) * 20 + d0 floordiv 2)>
// CHECK-DAG: #[[RD:.*]] = affine_map<(d0, d1) -> (d0 + (d1 + 3) floordiv 2 + ((d1 + 3) mod 2) * 20)>
// CHECK-LABEL: func.func private @k1_Conv_0
// CHECK: %[[W:.*]] = memref.alloc() : memref<3x3x3x16x24xf16, #gpu.address_space<workgroup>>
// CHECK: %[[X:.*]] = memref.alloc() : memref<3x3x40x24xf16, #gpu.address_space<workgroup>>
// CHECK: vector.load %arg1[{{.*}}] {alignment = 8 : i64} : memref<2x32x12x12xf16>, vector<4xf16>
// CHECK: %[[P:.*]] = affine.apply #[[ST]](%{{.*}})
// CHECK: memref.store %{{.*}}, %[[X]][%{{.*}}, %{{.*}}, %[[P]], %{{.*}}] : memref<3x3x40x24xf16, #gpu.address_space<workgroup>>
//      The k-tiles as rounds of the ring's 3 slots around a loop over
//      the slots (2 k-tiles: one round, its slot loop bounded by them).
// CHECK: affine.for %[[K0:.*]] = 0 to 32 step 48 iter_args
// CHECK-NEXT: affine.for %{{.*}} = 0 to min #{{.*}}(%[[K0]]) iter_args
// CHECK: affine.for %[[R:.*]] = 0 to 3 iter_args
// CHECK-NEXT: affine.for %[[S:.*]] = 0 to 3 iter_args
// CHECK-NOT: vector.create_mask
// CHECK: affine.for %[[K:.*]] = 0 to 16 step 16 iter_args
// CHECK: %[[O:.*]] = affine.apply #[[RD]](%{{.*}}, %[[S]])
// CHECK: vector.transfer_read %[[X]][%{{.*}}, %[[R]], %[[O]], %[[K]]]
// CHECK: vector.transfer_read %[[W]][%{{.*}}, %[[R]], %[[S]], %{{.*}}, %[[K]]]
// CHECK: vector.contract

// A ring per window position, its columns gathered 2 apart from
// 2 (origin) + s - 1.
// POS-DAG: #[[B:.*]] = affine_map<(d0, d1) -> (d0 * 2 + d1 - 1)>
// POS-DAG: #[[G:.*]] = affine_map<(d0, d1) -> (d0 + d1 * 2)>
// POS: memref.alloc() : memref<3x16x36xf32, #gpu.address_space<workgroup>>
// POS: affine.apply #[[B]]
// POS: %[[GX:.*]] = affine.apply #[[G]]
// POS: memref.load %arg1[%{{.*}}, %{{.*}}, %{{.*}}, %[[GX]]] : memref<1x32x12x12xf32>

// 1x1/2: the input [k][tile] of 16 columns gathered 2 apart, element by
// element; the weights [o][c][1][1] stay in global memory.
// ONE-DAG: #[[G:.*]] = affine_map<(d0, d1) -> (d0 + d1 * 2)>
// ONE: memref.alloc() : memref<3x16x40xf16, #gpu.address_space<workgroup>>
// ONE-NOT: memref.alloc() : memref<{{.*}}workgroup
//      (the gather's operands are values; a copy round's stride, of the
//      same map, takes a loop counter)
// ONE: %[[GX:.*]] = affine.apply #[[G]](%{{[0-9]+}}, %{{[0-9]+}})
// ONE: memref.load %arg0[%{{.*}}, %{{.*}}, %{{.*}}, %[[GX]]] : memref<1x32x16x16xf16>

// PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX1: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// Not staged: each lane reads the view (a buffer of the launch plan at
// the image's address), the mask per element.
// PTXG: "kind": "view", "dtype": "f16", "shape": [2, 32, 12, 6, 2], "bytes": 18432, "base": 0
// PTXG-NOT: ldmatrix
// PTXG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

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

