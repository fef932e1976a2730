/* CUDA Tile IR bytecode, written by pb in C (docs/tileir.md).
 *
 * A module of Tile IR bytecode is a header (magic "\x7fTileIR\0", major,
 * minor, a 16-bit tag) and sections: functions, constants, debug
 * information, types and strings, each framed by an id byte, a varint
 * length and (when aligned) a varint alignment and padding. Strings,
 * types and constants are tables deduplicated by their encoding and
 * referred to by index; the body of a function is a sequence of
 * operations, each its opcode, result types, attributes and operand
 * value numbers (varints), values numbered in order of definition
 * (the function's parameters first).
 *
 * pb writes version 13.4, the newest that tileiras 13.5 accepts without
 * its development flag. This file is the framing (varints, tables,
 * types, sections, functions and regions); ops.c holds one encoder per
 * operation pb emits. */
#ifndef PB_TILEIR_BYTECODE_H
#define PB_TILEIR_BYTECODE_H

#include <stddef.h>
#include <stdint.h>

#include "core/pb.h"

#define PB_TILEIR_MAJOR 13
#define PB_TILEIR_MINOR 4

/* A deduplicated table of byte strings (strings, types, constants): entry
 * i is data[off[i] .. off[i + 1]). */
struct pb_tileir_table {
	struct pb_buf data;
	size_t *off; /* n + 1 offsets */
	int n, cap;
};

/* The element types (the simple types of the format). */
enum pb_tileir_elem {
	PB_TILEIR_I1 = 0x00,
	PB_TILEIR_I8 = 0x01,
	PB_TILEIR_I16 = 0x02,
	PB_TILEIR_I32 = 0x03,
	PB_TILEIR_I64 = 0x04,
	PB_TILEIR_F16 = 0x05,
	PB_TILEIR_BF16 = 0x06,
	PB_TILEIR_F32 = 0x07,
	PB_TILEIR_F64 = 0x09,
	PB_TILEIR_TOKEN = 0x11,
};

/* One region being written: the enclosing code buffer and counters,
 * restored when the region ends (values defined in a region are not
 * visible after it). */
struct pb_tileir_region {
	struct pb_buf outer;
	int outer_nops, outer_next;
};

/* A bytecode module being written. A function is written between
 * pb_tileir_func_begin and pb_tileir_func_end; its operations go into
 * "code" through the encoders of ops.c. */
struct pb_tileir {
	struct pb_tileir_table strings, types, consts;
	struct pb_buf funcs; /* the function section after its count */
	int nfuncs;
	struct pb_buf globals; /* the global section after its count */
	int *global_names;     /* the string id of each global */
	int nglobals;
	/* the function being written */
	struct pb_buf code;
	int nops;	  /* operations in the current block */
	int next_value;	  /* the number the next value gets */
	int func_debug;	  /* debug entries of the function being written */
	int *debug_count; /* per function: its operations + 1 */
	int debug_cap;
	int depth;	  /* open regions */
	struct pb_tileir_region regions[16];
};

void pb_tileir_init(struct pb_tileir *w);
void pb_tileir_free(struct pb_tileir *w);

/* Encodings shared with ops.c. */
void pb_tileir_varint(struct pb_buf *b, uint64_t x);
void pb_tileir_svarint(struct pb_buf *b, int64_t x);
void pb_tileir_byte(struct pb_buf *b, uint8_t x);
/* A list: its length (varint), then each item in "width" bytes, little
 * endian (width 1, 4 or 8). */
void pb_tileir_int_list(struct pb_buf *b, const int64_t *v, int n, int width);

/* The index of "data" ("len" bytes) in "t", added when new. */
int pb_tileir_table_id(struct pb_tileir_table *t, const void *data,
		       size_t len);
int pb_tileir_string(struct pb_tileir *w, const char *s);
/* The id of a dense constant of raw little-endian bytes "data". */
int pb_tileir_constant(struct pb_tileir *w, const void *data, size_t len);

/* Types: the index of each in the type table. */
int pb_tileir_type_elem(struct pb_tileir *w, enum pb_tileir_elem e);
int pb_tileir_type_tile(struct pb_tileir *w, int elem, const int64_t *shape,
			int rank);
int pb_tileir_type_ptr(struct pb_tileir *w, int pointee);
int pb_tileir_type_tensor_view(struct pb_tileir *w, int elem,
			       const int64_t *shape, const int64_t *strides,
			       int rank);
/* A partition view of tiles "tile" (rank "rank") of tensor view "tv";
 * "dim_map" (NULL: the identity) maps tile dimensions to the view's;
 * "padding" is the value loads read outside the view (-1: none, else
 * PB_TILEIR_PAD_*). */
#define PB_TILEIR_PAD_ZERO 0
#define PB_TILEIR_PAD_NEG_INF 4
int pb_tileir_type_partition_view(struct pb_tileir *w, const int64_t *tile,
				  int rank, int tv, const int64_t *dim_map,
				  int padding);
int pb_tileir_type_func(struct pb_tileir *w, const int *params, int np,
			const int *results, int nr);

/* Define the module's global "name" of type "ty" (a tile type of its
 * elements) holding the raw little-endian "data" ("len" bytes), aligned
 * to "align" bytes, read-only, private to the module; nothing when it
 * is defined already. */
void pb_tileir_global(struct pb_tileir *w, const char *name, int ty,
		      const void *data, size_t len, int align);

/* Start function "name" (an entry point, a kernel, when "entry") with
 * the parameter types "params"; its parameters are values 0 .. np-1. */
void pb_tileir_func_begin(struct pb_tileir *w, const char *name,
			  const int *params, int np, int entry);
void pb_tileir_func_end(struct pb_tileir *w);

/* Operation framing for ops.c: count one operation of "nresults" results
 * and return the number of its first result. */
int pb_tileir_op(struct pb_tileir *w, int nresults);
/* An operation with one region of one block: after its operands, start
 * the block with arguments of types "args" (their numbers from *first);
 * the block's operations follow, then pb_tileir_block_end gives the
 * operation's first result. */
void pb_tileir_block_begin(struct pb_tileir *w, const int *args, int nargs,
			   int *first);
int pb_tileir_block_end(struct pb_tileir *w, int nresults);

/* The whole module into "out". */
void pb_tileir_finish(struct pb_tileir *w, struct pb_buf *out);

#endif
