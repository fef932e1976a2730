/* Every upstream MLIR pass pipeline pb runs, in one place, named by what
 * it is for. The stages run them with pb_ir_run_pipeline (ir.h). Upstream
 * passes are building blocks: pb's own transformations are C over isl
 * and the MLIR C API; these do what upstream does well (bufferization,
 * linalg to loops, outlining, the NVVM back end, the CPU lowering). */
#ifndef PB_IR_PASSES_H
#define PB_IR_PASSES_H

#include <stddef.h>

/* pb-fuse: tensors to memrefs, results to out-parameters (@main's
 * calling contract, docs/pb-run.md). */
extern const char pb_passes_bufferize[];
/* The same without eliminate-empty-tensors, which only matters for
 * tensor.insert_slice (and costs time quadratic in the function). */
extern const char pb_passes_bufferize_no_slices[];
/* pb-fuse: linalg to affine loop nests. */
extern const char pb_passes_to_affine[];
/* pb-fuse: the last clean-up of a fused module. */
extern const char pb_passes_cleanup[];
/* pb-fuse --upstream-fusion: MLIR's affine-loop-fusion (the baseline). */
extern const char pb_passes_upstream_fusion[];

/* pb-codegen: what pb-fuse left as linalg becomes affine loops. */
extern const char pb_passes_codegen_prepare[];
/* pb-codegen: parallel loops for the naive mapping. */
extern const char pb_passes_parallelize[];
/* pb-codegen: affine to scf, gpu.launch outlined into gpu.func, the host
 * functions cleaned up; then each kernel's gpu.module cleaned up. */
extern const char pb_passes_outline[];
extern const char pb_passes_outline_kernels[];
/* pb-codegen: kernel functions inlined into @main. */
extern const char pb_passes_inline[];
/* pb-codegen: the gpu.module to PTX for chip "arch" with PTX ISA "isa"
 * (times ten), into "buf" ("n" bytes); -1 when it does not fit. */
int pb_passes_nvvm(char *buf, size_t n, const char *arch, int isa);

/* pb-run on the CPU: a module with no GPU constructs left to LLVM, in
 * two steps: linalg and vector transfers to loops (which may add
 * temporary allocas inside loops, for the runtime to hoist), then the
 * rest. */
extern const char pb_passes_cpu_loops[];
extern const char pb_passes_cpu_lowering[];

#endif
