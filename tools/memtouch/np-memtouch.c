// SPDX-License-Identifier: Apache-2.0
/*
 * np-memtouch: allocate memory on a chosen NUMA node and touch it from a
 * chosen CPU (numatop's mgen, for numaplace's tests): remote accesses on
 * demand, so that NUMA hinting faults and memory.numa_stat residency have
 * a known ground truth.
 *
 *   np-memtouch --cpu C --node N [--size 64M] [--seconds S | --passes P]
 *               [--stride 4096] [--bind | --preferred] [--wait-signal]
 *   np-memtouch --cpu C --default ...
 *
 * --default allocates with the default policy: the pages land on the
 * nodes the task's cpuset.mems allows. Only such memory is scanned by NUMA
 * balancing (it skips VMAs with an mbind policy unless MPOL_F_MOF), so
 * hinting faults need --default.
 *
 * Prints one JSON line: {"cpu","node","bytes","passes","pages_on_node":{}}
 * (where a sample of up to 4096 pages actually is, from move_pages(2)).
 */
#include "numaplace/quantity.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
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

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: np-memtouch --cpu C (--node N [--bind | --preferred] | "
		"--default)\n"
		"                   [--size 64M] [--seconds S | --passes P] "
		"[--stride BYTES]\n"
		"                   [--wait-signal] [--quiet]\n");
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
	*ok = !errno && end != s && !*end && v >= lo && v <= hi;
	return v;
}

/* Is node N online? /sys/devices/system/node/online is a list. */
static int node_online(int node, char *list, size_t len)
{
	FILE *f = fopen("/sys/devices/system/node/online", "r");
	int ok = 0;
	if (!f) {
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

int main(int argc, char **argv)
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
	long cpu = -1, node = -1, seconds = 5, passes = 0, stride = 4096;
	uint64_t size = 64ULL << 20;
	int mode = MPOL_BIND, wait_sig = 0, ok, c;
	char online[256], qerr[256];
	long pagesz = sysconf(_SC_PAGESIZE), done = 0, counts[64] = {0};
	unsigned long mask;
	cpu_set_t set;
	volatile unsigned char *mem;
	struct timespec t0, t;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cpu = number(optarg, 0, CPU_SETSIZE - 1, &ok);
			if (!ok)
				return bad("--cpu", "expected a CPU number");
			break;
		case 'n':
			node = number(optarg, 0, 63, &ok);
			if (!ok)
				return bad("--node", "expected a node number 0..63");
			break;
		case 's':
			if (np_quantity_bytes(optarg, &size, qerr, sizeof(qerr)) ||
			    size < (uint64_t)pagesz || size > (1ULL << 40))
				return bad("--size",
					   "expected bytes like 64M or 1Gi (a "
					   "page to 1 TiB)");
			break;
		case 't':
			seconds = number(optarg, 0, 86400, &ok);
			if (!ok)
				return bad("--seconds", "expected 0..86400");
			break;
		case 'p':
			passes = number(optarg, 1, 1000000, &ok);
			if (!ok)
				return bad("--passes", "expected 1..1000000");
			break;
		case 'S':
			stride = number(optarg, 1, 1 << 30, &ok);
			if (!ok)
				return bad("--stride", "expected bytes > 0");
			break;
		case 'b':
			mode = MPOL_BIND;
			break;
		case 'P':
			mode = MPOL_PREFERRED;
			break;
		case 'D':
			mode = MPOL_DEFAULT;
			break;
		case 'w':
			wait_sig = 1;
			break;
		case 'q':
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		return bad(argv[optind], "unexpected argument");
	if (cpu < 0 || (node < 0 && mode != MPOL_DEFAULT))
		return bad(cpu < 0 ? "--cpu" : "--node", "required");
	if (node >= 0 && mode == MPOL_DEFAULT)
		return bad("--node", "not with --default");
	if (node >= 0 && !node_online((int)node, online, sizeof(online))) {
		fprintf(stderr, "np-memtouch: --node %ld: no such NUMA node "
			"(online: %s)\n", node, online);
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "np-memtouch: --cpu %ld: %s (not in this "
			"cgroup's cpuset?)\n", cpu, strerror(errno));
		return 1;
	}
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("np-memtouch: mmap");
		return 1;
	}
	mask = node >= 0 ? 1UL << node : 0;
	/* maxnode counts bits and the kernel reads maxnode - 1 of them */
	if (mode != MPOL_DEFAULT &&
	    syscall(SYS_mbind, mem, size, mode, &mask, 8 * sizeof(mask) + 1, 0)) {
		fprintf(stderr, "np-memtouch: mbind(node %ld): %s (outside "
			"this cgroup's cpuset.mems?)\n", node, strerror(errno));
		return 1;
	}
	for (uint64_t o = 0; o < size; o += (uint64_t)pagesz)
		mem[o] = 1;
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* keep accessing, so that NUMA balancing scans produce hinting
	 * faults on these pages */
	for (;;) {
		for (uint64_t o = 0; o < size; o += (uint64_t)stride)
			mem[o]++;
		done++;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (stop || (passes && done >= passes) ||
		    (!passes && t.tv_sec - t0.tv_sec >= seconds))
			break;
	}
	while (wait_sig && !stop)
		pause();
	{
		long npages = (long)(size / (uint64_t)pagesz), step, k = 0;
		void *pages[MAX_SAMPLE];
		int status[MAX_SAMPLE];
		step = npages > MAX_SAMPLE ? npages / MAX_SAMPLE : 1;
		for (long i = 0; i < npages && k < MAX_SAMPLE; i += step)
			pages[k++] = (void *)(mem + i * pagesz);
		if (syscall(SYS_move_pages, 0, k, pages, NULL, status, 0) == 0)
			for (long i = 0; i < k; i++)
				if (status[i] >= 0 && status[i] < 64)
					counts[status[i]]++;
	}
	printf("{\"cpu\":%ld,\"node\":%ld,\"bytes\":%llu,\"passes\":%ld,"
	       "\"pages_on_node\":{",
	       cpu, node, (unsigned long long)size, done);
	for (int n = 0, first = 1; n < 64; n++)
		if (counts[n]) {
			printf("%s\"%d\":%ld", first ? "" : ",", n, counts[n]);
			first = 0;
		}
	printf("}}\n");
	return 0;
}
