/* Growable buffers and whole-file I/O. */
#include <errno.h>
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
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* a device or a pipe (-o /dev/null): write in place, never
		 * rename a temporary file over it */
		FILE *f = fopen(path, "wb");
		int bad = !f || (len && fwrite(data, 1, len, f) != len);
		if (f && fclose(f) != 0)
			bad = 1;
		return bad ? -1 : 0;
	}
	size_t n = strlen(path);
	char *tmp = malloc(n + 16);
	if (!tmp)
		return -1;
	snprintf(tmp, n + 16, "%s.tmpXXXXXX", path);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		free(tmp);
		return -1;
	}
	FILE *f = fdopen(fd, "wb");
	int bad = !f || (len && fwrite(data, 1, len, f) != len);
	if (f && fclose(f) != 0)
		bad = 1;
	else if (!f)
		close(fd);
	if (!bad) {

		mode_t um = umask(0);
		umask(um);
		chmod(tmp, 0666 & ~um);
	}
	if (bad || rename(tmp, path) != 0) {
		int e = errno;
		unlink(tmp);
		free(tmp);
		errno = e;
		return -1;
	}
	free(tmp);
	return 0;
}

void *pb_xrealloc(void *p, size_t n, size_t size)
{
	void *q = realloc(p, (n ? n : 1) * size);
	if (!q)
		abort();
	return q;
}
