// SPDX-License-Identifier: Apache-2.0
/*
 * A trace (numaplace/explain.h) as plain sentences, one per line: the
 * request, each provider's hints, the merged hint and why it won, the take
 * strategy, the order it took units in and its tie-breaks, the CPUs it
 * skipped and why, and the result.
 */
#include "numaplace/explain.h"
#include "numaplace/hints.h"
#include "numaplace/take.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const unit_names[] = {
	[NP_EXU_NUMA] = "NUMA node", [NP_EXU_SOCKET] = "socket",
	[NP_EXU_CORE] = "core", [NP_EXU_L3] = "L3 cache",
	[NP_EXU_CPU] = "CPU"};

const char *np_ex_unit_name(int unit)
{
	return unit >= 0 && unit <= NP_EXU_CPU ? unit_names[unit] : "unit";
}

/* One sentence, appended to arr. */
__attribute__((format(printf, 2, 3))) static void say(json_t *arr,
						      const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_array_append_new(arr, json_string(buf));
}

struct text {
	char s[1024];
};

static const char *cpus_text(const np_cpuset *c, struct text *t)
{
	if (np_cpuset_empty(c))
		snprintf(t->s, sizeof(t->s), "none");
	else if (np_cpuset_format(c, t->s, sizeof(t->s)) < 0)
		snprintf(t->s, sizeof(t->s), "(%d CPUs)", np_cpuset_count(c));
	return t->s;
}

static const char *mask_text(np_nodemask m, struct text *t)
{
	char b[512];

	np_nodemask_format(m, b, sizeof(b));
	snprintf(t->s, sizeof(t->s), "{%s}", b);
	return t->s;
}

static const char *hint_text(const struct np_hint *h, struct text *t)
{
	char m[400] = "", b[420] = "any node";

	if (!h->any) {
		np_nodemask_format(h->mask, m, sizeof(m));
		snprintf(b, sizeof(b), "{%s}", m);
	}
	snprintf(t->s, sizeof(t->s), "%s %s", b,
		 h->preferred ? "preferred" : "not preferred");
	return t->s;
}

static const char *who(const struct np_ex_event *e, char *b, size_t n)
{
	if (e->container < 0)
		snprintf(b, n, "pod");
	else
		snprintf(b, n, "container %d", e->container);
	return b;
}

static void say_request(json_t *a, const struct np_ex_event *e)
{
	if (e->code)
		say(a, "container %s asks for %d exclusive CPU%s%s.", e->name,
		    e->count, e->count == 1 ? "" : "s",
		    e->request ? " and memory" : "");
	else
		say(a,
		    "container %s (%lldm CPU) runs in the shared pool: no "
		    "exclusive CPUs.",
		    e->name, (long long)e->value[0]);
}

static const char *amount(const struct np_ex_event *e, int64_t v, char *b,
			  size_t n)
{
	if (e->code == NP_PROV_MEMORY)
		snprintf(b, n, "%lld MiB", (long long)(v >> 20));
	else
		snprintf(b, n, "%lld", (long long)v);
	return b;
}

static void say_provider(json_t *a, const struct np_explain *ex,
			 const struct np_ex_event *e)
{
	char list[1024] = "", nodes[1024] = "", x[64], y[64], r[64];
	struct text t;

	if (e->code == NP_PROV_NONE) {
		say(a, "%s: no preference (no NUMA information).", e->name);
		return;
	}
	for (int i = 0; i < e->nhint; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%s%s", i ? ", " : "",
			 hint_text(&ex->hints[e->hfirst + i], &t));
	for (int i = 0; i < e->nent; i++)
		snprintf(nodes + strlen(nodes), sizeof(nodes) - strlen(nodes),
			 "%snode %d %s free of %s", i ? ", " : "", e->ent[i].id,
			 amount(e, e->ent[i].key[0], x, sizeof(x)),
			 amount(e, e->ent[i].key[1], y, sizeof(y)));
	amount(e, (int64_t)e->request, r, sizeof(r));
	if (e->count < 0)
		say(a, "%s hints (request %s): none, no node set can ever "
		       "hold it (%s).",
		    e->name, r, nodes);
	else if (e->count == 0)
		say(a, "%s hints (request %s): none fits now (%s).", e->name,
		    r, nodes);
	else
		say(a, "%s hints (request %s): %s%s (%s).", e->name, r, list,
		    e->truncated ? ", ..." : "", nodes);
}

static void say_merge(json_t *a, const struct np_ex_event *e)
{
	const char *pol = np_tm_policy_name((enum np_tm_policy)e->unit);
	struct text h, m, o;

	hint_text(&e->hint, &h);
	switch (e->code) {
	case NP_EXM_POD:
		say(a, "Topology Manager scope pod: the container uses the "
		       "pod's hint %s.", h.s);
		return;
	case NP_EXM_NO_ALIGNMENT:
		say(a, "merged hint: %s (policy %s: nothing to align).", h.s,
		    pol);
		return;
	case NP_EXM_NOT_PREFERRED:
		say(a, "merged hint: %s: no node set is preferred by every "
		       "provider; policy %s %s it.",
		    h.s, pol, e->count ? "admits" : "rejects");
		return;
	case NP_EXM_ONLY:
		say(a, "merged hint: %s (policy %s): the narrowest node set "
		       "every provider prefers, and the only one of its width.",
		    h.s, pol);
		return;
	case NP_EXM_LOWER_MASK:
		say(a, "merged hint: %s (policy %s): %s chosen over %s, "
		       "equally narrow and preferred: lower mask.",
		    h.s, pol, mask_text(e->hint.mask, &m),
		    mask_text(e->mask, &o));
		return;
	default:
		say(a, "merged hint: %s (policy %s): %s chosen over %s, "
		       "equally narrow and preferred: closer (average distance "
		       "%.1f vs %.1f).",
		    h.s, pol, mask_text(e->hint.mask, &m),
		    mask_text(e->mask, &o), (double)e->value[0] / 1000,
		    (double)e->value[1] / 1000);
	}
}

static void say_strategy(json_t *a, const struct np_ex_event *e)
{
	static const char *const kub[] = {
		[NP_EXT_KUBELET_PACKED] = "packed",
		[NP_EXT_KUBELET_SPREAD] = "spread (distribute-cpus-across-cores)",
		[NP_EXT_KUBELET_DISTRIBUTED] =
			"distributed (distribute-cpus-across-numa)"};
	struct text t;

	cpus_text(&e->cpus, &t);
	if (e->code == NP_EXT_KOORD)
		say(a, "take: Koordinator %s: %d CPU%s out of %s.", e->name,
		    e->count, e->count == 1 ? "" : "s", t.s);
	else
		say(a, "take: kubelet static policy, %s%s%s%s: %d CPU%s out of "
		       "%s.",
		    kub[e->code], *e->name ? " (" : "", e->name,
		    *e->name ? ")" : "", e->count, e->count == 1 ? "" : "s",
		    t.s);
}

/* Why x sorts before y in a kubelet order. */
static void kubelet_pair(json_t *a, const struct np_ex_event *e,
			 const struct np_ex_entry *x, const struct np_ex_entry *y)
{
	const char *u = np_ex_unit_name(e->unit);

	if (x->parent != y->parent)
		say(a, "%s %d before %s %d: its %s %d sorts before %s %d.", u,
		    x->id, u, y->id, np_ex_unit_name(e->code), x->parent,
		    np_ex_unit_name(e->code), y->parent);
	else if (x->key[0] != y->key[0])
		say(a, "%s %d before %s %d: it already holds CPUs of this "
		       "request.",
		    u, x->id, u, y->id);
	else if (x->key[1] != y->key[1])
		say(a, "%s %d before %s %d: fewer free CPUs (%lld vs %lld).",
		    u, x->id, u, y->id, (long long)x->key[1],
		    (long long)y->key[1]);
	else
		say(a, "%s %d before %s %d: lower id (both %lld free).", u,
		    x->id, u, y->id, (long long)x->key[1]);
}

static void say_kubelet_order(json_t *a, const struct np_ex_event *e)
{
	const char *u = np_ex_unit_name(e->unit);
	char ids[512] = "";
	int last = -1;
	struct text t;

	for (int i = 0; i < e->nent; i++) {
		const struct np_ex_entry *x = &e->ent[i];
		if (x->taken) {
			snprintf(ids + strlen(ids), sizeof(ids) - strlen(ids),
				 "%s%d", *ids ? ", " : "", x->id);
			last = i;
		} else if (last < 0 || i < e->nent - 1) {
			if (x->key[1] < x->cand)
				say(a, "%s %d passed over: only %lld of its %d "
				       "CPUs free.",
				    u, x->id, (long long)x->key[1], x->cand);
			else if (e->step == NP_EXP_WHOLE)
				say(a, "%s %d passed over: more CPUs than "
				       "still needed.",
				    u, x->id);
		}
	}
	say(a, "%s: took %s%s %s: CPUs %s.",
	    e->step == NP_EXP_WHOLE ? "whole free units" : "single CPUs",
	    e->step == NP_EXP_WHOLE ? "" : "from ", u, ids,
	    cpus_text(&e->cpus, &t));
	for (int i = 0; i + 1 < e->nent; i++)
		if (e->ent[i].taken && !e->ent[i + 1].taken)
			kubelet_pair(a, e, &e->ent[i], &e->ent[i + 1]);
}

/* Why x (taken) sorts before y in a Koordinator order. */
static void koord_pair(json_t *a, const struct np_ex_event *e,
		       const struct np_ex_entry *x, const struct np_ex_entry *y)
{
	const char *u = np_ex_unit_name(e->unit);
	const char *dir = e->code > 0 ? "fewer" : "more";
	const char *strat = e->code > 0 ? "MostAllocated" : "LeastAllocated";

	if (x->key[0] != y->key[0])
		say(a, "%s %d chosen over %s %d: %s free CPUs (%lld vs %lld, "
		       "%s).",
		    u, x->id, u, y->id, dir, (long long)x->key[0],
		    (long long)y->key[0], strat);
	else if (e->unit == NP_EXU_NUMA && x->key[1] != y->key[1])
		say(a, "%s %d chosen over %s %d: equally free; its socket has "
		       "%s free CPUs (%lld vs %lld, %s).",
		    u, x->id, u, y->id, dir, (long long)x->key[1],
		    (long long)y->key[1], strat);
	else
		say(a, "%s %d chosen over %s %d: equally free: lower id.", u,
		    x->id, u, y->id);
}

static void say_koord_order(json_t *a, const struct np_ex_event *e)
{
	const char *u = np_ex_unit_name(e->unit);
	int need = np_cpuset_count(&e->cpus);
	struct text t;

	cpus_text(&e->cpus, &t);
	if (e->step == NP_EXP_KOORD_SOCKETS) {
		say(a, "no single NUMA node or socket holds them in whole free "
		       "cores: whole cores from several sockets: CPUs %s.",
		    t.s);
		return;
	}
	if (e->step == NP_EXP_KOORD_FALLBACK) {
		say(a, "fallback order (any free CPU, sockets already used "
		       "first): CPUs %s.",
		    t.s);
		return;
	}
	for (int i = 0; i < e->nent; i++) {
		const struct np_ex_entry *x = &e->ent[i];
		if (x->taken) {
			say(a, "one %s holds them: %s %d (%d candidate CPUs): "
			       "CPUs %s.",
			    u, u, x->id, x->cand, t.s);
			if (i + 1 < e->nent)
				koord_pair(a, e, x, &e->ent[i + 1]);
			return;
		}
		say(a, "%s %d passed over: %d candidate CPU%s, %d needed.", u,
		    x->id, x->cand, x->cand == 1 ? "" : "s", need);
	}
}

static void say_skip(json_t *a, const struct np_ex_event *e)
{
	struct text t;
	const char *c = cpus_text(&e->cpus, &t);

	switch (e->code) {
	case NP_EXS_OFFLINE:
		say(a, "skipped %s: offline.", c);
		break;
	case NP_EXS_RESERVED:
		say(a, "skipped %s: reserved.", c);
		break;
	case NP_EXS_HELD:
		say(a, "skipped %s: held by %s.", c, e->name);
		break;
	case NP_EXS_SIBLING:
		say(a, "skipped %s: taken by container %s of this workload.",
		    c, e->name);
		break;
	case NP_EXS_SPLIT_CORE:
		say(a, "skipped %s: would split a core under full-pcpus-only "
		       "(a sibling thread is not free).",
		    c);
		break;
	case NP_EXS_NOT_ALLOCATABLE:
		say(a, "skipped %s: not allocatable.", c);
		break;
	case NP_EXS_OUTSIDE_HINT:
		say(a, "skipped %s: free, but outside the hint's NUMA nodes.",
		    c);
		break;
	default:
		say(a, "skipped %s: free, but later in the take's order.", c);
	}
}

static void say_result(json_t *a, const struct np_ex_event *e)
{
	struct text c, m, h;

	if (e->code && e->hint.any)
		say(a, "container %s got CPUs %s, memory nodes %s (no NUMA "
		       "hint).",
		    e->name, cpus_text(&e->cpus, &c), mask_text(e->mask, &m));
	else if (e->code)
		say(a, "container %s got CPUs %s, memory nodes %s (hint %s).",
		    e->name, cpus_text(&e->cpus, &c), mask_text(e->mask, &m),
		    hint_text(&e->hint, &h));
	else
		say(a, "container %s runs in the shared pool, memory nodes %s.",
		    e->name, mask_text(e->mask, &m));
}

json_t *np_explain_sentences(const struct np_explain *ex)
{
	json_t *a = json_array();

	for (int i = 0; a && i < ex->n; i++) {
		const struct np_ex_event *e = &ex->ev[i];
		char b[32];
		switch (e->kind) {
		case NP_EX_REQUEST:
			say_request(a, e);
			break;
		case NP_EX_PROVIDER:
			if (e->container < 0 && (i == 0 ||
				ex->ev[i - 1].kind != NP_EX_PROVIDER))
				say(a, "%s: hints for the whole pod.",
				    who(e, b, sizeof(b)));
			say_provider(a, ex, e);
			break;
		case NP_EX_MERGE:
			say_merge(a, e);
			break;
		case NP_EX_STRATEGY:
			say_strategy(a, e);
			break;
		case NP_EX_ORDER:
			if (e->step >= NP_EXP_KOORD_NODE)
				say_koord_order(a, e);
			else
				say_kubelet_order(a, e);
			break;
		case NP_EX_SKIP:
			say_skip(a, e);
			break;
		case NP_EX_RESULT:
			say_result(a, e);
			break;
		case NP_EX_REJECT:
			say(a, "rejected (resource %s): %s", e->name,
			    ex->reason);
			break;
		}
	}
	if (a && ex->oom)
		say(a, "(the trace is incomplete: out of memory)");
	return a;
}
