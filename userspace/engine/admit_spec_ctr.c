// SPDX-License-Identifier: Apache-2.0
/*
 * The workload spec's "container" object beyond its id and cgroup: the
 * container's Kubernetes namespace and what its runtime gave it (limits
 * and requests, config.json's linux.resources in the kubelet's encoding),
 * which bound what the container may be given (numaplace/oci_policy.h).
 */
#include "engine/admit_spec_internal.h"
#include "engine/json_util.h"
#include "numaplace/quantity.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A Kubernetes namespace: an RFC 1123 label, 1..63 of [a-z0-9-], starting
 * and ending with a letter or digit. */
static bool namespace_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > 63 || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		      *p == '-'))
			return false;
	return true;
}

/* o[key] when present: above 0 (hugepages: 0 too, none may be used),
 * into *out; -ENOENT when absent. */
static int positive(const json_t *o, const char *key, bool cpu,
		    const char *path, int64_t *out, char *err, size_t errlen)
{
	bool zero_ok = !cpu && strcmp(key, "memory");
	json_t *one;
	uint64_t b;
	int r;

	if (!json_object_get(o, key))
		return -ENOENT;
	/* the engine's own parsers, on an object of that key alone */
	if (!(one = json_pack("{s:O}", cpu ? "cpu" : key,
			      json_object_get(o, key))))
		return -ENOMEM;
	r = cpu ? np_spec_get_cpu(one, path, out, err, errlen)
		: np_spec_get_bytes(one, key, path, &b, err, errlen);
	json_decref(one);
	if (r)
		return r;
	if (!cpu)
		*out = (int64_t)b;
	if (*out < 0 || (*out == 0 && !zero_ok))
		return np_json_fail(err, errlen, path, key,
				    "expected a quantity above 0 (leave it out "
				    "when there is no %s)",
				    cpu ? "CPU limit or request" : "limit");
	return 0;
}

static int limits_from_json(struct np_container_res *res, const json_t *l,
			    const char *path, char *err, size_t errlen)
{
	const char *key;
	json_t *v;
	int64_t x;
	int r;

	if (!json_is_object(l))
		return np_json_fail(err, errlen, path, NULL,
				    "expected an object of cpu, memory, "
				    "hugepages-<size>");
	json_object_foreach((json_t *)l, key, v)
	{
		uint64_t kb;
		if (!strcmp(key, "cpu") || !strcmp(key, "memory"))
			continue;
		if (np_spec_hugepage_key(key, &kb))
			return np_json_fail(err, errlen, path, key,
					    "unknown field (expected cpu, "
					    "memory, hugepages-<size>)");
		if (res->nhuge >= NP_MAX_HUGEPAGE_SIZES)
			return np_json_fail(err, errlen, path, key,
					    "too many hugepage sizes");
		if ((r = positive(l, key, false, path, &x, err, errlen)))
			return r;
		res->huge_size_kb[res->nhuge] = kb;
		res->huge_limit[res->nhuge++] = (uint64_t)x;
	}
	r = positive(l, "cpu", true, path, &res->cpu_limit, err, errlen);
	if (r && r != -ENOENT)
		return r;
	r = positive(l, "memory", false, path, &res->memory_limit, err,
		     errlen);
	return r == -ENOENT ? 0 : r;
}

static int requests_from_json(struct np_container_res *res, const json_t *q,
			      const char *path, char *err, size_t errlen)
{
	static const char *const keys[] = {"cpu", NULL};
	int r;

	if (!json_is_object(q))
		return np_json_fail(err, errlen, path, NULL,
				    "expected an object {\"cpu\": ...}");
	if ((r = np_json_only_keys(q, keys, path, err, errlen)))
		return r;
	r = positive(q, "cpu", true, path, &res->cpu_request, err, errlen);
	return r == -ENOENT ? 0 : r;
}

int np_spec_container_extra(struct np_workload_req *w, const json_t *o,
			    const char *cp, char *err, size_t errlen)
{
	const json_t *l = json_object_get(o, "limits"),
		     *q = json_object_get(o, "requests");
	char sub[192];
	const char *ns;
	int r;

	r = np_json_str(o, "namespace", cp, false, &ns, err, errlen);
	if (r == 0) {
		if (!namespace_ok(ns))
			return np_json_fail(err, errlen, cp, "namespace",
					    "\"%.64s\" is not a Kubernetes "
					    "namespace (1..63 of [a-z0-9-], "
					    "starting and ending with a letter "
					    "or digit)",
					    ns);
		if (!(w->container_ns = strdup(ns)))
			return -ENOMEM;
	} else if (r != -ENOENT) {
		return r;
	}
	if (!l && !q)
		return 0;
	if (!(w->container_res = calloc(1, sizeof(*w->container_res))))
		return -ENOMEM;
	w->container_res->cpu_limit = w->container_res->cpu_request = -1;
	w->container_res->memory_limit = -1;
	if (l && (r = limits_from_json(w->container_res, l,
				       np_json_path(sub, sizeof(sub), cp,
						    "limits", -1),
				       err, errlen)))
		return r;
	if (q && (r = requests_from_json(w->container_res, q,
					 np_json_path(sub, sizeof(sub), cp,
						      "requests", -1),
					 err, errlen)))
		return r;
	return 0;
}

static json_t *cpu_json(int64_t milli)
{
	char buf[32];

	if (milli % 1000)
		snprintf(buf, sizeof(buf), "%lldm", (long long)milli);
	else
		snprintf(buf, sizeof(buf), "%lld", (long long)(milli / 1000));
	return json_string(buf);
}

static json_t *bytes_json(uint64_t b)
{
	char buf[64];

	np_quantity_format_bytes(b, buf, sizeof(buf));
	return json_string(buf);
}

json_t *np_spec_container_to_json(const struct np_workload_req *w)
{
	const struct np_container_res *res = w->container_res;
	json_t *o = json_pack("{s:s,s:s}", "id", w->container_id, "cgroup",
			      w->cgroup),
	       *l, *q;

	if (!o)
		return NULL;
	if (w->container_ns)
		json_object_set_new(o, "namespace",
				    json_string(w->container_ns));
	if (!res)
		return o;
	l = json_object();
	q = json_object();
	if (res->cpu_limit >= 0)
		json_object_set_new(l, "cpu", cpu_json(res->cpu_limit));
	if (res->memory_limit >= 0)
		json_object_set_new(l, "memory",
				    bytes_json((uint64_t)res->memory_limit));
	for (int h = 0; h < res->nhuge; h++) {
		char key[96], v[64];
		np_quantity_format_bytes(res->huge_size_kb[h] * 1024, v,
					 sizeof(v));
		snprintf(key, sizeof(key), "hugepages-%s", v);
		json_object_set_new(l, key, bytes_json(res->huge_limit[h]));
	}
	if (res->cpu_request >= 0)
		json_object_set_new(q, "cpu", cpu_json(res->cpu_request));
	json_object_set_new(o, "limits", l);
	json_object_set_new(o, "requests", q);
	return o;
}
