// RUN: pb-tile --sizes='{ kernel[0] -> reduce[64] }' %s | FileCheck %s
// RUN: pb-run --random=1 --output %t.ref %s
// RUN: pb-tile --sizes='{ kernel[0] -> reduce[64] }' %s | pb-run --random=1 --check %t.ref/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-tile --sizes='{ kernel[0] -> reduce[1024] }' %s | pb-run --random=1 --check %t.ref/y.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-tile --sizes='{ kernel[0] -> reduce[64] }' %s -o %t.mlir
// RUN: %if ptxas %{ pb-codegen --arch=sm_90 %t.mlir -o %t.ptx && ptxas -arch=sm_90 %t.ptx -o %t.cubin %}

// A softmax over rows of 300 (as pb-fuse writes it) mapped one block per
// row with 64 threads: the private buffers move to workgroup memory, the
// max and the sum reduce into 64 partials each (thread t takes j = t,
// t + 64, ...), combined by a tree of 32, 16, ..., 1 threads and folded
// into the accumulator by one thread; exp and the division are
// distributed over the threads; the stores of the initial values run in
// one thread. A barrier separates every two thread loops but two loops of
// one thread in a row (the last tree level and the final combination).

// CHECK-LABEL: func.func private @k0_softmax
// CHECK: affine.parallel (%[[R:.*]]) = (0) to (8) {
// CHECK-NEXT: %[[PS:.*]] = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[PM:.*]] = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[A:.*]] = memref.alloc() : memref<f32, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[T:.*]] = memref.alloc() : memref<300xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[M:.*]] = memref.alloc() : memref<f32, #gpu.address_space<workgroup>>
// CHECK-NEXT: affine.parallel (%{{.*}}) = (0) to (1) {
// CHECK-NEXT: affine.store %{{.*}}, %[[M]][]
// CHECK-NEXT: } {pb.map = "thread"}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: affine.parallel (%[[TM:.*]]) = (0) to (64) {
// CHECK-NEXT: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: affine.store %[[NINF]], %[[PM]][%[[TM]]]
// CHECK-NEXT: affine.for %[[J:.*]] = #{{.*}}(%[[TM]]) to 300 step 64 {
// CHECK-NEXT: %[[X:.*]] = affine.load %arg0[%[[R]], %[[J]]]
// CHECK-NEXT: %[[P:.*]] = affine.load %[[PM]][%[[TM]]]
// CHECK-NEXT: %[[MX:.*]] = arith.maximumf %[[X]], %[[P]] : f32
// CHECK-NEXT: affine.store %[[MX]], %[[PM]][%[[TM]]]
// CHECK-NEXT: }
// CHECK-NEXT: } {pb.map = "thread"}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: affine.parallel (%[[T32:.*]]) = (0) to (32) {
// CHECK-NEXT: %[[L:.*]] = affine.load %[[PM]][%[[T32]]]
// CHECK-NEXT: %[[H:.*]] = affine.load %[[PM]][%[[T32]] + 32]
// CHECK-NEXT: %[[LH:.*]] = arith.maximumf %[[L]], %[[H]] : f32
// CHECK-NEXT: affine.store %[[LH]], %[[PM]][%[[T32]]]
// CHECK-NEXT: } {pb.map = "thread"}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: affine.parallel (%{{.*}}) = (0) to (16) {
// CHECK: affine.parallel (%{{.*}}) = (0) to (8) {
// CHECK: affine.parallel (%{{.*}}) = (0) to (4) {
// CHECK: affine.parallel (%{{.*}}) = (0) to (2) {
// CHECK: affine.parallel (%[[T1:.*]]) = (0) to (1) {
// CHECK-NEXT: affine.load %[[PM]][%[[T1]]]
// CHECK-NEXT: affine.load %[[PM]][%[[T1]] + 1]
// CHECK: } {pb.map = "thread"}
// CHECK-NEXT: affine.parallel (%[[T0:.*]]) = (0) to (1) {
// CHECK-NEXT: %[[R0:.*]] = affine.load %[[PM]][%[[T0]]]
// CHECK-NEXT: %[[M0:.*]] = affine.load %[[M]][]
// CHECK-NEXT: %[[M1:.*]] = arith.maximumf %[[R0]], %[[M0]] : f32
// CHECK-NEXT: affine.store %[[M1]], %[[M]][]
// CHECK-NEXT: } {pb.map = "thread"}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: affine.parallel (%[[TE:.*]]) = (0) to (64) {
// CHECK-NEXT: affine.for %[[JE:.*]] = #{{.*}}(%[[TE]]) to 300 step 64 {
// CHECK: math.exp
// CHECK-NEXT: affine.store %{{.*}}, %[[T]][%[[JE]]]
// CHECK: } {pb.map = "thread"}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: affine.parallel (%{{.*}}) = (0) to (1) {
// CHECK-NEXT: affine.store %{{.*}}, %[[A]][]
// CHECK: affine.parallel (%[[TS:.*]]) = (0) to (64) {
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: affine.store %[[ZERO]], %[[PS]][%[[TS]]]
// CHECK: arith.addf
// CHECK: affine.load %[[PS]][%{{.*}} + 1]
// CHECK: affine.parallel (%{{.*}}) = (0) to (1) {
// CHECK-NEXT: affine.load %[[PS]]
// CHECK-NEXT: affine.load %[[A]][]
// CHECK-NEXT: arith.addf
// CHECK-NEXT: affine.store %{{.*}}, %[[A]][]
// CHECK: affine.parallel (%[[TD:.*]]) = (0) to (64) {
// CHECK-NEXT: affine.for %[[JD:.*]] = #{{.*}}(%[[TD]]) to 300 step 64 {
// CHECK: arith.divf
// CHECK-NEXT: affine.store %{{.*}}, %arg1[%[[R]], %[[JD]]]
// CHECK: } {pb.map = "thread"}
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: memref.dealloc %[[T]]
// CHECK-NEXT: memref.dealloc %[[M]]
// CHECK-NEXT: memref.dealloc %[[PM]]
// CHECK-NEXT: memref.dealloc %[[PS]]
// CHECK-NEXT: } {pb.map = "block"}
// CHECK-LABEL: func.func @main

// NUM: output 'y': {{.*}}: ok
module attributes {pb.stage = "fuse"} {
  func.func private @k0_softmax(%x: memref<8x300xf32>, %y: memref<8x300xf32>) attributes {pb.kernel} {
    %ninf = arith.constant 0xFF800000 : f32
    %zero = arith.constant 0.000000e+00 : f32
    affine.parallel (%r) = (0) to (8) {
      %a = memref.alloca() : memref<f32>
      %t = memref.alloca() : memref<300xf32>
      %m = memref.alloca() : memref<f32>
      affine.store %ninf, %m[] : memref<f32>
      affine.for %j = 0 to 300 {
        %0 = affine.load %x[%r, %j] : memref<8x300xf32>
        %1 = affine.load %m[] : memref<f32>
        %2 = arith.maximumf %0, %1 : f32
        affine.store %2, %m[] : memref<f32>
      }
      affine.for %j = 0 to 300 {
        %0 = affine.load %x[%r, %j] : memref<8x300xf32>
        %1 = affine.load %m[] : memref<f32>
        %2 = arith.subf %0, %1 : f32
        %3 = math.exp %2 : f32
        affine.store %3, %t[%j] : memref<300xf32>
      }
      affine.store %zero, %a[] : memref<f32>
      affine.for %j = 0 to 300 {
        %0 = affine.load %t[%j] : memref<300xf32>
        %1 = affine.load %a[] : memref<f32>
        %2 = arith.addf %0, %1 : f32
        affine.store %2, %a[] : memref<f32>
      }
      affine.for %j = 0 to 300 {
        %0 = affine.load %t[%j] : memref<300xf32>
        %1 = affine.load %a[] : memref<f32>
        %2 = arith.divf %0, %1 : f32
        affine.store %2, %y[%r, %j] : memref<8x300xf32>
      }
    }
    return
  }
  func.func @main(%x: memref<8x300xf32> {pb.name = "x"}, %y: memref<8x300xf32> {pb.name = "y", pb.output}) {
    call @k0_softmax(%x, %y) : (memref<8x300xf32>, memref<8x300xf32>) -> ()
    return
  }
}
