// SPDX-License-Identifier: Apache-2.0
/*
 * np-memtouch: allocate memory on a chosen NUMA node and touch it from a
 * chosen CPU (numatop's mgen, for numaplace's tests): remote accesses on
 * demand, so that NUMA hinting faults and memory.numa_stat residency have
 * a known ground truth. Raw syscalls only (no libnuma), so that the binary
 * runs in a bare initramfs.
 *
 *   np-memtouch --cpu C --node N [--bind | --preferred] [options]
 *   np-memtouch --cpu C --default [options]
 *
 * --default allocates with the default policy: the pages land on the
 * nodes the task's cpuset.mems allows. Only such memory is scanned by NUMA
 * balancing (it skips VMAs with an mbind policy unless MPOL_F_MOF), so
 * hinting faults need --default.
 *
 * Touches every page once, then re-reads and writes the range every
 * --stride bytes for --seconds (default 5) or --passes; with --wait-signal
 * it then holds the memory until SIGTERM or SIGINT (which also end the
 * access loop early). Prints one JSON line to stdout:
 *   {"cpu":C,"node":N,"bytes":B,"passes":P,"sampled":K,
 *    "pages_on_node":{"0":..,"1":..}}
 * where pages_on_node is where a sample of K (up to 4096) pages actually
 * is, from move_pages(2) in query mode; node is -1 with --default. Unless
 * --quiet, one line on stderr says when the memory is touched (a test
 * waits for it before it inspects the process).
 *
 * Exit: 0 done, 1 a system call failed, 2 a bad argument.
 */
#include "../stop_signal.h"
#include "numaplace/quantity.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MPOL_DEFAULT 0
#define MPOL_PREFERRED 1
#define MPOL_BIND 2
#define MAX_SAMPLE 4096
#define MAX_CPU 4095 /* NP_MAX_CPUS - 1 */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: np-memtouch --cpu C (--node N [--bind | --preferred] | "
		"--default)\n"
		"                   [--size 64Mi] [--seconds S | --passes P] "
		"[--stride 4096]\n"
		"                   [--wait-signal] [--quiet]\n"
		"  --size takes Kubernetes quantities: 64Mi = 64 MiB, "
		"64M = 64000000 bytes\n"
		"  prints {\"cpu\",\"node\",\"bytes\",\"passes\",\"sampled\","
		"\"pages_on_node\"} as JSON\n");
}

static int bad(const char *flag, const char *why)
{
	fprintf(stderr, "np-memtouch: %s: %s\n", flag, why);
	return 2;
}

static long number(const char *s, long lo, long hi, int *ok)
{
	char *end;
	long v;
	errno = 0;
	v = strtol(s, &end, 10);
	*ok = !errno && end != s && !*end && s[0] >= '0' && s[0] <= '9' &&
	      v >= lo && v <= hi;
	return v;
}

/* Is node N online? /sys/devices/system/node/online is a list ("0-1,3"). */
static int node_online(int node, char *list, size_t len)
{
	FILE *f = fopen("/sys/devices/system/node/online", "r");
	int ok = 0;
	if (!f) { /* no sysfs (or !CONFIG_NUMA): node 0 only */
		snprintf(list, len, "0");
		return node == 0;
	}
	if (!fgets(list, (int)len, f))
		list[0] = 0;
	fclose(f);
	list[strcspn(list, "\n")] = 0;
	for (char *p = list; *p;) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		if (node >= a && node <= b)
			ok = 1;
		p = *end == ',' ? end + 1 : end;
	}
	return ok;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct args {
	long cpu, node, seconds, passes, stride;
	uint64_t size;
	int mode, timed, wait_sig, quiet;
};

static const char *const mode_flag[] = {"--default", "--preferred", "--bind"};

/* An option getopt did not take: a long option as written (optopt holds
 * its short letter, e.g. 'c' for --cpu); a short one from optopt. */
static int bad_option(int c, char **argv)
{
	char flag[3] = {'-', (char)optopt, 0};
	const char *a = argv[optind - 1];
	const char *f = !strncmp(a, "--", 2) || !optopt ? a : flag;

	if (c == ':')
		return bad(f, "needs a value");
	usage(stderr);
	return bad(f, "unknown option");
}

/* One option: -1 to go on, else the exit code. */
static int parse_option(struct args *a, int c, char **argv, int *mode_set)
{
	long pagesz = sysconf(_SC_PAGESIZE);
	char qerr[256];
	int ok, m;

	switch (c) {
	case 'c':
		a->cpu = number(optarg, 0, MAX_CPU, &ok);
		return ok ? -1 : bad("--cpu", "expected a CPU number 0..4095");
	case 'n':
		a->node = number(optarg, 0, 63, &ok);
		return ok ? -1 : bad("--node", "expected a node number 0..63");
	case 's':
		if (np_quantity_bytes(optarg, &a->size, qerr, sizeof(qerr)) ||
		    a->size < (uint64_t)pagesz || a->size > (1ULL << 40))
			return bad("--size", "expected bytes like 64Mi or 1Gi "
					     "(a page to 1 TiB)");
		return -1;
	case 't':
		a->seconds = number(optarg, 0, 86400, &ok);
		a->timed = 1;
		return ok ? -1 : bad("--seconds", "expected 0..86400");
	case 'p':
		a->passes = number(optarg, 1, 1000000, &ok);
		return ok ? -1 : bad("--passes", "expected 1..1000000");
	case 'S':
		a->stride = number(optarg, 1, 1 << 30, &ok);
		return ok ? -1
			  : bad("--stride", "expected bytes 1..1073741824");
	case 'b':
	case 'P':
	case 'D':
		m = c == 'b'   ? MPOL_BIND
		    : c == 'P' ? MPOL_PREFERRED
			       : MPOL_DEFAULT;
		if (*mode_set && m != a->mode)
			return bad(mode_flag[m], "only one of --bind, "
						 "--preferred, --default");
		a->mode = m;
		*mode_set = 1;
		return -1;
	case 'w':
		a->wait_sig = 1;
		return -1;
	case 'q':
		a->quiet = 1;
		return -1;
	case 'h':
		usage(stdout);
		return 0;
	default:
		return bad_option(c, argv);
	}
}

/* The command line: -1 to go on, else the exit code. */
static int parse_args(struct args *a, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"cpu", required_argument, NULL, 'c'},
	    {"node", required_argument, NULL, 'n'},
	    {"size", required_argument, NULL, 's'},
	    {"seconds", required_argument, NULL, 't'},
	    {"passes", required_argument, NULL, 'p'},
	    {"stride", required_argument, NULL, 'S'},
	    {"bind", no_argument, NULL, 'b'},
	    {"preferred", no_argument, NULL, 'P'},
	    {"default", no_argument, NULL, 'D'},
	    {"wait-signal", no_argument, NULL, 'w'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	char online[256];
	int c, r, mode_set = 0;

	opterr = 0; /* our own messages, naming the flag */
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1)
		if ((r = parse_option(a, c, argv, &mode_set)) >= 0)
			return r;
	if (optind < argc)
		return bad(argv[optind], "unexpected argument");
	if (a->cpu < 0)
		return bad("--cpu", "required");
	if (a->timed && a->passes)
		return bad("--passes", "not with --seconds");
	if (a->mode == MPOL_DEFAULT && a->node >= 0)
		return bad("--node", "not with --default");
	if (a->mode != MPOL_DEFAULT && a->node < 0)
		return bad("--node", "required (or --default)");
	if (a->node >= 0 &&
	    !node_online((int)a->node, online, sizeof(online))) {
		fprintf(stderr,
			"np-memtouch: --node %ld: no such NUMA node "
			"(online: %s)\n",
			a->node, online);
		return 2;
	}
	return -1;
}

static int pin_cpu(long cpu)
{
	cpu_set_t *set = CPU_ALLOC(MAX_CPU + 1);

	if (!set) {
		perror("np-memtouch: CPU_ALLOC");
		return 1;
	}
	CPU_ZERO_S(CPU_ALLOC_SIZE(MAX_CPU + 1), set);
	CPU_SET_S((size_t)cpu, CPU_ALLOC_SIZE(MAX_CPU + 1), set);
	if (sched_setaffinity(0, CPU_ALLOC_SIZE(MAX_CPU + 1), set)) {
		fprintf(stderr,
			"np-memtouch: --cpu %ld: %s (no such CPU, "
			"offline, or outside this cgroup's cpuset)\n",
			cpu, strerror(errno));
		return 1;
	}
	CPU_FREE(set);
	return 0;
}

/* Map a->size bytes with the memory policy and touch every page: 0, or
 * the exit code. */
static int touch_memory(const struct args *a, volatile unsigned char **out)
{
	long pagesz = sysconf(_SC_PAGESIZE);
	volatile unsigned char *mem;
	unsigned long mask;

	mem = mmap(NULL, a->size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("np-memtouch: mmap");
		return 1;
	}
	mask = a->node >= 0 ? 1UL << a->node : 0;
	/* mbind(2)'s maxnode: the kernel reads maxnode - 1 bits (it starts
	 * with --maxnode), hence one more than the bits of the mask */
	if (a->mode != MPOL_DEFAULT &&
	    syscall(SYS_mbind, mem, a->size, a->mode, &mask,
		    8 * sizeof(mask) + 1, 0)) {
		fprintf(stderr,
			"np-memtouch: mbind(%s node %ld): %s (outside "
			"this cgroup's cpuset.mems?)\n",
			mode_flag[a->mode], a->node, strerror(errno));
		return 1;
	}
	for (uint64_t o = 0; o < a->size; o += (uint64_t)pagesz)
		mem[o] = 1;
	if (!a->quiet) {
		char pol[48];
		snprintf(pol, sizeof(pol), a->node >= 0 ? "%s node %ld" : "%s",
			 mode_flag[a->mode] + 2, a->node);
		fprintf(stderr,
			"np-memtouch: pid %d: %llu bytes touched from "
			"CPU %ld (%s), accessing for %ld %s%s\n",
			(int)getpid(), (unsigned long long)a->size, a->cpu, pol,
			a->passes ? a->passes : a->seconds,
			a->passes ? "passes" : "s",
			a->wait_sig ? ", then holding until SIGTERM" : "");
	}
	*out = mem;
	return 0;
}

/* Keep accessing, so that NUMA balancing scans produce hinting faults on
 * these pages: the number of passes done. */
static long access_loop(const struct args *a, volatile unsigned char *mem)
{
	double t0 = now_s();
	long done = 0;

	while (!stop) {
		for (uint64_t o = 0; o < a->size; o += (uint64_t)a->stride)
			mem[o]++;
		done++;
		if (a->passes ? done >= a->passes
			      : now_s() - t0 >= (double)a->seconds)
			break;
	}
	return done;
}

/* Until SIGTERM or SIGINT. Block before testing `stop`: a signal between
 * the test and the wait stays pending and sigsuspend() (which unblocks
 * atomically) returns at once, instead of pause() sleeping through it. */
static void hold_until_signal(void)
{
	sigset_t block, old;

	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &old);
	while (!stop)
		sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* Where a sample of the pages is (move_pages(2) in query mode), as the
 * JSON line: 0, or 1 if the query failed. */
static int report(const struct args *a, volatile unsigned char *mem, long done)
{
	long pagesz = sysconf(_SC_PAGESIZE), counts[64] = {0}, k = 0;
	long npages = (long)(a->size / (uint64_t)pagesz), step;
	void *pages[MAX_SAMPLE];
	int status[MAX_SAMPLE], rc = 0;

	step = npages > MAX_SAMPLE ? npages / MAX_SAMPLE : 1;
	for (long i = 0; i < npages && k < MAX_SAMPLE; i += step)
		pages[k++] = (void *)(mem + i * pagesz);
	/* nodes == NULL: only report each page's node in status[] */
	if (syscall(SYS_move_pages, 0, k, pages, NULL, status, 0)) {
		fprintf(stderr, "np-memtouch: move_pages (query): %s\n",
			strerror(errno));
		rc = 1;
	} else {
		for (long i = 0; i < k; i++)
			if (status[i] >= 0 && status[i] < 64)
				counts[status[i]]++;
	}
	printf("{\"cpu\":%ld,\"node\":%ld,\"bytes\":%llu,\"passes\":%ld,"
	       "\"sampled\":%ld,\"pages_on_node\":{",
	       a->cpu, a->node, (unsigned long long)a->size, done, k);
	for (int n = 0, first = 1; n < 64; n++)
		if (counts[n]) {
			printf("%s\"%d\":%ld", first ? "" : ",", n, counts[n]);
			first = 0;
		}
	printf("}}\n");
	return rc;
}

int main(int argc, char **argv)
{
	struct args a = {.cpu = -1,
			 .node = -1,
			 .seconds = 5,
			 .stride = 4096,
			 .size = 64ULL << 20,
			 .mode = MPOL_BIND};
	volatile unsigned char *mem;
	long done;
	int r;

	if ((r = parse_args(&a, argc, argv)) >= 0)
		return r;
	if ((r = pin_cpu(a.cpu)))
		return r;
	/* Signals first: a SIGTERM during the first touch must still end in
	 * the JSON line (it ends the access loop at once). */
	stop_on_signals();
	if ((r = touch_memory(&a, &mem)))
		return r;
	done = access_loop(&a, mem);
	if (a.wait_sig)
		hold_until_signal();
	return report(&a, mem, done);
}
