// RUN: split-file %s %t
// RUN: pb-tile --sizes='{ kernel[0] -> tile[8, 32]; kernel[0] -> block[4, 16] }' %t/conv.mlir -o %t/tile.mlir
// RUN: pb-smem --remarks %t/tile.mlir 2>%t/rem -o %t/s.mlir
// RUN: FileCheck %s < %t/s.mlir
// RUN: FileCheck --check-prefix=REM %s < %t/rem
// RUN: pb-run --random=1 --output %t/ref %t/conv.mlir
// RUN: pb-run --random=1 --check %t/ref/Y.npy %t/s.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=1 --k-tile=4 %t/tile.mlir | pb-run --random=1 --check %t/ref/Y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-codegen --arch=sm_80 %t/s.mlir | FileCheck --check-prefix=PTX --implicit-check-not=st.shared %s

// A 1-d convolution, 16 filters of 5 taps over 32 channels of 64 values,
// 60 outputs: Y[o, i] = sum_c sum_r X[c, i + r] W[o, c, r]. A block of
// 8x32 outputs reads, per k-tile of 16 channels, a 16x36 window of X: its
// 32 columns and a halo of 4. The last block's window (columns 32 to 67)
// leaves X (64 columns): its copies are guarded and fill zeros, so the
// computation reads no select. The window stays in X's order, copied 128
// bits at a time: the tap loop inside the channel loop keeps the k-tile
// rolled, so reads along the channel would be 32 bits wide anyway.

// REM: tile.mlir:{{[0-9]+}}:{{[0-9]+}}: remark: staged argument #0: 16x36 tile per block and k-tile (reuse 35), padding 0, 128-bit copies, guarded with zero fill, 32-bit reads, bank conflicts 1-way
// REM: remark: staged argument #1: 8x16x5 tile per block and k-tile (reuse 32), padding 0, 32-bit copies, 32-bit reads, bank conflicts 1-way
// REM: remark: 2 stages of k-tile 16 (asynchronous copies), 9728 bytes of shared memory, 64 threads
//      The partial version of the last block reuses the full version's ring.
// REM: remark: 2 stages of k-tile 16 (asynchronous copies), 5120 bytes of shared memory, 64 threads

// CHECK-LABEL: func.func private @k0_conv
// CHECK-COUNT-2: memref.alloc()
// CHECK-NOT: memref.alloc()
// CHECK: memref<2x16x36xf32, #gpu.address_space<workgroup>>
// CHECK: affine.if
// CHECK: affine.vector_load %arg0[
// CHECK: affine.vector_store %{{.*}}, %{{.*}}[
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[ZV:.*]] = vector.broadcast %[[Z]] : f32 to vector<4xf32>
// CHECK-NEXT: affine.vector_store %[[ZV]],

// NUM: output 'Y': {{.*}}: ok

// pb-codegen makes each guarded copy one cp.async whose source size is
// 16 bytes inside X and 0 past it (zero fill), with no branch and no
// store of zeros.
// PTX: cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// PTX: cp.async.ca.shared.global
// PTX: cp.async.wait_group 0;

//--- conv.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_conv(%X: memref<32x64xf32>, %W: memref<16x32x5xf32>, %Y: memref<16x60xf32>) attributes {pb.kernel} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%o) = (0) to (16) {
      affine.parallel (%i) = (0) to (60) {
        affine.store %z, %Y[%o, %i] : memref<16x60xf32>
        affine.for %c = 0 to 32 {
          affine.for %r = 0 to 5 {
            %x = affine.load %X[%c, %i + %r] : memref<32x64xf32>
            %w = affine.load %W[%o, %c, %r] : memref<16x32x5xf32>
            %y = affine.load %Y[%o, %i] : memref<16x60xf32>
            %p = arith.mulf %x, %w : f32
            %s = arith.addf %y, %p : f32
            affine.store %s, %Y[%o, %i] : memref<16x60xf32>
          }
        }
      }
    }
    return
  }
  func.func @main(%X: memref<32x64xf32> {pb.name = "X"}, %W: memref<16x32x5xf32> {pb.name = "W"}, %Y: memref<16x60xf32> {pb.name = "Y", pb.output}) {
    call @k0_conv(%X, %W, %Y) : (memref<32x64xf32>, memref<16x32x5xf32>, memref<16x60xf32>) -> ()
    return
  }
}
