// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The floor of the bpf_stats figure (bench/bench_bpf.c): a sched_switch
 * program that does nothing. bpf_stats times each run with two clock reads
 * around the program, so an empty program does not measure 0 ns; attached
 * beside np_sched_switch during the same runs, it shows how much of that
 * program's figure is the measurement itself.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/sched_switch")
int BPF_PROG(np_bench_floor, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return 0;
}
