/* pb-smem's pieces (docs/pb-smem.md). */
#ifndef PB_SMEM_INTERNAL_H
#define PB_SMEM_INTERNAL_H

#include <stdint.h>

#include "smem/smem.h"

/* The bank-conflict degree of a warp's shared-memory access whose lane l
 * (0 <= l < nlanes) touches the "width" words from word[l] on: the most
 * distinct words of one bank in one phase, 1 when conflict-free
 * (bank.c). */
int pb_smem_bank_degree(const int64_t *word, int nlanes, int width);

/* Stage the read-only operand tiles of the kernels of "m" (promote.c). */
int pb_smem_promote(struct pb_ctx *ctx, MlirModule m,
		    const struct pb_smem_opts *o);

#endif
