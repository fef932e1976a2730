// RUN: pb-codegen --emit=mlir %s | FileCheck %s
// RUN: pb-codegen %s | FileCheck --check-prefix=PTX %s

// A kernel mapped by an earlier stage is honoured: the block-mapped loop
// becomes the grid (4 blocks of 32x32 tiles), the sibling thread-mapped
// loops share thread.x (1024 threads: the widest loop; the 32x16 copy loop
// runs under a guard), gpu.barrier stays between them, and the workgroup
// buffers become launch attributions (.shared arrays in the PTX).

// CHECK-LABEL: gpu.func @k0_kernel(
// CHECK-SAME: workgroup(%[[AS:.*]] : memref<32x16xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<16x32xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: known_block_size = array<i32: 1024, 1, 1>, known_grid_size = array<i32: 4, 1, 1>
// CHECK: %[[TX:.*]] = gpu.thread_id x
// CHECK: scf.for
// CHECK: arith.cmpi {{.*}}, %{{.*}}, %c0
// CHECK-NEXT: scf.if
// CHECK: memref.store {{.*}}, %[[AS]]
// CHECK: memref.store {{.*}}, %[[BS]]
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: memref.load %[[AS]]
// CHECK: gpu.barrier
// CHECK: arith.maximumf
// CHECK: gpu.return
// CHECK-LABEL: func.func @main(
// CHECK: gpu.launch_func @pb_kernels::@k0_kernel blocks in (%c4, %c1, %c1) threads in (%c1024, %c1, %c1)

// PTX: "grid": [4, 1, 1], "block": [1024, 1, 1], "smem": 0
// PTX: .entry k0_kernel(
// PTX: .maxntid 1024, 1, 1
// PTX: .shared .align 4 .b8 __wg_k0_kernel_0[2048];
// PTX: .shared .align 4 .b8 __wg_k0_kernel_1[2048];
// PTX: bar.sync 0;

module attributes {pb.stage = "smem", pb.source = "mlp.onnx"} {
  func.func private @k0(%A: memref<64x64xf32>, %B: memref<64x64xf32>, %C: memref<64x64xf32>) attributes {pb.kernel} {
    %cst = arith.constant 0.0 : f32
    affine.parallel (%bi, %bj) = (0, 0) to (64, 64) step (32, 32) {
      %As = memref.alloc() : memref<32x16xf32, #gpu.address_space<workgroup>>
      %Bs = memref.alloc() : memref<16x32xf32, #gpu.address_space<workgroup>>
      %acc = memref.alloca() : memref<32x32xf32>
      affine.parallel (%ti, %tj) = (0, 0) to (32, 32) {
        affine.store %cst, %acc[%ti, %tj] : memref<32x32xf32>
      } {pb.map = "thread"}
      affine.for %kk = 0 to 64 step 16 {
        affine.parallel (%ti, %tj) = (0, 0) to (32, 16) {
          %a = affine.load %A[%bi + %ti, %kk + %tj] : memref<64x64xf32>
          affine.store %a, %As[%ti, %tj] : memref<32x16xf32, #gpu.address_space<workgroup>>
          %b = affine.load %B[%kk + %tj, %bj + %ti] : memref<64x64xf32>
          affine.store %b, %Bs[%tj, %ti] : memref<16x32xf32, #gpu.address_space<workgroup>>
        } {pb.map = "thread"}
        gpu.barrier
        affine.parallel (%ti, %tj) = (0, 0) to (32, 32) {
          affine.for %k = 0 to 16 {
            %a = affine.load %As[%ti, %k] : memref<32x16xf32, #gpu.address_space<workgroup>>
            %b = affine.load %Bs[%k, %tj] : memref<16x32xf32, #gpu.address_space<workgroup>>
            %c = affine.load %acc[%ti, %tj] : memref<32x32xf32>
            %p = arith.mulf %a, %b : f32
            %s = arith.addf %c, %p : f32
            affine.store %s, %acc[%ti, %tj] : memref<32x32xf32>
          }
        } {pb.map = "thread"}
        gpu.barrier
      }
      affine.parallel (%ti, %tj) = (0, 0) to (32, 32) {
        %c = affine.load %acc[%ti, %tj] : memref<32x32xf32>
        %r = arith.maximumf %c, %cst : f32
        affine.store %r, %C[%bi + %ti, %bj + %tj] : memref<64x64xf32>
      } {pb.map = "thread"}
      memref.dealloc %As : memref<32x16xf32, #gpu.address_space<workgroup>>
      memref.dealloc %Bs : memref<16x32xf32, #gpu.address_space<workgroup>>
    } {pb.map = "block"}
    return
  }
  func.func @main(%A: memref<64x64xf32> {pb.name = "A"}, %B: memref<64x64xf32> {pb.param = "B"}, %C: memref<64x64xf32> {pb.name = "C", pb.output}) {
    call @k0(%A, %B, %C) : (memref<64x64xf32>, memref<64x64xf32>, memref<64x64xf32>) -> ()
    return
  }
}
