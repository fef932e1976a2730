// A fuse-stage module with four kernels whose flops are known:
//   k0_mm     c = a @ b (4x6 @ 6x5): a fill, then 2*4*5*6 = 240 flops
//   k1_relu   y0 = max(c, 0): 20 flops
//   k2_tiled  a 10-element loop tiled by 4 with min(%i + 4, 10): the
//             estimate counts whole tiles, 3 * 4 = 12 (10 run)
//   k3_exp    affine.parallel over 4x5 with math.exp and a mulf: 40 flops
module attributes {pb.stage = "fuse"} {
  func.func private @k0_mm(%a: memref<4x6xf32>, %b: memref<6x5xf32>, %c: memref<4x5xf32>) attributes {pb.kernel, pb.nodes = ["MatMul_0"]} {
    %z = arith.constant 0.0 : f32
    affine.for %i = 0 to 4 {
      affine.for %j = 0 to 5 {
        affine.store %z, %c[%i, %j] : memref<4x5xf32>
      }
    }
    affine.for %i = 0 to 4 {
      affine.for %j = 0 to 5 {
        affine.for %k = 0 to 6 {
          %x = affine.load %a[%i, %k] : memref<4x6xf32>
          %y = affine.load %b[%k, %j] : memref<6x5xf32>
          %s = affine.load %c[%i, %j] : memref<4x5xf32>
          %m = arith.mulf %x, %y : f32
          %r = arith.addf %s, %m : f32
          affine.store %r, %c[%i, %j] : memref<4x5xf32>
        }
      }
    }
    return
  }
  func.func private @k1_relu(%c: memref<4x5xf32>, %y: memref<4x5xf32>) attributes {pb.kernel, pb.nodes = ["Relu_1"]} {
    %z = arith.constant 0.0 : f32
    affine.for %i = 0 to 4 {
      affine.for %j = 0 to 5 {
        %v = affine.load %c[%i, %j] : memref<4x5xf32>
        %r = arith.maximumf %v, %z : f32
        affine.store %r, %y[%i, %j] : memref<4x5xf32>
      }
    }
    return
  }
  func.func private @k2_tiled(%x: memref<10xf32>, %y: memref<10xf32>) attributes {pb.kernel, pb.nodes = ["Neg_2"]} {
    affine.for %i = 0 to 10 step 4 {
      affine.for %j = affine_map<(d0) -> (d0)>(%i) to min affine_map<(d0) -> (d0 + 4, 10)>(%i) {
        %v = affine.load %x[%j] : memref<10xf32>
        %r = arith.negf %v : f32
        affine.store %r, %y[%j] : memref<10xf32>
      }
    }
    return
  }
  func.func private @k3_exp(%c: memref<4x5xf32>, %y: memref<4x5xf32>) attributes {pb.kernel, pb.nodes = ["Exp_3", "Mul_4"]} {
    affine.parallel (%i, %j) = (0, 0) to (4, 5) {
      %v = affine.load %c[%i, %j] : memref<4x5xf32>
      %e = math.exp %v : f32
      %r = arith.mulf %e, %v : f32
      affine.store %r, %y[%i, %j] : memref<4x5xf32>
    }
    return
  }
  func.func @main(%a: memref<4x6xf32> {pb.name = "a"}, %b: memref<6x5xf32> {pb.name = "b"},
                  %x: memref<10xf32> {pb.name = "x"},
                  %y0: memref<4x5xf32> {pb.name = "y0", pb.output},
                  %y1: memref<10xf32> {pb.name = "y1", pb.output},
                  %y2: memref<4x5xf32> {pb.name = "y2", pb.output}) {
    %c = memref.alloc() : memref<4x5xf32>
    call @k0_mm(%a, %b, %c) : (memref<4x6xf32>, memref<6x5xf32>, memref<4x5xf32>) -> ()
    call @k1_relu(%c, %y0) : (memref<4x5xf32>, memref<4x5xf32>) -> ()
    call @k2_tiled(%x, %y1) : (memref<10xf32>, memref<10xf32>) -> ()
    call @k3_exp(%c, %y2) : (memref<4x5xf32>, memref<4x5xf32>) -> ()
    memref.dealloc %c : memref<4x5xf32>
    return
  }
}
