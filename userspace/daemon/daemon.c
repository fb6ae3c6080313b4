// SPDX-License-Identifier: Apache-2.0
/*
 * numaplaced: setup, the event loop (collect: timer, signals, the spec
 * directory's inotify, the control socket), reload and shutdown. The cycle
 * itself is in reconcile.c; see daemon_internal.h for the stages. Only
 * the loop runs a cycle: requests and defrag ask for one (cycle_due), and
 * an answer that waits for it is held until it has run (cycle()).
 */
#include "daemon_internal.h"
#include "basic/failpoint.h"
#include "basic/fileio.h"
#include "basic/trust.h"
#include "daemon/serve/ctl_server.h"
#include "numaplace/error.h"
#include "numaplace/state_file.h"
#include "numaplace/state_journal.h"
#include "numaplace/strmap.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

/* The first component of every workload's cgroup below the managed parent
 * (what a directory there must be named to hold one): 0 or -ENOMEM. */
static int top_components(const struct np_node_state *st, struct np_strmap *m)
{
	for (int i = 0; i < st->nworkloads; i++) {
		const char *cg = st->w[i]->req.cgroup;
		char comp[NAME_MAX + 1];
		size_t n = cg ? strcspn(cg, "/") : 0;

		if (!n || n > NAME_MAX)
			continue; /* a unit or a container's absolute cgroup */
		memcpy(comp, cg, n);
		comp[n] = '\0';
		if (np_strmap_put(m, comp, 1))
			return -ENOMEM;
	}
	return 0;
}

static void adopt_unknown_cgroups(struct np_daemon *d)
{
	int pfd = d->enf->ops->parent_fd(d->enf);
	DIR *dir = pfd >= 0 ? np_opendir_at(pfd, ".") : NULL;
	struct np_strmap known = {0};
	struct dirent *e;

	if (!dir)
		return;
	/* by name, not a scan of the workloads per directory (10,000 of
	 * each at a restart) */
	if (top_components(&d->st, &known)) {
		np_log(LOG_ERR, "out of memory listing the workloads' cgroups: "
				"cgroups of no workload are not looked for");
		goto out;
	}
	while ((e = readdir(dir))) {
		char(*g)[2 * NP_PATH_MAX];
		if (e->d_type != DT_DIR || e->d_name[0] == '.' ||
		    np_strmap_get(&known, e->d_name, NULL))
			continue;
		g = realloc(d->left, sizeof(*g) * (size_t)(d->nleft + 1));
		if (!g)
			break;
		d->left = g;
		snprintf(d->left[d->nleft++], sizeof(d->left[0]), "%s",
			 e->d_name);
		np_log(LOG_WARNING,
		     "cgroup %s belongs to no workload: kept on the shared pool "
		     "until it is empty",
		     e->d_name);
	}
out:
	np_strmap_free(&known);
	closedir(dir);
}

/* Take what the hard limit allows: the cgroup cache keeps two files open
 * per managed cgroup (epoll/poll only, no select()). */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* The workloads' cgroups are where the state says: a driver or managed
 * parent other than the one that wrote the state would take every cgroup
 * for removed and release them all. */
static int same_place(const struct np_daemon *d, const json_t *origins,
		      char *err, size_t errlen)
{
	const char *was = json_string_value(json_object_get(origins, "managed_parent"));
	const char *drv = json_string_value(json_object_get(origins, "cgroup_driver"));

	if (!d->st.nworkloads || !was || !strcmp(was, d->cfg.cgroup_parent))
		return 0;
	return np_errf(err, errlen, NP_STATEFILE_EPOLICY,
		       "the state's %d workload(s) live below %.300s (cgroup "
		       "driver %s), this start would look below %.300s "
		       "(driver %s): set config.cgroup_driver to \"%s\", or "
		       "drain the node's workloads and start with "
		       "--reset-state",
		       d->st.nworkloads, was, drv ? drv : "?",
		       d->cfg.cgroup_parent, d->enf ? d->enf->ops->name : "?",
		       drv ? drv : "?");
}

/* The directory dir (a "what" directory) and those of files[from..n)
 * in it that exist, each trusted: -EPERM naming it otherwise. A missing
 * directory is fine (made at the first start). */
static int dir_trusted(const char *what, const char *dir,
		       const char *const *files, size_t from, size_t n,
		       char *err, size_t errlen)
{
	char path[NP_PATH_MAX + 64];
	int r = np_trust_path(what, dir, err, errlen);

	if (r == -ENOENT)
		return 0;
	for (size_t i = from; !r && i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		if ((r = np_trust_path("state file", path, err, errlen)) ==
		    -ENOENT)
			r = 0;
	}
	return r;
}

/* What numaplaced reads back: from its state directory, the state and
 * its journal (not read at --reset-state, which moves them aside); from
 * its runtime directory (from the state directory, where an older release
 * kept them, once), the originals of host isolation and of the systemd
 * units it confined, which it writes back to the system. Each must be
 * trusted (basic/trust.h) before anything is read: -EPERM naming the file
 * otherwise, and nothing is changed. A missing one is fine. */
static int state_trusted(const struct np_daemon *d, unsigned flags,
			 char *err, size_t errlen)
{
	static const char *const files[] = {NP_STATEFILE_NAME, NP_JOURNAL_NAME,
					    NP_HOSTISO_FILE,
					    "host-units.json"};
	size_t n = sizeof(files) / sizeof(files[0]);
	int r = dir_trusted("state directory", d->cfg.state_dir, files,
			    (flags & NP_DAEMON_RESET_STATE) ? 2 : 0, n, err,
			    errlen);

	return r ? r
		 : dir_trusted("runtime directory", d->cfg.runtime_dir, files,
			       2, n, err, errlen);
}

int np_daemon_runtime_dir(const struct np_daemon *d, char *err,
			  size_t errlen)
{
	int r = np_mkdir_p(d->cfg.runtime_dir, 0755);

	if (r)
		return np_errno(err, errlen, r, "runtime directory %.200s",
				d->cfg.runtime_dir);
	return np_trust_path("runtime directory", d->cfg.runtime_dir, err,
			     errlen);
}

/* The state file: allocations, and the daemon's part (spec origins,
 * pending cgroups); then what changed while the daemon was down. */
static int load_state(struct np_daemon *d, unsigned flags, char *err,
		      size_t errlen)
{
	json_t *origins = NULL;
	bool fresh = false;
	int r;

	if ((r = np_mkdir_p(d->cfg.state_dir, 0700)))
		return np_errno(err, errlen, r, "state directory %.200s",
				d->cfg.state_dir);
	if ((flags & NP_DAEMON_RESET_STATE) &&
	    (r = np_statefile_reset(d->cfg.state_dir, err, errlen)))
		return r;
	if ((r = np_statefile_load_with(d->cfg.state_dir, &d->st, &fresh,
					&origins, err, errlen)))
		return r;
	if ((r = same_place(d, origins, err, errlen))) {
		json_decref(origins);
		return r;
	}
	/* Loaded workloads are established (their cgroups exist already),
	 * except those the state lists as pending. */
	for (int i = 0; i < d->st.nworkloads; i++) {
		struct np_wl_meta *m = np_daemon_meta_add(d, d->st.w[i]->req.name);
		if (!m) {
			json_decref(origins);
			return -ENOMEM;
		}
		m->established = true;
		/* not saved: a container that is a scope is its unit's */
		if (np_daemon_container_unit(d, &d->st.w[i]->req)) {
			json_decref(origins);
			return -ENOMEM;
		}
	}
	r = np_daemon_load_origins(d, origins, err, errlen);
	json_decref(origins);
	if (r)
		return r;
	/* Specs removed while we were down release their workloads (one
	 * not released, its state not saved, stays: none is tried twice). */
	for (int i = 0; i < d->st.nworkloads; i++) {
		const struct np_wl_meta *m = np_daemon_meta_of(d->st.w[i]);
		if (m && strempty(m->spec_file)[0] &&
		    access(m->spec_file, F_OK) && errno == ENOENT) {
			char name[NP_NAME_MAX];
			snprintf(name, sizeof(name), "%s", m->name);
			if (!np_daemon_release(d, name,
					       "spec file removed while stopped"))
				i--;
		}
	}
	adopt_unknown_cgroups(d);
	/* Loading parsed the state file into a JSON document several times
	 * the state's size (about 40 MiB at 10,000 workloads), now freed:
	 * give that memory back instead of keeping it resident. */
	malloc_trim(0);
	np_log(LOG_INFO, "%s state with %d workload(s) from %s",
	       fresh ? "fresh" : "loaded", d->st.nworkloads, d->cfg.state_dir);
	return 0;
}

static int start_verify(struct np_daemon *d, char *err, size_t errlen)
{
	struct np_verify_setup su = {
		.cfg = &d->cfg.verify,
		.pin_path = d->cfg.bpf_pin_path,
		.parent_fd = d->enf->ops->parent_fd(d->enf),
		.root_fd = d->enf->ops->root_fd(d->enf),
		.cgroup_parent = d->cfg.cgroup_parent,
		.fake = d->enf->ops->fake(d->enf),
		.topo = d->topo,
	};
	char cerr[512];
	int r;

	/* memory.numa_stat exists in a workload cgroup only when the memory
	 * controller is enabled above it. Best effort: without it the
	 * residency check says what is missing. */
	if (d->cfg.verify.enabled != NP_VERIFY_OFF && !su.fake &&
	    d->enf->ops->enable_controller(d->enf, "memory", cerr,
					   sizeof(cerr)))
		np_log(LOG_INFO, "verify: %s (memory.numa_stat checks need it)",
		       cerr);
	if ((r = np_verify_start(&d->verify, &su)))
		return np_errf(err, errlen, r,
			       "verify: the BPF programs could not be loaded "
			       "and verify.enabled is \"on\" (see the log "
			       "above)");
	return 0;
}

/* config.socket_read_group: its gid (a name through NSS, or a number). */
static int read_group(struct np_daemon *d, char *err, size_t errlen)
{
	const char *g = d->cfg.socket_read_group;
	struct group gr, *res = NULL;
	char buf[16384], *end;
	unsigned long n;
	int r;

	if (!g[0])
		return 0;
	n = strtoul(g, &end, 10);
	if (g[0] >= '0' && g[0] <= '9' && !*end && n < (gid_t)-1) {
		d->read_gid = (gid_t)n;
	} else if ((r = getgrnam_r(g, &gr, buf, sizeof(buf), &res)) || !res) {
		return np_errf(err, errlen, -EINVAL,
			       "config.socket_read_group: %s%s%s", g,
			       r ? ": " : ": no such group",
			       r ? strerror(r) : "");
	} else {
		d->read_gid = gr.gr_gid;
	}
	d->read_group = true;
	return 0;
}

int np_daemon_init_with(struct np_daemon *d, const char *config_path,
			unsigned flags, struct np_enforcer *enf, char *err,
			size_t errlen)
{
	int r;

	memset(d, 0, sizeof(*d));
	d->epfd = d->tfd = d->sfd = d->ifd = d->efd = -1;
	d->enf = enf;
	snprintf(d->config_path, sizeof(d->config_path), "%s", config_path);
	d->failpoint_admit_saved = np_failpoint("admit-saved");
	if ((r = np_config_load(&d->cfg, config_path, err, errlen)) ||
	    (r = read_group(d, err, errlen)))
		return r;
	raise_nofile();
	if ((r = np_topology_load(&d->topo, d->cfg.topology, err, errlen))) {
		/* a source the configuration names that is missing or not
		 * valid needs the operator, not a restart */
		if (d->cfg.topology[0] && strcmp(d->cfg.topology, "live") &&
		    (r == -ENOENT || r == -ENOTDIR || r == -EISDIR ||
		     r == -ERANGE || r == -E2BIG))
			r = -EINVAL;
		return r;
	}
	if ((r = np_daemon_restore_offline(d, flags, err, errlen)))
		return r;
	if ((r = np_state_init(&d->st, d->topo, &d->cfg.policy, err, errlen))) {
		/* np_state_init names keys "policy.X": the file says
		 * node_policy */
		if (!strncmp(err, "policy.", 7) && strlen(err) + 13 < errlen) {
			memmove(err + 12, err, strlen(err) + 1);
			memcpy(err, "config.node_", 12);
		}
		return r;
	}
	if (d->cfg.be_suppress.min_cpus > d->topo->ncpus)
		return np_errf(err, errlen, -EINVAL,
			       "config.be_suppress.cpuSuppressMinCPUs: %d is "
			       "above the node's %d CPUs",
			       d->cfg.be_suppress.min_cpus, d->topo->ncpus);
	if (d->cfg.cgroup_root[0] && access(d->cfg.cgroup_root, F_OK))
		return np_errf(err, errlen, -EINVAL,
			       "config.cgroup_root: %.200s: %s",
			       d->cfg.cgroup_root, strerror(errno));
	if ((r = state_trusted(d, flags, err, errlen)) ||
	    (!d->enf && (r = np_daemon_open_enforcer(d, err, errlen))))
		return r;
	if ((r = load_state(d, flags, err, errlen)))
		return r;
	np_daemon_stale_units(d);
	return start_verify(d, err, errlen);
}

int np_daemon_init(struct np_daemon *d, const char *config_path,
		   unsigned flags, char *err, size_t errlen)
{
	return np_daemon_init_with(d, config_path, flags, NULL, err, errlen);
}

void np_daemon_fini(struct np_daemon *d)
{
	np_daemon_metrics_stop(d); /* its thread reads nothing of d */
	np_daemon_export_free(d);
	np_verify_stop(d->verify);
	d->verify = NULL;
	if (d->dirty || d->dirty_lazy)
		np_daemon_save(d);
	np_daemon_state_close(d);
	np_ctl_server_close(d->ctl);
	d->ctl = NULL;
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->tfd >= 0)
		close(d->tfd);
	if (d->sfd >= 0)
		close(d->sfd);
	if (d->ifd >= 0)
		close(d->ifd);
	np_enf_destroy(d->enf);
	d->enf = NULL;
	np_hostiso_close(d->hostiso);
	d->hostiso = NULL;
	np_state_free(&d->st); /* the workloads' records with them */
	np_topology_free(d->topo);
	for (int i = 0; i < d->nwritten; i++) {
		free(d->written[i].path);
		free(d->written[i].cpus);
	}
	free(d->written);
	np_strmap_free(&d->written_ix);
	for (int i = 0; i < d->specq.n; i++) {
		free(d->specq.v[i].path);
		json_decref(d->specq.v[i].spec);
	}
	free(d->specq.v);
	free(d->notes);
	free(d->left);
	free(d->unit_left);
	d->unit_left = NULL;
	d->nunit_left = 0;
	d->notes = NULL;
	d->left = NULL;
	d->topo = NULL;
	d->written = NULL;
}

static int add_fd(struct np_daemon *d, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
	return epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static void reload(struct np_daemon *d)
{
	struct np_config c;
	char err[512];

	d->quiet_ok = false; /* the next cycle reads every cgroup */
	if (np_config_load(&c, d->config_path, err, sizeof(err))) {
		np_log(LOG_ERR, "reload: %s (keeping the running configuration)",
		     err);
		return;
	}
	if (d->enf && !strcmp(d->enf->ops->name, "systemd"))
		np_config_systemd_defaults(&c);
	if (memcmp(&c.policy, &d->cfg.policy, sizeof(c.policy)) ||
	    strcmp(c.cgroup_parent, d->cfg_parent) ||
	    strcmp(c.state_dir, d->cfg.state_dir) ||
	    strcmp(c.runtime_dir, d->cfg.runtime_dir) ||
	    c.driver != d->cfg.driver || c.nshared != d->cfg.nshared ||
	    memcmp(c.shared_cgroups, d->cfg.shared_cgroups,
		   sizeof(c.shared_cgroups[0]) * (size_t)c.nshared) ||
	    strcmp(c.topology, d->cfg.topology) ||
	    strcmp(c.cgroup_root, d->cfg.cgroup_root) ||
	    c.create_cgroups != d->cfg.create_cgroups ||
	    strcmp(c.spec_dir, d->cfg.spec_dir) ||
	    strcmp(c.socket_path, d->cfg.socket_path)) {
		np_log(LOG_ERR, "reload: node_policy, topology, cgroup_root, "
				"cgroup_parent, cgroup_driver, shared_cgroups, "
				"create_cgroups, spec_dir, socket, state_dir and "
				"runtime_dir "
				"need a restart (and a state reset for a "
				"policy change); keeping the running "
				"configuration");
		return;
	}
	d->cfg.reconcile_period_ms = c.reconcile_period_ms;
	d->cfg.host_isolation = c.host_isolation; /* at the next cycle */
	/* Thresholds and actions apply at once; what shapes the loaded
	 * programs needs a restart. */
	if (c.verify.enabled != d->cfg.verify.enabled ||
	    c.verify.max_workloads != d->cfg.verify.max_workloads ||
	    c.verify.tick_hz != d->cfg.verify.tick_hz ||
	    c.verify.sample_burst != d->cfg.verify.sample_burst ||
	    c.verify.grace_ms != d->cfg.verify.grace_ms ||
	    strcmp(c.bpf_pin_path, d->cfg.bpf_pin_path))
		np_log(LOG_WARNING, "reload: verify.enabled, max_workloads, "
				  "tick_hz, sample_burst, grace_ms and "
				  "bpf_pin_path take effect at the next restart");
	if (strcmp(c.run_dir, d->cfg.run_dir) ||
	    c.placement_files != d->cfg.placement_files)
		np_log(LOG_WARNING, "reload: run_dir and placement_files take "
				  "effect at the next restart");
	d->cfg.verify.settle_ms = c.verify.settle_ms;
	d->cfg.verify.on_intrusion = c.verify.on_intrusion;
	d->cfg.verify.on_remote_memory = c.verify.on_remote_memory;
	d->cfg.verify.remote_fault_ratio = c.verify.remote_fault_ratio;
	d->cfg.verify.min_fault_pages = c.verify.min_fault_pages;
	d->cfg.verify.outside_mems_bytes = c.verify.outside_mems_bytes;
	d->cfg.verify.migrate_interval_s = c.verify.migrate_interval_s;
	/* listened on anew by the next publish */
	snprintf(d->cfg.metrics_listen, sizeof(d->cfg.metrics_listen), "%s",
		 c.metrics_listen);
	d->cfg.export_ = c.export_; /* written anew by the next publish */
	d->cfg.defrag = c.defrag;   /* auto and max_moves, at the next one */
	/* who may ask for what: the next container admission, and the
	 * host isolation of the next cycle */
	d->cfg.oci_hook = c.oci_hook;
	if (strcmp(c.socket_read_group, d->cfg.socket_read_group))
		np_log(LOG_WARNING, "reload: socket_read_group takes effect at "
				  "the next restart");
	d->export_file[0].done = d->export_file[1].done = false;
	d->metrics_retry_us = 0;
	np_log(LOG_INFO, "configuration reloaded");
}

/* A request: its answer held when it waits for the next cycle. */
static json_t *handle_request(void *ctx, const json_t *req, bool *held)
{
	struct np_daemon *d = ctx;
	json_t *resp = np_daemon_handle(d, req);

	*held = d->answer_after_cycle;
	return resp;
}

static json_t *complete_answer(void *ctx, json_t *resp)
{
	return np_daemon_answer(ctx, resp);
}

/* One cycle, then the answers that waited for it. */
static void cycle(struct np_daemon *d)
{
	np_daemon_reconcile(d);
	if (d->ctl)
		np_ctl_server_answer_held(d->ctl, complete_answer);
}

/*
 * The enforcer's events (systemd: a watched unit started or stopped): a
 * cycle now rather than a period later. Drained after every wakeup, since
 * the bus may have queued signals while the cycle made its calls.
 */
static void enforcer_events(struct np_daemon *d)
{
	static const char *said; /* events_lost, logged once */
	int fd;

	if (d->enf->events_lost && d->enf->events_lost != said) {
		np_log(LOG_WARNING, "%s", d->enf->events_lost);
		said = d->enf->events_lost;
	}
	if (!d->enf->ops->process_events)
		return;
	/* a cycle's own bus calls may read signals into the queue, after
	 * which the descriptor is not readable: drain until quiet */
	for (int i = 0; i < 4 && d->enf->ops->process_events(d->enf); i++)
		cycle(d);
	if (d->enf->bus_gen == d->efd_gen)
		return;
	/* a new connection (a reconnect closed the old descriptor, which
	 * left epoll with it; the new one may even have the same number) */
	d->efd_gen = d->enf->bus_gen;
	if (d->efd >= 0)
		(void)epoll_ctl(d->epfd, EPOLL_CTL_DEL, d->efd, NULL);
	fd = d->enf->ops->event_fd(d->enf);
	d->efd = fd;
	if (fd >= 0 && add_fd(d, fd))
		np_log_errno(LOG_ERR, -errno, "cannot watch the enforcer's events");
}

/* What others read of the daemon, after each wakeup (requests are
 * answered by then): the /metrics snapshot, the export files and the
 * placement files. */
static void publish(struct np_daemon *d)
{
	np_daemon_metrics(d);
	np_daemon_export_files(d);
	np_daemon_placement_files(d);
}

/* The control socket's limits: root may ask anything, the members of
 * config.socket_read_group read only. */
static struct np_ctl_limits ctl_limits(const struct np_daemon *d)
{
	struct np_ctl_limits lim = NP_CTL_SERVER_DEFAULT_LIMITS;

	lim.read_group = d->read_group;
	lim.read_gid = d->read_gid;
	lim.read_ops = np_daemon_read_ops;
	return lim;
}

/* A clean stop gives the host units and IRQs back what they had, unless
 * it is one half of a restart: then, as after a crash, they keep their
 * confinement and the next start takes them over (numaplaced(8)). */
void np_daemon_stop_cleanly(struct np_daemon *d)
{
	if (np_daemon_stopping_for_restart(d))
		return;
	np_daemon_shutdown_enforcer(d);
	np_daemon_hostiso_shutdown(d);
}

int np_daemon_run(struct np_daemon *d)
{
	struct np_ctl_limits lim;
	struct itimerspec its = {0};
	sigset_t mask;
	char err[512];
	int r;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	d->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	d->ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (d->epfd < 0 || d->sfd < 0 || d->tfd < 0 || d->ifd < 0)
		return -errno;
	its.it_value.tv_sec = its.it_interval.tv_sec =
		d->cfg.reconcile_period_ms / 1000;
	its.it_value.tv_nsec = its.it_interval.tv_nsec =
		(long)(d->cfg.reconcile_period_ms % 1000) * 1000000L;
	timerfd_settime(d->tfd, 0, &its, NULL);
	np_mkdir_p(d->cfg.spec_dir, 0755);
	if (inotify_add_watch(d->ifd, d->cfg.spec_dir,
			      IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM |
				      IN_DELETE) < 0)
		np_log(LOG_WARNING, "cannot watch %s: %s (specs are picked up "
				  "each period)",
		     d->cfg.spec_dir, strerror(errno));
	lim = ctl_limits(d);
	if ((r = np_ctl_server_open(&d->ctl, d->cfg.socket_path, &lim,
				    handle_request, d, err, sizeof(err)))) {
		np_log(LOG_ERR, "%s", err);
		return r;
	}
	if ((r = add_fd(d, d->sfd)) || (r = add_fd(d, d->tfd)) ||
	    (r = add_fd(d, d->ifd)) || (r = add_fd(d, np_ctl_server_fd(d->ctl))))
		return r;
	d->efd_gen = d->enf->bus_gen;
	if (d->enf->ops->event_fd && (d->efd = d->enf->ops->event_fd(d->enf)) >= 0 &&
	    (r = add_fd(d, d->efd)))
		return r;
	cycle(d);
	publish(d);
	sd_notifyf(0, "READY=1\nSTATUS=%d workloads, reconciling every %u ms",
		   d->st.nworkloads, d->cfg.reconcile_period_ms);
	/* The watchdog (WatchdogSec= of the unit) is pinged from the loop
	 * at half its interval, whatever the reconcile period: a loop that
	 * stops turning stops the pings. */
	uint64_t wd_usec = 0, next_ping = 0;
	if (sd_watchdog_enabled(0, &wd_usec) <= 0)
		wd_usec = 0;
	while (!d->stop) {
		struct epoll_event ev[8];
		int timeout = -1;
		if (wd_usec) {
			uint64_t now = np_daemon_now_us();
			if (now >= next_ping) {
				sd_notifyf(0,
					   "WATCHDOG=1\nSTATUS=%d workloads, "
					   "%llu drift repaired, %llu rejected",
					   d->st.nworkloads,
					   (unsigned long long)d->n.drift_repaired,
					   (unsigned long long)d->n.rejected);
				next_ping = now + wd_usec / 2;
			}
			timeout = (int)((next_ping - now) / 1000) + 1;
		}
		if (d->scan_more)
			timeout = 0; /* spec files left by a scan's budget */
		int n = epoll_wait(d->epfd, ev, 8, timeout);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0 && d->scan_more) {
			cycle(d);
			publish(d);
			continue;
		}
		for (int i = 0; i < n; i++) {
			int fd = ev[i].data.fd;
			if (fd == d->tfd) {
				uint64_t x;
				(void)!read(fd, &x, sizeof(x));
				cycle(d);
			} else if (fd == d->sfd) {
				struct signalfd_siginfo si;
				while (read(fd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGHUP) {
						reload(d);
						cycle(d);
					} else {
						d->stop = true;
					}
				}
			} else if (fd == d->ifd) {
				char buf[4096];
				while (read(fd, buf, sizeof(buf)) > 0)
					;
				cycle(d);
			} else if (d->ctl && fd == np_ctl_server_fd(d->ctl)) {
				np_ctl_server_dispatch(d->ctl);
			}
		}
		/* asked for by requests: after the answers that do not
		 * wait for it ("wait": "durable"), before those that do */
		if (d->cycle_due)
			cycle(d);
		enforcer_events(d);
		publish(d);
	}
	sd_notify(0, "STOPPING=1");
	np_log(LOG_INFO, "stopping");
	np_daemon_stop_cleanly(d);
	return 0;
}
