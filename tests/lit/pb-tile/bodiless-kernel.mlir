// RUN: not pb-tile %s 2>&1 | FileCheck %s
// RUN: not pb-codegen %s 2>&1 | FileCheck %s
// A kernel function must have a body (docs/ir-contract.md): a declaration
// marked pb.kernel in a fuse-stage module is one error line, not a crash
// (found by the MLIR fuzz target, tests/fuzz/fuzz_mlir.c).

// CHECK: bodiless-kernel.mlir:[[# @LINE + 3]]:3: error: kernel function has no body
// CHECK-NOT: error
module attributes {pb.stage = "fuse"} {
  func.func private @k0_copy(%arg0: memref<2x2xf32>, %arg1: memref<2x2xf32>) attributes {pb.kernel}
  func.func @main(%x: memref<2x2xf32> {pb.name = "x"}, %y: memref<2x2xf32> {pb.name = "y", pb.output}) {
    call @k0_copy(%x, %y) : (memref<2x2xf32>, memref<2x2xf32>) -> ()
    return
  }
}
