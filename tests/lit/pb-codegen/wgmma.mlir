// RUN: split-file %s %t
// RUN: pb-mma --arch=sm_90a --remarks %t/mm.mlir -o %t/mm.mma.mlir 2>&1 | FileCheck --check-prefix=REM %s
// RUN: pb-smem --arch=sm_90a --remarks %t/mm.mma.mlir -o %t/mm.s.mlir 2>&1 | FileCheck --check-prefix=SREM %s
// RUN: FileCheck --check-prefix=SMEM %s < %t/mm.s.mlir
// RUN: pb-mma --arch=sm_90a --remarks %t/mmt.mlir -o %t/mmt.mma.mlir 2>&1 | FileCheck --check-prefix=REMT %s
// RUN: pb-smem --arch=sm_90a %t/mmt.mma.mlir -o %t/mmt.s.mlir
// RUN: FileCheck --check-prefix=SMEMT %s < %t/mmt.s.mlir

// The numbers: the warpgroups' tiles (pb-mma's output) and their staging
// in swizzled rings (pb-smem's) against the fuse-level nest, on the CPU.
// RUN: pb-run --random=1 --output %t/ref %t/mm.mlir
// RUN: pb-run --random=1 --check %t/ref/C.npy %t/mm.mma.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --check %t/ref/C.npy %t/mm.s.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --output %t/reft %t/mmt.mlir
// RUN: pb-run --random=1 --check %t/reft/C.npy %t/mmt.s.mlir | FileCheck --check-prefix=NUM %s

// On the GPU: wgmma.mma_async from shared-memory descriptors, the copies
// swizzled, the rings aligned to the swizzle's 1024 bytes.
// RUN: pb-codegen --arch=sm_90a %t/mm.s.mlir -o %t/mm.ptx
// RUN: FileCheck --check-prefix=PTX %s < %t/mm.ptx
// RUN: pb-codegen --arch=sm_90a %t/mmt.s.mlir | FileCheck --check-prefix=PTXT %s
// RUN: %if ptxas %{ ptxas -arch=sm_90a -v %t/mm.ptx -o %t/mm.cubin 2>&1 | FileCheck --check-prefix=PTXAS %s %}
// RUN: %if ptxas && nvdisasm %{ %nvdisasm -c %t/mm.cubin | FileCheck --check-prefix=SASS %s %}
// Not sm_90 (no wgmma there): mma.sync on the same tiles' IR.
// RUN: pb-codegen --arch=sm_90 %t/mm.mma.mlir | FileCheck --check-prefix=SM90 %s

// C = A x B + bias, 128x128x128, f16 (B [k][n], as MatMul's weights) and
// bf16 (B [n][k], x @ w.T). On sm_90a pb-mma gives each warp 16 rows of
// the block's columns, so that the 4 warps of a warpgroup hold one
// wgmma m64nNk16's accumulator; 64x64 blocks here (4 blocks, 128x64 would
// be 2).
// REM: remark: on tensor cores: wgmma m64n64k16 f16 -> f32, block tile 64x64, 1 warpgroup(s) of 4 warps (warp tile 16x64)
// REMT: remark: on tensor cores: wgmma m64n64k16 bf16 -> f32, block tile 64x64, 1 warpgroup(s) of 4 warps (warp tile 16x64)
// SREM: remark: warp tiles staged: 2 operands, 2 stages of k-tile 64, 32768 bytes of shared memory for 4 warps, in wgmma's swizzled layout

// pb-smem's rings in wgmma's layout: unpadded rows of 128 bytes (k-tiles
// of 64, two of them: 2 slots, never more slots than k-tiles), B [k][n]
// in panels of 64 columns; every access marked with the
// swizzle pb-codegen applies.
// SMEM-LABEL: func.func private @k0_gemm
// SMEM-DAG: %[[RB:.*]] = memref.alloc() : memref<2x1x64x64xf16, #gpu.address_space<workgroup>>
// SMEM-DAG: %[[RA:.*]] = memref.alloc() : memref<2x64x64xf16, #gpu.address_space<workgroup>>
// SMEM: affine.parallel (%{{.*}}, %{{.*}}) = (0, 0) to (64, 64) step (16, 64) {
// SMEM: affine.vector_store %{{.*}}, %[[RA]][%{{.*}}, %{{.*}}, %{{.*}}] {pb.swizzle = 128 : i64}
// SMEM: affine.vector_store %{{.*}}, %[[RB]][%{{.*}}, %[[C:.*]] floordiv 64, %{{.*}}, %[[C]] mod 64] {pb.swizzle = 128 : i64}
// SMEM: vector.transfer_read %[[RA]]{{.*}}pb.swizzle = 128 : i64{{.*}} vector<16x16xf16>
// SMEM: vector.transfer_read %[[RB]]{{.*}}pb.swizzle = 128 : i64{{.*}} vector<16x8xf16>
// SMEMT-DAG: memref.alloc() : memref<2x64x64xbf16, #gpu.address_space<workgroup>>
// SMEMT-DAG: memref.alloc() : memref<2x64x64xbf16, #gpu.address_space<workgroup>>
// SMEMT-NOT: floordiv 64

// NUM: ok

// The copies: the 16-byte chunk index xor the row mod 8; a barrier is
// preceded by the wait for the wgmmas and the proxy fence; per k step of
// 16 one wgmma m64n64k16 between a fence and a commit. Descriptors: A
// k-major, 128-byte swizzle (bits 62-63: 1), 8-row groups 1024 bytes
// apart (SBO 64 in 16-byte units), LBO 1; B [k][n] transposed (the
// trans-b immediate 1), its 64-column panels 8192 bytes apart (LBO 512).
// The fields are added to the ring's address in 16-byte units once, out
// of the loop.
// PTX: .shared .align 1024 .b8 __wg_k0_gemm_kernel_0[16384];
// PTX: .shared .align 1024 .b8 __wg_k0_gemm_kernel_1[16384];
// PTX: xor.b64
// PTX: cp.async.cg.shared.global
// PTX-DAG: add.s64 {{.*}}, 4611686293305360384;
// PTX-DAG: add.s64 {{.*}}, 4611686293338849280;
// PTX: wgmma.wait_group.sync.aligned 0;
// PTX-NEXT: fence.proxy.async.shared::cta;
// PTX-NEXT: bar.sync 0;
// PTX: wgmma.fence.sync.aligned;
// PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{{(%r[0-9]+, ){31}%r[0-9]+}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 1;
// PTX: wgmma.commit_group.sync.aligned;
// PTX: wgmma.wait_group.sync.aligned 0;
// PTX-NOT: ldmatrix
// PTX-NOT: mma.sync
// PTXT: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0, 0;
// PTXT-NOT: ldmatrix
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// SASS: HGMMA.64x64x16.F32 R{{[0-9]+}}, gdesc[UR{{[0-9]+}}].tnspB, R{{[0-9]+}}, gsb0
// SM90: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// SM90-NOT: wgmma

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
