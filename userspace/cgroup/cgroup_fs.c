// SPDX-License-Identifier: Apache-2.0
/*
 * cgroupfs access: path validation, the component-by-component O_NOFOLLOW
 * walk from a directory fd (creating cgroups and enabling +cpuset on the
 * way), and single-write file I/O.  No absolute path is ever built for a
 * write; absolute strings exist only in messages.
 */
#include "cgroup_internal.h"
#include "basic/fileio.h"
#include "numaplace/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define READ_MAX (1 << 20) /* cgroupfs files we read are far smaller */

int cg_join(char *buf, size_t len, const char *a, const char *b)
{
	int n;

	a = a ? a : "";
	b = b ? b : "";
	n = snprintf(buf, len, "%s%s%s", a, *a && *b ? "/" : "", b);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

void cg_display_at(const char *base, const char *rel, char *buf, size_t len)
{
	size_t rl = strlen(base);

	/* "/" + "a" must not become "//a" */
	if (rl && base[rl - 1] == '/')
		rl--;
	snprintf(buf, len, "%.*s%s%s", (int)rl, base, *rel ? "/" : "", rel);
}

void cg_display(const struct np_cgroup_root *root, const char *rel, char *buf,
		size_t len)
{
	cg_display_at(root->path, rel, buf, len);
}

int np_cgroup_path_check(const char *cgroup, char *err, size_t errlen)
{
	const char *p = cgroup;

	if (!cgroup) {
		np_errmsg(err, errlen, "cgroup path is NULL");
		return -EINVAL;
	}
	if (!*cgroup) {
		np_errmsg(err, errlen, "cgroup path is empty");
		return -EINVAL;
	}
	if (strlen(cgroup) >= NP_CGROUP_PATH_MAX) {
		np_errmsg(err, errlen, "cgroup path '%.64s...' is longer than %d",
		       cgroup, NP_CGROUP_PATH_MAX - 1);
		return -ENAMETOOLONG;
	}
	if (*p == '/') {
		np_errmsg(
		    err, errlen,
		    "cgroup path '%s' is absolute; cgroup paths are relative "
		    "to the managed parent",
		    cgroup);
		return -EINVAL;
	}
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 0) {
			np_errmsg(err, errlen,
			       "cgroup path '%s' has an empty component",
			       cgroup);
			return -EINVAL;
		}
		if ((n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.')) {
			np_errmsg(err, errlen,
			       "cgroup path '%s': '%.*s' components are not "
			       "allowed",
			       cgroup, (int)n, p);
			return -EINVAL;
		}
		if (n > NAME_MAX) {
			np_errmsg(
			    err, errlen,
			    "cgroup path '%s': component '%.32s...' is longer "
			    "than %d",
			    cgroup, p, NAME_MAX);
			return -ENAMETOOLONG;
		}
		p += n;
		if (*p == '/') {
			p++;
			if (!*p) {
				np_errmsg(err, errlen,
				       "cgroup path '%s' ends with '/'",
				       cgroup);
				return -EINVAL;
			}
		}
	}
	return 0;
}

bool cg_has_word(const char *s, const char *word)
{
	size_t wl = strlen(word);

	while (s && *s) {
		size_t n;

		s += strspn(s, " \t\n");
		n = strcspn(s, " \t\n");
		if (n == wl && !strncmp(s, word, wl))
			return true;
		s += n;
	}
	return false;
}

/*
 * One read() for the common case: cgroupfs gives a file's whole text in
 * one read when it fits (a single seq_file record: every cpuset.*,
 * cgroup.subtree_control and cgroup.controllers), and a plain file in a
 * fake tree ends where a read comes short. Not for files of many records
 * (cgroup.procs, cgroup.threads), whose reads may stop before the end. Only a text of 4 KiB or more
 * is read again from the start, to the end (no fstat, no read for EOF:
 * 3 system calls where the general reader makes 5; a first cycle reads
 * two effective sets and a subtree_control per new cgroup).
 */
int cg_read(int dirfd, const char *file, char **out)
{
	return cg_read_in(dirfd, NULL, file, out);
}

/* openat2 (Linux 5.6+): 0 not known yet, 1 there, -1 not there */
static int beneath_ok;

int cg_dir_openat(int dirfd, const char *sub, const char *file, int flags)
{
	struct open_how how = {
	    .flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
		       RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	char path[NP_CGROUP_PATH_MAX + NAME_MAX + 2];
	long fd;

	if (!sub) {
		fd = openat(dirfd, file, flags | O_CLOEXEC | O_NOFOLLOW);
		return fd < 0 ? -errno : (int)fd;
	}
	if (beneath_ok < 0)
		return -ENOSYS;
	if (snprintf(path, sizeof(path), "%s/%s", sub, file) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (fd < 0) {
		if (errno == ENOSYS)
			beneath_ok = -1;
		return -errno;
	}
	beneath_ok = 1;
	return (int)fd;
}

int cg_open_files(const struct np_cgroup_root *root, const char *cgroup,
		  struct cg_dir *d, char *err, size_t errlen)
{
	if (beneath_ok < 0 || root->root_fd < 0 || root->parent_fd < 0 ||
	    !cgroup || !*cgroup || *cgroup == '/' ||
	    np_cgroup_path_check(cgroup, NULL, 0) ||
	    cg_join(d->rel, sizeof(d->rel), root->parent, cgroup))
		return cg_open(root, cgroup, d, err, errlen);
	d->fd = root->parent_fd;
	d->sub = cgroup;
	d->parent_fd = -1;
	d->parent_borrowed = false;
	d->dev = 0;
	d->ino = 0;
	cg_display(root, d->rel, d->disp, sizeof(d->disp));
	return 0;
}

int cg_read_in(int dirfd, const char *sub, const char *file, char **out)
{
	_cleanup_close_ int fd = -1;
	char buf[4096];
	ssize_t n;

	*out = NULL;
	fd = cg_dir_openat(dirfd, sub, file, O_RDONLY);
	if (fd < 0)
		return fd;
	do
		n = read(fd, buf, sizeof(buf));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n < sizeof(buf)) {
		if (!(*out = malloc((size_t)n + 1)))
			return -ENOMEM;
		memcpy(*out, buf, (size_t)n);
		(*out)[n] = '\0';
		return 0;
	}
	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	return np_read_fd(fd, READ_MAX, out, NULL);
}

static int read_msg_in(int dirfd, const char *sub, const char *disp,
		       const char *file, char **out, char *err, size_t errlen)
{
	char eb[128];
	int r = cg_read_in(dirfd, sub, file, out);

	if (r < 0)
		np_errmsg(err, errlen, "cannot read %s/%s: %s", disp, file,
		       cg_strerror(r, eb, sizeof(eb)));
	return r;
}

int cg_read_msg(int dirfd, const char *disp, const char *file, char **out,
		char *err, size_t errlen)
{
	return read_msg_in(dirfd, NULL, disp, file, out, err, errlen);
}

int cg_read_cpus(const struct cg_dir *d, const char *file, np_cpuset *s,
		 char *err, size_t errlen)
{
	char pe[160], *txt = NULL;
	int r;

	r = read_msg_in(d->fd, d->sub, d->disp, file, &txt, err, errlen);
	if (r < 0)
		return r;
	r = np_cpuset_parse(s, txt, pe, sizeof(pe));
	if (r < 0)
		np_errmsg(err, errlen, "%s/%s: cannot parse its content: %s",
		       d->disp, file, pe);
	free(txt);
	return r;
}

int cg_read_mems(const struct cg_dir *d, const char *file, np_nodemask *m,
		 char *err, size_t errlen)
{
	char pe[160], *txt = NULL;
	int r;

	r = read_msg_in(d->fd, d->sub, d->disp, file, &txt, err, errlen);
	if (r < 0)
		return r;
	r = np_nodemask_parse(m, txt, pe, sizeof(pe));
	if (r < 0)
		np_errmsg(err, errlen, "%s/%s: cannot parse its content: %s",
		       d->disp, file, pe);
	free(txt);
	return r;
}

/* The mode of a fake tree's effective file that mirrors the written
 * value (made so by fake_populate, or by a first mirroring): its owner
 * execute bit, which a file made by open() or fopen() (0666 and the
 * umask) never has. A test's own content is kept. */
#define FAKE_MIRROR_MODE 0744

/* A fake tree's effective file: the written value, rewritten in place
 * (cut to its length: tmpfs keeps the file's page). */
static void fake_mirror_effective(int dirfd, const char *sub, const char *file,
				  const char *v)
{
	char eff[64], old[256] = "";
	size_t len = strlen(v);
	struct stat st;
	bool mirrored;
	ssize_t n;
	int fd;

	snprintf(eff, sizeof(eff), "%s.effective", file);
	fd = cg_dir_openat(dirfd, sub, eff, O_RDWR);
	if (fd < 0)
		return;
	if (fstat(fd, &st))
		st.st_mode = 0, st.st_size = -1; /* cut to length below */
	mirrored = st.st_mode & S_IXUSR;
	if (!mirrored) {
		/* filled by a test, not by an earlier mirroring: keep it */
		n = pread(fd, old, sizeof(old) - 1, 0);
		if (n > 0 && old[0] != '\n') {
			close(fd);
			return;
		}
	}
	/* cut to length only when it was longer (a first write: empty) */
	if (pwrite(fd, v, len, 0) == (ssize_t)len &&
	    (st.st_size < 0 || st.st_size > (off_t)len))
		(void)!ftruncate(fd, (off_t)len);
	if (!mirrored)
		(void)!fchmod(fd, FAKE_MIRROR_MODE);
	close(fd);
}

/* cg_write of sub's file below dirfd (sub NULL: dirfd's); 1 when sub's
 * could not be opened (cg_write_in). */
static int write_at(const struct np_cgroup_root *root, int dirfd,
		    const char *sub, const char *rel, const char *disp,
		    const char *file, const char *value, char *err,
		    size_t errlen)
{
	/* A fake tree holds plain files: truncate so a shorter value does
	 * not leave the tail of the old one.  Real cgroupfs: as specified. */
	int flags = O_WRONLY | (root->fake ? O_TRUNC : 0);
	/* A zero-length write() may never reach the kernfs handler. */
	const char *buf = *value ? value : "\n";
	size_t len = strlen(buf);
	ssize_t n;
	int fd, r = 0;

	fd = cg_dir_openat(dirfd, sub, file, flags);
	if (fd < 0 && sub)
		return 1; /* the caller walks */
	if (fd < 0) {
		r = fd;
		np_cgroup_errmsg(err, errlen, r, disp, file, value);
		return r;
	}
	n = write(fd, buf, len);
	if (n < 0) {
		r = -errno;
		np_cgroup_errmsg(err, errlen, r, disp, file, value);
	} else if ((size_t)n != len) {
		r = -EIO;
		np_errmsg(err, errlen,
		       "short write of '%s' to %s/%s: %zd of %zu bytes", value,
		       disp, file, n, len);
	}
	if (close(fd) < 0 && r == 0) {
		r = -errno;
		np_cgroup_errmsg(err, errlen, r, disp, file, value);
	}
	/* A fake tree has no kernel to compute the effective set: mirror the
	 * written value when the effective file is empty or was mirrored
	 * before (tests that pre-fill it keep their content). */
	if (r == 0 && root->fake &&
	    (!strcmp(file, "cpuset.cpus") || !strcmp(file, "cpuset.mems")))
		fake_mirror_effective(dirfd, sub, file, buf);
	if (r == 0 && root->on_write)
		root->on_write(root->on_write_arg, rel, file, value);
	return r;
}

int cg_write(const struct np_cgroup_root *root, int dirfd, const char *rel,
	     const char *disp, const char *file, const char *value, char *err,
	     size_t errlen)
{
	return write_at(root, dirfd, NULL, rel, disp, file, value, err, errlen);
}

int cg_write_in(const struct np_cgroup_root *root, const struct cg_dir *d,
		const char *file, const char *value, char *err, size_t errlen)
{
	return write_at(root, d->fd, d->sub, d->rel, d->disp, file, value, err,
			errlen);
}

void cg_fmt_cpus(const np_cpuset *s, char *buf, size_t len)
{
	char *all;

	if (np_cpuset_format(s, buf, len) >= 0)
		return;
	all = np_cpuset_str(s);
	if (!all || len < 4) {
		snprintf(buf, len, "?");
	} else {
		snprintf(buf, len, "%.*s...", (int)(len - 4), all);
	}
	free(all);
}

void cg_fmt_mems(np_nodemask m, char *buf, size_t len)
{
	if (np_nodemask_format(m, buf, len) < 0)
		snprintf(buf, len, "?");
}

/* Populate a directory created in a fake tree with the interface files
 * the kernel creates for every cgroup, and the cpuset files it creates once
 * the parent enables +cpuset (prepare always does, before creating). */
static int fake_populate(int fd, const char *disp, char *err, size_t errlen)
{
	static const char *const files[] = {
	    "cgroup.controllers",	"cgroup.subtree_control",
	    "cgroup.procs",		"cpuset.cpus",
	    "cpuset.mems",		"cpuset.cpus.effective",
	    "cpuset.mems.effective",	"cpu.max",
	};
	char eb[128];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		/* one system call per file: mknod of a regular file (the
		 * effective ones mirror what is written: their mode says so) */
		mode_t mode = strstr(files[i], ".effective") ? FAKE_MIRROR_MODE
							     : 0644;
		if (mknodat(fd, files[i], S_IFREG | mode, 0) &&
		    errno != EEXIST) {
			int r = -errno;

			np_errmsg(err, errlen,
			       "fake tree: cannot create %s/%s: %s", disp,
			       files[i], cg_strerror(r, eb, sizeof(eb)));
			return r;
		}
	}
	return 0;
}

/* A subtree_control's text passes cpuset to the children.  A plain-file
 * tree (the fake root, the tests' trees) keeps what was written: there
 * "+cpuset" reads back as such. */
static bool subtree_has_cpuset(const char *txt)
{
	return cg_has_word(txt, "cpuset") || cg_has_word(txt, "+cpuset");
}

/* "+cpuset" into dirfd's cgroup.subtree_control unless already enabled. */
static int enable_cpuset(const struct np_cgroup_root *root, int dirfd,
			 const char *rel, char *err, size_t errlen)
{
	char disp[NP_CGROUP_PATH_MAX], eb[128], *txt = NULL;
	int r;

	cg_display(root, rel, disp, sizeof(disp));
	r = cg_read(dirfd, "cgroup.subtree_control", &txt);
	if (r == -ENOENT) {
		np_errmsg(err, errlen,
		       "%s is not a cgroup: no cgroup.subtree_control (cannot "
		       "write '+cpuset')",
		       disp);
		return r;
	}
	if (r < 0) {
		np_errmsg(err, errlen, "cannot read %s/cgroup.subtree_control: %s",
		       disp, cg_strerror(r, eb, sizeof(eb)));
		return r;
	}
	if (!subtree_has_cpuset(txt))
		r = cg_write(root, dirfd, rel, disp, "cgroup.subtree_control",
			     "+cpuset", err, errlen);
	free(txt);
	return r;
}

void cg_dir_close(struct cg_dir *d)
{
	if (d->fd >= 0 && !d->sub)
		close(d->fd);
	d->sub = NULL;
	if (d->parent_fd >= 0 && !d->parent_borrowed)
		close(d->parent_fd);
	d->fd = d->parent_fd = -1;
	d->parent_borrowed = false;
}

/* Explain a failed openat() of component comp below dirfd (path cur). */
static int walk_error(const char *base, int dirfd, const char *cur,
		      const char *comp, const char *rel, int r, char *err,
		      size_t errlen)
{
	char disp[NP_CGROUP_PATH_MAX], eb[128];
	struct stat st;

	cg_display_at(base, cur, disp, sizeof(disp));
	/* O_DIRECTORY|O_NOFOLLOW on a symlink fails with ENOTDIR (ELOOP
	 * without O_DIRECTORY): say what it really is. */
	if ((r == -ENOTDIR || r == -ELOOP) &&
	    fstatat(dirfd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode)) {
		np_errmsg(err, errlen,
		       "refusing to follow symlink '%s' in %s (cgroup path "
		       "'%s'): cgroup paths must not contain symlinks",
		       comp, disp, rel);
		return -ELOOP;
	}
	if (r == -ENOENT)
		np_errmsg(err, errlen, "cgroup %s%s%s does not exist", disp,
		       *disp ? "/" : "", comp);
	else if (r == -ENOTDIR)
		np_errmsg(err, errlen,
		       "%s/%s is not a directory (cgroup path '%s')", disp,
		       comp, rel);
	else
		np_errmsg(err, errlen, "cannot open cgroup %s/%s: %s", disp, comp,
		       cg_strerror(r, eb, sizeof(eb)));
	return r;
}

/* The mount fd is on; 0 when statx cannot tell (then nothing is
 * compared). With d, also fd's device and inode into d->dev and d->ino
 * (ino 0: not known). */
static uint64_t mount_id(int fd, struct cg_dir *d)
{
	struct statx x;

	if (d) { /* nothing of an earlier component's left */
		d->dev = 0;
		d->ino = 0;
	}
	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID | STATX_INO, &x))
		return 0;
	if (d && (x.stx_mask & STATX_INO)) {
		d->dev = makedev(x.stx_dev_major, x.stx_dev_minor);
		d->ino = x.stx_ino;
	}
	return x.stx_mask & STATX_MNT_ID ? x.stx_mnt_id : 0;
}

uint64_t cg_mount_id(int fd)
{
	return mount_id(fd, NULL);
}

/* Open (with CG_WALK_CREATE: create first) component comp below fd (cur,
 * shown from base). */
static int walk_step(const char *base, int fd, const char *cur,
		     const char *comp, const char *rel, unsigned int flags,
		     bool *created, char *err, size_t errlen)
{
	const int of = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	char eb[128];
	/* expected missing: made first (EEXIST: opened as it is) */
	bool first = (flags & (CG_WALK_CREATE | CG_WALK_MKDIR_FIRST)) ==
		     (CG_WALK_CREATE | CG_WALK_MKDIR_FIRST);
	int nfd = first ? -1 : openat(fd, comp, of);

	*created = false;
	if (first)
		errno = ENOENT;
	if (nfd < 0 && errno == ENOENT && (flags & CG_WALK_CREATE)) {
		if (mkdirat(fd, comp, 0755) == 0) {
			*created = true;
		} else if (errno != EEXIST) {
			char disp[NP_CGROUP_PATH_MAX];
			int r = -errno;

			cg_display_at(base, cur, disp, sizeof(disp));
			np_errmsg(err, errlen, "cannot create cgroup %s/%s: %s",
				  disp, comp, cg_strerror(r, eb, sizeof(eb)));
			return r;
		}
		nfd = openat(fd, comp, of);
	}
	if (nfd < 0)
		return walk_error(base, fd, cur, comp, rel, -errno, err,
				  errlen);
	return nfd;
}

/* A descriptor of the walk's own: fd itself, or a duplicate of the
 * caller's (borrowed) one. */
static int own_fd(int fd, bool own, char *err, size_t errlen)
{
	char eb[128];
	int r;

	if (fd < 0 || own)
		return fd;
	if ((r = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
		r = -errno;
		np_errmsg(err, errlen, "cannot dup the cgroup directory fd: %s",
			  cg_strerror(r, eb, sizeof(eb)));
	}
	return r;
}

int cg_walk(const struct np_cgroup_root *root, int startfd, const char *start,
	    const char *rel, unsigned int flags, struct cg_dir *d, char *err,
	    size_t errlen)
{
	char comp[NAME_MAX + 1];
	const char *p = rel;
	/* startfd is the caller's: duplicated only if the walk ends on it
	 * (a parent that is the start stays borrowed: parent_borrowed) */
	int fd = startfd, pfd = -1, r;
	bool fd_own = false, pfd_own = false;
	uint64_t mnt = 0;
	/* messages name a "/x" cgroup from the hierarchy's root */
	const char *base = startfd == root->top_fd ? root->top : root->path;

	d->fd = d->parent_fd = -1;
	d->parent_borrowed = false;
	d->sub = NULL;
	d->dev = 0;
	d->ino = 0;
	if (*rel) {
		r = np_cgroup_path_check(rel, err, errlen);
		if (r < 0)
			return r;
		mnt = startfd == root->parent_fd && root->parent_mnt
			      ? root->parent_mnt
			      : mount_id(startfd, NULL);
	}
	if (snprintf(d->rel, sizeof(d->rel), "%s", start) >=
	    (int)sizeof(d->rel)) {
		np_errmsg(err, errlen, "cgroup path '%s' too long", start);
		return -ENAMETOOLONG;
	}
	while (*p) {
		size_t n = strcspn(p, "/");
		bool created;
		uint64_t m;
		int nfd;

		memcpy(comp, p, n); /* n <= NAME_MAX: checked above */
		comp[n] = '\0';
		p += n + (p[n] == '/');

		if (flags & CG_WALK_ENABLE) {
			r = enable_cpuset(root, fd, d->rel, err, errlen);
			if (r < 0)
				goto fail;
		}
		nfd = r = walk_step(base, fd, d->rel, comp, rel, flags,
				    &created, err, errlen);
		if (r < 0)
			goto fail;
		/* O_NOFOLLOW stops symlinks, not bind mounts: a component on
		 * another mount than its parent leads out of the tree. */
		m = mount_id(nfd, d);
		if (mnt && m && m != mnt) {
			char disp[NP_CGROUP_PATH_MAX];
			close(nfd);
			cg_display_at(base, d->rel, disp, sizeof(disp));
			np_errmsg(err, errlen,
				  "cgroup path %s/%s is a mount point (a bind "
				  "mount?): refusing to follow it out of the "
				  "managed tree",
				  disp, comp);
			r = -EXDEV;
			goto fail;
		}
		mnt = m;
		if (pfd_own)
			close(pfd);
		pfd = fd;
		pfd_own = fd_own;
		fd = nfd;
		fd_own = true;
		{
			char next[NP_CGROUP_PATH_MAX];

			r = cg_join(next, sizeof(next), d->rel, comp);
			if (r < 0) {
				np_errmsg(err, errlen,
				       "cgroup path '%s/%s' too long", d->rel,
				       comp);
				goto fail;
			}
			memcpy(d->rel, next, sizeof(next));
		}
		if (created && root->fake) {
			char disp[NP_CGROUP_PATH_MAX];

			cg_display_at(base, d->rel, disp, sizeof(disp));
			r = fake_populate(fd, disp, err, errlen);
			if (r < 0)
				goto fail;
		}
	}
	if ((r = own_fd(fd, fd_own, err, errlen)) < 0)
		goto fail;
	fd = r;
	d->fd = fd;
	d->parent_fd = pfd;
	d->parent_borrowed = pfd >= 0 && !pfd_own;
	cg_display_at(base, d->rel, d->disp, sizeof(d->disp));
	return 0;
fail:
	if (fd_own)
		close(fd);
	if (pfd_own)
		close(pfd);
	return r;
}

int cg_open(const struct np_cgroup_root *root, const char *cgroup,
	    struct cg_dir *d, char *err, size_t errlen)
{
	if (root->root_fd < 0 || root->parent_fd < 0) {
		np_errmsg(err, errlen, "cgroup root is not open");
		return -EBADF;
	}
	if (!cgroup) {
		np_errmsg(err, errlen, "cgroup path is NULL");
		return -EINVAL;
	}
	/* The managed parent itself: walk from the root so that its parent
	 * directory is open too (for read-back messages). */
	if (!*cgroup)
		return cg_walk(root, root->root_fd, "", root->parent, 0, d, err,
			       errlen);
	/* "/a/b": from the hierarchy root (a container's cgroup) */
	if (*cgroup == '/')
		return cg_walk(root, root->top_fd, "", cgroup + 1, 0, d, err,
			       errlen);
	return cg_walk(root, root->parent_fd, root->parent, cgroup, 0, d, err,
		       errlen);
}

/*
 * The common case of np_cgroup_prepare (cgroup checked): the cgroup's
 * parent exists and passes cpuset to its children already.  Then every
 * directory above does too (the kernel enables a controller in a
 * subtree_control only where the parent passes it down), so nothing is
 * written but the leaf's mkdir: no dry run, no walk from the root, no
 * subtree_control read above the parent.  1 when this is not the case
 * (or cannot be told): the caller takes the full path.
 */
static int prepare_leaf(const struct np_cgroup_root *root, const char *cgroup,
			unsigned int flags, char *err, size_t errlen)
{
	const char *slash = strrchr(cgroup, '/');
	struct cg_dir p = {.fd = -1, .parent_fd = -1}, d;
	char prefix[NP_CGROUP_PATH_MAX], *txt = NULL;
	int pfd = root->parent_fd, r;
	bool on;

	if (slash) {
		size_t n = (size_t)(slash - cgroup);

		if (n >= sizeof(prefix))
			return 1;
		memcpy(prefix, cgroup, n);
		prefix[n] = '\0';
		if (cg_walk(root, root->parent_fd, root->parent, prefix, 0, &p,
			    NULL, 0))
			return 1;
		pfd = p.fd;
	}
	/* the managed parent's, read once a cycle (root->parent_passes) */
	on = !slash && root->parent_passes && *root->parent_passes;
	if (!on) {
		on = cg_read(pfd, "cgroup.subtree_control", &txt) >= 0 &&
		     subtree_has_cpuset(txt);
		free(txt);
		if (on && !slash && root->parent_passes)
			*root->parent_passes = true;
	}
	if (!on) {
		cg_dir_close(&p);
		return 1;
	}
	/* the leaf: prepared with NP_CGROUP_CREATE when it is missing (a
	 * read found no cgroup, or its workload's is pending) */
	r = cg_walk(root, pfd, slash ? p.rel : root->parent,
		    slash ? slash + 1 : cgroup,
		    flags & NP_CGROUP_CREATE
			    ? CG_WALK_CREATE | CG_WALK_MKDIR_FIRST
			    : 0,
		    &d, err, errlen);
	if (r == 0)
		cg_dir_close(&d);
	cg_dir_close(&p);
	return r;
}

int np_cgroup_prepare(const struct np_cgroup_root *root, const char *cgroup,
		      unsigned int flags, char *err, size_t errlen)
{
	char rel[NP_CGROUP_PATH_MAX];
	struct cg_dir d;
	unsigned int wf = CG_WALK_ENABLE;
	int r;

	if (root->root_fd < 0 || root->parent_fd < 0) {
		np_errmsg(err, errlen, "cgroup root is not open");
		return -EBADF;
	}
	if (flags & ~NP_CGROUP_CREATE) {
		np_errmsg(err, errlen, "unknown prepare flags 0x%x", flags);
		return -EINVAL;
	}
	r = np_cgroup_path_check(cgroup, err, errlen);
	if (r < 0)
		return r;
	/* root->parent and cgroup are both validated relative paths; the
	 * joined string is only walked component by component.  Checked
	 * before anything is made (the short path too). */
	r = cg_join(rel, sizeof(rel), root->parent, cgroup);
	if (r < 0) {
		np_errmsg(err, errlen, "cgroup path '%s/%s' too long",
		       root->parent, cgroup);
		return r;
	}
	if ((r = prepare_leaf(root, cgroup, flags, err, errlen)) <= 0)
		return r;
	if (flags & NP_CGROUP_CREATE)
		wf |= CG_WALK_CREATE;
	/* Dry run first, so that a refused path (symlink, not a directory)
	 * leaves no +cpuset writes behind; with NP_CGROUP_CREATE the walk
	 * may stop at the first missing component, all below it will be
	 * ours.  The real walk below re-checks everything (O_NOFOLLOW). */
	r = cg_walk(root, root->root_fd, "", rel, 0, &d, err, errlen);
	if (r == 0)
		cg_dir_close(&d);
	else if (!(r == -ENOENT && (flags & NP_CGROUP_CREATE)))
		return r;
	r = cg_walk(root, root->root_fd, "", rel, wf, &d, err, errlen);
	if (r < 0)
		return r;
	cg_dir_close(&d);
	return 0;
}
