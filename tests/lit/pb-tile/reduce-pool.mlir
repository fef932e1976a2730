// RUN: pb-tile --sizes='{ kernel[0] -> reduce[32]; kernel[1] -> none[] }' %s | FileCheck %s
// RUN: pb-run --random=2 --output %t.ref %s
// RUN: pb-tile --sizes='{ kernel[0] -> reduce[32]; kernel[1] -> none[] }' %s | pb-run --random=2 --check %t.ref/y.npy --check %t.ref/s.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-tile --sizes='{ kernel[0] -> reduce[256]; kernel[1] -> none[] }' %s | pb-run --random=2 --check %t.ref/y.npy --check %t.ref/s.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-tile --sizes='{ kernel[0] -> reduce[32]; kernel[1] -> none[] }' %s -o %t.mlir
// RUN: %if ptxas %{ pb-codegen --arch=sm_90 %t.mlir -o %t.ptx && ptxas -arch=sm_90 %t.ptx -o %t.cubin %}
// RUN: not pb-tile --sizes='{ kernel[1] -> reduce[32] }' %s 2>&1 | FileCheck --check-prefix=ERR %s

// A global average pool over 7x9 windows (as pb-fuse writes it): the
// reduction nest of two loops is linearized, 32 threads take the 63
// window points cyclically (h = l floordiv 9, w = l mod 9) into partials
// that a tree of 16, 8, ..., 1 threads combines; the division and the
// store of the result run in one thread, thread 0 like the last steps of
// the reduction (no barrier between them).

// CHECK-DAG: #[[H:.*]] = affine_map<(d0) -> (d0 floordiv 9)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0) -> (d0 mod 9)>
// CHECK-LABEL: func.func private @k0_pool
// CHECK: affine.parallel (%[[C:.*]]) = (0) to (20) {
// CHECK-NEXT: %[[P:.*]] = memref.alloc() : memref<32xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[R:.*]] = memref.alloc() : memref<1xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[A:.*]] = memref.alloc() : memref<1xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: affine.parallel (%{{.*}}) = (0) to (1) {
// CHECK-NEXT: affine.store %{{.*}}, %[[A]][0]
// CHECK-NEXT: } {pb.map = "thread"}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: affine.parallel (%[[T:.*]]) = (0) to (32) {
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: affine.store %[[ZERO]], %[[P]][%[[T]]]
// CHECK-NEXT: affine.for %[[L:.*]] = #{{.*}}(%[[T]]) to 63 step 32 {
// CHECK-NEXT: %[[HI:.*]] = affine.apply #[[H]](%[[L]])
// CHECK-NEXT: %[[WI:.*]] = affine.apply #[[W]](%[[L]])
// CHECK-NEXT: %[[X:.*]] = affine.load %arg0[0, %[[C]], %[[HI]], %[[WI]]]
// CHECK-NEXT: %[[PT:.*]] = affine.load %[[P]][%[[T]]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[X]], %[[PT]] : f32
// CHECK-NEXT: affine.store %[[S]], %[[P]][%[[T]]]
// CHECK-NEXT: }
// CHECK-NEXT: } {pb.map = "thread"}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: affine.parallel (%{{.*}}) = (0) to (16) {
// CHECK: affine.parallel (%{{.*}}) = (0) to (8) {
// CHECK: affine.parallel (%{{.*}}) = (0) to (4) {
// CHECK: affine.parallel (%{{.*}}) = (0) to (2) {
// CHECK: affine.parallel (%{{.*}}) = (0) to (1) {
// CHECK: } {pb.map = "thread"}
// CHECK-NEXT: affine.parallel (%{{.*}}) = (0) to (1) {
// CHECK-NEXT: %[[P0:.*]] = affine.load %[[P]][%{{.*}}]
// CHECK-NEXT: %[[A0:.*]] = affine.load %[[A]][0]
// CHECK-NEXT: %[[A1:.*]] = arith.addf %[[P0]], %[[A0]] : f32
// CHECK-NEXT: affine.store %[[A1]], %[[A]][0]
// CHECK-NEXT: } {pb.map = "thread"}
// CHECK-NEXT: affine.parallel (%{{.*}}) = (0) to (1) {
// CHECK-NEXT: affine.load %[[A]][0]
// CHECK-NEXT: arith.divf
// CHECK-NEXT: affine.store %{{.*}}, %[[R]][0]
// CHECK-NEXT: affine.load %[[R]][0]
// CHECK-NEXT: affine.store %{{.*}}, %arg1[0, %[[C]]]
// CHECK-NEXT: } {pb.map = "thread"}
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: } {pb.map = "block"}
// CHECK-LABEL: func.func private @k1_scan
// CHECK-NOT: pb.map
// CHECK-LABEL: func.func @main

// NUM: output 'y': {{.*}}: ok
// NUM: output 's': {{.*}}: ok

// A prefix sum carries a dependence that is no reduction: nothing to
// share among the threads of a block.
// ERR: reduce-pool.mlir:[[# @LINE + 26]]:{{[0-9]+}}: error: --sizes: this nest cannot be mapped as a block-level reduction
module attributes {pb.stage = "fuse"} {
  func.func private @k0_pool(%arg0: memref<1x20x7x9xf32>, %arg1: memref<1x20xf32>) attributes {pb.kernel} {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 6.300000e+01 : f32
    affine.parallel (%arg2) = (0) to (20) {
      %alloca = memref.alloca() : memref<1xf32>
      %alloca_1 = memref.alloca() : memref<1xf32>
      affine.store %cst, %alloca_1[0] : memref<1xf32>
      affine.for %arg3 = 0 to 7 {
        affine.for %arg4 = 0 to 9 {
          %3 = affine.load %arg0[0, %arg2, %arg3, %arg4] : memref<1x20x7x9xf32>
          %4 = affine.load %alloca_1[0] : memref<1xf32>
          %5 = arith.addf %3, %4 : f32
          affine.store %5, %alloca_1[0] : memref<1xf32>
        }
      }
      %0 = affine.load %alloca_1[0] : memref<1xf32>
      %1 = arith.divf %0, %cst_0 : f32
      affine.store %1, %alloca[0] : memref<1xf32>
      %2 = affine.load %alloca[0] : memref<1xf32>
      affine.store %2, %arg1[0, %arg2] : memref<1x20xf32>
    }
    return
  }
  func.func private @k1_scan(%x: memref<4x64xf32>, %y: memref<4x64xf32>) attributes {pb.kernel} {
    affine.parallel (%r) = (0) to (4) {
      affine.for %j = 1 to 64 {
        %0 = affine.load %x[%r, %j] : memref<4x64xf32>
        %1 = affine.load %y[%r, %j - 1] : memref<4x64xf32>
        %2 = arith.addf %0, %1 : f32
        affine.store %2, %y[%r, %j] : memref<4x64xf32>
      }
    }
    return
  }
  func.func @main(%x: memref<1x20x7x9xf32> {pb.name = "x"}, %t: memref<4x64xf32> {pb.name = "t"}, %y: memref<1x20xf32> {pb.name = "y", pb.output}, %s: memref<4x64xf32> {pb.name = "s", pb.output}) {
    call @k0_pool(%x, %y) : (memref<1x20x7x9xf32>, memref<1x20xf32>) -> ()
    call @k1_scan(%t, %s) : (memref<4x64xf32>, memref<4x64xf32>) -> ()
    return
  }
}
