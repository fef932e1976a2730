/* A map from pointers to ints by open addressing (pb.h). */
#include <stdint.h>
#include <stdlib.h>

#include "core/pb.h"

/* The slot of "key" in "m": where it is, or the empty one where it goes. */
static size_t slot(const struct pb_ptrmap *m, const void *key)
{
	uint64_t h = (uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 17) & (m->cap - 1);
	while (m->key[i] && m->key[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

void pb_ptrmap_put(struct pb_ptrmap *m, const void *key, int val)
{
	if (2 * (m->n + 1) > m->cap) {
		struct pb_ptrmap g = {m->cap ? 2 * m->cap : 64, 0, NULL, NULL};
		g.key = calloc(g.cap, sizeof(*g.key));
		g.val = calloc(g.cap, sizeof(*g.val));
		if (!g.key || !g.val)
			abort();
		for (size_t i = 0; i < m->cap; i++)
			if (m->key[i])
				pb_ptrmap_put(&g, m->key[i], m->val[i]);
		pb_ptrmap_free(m);
		*m = g;
	}
	size_t i = slot(m, key);
	if (!m->key[i]) {
		m->key[i] = key;
		m->n++;
	}
	m->val[i] = val;
}

int pb_ptrmap_get(const struct pb_ptrmap *m, const void *key)
{
	if (!m->cap)
		return -1;
	size_t i = slot(m, key);
	return m->key[i] ? m->val[i] : -1;
}

void pb_ptrmap_free(struct pb_ptrmap *m)
{
	free(m->key);
	free(m->val);
	m->key = NULL;
	m->val = NULL;
	m->cap = m->n = 0;
}
