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

/* A padded read (pad.c): "select" of "load" (clamped subscripts) or the
 * pad value "fill", and the equivalent "virt" read affine.load X[t]. */
struct pb_smem_pad {
	MlirOperation load, select, virt;
	MlirAttribute fill;
};
/* The padded reads in "loop" into "*pads" (malloc'ed; free it), each
 * with its virtual read created before its load; their number. */
int pb_smem_pads_find(struct pb_ctx *ctx, MlirOperation loop,
		      struct pb_smem_pad **pads);
/* Staged: "staged" (the read of the tile that replaced the virtual read)
 * becomes the value of the select; the select and the load go. */
void pb_smem_pad_commit(struct pb_smem_pad *p, MlirValue staged);
/* Not staged: the virtual read goes. */
void pb_smem_pad_drop(struct pb_smem_pad *p);

/* Stage the read-only operand tiles of the kernels of "m" (promote.c). */
int pb_smem_promote(struct pb_ctx *ctx, MlirModule m,
		    const struct pb_smem_opts *o);

#endif
