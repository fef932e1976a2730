/* The host launch plan: construction, consistency checks, JSON writer and
 * reader. Depends on jansson and libc only. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "plan/plan.h"

static const char *kind_names[] = {"input", "param", "output", "scratch",
				   "view"};

static const struct {
	const char *name;
	int size;
} dtypes[] = {
	{"f32", 4}, {"f16", 2}, {"bf16", 2}, {"f64", 8}, {"i8", 1},
	{"u8", 1},  {"i16", 2}, {"u16", 2},  {"i32", 4}, {"u32", 4},
	{"i64", 8}, {"u64", 8}, {"bool", 1}, {"index", 8},
};

static const char *scalar_types[] = {"i32", "i64", "index", "f32", "f64",
				     NULL};

int pb_plan_dtype_size(const char *dtype)
{
	for (size_t i = 0; dtype && i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
		if (!strcmp(dtypes[i].name, dtype))
			return dtypes[i].size;
	return 0;
}

const char *pb_plan_kind_name(enum pb_plan_kind k)
{
	return k <= PB_PLAN_VIEW ? kind_names[k] : "?";
}

/* A malloc'ed copy of "s", or NULL when "s" is NULL. */
static char *dup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* "v" (an array of "n" elements of "size" bytes) grown by one element;
 * aborts when out of memory. */
static void *grow(void *v, int n, size_t size)
{
	char *p = realloc(v, size * (n + 1));
	if (!p)
		abort();
	memset(p + size * n, 0, size);
	return p;
}

struct pb_plan *pb_plan_alloc(const char *arch, const char *source)
{
	struct pb_plan *p = calloc(1, sizeof(*p));
	if (!p)
		abort();
	p->version = PB_PLAN_VERSION;
	p->arena = -1;
	p->arch = dup(arch);
	p->source = dup(source);
	return p;
}

void pb_plan_launch_free(struct pb_plan_launch *l)
{
	free(l->kernel);
	free(l->origin);
	for (int j = 0; j < l->nnodes; j++)
		free(l->nodes[j]);
	free(l->nodes);
	for (int j = 0; j < l->nargs; j++)
		free(l->args[j].type);
	free(l->args);
}

void pb_plan_free(struct pb_plan *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->nbuffers; i++) {
		struct pb_plan_buffer *b = &p->buffers[i];
		free(b->name);
		free(b->dtype);
		free(b->shape);
		free(b->strides);
		free(b->perm);
	}
	for (int i = 0; i < p->nlaunches; i++)
		pb_plan_launch_free(&p->launches[i]);
	free(p->buffers);
	free(p->launches);
	free(p->arch);
	free(p->source);
	free(p);
}

/* The size in bytes of "rank" dims "shape" of "size"-byte elements, or -1
 * when a dim is negative or it overflows int64. */
static int64_t nbytes(int rank, const int64_t *shape, int64_t size)
{
	int64_t n = size;
	for (int i = 0; i < rank; i++)
		if (shape[i] < 0 || __builtin_mul_overflow(n, shape[i], &n))
			return -1;
	return n;
}

/* Append a buffer with the common fields to "p" and return it, or NULL
 * when "dtype" is unknown. */
static struct pb_plan_buffer *add(struct pb_plan *p, enum pb_plan_kind kind,
				  const char *dtype, int rank,
				  const int64_t *shape)
{
	struct pb_plan_buffer *b;
	int size = pb_plan_dtype_size(dtype);
	if (!size || rank < 0)
		return NULL;
	p->buffers = grow(p->buffers, p->nbuffers, sizeof(*b));
	b = &p->buffers[p->nbuffers];
	b->id = p->nbuffers++;
	b->kind = kind;
	b->arg = -1;
	b->base = -1;
	b->arena_offset = -1;
	b->perm = NULL;
	b->dtype = dup(dtype);
	b->rank = rank;
	b->shape = calloc(rank + 1, sizeof(int64_t));
	b->strides = calloc(rank + 1, sizeof(int64_t));
	if (!b->shape || !b->strides)
		abort();
	if (rank)
		memcpy(b->shape, shape, rank * sizeof(int64_t));
	b->bytes = nbytes(rank, shape, size);
	return b;
}

int pb_plan_add_buffer(struct pb_plan *p, enum pb_plan_kind kind,
		       const char *name, int arg, const char *dtype, int rank,
		       const int64_t *shape)
{
	if (kind == PB_PLAN_VIEW)
		return -1;
	struct pb_plan_buffer *b = add(p, kind, dtype, rank, shape);
	if (!b)
		return -1;
	b->name = dup(name);
	b->arg = arg;
	int64_t s = 1;
	for (int i = rank - 1; i >= 0; i--) {
		b->strides[i] = s;
		s *= shape[i];
	}
	return b->id;
}

void pb_plan_set_perm(struct pb_plan *p, int id, const int *perm)
{
	struct pb_plan_buffer *b = &p->buffers[id];
	free(b->perm);
	b->perm = calloc(b->rank + 1, sizeof(int));
	if (!b->perm)
		abort();
	memcpy(b->perm, perm, b->rank * sizeof(int));
}

int pb_plan_add_view(struct pb_plan *p, int base, const char *dtype,
		     int rank, const int64_t *shape, const int64_t *strides,
		     int64_t offset, int64_t elem_offset)
{
	if (base < 0 || base >= p->nbuffers ||
	    p->buffers[base].kind == PB_PLAN_VIEW)
		return -1;
	struct pb_plan_buffer *b = add(p, PB_PLAN_VIEW, dtype, rank, shape);
	if (!b)
		return -1;
	b->base = base;
	b->offset = offset;
	b->elem_offset = elem_offset;
	if (rank)
		memcpy(b->strides, strides, rank * sizeof(int64_t));
	return b->id;
}

struct pb_plan_launch *pb_plan_add_launch(struct pb_plan *p,
					  const char *kernel,
					  const char *origin, int nnodes,
					  const char *const *nodes,
					  const int64_t grid[3],
					  const int64_t block[3], int64_t smem)
{
	struct pb_plan_launch *l;
	p->launches = grow(p->launches, p->nlaunches, sizeof(*l));
	l = &p->launches[p->nlaunches++];
	l->kernel = dup(kernel);
	l->origin = dup(origin);
	l->nnodes = nnodes;
	l->nodes = calloc(nnodes + 1, sizeof(char *));
	if (!l->nodes)
		abort();
	for (int i = 0; i < nnodes; i++)
		l->nodes[i] = dup(nodes[i]);
	memcpy(l->grid, grid, sizeof(l->grid));
	memcpy(l->block, block, sizeof(l->block));
	l->smem = smem;
	return l;
}

void pb_plan_launch_add_buffer(struct pb_plan_launch *l, int buffer)
{
	struct pb_plan_arg *a;
	l->args = grow(l->args, l->nargs, sizeof(*a));
	a = &l->args[l->nargs++];
	a->kind = PB_PLAN_ARG_BUFFER;
	a->buffer = buffer;
}

void pb_plan_launch_add_scalar(struct pb_plan_launch *l, const char *type,
			       int64_t i, double f)
{
	struct pb_plan_arg *a;
	l->args = grow(l->args, l->nargs, sizeof(*a));
	a = &l->args[l->nargs++];
	a->kind = PB_PLAN_ARG_SCALAR;
	a->buffer = -1;
	a->type = dup(type);
	a->i = i;
	a->f = f;
}

/* Format a message into "err" (size "errlen") and return -1. */
static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	if (!err || !errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int is_float_type(const char *t)
{
	return t && t[0] == 'f';
}

static int known_scalar(const char *t)
{
	for (int i = 0; t && scalar_types[i]; i++)
		if (!strcmp(scalar_types[i], t))
			return 1;
	return 0;
}

/* Check buffer "b" of "p"; 0 or -1 with a message in "err". */
static int check_buffer(const struct pb_plan *p, const struct pb_plan_buffer *b,
			int i, char *err, size_t errlen)
{
	int size = pb_plan_dtype_size(b->dtype);
	if (b->id != i)
		return fail(err, errlen, "buffers[%d]: id %d is not its index",
			    i, b->id);
	if (!size)
		return fail(err, errlen, "buffers[%d]: unknown dtype '%s'", i,
			    b->dtype ? b->dtype : "");
	if (b->rank < 0 || b->rank > 64)
		return fail(err, errlen, "buffers[%d]: bad rank %d", i, b->rank);
	for (int d = 0; d < b->rank; d++)
		if (b->shape[d] < 0 || b->strides[d] < 0)
			return fail(err, errlen,
				    "buffers[%d]: negative size or stride", i);
	if (nbytes(b->rank, b->shape, size) < 0)
		return fail(err, errlen, "buffers[%d]: its size in bytes "
			    "overflows 2^63", i);
	if (b->bytes != nbytes(b->rank, b->shape, size))
		return fail(err, errlen,
			    "buffers[%d]: bytes %lld do not match the shape", i,
			    (long long)b->bytes);
	if (b->perm && b->kind != PB_PLAN_PARAM)
		return fail(err, errlen, "buffers[%d]: a %s has no 'perm'", i,
			    pb_plan_kind_name(b->kind));
	for (int d = 0, seen = 0; b->perm && d < b->rank; d++) {
		if (b->perm[d] < 0 || b->perm[d] >= b->rank ||
		    (b->rank <= 31 && (seen >> b->perm[d] & 1)))
			return fail(err, errlen, "buffers[%d]: 'perm' is not a "
				    "permutation of its dimensions", i);
		seen |= b->rank <= 31 ? 1 << b->perm[d] : 0;
	}
	if ((b->kind == PB_PLAN_INPUT || b->kind == PB_PLAN_OUTPUT ||
	     b->kind == PB_PLAN_PARAM) && !b->name)
		return fail(err, errlen, "buffers[%d]: %s without a name", i,
			    pb_plan_kind_name(b->kind));
	if (b->kind != PB_PLAN_VIEW)
		return b->base < 0 && !b->offset && !b->elem_offset
			       ? 0
			       : fail(err, errlen,
				      "buffers[%d]: a %s has no base", i,
				      pb_plan_kind_name(b->kind));
	if (b->base < 0 || b->base >= p->nbuffers ||
	    p->buffers[b->base].kind == PB_PLAN_VIEW)
		return fail(err, errlen, "buffers[%d]: view base %d is not a "
			    "root buffer", i, b->base);
	if (b->offset < 0 || b->elem_offset < 0)
		return fail(err, errlen, "buffers[%d]: negative view offset", i);
	if (nbytes(b->rank, b->shape, size) == 0)
		return 0;
	int64_t end = b->elem_offset, t;
	int over = 0;
	for (int d = 0; d < b->rank; d++)
		over |= __builtin_mul_overflow(b->shape[d] - 1, b->strides[d],
					       &t) ||
			__builtin_add_overflow(end, t, &end);
	over |= __builtin_add_overflow(end, 1, &end) ||
		__builtin_mul_overflow(end, (int64_t)size, &end) ||
		__builtin_add_overflow(end, b->offset, &end);
	if (over || end > p->buffers[b->base].bytes)
		return fail(err, errlen, "buffers[%d]: view extends past its "
			    "base buffer %d", i, b->base);
	return 0;
}

/* Check launch "l" (index "i") of "p"; 0 or -1 with a message in "err". */
static int check_launch(const struct pb_plan *p, const struct pb_plan_launch *l,
			int i, char *err, size_t errlen)
{
	if (!l->kernel || !*l->kernel)
		return fail(err, errlen, "launches[%d]: no kernel name", i);
	for (int d = 0; d < 3; d++)
		if (l->grid[d] < 1 || l->block[d] < 1)
			return fail(err, errlen, "launches[%d]: grid and block "
				    "sizes must be positive", i);
	if (l->grid[0] > 2147483647 || l->grid[1] > 65535 ||
	    l->grid[2] > 65535)
		return fail(err, errlen, "launches[%d]: grid [%lld, %lld, %lld] "
			    "exceeds CUDA's limits [2147483647, 65535, 65535]",
			    i, (long long)l->grid[0], (long long)l->grid[1],
			    (long long)l->grid[2]);
	if (l->block[0] > 1024 || l->block[1] > 1024 || l->block[2] > 1024 ||
	    l->block[0] * l->block[1] * l->block[2] > 1024)
		return fail(err, errlen, "launches[%d]: more than 1024 threads "
			    "per block", i);
	if (l->smem < 0)
		return fail(err, errlen, "launches[%d]: negative shared memory",
			    i);
	for (int j = 0; j < l->nargs; j++) {
		const struct pb_plan_arg *a = &l->args[j];
		if (a->kind == PB_PLAN_ARG_BUFFER &&
		    (a->buffer < 0 || a->buffer >= p->nbuffers))
			return fail(err, errlen, "launches[%d].args[%d]: no "
				    "buffer %d", i, j, a->buffer);
		if (a->kind == PB_PLAN_ARG_SCALAR && !known_scalar(a->type))
			return fail(err, errlen, "launches[%d].args[%d]: unknown "
				    "scalar type '%s'", i, j,
				    a->type ? a->type : "");
	}
	return 0;
}

int pb_plan_check(const struct pb_plan *p, char *err, size_t errlen)
{
	if (p->version != PB_PLAN_VERSION)
		return fail(err, errlen, "unsupported plan version %d",
			    p->version);
	for (int i = 0; i < p->nbuffers; i++)
		if (check_buffer(p, &p->buffers[i], i, err, errlen))
			return -1;
	for (int i = 0; i < p->nlaunches; i++)
		if (check_launch(p, &p->launches[i], i, err, errlen))
			return -1;
	return pb_plan_check_arena(p, err, errlen);
}

/* ---- writer ---- */

static json_t *int_array(int n, const int64_t *v)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

/* Buffer "b" as JSON; a scratch buffer that launches use gets its live
 * range "first".."last" (launch indices). */
static json_t *buffer_json(const struct pb_plan_buffer *b, int first,
			   int last)
{
	json_t *o = json_object();
	json_object_set_new(o, "id", json_integer(b->id));
	json_object_set_new(o, "kind", json_string(pb_plan_kind_name(b->kind)));
	if (b->name)
		json_object_set_new(o, "name", json_string(b->name));
	if (b->arg >= 0)
		json_object_set_new(o, "arg", json_integer(b->arg));
	json_object_set_new(o, "dtype", json_string(b->dtype));
	json_object_set_new(o, "shape", int_array(b->rank, b->shape));
	if (b->perm) {
		int64_t v[64];
		for (int d = 0; d < b->rank && d < 64; d++)
			v[d] = b->perm[d];
		json_object_set_new(o, "perm", int_array(b->rank, v));
	}
	json_object_set_new(o, "bytes", json_integer(b->bytes));
	if (b->arena_offset >= 0)
		json_object_set_new(o, "arena_offset",
				    json_integer(b->arena_offset));
	if (b->kind == PB_PLAN_SCRATCH && first >= 0) {
		int64_t live[2] = {first, last};
		json_object_set_new(o, "live", int_array(2, live));
	}
	if (b->kind != PB_PLAN_VIEW)
		return o;
	json_object_set_new(o, "base", json_integer(b->base));
	json_object_set_new(o, "offset", json_integer(b->offset));
	json_object_set_new(o, "elem_offset", json_integer(b->elem_offset));
	json_object_set_new(o, "strides", int_array(b->rank, b->strides));
	return o;
}

static json_t *launch_json(const struct pb_plan_launch *l)
{
	json_t *o = json_object(), *nodes = json_array(), *args = json_array();
	json_object_set_new(o, "kernel", json_string(l->kernel));
	json_object_set_new(o, "origin",
			    l->origin ? json_string(l->origin) : json_null());
	for (int i = 0; i < l->nnodes; i++)
		json_array_append_new(nodes, json_string(l->nodes[i]));
	json_object_set_new(o, "nodes", nodes);
	json_object_set_new(o, "grid", int_array(3, l->grid));
	json_object_set_new(o, "block", int_array(3, l->block));
	json_object_set_new(o, "smem", json_integer(l->smem));
	for (int i = 0; i < l->nargs; i++) {
		const struct pb_plan_arg *a = &l->args[i];
		json_t *x = json_object();
		if (a->kind == PB_PLAN_ARG_BUFFER) {
			json_object_set_new(x, "buffer", json_integer(a->buffer));
		} else {
			json_object_set_new(x, "type", json_string(a->type));
			json_object_set_new(x, "value",
					    is_float_type(a->type)
						    ? json_real(a->f)
						    : json_integer(a->i));
		}
		json_array_append_new(args, x);
	}
	json_object_set_new(o, "args", args);
	return o;
}

struct strbuf {
	char *data;
	size_t len, cap;
};

static void put(struct strbuf *s, const char *t)
{
	size_t n = strlen(t);
	if (s->len + n + 1 > s->cap) {
		s->cap = (s->len + n + 1) * 2;
		s->data = realloc(s->data, s->cap);
		if (!s->data)
			abort();
	}
	memcpy(s->data + s->len, t, n + 1);
	s->len += n;
}

/* Append "j" as one line of JSON to "s", freeing "j". */
static void put_json(struct strbuf *s, json_t *j)
{
	char *t = json_dumps(j, JSON_ENCODE_ANY | JSON_PRESERVE_ORDER |
					JSON_REAL_PRECISION(17));
	if (!t)
		abort();
	put(s, t);
	free(t);
	json_decref(j);
}

/* Start a new line in "s" with "prefix". */
static void line(struct strbuf *s, const char *prefix)
{
	if (s->len)
		put(s, "\n");
	if (prefix)
		put(s, prefix);
}

/* Append the list "key" (" \"buffers\": [") of the elements of "items"
 * (freed) to "s", each on a line of its own after "prefix", and "end". */
static void put_list(struct strbuf *s, const char *prefix, const char *key,
		     json_t *items, const char *end)
{
	size_t n = json_array_size(items);
	line(s, prefix);
	put(s, key);
	for (size_t i = 0; i < n; i++) {
		line(s, prefix);
		put(s, "  ");
		put_json(s, json_incref(json_array_get(items, i)));
		if (i + 1 < n)
			put(s, ",");
	}
	json_decref(items);
	put(s, end);
}

/* The memory footprint of "p" as JSON (derived: readers ignore it). */
static json_t *memory_json(const struct pb_plan *p)
{
	struct pb_plan_memory m;
	json_t *o = json_object();
	pb_plan_memory(p, &m);
	json_object_set_new(o, "peak", json_integer(m.peak));
	json_object_set_new(o, "arena", m.arena >= 0 ? json_integer(m.arena)
						     : json_null());
	json_object_set_new(o, "intermediates", json_integer(m.intermediates));
	json_object_set_new(o, "live_max", json_integer(m.live_max));
	json_object_set_new(o, "inputs", json_integer(m.inputs));
	json_object_set_new(o, "outputs", json_integer(m.outputs));
	json_object_set_new(o, "params", json_integer(m.params));
	return o;
}

char *pb_plan_to_json(const struct pb_plan *p, const char *prefix)
{
	struct strbuf s = {0};
	char num[32];
	line(&s, prefix);
	snprintf(num, sizeof(num), "%d", p->version);
	put(&s, "{\"version\": ");
	put(&s, num);
	put(&s, ", \"arch\": ");
	put_json(&s, p->arch ? json_string(p->arch) : json_null());
	put(&s, ", \"source\": ");
	put_json(&s, p->source ? json_string(p->source) : json_null());
	if (p->arena >= 0) {
		snprintf(num, sizeof(num), "%lld", (long long)p->arena);
		put(&s, ", \"arena\": ");
		put(&s, num);
	}
	put(&s, ",");
	line(&s, prefix);
	put(&s, " \"memory\": ");
	put_json(&s, memory_json(p));
	put(&s, ",");
	int *first = malloc(sizeof(int) * (p->nbuffers + 1));
	int *last = malloc(sizeof(int) * (p->nbuffers + 1));
	if (!first || !last)
		abort();
	pb_plan_liveness(p, first, last);
	json_t *bufs = json_array(), *launches = json_array();
	for (int i = 0; i < p->nbuffers; i++)
		json_array_append_new(bufs, buffer_json(&p->buffers[i],
							first[i], last[i]));
	free(first);
	free(last);
	for (int i = 0; i < p->nlaunches; i++)
		json_array_append_new(launches, launch_json(&p->launches[i]));
	put_list(&s, prefix, " \"buffers\": [", bufs, "],");
	put_list(&s, prefix, " \"launches\": [", launches, "]}\n");
	return s.data;
}

char *pb_plan_to_header(const struct pb_plan *p)
{
	struct strbuf s = {0};
	char *json = pb_plan_to_json(p, "// ");
	put(&s, PB_PLAN_BEGIN "\n");
	put(&s, json);
	put(&s, PB_PLAN_END "\n");
	free(json);
	return s.data;
}

/* ---- reader ---- */

/* The integer member "key" of "o" into "*v"; 0, or -1 when absent (and
 * "required") or not an integer. */
static int get_int(json_t *o, const char *key, int64_t *v, int required)
{
	json_t *j = json_object_get(o, key);
	if (!j)
		return required ? -1 : 0;
	if (!json_is_integer(j))
		return -1;
	*v = json_integer_value(j);
	return 0;
}

/* The string member "key" of "o", or NULL when absent or no string. */
static const char *get_str(json_t *o, const char *key)
{
	json_t *j = json_object_get(o, key);
	return json_is_string(j) ? json_string_value(j) : NULL;
}

/* The integer array member "key" of "o": its length into "*n" and a
 * malloc'ed copy into "*v"; 0, or -1 when absent or malformed. */
static int get_ints(json_t *o, const char *key, int *n, int64_t **v)
{
	json_t *a = json_object_get(o, key), *x;
	size_t i;
	if (!json_is_array(a))
		return -1;
	*n = json_array_size(a);
	*v = calloc(*n + 1, sizeof(int64_t));
	if (!*v)
		abort();
	json_array_foreach(a, i, x) {
		if (!json_is_integer(x)) {
			free(*v);
			*v = NULL;
			return -1;
		}
		(*v)[i] = json_integer_value(x);
	}
	return 0;
}

static int parse_kind(const char *s, enum pb_plan_kind *k)
{
	for (int i = 0; s && i <= PB_PLAN_VIEW; i++)
		if (!strcmp(s, kind_names[i])) {
			*k = i;
			return 0;
		}
	return -1;
}

/* Read buffer "i" from "o" into "p"; 0 or -1 with a message in "err". */
static int read_buffer(struct pb_plan *p, json_t *o, int i, char *err,
		       size_t errlen)
{
	enum pb_plan_kind kind;
	int64_t id, arg = -1, bytes, base = -1, off = 0, eoff = 0, aoff = -1;
	int rank, nstrides = -1, nperm = -1;
	int64_t *shape = NULL, *strides = NULL, *perm = NULL;
	const char *dtype = get_str(o, "dtype");
	if (!json_is_object(o))
		return fail(err, errlen, "buffers[%d]: not an object", i);
	if (parse_kind(get_str(o, "kind"), &kind))
		return fail(err, errlen, "buffers[%d]: missing or unknown "
			    "'kind'", i);
	if (get_int(o, "id", &id, 1) || get_int(o, "arg", &arg, 0) ||
	    get_int(o, "bytes", &bytes, 1) || !dtype)
		return fail(err, errlen, "buffers[%d]: missing or malformed "
			    "'id', 'arg', 'dtype' or 'bytes'", i);
	if (get_int(o, "arena_offset", &aoff, 0) ||
	    (json_object_get(o, "arena_offset") && aoff < 0))
		return fail(err, errlen, "buffers[%d]: malformed "
			    "'arena_offset'", i);
	if (get_ints(o, "shape", &rank, &shape))
		return fail(err, errlen, "buffers[%d]: missing or malformed "
			    "'shape'", i);
	if (json_object_get(o, "strides") &&
	    get_ints(o, "strides", &nstrides, &strides)) {
		free(shape);
		return fail(err, errlen, "buffers[%d]: malformed 'strides'", i);
	}
	if (json_object_get(o, "perm") &&
	    (get_ints(o, "perm", &nperm, &perm) || nperm != rank)) {
		free(shape);
		free(strides);
		free(perm);
		return fail(err, errlen, "buffers[%d]: malformed 'perm' (an "
			    "array of its rank)", i);
	}
	if (kind == PB_PLAN_VIEW &&
	    (get_int(o, "base", &base, 1) || get_int(o, "offset", &off, 1) ||
	     get_int(o, "elem_offset", &eoff, 1) || nstrides != rank)) {
		free(shape);
		free(strides);
		free(perm);
		return fail(err, errlen, "buffers[%d]: a view needs 'base', "
			    "'offset', 'elem_offset' and 'strides' of its "
			    "rank", i);
	}
	struct pb_plan_buffer *b = add(p, kind, dtype, rank, shape);
	if (!b) {
		free(shape);
		free(strides);
		free(perm);
		return fail(err, errlen, "buffers[%d]: unknown dtype '%s'", i,
			    dtype);
	}
	if (perm) {
		b->perm = calloc(rank + 1, sizeof(int));
		if (!b->perm)
			abort();
		for (int d = 0; d < rank; d++)
			b->perm[d] = perm[d] < 0 || perm[d] > 64 ? -1
								   : (int)perm[d];
		free(perm);
	}
	b->id = id;
	b->arg = arg;
	b->name = dup(get_str(o, "name"));
	b->bytes = bytes;
	b->base = base;
	b->offset = off;
	b->elem_offset = eoff;
	b->arena_offset = aoff;
	if (nstrides == rank && rank)
		memcpy(b->strides, strides, rank * sizeof(int64_t));
	else
		for (int64_t d = rank - 1, s = 1; d >= 0; d--) {
			b->strides[d] = s;
			s *= shape[d];
		}
	free(shape);
	free(strides);
	return 0;
}

/* Read argument "j" of launch "i" from "o" into "l". */
static int read_arg(struct pb_plan_launch *l, json_t *o, int i, int j,
		    char *err, size_t errlen)
{
	int64_t buf;
	json_t *v = json_object_get(o, "value");
	const char *type = get_str(o, "type");
	if (json_is_object(o) && json_object_get(o, "buffer")) {
		if (get_int(o, "buffer", &buf, 1))
			return fail(err, errlen, "launches[%d].args[%d]: "
				    "malformed 'buffer'", i, j);
		pb_plan_launch_add_buffer(l, buf);
		return 0;
	}
	if (!known_scalar(type) || !json_is_number(v))
		return fail(err, errlen, "launches[%d].args[%d]: expected "
			    "{\"buffer\": id} or {\"type\": t, \"value\": v}",
			    i, j);
	if (!is_float_type(type) && !json_is_integer(v))
		return fail(err, errlen, "launches[%d].args[%d]: integer "
			    "scalar expected", i, j);
	if (is_float_type(type))
		pb_plan_launch_add_scalar(l, type, 0, json_number_value(v));
	else
		pb_plan_launch_add_scalar(l, type, json_integer_value(v), 0);
	return 0;
}

/* Read launch "i" from "o" into "p"; 0 or -1 with a message in "err". */
static int read_launch(struct pb_plan *p, json_t *o, int i, char *err,
		       size_t errlen)
{
	int ng = 0, nb = 0;
	int64_t *grid = NULL, *block = NULL, smem = 0;
	json_t *nodes = json_object_get(o, "nodes"), *args, *x;
	const char *kernel = get_str(o, "kernel");
	size_t k;
	if (!json_is_object(o) || !kernel)
		return fail(err, errlen, "launches[%d]: missing 'kernel'", i);
	if (get_ints(o, "grid", &ng, &grid) | get_ints(o, "block", &nb, &block) ||
	    ng != 3 || nb != 3 || get_int(o, "smem", &smem, 0)) {
		free(grid);
		free(block);
		return fail(err, errlen, "launches[%d]: 'grid' and 'block' "
			    "must be arrays of 3 integers", i);
	}
	struct pb_plan_launch *l = pb_plan_add_launch(
		p, kernel, get_str(o, "origin"), 0, NULL, grid, block, smem);
	free(grid);
	free(block);
	if (nodes && !json_is_array(nodes))
		return fail(err, errlen, "launches[%d]: 'nodes' is no array", i);
	json_array_foreach(nodes, k, x) {
		if (!json_is_string(x))
			return fail(err, errlen, "launches[%d]: 'nodes' must "
				    "hold strings", i);
		l->nodes = realloc(l->nodes, (l->nnodes + 2) * sizeof(char *));
		l->nodes[l->nnodes++] = strdup(json_string_value(x));
	}
	args = json_object_get(o, "args");
	if (!json_is_array(args))
		return fail(err, errlen, "launches[%d]: missing 'args'", i);
	json_array_foreach(args, k, x)
		if (read_arg(l, x, i, k, err, errlen))
			return -1;
	return 0;
}

/* Read the plan in "root" into "p"; 0 or -1 with a message in "err". */
static int read_plan(struct pb_plan *p, json_t *root, char *err,
		     size_t errlen)
{
	int64_t version;
	json_t *bufs = json_object_get(root, "buffers");
	json_t *launches = json_object_get(root, "launches"), *x;
	size_t i;
	if (!json_is_object(root))
		return fail(err, errlen, "the plan is not a JSON object");
	if (get_int(root, "version", &version, 1))
		return fail(err, errlen, "missing 'version'");
	if (version != PB_PLAN_VERSION)
		return fail(err, errlen, "unsupported plan version %lld",
			    (long long)version);
	if (!json_is_array(bufs) || !json_is_array(launches))
		return fail(err, errlen, "missing 'buffers' or 'launches'");
	if (get_int(root, "arena", &p->arena, 0) ||
	    (json_object_get(root, "arena") && p->arena < 0))
		return fail(err, errlen, "malformed 'arena'");
	p->arch = dup(get_str(root, "arch"));
	p->source = dup(get_str(root, "source"));
	json_array_foreach(bufs, i, x)
		if (read_buffer(p, x, i, err, errlen))
			return -1;
	json_array_foreach(launches, i, x)
		if (read_launch(p, x, i, err, errlen))
			return -1;
	return pb_plan_check(p, err, errlen);
}

struct pb_plan *pb_plan_from_json(const char *text, size_t len, char *err,
				  size_t errlen)
{
	json_error_t je;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		fail(err, errlen, "malformed plan JSON at line %d: %s", je.line,
		     je.text);
		return NULL;
	}
	struct pb_plan *p = pb_plan_alloc(NULL, NULL);
	if (read_plan(p, root, err, errlen)) {
		pb_plan_free(p);
		p = NULL;
	}
	json_decref(root);
	return p;
}

/* The line starting at "*pos" in "text" (length "len"): its start, and
 * its length without the newline into "*n"; advances "*pos". */
static const char *next_line(const char *text, size_t len, size_t *pos,
			     size_t *n)
{
	const char *s = text + *pos, *e = memchr(s, '\n', len - *pos);
	*n = e ? (size_t)(e - s) : len - *pos;
	*pos += *n + (e ? 1 : 0);
	if (*n && s[*n - 1] == '\r')
		(*n)--;
	return s;
}

static int is_marker(const char *s, size_t n, const char *marker)
{
	size_t m = strlen(marker);
	while (n > m && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return n == m && !memcmp(s, marker, m);
}

struct pb_plan *pb_plan_from_ptx(const char *text, size_t len, char *err,
				 size_t errlen)
{
	struct strbuf s = {0};
	size_t pos = 0, n;
	int state = 0; /* 0 before, 1 inside, 2 after the header */
	while (pos < len && state < 2) {
		const char *l = next_line(text, len, &pos, &n);
		if (state == 0) {
			state = is_marker(l, n, PB_PLAN_BEGIN);
			continue;
		}
		if (is_marker(l, n, PB_PLAN_END)) {
			state = 2;
			break;
		}
		if (n < 2 || l[0] != '/' || l[1] != '/') {
			free(s.data);
			fail(err, errlen, "plan header line without '//'");
			return NULL;
		}
		char *t = strndup(l + 2, n - 2);
		put(&s, t);
		put(&s, "\n");
		free(t);
	}
	if (state != 2) {
		free(s.data);
		fail(err, errlen, state ? "unterminated plan header (no '"
				      PB_PLAN_END "')"
					: "no plan header ('" PB_PLAN_BEGIN
					  "') in the PTX");
		return NULL;
	}
	struct pb_plan *p = pb_plan_from_json(s.data ? s.data : "",
					      s.len, err, errlen);
	free(s.data);
	return p;
}

/* ---- the cubin of a tile artifact ---- */

static const char b64[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void pb_plan_put_cubin(char **text, size_t *tlen, const void *cubin,
		       size_t len)
{
	const unsigned char *c = cubin;
	size_t lines = (len + 56) / 57 + 1;
	size_t cap = *tlen + 64 + 4 * ((len + 2) / 3) + 5 * lines + 32;
	char *t = realloc(*text, cap), *p;
	if (!t)
		return;
	p = t + *tlen;
	p += sprintf(p, PB_PLAN_CUBIN "%zu\n", len);
	for (size_t i = 0; i < len; i += 57) {
		size_t end = i + 57 < len ? i + 57 : len;
		p += sprintf(p, "// ");
		for (size_t j = i; j < end; j += 3) {
			unsigned v = c[j] << 16;
			if (j + 1 < end)
				v |= c[j + 1] << 8;
			if (j + 2 < end)
				v |= c[j + 2];
			*p++ = b64[v >> 18];
			*p++ = b64[(v >> 12) & 63];
			*p++ = j + 1 < end ? b64[(v >> 6) & 63] : '=';
			*p++ = j + 2 < end ? b64[v & 63] : '=';
		}
		*p++ = '\n';
	}
	p += sprintf(p, PB_PLAN_CUBIN_END "\n");
	*tlen = p - t;
	*text = t;
}

/* The value of base64 digit "c", or -1. */
static int b64_digit(int c)
{
	const char *p = c ? strchr(b64, c) : NULL;
	return p ? (int)(p - b64) : -1;
}

int pb_plan_get_cubin(const char *text, size_t len, unsigned char **cubin,
		      size_t *n, char *err, size_t errlen)
{
	const char *p = memmem(text, len, PB_PLAN_CUBIN, strlen(PB_PLAN_CUBIN));
	const char *end = text + len;
	*cubin = NULL;
	*n = 0;
	if (!p)
		return 1;
	p += strlen(PB_PLAN_CUBIN);
	char *q;
	unsigned long long want = strtoull(p, &q, 10);
	if (q == p || want == 0 || want > (1ull << 31)) {
		snprintf(err, errlen, "bad cubin size");
		return -1;
	}
	unsigned char *out = malloc(want + 3);
	size_t k = 0;
	unsigned v = 0;
	int nd = 0;
	p = q;
	while (p < end && out) {
		const char *eol = memchr(p, '\n', end - p);
		if (!eol)
			eol = end;
		size_t m = eol - p;
		if (m >= strlen(PB_PLAN_CUBIN_END) &&
		    !strncmp(p, PB_PLAN_CUBIN_END, strlen(PB_PLAN_CUBIN_END)))
			break;
		if (m >= 3 && !strncmp(p, "// ", 3))
			p += 3;
		for (const char *s = p; s < eol; s++) {
			int d = b64_digit(*s);
			if (d < 0)
				continue; /* padding */
			v = v << 6 | d;
			if (++nd == 4) {
				if (k + 3 <= want + 3) {
					out[k++] = v >> 16;
					out[k++] = v >> 8;
					out[k++] = v;
				}
				v = 0;
				nd = 0;
			}
		}
		p = eol + 1;
	}
	if (nd == 2 && k + 1 <= want + 3)
		out[k++] = v >> 4;
	else if (nd == 3 && k + 2 <= want + 3) {
		out[k++] = v >> 10;
		out[k++] = v >> 2;
	}
	if (!out || k < want || p >= end) {
		free(out);
		snprintf(err, errlen, "truncated cubin section (%zu of %llu "
			 "bytes)", k, want);
		return -1;
	}
	*cubin = out;
	*n = want;
	return 0;
}
