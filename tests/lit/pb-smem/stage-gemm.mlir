// RUN: split-file %s %t
// pb-tile's smem[16, 3] asks for the ring of three slots this file checks
// (for 3 k-tiles its cost model takes 2: a ring of 3 pays the slot's
// division by 3).
// RUN: pb-tile --sizes='{ kernel[0] -> tile[32, 32]; kernel[0] -> block[8, 8]; kernel[0] -> smem[16, 3] }' %t/mm.mlir -o %t/tile.mlir
// RUN: pb-smem --remarks %t/tile.mlir 2>%t/rem -o %t/s3.mlir
// RUN: FileCheck %s < %t/s3.mlir
// RUN: FileCheck --check-prefix=REM %s < %t/rem
// RUN: pb-smem --stages=1 %t/tile.mlir | FileCheck --check-prefix=S1 %s
// RUN: pb-smem --report=%t/r.json %t/tile.mlir -o /dev/null
// RUN: FileCheck --check-prefix=JSON %s < %t/r.json

// The numbers: every ring depth and k-tile against the unstaged kernel.
// RUN: pb-run --random=1 --output %t/ref %t/mm.mlir
// RUN: pb-run --random=1 --check %t/ref/C.npy %t/s3.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=1 %t/tile.mlir | pb-run --random=1 --check %t/ref/C.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=2 --k-tile=8 %t/tile.mlir | pb-run --random=1 --check %t/ref/C.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=4 --k-tile=4 %t/tile.mlir | pb-run --random=1 --check %t/ref/C.npy - | FileCheck --check-prefix=NUM %s
// 3 k-tiles in 2 slots: one k-tile loop, the slot (kk floordiv 16) mod 2
// (a slot loop would have a bound that is no constant: docs/pb-smem.md).
// RUN: pb-smem --stages=2 %t/tile.mlir -o %t/s2.mlir
// RUN: FileCheck --check-prefix=S2 %s < %t/s2.mlir
// RUN: pb-run --random=1 --check %t/ref/C.npy %t/s2.mlir | FileCheck --check-prefix=NUM %s

// And on the GPU side: cp.async (16 bytes for A's rows, 4 for B's
// transposed tile), one commit per copy, a wait for all but the newest
// group, 128-bit shared loads from the unrolled k-tile.
// RUN: pb-codegen --arch=sm_80 %t/s3.mlir | FileCheck --check-prefix=PTX %s
// RUN: pb-codegen --arch=sm_90 %t/s3.mlir | FileCheck --check-prefix=PTX %s
// With one slot the copies are synchronous: 128-bit loads of A's rows
// through the read-only path (A is never written and a whole, aligned
// allocation) into 128-bit shared stores.
// RUN: pb-smem --stages=1 %t/tile.mlir | pb-codegen --arch=sm_80 | FileCheck --check-prefix=PTX1 %s

// C = A x B, 64x48x32, a 32x32 block tile of 2 warps of 4x8 lanes, 4x4
// points per thread. A's 32x16 tile per k-tile is read by the 8 lanes of a
// row alike (broadcast): 128-bit reads along k, no padding. B's 16x32 tile
// is stored [n][k] (the reduction dimension innermost) so that a thread's
// reads along k are contiguous; padding 4 keeps its rows 16-byte aligned
// and the 8 rows a quarter warp reads in distinct banks.

// REM: remark: staged argument #0: 32x16 tile per block and k-tile (reuse 32), padding 0, 128-bit copies, 128-bit reads, bank conflicts 1-way
// REM: remark: staged argument #1: 16x32 tile per block and k-tile (reuse 32), reduction dimension innermost, padding 4, 32-bit copies, 128-bit reads, bank conflicts 1-way
// REM: remark: 3 stages of k-tile 16 (asynchronous copies), 13824 bytes of shared memory, 64 threads

// CHECK-DAG: #[[$ROW:map[0-9]*]] = affine_map<(d0) -> (d0 floordiv 4)>
// CHECK-DAG: #[[$CHUNK:map[0-9]*]] = affine_map<(d0) -> ((d0 mod 4) * 4)>
// CHECK-DAG: #[[$ROUND:map[0-9]*]] = affine_map<(d0, d1) -> (d0 + d1 * 16)>
// CHECK-DAG: #[[$SAME:map[0-9]*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$NEXTK:map[0-9]*]] = affine_map<(d0) -> ((d0 + 32) mod 48)>
// CHECK-DAG: #[[$NEXTS:map[0-9]*]] = affine_map<(d0) -> ((d0 floordiv 16 + 2) mod 3)>
// CHECK-LABEL: func.func private @k0_mm
// CHECK: affine.parallel (%[[BI:.*]], %[[BJ:.*]]) = (0, 0) to (64, 32) step (32, 32) {
// CHECK-DAG: %[[B:.*]] = memref.alloc() : memref<3x32x20xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[A:.*]] = memref.alloc() : memref<3x32x16xf32, #gpu.address_space<workgroup>>
// CHECK: %[[ACC:.*]] = memref.alloca() : memref<2x4x8x4x4xf32>
//      The initialisation, each thread into its slice of the private array.
// CHECK: affine.parallel (%[[W:.*]]) = (0) to (8) step (4) {
// CHECK: affine.parallel (%[[T0:.*]], %[[T1:.*]]) = (0, 0) to (4, 8) {
// CHECK: affine.store %{{.*}}, %[[ACC]][%[[W]] floordiv 4, %[[T0]], %[[T1]], %{{.*}}, %{{.*}}]
// CHECK: } {pb.map = "warp"}
//      The prologue: k-tiles 0 and 1 into slots 0 and 1. A's 32x16 tile
//      is 128 chunks of 4 for 64 threads: a thread's row and chunk are
//      taken once, its second round is 16 rows further.
// CHECK: affine.parallel (%[[T:.*]]) = (0) to (64) {
// CHECK-NEXT: %[[R:.*]] = affine.apply #[[$ROW]](%[[T]])
// CHECK-NEXT: %[[C:.*]] = affine.apply #[[$CHUNK]](%[[T]])
// CHECK-NEXT: affine.for %[[E:.*]] = 0 to 2 {
// CHECK-NEXT: %[[RE:.*]] = affine.apply #[[$ROUND]](%[[R]], %[[E]])
// CHECK-NEXT: %[[CE:.*]] = affine.apply #[[$SAME]](%[[C]], %[[E]])
// CHECK: affine.vector_load %arg0[{{.*}}] : memref<64x48xf32>, vector<4xf32>
// CHECK: affine.vector_store %{{.*}}, %[[A]][%c0{{.*}}, %[[RE]], %[[CE]]] : {{.*}}, vector<4xf32>
// CHECK: } {pb.async, pb.map = "thread"}
// CHECK: affine.load %arg1[
// CHECK: } {pb.async, pb.map = "thread"}
// CHECK: } {pb.async, pb.map = "thread"}
// CHECK: } {pb.async, pb.map = "thread"}
//      Each k-tile: wait for its own copy, copy k-tile kk + 32 into the
//      slot the last iteration finished with, compute from the ring. An
//      fp32 ring keeps one k-tile loop, its slot (kk floordiv 16) mod 3
//      (lib/smem/promote.c, loop_text).
// CHECK: affine.for %[[KK:.*]] = 0 to 48 step 16 {
// CHECK-NEXT: gpu.barrier {pb.wait = 1 : i64}
// CHECK-NEXT: affine.apply #[[$NEXTK]](%[[KK]])
// CHECK-NEXT: affine.apply #[[$NEXTS]](%[[KK]])
// CHECK: } {pb.async, pb.map = "thread"}
// CHECK: } {pb.async, pb.map = "thread"}
// CHECK: affine.for %[[K:.*]] = 0 to 16 {
// CHECK: affine.load %[[A]][(%[[KK]] floordiv 16) mod 3, {{.*}} - %[[KK]]]
// CHECK: affine.load %[[B]][(%[[KK]] floordiv 16) mod 3, {{.*}} - %[[KK]]]
// CHECK: } {pb.unroll}
// CHECK: } {pb.map = "warp"}
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
//      The store, from the private array.
// CHECK: affine.load %[[ACC]][
// CHECK: affine.store %{{.*}}, %arg2[
// CHECK: } {pb.map = "warp"}
// CHECK: } {pb.map = "block"}

// One slot: copy, barrier, compute, barrier; no asynchronous copies.
// S1: memref.alloc() : memref<1x32x16xf32, #gpu.address_space<workgroup>>
// S1: affine.for %{{.*}} = 0 to 48 step 16 {
// S1-NOT: pb.async
// S1: } {pb.map = "thread"}
// S1: } {pb.map = "thread"}
// S1-NEXT: gpu.barrier
// S1-NOT: pb.wait
// S1: } {pb.map = "warp"}
// S1-NEXT: gpu.barrier
// S1-NEXT: }

// S2: affine.for %[[KK:.*]] = 0 to 48 step 16 {
// S2-NEXT: gpu.barrier {pb.wait = 0 : i64}
// S2-NEXT: affine.apply #{{.*}}(%[[KK]])
// S2-NEXT: affine.apply #{{.*}}(%[[KK]])
// S2: affine.load %{{.*}}[(%[[KK]] floordiv 16) mod 2,

// JSON: "arch": "sm_90"
// JSON: "staged": [
// JSON: {"argument": 0, "box": [32, 16], "order": [0, 1], "pad": 0, "copy_bits": 128, "read_bits": 128, "guarded": false, "reuse": 32, "bank_degree": 1, "bytes": 2048}
// JSON: {"argument": 1, "box": [16, 32], "order": [1, 0], "pad": 4, "copy_bits": 32, "read_bits": 128, "guarded": false, "reuse": 32, "bank_degree": 1, "bytes": 2560}
// JSON: "kernel": "k0_mm", "k_tile": 16, "stages": 3, "smem_bytes": 13824, "threads": 64, "shared_bytes": 13824, "blocks_per_sm": 16, "occupancy": 0.5, "waves": 1.0}

// NUM: output 'C': {{.*}}: ok

// PTX: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16;
// PTX: cp.async.commit_group;
// PTX: cp.async.ca.shared.global [{{.*}}], [{{.*}}], 4;
// PTX: cp.async.wait_group 1;
// PTX: bar.sync 0;
// PTX: ld.shared.v4.{{[bf]}}32
// PTX1-NOT: cp.async
// PTX1: ld.global.nc.v4.{{[bf]}}32
// PTX1: st.shared.v4.{{[bf]}}32

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
