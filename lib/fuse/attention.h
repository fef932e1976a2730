/* Private to lib/fuse/attention*.c: the attention chain that attention.c
 * recognises and attention_nest.c rewrites (attention.c's file comment). */
#ifndef PB_FUSE_ATTENTION_H
#define PB_FUSE_ATTENTION_H

#include "fuse/internal.h"

/* The chain: statement indices (t = -1 without a scale) and buffers. */
struct pb_attn {
	int fs, a, t, mf, r1, e, lf, r2, d, of, pv;
	int rows;			  /* R: loops shared by all */
	int bs, bx, bm, be, bl, bp, bo; /* S, X, M, E, L, P, O */
	int ax, ay, aacc;		  /* in A: the two factors, the sum */
	int vv, vp, vo;			  /* in PV: v, P and O's load */
	MlirValue m0, zero;
	const char *why; /* why a chain that looks like attention is not */
	char whybuf[160];
};

/* attention_nest.c: queries of the chain's statements. */

/* The counter of loop "k" of "st". */
MlirValue pb_attn_iv(const struct pb_poly_stmt *st, int k);
/* The operation defining "v" when it is a result, else null. */
MlirOperation pb_attn_def(MlirValue v);
/* The access of "st" whose load gives "v", or -1. */
int pb_attn_load_of(const struct pb_poly_stmt *st, MlirValue v);
/* The only store of "st" (*k its access) and the operation computing its
 * value in the body; null when there is not exactly one store. */
MlirOperation pb_attn_stored(const struct pb_poly_stmt *st, int *k);

/* Replace the chain "t" of "s" by one nest with an online softmax, where
 * PV was (the statements' operations are left for the caller). */
void pb_attn_build(const struct pb_poly_scop *s, const struct pb_attn *t);

#endif
