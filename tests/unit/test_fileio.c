// SPDX-License-Identifier: Apache-2.0
/*
 * The file helpers every stored file goes through (userspace/basic/
 * fileio.h), in a mkdtemp directory: a whole read with its limit (-EFBIG
 * past it, the exact size accepted), a symbolic link, a device and a
 * directory refused when asked; an atomic replace that leaves the mode
 * asked whatever the umask, no temp file, and the old content when it
 * fails; mkdir -p over existing parents and -ENOTDIR on a file; a file
 * read where it is, or where it was (the old directory's, said), and
 * removed durably, one that is not there being no error.
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

#include "basic/fileio.h"
#include "fixtures.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	np_test_tmpdir(dir, sizeof(dir), "fileio");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	np_test_rmtree(dir);
	return 0;
}

static const char *at(const char *name)
{
	static char p[4][128];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
	return p[i];
}

static void put(const char *name, const char *text)
{
	FILE *fp = fopen(at(name), "w");

	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
}

static void test_read_limit(void **state)
{
	char *out = NULL;
	size_t len = 0;

	(void)state;
	put("ten", "0123456789");
	assert_int_equal(np_read_at(AT_FDCWD, at("ten"), 0, 10, &out, &len), 0);
	assert_int_equal(len, 10);
	assert_string_equal(out, "0123456789");
	free(out);
	out = NULL;
	assert_int_equal(np_read_at(AT_FDCWD, at("ten"), 0, 9, &out, &len),
			 -EFBIG);
	assert_null(out);
	/* an empty file is an empty string, not NULL */
	put("empty", "");
	assert_int_equal(np_read_at(AT_FDCWD, at("empty"), 0, 10, &out, NULL),
			 0);
	assert_non_null(out);
	assert_string_equal(out, "");
	free(out);
	out = NULL;
	/* a file whose size the kernel does not report, as in cgroupfs */
	assert_int_equal(
	    np_read_at(AT_FDCWD, "/proc/self/stat", 0, 65536, &out, &len), 0);
	assert_true(len > 0 && strlen(out) == len);
	free(out);
	out = NULL;
	assert_int_equal(np_read_at(AT_FDCWD, at("absent"), 0, 10, &out, NULL),
			 -ENOENT);
}

static void test_read_refusals(void **state)
{
	char *out = NULL;
	FILE *fp = NULL;

	(void)state;
	put("real", "x");
	assert_int_equal(symlink(at("real"), at("link")), 0);
	assert_int_equal(
	    np_read_at(AT_FDCWD, at("link"), NP_READ_NOFOLLOW, 10, &out, NULL),
	    -ELOOP);
	assert_int_equal(np_read_at(AT_FDCWD, at("link"), 0, 10, &out, NULL),
			 0);
	assert_string_equal(out, "x");
	free(out);
	out = NULL;
	/* a device, a directory: refused when a regular file is asked */
	assert_int_equal(
	    np_read_at(AT_FDCWD, "/dev/null", NP_READ_REGULAR, 10, &out, NULL),
	    -EINVAL);
	assert_null(out);
	assert_int_equal(
	    np_read_at(AT_FDCWD, dir, NP_READ_REGULAR, 10, &out, NULL),
	    -EISDIR);
	assert_int_equal(np_fopen_read(dir, &fp), -EISDIR);
	assert_null(fp);
	assert_int_equal(np_fopen_read(at("real"), &fp), 0);
	assert_int_equal(fgetc(fp), 'x');
	fclose(fp);
}

static void no_temp_left(void)
{
	struct stat sb;

	assert_int_equal(stat(at("state.json.tmp"), &sb), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_atomic_replace(void **state)
{
	char *out = NULL;
	struct stat sb;
	mode_t old = umask(0077);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);

	(void)state;
	assert_true(dfd >= 0);
	put("state.json", "old");
	assert_int_equal(np_write_atomic_at(dfd, "state.json", "new", 3, 0644),
			 0);
	assert_int_equal(stat(at("state.json"), &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0644); /* despite umask 0077 */
	assert_int_equal(np_read_at(dfd, "state.json", 0, 100, &out, NULL), 0);
	assert_string_equal(out, "new");
	free(out);
	out = NULL;
	no_temp_left();
	assert_int_equal(np_replace_at(dfd, "state.json", "newer", 5, 0600), 0);
	assert_int_equal(stat(at("state.json"), &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);
	no_temp_left();
	/* the temp name taken by a directory: the write fails, the old
	 * content stays */
	assert_int_equal(mkdir(at("state.json.tmp"), 0700), 0);
	assert_int_equal(np_write_atomic_at(dfd, "state.json", "lost", 4, 0600),
			 -EISDIR);
	assert_int_equal(np_read_at(dfd, "state.json", 0, 100, &out, NULL), 0);
	assert_string_equal(out, "newer");
	free(out);
	assert_int_equal(rmdir(at("state.json.tmp")), 0);
	/* the temp file is not followed through a link an attacker left */
	assert_int_equal(symlink(at("victim"), at("state.json.tmp")), 0);
	assert_int_equal(np_write_atomic_at(dfd, "state.json", "x", 1, 0600),
			 -ELOOP);
	assert_int_equal(access(at("victim"), F_OK), -1);
	unlink(at("state.json.tmp"));
	close(dfd);
	umask(old);
}

static void test_mkdir_p(void **state)
{
	struct stat sb;

	(void)state;
	assert_int_equal(np_mkdir_p(at("a/b/c"), 0700), 0);
	assert_int_equal(stat(at("a/b/c"), &sb), 0);
	assert_true(S_ISDIR(sb.st_mode));
	assert_int_equal(np_mkdir_p(at("a/b/c"), 0700), 0); /* exists */
	put("a/file", "x");
	assert_int_equal(np_mkdir_p(at("a/file"), 0700), -ENOTDIR);
	assert_int_equal(np_mkdir_p(at("a/file/d"), 0700), -ENOTDIR);
	assert_int_equal(np_mkdir_p("", 0700), -EINVAL);
}

/* np_read_moved_at: the new place's wins; the old one's read (and said)
 * only when the new one has none, its errors too; neither: -ENOENT. */
static void test_read_moved(void **state)
{
	int nd, od;
	char *out;
	bool old = true;

	(void)state;
	assert_int_equal(np_mkdir_p(at("new"), 0700), 0);
	assert_int_equal(np_mkdir_p(at("old"), 0700), 0);
	nd = open(at("new"), O_RDONLY | O_DIRECTORY);
	od = open(at("old"), O_RDONLY | O_DIRECTORY);
	assert_true(nd >= 0 && od >= 0);
	assert_int_equal(np_read_moved_at(nd, od, "r", 0, 64, &out, NULL, &old),
			 -ENOENT);
	assert_false(old);
	put("old/r", "was");
	assert_int_equal(np_read_moved_at(nd, -1, "r", 0, 64, &out, NULL, &old),
			 -ENOENT);
	assert_int_equal(np_read_moved_at(nd, od, "r", 0, 64, &out, NULL, &old), 0);
	assert_true(old);
	assert_string_equal(out, "was");
	free(out);
	put("new/r", "is");
	assert_int_equal(np_read_moved_at(nd, od, "r", 0, 64, &out, NULL, &old), 0);
	assert_false(old);
	assert_string_equal(out, "is");
	free(out);
	assert_int_equal(unlink(at("new/r")), 0);
	put("old/r", "longer than four");
	assert_int_equal(np_read_moved_at(nd, od, "r", 0, 4, &out, NULL, &old),
			 -EFBIG);
	assert_true(old);
	close(nd);
	close(od);
}

/* np_finish_move_at: written to the new place, then removed from the
 * old one; read from the new place, a stale old copy removed; each
 * failure says its step, a failed write touching neither. */
static void test_finish_move(void **state)
{
	int nd, od;
	bool removing;

	(void)state;
	assert_int_equal(np_mkdir_p(at("mn"), 0700), 0);
	assert_int_equal(np_mkdir_p(at("mo"), 0700), 0);
	nd = open(at("mn"), O_RDONLY | O_DIRECTORY);
	od = open(at("mo"), O_RDONLY | O_DIRECTORY);
	assert_true(nd >= 0 && od >= 0);
	put("mo/r", "rec");
	assert_int_equal(mkdir(at("mn/r.tmp"), 0700), 0); /* cannot write */
	assert_int_equal(np_finish_move_at(nd, od, "r", "rec", 3, 0600, true,
					   &removing), -EISDIR);
	assert_false(removing);
	assert_int_equal(access(at("mn/r"), F_OK), -1);
	assert_string_equal(np_test_get(dir, "mo/r"), "rec");
	assert_int_equal(rmdir(at("mn/r.tmp")), 0);
	assert_int_equal(np_finish_move_at(nd, od, "r", "rec", 3, 0600, true,
					   &removing), 0);
	assert_string_equal(np_test_get(dir, "mn/r"), "rec");
	assert_int_equal(access(at("mo/r"), F_OK), -1);
	put("mo/r", "stale");
	assert_int_equal(np_finish_move_at(nd, od, "r", "x", 1, 0600, false,
					   &removing), 0);
	assert_string_equal(np_test_get(dir, "mn/r"), "rec");
	assert_int_equal(access(at("mo/r"), F_OK), -1);
	assert_int_equal(mkdir(at("mo/r"), 0700), 0); /* cannot remove */
	assert_int_equal(np_finish_move_at(nd, od, "r", "x", 1, 0600, false,
					   &removing), -EISDIR);
	assert_true(removing);
	close(nd);
	close(od);
}

/* np_unlink_durable_at: removed; not there, or no directory: 0. */
static void test_unlink_durable(void **state)
{
	int fd;

	(void)state;
	assert_int_equal(np_mkdir_p(at("u"), 0700), 0);
	fd = open(at("u"), O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	put("u/f", "x");
	assert_int_equal(np_unlink_durable_at(fd, "f"), 0);
	assert_int_equal(access(at("u/f"), F_OK), -1);
	assert_int_equal(np_unlink_durable_at(fd, "f"), 0);
	assert_int_equal(np_unlink_durable_at(-1, "f"), 0);
	assert_int_equal(mkdir(at("u/d"), 0700), 0);
	assert_int_equal(np_unlink_durable_at(fd, "d"), -EISDIR);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_read_limit),
	    cmocka_unit_test(test_read_refusals),
	    cmocka_unit_test(test_atomic_replace),
	    cmocka_unit_test(test_mkdir_p),
	    cmocka_unit_test(test_read_moved),
	    cmocka_unit_test(test_finish_move),
	    cmocka_unit_test(test_unlink_durable),
	};
	return cmocka_run_group_tests_name("fileio", tests, setup, teardown);
}
