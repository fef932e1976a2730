// REQUIRES: ptxas
// RUN: pb-codegen %s -o %t.ptx && ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: pb-codegen --arch=sm_80 %s -o %t80.ptx && ptxas -arch=sm_80 %t80.ptx -o %t80.cubin
// RUN: pb-codegen --arch=sm_86 %s -o %t86.ptx && ptxas -arch=sm_86 %t86.ptx -o %t86.cubin
// RUN: pb-codegen --arch=sm_89 %s -o %t89.ptx && ptxas -arch=sm_89 %t89.ptx -o %t89.cubin
// RUN: pb-codegen --arch=sm_90a %s -o %t90a.ptx && ptxas -arch=sm_90a %t90a.ptx -o %t90a.cubin
// RUN: pb-codegen --ptxas-report %s -o %t.ptx 2>&1 | FileCheck --check-prefix=REPORT %s
// RUN: pb-codegen --arch=sm_80 --ptxas-report %s -o %t.ptx 2>&1 | FileCheck --check-prefix=REPORT80 %s

// ptxas accepts the PTX (with its plan header) for every architecture;
// --ptxas-report prints one line of ptxas -v statistics per kernel.

// REPORT: pb-codegen: ptxas sm_90: k0_softmax_kernel: {{[0-9]+}} registers, 0 bytes smem, 0 bytes stack, 0 bytes spill stores, 0 bytes spill loads
// REPORT-NEXT: pb-codegen: ptxas sm_90: k0_softmax_kernel_0: {{[0-9]+}} registers
// REPORT-NEXT: pb-codegen: ptxas sm_90: k0_softmax_kernel_1: {{[0-9]+}} registers
// REPORT80: pb-codegen: ptxas sm_80: k0_softmax_kernel:

// Softmax over rows of 10: math.exp needs libdevice, linked by the NVVM
// target; the row reductions keep a scratch buffer.
module attributes {pb.stage = "fuse", pb.source = "softmax.onnx"} {
  func.func private @k0_softmax(%x: memref<3x10xf32>, %y: memref<3x10xf32>) attributes {pb.kernel, pb.nodes = ["Softmax_0"]} {
    %m = memref.alloc() : memref<3xf32>
    %s = memref.alloc() : memref<3xf32>
    %ninf = arith.constant 0xFF800000 : f32
    %z = arith.constant 0.0 : f32
    affine.for %i = 0 to 3 {
      affine.store %ninf, %m[%i] : memref<3xf32>
      affine.store %z, %s[%i] : memref<3xf32>
      affine.for %j = 0 to 10 {
        %v = affine.load %x[%i, %j] : memref<3x10xf32>
        %a = affine.load %m[%i] : memref<3xf32>
        %b = arith.maximumf %a, %v : f32
        affine.store %b, %m[%i] : memref<3xf32>
      }
    }
    affine.for %i = 0 to 3 {
      affine.for %j = 0 to 10 {
        %v = affine.load %x[%i, %j] : memref<3x10xf32>
        %a = affine.load %m[%i] : memref<3xf32>
        %d = arith.subf %v, %a : f32
        %e = math.exp %d : f32
        affine.store %e, %y[%i, %j] : memref<3x10xf32>
        %t = affine.load %s[%i] : memref<3xf32>
        %u = arith.addf %t, %e : f32
        affine.store %u, %s[%i] : memref<3xf32>
      }
    }
    affine.for %i = 0 to 3 {
      affine.for %j = 0 to 10 {
        %e = affine.load %y[%i, %j] : memref<3x10xf32>
        %t = affine.load %s[%i] : memref<3xf32>
        %q = arith.divf %e, %t : f32
        affine.store %q, %y[%i, %j] : memref<3x10xf32>
      }
    }
    memref.dealloc %m : memref<3xf32>
    memref.dealloc %s : memref<3xf32>
    return
  }
  func.func @main(%x: memref<3x10xf32> {pb.name = "x"}, %y: memref<3x10xf32> {pb.name = "y", pb.output}) {
    call @k0_softmax(%x, %y) : (memref<3x10xf32>, memref<3x10xf32>) -> ()
    return
  }
}
