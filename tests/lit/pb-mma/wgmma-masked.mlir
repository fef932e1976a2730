// RUN: split-file %s %t
// RUN: pb-mma --arch=sm_90a --remarks %t/rows.mlir -o %t/rows.mma.mlir 2>&1 | FileCheck --check-prefix=REM %s
// RUN: FileCheck --check-prefix=OUT %s < %t/rows.mma.mlir
// RUN: pb-smem --arch=sm_90a --remarks %t/rows.mma.mlir -o %t/rows.s.mlir 2>&1 | FileCheck --check-prefix=SREM %s
// RUN: FileCheck --check-prefix=STG %s < %t/rows.s.mlir
// RUN: pb-mma --arch=sm_90a --remarks %t/nk.mlir -o %t/nk.mma.mlir 2>&1 | FileCheck --check-prefix=NK %s
// RUN: pb-smem --arch=sm_90a --remarks %t/nk.mma.mlir -o %t/nk.s.mlir 2>&1 | FileCheck --check-prefix=SREM %s
// RUN: pb-mma --arch=sm_90a --remarks %t/kn.mlir -o %t/kn.mma.mlir 2>&1 | FileCheck --check-prefix=KN %s
// RUN: pb-smem --arch=sm_90a --remarks %t/kn.mma.mlir -o %t/kn.s.mlir 2>&1 | FileCheck --check-prefix=SREM %s
// RUN: FileCheck --check-prefix=KNS %s < %t/kn.s.mlir

// The numbers on the CPU: pb-mma's and pb-smem's outputs against the
// nests they came from.
// RUN: pb-run --random=1 --output %t/ref %t/rows.mlir
// RUN: pb-run --random=1 --check %t/ref/C.npy %t/rows.mma.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --check %t/ref/C.npy %t/rows.s.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --output %t/refnk %t/nk.mlir
// RUN: pb-run --random=1 --check %t/refnk/C.npy %t/nk.mma.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --check %t/refnk/C.npy %t/nk.s.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --output %t/refkn %t/kn.mlir
// RUN: pb-run --random=1 --check %t/refkn/C.npy %t/kn.mma.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --check %t/refkn/C.npy %t/kn.s.mlir | FileCheck --check-prefix=NUM %s

// The wgmmas, the guarded stores, assembled.
// RUN: pb-codegen --arch=sm_90a %t/rows.s.mlir -o %t/rows.ptx
// RUN: FileCheck --check-prefix=PTX %s < %t/rows.ptx
// RUN: pb-codegen --arch=sm_90a %t/nk.s.mlir -o %t/nk.ptx
// RUN: FileCheck --check-prefix=PTX %s < %t/nk.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t/rows.ptx -o %t/rows.cubin %}
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t/nk.ptx -o %t/nk.cubin %}
// RUN: pb-codegen --arch=sm_90a %t/kn.s.mlir -o %t/kn.ptx
// RUN: FileCheck --check-prefix=KNPTX --implicit-check-not=st.shared %s < %t/kn.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t/kn.ptx -o %t/kn.cubin %}

// wgmma with masked tiles (docs/pb-mma.md, "wgmma on sm_90a"): C's 200
// rows are not whole warpgroups, so the last block of 64 rows holds 8
// of C's; its A tile's rows past 200 are zeros in the ring (the copies
// guarded: whole rows of the swizzled ring), its stores guarded
// (in_bounds false along the rows).
// REM: rows.mlir:4:5: remark: on tensor cores: wgmma m64n64k16 f16 -> f32, block tile 64x64, 1 warpgroup(s) of 4 warps (warp tile 16x64)
// OUT: affine.parallel (%[[I:.*]], %[[J:.*]]) = (0, 0) to (256, 128) step (64, 64) {
// OUT: affine.parallel (%{{.*}}, %{{.*}}) = (0, 0) to (64, 64) step (16, 64) {
// OUT: vector.transfer_read %{{.*}} {in_bounds = [false, true]} : memref<200x128xf16>, vector<16x16xf16>
// OUT: vector.transfer_write {{.*}} {in_bounds = [false, true]} : vector<16x8xf16>, memref<200x128xf16>
// SREM: remark: warp tiles staged: 2 operands, {{.*}}, in wgmma's swizzled layout
// STG: affine.if
// STG-NEXT: affine.vector_load %{{.*}} : memref<200x128xf16>, vector<8xf16>
// STG-NEXT: affine.vector_store {{.*}} {pb.swizzle = 128 : i64} : memref<{{[0-9]+}}x64x64xf16, #gpu.address_space<workgroup>>
// STG-NEXT: } else {
// STG-NEXT: arith.constant dense<0.000000e+00> : vector<8xf16>
// PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16

// B stored [n][k] (x @ w.T): its 72 columns masked alike, the rows of
// B's ring past 72 zeros. B stored [k][n]: the columns past 72 are
// chunks of the swizzled rows of B's panel, so their zeros are stored
// swizzled (pb.swizzle on the guarded copy's else branch too), at the
// address pb-codegen gives the chunk's cp.async; pb-codegen makes the
// guarded copy one cp.async of source size 16 or 0 (zero fill) at that
// address, with no branch and no store of zeros.
// NK: remark: on tensor cores: wgmma m64n64k16 f16 -> f32, block tile 64x64, 1 warpgroup(s) of 4 warps (warp tile 16x64)
// KN: remark: on tensor cores: wgmma m64n64k16 f16 -> f32, block tile 64x64, 1 warpgroup(s) of 4 warps (warp tile 16x64)
// KNS: affine.vector_load %{{.*}} : memref<64x72xf16>, vector<8xf16>
// KNS-NEXT: affine.vector_store %{{.*}}, %[[R:.*]][%[[S:.*]], %[[C:.*]] floordiv 64, %[[ROW:.*]], %[[C]] mod 64] {pb.swizzle = 128 : i64} : memref<{{[0-9]+}}x1x{{[0-9]+}}x64xf16
// KNS-NEXT: } else {
// KNS-NEXT: arith.constant dense<0.000000e+00>
// KNS-NEXT: affine.vector_store %{{.*}}, %[[R]][%[[S]], %[[C]] floordiv 64, %[[ROW]], %[[C]] mod 64] {pb.swizzle = 128 : i64}
// KNPTX: cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// KNPTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16

// NUM: ok

//--- rows.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_gemm(%A: memref<200x128xf16>, %B: memref<128x128xf16>, %bias: memref<128xf16>, %C: memref<200x128xf16>) attributes {pb.kernel, pb.nodes = ["Gemm_0"]} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (200) {
      affine.parallel (%j) = (0) to (128) {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 128 {
          %a = affine.load %A[%i, %k] : memref<200x128xf16>
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
        affine.store %y, %C[%i, %j] : memref<200x128xf16>
      }
    }
    return
  }
  func.func @main(%A: memref<200x128xf16> {pb.name = "A"}, %B: memref<128x128xf16> {pb.name = "B"}, %bias: memref<128xf16> {pb.name = "bias"}, %C: memref<200x128xf16> {pb.name = "C", pb.output}) {
    call @k0_gemm(%A, %B, %bias, %C) : (memref<200x128xf16>, memref<128x128xf16>, memref<128xf16>, memref<200x128xf16>) -> ()
    return
  }
}
//--- nk.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_gemm(%A: memref<200x64xf16>, %B: memref<72x64xf16>, %bias: memref<72xf16>, %C: memref<200x72xf16>) attributes {pb.kernel, pb.nodes = ["Gemm_0"]} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (200) {
      affine.parallel (%j) = (0) to (72) {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 64 {
          %a = affine.load %A[%i, %k] : memref<200x64xf16>
          %b = affine.load %B[%j, %k] : memref<72x64xf16>
          %s = affine.load %acc[] : memref<f32>
          %ae = arith.extf %a : f16 to f32
          %be = arith.extf %b : f16 to f32
          %p = arith.mulf %ae, %be : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %acc[] : memref<f32>
        }
        %r = affine.load %acc[] : memref<f32>
        %rh = arith.truncf %r : f32 to f16
        %bv = affine.load %bias[%j] : memref<72xf16>
        %y = arith.addf %rh, %bv : f16
        affine.store %y, %C[%i, %j] : memref<200x72xf16>
      }
    }
    return
  }
  func.func @main(%A: memref<200x64xf16> {pb.name = "A"}, %B: memref<72x64xf16> {pb.name = "B"}, %bias: memref<72xf16> {pb.name = "bias"}, %C: memref<200x72xf16> {pb.name = "C", pb.output}) {
    call @k0_gemm(%A, %B, %bias, %C) : (memref<200x64xf16>, memref<72x64xf16>, memref<72xf16>, memref<200x72xf16>) -> ()
    return
  }
}
//--- kn.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_gemm(%A: memref<128x64xf16>, %B: memref<64x72xf16>, %bias: memref<72xf16>, %C: memref<128x72xf16>) attributes {pb.kernel, pb.nodes = ["Gemm_0"]} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (128) {
      affine.parallel (%j) = (0) to (72) {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 64 {
          %a = affine.load %A[%i, %k] : memref<128x64xf16>
          %b = affine.load %B[%k, %j] : memref<64x72xf16>
          %s = affine.load %acc[] : memref<f32>
          %ae = arith.extf %a : f16 to f32
          %be = arith.extf %b : f16 to f32
          %p = arith.mulf %ae, %be : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %acc[] : memref<f32>
        }
        %r = affine.load %acc[] : memref<f32>
        %rh = arith.truncf %r : f32 to f16
        %bv = affine.load %bias[%j] : memref<72xf16>
        %y = arith.addf %rh, %bv : f16
        affine.store %y, %C[%i, %j] : memref<128x72xf16>
      }
    }
    return
  }
  func.func @main(%A: memref<128x64xf16> {pb.name = "A"}, %B: memref<64x72xf16> {pb.name = "B"}, %bias: memref<72xf16> {pb.name = "bias"}, %C: memref<128x72xf16> {pb.name = "C", pb.output}) {
    call @k0_gemm(%A, %B, %bias, %C) : (memref<128x64xf16>, memref<64x72xf16>, memref<72xf16>, memref<128x72xf16>) -> ()
    return
  }
}
