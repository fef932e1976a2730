/* pb-run on the GPU from a self-contained k.ptx: read the launch plan from
 * its header, derive @main's signature from the plan's input, param and
 * output buffers, bind values exactly as on the CPU (run.c), run the plan
 * (cuda.c) and finish (print, write, check). Nothing here uses MLIR; built
 * with -DPB_NO_MLIR this file also provides pb_runtime_main for
 * pb-run-lite, which runs PTX only.
 */
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plan/plan.h"
#include "runtime/runtime.h"

/* Does "path" end in "ext"? */
static int has_ext(const char *path, const char *ext)
{
	size_t n = strlen(path), e = strlen(ext);
	return n >= e && !strcmp(path + n - e, ext);
}

/* Does "path" exist? */
static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

int pb_runtime_is_ptx(const struct pb_input *in)
{
	if (in->path && has_ext(in->path, ".ptx"))
		return 1;
	if (in->path && (has_ext(in->path, ".mlir") || has_ext(in->path, ".onnx")))
		return 0;
	size_t n = in->len < 4096 ? in->len : 4096;
	if (!in->data)
		return 0;
	if (n >= strlen(PB_PLAN_BEGIN) &&
	    !strncmp(in->data, PB_PLAN_BEGIN, strlen(PB_PLAN_BEGIN)))
		return 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = in->data[i];
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f')
			return 0;
	}
	return memmem(in->data, n, ".version", 8) &&
	       memmem(in->data, n, ".target", 7) &&
	       !memmem(in->data, n, "module", 6);
}

char *pb_runtime_find_source(const char *source, const char *near,
			     const char *opt)
{
	if (opt)
		return strdup(opt);
	if (!source)
		return NULL;
	if (source[0] == '/' || !near)
		return strdup(source);
	char *copy = strdup(near);
	char *dir = copy ? dirname(copy) : NULL;
	size_t n = (dir ? strlen(dir) : 0) + strlen(source) + 2;
	char *p = dir ? malloc(n) : NULL;
	if (p)
		snprintf(p, n, "%s/%s", dir, source);
	free(copy);
	if (p && exists(p))
		return p;
	free(p);
	return strdup(source);
}

void pb_runtime_ptx_clear(struct pb_runtime_ptx *r)
{
	pb_runtime_vals_free(r->vals, r->sig.nargs);
	pb_runtime_sig_free(&r->sig);
	pb_plan_free(r->plan);
	memset(r, 0, sizeof(*r));
}

int pb_runtime_ptx_bind(struct pb_ctx *ctx, const char *ptx, size_t len,
			const char *path, const struct pb_runtime_opts *o,
			struct pb_runtime_ptx *r)
{
	char err[512];
	memset(r, 0, sizeof(*r));
	r->plan = pb_plan_from_ptx(ptx, len, err, sizeof(err));
	if (!r->plan) {
		pb_error(ctx, "cannot read the launch plan of the PTX: %s", err);
		return PB_ERR;
	}
	if (o->no_memory_plan) {
		/* one allocation per scratch buffer, as without an arena */
		r->plan->arena = -1;
		for (int i = 0; i < r->plan->nbuffers; i++)
			r->plan->buffers[i].arena_offset = -1;
	}
	if (pb_runtime_plan_signature(ctx, r->plan, &r->sig) != PB_OK)
		return PB_ERR;
	r->vals = calloc(r->sig.nargs + 1, sizeof(*r->vals));
	if (!r->vals) {
		pb_error(ctx, "out of memory");
		return PB_ERR;
	}
	char *weights = pb_runtime_find_source(r->plan->source, path,
					       o->weights);
	int rc = pb_runtime_bind(ctx, &r->sig, o, weights, r->vals);
	free(weights);
	return rc;
}

int pb_runtime_ptx_main(struct pb_ctx *ctx, const char *ptx, size_t len,
			const char *path, const struct pb_runtime_opts *o,
			struct pb_buf *report)
{
	struct pb_runtime_ptx r;
	int rc = pb_runtime_ptx_bind(ctx, ptx, len, path, o, &r);
	if (rc == PB_OK)
		rc = pb_runtime_gpu_run(ctx, r.plan, ptx, len, &r.sig, r.vals);
	if (rc == PB_OK)
		rc = pb_runtime_finish(ctx, &r.sig, o, r.vals, report);
	pb_runtime_ptx_clear(&r);
	return rc;
}

int pb_runtime_check_device(struct pb_ctx *ctx, const char *d)
{
	if (!strcmp(d, "cpu") || !strcmp(d, "gpu") || !strcmp(d, "auto"))
		return PB_OK;
	pb_error(ctx, "unknown --device '%s' (expected cpu, gpu or auto)", d);
	return PB_ERR;
}

int pb_runtime_ptx_device(struct pb_ctx *ctx, const char *d)
{
	if (pb_runtime_check_device(ctx, d) != PB_OK)
		return PB_ERR;
	if (strcmp(d, "cpu"))
		return PB_OK;
	pb_error(ctx, "PTX runs on the GPU only; the CPU path needs MLIR or "
		 ".onnx input (use --device=gpu or auto)");
	return PB_ERR;
}

int pb_runtime_lite_input(struct pb_ctx *ctx, const struct pb_input *in,
			  const char *d, const char *tool, const char *does)
{
	if (pb_runtime_ptx_device(ctx, d) != PB_OK)
		return PB_ERR;
	if (pb_runtime_is_ptx(in))
		return PB_OK;
	pb_error(ctx, "this %s is built without MLIR and %s PTX only (k.ptx "
		 "from pb-codegen); use %s for .onnx and MLIR input", tool,
		 does, tool);
	return PB_ERR;
}

#ifdef PB_NO_MLIR
/* pb-run-lite: the input "in" must be PTX with a launch plan; run it on
 * the GPU with options "o", report into "report". */
int pb_runtime_main(struct pb_ctx *ctx, const struct pb_input *in,
		    const struct pb_runtime_opts *o, struct pb_buf *report)
{
	if (pb_runtime_lite_input(ctx, in, o->device, "pb-run", "runs"))
		return PB_ERR;
	return pb_runtime_ptx_main(ctx, in->data, in->len, in->path, o, report);
}
#endif
