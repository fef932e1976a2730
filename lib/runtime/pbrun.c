/* pb-run: run an .onnx model or the MLIR output of any stage on the CPU,
 * or on the GPU.
 *
 *   CPU:  input ─┬─ .onnx ──── pb_onnx_import ─┐
 *                └─ MLIR text ─ pb_ir_parse ───┴─ pb_fuse_run (below fuse)
 *           ─ signature of @main ─ bind inputs/weights/outputs
 *           ─ strip GPU constructs, lower, JIT, call ─ print/write/check
 *   GPU:  input ─┬─ k.ptx ────────────────────────────────────┐
 *                ├─ .onnx ── pb_onnx_import ─ text ─┐          │
 *                └─ MLIR text ──────────────────────┴─ pb_codegen_run
 *           ─ plan ─ signature ─ bind ─ run the plan ─ print/write/check
 *           (gpurun.c, cuda.c)
 */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "codegen/codegen.h"
#include "fuse/fuse.h"
#include "ir/ir.h"
#include "onnx/onnx.h"
#include "runtime/runtime.h"

enum kind { KIND_MLIR, KIND_ONNX, KIND_PTX };

/* Does "path" end in "ext"? */
static int has_ext(const char *path, const char *ext)
{
	size_t n = strlen(path), e = strlen(ext);
	return n >= e && !strcmp(path + n - e, ext);
}

/* What is the input "in": MLIR text, an ONNX model or PTX? By extension,
 * else by content: PTX has the plan header or declares .version and
 * .target, a binary protobuf has control bytes that MLIR text never has. */
static enum kind detect(const struct pb_input *in)
{
	if (pb_runtime_is_ptx(in))
		return KIND_PTX;
	if (in->path && has_ext(in->path, ".onnx"))
		return KIND_ONNX;
	if (in->path && has_ext(in->path, ".mlir"))
		return KIND_MLIR;
	size_t n = in->len < 4096 ? in->len : 4096;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = in->data[i];
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f')
			return KIND_ONNX;
	}
	return KIND_MLIR;
}

/* Does "path" exist? */
static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* The path of the .onnx holding the weights of "m" read from "in": the
 * --weights option "opt", else the module's pb.source, taken relative to
 * the current directory first and then to the directory of "in".
 * Returns a malloc'ed path or NULL when there is none. */
static char *weights_path(MlirModule m, const struct pb_input *in,
			  const char *opt)
{
	if (opt)
		return strdup(opt);
	MlirStringRef s = pb_ir_str_attr(mlirModuleGetOperation(m), "pb.source");
	if (!s.data)
		return NULL;
	char *src = strndup(s.data, s.length);
	if (!src || src[0] == '/' || exists(src) || !in->path)
		return src;
	char *copy = strdup(in->path);
	char *dir = copy ? dirname(copy) : NULL;
	size_t n = (dir ? strlen(dir) : 0) + strlen(src) + 2;
	char *p = dir ? malloc(n) : NULL;
	if (p)
		snprintf(p, n, "%s/%s", dir, src);
	free(copy);
	if (p && exists(p)) {
		free(src);
		return p;
	}
	free(p);
	return src;
}

/* Bring the input "in" of kind "k" to a module at the fuse stage or later
 * in "*m". */
static int load(struct pb_ctx *ctx, const struct pb_input *in, enum kind k,
		MlirModule *m)
{
	*m = (MlirModule){NULL};
	if (k == KIND_ONNX) {
		/* from stdin there is no file to load weights from later */
		struct pb_import_opts io = {.inline_weights = !in->path};
		if (pb_onnx_import(ctx, in, &io, m) != PB_OK)
			return PB_ERR;
	} else {
		*m = pb_ir_parse(ctx, in);
		if (mlirModuleIsNull(*m))
			return PB_ERR;
	}
	if (pb_ir_get_stage(*m) < PB_STAGE_FUSE) {
		struct pb_fuse_opts fo = {0};
		if (pb_fuse_run(ctx, *m, &fo) != PB_OK)
			return PB_ERR;
	}
	return PB_OK;
}

int pb_runtime_compile(struct pb_ctx *ctx, const struct pb_input *in,
		       struct pb_buf *ptx)
{
	struct pb_codegen_opts co = {0};
	if (detect(in) != KIND_ONNX)
		return pb_codegen_run(ctx, in, ptx, &co);
	struct pb_import_opts io = {.inline_weights = !in->path};
	struct pb_buf text = {0};
	MlirModule m;
	int rc = pb_onnx_import(ctx, in, &io, &m);
	if (rc == PB_OK) {
		rc = pb_onnx_print(ctx, m, &text);
		mlirModuleDestroy(m);
	}
	if (rc == PB_OK) {
		struct pb_input t = *in;
		t.data = text.data;
		t.len = text.len;
		rc = pb_codegen_run(ctx, &t, ptx, &co);
	}
	pb_buf_free(&text);
	return rc;
}

int pb_runtime_use_gpu(struct pb_ctx *ctx, const struct pb_input *in,
		       const char *device)
{
	if (pb_runtime_check_device(ctx, device) != PB_OK)
		return -1;
	if (detect(in) == KIND_PTX)
		return pb_runtime_ptx_device(ctx, device) == PB_OK &&
		       pb_runtime_gpu_check(ctx) == PB_OK ? 1 : -1;
	if (!strcmp(device, "gpu"))
		return pb_runtime_gpu_check(ctx) == PB_OK ? 1 : -1;
	return !strcmp(device, "auto") && pb_runtime_gpu_available();
}

/* pb-run on the GPU: compile "in" unless it is PTX, then run the plan
 * with options "o", reporting into "report". */
static int run_gpu(struct pb_ctx *ctx, const struct pb_input *in,
		   const struct pb_runtime_opts *o, struct pb_buf *report)
{
	if (detect(in) == KIND_PTX)
		return pb_runtime_ptx_main(ctx, in->data, in->len, in->path, o,
					   report);
	struct pb_buf ptx = {0};
	int rc = pb_runtime_compile(ctx, in, &ptx);
	if (rc == PB_OK)
		rc = pb_runtime_ptx_main(ctx, ptx.data, ptx.len, in->path, o,
					 report);
	pb_buf_free(&ptx);
	return rc;
}

int pb_runtime_load(struct pb_ctx *ctx, const struct pb_input *in,
		    MlirModule *m, char **weights, const char *opt)
{
	*weights = NULL;
	if (load(ctx, in, detect(in), m) != PB_OK)
		return PB_ERR;
	*weights = weights_path(*m, in, opt);
	return PB_OK;
}

int pb_runtime_main(struct pb_ctx *ctx, const struct pb_input *in,
		    const struct pb_runtime_opts *o, struct pb_buf *report)
{
	int gpu = pb_runtime_use_gpu(ctx, in, o->device);
	if (gpu < 0)
		return PB_ERR;
	if (gpu)
		return run_gpu(ctx, in, o, report);
	MlirModule m;
	struct pb_runtime_sig sig = {0};
	struct pb_tensor *vals = NULL;
	char *weights = NULL;
	int rc = pb_runtime_load(ctx, in, &m, &weights, o->weights);
	if (rc == PB_OK)
		rc = pb_runtime_cpu_signature(ctx, m, &sig);
	if (rc == PB_OK) {
		vals = calloc(sig.nargs + 1, sizeof(*vals));
		rc = vals ? pb_runtime_bind(ctx, &sig, o, weights, vals) : PB_ERR;
	}
	if (rc == PB_OK)
		rc = pb_runtime_cpu_run(ctx, m, &sig, vals);
	if (rc == PB_OK)
		rc = pb_runtime_finish(ctx, &sig, o, vals, report);
	pb_runtime_vals_free(vals, sig.nargs);
	free(weights);
	pb_runtime_sig_free(&sig);
	if (!mlirModuleIsNull(m))
		mlirModuleDestroy(m);
	return rc;
}

/* pb-prof on the GPU: the flops of each kernel function from "in" (MLIR or
 * .onnx, brought to the fuse stage), then compile it and profile the PTX
 * with options "o" into "report". */
static int prof_gpu(struct pb_ctx *ctx, const struct pb_input *in,
		    const struct pb_prof_opts *o, struct pb_buf *report)
{
	if (detect(in) == KIND_PTX)
		return pb_prof_ptx_main(ctx, in->data, in->len, in->path, o,
					NULL, report);
	struct pb_prof_costs costs = {0};
	struct pb_buf ptx = {0};
	MlirModule m = {NULL};
	char *weights = NULL;
	int rc = pb_runtime_load(ctx, in, &m, &weights, NULL);
	if (rc == PB_OK)
		rc = pb_runtime_costs(ctx, m, &costs);
	if (!mlirModuleIsNull(m))
		mlirModuleDestroy(m);
	free(weights);
	if (rc == PB_OK)
		rc = pb_runtime_compile(ctx, in, &ptx);
	if (rc == PB_OK)
		rc = pb_prof_ptx_main(ctx, ptx.data, ptx.len, in->path, o,
				      &costs, report);
	pb_buf_free(&ptx);
	pb_prof_costs_free(&costs);
	return rc;
}

int pb_prof_main(struct pb_ctx *ctx, const struct pb_input *in,
		 const struct pb_prof_opts *o, struct pb_buf *report)
{
	if (pb_prof_check_opts(ctx, o) != PB_OK)
		return PB_ERR;
	int gpu = pb_runtime_use_gpu(ctx, in, o->run.device);
	if (gpu < 0)
		return PB_ERR;
	if (gpu)
		return prof_gpu(ctx, in, o, report);
	MlirModule m;
	struct pb_runtime_sig sig = {0};
	struct pb_tensor *vals = NULL;
	struct pb_prof *p = NULL;
	char *weights = NULL;
	int rc = pb_runtime_load(ctx, in, &m, &weights, o->run.weights);
	if (rc == PB_OK)
		rc = pb_runtime_cpu_signature(ctx, m, &sig);
	if (rc == PB_OK) {
		vals = calloc(sig.nargs + 1, sizeof(*vals));
		rc = vals ? pb_runtime_bind(ctx, &sig, &o->run, weights, vals)
			  : PB_ERR;
	}
	if (rc == PB_OK)
		rc = pb_runtime_cpu_profile(ctx, m, &sig, vals, (int)o->warmup,
					    (int)o->repeat, &p);
	if (rc == PB_OK)
		rc = pb_runtime_finish(ctx, &sig, &o->run, vals, report);
	if (rc == PB_OK)
		rc = pb_prof_report(ctx, p, o, report);
	pb_prof_free(p);
	pb_runtime_vals_free(vals, sig.nargs);
	free(weights);
	pb_runtime_sig_free(&sig);
	if (!mlirModuleIsNull(m))
		mlirModuleDestroy(m);
	return rc;
}
