// SPDX-License-Identifier: Apache-2.0
/*
 * The verification check: once per cycle, the counters of every verified
 * workload (deltas since the last check), the audit of allowed masks and
 * memory.numa_stat, turned into findings. Nothing here writes a cgroup or
 * changes an allocation; the daemon decides what a finding leads to.
 */
#include "verify_internal.h"
#include "basic/log.h"
#include "numaplace/cleanup.h"
#include "numaplace/numa_mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

void np_findings_free(struct np_findings *fs)
{
	free(fs->f);
	memset(fs, 0, sizeof(*fs));
}

/* A new finding about want i (zeroed but for kind, workload, cgroup). */
static struct np_finding *add(struct np_findings *fs,
			      const struct np_verify_wl *w,
			      enum np_finding_kind kind)
{
	struct np_finding *f;

	if (fs->n == fs->cap) {
		int cap = fs->cap ? 2 * fs->cap : 8;
		struct np_finding *g = realloc(fs->f, sizeof(*g) * (size_t)cap);
		if (!g)
			return NULL;
		fs->f = g;
		fs->cap = cap;
	}
	f = &fs->f[fs->n++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->wl = w->wl;
	snprintf(f->workload, sizeof(f->workload), "%s", w->name);
	snprintf(f->cgroup, sizeof(f->cgroup), "%s", w->cgroup);
	f->cpus = w->cpus;
	f->mems = w->mems;
	return f;
}

static void on_audit(const struct np_bpf_audit_rec *r, void *ctx)
{
	struct np_verify *v = ctx;
	if (r->slot >= v->nslots ||
	    !(r->flags & (NP_BPF_AUDIT_CPU_OUTSIDE | NP_BPF_AUDIT_MASK_OUTSIDE)))
		return;
	if (!v->audit_bad[r->slot]++)
		v->audit_first[r->slot] = *r;
}

static void ran_outside(struct np_verify *v, struct np_findings *fs,
			uint32_t s, const struct np_verify_wl *w,
			const struct np_bpf_counters *dl)
{
	const struct np_verify_event *x;
	struct np_finding *f = add(fs, w, NP_FIND_RAN_OUTSIDE);
	char last[64] = "";

	if (!f)
		return;
	x = np_verify_last_event(v, s, NP_EV_RUN_OUTSIDE);
	if (!x)
		x = np_verify_last_event(v, s, NP_EV_MIGRATE_DISALLOWED);
	if (x) {
		snprintf(last, sizeof(last), " (last: '%.16s' on CPU %u)",
			 x->e.comm, x->e.cpu);
		f->pid = x->e.pid;
		f->cpu = x->e.cpu;
		snprintf(f->comm, sizeof(f->comm), "%.15s", x->e.comm);
	}
	f->n[0] = dl->run_outside;
	f->n[1] = dl->run_outside_ticks;
	f->n[2] = dl->migrate_disallowed;
	snprintf(f->what, sizeof(f->what),
		 "%s ran outside its CPUs: %llu switch(es), %llu tick(s), "
		 "%llu migration(s) to a disallowed CPU%s",
		 v->table[s].name, (unsigned long long)dl->run_outside,
		 (unsigned long long)dl->run_outside_ticks,
		 (unsigned long long)dl->migrate_disallowed, last);
}

static void audit_outside(struct np_verify *v, struct np_findings *fs,
			  uint32_t s, const struct np_verify_wl *w)
{
	const struct np_bpf_audit_rec *r = &v->audit_first[s];
	struct np_finding *f = add(fs, w, NP_FIND_AUDIT_OUTSIDE);
	np_cpuset allowed;
	char *al;

	if (!f)
		return;
	np_cpuset_zero(&allowed);
	memcpy(allowed.w, r->allowed, sizeof(r->allowed));
	al = np_cpuset_str(&allowed);
	f->pid = r->pid;
	f->cpu = r->cpu;
	snprintf(f->comm, sizeof(f->comm), "%.15s", r->comm);
	f->n[0] = v->audit_bad[s];
	snprintf(f->what, sizeof(f->what),
		 "audit: %u task(s) of %s outside its CPUs (pid %u '%.16s' %s "
		 "CPU %u, allowed %s)",
		 v->audit_bad[s], v->table[s].name, r->pid, r->comm,
		 (r->flags & NP_BPF_AUDIT_CPU_OUTSIDE) ? "on" : "last on",
		 r->cpu, al ? al : "?");
	free(al);
}

/* " (also 5 kthread switch(es), 120 hardirq(s) in 0.4 ms, ...: host
 * isolation, IRQ affinity)": what no cpuset keeps away, this cycle. */
static void host_kinds(char *out, size_t len, const struct np_finding *f)
{
	size_t n = 0;

	out[0] = 0;
	if (f->kind_count[NP_BPF_IK_KTHREAD])
		n += (size_t)snprintf(out + n, len - n, "%llu kthread switch(es)",
				      (unsigned long long)
					      f->kind_count[NP_BPF_IK_KTHREAD]);
	for (int k = NP_BPF_IK_HARDIRQ; k <= NP_BPF_IK_SOFTIRQ && n < len;
	     k++)
		if (f->kind_count[k])
			n += (size_t)snprintf(
				out + n, len - n, "%s%llu %s(s) in %.1f ms",
				n ? ", " : "",
				(unsigned long long)f->kind_count[k],
				np_bpf_intrude_kind_name((uint32_t)k),
				(double)f->kind_time[k] / 1e6);
}

static void intrusion(struct np_verify *v, struct np_findings *fs, uint32_t s,
		      const struct np_verify_wl *w,
		      const struct np_bpf_counters *dl)
{
	struct np_bpf_intruder top[16];
	struct np_finding *f = add(fs, w, NP_FIND_INTRUSION);
	char list[600] = "", host[160];
	struct np_bpf_kinds k;
	int n = np_bpf_intruders_top(v->m, s, top, 16), shown = 0;

	if (!f)
		return;
	for (int i = 0; i < n && shown < 3; i++) {
		/* kernel threads are counted, not reported */
		if (top[i].key.kind == NP_BPF_INTRUDER_KTHREAD)
			continue;
		if (!shown++) {
			f->pid = top[i].val.last_pid;
			f->cpu = top[i].val.last_cpu;
			f->intruder_kind = top[i].key.kind;
			snprintf(f->comm, sizeof(f->comm), "%.15s",
				 top[i].key.comm);
		}
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%s'%.16s' (%s, cgroup id %llu, pid %u, CPU %u) %llu "
			 "switch(es), %llu tick(s)",
			 list[0] ? ", " : "", top[i].key.comm,
			 np_bpf_intruder_kind_name(top[i].key.kind),
			 (unsigned long long)top[i].key.cgid,
			 top[i].val.last_pid, top[i].val.last_cpu,
			 (unsigned long long)top[i].val.switches,
			 (unsigned long long)top[i].val.ticks);
	}
	f->n[0] = dl->intrude_workload;
	f->n[1] = dl->intrude_cgroup;
	f->n[2] = dl->intrude_ticks;
	np_bpf_kinds_of_counters(&k, dl);
	for (int i = 0; i < NP_BPF_IK_N; i++) {
		f->kind_count[i] = k.count[i];
		f->kind_time[i] = k.ticks[i] + k.ns[i]; /* one is 0 */
	}
	host_kinds(host, sizeof(host), f);
	/* a long list of intruders is cut (marked with "...") */
	if (snprintf(f->what, sizeof(f->what),
		 "intrusion on %s's exclusive CPUs: %llu switch(es) from other "
		 "workloads, %llu from other cgroups, %llu intruder tick(s) "
		 "(user tasks: a cpuset is wrong); top: %s%s%s%s",
		 v->table[s].name, (unsigned long long)dl->intrude_workload,
		 (unsigned long long)dl->intrude_cgroup,
		 (unsigned long long)dl->intrude_ticks, list[0] ? list : "-",
		 host[0] ? "; also " : "", host,
		 host[0] ? " (host isolation, IRQ affinity: not a cpuset)" : "") >=
	    (int)sizeof(f->what))
		memcpy(f->what + sizeof(f->what) - 4, "...", 4);
	v->act.reports++;
}

static void balancer(struct np_verify *v, struct np_findings *fs, uint32_t s,
		     const struct np_verify_wl *w,
		     const struct np_bpf_counters *dl)
{
	struct np_finding *f = add(fs, w, NP_FIND_NUMA_BALANCER);

	if (!f)
		return;
	f->n[0] = dl->numa_move;
	f->n[1] = dl->numa_swap;
	f->n[2] = dl->numa_stick;
	snprintf(f->what, sizeof(f->what),
		 "the kernel's NUMA balancer disagrees with %s's placement: "
		 "%llu move(s), %llu swap(s), %llu stick(s)",
		 v->table[s].name, (unsigned long long)dl->numa_move,
		 (unsigned long long)dl->numa_swap,
		 (unsigned long long)dl->numa_stick);
	v->act.reports++;
}

/* memory.numa_stat of the workload: resident outside its mems. */
static void outside_mems(struct np_verify *v, struct np_findings *fs,
			 uint32_t s, const struct np_verify_wl *w)
{
	struct slot_state *ss = &v->ss[s];
	_cleanup_close_ int fd = np_verify_open_cgroup(v, w->cgroup);
	struct np_numa_stat ns;
	struct np_finding *f;
	char err[512], nodes[64];

	if (fd < 0)
		return;
	if (np_numa_stat_read(fd, &ns, err, sizeof(err))) {
		if (!ss->numa_stat_missing_said) {
			ss->numa_stat_missing_said = true;
			np_log(LOG_INFO, "verify: %s: %s", v->table[s].name, err);
		}
		return;
	}
	ss->outside_mems_bytes = np_numa_stat_outside(&ns, w->mems);
	if (ss->outside_mems_bytes < v->cfg->outside_mems_bytes ||
	    !ss->outside_mems_bytes || !(f = add(fs, w, NP_FIND_OUTSIDE_MEMS)))
		return;
	np_nodemask_format(w->mems, nodes, sizeof(nodes));
	f->n[0] = ss->outside_mems_bytes;
	snprintf(f->what, sizeof(f->what),
		 "%s has %llu KiB resident outside its memory nodes %s "
		 "(memory.numa_stat)",
		 v->table[s].name,
		 (unsigned long long)(ss->outside_mems_bytes >> 10), nodes);
	v->act.reports++;
}

static void remote_faults(struct np_verify *v, struct np_findings *fs,
			  uint32_t s, const struct np_verify_wl *w,
			  const struct np_bpf_counters *dl)
{
	struct slot_state *ss = &v->ss[s];
	uint64_t fpages = dl->fault_pages_local + dl->fault_pages_remote;
	struct np_finding *f;

	if (fpages < v->cfg->min_fault_pages || !fpages)
		return;
	ss->remote_ratio = (double)dl->fault_pages_remote / (double)fpages;
	if (ss->remote_ratio < v->cfg->remote_fault_ratio ||
	    !dl->fault_pages_remote || !(f = add(fs, w, NP_FIND_REMOTE_FAULTS)))
		return;
	f->n[0] = dl->fault_pages_remote;
	f->n[1] = fpages;
	f->n[2] = dl->fault_pages_outside_mems;
	f->ratio = ss->remote_ratio;
	snprintf(f->what, sizeof(f->what),
		 "%s: %.0f%% of its NUMA hinting-fault pages were remote this "
		 "cycle (%llu of %llu; %llu on nodes outside its mems)",
		 v->table[s].name, 100 * ss->remote_ratio,
		 (unsigned long long)dl->fault_pages_remote,
		 (unsigned long long)fpages,
		 (unsigned long long)dl->fault_pages_outside_mems);
	v->act.reports++;
}

/* This cycle's counter deltas of slot s, added to its totals. */
static int deltas(struct np_verify *v, uint32_t s, struct np_bpf_counters *dl)
{
	struct slot_state *ss = &v->ss[s];
	struct np_bpf_counters cur;
	__u64 *t = (__u64 *)&ss->total, *x = (__u64 *)dl;

	if (np_bpf_counters_read(v->m, s, &cur))
		return -EIO;
	np_bpf_counters_delta(dl, &cur, &ss->prev);
	ss->prev = cur;
	for (size_t k = 0; k < NP_BPF_NCOUNTERS; k++)
		t[k] += x[k];
	v->ev_dropped += dl->samples_dropped;
	return 0;
}

int np_verify_check(struct np_verify *v, struct np_findings *fs)
{
	uint64_t now = np_verify_mono_ns();
	int n0 = fs->n;

	if (!v)
		return 0;
	np_bpf_poll_events(v->l, np_verify_on_event, v);
	memset(v->audit_bad, 0, sizeof(*v->audit_bad) * v->nslots);
	np_bpf_audit(v->l, on_audit, v);
	for (int i = 0; i < v->nwants; i++) {
		const struct np_verify_wl *w = &v->wants[i];
		struct np_bpf_counters dl;
		int s = v->slot_of[i];

		if (s < 0 || deltas(v, (uint32_t)s, &dl))
			continue;
		if (dl.run_outside || dl.run_outside_ticks ||
		    dl.migrate_disallowed)
			ran_outside(v, fs, (uint32_t)s, w, &dl);
		else if (v->audit_bad[s] && now >= v->ss[s].settle_until_ns)
			audit_outside(v, fs, (uint32_t)s, w);
		if (dl.intrude_workload || dl.intrude_cgroup || dl.intrude_ticks)
			intrusion(v, fs, (uint32_t)s, w, &dl);
		if (dl.numa_move || dl.numa_swap || dl.numa_stick)
			balancer(v, fs, (uint32_t)s, w, &dl);
		outside_mems(v, fs, (uint32_t)s, w);
		remote_faults(v, fs, (uint32_t)s, w, &dl);
	}
	return fs->n - n0;
}
