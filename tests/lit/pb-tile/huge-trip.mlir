// A loop of more than 2^62 iterations (issue 16): pb-tile's cost model
// once doubled a power of 2 past int64 and never returned; it now tiles the
// loop, and pb-codegen refuses the grid it would need.
// RUN: pb-tile %s | FileCheck %s
// RUN: pb-tile %s | not pb-codegen 2>&1 | FileCheck --check-prefix=GRID %s

// CHECK-LABEL: func.func private @k0
// CHECK: affine.parallel (%{{.*}}) = (0) to (4611686018427387905) step (256)
// CHECK: {pb.map = "block"}
// GRID: error: block-mapped loop of 18014398509481985 blocks is too large for one grid (at most 2147483647 blocks)
module attributes {pb.stage = "fuse"} {
  func.func private @k0(%arg0: memref<4xf32>) attributes {pb.kernel} {
    %cst = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (4611686018427387905) {
      affine.store %cst, %arg0[0] : memref<4xf32>
    }
    return
  }
  func.func @main(%arg0: memref<4xf32> {pb.name = "y", pb.output}) {
    call @k0(%arg0) : (memref<4xf32>) -> ()
    return
  }
}
