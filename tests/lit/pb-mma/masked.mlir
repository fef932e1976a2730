// RUN: split-file %s %t
// C's 40 rows are not a multiple of the 32-row block tile: the last
// block's fragments are masked (transfer_read/_write with in_bounds
// false along the rows); pb-smem's copies fill the rows past the end with
// zeros; pb-codegen guards each lane's loads and stores.
// RUN: pb-mma --remarks --sizes='{ kernel[0] -> mma[32, 16, 16, 8] }' %t/mm.mlir -o %t/mma.mlir 2>&1 | FileCheck --check-prefix=REM %s
// RUN: FileCheck %s < %t/mma.mlir
// RUN: pb-run --random=1 --output %t/ref %t/mm.mlir
// RUN: pb-run --random=1 --check %t/ref/C.npy %t/mma.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem %t/mma.mlir -o %t/s.mlir
// RUN: FileCheck --check-prefix=SMEM %s < %t/s.mlir
// RUN: pb-run --random=1 --check %t/ref/C.npy %t/s.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=1 %t/mma.mlir | pb-run --random=1 --check %t/ref/C.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-codegen --arch=sm_80 %t/s.mlir | FileCheck --check-prefix=PTX %s
// RUN: pb-smem --no-smem %t/mma.mlir | pb-codegen --arch=sm_80 | FileCheck --check-prefix=PTX %s
// And the cost model's own choice for these rows.
// RUN: pb-mma %t/mm.mlir | pb-run --random=1 --check %t/ref/C.npy - | FileCheck --check-prefix=NUM %s

// REM: remark: on tensor cores: mma.sync m16n8k16 f16 -> f32, block tile 32x16, warp tile 16x8 (4 warps)
// CHECK: affine.parallel (%{{.*}}, %{{.*}}) = (0, 0) to (64, 16) step (32, 16) {
// CHECK: vector.transfer_read %arg0[{{.*}} {in_bounds = [false, true]} : memref<40x32xf16>, vector<16x16xf16>
// CHECK: vector.transfer_read %arg1[{{.*}} {in_bounds = [true, true]} : memref<32x16xf16>, vector<16x8xf16>
// CHECK: vector.transfer_write {{.*}} {in_bounds = [false, true]} : vector<16x8xf16>, memref<40x16xf16>
// SMEM: affine.if
// SMEM: affine.vector_load %arg0
// SMEM: } else {
// SMEM: arith.constant dense<0.000000e+00> : vector<8xf16>
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX: setp
// NUM: output 'C': {{.*}}: ok

//--- mm.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_mm(%A: memref<40x32xf16>, %B: memref<32x16xf16>, %C: memref<40x16xf16>) attributes {pb.kernel, pb.nodes = ["MatMul_0"]} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (40) {
      affine.parallel (%j) = (0) to (16) {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 32 {
          %a = affine.load %A[%i, %k] : memref<40x32xf16>
          %b = affine.load %B[%k, %j] : memref<32x16xf16>
          %s = affine.load %acc[] : memref<f32>
          %ae = arith.extf %a : f16 to f32
          %be = arith.extf %b : f16 to f32
          %p = arith.mulf %ae, %be : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %acc[] : memref<f32>
        }
        %r = affine.load %acc[] : memref<f32>
        %rh = arith.truncf %r : f32 to f16
        affine.store %rh, %C[%i, %j] : memref<40x16xf16>
      }
    }
    return
  }
  func.func @main(%A: memref<40x32xf16> {pb.name = "A"}, %B: memref<32x16xf16> {pb.name = "B"}, %C: memref<40x16xf16> {pb.name = "C", pb.output}) {
    call @k0_mm(%A, %B, %C) : (memref<40x32xf16>, memref<32x16xf16>, memref<40x16xf16>) -> ()
    return
  }
}
