// RUN: sed -n '/^\/\/ A-BEGIN/,/^\/\/ A-END/p' %s > %t.a.mlir
// RUN: not pb-run %t.a.mlir --random 2>&1 | FileCheck --check-prefix=DYN %s
// RUN: sed -n '/^\/\/ B-BEGIN/,/^\/\/ B-END/p' %s > %t.b.mlir
// RUN: not pb-run %t.b.mlir --random 2>&1 | FileCheck --check-prefix=RES %s
// RUN: sed -n '/^\/\/ C-BEGIN/,/^\/\/ C-END/p' %s > %t.c.mlir
// RUN: not pb-run %t.c.mlir --random 2>&1 | FileCheck --check-prefix=NOMAIN %s

// @main must follow the contract of pb-fuse's output: memrefs of static
// shape and identity layout, no results.

// A-BEGIN
// DYN: error: argument 0 of @main has a dynamic shape: memref<?xf32> (run pb-fuse first?)
module attributes {pb.stage = "fuse"} {
  func.func @main(%x: memref<?xf32> {pb.name = "x"}) {
    return
  }
}
// A-END
// B-BEGIN
// RES: error: @main returns values; expected outputs as pb.output arguments (run pb-fuse first?)
module attributes {pb.stage = "fuse"} {
  func.func @main(%x: memref<4xf32> {pb.name = "x"}) -> memref<4xf32> {
    return %x : memref<4xf32>
  }
}
// B-END
// C-BEGIN
// NOMAIN: error: no func.func @main in the module
module attributes {pb.stage = "fuse"} {
  func.func @other() {
    return
  }
}
// C-END
