// RUN: pb-fuse --remarks %s -o %t 2>%t.rem
// RUN: FileCheck %s < %t
// RUN: FileCheck --check-prefix=REM %s < %t.rem
// RUN: %python %S/Inputs/numcheck.py %s %t | FileCheck --check-prefix=NUM %s
// RUN: pb-fuse --max-redundancy=0.5 %s | FileCheck --check-prefix=OFF %s

// Producer inlining: a bias add, transposed, then exp. The transpose
// reads the sums transposed, so its loops do not line up with the add's
// and merging cannot fuse them; but it reads each sum once, so the add is
// inlined into the transpose's loads (--max-redundancy=1 allows each value
// computed once). The transpose, now computing the sums, then merges with
// exp (producer fusion) and the sum is contracted to a scalar: one kernel,
// no intermediate buffer in memory.

// REM: node 'Add_0': remark: producer inlined into its 1 reads (computed 1.00 times per element, --max-redundancy=1)
// REM: node 'Exp_2': remark: fused (producer) into the nest of S0 at depth 2 of 2

// CHECK-LABEL: func.func private @k0_Transpose_1
// CHECK-SAME: (%[[X:.*]]: memref<8x16xf32>, %[[B:.*]]: memref<16xf32>, %[[Y:.*]]: memref<16x8xf32>)
// CHECK-SAME: pb.nodes = ["Transpose_1", "Add_0", "Exp_2"]
// CHECK: affine.parallel (%[[I:.*]]) = (0) to (16) {
// CHECK-NEXT: affine.parallel (%[[J:.*]]) = (0) to (8) {
// CHECK-NEXT: memref.alloca() : memref<f32>
// CHECK-NEXT: affine.load %[[X]][%[[J]], %[[I]]]
// CHECK-NEXT: affine.load %[[B]][%[[I]]]
// CHECK-NEXT: arith.addf
// CHECK: math.exp
// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @main
// CHECK-NOT: memref.alloc

// OFF-COUNT-2: func.func private @k

// NUM: OK: 1 outputs, 128 values

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
module {
  func.func @main(%x: tensor<8x16xf32> {pb.name = "x"}, %b: tensor<16xf32> {pb.param = "b"}) -> (tensor<16x8xf32> {pb.name = "y"}) {
    %e0 = tensor.empty() : tensor<8x16xf32>
    %a = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<8x16xf32>, tensor<16xf32>) outs(%e0 : tensor<8x16xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %s = arith.addf %p, %q : f32
      linalg.yield %s : f32
    } -> tensor<8x16xf32> loc("Add_0")
    %e1 = tensor.empty() : tensor<16x8xf32>
    %t = linalg.transpose ins(%a : tensor<8x16xf32>) outs(%e1 : tensor<16x8xf32>) permutation = [1, 0] loc("Transpose_1")
    %e2 = tensor.empty() : tensor<16x8xf32>
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<16x8xf32>) outs(%e2 : tensor<16x8xf32>) {
    ^bb0(%p: f32, %o: f32):
      %s = math.exp %p : f32
      linalg.yield %s : f32
    } -> tensor<16x8xf32> loc("Exp_2")
    return %y : tensor<16x8xf32>
  }
}
