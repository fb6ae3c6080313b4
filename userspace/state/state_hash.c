// SPDX-License-Identifier: Apache-2.0
/*
 * FNV-1a 64, the state directory's checksum and fingerprints
 * (numaplace/state_file.h): over bytes, over a JSON value's compact,
 * key-sorted dump, and as the "fnv1a64:<16 hex>" string the state file and
 * the journal hold. Used by the state file, its stream and the journal;
 * it calls none of them.
 */
#include "numaplace/state_file.h"
#include "state_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FNV64_PRIME 0x100000001b3ULL

uint64_t np_fnv1a64_update(uint64_t h, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= FNV64_PRIME;
	}
	return h;
}

uint64_t np_fnv1a64(const void *buf, size_t len)
{
	return np_fnv1a64_update(NP_FNV1A64_INIT, buf, len);
}

static int hash_chunk(const char *buf, size_t len, void *data)
{
	uint64_t *h = data;

	*h = np_fnv1a64_update(*h, buf, len);
	return 0;
}

/* Over the compact, key-sorted dump, hashed as it is produced (the same
 * bytes as json_dumps gives, without holding them: a state body of
 * 10,000 workloads is about 10 MB). */
uint64_t np_json_fnv1a64(const json_t *j)
{
	uint64_t h = NP_FNV1A64_INIT;

	if (json_dump_callback(j, hash_chunk, &h,
			       JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY))
		return 0;
	return h;
}

json_t *np_statefile_hash_json(uint64_t h)
{
	char buf[32];
	snprintf(buf, sizeof(buf), NP_STATEFILE_HASH_PREFIX "%016" PRIx64, h);
	return json_string(buf);
}

int np_statefile_hash_parse(const json_t *j, uint64_t *h)
{
	const char *s = json_string_value(j);
	char *end;

	if (!s || strncmp(s, NP_STATEFILE_HASH_PREFIX, strlen(NP_STATEFILE_HASH_PREFIX)) ||
	    strlen(s) != strlen(NP_STATEFILE_HASH_PREFIX) + 16)
		return -EINVAL;
	s += strlen(NP_STATEFILE_HASH_PREFIX);
	for (const char *p = s; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return -EINVAL;
	errno = 0;
	*h = strtoull(s, &end, 16);
	return errno || *end ? -EINVAL : 0;
}
