// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/gen.py %t
// RUN: pb-run %s --input %t/Ah.npy --input %t/Bh.npy --check %t/Ch.npy | FileCheck %s

// A warp-level tensor-core tile as pb-mma writes it (transfer_read,
// vector.contract f16 x f16 into f32, transfer_write) runs on the CPU; f16
// arguments travel through the same memref descriptors.

// CHECK: output 'C': max abs err {{.*}}: ok
#mapA = affine_map<(m, n, k) -> (m, k)>
#mapB = affine_map<(m, n, k) -> (k, n)>
#mapC = affine_map<(m, n, k) -> (m, n)>
module attributes {pb.stage = "mma"} {
  func.func @main(%A: memref<16x16xf16> {pb.name = "A"}, %B: memref<16x16xf16> {pb.name = "B"},
                  %C: memref<16x16xf32> {pb.name = "C", pb.output}) {
    %c0 = arith.constant 0 : index
    %h = arith.constant 0.0 : f16
    %f = arith.constant 0.0 : f32
    %a = vector.transfer_read %A[%c0, %c0], %h {in_bounds = [true, true]} : memref<16x16xf16>, vector<16x16xf16>
    %b = vector.transfer_read %B[%c0, %c0], %h {in_bounds = [true, true]} : memref<16x16xf16>, vector<16x16xf16>
    %c = vector.transfer_read %C[%c0, %c0], %f {in_bounds = [true, true]} : memref<16x16xf32>, vector<16x16xf32>
    %d = vector.contract {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %c : vector<16x16xf16>, vector<16x16xf16> into vector<16x16xf32>
    vector.transfer_write %d, %C[%c0, %c0] {in_bounds = [true, true]} : vector<16x16xf32>, memref<16x16xf32>
    return
  }
}
