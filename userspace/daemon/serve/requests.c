// SPDX-License-Identifier: Apache-2.0
/*
 * Serve: control requests (protocol: numaplace/ctl.h), one handler per
 * op, and the status the daemon reports.
 */
#include "daemon/daemon_internal.h"
#include "numaplace/error.h"
#include "daemon/serve/ctl_server.h"
#include "numaplace/plan.h"
#include "numaplace/explain.h"
#include "numaplace/topology_json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

json_t *np_daemon_status(struct np_daemon *d)
{
	json_t *ws = json_array(), *rj = json_array(), *deg = json_object(),
	       *st;
	struct np_pools pools;

	np_state_pools(&d->st, &pools);
	np_daemon_suppress_pool(d, &pools); /* BE workloads' suppressed set */
	for (int i = 0; i < d->st.nworkloads; i++) {
		np_cpuset off;
		json_array_append_new(ws, np_workload_alloc_to_json_with(
						  &d->st, &pools, d->st.w[i]));
		if (np_state_degraded(&d->st, i, &off)) {
			char *l = np_cpuset_str(&off);
			json_object_set_new(deg, d->st.w[i]->req.name,
					    json_string(l ? l : ""));
			free(l);
		}
	}
	for (int i = 0; i < d->nrej; i++) {
		json_t *r = json_pack("{s:s,s:s,s:s,s:I}", "workload",
				      d->rej[i].workload, "resource",
				      d->rej[i].resource, "reason",
				      d->rej[i].reason, "time",
				      (json_int_t)d->rej[i].time);
		if (r && d->rej[i].error_kind[0])
			json_object_set_new(r, "error_kind",
					    json_string(d->rej[i].error_kind));
		json_array_append_new(rj, r);
	}
	st = json_pack(
		"{s:o,s:o,s:o,s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I},s:o,s:f,s:{s:I,s:i,s:I},s:o}",
		"topology", np_topology_to_json(d->topo), "pools",
		np_pools_to_json(&d->st), "workloads", ws, "counters",
		"cycles", (json_int_t)d->n.cycles, "drift_repaired",
		(json_int_t)d->n.drift_repaired, "admitted",
		(json_int_t)d->n.admitted, "rejected", (json_int_t)d->n.rejected,
		"released", (json_int_t)d->n.released, "write_errors",
		(json_int_t)d->n.write_errors, "vanished",
		(json_int_t)d->n.vanished, "rejections", rj,
		"reconcile_period_s", d->cfg.reconcile_period_ms / 1000.0,
		"last_cycle", "time", (json_int_t)d->last_cycle.time, "writes",
		d->last_cycle.writes, "duration_us",
		(json_int_t)d->last_cycle.duration_us, "verification",
		np_verify_status(d->verify, &d->cfg.verify,
				 d->cfg.bpf_pin_path));
	if (st) {
		json_t *c = json_object_get(st, "counters");
		json_object_set_new(c, "writes", json_integer((json_int_t)d->n.writes));
		json_object_set_new(c, "state_saves",
				    json_integer((json_int_t)d->n.state_saves));
		json_object_set_new(c, "quiet_cycles",
				    json_integer((json_int_t)d->n.quiet_cycles));
		json_object_set_new(c, "bus_reads",
				    json_integer((json_int_t)d->enf->bus_reads));
		json_object_set_new(c, "bus_changes",
				    json_integer((json_int_t)d->enf->bus_changes));
		json_object_set_new(st, "host_isolation",
				    np_daemon_hostiso_status(d));
		json_object_set_new(c, "hotplug",
				    json_integer((json_int_t)d->n.hotplug));
		json_object_set_new(c, "replaced",
				    json_integer((json_int_t)d->n.replaced));
		json_object_set_new(st, "metrics", np_daemon_metrics_status(d));
		json_object_set_new(st, "export", np_daemon_export_status(d));
		json_object_set_new(st, "node_policy",
				    np_policy_to_json(&d->cfg.policy));
		{
			char *l = np_cpuset_str(&d->st.offline);
			json_object_set_new(st, "offline_cpus",
					    json_string(l ? l : ""));
			free(l);
			/* workload -> its exclusive CPUs that are offline */
			json_object_set(st, "degraded", deg);
		}
	}
	json_decref(deg);
	return st;
}


static json_t *op_status(struct np_daemon *d, const json_t *req)
{
	(void)req;
	return json_pack("{s:b,s:o}", "ok", 1, "status", np_daemon_status(d));
}

/*
 * "wait" of admit and release: "enforced" (the default) answers once the
 * cycle that puts the change in force has run; "durable" answers once the
 * change is saved, and the cycle runs right after the answers of this
 * batch of requests are sent (np_daemon_run).  0, or -EINVAL with *err.
 */
static int parse_wait(const json_t *req, bool *durable, json_t **err)
{
	const json_t *w = json_object_get(req, "wait");
	const char *s = json_string_value(w);

	*durable = false;
	if (!w || (s && !strcmp(s, "enforced")))
		return 0;
	if (s && !strcmp(s, "durable")) {
		*durable = true;
		return 0;
	}
	*err = np_ctl_error("wait: expected \"enforced\" (answer once the "
			    "change is in force, the default) or \"durable\" "
			    "(answer once it is saved)");
	return -EINVAL;
}

/* The saved change is put in force by the loop's next cycle; the answer
 * waits for it, or not (durable). */
static void in_force(struct np_daemon *d, bool durable)
{
	d->cycle_due = true;
	d->answer_after_cycle = !durable;
}

static json_t *op_admit(struct np_daemon *d, const json_t *req)
{
	const json_t *spec = json_object_get(req, "spec");
	struct np_decision dec;
	char err[1024];
	json_t *res = NULL;
	bool durable;

	if (!json_is_object(spec))
		return np_ctl_error("spec: expected a workload spec object");
	if (parse_wait(req, &durable, &res))
		return res;
	if (np_daemon_admit_again(d, spec, &dec)) {
		res = json_pack("{s:b,s:o,s:b}", "ok", 1, "decision",
				np_decision_to_json(&d->st, &dec), "again", 1);
		in_force(d, durable);
		return res;
	}
	if (np_daemon_admit(d, spec, NULL, &dec, err, sizeof(err)))
		return np_ctl_error("%s", err);
	res = json_pack("{s:b,s:o}", "ok", 1, "decision",
			np_decision_to_json(&d->st, &dec));
	if (dec.admitted)
		in_force(d, durable); /* now, not in 10 s */
	return res;
}

/* {"op":"release","container":ID} (the OCI hook's poststop): an unknown
 * or already released container is not an error (the runtime calls it
 * once per container, whatever happened before). */
static json_t *release_container(struct np_daemon *d, const json_t *cj,
				 bool durable)
{
	const char *id = json_string_value(cj);
	char name[NP_NAME_MAX];
	int i, r;

	if (!id || !id[0] || strlen(id) > NP_CONTAINER_ID_MAX)
		return np_ctl_error("container: expected a container id (a "
				    "string of 1..%d characters)",
				    NP_CONTAINER_ID_MAX);
	if ((i = np_daemon_find_container(d, id)) < 0)
		return json_pack("{s:b,s:b,s:s}", "ok", 1, "released", 0,
				 "message", "no workload holds this container "
				 "(released already, or never admitted)");
	snprintf(name, sizeof(name), "%s", d->st.w[i]->req.name);
	r = np_daemon_release(d, name, "container stopped");
	if (r < 0)
		return np_ctl_error("release %s: the state could not be saved "
				    "(%s); it stays admitted, nothing changed",
				    name, strerror(-r));
	in_force(d, durable);
	return json_pack("{s:b,s:b,s:s}", "ok", 1, "released", 1, "name",
			 name);
}

static json_t *op_release(struct np_daemon *d, const json_t *req)
{
	const json_t *nj = json_object_get(req, "name"),
		     *cj = json_object_get(req, "container");
	const char *name = json_string_value(nj);
	json_t *werr = NULL;
	bool durable;
	int r;

	if (nj && cj)
		return np_ctl_error("release: name or container, not both");
	if (parse_wait(req, &durable, &werr))
		return werr;
	if (cj)
		return release_container(d, cj, durable);
	if (!nj)
		return np_ctl_error("name: required field is missing");
	if (!name)
		return np_ctl_error("name: expected a string");
	r = np_daemon_release(d, name, "requested");
	if (r == -ENOENT)
		return np_ctl_error("release: no workload named \"%s\"",
				    np_echo(name));
	if (r < 0)
		return np_ctl_error("release %s: the state could not be saved "
				    "(%s); it stays admitted, nothing changed",
				    name, strerror(-r));
	in_force(d, durable);
	return json_pack("{s:b}", "ok", 1);
}

static json_t *op_events(struct np_daemon *d, const json_t *req)
{
	const json_t *lim = json_object_get(req, "limit");
	json_int_t n = 100;

	if (lim && !json_is_null(lim)) {
		if (!json_is_integer(lim) || json_integer_value(lim) < 1 ||
		    json_integer_value(lim) > 100000)
			return np_ctl_error("limit: expected an integer 1..100000");
		n = json_integer_value(lim);
	}
	return json_pack("{s:b,s:o,s:b,s:I}", "ok", 1, "events",
			 np_verify_events(d->verify, (int)n), "verification",
			 d->verify != NULL, "dropped",
			 (json_int_t)np_verify_samples_dropped(d->verify));
}

static json_t *op_plan(struct np_daemon *d, const json_t *req)
{
	json_t *res = NULL;
	char err[1024];

	(void)d;
	if (!json_is_object(json_object_get(req, "request")))
		return np_ctl_error("request: expected a JSON object (a plan "
				    "request)");
	if (np_plan(json_object_get(req, "request"), &res, err, sizeof(err)))
		return np_ctl_error("request.%s", err);
	return json_pack("{s:b,s:o}", "ok", 1, "result", res);
}

static json_t *op_reload(struct np_daemon *d, const json_t *req)
{
	(void)req;
	d->quiet_ok = false; /* asked for: a cycle through every cgroup */
	in_force(d, false);
	return json_pack("{s:b}", "ok", 1);
}

static json_t *op_export(struct np_daemon *d, const json_t *req)
{
	const json_t *fj = json_object_get(req, "format"),
		     *nj = json_object_get(req, "node_name");
	const char *format = "nrt", *name = NULL;
	char err[512];
	json_t *o;

	if (fj && !(format = json_string_value(fj)))
		return np_ctl_error("format: expected a string (nrt, "
				    "koordinator)");
	if (nj && !json_is_null(nj) && !(name = json_string_value(nj)))
		return np_ctl_error("node_name: expected a string");
	o = np_daemon_export(d, format, name, err, sizeof(err));
	if (!o)
		return np_ctl_error("%s", err);
	return json_pack("{s:b,s:o}", "ok", 1, "export", o);
}

static json_t *op_explain(struct np_daemon *d, const json_t *req)
{
	const json_t *nj = json_object_get(req, "name");
	const char *name = json_string_value(nj);
	char err[512];
	json_t *x = NULL;

	if (!nj)
		return np_ctl_error("name: required field is missing");
	if (!name)
		return np_ctl_error("name: expected a string");
	if (np_explain_workload(&d->st, name, &x, err, sizeof(err)))
		return np_ctl_error("%s", err);
	return json_pack("{s:b,s:o}", "ok", 1, "explain", x);
}

/* The CPUs of workload name's container (NULL: its only exclusive one). */
static char *container_cpus(const struct np_daemon *d, const char *name,
			    const char *ctr)
{
	int i = np_state_find(&d->st, name);

	for (int k = 0; i >= 0 && k < d->st.w[i]->ncontainers; k++)
		if (ctr ? !strcmp(d->st.w[i]->req.c[k].name, ctr)
			: d->st.w[i]->c[k].exclusive)
			return np_cpuset_str(d->st.w[i]->c[k].cpus);
	return strdup("");
}

/* {"op":"resize","name":N,"container":C (optional),"cpus":K}: in place,
 * the current CPUs kept (numaplace/admit.h np_resize). */
static json_t *op_resize(struct np_daemon *d, const json_t *req)
{
	const json_t *nj = json_object_get(req, "name"),
		     *cj = json_object_get(req, "container"),
		     *kj = json_object_get(req, "cpus");
	const char *name = json_string_value(nj), *ctr = NULL;
	struct np_decision dec;
	char err[1024], *before, *after;
	json_t *res;
	int r;

	if (!nj)
		return np_ctl_error("name: required field is missing");
	if (!name)
		return np_ctl_error("name: expected a string");
	if (cj && !(ctr = json_string_value(cj)))
		return np_ctl_error("container: expected a string");
	if (!kj)
		return np_ctl_error("cpus: required field is missing");
	if (!json_is_integer(kj) || json_integer_value(kj) < 1 ||
	    json_integer_value(kj) > NP_MAX_CPUS)
		return np_ctl_error("cpus: expected an integer 1..%d",
				    NP_MAX_CPUS);
	before = container_cpus(d, name, ctr);
	r = np_daemon_resize(d, name, ctr, (int)json_integer_value(kj), &dec,
			     err, sizeof(err));
	if (r) {
		free(before);
		return np_ctl_error("%s", err);
	}
	/* The answer made now, sent after the cycle: dec.alloc points into
	 * the state, which a release of a vanished cgroup there would
	 * shift. */
	after = container_cpus(d, name, ctr);
	res = json_pack("{s:b,s:b,s:o,s:s,s:s}", "ok", 1, "resized",
			dec.admitted, "decision",
			np_decision_to_json(&d->st, &dec), "previous",
			before ? before : "", "cpus", after ? after : "");
	free(before);
	free(after);
	if (dec.admitted)
		in_force(d, false); /* in force when answered */
	return res;
}

static const struct {
	const char *name;
	json_t *(*fn)(struct np_daemon *d, const json_t *req);
	const char *keys[4]; /* besides "op" (NULL-ended) */
} ops[] = {
	{"status", op_status, {NULL}},	     {"admit", op_admit, {"spec", "wait"}},
	{"release", op_release, {"name", "container", "wait"}},
	{"events", op_events, {"limit"}},
	{"plan", op_plan, {"request"}},	     {"reload", op_reload, {NULL}},
	{"export", op_export, {"format", "node_name"}},
	{"defrag", np_daemon_op_defrag, {"spec", "apply"}},
	{"explain", op_explain, {"name"}},
	{"resize", op_resize, {"name", "container", "cpus"}},
};

/* What reads and changes nothing: what a member of
 * config.socket_read_group may ask. */
const char *const np_daemon_read_ops[] = {"status", "events", "export",
					  "explain", NULL};

/* A key the op does not take (a misspelt one would change the request
 * silently); NULL when there is none. */
static const char *unknown_key(const json_t *req, size_t i)
{
	const char *key;
	const json_t *v;

	json_object_foreach((json_t *)req, key, v)
	{
		bool ok = !strcmp(key, "op");
		for (size_t k = 0; !ok && ops[i].keys[k]; k++)
			ok = !strcmp(key, ops[i].keys[k]);
		if (!ok)
			return key;
	}
	return NULL;
}

json_t *np_daemon_handle(struct np_daemon *d, const json_t *req)
{
	const json_t *opj = json_object_get(req, "op");
	char names[128] = "";
	size_t used = 0;
	const char *op, *bad;

	d->answer_after_cycle = false;
	if (!json_is_object(req))
		return np_ctl_error("request: expected a JSON object");
	if (!opj)
		return np_ctl_error("op: required field is missing");
	if (!(op = json_string_value(opj)))
		return np_ctl_error("op: expected a string");
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (!strcmp(op, ops[i].name)) {
			if ((bad = unknown_key(req, i)))
				return np_ctl_error("%.64s: unknown field for op "
						    "\"%s\"",
						    bad, op);
			return ops[i].fn(d, req);
		}
		used += (size_t)snprintf(names + used, sizeof(names) - used,
					 "%s%s", i ? ", " : "", ops[i].name);
		if (used >= sizeof(names))
			used = sizeof(names) - 1;
	}
	return np_ctl_error("op: \"%.64s\" is not one of %s", op, names);
}

json_t *np_daemon_answer(struct np_daemon *d, json_t *resp)
{
	return np_daemon_defrag_answer(d, resp);
}
