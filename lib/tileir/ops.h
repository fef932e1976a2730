/* CUDA Tile IR operations: one encoder per operation pb emits (ops.c),
 * over the framing of bytecode.h. Types are type-table ids, values are
 * value numbers; each encoder returns its (first) result. */
#ifndef PB_TILEIR_OPS_H
#define PB_TILEIR_OPS_H

#include "tileir/bytecode.h"

/* Rounding modes and comparison predicates of the format. */
enum pb_tileir_rounding {
	PB_TILEIR_RN = 0, /* nearest even */
	PB_TILEIR_RZ = 1,
	PB_TILEIR_RM = 2, /* toward negative infinity */
	PB_TILEIR_RP = 3, /* toward positive infinity */
	PB_TILEIR_APPROX = 4,
	PB_TILEIR_FULL = 5,
	PB_TILEIR_RZI = 6, /* to the nearest integer toward zero */
};
enum pb_tileir_cmp {
	PB_TILEIR_EQ = 0,
	PB_TILEIR_NE = 1,
	PB_TILEIR_LT = 2,
	PB_TILEIR_LE = 3,
	PB_TILEIR_GT = 4,
	PB_TILEIR_GE = 5,
};

/* Float arithmetic with a rounding mode: addf, subf, mulf, divf. */
enum pb_tileir_fbin {
	PB_TILEIR_ADDF = 2,
	PB_TILEIR_DIVF = 20,
	PB_TILEIR_MULF = 76,
	PB_TILEIR_SUBF = 103,
};
/* Float maximum and minimum (NaN-propagating as arith.maximumf). */
enum pb_tileir_fminmax {
	PB_TILEIR_MAXF = 69,
	PB_TILEIR_MINF = 71,
};
/* Unary float functions. */
enum pb_tileir_fun {
	PB_TILEIR_ABSF,
	PB_TILEIR_NEGF,
	PB_TILEIR_EXP,
	PB_TILEIR_LOG,
	PB_TILEIR_SQRT,
	PB_TILEIR_RSQRT,
	PB_TILEIR_TANH,
};

/* Integer arithmetic (any integer element type; signedness is the
 * operation's, as in MLIR's arith). */
enum pb_tileir_ibin {
	PB_TILEIR_ADDI = 3,
	PB_TILEIR_ANDI = 4,
	PB_TILEIR_DIVI = 21,
	PB_TILEIR_MAXI = 70,
	PB_TILEIR_MINI = 72,
	PB_TILEIR_MULI = 78,
	PB_TILEIR_ORI = 82,
	PB_TILEIR_REMI = 90,
	PB_TILEIR_SHLI = 96,
	PB_TILEIR_SHRI = 97,
	PB_TILEIR_SUBI = 104,
	PB_TILEIR_XORI = 108,
};
/* "op" on "a" and "b", signed: divi rounds toward negative infinity
 * (affine's floordiv). */
int pb_tileir_ibin(struct pb_tileir *w, enum pb_tileir_ibin op, int ty, int a,
		   int b);
/* "op" on "a" and "b", unsigned when "uns" (divi, remi, maxi, mini,
 * shri); divi rounds by "rounding" (PB_TILEIR_RZ, RM or RP). */
int pb_tileir_iarith(struct pb_tileir *w, enum pb_tileir_ibin op, int ty,
		     int uns, int rounding, int a, int b);

int pb_tileir_make_token(struct pb_tileir *w, int token_ty);
/* Three values: the block's x, y and z tile ids. */
int pb_tileir_block_id(struct pb_tileir *w, int i32_ty);
int pb_tileir_make_tensor_view(struct pb_tileir *w, int ty, int base);
int pb_tileir_make_partition_view(struct pb_tileir *w, int ty, int tv);
/* load_view_tko weak: two values, the tile and its token. */
int pb_tileir_load_view(struct pb_tileir *w, int tile_ty, int token_ty,
			int view, const int *index, int n, int token);
/* store_view_tko weak: the result token. */
int pb_tileir_store_view(struct pb_tileir *w, int token_ty, int tile,
			 int view, const int *index, int n, int token);
/* load_ptr_tko weak of the pointer tile "ptr" where "mask" holds, else
 * "pad": two values, the tile and its token. */
int pb_tileir_load_ptr(struct pb_tileir *w, int tile_ty, int token_ty,
		       int ptr, int mask, int pad, int token);
/* A constant of type "ty" from raw little-endian element bytes (one
 * element: a splat). */
int pb_tileir_const(struct pb_tileir *w, int ty, const void *data,
		    size_t len);
int pb_tileir_fbin(struct pb_tileir *w, enum pb_tileir_fbin op, int ty,
		   int a, int b);
int pb_tileir_fminmax(struct pb_tileir *w, enum pb_tileir_fminmax op,
		      int ty, int a, int b);
int pb_tileir_fun(struct pb_tileir *w, enum pb_tileir_fun op, int ty, int x);
int pb_tileir_fma(struct pb_tileir *w, int ty, int a, int b, int c);
int pb_tileir_cmpf(struct pb_tileir *w, int ty, enum pb_tileir_cmp p,
		   int ordered, int a, int b);
/* Integer comparison, unsigned when "uns". */
int pb_tileir_cmpi(struct pb_tileir *w, int ty, enum pb_tileir_cmp p, int uns,
		   int a, int b);
int pb_tileir_select(struct pb_tileir *w, int ty, int c, int a, int b);
int pb_tileir_iota(struct pb_tileir *w, int ty);
/* Float to float conversion (rounded to nearest even). */
int pb_tileir_ftof(struct pb_tileir *w, int ty, int x);
/* Integer to float (rounded to nearest even), float to integer (toward
 * zero), signed or, with "uns", unsigned. */
int pb_tileir_itof(struct pb_tileir *w, int ty, int x, int uns);
int pb_tileir_ftoi(struct pb_tileir *w, int ty, int x, int uns);
/* Integer widening (zero-extended when "uns", else sign-extended) and
 * narrowing (the low bits). */
int pb_tileir_exti(struct pb_tileir *w, int ty, int x, int uns);
int pb_tileir_trunci(struct pb_tileir *w, int ty, int x);
/* "a" to the power "b" (floats). */
int pb_tileir_fpow(struct pb_tileir *w, int ty, int a, int b);
/* A pointer tile (type "ty") to the module's global "name". */
int pb_tileir_get_global(struct pb_tileir *w, int ty, const char *name);
int pb_tileir_mmaf(struct pb_tileir *w, int ty, int a, int b, int acc);
/* "x" (a pointer or integer of type "ty") assumed divisible by
 * "divisor" (bytes for a pointer). */
int pb_tileir_assume_div_by(struct pb_tileir *w, int ty, int x,
			    int64_t divisor);
/* Pointer "ptr" moved by "offset" elements. */
int pb_tileir_offset(struct pb_tileir *w, int ty, int ptr, int offset);
int pb_tileir_broadcast(struct pb_tileir *w, int ty, int x);
int pb_tileir_reshape(struct pb_tileir *w, int ty, int x);
int pb_tileir_permute(struct pb_tileir *w, int ty, int x, const int64_t *perm,
		      int n);
/* for %iv in (lb to ub, step) iter_values(init...) -> (types...): the
 * body's block starts here, its arguments (the induction variable of
 * type "iv_ty", then one per init value) numbered from *first. End it
 * with pb_tileir_continue and pb_tileir_block_end(w, ninit). */
void pb_tileir_for(struct pb_tileir *w, const int *types, int lb, int ub,
		   int step, const int *init, int ninit, int iv_ty, int *first);
void pb_tileir_continue(struct pb_tileir *w, const int *v, int n);
/* reduce "x" along "dim" to a tile of type "ty" with the identity of
 * bits "identity" (of element type "elem_ty", "bits" wide; an integer
 * when "is_int", else a float): the combiner's block starts here with
 * two scalar tiles of type "scalar_ty" (numbered from *first); end it
 * with pb_tileir_yield and pb_tileir_block_end(w, 1). */
void pb_tileir_reduce(struct pb_tileir *w, int ty, int x, int dim,
		      int elem_ty, int is_int, uint64_t identity, int bits,
		      int scalar_ty, int *first);
/* scan "x" along "dim" (inclusive, forward) into a tile of type "ty",
 * the identity as for pb_tileir_reduce; the combiner's block likewise. */
void pb_tileir_scan(struct pb_tileir *w, int ty, int x, int dim,
		    int elem_ty, int is_int, uint64_t identity, int bits,
		    int scalar_ty, int *first);
void pb_tileir_yield(struct pb_tileir *w, const int *v, int n);
void pb_tileir_return(struct pb_tileir *w);

#endif
