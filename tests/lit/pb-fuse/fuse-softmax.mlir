// RUN: pb-fuse --remarks %s -o %t 2>%t.rem
// RUN: FileCheck %s < %t
// RUN: FileCheck --check-prefix=REM %s < %t.rem
// RUN: %python %S/Inputs/numcheck.py %s %t | FileCheck --check-prefix=NUM %s
// RUN: pb-fuse --min-parallelism=256 --remarks %s 2>&1 >/dev/null | FileCheck --check-prefix=PAR %s

// Reduction fusion: softmax's six nests (max: fill + reduce, exp-sub, sum:
// fill + reduce, divide) share the row loop and become one kernel. Fusion
// goes statement by statement (max and exp; then sum and divide), then the
// second kernel joins the first whole. Bufferization gave the row maximum
// and the row sum one buffer; every access to it stays within one row, so
// it shrinks to one scalar. The exponentials live in the out-parameter
// (bufferization reuses it), which stays global.
// The cost model finds the 3-row kernel faster than six launches; with a
// floor of --min-parallelism=256 the 3 rows are too few to give up the
// 15-way parallel exp nest for, and the remark says so.

// CHECK-LABEL: func.func private @k0_Softmax_0
// CHECK-SAME: (%[[X:.*]]: memref<3x5xf32>, %[[Y:.*]]: memref<3x5xf32>)
// CHECK: affine.parallel (%[[I:.*]]) = (0) to (3) {
// CHECK-NEXT: %[[MAX:.*]] = memref.alloca() : memref<f32>
// CHECK: affine.store %{{.*}}, %[[MAX]][]
// CHECK: affine.for
// CHECK: arith.maximumf
// CHECK: affine.store %{{.*}}, %[[MAX]][]
// CHECK: affine.for
// CHECK: affine.load %[[MAX]][]
// CHECK: math.exp
// CHECK: affine.store %{{.*}}, %[[Y]][%[[I]], %{{.*}}]
// CHECK: affine.store %{{.*}}, %[[MAX]][]
// CHECK: affine.for
// CHECK: arith.addf
// CHECK: affine.store %{{.*}}, %[[MAX]][]
// CHECK: affine.for
// CHECK: affine.load %[[MAX]][]
// CHECK: arith.divf
// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @main
// CHECK-NOT: memref.alloc
// CHECK: call @k0_Softmax_0
// CHECK-NEXT: return

// REM-COUNT-2: remark: fused (reduction) into the nest of S0 at depth 1 of 2
// REM-COUNT-2: remark: fused (reduction) into the nest of S3 at depth 1 of 2
// REM: remark: fused the kernel of S3 into the one of S0

// PAR: remark: not fused: the fused nest would have 3 parallel iterations, the nests have 3 and 15 (--min-parallelism=256)

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
