// RUN: split-file %s %t
// RUN: pb-tile --sizes='{ kernel[0] -> tile[8, 8, 8]; kernel[0] -> block[1, 4, 8]; kernel[0] -> smem[16, 2] }' %t/conv.mlir -o %t/t.mlir
// RUN: pb-smem --remarks %t/t.mlir -o %t/s.mlir 2>&1 | FileCheck --check-prefix=REM %s
// RUN: FileCheck %s < %t/s.mlir
// RUN: pb-run --random=1 --output %t/ref %t/conv.mlir
// RUN: pb-run --random=1 --check %t/ref/y.npy %t/s.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=1 %t/t.mlir | pb-run --random=1 --check %t/ref/y.npy - | FileCheck --check-prefix=NUM %s

// A 1x1 convolution whose thread owns 8 output channels and 2 rows of one
// column: its 16 points read 2 input pixels per input channel, each
// shared by the 8 channels once the point loops unroll. Priced by the
// thread's distinct reads (2 a channel, not 16), the input's 16x8x8 tile
// keeps its own order: 128-bit copies along the rows (8 a k-tile for 32
// threads) and 32-bit reads, rather than the channels innermost, whose
// 128-bit reads would take 32-bit copies (32 a k-tile). The weights'
// tile, read alike by all the block's threads, keeps the reduction
// innermost.

// REM: remark: staged argument #1: 1x16x8x8 tile per block and k-tile (reuse 8), padding 0, 128-bit copies, 32-bit reads, bank conflicts 1-way
// REM: remark: staged argument #2: 8x16x1x1 tile per block and k-tile (reuse 64), reduction dimension innermost, padding 0, 128-bit copies, 128-bit reads, bank conflicts 1-way
// REM: remark: 2 stages of k-tile 16 (asynchronous copies)

// CHECK-LABEL: func.func private @k0_Conv_0
// CHECK-DAG: memref.alloc() : memref<2x1x16x8x8xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: memref.alloc() : memref<2x8x1x1x16xf32, #gpu.address_space<workgroup>>
// CHECK: affine.vector_load %{{.*}} : memref<1x32x8x8xf32>, vector<4xf32>

// NUM: output 'y': {{.*}}: ok

//--- conv.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_Conv_0(%arg0: memref<16xf32>, %arg1: memref<1x32x8x8xf32>, %arg2: memref<16x32x1x1xf32>, %arg3: memref<1x16x8x8xf32>) attributes {pb.kernel, pb.nodes = ["Conv_0", "Relu_1"]} {
    %cst = arith.constant 0.000000e+00 : f32
    affine.parallel (%arg4) = (0) to (16) {
      affine.parallel (%arg5) = (0) to (8) {
        affine.parallel (%arg6) = (0) to (8) {
          %alloca = memref.alloca() : memref<1xf32>
          %0 = affine.load %arg0[%arg4] : memref<16xf32>
          affine.store %0, %alloca[0] : memref<1xf32>
          affine.for %arg7 = 0 to 32 {
            %3 = affine.load %arg1[0, %arg7, %arg5, %arg6] : memref<1x32x8x8xf32>
            %4 = affine.load %arg2[%arg4, %arg7, 0, 0] : memref<16x32x1x1xf32>
            %5 = affine.load %alloca[0] : memref<1xf32>
            %6 = arith.mulf %3, %4 : f32
            %7 = arith.addf %5, %6 : f32
            affine.store %7, %alloca[0] : memref<1xf32>
          }
          %1 = affine.load %alloca[0] : memref<1xf32>
          %2 = arith.maximumf %1, %cst : f32
          affine.store %2, %arg3[0, %arg4, %arg5, %arg6] : memref<1x16x8x8xf32>
        }
      }
    }
    return
  }
  func.func @main(%arg0: memref<1x32x8x8xf32> {pb.name = "x"}, %arg1: memref<16x32x1x1xf32> {pb.name = "w"}, %arg2: memref<16xf32> {pb.name = "bias"}, %arg3: memref<1x16x8x8xf32> {pb.name = "y", pb.output}) {
    call @k0_Conv_0(%arg2, %arg0, %arg1, %arg3) : (memref<16xf32>, memref<1x32x8x8xf32>, memref<16x32x1x1xf32>, memref<1x16x8x8xf32>) -> ()
    return
  }
}

