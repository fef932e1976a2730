/* Kernels compiled on threads. Each part (a module of kernels, as text)
 * goes through the NVVM pipeline on one of "jobs" threads; every thread
 * has an MlirContext of its own (parsing a part's text into it), so that
 * nothing of MLIR is shared between threads but the registries of passes
 * and translations, which are only read. The parts are taken in order
 * from one counter; what each gives (its PTX, or its diagnostics) stays
 * with it, so the output does not depend on which thread ran which. */
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
	int n, next;
	const char *pipeline;
	pthread_mutex_t lock;
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

/* Compile "p" in "mctx" with the pass manager "pm". */
static void compile_part(MlirContext mctx, MlirPassManager pm,
			 struct pb_codegen_part *p)
{
	MlirModule m = mlirModuleCreateParse(
		mctx, (MlirStringRef){p->text.data, p->text.len});
	if (mlirModuleIsNull(m)) {
		p->failed = 1;
		return;
	}
	MlirOperation op = mlirModuleGetOperation(m);
	if (mlirLogicalResultIsFailure(mlirPassManagerRunOnOp(pm, op)))
		p->failed = 1;
	else
		mlirOperationWalk(op, binary_cb, p, MlirWalkPreOrder);
	mlirModuleDestroy(m);
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
	MlirPassManager pm = mlirPassManagerCreate(mctx);
	/* the module is not verified after each pass (as ptx.c's compile) */
	mlirPassManagerEnableVerifier(pm, false);
	struct pb_buf perr = {0};
	int bad = mlirLogicalResultIsFailure(mlirParsePassPipeline(
		mlirPassManagerGetAsOpPassManager(pm),
		mlirStringRefCreateFromCString(pool->pipeline), collect, &perr));
	for (;;) {
		pthread_mutex_lock(&pool->lock);
		int k = pool->next < pool->n ? pool->next++ : -1;
		pthread_mutex_unlock(&pool->lock);
		if (k < 0)
			break;
		cur = &pool->part[k];
		if (bad) {
			cur->failed = 1;
			pb_buf_append(&cur->err, perr.data, perr.len);
		} else {
			compile_part(mctx, pm, cur);
		}
		cur = NULL;
	}
	pb_buf_free(&perr);
	mlirPassManagerDestroy(pm);
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

int pb_codegen_jobs_run(struct pb_codegen_part *part, int n,
			const char *pipeline, int jobs)
{
	struct pool pool = {part, n, 0, pipeline, PTHREAD_MUTEX_INITIALIZER};
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
	pthread_mutex_destroy(&pool.lock);
	return 0;
}
