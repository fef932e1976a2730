/* NumPy .npy reading and writing, after NumPy's format specification
 * (numpy/lib/format.py): the magic "\x93NUMPY", a major and a minor version
 * byte, a little-endian header length (2 bytes in 1.0, 4 bytes in 2.0 and
 * 3.0), then a Python dict literal with the keys 'descr', 'fortran_order'
 * and 'shape', padded with spaces and a newline so that the data starts at
 * a multiple of 64 bytes. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/npy.h"

static const char magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* The dtype table: NumPy kind and size for each pb dtype we can store. */
static const struct {
	enum pb_dtype dt;
	char kind;
	int size;
} types[] = {
	{PB_DT_F32, 'f', 4}, {PB_DT_F64, 'f', 8}, {PB_DT_F16, 'f', 2},
	{PB_DT_I8, 'i', 1},  {PB_DT_I16, 'i', 2}, {PB_DT_I32, 'i', 4},
	{PB_DT_I64, 'i', 8}, {PB_DT_U8, 'u', 1},  {PB_DT_U16, 'u', 2},
	{PB_DT_U32, 'u', 4}, {PB_DT_U64, 'u', 8}, {PB_DT_BOOL, 'b', 1},
};

/* A cursor over the header text, with the error buffer. */
struct hdr {
	const char *p, *end;
	char *err;
	size_t errlen;
};

/* Format "fmt" into "err" (of size "errlen") and return -1. */
static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Move "h" past white space. */
static void skip_ws(struct hdr *h)
{
	while (h->p < h->end &&
	       (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
		h->p++;
}

/* Consume the character "c" (after white space) or fail naming "what". */
static int expect(struct hdr *h, char c, const char *what)
{
	skip_ws(h);
	if (h->p >= h->end || *h->p != c)
		return fail(h->err, h->errlen,
			    "malformed header: expected '%c' %s", c, what);
	h->p++;
	return 0;
}

/* Parse a Python string literal (single or double quoted, no escapes)
 * into "buf" of size "n". */
static int parse_string(struct hdr *h, char *buf, size_t n)
{
	skip_ws(h);
	if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
		return fail(h->err, h->errlen,
			    "malformed header: expected a string");
	char q = *h->p++;
	const char *s = h->p;
	while (h->p < h->end && *h->p != q && *h->p != '\\')
		h->p++;
	if (h->p >= h->end || *h->p != q)
		return fail(h->err, h->errlen,
			    "malformed header: unterminated string");
	size_t len = h->p - s;
	h->p++;
	if (len >= n)
		return fail(h->err, h->errlen,
			    "malformed header: string '%.*s' too long",
			    (int)(len > 32 ? 32 : len), s);
	memcpy(buf, s, len);
	buf[len] = '\0';
	return 0;
}

/* Parse True or False into "*v". */
static int parse_bool(struct hdr *h, int *v)
{
	skip_ws(h);
	size_t left = h->end - h->p;
	if (left >= 4 && !strncmp(h->p, "True", 4)) {
		h->p += 4;
		*v = 1;
		return 0;
	}
	if (left >= 5 && !strncmp(h->p, "False", 5)) {
		h->p += 5;
		*v = 0;
		return 0;
	}
	return fail(h->err, h->errlen,
		    "malformed header: 'fortran_order' must be True or False");
}

/* Parse a shape tuple "()", "(3,)", "(2, 3)" into "t"'s rank and dims. */
static int parse_shape(struct hdr *h, struct pb_tensor *t)
{
	if (expect(h, '(', "to open 'shape'") < 0)
		return -1;
	t->rank = 0;
	for (;;) {
		skip_ws(h);
		if (h->p < h->end && *h->p == ')') {
			h->p++;
			return 0;
		}
		if (h->p >= h->end || *h->p < '0' || *h->p > '9')
			return fail(h->err, h->errlen, "malformed header: "
				    "'shape' must be a tuple of non-negative "
				    "integers");
		int64_t v = 0;
		while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
			if (v > (INT64_MAX - 9) / 10)
				return fail(h->err, h->errlen, "malformed "
					    "header: dimension too large");
			v = v * 10 + (*h->p++ - '0');
		}
		if (h->p < h->end && *h->p == 'L') /* Python 2 long */
			h->p++;
		if (t->rank >= PB_MAX_RANK)
			return fail(h->err, h->errlen, "rank above %d is not "
				    "supported", PB_MAX_RANK);
		t->dims[t->rank++] = v;
		skip_ws(h);
		if (h->p < h->end && *h->p == ',') {
			h->p++;
			continue;
		}
		if (h->p < h->end && *h->p == ')') {
			if (t->rank == 1)
				return fail(h->err, h->errlen, "malformed "
					    "header: one-element shape needs a "
					    "trailing comma");
			h->p++;
			return 0;
		}
		return fail(h->err, h->errlen,
			    "malformed header: expected ',' or ')' in 'shape'");
	}
}

/* Map the NumPy type string "descr" to "*dt". */
static int parse_descr(const char *descr, enum pb_dtype *dt, char *err,
		       size_t errlen)
{
	char order = descr[0];
	if (order != '<' && order != '>' && order != '|' && order != '=')
		return fail(err, errlen, "unsupported dtype '%s'", descr);
	char kind = descr[1];
	if (kind == 'O')
		return fail(err, errlen, "object arrays are not supported");
	char *end;
	errno = 0;
	long size = descr[1] ? strtol(descr + 2, &end, 10) : 0;
	if (!descr[1] || errno || end == descr + 2 || *end)
		return fail(err, errlen, "unsupported dtype '%s'", descr);
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (types[i].kind != kind || types[i].size != size)
			continue;
		if (order == '>' && size > 1)
			return fail(err, errlen, "big-endian data ('%s') is "
				    "not supported", descr);
		*dt = types[i].dt;
		return 0;
	}
	return fail(err, errlen, "unsupported dtype '%s'", descr);
}

/* Parse the header dict "s" of "len" bytes into "t" (dtype and shape). */
static int parse_header(const char *s, size_t len, struct pb_tensor *t,
			char *err, size_t errlen)
{
	struct hdr h = {s, s + len, err, errlen};
	int have_descr = 0, have_order = 0, have_shape = 0, fortran = 0;
	char key[32], descr[32];
	if (expect(&h, '{', "at the start of the header") < 0)
		return -1;
	for (;;) {
		skip_ws(&h);
		if (h.p < h.end && *h.p == '}') {
			h.p++;
			break;
		}
		if (parse_string(&h, key, sizeof(key)) < 0 ||
		    expect(&h, ':', "after a key") < 0)
			return -1;
		if (!strcmp(key, "descr")) {
			skip_ws(&h);
			if (h.p < h.end && *h.p == '[')
				return fail(err, errlen, "structured dtypes "
					    "are not supported");
			if (parse_string(&h, descr, sizeof(descr)) < 0 ||
			    parse_descr(descr, &t->dtype, err, errlen) < 0)
				return -1;
			have_descr = 1;
		} else if (!strcmp(key, "fortran_order")) {
			if (parse_bool(&h, &fortran) < 0)
				return -1;
			have_order = 1;
		} else if (!strcmp(key, "shape")) {
			if (parse_shape(&h, t) < 0)
				return -1;
			have_shape = 1;
		} else {
			return fail(err, errlen, "malformed header: unexpected "
				    "key '%s'", key);
		}
		skip_ws(&h);
		if (h.p < h.end && *h.p == ',') {
			h.p++;
			continue;
		}
		if (expect(&h, '}', "to close the header") < 0)
			return -1;
		break;
	}
	skip_ws(&h);
	if (h.p != h.end)
		return fail(err, errlen, "malformed header: text after the dict");
	if (!have_descr || !have_order || !have_shape)
		return fail(err, errlen, "malformed header: missing key '%s'",
			    !have_descr ? "descr" :
			    !have_order ? "fortran_order" : "shape");
	if (fortran)
		return fail(err, errlen, "fortran_order arrays are not "
			    "supported (save a C-ordered array)");
	return 0;
}

int pb_npy_decode(const void *data, size_t len, struct pb_tensor *t,
		  char *err, size_t errlen)
{
	const unsigned char *d = data;
	t->data = NULL;
	t->nbytes = 0;
	if (len < 10 || memcmp(d, magic, sizeof(magic)))
		return fail(err, errlen, "not a .npy file (bad magic)");
	int major = d[6];
	size_t hlen, off;
	if (major == 1) {
		hlen = d[8] | (size_t)d[9] << 8;
		off = 10;
	} else if (major == 2 || major == 3) {
		if (len < 12)
			return fail(err, errlen, "truncated header");
		hlen = d[8] | (size_t)d[9] << 8 | (size_t)d[10] << 16 |
		       (size_t)d[11] << 24;
		off = 12;
	} else {
		return fail(err, errlen, "unsupported .npy format version "
			    "%d.%d", major, d[7]);
	}
	if (hlen > len - off)
		return fail(err, errlen, "truncated header");
	if (parse_header((const char *)d + off, hlen, t, err, errlen) < 0)
		return -1;
	size_t esize = pb_dtype_size(t->dtype);
	size_t n = esize;
	for (int i = 0; i < t->rank; i++) {
		if (t->dims[i] && n > SIZE_MAX / (size_t)t->dims[i])
			return fail(err, errlen, "array too large");
		n *= (size_t)t->dims[i];
	}
	off += hlen;
	if (n > len - off)
		return fail(err, errlen, "truncated data: %zu bytes for "
			    "%zu expected", len - off, n);
	t->data = malloc(n ? n : 1);
	if (!t->data)
		return fail(err, errlen, "out of memory");
	memcpy(t->data, d + off, n);
	t->nbytes = n;
	return 0;
}

const char *pb_npy_descr(enum pb_dtype dt)
{
	switch (dt) {
	case PB_DT_F32: return "<f4";
	case PB_DT_F64: return "<f8";
	case PB_DT_F16: return "<f2";
	case PB_DT_I8: return "|i1";
	case PB_DT_I16: return "<i2";
	case PB_DT_I32: return "<i4";
	case PB_DT_I64: return "<i8";
	case PB_DT_U8: return "|u1";
	case PB_DT_U16: return "<u2";
	case PB_DT_U32: return "<u4";
	case PB_DT_U64: return "<u8";
	case PB_DT_BOOL: return "|b1";
	default: return NULL;
	}
}

int pb_npy_encode(const struct pb_tensor *t, struct pb_buf *out, char *err,
		  size_t errlen)
{
	const char *descr = pb_npy_descr(t->dtype);
	if (!descr)
		return fail(err, errlen, "dtype %s has no .npy equivalent",
			    pb_dtype_name(t->dtype));
	struct pb_buf h = {0};
	pb_buf_printf(&h, "{'descr': '%s', 'fortran_order': False, 'shape': (",
		      descr);
	for (int i = 0; i < t->rank; i++)
		pb_buf_printf(&h, "%s%lld", i ? ", " : "",
			      (long long)t->dims[i]);
	pb_buf_puts(&h, t->rank == 1 ? ",), }" : "), }");
	int v2 = h.len + 11 > 65535;
	size_t pre = v2 ? 12 : 10;
	while ((pre + h.len + 1) % 64)
		pb_buf_append(&h, " ", 1);
	pb_buf_append(&h, "\n", 1);
	unsigned char m[12];
	memcpy(m, magic, sizeof(magic));
	m[6] = v2 ? 2 : 1;
	m[7] = 0;
	for (size_t i = 0; i < pre - 8; i++)
		m[8 + i] = (unsigned char)(h.len >> (8 * i));
	pb_buf_append(out, m, pre);
	pb_buf_append(out, h.data, h.len);
	pb_buf_append(out, t->data, t->nbytes);
	pb_buf_free(&h);
	return 0;
}

char *pb_read_regular(struct pb_ctx *ctx, const char *path, size_t *len)
{
	struct stat st;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		pb_error_in(ctx, path, "cannot read: %s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
	    (uintmax_t)st.st_size >= SIZE_MAX) {
		close(fd);
		pb_error_in(ctx, path, "not a regular file");
		return NULL;
	}
	size_t n = (size_t)st.st_size, got = 0;
	char *data = malloc(n + 1);
	if (!data) {
		close(fd);
		pb_error_in(ctx, path, "out of memory reading %zu bytes", n);
		return NULL;
	}
	while (got < n) {
		ssize_t r = read(fd, data + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			pb_error_in(ctx, path, "cannot read: %s", strerror(errno));
			free(data);
			close(fd);
			return NULL;
		}
		if (!r)
			break;
		got += (size_t)r;
	}
	close(fd);
	data[got] = 0;
	*len = got;
	return data;
}

int pb_npy_read(struct pb_ctx *ctx, const char *path, struct pb_tensor *t)
{
	size_t len;
	char err[256];
	char *data = pb_read_regular(ctx, path, &len);
	if (!data)
		return PB_ERR;
	int rc = pb_npy_decode(data, len, t, err, sizeof(err));
	free(data);
	if (rc < 0)
		return pb_error_in(ctx, path, "%s", err);
	return PB_OK;
}

int pb_npy_write(struct pb_ctx *ctx, const char *path,
		 const struct pb_tensor *t)
{
	struct pb_buf b = {0};
	char err[256];
	if (pb_npy_encode(t, &b, err, sizeof(err)) < 0) {
		pb_buf_free(&b);
		return pb_error_in(ctx, path, "%s", err);
	}
	int rc = pb_write_file(path, b.data, b.len);
	pb_buf_free(&b);
	if (rc < 0)
		return pb_error_in(ctx, path, "cannot write: %s", strerror(errno));
	return PB_OK;
}
