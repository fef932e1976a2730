// RUN: split-file %s %t
// RUN: pb-tile --sizes='{ kernel[0] -> tile[8, 4, 16]; kernel[0] -> block[2, 4, 4]; kernel[0] -> contig[0, 0, 1]; kernel[0] -> smem[16, 2] }' %t/conv.mlir -o %t/t.mlir
// RUN: pb-smem --remarks %t/t.mlir -o %t/s.mlir 2>&1 | FileCheck --check-prefix=REM %s
// RUN: FileCheck %s < %t/s.mlir
// RUN: pb-run --random=1 --output %t/ref %t/conv.mlir
// RUN: pb-run --random=1 --check %t/ref/y.npy %t/s.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=1 %t/t.mlir | pb-run --random=1 --check %t/ref/y.npy - | FileCheck --check-prefix=NUM %s

// A 1x1 convolution (per output row a GEMM: y[f][w] += W[f][c] x[c][w])
// whose thread owns 4 output channels and 4 consecutive columns
// (contiguous along w, 4 threads on w: the threads' runs are 4 columns
// apart). The input tile keeps its own order, w innermost: a thread's 4
// columns of one channel are one 128-bit read once the point loops
// unroll (the point loop walks w by one, the thread counter by whole
// runs of 4), and its copies are 128-bit along w. The weights' tile
// [f][c][1][1] is stored with the channel innermost, [f][1][1][c], read
// 128 bits along c; its copies run along c through a collapsed view of
// the weights ([16][32]): the unit dimensions inside c cost no 32-bit
// copies. In the SASS (ptxas -arch=sm_90 and sm_80) the k-tile's 256
// FFMA read 32 LDS.128 and every copy is an LDGSTS.128.

// REM: remark: staged argument #1: 1x16x4x16 tile per block and k-tile (reuse 8), padding 0, 128-bit copies, 128-bit reads, bank conflicts 1-way
// REM: remark: staged argument #2: 8x16x1x1 tile per block and k-tile (reuse 64), reduction dimension innermost, padding 0, 128-bit copies, 128-bit reads, bank conflicts 1-way

// CHECK-LABEL: func.func private @k0_Conv_0
// CHECK-DAG: memref.alloc() : memref<2x8x1x1x16xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: memref.alloc() : memref<2x1x16x4x16xf32, #gpu.address_space<workgroup>>
// CHECK: affine.vector_load %{{.*}} : memref<1x32x8x16xf32>, vector<4xf32>
// CHECK: %[[V:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3]] : memref<16x32x1x1xf32> into memref<16x32xf32>
// CHECK-NEXT: affine.vector_load %[[V]][%{{.*}}, %{{.*}}] : memref<16x32xf32>, vector<4xf32>

// NUM: output 'y': {{.*}}: ok

//--- conv.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_Conv_0(%arg0: memref<16xf32>, %arg1: memref<1x32x8x16xf32>, %arg2: memref<16x32x1x1xf32>, %arg3: memref<1x16x8x16xf32>) attributes {pb.kernel, pb.nodes = ["Conv_0", "Relu_1"]} {
    %cst = arith.constant 0.000000e+00 : f32
    affine.parallel (%arg4) = (0) to (16) {
      affine.parallel (%arg5) = (0) to (8) {
        affine.parallel (%arg6) = (0) to (16) {
          %alloca = memref.alloca() : memref<1xf32>
          %0 = affine.load %arg0[%arg4] : memref<16xf32>
          affine.store %0, %alloca[0] : memref<1xf32>
          affine.for %arg7 = 0 to 32 {
            %3 = affine.load %arg1[0, %arg7, %arg5, %arg6] : memref<1x32x8x16xf32>
            %4 = affine.load %arg2[%arg4, %arg7, 0, 0] : memref<16x32x1x1xf32>
            %5 = affine.load %alloca[0] : memref<1xf32>
            %6 = arith.mulf %3, %4 : f32
            %7 = arith.addf %5, %6 : f32
            affine.store %7, %alloca[0] : memref<1xf32>
          }
          %1 = affine.load %alloca[0] : memref<1xf32>
          %2 = arith.maximumf %1, %cst : f32
          affine.store %2, %arg3[0, %arg4, %arg5, %arg6] : memref<1x16x8x16xf32>
        }
      }
    }
    return
  }
  func.func @main(%arg0: memref<1x32x8x16xf32> {pb.name = "x"}, %arg1: memref<16x32x1x1xf32> {pb.name = "w"}, %arg2: memref<16xf32> {pb.name = "bias"}, %arg3: memref<1x16x8x16xf32> {pb.name = "y", pb.output}) {
    call @k0_Conv_0(%arg2, %arg0, %arg1, %arg3) : (memref<16xf32>, memref<1x32x8x16xf32>, memref<16x32x1x1xf32>, memref<1x16x8x16xf32>) -> ()
    return
  }
}

