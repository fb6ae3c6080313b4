// SPDX-License-Identifier: Apache-2.0
/*
 * Host isolation in the daemon's cycle (userspace/daemon/apply/hostiso_phase.c)
 * on the fake daemon (tests/support/fake_daemon.c: CPUs 0-7, reserved 0,4;
 * an LSE workload of 2 CPUs gets 1,5) with the proc and sys trees in a
 * test directory (np_daemon.hostiso_root): which workloads count under
 * each host_isolation mode, no access at all in an idle cycle, the
 * originals back at release and at a clean stop (not at a stop that is a
 * restart's), and nothing touched
 * under a fake enforcer without a test root.
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

#include "daemon/daemon_internal.h" /* np_daemon_hostiso_shutdown */
#include "fake_daemon.h"
#include "numaplace/daemon.h"
#include "fixtures.h"

struct fx {
	struct fake_daemon fd;
	char root[128];
};

static int setup(void **state)
{
	struct fx *x = fake_daemon_new(sizeof(*x), "hostiso");
	snprintf(x->root, sizeof(x->root), "%s/root", x->fd.dir);
	np_test_put(x->root, "proc/irq/0/smp_affinity_list", "0-7\n");
	np_test_put(x->root, "proc/irq/30/smp_affinity_list", "0-7\n");
	np_test_put(x->root, "proc/irq/default_smp_affinity", "ff\n");
	np_test_put(x->root, "sys/devices/virtual/workqueue/cpumask", "ff\n");
	snprintf(x->fd.d.hostiso_root, sizeof(x->fd.d.hostiso_root), "%s",
		 x->root);
	*state = x;
	return 0;
}

#define ADMIT_WEB(extra)                                                       \
	"{\"op\": \"admit\", \"spec\": {\"name\": \"web\", \"cgroup\": "     \
	"\"web\", \"qos\": \"LSE\"" extra ", \"containers\": [{\"name\": "    \
	"\"main\", \"cpu\": \"2\"}]}}"

/* The record, in the runtime directory (where an older release kept it,
 * the state directory: in_state). */
static bool record_in(struct fx *x, const char *dir)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s/hostiso.json", x->fd.dir, dir);
	return access(path, F_OK) == 0;
}

static bool save_exists(struct fx *x)
{
	return record_in(x, "run");
}

static void assert_originals(struct fx *x)
{
	assert_string_equal(np_test_get(x->root, "proc/irq/0/smp_affinity_list"), "0-7\n");
	assert_string_equal(np_test_get(x->root, "proc/irq/30/smp_affinity_list"), "0-7\n");
	assert_string_equal(np_test_get(x->root, "proc/irq/default_smp_affinity"), "ff\n");
	assert_string_equal(np_test_get(x->root, "sys/devices/virtual/workqueue/cpumask"),
			    "ff\n");
}

/*
 * "exclusive": the LSE workload's CPUs (1,5) lose their IRQs and
 * workqueues; the status says so. An idle cycle does not even read the
 * tree (an IRQ that appears meanwhile is not touched); release gives the
 * originals back and removes the save file.
 */
static void test_exclusive(void **state)
{
	struct fx *x = *state;
	json_t *st;
	const json_t *hi;

	x->fd.d.cfg.host_isolation = NP_HOSTISO_EXCLUSIVE;
	json_decref(fake_daemon_ok(&x->fd, ADMIT_WEB("")));
	assert_string_equal(np_test_get(x->root, "proc/irq/0/smp_affinity_list"), "0,2-4,6-7");
	assert_string_equal(np_test_get(x->root, "proc/irq/30/smp_affinity_list"), "0,2-4,6-7");
	assert_string_equal(np_test_get(x->root, "proc/irq/default_smp_affinity"), "dd");
	assert_string_equal(np_test_get(x->root, "sys/devices/virtual/workqueue/cpumask"),
			    "dd");
	assert_true(save_exists(x));
	st = np_daemon_status(&x->fd.d);
	hi = json_object_get(st, "host_isolation");
	assert_string_equal(json_string_value(json_object_get(hi, "mode")),
			    "exclusive");
	assert_string_equal(json_string_value(json_object_get(hi, "cpus")),
			    "1,5");
	assert_int_equal(json_integer_value(json_object_get(hi, "irqs")), 2);
	assert_true(json_is_true(json_object_get(hi, "workqueue")));
	assert_true(json_is_null(json_object_get(hi, "error")));
	json_decref(st);

	np_test_put(x->root, "proc/irq/31/smp_affinity_list", "0-7\n");
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_string_equal(np_test_get(x->root, "proc/irq/31/smp_affinity_list"), "0-7\n");

	json_decref(fake_daemon_ok(&x->fd, "{\"op\": \"release\", \"name\": \"web\"}"));
	assert_originals(x);
	assert_false(save_exists(x));
}

/* "partition" (the default): an LSE workload without isolation
 * "partition" changes nothing; one with it does. */
static void test_partition_mode(void **state)
{
	struct fx *x = *state;

	assert_int_equal(x->fd.d.cfg.host_isolation, NP_HOSTISO_PARTITION);
	json_decref(fake_daemon_ok(&x->fd, ADMIT_WEB("")));
	assert_originals(x);
	assert_false(save_exists(x));
	json_decref(fake_daemon_ok(&x->fd, "{\"op\": \"release\", \"name\": \"web\"}"));
	json_decref(fake_daemon_ok(&x->fd, ADMIT_WEB(", \"isolation\": \"partition\"")));
	assert_string_equal(np_test_get(x->root, "proc/irq/0/smp_affinity_list"), "0,2-4,6-7");
	assert_true(save_exists(x));
}

#define ADMIT_CTR(name, ns)                                                    \
	"{\"op\": \"admit\", \"spec\": {\"name\": \"" name "\", \"qos\": "     \
	"\"LSE\", \"containers\": [{\"name\": \"main\", \"cpu\": \"2\"}], "     \
	"\"container\": {\"id\": \"" name "\", \"cgroup\": \"/np/" name "\", "   \
	"\"namespace\": \"" ns "\", \"limits\": {\"cpu\": \"2\"}, "            \
	"\"requests\": {\"cpu\": \"2\"}}}}"

/* "exclusive" and containers (oci_hook.policy): a container whose rule
 * says host_isolation false keeps the host's IRQs and workqueues on its
 * CPUs; one whose rule says true gets them moved, as a spec's would. */
static void test_container_rule(void **state)
{
	struct fx *x = *state;
	struct np_oci_policy *p = &x->fd.d.cfg.oci_hook.policy;

	x->fd.d.cfg.host_isolation = NP_HOSTISO_EXCLUSIVE;
	p->def.qos |= 1u << NP_QOS_LSE; /* host_isolation false */
	p->nrules = 1;
	p->rule[0] = p->def;
	snprintf(p->rule[0].ns, sizeof(p->rule[0].ns), "iso");
	p->rule[0].host_isolation = true;
	fake_cg(x->fd.f, 'm', "/np/c1", true)->exists = true;
	fake_cg(x->fd.f, 'm', "/np/c2", true)->exists = true;
	json_decref(fake_daemon_ok(&x->fd, ADMIT_CTR("c1", "web")));
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_originals(x);
	assert_false(save_exists(x));
	json_decref(fake_daemon_ok(&x->fd, ADMIT_CTR("c2", "iso")));
	/* c2 has 2,6 (c1 has 1,5): only c2's CPUs are isolated */
	assert_string_equal(np_test_get(x->root, "proc/irq/0/smp_affinity_list"), "0-1,3-5,7");
	assert_string_equal(np_test_get(x->root, "sys/devices/virtual/workqueue/cpumask"),
			    "bb");
}

/* "off": nothing, whatever the workloads. */
static void test_off(void **state)
{
	struct fx *x = *state;

	x->fd.d.cfg.host_isolation = NP_HOSTISO_OFF;
	json_decref(fake_daemon_ok(&x->fd, ADMIT_WEB(", \"isolation\": \"partition\"")));
	assert_originals(x);
	assert_false(save_exists(x));
}

/* A clean stop gives the originals back while workloads still run. */
static void test_shutdown(void **state)
{
	struct fx *x = *state;

	x->fd.d.cfg.host_isolation = NP_HOSTISO_EXCLUSIVE;
	json_decref(fake_daemon_ok(&x->fd, ADMIT_WEB("")));
	assert_string_equal(np_test_get(x->root, "proc/irq/0/smp_affinity_list"), "0,2-4,6-7");
	np_daemon_hostiso_shutdown(&x->fd.d);
	assert_originals(x);
	assert_false(save_exists(x));
}

/* The enforcer's answer to "is this stop a restart?" (systemd: the job
 * systemd runs on numaplaced's unit), for np_daemon_stop_cleanly. */
static bool restart_answer;
static int restart_asked;
static bool fk_restarting(struct np_enforcer *e, char *why, size_t whylen)
{
	(void)e;
	restart_asked++;
	snprintf(why, whylen, "systemd's job on numaplaced.service: %s",
		 restart_answer ? "restart" : "stop");
	return restart_answer;
}

/* A clean stop that is one half of a restart gives nothing back (the
 * next start takes the confinement over, as after a crash: the save file
 * stays); a stop gives the originals back; an enforcer that cannot tell
 * (no restarting op) stops. */
static void test_stop_restart(void **state)
{
	struct fx *x = *state;
	const struct np_enforcer_ops *orig = x->fd.d.enf->ops;
	static struct np_enforcer_ops ops; /* static: a failed check leaves it in use */

	ops = *orig;

	x->fd.d.cfg.host_isolation = NP_HOSTISO_EXCLUSIVE;
	json_decref(fake_daemon_ok(&x->fd, ADMIT_WEB("")));
	assert_string_equal(np_test_get(x->root, "proc/irq/0/smp_affinity_list"), "0,2-4,6-7");
	ops.restarting = fk_restarting;
	x->fd.d.enf->ops = &ops;
	restart_answer = true;
	restart_asked = 0;
	np_daemon_stop_cleanly(&x->fd.d);
	assert_int_equal(restart_asked, 1);
	assert_string_equal(np_test_get(x->root, "proc/irq/0/smp_affinity_list"), "0,2-4,6-7");
	assert_string_equal(np_test_get(x->root, "sys/devices/virtual/workqueue/cpumask"), "dd");
	assert_true(save_exists(x));
	restart_answer = false;
	np_daemon_stop_cleanly(&x->fd.d);
	assert_int_equal(restart_asked, 2);
	assert_originals(x);
	assert_false(save_exists(x));
	/* no op: a stop */
	json_decref(fake_daemon_ok(&x->fd, "{\"op\": \"release\", \"name\": \"web\"}"));
	json_decref(fake_daemon_ok(&x->fd, ADMIT_WEB("")));
	assert_true(save_exists(x));
	ops.restarting = NULL;
	np_daemon_stop_cleanly(&x->fd.d);
	assert_originals(x);
	assert_false(save_exists(x));
	x->fd.d.enf->ops = orig;
}

/* A fake enforcer without a test root: the real /proc is not touched
 * (and no save file appears). */
static void test_fake_without_root(void **state)
{
	struct fx *x = *state;
	json_t *st;

	x->fd.d.hostiso_root[0] = '\0';
	x->fd.d.cfg.host_isolation = NP_HOSTISO_EXCLUSIVE;
	json_decref(fake_daemon_ok(&x->fd, ADMIT_WEB("")));
	assert_true(x->fd.d.hostiso_off);
	assert_null(x->fd.d.hostiso);
	assert_false(save_exists(x));
	st = np_daemon_status(&x->fd.d);
	assert_true(json_is_false(json_object_get(
		json_object_get(st, "host_isolation"), "active")));
	json_decref(st);
}

/* The chaos run's failure (docs/reliability.md, "The first 2-hour run"):
 * a clean stop gave the originals back, and the next start found a state
 * disk that takes no file (here STATE/hostiso.json.tmp is a directory:
 * the record's write fails there as on a full or read-only disk). The
 * record is in the runtime directory: the workload's CPUs lose their
 * IRQs and workqueues again at the next cycle. (Before the record moved,
 * each cycle failed "writing STATE/hostiso.json: Is a directory" and
 * left them there.) */
static void test_state_unwritable(void **state)
{
	struct fx *x = *state;
	char path[256];

	x->fd.d.cfg.host_isolation = NP_HOSTISO_EXCLUSIVE;
	json_decref(fake_daemon_ok(&x->fd, ADMIT_WEB("")));
	np_daemon_hostiso_shutdown(&x->fd.d);
	assert_originals(x);
	snprintf(path, sizeof(path), "%s/state/hostiso.json.tmp", x->fd.dir);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_string_equal(np_test_get(x->root, "proc/irq/0/smp_affinity_list"), "0,2-4,6-7");
	assert_string_equal(np_test_get(x->root, "proc/irq/default_smp_affinity"), "dd");
	assert_string_equal(np_test_get(x->root, "sys/devices/virtual/workqueue/cpumask"),
			    "dd");
	assert_true(save_exists(x));
	assert_false(record_in(x, "state"));
}

/* An upgrade after a crash: the record where an older numaplaced kept it
 * (STATE/hostiso.json), the tree isolated. The first cycle adopts it: its
 * originals are kept (the release gives them back, not the isolated
 * masks the tree shows), and it is in the runtime directory only. */
static void test_upgrade(void **state)
{
	struct fx *x = *state;
	char path[256];

	snprintf(path, sizeof(path), "%s/state/hostiso.json", x->fd.dir);
	fake_write_file(path,
			   "{\"version\": 1, \"isolated\": \"1,5\", "
			   "\"default_smp_affinity\": \"ff\\n\", "
			   "\"workqueue_cpumask\": \"ff\\n\", \"irqs\": "
			   "[{\"irq\": 0, \"affinity\": \"0-7\\n\"}, "
			   "{\"irq\": 30, \"affinity\": \"0-7\\n\"}], "
			   "\"kthreads\": []}");
	np_test_put(x->root, "proc/irq/0/smp_affinity_list", "0,2-4,6-7\n");
	np_test_put(x->root, "proc/irq/30/smp_affinity_list", "0,2-4,6-7\n");
	np_test_put(x->root, "proc/irq/default_smp_affinity", "dd\n");
	np_test_put(x->root, "sys/devices/virtual/workqueue/cpumask", "dd\n");
	x->fd.d.cfg.host_isolation = NP_HOSTISO_EXCLUSIVE;
	json_decref(fake_daemon_ok(&x->fd, ADMIT_WEB("")));
	assert_true(save_exists(x));
	assert_false(record_in(x, "state"));
	json_decref(fake_daemon_ok(&x->fd, "{\"op\": \"release\", \"name\": \"web\"}"));
	assert_originals(x);
	assert_false(save_exists(x));
	assert_false(record_in(x, "state"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exclusive, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_partition_mode, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_off, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_container_rule, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_shutdown, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_stop_restart, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_fake_without_root, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_state_unwritable, setup,
						fake_daemon_teardown),
		cmocka_unit_test_setup_teardown(test_upgrade, setup,
						fake_daemon_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
