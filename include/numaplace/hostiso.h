/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host isolation: exclusive CPUs kept free of the host's own work. Besides
 * the cgroup enforcer, this is the one place that changes the system:
 *
 *   /proc/irq/N/smp_affinity_list        every IRQ line
 *   /proc/irq/default_smp_affinity       IRQs registered later
 *   /sys/devices/virtual/workqueue/cpumask  unbound workqueues
 *   sched_setaffinity() of kernel threads  PF_KTHREAD, not per-CPU
 *                                          (no PF_NO_SETAFFINITY, allowed
 *                                          on more than one CPU)
 *
 * Each of them gets its original set minus the isolated CPUs (the
 * housekeeping CPUs, online minus isolated, when nothing online is left),
 * so that a smaller isolated set gives CPUs back. Before the first change
 * of an item, its original is recorded in RUNTIME_DIR/hostiso.json (written
 * atomically and durably; a tmpfs, gone at a reboot as the affinities
 * are); restore writes the originals back and removes
 * the file. A file left by a crash is loaded before anything is written,
 * so originals are never replaced by values numaplace wrote itself.
 *
 * Managed IRQs (the kernel spreads them itself: writing their affinity
 * fails with EIO) and IRQs or kernel threads that refuse otherwise are
 * reported, not fatal. Every call returns 0 or a negative errno with a
 * message naming the file and the value in err.
 */
#ifndef NUMAPLACE_HOSTISO_H
#define NUMAPLACE_HOSTISO_H

#include "numaplace/cpuset.h"

#include <stdbool.h>
#include <stddef.h>

#define NP_HOSTISO_FILE "hostiso.json"
#define NP_HOSTISO_MAX_FAILED 32

struct np_hostiso;

struct np_hostiso_opts {
	/* "" or NULL: the real /proc and /sys; tests give a directory that
	 * mirrors proc/irq/N/smp_affinity_list, proc/irq/default_smp_affinity,
	 * sys/devices/virtual/workqueue/cpumask and proc/PID/{stat,status}. */
	const char *root;
	/* Where hostiso.json lives (the daemon's runtime_dir: the record
	 * lasts as long as the affinities it undoes, until a reboot). */
	const char *runtime_dir;
	/* Where an older numaplaced kept it (the daemon's state_dir; NULL:
	 * none): one found there is moved to runtime_dir at the first load. */
	const char *state_dir;
	/* Kernel threads get their CPUs through this (0 or -errno). NULL:
	 * sched_setaffinity(2) under the real root; under a test root,
	 * kernel threads are then left alone. */
	int (*set_affinity)(void *ctx, int pid, const np_cpuset *cpus);
	void *ctx;
};

/* An IRQ (what = 'i') or a kernel thread ('k', id is the pid) whose
 * affinity could not be set: err is the negative errno. */
struct np_hostiso_failure {
	char what;
	int id;
	int err;
};

struct np_hostiso_report {
	int irqs;          /* smp_affinity_list files written */
	int kthreads;      /* kernel threads given new CPUs */
	bool default_irq;  /* default_smp_affinity written */
	bool workqueue;    /* the unbound workqueue cpumask written */
	int writes;        /* all of the above */
	int skipped;       /* restore: IRQs or threads that are gone */
	int owed;          /* restore: threads given back without CPUs that
			    * are offline (the kernel leaves those out): kept
			    * recorded, given back again by the next restore */
	int nfailed;       /* failures, the first NP_HOSTISO_MAX_FAILED kept */
	struct np_hostiso_failure failed[NP_HOSTISO_MAX_FAILED];
};

int np_hostiso_open(struct np_hostiso **out, const struct np_hostiso_opts *o,
		    char *err, size_t errlen);
/* Frees the handle; the system and the save file stay as they are. */
void np_hostiso_close(struct np_hostiso *h);

/*
 * Read hostiso.json (left by a crash or an unclean stop): 1 when it holds
 * originals (now known to h: apply keeps them, restore writes them), 0
 * when there is none, -EINVAL naming the field when it is not valid.
 * One read from state_dir (an upgrade) is written to runtime_dir, then
 * removed from state_dir; beside one in runtime_dir, which wins, it is
 * removed (-errno naming the file when either cannot be done, h then
 * knowing nothing). apply and restore load it themselves when not done
 * yet.
 */
int np_hostiso_load(struct np_hostiso *h, char *err, size_t errlen);
/* Originals are recorded (loaded or written by an apply). */
bool np_hostiso_saved(const struct np_hostiso *h);

/*
 * Move IRQs, default_smp_affinity, the unbound workqueue cpumask and
 * movable kernel threads off isolated. -EINVAL when isolated covers
 * every online CPU (nothing would be left for them). Writes only what
 * differs from what the files hold: a second apply with the same set
 * writes nothing (rep->writes == 0).
 */
int np_hostiso_apply(struct np_hostiso *h, const np_cpuset *isolated,
		     const np_cpuset *online, struct np_hostiso_report *rep,
		     char *err, size_t errlen);

/*
 * Give back the recorded originals (IRQs and threads that are gone are
 * skipped, those that refuse are reported), then remove hostiso.json.
 * Nothing recorded: 0, nothing written. When default_smp_affinity or the
 * workqueue cpumask cannot be written back the file is kept and the
 * error returned. A kernel thread whose original has CPUs that are
 * offline gets the others (sched_setaffinity() leaves offline ones out,
 * and onlining a CPU gives it to no task of the root cgroup): it stays
 * recorded (rep->owed), the file then holding only such threads, and a
 * restore once they are online gives them the rest.
 */
int np_hostiso_restore(struct np_hostiso *h, struct np_hostiso_report *rep,
		       char *err, size_t errlen);

/* For the log: "3 irqs, workqueue, default irq affinity, 2 kthreads" +
 * what (" moved off CPUs 2-3") + "; not movable: irq 0 (Input/output
 * error)". */
void np_hostiso_report_str(const struct np_hostiso_report *rep,
			   const char *what, char *buf, size_t len);

#endif
