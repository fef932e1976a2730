/* NVIDIA's Tile IR tools: finding tileiras and tileirdisasm, assembling
 * bytecode into a cubin, and reading back from the cubin what the launch
 * plan needs (the block size tileiras chose, its shared memory). */
#include <errno.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tileir/tileir.h"

/* Copy "s" into "path" when it names an executable file. */
static int usable(const char *s, char *path, size_t n)
{
	if (!s || !*s || access(s, X_OK) || strlen(s) >= n)
		return -1;
	strcpy(path, s);
	return 0;
}

/* "name" in a directory of $PATH. */
static int on_path(const char *name, char *path, size_t n)
{
	const char *p = getenv("PATH");
	char dir[4096];
	while (p && *p) {
		size_t k = strcspn(p, ":");
		if (k && k < sizeof(dir) - 1) {
			snprintf(dir, sizeof(dir), "%.*s/%s", (int)k, p, name);
			if (!usable(dir, path, n))
				return 0;
		}
		p += k + (p[k] == ':');
	}
	return -1;
}

/* "name" in the virtual environment of scripts/deps.sh --tile:
 * DIR/../venv-tile for the directory DIR of the running executable (the
 * build's bin/), where pip puts NVIDIA's tools under
 * lib/python3.X/site-packages/nvidia/cu13/bin. */
static int in_venv(const char *name, char *path, size_t n)
{
	char exe[4096], pat[4200];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (k <= 0)
		return -1;
	exe[k] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	snprintf(pat, sizeof(pat),
		 "%s/../venv-tile/lib/python3*/site-packages/nvidia/cu*/bin/%s",
		 exe, name);
	glob_t g;
	int rc = -1;
	if (!glob(pat, 0, NULL, &g) && g.gl_pathc)
		rc = usable(g.gl_pathv[g.gl_pathc - 1], path, n);
	globfree(&g);
	return rc;
}

int pb_tileir_find_tool(const char *given, const char *name, const char *env,
			char *path, size_t n)
{
	if (given)
		return usable(given, path, n);
	if (env && getenv(env))
		return usable(getenv(env), path, n);
	if (!on_path(name, path, n) || !in_venv(name, path, n))
		return 0;
	return -1;
}

/* The environment of tileiras: this process's without CUDA_HOME (with
 * CUDA_HOME pointing at an older CUDA toolkit, tileiras loads that
 * toolkit's libnvvm and fails). A malloc'ed array of borrowed strings. */
static char **tool_env(void)
{
	extern char **environ;
	int n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 1, sizeof(char *));
	int k = 0;
	for (int i = 0; env && i < n; i++)
		if (strncmp(environ[i], "CUDA_HOME=", 10))
			env[k++] = environ[i];
	return env;
}

/* Replace the line breaks of "s" by spaces, trailing ones dropped. */
static void one_line(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
	for (; *s; s++)
		if (*s == '\n')
			*s = ' ';
}

int pb_tileir_assemble(struct pb_ctx *ctx, const char *tool, const char *what,
		       const struct pb_buf *bc, const char *arch,
		       int opt_level, struct pb_buf *cubin)
{
	char in[] = "/tmp/pb-tileir-XXXXXX", outp[64], gpu[64], opt[16];
	int fd = mkstemp(in);
	if (fd < 0 || write(fd, bc->data, bc->len) != (ssize_t)bc->len) {
		if (fd >= 0) {
			close(fd);
			unlink(in);
		}
		pb_error(ctx, "cannot write the Tile IR bytecode of %s: %s",
			 what, strerror(errno));
		return PB_ERR;
	}
	close(fd);
	snprintf(outp, sizeof(outp), "%s.cubin", in);
	/* tileiras knows sm_90, not sm_90a: it picks the "a" features of
	 * sm_90 itself */
	snprintf(gpu, sizeof(gpu), "--gpu-name=%.*s", (int)strcspn(arch, "a"),
		 arch);
	snprintf(opt, sizeof(opt), "-O%d", opt_level);
	char *argv[] = {(char *)tool, gpu, opt, "-o", outp, in, NULL};
	char **env = tool_env();
	struct pb_buf log = {0};
	int st = pb_run_program(argv, env, NULL, 1, &log);
	free(env);
	unlink(in);
	int rc = PB_OK;
	size_t len = 0;
	char *data = st == 0 ? pb_read_file(outp, &len) : NULL;
	if (!data) {
		pb_buf_puts(&log, "");
		one_line(log.data);
		pb_error(ctx, "tileiras cannot assemble %s for %s (exit %d): %s",
			 what, arch, st, log.data);
		rc = PB_ERR;
	} else {
		pb_buf_append(cubin, data, len);
	}
	free(data);
	unlink(outp);
	pb_buf_free(&log);
	return rc;
}

/* Little-endian reads from the ELF image. */
static uint64_t rd(const char *p, int width)
{
	uint64_t x = 0;
	for (int i = width - 1; i >= 0; i--)
		x = (x << 8) | (unsigned char)p[i];
	return x;
}

/* The offset and size of the section named "name" of the 64-bit ELF
 * "elf"; -1 when there is none. */
static int64_t section(const char *elf, size_t len, const char *name,
		       uint64_t *size)
{
	if (len < 64 || memcmp(elf, "\x7f" "ELF\x02", 5))
		return -1;
	uint64_t shoff = rd(elf + 0x28, 8);
	unsigned shentsize = rd(elf + 0x3a, 2), shnum = rd(elf + 0x3c, 2),
		 shstrndx = rd(elf + 0x3e, 2);
	if (shstrndx >= shnum || shoff + (uint64_t)shnum * shentsize > len ||
	    shentsize < 64)
		return -1;
	const char *str = elf + shoff + (uint64_t)shstrndx * shentsize;
	uint64_t stroff = rd(str + 0x18, 8), strsize = rd(str + 0x20, 8);
	if (stroff + strsize > len)
		return -1;
	for (unsigned i = 0; i < shnum; i++) {
		const char *s = elf + shoff + (uint64_t)i * shentsize;
		uint64_t nm = rd(s, 4), off = rd(s + 0x18, 8),
			 sz = rd(s + 0x20, 8);
		if (nm >= strsize || strnlen(elf + stroff + nm, strsize - nm) ==
					     strsize - nm)
			continue;
		if (strcmp(elf + stroff + nm, name))
			continue;
		*size = sz;
		return (int64_t)off;
	}
	return -1;
}

/* EIATTR_REQNTID: the block size a kernel requires; EIATTR_KPARAM_INFO:
 * one of its parameters (index, ordinal, offset, then its size in bits 18
 * to 31 of a word of flags). A tile kernel whose parameters the driver
 * completes through the host callbacks of the cubin's .nv.host section
 * (TMA descriptors written after the arguments, in a constant bank
 * larger than them: EIATTR_PARAM_CBANK) lists instead in attribute 0x45
 * the parameters its launcher passes, each with its size in the low 16
 * bits (as cuTile Python's kernels do, checked on tileiras 13.5's
 * cubins). */
#define EIATTR_REQNTID 0x10
#define EIATTR_KPARAM_INFO 0x17
#define EIATTR_TILE_PARAM_INFO 0x45

/* The data of the "k"-th attribute "attr" (a sized entry of "n" bytes)
 * of kernel "kernel"'s .nv.info section in "cubin"; NULL when absent. */
static const char *eiattr(const char *cubin, size_t len, const char *kernel,
			  int attr, uint64_t n, int k)
{
	char name[512];
	uint64_t size = 0;
	snprintf(name, sizeof(name), ".nv.info.%s", kernel);
	int64_t off = section(cubin, len, name, &size);
	if (off < 0 || (uint64_t)off + size > len)
		return NULL;
	const char *p = cubin + off, *end = p + size;
	/* entries: format byte, attribute byte, then by format: none (1),
	 * one byte (2), two bytes (3), each padded to 4 bytes, or a 16-bit
	 * size and data (4) */
	while (p + 2 <= end) {
		int fmt = p[0], a = (unsigned char)p[1];
		if (fmt == 4) {
			if (p + 4 > end)
				break;
			uint64_t m = rd(p + 2, 2);
			if (p + 4 + m > end)
				break;
			if (a == attr && m == n && k-- == 0)
				return p + 4;
			p += 4 + m;
		} else {
			p += 4;
		}
	}
	return NULL;
}

int pb_tileir_cubin_block(const char *cubin, size_t len, const char *kernel,
			  int64_t block[3])
{
	const char *p = eiattr(cubin, len, kernel, EIATTR_REQNTID, 12, 0);
	for (int i = 0; p && i < 3; i++)
		block[i] = rd(p + 4 * i, 4);
	return p ? 0 : -1;
}

int pb_tileir_cubin_params(const char *cubin, size_t len, const char *kernel,
			   int64_t *bytes)
{
	int tile = eiattr(cubin, len, kernel, EIATTR_TILE_PARAM_INFO, 12, 0) !=
		   NULL;
	int attr = tile ? EIATTR_TILE_PARAM_INFO : EIATTR_KPARAM_INFO, n = 0;
	const char *p;
	*bytes = 0;
	while ((p = eiattr(cubin, len, kernel, attr, 12, n))) {
		uint64_t w = rd(p + 8, 4);
		*bytes += tile ? (int64_t)(w & 0xffff) : (int64_t)(w >> 18);
		n++;
	}
	return n;
}

int64_t pb_tileir_cubin_smem(const char *cubin, size_t len,
			     const char *kernel)
{
	char name[512];
	uint64_t size = 0;
	snprintf(name, sizeof(name), ".nv.shared.%s", kernel);
	return section(cubin, len, name, &size) < 0 ? 0 : (int64_t)size;
}
