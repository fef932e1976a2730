// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/gen.py %t
// RUN: pb-run %s --weights %t/w.onnx --input %t/x.npy --output %t/out
// RUN: %python -c "import numpy as np, sys; d = sys.argv[1]; y = np.load(d + '/out/y_0.5__.npy'); z = np.load(d + '/out/_hidden.npy'); assert y.dtype == np.float32 and y.shape == (2, 3), y; assert np.allclose(y, np.load(d + '/y.npy'), rtol=1e-5, atol=1e-6); assert (z == np.load(d + '/x.npy') * 2).all(); print('ok')" %t | FileCheck %s
// RUN: ls %t/out | FileCheck --check-prefix=LS %s

// --output writes one <name>.npy per result: names are sanitized (only
// letters, digits, '_', '-' and '.', never a leading '.'), the directory is
// created, and NumPy reads the files back.

// CHECK: ok
// LS-NOT: tmp
// LS: _hidden.npy
// LS-NEXT: y_0.5__.npy
// LS-NOT: tmp
module attributes {pb.stage = "fuse"} {
  func.func private @kernel_0(%a: memref<2x3xf32>, %b: memref<3xf32>, %c: memref<2x3xf32>, %d: memref<2x3xf32>) attributes {pb.kernel} {
    affine.for %i = 0 to 2 {
      affine.for %j = 0 to 3 {
        %v = affine.load %a[%i, %j] : memref<2x3xf32>
        %w = affine.load %b[%j] : memref<3xf32>
        %s = arith.addf %v, %w : f32
        %e = math.erf %s : f32
        %t = math.tanh %e : f32
        %x = math.exp %t : f32
        %m = arith.maximumf %x, %s : f32
        affine.store %m, %c[%i, %j] : memref<2x3xf32>
        %two = arith.addf %v, %v : f32
        affine.store %two, %d[%i, %j] : memref<2x3xf32>
      }
    }
    return
  }
  func.func @main(%x: memref<2x3xf32> {pb.name = "x"}, %w: memref<3xf32> {pb.param = "w"},
                  %y: memref<2x3xf32> {pb.name = "y:0.5/*", pb.output},
                  %z: memref<2x3xf32> {pb.name = ".hidden", pb.output}) {
    call @kernel_0(%x, %w, %y, %z) : (memref<2x3xf32>, memref<3xf32>, memref<2x3xf32>, memref<2x3xf32>) -> ()
    return
  }
}
