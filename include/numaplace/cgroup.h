/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup v2 cpuset enforcement: discovery of the cgroup2 mount, symlink-safe
 * path handling, cpuset.cpus/cpuset.mems writes with read-back of the
 * effective sets, the hierarchy- and exclusivity-safe write planner and its
 * executor, cpuset partitions, and read-only inspection for drift checks.
 *
 * libcgroup vs plain file I/O.  The library does not use libcgroup (2.0.2);
 * everything is plain syscalls:
 *  - Writes are one open(O_WRONLY|O_CLOEXEC|O_NOFOLLOW) + one write() per
 *    value, so the kernel parses and applies the whole list at once and the
 *    errno we report is the kernel's own, straight from write().  libcgroup
 *    writes through stdio (fopen/fprintf/fclose: the write happens at a
 *    buffer flush) and reports ECGOTHER / ECGROUPVALUENOTEXIST with the
 *    errno on a side channel (cgroup_get_last_errno()), while the messages
 *    below are built on the exact ENOENT/EINVAL/ERANGE/EBUSY of the write.
 *  - Paths are walked component by component from an open directory fd with
 *    O_NOFOLLOW; libcgroup builds absolute path strings.
 *  - Discovery: libcgroup's cgroup_init() reads the fixed path /proc/mounts
 *    into process-global tables, so sample mountinfo files cannot be
 *    injected in tests and the state is not reentrant; it would also add
 *    -lcgroup to every program linking libnumaplace.a.  Our parser of
 *    /proc/self/mountinfo and /proc/cgroups is small and fully tested.
 * cgroup-tools (cgcreate/cgexec/cgget) remain useful to operators and VM
 * tests for poking at the same tree by hand; nothing here depends on them.
 *
 * Conventions: functions return 0 or a negative errno; a message naming the
 * cgroup, the file and the value goes into the caller's err buffer (may be
 * NULL).  Positive returns are "succeeded, but look": NP_CGROUP_PARTIAL and
 * NP_CGROUP_PARTITION_REFUSED.  No global state; all functions are
 * reentrant (the root handle may be shared by threads that only read it).
 */
#ifndef NUMAPLACE_CGROUP_H
#define NUMAPLACE_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "numaplace/cpuset.h"
#include "numaplace/strmap.h"

#define NP_CGROUP_PATH_MAX 4096

/*
 * Positive return codes.
 * PARTIAL: the write succeeded but cpuset.*.effective differs from what was
 *	written (the kernel granted less, e.g. the parent's effective set is
 *	smaller); err says "kernel granted 2-3 of requested 2-5 (parent
 *	cpuset.cpus.effective is 0-3)".
 * PARTITION_REFUSED: the kernel marked the requested partition invalid; it
 *	has been reverted to "member" and err quotes the kernel's reason.
 */
#define NP_CGROUP_PARTIAL 1
#define NP_CGROUP_PARTITION_REFUSED 2

/* Called after every successful write (journal, audit log, tests). cgroup is
 * relative to the hierarchy root ("" is the root itself), file is e.g.
 * "cpuset.cpus", value exactly what was written (without any newline). */
typedef void (*np_cgroup_write_fn)(void *arg, const char *cgroup,
				   const char *file, const char *value);

struct np_cgroup_opts {
	/* cgroup2 mount (or a fake tree); NULL: discover from mountinfo. */
	const char *root;
	/* Managed parent relative to root ("kubepods/numaplace"); NULL or ""
	 * is the root itself.  Workload cgroups are named relative to it. */
	const char *parent;
	/* Injectable for tests; NULL: /proc/self/mountinfo, /proc/cgroups. */
	const char *mountinfo;
	const char *proc_cgroups;
	/* Accept a root that is not on cgroup2 (a tree of plain files). */
	bool allow_fake;
	/* mkdir the managed parent if missing and enable +cpuset down to it. */
	bool create_parent;
	/* The hierarchy's root when root is a subtree of it (the systemd
	 * driver's delegated scope): cgroups named "/x" are found from
	 * there. NULL: root itself. */
	const char *top;
	/* The enforcer's read cache (np_cgroup_cache.full_ms): every file
	 * read again at least this often; 0: every cycle. */
	unsigned full_scan_ms;
};

struct np_cgroup_root {
	int root_fd;   /* the hierarchy root directory */
	int parent_fd; /* the managed parent directory */
	int top_fd;    /* where "/x" names start (opts.top, else root) */
	/* mount id of parent_fd (fixed while it is open: a walk from it
	 * need not ask again); 0 = not known */
	uint64_t parent_mnt;
	bool fake;     /* not cgroup2 (allow_fake): writes also O_TRUNC */
	char path[NP_CGROUP_PATH_MAX];	 /* root path, for messages only */
	/* top_fd's path, for messages only: "/x" names are shown from
	 * there, not from path (the systemd driver's root is its scope) */
	char top[NP_CGROUP_PATH_MAX];
	char parent[NP_CGROUP_PATH_MAX]; /* managed parent, relative */
	np_cgroup_write_fn on_write;	 /* optional, set after open */
	void *on_write_arg;
	/* Optional, set after open: true once the managed parent's
	 * cgroup.subtree_control was read passing cpuset. Its owner clears
	 * it at every reconcile cycle; until then a leaf made below the
	 * parent needs no read of it (3 system calls of each new leaf). */
	bool *parent_passes;
};

/* ---- discovery ---------------------------------------------------------- */

/*
 * Refuse hosts where cpuset is bound to a cgroup v1 hierarchy: a "cgroup"
 * mount with the cpuset option in mountinfo, or a non-zero hierarchy id for
 * cpuset in /proc/cgroups (bound but not mounted in this namespace).  Also
 * refuses a disabled (cgroup_disable=cpuset) or missing cpuset controller.
 * Returns 0 when cpuset is free for cgroup v2, -EOPNOTSUPP with e.g.
 * "cpuset is bound to a cgroup v1 hierarchy (mounted at
 * /sys/fs/cgroup/cpuset); boot with systemd.unified_cgroup_hierarchy=1".
 * NULL paths mean the /proc defaults; a missing default /proc/cgroups is
 * skipped (mountinfo is the primary signal), a missing explicit one is an
 * error.
 */
int np_cgroup_check_v1(const char *mountinfo, const char *proc_cgroups,
		       char *err, size_t errlen);

/*
 * Find the cgroup2 mount point (a mount of the hierarchy root "/" is
 * preferred over bind mounts of subtrees), after np_cgroup_check_v1().
 * -ENOENT when there is no cgroup2 mount, -EOPNOTSUPP on a hybrid host,
 * -ENAMETOOLONG if path is too small.
 */
int np_cgroup_find_mount(const char *mountinfo, const char *proc_cgroups,
			 char *path, size_t len, char *err, size_t errlen);

/*
 * The cgroup2 mount point from a mountinfo file (NULL: /proc/self/mountinfo),
 * octal escapes ("\040") decoded, without the cgroup v1 check above: naming
 * cgroup ids needs only the cgroup2 mount, also on a hybrid host. A mount of
 * the hierarchy root "/" is preferred over bind mounts of subtrees (ids
 * outside a subtree could not be named through it). -ENOENT: no cgroup2
 * mount; -EINVAL: a malformed mountinfo line; -ENAMETOOLONG.
 */
int np_cgroup2_mount_find(const char *mountinfo, char *out, size_t len);

/*
 * Open the root (discovering it when opts->root is NULL), check it is
 * cgroup2 (statfs f_type == CGROUP2_SUPER_MAGIC; otherwise -EMEDIUMTYPE
 * unless allow_fake, and always for a cgroup v1 mount), check "cpuset" is
 * listed in its cgroup.controllers (-ENODEV, or the v1 refusal above when
 * that is the reason), then open the managed parent (walked with
 * O_NOFOLLOW; a fake tree also gets cgroup.controllers/subtree_control/
 * procs created in directories this library mkdirs, as cgroupfs would).
 * On failure root is left closed (fds -1).
 */
int np_cgroup_open(struct np_cgroup_root *root,
		   const struct np_cgroup_opts *opts, char *err, size_t errlen);
/* Close both fds; safe on a closed or failed root. */
void np_cgroup_close(struct np_cgroup_root *root);

/* ---- paths and controllers ---------------------------------------------- */

/*
 * Check a cgroup path relative to the managed parent: non-empty components
 * separated by single '/', no leading '/', no "." or "..", each at most
 * NAME_MAX bytes.  Pure.  -EINVAL with a message.
 */
int np_cgroup_path_check(const char *cgroup, char *err, size_t errlen);
/*
 * Where a path passes np_cgroup_path_check after one leading '/', the
 * cgroup is named from the hierarchy root instead ("/np/ctr1": an OCI
 * container's cgroup, which its runtime made outside the managed tree):
 * read, inspected and written like the others (np_cgroup_read_cpuset,
 * np_cgroup_inspect, np_cgroup_write_*, the write plan), never cached;
 * np_cgroup_prepare and the partition calls take relative paths only.
 */

#define NP_CGROUP_CREATE 0x1 /* mkdirat(0755) missing components */

/*
 * Make cgroup (relative to the managed parent) usable for cpuset writes:
 * walk from the hierarchy root through the managed parent to cgroup with
 * openat(O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC) and write "+cpuset" to the
 * cgroup.subtree_control of every directory above it, top-down, skipping
 * those whose subtree_control already lists cpuset.  With NP_CGROUP_CREATE,
 * missing components are created.  A symlink anywhere in the path: -ELOOP
 * (checked by a dry walk first, so a refused path leaves no writes).
 */
int np_cgroup_prepare(const struct np_cgroup_root *root, const char *cgroup,
		      unsigned int flags, char *err, size_t errlen);

/*
 * The message for a failed write of value to file in cgroup (a display
 * path); errnum may be positive or negative.  Pure; returns the length.
 * ENOENT, EBUSY, ENOSPC, EINVAL, ERANGE, EACCES/EPERM, EROFS, E2BIG, ENODEV
 * get specific explanations (they depend on file), others strerror.
 */
int np_cgroup_errmsg(char *buf, size_t len, int errnum, const char *cgroup,
		     const char *file, const char *value);

/* ---- cpuset writes ------------------------------------------------------ */

/*
 * Write cpuset.cpus / cpuset.mems of cgroup (relative to the managed parent)
 * with one write() of the formatted list, then read the .effective file
 * back.  Returns 0 when effective == requested, NP_CGROUP_PARTIAL when it
 * differs (granted gets the effective set; may be NULL), -errno on failure.
 * An empty set is refused (-EINVAL): in cgroup v2 it means "inherit the
 * parent's set", which is never what an enforcer wants to write.
 */
int np_cgroup_write_cpus(const struct np_cgroup_root *root, const char *cgroup,
			 const np_cpuset *cpus, np_cpuset *granted, char *err,
			 size_t errlen);
int np_cgroup_write_mems(const struct np_cgroup_root *root, const char *cgroup,
			 np_nodemask mems, np_nodemask *granted, char *err,
			 size_t errlen);

/*
 * Write cpu.max of cgroup (relative to the managed parent): "QUOTA PERIOD",
 * or "max PERIOD" when quota_us < 0 (BE suppression, policy cfsQuota).
 * Needs the cpu controller in the parent's subtree_control. 0 or -errno
 * with a message (-EINVAL for a period outside 1000..1000000 us or a quota
 * below 1000 us).
 */
int np_cgroup_write_cpu_max(const struct np_cgroup_root *root,
			    const char *cgroup, int64_t quota_us,
			    int64_t period_us, char *err, size_t errlen);

/*
 * Move pid into cgroup, a direct child of the managed parent (created when
 * create and missing), by writing cgroup.procs. 0 or -errno with a message.
 */
int np_cgroup_move_pid(const struct np_cgroup_root *root, const char *cgroup,
		       pid_t pid, bool create, char *err, size_t errlen);

/* ---- partitions --------------------------------------------------------- */

enum np_cgroup_partition {
	NP_CGROUP_MEMBER,
	NP_CGROUP_ROOT,
	NP_CGROUP_ISOLATED,
};

const char *np_cgroup_partition_name(enum np_cgroup_partition p);

/*
 * Parse what cpuset.cpus.partition reads back: "member", "root",
 * "isolated", "<mode> invalid" or "<mode> invalid (<reason>)".  Pure.
 * reason (may be NULL) gets the text in parentheses, "" if none.
 */
int np_cgroup_partition_parse(const char *s, enum np_cgroup_partition *mode,
			      bool *invalid, char *reason, size_t reasonlen);

/*
 * Make cgroup a partition (root or isolated) or turn it back into a member.
 * When exclusive is not NULL it is written to cpuset.cpus.exclusive first
 * (Linux 6.7+).  Where that file does not exist (6.1) the kernel uses
 * cpuset.cpus as the exclusive set: exclusive must then equal cpuset.cpus,
 * otherwise -EOPNOTSUPP (no silent fallback).  The partition file is read
 * back; if the kernel reports "<mode> invalid (<reason>)" the cgroup is
 * reverted to member (and cpuset.cpus.exclusive restored) and
 * NP_CGROUP_PARTITION_REFUSED is returned with a warning quoting the reason.
 */
int np_cgroup_set_partition(const struct np_cgroup_root *root,
			    const char *cgroup, enum np_cgroup_partition mode,
			    const np_cpuset *exclusive, char *err,
			    size_t errlen);

/* ---- inspection --------------------------------------------------------- */

struct np_cgroup_state {
	np_cpuset cpus, cpus_effective;
	np_nodemask mems, mems_effective;
	bool has_cpus_exclusive; /* cpuset.cpus.exclusive exists (6.7+) */
	np_cpuset cpus_exclusive;
	bool has_partition; /* cpuset.cpus.partition exists (5.11+) */
	enum np_cgroup_partition partition;
	bool partition_invalid;
	char partition_reason[256];
	bool procs_empty; /* no process directly in this cgroup */
};

/* Read-only snapshot of cgroup (relative to the managed parent). */
int np_cgroup_inspect(const struct np_cgroup_root *root, const char *cgroup,
		      struct np_cgroup_state *st, char *err, size_t errlen);

/* ---- cached cpuset reads (the reconcile cycle) --------------------------- */

struct np_cgroup_cache_entry;

/*
 * Open cpuset.cpus and cpuset.mems files of cgroups below the managed
 * parent, so that a reconcile cycle reads each with one pread() instead of
 * a checked path walk and six file reads (np_cgroup_inspect).
 *
 * Whether a path still names the directory the files were opened in is
 * checked with one fstatat(AT_SYMLINK_NOFOLLOW) (same device and inode, a
 * directory) on the first read after anything changed in the directories
 * above the cached cgroups: an inotify watch on each of them (creation,
 * removal, rename, and the watch's own end) says so. Without inotify every
 * read checks. A cgroup removed, recreated, renamed away or replaced by a
 * symlink goes back through np_cgroup_inspect, with its checks and
 * messages; a removed cgroup whose files are still open also fails the
 * read itself on cgroupfs (ENODEV). Not detected: a mount placed over a
 * cached cgroup (its own files are still read) and, in a fake tree of
 * plain files, a file replaced rather than rewritten in place.
 * Not thread-safe; owned by one user of one root. Opening a cgroup into
 * the cache makes its directory the process's working directory for the
 * two inotify_add_watch calls (then the one before again): no other
 * thread may use relative paths meanwhile (numaplace has none).
 */
struct np_cgroup_cache {
	struct np_strmap ix;	/* cgroup path -> struct np_cgroup_cache_entry * */
	struct np_strmap watch; /* watched directory (relative path) -> wd */
	struct np_strmap fwatch; /* file watch ("wd") -> its entry */
	struct np_strmap dwatch; /* directory watches ("wd") */
	unsigned gen;		/* read generation, see np_cgroup_cache_next */
	unsigned epoch;		/* bumped by every directory event */
	int nfds, maxfds; /* maxfds: 0 = from RLIMIT_NOFILE at first use */
	int ifd;	  /* inotify; 0 = not yet, -1 = none (check always) */
	/* the working directory, kept while a cgroup's files are watched
	 * by name from its directory (valid when cwd_tried; -1: none) */
	int cwd_fd;
	bool cwd_tried;
	/* Every file is read again in a generation started full_ms after
	 * the last such (0: every generation); set by the owner. */
	unsigned full_ms;
	uint64_t last_full; /* CLOCK_MONOTONIC ms */
	bool full_now;	    /* this generation reads every file */
	bool lent;	    /* ifd is the owner's (np_cgroup_cache_use_fd) */
	bool blind;	    /* a directory could not be watched: check always */
	/* The last np_cgroup_read_cpuset was of a cgroup whose two files
	 * are watched here (a write to them is seen by the drain). */
	bool last_watched;
	/* A drain saw an event (of any kind, or lost some) since the owner
	 * last cleared this: something may have changed. */
	bool events;
	/* Reads of this generation not answered by a watched entry read
	 * since its watches were added (a change would not be an event, or
	 * may have come before the watches). */
	unsigned unwatched;
};

/*
 * cpuset.cpus and cpuset.mems of cgroup (relative to the managed parent):
 * 0, or what np_cgroup_inspect() returns for it (with its message) when it
 * fails. A cgroup already read in the current generation is answered from
 * what was read then, without any system call.
 */
int np_cgroup_read_cpuset(struct np_cgroup_cache *c,
			  const struct np_cgroup_root *root, const char *cgroup,
			  np_cpuset *cpus, np_nodemask *mems, char *err,
			  size_t errlen);
/*
 * Start a new generation: what inotify said since the last one is taken
 * in (np_cgroup_cache_drain), and a file is read again only when it was
 * written since its last read, something moved in the directories above
 * it, or a full scan is due (full_ms).
 */
void np_cgroup_cache_next(struct np_cgroup_cache *c);
/* Take in the pending inotify events: true when a watched file was written
 * (IN_MODIFY, from any watch of the instance) or events were lost. */
bool np_cgroup_cache_drain(struct np_cgroup_cache *c);
/* Use the owner's inotify instance fd (which it polls): watches are added
 * there and never the instance closed; empties the cache first. */
void np_cgroup_cache_use_fd(struct np_cgroup_cache *c, int fd);
/* Close the files of cgroup (e.g. removed or released). */
void np_cgroup_cache_forget(struct np_cgroup_cache *c, const char *cgroup);
/* Close everything; the cache is empty and reusable afterwards. */
void np_cgroup_cache_free(struct np_cgroup_cache *c);

/* ---- the write planner (pure) and its executor -------------------------- */

enum np_cgroup_kind {
	NP_CGROUP_SHARED,    /* may overlap other shared cgroups */
	NP_CGROUP_EXCLUSIVE, /* may overlap nothing but its own ancestors and
				descendants */
};

/*
 * One cgroup's desired transition.  An empty new_cpus (new_mems == 0) with
 * an empty old set means "cpus (mems) not managed here"; empty new with a
 * non-empty old is refused (it would mean "inherit the parent's set").  An
 * empty old set means the file is unset (a fresh cgroup): it holds nothing
 * as far as exclusivity is concerned.
 */
struct np_cgroup_change {
	const char *cgroup; /* relative to the managed parent */
	/* Both required; they need only live while the plan is built (the
	 * plan keeps copies of what it needs), so that a cycle's thousands of
	 * changes can point to the same few sets. */
	const np_cpuset *old_cpus, *new_cpus;
	np_nodemask old_mems, new_mems;
	enum np_cgroup_kind kind;
	/* Koordinator's LSR: best effort may run on a reserved workload's
	 * CPUs. A shared cgroup with best_effort (it holds the BE pool) and
	 * an exclusive one with lends_to_be (an LSR workload's) may hold the
	 * same CPUs; each still conflicts with every other cgroup as its
	 * kind says. Either flag on the other kind is refused. */
	bool best_effort, lends_to_be;
};

enum np_cgroup_file {
	NP_CGROUP_CPUS, /* cpuset.cpus */
	NP_CGROUP_MEMS, /* cpuset.mems */
};

enum np_cgroup_why {
	NP_STEP_MEMS_WIDEN,   /* mems old ∪ new, top-down */
	NP_STEP_CPUS_RELEASE, /* exclusive drops CPUs outside its target */
	NP_STEP_CPUS_YIELD,   /* shared gives CPUs up to exclusive ones */
	NP_STEP_CPUS_WIDEN,   /* cpus += free CPUs of the target */
	NP_STEP_CPUS_NARROW,  /* cpus = new, bottom-up */
	NP_STEP_MEMS_NARROW,  /* mems = new, bottom-up */
};

struct np_cgroup_step {
	int change; /* index into the change list (and plan->cgroups) */
	enum np_cgroup_file file;
	enum np_cgroup_why why;
	/* for NP_CGROUP_CPUS: one of plan->sets (steps that write the same
	 * set share it); NULL for NP_CGROUP_MEMS */
	const np_cpuset *cpus;
	np_nodemask mems; /* for NP_CGROUP_MEMS */
	bool final;	  /* last write of this file of this cgroup */
};

struct np_cgroup_plan {
	struct np_cgroup_step *steps;
	int n;
	/* the distinct sets the steps write, each once (a first cycle writes
	 * the shared pool to every shared cgroup: one set, not thousands) */
	np_cpuset **sets;
	int nsets;
	char **cgroups; /* copies of the changes' cgroup paths */
	int ncgroups;
	/* cpuset.cpus each cgroup holds before the plan (its old_cpus; every
	 * CPU when that is empty: an empty cpuset.cpus inherits them), one of
	 * sets */
	const np_cpuset **held;
};

/*
 * Order the writes for a set of changes:
 *  1. mems widened (old ∪ new) top-down, before any cpus write;
 *  2. then, repeatedly: bottom-up, exclusive cgroups release CPUs outside
 *     their targets and shared cgroups yield the CPUs any (non-nested)
 *     exclusive cgroup is to get; when none can, one cgroup is widened by
 *     the CPUs of its target that no conflicting cgroup holds any more
 *     (parents before children, shallower first, shared before exclusive,
 *     so a granted exclusive set is written last);
 *  3. cpus narrowed to the new sets bottom-up;
 *  4. mems narrowed bottom-up, after every cpus write.
 * Every cpus write either removes CPUs outside the cgroup's target or adds
 * CPUs of its target, never one that a conflicting cgroup (exclusive vs
 * anything non-nested) holds at that moment, and never leaves a set empty.
 * A child never gets a CPU before its parent (when the target nests it)
 * and a parent never drops one before its children.  No write drops a CPU
 * of the cgroup's target or adds one outside it, so every intermediate
 * set lies between old ∩ new and old ∪ new.  Cyclic exchanges (two
 * exclusive cgroups swapping CPUs; a shared and an exclusive one trading
 * their only CPUs) are refused with -EDEADLK naming who waits for whom:
 * plan them in two rounds through free CPUs.  (The greedy order is not
 * complete: on random 4-CPU cases about 0.3% of the changes a search
 * could order this way are refused too.)
 * -EINVAL for invalid input (duplicate cgroup, bad path, empty new set
 * with a non-empty old one, target sets that overlap an exclusive one),
 * -ENOMEM.
 */
int np_cgroup_plan_build(struct np_cgroup_plan *plan,
			 const struct np_cgroup_change *changes, int n,
			 char *err, size_t errlen);
void np_cgroup_plan_free(struct np_cgroup_plan *plan);

const char *np_cgroup_why_name(enum np_cgroup_why why);
/* "S1 cpuset.cpus=0-1,4-7 (yield)"; returns the length (truncated). */
int np_cgroup_step_describe(const struct np_cgroup_plan *plan, int i, char *buf,
			    size_t len);

/*
 * Apply the plan in order; the cgroups must exist with +cpuset enabled
 * above them (np_cgroup_prepare).  A failing write does not stop the
 * others: the later steps of that cgroup are skipped (planned on a write
 * that did not happen), and so is any step that would give another cgroup
 * CPUs the failed one still holds (held back: exclusivity first); every
 * other step is applied. Returns the first failure's -errno, *failed_step
 * (may be NULL) = its index and err = "step 3/5 (W cpuset.cpus=2-3
 * (widen)): <why>" (plus how many steps were held back).  After each file's final
 * write the effective set is read back; if any differs, all steps are
 * still applied and NP_CGROUP_PARTIAL is returned, *failed_step = the
 * first such step.  0 and *failed_step = -1 when everything was granted.
 */
int np_cgroup_plan_apply(const struct np_cgroup_root *root,
			 const struct np_cgroup_plan *plan, int *failed_step,
			 char *err, size_t errlen);

#endif
