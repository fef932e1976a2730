// Every user-facing error of pb-prof: one line, exit 1 (2 for usage).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: not pb-prof %S/Inputs/mm.mlir --device=cpu --random --repeat 0 2>&1 | FileCheck --check-prefix=REPEAT %s
// RUN: not pb-prof %S/Inputs/mm.mlir --device=cpu --random --warmup=-1 2>&1 | FileCheck --check-prefix=WARMUP %s
// RUN: not pb-prof %S/Inputs/mm.mlir --device=cpu --random --repeat x 2>&1 | FileCheck --check-prefix=BADINT %s
// RUN: not pb-prof %S/Inputs/mm.mlir --device=tpu 2>&1 | FileCheck --check-prefix=DEVICE %s
// RUN: not pb-prof %S/Inputs/mm.mlir --device=cpu 2>&1 | FileCheck --check-prefix=NOVALUE %s
// RUN: not pb-prof %s --device=cpu --random 2>&1 | FileCheck --check-prefix=NOKERNEL %s
// RUN: not pb-prof %S/Inputs/mm.mlir --device=cpu --random --json %t/nodir/p.json 2>&1 | FileCheck --check-prefix=JSONW %s
// RUN: echo '{"kernels": 3}' > %t/costs.json
// RUN: not pb-prof %S/Inputs/mm.mlir --device=cpu --random --costs %t/costs.json 2>&1 | FileCheck --check-prefix=COSTS %s
// RUN: printf '.version 8.0\n.target sm_90\n' > %t/k.ptx
// RUN: not pb-prof %t/k.ptx --device=cpu 2>&1 | FileCheck --check-prefix=PTX %s
//
// REPEAT: mm.mlir: error: bad --repeat 0 (expected 1 or more)
// WARMUP: mm.mlir: error: bad --warmup -1 (expected 0 or more)
// BADINT: pb-prof: error: bad value 'x' for option '--repeat'
// DEVICE: mm.mlir: error: unknown --device 'tpu' (expected cpu, gpu or auto)
// NOVALUE: mm.mlir: error: no value for input 'a' (argument 0): give --input, --data or --random
// NOKERNEL: errors.mlir: error: @main calls no pb.kernel function: nothing to time (run pb-fuse first?)
// JSONW: p.json: error: cannot write: No such file or directory
// COSTS: costs.json: error: cannot read kernel costs: no "kernels" array
// PTX: k.ptx: error: PTX runs on the GPU only; the CPU path needs MLIR or .onnx input (use --device=gpu or auto)

module attributes {pb.stage = "fuse"} {
  func.func @main(%x: memref<2xf32> {pb.name = "x"}, %y: memref<2xf32> {pb.name = "y", pb.output}) {
    affine.for %i = 0 to 2 {
      %v = affine.load %x[%i] : memref<2xf32>
      affine.store %v, %y[%i] : memref<2xf32>
    }
    return
  }
}
