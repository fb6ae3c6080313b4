// SPDX-License-Identifier: Apache-2.0
/*
 * Workloads that are systemd units ("unit" in the spec): numaplace does
 * not own their cgroups, so their CPUs and memory nodes are unit
 * properties, set through the enforcer (AllowedCPUs, AllowedMemoryNodes;
 * systemd keeps them across restarts of the unit and daemon-reloads). A
 * unit that does not exist yet is pending and gets its CPUs when it
 * appears. Shared ones follow their pool: narrowed before the main plan
 * (with the host cgroups), set after it.
 */
#include "daemon/daemon_internal.h"
#include "numaplace/enforcer.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

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

	if (!d->enf || !d->enf->ops->recorded_unit)
		return;
	for (int i = 0; d->enf->ops->recorded_unit(d->enf, i, unit,
						   sizeof(unit)) > 0; i++) {
		bool wl = false;
		for (int w = 0; w < d->st.nworkloads && !wl; w++)
			wl = d->st.w[w]->req.unit &&
			     !strcmp(d->st.w[w]->req.unit, unit);
		if (wl)
			continue;
		np_log(LOG_INFO,
		       "unit %s still has the CPUs of a workload that is "
		       "gone (a release cut short by a crash, or the state "
		       "reset): given back",
		       unit);
		np_daemon_unit_left(d, unit, false);
	}
}

/* Units released while the bus failed get their CPUs back now, before
 * the plan can grant those CPUs to someone else; one admitted again in
 * the meantime is its workload's again. */
static int units_given_back(struct np_daemon *d)
{
	int writes = 0;

	for (int i = 0; i < d->nunit_left; i++) {
		struct np_unit_left *l = &d->unit_left[i];
		const char *u = l->unit;
		char err[1024];
		bool taken = false;
		for (int w = 0; w < d->st.nworkloads && !taken; w++)
			taken = d->st.w[w]->req.unit &&
				!strcmp(d->st.w[w]->req.unit, u);
		if (!taken &&
		    d->enf->ops->release_unit(d->enf, u, err, sizeof(err)) < 0) {
			if (!l->said)
				np_log(LOG_ERR,
				       "unit %s keeps CPUs it should give back: "
				       "%s; tried again every cycle",
				       u, err);
			l->said = true;
			continue;
		}
		if (!taken) {
			np_log(LOG_INFO, "unit %s has its CPUs back", u);
			writes++;
		}
		d->unit_left[i] = d->unit_left[--d->nunit_left];
		i--;
	}
	return writes;
}

int np_daemon_units_phase(struct np_daemon *d, bool before)
{
	struct np_pools p;
	int writes = 0;

	if (!d->enf || !d->enf->ops->set_unit)
		return 0;
	if (before)
		writes += units_given_back(d);
	np_state_pools(&d->st, &p);
	np_daemon_suppress_pool(d, &p);
	for (int i = 0; i < d->st.nworkloads; i++)
		if (d->st.w[i]->req.unit)
			writes += one_unit(d, d->st.w[i], &p, before);
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
