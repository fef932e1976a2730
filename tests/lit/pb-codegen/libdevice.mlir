// RUN: pb-codegen --jobs=1 %s -o %t.1.ptx
// RUN: pb-codegen --jobs=2 %s -o %t.2.ptx
// RUN: cmp %t.1.ptx %t.2.ptx
// RUN: FileCheck %s < %t.2.ptx

// On threads, libdevice is linked only into the kernels that call one of
// its functions (k1's exp, k3's sqrt); the PTX is the same as one
// module's with libdevice linked once (--jobs=1), and every call is
// resolved (no .extern).

// CHECK-NOT: .extern
// CHECK-LABEL: .visible .entry k0_copy_kernel(
// CHECK-NOT: ex2.approx
// CHECK-LABEL: .visible .entry k1_exp_kernel(
// CHECK: ex2.approx
// CHECK-LABEL: .visible .entry k2_add_kernel(
// CHECK-NOT: {{[[:space:]]sqrt[.]}}
// CHECK-LABEL: .visible .entry k3_sqrt_kernel(
// CHECK: {{[[:space:]]sqrt[.].*f32}}

module attributes {pb.stage = "fuse"} {
  func.func private @k0_copy(%arg0: memref<64xf32>, %arg1: memref<64xf32>) attributes {pb.kernel, pb.nodes = ["Identity_0"]} {
    affine.for %i = 0 to 64 {
      %0 = affine.load %arg0[%i] : memref<64xf32>
      affine.store %0, %arg1[%i] : memref<64xf32>
    }
    return
  }
  func.func private @k1_exp(%arg0: memref<64xf32>, %arg1: memref<64xf32>) attributes {pb.kernel, pb.nodes = ["Exp_1"]} {
    affine.for %i = 0 to 64 {
      %0 = affine.load %arg0[%i] : memref<64xf32>
      %1 = math.exp %0 : f32
      affine.store %1, %arg1[%i] : memref<64xf32>
    }
    return
  }
  func.func private @k2_add(%arg0: memref<64xf32>, %arg1: memref<64xf32>) attributes {pb.kernel, pb.nodes = ["Add_2"]} {
    affine.for %i = 0 to 64 {
      %0 = affine.load %arg0[%i] : memref<64xf32>
      %1 = arith.addf %0, %0 : f32
      affine.store %1, %arg1[%i] : memref<64xf32>
    }
    return
  }
  func.func private @k3_sqrt(%arg0: memref<64xf32>, %arg1: memref<64xf32>) attributes {pb.kernel, pb.nodes = ["Sqrt_3"]} {
    affine.for %i = 0 to 64 {
      %0 = affine.load %arg0[%i] : memref<64xf32>
      %1 = math.sqrt %0 : f32
      affine.store %1, %arg1[%i] : memref<64xf32>
    }
    return
  }
  func.func @main(%arg0: memref<64xf32> {pb.name = "x"}, %arg1: memref<64xf32> {pb.name = "a", pb.output}, %arg2: memref<64xf32> {pb.name = "b", pb.output}, %arg3: memref<64xf32> {pb.name = "c", pb.output}, %arg4: memref<64xf32> {pb.name = "d", pb.output}) {
    call @k0_copy(%arg0, %arg1) : (memref<64xf32>, memref<64xf32>) -> ()
    call @k1_exp(%arg0, %arg2) : (memref<64xf32>, memref<64xf32>) -> ()
    call @k2_add(%arg0, %arg3) : (memref<64xf32>, memref<64xf32>) -> ()
    call @k3_sqrt(%arg0, %arg4) : (memref<64xf32>, memref<64xf32>) -> ()
    return
  }
}
