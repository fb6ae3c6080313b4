// SPDX-License-Identifier: Apache-2.0
/*
 * systemd unit names and where systemd puts their cgroups: no bus call
 * here, so that what only checks names (the configuration, which the OCI
 * hook loads too) does not link libsystemd (see systemd_bus.h).
 */
#include "systemd_bus.h"
#include "numaplace/admit.h"
#include "numaplace/enforcer.h"
#include "numaplace/error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static bool is_slice(const char *u, size_t n)
{
	return n > 6 && !strncmp(u + n - 6, ".slice", 6);
}

/* systemd puts a unit where its name says: NAME.slice at the path its
 * dashes give (a-b.slice in a.slice/a-b.slice), any other unit directly
 * in a slice (or in the root). A path elsewhere is no unit's cgroup. */
static int unit_placed(const char *path, const char *last, char *err,
		       size_t errlen)
{
	char want[NP_CGROUP_PATH_MAX], slice[256], e2[256];
	const char *unit = last;
	size_t plen = strlen(path);

	if (!is_slice(last, strlen(last))) {
		const char *p;
		if (last == path)
			return 0; /* in the root slice, as init.scope */
		plen = (size_t)(last - 1 - path);
		for (p = last - 1; p > path && p[-1] != '/'; p--)
			;
		if (!is_slice(p, (size_t)(last - 1 - p)) ||
		    (size_t)(last - 1 - p) >= sizeof(slice))
			return np_errf(err, errlen, -EINVAL,
				       "cgroup \"%.300s\" is not a systemd "
				       "unit's cgroup: %.255s is not in a slice",
				       path, last);
		snprintf(slice, sizeof(slice), "%.*s", (int)(last - 1 - p), p);
		unit = slice;
	}
	if (np_systemd_slice_path(unit, want, sizeof(want), e2, sizeof(e2)) < 0)
		return np_errf(err, errlen, -EINVAL, "cgroup \"%.300s\": %s",
			       path, e2);
	if (strlen(want) != plen || strncmp(want, path, plen))
		return np_errf(err, errlen, -EINVAL,
			       "cgroup \"%.300s\" is not where systemd puts "
			       "%.255s (%.300s%s%.255s)",
			       path, last, want,
			       unit == last || !want[0] ? "" : "/",
			       unit == last ? "" : last);
	return 0;
}

int np_systemd_unit_of_cgroup(const char *path, char *unit, size_t len, char *err,
			 size_t errlen)
{
	const char *last = strrchr(path, '/');
	int r;

	last = last ? last + 1 : path;
	if ((r = np_systemd_unit_check(last, err, errlen)) < 0)
		return np_errf(err, errlen, r,
			       "cgroup \"%.300s\" is not a systemd unit's "
			       "cgroup (under the systemd driver a host "
			       "cgroup must be a unit: NAME.slice, NAME.scope "
			       "or NAME.service)",
			       path);
	if ((size_t)snprintf(unit, len, "%s", last) >= len)
		return np_errf(err, errlen, -ENAMETOOLONG, "unit name too long");
	return unit_placed(path, last, err, errlen);
}

int np_systemd_slice_path(const char *slice, char *out, size_t len, char *err,
		     size_t errlen)
{
	size_t n = strlen(slice), used = 0;
	int r;

	if ((r = np_systemd_unit_check(slice, err, errlen)) < 0)
		return r;
	if (n < 7 || strcmp(slice + n - 6, ".slice"))
		return np_errf(err, errlen, -EINVAL,
			       "\"%.300s\" is not a slice (NAME.slice)", slice);
	out[0] = '\0';
	if (!strcmp(slice, "-.slice"))
		return 0;
	/* each '-' opens a parent: a-b-c.slice is in a.slice/a-b.slice */
	for (size_t i = 0; i + 6 <= n; i++) {
		if (slice[i] != '-' && i != n - 6)
			continue;
		if (i == 0 || slice[i - 1] == '-')
			return np_errf(err, errlen, -EINVAL,
				       "slice \"%.300s\" has an empty "
				       "component",
				       slice);
		int w = snprintf(out + used, len - used, "%s%.*s.slice",
				 used ? "/" : "", (int)i, slice);
		if (w < 0 || (size_t)w >= len - used)
			return np_errf(err, errlen, -ENAMETOOLONG,
				       "slice path too long");
		used += (size_t)w;
	}
	return 0;
}
