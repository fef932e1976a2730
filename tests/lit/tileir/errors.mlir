// RUN: not pb-codegen --backend=tile --emit=tileirbc --split-input-file %s 2>&1 | FileCheck %s
// RUN: env PB_TILEIRAS=/nonexistent/tileiras not pb-codegen --backend=tile %S/roundtrip.mlir 2>&1 | FileCheck --check-prefix=TOOL %s
// RUN: not pb-codegen --backend=tile --tileiras=/nonexistent/tileiras %S/roundtrip.mlir 2>&1 | FileCheck --check-prefix=GIVEN %s
// RUN: pb-tile %S/roundtrip.mlir | not pb-codegen --backend=tile --emit=tileirbc 2>&1 | FileCheck --check-prefix=STAGE %s
// RUN: not pb-codegen --backend=cuda %S/roundtrip.mlir 2>&1 | FileCheck --check-prefix=BACKEND %s
// RUN: not pb-codegen --backend=tile --opt-level=7 %S/roundtrip.mlir 2>&1 | FileCheck --check-prefix=OPT %s
// RUN: not pb-codegen --emit=tileirbc %S/roundtrip.mlir 2>&1 | FileCheck --check-prefix=EMIT %s
// RUN: not pb-codegen --tile-tma %S/roundtrip.mlir 2>&1 | FileCheck --check-prefix=TMA %s

// TOOL: error: --backend=tile: '/nonexistent/tileiras' is not an executable tileiras
// GIVEN: error: --backend=tile: '/nonexistent/tileiras' is not an executable tileiras
// STAGE: error: --backend=tile translates the kernels of pb-fuse; this module is at the tile stage
// BACKEND: pb-codegen: error: bad value 'cuda' for option '--backend' (expected ptx or tile)
// OPT: pb-codegen: error: bad value '7' for option '--opt-level' (expected 0 to 3)
// EMIT: pb-codegen: error: bad value 'tileirbc' for option '--emit' (expected ptx or mlir)
// TMA: pb-codegen: error: --tile-tma needs --backend=tile

// A loop-carried value that is not a reduction (the running sum before
// each step written out: an exclusive scan).
// CHECK: errors.mlir:[[@LINE+9]]:{{[0-9]+}}: error: cannot translate 'affine.store' to Tile IR: stores a value read in a loop it does not follow into another buffer (an exclusive scan: not translated)
module attributes {pb.stage = "fuse"} {
  func.func private @k0_scan(%x: memref<4x16xf32>, %y: memref<4x16xf32>) attributes {pb.kernel} {
    %zero = arith.constant 0.000000e+00 : f32
    affine.parallel (%r) = (0) to (4) {
      %acc = memref.alloca() : memref<f32>
      affine.store %zero, %acc[] : memref<f32>
      affine.for %c = 0 to 16 {
        %1 = affine.load %acc[] : memref<f32>
        affine.store %1, %y[%r, %c] : memref<4x16xf32>
        %0 = affine.load %x[%r, %c] : memref<4x16xf32>
        %2 = arith.addf %0, %1 : f32
        affine.store %2, %acc[] : memref<f32>
      }
    }
    return
  }
  func.func @main(%x: memref<4x16xf32> {pb.name = "x"}, %y: memref<4x16xf32> {pb.name = "y", pb.output}) {
    call @k0_scan(%x, %y) : (memref<4x16xf32>, memref<4x16xf32>) -> ()
    return
  }
}

// -----

// An operation with no Tile IR translation (count leading zeros).
// CHECK: errors.mlir:[[@LINE+5]]:{{[0-9]+}}: error: cannot translate 'math.ctlz' to Tile IR: no Tile IR translation of this operation
module attributes {pb.stage = "fuse"} {
  func.func private @k0_clz(%x: memref<16xi32>, %y: memref<16xi32>) attributes {pb.kernel} {
    affine.parallel (%i) = (0) to (16) {
      %0 = affine.load %x[%i] : memref<16xi32>
      %1 = math.ctlz %0 : i32
      affine.store %1, %y[%i] : memref<16xi32>
    }
    return
  }
  func.func @main(%x: memref<16xi32> {pb.name = "x"}, %y: memref<16xi32> {pb.name = "y", pb.output}) {
    call @k0_clz(%x, %y) : (memref<16xi32>, memref<16xi32>) -> ()
    return
  }
}
