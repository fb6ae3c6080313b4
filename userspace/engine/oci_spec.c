// SPDX-License-Identifier: Apache-2.0
/* OCI runtime hooks, the pure part (numaplace/oci.h): the workload spec
 * from the annotations and config.json, and numaplaced's answer. */
#include "numaplace/oci.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/json_util.h"
#include "numaplace/cpuset.h"
#include "numaplace/error.h"
#include "numaplace/names.h"
#include "numaplace/quantity.h"

#define PREFIX "numaplace.io/"
#define KOORD_QOS "koordinator.sh/qosClass"
#define KOORD_SPEC "scheduling.koordinator.sh/resource-spec"

/* ---- the workload spec ---- */

/* The annotation's value: the state's, else config.json's, else NULL. */
static const char *annot(const struct np_oci_state *st,
			 const struct np_oci_config *c, const char *key)
{
	const json_t *v = st ? json_object_get(st->annotations, key) : NULL;

	if (!v && c)
		v = json_object_get(c->annotations, key);
	return json_string_value(v);
}

const char *np_oci_annotation(const struct np_oci_state *st,
			      const struct np_oci_config *c, const char *key)
{
	return annot(st, c, key);
}

const char *np_oci_namespace(const struct np_oci_state *st,
			     const struct np_oci_config *c)
{
	const char *ns = annot(st, c, "io.kubernetes.pod.namespace");
	return ns ? ns : annot(st, c, "io.kubernetes.cri.sandbox-namespace");
}

static int check_annotation_set(const json_t *a, char *err, size_t errlen)
{
	static const char *const known[] = {"qos", "cpus", "memory",
					    "isolation", "workload",
					    "on-failure"};
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)a, k, v)
	{
		bool ours = !strncmp(k, PREFIX, strlen(PREFIX));
		if (!ours && strcmp(k, KOORD_QOS) && strcmp(k, KOORD_SPEC))
			continue;
		if (ours && NP_NAME_FIND(known, k + strlen(PREFIX)) < 0)
			return np_errf(err, errlen, -EINVAL,
				       "annotations.%.200s: unknown annotation "
				       "(numaplace.io/ has qos, cpus, memory, "
				       "isolation, workload, on-failure)",
				       k);
		if (json_string_length(v) > NP_OCI_ANNOTATION_MAX)
			return np_json_fail(err, errlen, "annotations", k,
					    "the value is %zu bytes, more than "
					    "%d",
					    json_string_length(v),
					    NP_OCI_ANNOTATION_MAX);
		if (!json_string_length(v) ||
		    strlen(json_string_value(v)) != json_string_length(v))
			return np_json_fail(err, errlen, "annotations", k,
					    "the value is empty or holds a NUL");
	}
	return 0;
}

int np_oci_failure_annotation(const struct np_oci_state *st,
			      const struct np_oci_config *c,
			      enum np_oci_failure *out, char *err,
			      size_t errlen)
{
	const char *v = annot(st, c, PREFIX "on-failure");

	if (!v)
		return -ENOENT;
	if (np_oci_failure_parse(v, out) < 0)
		return np_json_fail(err, errlen, "annotations",
				    PREFIX "on-failure",
				    "\"%.64s\" is not fail-open or fail-closed",
				    v);
	return 0;
}

/* The workload name: numaplace.io/workload, else the id's beginning (the
 * rule of the engine's spec.name: 1..127 of letters, digits, - _ .). */
static int pick_name(struct np_oci_request *rq, const struct np_oci_state *st,
		     const struct np_oci_config *c, char *err, size_t errlen)
{
	const char *v = annot(st, c, PREFIX "workload");
	const char *from = v ? "annotations." PREFIX "workload" : "state.id";

	if (v)
		snprintf(rq->name, sizeof(rq->name), "%.*s", NP_NAME_MAX - 1, v);
	else
		snprintf(rq->name, sizeof(rq->name), "%.*s",
			 NP_OCI_NAME_FROM_ID, st->id);
	if (v && strlen(v) >= NP_NAME_MAX)
		return np_errf(err, errlen, -EINVAL,
			       "%s: a workload name is 1..%d characters", from,
			       NP_NAME_MAX - 1);
	for (const char *p = rq->name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' ||
		      *p == '.'))
			return np_errf(err, errlen, -EINVAL,
				       "%s: \"%.64s\" is not a workload name "
				       "(letters, digits, - _ .)%s",
				       from, rq->name,
				       v ? "" : "; set numaplace.io/workload");
	return 0;
}

static int pick_qos(const struct np_oci_state *st,
		    const struct np_oci_config *c, const char **qos,
		    char *err, size_t errlen)
{
	static const char *const ours[] = {"LSE", "LSR", "LS", "BE"};
	static const char *const koord[] = {"LSE", "LSR", "LS", "BE",
					    "SYSTEM"};
	const char *v = annot(st, c, PREFIX "qos");

	*qos = NULL;
	if (v) {
		if (NP_NAME_FIND(ours, v) < 0)
			return np_json_fail(err, errlen, "annotations",
					    PREFIX "qos",
					    "\"%.64s\" is not LSE, LSR, LS or "
					    "BE",
					    v);
		*qos = v;
	} else if ((v = annot(st, c, KOORD_QOS))) {
		int i = NP_NAME_FIND(koord, v);
		if (i < 0)
			return np_json_fail(err, errlen, "annotations",
					    KOORD_QOS,
					    "\"%.64s\" is not LSE, LSR, LS, BE "
					    "or SYSTEM",
					    v);
		/* SYSTEM pods have no CPUs of their own */
		*qos = i == 4 ? "LS" : koord[i];
	}
	return 0;
}

/* qos and CPU millicores (-1: none) of the container. */
static int pick_cpu(const struct np_oci_state *st,
		    const struct np_oci_config *c, const char **qos,
		    int64_t *cpu, char *err, size_t errlen)
{
	const char *v = annot(st, c, PREFIX "cpus");
	int64_t lim = c->limit_milli, req = c->request_milli;
	char qerr[200];
	int r;

	if (req < 0 && lim >= 0)
		req = lim; /* Kubernetes defaults a request to the limit */
	if ((r = pick_qos(st, c, qos, err, errlen)))
		return r;
	if (v) {
		if (np_quantity_cpu_milli(v, cpu, qerr, sizeof(qerr)))
			return np_json_fail(err, errlen, "annotations",
					    PREFIX "cpus", "%s", qerr);
		if (*cpu <= 0 || *cpu > (int64_t)NP_MAX_CPUS * 1000)
			return np_json_fail(err, errlen, "annotations",
					    PREFIX "cpus",
					    "\"%.64s\" is not 1m..%d CPUs", v,
					    NP_MAX_CPUS);
	} else if (*qos && (!strcmp(*qos, "LSE") || !strcmp(*qos, "LSR"))) {
		*cpu = lim >= 0 ? lim : req;
	} else {
		*cpu = req;
	}
	if (!*qos)
		*qos = lim > 0 && req == lim ? "Guaranteed"
		       : lim > 0 || req > 0  ? "Burstable"
					     : "BestEffort";
	if ((!strcmp(*qos, "LSE") || !strcmp(*qos, "LSR")) &&
	    (*cpu < 1000 || *cpu % 1000))
		/* -EDOM: the annotations are well formed but this container's
		 * resources cannot take them (a pod-wide LSE on a fractional
		 * sidecar); a bad cpus annotation is bad input */
		return np_errf(err, errlen, v ? -EINVAL : -EDOM,
			       "%s: %s needs whole CPUs, at least 1 (got %s)",
			       v ? "annotations." PREFIX "cpus"
				 : "config.json: linux.resources.cpu",
			       *qos, *cpu < 0 ? "no CPU limit or request" : v ? v
			       : "a fractional CPU count");
	if (!strcmp(*qos, "BestEffort"))
		*cpu = -1;
	return 0;
}

static int pick_memory(const struct np_oci_state *st,
		       const struct np_oci_config *c, int64_t *mem, char *err,
		       size_t errlen)
{
	const char *v = annot(st, c, PREFIX "memory");
	char qerr[200];
	uint64_t b;

	*mem = c->memory;
	if (!v)
		return 0;
	if (np_quantity_bytes(v, &b, qerr, sizeof(qerr)))
		return np_json_fail(err, errlen, "annotations", PREFIX "memory",
				    "%s", qerr);
	if (b == 0 || b > (1ULL << 52))
		return np_json_fail(err, errlen, "annotations", PREFIX "memory",
				    "\"%.64s\" is not 1..4Pi bytes", v);
	*mem = (int64_t)b;
	return 0;
}

/* isolation and resourceSpec into spec. */
static int add_options(json_t *spec, const struct np_oci_state *st,
		       const struct np_oci_config *c, char *err, size_t errlen)
{
	static const char *const rkeys[] = {"preferredCPUBindPolicy",
					    "requiredCPUBindPolicy",
					    "preferredCPUExclusivePolicy", NULL};
	const char *v = annot(st, c, PREFIX "isolation"), *k;
	json_t *rs, *x;

	if (v) {
		if (strcmp(v, "partition") && strcmp(v, "none"))
			return np_json_fail(err, errlen, "annotations",
					    PREFIX "isolation",
					    "\"%.64s\" is not partition or none",
					    v);
		if (json_object_set_new(spec, "isolation", json_string(v)))
			return -ENOMEM;
	}
	if (!(v = annot(st, c, KOORD_SPEC)))
		return 0;
	if (!(rs = json_loads(v, JSON_REJECT_DUPLICATES, NULL)) ||
	    !json_is_object(rs)) {
		json_decref(rs);
		return np_json_fail(err, errlen, "annotations", KOORD_SPEC,
				    "expected a JSON object such as "
				    "{\"preferredCPUBindPolicy\": \"FullPCPUs\"}");
	}
	if (np_json_only_keys(rs, rkeys, "annotations." KOORD_SPEC, err,
			      errlen)) {
		json_decref(rs);
		return -EINVAL;
	}
	json_object_foreach(rs, k, x)
	{
		if (!json_is_string(x)) {
			json_decref(rs);
			return np_errf(err, errlen, -EINVAL,
				       "annotations.%s: %s: expected a string",
				       KOORD_SPEC, k);
		}
	}
	return json_object_set_new(spec, "resourceSpec", rs) ? -ENOMEM : 0;
}

static json_t *container_json(int64_t cpu, int64_t mem)
{
	json_t *o = json_pack("{s:s}", "name", "main");
	char buf[32];

	if (o && cpu > 0) {
		if (cpu % 1000)
			snprintf(buf, sizeof(buf), "%lldm", (long long)cpu);
		else
			snprintf(buf, sizeof(buf), "%lld",
				 (long long)(cpu / 1000));
		json_object_set_new(o, "cpu", json_string(buf));
	}
	if (o && mem > 0)
		json_object_set_new(o, "memory", json_integer(mem));
	return o;
}

static json_t *cpu_quantity(int64_t milli)
{
	char buf[32];

	if (milli % 1000)
		snprintf(buf, sizeof(buf), "%lldm", (long long)milli);
	else
		snprintf(buf, sizeof(buf), "%lld", (long long)(milli / 1000));
	return json_string(buf);
}

/* The container's namespace and resources (what bounds the annotations)
 * into its "container" object. */
static int container_resources(json_t *ctr, const struct np_oci_state *st,
			       const struct np_oci_config *c)
{
	const char *ns = np_oci_namespace(st, c);
	json_t *l = json_object(), *q = json_object();
	int64_t req = c->request_milli;
	int bad = !l || !q;

	if (ns)
		bad |= json_object_set_new(ctr, "namespace", json_string(ns));
	if (req < 0 && c->limit_milli >= 0)
		req = c->limit_milli; /* as pick_cpu: the request defaults */
	if (c->limit_milli > 0)
		bad |= json_object_set_new(l, "cpu", cpu_quantity(c->limit_milli));
	if (c->memory > 0)
		bad |= json_object_set_new(l, "memory", json_integer(c->memory));
	for (int h = 0; h < c->nhuge; h++) {
		char key[64], sz[32];
		np_quantity_format_bytes(c->huge_size_kb[h] * 1024, sz,
					 sizeof(sz));
		snprintf(key, sizeof(key), "hugepages-%s", sz);
		bad |= json_object_set_new(
		    l, key, json_integer((json_int_t)c->huge_limit[h]));
	}
	if (req > 0)
		bad |= json_object_set_new(q, "cpu", cpu_quantity(req));
	bad |= json_object_set(ctr, "limits", l);
	bad |= json_object_set(ctr, "requests", q);
	json_decref(l);
	json_decref(q);
	return bad ? -ENOMEM : 0;
}

int np_oci_request_set_cgroup(struct np_oci_request *rq, const char *cgroup)
{
	json_t *ct = json_object_get(rq->spec, "container");

	return json_object_set_new(ct, "cgroup", json_string(cgroup)) ? -ENOMEM
								       : 0;
}

int np_oci_request_build(struct np_oci_request *rq,
			 const struct np_oci_state *st,
			 const struct np_oci_config *c, const char *cgroup,
			 char *err, size_t errlen)
{
	struct np_workload_req w;
	const char *qos;
	int64_t cpu, mem;
	char fallback[NP_OCI_ID_MAX + 2], e2[512];
	int r;

	memset(rq, 0, sizeof(*rq));
	if ((r = check_annotation_set(c->annotations, err, errlen)) ||
	    (r = check_annotation_set(st->annotations, err, errlen)) ||
	    (r = pick_name(rq, st, c, err, errlen)) ||
	    (r = pick_cpu(st, c, &qos, &cpu, err, errlen)) ||
	    (r = pick_memory(st, c, &mem, err, errlen)))
		return r;
	snprintf(fallback, sizeof(fallback), "/%s", st->id);
	rq->spec = json_pack("{s:s,s:s,s:[o],s:{s:s,s:s}}", "name", rq->name,
			     "qos", qos, "containers", container_json(cpu, mem),
			     "container", "id", st->id, "cgroup",
			     cgroup ? cgroup : fallback);
	if (!rq->spec ||
	    container_resources(json_object_get(rq->spec, "container"), st, c))
		return -ENOMEM;
	if ((r = add_options(rq->spec, st, c, err, errlen)))
		return r;
	r = np_workload_req_from_json(&w, rq->spec, "spec", e2, sizeof(e2));
	np_workload_req_free(&w);
	if (r)
		return np_errf(err, errlen, r,
			       "the workload made from the annotations and "
			       "config.json is refused: %s",
			       e2);
	return 0;
}

void np_oci_request_free(struct np_oci_request *rq)
{
	json_decref(rq->spec);
	rq->spec = NULL;
}

json_t *np_oci_shared_spec(const json_t *spec)
{
	json_t *s = json_deep_copy(spec), *cs, *c, *v;
	const json_t *ctr;
	const char *key;
	void *tmp;
	size_t i;

	if (!s || json_object_set_new(s, "qos", json_string("LS"))) {
		json_decref(s);
		return NULL;
	}
	json_object_del(s, "isolation");
	json_object_del(s, "resourceSpec");
	/* what the resources give, not what an annotation asked */
	ctr = json_object_get(s, "container");
	cs = json_object_get(s, "containers");
	json_array_foreach(cs, i, c)
	{
		json_object_foreach_safe(c, tmp, key, v)
		{
			if (strcmp(key, "name"))
				json_object_del(c, key);
		}
		if (i)
			continue;
		if ((v = json_object_get(json_object_get(ctr, "requests"), "cpu")))
			json_object_set(c, "cpu", v);
		if ((v = json_object_get(json_object_get(ctr, "limits"),
					 "memory")))
			json_object_set(c, "memory", v);
	}
	return s;
}

/* ---- numaplaced's answer ---- */

static void copy_str(const json_t *o, const char *key, char *buf, size_t len)
{
	snprintf(buf, len, "%s",
		 json_string_value(json_object_get(o, key))
		     ? json_string_value(json_object_get(o, key))
		     : "");
}

int np_oci_decision_parse(const json_t *resp, struct np_oci_decision *d,
			  char *err, size_t errlen)
{
	const json_t *dec = json_object_get(resp, "decision");
	const char *s;
	int r;

	memset(d, 0, sizeof(*d));
	if (!json_is_object(dec))
		return np_errf(err, errlen, -EPROTO,
			       "numaplaced's answer has no decision object");
	if ((r = np_json_bool(dec, "admitted", "decision", true, &d->admitted,
			      err, errlen)))
		return -EPROTO;
	if (!d->admitted) {
		copy_str(dec, "resource", d->resource, sizeof(d->resource));
		copy_str(dec, "reason", d->reason, sizeof(d->reason));
		return 0;
	}
	if (np_json_str(dec, "cpuset", "decision", true, &s, err, errlen))
		return -EPROTO;
	if (strlen(s) >= sizeof(d->cpuset))
		return np_errf(err, errlen, -EPROTO,
			       "decision.cpuset: longer than %zu bytes",
			       sizeof(d->cpuset) - 1);
	snprintf(d->cpuset, sizeof(d->cpuset), "%s", s);
	copy_str(dec, "mems", d->mems, sizeof(d->mems));
	return 0;
}

int np_oci_cpuset_in_force(const char *effective, const char *want,
			   bool *equal, char *err, size_t errlen)
{
	char buf[4096], e2[256];
	np_cpuset a, b;
	size_t n;

	snprintf(buf, sizeof(buf), "%s", effective);
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	if (np_cpuset_parse(&a, buf, e2, sizeof(e2)))
		return np_errf(err, errlen, -EINVAL,
			       "cpuset.cpus.effective \"%.64s\": %s", buf, e2);
	if (np_cpuset_parse(&b, want, e2, sizeof(e2)))
		return np_errf(err, errlen, -EINVAL,
			       "decision.cpuset \"%.64s\": %s", want, e2);
	*equal = np_cpuset_equal(&a, &b);
	return 0;
}
