// RUN: pb-codegen %s --plan %t.json | FileCheck %s
// RUN: FileCheck --check-prefix=JSON %s < %t.json
// RUN: %python -c "import json,sys; p=json.load(open(sys.argv[1])); print(len(p['buffers']), len(p['launches']))" %t.json | FileCheck --check-prefix=PARSE %s

// The launch plan rides in the PTX header: every buffer (graph inputs,
// weights, outputs, scratch buffers with their place in the arena and
// their live range, views with their base and offsets), the memory it
// needs, and every launch in order, with its kernel symbol, origin,
// ONNX nodes, grid, block and arguments. --plan writes the same JSON.
// k2_sum's row of %f (layout offset 300) is passed from its own start
// (pointer 1200 bytes on, elem_offset 0: rebase.c, tests rebase.mlir).

// CHECK: // pb-plan-begin
// CHECK-NEXT: // {"version": 1, "arch": "sm_90", "source": "tiny.onnx", "arena": 2560,
// CHECK-NEXT: //  "memory": {"peak": 7372, "arena": 2560, "intermediates": 2400, "live_max": 2400, "inputs": 2400, "outputs": 2404, "params": 8},
// CHECK-NEXT: //  "buffers": [
// CHECK-NEXT: //   {"id": 0, "kind": "input", "name": "x", "arg": 0, "dtype": "f32", "shape": [1, 2, 3, 100], "bytes": 2400},
// CHECK-NEXT: //   {"id": 1, "kind": "param", "name": "conv.bias", "arg": 1, "dtype": "f32", "shape": [2], "bytes": 8},
// CHECK-NEXT: //   {"id": 2, "kind": "output", "name": "y", "arg": 2, "dtype": "f32", "shape": [2, 300], "bytes": 2400},
// CHECK-NEXT: //   {"id": 3, "kind": "output", "name": "s", "arg": 3, "dtype": "f32", "shape": [], "bytes": 4},
// CHECK-NEXT: //   {"id": 4, "kind": "scratch", "dtype": "f32", "shape": [1, 2, 3, 100], "bytes": 2400, "arena_offset": 0, "live": [0, 2]},
// CHECK-NEXT: //   {"id": 5, "kind": "view", "dtype": "f32", "shape": [2, 300], "bytes": 2400, "base": 4, "offset": 0, "elem_offset": 0, "strides": [300, 1]},
// CHECK-NEXT: //   {"id": 6, "kind": "view", "dtype": "f32", "shape": [1, 300], "bytes": 1200, "base": 4, "offset": 1200, "elem_offset": 0, "strides": [300, 1]}],
// CHECK-NEXT: //  "launches": [
// CHECK-NEXT: //   {"kernel": "k0_bias_kernel", "origin": "k0_bias", "nodes": ["Add_0", "Relu_1"], "grid": [3, 1, 1], "block": [256, 1, 1], "smem": 0, "args": [{"buffer": 0}, {"buffer": 1}, {"buffer": 4}]},
// CHECK-NEXT: //   {"kernel": "k1_copy_kernel", "origin": "k1_copy", "nodes": ["Flatten_2"], "grid": [3, 1, 1], "block": [256, 1, 1], "smem": 0, "args": [{"buffer": 5}, {"buffer": 2}]},
// CHECK-NEXT: //   {"kernel": "k2_sum_kernel", "origin": "k2_sum", "nodes": ["ReduceSum_3"], "grid": [1, 1, 1], "block": [1, 1, 1], "smem": 0, "args": [{"buffer": 3}, {"buffer": 6}]}]}
// CHECK-NEXT: // pb-plan-end
// CHECK: .entry k0_bias_kernel(
// CHECK: .entry k1_copy_kernel(
// CHECK: .entry k2_sum_kernel(

// JSON: {"version": 1, "arch": "sm_90", "source": "tiny.onnx", "arena": 2560,
// JSON-NEXT: "memory": {"peak": 7372,
// JSON-NEXT: "buffers": [
// JSON: {"id": 6, "kind": "view",
// JSON: "launches": [
// JSON: {"kernel": "k2_sum_kernel",
// JSON-NOT: .entry

// PARSE: 7 3

module attributes {pb.stage = "fuse", pb.source = "tiny.onnx"} {
  // x + bias, relu: 600 elements, 3 blocks of 256 threads with a guard.
  func.func private @k0_bias(%x: memref<1x2x3x100xf32>, %b: memref<2xf32>, %t: memref<1x2x3x100xf32>) attributes {pb.kernel, pb.nodes = ["Add_0", "Relu_1"]} {
    %z = arith.constant 0.0 : f32
    affine.for %c = 0 to 2 {
      affine.for %h = 0 to 3 {
        affine.for %w = 0 to 100 {
          %v = affine.load %x[0, %c, %h, %w] : memref<1x2x3x100xf32>
          %bb = affine.load %b[%c] : memref<2xf32>
          %s = arith.addf %v, %bb : f32
          %r = arith.maximumf %s, %z : f32
          affine.store %r, %t[0, %c, %h, %w] : memref<1x2x3x100xf32>
        }
      }
    }
    return
  }
  func.func private @k1_copy(%t: memref<2x300xf32>, %y: memref<2x300xf32>) attributes {pb.kernel, pb.nodes = ["Flatten_2"]} {
    memref.copy %t, %y : memref<2x300xf32> to memref<2x300xf32>
    return
  }
  // A full reduction has no parallel loop: one thread.
  func.func private @k2_sum(%s: memref<f32>, %t: memref<1x300xf32, strided<[300, 1], offset: 300>>) attributes {pb.kernel, pb.nodes = ["ReduceSum_3"]} {
    %z = arith.constant 0.0 : f32
    affine.store %z, %s[] : memref<f32>
    affine.for %i = 0 to 300 {
      %v = affine.load %t[0, %i] : memref<1x300xf32, strided<[300, 1], offset: 300>>
      %a = affine.load %s[] : memref<f32>
      %r = arith.addf %a, %v : f32
      affine.store %r, %s[] : memref<f32>
    }
    return
  }
  func.func @main(%x: memref<1x2x3x100xf32> {pb.name = "x"}, %b: memref<2xf32> {pb.param = "conv.bias"}, %y: memref<2x300xf32> {pb.name = "y", pb.output}, %s: memref<f32> {pb.name = "s", pb.output}) {
    %t = memref.alloc() : memref<1x2x3x100xf32>
    call @k0_bias(%x, %b, %t) : (memref<1x2x3x100xf32>, memref<2xf32>, memref<1x2x3x100xf32>) -> ()
    %f = memref.collapse_shape %t [[0, 1], [2, 3]] : memref<1x2x3x100xf32> into memref<2x300xf32>
    call @k1_copy(%f, %y) : (memref<2x300xf32>, memref<2x300xf32>) -> ()
    %row = memref.subview %f[1, 0] [1, 300] [1, 1] : memref<2x300xf32> to memref<1x300xf32, strided<[300, 1], offset: 300>>
    call @k2_sum(%s, %row) : (memref<f32>, memref<1x300xf32, strided<[300, 1], offset: 300>>) -> ()
    memref.dealloc %t : memref<1x2x3x100xf32>
    return
  }
}
