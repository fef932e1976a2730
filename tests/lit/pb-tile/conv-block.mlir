// RUN: split-file %s %t
// RUN: pb-tile --arch=sm_80 --remarks --report %t/r.json %t/conv.mlir -o %t/t.mlir 2>&1 | FileCheck --check-prefix=REM %s
// RUN: FileCheck %s < %t/t.mlir
// RUN: FileCheck --check-prefix=REP %s < %t/r.json
// RUN: pb-tile --arch=sm_80 --sizes='{ kernel[0] -> tile[16, 4, 8]; kernel[0] -> block[2, 2, 4]; kernel[0] -> contig[0, 0, 1]; kernel[0] -> smem[16, 4] }' %t/conv.mlir -o %t/t3.mlir
// RUN: FileCheck --check-prefix=T3 %s < %t/t3.mlir
// RUN: pb-run --random=1 --output %t/ref %t/conv.mlir
// RUN: pb-smem --arch=sm_80 %t/t.mlir | pb-run --random=1 --check %t/ref/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --arch=sm_80 --stages=1 %t/t.mlir | pb-run --random=1 --check %t/ref/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --arch=sm_80 %t/t3.mlir | pb-run --random=1 --check %t/ref/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --arch=sm_80 --stages=1 %t/t3.mlir | pb-run --random=1 --check %t/ref/y.npy - | FileCheck --check-prefix=NUM %s

// The block shapes of a 1x1 convolution (a reduction loop with no window
// inside: per input channel a point reads one weight and one pixel, so a
// thread reuses them only across its own points). pb-tile puts threads
// on the output channels and the rows together, block[8, 2, 4], rather
// than spreading them from the columns outwards as far as the extents go
// (which gives block[1, 16, 4] or block[1, 8, 8]), and each thread 2
// channels x 2 consecutive columns: per input channel 2 weights and one
// 64-bit pair of pixels for 4 FMAs. The remark says why it won: the
// issue-bound part and the shared loads per FMA.
//
// The second mapping is the three-dimensional thread tile the model
// offers a larger 1x1 convolution (ResNet-50's 256 -> 64 at 56x56 on
// sm_80 takes 4 channels x 8 rows): here 8 output channels x 2 rows x 2
// consecutive columns per thread, whose points share both operands
// (bench/RESULTS.md, branch f32b). Both run right, with the ring and with
// synchronous copies.

// REM: remark: mapped as { kernel[0] -> tile[16, 2, 8]; kernel[0] -> block[8, 2, 4]; kernel[0] -> jam[1]; kernel[0] -> contig[0, 0, 1]; kernel[0] -> smem[16, 4] }: 64 blocks of 64 threads, {{.*}} (issue-bound, {{[0-9.]+}} shared loads per FMA)

// CHECK-LABEL: func.func private @k0_Conv_0
// CHECK: affine.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (64, 16, 16) step (16, 2, 8) {
// CHECK: affine.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (4, 2, 4) {
// CHECK: } {pb.map = "block", pb.smem = array<i64: 16, 4>}

// REP: "block": [
// REP-NEXT: 8,
// REP-NEXT: 2,
// REP-NEXT: 4
// REP: "compute_s":
// REP: "lds_per_fma":

// T3-LABEL: func.func private @k0_Conv_0
// T3: affine.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (64, 16, 16) step (16, 4, 8) {
// T3: memref.alloca() : memref<8x2x2x1xf32>

// NUM: output 'y': {{.*}}: ok

//--- conv.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_Conv_0(%arg0: memref<64xf32>, %arg1: memref<1x64x16x16xf32>, %arg2: memref<64x64x1x1xf32>, %arg3: memref<1x64x16x16xf32>) attributes {pb.kernel, pb.nodes = ["Conv_0", "Relu_1"]} {
    %cst = arith.constant 0.000000e+00 : f32
    affine.parallel (%arg4) = (0) to (64) {
      affine.parallel (%arg5) = (0) to (16) {
        affine.parallel (%arg6) = (0) to (16) {
          %alloca = memref.alloca() : memref<1xf32>
          %0 = affine.load %arg0[%arg4] : memref<64xf32>
          affine.store %0, %alloca[0] : memref<1xf32>
          affine.for %arg7 = 0 to 64 {
            %3 = affine.load %arg1[0, %arg7, %arg5, %arg6] : memref<1x64x16x16xf32>
            %4 = affine.load %arg2[%arg4, %arg7, 0, 0] : memref<64x64x1x1xf32>
            %5 = affine.load %alloca[0] : memref<1xf32>
            %6 = arith.mulf %3, %4 : f32
            %7 = arith.addf %5, %6 : f32
            affine.store %7, %alloca[0] : memref<1xf32>
          }
          %1 = affine.load %alloca[0] : memref<1xf32>
          %2 = arith.maximumf %1, %cst : f32
          affine.store %2, %arg3[0, %arg4, %arg5, %arg6] : memref<1x64x16x16xf32>
        }
      }
    }
    return
  }
  func.func @main(%arg0: memref<1x64x16x16xf32> {pb.name = "x"}, %arg1: memref<64x64x1x1xf32> {pb.name = "w"}, %arg2: memref<64xf32> {pb.name = "bias"}, %arg3: memref<1x64x16x16xf32> {pb.name = "y", pb.output}) {
    call @k0_Conv_0(%arg2, %arg0, %arg1, %arg3) : (memref<64xf32>, memref<1x64x16x16xf32>, memref<64x64x1x1xf32>, memref<1x64x16x16xf32>) -> ()
    return
  }
}

