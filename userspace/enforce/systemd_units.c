// SPDX-License-Identifier: Apache-2.0
/*
 * The systemd backend's memory of units: what each unit it changed had
 * before (host-units.json in the runtime directory, written before the
 * change, so that a crash still knows what to give back; a tmpfs, which
 * a full state disk does not fill, gone at a reboot as the runtime
 * AllowedCPUs it undoes; moved from the state directory, where an older
 * release kept it, at start), workloads
 * that are systemd units, and the units beside numaplace's scope in its
 * slice that are no workload (confined to the shared pool).
 */
#include "systemd_internal.h"
#include "basic/fileio.h"
#include "numaplace/cleanup.h"
#include "numaplace/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- what host units had before numaplace changed them ---------------- */

static json_t *set_json(bool set, const np_cpuset *c)
{
	char buf[8192];
	if (!set || np_cpuset_format(c, buf, sizeof(buf)) < 0)
		return json_null();
	return json_string(buf);
}

int np_systemd_save_originals(struct systemd_backend *s, char *err, size_t errlen)
{
	_cleanup_json_ json_t *units = json_object(), *doc = NULL;
	_cleanup_free_ char *txt = NULL;
	_cleanup_close_ int dfd = -1;
	int r;

	if (!units)
		return np_errf(err, errlen, -ENOMEM, "out of memory");
	for (int i = 0; i < s->nunits; i++) {
		const struct host_unit *u = &s->units[i];
		if (u->recorded)
			json_object_set_new(
			    units, u->unit,
			    json_pack("{s:o,s:o}", "cpus",
				      set_json(u->orig_cpus_set, &u->orig_cpus),
				      "mems",
				      set_json(u->orig_mems_set,
					       &u->orig_mems)));
	}
	doc = json_pack("{s:i,s:O}", "version", 1, "units", units);
	if (!doc || !(txt = json_dumps(doc, JSON_SORT_KEYS)))
		return np_errf(err, errlen, -ENOMEM, "out of memory");
	dfd = open(s->runtime_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return np_errno(err, errlen, -errno, "runtime directory %s",
				s->runtime_dir);
	if ((r = np_write_atomic_at(dfd, ORIGINALS, txt, strlen(txt), 0600)))
		return np_errno(err, errlen, r, "writing %s/%s",
				s->runtime_dir, ORIGINALS);
	return 0;
}

struct host_unit *np_systemd_unit_find(struct systemd_backend *s, const char *unit)
{
	for (int i = 0; i < s->nunits; i++)
		if (!strcmp(s->units[i].unit, unit))
			return &s->units[i];
	return NULL;
}

struct host_unit *np_systemd_unit_add(struct systemd_backend *s, const char *unit,
				  const char *cgroup)
{
	struct host_unit *u = np_systemd_unit_find(s, unit), *g;

	if (u)
		return u;
	g = realloc(s->units, sizeof(*g) * (size_t)(s->nunits + 1));
	if (!g)
		return NULL;
	s->units = g;
	u = &s->units[s->nunits++];
	memset(u, 0, sizeof(*u));
	snprintf(u->unit, sizeof(u->unit), "%s", unit);
	snprintf(u->cgroup, sizeof(u->cgroup), "%s", cgroup ? cgroup : "");
	return u;
}

static int parse_orig(const json_t *v, const char *dir, const char *unit,
		      const char *key, bool *set, np_cpuset *c, char *err,
		      size_t errlen)
{
	char e2[256];

	if (json_is_null(v)) {
		*set = false;
		return 0;
	}
	if (!json_is_string(v) ||
	    np_cpuset_parse(c, json_string_value(v), e2, sizeof(e2)))
		return np_errf(err, errlen, -EINVAL,
			       "%s/%s: units.%s.%s: a CPU list or null is "
			       "expected",
			       dir, ORIGINALS, unit, key);
	*set = !np_cpuset_empty(c);
	return 0;
}

static int parse_originals(struct systemd_backend *s, const char *txt,
			   const char *dir, char *err, size_t errlen)
{
	_cleanup_json_ json_t *doc = NULL;
	const char *unit;
	json_t *units, *v;
	json_error_t je;
	int r;

	if (!(doc = json_loads(txt, 0, &je)))
		return np_errf(err, errlen, -EINVAL, "%s/%s: %s (line %d)",
			       dir, ORIGINALS, je.text, je.line);
	if (json_integer_value(json_object_get(doc, "version")) != 1 ||
	    !json_is_object(units = json_object_get(doc, "units")))
		return np_errf(err, errlen, -EINVAL,
			       "%s/%s: version 1 and an object \"units\" are "
			       "expected",
			       dir, ORIGINALS);
	json_object_foreach(units, unit, v)
	{
		struct host_unit *u;
		char e2[384];
		if ((r = np_systemd_unit_check(unit, e2, sizeof(e2))) < 0)
			return np_errf(err, errlen, r, "%s/%s: units: %s", dir,
				       ORIGINALS, e2);
		if (!json_is_object(v) || json_object_size(v) != 2)
			return np_errf(err, errlen, -EINVAL,
				       "%s/%s: units.%s: an object with cpus "
				       "and mems is expected",
				       dir, ORIGINALS, unit);
		if (!(u = np_systemd_unit_add(s, unit, NULL)))
			return np_errf(err, errlen, -ENOMEM, "out of memory");
		if ((r = parse_orig(json_object_get(v, "cpus"), dir, unit,
				    "cpus", &u->orig_cpus_set, &u->orig_cpus,
				    err, errlen)) ||
		    (r = parse_orig(json_object_get(v, "mems"), dir, unit,
				    "mems", &u->orig_mems_set, &u->orig_mems,
				    err, errlen)))
			return r;
		u->recorded = true;
	}
	return 0;
}

/* The file of an earlier run (a crash keeps it): its originals win over
 * what the units show now, which is numaplace's own doing. One in the
 * state directory (an older release's place) is written to the runtime
 * directory, then removed; beside the runtime's, which wins, it is
 * removed. */
int np_systemd_load_originals(struct systemd_backend *s, char *err, size_t errlen)
{
	_cleanup_free_ char *txt = NULL;
	_cleanup_close_ int dfd = open(s->runtime_dir,
				       O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int odfd = -1;
	const char *dir;
	bool old, removing;
	int r;

	if (dfd < 0)
		return np_errno(err, errlen, -errno, "runtime directory %s",
				s->runtime_dir);
	odfd = open(s->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (odfd < 0 && errno != ENOENT)
		return np_errno(err, errlen, -errno, "state directory %s",
				s->state_dir);
	r = np_read_moved_at(dfd, odfd, ORIGINALS,
			     NP_READ_NOFOLLOW | NP_READ_REGULAR, ORIGINALS_MAX,
			     &txt, NULL, &old);
	dir = old ? s->state_dir : s->runtime_dir;
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return np_errno(err, errlen, r, "reading %s/%s", dir,
				ORIGINALS);
	if ((r = parse_originals(s, txt, dir, err, errlen)) < 0)
		return r;
	if ((r = np_finish_move_at(dfd, odfd, ORIGINALS, txt, strlen(txt),
				   0600, old, &removing)))
		return np_errno(err, errlen, r,
				removing ? "removing %s/%s (moved to %s)"
					 : "moving %s/%s to %s",
				s->state_dir, ORIGINALS, s->runtime_dir);
	return 0;
}

/* Write-ahead: what the unit has now is on disk before it is changed. */
int np_systemd_record(struct systemd_backend *s, struct host_unit *u, char *err,
		  size_t errlen)
{
	struct np_systemd_unit_props ui;
	int r;

	if (u->recorded)
		return 0;
	/* Host units may be loaded on demand (user.slice before anyone logs
	 * in takes AllowedCPUs); a workload's unit is asked with GetUnit:
	 * LoadUnit of a name with no unit makes systemd announce and drop a
	 * stub, whose signals would start another cycle, and so on. */
	if ((r = np_systemd_unit_info(s, u->unit, u->host, &ui, err, errlen)) < 0)
		return r;
	if (ui.load != NP_SYSTEMD_LOADED)
		return np_errf(err, errlen, -ENOENT,
			       "unit %s is not loaded (pending until it "
			       "exists)",
			       u->unit);
	u->orig_cpus_set = ui.has_cpus;
	u->orig_cpus = ui.cpus;
	u->orig_mems_set = ui.has_mems;
	u->orig_mems = ui.mems;
	u->recorded = true;
	if ((r = np_systemd_save_originals(s, err, errlen)) < 0)
		u->recorded = false;
	return r;
}


/* ---- workloads that are units ------------------------------------------ */

int np_systemd_set_unit(struct np_enforcer *e, const char *unit,
		      const np_cpuset *cpus, np_nodemask mems, bool force,
		      char *err, size_t errlen)
{
	struct systemd_backend *s = SD(e);
	struct host_unit *u = np_systemd_unit_add(s, unit, NULL);
	np_cpuset nodes;
	int r;

	if (!u)
		return np_errf(err, errlen, -ENOMEM, "out of memory");
	u->stray = false; /* a workload's (again) */
	np_cpuset_zero(&nodes);
	for (int i = 0; i < 64; i++)
		if (mems >> i & 1)
			np_cpuset_set(&nodes, i);
	if (!force && u->known && np_cpuset_equal(&u->last_cpus, cpus) &&
	    np_cpuset_equal(&u->last_mems, &nodes))
		return 0;
	/* not there when last asked, and no signal since: still pending */
	if (!u->recorded && u->queried && !u->dirty && !u->cgroup[0] &&
	    !force && u->pending)
		return np_errf(err, errlen, -ENOENT, "unit %s is not there",
			       unit);
	if ((r = np_systemd_record(s, u, err, errlen)) < 0) {
		u->pending = r == -ENOENT;
		return r;
	}
	u->pending = false;
	if ((r = np_systemd_set_allowed(s, unit, cpus, &nodes, err, errlen)) < 0)
		return r;
	u->known = true;
	u->last_cpus = *cpus;
	u->last_mems = nodes;
	return 1;
}

/* What is kept of systemd's answer about a unit: its cgroup and its
 * slice's path ("" when it has none, or one numaplace cannot name). */
static void take_answer(struct host_unit *u,
			const struct np_systemd_unit_props *ui)
{
	char e2[256];

	u->dirty = false;
	u->queried = true;
	snprintf(u->cgroup, sizeof(u->cgroup), "%s", ui->cgroup);
	u->slice_path[0] = '\0';
	if (ui->slice[0] &&
	    np_systemd_slice_path(ui->slice, u->slice_path,
				  sizeof(u->slice_path), e2, sizeof(e2)) < 0)
		u->slice_path[0] = '\0';
}

/* The unit's cgroup is asked of systemd only when a signal said the unit
 * changed (or never yet): a cycle with nothing changed makes no call. */
int np_systemd_read_unit(struct np_enforcer *e, const char *unit,
		       char *slice, size_t slicelen, np_cpuset *cpus,
		       char *err, size_t errlen)
{
	struct systemd_backend *s = SD(e);
	struct host_unit *u = np_systemd_unit_add(s, unit, NULL);
	struct np_cgroup_state st;
	int r;

	if (!u)
		return np_errf(err, errlen, -ENOMEM, "out of memory");
	if (u->dirty || !u->cgroup[0]) {
		struct np_systemd_unit_props ui;
		if (!u->dirty && u->queried) {
			snprintf(slice, slicelen, "%s", u->slice_path);
			return np_errf(err, errlen, -ENOENT,
				       "unit %s is not running", unit);
		}
		if ((r = np_systemd_unit_info(s, unit, false, &ui, err, errlen)) < 0)
			return r;
		take_answer(u, &ui);
		snprintf(slice, slicelen, "%s", u->slice_path);
		if (ui.load != NP_SYSTEMD_LOADED || !ui.cgroup[0])
			return np_errf(err, errlen, -ENOENT,
				       "unit %s is %s", unit,
				       ui.load == NP_SYSTEMD_LOADED
					       ? "not running"
					       : "not there (pending)");
	}
	snprintf(slice, slicelen, "%s", u->slice_path);
	if ((r = np_cgroup_inspect(&s->host, u->cgroup, &st, err, errlen)) < 0) {
		u->cgroup[0] = '\0'; /* stopped: a signal says when it runs */
		return r;
	}
	*cpus = st.cpus;
	return 0;
}

/* A scope (transient, never started again) whose cgroup is gone: a
 * container's that ended. Setting its properties would only make systemd
 * load a stub of it. */
static bool scope_gone(struct systemd_backend *s, const struct host_unit *u)
{
	struct np_cgroup_state st;
	size_t n = strlen(u->unit);

	if (n < 7 || strcmp(u->unit + n - 6, ".scope"))
		return false;
	return !u->cgroup[0] ||
	       np_cgroup_inspect(&s->host, u->cgroup, &st, NULL, 0) == -ENOENT;
}

/* Is the cgroup (relative to the hierarchy's root) populated: does it
 * hold processes (cgroup.events "populated 1")? A unit that stopped may
 * leave its directory behind, empty. */
static bool populated_cg(const struct systemd_backend *s, const char *cgroup)
{
	char p[NP_CGROUP_PATH_MAX + 32];
	_cleanup_free_ char *txt = NULL;

	while (*cgroup == '/')
		cgroup++;
	if (!*cgroup || (size_t)snprintf(p, sizeof(p), "%s/cgroup.events",
					 cgroup) >= sizeof(p))
		return false;
	return !np_read_at(s->host.root_fd, p, 0, 4096, &txt, NULL) &&
	       strstr(txt, "populated 1");
}

/* Does the unit run (its cgroup holds processes)? 1 it runs, 0 it does
 * not, another negative errno when the bus fails. A unit that is not
 * loaded does not run either, and counts as stopped: systemd unloads an
 * inactive service nothing refers to, and loads it again with the
 * properties set on it (the runtime drop-ins of set-property), so its
 * record is kept (measured in the systemd VM: 40-unit's np-app.service,
 * stopped, was not found by GetUnit, and started again it had the
 * AllowedCPUs of its confinement). systemd is asked only when a signal
 * said the unit changed (or never yet), as read_unit does; otherwise
 * the kernel's cgroup.events of the cgroup it had. */
int np_systemd_unit_runs(struct systemd_backend *s, struct host_unit *u,
			 char *err, size_t errlen)
{
	if (u->dirty || !u->queried) {
		struct np_systemd_unit_props ui;
		int r = np_systemd_unit_info(s, u->unit, false, &ui, err, errlen);
		if (r < 0)
			return r;
		take_answer(u, &ui); /* as read_unit keeps it */
		if (ui.load != NP_SYSTEMD_LOADED)
			u->cgroup[0] = '\0';
	}
	return u->cgroup[0] && populated_cg(s, u->cgroup) ? 1 : 0;
}

/* A workload's unit released, or a stray that may have stopped: 0 given
 * back (or nothing to give back: forgotten), 1 kept because it runs on
 * right below the managed parent's slice (a stray, confined by the
 * daemon), 2 kept because it is stopped. Nothing is set on a unit that
 * is stopped: systemd 252 makes the cgroup of a stopped unit again,
 * empty, when one of its properties is set, and the directory is left
 * behind (measured in the systemd VM: 80-containers found
 * numaplace.slice/np-app.service after 40-unit's stop). Its record stays:
 * what it had is given back when it runs again outside the slice, or it
 * is confined again when it runs in it. */
int np_systemd_release_unit(struct np_enforcer *e, const char *unit, char *err,
			  size_t errlen)
{
	struct systemd_backend *s = SD(e);
	struct host_unit *u = np_systemd_unit_find(s, unit);
	int r;

	if (!u)
		return 0;
	if (!u->host && np_systemd_runs_in_slice(s, unit)) {
		u->stray = true; /* confined by the next cycle */
		return 1;
	}
	if (u->recorded && !u->host && scope_gone(s, u)) {
		u->recorded = u->known = false; /* nothing left to give back */
		if ((r = np_systemd_save_originals(s, err, errlen)) < 0)
			return r;
	}
	if (u->recorded && !u->host) {
		r = np_systemd_unit_runs(s, u, err, errlen);
		if (r < 0)
			return r;
		if (r == 0) {
			u->stray = true; /* given back or confined once it runs */
			return 2;
		}
	}
	if (u->recorded) {
		r = np_systemd_set_allowed(
		    s, unit, u->orig_cpus_set ? &u->orig_cpus : &s->full,
		    u->orig_mems_set ? &u->orig_mems : &s->nodes, err, errlen);
		/* a unit that is gone has nothing to give back */
		if (r < 0 && r != -ENOENT && r != -ENXIO)
			return r;
		u->recorded = u->known = false;
		if ((r = np_systemd_save_originals(s, err, errlen)) < 0)
			return r;
	}
	/* A workload's unit is forgotten (a container's scope is a new unit
	 * per container: kept, they would pile up); host units come first
	 * and stay. */
	if (!u->host && strcmp(u->unit, s->scope))
		*u = s->units[--s->nunits];
	return 0;
}

int np_systemd_recorded_unit(struct np_enforcer *e, int i, char *unit,
			   size_t len)
{
	struct systemd_backend *s = SD(e);

	for (int k = 0; k < s->nunits; k++) {
		const struct host_unit *u = &s->units[k];
		if (!u->recorded || u->host || !strcmp(u->unit, s->scope))
			continue;
		if (i-- == 0) {
			snprintf(unit, len, "%s", u->unit);
			return 1;
		}
	}
	return 0;
}

/* ---- units beside the scope that are no workload ---------------------- */

/* The cgroup of the managed parent's slice into buf: "" for the root
 * slice (whose units are host units: shared_cgroups). */
static const char *slice_dir(const struct systemd_backend *s, char *buf,
			     size_t len)
{
	const char *e = strrchr(s->managed, '/');

	snprintf(buf, len, "%.*s", e ? (int)(e - s->managed) : 0, s->managed);
	return buf;
}

/* A service or a scope: the units whose cgroups hold processes. */
static bool process_unit(const char *name)
{
	size_t n = strlen(name);
	char e2[256];

	return ((n > 8 && !strcmp(name + n - 8, ".service")) ||
		(n > 6 && !strcmp(name + n - 6, ".scope"))) &&
	       !np_systemd_unit_check(name, e2, sizeof(e2));
}

/* The cgroup dir/unit holds processes (cgroup.events: "populated 1"): a
 * unit that stopped may leave its directory behind, empty. */
static bool populated(const struct systemd_backend *s, const char *dir,
		      const char *unit)
{
	char p[NP_CGROUP_PATH_MAX];

	if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, unit) >= sizeof(p))
		return false;
	return populated_cg(s, p);
}

bool np_systemd_runs_in_slice(const struct systemd_backend *s,
			      const char *unit)
{
	char dir[NP_CGROUP_PATH_MAX];

	if (!slice_dir(s, dir, sizeof(dir))[0] || !process_unit(unit) ||
	    !strcmp(unit, s->scope))
		return false;
	return populated(s, dir, unit);
}

static int listed_add(struct systemd_backend *s, const char *name)
{
	if (s->nlisted == s->listed_cap) {
		int cap = s->listed_cap ? 2 * s->listed_cap : 8;
		char(*g)[256] = realloc(s->listed, sizeof(*g) * (size_t)cap);
		if (!g)
			return -ENOMEM;
		s->listed = g;
		s->listed_cap = cap;
	}
	snprintf(s->listed[s->nlisted++], sizeof(s->listed[0]), "%s", name);
	return 0;
}

/* The services and scopes in the slice's directory that hold processes,
 * numaplace's scope and host units aside (a slice there is left alone:
 * the units in it are not read). */
static int list_slice(struct systemd_backend *s)
{
	char dir[NP_CGROUP_PATH_MAX];
	struct dirent *de;
	DIR *d;
	int fd, r = 0;

	s->nlisted = 0;
	if (!slice_dir(s, dir, sizeof(dir))[0])
		return 0;
	fd = openat(s->host.root_fd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno; /* not realized yet */
	if (!(d = fdopendir(fd))) {
		r = -errno;
		close(fd);
		return r;
	}
	while (!r && (errno = 0, de = readdir(d))) {
		const struct host_unit *u;
		if (de->d_type != DT_DIR || !process_unit(de->d_name) ||
		    !strcmp(de->d_name, s->scope) ||
		    !populated(s, dir, de->d_name))
			continue;
		if ((u = np_systemd_unit_find(s, de->d_name)) && u->host)
			continue;
		r = listed_add(s, de->d_name);
	}
	if (!r && errno)
		r = -errno;
	closedir(d);
	return r;
}

int np_systemd_slice_unit(struct np_enforcer *e, int i, char *unit, size_t len)
{
	struct systemd_backend *s = SD(e);
	int r;

	if (!s->listed_now) {
		if ((r = list_slice(s)) < 0)
			return r;
		s->listed_now = true;
	}
	if (i < 0 || i >= s->nlisted)
		return 0;
	snprintf(unit, len, "%s", s->listed[i]);
	return 1;
}

/* What the unit had, now, if it runs; then forgotten: 1. One that no
 * longer runs gets nothing set (see np_systemd_release_unit): a scope
 * that stopped is gone for good (forgotten, 1), a service keeps its
 * record (0). */
static int give_back(struct systemd_backend *s, struct host_unit *u,
		     char *err, size_t errlen)
{
	int r = 1;

	if (u->recorded && !np_systemd_runs_in_slice(s, u->unit))
		r = np_systemd_unit_runs(s, u, err, errlen);
	if (r < 0)
		return r;
	if (!r && !scope_gone(s, u))
		return 0;
	if (!r) { /* a scope that stopped: gone, nothing to set */
		u->recorded = false;
		if ((r = np_systemd_save_originals(s, err, errlen)) < 0)
			return r;
	}
	if (u->recorded) {
		r = np_systemd_set_allowed(
		    s, u->unit, u->orig_cpus_set ? &u->orig_cpus : &s->full,
		    u->orig_mems_set ? &u->orig_mems : &s->nodes, err, errlen);
		if (r < 0 && r != -ENOENT && r != -ENXIO)
			return r;
		u->recorded = false;
		if ((r = np_systemd_save_originals(s, err, errlen)) < 0)
			return r;
	}
	if (strcmp(u->unit, s->scope))
		*u = s->units[--s->nunits];
	return 1;
}

/* Its memory nodes are what it had before numaplace first changed it (a
 * released workload's unit gets its own back), every node where none
 * were set. */
int np_systemd_confine_unit(struct np_enforcer *e, const char *unit,
			    const np_cpuset *cpus, bool force, char *err,
			    size_t errlen)
{
	struct systemd_backend *s = SD(e);
	struct host_unit *u = np_systemd_unit_add(s, unit, NULL);
	const np_cpuset *mems;
	int r;

	if (!u)
		return np_errf(err, errlen, -ENOMEM, "out of memory");
	if (u->host)
		return np_errf(err, errlen, -EINVAL,
			       "unit %s is a host unit (shared_cgroups)", unit);
	if (!cpus)
		return give_back(s, u, err, errlen);
	if (!force && u->stray && u->known &&
	    np_cpuset_equal(&u->last_cpus, cpus))
		return 0;
	/* stopped since it was listed: nothing is set on a stopped unit
	 * (np_systemd_release_unit says why) */
	if (!np_systemd_runs_in_slice(s, unit))
		return 0;
	if ((r = np_systemd_record(s, u, err, errlen)) < 0)
		return r;
	mems = u->orig_mems_set ? &u->orig_mems : &s->nodes;
	if ((r = np_systemd_set_allowed(s, unit, cpus, mems, err, errlen)) < 0)
		return r;
	u->stray = u->known = true;
	u->last_cpus = *cpus;
	u->last_mems = *mems;
	return 1;
}

/* ---- bus signals ---------------------------------------------------------- */

static int on_unit_signal(sd_bus_message *m, void *arg, sd_bus_error *ret)
{
	struct systemd_backend *s = arg;
	const char *member = sd_bus_message_get_member(m), *unit = NULL;
	struct host_unit *u;
	uint32_t id;
	const char *job;

	(void)ret;
	if (!member)
		return 0;
	if (!strcmp(member, "JobRemoved"))
		(void)sd_bus_message_read(m, "uos", &id, &job, &unit);
	else
		(void)sd_bus_message_read(m, "s", &unit);
	if (unit && (u = np_systemd_unit_find(s, unit)) && !u->host) {
		u->dirty = true;
		if (strcmp(member, "UnitRemoved"))
			u->pending = false;
		s->events = true;
	}
	return 0;
}

int np_systemd_watch(struct systemd_backend *s, char *err, size_t errlen)
{
	static const char *const sig[] = {"UnitNew", "UnitRemoved",
					  "JobRemoved"};
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r;

	/* On systemd's private socket (a direct connection) messages carry
	 * no sender: a match on one would never fire. */
	const char *sender = sd_bus_is_bus_client(s->bus) > 0
				     ? "org.freedesktop.systemd1"
				     : NULL;

	for (size_t i = 0; i < sizeof(sig) / sizeof(sig[0]); i++)
		if ((r = sd_bus_match_signal(s->bus, NULL, sender,
					     "/org/freedesktop/systemd1",
					     "org.freedesktop.systemd1.Manager",
					     sig[i], on_unit_signal, s)) < 0)
			return np_errno(err, errlen, r, "watching %s", sig[i]);
	r = sd_bus_call_method(s->bus, "org.freedesktop.systemd1",
			       "/org/freedesktop/systemd1",
			       "org.freedesktop.systemd1.Manager", "Subscribe",
			       &e, NULL, "");
	if (r < 0)
		np_errf(err, errlen, r, "Subscribe: %s",
			e.message ? e.message : strerror(-r));
	sd_bus_error_free(&e);
	return r < 0 ? r : 0;
}

int np_systemd_event_fd(struct np_enforcer *e)
{
	return SD(e)->bus ? sd_bus_get_fd(SD(e)->bus) : -1;
}

bool np_systemd_process_events(struct np_enforcer *e)
{
	struct systemd_backend *s = SD(e);
	bool any;
	int r = s->bus ? 0 : -ENOTCONN;

	while (s->bus && (r = sd_bus_process(s->bus, NULL)) > 0)
		;
	if (r < 0) {
		char err[512];
		/* systemd re-executed or the bus went away: the next cycle
		 * looks at every unit again */
		if (np_systemd_reconnect(s, err, sizeof(err)) < 0)
			return false;
	}
	any = s->events;
	s->events = false;
	return any;
}
