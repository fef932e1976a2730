// RUN: pb-mma %s | FileCheck %s
// RUN: pb-mma %s | pb-mma | FileCheck %s
// RUN: pb-mma --no-mma %s | FileCheck %s

// Tile-stage IR with no nest marked pb.mma (pb-tile leaves those it finds
// to be contractions for tensor cores) passes through unchanged, marked
// with the stage it reached.

// CHECK: module attributes {pb.stage = "mma"}
// CHECK-LABEL: func.func private @k0
// CHECK-SAME: attributes {pb.kernel}
// CHECK: affine.for
// CHECK-LABEL: func.func @main
// CHECK: call @k0
module attributes {pb.stage = "tile"} {
  func.func private @k0(%a: memref<4xf32>) attributes {pb.kernel} {
    affine.for %i = 0 to 4 {
      %v = affine.load %a[%i] : memref<4xf32>
      %w = arith.addf %v, %v : f32
      affine.store %w, %a[%i] : memref<4xf32>
    }
    return
  }
  func.func @main(%a: memref<4xf32>) {
    call @k0(%a) : (memref<4xf32>) -> ()
    return
  }
}
