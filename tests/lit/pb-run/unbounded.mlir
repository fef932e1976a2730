// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/gen.py %t
// RUN: not pb-run %s --weights %t/w.onnx --input /dev/zero 2>&1 | FileCheck --check-prefix=INPUT %s
// RUN: not pb-run %s --weights %t/w.onnx --input %t/x.npy --check /dev/zero 2>&1 | FileCheck --check-prefix=CHECK-FILE %s
// RUN: not pb-run %s --weights /dev/zero --input %t/x.npy 2>&1 | FileCheck --check-prefix=WEIGHTS %s
// RUN: sed 's|attributes {pb.stage|attributes {pb.source = "/dev/zero", pb.stage|' %s > %t/source.mlir
// RUN: not pb-run %t/source.mlir --input %t/x.npy 2>&1 | FileCheck --check-prefix=WEIGHTS %s
// RUN: not pb-run %s --weights %t/w.onnx --input %t 2>&1 | FileCheck --check-prefix=DIR %s
// RUN: rm -f %t/fifo && mkfifo %t/fifo
// RUN: not pb-run %s --weights %t/w.onnx --input %t/fifo 2>&1 | FileCheck --check-prefix=FIFO %s
// The tool's own input may still come from stdin:
// RUN: cat %s | pb-run --weights %t/w.onnx --input %t/x.npy -

// A file whose size pb-run needs (a tensor, the model with the weights)
// must be a regular file: a device or a pipe is refused at once, never
// read until memory runs out.

// INPUT: /dev/zero: error: not a regular file
// CHECK-FILE: /dev/zero: error: not a regular file
// WEIGHTS: /dev/zero: error: not a regular file
// DIR: error: cannot read: Is a directory
// FIFO: fifo: error: not a regular file
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
