// SPDX-License-Identifier: Apache-2.0
/*
 * Collect: CPU hotplug. The online CPU list (config.cpu_online_file) is read
 * every cycle. A CPU of the topology that is offline leaves every pool, so
 * nothing new is placed on it; an exclusive workload holding it is degraded:
 * with on_cpu_offline "report" it keeps the CPU (the kernel runs it on the
 * rest of its set) and has it again when it returns; with "replace" it is
 * re-placed on online CPUs when there is room, else stays degraded. A CPU
 * that was offline when numaplaced started, and whose place no saved state
 * knew, has none in the topology: it is not used until a restart (said).
 *
 * At start, CPUs offline now get back the place the saved state knows for
 * them (Linux drops an offline CPU's topology from sysfs), so that a restart
 * while a CPU is offline loads the state instead of refusing it.
 */
#include "daemon/daemon_internal.h"
#include "basic/fileio.h"
#include "numaplace/cleanup.h"
#include "numaplace/state_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

int np_daemon_restore_offline(struct np_daemon *d, unsigned flags, char *err,
			      size_t errlen)
{
	_cleanup_free_ struct np_cpu_desc *fix = NULL;
	_cleanup_free_ char *list = NULL;
	struct np_topology *t;
	np_cpuset cpus;
	int nfix, r;

	if (flags & NP_DAEMON_RESET_STATE)
		return 0;
	if ((r = np_statefile_offline_places(d->cfg.state_dir, d->topo, &fix,
					     &nfix)) ||
	    !nfix)
		return r;
	np_cpuset_zero(&cpus);
	for (int i = 0; i < nfix; i++)
		np_cpuset_set(&cpus, fix[i].cpu);
	list = np_cpuset_str(&cpus);
	r = np_topology_restore(d->topo, fix, nfix, &t, err, errlen);
	if (r == -EINVAL) {
		np_log(LOG_WARNING,
		       "CPU(s) %s are offline; the place the saved state gives "
		       "them does not fit this machine (%s): the state is "
		       "checked against the topology as it is",
		       strempty(list), err);
		err[0] = '\0';
		return 0;
	}
	if (r)
		return r;
	np_topology_free(d->topo);
	d->topo = t;
	np_log(LOG_INFO,
	       "CPU(s) %s are offline: their core, socket and NUMA node come "
	       "from the saved state",
	       strempty(list));
	return 0;
}

/* The online CPUs; an empty or unreadable list is an error (a list being
 * rewritten is not "every CPU went offline"). */
static int read_online(const char *path, np_cpuset *out, char *why,
		       size_t len)
{
	_cleanup_free_ char *buf = NULL;
	int r = np_read_at(AT_FDCWD, path, 0, 1 << 16, &buf, NULL);

	if (r) {
		snprintf(why, len, "%s", strerror(-r));
		return r;
	}
	if ((r = np_cpuset_parse(out, buf, why, len)))
		return r;
	if (np_cpuset_empty(out)) {
		snprintf(why, len, "no CPU is listed");
		return -EINVAL;
	}
	return 0;
}

/* Re-place workload name off its offline CPUs (on_cpu_offline "replace");
 * when there is no room it keeps its set. */
static void replace(struct np_daemon *d, const char *name)
{
	int i = np_state_find(&d->st, name), r;
	_cleanup_free_ char *was = NULL, *now = NULL;
	struct np_workload_alloc keep;
	struct np_decision dec;
	np_cpuset old, off;
	char err[512];

	if (i < 0 || !np_state_degraded(&d->st, i, &off))
		return;
	np_workload_exclusive_cpus(d->st.w[i], &old);
	was = np_cpuset_str(&old);
	if (np_release_keep(&d->st, i, &keep))
		return;
	r = np_admit(&d->st, &keep.req, &dec, err, sizeof(err));
	if (r || !dec.admitted) {
		if (np_state_insert(&d->st, i, &keep)) {
			/* out of memory: nothing sane is left to do */
			np_log(LOG_ERR, "%s: lost while re-placing it", name);
			np_workload_alloc_free(&keep);
			d->dirty = true;
			return;
		}
		np_log(LOG_WARNING,
		       "%s not re-placed (%s): it stays degraded on CPUs %s",
		       name, r ? err : dec.reason, strempty(was));
		return;
	}
	i = np_state_find(&d->st, name);
	/* the same workload, placed anew: it keeps its record */
	d->st.w[i]->partition_by_verify = keep.partition_by_verify;
	np_workload_rec_move(d->st.w[i], &keep);
	np_workload_alloc_free(&keep);
	np_workload_exclusive_cpus(d->st.w[i], &old);
	now = np_cpuset_str(&old);
	d->dirty = true;
	d->n.replaced++;
	np_log(LOG_WARNING, "re-placed %s off offline CPUs: cpuset %s (was %s)",
	       name, strempty(now), strempty(was));
}

/* Say what a change of the offline set does to each exclusive workload. */
static void workloads_changed(struct np_daemon *d, const np_cpuset *went,
			      const np_cpuset *back)
{
	int n = d->st.nworkloads;
	char (*names)[NP_NAME_MAX] = calloc((size_t)n + 1, sizeof(*names));
	int k = 0;

	for (int i = 0; i < n; i++) {
		np_cpuset excl, off;
		_cleanup_free_ char *l = NULL;
		bool deg = np_state_degraded(&d->st, i, &off);
		np_workload_exclusive_cpus(d->st.w[i], &excl);
		if (deg && np_cpuset_intersects(&excl, went)) {
			l = np_cpuset_str(&off);
			np_log(LOG_WARNING,
			       "%s is degraded: its exclusive CPU(s) %s are "
			       "offline%s",
			       d->st.w[i]->req.name, strempty(l),
			       d->cfg.on_cpu_offline == NP_OFFLINE_REPORT
				       ? "; it keeps them (on_cpu_offline "
					 "\"report\")"
				       : "");
			if (d->cfg.on_cpu_offline == NP_OFFLINE_REPLACE &&
			    names)
				snprintf(names[k++], NP_NAME_MAX, "%s",
					 d->st.w[i]->req.name);
		} else if (!deg && np_cpuset_intersects(&excl, back)) {
			np_log(LOG_INFO, "%s has all its CPUs online again",
			       d->st.w[i]->req.name);
		}
	}
	for (int j = 0; j < k; j++)
		replace(d, names[j]);
	free(names);
}

void np_daemon_hotplug(struct np_daemon *d)
{
	_cleanup_free_ char *a = NULL, *b = NULL;
	np_cpuset online, off, went, back, unknown;
	char why[256];

	if (!d->cfg.cpu_online_file[0])
		return;
	if (read_online(d->cfg.cpu_online_file, &online, why, sizeof(why))) {
		if (!d->online_unreadable)
			np_log(LOG_WARNING,
			       "%s: %s: CPU hotplug is not followed until it "
			       "reads",
			       d->cfg.cpu_online_file, why);
		d->online_unreadable = true;
		return;
	}
	if (d->online_unreadable)
		np_log(LOG_INFO, "%s reads again", d->cfg.cpu_online_file);
	d->online_unreadable = false;
	np_cpuset_and(&unknown, &online, &d->topo->offline);
	if (!np_cpuset_equal(&unknown, &d->unknown_online) &&
	    !np_cpuset_empty(&unknown)) {
		a = np_cpuset_str(&unknown);
		np_log(LOG_WARNING,
		       "CPU(s) %s are online, but were offline when numaplaced "
		       "started and no saved state knew their place: they are "
		       "not used until numaplaced restarts",
		       strempty(a));
		free(a);
		a = NULL;
	}
	d->unknown_online = unknown;
	np_cpuset_andnot(&off, &d->topo->online, &online);
	if (np_cpuset_equal(&off, &d->st.offline))
		return;
	np_cpuset_andnot(&went, &off, &d->st.offline);
	np_cpuset_andnot(&back, &d->st.offline, &off);
	d->st.offline = off;
	d->n.hotplug++;
	a = np_cpuset_str(&went);
	b = np_cpuset_str(&back);
	np_log(LOG_WARNING, "CPU hotplug: offline now %s, online again %s",
	       np_cpuset_empty(&went) ? "none" : strempty(a),
	       np_cpuset_empty(&back) ? "none" : strempty(b));
	workloads_changed(d, &went, &back);
}
