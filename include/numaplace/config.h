/* SPDX-License-Identifier: Apache-2.0 */
/* numaplaced configuration (/etc/numaplace/numaplace.json). */
#ifndef NUMAPLACE_CONFIG_H
#define NUMAPLACE_CONFIG_H

#include "numaplace/admit.h"
#include "numaplace/be_suppress.h"
#include "numaplace/oci.h"
#include "numaplace/oci_policy.h"
#include "numaplace/verify_config.h"

#define NP_CONFIG_DEFAULT_PATH "/etc/numaplace/numaplace.json"
#define NP_MAX_SHARED_CGROUPS 16

/* How cgroups are changed ("cgroup_driver"): auto picks systemd when PID 1
 * is systemd and its bus answers. */
enum np_cgroup_driver { NP_DRIVER_AUTO, NP_DRIVER_SYSTEMD, NP_DRIVER_CGROUPFS };

/* Host isolation ("host_isolation"): IRQs, unbound workqueues and kernel
 * threads kept off the CPUs of partition workloads (the default), of every
 * workload with exclusive CPUs, or left alone (numaplace/hostiso.h). */
enum np_host_isolation { NP_HOSTISO_PARTITION, NP_HOSTISO_EXCLUSIVE,
			 NP_HOSTISO_OFF };

/* What a CPU going offline does to the exclusive workloads holding it
 * ("on_cpu_offline"): reported as degraded (they keep the CPU, which comes
 * back to them), or re-placed on online CPUs when there is room. */
enum np_cpu_offline { NP_OFFLINE_REPORT, NP_OFFLINE_REPLACE };

struct np_config {
	struct np_node_policy policy;
	char topology[NP_PATH_MAX];   /* topology source, "live" by default */
	unsigned reconcile_period_ms; /* default 10 s */
	/* Every managed cgroup's files are read again at least this often
	 * (between, only those written since, as inotify says); 0: every
	 * cycle. Default 60 s. */
	unsigned full_scan_ms;
	char cgroup_root[NP_PATH_MAX]; /* "" = auto-detect from mountinfo */
	char cgroup_parent[NP_PATH_MAX]; /* managed parent, relative */
	/* Cgroups outside the managed parent that are confined to the shared
	 * pool (e.g. "system.slice": host daemons off exclusive CPUs). */
	int nshared;
	bool shared_set; /* given in the file (else defaults per driver) */
	enum np_cgroup_driver driver;
	char shared_cgroups[NP_MAX_SHARED_CGROUPS][NP_PATH_MAX];
	bool create_cgroups;       /* mkdir missing workload cgroups */
	char spec_dir[NP_PATH_MAX];
	char state_dir[NP_PATH_MAX];
	/* "runtime_dir" (default /run/numaplace, a tmpfs): the records of
	 * what numaplaced changed on the host until a reboot (host-units.json,
	 * hostiso.json), which a full state disk must not stop. */
	char runtime_dir[NP_PATH_MAX];
	char socket_path[NP_PATH_MAX];
	char bpf_pin_path[NP_PATH_MAX];
	struct np_verify_config verify;
	enum np_host_isolation host_isolation;
	enum np_cpu_offline on_cpu_offline;
	/* The online CPU list, read every cycle (hotplug); a test points it
	 * at a file of its own. */
	char cpu_online_file[NP_PATH_MAX];
	/* /metrics ("metrics": {"listen": ...}): "HOST:PORT", "[V6]:PORT",
	 * "unix:/PATH", "" = off; default 127.0.0.1:9464. */
	char metrics_listen[NP_PATH_MAX];
	/* "export": what the cluster reads about this node, kept written
	 * (JSON, atomically, when it changes) for an agent to push: the
	 * NodeResourceTopology object and Koordinator's node annotations
	 * ("" = not written); node_name "" = the host name, lowercased. */
	struct {
		char node_name[254];
		char nrt_file[NP_PATH_MAX];
		char koordinator_file[NP_PATH_MAX];
	} export_;
	/* Test-only: cgroup_root may be a plain directory tree. Refused on a
	 * real cgroup2 mount, and without this flag a non-cgroup2 root is
	 * refused. */
	bool fake_cgroup_root;
	/* "defrag": {"auto": false, "max_moves": 2}: a rejected admission
	 * re-places movable workloads to make room (auto), and how many
	 * moves a plan may have (1..NP_DEFRAG_MAX_MOVES). */
	struct {
		bool auto_;
		int max_moves;
	} defrag;
	/* "oci_hook": {"timeout_ms": 2000, "on_failure": "fail-open",
	 * "log_file": "/run/numaplace/oci-hook.log"}: numaplace oci-hook's
	 * time limit (100..60000 ms, the daemon call and the wait for the
	 * cpuset in force), what a failure does when the container's
	 * numaplace.io/on-failure annotation does not say (numaplace/oci.h),
	 * and the file each failure appends one line to ("" = none). */
	struct {
		unsigned timeout_ms;
		enum np_oci_failure on_failure;
		char log_file[NP_PATH_MAX];
		/* "policy": who may ask for what (numaplace/oci_policy.h),
		 * applied by numaplaced to every container admission and
		 * by the hook before it asks; SIGHUP applies it */
		struct np_oci_policy policy;
	} oci_hook;
	/* "socket_read_group": a group (name or number) whose members may
	 * read through the control socket (status, events, export,
	 * explain); "" = root only. Resolved when the socket is made. */
	char socket_read_group[33];
	/* "run_dir" (default /run/numaplace): each admitted workload's
	 * placement is in RUN_DIR/workloads/NAME.json, replaced atomically
	 * when it changes and removed on release; "placement_files": false
	 * writes none. */
	char run_dir[NP_PATH_MAX];
	bool placement_files;
	/* "be_suppress": {"cpuSuppressPolicy": "none",
	 * "cpuSuppressThresholdPercent": 65, "cpuSuppressMinCPUs": 0}:
	 * Koordinator's CPU suppress of the BE pool (numaplace/be_suppress.h),
	 * off unless a policy is given. */
	struct np_suppress_config be_suppress;
	/* "proc_stat_file": where the node's CPU time is read for it
	 * (default /proc/stat; tests give a file of their own). */
	char proc_stat_file[NP_PATH_MAX];
};

void np_config_defaults(struct np_config *c);
/* Parse and validate; every error names the key. */
int np_config_from_json(struct np_config *c, const json_t *j, char *err,
			size_t errlen);
int np_config_load(struct np_config *c, const char *path, char *err,
		   size_t errlen);
json_t *np_config_to_json(const struct np_config *c);
const char *np_cgroup_driver_name(enum np_cgroup_driver d);
const char *np_host_isolation_name(enum np_host_isolation h);
const char *np_cpu_offline_name(enum np_cpu_offline a);
/* shared_cgroups under the systemd driver when the file gives none:
 * system.slice, user.slice, init.scope, machine.slice. */
void np_config_systemd_defaults(struct np_config *c);
/* What the systemd driver needs of the configuration (cgroup_parent a
 * slice, shared_cgroups units, no fake root); errors name the key. */
int np_config_check_systemd(const struct np_config *c, char *err,
			    size_t errlen);

#endif
