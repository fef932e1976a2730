// RUN: pb-fuse --remarks --max-redundancy=0.5 --split-input-file %s 2>%t.rem | FileCheck %s
// RUN: FileCheck --check-prefix=REM %s < %t.rem
// RUN: pb-fuse --remarks --split-input-file %s 2>&1 >/dev/null | FileCheck --check-prefix=INL %s

// Fusions that would break a dependence, or that the cost model rejects,
// are not done, and --remarks says why. Hand-written affine on memrefs.
// With --max-redundancy below 1 no producer is inlined into its readers;
// by default (1) the producers of the transposed, shifted and differently
// ordered reads below are inlined instead, each value computed once:
// INL-COUNT-2: remark: producer inlined into its 1 reads (computed 1.00 times per element, --max-redundancy=1)
// INL: remark: not fused: predicted
// INL: remark: producer inlined into its 1 reads

// A consumer reading its producer's output transposed: the value of
// t[i][j] is needed at iteration (j, i), so merging the outer loops would
// read t[j][i] before it is written. Two kernels.

// REM: fuse-negative.mlir:{{[0-9]+}}:{{[0-9]+}}: remark: not fused with the nest before it: a dependence from S0 to S1 is not within one iteration of the outer loop
// CHECK-LABEL: func.func private @k0_for
// CHECK-LABEL: func.func private @k1_for
// CHECK-LABEL: func.func @main
// CHECK: call @k0_for
// CHECK-NEXT: call @k1_for
module {
  func.func @main(%x: memref<16x16xf32> {pb.name = "x"}, %y: memref<16x16xf32> {pb.name = "y", pb.output}) {
    %t = memref.alloc() : memref<16x16xf32>
    affine.for %i = 0 to 16 {
      affine.for %j = 0 to 16 {
        %v = affine.load %x[%i, %j] : memref<16x16xf32>
        %w = arith.addf %v, %v : f32
        affine.store %w, %t[%i, %j] : memref<16x16xf32>
      }
    }
    affine.for %i = 0 to 16 {
      affine.for %j = 0 to 16 {
        %v = affine.load %t[%j, %i] : memref<16x16xf32>
        affine.store %v, %y[%i, %j] : memref<16x16xf32>
      }
    }
    return
  }
}

// -----

// A shifted read (y[i] = t[(i + 1) mod 16]): the value comes from the next
// iteration of the producer, so the loops cannot be merged as they are.

// REM: fuse-negative.mlir:{{[0-9]+}}:{{[0-9]+}}: remark: not fused with the nest before it: a dependence from S0 to S1 is not within one iteration of the outer loop
// CHECK-LABEL: func.func private @k0_for
// CHECK-LABEL: func.func private @k1_for
module {
  func.func @main(%x: memref<16xf32> {pb.name = "x"}, %y: memref<16xf32> {pb.name = "y", pb.output}) {
    %t = memref.alloc() : memref<16xf32>
    affine.for %i = 0 to 16 {
      %v = affine.load %x[%i] : memref<16xf32>
      %w = arith.mulf %v, %v : f32
      affine.store %w, %t[%i] : memref<16xf32>
    }
    affine.for %i = 0 to 16 {
      %v = affine.load %t[(%i + 1) mod 16] : memref<16xf32>
      affine.store %v, %y[%i] : memref<16xf32>
    }
    return
  }
}

// -----

// A long row reduction over few rows followed by an elementwise nest: the
// fused kernel would run the 2 x 65536 exponentials on 2 threads. The cost
// model predicts it slower than two launches.

// REM: fuse-negative.mlir:{{[0-9]+}}:{{[0-9]+}}: remark: not fused: predicted {{.*}} us fused (2 parallel iterations) against {{.*}} us apart (2 and 131072) on sm_90
// CHECK-LABEL: func.func private @k0_for
// CHECK-LABEL: func.func private @k1_for
module {
  func.func @main(%x: memref<2x65536xf32> {pb.name = "x"}, %y: memref<2x65536xf32> {pb.name = "y", pb.output}) {
    %s = memref.alloc() : memref<2xf32>
    affine.for %i = 0 to 2 {
      affine.for %j = 0 to 65536 {
        %v = affine.load %x[%i, %j] : memref<2x65536xf32>
        %a = affine.load %s[%i] : memref<2xf32>
        %m = arith.maximumf %v, %a : f32
        affine.store %m, %s[%i] : memref<2xf32>
      }
    }
    affine.for %i = 0 to 2 {
      affine.for %j = 0 to 65536 {
        %v = affine.load %x[%i, %j] : memref<2x65536xf32>
        %a = affine.load %s[%i] : memref<2xf32>
        %d = arith.subf %v, %a : f32
        affine.store %d, %y[%i, %j] : memref<2x65536xf32>
      }
    }
    return
  }
}

// -----

// Nests with different outer trip counts are not aligned. (Were the first
// nest a plain copy, it would be folded into the second's loads instead.)

// REM: fuse-negative.mlir:{{[0-9]+}}:{{[0-9]+}}: remark: not fused with the nest before it: the outer loops differ (8 iterations, not 4)
// CHECK-LABEL: func.func private @k0_for
// CHECK-LABEL: func.func private @k1_for
module {
  func.func @main(%x: memref<4x8xf32> {pb.name = "x"}, %y: memref<8x4xf32> {pb.name = "y", pb.output}) {
    %t = memref.alloc() : memref<4x8xf32>
    affine.for %i = 0 to 4 {
      affine.for %j = 0 to 8 {
        %v = affine.load %x[%i, %j] : memref<4x8xf32>
        %w = arith.addf %v, %v : f32
        affine.store %w, %t[%i, %j] : memref<4x8xf32>
      }
    }
    affine.for %j = 0 to 8 {
      affine.for %i = 0 to 4 {
        %v = affine.load %t[%i, %j] : memref<4x8xf32>
        affine.store %v, %y[%j, %i] : memref<8x4xf32>
      }
    }
    return
  }
}
