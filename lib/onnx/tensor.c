/* ONNX TensorProto decoding: test-data .pb files and initializers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* Decode TensorProto "p" into "t": shape, element type and data from
 * raw_data or from the typed repeated fields. String tensors, external
 * data and segments are rejected. "where" names the source in errors. */
int pb_onnx_tensor_from_proto(struct pb_ctx *ctx, const char *where,
			      const Onnx__TensorProto *p, struct pb_tensor *t)
{
	memset(t, 0, sizeof(*t));
	enum pb_dtype dt = p->has_data_type ? (enum pb_dtype)p->data_type
					    : PB_DT_UNDEFINED;
	if (dt == PB_DT_STRING) {
		pb_error_in(ctx, where, "string tensors are not supported");
		return PB_ERR;
	}
	size_t esz = pb_dtype_size(dt);
	if (!esz) {
		pb_error_in(ctx, where, "tensor data type %d is not supported",
			      (int)dt);
		return PB_ERR;
	}
	if (p->n_external_data ||
	    (p->has_data_location &&
	     p->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)) {
		pb_error_in(ctx, where,
			      "tensor data stored externally is not supported");
		return PB_ERR;
	}
	if (p->segment) {
		pb_error_in(ctx, where, "segmented tensors are not supported");
		return PB_ERR;
	}
	if (p->n_dims > PB_MAX_RANK) {
		pb_error_in(ctx, where, "tensor rank %zu exceeds %d",
			      p->n_dims, PB_MAX_RANK);
		return PB_ERR;
	}
	int64_t n = 1;
	for (size_t i = 0; i < p->n_dims; i++) {
		if (p->dims[i] < 0 || (p->dims[i] && n > INT64_MAX / p->dims[i])) {
			pb_error_in(ctx, where, "bad tensor dimension %lld",
				      (long long)p->dims[i]);
			return PB_ERR;
		}
		n *= p->dims[i];
		t->dims[i] = p->dims[i];
	}
	t->rank = (int)p->n_dims;
	t->dtype = dt;
	t->nbytes = (size_t)n * esz;
	int raw = p->has_raw_data && (p->raw_data.len || !has_typed(p));
	long avail = raw ? -2 : typed_count(p, dt);
	if (raw && p->raw_data.len != t->nbytes) {
		pb_error_in(ctx, where,
			      "raw_data holds %zu bytes, shape and type need %zu",
			      p->raw_data.len, t->nbytes);
		return PB_ERR;
	}
	if (!raw && avail != n) {
		if (avail < 0)
			pb_error_in(ctx, where, "no data for %s tensor",
				      pb_dtype_name(dt));
		else
			pb_error_in(ctx, where,
				      "tensor holds %ld values, its shape needs "
				      "%lld",
				      avail, (long long)n);
		return PB_ERR;
	}
	t->data = malloc(t->nbytes ? t->nbytes : 1);
	if (p->name && *p->name)
		t->name = strdup(p->name);
	if (!t->data) {
		pb_tensor_clear(t);
		pb_error_in(ctx, where, "out of memory");
		return PB_ERR;
	}
	if (raw) {
		if (t->nbytes)
			memcpy(t->data, p->raw_data.data, t->nbytes);
		if (dt == PB_DT_BOOL)
			for (size_t i = 0; i < t->nbytes; i++)
				((uint8_t *)t->data)[i] =
					((uint8_t *)t->data)[i] != 0;
		return PB_OK;
	}
	copy_typed(p, t, n);
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
	int rc = pb_onnx_tensor_from_proto(ctx, path, p, t);
	onnx__tensor_proto__free_unpacked(p, NULL);
	return rc;
}
