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
#include <time.h>
#include <unistd.h>

#include "cgroup_internal.h"

struct np_cgroup_cache_entry {
	int cpus_fd, mems_fd;
	/* IN_MODIFY watches on both files (-1: none): while neither fired
	 * since the last read, the content read then is still the file's */
	int wd_cpus, wd_mems;
	/* each file written since the last read (its watch fired): only
	 * that one is read again, the other holds what was read (a shared
	 * pool's change writes cpuset.cpus alone: half the reads) */
	bool dirty_cpus, dirty_mems;
	dev_t dev;
	ino_t ino;
	unsigned gen;	/* generation of the last read */
	unsigned epoch; /* cache epoch when last checked */
	/* a directory on its path lost or got an entry of its name: its
	 * identity is checked at the next read */
	bool recheck;
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

/* "wd" -> entry, for the file watches */
static void wd_key(int wd, char *key, size_t len)
{
	snprintf(key, len, "%d", wd);
}

static void unwatch_file(struct np_cgroup_cache *c, int *wd)
{
	char key[16];

	if (*wd < 0)
		return;
	wd_key(*wd, key, sizeof(key));
	np_strmap_del(&c->fwatch, key);
	if (c->ifd > 0)
		inotify_rm_watch(c->ifd, *wd);
	*wd = -1;
}

static void entry_free(struct np_cgroup_cache *c,
		       struct np_cgroup_cache_entry *e)
{
	unwatch_file(c, &e->wd_cpus);
	unwatch_file(c, &e->wd_mems);
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

/* Every entry and watch gone; the inotify instance closed unless it is
 * the owner's (then only emptied, to be used again). */
static void drop_all(struct np_cgroup_cache *c)
{
	for (size_t i = 0; i < c->ix.cap; i++)
		if (np_strmap_key_at(&c->ix, i))
			entry_free(c, (struct np_cgroup_cache_entry *)(intptr_t)
					      np_strmap_value_at(&c->ix, i));
	for (size_t i = 0; c->lent && c->ifd > 0 && i < c->watch.cap; i++)
		if (np_strmap_key_at(&c->watch, i))
			inotify_rm_watch(c->ifd,
					 (int)np_strmap_value_at(&c->watch, i));
	np_strmap_free(&c->ix);
	np_strmap_free(&c->watch);
	np_strmap_free(&c->dwatch);
	np_strmap_free(&c->fwatch);
	c->nfds = 0;
	if (c->cwd_tried && c->cwd_fd >= 0)
		close(c->cwd_fd);
	c->cwd_tried = false;
	if (!c->lent) {
		if (c->ifd > 0)
			close(c->ifd);
		c->ifd = 0;
	}
}

void np_cgroup_cache_free(struct np_cgroup_cache *c)
{
	drop_all(c);
	c->blind = false;
}

void np_cgroup_cache_use_fd(struct np_cgroup_cache *c, int fd)
{
	drop_all(c);
	c->ifd = fd > 0 ? fd : -1;
	c->lent = fd > 0;
}

/* Events that end a watch (or lost events): start over. */
#define WATCH_LOST (IN_IGNORED | IN_Q_OVERFLOW | IN_UNMOUNT | IN_DELETE_SELF | IN_MOVE_SELF)
#define WATCH_MASK                                                             \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | \
	 IN_MOVE_SELF | IN_ONLYDIR)

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* An event of a file watch: its entry is read again (a write, or the
 * watch ended with the file). false: not a file watch. */
static bool file_event(struct np_cgroup_cache *c,
		       const struct inotify_event *ev)
{
	struct np_cgroup_cache_entry *e;
	char key[16];
	long v;

	if (ev->wd < 0)
		return false;
	wd_key(ev->wd, key, sizeof(key));
	if (!np_strmap_get(&c->fwatch, key, &v))
		return false;
	e = (struct np_cgroup_cache_entry *)(intptr_t)v;
	/* a watch of neither file (cannot be): both read again */
	e->dirty_cpus |= ev->wd == e->wd_cpus || ev->wd != e->wd_mems;
	e->dirty_mems |= ev->wd == e->wd_mems || ev->wd != e->wd_cpus;
	if (ev->mask & IN_IGNORED) { /* the kernel removed the watch */
		np_strmap_del(&c->fwatch, key);
		if (e->wd_cpus == ev->wd)
			e->wd_cpus = -1;
		if (e->wd_mems == ev->wd)
			e->wd_mems = -1;
	}
	return true;
}

/* Named directory events taken one by one in a drain (each scans the
 * cache); beyond, the epoch moves (every cached cgroup checked). */
#define NAMED_MAX 64

/* The name of a directory event (removed or renamed): the cgroups with
 * a path component of that name are checked at their next read (in any
 * watched directory: a name elsewhere costs a check, nothing more).
 * false: the event has no name. */
static bool named_event(struct np_cgroup_cache *c,
			const struct inotify_event *ev)
{
	size_t n = ev->len ? strnlen(ev->name, ev->len) : 0;

	if (!n)
		return false;
	for (size_t i = 0; i < c->ix.cap; i++) {
		const char *p = np_strmap_key_at(&c->ix, i);
		if (!p)
			continue;
		for (const char *q = p; (q = strstr(q, ev->name)); q++)
			if ((q == p || q[-1] == '/') &&
			    (q[n] == '\0' || q[n] == '/')) {
				((struct np_cgroup_cache_entry *)(intptr_t)
					 np_strmap_value_at(&c->ix, i))
				    ->recheck = true;
				break;
			}
	}
	return true;
}

bool np_cgroup_cache_drain(struct np_cgroup_cache *c)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool lost = false, any = false, written = false, overflow = false;
	int named = 0;
	ssize_t n;

	if (c->ifd <= 0)
		return false;
	while ((n = read(c->ifd, buf, sizeof(buf))) > 0) {
		c->events = true;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const void *)p;
			char key[16];

			p += sizeof(*ev) + ev->len;
			written |= (ev->mask & IN_MODIFY) != 0;
			/* events lost, the watches intact (the daemon's own
			 * writes in a first cycle, or the IN_IGNORED of many
			 * watches removed) */
			if (ev->mask & IN_Q_OVERFLOW) {
				overflow = true;
				continue;
			}
			if (file_event(c, ev))
				continue;
			wd_key(ev->wd, key, sizeof(key));
			/* not a directory watch: the owner's own (lent fd),
			 * or the IN_IGNORED of one removed here */
			if (!np_strmap_get(&c->dwatch, key, NULL))
				continue;
			lost |= (ev->mask & WATCH_LOST) != 0;
			/* IN_CREATE: a new name, where no cached cgroup can
			 * be (one that was there was removed first: an event
			 * of its own) */
			/* past NAMED_MAX of them in one drain (a mass
			 * removal), every cgroup is checked instead */
			if (ev->mask & (IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO))
				any |= ++named > NAMED_MAX || !named_event(c, ev);
			else if (!(ev->mask & IN_CREATE))
				any = true;
		}
	}
	if (n < 0 && errno != EAGAIN && errno != EINTR)
		lost = c->events = true;
	if (overflow && !lost) {
		/* whatever was written is read again, identities checked */
		for (size_t i = 0; i < c->ix.cap; i++)
			if (np_strmap_key_at(&c->ix, i)) {
				struct np_cgroup_cache_entry *e =
				    (struct np_cgroup_cache_entry *)(intptr_t)
					np_strmap_value_at(&c->ix, i);
				e->dirty_cpus = e->dirty_mems = true;
			}
		any = true;
	}
	if (lost) {
		/* Close everything: reopened through checked walks. */
		drop_all(c);
	} else if (any) {
		c->epoch++;
	}
	return written || lost || overflow;
}

void np_cgroup_cache_next(struct np_cgroup_cache *c)
{
	uint64_t now = now_ms();

	c->gen++;
	c->unwatched = 0;
	/* the safety net: now and then every file is read again */
	c->full_now = !c->full_ms || now - c->last_full >= c->full_ms;
	if (c->full_now)
		c->last_full = now;
	np_cgroup_cache_drain(c);
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
			{
				char key[16];
				wd_key(wd, key, sizeof(key));
				if (np_strmap_put(&c->dwatch, key, 1))
					return false;
			}
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
	bool watched = e->wd_cpus >= 0 && e->wd_mems >= 0;
	bool written = e->dirty_cpus || e->dirty_mems;
	/* both files read again, unless only one was written since the last
	 * read with nothing else to check (the other holds what was read) */
	bool both = always || !watched || !written || e->recheck ||
		    e->epoch != epoch;

	if (e->gen == gen)
		return parse(e, cpus, mems);
	/* nothing written to either file, nothing moved above: as read */
	if (!always && !written && !e->recheck && e->epoch == epoch &&
	    watched && parse(e, cpus, mems) == 0) {
		e->gen = gen;
		return 0;
	}
	if (e->epoch != epoch || e->recheck || always) {
		if (fstatat(root->parent_fd, cgroup, &sb, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISDIR(sb.st_mode) || sb.st_dev != e->dev ||
		    sb.st_ino != e->ino)
			return -ESTALE;
		e->epoch = epoch;
		e->recheck = false;
	}
	if (both || e->dirty_cpus) {
		e->dirty_cpus = false; /* a write from now on: next drain */
		if (pread_all(e->cpus_fd, a, sizeof(a)) ||
		    keep_text(&e->cpus_txt, a))
			return -ESTALE;
	}
	if (both || e->dirty_mems) {
		e->dirty_mems = false;
		if (pread_all(e->mems_fd, b, sizeof(b)) ||
		    keep_text(&e->mems_txt, b))
			return -ESTALE;
	}
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

/*
 * IN_MODIFY on both files, named from dirfd, the cgroup directory they
 * were opened in: the working directory is dirfd for the two calls, then
 * the one before again (inotify_add_watch takes no directory descriptor,
 * and a "/proc/self/fd/N" name costs a proc lookup each: 40 % of a
 * restart's cycle at 10,000 cgroups). The names are the files the
 * descriptors hold unless one was replaced in between, which cgroupfs
 * does not allow. Where the working directory cannot be kept (no
 * descriptor of it), the files are named through /proc/self/fd. The
 * content may have been read before the watches existed: read once more
 * (dirty). A watch that cannot be added leaves the entry read every
 * cycle.
 */
static void watch_files(struct np_cgroup_cache *c,
			struct np_cgroup_cache_entry *e, int dirfd)
{
	static const char *const name[2] = {"cpuset.cpus", "cpuset.mems"};
	int *wd[2] = {&e->wd_cpus, &e->wd_mems};
	int fd[2] = {e->cpus_fd, e->mems_fd};
	char proc[64], key[16];
	bool here;

	if (!c->cwd_tried && c->ifd > 0) {
		c->cwd_tried = true;
		c->cwd_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	here = c->ifd > 0 && c->cwd_tried && c->cwd_fd >= 0 && !fchdir(dirfd);
	e->dirty_cpus = e->dirty_mems = true;
	for (int i = 0; i < 2 && c->ifd > 0; i++) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd[i]);
		/* a proc name is a link to follow; a name in the directory
		 * is the file itself (never a symlink followed) */
		*wd[i] = here ? inotify_add_watch(c->ifd, name[i],
						  IN_MODIFY | IN_DONT_FOLLOW)
			      : inotify_add_watch(c->ifd, proc, IN_MODIFY);
		if (*wd[i] < 0)
			break;
		wd_key(*wd[i], key, sizeof(key));
		if (np_strmap_put(&c->fwatch, key, (intptr_t)e)) {
			inotify_rm_watch(c->ifd, *wd[i]);
			*wd[i] = -1;
			break;
		}
	}
	/* back; should that ever fail, to "/" and the proc names from now
	 * on rather than stay in a cgroup */
	if (here && fchdir(c->cwd_fd)) {
		if (chdir("/")) {
		}
		close(c->cwd_fd);
		c->cwd_fd = -1;
	}
}

/*
 * Open cgroup's directory and its cpuset.cpus/cpuset.mems for a new entry
 * (not yet in the index); NULL when it cannot (no fds left, not a cgroup,
 * out of memory), with nothing left open.  *walk: cg_open's error, with
 * its message in err, when the directory itself cannot be opened.
 */
static struct np_cgroup_cache_entry *
entry_open(struct np_cgroup_cache *c, const struct np_cgroup_root *root,
	   const char *cgroup, int *walk, char *err, size_t errlen)
{
	struct np_cgroup_cache_entry *e;
	struct cg_dir d;
	struct stat sb;
	bool blind;

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
		return NULL;
	/* Watches first: a change after them is seen by the next cycle. */
	blind = c->blind;
	if (!watch_above(c, root, cgroup))
		c->blind = true; /* a directory not watched: check every read */
	*walk = cg_open(root, cgroup, &d, err, errlen);
	if (*walk) {
		/* no such cgroup (yet): its missing parent is no directory
		 * left unwatched */
		c->blind = blind;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		cg_dir_close(&d);
		return NULL;
	}
	e->wd_cpus = e->wd_mems = -1;
	e->cpus_fd = open_ro(d.fd, "cpuset.cpus");
	e->mems_fd = open_ro(d.fd, "cpuset.mems");
	c->nfds += (e->cpus_fd >= 0) + (e->mems_fd >= 0);
	/* the walk's last statx gave the identity, else one fstat */
	if (d.ino) {
		sb.st_dev = d.dev;
		sb.st_ino = d.ino;
	}
	if (e->cpus_fd < 0 || e->mems_fd < 0 || (!d.ino && fstat(d.fd, &sb))) {
		cg_dir_close(&d);
		entry_free(c, e);
		return NULL;
	}
	e->dev = sb.st_dev;
	e->ino = sb.st_ino;
	watch_files(c, e, d.fd);
	cg_dir_close(&d);
	return e;
}

/* Index e (its files are watched by entry_open): 0, or -1 with e freed. */
static int entry_add(struct np_cgroup_cache *c, struct np_cgroup_cache_entry *e,
		     const char *cgroup)
{
	if (np_strmap_put(&c->ix, cgroup, (intptr_t)e)) {
		entry_free(c, e);
		return -1;
	}
	e->gen = c->gen;
	e->epoch = c->epoch;
	return 0;
}

/* After a successful inspect: open the files (best effort). */
static void cache_open(struct np_cgroup_cache *c,
		       const struct np_cgroup_root *root, const char *cgroup,
		       const np_cpuset *cpus, np_nodemask mems)
{
	struct np_cgroup_cache_entry *e;
	char *t1, *t2, mb[256];
	int walk;

	e = entry_open(c, root, cgroup, &walk, NULL, 0);

	if (!e)
		return;
	/* np_cpuset_str's buffer is sized for any set: keep an exact copy. */
	t2 = np_cpuset_str(cpus);
	t1 = t2 ? strdup(t2) : NULL;
	free(t2);
	np_nodemask_format(mems, mb, sizeof(mb));
	t2 = strdup(mb);
	e->cpus_txt = t1;
	e->mems_txt = t2;
	if (!t1 || !t2) {
		entry_free(c, e);
		return;
	}
	entry_add(c, e, cgroup);
}

/*
 * A cgroup not in the cache: open its files, then read them through the
 * descriptors kept (4 system calls fewer than an inspect followed by the
 * opening).  0 with the entry cached; the walk's error (its message in
 * err) when the cgroup cannot be opened; else 1 with nothing cached: the
 * caller then inspects, for the error message or a value too long here.
 */
static int open_and_read(struct np_cgroup_cache *c,
			 const struct np_cgroup_root *root, const char *cgroup,
			 np_cpuset *cpus, np_nodemask *mems, char *err,
			 size_t errlen)
{
	struct np_cgroup_cache_entry *e;
	char a[512], b[256];
	int walk = 0;

	e = entry_open(c, root, cgroup, &walk, err, errlen);
	if (walk)
		return walk;
	if (!e)
		return 1;
	if (pread_all(e->cpus_fd, a, sizeof(a)) ||
	    pread_all(e->mems_fd, b, sizeof(b)) ||
	    keep_text(&e->cpus_txt, a) || keep_text(&e->mems_txt, b) ||
	    parse(e, cpus, mems)) {
		entry_free(c, e);
		return 1;
	}
	return entry_add(c, e, cgroup) ? 1 : 0;
}

int np_cgroup_read_cpuset(struct np_cgroup_cache *c,
			  const struct np_cgroup_root *root, const char *cgroup,
			  np_cpuset *cpus, np_nodemask *mems, char *err,
			  size_t errlen)
{
	struct np_cgroup_cache_entry *e = entry_get(c, cgroup);
	struct np_cgroup_state *st;
	int r;

	c->last_watched = false;
	if (e && cached_read(root, e, cgroup, c->gen, c->epoch,
			     c->ifd < 0 || c->blind || c->full_now,
			     cpus, mems) == 0) {
		c->last_watched = e->wd_cpus >= 0 && e->wd_mems >= 0;
		c->unwatched += !c->last_watched;
		return 0;
	}
	if (e)
		np_cgroup_cache_forget(c, cgroup);
	/* from the hierarchy root ("/x"): read each time (a container's
	 * cgroup, the runtime's; no watch above it) */
	if (*cgroup && *cgroup != '/' &&
	    (r = open_and_read(c, root, cgroup, cpus, mems, err, errlen)) <= 0) {
		if (r < 0) {
			c->unwatched++; /* as after a failed inspect */
			return r;
		}
		e = entry_get(c, cgroup);
		c->last_watched = e && e->wd_cpus >= 0 && e->wd_mems >= 0;
		/* opened now: read once more after its watches (dirty) */
		c->unwatched++;
		return 0;
	}
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
		e = entry_get(c, cgroup);
		c->last_watched = e && e->wd_cpus >= 0 && e->wd_mems >= 0;
	}
	/* opened now: read once more after its watches (dirty), so not
	 * yet a cgroup whose change would be an event */
	c->unwatched++;
	free(st);
	return r;
}
