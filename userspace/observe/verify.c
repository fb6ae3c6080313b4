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
#include "verify_internal.h"
#include "basic/log.h"
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

uint64_t np_verify_mono_ns(void)
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
static int parent_identity(const struct np_verify_setup *su, uint64_t *id,
			   uint32_t *level)
{
	struct stat st;
	const char *p = su->cgroup_parent;

	if (fstat(su->parent_fd, &st))
		return -errno;
	*id = st.st_ino;
	*level = 1;
	for (; *p; p++)
		if (*p == '/')
			(*level)++;
	return 0;
}

/* Reconcile the pins of a previous run: keep the slot table (the counters
 * of a workload that is still here go on), drop every policy and owner
 * entry (the first sync writes them anew), and take the current sums as
 * the baseline for deltas. */
static void adopt_pins(struct np_verify *v)
{
	__u64 key, next;
	void *prev = NULL;

	for (__u32 s = 0; s < v->nslots; s++) {
		if (bpf_map_lookup_elem(v->m->slots, &s, &v->table[s]))
			memset(&v->table[s], 0, sizeof(v->table[s]));
		v->ss[s].want = -1;
		if (v->table[s].flags & NP_BPF_SLOT_USED)
			np_bpf_counters_read(v->m, s, &v->ss[s].prev);
	}
	while (!bpf_map_get_next_key(v->m->policy, prev, &next)) {
		key = next;
		bpf_map_delete_elem(v->m->policy, &key);
		prev = NULL; /* restart: the key is gone */
	}
	for (__u32 c = 0; c < NP_BPF_MAX_CPUS; c++) {
		struct np_bpf_owner none = {0};
		struct np_bpf_cpu_topo t = {0};
		bpf_map_update_elem(v->m->cpu_owner, &c, &none, BPF_ANY);
		if ((int)c < v->topo->max_cpu && v->topo->cpu[c].numa >= 0) {
			const struct np_cpu *pc = &v->topo->cpu[c];
			t.node = (__u32)pc->numa;
			t.l3 = pc->l3 >= 0 ? (__u32)pc->l3 : (__u32)pc->socket;
			bpf_map_update_elem(v->m->cpu_topo, &c, &t, BPF_ANY);
		}
	}
}

static int verify_alloc(struct np_verify *v)
{
	v->m = np_bpf_loader_maps(v->l);
	v->nslots = v->m->nslots;
	v->ncpu = v->topo->max_cpu < NP_BPF_MAX_CPUS ? v->topo->max_cpu
						      : NP_BPF_MAX_CPUS;
	v->table = calloc(v->nslots, sizeof(*v->table));
	v->ss = calloc(v->nslots, sizeof(*v->ss));
	v->fresh = calloc(v->nslots, sizeof(*v->fresh));
	v->owner = calloc((size_t)v->ncpu + 1, sizeof(*v->owner));
	v->audit_bad = calloc(v->nslots, sizeof(*v->audit_bad));
	v->audit_first = calloc(v->nslots, sizeof(*v->audit_first));
	if (!v->table || !v->ss || !v->fresh || !v->owner || !v->audit_bad ||
	    !v->audit_first)
		return -ENOMEM;
	return 0;
}

int np_verify_start(struct np_verify **out, const struct np_verify_setup *su)
{
	const struct np_verify_config *vc = su->cfg;
	struct np_bpf_load_opts o = {
		.pin_path = su->pin_path,
		.nslots = vc->max_workloads,
		.tick_hz = vc->tick_hz,
		.rate_burst = vc->sample_burst,
		.grace_ms = vc->grace_ms,
	};
	struct np_verify *v;
	char err[1024] = "";
	int r;

	*out = NULL;
	if (vc->enabled == NP_VERIFY_OFF) {
		np_log(LOG_INFO, "verify: off (verify.enabled = \"off\")");
		return 0;
	}
	if (su->parent_fd < 0 || su->fake) {
		np_log(LOG_INFO, "verify: off (%s)",
		       su->parent_fd >= 0 ? "fake cgroup tree: cgroup ids are "
					    "not kernel cgroup ids"
					  : "no cgroup tree");
		return 0;
	}
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->cfg = vc;
	v->topo = su->topo;
	v->parent_fd = su->parent_fd;
	v->root_fd = su->root_fd;
	v->cgroup_parent = su->cgroup_parent ? su->cgroup_parent : "";
	if ((r = parent_identity(su, &o.parent_cgid, &o.parent_level)))
		goto fail;
	r = np_bpf_load(&v->l, &o, err, sizeof(err));
	if (r)
		goto fail;
	if (err[0])
		np_log(LOG_WARNING, "verify: %s", err);
	if ((r = verify_alloc(v)))
		goto fail;
	adopt_pins(v);
	np_bpf_info_update(v->l, (uint32_t)getpid());
	{
		char list[1500] = "";
		for (int i = 0; i < NP_BPF_NSIGNALS; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list),
				 "%s%s %s", i ? "; " : "", np_bpf_signal_names[i],
				 np_bpf_signal_why(v->l, i));
		np_log(LOG_INFO, "verify: maps pinned in %s/%s; %s",
		       su->pin_path, NP_BPF_PIN_SUBDIR, list);
	}
	snprintf(v->state, sizeof(v->state), "active");
	*out = v;
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

void np_verify_stop(struct np_verify *v)
{
	if (!v)
		return;
	np_bpf_info_update(v->l, 0);
	verify_free(v);
}

void np_verify_applied(struct np_verify *v)
{
	uint64_t settle;

	if (!v || !v->in_flight)
		return;
	v->in_flight = false;
	settle = np_verify_mono_ns() + (uint64_t)v->cfg->settle_ms * 1000000ULL;
	for (__u32 s = 0; s < v->nslots; s++) {
		struct slot_state *ss = &v->ss[s];
		struct np_bpf_policy pol;
		__u64 id = v->table[s].cgid;
		if (!ss->pushed || ss->settle_until_ns != v->last_settle ||
		    !(v->table[s].flags & NP_BPF_SLOT_USED))
			continue;
		/* only the daemon writes np_policy: read, restamp, write */
		if (bpf_map_lookup_elem(v->m->policy, &id, &pol))
			continue; /* not pushed after all: nothing to restamp */
		pol.settle_until_ns = settle;
		if (bpf_map_update_elem(v->m->policy, &id, &pol, BPF_EXIST))
			np_log_errno(LOG_ERR, -errno, "verify: settle window of %s",
				     v->table[s].name);
		else
			ss->settle_until_ns = settle;
	}
	for (int c = 0; c < v->ncpu; c++) {
		struct np_bpf_owner o = v->owner[c];
		__u32 key = (__u32)c;
		if (o.settle_until_ns != v->last_settle)
			continue;
		o.settle_until_ns = settle;
		if (bpf_map_update_elem(v->m->cpu_owner, &key, &o, BPF_ANY))
			np_log_errno(LOG_ERR, -errno,
				     "verify: settle window of CPU %d", c);
		else
			v->owner[c] = o;
	}
}

/* CPU owners: the CPUs each workload holds exclusively, also those of a
 * workload whose other containers share a pool (the first workload that
 * has a CPU owns it; exclusive sets do not overlap). */
static void push_owners(struct np_verify *v, const struct np_bpf_want *want,
			int k, uint64_t settle)
{
	struct np_bpf_owner *own = calloc((size_t)v->ncpu + 1, sizeof(*own));

	if (!own) {
		np_log(LOG_ERR, "verify: out of memory computing CPU owners");
		return;
	}
	for (int i = 0; i < k; i++) {
		int s = v->slot_of[i];
		if (s < 0)
			continue;
		NP_CPUSET_FOREACH(c, &v->wants[i].owned)
		{
			if (c >= v->ncpu || own[c].slot_plus1)
				continue;
			own[c].slot_plus1 = (__u32)s + 1;
			own[c].flags = (want[i].flags & NP_BPF_POL_LSR)
					       ? NP_BPF_OWNER_BE_OK
					       : 0;
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
			np_log_errno(LOG_ERR, -errno, "verify: owner of CPU %d", c);
		else
			v->owner[c] = o;
	}
	free(own);
}

/*
 * Workloads whose cgroup is not below the managed parent (containers',
 * named from the root): their levels go to the programs after their
 * np_policy entries, and when one got its entry since the last call the
 * programs' cache of cgroups without a workload is dropped, so that a
 * cgroup seen before its workload was registered (a runtime's init runs
 * before the hook admits it) is recognized from now on.
 */
static void push_outside(struct np_verify *v, int k)
{
	uint64_t levels = 0;
	int r;

	for (int i = 0; i < k; i++) {
		int s = v->slot_of[i], lv;

		if (s < 0 || !v->ss[s].pushed)
			continue;
		lv = np_bpf_outside_level(v->wants[i].cgroup, v->cgroup_parent);
		if (lv >= 0)
			levels |= np_bpf_level_bit(lv);
	}
	if (levels == v->outside_levels && !v->outside_new)
		return;
	r = np_bpf_outside_set(v->l, levels);
	if (r) {
		np_log_errno(LOG_ERR, r,
			     "verify: the levels of the workloads outside %s "
			     "(retried next cycle)",
			     v->cgroup_parent);
		return;
	}
	v->outside_levels = levels;
	v->outside_new = false;
}

void np_verify_sync(struct np_verify *v, const struct np_verify_wl *w, int n)
{
	struct np_bpf_want *want = NULL;
	struct np_bpf_slot *old = NULL;
	uint64_t now = np_verify_mono_ns(), settle;
	int missing, k = 0;

	if (!v)
		return;
	/* Until np_verify_applied says the cgroups are written, however long
	 * that takes; at most NP_VERIFY_APPLY_BOUND_NS more if it never does. */
	settle = now + NP_VERIFY_APPLY_BOUND_NS +
		 (uint64_t)v->cfg->settle_ms * 1000000ULL;
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
		/* the cgroup id is the inode of its directory */
		if (np_verify_stat_cgroup(v, w[i].cgroup, &st))
			continue;
		snprintf(want[k].name, sizeof(want[k].name), "%s", w[i].name);
		/* display only (the id is what matches): may be truncated */
		snprintf(want[k].cgroup, sizeof(want[k].cgroup), "%.127s",
			 w[i].cgroup);
		want[k].cgid = st.st_ino;
		want[k].cpus = w[i].cpus;
		want[k].mems = w[i].mems;
		want[k].flags = w[i].flags;
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
		 * happens until settle_ms after that is a transition, not
		 * drift. */
		np_bpf_policy_make(&pol, &want[i].cpus, want[i].mems,
				   (uint32_t)s, v->table[s].gen, want[i].flags,
				   settle);
		if (bpf_map_update_elem(v->m->policy, &id, &pol, BPF_ANY) ||
		    bpf_map_update_elem(v->m->slots, &s, &v->table[s], BPF_ANY)) {
			np_log_errno(LOG_ERR, -errno, "verify: policy of %s",
				     want[i].name);
			continue; /* pushed again next cycle */
		}
		if (!ss->pushed && np_bpf_outside_level(v->wants[i].cgroup,
							v->cgroup_parent) >= 0)
			v->outside_new = true;
		/* recorded once in the map: the next sync compares with it */
		ss->settle_until_ns = settle;
		ss->cpus = want[i].cpus;
		ss->pushed = true;
	}
	push_outside(v, k);
	push_owners(v, want, k, settle);
	v->last_settle = settle;
	v->in_flight = true;
	np_bpf_info_update(v->l, (uint32_t)getpid());
out:
	free(want);
	free(old);
}

/* ---- events ------------------------------------------------------------- */

void np_verify_on_event(const struct np_bpf_event *e, void *ctx)
{
	struct np_verify *v = ctx;
	struct np_verify_event *x;
	uint64_t now = np_verify_mono_ns();
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

const struct np_verify_event *np_verify_last_event(const struct np_verify *v,
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

int np_verify_progs(const struct np_verify *v, struct np_bpf_prog_ref *out,
		    int max)
{
	return v ? np_bpf_prog_list(v->l, out, max) : 0;
}

uint64_t np_verify_samples_dropped(const struct np_verify *v)
{
	return v ? v->ev_dropped : 0;
}

void np_verify_count_action(struct np_verify *v, enum np_verify_action_kind k)
{
	if (!v)
		return;
	if (k == NP_VERIFY_REWRITE)
		v->act.rewrites++;
	else if (k == NP_VERIFY_PARTITIONED)
		v->act.partitioned++;
	else if (k == NP_VERIFY_MIGRATION)
		v->act.migrations++;
}

json_t *np_verify_events(struct np_verify *v, int limit)
{
	json_t *a = json_array();
	int from;

	if (!v)
		return a;
	np_bpf_poll_events(v->l, np_verify_on_event, v);
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

json_t *np_verify_status(struct np_verify *v,
			 const struct np_verify_config *cfg,
			 const char *pin_path)
{
	json_t *o, *ws;
	char pin[NP_PATH_MAX + 8];

	np_bpf_pin_dir(pin, sizeof(pin), pin_path);
	if (!v)
		return json_pack("{s:s,s:s}", "state",
				 cfg->enabled == NP_VERIFY_OFF
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
		json_t *wj;
		json_object_set_new(
			ws, v->table[s].name,
			wj = json_pack("{s:i,s:i,s:b,s:I,s:I,s:I,s:I,s:I,s:f,s:I}",
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
		json_object_set_new(
			wj, "intrusions_by_kind",
			json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "user",
				  (json_int_t)(t->intrude_workload +
					       t->intrude_cgroup),
				  "kthread", (json_int_t)t->intrude_kthread,
				  "hardirq", (json_int_t)t->intrude_hardirq,
				  "hardirq_ns", (json_int_t)t->intrude_hardirq_ns,
				  "softirq", (json_int_t)t->intrude_softirq,
				  "softirq_ns",
				  (json_int_t)t->intrude_softirq_ns));
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
