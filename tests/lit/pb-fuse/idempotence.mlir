// RUN: pb-fuse %s | FileCheck %s
// RUN: pb-fuse %s | pb-fuse | FileCheck %s
// RUN: pb-fuse %s > %t.1 && pb-fuse %t.1 > %t.2 && diff %t.1 %t.2
// RUN: pb-fuse --split-input-file %s | FileCheck --check-prefix=SPLIT %s

// A module already at the fuse stage (or later) passes unchanged: the
// kernels are not outlined again and @main is not bufferized again.

// CHECK: module attributes {pb.stage = "fuse"}
// CHECK-LABEL: func.func private @k0_add
// CHECK-SAME: attributes {pb.kernel, pb.nodes = ["Add_0"]}
// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @main
// CHECK-NEXT: call @k0_add
// CHECK-NEXT: return
// SPLIT-NOT: k1_
module attributes {pb.stage = "fuse"} {
  func.func private @k0_add(%a: memref<4xf32>, %b: memref<4xf32>) attributes {pb.kernel, pb.nodes = ["Add_0"]} {
    affine.for %i = 0 to 4 {
      %v = affine.load %a[%i] : memref<4xf32>
      %w = arith.addf %v, %v : f32
      affine.store %w, %b[%i] : memref<4xf32>
    }
    return
  }
  func.func @main(%a: memref<4xf32> {pb.name = "a"}, %b: memref<4xf32> {pb.name = "b", pb.output}) {
    call @k0_add(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
    return
  }
}
