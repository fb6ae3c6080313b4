// SPDX-License-Identifier: Apache-2.0
/*
 * Reconcile cycle cost on a fake cgroup tree (plain directories with the
 * same files; the test-only fake_cgroup_root mode): N shared workloads plus
 * exclusive ones (1 in 50), first cycle (creates and writes everything),
 * then steady cycles that find nothing to do, and one after a single
 * drift. Prints wall and CPU time per cycle and the process's memory
 * (VmHWM: peak, VmRSS: after the cycles, from /proc/self/status); asserts
 * nothing. Each size runs in a child process so that its memory figures
 * are its own. The tree lives in $NP_BENCH_DIR, else /dev/shm (tmpfs, in
 * memory like cgroupfs), else /tmp.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>

#include "daemon/daemon_internal.h"
#include "figure.h"
#include "numaplace/daemon.h"
#include "numaplace/topology_json.h"
#include "topo_gen.h"

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* VmHWM / VmRSS in KiB. */
static long status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long v = -1;
	size_t n = strlen(key);

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':') {
			v = atol(line + n + 1);
			break;
		}
	fclose(f);
	return v;
}

static const char *bench_base(void)
{
	const char *e = getenv("NP_BENCH_DIR");
	struct stat sb;

	if (e && *e)
		return e;
	if (!stat("/dev/shm", &sb) && S_ISDIR(sb.st_mode) &&
	    !access("/dev/shm", W_OK))
		return "/dev/shm";
	return "/tmp";
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void print_pct(const char *what, double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	printf("        %-13s p50 %.2f ms, p99 %.2f ms, max %.2f ms (n=%d)\n",
	       what, v[n / 2], v[(int)(0.99 * (n - 1) + 0.5)], v[n - 1], n);
}

/* The run's figures the floor's process (after it) holds them to
 * (issue 32: each target a ratio to its floor, same run). */
struct run_figures {
	double first, restart; /* ms, 0: not measured */
};
static struct run_figures *shared;

/* Admission through the daemon, acknowledged and durable, with this many
 * workloads admitted: a control request as the socket server hands it
 * over (np_daemon_handle: admit, durable state save; the loop's cycle
 * that writes the cgroup; the answer), then its release, NP_BENCH_ADMITS times (default 100: the
 * p99 is the second largest, not the largest). No
 * socket hop: that adds about 0.1 ms (np-ctl-latency in the VM). "then
 * files": the placement files the loop writes after answering (every
 * shared workload's file follows its pool). */
static double durable_admits(struct np_daemon *d, const char *qos,
			     const char *cpu, const char *wait)
{
	int n = 100, fails = 0, err_fd, null_fd;
	double *a, *r, *pf, *in, *cput, p99;
	bool durable = !strcmp(wait, "durable");

	if (getenv("NP_BENCH_ADMITS") && atoi(getenv("NP_BENCH_ADMITS")) > 0)
		n = atoi(getenv("NP_BENCH_ADMITS"));
	a = calloc((size_t)n, sizeof(*a));
	r = calloc((size_t)n, sizeof(*r));
	pf = calloc((size_t)n, sizeof(*pf));
	in = calloc((size_t)n, sizeof(*in));
	cput = calloc((size_t)n, sizeof(*cput));
	/* the daemon logs each admission and release: not timed here */
	fflush(stderr);
	err_fd = dup(2);
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null_fd >= 0)
		dup2(null_fd, 2);
	for (int i = 0; i < n; i++) {
		json_t *ad = json_pack(
			"{s:s,s:s,s:{s:s,s:s,s:[{s:s,s:s}]}}", "op", "admit",
			"wait", wait, "spec", "name", "lat-bench", "qos", qos,
			"containers", "name", "m", "cpu", cpu);
		json_t *rel = json_pack("{s:s,s:s,s:s}", "op", "release",
					"name", "lat-bench", "wait", wait);
		double t0 = now_ms(), c0 = cpu_ms();
		json_t *res = np_daemon_handle(d, ad);
		bool held = d->answer_after_cycle;
		a[i] = now_ms() - t0;
		/* as the loop does: the cycle the request asks for (after a
		 * durable answer; before an answer in force, which counts
		 * it), then the placement files */
		t0 = now_ms();
		if (d->cycle_due)
			np_daemon_reconcile(d);
		in[i] = now_ms() - t0;
		if (held) {
			res = np_daemon_answer(d, res);
			a[i] += in[i];
		}
		/* the process's CPU time of the admission and its cycle
		 * (on a busy machine the wall time also counts the waits
		 * for a CPU) */
		cput[i] = cpu_ms() - c0;
		fails += !json_is_true(json_object_get(res, "ok"));
		json_decref(res);
		t0 = now_ms();
		np_daemon_placement_files(d);
		pf[i] = now_ms() - t0;
		t0 = now_ms();
		res = np_daemon_handle(d, rel);
		held = d->answer_after_cycle;
		r[i] = now_ms() - t0;
		t0 = now_ms();
		if (d->cycle_due)
			np_daemon_reconcile(d);
		if (held) {
			res = np_daemon_answer(d, res);
			r[i] += now_ms() - t0;
		}
		np_daemon_placement_files(d);
		fails += !json_is_true(json_object_get(res, "ok"));
		json_decref(res);
		json_decref(ad);
		json_decref(rel);
	}
	if (err_fd >= 0) {
		dup2(err_fd, 2);
		close(err_fd);
	}
	if (null_fd >= 0)
		close(null_fd);
	printf("        through the daemon, %s %s CPU, \"wait\": \"%s\":%s\n",
	       qos, cpu, wait, fails ? " (the node is full: rejected)" : "");
	print_pct("admit+ack", a, n); /* sorts a */
	print_pct("its CPU time", cput, n);
	p99 = fails ? 0 : a[(int)(0.99 * (n - 1) + 0.5)];
	if (d->st.nworkloads == 1000 && !fails) {
		char name[200];
		/* the figure of the target: acknowledged once durable */
		if (durable)
			snprintf(name, sizeof(name),
				 "admission through the daemon, acknowledged "
				 "and durable, at 1,000 admitted workloads, %s, "
				 "p99",
				 qos);
		else
			snprintf(name, sizeof(name),
				 "admission through the daemon, acknowledged "
				 "in force (the default wait), at 1,000 "
				 "admitted workloads, %s, p99",
				 qos);
		bench_figure(name, a[(int)(0.99 * (n - 1) + 0.5)], "ms", 5);
	}
	if (durable)
		print_pct("then in force", in, n);
	print_pct("release+ack", r, n);
	print_pct("then files", pf, n);
	free(a);
	free(r);
	free(pf);
	free(in);
	free(cput);
	return p99;
}

/* VmHWM starts again from VmRSS (Linux 4.0+), so that a restart's peak
 * is its own. */
static void reset_hwm(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, "5", 1) != 1)
			perror("clear_refs");
		close(fd);
	}
}

/* numaplaced restarted on the same state and tree: its first cycle finds
 * every cgroup in place (what a restart on a node does; the first cycle
 * above creates them all). d is the new daemon after. killed: as after a
 * SIGKILL, the journal's records since the last compaction are left for
 * the load to replay (a clean stop compacts them into state.json). */
static void restart_cycle(struct np_daemon *d, const char *cfgpath,
			  int nworkloads, bool killed)
{
	char err[1024];
	double t0, c0, ms, cpu, load;
	int n = d->st.nworkloads;
	long steady = status_kb("VmRSS"); /* the daemon's before it stops */

	if (killed)
		np_journal_fini(&d->journal); /* no compaction at the stop */
	np_daemon_fini(d);
	reset_hwm();
	t0 = now_ms();
	if (np_daemon_init(d, cfgpath, 0, err, sizeof(err))) {
		fprintf(stderr, "restart: %s\n", err);
		exit(1);
	}
	load = now_ms() - t0;
	t0 = now_ms();
	c0 = cpu_ms();
	np_daemon_reconcile(d);
	cpu = cpu_ms() - c0;
	ms = now_ms() - t0;
	printf("        %s %8.1f ms (CPU %7.1f ms), first cycle of "
	       "a restart: %d workloads loaded (in %.1f ms: the state file "
	       "and its journal), %d cgroups written; then VmRSS %.1f MiB, "
	       "VmHWM %.1f MiB (the restart's peak)\n",
	       killed ? "after a kill " : "restarted    ", ms, cpu,
	       d->st.nworkloads, load, d->last_cycle.writes,
	       status_kb("VmRSS") / 1024.0, status_kb("VmHWM") / 1024.0);
	if (d->st.nworkloads != n)
		printf("        (loaded %d workloads, had %d)\n",
		       d->st.nworkloads, n);
	/* issue 32: the state streamed, never whole */
	if (nworkloads == 10000)
		bench_ratio(killed ? "restart peak memory (VmHWM) at 10,000, "
				     "after a kill (the journal replayed)"
				   : "restart peak memory (VmHWM) at 10,000, "
				     "after a stop",
			    status_kb("VmHWM") / 1024.0, "MiB",
			    "the daemon's VmRSS before it stopped",
			    steady / 1024.0, 1.5);
	if (killed)
		return;
	if (nworkloads == 10000) {
		bench_figure("reconcile 10,000, first cycle after a restart "
			     "(the cgroups in place)", ms, "ms", 200);
		shared->restart = ms;
	}
	fflush(stdout);
}

/*
 * The floor of an LSE admission in force at 1,000 shared workloads: the
 * shared pool shrinks everywhere before exclusivity holds, so each
 * workload's cpuset.cpus is written once. Here the same files of the
 * same tree are written with what they hold (open, write, close; the
 * median of 5 rounds), nothing else. ms, or 0 when none could be.
 */
static double cpuset_write_floor(const struct np_daemon *d, const char *cg)
{
	double rounds[5];
	char p[1600], buf[4096];
	int nw = 0;

	for (int k = 0; k < 5; k++) {
		double t = 0;

		nw = 0;
		for (int i = 0; i < d->st.nworkloads; i++) {
			ssize_t len;
			double t0;
			int fd;

			snprintf(p, sizeof(p), "%s/%s/cpuset.cpus", cg,
				 d->st.w[i]->req.cgroup);
			if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
				continue;
			len = read(fd, buf, sizeof(buf));
			close(fd);
			if (len <= 0)
				continue;
			t0 = now_ms();
			fd = open(p, O_WRONLY | O_TRUNC | O_CLOEXEC);
			if (fd >= 0 && write(fd, buf, (size_t)len) == len)
				nw++;
			if (fd >= 0)
				close(fd);
			t += now_ms() - t0;
		}
		rounds[k] = t;
	}
	qsort(rounds, 5, sizeof(double), cmp_double);
	printf("        floor of writing %d cpusets in the same tree: "
	       "%.2f ms (median of 5 rounds, min %.2f)\n",
	       nw, rounds[2], rounds[0]);
	return nw ? rounds[2] : 0;
}

static void run(int nworkloads)
{
	char dir[512], path[600], cfgpath[600], err[1024];
	struct np_topology *t = np_test_topology(2, 4, 16, 2, true, 64ULL << 30);
	json_t *topo = np_topology_to_json(t), *cfg;
	struct np_daemon d;
	double t0, c0, first, first_cpu, save_ms, steady = 0, steady_cpu = 0,
	       walk = 0, walk_cpu = 0, drift, drift_cpu, lse;
	int admitted = 0, nsteady = 5;
	long rss_admitted, rss_first;
	FILE *f;

	/* NP_BENCH_STEADY=n: average over n steady cycles (for profiling). */
	if (getenv("NP_BENCH_STEADY") && atoi(getenv("NP_BENCH_STEADY")) > 0)
		nsteady = atoi(getenv("NP_BENCH_STEADY"));
	snprintf(dir, sizeof(dir), "%s/np-bench-XXXXXX", bench_base());
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/cg", dir);
	mkdir(path, 0755);
	{
		static const char *const files[][2] = {
			{"cgroup.controllers", "cpuset cpu memory\n"},
			{"cgroup.subtree_control", ""},
			{"cgroup.procs", ""},
			{"cpuset.cpus.effective", "0-255\n"},
			{"cpuset.mems.effective", "0-7\n"},
		};
		for (unsigned k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
			snprintf(path, sizeof(path), "%s/cg/%s", dir, files[k][0]);
			f = fopen(path, "w");
			fputs(files[k][1], f);
			fclose(f);
		}
	}
	snprintf(path, sizeof(path), "%s/topology.json", dir);
	json_dump_file(topo, path, 0);
	cfg = json_pack("{s:{s:s,s:i,s:s},s:s,s:s,s:b,s:s,s:s,s:s}",
			"node_policy", "cpu_policy", "static", "reserved_cpus",
			2, "topology_policy", "best-effort", "topology", path,
			"cgroup_root", "", "fake_cgroup_root", 1, "spec_dir",
			"/nonexistent", "state_dir", "", "socket", "");
	snprintf(path, sizeof(path), "%s/cg", dir);
	json_object_set_new(cfg, "cgroup_root", json_string(path));
	/* NP_BENCH_STATE_DIR: the state on another file system (a disk:
	 * the durable admissions then pay for real fsyncs) */
	if (getenv("NP_BENCH_STATE_DIR") && *getenv("NP_BENCH_STATE_DIR"))
		snprintf(path, sizeof(path), "%s/np-bench-state-%d",
			 getenv("NP_BENCH_STATE_DIR"), (int)getpid());
	else
		snprintf(path, sizeof(path), "%s/state", dir);
	json_object_set_new(cfg, "state_dir", json_string(path));
	snprintf(path, sizeof(path), "%s/np.sock", dir);
	json_object_set_new(cfg, "socket", json_string(path));
	/* NP_BENCH_PLACEMENT=0: without the placement files */
	if (getenv("NP_BENCH_PLACEMENT") && !atoi(getenv("NP_BENCH_PLACEMENT")))
		json_object_set_new(cfg, "placement_files", json_false());
	snprintf(cfgpath, sizeof(cfgpath), "%s/np.json", dir);
	json_dump_file(cfg, cfgpath, 0);
	if (np_daemon_init(&d, cfgpath, 0, err, sizeof(err))) {
		fprintf(stderr, "init: %s\n", err);
		exit(1);
	}
	for (int i = 0; i < nworkloads; i++) {
		char name[32];
		json_t *spec;
		snprintf(name, sizeof(name), "w%d", i);
		spec = json_pack("{s:s,s:s,s:s,s:[{s:s,s:s}]}", "name", name,
				 "cgroup", name, "qos", i % 50 == 0 ? "LSE" : "LS",
				 "containers", "name", "main", "cpu",
				 i % 50 == 0 ? "2" : "500m");
		/* admit without the per-request reconcile: go through the
		 * state directly, the cycle below does the writes */
		struct np_workload_req w;
		struct np_decision dec;
		if (np_workload_req_from_json(&w, spec, "spec", err, sizeof(err)) ==
			    0 &&
		    np_admit(&d.st, &w, &dec, err, sizeof(err)) == 0 &&
		    dec.admitted)
			admitted++;
		np_workload_req_free(&w);
		json_decref(spec);
	}
	/* each workload's record, as an admission gives it (not
	 * established: the first cycle creates its cgroup) */
	for (int i = 0; i < d.st.nworkloads; i++)
		if (!np_daemon_meta_add(&d, d.st.w[i]->req.name)) {
			fprintf(stderr, "out of memory\n");
			exit(1);
		}
	/* on disk as the admissions leave it: the daemon saves each one
	 * before it answers (acknowledged means durable), so no cycle
	 * finds thousands of admissions unsaved; the first cycle saves
	 * then what it changed (its cgroups no longer pending), a journal
	 * record. Timed apart: the snapshot of this many workloads. */
	d.dirty = true;
	t0 = now_ms();
	if (np_daemon_save(&d)) {
		fprintf(stderr, "state not saved\n");
		exit(1);
	}
	save_ms = now_ms() - t0;
	rss_admitted = status_kb("VmRSS");
	t0 = now_ms();
	c0 = cpu_ms();
	np_daemon_reconcile(&d);
	first_cpu = cpu_ms() - c0;
	first = now_ms() - t0;
	rss_first = status_kb("VmRSS");
	/* NP_BENCH_FIRST_ONLY=1: stop after the first cycle (profiling) */
	if (getenv("NP_BENCH_FIRST_ONLY") && atoi(getenv("NP_BENCH_FIRST_ONLY"))) {
		printf("first cycle %.1f ms (CPU %.1f ms), VmRSS %.1f MiB; "
		       "the admissions' state saved before it in %.1f ms\n",
		       first, first_cpu, rss_first / 1024.0, save_ms);
		fflush(stdout);
		snprintf(path, sizeof(path), "rm -rf %s", dir);
		if (system(path) != 0)
			fprintf(stderr, "cleanup of %s failed\n", dir);
		_exit(0);
	}
	np_daemon_reconcile(&d); /* warm-up */
	for (int k = 0; k < nsteady; k++) {
		t0 = now_ms();
		c0 = cpu_ms();
		np_daemon_reconcile(&d);
		steady_cpu += (cpu_ms() - c0) / nsteady;
		steady += (now_ms() - t0) / nsteady;
	}
	/* the same with the skip turned off: every managed cgroup looked at
	 * (cached reads: no file read again) */
	for (int k = 0; k < nsteady; k++) {
		d.quiet_ok = false;
		t0 = now_ms();
		c0 = cpu_ms();
		np_daemon_reconcile(&d);
		walk_cpu += (cpu_ms() - c0) / nsteady;
		walk += (now_ms() - t0) / nsteady;
	}
	snprintf(path, sizeof(path), "%s/cg/numaplace.slice/w1/cpuset.cpus", dir);
	f = fopen(path, "w");
	fputs("0\n", f);
	fclose(f);
	t0 = now_ms();
	c0 = cpu_ms();
	np_daemon_reconcile(&d);
	drift_cpu = cpu_ms() - c0;
	drift = now_ms() - t0;
	printf("%6d workloads (%d admitted, %d cgroups, last cycle %d "
	       "writes)\n"
	       "        first cycle   %8.1f ms (CPU %7.1f ms); before it, "
	       "the admissions' state saved in %.1f ms (a snapshot)\n"
	       "        steady cycle  %8.3f ms (CPU %7.3f ms), nothing to do "
	       "(%llu of %llu cycles skipped the cgroups)\n"
	       "        every cgroup  %8.1f ms (CPU %7.1f ms), nothing to do, "
	       "the skip off\n"
	       "        drift cycle   %8.1f ms (CPU %7.1f ms), 1 drift repaired "
	       "(total %llu)\n"
	       "        memory        VmHWM %.1f MiB, VmRSS %.1f MiB (%.1f MiB "
	       "after admission, %.1f MiB after the first cycle)\n",
	       nworkloads, admitted, d.st.nworkloads, d.last_cycle.writes,
	       first, first_cpu, save_ms, steady, steady_cpu,
	       (unsigned long long)d.n.quiet_cycles,
	       (unsigned long long)d.n.cycles, walk, walk_cpu, drift, drift_cpu,
	       (unsigned long long)d.n.drift_repaired,
	       status_kb("VmHWM") / 1024.0, status_kb("VmRSS") / 1024.0,
	       rss_admitted / 1024.0, rss_first / 1024.0);
	if (nworkloads == 10000) {
		bench_figure("reconcile 10,000 workloads, cycle with nothing "
			     "changed", steady, "ms", 5);
		bench_figure("reconcile 10,000, first cycle", first, "ms", 200);
		shared->first = first;
		bench_figure("VmRSS of the reconcile benchmark at 10,000",
			     status_kb("VmRSS") / 1024.0, "MiB", 16);
		bench_figure("VmHWM of the reconcile benchmark at 10,000",
			     status_kb("VmHWM") / 1024.0, "MiB", 32);
	}
	fflush(stdout);
	/* LSE: the shared pool shrinks, every shared cgroup is written */
	lse = durable_admits(&d, "LSE", "1", "enforced");
	if (nworkloads == 1000 && lse > 0) {
		char cg[1200];

		snprintf(cg, sizeof(cg), "%s/cg/%s", dir,
			 d.cfg.cgroup_parent);
		bench_ratio("admission through the daemon, LSE in force, at "
			    "1,000 admitted workloads, p99",
			    lse, "ms",
			    "writing their 1,000 cpusets in the same tree",
			    cpuset_write_floor(&d, cg), 1.5);
	}
	durable_admits(&d, "LSE", "1", "durable");
	durable_admits(&d, "LS", "500m", "enforced");
	durable_admits(&d, "LS", "500m", "durable");
	fflush(stdout);
	/* last: the admissions above run on the daemon of the first cycle */
	restart_cycle(&d, cfgpath, nworkloads, true);
	restart_cycle(&d, cfgpath, nworkloads, false);
	np_daemon_fini(&d);
	np_topology_free(t);
	json_decref(topo);
	json_decref(cfg);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path) != 0)
		fprintf(stderr, "cleanup of %s failed\n", dir);
	if (getenv("NP_BENCH_STATE_DIR") && *getenv("NP_BENCH_STATE_DIR")) {
		snprintf(path, sizeof(path), "rm -rf %s/np-bench-state-%d",
			 getenv("NP_BENCH_STATE_DIR"), (int)getpid());
		if (system(path) != 0)
			fprintf(stderr, "cleanup of the state failed\n");
	}
}

/*
 * The first cycle's floor on this machine: the same number of cgroups
 * made in a fresh fake tree with the fewest system calls a first cycle
 * needs, and nothing else (no daemon, no checks, no read-back, no state):
 * mkdir and the eight files the fake tree gives a cgroup, cpuset.cpus and
 * cpuset.mems written, both opened, read and watched (IN_MODIFY) as the
 * read cache does. Printed beside the first cycle, not a target.
 */
static void first_cycle_floor(int n)
{
	static const char *const files[] = {
	    "cgroup.controllers", "cgroup.subtree_control", "cgroup.procs",
	    "cpuset.cpus",	  "cpuset.mems",	    "cpuset.cpus.effective",
	    "cpuset.mems.effective", "cpu.max"};
	double make = 0, write_ms = 0, watch = 0, t0, t1, t2, t3, c0;
	char dir[512], p[600];
	int pfd, ifd, cwd, *keep = calloc((size_t)n * 2, sizeof(int));

	struct rlimit rl;

	/* two descriptors kept per cgroup, as numaplaced does (it raises
	 * its soft limit to the hard one) */
	if (getrlimit(RLIMIT_NOFILE, &rl)) {
		fprintf(stderr, "floor: getrlimit: %m\n");
		exit(1);
	}
	rl.rlim_cur = rl.rlim_max;
	(void)setrlimit(RLIMIT_NOFILE, &rl);
	snprintf(dir, sizeof(dir), "%s/np-floor-XXXXXX", bench_base());
	if (!keep || !mkdtemp(dir) ||
	    (cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    (pfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    (ifd = inotify_init1(IN_CLOEXEC)) < 0) {
		fprintf(stderr, "floor: %s: %m\n", dir);
		exit(1);
	}
	c0 = cpu_ms();
	for (int i = 0; i < n; i++) {
		char name[32], buf[64];
		int d, w;
		snprintf(name, sizeof(name), "w%d", i);
		t0 = now_ms();
		if (mkdirat(pfd, name, 0755) ||
		    (d = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
			fprintf(stderr, "floor: %s/%s: %m\n", dir, name);
			exit(1);
		}
		for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++)
			(void)mknodat(d, files[k], S_IFREG | 0644, 0);
		t1 = now_ms();
		for (int k = 0; k < 2; k++) {
			w = openat(d, k ? "cpuset.mems" : "cpuset.cpus",
				   O_WRONLY | O_TRUNC | O_CLOEXEC);
			if (w < 0 || write(w, k ? "0-7" : "0-63", k ? 3 : 4) < 0) {
				fprintf(stderr, "floor: write in %s: %m\n", name);
				exit(1);
			}
			close(w);
		}
		t2 = now_ms();
		for (int k = 0; k < 2; k++) {
			int r = openat(d, k ? "cpuset.mems" : "cpuset.cpus",
				       O_RDONLY | O_CLOEXEC);
			keep[2 * i + k] = r;
			if (r < 0 || pread(r, buf, sizeof(buf), 0) < 0) {
				fprintf(stderr, "floor: read in %s: %m\n", name);
				exit(1);
			}
			/* by name from the cgroup's directory, as the read
			 * cache does (a /proc/self/fd/N path costs a proc
			 * lookup the daemon no longer pays) */
			if (k == 0 && fchdir(d)) {
				fprintf(stderr, "floor: fchdir %s: %m\n", name);
				exit(1);
			}
			(void)inotify_add_watch(ifd, k ? "cpuset.mems"
						       : "cpuset.cpus",
						IN_MODIFY);
			/* beyond the descriptor limit numaplaced keeps none
			 * (the watch stays) */
			if ((rlim_t)(2 * i + k) + 64 >= rl.rlim_cur) {
				close(r);
				keep[2 * i + k] = -1;
			}
		}
		close(d);
		t3 = now_ms();
		make += t1 - t0;
		write_ms += t2 - t1;
		watch += t3 - t2;
	}
	c0 = cpu_ms() - c0;
	if (fchdir(cwd))
		fprintf(stderr, "floor: fchdir back: %m\n");
	close(cwd);
	printf("        floor         %8.1f ms (CPU %7.1f ms): the same "
	       "cgroups with the fewest system calls, nothing else (mkdir "
	       "and 8 files %.1f, 2 writes %.1f, 2 opens, reads and watches "
	       "%.1f)\n",
	       make + write_ms + watch, c0, make, write_ms, watch);
	if (n == 10000 && shared->first > 0)
		bench_ratio("reconcile 10,000, first cycle", shared->first,
			    "ms", "the same cgroups made, written, opened and "
			    "watched with the fewest system calls",
			    make + write_ms + watch, 1.25);
	if (n == 10000 && shared->restart > 0)
		bench_ratio("reconcile 10,000, first cycle after a restart",
			    shared->restart, "ms",
			    "the cgroups that exist opened, read and watched",
			    watch, 1.5);
	fflush(stdout);
	for (int i = 0; i < 2 * n; i++)
		if (keep[i] >= 0)
			close(keep[i]);
	free(keep);
	close(ifd);
	close(pfd);
	snprintf(p, sizeof(p), "rm -rf %s", dir);
	if (system(p) != 0)
		fprintf(stderr, "cleanup of %s failed\n", dir);
}

/*
 * The kernel's own cost of making and removing n cgroups, where the fake
 * tree has mkdir and eight files: NP_BENCH_CGROUP2=DIR, a directory of a
 * cgroup2 hierarchy we may write to (a hybrid host's
 * /sys/fs/cgroup/unified, a delegated subtree), gets a child of its own
 * with n cgroups below, removed after. Off by default (it writes to the
 * host's cgroups). Printed beside the floor, not a target.
 */
static void real_cgroup_mkdir(int n)
{
	const char *base = getenv("NP_BENCH_CGROUP2");
	char dir[512], ctl[256] = "", name[32];
	struct statfs sf;
	double t0, mk, rm;
	int pfd, fd;
	ssize_t len;

	if (!base || !*base)
		return;
	if (statfs(base, &sf) || sf.f_type != CGROUP2_SUPER_MAGIC) {
		fprintf(stderr, "NP_BENCH_CGROUP2=%s: not a cgroup2 directory\n",
			base);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/np-floor-%d", base, (int)getpid());
	if (mkdir(dir, 0755) ||
	    (pfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "NP_BENCH_CGROUP2: %s: %m\n", dir);
		return;
	}
	if ((fd = openat(pfd, "cgroup.controllers", O_RDONLY | O_CLOEXEC)) >= 0) {
		len = read(fd, ctl, sizeof(ctl) - 1);
		ctl[len > 0 ? len : 0] = '\0';
		ctl[strcspn(ctl, "\n")] = '\0';
		close(fd);
	}
	t0 = now_ms();
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "w%d", i);
		if (mkdirat(pfd, name, 0755)) {
			fprintf(stderr, "NP_BENCH_CGROUP2: %s/%s: %m\n", dir,
				name);
			n = i;
			break;
		}
	}
	mk = now_ms() - t0;
	t0 = now_ms();
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "w%d", i);
		(void)unlinkat(pfd, name, AT_REMOVEDIR);
	}
	rm = now_ms() - t0;
	close(pfd);
	if (rmdir(dir))
		fprintf(stderr, "NP_BENCH_CGROUP2: rmdir %s: %m\n", dir);
	printf("        real cgroup2  %8.1f ms: mkdir of %d cgroups by the "
	       "kernel in %s (rmdir %.1f ms; controllers there: %s)\n",
	       mk, n, base, rm, ctl[0] ? ctl : "none");
	fflush(stdout);
}

/* Each size in its own process: memory figures are per size. */
static void run_child(int nworkloads)
{
	if (!shared) {
		shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (shared == MAP_FAILED) {
			perror("mmap");
			exit(1);
		}
	}
	memset(shared, 0, sizeof(*shared));
	/* the run, then (unless profiling the first cycle) the floor, each in
	 * a process of its own */
	for (int step = 0; step < 2; step++) {
		pid_t pid;
		int st;

		if (step == 1 && getenv("NP_BENCH_FIRST_ONLY"))
			break;
		if ((pid = fork()) == 0) {
			if (step == 0)
				run(nworkloads);
			else {
				first_cycle_floor(nworkloads);
				real_cgroup_mkdir(nworkloads);
			}
			exit(0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st)) {
			fprintf(stderr, "bench %s of %d workloads failed\n",
				step ? "floor" : "run", nworkloads);
			exit(1);
		}
	}
}

int main(int argc, char **argv)
{
	struct rlimit rl;

	/* numaplaced keeps two files open per managed cgroup and raises its
	 * soft limit to the hard one; under systemd the hard limit is 524288.
	 * Model that when allowed (CAP_SYS_RESOURCE); the daemon reads the
	 * cgroups beyond its limit without the cache. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_max < 65536) {
		struct rlimit want = {65536, 65536};
		(void)setrlimit(RLIMIT_NOFILE, &want);
	}
	if (!getrlimit(RLIMIT_NOFILE, &rl))
		printf("RLIMIT_NOFILE hard limit %llu\n",
		       (unsigned long long)rl.rlim_max);
	printf("reconcile cycle on a fake cgroup tree in %s; 2 sockets, 8 NUMA "
	       "nodes, 256 CPUs; 1 in 50 workloads LSE\n",
	       bench_base());
	fflush(stdout);
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			run_child(atoi(argv[i]));
		return 0;
	}
	run_child(100);
	run_child(1000);
	run_child(10000);
	printf("targets: the figure lines (bench/summary.sh gathers them)\n");
	return 0;
}
