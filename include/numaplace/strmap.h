/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small string-keyed hash map (open addressing, linear probing, backward
 * shift deletion) from a copied key to a long. Used as an index over the
 * daemon's arrays (name -> index) and by the cgroup file cache, so that
 * per-workload loops do not scan linearly. Not thread-safe.
 *
 * The keys are copied into one buffer per map (no allocation per key: a
 * 6-byte name costs 7 bytes, not a 32-byte heap chunk), and a slot is 16
 * bytes. Space of deleted keys is taken back when the buffer is full and
 * at least half of it is dead, and is never smaller than the slot table
 * (so that the slot scan of a compaction is paid for by the keys added
 * since the last one). Offsets are 32-bit: the buffer is at most 2 GiB,
 * about 1 GiB of live keys. A key given to np_strmap_put may point into
 * the map's own buffer (a key of np_strmap_key_at).
 */
#ifndef NUMAPLACE_STRMAP_H
#define NUMAPLACE_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct np_strmap_slot {
	uint32_t key;  /* 1 + offset of the key in the map's buffer; 0: empty */
	uint32_t hash;
	long value;
};

struct np_strmap {
	struct np_strmap_slot *slot;
	size_t cap; /* 0 or a power of two */
	size_t n;
	char *keys;   /* the keys, each with its NUL */
	size_t klen;  /* bytes used in keys (live and dead) */
	size_t kcap;  /* bytes allocated */
	size_t kdead; /* bytes of deleted keys */
};

/* The value of key, or false when absent. */
bool np_strmap_get(const struct np_strmap *m, const char *key, long *value);
/* Insert or update; 0 or -ENOMEM (the map is unchanged then). */
int np_strmap_put(struct np_strmap *m, const char *key, long value);
/* Remove key if present. */
void np_strmap_del(struct np_strmap *m, const char *key);
/* Empty the map (keeps nothing allocated). */
void np_strmap_free(struct np_strmap *m);
/* Iteration over slots 0..cap-1: the key of slot i, NULL when it is
 * empty (valid until the map next changes), and its value. */
static inline const char *np_strmap_key_at(const struct np_strmap *m, size_t i)
{
	return m->slot[i].key ? m->keys + m->slot[i].key - 1 : NULL;
}
static inline long np_strmap_value_at(const struct np_strmap *m, size_t i)
{
	return m->slot[i].value;
}

#endif
