// RUN: split-file %s %t
// RUN: pb-tile --sizes='{ kernel[0] -> tile[8, 32]; kernel[0] -> block[4, 16] }' %t/pad.mlir -o %t/tile.mlir
// RUN: pb-smem --remarks %t/tile.mlir 2>%t/rem -o %t/s.mlir
// RUN: FileCheck %s < %t/s.mlir
// RUN: FileCheck --check-prefix=REM %s < %t/rem
// RUN: pb-run --random=1 --output %t/ref %t/pad.mlir
// RUN: pb-run --random=1 --check %t/ref/Y.npy %t/s.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=1 %t/tile.mlir | pb-run --random=1 --check %t/ref/Y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --no-smem %t/tile.mlir | FileCheck --check-prefix=KEEP %s

// A 1-d convolution with one element of zero padding on each side, as
// pb-fuse writes a pad it folds into its reader (lib/fuse/pad.c): a
// clamped memref.load of X and a select of the pad value outside X. The
// staged window of 16 channels x (32 + 2) columns is filled by guarded
// copies that write the pad value where the window leaves X, so the
// computation reads the tile at the unclamped index: no clamp, no select.

// REM: remark: staged argument #0: 16x34 tile per block and k-tile (reuse 22), padding 0, 32-bit copies, guarded with zero fill, 32-bit reads, bank conflicts 1-way

// CHECK-LABEL: func.func private @k0_padconv
// CHECK: } else {
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: affine.store %[[Z]],
// CHECK: affine.for %{{.*}} = 0 to 16 {
// CHECK-NOT: arith.select
// CHECK-NOT: memref.load
// CHECK: } {pb.map = "warp"}

// KEEP: memref.load
// KEEP: arith.select

// NUM: output 'Y': {{.*}}: ok

//--- pad.mlir
#t = affine_map<(d0, d1) -> (d0 + d1 - 1)>
#mx = affine_map<(d0, d1) -> (0, d0 + d1 - 1)>
#mn = affine_map<(d0) -> (63, d0)>
module attributes {pb.stage = "fuse"} {
  func.func private @k0_padconv(%X: memref<32x64xf32>, %W: memref<16x32x3xf32>, %Y: memref<16x64xf32>) attributes {pb.kernel} {
    %z = arith.constant 0.000000e+00 : f32
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    affine.parallel (%o) = (0) to (16) {
      affine.parallel (%i) = (0) to (64) {
        affine.store %z, %Y[%o, %i] : memref<16x64xf32>
        affine.for %c = 0 to 32 {
          affine.for %r = 0 to 3 {
            %t = affine.apply #t(%i, %r)
            %lo = arith.cmpi sge, %t, %c0 : index
            %hi = arith.cmpi slt, %t, %c64 : index
            %in = arith.andi %lo, %hi : i1
            %m = affine.max #mx(%i, %r)
            %n = affine.min #mn(%m)
            %v = memref.load %X[%c, %n] : memref<32x64xf32>
            %x = arith.select %in, %v, %z : f32
            %w = affine.load %W[%o, %c, %r] : memref<16x32x3xf32>
            %y = affine.load %Y[%o, %i] : memref<16x64xf32>
            %p = arith.mulf %x, %w : f32
            %s = arith.addf %y, %p : f32
            affine.store %s, %Y[%o, %i] : memref<16x64xf32>
          }
        }
      }
    }
    return
  }
  func.func @main(%X: memref<32x64xf32> {pb.name = "X"}, %W: memref<16x32x3xf32> {pb.name = "W"}, %Y: memref<16x64xf32> {pb.name = "Y", pb.output}) {
    call @k0_padconv(%X, %W, %Y) : (memref<32x64xf32>, memref<16x32x3xf32>, memref<16x64xf32>) -> ()
    return
  }
}
