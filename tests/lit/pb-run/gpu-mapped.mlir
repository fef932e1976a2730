// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/gen.py %t
// RUN: pb-run %s --input %t/A.npy --input %t/B.npy --check %t/C.npy --rtol 0 --atol 0 | FileCheck %s

// Output of a later stage runs on the CPU too: gpu.barrier is dropped and
// workgroup memory becomes ordinary memory, so sibling thread-mapped loops
// run one after another, which is their semantics between barriers. This is
// C = relu(A x B), 64x64x64, tiled, mapped and promoted to shared memory
// (../../../../shared/examples/ir/mapped-smem-matmul-relu.mlir).

// CHECK: output 'C': max abs err 0.0e+00, max rel err 0.0e+00 (rtol 0e+00, atol 0e+00): ok
module attributes {pb.stage = "smem"} {
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
  func.func @main(%A: memref<64x64xf32> {pb.name = "A"}, %B: memref<64x64xf32> {pb.name = "B"},
                  %C: memref<64x64xf32> {pb.name = "C", pb.output}) {
    call @k0(%A, %B, %C) : (memref<64x64xf32>, memref<64x64xf32>, memref<64x64xf32>) -> ()
    return
  }
}
