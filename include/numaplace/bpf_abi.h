/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The ABI shared by the BPF programs (bpf/numaplace.bpf.c) and userspace
 * (daemon, CLI, tests): map layouts, counters, event samples.
 *
 * Maps are pinned under <bpf_pin_path>/v<NP_BPF_ABI_VERSION>/. libbpf
 * reuses a pinned map only when type, key, value and max_entries are
 * identical, so any layout change here must bump NP_BPF_ABI_VERSION (a new
 * directory) rather than break the load on a node with old pins.
 */
#ifndef NUMAPLACE_BPF_ABI_H
#define NUMAPLACE_BPF_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#include <stdbool.h>
#endif

#define NP_BPF_ABI_VERSION 2
#define NP_BPF_PIN_SUBDIR "v2"

#define NP_BPF_MAX_CPUS 4096
#define NP_BPF_CPU_WORDS (NP_BPF_MAX_CPUS / 64)
/* Cgroup levels below the managed parent searched for a workload cgroup
 * (a workload path "a/b" plus container sub-cgroups below it); for a task
 * not below it, the levels up from its cgroup searched for a workload
 * registered outside the managed parent (a container's cgroup). */
#define NP_BPF_MAX_DEPTH 12
#define NP_BPF_COMM_LEN 16
#define NP_BPF_NAME_LEN 128 /* = NP_NAME_MAX: names are not truncated */
/* Default slot count (max_entries of the per-workload maps); the daemon
 * sets it from bpf.max_workloads before the first load. */
#define NP_BPF_DEFAULT_SLOTS 1024
#define NP_BPF_INTRUDER_ENTRIES 4096
#define NP_BPF_RINGBUF_BYTES (256 * 1024)

/* Map names, as pinned (bpftool map dump pinned <dir>/<name>). */
#define NP_BPF_MAP_POLICY "np_policy"
#define NP_BPF_MAP_CPU_OWNER "np_cpu_owner"
#define NP_BPF_MAP_CPU_TOPO "np_cpu_topo"
#define NP_BPF_MAP_COUNTERS "np_counters"
#define NP_BPF_MAP_SLOTS "np_slots"
#define NP_BPF_MAP_INTRUDERS "np_intruders"
#define NP_BPF_MAP_INFO "np_info"
#define NP_BPF_MAP_EVENTS "np_events"
#define NP_BPF_MAP_RATE "np_rate"
#define NP_BPF_MAP_EPISODES "np_episodes"
#define NP_BPF_MAP_CPU_INTRUDE "np_cpu_intrude"
#define NP_BPF_EPISODE_ENTRIES 8192

/* np_policy: HASH, key = cgroup v2 id (inode of the workload's cgroup
 * directory), value = what its tasks may use. Tasks in cgroups below it
 * (containers) are matched by walking up the cgroup tree. */
enum np_bpf_policy_flags {
	NP_BPF_POL_EXCLUSIVE = 1 << 0, /* owns its CPUs (LSE, LSR, Guaranteed) */
	NP_BPF_POL_BE = 1 << 1,        /* best effort: may use LSR CPUs */
	NP_BPF_POL_PARTITION = 1 << 2, /* CPUs are a cpuset partition */
	NP_BPF_POL_LSR = 1 << 3,       /* exclusive, but BE may share it */
};

struct np_bpf_policy {
	__u64 cpus[NP_BPF_CPU_WORDS]; /* allowed CPUs, bit c of word c/64 */
	__u64 mems;                   /* allowed NUMA nodes, bit n = node n */
	/* CLOCK_MONOTONIC ns: until then, out-of-set events are counted as
	 * "transition" (a cpuset rewrite is in flight), not as drift. */
	__u64 settle_until_ns;
	__u32 slot; /* index into np_counters, np_slots, np_rate */
	__u32 gen;  /* policy generation, bumped on every change */
	__u32 flags;
	__u32 pad;
};

/* np_cpu_owner: ARRAY, key = CPU, value = the workload owning it
 * exclusively (slot + 1; 0 = shared / reserved / unowned). */
enum np_bpf_owner_flags {
	NP_BPF_OWNER_BE_OK = 1 << 0, /* LSR: best-effort tasks may run here */
};

struct np_bpf_owner {
	__u32 slot_plus1;
	__u32 flags;
	/* as in np_bpf_policy: intrusions before then are "transition" */
	__u64 settle_until_ns;
};

/* np_cpu_topo: ARRAY, key = CPU. */
struct np_bpf_cpu_topo {
	__u32 node; /* NUMA node id */
	__u32 l3;   /* L3 domain id (its first CPU) */
};

/* np_counters: PERCPU_ARRAY, key = slot. Per-CPU values are the truth;
 * readers sum them (np_bpf_counters_sum). All u64 so that the sum is a
 * loop over the struct as an array. */
struct np_bpf_counters {
	__u64 run_outside;        /* switches in to a task outside its CPUs */
	__u64 run_outside_ticks;  /* cpu-clock samples outside its CPUs */
	__u64 transition;         /* out-of-set events in the settle window */
	__u64 intrude_workload;   /* switches on its exclusive CPUs to ... */
	__u64 intrude_cgroup;     /* ... a task of another workload, of an */
	__u64 intrude_kthread;    /* unmanaged cgroup, a kernel thread */
	__u64 intrude_ticks;      /* cpu-clock samples of intruders (no kthreads) */
	/* By kind beyond user tasks (see np_cpu_intrude for the per-CPU
	 * split): kernel-thread time, device interrupt handlers and softirq
	 * vectors run on its exclusive CPUs, and their time. */
	__u64 intrude_kthread_ticks; /* cpu-clock samples of kernel threads */
	__u64 intrude_hardirq;    /* irq_handler_entry..exit pairs */
	__u64 intrude_hardirq_ns;
	__u64 intrude_softirq;    /* softirq_entry..exit pairs (one a vector) */
	__u64 intrude_softirq_ns;
	__u64 migrations;         /* set_task_cpu() of its tasks */
	__u64 migrate_xl3;        /* ... across L3 domains */
	__u64 migrate_xnuma;      /* ... across NUMA nodes */
	__u64 migrate_disallowed; /* ... to a CPU outside its set */
	__u64 faults;             /* NUMA hinting faults (a THP counts once) */
	__u64 fault_pages_local;  /* pages: page node == faulting CPU's node */
	__u64 fault_pages_remote;
	__u64 fault_pages_outside_mems; /* page on a node outside its mems */
	__u64 numa_move;          /* NUMA balancer moved one of its tasks */
	__u64 numa_swap;          /* ... swapped it with another task */
	__u64 numa_stick;         /* ... wanted to move it and could not */
	__u64 samples;            /* ring buffer samples sent */
	__u64 samples_dropped;    /* rate-limited or ring buffer full */
};

#define NP_BPF_NCOUNTERS (sizeof(struct np_bpf_counters) / sizeof(__u64))

/* np_slots: ARRAY, key = slot. Written by the daemon only, so that the CLI
 * and bpftool can name what the counters belong to while it is down. */
enum np_bpf_slot_flags {
	NP_BPF_SLOT_USED = 1 << 0,
};

struct np_bpf_slot {
	__u64 cgid;
	__u64 mems;
	__u32 gen;
	__u32 flags;
	__u32 policy_flags; /* np_bpf_policy_flags */
	__u32 ncpus;
	char name[NP_BPF_NAME_LEN];
	char cgroup[128]; /* relative to the managed parent, truncated */
};

/* np_intruders: LRU_HASH of who ran on an exclusive CPU. */
enum np_bpf_intruder_kind {
	NP_BPF_INTRUDER_WORKLOAD = 1,
	NP_BPF_INTRUDER_CGROUP = 2,
	NP_BPF_INTRUDER_KTHREAD = 3,
};

struct np_bpf_intruder_key {
	__u32 owner_slot;
	__u32 kind;
	__u64 cgid; /* the intruder's cgroup */
	char comm[NP_BPF_COMM_LEN];
};

struct np_bpf_intruder_val {
	__u64 switches; /* switches in onto the owner's CPUs */
	__u64 ticks;    /* cpu-clock samples taken while it ran there: a busy
			 * intruder that never switches again is still named */
	__u64 last_ns;
	__u32 last_pid;
	__u32 last_cpu;
};

/*
 * np_cpu_intrude: ARRAY, key = CPU, written by the programs only (each CPU
 * its own entry, so plain adds; an interrupt landing in the middle of one
 * may lose an increment). Who intruded on an exclusive CPU, by kind, since
 * its current owner took it: the entry is for `owner_slot_plus1` (as in
 * np_cpu_owner); the first event after the owner changed restarts it from
 * zero, so an entry whose owner no longer owns the CPU (np_cpu_owner says
 * another or none) keeps what was counted while it did. Nothing but the
 * run times (user_ns, kthread_ns: the raw instrument, below) is counted
 * inside the owner's settle window. The per-workload totals (that survive
 * an owner change) are the intrude_* fields of np_counters; the run times
 * are kept per CPU only.
 *
 * Kinds, and what each suggests:
 *   user    a task of another workload or of an unmanaged cgroup: a cgroup
 *           cpuset is wrong (switches in; cpu-clock ticks while running);
 *   kthread a kernel thread (PF_KTHREAD): per-CPU kworkers and the like,
 *           only host isolation (isolcpus/nohz_full, housekeeping) moves
 *           them;
 *   hardirq device interrupt handlers (irq/irq_handler_entry..exit: the
 *           numbered lines of /proc/interrupts; the local timer and IPIs
 *           are architecture vectors and not seen): IRQ affinity;
 *   softirq softirq vectors run on the CPU (irq/softirq_entry..exit, in
 *           interrupt exit or ksoftirqd; /proc/softirqs), their time
 *           includes hardirqs taken meanwhile: IRQ affinity and host
 *           isolation.
 * 128 bytes (two cache lines) so that neighbouring CPUs' entries, each
 * written by its own CPU, rarely share a line.
 */
enum np_bpf_intrude_kind {
	NP_BPF_IK_USER = 0,
	NP_BPF_IK_KTHREAD = 1,
	NP_BPF_IK_HARDIRQ = 2,
	NP_BPF_IK_SOFTIRQ = 3,
	NP_BPF_IK_N = 4,
};

struct np_bpf_cpu_intrude {
	__u32 owner_slot_plus1; /* the owner counted for (0: never owned) */
	__u32 run_csw;      /* the running foreign task's context switches
			     * (nvcsw + nivcsw, low 32 bits) when it came in:
			     * its switch out here makes them one more, so a
			     * run whose task switched out anywhere unseen in
			     * between (events missed while the CPU had no
			     * owner, between two numaplaced) is not counted */
	__u64 since_ns;     /* bpf_ktime_get_ns of its first event */
	__u64 user;         /* switches in to user tasks */
	__u64 user_ticks;   /* cpu-clock samples of user tasks */
	__u64 kthread;      /* switches in to kernel threads */
	__u64 kthread_ticks;
	__u64 hardirq;      /* interrupt handlers run */
	__u64 hardirq_ns;
	__u64 softirq;      /* softirq vectors run */
	__u64 softirq_ns;
	__u64 hardirq_start_ns; /* in flight: entry time (0: none) */
	__u64 softirq_start_ns;
	/* Run time of tasks other than the owner's here: for each run from a
	 * switch in to the next switch on this CPU, the task's own
	 * se.sum_exec_runtime across it (the kernel's accounting of the
	 * task). Every run, with no grace time and no settle window, so that
	 * it can be checked against the kernel's per-CPU accounting
	 * (/proc/schedstat's rq_cpu_time less the owner's cpu.stat usage;
	 * bench/outcome does). A run still going is not in them yet, as it is
	 * not in rq_cpu_time. Best-effort tasks on an LSR CPU (allowed there)
	 * are not counted. */
	__u64 user_ns;
	__u64 kthread_ns;
	__u64 run_start_ns; /* the running foreign task's sum_exec_runtime
			     * when it came in */
	__u32 run_kind;     /* its kind: NP_BPF_RUN_USER or _KTHREAD (0:
			     * none) */
	__u32 run_pid;      /* its thread id */
};

/* np_bpf_cpu_intrude.run_kind */
enum np_bpf_run_kind {
	NP_BPF_RUN_NONE = 0, /* idle, or the owner's own task */
	NP_BPF_RUN_USER = 1,
	NP_BPF_RUN_KTHREAD = 2,
};

/* np_info: ARRAY of one, written by the daemon for readers. */
enum np_bpf_signal {
	NP_BPF_SIG_SWITCH = 1 << 0,   /* tp_btf/sched_switch */
	NP_BPF_SIG_MIGRATE = 1 << 1,  /* tp_btf/sched_migrate_task */
	NP_BPF_SIG_TICK = 1 << 2,     /* perf_event cpu-clock */
	NP_BPF_SIG_FAULT = 1 << 3,    /* fentry or kprobe task_numa_fault */
	NP_BPF_SIG_BALANCER = 1 << 4, /* tp_btf/sched_{move,swap,stick}_numa */
	NP_BPF_SIG_AUDIT = 1 << 5,    /* iter/task */
	NP_BPF_SIG_NUMA_BALANCING = 1 << 6, /* kernel.numa_balancing on */
	NP_BPF_SIG_IRQ = 1 << 7, /* tp_btf/irq_handler_*, softirq_* */
};

struct np_bpf_info {
	__u32 abi;
	__u32 nslots;
	__u32 signals;    /* np_bpf_signal bits active */
	__u32 daemon_pid; /* 0 when stopped */
	__u64 parent_cgid;
	__u64 started_ns; /* CLOCK_REALTIME of the daemon's load */
	__u64 updated_ns; /* CLOCK_REALTIME of the last policy update */
	__u32 tick_hz;
	__u32 pad;
};

/* np_events: RINGBUF of samples; np_rate: PERCPU_ARRAY, key = slot, the
 * per-CPU fixed-window limiter that keeps a storm from flooding it (the
 * counters above count everything regardless). */
enum np_bpf_event_kind {
	NP_EV_RUN_OUTSIDE = 1,    /* aux: 1 when seen by the tick sampler */
	NP_EV_INTRUSION = 2,      /* slot: owner; aux: np_bpf_intruder_kind */
	NP_EV_MIGRATE_DISALLOWED = 3, /* aux: source CPU */
	NP_EV_NUMA_BALANCER = 4,  /* aux: 1 move, 2 swap, 3 stick */
	NP_EV_FAULT_OUTSIDE = 5,  /* aux: the page's node */
	_NP_EV_MAX,
};

struct np_bpf_event {
	__u64 ts_ns; /* bpf_ktime_get_ns (CLOCK_MONOTONIC) */
	__u64 cgid;  /* the task's own cgroup */
	__u32 kind;
	__u32 slot;
	__u32 pid;
	__u32 cpu;
	__u32 gen;
	__u32 aux;
	char comm[NP_BPF_COMM_LEN];
};

struct np_bpf_rate {
	__u64 window_start_ns;
	__u32 sent;
	__u32 pad;
};

/*
 * np_episodes: LRU_HASH, key = pid. A task seen outside its set (or on
 * another workload's CPU) counts as a violation only once it has been
 * seen so for at least the grace time (np_grace_ns): a task that is being
 * moved into a workload's cgroup runs for a moment on its old CPUs before
 * cpuset_attach() migrates it, and that is not drift. An episode ends when
 * the task has not been seen outside for np_episode_gap_ns.
 */
struct np_bpf_episode {
	__u64 first_ns;
	__u64 last_ns;
};

/* iter/task audit record (one per task of a managed workload). */
enum np_bpf_audit_flags {
	NP_BPF_AUDIT_CPU_OUTSIDE = 1 << 0,  /* running now on a CPU outside */
	NP_BPF_AUDIT_MASK_OUTSIDE = 1 << 1, /* allowed mask not within it */
	NP_BPF_AUDIT_KTHREAD = 1 << 2,
};

#define NP_BPF_AUDIT_MASK_WORDS 16 /* the first 1024 CPUs of cpus_ptr */

struct np_bpf_audit_rec {
	__u32 pid;
	__u32 tgid;
	__u64 cgid;
	__u32 slot;
	__u32 cpu;
	__u32 nr_cpus_allowed;
	__u32 flags;
	char comm[NP_BPF_COMM_LEN];
	__u64 allowed[NP_BPF_AUDIT_MASK_WORDS];
};

/*
 * Shared by the BPF programs and the cmocka tests.
 */

/* Bit test with the index widened and pinned first: clang 14 otherwise
 * bounds-checks a zero-extended copy and indexes with the original
 * register, which the verifier rejects (see bpf/compat.bpf.h). */
static inline bool np_bpf_cpu_allowed(const struct np_bpf_policy *pol,
				      __u32 cpu)
{
	__u64 c = cpu;

#ifdef barrier_var
	barrier_var(c);
#endif
	if (c >= NP_BPF_MAX_CPUS)
		return false;
	return (pol->cpus[c / 64] >> (c % 64)) & 1;
}

/* Fixed-window limiter: at most `burst` samples per `window_ns` per CPU per
 * workload. Returns true when a sample may be sent (and counts it). */
static inline bool np_bpf_rate_allow(struct np_bpf_rate *r, __u64 now_ns,
				     __u32 burst, __u64 window_ns)
{
	if (now_ns - r->window_start_ns >= window_ns ||
	    now_ns < r->window_start_ns) {
		r->window_start_ns = now_ns;
		r->sent = 0;
	}
	if (r->sent >= burst)
		return false;
	r->sent++;
	return true;
}

#endif
