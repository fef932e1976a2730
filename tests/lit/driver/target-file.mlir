// --target-file (docs/targets.md), common to every tool: a user's
// description or a built-in name; without --arch its arch is the PTX
// target, --arch wins over it; a bad file fails with exit 1 before any
// work, naming the file and the field, and nothing is written.
// RUN: pb-codegen --target-file %S/Inputs/target-a100-pcie.json %s | FileCheck --check-prefix=SM80 %s
// RUN: pb-codegen --target-file=h200 %s | FileCheck --check-prefix=SM90 %s
// RUN: pb-codegen --target-file sm_86 %s | FileCheck --check-prefix=SM86 %s
// RUN: pb-codegen --arch=sm_90a --target-file h200 %s | FileCheck --check-prefix=SM90A %s
// RUN: pb-tile --target-file %S/Inputs/target-a100-pcie.json %s | FileCheck --check-prefix=TILE %s
// RUN: not pb-tile --target-file %S/Inputs/target-bad.json %s 2>&1 | FileCheck --check-prefix=BAD %s
// RUN: sh -c 'pb-fuse --target-file %S/Inputs/target-bad.json %s 2>/dev/null; test $? -eq 1'
// RUN: rm -f %t.out && not pb-tile --target-file %S/Inputs/target-bad.json -o %t.out %s 2>/dev/null && test ! -e %t.out
// RUN: not pb-tile --target-file %S/Inputs/target-not-json.json %s 2>&1 | FileCheck --check-prefix=JSON %s
// RUN: not pb-tile --target-file %t.missing.json %s 2>&1 | FileCheck --check-prefix=MISSING %s
// RUN: not pb-tile --target-file h300 %s 2>&1 | FileCheck --check-prefix=NAME %s
// RUN: not pb-tile --target-file %S/Inputs/target-bad.json %S/Inputs/bad.mlir 2>&1 | FileCheck --check-prefix=FIRST %s
// RUN: not pb-run-lite --target-file %S/Inputs/target-bad.json %s 2>&1 | FileCheck --check-prefix=BAD %s
// RUN: pb-mma --help | FileCheck --check-prefix=HELP %s

// SM80: .target sm_80
// SM90: .target sm_90{{$}}
// SM86: .target sm_86
// SM90A: .target sm_90a
// TILE: module attributes {{{.*}}pb.stage = "tile"
// BAD: target-bad.json: error: field 'smem_per_sm': expected a positive integer
// BAD-NOT: error
// JSON: target-not-json.json:4:12: error: invalid JSON: '}' expected near '"warp_size"'
// MISSING: missing.json: error: cannot read: No such file or directory
// NAME: h300: error: cannot read: No such file or directory
// FIRST: target-bad.json: error: field 'smem_per_sm'
// FIRST-NOT: bad.mlir
// HELP: --target-file=FILE

module attributes {pb.stage = "fuse", pb.source = "add.onnx"} {
  func.func private @k0_add(%a: memref<2x300xf32>, %b: memref<2x300xf32>, %c: memref<2x300xf32>) attributes {pb.kernel, pb.nodes = ["Add_0"]} {
    affine.for %i = 0 to 2 {
      affine.for %j = 0 to 300 {
        %x = affine.load %a[%i, %j] : memref<2x300xf32>
        %y = affine.load %b[%i, %j] : memref<2x300xf32>
        %z = arith.addf %x, %y : f32
        affine.store %z, %c[%i, %j] : memref<2x300xf32>
      }
    }
    return
  }
  func.func @main(%a: memref<2x300xf32> {pb.name = "a"}, %b: memref<2x300xf32> {pb.name = "b"}, %c: memref<2x300xf32> {pb.name = "c", pb.output}) {
    call @k0_add(%a, %b, %c) : (memref<2x300xf32>, memref<2x300xf32>, memref<2x300xf32>) -> ()
    return
  }
}
