// RUN: pb-fuse --no-fusion %s | FileCheck %s
// RUN: pb-fuse --no-fusion %s -o %t && %python %S/Inputs/numcheck.py %s %t | FileCheck --check-prefix=NUM %s

// A convolution with tensor.pad, a bias broadcast, max pooling and a
// flatten (tensor.collapse_shape). The padded buffer's interior is a
// memref.subview that @main keeps and passes to the copy kernel; the
// flattened result is a memref.collapse_shape view copied into the
// out-parameter by its own kernel. Every memref argument of @main has an
// identity layout.

// CHECK-LABEL: func.func private @k0_Conv_0
// CHECK-SAME: (%{{.*}}: memref<1x3x10x10xf32>) attributes {pb.kernel, pb.nodes = ["Conv_0"]}
// CHECK-LABEL: func.func private @k1_Conv_0
// CHECK-SAME: (%{{.*}}: memref<1x3x8x8xf32>, %{{.*}}: memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>)
// CHECK-LABEL: func.func private @k2_Conv_0
// CHECK-LABEL: func.func private @k3_Conv_0
// CHECK-COUNT-7: affine.for
// CHECK-LABEL: func.func private @k4_fill
// CHECK-SAME: attributes {pb.kernel, pb.nodes = []}
// CHECK-LABEL: func.func private @k5_MaxPool_1
// CHECK-LABEL: func.func private @k6_copy
// CHECK-SAME: (%{{.*}}: memref<1x64xf32>, %{{.*}}: memref<1x64xf32>)

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: memref<1x3x8x8xf32> {pb.name = "x"}, %[[W:.*]]: memref<4x3x3x3xf32> {pb.param = "W"}, %[[B:.*]]: memref<4xf32> {pb.param = "B"}, %[[Y:.*]]: memref<1x64xf32> {pb.name = "y", pb.output})
// CHECK: %[[PAD:.*]] = memref.alloc() {{.*}}: memref<1x3x10x10xf32>
// CHECK: call @k0_Conv_0(%[[PAD]])
// CHECK: %[[IN:.*]] = memref.subview %[[PAD]][0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1]
// CHECK: call @k1_Conv_0(%[[X]], %[[IN]])
// CHECK: %[[C:.*]] = memref.alloc() {{.*}}: memref<1x4x8x8xf32>
// CHECK: call @k2_Conv_0(%[[B]], %[[C]])
// CHECK: call @k3_Conv_0(%[[PAD]], %[[W]], %[[C]])
// CHECK: memref.dealloc %[[PAD]]
// CHECK: %[[P:.*]] = memref.alloc() {{.*}}: memref<1x4x4x4xf32>
// CHECK: call @k4_fill(%[[P]])
// CHECK: call @k5_MaxPool_1(%[[C]], %[[P]])
// CHECK: memref.dealloc %[[C]]
// CHECK: %[[F:.*]] = memref.collapse_shape %[[P]] {{\[}}[0], [1, 2, 3]]
// CHECK: call @k6_copy(%[[F]], %[[Y]])
// CHECK: memref.dealloc %[[P]]
// CHECK-NEXT: return

// NUM: OK: 1 outputs, 64 values

module {
  func.func @main(%x: tensor<1x3x8x8xf32> {pb.name = "x"}, %w: tensor<4x3x3x3xf32> {pb.param = "W"}, %b: tensor<4xf32> {pb.param = "B"}) -> (tensor<1x64xf32> {pb.name = "y"}) {
    %cst = arith.constant 0.0 : f32
    %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%i: index, %j: index, %k: index, %l: index):
      tensor.yield %cst : f32
    } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32> loc("Conv_0")
    %e = tensor.empty() : tensor<1x4x8x8xf32>
    %bb = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (c)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : tensor<4xf32>) outs(%e : tensor<1x4x8x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
    } -> tensor<1x4x8x8xf32> loc("Conv_0")
    %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%bb : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("Conv_0")
    %e2 = tensor.empty() : tensor<1x4x4x4xf32>
    %ninf = arith.constant 0xFF800000 : f32
    %f2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
    %win = tensor.empty() : tensor<2x2xf32>
    %mp = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%c, %win : tensor<1x4x8x8xf32>, tensor<2x2xf32>) outs(%f2 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> loc("MaxPool_1")
    %r = tensor.collapse_shape %mp [[0], [1, 2, 3]] : tensor<1x4x4x4xf32> into tensor<1x64xf32> loc("Flatten_2")
    return %r : tensor<1x64xf32>
  }
}
