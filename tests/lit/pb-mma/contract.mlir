// RUN: split-file %s %t
// RUN: pb-tile --remarks %t/mm.mlir -o %t/tile.mlir 2>%t/tile.rem
// RUN: FileCheck --check-prefix=TILE %s < %t/tile.rem
// RUN: FileCheck --check-prefix=MARK %s < %t/tile.mlir
// pb-tile's report predicts the contractions' time on tensor cores, with
// the tiles pb-mma will choose.
// RUN: pb-tile --report=%t/rep.json %t/mm.mlir -o /dev/null
// RUN: FileCheck --check-prefix=REP %s < %t/rep.json
// REP: "mapping": "mma"
// REP: "mma": [
// REP-NEXT: 16,
// REP-NEXT: 16,
// REP-NEXT: 16,
// REP-NEXT: 8
// REP: "predicted_s":
// RUN: pb-mma --remarks %t/tile.mlir -o %t/mma.mlir 2>%t/mma.rem
// RUN: FileCheck %s < %t/mma.mlir
// RUN: FileCheck --check-prefix=REM %s < %t/mma.rem

// The numbers: the warp tiles on the CPU (upstream's vector lowering)
// against the fuse-level nests, and --no-mma (the same contractions tiled
// for CUDA cores by pb-tile) against them too.
// RUN: pb-run --random=1 --output %t/ref %t/mm.mlir
// RUN: pb-run --random=1 --check %t/ref/C.npy --check %t/ref/Z.npy --check %t/ref/S.npy --check %t/ref/T.npy %t/mma.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-mma --no-mma --remarks %t/tile.mlir 2>%t/no.rem | pb-run --random=1 --check %t/ref/C.npy --check %t/ref/Z.npy --check %t/ref/S.npy --check %t/ref/T.npy - | FileCheck --check-prefix=NUM %s
// RUN: FileCheck --check-prefix=NOMMA %s < %t/no.rem
// RUN: pb-mma --no-mma %t/tile.mlir | FileCheck --check-prefix=CUDA %s
// pb-tile --no-mma tiles them itself.
// RUN: pb-tile --no-mma %t/mm.mlir | FileCheck --check-prefix=CUDA %s

// --sizes sets a kernel's tiles, as pb-tile's does for CUDA cores.
// RUN: pb-mma --remarks --sizes='{ kernel[0] -> mma[32, 16, 16, 8] }' %t/tile.mlir -o %t/sz.mlir 2>&1 | FileCheck --check-prefix=SZ %s
// RUN: pb-run --random=1 --check %t/ref/C.npy --check %t/ref/Z.npy --check %t/ref/S.npy --check %t/ref/T.npy %t/sz.mlir | FileCheck --check-prefix=NUM %s
// RUN: not pb-mma --sizes='{ kernel[1] -> mma[16, 8, 16, 4] }' %t/tile.mlir -o %t/bad.mlir 2>&1 | FileCheck --check-prefix=SZERR %s
// RUN: not test -e %t/bad.mlir
// SZ: remark: on tensor cores: mma.sync m16n8k16 f16 -> f32, block tile 32x16, warp tile 16x8 (4 warps)
// SZERR: error: --sizes: kernel[1] -> mma[BM, BN, WM, WN(, BH)] takes 4 sizes, or 5 for a convolution: warp tiles of multiples of 16x8 that divide the block tile, BH image rows a block that divide the image's, at most 32 warps (C is 16x24)

// On the GPU side every contraction is mma.sync m16n8k16 with f32
// accumulation: f16 through nvgpu, bf16 through NVVM's op.
// RUN: pb-codegen --arch=sm_80 %t/mma.mlir | FileCheck --check-prefix=PTX %s
// RUN: pb-codegen --arch=sm_90 %t/mma.mlir | FileCheck --check-prefix=PTX %s

// TILE: mm.mlir:5:5: remark: left to pb-mma: a contraction for tensor cores
// TILE: mm.mlir:31:5: remark: left to pb-mma: a contraction for tensor cores
// TILE: mm.mlir:57:5: remark: left to pb-mma: a contraction for tensor cores
// MARK: affine.parallel (%{{.*}}) = (0) to (32) {
// MARK: } {pb.mma = "f16"}

// REM: remark: on tensor cores: mma.sync m16n8k16 f16 -> f32, block tile 16x16, warp tile 16x8 (2 warps)
// REM: remark: on tensor cores: mma.sync m16n8k16 bf16 -> f32, block tile 16x8, warp tile 16x8 (1 warps)
// REM: remark: on tensor cores: mma.sync m16n8k16 f16 -> f32
// NOMMA: remark: on CUDA cores: --no-mma

// Gemm: C = relu(A x B + bias), the epilogue on the 16x8 fragment.
// CHECK-LABEL: func.func private @k0_gemm
// CHECK: affine.parallel (%[[I:.*]], %[[J:.*]]) = (0, 0) to (32, 16) step (16, 16) {
// CHECK: affine.parallel (%[[WM:.*]], %[[WN:.*]]) = (0, 0) to (16, 16) step (16, 8) {
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : vector<16x8xf32>
// CHECK: %[[R:.*]] = affine.for %[[K:.*]] = 0 to 64 step 16 iter_args(%[[ACC:.*]] = %[[Z]]) -> (vector<16x8xf32>) {
// CHECK: %[[A:.*]] = vector.transfer_read %arg0[%{{.*}}, %[[K]]], {{.*}} : memref<32x64xf16>, vector<16x16xf16>
// CHECK: %[[B:.*]] = vector.transfer_read %arg1[%[[K]], %{{.*}}], {{.*}} : memref<64x16xf16>, vector<16x8xf16>
// CHECK: %[[D:.*]] = vector.contract {{.*}} %[[A]], %[[B]], %[[ACC]] : vector<16x16xf16>, vector<16x8xf16> into vector<16x8xf32>
// CHECK: affine.yield %[[D]] : vector<16x8xf32>
// CHECK: arith.truncf %[[R]] : vector<16x8xf32> to vector<16x8xf16>
//      The bias: a read broadcast along the rows.
// CHECK: vector.transfer_read %arg2[%{{.*}}], {{.*}} permutation_map = #{{.*}}} : memref<16xf16>, vector<16x8xf16>
// CHECK: arith.addf {{.*}} : vector<16x8xf16>
// CHECK: arith.maximumf {{.*}} : vector<16x8xf16>
// CHECK: vector.transfer_write {{.*}}, %arg3[{{.*}}] {in_bounds = [true, true]} : vector<16x8xf16>, memref<32x16xf16>
// CHECK: } {pb.map = "warp"}
// CHECK: } {pb.map = "block"}

// Batched, B transposed (k innermost): a batch dimension in the block
// loop, B read through a transposing permutation map.
// CHECK-LABEL: func.func private @k1_bmm
// CHECK: affine.parallel (%[[BB:.*]], %{{.*}}, %{{.*}}) = (0, 0, 0) to (2, 16, 24) step (1, 16, 8) {
// CHECK: vector.transfer_read %arg0[%[[BB]], %{{.*}}, %{{.*}}], {{.*}} : memref<2x16x32xbf16>, vector<16x16xbf16>
// CHECK: vector.transfer_read %arg1[%[[BB]], %{{.*}}, %{{.*}}], {{.*}} permutation_map = {{.*}} : memref<2x24x32xbf16>, vector<16x8xbf16>
// CHECK: vector.transfer_write {{.*}} : vector<16x8xf32>, memref<2x16x24xf32>

// CUDA-NOT: vector.contract
// CUDA: pb.map = "thread"

// PTX-COUNT-2: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// NUM: output 'C': {{.*}}: ok
// NUM: output 'Z': {{.*}}: ok
// NUM: output 'S': {{.*}}: ok
// NUM: output 'T': {{.*}}: ok

// The temporary and the store read back are carried as fragments.
// CHECK-LABEL: func.func private @k2_tmp
// CHECK-NOT: memref.alloca
// CHECK: vector.contract
// CHECK: vector.transfer_write {{.*}} : vector<16x8xf16>, memref<16x16xf16>
// CHECK: vector.transfer_read %arg3[
// CHECK: vector.transfer_write {{.*}} : vector<16x8xf32>, memref<16x16xf32>

//--- mm.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_gemm(%A: memref<32x64xf16>, %B: memref<64x16xf16>, %bias: memref<16xf16>, %C: memref<32x16xf16>) attributes {pb.kernel, pb.nodes = ["Gemm_0"]} {
    %z = arith.constant 0.000000e+00 : f32
    %h = arith.constant 0.000000e+00 : f16
    affine.parallel (%i) = (0) to (32) {
      affine.parallel (%j) = (0) to (16) {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 64 {
          %a = affine.load %A[%i, %k] : memref<32x64xf16>
          %b = affine.load %B[%k, %j] : memref<64x16xf16>
          %s = affine.load %acc[] : memref<f32>
          %ae = arith.extf %a : f16 to f32
          %be = arith.extf %b : f16 to f32
          %p = arith.mulf %ae, %be : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %acc[] : memref<f32>
        }
        %r = affine.load %acc[] : memref<f32>
        %rh = arith.truncf %r : f32 to f16
        %bv = affine.load %bias[%j] : memref<16xf16>
        %y = arith.addf %rh, %bv : f16
        %m = arith.maximumf %y, %h : f16
        affine.store %m, %C[%i, %j] : memref<32x16xf16>
      }
    }
    return
  }
  func.func private @k1_bmm(%A: memref<2x16x32xbf16>, %B: memref<2x24x32xbf16>, %C: memref<2x16x24xf32>) attributes {pb.kernel, pb.nodes = ["MatMul_1"]} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%b) = (0) to (2) {
      affine.parallel (%i) = (0) to (16) {
        affine.parallel (%j) = (0) to (24) {
          %acc = memref.alloca() : memref<f32>
          affine.store %z, %acc[] : memref<f32>
          affine.for %k = 0 to 32 {
            %a = affine.load %A[%b, %i, %k] : memref<2x16x32xbf16>
            %v = affine.load %B[%b, %j, %k] : memref<2x24x32xbf16>
            %s = affine.load %acc[] : memref<f32>
            %ae = arith.extf %a : bf16 to f32
            %be = arith.extf %v : bf16 to f32
            %p = arith.mulf %ae, %be : f32
            %t = arith.addf %p, %s : f32
            affine.store %t, %acc[] : memref<f32>
          }
          %r = affine.load %acc[] : memref<f32>
          affine.store %r, %C[%b, %i, %j] : memref<2x16x24xf32>
        }
      }
    }
    return
  }
  // The form pb-fuse gives a MatMul fused with its Add and a Cast: the
  // truncated product through a scalar temporary, a store read back.
  func.func private @k2_tmp(%A: memref<16x32xf16>, %B: memref<32x16xf16>, %bias: memref<16xf16>, %C: memref<16x16xf16>, %D: memref<16x16xf32>) attributes {pb.kernel, pb.nodes = ["MatMul_2"]} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (16) {
      affine.parallel (%j) = (0) to (16) {
        %tmp = memref.alloca() : memref<1xf16>
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 32 {
          %a = affine.load %A[%i, %k] : memref<16x32xf16>
          %b = affine.load %B[%k, %j] : memref<32x16xf16>
          %s = affine.load %acc[] : memref<f32>
          %ae = arith.extf %a : f16 to f32
          %be = arith.extf %b : f16 to f32
          %p = arith.mulf %ae, %be : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %acc[] : memref<f32>
        }
        %r = affine.load %acc[] : memref<f32>
        %rh = arith.truncf %r : f32 to f16
        affine.store %rh, %tmp[0] : memref<1xf16>
        %bv = affine.load %bias[%j] : memref<16xf16>
        %tv = affine.load %tmp[0] : memref<1xf16>
        %y = arith.addf %bv, %tv : f16
        affine.store %y, %C[%i, %j] : memref<16x16xf16>
        %c = affine.load %C[%i, %j] : memref<16x16xf16>
        %ce = arith.extf %c : f16 to f32
        affine.store %ce, %D[%i, %j] : memref<16x16xf32>
      }
    }
    return
  }
  func.func @main(%A: memref<32x64xf16> {pb.name = "A"}, %B: memref<64x16xf16> {pb.name = "B"}, %bias: memref<16xf16> {pb.name = "bias"}, %C: memref<32x16xf16> {pb.name = "C", pb.output}, %X: memref<2x16x32xbf16> {pb.name = "X"}, %Y: memref<2x24x32xbf16> {pb.name = "Y"}, %Z: memref<2x16x24xf32> {pb.name = "Z", pb.output}, %P: memref<16x32xf16> {pb.name = "P"}, %Q: memref<32x16xf16> {pb.name = "Q"}, %R: memref<16xf16> {pb.name = "R"}, %S: memref<16x16xf16> {pb.name = "S", pb.output}, %T: memref<16x16xf32> {pb.name = "T", pb.output}) {
    call @k0_gemm(%A, %B, %bias, %C) : (memref<32x64xf16>, memref<64x16xf16>, memref<16xf16>, memref<32x16xf16>) -> ()
    call @k1_bmm(%X, %Y, %Z) : (memref<2x16x32xbf16>, memref<2x24x32xbf16>, memref<2x16x24xf32>) -> ()
    call @k2_tmp(%P, %Q, %R, %S, %T) : (memref<16x32xf16>, memref<32x16xf16>, memref<16xf16>, memref<16x16xf16>, memref<16x16xf32>) -> ()
    return
  }
}
