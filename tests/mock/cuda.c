/* A mock CUDA driver (libcuda.so.1) for testing pb's GPU runner on machines
 * without a GPU. Device memory is host memory; kernels do not run: each
 * launch is logged on stderr when PB_MOCK_CUDA_LOG is set, naming every
 * parameter (a buffer as "#<allocation>+<byte offset>" with its first f32
 * value, a scalar by value); CUDA events advance a fake clock by 1 ms per
 * record, so every kernel takes exactly 1 ms. Environment:
 *   PB_MOCK_CUDA_DEVICES=0     report no device
 *   PB_MOCK_CUDA_FAIL=<kernel> the launch of <kernel> fails at the next
 *                              synchronization (illegal address)
 * A PTX that contains "MOCK_JIT_FAIL" fails to load with a two-line log.
 * A cubin (an ELF image: pb-codegen --backend=tile) loads too: a kernel is
 * found by its .nv.info.<name> section, one 64-bit parameter per
 * EIATTR_KPARAM_INFO entry.
 * Built by tests/lit/lit.cfg.py; not part of pb.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum { MAX_ALLOCS = 4096 };
static struct {
	char *p;
	size_t n;
} allocs[MAX_ALLOCS];
static int nallocs;
static char *ptx;
static unsigned char *cubin; /* the module when it is an ELF image */
static size_t cubin_len;
static double clock_ms;
static int failed;
static void *funcs[1024]; /* freed when the module is unloaded */
static int nfuncs;

struct func {
	char name[256];
	int nparams;
	char types[64][8]; /* ".u64", ".u32", ".f32", ... */
};

static int logging(void)
{
	return getenv("PB_MOCK_CUDA_LOG") != NULL;
}

CUresult cuInit(unsigned flags)
{
	(void)flags;
	return 0;
}

CUresult cuDeviceGetCount(int *n)
{
	const char *s = getenv("PB_MOCK_CUDA_DEVICES");
	*n = s ? atoi(s) : 1;
	return 0;
}

CUresult cuDeviceGet(int *d, int i)
{
	*d = i;
	return 0;
}

CUresult cuDeviceGetName(char *name, int len, int d)
{
	(void)d;
	snprintf(name, len, "pb mock GPU");
	return 0;
}

CUresult cuDeviceGetAttribute(int *v, int attr, int d)
{
	(void)d;
	*v = attr == 75 ? 9 : 0;
	return 0;
}

CUresult cuDevicePrimaryCtxRetain(void **cx, int d)
{
	(void)d;
	*cx = (void *)1;
	return 0;
}

CUresult cuDevicePrimaryCtxRelease_v2(int d)
{
	(void)d;
	return 0;
}

CUresult cuCtxSetCurrent(void *cx)
{
	(void)cx;
	return 0;
}

CUresult cuCtxSynchronize(void)
{
	return failed ? 700 : 0;
}

CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n,
			    int *opts, void **vals)
{
	if (strstr(image, "MOCK_JIT_FAIL")) {
		for (unsigned i = 0; i < n; i++)
			if (opts[i] == 5)
				snprintf(vals[i], 64, "ptxas fatal: mock error\n"
					 "line 2\n");
		return 218;
	}
	free(ptx);
	free(cubin);
	ptx = NULL;
	cubin = NULL;
	if (!memcmp(image, "\x7f" "ELF", 4)) {
		/* the image ends with its section header table */
		const unsigned char *e = image;
		uint64_t shoff;
		uint16_t shentsize, shnum;
		memcpy(&shoff, e + 0x28, 8);
		memcpy(&shentsize, e + 0x3a, 2);
		memcpy(&shnum, e + 0x3c, 2);
		cubin_len = shoff + (size_t)shentsize * shnum;
		cubin = malloc(cubin_len);
		memcpy(cubin, image, cubin_len);
		*mod = cubin;
		return 0;
	}
	ptx = strdup(image);
	*mod = ptx;
	return 0;
}

/* The kernel "name" of the cubin into "f": its .nv.info.<name> section,
 * one .u64 parameter per EIATTR_KPARAM_INFO (0x17) entry. */
static int find_cubin_entry(struct func *f, const char *name)
{
	char want[300];
	uint64_t shoff;
	uint16_t shentsize, shnum, shstrndx;
	snprintf(want, sizeof(want), ".nv.info.%s", name);
	memcpy(&shoff, cubin + 0x28, 8);
	memcpy(&shentsize, cubin + 0x3a, 2);
	memcpy(&shnum, cubin + 0x3c, 2);
	memcpy(&shstrndx, cubin + 0x3e, 2);
	uint64_t stroff;
	memcpy(&stroff, cubin + shoff + (size_t)shstrndx * shentsize + 0x18, 8);
	for (unsigned i = 0; i < shnum; i++) {
		const unsigned char *sh = cubin + shoff + (size_t)i * shentsize;
		uint32_t nm;
		uint64_t off, size;
		memcpy(&nm, sh, 4);
		memcpy(&off, sh + 0x18, 8);
		memcpy(&size, sh + 0x20, 8);
		if (strcmp((const char *)cubin + stroff + nm, want))
			continue;
		snprintf(f->name, sizeof(f->name), "%s", name);
		for (uint64_t p = off; p + 4 <= off + size;) {
			int fmt = cubin[p], attr = cubin[p + 1];
			uint16_t n = 0;
			if (fmt == 4)
				memcpy(&n, cubin + p + 2, 2);
			if (fmt == 4 && attr == 0x17 && f->nparams < 64)
				strcpy(f->types[f->nparams++], ".u64");
			p += fmt == 4 ? 4 + (uint64_t)n : 4;
		}
		return 1;
	}
	return 0;
}

CUresult cuModuleUnload(void *mod)
{
	(void)mod;
	for (int i = 0; i < nfuncs; i++)
		free(funcs[i]);
	nfuncs = 0;
	free(ptx);
	ptx = NULL;
	free(cubin);
	cubin = NULL;
	return 0;
}

/* Read the parameter types of ".entry name(" in the PTX into "f". */
static int find_entry(struct func *f, const char *name)
{
	char pat[300];
	snprintf(pat, sizeof(pat), ".entry %s(", name);
	const char *p = ptx ? strstr(ptx, pat) : NULL;
	if (!p)
		return 0;
	snprintf(f->name, sizeof(f->name), "%s", name);
	const char *end = strchr(p, ')');
	for (const char *q = strstr(p, ".param"); q && q < end && f->nparams < 64;
	     q = strstr(q + 6, ".param")) {
		sscanf(q + 6, " %7s", f->types[f->nparams]);
		f->nparams++;
	}
	return 1;
}

CUresult cuModuleGetFunction(void **fn, void *mod, const char *name)
{
	(void)mod;
	struct func *f = calloc(1, sizeof(*f));
	if (!(cubin ? find_cubin_entry(f, name) : find_entry(f, name)) ||
	    nfuncs == 1024) {
		free(f);
		return 500;
	}
	funcs[nfuncs++] = f;
	*fn = f;
	return 0;
}

CUresult cuFuncSetAttribute(void *fn, int attr, int v)
{
	(void)fn; (void)attr; (void)v;
	return 0;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	if (nallocs == MAX_ALLOCS)
		return 2;
	allocs[nallocs].p = malloc(n);
	allocs[nallocs].n = n;
	*p = (CUdeviceptr)(uintptr_t)allocs[nallocs++].p;
	return 0;
}

CUresult cuMemFree_v2(CUdeviceptr p)
{
	for (int i = 0; i < nallocs; i++)
		if ((CUdeviceptr)(uintptr_t)allocs[i].p == p) {
			free(allocs[i].p);
			allocs[i].p = NULL;
		}
	return 0;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n)
{
	memcpy((void *)(uintptr_t)d, s, n);
	return 0;
}

CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n)
{
	memcpy(d, (void *)(uintptr_t)s, n);
	return 0;
}

CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n)
{
	memset((void *)(uintptr_t)d, v, n);
	return 0;
}

/* Print the device address "a" as "#k+off=<first f32>" (k: the
 * allocation it lies in), or "a" as a number when it lies in none. */
static void print_addr(uint64_t a)
{
	for (int i = 0; i < nallocs; i++) {
		uint64_t b = (uint64_t)(uintptr_t)allocs[i].p;
		if (allocs[i].p && a >= b && a < b + allocs[i].n) {
			float v = 0;
			if (a + 4 <= b + allocs[i].n)
				memcpy(&v, (void *)(uintptr_t)a, 4);
			fprintf(stderr, " #%d+%llu=%g", i,
				(unsigned long long)(a - b), v);
			return;
		}
	}
	fprintf(stderr, " %llu", (unsigned long long)a);
}

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz,
			unsigned bx, unsigned by, unsigned bz, unsigned smem,
			void *stream, void **params, void **extra)
{
	struct func *f = fn;
	(void)stream; (void)extra;
	const char *fail = getenv("PB_MOCK_CUDA_FAIL");
	if (fail && !strcmp(fail, f->name))
		failed = 1;
	if (!logging())
		return 0;
	fprintf(stderr, "mock: launch %s grid %ux%ux%u block %ux%ux%u smem %u:",
		f->name, gx, gy, gz, bx, by, bz, smem);
	for (int i = 0; i < f->nparams; i++) {
		const char *t = f->types[i];
		if (!strcmp(t, ".u64") || !strcmp(t, ".b64") || !strcmp(t, ".s64")) {
			uint64_t v;
			memcpy(&v, params[i], 8);
			print_addr(v);
		} else if (!strcmp(t, ".f32")) {
			fprintf(stderr, " %g", *(float *)params[i]);
		} else if (!strcmp(t, ".f64")) {
			fprintf(stderr, " %g", *(double *)params[i]);
		} else {
			fprintf(stderr, " %d", *(int32_t *)params[i]);
		}
	}
	fprintf(stderr, "\n");
	return 0;
}

CUresult cuEventCreate(double **e, unsigned flags)
{
	(void)flags;
	*e = calloc(1, sizeof(double));
	return 0;
}

CUresult cuEventDestroy_v2(double *e)
{
	free(e);
	return 0;
}

CUresult cuEventRecord(double *e, void *stream)
{
	(void)stream;
	*e = clock_ms;
	clock_ms += 1.0;
	return 0;
}

CUresult cuEventSynchronize(double *e)
{
	(void)e;
	return failed ? 700 : 0;
}

CUresult cuEventElapsedTime_v2(float *ms, double *a, double *b)
{
	*ms = (float)(*b - *a);
	return 0;
}

CUresult cuGetErrorString(CUresult r, const char **s)
{
	switch (r) {
	case 218: *s = "a PTX JIT compilation failed"; break;
	case 500: *s = "named symbol not found"; break;
	case 700: *s = "an illegal memory access was encountered"; break;
	default: *s = "mock error"; break;
	}
	return 0;
}
