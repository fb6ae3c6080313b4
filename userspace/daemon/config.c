// SPDX-License-Identifier: Apache-2.0
/* numaplaced configuration: defaults, parsing, validation. */
#include "numaplace/config.h"
#include "basic/trust.h"
#include "daemon/config_names.h"
#include "daemon/serve/metrics.h"
#include "numaplace/export.h"
#include "engine/json_util.h"

#include "numaplace/cleanup.h"
#include "numaplace/enforcer.h"
#include "numaplace/quantity.h"
#include "numaplace/error.h"
#include "basic/fileio.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* A configuration is a page or two; anything this long is not one. */
#define NP_CONFIG_MAX_SIZE (1024 * 1024)

void np_config_defaults(struct np_config *c)
{
	memset(c, 0, sizeof(*c));
	c->policy.default_bind = NP_BIND_FULL_PCPUS;
	snprintf(c->topology, sizeof(c->topology), "live");
	c->reconcile_period_ms = 10000;
	c->full_scan_ms = 60000;
	snprintf(c->cgroup_parent, sizeof(c->cgroup_parent), "numaplace.slice");
	c->create_cgroups = true;
	snprintf(c->spec_dir, sizeof(c->spec_dir), "/etc/numaplace/workloads.d");
	snprintf(c->state_dir, sizeof(c->state_dir), "/var/lib/numaplace");
	snprintf(c->runtime_dir, sizeof(c->runtime_dir), "/run/numaplace");
	snprintf(c->socket_path, sizeof(c->socket_path),
		 "/run/numaplace/numaplace.sock");
	snprintf(c->bpf_pin_path, sizeof(c->bpf_pin_path),
		 "/sys/fs/bpf/numaplace");
	snprintf(c->metrics_listen, sizeof(c->metrics_listen),
		 "127.0.0.1:9464");
	c->verify.enabled = NP_VERIFY_AUTO;
	c->verify.max_workloads = 1024;
	c->verify.tick_hz = 99;
	c->verify.settle_ms = 1000;
	c->verify.grace_ms = 100;
	c->verify.sample_burst = 16;
	c->verify.on_intrusion = NP_ACT_REPORT;
	c->verify.on_remote_memory = NP_ACT_REPORT;
	c->verify.remote_fault_ratio = 0.5;
	c->verify.min_fault_pages = 64;
	c->verify.outside_mems_bytes = 16ULL << 20;
	c->verify.migrate_interval_s = 60;
	c->defrag.max_moves = 2;
	c->oci_hook.timeout_ms = 2000;
	c->oci_hook.on_failure = NP_OCI_FAIL_OPEN;
	np_oci_policy_defaults(&c->oci_hook.policy);
	snprintf(c->oci_hook.log_file, sizeof(c->oci_hook.log_file),
		 "/run/numaplace/oci-hook.log");
	c->placement_files = true; /* run_dir: the socket's directory */
	np_suppress_config_defaults(&c->be_suppress, NP_SUPPRESS_NONE);
	snprintf(c->proc_stat_file, sizeof(c->proc_stat_file), "/proc/stat");
}

const char *const np_cfg_verify_modes[] = {"auto", "on", "off", NULL};
const char *const np_cfg_verify_actions[] = {"report", "partition", "migrate",
					     NULL};

static int pick(const json_t *j, const char *key, const char *const *names,
		unsigned allowed_mask, int *out, char *err, size_t errlen)
{
	const char *s;
	int r = np_json_str(j, key, "config.verify", false, &s, err, errlen);
	char list[96] = "";

	if (r)
		return r == -ENOENT ? 0 : r;
	for (int i = 0; names[i]; i++) {
		if (!(allowed_mask & (1u << i)))
			continue;
		if (!strcmp(s, names[i])) {
			*out = i;
			return 0;
		}
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%s\"%s\"", list[0] ? ", " : "", names[i]);
	}
	return np_json_fail(err, errlen, "config.verify", key,
			    "\"%s\" is not one of %s", s, list);
}

static int verify_from_json(struct np_verify_config *v, const json_t *j,
			    char *err, size_t errlen)
{
	static const char *const keys[] = {
		"enabled",	      "max_workloads",	    "tick_hz",
		"settle_ms",	      "grace_ms",	      "sample_burst",	    "on_intrusion",
		"on_remote_memory",   "remote_fault_ratio", "min_fault_pages",
		"outside_mems_bytes", "migrate_interval_s", NULL};
	long long x;
	int r, e;
	const json_t *f;

	if (!j || json_is_null(j))
		return 0;
	if (!json_is_object(j))
		return np_json_fail(err, errlen, "config", "verify",
				    "expected an object");
	if ((r = np_json_only_keys(j, keys, "config.verify", err, errlen)))
		return r;
	e = (int)v->enabled;
	if ((r = pick(j, "enabled", np_cfg_verify_modes, 7, &e, err, errlen)))
		return r;
	v->enabled = (enum np_verify_mode)e;
	e = (int)v->on_intrusion;
	if ((r = pick(j, "on_intrusion", np_cfg_verify_actions, 3, &e, err, errlen)))
		return r;
	v->on_intrusion = (enum np_verify_action)e;
	e = (int)v->on_remote_memory;
	if ((r = pick(j, "on_remote_memory", np_cfg_verify_actions, 5, &e, err,
		      errlen)))
		return r;
	v->on_remote_memory = (enum np_verify_action)e;
#define NUM(key, lo, hi, dst)                                                  \
	do {                                                                   \
		r = np_json_int(j, key, "config.verify", false, lo, hi, &x,    \
				err, errlen);                                  \
		if (r == 0)                                                    \
			dst = (unsigned)x;                                     \
		else if (r != -ENOENT)                                         \
			return r;                                              \
	} while (0)
	NUM("max_workloads", 1, 1 << 20, v->max_workloads);
	NUM("tick_hz", 0, 10000, v->tick_hz);
	NUM("settle_ms", 0, 60000, v->settle_ms);
	NUM("grace_ms", 0, 60000, v->grace_ms);
	NUM("sample_burst", 0, 1000000, v->sample_burst);
	NUM("migrate_interval_s", 1, 86400, v->migrate_interval_s);
#undef NUM
	r = np_json_int(j, "min_fault_pages", "config.verify", false, 0,
			1LL << 40, &x, err, errlen);
	if (r == 0)
		v->min_fault_pages = (uint64_t)x;
	else if (r != -ENOENT)
		return r;
	f = json_object_get(j, "remote_fault_ratio");
	if (f && !json_is_null(f)) {
		double d = json_is_number(f) ? json_number_value(f) : -1;
		if (d < 0 || d > 1)
			return np_json_fail(err, errlen, "config.verify",
					    "remote_fault_ratio",
					    "expected a number 0..1");
		v->remote_fault_ratio = d;
	}
	f = json_object_get(j, "outside_mems_bytes");
	if (f && !json_is_null(f)) {
		char qerr[256];
		if (json_is_integer(f) && json_integer_value(f) >= 0) {
			v->outside_mems_bytes = (uint64_t)json_integer_value(f);
		} else if (!json_is_string(f) ||
			   np_quantity_bytes(json_string_value(f),
					     &v->outside_mems_bytes, qerr,
					     sizeof(qerr))) {
			return np_json_fail(err, errlen, "config.verify",
					    "outside_mems_bytes",
					    "expected bytes (\"16Mi\" or a "
					    "number)");
		}
	}
	return 0;
}

/* An absolute path without "..", or empty when allowed. */
static int abs_path_in(const json_t *j, const char *path, const char *key,
		       char *out, size_t len, bool allow_empty, char *err,
		       size_t errlen)
{
	const char *s;
	int r = np_json_str(j, key, path, false, &s, err, errlen);

	if (r == -ENOENT)
		return 0;
	if (r)
		return r;
	if (!*s && allow_empty) {
		out[0] = '\0';
		return 0;
	}
	if (s[0] != '/')
		return np_json_fail(err, errlen, path, key,
				    "\"%s\" must be an absolute path", s);
	for (const char *q = strstr(s, "/.."); q; q = strstr(q + 1, "/.."))
		if (q[3] == '/' || q[3] == '\0')
			return np_json_fail(err, errlen, path, key,
					    "\"%s\" must not contain \"..\"", s);
	if (strlen(s) >= len)
		return np_json_fail(err, errlen, path, key,
				    "longer than %zu characters", len - 1);
	snprintf(out, len, "%s", s);
	return 0;
}

static int abs_path(const json_t *j, const char *key, char *out, size_t len,
		    bool allow_empty, char *err, size_t errlen)
{
	return abs_path_in(j, "config", key, out, len, allow_empty, err,
			   errlen);
}

/* A cgroup path relative to the cgroup root. */
static int rel_cgroup(const char *s, const char *key, char *out, size_t len,
		      char *err, size_t errlen)
{
	const char *p = s;
	if (strlen(s) >= len)
		return np_json_fail(err, errlen, "config", key,
				    "longer than %zu characters", len - 1);
	if (!*s || *s == '/')
		return np_json_fail(err, errlen, "config", key,
				    "\"%s\" must be a non-empty path relative "
				    "to the cgroup root",
				    s);
	while (*p) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 0 || (n == 1 && *p == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return np_json_fail(err, errlen, "config", key,
					    "\"%s\" has an empty, \".\" or "
					    "\"..\" component",
					    s);
		if (n > 255)
			return np_json_fail(err, errlen, "config", key,
					    "a component is %zu bytes, longer "
					    "than 255 (NAME_MAX)",
					    n);
		p += n + (e ? 1 : 0);
	}
	snprintf(out, len, "%s", s);
	return 0;
}

static int shared_from_json(struct np_config *n, const json_t *v, char *err,
			    size_t errlen)
{
	size_t i;
	const json_t *e;
	int r;

	if (!v || json_is_null(v))
		return 0;
	n->shared_set = true;
	if (!json_is_array(v) || json_array_size(v) > NP_MAX_SHARED_CGROUPS)
		return np_json_fail(err, errlen, "config", "shared_cgroups",
				    "expected an array of at most %d cgroup "
				    "paths",
				    NP_MAX_SHARED_CGROUPS);
	json_array_foreach(v, i, e)
	{
		char key[48];
		snprintf(key, sizeof(key), "shared_cgroups[%zu]", i);
		if (!json_is_string(e))
			return np_json_fail(err, errlen, "config", key,
					    "expected a string");
		if ((r = rel_cgroup(json_string_value(e), key,
				    n->shared_cgroups[n->nshared], NP_PATH_MAX,
				    err, errlen)))
			return r;
		n->nshared++;
	}
	return 0;
}

const char *const np_cfg_drivers[] = {"auto", "systemd", "cgroupfs", NULL};

/* Under systemd the managed parent is a slice (the delegated scope of the
 * workloads goes into it) and host cgroups are units. */
int np_config_check_systemd(const struct np_config *n, char *err,
			    size_t errlen)
{
	char unit[256], e2[512];
	int r;

	if (n->fake_cgroup_root)
		return np_json_fail(err, errlen, "config", "cgroup_driver",
				    "\"systemd\" cannot use a fake_cgroup_root");
	if (strchr(n->cgroup_parent, '/') ||
	    np_systemd_unit_check(n->cgroup_parent, e2, sizeof(e2)) ||
	    strlen(n->cgroup_parent) < 7 ||
	    strcmp(n->cgroup_parent + strlen(n->cgroup_parent) - 6, ".slice"))
		return np_json_fail(err, errlen, "config", "cgroup_parent",
				    "under cgroup_driver \"systemd\" it names "
				    "a slice unit (such as \"numaplace.slice\"), "
				    "not \"%s\"",
				    n->cgroup_parent);
	for (int i = 0; i < n->nshared; i++)
		if ((r = np_systemd_unit_of_cgroup(n->shared_cgroups[i], unit,
						   sizeof(unit), e2,
						   sizeof(e2)))) {
			char key[48];
			snprintf(key, sizeof(key), "shared_cgroups[%d]", i);
			return np_json_fail(err, errlen, "config", key, "%s",
					    e2);
		}
	return 0;
}

static int driver_from_json(struct np_config *n, const json_t *j, char *err,
			    size_t errlen)
{
	const char *s;
	int r = np_json_str(j, "cgroup_driver", "config", false, &s, err,
			    errlen);

	if (r == -ENOENT)
		return 0;
	if (r)
		return r;
	for (int i = 0; np_cfg_drivers[i]; i++)
		if (!strcmp(s, np_cfg_drivers[i])) {
			n->driver = (enum np_cgroup_driver)i;
			return n->driver == NP_DRIVER_SYSTEMD
				   ? np_config_check_systemd(n, err, errlen)
				   : 0;
		}
	return np_json_fail(err, errlen, "config", "cgroup_driver",
			    "\"%s\": expected \"auto\", \"systemd\" or "
			    "\"cgroupfs\"",
			    s);
}

const char *np_cgroup_driver_name(enum np_cgroup_driver d)
{
	return np_cfg_drivers[d];
}

const char *const np_cfg_host_isolations[] = {"partition", "exclusive",
					      "off", NULL};

const char *np_host_isolation_name(enum np_host_isolation h)
{
	return np_cfg_host_isolations[h];
}

/* key: one of names (NULL-terminated); *out its index. Absent: 0 and
 * *out untouched. The error lists the names. */
static int name_from_json(const json_t *j, const char *key,
			  const char *const *names, int *out, char *err,
			  size_t errlen)
{
	char list[256] = "";
	size_t used = 0;
	const char *s;
	int r = np_json_str(j, key, "config", false, &s, err, errlen);

	if (r == -ENOENT)
		return 0;
	if (r)
		return r;
	for (int i = 0; names[i]; i++) {
		if (!strcmp(s, names[i])) {
			*out = i;
			return 0;
		}
		used += (size_t)snprintf(list + used, sizeof(list) - used,
					 "%s\"%s\"", i ? ", " : "", names[i]);
		if (used >= sizeof(list))
			break;
	}
	return np_json_fail(err, errlen, "config", key,
			    "\"%.64s\": expected one of %s", s, list);
}

static int host_isolation_from_json(struct np_config *n, const json_t *j,
				    char *err, size_t errlen)
{
	int i = (int)n->host_isolation,
	    r = name_from_json(j, "host_isolation", np_cfg_host_isolations, &i, err,
			       errlen);
	n->host_isolation = (enum np_host_isolation)i;
	return r;
}

const char *const np_cfg_cpu_offline_actions[] = {"report", "replace", NULL};

const char *np_cpu_offline_name(enum np_cpu_offline a)
{
	return np_cfg_cpu_offline_actions[a];
}

/* The host units confined under systemd when shared_cgroups is not
 * given (those that do not exist are pending). */
void np_config_systemd_defaults(struct np_config *c)
{
	static const char *const units[] = {"system.slice", "user.slice",
					    "init.scope", "machine.slice"};
	if (c->shared_set)
		return;
	c->nshared = 0;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		snprintf(c->shared_cgroups[c->nshared++], NP_PATH_MAX, "%s",
			 units[i]);
}

/* Is a (component-wise) b, or above it? */
static bool path_within(const char *a, const char *b)
{
	size_t n = strlen(a);
	while (n > 1 && a[n - 1] == '/')
		n--;
	return !strncmp(a, b, n) && (b[n] == '\0' || b[n] == '/');
}

static int metrics_from_json(struct np_config *n, const json_t *j, char *err,
			     size_t errlen)
{
	static const char *const keys[] = {"listen", NULL};
	const json_t *m = json_object_get(j, "metrics");
	struct np_metrics_addr a;
	const char *s;
	char why[256];
	int r;

	if (!m || json_is_null(m))
		return 0;
	if (!json_is_object(m))
		return np_json_fail(err, errlen, "config", "metrics",
				    "expected an object {\"listen\": "
				    "\"127.0.0.1:9464\"}");
	if ((r = np_json_only_keys(m, keys, "config.metrics", err, errlen)))
		return r;
	r = np_json_str(m, "listen", "config.metrics", false, &s, err, errlen);
	if (r == -ENOENT)
		return 0;
	if (r)
		return r;
	if (strlen(s) >= sizeof(n->metrics_listen))
		return np_json_fail(err, errlen, "config.metrics", "listen",
				    "too long");
	if (*s && np_metrics_addr_parse(s, &a, why, sizeof(why)))
		return np_json_fail(err, errlen, "config.metrics", "listen",
				    "%s", why);
	snprintf(n->metrics_listen, sizeof(n->metrics_listen), "%s", s);
	return 0;
}

static int defrag_from_json(struct np_config *n, const json_t *j, char *err,
			    size_t errlen)
{
	static const char *const keys[] = {"auto", "max_moves", NULL};
	const json_t *o = json_object_get(j, "defrag"), *m;
	int r;

	if (!o || json_is_null(o))
		return 0;
	if (!json_is_object(o))
		return np_json_fail(err, errlen, "config", "defrag",
				    "expected an object {\"auto\": false, "
				    "\"max_moves\": 2}");
	if ((r = np_json_only_keys(o, keys, "config.defrag", err, errlen)))
		return r;
	r = np_json_bool(o, "auto", "config.defrag", false, &n->defrag.auto_,
			 err, errlen);
	if (r && r != -ENOENT)
		return r;
	m = json_object_get(o, "max_moves");
	if (m && (!json_is_integer(m) || json_integer_value(m) < 1 ||
		  json_integer_value(m) > 4))
		return np_json_fail(err, errlen, "config.defrag", "max_moves",
				    "expected an integer 1..4");
	if (m)
		n->defrag.max_moves = (int)json_integer_value(m);
	return 0;
}

/* A number of seconds min..max at key (absent: *ms unchanged). */
static int seconds(const json_t *j, const char *key, double min, double max,
		   unsigned *ms, char *err, size_t errlen)
{
	const json_t *v = json_object_get(j, key);
	double d = v && json_is_number(v) ? json_number_value(v) : -1;

	if (!v || json_is_null(v))
		return 0;
	if (d < min || d > max)
		return np_json_fail(err, errlen, "config", key,
				    "expected a number of seconds %g..%g", min,
				    max);
	*ms = (unsigned)(d * 1000 + 0.5);
	return 0;
}

static int oci_hook_from_json(struct np_config *n, const json_t *j,
			      char *err, size_t errlen)
{
	static const char *const keys[] = {"timeout_ms", "on_failure",
					   "log_file", "policy", NULL};
	const json_t *o = json_object_get(j, "oci_hook"), *t;
	const char *s;
	int r;

	if (!o || json_is_null(o))
		return 0;
	if (!json_is_object(o))
		return np_json_fail(err, errlen, "config", "oci_hook",
				    "expected an object {\"timeout_ms\": 2000, "
				    "\"on_failure\": \"fail-open\"}");
	if ((r = np_json_only_keys(o, keys, "config.oci_hook", err, errlen)))
		return r;
	t = json_object_get(o, "timeout_ms");
	if (t && (!json_is_integer(t) || json_integer_value(t) < 100 ||
		  json_integer_value(t) > 60000))
		return np_json_fail(err, errlen, "config.oci_hook",
				    "timeout_ms", "expected an integer "
				    "100..60000 (milliseconds)");
	if (t)
		n->oci_hook.timeout_ms = (unsigned)json_integer_value(t);
	r = np_json_str(o, "on_failure", "config.oci_hook", false, &s, err,
			errlen);
	if (r == 0 && np_oci_failure_parse(s, &n->oci_hook.on_failure) < 0)
		return np_json_fail(err, errlen, "config.oci_hook",
				    "on_failure",
				    "\"%s\" is not fail-open or fail-closed", s);
	if ((r && r != -ENOENT) ||
	    (r = np_oci_policy_from_json(&n->oci_hook.policy,
					 json_object_get(o, "policy"),
					 "config.oci_hook.policy", err, errlen)))
		return r;
	return abs_path_in(o, "config.oci_hook", "log_file",
			   n->oci_hook.log_file, sizeof(n->oci_hook.log_file),
			   true, err, errlen);
}

static int export_from_json(struct np_config *n, const json_t *j, char *err,
			    size_t errlen)
{
	static const char *const keys[] = {"node_name", "nrt_file",
					   "koordinator_file", NULL};
	const json_t *e = json_object_get(j, "export");
	const char *s;
	int r;

	if (!e || json_is_null(e))
		return 0;
	if (!json_is_object(e))
		return np_json_fail(err, errlen, "config", "export",
				    "expected an object {\"nrt_file\": PATH, "
				    "\"koordinator_file\": PATH, "
				    "\"node_name\": NAME}");
	if ((r = np_json_only_keys(e, keys, "config.export", err, errlen)))
		return r;
	r = np_json_str(e, "node_name", "config.export", false, &s, err, errlen);
	if (r == 0) {
		if (*s && !np_export_node_name_ok(s))
			return np_json_fail(err, errlen, "config.export",
					    "node_name",
					    "\"%.64s\" is not a node name (at "
					    "most 253 of a-z, 0-9, '-' and "
					    "'.', alphanumeric at both ends)",
					    s);
		snprintf(n->export_.node_name, sizeof(n->export_.node_name),
			 "%s", s);
	} else if (r != -ENOENT) {
		return r;
	}
	if ((r = abs_path_in(e, "config.export", "nrt_file",
			     n->export_.nrt_file, sizeof(n->export_.nrt_file),
			     true, err, errlen)) ||
	    (r = abs_path_in(e, "config.export", "koordinator_file",
			     n->export_.koordinator_file,
			     sizeof(n->export_.koordinator_file), true, err,
			     errlen)))
		return r;
	return 0;
}

/* Places that must stay apart: the spec and state directories (a state
 * file read as a spec, specs rewritten with the state), and the managed
 * parent and the host cgroups confined to the shared pool (the parent
 * holds the exclusive CPUs); the export files outside both directories. */
/* "run_dir" (absolute; default the socket's directory), and
 * "placement_files" (default true). */
static int run_dir_from_json(struct np_config *n, const json_t *j, char *err,
			     size_t errlen)
{
	int r = np_json_bool(j, "placement_files", "config", false,
			     &n->placement_files, err, errlen);
	char *slash;

	if (r && r != -ENOENT)
		return r;
	if (json_object_get(j, "run_dir"))
		return abs_path(j, "run_dir", n->run_dir, sizeof(n->run_dir),
				false, err, errlen);
	snprintf(n->run_dir, sizeof(n->run_dir), "%s", n->socket_path);
	slash = strrchr(n->run_dir, '/');
	if (slash)
		*(slash == n->run_dir ? slash + 1 : slash) = '\0';
	return 0;
}

static int check_overlaps(const struct np_config *n, char *err, size_t errlen)
{
	if (path_within(n->spec_dir, n->state_dir) ||
	    path_within(n->state_dir, n->spec_dir))
		return np_json_fail(err, errlen, "config", "state_dir",
				    "\"%s\" and spec_dir \"%s\" must be apart "
				    "(neither in the other)",
				    n->state_dir, n->spec_dir);
	/* one directory for both would take the records for an older
	 * release's and remove them; in spec_dir they would be specs */
	if (path_within(n->spec_dir, n->runtime_dir) ||
	    path_within(n->runtime_dir, n->spec_dir) ||
	    path_within(n->runtime_dir, n->state_dir) ||
	    path_within(n->state_dir, n->runtime_dir))
		return np_json_fail(err, errlen, "config", "runtime_dir",
				    "\"%s\" must be apart from state_dir "
				    "\"%s\" and spec_dir \"%s\" (neither in "
				    "the other)",
				    n->runtime_dir, n->state_dir, n->spec_dir);
	for (int i = 0; i < 2; i++) {
		const char *f = i ? n->export_.koordinator_file
				  : n->export_.nrt_file;
		if (*f && (path_within(n->spec_dir, f) ||
			   path_within(n->state_dir, f) ||
			   (i && !strcmp(f, n->export_.nrt_file))))
			return np_json_fail(err, errlen, "config.export",
					    i ? "koordinator_file" : "nrt_file",
					    "\"%s\" is inside spec_dir or "
					    "state_dir, or both files are one",
					    f);
	}
	for (int i = 0; i < n->nshared; i++) {
		char key[48];
		if (!path_within(n->shared_cgroups[i], n->cgroup_parent) &&
		    !path_within(n->cgroup_parent, n->shared_cgroups[i]))
			continue;
		snprintf(key, sizeof(key), "shared_cgroups[%d]", i);
		return np_json_fail(err, errlen, "config", key,
				    "\"%s\" is, holds or is inside "
				    "cgroup_parent \"%s\": the workloads' "
				    "exclusive CPUs are there",
				    n->shared_cgroups[i], n->cgroup_parent);
	}
	return 0;
}

int np_config_from_json(struct np_config *c, const json_t *j, char *err,
			size_t errlen)
{
	static const char *const keys[] = {
		"node_policy",	    "topology",	       "reconcile_period_s",
		"cgroup_root",	    "cgroup_parent",   "shared_cgroups",
		"create_cgroups",   "spec_dir",	       "state_dir",
		"socket",	    "bpf_pin_path",    "fake_cgroup_root",
		"verify",	    "cgroup_driver",   "host_isolation",
		"on_cpu_offline",   "cpu_online_file", "metrics",
		"export",	    "defrag",	       "oci_hook",
		"reconcile_full_scan_s", "run_dir",    "placement_files",
		"be_suppress",	    "proc_stat_file",  "socket_read_group",
		"runtime_dir",	    NULL};
	struct np_config n;
	const char *s;
	int r;

	np_config_defaults(&n);
	if ((r = np_json_only_keys(j, keys, "config", err, errlen)))
		return r;
	if ((r = np_policy_from_json(&n.policy, json_object_get(j, "node_policy"),
				     "config.node_policy", err, errlen)))
		return r;
	r = np_json_str(j, "topology", "config", false, &s, err, errlen);
	if (r == 0) {
		if (!*s || strlen(s) >= sizeof(n.topology))
			return np_json_fail(err, errlen, "config", "topology",
					    "must be \"live\", \"xml:PATH\", "
					    "\"synthetic:DESC\" or a JSON file");
		snprintf(n.topology, sizeof(n.topology), "%s", s);
	} else if (r != -ENOENT) {
		return r;
	}
	if ((r = seconds(j, "reconcile_period_s", 0.1, 3600,
			 &n.reconcile_period_ms, err, errlen)) ||
	    (r = seconds(j, "reconcile_full_scan_s", 0, 86400,
			 &n.full_scan_ms, err, errlen)))
		return r;
	if ((r = abs_path(j, "cgroup_root", n.cgroup_root, sizeof(n.cgroup_root),
			  true, err, errlen)))
		return r;
	r = np_json_str(j, "cgroup_parent", "config", false, &s, err, errlen);
	if (r == 0) {
		if ((r = rel_cgroup(s, "cgroup_parent", n.cgroup_parent,
				    sizeof(n.cgroup_parent), err, errlen)))
			return r;
	} else if (r != -ENOENT) {
		return r;
	}
	if ((r = shared_from_json(&n, json_object_get(j, "shared_cgroups"),
				  err, errlen)))
		return r;
	r = np_json_bool(j, "create_cgroups", "config", false, &n.create_cgroups,
			 err, errlen);
	if (r && r != -ENOENT)
		return r;
	r = np_json_bool(j, "fake_cgroup_root", "config", false,
			 &n.fake_cgroup_root, err, errlen);
	if (r && r != -ENOENT)
		return r;
	if (n.fake_cgroup_root && !n.cgroup_root[0])
		return np_json_fail(err, errlen, "config", "fake_cgroup_root",
				    "needs an explicit cgroup_root");
	if ((r = driver_from_json(&n, j, err, errlen)) ||
	    (r = host_isolation_from_json(&n, j, err, errlen)))
		return r;
	{
		int a = (int)n.on_cpu_offline;
		r = name_from_json(j, "on_cpu_offline", np_cfg_cpu_offline_actions, &a,
				   err, errlen);
		n.on_cpu_offline = (enum np_cpu_offline)a;
		if (r)
			return r;
	}
	/* Followed by default only when the topology is this machine's. */
	if (!json_object_get(j, "cpu_online_file") &&
	    !strcmp(n.topology, "live"))
		snprintf(n.cpu_online_file, sizeof(n.cpu_online_file),
			 "/sys/devices/system/cpu/online");
	if ((r = abs_path(j, "cpu_online_file", n.cpu_online_file,
			  sizeof(n.cpu_online_file), true, err, errlen)))
		return r;
	if ((r = abs_path(j, "spec_dir", n.spec_dir, sizeof(n.spec_dir), false,
			  err, errlen)) ||
	    (r = abs_path(j, "proc_stat_file", n.proc_stat_file,
			  sizeof(n.proc_stat_file), false, err, errlen)) ||
	    (r = abs_path(j, "state_dir", n.state_dir, sizeof(n.state_dir),
			  false, err, errlen)) ||
	    (r = abs_path(j, "runtime_dir", n.runtime_dir,
			  sizeof(n.runtime_dir), false, err, errlen)) ||
	    (r = abs_path(j, "socket", n.socket_path, sizeof(n.socket_path),
			  false, err, errlen)) ||
	    (r = abs_path(j, "bpf_pin_path", n.bpf_pin_path,
			  sizeof(n.bpf_pin_path), false, err, errlen)))
		return r;
	if ((r = run_dir_from_json(&n, j, err, errlen)) ||
	    (r = verify_from_json(&n.verify, json_object_get(j, "verify"), err,
				  errlen)) ||
	    (r = metrics_from_json(&n, j, err, errlen)) ||
	    (r = export_from_json(&n, j, err, errlen)) ||
	    (r = defrag_from_json(&n, j, err, errlen)) ||
	    (r = oci_hook_from_json(&n, j, err, errlen)) ||
	    (r = np_config_read_group_from_json(&n, j, err, errlen)) ||
	    (r = np_suppress_config_from_json(&n.be_suppress,
					      json_object_get(j, "be_suppress"),
					      "config.be_suppress", err,
					      errlen)))
		return r;
	if ((r = check_overlaps(&n, err, errlen)))
		return r;
	/* sun_path is 108 bytes */
	if (strlen(n.socket_path) >= 108)
		return np_json_fail(err, errlen, "config", "socket",
				    "longer than 107 characters (a Unix socket "
				    "path limit)");
	*c = n;
	return 0;
}

int np_config_load(struct np_config *c, const char *path, char *err,
		   size_t errlen)
{
	_cleanup_free_ char *text = NULL;
	json_error_t jerr;
	size_t len;
	json_t *j;
	int r;

	/* a configuration anyone but root may write could grant anything */
	if ((r = np_trust_read("", path, NP_CONFIG_MAX_SIZE, &text, &len, err,
			       errlen)))
		return r == -EPERM ? r : -EINVAL; /* as a file not JSON */
	if (!(j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr))) {
		snprintf(err, errlen, "%s: line %d column %d: %s",
			 np_echo(path), jerr.line, jerr.column, jerr.text);
		return -EINVAL;
	}
	r = np_config_from_json(c, j, err, errlen);
	json_decref(j);
	return r;
}
