/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Validated field access on jansson objects. Every error message names the
 * JSON path of the offending field ("topology.cpus[3].core: ...").
 */
#ifndef NUMAPLACE_JSON_UTIL_H
#define NUMAPLACE_JSON_UTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "numaplace/cpuset.h"
#include "numaplace/merge.h"

/* All getters: 0 = found and valid; -ENOENT = absent (or JSON null when
 * null_ok) and not required, *out untouched; -EINVAL = wrong type, out of
 * range, or required and absent (err set). */
int np_json_int(const json_t *obj, const char *key, const char *path,
		bool required, long long min, long long max, long long *out,
		char *err, size_t errlen);
int np_json_bool(const json_t *obj, const char *key, const char *path,
		 bool required, bool *out, char *err, size_t errlen);
int np_json_str(const json_t *obj, const char *key, const char *path,
		bool required, const char **out, char *err, size_t errlen);
/* A cpu-list string field parsed into a cpuset. */
int np_json_cpuset(const json_t *obj, const char *key, const char *path,
		   bool required, np_cpuset *out, char *err, size_t errlen);
/* Reject keys not in the NULL-terminated allowed list. */
int np_json_only_keys(const json_t *obj, const char *const *allowed,
		      const char *path, char *err, size_t errlen);
/* Set err to "PATH.KEY: MESSAGE" (printf style) and return -EINVAL. */
int np_json_fail(char *err, size_t errlen, const char *path, const char *key,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Build "path.key" / "path[i]" into buf. */
const char *np_json_path(char *buf, size_t len, const char *path,
			 const char *key, int index);

/* Builders (NULL on ENOMEM): a cpuset as its list string ("0-3,8"), a
 * node mask as its list, a hint as {"mask": [nodes] or null (any),
 * "preferred": bool}. */
json_t *np_json_cpuset_str(const np_cpuset *s);
json_t *np_json_nodemask(np_nodemask m);
json_t *np_json_hint(const struct np_hint *h);

#endif
