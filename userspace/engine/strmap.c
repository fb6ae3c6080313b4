// SPDX-License-Identifier: Apache-2.0
#include "numaplace/strmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a, 64 bit. */
static unsigned long hash_str(const char *s)
{
	unsigned long long h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (unsigned long)(h ^ (h >> 29));
}

static size_t find(const struct np_strmap *m, const char *key,
		   unsigned long h)
{
	size_t mask = m->cap - 1, i = h & mask;

	while (m->slot[i].key &&
	       (m->slot[i].hash != h || strcmp(m->slot[i].key, key)))
		i = (i + 1) & mask;
	return i;
}

bool np_strmap_get(const struct np_strmap *m, const char *key, long *value)
{
	size_t i;

	if (!m->cap)
		return false;
	i = find(m, key, hash_str(key));
	if (!m->slot[i].key)
		return false;
	if (value)
		*value = m->slot[i].value;
	return true;
}

static int grow(struct np_strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 16;
	struct np_strmap_slot *old = m->slot, *s = calloc(cap, sizeof(*s));
	size_t oldcap = m->cap;

	if (!s)
		return -ENOMEM;
	m->slot = s;
	m->cap = cap;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].key)
			m->slot[find(m, old[i].key, old[i].hash)] = old[i];
	free(old);
	return 0;
}

int np_strmap_put(struct np_strmap *m, const char *key, long value)
{
	unsigned long h = hash_str(key);
	size_t i;
	char *k;

	if (m->cap) {
		i = find(m, key, h);
		if (m->slot[i].key) {
			m->slot[i].value = value;
			return 0;
		}
	}
	/* Keep the load factor at most 3/4: with the hash kept in the slot
	 * a probe compares keys only on a full hash match, and 3/4 halves
	 * the table of a map just past a power of two (10,000 keys: 16,384
	 * slots of 24 bytes, not 32,768). */
	if ((m->n + 1) * 4 > m->cap * 3 && grow(m))
		return -ENOMEM;
	if (!(k = strdup(key)))
		return -ENOMEM;
	i = find(m, key, h);
	m->slot[i].key = k;
	m->slot[i].hash = h;
	m->slot[i].value = value;
	m->n++;
	return 0;
}

void np_strmap_del(struct np_strmap *m, const char *key)
{
	size_t mask = m->cap - 1, i, j;

	if (!m->cap)
		return;
	i = find(m, key, hash_str(key));
	if (!m->slot[i].key)
		return;
	free(m->slot[i].key);
	m->slot[i].key = NULL;
	m->n--;
	/* Backward shift: move later entries of the probe run into the hole
	 * when their home slot is not between the hole and them. */
	for (j = (i + 1) & mask; m->slot[j].key; j = (j + 1) & mask) {
		size_t home = m->slot[j].hash & mask;
		bool stays = i <= j ? (i < home && home <= j)
				    : (i < home || home <= j);
		if (stays)
			continue;
		m->slot[i] = m->slot[j];
		m->slot[j].key = NULL;
		i = j;
	}
}

void np_strmap_free(struct np_strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slot[i].key);
	free(m->slot);
	m->slot = NULL;
	m->cap = m->n = 0;
}
