// RUN: not pb-tile --split-input-file %s 2>&1 | FileCheck --check-prefix=ERR %s
// RUN: not pb-tile --split-input-file %s -o %t.out
// RUN: not test -e %t.out
// RUN: sed -n '/^\/\/ OK-BEGIN/,/^\/\/ OK-END/p' %s | pb-tile --split-input-file | FileCheck %s

// The shared driver splits at '// -----', keeps the file's line numbers in
// diagnostics, goes on after a failing chunk, and writes nothing when any
// chunk failed.

// OK-BEGIN
// CHECK: module attributes {pb.stage = "tile"}
// CHECK: func.func @first
// CHECK: // -----
// CHECK: module attributes {pb.stage = "tile"}
// CHECK: func.func @second
module attributes {pb.stage = "fuse"} {
  func.func @first() {
    return
  }
}
// -----
module attributes {pb.stage = "fuse"} {
  func.func @second() {
    return
  }
}
// OK-END
// -----

// ERR: split-input-file.mlir:[[# @LINE + 3]]:5: error: custom op 'arith.nope' is unknown
module attributes {pb.stage = "fuse"} {
  func.func @third() {
    arith.nope
    return
  }
}
// -----
// ERR: split-input-file.mlir:[[# @LINE + 3]]:5: error: custom op 'arith.nada' is unknown
module attributes {pb.stage = "fuse"} {
  func.func @fourth() {
    arith.nada
    return
  }
}
