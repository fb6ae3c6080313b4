// SPDX-License-Identifier: Apache-2.0
/*
 * What verification's findings lead to. Verification only reports; here the
 * daemon decides, per the configuration, and asks the enforcer:
 *   - ran outside / a task's mask outside its set: the cpuset is rewritten
 *     (logged as drift when the cgroup no longer holds what it should);
 *   - intrusions on exclusive CPUs: reported; with verify.on_intrusion =
 *     "partition" the workload becomes an isolated cpuset partition (an
 *     allocation change, saved and applied by the next cycle);
 *   - memory outside its nodes or remote hinting faults: reported; with
 *     verify.on_remote_memory = "migrate" its pages are migrated, at most
 *     once per verify.migrate_interval_s.
 */
#include "daemon/daemon_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A hand-written cpuset seen first by the counters, before the drift check
 * of the next cycle: it is drift all the same, logged and counted as such
 * (read uncached: the cycle's cached copy may predate the write). */
static void note_drift(struct np_daemon *d, const struct np_finding *f)
{
	struct np_cgroup_state *st = malloc(sizeof(*st));
	char err[256];

	if (!st)
		return;
	if (!d->enf->ops->inspect(d->enf, NP_ENF_MANAGED, f->cgroup, st, err,
				  sizeof(err)) &&
	    (!np_cpuset_equal(&st->cpus, &f->cpus) || st->mems != f->mems))
		np_daemon_drift(d, f->cgroup, &st->cpus, &f->cpus,
				" (found by verification)");
	free(st);
}

/* Rewrite one workload's cpuset files with what it should have. */
static void rewrite(struct np_daemon *d, const struct np_finding *f)
{
	char err[1024], *cs;
	int r;

	note_drift(d, f);
	cs = np_cpuset_str(&f->cpus);
	r = d->enf->ops->set_cpuset(d->enf, NP_ENF_MANAGED, f->cgroup, &f->cpus,
				    &f->mems, err, sizeof(err));
	if (r < 0)
		np_log(LOG_ERR, "verify: %s: rewriting cpuset of %s: %s",
		       f->what, f->cgroup, err);
	else
		np_log(LOG_WARNING, "verify: %s; cpuset.cpus of %s rewritten "
		       "to %s", f->what, f->cgroup, cs ? cs : "?");
	free(cs);
	np_verify_count_action(d->verify, NP_VERIFY_REWRITE);
}

static bool all_exclusive(const struct np_workload_alloc *a)
{
	for (int c = 0; c < a->ncontainers; c++)
		if (!a->c[c].exclusive)
			return false;
	return true;
}

static void make_partition(struct np_daemon *d, const struct np_finding *f)
{
	int i = np_state_find(&d->st, f->workload);
	struct np_workload_alloc *a;

	if (i < 0)
		return;
	a = d->st.w[i];
	/* a unit's cgroup is systemd's; a partition beside unit workloads
	 * would leave them the reserved CPUs: reported only */
	if (a->req.partition || a->req.unit || a->req.container_id ||
	    !all_exclusive(a) ||
	    (d->enf && d->enf->no_partitions) ||
	    np_daemon_partition_unit_clash(d, true, false))
		return;
	a->req.partition = true;
	a->partition_by_verify = true; /* its spec file still says none */
	d->dirty = true;
	np_verify_count_action(d->verify, NP_VERIFY_PARTITIONED);
	np_log(LOG_WARNING,
	       "verify: %s becomes an isolated cpuset partition "
	       "(verify.on_intrusion = \"partition\")",
	       a->req.name);
}

static void migrate(struct np_daemon *d, const struct np_finding *f)
{
	struct np_wl_meta *m = np_daemon_meta_find(d, f->workload);
	struct np_migrate_result res;
	np_nodemask from = d->topo->numa_mask & ~f->mems;
	time_t now = time(NULL);
	char err[512];
	int r;

	if (!m || now - m->last_migrate <
			  (time_t)d->cfg.verify.migrate_interval_s)
		return;
	m->last_migrate = now;
	r = d->enf->ops->migrate_memory(d->enf, f->cgroup, from, f->mems, &res,
					err, sizeof(err));
	np_verify_count_action(d->verify, NP_VERIFY_MIGRATION);
	if (r < 0)
		np_log(LOG_ERR, "verify: migrating %s's pages: %s", f->workload,
		       err);
	else
		np_log(LOG_WARNING,
		       "verify: migrated %s's pages to its memory nodes "
		       "(%d task(s), %ld page(s) not moved; "
		       "verify.on_remote_memory = \"migrate\")",
		       f->workload, res.pids_done, (long)res.pages_not_moved);
}

void np_daemon_act_on_findings(struct np_daemon *d,
			       const struct np_findings *fs)
{
	const struct np_verify_config *vc = &d->cfg.verify;

	for (int i = 0; i < fs->n; i++) {
		const struct np_finding *f = &fs->f[i];
		switch (f->kind) {
		case NP_FIND_RAN_OUTSIDE:
		case NP_FIND_AUDIT_OUTSIDE:
			rewrite(d, f);
			break;
		case NP_FIND_INTRUSION:
			np_log(LOG_WARNING, "verify: %s", f->what);
			if (vc->on_intrusion == NP_ACT_PARTITION)
				make_partition(d, f);
			break;
		case NP_FIND_NUMA_BALANCER:
			np_log(LOG_NOTICE, "verify: %s", f->what);
			break;
		case NP_FIND_OUTSIDE_MEMS:
		case NP_FIND_REMOTE_FAULTS:
			np_log(LOG_WARNING, "verify: %s", f->what);
			/* once per workload and cycle: after the last memory
			 * finding of this workload */
			if (vc->on_remote_memory == NP_ACT_MIGRATE &&
			    (i + 1 == fs->n ||
			     fs->f[i + 1].kind != NP_FIND_REMOTE_FAULTS ||
			     strcmp(fs->f[i + 1].workload, f->workload)))
				migrate(d, f);
			break;
		}
	}
}
