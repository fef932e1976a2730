/* pb runtime: running a compiled module on host tensors.
 *
 * The pieces are kept apart by what they link against:
 *   run.c     binding inputs, weights and outputs to @main's arguments,
 *             random inputs, checking, printing and writing results
 *             (core + lib/onnx's tensor reader; no MLIR)
 *   cuda.c    the CUDA driver (dlopen) and running a launch plan; no MLIR
 *   gpurun.c  pb-run on a k.ptx with its plan header; no MLIR
 *   prof.c    pb-prof's timing records, GPU timing, table/JSON/trace; no
 *             MLIR
 *   cpu.c     reading @main's signature from a module, stripping what only
 *             the GPU needs, lowering to LLVM and JIT-running on the CPU
 *             (MLIR ExecutionEngine), timing kernels on the CPU
 *   pbrun.c   the pb-run and pb-prof tools: input detection, import/fuse or
 *             codegen, then the above
 * pb-run-lite and pb-prof-lite are built from the no-MLIR files alone
 * (with -DPB_NO_MLIR; see the Makefile). See docs/pb-run.md for the calling
 * contract of @main.
 */
#ifndef PB_RUNTIME_RUNTIME_H
#define PB_RUNTIME_RUNTIME_H

#include "core/pb.h"
#include "core/tensor.h"
#include "driver/driver.h"
#include "plan/plan.h"

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
	/* a weight whose buffer holds the initializer transposed (pb.perm):
	   dimension i of the buffer is dimension perm[i] of the
	   initializer; "nperm" 0 when it has none */
	int nperm;
	int perm[PB_MAX_RANK];
};

/* The signature of @main: its arguments in order. */
struct pb_runtime_sig {
	int nargs;
	struct pb_runtime_arg *args;
};
void pb_runtime_sig_free(struct pb_runtime_sig *sig);
/* Clear the "n" tensors of "vals" (may be NULL) and free the array. */
void pb_runtime_vals_free(struct pb_tensor *vals, int n);

/* pb-run's options (docs/pb-run.md). */
struct pb_runtime_opts {
	struct pb_strlist inputs; /* --input, in argument order */
	struct pb_strlist checks; /* --check, in result order */
	const char *data;         /* --data DIR (ONNX test_data_set_N) */
	const char *random;       /* --random[=SEED]; NULL when absent */
	const char *output;       /* --output DIR */
	const char *weights;      /* --weights FILE (overrides pb.source) */
	const char *device;       /* --device=cpu|gpu|auto */
	struct pb_strlist pipelines; /* --pipeline=NAME|FILE (pipelines/):
				       pb-run takes one, pb-prof compares
				       several side by side */
	double rtol, atol;        /* --rtol, --atol */
	int print;                /* --print */
	struct pb_strlist shapes; /* --shape NAME=DxD..: as pb-import's */
	int no_memory_plan;       /* --no-memory-plan: one allocation per
				     intermediate buffer (no arena) */
};
/* Set the defaults (device auto; tolerances by type, see
 * pb_runtime_tolerance) in "o". */
void pb_runtime_opts_init(struct pb_runtime_opts *o);

/* The command-line options of pb-run that pb-prof shares (--input, --data,
 * --random, --output, --check, --rtol, --atol, --weights, --device,
 * --print, --pipeline, --shape, --no-memory-plan): fill "table" (PB_RUNTIME_NOPTS entries plus the terminating
 * one) with options bound to "o". Tools include it with PB_OPT_GROUP. */
#define PB_RUNTIME_NOPTS 13
void pb_runtime_opts_table(struct pb_runtime_opts *o,
			   struct pb_opt table[PB_RUNTIME_NOPTS + 1]);

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

/* The tolerances of --check and --data for a result of type "dt": --rtol
 * and --atol when given, else rtol 1e-4 (float16 1e-3, bfloat16 1.6e-2,
 * PyTorch's assert_close defaults for half types) and atol 1e-5. */
void pb_runtime_tolerance(const struct pb_runtime_opts *o, enum pb_dtype dt,
			  double *rtol, double *atol);

/* Free the option lists of "o" (--input, --check, --pipeline). */
void pb_runtime_opts_free(struct pb_runtime_opts *o);

/* Compare "got" with "want" under allclose semantics
 * (|got - want| <= atol + rtol * |want|, NaNs equal), appending the line
 * "output 'name': max abs err ..., max rel err ... (...): ok|mismatch" to
 * "report". Returns PB_OK, or PB_ERR after reporting a mismatch. */
int pb_runtime_compare(struct pb_ctx *ctx, const char *name,
		       const struct pb_tensor *got, const struct pb_tensor *want,
		       double rtol, double atol, struct pb_buf *report);

/* --- cuda.c: the CUDA driver (dlopen), no MLIR ------------------------- */

struct pb_plan;
/* A plan loaded on the GPU: its PTX module, kernels, device buffers. */
struct pb_runtime_gpu;

/* Does libcuda.so.1 load, initialize and report a device? Quiet; for
 * --device=auto. */
int pb_runtime_gpu_available(void);
/* The same, reporting "no CUDA driver found; use --device=cpu" or "no CUDA
 * device found; use --device=cpu" (one line) when there is none. */
int pb_runtime_gpu_check(struct pb_ctx *ctx);

/* The signature of @main from the plan "p": its input, param and output
 * buffers ordered by their "arg", into "sig". */
int pb_runtime_plan_signature(struct pb_ctx *ctx, const struct pb_plan *p,
			      struct pb_runtime_sig *sig);

/* Open device 0 (one error line "no CUDA driver found; use --device=cpu"
 * or "no CUDA device found; ..." without one), load the PTX "ptx" ("len"
 * bytes; the JIT log goes into the error on failure), allocate and zero
 * every root buffer of "plan" (views are root + offset) and prepare every
 * launch. "plan" must outlive the result. NULL after reporting. */
struct pb_runtime_gpu *pb_runtime_gpu_load(struct pb_ctx *ctx,
					   const struct pb_plan *plan,
					   const char *ptx, size_t len);
void pb_runtime_gpu_free(struct pb_runtime_gpu *g);
/* The name of the device of "g" ("NVIDIA H200"). */
const char *pb_runtime_gpu_device(const struct pb_runtime_gpu *g);
/* Copy the inputs and params among "vals" (one per argument of "sig") to
 * their buffers of "g". */
int pb_runtime_gpu_upload(struct pb_ctx *ctx, struct pb_runtime_gpu *g,
			  const struct pb_runtime_sig *sig,
			  const struct pb_tensor *vals);
/* Copy the output buffers of "g" back into the outputs among "vals". */
int pb_runtime_gpu_download(struct pb_ctx *ctx, struct pb_runtime_gpu *g,
			    const struct pb_runtime_sig *sig,
			    struct pb_tensor *vals);
/* Enqueue launch "i" of the plan of "g" (asynchronous). */
int pb_runtime_gpu_launch(struct pb_ctx *ctx, struct pb_runtime_gpu *g,
			  int i);
/* Wait for the GPU; a failure is blamed on launch "i" (or on the kernels
 * when "i" is -1). */
int pb_runtime_gpu_sync(struct pb_ctx *ctx, struct pb_runtime_gpu *g,
			int i);
/* Run the whole plan of "g" "warmup" times, then "repeat" times with a
 * CUDA event before the first and after every launch. "ms" receives
 * repeat x nlaunches kernel times (ms), "start" repeat x (nlaunches + 1)
 * event times in ms since the first event. */
int pb_runtime_gpu_time(struct pb_ctx *ctx, struct pb_runtime_gpu *g,
			int warmup, int repeat, double *ms, double *start);
/* Load "plan" with "ptx" ("len" bytes), upload "vals" (one per argument
 * of "sig"), run every launch in order (checking each), download the
 * outputs into "vals" and free everything. */
int pb_runtime_gpu_run(struct pb_ctx *ctx, const struct pb_plan *plan,
		       const char *ptx, size_t len,
		       const struct pb_runtime_sig *sig, struct pb_tensor *vals);

/* --- gpurun.c: pb-run on k.ptx, no MLIR ---------------------------------- */

/* Is "in" PTX: a .ptx path, or (for other names than .mlir/.onnx) text that
 * starts with the plan header or declares .version and .target? */
int pb_runtime_is_ptx(const struct pb_input *in);
/* The weights file: "opt" (--weights) when given, else "source" (the
 * plan's or module's pb.source; NULL: none) as it is when absolute, else
 * next to the file "near" (may be NULL) when it exists there, else as it
 * is (the current directory). Malloc'ed or NULL. */
char *pb_runtime_find_source(const char *source, const char *near,
			     const char *opt);
/* Check --device "d" (cpu, gpu or auto). */
int pb_runtime_check_device(struct pb_ctx *ctx, const char *d);
/* Check --device "d" for PTX input: cpu is an error. */
int pb_runtime_ptx_device(struct pb_ctx *ctx, const char *d);
/* In a tool built without MLIR ("tool", which "does" PTX: "pb-run",
 * "runs"): check --device "d" and that "in" is PTX (reported). */
int pb_runtime_lite_input(struct pb_ctx *ctx, const struct pb_input *in,
			  const char *d, const char *tool, const char *does);

/* A PTX input ready to run: its plan, signature and bound values. */
struct pb_runtime_ptx {
	struct pb_plan *plan;
	struct pb_runtime_sig sig;
	struct pb_tensor *vals;
};
/* Read the plan of "ptx" ("len" bytes, read from "path", may be NULL),
 * derive the signature and bind the values of "o" into "r" (weights from
 * the plan's source, next to "path" first). */
int pb_runtime_ptx_bind(struct pb_ctx *ctx, const char *ptx, size_t len,
			const char *path, const struct pb_runtime_opts *o,
			struct pb_runtime_ptx *r);
void pb_runtime_ptx_clear(struct pb_runtime_ptx *r);
/* pb-run on the PTX "ptx" ("len" bytes, from "path"): bind, run on the
 * GPU, then print/write/check into "report". */
int pb_runtime_ptx_main(struct pb_ctx *ctx, const char *ptx, size_t len,
			const char *path, const struct pb_runtime_opts *o,
			struct pb_buf *report);

/* --- prof.c: pb-prof, no MLIR ------------------------------------------- */

/* pb-prof's options: pb-run's plus the timing ones (docs/pb-prof.md). */
struct pb_prof_opts {
	struct pb_runtime_opts run;
	long warmup, repeat; /* --warmup (default 3), --repeat (default 20) */
	const char *json;    /* --json FILE */
	const char *trace;   /* --trace FILE (Chrome trace format) */
	const char *costs;   /* --costs FILE: flops from an earlier --json */
	int static_;         /* --static: ptxas and nvdisasm, no GPU */
	const char *roofline; /* --roofline FILE.svg */
};
/* Set the defaults in "o". */
void pb_prof_opts_init(struct pb_prof_opts *o);
/* Check the timing options of "o". */
int pb_prof_check_opts(struct pb_ctx *ctx, const struct pb_prof_opts *o);

/* One timed kernel: a launch on the GPU, a call of a pb.kernel function
 * from @main on the CPU. */
struct pb_prof_kernel {
	char *name;      /* GPU: the .entry symbol; CPU: the function */
	char *origin;    /* the pb.kernel function it came from */
	int nnodes;
	char **nodes;    /* the ONNX nodes it computes */
	int64_t grid[3], block[3]; /* GPU only */
	int64_t bytes;   /* sum of the sizes of its buffer arguments */
	double flops;    /* estimated floating-point operations; < 0: unknown */
	int nnests;      /* CPU: the flops of each top-level loop nest of */
	double *nests;   /* the function, in order (for GPU launches) */
	double *ms;      /* its time in each timed run (repeat entries) */
	double *start;   /* its start in each run, ms since the first */
	double median, min;
};
/* A profile: "n" kernels timed "repeat" times after "warmup" runs. */
struct pb_prof {
	char *device;    /* "cpu" or the GPU's name */
	int gpu;
	int warmup, repeat;
	int n;
	struct pb_prof_kernel *k;
	double total_median, total_min; /* of the per-run sums */
	double sum_median;              /* sum of the kernel medians */
	int has_memory;                 /* "memory" is known */
	struct pb_plan_memory memory;   /* device memory of the run */
};
/* The flops of one pb.kernel function, estimated from its loop nests
 * (cost.c): in all and per top-level loop nest. */
struct pb_prof_cost {
	char *origin;
	double flops;
	int nnests;
	double *nests;
};
struct pb_prof_costs {
	int n;
	struct pb_prof_cost *c;
};

/* A profile of "n" kernels with room for "repeat" times each, on "device"
 * ("gpu" says whether it is a GPU). NULL when out of memory. */
struct pb_prof *pb_prof_alloc(const char *device, int gpu, int n, int warmup,
			      int repeat);
void pb_prof_free(struct pb_prof *p);
/* "XxYxZ" of a grid or block size "v" into "out" (of "n" bytes). */
void pb_prof_dim3(char *out, size_t n, const int64_t *v);
/* Name kernel "k" "name", from function "origin", computing the "nnodes"
 * ONNX nodes "nodes" (all copied). */
void pb_prof_kernel_set(struct pb_prof_kernel *k, const char *name,
			const char *origin, int nnodes, char *const *nodes);
/* Compute the medians, minima and totals of "p" from its times. */
void pb_prof_summarize(struct pb_prof *p);
/* Give the flops of "c" to the kernels of "p" that come from function
 * c->origin: all to the one kernel when only one does; the flops of the
 * N-th top-level loop nest to the N-th when as many kernels (launches) as
 * nests come from it; else they stay unknown. */
void pb_prof_set_cost(struct pb_prof *p, const struct pb_prof_cost *c);
/* Take the flops of each origin (and its nests) from the pb-prof JSON
 * report "path". */
int pb_prof_read_costs(struct pb_ctx *ctx, struct pb_prof *p,
		       const char *path);
/* Time the plan loaded in "g" ("plan"): "warmup" untimed runs, then
 * "repeat" runs timed per launch with CUDA events, into a new "*out". */
int pb_prof_gpu(struct pb_ctx *ctx, struct pb_runtime_gpu *g,
		const struct pb_plan *plan, int warmup, int repeat,
		struct pb_prof **out);
/* The line "memory: peak ..." of "p" into "b" (nothing when its memory
 * is unknown). */
void pb_prof_memory_line(const struct pb_prof *p, struct pb_buf *b);
/* Print the table of "p" into "b": the header line, the memory line, one
 * line per kernel. */
void pb_prof_table(const struct pb_prof *p, struct pb_buf *b);
/* The profiles "p" of one model compiled through the "n" pipelines
 * "names" side by side into "b": the kernels grouped by the ONNX nodes
 * they compute (kernels that share a node, in any profile, are one
 * group), each group's median time per pipeline and its ratio to the
 * first pipeline, then the totals. */
void pb_prof_compare(struct pb_prof *const *p, const char *const *names,
		     int n, struct pb_buf *b);
/* Write "p" as a JSON report / a Chrome trace (traceEvents of phase X,
 * one per kernel and run, times in microseconds) to "path". */
int pb_prof_write_json(struct pb_ctx *ctx, const struct pb_prof *p,
		       const char *path);
int pb_prof_write_trace(struct pb_ctx *ctx, const struct pb_prof *p,
			const char *path);
/* Table into "report", --json, --trace and --costs of "o" for "p". */
int pb_prof_report(struct pb_ctx *ctx, struct pb_prof *p,
		   const struct pb_prof_opts *o, struct pb_buf *report);
/* Bind, run once and check the PTX "ptx" ("len" bytes, from "path") like
 * pb-run (the check lines into "report"), then time it into "*p" (NULL on
 * failure; free with pb_prof_free); "costs" (may be NULL) gives flops per
 * origin. */
int pb_prof_ptx_run(struct pb_ctx *ctx, const char *ptx, size_t len,
		    const char *path, const struct pb_prof_opts *o,
		    const struct pb_prof_costs *costs, struct pb_buf *report,
		    struct pb_prof **p);
/* pb-prof on the PTX "ptx": pb_prof_ptx_run, then pb_prof_report. */
int pb_prof_ptx_main(struct pb_ctx *ctx, const char *ptx, size_t len,
		     const char *path, const struct pb_prof_opts *o,
		     const struct pb_prof_costs *costs, struct pb_buf *report);
/* The whole of pb-prof on "in" with options "o" (pbrun.c; in builds
 * with PB_NO_MLIR prof.c's, PTX only). */
int pb_prof_main(struct pb_ctx *ctx, const struct pb_input *in,
		 const struct pb_prof_opts *o, struct pb_buf *report);

/* --- static.c: pb-prof --static (docs/pb-prof.md) ------------------------ */

/* Is "in" already compiled for --static: PTX, an nvdisasm listing (.sass,
 * or text with .section .text.<kernel> and addressed instructions) or a
 * cubin (ELF)? */
int pb_prof_static_compiled(const struct pb_input *in);
/* pb-prof --static on the compiled input "data" ("len" bytes, from
 * "path", may be NULL): ptxas's report and the hottest inner loop's mix
 * per kernel, occupancy on the target, and with "costs" (may be NULL) the
 * flops and with "tile_report" (pb-tile's --report JSON, may be NULL or
 * absent) the cost model's predicted time of each launch; the table into
 * "report", --json and --roofline as "o" says. */
int pb_prof_static_run(struct pb_ctx *ctx, const char *data, size_t len,
		       const char *path, const struct pb_prof_costs *costs,
		       const char *tile_report, const struct pb_prof_opts *o,
		       struct pb_buf *report);

/* --- roofline.c: no MLIR ------------------------------------------------- */

/* Draw the kernels of "p" with known flops and time (measured, or the
 * predicted time of --static) against the roofs of "t" as an SVG into
 * "path" (atomically): x the arithmetic intensity (flops per byte of the
 * kernel's buffers), y the achieved GFLOP/s, each kernel a circle whose
 * area is its share of the time, labelled by its ONNX nodes. "title"
 * heads the picture. */
int pb_prof_roofline(struct pb_ctx *ctx, const struct pb_prof *p,
		     const struct pb_target *t, const char *title,
		     const char *path);

/* --- cpu.c: MLIR --------------------------------------------------------- */

/* Read @main's signature from "m" (fuse stage or later) into "sig". */
int pb_runtime_cpu_signature(struct pb_ctx *ctx, MlirModule m,
			     struct pb_runtime_sig *sig);

/* The hook where GPU-only constructs leave IR that is to run on the CPU:
 * gpu.barrier is erased (sibling thread loops run one after another) and
 * memory spaces (#gpu.address_space<workgroup>, ...) are dropped from
 * memref types. pb.map attributes need nothing. */
int pb_runtime_cpu_strip_gpu(struct pb_ctx *ctx, MlirModule m);

/* memplan.c: with "apply", pack the intermediate buffers of @main of
 * "m" (its top-level memref.alloc of static shape) by liveness into one
 * arena, as pb-codegen packs a plan's scratch buffers (lib/plan/arena.c):
 * each becomes a memref.view of the arena. The footprint, with or
 * without, into "*mem" (arena (-1 without), intermediates, live_max;
 * "peak" holds the arena and the allocations kept whole, the caller adds
 * inputs, outputs and params). */
int pb_runtime_cpu_arena(struct pb_ctx *ctx, MlirModule m, int apply,
			 struct pb_plan_memory *mem);

/* Strip GPU constructs from "m", lower it to the LLVM dialect, JIT it at
 * -O3 and call @main once with the tensors "vals" (one per argument of
 * "sig", outputs written in place). */
int pb_runtime_cpu_run(struct pb_ctx *ctx, MlirModule m,
		       const struct pb_runtime_sig *sig, struct pb_tensor *vals);

/* Like pb_runtime_cpu_run, timing each call of a pb.kernel function in
 * @main: the calls are wrapped in calls of a timing hook before lowering,
 * @main runs once (its outputs are the results in "vals"), "warmup" times
 * untimed and "repeat" times timed. The profile (kernels in call order,
 * with their nodes, bytes and estimated flops) goes into "*out". */
int pb_runtime_cpu_profile(struct pb_ctx *ctx, MlirModule m,
			   const struct pb_runtime_sig *sig,
			   struct pb_tensor *vals, int warmup, int repeat,
			   struct pb_prof **out);

/* --- cost.c: MLIR -------------------------------------------------------- */

/* Estimated floating-point operations of one call of function "fn" into
 * "c" (origin named "fn"'s sym_name): arithmetic ops on floats times the
 * trip counts of their loops, in all and per top-level loop nest. */
void pb_runtime_cost_of(MlirOperation fn, struct pb_prof_cost *c);
/* Bytes of the memref operands of "call". */
int64_t pb_runtime_cost_bytes(MlirOperation call);
/* The flops of every pb.kernel function of "m" into "c". */
int pb_runtime_costs(struct pb_ctx *ctx, MlirModule m,
		     struct pb_prof_costs *c);
void pb_prof_costs_free(struct pb_prof_costs *c);

/* --- pbrun.c ------------------------------------------------------------- */

/* Where does "in" run under --device "device": 1 GPU, 0 CPU, -1 after
 * reporting an error (a bad device, PTX on the CPU, gpu without a driver
 * or device). auto picks the GPU when a driver and a device are there. */
int pb_runtime_use_gpu(struct pb_ctx *ctx, const struct pb_input *in,
		       const char *device);
/* Bring "in" (.onnx or MLIR) through the named pipeline "pipeline" (NULL:
 * none; --pipeline) to a module at the fuse stage or later in "*m" and
 * find its weights file (--weights of "o", or pb.source) in "*weights"
 * (malloc'ed, may be NULL). An .onnx model's dynamic input dimensions
 * are bound by --shape, else by the shapes of the inputs "o" gives. */
int pb_runtime_load(struct pb_ctx *ctx, const struct pb_input *in,
		    const char *pipeline, MlirModule *m, char **weights,
		    const struct pb_runtime_opts *o);

/* The whole of pb-run on the input "in" (an .onnx model or MLIR text of
 * any stage) with options "o"; the report goes to "report". */
int pb_runtime_main(struct pb_ctx *ctx, const struct pb_input *in,
		    const struct pb_runtime_opts *o, struct pb_buf *report);

#endif
