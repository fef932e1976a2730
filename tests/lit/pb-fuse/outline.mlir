// RUN: pb-fuse --no-fusion --split-input-file %s | FileCheck %s

// Outlining details: what is passed, what is cloned, how kernels are named.

// Hand-written affine on memrefs without a pb.stage (treated as input of
// pb-import's kind). The scalar constants used in the nest are cloned into
// the kernel; the memref is passed. An unnamed nest is named after its
// operation and covers no ONNX node.

// CHECK-LABEL: func.func private @k0_for
// CHECK-SAME: (%[[A:.*]]: memref<8xf32>) attributes {pb.kernel, pb.nodes = []}
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[F:.*]] = arith.constant 1.500000e+00 : f32
// CHECK: affine.for %[[I:.*]] = 0 to 8
// CHECK: %[[V:.*]] = memref.load %[[A]][%[[C2]]]
// CHECK: %[[W:.*]] = arith.addf %[[V]], %[[F]]
// CHECK: affine.store %[[W]], %[[A]][%[[I]]]
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: memref<8xf32> {pb.name = "a"})
// CHECK-NEXT: call @k0_for(%[[A]]) : (memref<8xf32>) -> ()
// CHECK-NEXT: return
module {
  func.func @main(%a: memref<8xf32> {pb.name = "a"}) {
    %c2 = arith.constant 2 : index
    %f = arith.constant 1.5 : f32
    affine.for %i = 0 to 8 {
      %v = memref.load %a[%c2] : memref<8xf32>
      %w = arith.addf %v, %f : f32
      affine.store %w, %a[%i] : memref<8xf32>
    }
    return
  }
}

// -----

// Straight-line scalar code at the top level (loads, arithmetic on the
// loaded values, a store) stays together in one kernel.

// CHECK-LABEL: func.func private @k0_extract
// CHECK-SAME: (%[[X:.*]]: memref<f32>, %[[V:.*]]: memref<4xf32>, %[[Y:.*]]: memref<f32>) attributes {pb.kernel, pb.nodes = []}
// CHECK: memref.load %[[X]][]
// CHECK: memref.load %[[V]]
// CHECK: arith.addf
// CHECK: arith.mulf
// CHECK: memref.store %{{.*}}, %[[Y]][]
// CHECK-LABEL: func.func @main
// CHECK-NEXT: call @k0_extract
// CHECK-NEXT: return
module {
  func.func @main(%x: tensor<f32> {pb.name = "x"}, %v: tensor<4xf32> {pb.name = "v"}) -> (tensor<f32> {pb.name = "y"}) {
    %c2 = arith.constant 2 : index
    %a = tensor.extract %x[] : tensor<f32>
    %b = tensor.extract %v[%c2] : tensor<4xf32>
    %s = arith.addf %a, %b : f32
    %t = arith.mulf %s, %s : f32
    %r = tensor.from_elements %t : tensor<f32>
    return %r : tensor<f32>
  }
}

// -----

// Several results: one out-parameter each, in order, named when the result
// was; an input returned as is and a constant are copied by kernels; the
// constant's global stays in @main and is passed.

// CHECK: memref.global "private" constant @[[G:.*]] : memref<3xf32>
// CHECK-LABEL: func.func private @k0_copy
// CHECK-LABEL: func.func private @k1_copy
// CHECK-LABEL: func.func private @k2_copy
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: memref<2x3xf32> {pb.name = "x"}, %[[A:.*]]: memref<2x3xf32> {pb.name = "a", pb.output}, %[[C:.*]]: memref<3xf32> {pb.output}, %[[B:.*]]: memref<2x3xf32> {pb.name = "b", pb.output})
// CHECK-NEXT: %[[K:.*]] = memref.get_global @[[G]]
// CHECK-NEXT: call @k0_copy(%[[X]], %[[A]])
// CHECK-NEXT: call @k1_copy(%[[K]], %[[C]])
// CHECK-NEXT: call @k2_copy(%[[X]], %[[B]])
// CHECK-NEXT: return
module {
  func.func @main(%x: tensor<2x3xf32> {pb.name = "x"}) -> (tensor<2x3xf32> {pb.name = "a"}, tensor<3xf32>, tensor<2x3xf32> {pb.name = "b"}) {
    %c = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
    return %x, %c, %x : tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>
  }
}

// -----

// An operation that writes into a graph input in place: inputs are never
// written, the input is copied to the out-parameter first. Node names are
// turned into identifiers for the kernel name and kept as is in pb.nodes.

// CHECK-LABEL: func.func private @k0_features_Add_0
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>, %[[Y:.*]]: memref<4xf32>) attributes {pb.kernel, pb.nodes = ["/features/Add:0"]}
// CHECK: affine.load %[[X]]
// CHECK: affine.store %{{.*}}, %[[Y]]
// CHECK-LABEL: func.func private @k1_features_Add_0
// CHECK-SAME: (%[[Y:.*]]: memref<4xf32>)
// CHECK: affine.load %[[Y]]
// CHECK: arith.addf
// CHECK: affine.store %{{.*}}, %[[Y]]
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: memref<4xf32> {pb.name = "x"}, %[[Y:.*]]: memref<4xf32> {pb.name = "y", pb.output})
// CHECK-NEXT: call @k0_features_Add_0(%[[X]], %[[Y]])
// CHECK-NEXT: call @k1_features_Add_0(%[[Y]])
module {
  func.func @main(%x: tensor<4xf32> {pb.name = "x"}) -> (tensor<4xf32> {pb.name = "y"}) {
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]} outs(%x : tensor<4xf32>) {
    ^bb0(%o: f32):
      %z = arith.addf %o, %o : f32
      linalg.yield %z : f32
    } -> tensor<4xf32> loc("/features/Add:0")
    return %r : tensor<4xf32>
  }
}
