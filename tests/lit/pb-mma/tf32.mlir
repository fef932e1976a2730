// RUN: split-file %s %t
// float32 contractions stay exact on CUDA cores unless --precision=tf32.
// RUN: pb-tile --remarks %t/mm.mlir -o /dev/null 2>&1 | FileCheck --check-prefix=EXACT %s
// RUN: pb-tile --precision=tf32 --remarks %t/mm.mlir -o %t/tile.mlir 2>&1 | FileCheck --check-prefix=TILE %s
// RUN: FileCheck --check-prefix=MARK %s < %t/tile.mlir
// RUN: pb-mma --remarks %t/tile.mlir -o %t/mma.mlir 2>&1 | FileCheck --check-prefix=REM %s
// RUN: FileCheck %s < %t/mma.mlir

// The numbers: against the same contractions with their operands cut to
// tf32 in scalar code (ref.mlir), at pb-run's default float32 tolerance,
// after pb-mma, after pb-smem, and through the default pipeline.
// RUN: pb-run --random=1 --output %t/ref %t/ref.mlir
// RUN: pb-run --random=1 --check %t/ref/C.npy --check %t/ref/D.npy %t/mma.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --remarks %t/mma.mlir -o %t/smem.mlir 2>&1 | FileCheck --check-prefix=SMEM %s
// RUN: pb-run --random=1 --check %t/ref/C.npy --check %t/ref/D.npy %t/smem.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --precision=tf32 --pipeline=default --check %t/ref/C.npy --check %t/ref/D.npy %t/mm.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --pipeline=tf32 --check %t/ref/C.npy --check %t/ref/D.npy %t/mm.mlir | FileCheck --check-prefix=NUM %s
// Exact float32 differs from tf32 by more than the default tolerance.
// RUN: not pb-run --random=1 --check %t/ref/C.npy %t/mm.mlir 2>&1 | FileCheck --check-prefix=DIFF %s

// On the GPU: mma.sync m16n8k8 on the f32 bits (the cut is the tensor
// core's own), A from ldmatrix; B [n][k] from ldmatrix too, B [k][n]
// one element per lane.
// RUN: pb-codegen --arch=sm_80 %t/smem.mlir -o %t/k.ptx
// RUN: FileCheck --check-prefix=PTX %s < %t/k.ptx


// EXACT: mm.mlir:4:5: remark: not for tensor cores: f32 operands, computed exactly (--precision=tf32, fp16 or bf16 runs them on tensor cores)
// TILE: mm.mlir:4:5: remark: left to pb-mma: a contraction for tensor cores
// TILE: mm.mlir:21:5: remark: left to pb-mma: a contraction for tensor cores
// MARK: } {pb.mma = "tf32"}
// REM: remark: on tensor cores: mma.sync m16n8k8 tf32 -> f32
// REM: remark: on tensor cores: mma.sync m16n8k8 tf32 -> f32
// SMEM: remark: warp tiles staged
// SMEM: remark: warp tiles staged
// NUM: output 'C': {{.*}}: ok
// NUM: output 'D': {{.*}}: ok
// DIFF: output 'C': {{.*}}: mismatch

// The float32 MatMul accumulates in place (pb-fuse's form): fragments
// of 16x8 by k steps of 8, each operand's low mantissa bits cut, and one
// store of C at the end.
// CHECK-LABEL: func.func private @k0_matmul
// CHECK: affine.for %{{.*}} = 0 to 32 step 8 iter_args(%{{.*}} = %{{.*}}) -> (vector<16x8xf32>
// CHECK: %[[A:.*]] = vector.transfer_read {{.*}} : memref<48x32xf32>, vector<16x8xf32>
// CHECK: %[[AI:.*]] = arith.bitcast %[[A]] : vector<16x8xf32> to vector<16x8xi32>
// CHECK: %[[AC:.*]] = arith.andi %[[AI]], %{{.*}} : vector<16x8xi32>
// CHECK: arith.bitcast %[[AC]] : vector<16x8xi32> to vector<16x8xf32>
// CHECK: vector.transfer_read {{.*}} : memref<24x32xf32>, vector<8x8xf32>
// CHECK: vector.contract {{.*}} : vector<16x8xf32>, vector<8x8xf32> into vector<16x8xf32>
// CHECK-NOT: affine.store
// CHECK: vector.transfer_write {{.*}} : vector<16x8xf32>, memref<48x24xf32>
// CHECK-LABEL: func.func private @k1_gemm
// CHECK: vector.contract
// CHECK: arith.maximumf
// CHECK: vector.transfer_write {{.*}} {in_bounds = [false, true]} : vector<16x8xf32>, memref<40x16xf32>

// PTX-NOT: and.b32 {{.*}}-8192
// PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// PTX: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32

//--- mm.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_matmul(%C: memref<48x24xf32>, %A: memref<48x32xf32>, %B: memref<24x32xf32>) attributes {pb.kernel, pb.nodes = ["MatMul_0"]} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (48) {
      affine.parallel (%j) = (0) to (24) {
        affine.store %z, %C[%i, %j] : memref<48x24xf32>
        affine.for %k = 0 to 32 {
          %a = affine.load %A[%i, %k] : memref<48x32xf32>
          %b = affine.load %B[%j, %k] : memref<24x32xf32>
          %s = affine.load %C[%i, %j] : memref<48x24xf32>
          %p = arith.mulf %a, %b : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %C[%i, %j] : memref<48x24xf32>
        }
      }
    }
    return
  }
  func.func private @k1_gemm(%A: memref<40x24xf32>, %B: memref<24x16xf32>, %bias: memref<16xf32>, %D: memref<40x16xf32>) attributes {pb.kernel, pb.nodes = ["Gemm_1"]} {
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
  func.func @main(%A: memref<48x32xf32> {pb.name = "A"}, %B: memref<24x32xf32> {pb.name = "B"},
                  %A2: memref<40x24xf32> {pb.name = "A2"}, %B2: memref<24x16xf32> {pb.name = "B2"},
                  %bias: memref<16xf32> {pb.name = "bias"},
                  %C: memref<48x24xf32> {pb.name = "C", pb.output}, %D: memref<40x16xf32> {pb.name = "D", pb.output}) {
    call @k0_matmul(%C, %A, %B) : (memref<48x24xf32>, memref<48x32xf32>, memref<24x32xf32>) -> ()
    call @k1_gemm(%A2, %B2, %bias, %D) : (memref<40x24xf32>, memref<24x16xf32>, memref<16xf32>, memref<40x16xf32>) -> ()
    return
  }
}

//--- ref.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @cut(%x: f32) -> f32 {
    %m = arith.constant -8192 : i32
    %i = arith.bitcast %x : f32 to i32
    %c = arith.andi %i, %m : i32
    %r = arith.bitcast %c : i32 to f32
    return %r : f32
  }
  func.func private @k0_matmul(%C: memref<48x24xf32>, %A: memref<48x32xf32>, %B: memref<24x32xf32>) attributes {pb.kernel} {
    %z = arith.constant 0.000000e+00 : f32
    affine.for %i = 0 to 48 {
      affine.for %j = 0 to 24 {
        affine.store %z, %C[%i, %j] : memref<48x24xf32>
        affine.for %k = 0 to 32 {
          %a = affine.load %A[%i, %k] : memref<48x32xf32>
          %b = affine.load %B[%j, %k] : memref<24x32xf32>
          %ac = func.call @cut(%a) : (f32) -> f32
          %bc = func.call @cut(%b) : (f32) -> f32
          %s = affine.load %C[%i, %j] : memref<48x24xf32>
          %p = arith.mulf %ac, %bc : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %C[%i, %j] : memref<48x24xf32>
        }
      }
    }
    return
  }
  func.func private @k1_gemm(%A: memref<40x24xf32>, %B: memref<24x16xf32>, %bias: memref<16xf32>, %D: memref<40x16xf32>) attributes {pb.kernel} {
    %z = arith.constant 0.000000e+00 : f32
    affine.for %i = 0 to 40 {
      affine.for %j = 0 to 16 {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 24 {
          %a = affine.load %A[%i, %k] : memref<40x24xf32>
          %b = affine.load %B[%k, %j] : memref<24x16xf32>
          %ac = func.call @cut(%a) : (f32) -> f32
          %bc = func.call @cut(%b) : (f32) -> f32
          %s = affine.load %acc[] : memref<f32>
          %p = arith.mulf %ac, %bc : f32
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
  func.func @main(%A: memref<48x32xf32> {pb.name = "A"}, %B: memref<24x32xf32> {pb.name = "B"},
                  %A2: memref<40x24xf32> {pb.name = "A2"}, %B2: memref<24x16xf32> {pb.name = "B2"},
                  %bias: memref<16xf32> {pb.name = "bias"},
                  %C: memref<48x24xf32> {pb.name = "C", pb.output}, %D: memref<40x16xf32> {pb.name = "D", pb.output}) {
    call @k0_matmul(%C, %A, %B) : (memref<48x24xf32>, memref<48x32xf32>, memref<24x32xf32>) -> ()
    call @k1_gemm(%A2, %B2, %bias, %D) : (memref<40x24xf32>, memref<24x16xf32>, memref<16xf32>, memref<40x16xf32>) -> ()
    return
  }
}
