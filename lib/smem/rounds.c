/* The rounds of pb-smem's cooperative copies (internal.h). */
#include "smem/internal.h"

void pb_smem_rounds_text(struct pb_buf *t, int ind, int64_t nw, int64_t nq)
{
	pb_buf_printf(t, "%*saffine.for %%ws = 0 to %lld {\n"
		      "%*saffine.parallel (%%l) = (0) to (32) {\n"
		      "%*saffine.for %%q = 0 to %lld {\n"
		      "%*s%%ci = affine.apply affine_map<(q, w, l) -> "
		      "((q * %lld + w) * 32 + l)>(%%q, %%ws, %%l)\n",
		      ind, "", (long long)nw, ind, "", ind + 2, "",
		      (long long)nq, ind + 4, "", (long long)nw);
}
