// SPDX-License-Identifier: Apache-2.0
/*
 * Host isolation (numaplace/hostiso.h) on a fake /proc and /sys in a
 * mkdtemp directory: the file contents after apply and restore, no write
 * when nothing changes (mtimes), refused IRQs reported, the originals
 * surviving a crash, the refusal to isolate every CPU, a bad save file.
 *
 * The tree: IRQs 0, 1, 24, 25 (0-7; IRQ 1 only on CPU 5),
 * default_smp_affinity and the workqueue cpumask "ff", kernel threads
 * 2 (kthreadd, 0-7), 20 (per-CPU: PF_NO_SETAFFINITY, CPU 1), 33 (a comm
 * with spaces and parentheses, 0-7), 40 (a kthread pinned to CPU 1) and a
 * user process 100 (0-7). Kernel threads get their CPUs through a hook
 * that rewrites their status file.
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

#include "fake_daemon.h" /* fake_write_file */
#include "numaplace/hostiso.h"
#include "fixtures.h"

#define KT 0x00208040u     /* PF_KTHREAD | PF_NOFREEZE | PF_FORKNOEXEC */
#define KT_PERCPU 0x04208040u /* ... | PF_NO_SETAFFINITY */
#define USER 0x00400100u

struct fx {
	char dir[64];
	char root[96], run[96], state[96]; /* state: an older release's */
	struct np_hostiso *h;
	int calls; /* set_affinity hook */
	int offline; /* >= 0: a CPU the hook leaves out, as the kernel does
		      * for an offline one */
};

/* The content of a file of the tree (static buffer). */
static void task(struct fx *x, int pid, const char *comm, unsigned flags,
		 const char *cpus)
{
	char rel[64], text[512];

	snprintf(rel, sizeof(rel), "proc/%d/stat", pid);
	snprintf(text, sizeof(text),
		 "%d (%s) S 2 0 0 0 -1 %u 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n",
		 pid, comm, flags, 1000 + pid);
	np_test_put(x->root, rel, text);
	snprintf(rel, sizeof(rel), "proc/%d/status", pid);
	snprintf(text, sizeof(text),
		 "Name:\t%s\nCpus_allowed:\tff\nCpus_allowed_list:\t%s\n"
		 "Mems_allowed_list:\t0-1\n",
		 comm, cpus);
	np_test_put(x->root, rel, text);
}

/* The hook: a thread's new CPUs go into its status file. */
static int set_aff(void *ctx, int pid, const np_cpuset *cpus)
{
	struct fx *x = ctx;
	char rel[64], text[512], list[256];

	np_cpuset got = *cpus;

	x->calls++;
	if (x->offline >= 0)
		np_cpuset_clear(&got, x->offline);
	cpus = &got;
	assert_true(np_cpuset_format(cpus, list, sizeof(list)) >= 0);
	snprintf(rel, sizeof(rel), "proc/%d/status", pid);
	snprintf(text, sizeof(text),
		 "Name:\tx\nCpus_allowed:\tff\nCpus_allowed_list:\t%s\n"
		 "Mems_allowed_list:\t0-1\n",
		 list);
	np_test_put(x->root, rel, text);
	return 0;
}

static const char *status_cpus(struct fx *x, int pid)
{
	static char out[128];
	char rel[64];
	const char *p;

	snprintf(rel, sizeof(rel), "proc/%d/status", pid);
	p = strstr(np_test_get(x->root, rel), "Cpus_allowed_list:\t");
	assert_non_null(p);
	p += strlen("Cpus_allowed_list:\t");
	snprintf(out, sizeof(out), "%.*s", (int)strcspn(p, "\n"), p);
	return out;
}

static void open_h(struct fx *x)
{
	struct np_hostiso_opts o = {.root = x->root, .runtime_dir = x->run,
				    .state_dir = x->state,
				    .set_affinity = set_aff, .ctx = x};
	char err[512];

	if (np_hostiso_open(&x->h, &o, err, sizeof(err)))
		fail_msg("open: %s", err);
}

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));

	assert_non_null(x);
	x->offline = -1;
	snprintf(x->dir, sizeof(x->dir), "/tmp/np-hostiso-XXXXXX");
	assert_non_null(mkdtemp(x->dir));
	snprintf(x->root, sizeof(x->root), "%s/root", x->dir);
	snprintf(x->state, sizeof(x->state), "%s/state", x->dir);
	assert_int_equal(mkdir(x->state, 0700), 0);
	snprintf(x->run, sizeof(x->run), "%s/run", x->dir);
	assert_int_equal(mkdir(x->run, 0755), 0);
	np_test_put(x->root, "proc/irq/0/smp_affinity_list", "0-7\n");
	np_test_put(x->root, "proc/irq/1/smp_affinity_list", "5\n");
	np_test_put(x->root, "proc/irq/24/smp_affinity_list", "0-7\n");
	np_test_put(x->root, "proc/irq/25/smp_affinity_list", "0-7\n");
	np_test_put(x->root, "proc/irq/default_smp_affinity", "ff\n");
	np_test_put(x->root, "proc/interrupts", "           CPU0 CPU1\n  0:  1 2 IO-APIC timer\n");
	np_test_put(x->root, "sys/devices/virtual/workqueue/cpumask", "ff\n");
	task(x, 2, "kthreadd", KT, "0-7");
	task(x, 20, "ksoftirqd/1", KT_PERCPU, "1");
	task(x, 33, "kworker/u16:1 (x)", KT, "0-7");
	task(x, 40, "pinned", KT, "1");
	task(x, 100, "bash", USER, "0-7");
	open_h(x);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;
	char cmd[128];

	np_hostiso_close(x->h);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", x->dir);
	assert_int_equal(system(cmd), 0);
	free(x);
	return 0;
}

static np_cpuset cpus(const char *list)
{
	np_cpuset s;
	assert_int_equal(np_cpuset_parse(&s, list, NULL, 0), 0);
	return s;
}

static int apply(struct fx *x, const char *isolated,
		 struct np_hostiso_report *rep, char *err, size_t errlen)
{
	np_cpuset iso = cpus(isolated), online = cpus("0-7");
	return np_hostiso_apply(x->h, &iso, &online, rep, err, errlen);
}

static void apply_ok(struct fx *x, const char *isolated,
		     struct np_hostiso_report *rep)
{
	char err[512];
	if (apply(x, isolated, rep, err, sizeof(err)))
		fail_msg("apply %s: %s", isolated, err);
}

static bool save_exists(struct fx *x)
{
	char path[160];
	snprintf(path, sizeof(path), "%s/hostiso.json", x->run);
	return access(path, F_OK) == 0;
}

/* Every file of the untouched tree holds what setup put there. */
static void assert_originals(struct fx *x)
{
	assert_string_equal(np_test_get(x->root, "proc/irq/0/smp_affinity_list"), "0-7\n");
	assert_string_equal(np_test_get(x->root, "proc/irq/1/smp_affinity_list"), "5\n");
	assert_string_equal(np_test_get(x->root, "proc/irq/24/smp_affinity_list"), "0-7\n");
	assert_string_equal(np_test_get(x->root, "proc/irq/default_smp_affinity"), "ff\n");
	assert_string_equal(np_test_get(x->root, "sys/devices/virtual/workqueue/cpumask"),
			    "ff\n");
	assert_string_equal(status_cpus(x, 2), "0-7");
	assert_string_equal(status_cpus(x, 33), "0-7");
}

/* IRQs lose the isolated CPUs (IRQ 1, only on an isolated one, gets the
 * housekeeping CPUs), the masks too; kthreadd and the unbound kworker
 * move; the per-CPU thread, the pinned one and the user process do not. */
static void test_apply(void **state)
{
	struct fx *x = *state;
	struct np_hostiso_report rep;
	char line[512];

	apply_ok(x, "1,5", &rep);
	assert_string_equal(np_test_get(x->root, "proc/irq/0/smp_affinity_list"), "0,2-4,6-7");
	assert_string_equal(np_test_get(x->root, "proc/irq/1/smp_affinity_list"), "0,2-4,6-7");
	assert_string_equal(np_test_get(x->root, "proc/irq/24/smp_affinity_list"), "0,2-4,6-7");
	assert_string_equal(np_test_get(x->root, "proc/irq/25/smp_affinity_list"), "0,2-4,6-7");
	assert_string_equal(np_test_get(x->root, "proc/irq/default_smp_affinity"), "dd");
	assert_string_equal(np_test_get(x->root, "sys/devices/virtual/workqueue/cpumask"),
			    "dd");
	assert_string_equal(status_cpus(x, 2), "0,2-4,6-7");
	assert_string_equal(status_cpus(x, 33), "0,2-4,6-7");
	assert_string_equal(status_cpus(x, 20), "1");
	assert_string_equal(status_cpus(x, 40), "1");
	assert_string_equal(status_cpus(x, 100), "0-7");
	assert_int_equal(rep.irqs, 4);
	assert_int_equal(rep.kthreads, 2);
	assert_true(rep.default_irq && rep.workqueue);
	assert_int_equal(rep.writes, 8);
	assert_int_equal(rep.nfailed, 0);
	assert_int_equal(x->calls, 2);
	assert_true(save_exists(x));
	assert_true(np_hostiso_saved(x->h));
	np_hostiso_report_str(&rep, " moved", line, sizeof(line));
	assert_string_equal(line, "4 irqs, workqueue, default irq affinity, "
				  "2 kthreads moved");
}

static struct timespec mtime(struct fx *x, const char *rel)
{
	char path[256];
	struct stat sb;
	snprintf(path, sizeof(path), "%s/%s", x->root, rel);
	assert_int_equal(stat(path, &sb), 0);
	return sb.st_mtim;
}

/* The same set again: nothing is written (no file's mtime moves, the
 * hook is not called, the save file is not rewritten). */
static void test_idempotent(void **state)
{
	static const char *const files[] = {
		"proc/irq/0/smp_affinity_list", "proc/irq/1/smp_affinity_list",
		"proc/irq/24/smp_affinity_list", "proc/irq/default_smp_affinity",
		"sys/devices/virtual/workqueue/cpumask", "proc/2/status", NULL};
	struct fx *x = *state;
	struct np_hostiso_report rep;
	struct timespec before[8];
	char save[160];
	struct stat s1, s2;

	apply_ok(x, "1,5", &rep);
	snprintf(save, sizeof(save), "%s/hostiso.json", x->run);
	assert_int_equal(stat(save, &s1), 0);
	for (int i = 0; files[i]; i++)
		before[i] = mtime(x, files[i]);
	usleep(20000);
	apply_ok(x, "1,5", &rep);
	assert_int_equal(rep.writes, 0);
	assert_int_equal(x->calls, 2);
	for (int i = 0; files[i]; i++) {
		struct timespec t = mtime(x, files[i]);
		assert_true(t.tv_sec == before[i].tv_sec &&
			    t.tv_nsec == before[i].tv_nsec);
	}
	assert_int_equal(stat(save, &s2), 0);
	assert_int_equal(s1.st_ino, s2.st_ino); /* not replaced */
}

/*
 * IRQs whose affinity cannot be set are reported, not fatal. Two ways to
 * make a write fail as root (chmod does not stop root): IRQ 24's
 * smp_affinity_list is a symbolic link to /sys/devices/system/cpu/online,
 * which reads as a cpu list and refuses to be opened for writing (as a
 * managed IRQ's file refuses the write, with EIO); IRQ 25's is a
 * directory, which cannot be read.
 */
static void test_managed(void **state)
{
	struct fx *x = *state;
	struct np_hostiso_report rep;
	char path[256], line[512];

	if (access("/sys/devices/system/cpu/online", R_OK))
		skip();
	snprintf(path, sizeof(path), "%s/proc/irq/24/smp_affinity_list",
		 x->root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink("/sys/devices/system/cpu/online", path), 0);
	snprintf(path, sizeof(path), "%s/proc/irq/25/smp_affinity_list",
		 x->root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	/* CPU 0 is online on every host: IRQ 24's new set differs */
	apply_ok(x, "0-1", &rep);
	assert_int_equal(rep.nfailed, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rep.failed[i].what, 'i');
		assert_true(rep.failed[i].err < 0);
		assert_true(rep.failed[i].id == 24 || rep.failed[i].id == 25);
	}
	assert_true(rep.failed[0].id != rep.failed[1].id);
	assert_int_equal(rep.irqs, 1); /* IRQ 0; IRQ 1 (CPU 5) stays */
	assert_string_equal(np_test_get(x->root, "proc/irq/0/smp_affinity_list"), "2-7");
	assert_string_equal(np_test_get(x->root, "proc/irq/1/smp_affinity_list"), "5\n");
	np_hostiso_report_str(&rep, " moved off CPUs 0-1", line, sizeof(line));
	assert_non_null(strstr(line, " moved off CPUs 0-1; not movable: irq "));
	assert_non_null(strstr(line, "irq 24 ("));
}

/* Restore: every file holds exactly its original text again, the threads
 * their CPUs, and the save file is gone. */
static void test_restore(void **state)
{
	struct fx *x = *state;
	struct np_hostiso_report rep;
	char err[512];

	apply_ok(x, "1,5", &rep);
	assert_int_equal(np_hostiso_restore(x->h, &rep, err, sizeof(err)), 0);
	assert_originals(x);
	assert_string_equal(np_test_get(x->root, "proc/irq/25/smp_affinity_list"), "0-7\n");
	assert_int_equal(rep.irqs, 4);
	assert_int_equal(rep.kthreads, 2);
	assert_true(rep.default_irq && rep.workqueue);
	assert_false(save_exists(x));
	assert_false(np_hostiso_saved(x->h));
	/* nothing recorded: nothing to do */
	assert_int_equal(np_hostiso_restore(x->h, &rep, err, sizeof(err)), 0);
	assert_int_equal(rep.writes, 0);
}

/* An IRQ registered while the default was narrowed got the narrowed
 * default: restore gives it the original default, also after a restart
 * (the IRQs present at the first apply are saved). One set otherwise by
 * someone else is left alone, and so is one that was there before on the
 * housekeeping CPUs already (irqbalance, tuned): nothing was changed. */
static void test_restore_new_irq(void **state)
{
	struct fx *x = *state;
	struct np_hostiso_report rep;
	char err[512];

	np_test_put(x->root, "proc/irq/26/smp_affinity_list", "0,2-4,6-7\n");
	apply_ok(x, "1,5", &rep);
	np_test_put(x->root, "proc/irq/30/smp_affinity_list", "0,2-4,6-7\n");
	np_test_put(x->root, "proc/irq/31/smp_affinity_list", "2\n");
	/* a restart in between: the saved file is all there is */
	np_hostiso_close(x->h);
	open_h(x);
	assert_int_equal(np_hostiso_restore(x->h, &rep, err, sizeof(err)), 0);
	assert_originals(x);
	assert_string_equal(np_test_get(x->root, "proc/irq/26/smp_affinity_list"),
			    "0,2-4,6-7\n");
	assert_string_equal(np_test_get(x->root, "proc/irq/30/smp_affinity_list"), "0-7");
	assert_string_equal(np_test_get(x->root, "proc/irq/31/smp_affinity_list"), "2\n");
	assert_int_equal(rep.irqs, 5);
}

/* A smaller set gives CPUs back (computed from the originals); an IRQ
 * that vanished is skipped at restore. */
static void test_shrink_and_vanish(void **state)
{
	struct fx *x = *state;
	struct np_hostiso_report rep;
	char err[512], cmd[256];

	apply_ok(x, "1,5", &rep);
	apply_ok(x, "5", &rep);
	assert_string_equal(np_test_get(x->root, "proc/irq/0/smp_affinity_list"), "0-4,6-7");
	assert_string_equal(np_test_get(x->root, "proc/irq/default_smp_affinity"), "df");
	assert_string_equal(status_cpus(x, 33), "0-4,6-7");
	snprintf(cmd, sizeof(cmd), "rm -r %s/proc/irq/24", x->root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(np_hostiso_restore(x->h, &rep, err, sizeof(err)), 0);
	assert_int_equal(rep.skipped, 1);
	assert_int_equal(rep.irqs, 3);
	assert_string_equal(np_test_get(x->root, "proc/irq/0/smp_affinity_list"), "0-7\n");
	assert_string_equal(np_test_get(x->root, "proc/irq/1/smp_affinity_list"), "5\n");
}

/*
 * A crash: the handle is dropped without restore. A new one loads the
 * originals; an apply with another set keeps them (it does not take the
 * values the first run wrote for originals); restore gives back the
 * originals of before the crash.
 */
static void test_crash(void **state)
{
	struct fx *x = *state;
	struct np_hostiso_report rep;
	char err[512];

	apply_ok(x, "1,5", &rep);
	np_hostiso_close(x->h);
	x->h = NULL;
	open_h(x);
	assert_false(np_hostiso_saved(x->h));
	assert_int_equal(np_hostiso_load(x->h, err, sizeof(err)), 1);
	assert_true(np_hostiso_saved(x->h));
	np_hostiso_close(x->h);
	open_h(x); /* apply loads by itself */
	apply_ok(x, "2", &rep);
	assert_true(np_hostiso_saved(x->h));
	assert_string_equal(np_test_get(x->root, "proc/irq/0/smp_affinity_list"), "0-1,3-7");
	assert_string_equal(np_test_get(x->root, "proc/irq/1/smp_affinity_list"), "5");
	assert_string_equal(status_cpus(x, 2), "0-1,3-7");
	np_hostiso_close(x->h);
	x->h = NULL;
	open_h(x); /* restore loads by itself */
	assert_int_equal(np_hostiso_restore(x->h, &rep, err, sizeof(err)), 0);
	assert_originals(x);
	assert_false(save_exists(x));
}

/* Every online CPU isolated: refused, naming the set; nothing written. */
static void test_refuse_all(void **state)
{
	struct fx *x = *state;
	struct np_hostiso_report rep;
	char err[512];

	assert_int_equal(apply(x, "0-7", &rep, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "CPUs 0-7 are every online CPU"));
	assert_originals(x);
	assert_false(save_exists(x));
	assert_int_equal(x->calls, 0);
}

static void bad_save(struct fx *x, const char *text, const char *field)
{
	struct np_hostiso_report rep;
	char path[160], err[512];

	snprintf(path, sizeof(path), "%s/hostiso.json", x->run);
	fake_write_file(path, text);
	np_hostiso_close(x->h);
	open_h(x);
	assert_int_equal(np_hostiso_load(x->h, err, sizeof(err)), -EINVAL);
	if (!strstr(err, field) || !strstr(err, "hostiso.json"))
		fail_msg("error \"%s\" does not name %s", err, field);
	assert_int_equal(apply(x, "1,5", &rep, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, field));
	assert_int_equal(np_hostiso_restore(x->h, &rep, err, sizeof(err)),
			 -EINVAL);
	assert_originals(x);
	assert_int_equal(x->calls, 0);
	assert_string_equal(np_test_get(x->root, "../run/hostiso.json"), text);
}

/* A save file that is not valid: the error names the field, and neither
 * apply nor restore writes anything (nor replaces the file). */
static void test_bad_save(void **state)
{
	struct fx *x = *state;

	bad_save(x, "{\"version\": 1, \"isolated\": \"1\", \"irqs\": "
		    "[{\"irq\": 3, \"affinity\": \"x-y\"}], \"kthreads\": []}",
		 "irqs[0].affinity");
	bad_save(x, "{\"isolated\": \"1\", \"irqs\": [], \"kthreads\": []}",
		 "version");
	bad_save(x, "{\"version\": 1, \"isolated\": \"1\", \"irqs\": [], "
		    "\"kthreads\": [{\"pid\": 2, \"comm\": \"k\", "
		    "\"affinity\": \"0-7\"}]}",
		 "kthreads[0].start");
	bad_save(x, "{\"version\": 1, \"isolated\": \"1\", \"irqs\": [], "
		    "\"kthreads\": [], \"workqueue_cpumask\": \"0-7\"}",
		 "workqueue_cpumask");
	bad_save(x, "{\"version\": 1, \"isolated\": \"1\", \"irqs\": [], "
		    "\"kthreads\": [], \"bogus\": 1}",
		 "bogus");
	bad_save(x, "{\"version\": 1,", "line 1");
}

/* Where an older numaplaced kept the record (the state directory, "old")
 * or where it is kept now (the runtime directory): there or not. */
static bool in_dir(struct fx *x, bool old)
{
	char path[160];
	snprintf(path, sizeof(path), "%s/hostiso.json", old ? x->state : x->run);
	return access(path, F_OK) == 0;
}

/* After a crash: the record as apply "1,5" left it, the tree isolated;
 * the record then moved by hand to the state directory, as an older
 * numaplaced kept it. Its text in *text (heap). */
static void crash_with_old_record(struct fx *x, char **text)
{
	struct np_hostiso_report rep;
	char from[160], to[160];

	apply_ok(x, "1,5", &rep);
	np_hostiso_close(x->h);
	x->h = NULL;
	assert_non_null(*text = strdup(np_test_get(x->root, "../run/hostiso.json")));
	snprintf(from, sizeof(from), "%s/hostiso.json", x->run);
	snprintf(to, sizeof(to), "%s/hostiso.json", x->state);
	assert_int_equal(rename(from, to), 0);
	open_h(x);
}

/* An upgrade: the record is in the state directory only. It is adopted:
 * written to the runtime directory byte for byte, then removed from the
 * state directory; restore gives every original back from it. */
static void test_moved(void **state)
{
	struct fx *x = *state;
	struct np_hostiso_report rep;
	char err[512], *text;

	crash_with_old_record(x, &text);
	assert_int_equal(np_hostiso_load(x->h, err, sizeof(err)), 1);
	assert_false(in_dir(x, true));
	assert_string_equal(np_test_get(x->root, "../run/hostiso.json"), text);
	free(text);
	np_hostiso_close(x->h);
	open_h(x); /* the next start reads the runtime's */
	assert_int_equal(np_hostiso_restore(x->h, &rep, err, sizeof(err)), 0);
	assert_originals(x);
	assert_false(in_dir(x, false));
}

/* Both there: the runtime directory's wins (the state directory's is an
 * older release's: here one whose originals are wrong), and the other is
 * removed. */
static void test_moved_both(void **state)
{
	struct fx *x = *state;
	struct np_hostiso_report rep;
	char err[512], *text;

	crash_with_old_record(x, &text);
	np_test_put(x->root, "../run/hostiso.json", text);
	np_test_put(x->root, "../state/hostiso.json",
		    "{\"version\": 1, \"isolated\": \"1,5\", \"irqs\": "
		    "[{\"irq\": 0, \"affinity\": \"3\\n\"}], \"kthreads\": []}");
	assert_int_equal(np_hostiso_load(x->h, err, sizeof(err)), 1);
	assert_false(in_dir(x, true));
	assert_string_equal(np_test_get(x->root, "../run/hostiso.json"), text);
	free(text);
	assert_int_equal(np_hostiso_restore(x->h, &rep, err, sizeof(err)), 0);
	assert_originals(x); /* IRQ 0 "0-7", not the stale "3" */
	assert_false(in_dir(x, false));
}

/* The state directory's record is not valid: the error names it there,
 * and nothing moves, nothing is removed, nothing is written back. */
static void test_moved_bad(void **state)
{
	struct fx *x = *state;
	struct np_hostiso_report rep;
	char err[512], want[160];

	np_test_put(x->root, "../state/hostiso.json", "{\"version\": 1,");
	assert_int_equal(np_hostiso_load(x->h, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s/hostiso.json: line 1", x->state);
	if (!strstr(err, want))
		fail_msg("error \"%s\" does not name %s", err, want);
	assert_string_equal(np_test_get(x->root, "../state/hostiso.json"),
			    "{\"version\": 1,");
	assert_false(in_dir(x, false));
	assert_int_equal(apply(x, "1,5", &rep, err, sizeof(err)), -EINVAL);
	assert_originals(x);
	assert_int_equal(x->calls, 0);
}

/* The state directory cannot take the record (hostiso.json.tmp there is
 * a directory: the write fails as on a full or read-only disk), the
 * runtime directory can: the CPUs are isolated all the same, and the
 * record is in the runtime directory. (Before the record moved there,
 * apply failed: "writing STATE/hostiso.json: Is a directory", nothing
 * isolated.) */
static void test_state_unwritable(void **state)
{
	struct fx *x = *state;
	struct np_hostiso_report rep;
	char path[160], err[512];

	snprintf(path, sizeof(path), "%s/hostiso.json.tmp", x->state);
	assert_int_equal(mkdir(path, 0700), 0);
	apply_ok(x, "1,5", &rep);
	assert_string_equal(np_test_get(x->root, "proc/irq/0/smp_affinity_list"), "0,2-4,6-7");
	assert_string_equal(np_test_get(x->root, "proc/irq/default_smp_affinity"), "dd");
	assert_string_equal(status_cpus(x, 2), "0,2-4,6-7");
	assert_true(in_dir(x, false));
	assert_false(in_dir(x, true));
	assert_int_equal(np_hostiso_restore(x->h, &rep, err, sizeof(err)), 0);
	assert_originals(x);
	assert_false(in_dir(x, false));
}

/* A cgroup v2 partition holds 3,5,7: the kernel gave every movable task
 * of the root cgroup the possible CPUs less those (0-2,4,6) and gives
 * them the possible CPUs again when it is undone, so that, not what they
 * hold now, is the original recorded and given back (issue 33's 2-hour
 * chaos run ended with kthreadd on 0-2,4,6). A thread on other CPUs
 * (0-2, its own) keeps its own as its original. */
static void test_partition_trimmed(void **state)
{
	struct fx *x = *state;
	struct np_hostiso_report rep;
	char err[512];

	np_test_put(x->root, "sys/fs/cgroup/cpuset.cpus.effective", "0-2,4,6\n");
	np_test_put(x->root, "sys/devices/system/cpu/possible", "0-7\n");
	task(x, 2, "kthreadd", KT, "0-2,4,6");
	task(x, 33, "kworker/u16:1 (x)", KT, "0-2");
	apply_ok(x, "1,3,5,7", &rep);
	assert_string_equal(status_cpus(x, 2), "0,2,4,6");
	assert_string_equal(status_cpus(x, 33), "0,2");
	assert_non_null(strstr(np_test_get(x->run, "hostiso.json"), "\"0-7\""));
	assert_int_equal(np_hostiso_restore(x->h, &rep, err, sizeof(err)), 0);
	assert_string_equal(status_cpus(x, 2), "0-7");
	assert_string_equal(status_cpus(x, 33), "0-2");
	/* no partition: what a thread holds is its original */
	np_test_put(x->root, "sys/fs/cgroup/cpuset.cpus.effective", "0-7\n");
	task(x, 2, "kthreadd", KT, "0-2,4,6");
	apply_ok(x, "1,3,5,7", &rep);
	assert_int_equal(np_hostiso_restore(x->h, &rep, err, sizeof(err)), 0);
	assert_string_equal(status_cpus(x, 2), "0-2,4,6");
}

/* A give-back while CPU 5 is offline: the kernel leaves it out of the
 * threads' CPUs and would not add it when it comes online, so the threads
 * stay recorded (the IRQs and masks are back, and no longer in the file);
 * the next restore, with CPU 5 online, gives them the rest and removes
 * the file. */
static void test_restore_offline(void **state)
{
	struct fx *x = *state;
	struct np_hostiso_report rep;
	char err[512], line[512];

	np_test_put(x->root, "sys/devices/system/cpu/online", "0-7\n");
	apply_ok(x, "1", &rep);
	assert_string_equal(status_cpus(x, 2), "0,2-7");
	np_test_put(x->root, "sys/devices/system/cpu/online", "0-4,6-7\n");
	x->offline = 5;
	assert_int_equal(np_hostiso_restore(x->h, &rep, err, sizeof(err)), 0);
	assert_string_equal(status_cpus(x, 2), "0-4,6-7");
	assert_string_equal(status_cpus(x, 33), "0-4,6-7");
	assert_int_equal(rep.owed, 2);
	assert_int_equal(rep.kthreads, 0);
	assert_string_equal(np_test_get(x->root, "proc/irq/0/smp_affinity_list"), "0-7\n");
	assert_string_equal(np_test_get(x->root, "proc/irq/default_smp_affinity"), "ff\n");
	assert_true(save_exists(x));
	assert_true(np_hostiso_saved(x->h));
	assert_null(strstr(np_test_get(x->run, "hostiso.json"), "\"irq\""));
	assert_null(strstr(np_test_get(x->run, "hostiso.json"), "default_smp_affinity"));
	np_hostiso_report_str(&rep, " given back", line, sizeof(line));
	assert_non_null(strstr(line, "; 2 kthreads short of offline CPUs"));
	/* a new handle (a restart) reads the threads still owed */
	np_hostiso_close(x->h);
	open_h(x);
	np_test_put(x->root, "sys/devices/system/cpu/online", "0-7\n");
	x->offline = -1;
	assert_int_equal(np_hostiso_restore(x->h, &rep, err, sizeof(err)), 0);
	assert_int_equal(rep.kthreads, 2);
	assert_int_equal(rep.owed, 0);
	assert_originals(x);
	assert_false(save_exists(x));
}

/* A partition numaplace did not make (3,5,7, not among the isolated
 * CPUs): kernel threads are not asked for its CPUs, which the kernel
 * would not give, so a second apply finds nothing to write. */
static void test_partition_foreign(void **state)
{
	struct fx *x = *state;
	struct np_hostiso_report rep;

	np_test_put(x->root, "sys/fs/cgroup/cpuset.cpus.effective", "0-2,4,6\n");
	np_test_put(x->root, "sys/devices/system/cpu/possible", "0-7\n");
	task(x, 2, "kthreadd", KT, "0-2,4,6");
	apply_ok(x, "1", &rep);
	assert_string_equal(status_cpus(x, 2), "0,2,4,6");
	x->calls = 0;
	apply_ok(x, "1", &rep);
	assert_int_equal(x->calls, 0);
	assert_int_equal(rep.kthreads, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_apply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idempotent, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_managed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_new_irq, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_shrink_and_vanish, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_crash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_all, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_save, setup, teardown),
		cmocka_unit_test_setup_teardown(test_moved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_moved_both, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_moved_bad, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_state_unwritable, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_partition_trimmed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_partition_foreign, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_restore_offline, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
