/* Private to lib/fuse/attention*.c: the attention chain that attention.c
 * recognises and attention_nest.c rewrites (attention.c's file comment). */
#ifndef PB_FUSE_ATTENTION_H
#define PB_FUSE_ATTENTION_H

#include "fuse/internal.h"

/* The most elementwise nests in each of the chain's runs of roundings
 * (S to X, P to what PV reads, O to its destination). */
#define PB_ATTN_MAXC 6
/* The most statements and intermediate buffers of one chain. */
#define PB_ATTN_MAXS (11 + 3 * PB_ATTN_MAXC)

/* The most masks between S and X (GPT-2's Where then its additive
 * attention mask). */
#define PB_ATTN_MAXM 2

/* A mask between S and X, in one of the pre nests. */
struct pb_attn_mask {
	MlirOperation op; /* the arith.addf of an additive mask, or the
			   * arith.select of a Where */
	int stmt, acc, buf; /* its pre nest, the mask's (the condition's) load,
			     * buffer */
	int fill, bfill;    /* a Where's load of its other value, buffer
			     * (-1: none, a value from outside) */
};

/* The chain: statement indices and buffers. */
struct pb_attn {
	int fs, a, mf, r1, e, lf, r2, d, of, pv;
	int pre[PB_ATTN_MAXC], npre;   /* S to X: roundings and the scale */
	int post[PB_ATTN_MAXC], npost; /* P to PV's operand: roundings */
	int out[PB_ATTN_MAXC], nout;   /* O to its destination: copies and
					* roundings */
	int bpre[PB_ATTN_MAXC], bpost[PB_ATTN_MAXC], bout[PB_ATTN_MAXC];
	MlirOperation scale; /* S * c, c * S or S / c in a pre nest, or null */
	double prescale;     /* Q's and K's scales (pb_attn_factor), folded
			      * into the scale of the nest */
	struct pb_attn_mask mask[PB_ATTN_MAXM]; /* in the chain's order */
	int nmask;
	int rows;			  /* R: loops shared by all */
	int bs, bx, bm, be, bl, bp, bo; /* S, X, M, E, L, P, O */
	int bpv;			  /* the buffer PV reads P from */
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
/* The access of "st" whose load gives "v" directly or widened by an
 * arith.extf in its body (*ext that operation, else null), or -1. */
int pb_attn_factor_of(const struct pb_poly_stmt *st, MlirValue v,
		      MlirOperation *ext);
/* A factor of QK^T: its load, maybe widened, maybe scaled by a constant
 * (the prescaled Q and K^T of torch's scaled_dot_product_attention
 * export, inlined from their nests by copy.c): v = [extf] ([truncf]
 * (x * c | c * x | x / c)) with x = [extf] load. */
struct pb_attn_factor {
	int k;		     /* the access loaded, or -1 */
	MlirOperation ext;   /* the widening of the load, or null */
	MlirOperation scale; /* the product or quotient, or null */
	double value;	     /* what it multiplies by (1 without) */
	int nops;	     /* the operations between the load and v */
};
/* Fill "f" for the value "v" of "st"; returns f->k. */
int pb_attn_factor(const struct pb_poly_stmt *st, MlirValue v,
		   struct pb_attn_factor *f);
/* Is "v" a float constant? Its value in *c. */
int pb_attn_float_constant(MlirValue v, double *c);
/* The only store of "st" (*k its access) and the operation computing its
 * value in the body; null when there is not exactly one store. */
MlirOperation pb_attn_stored(const struct pb_poly_stmt *st, int *k);

/* Replace the chain "t" of "s" by one nest with an online softmax, where
 * PV was (the statements' operations are left for the caller). */
void pb_attn_build(const struct pb_poly_scop *s, const struct pb_attn *t);

#endif
