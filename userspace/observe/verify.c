// SPDX-License-Identifier: Apache-2.0
/*
 * numaplaced's placement verification: keeps the BPF policy maps equal to
 * the allocations, reads the counters every reconcile cycle and acts:
 *   - ran outside / migrated to a disallowed CPU / audit mismatch:
 *     re-verify and rewrite the workload's cpuset files, log task and CPU;
 *   - intrusions on an exclusive workload: report the intruders; with
 *     verify.on_intrusion = "partition", make the workload an isolated
 *     cpuset partition;
 *   - memory outside cpuset.mems (memory.numa_stat) or remote hinting
 *     faults above the threshold: report; with verify.on_remote_memory =
 *     "migrate", migrate its pages to its nodes (rate-limited).
 */
#include "basic/log.h"
#include "numaplace/bpf_load.h"
#include "numaplace/daemon.h"
#include "numaplace/numa_mem.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define NP_VERIFY_EVENTS 256

struct np_verify_event {
	double time; /* unix seconds */
	struct np_bpf_event e;
	char workload[NP_BPF_NAME_LEN];
};

/* Per slot: what the daemon last pushed and saw. */
struct slot_state {
	struct np_bpf_counters prev;  /* counter sums at the last check */
	struct np_bpf_counters total; /* violations since the slot was taken */
	uint64_t outside_mems_bytes;  /* memory.numa_stat, last check */
	double remote_ratio;          /* last cycle with enough faults */
	bool numa_stat_missing_said;
	time_t last_migrate;
	uint64_t settle_until_ns;
	bool pushed; /* policy written */
	np_cpuset cpus;
	int want; /* index into wants, -1 */
};

struct np_verify {
	struct np_bpf_loader *l;
	const struct np_bpf_maps *m;
	unsigned nslots;
	struct np_bpf_slot *table;
	struct slot_state *ss;
	bool *fresh;
	int *slot_of; /* per want */
	struct np_verify_wl *wants;
	int nwants;
	struct np_bpf_owner *owner; /* shadow of np_cpu_owner */
	int ncpu;
	struct np_verify_event ev[NP_VERIFY_EVENTS];
	int nev, evhead;
	uint64_t ev_dropped;
	struct {
		uint64_t rewrites, partitioned, migrations, reports;
	} act;
	char state[512];
	/* audit results of this cycle, per slot */
	uint32_t *audit_bad;
	struct np_bpf_audit_rec *audit_first;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static double real_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void verify_free(struct np_verify *v)
{
	if (!v)
		return;
	np_bpf_unload(v->l);
	free(v->table);
	free(v->ss);
	free(v->fresh);
	free(v->slot_of);
	free(v->wants);
	free(v->owner);
	free(v->audit_bad);
	free(v->audit_first);
	free(v);
}

/* The managed parent's cgroup id and level (the cgroup2 root is 0). */
static int parent_identity(struct np_daemon *d, uint64_t *id, uint32_t *level)
{
	struct stat st;
	const char *p = d->cfg.cgroup_parent;

	if (fstat(d->cg.parent_fd, &st))
		return -errno;
	*id = st.st_ino;
	*level = 1;
	for (; *p; p++)
		if (*p == '/')
			(*level)++;
	return 0;
}

/*
 * memory.numa_stat exists in a workload cgroup only when the memory
 * controller is enabled above it: write "+memory" to cgroup.subtree_control
 * from the hierarchy root down to the managed parent, like +cpuset.
 * Best effort: without it the residency check says what is missing.
 */
static void enable_memory_controller(struct np_daemon *d)
{
	char path[NP_PATH_MAX], *save = NULL, *tok;
	int dir = dup(d->cg.root_fd);

	snprintf(path, sizeof(path), "%s", d->cfg.cgroup_parent);
	tok = strtok_r(path, "/", &save);
	while (dir >= 0) {
		int fd = openat(dir, "cgroup.subtree_control",
				O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "+memory", 7) < 0)
			np_log(LOG_INFO,
			       "verify: +memory in %s%s/cgroup.subtree_control: "
			       "%s (memory.numa_stat checks need it)",
			       d->cg.path, tok ? "/..." : "", strerror(errno));
		if (fd >= 0)
			close(fd);
		if (!tok)
			break;
		fd = openat(dir, tok, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					      O_CLOEXEC);
		close(dir);
		dir = fd;
		tok = strtok_r(NULL, "/", &save);
	}
	if (dir >= 0)
		close(dir);
}

int np_verify_start(struct np_daemon *d)
{
	const struct np_verify_config *vc = &d->cfg.verify;
	struct np_bpf_load_opts o = {
		.pin_path = d->cfg.bpf_pin_path,
		.nslots = vc->max_workloads,
		.tick_hz = vc->tick_hz,
		.rate_burst = vc->sample_burst,
		.grace_ms = vc->grace_ms,
	};
	struct np_verify *v;
	char err[1024] = "";
	int r;

	if (vc->enabled == NP_VERIFY_OFF) {
		np_log(LOG_INFO, "verify: off (verify.enabled = \"off\")");
		return 0;
	}
	if (!d->cg_open || d->cfg.fake_cgroup_root) {
		np_log(LOG_INFO, "verify: off (%s)",
		       d->cg_open ? "fake cgroup tree: cgroup ids are not "
				    "kernel cgroup ids"
				  : "no cgroup tree");
		return 0;
	}
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if ((r = parent_identity(d, &o.parent_cgid, &o.parent_level)))
		goto fail;
	r = np_bpf_load(&v->l, &o, err, sizeof(err));
	if (r)
		goto fail;
	if (err[0])
		np_log(LOG_WARNING, "verify: %s", err);
	v->m = np_bpf_loader_maps(v->l);
	v->nslots = v->m->nslots;
	v->ncpu = d->topo->max_cpu < NP_BPF_MAX_CPUS ? d->topo->max_cpu
						      : NP_BPF_MAX_CPUS;
	v->table = calloc(v->nslots, sizeof(*v->table));
	v->ss = calloc(v->nslots, sizeof(*v->ss));
	v->fresh = calloc(v->nslots, sizeof(*v->fresh));
	v->owner = calloc((size_t)v->ncpu + 1, sizeof(*v->owner));
	v->audit_bad = calloc(v->nslots, sizeof(*v->audit_bad));
	v->audit_first = calloc(v->nslots, sizeof(*v->audit_first));
	if (!v->table || !v->ss || !v->fresh || !v->owner || !v->audit_bad ||
	    !v->audit_first) {
		r = -ENOMEM;
		goto fail;
	}
	/* Reconcile the pins of a previous run: keep the slot table (the
	 * counters of a workload that is still here go on), drop every policy
	 * and owner entry (the first sync writes them anew), and take the
	 * current sums as the baseline for deltas. */
	for (__u32 s = 0; s < v->nslots; s++) {
		if (bpf_map_lookup_elem(v->m->slots, &s, &v->table[s]))
			memset(&v->table[s], 0, sizeof(v->table[s]));
		v->ss[s].want = -1;
		if (v->table[s].flags & NP_BPF_SLOT_USED)
			np_bpf_counters_read(v->m, s, &v->ss[s].prev);
	}
	{
		__u64 key, next;
		void *prev = NULL;
		while (!bpf_map_get_next_key(v->m->policy, prev, &next)) {
			key = next;
			bpf_map_delete_elem(v->m->policy, &key);
			prev = NULL; /* restart: the key is gone */
		}
	}
	for (__u32 c = 0; c < NP_BPF_MAX_CPUS; c++) {
		struct np_bpf_owner none = {0};
		struct np_bpf_cpu_topo t = {0};
		bpf_map_update_elem(v->m->cpu_owner, &c, &none, BPF_ANY);
		if ((int)c < d->topo->max_cpu && d->topo->cpu[c].numa >= 0) {
			const struct np_cpu *pc = &d->topo->cpu[c];
			t.node = (__u32)pc->numa;
			t.l3 = pc->l3 >= 0 ? (__u32)pc->l3 : (__u32)pc->socket;
			bpf_map_update_elem(v->m->cpu_topo, &c, &t, BPF_ANY);
		}
	}
	np_bpf_info_update(v->l, (uint32_t)getpid());
	enable_memory_controller(d);
	{
		char list[1500] = "";
		for (int i = 0; i < NP_BPF_NSIGNALS; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list),
				 "%s%s %s", i ? "; " : "", np_bpf_signal_names[i],
				 np_bpf_signal_why(v->l, i));
		np_log(LOG_INFO, "verify: maps pinned in %s/%s; %s",
		       d->cfg.bpf_pin_path, NP_BPF_PIN_SUBDIR, list);
	}
	snprintf(v->state, sizeof(v->state), "active");
	d->verify = v;
	return 0;
fail:
	verify_free(v);
	if (vc->enabled == NP_VERIFY_ON) {
		np_log(LOG_ERR, "verify: %s (verify.enabled = \"on\")",
		       err[0] ? err : strerror(-r));
		return r;
	}
	np_log(LOG_WARNING,
	       "verify: not active: %s; placement is enforced but not "
	       "verified (set verify.enabled to \"off\" to silence this)",
	       err[0] ? err : strerror(-r));
	return 0;
}

void np_verify_stop(struct np_daemon *d)
{
	struct np_verify *v = d->verify;
	if (!v)
		return;
	np_bpf_info_update(v->l, 0);
	verify_free(v);
	d->verify = NULL;
}

static uint32_t want_flags(const struct np_daemon *d,
			   const struct np_verify_wl *w)
{
	const struct np_workload_alloc *a = &d->st.w[w->wl];
	uint32_t f = 0;

	if (w->exclusive)
		f |= NP_BPF_POL_EXCLUSIVE;
	if (a->qos_class == NP_QOS_BE)
		f |= NP_BPF_POL_BE;
	if (a->qos_class == NP_QOS_LSR)
		f |= NP_BPF_POL_LSR;
	if (a->req.partition)
		f |= NP_BPF_POL_PARTITION;
	return f;
}

void np_verify_sync(struct np_daemon *d, const struct np_verify_wl *w, int n)
{
	struct np_verify *v = d->verify;
	struct np_bpf_want *want = NULL;
	struct np_bpf_slot *old = NULL;
	struct np_bpf_owner *own = NULL;
	uint64_t now = mono_ns(), settle;
	int missing, k = 0;

	if (!v)
		return;
	settle = now + (uint64_t)d->cfg.verify.settle_ms * 1000000ULL;
	want = calloc((size_t)n + 1, sizeof(*want));
	old = malloc(sizeof(*old) * v->nslots);
	free(v->wants);
	free(v->slot_of);
	v->wants = calloc((size_t)n + 1, sizeof(*v->wants));
	v->slot_of = calloc((size_t)n + 1, sizeof(int));
	v->nwants = 0;
	if (!want || !old || !v->wants || !v->slot_of) {
		np_log(LOG_ERR, "verify: out of memory syncing the policy maps");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		struct stat st;
		const struct np_workload_alloc *a = &d->st.w[w[i].wl];
		/* the cgroup id is the inode of its directory */
		if (fstatat(d->cg.parent_fd, w[i].cgroup, &st, 0))
			continue;
		snprintf(want[k].name, sizeof(want[k].name), "%s", a->req.name);
		/* display only (the id is what matches): may be truncated */
		snprintf(want[k].cgroup, sizeof(want[k].cgroup), "%.127s",
			 w[i].cgroup);
		want[k].cgid = st.st_ino;
		want[k].cpus = w[i].cpus;
		want[k].mems = w[i].mems;
		want[k].flags = want_flags(d, &w[i]);
		v->wants[k] = w[i];
		k++;
	}
	v->nwants = k;
	memcpy(old, v->table, sizeof(*old) * v->nslots);
	missing = np_bpf_slots_assign(v->table, v->nslots, want, k, v->slot_of,
				      v->fresh);
	if (missing > 0)
		np_log(LOG_WARNING,
		       "verify: %d workload(s) not verified: the maps hold %u "
		       "(raise verify.max_workloads)",
		       missing, v->nslots);
	/* Slots given up: their policy entries go, their table entry is
	 * cleared in the pinned map. */
	for (__u32 s = 0; s < v->nslots; s++) {
		if ((old[s].flags & NP_BPF_SLOT_USED) &&
		    (!(v->table[s].flags & NP_BPF_SLOT_USED) || v->fresh[s] ||
		     old[s].cgid != v->table[s].cgid)) {
			__u64 id = old[s].cgid;
			bpf_map_delete_elem(v->m->policy, &id);
			v->ss[s].pushed = false;
		}
		if (!(v->table[s].flags & NP_BPF_SLOT_USED) &&
		    (old[s].flags & NP_BPF_SLOT_USED))
			bpf_map_update_elem(v->m->slots, &s, &v->table[s], BPF_ANY);
		v->ss[s].want = -1;
	}
	for (int i = 0; i < k; i++) {
		int s = v->slot_of[i];
		struct slot_state *ss;
		struct np_bpf_policy pol;
		__u64 id = want[i].cgid;
		bool changed;
		if (s < 0)
			continue;
		ss = &v->ss[s];
		ss->want = i;
		if (v->fresh[s]) {
			np_bpf_slot_reset(v->m, (uint32_t)s);
			memset(ss, 0, sizeof(*ss));
			ss->want = i;
		}
		changed = !ss->pushed || v->fresh[s] ||
			  !np_cpuset_equal(&ss->cpus, &want[i].cpus) ||
			  old[s].mems != want[i].mems ||
			  old[s].policy_flags != want[i].flags;
		if (!changed)
			continue;
		/* A new placement: its cgroups are rewritten now, so what
		 * happens in the next settle_ms is a transition, not drift. */
		ss->settle_until_ns = settle;
		ss->cpus = want[i].cpus;
		np_bpf_policy_make(&pol, &want[i].cpus, want[i].mems,
				   (uint32_t)s, v->table[s].gen, want[i].flags,
				   settle);
		if (bpf_map_update_elem(v->m->policy, &id, &pol, BPF_ANY) ||
		    bpf_map_update_elem(v->m->slots, &s, &v->table[s], BPF_ANY)) {
			np_log(LOG_ERR, "verify: policy of %s: %s", want[i].name,
			       strerror(errno));
			continue;
		}
		ss->pushed = true;
	}
	/* CPU owners: the CPUs of every exclusive container, also those of
	 * a workload whose other containers share a pool (the first
	 * workload that has a CPU owns it; exclusive sets do not overlap). */
	own = calloc((size_t)v->ncpu + 1, sizeof(*own));
	if (!own) {
		np_log(LOG_ERR, "verify: out of memory computing CPU owners");
		goto out;
	}
	for (int i = 0; i < k; i++) {
		const struct np_workload_alloc *a = &d->st.w[v->wants[i].wl];
		int s = v->slot_of[i];
		if (s < 0)
			continue;
		for (int ci = 0; ci < a->ncontainers; ci++) {
			if (!a->c[ci].exclusive)
				continue;
			NP_CPUSET_FOREACH(c, &a->c[ci].cpus)
			{
				if (c >= v->ncpu || own[c].slot_plus1)
					continue;
				own[c].slot_plus1 = (__u32)s + 1;
				own[c].flags = (want[i].flags & NP_BPF_POL_LSR)
						       ? NP_BPF_OWNER_BE_OK
						       : 0;
			}
		}
	}
	for (int c = 0; c < v->ncpu; c++) {
		struct np_bpf_owner o = own[c];
		__u32 key = (__u32)c;
		if (o.slot_plus1 == v->owner[c].slot_plus1 &&
		    o.flags == v->owner[c].flags)
			continue;
		o.settle_until_ns = settle;
		if (bpf_map_update_elem(v->m->cpu_owner, &key, &o, BPF_ANY))
			np_log(LOG_ERR, "verify: owner of CPU %d: %s", c,
			       strerror(errno));
		else
			v->owner[c] = o;
	}
	np_bpf_info_update(v->l, (uint32_t)getpid());
out:
	free(own);
	free(want);
	free(old);
}

/* ---- events ------------------------------------------------------------- */

static void on_event(const struct np_bpf_event *e, void *ctx)
{
	struct np_verify *v = ctx;
	struct np_verify_event *x;
	uint64_t now = mono_ns();
	int i = (v->evhead + v->nev) % NP_VERIFY_EVENTS;

	if (v->nev == NP_VERIFY_EVENTS)
		v->evhead = (v->evhead + 1) % NP_VERIFY_EVENTS;
	else
		v->nev++;
	x = &v->ev[i];
	x->e = *e;
	x->time = real_s() - (now > e->ts_ns ? (double)(now - e->ts_ns) / 1e9 : 0);
	x->workload[0] = 0;
	if (e->slot < v->nslots && (v->table[e->slot].flags & NP_BPF_SLOT_USED))
		snprintf(x->workload, sizeof(x->workload), "%s",
			 v->table[e->slot].name);
}

static const struct np_verify_event *last_event(const struct np_verify *v,
						uint32_t slot, uint32_t kind)
{
	for (int k = v->nev - 1; k >= 0; k--) {
		const struct np_verify_event *x =
			&v->ev[(v->evhead + k) % NP_VERIFY_EVENTS];
		if (x->e.slot == slot && x->e.kind == kind)
			return x;
	}
	return NULL;
}

static void event_detail(const struct np_verify_event *x, char *buf,
			 size_t len)
{
	switch (x->e.kind) {
	case NP_EV_RUN_OUTSIDE:
		snprintf(buf, len, "ran on CPU %u, outside its set", x->e.cpu);
		break;
	case NP_EV_INTRUSION:
		snprintf(buf, len, "%s task on its exclusive CPU %u",
			 np_bpf_intruder_kind_name(x->e.aux), x->e.cpu);
		break;
	case NP_EV_MIGRATE_DISALLOWED:
		snprintf(buf, len, "migrated from CPU %u to CPU %u, outside "
			 "its set", x->e.aux, x->e.cpu);
		break;
	case NP_EV_NUMA_BALANCER:
		snprintf(buf, len, "NUMA balancer %s it (from CPU %u)",
			 x->e.aux == 1 ? "moved" : x->e.aux == 2 ? "swapped"
								 : "could not move",
			 x->e.cpu);
		break;
	case NP_EV_FAULT_OUTSIDE:
		snprintf(buf, len, "hinting fault on a page of node %u, "
			 "outside its mems", x->e.aux);
		break;
	default:
		snprintf(buf, len, "kind %u", x->e.kind);
	}
}

uint64_t np_verify_samples_dropped(const struct np_daemon *d)
{
	return d->verify ? d->verify->ev_dropped : 0;
}

json_t *np_verify_events(struct np_daemon *d, int limit)
{
	struct np_verify *v = d->verify;
	json_t *a = json_array();
	int from;

	if (!v)
		return a;
	np_bpf_poll_events(v->l, on_event, v);
	if (limit <= 0 || limit > v->nev)
		limit = v->nev;
	from = v->nev - limit;
	for (int k = from; k < v->nev; k++) {
		const struct np_verify_event *x =
			&v->ev[(v->evhead + k) % NP_VERIFY_EVENTS];
		char det[160];
		event_detail(x, det, sizeof(det));
		json_array_append_new(
			a, json_pack("{s:f,s:s,s:s,s:I,s:i,s:s,s:i,s:i,s:s}",
				     "time", x->time, "kind",
				     np_bpf_event_kind_name(x->e.kind),
				     "workload", x->workload, "cgroup_id",
				     (json_int_t)x->e.cgid, "pid", (int)x->e.pid,
				     "comm", x->e.comm, "cpu", (int)x->e.cpu,
				     "gen", (int)x->e.gen, "detail", det));
	}
	return a;
}

/* ---- the check ---------------------------------------------------------- */

static void on_audit(const struct np_bpf_audit_rec *r, void *ctx)
{
	struct np_verify *v = ctx;
	if (r->slot >= v->nslots ||
	    !(r->flags & (NP_BPF_AUDIT_CPU_OUTSIDE | NP_BPF_AUDIT_MASK_OUTSIDE)))
		return;
	if (!v->audit_bad[r->slot]++)
		v->audit_first[r->slot] = *r;
}

/* A hand-written cpuset seen first by the counters, before the drift check
 * of the next cycle: it is drift all the same, logged and counted as such
 * (read uncached: the cycle's cached copy may predate the write). */
static void note_drift(struct np_daemon *d, const struct np_verify_wl *w)
{
	struct np_cgroup_state *st = malloc(sizeof(*st));
	char err[256];

	if (!st)
		return;
	if (!np_cgroup_inspect(&d->cg, w->cgroup, st, err, sizeof(err)) &&
	    (!np_cpuset_equal(&st->cpus, &w->cpus) || st->mems != w->mems))
		np_daemon_drift(d, w->cgroup, &st->cpus, &w->cpus,
				" (found by verification)");
	free(st);
}

/* Rewrite one workload's cpuset files with what it should have. */
static int rewrite(struct np_daemon *d, const struct np_verify_wl *w,
		   const char *why)
{
	char err[1024], *cs;
	int r;

	note_drift(d, w);
	cs = np_cpuset_str(&w->cpus);
	r = np_cgroup_write_cpus(&d->cg, w->cgroup, &w->cpus, NULL, err,
				 sizeof(err));
	if (r >= 0)
		r = np_cgroup_write_mems(&d->cg, w->cgroup, w->mems, NULL, err,
					 sizeof(err));
	if (r < 0)
		np_log(LOG_ERR, "verify: %s: rewriting cpuset of %s: %s", why,
		       w->cgroup, err);
	else
		np_log(LOG_WARNING, "verify: %s; cpuset.cpus of %s rewritten "
		       "to %s", why, w->cgroup, cs ? cs : "?");
	free(cs);
	d->verify->act.rewrites++;
	return r;
}

static void report_intruders(struct np_daemon *d, uint32_t slot,
			     const struct np_bpf_counters *dl)
{
	struct np_verify *v = d->verify;
	struct np_bpf_intruder top[16];
	char list[600] = "";
	int n = np_bpf_intruders_top(v->m, slot, top, 16), shown = 0;

	for (int i = 0; i < n && shown < 3; i++) {
		/* kernel threads are counted, not reported */
		if (top[i].key.kind == NP_BPF_INTRUDER_KTHREAD)
			continue;
		shown++;
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
	np_log(LOG_WARNING,
	       "verify: intrusion on %s's exclusive CPUs: %llu switch(es) from "
	       "other workloads, %llu from other cgroups, %llu intruder "
	       "tick(s); top: %s",
	       v->table[slot].name, (unsigned long long)dl->intrude_workload,
	       (unsigned long long)dl->intrude_cgroup,
	       (unsigned long long)dl->intrude_ticks, list[0] ? list : "-");
	v->act.reports++;
}

static void make_partition(struct np_daemon *d, const struct np_verify_wl *w)
{
	struct np_workload_alloc *a = &d->st.w[w->wl];

	if (a->req.partition || !w->exclusive)
		return;
	a->req.partition = true;
	d->dirty = true;
	d->verify->act.partitioned++;
	np_log(LOG_WARNING,
	       "verify: %s becomes an isolated cpuset partition "
	       "(verify.on_intrusion = \"partition\")",
	       a->req.name);
}

static void memory_check(struct np_daemon *d, uint32_t s,
			 const struct np_verify_wl *w,
			 const struct np_bpf_counters *dl)
{
	const struct np_verify_config *vc = &d->cfg.verify;
	struct np_verify *v = d->verify;
	struct slot_state *ss = &v->ss[s];
	struct np_numa_stat ns;
	uint64_t fpages = dl->fault_pages_local + dl->fault_pages_remote;
	bool flagged = false;
	char err[512];
	int fd;

	fd = openat(d->cg.parent_fd, w->cgroup,
		    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (np_numa_stat_read(fd, &ns, err, sizeof(err)) == 0) {
		ss->outside_mems_bytes = np_numa_stat_outside(&ns, w->mems);
		if (ss->outside_mems_bytes >= vc->outside_mems_bytes &&
		    ss->outside_mems_bytes) {
			char nodes[64];
			np_nodemask_format(w->mems, nodes, sizeof(nodes));
			np_log(LOG_WARNING,
			       "verify: %s has %llu KiB resident outside its "
			       "memory nodes %s (memory.numa_stat)",
			       v->table[s].name,
			       (unsigned long long)(ss->outside_mems_bytes >> 10),
			       nodes);
			v->act.reports++;
			flagged = true;
		}
	} else if (!ss->numa_stat_missing_said) {
		ss->numa_stat_missing_said = true;
		np_log(LOG_INFO, "verify: %s: %s", v->table[s].name, err);
	}
	if (fpages >= vc->min_fault_pages && fpages) {
		ss->remote_ratio = (double)dl->fault_pages_remote / (double)fpages;
		if (ss->remote_ratio >= vc->remote_fault_ratio &&
		    dl->fault_pages_remote) {
			np_log(LOG_WARNING,
			       "verify: %s: %.0f%% of its NUMA hinting-fault "
			       "pages were remote this cycle (%llu of %llu; "
			       "%llu on nodes outside its mems)",
			       v->table[s].name, 100 * ss->remote_ratio,
			       (unsigned long long)dl->fault_pages_remote,
			       (unsigned long long)fpages,
			       (unsigned long long)dl->fault_pages_outside_mems);
			v->act.reports++;
			flagged = true;
		}
	}
	if (flagged && vc->on_remote_memory == NP_ACT_MIGRATE &&
	    time(NULL) - ss->last_migrate >= (time_t)vc->migrate_interval_s) {
		struct np_migrate_result res;
		np_nodemask from = d->topo->numa_mask & ~w->mems;
		int r;
		ss->last_migrate = time(NULL);
		r = np_numa_migrate_cgroup(fd, from, w->mems, &res, err,
					   sizeof(err));
		v->act.migrations++;
		if (r < 0)
			np_log(LOG_ERR, "verify: migrating %s's pages: %s",
			       v->table[s].name, err);
		else
			np_log(LOG_WARNING,
			       "verify: migrated %s's pages to its memory nodes "
			       "(%d task(s), %ld page(s) not moved; "
			       "verify.on_remote_memory = \"migrate\")",
			       v->table[s].name, res.pids_done,
			       (long)res.pages_not_moved);
	}
	close(fd);
}

void np_verify_check(struct np_daemon *d)
{
	struct np_verify *v = d->verify;
	uint64_t now = mono_ns();

	if (!v)
		return;
	np_bpf_poll_events(v->l, on_event, v);
	memset(v->audit_bad, 0, sizeof(*v->audit_bad) * v->nslots);
	np_bpf_audit(v->l, on_audit, v);
	for (int i = 0; i < v->nwants; i++) {
		int s = v->slot_of[i];
		const struct np_verify_wl *w = &v->wants[i];
		struct np_bpf_counters cur, dl;
		struct slot_state *ss;
		const struct np_verify_event *x;
		char why[512], last[64];
		if (s < 0)
			continue;
		ss = &v->ss[s];
		if (np_bpf_counters_read(v->m, (uint32_t)s, &cur))
			continue;
		np_bpf_counters_delta(&dl, &cur, &ss->prev);
		ss->prev = cur;
		{
			__u64 *t = (__u64 *)&ss->total, *x2 = (__u64 *)&dl;
			for (size_t k = 0; k < NP_BPF_NCOUNTERS; k++)
				t[k] += x2[k];
		}
		v->ev_dropped += dl.samples_dropped;
		if (dl.run_outside || dl.run_outside_ticks ||
		    dl.migrate_disallowed) {
			x = last_event(v, (uint32_t)s, NP_EV_RUN_OUTSIDE);
			if (!x)
				x = last_event(v, (uint32_t)s,
					       NP_EV_MIGRATE_DISALLOWED);
			last[0] = '\0';
			if (x)
				snprintf(last, sizeof(last),
					 " (last: '%.16s' on CPU %u)", x->e.comm,
					 x->e.cpu);
			snprintf(why, sizeof(why),
				 "%s ran outside its CPUs: %llu switch(es), "
				 "%llu tick(s), %llu migration(s) to a "
				 "disallowed CPU%s",
				 v->table[s].name,
				 (unsigned long long)dl.run_outside,
				 (unsigned long long)dl.run_outside_ticks,
				 (unsigned long long)dl.migrate_disallowed,
				 last);
			rewrite(d, w, why);
		} else if (v->audit_bad[s] && now >= ss->settle_until_ns) {
			const struct np_bpf_audit_rec *r = &v->audit_first[s];
			np_cpuset allowed;
			char *al;
			np_cpuset_zero(&allowed);
			memcpy(allowed.w, r->allowed, sizeof(r->allowed));
			al = np_cpuset_str(&allowed);
			snprintf(why, sizeof(why),
				 "audit: %u task(s) of %s outside its CPUs "
				 "(pid %u '%.16s' %s CPU %u, allowed %s)",
				 v->audit_bad[s], v->table[s].name, r->pid,
				 r->comm,
				 (r->flags & NP_BPF_AUDIT_CPU_OUTSIDE)
					 ? "on"
					 : "last on",
				 r->cpu, al ? al : "?");
			free(al);
			rewrite(d, w, why);
		}
		if (dl.intrude_workload || dl.intrude_cgroup || dl.intrude_ticks) {
			report_intruders(d, (uint32_t)s, &dl);
			if (d->cfg.verify.on_intrusion == NP_ACT_PARTITION)
				make_partition(d, w);
		}
		if (dl.numa_move || dl.numa_swap || dl.numa_stick) {
			np_log(LOG_NOTICE,
			       "verify: the kernel's NUMA balancer disagrees "
			       "with %s's placement: %llu move(s), %llu "
			       "swap(s), %llu stick(s)",
			       v->table[s].name,
			       (unsigned long long)dl.numa_move,
			       (unsigned long long)dl.numa_swap,
			       (unsigned long long)dl.numa_stick);
			v->act.reports++;
		}
		memory_check(d, (uint32_t)s, w, &dl);
	}
}

json_t *np_verify_status(struct np_daemon *d)
{
	struct np_verify *v = d->verify;
	json_t *o, *ws;
	char pin[NP_PATH_MAX + 8];

	np_bpf_pin_dir(pin, sizeof(pin), d->cfg.bpf_pin_path);
	if (!v)
		return json_pack("{s:s,s:s}", "state",
				 d->cfg.verify.enabled == NP_VERIFY_OFF
					 ? "off: verify.enabled is \"off\""
					 : "off: not loaded (see the log)",
				 "pin_dir", pin);
	ws = json_object();
	for (int i = 0; i < v->nwants; i++) {
		int s = v->slot_of[i];
		const struct slot_state *ss;
		const struct np_bpf_counters *t;
		if (s < 0)
			continue;
		ss = &v->ss[s];
		t = &ss->total;
		json_object_set_new(
			ws, v->table[s].name,
			json_pack("{s:i,s:i,s:b,s:I,s:I,s:I,s:I,s:I,s:f,s:I}",
				  "slot", s, "gen", (int)v->table[s].gen,
				  "violation", np_bpf_counters_any_violation(t),
				  "run_outside", (json_int_t)t->run_outside,
				  "run_outside_ticks",
				  (json_int_t)t->run_outside_ticks, "intrusions",
				  (json_int_t)(t->intrude_workload +
					       t->intrude_cgroup),
				  "migrate_disallowed",
				  (json_int_t)t->migrate_disallowed, "transition",
				  (json_int_t)t->transition,
				  "remote_fault_ratio", ss->remote_ratio,
				  "outside_mems_bytes",
				  (json_int_t)ss->outside_mems_bytes));
	}
	o = json_pack("{s:s,s:s,s:o,s:{s:I,s:I,s:I,s:I},s:o,s:I}", "state",
		      v->state, "pin_dir", pin, "signals",
		      np_bpf_signals_json(v->l), "actions", "rewrites",
		      (json_int_t)v->act.rewrites, "partitioned",
		      (json_int_t)v->act.partitioned, "migrations",
		      (json_int_t)v->act.migrations, "reports",
		      (json_int_t)v->act.reports, "workloads", ws,
		      "samples_dropped", (json_int_t)v->ev_dropped);
	return o;
}
