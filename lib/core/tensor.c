/* Host tensors. */
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
	case PB_DT_STRING: return "string";
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

uint16_t pb_f16_from_float(float x)
{
	uint32_t f, man, sign, h, rem, half;
	memcpy(&f, &x, 4);
	sign = f >> 16 & 0x8000;
	man = f & 0x7fffff;
	int exp = (int)(f >> 23 & 0xff) - 127 + 15;
	if ((f >> 23 & 0xff) == 0xff) /* inf, nan */
		return sign | 0x7c00 | (man ? 0x200 : 0);
	if (exp >= 31)
		return sign | 0x7c00;
	if (exp <= 0) { /* a subnormal half, or zero */
		if (exp < -10)
			return sign;
		man |= 0x800000;
		int shift = 14 - exp;
		h = man >> shift;
		rem = man & ((1u << shift) - 1);
		half = 1u << (shift - 1);
	} else {
		h = (uint32_t)exp << 10 | man >> 13;
		rem = man & 0x1fff;
		half = 0x1000;
	}
	if (rem > half || (rem == half && (h & 1)))
		h++; /* a carry into the exponent is still right */
	return (uint16_t)(sign | h);
}

float pb_f16_to_float(uint16_t h)
{
	int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
	float v;
	if (e == 0)
		v = ldexpf((float)m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexpf((float)(m | 1024), e - 25);
	return s ? -v : v;
}

uint16_t pb_bf16_from_float(float x)
{
	uint32_t f;
	memcpy(&f, &x, 4);
	if ((f & 0x7fffffff) > 0x7f800000) /* nan: keep it quiet */
		return (uint16_t)(f >> 16 | 0x40);
	return (uint16_t)((f + 0x7fff + (f >> 16 & 1)) >> 16);
}

float pb_bf16_to_float(uint16_t h)
{
	uint32_t f = (uint32_t)h << 16;
	float x;
	memcpy(&x, &f, 4);
	return x;
}

int pb_dtype_is_half(enum pb_dtype dt)
{
	return dt == PB_DT_F16 || dt == PB_DT_BF16;
}

/* Element "i" of float data "p" of type "dt" as a double. */
static double get_float(const void *p, enum pb_dtype dt, int64_t i)
{
	switch (dt) {
	case PB_DT_F32: return ((const float *)p)[i];
	case PB_DT_F64: return ((const double *)p)[i];
	case PB_DT_F16: return pb_f16_to_float(((const uint16_t *)p)[i]);
	default: return pb_bf16_to_float(((const uint16_t *)p)[i]);
	}
}

int pb_tensor_convert(struct pb_tensor *t, enum pb_dtype dt)
{
	int from_ok = t->dtype == PB_DT_F32 || t->dtype == PB_DT_F64 ||
		      pb_dtype_is_half(t->dtype);
	int to_ok = dt == PB_DT_F32 || dt == PB_DT_F64 || pb_dtype_is_half(dt);
	if (!from_ok || !to_ok)
		return -1;
	if (t->dtype == dt)
		return 0;
	int64_t n = pb_tensor_numel(t);
	size_t nb = (size_t)n * pb_dtype_size(dt);
	char *d = malloc(nb ? nb : 1);
	if (!d)
		return -1;
	for (int64_t i = 0; i < n; i++) {
		double x = get_float(t->data, t->dtype, i);
		switch (dt) {
		case PB_DT_F32: ((float *)d)[i] = (float)x; break;
		case PB_DT_F64: ((double *)d)[i] = x; break;
		case PB_DT_F16:
			((uint16_t *)d)[i] = pb_f16_from_float((float)x);
			break;
		default:
			((uint16_t *)d)[i] = pb_bf16_from_float((float)x);
			break;
		}
	}
	free(t->data);
	t->data = d;
	t->nbytes = nb;
	t->dtype = dt;
	return 0;
}

int pb_tensor_transpose(struct pb_tensor *t, const int *perm)
{
	size_t es = pb_dtype_size(t->dtype);
	int64_t n = pb_tensor_numel(t), dims[PB_MAX_RANK], st[PB_MAX_RANK];
	int64_t idx[PB_MAX_RANK] = {0};
	int r = t->rank;
	char *out = malloc(t->nbytes ? t->nbytes : 1);
	if (!out)
		return -1;
	/* the source stride of each result dimension */
	int64_t s = 1;
	for (int d = r - 1; d >= 0; d--) {
		st[d] = s;
		s *= t->dims[d];
	}
	for (int i = 0; i < r; i++)
		dims[i] = t->dims[perm[i]];
	for (int64_t k = 0; k < n; k++) {
		int64_t src = 0;
		for (int i = 0; i < r; i++)
			src += idx[i] * st[perm[i]];
		memcpy(out + k * es, (const char *)t->data + src * es, es);
		for (int i = r - 1; i >= 0 && ++idx[i] == dims[i]; i--)
			idx[i] = 0;
	}
	free(t->data);
	t->data = out;
	memcpy(t->dims, dims, sizeof(int64_t) * r);
	return 0;
}
