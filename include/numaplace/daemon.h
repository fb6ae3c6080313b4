/* SPDX-License-Identifier: Apache-2.0 */
/*
 * numaplaced: the node controller. One epoll loop over a timerfd (reconcile
 * period), a signalfd (SIGTERM/SIGINT stop, SIGHUP reload), an inotify
 * watch on the spec directory and the control socket.
 */
#ifndef NUMAPLACE_DAEMON_H
#define NUMAPLACE_DAEMON_H

#include "numaplace/admit.h"
#include "numaplace/cgroup.h"
#include "numaplace/config.h"
#include "numaplace/enforcer.h"
#include "numaplace/hostiso.h"
#include "numaplace/state_journal.h"
#include "numaplace/verify.h"
#include "numaplace/strmap.h"

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define NP_MAX_REJECTIONS 16

struct np_rejection {
	char workload[NP_NAME_MAX];
	char resource[96];
	char reason[512];
	char error_kind[32]; /* the kubelet's kind, "" when it has none */
	time_t time;
};

struct np_counters {
	uint64_t cycles, drift_repaired, admitted, rejected, released;
	uint64_t resized; /* in-place resizes done */
	uint64_t state_saves; /* journal records and compactions written */
	uint64_t write_errors, vanished;
	uint64_t writes; /* cgroup writes and unit changes, all cycles */
	uint64_t hotplug;  /* changes of the offline CPU set */
	uint64_t replaced; /* workloads re-placed off offline CPUs */
	/* cycles that skipped the managed cgroups: nothing had changed */
	uint64_t quiet_cycles;
};

/* A histogram for /metrics (userspace/daemon/serve/metrics.c): counts per
 * bucket, upper bounds in seconds given by its user. */
#define NP_HIST_BUCKETS 16
struct np_hist {
	uint64_t bucket[NP_HIST_BUCKETS]; /* not cumulative: per bucket */
	uint64_t inf;                     /* above the last bound */
	uint64_t count;
	double sum; /* seconds */
};

/* Rejections by the resource they named ("other" past the table). */
#define NP_REJ_RESOURCES 32
struct np_rej_count {
	char resource[96];
	uint64_t n;
};

/* A file of config.export (userspace/daemon/serve/export_files.c). */
struct np_export_file {
	char path[NP_PATH_MAX]; /* where last written or tried */
	char *last;             /* what was written (heap), NULL: nothing */
	uint64_t stamp;         /* the change stamp it was made at */
	bool done;              /* written (or unchanged) at stamp */
	uint64_t writes;
	time_t time;     /* of the last write */
	char error[512]; /* of the last try, "" = none */
};

/* The daemon's record of a workload, beyond its allocation: held by the
 * workload's allocation in the engine's state (numaplace/admit.h,
 * struct np_workload_rec), found through it (np_daemon_meta_of,
 * np_daemon_meta_find) and freed with it. An admitted workload has one
 * from its admission (or the load at start) on; nothing else has. */
struct np_wl_meta {
	struct np_workload_rec rec; /* the engine's hold on it: first */
	/* Heap strings owned by the entry; name is never NULL (a heap copy,
	 * not an array: 120 bytes less per workload), the others NULL read
	 * as "". */
	char *name;
	char *spec_file;             /* "" = admitted through the socket */
	char *spec_json;             /* canonical spec, to notice changes */
	bool established;            /* its cgroup was written at least once */
	bool partition_done;         /* isolated partition set (or refused) */
	time_t last_migrate;         /* verify.on_remote_memory = "migrate" */
	unsigned long seen_scan;     /* last spec scan that found its file */
	bool unit_pending;           /* its unit does not exist yet (said) */
	uint64_t placement_hash;     /* of its placement file (0: none) */
	/* what that file was made from: np_workload_alloc_fp(), and the
	 * pools' hash for a workload with a shared container */
	uint64_t placement_key;
	/* BE suppression: its cgroup's cpu.stat usage_usec at the last
	 * sample (cpu_known: there is one) */
	uint64_t cpu_usec;
	bool cpu_known;
	int64_t cpu_max_us; /* cpu.max quota last written (0: none) */
};

/* A spec file that is not admitted: rejected (retried every cycle, logged
 * when the reason changes) or retired (its cgroup was removed by hand; not
 * re-admitted until the file changes). */
struct np_spec_note {
	char file[2 * NP_PATH_MAX];
	char canon[4096];
	char reason[512];
	bool retired;
};

/* What the daemon last wrote to a cgroup: drift is a difference from it. */
struct np_written {
	char *path; /* heap, owned */
	/* cpus: the words of the set up to its last non-zero one (heap,
	 * owned; the rest are zero). */
	uint64_t *cpus;
	int ncpuwords;
	np_nodemask mems;
	/* drift seen and counted; not again until a write or a read back
	 * shows the cgroup holds what it should (a repair that keeps failing
	 * is one drift) */
	bool drifted;
};

struct np_verify;     /* userspace/observe/verify.c */
struct np_ctl_server; /* userspace/daemon/serve/ctl_server.c */
struct np_metrics;    /* userspace/daemon/serve/metrics.c */

struct np_daemon {
	struct np_config cfg;
	char config_path[NP_PATH_MAX];
	struct np_topology *topo;
	struct np_node_state st;
	/* The state's journal (np_daemon_save() appends to it). */
	struct np_journal journal;
	/* Apply: the only way the daemon changes cgroups. */
	struct np_enforcer *enf;
	uint32_t host_pending; /* shared_cgroups[i] is not there yet: bit i */
	int nwritten;
	struct np_written *written;
	/* Index: path -> written[] index. */
	struct np_strmap written_ix;
	int nnotes;
	struct np_spec_note *notes;
	/* Released workloads whose cgroup still holds tasks: kept on the
	 * shared pool (never on CPUs granted to someone else) until empty. */
	int nleft;
	char (*left)[2 * NP_PATH_MAX];
	/* Released unit workloads whose unit could not be given its CPUs
	 * back (a bus error): retried before the plan of every cycle. */
	int nunit_left;
	struct np_unit_left {
		char unit[NP_UNIT_NAME_MAX];
		bool said; /* its failure is logged */
	} *unit_left;
	struct np_counters n;
	/* for /metrics */
	struct np_hist hist_admit, hist_reconcile;
	struct np_rej_count rej_by[NP_REJ_RESOURCES];
	/* the same by the kubelet's error kind (those that have one) */
	struct np_rej_count rej_kind[NP_REJ_RESOURCES];
	struct np_metrics *metrics; /* NULL: off or not listening */
	char metrics_listen[NP_PATH_MAX]; /* what it listens on */
	char metrics_error[512];          /* why it does not ("" = it does) */
	uint64_t metrics_retry_us;        /* CLOCK_MONOTONIC: try again */
	struct np_export_file export_file[2]; /* nrt, koordinator */
	struct np_rejection rej[NP_MAX_REJECTIONS];
	int nrej;
	/* Defragmentation (userspace/daemon/decide/workload_defrag.c): the
	 * last admission the engine rejected (canonical spec, "" = none; its
	 * spec file, "" = the socket), and moved workloads whose memory
	 * nodes changed: their pages are migrated once the cycle has written
	 * the cpusets. */
	struct {
		char last_spec[8192];
		char last_file[2 * NP_PATH_MAX];
		int nmig;
		struct np_defrag_mig {
			char name[NP_NAME_MAX];
			np_nodemask from, to;
		} mig[16];
		uint64_t moves; /* workloads moved so far */
	} defrag;
	struct {
		time_t time;
		int writes;
		long duration_us;
	} last_cycle;
	int epfd, tfd, sfd, ifd;
	int efd; /* the enforcer's events (the systemd bus), -1 if none */
	unsigned efd_gen; /* the enforcer's bus_gen when efd was added */
	/* cgroup_parent as configured (the systemd driver puts its scope
	 * below it into cfg.cgroup_parent) */
	char cfg_parent[NP_PATH_MAX];
	struct np_ctl_server *ctl; /* the control socket */
	bool stop;
	bool dirty; /* state must be saved */
	/* only workloads' "pending" marks changed (their cgroups are
	 * written): saved without waiting for the disk (a crash that loses
	 * it leaves them pending, whose missing cgroup a restart creates
	 * again instead of releasing) */
	bool dirty_lazy;
	/* The last cycle through the managed cgroups found nothing to do,
	 * and every cgroup it read is watched; quiet_saves, quiet_errors:
	 * the counters after it. Until a save, an error, an event of the
	 * enforcer or the full reading due, cycles skip those cgroups. */
	bool quiet_ok;
	uint64_t quiet_saves, quiet_errors;
	unsigned long spec_scan; /* scans of the spec directory so far */
	/* config.socket_read_group resolved: its members may read */
	bool read_group;
	gid_t read_gid;
	/* why the spec directory is not trusted (logged when it changes;
	 * "" = it is) */
	char spec_dir_refused[1024];
	/* test only: NUMAPLACED_FAILPOINT=admit-saved exits (code 86) right
	 * after an admission is saved, before its cgroup is created */
	bool failpoint_admit_saved;
	bool be_squeezed; /* BE pool empty: BE runs on the shared pool */
	bool online_unreadable; /* cfg.cpu_online_file: said once */
	/* A spec scan admits for at most NP_SCAN_BUDGET_MS (each admission
	 * is saved before it is applied); the rest waits for the next cycle,
	 * run as soon as the loop has served signals and the socket. */
	bool scan_more;
	uint64_t scan_deadline_us; /* CLOCK_MONOTONIC */
	/* What the spec scan (collect) found for decide: files new or
	 * changed, with their spec, in the order read; scanned: the scan
	 * went through the directory (files it did not find are removed). */
	struct np_spec_queue {
		bool scanned;
		int n, cap;
		struct np_spec_item {
			char *path;   /* heap */
			json_t *spec; /* an object with a string "name" */
		} *v;
	} specq;
	/* A request changed the state, or asked for a cycle (reload): the
	 * loop runs one after this batch of requests. Only the loop runs a
	 * cycle; requests and defrag ask for one here. */
	bool cycle_due;
	/* Set by np_daemon_handle(): the answer of that request waits for
	 * the cycle it asked for (its change is in force then: "wait":
	 * "enforced", resize, reload, defrag); the loop holds it and sends
	 * np_daemon_answer() of it once that cycle has run. */
	bool answer_after_cycle;
	/* online CPUs the topology has offline (offline at start): said */
	np_cpuset unknown_online;
	/* the managed parent is known not to be a partition root (checked
	 * once while no workload asks for a partition) */
	bool parent_member;
	bool parent_member_failed; /* turning it back failed: said once */
	/* releasing vanished workloads: saved once by the cycle */
	bool release_batch;
	/* Placement files (placement_files.c): the state's changes so far
	 * (saves, cgroup writes) and those the files show; the stale ones
	 * of an earlier run are removed once. */
	unsigned long placement_gen, placement_done;
	bool placement_swept;
	bool placement_said; /* the directory cannot be opened: logged */
	/* the kernel refused the managed parent as a partition root over
	 * these CPUs: not tried again (nor logged) until they change */
	bool parent_refused_set;
	np_cpuset parent_refused;
	struct np_verify *verify; /* NULL: verification off */
	/* Host isolation (hostiso_phase.c), opened at the first cycle. */
	struct np_hostiso *hostiso;
	bool hostiso_off; /* not available (said once) */
	/* test only: the root of the proc and sys trees host isolation
	 * changes ("" = the real ones; under a fake enforcer host isolation
	 * is off unless this is set) */
	char hostiso_root[NP_PATH_MAX];
	struct {
		bool done;      /* cpus was applied (or tried) */
		np_cpuset cpus; /* the isolated set of the last change */
		np_cpuset offline; /* the CPUs offline then */
		int rc;         /* its result, error its message */
		char error[512];
		time_t time;
		struct np_hostiso_report rep;
	} hostiso_last;
	/* BE suppression (suppress.c): the last /proc/stat sample and the
	 * last result (valid: out and u hold one). */
	struct {
		bool have_stat;
		uint64_t busy, total; /* ticks over all CPUs */
		int ncpu;             /* cpuN lines */
		uint64_t sample_us;   /* CLOCK_MONOTONIC */
		bool valid;
		struct np_suppress_usage u;
		struct np_suppress_out out;
		uint64_t samples;
		bool said; /* an unreadable /proc/stat or a bad sample: logged */
		bool cpu_enabled; /* +cpu in subtree_control tried */
	} suppress;
};


#define NP_SCAN_BUDGET_MS 200

/* Flags for np_daemon_init. */
#define NP_DAEMON_RESET_STATE 0x1

int np_daemon_init(struct np_daemon *d, const char *config_path,
		   unsigned flags, char *err, size_t errlen);
/* The same with a given enforcer (tests: a fake that records the writes);
 * the daemon owns it from then on, also on failure. */
int np_daemon_init_with(struct np_daemon *d, const char *config_path,
			unsigned flags, struct np_enforcer *enf, char *err,
			size_t errlen);
void np_daemon_fini(struct np_daemon *d);
/* One reconcile cycle: specs, vanished cgroups, drift; 0 or -errno. */
int np_daemon_reconcile(struct np_daemon *d);
/* Bring RUN_DIR/workloads/NAME.json up to date with the state (after the
 * loop answered; nothing to do when no save happened since the last). */
void np_daemon_placement_files(struct np_daemon *d);
/* The event loop; returns when stopped. */
int np_daemon_run(struct np_daemon *d);
/* Handle one control request (exposed for tests): decided and saved, a
 * cycle asked for (cycle_due) when the state changed; answer_after_cycle
 * says whether the answer must wait for that cycle. */
json_t *np_daemon_handle(struct np_daemon *d, const json_t *req);
/* The answer of a request that waited for a cycle, completed once the
 * cycle has run (resp consumed; a new reference). */
json_t *np_daemon_answer(struct np_daemon *d, json_t *resp);
json_t *np_daemon_status(struct np_daemon *d);

#endif
