// RUN: split-file %s %t
// RUN: pb-tile --remarks %t/conv.mlir -o %t/tile.mlir 2>&1 | FileCheck --check-prefix=TILE %s
// RUN: pb-mma --remarks %t/tile.mlir -o %t/mma.mlir 2>&1 | FileCheck --check-prefix=REM %s
// RUN: FileCheck %s < %t/mma.mlir
// RUN: pb-smem --remarks %t/mma.mlir -o %t/smem.mlir 2>&1 | FileCheck --check-prefix=SMEM %s
// RUN: pb-codegen --arch=sm_80 %t/smem.mlir | FileCheck --check-prefix=PTX %s

// The numbers, against the fuse-level nests (f16 products are exact in
// f32: only the order of the sums differs).
// RUN: pb-run --random=1 --output %t/ref %t/conv.mlir
// RUN: pb-run --random=1 --check %t/ref/y.npy --check %t/ref/z.npy %t/mma.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-run --random=1 --check %t/ref/y.npy --check %t/ref/z.npy %t/smem.mlir | FileCheck --check-prefix=NUM %s

// 1x1 convolutions (NCHW) are contractions: C's rows are the image
// columns w (the dimension only the input x uses that is its last
// subscript), its columns the output channels, k the input channels;
// the batch and image rows are batch dimensions. k0 starts from the bias
// (computed before the reduction loop), k2 accumulates in place on the
// bias k1 stored.
// TILE: conv.mlir:4:5: remark: left to pb-mma: a contraction for tensor cores
// TILE: conv.mlir:41:5: remark: left to pb-mma: a contraction for tensor cores
// REM: remark: on tensor cores: mma.sync m16n8k16 f16 -> f32
// REM: remark: on tensor cores: mma.sync m16n8k16 f16 -> f32
// Rows of 12 halves (24 bytes) are not whole 16-byte copies, nor are the
// weights' [oc][ic][1][1] tiles rows of their buffer: k0's tiles are read
// from global memory, k2 stages its input only.
// SMEM: remark: warp tiles not staged: no operand tile is rows of whole 16-byte copies of its buffer
// SMEM: remark: warp tiles staged: 1 operands
// NUM: output 'y': {{.*}}: ok
// NUM: output 'z': {{.*}}: ok
// k2's input is staged [k][m] (the image columns innermost): its A
// fragments come from ldmatrix, transposed.
// PTX: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-COUNT-2: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// CHECK-LABEL: func.func private @k0_conv
// CHECK: affine.parallel (%[[N:.*]], %[[O:.*]], %[[H:.*]], %[[W:.*]]) = (0, 0, 0, 0) to (2, 16, 6, 16) step (1, {{.*}}, 1, 16)
//      The bias, broadcast along the rows, is the accumulators' start.
// CHECK: %[[B:.*]] = vector.transfer_read %arg2[{{.*}}], {{.*}} : memref<16xf16>, vector<16x8xf16>
// CHECK: %[[BE:.*]] = arith.extf %[[B]] : vector<16x8xf16> to vector<16x8xf32>
// CHECK: affine.for %{{.*}} = 0 to 32 step 16 iter_args(%{{.*}} = %[[BE]])
// CHECK: vector.transfer_read %arg0[%[[N]], %{{.*}}, %[[H]], %{{.*}}], {{.*}} {in_bounds = [false, true], {{.*}}} : memref<2x32x6x12xf16>, vector<16x16xf16>
// CHECK: vector.transfer_write {{.*}}, %arg3[%[[N]], %{{.*}}, %[[H]], %{{.*}}] {in_bounds = [false, true], {{.*}}} : vector<16x8xf16>, memref<2x16x6x12xf16>
// CHECK-LABEL: func.func private @k2_conv
//      In place: the accumulators start from C's contents.
// CHECK: %[[C0:.*]] = vector.transfer_read %arg2[{{.*}}], {{.*}} : memref<1x16x8x16xf32>, vector<16x8xf32>
// CHECK: affine.for %{{.*}} = 0 to 32 step 16 iter_args(%{{.*}} = %[[C0]])
// CHECK: vector.transfer_write {{.*}}, %arg3[{{.*}}] {{.*}} : vector<16x8xf16>, memref<1x16x8x16xf16>
// CHECK: vector.transfer_write {{.*}}, %arg2[{{.*}}] {{.*}} : vector<16x8xf32>, memref<1x16x8x16xf32>

//--- conv.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_conv(%x: memref<2x32x6x12xf16>, %w: memref<16x32x1x1xf16>, %b: memref<16xf16>, %y: memref<2x16x6x12xf16>) attributes {pb.kernel, pb.nodes = ["Conv_0"]} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%n) = (0) to (2) {
      affine.parallel (%o) = (0) to (16) {
        affine.parallel (%h) = (0) to (6) {
          affine.parallel (%v) = (0) to (12) {
            %acc = memref.alloca() : memref<1xf32>
            %bv = affine.load %b[%o] : memref<16xf16>
            %be = arith.extf %bv : f16 to f32
            affine.store %be, %acc[0] : memref<1xf32>
            affine.for %k = 0 to 32 {
              %a = affine.load %x[%n, %k, %h, %v] : memref<2x32x6x12xf16>
              %c = affine.load %w[%o, %k, 0, 0] : memref<16x32x1x1xf16>
              %s = affine.load %acc[0] : memref<1xf32>
              %ae = arith.extf %a : f16 to f32
              %ce = arith.extf %c : f16 to f32
              %p = arith.mulf %ae, %ce : f32
              %t = arith.addf %s, %p : f32
              affine.store %t, %acc[0] : memref<1xf32>
            }
            %r = affine.load %acc[0] : memref<1xf32>
            %m = arith.maximumf %r, %z : f32
            %mh = arith.truncf %m : f32 to f16
            affine.store %mh, %y[%n, %o, %h, %v] : memref<2x16x6x12xf16>
          }
        }
      }
    }
    return
  }
  func.func private @k1_bias(%b: memref<16xf16>, %c: memref<1x16x8x16xf32>) attributes {pb.kernel, pb.nodes = ["Conv_1"]} {
    affine.parallel (%o, %h, %v) = (0, 0, 0) to (16, 8, 16) {
      %bv = affine.load %b[%o] : memref<16xf16>
      %be = arith.extf %bv : f16 to f32
      affine.store %be, %c[0, %o, %h, %v] : memref<1x16x8x16xf32>
    }
    return
  }
  func.func private @k2_conv(%x: memref<1x32x8x16xf16>, %w: memref<16x32x1x1xf16>, %c: memref<1x16x8x16xf32>, %y: memref<1x16x8x16xf16>) attributes {pb.kernel, pb.nodes = ["Conv_1"]} {
    affine.parallel (%o) = (0) to (16) {
      affine.parallel (%h) = (0) to (8) {
        affine.parallel (%v) = (0) to (16) {
          affine.for %k = 0 to 32 {
            %a = affine.load %x[0, %k, %h, %v] : memref<1x32x8x16xf16>
            %e = affine.load %w[%o, %k, 0, 0] : memref<16x32x1x1xf16>
            %s = affine.load %c[0, %o, %h, %v] : memref<1x16x8x16xf32>
            %ae = arith.extf %a : f16 to f32
            %ee = arith.extf %e : f16 to f32
            %p = arith.mulf %ae, %ee : f32
            %t = arith.addf %s, %p : f32
            affine.store %t, %c[0, %o, %h, %v] : memref<1x16x8x16xf32>
          }
          %r = affine.load %c[0, %o, %h, %v] : memref<1x16x8x16xf32>
          %rh = arith.truncf %r : f32 to f16
          affine.store %rh, %y[0, %o, %h, %v] : memref<1x16x8x16xf16>
        }
      }
    }
    return
  }
  func.func @main(%x: memref<2x32x6x12xf16> {pb.name = "x"}, %w: memref<16x32x1x1xf16> {pb.name = "w"}, %b: memref<16xf16> {pb.name = "b"},
                  %x2: memref<1x32x8x16xf16> {pb.name = "x2"},
                  %y: memref<2x16x6x12xf16> {pb.name = "y", pb.output}, %z: memref<1x16x8x16xf16> {pb.name = "z", pb.output}) {
    %c = memref.alloc() : memref<1x16x8x16xf32>
    call @k0_conv(%x, %w, %b, %y) : (memref<2x32x6x12xf16>, memref<16x32x1x1xf16>, memref<16xf16>, memref<2x16x6x12xf16>) -> ()
    call @k1_bias(%b, %c) : (memref<16xf16>, memref<1x16x8x16xf32>) -> ()
    call @k2_conv(%x2, %w, %c, %z) : (memref<1x32x8x16xf16>, memref<16x32x1x1xf16>, memref<1x16x8x16xf32>, memref<1x16x8x16xf16>) -> ()
    memref.dealloc %c : memref<1x16x8x16xf32>
    return
  }
}
