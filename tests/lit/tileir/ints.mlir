// REQUIRES: tileirdisasm
// RUN: pb-codegen --backend=tile --emit=tileirbc --arch=sm_80 %s -o %t.bc
// RUN: %tileirdisasm %t.bc | FileCheck %s
// RUN: rm -rf %t.d && mkdir -p %t.d && %python %S/Inputs/ints_ref.py %t.d
// RUN: pb-run %s --input %t.d/c.npy --input %t.d/x.npy --input %t.d/y.npy --input %t.d/p.npy --input %t.d/q.npy --input %t.d/idx.npy --input %t.d/data.npy --input %t.d/am.npy --input %t.d/ua.npy --input %t.d/ub.npy --input %t.d/tx.npy --input %t.d/px.npy --input %t.d/qx.npy --input %t.d/cx.npy --check %t.d/z.npy --check %t.d/e.npy --check %t.d/g.npy --check %t.d/r.npy --check %t.d/uo.npy --check %t.d/um.npy --check %t.d/ty.npy --check %t.d/ts.npy --check %t.d/py.npy --check %t.d/qy.npy --check %t.d/cy.npy | FileCheck --check-prefix=NUM %s

// Integer and boolean tensors, constant buffers, scalar work and a
// window of a private buffer in the Tile IR translation (docs/tileir.md), read back by tileirdisasm; the
// module, the block-level program the bytecode translates, runs on the
// CPU against numpy (NUM).

// The constant table of k4 becomes a global of the module (padded to a
// power of two), read through get_global.
// CHECK: global private constant @table alignment = 16 <i64: [4, -1, 0, 3, -5, 0, 0, 0]> : tile<8xi64>

// k0: Where(c & (p == q), x, y) and the Equal itself stored: booleans
// are bytes in memory (i8 loads, cmpi not_equal 0; exti to store).
// CHECK-LABEL: entry @k0_where(%arg0: tile<ptr<i8>>, %arg1: tile<ptr<f32>>, %arg2: tile<ptr<f32>>, %arg3: tile<ptr<i32>>, %arg4: tile<ptr<i32>>, %arg5: tile<ptr<f32>>, %arg6: tile<ptr<i8>>)
// CHECK: %[[C8:.*]], %{{.*}} = load_view_tko {{.*}} -> tile<4x8xi8>, token
// CHECK: %[[C:.*]] = cmpi not_equal %[[C8]], %{{.*}}, signed : tile<4x8xi8> -> tile<4x8xi1>
// CHECK: %[[P:.*]], %{{.*}} = load_view_tko {{.*}} -> tile<4x8xi32>, token
// CHECK: %[[EQ:.*]] = cmpi equal %[[P]], %{{.*}}, signed : tile<4x8xi32> -> tile<4x8xi1>
// CHECK: %[[AND:.*]] = andi %[[C]], %[[EQ]] : tile<4x8xi1>
// CHECK: select %[[AND]], %{{.*}}, %{{.*}} : tile<4x8xi1>, tile<4x8xf32>
// CHECK: %[[E8:.*]] = exti %[[EQ]] unsigned : tile<4x8xi1> -> tile<4x8xi8>
// CHECK: store_view_tko weak %[[E8]]

// k1: a Gather of int64 indices: the negative ones moved by the extent
// and clamped in i64, truncated to i32 offsets of a pointer tile.
// CHECK-LABEL: entry @k1_gather(%arg0: tile<ptr<i64>>
// CHECK: %[[I:.*]], %{{.*}} = load_view_tko {{.*}} -> tile<4xi64>, token
// CHECK: cmpi less_than %[[I]], %{{.*}}, signed : tile<4xi64> -> tile<4xi1>
// CHECK: addi %[[I]], %{{.*}} : tile<4xi64>
// CHECK: maxi %{{.*}} signed : tile<4xi64>
// CHECK: %[[MIN:.*]] = mini %{{.*}} signed : tile<4xi64>
// CHECK: trunci %[[MIN]] : tile<4xi64> -> tile<4xi32>
// CHECK: offset %{{.*}} : tile<4x4xptr<f32>>, tile<4x4xi32> -> tile<4x4xptr<f32>>
// CHECK: load_ptr_tko weak

// k2: ArgMax: the index select(x == max, min(idx, k), idx) is a min
// reduction of select(x == max, k, INT64_MAX), the padding of 6 to 8
// masked by the identity.
// CHECK-LABEL: entry @k2_argmax
// CHECK: reduce %{{.*}} dim=1 identities=[0xFF800000 : f32]
// CHECK: %[[K:.*]] = exti %{{.*}} signed : tile<8xi32> -> tile<8xi64>
// CHECK: cmpf equal ordered
// CHECK: select %{{.*}} : tile<4x8xi1>, tile<4x8xi64>
// CHECK: reduce %{{.*}} dim=1 identities=[9223372036854775807] : tile<4x8xi64> -> tile<4xi64>
// CHECK: mini %{{.*}}, %{{.*}} signed : tile<i64>
// CHECK: store_view_tko {{.*}} tile<4xi64>

// k3: unsigned division, remainder, comparison, shift and conversions
// (signedness is the operation's, as in arith).
// CHECK-LABEL: entry @k3_unsigned
// CHECK: divi %{{.*}} unsigned : tile<16xi32>
// CHECK: remi %{{.*}} unsigned : tile<16xi32>
// CHECK: cmpi less_than %{{.*}}, unsigned : tile<16xi32> -> tile<16xi1>
// CHECK: shri %{{.*}} unsigned : tile<16xi32>
// CHECK: xori
// CHECK: itof %{{.*}} unsigned : tile<16xi32> -> tile<16xf32>
// CHECK: exti %{{.*}} unsigned : tile<16xi32> -> tile<16xi64>
// CHECK: itof %{{.*}} signed : tile<16xi32> -> tile<16xf32>
// CHECK: ftoi %{{.*}} signed : tile<16xf32> -> tile<16xi64>
// CHECK: subi %{{.*}} : tile<16xi64>

// k4: a scalar store at the kernel's top level is an entry of its own
// (0-d tiles, one block); the loop after it reads the global table.
// CHECK-LABEL: entry @k4_table_0
// CHECK: %[[S:.*]] = constant <f32: 2.500000e+00> : tile<f32>
// CHECK: %[[S1:.*]] = reshape %[[S]] : tile<f32> -> tile<1xf32>
// CHECK: store_view_tko weak %[[S1]]
// CHECK-LABEL: entry @k4_table_1
// CHECK: %[[G:.*]] = get_global @table : tile<ptr<i64>>
// CHECK: make_tensor_view %[[G]], shape = [5], strides = [1] : tensor_view<5xi64, strides=[1]>
// CHECK: itof %{{.*}} signed : tile<8xi64> -> tile<8xf32>

// k5: a 2x2 max pool (stride 2) over a private buffer the kernel
// filled: the subscripts 2 * i + k, 2 * j + l read its 8x8 state as
// 4x2x4x2 (reshape), permuted to the loops' order and reduced over the
// window (no gather).
// CHECK-LABEL: entry @k5_pool
// CHECK: %[[W:.*]] = reshape %{{.*}} : tile<2x8x8xf32> -> tile<2x4x2x4x2xf32>
// CHECK: %[[P:.*]] = permute %[[W]] [0, 1, 3, 2, 4] : tile<2x4x2x4x2xf32> -> tile<2x4x4x2x2xf32>
// CHECK: reduce %[[P]] dim=4 identities=[0xFF800000 : f32]
// CHECK: reduce %{{.*}} dim=3 identities=[0xFF800000 : f32]
// CHECK-NOT: load_ptr_tko
// CHECK: store_view_tko {{.*}} tile<2x4x4xf32>

// k6: a parallel loop inside the band (under a private buffer's
// allocation, as pb-fuse leaves a max pool): its loops are inner
// dimensions (3x3 in tiles of 4), the accumulator it begins at each of
// their points reduced over the window only.
// CHECK-LABEL: entry @k6_pool
// CHECK: load_ptr_tko weak {{.*}} -> tile<4x4x4x2x2xf32>, token
// CHECK: reduce %{{.*}} dim=4 identities=[0xFF800000 : f32]
// CHECK: reduce %{{.*}} dim=3 identities=[0xFF800000 : f32] : tile<4x4x4x2xf32> -> tile<4x4x4xf32>
// CHECK: store_view_tko {{.*}} tile<4x4x4xf32>

// k7: a running sum stored at every step (an inclusive scan, int32): Tile
// IR's scan along the loop (12 in a tile of 16: the padding comes after
// the elements stored), added to the state before the loop.
// CHECK-LABEL: entry @k7_cumsum
// CHECK: %[[S:.*]] = scan %{{.*}} dim=1 reverse=false identities=[0 : i32] : tile<4x16xi32> -> tile<4x16xi32>
// CHECK: addi %{{.*}}, %{{.*}} : tile<i32>
// CHECK: %[[Y:.*]] = addi %{{.*}}, %[[S]] : tile<4x16xi32>
// CHECK: store_view_tko weak %[[Y]]

// NUM: output 'z': {{.*}}: ok
// NUM: output 'e': {{.*}}: ok
// NUM: output 'g': {{.*}}: ok
// NUM: output 'r': {{.*}}: ok
// NUM: output 'uo': {{.*}}: ok
// NUM: output 'um': {{.*}}: ok
// NUM: output 'ty': {{.*}}: ok
// NUM: output 'ts': {{.*}}: ok
// NUM: output 'py': {{.*}}: ok
// NUM: output 'qy': {{.*}}: ok
// NUM: output 'cy': {{.*}}: ok

module attributes {pb.stage = "fuse"} {
  memref.global "private" constant @table : memref<5xi64> = dense<[4, -1, 0, 3, -5]> {alignment = 64 : i64}
  func.func private @k0_where(%c: memref<4x8xi1>, %x: memref<4x8xf32>, %y: memref<4x8xf32>, %p: memref<4x8xi32>, %q: memref<8xi32>, %z: memref<4x8xf32>, %e: memref<4x8xi1>) attributes {pb.kernel, pb.nodes = ["where"]} {
    affine.parallel (%i) = (0) to (4) {
      affine.parallel (%j) = (0) to (8) {
        %0 = affine.load %c[%i, %j] : memref<4x8xi1>
        %1 = affine.load %x[%i, %j] : memref<4x8xf32>
        %2 = affine.load %y[%i, %j] : memref<4x8xf32>
        %3 = affine.load %p[%i, %j] : memref<4x8xi32>
        %4 = affine.load %q[%j] : memref<8xi32>
        %5 = arith.cmpi eq, %3, %4 : i32
        %6 = arith.andi %0, %5 : i1
        %7 = arith.select %6, %1, %2 : f32
        affine.store %7, %z[%i, %j] : memref<4x8xf32>
        affine.store %5, %e[%i, %j] : memref<4x8xi1>
      }
    }
    return
  }
  func.func private @k1_gather(%idx: memref<3xi64>, %data: memref<5x4xf32>, %out: memref<3x4xf32>) attributes {pb.kernel, pb.nodes = ["gather"]} {
    %c0 = arith.constant 0 : i64
    %c5 = arith.constant 5 : i64
    %c4 = arith.constant 4 : i64
    affine.parallel (%i) = (0) to (3) {
      affine.parallel (%j) = (0) to (4) {
        %0 = affine.load %idx[%i] : memref<3xi64>
        %1 = arith.cmpi slt, %0, %c0 : i64
        %2 = arith.addi %0, %c5 : i64
        %3 = arith.select %1, %2, %0 : i64
        %4 = arith.maxsi %3, %c0 : i64
        %5 = arith.minsi %4, %c4 : i64
        %6 = arith.index_cast %5 : i64 to index
        %7 = memref.load %data[%6, %j] : memref<5x4xf32>
        affine.store %7, %out[%i, %j] : memref<3x4xf32>
      }
    }
    return
  }
  func.func private @k2_argmax(%x: memref<4x6xf32>, %r: memref<4xi64>) attributes {pb.kernel, pb.nodes = ["argmax"]} {
    %ninf = arith.constant 0xFF800000 : f32
    %c6 = arith.constant 6 : i64
    affine.parallel (%i) = (0) to (4) {
      %idx = memref.alloca() : memref<i64>
      %max = memref.alloca() : memref<f32>
      affine.store %ninf, %max[] : memref<f32>
      affine.for %k = 0 to 6 {
        %0 = affine.load %x[%i, %k] : memref<4x6xf32>
        %1 = affine.load %max[] : memref<f32>
        %2 = arith.maximumf %0, %1 : f32
        affine.store %2, %max[] : memref<f32>
      }
      affine.store %c6, %idx[] : memref<i64>
      affine.for %k = 0 to 6 {
        %0 = affine.load %x[%i, %k] : memref<4x6xf32>
        %1 = affine.load %max[] : memref<f32>
        %2 = affine.load %idx[] : memref<i64>
        %3 = arith.index_cast %k : index to i64
        %4 = arith.cmpf oeq, %0, %1 : f32
        %5 = arith.minsi %2, %3 : i64
        %6 = arith.select %4, %5, %2 : i64
        affine.store %6, %idx[] : memref<i64>
      }
      %0 = affine.load %idx[] : memref<i64>
      affine.store %0, %r[%i] : memref<4xi64>
    }
    return
  }
  func.func private @k3_unsigned(%a: memref<16xi32>, %b: memref<16xi32>, %o: memref<16xf32>, %m: memref<16xi64>) attributes {pb.kernel, pb.nodes = ["unsigned"]} {
    %c1 = arith.constant 1 : i32
    %h = arith.constant 1.500000e+00 : f32
    affine.parallel (%i) = (0) to (16) {
      %0 = affine.load %a[%i] : memref<16xi32>
      %1 = affine.load %b[%i] : memref<16xi32>
      %2 = arith.divui %0, %1 : i32
      %3 = arith.remui %0, %1 : i32
      %4 = arith.cmpi ult, %0, %1 : i32
      %5 = arith.select %4, %3, %2 : i32
      %6 = arith.shrui %0, %c1 : i32
      %7 = arith.xori %5, %6 : i32
      %8 = arith.uitofp %7 : i32 to f32
      affine.store %8, %o[%i] : memref<16xf32>
      %9 = arith.extui %0 : i32 to i64
      %10 = arith.sitofp %1 : i32 to f32
      %11 = arith.mulf %10, %h : f32
      %12 = arith.fptosi %11 : f32 to i64
      %13 = arith.subi %9, %12 : i64
      affine.store %13, %m[%i] : memref<16xi64>
    }
    return
  }
  func.func private @k4_table(%g: memref<5xi64>, %x: memref<5xf32>, %y: memref<5xf32>, %s: memref<1xf32>) attributes {pb.kernel, pb.nodes = ["table"]} {
    %cst = arith.constant 2.500000e+00 : f32
    affine.store %cst, %s[0] : memref<1xf32>
    affine.parallel (%i) = (0) to (5) {
      %0 = affine.load %g[%i] : memref<5xi64>
      %1 = arith.sitofp %0 : i64 to f32
      %2 = affine.load %x[%i] : memref<5xf32>
      %3 = arith.mulf %1, %2 : f32
      affine.store %3, %y[%i] : memref<5xf32>
    }
    return
  }
  func.func private @k5_pool(%x: memref<2x8x8xf32>, %y: memref<2x4x4xf32>) attributes {pb.kernel, pb.nodes = ["relu", "pool"]} {
    %zero = arith.constant 0.000000e+00 : f32
    %ninf = arith.constant 0xFF800000 : f32
    affine.parallel (%b) = (0) to (2) {
      %p = memref.alloca() : memref<8x8xf32>
      affine.for %i = 0 to 8 {
        affine.for %j = 0 to 8 {
          %0 = affine.load %x[%b, %i, %j] : memref<2x8x8xf32>
          %1 = arith.maximumf %0, %zero : f32
          affine.store %1, %p[%i, %j] : memref<8x8xf32>
        }
      }
      affine.for %i = 0 to 4 {
        affine.for %j = 0 to 4 {
          %m = memref.alloca() : memref<f32>
          affine.store %ninf, %m[] : memref<f32>
          affine.for %k = 0 to 2 {
            affine.for %l = 0 to 2 {
              %0 = affine.load %p[%i * 2 + %k, %j * 2 + %l] : memref<8x8xf32>
              %1 = affine.load %m[] : memref<f32>
              %2 = arith.maximumf %1, %0 : f32
              affine.store %2, %m[] : memref<f32>
            }
          }
          %0 = affine.load %m[] : memref<f32>
          affine.store %0, %y[%b, %i, %j] : memref<2x4x4xf32>
        }
      }
    }
    return
  }
  func.func private @k6_pool(%x: memref<4x6x6xf32>, %y: memref<4x3x3xf32>) attributes {pb.kernel, pb.nodes = ["pool"]} {
    %ninf = arith.constant 0xFF800000 : f32
    affine.parallel (%c) = (0) to (4) {
      %acc = memref.alloca() : memref<3x3xf32>
      affine.parallel (%i, %j) = (0, 0) to (3, 3) {
        affine.store %ninf, %acc[%i, %j] : memref<3x3xf32>
        affine.for %k = 0 to 2 {
          affine.for %l = 0 to 2 {
            %0 = affine.load %x[%c, %i * 2 + %k, %j * 2 + %l] : memref<4x6x6xf32>
            %1 = affine.load %acc[%i, %j] : memref<3x3xf32>
            %2 = arith.maximumf %1, %0 : f32
            affine.store %2, %acc[%i, %j] : memref<3x3xf32>
          }
        }
        %0 = affine.load %acc[%i, %j] : memref<3x3xf32>
        affine.store %0, %y[%c, %i, %j] : memref<4x3x3xf32>
      }
    }
    return
  }
  func.func private @k7_cumsum(%x: memref<4x12xi32>, %y: memref<4x12xi32>) attributes {pb.kernel, pb.nodes = ["cumsum"]} {
    %zero = arith.constant 0 : i32
    affine.parallel (%r) = (0) to (4) {
      %acc = memref.alloca() : memref<i32>
      affine.store %zero, %acc[] : memref<i32>
      affine.for %c = 0 to 12 {
        %0 = affine.load %x[%r, %c] : memref<4x12xi32>
        %1 = affine.load %acc[] : memref<i32>
        %2 = arith.addi %1, %0 : i32
        affine.store %2, %y[%r, %c] : memref<4x12xi32>
        affine.store %2, %acc[] : memref<i32>
      }
    }
    return
  }
  func.func @main(%c: memref<4x8xi1> {pb.name = "c"}, %x: memref<4x8xf32> {pb.name = "x"}, %y: memref<4x8xf32> {pb.name = "y"},
                  %p: memref<4x8xi32> {pb.name = "p"}, %q: memref<8xi32> {pb.name = "q"},
                  %idx: memref<3xi64> {pb.name = "idx"}, %data: memref<5x4xf32> {pb.name = "data"},
                  %am: memref<4x6xf32> {pb.name = "am"},
                  %ua: memref<16xi32> {pb.name = "ua"}, %ub: memref<16xi32> {pb.name = "ub"},
                  %tx: memref<5xf32> {pb.name = "tx"}, %px: memref<2x8x8xf32> {pb.name = "px"},
                  %qx: memref<4x6x6xf32> {pb.name = "qx"}, %cx: memref<4x12xi32> {pb.name = "cx"},
                  %z: memref<4x8xf32> {pb.name = "z", pb.output}, %e: memref<4x8xi1> {pb.name = "e", pb.output},
                  %g: memref<3x4xf32> {pb.name = "g", pb.output}, %r: memref<4xi64> {pb.name = "r", pb.output},
                  %uo: memref<16xf32> {pb.name = "uo", pb.output}, %um: memref<16xi64> {pb.name = "um", pb.output},
                  %ty: memref<5xf32> {pb.name = "ty", pb.output}, %ts: memref<1xf32> {pb.name = "ts", pb.output},
                  %py: memref<2x4x4xf32> {pb.name = "py", pb.output},
                  %qy: memref<4x3x3xf32> {pb.name = "qy", pb.output},
                  %cy: memref<4x12xi32> {pb.name = "cy", pb.output}) {
    call @k0_where(%c, %x, %y, %p, %q, %z, %e) : (memref<4x8xi1>, memref<4x8xf32>, memref<4x8xf32>, memref<4x8xi32>, memref<8xi32>, memref<4x8xf32>, memref<4x8xi1>) -> ()
    call @k1_gather(%idx, %data, %g) : (memref<3xi64>, memref<5x4xf32>, memref<3x4xf32>) -> ()
    call @k2_argmax(%am, %r) : (memref<4x6xf32>, memref<4xi64>) -> ()
    call @k3_unsigned(%ua, %ub, %uo, %um) : (memref<16xi32>, memref<16xi32>, memref<16xf32>, memref<16xi64>) -> ()
    %t = memref.get_global @table : memref<5xi64>
    call @k4_table(%t, %tx, %ty, %ts) : (memref<5xi64>, memref<5xf32>, memref<5xf32>, memref<1xf32>) -> ()
    call @k5_pool(%px, %py) : (memref<2x8x8xf32>, memref<2x4x4xf32>) -> ()
    call @k6_pool(%qx, %qy) : (memref<4x6x6xf32>, memref<4x3x3xf32>) -> ()
    call @k7_cumsum(%cx, %cy) : (memref<4x12xi32>, memref<4x12xi32>) -> ()
    return
  }
}
