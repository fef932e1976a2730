// RUN: pb-fuse --remarks %s -o %t 2>%t.rem
// RUN: FileCheck %s < %t
// RUN: FileCheck --check-prefix=REM %s < %t.rem
// RUN: %python %S/Inputs/numcheck.py %s %t | FileCheck --check-prefix=NUM %s

// Splitting a loop for a copy read through a merging reshape (repeat_kv's
// pattern, docs/pb-fuse.md "Grouped-query attention"): k [2, 32] expanded
// to [2, 4, 32] and read as [8, 32] through a collapse_shape by a nest
// whose loop over the 8 rows is the merged subscript. The loop splits
// into 2 x 4, q and y become [2, 4, 32] views, and the broadcast copy
// folds into the loads: one kernel reading k at the outer counter
// (without the split: the Expand copy and the Mul, two kernels).
// A transposing copy read the same way (x [4, 2, 32] as [2, 4, 32]) is
// left alone: the split serves only copies that keep their source's
// order or broadcast it.

// REM: node 'Mul_2': remark: loop over 8 split into 2 x 4: 1 accesses read the buffer under a collapse_shape at loop counters, 2 buffers viewed through an expand_shape
// REM-NEXT: node 'Expand_0': remark: copy folded into its 1 reads: they load its source
// REM-NOT: remark: loop over

// CHECK-LABEL: func.func private @k0_Mul_2
// CHECK-SAME: (%[[Q:.*]]: memref<2x4x32xf32>, %[[K:.*]]: memref<2x32xf32>, %[[Y:.*]]: memref<2x4x32xf32>)
// CHECK-SAME: pb.nodes = ["Mul_2", "Expand_0"]
// CHECK: affine.parallel (%[[G:.*]]) = (0) to (2) {
// CHECK-NEXT: affine.parallel (%[[R:.*]]) = (0) to (4) {
// CHECK-NEXT: affine.parallel (%[[D:.*]]) = (0) to (32) {
// CHECK-DAG: affine.load %[[Q]][%[[G]], %[[R]], %[[D]]] : memref<2x4x32xf32>
// CHECK-DAG: affine.load %[[K]][%[[G]], %[[D]]] : memref<2x32xf32>
// CHECK: affine.store %{{.*}}, %[[Y]][%[[G]], %[[R]], %[[D]]] : memref<2x4x32xf32>
// The transposed copy stays a kernel; its reader reads it through the view.
// CHECK-LABEL: func.func private @k1_Transpose_3
// CHECK-LABEL: func.func private @k2_Add_5
// CHECK-SAME: memref<8x32xf32>
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[AQ:.*]]: memref<8x32xf32> {pb.name = "q"}, %[[AK:.*]]: memref<2x32xf32> {pb.name = "k"}, %{{.*}}: memref<4x2x32xf32> {pb.name = "x"}, %[[AY:.*]]: memref<8x32xf32> {pb.name = "y", pb.output}
// CHECK-DAG: %[[EQ:.*]] = memref.expand_shape %[[AQ]] {{\[}}[0, 1], [2]] output_shape [2, 4, 32] : memref<8x32xf32> into memref<2x4x32xf32>
// CHECK-DAG: %[[EY:.*]] = memref.expand_shape %[[AY]] {{\[}}[0, 1], [2]] output_shape [2, 4, 32] : memref<8x32xf32> into memref<2x4x32xf32>
// CHECK: call @k0_Mul_2(%[[EQ]], %[[AK]], %[[EY]])
// CHECK: call @k1_Transpose_3
// CHECK: memref.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : memref<2x4x32xf32> into memref<8x32xf32>
// CHECK: call @k2_Add_5
// CHECK-NOT: call

// NUM: OK: 2 outputs, 512 values

#id = affine_map<(i, j) -> (i, j)>
module {
  func.func @main(%q: tensor<8x32xf32> {pb.name = "q"}, %k: tensor<2x32xf32> {pb.name = "k"}, %x: tensor<4x2x32xf32> {pb.name = "x"}) -> (tensor<8x32xf32> {pb.name = "y"}, tensor<8x32xf32> {pb.name = "z"}) {
    %e0 = tensor.empty() : tensor<2x4x32xf32>
    %kb = linalg.broadcast ins(%k : tensor<2x32xf32>) outs(%e0 : tensor<2x4x32xf32>) dimensions = [1] loc("Expand_0")
    %kr = tensor.collapse_shape %kb [[0, 1], [2]] : tensor<2x4x32xf32> into tensor<8x32xf32> loc("Reshape_1")
    %e1 = tensor.empty() : tensor<8x32xf32>
    %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%q, %kr : tensor<8x32xf32>, tensor<8x32xf32>) outs(%e1 : tensor<8x32xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      linalg.yield %m : f32
    } -> tensor<8x32xf32> loc("Mul_2")
    %e2 = tensor.empty() : tensor<2x4x32xf32>
    %xt = linalg.transpose ins(%x : tensor<4x2x32xf32>) outs(%e2 : tensor<2x4x32xf32>) permutation = [1, 0, 2] loc("Transpose_3")
    %xr = tensor.collapse_shape %xt [[0, 1], [2]] : tensor<2x4x32xf32> into tensor<8x32xf32> loc("Reshape_4")
    %e3 = tensor.empty() : tensor<8x32xf32>
    %z = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%q, %xr : tensor<8x32xf32>, tensor<8x32xf32>) outs(%e3 : tensor<8x32xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    } -> tensor<8x32xf32> loc("Add_5")
    return %y, %z : tensor<8x32xf32>, tensor<8x32xf32>
  }
}
