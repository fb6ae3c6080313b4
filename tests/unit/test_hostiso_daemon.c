// SPDX-License-Identifier: Apache-2.0
/*
 * Host isolation in the daemon's cycle (userspace/daemon/apply/hostiso_phase.c)
 * on the fake daemon (tests/support/fake_daemon.c: CPUs 0-7, reserved 0,4;
 * an LSE workload of 2 CPUs gets 1,5) with the proc and sys trees in a
 * test directory (np_daemon.hostiso_root): which workloads count under
 * each host_isolation mode, no access at all in an idle cycle, the
 * originals back at release and at a clean stop, and nothing touched
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

struct fx {
	struct fake_daemon fd;
	char root[128];
};

static void put(struct fx *x, const char *rel, const char *text)
{
	char path[256], cmd[300];

	snprintf(path, sizeof(path), "%s/%s", x->root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname %s)\"", path);
	assert_int_equal(system(cmd), 0);
	fake_write_file(path, text);
}

static const char *get(struct fx *x, const char *rel)
{
	static char buf[4096];
	char path[256];
	FILE *fp;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", x->root, rel);
	if (!(fp = fopen(path, "r")))
		fail_msg("%s: %s", path, strerror(errno));
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));

	assert_non_null(x);
	fake_daemon_start(&x->fd, "hostiso");
	snprintf(x->root, sizeof(x->root), "%s/root", x->fd.dir);
	put(x, "proc/irq/0/smp_affinity_list", "0-7\n");
	put(x, "proc/irq/30/smp_affinity_list", "0-7\n");
	put(x, "proc/irq/default_smp_affinity", "ff\n");
	put(x, "sys/devices/virtual/workqueue/cpumask", "ff\n");
	snprintf(x->fd.d.hostiso_root, sizeof(x->fd.d.hostiso_root), "%s",
		 x->root);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;
	fake_daemon_stop(&x->fd);
	free(x);
	return 0;
}

static void request(struct fx *x, const char *text)
{
	json_t *req = json_loads(text, 0, NULL), *resp;

	assert_non_null(req);
	resp = fake_daemon_ask(&x->fd.d, req);
	json_decref(req);
	if (!json_is_true(json_object_get(resp, "ok")))
		fail_msg("request failed: %s",
			 json_string_value(json_object_get(resp, "error")));
	json_decref(resp);
}

#define ADMIT_WEB(extra)                                                       \
	"{\"op\": \"admit\", \"spec\": {\"name\": \"web\", \"cgroup\": "     \
	"\"web\", \"qos\": \"LSE\"" extra ", \"containers\": [{\"name\": "    \
	"\"main\", \"cpu\": \"2\"}]}}"

static bool save_exists(struct fx *x)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/state/hostiso.json", x->fd.dir);
	return access(path, F_OK) == 0;
}

static void assert_originals(struct fx *x)
{
	assert_string_equal(get(x, "proc/irq/0/smp_affinity_list"), "0-7\n");
	assert_string_equal(get(x, "proc/irq/30/smp_affinity_list"), "0-7\n");
	assert_string_equal(get(x, "proc/irq/default_smp_affinity"), "ff\n");
	assert_string_equal(get(x, "sys/devices/virtual/workqueue/cpumask"),
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
	request(x, ADMIT_WEB(""));
	assert_string_equal(get(x, "proc/irq/0/smp_affinity_list"), "0,2-4,6-7");
	assert_string_equal(get(x, "proc/irq/30/smp_affinity_list"), "0,2-4,6-7");
	assert_string_equal(get(x, "proc/irq/default_smp_affinity"), "dd");
	assert_string_equal(get(x, "sys/devices/virtual/workqueue/cpumask"),
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

	put(x, "proc/irq/31/smp_affinity_list", "0-7\n");
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_string_equal(get(x, "proc/irq/31/smp_affinity_list"), "0-7\n");

	request(x, "{\"op\": \"release\", \"name\": \"web\"}");
	assert_originals(x);
	assert_false(save_exists(x));
}

/* "partition" (the default): an LSE workload without isolation
 * "partition" changes nothing; one with it does. */
static void test_partition_mode(void **state)
{
	struct fx *x = *state;

	assert_int_equal(x->fd.d.cfg.host_isolation, NP_HOSTISO_PARTITION);
	request(x, ADMIT_WEB(""));
	assert_originals(x);
	assert_false(save_exists(x));
	request(x, "{\"op\": \"release\", \"name\": \"web\"}");
	request(x, ADMIT_WEB(", \"isolation\": \"partition\""));
	assert_string_equal(get(x, "proc/irq/0/smp_affinity_list"), "0,2-4,6-7");
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
	request(x, ADMIT_CTR("c1", "web"));
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
	assert_originals(x);
	assert_false(save_exists(x));
	request(x, ADMIT_CTR("c2", "iso"));
	/* c2 has 2,6 (c1 has 1,5): only c2's CPUs are isolated */
	assert_string_equal(get(x, "proc/irq/0/smp_affinity_list"), "0-1,3-5,7");
	assert_string_equal(get(x, "sys/devices/virtual/workqueue/cpumask"),
			    "bb");
}

/* "off": nothing, whatever the workloads. */
static void test_off(void **state)
{
	struct fx *x = *state;

	x->fd.d.cfg.host_isolation = NP_HOSTISO_OFF;
	request(x, ADMIT_WEB(", \"isolation\": \"partition\""));
	assert_originals(x);
	assert_false(save_exists(x));
}

/* A clean stop gives the originals back while workloads still run. */
static void test_shutdown(void **state)
{
	struct fx *x = *state;

	x->fd.d.cfg.host_isolation = NP_HOSTISO_EXCLUSIVE;
	request(x, ADMIT_WEB(""));
	assert_string_equal(get(x, "proc/irq/0/smp_affinity_list"), "0,2-4,6-7");
	np_daemon_hostiso_shutdown(&x->fd.d);
	assert_originals(x);
	assert_false(save_exists(x));
}

/* A fake enforcer without a test root: the real /proc is not touched
 * (and no save file appears). */
static void test_fake_without_root(void **state)
{
	struct fx *x = *state;
	json_t *st;

	x->fd.d.hostiso_root[0] = '\0';
	x->fd.d.cfg.host_isolation = NP_HOSTISO_EXCLUSIVE;
	request(x, ADMIT_WEB(""));
	assert_true(x->fd.d.hostiso_off);
	assert_null(x->fd.d.hostiso);
	assert_false(save_exists(x));
	st = np_daemon_status(&x->fd.d);
	assert_true(json_is_false(json_object_get(
		json_object_get(st, "host_isolation"), "active")));
	json_decref(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exclusive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partition_mode, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_off, setup, teardown),
		cmocka_unit_test_setup_teardown(test_container_rule, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_shutdown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fake_without_root, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
