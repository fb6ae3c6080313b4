/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small string-keyed hash map (open addressing, linear probing, backward
 * shift deletion) from a copied key to a long. Used as an index over the
 * daemon's arrays (name -> index) and by the cgroup file cache, so that
 * per-workload loops do not scan linearly. Not thread-safe.
 */
#ifndef NUMAPLACE_STRMAP_H
#define NUMAPLACE_STRMAP_H

#include <stdbool.h>
#include <stddef.h>

struct np_strmap_slot {
	char *key; /* NULL: empty */
	unsigned long hash;
	long value;
};

struct np_strmap {
	struct np_strmap_slot *slot;
	size_t cap; /* 0 or a power of two */
	size_t n;
};

/* The value of key, or false when absent. */
bool np_strmap_get(const struct np_strmap *m, const char *key, long *value);
/* Insert or update; 0 or -ENOMEM (the map is unchanged then). */
int np_strmap_put(struct np_strmap *m, const char *key, long value);
/* Remove key if present. */
void np_strmap_del(struct np_strmap *m, const char *key);
/* Empty the map (keeps nothing allocated). */
void np_strmap_free(struct np_strmap *m);

#endif
