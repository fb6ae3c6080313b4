// SPDX-License-Identifier: Apache-2.0
/*
 * memory.numa_stat parsing (bytes on cgroup v2), residency outside a node
 * mask and its per-node breakdown, reading the file from a cgroup
 * directory, the per-cgroup page migration's bookkeeping, and
 * kernel.numa_balancing. Fixtures: two-nodes.txt has the keys of Linux 6.1
 * plus sec_pagetables (6.2+); four-nodes-6.1.txt is a 6.1 file of a
 * 4-node machine whose LRU lists add up (anon + shmem = the anon LRUs,
 * file = the file LRUs), with a THP-backed workload on node 2.
 */
#include <errno.h>
#include <fcntl.h>
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

#include "numaplace/numa_mem.h"

#define DATA "tests/data/numa_stat/"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);
	size_t n;
	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, 65535, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void rm(const char *dir, const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

/* ---- parsing ---- */

static void test_parse_two_nodes(void **state)
{
	char *t = slurp(DATA "two-nodes.txt"), err[256];
	struct np_numa_stat s;
	(void)state;
	assert_int_equal(np_numa_stat_parse(t, &s, err, sizeof(err)), 0);
	assert_int_equal(s.anon[0], 40960);
	assert_int_equal(s.anon[1], 20480);
	assert_int_equal(s.file[0], 1048576);
	assert_int_equal(s.file[1], 8192);
	assert_int_equal(s.resident[0], 40960 + 1048576);
	assert_int_equal(s.resident[1], 20480 + 8192);
	/* kernel_stack + pagetables + sec_pagetables + slab_* */
	assert_int_equal(s.kernel[0], 65536 + 12288 + 0 + 102400 + 204800);
	assert_int_equal(s.kernel[1], 16384 + 4096 + 0 + 2048 + 4096);
	assert_int_equal(s.resident[2], 0);
	assert_int_equal(s.nodes, 3);
	/* everything of node 1 is outside mems 0, nothing inside both */
	assert_int_equal(np_numa_stat_outside(&s, 1), 20480 + 8192);
	assert_int_equal(np_numa_stat_outside(&s, 2), 40960 + 1048576);
	assert_int_equal(np_numa_stat_outside(&s, 3), 0);
	assert_int_equal(np_numa_stat_outside(&s, 0),
			 40960 + 1048576 + 20480 + 8192);
	free(t);
}

static void test_parse_four_nodes(void **state)
{
	char *t = slurp(DATA "four-nodes-6.1.txt"), err[256];
	const uint64_t r0 = 1253376 + 52822016, r1 = 36864,
		       r2 = 2143289344ULL + 1073741824ULL, r3 = 4194304 + 8192;
	struct np_numa_stat s;
	(void)state;
	assert_int_equal(np_numa_stat_parse(t, &s, err, sizeof(err)), 0);
	assert_int_equal(s.nodes, 0xf);
	assert_int_equal(s.anon[2], 2143289344ULL);
	assert_int_equal(s.anon_thp[2], 974ULL * 2097152);
	assert_int_equal(s.anon_thp[0], 0);
	assert_int_equal(s.shmem[0], 2097152);
	assert_int_equal(s.file[2], 1073741824ULL);
	assert_int_equal(s.file[1], 0);
	assert_int_equal(s.resident[0], r0);
	assert_int_equal(s.resident[1], r1);
	assert_int_equal(s.resident[2], r2);
	assert_int_equal(s.resident[3], r3);
	/* no sec_pagetables on 6.1: counts as 0 */
	assert_int_equal(s.kernel[0], 49152 + 126976 + 401408 + 233472);
	assert_int_equal(s.kernel[2], 196608 + 4308992 + 1310720 + 573440);
	assert_int_equal(s.kernel[3], 16384 + 8192);

	assert_int_equal(np_numa_stat_outside(&s, 0x4), r0 + r1 + r3);
	assert_int_equal(np_numa_stat_outside(&s, 0xc), r0 + r1);
	assert_int_equal(np_numa_stat_outside(&s, 0x3), r2 + r3);
	assert_int_equal(np_numa_stat_outside(&s, 0xf), 0);
	assert_int_equal(np_numa_stat_outside(&s, 0), r0 + r1 + r2 + r3);
	/* a node the machine does not have allows nothing */
	assert_int_equal(np_numa_stat_outside(&s, 1ULL << 63),
			 r0 + r1 + r2 + r3);
	free(t);
}

static void bad(const char *text, int want, const char *needle)
{
	struct np_numa_stat s;
	char err[256] = "";
	memset(&s, 0xff, sizeof(s));
	assert_int_equal(np_numa_stat_parse(text, &s, err, sizeof(err)), want);
	if (!strstr(err, needle))
		fail_msg("\"%s\": error \"%s\" lacks \"%s\"", text, err,
			 needle);
	/* nothing half-parsed */
	assert_int_equal(s.nodes, 0);
	assert_int_equal(s.anon[0], 0);
	assert_int_equal(s.resident[0], 0);
}

static void test_malformed(void **state)
{
	(void)state;
	bad("anon N0=abc\n", -EINVAL, "line 1 (anon): malformed value for N0");
	bad("anon N0=1\nfile X0=1\n", -EINVAL,
	    "line 2 (file): expected N<node>=");
	bad("anon N0=1\nfile N0=1\nshmem N64=1\n", -ERANGE,
	    "line 3 (shmem): node 64 is beyond the 64 supported");
	bad("anon N99999999999999999999999=1\n", -ERANGE, "line 1 (anon)");
	bad("anon N0 1\n", -EINVAL, "line 1 (anon): malformed node");
	bad("anon N0\n", -EINVAL, "malformed node");
	bad("anon N=5\n", -EINVAL, "malformed node");
	bad("anon\n", -EINVAL, "line 1 (anon): no N<node>=BYTES fields");
	bad("anon \n", -EINVAL, "no N<node>=BYTES fields");
	bad("anon N0=5x\n", -EINVAL, "malformed value");
	/* what strtoul/strtoull would have let through */
	bad("anon N-1=5\n", -EINVAL, "malformed node");
	bad("anon N 0=5\n", -EINVAL, "malformed node");
	bad("anon N+0=5\n", -EINVAL, "malformed node");
	bad("anon N0=-4096\n", -EINVAL, "malformed value for N0");
	bad("anon N0= 5\n", -EINVAL, "malformed value for N0");
	bad("anon N0=18446744073709551616\n", -ERANGE,
	    "out-of-range value for N0");
	bad("anon N0=1 N0=2\n", -EINVAL, "line 1 (anon): N0 appears twice");
	bad("an-on N0=1\n", -EINVAL, "line 1: expected \"KEY N0=BYTES");
	bad(" anon N0=1\n", -EINVAL, "line 1: expected");
	bad("anon=N0=1\n", -EINVAL, "line 1: expected");
	/* unknown keys are skipped, but not their malformed fields */
	bad("anon N0=1\n\nfuture_key N0=x\n", -EINVAL,
	    "line 3 (future_key): malformed value");
	assert_int_equal(
	    np_numa_stat_parse(NULL, &(struct np_numa_stat){0}, NULL, 0),
	    -EINVAL);
	assert_int_equal(np_numa_stat_parse("", NULL, NULL, 0), -EINVAL);
}

static void test_tolerant(void **state)
{
	struct np_numa_stat s;
	char err[256];
	(void)state;
	assert_int_equal(np_numa_stat_parse("", &s, err, sizeof(err)), 0);
	assert_int_equal(s.nodes, 0);
	assert_int_equal(np_numa_stat_outside(&s, 0), 0);
	assert_int_equal(np_numa_stat_parse("\n", &s, err, sizeof(err)), 0);
	assert_int_equal(s.nodes, 0);
	/* unknown keys (a future kernel's) are skipped; no trailing newline;
	 * a node that appears only there still counts as present */
	assert_int_equal(np_numa_stat_parse("future_key N3=7\n\nanon N0=4096",
					    &s, err, sizeof(err)),
			 0);
	assert_int_equal(s.anon[0], 4096);
	assert_int_equal(s.resident[0], 4096);
	assert_int_equal(s.resident[3], 0);
	assert_int_equal(s.nodes, (1 << 0) | (1 << 3));
	/* extra blanks between fields and at the end of a line */
	assert_int_equal(np_numa_stat_parse("anon N0=1  N5=2 \t\nfile N5=3 \n",
					    &s, err, sizeof(err)),
			 0);
	assert_int_equal(s.resident[5], 5);
	assert_int_equal(s.nodes, (1 << 0) | (1 << 5));
	/* the largest values saturate instead of wrapping */
	assert_int_equal(np_numa_stat_parse("anon N0=18446744073709551615 "
					    "N1=1\nfile N0=1 N1=1\n",
					    &s, err, sizeof(err)),
			 0);
	assert_true(s.resident[0] == UINT64_MAX);
	assert_true(np_numa_stat_outside(&s, 0) == UINT64_MAX);
	/* err may be NULL */
	assert_int_equal(np_numa_stat_parse("anon N0=x\n", &s, NULL, 0),
			 -EINVAL);
}

static void test_format(void **state)
{
	char *t = slurp(DATA "four-nodes-6.1.txt"), err[256], buf[128];
	struct np_numa_stat s;
	(void)state;
	assert_int_equal(np_numa_stat_parse(t, &s, err, sizeof(err)), 0);
	assert_int_equal(np_numa_stat_format(&s, 0xb, buf, sizeof(buf)),
			 (int)strlen("N0=52808 KiB, N1=36 KiB, N3=4104 KiB"));
	assert_string_equal(buf, "N0=52808 KiB, N1=36 KiB, N3=4104 KiB");
	/* nodes with nothing resident are left out */
	assert_int_equal(np_numa_stat_format(&s, 1ULL << 7, buf, sizeof(buf)),
			 0);
	assert_string_equal(buf, "");
	assert_int_equal(np_numa_stat_format(&s, 0xb, buf, 20), -ENOSPC);
	assert_string_equal(buf, "");
	assert_int_equal(np_numa_stat_format(&s, 0xb, buf, 0), -ENOSPC);
	/* a byte is not 0 KiB */
	assert_int_equal(
	    np_numa_stat_parse("anon N2=1\n", &s, err, sizeof(err)), 0);
	assert_int_equal(np_numa_stat_format(&s, ~0ULL, buf, sizeof(buf)), 8);
	assert_string_equal(buf, "N2=1 KiB");
	free(t);
}

/* ---- reading from a cgroup directory ---- */

static void test_read(void **state)
{
	char dir[] = "/tmp/np-numa-XXXXXX", err[256], path[256];
	struct np_numa_stat s;
	size_t cap = 1 << 20, at = 0;
	char *big = malloc(cap);
	int fd;
	(void)state;
	assert_non_null(big);
	assert_non_null(mkdtemp(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	/* no memory.numa_stat: the memory controller is not enabled */
	assert_int_equal(np_numa_stat_read(fd, &s, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "memory.numa_stat: not present (memory "
				    "controller not enabled for this cgroup"));
	assert_int_equal(np_numa_stat_read(-1, &s, err, sizeof(err)), -EBADF);

	put(dir, "memory.numa_stat",
	    "anon N0=8192 N1=4096\nfile N0=0 N1=4096\n");
	assert_int_equal(np_numa_stat_read(fd, &s, err, sizeof(err)), 0);
	assert_int_equal(np_numa_stat_outside(&s, 1), 8192);
	assert_int_equal(np_numa_stat_outside(&s, 2), 8192);

	/* errors name the file and the line */
	put(dir, "memory.numa_stat", "anon N0=8192\nfile N0=oops\n");
	assert_int_equal(np_numa_stat_read(fd, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "memory.numa_stat line 2 (file)"));
	assert_int_equal(s.nodes, 0);

	/* 64 nodes, 40 keys of large values: ~50 KB, more than one read()
	 * buffer; the last field of the last line must be whole */
	for (int k = 0; k < 40; k++) {
		at += (size_t)snprintf(big + at, cap - at, "%s",
				       k == 0	? "anon"
				       : k == 1 ? "file"
						: "xkey");
		for (int n = 0; n < 64; n++)
			at +=
			    (size_t)snprintf(big + at, cap - at, " N%d=%llu", n,
					     1000000000000ULL + (unsigned)n);
		at += (size_t)snprintf(big + at, cap - at, "\n");
	}
	at +=
	    (size_t)snprintf(big + at, cap - at, "last N63=123456789012345\n");
	assert_true(at > 40000);
	put(dir, "memory.numa_stat", big);
	assert_int_equal(np_numa_stat_read(fd, &s, err, sizeof(err)), 0);
	assert_true(s.nodes == ~0ULL);
	assert_int_equal(s.anon[63], 1000000000063ULL);
	assert_int_equal(s.resident[63], 2 * 1000000000063ULL);

	/* beyond 1 MiB is refused, not truncated */
	memset(big, ' ', cap - 1);
	memcpy(big, "anon N0=1", 9);
	big[cap - 1] = 0;
	snprintf(path, sizeof(path), "%s/memory.numa_stat", dir);
	{
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(big, f);
		fputs("  \n", f);
		fclose(f);
	}
	assert_int_equal(np_numa_stat_read(fd, &s, err, sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, "memory.numa_stat: larger than"));

	/* a directory in its place */
	rm(dir, "memory.numa_stat");
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(np_numa_stat_read(fd, &s, err, sizeof(err)), -EISDIR);
	assert_non_null(strstr(err, "memory.numa_stat: "));
	rmdir(path);
	close(fd);
	rmdir(dir);
	free(big);
}

/* ---- migration ---- */

static void test_migrate(void **state)
{
	char dir[] = "/tmp/np-numa-XXXXXX", err[256], line[64];
	struct np_migrate_result res;
	size_t cap = 1 << 20, at = 0;
	char *many = malloc(cap);
	int fd, r;
	(void)state;
	assert_non_null(many);
	assert_non_null(mkdtemp(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);

	/* no cgroup.procs */
	assert_int_equal(
	    np_numa_migrate_cgroup(fd, 1, 1, &res, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "cgroup.procs: "));

	/* this process (from == to: nothing to move) and a pid that cannot
	 * exist (above PID_MAX_LIMIT): one done, one gone */
	snprintf(line, sizeof(line), "%d\n%d\n", (int)getpid(), 4194304 + 1);
	put(dir, "cgroup.procs", line);
	assert_int_equal(
	    np_numa_migrate_cgroup(fd, 1, 1, &res, err, sizeof(err)), 0);
	assert_int_equal(res.pids_done, 1);
	assert_int_equal(res.pids_gone, 1);
	assert_int_equal(res.pages_not_moved, 0);
	assert_int_equal(res.first_error, 0);
	/* nothing on the source nodes: a no-op too */
	assert_int_equal(
	    np_numa_migrate_cgroup(fd, 0, 1, &res, err, sizeof(err)), 0);
	assert_int_equal(res.pids_done, 1);

	/* no target node is refused */
	assert_int_equal(
	    np_numa_migrate_cgroup(fd, 1, 0, &res, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no target node"));
	assert_int_equal(
	    np_numa_migrate_cgroup(fd, 1, 1, NULL, err, sizeof(err)), -EINVAL);

	/* an empty cgroup */
	put(dir, "cgroup.procs", "");
	assert_int_equal(
	    np_numa_migrate_cgroup(fd, 1, 1, &res, err, sizeof(err)), 0);
	assert_int_equal(res.pids_done + res.pids_gone, 0);

	/* garbage in cgroup.procs is an error naming it, found before any
	 * process is touched */
	snprintf(line, sizeof(line), "%d\n12ab\n", (int)getpid());
	put(dir, "cgroup.procs", line);
	memset(&res, 0x55, sizeof(res));
	assert_int_equal(
	    np_numa_migrate_cgroup(fd, 1, 1, &res, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "cgroup.procs: not a pid: \"12ab\""));
	assert_int_equal(res.pids_done, 0);
	put(dir, "cgroup.procs", "0\n");
	assert_int_equal(
	    np_numa_migrate_cgroup(fd, 1, 1, &res, err, sizeof(err)), -EINVAL);
	put(dir, "cgroup.procs", "-5\n");
	assert_int_equal(
	    np_numa_migrate_cgroup(fd, 1, 1, &res, err, sizeof(err)), -EINVAL);
	put(dir, "cgroup.procs", "99999999999\n");
	assert_int_equal(
	    np_numa_migrate_cgroup(fd, 1, 1, &res, err, sizeof(err)), -EINVAL);

	/* 30000 pids (~240 KB): every one is read, none cut in half */
	for (int i = 0; i < 30000; i++)
		at +=
		    (size_t)snprintf(many + at, cap - at, "%d\n", 4194305 + i);
	put(dir, "cgroup.procs", many);
	assert_int_equal(
	    np_numa_migrate_cgroup(fd, 1, 1, &res, err, sizeof(err)), 0);
	assert_int_equal(res.pids_gone, 30000);
	assert_int_equal(res.pids_done, 0);

	/* a target node outside our mems is the kernel's error (-EINVAL as
	 * root, -EPERM otherwise), reported with the pid; the other pids are
	 * still handled */
	snprintf(line, sizeof(line), "%d\n%d\n", (int)getpid(), 4194304 + 1);
	put(dir, "cgroup.procs", line);
	r = np_numa_migrate_cgroup(fd, 1, 1ULL << 62, &res, err, sizeof(err));
	assert_true(r == -EINVAL || r == -EPERM);
	assert_int_equal(res.first_error, r);
	assert_int_equal(res.pids_done, 0);
	assert_int_equal(res.pids_gone, 1);
	snprintf(line, sizeof(line), "migrate_pages(pid %d)", (int)getpid());
	assert_non_null(strstr(err, line));

	assert_int_equal(
	    np_numa_migrate_cgroup(-1, 1, 1, &res, err, sizeof(err)), -EBADF);
	rm(dir, "cgroup.procs");
	close(fd);
	rmdir(dir);
	free(many);
}

/* ---- kernel.numa_balancing ---- */

static void test_numa_balancing(void **state)
{
	char buf[32] = "";
	FILE *f;
	int m;
	(void)state;
	assert_int_equal(np_numa_balancing_parse("0\n"), 0);
	assert_int_equal(np_numa_balancing_parse("1\n"), 1);
	assert_int_equal(np_numa_balancing_parse("3"), 3);
	assert_int_equal(np_numa_balancing_parse(""), -EINVAL);
	assert_int_equal(np_numa_balancing_parse("\n"), -EINVAL);
	assert_int_equal(np_numa_balancing_parse("on\n"), -EINVAL);
	assert_int_equal(np_numa_balancing_parse("-1\n"), -EINVAL);
	assert_int_equal(np_numa_balancing_parse("1 2\n"), -EINVAL);
	assert_int_equal(np_numa_balancing_parse("99999999999\n"), -EINVAL);
	assert_int_equal(np_numa_balancing_parse(NULL), -EINVAL);
	/* the running kernel: the same as reading the file ourselves */
	m = np_numa_balancing_mode();
	f = fopen("/proc/sys/kernel/numa_balancing", "r");
	if (!f) {
		assert_true(m < 0);
		return;
	}
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_int_equal(m, atoi(buf));
	assert_true(m >= 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_two_nodes),
	    cmocka_unit_test(test_parse_four_nodes),
	    cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_tolerant),
	    cmocka_unit_test(test_format),
	    cmocka_unit_test(test_read),
	    cmocka_unit_test(test_migrate),
	    cmocka_unit_test(test_numa_balancing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
