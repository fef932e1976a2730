// RUN: split-file %s %t
// Attention on tensor cores (docs/pb-mma.md, "Attention"): pb-fuse's
// attention nest (--fuse-attention) with --precision=fp16 or bf16 becomes
// FlashAttention-2's mapping: 16 query rows a warp, the keys 32 at a time,
// S = QK^T and O += PV as vector.contract on fragments, the online softmax
// on them (row maxima and sums: the score fragments combined element-wise,
// then one vector.multi_reduction; m, l and the
// rescaling factor as row vectors vector<16xf32>), P rounded and put side
// by side into PV's A operand without leaving registers. 20 query rows
// (the second warp's last 12 masked), head dimension 24 (the second step
// of 16 reads zeros past it) and 12 values (masked columns).
// RUN: pb-fuse --fuse-attention %t/att.mlir -o %t/fused.mlir
// RUN: pb-tile --precision=fp16 --remarks %t/fused.mlir -o %t/tile.mlir 2>&1 | FileCheck --check-prefix=TILE %s
// RUN: pb-mma --remarks %t/tile.mlir -o %t/mma.mlir 2>&1 | FileCheck --check-prefix=REM %s
// RUN: FileCheck %s < %t/mma.mlir

// The numbers against exact float32 attention, within fp16's tolerance
// (docs/pb-mma.md: atol 4u max|V| with u = 2^-11, rtol 1e-2); at the
// default tolerance they differ, as they should. After pb-smem too, and
// in bf16 (u = 2^-8).
// RUN: pb-run --random=1 --output %t/ref %t/fused.mlir
// RUN: pb-run --random=1 --rtol=1e-2 --atol=2e-3 --check %t/ref/o.npy %t/mma.mlir | FileCheck --check-prefix=NUM %s
// RUN: not pb-run --random=1 --check %t/ref/o.npy %t/mma.mlir 2>&1 | FileCheck --check-prefix=DIFF %s
// RUN: pb-smem --remarks %t/mma.mlir -o %t/smem.mlir 2>&1 | FileCheck --check-prefix=SMEM %s
// RUN: pb-run --random=1 --rtol=1e-2 --atol=2e-3 --check %t/ref/o.npy %t/smem.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=1 %t/mma.mlir -o %t/smem1.mlir
// RUN: pb-run --random=1 --rtol=1e-2 --atol=2e-3 --check %t/ref/o.npy %t/smem1.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=2 %t/mma.mlir -o %t/smem2.mlir
// RUN: pb-run --random=1 --rtol=1e-2 --atol=2e-3 --check %t/ref/o.npy %t/smem2.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-tile --precision=bf16 %t/fused.mlir | pb-mma -o %t/mmab.mlir
// RUN: pb-run --random=1 --rtol=2e-2 --atol=1.6e-2 --check %t/ref/o.npy %t/mmab.mlir | FileCheck --check-prefix=NUM %s

// pb-smem stages the K and V tiles of each step in block-shared rings
// (lib/smem/attention.c), filled by cp.async; on the GPU both products
// are mma.sync, the rows' reductions shuffles within each quad of lanes,
// and P goes through no shared memory (nothing is stored there but by
// cp.async and the zeros past V's 12 columns).
// RUN: pb-codegen --arch=sm_80 %t/smem.mlir -o %t/att.ptx
// RUN: FileCheck --check-prefix=PTX %s < %t/att.ptx
// RUN: FileCheck --check-prefix=NOSMEM %s < %t/att.ptx

// f16 data (the nest as pb-fuse writes it for a model in half precision:
// the operands widened after their loads): no rounding in pb-mma's code,
// K's tiles and V's (16 columns: whole 16-byte rows) staged, their
// fragments read with ldmatrix, V's transposed (its rows are keys, the k
// of P.V), two fragments 8 keys (K) or 8 columns (V) apart in one x4.
// RUN: pb-run --random=1 --output %t/ref16 %t/half.mlir
// RUN: pb-tile %t/half.mlir | pb-mma | pb-smem --remarks -o %t/half.smem.mlir 2>&1 | FileCheck --check-prefix=HALF %s
// RUN: pb-run --random=1 --rtol=1e-2 --atol=2e-3 --check %t/ref16/o.npy %t/half.smem.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-codegen --arch=sm_80 %t/half.smem.mlir | FileCheck --check-prefix=LDSM %s

// 32 query rows a warp (two row fragments sharing each K and V fragment),
// as the cost model picks for long sequences, forced with --sizes; in f32
// (rows 20 of a 64-row block masked) and f16 data; a bad --sizes.
// RUN: pb-mma --remarks --sizes='{ kernel[0] -> attention[64, 32, 32] }' %t/tile.mlir -o %t/m32.mlir 2>&1 | FileCheck --check-prefix=REM32 %s
// RUN: pb-run --random=1 --rtol=1e-2 --atol=2e-3 --check %t/ref/o.npy %t/m32.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-tile %t/half.mlir | pb-mma --sizes='{ kernel[0] -> attention[32, 32, 32] }' | pb-smem -o %t/h32.mlir
// RUN: pb-run --random=1 --rtol=1e-2 --atol=2e-3 --check %t/ref16/o.npy %t/h32.mlir | FileCheck --check-prefix=NUM %s
// RUN: pb-codegen --arch=sm_80 %t/h32.mlir | FileCheck --check-prefix=PTX32 %s
// RUN: not pb-mma --sizes='{ kernel[0] -> attention[48, 32, 32] }' %t/tile.mlir 2>&1 | FileCheck --check-prefix=BADSIZE %s

// Staying on CUDA cores: exact float32, tf32 (P's accumulator fragments
// are not a tf32 A operand's layout).
// RUN: pb-tile --remarks %t/fused.mlir 2>&1 >/dev/null | FileCheck --check-prefix=FP32 %s
// RUN: pb-tile --precision=tf32 --remarks %t/fused.mlir 2>&1 >/dev/null | FileCheck --check-prefix=TF32 %s

// 20 keys, not a multiple of 16: one step of 32, the scores past the
// 20th -inf (vector.create_mask and a select; on the GPU each lane
// compares its columns 2t, 2t + 1), K and V read as zeros past them.
// RUN: pb-fuse --fuse-attention %t/keys20.mlir -o %t/k20.fused
// RUN: pb-run --random=1 --output %t/rk20 %t/k20.fused
// RUN: pb-tile --precision=fp16 --remarks %t/k20.fused -o %t/k20.tile 2>&1 | FileCheck --check-prefix=KEYS %s
// RUN: pb-mma %t/k20.tile -o %t/k20.mma
// RUN: FileCheck --check-prefix=KMASK %s < %t/k20.mma
// RUN: pb-run --random=1 --rtol=1e-2 --atol=2e-3 --check %t/rk20/o.npy %t/k20.mma | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --remarks %t/k20.mma -o %t/k20.smem 2>&1 | FileCheck --check-prefix=KSTAGE %s
// RUN: FileCheck --check-prefix=KZERO %s < %t/k20.smem
// RUN: pb-run --random=1 --rtol=1e-2 --atol=2e-3 --check %t/rk20/o.npy %t/k20.smem | FileCheck --check-prefix=NUM %s
// RUN: pb-smem --stages=1 %t/k20.mma | pb-run --random=1 --rtol=1e-2 --atol=2e-3 --check %t/rk20/o.npy - | FileCheck --check-prefix=NUM %s
// RUN: pb-codegen --arch=sm_80 %t/k20.smem | FileCheck --check-prefix=KPTX %s

// SMEM: remark: attention tiles staged: K and V, 32 keys a step, 3 stages, 21504 bytes of shared memory for 2 warps
// TILE: remark: left to pb-mma: attention for tensor cores
// REM: remark: attention on tensor cores: mma.sync m16n8k16 f16 -> f32 for QK^T and PV, P in registers, 32 query rows a block, 16 a warp, 32 keys a step
// CHECK: affine.parallel (%[[B:.*]], %[[I0:.*]]) = (0, 0) to (2, 32) step (1, 32) {
// CHECK: affine.parallel (%[[W:.*]]) = (0) to (32) step (16) {
// CHECK: %[[Q0:.*]] = vector.transfer_read %arg0{{.*}} {in_bounds = [false, true]} : memref<2x20x24xf32>, vector<16x16xf32>
// CHECK: %[[Q1:.*]] = vector.transfer_read %arg0[{{.*}}], %{{[a-z_0-9]*}} : memref<2x20x24xf32>, vector<16x16xf32>
// CHECK: %[[R:.*]]:4 = affine.for %[[J:.*]] = 0 to 32 step 32 iter_args(%[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16x8xf32>, vector<16x8xf32>)
// CHECK-COUNT-8: vector.contract {{.*}} : vector<16x16xf16>, vector<16x8xf16> into vector<16x8xf32>
// CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<16x8xf32>
// CHECK-COUNT-3: arith.maximumf %{{.*}}, %{{.*}} : vector<16x8xf32>
// CHECK: %[[MX:.*]] = vector.multi_reduction <maximumf>, %{{.*}}, %[[M]] [1] : vector<16x8xf32> to vector<16xf32>
// CHECK-NOT: vector.multi_reduction <maximumf>
// CHECK: math.exp2 %{{.*}} : vector<16xf32>
// CHECK: vector.shape_cast %{{.*}} : vector<16xf32> to vector<16x1xf32>
// CHECK: vector.broadcast %{{.*}} : vector<16x1xf32> to vector<16x8xf32>
// CHECK-COUNT-4: math.exp2 %{{.*}} : vector<16x8xf32>
// CHECK-COUNT-3: arith.addf %{{.*}}, %{{.*}} : vector<16x8xf32>
// CHECK: vector.multi_reduction <add>
// CHECK-NOT: vector.multi_reduction
// CHECK: %[[P0:.*]] = arith.truncf %{{.*}} : vector<16x8xf32> to vector<16x8xf16>
// CHECK: %[[P1:.*]] = arith.truncf %{{.*}} : vector<16x8xf32> to vector<16x8xf16>
// CHECK: %[[PA:.*]] = vector.insert_strided_slice %[[P0]], %{{.*}} {offsets = [0, 0], strides = [1, 1]} : vector<16x8xf16> into vector<16x16xf16>
// CHECK: %[[PB:.*]] = vector.insert_strided_slice %[[P1]], %[[PA]] {offsets = [0, 8], strides = [1, 1]} : vector<16x8xf16> into vector<16x16xf16>
// CHECK: vector.contract {{.*}} %[[PB]], %{{.*}} : vector<16x16xf16>, vector<16x8xf16> into vector<16x8xf32>
// CHECK: affine.yield
// CHECK: arith.divf %[[R]]#2, %{{.*}} : vector<16x8xf32>
// CHECK: vector.transfer_write %{{.*}} {in_bounds = [false, true]} : vector<16x8xf32>, memref<2x20x12xf32>
// CHECK: arith.divf %[[R]]#3, %{{.*}} : vector<16x8xf32>
// CHECK: vector.transfer_write %{{.*}}, %arg3[{{.*}}] : vector<16x8xf32>, memref<2x20x12xf32>
// CHECK: } {pb.map = "warp"}
// CHECK: } {pb.map = "block"}
// NUM: output 'o': {{.*}}: ok
// DIFF: output 'o': {{.*}}: mismatch
// PTX-COUNT-8: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// PTX: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// PTX: ex2.approx.ftz.f32
// PTX-COUNT-4: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-NOT: mma.sync
// NOSMEM-NOT: st.shared{{.*}}], {{.*}}%
// NOSMEM: cp.async.cg.shared.global
// NOSMEM-NOT: st.shared{{.*}}], {{.*}}%
// HALF: remark: attention tiles staged: K and V, 32 keys a step, 3 stages, 12288 bytes of shared memory for 2 warps
// LDSM-COUNT-4: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// LDSM-COUNT-2: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// LDSM-NOT: ldmatrix
// REM32: remark: attention on tensor cores: mma.sync m16n8k16 f16 -> f32 for QK^T and PV, P in registers, 64 query rows a block, 32 a warp, 32 keys a step
// PTX32-COUNT-24: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX32-NOT: mma.sync
// BADSIZE: error: --sizes: kernel[0] -> attention[BM, WM, BN] takes 3 sizes
// FP32: remark: not for tensor cores: f32 operands, computed exactly (--precision=fp16 or bf16 runs attention on tensor cores)
// TF32: remark: not for tensor cores: tf32 attention: P's fragments are not in the layout of a tf32 A operand (fp16 or bf16 runs it on tensor cores)
// KEYS: remark: left to pb-mma: attention for tensor cores
// KMASK: affine.for %{{.*}} = 0 to 32 step 32
// KMASK: vector.create_mask %{{.*}}, %{{.*}} : vector<16x8xi1>
// KMASK: arith.select %{{.*}} : vector<16x8xi1>, vector<16x8xf32>
// keys 20 .. 31 of the one step: K's and V's rows there zeros in the
// ring (a guarded copy), the reads from the ring in bounds
// KSTAGE: remark: attention tiles staged: K and V, 32 keys a step
// KZERO: affine_set<(d0, d1, d2) : (-d0 - d1 + 19 >= 0)>
// KZERO: affine.if
// KZERO: affine.vector_load
// KZERO: } else {
// KZERO-NEXT: arith.constant dense<0.000000e+00> : vector<4xf32>
// KZERO-NOT: in_bounds = [false, true]} : memref<1x20x16xf32>
// KZERO-NOT: in_bounds = [true, false]} : memref<1x20x16xf32>
// KPTX: cp.async.cg.shared.global
// KPTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

//--- att.mlir
#q = affine_map<(b, i, j, d) -> (b, i, d)>
#k = affine_map<(b, i, j, d) -> (b, j, d)>
#s = affine_map<(b, i, j, d) -> (b, i, j)>
#id = affine_map<(b, i, j) -> (b, i, j)>
#row = affine_map<(b, i, j) -> (b, i)>
module {
  func.func @main(%q: tensor<2x20x24xf32> {pb.name = "q"}, %k: tensor<2x32x24xf32> {pb.name = "k"}, %v: tensor<2x32x12xf32> {pb.name = "v"}) -> (tensor<2x20x12xf32> {pb.name = "o"}) {
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %scale = arith.constant 0.35355339 : f32
    %e0 = tensor.empty() : tensor<2x20x32xf32>
    %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x20x32xf32>) -> tensor<2x20x32xf32> loc("MatMul_0")
    %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x20x24xf32>, tensor<2x32x24xf32>) outs(%s0 : tensor<2x20x32xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %o, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x20x32xf32> loc("MatMul_0")
    %e1 = tensor.empty() : tensor<2x20x32xf32>
    %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x20x32xf32>) outs(%e1 : tensor<2x20x32xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.mulf %a, %scale : f32
      linalg.yield %r : f32
    } -> tensor<2x20x32xf32> loc("Mul_0")
    %e2 = tensor.empty() : tensor<2x20xf32>
    %m0 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<2x20xf32>) -> tensor<2x20xf32> loc("Softmax_0")
    %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x20x32xf32>) outs(%m0 : tensor<2x20xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.maximumf %a, %o : f32
      linalg.yield %r : f32
    } -> tensor<2x20xf32> loc("Softmax_0")
    %e3 = tensor.empty() : tensor<2x20x32xf32>
    %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %m : tensor<2x20x32xf32>, tensor<2x20xf32>) outs(%e3 : tensor<2x20x32xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      %e = math.exp %d : f32
      linalg.yield %e : f32
    } -> tensor<2x20x32xf32> loc("Softmax_0")
    %e4 = tensor.empty() : tensor<2x20xf32>
    %l0 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<2x20xf32>) -> tensor<2x20xf32> loc("Softmax_0")
    %l = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ex : tensor<2x20x32xf32>) outs(%l0 : tensor<2x20xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.addf %a, %o : f32
      linalg.yield %r : f32
    } -> tensor<2x20xf32> loc("Softmax_0")
    %e5 = tensor.empty() : tensor<2x20x32xf32>
    %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %l : tensor<2x20x32xf32>, tensor<2x20xf32>) outs(%e5 : tensor<2x20x32xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.divf %a, %b : f32
      linalg.yield %d : f32
    } -> tensor<2x20x32xf32> loc("Softmax_0")
    %e6 = tensor.empty() : tensor<2x20x12xf32>
    %o0 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<2x20x12xf32>) -> tensor<2x20x12xf32> loc("MatMul_1")
    %o = linalg.batch_matmul ins(%p, %v : tensor<2x20x32xf32>, tensor<2x32x12xf32>) outs(%o0 : tensor<2x20x12xf32>) -> tensor<2x20x12xf32> loc("MatMul_1")
    return %o : tensor<2x20x12xf32>
  }
}
//--- keys20.mlir
#q = affine_map<(b, i, j, d) -> (b, i, d)>
#k = affine_map<(b, i, j, d) -> (b, j, d)>
#s = affine_map<(b, i, j, d) -> (b, i, j)>
#id = affine_map<(b, i, j) -> (b, i, j)>
#row = affine_map<(b, i, j) -> (b, i)>
module {
  func.func @main(%q: tensor<1x16x16xf32> {pb.name = "q"}, %k: tensor<1x20x16xf32> {pb.name = "k"}, %v: tensor<1x20x8xf32> {pb.name = "v"}) -> (tensor<1x16x8xf32> {pb.name = "o"}) {
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %scale = arith.constant 0.35355339 : f32
    %e0 = tensor.empty() : tensor<1x16x20xf32>
    %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x16x20xf32>) -> tensor<1x16x20xf32> loc("MatMul_0")
    %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x16x16xf32>, tensor<1x20x16xf32>) outs(%s0 : tensor<1x16x20xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %o, %m : f32
      linalg.yield %r : f32
    } -> tensor<1x16x20xf32> loc("MatMul_0")
    %e1 = tensor.empty() : tensor<1x16x20xf32>
    %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<1x16x20xf32>) outs(%e1 : tensor<1x16x20xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.mulf %a, %scale : f32
      linalg.yield %r : f32
    } -> tensor<1x16x20xf32> loc("Mul_0")
    %e2 = tensor.empty() : tensor<1x16xf32>
    %m0 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<1x16xf32>) -> tensor<1x16xf32> loc("Softmax_0")
    %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<1x16x20xf32>) outs(%m0 : tensor<1x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.maximumf %a, %o : f32
      linalg.yield %r : f32
    } -> tensor<1x16xf32> loc("Softmax_0")
    %e3 = tensor.empty() : tensor<1x16x20xf32>
    %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %m : tensor<1x16x20xf32>, tensor<1x16xf32>) outs(%e3 : tensor<1x16x20xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      %e = math.exp %d : f32
      linalg.yield %e : f32
    } -> tensor<1x16x20xf32> loc("Softmax_0")
    %e4 = tensor.empty() : tensor<1x16xf32>
    %l0 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<1x16xf32>) -> tensor<1x16xf32> loc("Softmax_0")
    %l = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ex : tensor<1x16x20xf32>) outs(%l0 : tensor<1x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.addf %a, %o : f32
      linalg.yield %r : f32
    } -> tensor<1x16xf32> loc("Softmax_0")
    %e5 = tensor.empty() : tensor<1x16x20xf32>
    %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %l : tensor<1x16x20xf32>, tensor<1x16xf32>) outs(%e5 : tensor<1x16x20xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.divf %a, %b : f32
      linalg.yield %d : f32
    } -> tensor<1x16x20xf32> loc("Softmax_0")
    %e6 = tensor.empty() : tensor<1x16x8xf32>
    %o0 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<1x16x8xf32>) -> tensor<1x16x8xf32> loc("MatMul_1")
    %o = linalg.batch_matmul ins(%p, %v : tensor<1x16x20xf32>, tensor<1x20x8xf32>) outs(%o0 : tensor<1x16x8xf32>) -> tensor<1x16x8xf32> loc("MatMul_1")
    return %o : tensor<1x16x8xf32>
  }
}
//--- half.mlir
module attributes {pb.stage = "fuse"} {
  func.func private @k0_MatMul_0(%arg0: memref<2x20x24xf16>, %arg1: memref<2x32x24xf16>, %arg2: memref<2x32x16xf16>, %arg3: memref<2x20x16xf32>) attributes {pb.kernel, pb.nodes = ["MatMul_0", "MatMul_1", "Softmax_0", "Mul_0"]} {
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 0.000000e+00 : f32
    %cst_1 = arith.constant 0.353553385 : f32
    affine.parallel (%arg4) = (0) to (2) {
      affine.parallel (%arg5) = (0) to (20) {
        %alloca = memref.alloca() : memref<f32>
        %alloca_2 = memref.alloca() : memref<f32>
        %alloca_3 = memref.alloca() : memref<16xf32>
        %alloca_4 = memref.alloca() : memref<f32>
        affine.store %cst, %alloca[] : memref<f32>
        affine.store %cst_0, %alloca_2[] : memref<f32>
        affine.for %arg6 = 0 to 16 {
          affine.store %cst_0, %alloca_3[%arg6] : memref<16xf32>
        }
        affine.for %arg6 = 0 to 32 {
          affine.store %cst_0, %alloca_4[] : memref<f32>
          affine.for %arg7 = 0 to 24 {
            %14 = affine.load %alloca_4[] : memref<f32>
            %h15 = affine.load %arg0[%arg4, %arg5, %arg7] : memref<2x20x24xf16>
            %15 = arith.extf %h15 : f16 to f32
            %h16 = affine.load %arg1[%arg4, %arg6, %arg7] : memref<2x32x24xf16>
            %16 = arith.extf %h16 : f16 to f32
            %17 = arith.mulf %15, %16 : f32
            %18 = arith.addf %14, %17 : f32
            affine.store %18, %alloca_4[] : memref<f32>
          }
          %1 = affine.load %alloca_4[] : memref<f32>
          %2 = arith.mulf %1, %cst_1 : f32
          %3 = affine.load %alloca[] : memref<f32>
          %4 = arith.maximumf %2, %3 : f32
          %5 = arith.cmpf oeq, %4, %cst : f32
          %6 = arith.select %5, %cst_0, %4 : f32
          %7 = arith.subf %3, %6 : f32
          %8 = math.exp %7 : f32
          %9 = arith.subf %2, %6 : f32
          %10 = math.exp %9 : f32
          %11 = affine.load %alloca_2[] : memref<f32>
          %12 = arith.mulf %11, %8 : f32
          %13 = arith.addf %12, %10 : f32
          affine.store %13, %alloca_2[] : memref<f32>
          affine.for %arg7 = 0 to 16 {
            %14 = affine.load %alloca_3[%arg7] : memref<16xf32>
            %h15 = affine.load %arg2[%arg4, %arg6, %arg7] : memref<2x32x16xf16>
            %15 = arith.extf %h15 : f16 to f32
            %16 = arith.mulf %10, %15 : f32
            %17 = arith.mulf %14, %8 : f32
            %18 = arith.addf %17, %16 : f32
            affine.store %18, %alloca_3[%arg7] : memref<16xf32>
          }
          affine.store %4, %alloca[] : memref<f32>
        }
        %0 = affine.load %alloca_2[] : memref<f32>
        affine.for %arg6 = 0 to 16 {
          %1 = affine.load %alloca_3[%arg6] : memref<16xf32>
          %2 = arith.divf %1, %0 : f32
          affine.store %2, %arg3[%arg4, %arg5, %arg6] : memref<2x20x16xf32>
        }
      }
    }
    return
  }
  func.func @main(%arg0: memref<2x20x24xf16> {pb.name = "q"}, %arg1: memref<2x32x24xf16> {pb.name = "k"}, %arg2: memref<2x32x16xf16> {pb.name = "v"}, %arg3: memref<2x20x16xf32> {pb.name = "o", pb.output}) {
    call @k0_MatMul_0(%arg0, %arg1, %arg2, %arg3) : (memref<2x20x24xf16>, memref<2x32x24xf16>, memref<2x32x16xf16>, memref<2x20x16xf32>) -> ()
    return
  }
}

