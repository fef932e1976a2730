// RUN: split-file %s %t
// RUN: pb-mma --arch=sm_90a --remarks %t/mm.mlir -o %t/mm.mma.mlir 2>&1 | FileCheck --check-prefix=REM %s
// RUN: FileCheck --check-prefix=OUT %s < %t/mm.mma.mlir
// RUN: pb-mma --arch=sm_90a --remarks --sizes='{ kernel[0] -> mma[128, 128, 16, 128] }' %t/mm.mlir -o %t/two.mlir 2>&1 | FileCheck --check-prefix=TWO %s
// RUN: pb-mma --arch=sm_90a --remarks %t/m96.mlir -o /dev/null 2>&1 | FileCheck --check-prefix=M96 %s
// RUN: pb-mma --arch=sm_90a --precision=fp16 --remarks %t/m32.mlir -o /dev/null 2>&1 | FileCheck --check-prefix=F32 %s
// RUN: pb-mma --arch=sm_90 --remarks %t/mm.mlir -o /dev/null 2>&1 | FileCheck --check-prefix=SM90 %s

// The numbers: one and two warpgroups per block, staged, on the CPU.
// RUN: pb-run --random=1 --output %t/ref %t/mm.mlir
// RUN: pb-run --random=1 --check %t/ref/C.npy %t/mm.mma.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --arch=sm_90a %t/two.mlir -o %t/two.s.mlir
// RUN: pb-run --random=1 --check %t/ref/C.npy %t/two.s.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-codegen --arch=sm_90a %t/two.s.mlir | FileCheck --check-prefix=PTX %s

// pb-mma's tiles for wgmma on sm_90a (docs/pb-mma.md, "wgmma on
// sm_90a"): warps of 16 rows by the block's columns, stacked along C's
// rows, so that warps 4g .. 4g+3 hold one m64nNk16 accumulator. 128x128
// gets 64x64 blocks (4 of them; 64x128 would give 2, too few for 132
// SMs); --sizes may ask for two warpgroups of 64x128.
// REM: mm.mlir:4:5: remark: on tensor cores: wgmma m64n64k16 f16 -> f32, block tile 64x64, 1 warpgroup(s) of 4 warps (warp tile 16x64)
// TWO: remark: on tensor cores: wgmma m64n128k16 f16 -> f32, block tile 128x128, 2 warpgroup(s) of 4 warps (warp tile 16x128)
// OUT: affine.parallel (%[[I:.*]], %[[J:.*]]) = (0, 0) to (128, 128) step (64, 64) {
// OUT: affine.parallel (%[[WM:.*]], %[[WN:.*]]) = (0, 0) to (64, 64) step (16, 64) {
// OUT: %{{.*}}:8 = affine.for %{{.*}} = 0 to 128 step 16 iter_args(
// OUT-COUNT-8: vector.contract
// OUT-NOT: vector.contract
// OUT: } {pb.map = "warp"}

// C's rows not whole warpgroups (96) take wgmma's tiles with the last
// block's rows masked (tests/lit/pb-mma/wgmma-masked.mlir). What does
// not go to wgmma keeps mma.sync's tiles, and says why: f32 operands
// rounded in registers.
// M96: remark: on tensor cores: wgmma m64n64k16 f16 -> f32, block tile 64x64, 1 warpgroup(s) of 4 warps (warp tile 16x64)
// F32: remark: on tensor cores: mma.sync m16n8k16 f16 -> f32, {{.*}}; not wgmma: wgmma takes f16 or bf16 operands from shared memory
// SM90: remark: on tensor cores: mma.sync m16n8k16 f16 -> f32, block tile {{[0-9]+x[0-9]+}}, warp tile {{[0-9]+x[0-9]+}} ({{[0-9]+}} warps){{$}}

// NUM: ok

// Two warpgroups: each its own A rows, the same B; k-tiles of 64 in 2
// stages (64 KiB: dynamic shared memory with the opt-in, the plan's
// "smem"), so four wgmma per k-tile.
// PTX: "block": [256, 1, 1], "smem": 65536,
// PTX: .extern .shared .align 1024 .b8 pb_dyn_smem[];
// PTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// PTX-NOT: wgmma.mma_async

//--- mm.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_gemm(%A: memref<128x128xf16>, %B: memref<128x128xf16>, %bias: memref<128xf16>, %C: memref<128x128xf16>) attributes {pb.kernel, pb.nodes = ["Gemm_0"]} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (128) {
      affine.parallel (%j) = (0) to (128) {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 128 {
          %a = affine.load %A[%i, %k] : memref<128x128xf16>
          %b = affine.load %B[%k, %j] : memref<128x128xf16>
          %s = affine.load %acc[] : memref<f32>
          %ae = arith.extf %a : f16 to f32
          %be = arith.extf %b : f16 to f32
          %p = arith.mulf %ae, %be : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %acc[] : memref<f32>
        }
        %r = affine.load %acc[] : memref<f32>
        %rh = arith.truncf %r : f32 to f16
        %bv = affine.load %bias[%j] : memref<128xf16>
        %y = arith.addf %rh, %bv : f16
        affine.store %y, %C[%i, %j] : memref<128x128xf16>
      }
    }
    return
  }
  func.func @main(%A: memref<128x128xf16> {pb.name = "A"}, %B: memref<128x128xf16> {pb.name = "B"}, %bias: memref<128xf16> {pb.name = "bias"}, %C: memref<128x128xf16> {pb.name = "C", pb.output}) {
    call @k0_gemm(%A, %B, %bias, %C) : (memref<128x128xf16>, memref<128x128xf16>, memref<128xf16>, memref<128x128xf16>) -> ()
    return
  }
}
//--- m96.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_gemm(%A: memref<96x128xf16>, %B: memref<128x128xf16>, %bias: memref<128xf16>, %C: memref<96x128xf16>) attributes {pb.kernel, pb.nodes = ["Gemm_0"]} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (96) {
      affine.parallel (%j) = (0) to (128) {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 128 {
          %a = affine.load %A[%i, %k] : memref<96x128xf16>
          %b = affine.load %B[%k, %j] : memref<128x128xf16>
          %s = affine.load %acc[] : memref<f32>
          %ae = arith.extf %a : f16 to f32
          %be = arith.extf %b : f16 to f32
          %p = arith.mulf %ae, %be : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %acc[] : memref<f32>
        }
        %r = affine.load %acc[] : memref<f32>
        %rh = arith.truncf %r : f32 to f16
        %bv = affine.load %bias[%j] : memref<128xf16>
        %y = arith.addf %rh, %bv : f16
        affine.store %y, %C[%i, %j] : memref<96x128xf16>
      }
    }
    return
  }
  func.func @main(%A: memref<96x128xf16> {pb.name = "A"}, %B: memref<128x128xf16> {pb.name = "B"}, %bias: memref<128xf16> {pb.name = "bias"}, %C: memref<96x128xf16> {pb.name = "C", pb.output}) {
    call @k0_gemm(%A, %B, %bias, %C) : (memref<96x128xf16>, memref<128x128xf16>, memref<128xf16>, memref<96x128xf16>) -> ()
    return
  }
}
//--- m32.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_gemm(%A: memref<128x128xf32>, %B: memref<128x128xf32>, %bias: memref<128xf32>, %C: memref<128x128xf32>) attributes {pb.kernel, pb.nodes = ["Gemm_0"]} {
    %z = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (128) {
      affine.parallel (%j) = (0) to (128) {
        %acc = memref.alloca() : memref<f32>
        affine.store %z, %acc[] : memref<f32>
        affine.for %k = 0 to 128 {
          %a = affine.load %A[%i, %k] : memref<128x128xf32>
          %b = affine.load %B[%k, %j] : memref<128x128xf32>
          %s = affine.load %acc[] : memref<f32>
         
          %p = arith.mulf %a, %b : f32
          %t = arith.addf %s, %p : f32
          affine.store %t, %acc[] : memref<f32>
        }
        %r = affine.load %acc[] : memref<f32>
        %bv = affine.load %bias[%j] : memref<128xf32>
        %y = arith.addf %r, %bv : f32
        affine.store %y, %C[%i, %j] : memref<128x128xf32>
      }
    }
    return
  }
  func.func @main(%A: memref<128x128xf32> {pb.name = "A"}, %B: memref<128x128xf32> {pb.name = "B"}, %bias: memref<128xf32> {pb.name = "bias"}, %C: memref<128x128xf32> {pb.name = "C", pb.output}) {
    call @k0_gemm(%A, %B, %bias, %C) : (memref<128x128xf32>, memref<128x128xf32>, memref<128xf32>, memref<128x128xf32>) -> ()
    return
  }
}
