/* A mock CUDA driver (libcuda.so.1) for testing pb's GPU runner on machines
 * without a GPU. Device memory is host memory; kernels do not run: each
 * launch is logged on stderr when PB_MOCK_CUDA_LOG is set, naming every
 * parameter (a buffer as "#<allocation>+<byte offset>" with its first f32
 * value, a scalar by value); CUDA events advance a fake clock by 1 ms per
 * record, so every kernel takes exactly 1 ms. Environment:
 *   PB_MOCK_CUDA_DEVICES=0     report no device
 *   PB_MOCK_CUDA_FAIL=<kernel> the launch of <kernel> fails at the next
 *                              synchronization (illegal address)
 * A launch with more than 48 KiB of dynamic shared memory fails
 * (CUDA_ERROR_INVALID_VALUE) unless cuFuncSetAttribute gave its function
 * CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES at least as large (at
 * most 227 KiB, an sm_90's opt-in limit), as on a real device.
 * A PTX that contains "MOCK_JIT_FAIL" fails to load with a two-line log.
 * A cubin (an ELF image: pb-codegen --backend=tile) loads too, through
 * cuModuleLoadDataEx or cuLibraryLoadData: a kernel is found by its
 * .nv.info.<name> section, one parameter per EIATTR_KPARAM_INFO entry
 * (or per entry 0x45, the parameters a launcher passes to a tile kernel
 * whose constant bank the host code completes). A cubin of tileiras
 * (one with a .nv.host section: tile kernels) is launched as the driver
 * is taken to launch it (docs/tileir.md): blocks of 1x1x1 only (else
 * CUDA_ERROR_INVALID_VALUE); the arguments copied at their offsets into
 * a parameter buffer of the kernel's EIATTR_PARAM_CBANK size and handed
 * to the kernel's __CUDA_TILEIR_FUNC_ON_ARGUMENTS_CHANGE_<i> callback of
 * .nv.host (run here, on the host, as the driver would), and the TMA
 * descriptors it writes past the arguments logged as "tma" with the
 * address and the sizes they encode.
 * Built by tests/lit/lit.cfg.py; not part of pb.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef int CUresult;

/* Dynamic shared memory a launch may pass without the function's
 * attribute, and with it (sm_90's opt-in limit). */
#define MOCK_SMEM_DEFAULT (48 * 1024)
#define MOCK_SMEM_OPTIN (227 * 1024)
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
	int tile;          /* a tile kernel (the cubin has .nv.host) */
	int offsets[64];   /* tile kernels: parameter offsets, sizes */
	int sizes[64];
	int cbank_off, cbank_size; /* EIATTR_PARAM_CBANK */
	/* its __CUDA_TILEIR_FUNC_ON_ARGUMENTS_CHANGE_<i>, or NULL */
	int (*on_args)(void *, void *, void *, void *);
	int max_dyn; /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
};
static void *host_code; /* .nv.host's .ltext, executable */
static size_t host_code_len;

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

/* The section named "want" of the ELF image "e": its offset and size;
 * 0 when there is none. */
static int elf_section(const unsigned char *e, const char *want,
		       uint64_t *off, uint64_t *size, int *index)
{
	uint64_t shoff, stroff;
	uint16_t shentsize, shnum, shstrndx;
	memcpy(&shoff, e + 0x28, 8);
	memcpy(&shentsize, e + 0x3a, 2);
	memcpy(&shnum, e + 0x3c, 2);
	memcpy(&shstrndx, e + 0x3e, 2);
	memcpy(&stroff, e + shoff + (size_t)shstrndx * shentsize + 0x18, 8);
	for (unsigned i = 0; i < shnum; i++) {
		const unsigned char *sh = e + shoff + (size_t)i * shentsize;
		uint32_t nm;
		memcpy(&nm, sh, 4);
		if (strcmp((const char *)e + stroff + nm, want))
			continue;
		memcpy(off, sh + 0x18, 8);
		memcpy(size, sh + 0x20, 8);
		if (index)
			*index = i;
		return 1;
	}
	return 0;
}

/* The tile callback of kernel "name" in the .nv.host image "h" (an x86-64
 * relocatable ELF): __CUDA_TILEIR_FUNC_NAME_<i> names the kernel,
 * __CUDA_TILEIR_FUNC_ON_ARGUMENTS_CHANGE_<i> is its callback, copied with
 * the rest of .ltext into executable memory (it must need no
 * relocation). NULL when there is none. */
static void *tile_callback(const unsigned char *h, const char *name)
{
	uint64_t symoff, symsize, stroff, strsize, toff, tsize, roff, rsize;
	int text = -1, ro = -1;
	uint64_t rooff, rosize;
	if (!elf_section(h, ".symtab", &symoff, &symsize, NULL) ||
	    !elf_section(h, ".strtab", &stroff, &strsize, NULL) ||
	    !elf_section(h, ".ltext", &toff, &tsize, &text) ||
	    !elf_section(h, ".lrodata", &rooff, &rosize, &ro))
		return NULL;
	if (!host_code) {
		host_code = mmap(NULL, tsize, PROT_READ | PROT_WRITE | PROT_EXEC,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (host_code == MAP_FAILED) {
			host_code = NULL;
			return NULL;
		}
		memcpy(host_code, h + toff, tsize);
		host_code_len = tsize;
	}
	/* symbols: name, info, other, shndx, value, size (24 bytes) */
	char want[64] = "";
	for (uint64_t p = symoff; p + 24 <= symoff + symsize; p += 24) {
		uint32_t nm;
		uint16_t shndx;
		uint64_t value;
		memcpy(&nm, h + p, 4);
		memcpy(&shndx, h + p + 6, 2);
		memcpy(&value, h + p + 8, 8);
		const char *s = (const char *)h + stroff + nm;
		if (shndx == ro && !strncmp(s, "__CUDA_TILEIR_FUNC_NAME_", 24) &&
		    !strcmp((const char *)h + rooff + value, name))
			snprintf(want, sizeof(want),
				 "__CUDA_TILEIR_FUNC_ON_ARGUMENTS_CHANGE_%s", s + 24);
	}
	for (uint64_t p = symoff; *want && p + 24 <= symoff + symsize; p += 24) {
		uint32_t nm;
		uint16_t shndx;
		uint64_t value, size;
		memcpy(&nm, h + p, 4);
		memcpy(&shndx, h + p + 6, 2);
		memcpy(&value, h + p + 8, 8);
		memcpy(&size, h + p + 16, 8);
		if (shndx != text || strcmp((const char *)h + stroff + nm, want))
			continue;
		if (elf_section(h, ".rela.ltext", &roff, &rsize, NULL))
			for (uint64_t r = roff; r + 24 <= roff + rsize; r += 24) {
				uint64_t at;
				memcpy(&at, h + r, 8);
				if (at >= value && at < value + size)
					return NULL;
			}
		return (char *)host_code + value;
	}
	return NULL;
}

/* The kernel "name" of the cubin into "f": its .nv.info.<name> section,
 * one .u64 parameter per EIATTR_KPARAM_INFO (0x17) entry, or per entry
 * 0x45 of a tile kernel (one that takes TMA descriptors). */
static int find_cubin_entry(struct func *f, const char *name)
{
	char want[300];
	uint64_t off, size, hoff, hsize;
	snprintf(want, sizeof(want), ".nv.info.%s", name);
	if (!elf_section(cubin, want, &off, &size, NULL))
		return 0;
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->tile = elf_section(cubin, ".nv.host", &hoff, &hsize, NULL);
	for (uint64_t p = off; p + 4 <= off + size;) {
		int fmt = cubin[p], attr = cubin[p + 1];
		uint16_t n = 0, o;
		uint32_t w;
		if (fmt == 4)
			memcpy(&n, cubin + p + 2, 2);
		if (fmt == 4 && (attr == 0x17 || attr == 0x45)) {
			/* index, ordinal (the position in the launch's
			 * parameters), offset, flags with the size */
			uint16_t k;
			memcpy(&k, cubin + p + 4 + 4, 2);
			memcpy(&o, cubin + p + 4 + 6, 2);
			memcpy(&w, cubin + p + 4 + 8, 4);
			if (k >= 64)
				return 0;
			if (k >= f->nparams)
				f->nparams = k + 1;
			f->offsets[k] = o;
			f->sizes[k] = attr == 0x17 ? w >> 18 : w & 0xffff;
			strcpy(f->types[k], f->sizes[k] == 4 ? ".u32" : ".u64");
		}
		if (fmt == 4 && attr == 0x0a && n == 8) {
			uint16_t co, cs;
			memcpy(&co, cubin + p + 8, 2);
			memcpy(&cs, cubin + p + 10, 2);
			f->cbank_off = co;
			f->cbank_size = cs;
		}
		p += fmt == 4 ? 4 + (uint64_t)n : 4;
	}
	if (f->tile)
		f->on_args = tile_callback(cubin + hoff, name);
	return 1;
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
	if (host_code)
		munmap(host_code, host_code_len);
	host_code = NULL;
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
	/* the same function for the same name, as the driver's handles */
	for (int i = 0; i < nfuncs; i++)
		if (!strcmp(((struct func *)funcs[i])->name, name)) {
			*fn = funcs[i];
			return 0;
		}
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

/* The library API (CUDA 12): a library is the module, a kernel its
 * function. */
CUresult cuLibraryLoadData(void **lib, const void *image, int *opts,
			   void **vals, unsigned n, int *lopts, void **lvals,
			   unsigned ln)
{
	(void)lopts; (void)lvals; (void)ln;
	return cuModuleLoadDataEx(lib, image, n, opts, vals);
}

CUresult cuLibraryUnload(void *lib)
{
	return cuModuleUnload(lib);
}

CUresult cuLibraryGetKernel(void **k, void *lib, const char *name)
{
	return cuModuleGetFunction(k, lib, name);
}

CUresult cuKernelGetFunction(void **fn, void *k)
{
	*fn = k;
	return 0;
}

/* The attribute pb sets: the most dynamic shared memory of a launch,
 * at most the opt-in limit of the mock's device (an sm_90: 227 KiB);
 * logged, so that a test sees it set once per function. */
CUresult cuFuncSetAttribute(void *fn, int attr, int v)
{
	struct func *f = fn;
	if (attr != 8)
		return 0;
	if (v < 0 || v > MOCK_SMEM_OPTIN)
		return 1;
	f->max_dyn = v;
	if (logging())
		fprintf(stderr, "mock: %s: max dynamic shared memory %d\n",
			f->name, v);
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

/* The TMA descriptors that the tile callback of "f" wrote into the
 * parameter buffer "buf" past its arguments (each 128 bytes at a
 * constant-bank offset that is a multiple of 64), logged: the global
 * address (bits 4 to 56 of the first word) and the sizes of the first
 * two dimensions (the fifth word: each less one). */
static void print_tma(const struct func *f, const unsigned char *buf)
{
	int end = 0;
	for (int i = 0; i < f->nparams; i++)
		if (f->offsets[i] + f->sizes[i] > end)
			end = f->offsets[i] + f->sizes[i];
	int at = ((f->cbank_off + end + 63) / 64) * 64 - f->cbank_off;
	for (; at + 128 <= f->cbank_size; at += 128) {
		uint64_t a, d;
		memcpy(&a, buf + at, 8);
		memcpy(&d, buf + at + 32, 8);
		fprintf(stderr, " tma");
		print_addr(a & 0x01fffffffffffff0ull);
		fprintf(stderr, ":%llux%llu", (unsigned long long)(d & 0xffffffff) + 1,
			(unsigned long long)(d >> 32) + 1);
	}
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
	if (smem > MOCK_SMEM_DEFAULT && (int)smem > f->max_dyn) {
		/* the driver's answer to a launch past the function's
		   CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
		if (logging())
			fprintf(stderr, "mock: launch %s with %u bytes of dynamic "
				"shared memory, past its maximum %d\n", f->name,
				smem, f->max_dyn > MOCK_SMEM_DEFAULT ? f->max_dyn
				: MOCK_SMEM_DEFAULT);
		return 1;
	}
	if (f->tile && bx * by * bz != 1) {
		if (logging())
			fprintf(stderr, "mock: tile kernel %s launched with block "
				"%ux%ux%u, not 1x1x1\n", f->name, bx, by, bz);
		return 1;
	}
	/* a tile kernel's parameters: the driver's buffer, completed by the
	 * cubin's host code */
	unsigned char *buf = NULL;
	int cb = 0;
	if (f->tile && f->cbank_size > 0) {
		buf = calloc(1, f->cbank_size);
		for (int i = 0; i < f->nparams; i++)
			if (f->offsets[i] + f->sizes[i] <= f->cbank_size)
				memcpy(buf + f->offsets[i], params[i], f->sizes[i]);
		if (f->on_args)
			cb = f->on_args(NULL, NULL, NULL, buf);
	}
	if (cb) {
		free(buf);
		if (logging())
			fprintf(stderr, "mock: the host callback of %s failed\n",
				f->name);
		return 1;
	}
	if (!logging()) {
		free(buf);
		return 0;
	}
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
	if (buf)
		print_tma(f, buf);
	free(buf);
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
