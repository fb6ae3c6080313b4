// SPDX-License-Identifier: Apache-2.0
/*
 * Overhead of the verification programs (issue: < 150 ns per sched_switch
 * on the miss path, < 2% end-to-end). Needs root, kernel BTF, bpffs, a
 * cgroup2 mount and `perf` (linux-perf); prints "skip: ..." otherwise.
 *
 *  1. bpf_stats (BPF_ENABLE_STATS, held by an fd): run_time_ns / run_cnt of
 *     np_sched_switch under `perf bench sched pipe` and `sched messaging`,
 *     on the miss path (the benchmark is not in a managed workload) and on
 *     the violating path (the benchmark is a workload whose only allowed
 *     CPU is another one: every switch in counts, samples, rate-limits).
 *  2. end to end: interleaved pairs of `perf bench sched pipe` without and
 *     with the programs attached; median of the paired differences; and
 *     in each pair a third run with only the empty program attached (what
 *     attaching anything to sched_switch costs).
 *  3. the interrupt programs (irq_handler_entry/exit, softirq_entry/exit)
 *     under the same loads plus O_DIRECT disk writes: when the CPU is not
 *     exclusive (one ARRAY lookup and return) and when it is (CPU 1 owned
 *     by another slot: every switch, tick and interrupt there is counted
 *     as an intrusion by kind).
 * bpf_stats' own floor: an empty sched_switch program (bench/floor.bpf.c)
 * is attached beside np_sched_switch through part 1, and its ns per event
 * in the same runs is printed next to the program's: what the measurement
 * costs by itself (two clock reads around each run).
 * Prints figures; asserts nothing.
 */
#include "figure.h"
#include "numaplace/bpf_load.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CGROUP2_SUPER_MAGIC 0x63677270

static char cgroot[256], parent[512], child[600], pins[256];

#ifndef NP_BENCH_FLOOR_OBJ
#define NP_BENCH_FLOOR_OBJ "build/bpf/floor.bpf.o"
#endif
static struct bpf_object *floor_obj;
static struct bpf_link *floor_link;
static int floor_fd = -1;

/* The empty program, attached; a message and no floor when it fails. */
static void floor_attach(void)
{
	struct bpf_program *p;

	floor_obj = bpf_object__open_file(NP_BENCH_FLOOR_OBJ, NULL);
	if (!floor_obj || bpf_object__load(floor_obj) ||
	    !(p = bpf_object__next_program(floor_obj, NULL)) ||
	    !(floor_link = bpf_program__attach(p))) {
		printf("  (%s: %s: no floor figure)\n", NP_BENCH_FLOOR_OBJ,
		       strerror(errno));
		return;
	}
	floor_fd = bpf_program__fd(p);
}

static void floor_detach(void)
{
	bpf_link__destroy(floor_link);
	bpf_object__close(floor_obj);
	floor_link = NULL;
	floor_obj = NULL;
	floor_fd = -1;
}

static void floor_stats(uint64_t *ns, uint64_t *cnt)
{
	struct bpf_prog_info info = {0};
	__u32 len = sizeof(info);

	*ns = *cnt = 0;
	if (floor_fd >= 0 && !bpf_obj_get_info_by_fd(floor_fd, &info, &len)) {
		*ns = info.run_time_ns;
		*cnt = info.run_cnt;
	}
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int find_cgroup2(void)
{
	static const char *const cands[] = {"/sys/fs/cgroup/unified",
					    "/sys/fs/cgroup"};
	struct statfs sf;
	for (size_t i = 0; i < 2; i++)
		if (!statfs(cands[i], &sf) && sf.f_type == CGROUP2_SUPER_MAGIC) {
			snprintf(cgroot, sizeof(cgroot), "%s", cands[i]);
			return 0;
		}
	return -ENOENT;
}

/* Run argv pinned to `cpu`, in cgroup `cg` (NULL: stay); wall seconds. */
static double run_in(const char *cg, int cpu, char *const argv[])
{
	double t0 = now_s();
	pid_t p = fork();
	int st;

	if (p == 0) {
		cpu_set_t set;
		int devnull = open("/dev/null", O_WRONLY);
		if (cg) {
			char path[700], pid[32];
			int fd;
			snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
			fd = open(path, O_WRONLY);
			snprintf(pid, sizeof(pid), "%d", getpid());
			if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
				_exit(126);
			close(fd);
		}
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
		dup2(devnull, 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (p < 0 || waitpid(p, &st, 0) < 0 || !WIFEXITED(st) ||
	    WEXITSTATUS(st))
		return -1;
	return now_s() - t0;
}

static char *pipe_argv[] = {"perf", "bench", "-f", "simple", "sched", "pipe",
			    "-l", "100000", NULL};
static char *msg_argv[] = {"perf", "bench", "-f", "simple", "sched",
			   "messaging", "-g", "2", "-l", "100", NULL};
static char io_of[300];
static char *io_argv[] = {"dd", "if=/dev/zero", io_of, "bs=4k",
			  "count=20000", "oflag=direct", NULL};

static const char *const progs[] = {"np_sched_switch", "np_irq_entry",
				    "np_irq_exit", "np_softirq_entry",
				    "np_softirq_exit"};
#define NPROGS (sizeof(progs) / sizeof(progs[0]))

static int load(struct np_bpf_loader **l, uint64_t parent_id)
{
	struct np_bpf_load_opts o = {
		.pin_path = pins,
		.parent_cgid = parent_id,
		.parent_level = 1,
		.nslots = 64,
		.tick_hz = 99,
		.rate_burst = 16,
		.grace_ms = 100, /* the daemon's default */
	};
	char err[1024];
	int r = np_bpf_load(l, &o, err, sizeof(err));
	if (r)
		fprintf(stderr, "load: %s\n", err);
	return r;
}

static void set_policy(struct np_bpf_loader *l, uint64_t cgid, int allowed_cpu)
{
	const struct np_bpf_maps *m = np_bpf_loader_maps(l);
	struct np_bpf_policy pol;
	np_cpuset c;

	np_cpuset_zero(&c);
	np_cpuset_set(&c, allowed_cpu);
	np_bpf_policy_make(&pol, &c, 1, 0, 1, NP_BPF_POL_EXCLUSIVE, 0);
	bpf_map_update_elem(m->policy, &cgid, &pol, BPF_ANY);
}

/* Prints the figures of one run; the sched_switch program's ns per event
 * (-1 when the run failed). */
static double measure(struct np_bpf_loader *l, const char *what,
		      const char *cg, char *const argv[])
{
	uint64_t n0[NPROGS] = {0}, c0[NPROGS] = {0}, n1[NPROGS] = {0},
		 c1[NPROGS] = {0}, fn0, fc0, fn1, fc1;
	double t;

	for (size_t i = 0; i < NPROGS; i++)
		np_bpf_prog_stats(l, progs[i], &n0[i], &c0[i]);
	floor_stats(&fn0, &fc0);
	t = run_in(cg, 1, argv);
	floor_stats(&fn1, &fc1);
	for (size_t i = 0; i < NPROGS; i++)
		np_bpf_prog_stats(l, progs[i], &n1[i], &c1[i]);
	if (t < 0 || c1[0] == c0[0]) {
		printf("  %-44s failed (is %s installed?)\n", what, argv[0]);
		return -1;
	}
	printf("  %-44s %7.1f ns/event  (%llu events, %.2f s)\n", what,
	       (double)(n1[0] - n0[0]) / (double)(c1[0] - c0[0]),
	       (unsigned long long)(c1[0] - c0[0]), t);
	if (fc1 > fc0)
		printf("    floor: an empty sched_switch program %.1f ns/event "
		       "in the same run\n",
		       (double)(fn1 - fn0) / (double)(fc1 - fc0));
	printf("    ");
	for (size_t i = 1; i < NPROGS; i++)
		printf(" %s %.1f ns (%llu)", progs[i] + 3,
		       c1[i] > c0[i] ? (double)(n1[i] - n0[i]) /
					       (double)(c1[i] - c0[i])
				     : 0.0,
		       (unsigned long long)(c1[i] - c0[i]));
	printf("\n");
	return (double)(n1[0] - n0[0]) / (double)(c1[0] - c0[0]);
}

/* CPU 1 owned by slot 1 (no policy: nothing runs as it), or by nobody. */
static void own_cpu1(struct np_bpf_loader *l, bool owned)
{
	const struct np_bpf_maps *m = np_bpf_loader_maps(l);
	struct np_bpf_owner o = {.slot_plus1 = owned ? 2 : 0};
	__u32 cpu = 1;

	bpf_map_update_elem(m->cpu_owner, &cpu, &o, BPF_ANY);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct np_bpf_loader *l = NULL;
	int pairs = argc > 1 ? atoi(argv[1]) : 20, sfd;
	struct stat st;
	uint64_t parent_id, child_id;
	double *d, miss;

	if (geteuid() != 0 || access("/sys/kernel/btf/vmlinux", R_OK) ||
	    find_cgroup2() || system("perf --version >/dev/null 2>&1")) {
		printf("skip: needs root, /sys/kernel/btf/vmlinux, a cgroup2 "
		       "mount and perf\n");
		return 0;
	}
	snprintf(parent, sizeof(parent), "%s/np-bench-%d", cgroot, getpid());
	snprintf(child, sizeof(child), "%s/w", parent);
	snprintf(pins, sizeof(pins), "/sys/fs/bpf/np-bench-%d", getpid());
	snprintf(io_of, sizeof(io_of), "of=/var/tmp/np-bench-io-%d", getpid());
	if (mkdir(parent, 0755) || mkdir(child, 0755)) {
		perror(parent);
		return 1;
	}
	stat(parent, &st);
	parent_id = st.st_ino;
	stat(child, &st);
	child_id = st.st_ino;
	sfd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (sfd < 0)
		printf("  (bpf_enable_stats: %s: per-program figures are 0)\n",
		       strerror(errno));
	if (load(&l, parent_id))
		goto out;
	set_policy(l, child_id, 0);
	floor_attach();
	printf("== sched_switch program cost (bpf_stats; benchmark on CPU 1)\n");
	miss = measure(l, "miss path, sched pipe", NULL, pipe_argv);
	if (miss >= 0)
		bench_figure("np_sched_switch miss path (bpf_stats), sched pipe",
			     miss, "ns", 60);
	measure(l, "miss path, sched messaging", NULL, msg_argv);
	measure(l, "violating path (every switch), sched pipe", child,
		pipe_argv);
	measure(l, "violating path (every switch), sched messaging", child,
		msg_argv);
	measure(l, "miss path, disk writes (O_DIRECT)", NULL, io_argv);
	own_cpu1(l, true);
	printf("== CPU 1 exclusive (owned by another slot): intrusion path\n");
	measure(l, "intrusion path, sched pipe", NULL, pipe_argv);
	measure(l, "intrusion path, disk writes (O_DIRECT)", NULL, io_argv);
	own_cpu1(l, false);
	floor_detach();
	np_bpf_unload(l);
	l = NULL;
	/* stats cost two clock reads per run: off for the A/B */
	if (sfd >= 0)
		close(sfd);
	sfd = -1;

	printf("== end to end: %d interleaved pairs of sched pipe (100k "
	       "round trips), without / with the programs (miss path)\n",
	       pairs);
	d = calloc((size_t)pairs * 2, sizeof(*d));
	for (int i = 0; d && i < pairs; i++) {
		double a = run_in(NULL, 1, pipe_argv), b, c = 0;
		if (load(&l, parent_id))
			break;
		set_policy(l, child_id, 0);
		b = run_in(NULL, 1, pipe_argv);
		np_bpf_unload(l);
		l = NULL;
		d[i] = (b - a) / a * 100;
		/* the floor: the same tracepoint with an empty program */
		floor_attach();
		if (floor_fd >= 0)
			c = run_in(NULL, 1, pipe_argv);
		floor_detach();
		d[pairs + i] = c > 0 ? (c - a) / a * 100 : 0;
	}
	if (d) {
		qsort(d, (size_t)pairs, sizeof(*d), cmp_d);
		qsort(d + pairs, (size_t)pairs, sizeof(*d), cmp_d);
		printf("  median difference %+.2f%% (min %+.2f%%, max %+.2f%%)\n",
		       d[pairs / 2], d[0], d[pairs - 1]);
		printf("  floor, an empty sched_switch program attached instead: "
		       "median %+.2f%% (min %+.2f%%, max %+.2f%%)\n",
		       d[pairs + pairs / 2], d[pairs], d[2 * pairs - 1]);
		bench_figure("end to end, perf bench sched pipe, programs "
			     "attached vs not (median of pairs)",
			     d[pairs / 2], "%", 1);
		free(d);
	}
out:
	np_bpf_unload(l);
	if (sfd >= 0)
		close(sfd);
	unlink(io_of + 3);
	rmdir(child);
	rmdir(parent);
	{
		char cmd[400];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", pins);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", pins);
	}
	return 0;
}
