// A chain of five kernels over four intermediate buffers, each dead soon
// after it is read: %a (4 KiB) lives over launches 0-2, %b (4 KiB) 1-2,
// %c (4 KiB) 2-3 and %d (8 KiB) 3-4, so %d can take the bytes of %a and
// the arena needs 12 KiB (what %a, %b and %c, or %c and %d, live together
// need) instead of 20 KiB. A packing that let %b share bytes with %a
// would change %a before launch 2 reads it. a = x + 1, b = 2 a,
// c = b + a - 3, d = [c, c], y = d[0] + d[1] = 6 x. The allocations all
// come first, as bufferization may leave them: liveness starts at the
// first use.
module attributes {pb.stage = "fuse"} {
  func.func private @k0_inc(%x: memref<1024xf32>, %a: memref<1024xf32>) attributes {pb.kernel, pb.nodes = ["Add_0"]} {
    %one = arith.constant 1.0 : f32
    affine.for %i = 0 to 1024 {
      %v = affine.load %x[%i] : memref<1024xf32>
      %r = arith.addf %v, %one : f32
      affine.store %r, %a[%i] : memref<1024xf32>
    }
    return
  }
  func.func private @k1_dbl(%a: memref<1024xf32>, %b: memref<1024xf32>) attributes {pb.kernel, pb.nodes = ["Mul_1"]} {
    %two = arith.constant 2.0 : f32
    affine.for %i = 0 to 1024 {
      %v = affine.load %a[%i] : memref<1024xf32>
      %r = arith.mulf %v, %two : f32
      affine.store %r, %b[%i] : memref<1024xf32>
    }
    return
  }
  func.func private @k2_sub(%b: memref<1024xf32>, %a: memref<1024xf32>, %c: memref<1024xf32>) attributes {pb.kernel, pb.nodes = ["Sub_2"]} {
    %three = arith.constant 3.0 : f32
    affine.for %i = 0 to 1024 {
      %v = affine.load %b[%i] : memref<1024xf32>
      %w = affine.load %a[%i] : memref<1024xf32>
      %s = arith.addf %v, %w : f32
      %r = arith.subf %s, %three : f32
      affine.store %r, %c[%i] : memref<1024xf32>
    }
    return
  }
  func.func private @k3_tile(%c: memref<1024xf32>, %d: memref<2x1024xf32>) attributes {pb.kernel, pb.nodes = ["Tile_3"]} {
    affine.for %j = 0 to 2 {
      affine.for %i = 0 to 1024 {
        %v = affine.load %c[%i] : memref<1024xf32>
        affine.store %v, %d[%j, %i] : memref<2x1024xf32>
      }
    }
    return
  }
  func.func private @k4_sum(%d: memref<2x1024xf32>, %y: memref<1024xf32>) attributes {pb.kernel, pb.nodes = ["ReduceSum_4"]} {
    affine.for %i = 0 to 1024 {
      %u = affine.load %d[0, %i] : memref<2x1024xf32>
      %v = affine.load %d[1, %i] : memref<2x1024xf32>
      %r = arith.addf %u, %v : f32
      affine.store %r, %y[%i] : memref<1024xf32>
    }
    return
  }
  func.func @main(%x: memref<1024xf32> {pb.name = "x"}, %y: memref<1024xf32> {pb.name = "y", pb.output}) {
    %a = memref.alloc() : memref<1024xf32>
    %b = memref.alloc() : memref<1024xf32>
    %c = memref.alloc() : memref<1024xf32>
    %d = memref.alloc() : memref<2x1024xf32>
    call @k0_inc(%x, %a) : (memref<1024xf32>, memref<1024xf32>) -> ()
    call @k1_dbl(%a, %b) : (memref<1024xf32>, memref<1024xf32>) -> ()
    call @k2_sub(%b, %a, %c) : (memref<1024xf32>, memref<1024xf32>, memref<1024xf32>) -> ()
    call @k3_tile(%c, %d) : (memref<1024xf32>, memref<2x1024xf32>) -> ()
    call @k4_sum(%d, %y) : (memref<2x1024xf32>, memref<1024xf32>) -> ()
    memref.dealloc %a : memref<1024xf32>
    memref.dealloc %b : memref<1024xf32>
    memref.dealloc %c : memref<1024xf32>
    memref.dealloc %d : memref<2x1024xf32>
    return
  }
}
