/* Running a launch plan on the GPU through the CUDA driver API.
 *
 * libcuda.so.1 is opened with dlopen at run time (never linked), so that
 * every pb tool starts, and says "no CUDA driver found", on machines
 * without one. The few driver types and constants used here are declared
 * below rather than taken from cuda.h, so that this file builds without
 * the CUDA toolkit. Nothing here uses MLIR: pb-run-lite links it.
 *
 * A loaded plan (struct pb_runtime_gpu) holds the PTX module, one function
 * per launch, the device memory of every root buffer (zeroed) and the
 * packed kernel parameters of every launch, ready to go.
 *
 * A tile artifact (pb-codegen --backend=tile, docs/tileir.md) carries a
 * cubin of tile kernels instead of the PTX. Those are launched as cuTile
 * Python launches them (its C++ launcher, cext/tile_kernel.cpp and
 * xla_ffi.cpp): the cubin loaded as a library (cuLibraryLoadData, no
 * options), each kernel taken from it (cuLibraryGetKernel,
 * cuKernelGetFunction), and launched with blocks of 1x1x1 (the driver
 * runs the threads tileiras chose) and exactly the parameters the kernel
 * declares, here one pointer per buffer. The host code tileiras puts in
 * the cubin's .nv.host section (the callbacks that write TMA descriptors
 * into the kernel's parameters) is the driver's to run, not the
 * launcher's. PB_TILE_LAUNCH=module launches them the other way, as PTX
 * modules are (cuModuleLoadDataEx, the plan's block: the threads), for a
 * check on a GPU (bench/gpu-check.sh --tile).
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"
#include "runtime/runtime.h"

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUlib_st *CUlibrary;
typedef struct CUkern_st *CUkernel;
typedef struct CUevent_st *CUevent;
typedef struct CUstream_st *CUstream;

enum {
	CU_JIT_INFO_LOG_BUFFER = 3,
	CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
	CU_JIT_ERROR_LOG_BUFFER = 5,
	CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
	CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

/* The driver entry points pb uses, resolved once by name. */
static struct {
	int tried, ok;
	void *handle;
	CUresult (*Init)(unsigned);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetName)(char *, int, CUdevice);
	CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
	CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*PrimaryCtxRelease)(CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*CtxSynchronize)(void);
	CUresult (*ModuleLoadDataEx)(CUmodule *, const void *, unsigned,
				     int *, void **);
	CUresult (*ModuleUnload)(CUmodule);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*FuncSetAttribute)(CUfunction, int, int);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemFree)(CUdeviceptr);
	CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
	CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
				 unsigned, unsigned, unsigned, unsigned,
				 CUstream, void **, void **);
	CUresult (*EventCreate)(CUevent *, unsigned);
	CUresult (*EventDestroy)(CUevent);
	CUresult (*EventRecord)(CUevent, CUstream);
	CUresult (*EventSynchronize)(CUevent);
	CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
	CUresult (*GetErrorString)(CUresult, const char **);
	/* CUDA 12.0 and later: tile artifacts only */
	CUresult (*LibraryLoadData)(CUlibrary *, const void *, int *, void **,
				    unsigned, int *, void **, unsigned);
	CUresult (*LibraryUnload)(CUlibrary);
	CUresult (*LibraryGetKernel)(CUkernel *, CUlibrary, const char *);
	CUresult (*KernelGetFunction)(CUfunction *, CUkernel);
} cu;

/* Resolve the entry point "name" (or, when absent, "alt", which may be
 * NULL) from the driver into "*fn"; returns 0 when neither exists. */
static int sym(void *fn, const char *name, const char *alt)
{
	void *p = dlsym(cu.handle, name);
	if (!p && alt)
		p = dlsym(cu.handle, alt);
	memcpy(fn, &p, sizeof(p));
	return p != NULL;
}

/* Load the driver once: dlopen libcuda.so.1 and resolve every entry
 * point. Returns 1 when all are there. */
static int load_driver(void)
{
	if (cu.tried)
		return cu.ok;
	cu.tried = 1;
	cu.handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!cu.handle)
		return 0;
	int ok = sym(&cu.Init, "cuInit", NULL);
	ok &= sym(&cu.DeviceGetCount, "cuDeviceGetCount", NULL);
	ok &= sym(&cu.DeviceGet, "cuDeviceGet", NULL);
	ok &= sym(&cu.DeviceGetName, "cuDeviceGetName", NULL);
	ok &= sym(&cu.DeviceGetAttribute, "cuDeviceGetAttribute", NULL);
	ok &= sym(&cu.PrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL);
	ok &= sym(&cu.PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2",
		  "cuDevicePrimaryCtxRelease");
	ok &= sym(&cu.CtxSetCurrent, "cuCtxSetCurrent", NULL);
	ok &= sym(&cu.CtxSynchronize, "cuCtxSynchronize", NULL);
	ok &= sym(&cu.ModuleLoadDataEx, "cuModuleLoadDataEx", NULL);
	ok &= sym(&cu.ModuleUnload, "cuModuleUnload", NULL);
	ok &= sym(&cu.ModuleGetFunction, "cuModuleGetFunction", NULL);
	ok &= sym(&cu.FuncSetAttribute, "cuFuncSetAttribute", NULL);
	ok &= sym(&cu.MemAlloc, "cuMemAlloc_v2", NULL);
	ok &= sym(&cu.MemFree, "cuMemFree_v2", NULL);
	ok &= sym(&cu.MemcpyHtoD, "cuMemcpyHtoD_v2", NULL);
	ok &= sym(&cu.MemcpyDtoH, "cuMemcpyDtoH_v2", NULL);
	ok &= sym(&cu.MemsetD8, "cuMemsetD8_v2", NULL);
	ok &= sym(&cu.LaunchKernel, "cuLaunchKernel", NULL);
	ok &= sym(&cu.EventCreate, "cuEventCreate", NULL);
	ok &= sym(&cu.EventDestroy, "cuEventDestroy_v2", "cuEventDestroy");
	ok &= sym(&cu.EventRecord, "cuEventRecord", NULL);
	ok &= sym(&cu.EventSynchronize, "cuEventSynchronize", NULL);
	ok &= sym(&cu.EventElapsedTime, "cuEventElapsedTime_v2",
		  "cuEventElapsedTime");
	ok &= sym(&cu.GetErrorString, "cuGetErrorString", NULL);
	cu.ok = ok;
	/* optional: a driver without them runs PTX, and says so for a cubin */
	sym(&cu.LibraryLoadData, "cuLibraryLoadData", NULL);
	sym(&cu.LibraryUnload, "cuLibraryUnload", NULL);
	sym(&cu.LibraryGetKernel, "cuLibraryGetKernel", NULL);
	sym(&cu.KernelGetFunction, "cuKernelGetFunction", NULL);
	return ok;
}

/* The driver's name for error "r". */
static const char *err_str(CUresult r)
{
	const char *s = NULL;
	if (cu.GetErrorString)
		cu.GetErrorString(r, &s);
	return s ? s : "unknown CUDA error";
}

/* Report the failure "r" of "what" (a printf format with arguments)
 * through "ctx"; returns PB_ERR. */
static int cu_fail(struct pb_ctx *ctx, CUresult r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int cu_fail(struct pb_ctx *ctx, CUresult r, const char *fmt, ...)
{
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	pb_error(ctx, "%s: %s (CUDA error %d)", what, err_str(r), r);
	return PB_ERR;
}

int pb_runtime_gpu_available(void)
{
	int n = 0;
	return load_driver() && cu.Init(0) == 0 &&
	       cu.DeviceGetCount(&n) == 0 && n > 0;
}

/* One launch, ready to go: its function and packed parameters. */
struct launch {
	CUfunction fn;
	uint64_t *slots; /* one 8-byte slot per parameter */
	void **params;   /* pointers into slots, as cuLaunchKernel wants */
};

struct pb_runtime_gpu {
	const struct pb_plan *plan;
	CUdevice dev;
	CUcontext cx;
	CUmodule mod;
	CUlibrary lib;     /* a tile artifact's cubin, loaded as a library */
	int tile;          /* launches of tile kernels: blocks of 1x1x1 */
	char name[128];    /* the device's name */
	int cc;            /* compute capability, 90 for sm_90 */
	CUdeviceptr *addr; /* per buffer: root address (+ offset for views) */
	int *owned;        /* per buffer: 1 when addr is an allocation */
	CUdeviceptr arena; /* the plan's arena, or 0 */
	struct launch *launches;
};

int pb_runtime_gpu_check(struct pb_ctx *ctx)
{
	int n = 0;
	if (!load_driver()) {
		pb_error(ctx, "no CUDA driver found; use --device=cpu");
		return PB_ERR;
	}
	if (cu.Init(0) != 0 || cu.DeviceGetCount(&n) != 0 || n <= 0) {
		pb_error(ctx, "no CUDA device found; use --device=cpu");
		return PB_ERR;
	}
	return PB_OK;
}

/* Open the driver, initialize it and make the primary context of device 0
 * current in "g". Reports "no CUDA driver found" or "no CUDA device found"
 * in one line. */
static int open_device(struct pb_ctx *ctx, struct pb_runtime_gpu *g)
{
	if (pb_runtime_gpu_check(ctx) != PB_OK)
		return PB_ERR;
	CUresult r = cu.DeviceGet(&g->dev, 0);
	if (!r)
		r = cu.PrimaryCtxRetain(&g->cx, g->dev);
	if (r)
		return cu_fail(ctx, r, "cannot open CUDA device 0");
	r = cu.CtxSetCurrent(g->cx);
	if (r) {
		cu.PrimaryCtxRelease(g->dev);
		g->cx = NULL;
		return cu_fail(ctx, r, "cannot make the CUDA context current");
	}
	int major = 0, minor = 0;
	cu.DeviceGetName(g->name, sizeof(g->name), g->dev);
	cu.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
			      g->dev);
	cu.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
			      g->dev);
	g->cc = major * 10 + minor;
	return PB_OK;
}

/* Replace the line breaks of the JIT log "s" by "; " (in place, trailing
 * ones dropped), so that the error stays one line. */
static char *one_line(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
	for (char *p = s; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return s;
}

/* How to launch tile kernels ($PB_TILE_LAUNCH, docs/tileir.md): 0 as
 * cuTile does ("library", the default), 1 as PTX modules ("module"), -1
 * for anything else. */
static int tile_launch(void)
{
	const char *s = getenv("PB_TILE_LAUNCH");
	if (!s || !*s || !strcmp(s, "library"))
		return 0;
	return !strcmp(s, "module") ? 1 : -1;
}

/* Load the PTX "ptx" ("len" bytes, not necessarily NUL-terminated) into
 * "g" with the JIT's error and info logs (the error log goes into the
 * error on failure), or, for a tile artifact, its cubin: as a library,
 * the launches then tile launches, unless tile_launch says "module". */
static int load_module(struct pb_ctx *ctx, struct pb_runtime_gpu *g,
		       const char *ptx, size_t len)
{
	static char elog[16384], ilog[16384];
	unsigned char *cubin;
	size_t n;
	/* a tile artifact (docs/tileir.md) carries a cubin instead of PTX */
	int has = pb_plan_get_cubin(ptx, len, &cubin, &n, elog, sizeof(elog));
	if (has < 0) {
		pb_error(ctx, "bad cubin in the tile artifact: %s", elog);
		return PB_ERR;
	}
	int how = has == 0 ? tile_launch() : 1;
	int lib = cu.LibraryLoadData && cu.LibraryUnload &&
		  cu.LibraryGetKernel && cu.KernelGetFunction;
	if (how < 0 || (how == 0 && !lib)) {
		free(cubin);
		if (how < 0)
			pb_error(ctx, "PB_TILE_LAUNCH='%s': expected 'library' or "
				 "'module'", getenv("PB_TILE_LAUNCH"));
		else
			pb_error(ctx, "the CUDA driver has no cuLibraryLoadData "
				 "(CUDA 12.0 or later), which tile artifacts need");
		return PB_ERR;
	}
	if (has == 0 && how == 0) {
		CUresult r = cu.LibraryLoadData(&g->lib, cubin, NULL, NULL, 0,
						NULL, NULL, 0);
		free(cubin);
		g->tile = 1;
		if (!r)
			return PB_OK;
		g->lib = NULL;
		pb_error(ctx, "the CUDA driver cannot load the cubin of tile "
			 "kernels for %s on this device (sm_%d): %s (CUDA error "
			 "%d)", g->plan->arch ? g->plan->arch : "?", g->cc,
			 err_str(r), r);
		return PB_ERR;
	}
	char *text = has == 0 ? (char *)cubin : malloc(len + 1);
	if (!text) {
		pb_error(ctx, "out of memory");
		return PB_ERR;
	}
	if (has) {
		memcpy(text, ptx, len);
		text[len] = '\0';
	}
	elog[0] = ilog[0] = '\0';
	int opt[4] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
		      CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
	void *val[4] = {elog, (void *)(uintptr_t)sizeof(elog), ilog,
			(void *)(uintptr_t)sizeof(ilog)};
	CUresult r = cu.ModuleLoadDataEx(&g->mod, text, 4, opt, val);
	free(text);
	if (!r)
		return PB_OK;
	g->mod = NULL;
	pb_error(ctx, "the CUDA driver cannot load the %s for %s on this "
		 "device (sm_%d): %s (CUDA error %d)%s%s",
		 has ? "PTX" : "cubin", g->plan->arch ? g->plan->arch : "?",
		 g->cc, err_str(r), r,
		 elog[0] ? ": " : "", one_line(elog));
	return PB_ERR;
}

/* Allocate and zero every root buffer of the plan in "g" (the scratch
 * buffers of a plan with an arena: the arena, each buffer at its
 * arena_offset), and point each view at its root's address plus its byte
 * offset. */
static int alloc_buffers(struct pb_ctx *ctx, struct pb_runtime_gpu *g)
{
	const struct pb_plan *p = g->plan;
	if (p->arena >= 0) {
		size_t n = p->arena > 0 ? (size_t)p->arena : 1;
		CUresult r = cu.MemAlloc(&g->arena, n);
		if (r)
			return cu_fail(ctx, r, "cannot allocate the arena of "
				       "%zu bytes", n);
		r = cu.MemsetD8(g->arena, 0, n);
		if (r)
			return cu_fail(ctx, r, "cannot zero the arena");
	}
	for (int i = 0; i < p->nbuffers; i++) {
		const struct pb_plan_buffer *b = &p->buffers[i];
		if (b->kind == PB_PLAN_VIEW)
			continue;
		if (b->arena_offset >= 0) {
			g->addr[i] = g->arena + (CUdeviceptr)b->arena_offset;
			continue;
		}
		size_t n = b->bytes > 0 ? (size_t)b->bytes : 1;
		CUresult r = cu.MemAlloc(&g->addr[i], n);
		if (r)
			return cu_fail(ctx, r, "cannot allocate %zu bytes for "
				       "buffer %d", n, i);
		g->owned[i] = 1;
		r = cu.MemsetD8(g->addr[i], 0, n);
		if (r)
			return cu_fail(ctx, r, "cannot zero buffer %d", i);
	}
	for (int i = 0; i < p->nbuffers; i++) {
		const struct pb_plan_buffer *b = &p->buffers[i];
		if (b->kind == PB_PLAN_VIEW)
			g->addr[i] = g->addr[b->base] + (CUdeviceptr)b->offset;
	}
	return PB_OK;
}

/* The dynamic shared memory a kernel may have without opt-in. */
#define DYN_SMEM_DEFAULT (48 * 1024)

/* The opt-in for launch "i" of "g": at the first launch of its kernel,
 * the most dynamic shared memory any launch of that kernel passes, when
 * it is past DYN_SMEM_DEFAULT (pb's kernels with dynamic shared memory
 * have no static shared arrays, docs/pb-codegen.md); 0 otherwise, when
 * there is nothing to set or it was set already. So the attribute is set
 * once per function, before any of its launches. */
static int64_t optin_bytes(const struct pb_runtime_gpu *g, int i)
{
	const struct pb_plan *p = g->plan;
	const char *k = p->launches[i].kernel;
	int64_t most = 0;
	for (int j = 0; j < p->nlaunches; j++) {
		if (strcmp(p->launches[j].kernel, k))
			continue;
		if (j < i)
			return 0;
		if (p->launches[j].smem > most)
			most = p->launches[j].smem;
	}
	return most > DYN_SMEM_DEFAULT ? most : 0;
}

/* Pack the parameters of launch "i" of "g" ("l") into "x" and find its
 * kernel: a buffer passes its aligned address, a scalar its value in the
 * width of its type. */
static int prepare_launch(struct pb_ctx *ctx, struct pb_runtime_gpu *g,
			  int i0, const struct pb_plan_launch *l,
			  struct launch *x)
{
	CUresult r;
	int64_t optin = optin_bytes(g, i0);
	if (g->lib) {
		CUkernel k;
		r = cu.LibraryGetKernel(&k, g->lib, l->kernel);
		if (!r)
			r = cu.KernelGetFunction(&x->fn, k);
	} else {
		r = cu.ModuleGetFunction(&x->fn, g->mod, l->kernel);
	}
	if (r)
		return cu_fail(ctx, r, "no kernel '%s' in the %s", l->kernel,
			       g->lib ? "cubin" : "PTX");
	if (optin) {
		r = cu.FuncSetAttribute(x->fn,
			CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
			(int)optin);
		if (r)
			return cu_fail(ctx, r, "kernel '%s' cannot have %lld bytes "
				       "of dynamic shared memory", l->kernel,
				       (long long)optin);
	}
	x->slots = calloc(l->nargs + 1, sizeof(*x->slots));
	x->params = calloc(l->nargs + 1, sizeof(*x->params));
	if (!x->slots || !x->params) {
		pb_error(ctx, "out of memory");
		return PB_ERR;
	}
	for (int i = 0; i < l->nargs; i++) {
		const struct pb_plan_arg *a = &l->args[i];
		void *s = &x->slots[i];
		x->params[i] = s;
		if (a->kind == PB_PLAN_ARG_BUFFER) {
			uint64_t v = g->addr[a->buffer];
			memcpy(s, &v, 8);
		} else if (!strcmp(a->type, "i32")) {
			int32_t v = (int32_t)a->i;
			memcpy(s, &v, 4);
		} else if (!strcmp(a->type, "f32")) {
			float v = (float)a->f;
			memcpy(s, &v, 4);
		} else if (!strcmp(a->type, "f64")) {
			memcpy(s, &a->f, 8);
		} else {
			memcpy(s, &a->i, 8);
		}
	}
	return PB_OK;
}

struct pb_runtime_gpu *pb_runtime_gpu_load(struct pb_ctx *ctx,
					   const struct pb_plan *plan,
					   const char *ptx, size_t len)
{
	struct pb_runtime_gpu *g = calloc(1, sizeof(*g));
	if (!g) {
		pb_error(ctx, "out of memory");
		return NULL;
	}
	g->plan = plan;
	g->addr = calloc(plan->nbuffers + 1, sizeof(*g->addr));
	g->owned = calloc(plan->nbuffers + 1, sizeof(*g->owned));
	g->launches = calloc(plan->nlaunches + 1, sizeof(*g->launches));
	int rc = g->addr && g->owned && g->launches ? PB_OK : PB_ERR;
	if (rc != PB_OK)
		pb_error(ctx, "out of memory");
	if (rc == PB_OK)
		rc = open_device(ctx, g);
	if (rc == PB_OK)
		rc = load_module(ctx, g, ptx, len);
	if (rc == PB_OK)
		rc = alloc_buffers(ctx, g);
	for (int i = 0; rc == PB_OK && i < plan->nlaunches; i++)
		rc = prepare_launch(ctx, g, i, &plan->launches[i],
				    &g->launches[i]);
	if (rc != PB_OK) {
		pb_runtime_gpu_free(g);
		return NULL;
	}
	return g;
}

void pb_runtime_gpu_free(struct pb_runtime_gpu *g)
{
	if (!g)
		return;
	for (int i = 0; g->launches && i < g->plan->nlaunches; i++) {
		free(g->launches[i].slots);
		free(g->launches[i].params);
	}
	for (int i = 0; g->owned && i < g->plan->nbuffers; i++)
		if (g->owned[i])
			cu.MemFree(g->addr[i]);
	if (g->arena)
		cu.MemFree(g->arena);
	if (g->mod)
		cu.ModuleUnload(g->mod);
	if (g->lib)
		cu.LibraryUnload(g->lib);
	if (g->cx)
		cu.PrimaryCtxRelease(g->dev);
	free(g->launches);
	free(g->owned);
	free(g->addr);
	free(g);
}

const char *pb_runtime_gpu_device(const struct pb_runtime_gpu *g)
{
	return g->name;
}

/* The root buffer of the plan in "g" bound to argument "arg" of the
 * signature, or NULL. */
static const struct pb_plan_buffer *buffer_of_arg(const struct pb_runtime_gpu *g,
						  int arg)
{
	for (int i = 0; i < g->plan->nbuffers; i++) {
		const struct pb_plan_buffer *b = &g->plan->buffers[i];
		if (b->arg == arg && b->kind != PB_PLAN_VIEW &&
		    b->kind != PB_PLAN_SCRATCH)
			return b;
	}
	return NULL;
}

/* Copy the arguments of "sig" between "vals" and the buffers of "g": the
 * inputs to the GPU, or with "down" the outputs from it. */
static int copy_args(struct pb_ctx *ctx, struct pb_runtime_gpu *g,
		     const struct pb_runtime_sig *sig,
		     const struct pb_tensor *vals, int down)
{
	for (int i = 0; i < sig->nargs; i++) {
		const struct pb_plan_buffer *b = buffer_of_arg(g, i);
		const char *name = sig->args[i].name;
		int out = sig->args[i].role == PB_RUNTIME_OUTPUT;
		if (!b || out != down || (down && !b->bytes))
			continue;
		if ((int64_t)vals[i].nbytes != b->bytes) {
			if (down)
				pb_error(ctx, "output '%s' holds %zu bytes, the "
					 "plan's buffer %d %lld", name,
					 vals[i].nbytes, b->id,
					 (long long)b->bytes);
			else
				pb_error(ctx, "argument %d ('%s') holds %zu "
					 "bytes, the plan's buffer %d %lld", i,
					 name, vals[i].nbytes, b->id,
					 (long long)b->bytes);
			return PB_ERR;
		}
		if (!b->bytes)
			continue;
		CUresult r = down ? cu.MemcpyDtoH(vals[i].data, g->addr[b->id],
						  vals[i].nbytes)
				  : cu.MemcpyHtoD(g->addr[b->id], vals[i].data,
						  vals[i].nbytes);
		if (r)
			return cu_fail(ctx, r, "cannot copy '%s' %s the GPU",
				       name, down ? "from" : "to");
	}
	return PB_OK;
}

int pb_runtime_gpu_upload(struct pb_ctx *ctx, struct pb_runtime_gpu *g,
			  const struct pb_runtime_sig *sig,
			  const struct pb_tensor *vals)
{
	return copy_args(ctx, g, sig, vals, 0);
}

int pb_runtime_gpu_download(struct pb_ctx *ctx, struct pb_runtime_gpu *g,
			    const struct pb_runtime_sig *sig,
			    struct pb_tensor *vals)
{
	return copy_args(ctx, g, sig, vals, 1);
}

int pb_runtime_gpu_launch(struct pb_ctx *ctx, struct pb_runtime_gpu *g,
			  int i)
{
	const struct pb_plan_launch *l = &g->plan->launches[i];
	struct launch *x = &g->launches[i];
	/* a tile kernel is launched with blocks of one: the plan's block
	 * says how many threads the driver runs for it (tileiras's choice) */
	static const int64_t one[3] = {1, 1, 1};
	const int64_t *b = g->tile ? one : l->block;
	CUresult r = cu.LaunchKernel(x->fn, (unsigned)l->grid[0],
				     (unsigned)l->grid[1], (unsigned)l->grid[2],
				     (unsigned)b[0], (unsigned)b[1],
				     (unsigned)b[2], (unsigned)l->smem,
				     NULL, x->params, NULL);
	if (r)
		return cu_fail(ctx, r, "cannot launch kernel '%s' (launch %d)",
			       l->kernel, i);
	return PB_OK;
}

int pb_runtime_gpu_sync(struct pb_ctx *ctx, struct pb_runtime_gpu *g,
			int i)
{
	CUresult r = cu.CtxSynchronize();
	if (!r)
		return PB_OK;
	if (i >= 0)
		return cu_fail(ctx, r, "kernel '%s' (launch %d) failed",
			       g->plan->launches[i].kernel, i);
	return cu_fail(ctx, r, "the kernels failed");
}

int pb_runtime_gpu_time(struct pb_ctx *ctx, struct pb_runtime_gpu *g,
			int warmup, int repeat, double *ms, double *start)
{
	int n = g->plan->nlaunches, ne = repeat * (n + 1);
	CUevent *ev = calloc(ne + 1, sizeof(*ev));
	int rc = ev ? PB_OK : PB_ERR;
	if (!ev)
		pb_error(ctx, "out of memory");
	for (int i = 0; rc == PB_OK && i < ne; i++) {
		CUresult r = cu.EventCreate(&ev[i], 0);
		if (r)
			rc = cu_fail(ctx, r, "cannot create a CUDA event");
	}
	for (int w = 0; rc == PB_OK && w < warmup; w++)
		for (int i = 0; rc == PB_OK && i < n; i++)
			rc = pb_runtime_gpu_launch(ctx, g, i);
	if (rc == PB_OK)
		rc = pb_runtime_gpu_sync(ctx, g, -1);
	for (int k = 0; rc == PB_OK && k < repeat; k++) {
		CUevent *e = ev + k * (n + 1);
		CUresult r = cu.EventRecord(e[0], NULL);
		for (int i = 0; !r && rc == PB_OK && i < n; i++) {
			rc = pb_runtime_gpu_launch(ctx, g, i);
			if (rc == PB_OK)
				r = cu.EventRecord(e[i + 1], NULL);
		}
		if (r)
			rc = cu_fail(ctx, r, "cannot record a CUDA event");
	}
	if (rc == PB_OK && ne) {
		CUresult r = cu.EventSynchronize(ev[ne - 1]);
		if (r)
			rc = cu_fail(ctx, r, "the kernels failed");
	}
	for (int k = 0; rc == PB_OK && k < repeat; k++) {
		CUevent *e = ev + k * (n + 1);
		for (int i = 0; rc == PB_OK && i <= n; i++) {
			float t = 0;
			CUresult r = cu.EventElapsedTime(&t, ev[0], e[i]);
			if (r)
				rc = cu_fail(ctx, r, "cannot read a CUDA event");
			start[k * (n + 1) + i] = t;
		}
		for (int i = 0; rc == PB_OK && i < n; i++)
			ms[k * n + i] = start[k * (n + 1) + i + 1] -
					start[k * (n + 1) + i];
	}
	for (int i = 0; ev && i < ne; i++)
		if (ev[i])
			cu.EventDestroy(ev[i]);
	free(ev);
	return rc;
}

/* The pb dtype of the plan's element type "s" ("index" is i64). */
static enum pb_dtype dtype_of(const char *s)
{
	static const enum pb_dtype all[] = {
		PB_DT_F32, PB_DT_U8, PB_DT_I8, PB_DT_U16, PB_DT_I16, PB_DT_I32,
		PB_DT_I64, PB_DT_BOOL, PB_DT_F16, PB_DT_F64, PB_DT_U32,
		PB_DT_U64, PB_DT_BF16};
	if (!strcmp(s, "index"))
		return PB_DT_I64;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(pb_dtype_name(all[i]), s))
			return all[i];
	return PB_DT_UNDEFINED;
}

int pb_runtime_plan_signature(struct pb_ctx *ctx, const struct pb_plan *p,
			      struct pb_runtime_sig *sig)
{
	int n = 0;
	memset(sig, 0, sizeof(*sig));
	for (int i = 0; i < p->nbuffers; i++)
		if (p->buffers[i].arg >= 0 && p->buffers[i].kind != PB_PLAN_VIEW &&
		    p->buffers[i].kind != PB_PLAN_SCRATCH)
			n++;
	sig->args = calloc(n + 1, sizeof(*sig->args));
	if (!sig->args) {
		pb_error(ctx, "out of memory");
		return PB_ERR;
	}
	sig->nargs = n;
	for (int k = 0; k < n; k++)
		sig->args[k].dtype = PB_DT_UNDEFINED;
	for (int i = 0; i < p->nbuffers; i++) {
		const struct pb_plan_buffer *b = &p->buffers[i];
		if (b->arg < 0 || b->kind == PB_PLAN_VIEW ||
		    b->kind == PB_PLAN_SCRATCH)
			continue;
		struct pb_runtime_arg *a = b->arg < n ? &sig->args[b->arg] : NULL;
		const char *why = NULL;
		if (!a || a->name)
			why = "its argument position is out of range or taken";
		else if (b->rank > PB_MAX_RANK)
			why = "its rank is too high";
		else if ((a->dtype = dtype_of(b->dtype)) == PB_DT_UNDEFINED)
			why = "its element type is not supported";
		if (why) {
			pb_error(ctx, "plan buffer %d (argument %d): %s", i,
				 b->arg, why);
			pb_runtime_sig_free(sig);
			return PB_ERR;
		}
		a->role = b->kind == PB_PLAN_INPUT   ? PB_RUNTIME_INPUT
			  : b->kind == PB_PLAN_PARAM ? PB_RUNTIME_PARAM
						     : PB_RUNTIME_OUTPUT;
		a->rank = b->rank;
		memcpy(a->dims, b->shape, sizeof(int64_t) * b->rank);
		if (b->perm) {
			a->nperm = b->rank;
			memcpy(a->perm, b->perm, sizeof(int) * b->rank);
		}
		char buf[32];
		snprintf(buf, sizeof(buf), "arg%d", b->arg);
		a->name = strdup(b->name ? b->name : buf);
	}
	for (int k = 0; k < n; k++)
		if (!sig->args[k].name) {
			pb_error(ctx, "the plan has no buffer for argument %d", k);
			pb_runtime_sig_free(sig);
			return PB_ERR;
		}
	return PB_OK;
}

int pb_runtime_gpu_run(struct pb_ctx *ctx, const struct pb_plan *plan,
		       const char *ptx, size_t len,
		       const struct pb_runtime_sig *sig, struct pb_tensor *vals)
{
	struct pb_runtime_gpu *g = pb_runtime_gpu_load(ctx, plan, ptx, len);
	if (!g)
		return PB_ERR;
	int rc = pb_runtime_gpu_upload(ctx, g, sig, vals);
	for (int i = 0; rc == PB_OK && i < plan->nlaunches; i++) {
		rc = pb_runtime_gpu_launch(ctx, g, i);
		if (rc == PB_OK)
			rc = pb_runtime_gpu_sync(ctx, g, i);
	}
	if (rc == PB_OK)
		rc = pb_runtime_gpu_download(ctx, g, sig, vals);
	pb_runtime_gpu_free(g);
	return rc;
}
