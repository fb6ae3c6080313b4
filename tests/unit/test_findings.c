// SPDX-License-Identifier: Apache-2.0
/*
 * What verification's findings lead to (userspace/daemon/observe/findings.c,
 * np_daemon_act_on_findings), on a fake enforcer (tests/support): findings
 * are built by hand the way verification fills them (the workload's
 * desired cpus and mems in the finding), and the exact enforcer calls, the
 * allocation and the counters are checked per verify.on_intrusion and
 * verify.on_remote_memory.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/daemon_internal.h"
#include "fake_daemon.h"
#include "fixtures.h"

struct fx {
	struct fake_daemon fd; /* dir, d, f */
};

/* A daemon on the 2-node VM topology (CPUs 0-7, node 0 = 0,1,4,5, node 1 =
 * 2,3,6,7, reserved 0,4) with system.slice confined to the shared pool;
 * the managed parent numaplace.slice exists in the host tree (a partition
 * root is made of it). Verification is off: the findings come from the
 * tests. */
static int setup(void **state)
{
	struct fx *x = fake_daemon_new(sizeof(*x), "findings");
	assert_string_equal(x->fd.d.cfg.cgroup_parent, "numaplace.slice");
	assert_int_equal(x->fd.d.cfg.verify.on_intrusion, NP_ACT_REPORT);
	assert_int_equal(x->fd.d.cfg.verify.on_remote_memory, NP_ACT_REPORT);
	*state = x;
	return 0;
}

#define LSE_DB                                                                 \
	"{\"name\": \"db\", \"cgroup\": \"db\", \"qos\": \"LSE\", "            \
	"\"containers\": [{\"name\": \"main\", \"cpu\": \"4\"}]}"

static void assert_log(struct fx *x, const char *want)
{
	if (strcmp(fake_log(x->fd.f), want))
		fail_msg("enforcer calls:\n%s\nwanted:\n%s", fake_log(x->fd.f),
			 want);
}

/*
 * Append a finding about a workload, filled as verification fills it from
 * the desired placement (reconcile.c verify_sync): the workload's index,
 * name and cgroup, its exclusive set or, for shared containers, the pool,
 * and its memory nodes (all of them when it has none).
 */
static struct np_finding *add_finding(struct fx *x, struct np_findings *fs,
				      enum np_finding_kind kind,
				      const char *name)
{
	int i = np_state_find(&x->fd.d.st, name);
	const struct np_workload_alloc *a;
	struct np_finding *f;
	struct np_pools p;

	assert_true(i >= 0);
	a = x->fd.d.st.w[i];
	if (fs->n == fs->cap) {
		fs->cap = fs->cap ? 2 * fs->cap : 4;
		fs->f = realloc(fs->f, sizeof(*fs->f) * (size_t)fs->cap);
		assert_non_null(fs->f);
	}
	f = &fs->f[fs->n++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->wl = i;
	snprintf(f->workload, sizeof(f->workload), "%s", a->req.name);
	snprintf(f->cgroup, sizeof(f->cgroup), "%s", a->req.cgroup);
	np_state_pools(&x->fd.d.st, &p);
	for (int c = 0; c < a->ncontainers; c++) {
		np_cpuset_or(&f->cpus, &f->cpus,
			     a->c[c].exclusive ? a->c[c].cpus : &p.shared);
		f->mems |= a->c[c].mems;
	}
	if (!f->mems)
		f->mems = x->fd.d.topo->numa_mask;
	f->pid = 4242;
	snprintf(f->comm, sizeof(f->comm), "worker");
	snprintf(f->what, sizeof(f->what), "test finding %d about %s",
		 (int)kind, name);
	return f;
}

/* Act on one finding of a kind about a workload. */
static void act_one(struct fx *x, enum np_finding_kind kind, const char *name)
{
	struct np_findings fs = {0};

	add_finding(x, &fs, kind, name);
	np_daemon_act_on_findings(&x->fd.d, &fs);
	np_findings_free(&fs);
}

static struct np_workload_alloc *alloc_of(struct fx *x, const char *name)
{
	int i = np_state_find(&x->fd.d.st, name);

	assert_true(i >= 0);
	return x->fd.d.st.w[i];
}

/* A task ran outside its set / has a mask outside it: its cpuset is
 * rewritten (cpus and mems) with one call; the cgroup held what it should,
 * so that is no drift. */
static void test_outside_rewrite(void **state)
{
	static const enum np_finding_kind kinds[] = {NP_FIND_RAN_OUTSIDE,
						     NP_FIND_AUDIT_OUTSIDE};
	struct fx *x = *state;

	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	for (size_t k = 0; k < 2; k++) {
		fake_log_clear(x->fd.f);
		act_one(x, kinds[k], "web");
		assert_log(x, "set managed web cpus=1,5 +mems\n");
		assert_int_equal(x->fd.d.n.drift_repaired, 0);
	}
	np_test_assert_cpus(&fake_cg(x->fd.f, 'm', "web", false)->cpus, "1,5");
	assert_int_equal(fake_cg(x->fd.f, 'm', "web", false)->mems, 0x1);
	np_test_assert_cpus(alloc_of(x, "web")->c[0].cpus, "1,5");
}

/* A cgroup that holds something else (written by hand, seen first by the
 * counters) is drift: counted once, written back, and the next cycle finds
 * nothing to do. Mems count too. */
static void test_outside_drift(void **state)
{
	struct fx *x = *state;
	struct fake_cgroup *web;

	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	web = fake_cg(x->fd.f, 'm', "web", false);
	np_cpuset_set(&web->cpus, 6);
	fake_log_clear(x->fd.f);
	act_one(x, NP_FIND_RAN_OUTSIDE, "web");
	assert_log(x, "set managed web cpus=1,5 +mems\n");
	assert_int_equal(x->fd.d.n.drift_repaired, 1);
	np_test_assert_cpus(&web->cpus, "1,5");
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "");
	assert_int_equal(x->fd.d.n.drift_repaired, 1);
	/* its mems widened by hand */
	web->mems = 0x3;
	act_one(x, NP_FIND_AUDIT_OUTSIDE, "web");
	assert_log(x, "set managed web cpus=1,5 +mems\n");
	assert_int_equal(x->fd.d.n.drift_repaired, 2);
	assert_int_equal(web->mems, 0x1);
}

/* Intrusions are reported by default: nothing is written, the allocation
 * stays as it is and nothing is to be saved. */
static void test_intrusion_report(void **state)
{
	struct fx *x = *state;

	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	assert_false(x->fd.d.dirty);
	fake_log_clear(x->fd.f);
	act_one(x, NP_FIND_INTRUSION, "web");
	assert_log(x, "");
	assert_false(alloc_of(x, "web")->req.partition);
	np_test_assert_cpus(alloc_of(x, "web")->c[0].cpus, "1,5");
	assert_false(x->fd.d.dirty);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "");
}

/* The saved spec of a workload in the state file. */
static const char *saved_isolation(struct fx *x, const char *name)
{
	static char buf[32];
	char path[128], err[512];
	json_t *doc, *ws, *w;
	size_t i;

	snprintf(path, sizeof(path), "%s/state", x->fd.dir);
	if (np_journal_document(path, &doc, err, sizeof(err)))
		fail_msg("%s", err);
	ws = json_object_get(
	    json_object_get(json_object_get(doc, "body"), "state"),
	    "workloads");
	buf[0] = '\0';
	json_array_foreach(ws, i, w)
	{
		json_t *spec = json_object_get(w, "spec");
		if (!strcmp(json_string_value(json_object_get(spec, "name")),
			    name))
			snprintf(buf, sizeof(buf), "%s",
				 json_string_value(
				     json_object_get(spec, "isolation")));
	}
	json_decref(doc);
	return buf;
}

/*
 * verify.on_intrusion = "partition": the exclusive workload's allocation
 * asks for a partition (saved, d->dirty) without an enforcer call; the next
 * cycle shrinks the host slice to the reserved CPUs, makes the managed
 * parent a root partition over the rest and the workload's cgroup
 * isolated, once.
 */
static void test_intrusion_partition(void **state)
{
	struct fx *x = *state;

	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	assert_string_equal(saved_isolation(x, "web"), "none");
	x->fd.d.cfg.verify.on_intrusion = NP_ACT_PARTITION;
	fake_log_clear(x->fd.f);
	act_one(x, NP_FIND_INTRUSION, "web");
	assert_log(x, "");
	assert_true(alloc_of(x, "web")->req.partition);
	assert_true(x->fd.d.dirty);
	np_test_assert_cpus(alloc_of(x, "web")->c[0].cpus, "1,5");
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "set host system.slice cpus=0,4\n"
		      "set host numaplace.slice cpus=1-3,5-7\n"
		      "partition host numaplace.slice root\n"
		      "partition managed web isolated\n");
	assert_int_equal(
	    fake_cg(x->fd.f, 'h', "numaplace.slice", false)->partition,
	    NP_CGROUP_ROOT);
	assert_int_equal(fake_cg(x->fd.f, 'm', "web", false)->partition,
			 NP_CGROUP_ISOLATED);
	assert_false(x->fd.d.dirty);
	assert_string_equal(saved_isolation(x, "web"), "partition");
	/* once: the next intrusion and the next cycle change nothing */
	fake_log_clear(x->fd.f);
	act_one(x, NP_FIND_INTRUSION, "web");
	assert_false(x->fd.d.dirty);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "");
	/* released: the parent goes back to a member over every CPU before
	 * the host slice widens over the CPUs it held (the kernel refuses a
	 * sibling's cpuset overlapping a partition root); then no more */
	assert_int_equal(np_daemon_release(&x->fd.d, "web", "test"), 0);
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "partition host numaplace.slice member\n"
		      "set host numaplace.slice cpus=0-7\n"
		      "set host system.slice cpus=0-7\n");
	assert_int_equal(
	    fake_cg(x->fd.f, 'h', "numaplace.slice", false)->partition,
	    NP_CGROUP_MEMBER);
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "");
}

/* The kernel refuses the managed parent as a partition root: said once,
 * not tried again while nothing changes, no workload partition tried
 * below it, and the host slice is not kept on the reserved CPUs for
 * nothing (it widens to the shared pool). */
static void test_partition_refused(void **state)
{
	struct fx *x = *state;

	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	x->fd.f->refuse_partition = true;
	alloc_of(x, "web")->req.partition = true;
	x->fd.d.dirty = true;
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "set host system.slice cpus=0,4\n"
		      "set host numaplace.slice cpus=1-3,5-7\n"
		      "partition host numaplace.slice root\n"
		      "set host numaplace.slice cpus=0-7\n"
		      "set host system.slice cpus=0,2-4,6-7\n");
	assert_true(x->fd.d.parent_refused_set);
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "");
	/* the CPUs it would get changed (as with other reserved CPUs): tried
	 * again in a cycle that squeezes the host slice first */
	x->fd.f->refuse_partition = false;
	np_cpuset_zero(&x->fd.d.parent_refused);
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "set host system.slice cpus=0,4\n"
		      "set host numaplace.slice cpus=1-3,5-7\n"
		      "partition host numaplace.slice root\n"
		      "partition managed web isolated\n");
	assert_false(x->fd.d.parent_refused_set);
}

/* An enforcer that cannot make partitions (systemd below a slice) with a
 * partition in the state (saved under another layout): refused before
 * anything is written, said once, and the host is not squeezed. */
static void test_partition_no_partitions(void **state)
{
	struct fx *x = *state;

	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	x->fd.f->e.no_partitions = "needs -.slice";
	alloc_of(x, "web")->req.partition = true;
	x->fd.d.dirty = true;
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_int_equal(fake_log_find(x->fd.f, "partition "), -1);
	assert_int_equal(fake_log_find(x->fd.f, "set host numaplace.slice"), -1);
	assert_int_equal(fake_log_find(x->fd.f, "set host system.slice cpus=0,4"),
			 -1);
	assert_true(x->fd.d.parent_refused_set);
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "");
	x->fd.f->e.no_partitions = NULL;
}

/* Turning the parent back into a member fails: tried again next cycle
 * (it was given up after one try). */
static void test_parent_member_retried(void **state)
{
	struct fx *x = *state;

	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	alloc_of(x, "web")->req.partition = true;
	x->fd.d.dirty = true;
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_int_equal(
	    fake_cg(x->fd.f, 'h', "numaplace.slice", false)->partition,
	    NP_CGROUP_ROOT);
	alloc_of(x, "web")->req.partition = false;
	x->fd.f->fail_member = 1;
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_int_equal(fake_log_find(x->fd.f, "partition host numaplace.slice member"), 0);
	assert_false(x->fd.d.parent_member);
	fake_log_clear(x->fd.f);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_int_equal(fake_log_find(x->fd.f, "partition host numaplace.slice member"), 0);
	assert_true(x->fd.d.parent_member);
	assert_int_equal(
	    fake_cg(x->fd.f, 'h', "numaplace.slice", false)->partition,
	    NP_CGROUP_MEMBER);
}

/* A shared workload is never partitioned (it holds no CPUs of its own);
 * an exclusive one beside it is not touched either. */
static void test_intrusion_shared(void **state)
{
	struct fx *x = *state;

	fake_daemon_admit(&x->fd, FAKE_LS_API);
	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	x->fd.d.cfg.verify.on_intrusion = NP_ACT_PARTITION;
	fake_log_clear(x->fd.f);
	act_one(x, NP_FIND_INTRUSION, "api");
	assert_log(x, "");
	assert_false(alloc_of(x, "api")->req.partition);
	assert_false(alloc_of(x, "web")->req.partition);
	assert_false(x->fd.d.dirty);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_log(x, "");
	assert_int_equal(
	    fake_cg(x->fd.f, 'h', "numaplace.slice", false)->partition,
	    NP_CGROUP_MEMBER);
	assert_string_equal(saved_isolation(x, "api"), "none");
}

/*
 * verify.on_remote_memory = "migrate": one migration per workload and
 * cycle from the nodes outside its mems to its mems, also with both memory
 * findings (in either order); not again within verify.migrate_interval_s.
 */
static void test_memory_migrate(void **state)
{
	struct fx *x = *state;
	struct np_findings fs = {0};

	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	fake_daemon_admit(&x->fd, LSE_DB);
	assert_int_equal(alloc_of(x, "web")->c[0].mems, 0x1);
	assert_int_equal(alloc_of(x, "db")->c[0].mems, 0x2);
	x->fd.d.cfg.verify.on_remote_memory = NP_ACT_MIGRATE;
	add_finding(x, &fs, NP_FIND_OUTSIDE_MEMS, "web");
	add_finding(x, &fs, NP_FIND_REMOTE_FAULTS, "web");
	add_finding(x, &fs, NP_FIND_REMOTE_FAULTS, "db");
	add_finding(x, &fs, NP_FIND_OUTSIDE_MEMS, "db");
	fake_log_clear(x->fd.f);
	np_daemon_act_on_findings(&x->fd.d, &fs);
	assert_log(x, "migrate web 1->0\n"
		      "migrate db 0->1\n");
	assert_false(x->fd.d.dirty);
	/* within the interval: not again */
	fake_log_clear(x->fd.f);
	np_daemon_act_on_findings(&x->fd.d, &fs);
	act_one(x, NP_FIND_REMOTE_FAULTS, "web");
	assert_log(x, "");
	/* once the interval has passed: again */
	np_daemon_meta_find(&x->fd.d, "web")->last_migrate -=
	    (time_t)x->fd.d.cfg.verify.migrate_interval_s;
	np_daemon_act_on_findings(&x->fd.d, &fs);
	assert_log(x, "migrate web 1->0\n");
	np_findings_free(&fs);
}

/* Reported by default: no migration. */
static void test_memory_report(void **state)
{
	struct fx *x = *state;
	struct np_findings fs = {0};

	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	add_finding(x, &fs, NP_FIND_OUTSIDE_MEMS, "web");
	add_finding(x, &fs, NP_FIND_REMOTE_FAULTS, "web");
	fake_log_clear(x->fd.f);
	np_daemon_act_on_findings(&x->fd.d, &fs);
	np_daemon_act_on_findings(&x->fd.d, &fs);
	assert_log(x, "");
	assert_int_equal(np_daemon_meta_find(&x->fd.d, "web")->last_migrate, 0);
	np_findings_free(&fs);
}

/* The NUMA balancer moving tasks is only reported, whatever the actions
 * configured. */
static void test_balancer(void **state)
{
	struct fx *x = *state;
	struct np_counters before;

	fake_daemon_admit(&x->fd, FAKE_LSE_WEB);
	x->fd.d.cfg.verify.on_intrusion = NP_ACT_PARTITION;
	x->fd.d.cfg.verify.on_remote_memory = NP_ACT_MIGRATE;
	before = x->fd.d.n;
	fake_log_clear(x->fd.f);
	act_one(x, NP_FIND_NUMA_BALANCER, "web");
	assert_log(x, "");
	assert_false(x->fd.d.dirty);
	assert_false(alloc_of(x, "web")->req.partition);
	assert_int_equal(np_daemon_meta_find(&x->fd.d, "web")->last_migrate, 0);
	assert_memory_equal(&before, &x->fd.d.n, sizeof(before));
}

/*
 * A partition made by verification outlives a restart: the workload's spec
 * file still says what it said (its "isolation" was never in it), so the
 * restarted daemon adopts the saved allocation instead of taking the file
 * for one changed while it was down (which released the workload, an
 * rmdir of a cgroup holding its tasks, and admitted it again without the
 * partition, before the state recorded "partitioned_by").
 */
static void test_partition_restart(void **state)
{
	struct fx *x = *state;
	char path[256];

	snprintf(path, sizeof(path), "%s/specs/web.json", x->fd.dir);
	fake_write_file(path, FAKE_LSE_WEB);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_int_equal(x->fd.d.n.admitted, 1);
	x->fd.d.cfg.verify.on_intrusion = NP_ACT_PARTITION;
	act_one(x, NP_FIND_INTRUSION, "web");
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_string_equal(saved_isolation(x, "web"), "partition");
	/* restart on the same cgroups */
	fake_daemon_restart(&x->fd);
	assert_true(alloc_of(x, "web")->req.partition);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	np_test_assert_cpus(alloc_of(x, "web")->c[0].cpus, "1,5");
	/* adopted as it is: the state says verification made the partition
	 * ("partitioned_by": "verify"), which the spec file cannot say */
	assert_int_equal(x->fd.d.n.released, 0);
	assert_true(alloc_of(x, "web")->req.partition);
	assert_true(alloc_of(x, "web")->partition_by_verify);
	assert_int_equal(x->fd.d.n.admitted, 0);
	assert_log(x, "");
	assert_string_equal(saved_isolation(x, "web"), "partition");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_outside_rewrite, setup,
					    fake_daemon_teardown),
	    cmocka_unit_test_setup_teardown(test_outside_drift, setup,
					    fake_daemon_teardown),
	    cmocka_unit_test_setup_teardown(test_intrusion_report, setup,
					    fake_daemon_teardown),
	    cmocka_unit_test_setup_teardown(test_intrusion_partition, setup,
					    fake_daemon_teardown),
	    cmocka_unit_test_setup_teardown(test_partition_refused, setup,
					    fake_daemon_teardown),
	    cmocka_unit_test_setup_teardown(test_partition_no_partitions,
					    setup, fake_daemon_teardown),
	    cmocka_unit_test_setup_teardown(test_parent_member_retried, setup,
					    fake_daemon_teardown),
	    cmocka_unit_test_setup_teardown(test_intrusion_shared, setup,
					    fake_daemon_teardown),
	    cmocka_unit_test_setup_teardown(test_memory_migrate, setup,
					    fake_daemon_teardown),
	    cmocka_unit_test_setup_teardown(test_memory_report, setup,
					    fake_daemon_teardown),
	    cmocka_unit_test_setup_teardown(test_balancer, setup, fake_daemon_teardown),
	    cmocka_unit_test_setup_teardown(test_partition_restart, setup,
					    fake_daemon_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
