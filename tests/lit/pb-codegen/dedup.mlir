// RUN: pb-codegen %s -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: pb-codegen --no-dedup %s -o %t.all.ptx
// RUN: cmp %t.ptx %t.all.ptx
// RUN: pb-codegen --emit=mlir %s -o %t.mlir
// RUN: pb-codegen --emit=mlir --no-dedup %s -o %t.all.mlir
// RUN: cmp %t.mlir %t.all.mlir
// RUN: FileCheck --check-prefix=MLIR %s < %t.mlir

// Kernels identical but for their names and nodes (k0 and k2) are
// compiled once: k2's PTX is k0's with its symbols renamed and its labels
// numbered as the third function of the module, byte for byte what
// compiling every kernel gives (--no-dedup). k1 differs (a multiply).
// The plan keeps one launch of each kernel under its own name. k2's
// outlined module is cleaned up once too, as k0's (twins.c): the same
// --emit=mlir as cleaning up every kernel (--no-dedup), k2's kernel as
// k0's but for its name.

// CHECK: "kernel": "k0_add_kernel", "origin": "k0_add", "nodes": ["Add_0"]
// CHECK: "kernel": "k1_mul_kernel"
// CHECK: "kernel": "k2_add_kernel", "origin": "k2_add", "nodes": ["Add_2"]
// CHECK: // pb-plan-end
// CHECK-LABEL: .visible .entry k0_add_kernel(
// CHECK: k0_add_kernel_param_2
// CHECK: bra {{.*}}$L__BB0_[[L:[0-9]+]];
// CHECK: add{{(.rn)?}}.f32
// CHECK: $L__BB0_[[L]]:
// CHECK: // .globl k1_mul_kernel
// CHECK-LABEL: .visible .entry k1_mul_kernel(
// CHECK: mul{{(.rn)?}}.f32
// CHECK: $L__BB1_{{[0-9]+}}:
// CHECK: // .globl k2_add_kernel
// CHECK-LABEL: .visible .entry k2_add_kernel(
// CHECK: ld.param.b64 {{.*}}[k2_add_kernel_param_0]
// CHECK-NOT: k0_add
// CHECK: bra {{.*}}$L__BB2_[[L]];
// CHECK-NOT: $L__BB0_
// CHECK: add{{(.rn)?}}.f32
// CHECK-NOT: $L__BB0_
// CHECK: $L__BB2_[[L]]:
// CHECK-NEXT: ret;

// MLIR: gpu.func @k0_add_kernel(
// MLIR: arith.addf
// MLIR: gpu.func @k1_mul_kernel(
// MLIR: gpu.func @k2_add_kernel(
// MLIR: arith.addf

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
  func.func private @k1_mul(%a: memref<2x300xf32>, %b: memref<2x300xf32>, %c: memref<2x300xf32>) attributes {pb.kernel, pb.nodes = ["Mul_1"]} {
    affine.for %i = 0 to 2 {
      affine.for %j = 0 to 300 {
        %x = affine.load %a[%i, %j] : memref<2x300xf32>
        %y = affine.load %b[%i, %j] : memref<2x300xf32>
        %z = arith.mulf %x, %y : f32
        affine.store %z, %c[%i, %j] : memref<2x300xf32>
      }
    }
    return
  }
  func.func private @k2_add(%a: memref<2x300xf32>, %b: memref<2x300xf32>, %c: memref<2x300xf32>) attributes {pb.kernel, pb.nodes = ["Add_2"]} {
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
  func.func @main(%a: memref<2x300xf32> {pb.name = "a"}, %b: memref<2x300xf32> {pb.name = "b"}, %d: memref<2x300xf32> {pb.name = "d", pb.output}) {
    %t = memref.alloc() : memref<2x300xf32>
    %u = memref.alloc() : memref<2x300xf32>
    call @k0_add(%a, %b, %t) : (memref<2x300xf32>, memref<2x300xf32>, memref<2x300xf32>) -> ()
    call @k1_mul(%t, %b, %u) : (memref<2x300xf32>, memref<2x300xf32>, memref<2x300xf32>) -> ()
    call @k2_add(%u, %a, %d) : (memref<2x300xf32>, memref<2x300xf32>, memref<2x300xf32>) -> ()
    return
  }
}
