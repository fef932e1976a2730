// RUN: pb-fuse --no-fusion %s | FileCheck %s
// RUN: pb-fuse --no-fusion %s -o %t && %python %S/Inputs/numcheck.py %s %t | FileCheck --check-prefix=NUM %s

// Softmax written as linalg.generic reductions: two reductions, two
// elementwise nests and two fills, one kernel each, all covering the same
// ONNX node. Bufferization reuses the out-parameter for the exponentials.

// CHECK-LABEL: func.func private @k0_Softmax_0
// CHECK-SAME: pb.nodes = ["Softmax_0"]
// CHECK: arith.constant 0xFF800000 : f32
// CHECK-LABEL: func.func private @k1_Softmax_0
// CHECK: arith.maximumf
// CHECK-LABEL: func.func private @k2_Softmax_0
// CHECK: math.exp
// CHECK-LABEL: func.func private @k3_Softmax_0
// CHECK-LABEL: func.func private @k4_Softmax_0
// CHECK: arith.addf
// CHECK-LABEL: func.func private @k5_Softmax_0
// CHECK: arith.divf
// CHECK-LABEL: func.func @main
// CHECK-SAME: %{{.*}}: memref<3x5xf32> {pb.name = "y", pb.output})
// CHECK-COUNT-6: call @k

// NUM: OK: 1 outputs, 15 values

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
module {
  func.func @main(%x: tensor<3x5xf32> {pb.name = "x"}) -> (tensor<3x5xf32> {pb.name = "y"}) {
    %ninf = arith.constant 0xFF800000 : f32
    %zero = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<3xf32>
    %m0 = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<3xf32>) -> tensor<3xf32> loc("Softmax_0")
    %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<3x5xf32>) outs(%m0 : tensor<3xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.maximumf %a, %o : f32
      linalg.yield %r : f32
    } -> tensor<3xf32> loc("Softmax_0")
    %e1 = tensor.empty() : tensor<3x5xf32>
    %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %m : tensor<3x5xf32>, tensor<3xf32>) outs(%e1 : tensor<3x5xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      %e = math.exp %d : f32
      linalg.yield %e : f32
    } -> tensor<3x5xf32> loc("Softmax_0")
    %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<3xf32>) -> tensor<3xf32> loc("Softmax_0")
    %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%ex : tensor<3x5xf32>) outs(%s0 : tensor<3xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.addf %a, %o : f32
      linalg.yield %r : f32
    } -> tensor<3xf32> loc("Softmax_0")
    %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%ex, %s : tensor<3x5xf32>, tensor<3xf32>) outs(%e1 : tensor<3x5xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.divf %a, %b : f32
      linalg.yield %d : f32
    } -> tensor<3x5xf32> loc("Softmax_0")
    return %y : tensor<3x5xf32>
  }
}
