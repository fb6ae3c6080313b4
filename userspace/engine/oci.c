// SPDX-License-Identifier: Apache-2.0
/* OCI runtime hooks, the pure part (numaplace/oci.h): the state, config.json
 * and the container's cgroup (oci_spec.c: the workload spec). */
#include "numaplace/oci.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/json_util.h"
#include "numaplace/cleanup.h"
#include "numaplace/cpuset.h"
#include "numaplace/error.h"
#include "numaplace/names.h"
#include "numaplace/quantity.h"

#define PID_LIMIT 4194304 /* PID_MAX_LIMIT on 64-bit */
#define SHARES_MIN 2      /* the kubelet's MinShares */
#define SHARES_PER_CPU 1024
#define PERIOD_DEFAULT 100000

static const char *const stage_names[] = {
	[NP_OCI_CREATE_RUNTIME] = "createRuntime",
	[NP_OCI_PRESTART] = "prestart",
	[NP_OCI_POSTSTOP] = "poststop",
};
static const char *const failure_names[] = {
	[NP_OCI_FAIL_OPEN] = "fail-open",
	[NP_OCI_FAIL_CLOSED] = "fail-closed",
};

int np_oci_stage_parse(const char *s, enum np_oci_stage *out)
{
	int i = NP_NAME_FIND(stage_names, s);
	if (i < 0)
		return -EINVAL;
	*out = (enum np_oci_stage)i;
	return 0;
}

const char *np_oci_stage_name(enum np_oci_stage s)
{
	return NP_NAME_OF(stage_names, s);
}

int np_oci_failure_parse(const char *s, enum np_oci_failure *out)
{
	int i = NP_NAME_FIND(failure_names, s);
	if (i < 0)
		return -EINVAL;
	*out = (enum np_oci_failure)i;
	return 0;
}

const char *np_oci_failure_name(enum np_oci_failure f)
{
	return NP_NAME_OF(failure_names, f);
}

/* ---- state ---- */

/* An absolute path of printable bytes, no "." or ".." component. */
static int abs_path_ok(const char *s, const char *path, const char *key,
		       char *err, size_t errlen)
{
	if (s[0] != '/' || strlen(s) >= NP_PATH_MAX)
		return np_json_fail(err, errlen, path, key,
				    "\"%.200s\" is not an absolute path of at "
				    "most %d bytes",
				    s, NP_PATH_MAX - 1);
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			return np_json_fail(err, errlen, path, key,
					    "holds a byte that is not "
					    "printable ASCII (0x%02x)",
					    (unsigned char)*p);
	for (const char *q = strstr(s, "/."); q; q = strstr(q + 1, "/."))
		if (q[2] == '/' || !q[2] || (q[2] == '.' && (q[3] == '/' || !q[3])))
			return np_json_fail(err, errlen, path, key,
					    "\"%.200s\" has a \".\" or \"..\" "
					    "component",
					    s);
	return 0;
}

/* "annotations": an object of strings (any size: only ours are read). */
static int annotations_get(const json_t *j, const char *path, json_t **out,
			   char *err, size_t errlen)
{
	json_t *a = json_object_get(j, "annotations"), *v;
	const char *k;

	if (!a || json_is_null(a)) {
		*out = json_object();
		return *out ? 0 : -ENOMEM;
	}
	if (!json_is_object(a))
		return np_json_fail(err, errlen, path, "annotations",
				    "expected an object of strings");
	json_object_foreach(a, k, v)
	{
		if (!json_is_string(v))
			return np_errf(err, errlen, -EINVAL,
				       "%s.annotations.%.200s: expected a "
				       "string",
				       path, k);
	}
	*out = json_incref(a);
	return 0;
}

static json_t *load_object(const char *buf, size_t len, const char *what,
			   char *err, size_t errlen)
{
	json_error_t je;
	json_t *j;

	if (len == 0) {
		np_errmsg(err, errlen, "%s: empty input", what);
		return NULL;
	}
	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!j) {
		np_errmsg(err, errlen, "%s: invalid JSON at line %d column %d: %s",
			  what, je.line, je.column, je.text);
		return NULL;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		np_errmsg(err, errlen, "%s: expected a JSON object", what);
		return NULL;
	}
	return j;
}

static int state_pid(struct np_oci_state *st, const json_t *j,
		     enum np_oci_stage stage, char *err, size_t errlen)
{
	const json_t *p = json_object_get(j, "pid");

	if (stage == NP_OCI_POSTSTOP && (!p || json_is_null(p)))
		return 0;
	if (!p || !json_is_integer(p))
		return np_json_fail(err, errlen, "state", "pid",
				    "expected the container's process id (an "
				    "integer 1..%d)",
				    PID_LIMIT);
	if (stage == NP_OCI_POSTSTOP && json_integer_value(p) == 0)
		return 0;
	if (json_integer_value(p) < 1 || json_integer_value(p) > PID_LIMIT)
		return np_json_fail(err, errlen, "state", "pid",
				    "%lld is not a process id (1..%d)",
				    (long long)json_integer_value(p),
				    PID_LIMIT);
	st->pid = (int)json_integer_value(p);
	return 0;
}

int np_oci_state_parse(struct np_oci_state *st, const char *buf, size_t len,
		       enum np_oci_stage stage, char *err, size_t errlen)
{
	static const char *const statuses[] = {"creating", "created",
					       "running", "stopped", "paused"};
	_cleanup_json_ json_t *j = NULL;
	const char *s;
	int r;

	memset(st, 0, sizeof(*st));
	if (!(j = load_object(buf, len, "state", err, errlen)))
		return -EINVAL;
	if ((r = np_json_str(j, "ociVersion", "state", true, &s, err, errlen)))
		return r;
	if (!*s || strlen(s) > 32)
		return np_json_fail(err, errlen, "state", "ociVersion",
				    "expected a version such as \"1.0.2\"");
	if ((r = np_json_str(j, "id", "state", true, &s, err, errlen)))
		return r;
	if (!np_container_id_ok(s))
		return np_json_fail(err, errlen, "state", "id",
				    "\"%.64s\" is not a container id (1..%d "
				    "of [A-Za-z0-9_.+-], starting with a "
				    "letter or digit)",
				    s, NP_OCI_ID_MAX);
	snprintf(st->id, sizeof(st->id), "%s", s);
	if ((r = np_json_str(j, "status", "state", true, &s, err, errlen)))
		return r;
	if (NP_NAME_FIND(statuses, s) < 0)
		return np_json_fail(err, errlen, "state", "status",
				    "\"%.32s\" is not creating, created, "
				    "running, stopped or paused",
				    s);
	snprintf(st->status, sizeof(st->status), "%s", s);
	if ((r = state_pid(st, j, stage, err, errlen)))
		return r;
	r = np_json_str(j, "bundle", "state", stage != NP_OCI_POSTSTOP, &s,
			err, errlen);
	if (r == 0) {
		if ((r = abs_path_ok(s, "state", "bundle", err, errlen)))
			return r;
		snprintf(st->bundle, sizeof(st->bundle), "%s", s);
	} else if (r != -ENOENT) {
		return r;
	}
	r = np_json_str(j, "root", "state", false, &s, err, errlen);
	if (r && r != -ENOENT)
		return r;
	return annotations_get(j, "state", &st->annotations, err, errlen);
}

void np_oci_state_free(struct np_oci_state *st)
{
	json_decref(st->annotations);
	st->annotations = NULL;
}

/* ---- config.json ---- */

/* An integer field that may be absent or null: -ENOENT then. */
static int opt_int(const json_t *o, const char *key, const char *path,
		   long long min, long long *out, char *err, size_t errlen)
{
	const json_t *v = json_object_get(o, key);

	if (!v || json_is_null(v))
		return -ENOENT;
	if (!json_is_integer(v) || json_integer_value(v) < min)
		return np_json_fail(err, errlen, path, key,
				    "expected an integer >= %lld", min);
	*out = json_integer_value(v);
	return 0;
}

/* An optional object member; -EINVAL when it is not an object. */
static int sub(const json_t *o, const char *key, const char *path,
	       const json_t **out, char *err, size_t errlen)
{
	const json_t *v = json_object_get(o, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return np_json_fail(err, errlen, path, key,
				    "expected an object");
	*out = v;
	return 0;
}

static int config_cpu(struct np_oci_config *c, const json_t *cpu, char *err,
		      size_t errlen)
{
	const char *p = "config.json: linux.resources.cpu";
	long long shares, quota, period = PERIOD_DEFAULT;
	const char *s;
	np_cpuset cs;
	int r;

	if ((r = opt_int(cpu, "period", p, 1, &period, err, errlen)) &&
	    r != -ENOENT)
		return r;
	if (period > 1000000)
		return np_json_fail(err, errlen, p, "period",
				    "%lld is over 1000000 us", period);
	r = opt_int(cpu, "quota", p, -1, &quota, err, errlen);
	if (r == 0 && quota > 0) {
		if (quota > (long long)NP_MAX_CPUS * 1000000)
			return np_json_fail(err, errlen, p, "quota",
					    "%lld is more CPU time than any "
					    "machine has",
					    quota);
		c->limit_milli = (quota * 1000 + period - 1) / period;
	} else if (r && r != -ENOENT) {
		return r;
	}
	r = opt_int(cpu, "shares", p, 0, &shares, err, errlen);
	if (r == 0) {
		if (shares > (long long)NP_MAX_CPUS * SHARES_PER_CPU)
			return np_json_fail(err, errlen, p, "shares",
					    "%lld is more than %d CPUs", shares,
					    NP_MAX_CPUS);
		c->request_milli =
		    shares <= SHARES_MIN
			? 0
			: (shares * 1000 + SHARES_PER_CPU - 1) / SHARES_PER_CPU;
	} else if (r != -ENOENT) {
		return r;
	}
	/* the runtime's own CPU list: checked, then overridden by numaplaced */
	r = np_json_str(cpu, "cpus", p, false, &s, err, errlen);
	if (r == 0 && *s && np_cpuset_parse(&cs, s, NULL, 0))
		return np_json_fail(err, errlen, p, "cpus",
				    "\"%.64s\" is not a CPU list", s);
	return r == -ENOENT ? 0 : r;
}

/* A hugepageLimits pageSize ("2MB", "1GB", "64KB": binary units, as the
 * kernel's hugetlb.<size>.* files name them) in KiB; 0 if it is none. */
static uint64_t page_size_kb(const char *s)
{
	static const char *const units[] = {"KB", "MB", "GB"};
	unsigned long long n;
	char unit[3];
	int used = 0;

	if (sscanf(s, "%10llu%2[KMGB]%n", &n, unit, &used) != 2 ||
	    s[used] || !n)
		return 0;
	for (int i = 0; i < 3; i++)
		if (!strcmp(unit, units[i]))
			return (uint64_t)n << (10 * i);
	return 0;
}

/* linux.resources.hugepageLimits: [{"pageSize": "2MB", "limit": N}]. */
static int config_huge(struct np_oci_config *c, const json_t *res, char *err,
		       size_t errlen)
{
	const char *p = "config.json: linux.resources.hugepageLimits";
	const json_t *a = json_object_get(res, "hugepageLimits"), *v;
	size_t i;

	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a) || json_array_size(a) > NP_MAX_HUGEPAGE_SIZES)
		return np_errf(err, errlen, -EINVAL,
			       "%s: expected an array of at most %d "
			       "{\"pageSize\", \"limit\"}",
			       p, NP_MAX_HUGEPAGE_SIZES);
	json_array_foreach(a, i, v)
	{
		const char *ps = json_string_value(json_object_get(v, "pageSize"));
		const json_t *l = json_object_get(v, "limit");
		uint64_t kb = ps ? page_size_kb(ps) : 0;
		if (!kb || !json_is_integer(l) || json_integer_value(l) < 0)
			return np_errf(err, errlen, -EINVAL,
				       "%s[%zu]: expected {\"pageSize\": "
				       "\"2MB\", \"limit\": BYTES}",
				       p, i);
		/* 0 too: the kubelet gives every size it does not grant 0,
		 * so that the container uses none of them */
		c->huge_size_kb[c->nhuge] = kb;
		c->huge_limit[c->nhuge++] = (uint64_t)json_integer_value(l);
	}
	return 0;
}

int np_oci_config_parse(struct np_oci_config *c, const char *buf, size_t len,
			char *err, size_t errlen)
{
	const char *lp = "config.json: linux", *rp = "config.json: linux.resources";
	_cleanup_json_ json_t *j = NULL;
	const json_t *linux_, *res, *cpu, *mem;
	long long limit;
	const char *s;
	int r;

	memset(c, 0, sizeof(*c));
	c->limit_milli = c->request_milli = c->memory = -1;
	if (!(j = load_object(buf, len, "config.json", err, errlen)))
		return -EINVAL;
	if ((r = annotations_get(j, "config.json", &c->annotations, err,
				 errlen)) ||
	    (r = sub(j, "linux", "config.json", &linux_, err, errlen)))
		return r;
	if (!linux_)
		return 0;
	r = np_json_str(linux_, "cgroupsPath", lp, false, &s, err, errlen);
	if (r == 0) {
		if (strlen(s) >= sizeof(c->cgroups_path))
			return np_json_fail(err, errlen, lp, "cgroupsPath",
					    "longer than %d bytes",
					    NP_PATH_MAX - 1);
		snprintf(c->cgroups_path, sizeof(c->cgroups_path), "%s", s);
	} else if (r != -ENOENT) {
		return r;
	}
	if ((r = sub(linux_, "resources", lp, &res, err, errlen)) || !res)
		return r;
	if ((r = sub(res, "cpu", rp, &cpu, err, errlen)) ||
	    (cpu && (r = config_cpu(c, cpu, err, errlen))) ||
	    (r = config_huge(c, res, err, errlen)) ||
	    (r = sub(res, "memory", rp, &mem, err, errlen)))
		return r;
	if (!mem)
		return 0;
	r = opt_int(mem, "limit", "config.json: linux.resources.memory", -1,
		    &limit, err, errlen);
	if (r == 0 && limit > 0)
		c->memory = limit;
	return r == -ENOENT ? 0 : r;
}

void np_oci_config_free(struct np_oci_config *c)
{
	json_decref(c->annotations);
	c->annotations = NULL;
}

/* ---- cgroups ---- */

/* Components of s (no leading '/') checked into out, after a '/'. */
static int append_components(char *out, size_t len, const char *s,
			     const char *what, const char *shown, char *err,
			     size_t errlen)
{
	const char *p = s;
	size_t n = strlen(out);

	for (const char *q = s; *q; q++)
		if ((unsigned char)*q <= 0x20 || (unsigned char)*q > 0x7e)
			return np_errf(err, errlen, -EINVAL,
				       "%s: \"%.200s\" holds a byte that is not "
				       "printable ASCII or a space (0x%02x)",
				       what, shown, (unsigned char)*q);
	for (;;) {
		const char *e = strchr(p, '/');
		size_t k = e ? (size_t)(e - p) : strlen(p);
		if (k == 0 || (k == 1 && p[0] == '.') ||
		    (k == 2 && p[0] == '.' && p[1] == '.'))
			return np_errf(err, errlen, -EINVAL,
				       "%s: \"%.200s\" has an empty, \".\" or "
				       "\"..\" component",
				       what, shown);
		if (k > 255)
			return np_errf(err, errlen, -EINVAL,
				       "%s: a component is %zu bytes, longer "
				       "than 255",
				       what, k);
		if (n + 1 + k >= len)
			return np_errf(err, errlen, -EINVAL,
				       "%s: longer than %zu bytes", what,
				       len - 1);
		out[n++] = '/';
		memcpy(out + n, p, k);
		n += k;
		out[n] = '\0';
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

/* "a-b.slice" -> "/a.slice/a-b.slice" appended to out; "-.slice": none. */
static int expand_slice(char *out, size_t len, const char *slice, char *err,
			size_t errlen)
{
	const char *w = "config.json: linux.cgroupsPath";
	size_t n = strlen(slice), base;

	if (!strcmp(slice, "-.slice"))
		return 0;
	if (n <= 6 || strcmp(slice + n - 6, ".slice"))
		return np_errf(err, errlen, -EINVAL,
			       "%s: \"%.200s\" is not a slice (NAME.slice)", w,
			       slice);
	base = n - 6;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789:_.-", slice[i]))
			return np_errf(err, errlen, -EINVAL,
				       "%s: slice \"%.200s\": character 0x%02x "
				       "is not allowed in a unit name",
				       w, slice, (unsigned char)slice[i]);
	if (slice[0] == '-' || slice[base - 1] == '-' || strstr(slice, "--"))
		return np_errf(err, errlen, -EINVAL,
			       "%s: slice \"%.200s\" has an empty component",
			       w, slice);
	for (size_t i = 0; i <= base; i++) {
		size_t o = strlen(out);
		if (i < base && slice[i] != '-')
			continue;
		if (o + i + 8 >= len)
			return np_errf(err, errlen, -EINVAL,
				       "%s: longer than %zu bytes", w, len - 1);
		snprintf(out + o, len - o, "/%.*s.slice", (int)i, slice);
	}
	return 0;
}

static int systemd_path(struct np_oci_cgroup *out, const char *s,
			const char *c1, const char *c2, char *err,
			size_t errlen)
{
	const char *w = "config.json: linux.cgroupsPath";
	char slice[256], unit[300];
	const char *prefix = c1 + 1, *name = c2 + 1;
	size_t sl = (size_t)(c1 - s), pl = (size_t)(c2 - prefix);

	if (sl >= sizeof(slice) || pl > 100 || strlen(name) > 200)
		return np_errf(err, errlen, -EINVAL, "%s: \"%.200s\": a part "
			       "is too long", w, s);
	/* an empty slice: runc's and crun's default for root */
	if (sl)
		snprintf(slice, sizeof(slice), "%.*s", (int)sl, s);
	else
		snprintf(slice, sizeof(slice), "system.slice");
	if (!*name)
		return np_errf(err, errlen, -EINVAL,
			       "%s: \"%.200s\" has no NAME (SLICE:PREFIX:NAME)",
			       w, s);
	if (strlen(name) > 6 && !strcmp(name + strlen(name) - 6, ".slice"))
		return np_errf(err, errlen, -EINVAL,
			       "%s: \"%.200s\": a slice as the container's "
			       "unit is not supported (give a scope name)",
			       w, s);
	if (pl)
		snprintf(unit, sizeof(unit), "%.*s-%s.scope", (int)pl, prefix,
			 name);
	else
		snprintf(unit, sizeof(unit), "%s.scope", name);
	out->path[0] = '\0';
	out->systemd = true;
	if (expand_slice(out->path, sizeof(out->path), slice, err, errlen))
		return -EINVAL;
	return append_components(out->path, sizeof(out->path), unit, w, s, err,
				 errlen);
}

int np_oci_cgroups_path(const char *s, struct np_oci_cgroup *out, char *err,
			size_t errlen)
{
	const char *w = "config.json: linux.cgroupsPath";
	const char *c1 = strchr(s, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

	memset(out, 0, sizeof(*out));
	if (!*s || !strcmp(s, "/"))
		return np_errf(err, errlen, -EINVAL,
			       "%s: \"%s\" names the root cgroup, not a "
			       "container's",
			       w, s);
	if (c2 && !strchr(c2 + 1, ':') && !strchr(s, '/'))
		return systemd_path(out, s, c1, c2, err, errlen);
	out->relative = s[0] != '/';
	return append_components(out->path, sizeof(out->path),
				 s + (s[0] == '/'), w, s, err, errlen);
}

int np_oci_proc_cgroup(const char *text, size_t len, char *out, size_t outlen,
		       char *err, size_t errlen)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (nl ? nl : end) - p;
		if (n >= 3 && !memcmp(p, "0::", 3)) {
			char path[NP_PATH_MAX];
			if (n - 3 >= sizeof(path) || n == 3 || p[3] != '/')
				return np_errf(err, errlen, -EINVAL,
					       "the cgroup2 line \"%.*s\" holds "
					       "no absolute path",
					       (int)(n > 200 ? 200 : n), p);
			memcpy(path, p + 3, n - 3);
			path[n - 3] = '\0';
			if (memchr(path, '\0', n - 3))
				return np_errf(err, errlen, -EINVAL,
					       "the cgroup2 line holds a NUL");
			out[0] = '\0';
			if (!strcmp(path, "/"))
				return np_errf(err, errlen, -EINVAL,
					       "the process is in the root "
					       "cgroup, not a container's");
			return append_components(out, outlen, path + 1,
						 "cgroup2 path", path, err,
						 errlen);
		}
		p += n + 1;
	}
	return np_errf(err, errlen, -ENOENT,
		       "no cgroup2 line (\"0::/PATH\"): is cgroup v2 mounted?");
}

static bool at_or_below(const char *a, const char *base)
{
	size_t n = strlen(base);
	return !strncmp(a, base, n) && (a[n] == '\0' || a[n] == '/');
}

int np_oci_cgroup_holds(const struct np_oci_cgroup *exp, const char *actual,
			char *err, size_t errlen)
{
	if (at_or_below(actual, exp->path))
		return 0;
	if (exp->relative)
		for (const char *q = strstr(actual, exp->path); q;
		     q = strstr(q + 1, exp->path))
			if (at_or_below(q, exp->path))
				return 0;
	return np_errf(err, errlen, -ESRCH,
		       "the process is in %.200s, not in %.200s (from "
		       "linux.cgroupsPath) or below it",
		       actual, exp->path);
}
