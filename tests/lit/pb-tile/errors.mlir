// RUN: not pb-tile %s 2>&1 | FileCheck --check-prefix=ERR %s
// RUN: not pb-tile --arch=sm_70 %s 2>&1 | FileCheck --check-prefix=ARCH %s
// RUN: not pb-tile --no-such-option %s 2>&1 | FileCheck --check-prefix=OPT %s

// ERR: errors.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: custom op 'arith.bogus' is unknown
module attributes {pb.stage = "fuse"} {
  func.func @main() {
    arith.bogus
    return
  }
}
// ARCH: pb-tile: error: unknown --arch 'sm_70'
// OPT: pb-tile: error: unknown option '--no-such-option'
