// SPDX-License-Identifier: Apache-2.0
/*
 * Cached cpuset reads for the reconcile cycle (see cgroup.h): per cgroup,
 * the open cpuset.cpus / cpuset.mems files and the identity of the
 * directory they are in. A cached read is fstatat + two pread; anything
 * unexpected (changed identity, failed read, unparsable or long content)
 * falls back to np_cgroup_inspect(), so results and messages are its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup_internal.h"

struct np_cgroup_cache_entry {
	int cpus_fd, mems_fd;
	dev_t dev;
	ino_t ino;
	unsigned gen;	/* generation of the last read */
	unsigned epoch; /* cache epoch when last checked */
	/* Last content read (parsed again when reused). */
	char *cpus_txt, *mems_txt;
};

/* Leave this many descriptors to everything else in the process. */
#define FD_HEADROOM 64

static struct np_cgroup_cache_entry *entry_get(struct np_cgroup_cache *c,
					       const char *cgroup)
{
	long v;
	return np_strmap_get(&c->ix, cgroup, &v)
		       ? (struct np_cgroup_cache_entry *)(intptr_t)v
		       : NULL;
}

static void entry_free(struct np_cgroup_cache *c,
		       struct np_cgroup_cache_entry *e)
{
	if (e->cpus_fd >= 0) {
		close(e->cpus_fd);
		c->nfds--;
	}
	if (e->mems_fd >= 0) {
		close(e->mems_fd);
		c->nfds--;
	}
	free(e->cpus_txt);
	free(e->mems_txt);
	free(e);
}

void np_cgroup_cache_forget(struct np_cgroup_cache *c, const char *cgroup)
{
	struct np_cgroup_cache_entry *e = entry_get(c, cgroup);

	if (!e)
		return;
	np_strmap_del(&c->ix, cgroup);
	entry_free(c, e);
}

void np_cgroup_cache_free(struct np_cgroup_cache *c)
{
	for (size_t i = 0; i < c->ix.cap; i++)
		if (c->ix.slot[i].key)
			entry_free(c, (struct np_cgroup_cache_entry *)(intptr_t)
					      c->ix.slot[i].value);
	np_strmap_free(&c->ix);
	np_strmap_free(&c->watch);
	c->nfds = 0;
	if (c->ifd > 0)
		close(c->ifd);
	c->ifd = 0;
}

/* Events that end a watch (or lost events): start over. */
#define WATCH_LOST (IN_IGNORED | IN_Q_OVERFLOW | IN_UNMOUNT | IN_DELETE_SELF | IN_MOVE_SELF)
#define WATCH_MASK                                                             \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | \
	 IN_MOVE_SELF | IN_ONLYDIR)

void np_cgroup_cache_next(struct np_cgroup_cache *c)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool lost = false, any = false;
	ssize_t n;

	c->gen++;
	if (c->ifd <= 0)
		return;
	while ((n = read(c->ifd, buf, sizeof(buf))) > 0) {
		any = true;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const void *)p;
			lost |= (ev->mask & WATCH_LOST) != 0;
			p += sizeof(*ev) + ev->len;
		}
	}
	if (n < 0 && errno != EAGAIN && errno != EINTR)
		lost = true;
	if (lost) {
		/* Close everything: reopened through checked walks. */
		np_cgroup_cache_free(c);
	} else if (any) {
		c->epoch++;
	}
}

/* Watch the directories above cgroup (the managed parent and each
 * ancestor below it); false when that is not possible. */
static bool watch_above(struct np_cgroup_cache *c,
			const struct np_cgroup_root *root, const char *cgroup)
{
	char prefix[NP_CGROUP_PATH_MAX];
	size_t len = 0;

	if (c->ifd == 0) {
		c->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (c->ifd == 0) { /* keep 0 meaning "not yet" */
			int fd = fcntl(0, F_DUPFD_CLOEXEC, 1);
			close(0);
			c->ifd = fd;
		}
		if (c->ifd < 0)
			c->ifd = -1;
	}
	if (c->ifd < 0 || strlen(cgroup) >= sizeof(prefix))
		return false;
	for (;;) {
		struct cg_dir d;
		char proc[64];
		int wd;

		memcpy(prefix, cgroup, len);
		prefix[len] = '\0';
		if (!np_strmap_get(&c->watch, prefix, NULL)) {
			if (cg_open(root, prefix, &d, NULL, 0))
				return false;
			/* The magic link is followed to the directory the
			 * checked walk opened. */
			snprintf(proc, sizeof(proc), "/proc/self/fd/%d", d.fd);
			wd = inotify_add_watch(c->ifd, proc, WATCH_MASK);
			cg_dir_close(&d);
			if (wd < 0 || np_strmap_put(&c->watch, prefix, wd))
				return false;
		}
		{
			const char *slash = strchr(cgroup + len + (len > 0), '/');
			if (!slash)
				return true;
			len = (size_t)(slash - cgroup);
		}
	}
}

/* Keep the last content; 0 or -ENOMEM. */
static int keep_text(char **slot, const char *txt)
{
	char *s;

	if (*slot && !strcmp(*slot, txt))
		return 0;
	if (!(s = strdup(txt)))
		return -ENOMEM;
	free(*slot);
	*slot = s;
	return 0;
}

static int parse(const struct np_cgroup_cache_entry *e, np_cpuset *cpus,
		 np_nodemask *mems)
{
	if (np_cpuset_parse(cpus, e->cpus_txt, NULL, 0) < 0 ||
	    np_nodemask_parse(mems, e->mems_txt, NULL, 0) < 0)
		return -EINVAL;
	return 0;
}

/* One pread of the whole file; -errno, or -EFBIG when it may be longer. */
static int pread_all(int fd, char *buf, size_t len)
{
	ssize_t n;

	do
		n = pread(fd, buf, len - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n >= len - 1)
		return -EFBIG;
	buf[n] = '\0';
	return 0;
}

/* The cached path: 0, or < 0 to take the slow one. */
static int cached_read(const struct np_cgroup_root *root,
		       struct np_cgroup_cache_entry *e, const char *cgroup,
		       unsigned gen, unsigned epoch, bool always,
		       np_cpuset *cpus, np_nodemask *mems)
{
	char a[512], b[256];
	struct stat sb;

	if (e->gen == gen)
		return parse(e, cpus, mems);
	if (e->epoch != epoch || always) {
		if (fstatat(root->parent_fd, cgroup, &sb, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISDIR(sb.st_mode) || sb.st_dev != e->dev ||
		    sb.st_ino != e->ino)
			return -ESTALE;
		e->epoch = epoch;
	}
	if (pread_all(e->cpus_fd, a, sizeof(a)) ||
	    pread_all(e->mems_fd, b, sizeof(b)) ||
	    keep_text(&e->cpus_txt, a) || keep_text(&e->mems_txt, b))
		return -ESTALE;
	if (parse(e, cpus, mems))
		return -EINVAL;
	e->gen = gen;
	return 0;
}

/* Reads leave atime alone (a fake tree on tmpfs would update it on each
 * read); O_NOATIME needs the file's owner or CAP_FOWNER. */
static int open_ro(int dirfd, const char *file)
{
	int fl = O_RDONLY | O_CLOEXEC | O_NOFOLLOW;
	int fd = openat(dirfd, file, fl | O_NOATIME);

	if (fd < 0 && errno == EPERM)
		fd = openat(dirfd, file, fl);
	return fd;
}

/* After a successful inspect: open the files (best effort). */
static void cache_open(struct np_cgroup_cache *c,
		       const struct np_cgroup_root *root, const char *cgroup,
		       const np_cpuset *cpus, np_nodemask mems)
{
	struct np_cgroup_cache_entry *e;
	struct cg_dir d;
	struct stat sb;
	char *t1, *t2, mb[256];

	if (!c->maxfds) {
		struct rlimit rl;
		c->maxfds = -1;
		if (!getrlimit(RLIMIT_NOFILE, &rl) &&
		    rl.rlim_cur > FD_HEADROOM + 2)
			c->maxfds = rl.rlim_cur == RLIM_INFINITY
					    ? INT32_MAX
					    : (int)(rl.rlim_cur > INT32_MAX
							    ? INT32_MAX
							    : rl.rlim_cur) -
						      FD_HEADROOM;
	}
	if (c->nfds + 2 > c->maxfds)
		return;
	/* Watches first: a change after them is seen by the next cycle. */
	if (!watch_above(c, root, cgroup) && c->ifd >= 0) {
		/* A directory that cannot be watched: check every read. */
		if (c->ifd > 0)
			close(c->ifd);
		c->ifd = -1;
	}
	if (cg_open(root, cgroup, &d, NULL, 0))
		return;
	e = calloc(1, sizeof(*e));
	if (!e) {
		cg_dir_close(&d);
		return;
	}
	e->cpus_fd = open_ro(d.fd, "cpuset.cpus");
	e->mems_fd = open_ro(d.fd, "cpuset.mems");
	c->nfds += (e->cpus_fd >= 0) + (e->mems_fd >= 0);
	/* np_cpuset_str's buffer is sized for any set: keep an exact copy. */
	t2 = np_cpuset_str(cpus);
	t1 = t2 ? strdup(t2) : NULL;
	free(t2);
	np_nodemask_format(mems, mb, sizeof(mb));
	t2 = strdup(mb);
	e->cpus_txt = t1;
	e->mems_txt = t2;
	if (e->cpus_fd < 0 || e->mems_fd < 0 || !t1 || !t2 ||
	    fstat(d.fd, &sb) || np_strmap_put(&c->ix, cgroup, (intptr_t)e)) {
		cg_dir_close(&d);
		entry_free(c, e);
		return;
	}
	e->dev = sb.st_dev;
	e->ino = sb.st_ino;
	e->gen = c->gen;
	e->epoch = c->epoch;
	cg_dir_close(&d);
}

int np_cgroup_read_cpuset(struct np_cgroup_cache *c,
			  const struct np_cgroup_root *root, const char *cgroup,
			  np_cpuset *cpus, np_nodemask *mems, char *err,
			  size_t errlen)
{
	struct np_cgroup_cache_entry *e = entry_get(c, cgroup);
	struct np_cgroup_state *st;
	int r;

	if (e && cached_read(root, e, cgroup, c->gen, c->epoch, c->ifd < 0,
			     cpus, mems) == 0)
		return 0;
	if (e)
		np_cgroup_cache_forget(c, cgroup);
	st = malloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	r = np_cgroup_inspect(root, cgroup, st, err, errlen);
	if (r == 0) {
		*cpus = st->cpus;
		*mems = st->mems;
		/* from the hierarchy root ("/x"): read each time (a
		 * container's cgroup, the runtime's; no watch above it) */
		if (*cgroup && *cgroup != '/')
			cache_open(c, root, cgroup, cpus, *mems);
	}
	free(st);
	return r;
}
