// SPDX-License-Identifier: Apache-2.0
/*
 * Decide: the spec files the scan found new or changed (collect/specdir.c
 * queues them in d->specq), in the order read. Each is admitted (a
 * changed one released first, or resized in place when only exclusive
 * CPU counts changed), refused when another file or the socket holds its
 * name, or adopted as it is after a restart; then the workloads of files
 * the scan did not find are released. Admissions stop at the scan's
 * budget (each is saved before it is applied): the rest waits for the
 * next cycle (scan_more).
 */
#include "daemon/daemon_internal.h"
#include "numaplace/cleanup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char *canonical(const json_t *spec)
{
	return json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
}

/*
 * A workload loaded from the state after a restart, whose spec file says
 * what the state recorded: adopted as it is (no release, no new CPUs).
 */
static bool same_as_loaded(struct np_daemon *d, const json_t *spec,
			   const char *name)
{
	struct np_workload_req *fw = calloc(1, sizeof(*fw));
	_cleanup_free_ char *a = NULL, *b = NULL;
	_cleanup_json_ json_t *ja = NULL, *jb = NULL;
	char err[512];
	bool same = false;

	if (fw && !np_workload_req_from_json(fw, spec, "spec", err,
					     sizeof(err))) {
		const struct np_workload_alloc *wa =
			d->st.w[np_state_find(&d->st, name)];
		/* a partition made by verification is not in the file */
		if (wa->partition_by_verify && !fw->partition)
			fw->partition = true;
		ja = np_workload_req_to_json(fw);
		jb = np_workload_req_to_json(&wa->req);
		a = json_dumps(ja, JSON_COMPACT | JSON_SORT_KEYS);
		b = json_dumps(jb, JSON_COMPACT | JSON_SORT_KEYS);
		same = a && b && !strcmp(a, b);
	}
	if (fw)
		np_workload_req_free(fw);
	free(fw);
	return same;
}

/* True when the file needs no admission: unchanged, adopted or retired. */
static bool unchanged(struct np_daemon *d, const char *path,
		      const json_t *spec, const char *name)
{
	struct np_wl_meta *m = np_daemon_meta_find(d, name);
	_cleanup_free_ char *canon = canonical(spec);
	struct np_spec_note *n;

	if (m)
		m->seen_scan = d->spec_scan;
	if (m && canon && !strcmp(strempty(m->spec_json), canon))
		return true;
	/* Loaded from the state after a restart: adopt it if the file still
	 * says what the state recorded, else it changed while we were down:
	 * admit it anew. */
	if (m && !strempty(m->spec_json)[0] && np_state_find(&d->st, name) >= 0 &&
	    same_as_loaded(d, spec, name) && np_daemon_set_str(&m->spec_json, canon) &&
	    np_daemon_set_str(&m->spec_file, path))
		return true;
	n = np_daemon_note_find(d, path);
	return n && n->retired && canon && !strcmp(n->canon, canon);
}

/* Another spec file that still exists named this workload first: this
 * one is refused (said once), instead of the two taking turns at
 * releasing and admitting it every period. */
static bool taken_by_other_file(struct np_daemon *d, const char *path,
				const json_t *spec, const char *name)
{
	struct np_wl_meta *m = np_daemon_meta_find(d, name);
	char err[2 * NP_PATH_MAX + 128];

	if (!m || !strempty(m->spec_file)[0] || !strcmp(strempty(m->spec_file), path) ||
	    access(strempty(m->spec_file), F_OK))
		return false;
	snprintf(err, sizeof(err),
		 "name: workload \"%.127s\" comes from %.900s already", name,
		 strempty(m->spec_file));
	np_daemon_note_invalid(d, path, spec, err);
	return true;
}

/* A workload of that name admitted through the control socket: the file
 * does not take it over (it would be released and admitted anew, its
 * CPUs moved), it is refused until the name is free. */
static bool socket_workload(struct np_daemon *d, const char *path,
			    const json_t *spec, const char *name)
{
	struct np_wl_meta *m = np_daemon_meta_find(d, name);
	char err[NP_NAME_MAX + 160];

	if (!m || strempty(m->spec_file)[0] || np_state_find(&d->st, name) < 0)
		return false;
	snprintf(err, sizeof(err),
		 "name: workload \"%.127s\" was admitted through the control "
		 "socket; release it first",
		 name);
	np_daemon_note_invalid(d, path, spec, err);
	return true;
}

/* One queued file: path, its spec (an object with a "name"). */
static void decide_one(struct np_daemon *d, const char *path,
		       const json_t *spec)
{
	const char *name = json_string_value(json_object_get(spec, "name"));
	struct np_decision dec;
	char err[512];

	if (taken_by_other_file(d, path, spec, name))
		return;
	if (unchanged(d, path, spec, name))
		return;
	if (socket_workload(d, path, spec, name))
		return;
	if (np_daemon_now_us() > d->scan_deadline_us) {
		d->scan_more = true; /* next cycle, after signals and requests */
		return;
	}
	if (np_state_find(&d->st, name) >= 0) {
		/* Only exclusive CPU counts changed: resized in place, its
		 * CPUs kept; anything else: released and admitted again. */
		_cleanup_free_ char *canon = canonical(spec);
		if (canon && np_daemon_resize_spec(d, spec, path, canon))
			return;
	}
	if (np_state_find(&d->st, name) >= 0 &&
	    np_daemon_release(d, name, "spec changed") < 0)
		return; /* retried next cycle */
	if (np_daemon_admit(d, spec, path, &dec, err, sizeof(err)) < 0)
		np_daemon_note_invalid(d, path, spec, err);
}

void np_daemon_decide_specs(struct np_daemon *d)
{
	struct np_spec_queue *q = &d->specq;

	for (int i = 0; i < q->n; i++) {
		decide_one(d, q->v[i].path, q->v[i].spec);
		free(q->v[i].path);
		json_decref(q->v[i].spec);
	}
	q->n = 0;
	if (!q->scanned)
		return; /* no scan: nothing is known removed */
	q->scanned = false;
	/* Specs that disappeared release their workloads (one whose release
	 * could not be saved stays, tried again at the next scan). */
	for (int i = 0; i < d->st.nworkloads; i++) {
		const struct np_wl_meta *m = np_daemon_meta_of(d->st.w[i]);
		char name[NP_NAME_MAX];

		if (!m || !strempty(m->spec_file)[0] ||
		    m->seen_scan == d->spec_scan)
			continue;
		snprintf(name, sizeof(name), "%s", m->name);
		if (!np_daemon_release(d, name, "spec file removed"))
			i--;
	}
}
