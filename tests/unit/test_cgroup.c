// SPDX-License-Identifier: Apache-2.0
/*
 * cgroup v2 enforcement layer.  No root or real cgroup2 needed: a fake
 * cgroupfs (plain files under a mkdtemp directory, opened with allow_fake)
 * and sample mountinfo / /proc/cgroups files in tests/data/cgroup/.  The
 * on_write hook records every write (order checks) and can emulate the
 * kernel: copy a written set into .effective, or answer a partition write
 * with "isolated invalid (reason)".  The planner is tested without I/O by
 * simulating its steps and checking the invariants after every one.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "numaplace/cgroup.h"
#include "fixtures.h"

#define DATA "tests/data/cgroup/"
#define MAXLOG 64

struct fx {
	char dir[64];
	struct np_cgroup_root root;
	char log[MAXLOG][256]; /* "cgroup:file=value" */
	int nlog;
	bool emulate_effective;
	const char *partition_reply;
};

/* ---- fake tree helpers -------------------------------------------------- */

static void path_of(const struct fx *f, const char *rel, const char *file,
		    char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s", f->dir, *rel ? "/" : "", rel,
		 file ? "/" : "", file ? file : "");
}

static void put(const struct fx *f, const char *rel, const char *file,
		const char *content)
{
	char p[512];
	FILE *fp;

	path_of(f, rel, file, p, sizeof(p));
	fp = fopen(p, "w");
	if (!fp)
		fail_msg("cannot create %s: %s", p, strerror(errno));
	fputs(content, fp);
	fclose(fp);
}

/* Content of a fake file ("<missing>" if absent); static buffer. */
static const char *get(const struct fx *f, const char *rel, const char *file)
{
	static char buf[4096];
	char p[512];
	size_t n;
	FILE *fp;

	path_of(f, rel, file, p, sizeof(p));
	fp = fopen(p, "r");
	if (!fp)
		return "<missing>";
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

static bool exists(const struct fx *f, const char *rel, const char *file)
{
	char p[512];
	struct stat st;

	path_of(f, rel, file, p, sizeof(p));
	return lstat(p, &st) == 0;
}

/* A cgroup directory with the files cgroupfs shows once +cpuset is on. */
static void mkcg(const struct fx *f, const char *rel, const char *cpus,
		 const char *mems)
{
	char p[512], line[64];

	path_of(f, rel, NULL, p, sizeof(p));
	if (mkdir(p, 0755) < 0)
		fail_msg("mkdir %s: %s", p, strerror(errno));
	put(f, rel, "cgroup.controllers", "cpuset cpu memory\n");
	put(f, rel, "cgroup.subtree_control", "");
	put(f, rel, "cgroup.procs", "");
	snprintf(line, sizeof(line), "%s\n", cpus);
	put(f, rel, "cpuset.cpus", line);
	put(f, rel, "cpuset.cpus.effective", line);
	snprintf(line, sizeof(line), "%s\n", mems);
	put(f, rel, "cpuset.mems", line);
	put(f, rel, "cpuset.mems.effective", line);
	put(f, rel, "cpuset.cpus.partition", "member\n");
}

static void on_write(void *arg, const char *cg, const char *file,
		     const char *value)
{
	struct fx *f = arg;
	char eff[64];

	if (f->nlog < MAXLOG)
		snprintf(f->log[f->nlog++], sizeof(f->log[0]), "%s:%s=%s", cg,
			 file, value);
	if (f->emulate_effective &&
	    (!strcmp(file, "cpuset.cpus") || !strcmp(file, "cpuset.mems"))) {
		snprintf(eff, sizeof(eff), "%s.effective", file);
		put(f, cg, eff, value);
	}
	if (f->partition_reply && !strcmp(file, "cpuset.cpus.partition") &&
	    strcmp(value, "member"))
		put(f, cg, file, f->partition_reply);
}

static int setup(void **state)
{
	struct np_cgroup_opts o = {0};
	struct fx *f = calloc(1, sizeof(*f));
	char err[512];
	int r;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/np-cgroup-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	/* hierarchy root: no cpuset.cpus, only the effective files */
	put(f, "", "cgroup.controllers", "cpuset cpu io memory pids\n");
	put(f, "", "cgroup.subtree_control", "");
	put(f, "", "cgroup.procs", "1\n");
	put(f, "", "cpuset.cpus.effective", "0-7\n");
	put(f, "", "cpuset.mems.effective", "0-1\n");
	mkcg(f, "np", "0-7", "0-1"); /* the managed parent */

	o.root = f->dir;
	o.parent = "np";
	o.allow_fake = true;
	r = np_cgroup_open(&f->root, &o, err, sizeof(err));
	if (r)
		fail_msg("open: %d %s", r, err);
	f->root.on_write = on_write;
	f->root.on_write_arg = f;
	*state = f;
	return 0;
}

static int rm_cb(const char *p, const struct stat *st, int flag,
		 struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int teardown(void **state)
{
	struct fx *f = *state;

	np_cgroup_close(&f->root);
	nftw(f->dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

static void expect_log(const struct fx *f, const char *const *want, int n)
{
	for (int i = 0; i < n && i < f->nlog; i++)
		if (strcmp(f->log[i], want[i]))
			fail_msg("write %d was \"%s\", expected \"%s\"", i,
				 f->log[i], want[i]);
	if (f->nlog != n) {
		for (int i = 0; i < f->nlog; i++)
			print_message("  write %d: %s\n", i, f->log[i]);
		fail_msg("%d writes, expected %d", f->nlog, n);
	}
}

/* ---- discovery ---------------------------------------------------------- */

static void test_mountinfo_pure_v2(void **state)
{
	char path[256], err[512];

	(void)state;
	assert_int_equal(np_cgroup_find_mount(DATA "mountinfo.v2",
					      DATA "proc_cgroups.v2", path,
					      sizeof(path), err, sizeof(err)),
			 0);
	assert_string_equal(path, "/sys/fs/cgroup");
	assert_int_equal(np_cgroup_check_v1(DATA "mountinfo.v2",
					    DATA "proc_cgroups.v2", err,
					    sizeof(err)),
			 0);
}

static void test_mountinfo_hybrid(void **state)
{
	char path[256] = "", err[512] = "";

	(void)state;
	/* this dev machine: cpuset on v1, cgroup2 at /sys/fs/cgroup/unified */
	assert_int_equal(np_cgroup_find_mount(DATA "mountinfo.hybrid",
					      DATA "proc_cgroups.hybrid", path,
					      sizeof(path), err, sizeof(err)),
			 -EOPNOTSUPP);
	assert_string_equal(err,
			    "cpuset is bound to a cgroup v1 hierarchy (mounted "
			    "at /sys/fs/cgroup/cpuset); boot with "
			    "systemd.unified_cgroup_hierarchy=1");
	assert_string_equal(path, "");

	/* bound to v1 but not mounted here: /proc/cgroups tells */
	assert_int_equal(np_cgroup_check_v1(DATA "mountinfo.v2",
					    DATA "proc_cgroups.hybrid", err,
					    sizeof(err)),
			 -EOPNOTSUPP);
	assert_contains(err, "cpuset is bound to a cgroup v1 hierarchy "
			     "(hierarchy 3 in " DATA "proc_cgroups.hybrid");
	assert_contains(err, "boot with systemd.unified_cgroup_hierarchy=1");
}

static void test_mountinfo_nonstandard(void **state)
{
	char path[256], err[512];

	(void)state;
	/* a subtree bind mount comes first; the root mount wins, and the
	 * \040-escaped space is decoded */
	assert_int_equal(np_cgroup_find_mount(DATA "mountinfo.v2-nonstandard",
					      DATA "proc_cgroups.v2", path,
					      sizeof(path), err, sizeof(err)),
			 0);
	assert_string_equal(path, "/run/numaplace/cgroup v2");
	/* too small a buffer */
	assert_int_equal(np_cgroup_find_mount(DATA "mountinfo.v2-nonstandard",
					      DATA "proc_cgroups.v2", path, 8,
					      err, sizeof(err)),
			 -ENAMETOOLONG);
}

static void test_mountinfo_errors(void **state)
{
	struct fx *f = *state;
	char path[256], err[512], pc[256];

	assert_int_equal(np_cgroup_find_mount(DATA "mountinfo.nocgroup",
					      DATA "proc_cgroups.v2", path,
					      sizeof(path), err, sizeof(err)),
			 -ENOENT);
	assert_contains(err, "no cgroup2 mount in " DATA "mountinfo.nocgroup");

	assert_int_equal(np_cgroup_find_mount(DATA "does-not-exist",
					      DATA "proc_cgroups.v2", path,
					      sizeof(path), err, sizeof(err)),
			 -ENOENT);
	assert_contains(err, "cannot read " DATA "does-not-exist");

	/* an explicit /proc/cgroups must exist */
	assert_int_equal(np_cgroup_check_v1(DATA "mountinfo.v2",
					    DATA "does-not-exist", err,
					    sizeof(err)),
			 -ENOENT);

	put(f, "", "proc_cgroups",
	    "#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
	    "cpuset\t0\t1\t0\ncpu\t0\t1\t1\n");
	path_of(f, "", "proc_cgroups", pc, sizeof(pc));
	assert_int_equal(
	    np_cgroup_check_v1(DATA "mountinfo.v2", pc, err, sizeof(err)),
	    -EOPNOTSUPP);
	assert_contains(err, "cpuset controller is disabled");

	put(f, "", "proc_cgroups",
	    "#subsys_name\thierarchy\n"
	    "cpu\t0\t1\t1\n");
	assert_int_equal(
	    np_cgroup_check_v1(DATA "mountinfo.v2", pc, err, sizeof(err)),
	    -EOPNOTSUPP);
	assert_contains(err, "CONFIG_CPUSETS");

	put(f, "", "mountinfo", "1 2 3\n");
	path_of(f, "", "mountinfo", pc, sizeof(pc));
	assert_int_equal(
	    np_cgroup_check_v1(pc, DATA "proc_cgroups.v2", err, sizeof(err)),
	    -EINVAL);
	assert_contains(err, ":1: malformed mountinfo line");
}

static void test_open_discover_hybrid(void **state)
{
	struct np_cgroup_opts o = {
	    .mountinfo = DATA "mountinfo.hybrid",
	    .proc_cgroups = DATA "proc_cgroups.hybrid",
	};
	struct np_cgroup_root root;
	char err[512];

	(void)state;
	assert_int_equal(np_cgroup_open(&root, &o, err, sizeof(err)),
			 -EOPNOTSUPP);
	assert_contains(err, "cpuset is bound to a cgroup v1 hierarchy "
			     "(mounted at /sys/fs/cgroup/cpuset)");
	assert_int_equal(root.root_fd, -1);
	assert_int_equal(root.parent_fd, -1);
	np_cgroup_close(&root); /* harmless on a failed root */
}

/* ---- opening a root ----------------------------------------------------- */

static void test_fake_root_refused(void **state)
{
	struct fx *f = *state;
	struct np_cgroup_opts o = {.root = f->dir};
	struct np_cgroup_root root;
	char err[512];

	assert_int_equal(np_cgroup_open(&root, &o, err, sizeof(err)),
			 -EMEDIUMTYPE);
	assert_contains(err, f->dir);
	assert_contains(err, "is not a cgroup2 filesystem");
	assert_contains(err, "allow_fake");
	assert_int_equal(root.root_fd, -1);

	o.allow_fake = true;
	assert_int_equal(np_cgroup_open(&root, &o, err, sizeof(err)), 0);
	assert_true(root.fake);
	assert_true(root.root_fd >= 0 && root.parent_fd >= 0);
	np_cgroup_close(&root);
	assert_int_equal(root.root_fd, -1);
}

static void test_open_checks(void **state)
{
	struct fx *f = *state;
	struct np_cgroup_opts o = {
	    .root = f->dir, .allow_fake = true, .parent = "np/missing"};
	struct np_cgroup_root root;
	char err[512];

	/* missing managed parent */
	assert_int_equal(np_cgroup_open(&root, &o, err, sizeof(err)), -ENOENT);
	assert_contains(err, "np/missing does not exist");

	/* created on request, +cpuset enabled on the way down */
	o.create_parent = true;
	o.parent = "kube/numaplace";
	assert_int_equal(np_cgroup_open(&root, &o, err, sizeof(err)), 0);
	assert_true(exists(f, "kube/numaplace", NULL));
	assert_string_equal(get(f, "", "cgroup.subtree_control"), "+cpuset");
	assert_string_equal(get(f, "kube", "cgroup.subtree_control"),
			    "+cpuset");
	assert_string_equal(get(f, "kube/numaplace", "cgroup.subtree_control"),
			    "");
	np_cgroup_close(&root);

	/* bad parent paths */
	o.parent = "../etc";
	assert_int_equal(np_cgroup_open(&root, &o, err, sizeof(err)), -EINVAL);
	assert_contains(err, "'..' components are not allowed");

	/* the root must offer cpuset */
	put(f, "", "cgroup.controllers", "cpu io memory\n");
	o.parent = NULL;
	assert_int_equal(np_cgroup_open(&root, &o, err, sizeof(err)), -ENODEV);
	assert_contains(err, "cpuset controller not available in");
	assert_contains(err, "(has: cpu io memory)");
}

/* ---- paths -------------------------------------------------------------- */

static void test_path_check(void **state)
{
	static const char *const good[] = {"a",	  "a/b", "pod-1/ctr.2",
					   "..a", "a..", ".hidden"};
	static const struct {
		const char *p;
		const char *msg;
	} bad[] = {
	    {"", "empty"},
	    {"/abs", "absolute"},
	    {"a//b", "empty component"},
	    {"a/", "ends with '/'"},
	    {"..", "'..' components"},
	    {"a/../b", "'..' components"},
	    {"./a", "'.' components"},
	    {"a/.", "'.' components"},
	};
	char err[256], longc[300];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_int_equal(
		    np_cgroup_path_check(good[i], err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(
		    np_cgroup_path_check(bad[i].p, err, sizeof(err)), -EINVAL);
		assert_contains(err, bad[i].msg);
	}
	memset(longc, 'x', 256);
	longc[256] = '\0';
	assert_int_equal(np_cgroup_path_check(longc, err, sizeof(err)),
			 -ENAMETOOLONG);
	assert_int_equal(np_cgroup_path_check(NULL, err, sizeof(err)), -EINVAL);
}

static void test_prepare_enables_top_down(void **state)
{
	struct fx *f = *state;
	static const char *const want[] = {
	    ":cgroup.subtree_control=+cpuset",
	    "np:cgroup.subtree_control=+cpuset",
	    "np/pod1:cgroup.subtree_control=+cpuset",
	    "np/pod1/ctr:cgroup.subtree_control=+cpuset",
	};
	char err[512];
	struct stat st;
	char p[512];
	mode_t old;

	old = umask(022);
	assert_int_equal(np_cgroup_prepare(&f->root, "pod1/ctr/leaf",
					   NP_CGROUP_CREATE, err, sizeof(err)),
			 0);
	umask(old);
	expect_log(f, want, 4);
	/* the leaf's own subtree_control is untouched */
	assert_string_equal(
	    get(f, "np/pod1/ctr/leaf", "cgroup.subtree_control"), "");
	path_of(f, "np/pod1/ctr/leaf", NULL, p, sizeof(p));
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0755);

	/* idempotent once the files say "cpuset" (as the kernel prints
	 * them); a partially enabled path only gets the missing writes */
	put(f, "", "cgroup.subtree_control", "cpu cpuset memory\n");
	put(f, "np", "cgroup.subtree_control", "cpuset\n");
	put(f, "np/pod1", "cgroup.subtree_control", "memory cpuset\n");
	put(f, "np/pod1/ctr", "cgroup.subtree_control", "memory\n");
	f->nlog = 0;
	assert_int_equal(
	    np_cgroup_prepare(&f->root, "pod1/ctr/leaf", 0, err, sizeof(err)),
	    0);
	expect_log(f, want + 3, 1);

	/* a parent that passes cpuset down already: the leaf is made, with
	 * no write above it (a plain file keeps "+cpuset" as written) */
	f->nlog = 0;
	assert_int_equal(np_cgroup_prepare(&f->root, "pod1/ctr/leaf2",
					   NP_CGROUP_CREATE, err, sizeof(err)),
			 0);
	expect_log(f, want, 0);
	assert_true(exists(f, "np/pod1/ctr/leaf2", NULL));
	assert_string_equal(get(f, "np/pod1/ctr", "cgroup.subtree_control"),
			    "+cpuset");
	/* and directly below the managed parent */
	assert_int_equal(np_cgroup_prepare(&f->root, "pod3", NP_CGROUP_CREATE,
					   err, sizeof(err)),
			 0);
	expect_log(f, want, 0);
	assert_true(exists(f, "np/pod3", NULL));

	/* without NP_CGROUP_CREATE a missing cgroup is an error */
	f->nlog = 0;
	assert_int_equal(
	    np_cgroup_prepare(&f->root, "pod2", 0, err, sizeof(err)), -ENOENT);
	assert_contains(err, "/np/pod2 does not exist");
	assert_false(exists(f, "np/pod2", NULL));
}

static void test_symlink_refused(void **state)
{
	struct fx *f = *state;
	np_cpuset s = np_test_cpus("1");
	char err[512], p[512], t[512];

	mkcg(f, "np/real", "0-7", "0");
	mkcg(f, "np/real/w", "0-7", "0");
	path_of(f, "np", "link", p, sizeof(p));
	assert_int_equal(symlink("real", p), 0);
	path_of(f, "np", "out", p, sizeof(p));
	assert_int_equal(symlink("/tmp", p), 0);

	assert_int_equal(
	    np_cgroup_prepare(&f->root, "link/w", 0, err, sizeof(err)), -ELOOP);
	assert_contains(err, "refusing to follow symlink 'link'");
	assert_contains(err, "cgroup path 'np/link/w'");
	assert_int_equal(np_cgroup_prepare(&f->root, "link/new",
					   NP_CGROUP_CREATE, err, sizeof(err)),
			 -ELOOP);
	assert_false(exists(f, "np/real/new", NULL));

	assert_int_equal(np_cgroup_write_cpus(&f->root, "link/w", &s, NULL, err,
					      sizeof(err)),
			 -ELOOP);
	assert_int_equal(
	    np_cgroup_write_cpus(&f->root, "link", &s, NULL, err, sizeof(err)),
	    -ELOOP);
	assert_int_equal(
	    np_cgroup_write_cpus(&f->root, "out/x", &s, NULL, err, sizeof(err)),
	    -ELOOP);
	assert_string_equal(get(f, "np/real/w", "cpuset.cpus"), "0-7\n");

	/* a symlinked control file is not followed either */
	path_of(f, "np/real/w", "cpuset.mems", p, sizeof(p));
	path_of(f, "np/real/w", "elsewhere", t, sizeof(t));
	put(f, "np/real/w", "elsewhere", "0\n");
	assert_int_equal(unlink(p), 0);
	assert_int_equal(symlink(t, p), 0);
	assert_int_equal(np_cgroup_write_mems(&f->root, "real/w", 0x1, NULL,
					      err, sizeof(err)),
			 -ELOOP);

	/* ".." never reaches the file system */
	assert_int_equal(np_cgroup_write_cpus(&f->root, "real/../../x", &s,
					      NULL, err, sizeof(err)),
			 -EINVAL);
	assert_contains(err, "'..' components are not allowed");
	assert_int_equal(np_cgroup_prepare(&f->root, "..", NP_CGROUP_CREATE,
					   err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(f->nlog, 0);
}

/* ---- writes ------------------------------------------------------------- */

static void test_write_exact(void **state)
{
	struct fx *f = *state;
	static const char *const want[] = {
	    "np/w1:cpuset.cpus=2-5",
	    "np/w1:cpuset.mems=0-1",
	    "np/w1:cpuset.cpus=0,2,4-6",
	};
	np_cpuset s = np_test_cpus("2-5"), g;
	np_nodemask gm = 0;
	char err[512] = "";

	mkcg(f, "np/w1", "0-7", "0");
	put(f, "np/w1", "cpuset.cpus.effective", "2-5\n");
	put(f, "np/w1", "cpuset.mems.effective", "0-1\n");
	assert_int_equal(
	    np_cgroup_write_cpus(&f->root, "w1", &s, &g, err, sizeof(err)), 0);
	assert_string_equal(get(f, "np/w1", "cpuset.cpus"), "2-5");
	assert_true(np_cpuset_equal(&g, &s));
	assert_int_equal(
	    np_cgroup_write_mems(&f->root, "w1", 0x3, &gm, err, sizeof(err)),
	    0);
	assert_string_equal(get(f, "np/w1", "cpuset.mems"), "0-1");
	assert_int_equal(gm, 0x3);

	f->emulate_effective = true;
	s = np_test_cpus("0,2,4-6");
	assert_int_equal(
	    np_cgroup_write_cpus(&f->root, "w1", &s, NULL, err, sizeof(err)),
	    0);
	assert_string_equal(get(f, "np/w1", "cpuset.cpus"), "0,2,4-6");
	expect_log(f, want, 3);

	/* empty sets are never written */
	np_cpuset_zero(&s);
	assert_int_equal(
	    np_cgroup_write_cpus(&f->root, "w1", &s, NULL, err, sizeof(err)),
	    -EINVAL);
	assert_contains(err, "inherit the parent's CPUs");
	assert_int_equal(
	    np_cgroup_write_mems(&f->root, "w1", 0, NULL, err, sizeof(err)),
	    -EINVAL);
	assert_int_equal(f->nlog, 3);
}

/* cpu.max (BE suppression, cfsQuota): "QUOTA PERIOD" or "max PERIOD";
 * out-of-range values are refused before anything is written. */
static void test_write_cpu_max(void **state)
{
	struct fx *f = *state;
	static const char *const want[] = {
	    "np/be:cpu.max=250000 100000",
	    "np/be:cpu.max=max 100000",
	};
	char err[512] = "";

	mkcg(f, "np/be", "0-7", "0-1");
	put(f, "np/be", "cpu.max", "max 100000\n");
	assert_int_equal(np_cgroup_write_cpu_max(&f->root, "be", 250000, 100000,
						 err, sizeof(err)),
			 0);
	assert_string_equal(get(f, "np/be", "cpu.max"), "250000 100000");
	assert_int_equal(np_cgroup_write_cpu_max(&f->root, "be", -1, 100000, err,
						 sizeof(err)),
			 0);
	assert_string_equal(get(f, "np/be", "cpu.max"), "max 100000");
	assert_int_equal(np_cgroup_write_cpu_max(&f->root, "be", 999, 100000,
						 err, sizeof(err)),
			 -EINVAL);
	assert_contains(err, "out of range");
	assert_int_equal(np_cgroup_write_cpu_max(&f->root, "be", 5000, 999, err,
						 sizeof(err)),
			 -EINVAL);
	assert_int_equal(np_cgroup_write_cpu_max(&f->root, "gone", 5000, 100000,
						 err, sizeof(err)),
			 -ENOENT);
	expect_log(f, want, 2);
}

static void test_write_readback_mismatch(void **state)
{
	struct fx *f = *state;
	np_cpuset s = np_test_cpus("2-5"), g;
	np_nodemask gm;
	char err[512], want[512];

	put(f, "np", "cpuset.cpus.effective", "0-3\n");
	put(f, "np", "cpuset.mems.effective", "0\n");
	mkcg(f, "np/w1", "0-7", "0");
	put(f, "np/w1", "cpuset.cpus.effective", "2-3\n");
	put(f, "np/w1", "cpuset.mems.effective", "0\n");

	assert_int_equal(
	    np_cgroup_write_cpus(&f->root, "w1", &s, &g, err, sizeof(err)),
	    NP_CGROUP_PARTIAL);
	snprintf(want, sizeof(want),
		 "%s/np/w1: cpuset.cpus: kernel granted 2-3 of requested 2-5 "
		 "(parent cpuset.cpus.effective is 0-3)",
		 f->dir);
	assert_string_equal(err, want);
	s = np_test_cpus("2-3");
	assert_true(np_cpuset_equal(&g, &s));
	s = np_test_cpus("2-5");
	assert_string_equal(get(f, "np/w1", "cpuset.cpus"), "2-5");

	assert_int_equal(
	    np_cgroup_write_mems(&f->root, "w1", 0x3, &gm, err, sizeof(err)),
	    NP_CGROUP_PARTIAL);
	assert_contains(err, "cpuset.mems: kernel granted 0 of requested 0-1 "
			     "(parent cpuset.mems.effective is 0)");
	assert_int_equal(gm, 0x1);

	/* none of the requested CPUs available: the kernel falls back to
	 * the parent's set */
	put(f, "np/w1", "cpuset.cpus.effective", "0-3\n");
	s = np_test_cpus("6-7");
	assert_int_equal(
	    np_cgroup_write_cpus(&f->root, "w1", &s, NULL, err, sizeof(err)),
	    NP_CGROUP_PARTIAL);
	assert_contains(err, "kernel granted 0-3 instead of requested 6-7");

	/* an unreadable effective file is an error, not a success */
	put(f, "np/w1", "cpuset.cpus.effective", "garbage\n");
	assert_int_equal(
	    np_cgroup_write_cpus(&f->root, "w1", &s, NULL, err, sizeof(err)),
	    -EINVAL);
	assert_contains(err, "cpuset.cpus.effective: cannot parse");
}

/* A test's own effective content is kept whatever the umask (a mirrored
 * file is told by its execute bit, which fopen() never sets: 0666 less
 * umask 027 is 0640, the mode a mirrored file had before). */
static void test_fake_effective_kept_any_umask(void **state)
{
	struct fx *f = *state;
	np_cpuset s = np_test_cpus("2-5");
	char err[512];
	mode_t old = umask(027);

	put(f, "np", "cpuset.cpus.effective", "0-3\n");
	mkcg(f, "np/w1", "0-7", "0");
	put(f, "np/w1", "cpuset.cpus.effective", "2-3\n");
	umask(old);
	assert_int_equal(
	    np_cgroup_write_cpus(&f->root, "w1", &s, NULL, err, sizeof(err)),
	    NP_CGROUP_PARTIAL);
	assert_string_equal(get(f, "np/w1", "cpuset.cpus.effective"), "2-3\n");
}

static void test_write_missing_controller(void **state)
{
	struct fx *f = *state;
	np_cpuset s = np_test_cpus("1");
	char err[512], want[512];

	/* a cgroup without cpuset.* files: as if +cpuset were missing in
	 * the parent's subtree_control (the fake tree creates them, as the
	 * kernel does once prepare enabled +cpuset, so remove them) */
	assert_int_equal(np_cgroup_prepare(&f->root, "w2", NP_CGROUP_CREATE,
					   err, sizeof(err)),
			 0);
	snprintf(want, sizeof(want), "%s/np/w2/cpuset.cpus", f->dir);
	assert_int_equal(unlink(want), 0);
	assert_int_equal(
	    np_cgroup_write_cpus(&f->root, "w2", &s, NULL, err, sizeof(err)),
	    -ENOENT);
	snprintf(want, sizeof(want),
		 "cpuset.cpus missing in %s/np/w2: +cpuset not enabled in the "
		 "parent's cgroup.subtree_control ('1' not written)",
		 f->dir);
	assert_string_equal(err, want);
	assert_false(exists(f, "np/w2", "cpuset.cpus"));
	/* the cgroup itself missing */
	assert_int_equal(
	    np_cgroup_write_cpus(&f->root, "nope", &s, NULL, err, sizeof(err)),
	    -ENOENT);
	assert_contains(err, "/np/nope does not exist");
}

/* The systemd driver's root is its delegated scope, and containers'
 * cgroups ("/x") are found from the hierarchy's root (opts.top): a
 * message names them from there, not from the scope (the chaos run of
 * 2026-11-30 logged ".../numaplace-workloads.scope/numaplace.slice/
 * libpod-ID.scope does not exist" for a podman container gone). */
static void test_top_named_from_top(void **state)
{
	struct fx *f = *state;
	struct np_cgroup_opts o = {.allow_fake = true};
	struct np_cgroup_root r;
	np_cpuset s = np_test_cpus("1");
	char root[600], err[512], want[700];

	mkcg(f, "ctr", "0-7", "0-1");
	snprintf(root, sizeof(root), "%s/np", f->dir);
	o.root = root;
	o.top = f->dir;
	assert_int_equal(np_cgroup_open(&r, &o, err, sizeof(err)), 0);
	assert_int_equal(
	    np_cgroup_write_cpus(&r, "/ctr/gone", &s, NULL, err, sizeof(err)),
	    -ENOENT);
	snprintf(want, sizeof(want), "cgroup %s/ctr/gone does not exist",
		 f->dir);
	assert_contains(err, want);
	snprintf(want, sizeof(want), "%s/np/ctr", f->dir);
	assert_null(strstr(err, want));
	/* a name below the root is still shown from the root */
	assert_int_equal(
	    np_cgroup_write_cpus(&r, "gone", &s, NULL, err, sizeof(err)),
	    -ENOENT);
	snprintf(want, sizeof(want), "cgroup %s/np/gone does not exist",
		 f->dir);
	assert_contains(err, want);
	np_cgroup_close(&r);
}

static void test_errmsg(void **state)
{
	static const struct {
		int e;
		const char *file;
		const char *needle;
	} t[] = {
	    {ENOENT, "cpuset.cpus",
	     "cpuset.cpus missing in /cg/w: +cpuset not enabled in the "
	     "parent's cgroup.subtree_control"},
	    {ENOENT, "cgroup.subtree_control",
	     "cpuset is not in this cgroup's cgroup.controllers"},
	    {ENOENT, "cpuset.cpus.exclusive", "needs Linux 6.7+"},
	    {EBUSY, "cgroup.subtree_control", "processes of its own"},
	    {EBUSY, "cpuset.cpus", "SCHED_DEADLINE"},
	    {ENOSPC, "cpuset.cpus", "without CPUs"},
	    {ENOSPC, "cpuset.mems", "without memory nodes"},
	    {EINVAL, "cpuset.cpus", "exclusivity/partition conflict"},
	    {EINVAL, "cpuset.cpus", "malformed list"},
	    {EINVAL, "cpuset.mems", "nodes without memory"},
	    {EINVAL, "cpuset.cpus.partition", "not one of member, root"},
	    {ERANGE, "cpuset.cpus", "CPUs that do not exist"},
	    {ERANGE, "cpuset.mems", "NUMA nodes this kernel cannot have"},
	    {EACCES, "cpuset.cpus", "run numaplace as root"},
	    {EPERM, "cpuset.mems", "permission denied"},
	    {EROFS, "cpuset.cpus", "mounted read-only"},
	    {E2BIG, "cpuset.cpus", "one page"},
	    {ENODEV, "cpuset.cpus", "the cgroup was removed"},
	    {EIO, "cpuset.cpus", "Input/output error"},
	};
	char buf[512];

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int n = np_cgroup_errmsg(buf, sizeof(buf), -t[i].e, "/cg/w",
					 t[i].file, "7-9");

		assert_int_equal(n, (int)strlen(buf));
		assert_contains(buf, t[i].needle);
		/* every message names the cgroup, the file and the value */
		assert_contains(buf, "/cg/w");
		if (strcmp(t[i].file, "cgroup.subtree_control"))
			assert_contains(buf, t[i].file);
		assert_contains(buf, "7-9");
	}
	/* positive errno too; truncation reports the stored length */
	np_cgroup_errmsg(buf, 16, EROFS, "/cg/w", "cpuset.cpus", "1");
	assert_int_equal(strlen(buf), 15);
}

/* ---- planner (pure) ----------------------------------------------------- */

/* A change's sets are pointers: the tests' sets live here (reachable
 * until the end). */
static struct np_cpuset_pool tpool;

static const np_cpuset *keep(np_cpuset s)
{
	const np_cpuset *k = np_cpuset_intern(&tpool, &s);

	assert_non_null(k);
	return k;
}

static struct np_cgroup_change chg(const char *cg, enum np_cgroup_kind kind,
				   const char *oc, const char *nc,
				   np_nodemask om, np_nodemask nm)
{
	struct np_cgroup_change c;

	memset(&c, 0, sizeof(c));
	c.cgroup = cg;
	c.kind = kind;
	c.old_cpus = keep(np_test_cpus(oc));
	c.new_cpus = keep(np_test_cpus(nc));
	c.old_mems = om;
	c.new_mems = nm;
	return c;
}

static bool ancestor(const char *a, const char *b)
{
	size_t la = strlen(a);

	return strlen(b) > la && !strncmp(a, b, la) && b[la] == '/';
}

static void dump_plan(const struct np_cgroup_plan *p)
{
	char d[256];

	for (int i = 0; i < p->n; i++) {
		np_cgroup_step_describe(p, i, d, sizeof(d));
		print_message("  %d: %s%s\n", i, d,
			      p->steps[i].final ? " final" : "");
	}
}

/*
 * Apply the steps to a model and check after every one: no CPU in an
 * exclusive set and another non-nested set at once; a child stays within
 * its parent when both the old and the new state have it so; no empty
 * write; mems widened before and narrowed after all cpus writes; final
 * flags; the end state is the new one.
 */
static void simulate(const struct np_cgroup_change *ch, int n,
		     const struct np_cgroup_plan *p)
{
	np_cpuset cur[16];
	np_nodemask m[16];
	bool cpus_seen = false, mems_narrowed = false;
	char d[256];

	assert_true(n <= 16);
	for (int i = 0; i < n; i++) {
		cur[i] = *ch[i].old_cpus;
		m[i] = ch[i].old_mems;
	}
	for (int k = 0; k < p->n; k++) {
		const struct np_cgroup_step *s = &p->steps[k];
		bool last = true;

		np_cgroup_step_describe(p, k, d, sizeof(d));
		assert_true(s->change >= 0 && s->change < n);
		assert_string_equal(p->cgroups[s->change],
				    ch[s->change].cgroup);
		for (int j = k + 1; j < p->n; j++)
			if (p->steps[j].change == s->change &&
			    p->steps[j].file == s->file)
				last = false;
		if (s->final != last) {
			dump_plan(p);
			fail_msg("step %d (%s): final=%d", k, d, s->final);
		}
		if (s->file == NP_CGROUP_MEMS) {
			assert_true(s->mems != 0);
			if (s->why == NP_STEP_MEMS_WIDEN &&
			    (cpus_seen || mems_narrowed))
				fail_msg("step %d (%s): mems widen after cpus "
					 "writes",
					 k, d);
			if (s->why == NP_STEP_MEMS_NARROW)
				mems_narrowed = true;
			m[s->change] = s->mems;
			continue;
		}
		if (mems_narrowed)
			fail_msg("step %d (%s): cpus write after mems narrow",
				 k, d);
		cpus_seen = true;
		if (np_cpuset_empty(s->cpus))
			fail_msg("step %d (%s): empty write", k, d);
		cur[s->change] = *s->cpus;
		for (int i = 0; i < n; i++)
			for (int j = i + 1; j < n; j++) {
				bool nested =
				    ancestor(ch[i].cgroup, ch[j].cgroup) ||
				    ancestor(ch[j].cgroup, ch[i].cgroup);
				bool excl = ch[i].kind == NP_CGROUP_EXCLUSIVE ||
					    ch[j].kind == NP_CGROUP_EXCLUSIVE;
				bool lent = (ch[i].lends_to_be &&
					     ch[j].best_effort) ||
					    (ch[j].lends_to_be &&
					     ch[i].best_effort);

				if (nested || !excl || lent ||
				    !np_cpuset_intersects(&cur[i], &cur[j]))
					continue;
				dump_plan(p);
				fail_msg(
				    "after step %d (%s): %s and %s overlap", k,
				    d, ch[i].cgroup, ch[j].cgroup);
			}
		for (int a = 0; a < n; a++)
			for (int c = 0; c < n; c++) {
				if (!ancestor(ch[a].cgroup, ch[c].cgroup) ||
				    np_cpuset_empty(ch[c].old_cpus) ||
				    !np_cpuset_subset(ch[c].old_cpus,
						      ch[a].old_cpus) ||
				    !np_cpuset_subset(ch[c].new_cpus,
						      ch[a].new_cpus))
					continue;
				if (np_cpuset_subset(&cur[c], &cur[a]))
					continue;
				dump_plan(p);
				fail_msg("after step %d (%s): child %s not "
					 "within parent %s",
					 k, d, ch[c].cgroup, ch[a].cgroup);
			}
	}
	for (int i = 0; i < n; i++) {
		if (!np_cpuset_empty(ch[i].new_cpus) &&
		    !np_cpuset_equal(&cur[i], ch[i].new_cpus)) {
			dump_plan(p);
			fail_msg("%s does not end at its new cpus",
				 ch[i].cgroup);
		}
		if (ch[i].new_mems && m[i] != ch[i].new_mems)
			fail_msg("%s does not end at its new mems",
				 ch[i].cgroup);
	}
}

static void expect_steps(const struct np_cgroup_plan *p,
			 const char *const *want, int n)
{
	char d[256];

	for (int i = 0; i < n && i < p->n; i++) {
		np_cgroup_step_describe(p, i, d, sizeof(d));
		if (strcmp(d, want[i])) {
			dump_plan(p);
			fail_msg("step %d is \"%s\", expected \"%s\"", i, d,
				 want[i]);
		}
	}
	if (p->n != n) {
		dump_plan(p);
		fail_msg("%d steps, expected %d", p->n, n);
	}
}

static void test_plan_grant_exclusive(void **state)
{
	struct np_cgroup_change ch[] = {
	    chg("S1", NP_CGROUP_SHARED, "0-7", "0-1,4-7", 0, 0),
	    chg("S2", NP_CGROUP_SHARED, "0-7", "0-1,4-7", 0, 0),
	    chg("W", NP_CGROUP_EXCLUSIVE, "", "2-3", 0, 0),
	};
	static const char *const want[] = {
	    "S1 cpuset.cpus=0-1,4-7 (yield)",
	    "S2 cpuset.cpus=0-1,4-7 (yield)",
	    "W cpuset.cpus=2-3 (widen)",
	};
	struct np_cgroup_plan p;
	char err[512];

	(void)state;
	assert_int_equal(np_cgroup_plan_build(&p, ch, 3, err, sizeof(err)), 0);
	expect_steps(&p, want, 3);
	simulate(ch, 3, &p);
	np_cgroup_plan_free(&p);

	/* W already exists with other exclusive CPUs: it grows last too */
	ch[2] = chg("W", NP_CGROUP_EXCLUSIVE, "2", "2-3", 0, 0);
	ch[0].old_cpus = ch[1].old_cpus = keep(np_test_cpus("0-1,3-7"));
	assert_int_equal(np_cgroup_plan_build(&p, ch, 3, err, sizeof(err)), 0);
	simulate(ch, 3, &p);
	assert_int_equal(p.steps[p.n - 1].change, 2);
	np_cgroup_plan_free(&p);
}

static void test_plan_release_exclusive(void **state)
{
	struct np_cgroup_change ch[] = {
	    chg("S1", NP_CGROUP_SHARED, "0-1,6-7", "0-3,6-7", 0, 0),
	    chg("S2", NP_CGROUP_SHARED, "0-1,6-7", "0-3,6-7", 0, 0),
	    chg("W", NP_CGROUP_EXCLUSIVE, "2-5", "4-5", 0, 0),
	};
	static const char *const want[] = {
	    "W cpuset.cpus=4-5 (release)",
	    "S1 cpuset.cpus=0-3,6-7 (widen)",
	    "S2 cpuset.cpus=0-3,6-7 (widen)",
	};
	struct np_cgroup_plan p;
	char err[512];

	(void)state;
	assert_int_equal(np_cgroup_plan_build(&p, ch, 3, err, sizeof(err)), 0);
	expect_steps(&p, want, 3);
	simulate(ch, 3, &p);
	np_cgroup_plan_free(&p);
}

static void test_plan_exclusive_move(void **state)
{
	/* W moves from 2-3 to 4-5 entirely; the shared pool swaps back */
	struct np_cgroup_change ch[] = {
	    chg("S", NP_CGROUP_SHARED, "0-1,4-7", "0-3,6-7", 0, 0),
	    chg("W", NP_CGROUP_EXCLUSIVE, "2-3", "4-5", 0, 0),
	};
	static const char *const want[] = {
	    "S cpuset.cpus=0-1,6-7 (yield)",
	    "W cpuset.cpus=2-5 (widen)",
	    "W cpuset.cpus=4-5 (release)",
	    "S cpuset.cpus=0-3,6-7 (widen)",
	};
	struct np_cgroup_plan p;
	char err[512];

	(void)state;
	assert_int_equal(np_cgroup_plan_build(&p, ch, 2, err, sizeof(err)), 0);
	expect_steps(&p, want, 4);
	simulate(ch, 2, &p);
	np_cgroup_plan_free(&p);
}

static void test_plan_hierarchy(void **state)
{
	/* parent and child both move from node 0 / CPUs 0-3 to node 1 /
	 * CPUs 4-7: widen parent then child, narrow child then parent; mems
	 * widened before and narrowed after every cpus write */
	struct np_cgroup_change ch[] = {
	    chg("pod/c", NP_CGROUP_SHARED, "0-1", "4-5", 0x1, 0x2),
	    chg("pod", NP_CGROUP_SHARED, "0-3", "4-7", 0x1, 0x2),
	};
	static const char *const want[] = {
	    "pod cpuset.mems=0-1 (mems widen)",
	    "pod/c cpuset.mems=0-1 (mems widen)",
	    "pod cpuset.cpus=0-7 (widen)",
	    "pod/c cpuset.cpus=0-1,4-5 (widen)",
	    "pod/c cpuset.cpus=4-5 (narrow)",
	    "pod cpuset.cpus=4-7 (narrow)",
	    "pod/c cpuset.mems=1 (mems narrow)",
	    "pod cpuset.mems=1 (mems narrow)",
	};
	struct np_cgroup_plan p;
	char err[512];

	(void)state;
	assert_int_equal(np_cgroup_plan_build(&p, ch, 2, err, sizeof(err)), 0);
	expect_steps(&p, want, 8);
	simulate(ch, 2, &p);
	np_cgroup_plan_free(&p);

	/* pure shrink: children first; pure growth: parents first */
	ch[0] = chg("pod/c", NP_CGROUP_SHARED, "0-3", "2-3", 0, 0);
	ch[1] = chg("pod", NP_CGROUP_SHARED, "0-7", "0-3", 0, 0);
	assert_int_equal(np_cgroup_plan_build(&p, ch, 2, err, sizeof(err)), 0);
	assert_int_equal(p.n, 2);
	assert_string_equal(p.cgroups[p.steps[0].change], "pod/c");
	simulate(ch, 2, &p);
	np_cgroup_plan_free(&p);
	ch[0] = chg("pod/c", NP_CGROUP_SHARED, "2-3", "0-3", 0, 0);
	ch[1] = chg("pod", NP_CGROUP_SHARED, "0-3", "0-7", 0, 0);
	assert_int_equal(np_cgroup_plan_build(&p, ch, 2, err, sizeof(err)), 0);
	assert_int_equal(p.n, 2);
	assert_string_equal(p.cgroups[p.steps[0].change], "pod");
	simulate(ch, 2, &p);
	np_cgroup_plan_free(&p);

	/* nothing to do */
	ch[0] = chg("pod/c", NP_CGROUP_SHARED, "2-3", "2-3", 1, 1);
	assert_int_equal(np_cgroup_plan_build(&p, ch, 1, err, sizeof(err)), 0);
	assert_int_equal(p.n, 0);
	np_cgroup_plan_free(&p);
	assert_int_equal(np_cgroup_plan_build(&p, NULL, 0, err, sizeof(err)),
			 0);
	np_cgroup_plan_free(&p);
}

static void test_plan_refusals(void **state)
{
	struct np_cgroup_change ch[3];
	struct np_cgroup_plan p;
	char err[512];

	(void)state;
	/* two exclusive cgroups swapping CPUs: no single-round order */
	ch[0] = chg("E1", NP_CGROUP_EXCLUSIVE, "2-3", "4-5", 0, 0);
	ch[1] = chg("E2", NP_CGROUP_EXCLUSIVE, "4-5", "2-3", 0, 0);
	assert_int_equal(np_cgroup_plan_build(&p, ch, 2, err, sizeof(err)),
			 -EDEADLK);
	assert_contains(err, "exclusive E1 needs CPUs 4-5 still held by "
			     "exclusive E2");
	assert_null(p.steps);

	/* target overlap between an exclusive and a shared cgroup */
	ch[0] = chg("S", NP_CGROUP_SHARED, "0-7", "0-7", 0, 0);
	ch[1] = chg("W", NP_CGROUP_EXCLUSIVE, "", "2-3", 0, 0);
	assert_int_equal(np_cgroup_plan_build(&p, ch, 2, err, sizeof(err)),
			 -EINVAL);
	assert_contains(err, "shared S (0-7) and exclusive W (2-3) share CPUs "
			     "2-3");
	/* ... but an ancestor may contain an exclusive descendant */
	ch[1].cgroup = "S/W";
	assert_int_equal(np_cgroup_plan_build(&p, ch, 2, err, sizeof(err)), 0);
	simulate(ch, 2, &p);
	np_cgroup_plan_free(&p);

	/* an LSR workload lends its CPUs to the BE pool: the BE cgroup keeps
	 * CPU 6 while the LSR one gets it, the LS pool still gives it up
	 * first (Koordinator: BE may run on LSR's CPUs, LS may not) */
	ch[0] = chg("BE", NP_CGROUP_SHARED, "0-7", "0-1,4-7", 0, 0);
	ch[0].best_effort = true;
	ch[1] = chg("LSR", NP_CGROUP_EXCLUSIVE, "", "6", 0, 0);
	ch[1].lends_to_be = true;
	ch[2] = chg("LS", NP_CGROUP_SHARED, "0-7", "0-1,4-5,7", 0, 0);
	assert_int_equal(np_cgroup_plan_build(&p, ch, 3, err, sizeof(err)), 0);
	simulate(ch, 3, &p);
	/* BE is never made to give CPU 6 up */
	for (int k = 0; k < p.n; k++)
		if (p.steps[k].change == 0 && p.steps[k].file == NP_CGROUP_CPUS)
			assert_true(np_cpuset_test(p.steps[k].cpus, 6));
	np_cgroup_plan_free(&p);
	/* ... to the BE pool only: an LS pool holding it is refused */
	ch[0].best_effort = false;
	assert_int_equal(np_cgroup_plan_build(&p, ch, 3, err, sizeof(err)),
			 -EINVAL);
	assert_contains(err, "shared BE (0-1,4-7) and exclusive LSR (6)");
	/* ... and by an LSR workload only: an LSE one is refused */
	ch[0].best_effort = true;
	ch[1].lends_to_be = false;
	assert_int_equal(np_cgroup_plan_build(&p, ch, 3, err, sizeof(err)),
			 -EINVAL);
	assert_contains(err, "shared BE (0-1,4-7) and exclusive LSR (6)");
	/* the flags belong to their kind */
	ch[1].best_effort = true;
	assert_int_equal(np_cgroup_plan_build(&p, ch, 3, err, sizeof(err)),
			 -EINVAL);
	assert_contains(err, "LSR: best_effort is for shared cgroups");
	ch[1].best_effort = false;
	ch[2].lends_to_be = true;
	assert_int_equal(np_cgroup_plan_build(&p, ch, 3, err, sizeof(err)),
			 -EINVAL);
	assert_contains(err, "LS: lends_to_be is for exclusive cgroups");

	/* duplicates, empty targets, bad paths */
	ch[0] = chg("A", NP_CGROUP_SHARED, "0", "1", 0, 0);
	ch[1] = chg("A", NP_CGROUP_SHARED, "0", "1", 0, 0);
	assert_int_equal(np_cgroup_plan_build(&p, ch, 2, err, sizeof(err)),
			 -EINVAL);
	assert_contains(err, "appears twice");
	ch[1] = chg("B", NP_CGROUP_SHARED, "0", "", 0, 0);
	assert_int_equal(np_cgroup_plan_build(&p, ch, 2, err, sizeof(err)),
			 -EINVAL);
	assert_contains(err, "inherit the parent's CPUs");
	ch[1] = chg("B", NP_CGROUP_SHARED, "0", "0", 1, 0);
	assert_int_equal(np_cgroup_plan_build(&p, ch, 2, err, sizeof(err)),
			 -EINVAL);
	assert_contains(err, "new mems empty");
	ch[1] = chg("../B", NP_CGROUP_SHARED, "0", "0", 0, 0);
	assert_int_equal(np_cgroup_plan_build(&p, ch, 2, err, sizeof(err)),
			 -EINVAL);
	/* a shared cgroup whose CPUs all go to W and whose new ones all
	 * come from W */
	ch[0] = chg("S", NP_CGROUP_SHARED, "2-3", "4-5", 0, 0);
	ch[1] = chg("W", NP_CGROUP_EXCLUSIVE, "4-5", "2-3", 0, 0);
	assert_int_equal(np_cgroup_plan_build(&p, ch, 2, err, sizeof(err)),
			 -EDEADLK);
	assert_contains(err, "shared S needs CPUs 4-5 still held by "
			     "exclusive W");
	/* ... while the same swap is fine once W keeps a CPU: W releases 5,
	 * S takes it, gives up 2-3, W takes them */
	ch[0] = chg("S", NP_CGROUP_SHARED, "2-3", "5", 0, 0);
	ch[1] = chg("W", NP_CGROUP_EXCLUSIVE, "4-5", "2-4", 0, 0);
	ch[2] = chg("S2", NP_CGROUP_SHARED, "2-3,6", "6", 0, 0);
	assert_int_equal(np_cgroup_plan_build(&p, ch, 3, err, sizeof(err)), 0);
	simulate(ch, 3, &p);
	np_cgroup_plan_free(&p);
	/* a shared cgroup moving from CPUs an exclusive one gets to CPUs it
	 * frees, with the exclusive one making a full move elsewhere */
	ch[0] = chg("S", NP_CGROUP_SHARED, "2", "3", 0, 0);
	ch[1] = chg("W", NP_CGROUP_EXCLUSIVE, "3", "4", 0, 0);
	ch[2] = chg("V", NP_CGROUP_EXCLUSIVE, "", "2", 0, 0);
	assert_int_equal(np_cgroup_plan_build(&p, ch, 3, err, sizeof(err)), 0);
	simulate(ch, 3, &p);
	np_cgroup_plan_free(&p);
}

/* xorshift: deterministic across libcs */
static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static np_cpuset random_subset(uint32_t *seed, const np_cpuset *of)
{
	np_cpuset s;

	do {
		np_cpuset_zero(&s);
		NP_CPUSET_FOREACH (c, of)
			if (rnd(seed) & 1)
				np_cpuset_set(&s, c);
	} while (np_cpuset_empty(&s) && !np_cpuset_empty(of));
	return s;
}

/*
 * Random transitions on 8 CPUs: up to three exclusive cgroups (disjoint,
 * possibly fresh), a shared pool of the rest (S0), another shared cgroup
 * within the pool (S1) and a child of S0 (S0/c).  Every plan must pass the
 * simulation; the only acceptable failure is -EDEADLK.
 */
static void test_plan_random(void **state)
{
	static const char *const names[] = {"E0", "E1", "E2"};
	uint32_t seed = 0x9e3779b9;
	int ok = 0, deadlocks = 0;

	(void)state;
	for (int iter = 0; iter < 3000; iter++) {
		struct np_cgroup_change ch[6];
		np_cpuset pool[2], ex[2][3];
		struct np_cgroup_plan p;
		char err[512];
		int n = 0, r;
		bool valid = true;

		for (int t = 0; t < 2; t++) {
			np_cpuset_zero(&pool[t]);
			for (int k = 0; k < 3; k++)
				np_cpuset_zero(&ex[t][k]);
			for (int c = 0; c < 8; c++) {
				int o = (int)(rnd(&seed) % 6) - 3;

				if (o < 0)
					np_cpuset_set(&pool[t], c);
				else
					np_cpuset_set(&ex[t][o], c);
			}
			if (np_cpuset_empty(&pool[t]))
				valid = false;
		}
		for (int k = 0; k < 3; k++)
			if (np_cpuset_empty(&ex[1][k]) &&
			    !np_cpuset_empty(&ex[0][k]))
				valid = false;
		if (!valid)
			continue;
		memset(ch, 0, sizeof(ch));
		for (int k = 0; k < 3; k++) {
			if (np_cpuset_empty(&ex[1][k]))
				continue;
			ch[n].cgroup = names[k];
			ch[n].kind = NP_CGROUP_EXCLUSIVE;
			ch[n].old_cpus = keep(ex[0][k]);
			ch[n].new_cpus = keep(ex[1][k]);
			ch[n].old_mems = 1 + rnd(&seed) % 3;
			ch[n].new_mems = 1 + rnd(&seed) % 3;
			n++;
		}
		ch[n].cgroup = "S0";
		ch[n].old_cpus = keep(pool[0]);
		ch[n].new_cpus = keep(pool[1]);
		ch[n].old_mems = 3;
		ch[n].new_mems = 3;
		n++;
		ch[n].cgroup = "S1";
		ch[n].old_cpus = keep(random_subset(&seed, &pool[0]));
		ch[n].new_cpus = keep(random_subset(&seed, &pool[1]));
		n++;
		ch[n].cgroup = "S0/c";
		ch[n].old_cpus = keep(random_subset(&seed, &pool[0]));
		ch[n].new_cpus = keep(random_subset(&seed, &pool[1]));
		ch[n].old_mems = 1 + rnd(&seed) % 3;
		ch[n].new_mems = 1 + rnd(&seed) % 3;
		n++;
		/* shuffle so the planner cannot rely on input order */
		for (int i = n - 1; i > 0; i--) {
			int j = (int)(rnd(&seed) % (uint32_t)(i + 1));
			struct np_cgroup_change t = ch[i];

			ch[i] = ch[j];
			ch[j] = t;
		}
		r = np_cgroup_plan_build(&p, ch, n, err, sizeof(err));
		if (r == -EDEADLK) {
			/* only a cycle through an exclusive full move (old ∩
			 * new = ∅) can make every order unsafe */
			bool full_move = false;

			for (int i = 0; i < n; i++)
				if (ch[i].kind == NP_CGROUP_EXCLUSIVE &&
				    !np_cpuset_empty(ch[i].old_cpus) &&
				    !np_cpuset_intersects(ch[i].old_cpus,
							  ch[i].new_cpus))
					full_move = true;
			if (!full_move)
				fail_msg("iteration %d: %s", iter, err);
			deadlocks++;
			continue;
		}
		if (r)
			fail_msg("iteration %d: %d %s", iter, r, err);
		simulate(ch, n, &p);
		np_cgroup_plan_free(&p);
		ok++;
	}
	print_message("  random plans: %d ok, %d refused (-EDEADLK)\n", ok,
		      deadlocks);
	assert_true(ok > 1000);
}

/*
 * A yield that only a widen makes possible: S0/c3 must give CPU 0 to E0
 * but has nothing of its own target (7) to fall back on until S0 widens
 * to 7.  The planner skips its release/yield pass after widens only while
 * nothing waits to yield: here one waits, and the plan must not be
 * refused (found by comparing the planner before and after that skip on
 * random change lists).
 */
static void test_plan_yield_after_widen(void **state)
{
	static const struct {
		const char *cg;
		enum np_cgroup_kind kind;
		const char *old, *new;
		np_nodemask om, nm;
	} in[] = {
	    {"S0/c3", NP_CGROUP_SHARED, "0,3,6", "7", 2, 2},
	    {"S0/c1", NP_CGROUP_SHARED, "0,3,6", "7", 1, 2},
	    {"E3", NP_CGROUP_EXCLUSIVE, "1,7", "1", 3, 3},
	    {"S2", NP_CGROUP_SHARED, "2-3,6", "7", 3, 2},
	    {"E0", NP_CGROUP_EXCLUSIVE, "5", "0,4", 3, 3},
	    {"E1", NP_CGROUP_EXCLUSIVE, "", "2,5", 3, 2},
	    {"E2", NP_CGROUP_EXCLUSIVE, "4", "3,6", 2, 3},
	    {"S0", NP_CGROUP_SHARED, "0,2-3,6", "7", 2, 1},
	};
	struct np_cgroup_change ch[8];
	struct np_cgroup_plan p;
	char err[512];
	int n = (int)(sizeof(in) / sizeof(in[0]));

	(void)state;
	memset(ch, 0, sizeof(ch));
	for (int i = 0; i < n; i++) {
		ch[i].cgroup = in[i].cg;
		ch[i].kind = in[i].kind;
		np_cpuset o, w;

		assert_int_equal(np_cpuset_parse(&o, in[i].old, NULL, 0), 0);
		assert_int_equal(np_cpuset_parse(&w, in[i].new, NULL, 0), 0);
		ch[i].old_cpus = keep(o);
		ch[i].new_cpus = keep(w);
		ch[i].old_mems = in[i].om;
		ch[i].new_mems = in[i].nm;
	}
	if (np_cgroup_plan_build(&p, ch, n, err, sizeof(err)))
		fail_msg("refused: %s", err);
	simulate(ch, n, &p);
	np_cgroup_plan_free(&p);
}

/*
 * Many flat cgroups at once, as a daemon's first cycle (every cgroup new)
 * and an exclusive grant that shrinks a large shared pool: each cgroup is
 * written once per file in the first, the shared ones yield before any
 * exclusive widens in the second, and no exclusive CPU is ever held by
 * two cgroups (checked after every step against every other cgroup).
 */
static void plan_many_check(const struct np_cgroup_change *ch, int n,
			    const struct np_cgroup_plan *p)
{
	np_cpuset *cur = calloc((size_t)n, sizeof(*cur));

	assert_non_null(cur);
	for (int i = 0; i < n; i++)
		cur[i] = *ch[i].old_cpus;
	for (int k = 0; k < p->n; k++) {
		const struct np_cgroup_step *s = &p->steps[k];
		int i = s->change;

		if (s->file != NP_CGROUP_CPUS)
			continue;
		assert_false(np_cpuset_empty(s->cpus));
		cur[i] = *s->cpus;
		for (int j = 0; j < n; j++)
			if (j != i &&
			    (ch[i].kind == NP_CGROUP_EXCLUSIVE ||
			     ch[j].kind == NP_CGROUP_EXCLUSIVE) &&
			    np_cpuset_intersects(&cur[i], &cur[j]))
				fail_msg("after step %d: %s and %s overlap", k,
					 ch[i].cgroup, ch[j].cgroup);
	}
	for (int i = 0; i < n; i++)
		assert_true(np_cpuset_equal(&cur[i], ch[i].new_cpus));
	free(cur);
}

static void test_plan_many(void **state)
{
	enum { N = 3000 };
	struct np_cgroup_change *ch = calloc(N, sizeof(*ch));
	char (*names)[32] = calloc(N, sizeof(*names));
	np_cpuset *olds = calloc(N, sizeof(*olds));
	np_cpuset *news = calloc(N, sizeof(*news));
	np_cpuset pool, granted;
	struct np_cgroup_plan p;
	char err[512];
	int nex = 0, yields = 0, first_widen = -1, last_yield = -1;

	(void)state;
	assert_non_null(ch);
	assert_non_null(names);
	assert_non_null(olds);
	assert_non_null(news);
	np_cpuset_zero(&pool);
	for (int c = 0; c < 256; c++)
		np_cpuset_set(&pool, c);
	/* 1 in 50 exclusive, one CPU each (0, 1, ...); the rest shared */
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "np.slice/w%d", i);
		ch[i].cgroup = names[i];
		ch[i].old_cpus = &olds[i];
		ch[i].new_cpus = &news[i];
		ch[i].new_mems = 3;
		if (i % 50 == 7) {
			ch[i].kind = NP_CGROUP_EXCLUSIVE;
			np_cpuset_set(&news[i], nex++);
		}
	}
	for (int i = 0; i < N; i++)
		if (ch[i].kind == NP_CGROUP_SHARED)
			np_cpuset_andnot(&news[i], &pool,
					 &(np_cpuset){{(1ULL << nex) - 1}});
	assert_int_equal(np_cgroup_plan_build(&p, ch, N, err, sizeof(err)),
			 0);
	/* first cycle: one write of each file per cgroup, all widens */
	assert_int_equal(p.n, 2 * N);
	/* the sets are kept once each: the shared pool and one per exclusive
	 * cgroup (written), and every CPU (what a new cgroup holds) */
	assert_int_equal(p.nsets, nex + 2);
	for (int i = 0; i < N; i++)
		assert_true(np_cpuset_count(p.held[i]) == NP_MAX_CPUS);
	for (int k = 0; k < p.n; k++) {
		bool in = p.steps[k].file != NP_CGROUP_CPUS;

		for (int j = 0; j < p.nsets && !in; j++)
			in = p.steps[k].cpus == p.sets[j];
		assert_true(in);
	}
	for (int k = 0; k < p.n; k++)
		assert_true(p.steps[k].why == NP_STEP_MEMS_WIDEN ||
			    p.steps[k].why == NP_STEP_CPUS_WIDEN);
	plan_many_check(ch, N, &p);
	np_cgroup_plan_free(&p);

	/* then every shared cgroup gives CPU 200 to a new exclusive one */
	np_cpuset_zero(&granted);
	np_cpuset_set(&granted, 200);
	for (int i = 0; i < N; i++) {
		olds[i] = news[i];
		ch[i].old_mems = ch[i].new_mems;
		if (ch[i].kind == NP_CGROUP_SHARED)
			np_cpuset_andnot(&news[i], &news[i], &granted);
	}
	np_cpuset_zero(&olds[N - 1]);
	ch[N - 1].old_mems = 0;
	ch[N - 1].kind = NP_CGROUP_EXCLUSIVE;
	news[N - 1] = granted;
	assert_int_equal(np_cgroup_plan_build(&p, ch, N, err, sizeof(err)),
			 0);
	for (int k = 0; k < p.n; k++) {
		if (p.steps[k].why == NP_STEP_CPUS_YIELD) {
			yields++;
			last_yield = k;
		}
		if (p.steps[k].why == NP_STEP_CPUS_WIDEN && first_widen < 0)
			first_widen = k;
	}
	assert_int_equal(yields, N - 1 - nex);
	assert_true(first_widen > last_yield);
	plan_many_check(ch, N, &p);
	np_cgroup_plan_free(&p);
	free(ch);
	free(names);
	free(olds);
	free(news);
}

/*
 * Exhaustive check on 4 CPUs and 2..4 non-nested cgroups: breadth-first
 * search over every state where each set lies between old ∩ new and
 * old ∪ new, is non-empty once written, and no exclusive set overlaps
 * another non-nested one; one cgroup changes per step.  The planner must
 * never succeed where the search finds no order (its plans stay in that
 * family), and may refuse only a small share of the feasible cases.
 */
struct bf {
	int k;
	bool excl[4];
	unsigned int old[4], new[4];
	unsigned char seen[1 << 16];
	unsigned int queue[1 << 16];
};

static bool bf_safe(const struct bf *b, const unsigned int *s)
{
	for (int i = 0; i < b->k; i++)
		for (int j = i + 1; j < b->k; j++)
			if ((b->excl[i] || b->excl[j]) && (s[i] & s[j]))
				return false;
	return true;
}

static unsigned int bf_enc(const struct bf *b, const unsigned int *s)
{
	unsigned int e = 0;

	for (int i = 0; i < b->k; i++)
		e |= s[i] << (4 * i);
	return e;
}

static bool bf_search(struct bf *b)
{
	unsigned int s[4], goal = bf_enc(b, b->new);
	int head = 0, tail = 0;

	memset(b->seen, 0, sizeof(b->seen));
	b->queue[tail++] = bf_enc(b, b->old);
	b->seen[b->queue[0]] = 1;
	while (head < tail) {
		unsigned int e = b->queue[head++];

		if (e == goal)
			return true;
		for (int i = 0; i < b->k; i++)
			s[i] = (e >> (4 * i)) & 15;
		for (int i = 0; i < b->k; i++) {
			unsigned int keep = s[i], lo = b->old[i] & b->new[i];
			unsigned int hi = b->old[i] | b->new[i];

			for (unsigned int v = 1; v < 16; v++) {
				unsigned int f;

				if ((v & lo) != lo || (v & ~hi))
					continue;
				s[i] = v;
				f = bf_enc(b, s);
				if (bf_safe(b, s) && !b->seen[f]) {
					b->seen[f] = 1;
					b->queue[tail++] = f;
				}
			}
			s[i] = keep;
		}
	}
	return false;
}

static np_cpuset mask_cpus(unsigned int m)
{
	np_cpuset c;

	np_cpuset_zero(&c);
	for (int i = 0; i < 4; i++)
		if (m >> i & 1)
			np_cpuset_set(&c, i);
	return c;
}

static void test_plan_vs_search(void **state)
{
	static const char *const names[] = {"a", "b", "c", "d"};
	struct bf *b = calloc(1, sizeof(*b));
	uint32_t seed = 12345;
	int cases = 0, feasible = 0, refused = 0;

	(void)state;
	assert_non_null(b);
	while (cases < 5000) {
		struct np_cgroup_change ch[4];
		struct np_cgroup_plan p;
		char err[512];
		bool valid = true, found;
		int r;

		b->k = 2 + (int)(rnd(&seed) % 3);
		for (int i = 0; i < b->k; i++) {
			b->excl[i] = rnd(&seed) & 1;
			b->old[i] = rnd(&seed) % 16;
			b->new[i] = 1 + rnd(&seed) % 15;
			/* only an exclusive cgroup may start unset */
			if (!b->excl[i] && !b->old[i])
				valid = false;
		}
		if (!valid || !bf_safe(b, b->old) || !bf_safe(b, b->new))
			continue;
		cases++;
		memset(ch, 0, sizeof(ch));
		for (int i = 0; i < b->k; i++) {
			ch[i].cgroup = names[i];
			ch[i].kind =
			    b->excl[i] ? NP_CGROUP_EXCLUSIVE : NP_CGROUP_SHARED;
			ch[i].old_cpus = keep(mask_cpus(b->old[i]));
			ch[i].new_cpus = keep(mask_cpus(b->new[i]));
		}
		r = np_cgroup_plan_build(&p, ch, b->k, err, sizeof(err));
		found = bf_search(b);
		feasible += found;
		if (r == 0) {
			if (!found)
				fail_msg("case %d: planned what the search "
					 "cannot order",
					 cases);
			simulate(ch, b->k, &p);
			np_cgroup_plan_free(&p);
		} else {
			assert_int_equal(r, -EDEADLK);
			refused += found;
		}
	}
	print_message("  %d cases, %d orderable, planner refused %d of those\n",
		      cases, feasible, refused);
	assert_true(refused * 100 < feasible);
	free(b);
}

/* ---- executor ----------------------------------------------------------- */

static void test_apply(void **state)
{
	struct fx *f = *state;
	struct np_cgroup_change ch[] = {
	    chg("S1", NP_CGROUP_SHARED, "0-7", "0-1,4-7", 0x3, 0x3),
	    chg("S2", NP_CGROUP_SHARED, "0-7", "0-1,4-7", 0x3, 0x3),
	    chg("W", NP_CGROUP_EXCLUSIVE, "", "2-3", 0x3, 0x1),
	};
	static const char *const want[] = {
	    "np/S1:cpuset.cpus=0-1,4-7",
	    "np/S2:cpuset.cpus=0-1,4-7",
	    "np/W:cpuset.cpus=2-3",
	    "np/W:cpuset.mems=0",
	};
	struct np_cgroup_plan p;
	char err[512], p0[512];
	int failed;

	mkcg(f, "np/S1", "0-7", "0-1");
	mkcg(f, "np/S2", "0-7", "0-1");
	mkcg(f, "np/W", "0-7", "0-1");
	assert_int_equal(np_cgroup_plan_build(&p, ch, 3, err, sizeof(err)), 0);

	f->emulate_effective = true;
	assert_int_equal(
	    np_cgroup_plan_apply(&f->root, &p, &failed, err, sizeof(err)), 0);
	assert_int_equal(failed, -1);
	expect_log(f, want, 4);
	assert_string_equal(get(f, "np/S1", "cpuset.cpus"), "0-1,4-7");
	assert_string_equal(get(f, "np/W", "cpuset.cpus"), "2-3");
	assert_string_equal(get(f, "np/W", "cpuset.mems"), "0");

	/* the kernel grants less on the final write: keep going, report */
	f->emulate_effective = false;
	f->nlog = 0;
	put(f, "np/S2", "cpuset.cpus.effective", "0-1\n");
	assert_int_equal(
	    np_cgroup_plan_apply(&f->root, &p, &failed, err, sizeof(err)),
	    NP_CGROUP_PARTIAL);
	assert_int_equal(failed, 1);
	assert_contains(err, "step 2/4 (S2 cpuset.cpus=0-1,4-7 (yield)): ");
	assert_contains(err, "kernel granted 0-1 of requested 0-1,4-7");
	assert_int_equal(f->nlog, 4);

	/* a failing write stops the plan and names the step */
	f->emulate_effective = true;
	f->nlog = 0;
	put(f, "np/S2", "cpuset.cpus.effective", "0-1,4-7\n");
	path_of(f, "np/W", "cpuset.cpus", p0, sizeof(p0));
	assert_int_equal(unlink(p0), 0);
	assert_int_equal(
	    np_cgroup_plan_apply(&f->root, &p, &failed, err, sizeof(err)),
	    -ENOENT);
	assert_int_equal(failed, 2);
	assert_contains(err, "step 3/4 (W cpuset.cpus=2-3 (widen)): "
			     "cpuset.cpus missing in ");
	assert_int_equal(f->nlog, 2);
	np_cgroup_plan_free(&p);
}

/*
 * One cgroup whose write fails does not stop the others: S1 cannot yield,
 * S2 still yields, W (new: its empty cpuset.cpus inherits every CPU) is
 * narrowed to its grant, and only X's widening onto CPUs S1 still holds is
 * held back.
 */
static void test_apply_past_failure(void **state)
{
	struct fx *f = *state;
	struct np_cgroup_change ch[] = {
	    chg("S1", NP_CGROUP_SHARED, "0-7", "0-1,4-5", 0x3, 0x3),
	    chg("S2", NP_CGROUP_SHARED, "0-7", "0-1,4-5", 0x3, 0x3),
	    chg("W", NP_CGROUP_EXCLUSIVE, "", "2-3", 0x3, 0x3),
	    chg("X", NP_CGROUP_EXCLUSIVE, "6", "6-7", 0x3, 0x3),
	};
	static const char *const want[] = {
	    "np/S2:cpuset.cpus=0-1,4-5",
	    "np/W:cpuset.cpus=2-3",
	};
	struct np_cgroup_plan p;
	char err[512], p0[512];
	int failed;

	mkcg(f, "np/S1", "0-7", "0-1");
	mkcg(f, "np/S2", "0-7", "0-1");
	mkcg(f, "np/W", "", "0-1");
	mkcg(f, "np/X", "6", "0-1");
	assert_int_equal(np_cgroup_plan_build(&p, ch, 4, err, sizeof(err)), 0);
	f->emulate_effective = true;
	path_of(f, "np/S1", "cpuset.cpus", p0, sizeof(p0));
	assert_int_equal(unlink(p0), 0);
	assert_int_equal(
	    np_cgroup_plan_apply(&f->root, &p, &failed, err, sizeof(err)),
	    -ENOENT);
	assert_string_equal(p.cgroups[p.steps[failed].change], "S1");
	assert_contains(err, "S1 cpuset.cpus=0-1,4-5 (yield)");
	assert_contains(err, "1 later write(s) held back");
	expect_log(f, want, 2);
	assert_string_equal(get(f, "np/X", "cpuset.cpus"), "6\n");
	np_cgroup_plan_free(&p);
}

/* ---- partitions --------------------------------------------------------- */

static void test_partition_parse(void **state)
{
	enum np_cgroup_partition m;
	char reason[128];
	bool inv;

	(void)state;
	assert_int_equal(np_cgroup_partition_parse("member\n", &m, &inv, reason,
						   sizeof(reason)),
			 0);
	assert_int_equal(m, NP_CGROUP_MEMBER);
	assert_false(inv);
	assert_int_equal(np_cgroup_partition_parse(
			     "isolated invalid (Cpu list in cpuset.cpus not "
			     "exclusive)\n",
			     &m, &inv, reason, sizeof(reason)),
			 0);
	assert_int_equal(m, NP_CGROUP_ISOLATED);
	assert_true(inv);
	assert_string_equal(reason, "Cpu list in cpuset.cpus not exclusive");
	/* 5.x kernels: no reason */
	assert_int_equal(np_cgroup_partition_parse("root invalid\n", &m, &inv,
						   reason, sizeof(reason)),
			 0);
	assert_int_equal(m, NP_CGROUP_ROOT);
	assert_true(inv);
	assert_string_equal(reason, "");
	/* nested parentheses in the reason */
	assert_int_equal(np_cgroup_partition_parse(
			     "root invalid (Parent is an invalid partition "
			     "root (x))",
			     &m, &inv, reason, sizeof(reason)),
			 0);
	assert_string_equal(reason, "Parent is an invalid partition root (x)");
	assert_int_equal(np_cgroup_partition_parse("bogus", &m, &inv, NULL, 0),
			 -EINVAL);
	assert_int_equal(
	    np_cgroup_partition_parse("root extra", &m, &inv, NULL, 0),
	    -EINVAL);
	assert_int_equal(
	    np_cgroup_partition_parse("root invalid (x", &m, &inv, NULL, 0),
	    -EINVAL);
	assert_string_equal(np_cgroup_partition_name(NP_CGROUP_ISOLATED),
			    "isolated");
}

static void test_partition_ok(void **state)
{
	struct fx *f = *state;
	np_cpuset ex = np_test_cpus("2-3");
	char err[512] = "";

	mkcg(f, "np/W", "2-3", "0");
	/* 6.1: no cpuset.cpus.exclusive; an equal request is fine */
	assert_int_equal(np_cgroup_set_partition(&f->root, "W",
						 NP_CGROUP_ISOLATED, &ex, err,
						 sizeof(err)),
			 0);
	assert_string_equal(get(f, "np/W", "cpuset.cpus.partition"),
			    "isolated");
	assert_false(exists(f, "np/W", "cpuset.cpus.exclusive"));
	/* ... a different one cannot be honoured */
	ex = np_test_cpus("2");
	assert_int_equal(np_cgroup_set_partition(&f->root, "W",
						 NP_CGROUP_ISOLATED, &ex, err,
						 sizeof(err)),
			 -EOPNOTSUPP);
	assert_contains(err, "cpuset.cpus.exclusive does not exist (Linux < "
			     "6.7)");
	/* 6.7+: written before the partition */
	put(f, "np/W", "cpuset.cpus.exclusive", "\n");
	f->nlog = 0;
	assert_int_equal(np_cgroup_set_partition(&f->root, "W", NP_CGROUP_ROOT,
						 &ex, err, sizeof(err)),
			 0);
	assert_string_equal(f->log[0], "np/W:cpuset.cpus.exclusive=2");
	assert_string_equal(f->log[1], "np/W:cpuset.cpus.partition=root");
	assert_int_equal(np_cgroup_set_partition(&f->root, "W",
						 NP_CGROUP_MEMBER, NULL, err,
						 sizeof(err)),
			 0);
	assert_string_equal(get(f, "np/W", "cpuset.cpus.partition"), "member");
}

static void test_partition_refused(void **state)
{
	struct fx *f = *state;
	np_cpuset ex = np_test_cpus("2-3");
	char err[512] = "", want[512];

	mkcg(f, "np/W", "2-3", "0");
	put(f, "np/W", "cpuset.cpus.exclusive", "\n");
	f->partition_reply =
	    "isolated invalid (Cpu list in cpuset.cpus not exclusive)\n";
	assert_int_equal(np_cgroup_set_partition(&f->root, "W",
						 NP_CGROUP_ISOLATED, &ex, err,
						 sizeof(err)),
			 NP_CGROUP_PARTITION_REFUSED);
	snprintf(want, sizeof(want),
		 "warning: %s/np/W: kernel refused partition 'isolated': \"Cpu "
		 "list in cpuset.cpus not exclusive\" (cpuset.cpus.partition "
		 "read back 'isolated invalid (Cpu list in cpuset.cpus not "
		 "exclusive)'); reverted to member",
		 f->dir);
	assert_string_equal(err, want);
	assert_string_equal(get(f, "np/W", "cpuset.cpus.partition"), "member");
	/* cpuset.cpus.exclusive restored to its old (empty) value */
	assert_string_equal(get(f, "np/W", "cpuset.cpus.exclusive"), "\n");
	assert_int_equal(f->nlog, 4);
	assert_string_equal(f->log[2], "np/W:cpuset.cpus.partition=member");
	assert_string_equal(f->log[3], "np/W:cpuset.cpus.exclusive=");

	/* old kernels without the partition file */
	path_of(f, "np/W", "cpuset.cpus.partition", want, sizeof(want));
	assert_int_equal(unlink(want), 0);
	assert_int_equal(np_cgroup_set_partition(&f->root, "W", NP_CGROUP_ROOT,
						 NULL, err, sizeof(err)),
			 -ENOENT);
	assert_contains(err, "cpuset.cpus.partition missing in");
	assert_contains(err, "5.11+");
}

/* ---- inspection --------------------------------------------------------- */

static void test_inspect(void **state)
{
	struct fx *f = *state;
	struct np_cgroup_state st;
	char err[512];
	np_cpuset want;

	mkcg(f, "np/W", "2-5", "0-1");
	put(f, "np/W", "cpuset.cpus.effective", "2-3\n");
	put(f, "np/W", "cpuset.mems.effective", "1\n");
	put(f, "np/W", "cpuset.cpus.partition",
	    "root invalid (Cpu list in cpuset.cpus not exclusive)\n");
	put(f, "np/W", "cgroup.procs", "4242\n4243\n");
	assert_int_equal(
	    np_cgroup_inspect(&f->root, "W", &st, err, sizeof(err)), 0);
	want = np_test_cpus("2-5");
	assert_true(np_cpuset_equal(&st.cpus, &want));
	want = np_test_cpus("2-3");
	assert_true(np_cpuset_equal(&st.cpus_effective, &want));
	assert_int_equal(st.mems, 0x3);
	assert_int_equal(st.mems_effective, 0x2);
	assert_false(st.has_cpus_exclusive);
	assert_true(st.has_partition);
	assert_int_equal(st.partition, NP_CGROUP_ROOT);
	assert_true(st.partition_invalid);
	assert_string_equal(st.partition_reason,
			    "Cpu list in cpuset.cpus not exclusive");
	assert_false(st.procs_empty);

	put(f, "np/W", "cgroup.procs", "");
	put(f, "np/W", "cpuset.cpus.exclusive", "4\n");
	put(f, "np/W", "cpuset.cpus.partition", "isolated\n");
	assert_int_equal(
	    np_cgroup_inspect(&f->root, "W", &st, err, sizeof(err)), 0);
	assert_true(st.procs_empty);
	assert_true(st.has_cpus_exclusive);
	assert_int_equal(np_cpuset_first(&st.cpus_exclusive), 4);
	assert_int_equal(st.partition, NP_CGROUP_ISOLATED);
	assert_false(st.partition_invalid);

	/* the managed parent itself */
	assert_int_equal(np_cgroup_inspect(&f->root, "", &st, err, sizeof(err)),
			 0);
	assert_int_equal(np_cpuset_count(&st.cpus), 8);

	/* read-only: nothing was written */
	assert_int_equal(f->nlog, 0);

	path_of(f, "np/W", "cpuset.mems", err, sizeof(err));
	assert_int_equal(unlink(err), 0);
	assert_int_equal(
	    np_cgroup_inspect(&f->root, "W", &st, err, sizeof(err)), -ENOENT);
	assert_contains(err, "+cpuset not enabled");
}

/* Texts of 4 KiB and more (read once more from the start, to the end),
 * and one exactly of the one-read buffer's size, read whole. */
static void test_inspect_long_text(void **state)
{
	struct fx *f = *state;
	struct np_cgroup_state st;
	char err[512], *txt = malloc(12000);
	size_t len = 0;
	np_cpuset want;

	assert_non_null(txt);
	np_cpuset_zero(&want);
	/* "0,2,4,...,4094\n": 2048 CPUs, about 9.5 KB */
	for (int c = 0; c < 4096; c += 2) {
		len += (size_t)sprintf(txt + len, "%s%d", c ? "," : "", c);
		np_cpuset_set(&want, c);
	}
	txt[len++] = '\n';
	txt[len] = '\0';
	assert_true(len > 4096);
	mkcg(f, "np/L", "0-7", "0");
	put(f, "np/L", "cpuset.cpus.effective", txt);
	assert_int_equal(
	    np_cgroup_inspect(&f->root, "L", &st, err, sizeof(err)), 0);
	assert_true(np_cpuset_equal(&st.cpus_effective, &want));

	/* exactly 4096 bytes: "0,2,...,c" cut at a comma, padded with
	 * the newlines a list may end in */
	len = 0;
	np_cpuset_zero(&want);
	for (int c = 0; len < 4000; c += 2) {
		len += (size_t)sprintf(txt + len, "%s%d", c ? "," : "", c);
		np_cpuset_set(&want, c);
	}
	while (len < 4096)
		txt[len++] = '\n';
	txt[len] = '\0';
	put(f, "np/L", "cpuset.cpus.effective", txt);
	assert_int_equal(
	    np_cgroup_inspect(&f->root, "L", &st, err, sizeof(err)), 0);
	assert_true(np_cpuset_equal(&st.cpus_effective, &want));
	free(txt);
}

/* The content of a file changed through a shared mapping: no write(2),
 * so no inotify event (as if a write had been missed). Same length. */
static void mmap_put(const struct fx *f, const char *rel, const char *file,
		     const char *content)
{
	char p[512];
	size_t n = strlen(content);
	int fd;
	char *m;

	path_of(f, rel, file, p, sizeof(p));
	fd = open(p, O_RDWR);
	assert_true(fd >= 0);
	m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	memcpy(m, content, n);
	assert_int_equal(munmap(m, n), 0);
	close(fd);
}

/* Without a descriptor of the working directory the cache names the
 * files through /proc/self/fd: the watches follow those links to the
 * files, and a write to either is seen. */
static void test_cache_watched_proc_names(void **state)
{
	struct fx *f = *state;
	/* as after a failed open(".") */
	struct np_cgroup_cache c = {.full_ms = 60000, .cwd_tried = true,
				    .cwd_fd = -1};
	char err[512];
	np_cpuset cpus, want = np_test_cpus("3");
	np_nodemask mems;

	mkcg(f, "np/P", "2-5", "0-1");
	np_cgroup_cache_next(&c);
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "P", &cpus, &mems,
					       err, sizeof(err)),
			 0);
	assert_true(c.last_watched);
	while (np_cgroup_cache_drain(&c))
		;
	put(f, "np/P", "cpuset.mems", "0\n");
	assert_true(np_cgroup_cache_drain(&c));
	put(f, "np/P", "cpuset.cpus", "3\n");
	assert_true(np_cgroup_cache_drain(&c));
	np_cgroup_cache_next(&c);
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "P", &cpus, &mems,
					       err, sizeof(err)),
			 0);
	assert_true(np_cpuset_equal(&cpus, &want));
	np_cgroup_cache_free(&c);
}

/* With full_ms, a cached file is read again only when it was written
 * (its IN_MODIFY watch), or at a full scan; np_cgroup_cache_drain says
 * when a watched file was written. */
/* The next generation's read of np/W: its CPUs are cpus_want and its
 * memory nodes mems_want. */
static void next_read_w(struct np_cgroup_cache *c, struct fx *f,
			const char *cpus_want, np_nodemask mems_want)
{
	np_cpuset cpus, want = np_test_cpus(cpus_want);
	np_nodemask mems;
	char err[512];

	np_cgroup_cache_next(c);
	assert_int_equal(np_cgroup_read_cpuset(c, &f->root, "W", &cpus, &mems,
					       err, sizeof(err)),
			 0);
	assert_true(np_cpuset_equal(&cpus, &want));
	assert_int_equal(mems, mems_want);
}

static void test_cache_watched(void **state)
{
	struct fx *f = *state;
	struct np_cgroup_cache c = {.full_ms = 60000};
	char err[512], cwd[PATH_MAX], after[PATH_MAX];
	np_cpuset cpus, want;
	np_nodemask mems;

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	mkcg(f, "np/W", "2-5", "0-1");
	np_cgroup_cache_next(&c); /* the first generation is a full one */
	assert_true(c.full_now);
	/* a cgroup below a parent not there yet: an error, and the missing
	 * parent leaves the cache watching (not blind for good) */
	assert_true(np_cgroup_read_cpuset(&c, &f->root, "T/web", &cpus,
					  &mems, err, sizeof(err)) < 0);
	assert_false(c.blind);
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "W", &cpus, &mems,
					       err, sizeof(err)),
			 0);
	assert_true(c.last_watched);
	/* the files were watched from their directory: the working
	 * directory is the one before */
	assert_non_null(getcwd(after, sizeof(after)));
	assert_string_equal(after, cwd);
	np_cgroup_cache_next(&c); /* read once more after the watches */
	assert_false(c.full_now);
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "W", &cpus, &mems,
					       err, sizeof(err)),
			 0);
	want = np_test_cpus("2-5");
	assert_true(np_cpuset_equal(&cpus, &want));

	/* changed without a write: not read again */
	mmap_put(f, "np/W", "cpuset.cpus", "7\n\n\n");
	assert_false(np_cgroup_cache_drain(&c));
	np_cgroup_cache_next(&c);
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "W", &cpus, &mems,
					       err, sizeof(err)),
			 0);
	assert_true(np_cpuset_equal(&cpus, &want));

	/* written: the drain says so, and the next generation reads it */
	put(f, "np/W", "cpuset.mems", "0-1\n"); /* the other watch */
	assert_true(np_cgroup_cache_drain(&c));
	assert_false(np_cgroup_cache_drain(&c));
	put(f, "np/W", "cpuset.cpus", "3\n");
	assert_true(np_cgroup_cache_drain(&c));
	assert_false(np_cgroup_cache_drain(&c));
	np_cgroup_cache_next(&c);
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "W", &cpus, &mems,
					       err, sizeof(err)),
			 0);
	want = np_test_cpus("3");
	assert_true(np_cpuset_equal(&cpus, &want));

	/* one file written: that one is read again, the other holds what
	 * was read (its change without a write is not seen, as above) */
	mmap_put(f, "np/W", "cpuset.mems", "1\n\n\n");
	put(f, "np/W", "cpuset.cpus", "4\n");
	next_read_w(&c, f, "4", 0x3);
	/* and the other one, once it is written */
	put(f, "np/W", "cpuset.mems", "1\n");
	next_read_w(&c, f, "4", 0x2);
	put(f, "np/W", "cpuset.cpus", "3\n");
	put(f, "np/W", "cpuset.mems", "0-1\n");
	next_read_w(&c, f, "3", 0x3);
	want = np_test_cpus("3");

	/* missed again, then found by the full scan when it is due */
	mmap_put(f, "np/W", "cpuset.cpus", "6\n");
	np_cgroup_cache_next(&c);
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "W", &cpus, &mems,
					       err, sizeof(err)),
			 0);
	assert_true(np_cpuset_equal(&cpus, &want));
	c.last_full -= c.full_ms;
	np_cgroup_cache_next(&c);
	assert_true(c.full_now);
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "W", &cpus, &mems,
					       err, sizeof(err)),
			 0);
	want = np_test_cpus("6");
	assert_true(np_cpuset_equal(&cpus, &want));

	/* forgetting removes the watches: no event makes the cache drop */
	np_cgroup_cache_forget(&c, "W");
	np_cgroup_cache_next(&c);
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "W", &cpus, &mems,
					       err, sizeof(err)),
			 0);
	assert_int_equal(c.nfds, 2);
	np_cgroup_cache_next(&c); /* read once more after the watches */
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "W", &cpus, &mems,
					       err, sizeof(err)),
			 0);

	/* a sibling made: nothing read again, not even W's identity (a
	 * change without a write stays unseen) */
	mkcg(f, "np/X", "1", "0");
	mmap_put(f, "np/W", "cpuset.cpus", "5\n");
	np_cgroup_cache_next(&c);
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "W", &cpus, &mems,
					       err, sizeof(err)),
			 0);
	assert_true(np_cpuset_equal(&cpus, &want));

	/* W renamed away and made again: the new directory is read */
	{
		char a[512], b[512];
		path_of(f, "np/W", NULL, a, sizeof(a));
		path_of(f, "np/W.old", NULL, b, sizeof(b));
		assert_int_equal(rename(a, b), 0);
		mkcg(f, "np/W", "4", "0");
		np_cgroup_cache_next(&c);
		assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "W", &cpus,
						       &mems, err, sizeof(err)),
				 0);
		want = np_test_cpus("4");
		assert_true(np_cpuset_equal(&cpus, &want));

		/* a parent renamed away and made again, with its child */
		mkcg(f, "np/P", "0-7", "0-1");
		mkcg(f, "np/P/Q", "2", "0");
		np_cgroup_cache_next(&c);
		assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "P/Q",
						       &cpus, &mems, err,
						       sizeof(err)),
				 0);
		np_cgroup_cache_next(&c);
		assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "P/Q",
						       &cpus, &mems, err,
						       sizeof(err)),
				 0);
		path_of(f, "np/P", NULL, a, sizeof(a));
		path_of(f, "np/P.old", NULL, b, sizeof(b));
		assert_int_equal(rename(a, b), 0);
		mkcg(f, "np/P", "0-7", "0-1");
		mkcg(f, "np/P/Q", "7", "1");
		np_cgroup_cache_next(&c);
		assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "P/Q",
						       &cpus, &mems, err,
						       sizeof(err)),
				 0);
		want = np_test_cpus("7");
		assert_true(np_cpuset_equal(&cpus, &want));
		assert_int_equal(mems, 0x2);
	}
	np_cgroup_cache_free(&c);
	assert_int_equal(f->nlog, 0);
}

/* Cached reads answer what np_cgroup_inspect would, per generation, and
 * notice removal, recreation, renames and symlinks. */
static void test_cache(void **state)
{
	struct fx *f = *state;
	struct np_cgroup_cache c = {0};
	char err[512], a[512], b[512];
	np_cpuset cpus, want;
	np_nodemask mems;

	mkcg(f, "np/W", "2-5", "0-1");
	mkcg(f, "np/A", "0-7", "0-1");
	mkcg(f, "np/A/B", "6", "1");
	np_cgroup_cache_next(&c);
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "W", &cpus, &mems,
					       err, sizeof(err)),
			 0);
	want = np_test_cpus("2-5");
	assert_true(np_cpuset_equal(&cpus, &want));
	assert_int_equal(mems, 0x3);
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "A/B", &cpus,
					       &mems, err, sizeof(err)),
			 0);
	assert_int_equal(np_cpuset_first(&cpus), 6);
	assert_int_equal(mems, 0x2);
	assert_int_equal(c.nfds, 4);

	/* rewritten in place: the same generation keeps what it read, the
	 * next one sees the change */
	put(f, "np/W", "cpuset.cpus", "3\n");
	put(f, "np/W", "cpuset.mems", "0\n");
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "W", &cpus, &mems,
					       err, sizeof(err)),
			 0);
	assert_int_equal(np_cpuset_count(&cpus), 4);
	np_cgroup_cache_next(&c);
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "W", &cpus, &mems,
					       err, sizeof(err)),
			 0);
	want = np_test_cpus("3");
	assert_true(np_cpuset_equal(&cpus, &want));
	assert_int_equal(mems, 0x1);

	/* unparsable content: inspect's message */
	put(f, "np/W", "cpuset.cpus", "x\n");
	np_cgroup_cache_next(&c);
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "W", &cpus, &mems,
					       err, sizeof(err)),
			 -EINVAL);
	assert_contains(err, "cannot parse");
	put(f, "np/W", "cpuset.cpus", "4\n");

	/* removed and recreated: the new directory is read */
	np_cgroup_cache_next(&c);
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "W", &cpus, &mems,
					       err, sizeof(err)),
			 0);
	path_of(f, "np/W", NULL, a, sizeof(a));
	path_of(f, "np/W.old", NULL, b, sizeof(b));
	assert_int_equal(rename(a, b), 0);
	mkcg(f, "np/W", "1", "0");
	np_cgroup_cache_next(&c);
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "W", &cpus, &mems,
					       err, sizeof(err)),
			 0);
	want = np_test_cpus("1");
	assert_true(np_cpuset_equal(&cpus, &want));

	/* renamed away: gone, as for inspect */
	path_of(f, "np/W.2", NULL, b, sizeof(b));
	assert_int_equal(rename(a, b), 0);
	np_cgroup_cache_next(&c);
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "W", &cpus, &mems,
					       err, sizeof(err)),
			 -ENOENT);
	assert_int_equal(c.nfds, 2);

	/* a parent above a nested cgroup replaced by a symlink to it */
	path_of(f, "np/A", NULL, a, sizeof(a));
	path_of(f, "np/A.real", NULL, b, sizeof(b));
	assert_int_equal(rename(a, b), 0);
	assert_int_equal(symlink(b, a), 0);
	np_cgroup_cache_next(&c);
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "A/B", &cpus,
					       &mems, err, sizeof(err)),
			 -ELOOP);
	assert_int_equal(c.nfds, 0);

	/* forget closes */
	assert_int_equal(np_cgroup_read_cpuset(&c, &f->root, "W.2", &cpus,
					       &mems, err, sizeof(err)),
			 0);
	assert_int_equal(c.nfds, 2);
	np_cgroup_cache_forget(&c, "W.2");
	assert_int_equal(c.nfds, 0);
	np_cgroup_cache_free(&c);
	/* read-only: nothing was written */
	assert_int_equal(f->nlog, 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mountinfo_pure_v2),
	    cmocka_unit_test(test_mountinfo_hybrid),
	    cmocka_unit_test(test_mountinfo_nonstandard),
	    T(test_mountinfo_errors),
	    cmocka_unit_test(test_open_discover_hybrid),
	    T(test_fake_root_refused),
	    T(test_open_checks),
	    cmocka_unit_test(test_path_check),
	    T(test_prepare_enables_top_down),
	    T(test_symlink_refused),
	    T(test_write_exact),
	    T(test_write_cpu_max),
	    T(test_write_readback_mismatch),
	    T(test_fake_effective_kept_any_umask),
	    T(test_write_missing_controller),
	    T(test_top_named_from_top),
	    cmocka_unit_test(test_errmsg),
	    cmocka_unit_test(test_plan_grant_exclusive),
	    cmocka_unit_test(test_plan_release_exclusive),
	    cmocka_unit_test(test_plan_exclusive_move),
	    cmocka_unit_test(test_plan_hierarchy),
	    cmocka_unit_test(test_plan_refusals),
	    cmocka_unit_test(test_plan_random),
	    cmocka_unit_test(test_plan_many),
	    cmocka_unit_test(test_plan_yield_after_widen),
	    cmocka_unit_test(test_plan_vs_search),
	    T(test_apply),
	    T(test_apply_past_failure),
	    cmocka_unit_test(test_partition_parse),
	    T(test_partition_ok),
	    T(test_partition_refused),
	    T(test_inspect),
	    T(test_inspect_long_text),
	    T(test_cache),
	    T(test_cache_watched),
	    T(test_cache_watched_proc_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
