/* pb-run: run an .onnx model or the MLIR output of any stage on the CPU,
 * or on the GPU.
 *
 *   input ─┬─ .onnx ──── pb_onnx_import ─┐   (--pipeline=NAME: its text
 *          └─ MLIR text ─ pb_ir_parse ───┤    through pipelines/NAME)
 *                                        └─ pb_pipeline_run: the stages
 *                                           it still needs, up to
 *   CPU:   fuse ─ signature of @main ─ bind inputs/weights/outputs
 *          ─ strip GPU constructs, lower, JIT, call ─ print/write/check
 *   GPU:   codegen ─ pb_codegen_emit ─┐
 *          k.ptx ─────────────────────┴─ plan ─ signature ─ bind ─ run
 *          the plan ─ print/write/check (gpurun.c, cuda.c)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "ir/contract.h"
#include "ir/ir.h"
#include "onnx/onnx.h"
#include "pipeline/pipeline.h"
#include "runtime/runtime.h"
#include "tile/tile.h"

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
	MlirStringRef s = pb_contract_source(m);
	char *src = s.data ? strndup(s.data, s.length) : NULL;
	char *path = !opt && src && !exists(src)
			     ? pb_runtime_find_source(src, in->path, NULL)
			     : pb_runtime_find_source(src, NULL, opt);
	free(src);
	return path;
}

/* The input file bound to graph input "i" by "o": --input's i-th file,
 * else input_<i>.pb of --data; NULL when neither gives one. */
static char *input_file(const struct pb_runtime_opts *o, int i)
{
	if (i < o->inputs.n)
		return strdup(o->inputs.v[i]);
	if (!o->data || o->inputs.n)
		return NULL;
	struct pb_buf b = {0};
	pb_buf_printf(&b, "%s/input_%d.pb", o->data, i);
	return exists(b.data) ? b.data : (pb_buf_free(&b), NULL);
}

/* Add to "shapes" a binding NAME=DxD.. for every graph input of the
 * model "in" with a dynamic dimension that --shape does not bind, from
 * the shape of the tensor the options "o" give it (as onnxruntime binds
 * them); the strings are appended to "keep" (freed by the caller). */
static int bind_shapes(struct pb_ctx *ctx, const struct pb_input *in,
		       const struct pb_runtime_opts *o,
		       struct pb_strlist *shapes, struct pb_buf *keep)
{
	struct pb_onnx_input *v;
	int n, rc = pb_onnx_inputs(ctx, in, &v, &n);
	size_t *at = calloc(n + 1, sizeof(*at));
	int nat = 0;
	if (!at)
		abort();
	for (int i = 0; i < n && rc == PB_OK; i++) {
		size_t len = strlen(v[i].name);
		int bound = 0;
		for (int k = 0; k < o->shapes.n && !bound; k++)
			bound = !strncmp(o->shapes.v[k], v[i].name, len) &&
				o->shapes.v[k][len] == '=';
		char *path = v[i].dynamic && !bound ? input_file(o, i) : NULL;
		if (!path)
			continue;
		struct pb_tensor t = {0};
		rc = pb_runtime_read_tensor(ctx, path, &t);
		if (rc == PB_OK) {
			at[nat++] = keep->len;
			pb_buf_printf(keep, "%s=", v[i].name);
			for (int d = 0; d < t.rank; d++)
				pb_buf_printf(keep, "%s%lld", d ? "x" : "",
					      (long long)t.dims[d]);
			pb_buf_append(keep, "", 1);
		}
		pb_tensor_clear(&t);
		free(path);
	}
	pb_onnx_inputs_free(v, n);
	shapes->v = malloc(sizeof(*shapes->v) * (o->shapes.n + nat + 1));
	if (!shapes->v)
		abort();
	for (int k = 0; k < o->shapes.n; k++)
		shapes->v[shapes->n++] = o->shapes.v[k];
	for (int k = 0; k < nat; k++)
		shapes->v[shapes->n++] = keep->data + at[k];
	free(at);
	return rc;
}

/* Import the .onnx "in" into "*m", its dynamic input dimensions bound by
 * --shape or the inputs of "o"; from stdin there is no file to load
 * weights from later, so they are inlined. */
static int import(struct pb_ctx *ctx, const struct pb_input *in,
		  const struct pb_runtime_opts *o, MlirModule *m)
{
	struct pb_import_opts io = {.inline_weights = !in->path};
	struct pb_buf keep = {0};
	int rc = bind_shapes(ctx, in, o, &io.shapes, &keep);
	if (rc == PB_OK)
		rc = pb_onnx_import(ctx, in, &io, m);
	free(io.shapes.v);
	pb_buf_free(&keep);
	return rc;
}

/* The input "in" of kind "k" (an .onnx or MLIR text) through the named
 * pipeline "name": its output parsed into "*m". */
static int through_script(struct pb_ctx *ctx, const struct pb_input *in,
			  enum kind k, const char *name,
			  const struct pb_runtime_opts *o, MlirModule *m)
{
	struct pb_buf text = {0}, out = {0};
	int rc = PB_OK;
	if (k == KIND_ONNX) {
		rc = import(ctx, in, o, m);
		if (rc == PB_OK)
			rc = pb_onnx_print(ctx, *m, &text);
		if (!mlirModuleIsNull(*m))
			mlirModuleDestroy(*m);
	} else {
		pb_buf_append(&text, in->data, in->len);
	}
	*m = (MlirModule){NULL};
	if (rc == PB_OK)
		rc = pb_pipeline_script(ctx, name, &text, &out);
	if (rc == PB_OK) {
		struct pb_input t = *in;
		t.data = out.data ? out.data : "";
		t.len = out.len;
		*m = pb_ir_parse(ctx, &t);
		rc = mlirModuleIsNull(*m) ? PB_ERR : PB_OK;
	}
	pb_buf_free(&text);
	pb_buf_free(&out);
	return rc;
}

/* Bring the input "in" of kind "k" (not PTX) through the named pipeline
 * "pipeline" (NULL: none) and then to the fuse stage or later, in "*m"
 * (a null module on failure). */
static int load(struct pb_ctx *ctx, const struct pb_input *in, enum kind k,
		const char *pipeline, const struct pb_runtime_opts *o,
		MlirModule *m)
{
	int rc;
	*m = (MlirModule){NULL};
	if (pipeline)
		rc = through_script(ctx, in, k, pipeline, o, m);
	else if (k == KIND_ONNX)
		rc = import(ctx, in, o, m);
	else
		rc = mlirModuleIsNull(*m = pb_ir_parse(ctx, in)) ? PB_ERR : PB_OK;
	if (rc == PB_OK)
		rc = pb_pipeline_run(ctx, *m, PB_STAGE_FUSE, NULL);
	if (rc != PB_OK && !mlirModuleIsNull(*m)) {
		mlirModuleDestroy(*m);
		*m = (MlirModule){NULL};
	}
	return rc;
}

/* Load "in" of kind "k" (not PTX) through "pipeline" (NULL: none) with
 * the run options "o" (shapes to bind) and compile it into "ptx"
 * (pb-codegen with its defaults); with "costs", the flops of its kernel
 * functions (from the fuse-stage module) into "*costs" first; with
 * "tile_report", pb-tile's --report there (when the module is before the
 * tile stage). */
static int compile_input(struct pb_ctx *ctx, const struct pb_input *in,
			 enum kind k, const char *pipeline,
			 const struct pb_runtime_opts *o,
			 struct pb_prof_costs *costs, const char *tile_report,
			 struct pb_buf *ptx)
{
	MlirModule m;
	struct pb_tile_opts to = {.report = tile_report};
	struct pb_codegen_opts co = {.opt_level = -1,
				     .no_memory_plan = o->no_memory_plan};
	int rc = load(ctx, in, k, pipeline, o, &m);
	if (rc == PB_OK && costs)
		rc = pb_runtime_costs(ctx, m, costs);
	if (rc == PB_OK && tile_report)
		rc = pb_pipeline_run(ctx, m, PB_STAGE_TILE, &to);
	if (rc == PB_OK)
		rc = pb_pipeline_run(ctx, m, PB_STAGE_CODEGEN, &co);
	if (rc == PB_OK)
		rc = pb_pipeline_emit(ctx, m, PB_STAGE_CODEGEN, &co, ptx);
	if (!mlirModuleIsNull(m))
		mlirModuleDestroy(m);
	return rc;
}

/* The --pipeline options "l" compile: there is nothing to compile in
 * PTX. */
static int check_pipelines(struct pb_ctx *ctx, const struct pb_input *in,
			   const struct pb_strlist *l)
{
	if (l->n && detect(in) == KIND_PTX) {
		pb_error(ctx, "--pipeline=%s: the input is PTX, already "
			      "compiled", l->v[0]);
		return PB_ERR;
	}
	return PB_OK;
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

/* pb-run on the GPU: compile "in" (through "pipeline", NULL: none)
 * unless it is PTX, then run the plan with options "o", reporting into
 * "report". */
static int run_gpu(struct pb_ctx *ctx, const struct pb_input *in,
		   const char *pipeline, const struct pb_runtime_opts *o,
		   struct pb_buf *report)
{
	enum kind k = detect(in);
	if (k == KIND_PTX)
		return pb_runtime_ptx_main(ctx, in->data, in->len, in->path, o,
					   report);
	struct pb_buf ptx = {0};
	int rc = compile_input(ctx, in, k, pipeline, o, NULL, NULL, &ptx);
	if (rc == PB_OK)
		rc = pb_runtime_ptx_main(ctx, ptx.data, ptx.len, in->path, o,
					 report);
	pb_buf_free(&ptx);
	return rc;
}

int pb_runtime_load(struct pb_ctx *ctx, const struct pb_input *in,
		    const char *pipeline, MlirModule *m, char **weights,
		    const struct pb_runtime_opts *o)
{
	*weights = NULL;
	if (load(ctx, in, detect(in), pipeline, o, m) != PB_OK)
		return PB_ERR;
	*weights = weights_path(*m, in, o->weights);
	return PB_OK;
}

/* The CPU side of pb-run and pb-prof on one input: its module, the
 * signature of its @main, the values bound to it and its weights file. */
struct cpu {
	MlirModule m;
	struct pb_runtime_sig sig;
	struct pb_tensor *vals;
	char *weights;
	struct pb_plan_memory mem; /* the arena's footprint */
};

/* Load "in" (through "pipeline", NULL: none) into "c", read its
 * signature and bind its values as "o" says. */
static int cpu_prepare(struct pb_ctx *ctx, const struct pb_input *in,
		       const char *pipeline, const struct pb_runtime_opts *o,
		       struct cpu *c)
{
	memset(c, 0, sizeof(*c));
	int rc = pb_runtime_load(ctx, in, pipeline, &c->m, &c->weights, o);
	if (rc == PB_OK)
		rc = pb_runtime_cpu_signature(ctx, c->m, &c->sig);
	if (rc == PB_OK) {
		c->vals = calloc(c->sig.nargs + 1, sizeof(*c->vals));
		rc = c->vals ? pb_runtime_bind(ctx, &c->sig, o, c->weights,
					       c->vals)
			     : PB_ERR;
	}
	if (rc == PB_OK)
		rc = pb_runtime_cpu_arena(ctx, c->m, !o->no_memory_plan,
					  &c->mem);
	for (int i = 0; rc == PB_OK && i < c->sig.nargs; i++) {
		int64_t *k = c->sig.args[i].role == PB_RUNTIME_INPUT
				     ? &c->mem.inputs
			     : c->sig.args[i].role == PB_RUNTIME_OUTPUT
				     ? &c->mem.outputs
				     : &c->mem.params;
		*k += (int64_t)c->vals[i].nbytes;
		c->mem.peak += (int64_t)c->vals[i].nbytes;
	}
	return rc;
}

static void cpu_clear(struct cpu *c)
{
	pb_runtime_vals_free(c->vals, c->sig.nargs);
	free(c->weights);
	pb_runtime_sig_free(&c->sig);
	if (!mlirModuleIsNull(c->m))
		mlirModuleDestroy(c->m);
}

int pb_runtime_main(struct pb_ctx *ctx, const struct pb_input *in,
		    const struct pb_runtime_opts *o, struct pb_buf *report)
{
	if (check_pipelines(ctx, in, &o->pipelines) != PB_OK)
		return PB_ERR;
	if (o->pipelines.n > 1) {
		fprintf(stderr, "%s: error: --pipeline given %d times (pb-prof "
			"compares pipelines; pb-run runs one)\n", ctx->tool,
			o->pipelines.n);
		return PB_USAGE;
	}
	const char *pipeline = o->pipelines.n ? o->pipelines.v[0] : NULL;
	int gpu = pb_runtime_use_gpu(ctx, in, o->device);
	if (gpu < 0)
		return PB_ERR;
	if (gpu)
		return run_gpu(ctx, in, pipeline, o, report);
	struct cpu c;
	int rc = cpu_prepare(ctx, in, pipeline, o, &c);
	if (rc == PB_OK)
		rc = pb_runtime_cpu_run(ctx, c.m, &c.sig, c.vals);
	if (rc == PB_OK)
		rc = pb_runtime_finish(ctx, &c.sig, o, c.vals, report);
	cpu_clear(&c);
	return rc;
}

/* pb-prof on the GPU: the flops of each kernel function from "in" (MLIR or
 * .onnx, through "pipeline" to the fuse stage), then the same module
 * compiled and its PTX profiled with options "o" into "*p", the check
 * lines into "report". */
static int prof_gpu(struct pb_ctx *ctx, const struct pb_input *in,
		    const char *pipeline, const struct pb_prof_opts *o,
		    struct pb_buf *report, struct pb_prof **p)
{
	enum kind k = detect(in);
	if (k == KIND_PTX)
		return pb_prof_ptx_run(ctx, in->data, in->len, in->path, o,
				       NULL, report, p);
	struct pb_prof_costs costs = {0};
	struct pb_buf ptx = {0};
	*p = NULL;
	int rc = compile_input(ctx, in, k, pipeline, &o->run, &costs, NULL,
			       &ptx);
	if (rc == PB_OK)
		rc = pb_prof_ptx_run(ctx, ptx.data, ptx.len, in->path, o,
				     &costs, report, p);
	pb_buf_free(&ptx);
	pb_prof_costs_free(&costs);
	return rc;
}

/* Profile "in" through "pipeline" (NULL: none) with options "o", on the
 * GPU or the CPU as o->run.device says: the check lines into "report",
 * the profile into "*p" (NULL on failure). */
static int profile(struct pb_ctx *ctx, const struct pb_input *in,
		   const char *pipeline, const struct pb_prof_opts *o,
		   struct pb_buf *report, struct pb_prof **p)
{
	*p = NULL;
	int gpu = pb_runtime_use_gpu(ctx, in, o->run.device);
	if (gpu < 0)
		return PB_ERR;
	if (gpu)
		return prof_gpu(ctx, in, pipeline, o, report, p);
	struct cpu c;
	int rc = cpu_prepare(ctx, in, pipeline, &o->run, &c);
	if (rc == PB_OK)
		rc = pb_runtime_cpu_profile(ctx, c.m, &c.sig, c.vals,
					    (int)o->warmup, (int)o->repeat, p);
	if (rc == PB_OK) {
		(*p)->memory = c.mem;
		(*p)->has_memory = 1;
	}
	if (rc == PB_OK)
		rc = pb_runtime_finish(ctx, &c.sig, &o->run, c.vals, report);
	cpu_clear(&c);
	return rc;
}

/* pb-prof with several --pipeline: each profiled in turn, its table under
 * the pipeline's name, then the comparison (pb_prof_compare). */
static int compare(struct pb_ctx *ctx, const struct pb_input *in,
		   const struct pb_prof_opts *o, struct pb_buf *report)
{
	const struct pb_strlist *l = &o->run.pipelines;
	if (o->json || o->trace || o->costs || o->roofline) {
		fprintf(stderr, "%s: error: --json, --trace, --costs and "
			"--roofline take one pipeline\n", ctx->tool);
		return PB_USAGE;
	}
	struct pb_prof **p = calloc(l->n, sizeof(*p));
	int rc = p ? PB_OK : PB_ERR;
	for (int i = 0; rc == PB_OK && i < l->n; i++) {
		pb_buf_printf(report, "pipeline %s:\n", l->v[i]);
		rc = profile(ctx, in, l->v[i], o, report, &p[i]);
		if (rc == PB_OK)
			pb_prof_table(p[i], report);
	}
	if (rc == PB_OK)
		pb_prof_compare(p, l->v, l->n, report);
	for (int i = 0; p && i < l->n; i++)
		pb_prof_free(p[i]);
	free(p);
	return rc;
}

/* pb-prof --static: "in" compiled unless it is already (through
 * "pipeline", NULL: none), with the flops of its kernel functions and
 * pb-tile's report, then pb_prof_static_run. */
static int prof_static(struct pb_ctx *ctx, const struct pb_input *in,
		       const char *pipeline, const struct pb_prof_opts *o,
		       struct pb_buf *report)
{
	if (o->trace || o->costs || o->run.inputs.n || o->run.checks.n ||
	    o->run.data || o->run.output || o->run.print) {
		fprintf(stderr, "%s: error: --static runs nothing: --trace, "
			"--costs, --input, --check, --data, --output and "
			"--print do not apply\n", ctx->tool);
		return PB_USAGE;
	}
	if (pb_prof_static_compiled(in))
		return pb_prof_static_run(ctx, in->data, in->len, in->path,
					  NULL, NULL, o, report);
	char rep[] = "/tmp/pb-static-XXXXXX.json";
	int fd = mkstemps(rep, 5);
	if (fd < 0)
		return pb_error_in(ctx, NULL, "cannot create a temporary "
				   "file: %s", strerror(errno));
	close(fd);
	unlink(rep); /* pb-tile writes it only when it runs */
	struct pb_prof_costs costs = {0};
	struct pb_buf ptx = {0};
	int rc = compile_input(ctx, in, detect(in), pipeline, &o->run, &costs,
			       rep, &ptx);
	if (rc == PB_OK)
		rc = pb_prof_static_run(ctx, ptx.data, ptx.len, in->path,
					&costs, rep, o, report);
	unlink(rep);
	pb_buf_free(&ptx);
	pb_prof_costs_free(&costs);
	return rc;
}

int pb_prof_main(struct pb_ctx *ctx, const struct pb_input *in,
		 const struct pb_prof_opts *o, struct pb_buf *report)
{
	if (pb_prof_check_opts(ctx, o) != PB_OK)
		return PB_ERR;
	if (o->static_ && o->run.pipelines.n > 1) {
		fprintf(stderr, "%s: error: --static takes one --pipeline\n",
			ctx->tool);
		return PB_USAGE;
	}
	if (o->static_)
		return prof_static(ctx, in, o->run.pipelines.n
						    ? o->run.pipelines.v[0]
						    : NULL,
				   o, report);
	if (check_pipelines(ctx, in, &o->run.pipelines) != PB_OK)
		return PB_ERR;
	if (o->run.pipelines.n > 1)
		return compare(ctx, in, o, report);
	struct pb_prof *p;
	int rc = profile(ctx, in, o->run.pipelines.n ? o->run.pipelines.v[0]
						     : NULL,
			 o, report, &p);
	if (rc == PB_OK)
		rc = pb_prof_report(ctx, p, o, report);
	pb_prof_free(p);
	return rc;
}
