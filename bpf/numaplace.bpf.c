// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * numaplace placement verification: per workload, did its tasks stay on
 * their CPUs and NUMA nodes, did anyone else run on its exclusive CPUs, is
 * its memory local. The daemon fills np_policy / np_cpu_owner / np_cpu_topo
 * and reads np_counters; the maps are pinned so that `numaplace
 * violations` and bpftool read them while the daemon is down.
 *
 * Hot path (sched_switch, a task outside the managed tree): one ARRAY
 * lookup (CPU owner), two cgroup loads and a level compare (and, above
 * the managed cgroups' level, one load of np_outside_levels); for a task
 * at or below the managed cgroups' level, its cgroup's id compared with
 * the CPU's last four known to have no workload (np_miss), and only for
 * a cgroup not among them the walk up. No map update unless something is
 * wrong, a cgroup without a workload is new to the CPU, or the CPU is
 * exclusively owned (there every switch ends and starts a run in
 * np_cpu_intrude's run times).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "compat.bpf.h"
#include "numaplace/bpf_abi.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by the loader before load; read-only to the programs, so the
 * verifier sees them as constants. */
const volatile __u64 np_parent_cgid = 0;  /* the managed parent cgroup */
const volatile __u32 np_parent_level = 0; /* its level (root = 0) */
const volatile __u32 np_rate_burst = 16;  /* samples per window per CPU */
const volatile __u64 np_rate_window_ns = 1000000000ULL;
/* Possible CPUs: cpumask bits at and above this are not maintained by the
 * kernel (a task's mask is copied from init_task's CPU_MASK_ALL). */
const volatile __u32 np_nr_cpus = NP_BPF_MAX_CPUS;
/* Persistence before an out-of-set run or an intrusion is a violation,
 * and the gap that ends an episode (see np_bpf_episode). */
const volatile __u64 np_grace_ns = 100000000ULL;
const volatile __u64 np_episode_gap_ns = 1000000000ULL;

/*
 * Written by the daemon while the programs run (np_bpf_outside_set; .bss,
 * mmapped), read with plain loads:
 *   np_outside_levels  the cgroup levels (root = 0) of the workloads whose
 *                      cgroup is not below the managed parent (containers:
 *                      crun's /np/<id>, podman's and crun --systemd-cgroup's
 *                      .../libpod-<id>.scope/container, kubepods...): bit L
 *                      for one at level L, bit 63 for one at 63 or deeper.
 *                      0 (none): np_workload_of takes no lookup outside
 *                      the managed parent, as before there were any.
 *   np_miss_gen        bumped after every such workload's np_policy entry
 *                      is written, before np_miss is cleared on every CPU:
 *                      a verdict computed before the bump is not cached.
 */
volatile __u64 np_outside_levels = 0;
volatile __u64 np_miss_gen = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NP_BPF_DEFAULT_SLOTS);
	__type(key, __u64);
	__type(value, struct np_bpf_policy);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} np_policy SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NP_BPF_MAX_CPUS);
	__type(key, __u32);
	__type(value, struct np_bpf_owner);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} np_cpu_owner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NP_BPF_MAX_CPUS);
	__type(key, __u32);
	__type(value, struct np_bpf_cpu_topo);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} np_cpu_topo SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NP_BPF_DEFAULT_SLOTS);
	__type(key, __u32);
	__type(value, struct np_bpf_counters);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} np_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NP_BPF_DEFAULT_SLOTS);
	__type(key, __u32);
	__type(value, struct np_bpf_slot);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} np_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, NP_BPF_INTRUDER_ENTRIES);
	__type(key, struct np_bpf_intruder_key);
	__type(value, struct np_bpf_intruder_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} np_intruders SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct np_bpf_info);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} np_info SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, NP_BPF_RINGBUF_BYTES);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} np_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NP_BPF_DEFAULT_SLOTS);
	__type(key, __u32);
	__type(value, struct np_bpf_rate);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} np_rate SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, NP_BPF_EPISODE_ENTRIES);
	__type(key, __u32);
	__type(value, struct np_bpf_episode);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} np_episodes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NP_BPF_MAX_CPUS);
	__type(key, __u32);
	__type(value, struct np_bpf_cpu_intrude);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} np_cpu_intrude SEC(".maps");

_Static_assert(sizeof(struct np_bpf_cpu_intrude) == 128,
	       "np_cpu_intrude entries are two cache lines");

/*
 * Per CPU, the last cgroups (by id) a task was found in that are not
 * below the managed parent and have no workload at or above them outside
 * it (np_workload_of's first phase failed, and so did np_outside_of). A
 * cgroup's ancestors never change (cgroup v2 renames only within its
 * parent) and an id is never reused, so that verdict holds until a
 * workload outside the managed parent is registered: then the daemon
 * bumps np_miss_gen and clears this map on every CPU (np_bpf_outside_set),
 * and a verdict reached before the bump is not written (the generation is
 * read before the walk and again before the write). A task of one of
 * these costs one id load and four compares, not the walk up to the
 * managed parent's level (issue 32: 3 levels deep, as under systemd, the
 * walk was the miss path's own cost, 17-23 ns against 0-5 in the root
 * cgroup). Ids are never 0. Not pinned: a cache.
 *
 * The window left: a program interrupted for longer than the daemon's
 * bump-and-clear (two syscalls' time) between its second generation read
 * and its write caches a stale verdict, which lasts until four other
 * cgroups have replaced it on that CPU or the next registration. The
 * sched_switch program runs with interrupts off; the others can be
 * interrupted there, which for that long takes an interrupt storm or a
 * hypervisor's steal at that very instruction.
 */
#define NP_MISS_WAYS 4
struct np_miss {
	__u64 id[NP_MISS_WAYS];
	__u32 next; /* the way the next verdict replaces */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct np_miss);
} np_miss SEC(".maps");

/* Has `p` been outside (or intruding) for at least the grace time? Only
 * called on the violation paths. */
static __always_inline bool np_persistent(struct task_struct *p, __u64 now)
{
	__u32 pid = p->pid;
	struct np_bpf_episode *e = bpf_map_lookup_elem(&np_episodes, &pid);

	if (!e || now - e->last_ns > np_episode_gap_ns) {
		struct np_bpf_episode n = {.first_ns = now, .last_ns = now};

		bpf_map_update_elem(&np_episodes, &pid, &n, BPF_ANY);
		return np_grace_ns == 0;
	}
	e->last_ns = now;
	return now - e->first_ns >= np_grace_ns;
}

/* np_outside_levels masks for a cgroup at level L: L's own bit; the bits
 * of L and every level nearer the root (upto); those of the levels nearer
 * the root only (above). */
static __always_inline __u64 np_level_bit(__u32 l)
{
	return 1ULL << (l < 63 ? l : 63);
}

static __always_inline __u64 np_levels_upto(__u32 l)
{
	return l >= 63 ? ~0ULL : (2ULL << l) - 1;
}

static __always_inline __u64 np_levels_above(__u32 l)
{
	return l >= 64 ? ~0ULL : (1ULL << l) - 1;
}

/*
 * The workload outside the managed parent whose cgroup is `c` or its
 * deepest ancestor in np_policy, or NULL: np_policy is looked up only at
 * the levels where such a workload is (`levels`), and the walk stops
 * above the shallowest of them, after NP_BPF_MAX_DEPTH levels at most.
 */
static __always_inline struct np_bpf_policy *np_outside_of(struct cgroup *c,
							   __u64 levels)
{
	struct cgroup *a = c;
	int i;

	for (i = 0; i < NP_BPF_MAX_DEPTH && a; i++) {
		__u32 l = a->level;

		if (levels & np_level_bit(l)) {
			__u64 id = a->kn->id;
			struct np_bpf_policy *pol =
			    bpf_map_lookup_elem(&np_policy, &id);

			if (pol)
				return pol;
		}
		if (!(levels & np_levels_above(l)))
			return NULL;
		a = np_cgroup_parent(a);
	}
	return NULL;
}

/*
 * The policy of the managed workload a task belongs to, or NULL. The
 * cgroup is the task's own (never `current`: in sched_switch that is the
 * previous task). Tasks in cgroups below a workload's (containers) belong
 * to it; cgroups created after load are matched because nothing is
 * snapshotted.
 *
 * Phase 1 walks up without map lookups to check that the task is below
 * the managed parent at all, so that every other task on the node costs
 * no hash lookup; phase 2 takes the deepest registered cgroup on the path.
 * A task not below the managed parent belongs to a workload only when one
 * is registered outside it (a container's cgroup, np_outside_levels) at
 * or above its level: np_outside_of. Cgroups found to have no workload
 * are remembered per CPU (np_miss), so that the walk is done once per
 * cgroup and CPU while they stay among its last four.
 */
static __always_inline struct np_bpf_policy *
np_workload_of(struct task_struct *p, struct cgroup **cgp)
{
	struct cgroup *c = np_task_dfl_cgroup(p), *a, *parent;
	const __u32 top = np_parent_level + 1;
	struct np_bpf_policy *pol;
	struct np_miss *m;
	__u32 zero = 0, lvl;
	__u64 cid, gen, levels;
	int i;

	*cgp = c;
	if (!c)
		return NULL;
	lvl = c->level;
	if (lvl < top && !(np_outside_levels & np_levels_upto(lvl)))
		return NULL;
	cid = c->kn->id;
	m = bpf_map_lookup_elem(&np_miss, &zero);
	if (m && (m->id[0] == cid || m->id[1] == cid || m->id[2] == cid ||
		  m->id[3] == cid))
		return NULL;
	gen = np_miss_gen;
	if (lvl < top)
		goto outside;
	a = c;
	for (i = 0; i < NP_BPF_MAX_DEPTH && (__u32)a->level > top; i++) {
		a = np_cgroup_parent(a);
		if (!a)
			goto outside;
	}
	if ((__u32)a->level != top)
		goto outside; /* deeper than NP_BPF_MAX_DEPTH below the parent */
	parent = np_cgroup_parent(a);
	if (!parent || parent->kn->id != np_parent_cgid)
		goto outside;

	a = c;
	for (i = 0; i < NP_BPF_MAX_DEPTH; i++) {
		__u64 id = a->kn->id;

		pol = bpf_map_lookup_elem(&np_policy, &id);
		if (pol)
			return pol;
		if ((__u32)a->level <= top)
			return NULL;
		a = np_cgroup_parent(a);
		if (!a)
			return NULL;
	}
	return NULL;
outside:
	levels = np_outside_levels;
	if (levels & np_levels_upto(lvl)) {
		pol = np_outside_of(c, levels);
		if (pol)
			return pol;
	}
	if (m && np_miss_gen == gen) {
		m->id[m->next % NP_MISS_WAYS] = cid;
		m->next++;
	}
	return NULL;
}

/* The cgroup v2 id (kernfs node id = inode of the cgroup directory); read
 * only on the paths that report something. */
static __always_inline __u64 np_cgid(struct cgroup *c)
{
	return c ? c->kn->id : 0;
}

static __always_inline struct np_bpf_counters *np_counters_of(__u32 slot)
{
	return bpf_map_lookup_elem(&np_counters, &slot);
}

/* `cpu`'s np_cpu_intrude entry, for the owner `own` names: the first
 * event after the owner changed starts it from zero (in-flight IRQ entry
 * times are kept: the exit checks them against the settle window). */
static __always_inline struct np_bpf_cpu_intrude *
np_cpu_intrude_of(__u32 cpu, const struct np_bpf_owner *own, __u64 now)
{
	struct np_bpf_cpu_intrude *ci = bpf_map_lookup_elem(&np_cpu_intrude, &cpu);

	if (ci && ci->owner_slot_plus1 != own->slot_plus1) {
		ci->owner_slot_plus1 = own->slot_plus1;
		ci->since_ns = now;
		ci->user = 0;
		ci->user_ticks = 0;
		ci->kthread = 0;
		ci->kthread_ticks = 0;
		ci->hardirq = 0;
		ci->hardirq_ns = 0;
		ci->softirq = 0;
		ci->softirq_ns = 0;
		ci->user_ns = 0;
		ci->kthread_ns = 0;
		ci->run_start_ns = 0;
		ci->run_kind = NP_BPF_RUN_NONE;
		ci->run_pid = 0;
		ci->run_csw = 0;
	}
	return ci;
}

/*
 * A switch on `cpu`, which `own` owns, from `prev` to `next`, a task of
 * run kind `kind` (NP_BPF_RUN_NONE for idle and the owner's own): the
 * foreign run that ends here is added to its kind's time, and one of
 * `kind` starts. A run's time is the task's own se.sum_exec_runtime
 * across it, the kernel's accounting of that task (put_prev_task has
 * brought prev's up to date before the tracepoint), so that the sum is
 * in the same terms as /proc/schedstat and cgroup cpu.stat: a wakeup that
 * preempts charges the woken task from the wakeup's clock update, not
 * from this switch (the scheduler skips a second clock update).
 */
static __always_inline void np_foreign_run(const struct np_bpf_owner *own,
					   __u32 cpu, struct task_struct *prev,
					   struct task_struct *next, __u32 kind)
{
	struct np_bpf_cpu_intrude *ci =
	    np_cpu_intrude_of(cpu, own, bpf_ktime_get_ns());
	__u64 end;

	if (!ci)
		return;
	if (ci->run_kind != NP_BPF_RUN_NONE && ci->run_pid == (__u32)prev->pid &&
	    (__u32)(prev->nvcsw + prev->nivcsw) == ci->run_csw + 1) {
		end = prev->se.sum_exec_runtime;
		if (end > ci->run_start_ns) {
			if (ci->run_kind == NP_BPF_RUN_KTHREAD)
				ci->kthread_ns += end - ci->run_start_ns;
			else
				ci->user_ns += end - ci->run_start_ns;
		}
	}
	ci->run_kind = kind;
	ci->run_pid = kind != NP_BPF_RUN_NONE ? (__u32)next->pid : 0;
	ci->run_start_ns =
	    kind != NP_BPF_RUN_NONE ? next->se.sum_exec_runtime : 0;
	ci->run_csw = kind != NP_BPF_RUN_NONE
			  ? (__u32)(next->nvcsw + next->nivcsw)
			  : 0;
}

/*
 * A tick on `cpu`, which `own` owns, while `p` runs there (`kind` as
 * np_foreign_run's). A foreign run is counted as it goes, not only when
 * it ends: the part since its start (or the last tick) is added and the
 * run goes on from here, so that a task that holds an exclusive CPU for
 * seconds without switching is in the counters within a tick, and a
 * reader's window is off by at most a tick at either end, not by a whole
 * run (a run begun before a window and ended in it was counted in it
 * whole; one that outlasted the window, not at all). A run whose start
 * was not seen (the owner set, or the programs attached, while it ran)
 * starts here.
 */
static __always_inline void np_foreign_tick(const struct np_bpf_owner *own,
					    __u32 cpu, struct task_struct *p,
					    __u32 kind)
{
	struct np_bpf_cpu_intrude *ci =
	    np_cpu_intrude_of(cpu, own, bpf_ktime_get_ns());
	__u32 csw = (__u32)(p->nvcsw + p->nivcsw);
	__u64 now_rt = p->se.sum_exec_runtime;

	if (!ci || kind == NP_BPF_RUN_NONE)
		return;
	if (ci->run_kind == kind && ci->run_pid == (__u32)p->pid &&
	    ci->run_csw == csw) {
		if (now_rt > ci->run_start_ns) {
			if (kind == NP_BPF_RUN_KTHREAD)
				ci->kthread_ns += now_rt - ci->run_start_ns;
			else
				ci->user_ns += now_rt - ci->run_start_ns;
			ci->run_start_ns = now_rt;
		}
		return;
	}
	ci->run_kind = kind;
	ci->run_pid = (__u32)p->pid;
	ci->run_start_ns = now_rt;
	ci->run_csw = csw;
}

/* A violation sample, rate-limited per CPU per workload; the counters
 * have already counted the event, so a dropped sample loses nothing. */
static __always_inline void np_sample(struct np_bpf_counters *cnt, __u32 slot,
				      __u32 kind, struct task_struct *p,
				      __u64 cgid, __u32 cpu, __u32 gen,
				      __u32 aux, __u64 now)
{
	struct np_bpf_rate *r = bpf_map_lookup_elem(&np_rate, &slot);
	struct np_bpf_event *e;

	if (!r || !np_bpf_rate_allow(r, now, np_rate_burst, np_rate_window_ns)) {
		cnt->samples_dropped++;
		return;
	}
	e = bpf_ringbuf_reserve(&np_events, sizeof(*e), 0);
	if (!e) {
		cnt->samples_dropped++;
		return;
	}
	e->ts_ns = now;
	e->cgid = cgid;
	e->kind = kind;
	e->slot = slot;
	e->pid = p->pid;
	e->cpu = cpu;
	e->gen = gen;
	e->aux = aux;
	bpf_probe_read_kernel(e->comm, sizeof(e->comm), p->comm);
	bpf_ringbuf_submit(e, 0);
	cnt->samples++;
}

/* A task of `pol` seen on `cpu`, outside its set. */
static __always_inline void np_outside(struct np_bpf_policy *pol,
				       struct task_struct *p, __u64 cgid,
				       __u32 cpu, bool tick)
{
	struct np_bpf_counters *cnt = np_counters_of(pol->slot);
	__u64 now = bpf_ktime_get_ns();

	if (!cnt)
		return;
	if (now < pol->settle_until_ns || !np_persistent(p, now)) {
		cnt->transition++;
		return;
	}
	if (tick) {
		cnt->run_outside_ticks++;
		return;
	}
	cnt->run_outside++;
	np_sample(cnt, pol->slot, NP_EV_RUN_OUTSIDE, p, cgid, cpu, pol->gen, 0,
		  now);
}

/* Remember who intruded on `owner`'s CPUs: one more switch in, or one more
 * cpu-clock tick while running there. */
static __always_inline void np_intruder_seen(__u32 owner, __u32 kind,
					     struct task_struct *p, __u64 cgid,
					     __u32 cpu, __u64 now, bool tick)
{
	struct np_bpf_intruder_key key = {};
	struct np_bpf_intruder_val *v, nv = {};

	key.owner_slot = owner;
	key.kind = kind;
	key.cgid = cgid;
	bpf_probe_read_kernel(key.comm, sizeof(key.comm), p->comm);
	v = bpf_map_lookup_elem(&np_intruders, &key);
	if (v) {
		if (tick)
			__sync_fetch_and_add(&v->ticks, 1);
		else
			__sync_fetch_and_add(&v->switches, 1);
		v->last_ns = now;
		v->last_pid = p->pid;
		v->last_cpu = cpu;
		return;
	}
	if (tick)
		nv.ticks = 1;
	else
		nv.switches = 1;
	nv.last_ns = now;
	nv.last_pid = p->pid;
	nv.last_cpu = cpu;
	bpf_map_update_elem(&np_intruders, &key, &nv, BPF_NOEXIST);
}

/* `p` (workload `pol`, or none) runs on `cpu`, which `own` owns. */
static __always_inline void np_intrusion(struct np_bpf_owner *own,
					 struct np_bpf_policy *pol,
					 struct task_struct *p, __u64 cgid,
					 __u32 cpu)
{
	__u32 owner = own->slot_plus1 - 1, kind;
	struct np_bpf_cpu_intrude *ci;
	struct np_bpf_counters *cnt;
	__u64 now;

	if (pol && (pol->flags & NP_BPF_POL_BE) &&
	    (own->flags & NP_BPF_OWNER_BE_OK))
		return; /* best effort on an LSR CPU: allowed */
	cnt = np_counters_of(owner);
	if (!cnt)
		return;
	now = bpf_ktime_get_ns();
	if (now < own->settle_until_ns) {
		cnt->transition++;
		return;
	}
	if (p->flags & NP_PF_KTHREAD) {
		kind = NP_BPF_INTRUDER_KTHREAD;
		cnt->intrude_kthread++;
	} else if (!np_persistent(p, now)) {
		cnt->transition++;
		return;
	} else if (pol) {
		kind = NP_BPF_INTRUDER_WORKLOAD;
		cnt->intrude_workload++;
	} else {
		kind = NP_BPF_INTRUDER_CGROUP;
		cnt->intrude_cgroup++;
	}
	np_intruder_seen(owner, kind, p, cgid, cpu, now, false);
	ci = np_cpu_intrude_of(cpu, own, now);
	if (ci) {
		if (kind == NP_BPF_INTRUDER_KTHREAD)
			ci->kthread++;
		else
			ci->user++;
	}
	/* per-CPU kernel threads (kworker/N, ksoftirqd/N) are counted, not
	 * reported: no cpuset keeps them away */
	if (kind != NP_BPF_INTRUDER_KTHREAD)
		np_sample(cnt, owner, NP_EV_INTRUSION, p, cgid, cpu, 0, kind,
			  now);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(np_sched_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u32 cpu = bpf_get_smp_processor_id(), kind;
	struct np_bpf_policy *pol;
	struct np_bpf_owner *own;
	struct cgroup *cg;

	own = bpf_map_lookup_elem(&np_cpu_owner, &cpu);
	if (own && !own->slot_plus1)
		own = NULL;
	if (next->pid == 0) {
		/* idle: a foreign run on an owned CPU ends */
		if (own)
			np_foreign_run(own, cpu, prev, next, NP_BPF_RUN_NONE);
		return 0;
	}
	pol = np_workload_of(next, &cg);
	if (pol && !np_bpf_cpu_allowed(pol, cpu))
		np_outside(pol, next, np_cgid(cg), cpu, false);
	if (!own)
		return 0;
	if (pol && pol->slot + 1 == own->slot_plus1) {
		kind = NP_BPF_RUN_NONE;
	} else {
		np_intrusion(own, pol, next, np_cgid(cg), cpu);
		if (pol && (pol->flags & NP_BPF_POL_BE) &&
		    (own->flags & NP_BPF_OWNER_BE_OK))
			kind = NP_BPF_RUN_NONE; /* best effort on an LSR CPU */
		else if (next->flags & NP_PF_KTHREAD)
			kind = NP_BPF_RUN_KTHREAD;
		else
			kind = NP_BPF_RUN_USER;
	}
	np_foreign_run(own, cpu, prev, next, kind);
	return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(np_sched_migrate_task, struct task_struct *p, int dest_cpu)
{
	struct np_bpf_cpu_topo *st, *dt;
	struct np_bpf_counters *cnt;
	struct np_bpf_policy *pol;
	__u32 src = np_task_cpu(p), dst = (__u32)dest_cpu;
	struct cgroup *cg;
	__u64 now;

	pol = np_workload_of(p, &cg);
	if (!pol)
		return 0;
	cnt = np_counters_of(pol->slot);
	if (!cnt)
		return 0;
	cnt->migrations++;
	st = bpf_map_lookup_elem(&np_cpu_topo, &src);
	dt = bpf_map_lookup_elem(&np_cpu_topo, &dst);
	if (st && dt) {
		if (st->node != dt->node)
			cnt->migrate_xnuma++;
		if (st->l3 != dt->l3)
			cnt->migrate_xl3++;
	}
	if (np_bpf_cpu_allowed(pol, dst))
		return 0;
	now = bpf_ktime_get_ns();
	if (now < pol->settle_until_ns || !np_persistent(p, now)) {
		cnt->transition++;
		return 0;
	}
	cnt->migrate_disallowed++;
	np_sample(cnt, pol->slot, NP_EV_MIGRATE_DISALLOWED, p, np_cgid(cg), dst,
		  pol->gen, src, now);
	return 0;
}

/* A cpu-clock sample of `p` (workload `pol`, or none) on `cpu`, which
 * `own` owns: intruder time, user task or kernel thread. */
static __always_inline void np_tick_intrusion(struct np_bpf_owner *own,
					      struct np_bpf_policy *pol,
					      struct task_struct *p,
					      struct cgroup *cg, __u32 cpu)
{
	__u32 owner = own->slot_plus1 - 1;
	struct np_bpf_cpu_intrude *ci;
	struct np_bpf_counters *cnt;
	__u64 now;

	if (pol && (pol->flags & NP_BPF_POL_BE) &&
	    (own->flags & NP_BPF_OWNER_BE_OK))
		return;
	cnt = np_counters_of(owner);
	if (!cnt)
		return;
	now = bpf_ktime_get_ns();
	if (p->flags & NP_PF_KTHREAD) {
		/* counted, not reported (as its switches) */
		if (now < own->settle_until_ns)
			return;
		cnt->intrude_kthread_ticks++;
		ci = np_cpu_intrude_of(cpu, own, now);
		if (ci)
			ci->kthread_ticks++;
		return;
	}
	if (now < own->settle_until_ns || !np_persistent(p, now)) {
		cnt->transition++;
		return;
	}
	cnt->intrude_ticks++;
	ci = np_cpu_intrude_of(cpu, own, now);
	if (ci)
		ci->user_ticks++;
	np_intruder_seen(owner,
			 pol ? NP_BPF_INTRUDER_WORKLOAD : NP_BPF_INTRUDER_CGROUP,
			 p, np_cgid(cg), cpu, now, true);
}

/* Software cpu-clock sampler: time-weighted (a switch count is not time). */
SEC("perf_event")
int np_tick(void *ctx)
{
	struct task_struct *p = bpf_get_current_task_btf();
	__u32 cpu = bpf_get_smp_processor_id();
	struct np_bpf_policy *pol;
	struct np_bpf_owner *own;
	struct cgroup *cg;

	if (p->pid == 0)
		return 0;
	pol = np_workload_of(p, &cg);
	if (pol && !np_bpf_cpu_allowed(pol, cpu))
		np_outside(pol, p, np_cgid(cg), cpu, true);
	own = bpf_map_lookup_elem(&np_cpu_owner, &cpu);
	if (own && own->slot_plus1 && !(pol && pol->slot + 1 == own->slot_plus1)) {
		np_tick_intrusion(own, pol, p, cg, cpu);
		if (!(pol && (pol->flags & NP_BPF_POL_BE) &&
		      (own->flags & NP_BPF_OWNER_BE_OK)))
			np_foreign_tick(own, cpu, p,
					(p->flags & NP_PF_KTHREAD)
						? NP_BPF_RUN_KTHREAD
						: NP_BPF_RUN_USER);
	}
	return 0;
}

/*
 * Interrupt time on exclusive CPUs. Entry: one ARRAY lookup (the CPU's
 * owner) and return when the CPU is not owned; else the entry time goes
 * into the CPU's np_cpu_intrude entry. Exit: the same lookup, then the
 * pair is counted for the owner, unless it started before the owner's
 * settle window ended (also an entry from before the owner changed: every
 * change sets a settle time at or after it). Hardirq handlers do not nest
 * and softirqs do not nest on one CPU; a hardirq inside a softirq has its
 * own start field.
 */
static __always_inline struct np_bpf_owner *np_owned(__u32 *cpu)
{
	struct np_bpf_owner *own;

	*cpu = bpf_get_smp_processor_id();
	own = bpf_map_lookup_elem(&np_cpu_owner, cpu);
	return own && own->slot_plus1 ? own : NULL;
}

static __always_inline void np_irq_enter(bool soft)
{
	struct np_bpf_cpu_intrude *ci;
	__u32 cpu;

	if (!np_owned(&cpu))
		return;
	ci = bpf_map_lookup_elem(&np_cpu_intrude, &cpu);
	if (!ci)
		return;
	if (soft)
		ci->softirq_start_ns = bpf_ktime_get_ns();
	else
		ci->hardirq_start_ns = bpf_ktime_get_ns();
}

static __always_inline void np_irq_leave(bool soft)
{
	struct np_bpf_owner *own;
	struct np_bpf_cpu_intrude *ci;
	struct np_bpf_counters *cnt;
	__u64 start, now, d;
	__u32 cpu;

	own = np_owned(&cpu);
	if (!own)
		return;
	ci = bpf_map_lookup_elem(&np_cpu_intrude, &cpu);
	if (!ci)
		return;
	start = soft ? ci->softirq_start_ns : ci->hardirq_start_ns;
	if (!start)
		return;
	if (soft)
		ci->softirq_start_ns = 0;
	else
		ci->hardirq_start_ns = 0;
	if (start < own->settle_until_ns)
		return;
	now = bpf_ktime_get_ns();
	d = now > start ? now - start : 0;
	ci = np_cpu_intrude_of(cpu, own, now);
	cnt = np_counters_of(own->slot_plus1 - 1);
	if (soft) {
		if (ci) {
			ci->softirq++;
			ci->softirq_ns += d;
		}
		if (cnt) {
			cnt->intrude_softirq++;
			cnt->intrude_softirq_ns += d;
		}
	} else {
		if (ci) {
			ci->hardirq++;
			ci->hardirq_ns += d;
		}
		if (cnt) {
			cnt->intrude_hardirq++;
			cnt->intrude_hardirq_ns += d;
		}
	}
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(np_irq_entry, int irq, struct irqaction *action)
{
	np_irq_enter(false);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(np_irq_exit, int irq, struct irqaction *action, int ret)
{
	np_irq_leave(false);
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(np_softirq_entry, unsigned int vec_nr)
{
	np_irq_enter(true);
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(np_softirq_exit, unsigned int vec_nr)
{
	np_irq_leave(true);
	return 0;
}

/* NUMA hinting fault of the current task (task_numa_fault is called from
 * do_numa_page / do_huge_pmd_numa_page in the faulting task). */
static __always_inline int np_numa_fault(int mem_node, int pages, int flags)
{
	struct task_struct *p = bpf_get_current_task_btf();
	struct np_bpf_counters *cnt;
	struct np_bpf_policy *pol;
	struct cgroup *cg;
	__u64 node = (__u32)mem_node;

	pol = np_workload_of(p, &cg);
	if (!pol)
		return 0;
	cnt = np_counters_of(pol->slot);
	if (!cnt || pages <= 0)
		return 0;
	cnt->faults++;
	if (flags & NP_TNF_FAULT_LOCAL)
		cnt->fault_pages_local += pages;
	else
		cnt->fault_pages_remote += pages;
	barrier_var(node);
	if (node < 64 && !((pol->mems >> node) & 1)) {
		cnt->fault_pages_outside_mems += pages;
		np_sample(cnt, pol->slot, NP_EV_FAULT_OUTSIDE, p, np_cgid(cg),
			  bpf_get_smp_processor_id(), pol->gen, (__u32)node,
			  bpf_ktime_get_ns());
	}
	return 0;
}

SEC("fentry/task_numa_fault")
int BPF_PROG(np_numa_fault_fentry, int last_cpupid, int mem_node, int pages,
	     int flags)
{
	return np_numa_fault(mem_node, pages, flags);
}

SEC("kprobe/task_numa_fault")
int BPF_KPROBE(np_numa_fault_kprobe, int last_cpupid, int mem_node, int pages,
	       int flags)
{
	return np_numa_fault(mem_node, pages, flags);
}

/* The kernel's NUMA balancer moving a managed task: it disagrees with the
 * placement (aux: 1 move, 2 swap, 3 stick). */
static __always_inline void np_balancer(struct task_struct *p, __u32 what,
					int src_cpu)
{
	struct np_bpf_counters *cnt;
	struct np_bpf_policy *pol;
	struct cgroup *cg;

	if (!p)
		return;
	pol = np_workload_of(p, &cg);
	if (!pol)
		return;
	cnt = np_counters_of(pol->slot);
	if (!cnt)
		return;
	if (what == 1)
		cnt->numa_move++;
	else if (what == 2)
		cnt->numa_swap++;
	else
		cnt->numa_stick++;
	np_sample(cnt, pol->slot, NP_EV_NUMA_BALANCER, p, np_cgid(cg),
		  (__u32)src_cpu,
		  pol->gen, what, bpf_ktime_get_ns());
}

SEC("tp_btf/sched_move_numa")
int BPF_PROG(np_sched_move_numa, struct task_struct *p, int src_cpu,
	     int dst_cpu)
{
	np_balancer(p, 1, src_cpu);
	return 0;
}

SEC("tp_btf/sched_swap_numa")
int BPF_PROG(np_sched_swap_numa, struct task_struct *src_tsk, int src_cpu,
	     struct task_struct *dst_tsk, int dst_cpu)
{
	np_balancer(src_tsk, 2, src_cpu);
	np_balancer(dst_tsk, 2, dst_cpu);
	return 0;
}

SEC("tp_btf/sched_stick_numa")
int BPF_PROG(np_sched_stick_numa, struct task_struct *src_tsk, int src_cpu,
	     struct task_struct *dst_tsk, int dst_cpu)
{
	np_balancer(src_tsk, 3, src_cpu);
	return 0;
}

/* Reconcile-time audit: every task of a managed workload, its CPU and
 * allowed mask, as the kernel has them. */
SEC("iter/task")
int np_audit(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *p = ctx->task;
	struct np_bpf_audit_rec rec = {};
	struct np_bpf_policy *pol;
	struct cgroup *cg;
	__u32 size;

	/* An exiting task or a zombie not yet reaped keeps the mask it had:
	 * a cpuset change skips it, and it never runs again. */
	if (!p || p->exit_state || (p->flags & NP_PF_EXITING))
		return 0;
	pol = np_workload_of(p, &cg);
	if (!pol)
		return 0;
	rec.pid = p->pid;
	rec.tgid = p->tgid;
	rec.cgid = np_cgid(cg);
	rec.slot = pol->slot;
	rec.cpu = np_task_cpu(p);
	rec.nr_cpus_allowed = p->nr_cpus_allowed;
	if (p->flags & NP_PF_KTHREAD)
		rec.flags |= NP_BPF_AUDIT_KTHREAD;
	/* A sleeping task's CPU is where it last ran, maybe before it was
	 * moved here: only a task on a CPU right now says where it runs. */
	if (p->on_cpu && !np_bpf_cpu_allowed(pol, rec.cpu))
		rec.flags |= NP_BPF_AUDIT_CPU_OUTSIDE;
	/* cpumask size is NR_CPUS of the running kernel */
	size = bpf_core_field_size(p->cpus_mask.bits);
	if (size > sizeof(rec.allowed))
		size = sizeof(rec.allowed);
	bpf_probe_read_kernel(rec.allowed, size & 0x3ff, p->cpus_ptr->bits);
	for (__u32 w = 0; w < NP_BPF_AUDIT_MASK_WORDS; w++) {
		__u64 valid;

		if (w * 64 >= np_nr_cpus)
			valid = 0;
		else if (w * 64 + 64 > np_nr_cpus)
			valid = (1ULL << (np_nr_cpus - w * 64)) - 1;
		else
			valid = ~0ULL;
		rec.allowed[w] &= valid;
		if (rec.allowed[w] & ~pol->cpus[w])
			rec.flags |= NP_BPF_AUDIT_MASK_OUTSIDE;
	}
	bpf_probe_read_kernel(rec.comm, sizeof(rec.comm), p->comm);
	bpf_seq_write(seq, &rec, sizeof(rec));
	return 0;
}
