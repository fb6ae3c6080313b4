// SPDX-License-Identifier: Apache-2.0
/*
 * Workloads that are systemd units ("unit" in the spec): numaplace does
 * not own their cgroups, so their CPUs and memory nodes are unit
 * properties, set through the enforcer (AllowedCPUs, AllowedMemoryNodes;
 * systemd keeps them across restarts of the unit and daemon-reloads). A
 * unit that does not exist yet is pending and gets its CPUs when it
 * appears. Shared ones follow their pool: narrowed before the main plan
 * (with the host cgroups), set after it. Units that run beside
 * numaplace's scope in its slice and are no workload (never admitted, or
 * released while they run) are confined to the shared pool the same way,
 * while they run there: nothing above them does it (the slice holds every
 * CPU, for the workloads below the scope). Nothing is set on a unit that
 * is stopped (systemd 252 would make its cgroup again, empty): the
 * enforcer keeps its record until it runs again.
 */
#include "daemon/daemon_internal.h"
#include "numaplace/enforcer.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* A unit's name, or a component of a cgroup's path (not NUL-ended). */
struct uname {
	const char *s;
	size_t n;
};

/* What a phase looks units up in, sorted once (bsearch) rather than a
 * scan of every workload for each unit: the workloads' units (admitted,
 * pending or not), the components of container workloads' cgroups (a
 * unit's name is one component of its cgroup's path, and names one unit
 * only: crun's and podman's scope holds the container's cgroup), and the
 * units the enforcer lists beside the scope this cycle (copied). The
 * first two are made at the first question (is_wl, is_held): a cycle
 * with no unit to ask about, the usual one, sorts nothing. */
struct unit_lookup {
	const struct np_daemon *d;
	bool built, failed;
	struct uname *wl, *held, *listed;
	int nwl, nheld, nlisted;
	char (*names)[NP_UNIT_NAME_MAX];
};

static int uname_cmp(const void *a, const void *b)
{
	const struct uname *x = a, *y = b;
	int c = memcmp(x->s, y->s, x->n < y->n ? x->n : y->n);

	return c ? c : (x->n > y->n) - (x->n < y->n);
}

static bool in_names(const struct uname *v, int n, const char *unit)
{
	struct uname k = {unit, strlen(unit)};

	return n && bsearch(&k, v, (size_t)n, sizeof(k), uname_cmp);
}

static void lookup_init(const struct np_daemon *d, struct unit_lookup *lk)
{
	memset(lk, 0, sizeof(*lk));
	lk->d = d;
}

static void lookup_free(struct unit_lookup *lk)
{
	free(lk->wl);
	free(lk->held);
	free(lk->listed);
	free(lk->names);
	lookup_init(lk->d, lk);
}

/* The workloads' units and container cgroups' components: 0, -ENOMEM. */
static int lookup_build(struct unit_lookup *lk)
{
	const struct np_daemon *d = lk->d;
	int ncomp = 0;

	for (int w = 0; w < d->st.nworkloads; w++)
		for (const char *c = d->st.w[w]->req.container_id
					      ? d->st.w[w]->req.cgroup
					      : NULL;
		     c && *c; c++)
			ncomp += *c == '/' || c == d->st.w[w]->req.cgroup;
	lk->wl = calloc((size_t)d->st.nworkloads + 1, sizeof(*lk->wl));
	lk->held = calloc((size_t)ncomp + 1, sizeof(*lk->held));
	if (!lk->wl || !lk->held)
		return -ENOMEM; /* freed by lookup_free */
	for (int w = 0; w < d->st.nworkloads; w++) {
		const struct np_workload_req *q = &d->st.w[w]->req;
		if (q->unit)
			lk->wl[lk->nwl++] = (struct uname){q->unit, strlen(q->unit)};
		for (const char *p = q->container_id ? q->cgroup : NULL;
		     p && *p;) {
			size_t l = strcspn(p, "/");
			if (l)
				lk->held[lk->nheld++] = (struct uname){p, l};
			p += l + (p[l] == '/');
		}
	}
	qsort(lk->wl, (size_t)lk->nwl, sizeof(*lk->wl), uname_cmp);
	qsort(lk->held, (size_t)lk->nheld, sizeof(*lk->held), uname_cmp);
	return 0;
}

/* Made at the first question; without memory, every unit counts as a
 * workload's (nothing is done to it) and the cycle says so once. */
static bool lookup_ready(struct unit_lookup *lk)
{
	if (!lk->built && !lk->failed) {
		lk->built = true;
		if (lookup_build(lk) < 0) {
			lk->failed = true;
			np_log(LOG_ERR, "units: out of memory; nothing done to "
					"units this cycle, tried again the next");
		}
	}
	return !lk->failed;
}

/* Is unit a workload's (admitted, pending or not)? */
static bool is_wl(struct unit_lookup *lk, const char *unit)
{
	return !lookup_ready(lk) || in_names(lk->wl, lk->nwl, unit);
}

/* Does unit's cgroup hold a container workload's? */
static bool is_held(struct unit_lookup *lk, const char *unit)
{
	return !lookup_ready(lk) || in_names(lk->held, lk->nheld, unit);
}

/* The units the enforcer lists beside the scope, into lk (names copied):
 * 0, or a negative errno (the listing's, or -ENOMEM). */
static int lookup_listed(struct np_daemon *d, struct unit_lookup *lk)
{
	char u[NP_UNIT_NAME_MAX];
	int r, cap = 0;

	while ((r = d->enf->ops->slice_unit(d->enf, lk->nlisted, u,
					      sizeof(u))) > 0) {
		if (lk->nlisted == cap) {
			int c = cap ? 2 * cap : 8;
			void *n = realloc(lk->names, sizeof(*lk->names) * (size_t)c);
			if (!n)
				return -ENOMEM;
			lk->names = n;
			cap = c;
		}
		snprintf(lk->names[lk->nlisted++], sizeof(lk->names[0]), "%s", u);
	}
	if (r < 0)
		return r;
	lk->listed = calloc((size_t)lk->nlisted + 1, sizeof(*lk->listed));
	if (!lk->listed)
		return -ENOMEM;
	for (int i = 0; i < lk->nlisted; i++)
		lk->listed[i] = (struct uname){lk->names[i], strlen(lk->names[i])};
	qsort(lk->listed, (size_t)lk->nlisted, sizeof(*lk->listed), uname_cmp);
	return 0;
}

static void unit_want(const struct np_daemon *d,
		      const struct np_workload_alloc *a,
		      const struct np_pools *p, np_cpuset *cpus,
		      np_nodemask *mems, bool *shared, bool *exclusive)
{
	np_cpuset_zero(cpus);
	*mems = 0;
	*shared = *exclusive = false;
	for (int i = 0; i < a->ncontainers; i++) {
		if (a->c[i].exclusive) {
			np_cpuset_or(cpus, cpus, a->c[i].cpus);
			*exclusive = true;
		} else {
			*shared = true;
		}
		*mems |= a->c[i].mems;
	}
	if (a->pod_rest) /* the pod's: the unit holds its whole budget */
		np_cpuset_or(cpus, cpus, a->pod_rest);
	if (*shared)
		np_cpuset_or(cpus, cpus,
			     a->qos_class == NP_QOS_BE ? &p->be : &p->shared);
	if (!*mems)
		*mems = d->topo->numa_mask;
}

static void pending(struct np_wl_meta *m, const char *unit, const char *why)
{
	if (m->unit_pending)
		return;
	m->unit_pending = true;
	np_log(LOG_INFO, "workload %s: unit %s is pending (%s)", m->name, unit,
	       why);
}

/* The host cgroup (shared_cgroups) that slice is, or is below; NULL. A
 * cgroup gets no CPU its parent lacks, so an exclusive unit in a slice
 * confined to the shared pool cannot have its CPUs. */
static const char *confined_by(const struct np_daemon *d, const char *slice)
{
	for (int i = 0; i < d->cfg.nshared; i++) {
		const char *h = d->cfg.shared_cgroups[i];
		size_t n = strlen(h);
		if (n && !strncmp(slice, h, n) &&
		    (slice[n] == '\0' || slice[n] == '/'))
			return h;
	}
	return NULL;
}

static int one_unit(struct np_daemon *d, const struct np_workload_alloc *a,
		    const struct np_pools *p, bool before)
{
	const char *unit = a->req.unit;
	struct np_wl_meta *m = np_daemon_meta_find(d, a->req.name);
	np_cpuset want, cur;
	np_nodemask mems;
	char err[1024], slice[NP_PATH_MAX] = "";
	const char *host;
	bool shared, exclusive, running;
	int r;

	if (!m)
		return 0;
	unit_want(d, a, p, &want, &mems, &shared, &exclusive);
	r = d->enf->ops->read_unit(d->enf, unit, slice, sizeof(slice), &cur,
				   err, sizeof(err));
	if (r < 0 && r != -ENOENT) {
		np_log(LOG_ERR, "workload %s: unit %s: %s", a->req.name, unit,
		       err);
		return 0;
	}
	running = r == 0;
	if (exclusive && (host = confined_by(d, slice))) {
		snprintf(err, sizeof(err),
			 "its slice %.300s is confined to the shared pool "
			 "(shared_cgroups \"%.300s\"), so it cannot hold exclusive "
			 "CPUs: give it a slice of its own (Slice=numaplace.slice)",
			 slice, host);
		pending(m, unit, err);
		return 0;
	}
	if (before) {
		/* only shared units give CPUs up before the plan */
		if (!shared || !running)
			return 0;
		np_cpuset_and(&want, &want, &cur);
		if (np_cpuset_empty(&want))
			return 0;
	}
	if (running && np_cpuset_equal(&cur, &want))
		goto done;
	if (running && m->established && !before)
		np_daemon_drift(d, unit, &cur, &want, " (unit)");
	r = d->enf->ops->set_unit(d->enf, unit, &want, mems, running, err,
				  sizeof(err));
	if (r == -ENOENT) {
		pending(m, unit, err);
		return 0;
	}
	if (r < 0) {
		np_log(LOG_ERR, "workload %s: unit %s: %s", a->req.name, unit,
		       err);
		d->n.write_errors++;
		return 0;
	}
	if (r > 0) {
		char *s = np_cpuset_str(&want);
		np_log(LOG_INFO, "workload %s: unit %s has AllowedCPUs=%s%s",
		       a->req.name, unit, s ? s : "?",
		       running ? "" : " (applies when it runs)");
		free(s);
	}
done:
	m->unit_pending = false;
	if (!before && !m->established) {
		m->established = true;
		d->dirty_lazy = true; /* not pending: see np_daemon.dirty_lazy */
	}
	return r > 0;
}

void np_daemon_unit_left(struct np_daemon *d, const char *unit, bool said)
{
	struct np_unit_left *g;

	for (int i = 0; i < d->nunit_left; i++)
		if (!strcmp(d->unit_left[i].unit, unit))
			return;
	g = realloc(d->unit_left, sizeof(*g) * (size_t)(d->nunit_left + 1));
	if (!g) {
		np_log(LOG_ERR, "unit %s: out of memory; not tried again",
		       unit);
		return;
	}
	d->unit_left = g;
	g = &d->unit_left[d->nunit_left++];
	snprintf(g->unit, sizeof(g->unit), "%s", unit);
	g->said = said;
}

void np_daemon_stale_units(struct np_daemon *d)
{
	char unit[NP_UNIT_NAME_MAX];
	struct unit_lookup lk;

	if (!d->enf || !d->enf->ops->recorded_unit)
		return;
	lookup_init(d, &lk);
	for (int i = 0; d->enf->ops->recorded_unit(d->enf, i, unit,
						   sizeof(unit)) > 0; i++) {
		if (is_wl(&lk, unit))
			continue;
		np_log(LOG_INFO,
		       "unit %s still has the CPUs of a workload that is "
		       "gone (a release cut short by a crash, or the state "
		       "reset): given back, or confined beside the scope, "
		       "when it runs",
		       unit);
		np_daemon_unit_left(d, unit, false);
	}
	lookup_free(&lk);
}

/* Units released while the bus failed get their CPUs back now, before
 * the plan can grant those CPUs to someone else; one admitted again in
 * the meantime is its workload's again; one that still runs beside the
 * scope is confined instead (strays); one that is stopped gets nothing
 * until it runs again (the enforcer keeps its record). */
static int units_given_back(struct np_daemon *d, struct unit_lookup *lk)
{
	int writes = 0;

	if (d->nunit_left && !lookup_ready(lk))
		return 0; /* kept for the next cycle */
	for (int i = 0; i < d->nunit_left; i++) {
		struct np_unit_left *l = &d->unit_left[i];
		const char *u = l->unit;
		char err[1024];
		bool taken = is_wl(lk, u);
		int r = 0;
		if (!taken &&
		    (r = d->enf->ops->release_unit(d->enf, u, err,
						   sizeof(err))) < 0) {
			if (!l->said)
				np_log(LOG_ERR,
				       "unit %s keeps CPUs it should give back: "
				       "%s; tried again every cycle",
				       u, err);
			l->said = true;
			continue;
		}
		if (!taken && r == 1)
			np_log(LOG_INFO,
			       "unit %s is no workload and runs on beside the "
			       "scope: confined to the shared pool",
			       u);
		if (!taken && r > 1)
			np_log(LOG_INFO,
			       "unit %s is no workload and is stopped: nothing "
			       "is set on it until it runs again",
			       u);
		if (!taken && !r) {
			np_log(LOG_INFO, "unit %s has its CPUs back", u);
			writes++;
		}
		d->unit_left[i] = d->unit_left[--d->nunit_left];
		i--;
	}
	return writes;
}

/* A stray: a unit right below the managed parent's slice that is no
 * workload. Before the plan it keeps only what of its CPUs is shared
 * (one with none of its own runs on every CPU: the shared pool then);
 * after it, the shared pool; a change by hand is repaired. One whose
 * cgroup cannot be read (stopping meanwhile) is left to the next cycle. */
static int one_stray(struct np_daemon *d, const char *unit,
		     const np_cpuset *shared, bool before)
{
	char err[1024], slice[NP_PATH_MAX];
	np_cpuset cur, want = *shared;
	int r;

	if (d->enf->ops->read_unit(d->enf, unit, slice, sizeof(slice), &cur,
				   err, sizeof(err)))
		return 0;
	if (before) {
		if (!np_cpuset_empty(&cur))
			np_cpuset_and(&want, &want, &cur);
		if (np_cpuset_empty(&want))
			want = *shared;
	}
	if (np_cpuset_equal(&cur, &want))
		return 0;
	r = d->enf->ops->confine_unit(d->enf, unit, &want, true, err,
				      sizeof(err));
	if (r < 0) {
		np_log(LOG_ERR, "unit %s (no workload, beside the scope): %s",
		       unit, err);
		d->n.write_errors++;
		return 0;
	}
	if (r > 0) {
		char *c = np_cpuset_str(&want);
		np_log(LOG_INFO,
		       "unit %s runs beside the scope and is no workload: "
		       "AllowedCPUs=%s (the shared pool)",
		       unit, c ? c : "?");
		free(c);
	}
	return r > 0;
}

/* unit, the i-th recorded, was given back (and so forgotten): the i to
 * go on from (the next one is the i-th now). */
static int after_given_back(struct np_daemon *d, int i, const char *unit)
{
	char next[NP_UNIT_NAME_MAX];

	if (d->enf->ops->recorded_unit(d->enf, i, next, sizeof(next)) > 0 &&
	    !strcmp(next, unit))
		return i; /* still there (not forgotten): past it */
	return i - 1;
}

/* Strays that no longer run beside the scope: given back what they had
 * if they run elsewhere; one that is stopped gets nothing (the enforcer
 * keeps its record: release_unit 2) and is looked at again each cycle,
 * in the kernel's cgroup.events, systemd asked only after its signals.
 * A release that fails is tried again each cycle, logged once
 * (unit_left). */
static int strays_gone(struct np_daemon *d, struct unit_lookup *lk)
{
	char unit[NP_UNIT_NAME_MAX], err[1024];
	int writes = 0;

	for (int i = 0; d->enf->ops->recorded_unit(d->enf, i, unit,
						   sizeof(unit)) > 0; i++) {
		/* still there, or already to be given back */
		bool skip = is_wl(lk, unit) || is_held(lk, unit) ||
			    in_names(lk->listed, lk->nlisted, unit);
		int r;
		for (int k = 0; k < d->nunit_left && !skip; k++)
			skip = !strcmp(d->unit_left[k].unit, unit);
		if (skip)
			continue;
		r = d->enf->ops->release_unit(d->enf, unit, err, sizeof(err));
		if (r < 0) {
			np_log(LOG_ERR,
			       "unit %s no longer runs beside the scope, but "
			       "keeps CPUs it should give back: %s; tried "
			       "again every cycle",
			       unit, err);
			np_daemon_unit_left(d, unit, true);
		} else if (!r) {
			np_log(LOG_INFO,
			       "unit %s no longer runs beside the scope: it "
			       "has its CPUs back",
			       unit);
			writes++;
			i = after_given_back(d, i, unit);
		}
	}
	return writes;
}

/* A unit confined as a stray that now holds a container workload's
 * cgroup (its scope was there before the runtime's hook admitted it)
 * gets back what it had before the plan writes the container's CPUs:
 * a cgroup gets no CPU its parent lacks. */
static int holders_given_back(struct np_daemon *d,
			      struct unit_lookup *lk)
{
	char unit[NP_UNIT_NAME_MAX], err[1024];
	int writes = 0, r;

	for (int i = 0; d->enf->ops->recorded_unit(d->enf, i, unit,
						   sizeof(unit)) > 0; i++) {
		if (is_wl(lk, unit) || !is_held(lk, unit))
			continue;
		r = d->enf->ops->confine_unit(d->enf, unit, NULL, true, err,
					      sizeof(err));
		if (r < 0) {
			np_log(LOG_ERR, "unit %s holds a container workload, "
			       "but keeps the shared pool: %s", unit, err);
			d->n.write_errors++;
			continue;
		}
		if (!r) /* stopped: nothing set, its record kept */
			continue;
		np_log(LOG_INFO, "unit %s holds a container workload now: it "
		       "has its CPUs back", unit);
		writes++;
		i = after_given_back(d, i, unit);
	}
	return writes;
}

/* The units beside the scope that are no workload: listed once a phase
 * (the enforcer reads the slice's directory once a cycle), looked up in
 * lk. */
static int strays_phase(struct np_daemon *d, struct unit_lookup *lk,
			const np_cpuset *shared, bool before)
{
	int writes = 0, r;

	if (!d->enf->ops->slice_unit || !d->enf->ops->confine_unit)
		return 0;
	if (before && d->enf->ops->recorded_unit)
		writes += holders_given_back(d, lk);
	if ((r = lookup_listed(d, lk)) < 0) { /* none taken for stopped */
		np_log(LOG_ERR,
		       "the units beside the scope could not be listed: %s",
		       strerror(-r));
		return writes;
	}
	for (int i = 0; i < lk->nlisted; i++)
		if (!is_wl(lk, lk->names[i]) && !is_held(lk, lk->names[i]))
			writes += one_stray(d, lk->names[i], shared, before);
	if (!before && d->enf->ops->recorded_unit)
		writes += strays_gone(d, lk);
	return writes;
}

int np_daemon_units_phase(struct np_daemon *d, bool before)
{
	struct unit_lookup lk;
	struct np_pools p;
	int writes = 0;

	if (!d->enf || !d->enf->ops->set_unit)
		return 0;
	lookup_init(d, &lk);
	if (before)
		writes += units_given_back(d, &lk);
	np_state_pools(&d->st, &p);
	np_daemon_suppress_pool(d, &p);
	for (int i = 0; i < d->st.nworkloads; i++)
		if (d->st.w[i]->req.unit)
			writes += one_unit(d, d->st.w[i], &p, before);
	writes += strays_phase(d, &lk, &p.shared, before);
	lookup_free(&lk);
	return writes;
}

/* Is unit one of numaplace's own: a host unit (shared_cgroups), a slice
 * above one of them or above the managed parent (the root slice
 * included), the parent slice or the workloads' scope? what says which. */
static bool own_unit(const struct np_daemon *d, const char *unit, char *what,
		     size_t len)
{
	const char *trees[NP_MAX_SHARED_CGROUPS + 1];
	size_t n = strlen(unit);
	int nt = 0;

	if (!strcmp(unit, "-.slice")) {
		snprintf(what, len, "is the root slice");
		return true;
	}
	for (int i = 0; i < d->cfg.nshared; i++)
		trees[nt++] = d->cfg.shared_cgroups[i];
	trees[nt++] = d->cfg.cgroup_parent; /* the scope's path, under systemd */
	for (int i = 0; i < nt; i++) {
		/* each component of the path is a unit: the host unit
		 * itself, or a slice above it */
		for (const char *p = trees[i]; *p;) {
			const char *e = strchr(p, '/');
			size_t l = e ? (size_t)(e - p) : strlen(p);
			if (l == n && !strncmp(p, unit, n)) {
				snprintf(what, len, "is in the path of %.300s",
					 trees[i]);
				return true;
			}
			p += l + (e ? 1 : 0);
		}
	}
	return false;
}

/* Can this workload be admitted with this enforcer? 0 or a rejection
 * reason in why. */
int np_daemon_unit_check(struct np_daemon *d, const struct np_workload_req *w,
			 char *why, size_t len)
{
	char what[400];

	if (!w->unit)
		return 0;
	if (d->enf && !d->enf->ops->set_unit) {
		snprintf(why, len,
			 "unit %s: workloads that are systemd units need the "
			 "systemd cgroup driver (this daemon runs %s)",
			 w->unit, d->enf->ops->name);
		return -EOPNOTSUPP;
	}
	if (own_unit(d, w->unit, what, sizeof(what))) {
		snprintf(why, len,
			 "unit %s %s: numaplace manages it itself, it cannot "
			 "be a workload",
			 w->unit, what);
		return -EINVAL;
	}
	for (int i = 0; i < d->st.nworkloads; i++)
		if (d->st.w[i]->req.unit && !strcmp(d->st.w[i]->req.unit, w->unit) &&
		    strcmp(d->st.w[i]->req.name, w->name)) {
			snprintf(why, len, "unit %s is workload %s's already",
				 w->unit, d->st.w[i]->req.name);
			return -EBUSY;
		}
	return 0;
}
