// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/gen.py %t
// RUN: not pb-run %s --weights %t/w.onnx --input %t/bad_shape.npy 2>&1 | FileCheck --check-prefix=SHAPE %s
// RUN: not pb-run %s --weights %t/w.onnx --input %t/x_f64.npy 2>&1 | FileCheck --check-prefix=DTYPE %s
// RUN: not pb-run %s --weights %t/w.onnx --input %t/trunc.npy 2>&1 | FileCheck --check-prefix=TRUNC %s
// RUN: not pb-run %s --weights %t/w.onnx --input %t/fortran.npy 2>&1 | FileCheck --check-prefix=FORTRAN %s
// RUN: not pb-run %s --weights %t/w.onnx --input %t/nope.npy 2>&1 | FileCheck --check-prefix=MISSING %s
// RUN: not pb-run %s --weights %t/w.onnx --input %t/x.npy --check %t/wrong.npy > %t/mismatch.out 2> %t/mismatch.err
// RUN: FileCheck --check-prefix=MISMATCH --input-file=%t/mismatch.out %s
// RUN: FileCheck --check-prefix=MISMATCH-ERR --input-file=%t/mismatch.err %s
// RUN: not pb-run %s --weights %t/w.onnx --input %t/x.npy --check %t/bad_shape.npy 2>&1 | FileCheck --check-prefix=CSHAPE %s
// RUN: not pb-run %s --weights %t/w.onnx --input %t/x.npy --check %t/y.npy --check %t/y.npy 2>&1 | FileCheck --check-prefix=NCHECK %s
// RUN: not pb-run %s --weights %t/w.onnx --input %t/x.npy --input %t/x.npy 2>&1 | FileCheck --check-prefix=NINPUT %s
// RUN: not pb-run %s --weights %t/w.onnx 2>&1 | FileCheck --check-prefix=NOVALUE %s
// RUN: not pb-run %s --input %t/x.npy 2>&1 | FileCheck --check-prefix=NOWEIGHTS %s
// RUN: not pb-run %s --weights %t/x.npy --input %t/x.npy 2>&1 | FileCheck --check-prefix=BADWEIGHTS %s
// RUN: not pb-run %s --device=tpu 2>&1 | FileCheck --check-prefix=DEVICE %s
// RUN: not pb-run %s --weights %t/w.onnx --input %t/x.npy --data %t/nodir 2>&1 | FileCheck --check-prefix=DATA %s

// Every user-facing error of pb-run: one line naming the argument or file
// at fault, exit status 1; a mismatch prints its report line on stdout.
// (The GPU's errors are in gpu-errors.test and gpu-mock.test.)

// SHAPE: errors.mlir: error: input 'x' (argument 0) expects f32 [2, 3], but '{{.*}}bad_shape.npy' holds f32 [3, 2]
// DTYPE: errors.mlir: error: input 'x' (argument 0) expects f32 [2, 3], but '{{.*}}x_f64.npy' holds f64 [2, 3]
// TRUNC: trunc.npy: error: truncated header
// FORTRAN: fortran.npy: error: fortran_order arrays are not supported
// MISSING: nope.npy: error: cannot read: No such file or directory
// MISMATCH: output 'y': max abs err {{.*}}, max rel err {{.*}} (rtol 1e-04, atol 1e-05): mismatch
// MISMATCH-ERR: errors.mlir: error: output 'y' does not match its reference: 6 of 6 elements differ, worst at [{{[0-9]}}, {{[0-9]}}]: got {{.*}}, expected {{.*}}
// CSHAPE: error: output 'y' does not match its reference: result is f32 [2, 3], reference is f32 [3, 2]
// NCHECK: error: 2 --check files given, but the model has 1 output
// NINPUT: error: 2 --input files given, but the model has 1 input
// NOVALUE: error: no value for input 'x' (argument 0): give --input, --data or --random
// NOWEIGHTS: error: weight 'w' (argument 1) needs the model: the module has no pb.source, give --weights
// BADWEIGHTS: x.npy: error:
// DEVICE: error: unknown --device 'tpu' (expected cpu, gpu or auto)
// DATA: nodir: error: cannot read: No such file or directory
module attributes {pb.stage = "fuse"} {
  func.func @main(%x: memref<2x3xf32> {pb.name = "x"}, %w: memref<3xf32> {pb.param = "w"},
                  %y: memref<2x3xf32> {pb.name = "y", pb.output}) {
    affine.for %i = 0 to 2 {
      affine.for %j = 0 to 3 {
        %v = affine.load %x[%i, %j] : memref<2x3xf32>
        %u = affine.load %w[%j] : memref<3xf32>
        %s = arith.addf %v, %u : f32
        affine.store %s, %y[%i, %j] : memref<2x3xf32>
      }
    }
    return
  }
}
