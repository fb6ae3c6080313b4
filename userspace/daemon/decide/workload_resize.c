// SPDX-License-Identifier: Apache-2.0
/*
 * In-place resize of a workload's exclusive CPUs (engine np_resize): from
 * the control socket ({"op":"resize"}) and from a spec file whose only
 * change is the CPU count of exclusive containers. Decided on the state,
 * saved before any cgroup is written (write-ahead), then applied by the
 * next reconcile, whose cgroup write planner orders the writes: a grow's
 * shared cgroups yield the CPUs before the workload's cpuset widens, a
 * shrink's workload narrows before the shared cgroups widen.
 */
#include "daemon/daemon_internal.h"
#include "numaplace/cleanup.h"
#include "numaplace/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct resize_one {
	const char *container; /* NULL: the only exclusive one */
	int cpus;
};

/* Resize workload i's containers as listed; all or nothing. 0 with dec
 * (admitted false: refused, st as before), or an error (err). */
static int resize_all(struct np_daemon *d, int i, const struct resize_one *rs,
		      int n, struct np_decision *dec, char *err, size_t errlen)
{
	struct np_workload_alloc before;
	char name[NP_NAME_MAX];
	int r = 0;

	snprintf(name, sizeof(name), "%s", d->st.w[i]->req.name);
	if (d->st.w[i]->req.partition) {
		NP_ERR("resize: workload \"%s\" is a cpuset partition: it is "
		       "not resized in place (release it and admit it again)",
		       name);
		return -EINVAL;
	}
	if ((r = np_workload_alloc_copy(&before, d->st.w[i])))
		return r;
	for (int k = 0; k < n && !r; k++) {
		r = np_resize(&d->st, name, rs[k].container, rs[k].cpus, dec,
			      err, errlen);
		if (!r && !dec->admitted)
			break;
	}
	if (!r && dec->admitted) {
		if (np_workload_req_same(&before.req, &d->st.w[i]->req)) {
			np_workload_alloc_free(&before);
			return 0; /* the same counts: nothing to save */
		}
		/* Durable before any cgroup is written or the answer
		 * given. */
		d->dirty = true;
		if ((r = np_daemon_save(d)) == 0) {
			np_workload_alloc_free(&before);
			d->n.resized++;
			np_log(LOG_INFO, "resized %s in place", name);
			return 0;
		}
		d->dirty = false;
		NP_ERR(
		    "state %.200s/state.json could not be saved (%s): %s was "
		    "not resized, nothing changed",
		    d->cfg.state_dir, strerror(-r), name);
	}
	/* Put the allocation back as it was. */
	np_workload_alloc_free(d->st.w[i]);
	*d->st.w[i] = before;
	if (np_state_refresh(&d->st) && !r)
		r = -ENOMEM;
	dec->alloc = dec->admitted && !r ? d->st.w[i] : NULL;
	if (r)
		dec->admitted = false;
	return r;
}

int np_daemon_resize(struct np_daemon *d, const char *name,
		     const char *container, int cpus, struct np_decision *dec,
		     char *err, size_t errlen)
{
	struct resize_one one = {container, cpus};
	struct np_wl_meta *m = np_daemon_meta_find(d, name);
	int i = np_state_find(&d->st, name), r;

	memset(dec, 0, sizeof(*dec));
	if (i < 0) {
		NP_ERR("resize: no workload named \"%s\"", np_echo(name));
		return -ENOENT;
	}
	if (m && strempty(m->spec_file)[0]) {
		NP_ERR(
		    "resize: workload \"%s\" comes from the spec file %.400s: "
		    "change its cpu there (a changed count is resized in "
		    "place)",
		    name, m->spec_file);
		return -EINVAL;
	}
	/* a container may not grow past what its resources and its rule
	 * of oci_hook.policy allow: refused, nothing changed */
	if (np_daemon_container_resize_check(d, i, container, cpus,
					     dec->reason,
					     sizeof(dec->reason))) {
		snprintf(dec->workload, sizeof(dec->workload), "%s", name);
		snprintf(dec->resource, sizeof(dec->resource), "policy");
		np_log(LOG_WARNING, "resize of %s refused: %s", name,
		       dec->reason);
		return 0;
	}
	if ((r = resize_all(d, i, &one, 1, dec, err, errlen)))
		return r;
	if (!dec->admitted) {
		np_log(LOG_WARNING, "resize of %s refused: %s", name,
		       dec->reason);
		return 0;
	}
	if (m) {
		json_t *j = np_workload_req_to_json(&d->st.w[i]->req);
		_cleanup_free_ char *canon =
		    j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
		json_decref(j);
		if (canon)
			np_daemon_set_str(&m->spec_json, canon);
	}
	return 0;
}

/*
 * w differs from the allocation's request only in the CPU count of
 * exclusive containers, each still a whole number: the list of them into
 * rs (at most NP_MAX_CONTAINERS), their number returned; 0 when w is not
 * such a change.
 */
static int only_counts(const struct np_workload_alloc *a,
		       struct np_workload_req *w, struct resize_one *rs)
{
	int n = 0;
	int64_t milli[NP_MAX_CONTAINERS];
	bool same;

	if (w->ncontainers != a->ncontainers ||
	    w->ncontainers > NP_MAX_CONTAINERS)
		return 0;
	for (int k = 0; k < w->ncontainers; k++) {
		milli[k] = w->c[k].cpu_milli;
		if (milli[k] == a->req.c[k].cpu_milli)
			continue;
		if (!a->c[k].exclusive || milli[k] <= 0 || milli[k] % 1000 ||
		    strcmp(a->req.c[k].name, w->c[k].name))
			return 0;
		rs[n].container = a->req.c[k].name;
		rs[n].cpus = (int)(milli[k] / 1000);
		n++;
		w->c[k].cpu_milli = a->req.c[k].cpu_milli;
	}
	same = n > 0 && np_workload_req_same(w, &a->req);
	for (int k = 0; k < w->ncontainers; k++)
		w->c[k].cpu_milli = milli[k];
	return same ? n : 0;
}

int np_daemon_resize_spec(struct np_daemon *d, const json_t *spec,
			  const char *path, const char *canon)
{
	struct np_workload_req w;
	struct resize_one rs[NP_MAX_CONTAINERS];
	struct np_decision dec;
	struct np_spec_note *note;
	struct np_wl_meta *m;
	char err[512];
	int i, n, r;

	memset(&w, 0, sizeof(w));
	if (np_workload_req_from_json(&w, spec, "spec", err, sizeof(err)) ||
	    (i = np_state_find(&d->st, w.name)) < 0 ||
	    d->st.w[i]->req.partition || d->st.w[i]->req.has_pod_res ||
	    !(n = only_counts(d->st.w[i], &w, rs))) {
		np_workload_req_free(&w);
		return 0;
	}
	r = resize_all(d, i, rs, n, &dec, err, sizeof(err));
	if (r == 0 && dec.admitted) {
		if ((m = np_daemon_meta_find(d, w.name)))
			np_daemon_set_str(&m->spec_json, canon);
		np_daemon_note_del(d, path);
	} else {
		/* The old allocation stays (retried at the next scan);
		 * said once per reason. */
		const char *why = r ? err : dec.reason;
		note = np_daemon_note_find(d, path);
		if (!note || strcmp(note->reason, why))
			np_log(LOG_WARNING,
			       "spec %s: resize of %s not done, it keeps its "
			       "CPUs: %s",
			       path, w.name, why);
		if ((note = np_daemon_note_set(d, path, canon)))
			snprintf(note->reason, sizeof(note->reason), "%s", why);
	}
	np_workload_req_free(&w);
	return 1;
}
