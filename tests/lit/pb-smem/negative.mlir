// RUN: split-file %s %t
// RUN: pb-tile --sizes='{ kernel[0] -> tile[32, 4]; kernel[0] -> block[8, 4]; kernel[1] -> tile[128, 128]; kernel[1] -> block[16, 16]; kernel[2] -> tile[16, 16]; kernel[2] -> block[4, 8] }' %t/neg.mlir -o %t/tile.mlir
// RUN: pb-smem --remarks %t/tile.mlir 2>%t/rem -o %t/s.mlir
// RUN: FileCheck %s < %t/rem
// RUN: pb-smem --remarks --k-tile=64 --stages=2 %t/tile.mlir 2>&1 -o /dev/null | FileCheck --check-prefix=BIG %s
// RUN: sed 's/"smem_per_block": 49152/"smem_per_block": 1024/' %S/../../../targets/sm_90.json > %t/small.json
// RUN: pb-smem --remarks --target-file=%t/small.json %t/tile.mlir 2>&1 -o /dev/null | FileCheck --check-prefix=SMALL %s
// RUN: pb-run --random=1 --output %t/ref %t/neg.mlir
// RUN: pb-run --random=1 --check %t/ref/Y.npy --check %t/ref/C.npy --check %t/ref/Q.npy %t/s.mlir | FileCheck --check-prefix=NUM %s
// RUN: not pb-smem --stages=5 %t/tile.mlir 2>&1 | FileCheck --check-prefix=ERR %s
// RUN: not pb-smem --k-tile=-2 %t/tile.mlir 2>&1 | FileCheck --check-prefix=ERR2 %s

// What is not staged, and why.
//
// k0_rows: each thread sums its own 16 elements of X: no element is read
// by two threads, so a copy through shared memory would only add work.
// CHECK: remark: not staged: each element is read once per block (no reuse across threads)
//
// k1_big: with a 128x128 block tile, a ring of 3 slots of k-tile 16 needs
// 3 x 18 KiB: pb-smem keeps the k-tile and takes 2 slots.
// CHECK: remark: 2 stages of k-tile 16 (asynchronous copies), 36864 bytes of shared memory, 256 threads
// With --k-tile=64 (one k-tile: one slot), A's and B's tiles do not fit
// together: the larger is left out, A's 32 KiB is staged.
// BIG: remark: not staged: its tile does not fit in shared memory with the others
// BIG: remark: staged argument #0: 128x64 tile
// BIG: remark: 1 stage of k-tile 64 (synchronous copies), 32768 bytes
//
// On a target with 1 KiB of shared memory per block, k1_big's tiles do
// not fit, together or alone, at any k-tile; k2_alias's one staged tile
// takes a ring of 2 slots of k-tile 8 (512 bytes each).
// SMALL: remark: not staged: its tile does not fit in shared memory with the others
// SMALL: remark: not staged: 8192 bytes of shared memory (1 stage of k-tile 16) do not fit 1024 bytes per block (sm_90)
// SMALL: remark: staged argument #0: 16x8 tile
// SMALL: remark: 2 stages of k-tile 8 (asynchronous copies), 1024 bytes
//
// k2_alias: @main passes Q as both B and C: B's tile would be a stale copy
// of what the kernel writes. A is staged; B stays in global memory.
// CHECK: remark: not staged: the buffer may be the memory the kernel writes (aliased arguments)
// CHECK: remark: staged argument #0: 16x16 tile
// CHECK-NOT: staged argument #1

// NUM-COUNT-3: : ok

// ERR: error: --stages=5: expected 1 to 4
// ERR2: error: --k-tile=-2: expected a positive number

//--- neg.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_rows(%X: memref<64x64xf32>, %Y: memref<64x4xf32>) attributes {pb.kernel} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (64) {
      affine.parallel (%j) = (0) to (4) {
        affine.store %z, %Y[%i, %j] : memref<64x4xf32>
        affine.for %k = 0 to 16 {
          %x = affine.load %X[%i, %j * 16 + %k] : memref<64x64xf32>
          %y = affine.load %Y[%i, %j] : memref<64x4xf32>
          %s = arith.addf %y, %x : f32
          affine.store %s, %Y[%i, %j] : memref<64x4xf32>
        }
      }
    }
    return
  }
  func.func private @k1_big(%A: memref<128x64xf32>, %B: memref<64x128xf32>, %C: memref<128x128xf32>) attributes {pb.kernel} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (128) {
      affine.parallel (%j) = (0) to (128) {
        affine.store %z, %C[%i, %j] : memref<128x128xf32>
        affine.for %k = 0 to 64 {
          %a = affine.load %A[%i, %k] : memref<128x64xf32>
          %b = affine.load %B[%k, %j] : memref<64x128xf32>
          %c = affine.load %C[%i, %j] : memref<128x128xf32>
          %p = arith.mulf %a, %b : f32
          %s = arith.addf %c, %p : f32
          affine.store %s, %C[%i, %j] : memref<128x128xf32>
        }
      }
    }
    return
  }
  func.func private @k2_alias(%A: memref<32x32xf32>, %B: memref<32x32xf32>, %C: memref<32x32xf32>) attributes {pb.kernel} {
    affine.parallel (%i) = (0) to (32) {
      affine.parallel (%j) = (0) to (32) {
        affine.for %k = 0 to 32 {
          %a = affine.load %A[%i, %k] : memref<32x32xf32>
          %b = affine.load %B[%k, %j] : memref<32x32xf32>
          %c = affine.load %C[%i, %j] : memref<32x32xf32>
          %p = arith.mulf %a, %b : f32
          %s = arith.addf %c, %p : f32
          affine.store %s, %C[%i, %j] : memref<32x32xf32>
        }
      }
    }
    return
  }
  func.func @main(%X: memref<64x64xf32> {pb.name = "X"}, %Y: memref<64x4xf32> {pb.name = "Y", pb.output}, %A: memref<128x64xf32> {pb.name = "A"}, %B: memref<64x128xf32> {pb.name = "B"}, %C: memref<128x128xf32> {pb.name = "C", pb.output}, %P: memref<32x32xf32> {pb.name = "P"}, %Q: memref<32x32xf32> {pb.name = "Q", pb.output}) {
    call @k0_rows(%X, %Y) : (memref<64x64xf32>, memref<64x4xf32>) -> ()
    call @k1_big(%A, %B, %C) : (memref<128x64xf32>, memref<64x128xf32>, memref<128x128xf32>) -> ()
    call @k2_alias(%P, %Q, %Q) : (memref<32x32xf32>, memref<32x32xf32>, memref<32x32xf32>) -> ()
    return
  }
}
