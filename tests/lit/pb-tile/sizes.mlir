// RUN: pb-tile --dump-sizes %s -o %t.1 2>%t.sizes
// RUN: pb-tile --sizes='{ kernel[0] -> tile[32, 32]; kernel[0] -> block[4, 32] }' --dump-sizes %s -o %t.3 2>%t.sizes3
// RUN: FileCheck --check-prefix=GIVEN %s < %t.sizes3
// RUN: sh -c 'pb-tile --sizes="$(cat %t.sizes3)" %s -o %t.4'
// RUN: diff %t.3 %t.4
// RUN: FileCheck --check-prefix=DUMP %s < %t.sizes
// RUN: sh -c 'pb-tile --sizes="$(cat %t.sizes)" %s -o %t.2'
// RUN: diff %t.1 %t.2
// RUN: pb-tile --sizes='{ kernel[i] -> none[] }' --dump-sizes %s 2>&1 >/dev/null | FileCheck --check-prefix=NONE %s
// RUN: pb-tile --remarks %s 2>&1 >/dev/null | FileCheck --check-prefix=REM %s
// RUN: pb-tile --no-tile %s | FileCheck --check-prefix=NOTILE %s
// RUN: not pb-tile --sizes='{ kernel[0] -> tile[32' %s 2>&1 | FileCheck --check-prefix=PARSE %s
// RUN: not pb-tile --sizes='{ kernel[0] -> tile[32] }' %s 2>&1 | FileCheck --check-prefix=COUNT %s
// RUN: not pb-tile --sizes='{ kernel[0] -> tile[32, 30]; kernel[0] -> block[8, 4] }' %s 2>&1 | FileCheck --check-prefix=MULT %s
// RUN: not pb-tile --sizes='{ kernel[0] -> tile[64, 64]; kernel[0] -> block[64, 32] }' %s 2>&1 | FileCheck --check-prefix=MANY %s
// RUN: not pb-tile --sizes='{ kernel[0] -> tile[32, 32]; kernel[0] -> tile[16, 16] }' %s 2>&1 | FileCheck --check-prefix=TWICE %s
// RUN: not pb-tile --sizes='{ kernel[0] -> reduce[48] }' %s 2>&1 | FileCheck --check-prefix=RED %s

// The sizes pb-tile chooses (or is given), printed by --dump-sizes in
// --sizes form, give the same output when passed back (so any run can be
// reproduced). The body has no loop, so there is nothing to jam: jam[0].

// DUMP: { kernel[0] -> {{(tile|linear|none)}}[{{.*}}]; kernel[1] -> {{.*}} }
// GIVEN: { kernel[0] -> tile[32, 32]; kernel[0] -> block[4, 32]; kernel[0] -> jam[0]; kernel[1] -> {{.*}} }
// NONE: { kernel[0] -> none[]; kernel[1] -> none[] }
// REM: sizes.mlir:[[# @LINE + 13]]:5: remark: mapped as { kernel[0] -> {{.*}} }: {{[0-9]+}} blocks of {{[0-9]+}} threads, occupancy {{.*}}, {{.*}} waves, predicted {{.*}} us
// REM: sizes.mlir:[[# @LINE + 22]]:5: remark: mapped as { kernel[1] -> {{.*}}
// NOTILE-NOT: pb.map
// PARSE: error: --sizes: cannot parse '{ kernel[0] -> tile[32' as an isl union map
// COUNT: sizes.mlir:[[# @LINE + 9]]:5: error: --sizes: kernel[0] needs 2 sizes in block[...] and 2 to 2 in tile[...] (its band is [100, 60], then 0 inner loops)
// MULT: error: --sizes: tile size 30 of dimension 1 is not a positive multiple of its block size 4
// MANY: error: --sizes: 2048 threads per block exceed the target's 1024
// TWICE: error: --sizes: kernel[0] is given one kind of size twice
// RED: error: --sizes: reduce[48] must be a power of 2 from 32 to 1024

module attributes {pb.stage = "fuse"} {
  func.func private @k0_add(%A: memref<100x60xf32>, %B: memref<100x60xf32>) attributes {pb.kernel} {
    %cst = arith.constant 1.000000e+00 : f32
    affine.parallel (%i) = (0) to (100) {
      affine.parallel (%j) = (0) to (60) {
        %a = affine.load %A[%i, %j] : memref<100x60xf32>
        %s = arith.addf %a, %cst : f32
        affine.store %s, %B[%i, %j] : memref<100x60xf32>
      }
    }
    return
  }
  func.func private @k1_neg(%B: memref<100x60xf32>, %C: memref<100x60xf32>) attributes {pb.kernel} {
    affine.parallel (%i) = (0) to (100) {
      affine.parallel (%j) = (0) to (60) {
        %a = affine.load %B[%i, %j] : memref<100x60xf32>
        %s = arith.negf %a : f32
        affine.store %s, %C[%i, %j] : memref<100x60xf32>
      }
    }
    return
  }
  func.func @main(%A: memref<100x60xf32> {pb.name = "A"}, %C: memref<100x60xf32> {pb.name = "C", pb.output}) {
    %B = memref.alloc() : memref<100x60xf32>
    call @k0_add(%A, %B) : (memref<100x60xf32>, memref<100x60xf32>) -> ()
    call @k1_neg(%B, %C) : (memref<100x60xf32>, memref<100x60xf32>) -> ()
    memref.dealloc %B : memref<100x60xf32>
    return
  }
}
