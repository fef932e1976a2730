// RUN: split-file %s %t
// K and C's columns that the mma steps and the block tiles do not divide:
// K = 24 is a step and a half of m16n8k16, 12 of tf32's m16n8k8; C has 12
// and 20 columns, so the last block's B fragments and epilogue overrun
// them. The last k step reads zeros past K (in_bounds false along k, as
// both operands end at K), the columns past C's are masked like its rows
// (masked.mlir); pb-smem's copies fill both with zeros.
//
// f16, B stored [k][n] (its rows of 12 halves are not whole 16-byte
// copies: B stays in global memory, read per lane under guards).
// RUN: pb-mma --remarks %t/kn.mlir -o %t/kn.mma 2>&1 | FileCheck --check-prefix=REM %s
// RUN: FileCheck %s < %t/kn.mma
// RUN: pb-run --random=1 --output %t/ref %t/kn.mlir
// RUN: pb-run --random=1 --check %t/ref/C.npy %t/kn.mma | FileCheck --check-prefix=NUM %s
// RUN: pb-smem %t/kn.mma -o %t/kn.smem
// RUN: FileCheck --check-prefix=SMEM %s < %t/kn.smem
// RUN: pb-run --random=1 --check %t/ref/C.npy %t/kn.smem | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=1 %t/kn.mma | pb-run --random=1 --check %t/ref/C.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-mma --sizes='{ kernel[0] -> mma[32, 8, 16, 8] }' %t/kn.mlir | pb-smem | pb-run --random=1 --check %t/ref/C.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-codegen --arch=sm_80 %t/kn.smem | FileCheck --check-prefix=PTX %s
//
// f16, B stored [n][k] (x @ w.T): both operands staged, B's copies
// guarded along its rows (C's columns) and along k.
// RUN: pb-run --random=1 --output %t/reft %t/nk.mlir
// RUN: pb-mma %t/nk.mlir | pb-smem --remarks -o %t/nk.smem 2>&1 | FileCheck --check-prefix=STAGED %s
// RUN: pb-run --random=1 --check %t/reft/C.npy %t/nk.smem | FileCheck --check-prefix=NUM %s
// RUN: pb-codegen --arch=sm_80 %t/nk.smem | FileCheck --check-prefix=PTX %s
//
// tf32: K = 12, C's 20 columns; against the exact f32 product, within
// tf32's truncation (docs/pb-mma.md).
// RUN: pb-run --random=1 --output %t/reff %t/tf.mlir
// RUN: pb-mma --precision=tf32 --remarks %t/tf.mlir -o %t/tf.mma 2>&1 | FileCheck --check-prefix=TF32 %s
// RUN: pb-run --random=1 --atol 1e-2 --check %t/reff/C.npy %t/tf.mma | FileCheck --check-prefix=NUM %s
// RUN: pb-smem %t/tf.mma | pb-run --random=1 --atol 1e-2 --check %t/reff/C.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-smem %t/tf.mma | pb-codegen --arch=sm_80 | FileCheck --check-prefix=PTX %s

// REM: remark: on tensor cores: mma.sync m16n8k16 f16 -> f32, block tile 16x16, warp tile 16x8 (2 warps)
// CHECK: affine.parallel (%{{.*}}, %{{.*}}) = (0, 0) to (48, 16) step (16, 16) {
// CHECK: affine.for %{{.*}} = 0 to 32 step 16
// CHECK: vector.transfer_read %arg0[{{.*}} : memref<40x24xf16>, vector<16x16xf16>
// CHECK: vector.transfer_read %arg1[{{.*}} : memref<24x12xf16>, vector<16x8xf16>
// CHECK: vector.transfer_read %arg2[{{.*}} {in_bounds = [true, false], {{.*}} : memref<12xf16>, vector<16x8xf16>
// CHECK: vector.transfer_write {{.*}} : vector<16x8xf16>, memref<40x12xf16>
// SMEM: affine_set<(d0, d1) : (-d0 + 39 >= 0, -d1 + 23 >= 0)>
// SMEM: affine.vector_load %arg{{.*}} : memref<40x24xf16>, vector<8xf16>
// SMEM: } else {
// SMEM: arith.constant dense<0.000000e+00> : vector<8xf16>
// STAGED: remark: warp tiles staged: 2 operands
// TF32: remark: on tensor cores: mma.sync m16n8k8 tf32 -> f32, block tile 16x8, warp tile 16x8 (1 warps)
// PTX: mma.sync.aligned
// PTX: setp
// NUM: output 'C': {{.*}}: ok

//--- kn.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_mm(%A: memref<40x24xf16>, %B: memref<24x12xf16>, %bias: memref<12xf16>, %C: memref<40x12xf16>) attributes {pb.kernel, pb.nodes = ["MatMul_0"]} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (40) {
      affine.parallel (%j) = (0) to (12) {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 24 {
          %a = affine.load %A[%i, %k] : memref<40x24xf16>
          %b = affine.load %B[%k, %j] : memref<24x12xf16>
          %s = affine.load %acc[] : memref<f32>
          %ae = arith.extf %a : f16 to f32
          %be = arith.extf %b : f16 to f32
          %p = arith.mulf %ae, %be : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %acc[] : memref<f32>
        }
        %r = affine.load %acc[] : memref<f32>
        %bb = affine.load %bias[%j] : memref<12xf16>
        %be2 = arith.extf %bb : f16 to f32
        %r2 = arith.addf %r, %be2 : f32
        %rh = arith.truncf %r2 : f32 to f16
        affine.store %rh, %C[%i, %j] : memref<40x12xf16>
      }
    }
    return
  }
  func.func @main(%A: memref<40x24xf16> {pb.name = "A"}, %B: memref<24x12xf16> {pb.name = "B"}, %bias: memref<12xf16> {pb.name = "bias"}, %C: memref<40x12xf16> {pb.name = "C", pb.output}) {
    call @k0_mm(%A, %B, %bias, %C) : (memref<40x24xf16>, memref<24x12xf16>, memref<12xf16>, memref<40x12xf16>) -> ()
    return
  }
}

//--- nk.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_mm(%A: memref<40x24xf16>, %B: memref<12x24xf16>, %bias: memref<12xf16>, %C: memref<40x12xf16>) attributes {pb.kernel, pb.nodes = ["MatMul_0"]} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (40) {
      affine.parallel (%j) = (0) to (12) {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 24 {
          %a = affine.load %A[%i, %k] : memref<40x24xf16>
          %b = affine.load %B[%j, %k] : memref<12x24xf16>
          %s = affine.load %acc[] : memref<f32>
          %ae = arith.extf %a : f16 to f32
          %be = arith.extf %b : f16 to f32
          %p = arith.mulf %ae, %be : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %acc[] : memref<f32>
        }
        %r = affine.load %acc[] : memref<f32>
        %bb = affine.load %bias[%j] : memref<12xf16>
        %be2 = arith.extf %bb : f16 to f32
        %r2 = arith.addf %r, %be2 : f32
        %rh = arith.truncf %r2 : f32 to f16
        affine.store %rh, %C[%i, %j] : memref<40x12xf16>
      }
    }
    return
  }
  func.func @main(%A: memref<40x24xf16> {pb.name = "A"}, %B: memref<12x24xf16> {pb.name = "B"}, %bias: memref<12xf16> {pb.name = "bias"}, %C: memref<40x12xf16> {pb.name = "C", pb.output}) {
    call @k0_mm(%A, %B, %bias, %C) : (memref<40x24xf16>, memref<12x24xf16>, memref<12xf16>, memref<40x12xf16>) -> ()
    return
  }
}

//--- tf.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_mm(%A: memref<40x12xf32>, %B: memref<12x20xf32>, %bias: memref<20xf32>, %C: memref<40x20xf32>) attributes {pb.kernel, pb.nodes = ["MatMul_0"]} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (40) {
      affine.parallel (%j) = (0) to (20) {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 12 {
          %a = affine.load %A[%i, %k] : memref<40x12xf32>
          %b = affine.load %B[%k, %j] : memref<12x20xf32>
          %s = affine.load %acc[] : memref<f32>
                              %p = arith.mulf %a, %b : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %acc[] : memref<f32>
        }
        %r = affine.load %acc[] : memref<f32>
        %bb = affine.load %bias[%j] : memref<20xf32>
                %r2 = arith.addf %r, %bb : f32
                affine.store %r2, %C[%i, %j] : memref<40x20xf32>
      }
    }
    return
  }
  func.func @main(%A: memref<40x12xf32> {pb.name = "A"}, %B: memref<12x20xf32> {pb.name = "B"}, %bias: memref<20xf32> {pb.name = "bias"}, %C: memref<40x20xf32> {pb.name = "C", pb.output}) {
    call @k0_mm(%A, %B, %bias, %C) : (memref<40x12xf32>, memref<12x20xf32>, memref<20xf32>, memref<40x20xf32>) -> ()
    return
  }
}
