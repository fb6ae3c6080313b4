// SPDX-License-Identifier: Apache-2.0
/*
 * BE suppression in the daemon (config.be_suppress, Koordinator's koordlet
 * CPU suppress): once a reconcile period, the node's CPU time from
 * /proc/stat (config.proc_stat_file) and each workload cgroup's cpu.stat
 * usage_usec are sampled; their deltas give the usages (milli-CPUs) the
 * engine sizes the BE pool from (np_suppress_compute). The period's length
 * is taken from /proc/stat itself (its total ticks over its CPUs), so a
 * sample depends on the files only. Policy cpuset: the BE pool the cycle
 * writes (build_desired) is narrowed to np_suppress_pick's set of that
 * size; writes go through the enforcer like every other cpuset.
 */
#include "daemon/daemon_internal.h"
#include "basic/fileio.h"
#include "numaplace/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The "cpu " line of /proc/stat: busy and total ticks over all CPUs, and
 * the number of "cpuN" lines. 0 or -EINVAL with why. */
static int parse_stat(const char *txt, uint64_t *busy, uint64_t *total,
		      int *ncpu, char *why, size_t len)
{
	unsigned long long v[10] = {0};
	const char *l;
	int n;

	if (strncmp(txt, "cpu ", 4)) {
		snprintf(why, len, "does not start with a \"cpu \" line");
		return -EINVAL;
	}
	n = sscanf(txt + 4, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
		   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
		   &v[8], &v[9]);
	if (n < 4) {
		snprintf(why, len, "the \"cpu \" line has %d numbers, not 4..10",
			 n < 0 ? 0 : n);
		return -EINVAL;
	}
	/* user nice system idle iowait irq softirq steal (guest time is in
	 * user already) */
	*busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	*total = *busy + v[3] + v[4];
	*ncpu = 0;
	for (l = strchr(txt, '\n'); l; l = strchr(l + 1, '\n'))
		if (!strncmp(l + 1, "cpu", 3) && l[4] >= '0' && l[4] <= '9')
			(*ncpu)++;
	if (*ncpu < 1) {
		snprintf(why, len, "no \"cpuN\" line");
		return -EINVAL;
	}
	return 0;
}

/* usage_usec of cgroup (relative to the managed parent): 0 or -errno. */
static int read_usage(int pfd, const char *cgroup, uint64_t *usec)
{
	_cleanup_free_ char *txt = NULL;
	char path[2 * NP_PATH_MAX + 16];
	const char *p;
	int r;

	snprintf(path, sizeof(path), "%s/cpu.stat", cgroup);
	if ((r = np_read_at(pfd, path, NP_READ_NOFOLLOW | NP_READ_REGULAR,
			    65536, &txt, NULL)))
		return r;
	for (p = txt; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, "usage_usec ", 11))
			return sscanf(p + 11, "%" SCNu64, usec) == 1 ? 0
								      : -EINVAL;
	return -ENOENT;
}

/* The workloads' usages over elapsed_us into u (non-BE and BE); a
 * workload seen for the first time counts from the next sample. */
static void workload_usage(struct np_daemon *d, uint64_t elapsed_us,
			   struct np_suppress_usage *u)
{
	int pfd = d->enf ? d->enf->ops->parent_fd(d->enf) : -1;

	for (int i = 0; pfd >= 0 && i < d->st.nworkloads; i++) {
		const struct np_workload_alloc *a = d->st.w[i];
		struct np_wl_meta *m = np_daemon_meta_of(a);
		uint64_t now;
		int64_t milli;
		if (!m || a->req.unit || !a->req.cgroup ||
		    read_usage(pfd, a->req.cgroup, &now)) {
			if (m)
				m->cpu_known = false;
			continue;
		}
		if (m->cpu_known && now >= m->cpu_usec && elapsed_us) {
			milli = (int64_t)((now - m->cpu_usec) * 1000 /
					  elapsed_us);
			if (a->qos_class == NP_QOS_BE)
				u->be += milli;
			else
				u->non_be += milli;
		}
		m->cpu_usec = now;
		m->cpu_known = true;
	}
}

static void log_change(struct np_daemon *d, const struct np_suppress_usage *u,
		       const struct np_suppress_out *o)
{
	if (d->suppress.valid && d->suppress.out.cpus == o->cpus &&
	    d->suppress.out.quota_us == o->quota_us)
		return;
	np_log(LOG_INFO,
	       "BE suppress (%s): node %" PRId64 "m, non-BE %" PRId64
	       "m, BE %" PRId64 "m, system %" PRId64 "m: budget %" PRId64
	       "m -> %d CPUs, cpu.max quota %" PRId64 " us%s",
	       np_suppress_policy_name(d->cfg.be_suppress.policy), u->node,
	       u->non_be, u->be, o->system, o->budget, o->cpus, o->quota_us,
	       o->growth_limited ? " (growth limited)" : "");
}

/* Deltas against the last sample into the result. */
static void compute(struct np_daemon *d, uint64_t busy, uint64_t total,
		    int ncpu)
{
	uint64_t dt = total - d->suppress.total, db = busy - d->suppress.busy;
	long hz = sysconf(_SC_CLK_TCK);
	struct np_suppress_in in = {0};
	struct np_suppress_out o;
	struct np_pools p;
	np_cpuset online;
	char err[256];

	/* ticks over all CPUs -> the period's length in microseconds */
	uint64_t elapsed = dt * 1000000u / (uint64_t)(hz > 0 ? hz : 100) /
			   (uint64_t)ncpu;
	in.u.node = (int64_t)(db * 1000u * (uint64_t)ncpu / dt);
	workload_usage(d, elapsed, &in.u);
	np_state_pools(&d->st, &p);
	np_cpuset_andnot(&online, &d->topo->online, &d->st.offline);
	in.capacity = np_cpuset_count(&online);
	in.pool = np_cpuset_count(&p.be);
	in.threshold = d->cfg.be_suppress.threshold;
	in.min_cpus = d->cfg.be_suppress.min_cpus < in.capacity
			  ? d->cfg.be_suppress.min_cpus
			  : in.capacity;
	if (d->suppress.valid) {
		in.prev_cpus = d->suppress.out.cpus;
		in.prev_quota_us = d->suppress.out.quota_us;
	}
	/* a usage above what the node can give (a counter that jumped) is
	 * cut to it: the engine refuses garbage */
	int64_t *use[] = {&in.u.node, &in.u.non_be, &in.u.be};
	for (size_t k = 0; k < sizeof(use) / sizeof(use[0]); k++)
		if (*use[k] > (int64_t)in.capacity * 1000)
			*use[k] = (int64_t)in.capacity * 1000;
	if (np_suppress_compute(&in, &o, err, sizeof(err))) {
		if (!d->suppress.said)
			np_log(LOG_WARNING,
			       "BE suppress: sample not used: %s", err);
		d->suppress.said = true;
		return;
	}
	d->suppress.said = false;
	log_change(d, &in.u, &o);
	d->suppress.u = in.u;
	d->suppress.out = o;
	d->suppress.valid = true;
}

void np_daemon_suppress_sample(struct np_daemon *d)
{
	_cleanup_free_ char *txt = NULL;
	uint64_t busy, total, now = np_daemon_now_us();
	char why[128];
	int ncpu, r;

	if (d->cfg.be_suppress.policy == NP_SUPPRESS_NONE)
		return;
	/* once a period (cycles run sooner on events) */
	if (d->suppress.have_stat &&
	    now - d->suppress.sample_us <
		(uint64_t)d->cfg.reconcile_period_ms * 900u)
		return;
	if ((r = np_read_at(AT_FDCWD, d->cfg.proc_stat_file, 0, 1 << 20, &txt,
			    NULL)) ||
	    (r = parse_stat(txt, &busy, &total, &ncpu, why, sizeof(why)))) {
		if (!d->suppress.said)
			np_log(LOG_WARNING, "BE suppress: %s: %s",
			       d->cfg.proc_stat_file,
			       r == -EINVAL ? why : strerror(-r));
		d->suppress.said = true;
		return;
	}
	/* the file did not move (or went back): no period to measure */
	if (d->suppress.have_stat && total > d->suppress.total &&
	    busy >= d->suppress.busy && ncpu == d->suppress.ncpu)
		compute(d, busy, total, ncpu);
	else if (d->suppress.have_stat && total == d->suppress.total)
		return; /* keep the last sample to diff against */
	else
		workload_usage(d, 0, &(struct np_suppress_usage){0});
	if (!d->suppress.have_stat)
		np_log(LOG_INFO, "BE suppress (%s): first sample of %s taken",
		       np_suppress_policy_name(d->cfg.be_suppress.policy),
		       d->cfg.proc_stat_file);
	d->suppress.samples++;
	d->suppress.have_stat = true;
	d->suppress.busy = busy;
	d->suppress.total = total;
	d->suppress.ncpu = ncpu;
	d->suppress.sample_us = now;
}

void np_daemon_suppress_pool(struct np_daemon *d, struct np_pools *p)
{
	np_cpuset be;

	if (d->cfg.be_suppress.policy != NP_SUPPRESS_CPUSET ||
	    !d->suppress.valid || np_cpuset_empty(&p->be))
		return;
	if (np_suppress_pick(d->topo, p, d->suppress.out.cpus, &be) ||
	    np_cpuset_empty(&be))
		return; /* out of memory: the whole pool this cycle */
	p->be = be;
}

int np_daemon_suppress_quota(struct np_daemon *d)
{
	int nbe = 0, writes = 0;
	int64_t each;

	if (d->cfg.be_suppress.policy != NP_SUPPRESS_CFS_QUOTA ||
	    !d->suppress.valid || !d->enf || !d->enf->ops->set_cpu_max)
		return 0;
	if (!d->suppress.cpu_enabled) {
		char err[512];
		/* cpu.max exists below the parent once +cpu is there */
		if (!d->enf->ops->fake(d->enf) &&
		    d->enf->ops->enable_controller(d->enf, "cpu", err,
						   sizeof(err)))
			np_log(LOG_WARNING, "BE suppress (cfsQuota): %s", err);
		d->suppress.cpu_enabled = true;
	}
	for (int i = 0; i < d->st.nworkloads; i++)
		nbe += d->st.w[i]->qos_class == NP_QOS_BE &&
		       !d->st.w[i]->req.unit && d->st.w[i]->req.cgroup;
	if (!nbe)
		return 0;
	/* Koordinator caps the BE pods' common parent; here each BE
	 * workload has its own cgroup: the budget is split equally */
	each = d->suppress.out.quota_us / nbe;
	if (each < 1000)
		each = 1000;
	for (int i = 0; i < d->st.nworkloads; i++) {
		const struct np_workload_alloc *a = d->st.w[i];
		struct np_wl_meta *m = np_daemon_meta_of(a);
		char err[512];
		if (a->qos_class != NP_QOS_BE || a->req.unit || !a->req.cgroup ||
		    !m || m->cpu_max_us == each)
			continue;
		m->cpu_max_us = each; /* a failure is retried when it changes */
		if (d->enf->ops->set_cpu_max(d->enf, a->req.cgroup, each,
					     NP_SUPPRESS_CFS_PERIOD_US, err,
					     sizeof(err)) < 0)
			np_log(LOG_WARNING, "BE suppress (cfsQuota): %s", err);
		else
			writes++;
	}
	return writes;
}
