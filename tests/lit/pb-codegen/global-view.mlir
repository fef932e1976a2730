// RUN: pb-codegen %s | FileCheck %s
// RUN: pb-codegen --emit=mlir %s | FileCheck --check-prefix=MLIR %s
// RUN: %python -c "import numpy as np; np.save('%t.x.npy', np.ones(4, np.float32))"
// RUN: pb-run --device=cpu %s --input %t.x.npy --print | FileCheck --check-prefix=CPU %s

// A view of a constant buffer (a subview of a memref.get_global: the
// importer slicing a constant) passed to a kernel function: the view goes
// into the kernel with its global, the host keeps neither, and the kernel
// reads row 1 of the global (16 bytes in).

// CHECK: "buffers": [
// CHECK-NOT: "kind": "scratch"
// CHECK: .global .align {{[0-9]+}} .b8 cst[32]
// CHECK: .entry k0_kernel(
// CHECK: mov.b64 {{.*}}, cst;
// CHECK: ld.global.nc.b32 {{.*}}+16]

// MLIR: gpu.func @k0_kernel
// MLIR: memref.get_global @cst : memref<2x4xf32>
// MLIR: memref.subview
// MLIR-LABEL: func.func @main
// MLIR-NOT: memref.subview
// MLIR: gpu.launch_func

// CPU: [6, 7, 8, 9]
module attributes {pb.stage = "fuse"} {
  memref.global "private" constant @cst : memref<2x4xf32> = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]>
  func.func private @k0(%a: memref<4xf32, strided<[1], offset: 4>>, %x: memref<4xf32>, %y: memref<4xf32>) attributes {pb.kernel} {
    affine.parallel (%i) = (0) to (4) {
      %u = affine.load %a[%i] : memref<4xf32, strided<[1], offset: 4>>
      %v = affine.load %x[%i] : memref<4xf32>
      %w = arith.addf %u, %v : f32
      affine.store %w, %y[%i] : memref<4xf32>
    }
    return
  }
  func.func @main(%x: memref<4xf32> {pb.name = "x"}, %y: memref<4xf32> {pb.name = "y", pb.output}) {
    %g = memref.get_global @cst : memref<2x4xf32>
    %s = memref.subview %g[1, 0] [1, 4] [1, 1] : memref<2x4xf32> to memref<4xf32, strided<[1], offset: 4>>
    call @k0(%s, %x, %y) : (memref<4xf32, strided<[1], offset: 4>>, memref<4xf32>, memref<4xf32>) -> ()
    return
  }
}
