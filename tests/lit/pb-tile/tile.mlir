// RUN: pb-tile --sizes='{ kernel[0] -> tile[32, 16]; kernel[0] -> block[8, 4] }' %s | FileCheck %s
// RUN: pb-run --random=1 --output %t.ref %s
// RUN: pb-tile --sizes='{ kernel[0] -> tile[32, 16]; kernel[0] -> block[8, 4] }' %s | pb-run --random=1 --check %t.ref/C.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-tile --sizes='{ kernel[0] -> tile[32, 16]; kernel[0] -> block[8, 4]; kernel[0] -> jam[0] }' %s | pb-run --random=1 --check %t.ref/C.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-tile --sizes='{ kernel_0 -> tile[64, 64]; kernel_0 -> block[2, 32] }' %s | pb-run --random=1 --check %t.ref/C.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-tile %s | pb-run --random=1 --check %t.ref/C.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-tile --sizes='{ kernel_0 -> tile[32, 16, 16]; kernel_0 -> block[8, 4] }' %s | FileCheck --check-prefix=STRIP %s
// RUN: pb-tile --sizes='{ kernel[0] -> linear[512, 128] }' %s | FileCheck --check-prefix=LIN %s
// RUN: pb-tile --sizes='{ kernel[0] -> linear[512, 128] }' %s | pb-run --random=1 --check %t.ref/C.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-tile --sizes='{ kernel[0] -> linear[256, 256]; kernel[0] -> jam[0] }' %s | pb-run --random=1 --check %t.ref/C.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-tile --sizes='{ kernel_0 -> tile[32, 16, 16]; kernel_0 -> block[8, 4] }' %s | pb-run --random=1 --check %t.ref/C.npy - | FileCheck --check-prefix=NUM %s

// A 100x60 matmul + relu (50 deep) in 32x16 block tiles of 8x4 threads:
// one warp of 8x4 lanes, each thread a 4x4 thread tile jammed into the
// k loop with its 4x4 accumulators. 100 and 60 are not multiples of the
// tile: full tiles run unguarded, the others guard each point.

// CHECK-DAG: #[[MI:.*]] = affine_map<(d0, d1, d2) -> (d0 + d1 + d2 * 8)>
// CHECK-DAG: #[[MJ:.*]] = affine_map<(d0, d1, d2) -> (d0 + d1 + d2 * 4)>
// CHECK-DAG: #[[FULL:.*]] = affine_set<(d0, d1) : (-d0 + 68 >= 0, -d1 + 44 >= 0)>
// CHECK-DAG: #[[IN:.*]] = affine_set<(d0, d1, d2, d3, d4, d5) : (-(d0 + d1 + d2 * 8) + 99 >= 0, -(d3 + d4 + d5 * 4) + 59 >= 0)>
// CHECK: module attributes {pb.stage = "tile"}
// CHECK-LABEL: func.func private @k0_mm
// CHECK: affine.parallel (%[[BI:.*]], %[[BJ:.*]]) = (0, 0) to (100, 60) step (32, 16) {
// CHECK-NEXT: affine.if #[[FULL]](%[[BI]], %[[BJ]]) {
// CHECK-NEXT: affine.parallel (%{{.*}}) = (0) to (1) {
// CHECK-NEXT: affine.parallel (%[[TI:.*]], %[[TJ:.*]]) = (0, 0) to (8, 4) {
// CHECK-NEXT: %[[ACC:.*]] = memref.alloca() : memref<4x4xf32>
// CHECK: affine.for %[[K:.*]] = 0 to 50 {
// CHECK-NEXT: affine.for %[[RI:.*]] = 0 to 4 {
// CHECK-NEXT: affine.for %[[RJ:.*]] = 0 to 4 {
// CHECK-NEXT: %[[I:.*]] = affine.apply #[[MI]](%[[BI]], %[[TI]], %[[RI]])
// CHECK-NEXT: %[[J:.*]] = affine.apply #[[MJ]](%[[BJ]], %[[TJ]], %[[RJ]])
// CHECK-NEXT: affine.load %{{.*}}[%[[I]], %[[K]]]
// CHECK-NEXT: affine.load %{{.*}}[%[[K]], %[[J]]]
// CHECK-NEXT: affine.load %[[ACC]][%[[RI]], %[[RJ]]]
// CHECK: } {pb.map = "thread"}
// CHECK-NEXT: } {pb.map = "warp"}
// CHECK-NEXT: } else {
// CHECK: affine.if #[[IN]](
// CHECK: } {pb.map = "block"}
// CHECK-LABEL: func.func @main

// NUM: output 'C': {{.*}}: ok

// linear[512, 128]: the 6000 points of the band in row-major order, 512
// per block, 128 threads (4 warps of 32 lanes), 4 jammed points each
// (128 apart); 6000 = 11 x 512 + 368, so the last block is guarded.
// LIN-DAG: #[[P:.*]] = affine_map<(d0, d1, d2, d3) -> (d0 + d1 + d2 + d3 * 128)>
// LIN-DAG: #[[ROW:.*]] = affine_map<(d0) -> (d0 floordiv 60)>
// LIN-DAG: #[[COL:.*]] = affine_map<(d0) -> (d0 mod 60)>
// LIN-DAG: #[[FULL:.*]] = affine_set<(d0) : (-d0 + 5488 >= 0)>
// LIN: affine.parallel (%[[B:.*]]) = (0) to (6000) step (512) {
// LIN-NEXT: affine.if #[[FULL]](%[[B]]) {
// LIN-NEXT: affine.parallel (%[[W:.*]]) = (0) to (128) step (32) {
// LIN-NEXT: affine.parallel (%[[L:.*]]) = (0) to (32) {
// LIN-NEXT: memref.alloca() : memref<4xf32>
// LIN: affine.for %[[K:.*]] = 0 to 50 {
// LIN-NEXT: affine.for %[[R:.*]] = 0 to 4 {
// LIN-NEXT: %[[X:.*]] = affine.apply #[[P]](%[[B]], %[[W]], %[[L]], %[[R]])
// LIN-NEXT: %[[I:.*]] = affine.apply #[[ROW]](%[[X]])
// LIN-NEXT: affine.load %{{.*}}[%[[I]], %[[K]]]
// LIN-NEXT: %[[J:.*]] = affine.apply #[[COL]](%[[X]])
// LIN-NEXT: affine.load %{{.*}}[%[[K]], %[[J]]]

// A third tile size strip-mines the k loop (50 = 3 x 16 + 2) around the
// jammed points.
// STRIP-DAG: #[[LO:.*]] = affine_map<(d0) -> (d0)>
// STRIP-DAG: #[[HI:.*]] = affine_map<(d0) -> (d0 + 16, 50)>
// STRIP: affine.for %[[KK:.*]] = 0 to 50 step 16 {
// STRIP-NEXT: affine.for %[[K:.*]] = #[[LO]](%[[KK]]) to min #[[HI]](%[[KK]]) {
// STRIP-NEXT: affine.for %{{.*}} = 0 to 4 {
// STRIP-NEXT: affine.for %{{.*}} = 0 to 4 {
module attributes {pb.stage = "fuse"} {
  func.func private @k0_mm(%A: memref<100x50xf32>, %B: memref<50x60xf32>, %C: memref<100x60xf32>) attributes {pb.kernel} {
    %cst = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (100) {
      affine.parallel (%j) = (0) to (60) {
        %acc = memref.alloca() : memref<f32>
        affine.store %cst, %acc[] : memref<f32>
        affine.for %k = 0 to 50 {
          %a = affine.load %A[%i, %k] : memref<100x50xf32>
          %b = affine.load %B[%k, %j] : memref<50x60xf32>
          %c = affine.load %acc[] : memref<f32>
          %p = arith.mulf %a, %b : f32
          %s = arith.addf %c, %p : f32
          affine.store %s, %acc[] : memref<f32>
        }
        %r = affine.load %acc[] : memref<f32>
        %m = arith.maximumf %r, %cst : f32
        affine.store %m, %C[%i, %j] : memref<100x60xf32>
      }
    }
    return
  }
  func.func @main(%A: memref<100x50xf32> {pb.name = "A"}, %B: memref<50x60xf32> {pb.name = "B"}, %C: memref<100x60xf32> {pb.name = "C", pb.output}) {
    call @k0_mm(%A, %B, %C) : (memref<100x50xf32>, memref<50x60xf32>, memref<100x60xf32>) -> ()
    return
  }
}
