// RUN: pb-tile --split-input-file --sizes='{ kernel[0] -> tile[16, 16]; kernel[0] -> block[4, 8] }' %s | FileCheck %s
// RUN: split-file %s %t
// RUN: pb-run --random=1 --output %t.ref %t/mm.mlir
// RUN: pb-tile --sizes='{ kernel[0] -> tile[16, 16]; kernel[0] -> block[4, 8] }' %t/mm.mlir | pb-run --random=1 --check %t.ref/C.npy - | FileCheck --check-prefix=NUM %s

// A matmul without bias accumulates into its output C across k. pb-tile
// keeps the element in a private buffer (one per point of the jammed 4x2
// thread tile), loaded before the k loop and stored after it.

// CHECK-LABEL: func.func private @k0_mm
// CHECK: memref.alloca() : memref<4x2xf32>
// CHECK: affine.for %{{.*}} = 0 to 24 {
// CHECK-NOT: %arg2
// CHECK: affine.store %{{.*}}, %alloca[
// CHECK: affine.store %{{.*}}, %arg2[
// CHECK: } {pb.map = "thread"}

// When the kernel is called with C and A the same buffer, the loads of A
// may read C's elements: no promotion, C stays in the k loop.

// CHECK-LABEL: func.func private @k0_inplace
// CHECK-NOT: memref.alloca() : memref<4x2xf32>
// CHECK: affine.for %{{.*}} = 0 to 32 {
// CHECK: affine.store %{{.*}}, %arg1

// NUM: output 'C': {{.*}}: ok

//--- mm.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_mm(%A: memref<40x24xf32>, %B: memref<24x20xf32>, %C: memref<40x20xf32>) attributes {pb.kernel} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (40) {
      affine.parallel (%j) = (0) to (20) {
        affine.store %z, %C[%i, %j] : memref<40x20xf32>
        affine.for %k = 0 to 24 {
          %a = affine.load %A[%i, %k] : memref<40x24xf32>
          %b = affine.load %B[%k, %j] : memref<24x20xf32>
          %c = affine.load %C[%i, %j] : memref<40x20xf32>
          %p = arith.mulf %a, %b : f32
          %s = arith.addf %c, %p : f32
          affine.store %s, %C[%i, %j] : memref<40x20xf32>
        }
      }
    }
    return
  }
  func.func @main(%A: memref<40x24xf32> {pb.name = "A"}, %B: memref<24x20xf32> {pb.name = "B"}, %C: memref<40x20xf32> {pb.name = "C", pb.output}) {
    call @k0_mm(%A, %B, %C) : (memref<40x24xf32>, memref<24x20xf32>, memref<40x20xf32>) -> ()
    return
  }
}

// -----
//--- inplace.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_inplace(%A: memref<32x32xf32>, %C: memref<32x32xf32>) attributes {pb.kernel} {
    affine.parallel (%i) = (0) to (32) {
      affine.parallel (%j) = (0) to (32) {
        affine.for %k = 0 to 32 {
          %a = affine.load %A[%i, %k] : memref<32x32xf32>
          %c = affine.load %C[%i, %j] : memref<32x32xf32>
          %s = arith.addf %c, %a : f32
          affine.store %s, %C[%i, %j] : memref<32x32xf32>
        }
      }
    }
    return
  }
  func.func @main(%X: memref<32x32xf32> {pb.name = "X", pb.output}) {
    call @k0_inplace(%X, %X) : (memref<32x32xf32>, memref<32x32xf32>) -> ()
    return
  }
}
