// RUN: rm -rf %t && split-file --leading-lines %s %t
// RUN: pb-codegen --emit=mlir %t/mapped.mlir | FileCheck %s
// RUN: pb-codegen %t/mapped.mlir | FileCheck --check-prefix=PTX %s
// RUN: %if ptxas %{ pb-codegen %t/mapped.mlir -o %t/k.ptx && ptxas -arch=sm_90 %t/k.ptx -o %t/k.cubin %}
// RUN: %if ptxas %{ pb-codegen --arch=sm_80 %t/mapped.mlir -o %t/k80.ptx && ptxas -arch=sm_80 %t/k80.ptx -o %t/k80.cubin %}
// RUN: %python %S/Inputs/warp_gen.py %t
// RUN: pb-run --device=cpu %t/mapped.mlir --input %t/A.npy --input %t/B.npy --input %t/x.npy --check %t/C.npy --check %t/y.npy --check %t/o.npy --rtol 0 --atol 0 | FileCheck --check-prefix=CPU %s
// RUN: pb-codegen --emit=mlir %t/nested.mlir | FileCheck --check-prefix=NESTED %s
// RUN: %if ptxas %{ pb-codegen %t/nested.mlir -o %t/n.ptx && ptxas -arch=sm_90 %t/n.ptx -o %t/n.cubin %}
// RUN: pb-run --device=cpu %t/nested.mlir --input %t/u.npy --check %t/v.npy --rtol 0 --atol 0 | FileCheck --check-prefix=CPU2 %s
// RUN: not pb-codegen --split-input-file %t/errors.mlir 2>&1 | FileCheck --check-prefix=ERR %s

// Warp-mapped loops (pb-tile's warp level). In @k0_mm a 128x200 matmul +
// ReLU has 64x128 block tiles (a 2x2 grid); each tile is split into a full
// tile and a partial one (affine.if), each with 2x2 warps of 32x64 whose
// thread loops of 4x8 iterations are the 32 lanes; the partial tile writes
// its warp loops as two nested 1-d loops. After a barrier a block-wide
// thread loop of 16x16 (not in a warp loop) applies the ReLU: the block has
// max(4 warps x 32, 256) = 256 threads, so the warp ids run under a guard
// (w < 4). In @k1_scale warp loops stand alone (one block each): 4 warps
// with a partial last one (min(32, 100 - w)), then 2 warps of 16 lanes.

// CHECK-LABEL: gpu.func @k0_mm_kernel(
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 4, 1, 1>
// CHECK: %[[TX:.*]] = gpu.thread_id x
// The full tile: warp id, lane, guard w <= 3, warp dims (w / 2, w % 2) and
// lane dims (l / 8, l % 8).
// CHECK: scf.if
// CHECK-NEXT: %[[W:.*]] = arith.divsi %[[TX]], %c32
// CHECK-NEXT: %[[L:.*]] = arith.remsi %[[TX]], %c32
// CHECK-NEXT: %[[G:.*]] = arith.subi %c3, %[[W]]
// CHECK-NEXT: %[[C:.*]] = arith.cmpi sge, %[[G]], %c0
// CHECK-NEXT: scf.if %[[C]] {
// CHECK-NEXT: arith.divsi %[[W]], %c2
// CHECK: arith.remsi %[[W]], %c2
// CHECK: arith.divsi %[[L]], %c8
// CHECK-NEXT: arith.remsi %[[L]], %c8
// CHECK: scf.for
// The partial tile: the same ids from the nested 1-d warp loops.
// CHECK: } else {
// CHECK-NEXT: %[[W2:.*]] = arith.divsi %[[TX]], %c32
// CHECK-NEXT: %[[L2:.*]] = arith.remsi %[[TX]], %c32
// CHECK-NEXT: %[[G2:.*]] = arith.subi %c3, %[[W2]]
// CHECK-NEXT: %[[C2:.*]] = arith.cmpi sge, %[[G2]], %c0
// CHECK-NEXT: scf.if %[[C2]] {
// CHECK-NEXT: arith.divsi %[[W2]], %c2
// CHECK: arith.remsi %[[W2]], %c2
// CHECK: arith.divsi %[[L2]], %c8
// CHECK-NEXT: arith.remsi %[[L2]], %c8
// CHECK: scf.for
// The barrier stays outside the warp guards; the ReLU loop uses all 256
// threads (no guard): (tx / 16, tx % 16). The loop inside each thread is
// run as it is (inside a mapped nest nothing is made parallel).
// CHECK: gpu.barrier
// CHECK-NEXT: arith.divsi %[[TX]], %c16
// CHECK-NEXT: arith.remsi %[[TX]], %c16
// CHECK-NEXT: scf.for
// CHECK: gpu.return

// 4 warps in a block of 128: no warp guard; the lane checks the partial
// bound min(32, 100 - w) at run time.
// CHECK-LABEL: gpu.func @k1_scale_kernel(
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 1, 1, 1>
// CHECK: %[[TX:.*]] = gpu.thread_id x
// CHECK-NEXT: arith.divsi %[[TX]], %c32
// CHECK-NEXT: arith.remsi %[[TX]], %c32
// CHECK: arith.minsi %{{.*}}, %c32
// CHECK: scf.if
// CHECK: gpu.return

// 2 warps of 16 lanes: a block of 64, the lane guarded (l <= 15).
// CHECK-LABEL: gpu.func @k1_scale_kernel_0(
// CHECK-SAME: known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 1, 1>
// CHECK: %c15
// CHECK: scf.if
// CHECK: gpu.return

// CHECK-LABEL: func.func @main(
// CHECK: gpu.launch_func @pb_kernels::@k0_mm_kernel blocks in (%c4, %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK: gpu.launch_func @pb_kernels::@k1_scale_kernel blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1)
// CHECK: gpu.launch_func @pb_kernels::@k1_scale_kernel_0 blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)

// PTX: "kernel": "k0_mm_kernel", {{.*}} "grid": [4, 1, 1], "block": [256, 1, 1]
// PTX: "kernel": "k1_scale_kernel", {{.*}} "grid": [1, 1, 1], "block": [128, 1, 1]
// PTX: "kernel": "k1_scale_kernel_0", {{.*}} "grid": [1, 1, 1], "block": [64, 1, 1]
// PTX: .entry k0_mm_kernel(
// PTX: bar.sync 0;

// The same module runs on the CPU (warp and thread loops run in order).
// CPU: output 'C': max abs err 0.0e+00, {{.*}}: ok
// CPU: output 'y': max abs err 0.0e+00, {{.*}}: ok
// CPU: output 'o': max abs err 0.0e+00, {{.*}}: ok

//--- mapped.mlir
module attributes {pb.stage = "smem"} {
  func.func private @k0_mm(%A: memref<128x16xf32>, %B: memref<16x200xf32>, %C: memref<128x200xf32>) attributes {pb.kernel, pb.nodes = ["MatMul_0", "Relu_1"]} {
    %z = arith.constant 0.0 : f32
    affine.parallel (%bi, %bj) = (0, 0) to (128, 200) step (64, 128) {
      affine.if affine_set<(bi, bj) : (-bi + 64 >= 0, -bj + 72 >= 0)>(%bi, %bj) {
        affine.parallel (%wi, %wj) = (0, 0) to (64, 128) step (32, 64) {
          affine.parallel (%ti, %tj) = (0, 0) to (4, 8) {
            affine.for %ri = 0 to 8 {
              affine.for %rj = 0 to 8 {
                affine.store %z, %C[%bi + %wi + %ri * 4 + %ti, %bj + %wj + %rj * 8 + %tj] : memref<128x200xf32>
                affine.for %k = 0 to 16 {
                  %a = affine.load %A[%bi + %wi + %ri * 4 + %ti, %k] : memref<128x16xf32>
                  %b = affine.load %B[%k, %bj + %wj + %rj * 8 + %tj] : memref<16x200xf32>
                  %c = affine.load %C[%bi + %wi + %ri * 4 + %ti, %bj + %wj + %rj * 8 + %tj] : memref<128x200xf32>
                  %p = arith.mulf %a, %b : f32
                  %s = arith.addf %c, %p : f32
                  affine.store %s, %C[%bi + %wi + %ri * 4 + %ti, %bj + %wj + %rj * 8 + %tj] : memref<128x200xf32>
                }
              }
            }
          } {pb.map = "thread"}
        } {pb.map = "warp"}
      } else {
        affine.parallel (%wi) = (0) to (64) step (32) {
          affine.parallel (%wj) = (0) to (128) step (64) {
            affine.parallel (%ti, %tj) = (0, 0) to (4, 8) {
              affine.for %ri = 0 to 8 {
                affine.for %rj = 0 to 8 {
                  affine.if affine_set<(bi, bj, wi, wj, ri, rj, ti, tj) : (-bi - wi - ri * 4 - ti + 127 >= 0, -bj - wj - rj * 8 - tj + 199 >= 0)>(%bi, %bj, %wi, %wj, %ri, %rj, %ti, %tj) {
                    affine.store %z, %C[%bi + %wi + %ri * 4 + %ti, %bj + %wj + %rj * 8 + %tj] : memref<128x200xf32>
                    affine.for %k = 0 to 16 {
                      %a = affine.load %A[%bi + %wi + %ri * 4 + %ti, %k] : memref<128x16xf32>
                      %b = affine.load %B[%k, %bj + %wj + %rj * 8 + %tj] : memref<16x200xf32>
                      %c = affine.load %C[%bi + %wi + %ri * 4 + %ti, %bj + %wj + %rj * 8 + %tj] : memref<128x200xf32>
                      %p = arith.mulf %a, %b : f32
                      %s = arith.addf %c, %p : f32
                      affine.store %s, %C[%bi + %wi + %ri * 4 + %ti, %bj + %wj + %rj * 8 + %tj] : memref<128x200xf32>
                    }
                  }
                }
              }
            } {pb.map = "thread"}
          } {pb.map = "warp"}
        } {pb.map = "warp"}
      }
      gpu.barrier
      affine.parallel (%ti, %tj) = (0, 0) to (16, 16) {
        affine.for %ri = 0 to 4 {
          affine.for %rj = 0 to 8 {
            affine.if affine_set<(bj, tj, rj) : (-bj - tj * 8 - rj + 199 >= 0)>(%bj, %tj, %rj) {
              %c = affine.load %C[%bi + %ti * 4 + %ri, %bj + %tj * 8 + %rj] : memref<128x200xf32>
              %r = arith.maximumf %c, %z : f32
              affine.store %r, %C[%bi + %ti * 4 + %ri, %bj + %tj * 8 + %rj] : memref<128x200xf32>
            }
          }
        }
      } {pb.map = "thread"}
    } {pb.map = "block"}
    return
  }
  func.func private @k1_scale(%x: memref<100xf32>, %y: memref<100xf32>, %o: memref<32xf32>) attributes {pb.kernel, pb.nodes = ["Mul_2"]} {
    %two = arith.constant 2.0 : f32
    %one = arith.constant 1.0 : f32
    affine.parallel (%w) = (0) to (100) step (32) {
      affine.parallel (%l) = (0) to (min(32, -%w + 100)) {
        %v = affine.load %x[%w + %l] : memref<100xf32>
        %m = arith.mulf %v, %two : f32
        %a = arith.addf %m, %one : f32
        affine.store %a, %y[%w + %l] : memref<100xf32>
      } {pb.map = "thread"}
    } {pb.map = "warp"}
    affine.parallel (%w) = (0) to (2) {
      affine.parallel (%l) = (0) to (16) {
        %v = affine.load %x[%w * 16 + %l] : memref<100xf32>
        %m = arith.mulf %v, %two : f32
        affine.store %m, %o[%w * 16 + %l] : memref<32xf32>
      } {pb.map = "thread"}
    } {pb.map = "warp"}
    return
  }
  func.func @main(%A: memref<128x16xf32> {pb.name = "A"}, %B: memref<16x200xf32> {pb.name = "B"}, %x: memref<100xf32> {pb.name = "x"},
                  %C: memref<128x200xf32> {pb.name = "C", pb.output}, %y: memref<100xf32> {pb.name = "y", pb.output}, %o: memref<32xf32> {pb.name = "o", pb.output}) {
    call @k0_mm(%A, %B, %C) : (memref<128x16xf32>, memref<16x200xf32>, memref<128x200xf32>) -> ()
    call @k1_scale(%x, %y, %o) : (memref<100xf32>, memref<100xf32>, memref<32xf32>) -> ()
    return
  }
}

//--- nested.mlir
// Loops between the mapped ones: an affine.for between the block loop and
// the warp loops, pure arithmetic between two nested 1-d warp loops, an
// affine.for and an affine.if between the warp and the thread loops; a
// warp loop of no iteration disappears. 2 warps of 16 lanes: blocks of 64
// threads, the lanes guarded (l <= 15).
// NESTED-LABEL: gpu.func @k0_kernel(
// NESTED-SAME: known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 2, 1, 1>
// NESTED: %[[TX:.*]] = gpu.thread_id x
// NESTED: scf.for
// NESTED-NEXT: %[[W:.*]] = arith.divsi %[[TX]], %c32
// NESTED-NEXT: %[[L:.*]] = arith.remsi %[[TX]], %c32
// NESTED: scf.for
// NESTED: %c15
// NESTED: scf.if
// NESTED: memref.store
// NESTED-NOT: memref.store
// NESTED: gpu.return
// CPU2: output 'v': max abs err 0.0e+00, {{.*}}: ok
module attributes {pb.stage = "smem"} {
  func.func private @k0(%x: memref<256xf32>, %y: memref<256xf32>) attributes {pb.kernel} {
    %two = arith.constant 2.0 : f32
    affine.parallel (%b) = (0) to (256) step (128) {
      affine.for %s = 0 to 2 {
        affine.parallel (%wi) = (0) to (2) {
          %c = arith.constant 1 : index
          affine.parallel (%wj) = (0) to (1) {
            affine.for %q = 0 to 2 {
              affine.if affine_set<(q) : (q >= 0)>(%q) {
                affine.parallel (%l) = (0) to (16) {
                  %v = affine.load %x[%b + %s * 64 + %wi * 32 + %q * 16 + %l] : memref<256xf32>
                  %m = arith.mulf %v, %two : f32
                  affine.store %m, %y[%b + %s * 64 + %wi * 32 + %q * 16 + %l] : memref<256xf32>
                } {pb.map = "thread"}
              }
            }
          } {pb.map = "warp"}
        } {pb.map = "warp"}
        affine.parallel (%w) = (0) to (0) {
          affine.parallel (%l) = (0) to (32) {
            affine.store %two, %y[%l] : memref<256xf32>
          } {pb.map = "thread"}
        } {pb.map = "warp"}
      }
    } {pb.map = "block"}
    return
  }
  func.func @main(%u: memref<256xf32> {pb.name = "u"}, %v: memref<256xf32> {pb.name = "v", pb.output}) {
    call @k0(%u, %v) : (memref<256xf32>, memref<256xf32>) -> ()
    return
  }
}

//--- errors.mlir
// A gpu.barrier inside a warp-mapped loop: the warps left out by the
// guard would never reach it.
// ERR: errors.mlir:[[# @LINE + 7]]:11: error: cannot lower 'gpu.barrier' inside a warp-mapped loop
module attributes {pb.stage = "smem"} {
  func.func private @k0(%a: memref<64xf32>) attributes {pb.kernel} {
    affine.parallel (%b) = (0) to (1) {
      affine.parallel (%w) = (0) to (2) {
        affine.parallel (%l) = (0) to (32) {
          %v = affine.load %a[%w * 32 + %l] : memref<64xf32>
          gpu.barrier
          affine.store %v, %a[%w * 32 + %l] : memref<64xf32>
        } {pb.map = "thread"}
      } {pb.map = "warp"}
    } {pb.map = "block"}
    return
  }
  func.func @main(%a: memref<64xf32> {pb.name = "a", pb.output}) {
    call @k0(%a) : (memref<64xf32>) -> ()
    return
  }
}

// -----

// The lanes of a warp are 32.
// ERR: errors.mlir:[[# @LINE + 4]]:7: error: thread-mapped loop of 64 iterations inside a warp-mapped loop exceeds 32 lanes
module attributes {pb.stage = "smem"} {
  func.func private @k0(%a: memref<64xf32>) attributes {pb.kernel} {
    affine.parallel (%w) = (0) to (2) {
      affine.parallel (%l) = (0) to (64) {
        %v = affine.load %a[%l] : memref<64xf32>
        affine.store %v, %a[%l] : memref<64xf32>
      } {pb.map = "thread"}
    } {pb.map = "warp"}
    return
  }
  func.func @main(%a: memref<64xf32> {pb.name = "a", pb.output}) {
    call @k0(%a) : (memref<64xf32>) -> ()
    return
  }
}

// -----

// A block has at most 32 warps (here 8 x 8 from two nested warp loops).
// ERR: errors.mlir:[[# @LINE + 5]]:9: error: warp-mapped loop of 64 iterations exceeds 32 warps per block
module attributes {pb.stage = "smem"} {
  func.func private @k0(%a: memref<64xf32>) attributes {pb.kernel} {
    affine.parallel (%b) = (0) to (2) {
      affine.parallel (%wi) = (0) to (8) {
        affine.parallel (%wj) = (0) to (8) {
          affine.parallel (%l) = (0) to (1) {
            %v = affine.load %a[%wi * 8 + %wj] : memref<64xf32>
            affine.store %v, %a[%wi * 8 + %wj] : memref<64xf32>
          } {pb.map = "thread"}
        } {pb.map = "warp"}
      } {pb.map = "warp"}
    } {pb.map = "block"}
    return
  }
  func.func @main(%a: memref<64xf32> {pb.name = "a", pb.output}) {
    call @k0(%a) : (memref<64xf32>) -> ()
    return
  }
}

// -----

// Warp loops need constant bounds.
// ERR: errors.mlir:[[# @LINE + 4]]:7: error: warp-mapped loop needs constant bounds and steps
module attributes {pb.stage = "smem"} {
  func.func private @k0(%a: memref<64xf32>) attributes {pb.kernel} {
    affine.parallel (%b) = (0) to (64) step (32) {
      affine.parallel (%w) = (0) to (min(2, -%b + 3)) {
        affine.parallel (%l) = (0) to (16) {
          %v = affine.load %a[%b + %w * 16 + %l] : memref<64xf32>
          affine.store %v, %a[%b + %w * 16 + %l] : memref<64xf32>
        } {pb.map = "thread"}
      } {pb.map = "warp"}
    } {pb.map = "block"}
    return
  }
  func.func @main(%a: memref<64xf32> {pb.name = "a", pb.output}) {
    call @k0(%a) : (memref<64xf32>) -> ()
    return
  }
}

// -----

// A warp loop inside a warp loop must be its only loop (perfectly nested).
// ERR: errors.mlir:[[# @LINE + 8]]:7: error: cannot lower a warp-mapped loop nested in another one other than as its only loop
module attributes {pb.stage = "smem"} {
  func.func private @k0(%a: memref<64xf32>) attributes {pb.kernel} {
    %z = arith.constant 0.0 : f32
    affine.parallel (%wi) = (0) to (2) {
      affine.parallel (%l) = (0) to (32) {
        affine.store %z, %a[%wi * 32 + %l] : memref<64xf32>
      } {pb.map = "thread"}
      affine.parallel (%wj) = (0) to (2) {
        affine.parallel (%l) = (0) to (16) {
          affine.store %z, %a[%wi * 32 + %wj * 16 + %l] : memref<64xf32>
        } {pb.map = "thread"}
      } {pb.map = "warp"}
    } {pb.map = "warp"}
    return
  }
  func.func @main(%a: memref<64xf32> {pb.name = "a", pb.output}) {
    call @k0(%a) : (memref<64xf32>) -> ()
    return
  }
}

// -----

// Warps hold lanes, not the other way round.
// ERR: errors.mlir:[[# @LINE + 5]]:7: error: cannot lower a warp-mapped loop inside a thread-mapped loop
module attributes {pb.stage = "smem"} {
  func.func private @k0(%a: memref<64xf32>) attributes {pb.kernel} {
    %z = arith.constant 0.0 : f32
    affine.parallel (%t) = (0) to (32) {
      affine.parallel (%w) = (0) to (2) {
        affine.store %z, %a[%w * 32 + %t] : memref<64xf32>
      } {pb.map = "warp"}
    } {pb.map = "thread"}
    return
  }
  func.func @main(%a: memref<64xf32> {pb.name = "a", pb.output}) {
    call @k0(%a) : (memref<64xf32>) -> ()
    return
  }
}

// -----

// Unknown mappings stay errors, alone at top level too.
// ERR: errors.mlir:[[# @LINE + 4]]:5: error: cannot lower a loop mapped to 'lane' inside a block
module attributes {pb.stage = "smem"} {
  func.func private @k0(%a: memref<64xf32>) attributes {pb.kernel} {
    %z = arith.constant 0.0 : f32
    affine.parallel (%t) = (0) to (32) {
      affine.store %z, %a[%t] : memref<64xf32>
    } {pb.map = "lane"}
    return
  }
  func.func @main(%a: memref<64xf32> {pb.name = "a", pb.output}) {
    call @k0(%a) : (memref<64xf32>) -> ()
    return
  }
}
