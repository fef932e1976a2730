// RUN: pb-codegen --emit=mlir %s | FileCheck %s
// RUN: pb-codegen --emit=mlir --jobs=1 %s | FileCheck %s
// RUN: %if ptxas %{ pb-codegen %s -o %t.ptx && ptxas -arch=sm_90 %t.ptx -o %t.cubin %}

// affine-parallelize runs only on the functions with a nest that no
// earlier stage mapped. @k0's nest is mapped (pb.map): its loop inside
// the thread loop, parallel as it is, stays a serial loop in each thread.
// @k1's nest is not: the pass makes its loop parallel, and the naive
// mapping puts it on 256 threads per block (without the pass it would run
// in one thread).

// CHECK-LABEL: gpu.func @k0_kernel(
// CHECK-SAME: known_block_size = array<i32: 32, 1, 1>, known_grid_size = array<i32: 2, 1, 1>
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK-NOT: scf.parallel
// CHECK: gpu.return

// CHECK-LABEL: gpu.func @k1_kernel(
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 4, 1, 1>
// CHECK: gpu.block_id x
// CHECK: gpu.thread_id x
// CHECK: gpu.return
module attributes {pb.stage = "smem"} {
  func.func private @k0(%x: memref<256xf32>, %y: memref<256xf32>) attributes {pb.kernel} {
    %two = arith.constant 2.0 : f32
    affine.parallel (%b) = (0) to (256) step (128) {
      affine.parallel (%t) = (0) to (32) {
        affine.for %k = 0 to 4 {
          %v = affine.load %x[%b + %t * 4 + %k] : memref<256xf32>
          %m = arith.mulf %v, %two : f32
          affine.store %m, %y[%b + %t * 4 + %k] : memref<256xf32>
        }
      } {pb.map = "thread"}
    } {pb.map = "block"}
    return
  }
  func.func private @k1(%y: memref<1024xf32>, %z: memref<1024xf32>) attributes {pb.kernel} {
    %one = arith.constant 1.0 : f32
    affine.for %i = 0 to 1024 {
      %v = affine.load %y[%i] : memref<1024xf32>
      %a = arith.addf %v, %one : f32
      affine.store %a, %z[%i] : memref<1024xf32>
    }
    return
  }
  func.func @main(%u: memref<256xf32> {pb.name = "u"}, %v: memref<256xf32> {pb.name = "v", pb.output}, %w: memref<1024xf32> {pb.name = "w"}, %o: memref<1024xf32> {pb.name = "o", pb.output}) {
    call @k0(%u, %v) : (memref<256xf32>, memref<256xf32>) -> ()
    call @k1(%w, %o) : (memref<1024xf32>, memref<1024xf32>) -> ()
    return
  }
}
