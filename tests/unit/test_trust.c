// SPDX-License-Identifier: Apache-2.0
/*
 * The files numaplaced trusts (userspace/basic/trust.h), on files of a
 * mkdtemp directory: owned by this process's user (or root) and writable
 * by nobody else is read; group- or world-writable is refused with -EPERM
 * and a message naming the file, its mode and the fix; another owner
 * likewise (checked on a real file when the test runs as root); a symbolic
 * link judged by its target; a directory, a device and a file over the
 * limit refused; nothing returned on a refusal.
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

#include "basic/trust.h"
#include "fixtures.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	np_test_tmpdir(dir, sizeof(dir), "trust");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	np_test_rmtree(dir);
	return 0;
}

static const char *file(const char *name, const char *text, mode_t mode)
{
	static char p[128];
	FILE *fp;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	assert_non_null(fp = fopen(p, "w"));
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(chmod(p, mode), 0);
	return p;
}

static void test_read_trusted(void **state)
{
	char *out = NULL, err[512] = "";
	size_t len = 0;
	const char *p = file("ok.json", "{}", 0644);

	(void)state;
	assert_int_equal(
	    np_trust_read("spec file", p, 100, &out, &len, err, sizeof(err)),
	    0);
	assert_string_equal(out, "{}");
	assert_int_equal(len, 2);
	free(out);
	assert_int_equal(np_trust_path("spec file", p, err, sizeof(err)), 0);
	/* group-readable and owner-writable is fine: only writers matter */
	p = file("ro.json", "{}", 0640);
	assert_int_equal(np_trust_path("config", p, err, sizeof(err)), 0);
}

static void test_writable_refused(void **state)
{
	char *out = (char *)"sentinel", err[512] = "", want[256];
	const char *p;

	(void)state;
	p = file("group.json", "{}", 0664);
	assert_int_equal(
	    np_trust_read("spec file", p, 100, &out, NULL, err, sizeof(err)),
	    -EPERM);
	assert_null(out);
	snprintf(want, sizeof(want), "spec file %s: mode 0664 lets its group",
		 p);
	assert_contains(err, want);
	snprintf(want, sizeof(want), "(chmod go-w %s)", p);
	assert_contains(err, want);

	p = file("world.json", "{}", 0646);
	assert_int_equal(np_trust_path("config", p, err, sizeof(err)), -EPERM);
	assert_contains(err, "mode 0646 lets anyone write it");
	/* a link is judged by its target */
	{
		char link[128];

		snprintf(link, sizeof(link), "%s/link.json", dir);
		assert_int_equal(symlink(p, link), 0);
		assert_int_equal(
		    np_trust_path("config", link, err, sizeof(err)), -EPERM);
		assert_int_equal(chmod(p, 0644), 0);
		assert_int_equal(
		    np_trust_path("config", link, err, sizeof(err)), 0);
	}
}

static void test_owner(void **state)
{
	struct stat sb = {0};
	char err[512] = "";
	uid_t other = geteuid() == 4242 ? 4243 : 4242;

	(void)state;
	sb.st_mode = S_IFREG | 0644;
	sb.st_uid = other;
	assert_int_equal(
	    np_trust_stat(&sb, "state file", "/x/state.json", err, sizeof(err)),
	    -EPERM);
	assert_contains(err, "state file /x/state.json: owned by uid 4242");
	assert_contains(err, "(chown root /x/state.json)");
	sb.st_uid = 0;
	assert_int_equal(
	    np_trust_stat(&sb, "state file", "/x/state.json", err, sizeof(err)),
	    0);
	sb.st_uid = geteuid();
	assert_int_equal(np_trust_stat(&sb, "", "/x", err, sizeof(err)), 0);
	if (geteuid() == 0) { /* the same on a real file */
		const char *p = file("theirs.json", "{}", 0644);
		char *out = NULL;

		assert_int_equal(chown(p, other, 0), 0);
		assert_int_equal(np_trust_read("spec file", p, 100, &out, NULL,
					       err, sizeof(err)),
				 -EPERM);
		assert_null(out);
		assert_contains(err, "owned by uid");
	}
}

static void test_not_a_file(void **state)
{
	char *out = NULL, err[512] = "";
	const char *p;

	(void)state;
	assert_int_equal(
	    np_trust_read("spec file", dir, 100, &out, NULL, err, sizeof(err)),
	    -EISDIR);
	assert_contains(err, "is a directory, not a file");
	assert_int_equal(np_trust_read("spec file", "/dev/null", 100, &out,
				       NULL, err, sizeof(err)),
			 -EINVAL);
	assert_contains(err, "spec file /dev/null: not a regular file");
	p = file("big.json", "0123456789", 0644);
	assert_int_equal(
	    np_trust_read("spec file", p, 9, &out, NULL, err, sizeof(err)),
	    -EFBIG);
	assert_contains(err, "longer than 9 bytes");
	assert_null(out);
	assert_int_equal(
	    np_trust_path("config", "/nonexistent/np.json", err, sizeof(err)),
	    -ENOENT);
	assert_contains(err, "config /nonexistent/np.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_read_trusted),
	    cmocka_unit_test(test_writable_refused),
	    cmocka_unit_test(test_owner),
	    cmocka_unit_test(test_not_a_file),
	};
	return cmocka_run_group_tests_name("trust", tests, setup, teardown);
}
