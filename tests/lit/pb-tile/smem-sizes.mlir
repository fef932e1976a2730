// pb-tile prices the staging pb-smem will do and hands it the k-tile and
// the ring's slots it priced: smem[KT, S] in --sizes and --dump-sizes,
// pb.smem on the block loop (docs/pb-tile.md, "Staging").
// RUN: split-file %s %t
// RUN: pb-tile --dump-sizes --sizes='{ kernel[0] -> tile[32, 32]; kernel[0] -> block[8, 8]; kernel[0] -> smem[8, 2] }' %t/mm.mlir -o %t/t8.mlir 2>%t/dump
// RUN: FileCheck --check-prefix=DUMP %s < %t/dump
// RUN: FileCheck --check-prefix=TILE %s < %t/t8.mlir
// RUN: pb-smem --remarks %t/t8.mlir -o %t/s8.mlir 2>&1 | FileCheck --check-prefix=REM8 %s
// RUN: FileCheck --check-prefix=SMEM %s < %t/s8.mlir
// smem[]: pb-smem leaves the nest alone.
// RUN: pb-tile --sizes='{ kernel[0] -> tile[32, 32]; kernel[0] -> block[8, 8]; kernel[0] -> smem[] }' %t/mm.mlir -o %t/t0.mlir
// RUN: pb-smem --remarks %t/t0.mlir -o %t/s0.mlir 2>&1 | FileCheck --check-prefix=REM0 %s
// The numbers: each staging against the unstaged kernel.
// RUN: pb-run --random=1 --output %t/ref %t/mm.mlir
// RUN: pb-run --random=1 --check %t/ref/C.npy %t/s8.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --check %t/ref/C.npy %t/s0.mlir | FileCheck --check-prefix=NUM %s
// RUN: not pb-tile --sizes='{ kernel[0] -> tile[32, 32]; kernel[0] -> smem[8, 5] }' %t/mm.mlir 2>&1 | FileCheck --check-prefix=ERR %s

// DUMP: { kernel[0] -> tile[32, 32]; kernel[0] -> block[8, 8]; kernel[0] -> jam[1]; kernel[0] -> smem[8, 2] }
// TILE: } {pb.map = "block", pb.smem = array<i64: 8, 2>}
// REM8: remark: 2 stages of k-tile 8 (asynchronous copies)
// SMEM-NOT: pb.smem
// REM0: remark: not staged: pb-tile's sizes say not to stage this nest (smem[])
// NUM: output 'C': {{.*}}: ok
// ERR: error: --sizes: kernel[0] -> smem[KT, S] takes a k-tile of 1 or more and 1 to 4 slots (or smem[] for none), with tile[...]

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
