// RUN: pb-codegen %s | FileCheck %s
// RUN: pb-codegen --emit=mlir %s | FileCheck --check-prefix=MLIR %s

// A constant buffer (memref.get_global, e.g. an ONNX Constant) passed to a
// kernel function becomes a device global in the PTX: the kernel reads it
// directly and the plan has no buffer for it.

// CHECK: "buffers": [
// CHECK-NEXT: {"id": 0, "kind": "output", "name": "values", "arg": 0, "dtype": "f32", "shape": [2, 2], "bytes": 16}],
// CHECK: "args": [{"buffer": 0}]}]}
// CHECK: .global .align 64 .b8 __constant_2x2xf32[16] = {0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64};
// CHECK: .entry k0_copy_kernel(
// CHECK-NEXT: .param .u64 {{.*}}k0_copy_kernel_param_0
// CHECK-NEXT: )

// MLIR: gpu.module @pb_kernels
// MLIR: memref.get_global @__constant_2x2xf32
// MLIR: memref.global "private" constant @__constant_2x2xf32
// MLIR-LABEL: func.func @main(
// MLIR-NOT: get_global
// MLIR: gpu.launch_func @pb_kernels::@k0_copy_kernel {{.*}} args(%arg0 : memref<2x2xf32>)

module attributes {pb.stage = "fuse"} {
  memref.global "private" constant @__constant_2x2xf32 : memref<2x2xf32> = dense<[[1.0, 2.0], [3.0, 4.0]]> {alignment = 64 : i64}
  func.func private @k0_copy(%arg0: memref<2x2xf32>, %arg1: memref<2x2xf32>) attributes {pb.kernel, pb.nodes = ["Constant_0"]} {
    affine.for %i = 0 to 2 {
      affine.for %j = 0 to 2 {
        %0 = affine.load %arg0[%i, %j] : memref<2x2xf32>
        affine.store %0, %arg1[%i, %j] : memref<2x2xf32>
      }
    }
    return
  }
  func.func @main(%arg0: memref<2x2xf32> {pb.name = "values", pb.output}) {
    %0 = memref.get_global @__constant_2x2xf32 : memref<2x2xf32>
    call @k0_copy(%0, %arg0) : (memref<2x2xf32>, memref<2x2xf32>) -> ()
    return
  }
}
