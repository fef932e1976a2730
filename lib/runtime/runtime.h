/* pb runtime: running a compiled module on host tensors.
 *
 * The pieces are kept apart by what they link against:
 *   run.c    binding inputs, weights and outputs to @main's arguments,
 *            random inputs, checking, printing and writing results
 *            (core + lib/onnx's tensor reader; no MLIR)
 *   cpu.c    reading @main's signature from a module, stripping what only
 *            the GPU needs, lowering to LLVM and JIT-running on the CPU
 *            (MLIR ExecutionEngine)
 *   pbrun.c  the pb-run tool: input detection, import/fuse, then the above
 * so that a GPU-only pb-run can later be built from run.c without MLIR.
 * See docs/pb-run.md for the calling contract of @main.
 */
#ifndef PB_RUNTIME_RUNTIME_H
#define PB_RUNTIME_RUNTIME_H

#include "core/pb.h"
#include "core/tensor.h"

/* The role of one argument of @main after pb-fuse. */
enum pb_runtime_role {
	PB_RUNTIME_INPUT,  /* graph input, {pb.name = "x"} */
	PB_RUNTIME_PARAM,  /* weight, {pb.param = "initializer name"} */
	PB_RUNTIME_OUTPUT, /* out-param, {pb.name = "y", pb.output} */
};

/* One memref argument of @main: static shape, identity layout. */
struct pb_runtime_arg {
	char *name; /* pb.name / pb.param, or "arg<N>"; malloc'ed */
	enum pb_runtime_role role;
	enum pb_dtype dtype;
	int rank;
	int64_t dims[PB_MAX_RANK];
};

/* The signature of @main: its arguments in order. */
struct pb_runtime_sig {
	int nargs;
	struct pb_runtime_arg *args;
};
void pb_runtime_sig_free(struct pb_runtime_sig *sig);

/* pb-run's options (docs/pb-run.md). */
struct pb_runtime_opts {
	struct pb_strlist inputs; /* --input, in argument order */
	struct pb_strlist checks; /* --check, in result order */
	const char *data;         /* --data DIR (ONNX test_data_set_N) */
	const char *random;       /* --random[=SEED]; NULL when absent */
	const char *output;       /* --output DIR */
	const char *weights;      /* --weights FILE (overrides pb.source) */
	const char *device;       /* --device=cpu|gpu|auto */
	double rtol, atol;        /* --rtol, --atol */
	int print;                /* --print */
};
/* Set the defaults (rtol 1e-4, atol 1e-5, device auto) in "o". */
void pb_runtime_opts_init(struct pb_runtime_opts *o);

/* --- run.c: no MLIR ------------------------------------------------------ */

/* Read a tensor file "path": .npy (by magic) or an ONNX TensorProto .pb. */
int pb_runtime_read_tensor(struct pb_ctx *ctx, const char *path,
			   struct pb_tensor *t);

/* Fill "vals" (sig->nargs tensors, zeroed by the caller) with a value for
 * every argument of "sig": inputs from "o" (--input, --data, --random),
 * weights from the ONNX model "weights" (may be NULL when there are no
 * weights), zeroed buffers for outputs. Shapes and dtypes are checked
 * against the signature. PB_ERR after reporting the first problem. */
int pb_runtime_bind(struct pb_ctx *ctx, const struct pb_runtime_sig *sig,
		    const struct pb_runtime_opts *o, const char *weights,
		    struct pb_tensor *vals);

/* After a run: print the outputs among "vals" into "report" (--print),
 * write them under o->output, and compare them with the references of
 * --check or --data, one line per output into "report". PB_ERR when a file
 * cannot be read or written or a result does not match. */
int pb_runtime_finish(struct pb_ctx *ctx, const struct pb_runtime_sig *sig,
		      const struct pb_runtime_opts *o,
		      const struct pb_tensor *vals, struct pb_buf *report);

/* Compare "got" with "want" under allclose semantics
 * (|got - want| <= atol + rtol * |want|, NaNs equal), appending the line
 * "output 'name': max abs err ..., max rel err ... (...): ok|mismatch" to
 * "report". Returns PB_OK, or PB_ERR after reporting a mismatch. */
int pb_runtime_compare(struct pb_ctx *ctx, const char *name,
		       const struct pb_tensor *got, const struct pb_tensor *want,
		       double rtol, double atol, struct pb_buf *report);

/* --- cpu.c: MLIR --------------------------------------------------------- */

/* Read @main's signature from "m" (fuse stage or later) into "sig". */
int pb_runtime_cpu_signature(struct pb_ctx *ctx, MlirModule m,
			     struct pb_runtime_sig *sig);

/* The hook where GPU-only constructs leave IR that is to run on the CPU:
 * gpu.barrier is erased (sibling thread loops run one after another) and
 * memory spaces (#gpu.address_space<workgroup>, ...) are dropped from
 * memref types. pb.map attributes need nothing. */
int pb_runtime_cpu_strip_gpu(struct pb_ctx *ctx, MlirModule m);

/* Strip GPU constructs from "m", lower it to the LLVM dialect, JIT it at
 * -O3 and call @main once with the tensors "vals" (one per argument of
 * "sig", outputs written in place). */
int pb_runtime_cpu_run(struct pb_ctx *ctx, MlirModule m,
		       const struct pb_runtime_sig *sig, struct pb_tensor *vals);

/* --- pbrun.c ------------------------------------------------------------- */

/* The whole of pb-run on the input "in" (an .onnx model or MLIR text of
 * any stage) with options "o"; the report goes to "report". */
int pb_runtime_main(struct pb_ctx *ctx, const struct pb_input *in,
		    const struct pb_runtime_opts *o, struct pb_buf *report);

#endif
