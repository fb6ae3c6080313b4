// SPDX-License-Identifier: Apache-2.0
/*
 * Placement files: a workload can read what it got. Each admitted
 * workload whose cgroup was written has RUN_DIR/workloads/NAME.json, the
 * same object `numaplace status --json` lists for it (name, cgroup, qos,
 * class, cpuset, exclusive, mems, containers with their cpuset, mems,
 * NUMA hint and devices, and the shared pools per NUMA node for a shared
 * workload). It is replaced atomically when its content changes (a shared
 * workload's pool changes with every exclusive admission and release)
 * and removed on release; files of workloads the state does not know are
 * removed at the first cycle. Written after the loop has answered (not in
 * an admission's path) and not fsynced: /run does not outlive a reboot,
 * and a restarted daemon writes every file again.
 */
#include "daemon/daemon_internal.h"
#include "basic/fileio.h"
#include "numaplace/admit.h"
#include "numaplace/state_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SUBDIR "/workloads"

/* The text's hash; never 0 (0 means "no file"). */
static uint64_t hash_text(const char *s)
{
	uint64_t h = np_fnv1a64(s, strlen(s));

	return h ? h : 1;
}

/* Length of file without suffix, or 0 when file does not end in it (or is
 * nothing else). */
static size_t stem_len(const char *file, const char *suffix)
{
	size_t n = strlen(file), k = strlen(suffix);

	return n > k && !strcmp(file + n - k, suffix) ? n - k : 0;
}

static bool enabled(const struct np_daemon *d)
{
	return d->cfg.placement_files && d->cfg.run_dir[0];
}

/* The directory, created when missing; -1 (logged once a change) when it
 * cannot be opened. */
static int open_dir(struct np_daemon *d)
{
	char path[NP_PATH_MAX + sizeof(SUBDIR)];
	int fd, r;

	snprintf(path, sizeof(path), "%s" SUBDIR, d->cfg.run_dir);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* 0755 whatever the umask (the unit's is 0077): workloads
		 * read their placement here */
		if ((r = np_mkdir_p(path, 0755)) || chmod(path, 0755)) {
			errno = r ? -r : errno;
		} else {
			fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
	}
	if (fd < 0 && !d->placement_said) {
		np_log_errno(LOG_ERR, -errno, "placement files: %s", path);
		d->placement_said = true;
	}
	return fd;
}

/* True when name (a directory entry) is NAME.json of a known workload. */
static bool known_file(struct np_daemon *d, const char *file)
{
	char name[NP_NAME_MAX];
	size_t n = stem_len(file, ".json");

	if (!n || n >= sizeof(name))
		return false;
	memcpy(name, file, n);
	name[n] = '\0';
	return np_state_find(&d->st, name) >= 0;
}

/* Files left by an earlier run (workloads released while it was down,
 * temporary files of a write it did not finish). */
static void sweep(struct np_daemon *d, int dfd)
{
	DIR *dir = np_opendir_at(dfd, ".");
	struct dirent *e;

	if (!dir)
		return;
	while ((e = readdir(dir))) {
		bool ours = stem_len(e->d_name, ".json") ||
			    stem_len(e->d_name, ".json.tmp");
		/* only what this file's writer makes */
		if (e->d_type == DT_REG && ours && !known_file(d, e->d_name))
			unlinkat(dfd, e->d_name, 0);
	}
	closedir(dir);
}

/* What a's file is made from: a (its fingerprint) and, when it shows the
 * pools (a container on a shared pool, or no exclusive CPU: its
 * cpuSharedPools), the pools (pools_fp); never 0. */
static uint64_t file_key(const struct np_workload_alloc *a, uint64_t pools_fp)
{
	uint64_t k = np_workload_alloc_fp(a);
	bool shared = false, excl = false;

	for (int i = 0; i < a->ncontainers; i++) {
		shared |= !a->c[i].exclusive;
		excl |= a->c[i].exclusive && !np_cpuset_empty(a->c[i].cpus);
	}
	if (shared || !excl)
		k ^= pools_fp * 0x9E3779B97F4A7C15ull;
	return k ? k : 1;
}

/* a's file, made again when what it is made from changed (key) and
 * written when its text changed. */
static int write_one(struct np_daemon *d, int dfd, const struct np_pools *p,
		     const struct np_workload_alloc *a, struct np_wl_meta *m,
		     uint64_t key)
{
	char file[NP_NAME_MAX + 8];
	json_t *o;
	char *text;
	uint64_t h;
	int r = 0;

	if (m->placement_hash && m->placement_key == key)
		return 0;
	o = np_workload_alloc_to_json_with(&d->st, p, a);
	text = o ? json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	json_decref(o);
	if (!text)
		return -ENOMEM;
	h = hash_text(text);
	if (h != m->placement_hash) {
		size_t len = strlen(text);
		text[len] = '\n'; /* json_dumps' NUL: the file ends a line */
		snprintf(file, sizeof(file), "%s.json", a->req.name);
		r = np_replace_at(dfd, file, text, len + 1, 0644);
		if (!r) {
			m->placement_hash = h;
		} else if (!d->placement_said) {
			/* once until a write succeeds again (a full or
			 * read-only run_dir) */
			np_log(LOG_ERR, "placement file of %s: %s (tried "
			       "again at the next change)",
			       a->req.name, strerror(-r));
			d->placement_said = true;
		}
	}
	if (!r)
		m->placement_key = key;
	free(text);
	return r;
}

void np_daemon_placement_files(struct np_daemon *d)
{
	struct np_pools p;
	uint64_t pools_fp;
	bool failed = false;
	int dfd;

	if (!enabled(d) || (d->placement_swept &&
			    d->placement_done == d->placement_gen))
		return;
	if ((dfd = open_dir(d)) < 0)
		return;
	if (!d->placement_swept) {
		sweep(d, dfd);
		d->placement_swept = true;
	}
	/* Workloads not in force yet get theirs after the cycle that writes
	 * their cgroup (it saves the state: a new generation); failed writes
	 * are tried again at the next generation. */
	np_state_pools(&d->st, &p);
	np_daemon_suppress_pool(d, &p);
	/* what a shared workload's file shows of the pools */
	pools_fp = np_fnv1a64(&p.shared, sizeof(p.shared)) ^
		   np_fnv1a64(&p.be, sizeof(p.be)) * 31;
	for (int i = 0; i < d->st.nworkloads; i++) {
		const struct np_workload_alloc *a = d->st.w[i];
		struct np_wl_meta *m = np_daemon_meta_of(a);
		if (m && m->established &&
		    write_one(d, dfd, &p, a, m, file_key(a, pools_fp)))
			failed = true;
	}
	close(dfd);
	if (!failed)
		d->placement_said = false;
	d->placement_done = d->placement_gen;
}

void np_daemon_placement_remove(struct np_daemon *d, const char *name)
{
	char path[NP_PATH_MAX + sizeof(SUBDIR) + NP_NAME_MAX + 8];

	d->placement_gen++; /* the shared pools changed */
	if (!enabled(d))
		return;
	snprintf(path, sizeof(path), "%s" SUBDIR "/%s.json", d->cfg.run_dir,
		 name);
	if (unlink(path) && errno != ENOENT)
		np_log_errno(LOG_ERR, -errno, "placement file %s", path);
}
