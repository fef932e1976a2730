/* ONNX TensorProto decoding: test-data .pb files and initializers, with
 * their data inline or in an external file beside the model. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/npy.h"
#include "onnx/internal.h"
#include "onnx/onnx.h"

/* Is "dt" a data type whose typed values live in int32_data? */
static int in_int32_data(enum pb_dtype dt)
{
	switch (dt) {
	case PB_DT_I32: case PB_DT_I16: case PB_DT_I8: case PB_DT_U16:
	case PB_DT_U8: case PB_DT_BOOL: case PB_DT_F16: case PB_DT_BF16:
		return 1;
	default:
		return 0;
	}
}

/* Copy the "n" values of the typed repeated field of "p" that matches
 * "t"->dtype into "t"->data (allocated, count already checked). */
static void copy_typed(const Onnx__TensorProto *p, struct pb_tensor *t,
		       int64_t n)
{
	size_t esz = pb_dtype_size(t->dtype);
	char *d = t->data;
	if (n <= 0)
		return;
	if (t->dtype == PB_DT_F32) {
		memcpy(d, p->float_data, n * esz);
	} else if (t->dtype == PB_DT_F64) {
		memcpy(d, p->double_data, n * esz);
	} else if (t->dtype == PB_DT_I64) {
		memcpy(d, p->int64_data, n * esz);
	} else if (t->dtype == PB_DT_U64) {
		memcpy(d, p->uint64_data, n * esz);
	} else if (t->dtype == PB_DT_U32) {
		for (int64_t i = 0; i < n; i++) {
			uint32_t v = (uint32_t)p->uint64_data[i];
			memcpy(d + i * 4, &v, 4);
		}
	} else if (esz == 4) {
		memcpy(d, p->int32_data, n * esz);
	} else if (esz == 2) {
		for (int64_t i = 0; i < n; i++) {
			uint16_t h = (uint16_t)p->int32_data[i];
			memcpy(d + i * 2, &h, 2);
		}
	} else {
		for (int64_t i = 0; i < n; i++)
			d[i] = (char)(t->dtype == PB_DT_BOOL
					      ? p->int32_data[i] != 0
					      : (uint8_t)p->int32_data[i]);
	}
}

/* The number of values in the typed repeated field of "p" that holds
 * elements of type "dt", or -1 when "dt" has no such field. */
static long typed_count(const Onnx__TensorProto *p, enum pb_dtype dt)
{
	if (dt == PB_DT_F32)
		return p->n_float_data;
	if (dt == PB_DT_F64)
		return p->n_double_data;
	if (dt == PB_DT_I64)
		return p->n_int64_data;
	if (dt == PB_DT_U32 || dt == PB_DT_U64)
		return p->n_uint64_data;
	if (in_int32_data(dt))
		return p->n_int32_data;
	return -1;
}

/* Is any typed value field of "p" non-empty? */
static int has_typed(const Onnx__TensorProto *p)
{
	return p->n_float_data || p->n_int32_data || p->n_int64_data ||
	       p->n_double_data || p->n_uint64_data;
}

/* Is the data of "p" stored in an external file? As in onnxruntime,
 * external_data entries count only with data_location EXTERNAL. */
static int is_external(const Onnx__TensorProto *p)
{
	return p->has_data_location &&
	       p->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
}

/* Parse the decimal "value" of external_data key "key" into "*out";
 * PB_ERR (reported against "where") when it is not a non-negative
 * number. */
static int parse_offset(struct pb_ctx *ctx, const char *where,
			const char *key, const char *value, int64_t *out)
{
	int64_t v = 0;
	if (!*value)
		return pb_error_in(ctx, where, "external data %s is empty", key);
	for (const char *c = value; *c; c++) {
		if (*c < '0' || *c > '9' || v > (INT64_MAX - (*c - '0')) / 10)
			return pb_error_in(ctx, where, "external data %s '%s' "
					   "is not a byte count", key, value);
		v = v * 10 + (*c - '0');
	}
	*out = v;
	return PB_OK;
}

/* Does "loc" name a file below its base directory by its spelling: not
 * absolute and without ".." components? */
static int is_relative_below(const char *loc)
{
	if (loc[0] == '/')
		return 0;
	for (const char *c = loc; *c;) {
		size_t n = strcspn(c, "/");
		if (n == 2 && c[0] == '.' && c[1] == '.')
			return 0;
		c += n;
		c += *c == '/';
	}
	return 1;
}

/* The external data reference of a tensor: where its bytes lie. */
struct external {
	const char *location;
	int64_t offset;
	int64_t length; /* -1: to the end of the file */
};

/* Read the external_data entries of "p" into "e"; errors name "where". */
static int external_keys(struct pb_ctx *ctx, const char *where,
			 const Onnx__TensorProto *p, struct external *e)
{
	e->location = NULL;
	e->offset = 0;
	e->length = -1;
	for (size_t i = 0; i < p->n_external_data; i++) {
		const char *k = p->external_data[i]->key;
		const char *v = p->external_data[i]->value;
		if (!k || !v)
			return pb_error_in(ctx, where, "external data entry %zu "
					   "has no key or value", i);
		if (!strcmp(k, "location"))
			e->location = v;
		else if (!strcmp(k, "offset")) {
			if (parse_offset(ctx, where, k, v, &e->offset))
				return PB_ERR;
		} else if (!strcmp(k, "length")) {
			if (parse_offset(ctx, where, k, v, &e->length))
				return PB_ERR;
		} else if (strcmp(k, "checksum"))
			return pb_error_in(ctx, where, "unknown external data "
					   "key '%s'", k);
	}
	if (!e->location || !*e->location)
		return pb_error_in(ctx, where, "external data has no location");
	return PB_OK;
}

/* Open the file at "location" relative to the directory of the model
 * "model" for reading; -1 after reporting against "where". The location
 * must stay inside that directory: not absolute, no "..", and no
 * symbolic link leading out of it (checked on the resolved paths). */
static int open_below(struct pb_ctx *ctx, const char *where,
		      const char *model, const char *location)
{
	if (!is_relative_below(location)) {
		pb_error_in(ctx, where, "external data location '%s' must be a "
			    "path relative to the model's directory, without "
			    "'..'", location);
		return -1;
	}
	struct pb_buf path = {0};
	const char *slash = strrchr(model, '/');
	if (slash)
		pb_buf_append(&path, model, (size_t)(slash - model));
	else
		pb_buf_puts(&path, ".");
	char dir[PATH_MAX], file[PATH_MAX];
	int ok = realpath(path.data, dir) != NULL;
	pb_buf_printf(&path, "/%s", location);
	if (ok && !realpath(path.data, file)) {
		pb_error_in(ctx, where, "cannot read external data file '%s': "
			    "%s", location, strerror(errno));
		pb_buf_free(&path);
		return -1;
	}
	pb_buf_free(&path);
	size_t n = strlen(dir);
	if (!ok || strncmp(file, dir, n) || (file[n] != '/' && n > 1)) {
		pb_error_in(ctx, where, "external data location '%s' leads out "
			    "of the model's directory", location);
		return -1;
	}
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		pb_error_in(ctx, where, "cannot read external data file '%s': "
			    "%s", location, strerror(errno));
	return fd;
}

/* Open the external data of "p" ("nbytes" bytes by its shape and type),
 * located relative to the model "model" (NULL: the model came from
 * stdin), and check the reference against the file: a regular file
 * holding "offset" + "length" bytes, "length" being "nbytes". Returns the
 * descriptor and sets "*offset", or -1 after reporting against "where". */
static int external_open(struct pb_ctx *ctx, const char *where,
			 const char *model, const Onnx__TensorProto *p,
			 size_t nbytes, int64_t *offset)
{
	struct external e;
	struct stat st;
	if (external_keys(ctx, where, p, &e))
		return -1;
	if (!model) {
		pb_error_in(ctx, where, "the model is read from stdin, so its "
			    "external data '%s' cannot be located: name the "
			    "file", e.location);
		return -1;
	}
	int fd = open_below(ctx, where, model, e.location);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		pb_error_in(ctx, where, "external data file '%s' is not a "
			    "regular file", e.location);
		close(fd);
		return -1;
	}
	int64_t size = st.st_size;
	int64_t length = e.length >= 0 ? e.length : size - e.offset;
	if (e.offset > size || length > size - e.offset) {
		pb_error_in(ctx, where, "external data (offset %lld, length "
			    "%lld) lies past the end of '%s' (%lld bytes)",
			    (long long)e.offset, (long long)length, e.location,
			    (long long)size);
		close(fd);
		return -1;
	}
	if ((uint64_t)length != nbytes) {
		pb_error_in(ctx, where, "external data holds %lld bytes, shape "
			    "and type need %zu", (long long)length, nbytes);
		close(fd);
		return -1;
	}
	*offset = e.offset;
	return fd;
}

/* Read the "n" bytes at "offset" of "fd" into "dst"; errors name
 * "where". */
static int read_at(struct pb_ctx *ctx, const char *where, int fd,
		   int64_t offset, void *dst, size_t n)
{
	char *d = dst;
	while (n) {
		ssize_t r = pread(fd, d, n, (off_t)offset);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return pb_error_in(ctx, where, "cannot read external "
					   "data: %s", r ? strerror(errno)
							 : "file truncated");
		d += r;
		n -= (size_t)r;
		offset += r;
	}
	return PB_OK;
}

/* The shape, element type and size of "p" into "t" (no data); errors
 * name "where". */
static int tensor_header(struct pb_ctx *ctx, const char *where,
			 const Onnx__TensorProto *p, struct pb_tensor *t)
{
	memset(t, 0, sizeof(*t));
	enum pb_dtype dt = p->has_data_type ? (enum pb_dtype)p->data_type
					    : PB_DT_UNDEFINED;
	if (dt == PB_DT_STRING)
		return pb_error_in(ctx, where, "string tensors are not "
				   "supported");
	size_t esz = pb_dtype_size(dt);
	if (!esz)
		return pb_error_in(ctx, where, "tensor data type %d is not "
				   "supported", (int)dt);
	if (p->segment)
		return pb_error_in(ctx, where, "segmented tensors are not "
				   "supported");
	if (p->n_dims > PB_MAX_RANK)
		return pb_error_in(ctx, where, "tensor rank %zu exceeds %d",
				   p->n_dims, PB_MAX_RANK);
	int64_t n = 1;
	for (size_t i = 0; i < p->n_dims; i++) {
		if (p->dims[i] < 0 || (p->dims[i] && n > INT64_MAX / p->dims[i]))
			return pb_error_in(ctx, where, "bad tensor dimension "
					   "%lld", (long long)p->dims[i]);
		n *= p->dims[i];
		t->dims[i] = p->dims[i];
	}
	t->rank = (int)p->n_dims;
	t->dtype = dt;
	t->nbytes = (size_t)n * esz;
	return PB_OK;
}

/* Check the external data reference of "p" (if it has one), located
 * relative to the model "model", without reading the data: the
 * importer's check of an initializer it leaves to pb-run. Errors name
 * "where". */
int pb_onnx_external_check(struct pb_ctx *ctx, const char *where,
			   const char *model, const Onnx__TensorProto *p)
{
	struct pb_tensor t;
	int64_t offset;
	if (!is_external(p))
		return PB_OK;
	if (tensor_header(ctx, where, p, &t))
		return PB_ERR;
	int fd = external_open(ctx, where, model, p, t.nbytes, &offset);
	if (fd < 0)
		return PB_ERR;
	close(fd);
	return PB_OK;
}

/* Fill the allocated "t"->data from the data of "p": raw_data, the
 * external file open as "fd" at "offset" (checked by external_open), or
 * the typed repeated field. Errors name "where". */
static int fill_data(struct pb_ctx *ctx, const char *where, int fd,
		     int64_t offset, const Onnx__TensorProto *p,
		     struct pb_tensor *t)
{
	if (is_external(p))
		return read_at(ctx, where, fd, offset, t->data, t->nbytes);
	if (p->has_raw_data && (p->raw_data.len || !has_typed(p))) {
		if (t->nbytes)
			memcpy(t->data, p->raw_data.data, t->nbytes);
		return PB_OK;
	}
	copy_typed(p, t, (int64_t)(t->nbytes / pb_dtype_size(t->dtype)));
	return PB_OK;
}

/* Decode TensorProto "p" into "t": shape, element type and data from
 * raw_data, from the typed repeated fields, or from an external file
 * named relative to the directory of the model "model" (NULL: the model
 * came from stdin). String tensors and segments are rejected. "where"
 * names the source in errors. */
int pb_onnx_tensor_from_proto(struct pb_ctx *ctx, const char *where,
			      const char *model, const Onnx__TensorProto *p,
			      struct pb_tensor *t)
{
	if (tensor_header(ctx, where, p, t))
		return PB_ERR;
	int64_t n = (int64_t)(t->nbytes / pb_dtype_size(t->dtype));
	int raw = !is_external(p) && p->has_raw_data &&
		  (p->raw_data.len || !has_typed(p));
	long avail = raw || is_external(p) ? -2 : typed_count(p, t->dtype);
	if (raw && p->raw_data.len != t->nbytes)
		return pb_error_in(ctx, where, "raw_data holds %zu bytes, "
				   "shape and type need %zu",
				   p->raw_data.len, t->nbytes);
	if (avail != -2 && avail != n) {
		if (avail < 0)
			return pb_error_in(ctx, where, "no data for %s tensor",
					   pb_dtype_name(t->dtype));
		return pb_error_in(ctx, where, "tensor holds %ld values, its "
				   "shape needs %lld", avail, (long long)n);
	}
	/* external data is checked (file, offset, length) before the
	   tensor's memory is allocated */
	int64_t offset = 0;
	int fd = is_external(p) ? external_open(ctx, where, model, p,
						t->nbytes, &offset)
				: -1;
	if (is_external(p) && fd < 0)
		return PB_ERR;
	t->data = malloc(t->nbytes ? t->nbytes : 1);
	if (p->name && *p->name)
		t->name = strdup(p->name);
	int rc = t->data ? fill_data(ctx, where, fd, offset, p, t)
			 : pb_error_in(ctx, where, "out of memory");
	if (fd >= 0)
		close(fd);
	if (rc != PB_OK) {
		pb_tensor_clear(t);
		return PB_ERR;
	}
	if (t->dtype == PB_DT_BOOL && avail == -2)
		for (size_t i = 0; i < t->nbytes; i++)
			((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
	return PB_OK;
}

/* Read the serialized TensorProto in file "path" into "t". */
int pb_onnx_read_tensor_file(struct pb_ctx *ctx, const char *path,
			     struct pb_tensor *t)
{
	size_t len;
	char *data = pb_read_regular(ctx, path, &len);
	memset(t, 0, sizeof(*t));
	if (!data)
		return PB_ERR;
	Onnx__TensorProto *p = onnx__tensor_proto__unpack(
		NULL, len, (const uint8_t *)data);
	free(data);
	if (!p) {
		pb_error_in(ctx, path, "cannot parse ONNX tensor");
		return PB_ERR;
	}
	int rc = pb_onnx_tensor_from_proto(ctx, path, path, p, t);
	onnx__tensor_proto__free_unpacked(p, NULL);
	return rc;
}
