// RUN: pb-fuse --no-fusion %s -o %t
// RUN: FileCheck %s < %t
// RUN: %python %S/Inputs/numcheck.py %s %t | FileCheck --check-prefix=NUM %s
// RUN: pb-fuse %s -o %t.fused
// RUN: FileCheck --check-prefix=FUSED %s < %t.fused
// RUN: %python %S/Inputs/numcheck.py %s %t.fused | FileCheck --check-prefix=NUM %s
// RUN: pb-fuse --no-fusion --no-concat-in-place %s | FileCheck --check-prefix=COPY %s

// Concatenation in place: a dense block (each concat the one before it
// plus one feature, as DenseNet exports them) is one buffer, the output
// itself. Every producer writes its slice of it, the first concat is a
// prefix of it read in place, and nothing is copied.

// CHECK-LABEL: func.func private @k0_Relu_0
// CHECK-SAME: memref<2x4x4xf32, strided<[48, 4, 1]>>
// CHECK-LABEL: func.func private @k1_Neg_1
// CHECK-SAME: memref<2x4x4xf32, strided<[48, 4, 1], offset: 16>>
// CHECK-LABEL: func.func private @k2_Mul_3
// CHECK-SAME: memref<2x8x4xf32, strided<[48, 4, 1]>>
// CHECK-LABEL: func.func private @k3_Exp_4
// CHECK-SAME: memref<2x4x4xf32, strided<[48, 4, 1], offset: 32>>
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[Y:[a-z0-9]+]]: memref<2x12x4xf32> {pb.name = "y", pb.output}
// CHECK: %[[S0:.*]] = memref.subview %[[Y]][0, 0, 0] [2, 4, 4]
// CHECK-NEXT: call @k0_Relu_0(%{{.*}}, %[[S0]])
// CHECK-NEXT: %[[S1:.*]] = memref.subview %[[Y]][0, 4, 0] [2, 4, 4]
// CHECK-NEXT: call @k1_Neg_1(%{{.*}}, %[[S1]])
// CHECK-NEXT: %[[P:.*]] = memref.subview %[[Y]][0, 0, 0] [2, 8, 4]
// CHECK-NEXT: %[[H:.*]] = memref.alloc()
// CHECK-NEXT: call @k2_Mul_3(%[[P]], %[[H]])
// CHECK-NEXT: %[[S2:.*]] = memref.subview %[[Y]][0, 8, 0] [2, 4, 4]
// CHECK-NEXT: call @k3_Exp_4(%[[H]], %[[S2]])

// With fusion the block is one kernel.
// FUSED-LABEL: func.func private @k0_Relu_0
// FUSED-SAME: pb.nodes = ["Relu_0", "Neg_1", "Mul_3", "Exp_4"]
// FUSED-NOT: func.func private

// Without it, each concat copies all its operands into its own buffer.
// COPY-LABEL: func.func private @k0_Relu_0
// COPY: func.func private @k2_Concat_2
// COPY: func.func private @k3_Concat_2
// COPY: func.func private @k6_Concat_5
// COPY: func.func private @k7_Concat_5
// COPY: func.func private @k8_Concat_5

// NUM: OK: 1 outputs, 96 values

#id = affine_map<(b, c, i) -> (b, c, i)>
#sh = affine_map<(b, c, i) -> (b, c + 4, i)>
module {
  func.func @main(%x: tensor<2x4x4xf32> {pb.name = "x"}) -> (tensor<2x12x4xf32> {pb.name = "y"}) {
    %zero = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<2x4x4xf32>
    %x0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x4x4xf32>) outs(%e0 : tensor<2x4x4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %s = arith.maximumf %p, %zero : f32
      linalg.yield %s : f32
    } -> tensor<2x4x4xf32> loc("Relu_0")
    %e1 = tensor.empty() : tensor<2x4x4xf32>
    %f1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x4x4xf32>) outs(%e1 : tensor<2x4x4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %s = arith.negf %p : f32
      linalg.yield %s : f32
    } -> tensor<2x4x4xf32> loc("Neg_1")
    %c1 = tensor.concat dim(1) %x0, %f1 : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x8x4xf32> loc("Concat_2")
    %eh = tensor.empty() : tensor<2x8x4xf32>
    %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c1 : tensor<2x8x4xf32>) outs(%eh : tensor<2x8x4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %s = arith.mulf %p, %p : f32
      linalg.yield %s : f32
    } -> tensor<2x8x4xf32> loc("Mul_3")
    %e2 = tensor.empty() : tensor<2x4x4xf32>
    %f2 = linalg.generic {indexing_maps = [#sh, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%h : tensor<2x8x4xf32>) outs(%e2 : tensor<2x4x4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %s = math.exp %p : f32
      linalg.yield %s : f32
    } -> tensor<2x4x4xf32> loc("Exp_4")
    %c2 = tensor.concat dim(1) %x0, %f1, %f2 : (tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x12x4xf32> loc("Concat_5")
    return %c2 : tensor<2x12x4xf32>
  }
}
