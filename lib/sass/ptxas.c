/* Running CUDA's assembler and disassembler: ptxas -v (its per-kernel
 * report and the cubin) and nvdisasm (the listing sass.c parses). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sass/sass.h"

/* Is there an executable "dir"/bin/"tool"? Its path into "path". */
static int in_home(const char *dir, const char *tool, char *path, size_t n)
{
	if (!dir || !*dir)
		return -1;
	snprintf(path, n, "%s/bin/%s", dir, tool);
	return access(path, X_OK) == 0 ? 0 : -1;
}

int pb_sass_find_ptxas(char *path, size_t n)
{
	if (!in_home(getenv("CUDA_HOME"), "ptxas", path, n) ||
	    !in_home("/usr/local/cuda", "ptxas", path, n))
		return 0;
	return -1;
}

int pb_sass_find_nvdisasm(char *path, size_t n)
{
	const char *env = getenv("PB_NVDISASM");
	if (env && *env) {
		snprintf(path, n, "%s", env);
		return access(path, X_OK) == 0 ? 0 : -1;
	}
	if (!in_home(getenv("CUDA_HOME"), "nvdisasm", path, n) ||
	    !in_home("/usr/local/cuda", "nvdisasm", path, n))
		return 0;
	const char *p = getenv("PATH");
	while (p && *p) {
		size_t k = strcspn(p, ":");
		if (k) {
			snprintf(path, n, "%.*s/nvdisasm", (int)k, p);
			if (access(path, X_OK) == 0)
				return 0;
		}
		p += k + (p[k] == ':');
	}
	return -1;
}

/* The number before "what" in "line", or 0. */
static long number_before(const char *line, const char *what)
{
	const char *p = strstr(line, what);
	if (!p)
		return 0;
	while (p > line && p[-1] == ' ')
		p--;
	while (p > line && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return strtol(p, NULL, 10);
}

void pb_sass_ptxas_parse(const char *text, struct pb_sass_ptxas **all,
			 int *n)
{
	static const char entry[] = "Compiling entry function '";
	struct pb_sass_ptxas *s = NULL;
	*all = NULL;
	*n = 0;
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char buf[1024];
		snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
		line = end ? end + 1 : NULL;
		const char *q = strstr(buf, entry);
		if (q) {
			*all = pb_xrealloc(*all, *n + 1, sizeof(**all));
			s = &(*all)[(*n)++];
			memset(s, 0, sizeof(*s));
			q += strlen(entry);
			size_t k = strcspn(q, "'");
			if (k >= sizeof(s->kernel))
				k = sizeof(s->kernel) - 1;
			memcpy(s->kernel, q, k);
		} else if (!s) {
			continue;
		} else if (strstr(buf, "bytes stack frame")) {
			s->stack = number_before(buf, "bytes stack frame");
			s->spill_st = number_before(buf, "bytes spill stores");
			s->spill_ld = number_before(buf, "bytes spill loads");
		} else if (strstr(buf, "Used ")) {
			s->regs = number_before(buf, "registers");
			s->smem = number_before(buf, "bytes smem");
			s->barriers = number_before(buf, "barriers");
		}
	}
}

/* Reorder "all" ("n" kernels) as the .entry directives of "ptx" come;
 * kernels that none names keep their order after them. */
static void entry_order(struct pb_sass_ptxas *all, int n, const char *ptx)
{
	int k = 0;
	for (const char *p = strstr(ptx, ".entry "); p && k < n;
	     p = strstr(p + 1, ".entry ")) {
		const char *name = p + strlen(".entry ");
		size_t len = strcspn(name, "( \n");
		for (int i = k; i < n; i++)
			if (strlen(all[i].kernel) == len &&
			    !strncmp(all[i].kernel, name, len)) {
				struct pb_sass_ptxas t = all[i];
				memmove(&all[k + 1], &all[k],
					(i - k) * sizeof(*all));
				all[k++] = t;
				break;
			}
	}
}

int pb_sass_ptxas(struct pb_ctx *ctx, const char *what, const char *ptx,
		  size_t len, const char *arch, const char *cubin,
		  struct pb_sass_ptxas **all, int *n)
{
	char ptxas[4096], tmp[] = "/tmp/pb-ptxas-XXXXXX.ptx", a[64];
	struct pb_buf out = {0};
	*all = NULL;
	*n = 0;
	if (pb_sass_find_ptxas(ptxas, sizeof(ptxas)))
		return pb_error_in(ctx, NULL, "%s: ptxas not found (looked in "
				   "$CUDA_HOME/bin and /usr/local/cuda/bin)",
				   what);
	int fd = mkstemps(tmp, 4);
	if (fd < 0 || write(fd, ptx, len) != (ssize_t)len) {
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return pb_error_in(ctx, NULL, "%s: cannot write a temporary "
				   "file", what);
	}
	close(fd);
	snprintf(a, sizeof(a), "-arch=%s", arch);
	char *argv[] = {ptxas, "-v", a, tmp, "-o",
			(char *)(cubin ? cubin : "/dev/null"), NULL};
	int st = pb_run_program(argv, NULL, NULL, 1, &out);
	pb_buf_append(&out, "", 0);
	unlink(tmp);
	if (st != 0) {
		/* one line: ptxas's messages joined */
		for (size_t i = 0; out.data && i + 1 < out.len; i++)
			if (out.data[i] == '\n')
				out.data[i] = ' ';
		pb_error(ctx, "ptxas rejected the PTX (exit %d): %s", st,
			 out.data ? out.data : "");
		pb_buf_free(&out);
		return PB_ERR;
	}
	pb_sass_ptxas_parse(out.data, all, n);
	entry_order(*all, *n, ptx);
	pb_buf_free(&out);
	return PB_OK;
}

int pb_sass_disassemble(struct pb_ctx *ctx, const char *nvdisasm,
			const char *cubin, struct pb_buf *out)
{
	char *argv[] = {(char *)nvdisasm, "-c", (char *)cubin, NULL};
	int st = pb_run_program(argv, NULL, NULL, 0, out);
	if (st != 0)
		return pb_error_in(ctx, NULL, "nvdisasm failed (exit %d) on "
				   "the cubin of ptxas", st);
	pb_buf_append(out, "", 0);
	out->len--;
	return PB_OK;
}
