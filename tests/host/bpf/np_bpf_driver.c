// SPDX-License-Identifier: Apache-2.0
/*
 * Test driver for the verification programs on a host where numaplaced
 * cannot enforce (tests/host/bpf-host.sh): loads and attaches them like the
 * daemon does, then takes commands on stdin, one per line:
 *   policy CGROUP_DIR SLOT NAME CPULIST [excl]   watch a cgroup (one not
 *                                                below the parent is given
 *                                                to np_bpf_outside_set, as
 *                                                the daemon does)
 *   owner CPU SLOT                               CPU owned by SLOT from now
 *                                                (settle time: now)
 *   signals                                      print the signals JSON
 *   audit                                        print audit records
 *   events [SLOT...]                             print the ring buffer's samples
 *                                                (only those SLOTs' (< 64): a
 *                                                loaded host's backlog is
 *                                                thousands of lines)
 *   runtime CPU CGROUP_DIR...                    CPU's foreign run times
 *                                                (np_cpu_intrude), the
 *                                                monotonic clock and each
 *                                                cgroup's cpu.stat usage,
 *                                                read together
 *   quit
 * Answers "ok" (or "error: ...") per line, so the script can wait on it.
 */
#include "numaplace/bpf_load.h"

#include "numaplace/bpf_maps.h"

#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void on_audit(const struct np_bpf_audit_rec *r, void *ctx)
{
	(void)ctx;
	printf("audit pid %u slot %u cpu %u flags %#x comm %.16s\n", r->pid,
	       r->slot, r->cpu, r->flags, r->comm);
}

/* CPU's time in hardirq, softirq and steal (/proc/stat, in ns): time in
 * the window no task's se.sum_exec_runtime (and so no cpu.stat usage and no
 * BPF run) has, as the kernel's task clock leaves out steal time under
 * PARAVIRT_TIME_ACCOUNTING and irq time under IRQ_TIME_ACCOUNTING. */
static unsigned long long lost_ns(unsigned cpu)
{
	char want[32], line[512];
	unsigned long long v[8] = {0};
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "r");

	snprintf(want, sizeof(want), "cpu%u ", cpu);
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, want, strlen(want)))
			continue;
		if (sscanf(line + strlen(want),
			   "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
			   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			   &v[7]) != 8)
			memset(v, 0, sizeof(v));
		break;
	}
	if (f)
		fclose(f);
	/* fields: user nice system idle iowait irq softirq steal */
	return (v[5] + v[6] + v[7]) * (1000000000ULL / (hz > 0 ? hz : 100));
}

/* "runtime CPU CG...": one line, read within microseconds:
 * "runtime user_ns U kthread_ns K mono_ns T lost_ns L usage_us CG1 N1 ...". */
static void runtime(const struct np_bpf_maps *m, unsigned cpu, char *cgs)
{
	struct np_bpf_cpu_intrude v;
	struct timespec ts;
	char *save = NULL;

	if (bpf_map_lookup_elem(m->cpu_intrude, &cpu, &v)) {
		printf("error: np_cpu_intrude lookup of CPU %u\n", cpu);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("runtime user_ns %llu kthread_ns %llu mono_ns %llu lost_ns %llu "
	       "usage_us",
	       (unsigned long long)v.user_ns, (unsigned long long)v.kthread_ns,
	       (unsigned long long)ts.tv_sec * 1000000000ULL +
		   (unsigned long long)ts.tv_nsec,
	       lost_ns(cpu));
	for (char *cg = strtok_r(cgs, " \n", &save); cg;
	     cg = strtok_r(NULL, " \n", &save)) {
		char path[600];
		unsigned long long us = 0;
		FILE *f;
		snprintf(path, sizeof(path), "%s/cpu.stat", cg);
		f = fopen(path, "r");
		if (!f || fscanf(f, "usage_usec %llu", &us) != 1)
			us = 0;
		if (f)
			fclose(f);
		printf(" %s %llu", cg, us);
	}
	printf("\n");
}

/* A cgroup directory not below the parent directory: its level bit added
 * to *levels and given to the programs (after its np_policy entry, as
 * np_verify_sync does). The parent is a direct child of the mount. */
static int outside(struct np_bpf_loader *l, const char *parent, const char *cg,
		   uint64_t *levels)
{
	const char *slash = strrchr(parent, '/');
	size_t root = slash ? (size_t)(slash - parent) : 0;
	int lv;

	if (strncmp(cg, parent, root) || cg[root] != '/')
		return -1;
	lv = np_bpf_outside_level(cg + root, parent + root + 1);
	if (lv < 0)
		return 0;
	*levels |= np_bpf_level_bit(lv);
	return np_bpf_outside_set(l, *levels);
}

static void on_event(const struct np_bpf_event *e, void *ctx)
{
	const uint64_t *only = ctx;

	if (*only && (e->slot >= 64 || !((*only >> e->slot) & 1)))
		return;
	printf("event kind %u slot %u pid %u cpu %u aux %u comm %.16s\n",
	       e->kind, e->slot, e->pid, e->cpu, e->aux, e->comm);
}

int main(int argc, char **argv)
{
	struct np_bpf_load_opts o = {.nslots = 64, .tick_hz = 99, .rate_burst = 16,
				     .grace_ms = 100};
	struct np_bpf_loader *l;
	const struct np_bpf_maps *m;
	char err[1024] = "", line[1024];
	uint64_t levels = 0;
	struct stat st;

	if (argc != 3) {
		fprintf(stderr, "usage: np-bpf-driver PIN_PATH PARENT_CGROUP_DIR\n");
		return 2;
	}
	if (stat(argv[2], &st)) {
		perror(argv[2]);
		return 1;
	}
	o.pin_path = argv[1];
	o.parent_cgid = st.st_ino;
	/* level = components below the cgroup2 mount: the caller passes a
	 * direct child of the mount */
	o.parent_level = 1;
	if (np_bpf_load(&l, &o, err, sizeof(err))) {
		printf("error: %s\n", err);
		return 1;
	}
	m = np_bpf_loader_maps(l);
	np_bpf_info_update(l, (uint32_t)getpid());
	printf("loaded%s%s\n", err[0] ? ": " : "", err);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		char cg[512], name[128], list[256], excl[16] = "";
		unsigned slot, cpu;
		if (sscanf(line, "policy %511s %u %127s %255s %15s", cg, &slot, name,
			   list, excl) >= 4) {
			struct np_bpf_policy pol;
			struct np_bpf_slot sl = {0};
			np_cpuset cpus;
			__u64 id;
			if (stat(cg, &st) || np_cpuset_parse(&cpus, list, err, sizeof(err))) {
				printf("error: %s\n", cg);
			} else {
				id = st.st_ino;
				np_bpf_policy_make(&pol, &cpus, 1, slot, 1,
						   excl[0] ? NP_BPF_POL_EXCLUSIVE : 0, 0);
				sl.cgid = id;
				sl.mems = 1;
				sl.gen = 1;
				sl.flags = NP_BPF_SLOT_USED;
				sl.ncpus = (uint32_t)np_cpuset_count(&cpus);
				snprintf(sl.name, sizeof(sl.name), "%s", name);
				snprintf(sl.cgroup, sizeof(sl.cgroup), "%s", name);
				np_bpf_slot_reset(m, slot);
				if (bpf_map_update_elem(m->policy, &id, &pol, BPF_ANY) ||
				    bpf_map_update_elem(m->slots, &slot, &sl, BPF_ANY))
					printf("error: map update\n");
				else if (outside(l, argv[2], cg, &levels))
					printf("error: outside levels\n");
				else
					printf("ok\n");
			}
		} else if (sscanf(line, "owner %u %u", &cpu, &slot) == 2) {
			struct timespec ts;
			struct np_bpf_owner ow = {.slot_plus1 = slot + 1};
			/* as the daemon: a change starts a settle window, here
			 * ending now (an IRQ that began before is not counted) */
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ow.settle_until_ns = (__u64)ts.tv_sec * 1000000000ULL +
					     (__u64)ts.tv_nsec;
			printf(bpf_map_update_elem(m->cpu_owner, &cpu, &ow, BPF_ANY)
				       ? "error: owner\n"
				       : "ok\n");
		} else if (!strncmp(line, "signals", 7)) {
			char *s = json_dumps(np_bpf_signals_json(l), JSON_COMPACT);
			printf("%s\n", s ? s : "{}");
			free(s);
		} else if (!strncmp(line, "audit", 5)) {
			np_bpf_audit(l, on_audit, NULL);
			printf("ok\n");
		} else if (!strncmp(line, "events", 6)) {
			uint64_t only = 0;
			char *p = line + 6, *end;
			int n;
			for (unsigned long v; (v = strtoul(p, &end, 10)), end != p;
			     p = end)
				if (v < 64)
					only |= 1ULL << v;
			n = np_bpf_poll_events(l, on_event, &only);
			printf(n < 0 ? "error: poll\n" : "ok\n");
		} else if (sscanf(line, "runtime %u", &cpu) == 1) {
			char *rest = strchr(line + 8, ' ');
			runtime(m, cpu, rest ? rest : line + strlen(line));
		} else if (!strncmp(line, "quit", 4)) {
			break;
		} else {
			printf("error: unknown command\n");
		}
		fflush(stdout);
	}
	np_bpf_info_update(l, 0);
	np_bpf_unload(l);
	return 0;
}
