// RUN: pb-codegen %s | FileCheck %s
// RUN: pb-codegen --arch=sm_80 %s | FileCheck --check-prefix=SM80 %s
// RUN: pb-codegen --arch=sm_89 %s | FileCheck --check-prefix=SM89 %s
// RUN: pb-codegen --arch=sm_90a %s | FileCheck --check-prefix=SM90A %s

// The PTX of a small elementwise kernel: one .entry per launch, memrefs
// passed as bare pointers (one .u64 .param each), global loads and stores,
// and the PTX ISA version each architecture needs.

// CHECK: // pb-plan-end
// CHECK: .version 8.0
// CHECK-NEXT: .target sm_90
// CHECK-NEXT: .address_size 64
// CHECK-LABEL: .visible .entry k0_add_kernel(
// CHECK-NEXT: .param .u64 {{.*}}k0_add_kernel_param_0,
// CHECK-NEXT: .param .u64 {{.*}}k0_add_kernel_param_1,
// CHECK-NEXT: .param .u64 {{.*}}k0_add_kernel_param_2
// CHECK-NEXT: )
// CHECK: .maxntid 256, 1, 1
// CHECK: mov.u32 {{.*}}%ctaid.x
// CHECK: mov.u32 {{.*}}%tid.x
// CHECK: ld.global
// CHECK: ld.global
// CHECK: add{{(.rn)?}}.f32
// CHECK: st.global
// CHECK: ret;

// SM80: .version 7.0
// SM80-NEXT: .target sm_80
// SM80: .entry k0_add_kernel(

// SM89: .version 7.8
// SM89-NEXT: .target sm_89

// SM90A: .version 8.0
// SM90A-NEXT: .target sm_90a

module attributes {pb.stage = "fuse", pb.source = "add.onnx"} {
  func.func private @k0_add(%a: memref<2x300xf32>, %b: memref<2x300xf32>, %c: memref<2x300xf32>) attributes {pb.kernel, pb.nodes = ["Add_0"]} {
    affine.for %i = 0 to 2 {
      affine.for %j = 0 to 300 {
        %x = affine.load %a[%i, %j] : memref<2x300xf32>
        %y = affine.load %b[%i, %j] : memref<2x300xf32>
        %z = arith.addf %x, %y : f32
        affine.store %z, %c[%i, %j] : memref<2x300xf32>
      }
    }
    return
  }
  func.func @main(%a: memref<2x300xf32> {pb.name = "a"}, %b: memref<2x300xf32> {pb.name = "b"}, %c: memref<2x300xf32> {pb.name = "c", pb.output}) {
    call @k0_add(%a, %b, %c) : (memref<2x300xf32>, memref<2x300xf32>, memref<2x300xf32>) -> ()
    return
  }
}
