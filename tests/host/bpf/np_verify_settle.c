// SPDX-License-Identifier: Apache-2.0
/*
 * The settle window of a placement change lasts until its cgroups are
 * written (np_verify_applied), then verify.settle_ms more — however long
 * the apply took. Run by tests/host/bpf-host.sh as root on the machine's own
 * kernel, through the daemon's own verification module:
 *
 *   np-verify-settle PIN_PATH PARENT_DIR PARENT_RELATIVE
 *
 * PARENT_DIR (PARENT_RELATIVE below the cgroup2 mount) holds a cgroup "w"
 * in which the caller runs a busy task on CPU 1. w's placement says CPU 0
 * only and CPU 0 is w's exclusively; so every tick of that task is "ran
 * outside" unless it falls inside the settle window. With settle_ms 300:
 *   1. sync, then an apply that takes 900 ms (three settle windows): the
 *      window stays open, no finding, and the policy and owner entries in
 *      the maps hold the in-flight bound (>= 30 s ahead);
 *   2. applied: both entries now end 300 ms from then (read back from the
 *      maps), and 100 ms later there is still no finding;
 *   3. 600 ms later the same task is found running outside (the control:
 *      this test can fail), counted in the window's ticks.
 * Prints "ok ..." / "FAIL ..." lines and exits 1 on any failure.
 */
#include "numaplace/config.h"
#include "numaplace/topology.h"
#include "numaplace/verify.h"
#include "observe/verify_internal.h"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int failed;

static void check(bool ok, const char *what, const char *detail)
{
	printf("%s %s (%s)\n", ok ? "ok  " : "FAIL", what, detail);
	failed |= !ok;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts))
		;
}

/* Findings of one check: how many say w ran outside, and their ticks. */
static int outside(struct np_verify *v, uint64_t *ticks)
{
	struct np_findings fs = {0};
	int n = 0;

	*ticks = 0;
	np_verify_check(v, &fs);
	for (int i = 0; i < fs.n; i++)
		if (fs.f[i].kind == NP_FIND_RAN_OUTSIDE) {
			n++;
			*ticks += fs.f[i].n[1];
		}
	np_findings_free(&fs);
	return n;
}

/* The settle ends (ns from now, signed) of w's policy and of CPU 0. */
static void ends(struct np_verify *v, __u64 cgid, long long *pol_ms,
		 long long *own_ms)
{
	struct np_bpf_policy pol;
	struct np_bpf_owner own;
	__u32 cpu0 = 0;
	long long now = (long long)np_verify_mono_ns();

	*pol_ms = *own_ms = -1000000;
	if (!bpf_map_lookup_elem(v->m->policy, &cgid, &pol))
		*pol_ms = ((long long)pol.settle_until_ns - now) / 1000000;
	if (!bpf_map_lookup_elem(v->m->cpu_owner, &cpu0, &own))
		*own_ms = ((long long)own.settle_until_ns - now) / 1000000;
}

int main(int argc, char **argv)
{
	struct np_config cfg;
	struct np_topology *topo = NULL;
	struct np_verify *v = NULL;
	struct np_verify_wl w = {.wl = 0, .name = "w", .cgroup = "w"};
	struct np_verify_setup su;
	char err[512], d[160];
	long long pol_ms, own_ms;
	uint64_t ticks;
	int fd, n;

	if (argc != 4) {
		fprintf(stderr, "usage: np-verify-settle PIN_PATH PARENT_DIR "
				"PARENT_RELATIVE\n");
		return 2;
	}
	if (np_topology_load(&topo, "live", err, sizeof(err))) {
		fprintf(stderr, "np-verify-settle: topology: %s\n", err);
		return 1;
	}
	if ((fd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		perror(argv[2]);
		return 1;
	}
	np_config_defaults(&cfg);
	cfg.verify.enabled = NP_VERIFY_ON;
	cfg.verify.settle_ms = 300;
	cfg.verify.grace_ms = 0;
	su = (struct np_verify_setup){.cfg = &cfg.verify, .pin_path = argv[1],
				      .parent_fd = fd,
				      .root_fd = -1,
				      .cgroup_parent = argv[3],
				      .topo = topo};
	if (np_verify_start(&v, &su) || !v) {
		fprintf(stderr, "np-verify-settle: verification did not start\n");
		return 1;
	}
	np_cpuset_set(&w.cpus, 0);
	np_cpuset_set(&w.owned, 0);
	w.mems = topo->numa_mask;
	w.flags = NP_BPF_POL_EXCLUSIVE;
	outside(v, &ticks); /* counters from before: a clean start */

	np_verify_sync(v, &w, 1);
	sleep_ms(900); /* the apply: three settle windows long */
	n = outside(v, &ticks);
	ends(v, v->table[v->slot_of[0]].cgid, &pol_ms, &own_ms);
	snprintf(d, sizeof(d), "%d finding(s); policy ends in %lld ms, owner in %lld ms",
		 n, pol_ms, own_ms);
	check(n == 0 && pol_ms > 25000 && own_ms > 25000,
	      "a 900 ms apply: the window stays open until it is done", d);

	np_verify_applied(v);
	ends(v, v->table[v->slot_of[0]].cgid, &pol_ms, &own_ms);
	snprintf(d, sizeof(d), "policy ends in %lld ms, owner in %lld ms",
		 pol_ms, own_ms);
	check(pol_ms > 200 && pol_ms <= 300 && own_ms > 200 && own_ms <= 300,
	      "applied: settle_ms (300) from now", d);
	sleep_ms(100);
	n = outside(v, &ticks);
	snprintf(d, sizeof(d), "%d finding(s)", n);
	check(n == 0, "100 ms after the apply: still settling", d);

	sleep_ms(600);
	n = outside(v, &ticks);
	snprintf(d, sizeof(d), "%d finding(s), %llu tick(s)", n,
		 (unsigned long long)ticks);
	check(n == 1 && ticks > 0,
	      "after the window: the task on CPU 1 ran outside (control)", d);

	np_verify_stop(v);
	close(fd);
	np_topology_free(topo);
	return failed;
}
