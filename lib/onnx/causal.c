/* Causal masks among the initializers (docs/pb-import.md, "Causal
 * masks"): an additive mask of 0 where key j <= query i + c and -inf
 * where j > i + c, for one c >= 0, in its last two dimensions (the others
 * 1), as torch's scaled_dot_product_attention(is_causal=True) exports
 * once constant-folded; or a boolean condition true where j <= i + c and
 * false beyond (GPT-2's torch.where(causal, s, finfo.min): its
 * registered tril buffer). pb-import marks such a parameter pb.causal = c
 * (ir/contract.h), a fact about its values that attention kernels use to
 * skip the key tiles above the diagonal and to compute the mask instead
 * of loading it. A boolean condition the other way round, true where
 * j > i + c (nanoGPT's `bias == 0`, constant-folded by the export, for
 * masked_fill(cond, -inf)), is marked pb.future = c. The values are read where they lie in the model (raw or
 * typed float32, raw float16), without a copy; a weight that is not a
 * mask fails at its first element that is neither 0 nor -inf. */
#include <math.h>
#include <string.h>

#include "onnx/import.h"

/* Element "k" of "p" (float32, float16 or bool): 0 for 0 (true), -1 for
 * -inf (false), 1 for anything else. */
static int sign_at(const Onnx__TensorProto *p, int raw, int64_t k)
{
	if (p->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL)
		return (raw ? p->raw_data.data[k] : p->int32_data[k]) ? 0 : -1;
	if (p->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16) {
		uint16_t h;
		memcpy(&h, p->raw_data.data + 2 * k, 2);
		return (h & 0x7fff) == 0 ? 0 : h == 0xfc00 ? -1 : 1;
	}
	float f;
	if (raw)
		memcpy(&f, p->raw_data.data + 4 * k, 4);
	else
		f = p->float_data[k];
	return f == 0 ? 0 : isinf(f) && f < 0 ? -1 : 1;
}

enum pb_imp_causal pb_imp_causal(const Onnx__TensorProto *p,
				 const struct shape *sh, int64_t *off)
{
	int r = sh->rank;
	if (!p || r < 2 || p->data_location ==
			       ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
		return 0;
	for (int k = 0; k + 2 < r; k++)
		if (sh->d[k] != 1)
			return 0;
	int64_t L = sh->d[r - 2], S = sh->d[r - 1], n = L * S;
	if (L < 2 || S < 2)
		return 0;
	int half = p->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16;
	int bool_ = p->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL;
	int raw = p->has_raw_data && p->raw_data.len;
	if (half ? !raw || p->raw_data.len != (size_t)(2 * n)
	    : bool_ ? (raw ? p->raw_data.len != (size_t)n
			   : p->n_int32_data != (size_t)n)
		    : p->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ||
			      (raw ? p->raw_data.len != (size_t)(4 * n)
				   : p->n_float_data != (size_t)n))
		return 0;
	/* c from the first row: c + 1 zeros (true), then -inf (false); or,
	   for a boolean, c + 1 false then true */
	int kept = sign_at(p, raw, 0), hid = kept ? 0 : -1;
	if (kept && (!bool_ || kept != -1))
		return PB_IMP_CAUSAL_NONE;
	int64_t c = 0;
	while (c < S && sign_at(p, raw, c) == kept)
		c++;
	if (c == S)
		return PB_IMP_CAUSAL_NONE;
	c--;
	for (int64_t i = 0; i < L; i++)
		for (int64_t j = 0; j < S; j++)
			if (sign_at(p, raw, i * S + j) != (j <= i + c ? kept : hid))
				return PB_IMP_CAUSAL_NONE;
	*off = c;
	return kept ? PB_IMP_CAUSAL_FUTURE : PB_IMP_CAUSAL_KEPT;
}
