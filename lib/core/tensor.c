/* Host tensors. */
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

int64_t pb_tensor_numel(const struct pb_tensor *t)
{
	int64_t n = 1;
	for (int i = 0; i < t->rank; i++)
		n *= t->dims[i];
	return n;
}

void pb_tensor_clear(struct pb_tensor *t)
{
	free(t->name);
	free(t->data);
	t->name = NULL;
	t->data = NULL;
	t->nbytes = 0;
}
