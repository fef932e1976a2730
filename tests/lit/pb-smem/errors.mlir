// RUN: not pb-smem %s 2>&1 | FileCheck --check-prefix=ERR %s
// RUN: not pb-smem %s -o %t.out 2>&1 | FileCheck --check-prefix=ERR %s
// RUN: not test -e %t.out

// A module that parses but does not verify: the error names the op and
// nothing is written.
// ERR: errors.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'func.call' op 'k9' does not reference a valid function
module attributes {pb.stage = "mma"} {
  func.func @main() {
    func.call @k9() : () -> ()
    return
  }
}
