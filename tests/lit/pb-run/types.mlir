// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/gen.py %t
// RUN: pb-run %s --input %t/ints.npy --input %t/mask.npy --check %t/isum.npy --check %t/ipos.npy --rtol 0 --atol 0 | FileCheck %s
// RUN: pb-run %s --input %t/ints.npy --input %t/mask.npy --print | FileCheck --check-prefix=PRINT %s
// RUN: pb-run %s --random=5 --output %t/out
// RUN: %python -c "import numpy as np, sys; a = np.load(sys.argv[1]); b = np.load(sys.argv[2]); assert a.dtype == np.int64 and b.dtype == np.bool_, (a.dtype, b.dtype); print('ok')" %t/out/sum.npy %t/out/pos.npy | FileCheck --check-prefix=RAND %s

// i64 and bool (i1) arguments and results go through the same memref
// descriptors as f32; large i64 values survive exactly.

// CHECK: output 'sum': max abs err 0.0e+00, {{.*}}: ok
// CHECK: output 'pos': max abs err 0.0e+00, {{.*}}: ok
// PRINT: output 'sum' i64 [1, 4]:
// PRINT-NEXT: {{\[\[}}6, 0, 10, 2199023255552]]
// PRINT-NEXT: output 'pos' bool [1, 4]:
// PRINT-NEXT: {{\[\[}}True, False, True, True]]
// RAND: ok
module attributes {pb.stage = "fuse"} {
  func.func @main(%x: memref<1x4xi64> {pb.name = "x"}, %m: memref<1x4xi1> {pb.name = "m"},
                  %s: memref<1x4xi64> {pb.name = "sum", pb.output},
                  %p: memref<1x4xi1> {pb.name = "pos", pb.output}) {
    %zero = arith.constant 0 : i64
    affine.for %j = 0 to 4 {
      %v = affine.load %x[0, %j] : memref<1x4xi64>
      %k = affine.load %m[0, %j] : memref<1x4xi1>
      %d = arith.addi %v, %v : i64
      %r = arith.select %k, %d, %zero : i64
      affine.store %r, %s[0, %j] : memref<1x4xi64>
      %g = arith.cmpi sgt, %v, %zero : i64
      affine.store %g, %p[0, %j] : memref<1x4xi1>
    }
    return
  }
}
