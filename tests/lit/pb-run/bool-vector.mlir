// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np, sys; np.save(sys.argv[1], np.array([[i %% 3 == 0 for i in range(16)], [i %% 5 == 0 for i in range(16)]]))" %t/m.npy
// RUN: pb-run %s --input %t/m.npy --print | FileCheck %s

// A vector read of booleans (a Where's condition as pb-mma reads it) on
// the CPU: upstream lowers it to a load of bit-packed <N x i1> where the
// memref holds a byte per element; pb-run reads each element (and the
// padding value past the end: in_bounds false along the columns).

// CHECK: output 'o' f32 [2, 16]:
// CHECK-NEXT: {{\[\[}}1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1],
// CHECK-NEXT: {{\[}}1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]]
// CHECK-NEXT: output 'p' f32 [2, 8]:
// CHECK-NEXT: {{\[\[}}0, 0, 1, 0, 0, 1, 0, 0],
// CHECK-NEXT: {{\[}}1, 0, 0, 0, 0, 1, 0, 0]]
module attributes {pb.stage = "mma"} {
  func.func @main(%m: memref<2x16xi1> {pb.name = "m"},
                  %o: memref<2x16xf32> {pb.name = "o", pb.output},
                  %p: memref<2x8xf32> {pb.name = "p", pb.output}) {
    %f = arith.constant false
    %one = arith.constant dense<1.0> : vector<2x16xf32>
    %zero = arith.constant dense<0.0> : vector<2x16xf32>
    %one8 = arith.constant dense<1.0> : vector<2x8xf32>
    %zero8 = arith.constant dense<0.0> : vector<2x8xf32>
    %c0 = arith.constant 0 : index
    %v = vector.transfer_read %m[%c0, %c0], %f {in_bounds = [true, true]} : memref<2x16xi1>, vector<2x16xi1>
    %s = arith.select %v, %one, %zero : vector<2x16xi1>, vector<2x16xf32>
    vector.transfer_write %s, %o[%c0, %c0] {in_bounds = [true, true]} : vector<2x16xf32>, memref<2x16xf32>
    // both rows from column 10 on, transposed (the vector's rows along
    // the memref's columns), false past column 15
    %c10 = arith.constant 10 : index
    %w = vector.transfer_read %m[%c0, %c10], %f {in_bounds = [false, true], permutation_map = affine_map<(d0, d1) -> (d1, d0)>} : memref<2x16xi1>, vector<8x2xi1>
    %wt = vector.transpose %w, [1, 0] : vector<8x2xi1> to vector<2x8xi1>
    %t = arith.select %wt, %one8, %zero8 : vector<2x8xi1>, vector<2x8xf32>
    vector.transfer_write %t, %p[%c0, %c0] {in_bounds = [true, true]} : vector<2x8xf32>, memref<2x8xf32>
    return
  }
}
