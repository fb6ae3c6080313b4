// SPDX-License-Identifier: Apache-2.0
/*
 * Verification maps from userspace (see include/numaplace/bpf_maps.h).
 */
#include "numaplace/bpf_maps.h"
#include "numaplace/error.h"
#include "numaplace/names.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(NP_BPF_MAX_CPUS == NP_MAX_CPUS,
	       "the BPF policy bitmap mirrors np_cpuset");
_Static_assert(sizeof(struct np_bpf_counters) % sizeof(__u64) == 0,
	       "counters are summed as an array of u64");
_Static_assert(sizeof(struct np_bpf_cpu_intrude) == 128,
	       "np_cpu_intrude entries are two cache lines");

const char *const np_bpf_counter_names[] = {
	"run_outside",	      "run_outside_ticks", "transition",
	"intrude_workload",   "intrude_cgroup",	   "intrude_kthread",
	"intrude_ticks",      "intrude_kthread_ticks", "intrude_hardirq",
	"intrude_hardirq_ns", "intrude_softirq",     "intrude_softirq_ns",
	"migrations",	   "migrate_xl3",
	"migrate_xnuma",      "migrate_disallowed", "faults",
	"fault_pages_local",  "fault_pages_remote", "fault_pages_outside_mems",
	"numa_move",	      "numa_swap",	   "numa_stick",
	"samples",	      "samples_dropped",
};
_Static_assert(sizeof(np_bpf_counter_names) / sizeof(np_bpf_counter_names[0]) ==
		       NP_BPF_NCOUNTERS,
	       "one name per counter");

void np_bpf_maps_init(struct np_bpf_maps *m)
{
	m->policy = m->cpu_owner = m->cpu_topo = m->counters = m->slots = -1;
	m->intruders = m->info = m->events = m->rate = m->cpu_intrude = -1;
	m->ncpus = 0;
	m->nslots = 0;
}

void np_bpf_maps_close(struct np_bpf_maps *m)
{
	int *fds[] = {&m->policy, &m->cpu_owner, &m->cpu_topo, &m->counters,
		      &m->slots,  &m->intruders, &m->info,     &m->events,
		      &m->rate,	  &m->cpu_intrude};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int np_bpf_pin_dir(char *out, size_t len, const char *pin_path)
{
	int n = snprintf(out, len, "%s/%s", pin_path, NP_BPF_PIN_SUBDIR);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int np_bpf_maps_open_pinned(struct np_bpf_maps *m, const char *dir, char *err,
			    size_t errlen)
{
	static const struct {
		const char *name;
		size_t off;
	} pins[] = {
		{NP_BPF_MAP_POLICY, offsetof(struct np_bpf_maps, policy)},
		{NP_BPF_MAP_CPU_OWNER, offsetof(struct np_bpf_maps, cpu_owner)},
		{NP_BPF_MAP_CPU_TOPO, offsetof(struct np_bpf_maps, cpu_topo)},
		{NP_BPF_MAP_COUNTERS, offsetof(struct np_bpf_maps, counters)},
		{NP_BPF_MAP_SLOTS, offsetof(struct np_bpf_maps, slots)},
		{NP_BPF_MAP_INTRUDERS, offsetof(struct np_bpf_maps, intruders)},
		{NP_BPF_MAP_INFO, offsetof(struct np_bpf_maps, info)},
		{NP_BPF_MAP_EVENTS, offsetof(struct np_bpf_maps, events)},
		{NP_BPF_MAP_RATE, offsetof(struct np_bpf_maps, rate)},
		{NP_BPF_MAP_CPU_INTRUDE,
		 offsetof(struct np_bpf_maps, cpu_intrude)},
	};
	struct bpf_map_info info;
	__u32 ilen = sizeof(info);
	char path[4096];
	int r;

	np_bpf_maps_init(m);
	for (size_t i = 0; i < sizeof(pins) / sizeof(pins[0]); i++) {
		int fd;
		snprintf(path, sizeof(path), "%s/%s", dir, pins[i].name);
		fd = bpf_obj_get(path);
		if (fd < 0) {
			r = -errno;
			snprintf(err, errlen,
				 "%s: %s (%s)", np_echo(path), strerror(-r),
				 r == -ENOENT ? "numaplaced has not loaded its "
						"BPF programs on this node, or "
						"bpf_pin_path differs"
				 : r == -EPERM || r == -EACCES
					 ? "reading the pinned maps needs root"
					 : "is bpffs mounted?");
			np_bpf_maps_close(m);
			return r;
		}
		*(int *)((char *)m + pins[i].off) = fd;
	}
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(m->counters, &info, &ilen)) {
		r = -errno;
		snprintf(err, errlen, "%s/%s: %s", dir, NP_BPF_MAP_COUNTERS,
			 strerror(-r));
		np_bpf_maps_close(m);
		return r;
	}
	if (info.value_size != sizeof(struct np_bpf_counters)) {
		snprintf(err, errlen,
			 "%s/%s: value size %u, this numaplace expects %zu "
			 "(pins of another numaplace version)",
			 dir, NP_BPF_MAP_COUNTERS, info.value_size,
			 sizeof(struct np_bpf_counters));
		np_bpf_maps_close(m);
		return -EPROTO;
	}
	m->nslots = info.max_entries;
	m->ncpus = libbpf_num_possible_cpus();
	if (m->ncpus <= 0) {
		r = m->ncpus ? m->ncpus : -EINVAL;
		snprintf(err, errlen, "possible CPUs: %s", strerror(-r));
		np_bpf_maps_close(m);
		return r;
	}
	return 0;
}

void np_bpf_policy_make(struct np_bpf_policy *out, const np_cpuset *cpus,
			np_nodemask mems, uint32_t slot, uint32_t gen,
			uint32_t flags, uint64_t settle_until_ns)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->cpus, cpus->w, sizeof(out->cpus));
	out->mems = mems;
	out->slot = slot;
	out->gen = gen;
	out->flags = flags;
	out->settle_until_ns = settle_until_ns;
}

uint64_t np_bpf_level_bit(int level)
{
	return 1ULL << (level < 0 ? 0 : level < 63 ? level : 63);
}

/* The next non-empty component of *p: its length (0: none), *p past it. */
static size_t next_component(const char **p, const char **start)
{
	size_t n;

	while (**p == '/')
		(*p)++;
	*start = *p;
	n = strcspn(*p, "/");
	*p += n;
	return n;
}

int np_bpf_outside_level(const char *cgroup, const char *parent)
{
	const char *c = cgroup, *p = parent, *cs, *ps;
	size_t cn, pn;
	int level = 0;
	bool below = true;

	if (*cgroup != '/')
		return -1;
	/* the parent's components first: a mismatch or the end of the path
	 * says the cgroup is not below it */
	while ((pn = next_component(&p, &ps))) {
		cn = next_component(&c, &cs);
		if (!cn)
			return level; /* the parent or one of its ancestors */
		level++;
		if (below && (cn != pn || memcmp(cs, ps, cn)))
			below = false;
	}
	if (below && next_component(&c, &cs))
		return -1;
	while (next_component(&c, &cs))
		level++;
	return level;
}

void np_bpf_counters_sum(struct np_bpf_counters *sum, const void *percpu,
			 int ncpus, size_t stride)
{
	__u64 *s = (__u64 *)sum;

	memset(sum, 0, sizeof(*sum));
	for (int c = 0; c < ncpus; c++) {
		const __u64 *v =
			(const __u64 *)((const char *)percpu + (size_t)c * stride);
		for (size_t k = 0; k < NP_BPF_NCOUNTERS; k++)
			s[k] += v[k];
	}
}

void np_bpf_counters_delta(struct np_bpf_counters *out,
			   const struct np_bpf_counters *now,
			   const struct np_bpf_counters *prev)
{
	const __u64 *n = (const __u64 *)now, *p = (const __u64 *)prev;
	__u64 *o = (__u64 *)out;

	for (size_t k = 0; k < NP_BPF_NCOUNTERS; k++)
		o[k] = n[k] >= p[k] ? n[k] - p[k] : n[k];
}

bool np_bpf_counters_any_violation(const struct np_bpf_counters *c)
{
	/* NUMA balancer events are reported, but the balancer only moves
	 * tasks within their allowed CPUs: not a placement violation. */
	return c->run_outside || c->run_outside_ticks || c->intrude_workload ||
	       c->intrude_cgroup || c->intrude_ticks || c->migrate_disallowed ||
	       c->fault_pages_outside_mems;
}

int np_bpf_counters_read(const struct np_bpf_maps *m, uint32_t slot,
			 struct np_bpf_counters *sum)
{
	size_t stride = (sizeof(struct np_bpf_counters) + 7) & ~(size_t)7;
	void *buf;
	int r = 0;

	if (slot >= m->nslots)
		return -ERANGE;
	buf = calloc((size_t)m->ncpus, stride);
	if (!buf)
		return -ENOMEM;
	if (bpf_map_lookup_elem(m->counters, &slot, buf))
		r = -errno;
	else
		np_bpf_counters_sum(sum, buf, m->ncpus, stride);
	free(buf);
	return r;
}

/* The np_cpu_intrude entries of an owner slot back to zero. */
static int cpu_intrude_reset(const struct np_bpf_maps *m, uint32_t slot)
{
	for (uint32_t c = 0; c < (uint32_t)m->ncpus && c < NP_BPF_MAX_CPUS;
	     c++) {
		struct np_bpf_cpu_intrude v;
		if (bpf_map_lookup_elem(m->cpu_intrude, &c, &v))
			return -errno;
		if (v.owner_slot_plus1 != slot + 1)
			continue;
		memset(&v, 0, sizeof(v));
		if (bpf_map_update_elem(m->cpu_intrude, &c, &v, BPF_ANY))
			return -errno;
	}
	return 0;
}

int np_bpf_slot_reset(const struct np_bpf_maps *m, uint32_t slot)
{
	size_t cs = (sizeof(struct np_bpf_counters) + 7) & ~(size_t)7;
	size_t rs = (sizeof(struct np_bpf_rate) + 7) & ~(size_t)7;
	void *buf;
	int r = 0;

	if (slot >= m->nslots)
		return -ERANGE;
	buf = calloc((size_t)m->ncpus, cs > rs ? cs : rs);
	if (!buf)
		return -ENOMEM;
	if (bpf_map_update_elem(m->counters, &slot, buf, BPF_ANY) ||
	    bpf_map_update_elem(m->rate, &slot, buf, BPF_ANY))
		r = -errno;
	free(buf);
	if (!r && m->cpu_intrude >= 0)
		r = cpu_intrude_reset(m, slot);
	return r;
}

int np_bpf_slots_assign(struct np_bpf_slot *table, unsigned nslots,
			const struct np_bpf_want *want, int n, int *out_slot,
			bool *fresh)
{
	bool *keep = calloc(nslots + 1, sizeof(bool));
	int missing = 0;
	unsigned next_free = 0;

	if (!keep)
		return -ENOMEM;
	for (unsigned s = 0; s < nslots; s++)
		fresh[s] = false;
	/* Same name and cgroup id: the same workload, counters go on. */
	for (int i = 0; i < n; i++) {
		out_slot[i] = -1;
		for (unsigned s = 0; s < nslots; s++) {
			if ((table[s].flags & NP_BPF_SLOT_USED) && !keep[s] &&
			    table[s].cgid == want[i].cgid &&
			    !strncmp(table[s].name, want[i].name,
				     sizeof(table[s].name))) {
				out_slot[i] = (int)s;
				keep[s] = true;
				break;
			}
		}
	}
	for (unsigned s = 0; s < nslots; s++)
		if (!keep[s] && (table[s].flags & NP_BPF_SLOT_USED))
			memset(&table[s], 0, sizeof(table[s]));
	for (int i = 0; i < n; i++) {
		struct np_bpf_slot *t;
		if (out_slot[i] < 0) {
			while (next_free < nslots &&
			       (table[next_free].flags & NP_BPF_SLOT_USED))
				next_free++;
			if (next_free == nslots) {
				missing++;
				continue;
			}
			out_slot[i] = (int)next_free;
			fresh[next_free] = true;
		}
		t = &table[out_slot[i]];
		if (fresh[out_slot[i]] || t->mems != want[i].mems ||
		    t->policy_flags != want[i].flags ||
		    t->ncpus != (uint32_t)np_cpuset_count(&want[i].cpus))
			t->gen++;
		t->flags = NP_BPF_SLOT_USED;
		t->cgid = want[i].cgid;
		t->mems = want[i].mems;
		t->policy_flags = want[i].flags;
		t->ncpus = (uint32_t)np_cpuset_count(&want[i].cpus);
		snprintf(t->name, sizeof(t->name), "%s", want[i].name);
		snprintf(t->cgroup, sizeof(t->cgroup), "%s", want[i].cgroup);
	}
	free(keep);
	return missing;
}

static int cmp_intruder(const void *a, const void *b)
{
	const struct np_bpf_intruder *x = a, *y = b;
	bool kx = x->key.kind == NP_BPF_INTRUDER_KTHREAD,
	     ky = y->key.kind == NP_BPF_INTRUDER_KTHREAD;
	/* kernel threads last: nothing can keep them away, so the tasks
	 * someone can act on come first */
	if (kx != ky)
		return kx ? 1 : -1;
	/* time first: a busy intruder may switch in only once */
	if (x->val.ticks != y->val.ticks)
		return x->val.ticks < y->val.ticks ? 1 : -1;
	if (x->val.switches != y->val.switches)
		return x->val.switches < y->val.switches ? 1 : -1;
	return strncmp(x->key.comm, y->key.comm, sizeof(x->key.comm));
}

int np_bpf_intruders_top(const struct np_bpf_maps *m, uint32_t slot,
			 struct np_bpf_intruder *out, int max)
{
	struct np_bpf_intruder_key k, next;
	struct np_bpf_intruder *all = NULL;
	int n = 0, cap = 0, r = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(m->intruders, prev, &next)) {
		struct np_bpf_intruder_val v;
		k = next;
		prev = &k;
		if (k.owner_slot != slot ||
		    bpf_map_lookup_elem(m->intruders, &k, &v))
			continue;
		if (n == cap) {
			struct np_bpf_intruder *g;
			cap = cap ? 2 * cap : 32;
			g = realloc(all, sizeof(*g) * (size_t)cap);
			if (!g) {
				r = -ENOMEM;
				goto out;
			}
			all = g;
		}
		all[n].key = k;
		all[n].val = v;
		n++;
	}
	if (n)
		qsort(all, (size_t)n, sizeof(*all), cmp_intruder);
	if (n > max)
		n = max;
	if (n)
		memcpy(out, all, sizeof(*all) * (size_t)n);
	r = n;
out:
	free(all);
	return r;
}

static const char *const intruder_kind_names[] = {
	[NP_BPF_INTRUDER_WORKLOAD] = "workload",
	[NP_BPF_INTRUDER_CGROUP] = "cgroup",
	[NP_BPF_INTRUDER_KTHREAD] = "kthread",
};

static const char *const event_kind_names[] = {
	[NP_EV_RUN_OUTSIDE] = "ran-outside",
	[NP_EV_INTRUSION] = "intrusion",
	[NP_EV_MIGRATE_DISALLOWED] = "migrate-disallowed",
	[NP_EV_NUMA_BALANCER] = "numa-balancer",
	[NP_EV_FAULT_OUTSIDE] = "fault-outside-mems",
};

/* NP_NAME_OF, but "unknown" for a kind that is not in the table. */
#define KIND_NAME(tab, kind)                                                   \
	np_name_of((tab), NP_NAMES_LEN(tab), (int)(kind), "unknown")

const char *np_bpf_intruder_kind_name(uint32_t kind)
{
	return KIND_NAME(intruder_kind_names, kind);
}

const char *np_bpf_event_kind_name(uint32_t kind)
{
	return KIND_NAME(event_kind_names, kind);
}

/* ---- intrusions by kind -------------------------------------------------- */

void np_bpf_kinds_of_counters(struct np_bpf_kinds *out,
			      const struct np_bpf_counters *c)
{
	memset(out, 0, sizeof(*out));
	out->count[NP_BPF_IK_USER] = c->intrude_workload + c->intrude_cgroup;
	out->ticks[NP_BPF_IK_USER] = c->intrude_ticks;
	out->count[NP_BPF_IK_KTHREAD] = c->intrude_kthread;
	out->ticks[NP_BPF_IK_KTHREAD] = c->intrude_kthread_ticks;
	out->count[NP_BPF_IK_HARDIRQ] = c->intrude_hardirq;
	out->ns[NP_BPF_IK_HARDIRQ] = c->intrude_hardirq_ns;
	out->count[NP_BPF_IK_SOFTIRQ] = c->intrude_softirq;
	out->ns[NP_BPF_IK_SOFTIRQ] = c->intrude_softirq_ns;
}

void np_bpf_kinds_of_cpu(struct np_bpf_kinds *out,
			 const struct np_bpf_cpu_intrude *ci)
{
	memset(out, 0, sizeof(*out));
	out->count[NP_BPF_IK_USER] = ci->user;
	out->ticks[NP_BPF_IK_USER] = ci->user_ticks;
	out->ns[NP_BPF_IK_USER] = ci->user_ns;
	out->count[NP_BPF_IK_KTHREAD] = ci->kthread;
	out->ticks[NP_BPF_IK_KTHREAD] = ci->kthread_ticks;
	out->ns[NP_BPF_IK_KTHREAD] = ci->kthread_ns;
	out->count[NP_BPF_IK_HARDIRQ] = ci->hardirq;
	out->ns[NP_BPF_IK_HARDIRQ] = ci->hardirq_ns;
	out->count[NP_BPF_IK_SOFTIRQ] = ci->softirq;
	out->ns[NP_BPF_IK_SOFTIRQ] = ci->softirq_ns;
}

bool np_bpf_kinds_any(const struct np_bpf_kinds *k)
{
	for (int i = 0; i < NP_BPF_IK_N; i++)
		if (k->count[i] || k->ticks[i] || k->ns[i])
			return true;
	return false;
}

static const char *const intrude_kind_names[] = {
	[NP_BPF_IK_USER] = "user",
	[NP_BPF_IK_KTHREAD] = "kthread",
	[NP_BPF_IK_HARDIRQ] = "hardirq",
	[NP_BPF_IK_SOFTIRQ] = "softirq",
};

static const char *const intrude_kind_hints[] = {
	[NP_BPF_IK_USER] = "a cgroup's cpuset is wrong",
	[NP_BPF_IK_KTHREAD] = "needs host isolation (isolcpus, nohz_full)",
	[NP_BPF_IK_HARDIRQ] = "IRQ affinity (host isolation moves them)",
	[NP_BPF_IK_SOFTIRQ] = "IRQ affinity, host isolation",
};

const char *np_bpf_intrude_kind_name(uint32_t kind)
{
	return KIND_NAME(intrude_kind_names, kind);
}

const char *np_bpf_intrude_kind_hint(uint32_t kind)
{
	return KIND_NAME(intrude_kind_hints, kind);
}

int np_bpf_cpu_intrude_read(const struct np_bpf_maps *m, uint32_t slot,
			    struct np_bpf_cpu_row *out, int max)
{
	int n = 0;

	if (m->cpu_intrude < 0)
		return -EBADF;
	for (uint32_t c = 0;
	     c < (uint32_t)m->ncpus && c < NP_BPF_MAX_CPUS && n < max; c++) {
		struct np_bpf_cpu_intrude v;
		struct np_bpf_owner o;
		if (bpf_map_lookup_elem(m->cpu_intrude, &c, &v))
			return -errno;
		if (v.owner_slot_plus1 != slot + 1)
			continue;
		out[n].cpu = c;
		out[n].owned = !bpf_map_lookup_elem(m->cpu_owner, &c, &o) &&
			       o.slot_plus1 == slot + 1;
		out[n].v = v;
		n++;
	}
	return n;
}

int np_bpf_slots_read(const struct np_bpf_maps *m, struct np_bpf_slot_row **out)
{
	struct np_bpf_slot_row *rows = calloc(m->nslots + 1, sizeof(*rows));
	int k = 0;

	*out = NULL;
	if (!rows)
		return -ENOMEM;
	for (uint32_t s = 0; s < m->nslots; s++) {
		struct np_bpf_slot sl;
		if (bpf_map_lookup_elem(m->slots, &s, &sl) ||
		    !(sl.flags & NP_BPF_SLOT_USED))
			continue;
		sl.name[sizeof(sl.name) - 1] = 0;
		sl.cgroup[sizeof(sl.cgroup) - 1] = 0;
		rows[k].slot = s;
		rows[k].s = sl;
		if (np_bpf_counters_read(m, s, &rows[k].c))
			continue;
		k++;
	}
	*out = rows;
	return k;
}
