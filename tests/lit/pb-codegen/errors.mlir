// RUN: not pb-codegen --split-input-file %s 2>&1 | FileCheck --check-prefix=ERR %s
// RUN: not pb-codegen --split-input-file %s -o %t.out --plan %t.json 2>&1 | FileCheck --check-prefix=ERR %s
// RUN: not test -e %t.out
// RUN: not test -e %t.json
// RUN: not pb-codegen --emit=llvm %s 2>&1 | FileCheck --check-prefix=EMIT %s
// RUN: not pb-codegen --emit=llvm %s -o %t.emit 2>&1
// RUN: not test -e %t.emit

// Each error is one line naming the operation (or option) at fault, the
// exit status is non-zero and nothing is written.

// EMIT: pb-codegen: error: bad value 'llvm' for option '--emit' (expected ptx or mlir)

// An operation that cannot be lowered to the GPU.
// ERR: errors.mlir:[[# @LINE + 3]]:10: error: cannot lower 'tensor.empty' to the GPU
module attributes {pb.stage = "fuse"} {
  func.func private @k0(%a: memref<4xf32>) attributes {pb.kernel} {
    %t = tensor.empty() : tensor<4xf32>
    return
  }
  func.func @main(%a: memref<4xf32> {pb.name = "a"}) {
    call @k0(%a) : (memref<4xf32>) -> ()
    return
  }
}

// -----

// No @main.
// ERR: errors.mlir:[[# @LINE + 1]]:1: error: no func.func @main in the module
module attributes {pb.stage = "fuse"} {
  func.func private @k0(%a: memref<4xf32>) attributes {pb.kernel} {
    return
  }
}

// -----

// Graph inputs and outputs need static shapes.
// ERR: errors.mlir:[[# @LINE + 2]]:3: error: argument 0 of @main: expected a memref with a static shape and the identity layout
module attributes {pb.stage = "fuse"} {
  func.func @main(%a: memref<?xf32> {pb.name = "a"}) {
    return
  }
}

// -----

// A thread-mapped loop wider than a block.
// ERR: errors.mlir:[[# @LINE + 4]]:7: error: thread-mapped loop of 2048 iterations exceeds 1024 threads per block (NVIDIA H100 SXM5 80GB)
module attributes {pb.stage = "smem"} {
  func.func private @k0(%a: memref<2048xf32>) attributes {pb.kernel} {
    affine.parallel (%b) = (0) to (1) {
      affine.parallel (%t) = (0) to (2048) {
        %v = affine.load %a[%t] : memref<2048xf32>
        affine.store %v, %a[%t] : memref<2048xf32>
      } {pb.map = "thread"}
    } {pb.map = "block"}
    return
  }
  func.func @main(%a: memref<2048xf32> {pb.name = "a", pb.output}) {
    call @k0(%a) : (memref<2048xf32>) -> ()
    return
  }
}

// -----

// A mapping pb-codegen does not know (yet).
// ERR: errors.mlir:[[# @LINE + 4]]:7: error: cannot lower a loop mapped to 'vector' inside a block
module attributes {pb.stage = "smem"} {
  func.func private @k0(%a: memref<64xf32>) attributes {pb.kernel} {
    affine.parallel (%b) = (0) to (1) {
      affine.parallel (%t) = (0) to (64) {
        %v = affine.load %a[%t] : memref<64xf32>
        affine.store %v, %a[%t] : memref<64xf32>
      } {pb.map = "vector"}
    } {pb.map = "block"}
    return
  }
  func.func @main(%a: memref<64xf32> {pb.name = "a", pb.output}) {
    call @k0(%a) : (memref<64xf32>) -> ()
    return
  }
}

// -----

// A block-mapped loop whose bounds are not constants.
// ERR: errors.mlir:[[# @LINE + 3]]:5: error: block-mapped loop needs constant bounds
module attributes {pb.stage = "smem"} {
  func.func private @k0(%a: memref<64xf32>, %n: index) attributes {pb.kernel} {
    affine.parallel (%b) = (0) to (symbol(%n)) {
      %v = affine.load %a[%b] : memref<64xf32>
      affine.store %v, %a[%b] : memref<64xf32>
    } {pb.map = "block"}
    return
  }
  func.func @main(%a: memref<64xf32> {pb.name = "a", pb.output}) {
    %n = arith.constant 64 : index
    call @k0(%a, %n) : (memref<64xf32>, index) -> ()
    return
  }
}

// -----

// @main returns its outputs through pb.output arguments.
// ERR: errors.mlir:[[# @LINE + 2]]:3: error: @main must return nothing (outputs are arguments with pb.output)
module attributes {pb.stage = "fuse"} {
  func.func @main(%a: memref<4xf32> {pb.name = "a"}) -> memref<4xf32> {
    return %a : memref<4xf32>
  }
}

// -----

// A dynamically sized buffer allocated inside a kernel.
// ERR: errors.mlir:[[# @LINE + 5]]:12: error: cannot lower a dynamically sized allocation inside a kernel
module attributes {pb.stage = "fuse"} {
  func.func private @k0(%a: memref<4xf32>) attributes {pb.kernel} {
    affine.for %i = 0 to 4 {
      %n = affine.apply affine_map<(d) -> (d + 1)>(%i)
      %t = memref.alloc(%n) : memref<?xf32>
      memref.dealloc %t : memref<?xf32>
    }
    return
  }
  func.func @main(%a: memref<4xf32> {pb.name = "a"}) {
    call @k0(%a) : (memref<4xf32>) -> ()
    return
  }
}

// -----

// A loop shared by the warps (pb.share) whose trip count is not their
// number: warp w could not run iteration w.
// ERR: errors.mlir:[[# @LINE + 5]]:9: error: a loop shared by the warps (pb.share) must run from 0 to their number (4) by 1
module attributes {pb.stage = "smem"} {
  func.func private @k0(%a: memref<256xf32>) attributes {pb.kernel} {
    affine.parallel (%b) = (0) to (1) {
      affine.parallel (%w) = (0) to (4) {
        affine.for %s = 0 to 2 {
          affine.parallel (%l) = (0) to (32) {
            %i = affine.apply affine_map<(s, l) -> (s * 32 + l)>(%s, %l)
            %v = affine.load %a[%i] : memref<256xf32>
            affine.store %v, %a[%i] : memref<256xf32>
          } {pb.map = "thread"}
        } {pb.share}
      } {pb.map = "warp"}
    } {pb.map = "block"}
    return
  }
  func.func @main(%a: memref<256xf32> {pb.name = "a", pb.output}) {
    call @k0(%a) : (memref<256xf32>) -> ()
    return
  }
}
