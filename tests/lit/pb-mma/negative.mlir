// RUN: pb-tile --remarks %s -o /dev/null 2>&1 | FileCheck %s
// RUN: pb-mma %s | FileCheck --check-prefix=OUT %s

// Reductions pb-tile keeps for CUDA cores, with the reason; nothing is
// left marked for pb-mma.
// CHECK: negative.mlir:[[# @LINE + 12]]:5: remark: not for tensor cores: f32 operands, computed exactly (--precision=tf32, fp16 or bf16 runs them on tensor cores)
// CHECK: negative.mlir:[[# @LINE + 31]]:5: remark: not for tensor cores: the reduction length is not a multiple of 16 and an operand extends past it
// CHECK: negative.mlir:[[# @LINE + 53]]:5: remark: not for tensor cores: the subscripts are not those of C[m,n] += A[m,k] * B[k,n] (with batch dimensions)
// CHECK-NOT: left to pb-mma

// OUT-NOT: pb.mma
// OUT-NOT: vector.contract
// OUT: pb.map = "thread"

module attributes {pb.stage = "fuse"} {
  func.func private @k0_f32(%A: memref<32x32xf32>, %B: memref<32x16xf32>, %C: memref<32x16xf32>) attributes {pb.kernel} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (32) {
      affine.parallel (%j) = (0) to (16) {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 32 {
          %a = affine.load %A[%i, %k] : memref<32x32xf32>
          %b = affine.load %B[%k, %j] : memref<32x16xf32>
          %s = affine.load %acc[] : memref<f32>
          %p = arith.mulf %a, %b : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %acc[] : memref<f32>
        }
        %r = affine.load %acc[] : memref<f32>
        affine.store %r, %C[%i, %j] : memref<32x16xf32>
      }
    }
    return
  }
  func.func private @k1_k24(%A: memref<32x32xf16>, %B: memref<24x16xf16>, %C: memref<32x16xf32>) attributes {pb.kernel} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (32) {
      affine.parallel (%j) = (0) to (16) {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 24 {
          %a = affine.load %A[%i, %k] : memref<32x32xf16>
          %b = affine.load %B[%k, %j] : memref<24x16xf16>
          %s = affine.load %acc[] : memref<f32>
          %ae = arith.extf %a : f16 to f32
          %be = arith.extf %b : f16 to f32
          %p = arith.mulf %ae, %be : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %acc[] : memref<f32>
        }
        %r = affine.load %acc[] : memref<f32>
        affine.store %r, %C[%i, %j] : memref<32x16xf32>
      }
    }
    return
  }
  // A product along a diagonal (A[i, k] * B[k, i]): no column dimension.
  func.func private @k2_diag(%A: memref<32x32xf16>, %B: memref<32x32xf16>, %C: memref<32x16xf32>) attributes {pb.kernel} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (32) {
      affine.parallel (%j) = (0) to (16) {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 32 {
          %a = affine.load %A[%i, %k] : memref<32x32xf16>
          %b = affine.load %B[%k, %i] : memref<32x32xf16>
          %s = affine.load %acc[] : memref<f32>
          %ae = arith.extf %a : f16 to f32
          %be = arith.extf %b : f16 to f32
          %p = arith.mulf %ae, %be : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %acc[] : memref<f32>
        }
        %r = affine.load %acc[] : memref<f32>
        affine.store %r, %C[%i, %j] : memref<32x16xf32>
      }
    }
    return
  }
  func.func @main(%A: memref<32x32xf32>, %B: memref<32x16xf32>, %C: memref<32x16xf32>, %D: memref<32x32xf16>, %E: memref<24x16xf16>, %F: memref<32x32xf16>) {
    call @k0_f32(%A, %B, %C) : (memref<32x32xf32>, memref<32x16xf32>, memref<32x16xf32>) -> ()
    call @k1_k24(%D, %E, %C) : (memref<32x32xf16>, memref<24x16xf16>, memref<32x16xf32>) -> ()
    call @k2_diag(%F, %F, %C) : (memref<32x32xf16>, memref<32x32xf16>, memref<32x16xf32>) -> ()
    return
  }
}
