// RUN: split-file %s %t
// float32 contractions on f16 or bf16 tensor cores (--precision=fp16 |
// bf16, as torch.autocast runs a float32 model's products): the operands
// rounded to nearest even in registers, f32 accumulation, the data and
// everything else float32. pb-mma writes the rounding (arith.truncf) in
// the warp-level code, so the CPU computes what the GPU does; K = 24 is a
// step and a half (masked, masked-kn.mlir).
// RUN: pb-tile --precision=fp16 --remarks %t/mm.mlir -o %t/tile16.mlir 2>&1 | FileCheck --check-prefix=TILE %s
// RUN: FileCheck --check-prefix=MARK16 %s < %t/tile16.mlir
// RUN: pb-mma --remarks %t/tile16.mlir -o %t/mma16.mlir 2>&1 | FileCheck --check-prefix=REM16 %s
// RUN: FileCheck %s < %t/mma16.mlir

// The numbers: against the same product with its operands rounded in
// scalar code (ref16.mlir, ref16b.mlir), after pb-mma, after pb-smem and
// through the default pipeline with the option.
// RUN: pb-run --random=1 --output %t/ref16 %t/ref16.mlir
// RUN: pb-run --random=1 --check %t/ref16/D.npy %t/mma16.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem %t/mma16.mlir -o %t/smem16.mlir
// RUN: pb-run --random=1 --check %t/ref16/D.npy %t/smem16.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --precision=fp16 --pipeline=default --check %t/ref16/D.npy %t/mm.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --output %t/refb %t/refb.mlir
// RUN: pb-mma --precision=bf16 --remarks %t/mm.mlir -o %t/mmab.mlir 2>&1 | FileCheck --check-prefix=REMB %s
// RUN: pb-run --random=1 --check %t/refb/D.npy %t/mmab.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem %t/mmab.mlir -o %t/smemb.mlir
// RUN: pb-run --random=1 --pipeline=bf16 --check %t/refb/D.npy %t/mm.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --check %t/refb/D.npy %t/smemb.mlir | FileCheck --check-prefix=NUM %s
// Exact float32 differs from the rounded product by more than the
// default tolerance.
// RUN: not pb-run --random=1 --check %t/ref16/D.npy %t/mm.mlir 2>&1 | FileCheck --check-prefix=DIFF %s

// On the GPU: f32 elements read from the staged tiles one per register
// (no ldmatrix: its 16-bit halves are not f32 data), rounded in pairs by
// cvt.rn, then mma.sync m16n8k16 on f16 or bf16.
// RUN: pb-codegen --arch=sm_80 %t/smem16.mlir | FileCheck --check-prefix=PTX16 %s
// RUN: pb-codegen --arch=sm_80 %t/smemb.mlir | FileCheck --check-prefix=PTXB %s

// An unknown precision is a usage error.
// RUN: not pb-tile --precision=fp8 %t/mm.mlir 2>&1 | FileCheck --check-prefix=BAD %s

// TILE: mm.mlir:4:5: remark: left to pb-mma: a contraction for tensor cores
// MARK16: } {pb.mma = "f16"}
// REM16: remark: on tensor cores: mma.sync m16n8k16 f16 -> f32
// REMB: remark: on tensor cores: mma.sync m16n8k16 bf16 -> f32
// CHECK: affine.for %{{.*}} = 0 to 32 step 16 iter_args(
// CHECK: %[[A:.*]] = vector.transfer_read {{.*}} : memref<40x24xf32>, vector<16x16xf32>
// CHECK: %[[AH:.*]] = arith.truncf %[[A]] : vector<16x16xf32> to vector<16x16xf16>
// CHECK: %[[B:.*]] = vector.transfer_read {{.*}} : memref<24x16xf32>, vector<16x8xf32>
// CHECK: %[[BH:.*]] = arith.truncf %[[B]] : vector<16x8xf32> to vector<16x8xf16>
// CHECK: vector.contract {{.*}} %[[AH]], %[[BH]], {{.*}} : vector<16x16xf16>, vector<16x8xf16> into vector<16x8xf32>
// NUM: output 'D': {{.*}}: ok
// DIFF: output 'D': {{.*}}: mismatch
// PTX16-NOT: ldmatrix
// PTX16: cvt.rn.f16x2.f32
// PTX16: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTXB-NOT: ldmatrix
// PTXB: cvt.rn.bf16x2.f32
// PTXB: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// BAD: error: unknown --precision 'fp8' (expected fp32, tf32, fp16 or bf16)

//--- mm.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_gemm(%A: memref<40x24xf32>, %B: memref<24x16xf32>, %bias: memref<16xf32>, %D: memref<40x16xf32>) attributes {pb.kernel, pb.nodes = ["Gemm_0"]} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (40) {
      affine.parallel (%j) = (0) to (16) {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 24 {
          %a = affine.load %A[%i, %k] : memref<40x24xf32>
          %b = affine.load %B[%k, %j] : memref<24x16xf32>
          %s = affine.load %acc[] : memref<f32>
          %p = arith.mulf %a, %b : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %acc[] : memref<f32>
        }
        %r = affine.load %acc[] : memref<f32>
        %bv = affine.load %bias[%j] : memref<16xf32>
        %y = arith.addf %r, %bv : f32
        %m = arith.maximumf %y, %z : f32
        affine.store %m, %D[%i, %j] : memref<40x16xf32>
      }
    }
    return
  }
  func.func @main(%A: memref<40x24xf32> {pb.name = "A"}, %B: memref<24x16xf32> {pb.name = "B"},
                  %bias: memref<16xf32> {pb.name = "bias"}, %D: memref<40x16xf32> {pb.name = "D", pb.output}) {
    call @k0_gemm(%A, %B, %bias, %D) : (memref<40x24xf32>, memref<24x16xf32>, memref<16xf32>, memref<40x16xf32>) -> ()
    return
  }
}

//--- ref16.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_gemm(%A: memref<40x24xf32>, %B: memref<24x16xf32>, %bias: memref<16xf32>, %D: memref<40x16xf32>) attributes {pb.kernel, pb.nodes = ["Gemm_0"]} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (40) {
      affine.parallel (%j) = (0) to (16) {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 24 {
          %a = affine.load %A[%i, %k] : memref<40x24xf32>
          %b = affine.load %B[%k, %j] : memref<24x16xf32>
          %ah = arith.truncf %a : f32 to f16
          %bh = arith.truncf %b : f32 to f16
          %ar = arith.extf %ah : f16 to f32
          %br = arith.extf %bh : f16 to f32
          %s = affine.load %acc[] : memref<f32>
          %p = arith.mulf %ar, %br : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %acc[] : memref<f32>
        }
        %r = affine.load %acc[] : memref<f32>
        %bv = affine.load %bias[%j] : memref<16xf32>
        %y = arith.addf %r, %bv : f32
        %m = arith.maximumf %y, %z : f32
        affine.store %m, %D[%i, %j] : memref<40x16xf32>
      }
    }
    return
  }
  func.func @main(%A: memref<40x24xf32> {pb.name = "A"}, %B: memref<24x16xf32> {pb.name = "B"},
                  %bias: memref<16xf32> {pb.name = "bias"}, %D: memref<40x16xf32> {pb.name = "D", pb.output}) {
    call @k0_gemm(%A, %B, %bias, %D) : (memref<40x24xf32>, memref<24x16xf32>, memref<16xf32>, memref<40x16xf32>) -> ()
    return
  }
}

//--- refb.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_gemm(%A: memref<40x24xf32>, %B: memref<24x16xf32>, %bias: memref<16xf32>, %D: memref<40x16xf32>) attributes {pb.kernel, pb.nodes = ["Gemm_0"]} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (40) {
      affine.parallel (%j) = (0) to (16) {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 24 {
          %a = affine.load %A[%i, %k] : memref<40x24xf32>
          %b = affine.load %B[%k, %j] : memref<24x16xf32>
          %ah = arith.truncf %a : f32 to bf16
          %bh = arith.truncf %b : f32 to bf16
          %ar = arith.extf %ah : bf16 to f32
          %br = arith.extf %bh : bf16 to f32
          %s = affine.load %acc[] : memref<f32>
          %p = arith.mulf %ar, %br : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %acc[] : memref<f32>
        }
        %r = affine.load %acc[] : memref<f32>
        %bv = affine.load %bias[%j] : memref<16xf32>
        %y = arith.addf %r, %bv : f32
        %m = arith.maximumf %y, %z : f32
        affine.store %m, %D[%i, %j] : memref<40x16xf32>
      }
    }
    return
  }
  func.func @main(%A: memref<40x24xf32> {pb.name = "A"}, %B: memref<24x16xf32> {pb.name = "B"},
                  %bias: memref<16xf32> {pb.name = "bias"}, %D: memref<40x16xf32> {pb.name = "D", pb.output}) {
    call @k0_gemm(%A, %B, %bias, %D) : (memref<40x24xf32>, memref<24x16xf32>, memref<16xf32>, memref<40x16xf32>) -> ()
    return
  }
}
