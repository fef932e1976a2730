/* Growable buffers and whole-file I/O. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/pb.h"

void pb_buf_append(struct pb_buf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *d = realloc(b->data, cap);
		if (!d) {
			fprintf(stderr, "pb: out of memory\n");
			exit(PB_ERR);
		}
		b->data = d;
		b->cap = cap;
	}
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void pb_buf_puts(struct pb_buf *b, const char *s)
{
	pb_buf_append(b, s, strlen(s));
}

void pb_buf_vprintf(struct pb_buf *b, const char *fmt, va_list ap)
{
	char small[256];
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n >= 0 && (size_t)n < sizeof(small)) {
		pb_buf_append(b, small, n);
	} else if (n >= 0) {
		char *big = malloc(n + 1);
		if (big) {
			vsnprintf(big, n + 1, fmt, again);
			pb_buf_append(b, big, n);
			free(big);
		}
	}
	va_end(again);
}

void pb_buf_printf(struct pb_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pb_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void pb_buf_free(struct pb_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

void pb_buf_mlir_callback(MlirStringRef s, void *user)
{
	pb_buf_append(user, s.data, s.length);
}

char *pb_read_file(const char *path, size_t *len)
{
	FILE *f = (!path || !strcmp(path, "-")) ? stdin : fopen(path, "rb");
	if (!f)
		return NULL;
	struct pb_buf b = {0};
	char chunk[1 << 16];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		pb_buf_append(&b, chunk, n);
	int err = ferror(f);
	if (f != stdin)
		fclose(f);
	if (err) {
		pb_buf_free(&b);
		errno = EIO;
		return NULL;
	}
	pb_buf_append(&b, "", 0);
	*len = b.len;
	return b.data;
}

/* Write "data" of "len" bytes to "path" in place (a device, a pipe, or
 * the end of a symbolic link whose target cannot be resolved). */
static int write_in_place(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	int bad = !f || (len && fwrite(data, 1, len, f) != len);
	if (f && fclose(f) != 0)
		bad = 1;
	return bad ? -1 : 0;
}

/* The temporary file that pb_write_file is writing, removed by
 * unlink_tmp when a signal ends the process meanwhile. */
static char *volatile pending_tmp;

/* Remove "pending_tmp" and end the process by signal "sig" as it would
 * have ended without this handler (async-signal-safe). */
static void unlink_tmp(int sig)
{
	char *tmp = pending_tmp;
	if (tmp)
		unlink(tmp);
	signal(sig, SIG_DFL);
	raise(sig);
}

static const int fatal_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGXFSZ};
#define NFATAL (sizeof(fatal_signals) / sizeof(*fatal_signals))

/* Install unlink_tmp for the signals that end a process and are not
 * ignored ("on"), or put back the actions saved in "old". */
static void guard_tmp(int on, struct sigaction *old)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = unlink_tmp;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NFATAL; i++)
		if (!on)
			sigaction(fatal_signals[i], &old[i], NULL);
		else if (sigaction(fatal_signals[i], NULL, &old[i]) == 0 &&
			 old[i].sa_handler != SIG_IGN)
			sigaction(fatal_signals[i], &sa, NULL);
}

/* Write "data" of "len" bytes to the regular file "path" (existing with
 * mode "mode", or new when "mode" is -1) through a temporary file beside
 * it, renamed over it once complete. */
static int replace_file(const char *path, int mode, const void *data,
			size_t len)
{
	size_t n = strlen(path);
	char *tmp = malloc(n + 16);
	struct sigaction old[NFATAL];
	if (!tmp)
		return -1;
	snprintf(tmp, n + 16, "%s.tmpXXXXXX", path);
	sigset_t block, was;
	sigemptyset(&block);
	for (size_t i = 0; i < NFATAL; i++)
		sigaddset(&block, fatal_signals[i]);
	guard_tmp(1, old);
	/* no signal between creating the file and noting it */
	sigprocmask(SIG_BLOCK, &block, &was);
	int fd = mkstemp(tmp);
	if (fd >= 0)
		pending_tmp = tmp;
	sigprocmask(SIG_SETMASK, &was, NULL);
	if (fd < 0) {
		int e = errno;
		guard_tmp(0, old);
		free(tmp);
		errno = e;
		return -1;
	}
	if (mode < 0) {
		mode_t um = umask(0);
		umask(um);
		mode = 0666 & ~um;
	}
	FILE *f = fdopen(fd, "wb");
	int bad = !f || fchmod(fd, (mode_t)mode) != 0 ||
		  (len && fwrite(data, 1, len, f) != len);
	if (f && fclose(f) != 0)
		bad = 1;
	else if (!f)
		close(fd);
	int e = errno;
	if (bad || rename(tmp, path) != 0) {
		e = errno;
		unlink(tmp);
		bad = 1;
	}
	pending_tmp = NULL;
	guard_tmp(0, old);
	free(tmp);
	errno = e;
	return bad ? -1 : 0;
}

int pb_write_file(const char *path, const void *data, size_t len)
{
	if (!path || !strcmp(path, "-")) {
		if (len && fwrite(data, 1, len, stdout) != len)
			return -1;
		if (fflush(stdout) != 0 || ferror(stdout))
			return -1;
		return 0;
	}
	struct stat st;
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? replace_file(path, -1, data, len) : -1;
	if (!S_ISLNK(st.st_mode))
		return S_ISREG(st.st_mode)
			       ? replace_file(path, st.st_mode & 07777, data, len)
			       : write_in_place(path, data, len);
	/* a symbolic link: write its target, never replace the link */
	char *target = realpath(path, NULL);
	int rc;
	if (target && stat(target, &st) == 0 && S_ISREG(st.st_mode))
		rc = replace_file(target, st.st_mode & 07777, data, len);
	else
		rc = write_in_place(path, data, len);
	free(target);
	return rc;
}

void *pb_xrealloc(void *p, size_t n, size_t size)
{
	void *q = realloc(p, (n ? n : 1) * size);
	if (!q)
		abort();
	return q;
}
