// RUN: split-file %s %t
// RUN: pb-mma --arch=sm_90a %t/mm.mlir -o %t/mm.mma.mlir
// RUN: pb-mma --arch=sm_90a %t/mmt.mlir -o %t/mmt.mma.mlir
// RUN: pb-smem --arch=sm_90a --k-tile=32 --stages=3 %t/mm.mma.mlir -o %t/mm32.mlir
// RUN: pb-smem --arch=sm_90a --k-tile=16 --stages=3 %t/mm.mma.mlir -o %t/mm16.mlir
// RUN: pb-smem --arch=sm_90a --k-tile=32 --stages=3 %t/mmt.mma.mlir -o %t/mmt32.mlir
// RUN: FileCheck --check-prefix=K32 %s < %t/mm32.mlir
// RUN: FileCheck --check-prefix=K16 %s < %t/mm16.mlir
// RUN: FileCheck --check-prefix=T32 %s < %t/mmt32.mlir
// RUN: pb-smem --arch=sm_90 %t/mm.mma.mlir | FileCheck --check-prefix=SM90 %s

// The numbers of each layout on the CPU.
// RUN: pb-run --random=1 --output %t/ref %t/mm.mlir
// RUN: pb-run --random=1 --check %t/ref/C.npy %t/mm32.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --check %t/ref/C.npy %t/mm16.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --output %t/reft %t/mmt.mlir
// RUN: pb-run --random=1 --check %t/reft/C.npy %t/mmt32.mlir | FileCheck --check-prefix=NUM %s

// The descriptors pb-codegen builds for them, assembled.
// RUN: pb-codegen --arch=sm_90a %t/mm32.mlir -o %t/mm32.ptx
// RUN: FileCheck --check-prefix=P32 %s < %t/mm32.ptx
// RUN: pb-codegen --arch=sm_90a %t/mm16.mlir | FileCheck --check-prefix=P16 %s
// RUN: pb-codegen --arch=sm_90a %t/mmt32.mlir | FileCheck --check-prefix=PT32 %s
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t/mm32.ptx -o %t/mm32.cubin %}

// pb-smem's rings for wgmma (docs/pb-smem.md, "wgmma on sm_90a") with
// shorter k-tiles (and 3 stages, where 4 would fit): rows of 2 KT bytes for the k-major A (64-byte swizzle
// for KT 32, 32-byte for 16), B [k][n] in panels of 64 columns (128-byte
// rows) whatever the k-tile; B [n][k] (bf16, x @ w.T) like A.
// K32-DAG: memref.alloc() : memref<3x64x32xf16, #gpu.address_space<workgroup>>
// K32-DAG: memref.alloc() : memref<3x1x32x64xf16, #gpu.address_space<workgroup>>
// K32: affine.vector_store {{.*}} {pb.swizzle = 64 : i64} : memref<3x64x32xf16
// K32: affine.vector_store {{.*}} {pb.swizzle = 128 : i64} : memref<3x1x32x64xf16
// K16-DAG: memref.alloc() : memref<3x64x16xf16, #gpu.address_space<workgroup>>
// K16-DAG: memref.alloc() : memref<3x1x16x64xf16, #gpu.address_space<workgroup>>
// K16: affine.vector_store {{.*}} {pb.swizzle = 32 : i64} : memref<3x64x16xf16
// T32-COUNT-2: memref.alloc() : memref<3x64x32xbf16, #gpu.address_space<workgroup>>
// T32-NOT: pb.swizzle = 128
// T32: pb.swizzle = 64
// On sm_90: padded rows for ldmatrix, no swizzle.
// SM90: memref.alloc() : memref<3x32x72xf16, #gpu.address_space<workgroup>>
// SM90-NOT: pb.swizzle

// NUM: ok

// Descriptor fields (bits 62-63 the swizzle: 2 for 64 bytes, 3 for 32;
// SBO 8 rows: 512 or 256 bytes; B's LBO the panel, 32 or 16 rows of 128
// bytes); a k step of 16 adds 32 bytes (2 units) to A's start, 16 rows
// (2048 bytes, 128 units) to B [k][n]'s.
// P32-DAG: add.s64 {{.*}}, -9223371899415756800;
// P32-DAG: add.s64 {{.*}}, -9223371899415756798;
// P32-DAG: add.s64 {{.*}}, 4611686293322072064;
// P32-DAG: add.s64 {{.*}}, 4611686293322072192;
// P32: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// P16-DAG: add.s64 {{.*}}, -4611685949707845632;
// P16-DAG: add.s64 {{.*}}, 4611686293313683456;
// P16: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// PT32: add.s64 {{.*}}, -9223371899415756800;
// PT32: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0, 0;

//--- mm.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_gemm(%A: memref<128x128xf16>, %B: memref<128x128xf16>, %bias: memref<128xf16>, %C: memref<128x128xf16>) attributes {pb.kernel, pb.nodes = ["Gemm_0"]} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (128) {
      affine.parallel (%j) = (0) to (128) {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 128 {
          %a = affine.load %A[%i, %k] : memref<128x128xf16>
          %b = affine.load %B[%k, %j] : memref<128x128xf16>
          %s = affine.load %acc[] : memref<f32>
          %ae = arith.extf %a : f16 to f32
          %be = arith.extf %b : f16 to f32
          %p = arith.mulf %ae, %be : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %acc[] : memref<f32>
        }
        %r = affine.load %acc[] : memref<f32>
        %rh = arith.truncf %r : f32 to f16
        %bv = affine.load %bias[%j] : memref<128xf16>
        %y = arith.addf %rh, %bv : f16
        affine.store %y, %C[%i, %j] : memref<128x128xf16>
      }
    }
    return
  }
  func.func @main(%A: memref<128x128xf16> {pb.name = "A"}, %B: memref<128x128xf16> {pb.name = "B"}, %bias: memref<128xf16> {pb.name = "bias"}, %C: memref<128x128xf16> {pb.name = "C", pb.output}) {
    call @k0_gemm(%A, %B, %bias, %C) : (memref<128x128xf16>, memref<128x128xf16>, memref<128xf16>, memref<128x128xf16>) -> ()
    return
  }
}
//--- mmt.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_gemm(%A: memref<128x128xbf16>, %B: memref<128x128xbf16>, %bias: memref<128xbf16>, %C: memref<128x128xbf16>) attributes {pb.kernel, pb.nodes = ["Gemm_0"]} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (128) {
      affine.parallel (%j) = (0) to (128) {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 128 {
          %a = affine.load %A[%i, %k] : memref<128x128xbf16>
          %b = affine.load %B[%j, %k] : memref<128x128xbf16>
          %s = affine.load %acc[] : memref<f32>
          %ae = arith.extf %a : bf16 to f32
          %be = arith.extf %b : bf16 to f32
          %p = arith.mulf %ae, %be : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %acc[] : memref<f32>
        }
        %r = affine.load %acc[] : memref<f32>
        %rh = arith.truncf %r : f32 to bf16
        %bv = affine.load %bias[%j] : memref<128xbf16>
        %y = arith.addf %rh, %bv : bf16
        affine.store %y, %C[%i, %j] : memref<128x128xbf16>
      }
    }
    return
  }
  func.func @main(%A: memref<128x128xbf16> {pb.name = "A"}, %B: memref<128x128xbf16> {pb.name = "B"}, %bias: memref<128xbf16> {pb.name = "bias"}, %C: memref<128x128xbf16> {pb.name = "C", pb.output}) {
    call @k0_gemm(%A, %B, %bias, %C) : (memref<128x128xbf16>, memref<128x128xbf16>, memref<128xbf16>, memref<128x128xbf16>) -> ()
    return
  }
}
