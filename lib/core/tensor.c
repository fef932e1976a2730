/* Host tensors. */
#include <stdio.h>
#include <stdlib.h>

#include "core/tensor.h"

size_t pb_dtype_size(enum pb_dtype t)
{
	switch (t) {
	case PB_DT_U8: case PB_DT_I8: case PB_DT_BOOL:
		return 1;
	case PB_DT_U16: case PB_DT_I16: case PB_DT_F16: case PB_DT_BF16:
		return 2;
	case PB_DT_F32: case PB_DT_I32: case PB_DT_U32:
		return 4;
	case PB_DT_I64: case PB_DT_F64: case PB_DT_U64:
		return 8;
	default:
		return 0;
	}
}

const char *pb_dtype_name(enum pb_dtype t)
{
	switch (t) {
	case PB_DT_F32: return "f32";
	case PB_DT_U8: return "u8";
	case PB_DT_I8: return "i8";
	case PB_DT_U16: return "u16";
	case PB_DT_I16: return "i16";
	case PB_DT_I32: return "i32";
	case PB_DT_I64: return "i64";
	case PB_DT_BOOL: return "bool";
	case PB_DT_F16: return "f16";
	case PB_DT_F64: return "f64";
	case PB_DT_U32: return "u32";
	case PB_DT_U64: return "u64";
	case PB_DT_BF16: return "bf16";
	default: return "?";
	}
}

int64_t pb_numel(int rank, const int64_t *dims)
{
	int64_t n = 1;
	for (int i = 0; i < rank; i++)
		if (dims[i] < 0 || __builtin_mul_overflow(n, dims[i], &n))
			return -1;
	return n;
}

int64_t pb_nbytes(enum pb_dtype dt, int rank, const int64_t *dims)
{
	int64_t n = pb_numel(rank, dims), size = (int64_t)pb_dtype_size(dt);
	if (n < 0 || !size || __builtin_mul_overflow(n, size, &n))
		return -1;
	return n;
}

int pb_tensor_size_ok(size_t esize, int rank, const int64_t *dims,
		      int64_t *bytes, char *why, size_t n)
{
	int64_t b = pb_numel(rank, dims);
	if (b < 0 || __builtin_mul_overflow(b, (int64_t)esize, &b)) {
		snprintf(why, n, "its size in bytes overflows 2^63");
		return -1;
	}
	if (b > PB_MAX_BYTES) {
		snprintf(why, n, "%lld bytes, the limit is 2^47", (long long)b);
		return -1;
	}
	if (bytes)
		*bytes = b;
	return 0;
}

int64_t pb_tensor_numel(const struct pb_tensor *t)
{
	return pb_numel(t->rank, t->dims);
}

void pb_tensor_clear(struct pb_tensor *t)
{
	free(t->name);
	free(t->data);
	t->name = NULL;
	t->data = NULL;
	t->nbytes = 0;
}
