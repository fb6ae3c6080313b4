// SPDX-License-Identifier: Apache-2.0
/* systemd unit names that numaplace accepts (pure). */
#include "numaplace/admit.h"
#include "numaplace/error.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

static bool unit_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == ':' || c == '_' || c == '.' ||
	       c == '-' || c == '@' || c == '\\';
}

int np_systemd_unit_check(const char *unit, char *err, size_t errlen)
{
	static const char *const suffix[] = {".slice", ".scope", ".service"};
	size_t n = strlen(unit);
	bool ok = false;

	if (!n)
		return np_errf(err, errlen, -EINVAL, "unit name is empty");
	if (n > 255)
		return np_errf(err, errlen, -EINVAL,
			       "unit name is longer than 255 characters");
	if (strchr(unit, '/') || strstr(unit, ".."))
		return np_errf(err, errlen, -EINVAL,
			       "unit name \"%.300s\" must not contain '/' or "
			       "\"..\"",
			       unit);
	for (size_t i = 0; i < n; i++)
		if (!unit_char(unit[i]))
			return np_errf(err, errlen, -EINVAL,
				       "unit name \"%.300s\": character '%c' "
				       "is not allowed",
				       unit, unit[i]);
	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		size_t s = strlen(suffix[i]);
		ok |= n > s && !strcmp(unit + n - s, suffix[i]);
	}
	if (!ok)
		return np_errf(err, errlen, -EINVAL,
			       "\"%.300s\" is not a slice, scope or service "
			       "unit name (NAME.slice, NAME.scope or "
			       "NAME.service)",
			       unit);
	return 0;
}

