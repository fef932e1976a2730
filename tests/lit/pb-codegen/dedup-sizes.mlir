// RUN: env PB_TIMING=1 pb-codegen %s -o %t.ptx 2>&1 | FileCheck --check-prefix=COUNT %s
// RUN: FileCheck %s < %t.ptx
// RUN: pb-codegen --no-dedup %s -o %t.all.ptx
// RUN: cmp %t.ptx %t.all.ptx
// RUN: env PB_TIMING=1 pb-codegen --exact-dedup %s -o %t.exact.ptx 2>&1 | FileCheck --check-prefix=EXACT %s
// RUN: cmp %t.exact.ptx %t.all.ptx
// RUN: %python -c "import numpy as np; s = {'a': np.ones((1, 2, 16, 16)), 'sa': [2, 3], 'b': np.ones((1, 3, 16, 16)), 'sb': [4, 5, 6], 'p': np.arange(1024).reshape(2, 2, 256), 'q': np.arange(1536).reshape(2, 3, 256)}; s = {k: np.array(v, np.float32) for k, v in s.items()}; e = {'ya': s['a'] * s['sa'][None, :, None, None], 'yb': s['b'] * s['sb'][None, :, None, None], 'yp': s['p'][:, 0], 'yq': s['q'][:, 0]}; [np.save('%t.' + k + '.npy', v) for k, v in list(s.items()) + list(e.items())]"
// RUN: pb-run %s --input %t.a.npy --input %t.sa.npy --input %t.b.npy --input %t.sb.npy --input %t.p.npy --input %t.q.npy --check %t.ya.npy --check %t.yb.npy --check %t.yp.npy --check %t.yq.npy

// Kernels that differ only in the sizes of their buffers and their grids
// are compiled once when no address depends on the sizes that differ
// (dedup.c): k0 and k1 scale a 1xCx16x16 tensor by a per-channel factor,
// C = 2 and 3, and differ in their buffers' channel counts and their
// grids (2 and 3 blocks of 256 threads). Their strides agree on every
// dimension of more than one element (the batch dimension's, 512 or 768,
// has only index 0), so k1 is k0's PTX renamed, compiled with the larger
// grid; here that is byte for byte what compiling each gives
// (--no-dedup). k2 and k3 read channel 0 of a 2xCx256 tensor: the same
// text but for the sizes, but the stride of the batch dimension (2
// elements) is 512 or 768, so they are compiled apart. --exact-dedup
// groups only kernels identical but for their names.

// COUNT: pb-codegen: 4 kernels, 3 compiled
// EXACT: pb-codegen: 4 kernels, 4 compiled

// CHECK: "kernel": "k0_scale_kernel", "origin": "k0_scale", "nodes": ["Mul_0"], "grid": [2, 1, 1]
// CHECK: "kernel": "k1_scale_kernel", "origin": "k1_scale", "nodes": ["Mul_1"], "grid": [3, 1, 1]
// CHECK: // pb-plan-end
// CHECK-LABEL: .visible .entry k0_scale_kernel(
// CHECK: mul{{(.rn)?}}.f32
// CHECK-LABEL: .visible .entry k1_scale_kernel(
// CHECK-NOT: k0_scale
// CHECK: mul{{(.rn)?}}.f32
// CHECK-LABEL: .visible .entry k2_first_kernel(
// CHECK: 2048
// CHECK-LABEL: .visible .entry k3_first_kernel(
// CHECK: 3072

module attributes {pb.stage = "fuse", pb.source = "sizes.onnx"} {
  func.func private @k0_scale(%x: memref<1x2x16x16xf32>, %s: memref<2xf32>, %y: memref<1x2x16x16xf32>) attributes {pb.kernel, pb.nodes = ["Mul_0"]} {
    affine.for %c = 0 to 2 {
      affine.for %h = 0 to 16 {
        affine.for %w = 0 to 16 {
          %v = affine.load %x[0, %c, %h, %w] : memref<1x2x16x16xf32>
          %k = affine.load %s[%c] : memref<2xf32>
          %r = arith.mulf %v, %k : f32
          affine.store %r, %y[0, %c, %h, %w] : memref<1x2x16x16xf32>
        }
      }
    }
    return
  }
  func.func private @k1_scale(%x: memref<1x3x16x16xf32>, %s: memref<3xf32>, %y: memref<1x3x16x16xf32>) attributes {pb.kernel, pb.nodes = ["Mul_1"]} {
    affine.for %c = 0 to 3 {
      affine.for %h = 0 to 16 {
        affine.for %w = 0 to 16 {
          %v = affine.load %x[0, %c, %h, %w] : memref<1x3x16x16xf32>
          %k = affine.load %s[%c] : memref<3xf32>
          %r = arith.mulf %v, %k : f32
          affine.store %r, %y[0, %c, %h, %w] : memref<1x3x16x16xf32>
        }
      }
    }
    return
  }
  func.func private @k2_first(%x: memref<2x2x256xf32>, %y: memref<2x256xf32>) attributes {pb.kernel, pb.nodes = ["Slice_2"]} {
    affine.for %n = 0 to 2 {
      affine.for %i = 0 to 256 {
        %v = affine.load %x[%n, 0, %i] : memref<2x2x256xf32>
        affine.store %v, %y[%n, %i] : memref<2x256xf32>
      }
    }
    return
  }
  func.func private @k3_first(%x: memref<2x3x256xf32>, %y: memref<2x256xf32>) attributes {pb.kernel, pb.nodes = ["Slice_3"]} {
    affine.for %n = 0 to 2 {
      affine.for %i = 0 to 256 {
        %v = affine.load %x[%n, 0, %i] : memref<2x3x256xf32>
        affine.store %v, %y[%n, %i] : memref<2x256xf32>
      }
    }
    return
  }
  func.func @main(%a: memref<1x2x16x16xf32> {pb.name = "a"}, %sa: memref<2xf32> {pb.name = "sa"}, %b: memref<1x3x16x16xf32> {pb.name = "b"}, %sb: memref<3xf32> {pb.name = "sb"}, %p: memref<2x2x256xf32> {pb.name = "p"}, %q: memref<2x3x256xf32> {pb.name = "q"}, %ya: memref<1x2x16x16xf32> {pb.name = "ya", pb.output}, %yb: memref<1x3x16x16xf32> {pb.name = "yb", pb.output}, %yp: memref<2x256xf32> {pb.name = "yp", pb.output}, %yq: memref<2x256xf32> {pb.name = "yq", pb.output}) {
    call @k0_scale(%a, %sa, %ya) : (memref<1x2x16x16xf32>, memref<2xf32>, memref<1x2x16x16xf32>) -> ()
    call @k1_scale(%b, %sb, %yb) : (memref<1x3x16x16xf32>, memref<3xf32>, memref<1x3x16x16xf32>) -> ()
    call @k2_first(%p, %yp) : (memref<2x2x256xf32>, memref<2x256xf32>) -> ()
    call @k3_first(%q, %yq) : (memref<2x3x256xf32>, memref<2x256xf32>) -> ()
    return
  }
}
