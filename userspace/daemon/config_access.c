// SPDX-License-Identifier: Apache-2.0
/* The configuration's "socket_read_group": who may read through the
 * control socket besides root (numaplace/config.h). */
#include "daemon/config_names.h"
#include "engine/json_util.h"
#include "numaplace/config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* A group name as shadow-utils makes them ([a-z_][a-z0-9_-]*, a "$" at
 * the end allowed), or a number: up to 32 characters. */
static bool group_ok(const char *s)
{
	size_t n = strlen(s);
	bool digits = n > 0;

	for (size_t i = 0; i < n; i++)
		digits &= s[i] >= '0' && s[i] <= '9';
	if (digits)
		return n <= 10;
	if (n < 1 || n > 32 || !((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		      s[i] == '-' || (s[i] == '$' && i == n - 1)))
			return false;
	return true;
}

int np_config_read_group_from_json(struct np_config *n, const json_t *j,
				   char *err, size_t errlen)
{
	const char *s;
	int r = np_json_str(j, "socket_read_group", "config", false, &s, err,
			    errlen);

	if (r == -ENOENT)
		return 0;
	if (r)
		return r;
	if (*s && !group_ok(s))
		return np_json_fail(err, errlen, "config", "socket_read_group",
				    "\"%.64s\" is not a group name or number "
				    "(\"\" = root only)",
				    s);
	if (!strcmp(s, "0") || !strcmp(s, "root"))
		return np_json_fail(err, errlen, "config", "socket_read_group",
				    "root may do anything already: give the "
				    "group that may only read, or \"\"");
	snprintf(n->socket_read_group, sizeof(n->socket_read_group), "%s", s);
	return 0;
}
