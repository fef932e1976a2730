// RUN: pb-mma %s | FileCheck %s
// RUN: pb-mma %s | pb-mma | FileCheck %s
// RUN: pb-mma --no-mma %s | FileCheck %s

// pb-mma is not implemented yet: it passes tile-stage IR through unchanged
// and marks the module with the stage it reached.

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
