// REQUIRES: tileirdisasm
// RUN: pb-codegen --backend=tile --emit=tileirbc --arch=sm_80 %s -o %t.bc
// RUN: %tileirdisasm %t.bc | FileCheck %s
// RUN: rm -rf %t.d && mkdir -p %t.d && %python %S/Inputs/roundtrip_ref.py %t.d
// RUN: pb-run %s --input %t.d/a.npy --input %t.d/b.npy --input %t.d/ma.npy --input %t.d/mb.npy --input %t.d/x.npy --check %t.d/c.npy --check %t.d/y.npy --check %t.d/s.npy | FileCheck --check-prefix=NUM %s

// The block-level programs of three fused kernels written as Tile IR
// bytecode by pb's writer (lib/tileir) and read back by NVIDIA's
// tileirdisasm; the same module, the program the bytecode translates,
// runs on the CPU against numpy (NUM).

// k0: bias + relu on 100x60 in 64x64 tiles (4096 elements): a grid of
// 2 blocks along i; the bias b[j] is a 64-tile broadcast to 64x64. The
// buffers are whole allocations at every launch: 16-byte aligned, which
// tileiras is told on sm_80 (not on sm_90, where it would use TMA).
// CHECK-LABEL: entry @k0_bias_relu(%arg0: tile<ptr<f32>>, %arg1: tile<ptr<f32>>, %arg2: tile<ptr<f32>>)
// CHECK: %[[A0:.*]] = assume div_by<16>, %arg0 : tile<ptr<f32>>
// CHECK: %[[BX:.*]], %{{.*}}, %{{.*}} = get_tile_block_id
// CHECK: make_tensor_view %[[A0]], shape = [100, 60], strides = [60, 1]
// CHECK: partition_view<tile=(64x64), padding_value = zero
// CHECK: load_view_tko weak %{{.*}}[%[[BX]], %{{.*}}] token
// CHECK: partition_view<tile=(64), padding_value = zero, tensor_view<60xf32
// CHECK: reshape %{{.*}} : tile<64xf32> -> tile<1x64xf32>
// CHECK: broadcast %{{.*}} : tile<1x64xf32> -> tile<64x64xf32>
// CHECK: addf
// CHECK: maxf
// CHECK: store_view_tko weak %{{.*}}, %{{.*}}[%[[BX]], %{{.*}}] token
// CHECK: return

// k1: a 128x64x50 f16 matrix product in 128x64 tiles (f16: up to
// 128x128) and k tiles of 32 (50 = 2 tiles, the second padded with
// zeros): for over k tiles with mmaf, ftof to f16 and one store.
// CHECK-LABEL: entry @k1_mm
// CHECK: %[[N:.*]] = constant <i32: 2> : tile<i32>
// CHECK: for %[[K:.*]] in (%{{.*}} to %[[N]], step %{{.*}}) : tile<i32> iter_values(%[[ACC:.*]] = %{{.*}}) -> (tile<128x64xf32>)
// CHECK: load_view_tko weak %{{.*}}[%{{.*}}, %[[K]]] {{.*}} -> tile<128x32xf16>, token
// CHECK: load_view_tko weak %{{.*}}[%[[K]], %{{.*}}] {{.*}} -> tile<32x64xf16>, token
// CHECK: mmaf %{{.*}}, %{{.*}}, %[[ACC]] : tile<128x32xf16>, tile<32x64xf16>, tile<128x64xf32>
// CHECK: continue
// CHECK: ftof %{{.*}} : tile<128x64xf32> -> tile<128x64xf16>
// CHECK: store_view_tko

// k2: softmax over rows of 20 (tiles of 32, the padding masked by the
// reductions' identities): max and sum reductions, exp, divf.
// CHECK-LABEL: entry @k2_softmax
// CHECK: iota : tile<32xi32>
// CHECK: cmpi less_than
// CHECK: select
// CHECK: reduce
// CHECK: maxf
// CHECK: exp
// CHECK: reduce
// CHECK: addf
// CHECK: divf
// CHECK: store_view_tko

// NUM: output 'c': {{.*}}: ok
// NUM: output 'y': {{.*}}: ok
// NUM: output 's': {{.*}}: ok

module attributes {pb.stage = "fuse"} {
  func.func private @k0_bias_relu(%a: memref<100x60xf32>, %b: memref<60xf32>, %c: memref<100x60xf32>) attributes {pb.kernel, pb.nodes = ["add", "relu"]} {
    %zero = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (100) {
      affine.parallel (%j) = (0) to (60) {
        %0 = affine.load %a[%i, %j] : memref<100x60xf32>
        %1 = affine.load %b[%j] : memref<60xf32>
        %2 = arith.addf %0, %1 : f32
        %3 = arith.maximumf %2, %zero : f32
        affine.store %3, %c[%i, %j] : memref<100x60xf32>
      }
    }
    return
  }
  func.func private @k1_mm(%a: memref<128x50xf16>, %b: memref<50x64xf16>, %c: memref<128x64xf16>) attributes {pb.kernel, pb.nodes = ["mm"]} {
    %cst = arith.constant 0.000000e+00 : f32
    affine.parallel (%i) = (0) to (128) {
      affine.parallel (%j) = (0) to (64) {
        %acc = memref.alloca() : memref<f32>
        affine.store %cst, %acc[] : memref<f32>
        affine.for %k = 0 to 50 {
          %2 = affine.load %a[%i, %k] : memref<128x50xf16>
          %3 = affine.load %b[%k, %j] : memref<50x64xf16>
          %4 = affine.load %acc[] : memref<f32>
          %5 = arith.extf %2 : f16 to f32
          %6 = arith.extf %3 : f16 to f32
          %7 = arith.mulf %5, %6 : f32
          %8 = arith.addf %4, %7 : f32
          affine.store %8, %acc[] : memref<f32>
        }
        %0 = affine.load %acc[] : memref<f32>
        %1 = arith.truncf %0 : f32 to f16
        affine.store %1, %c[%i, %j] : memref<128x64xf16>
      }
    }
    return
  }
  func.func private @k2_softmax(%x: memref<8x20xf32>, %y: memref<8x20xf32>) attributes {pb.kernel, pb.nodes = ["softmax"]} {
    %ninf = arith.constant 0xFF800000 : f32
    %zero = arith.constant 0.000000e+00 : f32
    affine.parallel (%r) = (0) to (8) {
      %sum = memref.alloca() : memref<f32>
      %e = memref.alloca() : memref<20xf32>
      %max = memref.alloca() : memref<f32>
      affine.store %ninf, %max[] : memref<f32>
      affine.for %c = 0 to 20 {
        %0 = affine.load %x[%r, %c] : memref<8x20xf32>
        %1 = affine.load %max[] : memref<f32>
        %2 = arith.maximumf %0, %1 : f32
        affine.store %2, %max[] : memref<f32>
      }
      affine.for %c = 0 to 20 {
        %0 = affine.load %x[%r, %c] : memref<8x20xf32>
        %1 = affine.load %max[] : memref<f32>
        %2 = arith.subf %0, %1 : f32
        %3 = math.exp %2 : f32
        affine.store %3, %e[%c] : memref<20xf32>
      }
      affine.store %zero, %sum[] : memref<f32>
      affine.for %c = 0 to 20 {
        %0 = affine.load %e[%c] : memref<20xf32>
        %1 = affine.load %sum[] : memref<f32>
        %2 = arith.addf %0, %1 : f32
        affine.store %2, %sum[] : memref<f32>
      }
      affine.for %c = 0 to 20 {
        %0 = affine.load %e[%c] : memref<20xf32>
        %1 = affine.load %sum[] : memref<f32>
        %2 = arith.divf %0, %1 : f32
        affine.store %2, %y[%r, %c] : memref<8x20xf32>
      }
    }
    return
  }
  func.func @main(%a: memref<100x60xf32> {pb.name = "a"}, %b: memref<60xf32> {pb.name = "b"},
                  %ma: memref<128x50xf16> {pb.name = "ma"}, %mb: memref<50x64xf16> {pb.name = "mb"},
                  %x: memref<8x20xf32> {pb.name = "x"},
                  %c: memref<100x60xf32> {pb.name = "c", pb.output},
                  %y: memref<128x64xf16> {pb.name = "y", pb.output},
                  %s: memref<8x20xf32> {pb.name = "s", pb.output}) {
    call @k0_bias_relu(%a, %b, %c) : (memref<100x60xf32>, memref<60xf32>, memref<100x60xf32>) -> ()
    call @k1_mm(%ma, %mb, %y) : (memref<128x50xf16>, memref<50x64xf16>, memref<128x64xf16>) -> ()
    call @k2_softmax(%x, %s) : (memref<8x20xf32>, memref<8x20xf32>) -> ()
    return
  }
}
