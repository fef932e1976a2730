/* Every upstream MLIR pass pipeline pb runs (passes.h). */
#include <stdio.h>

#include "ir/passes.h"

const char pb_passes_bufferize[] =
	"builtin.module(eliminate-empty-tensors,one-shot-bufferize{"
	"bufferize-function-boundaries "
	"function-boundary-type-conversion=identity-layout-map},"
	"buffer-results-to-out-params{hoist-static-allocs "
	"modify-public-functions},canonicalize,cse)";
const char pb_passes_bufferize_no_slices[] =
	"builtin.module(one-shot-bufferize{"
	"bufferize-function-boundaries "
	"function-boundary-type-conversion=identity-layout-map},"
	"buffer-results-to-out-params{hoist-static-allocs "
	"modify-public-functions},canonicalize,cse)";
const char pb_passes_to_affine[] =
	"builtin.module(func.func(convert-linalg-to-affine-loops),"
	"canonicalize,cse)";
const char pb_passes_cleanup[] = "builtin.module(canonicalize)";
const char pb_passes_upstream_fusion[] =
	"builtin.module(func.func(affine-loop-fusion),canonicalize)";

const char pb_passes_codegen_prepare[] =
	"builtin.module(func.func(convert-linalg-to-affine-loops))";
const char pb_passes_parallelize[] =
	"builtin.module(func.func(affine-parallelize))";
const char pb_passes_outline[] =
	"builtin.module(func.func(lower-affine, "
	"gpu-launch-sink-index-computations), gpu-kernel-outlining, "
	"func.func(canonicalize, cse, int-range-optimizations, canonicalize))";
const char pb_passes_outline_kernels[] =
	"builtin.module(gpu.module(canonicalize, cse, int-range-optimizations, "
	"canonicalize, cse))";
const char pb_passes_inline[] =
	"builtin.module(inline{default-pipeline=}, func.func(canonicalize, cse), "
	"symbol-dce)";

int pb_passes_nvvm(char *buf, size_t n, const char *arch, int isa)
{
	int k = snprintf(buf, n,
			 "builtin.module(gpu-lower-to-nvvm-pipeline{"
			 "cubin-chip=%s cubin-features=+ptx%d cubin-format=isa "
			 "kernel-bare-ptr-calling-convention=true opt-level=3})",
			 arch, isa);
	return k < 0 || (size_t)k >= n ? -1 : 0;
}

/* Fuse-stage (and later, once stripped) modules to LLVM: leftover linalg
 * and warp-level vector ops to loops, affine to scf to cf, math ops with
 * LLVM intrinsics go to those and the rest (erf, tanh, ...)
 * to libm calls that the JIT resolves in the process, f16/bf16 math
 * through f32, then memref, vector, func, arith, ... to LLVM. */
const char pb_passes_cpu_loops[] =
	"builtin.module("
	"func.func(convert-linalg-to-loops,lower-vector-multi-reduction,"
	"convert-vector-to-scf))";
const char pb_passes_cpu_lowering[] =
	"builtin.module("
	"lower-affine,convert-scf-to-cf,"
	"func.func(math-extend-to-supported-types),"
	"convert-math-to-llvm,convert-math-to-libm,"
	"arith-expand{include-bf16=true},"
	"expand-strided-metadata,finalize-memref-to-llvm,"
	"convert-vector-to-llvm{vector-contract-lowering=outerproduct},"
	"convert-to-llvm,reconcile-unrealized-casts)";
