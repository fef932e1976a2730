/* CUDA Tile IR operations: one encoder each (ops.h). An operation is
 * its opcode, its result types, its flags and attributes, then its
 * operands, in the order of the format's opcode table (version 13.4). */
#include "tileir/ops.h"

/* Opcodes. */
enum {
	OP_ABSF = 0,
	OP_ASSUME = 6,
	OP_BROADCAST = 11,
	OP_CMPF = 14,
	OP_CMPI = 15,
	OP_CONSTANT = 16,
	OP_CONTINUE = 17,
	OP_EXP = 23,
	OP_EXTI = 37,
	OP_FMA = 40,
	OP_FOR = 41,
	OP_FTOF = 42,
	OP_FTOI = 43,
	OP_GET_GLOBAL = 44,
	OP_GET_TILE_BLOCK_ID = 48,
	OP_IOTA = 58,
	OP_ITOF = 59,
	OP_LOAD_PTR_TKO = 61,
	OP_LOAD_VIEW_TKO = 62,
	OP_LOG = 63,
	OP_MAKE_PARTITION_VIEW = 66,
	OP_MAKE_TENSOR_VIEW = 67,
	OP_MAKE_TOKEN = 68,
	OP_MMAF = 73,
	OP_NEGF = 79,
	OP_OFFSET = 81,
	OP_PERMUTE = 83,
	OP_FPOWF = 84,
	OP_REDUCE = 88,
	OP_RESHAPE = 91,
	OP_RETURN = 92,
	OP_RSQRT = 93,
	OP_SCAN = 94,
	OP_SELECT = 95,
	OP_SQRT = 100,
	OP_STORE_VIEW_TKO = 102,
	OP_TANH = 106,
	OP_TRUNCI = 107,
	OP_YIELD = 109,
};

/* Attribute tags. */
enum { ATTR_INTEGER = 0x01, ATTR_FLOAT = 0x02, ATTR_BOOL = 0x03, ATTR_DIV_BY = 0x08 };

/* Shorthands over the current code buffer. */
static void v(struct pb_tileir *w, uint64_t x)
{
	pb_tileir_varint(&w->code, x);
}

static void byte(struct pb_tileir *w, uint8_t x)
{
	pb_tileir_byte(&w->code, x);
}

/* Opcode and one result type. */
static void head(struct pb_tileir *w, int opcode, int ty)
{
	v(w, opcode);
	v(w, ty);
}

/* The "bits"-wide bit pattern "x" of a float attribute: a byte when
 * narrow, else as cuTile writes it: the zigzag varint of the pattern
 * read as a non-negative number (65 bits for a 64-bit pattern). */
static void ap_int(struct pb_tileir *w, uint64_t x, int bits)
{
	if (bits <= 8) {
		byte(w, x);
		return;
	}
	unsigned __int128 z = (unsigned __int128)x << 1;
	do {
		uint8_t c = z & 0x7f;
		z >>= 7;
		byte(w, z ? c | 0x80 : c);
	} while (z);
}

/* Operands "x" of an operation without an explicit count. */
static void operands(struct pb_tileir *w, const int *x, int n)
{
	for (int i = 0; i < n; i++)
		v(w, x[i]);
}

int pb_tileir_iarith(struct pb_tileir *w, enum pb_tileir_ibin op, int ty,
		     int uns, int rounding, int a, int b)
{
	head(w, op, ty);
	switch (op) {
	case PB_TILEIR_ADDI:
	case PB_TILEIR_MULI:
	case PB_TILEIR_SUBI:
	case PB_TILEIR_SHLI:
		byte(w, 0); /* no overflow flags */
		break;
	case PB_TILEIR_MAXI:
	case PB_TILEIR_MINI:
	case PB_TILEIR_REMI:
	case PB_TILEIR_SHRI:
		byte(w, !uns); /* signedness */
		break;
	case PB_TILEIR_DIVI:
		byte(w, !uns);
		byte(w, rounding);
		break;
	case PB_TILEIR_ANDI:
	case PB_TILEIR_ORI:
	case PB_TILEIR_XORI:
		break;
	}
	v(w, a);
	v(w, b);
	return pb_tileir_op(w, 1);
}

int pb_tileir_ibin(struct pb_tileir *w, enum pb_tileir_ibin op, int ty, int a,
		   int b)
{
	return pb_tileir_iarith(w, op, ty, 0, PB_TILEIR_RM, a, b);
}

int pb_tileir_make_token(struct pb_tileir *w, int token_ty)
{
	head(w, OP_MAKE_TOKEN, token_ty);
	return pb_tileir_op(w, 1);
}

int pb_tileir_block_id(struct pb_tileir *w, int i32_ty)
{
	v(w, OP_GET_TILE_BLOCK_ID);
	v(w, i32_ty);
	v(w, i32_ty);
	v(w, i32_ty);
	return pb_tileir_op(w, 3);
}

int pb_tileir_make_tensor_view(struct pb_tileir *w, int ty, int base)
{
	v(w, OP_MAKE_TENSOR_VIEW);
	v(w, 1); /* one result type */
	v(w, ty);
	v(w, base);
	v(w, 0); /* no dynamic shape */
	v(w, 0); /* no dynamic strides */
	return pb_tileir_op(w, 1);
}

int pb_tileir_make_partition_view(struct pb_tileir *w, int ty, int tv)
{
	head(w, OP_MAKE_PARTITION_VIEW, ty);
	v(w, tv);
	return pb_tileir_op(w, 1);
}

/* The attributes of a view load or store: flags (a token operand
 * follows), weak ordering, and "inbounds" false for every index. */
static void view_attrs(struct pb_tileir *w, int n)
{
	v(w, 1 << 2); /* no memory scope, no hints, a token */
	byte(w, 0);   /* weak */
	v(w, n);
	for (int i = 0; i < n; i++)
		byte(w, 0);
}

int pb_tileir_load_view(struct pb_tileir *w, int tile_ty, int token_ty,
			int view, const int *index, int n, int token)
{
	v(w, OP_LOAD_VIEW_TKO);
	v(w, 2);
	v(w, tile_ty);
	v(w, token_ty);
	view_attrs(w, n);
	v(w, view);
	v(w, n);
	operands(w, index, n);
	v(w, token);
	return pb_tileir_op(w, 2);
}

int pb_tileir_load_ptr(struct pb_tileir *w, int tile_ty, int token_ty,
		       int ptr, int mask, int pad, int token)
{
	v(w, OP_LOAD_PTR_TKO);
	v(w, tile_ty);
	v(w, token_ty);
	v(w, 1 << 2 | 1 << 3 | 1 << 4); /* a mask, a padding and a token */
	byte(w, 0);			 /* weak */
	v(w, ptr);
	v(w, mask);
	v(w, pad);
	v(w, token);
	return pb_tileir_op(w, 2);
}

int pb_tileir_store_view(struct pb_tileir *w, int token_ty, int tile,
			 int view, const int *index, int n, int token)
{
	v(w, OP_STORE_VIEW_TKO);
	v(w, 1);
	v(w, token_ty);
	view_attrs(w, n);
	v(w, tile);
	v(w, view);
	v(w, n);
	operands(w, index, n);
	v(w, token);
	return pb_tileir_op(w, 1);
}

int pb_tileir_const(struct pb_tileir *w, int ty, const void *data,
		    size_t len)
{
	head(w, OP_CONSTANT, ty);
	v(w, pb_tileir_constant(w, data, len));
	return pb_tileir_op(w, 1);
}

int pb_tileir_fbin(struct pb_tileir *w, enum pb_tileir_fbin op, int ty,
		   int a, int b)
{
	head(w, op, ty);
	v(w, 0);		/* no flush to zero */
	byte(w, PB_TILEIR_RN);
	v(w, a);
	v(w, b);
	return pb_tileir_op(w, 1);
}

int pb_tileir_fminmax(struct pb_tileir *w, enum pb_tileir_fminmax op,
		      int ty, int a, int b)
{
	head(w, op, ty);
	v(w, 1); /* propagate NaN, no flush to zero */
	v(w, a);
	v(w, b);
	return pb_tileir_op(w, 1);
}

int pb_tileir_fun(struct pb_tileir *w, enum pb_tileir_fun op, int ty, int x)
{
	switch (op) {
	case PB_TILEIR_ABSF:
		head(w, OP_ABSF, ty);
		break;
	case PB_TILEIR_NEGF:
		head(w, OP_NEGF, ty);
		break;
	case PB_TILEIR_LOG:
		head(w, OP_LOG, ty);
		break;
	case PB_TILEIR_EXP:
		head(w, OP_EXP, ty);
		byte(w, PB_TILEIR_FULL);
		break;
	case PB_TILEIR_TANH:
		head(w, OP_TANH, ty);
		byte(w, PB_TILEIR_FULL);
		break;
	case PB_TILEIR_SQRT:
		head(w, OP_SQRT, ty);
		v(w, 0);
		byte(w, PB_TILEIR_RN);
		break;
	case PB_TILEIR_RSQRT:
		head(w, OP_RSQRT, ty);
		v(w, 0);
		break;
	}
	v(w, x);
	return pb_tileir_op(w, 1);
}

int pb_tileir_fma(struct pb_tileir *w, int ty, int a, int b, int c)
{
	head(w, OP_FMA, ty);
	v(w, 0);
	byte(w, PB_TILEIR_RN);
	v(w, a);
	v(w, b);
	v(w, c);
	return pb_tileir_op(w, 1);
}

int pb_tileir_cmpf(struct pb_tileir *w, int ty, enum pb_tileir_cmp p,
		   int ordered, int a, int b)
{
	head(w, OP_CMPF, ty);
	byte(w, p);
	byte(w, ordered);
	v(w, a);
	v(w, b);
	return pb_tileir_op(w, 1);
}

int pb_tileir_cmpi(struct pb_tileir *w, int ty, enum pb_tileir_cmp p, int uns,
		   int a, int b)
{
	head(w, OP_CMPI, ty);
	byte(w, p);
	byte(w, !uns); /* signedness */
	v(w, a);
	v(w, b);
	return pb_tileir_op(w, 1);
}

int pb_tileir_select(struct pb_tileir *w, int ty, int c, int a, int b)
{
	head(w, OP_SELECT, ty);
	v(w, c);
	v(w, a);
	v(w, b);
	return pb_tileir_op(w, 1);
}

int pb_tileir_iota(struct pb_tileir *w, int ty)
{
	head(w, OP_IOTA, ty);
	return pb_tileir_op(w, 1);
}

int pb_tileir_ftof(struct pb_tileir *w, int ty, int x)
{
	head(w, OP_FTOF, ty);
	byte(w, PB_TILEIR_RN);
	v(w, x);
	return pb_tileir_op(w, 1);
}

int pb_tileir_itof(struct pb_tileir *w, int ty, int x, int uns)
{
	head(w, OP_ITOF, ty);
	byte(w, !uns); /* signedness */
	byte(w, PB_TILEIR_RN);
	v(w, x);
	return pb_tileir_op(w, 1);
}

int pb_tileir_ftoi(struct pb_tileir *w, int ty, int x, int uns)
{
	head(w, OP_FTOI, ty);
	v(w, 0); /* not saturating */
	byte(w, !uns);
	byte(w, PB_TILEIR_RZI);
	v(w, x);
	return pb_tileir_op(w, 1);
}

int pb_tileir_exti(struct pb_tileir *w, int ty, int x, int uns)
{
	head(w, OP_EXTI, ty);
	byte(w, !uns);
	v(w, x);
	return pb_tileir_op(w, 1);
}

int pb_tileir_trunci(struct pb_tileir *w, int ty, int x)
{
	head(w, OP_TRUNCI, ty);
	byte(w, 0); /* no overflow flags */
	v(w, x);
	return pb_tileir_op(w, 1);
}

int pb_tileir_fpow(struct pb_tileir *w, int ty, int a, int b)
{
	head(w, OP_FPOWF, ty);
	v(w, a);
	v(w, b);
	return pb_tileir_op(w, 1);
}

int pb_tileir_get_global(struct pb_tileir *w, int ty, const char *name)
{
	head(w, OP_GET_GLOBAL, ty);
	v(w, pb_tileir_string(w, name));
	return pb_tileir_op(w, 1);
}

int pb_tileir_mmaf(struct pb_tileir *w, int ty, int a, int b, int acc)
{
	head(w, OP_MMAF, ty);
	v(w, 0); /* no fast accumulation */
	v(w, a);
	v(w, b);
	v(w, acc);
	return pb_tileir_op(w, 1);
}

int pb_tileir_assume_div_by(struct pb_tileir *w, int ty, int x,
			    int64_t divisor)
{
	head(w, OP_ASSUME, ty);
	byte(w, ATTR_DIV_BY);
	v(w, divisor);
	byte(w, 0); /* the value itself, not every nth element */
	v(w, x);
	return pb_tileir_op(w, 1);
}

int pb_tileir_offset(struct pb_tileir *w, int ty, int ptr, int offset)
{
	head(w, OP_OFFSET, ty);
	v(w, ptr);
	v(w, offset);
	return pb_tileir_op(w, 1);
}

int pb_tileir_broadcast(struct pb_tileir *w, int ty, int x)
{
	head(w, OP_BROADCAST, ty);
	v(w, x);
	return pb_tileir_op(w, 1);
}

int pb_tileir_reshape(struct pb_tileir *w, int ty, int x)
{
	head(w, OP_RESHAPE, ty);
	v(w, x);
	return pb_tileir_op(w, 1);
}

int pb_tileir_permute(struct pb_tileir *w, int ty, int x, const int64_t *perm,
		      int n)
{
	head(w, OP_PERMUTE, ty);
	pb_tileir_int_list(&w->code, perm, n, 4);
	v(w, x);
	return pb_tileir_op(w, 1);
}

void pb_tileir_for(struct pb_tileir *w, const int *types, int lb, int ub,
		   int step, const int *init, int ninit, int iv_ty, int *first)
{
	int args[17];
	v(w, OP_FOR);
	v(w, ninit);
	operands(w, types, ninit);
	v(w, 0); /* signed comparison */
	v(w, 3 + ninit);
	v(w, lb);
	v(w, ub);
	v(w, step);
	operands(w, init, ninit);
	args[0] = iv_ty;
	for (int i = 0; i < ninit && i < 16; i++)
		args[i + 1] = types[i];
	pb_tileir_block_begin(w, args, ninit + 1, first);
}

/* A terminator: no results, a counted list of operands. */
static void terminator(struct pb_tileir *w, int opcode, const int *x, int n)
{
	v(w, opcode);
	v(w, 0);
	v(w, n);
	operands(w, x, n);
	pb_tileir_op(w, 0);
}

void pb_tileir_continue(struct pb_tileir *w, const int *x, int n)
{
	terminator(w, OP_CONTINUE, x, n);
}

void pb_tileir_yield(struct pb_tileir *w, const int *x, int n)
{
	terminator(w, OP_YIELD, x, n);
}

void pb_tileir_return(struct pb_tileir *w)
{
	terminator(w, OP_RETURN, NULL, 0);
}

/* The identities of a reduce or scan: an array of one boolean, integer
 * or float attribute. */
static void identities(struct pb_tileir *w, int elem_ty, int is_int,
		       uint64_t identity, int bits)
{
	v(w, 1);
	if (is_int && bits == 1) {
		byte(w, ATTR_BOOL);
		byte(w, identity & 1);
	} else if (is_int) {
		byte(w, ATTR_INTEGER);
		v(w, elem_ty);
		v(w, bits < 64 ? identity & ((UINT64_C(1) << bits) - 1)
			       : identity);
	} else {
		byte(w, ATTR_FLOAT);
		v(w, elem_ty);
		ap_int(w, identity, bits);
	}
}

void pb_tileir_reduce(struct pb_tileir *w, int ty, int x, int dim,
		      int elem_ty, int is_int, uint64_t identity, int bits,
		      int scalar_ty, int *first)
{
	int args[2] = {scalar_ty, scalar_ty};
	v(w, OP_REDUCE);
	v(w, 1);
	v(w, ty);
	v(w, dim);
	identities(w, elem_ty, is_int, identity, bits);
	v(w, 1); /* one operand */
	v(w, x);
	pb_tileir_block_begin(w, args, 2, first);
}

void pb_tileir_scan(struct pb_tileir *w, int ty, int x, int dim,
		    int elem_ty, int is_int, uint64_t identity, int bits,
		    int scalar_ty, int *first)
{
	int args[2] = {scalar_ty, scalar_ty};
	v(w, OP_SCAN);
	v(w, 1);
	v(w, ty);
	v(w, dim);
	byte(w, 0); /* forward */
	identities(w, elem_ty, is_int, identity, bits);
	v(w, 1); /* one operand */
	v(w, x);
	pb_tileir_block_begin(w, args, 2, first);
}
