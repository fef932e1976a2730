// REQUIRES: ptxas
// pb-codegen --index32: 32-bit index arithmetic in the kernels where
// every buffer has fewer than 2^30 elements (lib/codegen/index32.c,
// docs/pb-codegen.md "32-bit indices"), through pb-smem's cp.async
// copies too (convert-nvgpu-to-nvvm builds 64-bit descriptors: the casts
// between the widths become sign extensions).
// RUN: split-file %s %t
// RUN: pb-tile --sizes='{ kernel[0] -> tile[32, 32]; kernel[0] -> block[8, 8] }' %t/mm.mlir | pb-smem -o %t/s.mlir
// RUN: pb-codegen --index32 %t/s.mlir -o %t/i32.ptx
// RUN: ptxas -arch=sm_90 %t/i32.ptx -o %t/i32.cubin
// RUN: pb-codegen --index32 --arch=sm_80 %t/s.mlir -o %t/i32-80.ptx
// RUN: ptxas -arch=sm_80 %t/i32-80.ptx -o %t/i32-80.cubin
// RUN: FileCheck --check-prefix=I32 %s < %t/i32.ptx
// RUN: pb-codegen %t/s.mlir | FileCheck --check-prefix=I64 %s
// A buffer of 2^30 elements: the kernel keeps 64-bit indices.
// RUN: pb-codegen --index32 %t/big.mlir -o %t/b32.ptx
// RUN: pb-codegen %t/big.mlir -o %t/b64.ptx
// RUN: diff %t/b32.ptx %t/b64.ptx

// The copies stay asynchronous; 32-bit subscripts are widened where
// they meet a 64-bit address (mul.wide.s32), which the 64-bit kernel
// never needs.
// I32: cp.async.cg.shared.global
// I32: mul.wide.s32
// I64-NOT: mul.wide.s32

//--- mm.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_mm(%A: memref<64x48xf32>, %B: memref<48x32xf32>, %C: memref<64x32xf32>) attributes {pb.kernel} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (64) {
      affine.parallel (%j) = (0) to (32) {
        affine.store %z, %C[%i, %j] : memref<64x32xf32>
        affine.for %k = 0 to 48 {
          %a = affine.load %A[%i, %k] : memref<64x48xf32>
          %b = affine.load %B[%k, %j] : memref<48x32xf32>
          %c = affine.load %C[%i, %j] : memref<64x32xf32>
          %p = arith.mulf %a, %b : f32
          %s = arith.addf %c, %p : f32
          affine.store %s, %C[%i, %j] : memref<64x32xf32>
        }
      }
    }
    return
  }
  func.func @main(%A: memref<64x48xf32> {pb.name = "A"}, %B: memref<48x32xf32> {pb.name = "B"}, %C: memref<64x32xf32> {pb.name = "C", pb.output}) {
    call @k0_mm(%A, %B, %C) : (memref<64x48xf32>, memref<48x32xf32>, memref<64x32xf32>) -> ()
    return
  }
}
//--- big.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_neg(%X: memref<32768x32768xf32>, %Y: memref<32768x32768xf32>) attributes {pb.kernel} {
    affine.parallel (%i) = (0) to (32768) {
      affine.parallel (%j) = (0) to (32768) {
        %x = affine.load %X[%i, %j] : memref<32768x32768xf32>
        %y = arith.negf %x : f32
        affine.store %y, %Y[%i, %j] : memref<32768x32768xf32>
      }
    }
    return
  }
  func.func @main(%X: memref<32768x32768xf32> {pb.name = "X"}, %Y: memref<32768x32768xf32> {pb.name = "Y", pb.output}) {
    call @k0_neg(%X, %Y) : (memref<32768x32768xf32>, memref<32768x32768xf32>) -> ()
    return
  }
}
