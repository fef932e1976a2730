/* Host tensors: the in-memory form shared by the .npy reader/writer, the
 * ONNX TensorProto reader, weight loading and the runtimes. */
#ifndef PB_CORE_TENSOR_H
#define PB_CORE_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#define PB_MAX_RANK 16

/* The largest tensor pb accepts, in bytes: 2^47 (128 TiB), more than any
 * address space in use can map, and small enough that every element
 * count, byte size and offset below it fits an int64 with room to spare. */
#define PB_MAX_BYTES ((int64_t)1 << 47)

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
/* The number of elements of a tensor of rank "rank" with dims "dims", or
 * -1 when a dim is negative or the product overflows int64. */
int64_t pb_numel(int rank, const int64_t *dims);
/* The size in bytes of such a tensor of element type "dt", or -1 when a
 * dim is negative, the type has no size or the size overflows int64. */
int64_t pb_nbytes(enum pb_dtype dt, int rank, const int64_t *dims);
/* Does a tensor of rank "rank" and dims "dims" whose elements take
 * "esize" bytes fit in PB_MAX_BYTES? Its size in bytes into "*bytes"
 * (when not NULL) and 0, or -1 with the reason, such as "4398046511104
 * bytes, the limit is 2^47", into "why" of size "n". */
int pb_tensor_size_ok(size_t esize, int rank, const int64_t *dims,
		      int64_t *bytes, char *why, size_t n);
/* pb_numel of "t"'s dims. */
int64_t pb_tensor_numel(const struct pb_tensor *t);
void pb_tensor_clear(struct pb_tensor *t); /* frees name and data */

/* IEEE half (f16) and bfloat16 bits from float and back; both roundings
 * are to nearest even (NaN stays NaN, overflow becomes infinity). */
uint16_t pb_f16_from_float(float x);
float pb_f16_to_float(uint16_t h);
uint16_t pb_bf16_from_float(float x);
float pb_bf16_to_float(uint16_t h);
/* Is "dt" one of the 16-bit float types (f16, bf16)? */
int pb_dtype_is_half(enum pb_dtype dt);
/* Convert the float (f32, f64, f16, bf16) tensor "t" in place to the
 * float type "dt" (rounding to nearest even). Returns 0, or -1 when a
 * type is not a float type or memory runs out ("t" unchanged). */
int pb_tensor_convert(struct pb_tensor *t, enum pb_dtype dt);
/* Transpose "t" in place by "perm" (its rank entries, a permutation):
 * dimension i of the result is dimension perm[i] of "t", as NumPy's
 * transpose. Returns 0, or -1 when memory runs out ("t" unchanged). */
int pb_tensor_transpose(struct pb_tensor *t, const int *perm);

#endif
