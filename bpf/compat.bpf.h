/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kernel differences, one shim each, named after the kernel change it
 * papers over (the convention of bcc's core_fixes.bpf.h). The floor is
 * Linux 6.1 (Debian 12); the newest kernel checked is 6.18.
 *
 * Not used on purpose: kfuncs (bpf_task_under_cgroup, bpf_cgroup_ancestor,
 * bpf_cpumask_*, bpf_rcu_read_lock) are absent on 6.1; the classic
 * tracepoint structs (trace_event_raw_sched_migrate_task changed its comm
 * field to __data_loc in 6.18) are avoided by using tp_btf arguments.
 */
#ifndef NUMAPLACE_COMPAT_BPF_H
#define NUMAPLACE_COMPAT_BPF_H

#include <bpf/bpf_core_read.h>

/* include/linux/sched.h; not in BTF (a #define). */
#define NP_PF_KTHREAD 0x00200000
#define NP_PF_EXITING 0x00000004
/* include/linux/sched/numa_balancing.h; not in BTF (#defines). */
#define NP_TNF_MIGRATED 0x01
#define NP_TNF_FAULT_LOCAL 0x08

/*
 * The CPU a task is on (or was last on).
 * v5.16, commit bcf9033e5449 ("sched: move CPU field back into
 * thread_info if THREAD_INFO_IN_TASK"): task_struct::cpu moved to
 * thread_info::cpu on x86. Kernels before that keep it in task_struct.
 */
struct task_struct___pre516 {
	unsigned int cpu;
} __attribute__((preserve_access_index));

static __always_inline __u32 np_task_cpu(struct task_struct *p)
{
	if (bpf_core_field_exists(p->thread_info.cpu))
		return p->thread_info.cpu;
	return ((struct task_struct___pre516 *)p)->cpu;
}

/*
 * A task's cgroup v2 cgroup, by direct BTF dereference (PROBE_MEM loads,
 * ~100 ns cheaper per call than a BPF_CORE_READ chain on the dev box).
 * css_set::subsys[] shrank from 14 to 12 entries between 6.1 and 6.18, so
 * dfl_cgrp moved: the access is CO-RE-relocated (vmlinux.h types carry
 * preserve_access_index). On >= 6.2 task_struct::cgroups is __rcu, which a
 * non-sleepable tracing program may read (implicit RCU read section).
 */
static __always_inline struct cgroup *np_task_dfl_cgroup(struct task_struct *p)
{
	return p->cgroups->dfl_cgrp;
}

/*
 * The parent of a cgroup. cgroup::ancestors[] is a flexible array of
 * pointers, which the verifier does not let a BTF pointer index (only
 * flexible arrays of structs), and bpf_cgroup_ancestor() is a kfunc that
 * 6.1 lacks. cgroup::self.parent->cgroup is plain typed loads on every
 * kernel since cgroup v2 existed.
 */
static __always_inline struct cgroup *np_cgroup_parent(struct cgroup *c)
{
	struct cgroup_subsys_state *css = c->self.parent;

	return css ? css->cgroup : NULL;
}

/*
 * The NUMA hinting-fault hook: fentry where the kernel lets a trampoline
 * attach (Debian 6.1), a kprobe twin where it does not (fentry load fails
 * with EPERM under the dev machine's lockdown; kprobes need
 * CONFIG_KPROBES, which that machine lacks). task_numa_fault() has kept
 * the signature (int last_cpupid, int mem_node, int pages, int flags)
 * since v3.8; the loader enables one variant or none.
 */

#endif
