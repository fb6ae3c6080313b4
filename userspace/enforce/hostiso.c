// SPDX-License-Identifier: Apache-2.0
/*
 * Host isolation (numaplace/hostiso.h): IRQs, default_smp_affinity, the
 * unbound workqueue cpumask and movable kernel threads kept off isolated
 * CPUs. One apply is plan (read everything, compute what differs),
 * persist (the originals of what is about to change, in hostiso.json),
 * then write; restore writes the originals back.
 */
#include "enforce/hostiso_internal.h"
#include "basic/fileio.h"
#include "numaplace/cleanup.h"
#include "numaplace/error.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEF_AFFINITY "proc/irq/default_smp_affinity"
#define WQ_CPUMASK "sys/devices/virtual/workqueue/cpumask"
#define READ_MAX (64u << 10)
#define ROOT_CPUS "sys/fs/cgroup/cpuset.cpus.effective"
#define POSSIBLE "sys/devices/system/cpu/possible"
#define ONLINE "sys/devices/system/cpu/online"
#define PF_KTHREAD 0x00200000u
#define PF_NO_SETAFFINITY 0x04000000u

/* One write of a plan. */
struct hi_write {
	char kind; /* 'd' default_smp_affinity, 'w' workqueue, 'i', 'k' */
	int id;    /* IRQ or pid */
	unsigned long long start;
	char comm[32];
	char *cur;       /* what it holds now (heap) */
	np_cpuset want;
};

struct hi_plan {
	int n, cap;
	struct hi_write *v;
	int nbits; /* width of the masks written */
	int *seen, nseen, seencap; /* every IRQ of /proc/irq */
};

static void plan_free(struct hi_plan *p)
{
	for (int i = 0; i < p->n; i++)
		free(p->v[i].cur);
	free(p->v);
	free(p->seen);
	p->v = NULL;
	p->seen = NULL;
	p->n = p->cap = p->nseen = p->seencap = 0;
}

static int real_set_affinity(void *ctx, int pid, const np_cpuset *cpus)
{
	(void)ctx;
	/* np_cpuset's words are the kernel's cpumask layout (little endian
	 * 64-bit longs). */
	return sched_setaffinity(pid, sizeof(cpus->w), (const cpu_set_t *)cpus->w)
		       ? -errno
		       : 0;
}

int np_hostiso_open(struct np_hostiso **out, const struct np_hostiso_opts *o,
		    char *err, size_t errlen)
{
	const char *root = o->root && *o->root ? o->root : "/";
	struct np_hostiso *h = calloc(1, sizeof(*h));

	*out = NULL;
	if (!h)
		return np_errno(err, errlen, -ENOMEM, "host isolation");
	h->fake = strcmp(root, "/") != 0;
	h->dirfd = h->oldfd = -1;
	h->rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (h->rootfd < 0) {
		int r = -errno;
		free(h);
		return np_errno(err, errlen, r, "host isolation root %s", root);
	}
	snprintf(h->dir, sizeof(h->dir), "%s", o->runtime_dir);
	h->dirfd = open(o->runtime_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (h->dirfd < 0) {
		int r = -errno;
		np_hostiso_close(h);
		return np_errno(err, errlen, r, "runtime directory %s",
				o->runtime_dir);
	}
	if (o->state_dir && *o->state_dir) {
		snprintf(h->old_dir, sizeof(h->old_dir), "%s", o->state_dir);
		h->oldfd = open(o->state_dir,
				O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (h->oldfd < 0 && errno != ENOENT) {
			int r = -errno;
			np_hostiso_close(h);
			return np_errno(err, errlen, r, "state directory %s",
					o->state_dir);
		}
	}
	h->set_affinity = o->set_affinity;
	h->ctx = o->ctx;
	if (!h->set_affinity && !h->fake)
		h->set_affinity = real_set_affinity;
	*out = h;
	return 0;
}

void np_hostiso_close(struct np_hostiso *h)
{
	if (!h)
		return;
	hi_forget(h);
	free(h->irqs.v);
	free(h->kts.v);
	if (h->rootfd >= 0)
		close(h->rootfd);
	if (h->dirfd >= 0)
		close(h->dirfd);
	if (h->oldfd >= 0)
		close(h->oldfd);
	free(h);
}

bool np_hostiso_saved(const struct np_hostiso *h)
{
	return h->saved;
}

static void fail_add(struct np_hostiso_report *rep, char what, int id, int e)
{
	if (rep->nfailed < NP_HOSTISO_MAX_FAILED)
		rep->failed[rep->nfailed] =
			(struct np_hostiso_failure){what, id, e};
	rep->nfailed++;
}

/* Write text to a file of the tree: one open, one write (O_TRUNC only for
 * test trees: procfs and sysfs take the value as written). */
static int write_text(struct np_hostiso *h, const char *file, const char *text)
{
	_cleanup_close_ int fd = openat(
		h->rootfd, file,
		O_WRONLY | O_CLOEXEC | (h->fake ? O_TRUNC : 0));

	if (fd < 0)
		return -errno;
	return np_write_all(fd, text, strlen(text));
}

/* What a set is given: its original minus isolated, or every
 * housekeeping CPU when no online one is left. */
static void want_of(np_cpuset *want, const np_cpuset *orig,
		    const np_cpuset *isolated, const np_cpuset *online,
		    const np_cpuset *house)
{
	np_cpuset_andnot(want, orig, isolated);
	if (!np_cpuset_intersects(want, online))
		*want = *house;
}

struct hi_ctx {
	struct np_hostiso *h;
	struct hi_plan *p;
	const np_cpuset *isolated, *online, *house;
	/* kernel threads: the online CPUs cgroup v2 partitions hold (none
	 * known: empty), and the possible CPUs */
	np_cpuset held, possible;
};

static struct hi_write *plan_add(struct hi_plan *p, char kind, int id,
				 char **cur)
{
	struct hi_write *w;

	if (p->n == p->cap) {
		int cap = p->cap ? 2 * p->cap : 64;
		struct hi_write *g = realloc(p->v, sizeof(*g) * (size_t)cap);
		if (!g)
			return NULL;
		p->v = g;
		p->cap = cap;
	}
	w = &p->v[p->n++];
	memset(w, 0, sizeof(*w));
	w->kind = kind;
	w->id = id;
	w->cur = np_take_ptr(*cur);
	return w;
}

/* A mask file (kind 'd' or 'w'); absent files are left alone. */
static int plan_mask(struct hi_ctx *c, char kind, const char *file,
		     const char *saved, char *err, size_t errlen)
{
	_cleanup_free_ char *cur = NULL;
	np_cpuset have, orig, want;
	char perr[256];
	int r = np_read_at(c->h->rootfd, file, 0, READ_MAX, &cur, NULL);

	if (r == -ENOENT)
		return 0;
	if (r)
		return np_errno(err, errlen, r, "reading /%s", file);
	if (np_cpuset_parse_mask(&have, cur, perr, sizeof(perr)))
		return np_errf(err, errlen, -EINVAL, "/%s: \"%s\": %s", file,
			       cur, perr);
	/* a saved original parsed when it was loaded */
	if (saved)
		np_cpuset_parse_mask(&orig, saved, NULL, 0);
	else
		orig = have;
	want_of(&want, &orig, c->isolated, c->online, c->house);
	if (np_cpuset_equal(&want, &have))
		return 0;
	if (!plan_add(c->p, kind, 0, &cur))
		return -ENOMEM;
	c->p->v[c->p->n - 1].want = want;
	return 0;
}

/* One IRQ; those that cannot be read are reported. */
static int plan_irq(struct hi_ctx *c, int irq, struct np_hostiso_report *rep)
{
	_cleanup_free_ char *cur = NULL;
	struct hi_item *saved = hi_find(&c->h->irqs, irq);
	np_cpuset have, orig, want;
	char file[64];
	int r;

	snprintf(file, sizeof(file), "proc/irq/%d/smp_affinity_list", irq);
	r = np_read_at(c->h->rootfd, file, 0, READ_MAX, &cur, NULL);
	if (r == -ENOENT)
		return 0;
	if (!r && np_cpuset_parse(&have, cur, NULL, 0))
		r = -EINVAL;
	if (r) {
		fail_add(rep, 'i', irq, r);
		return 0;
	}
	if (!saved || np_cpuset_parse(&orig, saved->orig, NULL, 0))
		orig = have;
	want_of(&want, &orig, c->isolated, c->online, c->house);
	if (np_cpuset_equal(&want, &have))
		return 0;
	if (!plan_add(c->p, 'i', irq, &cur))
		return -ENOMEM;
	c->p->v[c->p->n - 1].want = want;
	return 0;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

static int plan_irqs(struct hi_ctx *c, struct np_hostiso_report *rep,
		     char *err, size_t errlen)
{
	DIR *dir = np_opendir_at(c->h->rootfd, "proc/irq");
	struct dirent *e;
	int r = 0;

	if (!dir) {
		r = -errno;
		return np_errno(err, errlen, r, "reading /proc/irq");
	}
	while (!r && (e = readdir(dir))) {
		struct hi_plan *p = c->p;
		if (!all_digits(e->d_name))
			continue;
		if (p->nseen == p->seencap) {
			int cap = p->seencap ? 2 * p->seencap : 64;
			int *g = realloc(p->seen, sizeof(*g) * (size_t)cap);
			if (!g) {
				r = np_errno(err, errlen, -ENOMEM, "host isolation");
				break;
			}
			p->seen = g;
			p->seencap = cap;
		}
		p->seen[p->nseen++] = atoi(e->d_name);
		r = plan_irq(c, atoi(e->d_name), rep);
	}
	closedir(dir);
	return r;
}

/* proc/PID/stat: flags (field 9) and start time (field 22); comm. */
static int read_stat(struct np_hostiso *h, int pid, unsigned *flags,
		     unsigned long long *start, char *comm, size_t commlen)
{
	_cleanup_free_ char *buf = NULL;
	char file[64], *open_p, *close_p, *p;
	int r;

	snprintf(file, sizeof(file), "proc/%d/stat", pid);
	if ((r = np_read_at(h->rootfd, file, 0, READ_MAX, &buf, NULL)))
		return r;
	open_p = strchr(buf, '(');
	close_p = strrchr(buf, ')');
	if (!open_p || !close_p || close_p < open_p)
		return -EINVAL;
	snprintf(comm, commlen, "%.*s", (int)(close_p - open_p - 1),
		 open_p + 1);
	p = close_p + 1;
	/* fields 3.. after the comm: state is 3, flags 9, starttime 22 */
	for (int field = 3; field <= 22; field++) {
		char *end;
		unsigned long long v;
		while (*p == ' ')
			p++;
		if (!*p)
			return -EINVAL;
		v = strtoull(p, &end, 10);
		if (field == 9)
			*flags = (unsigned)v;
		if (field == 22)
			*start = v;
		p = strchr(p, ' ');
		if (!p && field < 22)
			return -EINVAL;
		if (!p)
			break;
	}
	return 0;
}

/* proc/PID/status: Cpus_allowed_list, malloc'd in *out. */
static int read_allowed(struct np_hostiso *h, int pid, char **out)
{
	_cleanup_free_ char *buf = NULL;
	char file[64], *p, *end;
	int r;

	*out = NULL;
	snprintf(file, sizeof(file), "proc/%d/status", pid);
	if ((r = np_read_at(h->rootfd, file, 0, READ_MAX, &buf, NULL)))
		return r;
	if (!(p = strstr(buf, "\nCpus_allowed_list:")))
		return -EINVAL;
	p += strlen("\nCpus_allowed_list:");
	while (*p == ' ' || *p == '\t')
		p++;
	end = strchr(p, '\n');
	if (!(*out = strndup(p, end ? (size_t)(end - p) : strlen(p))))
		return -ENOMEM;
	return 0;
}

/*
 * While cgroup v2 partitions hold CPUs, the kernel keeps every movable
 * task of the root cgroup, kernel threads among them, off them: each
 * partition made or undone gives all of them the possible CPUs less the
 * partitions' (update_tasks_cpumask of the top cpuset), and
 * sched_setaffinity() takes the partitions' out of what it is asked.
 * Such a task's CPUs say nothing of what it had before: the kernel gives
 * it the possible CPUs once the partitions are gone, and that is its
 * original. One whose online CPUs are exactly the online ones the
 * partitions leave is taken to be one the kernel trimmed (an admin's own
 * affinity was replaced the same way when the partition was made).
 */
static void untrim(const struct hi_ctx *c, np_cpuset *orig)
{
	np_cpuset on, left;

	if (np_cpuset_empty(&c->held) || np_cpuset_empty(&c->possible))
		return;
	np_cpuset_and(&on, orig, c->online);
	np_cpuset_andnot(&left, c->online, &c->held);
	if (np_cpuset_equal(&on, &left))
		*orig = c->possible;
}

/* The CPUs partitions hold, online ones outside the root cgroup's
 * cpuset.cpus.effective, and the possible CPUs: c->held stays empty
 * when the root has no such file (cgroup v1, a test root without one). */
static int partition_cpus(struct hi_ctx *c, char *err, size_t errlen)
{
	_cleanup_free_ char *eff = NULL, *pos = NULL;
	np_cpuset e;
	int r;

	np_cpuset_zero(&c->held);
	np_cpuset_zero(&c->possible);
	r = np_read_at(c->h->rootfd, ROOT_CPUS, 0, READ_MAX, &eff, NULL);
	if (r == -ENOENT)
		return 0;
	if (!r && (r = np_read_at(c->h->rootfd, POSSIBLE, 0, READ_MAX, &pos,
				  NULL)))
		return np_errno(err, errlen, r, "reading /%s", POSSIBLE);
	if (r)
		return np_errno(err, errlen, r, "reading /%s", ROOT_CPUS);
	if (np_cpuset_parse(&e, eff, NULL, 0) ||
	    np_cpuset_parse(&c->possible, pos, NULL, 0))
		return np_errf(err, errlen, -EINVAL,
			       "/%s (\"%.*s\") or /%s (\"%.*s\"): not a CPU "
			       "list",
			       ROOT_CPUS, (int)strcspn(eff, "\n"), eff,
			       POSSIBLE, (int)strcspn(pos, "\n"), pos);
	np_cpuset_andnot(&c->held, c->online, &e);
	return 0;
}

/* A kernel thread that may be moved: not bound to CPUs by the kernel
 * (PF_NO_SETAFFINITY) and allowed on more than one. Never asked for a
 * partition's CPUs: the kernel would not give them. */
static int plan_kthread(struct hi_ctx *c, int pid)
{
	_cleanup_free_ char *cur = NULL;
	struct hi_item *saved = hi_find(&c->h->kts, pid);
	unsigned long long start = 0;
	unsigned flags = 0;
	np_cpuset have, orig, want, part;
	struct hi_write *w;
	char comm[32];

	if (read_stat(c->h, pid, &flags, &start, comm, sizeof(comm)) ||
	    !(flags & PF_KTHREAD) || (flags & PF_NO_SETAFFINITY))
		return 0; /* gone, or not one to move */
	if (read_allowed(c->h, pid, &cur) ||
	    np_cpuset_parse(&have, cur, NULL, 0))
		return 0;
	if (saved && saved->start != start)
		saved = NULL; /* the pid was reused */
	if (!saved || np_cpuset_parse(&orig, saved->orig, NULL, 0)) {
		orig = have;
		untrim(c, &orig);
		if (!np_cpuset_equal(&orig, &have)) { /* recorded as given back */
			free(cur);
			if (!(cur = np_cpuset_str(&orig)))
				return -ENOMEM;
		}
	}
	if (np_cpuset_count(&orig) < 2)
		return 0; /* pinned to one CPU on purpose */
	want_of(&want, &orig, c->isolated, c->online, c->house);
	np_cpuset_andnot(&part, &want, &c->held);
	if (np_cpuset_intersects(&part, c->online))
		want = part;
	if (np_cpuset_equal(&want, &have))
		return 0;
	if (!(w = plan_add(c->p, 'k', pid, &cur)))
		return -ENOMEM;
	w->want = want;
	w->start = start;
	snprintf(w->comm, sizeof(w->comm), "%s", comm);
	return 0;
}

static int plan_kthreads(struct hi_ctx *c, char *err, size_t errlen)
{
	struct dirent *e;
	DIR *dir;
	int r = 0;

	if (!c->h->set_affinity)
		return 0; /* a test root without a hook */
	if ((r = partition_cpus(c, err, errlen)))
		return r;
	dir = np_opendir_at(c->h->rootfd, "proc");
	if (!dir) {
		r = -errno;
		return np_errno(err, errlen, r, "reading /proc");
	}
	while (!r && (e = readdir(dir)))
		if (all_digits(e->d_name))
			r = plan_kthread(c, atoi(e->d_name));
	closedir(dir);
	return r;
}

/* Persist: the original of every item the plan changes that has none
 * recorded yet, on disk before the first write. On failure h holds what
 * it held before. */
static int record(struct np_hostiso *h, const struct hi_plan *p, char *err,
		  size_t errlen)
{
	int nirq = h->irqs.n, nkt = h->kts.n, r;
	bool def_new = false, wq_new = false, added = false, present_new = false;

	for (int i = 0; i < p->n; i++) {
		const struct hi_write *w = &p->v[i];
		struct hi_item *it;
		char **mask = w->kind == 'd' ? &h->def_orig : &h->wq_orig;
		switch (w->kind) {
		case 'd':
		case 'w':
			if (*mask)
				continue;
			if (!(*mask = strdup(w->cur)))
				goto nomem;
			*(w->kind == 'd' ? &def_new : &wq_new) = true;
			break;
		case 'i':
			if (hi_find(&h->irqs, w->id))
				continue;
			if (!hi_add(&h->irqs, w->id, w->cur))
				goto nomem;
			break;
		default:
			it = hi_find(&h->kts, w->id);
			if (it && it->start == w->start)
				continue;
			if (it) { /* the pid was reused: a new thread */
				char *o = strdup(w->cur);
				if (!o)
					goto nomem;
				free(it->orig);
				it->orig = o;
			} else if (!(it = hi_add(&h->kts, w->id, w->cur))) {
				goto nomem;
			}
			it->start = w->start;
			snprintf(it->comm, sizeof(it->comm), "%s", w->comm);
		}
		added = true;
	}
	if (!added)
		return 0;
	if (!h->present_known) {
		/* the IRQs there before anything was narrowed: restore leaves
		 * those it did not change alone */
		int *g = malloc(sizeof(*g) * (size_t)(p->nseen + 1));
		if (!g)
			goto nomem;
		memcpy(g, p->seen, sizeof(*g) * (size_t)p->nseen);
		free(h->present);
		h->present = g;
		h->npresent = p->nseen;
		h->present_known = present_new = true;
	}
	if (!(r = hi_save(h, err, errlen)))
		return 0;
	goto undo;
nomem:
	r = np_errno(err, errlen, -ENOMEM, "host isolation");
undo:
	hi_truncate(&h->irqs, nirq);
	hi_truncate(&h->kts, nkt);
	if (def_new) {
		free(h->def_orig);
		h->def_orig = NULL;
	}
	if (wq_new) {
		free(h->wq_orig);
		h->wq_orig = NULL;
	}
	if (present_new) {
		free(h->present);
		h->present = NULL;
		h->npresent = 0;
		h->present_known = false;
	}
	return r;
}

/* Write one planned item; per-IRQ and per-thread refusals are reported. */
static int write_one(struct np_hostiso *h, const struct hi_write *w,
		     int nbits, struct np_hostiso_report *rep, char *err,
		     size_t errlen)
{
	char text[12 * 1024], file[64];
	const char *mfile = w->kind == 'd' ? DEF_AFFINITY : WQ_CPUMASK;
	int r;

	if (w->kind == 'k') {
		r = h->set_affinity(h->ctx, w->id, &w->want);
		if (r == -ESRCH)
			return 0; /* gone meanwhile */
		if (r)
			fail_add(rep, 'k', w->id, r);
		else
			rep->kthreads++;
		return 0;
	}
	if (w->kind == 'i') {
		if (np_cpuset_format(&w->want, text, sizeof(text)) < 0)
			return -ENOSPC;
		snprintf(file, sizeof(file), "proc/irq/%d/smp_affinity_list",
			 w->id);
		r = write_text(h, file, text);
		if (r && r != -ENOENT)
			fail_add(rep, 'i', w->id, r);
		rep->irqs += !r;
		return 0;
	}
	if (np_cpuset_format_mask(&w->want, nbits, text, sizeof(text)) < 0)
		return -ENOSPC;
	if ((r = write_text(h, mfile, text)))
		return np_errno(err, errlen, r, "writing \"%s\" to /%s (was "
				"\"%.*s\")", text, mfile,
				(int)strcspn(w->cur, "\n"), w->cur);
	*(w->kind == 'd' ? &rep->default_irq : &rep->workqueue) = true;
	return 0;
}

static int plan_build(struct hi_ctx *c, struct np_hostiso_report *rep,
		      char *err, size_t errlen)
{
	int r;

	if ((r = plan_mask(c, 'd', DEF_AFFINITY, c->h->def_orig, err, errlen)) ||
	    (r = plan_irqs(c, rep, err, errlen)) ||
	    (r = plan_mask(c, 'w', WQ_CPUMASK, c->h->wq_orig, err, errlen)) ||
	    (r = plan_kthreads(c, err, errlen)))
		return r;
	return 0;
}

int np_hostiso_apply(struct np_hostiso *h, const np_cpuset *isolated,
		     const np_cpuset *online, struct np_hostiso_report *rep,
		     char *err, size_t errlen)
{
	struct hi_plan p = {0};
	np_cpuset house;
	struct hi_ctx c = {h, &p, isolated, online, &house};
	int r, last = -1;

	memset(rep, 0, sizeof(*rep));
	if ((r = np_hostiso_load(h, err, errlen)) < 0)
		return r;
	np_cpuset_andnot(&house, online, isolated);
	if (np_cpuset_empty(&house)) {
		_cleanup_free_ char *s = np_cpuset_str(isolated);
		return np_errf(err, errlen, -EINVAL,
			       "host isolation: CPUs %s are every online CPU: "
			       "IRQs, workqueues and kernel threads would have "
			       "none left",
			       s ? s : "?");
	}
	NP_CPUSET_FOREACH(cpu, online)
	last = cpu;
	p.nbits = last + 1;
	if ((r = plan_build(&c, rep, err, errlen)))
		goto out;
	h->isolated = *isolated;
	if ((r = record(h, &p, err, errlen)))
		goto out;
	for (int i = 0; i < p.n && !r; i++)
		r = write_one(h, &p.v[i], p.nbits, rep, err, errlen);
out:
	rep->writes = rep->irqs + rep->kthreads + rep->default_irq +
		      rep->workqueue;
	plan_free(&p);
	return r;
}

/*
 * sched_setaffinity() of a task of the root cgroup leaves out the CPUs
 * that are offline, and nothing gives them to it when they come online
 * (issue 33's 2-hour chaos run ended with kthreadd short of three CPUs a
 * give-back had found offline). True when the thread's CPUs now lack
 * some of orig that are offline: it is owed them. A tree without
 * sys/devices/system/cpu/online (a test root) owes nothing.
 */
static bool owed_offline(struct np_hostiso *h, int pid, const np_cpuset *orig,
			 const np_cpuset *online)
{
	_cleanup_free_ char *cur = NULL;
	np_cpuset got, miss;

	if (!online || read_allowed(h, pid, &cur) ||
	    np_cpuset_parse(&got, cur, NULL, 0))
		return false;
	np_cpuset_andnot(&miss, orig, &got);
	np_cpuset_andnot(&miss, &miss, online);
	return !np_cpuset_empty(&miss);
}

/* The online CPUs, read once a restore; NULL when the tree has no such
 * file. */
static const np_cpuset *read_online(struct np_hostiso *h, np_cpuset *out)
{
	_cleanup_free_ char *on = NULL;

	if (np_read_at(h->rootfd, ONLINE, 0, READ_MAX, &on, NULL) ||
	    np_cpuset_parse(out, on, NULL, 0))
		return NULL;
	return out;
}

/* Give one saved kernel thread its CPUs back, if it is still that
 * thread: true when it is owed CPUs that are offline (its record is
 * kept). */
static bool restore_kthread(struct np_hostiso *h, const struct hi_item *k,
			    const np_cpuset *online,
			    struct np_hostiso_report *rep)
{
	unsigned long long start = 0;
	unsigned flags = 0;
	char comm[32];
	np_cpuset cpus;
	int r;

	if (!h->set_affinity ||
	    read_stat(h, k->id, &flags, &start, comm, sizeof(comm)) ||
	    start != k->start || np_cpuset_parse(&cpus, k->orig, NULL, 0)) {
		rep->skipped++;
		return false;
	}
	r = h->set_affinity(h->ctx, k->id, &cpus);
	if (r == -ESRCH) {
		rep->skipped++;
	} else if (r) {
		fail_add(rep, 'k', k->id, r);
	} else if (owed_offline(h, k->id, &cpus, online)) {
		rep->owed++;
		return true;
	} else {
		rep->kthreads++;
	}
	return false;
}

/* After a give-back: only the threads still owed offline CPUs stay
 * recorded (the file rewritten with them alone), or nothing (the file
 * removed). */
static int keep_owed(struct np_hostiso *h, const bool *owed, char *err,
		     size_t errlen)
{
	int n = 0;

	for (int i = 0; i < h->kts.n; i++) {
		if (!owed[i]) {
			free(h->kts.v[i].orig);
			continue;
		}
		h->kts.v[n++] = h->kts.v[i];
	}
	h->kts.n = n;
	if (!n) {
		int r = hi_unlink(h, err, errlen);
		if (!r)
			hi_forget(h);
		return r;
	}
	struct hi_list keep = h->kts;
	h->kts = (struct hi_list){0};
	hi_forget(h); /* IRQs and masks are back: only the threads stay */
	h->kts = keep;
	h->saved = true; /* the file on disk still holds them */
	np_cpuset_zero(&h->isolated);
	return hi_save(h, err, errlen);
}

/* An IRQ registered while the default affinity was narrowed got the
 * narrowed default (and was recorded with it if a later apply saw it):
 * one that was not there at the first apply and still holds exactly that
 * gets the original default. */
static void restore_new_irq(struct np_hostiso *h, int irq,
			    const np_cpuset *narrowed, const char *orig,
			    struct np_hostiso_report *rep)
{
	_cleanup_free_ char *cur = NULL;
	char file[64];
	np_cpuset have;
	int r;

	if (!h->present_known && hi_find(&h->irqs, irq))
		return; /* a file of an older numaplaced: what it changed */
	for (int i = 0; i < h->npresent; i++)
		if (h->present[i] == irq)
			return; /* there before: restored from its record, if any */
	snprintf(file, sizeof(file), "proc/irq/%d/smp_affinity_list", irq);
	if (np_read_at(h->rootfd, file, 0, READ_MAX, &cur, NULL) ||
	    np_cpuset_parse(&have, cur, NULL, 0) ||
	    !np_cpuset_equal(&have, narrowed))
		return;
	if ((r = write_text(h, file, orig)))
		fail_add(rep, 'i', irq, r);
	else
		rep->irqs++;
}

static void restore_new_irqs(struct np_hostiso *h,
			     struct np_hostiso_report *rep)
{
	_cleanup_free_ char *cur = NULL, *orig = NULL;
	np_cpuset narrowed, o;
	struct dirent *e;
	DIR *dir;

	if (!h->def_orig ||
	    np_read_at(h->rootfd, DEF_AFFINITY, 0, READ_MAX, &cur, NULL) ||
	    np_cpuset_parse_mask(&narrowed, cur, NULL, 0) ||
	    np_cpuset_parse_mask(&o, h->def_orig, NULL, 0) ||
	    np_cpuset_equal(&narrowed, &o) || !(orig = np_cpuset_str(&o)))
		return;
	if (!(dir = np_opendir_at(h->rootfd, "proc/irq")))
		return;
	while ((e = readdir(dir)))
		if (all_digits(e->d_name))
			restore_new_irq(h, atoi(e->d_name), &narrowed, orig, rep);
	closedir(dir);
}

int np_hostiso_restore(struct np_hostiso *h, struct np_hostiso_report *rep,
		       char *err, size_t errlen)
{
	_cleanup_free_ bool *owed = NULL;
	const np_cpuset *online;
	np_cpuset on;
	char file[64], msg[512] = "";
	int r, first = 0;

	memset(rep, 0, sizeof(*rep));
	if ((r = np_hostiso_load(h, err, errlen)) < 0)
		return r;
	if (!h->saved)
		return 0;
	if (!(owed = calloc((size_t)h->kts.n + 1, sizeof(*owed))))
		return np_errno(err, errlen, -ENOMEM, "host isolation restore");
	online = read_online(h, &on);
	for (int i = 0; i < h->kts.n; i++)
		owed[i] = restore_kthread(h, &h->kts.v[i], online, rep);
	if (h->wq_orig && (r = write_text(h, WQ_CPUMASK, h->wq_orig)))
		first = np_errno(msg, sizeof(msg), r,
				 "writing \"%s\" back to /%s", h->wq_orig,
				 WQ_CPUMASK);
	rep->workqueue = h->wq_orig && !r;
	for (int i = 0; i < h->irqs.n; i++) {
		snprintf(file, sizeof(file), "proc/irq/%d/smp_affinity_list",
			 h->irqs.v[i].id);
		r = write_text(h, file, h->irqs.v[i].orig);
		if (r == -ENOENT)
			rep->skipped++;
		else if (r)
			fail_add(rep, 'i', h->irqs.v[i].id, r);
		else
			rep->irqs++;
	}
	restore_new_irqs(h, rep); /* before the default is given back */
	if (h->def_orig && (r = write_text(h, DEF_AFFINITY, h->def_orig)) &&
	    !first)
		first = np_errno(msg, sizeof(msg), r,
				 "writing \"%s\" back to /%s", h->def_orig,
				 DEF_AFFINITY);
	rep->default_irq = h->def_orig && !r;
	rep->writes = rep->irqs + rep->kthreads + rep->default_irq +
		      rep->workqueue;
	if (first)
		return np_errf(err, errlen, first, "%s (%s/%s kept)", msg,
			       h->dir, NP_HOSTISO_FILE);
	return keep_owed(h, owed, err, errlen);
}

void np_hostiso_report_str(const struct np_hostiso_report *rep,
			   const char *what, char *buf, size_t len)
{
	size_t off;

	snprintf(buf, len, "%d irqs%s%s, %d kthreads%s", rep->irqs,
		 rep->workqueue ? ", workqueue" : "",
		 rep->default_irq ? ", default irq affinity" : "",
		 rep->kthreads, what ? what : "");
	off = strlen(buf);
	if (rep->owed && off + 1 < len)
		snprintf(buf + off, len - off,
			 "; %d kthreads short of offline CPUs (kept, given "
			 "back again when those are online)",
			 rep->owed);
	for (int i = 0; i < rep->nfailed && i < NP_HOSTISO_MAX_FAILED; i++) {
		const struct np_hostiso_failure *f = &rep->failed[i];
		char e[64];
		off = strlen(buf);
		if (off + 1 >= len)
			return;
		snprintf(buf + off, len - off, "%s%s %d (%s)",
			 i ? ", " : "; not movable: ",
			 f->what == 'i' ? "irq" : "kthread", f->id,
			 strerror_r(-f->err, e, sizeof(e)));
	}
	off = strlen(buf);
	if (rep->nfailed > NP_HOSTISO_MAX_FAILED && off + 1 < len)
		snprintf(buf + off, len - off, " and %d more",
			 rep->nfailed - NP_HOSTISO_MAX_FAILED);
}
