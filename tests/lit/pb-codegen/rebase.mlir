// RUN: pb-codegen %s -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: pb-codegen --no-dedup %s -o %t.all.ptx
// RUN: cmp %t.ptx %t.all.ptx
// RUN: %python %S/Inputs/slice_addresses.py %t.ptx | FileCheck --check-prefix=ADDR %s
// RUN: pb-codegen --emit=mlir %s | FileCheck --check-prefix=MLIR %s
// RUN: %python -c "import numpy as np; [np.save('%t.' + n + '.npy', np.full((1, 1, 64), v, np.float32)) for n, v in (('a', 1), ('b', 2), ('c', -3))]"
// RUN: pb-run %s --input %t.a.npy --input %t.b.npy --input %t.c.npy --print | FileCheck --check-prefix=CPU %s

// Three kernels fill the three channels of a concatenated buffer, as
// DenseNet's layers and Inception's branches do: the same body, their
// slices at layout offsets 0, 64 and 128. The PTX path passes each slice
// from its own start (the plan's views move their pointers by 256 and 512
// bytes, elem_offset 0) and gives the kernels' arguments offset 0
// (rebase.c), so the three are one kernel, compiled once (dedup.c): no
// store adds the slice's offset. Every element keeps its address
// (Inputs/slice_addresses.py: pointer + elem_offset of each launch's
// slice). The host IR (--emit=mlir), which runs on the CPU, keeps its
// views.

// CHECK: "base": 4, "offset": 0, "elem_offset": 0, "strides": [192, 64, 1]}
// CHECK-NEXT: "base": 4, "offset": 256, "elem_offset": 0, "strides": [192, 64, 1]}
// CHECK-NEXT: "base": 4, "offset": 512, "elem_offset": 0, "strides": [192, 64, 1]}]
// CHECK: // pb-plan-end
// CHECK-LABEL: .entry k0_double_kernel(
// CHECK: st.global.b32 [%rd{{[0-9]+}}], %r
// CHECK-LABEL: .entry k1_double_kernel(
// CHECK: st.global.b32 [%rd{{[0-9]+}}], %r
// CHECK-LABEL: .entry k2_double_kernel(
// CHECK: st.global.b32 [%rd{{[0-9]+}}], %r
// CHECK-LABEL: .entry k3_relu_kernel(

// ADDR: k0_double_kernel 1 4 0
// ADDR-NEXT: k1_double_kernel 1 4 256
// ADDR-NEXT: k2_double_kernel 1 4 512
// ADDR-NEXT: k3_relu_kernel 0 4 0

// MLIR: gpu.func @k1_double_kernel({{.*}}strided<[192, 64, 1], offset: 64>>)
// MLIR: gpu.func @k2_double_kernel({{.*}}strided<[192, 64, 1], offset: 128>>)

// Run on the CPU, channel c of y is relu(2 * input c).
// CPU: output 'y' f32 [1, 3, 64]:
// CPU-NEXT: {{\[\[\[}}2, 2,
// CPU-NEXT: {{\[}}4, 4,
// CPU-NEXT: {{\[}}0, 0,

module attributes {pb.stage = "fuse", pb.source = "concat.onnx"} {
  func.func private @k0_double(%a: memref<1x1x64xf32>, %t: memref<1x1x64xf32, strided<[192, 64, 1]>>) attributes {pb.kernel, pb.nodes = ["Mul_0"]} {
    affine.for %i = 0 to 64 {
      %v = affine.load %a[0, 0, %i] : memref<1x1x64xf32>
      %r = arith.addf %v, %v : f32
      affine.store %r, %t[0, 0, %i] : memref<1x1x64xf32, strided<[192, 64, 1]>>
    }
    return
  }
  func.func private @k1_double(%a: memref<1x1x64xf32>, %t: memref<1x1x64xf32, strided<[192, 64, 1], offset: 64>>) attributes {pb.kernel, pb.nodes = ["Mul_1"]} {
    affine.for %i = 0 to 64 {
      %v = affine.load %a[0, 0, %i] : memref<1x1x64xf32>
      %r = arith.addf %v, %v : f32
      affine.store %r, %t[0, 0, %i] : memref<1x1x64xf32, strided<[192, 64, 1], offset: 64>>
    }
    return
  }
  func.func private @k2_double(%a: memref<1x1x64xf32>, %t: memref<1x1x64xf32, strided<[192, 64, 1], offset: 128>>) attributes {pb.kernel, pb.nodes = ["Mul_2"]} {
    affine.for %i = 0 to 64 {
      %v = affine.load %a[0, 0, %i] : memref<1x1x64xf32>
      %r = arith.addf %v, %v : f32
      affine.store %r, %t[0, 0, %i] : memref<1x1x64xf32, strided<[192, 64, 1], offset: 128>>
    }
    return
  }
  func.func private @k3_relu(%t: memref<1x3x64xf32>, %y: memref<1x3x64xf32>) attributes {pb.kernel, pb.nodes = ["Relu_4"]} {
    %z = arith.constant 0.0 : f32
    affine.for %c = 0 to 3 {
      affine.for %i = 0 to 64 {
        %v = affine.load %t[0, %c, %i] : memref<1x3x64xf32>
        %r = arith.maximumf %v, %z : f32
        affine.store %r, %y[0, %c, %i] : memref<1x3x64xf32>
      }
    }
    return
  }
  func.func @main(%a: memref<1x1x64xf32> {pb.name = "a"}, %b: memref<1x1x64xf32> {pb.name = "b"}, %c: memref<1x1x64xf32> {pb.name = "c"}, %y: memref<1x3x64xf32> {pb.name = "y", pb.output}) {
    %t = memref.alloc() : memref<1x3x64xf32>
    %t0 = memref.subview %t[0, 0, 0] [1, 1, 64] [1, 1, 1] : memref<1x3x64xf32> to memref<1x1x64xf32, strided<[192, 64, 1]>>
    call @k0_double(%a, %t0) : (memref<1x1x64xf32>, memref<1x1x64xf32, strided<[192, 64, 1]>>) -> ()
    %t1 = memref.subview %t[0, 1, 0] [1, 1, 64] [1, 1, 1] : memref<1x3x64xf32> to memref<1x1x64xf32, strided<[192, 64, 1], offset: 64>>
    call @k1_double(%b, %t1) : (memref<1x1x64xf32>, memref<1x1x64xf32, strided<[192, 64, 1], offset: 64>>) -> ()
    %t2 = memref.subview %t[0, 2, 0] [1, 1, 64] [1, 1, 1] : memref<1x3x64xf32> to memref<1x1x64xf32, strided<[192, 64, 1], offset: 128>>
    call @k2_double(%c, %t2) : (memref<1x1x64xf32>, memref<1x1x64xf32, strided<[192, 64, 1], offset: 128>>) -> ()
    call @k3_relu(%t, %y) : (memref<1x3x64xf32>, memref<1x3x64xf32>) -> ()
    memref.dealloc %t : memref<1x3x64xf32>
    return
  }
}
