// RUN: pb-codegen --jobs=1 %s -o %t.1.ptx
// RUN: pb-codegen --jobs=3 %s -o %t.3.ptx
// RUN: pb-codegen --jobs=3 --no-dedup %s -o %t.all.ptx
// RUN: pb-codegen --jobs=1 --no-dedup %s -o %t.one.ptx
// RUN: cmp %t.1.ptx %t.3.ptx
// RUN: cmp %t.1.ptx %t.all.ptx
// RUN: cmp %t.1.ptx %t.one.ptx
// RUN: FileCheck %s < %t.3.ptx
// RUN: not pb-codegen --jobs=-1 %s 2>&1 | FileCheck --check-prefix=ERR %s

// The distinct kernels are lowered on threads, each alone (--jobs=3),
// and their PTX put together as one module's, byte for byte: the device
// globals and the demoted shared arrays (of the two GEMMs) before the
// first entry in module order, each kernel's labels numbered by its place
// in the module (k3 is k1's copy, compiled once).

// CHECK: // .globl k0_copy_kernel
// CHECK-NEXT: .global .align 64 .b8 __c1[16]
// CHECK-NEXT: // __wg_k1_gemm_kernel_0 has been demoted
// CHECK-NEXT: // __wg_k1_gemm_kernel_1_$_0 has been demoted
// CHECK-NEXT: .global .align 64 .b8 __c2[16]
// CHECK-NEXT: // __wg_k3_gemm_kernel_0 has been demoted
// CHECK-NEXT: // __wg_k3_gemm_kernel_1_$_0 has been demoted
// CHECK-EMPTY:
// CHECK-LABEL: .visible .entry k0_copy_kernel(
// CHECK-LABEL: .visible .entry k1_gemm_kernel(
// CHECK: $L__BB1_
// CHECK-LABEL: .visible .entry k2_copy_kernel(
// CHECK-LABEL: .visible .entry k3_gemm_kernel(
// CHECK-NOT: $L__BB1_
// CHECK: $L__BB3_
// CHECK-NOT: $L__BB1_

// ERR: error: bad value '-1' for option '--jobs' (expected a positive number)

module attributes {pb.stage = "fuse"} {
  memref.global "private" constant @__c1 : memref<2x2xf32> = dense<[[1.0, 2.0], [3.0, 4.0]]> {alignment = 64 : i64}
  memref.global "private" constant @__c2 : memref<2x2xf32> = dense<[[5.0, 6.0], [7.0, 8.0]]> {alignment = 64 : i64}
  func.func private @k0_copy(%arg0: memref<2x2xf32>, %arg1: memref<2x2xf32>) attributes {pb.kernel, pb.nodes = ["Constant_0"]} {
    affine.for %i = 0 to 2 {
      affine.for %j = 0 to 2 {
        %0 = affine.load %arg0[%i, %j] : memref<2x2xf32>
        affine.store %0, %arg1[%i, %j] : memref<2x2xf32>
      }
    }
    return
  }
  func.func private @k1_gemm(%arg0: memref<64x64xf32>, %arg1: memref<64x64xf32>, %arg2: memref<64x64xf32>) attributes {pb.kernel, pb.nodes = ["MatMul_1"]} {
    %cst = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (64) {
      affine.parallel (%j) = (0) to (64) {
        affine.store %cst, %arg0[%i, %j] : memref<64x64xf32>
        affine.for %k = 0 to 64 {
          %0 = affine.load %arg1[%i, %k] : memref<64x64xf32>
          %1 = affine.load %arg2[%k, %j] : memref<64x64xf32>
          %2 = affine.load %arg0[%i, %j] : memref<64x64xf32>
          %3 = arith.mulf %0, %1 : f32
          %4 = arith.addf %2, %3 : f32
          affine.store %4, %arg0[%i, %j] : memref<64x64xf32>
        }
      }
    }
    return
  }
  func.func private @k2_copy(%arg0: memref<2x2xf32>, %arg1: memref<2x2xf32>) attributes {pb.kernel, pb.nodes = ["Constant_2"]} {
    affine.for %i = 0 to 2 {
      affine.for %j = 0 to 2 {
        %0 = affine.load %arg0[%i, %j] : memref<2x2xf32>
        affine.store %0, %arg1[%i, %j] : memref<2x2xf32>
      }
    }
    return
  }
  func.func private @k3_gemm(%arg0: memref<64x64xf32>, %arg1: memref<64x64xf32>, %arg2: memref<64x64xf32>) attributes {pb.kernel, pb.nodes = ["MatMul_3"]} {
    %cst = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (64) {
      affine.parallel (%j) = (0) to (64) {
        affine.store %cst, %arg0[%i, %j] : memref<64x64xf32>
        affine.for %k = 0 to 64 {
          %0 = affine.load %arg1[%i, %k] : memref<64x64xf32>
          %1 = affine.load %arg2[%k, %j] : memref<64x64xf32>
          %2 = affine.load %arg0[%i, %j] : memref<64x64xf32>
          %3 = arith.mulf %0, %1 : f32
          %4 = arith.addf %2, %3 : f32
          affine.store %4, %arg0[%i, %j] : memref<64x64xf32>
        }
      }
    }
    return
  }
  func.func @main(%arg0: memref<64x64xf32> {pb.name = "x"}, %arg1: memref<64x64xf32> {pb.param = "w"}, %arg2: memref<2x2xf32> {pb.name = "c1", pb.output}, %arg3: memref<2x2xf32> {pb.name = "c2", pb.output}, %arg4: memref<64x64xf32> {pb.name = "y", pb.output}) {
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<64x64xf32>
    %g1 = memref.get_global @__c1 : memref<2x2xf32>
    call @k0_copy(%g1, %arg2) : (memref<2x2xf32>, memref<2x2xf32>) -> ()
    call @k1_gemm(%alloc, %arg0, %arg1) : (memref<64x64xf32>, memref<64x64xf32>, memref<64x64xf32>) -> ()
    %g2 = memref.get_global @__c2 : memref<2x2xf32>
    call @k2_copy(%g2, %arg3) : (memref<2x2xf32>, memref<2x2xf32>) -> ()
    call @k3_gemm(%arg4, %alloc, %arg1) : (memref<64x64xf32>, memref<64x64xf32>, memref<64x64xf32>) -> ()
    memref.dealloc %alloc : memref<64x64xf32>
    return
  }
}
