module attributes {pb.stage = "fuse"} {
  func.func @main(%arg0: memref<4xf32> {pb.name = "x"}, %arg1: memref<4xf32> {pb.name = "y", pb.output}) {
    %cst = arith.constant 0.000000e+00 : f32
    affine.for %i = 0 to 4 {
      %0 = affine.load %arg0[%i] : memref<4xf32>
      %1 = arith.maximumf %0, %cst : f32
      affine.store %1, %arg1[%i] : memref<4xf32>
    }
    return
  }
}
