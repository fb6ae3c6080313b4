// SPDX-License-Identifier: Apache-2.0
#include "numaplace/strmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a, 64 bit, folded to 32. */
static uint32_t hash_str(const char *s)
{
	unsigned long long h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (uint32_t)(h ^ (h >> 32));
}

static const char *key_of(const struct np_strmap *m, size_t i)
{
	return m->keys + m->slot[i].key - 1;
}

static size_t find(const struct np_strmap *m, const char *key, uint32_t h)
{
	size_t mask = m->cap - 1, i = h & mask;

	while (m->slot[i].key &&
	       (m->slot[i].hash != h || strcmp(key_of(m, i), key)))
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

/* The slots rehashed into a table twice as large (keys stay put). */
static int grow(struct np_strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 16, oldcap = m->cap, mask = cap - 1;
	struct np_strmap_slot *old = m->slot, *s = calloc(cap, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < oldcap; i++) {
		size_t k;
		if (!old[i].key)
			continue;
		for (k = old[i].hash & mask; s[k].key; k = (k + 1) & mask)
			;
		s[k] = old[i];
	}
	free(old);
	m->slot = s;
	m->cap = cap;
	return 0;
}

/*
 * Room for need more bytes of keys: the live keys copied into a new
 * buffer (dropping the dead ones) of at least twice their size, when the
 * buffer is full. 0 or -ENOMEM (nothing changed).
 */
static int key_room(struct np_strmap *m, size_t need)
{
	size_t live = m->klen - m->kdead, cap = 256, len = 0;
	char *b;

	if (m->klen + need <= m->kcap)
		return 0;
	while (cap < 2 * (live + need) || cap < m->cap)
		cap *= 2;
	if (cap > UINT32_MAX)
		return -ENOMEM;
	if (!(b = malloc(cap)))
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		size_t n;
		if (!m->slot[i].key)
			continue;
		n = strlen(key_of(m, i)) + 1;
		memcpy(b + len, key_of(m, i), n);
		m->slot[i].key = (uint32_t)(len + 1);
		len += n;
	}
	free(m->keys);
	m->keys = b;
	m->kcap = cap;
	m->klen = len;
	m->kdead = 0;
	return 0;
}

int np_strmap_put(struct np_strmap *m, const char *key, long value)
{
	uint32_t h = hash_str(key);
	size_t i, n = strlen(key) + 1;

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
	 * slots of 16 bytes, not 32,768). */
	if ((m->n + 1) * 4 > m->cap * 3 && grow(m))
		return -ENOMEM;
	/* a key inside the buffer (the tail of a live key, a dead key's
	 * bytes) would move with it: put a copy */
	if ((uintptr_t)key >= (uintptr_t)m->keys &&
	    (uintptr_t)key < (uintptr_t)m->keys + m->kcap &&
	    m->klen + n > m->kcap) {
		char *copy = strdup(key);
		int r = copy ? np_strmap_put(m, copy, value) : -ENOMEM;
		free(copy);
		return r;
	}
	if (key_room(m, n))
		return -ENOMEM;
	i = find(m, key, h);
	memcpy(m->keys + m->klen, key, n);
	m->slot[i].key = (uint32_t)(m->klen + 1);
	m->slot[i].hash = h;
	m->slot[i].value = value;
	m->klen += n;
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
	m->kdead += strlen(key) + 1;
	m->slot[i].key = 0;
	if (!--m->n)
		m->klen = m->kdead = 0;
	/* Backward shift: move later entries of the probe run into the hole
	 * when their home slot is not between the hole and them. */
	for (j = (i + 1) & mask; m->slot[j].key; j = (j + 1) & mask) {
		size_t home = m->slot[j].hash & mask;
		bool stays = i <= j ? (i < home && home <= j)
				    : (i < home || home <= j);
		if (stays)
			continue;
		m->slot[i] = m->slot[j];
		m->slot[j].key = 0;
		i = j;
	}
}

void np_strmap_free(struct np_strmap *m)
{
	free(m->slot);
	free(m->keys);
	*m = (struct np_strmap){0};
}
