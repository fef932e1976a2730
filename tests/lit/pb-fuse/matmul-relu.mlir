// RUN: pb-fuse --no-fusion %s | FileCheck %s
// RUN: pb-fuse --no-fusion %s -o %t && %python %S/Inputs/numcheck.py %s %t | FileCheck --check-prefix=NUM %s

// Bufferization and @main's contract signature: graph inputs (pb.name),
// then parameters (pb.param) in their order, then one out-parameter per
// former result with {pb.name, pb.output}; @main returns nothing. Each loop
// nest (fill, matmul, relu) becomes a kernel named after its ONNX node.

// CHECK: module attributes {pb.stage = "fuse"}
// CHECK-LABEL: func.func private @k0_MatMul_0
// CHECK-SAME: (%[[C:.*]]: memref<4x16xf32>) attributes {pb.kernel, pb.nodes = ["MatMul_0"]}
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: affine.for
// CHECK: affine.for
// CHECK: affine.store %[[ZERO]], %[[C]]
// CHECK: return

// CHECK-LABEL: func.func private @k1_MatMul_0
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32>, %[[W:.*]]: memref<8x16xf32>, %[[C:.*]]: memref<4x16xf32>) attributes {pb.kernel, pb.nodes = ["MatMul_0"]}
// CHECK-COUNT-3: affine.for
// CHECK-DAG: affine.load %[[X]]
// CHECK-DAG: affine.load %[[W]]
// CHECK: arith.mulf
// CHECK: affine.store %{{.*}}, %[[C]]

// CHECK-LABEL: func.func private @k2_Relu_1
// CHECK-SAME: (%[[A:.*]]: memref<4x16xf32>, %[[Y:.*]]: memref<4x16xf32>) attributes {pb.kernel, pb.nodes = ["Relu_1"]}
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK: arith.maximumf
// CHECK: affine.store %{{.*}}, %[[Y]]

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32> {pb.name = "x"}, %[[W:.*]]: memref<8x16xf32> {pb.param = "w"}, %[[Y:.*]]: memref<4x16xf32> {pb.name = "y", pb.output})
// CHECK-NOT: ->
// CHECK-NEXT: %[[T:.*]] = memref.alloc() {{.*}}: memref<4x16xf32>
// CHECK-NEXT: call @k0_MatMul_0(%[[T]])
// CHECK-NEXT: call @k1_MatMul_0(%[[X]], %[[W]], %[[T]])
// CHECK-NEXT: call @k2_Relu_1(%[[T]], %[[Y]])
// CHECK-NEXT: memref.dealloc %[[T]]
// CHECK-NEXT: return

// NUM: OK: 1 outputs, 64 values

module {
  func.func @main(%x: tensor<4x8xf32> {pb.name = "x"}, %w: tensor<8x16xf32> {pb.param = "w"}) -> (tensor<4x16xf32> {pb.name = "y"}) {
    %cst = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x16xf32>
    %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32> loc("MatMul_0")
    %m = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32> loc("MatMul_0")
    %e2 = tensor.empty() : tensor<4x16xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<4x16xf32>) outs(%e2 : tensor<4x16xf32>) {
    ^bb0(%a: f32, %b: f32):
      %z = arith.maximumf %a, %cst : f32
      linalg.yield %z : f32
    } -> tensor<4x16xf32> loc("Relu_1")
    return %r : tensor<4x16xf32>
  }
}
