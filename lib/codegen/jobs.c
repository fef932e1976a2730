/* Kernels compiled on threads. Each part (a module of kernels, as text)
 * goes through the NVVM pipeline on one of "jobs" threads; every thread
 * has an MlirContext of its own (parsing a part's text into it), so that
 * nothing of MLIR is shared between threads but the registries of passes
 * and translations, which are only read. The parts are taken from one
 * counter, the largest text first (so that no thread is left with a
 * large part at the end while the others wait); what each gives (its
 * PTX, or its diagnostics) stays with it, so the output does not depend
 * on which thread ran which.
 *
 * Given the pipeline split for libdevice (pb_codegen_jobs_split, on the
 * calling thread), a worker runs it in two steps: up to
 * gpu-module-to-binary, then that pass and the rest, linking libdevice
 * (as an extra file of the pass, the toolkit being hidden) only into the
 * parts whose lowered kernels declare one of its functions ("__nv_*").
 * Linking is "only needed" symbols, so the PTX of a kernel that calls
 * none is the same either way; what this saves is reading libdevice's
 * bitcode (460 KB) once per part, about a tenth of a small kernel's
 * NVVM time. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/Dialect/GPU.h"
#include "mlir-c/Pass.h"
#include "mlir-c/RegisterEverything.h"

#include "codegen/internal.h"

struct pool {
	struct pb_codegen_part *part;
	int *order; /* the parts by decreasing text size */
	int n, next;
	const char *const *pipes;
	pthread_mutex_t lock;
};

/* A worker's pass managers: "front" the whole pipeline, or with
 * libdevice the part before gpu-module-to-binary, and then "bin" the
 * rest, "bin_lib" the same linking libdevice (both null without). */
struct passes {
	MlirPassManager front, bin, bin_lib;
};

/* The diagnostics of a thread's context go to the part it compiles. */
static MlirLogicalResult diag(MlirDiagnostic d, void *user)
{
	struct pb_codegen_part **cur = user;
	if (!*cur)
		return mlirLogicalResultSuccess();
	if (mlirDiagnosticGetSeverity(d) == MlirDiagnosticError)
		(*cur)->failed = 1;
	if ((*cur)->err.len)
		pb_buf_puts(&(*cur)->err, "; ");
	mlirDiagnosticPrint(d, pb_buf_mlir_callback, &(*cur)->err);
	return mlirLogicalResultSuccess();
}

static void collect(MlirStringRef s, void *user)
{
	pb_buf_append(user, s.data, s.length);
}

/* Append the objects of gpu.binary "op" to the part in "user". */
static MlirWalkResult binary_cb(MlirOperation op, void *user)
{
	struct pb_codegen_part *p = user;
	MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
	if (name.length != 10 || memcmp(name.data, "gpu.binary", 10))
		return MlirWalkResultAdvance;
	MlirAttribute objs = mlirOperationGetAttributeByName(
		op, mlirStringRefCreateFromCString("objects"));
	for (intptr_t i = 0; i < mlirArrayAttrGetNumElements(objs); i++) {
		MlirAttribute o = mlirArrayAttrGetElement(objs, i);
		if (!mlirAttributeIsAGPUObjectAttr(o))
			continue;
		MlirStringRef s = mlirGPUObjectAttrGetObject(o);
		pb_buf_append(&p->ptx, s.data, s.length);
		p->nobj++;
	}
	return MlirWalkResultAdvance;
}

/* Walk callback: does the llvm.func "op" name a libdevice function? Set
 * the int in "user" and stop. */
static MlirWalkResult libdevice_cb(MlirOperation op, void *user)
{
	MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
	if (name.length != 9 || memcmp(name.data, "llvm.func", 9))
		return MlirWalkResultAdvance;
	MlirAttribute sym = mlirOperationGetAttributeByName(
		op, mlirStringRefCreateFromCString("sym_name"));
	MlirStringRef s = mlirStringAttrGetValue(sym);
	if (s.length < 5 || memcmp(s.data, "__nv_", 5))
		return MlirWalkResultSkip;
	*(int *)user = 1;
	return MlirWalkResultInterrupt;
}

/* Compile "p" in "mctx" with the pass managers "ps". */
static void compile_part(MlirContext mctx, const struct passes *ps,
			 struct pb_codegen_part *p)
{
	MlirModule m = mlirModuleCreateParse(
		mctx, (MlirStringRef){p->text.data, p->text.len});
	if (mlirModuleIsNull(m)) {
		p->failed = 1;
		return;
	}
	MlirOperation op = mlirModuleGetOperation(m);
	int lib = 0;
	if (mlirLogicalResultIsFailure(mlirPassManagerRunOnOp(ps->front, op)))
		p->failed = 1;
	if (!p->failed && !mlirPassManagerIsNull(ps->bin)) {
		mlirOperationWalk(op, libdevice_cb, &lib, MlirWalkPreOrder);
		if (mlirLogicalResultIsFailure(mlirPassManagerRunOnOp(
			    lib ? ps->bin_lib : ps->bin, op)))
			p->failed = 1;
	}
	if (!p->failed)
		mlirOperationWalk(op, binary_cb, p, MlirWalkPreOrder);
	mlirModuleDestroy(m);
}

/* A pass manager of "mctx" for "pipeline", not verifying after each pass
 * (as ptx.c's compile); null with the parser's message in "err". */
static MlirPassManager pass_manager(MlirContext mctx, const char *pipeline,
				    struct pb_buf *err)
{
	MlirPassManager pm = mlirPassManagerCreate(mctx);
	mlirPassManagerEnableVerifier(pm, false);
	if (mlirLogicalResultIsFailure(mlirParsePassPipeline(
		    mlirPassManagerGetAsOpPassManager(pm),
		    mlirStringRefCreateFromCString(pipeline), collect, err))) {
		mlirPassManagerDestroy(pm);
		return (MlirPassManager){NULL};
	}
	return pm;
}

int pb_codegen_jobs_split(MlirContext mctx, const char *pipeline,
			  const char *libdevice, char *out[3])
{
	struct pb_buf all = {0}, err = {0}, a = {0}, b = {0}, blib = {0};
	int rc = -1;
	MlirPassManager pm = pass_manager(mctx, pipeline, &err);
	if (mlirPassManagerIsNull(pm))
		goto done;
	mlirPrintPassPipeline(mlirPassManagerGetAsOpPassManager(pm), collect,
			      &all);
	mlirPassManagerDestroy(pm);
	static const char bin[] = "gpu-module-to-binary{";
	static const char top[] = "builtin.module(";
	char *cut = all.data ? strstr(all.data, bin) : NULL;
	if (!cut || strncmp(all.data, top, strlen(top)) ||
	    strstr(cut + 1, bin))
		goto done;
	/* up to the pass, its comma dropped; then the pass and the rest */
	char *end = cut;
	while (end > all.data && (end[-1] == ',' || end[-1] == ' '))
		end--;
	pb_buf_append(&a, all.data, end - all.data);
	pb_buf_puts(&a, ")");
	pb_buf_puts(&b, top);
	pb_buf_puts(&b, cut);
	pb_buf_puts(&blib, top);
	pb_buf_puts(&blib, bin);
	pb_buf_puts(&blib, "l=");
	pb_buf_puts(&blib, libdevice);
	pb_buf_puts(&blib, " ");
	pb_buf_puts(&blib, cut + strlen(bin));
	/* each must parse */
	const char *t[3] = {a.data, b.data, blib.data};
	rc = 0;
	for (int i = 0; i < 3 && !rc; i++) {
		pm = pass_manager(mctx, t[i], &err);
		if (mlirPassManagerIsNull(pm))
			rc = -1;
		else
			mlirPassManagerDestroy(pm);
	}
	if (!rc) {
		out[0] = strdup(a.data);
		out[1] = strdup(b.data);
		out[2] = strdup(blib.data);
	}
done:
	pb_buf_free(&all);
	pb_buf_free(&err);
	pb_buf_free(&a);
	pb_buf_free(&b);
	pb_buf_free(&blib);
	return rc;
}

static void *worker(void *user)
{
	struct pool *pool = user;
	struct pb_codegen_part *cur = NULL;
	MlirContext mctx = mlirContextCreateWithThreading(false);
	MlirDialectRegistry reg = mlirDialectRegistryCreate();
	mlirRegisterAllDialects(reg);
	mlirContextAppendDialectRegistry(mctx, reg);
	mlirDialectRegistryDestroy(reg);
	mlirRegisterAllLLVMTranslations(mctx);
	MlirDiagnosticHandlerID h =
		mlirContextAttachDiagnosticHandler(mctx, diag, &cur, NULL);
	struct pb_buf perr = {0};
	struct passes ps = {pass_manager(mctx, pool->pipes[0], &perr),
			    {NULL}, {NULL}};
	if (pool->pipes[1]) {
		ps.bin = pass_manager(mctx, pool->pipes[1], &perr);
		ps.bin_lib = pass_manager(mctx, pool->pipes[2], &perr);
	}
	int bad = mlirPassManagerIsNull(ps.front) ||
		  (pool->pipes[1] && (mlirPassManagerIsNull(ps.bin) ||
				      mlirPassManagerIsNull(ps.bin_lib)));
	for (;;) {
		pthread_mutex_lock(&pool->lock);
		int k = pool->next < pool->n ? pool->order[pool->next++] : -1;
		pthread_mutex_unlock(&pool->lock);
		if (k < 0)
			break;
		cur = &pool->part[k];
		if (bad) {
			cur->failed = 1;
			pb_buf_append(&cur->err, perr.data, perr.len);
		} else {
			compile_part(mctx, &ps, cur);
		}
		cur = NULL;
	}
	pb_buf_free(&perr);
	if (!mlirPassManagerIsNull(ps.front))
		mlirPassManagerDestroy(ps.front);
	if (!mlirPassManagerIsNull(ps.bin))
		mlirPassManagerDestroy(ps.bin);
	if (!mlirPassManagerIsNull(ps.bin_lib))
		mlirPassManagerDestroy(ps.bin_lib);
	mlirContextDetachDiagnosticHandler(mctx, h);
	mlirContextDestroy(mctx);
	return NULL;
}

int pb_codegen_jobs_default(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

/* qsort comparison of two parts' indices (in "parts", set before the
 * sort): the larger text first, then the earlier part. */
static const struct pb_codegen_part *parts;

static int larger_first(const void *a, const void *b)
{
	int i = *(const int *)a, j = *(const int *)b;
	if (parts[i].text.len != parts[j].text.len)
		return parts[i].text.len > parts[j].text.len ? -1 : 1;
	return i - j;
}

int pb_codegen_jobs_run(struct pb_codegen_part *part, int n,
			const char *const pipes[3], int jobs)
{
	/* the largest parts first, so that the threads do not wait at the
	   end for one that took a large part last */
	int *order = pb_xrealloc(NULL, n ? n : 1, sizeof(*order));
	for (int i = 0; i < n; i++)
		order[i] = i;
	parts = part;
	qsort(order, n, sizeof(*order), larger_first);
	parts = NULL;
	struct pool pool = {part, order, n, 0, pipes,
			    PTHREAD_MUTEX_INITIALIZER};
	int nt = jobs < n ? jobs : n, started = 0;
	pthread_t *t = pb_xrealloc(NULL, nt, sizeof(*t));
	for (int i = 0; i < nt; i++)
		if (pthread_create(&t[started], NULL, worker, &pool) == 0)
			started++;
	/* should no thread start, this one does the work */
	if (!started)
		worker(&pool);
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	free(t);
	free(order);
	pthread_mutex_destroy(&pool.lock);
	return 0;
}
