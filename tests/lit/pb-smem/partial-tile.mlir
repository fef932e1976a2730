// RUN: split-file %s %t
// RUN: pb-tile --sizes='{ kernel[0] -> tile[4, 8, 8]; kernel[0] -> block[1, 8, 8] }' %t/conv.mlir -o %t/tile.mlir
// RUN: FileCheck --check-prefix=TILE %s < %t/tile.mlir
// RUN: pb-smem %t/tile.mlir -o %t/s.mlir
// RUN: FileCheck %s < %t/s.mlir
// RUN: pb-run --random=1 --output %t/ref %t/conv.mlir
// RUN: pb-run --random=1 --check %t/ref/Y.npy %t/s.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=1 %t/tile.mlir | pb-run --random=1 --check %t/ref/Y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-codegen --arch=sm_80 %t/s.mlir | FileCheck --check-prefix=PTX %s
// RUN: pb-tile --sizes='{ kernel[0] -> tile[4, 8, 8]; kernel[0] -> block[1, 8, 8]; kernel[0] -> smem[] }' %t/conv.mlir | pb-smem | FileCheck --check-prefix=GLOBAL %s

// A 3x3 convolution of 8 channels over a 7x7 map in block tiles of 8x8
// pixels: every tile overhangs the map, so pb-tile guards each point
// (affine.if marked pb.point) where it initializes, accumulates and
// stores. Once pb-smem has staged the window and the weights, the
// guard of the accumulation goes: its body reads only the staged tiles
// (whose subscripts stay inside them for every point of the tile) and
// the thread's accumulators, and writes only an accumulator of its own
// point; a point outside the map computes into an entry nobody stores.
// The initialization's and the store's guards stay. Unstaged (smem[])
// the accumulation reads the global buffers and keeps its guard.

// TILE-COUNT-3: } {pb.point}

// CHECK-LABEL: func.func private @k0_conv
// CHECK: affine.if #{{.*}} {
// CHECK-NEXT: affine.store %{{.*}}, %arg2[
// CHECK: } {pb.point}
// CHECK: affine.for %{{.*}} = 0 to 8 step 4 {
// CHECK: affine.for %{{.*}} = 0 to 4 {
// CHECK-NEXT: affine.apply
// CHECK-NEXT: affine.for %{{.*}} = 0 to 3 {
// CHECK-NEXT: affine.for %{{.*}} = 0 to 3 {
// CHECK-NEXT: affine.for %[[P:.*]] = 0 to 4 {
// CHECK-NOT: affine.if
// CHECK: affine.load %{{.*}} : memref<2x4x10x10xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: affine.load %{{.*}} : memref<2x4x3x3x4xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: affine.load %[[ACC:.*]][%{{.*}}, %{{.*}}, %{{.*}}, %[[P]]] : memref<2x4x8x4xf32>
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: affine.store %{{.*}}, %[[ACC]][%{{.*}}, %{{.*}}, %{{.*}}, %[[P]]] : memref<2x4x8x4xf32>
// CHECK: affine.if #{{.*}} {
// CHECK: affine.store %{{.*}}, %arg2[
// CHECK-NEXT: } {pb.point}

// NUM: output 'Y': {{.*}}: ok

// PTX: cp.async
// PTX: fma.rn.f32

// GLOBAL-COUNT-3: } {pb.point}

//--- conv.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_conv(%X: memref<8x9x9xf32>, %W: memref<8x8x3x3xf32>, %Y: memref<8x7x7xf32>) attributes {pb.kernel} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%o) = (0) to (8) {
      affine.parallel (%i) = (0) to (7) {
        affine.parallel (%j) = (0) to (7) {
          affine.store %z, %Y[%o, %i, %j] : memref<8x7x7xf32>
          affine.for %c = 0 to 8 {
            affine.for %r = 0 to 3 {
              affine.for %s = 0 to 3 {
                %x = affine.load %X[%c, %i + %r, %j + %s] : memref<8x9x9xf32>
                %w = affine.load %W[%o, %c, %r, %s] : memref<8x8x3x3xf32>
                %y = affine.load %Y[%o, %i, %j] : memref<8x7x7xf32>
                %p = arith.mulf %x, %w : f32
                %a = arith.addf %y, %p : f32
                affine.store %a, %Y[%o, %i, %j] : memref<8x7x7xf32>
              }
            }
          }
        }
      }
    }
    return
  }
  func.func @main(%X: memref<8x9x9xf32> {pb.name = "X"}, %W: memref<8x8x3x3xf32> {pb.name = "W"}, %Y: memref<8x7x7xf32> {pb.name = "Y", pb.output}) {
    call @k0_conv(%X, %W, %Y) : (memref<8x9x9xf32>, memref<8x8x3x3xf32>, memref<8x7x7xf32>) -> ()
    return
  }
}
