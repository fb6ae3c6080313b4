// SPDX-License-Identifier: Apache-2.0
/* Validated field access on jansson objects, with JSON paths in errors. */
#include "engine/json_util.h"
#include "numaplace/cleanup.h"
#include "numaplace/error.h"

#include <errno.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *np_json_path(char *buf, size_t len, const char *path,
			 const char *key, int index)
{
	const char *p = path && *path ? path : "";
	if (key)
		snprintf(buf, len, "%s%s%s", p, *p ? "." : "", key);
	else
		snprintf(buf, len, "%s[%d]", p, index);
	return buf;
}

int np_json_fail(char *err, size_t errlen, const char *path, const char *key,
		 const char *fmt, ...)
{
	char where[256];
	size_t off;
	va_list ap;

	if (!err || !errlen)
		return -EINVAL;
	if (key) /* an unknown field's key is the user's */
		np_json_path(where, sizeof(where), path, np_echo(key), 0);
	else
		snprintf(where, sizeof(where), "%s", path && *path ? path : "input");
	snprintf(err, errlen, "%s: ", where);
	off = strlen(err);
	va_start(ap, fmt);
	vsnprintf(err + off, errlen - off, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const json_t *field(const json_t *obj, const char *key, const char *path,
			   bool required, int *r, char *err, size_t errlen)
{
	const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	*r = 0;
	if (!v || json_is_null(v)) {
		if (required)
			*r = np_json_fail(err, errlen, path, key,
					  "required field is missing");
		else
			*r = -ENOENT;
		return NULL;
	}
	return v;
}

int np_json_int(const json_t *obj, const char *key, const char *path,
		bool required, long long min, long long max, long long *out,
		char *err, size_t errlen)
{
	int r;
	const json_t *v = field(obj, key, path, required, &r, err, errlen);
	long long x;

	if (!v)
		return r;
	if (json_is_real(v)) {
		double d = json_real_value(v);
		/* a cast of a real outside long long is undefined: checked
		 * first (2^63 is exact as a double) */
		if (!(d >= -0x1p63 && d < 0x1p63))
			return np_json_fail(err, errlen, path, key,
					    "%g is out of range %lld..%lld", d,
					    min, max);
		if (d != (double)(long long)d)
			return np_json_fail(err, errlen, path, key,
					    "expected an integer, got %g", d);
		x = (long long)d;
	} else if (json_is_integer(v)) {
		x = json_integer_value(v);
	} else {
		return np_json_fail(err, errlen, path, key,
				    "expected an integer");
	}
	if (x < min || x > max)
		return np_json_fail(err, errlen, path, key,
				    "%lld is out of range %lld..%lld", x, min,
				    max);
	*out = x;
	return 0;
}

int np_json_bool(const json_t *obj, const char *key, const char *path,
		 bool required, bool *out, char *err, size_t errlen)
{
	int r;
	const json_t *v = field(obj, key, path, required, &r, err, errlen);

	if (!v)
		return r;
	if (!json_is_boolean(v))
		return np_json_fail(err, errlen, path, key,
				    "expected true or false");
	*out = json_is_true(v);
	return 0;
}

int np_json_str(const json_t *obj, const char *key, const char *path,
		bool required, const char **out, char *err, size_t errlen)
{
	int r;
	const json_t *v = field(obj, key, path, required, &r, err, errlen);

	if (!v)
		return r;
	if (!json_is_string(v))
		return np_json_fail(err, errlen, path, key, "expected a string");
	*out = json_string_value(v);
	return 0;
}

int np_json_cpuset(const json_t *obj, const char *key, const char *path,
		   bool required, np_cpuset *out, char *err, size_t errlen)
{
	const char *s;
	char perr[200];
	int r = np_json_str(obj, key, path, required, &s, err, errlen);

	if (r)
		return r;
	if (np_cpuset_parse(out, s, perr, sizeof(perr)) < 0)
		return np_json_fail(err, errlen, path, key,
				    "invalid cpu list: %s", perr);
	return 0;
}

int np_json_only_keys(const json_t *obj, const char *const *allowed,
		      const char *path, char *err, size_t errlen)
{
	const char *key;
	json_t *v;

	if (!json_is_object(obj))
		return np_json_fail(err, errlen, path, NULL,
				    "expected an object");
	json_object_foreach((json_t *)obj, key, v)
	{
		bool ok = false;
		(void)v;
		for (const char *const *a = allowed; *a; a++)
			if (strcmp(*a, key) == 0)
				ok = true;
		if (!ok)
			return np_json_fail(err, errlen, path, key,
					    "unknown field");
	}
	return 0;
}

json_t *np_json_cpuset_str(const np_cpuset *s)
{
	_cleanup_free_ char *str = np_cpuset_str(s);

	return str ? json_string(str) : NULL;
}

json_t *np_json_nodemask(np_nodemask m)
{
	char buf[256];
	np_nodemask_format(m, buf, sizeof(buf));
	return json_string(buf);
}

json_t *np_json_hint(const struct np_hint *h)
{
	json_t *mask = json_null();
	if (!h->any) {
		mask = json_array();
		NP_NODEMASK_FOREACH (n, h->mask)
			json_array_append_new(mask, json_integer(n));
	}
	return json_pack("{s:o,s:b}", "mask", mask, "preferred", h->preferred);
}
