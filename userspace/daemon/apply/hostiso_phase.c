// SPDX-License-Identifier: Apache-2.0
/*
 * Host isolation in the cycle (numaplace/hostiso.h): the CPUs of the
 * workloads config.host_isolation names ("partition": those with
 * isolation "partition"; "exclusive": every exclusive container; "off":
 * none) are kept free of IRQs, unbound workqueues and movable kernel
 * threads. Applied when that set changes (an idle cycle reads and writes
 * nothing), given back when it becomes empty and at a clean stop. A
 * hostiso.json left by a crash is adopted: its originals are kept, and
 * given back once no workload needs isolation.
 */
#include "daemon/daemon_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void isolated_cpus(struct np_daemon *d, np_cpuset *out)
{
	np_cpuset x;

	np_cpuset_zero(out);
	if (d->cfg.host_isolation == NP_HOSTISO_OFF)
		return;
	for (int i = 0; i < d->st.nworkloads; i++) {
		const struct np_workload_alloc *a = d->st.w[i];
		if (d->cfg.host_isolation == NP_HOSTISO_PARTITION &&
		    !a->req.partition)
			continue;
		/* a container whose rule of oci_hook.policy does not give
		 * it host isolation keeps the host's IRQs and threads */
		if (!np_daemon_container_hostiso(d, a))
			continue;
		np_workload_exclusive_cpus(a, &x);
		np_cpuset_or(out, out, &x);
	}
}

/* The handle, opened once; false when host isolation is not available
 * (said once). */
static bool ready(struct np_daemon *d)
{
	struct np_hostiso_opts o = {.root = d->hostiso_root,
				    .runtime_dir = d->cfg.runtime_dir,
				    .state_dir = d->cfg.state_dir};
	char err[1024];
	int r;

	if (d->hostiso || d->hostiso_off)
		return !d->hostiso_off;
	/* a test's fake cgroup tree: the real /proc/irq is not the test's */
	if (!d->hostiso_root[0] && d->enf->ops->fake &&
	    d->enf->ops->fake(d->enf)) {
		np_log(LOG_INFO, "host isolation: off under a fake cgroup root");
		d->hostiso_off = true;
		return false;
	}
	if ((r = np_daemon_runtime_dir(d, err, sizeof(err))) ||
	    (r = np_hostiso_open(&d->hostiso, &o, err, sizeof(err)))) {
		np_log(LOG_ERR, "host isolation: %s (off)", err);
		d->hostiso_off = true;
		return false;
	}
	r = np_hostiso_load(d->hostiso, err, sizeof(err));
	if (r < 0)
		np_log(LOG_ERR, "host isolation: %s (nothing is changed until "
				"the file is fixed or removed)",
		       err);
	else if (r > 0)
		np_log(LOG_WARNING,
		       "host isolation: originals of an earlier run found in "
		       "%s/%s: kept, and given back once no workload needs "
		       "isolation",
		       d->cfg.runtime_dir, NP_HOSTISO_FILE);
	return true;
}

static void log_change(struct np_daemon *d, bool restore)
{
	char what[2048], verb[1024], *cpus = np_cpuset_str(&d->hostiso_last.cpus);

	if (restore)
		snprintf(verb, sizeof(verb), " given back");
	else
		snprintf(verb, sizeof(verb), " moved off CPUs %s",
			 cpus ? cpus : "?");
	np_hostiso_report_str(&d->hostiso_last.rep, verb, what, sizeof(what));
	if (d->hostiso_last.rc)
		np_log(LOG_ERR, "host isolation: %s", d->hostiso_last.error);
	else if (!restore || d->hostiso_last.rep.writes)
		np_log(d->hostiso_last.rep.nfailed ? LOG_WARNING : LOG_INFO,
		       "host isolation: %s", what);
	free(cpus);
}

#define HOSTISO_RETRY_S 60

void np_daemon_hostiso_phase(struct np_daemon *d)
{
	np_cpuset want;
	bool restore;

	isolated_cpus(d, &want);
	if (!ready(d))
		return;
	/* no change: nothing read, nothing written; a change that failed
	 * (a write refused, a save file not understood) is tried again once
	 * a minute. A CPU that came online is a change: kernel threads were
	 * given only the online CPUs of what they are owed. */
	if (d->hostiso_last.done && np_cpuset_equal(&want, &d->hostiso_last.cpus) &&
	    np_cpuset_equal(&d->st.offline, &d->hostiso_last.offline) &&
	    (d->hostiso_last.rc == 0 ||
	     time(NULL) - d->hostiso_last.time < HOSTISO_RETRY_S))
		return;
	restore = np_cpuset_empty(&want);
	d->hostiso_last.done = true;
	d->hostiso_last.cpus = want;
	d->hostiso_last.offline = d->st.offline;
	d->hostiso_last.time = time(NULL);
	d->hostiso_last.error[0] = '\0';
	d->hostiso_last.rc =
		restore ? np_hostiso_restore(d->hostiso, &d->hostiso_last.rep,
					     d->hostiso_last.error,
					     sizeof(d->hostiso_last.error))
			: np_hostiso_apply(d->hostiso, &want, &d->topo->online,
					   &d->hostiso_last.rep,
					   d->hostiso_last.error,
					   sizeof(d->hostiso_last.error));
	log_change(d, restore);
}

void np_daemon_hostiso_shutdown(struct np_daemon *d)
{
	if (!d->hostiso || !np_hostiso_saved(d->hostiso))
		return; /* nothing recorded (or a save file not understood:
			   left alone) */
	np_cpuset_zero(&d->hostiso_last.cpus);
	d->hostiso_last.error[0] = '\0';
	d->hostiso_last.rc = np_hostiso_restore(d->hostiso, &d->hostiso_last.rep,
						d->hostiso_last.error,
						sizeof(d->hostiso_last.error));
	log_change(d, true);
}

json_t *np_daemon_hostiso_status(const struct np_daemon *d)
{
	const struct np_hostiso_report *rep = &d->hostiso_last.rep;
	char *cpus = np_cpuset_str(&d->hostiso_last.cpus);
	json_t *failed = json_array(), *j;

	for (int i = 0; i < rep->nfailed && i < NP_HOSTISO_MAX_FAILED; i++) {
		char e[64];
		json_array_append_new(
			failed, json_pack("{s:s,s:i,s:s}", "kind",
					  rep->failed[i].what == 'i' ? "irq"
								     : "kthread",
					  "id", rep->failed[i].id, "reason",
					  strerror_r(-rep->failed[i].err, e,
						     sizeof(e))));
	}
	j = json_pack("{s:s,s:b,s:s?,s:I,s:i,s:i,s:b,s:b,s:i,s:o,s:s?}",
		      "mode", np_host_isolation_name(d->cfg.host_isolation),
		      "active", !d->hostiso_off, "cpus", cpus, "time",
		      (json_int_t)d->hostiso_last.time, "irqs", rep->irqs,
		      "kthreads", rep->kthreads, "workqueue", rep->workqueue,
		      "default_irq_affinity", rep->default_irq, "not_movable",
		      rep->nfailed, "failed", failed, "error",
		      d->hostiso_last.rc ? d->hostiso_last.error : NULL);
	free(cpus);
	return j;
}
