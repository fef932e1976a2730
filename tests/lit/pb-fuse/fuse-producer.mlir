// RUN: pb-fuse --remarks --report %t.json %s -o %t 2>%t.rem
// RUN: FileCheck %s < %t
// RUN: FileCheck --check-prefix=REM %s < %t.rem
// RUN: FileCheck --check-prefix=JSON %s < %t.json
// RUN: %python %S/Inputs/numcheck.py %s %t | FileCheck --check-prefix=NUM %s

// Producer fusion: a chain of elementwise nests with a broadcast (bias
// add, scale, tanh) becomes one nest; both intermediates are written and
// read in the same (i, j) iteration and shrink to scalars. A sibling that
// only shares the input %x joins too (one pass over %x).

// CHECK-LABEL: func.func private @k0_Add_0
// CHECK-SAME: pb.nodes = ["Add_0", "Mul_1", "Tanh_2", "Exp_3"]
// CHECK: affine.parallel (%[[I:.*]]) = (0) to (64) {
// CHECK-NEXT: affine.parallel (%[[J:.*]]) = (0) to (32) {
// CHECK-DAG: memref.alloca() : memref<f32>
// CHECK-DAG: memref.alloca() : memref<f32>
// CHECK: arith.addf
// CHECK: arith.mulf
// CHECK: math.tanh
// CHECK: math.exp
// CHECK-NOT: affine.for
// CHECK-LABEL: func.func @main
// CHECK-NOT: memref.alloc
// CHECK: call @k0_Add_0
// CHECK-NEXT: return

// REM: node 'Mul_1': remark: fused (producer) into the nest of S0 at depth 2 of 2
// REM: node 'Tanh_2': remark: fused (producer) into the nest of S0 at depth 2 of 2
// REM: node 'Exp_3': remark: fused (sibling) into the nest of S0 at depth 2 of 2

// Traffic: x (8 KiB) and b read once, y and z written once; before, the
// two intermediates went through memory and x was read twice.
// JSON: "before": {
// JSON-NEXT: "kernels": 4,
// JSON-NEXT: "bytes_read": 32896,
// JSON-NEXT: "bytes_written": 32768,
// JSON: "after": {
// JSON-NEXT: "kernels": 1,
// JSON-NEXT: "bytes_read": 8320,
// JSON-NEXT: "bytes_written": 16384,

// NUM: OK: 2 outputs, 4096 values

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
module {
  func.func @main(%x: tensor<64x32xf32> {pb.name = "x"}, %b: tensor<32xf32> {pb.param = "b"}) -> (tensor<64x32xf32> {pb.name = "y"}, tensor<64x32xf32> {pb.name = "z"}) {
    %two = arith.constant 2.0 : f32
    %e0 = tensor.empty() : tensor<64x32xf32>
    %a = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<64x32xf32>, tensor<32xf32>) outs(%e0 : tensor<64x32xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %s = arith.addf %p, %q : f32
      linalg.yield %s : f32
    } -> tensor<64x32xf32> loc("Add_0")
    %e1 = tensor.empty() : tensor<64x32xf32>
    %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<64x32xf32>) outs(%e1 : tensor<64x32xf32>) {
    ^bb0(%p: f32, %o: f32):
      %s = arith.mulf %p, %two : f32
      linalg.yield %s : f32
    } -> tensor<64x32xf32> loc("Mul_1")
    %e2 = tensor.empty() : tensor<64x32xf32>
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<64x32xf32>) outs(%e2 : tensor<64x32xf32>) {
    ^bb0(%p: f32, %o: f32):
      %s = math.tanh %p : f32
      linalg.yield %s : f32
    } -> tensor<64x32xf32> loc("Tanh_2")
    %e3 = tensor.empty() : tensor<64x32xf32>
    %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x32xf32>) outs(%e3 : tensor<64x32xf32>) {
    ^bb0(%p: f32, %o: f32):
      %s = math.exp %p : f32
      linalg.yield %s : f32
    } -> tensor<64x32xf32> loc("Exp_3")
    return %t, %z : tensor<64x32xf32>, tensor<64x32xf32>
  }
}
