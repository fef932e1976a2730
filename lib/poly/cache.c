/* Parsed isl objects by their text (internal.h): lifting a block writes
 * the same few domains and whole-buffer relations for statement after
 * statement ("{ S[i0, i1] : 0 <= i0 < 56 and 0 <= i1 < 56 }" with only
 * the statement's name changing), and isl's parser costs more than the
 * rest of building a statement. Each text is parsed once; every caller
 * gets a copy of the same object, renamed, which is what parsing the
 * text with the name in it gives. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <isl/map.h>
#include <isl/set.h>

#include "poly/internal.h"

/* One parsed text: a set when "is_set", else a map. */
struct entry {
	char *text;
	uint64_t hash;
	int is_set;
	void *obj;
};

/* An open-addressing table of "cap" slots (a power of two), "n" used. */
struct pb_poly_cache {
	isl_ctx *ctx;
	int n, cap;
	struct entry *e;
};

struct pb_poly_cache *pb_poly_cache_new(isl_ctx *ctx)
{
	struct pb_poly_cache *c = calloc(1, sizeof(*c));
	if (!c)
		abort();
	c->ctx = ctx;
	return c;
}

void pb_poly_cache_free(struct pb_poly_cache *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->cap; i++) {
		struct entry *e = &c->e[i];
		if (!e->text)
			continue;
		free(e->text);
		if (e->is_set)
			isl_set_free(e->obj);
		else
			isl_map_free(e->obj);
	}
	free(c->e);
	free(c);
}

/* FNV-1a of string "s". */
static uint64_t hash_of(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The slot of "text" (hash "h", kind "is_set") in "c": its entry, or the
 * free slot where it goes. */
static struct entry *slot(struct pb_poly_cache *c, const char *text,
			  uint64_t h, int is_set)
{
	for (uint64_t i = h & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
		struct entry *e = &c->e[i];
		if (!e->text || (e->hash == h && e->is_set == is_set &&
				 !strcmp(e->text, text)))
			return e;
	}
}

/* Double the table of "c" (or make its first one). */
static void grow(struct pb_poly_cache *c)
{
	struct entry *old = c->e;
	int n = c->cap;
	c->cap = n ? 2 * n : 64;
	c->e = calloc(c->cap, sizeof(*c->e));
	if (!c->e)
		abort();
	for (int i = 0; i < n; i++)
		if (old[i].text)
			*slot(c, old[i].text, old[i].hash, old[i].is_set) = old[i];
	free(old);
}

/* The object parsed from "text" as a set ("is_set") or a map, kept in
 * "c" (not a copy); NULL when isl cannot parse it. */
static void *get(struct pb_poly_cache *c, const char *text, int is_set)
{
	if (2 * (c->n + 1) > c->cap)
		grow(c);
	uint64_t h = hash_of(text);
	struct entry *e = slot(c, text, h, is_set);
	if (e->text)
		return e->obj;
	void *obj = is_set ? (void *)isl_set_read_from_str(c->ctx, text)
			   : (void *)isl_map_read_from_str(c->ctx, text);
	if (!obj)
		return NULL;
	e->text = strdup(text);
	if (!e->text)
		abort();
	e->hash = h;
	e->is_set = is_set;
	e->obj = obj;
	c->n++;
	return obj;
}

__isl_give isl_set *pb_poly_cache_set(struct pb_poly_cache *c,
				      const char *text, const char *name)
{
	isl_set *s = isl_set_copy(get(c, text, 1));
	return name ? isl_set_set_tuple_name(s, name) : s;
}

__isl_give isl_map *pb_poly_cache_map(struct pb_poly_cache *c,
				      const char *text, const char *in,
				      const char *out)
{
	isl_map *m = isl_map_copy(get(c, text, 0));
	if (in)
		m = isl_map_set_tuple_name(m, isl_dim_in, in);
	if (out)
		m = isl_map_set_tuple_name(m, isl_dim_out, out);
	return m;
}
