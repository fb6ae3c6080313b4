/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private helpers shared by the cgroup_*.c files (not part of the API):
 * messages, path joining, the O_NOFOLLOW directory walk and single-write
 * file I/O relative to directory fds.
 */
#ifndef NUMAPLACE_CGROUP_INTERNAL_H
#define NUMAPLACE_CGROUP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "numaplace/cgroup.h"
#include "numaplace/error.h"

/* Thread-safe strerror for messages (cgroup_errmsg.c). */
const char *cg_strerror(int errnum, char *buf, size_t len);

/* buf = a "/" b, skipping empty parts; -ENAMETOOLONG. */
int cg_join(char *buf, size_t len, const char *a, const char *b);
/* Display path for messages: root->path "/" rel (rel from the root). */
void cg_display(const struct np_cgroup_root *root, const char *rel, char *buf,
		size_t len);
/* The same from another base (root->top for a "/x" cgroup). */
void cg_display_at(const char *base, const char *rel, char *buf, size_t len);

/* A cgroup directory opened by cg_walk(). */
struct cg_dir {
	int fd;	       /* the cgroup */
	int parent_fd; /* its parent, -1 when the walk did not descend */
	/* parent_fd is the walk's start, the caller's (not closed) */
	bool parent_borrowed;
	/* the cgroup's device and inode, from the walk's last step (ino 0:
	 * not known, the walk did not descend) */
	dev_t dev;
	ino_t ino;
	char rel[NP_CGROUP_PATH_MAX];  /* relative to the hierarchy root */
	char disp[NP_CGROUP_PATH_MAX]; /* for messages */
	/* Not NULL (cg_open_files): fd is the managed parent (borrowed, not
	 * closed) and the cgroup is sub below it, its files each opened
	 * beneath fd in one system call (cg_open_beneath). */
	const char *sub;
};

#define CG_WALK_CREATE 0x1 /* mkdirat(0755) missing components */
#define CG_WALK_ENABLE 0x2 /* +cpuset in subtree_control above the target */
/* with CG_WALK_CREATE: mkdirat before the openat (a component expected
 * missing: one system call fewer when it is, one more when it is not) */
#define CG_WALK_MKDIR_FIRST 0x4

/* fd's mount id (statx STATX_MNT_ID), 0 when not known. */
uint64_t cg_mount_id(int fd);

/*
 * Walk rel (validated here) from startfd, whose path relative to the
 * hierarchy root is start, one component at a time with
 * openat(O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC).  Symlinks give -ELOOP.
 */
int cg_walk(const struct np_cgroup_root *root, int startfd, const char *start,
	    const char *rel, unsigned int flags, struct cg_dir *d, char *err,
	    size_t errlen);
/* Open cgroup, relative to the managed parent, without side effects. */
int cg_open(const struct np_cgroup_root *root, const char *cgroup,
	    struct cg_dir *d, char *err, size_t errlen);
void cg_dir_close(struct cg_dir *d);
/*
 * For the cgroup's own files (cgroup relative to the managed parent): d
 * names the parent and the cgroup below it (d->sub), no system call; its
 * files are then each opened beneath the parent in one (openat2: no
 * symlink, no mount crossed, nothing outside it), the checks cg_open's
 * walk makes component by component. Without openat2, or for a name from
 * the hierarchy root, cg_open.
 */
int cg_open_files(const struct np_cgroup_root *root, const char *cgroup,
		  struct cg_dir *d, char *err, size_t errlen);
/* file of d, opened with flags (O_CLOEXEC | O_NOFOLLOW added): the fd or
 * -errno. */
int cg_dir_openat(int dirfd, const char *sub, const char *file, int flags);

/* Read a whole (small) file at dirfd into a malloc'd string; -errno. */
int cg_read(int dirfd, const char *file, char **out);
/* Of sub's file below dirfd (sub NULL: of dirfd's), as cg_dir_openat. */
int cg_read_in(int dirfd, const char *sub, const char *file, char **out);
/* Same, with "cannot read X/file: ..." in err on failure. */
int cg_read_msg(int dirfd, const char *disp, const char *file, char **out,
		char *err, size_t errlen);
/* Parse a cpu / node list file of d. */
int cg_read_cpus(const struct cg_dir *d, const char *file, np_cpuset *s,
		 char *err, size_t errlen);
int cg_read_mems(const struct cg_dir *d, const char *file, np_nodemask *m,
		 char *err, size_t errlen);

/*
 * One open(O_WRONLY|O_CLOEXEC|O_NOFOLLOW) + one write() of value (an empty
 * value is written as "\n") to file in dirfd; np_cgroup_errmsg() on
 * failure; root->on_write on success.
 */
int cg_write(const struct np_cgroup_root *root, int dirfd, const char *rel,
	     const char *disp, const char *file, const char *value, char *err,
	     size_t errlen);
/* The same of d's file; 1 (no message) when d->sub's file could not be
 * opened beneath the parent: the caller walks (cg_open) and writes. */
int cg_write_in(const struct np_cgroup_root *root, const struct cg_dir *d,
		const char *file, const char *value, char *err, size_t errlen);

/* Whitespace-separated word present in s. */
bool cg_has_word(const char *s, const char *word);

/* Lists for messages; truncated with "..." when they do not fit. */
void cg_fmt_cpus(const np_cpuset *s, char *buf, size_t len);
void cg_fmt_mems(np_nodemask m, char *buf, size_t len);

/*
 * Write cpuset.cpus (file == NP_CGROUP_CPUS, from *cpus; text: *cpus
 * formatted already, or NULL) or cpuset.mems (from mems) of cgroup; with
 * readback compare the .effective file: 0 / NP_CGROUP_PARTIAL / -errno as
 * np_cgroup_write_cpus().
 */
int cg_write_set(const struct np_cgroup_root *root, const char *cgroup,
		 enum np_cgroup_file file, const np_cpuset *cpus,
		 const char *text, np_nodemask mems, bool readback,
		 np_cpuset *granted_cpus,
		 np_nodemask *granted_mems, char *err, size_t errlen);

#endif
