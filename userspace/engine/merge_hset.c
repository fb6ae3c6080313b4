// SPDX-License-Identifier: Apache-2.0
/* The merge's open-addressing hash set of non-zero u64 keys. */
#include "engine/merge_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int np_hset_init(struct hset *s, size_t want, bool with_v)
{
	size_t cap = 16;
	int bits = 4;

	while (cap < 2 * want) {
		cap <<= 1;
		bits++;
	}
	memset(s, 0, sizeof(*s));
	s->k = calloc(cap, sizeof(*s->k));
	if (with_v)
		s->v = calloc(cap, sizeof(*s->v));
	if (!s->k || (with_v && !s->v)) {
		free(s->k);
		free(s->v);
		s->k = NULL;
		s->v = NULL;
		return -ENOMEM;
	}
	s->cap = cap;
	s->shift = 64 - bits;
	s->with_v = with_v;
	return 0;
}

void np_hset_free(struct hset *s)
{
	free(s->k);
	free(s->v);
	s->k = NULL;
	s->v = NULL;
}

void np_hset_clear(struct hset *s)
{
	memset(s->k, 0, s->cap * sizeof(*s->k));
	s->n = 0;
}

int np_hset_grow(struct hset *s)
{
	struct hset t;
	int r;

	if ((r = np_hset_init(&t, s->cap, s->with_v)))
		return r;
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->k[i])
			continue;
		size_t j = hset_probe(&t, s->k[i]);
		t.k[j] = s->k[i];
		if (s->with_v)
			t.v[j] = s->v[i];
	}
	t.n = s->n;
	np_hset_free(s);
	*s = t;
	return 0;
}
