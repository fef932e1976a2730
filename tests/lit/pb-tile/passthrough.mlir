// RUN: pb-tile %s | FileCheck %s
// RUN: pb-tile --split-input-file %s | pb-tile | FileCheck %s

// A kernel nest without a band of affine.parallel loops (the loops pb-fuse
// proves parallel; here a plain affine.for) is left to pb-codegen: pb-tile passes it through
// and marks the module with the stage it reached; tile-stage input passes
// through unchanged.

// CHECK: module attributes {pb.stage = "tile"}
// CHECK-LABEL: func.func @main
// CHECK-NOT: pb.map
// CHECK: call @kernel_0
module attributes {pb.stage = "fuse"} {
  func.func private @kernel_0(%a: memref<4xf32>) attributes {pb.kernel} {
    affine.for %i = 0 to 4 {
      %v = affine.load %a[%i] : memref<4xf32>
      %w = arith.addf %v, %v : f32
      affine.store %w, %a[%i] : memref<4xf32>
    }
    return
  }
  func.func @main(%a: memref<4xf32>) {
    call @kernel_0(%a) : (memref<4xf32>) -> ()
    return
  }
}
