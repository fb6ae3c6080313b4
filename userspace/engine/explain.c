// SPDX-License-Identifier: Apache-2.0
/*
 * Explain one workload's placement: re-run its admission with a trace
 * (explain_trace.c) and say it as JSON and sentences (explain_text.c).
 */
#include "engine/json_util.h"
#include "numaplace/explain.h"
#include "numaplace/admit.h"
#include "numaplace/error.h"
#include "numaplace/take.h"
#include "numaplace/topology_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {
	[NP_EX_REQUEST] = "request",   [NP_EX_PROVIDER] = "provider",
	[NP_EX_MERGE] = "merge",       [NP_EX_STRATEGY] = "strategy",
	[NP_EX_ORDER] = "order",       [NP_EX_SKIP] = "skip",
	[NP_EX_RESULT] = "result",     [NP_EX_REJECT] = "reject"};
static const char *const merge_why[] = {
	[NP_EXM_NO_ALIGNMENT] = "no-alignment", [NP_EXM_ONLY] = "only",
	[NP_EXM_NARROWER] = "narrower",	 [NP_EXM_LOWER_MASK] = "lower-mask",
	[NP_EXM_CLOSER] = "closer", [NP_EXM_NOT_PREFERRED] = "not-preferred",
	[NP_EXM_POD] = "pod"};
static const char *const skip_why[] = {
	[NP_EXS_OFFLINE] = "offline",	      [NP_EXS_RESERVED] = "reserved",
	[NP_EXS_HELD] = "held",		      [NP_EXS_SPLIT_CORE] = "split-core",
	[NP_EXS_OUTSIDE_HINT] = "outside-hint", [NP_EXS_LATER] = "later",
	[NP_EXS_SIBLING] = "sibling", [NP_EXS_NOT_ALLOCATABLE] = "not-allocatable"};
static const char *const steps[] = {
	[NP_EXP_WHOLE] = "whole", [NP_EXP_SINGLE] = "single",
	[NP_EXP_KOORD_NODE] = "one-numa-node",
	[NP_EXP_KOORD_SOCKET] = "one-socket",
	[NP_EXP_KOORD_SOCKETS] = "several-sockets",
	[NP_EXP_KOORD_FALLBACK] = "fallback"};
static const char *const takes[] = {
	[NP_EXT_KUBELET_PACKED] = "kubelet-packed",
	[NP_EXT_KUBELET_SPREAD] = "kubelet-spread",
	[NP_EXT_KUBELET_DISTRIBUTED] = "kubelet-distributed",
	[NP_EXT_KOORD] = "koordinator"};

static json_t *entries_json(const struct np_ex_event *e)
{
	json_t *a = json_array();

	for (int i = 0; i < e->nent; i++) {
		const struct np_ex_entry *x = &e->ent[i];
		if (e->kind == NP_EX_PROVIDER)
			json_array_append_new(
				a, json_pack("{s:i,s:I,s:I}", "node", x->id,
					     "free", (json_int_t)x->key[0],
					     "total", (json_int_t)x->key[1]));
		else
			json_array_append_new(
				a, json_pack("{s:i,s:i,s:[I,I,I],s:i,s:b}", "id",
					     x->id, "parent", x->parent, "key",
					     (json_int_t)x->key[0],
					     (json_int_t)x->key[1],
					     (json_int_t)x->key[2],
					     e->step >= NP_EXP_KOORD_NODE
						     ? "candidates"
						     : "cpus",
					     x->cand, "taken", x->taken));
	}
	return a;
}

static void event_fields(const struct np_explain *ex,
			 const struct np_ex_event *e, json_t *o)
{
	json_t *h;

	switch (e->kind) {
	case NP_EX_REQUEST:
		json_object_set_new(o, "name", json_string(e->name));
		json_object_set_new(o, "exclusive_cpus", json_integer(e->count));
		json_object_set_new(o, "cpu_milli", json_integer(e->value[0]));
		break;
	case NP_EX_PROVIDER:
		h = json_array();
		for (int i = 0; i < e->nhint; i++)
			json_array_append_new(
				h, np_json_hint(&ex->hints[e->hfirst + i]));
		json_object_set_new(o, "resource", json_string(e->name));
		json_object_set_new(o, "request",
				    json_integer((json_int_t)e->request));
		json_object_set_new(o, "hints", h);
		json_object_set_new(o, "nodes", entries_json(e));
		break;
	case NP_EX_MERGE:
		json_object_set_new(o, "hint", np_json_hint(&e->hint));
		json_object_set_new(o, "why", json_string(merge_why[e->code]));
		json_object_set_new(o, "admit", json_boolean(e->count));
		if (e->code == NP_EXM_LOWER_MASK || e->code == NP_EXM_CLOSER) {
			struct np_hint r = {.mask = e->mask, .preferred = true};
			json_object_set_new(o, "runner_up", np_json_hint(&r));
		}
		break;
	case NP_EX_STRATEGY:
		json_object_set_new(o, "take", json_string(takes[e->code]));
		json_object_set_new(o, "options", json_string(e->name));
		json_object_set_new(o, "count", json_integer(e->count));
		json_object_set_new(o, "from", np_json_cpuset_str(&e->cpus));
		break;
	case NP_EX_ORDER:
		json_object_set_new(o, "step", json_string(steps[e->step]));
		json_object_set_new(o, "unit",
				    json_string(np_ex_unit_name(e->unit)));
		json_object_set_new(o, "took", np_json_cpuset_str(&e->cpus));
		json_object_set_new(o, "units", entries_json(e));
		break;
	case NP_EX_SKIP:
		json_object_set_new(o, "cpus", np_json_cpuset_str(&e->cpus));
		json_object_set_new(o, "why", json_string(skip_why[e->code]));
		if (*e->name)
			json_object_set_new(o, "holder", json_string(e->name));
		break;
	case NP_EX_RESULT:
		json_object_set_new(o, "name", json_string(e->name));
		json_object_set_new(o, "exclusive", json_boolean(e->code));
		json_object_set_new(o, "cpuset", np_json_cpuset_str(&e->cpus));
		json_object_set_new(o, "hint", np_json_hint(&e->hint));
		break;
	case NP_EX_REJECT:
		json_object_set_new(o, "resource", json_string(e->name));
		json_object_set_new(o, "reason", json_string(ex->reason));
		break;
	}
}

json_t *np_explain_to_json(const struct np_explain *ex)
{
	json_t *a = json_array();

	for (int i = 0; a && i < ex->n; i++) {
		const struct np_ex_event *e = &ex->ev[i];
		json_t *o = json_pack("{s:s,s:i}", "kind", kind_names[e->kind],
				      "container", e->container);
		if (!o)
			continue;
		event_fields(ex, e, o);
		if (e->truncated)
			json_object_set_new(o, "truncated", json_true());
		json_array_append_new(a, o);
	}
	return a;
}

/* Admit w on st with a trace; the explanation object. */
static int explain_admit(struct np_node_state *st,
			 const struct np_workload_req *w, json_t **out,
			 char *err, size_t errlen)
{
	struct np_explain ex;
	struct np_decision d;
	np_cpuset all;
	int r;

	np_explain_init(&ex);
	r = np_admit_explain(st, w, &d, &ex, err, errlen);
	if (r) {
		np_explain_free(&ex);
		return r;
	}
	np_cpuset_zero(&all);
	if (d.admitted)
		np_workload_exclusive_cpus(d.alloc, &all);
	*out = json_pack("{s:s,s:b,s:o,s:s,s:o,s:o}", "workload", w->name,
			 "admitted", d.admitted, "cpuset", np_json_cpuset_str(&all),
			 "reason", d.admitted ? "" : d.reason, "sentences",
			 np_explain_sentences(&ex), "events",
			 np_explain_to_json(&ex));
	np_explain_free(&ex);
	return *out ? 0 : -ENOMEM;
}

int np_explain_workload(const struct np_node_state *st, const char *name,
			json_t **out, char *err, size_t errlen)
{
	struct np_node_state copy = {0};
	struct np_workload_req w = {0};
	np_cpuset held, got;
	int i = np_state_find(st, name), r;

	if (i < 0) {
		NP_ERR("no workload named %s", np_echo(name));
		return -ENOENT;
	}
	np_workload_exclusive_cpus(st->w[i], &held);
	if ((r = np_workload_req_copy(&w, &st->w[i]->req)) ||
	    (r = np_state_copy(&copy, st)) || (r = np_release(&copy, name)))
		goto out;
	if ((r = explain_admit(&copy, &w, out, err, errlen)))
		goto out;
	np_cpuset_parse(&got, json_string_value(json_object_get(*out, "cpuset")),
			NULL, 0);
	json_object_set_new(*out, "held", np_json_cpuset_str(&held));
	json_object_set_new(*out, "same",
			    json_boolean(np_cpuset_equal(&held, &got)));
out:
	np_workload_req_free(&w);
	np_state_free(&copy);
	return r;
}

int np_explain_plan(const json_t *req, json_t **out, char *err, size_t errlen)
{
	struct np_topology *t = NULL;
	struct np_node_policy pol;
	struct np_node_state st = {0};
	struct np_workload_req w = {0};
	const char *kind = json_string_value(json_object_get(req, "kind"));
	int r;

	if (!kind || strcmp(kind, "admit")) {
		NP_ERR("kind: explain takes a request of kind \"admit\"");
		return -EINVAL;
	}
	if (!(r = np_topology_from_json(&t, json_object_get(req, "topology"),
					"topology", err, errlen)) &&
	    !(r = np_policy_from_json(&pol, json_object_get(req, "policy"),
				      "policy", err, errlen)) &&
	    !(r = np_state_init(&st, t, &pol, err, errlen)) &&
	    !(r = np_state_load_json(&st, json_object_get(req, "state"),
				     "state", err, errlen)) &&
	    !(r = np_workload_req_from_json(&w, json_object_get(req, "workload"),
					    "workload", err, errlen)))
		r = explain_admit(&st, &w, out, err, errlen);
	np_workload_req_free(&w);
	np_state_free(&st);
	np_topology_free(t);
	return r;
}
