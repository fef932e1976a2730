/* Host tensors: the in-memory form shared by the .npy reader/writer, the
 * ONNX TensorProto reader, weight loading and the runtimes. */
#ifndef PB_CORE_TENSOR_H
#define PB_CORE_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#define PB_MAX_RANK 16

/* Element types use ONNX's TensorProto.DataType numbering. */
enum pb_dtype {
	PB_DT_UNDEFINED = 0,
	PB_DT_F32 = 1,
	PB_DT_U8 = 2,
	PB_DT_I8 = 3,
	PB_DT_U16 = 4,
	PB_DT_I16 = 5,
	PB_DT_I32 = 6,
	PB_DT_I64 = 7,
	PB_DT_STRING = 8,
	PB_DT_BOOL = 9,
	PB_DT_F16 = 10,
	PB_DT_F64 = 11,
	PB_DT_U32 = 12,
	PB_DT_U64 = 13,
	PB_DT_BF16 = 16,
};

/* A dense, C-ordered, little-endian tensor owning its data (malloc'ed). */
struct pb_tensor {
	char *name; /* may be NULL; malloc'ed */
	enum pb_dtype dtype;
	int rank;
	int64_t dims[PB_MAX_RANK];
	void *data;
	size_t nbytes;
};

/* Bytes per element of "t" (0 for unsupported types such as strings). */
size_t pb_dtype_size(enum pb_dtype t);
/* Name such as "f32", "i64", "bf16" ("?" when unknown). */
const char *pb_dtype_name(enum pb_dtype t);
int64_t pb_tensor_numel(const struct pb_tensor *t);
void pb_tensor_clear(struct pb_tensor *t); /* frees name and data */

#endif
