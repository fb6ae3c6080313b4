// SPDX-License-Identifier: Apache-2.0
/* The BPF-facing pieces that run in userspace: policy bitmaps (and the
 * bit test the programs share), per-CPU summing with the kernel's value
 * stride, deltas, what counts as a violation, the rate limiter the
 * programs use, slot assignment across restarts, pin paths, the levels of
 * workloads outside the managed parent. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <bpf/bpf.h>
#include <unistd.h>

#include "numaplace/bpf_maps.h"

static void test_policy_bits(void **state)
{
	struct np_bpf_policy pol;
	np_cpuset c;
	(void)state;
	np_cpuset_zero(&c);
	np_cpuset_set(&c, 0);
	np_cpuset_set(&c, 63);
	np_cpuset_set(&c, 64);
	np_cpuset_set(&c, 4095);
	np_bpf_policy_make(&pol, &c, 0x5, 7, 9, NP_BPF_POL_EXCLUSIVE, 1234);
	assert_true(np_bpf_cpu_allowed(&pol, 0));
	assert_true(np_bpf_cpu_allowed(&pol, 63));
	assert_true(np_bpf_cpu_allowed(&pol, 64));
	assert_true(np_bpf_cpu_allowed(&pol, 4095));
	assert_false(np_bpf_cpu_allowed(&pol, 1));
	assert_false(np_bpf_cpu_allowed(&pol, 65));
	assert_false(np_bpf_cpu_allowed(&pol, 4094));
	assert_false(np_bpf_cpu_allowed(&pol, 4096));
	assert_false(np_bpf_cpu_allowed(&pol, UINT32_MAX));
	assert_int_equal(pol.mems, 0x5);
	assert_int_equal(pol.slot, 7);
	assert_int_equal(pol.gen, 9);
	assert_int_equal(pol.flags, NP_BPF_POL_EXCLUSIVE);
	assert_int_equal(pol.settle_until_ns, 1234);
}

/* The container cgroups of docs/containers.md against the managed parents
 * of the cgroupfs and systemd drivers. */
static void test_outside_level(void **state)
{
	(void)state;
	/* named relative to the parent: below it */
	assert_int_equal(np_bpf_outside_level("w1", "numaplace"), -1);
	assert_int_equal(np_bpf_outside_level("a/b", "numaplace"), -1);
	/* crun's cgroupfs driver */
	assert_int_equal(np_bpf_outside_level("/np/ctr1", "numaplace"), 2);
	/* crun --systemd-cgroup, podman --cgroup-parent numaplace.slice */
	assert_int_equal(np_bpf_outside_level(
			     "/numaplace.slice/np-ctr3.scope/container",
			     "numaplace.slice/numaplace-w.slice"),
			 3);
	assert_int_equal(
	    np_bpf_outside_level("/kubepods.slice/kubepods-besteffort.slice/"
				 "kubepods-besteffort-pod1.slice/cri-x.scope",
				 "numaplace.slice"),
	    4);
	/* named from the root but below the parent: not outside */
	assert_int_equal(np_bpf_outside_level("/numaplace/w1", "numaplace"), -1);
	assert_int_equal(np_bpf_outside_level("//numaplace//w1/", "numaplace/"),
			 -1);
	/* a sibling whose name starts like the parent's */
	assert_int_equal(np_bpf_outside_level("/numaplace2/w1", "numaplace"), 2);
	/* the parent itself, and its ancestors, are not below it */
	assert_int_equal(np_bpf_outside_level("/numaplace.slice/x",
					      "numaplace.slice/x"),
			 2);
	assert_int_equal(np_bpf_outside_level("/numaplace.slice",
					      "numaplace.slice/x"),
			 1);
	/* empty components are not levels */
	assert_int_equal(np_bpf_outside_level("/np//ctr1/", "numaplace"), 2);
	/* the root parent: everything is below it */
	assert_int_equal(np_bpf_outside_level("/np/ctr1", ""), -1);
	assert_true(np_bpf_level_bit(0) == 1);
	assert_true(np_bpf_level_bit(2) == 4);
	assert_true(np_bpf_level_bit(63) == 1ULL << 63);
	assert_true(np_bpf_level_bit(200) == 1ULL << 63);
}

static void test_sum_and_delta(void **state)
{
	/* 3 CPUs, values 40 bytes apart beyond the struct (the stride is
	 * what the kernel uses, not sizeof) */
	size_t stride = sizeof(struct np_bpf_counters) + 40;
	char *buf = calloc(3, stride);
	struct np_bpf_counters sum, prev, d;
	(void)state;
	for (int c = 0; c < 3; c++) {
		struct np_bpf_counters *v = (void *)(buf + (size_t)c * stride);
		v->run_outside = (uint64_t)(c + 1);        /* 1+2+3 */
		v->intrude_kthread = 100 * (uint64_t)c;    /* 0+100+200 */
		v->samples_dropped = 7;                    /* last field */
		memset((char *)v + sizeof(*v), 0xff, 40);  /* padding: ignored */
	}
	np_bpf_counters_sum(&sum, buf, 3, stride);
	assert_int_equal(sum.run_outside, 6);
	assert_int_equal(sum.intrude_kthread, 300);
	assert_int_equal(sum.samples_dropped, 21);
	assert_int_equal(sum.migrations, 0);
	memset(&prev, 0, sizeof(prev));
	prev.run_outside = 4;
	prev.intrude_kthread = 500; /* went backwards: the slot was reset */
	np_bpf_counters_delta(&d, &sum, &prev);
	assert_int_equal(d.run_outside, 2);
	assert_int_equal(d.intrude_kthread, 300);
	assert_int_equal(d.samples_dropped, 21);
	free(buf);
}

static void test_what_is_a_violation(void **state)
{
	struct np_bpf_counters c;
	static const size_t real[] = {
		offsetof(struct np_bpf_counters, run_outside),
		offsetof(struct np_bpf_counters, run_outside_ticks),
		offsetof(struct np_bpf_counters, intrude_workload),
		offsetof(struct np_bpf_counters, intrude_cgroup),
		offsetof(struct np_bpf_counters, intrude_ticks),
		offsetof(struct np_bpf_counters, migrate_disallowed),
		offsetof(struct np_bpf_counters, fault_pages_outside_mems),
	};
	(void)state;
	memset(&c, 0, sizeof(c));
	/* counted, but not violations: transitions, kernel threads, plain
	 * migrations, local and remote faults (judged by ratio), the NUMA
	 * balancer (it moves tasks within their CPUs), samples */
	/* nor kernel-thread time and interrupts on its exclusive CPUs: no
	 * cpuset keeps them away (host isolation, IRQ affinity) */
	c.intrude_kthread_ticks = c.intrude_hardirq = c.intrude_hardirq_ns =
		c.intrude_softirq = c.intrude_softirq_ns = 5;
	c.transition = c.intrude_kthread = c.migrations = c.migrate_xl3 =
		c.migrate_xnuma = c.faults = c.fault_pages_local =
			c.fault_pages_remote = c.numa_move = c.numa_swap =
				c.numa_stick = c.samples = c.samples_dropped = 5;
	assert_false(np_bpf_counters_any_violation(&c));
	for (size_t i = 0; i < sizeof(real) / sizeof(real[0]); i++) {
		struct np_bpf_counters v = c;
		*(uint64_t *)((char *)&v + real[i]) = 1;
		assert_true(np_bpf_counters_any_violation(&v));
	}
	assert_string_equal(np_bpf_counter_names[0], "run_outside");
	assert_string_equal(np_bpf_counter_names[NP_BPF_NCOUNTERS - 1],
			    "samples_dropped");
}

static void test_rate_limiter(void **state)
{
	struct np_bpf_rate r = {0};
	const uint64_t w = 1000000000ULL;
	int sent = 0;
	(void)state;
	for (int i = 0; i < 100; i++)
		sent += np_bpf_rate_allow(&r, 5 * w + (uint64_t)i, 16, w);
	assert_int_equal(sent, 16); /* burst, then dropped */
	assert_false(np_bpf_rate_allow(&r, 6 * w - 1, 16, w));
	assert_true(np_bpf_rate_allow(&r, 6 * w + 200, 16, w)); /* new window */
	assert_int_equal(r.sent, 1);
	/* a clock that goes backwards starts a window instead of blocking */
	for (int i = 0; i < 15; i++)
		np_bpf_rate_allow(&r, 6 * w + 300, 16, w);
	assert_false(np_bpf_rate_allow(&r, 6 * w + 400, 16, w));
	assert_true(np_bpf_rate_allow(&r, 1, 16, w));
	/* burst 0: nothing is ever sent */
	memset(&r, 0, sizeof(r));
	assert_false(np_bpf_rate_allow(&r, 10 * w, 0, w));
}

static struct np_bpf_want want(const char *name, uint64_t cgid, int ncpus,
			       uint64_t mems)
{
	struct np_bpf_want w;
	memset(&w, 0, sizeof(w));
	snprintf(w.name, sizeof(w.name), "%s", name);
	snprintf(w.cgroup, sizeof(w.cgroup), "%s", name);
	w.cgid = cgid;
	np_cpuset_zero(&w.cpus);
	for (int c = 0; c < ncpus; c++)
		np_cpuset_set(&w.cpus, c);
	w.mems = mems;
	return w;
}

static void test_slots(void **state)
{
	struct np_bpf_slot table[3];
	struct np_bpf_want w[4];
	bool fresh[3];
	int slot[4];
	(void)state;
	memset(table, 0, sizeof(table));
	w[0] = want("a", 10, 2, 1);
	w[1] = want("b", 11, 2, 1);
	assert_int_equal(np_bpf_slots_assign(table, 3, w, 2, slot, fresh), 0);
	assert_int_equal(slot[0], 0);
	assert_int_equal(slot[1], 1);
	assert_true(fresh[0] && fresh[1] && !fresh[2]);
	assert_string_equal(table[1].name, "b");
	assert_int_equal(table[1].gen, 1);
	assert_int_equal(table[1].ncpus, 2);

	/* again, b first and unchanged: same slots, not fresh, same gen;
	 * a changed its mems: gen bumps */
	w[2] = w[1];
	w[3] = want("a", 10, 2, 2);
	assert_int_equal(np_bpf_slots_assign(table, 3, &w[2], 2, slot, fresh), 0);
	assert_int_equal(slot[0], 1);
	assert_int_equal(slot[1], 0);
	assert_false(fresh[0] || fresh[1]);
	assert_int_equal(table[1].gen, 1);
	assert_int_equal(table[0].gen, 2);

	/* a's cgroup was recreated (new id): a new slot, the old one freed;
	 * then a fourth workload does not fit */
	w[0] = want("a", 20, 2, 2);
	w[1] = want("b", 11, 2, 1);
	w[2] = want("c", 12, 1, 1);
	w[3] = want("d", 13, 1, 1);
	assert_int_equal(np_bpf_slots_assign(table, 3, w, 4, slot, fresh), 1);
	assert_int_equal(slot[1], 1); /* b kept */
	assert_true(slot[0] >= 0 && slot[0] != 1);
	assert_true(fresh[slot[0]]);
	assert_int_equal(table[slot[0]].cgid, 20);
	assert_true(slot[2] >= 0 || slot[3] >= 0);
	assert_true(slot[2] < 0 || slot[3] < 0);
	for (int s = 0; s < 3; s++)
		assert_true(table[s].flags & NP_BPF_SLOT_USED);

	/* nobody wanted: every slot freed */
	assert_int_equal(np_bpf_slots_assign(table, 3, w, 0, slot, fresh), 0);
	for (int s = 0; s < 3; s++)
		assert_int_equal(table[s].flags, 0);
}

/* Renamed (same cgroup id, new name): a new slot, the old one freed and
 * reused later as fresh; gen bumps on flags and CPU count changes only;
 * a full table leaves out_slot -1 and counts the workloads left out. */
static void test_slots_rename_and_full(void **state)
{
	struct np_bpf_slot table[2];
	struct np_bpf_want w[3];
	bool fresh[2];
	int slot[3];
	(void)state;
	memset(table, 0, sizeof(table));
	w[0] = want("old", 10, 2, 1);
	assert_int_equal(np_bpf_slots_assign(table, 2, w, 1, slot, fresh), 0);
	assert_int_equal(slot[0], 0);
	assert_int_equal(table[0].gen, 1);

	/* unchanged: same slot, not fresh, gen stays */
	assert_int_equal(np_bpf_slots_assign(table, 2, w, 1, slot, fresh), 0);
	assert_int_equal(slot[0], 0);
	assert_false(fresh[0]);
	assert_int_equal(table[0].gen, 1);
	/* policy flags change: gen 2; CPU count change: gen 3 */
	w[0].flags = NP_BPF_POL_EXCLUSIVE;
	assert_int_equal(np_bpf_slots_assign(table, 2, w, 1, slot, fresh), 0);
	assert_int_equal(table[0].gen, 2);
	assert_int_equal(table[0].policy_flags, NP_BPF_POL_EXCLUSIVE);
	np_cpuset_set(&w[0].cpus, 7);
	assert_int_equal(np_bpf_slots_assign(table, 2, w, 1, slot, fresh), 0);
	assert_int_equal(table[0].gen, 3);
	assert_int_equal(table[0].ncpus, 3);
	assert_false(fresh[0]);

	/* renamed, same cgroup: not the same workload. The old slot is freed
	 * first, so the newcomer may get that index, but as a fresh slot
	 * (its counters are reset) with a new generation count */
	w[0] = want("new", 10, 2, 1);
	assert_int_equal(np_bpf_slots_assign(table, 2, w, 1, slot, fresh), 0);
	assert_true(slot[0] >= 0);
	assert_true(fresh[slot[0]]);
	assert_string_equal(table[slot[0]].name, "new");
	assert_int_equal(table[slot[0]].gen, 1);
	assert_int_equal(table[1 - slot[0]].flags, 0); /* "old" is gone */

	/* a newcomer gets the free slot, fresh, the kept one is not fresh;
	 * the third does not fit */
	w[1] = want("x", 11, 1, 1);
	w[2] = want("y", 12, 1, 1);
	assert_int_equal(np_bpf_slots_assign(table, 2, w, 3, slot, fresh), 1);
	assert_false(fresh[slot[0]]);
	assert_int_equal(slot[1], 1 - slot[0]);
	assert_true(fresh[slot[1]]);
	assert_string_equal(table[slot[1]].name, "x");
	assert_int_equal(slot[2], -1);
	for (int i = 0; i < 2; i++)
		assert_true(table[i].flags & NP_BPF_SLOT_USED);
}

static void test_pins(void **state)
{
	char buf[16], err[256] = "", long_path[200];
	struct np_bpf_maps m;
	(void)state;
	assert_int_equal(np_bpf_pin_dir(buf, sizeof(buf), "/sys/fs/bpf/numaplace"),
			 -ENAMETOOLONG);
	memset(long_path, 'a', sizeof(long_path) - 1);
	long_path[sizeof(long_path) - 1] = 0;
	assert_int_equal(np_bpf_pin_dir(long_path, 5, "/x"), -ENAMETOOLONG); /* "/x/v2" + NUL */
	assert_int_equal(np_bpf_pin_dir(long_path, sizeof(long_path), "/x"), 0);
	assert_string_equal(long_path, "/x/" NP_BPF_PIN_SUBDIR);
	assert_int_equal(np_bpf_maps_open_pinned(&m, "/nonexistent/np/v2", err,
						 sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/np/v2/np_policy"));
	assert_non_null(strstr(err, "numaplaced has not loaded"));
	assert_int_equal(m.policy, -1);
	np_bpf_maps_close(&m); /* safe on a closed set */
}

static void put_intruder(int fd, uint32_t slot, uint32_t kind, uint64_t cgid,
			 const char *comm, uint64_t switches, uint64_t ticks)
{
	struct np_bpf_intruder_key k;
	struct np_bpf_intruder_val v;
	memset(&k, 0, sizeof(k));
	memset(&v, 0, sizeof(v));
	k.owner_slot = slot;
	k.kind = kind;
	k.cgid = cgid;
	snprintf(k.comm, sizeof(k.comm), "%s", comm);
	v.switches = switches;
	v.ticks = ticks;
	assert_int_equal(bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST), 0);
}

/* Top intruders of one owner: tasks before kernel threads, time (ticks)
 * before switches, other owners' entries left out. Needs a real BPF map:
 * skipped when this process may not create one (not root). */
static void test_intruders_top(void **state)
{
	struct np_bpf_intruder top[8];
	struct np_bpf_maps m;
	int n;
	(void)state;
	np_bpf_maps_init(&m);
	m.intruders = bpf_map_create(BPF_MAP_TYPE_HASH, "np_test_intr",
				     sizeof(struct np_bpf_intruder_key),
				     sizeof(struct np_bpf_intruder_val), 64,
				     NULL);
	if (m.intruders < 0) {
		printf("# skipped: cannot create a BPF map here (%s)\n",
		       strerror(errno));
		skip();
	}
	put_intruder(m.intruders, 0, NP_BPF_INTRUDER_KTHREAD, 1, "kworker/2:1",
		     900, 900);
	put_intruder(m.intruders, 0, NP_BPF_INTRUDER_CGROUP, 1, "sh", 40, 0);
	/* switched in once, then ran: named by its ticks */
	put_intruder(m.intruders, 0, NP_BPF_INTRUDER_CGROUP, 3005,
		     "np-intruder", 0, 99);
	put_intruder(m.intruders, 0, NP_BPF_INTRUDER_WORKLOAD, 77, "batch", 3,
		     99);
	put_intruder(m.intruders, 1, NP_BPF_INTRUDER_CGROUP, 9, "other", 500,
		     500);
	n = np_bpf_intruders_top(&m, 0, top, 8);
	assert_int_equal(n, 4);
	assert_string_equal(top[0].key.comm, "batch"); /* 99 ticks, 3 sw */
	assert_string_equal(top[1].key.comm, "np-intruder");
	assert_int_equal(top[1].key.cgid, 3005);
	assert_int_equal(top[1].val.ticks, 99);
	assert_string_equal(top[2].key.comm, "sh");
	assert_string_equal(top[3].key.comm, "kworker/2:1");
	assert_int_equal(np_bpf_intruders_top(&m, 0, top, 2), 2);
	assert_string_equal(top[1].key.comm, "np-intruder");
	assert_int_equal(np_bpf_intruders_top(&m, 1, top, 8), 1);
	assert_int_equal(np_bpf_intruders_top(&m, 2, top, 8), 0);
	np_bpf_maps_close(&m);
}

/* The names userspace prints are the field names bpftool prints. */
static void test_counter_names_are_fields(void **state)
{
	static const struct {
		size_t off;
		const char *name;
	} f[] = {
		{offsetof(struct np_bpf_counters, intrude_ticks), "intrude_ticks"},
		{offsetof(struct np_bpf_counters, intrude_kthread_ticks),
		 "intrude_kthread_ticks"},
		{offsetof(struct np_bpf_counters, intrude_hardirq),
		 "intrude_hardirq"},
		{offsetof(struct np_bpf_counters, intrude_hardirq_ns),
		 "intrude_hardirq_ns"},
		{offsetof(struct np_bpf_counters, intrude_softirq),
		 "intrude_softirq"},
		{offsetof(struct np_bpf_counters, intrude_softirq_ns),
		 "intrude_softirq_ns"},
		{offsetof(struct np_bpf_counters, migrations), "migrations"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		assert_string_equal(np_bpf_counter_names[f[i].off / 8], f[i].name);
	assert_int_equal(sizeof(struct np_bpf_cpu_intrude), 128);
}

/* Kinds: user = other workloads + other cgroups; kthread; IRQs with ns. */
static void test_kinds_decode(void **state)
{
	struct np_bpf_counters c;
	struct np_bpf_cpu_intrude ci;
	struct np_bpf_kinds k;
	(void)state;
	memset(&c, 0, sizeof(c));
	np_bpf_kinds_of_counters(&k, &c);
	assert_false(np_bpf_kinds_any(&k));
	c.intrude_workload = 2;
	c.intrude_cgroup = 3;
	c.intrude_ticks = 7;
	c.intrude_kthread = 11;
	c.intrude_kthread_ticks = 13;
	c.intrude_hardirq = 17;
	c.intrude_hardirq_ns = 19000;
	c.intrude_softirq = 23;
	c.intrude_softirq_ns = 29000;
	c.run_outside = 1000; /* not an intrusion */
	np_bpf_kinds_of_counters(&k, &c);
	assert_true(np_bpf_kinds_any(&k));
	assert_int_equal(k.count[NP_BPF_IK_USER], 5);
	assert_int_equal(k.ticks[NP_BPF_IK_USER], 7);
	assert_int_equal(k.ns[NP_BPF_IK_USER], 0);
	assert_int_equal(k.count[NP_BPF_IK_KTHREAD], 11);
	assert_int_equal(k.ticks[NP_BPF_IK_KTHREAD], 13);
	assert_int_equal(k.count[NP_BPF_IK_HARDIRQ], 17);
	assert_int_equal(k.ns[NP_BPF_IK_HARDIRQ], 19000);
	assert_int_equal(k.ticks[NP_BPF_IK_HARDIRQ], 0);
	assert_int_equal(k.count[NP_BPF_IK_SOFTIRQ], 23);
	assert_int_equal(k.ns[NP_BPF_IK_SOFTIRQ], 29000);

	memset(&ci, 0xff, sizeof(ci)); /* in-flight and reserved ignored */
	ci.user = 1;
	ci.user_ticks = 2;
	ci.kthread = 3;
	ci.kthread_ticks = 4;
	ci.hardirq = 5;
	ci.hardirq_ns = 6;
	ci.softirq = 7;
	ci.softirq_ns = 8;
	ci.user_ns = 9;
	ci.kthread_ns = 10;
	np_bpf_kinds_of_cpu(&k, &ci);
	assert_int_equal(k.count[NP_BPF_IK_USER], 1);
	assert_int_equal(k.ticks[NP_BPF_IK_USER], 2);
	assert_int_equal(k.count[NP_BPF_IK_KTHREAD], 3);
	assert_int_equal(k.ticks[NP_BPF_IK_KTHREAD], 4);
	assert_int_equal(k.count[NP_BPF_IK_HARDIRQ], 5);
	assert_int_equal(k.ns[NP_BPF_IK_HARDIRQ], 6);
	assert_int_equal(k.count[NP_BPF_IK_SOFTIRQ], 7);
	assert_int_equal(k.ns[NP_BPF_IK_SOFTIRQ], 8);
	/* the run times (the raw instrument), not the run in flight */
	assert_int_equal(k.ns[NP_BPF_IK_USER], 9);
	assert_int_equal(k.ns[NP_BPF_IK_KTHREAD], 10);
	assert_int_equal(k.ticks[NP_BPF_IK_SOFTIRQ], 0);

	assert_string_equal(np_bpf_intrude_kind_name(NP_BPF_IK_USER), "user");
	assert_string_equal(np_bpf_intrude_kind_name(NP_BPF_IK_KTHREAD),
			    "kthread");
	assert_string_equal(np_bpf_intrude_kind_name(NP_BPF_IK_HARDIRQ),
			    "hardirq");
	assert_string_equal(np_bpf_intrude_kind_name(NP_BPF_IK_SOFTIRQ),
			    "softirq");
	assert_string_equal(np_bpf_intrude_kind_name(NP_BPF_IK_N), "unknown");
	assert_non_null(strstr(np_bpf_intrude_kind_hint(NP_BPF_IK_USER),
			       "cpuset"));
	assert_non_null(strstr(np_bpf_intrude_kind_hint(NP_BPF_IK_KTHREAD),
			       "host isolation"));
	assert_non_null(strstr(np_bpf_intrude_kind_hint(NP_BPF_IK_HARDIRQ),
			       "IRQ affinity"));
}

static void put_cpu(const struct np_bpf_maps *m, uint32_t cpu,
		    uint32_t entry_owner, uint32_t map_owner, uint64_t softirq)
{
	struct np_bpf_cpu_intrude v = {.owner_slot_plus1 = entry_owner,
				       .softirq = softirq, .user = 1};
	struct np_bpf_owner o = {.slot_plus1 = map_owner};
	assert_int_equal(bpf_map_update_elem(m->cpu_intrude, &cpu, &v, BPF_ANY),
			 0);
	assert_int_equal(bpf_map_update_elem(m->cpu_owner, &cpu, &o, BPF_ANY),
			 0);
}

/* The per-CPU entries of one owner slot, whether it still owns each CPU,
 * and a slot reset clearing its entries only. Real BPF maps (root). */
static void test_cpu_intrude_read_and_reset(void **state)
{
	struct np_bpf_cpu_row rows[8];
	struct np_bpf_maps m;
	(void)state;
	np_bpf_maps_init(&m);
	m.cpu_intrude = bpf_map_create(BPF_MAP_TYPE_ARRAY, "np_test_ci", 4,
				       sizeof(struct np_bpf_cpu_intrude),
				       NP_BPF_MAX_CPUS, NULL);
	m.cpu_owner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "np_test_own", 4,
				     sizeof(struct np_bpf_owner),
				     NP_BPF_MAX_CPUS, NULL);
	m.counters = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "np_test_cnt",
				    4, sizeof(struct np_bpf_counters), 8, NULL);
	m.rate = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "np_test_rate", 4,
				sizeof(struct np_bpf_rate), 8, NULL);
	if (m.cpu_intrude < 0 || m.cpu_owner < 0 || m.counters < 0 ||
	    m.rate < 0) {
		printf("# skipped: cannot create a BPF map here (%s)\n",
		       strerror(errno));
		np_bpf_maps_close(&m);
		skip();
	}
	m.ncpus = 5;
	m.nslots = 8;
	put_cpu(&m, 0, 4, 4, 10); /* slot 3, still its */
	put_cpu(&m, 1, 4, 6, 11); /* counted for slot 3, now slot 5's */
	put_cpu(&m, 2, 2, 2, 12); /* slot 1 */
	put_cpu(&m, 4, 4, 0, 14); /* slot 3, now nobody's */
	put_cpu(&m, 5, 4, 4, 15); /* past ncpus: not read */
	assert_int_equal(np_bpf_cpu_intrude_read(&m, 3, rows, 8), 3);
	assert_int_equal(rows[0].cpu, 0);
	assert_true(rows[0].owned);
	assert_int_equal(rows[0].v.softirq, 10);
	assert_int_equal(rows[1].cpu, 1);
	assert_false(rows[1].owned);
	assert_int_equal(rows[2].cpu, 4);
	assert_false(rows[2].owned);
	assert_int_equal(np_bpf_cpu_intrude_read(&m, 3, rows, 2), 2);
	assert_int_equal(np_bpf_cpu_intrude_read(&m, 1, rows, 8), 1);
	assert_int_equal(rows[0].cpu, 2);
	assert_int_equal(np_bpf_cpu_intrude_read(&m, 7, rows, 8), 0);
	/* a slot handed to a new workload: its CPUs' entries start anew */
	assert_int_equal(np_bpf_slot_reset(&m, 3), 0);
	assert_int_equal(np_bpf_cpu_intrude_read(&m, 3, rows, 8), 0);
	assert_int_equal(np_bpf_cpu_intrude_read(&m, 1, rows, 8), 1);
	assert_int_equal(rows[0].v.softirq, 12);
	np_bpf_maps_close(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_bits),
		cmocka_unit_test(test_outside_level),
		cmocka_unit_test(test_sum_and_delta),
		cmocka_unit_test(test_what_is_a_violation),
		cmocka_unit_test(test_rate_limiter),
		cmocka_unit_test(test_slots),
		cmocka_unit_test(test_slots_rename_and_full),
		cmocka_unit_test(test_pins),
		cmocka_unit_test(test_intruders_top),
		cmocka_unit_test(test_counter_names_are_fields),
		cmocka_unit_test(test_kinds_decode),
		cmocka_unit_test(test_cpu_intrude_read_and_reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
