// SPDX-License-Identifier: Apache-2.0
/*
 * The reconcile cycle: the desired cpuset of every managed cgroup (a
 * workload's exclusive set, the shared or BE pool), compared with what the
 * kernel holds, and the differences handed to the enforcer; host cgroups
 * and partitions around it; verification synced before and checked after.
 */
#include "daemon/daemon_internal.h"
#include "daemon/serve/metrics.h"
#include "numaplace/bpf_abi.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Writes in a cycle from which its memory is trimmed (malloc_trim). */
#define NP_TRIM_WRITES 512

static struct np_written *written_find(struct np_daemon *d, const char *path)
{
	long i;
	return np_strmap_get(&d->written_ix, path, &i) ? &d->written[i] : NULL;
}

/* The cpus recorded in w equal s. */
static bool written_cpus_equal(const struct np_written *w, const np_cpuset *s)
{
	if (w->ncpuwords &&
	    memcmp(w->cpus, s->w, sizeof(s->w[0]) * (size_t)w->ncpuwords))
		return false;
	for (int k = w->ncpuwords; k < NP_CPUSET_WORDS; k++)
		if (s->w[k])
			return false;
	return true;
}

static void written_set(struct np_daemon *d, const char *path,
			const np_cpuset *cpus, np_nodemask mems)
{
	struct np_written *w = written_find(d, path);
	int nw = NP_CPUSET_WORDS;
	if (!w) {
		struct np_written *g = realloc(
			d->written, sizeof(*g) * (size_t)(d->nwritten + 1));
		if (!g)
			return;
		d->written = g;
		w = &d->written[d->nwritten];
		memset(w, 0, sizeof(*w));
		if (!(w->path = strdup(path)))
			return;
		if (np_strmap_put(&d->written_ix, w->path, d->nwritten)) {
			free(w->path);
			return;
		}
		d->nwritten++;
	}
	w->mems = mems;
	w->drifted = false;
	if (written_cpus_equal(w, cpus))
		return;
	while (nw > 0 && !cpus->w[nw - 1])
		nw--;
	if (nw != w->ncpuwords) {
		uint64_t *g = realloc(w->cpus, sizeof(*g) * (size_t)(nw ? nw : 1));
		if (!g)
			return; /* out of memory: the previous record stays */
		w->cpus = g;
		w->ncpuwords = nw;
	}
	memcpy(w->cpus, cpus->w, sizeof(cpus->w[0]) * (size_t)nw);
}

static bool any_partition(const struct np_daemon *d)
{
	for (int i = 0; i < d->st.nworkloads; i++)
		if (d->st.w[i]->req.partition)
			return true;
	return false;
}

/* The managed parent is (to be) a partition root: some workload asks
 * for a partition and the kernel did not refuse the parent. Host cgroups
 * then keep only the reserved CPUs, and the reserved CPUs are not below
 * the parent. */
static bool partitioning(const struct np_daemon *d)
{
	return !d->parent_refused_set && !(d->enf && d->enf->no_partitions) &&
	       any_partition(d);
}

struct desired {
	const char *path; /* a workload's cgroup, a leftover or own */
	char *own;        /* container sub-cgroup path (heap) */
	/* a pool or a container's set (valid for the cycle), or own_cpus */
	const np_cpuset *cpus;
	np_cpuset *own_cpus; /* union over several containers (heap) */
	np_nodemask mems;
	bool exclusive;
	/* the BE pool's (shared), an LSR workload's CPUs (exclusive): the BE
	 * pool may hold LSR CPUs (np_cgroup_change.best_effort) */
	bool best_effort, lends_to_be;
	bool present; /* its cgroup exists (read or created this cycle) */
	int wl; /* workload index */
	/* Its record (NULL for leftovers), held by its allocation: no
	 * workload is admitted or released from build_desired to the end of
	 * the cycle. */
	struct np_wl_meta *m;
};

/* Which side of LSR's lending to the BE pool v is on (exclusive set). */
static void set_lending(struct desired *v, enum np_qos q)
{
	v->best_effort = !v->exclusive && q == NP_QOS_BE;
	v->lends_to_be = v->exclusive && q == NP_QOS_LSR;
}

static void free_desired(struct desired *v, int n)
{
	for (int i = 0; v && i < n; i++) {
		free(v[i].own);
		free(v[i].own_cpus);
	}
	free(v);
}

/* d->left[i] (released, it had tasks) is gone, or empty and removed now:
 * dropped from the list. */
bool np_daemon_left_gone(struct np_daemon *d, int i)
{
	struct np_cgroup_state cs;
	char err[256];
	int r = d->enf->ops->inspect(d->enf, NP_ENF_MANAGED, d->left[i], &cs,
				     err, sizeof(err));

	if (r != -ENOENT &&
	    (r || !cs.procs_empty || d->enf->ops->remove(d->enf, d->left[i])))
		return false;
	memcpy(d->left[i], d->left[--d->nleft], sizeof(d->left[0]));
	return true;
}

/* The entries point into *pp and d->st: valid until either changes. */
static int build_desired(struct np_daemon *d, struct np_pools *pp,
			 struct desired **out, int *n)
{
	struct np_pools *p = pp;
	struct desired *v;
	int k = 0, cap = 0;

	np_state_pools(&d->st, p);
	/* Below a partition-root parent the reserved CPUs are not there. */
	if (partitioning(d)) {
		np_cpuset_andnot(&p->shared, &p->shared, &p->reserved);
		np_cpuset_andnot(&p->be, &p->be, &p->reserved);
	}
	np_daemon_suppress_pool(d, p); /* config.be_suppress cpuset */
	/* One per workload, one per container with its own cgroup. */
	for (int i = 0; i < d->st.nworkloads; i++) {
		cap++;
		for (int c = 0; c < d->st.w[i]->ncontainers; c++)
			cap += d->st.w[i]->req.c[c].cgroup &&
			       d->st.w[i]->req.c[c].cgroup[0];
	}
	/* Exclusive grants can take every CPU best effort may use; BE tasks
	 * then squeeze onto the shared pool (an empty cpuset.cpus would mean
	 * "all of the parent's"). */
	if (np_cpuset_empty(&p->be)) {
		if (!d->be_squeezed)
			np_log(LOG_WARNING,
			     "the best-effort pool is empty (every CPU is "
			     "reserved or exclusive): BE workloads run on the "
			     "shared pool until CPUs are released");
		d->be_squeezed = true;
		p->be = p->shared;
	} else {
		d->be_squeezed = false;
	}
	cap += d->nleft;
	v = calloc((size_t)cap + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (int i = 0; i < d->st.nworkloads; i++) {
		const struct np_workload_alloc *a = d->st.w[i];
		struct desired *wd;
		bool excl = true; /* exclusive only when every container is */
		if (a->req.unit)
			continue; /* units.c */
		wd = &v[k++];
		wd->path = a->req.cgroup;
		wd->wl = i;
		wd->m = np_daemon_meta_of(a);
		if ((a->ncontainers > 1 || a->pod_rest) &&
		    !(wd->own_cpus = calloc(1, sizeof(*wd->own_cpus)))) {
			free_desired(v, k);
			return -ENOMEM;
		}
		for (int c = 0; c < a->ncontainers; c++) {
			const struct np_container_alloc *ca = &a->c[c];
			const np_cpuset *cc = ca->exclusive ? ca->cpus
					      : a->qos_class == NP_QOS_BE
						      ? &p->be
						      : &p->shared;
			/* one container: its set; several: their union */
			if (wd->own_cpus)
				np_cpuset_or(wd->own_cpus, wd->own_cpus, cc);
			else
				wd->cpus = cc;
			wd->mems |= ca->mems;
			excl &= ca->exclusive;
			/* an init container (not a sidecar) runs on the
			 * workload's set, which holds its CPUs */
			if (a->req.c[c].init && !a->req.c[c].restartable)
				continue;
			if (a->req.c[c].cgroup && a->req.c[c].cgroup[0]) {
				struct desired *cd = &v[k++];
				if (asprintf(&cd->own, "%s/%s", a->req.cgroup,
					     a->req.c[c].cgroup) < 0) {
					cd->own = NULL;
					free_desired(v, k);
					return -ENOMEM;
				}
				cd->path = cd->own;
				cd->cpus = cc;
				cd->mems = ca->mems;
				/* the pod's shared rest: several containers
				 * hold it, none claims it */
				cd->exclusive = ca->exclusive && !ca->pod_shared;
				set_lending(cd, a->qos_class);
				cd->wl = i;
				cd->m = wd->m;
			}
		}
		/* the pod's rest: its cgroup holds the whole budget */
		if (a->pod_rest)
			np_cpuset_or(wd->own_cpus, wd->own_cpus, a->pod_rest);
		if (wd->own_cpus)
			wd->cpus = wd->own_cpus;
		wd->exclusive = excl;
		set_lending(wd, a->qos_class);
		if (!wd->mems)
			wd->mems = d->topo->numa_mask;
	}
	for (int i = 0; i < d->nleft; i++) {
		bool reused = false;
		/* a released cgroup that a new workload took over is that
		 * workload's now */
		for (int w = 0; w < k && !reused; w++)
			reused = !strcmp(v[w].path, d->left[i]);
		if (reused)
			memcpy(d->left[i], d->left[--d->nleft], sizeof(d->left[0]));
		if (reused || np_daemon_left_gone(d, i)) {
			i--;
			continue;
		}
		v[k].path = d->left[i];
		v[k].cpus = &p->shared;
		v[k].mems = d->topo->numa_mask;
		v[k].wl = -1;
		k++;
	}
	*out = v;
	*n = k;
	return 0;
}

/*
 * A host cgroup that exists and has cpuset files (prepared when it first
 * appears); one that does not is pending, said once each way.
 */
static bool host_ready(struct np_daemon *d, int i, struct np_cgroup_state *cs)
{
	const char *cg = d->cfg.shared_cgroups[i];
	bool was = !(d->host_pending & (1u << i));
	char err[512];

	if (d->enf->ops->inspect(d->enf, NP_ENF_HOST, cg, cs, err,
				 sizeof(err)) &&
	    (d->enf->ops->prepare(d->enf, NP_ENF_HOST, cg, false, err,
				  sizeof(err)) ||
	     d->enf->ops->inspect(d->enf, NP_ENF_HOST, cg, cs, err,
				  sizeof(err)))) {
		if (was)
			np_log(LOG_INFO, "shared cgroup %s is pending: %s", cg,
			       err);
		d->host_pending |= 1u << i;
		return false;
	}
	if (!was)
		np_log(LOG_INFO, "shared cgroup %s is there now: confined", cg);
	d->host_pending &= ~(1u << i);
	return true;
}

/*
 * Host cgroups confined to the shared pool (config.shared_cgroups) live
 * outside the managed parent, so they are written around the main plan:
 * before it, shrunk to what they keep (old ∩ pool), so that no CPU granted
 * exclusively is still theirs; after it, widened to the pool.
 */
static int shared_cgroups_phase(struct np_daemon *d, bool before)
{
	struct np_pools p;
	int writes = 0;

	np_state_pools(&d->st, &p);
	/* Beside a partition-root parent, host slices keep only the reserved
	 * CPUs (anything else would overlap the partition and void it). */
	if (partitioning(d))
		p.shared = p.reserved;
	for (int i = 0; i < d->cfg.nshared; i++) {
		const char *cg = d->cfg.shared_cgroups[i];
		struct np_cgroup_state cs;
		np_cpuset want;
		char err[512];
		int r;

		if (!host_ready(d, i, &cs))
			continue; /* not there yet: pending */
		if (before) {
			/* an empty cpuset.cpus runs on the parent's CPUs */
			const np_cpuset *old = np_cpuset_empty(&cs.cpus)
						       ? &cs.cpus_effective
						       : &cs.cpus;
			np_cpuset_and(&want, old, &p.shared);
			if (np_cpuset_empty(&want) ||
			    np_cpuset_equal(&want, &cs.cpus))
				continue;
		} else {
			want = p.shared;
			if (np_cpuset_equal(&want, &cs.cpus))
				continue;
		}
		r = d->enf->ops->set_cpuset(d->enf, NP_ENF_HOST, cg, &want, NULL,
					    err, sizeof(err));
		if (r < 0) {
			np_log(LOG_ERR, "shared cgroup %s: %s", cg, err);
			d->n.write_errors++;
		} else {
			writes++;
		}
	}
	return writes;
}

/*
 * cpuset partitions (isolation "partition"). A cgroup can only be a valid
 * partition when its parent is a partition root (Linux 6.1 has no
 * cpuset.cpus.exclusive to say otherwise), so while any workload asks for
 * one, the managed parent becomes a "root" partition over every CPU but
 * the reserved ones, which stay with the host; shared workloads below it
 * then run on the shared pool without the reserved CPUs. Each such
 * workload's cgroup becomes "isolated" once its CPUs are in place; when
 * the kernel refuses, it stays a member and the kernel's reason is logged.
 */
/* No workload asks for a partition (any more): the managed parent goes
 * back to a member cgroup over every CPU, before the host cgroups widen
 * over the CPUs it held exclusively (the kernel refuses a sibling's
 * cpuset that overlaps a partition root). Checked once, not every cycle. */
static void parent_member(struct np_daemon *d)
{
	struct np_cgroup_state cs;
	char err[1024];
	int r;

	if (d->parent_member)
		return;
	d->parent_refused_set = false;
	if ((r = d->enf->ops->inspect(d->enf, NP_ENF_HOST, d->cfg.cgroup_parent,
				      &cs, err, sizeof(err))) ||
	    !cs.has_partition ||
	    (cs.partition == NP_CGROUP_MEMBER && !cs.partition_invalid)) {
		d->parent_member = !r; /* not there: looked at again */
		return;
	}
	r = d->enf->ops->set_partition(d->enf, NP_ENF_HOST, d->cfg.cgroup_parent,
				       NP_CGROUP_MEMBER, err, sizeof(err));
	if (!r)
		r = d->enf->ops->set_cpuset(d->enf, NP_ENF_HOST,
					    d->cfg.cgroup_parent,
					    &d->topo->online, NULL, err,
					    sizeof(err));
	if (r) {
		/* tried again every cycle, said once */
		if (!d->parent_member_failed)
			np_log(r < 0 ? LOG_ERR : LOG_WARNING,
			       "partition parent %s: %s (tried again every "
			       "cycle)",
			       d->cfg.cgroup_parent, err);
		d->parent_member_failed = true;
		return;
	}
	d->parent_member = true;
	d->parent_member_failed = false;
	np_log(LOG_INFO, "%s is a member cgroup again (no workload asks for a "
	       "partition)", d->cfg.cgroup_parent);
}

/* Before anything of a cycle is written: a parent refused over other CPUs
 * than it would get now is tried again (and the host cgroups squeezed
 * first, see partitioning()). */
static void partition_retry(struct np_daemon *d)
{
	np_cpuset want;

	if (!d->parent_refused_set || d->enf->no_partitions)
		return;
	np_cpuset_andnot(&want, &d->topo->online, &d->st.reserved);
	if (!np_cpuset_equal(&want, &d->parent_refused))
		d->parent_refused_set = false;
}

/* Refused: said once, and nothing below it is tried until the CPUs it
 * would get change (partition_retry). */
static void parent_refused(struct np_daemon *d, const np_cpuset *want, int r,
			   const char *err)
{
	d->parent_refused_set = true;
	d->parent_refused = *want;
	np_log(r < 0 ? LOG_ERR : LOG_WARNING,
	       "partition parent %s: %s; isolated workloads stay exclusive "
	       "member cgroups (tried again when the reserved CPUs change or "
	       "numaplaced restarts)",
	       d->cfg.cgroup_parent, err);
}

static void parent_partition(struct np_daemon *d)
{
	struct np_cgroup_state cs;
	np_cpuset want;
	char err[1024];
	int r;

	if (!any_partition(d)) {
		parent_member(d);
		return;
	}
	d->parent_member = false;
	if (d->parent_refused_set)
		return; /* said once; partition_retry decides */
	np_cpuset_andnot(&want, &d->topo->online, &d->st.reserved);
	if (d->enf->no_partitions) {
		/* before anything is written (a partition saved under another
		 * layout, say) */
		parent_refused(d, &want, -EOPNOTSUPP, d->enf->no_partitions);
		return;
	}
	if (d->enf->ops->inspect(d->enf, NP_ENF_HOST, d->cfg.cgroup_parent,
				 &cs, err, sizeof(err)))
		return;
	if (cs.has_partition && cs.partition == NP_CGROUP_ROOT &&
	    !cs.partition_invalid && np_cpuset_equal(&cs.cpus, &want))
		return;
	if (!np_cpuset_equal(&cs.cpus, &want) &&
	    (r = d->enf->ops->set_cpuset(d->enf, NP_ENF_HOST,
					 d->cfg.cgroup_parent, &want, NULL, err,
					 sizeof(err))) < 0) {
		np_log(LOG_ERR, "partition parent %s: %s", d->cfg.cgroup_parent,
		     err);
		return;
	}
	r = d->enf->ops->set_partition(d->enf, NP_ENF_HOST, d->cfg.cgroup_parent,
				       NP_CGROUP_ROOT, err, sizeof(err));
	if (!r) {
		np_log(LOG_INFO, "%s is a partition root (for isolated workloads)",
		     d->cfg.cgroup_parent);
		return;
	}
	parent_refused(d, &want, r, err);
	/* its shared workloads keep the reserved CPUs: its CPUs back */
	if (!np_cpuset_equal(&cs.cpus, &want))
		d->enf->ops->set_cpuset(d->enf, NP_ENF_HOST, d->cfg.cgroup_parent,
					np_cpuset_empty(&cs.cpus) ? &d->topo->online
								  : &cs.cpus,
					NULL, err, sizeof(err));
}

static void workload_partitions(struct np_daemon *d)
{
	if (d->parent_refused_set)
		return; /* no partition can be valid below that parent */
	for (int i = 0; i < d->st.nworkloads; i++) {
		const struct np_workload_alloc *a = d->st.w[i];
		struct np_wl_meta *m = np_daemon_meta_of(a);
		struct np_cgroup_state cs;
		char err[1024];
		int r;

		if (!a->req.partition || !m)
			continue;
		if (d->enf->ops->inspect(d->enf, NP_ENF_MANAGED, a->req.cgroup,
					 &cs, err, sizeof(err)) ||
		    !cs.has_partition)
			continue;
		if (cs.partition == NP_CGROUP_ISOLATED && !cs.partition_invalid) {
			m->partition_done = true;
			continue;
		}
		if (m->partition_done && cs.partition_invalid) {
			np_log(LOG_WARNING, "partition of %s became invalid: %s",
			     a->req.name, cs.partition_reason);
			m->partition_done = false;
		}
		if (m->partition_done)
			continue;
		r = d->enf->ops->set_partition(d->enf, NP_ENF_MANAGED,
					       a->req.cgroup, NP_CGROUP_ISOLATED,
					       err, sizeof(err));
		m->partition_done = true; /* refused ones are not retried */
		if (r)
			np_log(r < 0 ? LOG_ERR : LOG_WARNING,
			     "partition of %s: %s (kept as a member cgroup)",
			     a->req.name, err);
		else
			np_log(LOG_INFO, "%s is an isolated partition", a->req.name);
	}
}

/* The policy maps get the new placement before any cgroup is written,
 * so that the rewrite falls into their settle window. */
static void verify_sync(struct np_daemon *d, const struct desired *v, int n)
{
	struct np_verify_wl *w;
	int k = 0;

	if (!d->verify)
		return;
	w = calloc((size_t)n + 1, sizeof(*w));
	if (!w)
		return;
	for (int i = 0; i < n; i++) {
		const struct np_workload_alloc *a;
		if (v[i].wl < 0 || strcmp(v[i].path, d->st.w[v[i].wl]->req.cgroup))
			continue; /* leftovers and container sub-cgroups */
		a = d->st.w[v[i].wl];
		w[k].wl = v[i].wl;
		snprintf(w[k].name, sizeof(w[k].name), "%s", a->req.name);
		snprintf(w[k].cgroup, sizeof(w[k].cgroup), "%s", v[i].path);
		w[k].cpus = *v[i].cpus;
		w[k].mems = v[i].mems;
		/* CPU owners: the CPUs of every exclusive container, also
		 * those of a workload whose other containers share a pool */
		for (int c = 0; c < a->ncontainers; c++)
			if (a->c[c].exclusive)
				np_cpuset_or(&w[k].owned, &w[k].owned,
					     a->c[c].cpus);
		w[k].flags = (v[i].exclusive ? NP_BPF_POL_EXCLUSIVE : 0) |
			     (a->qos_class == NP_QOS_BE ? NP_BPF_POL_BE : 0) |
			     (a->qos_class == NP_QOS_LSR ? NP_BPF_POL_LSR : 0) |
			     (a->req.partition ? NP_BPF_POL_PARTITION : 0);
		k++;
	}
	np_verify_sync(d->verify, w, k);
	free(w);
}

/* A cgroup no longer holds what was written there: logged with both
 * values and counted, whether the drift check or the counters saw it. */
/* What a desired cgroup holds now (created first when configured);
 * -ENOENT for a leftover that is gone. */
static int read_back(struct np_daemon *d, struct desired *x, np_cpuset *cpus,
		     np_nodemask *mems)
{
	bool make = d->cfg.create_cgroups && x->path[0] != '/';
	char err[1024];
	int r;

	/* A pending workload's cgroup is made first: it is missing as a
	 * rule (a first cycle: no failed read of each). Should that fail,
	 * the read says what is wrong, as it does for any other. */
	if (make && x->m && !x->m->established)
		(void)d->enf->ops->prepare(d->enf, NP_ENF_MANAGED, x->path,
					   true, err, sizeof(err));
	r = d->enf->ops->read(d->enf, x->path, cpus, mems, err, sizeof(err));
	if (r == -ENOENT && x->wl < 0)
		return r;
	if (r == -ENOENT && make) {
		r = d->enf->ops->prepare(d->enf, NP_ENF_MANAGED, x->path, true,
					 err, sizeof(err));
		if (!r)
			r = d->enf->ops->read(d->enf, x->path, cpus, mems, err,
					      sizeof(err));
	}
	if (r) {
		np_log(LOG_ERR, "cgroup %s: %s", x->path, err);
		d->n.write_errors++;
		return r;
	}
	x->present = true;
	return 0;
}

struct changes {
	struct np_cgroup_change *ch;
	int n, cap;
	/* the sets read back, each once: the changes point into it */
	struct np_cpuset_pool read;
};

static struct np_cgroup_change *change_add(struct changes *c)
{
	if (c->n == c->cap) {
		/* Changes are few in a steady cycle: grown on demand. */
		int cap = c->cap ? 2 * c->cap : 16;
		struct np_cgroup_change *g =
			realloc(c->ch, sizeof(*g) * (size_t)cap);
		if (!g)
			return NULL;
		c->ch = g;
		c->cap = cap;
	}
	memset(&c->ch[c->n], 0, sizeof(c->ch[0]));
	return &c->ch[c->n++];
}

/* Compare every desired cgroup with what the kernel holds: the changes to
 * make, and drift (a cgroup no longer holding what was written there). */
static int plan_changes(struct np_daemon *d, struct desired *v, int n,
			struct changes *c)
{
	for (int i = 0; i < n; i++) {
		struct np_cgroup_change *ch;
		struct np_written *wr;
		np_cpuset cpus;
		np_nodemask mems;
		if (read_back(d, &v[i], &cpus, &mems))
			continue;
		if (np_cpuset_equal(&cpus, v[i].cpus) && mems == v[i].mems) {
			written_set(d, v[i].path, v[i].cpus, v[i].mems);
			continue;
		}
		/* a planned change of its desired set is not drift */
		wr = written_find(d, v[i].path);
		if (v[i].m && v[i].m->established && wr && !wr->drifted &&
		    (!written_cpus_equal(wr, &cpus) || wr->mems != mems)) {
			np_daemon_drift(d, v[i].path, &cpus, v[i].cpus, "");
			wr->drifted = true;
		}
		if (np_cpuset_empty(v[i].cpus) || !v[i].mems) {
			/* nothing a cpuset can express: skip this one
			 * rather than fail the whole plan */
			np_log(LOG_ERR, "cgroup %s: no CPUs or memory nodes are "
			       "left for it; left as it is", v[i].path);
			d->n.write_errors++;
			continue;
		}
		if (!(ch = change_add(c)))
			return -ENOMEM;
		ch->cgroup = v[i].path;
		/* the desired set lives as long as the cycle's pools */
		ch->new_cpus = v[i].cpus;
		if (!(ch->old_cpus = np_cpuset_intern(&c->read, &cpus)))
			return -ENOMEM;
		ch->old_mems = mems;
		ch->new_mems = v[i].mems;
		ch->kind = v[i].exclusive ? NP_CGROUP_EXCLUSIVE : NP_CGROUP_SHARED;
		ch->best_effort = v[i].best_effort;
		ch->lends_to_be = v[i].lends_to_be;
	}
	return 0;
}

/* Apply: the enforcer writes the changes in a safe order. */
static int apply_changes(struct np_daemon *d, const struct changes *c,
			 int *writes)
{
	char err[1024];
	int r, w = 0;

	if (!c->n)
		return 0;
	r = d->enf->ops->apply(d->enf, c->ch, c->n, &w, err, sizeof(err));
	*writes += w;
	if (r < 0) {
		np_log(LOG_ERR, "%s", err);
		d->n.write_errors++;
		return r;
	}
	if (r > 0)
		np_log(LOG_WARNING, "%s", err);
	for (int i = 0; i < c->n; i++)
		written_set(d, c->ch[i].cgroup, c->ch[i].new_cpus,
			    c->ch[i].new_mems);
	return 0;
}

/* Observe: what verification found this cycle leads to actions now. */
static void observe(struct np_daemon *d)
{
	struct np_findings fs = {0};

	if (!d->verify)
		return;
	np_verify_check(d->verify, &fs);
	np_daemon_act_on_findings(d, &fs);
	np_findings_free(&fs);
}

/*
 * One cycle: collect (spec files, vanished cgroups) -> decide (admissions
 * and releases, in the engine) -> persist (before any write) -> apply
 * (through the enforcer) -> observe (read back; verification findings,
 * acted on for the next cycle).
 */
int np_daemon_reconcile(struct np_daemon *d)
{
	struct changes c = {0};
	struct desired *v = NULL;
	struct np_pools pools; /* the desired sets point into it */
	struct timespec t0, t1;
	int n = 0, r = 0, writes = 0;
	bool synced = false, quiet = false;
	/* saves0: the saves once the cgroups are gone through (none: never
	 * clean) */
	uint64_t errors0 = d->n.write_errors, saves0 = UINT64_MAX;
	np_cpuset offline0 = d->st.offline;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	d->n.cycles++;
	d->cycle_due = false; /* this cycle serves any pending one */
	if (d->enf)
		d->enf->ops->cycle(d->enf); /* cgroups are read once a cycle */
	np_daemon_hotplug(d);
	np_daemon_suppress_sample(d);
	np_daemon_scan_specs(d);   /* collect: the files read and queued */
	np_daemon_decide_specs(d); /* decide: admitted, released */
	if (!d->enf)
		goto done;
	if ((quiet = np_daemon_quiet_cycle(d, &offline0)))
		d->n.quiet_cycles++; /* no syscall per managed cgroup */
	else
		np_daemon_release_vanished(d);
	/* Write-ahead: the state on disk must know every allocation before
	 * a cgroup shows it, or a crash could hand the same CPUs out twice. */
	if (d->dirty && np_daemon_save(d)) {
		np_log(LOG_ERR, "state not saved: no cgroup written this cycle");
		goto done;
	}
	saves0 = d->n.state_saves;
	partition_retry(d);
	writes += shared_cgroups_phase(d, true);
	writes += np_daemon_units_phase(d, true);
	parent_partition(d);
	if (quiet) {
		synced = true; /* the maps hold what the last cycle put */
		/* their last task leaving is no event */
		for (int i = 0; i < d->nleft; i++)
			i -= np_daemon_left_gone(d, i);
	} else {
		if ((r = build_desired(d, &pools, &v, &n)))
			goto done;
		verify_sync(d, v, n);
		synced = true;
		if ((r = plan_changes(d, v, n, &c)))
			goto done;
		/* a failed write leaves the rest of the cycle to do all
		 * the same */
		r = apply_changes(d, &c, &writes);
		/* config.be_suppress cfsQuota */
		writes += np_daemon_suppress_quota(d);
		np_daemon_defrag_migrate(d); /* moved workloads' pages follow */
	}
	writes += np_daemon_units_phase(d, false);
	writes += shared_cgroups_phase(d, false);
	workload_partitions(d);
	np_daemon_hostiso_phase(d); /* once the exclusive sets are in place */
	for (int i = 0; i < n; i++) {
		/* No longer pending (saved at the end of the cycle): a
		 * restart now takes a missing cgroup for one removed by
		 * hand. */
		if (v[i].wl >= 0 && v[i].m && !v[i].m->established &&
		    v[i].present) {
			v[i].m->established = true;
			d->dirty_lazy = true;
		}
	}
done:
	/* Counters are read even when the writes failed: a placement that
	 * could not be applied shows up as violations, and is reported. */
	if (synced) {
		/* the settle window of this cycle's changes starts now */
		np_verify_applied(d->verify);
		observe(d);
	}
	free(c.ch);
	np_cpuset_pool_free(&c.read);
	free_desired(v, n);
	if (d->dirty)
		np_daemon_save(d);
	else if (d->dirty_lazy)
		np_daemon_save_lazy(d);
	np_daemon_quiet_after(d, quiet, r, writes, errors0, saves0);
	/* a cycle of many writes (the first at 10,000 cgroups: tens of
	 * MiB of plan) gives what it freed back to the system */
	if (writes >= NP_TRIM_WRITES)
		malloc_trim(0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	d->last_cycle.time = time(NULL);
	d->last_cycle.writes = writes;
	d->n.writes += (uint64_t)writes;
	d->last_cycle.duration_us = (t1.tv_sec - t0.tv_sec) * 1000000L +
				    (t1.tv_nsec - t0.tv_nsec) / 1000;
	np_hist_add(&d->hist_reconcile, np_hist_reconcile_le,
		    (double)d->last_cycle.duration_us / 1e6);
	return r;
}
