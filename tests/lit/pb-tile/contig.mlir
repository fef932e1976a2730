// RUN: split-file %s %t
// RUN: pb-tile --dump-sizes --sizes='{ kernel[0] -> tile[2, 8, 14]; kernel[0] -> block[1, 8, 2]; kernel[0] -> contig[0, 0, 1] }' %t/conv.mlir -o %t/t.mlir 2>%t/dump
// RUN: FileCheck --check-prefix=DUMP %s < %t/dump
// RUN: FileCheck %s < %t/t.mlir
// RUN: pb-tile --sizes='{ kernel[0] -> tile[2, 8, 14]; kernel[0] -> block[1, 8, 2]; kernel[0] -> jam[1]; kernel[0] -> contig[0, 0, 1]; kernel[0] -> smem[4, 2] }' %t/conv.mlir | diff - %t/t.mlir
// RUN: pb-smem %t/t.mlir -o %t/s.mlir
// RUN: pb-run --random=1 --output %t/ref %t/conv.mlir
// RUN: pb-run --random=1 --check %t/ref/y.npy %t/t.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --check %t/ref/y.npy %t/s.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=1 %t/t.mlir | pb-run --random=1 --check %t/ref/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: not pb-tile --sizes='{ kernel[0] -> tile[2, 8, 14]; kernel[0] -> block[1, 8, 2]; kernel[0] -> contig[1] }' %t/conv.mlir 2>&1 | FileCheck --check-prefix=ERR %s

// A contiguous thread tile (contig[...]): along the output columns of a
// 3x3 convolution each thread owns 7 consecutive columns (14 = 2 threads
// x 7), t * 7 + r, instead of columns 2 apart (t + r * 2), so that the 9
// input columns of a window row serve all 7 of them once the kw and
// point loops unroll.

// DUMP: { kernel[0] -> tile[2, 8, 14]; kernel[0] -> block[1, 8, 2]; kernel[0] -> jam[1]; kernel[0] -> contig[0, 0, 1]; kernel[0] -> smem[4, 2] }

// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1, d2) -> (d0 + d1 * 7 + d2)>
// CHECK-LABEL: func.func private @k0_Conv_0
// CHECK: affine.parallel (%[[B0:.*]], %[[B1:.*]], %[[B2:.*]]) = (0, 0, 0) to (8, 14, 14) step (2, 8, 14)
// CHECK: affine.parallel (%{{.*}}, %[[L2:.*]]) = (0, 0) to (8, 2)
// CHECK: memref.alloca() : memref<2x7x1xf32>
// CHECK: affine.for %[[R:.*]] = 0 to 7 {
// CHECK: affine.apply #[[COL]](%[[B2]], %[[L2]], %[[R]])

// NUM: output 'y': {{.*}}: ok

// ERR: error: --sizes: kernel[0] -> contig[...] takes one 0 or 1 per band dimension (3), with tile[...]

//--- conv.mlir
#map = affine_map<(d0, d1) -> (d0 + d1 - 1)>
#map1 = affine_map<(d0, d1) -> (0, d0 + d1 - 1)>
#map2 = affine_map<(d0) -> (13, d0)>
module attributes {pb.stage = "fuse"} {
  func.func private @k0_Conv_0(%arg0: memref<8xf32>, %arg1: memref<1x8x14x14xf32>, %arg2: memref<8x8x3x3xf32>, %arg3: memref<1x8x14x14xf32>) attributes {pb.kernel, pb.nodes = ["Conv_0", "Relu_1"]} {
    %c14 = arith.constant 14 : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f32
    affine.parallel (%arg4) = (0) to (8) {
      affine.parallel (%arg5) = (0) to (14) {
        affine.parallel (%arg6) = (0) to (14) {
          %alloca = memref.alloca() : memref<1xf32>
          %0 = affine.load %arg0[%arg4] : memref<8xf32>
          affine.store %0, %alloca[0] : memref<1xf32>
          affine.for %arg7 = 0 to 8 {
            affine.for %arg8 = 0 to 3 {
              affine.for %arg9 = 0 to 3 {
                %3 = affine.apply #map(%arg5, %arg8)
                %4 = arith.cmpi sge, %3, %c0 : index
                %5 = arith.cmpi slt, %3, %c14 : index
                %6 = arith.andi %4, %5 : i1
                %7 = affine.max #map1(%arg5, %arg8)
                %8 = affine.min #map2(%7)
                %9 = affine.apply #map(%arg6, %arg9)
                %10 = arith.cmpi sge, %9, %c0 : index
                %11 = arith.cmpi slt, %9, %c14 : index
                %12 = arith.andi %10, %11 : i1
                %13 = arith.andi %6, %12 : i1
                %14 = affine.max #map1(%arg6, %arg9)
                %15 = affine.min #map2(%14)
                %16 = memref.load %arg1[%c0, %arg7, %8, %15] : memref<1x8x14x14xf32>
                %17 = arith.select %13, %16, %cst : f32
                %18 = affine.load %arg2[%arg4, %arg7, %arg8, %arg9] : memref<8x8x3x3xf32>
                %19 = affine.load %alloca[0] : memref<1xf32>
                %20 = arith.mulf %17, %18 : f32
                %21 = arith.addf %19, %20 : f32
                affine.store %21, %alloca[0] : memref<1xf32>
              }
            }
          }
          %1 = affine.load %alloca[0] : memref<1xf32>
          %2 = arith.maximumf %1, %cst : f32
          affine.store %2, %arg3[0, %arg4, %arg5, %arg6] : memref<1x8x14x14xf32>
        }
      }
    }
    return
  }
  func.func @main(%arg0: memref<1x8x14x14xf32> {pb.name = "x"}, %arg1: memref<8x8x3x3xf32> {pb.name = "w"}, %arg2: memref<8xf32> {pb.name = "bias"}, %arg3: memref<1x8x14x14xf32> {pb.name = "y", pb.output}) {
    call @k0_Conv_0(%arg2, %arg0, %arg1, %arg3) : (memref<8xf32>, memref<1x8x14x14xf32>, memref<8x8x3x3xf32>, memref<1x8x14x14xf32>) -> ()
    return
  }
}

