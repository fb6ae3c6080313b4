// SPDX-License-Identifier: Apache-2.0
/*
 * JSON forms of admission: workload specs (validated field by field),
 * Koordinator-style resource status, node state, and the planner's "admit".
 */
#include "numaplace/admit.h"
#include "numaplace/quantity.h"
#include "numaplace/topology_json.h"
#include "engine/json_util.h"

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
		return np_json_fail(err, errlen, path, key, "must not be empty");
	}
	if (strlen(s) >= NP_PATH_MAX)
		return np_json_fail(err, errlen, path, key,
				    "longer than %d characters", NP_PATH_MAX - 1);
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
		for (size_t i = 0; i < n; i++) {
			char c = p[i];
			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
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
				    "must be 1..%d characters", NP_NAME_MAX - 1);
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
static int get_cpu(const json_t *o, const char *path, int64_t *out, char *err,
		   size_t errlen)
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

static int get_bytes(const json_t *o, const char *key, const char *path,
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
static int hugepage_key(const char *key, uint64_t *size_kb)
{
	uint64_t b;
	if (strncmp(key, "hugepages-", 10) ||
	    np_quantity_bytes(key + 10, &b, NULL, 0) || b < 4096 || b % 1024)
		return -EINVAL;
	*size_kb = b / 1024;
	return 0;
}

static int container_from_json(struct np_container_req *c, const json_t *o,
			       const char *path, char *err, size_t errlen)
{
	const char *key, *s;
	json_t *v;
	int r;

	if (!json_is_object(o))
		return np_json_fail(err, errlen, path, NULL,
				    "expected an object");
	memset(c, 0, sizeof(*c));
	json_object_foreach((json_t *)o, key, v)
	{
		uint64_t kb;
		if (!strcmp(key, "name") || !strcmp(key, "cgroup") ||
		    !strcmp(key, "cpu") || !strcmp(key, "memory") ||
		    !strcmp(key, "devices"))
			continue;
		if (hugepage_key(key, &kb) == 0) {
			if (c->nhuge >= NP_MAX_HUGEPAGE_SIZES)
				return np_json_fail(err, errlen, path, key,
						    "too many hugepage sizes");
			c->huge_size_kb[c->nhuge] = kb;
			if ((r = get_bytes(o, key, path,
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
		return np_json_fail(err, errlen, path, key,
				    "unknown field (expected name, cgroup, cpu, "
				    "memory, hugepages-<size>, devices)");
	}
	if ((r = np_json_str(o, "name", path, true, &s, err, errlen)) ||
	    (r = check_name(s, path, "name", err, errlen)))
		return r;
	snprintf(c->name, sizeof(c->name), "%s", s);
	r = np_json_str(o, "cgroup", path, false, &s, err, errlen);
	if (r == 0) {
		if ((r = check_cgroup_path(s, path, "cgroup", true, err, errlen)))
			return r;
		/* as the former char[NP_PATH_MAX] kept it */
		if (!(c->cgroup = strndup(s, NP_PATH_MAX - 1)))
			return -ENOMEM;
	} else if (r != -ENOENT) {
		return r;
	}
	if ((r = get_cpu(o, path, &c->cpu_milli, err, errlen)) ||
	    (r = get_bytes(o, "memory", path, &c->memory, err, errlen)))
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
				return np_json_fail(err, errlen, dp, key,
						    "too many device resources");
			if (!c->dev &&
			    !(c->dev = calloc(NP_MAX_DEVICE_REQS,
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

int np_workload_req_from_json(struct np_workload_req *w, const json_t *j,
			      const char *path, char *err, size_t errlen)
{
	static const char *const keys[] = {"name",	 "cgroup",
					   "qos",	 "containers",
					   "resourceSpec", "isolation",
					   NULL};
	const json_t *cs, *c, *rs;
	const char *s;
	size_t i;
	int r;

	if (!path)
		path = "workload";
	memset(w, 0, sizeof(*w));
	if ((r = np_json_only_keys(j, keys, path, err, errlen)))
		return r;
	if ((r = np_json_str(j, "name", path, true, &s, err, errlen)) ||
	    (r = check_name(s, path, "name", err, errlen)))
		return r;
	snprintf(w->name, sizeof(w->name), "%s", s);
	r = np_json_str(j, "cgroup", path, false, &s, err, errlen);
	if (r == 0) {
		if ((r = check_cgroup_path(s, path, "cgroup", false, err,
					   errlen)))
			return r;
		if (!(w->cgroup = strndup(s, NP_PATH_MAX - 1)))
			return -ENOMEM;
	} else if (r != -ENOENT) {
		return r;
	} else {
		if (!(w->cgroup = strdup(w->name)))
			return -ENOMEM;
	}
	if ((r = np_json_str(j, "qos", path, true, &s, err, errlen)))
		return r;
	if (np_qos_parse(s, &w->qos) < 0)
		return np_json_fail(err, errlen, path, "qos",
				    "\"%s\" is not LSE, LSR, LS, BE, "
				    "Guaranteed, Burstable or BestEffort",
				    s);
	cs = json_object_get(j, "containers");
	if (!json_is_array(cs) || json_array_size(cs) == 0 ||
	    json_array_size(cs) > NP_MAX_CONTAINERS)
		return np_json_fail(err, errlen, path, "containers",
				    "expected an array of 1..%d containers",
				    NP_MAX_CONTAINERS);
	if ((r = np_workload_req_set_containers(w, (int)json_array_size(cs))))
		return r;
	json_array_foreach(cs, i, c)
	{
		char cp[160];
		snprintf(cp, sizeof(cp), "%s.containers[%zu]", path, i);
		if ((r = container_from_json(&w->c[i], c, cp, err, errlen)))
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
	w->ncontainers = (int)json_array_size(cs);
	rs = json_object_get(j, "resourceSpec");
	if (rs && !json_is_null(rs)) {
		static const char *const rkeys[] = {
			"preferredCPUBindPolicy", "requiredCPUBindPolicy",
			"preferredCPUExclusivePolicy", NULL};
		char rp[160];
		np_json_path(rp, sizeof(rp), path, "resourceSpec", 0);
		if ((r = np_json_only_keys(rs, rkeys, rp, err, errlen)))
			return r;
		r = np_json_str(rs, "preferredCPUBindPolicy", rp, false, &s,
				err, errlen);
		if (r == 0) {
			if (np_bind_policy_parse(s, &w->bind) < 0)
				return np_json_fail(err, errlen, rp,
						    "preferredCPUBindPolicy",
						    "\"%s\" is not Default, "
						    "FullPCPUs or SpreadByPCPUs",
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
		r = np_json_str(rs, "preferredCPUExclusivePolicy", rp, false, &s,
				err, errlen);
		if (r == 0 && np_exclusive_policy_parse(s, &w->excl) < 0)
			return np_json_fail(err, errlen, rp,
					    "preferredCPUExclusivePolicy",
					    "\"%s\" is not None, PCPULevel or "
					    "NUMANodeLevel",
					    s);
		if (r && r != -ENOENT)
			return r;
	}
	r = np_json_str(j, "isolation", path, false, &s, err, errlen);
	if (r == 0) {
		if (!strcmp(s, "partition"))
			w->partition = true;
		else if (strcmp(s, "none"))
			return np_json_fail(err, errlen, path, "isolation",
					    "\"%s\" is not partition or none", s);
	} else if (r != -ENOENT) {
		return r;
	}
	if (w->partition && w->qos != NP_QOS_LSE && w->qos != NP_QOS_LSR &&
	    w->qos != NP_QOS_GUARANTEED)
		return np_json_fail(err, errlen, path, "isolation",
				    "a partition needs exclusive CPUs (qos LSE, "
				    "LSR or Guaranteed)");
	return 0;
}

json_t *np_workload_req_to_json(const struct np_workload_req *w)
{
	json_t *o = json_object(), *cs = json_array();

	json_object_set_new(o, "name", json_string(w->name));
	json_object_set_new(o, "cgroup", json_string(w->cgroup));
	json_object_set_new(o, "qos", json_string(np_qos_name(w->qos)));
	for (int i = 0; i < w->ncontainers; i++) {
		const struct np_container_req *c = &w->c[i];
		json_t *co = json_object(), *dv;
		char buf[64];
		json_object_set_new(co, "name", json_string(c->name));
		if (c->cgroup && c->cgroup[0])
			json_object_set_new(co, "cgroup", json_string(c->cgroup));
		snprintf(buf, sizeof(buf), "%lldm", (long long)c->cpu_milli);
		json_object_set_new(co, "cpu", json_string(buf));
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
				json_object_set_new(dv, c->dev[k].resource,
						    json_integer(c->dev[k].count));
			json_object_set_new(co, "devices", dv);
		}
		json_array_append_new(cs, co);
	}
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
	return o;
}

static json_t *cpuset_json(const np_cpuset *s)
{
	char *str = np_cpuset_str(s);
	json_t *j = json_string(str ? str : "");
	free(str);
	return j;
}

static json_t *mask_json(np_nodemask m)
{
	char buf[256];
	np_nodemask_format(m, buf, sizeof(buf));
	return json_string(buf);
}

static json_t *hint_json(const struct np_hint *h)
{
	json_t *mask = json_null();
	if (!h->any) {
		mask = json_array();
		NP_NODEMASK_FOREACH(n, h->mask)
		json_array_append_new(mask, json_integer(n));
	}
	return json_pack("{s:o,s:b}", "mask", mask, "preferred", h->preferred);
}

/* Koordinator's cpuSharedPools: the shared pool split per NUMA node. */
static json_t *shared_pools_json(const struct np_node_state *st,
				 const np_cpuset *pool, np_nodemask only)
{
	const struct np_topology *t = st->topo;
	json_t *a = json_array();

	for (int i = 0; i < t->nnuma; i++) {
		np_cpuset in;
		if (only && !np_nodemask_test(only, t->numa[i].u.id))
			continue;
		np_cpuset_and(&in, pool, &t->numa[i].u.cpus);
		if (np_cpuset_empty(&in))
			continue;
		json_array_append_new(
			a, json_pack("{s:i,s:i,s:o}", "socket",
				     t->sockets[t->cpu[np_cpuset_first(&in)].socket]
					     .id,
				     "node", t->numa[i].u.id, "cpuset",
				     cpuset_json(&in)));
	}
	return a;
}

json_t *np_pools_to_json(const struct np_node_state *st)
{
	struct np_pools p;
	np_state_pools(st, &p);
	return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "reserved",
			 cpuset_json(&p.reserved), "shared",
			 cpuset_json(&p.shared), "exclusive",
			 cpuset_json(&p.exclusive), "be", cpuset_json(&p.be),
			 "allocatable", cpuset_json(&p.allocatable),
			 "cpuSharedPools",
			 shared_pools_json(st, &p.shared, 0), "beSharedPools",
			 shared_pools_json(st, &p.be, 0));
}

/* The CPUs a container of this class actually runs on. */
static void effective_cpus(const struct np_node_state *st,
			   const struct np_workload_alloc *a,
			   const struct np_container_alloc *c, np_cpuset *out)
{
	struct np_pools p;
	if (c->exclusive) {
		*out = c->cpus;
		return;
	}
	np_state_pools(st, &p);
	*out = a->qos_class == NP_QOS_BE ? p.be : p.shared;
	if (!c->hint.any) {
		np_cpuset in;
		np_topology_cpus_of_nodes(st->topo, c->hint.mask, &in);
		np_cpuset_and(&in, &in, out);
		if (!np_cpuset_empty(&in))
			*out = in;
	}
}

json_t *np_workload_alloc_to_json(const struct np_node_state *st,
				  const struct np_workload_alloc *a)
{
	json_t *o = json_object(), *cs = json_array();
	np_cpuset all, excl;
	np_nodemask mems = 0;
	struct np_pools p;

	np_cpuset_zero(&all);
	np_cpuset_zero(&excl);
	np_state_pools(st, &p);
	for (int i = 0; i < a->ncontainers; i++) {
		const struct np_container_alloc *c = &a->c[i];
		json_t *co, *dv = json_object();
		np_cpuset eff;
		effective_cpus(st, a, c, &eff);
		np_cpuset_or(&all, &all, &eff);
		if (c->exclusive)
			np_cpuset_or(&excl, &excl, &c->cpus);
		mems |= c->mems;
		for (int k = 0; k < c->ndev; k++) {
			const struct np_device *x = &st->topo->devices[c->dev[k]];
			json_t *l = json_object_get(dv, x->resource);
			if (!l) {
				l = json_array();
				json_object_set_new(dv, x->resource, l);
			}
			json_array_append_new(l, json_string(x->id));
		}
		co = json_pack("{s:s,s:o,s:b,s:o,s:o,s:o}", "name", c->name,
			       "cpuset", cpuset_json(&eff), "exclusive",
			       c->exclusive, "mems", mask_json(c->mems), "hint",
			       hint_json(&c->hint), "devices", dv);
		json_array_append_new(cs, co);
	}
	json_object_set_new(o, "name", json_string(a->req.name));
	json_object_set_new(o, "cgroup", json_string(a->req.cgroup));
	json_object_set_new(o, "qos", json_string(np_qos_name(a->req.qos)));
	json_object_set_new(o, "class", json_string(np_qos_name(a->qos_class)));
	json_object_set_new(o, "cpuset", cpuset_json(&all));
	json_object_set_new(o, "exclusive", json_boolean(!np_cpuset_empty(&excl)));
	json_object_set_new(o, "mems", mask_json(mems));
	if (np_cpuset_empty(&excl))
		json_object_set_new(o, "cpuSharedPools",
				    shared_pools_json(st,
						      a->qos_class == NP_QOS_BE
							      ? &p.be
							      : &p.shared,
						      0));
	json_object_set_new(o, "containers", cs);
	return o;
}

json_t *np_decision_to_json(const struct np_node_state *st,
			    const struct np_decision *d)
{
	json_t *o;
	if (!d->admitted || !d->alloc)
		return json_pack("{s:b,s:s,s:s,s:s}", "admitted", 0, "workload",
				 d->workload, "resource", d->resource,
				 "reason", d->reason);
	o = np_workload_alloc_to_json(st, d->alloc);
	json_object_set_new(o, "admitted", json_true());
	return o;
}

/* ---- node state (planner "state" and the daemon's checkpoint body) ---- */

int np_state_to_json(const struct np_node_state *st, json_t **out)
{
	json_t *ws = json_array();
	char buf[32];

	for (int i = 0; i < st->nworkloads; i++) {
		const struct np_workload_alloc *a = &st->w[i];
		json_t *cs = json_array();
		for (int c = 0; c < a->ncontainers; c++) {
			const struct np_container_alloc *ca = &a->c[c];
			json_t *mem = json_object(), *hp = json_array(),
			       *dv = json_array();
			const struct np_mem_charge *chg = ca->charge;
			for (int n = 0; chg && n < NP_MAX_NUMA; n++) {
				if (!chg->mem[n])
					continue;
				snprintf(buf, sizeof(buf), "%d", n);
				json_object_set_new(
					mem, buf,
					json_integer((json_int_t)chg->mem[n]));
			}
			for (int h = 0; chg && h < NP_MAX_HUGEPAGE_SIZES; h++)
				for (int n = 0; n < NP_MAX_NUMA; n++)
					if (chg->huge[h][n])
						json_array_append_new(
							hp,
							json_pack("{s:i,s:i,s:I}",
								  "size_index", h,
								  "node", n, "pages",
								  (json_int_t)chg->huge[h][n]));
			for (int k = 0; k < ca->ndev; k++)
				json_array_append_new(
					dv, json_pack("{s:s,s:s}", "id",
						      st->topo->devices[ca->dev[k]].id,
						      "resource",
						      st->topo->devices[ca->dev[k]]
							      .resource));
			json_array_append_new(
				cs,
				json_pack("{s:s,s:b,s:o,s:o,s:o,s:o,s:o,s:o}",
					  "name", ca->name, "exclusive",
					  ca->exclusive, "cpus",
					  cpuset_json(&ca->cpus), "mems",
					  mask_json(ca->mems), "hint",
					  hint_json(&ca->hint), "memory", mem,
					  "hugepages", hp, "devices", dv));
		}
		json_array_append_new(
			ws, json_pack("{s:o,s:s,s:o}", "spec",
				      np_workload_req_to_json(&a->req), "class",
				      np_qos_name(a->qos_class), "containers",
				      cs));
	}
	*out = json_pack("{s:o,s:o}", "reserved", cpuset_json(&st->reserved),
			 "workloads", ws);
	return *out ? 0 : -ENOMEM;
}

static int container_alloc_from_json(const struct np_node_state *st,
				     struct np_container_alloc *ca,
				     const json_t *o, const char *path,
				     char *err, size_t errlen)
{
	const struct np_topology *t = st->topo;
	const json_t *h, *mem, *hp, *dv, *v;
	const char *s, *key;
	char perr[200];
	size_t i;
	int r;

	memset(ca, 0, sizeof(*ca));
	if ((r = np_json_str(o, "name", path, true, &s, err, errlen)))
		return r;
	snprintf(ca->name, sizeof(ca->name), "%s", s);
	if ((r = np_json_bool(o, "exclusive", path, true, &ca->exclusive, err,
			      errlen)) ||
	    (r = np_json_cpuset(o, "cpus", path, true, &ca->cpus, err, errlen)))
		return r;
	if (!np_cpuset_subset(&ca->cpus, &t->online))
		return np_json_fail(err, errlen, path, "cpus",
				    "names CPUs that are not online here");
	if ((r = np_json_str(o, "mems", path, true, &s, err, errlen)))
		return r;
	if (np_nodemask_parse(&ca->mems, s, perr, sizeof(perr)) ||
	    (ca->mems & ~t->numa_mask))
		return np_json_fail(err, errlen, path, "mems",
				    "\"%s\" is not a set of this machine's NUMA "
				    "nodes",
				    s);
	h = json_object_get(o, "hint");
	ca->hint.any = true;
	if (json_is_object(h)) {
		const json_t *m = json_object_get(h, "mask");
		ca->hint.preferred = json_is_true(json_object_get(h, "preferred"));
		if (json_is_array(m)) {
			ca->hint.any = false;
			json_array_foreach(m, i, v)
			{
				if (!json_is_integer(v) ||
				    !np_nodemask_test(t->numa_mask,
						      (int)json_integer_value(v)))
					return np_json_fail(err, errlen, path,
							    "hint",
							    "mask names an unknown "
							    "NUMA node");
				ca->hint.mask |= NP_NODEMASK_BIT(
					json_integer_value(v));
			}
		}
	}
	mem = json_object_get(o, "memory");
	if (json_is_object(mem))
		json_object_foreach((json_t *)mem, key, v)
		{
			int n = atoi(key);
			if (!np_nodemask_test(t->numa_mask, n) ||
			    !json_is_integer(v) || json_integer_value(v) < 0)
				return np_json_fail(err, errlen, path, "memory",
						    "bad entry \"%s\"", key);
			if (!ca->charge &&
			    !(ca->charge = calloc(1, sizeof(*ca->charge))))
				return -ENOMEM;
			ca->charge->mem[n] = (uint64_t)json_integer_value(v);
		}
	hp = json_object_get(o, "hugepages");
	if (json_is_array(hp))
		json_array_foreach(hp, i, v)
		{
			long long si = json_integer_value(json_object_get(v, "size_index"));
			long long n = json_integer_value(json_object_get(v, "node"));
			long long pg = json_integer_value(json_object_get(v, "pages"));
			if (si < 0 || si >= NP_MAX_HUGEPAGE_SIZES ||
			    !np_nodemask_test(t->numa_mask, (int)n) || pg < 0)
				return np_json_fail(err, errlen, path,
						    "hugepages", "bad entry %zu",
						    i);
			if (!ca->charge &&
			    !(ca->charge = calloc(1, sizeof(*ca->charge))))
				return -ENOMEM;
			ca->charge->huge[si][n] = (uint64_t)pg;
		}
	dv = json_object_get(o, "devices");
	if (json_is_array(dv))
		json_array_foreach(dv, i, v)
		{
			const char *id = json_string_value(json_object_get(v, "id"));
			int known = -1;
			if (!id || ca->ndev >= 16)
				return np_json_fail(err, errlen, path, "devices",
						    "bad entry %zu", i);
			for (int k = 0; k < t->ndevices; k++)
				if (!strcmp(t->devices[k].id, id))
					known = k;
			if (known < 0)
				return np_json_fail(err, errlen, path, "devices",
						    "device \"%s\" does not exist "
						    "here",
						    id);
			ca->dev[ca->ndev++] = (int16_t)known;
		}
	return 0;
}

int np_state_load_json(struct np_node_state *st, const json_t *j,
		       const char *path, char *err, size_t errlen)
{
	const json_t *ws, *wj;
	struct np_workload_alloc *arr = NULL;
	np_cpuset seen;
	size_t i;
	int r = 0;

	if (!path)
		path = "state";
	if (!j || json_is_null(j))
		return 0;
	ws = json_object_get(j, "workloads");
	if (!json_is_array(ws))
		return np_json_fail(err, errlen, path, "workloads",
				    "expected an array");
	arr = calloc(json_array_size(ws) + 1, sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	np_cpuset_zero(&seen);
	json_array_foreach(ws, i, wj)
	{
		struct np_workload_alloc *a = &arr[i];
		const json_t *cs, *cj;
		const char *s;
		char wp[128], cp[192];
		size_t k;

		snprintf(wp, sizeof(wp), "%s.workloads[%zu]", path, i);
		snprintf(cp, sizeof(cp), "%s.spec", wp);
		if ((r = np_workload_req_from_json(&a->req,
						   json_object_get(wj, "spec"),
						   cp, err, errlen)))
			goto fail;
		for (size_t x = 0; x < i; x++)
			if (!strcmp(arr[x].req.name, a->req.name)) {
				r = np_json_fail(err, errlen, cp, "name",
						 "duplicate workload \"%s\"",
						 a->req.name);
				goto fail;
			}
		if ((r = np_json_str(wj, "class", wp, true, &s, err, errlen)))
			goto fail;
		if (np_qos_parse(s, &a->qos_class) < 0) {
			r = np_json_fail(err, errlen, wp, "class",
					 "unknown class \"%s\"", s);
			goto fail;
		}
		a->excl = a->req.excl;
		cs = json_object_get(wj, "containers");
		if (!json_is_array(cs) ||
		    (int)json_array_size(cs) != a->req.ncontainers) {
			r = np_json_fail(err, errlen, wp, "containers",
					 "expected %d entries (one per container "
					 "of the spec)",
					 a->req.ncontainers);
			goto fail;
		}
		a->c = calloc((size_t)a->req.ncontainers, sizeof(*a->c));
		if (!a->c) {
			r = -ENOMEM;
			goto fail;
		}
		a->ncontainers = a->req.ncontainers;
		json_array_foreach(cs, k, cj)
		{
			snprintf(cp, sizeof(cp), "%s.containers[%zu]", wp, k);
			if ((r = container_alloc_from_json(st, &a->c[k], cj, cp,
							   err, errlen)))
				goto fail;
			if (!a->c[k].exclusive)
				continue;
			if (np_cpuset_intersects(&a->c[k].cpus, &seen)) {
				r = np_json_fail(err, errlen, cp, "cpus",
						 "overlaps another exclusive "
						 "allocation");
				goto fail;
			}
			if (np_cpuset_intersects(&a->c[k].cpus, &st->reserved)) {
				r = np_json_fail(err, errlen, cp, "cpus",
						 "includes reserved CPUs");
				goto fail;
			}
			np_cpuset_or(&seen, &seen, &a->c[k].cpus);
		}
	}
	for (int x = 0; x < st->nworkloads; x++)
		np_workload_alloc_free(&st->w[x]);
	free(st->w);
	st->w = arr;
	st->nworkloads = (int)json_array_size(ws);
	st->cap = st->nworkloads + 1;
	return np_state_refresh(st);
fail:
	/* arr is zeroed past the failing entry: free what was filled. */
	for (size_t x = 0; x < json_array_size(ws); x++)
		np_workload_alloc_free(&arr[x]);
	free(arr);
	return r;
}

/* ---- planner kind "admit" ---- */

int np_plan_admit(const json_t *req, json_t **result, char *err,
		  size_t errlen)
{
	struct np_topology *t = NULL;
	struct np_node_policy pol;
	struct np_node_state st = {0};
	struct np_workload_req *w = NULL;
	struct np_decision *d = NULL;
	json_t *sj = NULL;
	int r;

	w = calloc(1, sizeof(*w));
	d = calloc(1, sizeof(*d));
	if (!w || !d) {
		r = -ENOMEM;
		goto out;
	}
	if ((r = np_topology_from_json(&t, json_object_get(req, "topology"),
				       "topology", err, errlen)) ||
	    (r = np_policy_from_json(&pol, json_object_get(req, "policy"),
				     "policy", err, errlen)) ||
	    (r = np_state_init(&st, t, &pol, err, errlen)) ||
	    (r = np_state_load_json(&st, json_object_get(req, "state"), "state",
				    err, errlen)) ||
	    (r = np_workload_req_from_json(w, json_object_get(req, "workload"),
					   "workload", err, errlen)))
		goto out;
	r = np_admit(&st, w, d, err, errlen);
	if (r == -EEXIST) {
		*result = json_pack("{s:s}", "error", err);
		r = 0;
		goto out;
	}
	if (r)
		goto out;
	*result = np_decision_to_json(&st, d);
	if ((r = np_state_to_json(&st, &sj)))
		goto out;
	json_object_set_new(*result, "state", sj);
	json_object_set_new(*result, "pools", np_pools_to_json(&st));
out:
	np_state_free(&st);
	np_topology_free(t);
	if (w)
		np_workload_req_free(w);
	free(w);
	free(d);
	return r;
}

/* expect: any subset of {"admitted", "cpuset", "mems", "resource",
 * "cpu_count", "numa_nodes"}; compared field by field. */
int np_admit_check(const json_t *expect, const json_t *result, char *why,
		   size_t len)
{
	const json_t *e;
	if ((e = json_object_get(expect, "admitted")) &&
	    json_is_true(e) != json_is_true(json_object_get(result, "admitted"))) {
		const char *reason =
			json_string_value(json_object_get(result, "reason"));
		snprintf(why, len, "admitted: expected %s%s%s",
			 json_is_true(e) ? "true" : "false",
			 reason ? ", rejected: " : "", reason ? reason : "");
		return -1;
	}
	if ((e = json_object_get(expect, "cpuset"))) {
		np_cpuset a, b;
		const char *got = json_string_value(json_object_get(result, "cpuset"));
		if (!got || np_cpuset_parse(&a, got, NULL, 0) ||
		    np_cpuset_parse(&b, json_string_value(e), NULL, 0) ||
		    !np_cpuset_equal(&a, &b)) {
			snprintf(why, len, "cpuset: got \"%s\", expected \"%s\"",
				 got ? got : "", json_string_value(e));
			return -1;
		}
	}
	if ((e = json_object_get(expect, "mems"))) {
		const char *got = json_string_value(json_object_get(result, "mems"));
		if (!got || strcmp(got, json_string_value(e))) {
			snprintf(why, len, "mems: got \"%s\", expected \"%s\"",
				 got ? got : "", json_string_value(e));
			return -1;
		}
	}
	if ((e = json_object_get(expect, "resource"))) {
		const char *got =
			json_string_value(json_object_get(result, "resource"));
		if (!got || !strstr(got, json_string_value(e))) {
			snprintf(why, len, "resource: got \"%s\", expected \"%s\"",
				 got ? got : "", json_string_value(e));
			return -1;
		}
	}
	return 0;
}
