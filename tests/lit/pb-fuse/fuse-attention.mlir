// RUN: split-file %s %t
// RUN: pb-fuse --fuse-attention --remarks %t/pos.mlir -o %t/pos.out 2>%t/pos.rem
// RUN: FileCheck %s < %t/pos.out
// RUN: FileCheck --check-prefix=REM %s < %t/pos.rem
// RUN: %python %S/Inputs/numcheck.py %t/pos.mlir %t/pos.out | FileCheck --check-prefix=NUM %s
// RUN: pb-fuse %t/pos.mlir | FileCheck --check-prefix=OFF %s
// RUN: pb-fuse --fuse-attention --remarks %t/neg.mlir -o %t/neg.out 2>%t/neg.rem
// RUN: FileCheck --check-prefix=NEG %s < %t/neg.out
// RUN: FileCheck --check-prefix=NEGREM %s < %t/neg.rem
// RUN: %python %S/Inputs/numcheck.py %t/neg.mlir %t/neg.out | FileCheck --check-prefix=NEGNUM %s

// Attention fusion (--fuse-attention): S = Q.K^T (K stored [b, j, d]),
// scaled, softmax over j, O = P.V, as linalg on tensors. The nine nests
// (fills, contraction, scale, max, exp, sum, divide, fill, contraction)
// become one nest over the rows (b, i) with FlashAttention's recurrence:
// per key j the score s, the running maximum m, the rescaling factor
// a = exp(m - max(m, s)), the running sum l and the accumulator row acc
// (memref<5xf32>); S, P and the row buffers are never stored. Off by
// default.

// CHECK-LABEL: func.func private @k0_MatMul_0
// CHECK-SAME: (%[[Q:arg[0-9]+]]: memref<2x4x8xf32>, %[[K:arg[0-9]+]]: memref<2x6x8xf32>, %[[V:arg[0-9]+]]: memref<2x6x5xf32>, %[[O:arg[0-9]+]]: memref<2x4x5xf32>)
// CHECK-SAME: pb.nodes = ["MatMul_0", "MatMul_1", "Softmax_0", "Mul_0"]
// CHECK: affine.parallel (%[[B:arg[0-9]+]]) = (0) to (2) {
// CHECK-NEXT: affine.parallel (%[[I:arg[0-9]+]]) = (0) to (4) {
// CHECK-NEXT: %[[M:.*]] = memref.alloca() : memref<f32>
// CHECK-NEXT: %[[L:.*]] = memref.alloca() : memref<f32>
// CHECK-NEXT: %[[ACC:.*]] = memref.alloca() : memref<5xf32>
// CHECK: affine.for %[[J:arg[0-9]+]] = 0 to 6 {
// CHECK: affine.for %[[D:arg[0-9]+]] = 0 to 8 {
// CHECK: affine.load %[[Q]][%[[B]], %[[I]], %[[D]]]
// CHECK: affine.load %[[K]][%[[B]], %[[J]], %[[D]]]
// CHECK: %[[SV:.*]] = arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK-NEXT: %[[MO:.*]] = affine.load %[[M]][]
// CHECK-NEXT: %[[MN:.*]] = arith.maximumf %[[SV]], %[[MO]]
// CHECK-NEXT: %[[INF:.*]] = arith.cmpf oeq, %[[MN]]
// CHECK-NEXT: %[[SAFE:.*]] = arith.select %[[INF]], %{{.*}}, %[[MN]]
// CHECK-NEXT: %[[D1:.*]] = arith.subf %[[MO]], %[[SAFE]]
// CHECK-NEXT: %[[A:.*]] = math.exp %[[D1]]
// CHECK-NEXT: %[[D2:.*]] = arith.subf %[[SV]], %[[SAFE]]
// CHECK-NEXT: %[[P:.*]] = math.exp %[[D2]]
// CHECK-NEXT: %[[LO:.*]] = affine.load %[[L]][]
// CHECK-NEXT: %[[LA:.*]] = arith.mulf %[[LO]], %[[A]]
// CHECK-NEXT: %[[LN:.*]] = arith.addf %[[LA]], %[[P]]
// CHECK-NEXT: affine.store %[[LN]], %[[L]][]
// CHECK-NEXT: affine.for %[[E:arg[0-9]+]] = 0 to 5 {
// CHECK-NEXT: %[[AC:.*]] = affine.load %[[ACC]][%[[E]]]
// CHECK-NEXT: %[[VV:.*]] = affine.load %[[V]][%[[B]], %[[J]], %[[E]]]
// CHECK-NEXT: %[[PV:.*]] = arith.mulf %[[P]], %[[VV]]
// CHECK-NEXT: %[[AA:.*]] = arith.mulf %[[AC]], %[[A]]
// CHECK-NEXT: %[[AN:.*]] = arith.addf %[[AA]], %[[PV]]
// CHECK-NEXT: affine.store %[[AN]], %[[ACC]][%[[E]]]
// CHECK-NEXT: }
// CHECK-NEXT: affine.store %[[MN]], %[[M]][]
// CHECK-NEXT: }
// CHECK-NEXT: %[[LF:.*]] = affine.load %[[L]][]
// CHECK-NEXT: affine.for %[[E2:arg[0-9]+]] = 0 to 5 {
// CHECK-NEXT: %[[AF:.*]] = affine.load %[[ACC]][%[[E2]]]
// CHECK-NEXT: %[[OV:.*]] = arith.divf %[[AF]], %[[LF]]
// CHECK-NEXT: affine.store %[[OV]], %[[O]][%[[B]], %[[I]], %[[E2]]]
// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @main
// CHECK-NOT: memref.alloc
// CHECK: call @k0_MatMul_0
// CHECK-NEXT: return

// REM: pos.mlir: node 'MatMul_0': remark: attention fused: QK^T, softmax and PV in one nest (online softmax), S and P (832 bytes) never stored

// NUM: OK: 1 outputs, 40 values

// Off by default: no online softmax.
// OFF-NOT: arith.cmpf
// OFF: func.func @main

// Negative: P is also a result of @main, so it must be stored; nothing
// is fused into the online form and the remark says why (the ordinary
// fusions still apply).
// NEGREM: neg.mlir: node 'MatMul_0': remark: attention not fused: P is not a buffer of its own (a function argument, an output?)
// NEG-NOT: arith.cmpf
// NEG-NOT: memref<5xf32>
// NEG: func.func @main
// NEGNUM: OK: 2 outputs, 88 values

//--- pos.mlir
#q = affine_map<(b, i, j, d) -> (b, i, d)>
#k = affine_map<(b, i, j, d) -> (b, j, d)>
#s = affine_map<(b, i, j, d) -> (b, i, j)>
#id = affine_map<(b, i, j) -> (b, i, j)>
#row = affine_map<(b, i, j) -> (b, i)>
module {
  func.func @main(%q: tensor<2x4x8xf32> {pb.name = "q"}, %k: tensor<2x6x8xf32> {pb.name = "k"}, %v: tensor<2x6x5xf32> {pb.name = "v"}) -> (tensor<2x4x5xf32> {pb.name = "o"}) {
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %scale = arith.constant 0.35355339 : f32
    %e0 = tensor.empty() : tensor<2x4x6xf32>
    %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32> loc("MatMul_0")
    %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x8xf32>, tensor<2x6x8xf32>) outs(%s0 : tensor<2x4x6xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %o, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x4x6xf32> loc("MatMul_0")
    %e1 = tensor.empty() : tensor<2x4x6xf32>
    %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x4x6xf32>) outs(%e1 : tensor<2x4x6xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.mulf %a, %scale : f32
      linalg.yield %r : f32
    } -> tensor<2x4x6xf32> loc("Mul_0")
    %e2 = tensor.empty() : tensor<2x4xf32>
    %m0 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32> loc("Softmax_0")
    %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x4x6xf32>) outs(%m0 : tensor<2x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.maximumf %a, %o : f32
      linalg.yield %r : f32
    } -> tensor<2x4xf32> loc("Softmax_0")
    %e3 = tensor.empty() : tensor<2x4x6xf32>
    %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %m : tensor<2x4x6xf32>, tensor<2x4xf32>) outs(%e3 : tensor<2x4x6xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      %e = math.exp %d : f32
      linalg.yield %e : f32
    } -> tensor<2x4x6xf32> loc("Softmax_0")
    %e4 = tensor.empty() : tensor<2x4xf32>
    %l0 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<2x4xf32>) -> tensor<2x4xf32> loc("Softmax_0")
    %l = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ex : tensor<2x4x6xf32>) outs(%l0 : tensor<2x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.addf %a, %o : f32
      linalg.yield %r : f32
    } -> tensor<2x4xf32> loc("Softmax_0")
    %e5 = tensor.empty() : tensor<2x4x6xf32>
    %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %l : tensor<2x4x6xf32>, tensor<2x4xf32>) outs(%e5 : tensor<2x4x6xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.divf %a, %b : f32
      linalg.yield %d : f32
    } -> tensor<2x4x6xf32> loc("Softmax_0")
    %e6 = tensor.empty() : tensor<2x4x5xf32>
    %o0 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32> loc("MatMul_1")
    %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%o0 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32> loc("MatMul_1")
    return %o : tensor<2x4x5xf32>
  }
}
//--- neg.mlir
#q = affine_map<(b, i, j, d) -> (b, i, d)>
#k = affine_map<(b, i, j, d) -> (b, j, d)>
#s = affine_map<(b, i, j, d) -> (b, i, j)>
#id = affine_map<(b, i, j) -> (b, i, j)>
#row = affine_map<(b, i, j) -> (b, i)>
module {
  func.func @main(%q: tensor<2x4x8xf32> {pb.name = "q"}, %k: tensor<2x6x8xf32> {pb.name = "k"}, %v: tensor<2x6x5xf32> {pb.name = "v"}) -> (tensor<2x4x5xf32> {pb.name = "o"}, tensor<2x4x6xf32> {pb.name = "p"}) {
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %scale = arith.constant 0.35355339 : f32
    %e0 = tensor.empty() : tensor<2x4x6xf32>
    %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32> loc("MatMul_0")
    %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x8xf32>, tensor<2x6x8xf32>) outs(%s0 : tensor<2x4x6xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %o, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x4x6xf32> loc("MatMul_0")
    %e1 = tensor.empty() : tensor<2x4x6xf32>
    %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x4x6xf32>) outs(%e1 : tensor<2x4x6xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.mulf %a, %scale : f32
      linalg.yield %r : f32
    } -> tensor<2x4x6xf32> loc("Mul_0")
    %e2 = tensor.empty() : tensor<2x4xf32>
    %m0 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32> loc("Softmax_0")
    %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x4x6xf32>) outs(%m0 : tensor<2x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.maximumf %a, %o : f32
      linalg.yield %r : f32
    } -> tensor<2x4xf32> loc("Softmax_0")
    %e3 = tensor.empty() : tensor<2x4x6xf32>
    %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %m : tensor<2x4x6xf32>, tensor<2x4xf32>) outs(%e3 : tensor<2x4x6xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      %e = math.exp %d : f32
      linalg.yield %e : f32
    } -> tensor<2x4x6xf32> loc("Softmax_0")
    %e4 = tensor.empty() : tensor<2x4xf32>
    %l0 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<2x4xf32>) -> tensor<2x4xf32> loc("Softmax_0")
    %l = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ex : tensor<2x4x6xf32>) outs(%l0 : tensor<2x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.addf %a, %o : f32
      linalg.yield %r : f32
    } -> tensor<2x4xf32> loc("Softmax_0")
    %e5 = tensor.empty() : tensor<2x4x6xf32>
    %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %l : tensor<2x4x6xf32>, tensor<2x4xf32>) outs(%e5 : tensor<2x4x6xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.divf %a, %b : f32
      linalg.yield %d : f32
    } -> tensor<2x4x6xf32> loc("Softmax_0")
    %e6 = tensor.empty() : tensor<2x4x5xf32>
    %o0 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32> loc("MatMul_1")
    %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%o0 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32> loc("MatMul_1")
    return %o, %p : tensor<2x4x5xf32>, tensor<2x4x6xf32>
  }
}
