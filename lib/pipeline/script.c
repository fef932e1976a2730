/* Named pipelines: shell scripts over the tools (pipelines/), run as
 * filters with the tools of the running build first on $PATH. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline/pipeline.h"

extern char **environ;

/* Where pb's own pipelines lie, relative to the directory of the tools:
 * an install (bin/ and share/pb/pipelines/) or the build tree (build/bin/
 * and pipelines/ of the source tree). */
static const char *const dirs[] = {"/../share/pb/pipelines", "/../../pipelines"};

/* The directory of the running executable into "dir" ("n" bytes); -1
 * when /proc does not say. */
static int exe_dir(char *dir, size_t n)
{
	ssize_t k = readlink("/proc/self/exe", dir, n - 1);
	if (k <= 0)
		return -1;
	dir[k] = '\0';
	char *slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}

/* Is "path" a regular file? */
static int is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Is directory entry "e" a pipeline (a name that is not hidden and not a
 * .md page)? */
static int is_pipeline(const struct dirent *e)
{
	size_t n = strlen(e->d_name);
	return e->d_name[0] != '.' &&
	       !(n > 3 && !strcmp(e->d_name + n - 3, ".md"));
}

/* Append the names of pb's own pipelines (those of the first of "dirs"
 * under "bin" that exists), sorted and separated by ", ", to "out". */
static void list_pipelines(const char *bin, struct pb_buf *out)
{
	char dir[4200];
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		struct dirent **e;
		snprintf(dir, sizeof(dir), "%s%s", bin, dirs[i]);
		int n = scandir(dir, &e, is_pipeline, alphasort);
		if (n < 0)
			continue;
		for (int k = 0; k < n; k++) {
			pb_buf_printf(out, "%s%s", k ? ", " : "", e[k]->d_name);
			free(e[k]);
		}
		free(e);
		return;
	}
}

/* The script of pipeline "name" into "path" ("n" bytes), with tools in
 * "bin": one of pb's own when "name" has no '/', else (or when there is
 * none of that name) the file "name". */
static int find(struct pb_ctx *ctx, const char *name, const char *bin,
		char *path, size_t n)
{
	for (size_t i = 0; *name && !strchr(name, '/') &&
			   i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		int k = snprintf(path, n, "%s%s/%s", bin, dirs[i], name);
		if (k > 0 && (size_t)k < n && is_file(path))
			return PB_OK;
	}
	if (is_file(name) && strlen(name) < n) {
		strcpy(path, name);
		return PB_OK;
	}
	struct pb_buf known = {0};
	list_pipelines(bin, &known);
	pb_error(ctx, "--pipeline=%s: no pipeline or file of that name (pb's "
		      "pipelines: %s)", name, known.data ? known.data : "none");
	pb_buf_free(&known);
	return PB_ERR;
}

/* A copy of the environment with "bin" first on $PATH; free with
 * free_env. */
static char **env_with(const char *bin)
{
	int n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 2, sizeof(*env));
	const char *path = getenv("PATH");
	size_t len = strlen(bin) + (path ? strlen(path) : 0) + 7;
	char *p = malloc(len);
	if (!env || !p) {
		free(env);
		free(p);
		return NULL;
	}
	snprintf(p, len, "PATH=%s%s%s", bin, path ? ":" : "", path ? path : "");
	int k = 0;
	env[k++] = p;
	for (int i = 0; i < n; i++)
		if (strncmp(environ[i], "PATH=", 5))
			env[k++] = environ[i];
	return env;
}

static void free_env(char **env)
{
	if (env)
		free(env[0]);
	free(env);
}

int pb_pipeline_script(struct pb_ctx *ctx, const char *name,
		       const struct pb_buf *in, struct pb_buf *out)
{
	char bin[4096], path[4096], arch[64], target[4200];
	if (exe_dir(bin, sizeof(bin)) < 0) {
		pb_error(ctx, "--pipeline=%s: cannot find the tools' directory",
			 name);
		return PB_ERR;
	}
	if (find(ctx, name, bin, path, sizeof(path)) != PB_OK)
		return PB_ERR;
	snprintf(arch, sizeof(arch), "--arch=%s", ctx->arch);
	char *argv[] = {"/bin/bash", path, arch, NULL, NULL, NULL};
	int argc = 3;
	if (ctx->target_file) {
		snprintf(target, sizeof(target), "--target-file=%s",
			 ctx->target_file);
		argv[argc++] = target;
	}
	char prec[32];
	if (ctx->precision != PB_PRECISION_FP32) {
		snprintf(prec, sizeof(prec), "--precision=%s",
			 pb_precision_name(ctx->precision));
		argv[argc++] = prec;
	}
	char **env = env_with(bin);
	struct pb_buf got = {0};
	int status = env ? pb_run_program(argv, env, in, 0, &got) : -1;
	int err = env ? errno : ENOMEM;
	free_env(env);
	int rc = PB_ERR;
	if (status < 0)
		pb_error(ctx, "--pipeline=%s: cannot run '%s': %s", name, path,
			 strerror(err));
	else if (status)
		pb_error(ctx, "--pipeline=%s: '%s' failed (exit status %d)",
			 name, path, status);
	else
		rc = PB_OK;
	if (rc == PB_OK)
		pb_buf_append(out, got.data, got.len);
	pb_buf_free(&got);
	return rc;
}
