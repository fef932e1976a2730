// RUN: rm -rf %t && mkdir -p %t && cp %s %t/run.mlir
// RUN: %python %S/Inputs/gen.py %t
// RUN: pb-run %t/run.mlir --input %t/x.npy --check %t/y.npy | FileCheck %s
// RUN: pb-run %t/run.mlir --input %t/x.pb --check %t/y.pb | FileCheck %s
// RUN: cat %t/run.mlir | pb-run - --weights %t/w.onnx --input %t/x.npy --check %t/y.npy | FileCheck %s
// RUN: cd %t && pb-run run.mlir --input x.npy --check y.npy --rtol 1e-6 --atol 0 | FileCheck --check-prefix=TOL %s
// RUN: pb-run %t/run.mlir --input %t/x.npy --print | FileCheck --check-prefix=PRINT %s

// A fuse-stage module (the form pb-fuse prints): graph input x, weight w
// loaded from pb.source (found next to the input file, or in the current
// directory, or given with --weights), output y as an out-parameter. The
// kernel uses math ops that lower to libm calls (erf, tanh) and to LLVM
// intrinsics (exp).

// CHECK: output 'y': max abs err {{[0-9.]+e[-+][0-9]+}}, max rel err {{[0-9.]+e[-+][0-9]+}} (rtol 1e-04, atol 1e-05): ok
// TOL: output 'y': {{.*}} (rtol 1e-06, atol 0e+00): ok
// PRINT: output 'y' f32 [2, 3]:
// PRINT-NEXT: {{\[\[}}0.619969, 0.513294, 1.77625],
// PRINT-NEXT: {{^}} [1.61298, 1.09805, 2.12495]]
module attributes {pb.stage = "fuse", pb.source = "w.onnx"} {
  func.func private @kernel_0(%a: memref<2x3xf32>, %b: memref<3xf32>, %c: memref<2x3xf32>) attributes {pb.kernel} {
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
      }
    }
    return
  }
  func.func @main(%x: memref<2x3xf32> {pb.name = "x"}, %w: memref<3xf32> {pb.param = "w"},
                  %y: memref<2x3xf32> {pb.name = "y", pb.output}) {
    %t = memref.alloc() : memref<2x3xf32>
    call @kernel_0(%x, %w, %t) : (memref<2x3xf32>, memref<3xf32>, memref<2x3xf32>) -> ()
    memref.copy %t, %y : memref<2x3xf32> to memref<2x3xf32>
    memref.dealloc %t : memref<2x3xf32>
    return
  }
}
