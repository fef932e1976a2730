/* CUDA Tile IR bytecode: the framing of a module (bytecode.h). */
#include <stdlib.h>
#include <string.h>

#include "tileir/bytecode.h"

/* Section ids; an aligned section has the high bit set. */
enum {
	SEC_END = 0x00,
	SEC_STRING = 0x01,
	SEC_FUNC = 0x02,
	SEC_DEBUG = 0x03,
	SEC_CONSTANT = 0x04,
	SEC_TYPE = 0x05,
	SEC_GLOBAL = 0x06,
};

/* Composite type tags. */
enum {
	TY_PTR = 0x0c,
	TY_TILE = 0x0d,
	TY_TENSOR_VIEW = 0x0e,
	TY_PARTITION_VIEW = 0x0f,
	TY_FUNC = 0x10,
};

/* Padding bytes between aligned parts, as NVIDIA's writers use. */
#define PAD_BYTE 0xcb

void pb_tileir_varint(struct pb_buf *b, uint64_t x)
{
	uint8_t c[10];
	int n = 0;
	do {
		c[n] = x & 0x7f;
		x >>= 7;
		if (x)
			c[n] |= 0x80;
		n++;
	} while (x);
	pb_buf_append(b, c, n);
}

void pb_tileir_svarint(struct pb_buf *b, int64_t x)
{
	uint64_t u = (uint64_t)x << 1;
	if (x < 0)
		u = ~u;
	pb_tileir_varint(b, u);
}

void pb_tileir_byte(struct pb_buf *b, uint8_t x)
{
	pb_buf_append(b, &x, 1);
}

/* Append "x" in "width" bytes, little endian. */
static void le(struct pb_buf *b, uint64_t x, int width)
{
	uint8_t c[8];
	for (int i = 0; i < width; i++)
		c[i] = (x >> (8 * i)) & 0xff;
	pb_buf_append(b, c, width);
}

void pb_tileir_int_list(struct pb_buf *b, const int64_t *v, int n, int width)
{
	pb_tileir_varint(b, n);
	for (int i = 0; i < n; i++)
		le(b, (uint64_t)v[i], width);
}

/* Pad "b" with PAD_BYTE to a multiple of "align" bytes. */
static void pad_to(struct pb_buf *b, size_t align)
{
	while (b->len % align)
		pb_tileir_byte(b, PAD_BYTE);
}

int pb_tileir_table_id(struct pb_tileir_table *t, const void *data,
		       size_t len)
{
	for (int i = 0; i < t->n; i++)
		if (t->off[i + 1] - t->off[i] == len &&
		    !memcmp(t->data.data + t->off[i], data, len))
			return i;
	if (t->n + 2 > t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->off = realloc(t->off, t->cap * sizeof(*t->off));
	}
	if (!t->n)
		t->off[0] = 0;
	pb_buf_append(&t->data, data, len);
	t->off[++t->n] = t->data.len;
	return t->n - 1;
}

static void table_free(struct pb_tileir_table *t)
{
	pb_buf_free(&t->data);
	free(t->off);
}

/* Write table "t" (ids from 0): its count, then "width"-byte offsets
 * (aligned to "width" within "b"), then the entries. */
static void write_table(struct pb_buf *b, const struct pb_tileir_table *t,
			int width)
{
	pb_tileir_varint(b, t->n);
	pad_to(b, width);
	for (int i = 0; i < t->n; i++)
		le(b, t->off[i], width);
	if (t->n)
		pb_buf_append(b, t->data.data, t->data.len);
}

int pb_tileir_string(struct pb_tileir *w, const char *s)
{
	return pb_tileir_table_id(&w->strings, s, strlen(s));
}

int pb_tileir_constant(struct pb_tileir *w, const void *data, size_t len)
{
	struct pb_buf b = {0};
	pb_tileir_varint(&b, len);
	pb_buf_append(&b, data, len);
	int id = pb_tileir_table_id(&w->consts, b.data, b.len);
	pb_buf_free(&b);
	return id;
}

/* The id of the type encoded in "b" (freed). */
static int type_id(struct pb_tileir *w, struct pb_buf *b)
{
	int id = pb_tileir_table_id(&w->types, b->data, b->len);
	pb_buf_free(b);
	return id;
}

int pb_tileir_type_elem(struct pb_tileir *w, enum pb_tileir_elem e)
{
	uint8_t c = e;
	return pb_tileir_table_id(&w->types, &c, 1);
}

int pb_tileir_type_tile(struct pb_tileir *w, int elem, const int64_t *shape,
			int rank)
{
	struct pb_buf b = {0};
	pb_tileir_byte(&b, TY_TILE);
	pb_tileir_varint(&b, elem);
	pb_tileir_int_list(&b, shape, rank, 8);
	return type_id(w, &b);
}

int pb_tileir_type_ptr(struct pb_tileir *w, int pointee)
{
	struct pb_buf b = {0};
	pb_tileir_byte(&b, TY_PTR);
	pb_tileir_varint(&b, 0); /* optional fields: none */
	pb_tileir_varint(&b, pointee);
	return type_id(w, &b);
}

int pb_tileir_type_tensor_view(struct pb_tileir *w, int elem,
			       const int64_t *shape, const int64_t *strides,
			       int rank)
{
	struct pb_buf b = {0};
	pb_tileir_byte(&b, TY_TENSOR_VIEW);
	pb_tileir_varint(&b, 0); /* optional fields: none */
	pb_tileir_varint(&b, elem);
	pb_tileir_int_list(&b, shape, rank, 8);
	pb_tileir_int_list(&b, strides, rank, 8);
	return type_id(w, &b);
}

int pb_tileir_type_partition_view(struct pb_tileir *w, const int64_t *tile,
				  int rank, int tv, const int64_t *dim_map,
				  int padding)
{
	int64_t id[16];
	for (int i = 0; i < rank && i < 16; i++)
		id[i] = dim_map ? dim_map[i] : i;
	struct pb_buf b = {0};
	pb_tileir_byte(&b, TY_PARTITION_VIEW);
	pb_tileir_varint(&b, padding >= 0); /* optional: the padding value */
	pb_tileir_int_list(&b, tile, rank, 4);
	pb_tileir_varint(&b, tv);
	pb_tileir_int_list(&b, id, rank, 4);
	if (padding >= 0)
		pb_tileir_byte(&b, padding);
	return type_id(w, &b);
}

int pb_tileir_type_func(struct pb_tileir *w, const int *params, int np,
			const int *results, int nr)
{
	struct pb_buf b = {0};
	pb_tileir_byte(&b, TY_FUNC);
	pb_tileir_varint(&b, np);
	for (int i = 0; i < np; i++)
		pb_tileir_varint(&b, params[i]);
	pb_tileir_varint(&b, nr);
	for (int i = 0; i < nr; i++)
		pb_tileir_varint(&b, results[i]);
	return type_id(w, &b);
}

void pb_tileir_init(struct pb_tileir *w)
{
	memset(w, 0, sizeof(*w));
	/* i1 and i32 are types 0 and 1 in every module */
	pb_tileir_type_elem(w, PB_TILEIR_I1);
	pb_tileir_type_elem(w, PB_TILEIR_I32);
}

void pb_tileir_free(struct pb_tileir *w)
{
	table_free(&w->strings);
	table_free(&w->types);
	table_free(&w->consts);
	pb_buf_free(&w->funcs);
	pb_buf_free(&w->globals);
	free(w->global_names);
	pb_buf_free(&w->code);
	for (int i = 0; i < w->depth; i++)
		pb_buf_free(&w->regions[i].outer);
	free(w->debug_count);
}

void pb_tileir_global(struct pb_tileir *w, const char *name, int ty,
		      const void *data, size_t len, int align)
{
	int id = pb_tileir_string(w, name);
	for (int i = 0; i < w->nglobals; i++)
		if (w->global_names[i] == id)
			return;
	w->global_names = realloc(w->global_names,
				  (w->nglobals + 1) * sizeof(int));
	w->global_names[w->nglobals++] = id;
	pb_tileir_varint(&w->globals, id);
	pb_tileir_varint(&w->globals, ty);
	pb_tileir_varint(&w->globals, pb_tileir_constant(w, data, len));
	pb_tileir_varint(&w->globals, align);
	pb_tileir_byte(&w->globals, 1);	   /* private */
	pb_tileir_varint(&w->globals, 1); /* constant */
}

void pb_tileir_func_begin(struct pb_tileir *w, const char *name,
			  const int *params, int np, int entry)
{
	int sig = pb_tileir_type_func(w, params, np, NULL, 0);
	pb_tileir_varint(&w->funcs, pb_tileir_string(w, name));
	pb_tileir_varint(&w->funcs, sig);
	pb_tileir_byte(&w->funcs, entry ? 0x02 : 0x00);
	if (w->nfuncs + 1 > w->debug_cap) {
		w->debug_cap = w->debug_cap ? 2 * w->debug_cap : 8;
		w->debug_count = realloc(w->debug_count,
					 w->debug_cap * sizeof(int));
	}
	w->nfuncs++;
	/* the function's entry in the debug section, numbered from 1 */
	pb_tileir_varint(&w->funcs, w->nfuncs);
	w->func_debug = 1;
	w->code.len = 0;
	w->nops = 0;
	w->next_value = np;
}

void pb_tileir_func_end(struct pb_tileir *w)
{
	pb_tileir_varint(&w->funcs, w->code.len);
	pb_buf_append(&w->funcs, w->code.data, w->code.len);
	w->debug_count[w->nfuncs - 1] = w->func_debug;
	w->code.len = 0;
}

int pb_tileir_op(struct pb_tileir *w, int nresults)
{
	int first = w->next_value;
	w->next_value += nresults;
	w->nops++;
	w->func_debug++;
	return first;
}

void pb_tileir_block_begin(struct pb_tileir *w, const int *args, int nargs,
			   int *first)
{
	pb_tileir_varint(&w->code, 1); /* one region */
	w->nops++;
	w->func_debug++;
	pb_tileir_varint(&w->code, 1); /* of one block */
	pb_tileir_varint(&w->code, nargs);
	for (int i = 0; i < nargs; i++)
		pb_tileir_varint(&w->code, args[i]);
	struct pb_tileir_region *r = &w->regions[w->depth++];
	r->outer = w->code;
	r->outer_nops = w->nops;
	r->outer_next = w->next_value;
	w->code = (struct pb_buf){0};
	w->nops = 0;
	*first = w->next_value;
	w->next_value += nargs;
}

int pb_tileir_block_end(struct pb_tileir *w, int nresults)
{
	struct pb_tileir_region *r = &w->regions[--w->depth];
	struct pb_buf inner = w->code;
	w->code = r->outer;
	pb_tileir_varint(&w->code, w->nops);
	pb_buf_append(&w->code, inner.data, inner.len);
	pb_buf_free(&inner);
	w->nops = r->outer_nops;
	w->next_value = r->outer_next;
	int first = w->next_value;
	w->next_value += nresults;
	return first;
}

/* Append section "id" with contents "s" to "out", aligned to "align". */
static void section(struct pb_buf *out, int id, const struct pb_buf *s,
		    int align)
{
	pb_tileir_byte(out, id | (align > 1 ? 0x80 : 0));
	pb_tileir_varint(out, s->len);
	if (align > 1) {
		pb_tileir_varint(out, align);
		pad_to(out, align);
	}
	if (s->len)
		pb_buf_append(out, s->data, s->len);
}

/* The debug section: no locations, but the index the format wants: per
 * function the offset of its entries, per operation (and one per
 * function) the id 0 ("no location"), and a table of one placeholder
 * entry (tileiras rejects an empty one). */
static void debug_section(const struct pb_tileir *w, struct pb_buf *s)
{
	pb_tileir_varint(s, w->nfuncs);
	pad_to(s, 4);
	int64_t total = 0;
	for (int i = 0; i < w->nfuncs; i++) {
		le(s, total, 4);
		total += w->debug_count[i];
	}
	pb_tileir_varint(s, total);
	pad_to(s, 8);
	for (int64_t i = 0; i < total; i++)
		le(s, 0, 8);
	/* the attribute table: one entry, the byte 0 */
	pb_tileir_varint(s, 1);
	pad_to(s, 4);
	le(s, 0, 4);
	pb_tileir_byte(s, 0);
}

void pb_tileir_finish(struct pb_tileir *w, struct pb_buf *out)
{
	static const char magic[8] = "\x7fTileIR";
	struct pb_buf s = {0};
	pb_buf_append(out, magic, 8);
	pb_tileir_byte(out, PB_TILEIR_MAJOR);
	pb_tileir_byte(out, PB_TILEIR_MINOR);
	le(out, 0, 2); /* tag */

	pb_tileir_varint(&s, w->nfuncs);
	if (w->funcs.len)
		pb_buf_append(&s, w->funcs.data, w->funcs.len);
	section(out, SEC_FUNC, &s, 8);
	s.len = 0;
	if (w->nglobals) {
		pb_tileir_varint(&s, w->nglobals);
		pb_buf_append(&s, w->globals.data, w->globals.len);
		section(out, SEC_GLOBAL, &s, 1);
		s.len = 0;
	}
	write_table(&s, &w->consts, 8);
	section(out, SEC_CONSTANT, &s, 8);
	s.len = 0;
	debug_section(w, &s);
	section(out, SEC_DEBUG, &s, 8);
	s.len = 0;
	write_table(&s, &w->types, 4);
	section(out, SEC_TYPE, &s, 4);
	s.len = 0;
	write_table(&s, &w->strings, 4);
	section(out, SEC_STRING, &s, 4);
	pb_tileir_byte(out, SEC_END);
	pb_buf_free(&s);
}
