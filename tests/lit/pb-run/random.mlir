// RUN: rm -rf %t && mkdir -p %t
// RUN: pb-run %s --random --output %t/a
// RUN: pb-run %s --random --output %t/b
// RUN: pb-run %s --random=0 --output %t/c
// RUN: pb-run %s --random=7 --output %t/d
// RUN: cmp %t/a/y.npy %t/b/y.npy
// RUN: cmp %t/a/y.npy %t/c/y.npy
// RUN: not cmp %t/a/y.npy %t/d/y.npy
// RUN: %python -c "import numpy as np, sys; a = np.load(sys.argv[1]); assert a.shape == (2, 1000) and (a >= -2).all() and (a < 2).all() and a.std() > 0.4, a; print('ok')" %t/d/y.npy | FileCheck %s
// RUN: pb-run %s --random=3 --print | FileCheck --check-prefix=PRINT %s
// RUN: not pb-run %s --random=-1 2>&1 | FileCheck --check-prefix=SEED %s

// --random fills the inputs that no --input gives, uniform in [-1, 1),
// from a seed (default 0): the same seed gives the same numbers, another
// seed others. Here y = a + b, so y lies in [-2, 2). Large results print
// summarized.

// CHECK: ok
// PRINT: output 'y' f32 [2, 1000]:
// PRINT-NEXT: {{\[\[}}{{[-0-9.e]+}}, {{[-0-9.e]+}}, {{[-0-9.e]+}}, ..., {{[-0-9.e]+}}, {{[-0-9.e]+}}, {{[-0-9.e]+}}],
// SEED: error: bad --random seed '-1' (expected a non-negative integer)
module attributes {pb.stage = "fuse"} {
  func.func @main(%a: memref<2x1000xf32> {pb.name = "a"}, %b: memref<2x1000xf32> {pb.name = "b"},
                  %y: memref<2x1000xf32> {pb.name = "y", pb.output}) {
    affine.for %i = 0 to 2 {
      affine.for %j = 0 to 1000 {
        %u = affine.load %a[%i, %j] : memref<2x1000xf32>
        %v = affine.load %b[%i, %j] : memref<2x1000xf32>
        %s = arith.addf %u, %v : f32
        affine.store %s, %y[%i, %j] : memref<2x1000xf32>
      }
    }
    return
  }
}
