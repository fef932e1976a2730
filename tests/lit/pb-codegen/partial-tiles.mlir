// RUN: pb-codegen --emit=mlir %s | FileCheck %s
// RUN: pb-codegen %s | FileCheck --check-prefix=PLAN %s

// Partial tiles: a 50x50 ReLU in 32x32 tiles has a 2x2 grid of blocks and
// thread loops bounded by min(32, 50 - tile start). The block has 32x32
// threads (the constant bound) and each thread checks at run time that
// its indices are below the bounds.

// CHECK-LABEL: gpu.func @k0_relu_kernel(
// CHECK-SAME: known_block_size = array<i32: 1024, 1, 1>, known_grid_size = array<i32: 4, 1, 1>
// CHECK-DAG: gpu.block_id x
// CHECK-DAG: gpu.thread_id x
// CHECK: arith.minsi
// CHECK: arith.minsi
// CHECK: arith.cmpi
// CHECK: scf.if
// CHECK: memref.load
// CHECK: arith.maximumf
// CHECK: memref.store

// PLAN: "grid": [4, 1, 1], "block": [1024, 1, 1]

module attributes {pb.stage = "smem", pb.source = "relu.onnx"} {
  func.func private @k0_relu(%x: memref<50x50xf32>, %y: memref<50x50xf32>) attributes {pb.kernel, pb.nodes = ["Relu_0"]} {
    %z = arith.constant 0.0 : f32
    affine.parallel (%bi, %bj) = (0, 0) to (50, 50) step (32, 32) {
      affine.parallel (%ti, %tj) = (0, 0) to (min(32, -%bi + 50), min(32, -%bj + 50)) {
        %v = affine.load %x[%bi + %ti, %bj + %tj] : memref<50x50xf32>
        %r = arith.maximumf %v, %z : f32
        affine.store %r, %y[%bi + %ti, %bj + %tj] : memref<50x50xf32>
      } {pb.map = "thread"}
    } {pb.map = "block"}
    return
  }
  func.func @main(%x: memref<50x50xf32> {pb.name = "x"}, %y: memref<50x50xf32> {pb.name = "y", pb.output}) {
    call @k0_relu(%x, %y) : (memref<50x50xf32>, memref<50x50xf32>) -> ()
    return
  }
}
