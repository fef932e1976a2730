// RUN: pb-codegen --emit=mlir %s | FileCheck %s
// RUN: pb-codegen --emit=mlir %s --plan %t.json | FileCheck %s
// RUN: FileCheck --check-prefix=JSON %s < %t.json
// RUN: pb-codegen --emit=mlir %s | pb-codegen --emit=mlir | FileCheck %s

// --emit=mlir prints the host+device module after mapping and outlining:
// every kernel in one gpu.module, @main a sequence of allocations, views
// and gpu.launch_func (the kernel functions are inlined). Running
// pb-codegen again on that output changes nothing. The naive
// mapping linearizes the parallel band (innermost fastest) onto
// blockIdx.x * 256 + threadIdx.x; the reduction loop stays in the thread.
// An argument that is a whole device allocation at every launch is
// 16-byte aligned (llvm.align); one the kernel only reads, and no other
// argument shares, is noalias and readonly (ld.global.nc).

// CHECK: module attributes {gpu.container_module, pb.source = "mm.onnx", pb.stage = "codegen"}
// CHECK-LABEL: gpu.module @pb_kernels
// CHECK: gpu.func @k0_matmul_kernel(%{{.*}}: memref<64x32xf32> {llvm.align = 16 : i64}) kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 8, 1, 1>, pb.nodes = ["MatMul_0"], pb.origin = "k0_matmul"}
// CHECK: gpu.block_id x
// CHECK: gpu.thread_id x
// CHECK: memref.store
// CHECK: gpu.func @k0_matmul_kernel_0(
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: gpu.func @k1_relu_kernel(
// CHECK-LABEL: func.func @main(
// CHECK-NOT: call
// CHECK: gpu.launch_func @pb_kernels::@k0_matmul_kernel blocks in (%[[G:.*]], %[[ONE:.*]], %[[ONE]]) threads in (%[[B:.*]], %[[ONE]], %[[ONE]]) args(%arg2 : memref<64x32xf32>) {pb.nodes = ["MatMul_0"], pb.origin = "k0_matmul"}
// CHECK: gpu.launch_func @pb_kernels::@k0_matmul_kernel_0
// CHECK: gpu.launch_func @pb_kernels::@k1_relu_kernel
// CHECK: return
// CHECK-NOT: func.func private

// JSON: "launches": [
// JSON-NEXT: {"kernel": "k0_matmul_kernel",
// JSON-NEXT: {"kernel": "k0_matmul_kernel_0",
// JSON-NEXT: {"kernel": "k1_relu_kernel",

module attributes {pb.stage = "fuse", pb.source = "mm.onnx"} {
  func.func private @k0_matmul(%a: memref<64x16xf32>, %b: memref<16x32xf32>, %c: memref<64x32xf32>) attributes {pb.kernel, pb.nodes = ["MatMul_0"]} {
    %cst = arith.constant 0.0 : f32
    affine.for %i = 0 to 64 {
      affine.for %j = 0 to 32 {
        affine.store %cst, %c[%i, %j] : memref<64x32xf32>
      }
    }
    affine.for %i = 0 to 64 {
      affine.for %j = 0 to 32 {
        affine.for %k = 0 to 16 {
          %x = affine.load %a[%i, %k] : memref<64x16xf32>
          %y = affine.load %b[%k, %j] : memref<16x32xf32>
          %z = affine.load %c[%i, %j] : memref<64x32xf32>
          %m = arith.mulf %x, %y : f32
          %s = arith.addf %z, %m : f32
          affine.store %s, %c[%i, %j] : memref<64x32xf32>
        }
      }
    }
    return
  }
  func.func private @k1_relu(%c: memref<64x32xf32>, %d: memref<64x32xf32>) attributes {pb.kernel, pb.nodes = ["Relu_1"]} {
    %cst = arith.constant 0.0 : f32
    affine.for %i = 0 to 64 {
      affine.for %j = 0 to 32 {
        %v = affine.load %c[%i, %j] : memref<64x32xf32>
        %r = arith.maximumf %v, %cst : f32
        affine.store %r, %d[%i, %j] : memref<64x32xf32>
      }
    }
    return
  }
  func.func @main(%a: memref<64x16xf32> {pb.name = "a"}, %b: memref<16x32xf32> {pb.param = "w"}, %c: memref<64x32xf32>, %d: memref<64x32xf32> {pb.name = "d", pb.output}) {
    call @k0_matmul(%a, %b, %c) : (memref<64x16xf32>, memref<16x32xf32>, memref<64x32xf32>) -> ()
    call @k1_relu(%c, %d) : (memref<64x32xf32>, memref<64x32xf32>) -> ()
    return
  }
}
