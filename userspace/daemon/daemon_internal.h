/* SPDX-License-Identifier: Apache-2.0 */
/*
 * numaplaced, one module (prefix np_daemon_) whose files are grouped by
 * the stage of the cycle they serve, one folder each:
 *
 *   daemon.c   the loop (timer, signals, inotify, control socket): the
 *              only caller of the cycle (apply/reconcile.c), each period,
 *              on events, and when requests or defrag ask for one
 *              (cycle_due; an answer that waits for it is held until it
 *              has run); setup, reload and shutdown; driver.c, config*.c
 *   collect/   what changed: spec files read and queued for decide
 *              (specdir.c), CPU hotplug (hotplug.c), BE usage samples
 *              (suppress.c), whether the managed cgroups can be skipped
 *              (quiet.c)
 *   decide/    admit/release through the engine (pure): workloads.c, the
 *              daemon's record of each workload (held by the workload in
 *              the engine's state) and the notes about spec files
 *              (workload_record.c, called by every stage, calling none), the queued spec files (specs.c), the kinds of workload
 *              (containers*.c), resize and defrag (workload_resize.c,
 *              workload_defrag.c)
 *   persist/   persist.c: the state file, before anything is applied or
 *              acknowledged
 *   apply/     reconcile.c: the desired cpusets, handed to the enforcer
 *              (numaplace/enforcer.h), the only writer of cgroup files;
 *              units.c (systemd units), hostiso_phase.c (host isolation)
 *   observe/   reconcile.c reads back through the enforcer, drift.c says
 *              and counts a cgroup found not as written; verification
 *              (numaplace/verify.h) returns findings, findings.c decides
 *              what they lead to (via the enforcer) for the next cycle
 *   serve/     what others ask and read: the control socket
 *              (ctl_server.c, requests.c, and its client ctl_client.c),
 *              /metrics (metrics*.c), placement and export files
 */
#ifndef NUMAPLACE_DAEMON_INTERNAL_H
#define NUMAPLACE_DAEMON_INTERNAL_H

#include "basic/log.h"
#include "numaplace/daemon.h"

#include <stdint.h>
#include <time.h>

/* s, or "" for NULL (systemd's strempty()) */
static inline const char *strempty(const char *s)
{
	return s ? s : "";
}

/* workload_record.c: the daemon's record of each workload, held by its
 * allocation in d->st (NULL: none, or not admitted); the notes about
 * spec files */
bool np_daemon_set_str(char **dst, const char *src);
struct np_wl_meta *np_daemon_meta_of(const struct np_workload_alloc *a);
struct np_wl_meta *np_daemon_meta_find(struct np_daemon *d, const char *name);
/* The record of admitted workload name, made if it has none; NULL when
 * name is not admitted or memory ran out. Freed with the workload
 * (np_release, np_daemon_release). */
struct np_wl_meta *np_daemon_meta_add(struct np_daemon *d, const char *name);
struct np_spec_note *np_daemon_note_find(struct np_daemon *d, const char *file);
struct np_spec_note *np_daemon_note_set(struct np_daemon *d, const char *file,
				 const char *canon);
void np_daemon_note_del(struct np_daemon *d, const char *file);
/* An invalid or refused spec file, said once per content and reason
 * (spec NULL: it does not parse) */
void np_daemon_note_invalid(struct np_daemon *d, const char *path,
			    const json_t *spec, const char *err);
/* workloads.c: the decisions of one change. Admit one spec (spec_file NULL: from the socket): decided, saved, its
 * cgroup prepared; 0 with dec->admitted false when rejected. */
int np_daemon_admit(struct np_daemon *d, const json_t *spec,
		    const char *spec_file, struct np_decision *dec, char *err,
		    size_t errlen);
/* Release a workload: saved, then its cgroups removed (busy ones stay on
 * the shared pool). -ENOENT: unknown. */
int np_daemon_release(struct np_daemon *d, const char *name, const char *why);
/* workload_resize.c: in-place resize of a socket workload's exclusive
 * container (container NULL: its only one): decided, saved, applied by the next
 * reconcile; 0 with dec->admitted false when refused (nothing changed),
 * -ENOENT / -EINVAL with err. A spec file's workload is refused (its file
 * says its size). */
int np_daemon_resize(struct np_daemon *d, const char *name,
		     const char *container, int cpus, struct np_decision *dec,
		     char *err, size_t errlen);
/* A changed spec file (canon: its canonical text) whose only change is
 * the CPU count of exclusive containers: resized in place, or refused
 * with the old allocation kept and the reason noted once. 1: handled;
 * 0: not such a change (release and admit it). */
int np_daemon_resize_spec(struct np_daemon *d, const json_t *spec,
			  const char *path, const char *canon);

/* driver.c: the enforcer of config.cgroup_driver; a clean stop */
int np_daemon_open_enforcer(struct np_daemon *d, char *err, size_t errlen);
/* daemon.c: config.runtime_dir, made (0755) when missing and trusted
 * (basic/trust.h): -errno naming it otherwise. Made only by what writes
 * there (the systemd driver, host isolation). */
int np_daemon_runtime_dir(const struct np_daemon *d, char *err,
			  size_t errlen);
/* A stop that is one half of a restart of numaplaced's own unit (systemd
 * driver: the job systemd runs on it), logged either way: then nothing is
 * given back, as after a crash, and the next start takes over. */
bool np_daemon_stopping_for_restart(struct np_daemon *d);
/* daemon.c: the end of a clean stop (the above, then the two below) */
void np_daemon_stop_cleanly(struct np_daemon *d);
void np_daemon_shutdown_enforcer(struct np_daemon *d);

/* units.c: workloads that are systemd units */
int np_daemon_units_phase(struct np_daemon *d, bool before);
/* A released unit whose CPUs could not be given back: retried each cycle
 * (said: its failure is logged already). */
void np_daemon_unit_left(struct np_daemon *d, const char *unit, bool said);
/* workloads.c: the first admitted workload that is a unit (partition) or
 * a partition (unit); NULL when none. */
const char *np_daemon_partition_unit_clash(const struct np_daemon *d,
					   bool partition, bool unit);
/* At start: units the enforcer keeps originals for whose workload is not
 * in the state (released while down, or the state reset) are given back
 * (through the retry list). */
void np_daemon_stale_units(struct np_daemon *d);
int np_daemon_unit_check(struct np_daemon *d, const struct np_workload_req *w,
			 char *why, size_t len);

/* containers.c: workloads that are OCI containers. Can this one be
 * admitted (its cgroup exists, is not numaplace's or a shared one's, and
 * can hold exclusive CPUs when it asks for them)? 0 or why not. */
int np_daemon_container_check(struct np_daemon *d,
			      const struct np_workload_req *w, char *why,
			      size_t len);
/* A container whose cgroup is a systemd scope's own (runc's systemd
 * driver: cri-containerd-ID.scope) becomes a unit workload too: w->unit
 * set to the scope, whose AllowedCPUs=/AllowedMemoryNodes= numaplaced sets
 * through the bus (units.c). Derived, never saved (the state keeps the
 * container): at admission and at load. 0 or -ENOMEM. */
int np_daemon_container_unit(struct np_daemon *d, struct np_workload_req *w);
/* requests.c: the ops config.socket_read_group may ask (NULL-ended). */
extern const char *const np_daemon_read_ops[];
/* containers_policy.c: who may ask for what (numaplace/oci_policy.h) for
 * a container workload admitted through the socket: bounded by its stated
 * and its cgroup's limits, under the first rule of oci_hook.policy that
 * matches it. 0, or -EPERM with why naming the rule and the values. */
int np_daemon_container_policy(struct np_daemon *d,
			       const struct np_workload_req *w, char *why,
			       size_t len);
/* The same for workload i's container (NULL: its exclusive one) resized
 * to cpus (0 for a workload that is not a container of the socket). */
int np_daemon_container_resize_check(struct np_daemon *d, int i,
				     const char *container, int cpus,
				     char *why, size_t len);
/* Does config.host_isolation apply to a's CPUs? Not for a container whose
 * rule says host_isolation false. */
bool np_daemon_container_hostiso(struct np_daemon *d,
				 const struct np_workload_alloc *a);
/* The workload of an OCI container id, or -1. */
int np_daemon_find_container(const struct np_daemon *d, const char *id);
/* The same workload or container admitted again with the same request:
 * true with its allocation in dec (nothing changes). */
bool np_daemon_admit_again(struct np_daemon *d, const json_t *spec,
			   struct np_decision *dec);

/* hostiso_phase.c: IRQs, workqueues and kernel threads off the CPUs of
 * the workloads config.host_isolation names (applied when that set
 * changes, given back when it becomes empty and at a clean stop) */
void np_daemon_hostiso_phase(struct np_daemon *d);
void np_daemon_hostiso_shutdown(struct np_daemon *d);
json_t *np_daemon_hostiso_status(const struct np_daemon *d);

/* hotplug.c: the online CPUs, read every cycle (pools, degraded or
 * re-placed workloads); at start, the saved place of CPUs offline now */
void np_daemon_hotplug(struct np_daemon *d);
/* BE suppression (config.be_suppress): a new sample of the node's usage
 * once a reconcile period (suppress.c), and the BE pool of p narrowed to
 * the suppressed set (policy cpuset; nothing otherwise). */
void np_daemon_suppress_sample(struct np_daemon *d);
void np_daemon_suppress_pool(struct np_daemon *d, struct np_pools *p);
/* Policy cfsQuota: each BE workload cgroup's cpu.max, the budget shared
 * equally between them; the number of writes. */
int np_daemon_suppress_quota(struct np_daemon *d);
int np_daemon_restore_offline(struct np_daemon *d, unsigned flags, char *err,
			      size_t errlen);

/* metrics_daemon.c: /metrics listening per config (retried), the
 * snapshot published (after each cycle and batch of requests) */
void np_daemon_metrics(struct np_daemon *d);
void np_daemon_metrics_stop(struct np_daemon *d);
json_t *np_daemon_metrics_status(const struct np_daemon *d);

/* export_files.c: the node for the cluster (format "nrt" or
 * "koordinator"; name NULL = config.export.node_name or the host name),
 * and the files config.export names kept written */
json_t *np_daemon_export(struct np_daemon *d, const char *format,
			 const char *name, char *err, size_t errlen);
void np_daemon_export_files(struct np_daemon *d);
json_t *np_daemon_export_status(const struct np_daemon *d);
void np_daemon_export_free(struct np_daemon *d);

/* workload_defrag.c: make room for a rejected admission by moving movable
 * workloads (numaplace/defrag.h) */
void np_daemon_defrag_remember(struct np_daemon *d, const json_t *spec,
			       const char *spec_file,
			       const struct np_decision *dec);
/* config.defrag.auto: moves carried out (saved) and w admitted into the
 * state (dec); false when not (dec unchanged). */
bool np_daemon_defrag_auto(struct np_daemon *d, const struct np_workload_req *w,
			   struct np_decision *dec);
/* After a cycle's writes: pages of moved workloads to their new nodes. */
void np_daemon_defrag_migrate(struct np_daemon *d);
json_t *np_daemon_op_defrag(struct np_daemon *d, const json_t *req);
/* A defrag answer held for the cycle (np_daemon_answer): a spec file's
 * decision, made by that cycle, put in (resp returned; any other answer
 * as it is). */
json_t *np_daemon_defrag_answer(struct np_daemon *d, json_t *resp);

/* quiet.c: may this cycle skip the managed cgroups (offline0: the
 * offline CPUs before its hotplug check)? Consumes the enforcer's
 * events. */
bool np_daemon_quiet_cycle(struct np_daemon *d, const np_cpuset *offline0);
/* After a cycle (quiet: it skipped them; errors0: write errors before it;
 * saves0: saves once its cgroups were gone through). */
void np_daemon_quiet_after(struct np_daemon *d, bool quiet, int r,
			   int writes, uint64_t errors0, uint64_t saves0);
/* reconcile.c: d->left[i] (released, it had tasks) is gone, or empty and
 * removed now: dropped from the list (true). */
bool np_daemon_left_gone(struct np_daemon *d, int i);
/* workloads.c: workloads whose cgroup vanished are released (saved with
 * the cycle's write-ahead save). */
void np_daemon_release_vanished(struct np_daemon *d);

/* persist.c */
int np_daemon_save(struct np_daemon *d);
/* Saves d->dirty_lazy's change, not fdatasynced (a later save's sync
 * covers it). */
int np_daemon_save_lazy(struct np_daemon *d);
void np_daemon_state_close(struct np_daemon *d);
/* placement_files.c: remove a released workload's file. */
void np_daemon_placement_remove(struct np_daemon *d, const char *name);
/* The state's spec origins and pending cgroups; -EINVAL (err) for a spec
 * file outside spec_dir, nothing applied. */
int np_daemon_load_origins(struct np_daemon *d, const json_t *o, char *err,
			   size_t errlen);

/* specdir.c: read the spec files, queue the new and changed ones for
 * decide (d->specq); nothing admitted, saved or written */
int np_daemon_scan_specs(struct np_daemon *d);
/* specs.c: admit the queued spec files (or resize, or refuse), release
 * the workloads of removed ones; the queue emptied */
void np_daemon_decide_specs(struct np_daemon *d);

/* drift.c: a cgroup found not as written (have, want), said and counted */
void np_daemon_drift(struct np_daemon *d, const char *cgroup,
		     const np_cpuset *have, const np_cpuset *want,
		     const char *how);

/* findings.c: what verification found leads to (rewrite, partition,
 * migration), through the enforcer */
void np_daemon_act_on_findings(struct np_daemon *d,
			       const struct np_findings *fs);

/* CLOCK_MONOTONIC in microseconds (the loop's deadlines, the spec scan's
 * budget). */
static inline uint64_t np_daemon_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

#endif
