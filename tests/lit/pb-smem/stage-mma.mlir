// RUN: split-file %s %t
// RUN: pb-mma --target-file=%S/Inputs/one-sm.json %t/mm.mlir -o %t/mma.mlir
// RUN: pb-smem --remarks --target-file=%S/Inputs/one-sm.json %t/mma.mlir -o %t/s.mlir 2>%t/rem
// RUN: FileCheck %s < %t/s.mlir
// RUN: FileCheck --check-prefix=REM %s < %t/rem
// RUN: pb-smem --stages=1 --target-file=%S/Inputs/one-sm.json %t/mma.mlir | FileCheck --check-prefix=S1 %s

// The numbers: the staged warp tiles against the fuse-level nest, with
// each ring depth.
// RUN: pb-run --random=1 --output %t/ref %t/mm.mlir
// RUN: pb-run --random=1 --check %t/ref/C.npy %t/s.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=1 --target-file=%S/Inputs/one-sm.json %t/mma.mlir | pb-run --random=1 --check %t/ref/C.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=2 --k-tile=16 --target-file=%S/Inputs/one-sm.json %t/mma.mlir | pb-run --random=1 --check %t/ref/C.npy - | FileCheck --check-prefix=NUM %s

// On the GPU: the threads' 16-byte asynchronous copies, each warp its
// share (no loop over the warps left), ldmatrix (x4 for A, x2 transposed
// for B) from the rings, mma.sync.
// RUN: pb-codegen --arch=sm_80 %t/s.mlir | FileCheck --check-prefix=PTX %s
// RUN: pb-codegen --arch=sm_90 %t/s.mlir | FileCheck --check-prefix=PTX %s

// C = A x B + bias, 128x128x64 in f16 on one SM: two blocks of 128x64,
// each of 2x2 warps with a 64x32 warp tile of 4x4 fragments. The block's
// ring holds its 128 rows of A and 64 columns of B per k-tile, rows padded
// by 8 elements. Its four warps copy them together: the loop over the
// warps is pb.share, so on the GPU warp w takes round w of 32 chunks of
// every four; each warp reads its own rows and columns, at its origin.
// REM: remark: warp tiles staged: 2 operands, 3 stages of k-tile 32, 44544 bytes of shared memory for 4 warps

// CHECK: #[[$LAST:map[0-9]*]] = affine_map<(d0) -> (3, (-d0) floordiv 32 + 2)>
// CHECK-LABEL: func.func private @k0_gemm
// CHECK-DAG: %[[RB:.*]] = memref.alloc() : memref<3x32x72xf16, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[RA:.*]] = memref.alloc() : memref<3x128x40xf16, #gpu.address_space<workgroup>>
// CHECK: affine.parallel (%[[WM:.*]], %[[WN:.*]]) = (0, 0) to (128, 64) step (64, 32) {
//      The prologue: k-tiles 0 and 1 into slots 0 and 1, 16-byte copies.
// CHECK: affine.for %{{.*}} = 0 to 4 {
// CHECK-NEXT: affine.parallel (%{{.*}}) = (0) to (32) {
// CHECK: affine.vector_load %arg0[{{.*}}] : memref<128x64xf16>, vector<8xf16>
// CHECK: affine.vector_store %{{.*}}, %[[RA]][{{.*}}] : memref<3x128x40xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: } {pb.async, pb.map = "thread"}
// CHECK-NEXT: } {pb.share}
// CHECK: affine.vector_store %{{.*}}, %[[RB]][{{.*}}] : memref<3x32x72xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: } {pb.share}
//      Rounds of 3 k-tiles around the slots: the slot loop's counter is
//      the slot the k-tile reads; 2 k-tiles, so one round of 2 slots.
// CHECK: affine.for %[[K0:.*]] = 0 to 64 step 96 iter_args({{.*}}) -> ({{.*}}) {
// CHECK-NEXT: affine.for %[[SL:.*]] = 0 to min #[[$LAST]](%[[K0]]) iter_args({{.*}}) -> ({{.*}}) {
// CHECK: gpu.barrier {pb.wait = 2 : i64}
// CHECK: } {pb.share}
// CHECK: } {pb.share}
// CHECK: affine.for %{{.*}} = 0 to 32 step 16 iter_args(
// CHECK: %[[O:.*]] = affine.apply #{{.*}}(%[[WM]])
// CHECK: vector.transfer_read %[[RA]][%[[SL]], %[[O]], %{{.*}}], {{.*}} : memref<3x128x40xf16, #gpu.address_space<workgroup>>, vector<16x16xf16>
// CHECK: vector.transfer_read %[[RB]][%[[SL]], {{.*}} : memref<3x32x72xf16, #gpu.address_space<workgroup>>, vector<16x8xf16>
// CHECK: vector.contract
// CHECK: gpu.barrier {pb.wait = 0 : i64}
// CHECK: vector.transfer_write
// CHECK: } {pb.map = "warp"}
// CHECK: memref.dealloc
// CHECK: } {pb.map = "block"}

// S1: memref<1x
// S1: gpu.barrier
// S1-NOT: pb.async
// S1: gpu.barrier

// PTX: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16
// PTX: cp.async.commit_group
// PTX: cp.async.wait_group
// PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// NUM: output 'C': {{.*}}: ok

//--- mm.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_gemm(%A: memref<128x64xf16>, %B: memref<64x128xf16>, %bias: memref<128xf16>, %C: memref<128x128xf16>) attributes {pb.kernel, pb.nodes = ["Gemm_0"]} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (128) {
      affine.parallel (%j) = (0) to (128) {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 64 {
          %a = affine.load %A[%i, %k] : memref<128x64xf16>
          %b = affine.load %B[%k, %j] : memref<64x128xf16>
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
  func.func @main(%A: memref<128x64xf16> {pb.name = "A"}, %B: memref<64x128xf16> {pb.name = "B"}, %bias: memref<128xf16> {pb.name = "bias"}, %C: memref<128x128xf16> {pb.name = "C", pb.output}) {
    call @k0_gemm(%A, %B, %bias, %C) : (memref<128x64xf16>, memref<64x128xf16>, memref<128xf16>, memref<128x128xf16>) -> ()
    return
  }
}
