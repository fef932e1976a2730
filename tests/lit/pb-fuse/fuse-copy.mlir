// RUN: pb-fuse --remarks %s -o %t 2>%t.rem
// RUN: FileCheck %s < %t
// RUN: FileCheck --check-prefix=REM %s < %t.rem
// RUN: %python %S/Inputs/numcheck.py %s %t | FileCheck --check-prefix=NUM %s

// Copy folding: a transpose read once per element by an elementwise nest
// is folded into that nest's loads (x read transposed), and the
// transposed buffer disappears. A transpose read by a matmul along its
// reduction is not folded (every reduction step would read across w's
// rows); fusion puts it in the matmul's row loop instead, and the
// transposed row (8 floats) is contracted to a private buffer.

// REM: remark: copy folded into its 1 reads: they load its source
// REM-NOT: copy folded

// CHECK-LABEL: func.func private @k0_Exp_1
// CHECK-SAME: (%[[X:.*]]: memref<8x16xf32>, %[[Y:.*]]: memref<16x8xf32>)
// CHECK-SAME: pb.nodes = ["Exp_1", "Transpose_0"]
// CHECK: affine.parallel (%[[I:.*]]) = (0) to (16) {
// CHECK-NEXT: affine.parallel (%[[J:.*]]) = (0) to (8) {
// CHECK-NEXT: %[[V:.*]] = affine.load %[[X]][%[[J]], %[[I]]] : memref<8x16xf32>
// CHECK-NEXT: math.exp %[[V]]
// CHECK-LABEL: func.func private @k1_Transpose_2
// CHECK-SAME: pb.nodes = ["Transpose_2", "MatMul_3"]
// CHECK: affine.parallel
// CHECK-NEXT: memref.alloca() : memref<8xf32>
// CHECK-LABEL: func.func @main
// CHECK-COUNT-2: call @k

// NUM: OK: 2 outputs, 384 values

#id = affine_map<(i, j) -> (i, j)>
module {
  func.func @main(%x: tensor<8x16xf32> {pb.name = "x"}, %w: tensor<8x16xf32> {pb.param = "w"}) -> (tensor<16x8xf32> {pb.name = "y"}, tensor<16x16xf32> {pb.name = "z"}) {
    %e0 = tensor.empty() : tensor<16x8xf32>
    %t = linalg.transpose ins(%x : tensor<8x16xf32>) outs(%e0 : tensor<16x8xf32>) permutation = [1, 0] loc("Transpose_0")
    %e1 = tensor.empty() : tensor<16x8xf32>
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<16x8xf32>) outs(%e1 : tensor<16x8xf32>) {
    ^bb0(%p: f32, %o: f32):
      %s = math.exp %p : f32
      linalg.yield %s : f32
    } -> tensor<16x8xf32> loc("Exp_1")
    %e2 = tensor.empty() : tensor<16x8xf32>
    %wt = linalg.transpose ins(%w : tensor<8x16xf32>) outs(%e2 : tensor<16x8xf32>) permutation = [1, 0] loc("Transpose_2")
    %zero = arith.constant 0.0 : f32
    %e3 = tensor.empty() : tensor<16x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e3 : tensor<16x16xf32>) -> tensor<16x16xf32> loc("MatMul_3")
    %z = linalg.matmul ins(%wt, %x : tensor<16x8xf32>, tensor<8x16xf32>) outs(%f : tensor<16x16xf32>) -> tensor<16x16xf32> loc("MatMul_3")
    return %y, %z : tensor<16x8xf32>, tensor<16x16xf32>
  }
}
