// SPDX-License-Identifier: Apache-2.0
/* memory.numa_stat parsing (bytes on cgroup v2), residency outside a node
 * mask, and the per-cgroup page migration's bookkeeping. The fixture has
 * the keys of Linux 6.1 plus sec_pagetables (6.2+). */
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

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);
	size_t n;
	assert_non_null(f);
	n = fread(buf, 1, 65535, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static void test_parse_two_nodes(void **state)
{
	char *t = slurp("tests/data/numa_stat/two-nodes.txt"), err[256];
	struct np_numa_stat s;
	(void)state;
	assert_int_equal(np_numa_stat_parse(t, &s, err, sizeof(err)), 0);
	assert_int_equal(s.anon[0], 40960);
	assert_int_equal(s.anon[1], 20480);
	assert_int_equal(s.file[0], 1048576);
	assert_int_equal(s.resident[1], 20480 + 8192);
	assert_int_equal(s.nodes, 3);
	/* everything of node 1 is outside mems 0, nothing inside both */
	assert_int_equal(np_numa_stat_outside(&s, 1), 20480 + 8192);
	assert_int_equal(np_numa_stat_outside(&s, 2), 40960 + 1048576);
	assert_int_equal(np_numa_stat_outside(&s, 3), 0);
	assert_int_equal(np_numa_stat_outside(&s, 0),
			 40960 + 1048576 + 20480 + 8192);
	free(t);
}

static void bad(const char *text, int want, const char *needle)
{
	struct np_numa_stat s;
	char err[256] = "";
	assert_int_equal(np_numa_stat_parse(text, &s, err, sizeof(err)), want);
	if (!strstr(err, needle))
		fail_msg("\"%s\": error \"%s\" lacks \"%s\"", text, err, needle);
	assert_int_equal(s.nodes, 0); /* nothing half-parsed */
}

static void test_malformed(void **state)
{
	(void)state;
	bad("anon N0=abc\n", -EINVAL, "line 1 (anon): malformed value");
	bad("anon N0=1\nfile X0=1\n", -EINVAL, "line 2 (file): expected N<node>=");
	bad("anon N64=1\n", -ERANGE, "node 64 is beyond");
	bad("anon N0 1\n", -EINVAL, "malformed node");
	bad("anon\n", -EINVAL, "line 1: expected \"KEY N0=BYTES");
	bad("anon N0=5x\n", -EINVAL, "malformed value");
}

static void test_tolerant(void **state)
{
	struct np_numa_stat s;
	char err[256];
	(void)state;
	assert_int_equal(np_numa_stat_parse("", &s, err, sizeof(err)), 0);
	assert_int_equal(s.nodes, 0);
	/* unknown keys (a future kernel's) are skipped; no trailing newline;
	 * a node that appears only there still counts as present */
	assert_int_equal(np_numa_stat_parse("future_key N3=7\n\nanon N0=4096",
					    &s, err, sizeof(err)),
			 0);
	assert_int_equal(s.anon[0], 4096);
	assert_int_equal(s.resident[3], 0);
	assert_int_equal(s.nodes, (1 << 0) | (1 << 3));
}

static void test_read_and_migrate(void **state)
{
	char dir[] = "/tmp/np-numa-XXXXXX", path[128], err[256];
	struct np_migrate_result res;
	struct np_numa_stat s;
	FILE *f;
	int fd;
	(void)state;
	assert_non_null(mkdtemp(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	/* no memory.numa_stat: the memory controller is not enabled */
	assert_int_equal(np_numa_stat_read(fd, &s, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "memory controller not enabled"));
	snprintf(path, sizeof(path), "%s/memory.numa_stat", dir);
	f = fopen(path, "w");
	fputs("anon N0=8192 N1=4096\nfile N0=0 N1=4096\n", f);
	fclose(f);
	assert_int_equal(np_numa_stat_read(fd, &s, err, sizeof(err)), 0);
	assert_int_equal(np_numa_stat_outside(&s, 1), 8192);

	/* this process (from == to: nothing to move) and a pid that cannot
	 * exist: one done, one gone */
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "w");
	fprintf(f, "%d\n%d\n", (int)getpid(), 4194304 + 1);
	fclose(f);
	assert_int_equal(np_numa_migrate_cgroup(fd, 1, 1, &res, err, sizeof(err)),
			 0);
	assert_int_equal(res.pids_done, 1);
	assert_int_equal(res.pids_gone, 1);
	assert_int_equal(res.pages_not_moved, 0);
	/* no target node is refused */
	assert_int_equal(np_numa_migrate_cgroup(fd, 1, 0, &res, err, sizeof(err)),
			 -EINVAL);
	/* garbage in cgroup.procs is an error naming it */
	f = fopen(path, "w");
	fputs("12ab\n", f);
	fclose(f);
	assert_int_equal(np_numa_migrate_cgroup(fd, 1, 1, &res, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "not a pid"));
	unlink(path);
	snprintf(path, sizeof(path), "%s/memory.numa_stat", dir);
	unlink(path);
	close(fd);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_two_nodes),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_tolerant),
		cmocka_unit_test(test_read_and_migrate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
