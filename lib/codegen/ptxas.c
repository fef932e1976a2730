/* --ptxas-report: assemble the PTX with ptxas -v and summarize its
 * per-kernel statistics (registers, spills, shared memory, stack). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/internal.h"

/* The path of ptxas under $CUDA_HOME or /usr/local/cuda into "path"
 * (size "n"); -1 when there is none. */
static int find_ptxas(char *path, size_t n)
{
	const char *homes[] = {getenv("CUDA_HOME"), "/usr/local/cuda"};
	for (int i = 0; i < 2; i++) {
		if (!homes[i] || !*homes[i])
			continue;
		snprintf(path, n, "%s/bin/ptxas", homes[i]);
		if (access(path, X_OK) == 0)
			return 0;
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

struct stats {
	char kernel[256];
	long regs, smem, stack, spill_st, spill_ld;
};

/* Print the statistics "s" of one kernel on stderr. */
static void print_stats(struct pb_ctx *ctx, const struct stats *s)
{
	if (!s->kernel[0])
		return;
	fprintf(stderr, "%s: ptxas %s: %s: %ld registers, %ld bytes smem, "
		"%ld bytes stack, %ld bytes spill stores, %ld bytes spill "
		"loads\n", ctx->tool, ctx->arch, s->kernel, s->regs, s->smem,
		s->stack, s->spill_st, s->spill_ld);
}

/* Parse the ptxas -v output "text" into "*all" ("*n" kernels). */
static void parse_stats(char *text, struct stats **all, int *n)
{
	struct stats *s = NULL;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		const char *q = strstr(line, "Compiling entry function '");
		if (q) {
			*all = realloc(*all, (*n + 1) * sizeof(**all));
			if (!*all)
				abort();
			s = &(*all)[(*n)++];
			memset(s, 0, sizeof(*s));
			q += strlen("Compiling entry function '");
			size_t k = strcspn(q, "'");
			if (k >= sizeof(s->kernel))
				k = sizeof(s->kernel) - 1;
			memcpy(s->kernel, q, k);
		} else if (!s) {
			continue;
		} else if (strstr(line, "bytes stack frame")) {
			s->stack = number_before(line, "bytes stack frame");
			s->spill_st = number_before(line, "bytes spill stores");
			s->spill_ld = number_before(line, "bytes spill loads");
		} else if (strstr(line, "Used ")) {
			s->regs = number_before(line, "registers");
			s->smem = number_before(line, "bytes smem");
		}
	}
}

/* Print the statistics in the ptxas -v output "text" per kernel, in the
 * order of the kernels' .entry in "ptx". */
static void summarize(struct pb_ctx *ctx, char *text, const char *ptx)
{
	struct stats *all = NULL;
	int n = 0, *done;
	parse_stats(text, &all, &n);
	done = calloc(n + 1, sizeof(int));
	for (const char *p = strstr(ptx, ".entry "); p;
	     p = strstr(p + 1, ".entry ")) {
		const char *name = p + strlen(".entry ");
		size_t k = strcspn(name, "( \n");
		for (int i = 0; i < n; i++)
			if (!done[i] && strlen(all[i].kernel) == k &&
			    !strncmp(all[i].kernel, name, k)) {
				print_stats(ctx, &all[i]);
				done[i] = 1;
			}
	}
	for (int i = 0; i < n; i++)
		if (!done[i])
			print_stats(ctx, &all[i]);
	free(done);
	free(all);
}

int pb_codegen_ptxas_report(struct pb_ctx *ctx, const char *ptx, size_t len)
{
	char ptxas[4096], tmp[] = "/tmp/pb-codegen-XXXXXX.ptx", arch[32];
	struct pb_buf out = {0};
	if (find_ptxas(ptxas, sizeof(ptxas))) {
		pb_error(ctx, "--ptxas-report: ptxas not found (looked in "
			 "$CUDA_HOME/bin and /usr/local/cuda/bin)");
		return PB_ERR;
	}
	int fd = mkstemps(tmp, 4);
	if (fd < 0 || write(fd, ptx, len) != (ssize_t)len) {
		pb_error(ctx, "--ptxas-report: cannot write a temporary file");
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return PB_ERR;
	}
	close(fd);
	snprintf(arch, sizeof(arch), "-arch=%s", ctx->arch);
	char *argv[] = {ptxas, "-v", arch, tmp, "-o", "/dev/null", NULL};
	int st = pb_run_program(argv, NULL, NULL, 1, &out);
	pb_buf_append(&out, "", 0);
	unlink(tmp);
	if (st != 0) {
		pb_error(ctx, "ptxas rejected the PTX (exit %d): %s", st,
			 out.data ? out.data : "");
		pb_buf_free(&out);
		return PB_ERR;
	}
	summarize(ctx, out.data ? out.data : (char *)"", ptx);
	pb_buf_free(&out);
	return PB_OK;
}
