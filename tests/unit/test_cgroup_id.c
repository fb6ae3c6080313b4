// SPDX-License-Identifier: Apache-2.0
/* cgroup v2 id -> path: the mountinfo parser (sample files of
 * tests/data/cgroup/ and written ones), the prefix strip, and, when this
 * process may, a real lookup of its own cgroup. */
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

#include "numaplace/cgroup.h"
#include "numaplace/cgroup_id.h"

#define DATA "tests/data/cgroup/"

static void write_file(char *path, const char *text)
{
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void test_mount_find(void **state)
{
	char out[256], tmp[] = "/tmp/np-mountinfo-XXXXXX";
	(void)state;
	assert_int_equal(np_cgroup2_mount_find(DATA "mountinfo.v2", out,
					       sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup");
	/* hybrid: the cgroup2 next to the v1 controllers */
	assert_int_equal(np_cgroup2_mount_find(DATA "mountinfo.hybrid", out,
					       sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/unified");
	/* a bind mount of a subtree comes first, the root mount (with an
	 * escaped space) is preferred */
	assert_int_equal(np_cgroup2_mount_find(DATA "mountinfo.v2-nonstandard",
					       out, sizeof(out)), 0);
	assert_string_equal(out, "/run/numaplace/cgroup v2");
	assert_int_equal(np_cgroup2_mount_find(DATA "mountinfo.nocgroup", out,
					       sizeof(out)), -ENOENT);
	assert_int_equal(np_cgroup2_mount_find(DATA "mountinfo.v2", out, 8),
			 -ENAMETOOLONG);
	assert_int_equal(np_cgroup2_mount_find(DATA "no-such-file", out,
					       sizeof(out)), -ENOENT);

	/* only a subtree is mounted: that is what there is; optional fields
	 * are skipped up to the " - " separator; a "cgroup" (v1) mount with
	 * a "-" looking option is not taken */
	write_file(tmp,
		   "30 22 0:27 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n"
		   "31 22 0:28 /kubepods /mnt/cg\\134x rw shared:1 master:2 - cgroup2 cgroup2 rw\n");
	assert_int_equal(np_cgroup2_mount_find(tmp, out, sizeof(out)), 0);
	assert_string_equal(out, "/mnt/cg\\x");
	unlink(tmp);
}

static void test_strip(void **state)
{
	char out[64];
	(void)state;
	assert_int_equal(np_cgroup_path_strip("/sys/fs/cgroup",
					      "/sys/fs/cgroup/a/b", out,
					      sizeof(out)), 0);
	assert_string_equal(out, "/a/b");
	assert_int_equal(np_cgroup_path_strip("/sys/fs/cgroup/",
					      "/sys/fs/cgroup/a", out,
					      sizeof(out)), 0);
	assert_string_equal(out, "/a");
	assert_int_equal(np_cgroup_path_strip("/sys/fs/cgroup", "/sys/fs/cgroup",
					      out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	assert_int_equal(np_cgroup_path_strip("/", "/a.slice/b", out,
					      sizeof(out)), 0);
	assert_string_equal(out, "/a.slice/b");
	assert_int_equal(np_cgroup_path_strip("/sys/fs/cgroup",
					      "/sys/fs/cgroupX/a", out,
					      sizeof(out)), -EXDEV);
	assert_int_equal(np_cgroup_path_strip("/sys/fs/cgroup", "/other", out,
					      sizeof(out)), -EXDEV);
	assert_int_equal(np_cgroup_path_strip("/m", "/m/0123456789", out, 5),
			 -ENAMETOOLONG);
}

/* Our own cgroup: /proc/self/cgroup "0::/path", its directory inode is the
 * id. Skipped without a cgroup2 mount or the privilege to open handles. */
static void test_real_lookup(void **state)
{
	char mnt[4096], line[4096], dir[8300], out[4096];
	FILE *f;
	struct stat st;
	const char *rel = NULL;
	int r;
	(void)state;

	assert_int_equal(np_cgroup_id_path(NP_CGROUP_ROOT_ID, "/nonexistent",
					   out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	if (np_cgroup2_mount_find(NULL, mnt, sizeof(mnt)))
		skip();
	f = fopen("/proc/self/cgroup", "r");
	if (!f)
		skip();
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			rel = line + 3;
			break;
		}
	fclose(f);
	if (!rel)
		skip();
	snprintf(dir, sizeof(dir), "%s%s", mnt, rel);
	if (stat(dir, &st))
		skip(); /* our cgroup is not under that mount (namespaces) */
	r = np_cgroup_id_path(st.st_ino, NULL, out, sizeof(out));
	if (r == -EPERM)
		skip();
	assert_int_equal(r, 0);
	assert_string_equal(out, rel);
	/* an id that is no cgroup */
	r = np_cgroup_id_path(0xfffffffffff0ULL, mnt, out, sizeof(out));
	assert_true(r < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mount_find),
		cmocka_unit_test(test_strip),
		cmocka_unit_test(test_real_lookup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
