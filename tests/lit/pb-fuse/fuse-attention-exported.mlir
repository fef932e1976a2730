// RUN: split-file %s %t
// RUN: pb-fuse --fuse-attention --remarks %t/f16.mlir -o %t/f16.out 2>%t/f16.rem
// RUN: FileCheck --check-prefix=F16 %s < %t/f16.out
// RUN: FileCheck --check-prefix=F16REM %s < %t/f16.rem
// RUN: %python %S/Inputs/numcheck.py --rtol=1e-2 --atol=1e-3 %t/f16.mlir %t/f16.out | FileCheck --check-prefix=NUM16 %s
// RUN: pb-tile --remarks %t/f16.out 2>&1 >/dev/null | FileCheck --check-prefix=TILE %s
// RUN: sed 's/f16/bf16/g' %t/f16.mlir > %t/bf16.mlir
// RUN: pb-fuse --fuse-attention %t/bf16.mlir -o %t/bf16.out
// RUN: FileCheck --check-prefix=BF16 %s < %t/bf16.out
// RUN: %python %S/Inputs/numcheck.py --rtol=2e-2 --atol=1e-2 %t/bf16.mlir %t/bf16.out | FileCheck --check-prefix=NUM16 %s
// RUN: pb-fuse --fuse-attention --remarks %t/f32.mlir -o %t/f32.out 2>%t/f32.rem
// RUN: FileCheck --check-prefix=F32 %s < %t/f32.out
// RUN: FileCheck --check-prefix=F32REM %s < %t/f32.rem
// RUN: %python %S/Inputs/numcheck.py %t/f32.mlir %t/f32.out | FileCheck --check-prefix=NUM32 %s
// RUN: pb-fuse --fuse-attention --remarks %t/kt.mlir -o %t/kt.out 2>%t/kt.rem
// RUN: FileCheck --check-prefix=KT %s < %t/kt.out
// RUN: FileCheck --check-prefix=KTREM %s < %t/kt.rem
// RUN: %python %S/Inputs/numcheck.py %t/kt.mlir %t/kt.out | FileCheck --check-prefix=KTNUM %s
// RUN: pb-fuse --fuse-attention --remarks %t/pout.mlir -o %t/pout.out 2>%t/pout.rem
// RUN: FileCheck --check-prefix=POUT %s < %t/pout.out
// RUN: FileCheck --check-prefix=POUTREM %s < %t/pout.rem
// RUN: %python %S/Inputs/numcheck.py %t/pout.mlir %t/pout.out | FileCheck --check-prefix=POUTNUM %s
// RUN: pb-fuse --fuse-attention --remarks %t/mpad.mlir -o %t/mpad.out 2>%t/mpad.rem
// RUN: FileCheck --check-prefix=MPAD %s < %t/mpad.out
// RUN: FileCheck --check-prefix=MREM %s < %t/mpad.rem
// RUN: %python %S/Inputs/numcheck.py --rtol=1e-2 --atol=1e-3 %t/mpad.mlir %t/mpad.out | FileCheck --check-prefix=NUM16 %s
// RUN: pb-tile --remarks %t/mpad.out -o %t/mpad.tile 2>&1 | FileCheck --check-prefix=MTC %s
// RUN: pb-mma %t/mpad.tile | pb-smem -o %t/mpad.tc
// RUN: pb-run --random=1 --output %t/mpadref %t/mpad.out
// RUN: pb-run --random=1 --rtol=1e-2 --atol=2e-3 --check %t/mpadref/y.npy %t/mpad.tc | FileCheck --check-prefix=TCNUM %s
// RUN: pb-fuse --fuse-attention --remarks %t/mcausal.mlir -o %t/mcausal.out 2>%t/mcausal.rem
// RUN: FileCheck --check-prefix=MCAUSAL %s < %t/mcausal.out
// RUN: FileCheck --check-prefix=MREM %s < %t/mcausal.rem
// RUN: %python %S/Inputs/numcheck.py %t/mcausal.mlir %t/mcausal.out | FileCheck --check-prefix=NUM16 %s
// RUN: pb-tile --precision=fp16 --remarks %t/mcausal.out -o %t/mcausal.tile 2>&1 | FileCheck --check-prefix=MTC %s
// RUN: pb-mma %t/mcausal.tile | pb-smem -o %t/mcausal.tc
// RUN: pb-run --random=1 --output %t/mcausalref %t/mcausal.out
// RUN: pb-run --random=1 --rtol=1e-2 --atol=2e-3 --check %t/mcausalref/y.npy %t/mcausal.tc | FileCheck --check-prefix=TCNUM %s
// RUN: pb-fuse --fuse-attention --remarks %t/where.mlir -o %t/where.out 2>%t/where.rem
// RUN: FileCheck --check-prefix=WHERE %s < %t/where.out
// RUN: FileCheck --check-prefix=MREM %s < %t/where.rem
// RUN: %python %S/Inputs/numcheck.py %t/where.mlir %t/where.out | FileCheck --check-prefix=NUM16 %s
// RUN: pb-tile --precision=fp16 --remarks %t/where.out -o %t/where.tile 2>&1 | FileCheck --check-prefix=MTC %s
// RUN: pb-mma --precision=fp16 %t/where.tile | pb-smem -o %t/where.tc
// RUN: FileCheck --check-prefix=WTC %s < %t/where.tc
// RUN: pb-run --random=1 --output %t/whereref %t/where.out
// RUN: pb-run --random=1 --rtol=1e-2 --atol=2e-3 --check %t/whereref/y.npy %t/where.tc | FileCheck --check-prefix=TCNUM %s
// RUN: pb-fuse --fuse-attention --remarks %t/where16.mlir -o %t/where16.out 2>%t/where16.rem
// RUN: FileCheck --check-prefix=W16REM %s < %t/where16.rem
// RUN: FileCheck --check-prefix=W16 %s < %t/where16.out
// RUN: %python %S/Inputs/numcheck.py --rtol=1e-2 --atol=1e-3 %t/where16.mlir %t/where16.out | FileCheck --check-prefix=NUM16 %s

// Attention as pb-import writes an exported graph (Transpose, MatMul, Mul,
// Softmax, MatMul on [1, heads, seq, dim] tensors): --fuse-attention makes
// it ONE kernel. The Transpose of K (read along QK^T's reduction, which
// copy.c keeps as a copy) is folded into the nest's K loads, and the
// fused nest writes the 4-d output directly (no copy of a 3-d result).

// f16 data (pb-import --cast=f16): S, the scaled S and P are rounded to
// f16 between the ops and the softmax runs in f32. The fused nest keeps
// S and P in f32 (as FlashAttention does): Q, K and V are widened after
// their loads, O narrowed before its store; nothing else is rounded.
// F16-LABEL: func.func private @k0_MatMul_1
// F16-SAME: (%[[Q:arg[0-9]+]]: memref<1x2x4x16xf16>, %[[K:arg[0-9]+]]: memref<1x2x16x16xf16>, %[[V:arg[0-9]+]]: memref<1x2x16x8xf16>, %[[O:arg[0-9]+]]: memref<1x2x4x8xf16>)
// F16-SAME: pb.nodes = ["MatMul_1", "MatMul_5", "Softmax_4", "Transpose_0", "Mul_3"]
// F16: affine.parallel (%[[H:arg[0-9]+]]) = (0) to (2) {
// F16-NEXT: affine.parallel (%[[I:arg[0-9]+]]) = (0) to (4) {
// F16: affine.for %[[J:arg[0-9]+]] = 0 to 16 {
// F16: affine.for %[[D:arg[0-9]+]] = 0 to 16 {
// F16-NEXT: affine.load %{{.*}}[] : memref<f32>
// F16-NEXT: %[[QL:.*]] = affine.load %[[Q]][0, %[[H]], %[[I]], %[[D]]] : memref<1x2x4x16xf16>
// F16-NEXT: %[[QE:.*]] = arith.extf %[[QL]] : f16 to f32
// F16-NEXT: %[[KL:.*]] = affine.load %[[K]][0, %[[H]], %[[J]], %[[D]]] : memref<1x2x16x16xf16>
// F16-NEXT: %[[KE:.*]] = arith.extf %[[KL]] : f16 to f32
// F16-NEXT: arith.mulf %[[QE]], %[[KE]] : f32
// F16: %[[SV:.*]] = affine.load %{{.*}}[] : memref<f32>
// F16-NEXT: arith.mulf %[[SV]], %cst{{.*}} : f32
// F16-NOT: arith.truncf
// F16: affine.load %[[V]][0, %[[H]], %[[J]], %{{.*}}] : memref<1x2x16x8xf16>
// F16-NEXT: arith.extf %{{.*}} : f16 to f32
// F16-NOT: arith.truncf
// F16: arith.divf
// F16-NEXT: %[[T:.*]] = arith.truncf %{{.*}} : f32 to f16
// F16-NEXT: affine.store %[[T]], %[[O]][0, %[[H]], %[[I]], %{{.*}}] : memref<1x2x4x8xf16>
// F16-NOT: func.func private
// F16-LABEL: func.func @main
// F16-NOT: memref.alloc
// F16: call @k0_MatMul_1
// F16-NEXT: return

// F16REM: f16.mlir: node 'Transpose_0': remark: copy folded into its 1 reads (attention's operand): they load its source
// F16REM: f16.mlir: node 'MatMul_1': remark: attention fused: QK^T, softmax and PV in one nest (online softmax), S and P (2880 bytes) never stored, the output written in place

// Within fp16 (bf16) tolerance of the unfused chain, which rounds S and P.
// NUM16: OK: 1 outputs, 64 values

// The nest is the form pb-tile leaves to pb-mma (lib/kernel/attention.c).
// TILE: remark: left to pb-mma: attention for tensor cores

// BF16-LABEL: func.func private @k0_MatMul_1
// BF16: arith.extf %{{.*}} : bf16 to f32
// BF16: arith.truncf %{{.*}} : f32 to bf16
// BF16-NOT: func.func private
// BF16-LABEL: func.func @main
// BF16-NOT: memref.alloc
// BF16: call @k0_MatMul_1
// BF16-NEXT: return

// f32: the result of the 3-d batch_matmul is returned through an
// expand_shape, which bufferization turns into a copy; the nest writes
// the output instead.
// F32-LABEL: func.func private @k0_MatMul_1
// F32-SAME: (%[[Q:arg[0-9]+]]: memref<1x2x4x8xf32>, %[[K:arg[0-9]+]]: memref<1x2x6x8xf32>, %[[V:arg[0-9]+]]: memref<1x2x6x5xf32>, %[[O:arg[0-9]+]]: memref<1x2x4x5xf32>)
// F32: affine.parallel (%[[H:arg[0-9]+]]) = (0) to (2) {
// F32-NEXT: affine.parallel (%[[I:arg[0-9]+]]) = (0) to (4) {
// F32: affine.load %[[K]][0, %[[H]], %{{.*}}, %{{.*}}] : memref<1x2x6x8xf32>
// F32: %[[OV:.*]] = arith.divf
// F32-NEXT: affine.store %[[OV]], %[[O]][0, %[[H]], %[[I]], %{{.*}}] : memref<1x2x4x5xf32>
// F32-NOT: func.func private
// F32-LABEL: func.func @main
// F32-NOT: memref.alloc
// F32: call @k0_MatMul_1
// F32-NEXT: return
// F32REM: f32.mlir: node 'Transpose_0': remark: copy folded into its 1 reads (attention's operand): they load its source
// F32REM: f32.mlir: node 'MatMul_1': remark: attention fused: {{.*}}, the output written in place
// NUM32: OK: 1 outputs, 40 values

// Negative: K^T is also a result of the graph, so the Transpose stays a
// kernel of its own; the attention is still fused, reading K^T.
// KT-LABEL: func.func private @k0_Transpose_0
// KT-LABEL: func.func private @k1_MatMul_1
// KT-SAME: (%{{.*}}: memref<1x2x4x8xf32>, %[[KT:arg[0-9]+]]: memref<1x2x8x6xf32>,
// KT: arith.cmpf oeq
// KT-NOT: func.func private
// KT-LABEL: func.func @main
// KTREM-NOT: copy folded
// KTREM: kt.mlir: node 'MatMul_1': remark: attention fused
// KTNUM: OK: 2 outputs, 136 values

// Negative: P rounded to f16 is also a result, so it must be stored:
// nothing is fused into the online form, and the remark says why.
// POUTREM: pout.mlir: node 'MatMul_1': remark: attention not fused: the rounded P is not a buffer of its own (a function argument, an output?)
// POUT-NOT: arith.cmpf
// POUT: func.func @main
// POUTNUM: OK: 2 outputs, 88 values

// Masks: an additive mask (an Add before the Softmax) is added in the
// nest after the scale, before the running maximum, read where the Add
// read it: BERT's padding mask [1, 1, 1, keys] broadcast over heads and
// rows (f16 data: widened like the scores), a causal mask [rows, keys]
// (f32, the mask the Add's first operand). On tensor cores (f16 data, or
// f32 at --precision=fp16) pb-mma reads the mask as fragments of the
// scores (docs/pb-mma.md, "Attention"); the numbers against the fused
// nest's on the CPU.
// MPAD-LABEL: func.func private @k0_MatMul_1
// MPAD-SAME: %[[M:arg[0-9]+]]: memref<1x1x1x16xf16>
// MPAD-SAME: pb.nodes = ["MatMul_1", "MatMul_6", "Softmax_5", "Transpose_0", "Mul_3", "Add_4"]
// MPAD: affine.for %[[J:arg[0-9]+]] = 0 to 16 {
// MPAD: %[[SV:.*]] = arith.mulf %{{.*}}, %cst{{.*}} : f32
// MPAD-NEXT: %[[ML:.*]] = affine.load %[[M]][0, 0, 0, %[[J]]] : memref<1x1x1x16xf16>
// MPAD-NEXT: %[[ME:.*]] = arith.extf %[[ML]] : f16 to f32
// MPAD-NEXT: %[[X:.*]] = arith.addf %[[SV]], %[[ME]] : f32
// MPAD-NEXT: %[[MO:.*]] = affine.load %{{.*}}[] : memref<f32>
// MPAD-NEXT: arith.maximumf %[[X]], %[[MO]] : f32
// MPAD-NOT: func.func private
// MCAUSAL-LABEL: func.func private @k0_MatMul_1
// MCAUSAL-SAME: %[[M:arg[0-9]+]]: memref<4x16xf32>
// MCAUSAL: affine.parallel (%{{.*}}) = (0) to (2) {
// MCAUSAL-NEXT: affine.parallel (%[[I:arg[0-9]+]]) = (0) to (4) {
// MCAUSAL: affine.for %[[J:arg[0-9]+]] = 0 to 16 {
// MCAUSAL: %[[SV:.*]] = arith.mulf %{{.*}}, %cst{{.*}} : f32
// MCAUSAL-NEXT: %[[ML:.*]] = affine.load %[[M]][%[[I]], %[[J]]] : memref<4x16xf32>
// MCAUSAL-NEXT: %[[X:.*]] = arith.addf %[[SV]], %[[ML]] : f32
// MCAUSAL-NEXT: %[[MO:.*]] = affine.load %{{.*}}[] : memref<f32>
// MCAUSAL-NEXT: arith.maximumf %[[X]], %[[MO]] : f32
// MCAUSAL-NOT: func.func private
// A Where(cond, scores, -inf) before the Softmax (a causal mask as a
// condition [rows, keys]) is the same select in the nest.
// WHERE-LABEL: func.func private @k0_MatMul_1
// WHERE-SAME: %[[C:arg[0-9]+]]: memref<4x16xi1>
// WHERE-SAME: "Where_4"
// WHERE: affine.parallel (%{{.*}}) = (0) to (2) {
// WHERE-NEXT: affine.parallel (%[[I:arg[0-9]+]]) = (0) to (4) {
// WHERE: affine.for %[[J:arg[0-9]+]] = 0 to 16 {
// WHERE: %[[SV:.*]] = arith.mulf %{{.*}}, %cst{{.*}} : f32
// WHERE-NEXT: %[[CL:.*]] = affine.load %[[C]][%[[I]], %[[J]]] : memref<4x16xi1>
// WHERE-NEXT: %[[X:.*]] = arith.select %[[CL]], %[[SV]], %{{.*}} : f32
// WHERE-NEXT: %[[MO:.*]] = affine.load %{{.*}}[] : memref<f32>
// WHERE-NEXT: arith.maximumf %[[X]], %[[MO]] : f32
// WHERE-NOT: func.func private
// With f16 data the Where selects between f16 scores (a select needs no
// widening): fused, the nest keeps the scores in f32 and selects the
// other value widened (its f16 -inf as an f32 constant), as it drops the
// scores' other roundings.
// W16REM: where16.mlir: node 'MatMul_1': remark: attention fused
// W16: arith.constant 0xFF800000 : f32
// W16: %[[CL:.*]] = affine.load %{{.*}} : memref<4x16xi1>
// W16-NEXT: arith.select %[[CL]], %{{.*}}, %{{.*}} : f32
// MREM: node 'MatMul_1': remark: attention fused
// On tensor cores (tests/lit/pb-mma/attention-mask.test has more): the
// condition as 16x8 boolean fragments, the other value (-inf) broadcast.
// WTC: %[[FILL:.*]] = arith.constant dense<0xFF800000> : vector<16x8xf32>
// WTC: %[[C:.*]] = vector.transfer_read {{.*}} : memref<4x16xi1>, vector<16x8xi1>
// WTC: arith.select %[[C]], %{{.*}}, %[[FILL]] : vector<16x8xi1>, vector<16x8xf32>
// MTC: remark: left to pb-mma: attention for tensor cores
// TCNUM: output 'y': {{.*}}: ok

//--- f16.mlir
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
module attributes {pb.stage = "import"} {
  func.func @main(%arg0: tensor<1x2x4x16xf16> {pb.name = "q"}, %arg1: tensor<1x2x16x16xf16> {pb.name = "k"}, %arg2: tensor<1x2x16x8xf16> {pb.name = "v"}) -> (tensor<1x2x4x8xf16> {pb.name = "y"}) {
    %0 = tensor.empty() : tensor<1x2x16x16xf16> loc("Transpose_0")
    %transposed = linalg.transpose ins(%arg1 : tensor<1x2x16x16xf16>) outs(%0 : tensor<1x2x16x16xf16>) permutation = [0, 1, 3, 2] loc("Transpose_0")
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<1x2x4x16xf16> into tensor<2x4x16xf16> loc("MatMul_1")
    %collapsed_0 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x2x16x16xf16> into tensor<2x16x16xf16> loc("MatMul_1")
    %cst = arith.constant 0.000000e+00 : f32
    %1 = tensor.empty() : tensor<2x4x16xf32> loc("MatMul_1")
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32> loc("MatMul_1")
    %3 = linalg.batch_matmul ins(%collapsed, %collapsed_0 : tensor<2x4x16xf16>, tensor<2x16x16xf16>) outs(%2 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32> loc("MatMul_1")
    %expanded = tensor.expand_shape %3 [[0, 1], [2], [3]] output_shape [1, 2, 4, 16] : tensor<2x4x16xf32> into tensor<1x2x4x16xf32> loc("MatMul_1")
    %4 = tensor.empty() : tensor<1x2x4x16xf16> loc("MatMul_1")
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x2x4x16xf32>) outs(%4 : tensor<1x2x4x16xf16>) {
    ^bb0(%in: f32, %out: f16):
      %27 = arith.truncf %in : f32 to f16 loc("MatMul_1")
      linalg.yield %27 : f16
    } -> tensor<1x2x4x16xf16> loc("MatMul_1")
    %6 = tensor.empty() : tensor<1x2x4x16xf16> loc("Mul_3")
    %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5 : tensor<1x2x4x16xf16>) outs(%6 : tensor<1x2x4x16xf16>) {
    ^bb0(%in: f16, %out: f16):
      %27 = arith.extf %in : f16 to f32 loc("Mul_3")
      %cst_7 = arith.constant 2.500000e-01 : f32
      %28 = arith.mulf %27, %cst_7 : f32 loc("Mul_3")
      %29 = arith.truncf %28 : f32 to f16 loc("Mul_3")
      linalg.yield %29 : f16
    } -> tensor<1x2x4x16xf16> loc("Mul_3")
    %8 = tensor.empty() : tensor<1x2x4x16xf32> loc("Softmax_4")
    %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%7 : tensor<1x2x4x16xf16>) outs(%8 : tensor<1x2x4x16xf32>) {
    ^bb0(%in: f16, %out: f32):
      %27 = arith.extf %in : f16 to f32 loc("Softmax_4")
      linalg.yield %27 : f32
    } -> tensor<1x2x4x16xf32> loc("Softmax_4")
    %cst_1 = arith.constant 0xFF800000 : f32
    %10 = tensor.empty() : tensor<1x2x4xf32> loc("Softmax_4")
    %11 = linalg.fill ins(%cst_1 : f32) outs(%10 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("Softmax_4")
    %12 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%9 : tensor<1x2x4x16xf32>) outs(%11 : tensor<1x2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.maximumf %in, %out : f32 loc("Softmax_4")
      linalg.yield %27 : f32
    } -> tensor<1x2x4xf32> loc("Softmax_4")
    %13 = tensor.empty() : tensor<1x2x4x16xf32> loc("Softmax_4")
    %14 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%9, %12 : tensor<1x2x4x16xf32>, tensor<1x2x4xf32>) outs(%13 : tensor<1x2x4x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %27 = arith.subf %in, %in_7 : f32 loc("Softmax_4")
      %28 = math.exp %27 : f32 loc("Softmax_4")
      linalg.yield %28 : f32
    } -> tensor<1x2x4x16xf32> loc("Softmax_4")
    %cst_2 = arith.constant 0.000000e+00 : f32
    %15 = tensor.empty() : tensor<1x2x4xf32> loc("Softmax_4")
    %16 = linalg.fill ins(%cst_2 : f32) outs(%15 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("Softmax_4")
    %17 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%14 : tensor<1x2x4x16xf32>) outs(%16 : tensor<1x2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.addf %in, %out : f32 loc("Softmax_4")
      linalg.yield %27 : f32
    } -> tensor<1x2x4xf32> loc("Softmax_4")
    %18 = tensor.empty() : tensor<1x2x4x16xf32> loc("Softmax_4")
    %19 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14, %17 : tensor<1x2x4x16xf32>, tensor<1x2x4xf32>) outs(%18 : tensor<1x2x4x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %27 = arith.divf %in, %in_7 : f32 loc("Softmax_4")
      linalg.yield %27 : f32
    } -> tensor<1x2x4x16xf32> loc("Softmax_4")
    %20 = tensor.empty() : tensor<1x2x4x16xf16> loc("Softmax_4")
    %21 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%19 : tensor<1x2x4x16xf32>) outs(%20 : tensor<1x2x4x16xf16>) {
    ^bb0(%in: f32, %out: f16):
      %27 = arith.truncf %in : f32 to f16 loc("Softmax_4")
      linalg.yield %27 : f16
    } -> tensor<1x2x4x16xf16> loc("Softmax_4")
    %collapsed_3 = tensor.collapse_shape %21 [[0, 1], [2], [3]] : tensor<1x2x4x16xf16> into tensor<2x4x16xf16> loc("MatMul_5")
    %collapsed_4 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x2x16x8xf16> into tensor<2x16x8xf16> loc("MatMul_5")
    %cst_5 = arith.constant 0.000000e+00 : f32
    %22 = tensor.empty() : tensor<2x4x8xf32> loc("MatMul_5")
    %23 = linalg.fill ins(%cst_5 : f32) outs(%22 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("MatMul_5")
    %24 = linalg.batch_matmul ins(%collapsed_3, %collapsed_4 : tensor<2x4x16xf16>, tensor<2x16x8xf16>) outs(%23 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("MatMul_5")
    %expanded_6 = tensor.expand_shape %24 [[0, 1], [2], [3]] output_shape [1, 2, 4, 8] : tensor<2x4x8xf32> into tensor<1x2x4x8xf32> loc("MatMul_5")
    %25 = tensor.empty() : tensor<1x2x4x8xf16> loc("MatMul_5")
    %26 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_6 : tensor<1x2x4x8xf32>) outs(%25 : tensor<1x2x4x8xf16>) {
    ^bb0(%in: f32, %out: f16):
      %27 = arith.truncf %in : f32 to f16 loc("MatMul_5")
      linalg.yield %27 : f16
    } -> tensor<1x2x4x8xf16> loc("MatMul_5")
    return %26 : tensor<1x2x4x8xf16>
  }
}

//--- f32.mlir
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
module attributes {pb.stage = "import"} {
  func.func @main(%arg0: tensor<1x2x4x8xf32> {pb.name = "q"}, %arg1: tensor<1x2x6x8xf32> {pb.name = "k"}, %arg2: tensor<1x2x6x5xf32> {pb.name = "v"}) -> (tensor<1x2x4x5xf32> {pb.name = "y"}) {
    %0 = tensor.empty() : tensor<1x2x8x6xf32> loc("Transpose_0")
    %transposed = linalg.transpose ins(%arg1 : tensor<1x2x6x8xf32>) outs(%0 : tensor<1x2x8x6xf32>) permutation = [0, 1, 3, 2] loc("Transpose_0")
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<1x2x4x8xf32> into tensor<2x4x8xf32> loc("MatMul_1")
    %collapsed_0 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x2x8x6xf32> into tensor<2x8x6xf32> loc("MatMul_1")
    %cst = arith.constant 0.000000e+00 : f32
    %1 = tensor.empty() : tensor<2x4x6xf32> loc("MatMul_1")
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32> loc("MatMul_1")
    %3 = linalg.batch_matmul ins(%collapsed, %collapsed_0 : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%2 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32> loc("MatMul_1")
    %expanded = tensor.expand_shape %3 [[0, 1], [2], [3]] output_shape [1, 2, 4, 6] : tensor<2x4x6xf32> into tensor<1x2x4x6xf32> loc("MatMul_1")
    %4 = tensor.empty() : tensor<1x2x4x6xf32> loc("Mul_3")
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x2x4x6xf32>) outs(%4 : tensor<1x2x4x6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_7 = arith.constant 2.500000e-01 : f32
      %19 = arith.mulf %in, %cst_7 : f32 loc("Mul_3")
      linalg.yield %19 : f32
    } -> tensor<1x2x4x6xf32> loc("Mul_3")
    %cst_1 = arith.constant 0xFF800000 : f32
    %6 = tensor.empty() : tensor<1x2x4xf32> loc("Softmax_4")
    %7 = linalg.fill ins(%cst_1 : f32) outs(%6 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("Softmax_4")
    %8 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%5 : tensor<1x2x4x6xf32>) outs(%7 : tensor<1x2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %19 = arith.maximumf %in, %out : f32 loc("Softmax_4")
      linalg.yield %19 : f32
    } -> tensor<1x2x4xf32> loc("Softmax_4")
    %9 = tensor.empty() : tensor<1x2x4x6xf32> loc("Softmax_4")
    %10 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5, %8 : tensor<1x2x4x6xf32>, tensor<1x2x4xf32>) outs(%9 : tensor<1x2x4x6xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %19 = arith.subf %in, %in_7 : f32 loc("Softmax_4")
      %20 = math.exp %19 : f32 loc("Softmax_4")
      linalg.yield %20 : f32
    } -> tensor<1x2x4x6xf32> loc("Softmax_4")
    %cst_2 = arith.constant 0.000000e+00 : f32
    %11 = tensor.empty() : tensor<1x2x4xf32> loc("Softmax_4")
    %12 = linalg.fill ins(%cst_2 : f32) outs(%11 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("Softmax_4")
    %13 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%10 : tensor<1x2x4x6xf32>) outs(%12 : tensor<1x2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %19 = arith.addf %in, %out : f32 loc("Softmax_4")
      linalg.yield %19 : f32
    } -> tensor<1x2x4xf32> loc("Softmax_4")
    %14 = tensor.empty() : tensor<1x2x4x6xf32> loc("Softmax_4")
    %15 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%10, %13 : tensor<1x2x4x6xf32>, tensor<1x2x4xf32>) outs(%14 : tensor<1x2x4x6xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %19 = arith.divf %in, %in_7 : f32 loc("Softmax_4")
      linalg.yield %19 : f32
    } -> tensor<1x2x4x6xf32> loc("Softmax_4")
    %collapsed_3 = tensor.collapse_shape %15 [[0, 1], [2], [3]] : tensor<1x2x4x6xf32> into tensor<2x4x6xf32> loc("MatMul_5")
    %collapsed_4 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x2x6x5xf32> into tensor<2x6x5xf32> loc("MatMul_5")
    %cst_5 = arith.constant 0.000000e+00 : f32
    %16 = tensor.empty() : tensor<2x4x5xf32> loc("MatMul_5")
    %17 = linalg.fill ins(%cst_5 : f32) outs(%16 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32> loc("MatMul_5")
    %18 = linalg.batch_matmul ins(%collapsed_3, %collapsed_4 : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%17 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32> loc("MatMul_5")
    %expanded_6 = tensor.expand_shape %18 [[0, 1], [2], [3]] output_shape [1, 2, 4, 5] : tensor<2x4x5xf32> into tensor<1x2x4x5xf32> loc("MatMul_5")
    return %expanded_6 : tensor<1x2x4x5xf32>
  }
}

//--- kt.mlir
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
module attributes {pb.stage = "import"} {
  func.func @main(%arg0: tensor<1x2x4x8xf32> {pb.name = "q"}, %arg1: tensor<1x2x6x8xf32> {pb.name = "k"}, %arg2: tensor<1x2x6x5xf32> {pb.name = "v"}) -> (tensor<1x2x4x5xf32> {pb.name = "y"}, tensor<1x2x8x6xf32> {pb.name = "kt"}) {
    %0 = tensor.empty() : tensor<1x2x8x6xf32> loc("Transpose_0")
    %transposed = linalg.transpose ins(%arg1 : tensor<1x2x6x8xf32>) outs(%0 : tensor<1x2x8x6xf32>) permutation = [0, 1, 3, 2] loc("Transpose_0")
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<1x2x4x8xf32> into tensor<2x4x8xf32> loc("MatMul_1")
    %collapsed_0 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x2x8x6xf32> into tensor<2x8x6xf32> loc("MatMul_1")
    %cst = arith.constant 0.000000e+00 : f32
    %1 = tensor.empty() : tensor<2x4x6xf32> loc("MatMul_1")
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32> loc("MatMul_1")
    %3 = linalg.batch_matmul ins(%collapsed, %collapsed_0 : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%2 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32> loc("MatMul_1")
    %expanded = tensor.expand_shape %3 [[0, 1], [2], [3]] output_shape [1, 2, 4, 6] : tensor<2x4x6xf32> into tensor<1x2x4x6xf32> loc("MatMul_1")
    %4 = tensor.empty() : tensor<1x2x4x6xf32> loc("Mul_3")
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x2x4x6xf32>) outs(%4 : tensor<1x2x4x6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_7 = arith.constant 2.500000e-01 : f32
      %19 = arith.mulf %in, %cst_7 : f32 loc("Mul_3")
      linalg.yield %19 : f32
    } -> tensor<1x2x4x6xf32> loc("Mul_3")
    %cst_1 = arith.constant 0xFF800000 : f32
    %6 = tensor.empty() : tensor<1x2x4xf32> loc("Softmax_4")
    %7 = linalg.fill ins(%cst_1 : f32) outs(%6 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("Softmax_4")
    %8 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%5 : tensor<1x2x4x6xf32>) outs(%7 : tensor<1x2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %19 = arith.maximumf %in, %out : f32 loc("Softmax_4")
      linalg.yield %19 : f32
    } -> tensor<1x2x4xf32> loc("Softmax_4")
    %9 = tensor.empty() : tensor<1x2x4x6xf32> loc("Softmax_4")
    %10 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5, %8 : tensor<1x2x4x6xf32>, tensor<1x2x4xf32>) outs(%9 : tensor<1x2x4x6xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %19 = arith.subf %in, %in_7 : f32 loc("Softmax_4")
      %20 = math.exp %19 : f32 loc("Softmax_4")
      linalg.yield %20 : f32
    } -> tensor<1x2x4x6xf32> loc("Softmax_4")
    %cst_2 = arith.constant 0.000000e+00 : f32
    %11 = tensor.empty() : tensor<1x2x4xf32> loc("Softmax_4")
    %12 = linalg.fill ins(%cst_2 : f32) outs(%11 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("Softmax_4")
    %13 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%10 : tensor<1x2x4x6xf32>) outs(%12 : tensor<1x2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %19 = arith.addf %in, %out : f32 loc("Softmax_4")
      linalg.yield %19 : f32
    } -> tensor<1x2x4xf32> loc("Softmax_4")
    %14 = tensor.empty() : tensor<1x2x4x6xf32> loc("Softmax_4")
    %15 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%10, %13 : tensor<1x2x4x6xf32>, tensor<1x2x4xf32>) outs(%14 : tensor<1x2x4x6xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %19 = arith.divf %in, %in_7 : f32 loc("Softmax_4")
      linalg.yield %19 : f32
    } -> tensor<1x2x4x6xf32> loc("Softmax_4")
    %collapsed_3 = tensor.collapse_shape %15 [[0, 1], [2], [3]] : tensor<1x2x4x6xf32> into tensor<2x4x6xf32> loc("MatMul_5")
    %collapsed_4 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x2x6x5xf32> into tensor<2x6x5xf32> loc("MatMul_5")
    %cst_5 = arith.constant 0.000000e+00 : f32
    %16 = tensor.empty() : tensor<2x4x5xf32> loc("MatMul_5")
    %17 = linalg.fill ins(%cst_5 : f32) outs(%16 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32> loc("MatMul_5")
    %18 = linalg.batch_matmul ins(%collapsed_3, %collapsed_4 : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%17 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32> loc("MatMul_5")
    %expanded_6 = tensor.expand_shape %18 [[0, 1], [2], [3]] output_shape [1, 2, 4, 5] : tensor<2x4x5xf32> into tensor<1x2x4x5xf32> loc("MatMul_5")
    return %expanded_6, %transposed : tensor<1x2x4x5xf32>, tensor<1x2x8x6xf32>
  }
}

//--- pout.mlir
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
module attributes {pb.stage = "import"} {
  func.func @main(%arg0: tensor<1x2x4x8xf16> {pb.name = "q"}, %arg1: tensor<1x2x6x8xf16> {pb.name = "k"}, %arg2: tensor<1x2x6x5xf16> {pb.name = "v"}) -> (tensor<1x2x4x5xf16> {pb.name = "y"}, tensor<1x2x4x6xf16> {pb.name = "p"}) {
    %0 = tensor.empty() : tensor<1x2x8x6xf16> loc("Transpose_0")
    %transposed = linalg.transpose ins(%arg1 : tensor<1x2x6x8xf16>) outs(%0 : tensor<1x2x8x6xf16>) permutation = [0, 1, 3, 2] loc("Transpose_0")
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<1x2x4x8xf16> into tensor<2x4x8xf16> loc("MatMul_1")
    %collapsed_0 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x2x8x6xf16> into tensor<2x8x6xf16> loc("MatMul_1")
    %cst = arith.constant 0.000000e+00 : f32
    %1 = tensor.empty() : tensor<2x4x6xf32> loc("MatMul_1")
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32> loc("MatMul_1")
    %3 = linalg.batch_matmul ins(%collapsed, %collapsed_0 : tensor<2x4x8xf16>, tensor<2x8x6xf16>) outs(%2 : tensor<2x4x6xf32>) -> tensor<2x4x6xf32> loc("MatMul_1")
    %expanded = tensor.expand_shape %3 [[0, 1], [2], [3]] output_shape [1, 2, 4, 6] : tensor<2x4x6xf32> into tensor<1x2x4x6xf32> loc("MatMul_1")
    %4 = tensor.empty() : tensor<1x2x4x6xf16> loc("MatMul_1")
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x2x4x6xf32>) outs(%4 : tensor<1x2x4x6xf16>) {
    ^bb0(%in: f32, %out: f16):
      %27 = arith.truncf %in : f32 to f16 loc("MatMul_1")
      linalg.yield %27 : f16
    } -> tensor<1x2x4x6xf16> loc("MatMul_1")
    %6 = tensor.empty() : tensor<1x2x4x6xf16> loc("Mul_3")
    %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5 : tensor<1x2x4x6xf16>) outs(%6 : tensor<1x2x4x6xf16>) {
    ^bb0(%in: f16, %out: f16):
      %27 = arith.extf %in : f16 to f32 loc("Mul_3")
      %cst_7 = arith.constant 2.500000e-01 : f32
      %28 = arith.mulf %27, %cst_7 : f32 loc("Mul_3")
      %29 = arith.truncf %28 : f32 to f16 loc("Mul_3")
      linalg.yield %29 : f16
    } -> tensor<1x2x4x6xf16> loc("Mul_3")
    %8 = tensor.empty() : tensor<1x2x4x6xf32> loc("Softmax_4")
    %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%7 : tensor<1x2x4x6xf16>) outs(%8 : tensor<1x2x4x6xf32>) {
    ^bb0(%in: f16, %out: f32):
      %27 = arith.extf %in : f16 to f32 loc("Softmax_4")
      linalg.yield %27 : f32
    } -> tensor<1x2x4x6xf32> loc("Softmax_4")
    %cst_1 = arith.constant 0xFF800000 : f32
    %10 = tensor.empty() : tensor<1x2x4xf32> loc("Softmax_4")
    %11 = linalg.fill ins(%cst_1 : f32) outs(%10 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("Softmax_4")
    %12 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%9 : tensor<1x2x4x6xf32>) outs(%11 : tensor<1x2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.maximumf %in, %out : f32 loc("Softmax_4")
      linalg.yield %27 : f32
    } -> tensor<1x2x4xf32> loc("Softmax_4")
    %13 = tensor.empty() : tensor<1x2x4x6xf32> loc("Softmax_4")
    %14 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%9, %12 : tensor<1x2x4x6xf32>, tensor<1x2x4xf32>) outs(%13 : tensor<1x2x4x6xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %27 = arith.subf %in, %in_7 : f32 loc("Softmax_4")
      %28 = math.exp %27 : f32 loc("Softmax_4")
      linalg.yield %28 : f32
    } -> tensor<1x2x4x6xf32> loc("Softmax_4")
    %cst_2 = arith.constant 0.000000e+00 : f32
    %15 = tensor.empty() : tensor<1x2x4xf32> loc("Softmax_4")
    %16 = linalg.fill ins(%cst_2 : f32) outs(%15 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("Softmax_4")
    %17 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%14 : tensor<1x2x4x6xf32>) outs(%16 : tensor<1x2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.addf %in, %out : f32 loc("Softmax_4")
      linalg.yield %27 : f32
    } -> tensor<1x2x4xf32> loc("Softmax_4")
    %18 = tensor.empty() : tensor<1x2x4x6xf32> loc("Softmax_4")
    %19 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14, %17 : tensor<1x2x4x6xf32>, tensor<1x2x4xf32>) outs(%18 : tensor<1x2x4x6xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %27 = arith.divf %in, %in_7 : f32 loc("Softmax_4")
      linalg.yield %27 : f32
    } -> tensor<1x2x4x6xf32> loc("Softmax_4")
    %20 = tensor.empty() : tensor<1x2x4x6xf16> loc("Softmax_4")
    %21 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%19 : tensor<1x2x4x6xf32>) outs(%20 : tensor<1x2x4x6xf16>) {
    ^bb0(%in: f32, %out: f16):
      %27 = arith.truncf %in : f32 to f16 loc("Softmax_4")
      linalg.yield %27 : f16
    } -> tensor<1x2x4x6xf16> loc("Softmax_4")
    %collapsed_3 = tensor.collapse_shape %21 [[0, 1], [2], [3]] : tensor<1x2x4x6xf16> into tensor<2x4x6xf16> loc("MatMul_5")
    %collapsed_4 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x2x6x5xf16> into tensor<2x6x5xf16> loc("MatMul_5")
    %cst_5 = arith.constant 0.000000e+00 : f32
    %22 = tensor.empty() : tensor<2x4x5xf32> loc("MatMul_5")
    %23 = linalg.fill ins(%cst_5 : f32) outs(%22 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32> loc("MatMul_5")
    %24 = linalg.batch_matmul ins(%collapsed_3, %collapsed_4 : tensor<2x4x6xf16>, tensor<2x6x5xf16>) outs(%23 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32> loc("MatMul_5")
    %expanded_6 = tensor.expand_shape %24 [[0, 1], [2], [3]] output_shape [1, 2, 4, 5] : tensor<2x4x5xf32> into tensor<1x2x4x5xf32> loc("MatMul_5")
    %25 = tensor.empty() : tensor<1x2x4x5xf16> loc("MatMul_5")
    %26 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_6 : tensor<1x2x4x5xf32>) outs(%25 : tensor<1x2x4x5xf16>) {
    ^bb0(%in: f32, %out: f16):
      %27 = arith.truncf %in : f32 to f16 loc("MatMul_5")
      linalg.yield %27 : f16
    } -> tensor<1x2x4x5xf16> loc("MatMul_5")
    return %26, %21 : tensor<1x2x4x5xf16>, tensor<1x2x4x6xf16>
  }
}

//--- mpad.mlir
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
module attributes {pb.stage = "import"} {
  func.func @main(%arg0: tensor<1x2x4x16xf16> {pb.name = "q"}, %arg1: tensor<1x2x16x16xf16> {pb.name = "k"}, %arg2: tensor<1x2x16x8xf16> {pb.name = "v"}, %arg3: tensor<1x1x1x16xf16> {pb.name = "mask"}) -> (tensor<1x2x4x8xf16> {pb.name = "y"}) {
    %0 = tensor.empty() : tensor<1x2x16x16xf16> loc("Transpose_0")
    %transposed = linalg.transpose ins(%arg1 : tensor<1x2x16x16xf16>) outs(%0 : tensor<1x2x16x16xf16>) permutation = [0, 1, 3, 2] loc("Transpose_0")
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<1x2x4x16xf16> into tensor<2x4x16xf16> loc("MatMul_1")
    %collapsed_0 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x2x16x16xf16> into tensor<2x16x16xf16> loc("MatMul_1")
    %cst = arith.constant 0.000000e+00 : f32
    %1 = tensor.empty() : tensor<2x4x16xf32> loc("MatMul_1")
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32> loc("MatMul_1")
    %3 = linalg.batch_matmul ins(%collapsed, %collapsed_0 : tensor<2x4x16xf16>, tensor<2x16x16xf16>) outs(%2 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32> loc("MatMul_1")
    %expanded = tensor.expand_shape %3 [[0, 1], [2], [3]] output_shape [1, 2, 4, 16] : tensor<2x4x16xf32> into tensor<1x2x4x16xf32> loc("MatMul_1")
    %4 = tensor.empty() : tensor<1x2x4x16xf16> loc("MatMul_1")
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x2x4x16xf32>) outs(%4 : tensor<1x2x4x16xf16>) {
    ^bb0(%in: f32, %out: f16):
      %29 = arith.truncf %in : f32 to f16 loc("MatMul_1")
      linalg.yield %29 : f16
    } -> tensor<1x2x4x16xf16> loc("MatMul_1")
    %6 = tensor.empty() : tensor<1x2x4x16xf16> loc("Mul_3")
    %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5 : tensor<1x2x4x16xf16>) outs(%6 : tensor<1x2x4x16xf16>) {
    ^bb0(%in: f16, %out: f16):
      %29 = arith.extf %in : f16 to f32 loc("Mul_3")
      %cst_7 = arith.constant 2.500000e-01 : f32
      %30 = arith.mulf %29, %cst_7 : f32 loc("Mul_3")
      %31 = arith.truncf %30 : f32 to f16 loc("Mul_3")
      linalg.yield %31 : f16
    } -> tensor<1x2x4x16xf16> loc("Mul_3")
    %8 = tensor.empty() : tensor<1x2x4x16xf16> loc("Add_4")
    %9 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%7, %arg3 : tensor<1x2x4x16xf16>, tensor<1x1x1x16xf16>) outs(%8 : tensor<1x2x4x16xf16>) {
    ^bb0(%in: f16, %in_7: f16, %out: f16):
      %29 = arith.extf %in : f16 to f32 loc("Add_4")
      %30 = arith.extf %in_7 : f16 to f32 loc("Add_4")
      %31 = arith.addf %29, %30 : f32 loc("Add_4")
      %32 = arith.truncf %31 : f32 to f16 loc("Add_4")
      linalg.yield %32 : f16
    } -> tensor<1x2x4x16xf16> loc("Add_4")
    %10 = tensor.empty() : tensor<1x2x4x16xf32> loc("Softmax_5")
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%9 : tensor<1x2x4x16xf16>) outs(%10 : tensor<1x2x4x16xf32>) {
    ^bb0(%in: f16, %out: f32):
      %29 = arith.extf %in : f16 to f32 loc("Softmax_5")
      linalg.yield %29 : f32
    } -> tensor<1x2x4x16xf32> loc("Softmax_5")
    %cst_1 = arith.constant 0xFF800000 : f32
    %12 = tensor.empty() : tensor<1x2x4xf32> loc("Softmax_5")
    %13 = linalg.fill ins(%cst_1 : f32) outs(%12 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("Softmax_5")
    %14 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%11 : tensor<1x2x4x16xf32>) outs(%13 : tensor<1x2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %29 = arith.maximumf %in, %out : f32 loc("Softmax_5")
      linalg.yield %29 : f32
    } -> tensor<1x2x4xf32> loc("Softmax_5")
    %15 = tensor.empty() : tensor<1x2x4x16xf32> loc("Softmax_5")
    %16 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11, %14 : tensor<1x2x4x16xf32>, tensor<1x2x4xf32>) outs(%15 : tensor<1x2x4x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %29 = arith.subf %in, %in_7 : f32 loc("Softmax_5")
      %30 = math.exp %29 : f32 loc("Softmax_5")
      linalg.yield %30 : f32
    } -> tensor<1x2x4x16xf32> loc("Softmax_5")
    %cst_2 = arith.constant 0.000000e+00 : f32
    %17 = tensor.empty() : tensor<1x2x4xf32> loc("Softmax_5")
    %18 = linalg.fill ins(%cst_2 : f32) outs(%17 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("Softmax_5")
    %19 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%16 : tensor<1x2x4x16xf32>) outs(%18 : tensor<1x2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %29 = arith.addf %in, %out : f32 loc("Softmax_5")
      linalg.yield %29 : f32
    } -> tensor<1x2x4xf32> loc("Softmax_5")
    %20 = tensor.empty() : tensor<1x2x4x16xf32> loc("Softmax_5")
    %21 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%16, %19 : tensor<1x2x4x16xf32>, tensor<1x2x4xf32>) outs(%20 : tensor<1x2x4x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %29 = arith.divf %in, %in_7 : f32 loc("Softmax_5")
      linalg.yield %29 : f32
    } -> tensor<1x2x4x16xf32> loc("Softmax_5")
    %22 = tensor.empty() : tensor<1x2x4x16xf16> loc("Softmax_5")
    %23 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%21 : tensor<1x2x4x16xf32>) outs(%22 : tensor<1x2x4x16xf16>) {
    ^bb0(%in: f32, %out: f16):
      %29 = arith.truncf %in : f32 to f16 loc("Softmax_5")
      linalg.yield %29 : f16
    } -> tensor<1x2x4x16xf16> loc("Softmax_5")
    %collapsed_3 = tensor.collapse_shape %23 [[0, 1], [2], [3]] : tensor<1x2x4x16xf16> into tensor<2x4x16xf16> loc("MatMul_6")
    %collapsed_4 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x2x16x8xf16> into tensor<2x16x8xf16> loc("MatMul_6")
    %cst_5 = arith.constant 0.000000e+00 : f32
    %24 = tensor.empty() : tensor<2x4x8xf32> loc("MatMul_6")
    %25 = linalg.fill ins(%cst_5 : f32) outs(%24 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("MatMul_6")
    %26 = linalg.batch_matmul ins(%collapsed_3, %collapsed_4 : tensor<2x4x16xf16>, tensor<2x16x8xf16>) outs(%25 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("MatMul_6")
    %expanded_6 = tensor.expand_shape %26 [[0, 1], [2], [3]] output_shape [1, 2, 4, 8] : tensor<2x4x8xf32> into tensor<1x2x4x8xf32> loc("MatMul_6")
    %27 = tensor.empty() : tensor<1x2x4x8xf16> loc("MatMul_6")
    %28 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_6 : tensor<1x2x4x8xf32>) outs(%27 : tensor<1x2x4x8xf16>) {
    ^bb0(%in: f32, %out: f16):
      %29 = arith.truncf %in : f32 to f16 loc("MatMul_6")
      linalg.yield %29 : f16
    } -> tensor<1x2x4x8xf16> loc("MatMul_6")
    return %28 : tensor<1x2x4x8xf16>
  }
}

//--- mcausal.mlir
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
module attributes {pb.stage = "import"} {
  func.func @main(%arg0: tensor<1x2x4x16xf32> {pb.name = "q"}, %arg1: tensor<1x2x16x16xf32> {pb.name = "k"}, %arg2: tensor<1x2x16x8xf32> {pb.name = "v"}, %arg3: tensor<4x16xf32> {pb.name = "mask"}) -> (tensor<1x2x4x8xf32> {pb.name = "y"}) {
    %0 = tensor.empty() : tensor<1x2x16x16xf32> loc("Transpose_0")
    %transposed = linalg.transpose ins(%arg1 : tensor<1x2x16x16xf32>) outs(%0 : tensor<1x2x16x16xf32>) permutation = [0, 1, 3, 2] loc("Transpose_0")
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<1x2x4x16xf32> into tensor<2x4x16xf32> loc("MatMul_1")
    %collapsed_0 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x2x16x16xf32> into tensor<2x16x16xf32> loc("MatMul_1")
    %cst = arith.constant 0.000000e+00 : f32
    %1 = tensor.empty() : tensor<2x4x16xf32> loc("MatMul_1")
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32> loc("MatMul_1")
    %3 = linalg.batch_matmul ins(%collapsed, %collapsed_0 : tensor<2x4x16xf32>, tensor<2x16x16xf32>) outs(%2 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32> loc("MatMul_1")
    %expanded = tensor.expand_shape %3 [[0, 1], [2], [3]] output_shape [1, 2, 4, 16] : tensor<2x4x16xf32> into tensor<1x2x4x16xf32> loc("MatMul_1")
    %4 = tensor.empty() : tensor<1x2x4x16xf32> loc("Mul_3")
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x2x4x16xf32>) outs(%4 : tensor<1x2x4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_7 = arith.constant 2.500000e-01 : f32
      %21 = arith.mulf %in, %cst_7 : f32 loc("Mul_3")
      linalg.yield %21 : f32
    } -> tensor<1x2x4x16xf32> loc("Mul_3")
    %6 = tensor.empty() : tensor<1x2x4x16xf32> loc("Add_4")
    %7 = linalg.generic {indexing_maps = [#map1, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg3, %5 : tensor<4x16xf32>, tensor<1x2x4x16xf32>) outs(%6 : tensor<1x2x4x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %21 = arith.addf %in, %in_7 : f32 loc("Add_4")
      linalg.yield %21 : f32
    } -> tensor<1x2x4x16xf32> loc("Add_4")
    %cst_1 = arith.constant 0xFF800000 : f32
    %8 = tensor.empty() : tensor<1x2x4xf32> loc("Softmax_5")
    %9 = linalg.fill ins(%cst_1 : f32) outs(%8 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("Softmax_5")
    %10 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%7 : tensor<1x2x4x16xf32>) outs(%9 : tensor<1x2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %21 = arith.maximumf %in, %out : f32 loc("Softmax_5")
      linalg.yield %21 : f32
    } -> tensor<1x2x4xf32> loc("Softmax_5")
    %11 = tensor.empty() : tensor<1x2x4x16xf32> loc("Softmax_5")
    %12 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%7, %10 : tensor<1x2x4x16xf32>, tensor<1x2x4xf32>) outs(%11 : tensor<1x2x4x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %21 = arith.subf %in, %in_7 : f32 loc("Softmax_5")
      %22 = math.exp %21 : f32 loc("Softmax_5")
      linalg.yield %22 : f32
    } -> tensor<1x2x4x16xf32> loc("Softmax_5")
    %cst_2 = arith.constant 0.000000e+00 : f32
    %13 = tensor.empty() : tensor<1x2x4xf32> loc("Softmax_5")
    %14 = linalg.fill ins(%cst_2 : f32) outs(%13 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("Softmax_5")
    %15 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%12 : tensor<1x2x4x16xf32>) outs(%14 : tensor<1x2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %21 = arith.addf %in, %out : f32 loc("Softmax_5")
      linalg.yield %21 : f32
    } -> tensor<1x2x4xf32> loc("Softmax_5")
    %16 = tensor.empty() : tensor<1x2x4x16xf32> loc("Softmax_5")
    %17 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%12, %15 : tensor<1x2x4x16xf32>, tensor<1x2x4xf32>) outs(%16 : tensor<1x2x4x16xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %21 = arith.divf %in, %in_7 : f32 loc("Softmax_5")
      linalg.yield %21 : f32
    } -> tensor<1x2x4x16xf32> loc("Softmax_5")
    %collapsed_3 = tensor.collapse_shape %17 [[0, 1], [2], [3]] : tensor<1x2x4x16xf32> into tensor<2x4x16xf32> loc("MatMul_6")
    %collapsed_4 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x2x16x8xf32> into tensor<2x16x8xf32> loc("MatMul_6")
    %cst_5 = arith.constant 0.000000e+00 : f32
    %18 = tensor.empty() : tensor<2x4x8xf32> loc("MatMul_6")
    %19 = linalg.fill ins(%cst_5 : f32) outs(%18 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("MatMul_6")
    %20 = linalg.batch_matmul ins(%collapsed_3, %collapsed_4 : tensor<2x4x16xf32>, tensor<2x16x8xf32>) outs(%19 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("MatMul_6")
    %expanded_6 = tensor.expand_shape %20 [[0, 1], [2], [3]] output_shape [1, 2, 4, 8] : tensor<2x4x8xf32> into tensor<1x2x4x8xf32> loc("MatMul_6")
    return %expanded_6 : tensor<1x2x4x8xf32>
  }
}

//--- where.mlir
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#map2 = affine_map<(d0, d1, d2, d3) -> ()>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
module attributes {pb.stage = "import"} {
  func.func @main(%arg0: tensor<1x2x4x16xf32> {pb.name = "q"}, %arg1: tensor<1x2x16x16xf32> {pb.name = "k"}, %arg2: tensor<1x2x16x8xf32> {pb.name = "v"}, %arg3: tensor<4x16xi1> {pb.name = "cond"}) -> (tensor<1x2x4x8xf32> {pb.name = "y"}) {
    %0 = tensor.empty() : tensor<1x2x16x16xf32> loc("Transpose_0")
    %transposed = linalg.transpose ins(%arg1 : tensor<1x2x16x16xf32>) outs(%0 : tensor<1x2x16x16xf32>) permutation = [0, 1, 3, 2] loc("Transpose_0")
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<1x2x4x16xf32> into tensor<2x4x16xf32> loc("MatMul_1")
    %collapsed_0 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x2x16x16xf32> into tensor<2x16x16xf32> loc("MatMul_1")
    %cst = arith.constant 0.000000e+00 : f32
    %1 = tensor.empty() : tensor<2x4x16xf32> loc("MatMul_1")
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32> loc("MatMul_1")
    %3 = linalg.batch_matmul ins(%collapsed, %collapsed_0 : tensor<2x4x16xf32>, tensor<2x16x16xf32>) outs(%2 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32> loc("MatMul_1")
    %expanded = tensor.expand_shape %3 [[0, 1], [2], [3]] output_shape [1, 2, 4, 16] : tensor<2x4x16xf32> into tensor<1x2x4x16xf32> loc("MatMul_1")
    %4 = tensor.empty() : tensor<1x2x4x16xf32> loc("Mul_3")
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x2x4x16xf32>) outs(%4 : tensor<1x2x4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_8 = arith.constant 2.500000e-01 : f32
      %21 = arith.mulf %in, %cst_8 : f32 loc("Mul_3")
      linalg.yield %21 : f32
    } -> tensor<1x2x4x16xf32> loc("Mul_3")
    %cst_1 = arith.constant dense<0xFF800000> : tensor<f32>
    %6 = tensor.empty() : tensor<1x2x4x16xf32> loc("Where_4")
    %7 = linalg.generic {indexing_maps = [#map1, #map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg3, %5, %cst_1 : tensor<4x16xi1>, tensor<1x2x4x16xf32>, tensor<f32>) outs(%6 : tensor<1x2x4x16xf32>) {
    ^bb0(%in: i1, %in_8: f32, %in_9: f32, %out: f32):
      %21 = arith.select %in, %in_8, %in_9 : f32 loc("Where_4")
      linalg.yield %21 : f32
    } -> tensor<1x2x4x16xf32> loc("Where_4")
    %cst_2 = arith.constant 0xFF800000 : f32
    %8 = tensor.empty() : tensor<1x2x4xf32> loc("Softmax_5")
    %9 = linalg.fill ins(%cst_2 : f32) outs(%8 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("Softmax_5")
    %10 = linalg.generic {indexing_maps = [#map, #map3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%7 : tensor<1x2x4x16xf32>) outs(%9 : tensor<1x2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %21 = arith.maximumf %in, %out : f32 loc("Softmax_5")
      linalg.yield %21 : f32
    } -> tensor<1x2x4xf32> loc("Softmax_5")
    %11 = tensor.empty() : tensor<1x2x4x16xf32> loc("Softmax_5")
    %12 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%7, %10 : tensor<1x2x4x16xf32>, tensor<1x2x4xf32>) outs(%11 : tensor<1x2x4x16xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %21 = arith.subf %in, %in_8 : f32 loc("Softmax_5")
      %22 = math.exp %21 : f32 loc("Softmax_5")
      linalg.yield %22 : f32
    } -> tensor<1x2x4x16xf32> loc("Softmax_5")
    %cst_3 = arith.constant 0.000000e+00 : f32
    %13 = tensor.empty() : tensor<1x2x4xf32> loc("Softmax_5")
    %14 = linalg.fill ins(%cst_3 : f32) outs(%13 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("Softmax_5")
    %15 = linalg.generic {indexing_maps = [#map, #map3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%12 : tensor<1x2x4x16xf32>) outs(%14 : tensor<1x2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %21 = arith.addf %in, %out : f32 loc("Softmax_5")
      linalg.yield %21 : f32
    } -> tensor<1x2x4xf32> loc("Softmax_5")
    %16 = tensor.empty() : tensor<1x2x4x16xf32> loc("Softmax_5")
    %17 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%12, %15 : tensor<1x2x4x16xf32>, tensor<1x2x4xf32>) outs(%16 : tensor<1x2x4x16xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %21 = arith.divf %in, %in_8 : f32 loc("Softmax_5")
      linalg.yield %21 : f32
    } -> tensor<1x2x4x16xf32> loc("Softmax_5")
    %collapsed_4 = tensor.collapse_shape %17 [[0, 1], [2], [3]] : tensor<1x2x4x16xf32> into tensor<2x4x16xf32> loc("MatMul_6")
    %collapsed_5 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x2x16x8xf32> into tensor<2x16x8xf32> loc("MatMul_6")
    %cst_6 = arith.constant 0.000000e+00 : f32
    %18 = tensor.empty() : tensor<2x4x8xf32> loc("MatMul_6")
    %19 = linalg.fill ins(%cst_6 : f32) outs(%18 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("MatMul_6")
    %20 = linalg.batch_matmul ins(%collapsed_4, %collapsed_5 : tensor<2x4x16xf32>, tensor<2x16x8xf32>) outs(%19 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("MatMul_6")
    %expanded_7 = tensor.expand_shape %20 [[0, 1], [2], [3]] output_shape [1, 2, 4, 8] : tensor<2x4x8xf32> into tensor<1x2x4x8xf32> loc("MatMul_6")
    return %expanded_7 : tensor<1x2x4x8xf32>
  }
}

//--- where16.mlir
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#map2 = affine_map<(d0, d1, d2, d3) -> ()>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
module attributes {pb.stage = "import"} {
  func.func @main(%arg0: tensor<1x2x4x16xf16> {pb.name = "q"}, %arg1: tensor<1x2x16x16xf16> {pb.name = "k"}, %arg2: tensor<1x2x16x8xf16> {pb.name = "v"}, %arg3: tensor<4x16xi1> {pb.name = "cond"}) -> (tensor<1x2x4x8xf16> {pb.name = "y"}) {
    %0 = tensor.empty() : tensor<1x2x16x16xf16> loc("Transpose_0")
    %transposed = linalg.transpose ins(%arg1 : tensor<1x2x16x16xf16>) outs(%0 : tensor<1x2x16x16xf16>) permutation = [0, 1, 3, 2] loc("Transpose_0")
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<1x2x4x16xf16> into tensor<2x4x16xf16> loc("MatMul_1")
    %collapsed_0 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x2x16x16xf16> into tensor<2x16x16xf16> loc("MatMul_1")
    %cst = arith.constant 0.000000e+00 : f32
    %1 = tensor.empty() : tensor<2x4x16xf32> loc("MatMul_1")
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32> loc("MatMul_1")
    %3 = linalg.batch_matmul ins(%collapsed, %collapsed_0 : tensor<2x4x16xf16>, tensor<2x16x16xf16>) outs(%2 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32> loc("MatMul_1")
    %expanded = tensor.expand_shape %3 [[0, 1], [2], [3]] output_shape [1, 2, 4, 16] : tensor<2x4x16xf32> into tensor<1x2x4x16xf32> loc("MatMul_1")
    %4 = tensor.empty() : tensor<1x2x4x16xf16> loc("MatMul_1")
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x2x4x16xf32>) outs(%4 : tensor<1x2x4x16xf16>) {
    ^bb0(%in: f32, %out: f16):
      %29 = arith.truncf %in : f32 to f16 loc("MatMul_1")
      linalg.yield %29 : f16
    } -> tensor<1x2x4x16xf16> loc("MatMul_1")
    %6 = tensor.empty() : tensor<1x2x4x16xf16> loc("Mul_3")
    %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5 : tensor<1x2x4x16xf16>) outs(%6 : tensor<1x2x4x16xf16>) {
    ^bb0(%in: f16, %out: f16):
      %29 = arith.extf %in : f16 to f32 loc("Mul_3")
      %cst_8 = arith.constant 2.500000e-01 : f32
      %30 = arith.mulf %29, %cst_8 : f32 loc("Mul_3")
      %31 = arith.truncf %30 : f32 to f16 loc("Mul_3")
      linalg.yield %31 : f16
    } -> tensor<1x2x4x16xf16> loc("Mul_3")
    %cst_1 = arith.constant dense<0xFC00> : tensor<f16>
    %8 = tensor.empty() : tensor<1x2x4x16xf16> loc("Where_4")
    %9 = linalg.generic {indexing_maps = [#map1, #map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg3, %7, %cst_1 : tensor<4x16xi1>, tensor<1x2x4x16xf16>, tensor<f16>) outs(%8 : tensor<1x2x4x16xf16>) {
    ^bb0(%in: i1, %in_8: f16, %in_9: f16, %out: f16):
      %29 = arith.select %in, %in_8, %in_9 : f16 loc("Where_4")
      linalg.yield %29 : f16
    } -> tensor<1x2x4x16xf16> loc("Where_4")
    %10 = tensor.empty() : tensor<1x2x4x16xf32> loc("Softmax_5")
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%9 : tensor<1x2x4x16xf16>) outs(%10 : tensor<1x2x4x16xf32>) {
    ^bb0(%in: f16, %out: f32):
      %29 = arith.extf %in : f16 to f32 loc("Softmax_5")
      linalg.yield %29 : f32
    } -> tensor<1x2x4x16xf32> loc("Softmax_5")
    %cst_2 = arith.constant 0xFF800000 : f32
    %12 = tensor.empty() : tensor<1x2x4xf32> loc("Softmax_5")
    %13 = linalg.fill ins(%cst_2 : f32) outs(%12 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("Softmax_5")
    %14 = linalg.generic {indexing_maps = [#map, #map3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%11 : tensor<1x2x4x16xf32>) outs(%13 : tensor<1x2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %29 = arith.maximumf %in, %out : f32 loc("Softmax_5")
      linalg.yield %29 : f32
    } -> tensor<1x2x4xf32> loc("Softmax_5")
    %15 = tensor.empty() : tensor<1x2x4x16xf32> loc("Softmax_5")
    %16 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11, %14 : tensor<1x2x4x16xf32>, tensor<1x2x4xf32>) outs(%15 : tensor<1x2x4x16xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %29 = arith.subf %in, %in_8 : f32 loc("Softmax_5")
      %30 = math.exp %29 : f32 loc("Softmax_5")
      linalg.yield %30 : f32
    } -> tensor<1x2x4x16xf32> loc("Softmax_5")
    %cst_3 = arith.constant 0.000000e+00 : f32
    %17 = tensor.empty() : tensor<1x2x4xf32> loc("Softmax_5")
    %18 = linalg.fill ins(%cst_3 : f32) outs(%17 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("Softmax_5")
    %19 = linalg.generic {indexing_maps = [#map, #map3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%16 : tensor<1x2x4x16xf32>) outs(%18 : tensor<1x2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %29 = arith.addf %in, %out : f32 loc("Softmax_5")
      linalg.yield %29 : f32
    } -> tensor<1x2x4xf32> loc("Softmax_5")
    %20 = tensor.empty() : tensor<1x2x4x16xf32> loc("Softmax_5")
    %21 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%16, %19 : tensor<1x2x4x16xf32>, tensor<1x2x4xf32>) outs(%20 : tensor<1x2x4x16xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %29 = arith.divf %in, %in_8 : f32 loc("Softmax_5")
      linalg.yield %29 : f32
    } -> tensor<1x2x4x16xf32> loc("Softmax_5")
    %22 = tensor.empty() : tensor<1x2x4x16xf16> loc("Softmax_5")
    %23 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%21 : tensor<1x2x4x16xf32>) outs(%22 : tensor<1x2x4x16xf16>) {
    ^bb0(%in: f32, %out: f16):
      %29 = arith.truncf %in : f32 to f16 loc("Softmax_5")
      linalg.yield %29 : f16
    } -> tensor<1x2x4x16xf16> loc("Softmax_5")
    %collapsed_4 = tensor.collapse_shape %23 [[0, 1], [2], [3]] : tensor<1x2x4x16xf16> into tensor<2x4x16xf16> loc("MatMul_6")
    %collapsed_5 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x2x16x8xf16> into tensor<2x16x8xf16> loc("MatMul_6")
    %cst_6 = arith.constant 0.000000e+00 : f32
    %24 = tensor.empty() : tensor<2x4x8xf32> loc("MatMul_6")
    %25 = linalg.fill ins(%cst_6 : f32) outs(%24 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("MatMul_6")
    %26 = linalg.batch_matmul ins(%collapsed_4, %collapsed_5 : tensor<2x4x16xf16>, tensor<2x16x8xf16>) outs(%25 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("MatMul_6")
    %expanded_7 = tensor.expand_shape %26 [[0, 1], [2], [3]] output_shape [1, 2, 4, 8] : tensor<2x4x8xf32> into tensor<1x2x4x8xf32> loc("MatMul_6")
    %27 = tensor.empty() : tensor<1x2x4x8xf16> loc("MatMul_6")
    %28 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_7 : tensor<1x2x4x8xf32>) outs(%27 : tensor<1x2x4x8xf16>) {
    ^bb0(%in: f32, %out: f16):
      %29 = arith.truncf %in : f32 to f16 loc("MatMul_6")
      linalg.yield %29 : f16
    } -> tensor<1x2x4x8xf16> loc("MatMul_6")
    return %28 : tensor<1x2x4x8xf16>
  }
}

