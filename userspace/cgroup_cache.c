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
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup_internal.h"

struct np_cgroup_cache_entry {
	int cpus_fd, mems_fd;
	dev_t dev;
	ino_t ino;
	unsigned gen; /* generation of the last read */
	/* Last content read (parsed again when reused). */
	char *cpus_txt, *mems_txt;
};

/* Leave this many descriptors to everything else in the process. */
#define FD_HEADROOM 256

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
	c->nfds = 0;
}

void np_cgroup_cache_next(struct np_cgroup_cache *c)
{
	c->gen++;
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
		       unsigned gen, np_cpuset *cpus, np_nodemask *mems)
{
	char a[512], b[256];
	struct stat sb;

	if (e->gen == gen)
		return parse(e, cpus, mems);
	if (fstatat(root->parent_fd, cgroup, &sb, AT_SYMLINK_NOFOLLOW) ||
	    !S_ISDIR(sb.st_mode) || sb.st_dev != e->dev || sb.st_ino != e->ino)
		return -ESTALE;
	if (pread_all(e->cpus_fd, a, sizeof(a)) ||
	    pread_all(e->mems_fd, b, sizeof(b)) ||
	    keep_text(&e->cpus_txt, a) || keep_text(&e->mems_txt, b))
		return -ESTALE;
	if (parse(e, cpus, mems))
		return -EINVAL;
	e->gen = gen;
	return 0;
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
	if (cg_open(root, cgroup, &d, NULL, 0))
		return;
	e = calloc(1, sizeof(*e));
	if (!e) {
		cg_dir_close(&d);
		return;
	}
	e->cpus_fd = openat(d.fd, "cpuset.cpus", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	e->mems_fd = openat(d.fd, "cpuset.mems", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	c->nfds += (e->cpus_fd >= 0) + (e->mems_fd >= 0);
	t1 = np_cpuset_str(cpus);
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

	if (e && cached_read(root, e, cgroup, c->gen, cpus, mems) == 0)
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
		if (*cgroup)
			cache_open(c, root, cgroup, cpus, *mems);
	}
	free(st);
	return r;
}
