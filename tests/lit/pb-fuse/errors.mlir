// RUN: not pb-fuse --split-input-file %s 2>&1 | FileCheck --check-prefix=ERR %s
// RUN: not pb-fuse --split-input-file %s -o %t.out && not test -e %t.out

// Each error names the value or operation at fault with its position; the
// tool exits with 1 and writes no output.

// ERR: errors.mlir:[[# @LINE + 2]]:19: error: dynamic shape 'tensor<?x4xf32>' is not supported: pb compiles static shapes only
module {
  func.func @main(%x: tensor<?x4xf32> {pb.name = "x"}) -> (tensor<?x4xf32> {pb.name = "y"}) {
    return %x : tensor<?x4xf32>
  }
}

// -----

// ERR: errors.mlir:[[# @LINE + 5]]:10: error: dynamic shape 'tensor<?xf32>' is not supported
module {
  func.func @main(%x: tensor<4xf32> {pb.name = "x"}) -> (tensor<4xf32> {pb.name = "y"}) {
    %c0 = arith.constant 0 : index
    %d = tensor.dim %x, %c0 : tensor<4xf32>
    %e = tensor.empty(%d) : tensor<?xf32>
    %c = tensor.cast %e : tensor<?xf32> to tensor<4xf32>
    return %c : tensor<4xf32>
  }
}

// -----

// ERR: errors.mlir:[[# @LINE + 1]]:1: error: no func.func @main to compile
module {
  func.func @helper() {
    return
  }
}

// -----

// ERR: errors.mlir:[[# @LINE + 2]]:3: error: result #0 of @main has type 'f32': only tensor results are supported
module {
  func.func @main(%x: tensor<4xf32>) -> f32 {
    %c0 = arith.constant 0 : index
    %e = tensor.extract %x[%c0] : tensor<4xf32>
    return %e : f32
  }
}

// -----

// An operation that one-shot bufferization cannot handle.
// ERR: errors.mlir:[[# @LINE + 4]]:10: error: op was not bufferized
// ERR-NEXT: errors.mlir:[[# @LINE + 3]]:10: note: see current operation: {{.*}}shape.shape_of
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = shape.shape_of %x : tensor<4xf32> -> tensor<1xindex>
    %s = tensor.reshape %x(%r) : (tensor<4xf32>, tensor<1xindex>) -> tensor<4xf32>
    return %s : tensor<4xf32>
  }
}
