// SPDX-License-Identifier: Apache-2.0
/*
 * JSON form of workload specs: parsed and validated field by field, and
 * emitted back.
 */
#include "engine/admit_spec_internal.h"
#include "engine/json_util.h"
#include "numaplace/admit.h"
#include "numaplace/quantity.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Upper bounds that catch typos ("2000" CPUs, "2Ei" of memory). */
#define MAX_CPU_MILLI ((int64_t)NP_MAX_CPUS * 1000)
#define MAX_BYTES (1ULL << 52) /* 4 PiB */

/*
 * A cgroup path below the managed parent: relative, no "." or ".."
 * components, no empty components, a conservative character set. Symlinks
 * are the enforcement layer's business (it opens with O_NOFOLLOW).
 */
static int check_cgroup_path(const char *s, const char *path, const char *key,
			     bool allow_empty, char *err, size_t errlen)
{
	const char *p = s;

	if (!*s) {
		if (allow_empty)
			return 0;
		return np_json_fail(err, errlen, path, key,
				    "must not be empty");
	}
	if (strlen(s) >= NP_PATH_MAX)
		return np_json_fail(err, errlen, path, key,
				    "longer than %d characters",
				    NP_PATH_MAX - 1);
	if (*s == '/')
		return np_json_fail(err, errlen, path, key,
				    "\"%s\" must be relative to the managed "
				    "parent cgroup",
				    s);
	while (*p) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 0)
			return np_json_fail(err, errlen, path, key,
					    "\"%s\" has an empty component", s);
		if ((n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return np_json_fail(err, errlen, path, key,
					    "\"%s\" must not contain \".\" or "
					    "\"..\"",
					    s);
		if (n > 255)
			return np_json_fail(err, errlen, path, key,
					    "a component is %zu bytes long; a "
					    "cgroup name is at most 255 (NAME_MAX)",
					    n);
		for (size_t i = 0; i < n; i++) {
			char c = p[i];
			if (!((c >= 'a' && c <= 'z') ||
			      (c >= 'A' && c <= 'Z') ||
			      (c >= '0' && c <= '9') || c == '-' || c == '_' ||
			      c == '.' || c == ':' || c == '@'))
				return np_json_fail(err, errlen, path, key,
						    "\"%s\": character '%c' is "
						    "not allowed",
						    s, c);
		}
		/* cgroup interface files live beside children */
		if (!strncmp(p, "cgroup.", 7) || !strncmp(p, "cpuset.", 7))
			return np_json_fail(err, errlen, path, key,
					    "\"%s\": a component may not look "
					    "like a cgroup interface file",
					    s);
		p += n;
		if (*p == '/')
			p++;
		if (!*p && p[-1] == '/')
			return np_json_fail(err, errlen, path, key,
					    "\"%s\" ends with '/'", s);
	}
	return 0;
}

static int check_name(const char *s, const char *path, const char *key,
		      char *err, size_t errlen)
{
	if (!*s || strlen(s) >= NP_NAME_MAX)
		return np_json_fail(err, errlen, path, key,
				    "must be 1..%d characters",
				    NP_NAME_MAX - 1);
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' ||
		      *p == '.'))
			return np_json_fail(err, errlen, path, key,
					    "\"%s\": character '%c' is not "
					    "allowed (letters, digits, - _ .)",
					    s, *p);
	return 0;
}

/* "cpu": "2" | "1500m" | 2 */
int np_spec_get_cpu(const json_t *o, const char *path, int64_t *out,
		    char *err, size_t errlen)
{
	const json_t *v = json_object_get(o, "cpu");
	char qerr[200];
	int64_t m;

	*out = 0;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_integer(v)) {
		if (json_integer_value(v) < 0 ||
		    json_integer_value(v) > MAX_CPU_MILLI / 1000)
			return np_json_fail(err, errlen, path, "cpu",
					    "%lld is out of range 0..%lld",
					    (long long)json_integer_value(v),
					    (long long)(MAX_CPU_MILLI / 1000));
		*out = json_integer_value(v) * 1000;
		return 0;
	}
	if (!json_is_string(v))
		return np_json_fail(err, errlen, path, "cpu",
				    "expected a quantity such as \"2\" or "
				    "\"1500m\"");
	if (np_quantity_cpu_milli(json_string_value(v), &m, qerr, sizeof(qerr)))
		return np_json_fail(err, errlen, path, "cpu", "%s", qerr);
	if (m > MAX_CPU_MILLI)
		return np_json_fail(err, errlen, path, "cpu",
				    "%s is more CPUs than any machine has",
				    json_string_value(v));
	*out = m;
	return 0;
}

int np_spec_get_bytes(const json_t *o, const char *key, const char *path,
		      uint64_t *out, char *err, size_t errlen)
{
	const json_t *v = json_object_get(o, key);
	char qerr[200];

	*out = 0;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_integer(v)) {
		if (json_integer_value(v) < 0)
			return np_json_fail(err, errlen, path, key,
					    "must not be negative");
		*out = (uint64_t)json_integer_value(v);
	} else if (json_is_string(v)) {
		if (np_quantity_bytes(json_string_value(v), out, qerr,
				      sizeof(qerr)))
			return np_json_fail(err, errlen, path, key, "%s", qerr);
	} else {
		return np_json_fail(err, errlen, path, key,
				    "expected a quantity such as \"2Gi\"");
	}
	if (*out > MAX_BYTES)
		return np_json_fail(err, errlen, path, key,
				    "more than 4Pi is not plausible");
	return 0;
}

/* "hugepages-2Mi" -> 2048 kB */
int np_spec_hugepage_key(const char *key, uint64_t *size_kb)
{
	uint64_t b;
	if (strncmp(key, "hugepages-", 10) ||
	    np_quantity_bytes(key + 10, &b, NULL, 0) || b < 4096 || b % 1024)
		return -EINVAL;
	*size_kb = b / 1024;
	return 0;
}

/* "name": required and checked, copied into buf. */
static int get_name(const json_t *o, const char *path, char *buf, size_t len,
		    char *err, size_t errlen)
{
	const char *s;
	int r;

	if ((r = np_json_str(o, "name", path, true, &s, err, errlen)) ||
	    (r = check_name(s, path, "name", err, errlen)))
		return r;
	snprintf(buf, len, "%s", s);
	return 0;
}

/* "cgroup": optional (-ENOENT when absent) and checked, copied to *out. */
static int get_cgroup(const json_t *o, const char *path, bool allow_empty,
		      char **out, char *err, size_t errlen)
{
	const char *s;
	int r;

	if ((r = np_json_str(o, "cgroup", path, false, &s, err, errlen)) ||
	    (r = check_cgroup_path(s, path, "cgroup", allow_empty, err,
				   errlen)))
		return r;
	/* as the former char[NP_PATH_MAX] kept it */
	if (!(*out = strndup(s, NP_PATH_MAX - 1)))
		return -ENOMEM;
	return 0;
}

static int container_from_json(struct np_container_req *c, const json_t *o,
			       bool init, const char *path, char *err,
			       size_t errlen)
{
	char name[NP_NAME_MAX];
	const char *key;
	json_t *v;
	int r;

	if (!json_is_object(o))
		return np_json_fail(err, errlen, path, NULL,
				    "expected an object");
	/* a container of np_workload_req_set_containers: zeroed, name "" */
	json_object_foreach((json_t *)o, key, v)
	{
		uint64_t kb;
		if (!strcmp(key, "name") || !strcmp(key, "cgroup") ||
		    !strcmp(key, "cpu") || !strcmp(key, "memory") ||
		    !strcmp(key, "devices") ||
		    (init && !strcmp(key, "restartPolicy")))
			continue;
		if (np_spec_hugepage_key(key, &kb) == 0) {
			if (c->nhuge >= NP_MAX_HUGEPAGE_SIZES)
				return np_json_fail(err, errlen, path, key,
						    "too many hugepage sizes");
			c->huge_size_kb[c->nhuge] = kb;
			if ((r = np_spec_get_bytes(o, key, path,
					   &c->huge_bytes[c->nhuge], err,
					   errlen)))
				return r;
			if (c->huge_bytes[c->nhuge] % (kb * 1024))
				return np_json_fail(err, errlen, path, key,
						    "not a whole number of "
						    "pages");
			c->nhuge++;
			continue;
		}
		return np_json_fail(
		    err, errlen, path, key,
		    "unknown field (expected name, cgroup, cpu, "
		    "memory, hugepages-<size>, devices%s)",
		    init ? ", restartPolicy" : "");
	}
	c->init = init;
	v = json_object_get(o, "restartPolicy");
	if (v && !(json_is_string(v) &&
		   (!strcmp(json_string_value(v), "Always") ||
		    !strcmp(json_string_value(v), "Never"))))
		return np_json_fail(err, errlen, path, "restartPolicy",
				    "expected \"Always\" (a sidecar) or "
				    "\"Never\"");
	c->restartable = v && !strcmp(json_string_value(v), "Always");
	if ((r = get_name(o, path, name, sizeof(name), err, errlen)) ||
	    (r = np_container_req_set_name(c, name)))
		return r;
	r = get_cgroup(o, path, true, &c->cgroup, err, errlen);
	if (r && r != -ENOENT)
		return r;
	if ((r = np_spec_get_cpu(o, path, &c->cpu_milli, err, errlen)) ||
	    (r = np_spec_get_bytes(o, "memory", path, &c->memory, err, errlen)))
		return r;
	v = json_object_get(o, "devices");
	if (v && !json_is_null(v)) {
		char dp[256];
		np_json_path(dp, sizeof(dp), path, "devices", 0);
		if (!json_is_object(v))
			return np_json_fail(err, errlen, dp, NULL,
					    "expected an object of resource: "
					    "count");
		json_object_foreach(v, key, o)
		{
			if (c->ndev >= NP_MAX_DEVICE_REQS)
				return np_json_fail(
				    err, errlen, dp, key,
				    "too many device resources");
			if (!c->dev && !(c->dev = calloc(NP_MAX_DEVICE_REQS,
							 sizeof(*c->dev))))
				return -ENOMEM;
			if (!*key || strlen(key) >= sizeof(c->dev[0].resource))
				return np_json_fail(err, errlen, dp, key,
						    "invalid resource name");
			if (!json_is_integer(o) || json_integer_value(o) < 1 ||
			    json_integer_value(o) > 1024)
				return np_json_fail(err, errlen, dp, key,
						    "expected a count 1..1024");
			snprintf(c->dev[c->ndev].resource,
				 sizeof(c->dev[0].resource), "%s", key);
			c->dev[c->ndev].count = (int)json_integer_value(o);
			c->ndev++;
		}
	}
	return 0;
}

/* "resourceSpec": Koordinator's CPU bind and exclusive policies. */
static int resource_spec_from_json(struct np_workload_req *w, const json_t *rs,
				   const char *path, char *err, size_t errlen)
{
	static const char *const rkeys[] = {
	    "preferredCPUBindPolicy", "requiredCPUBindPolicy",
	    "preferredCPUExclusivePolicy", NULL};
	const char *s;
	char rp[160];
	int r;

	np_json_path(rp, sizeof(rp), path, "resourceSpec", 0);
	if ((r = np_json_only_keys(rs, rkeys, rp, err, errlen)))
		return r;
	r = np_json_str(rs, "preferredCPUBindPolicy", rp, false, &s, err,
			errlen);
	if (r == 0) {
		if (np_bind_policy_parse(s, &w->bind) < 0)
			return np_json_fail(
			    err, errlen, rp, "preferredCPUBindPolicy",
			    "\"%s\" is not Default, FullPCPUs or "
			    "SpreadByPCPUs",
			    s);
		w->has_bind = true;
	} else if (r != -ENOENT) {
		return r;
	}
	r = np_json_str(rs, "requiredCPUBindPolicy", rp, false, &s, err,
			errlen);
	if (r == 0) {
		if (np_bind_policy_parse(s, &w->bind) < 0 ||
		    w->bind == NP_BIND_DEFAULT)
			return np_json_fail(err, errlen, rp,
					    "requiredCPUBindPolicy",
					    "\"%s\" is not FullPCPUs or "
					    "SpreadByPCPUs",
					    s);
		w->has_bind = true;
		w->bind_required = true;
	} else if (r != -ENOENT) {
		return r;
	}
	r = np_json_str(rs, "preferredCPUExclusivePolicy", rp, false, &s, err,
			errlen);
	if (r == 0 && np_exclusive_policy_parse(s, &w->excl) < 0)
		return np_json_fail(err, errlen, rp,
				    "preferredCPUExclusivePolicy",
				    "\"%s\" is not None, PCPULevel or "
				    "NUMANodeLevel",
				    s);
	if (r && r != -ENOENT)
		return r;
	return 0;
}

/*
 * Where the workload's CPUs go: its "cgroup" below the managed parent (the
 * name when absent), or a systemd "unit" (then cgroup is "", and
 * containers may not have cgroups of their own: they would be below the
 * unit's cgroup, which is systemd's).
 */
bool np_container_id_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > NP_CONTAINER_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') ||
		      (i && (c == '-' || c == '_' || c == '.' || c == '+'))))
			return false;
	}
	return true;
}

/*
 * "container": {"id": ID, "cgroup": "/PATH"}: the workload is an OCI
 * container whose cgroup the runtime made (a path from the hierarchy
 * root). The workload has no cgroup or unit of its own then.
 */
static int get_container(const json_t *j, const char *path,
			 struct np_workload_req *w, char *err, size_t errlen)
{
	static const char *const keys[] = {"id",     "cgroup",	 "namespace",
					   "limits", "requests", NULL};
	const json_t *o = json_object_get(j, "container");
	const char *id, *cg;
	char cp[160];
	int r;

	snprintf(cp, sizeof(cp), "%s.container", path);
	if (!json_is_object(o))
		return np_json_fail(err, errlen, path, "container",
				    "expected an object {\"id\", \"cgroup\"}");
	if (json_object_get(j, "cgroup") || json_object_get(j, "unit"))
		return np_json_fail(err, errlen, path, "container",
				    "a container workload has no cgroup or "
				    "unit of its own (its cgroup is "
				    "container.cgroup)");
	if ((r = np_json_only_keys(o, keys, cp, err, errlen)) ||
	    (r = np_json_str(o, "id", cp, true, &id, err, errlen)) ||
	    (r = np_json_str(o, "cgroup", cp, true, &cg, err, errlen)))
		return r;
	if (!np_container_id_ok(id))
		return np_json_fail(err, errlen, cp, "id",
				    "\"%.64s\" is not a container id (1..%d "
				    "of [A-Za-z0-9_.+-], starting with a "
				    "letter or digit)",
				    id, NP_CONTAINER_ID_MAX);
	if (cg[0] != '/' || !cg[1])
		return np_json_fail(err, errlen, cp, "cgroup",
				    "\"%.200s\" must be a cgroup path from the "
				    "hierarchy root, like /np/ctr1",
				    cg);
	if (cg[1] == '/')
		return np_json_fail(err, errlen, cp, "cgroup",
				    "\"%.200s\" has an empty component", cg);
	if ((r = check_cgroup_path(cg + 1, cp, "cgroup", false, err, errlen)))
		return r;
	if (!(w->container_id = strdup(id)) ||
	    !(w->cgroup = strndup(cg, NP_PATH_MAX - 1)))
		return -ENOMEM;
	return np_spec_container_extra(w, o, cp, err, errlen);
}

static int get_target(const json_t *j, const char *path,
		      struct np_workload_req *w, char *err, size_t errlen)
{
	const char *s;
	char e2[400];
	int r;

	if (json_object_get(j, "container"))
		return get_container(j, path, w, err, errlen);
	r = np_json_str(j, "unit", path, false, &s, err, errlen);

	if (r == -ENOENT) {
		r = get_cgroup(j, path, false, &w->cgroup, err, errlen);
		if (r == -ENOENT)
			r = (w->cgroup = strdup(w->name)) ? 0 : -ENOMEM;
		return r;
	}
	if (r)
		return r;
	if (json_object_get(j, "cgroup"))
		return np_json_fail(err, errlen, path, "unit",
				    "a workload has a unit or a cgroup, not "
				    "both");
	if (np_systemd_unit_check(s, e2, sizeof(e2)))
		return np_json_fail(err, errlen, path, "unit", "%s", e2);
	if (!(w->unit = strdup(s)) || !(w->cgroup = strdup("")))
		return -ENOMEM;
	return 0;
}

/* "init_containers" (optional), then "containers" (1 or more), into w->c
 * in that order; names unique across both. */
static int containers_from_json(struct np_workload_req *w, const json_t *j,
				const char *path, char *err, size_t errlen)
{
	const json_t *cs = json_object_get(j, "containers"),
		     *ics = json_object_get(j, "init_containers"), *c;
	size_t ni = ics && !json_is_null(ics) ? json_array_size(ics) : 0, i;
	int r;

	if (ics && !json_is_null(ics) && !json_is_array(ics))
		return np_json_fail(err, errlen, path, "init_containers",
				    "expected an array of containers");
	if (!json_is_array(cs) || json_array_size(cs) == 0 ||
	    json_array_size(cs) + ni > NP_MAX_CONTAINERS)
		return np_json_fail(err, errlen, path, "containers",
				    "expected an array of 1..%d containers "
				    "(init containers included)",
				    NP_MAX_CONTAINERS);
	if ((r = np_workload_req_set_containers(
		 w, (int)(ni + json_array_size(cs)))))
		return r;
	for (i = 0; i < ni + json_array_size(cs); i++) {
		bool init = i < ni;
		char cp[160];
		c = json_array_get(init ? ics : cs, init ? i : i - ni);
		snprintf(cp, sizeof(cp), "%s.%s[%zu]", path,
			 init ? "init_containers" : "containers",
			 init ? i : i - ni);
		if ((r = container_from_json(&w->c[i], c, init, cp, err,
					     errlen)))
			return r;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(w->c[k].name, w->c[i].name))
				return np_json_fail(err, errlen, cp, "name",
						    "duplicate container name "
						    "\"%s\"",
						    w->c[i].name);
		if (w->qos == NP_QOS_BESTEFFORT && w->c[i].cpu_milli)
			return np_json_fail(err, errlen, cp, "cpu",
					    "a BestEffort workload requests no "
					    "CPU");
	}
	w->ncontainers = (int)(ni + json_array_size(cs));
	return 0;
}

int np_workload_req_from_json(struct np_workload_req *w, const json_t *j,
			      const char *path, char *err, size_t errlen)
{
	static const char *const keys[] = {
	    "name",	    "cgroup",	 "qos", "containers", "init_containers",
	    "resourceSpec", "isolation", "unit",       "movable",
	    "container",    "hint",	 "resources",  NULL};
	const json_t *rs;
	const char *s;
	int r;

	if (!path)
		path = "workload";
	memset(w, 0, sizeof(*w));
	if ((r = np_json_only_keys(j, keys, path, err, errlen)))
		return r;
	if ((r = get_name(j, path, w->name, sizeof(w->name), err, errlen)))
		return r;
	if ((r = get_target(j, path, w, err, errlen)))
		return r;
	if ((r = np_json_str(j, "qos", path, true, &s, err, errlen)))
		return r;
	if (np_qos_parse(s, &w->qos) < 0)
		return np_json_fail(err, errlen, path, "qos",
				    "\"%s\" is not LSE, LSR, LS, BE, "
				    "Guaranteed, Burstable or BestEffort",
				    s);
	if ((r = containers_from_json(w, j, path, err, errlen)))
		return r;
	for (int k = 0; w->unit && k < w->ncontainers; k++)
		if (w->c[k].cgroup && w->c[k].cgroup[0])
			return np_json_fail(err, errlen, path, "unit",
					    "the containers of a unit workload "
					    "have no cgroups of their own "
					    "(\"%s\" has)",
					    w->c[k].name);
	for (int k = 0; w->container_id && k < w->ncontainers; k++)
		if (w->c[k].cgroup && w->c[k].cgroup[0])
			return np_json_fail(err, errlen, path, "container",
					    "the containers of a container "
					    "workload have no cgroups of their "
					    "own (\"%s\" has)",
					    w->c[k].name);
	rs = json_object_get(j, "resourceSpec");
	if (rs && !json_is_null(rs) &&
	    (r = resource_spec_from_json(w, rs, path, err, errlen)))
		return r;
	r = np_json_str(j, "isolation", path, false, &s, err, errlen);
	if (r == 0) {
		if (!strcmp(s, "partition"))
			w->partition = true;
		else if (strcmp(s, "none"))
			return np_json_fail(err, errlen, path, "isolation",
					    "\"%s\" is not partition or none",
					    s);
	} else if (r != -ENOENT) {
		return r;
	}
	r = np_json_bool(j, "movable", path, false, &w->movable, err, errlen);
	if (r && r != -ENOENT)
		return r;
	if ((r = np_spec_hint_from_json(w, j, path, err, errlen)) ||
	    (r = np_spec_resources_from_json(w, j, path, err, errlen)))
		return r;
	if (w->partition && w->qos != NP_QOS_LSE && w->qos != NP_QOS_LSR &&
	    w->qos != NP_QOS_GUARANTEED)
		return np_json_fail(
		    err, errlen, path, "isolation",
		    "a partition needs exclusive CPUs (qos LSE, "
		    "LSR or Guaranteed)");
	if (w->partition && w->container_id)
		return np_json_fail(
		    err, errlen, path, "isolation",
		    "a container workload cannot be a partition (its cgroup "
		    "is the runtime's, outside numaplace's partition root)");
	if (w->partition && w->unit)
		return np_json_fail(
		    err, errlen, path, "isolation",
		    "a unit workload cannot be a partition: its cgroup is "
		    "systemd's (name a cgroup instead of a unit)");
	/* 0 would be no exclusive CPU at all: the shared pool, reserved
	 * CPUs included, under an exclusive class (np_admit says so too);
	 * with pod-level resources, 0 is a share of the pod's CPUs */
	for (int k = 0; (w->qos == NP_QOS_LSE || w->qos == NP_QOS_LSR) &&
			k < w->ncontainers;
	     k++)
		if (w->c[k].cpu_milli % 1000 ||
		    (w->c[k].cpu_milli <= 0 && !w->has_pod_res)) {
			char cp[160];
			np_workload_req_container_path(w, k, path, cp,
						       sizeof(cp));
			return np_json_fail(err, errlen, cp, "cpu",
					    "%s needs whole CPUs, at least 1, "
					    "got %lldm",
					    np_qos_name(w->qos),
					    (long long)w->c[k].cpu_milli);
		}
	return 0;
}

void np_workload_req_container_path(const struct np_workload_req *w, int k,
				    const char *path, char *buf, size_t len)
{
	int ni = 0;

	while (ni < w->ncontainers && w->c[ni].init)
		ni++;
	if (k < ni)
		snprintf(buf, len, "%s.init_containers[%d]", path, k);
	else
		snprintf(buf, len, "%s.containers[%d]", path, k - ni);
}

json_t *np_workload_req_to_json(const struct np_workload_req *w)
{
	json_t *o = json_object(), *cs = json_array(), *ics = NULL;

	json_object_set_new(o, "name", json_string(w->name));
	if (w->container_id)
		json_object_set_new(o, "container",
				    np_spec_container_to_json(w));
	else if (w->unit)
		json_object_set_new(o, "unit", json_string(w->unit));
	else
		json_object_set_new(o, "cgroup", json_string(w->cgroup));
	json_object_set_new(o, "qos", json_string(np_qos_name(w->qos)));
	for (int i = 0; i < w->ncontainers; i++) {
		const struct np_container_req *c = &w->c[i];
		json_t *co = json_object(), *dv;
		char buf[64];
		json_object_set_new(co, "name", json_string(c->name));
		if (c->cgroup && c->cgroup[0])
			json_object_set_new(co, "cgroup",
					    json_string(c->cgroup));
		snprintf(buf, sizeof(buf), "%lldm", (long long)c->cpu_milli);
		json_object_set_new(co, "cpu", json_string(buf));
		if (c->restartable)
			json_object_set_new(co, "restartPolicy",
					    json_string("Always"));
		if (c->memory) {
			np_quantity_format_bytes(c->memory, buf, sizeof(buf));
			json_object_set_new(co, "memory", json_string(buf));
		}
		for (int h = 0; h < c->nhuge; h++) {
			char key[96], v[64];
			np_quantity_format_bytes(c->huge_size_kb[h] * 1024, v,
						 sizeof(v));
			snprintf(key, sizeof(key), "hugepages-%s", v);
			np_quantity_format_bytes(c->huge_bytes[h], buf,
						 sizeof(buf));
			json_object_set_new(co, key, json_string(buf));
		}
		if (c->ndev) {
			dv = json_object();
			for (int k = 0; k < c->ndev; k++)
				json_object_set_new(
				    dv, c->dev[k].resource,
				    json_integer(c->dev[k].count));
			json_object_set_new(co, "devices", dv);
		}
		if (c->init && !ics)
			ics = json_array();
		json_array_append_new(c->init ? ics : cs, co);
	}
	if (ics)
		json_object_set_new(o, "init_containers", ics);
	json_object_set_new(o, "containers", cs);
	if (w->has_bind || w->excl != NP_EXCL_NONE) {
		json_t *rs = json_object();
		if (w->has_bind)
			json_object_set_new(
			    rs,
			    w->bind_required ? "requiredCPUBindPolicy"
					     : "preferredCPUBindPolicy",
			    json_string(np_bind_policy_name(w->bind)));
		if (w->excl != NP_EXCL_NONE)
			json_object_set_new(
			    rs, "preferredCPUExclusivePolicy",
			    json_string(np_exclusive_policy_name(w->excl)));
		json_object_set_new(o, "resourceSpec", rs);
	}
	json_object_set_new(o, "isolation",
			    json_string(w->partition ? "partition" : "none"));
	if (w->movable) /* absent = false: older states and specs read alike */
		json_object_set_new(o, "movable", json_true());
	np_spec_pod_to_json(w, o);
	return o;
}
