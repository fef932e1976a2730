/* pb-run: run an .onnx model or the MLIR output of any stage on the CPU.
 *
 *   input ─┬─ .onnx ──── pb_onnx_import ─┐
 *          └─ MLIR text ─ pb_ir_parse ───┴─ pb_fuse_run (below fuse stage)
 *            ─ signature of @main ─ bind inputs/weights/outputs
 *            ─ strip GPU constructs, lower, JIT, call ─ print/write/check
 */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
 * else by content: PTX declares .version and .target, a binary protobuf
 * has control bytes that MLIR text never has. */
static enum kind detect(const struct pb_input *in)
{
	if (in->path && has_ext(in->path, ".onnx"))
		return KIND_ONNX;
	if (in->path && has_ext(in->path, ".ptx"))
		return KIND_PTX;
	if (in->path && has_ext(in->path, ".mlir"))
		return KIND_MLIR;
	size_t n = in->len < 4096 ? in->len : 4096;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = in->data[i];
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f')
			return KIND_ONNX;
	}
	if (memmem(in->data, n, ".version", 8) &&
	    memmem(in->data, n, ".target", 7) &&
	    !memmem(in->data, n, "module", 6))
		return KIND_PTX;
	return KIND_MLIR;
}

/* Check --device "d"; PB_ERR for gpu (not implemented yet) or junk. */
static int check_device(struct pb_ctx *ctx, const char *d)
{
	if (!strcmp(d, "cpu") || !strcmp(d, "auto"))
		return PB_OK;
	if (!strcmp(d, "gpu"))
		pb_error(ctx, "GPU execution is not implemented yet; use "
			 "--device=cpu");
	else
		pb_error(ctx, "unknown --device '%s' (expected cpu, gpu or auto)",
			 d);
	return PB_ERR;
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

int pb_runtime_main(struct pb_ctx *ctx, const struct pb_input *in,
		    const struct pb_runtime_opts *o, struct pb_buf *report)
{
	if (check_device(ctx, o->device) != PB_OK)
		return PB_ERR;
	enum kind k = detect(in);
	if (k == KIND_PTX) {
		pb_error(ctx, "GPU execution is not implemented yet; use "
			 "--device=cpu on an MLIR or .onnx input");
		return PB_ERR;
	}
	MlirModule m;
	struct pb_runtime_sig sig = {0};
	struct pb_tensor *vals = NULL;
	char *weights = NULL;
	int rc = load(ctx, in, k, &m);
	if (rc == PB_OK)
		rc = pb_runtime_cpu_signature(ctx, m, &sig);
	if (rc == PB_OK) {
		weights = weights_path(m, in, o->weights);
		vals = calloc(sig.nargs + 1, sizeof(*vals));
		rc = vals ? pb_runtime_bind(ctx, &sig, o, weights, vals) : PB_ERR;
	}
	if (rc == PB_OK)
		rc = pb_runtime_cpu_run(ctx, m, &sig, vals);
	if (rc == PB_OK)
		rc = pb_runtime_finish(ctx, &sig, o, vals, report);
	for (int i = 0; vals && i < sig.nargs; i++)
		pb_tensor_clear(&vals[i]);
	free(vals);
	free(weights);
	pb_runtime_sig_free(&sig);
	if (!mlirModuleIsNull(m))
		mlirModuleDestroy(m);
	return rc;
}
