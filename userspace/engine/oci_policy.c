// SPDX-License-Identifier: Apache-2.0
/* Who may ask for what (numaplace/oci_policy.h): the rules of
 * config.oci_hook.policy and the bound a container's resources put on its
 * workload's request. */
#include "numaplace/oci_policy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/json_util.h"
#include "numaplace/cpuset.h"
#include "numaplace/error.h"
#include "numaplace/quantity.h"

#define ASKABLE                                                                \
	(1u << NP_QOS_LSE | 1u << NP_QOS_LSR | 1u << NP_QOS_LS | 1u << NP_QOS_BE)

static void rule_defaults(struct np_oci_rule *r)
{
	memset(r, 0, sizeof(*r));
	r->qos = 1u << NP_QOS_LS | 1u << NP_QOS_BE;
	r->max_exclusive_cpus = -1;
}

void np_oci_policy_defaults(struct np_oci_policy *p)
{
	memset(p, 0, sizeof(*p));
	rule_defaults(&p->def);
}

/* "kubepods.slice/x" or "/kubepods.slice/x" into "/kubepods.slice/x". */
static int parent_from_json(struct np_oci_rule *r, const char *s,
			    const char *path, char *err, size_t errlen)
{
	const char *p = s + (s[0] == '/');
	size_t n = strlen(p);

	if (!n || n + 2 > sizeof(r->cgroup_parent))
		return np_json_fail(err, errlen, path, "cgroup_parent",
				    "expected a cgroup below the root of at "
				    "most %zu bytes (\"kubepods.slice\")",
				    sizeof(r->cgroup_parent) - 2);
	for (const char *c = p; *c; c++)
		if ((unsigned char)*c <= 0x20 || (unsigned char)*c > 0x7e)
			return np_json_fail(err, errlen, path, "cgroup_parent",
					    "holds a byte that is not printable "
					    "ASCII or a space (0x%02x)",
					    (unsigned char)*c);
	for (const char *c = p;;) {
		const char *e = strchr(c, '/');
		size_t k = e ? (size_t)(e - c) : strlen(c);
		if (!k || (k == 1 && c[0] == '.') ||
		    (k == 2 && c[0] == '.' && c[1] == '.'))
			return np_json_fail(err, errlen, path, "cgroup_parent",
					    "\"%.200s\" has an empty, \".\" or "
					    "\"..\" component",
					    s);
		if (!e)
			break;
		c = e + 1;
	}
	snprintf(r->cgroup_parent, sizeof(r->cgroup_parent), "/%s", p);
	return 0;
}

static int qos_from_json(struct np_oci_rule *r, const json_t *a,
			 const char *path, char *err, size_t errlen)
{
	size_t i;
	json_t *v;

	if (!json_is_array(a))
		return np_json_fail(err, errlen, path, "qos",
				    "expected an array of LSE, LSR, LS, BE");
	r->qos = 0;
	json_array_foreach(a, i, v)
	{
		const char *s = json_string_value(v);
		enum np_qos q;
		if (!s || np_qos_parse(s, &q) || !(ASKABLE & 1u << q))
			return np_errf(err, errlen, -EINVAL,
				       "%s.qos[%zu]: expected LSE, LSR, LS or "
				       "BE (the kubelet's classes follow the "
				       "resources and are not listed)",
				       path, i);
		r->qos |= 1u << q;
	}
	return 0;
}

static int rule_from_json(struct np_oci_rule *r, const json_t *j, bool def,
			  const char *path, char *err, size_t errlen)
{
	static const char *const keys[] = {
	    "namespace",      "cgroup_parent", "qos",
	    "partition",      "host_isolation", "without_limit",
	    "max_exclusive_cpus", NULL};
	const json_t *v;
	const char *s;
	int rc;

	rule_defaults(r);
	if (!json_is_object(j))
		return np_json_fail(err, errlen, path, NULL,
				    "expected an object (a rule)");
	if ((rc = np_json_only_keys(j, def ? keys + 2 : keys, path, err,
				    errlen)))
		return rc;
	if ((rc = np_json_str(j, "namespace", path, false, &s, err, errlen)) == 0) {
		if (!*s || strlen(s) > NP_K8S_NAMESPACE_MAX)
			return np_json_fail(err, errlen, path, "namespace",
					    "expected a Kubernetes namespace "
					    "(1..%d characters)",
					    NP_K8S_NAMESPACE_MAX);
		snprintf(r->ns, sizeof(r->ns), "%s", s);
	} else if (rc != -ENOENT) {
		return rc;
	}
	rc = np_json_str(j, "cgroup_parent", path, false, &s, err, errlen);
	if ((rc && rc != -ENOENT) ||
	    (!rc && (rc = parent_from_json(r, s, path, err, errlen))))
		return rc;
	if (!def && !r->ns[0] && !r->cgroup_parent[0])
		return np_json_fail(err, errlen, path, NULL,
				    "a rule needs a namespace or a "
				    "cgroup_parent (what matches no rule "
				    "falls to \"default\")");
	if ((v = json_object_get(j, "qos")) &&
	    (rc = qos_from_json(r, v, path, err, errlen)))
		return rc;
	if (((rc = np_json_bool(j, "partition", path, false, &r->partition, err,
				errlen)) && rc != -ENOENT) ||
	    ((rc = np_json_bool(j, "host_isolation", path, false,
				&r->host_isolation, err, errlen)) &&
	     rc != -ENOENT) ||
	    ((rc = np_json_bool(j, "without_limit", path, false,
				&r->without_limit, err, errlen)) &&
	     rc != -ENOENT))
		return rc;
	if ((v = json_object_get(j, "max_exclusive_cpus"))) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > NP_MAX_CPUS)
			return np_json_fail(err, errlen, path,
					    "max_exclusive_cpus",
					    "expected an integer 0..%d (leave "
					    "it out for no cap)",
					    NP_MAX_CPUS);
		r->max_exclusive_cpus = (int)json_integer_value(v);
	}
	return 0;
}

int np_oci_policy_from_json(struct np_oci_policy *p, const json_t *j,
			    const char *path, char *err, size_t errlen)
{
	static const char *const keys[] = {"default", "rules", NULL};
	const json_t *rules, *v;
	char sub[256];
	size_t i;
	int r;

	np_oci_policy_defaults(p);
	if (!j || json_is_null(j))
		return 0;
	if (!json_is_object(j))
		return np_json_fail(err, errlen, path, NULL,
				    "expected an object {\"default\": RULE, "
				    "\"rules\": [RULE, ...]}");
	if ((r = np_json_only_keys(j, keys, path, err, errlen)))
		return r;
	if ((v = json_object_get(j, "default")) &&
	    (r = rule_from_json(&p->def, v, true,
				np_json_path(sub, sizeof(sub), path, "default",
					     -1),
				err, errlen)))
		return r;
	rules = json_object_get(j, "rules");
	if (!rules)
		return 0;
	if (!json_is_array(rules) ||
	    json_array_size(rules) > NP_OCI_POLICY_MAX_RULES)
		return np_json_fail(err, errlen, path, "rules",
				    "expected an array of at most %d rules",
				    NP_OCI_POLICY_MAX_RULES);
	json_array_foreach(rules, i, v)
	{
		char rp[300];
		snprintf(rp, sizeof(rp), "%s.rules[%zu]", path, i);
		if ((r = rule_from_json(&p->rule[i], v, false, rp, err,
					errlen)))
			return r;
		p->nrules = (int)i + 1;
	}
	return 0;
}

static json_t *rule_to_json(const struct np_oci_rule *r)
{
	json_t *o = json_object(), *q = json_array();

	for (int k = NP_QOS_LSE; k <= NP_QOS_BE; k++)
		if (r->qos & 1u << k)
			json_array_append_new(q, json_string(np_qos_name(k)));
	if (r->ns[0])
		json_object_set_new(o, "namespace", json_string(r->ns));
	if (r->cgroup_parent[0])
		json_object_set_new(o, "cgroup_parent",
				    json_string(r->cgroup_parent));
	json_object_set_new(o, "qos", q);
	json_object_set_new(o, "partition", json_boolean(r->partition));
	json_object_set_new(o, "host_isolation",
			    json_boolean(r->host_isolation));
	json_object_set_new(o, "without_limit", json_boolean(r->without_limit));
	if (r->max_exclusive_cpus >= 0)
		json_object_set_new(o, "max_exclusive_cpus",
				    json_integer(r->max_exclusive_cpus));
	return o;
}

json_t *np_oci_policy_to_json(const struct np_oci_policy *p)
{
	json_t *rules = json_array();

	for (int i = 0; i < p->nrules; i++)
		json_array_append_new(rules, rule_to_json(&p->rule[i]));
	return json_pack("{s:o,s:o}", "default", rule_to_json(&p->def),
			 "rules", rules);
}

static bool at_or_below(const char *a, const char *base)
{
	size_t n = strlen(base);
	return !strncmp(a, base, n) && (a[n] == '\0' || a[n] == '/');
}

int np_oci_policy_match(const struct np_oci_policy *p, const char *ns,
			const char *cgroup)
{
	for (int i = 0; i < p->nrules; i++) {
		const struct np_oci_rule *r = &p->rule[i];
		if (r->ns[0] && (!ns || strcmp(r->ns, ns)))
			continue;
		if (r->cgroup_parent[0] &&
		    (!cgroup || !at_or_below(cgroup, r->cgroup_parent)))
			continue;
		return i;
	}
	return -1;
}

const struct np_oci_rule *np_oci_policy_rule(const struct np_oci_policy *p,
					     int i)
{
	return i >= 0 && i < p->nrules ? &p->rule[i] : &p->def;
}

void np_oci_rule_name(const struct np_oci_policy *p, int i, char *buf,
		      size_t len)
{
	const struct np_oci_rule *r = np_oci_policy_rule(p, i);

	if (r == &p->def)
		snprintf(buf, len, "oci_hook.policy.default");
	else if (r->ns[0] && r->cgroup_parent[0])
		snprintf(buf, len,
			 "oci_hook.policy.rules[%d] (namespace \"%s\", "
			 "cgroup_parent %.200s)",
			 i, r->ns, r->cgroup_parent);
	else if (r->ns[0])
		snprintf(buf, len, "oci_hook.policy.rules[%d] (namespace \"%s\")",
			 i, r->ns);
	else
		snprintf(buf, len, "oci_hook.policy.rules[%d] (cgroup_parent "
			 "%.200s)", i, r->cgroup_parent);
}

/* ---- the bound of a container's resources ---- */

void np_oci_bounds_of(struct np_oci_bounds *b, const struct np_workload_req *w,
		      const char *from)
{
	const struct np_container_res *res = w->container_res;

	memset(b, 0, sizeof(*b));
	b->cpu_limit = b->cpu_request = b->memory_limit = -1;
	snprintf(b->cpu_from, sizeof(b->cpu_from), "%s", from);
	snprintf(b->memory_from, sizeof(b->memory_from), "%s", from);
	snprintf(b->huge_from, sizeof(b->huge_from), "%s", from);
	if (!res)
		return;
	b->cpu_limit = res->cpu_limit;
	b->cpu_request = res->cpu_request;
	b->memory_limit = res->memory_limit;
	b->nhuge = res->nhuge;
	for (int h = 0; h < res->nhuge; h++) {
		b->huge_size_kb[h] = res->huge_size_kb[h];
		b->huge_limit[h] = (int64_t)res->huge_limit[h];
	}
}

static void tighter(int64_t *x, char *from, size_t len, int64_t k,
		    const char *kfrom)
{
	if (k >= 0 && (*x < 0 || k < *x)) {
		*x = k;
		snprintf(from, len, "%s", kfrom);
	}
}

void np_oci_bounds_narrow(struct np_oci_bounds *b,
			  const struct np_oci_bounds *k)
{
	tighter(&b->cpu_limit, b->cpu_from, sizeof(b->cpu_from), k->cpu_limit,
		k->cpu_from);
	tighter(&b->memory_limit, b->memory_from, sizeof(b->memory_from),
		k->memory_limit, k->memory_from);
	for (int i = 0; i < k->nhuge; i++) {
		int h = 0;
		while (h < b->nhuge && b->huge_size_kb[h] != k->huge_size_kb[i])
			h++;
		if (h == b->nhuge) {
			if (h == NP_MAX_HUGEPAGE_SIZES)
				continue;
			b->huge_size_kb[b->nhuge] = k->huge_size_kb[i];
			b->huge_limit[b->nhuge++] = -1;
		}
		tighter(&b->huge_limit[h], b->huge_from, sizeof(b->huge_from),
			k->huge_limit[i], k->huge_from);
	}
}

/* What w asks of one kind (0 cpu, 1 memory; 2 + h: hugepages of size
 * kb): the app containers' sum or the largest init container's, whichever
 * is larger (they run one at a time, before the others), and at least the
 * pod's budget. */
static int64_t demand(const struct np_workload_req *w, int kind, uint64_t kb)
{
	int64_t app = 0, init = 0;

	for (int k = 0; k < w->ncontainers; k++) {
		const struct np_container_req *c = &w->c[k];
		int64_t v = 0;
		if (kind == 0)
			v = c->cpu_milli > 0 ? c->cpu_milli : 0;
		else if (kind == 1)
			v = (int64_t)c->memory;
		else
			for (int h = 0; h < c->nhuge; h++)
				if (c->huge_size_kb[h] == kb)
					v = (int64_t)c->huge_bytes[h];
		if (c->init && !c->restartable)
			init = v > init ? v : init;
		else
			app += v;
	}
	if (init > app)
		app = init;
	if (w->has_pod_res && kind == 0 && w->pod_cpu_milli > app)
		app = w->pod_cpu_milli;
	if (w->has_pod_res && kind == 1 && (int64_t)w->pod_memory > app)
		app = (int64_t)w->pod_memory;
	return app;
}

int np_oci_exclusive_cpus(const struct np_workload_req *w, bool static_policy)
{
	bool koord = w->qos == NP_QOS_LSE || w->qos == NP_QOS_LSR;
	int64_t whole = 0, init = 0;

	if (!koord && !(w->qos == NP_QOS_GUARANTEED && static_policy))
		return 0;
	for (int k = 0; k < w->ncontainers; k++) {
		int64_t m = w->c[k].cpu_milli;
		if (m <= 0 || m % 1000)
			continue; /* a share of the pool (or of the pod's) */
		if (w->c[k].init && !w->c[k].restartable)
			init = m > init ? m : init;
		else
			whole += m;
	}
	if (init > whole)
		whole = init;
	if (w->has_pod_res && w->pod_cpu_milli % 1000 == 0 &&
	    w->pod_cpu_milli > whole)
		whole = w->pod_cpu_milli;
	return (int)(whole / 1000);
}

static const char *cpu_str(int64_t milli, char *buf, size_t len)
{
	if (milli < 0)
		snprintf(buf, len, "none");
	else if (milli % 1000)
		snprintf(buf, len, "%lldm", (long long)milli);
	else
		snprintf(buf, len, "%lld", (long long)(milli / 1000));
	return buf;
}

static const char *bytes_str(int64_t b, char *buf, size_t len)
{
	if (b < 0)
		snprintf(buf, len, "none");
	else
		np_quantity_format_bytes((uint64_t)b, buf, len);
	return buf;
}

/* LSE, LSR and Guaranteed: a CPU limit equal to the request (whole CPUs
 * for LSE and LSR); a rule that allows asking without a limit waives it
 * for a container that has none. */
static int guaranteed(const char *rn, const struct np_oci_rule *r,
		      const struct np_workload_req *w,
		      const struct np_oci_bounds *b, char *why, size_t len)
{
	bool koord = w->qos == NP_QOS_LSE || w->qos == NP_QOS_LSR;
	char l[32], q[32];

	if (!koord && w->qos != NP_QOS_GUARANTEED)
		return 0;
	if (b->cpu_limit < 0 && r->without_limit)
		return 0;
	if (b->cpu_limit >= 0 && b->cpu_request == b->cpu_limit &&
	    (!koord || b->cpu_limit % 1000 == 0))
		return 0;
	return np_errf(why, len, -EPERM,
		       "%s: qos %s needs a Guaranteed container, a CPU limit "
		       "equal to its request%s; it has limit %s (%s), request "
		       "%s",
		       rn, np_qos_name(w->qos),
		       koord ? " in whole CPUs" : "",
		       cpu_str(b->cpu_limit, l, sizeof(l)), b->cpu_from,
		       cpu_str(b->cpu_request, q, sizeof(q)));
}

/* The CPU and memory asked, within the limits (or the request, without a
 * limit, unless the rule allows it). */
static int within_limits(const char *rn, const struct np_oci_rule *r,
			 const struct np_workload_req *w,
			 const struct np_oci_bounds *b, char *why, size_t len)
{
	int64_t cpu = demand(w, 0, 0), mem = demand(w, 1, 0);
	char a[32], l[32];

	if (cpu > 0 && b->cpu_limit >= 0 && cpu > b->cpu_limit)
		return np_errf(why, len, -EPERM,
			       "%s: cpu %s is above the container's CPU limit "
			       "of %s (%s)",
			       rn, cpu_str(cpu, a, sizeof(a)),
			       cpu_str(b->cpu_limit, l, sizeof(l)), b->cpu_from);
	if (cpu > 0 && b->cpu_limit < 0 && !r->without_limit &&
	    cpu > (b->cpu_request > 0 ? b->cpu_request : 0))
		return np_errf(why, len, -EPERM,
			       "%s: cpu %s is asked for a container without a "
			       "CPU limit (its request: %s), which this rule "
			       "does not allow (without_limit)",
			       rn, cpu_str(cpu, a, sizeof(a)),
			       cpu_str(b->cpu_request, l, sizeof(l)));
	if (mem > 0 && b->memory_limit >= 0 && mem > b->memory_limit)
		return np_errf(why, len, -EPERM,
			       "%s: memory %s is above the container's memory "
			       "limit of %s (%s)",
			       rn, bytes_str(mem, a, sizeof(a)),
			       bytes_str(b->memory_limit, l, sizeof(l)),
			       b->memory_from);
	if (mem > 0 && b->memory_limit < 0 && !r->without_limit)
		return np_errf(why, len, -EPERM,
			       "%s: memory %s is asked for a container without "
			       "a memory limit, which this rule does not allow "
			       "(without_limit)",
			       rn, bytes_str(mem, a, sizeof(a)));
	return 0;
}

/* Hugepages of each size asked, within that size's limit. */
static int within_huge(const char *rn, const struct np_oci_rule *r,
		       const struct np_workload_req *w,
		       const struct np_oci_bounds *b, char *why, size_t len)
{
	for (int k = 0; k < w->ncontainers; k++)
		for (int h = 0; h < w->c[k].nhuge; h++) {
			uint64_t kb = w->c[k].huge_size_kb[h];
			int64_t ask = demand(w, 2, kb), lim = -1;
			char a[32], l[32], sz[32];
			for (int i = 0; i < b->nhuge; i++)
				if (b->huge_size_kb[i] == kb)
					lim = b->huge_limit[i];
			if (ask <= 0 || (lim >= 0 && ask <= lim) ||
			    (lim < 0 && r->without_limit))
				continue;
			bytes_str((int64_t)kb * 1024, sz, sizeof(sz));
			if (lim >= 0)
				return np_errf(why, len, -EPERM,
					       "%s: hugepages-%s %s is above "
					       "the container's limit of %s "
					       "(%s)",
					       rn, sz, bytes_str(ask, a, sizeof(a)),
					       bytes_str(lim, l, sizeof(l)),
					       b->huge_from);
			return np_errf(why, len, -EPERM,
				       "%s: hugepages-%s %s is asked for a "
				       "container without a limit of them, "
				       "which this rule does not allow "
				       "(without_limit)",
				       rn, sz, bytes_str(ask, a, sizeof(a)));
		}
	return 0;
}

int np_oci_policy_check(const struct np_oci_policy *p, int i,
			const struct np_workload_req *w,
			const struct np_oci_bounds *b, bool static_policy,
			int held, char *why, size_t len)
{
	const struct np_oci_rule *r = np_oci_policy_rule(p, i);
	char rn[320], allowed[32] = "";
	int n, rc;

	np_oci_rule_name(p, i, rn, sizeof(rn));
	if ((ASKABLE & 1u << w->qos) && !(r->qos & 1u << w->qos)) {
		for (int k = NP_QOS_LSE; k <= NP_QOS_BE; k++)
			if (r->qos & 1u << k)
				snprintf(allowed + strlen(allowed),
					 sizeof(allowed) - strlen(allowed),
					 "%s%s", allowed[0] ? ", " : "",
					 np_qos_name(k));
		return np_errf(why, len, -EPERM,
			       "%s: qos %s is not allowed for this container "
			       "(the rule allows %s)",
			       rn, np_qos_name(w->qos),
			       allowed[0] ? allowed : "none of LSE, LSR, LS, BE");
	}
	if (w->partition && !r->partition)
		return np_errf(why, len, -EPERM,
			       "%s: isolation \"partition\" is not allowed for "
			       "this container (partition)",
			       rn);
	if ((rc = within_limits(rn, r, w, b, why, len)) ||
	    (rc = guaranteed(rn, r, w, b, why, len)) ||
	    (rc = within_huge(rn, r, w, b, why, len)))
		return rc;
	n = np_oci_exclusive_cpus(w, static_policy);
	if (n > 0 && r->max_exclusive_cpus >= 0 &&
	    held + n > r->max_exclusive_cpus)
		return np_errf(why, len, -EPERM,
			       "%s: %d exclusive CPU(s), with the %d its "
			       "containers hold already, is more than its "
			       "max_exclusive_cpus %d",
			       rn, n, held, r->max_exclusive_cpus);
	return 0;
}
