// SPDX-License-Identifier: Apache-2.0
/*
 * The decision of one change: admit or release a workload through the
 * engine, saved before it is applied or acknowledged; the rejections
 * noted. (The daemon's record of each workload and the notes about spec
 * files: workload_record.c.)
 */
#include "daemon/daemon_internal.h"
#include "daemon/serve/metrics.h"
#include "numaplace/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void note_rejection(struct np_daemon *d, const struct np_decision *dec)
{
	struct np_rejection *r;
	if (d->nrej == NP_MAX_REJECTIONS)
		memmove(&d->rej[0], &d->rej[1], sizeof(d->rej[0]) * (NP_MAX_REJECTIONS - 1));
	else
		d->nrej++;
	r = &d->rej[d->nrej - 1];
	snprintf(r->workload, sizeof(r->workload), "%s", dec->workload);
	snprintf(r->resource, sizeof(r->resource), "%s", dec->resource);
	snprintf(r->reason, sizeof(r->reason), "%s", dec->reason);
	snprintf(r->error_kind, sizeof(r->error_kind), "%s", dec->error_kind);
	r->time = time(NULL);
	d->n.rejected++;
	np_rej_count_add(d->rej_by, dec->resource);
	if (dec->error_kind[0])
		np_rej_count_add(d->rej_kind, dec->error_kind);
}

/* The workload's cgroup and its containers' own cgroups exist (created
 * when config.create_cgroups). */
static int prepare_cgroups(struct np_daemon *d, const struct np_workload_req *w,
			   char *err, size_t errlen)
{
	bool create = d->cfg.create_cgroups;
	int r;

	/* a unit's cgroup is systemd's, a container's the runtime's (checked
	 * to exist by np_daemon_container_check) */
	if (!d->enf || w->unit || w->container_id)
		return 0;
	r = d->enf->ops->prepare(d->enf, NP_ENF_MANAGED, w->cgroup, create,
				 err, errlen);
	for (int i = 0; !r && i < w->ncontainers; i++) {
		char sub[2 * NP_PATH_MAX];
		if (!w->c[i].cgroup || !w->c[i].cgroup[0])
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", w->cgroup, w->c[i].cgroup);
		r = d->enf->ops->prepare(d->enf, NP_ENF_MANAGED, sub, create,
					 err, errlen);
	}
	return r;
}

/* Does a (component-wise) contain b, or equal it? */
static bool cgroup_within(const char *a, const char *b)
{
	size_t n = strlen(a);
	return !strncmp(a, b, n) && (b[n] == '\0' || b[n] == '/');
}

/* Another workload's cgroup is this one, or above or below it: admitting
 * it would take that cgroup over or nest one cpuset in the other. */
static int cgroup_conflict(const struct np_daemon *d,
			   const struct np_workload_req *w, char *why,
			   size_t len)
{
	/* a unit has no cgroup ("") unless it is a container's scope */
	if (!w->cgroup || !w->cgroup[0])
		return 0;
	for (int i = 0; i < d->st.nworkloads; i++) {
		const struct np_workload_req *o = &d->st.w[i]->req;
		if (!o->cgroup || !o->cgroup[0] || !strcmp(o->name, w->name))
			continue;
		if (!strcmp(o->cgroup, w->cgroup))
			snprintf(why, len, "cgroup %s is workload %s's already",
				 w->cgroup, o->name);
		else if (cgroup_within(o->cgroup, w->cgroup))
			snprintf(why, len,
				 "cgroup %s is inside workload %s's cgroup %s",
				 w->cgroup, o->name, o->cgroup);
		else if (cgroup_within(w->cgroup, o->cgroup))
			snprintf(why, len,
				 "cgroup %s holds workload %s's cgroup %s",
				 w->cgroup, o->name, o->cgroup);
		else
			continue;
		return -EBUSY;
	}
	return 0;
}

/* A partition takes every unreserved CPU into the managed parent; a unit
 * workload lives outside it and would be left the reserved CPUs. So the
 * two are not admitted together. The first workload of the other kind,
 * or NULL. */
const char *np_daemon_partition_unit_clash(const struct np_daemon *d,
					   bool partition, bool unit)
{
	for (int i = 0; i < d->st.nworkloads; i++) {
		const struct np_workload_req *o = &d->st.w[i]->req;
		if ((partition && o->unit) || (unit && o->partition))
			return o->name;
	}
	return NULL;
}

/* A refusal before the engine is asked: dec says why (resource what). */
static void refuse(struct np_decision *dec, const char *name,
		   const char *what, const char *why)
{
	char reason[sizeof(dec->reason)];

	snprintf(reason, sizeof(reason), "%s", why);
	memset(dec, 0, sizeof(*dec));
	snprintf(dec->workload, sizeof(dec->workload), "%s", name);
	snprintf(dec->reason, sizeof(dec->reason), "%s", reason);
	snprintf(dec->resource, sizeof(dec->resource), "%s", what);
}

/* What this daemon refuses whatever the engine would say; true when
 * refused (dec filled). */
static bool refused_here(struct np_daemon *d, const struct np_workload_req *w,
			 const char *spec_file, struct np_decision *dec)
{
	char why[sizeof(dec->reason)];
	const char *clash;

	/* a container through the socket asks what its pod's annotations
	 * say: bounded by its resources and oci_hook.policy (a spec file's
	 * is the node's own) */
	if (!spec_file && np_daemon_container_policy(d, w, why, sizeof(why))) {
		refuse(dec, w->name, "policy", why);
		return true;
	}

	if (np_daemon_unit_check(d, w, why, sizeof(why))) {
		refuse(dec, w->name, "unit", why);
		return true;
	}
	if (cgroup_conflict(d, w, why, sizeof(why)) ||
	    np_daemon_container_check(d, w, why, sizeof(why))) {
		refuse(dec, w->name, "cgroup", why);
		return true;
	}
	if ((w->partition || w->unit) &&
	    (clash = np_daemon_partition_unit_clash(d, w->partition,
						    w->unit != NULL))) {
		snprintf(why, sizeof(why),
			 "%s while workload %.127s %s: a partition takes "
			 "every unreserved CPU below %.200s, and a unit outside "
			 "it would be left the reserved ones",
			 w->partition ? "isolation \"partition\" is refused"
				      : "a unit workload is refused",
			 clash,
			 w->partition ? "is a unit" : "is a partition",
			 d->cfg.cgroup_parent);
		refuse(dec, w->name, "isolation", why);
		return true;
	}
	if (w->partition && d->enf &&
	    (!d->enf->ops->partitions || d->enf->no_partitions)) {
		/* the chain of root partitions would run through cgroups
		 * the enforcer may not write (systemd's) */
		if (d->enf->no_partitions)
			snprintf(why, sizeof(why), "%s", d->enf->no_partitions);
		else
			snprintf(why, sizeof(why),
				 "isolation \"partition\" is not available "
				 "with the %s cgroup driver",
				 d->enf->ops->name);
		refuse(dec, w->name, "isolation", why);
		return true;
	}
	return false;
}

/*
 * Admit one spec. On success the workload's cgroup is prepared (created if
 * configured) and the next reconcile writes its cpuset. A cgroup that
 * cannot be prepared undoes the admission.
 */
static int admit_one(struct np_daemon *d, const json_t *spec,
		     const char *spec_file, struct np_decision *dec, char *err,
		     size_t errlen)
{
	struct np_workload_req *w = calloc(1, sizeof(*w));
	struct np_wl_meta *m;
	char *canon = NULL, cerr[512];
	int r;

	if (!w)
		return -ENOMEM;
	if ((r = np_workload_req_from_json(w, spec, "spec", err, errlen)) ||
	    (r = np_daemon_container_unit(d, w)))
		goto out;
	if (refused_here(d, w, spec_file, dec)) {
		/* dec says why */
	} else if ((r = np_admit(&d->st, w, dec, err, errlen))) {
		goto out;
	} else if (!dec->admitted) {
		struct np_decision first = *dec;
		if (!np_daemon_defrag_auto(d, w, dec))
			*dec = first;
	}
	if (!dec->admitted) {
		np_daemon_defrag_remember(d, spec, spec_file, dec);
		struct np_spec_note *n = spec_file ? np_daemon_note_find(d, spec_file) : NULL;
		/* A spec file is retried every cycle; say it once per reason. */
		if (!n || strcmp(n->reason, dec->reason)) {
			note_rejection(d, dec);
			np_log(LOG_WARNING, "rejected %s: %s", w->name, dec->reason);
		}
		if (spec_file) {
			canon = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
			n = np_daemon_note_set(d, spec_file, canon);
			if (n)
				snprintf(n->reason, sizeof(n->reason), "%s",
					 dec->reason);
		}
		goto out;
	}
	if (spec_file)
		np_daemon_note_del(d, spec_file);
	m = np_daemon_meta_add(d, w->name);
	if (!m) {
		np_release(&d->st, w->name);
		r = -ENOMEM;
		goto out;
	}
	canon = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
	if (!np_daemon_set_str(&m->spec_file, spec_file) || !np_daemon_set_str(&m->spec_json, canon)) {
		np_release(&d->st, w->name); /* its record with it */
		r = -ENOMEM;
		goto out;
	}
	/* A container's cgroup exists (checked) and is the runtime's:
	 * nothing to create, so nothing pending to save after the cycle; a
	 * container's scope is established once its unit has its CPUs
	 * (units.c: what it had before is no drift) */
	m->established = w->container_id && !w->unit;
	m->seen_scan = d->spec_scan; /* admitted from this scan's file */
	/* Durable before any cgroup is touched and before it is reported:
	 * an admission the state file does not know would be lost by a
	 * crash while its cgroup already shows it. */
	d->dirty = true;
	if ((r = np_daemon_save(d))) {
		np_release(&d->st, w->name);
		d->dirty = false;
		dec->admitted = false;
		dec->alloc = NULL;
		NP_ERR("state %.200s/state.json could not be saved (%s): %s was "
		    "not admitted, nothing changed",
		    d->cfg.state_dir, strerror(-r), w->name);
		goto out;
	}
	/* Test-only fault injection (tests/host/daemon-host.sh): die where a
	 * SIGKILL between the state save and the cgroup's creation would. */
	if (d->failpoint_admit_saved) {
		np_log(LOG_ERR, "failpoint admit-saved: exiting after saving %s",
		     w->name);
		_exit(86);
	}
	if ((r = prepare_cgroups(d, w, cerr, sizeof(cerr)))) {
		np_release(&d->st, w->name);
		d->dirty = true;
		np_daemon_save(d); /* a failure leaves it dirty: retried */
		NP_ERR("cgroup %.200s: %.400s", w->cgroup, cerr);
		dec->admitted = false;
		dec->alloc = NULL;
		goto out;
	}
	d->n.admitted++;
	np_log(LOG_INFO, "admitted %s", w->name);
out:
	free(canon);
	np_workload_req_free(w);
	free(w);
	return r;
}

/* Timed for numaplace_admission_duration_seconds: decisions counted as
 * admitted or rejected (a spec file rejected again for the same reason
 * is not). */
int np_daemon_admit(struct np_daemon *d, const json_t *spec,
		    const char *spec_file, struct np_decision *dec, char *err,
		    size_t errlen)
{
	uint64_t before = d->n.admitted + d->n.rejected;
	struct timespec t0, t1;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = admit_one(d, spec, spec_file, dec, err, errlen);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (d->n.admitted + d->n.rejected != before)
		np_hist_add(&d->hist_admit, np_hist_admission_le,
			    (double)(t1.tv_sec - t0.tv_sec) +
				    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	return r;
}

/* Container cgroups go first (a cgroup with children cannot be removed),
 * up to the workload's; busy ones stay, and so does the workload's. */
static void remove_cgroups(struct np_daemon *d, const struct np_workload_req *req)
{
	char err[1024];

	if (!d->enf)
		return;
	if (req->unit) {
		if (d->enf->ops->release_unit(d->enf, req->unit, err,
					      sizeof(err)) < 0) {
			np_log(LOG_ERR,
			       "released %s, but its unit %s keeps its CPUs: "
			       "%s; tried again every cycle",
			       req->name, req->unit, err);
			np_daemon_unit_left(d, req->unit, true);
		}
		if (!req->container_id)
			return;
	}
	d->enf->ops->forget(d->enf, req->cgroup);
	if (req->container_id) /* the runtime's cgroup: it removes it */
		return;
	for (int c = 0; c < req->ncontainers; c++) {
		char sub[2 * NP_PATH_MAX], *slash;
		if (!req->c[c].cgroup || !req->c[c].cgroup[0])
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", req->cgroup, req->c[c].cgroup);
		d->enf->ops->forget(d->enf, sub);
		while (strlen(sub) > strlen(req->cgroup) &&
		       !d->enf->ops->remove(d->enf, sub) &&
		       (slash = strrchr(sub, '/')))
			*slash = '\0';
	}
}

int np_daemon_release(struct np_daemon *d, const char *name, const char *why)
{
	int i = np_state_find(&d->st, name), r;
	struct np_workload_alloc keep; /* owns its arrays until freed or
					  handed back to the state */
	char cg[NP_PATH_MAX] = "";

	if (i < 0)
		return -ENOENT;
	snprintf(cg, sizeof(cg), "%s", d->st.w[i]->req.cgroup);
	if ((r = np_release_keep(&d->st, i, &keep)))
		return r; /* nothing changed */
	/* Durable before the cgroup is touched and before it is reported;
	 * when the state cannot be saved the workload stays admitted. A
	 * batch of vanished cgroups is saved once, by the cycle, before it
	 * writes anything (nothing of theirs is left to touch). */
	d->dirty = true;
	if (!d->release_batch && (r = np_daemon_save(d))) {
		int ri = np_state_insert(&d->st, i, &keep);
		if (ri) {
			np_workload_alloc_free(&keep);
			return ri;
		}
		d->dirty = false;
		np_log(LOG_ERR,
		     "release of %s (%s) not done: the state could not be "
		     "saved; it stays admitted",
		     name, why);
		return r; /* the save's errno: ENOSPC, EROFS, ... */
	}
	remove_cgroups(d, &keep.req);
	np_workload_alloc_free(&keep); /* and its record */
	/* Remove the cgroup; one that still has tasks stays on the shared
	 * pool until it is empty. */
	if (d->enf && cg[0] && cg[0] != '/' &&
	    (r = d->enf->ops->remove(d->enf, cg)) && r != -ENOENT) {
		char (*g)[2 * NP_PATH_MAX] =
			realloc(d->left, sizeof(*g) * (size_t)(d->nleft + 1));
		np_log(LOG_WARNING,
		       "released %s, but its cgroup %s is busy (%s): it stays "
		       "on the shared pool until it is empty",
		       name, cg, strerror(-r));
		if (g) {
			d->left = g;
			snprintf(d->left[d->nleft++], sizeof(d->left[0]), "%s", cg);
		}
	}
	np_daemon_placement_remove(d, name);
	d->n.released++;
	np_log(LOG_INFO, "released %s (%s)", name, why);
	return 0;
}

/* Workloads whose cgroup vanished are released (their spec file retired
 * until it changes), saved once with the cycle's write-ahead save: one
 * save per workload made 3,000 vanished cgroups take a minute. */
void np_daemon_release_vanished(struct np_daemon *d)
{
	char err[1024];

	for (int i = 0; i < d->st.nworkloads; i++) {
		struct np_wl_meta *m = np_daemon_meta_of(d->st.w[i]);
		char name[NP_NAME_MAX];
		np_cpuset cpus;
		np_nodemask mems;
		/* a stopped unit is not a removed one; a container's scope
		 * is (its cgroup is the container's) */
		if (!m || !m->established ||
		    (d->st.w[i]->req.unit && !d->st.w[i]->req.container_id))
			continue;
		if (d->enf->ops->read(d->enf, d->st.w[i]->req.cgroup, &cpus,
				      &mems, err, sizeof(err)) != -ENOENT)
			continue;
		snprintf(name, sizeof(name), "%s", d->st.w[i]->req.name);
		d->n.vanished++;
		if (strempty(m->spec_file)[0]) {
			struct np_spec_note *note =
				np_daemon_note_set(d, m->spec_file, strempty(m->spec_json));
			if (note)
				note->retired = true;
		}
		d->release_batch = true;
		np_daemon_release(d, name, "cgroup removed");
		d->release_batch = false;
		i--;
	}
}
