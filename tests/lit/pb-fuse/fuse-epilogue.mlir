// RUN: pb-fuse --remarks --report %t.json %s -o %t 2>%t.rem
// RUN: FileCheck %s < %t
// RUN: FileCheck --check-prefix=REM %s < %t.rem
// RUN: FileCheck --check-prefix=JSON %s < %t.json
// RUN: %python %S/Inputs/numcheck.py %s %t | FileCheck --check-prefix=NUM %s
// RUN: pb-fuse --fusion=producer,reduction --remarks %s 2>&1 >/dev/null | FileCheck --check-prefix=OFF %s

// Epilogue fusion: matmul, bias add and relu become one kernel. The fill
// and the k-loop run inside the (i, j) loops of the first nest; the
// accumulator and the biased value, produced and consumed in the same
// (i, j) iteration, are contracted to scalars allocated in the j loop.

// CHECK-LABEL: func.func private @k0_MatMul_0
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32>, %[[W:.*]]: memref<8x16xf32>, %[[B:.*]]: memref<16xf32>, %[[Y:.*]]: memref<4x16xf32>)
// CHECK-SAME: pb.nodes = ["MatMul_0", "Add_1", "Relu_2"]
// CHECK: affine.parallel (%[[I:.*]]) = (0) to (4) {
// CHECK-NEXT: affine.parallel (%[[J:.*]]) = (0) to (16) {
// CHECK-DAG: %[[T:.*]] = memref.alloca() : memref<f32>
// CHECK-DAG: %[[ACC:.*]] = memref.alloca() : memref<f32>
// CHECK: affine.store %{{.*}}, %[[ACC]][] : memref<f32>
// CHECK-NEXT: affine.for %[[K:.*]] = 0 to 8 {
// CHECK: affine.load %[[X]][%[[I]], %[[K]]]
// CHECK: affine.load %[[W]][%[[K]], %[[J]]]
// CHECK: affine.store %{{.*}}, %[[ACC]][]
// CHECK: }
// CHECK: affine.load %[[ACC]][]
// CHECK: affine.load %[[B]][%[[J]]]
// CHECK: arith.addf
// CHECK: affine.store %{{.*}}, %[[T]][]
// CHECK: arith.maximumf
// CHECK: affine.store %{{.*}}, %[[Y]][%[[I]], %[[J]]]
// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @main
// CHECK-NOT: memref.alloc
// CHECK: call @k0_MatMul_0
// CHECK-NEXT: return

// REM: remark: fused (reduction) into the nest of S0 at depth 2 of 3
// REM: node 'Add_1': remark: fused (epilogue) into the nest of S0 at depth 2 of 2
// REM: node 'Relu_2': remark: fused (producer) into the nest of S0 at depth 2 of 2

// JSON: "fusion": "pb"
// JSON: "before": {
// JSON-NEXT: "kernels": 4,
// JSON-NEXT: "bytes_read": 1472,
// JSON-NEXT: "bytes_written": 1024,
// JSON: "after": {
// JSON-NEXT: "kernels": 1,
// JSON-NEXT: "bytes_read": 704,
// JSON-NEXT: "bytes_written": 256,
// JSON: "name": "k0_MatMul_0",
// JSON: "loops": "parallel 4 {parallel 16 {for 8 } }",
// JSON-NEXT: "nests": 4,
// JSON: "contracted_buffers": 2,
// JSON-NEXT: "local_bytes": 8,
// JSON-NEXT: "fusion": [
// JSON-NEXT: "producer",
// JSON-NEXT: "epilogue",
// JSON-NEXT: "reduction"

// OFF: node 'Add_1': remark: not fused: epilogue fusion is disabled

// NUM: OK: 1 outputs, 64 values
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
module {
  func.func @main(%x: tensor<4x8xf32> {pb.name = "x"}, %w: tensor<8x16xf32> {pb.param = "w"}, %b: tensor<16xf32> {pb.param = "b"}) -> (tensor<4x16xf32> {pb.name = "y"}) {
    %cst = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x16xf32>
    %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32> loc("MatMul_0")
    %m = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32> loc("MatMul_0")
    %e1 = tensor.empty() : tensor<4x16xf32>
    %a = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%m, %b : tensor<4x16xf32>, tensor<16xf32>) outs(%e1 : tensor<4x16xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %s = arith.addf %p, %q : f32
      linalg.yield %s : f32
    } -> tensor<4x16xf32> loc("Add_1")
    %e2 = tensor.empty() : tensor<4x16xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x16xf32>) outs(%e2 : tensor<4x16xf32>) {
    ^bb0(%p: f32, %o: f32):
      %z = arith.maximumf %p, %cst : f32
      linalg.yield %z : f32
    } -> tensor<4x16xf32> loc("Relu_2")
    return %r : tensor<4x16xf32>
  }
}
