// RUN: pb-smem %s | FileCheck %s
// RUN: pb-smem %s | pb-smem | FileCheck %s
// RUN: pb-smem --no-smem %s | FileCheck %s
// RUN: pb-smem --remarks %s 2>&1 >/dev/null | FileCheck --allow-empty --check-prefix=REM %s

// A kernel with nothing mapped has nothing to stage: pb-smem passes it
// through and marks the module with the stage it reached.

// CHECK: module attributes {pb.stage = "smem"}
// CHECK-LABEL: func.func private @k0
// CHECK-SAME: attributes {pb.kernel}
// CHECK: affine.for
// CHECK-NOT: gpu.barrier
// CHECK-LABEL: func.func @main
// CHECK: call @k0
// REM-NOT: remark
module attributes {pb.stage = "mma"} {
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
