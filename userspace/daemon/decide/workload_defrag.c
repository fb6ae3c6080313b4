// SPDX-License-Identifier: Apache-2.0
/*
 * Defragmentation in the daemon (numaplace/defrag.h for the search):
 *   - the op "defrag" ({"spec": {...} optional, "apply": bool}): the plan
 *     for the spec, or for the last admission the engine rejected; with
 *     apply, the moves are carried out (decide: the moved allocations;
 *     persist: saved before anything is written; apply: the loop's next
 *     cycle writes them through the enforcer, which orders shrink before
 *     grow), then the request is admitted; the answer waits for that
 *     cycle (a spec file's admission is that cycle's: its decision is
 *     read once it has run, np_daemon_defrag_answer);
 *   - config.defrag.auto: the same for a rejected admission, at once;
 *   - a moved workload whose memory nodes changed has its pages migrated
 *     once the cycle has written its cpuset (the enforcer's
 *     migrate_memory, as verify.on_remote_memory = "migrate" does).
 */
#include "daemon/daemon_internal.h"
#include "daemon/serve/ctl_server.h"
#include "numaplace/defrag.h"
#include "numaplace/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Remember a rejection by the engine (not a refusal of this daemon: a
 * cgroup taken, a unit without systemd, ...). */
void np_daemon_defrag_remember(struct np_daemon *d, const json_t *spec,
			       const char *spec_file,
			       const struct np_decision *dec)
{
	char *canon;

	/* refused before the engine was asked: moves cannot make room */
	if (!strcmp(dec->resource, "cgroup") || !strcmp(dec->resource, "unit") ||
	    !strcmp(dec->resource, "isolation") ||
	    !strcmp(dec->resource, "policy"))
		return;
	canon = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
	if (canon && strlen(canon) < sizeof(d->defrag.last_spec)) {
		snprintf(d->defrag.last_spec, sizeof(d->defrag.last_spec), "%s",
			 canon);
		snprintf(d->defrag.last_file, sizeof(d->defrag.last_file),
			 "%s", strempty(spec_file));
	}
	free(canon);
}

/* Note the moves whose memory nodes changed, for np_daemon_defrag_migrate. */
static void note_migrations(struct np_daemon *d, const struct np_defrag_plan *p)
{
	for (int i = 0; i < p->nmoves; i++) {
		const struct np_defrag_move *m = &p->moves[i];
		struct np_defrag_mig *g;
		if (m->from_mems == m->to_mems ||
		    d->defrag.nmig == (int)(sizeof(d->defrag.mig) /
					    sizeof(d->defrag.mig[0])))
			continue;
		g = &d->defrag.mig[d->defrag.nmig++];
		snprintf(g->name, sizeof(g->name), "%s", m->workload);
		g->from = m->from_mems;
		g->to = m->to_mems;
	}
}

/* Carry out the plan's moves on the daemon's state and save it; on a
 * failed save nothing moved. 0 or a negative errno (logged). */
static int carry_out(struct np_daemon *d, const struct np_defrag_plan *p,
		     char *err, size_t errlen)
{
	struct np_node_state before;
	int r;

	if ((r = np_state_copy(&before, &d->st)))
		return r;
	if ((r = np_defrag_apply_moves(&d->st, p, err, errlen))) {
		np_state_free(&before);
		return r;
	}
	d->dirty = true;
	if ((r = np_daemon_save(d))) {
		np_state_free(&d->st);
		d->st = before;
		d->dirty = false;
		NP_ERR("state %.200s/state.json could not be saved (%s): "
		       "nothing moved",
		       d->cfg.state_dir, strerror(-r));
		return r;
	}
	np_state_free(&before);
	note_migrations(d, p);
	for (int i = 0; i < p->nmoves; i++) {
		char from[128], to[128];
		np_cpuset_format(&p->moves[i].from_cpus, from, sizeof(from));
		np_cpuset_format(&p->moves[i].to_cpus, to, sizeof(to));
		np_log(LOG_WARNING,
		       "defrag: moved %s from CPUs %s to %s to make room for "
		       "%s",
		       p->moves[i].workload, from, to, p->workload);
	}
	d->defrag.moves += (uint64_t)p->nmoves;
	return 0;
}

bool np_daemon_defrag_auto(struct np_daemon *d, const struct np_workload_req *w,
			   struct np_decision *dec)
{
	struct np_defrag_plan p;
	char err[512];
	int r;

	if (!d->cfg.defrag.auto_ ||
	    np_defrag_search(&d->st, w, d->cfg.defrag.max_moves, &p, err,
			     sizeof(err)))
		return false;
	if (!p.found || carry_out(d, &p, err, sizeof(err))) {
		if (p.found)
			np_log(LOG_ERR, "defrag for %s: %s", w->name, err);
		np_defrag_plan_free(&p);
		return false;
	}
	np_defrag_plan_free(&p);
	r = np_admit(&d->st, w, dec, err, sizeof(err));
	return !r && dec->admitted;
}

void np_daemon_defrag_migrate(struct np_daemon *d)
{
	for (int i = 0; d->enf && i < d->defrag.nmig; i++) {
		const struct np_defrag_mig *g = &d->defrag.mig[i];
		int k = np_state_find(&d->st, g->name);
		struct np_migrate_result res;
		char err[512];
		if (k < 0 || d->st.w[k]->req.unit)
			continue; /* released since, or systemd's cgroup */
		if (d->enf->ops->migrate_memory(d->enf, d->st.w[k]->req.cgroup,
						g->from & ~g->to, g->to, &res,
						err, sizeof(err)) < 0)
			np_log(LOG_ERR, "defrag: migrating %s's pages: %s",
			       g->name, err);
		else
			np_log(LOG_INFO,
			       "defrag: migrated %s's pages to its new memory "
			       "nodes (%d task(s), %ld page(s) not moved)",
			       g->name, res.pids_done,
			       (long)res.pages_not_moved);
	}
	d->defrag.nmig = 0;
}

/* The spec of the request (given, or the last rejected one); NULL with the
 * error said. *file: its spec file ("" = none). */
static json_t *pending_spec(struct np_daemon *d, const json_t *req,
			    const char **file, char *err, size_t errlen)
{
	const json_t *spec = json_object_get(req, "spec");
	json_t *j;

	*file = "";
	if (spec && !json_is_null(spec)) {
		if (!json_is_object(spec)) {
			NP_ERR("spec: expected a workload spec object");
			return NULL;
		}
		return json_incref((json_t *)spec);
	}
	if (!d->defrag.last_spec[0]) {
		NP_ERR("defrag: no rejected admission to make room for; give a "
		       "spec");
		return NULL;
	}
	if (!(j = json_loads(d->defrag.last_spec, 0, NULL))) {
		NP_ERR("defrag: out of memory");
		return NULL;
	}
	*file = d->defrag.last_file;
	return j;
}

/* The key of a defrag answer whose decision is the next cycle's: what
 * np_daemon_defrag_answer replaces with it. */
#define AFTER_CYCLE "decision_after_cycle"

/* Admit the request after the moves: through the socket path (the
 * decision as JSON), or from its spec file by the loop's next cycle
 * ({workload, spec_file}, completed by np_daemon_defrag_answer). Both
 * answered once that cycle has run. */
static json_t *admit_after(struct np_daemon *d, const json_t *spec,
			   const char *file, const char *name, char *err,
			   size_t errlen)
{
	struct np_decision dec;

	d->cycle_due = true;
	d->answer_after_cycle = true;
	if (file[0]) /* the spec file is retried by the cycle */
		return json_pack("{s:s,s:s}", "workload", name, "spec_file",
				 file);
	if (np_daemon_admit(d, spec, NULL, &dec, err, errlen))
		return NULL;
	return np_decision_to_json(&d->st, &dec);
}

/* The decision the cycle made for a spec file's workload (name). */
static json_t *file_decision(struct np_daemon *d, const char *name,
			     const char *file)
{
	struct np_decision dec;
	int i;

	memset(&dec, 0, sizeof(dec));
	snprintf(dec.workload, sizeof(dec.workload), "%s", name);
	if ((i = np_state_find(&d->st, name)) >= 0) {
		dec.admitted = true;
		dec.alloc = d->st.w[i];
	} else {
		snprintf(dec.reason, sizeof(dec.reason),
			 "spec file %.400s is still rejected", file);
		snprintf(dec.resource, sizeof(dec.resource), "cpu");
	}
	return np_decision_to_json(&d->st, &dec);
}

json_t *np_daemon_defrag_answer(struct np_daemon *d, json_t *resp)
{
	json_t *after = json_object_get(resp, AFTER_CYCLE), *dec;
	const char *name = json_string_value(json_object_get(after, "workload")),
		   *file = json_string_value(json_object_get(after, "spec_file"));

	if (!name || !file)
		return resp;
	dec = file_decision(d, name, file);
	if (json_is_true(json_object_get(dec, "admitted")) &&
	    !strcmp(file, d->defrag.last_file))
		d->defrag.last_spec[0] = '\0';
	json_object_set_new(resp, "decision", dec);
	json_object_del(resp, AFTER_CYCLE);
	return resp;
}

static json_t *run(struct np_daemon *d, const json_t *spec, const char *file,
		   bool apply, const struct np_workload_req *w)
{
	struct np_defrag_plan p;
	json_t *pj, *dec = NULL;
	char err[1024];

	if (np_state_find(&d->st, w->name) >= 0)
		return np_ctl_error("defrag: workload \"%s\" is admitted already",
				    w->name);
	if (np_defrag_search(&d->st, w, d->cfg.defrag.max_moves, &p, err,
			     sizeof(err)))
		return np_ctl_error("%s", err);
	pj = np_defrag_plan_to_json(&p);
	if (apply && (p.found || !p.needed)) {
		if (p.found && carry_out(d, &p, err, sizeof(err))) {
			np_defrag_plan_free(&p);
			json_decref(pj);
			return np_ctl_error("%s", err);
		}
		if (!(dec = admit_after(d, spec, file, w->name, err,
					sizeof(err)))) {
			np_defrag_plan_free(&p);
			json_decref(pj);
			return np_ctl_error("%s", err);
		}
		if (json_is_true(json_object_get(dec, "admitted")) &&
		    file == d->defrag.last_file)
			d->defrag.last_spec[0] = '\0';
	}
	np_defrag_plan_free(&p);
	return json_pack("{s:b,s:o,s:b,s:o?}", "ok", 1, "plan", pj, "applied",
			 dec != NULL, file[0] ? AFTER_CYCLE : "decision", dec);
}

json_t *np_daemon_op_defrag(struct np_daemon *d, const json_t *req)
{
	const json_t *aj = json_object_get(req, "apply");
	struct np_workload_req w;
	const char *file;
	char err[1024];
	json_t *spec, *res;

	if (aj && !json_is_boolean(aj))
		return np_ctl_error("apply: expected true or false");
	if (!(spec = pending_spec(d, req, &file, err, sizeof(err))))
		return np_ctl_error("%s", err);
	if (np_workload_req_from_json(&w, spec, "spec", err, sizeof(err)))
		res = np_ctl_error("%s", err);
	else
		res = run(d, spec, file, json_is_true(aj), &w);
	np_workload_req_free(&w);
	json_decref(spec);
	return res;
}
