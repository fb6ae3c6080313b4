// SPDX-License-Identifier: Apache-2.0
/* containerd's NRI v0.1 Request and Result, the pure part (numaplace/nri.h):
 * the request's spec becomes the OCI hook's state and config.json
 * (oci.c), its names put back in the errors. */
#include "numaplace/nri.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/json_util.h"
#include "numaplace/cleanup.h"
#include "numaplace/error.h"
#include "numaplace/names.h"

#define PID_LIMIT 4194304 /* PID_MAX_LIMIT on 64-bit, as the hook's */

static const char *const state_names[] = {
	[NP_NRI_CREATE] = "create", [NP_NRI_DELETE] = "delete",
	[NP_NRI_UPDATE] = "update", [NP_NRI_PAUSE] = "pause",
	[NP_NRI_RESUME] = "resume",
};
static const char *const pause_names[] = {
	[NP_NRI_PAUSE_IGNORE] = "ignore", [NP_NRI_PAUSE_SHARED] = "shared",
};
static const char *const match_names[] = {
	[NP_NRI_MATCH_ANNOTATED] = "annotated", [NP_NRI_MATCH_ALL] = "all",
};

const char *np_nri_state_name(enum np_nri_state s)
{
	return NP_NAME_OF(state_names, s);
}

/* ---- names in messages ---- */

/* Each occurrence of from in msg replaced by to (to no longer than from,
 * so the message never grows). */
static void replace_all(char *msg, const char *from, const char *to)
{
	size_t fl = strlen(from), tl = strlen(to);
	char *p = msg;

	while ((p = strstr(p, from))) {
		memmove(p + tl, p + fl, strlen(p + fl) + 1);
		memcpy(p, to, tl);
		p += tl;
	}
}

void np_nri_field_names(char *msg, size_t len)
{
	/* each name no longer than the one it replaces */
	static const char *const map[][2] = {
		{"config.json: linux.resources", "spec.resources"},
		{"config.json linux.resources", "spec.resources"},
		{"config.json: linux.cgroupsPath", "spec.cgroupsPath"},
		{"from linux.cgroupsPath", "from spec.cgroupsPath"},
		{"config.json: linux", "spec"},
		{"the annotations and config.json", "the annotations and resources"},
		{"state.id", "id"},
		{"state.pid", "pid"},
	};

	if (!len)
		return;
	msg[len - 1] = '\0';
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		replace_all(msg, map[i][0], map[i][1]);
}

/* ---- the request ---- */

/* An optional object whose values are all strings: -ENOENT when absent
 * or null. */
static int string_map(const json_t *o, const char *key, const char *path,
		      const json_t **out, char *err, size_t errlen)
{
	const json_t *m = json_object_get(o, key), *v;
	const char *k;

	*out = NULL;
	if (!m || json_is_null(m))
		return -ENOENT;
	if (!json_is_object(m))
		return np_json_fail(err, errlen, path, key,
				    "expected an object of strings");
	json_object_foreach((json_t *)m, k, v)
	{
		if (!json_is_string(v))
			return np_errf(err, errlen, -EINVAL,
				       "%s%s%s.%.200s: expected a string",
				       path, *path ? "." : "", key, np_echo(k));
	}
	*out = m;
	return 0;
}

/* An optional id: "" when absent. */
static int id_field(const json_t *j, const char *key, bool required,
		    char *out, size_t outlen, char *err, size_t errlen)
{
	const char *s;
	int r = np_json_str(j, key, "", required, &s, err, errlen);

	if (r)
		return r == -ENOENT ? 0 : r;
	if (!np_container_id_ok(s))
		return np_json_fail(err, errlen, "", key,
				    "\"%.64s\" is not a container id (1..%d of "
				    "[A-Za-z0-9_.+-], starting with a letter "
				    "or digit)",
				    s, NP_OCI_ID_MAX);
	snprintf(out, outlen, "%s", s);
	return 0;
}

static int abs_path(const json_t *o, const char *key, char *out,
		    size_t outlen, char *err, size_t errlen)
{
	const char *s;
	int r = np_json_str(o, key, "conf", false, &s, err, errlen);

	if (r)
		return r == -ENOENT ? 0 : r;
	if (s[0] != '/' || strlen(s) >= outlen)
		return np_json_fail(err, errlen, "conf", key,
				    "\"%.200s\" is not an absolute path of at "
				    "most %zu bytes",
				    s, outlen - 1);
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			return np_json_fail(err, errlen, "conf", key,
					    "holds a byte that is not "
					    "printable ASCII (0x%02x)",
					    (unsigned char)*p);
	snprintf(out, outlen, "%s", s);
	return 0;
}

static int name_field(const json_t *o, const char *key,
		      const char *const *names, int n, int *out,
		      const char *expect, char *err, size_t errlen)
{
	const char *s;
	int r = np_json_str(o, key, "conf", false, &s, err, errlen), i;

	if (r)
		return r == -ENOENT ? 0 : r;
	if ((i = np_name_find(names, n, s)) < 0)
		return np_json_fail(err, errlen, "conf", key,
				    "\"%.64s\" is not %s", s, expect);
	*out = i;
	return 0;
}

/* "conf": this plugin's object in /etc/nri/conf.json (absent: defaults). */
static int parse_conf(struct np_nri_conf *c, const json_t *j, char *err,
		      size_t errlen)
{
	static const char *const keys[] = {"pause", "containers", "config",
					   "socket", NULL};
	const json_t *o = json_object_get(j, "conf");
	int pause = NP_NRI_PAUSE_IGNORE, match = NP_NRI_MATCH_ANNOTATED, r;

	if (!o || json_is_null(o))
		return 0;
	if (!json_is_object(o))
		return np_json_fail(err, errlen, "", "conf",
				    "expected an object (this plugin's \"conf\" "
				    "in /etc/nri/conf.json)");
	if ((r = np_json_only_keys(o, keys, "conf", err, errlen)) ||
	    (r = name_field(o, "pause", pause_names, NP_NAMES_LEN(pause_names),
			    &pause, "ignore or shared", err, errlen)) ||
	    (r = name_field(o, "containers", match_names,
			    NP_NAMES_LEN(match_names), &match,
			    "annotated or all", err, errlen)) ||
	    (r = abs_path(o, "config", c->config, sizeof(c->config), err,
			  errlen)) ||
	    (r = abs_path(o, "socket", c->socket, sizeof(c->socket), err,
			  errlen)))
		return r;
	c->pause = (enum np_nri_pause_mode)pause;
	c->containers = (enum np_nri_match)match;
	return 0;
}

static int parse_pid(struct np_nri_request *rq, const json_t *j, char *err,
		     size_t errlen)
{
	const json_t *p = json_object_get(j, "pid");
	bool create = rq->state == NP_NRI_CREATE;

	/* omitted when 0 (Go's omitempty); a stale one on delete */
	if (!create && (!p || json_is_null(p)))
		return 0;
	if (!p || !json_is_integer(p))
		return np_json_fail(err, errlen, "", "pid",
				    "expected the task's process id (an integer "
				    "1..%d)",
				    PID_LIMIT);
	if (json_integer_value(p) < (create ? 1 : 0) ||
	    json_integer_value(p) > PID_LIMIT)
		return np_json_fail(err, errlen, "", "pid",
				    "%lld is not a process id (1..%d)",
				    (long long)json_integer_value(p), PID_LIMIT);
	rq->st.pid = (int)json_integer_value(p);
	return 0;
}

/* labels, results and spec.namespaces: only checked (numaplace reads
 * none of them). */
static int parse_unused(const json_t *j, const json_t *spec, char *err,
			size_t errlen)
{
	const json_t *m, *res = json_object_get(j, "results"), *v;
	size_t i;
	int r;

	if ((r = string_map(j, "labels", "", &m, err, errlen)) != -ENOENT &&
	    r)
		return r;
	if (spec &&
	    (r = string_map(spec, "namespaces", "spec", &m, err, errlen)) !=
		-ENOENT &&
	    r)
		return r;
	if (!res || json_is_null(res))
		return 0;
	if (!json_is_array(res))
		return np_json_fail(err, errlen, "", "results",
				    "expected an array of Results");
	json_array_foreach(res, i, v)
	{
		if (!json_is_object(v))
			return np_errf(err, errlen, -EINVAL,
				       "results[%zu]: expected a Result object",
				       i);
	}
	return 0;
}

/* spec.cgroupsPath and spec.resources through config.json's parser. */
static int parse_spec_config(struct np_nri_request *rq, const json_t *spec,
			     char *err, size_t errlen)
{
	_cleanup_json_ json_t *cfg = NULL;
	_cleanup_free_ char *text = NULL;
	const json_t *res = json_object_get(spec, "resources");
	const json_t *cp = json_object_get(spec, "cgroupsPath");
	json_t *lin;
	int r;

	if (cp && !json_is_null(cp) && !json_is_string(cp))
		return np_json_fail(err, errlen, "spec", "cgroupsPath",
				    "expected a string");
	if (res && !json_is_null(res) && !json_is_object(res))
		return np_json_fail(err, errlen, "spec", "resources",
				    "expected an object (the OCI "
				    "linux.resources) or null");
	if (!(cfg = json_pack("{s:{}}", "linux")))
		return -ENOMEM;
	lin = json_object_get(cfg, "linux");
	if ((json_is_string(cp) &&
	     json_object_set(lin, "cgroupsPath", (json_t *)cp)) ||
	    (json_is_object(res) &&
	     json_object_set(lin, "resources", (json_t *)res)) ||
	    !(text = json_dumps(cfg, JSON_COMPACT)))
		return -ENOMEM;
	r = np_oci_config_parse(&rq->oc, text, strlen(text), err, errlen);
	if (!r && rq->oc.cgroups_path[0])
		r = np_oci_cgroups_path(rq->oc.cgroups_path, &rq->cgroup, err,
					errlen);
	if (r)
		np_nri_field_names(err, errlen);
	return r;
}

static int parse_spec(struct np_nri_request *rq, const json_t *j, char *err,
		      size_t errlen)
{
	const json_t *spec = json_object_get(j, "spec"), *an;
	int r;

	if ((!spec || json_is_null(spec)) && rq->state != NP_NRI_CREATE)
		spec = NULL;
	else if (!json_is_object(spec))
		return np_json_fail(err, errlen, "", "spec",
				    "expected an object (the container's "
				    "resources, cgroupsPath and annotations)");
	r = spec ? string_map(spec, "annotations", "spec", &an, err, errlen)
		 : -ENOENT;
	if (r && r != -ENOENT)
		return r;
	rq->st.annotations = r ? json_object() : json_incref((json_t *)an);
	if (!rq->st.annotations)
		return -ENOMEM;
	/* containerd names the pod's namespace io.kubernetes.cri.sandbox-
	 * namespace; CRI-O's key can only be a pod's own annotation let
	 * through by pod_annotations, which must not choose the policy rule */
	json_object_del(rq->st.annotations, "io.kubernetes.pod.namespace");
	/* the rest of a request that is not numaplace's is neither read nor
	 * judged: a field numaplace would refuse must not fail the start of
	 * a container it does not manage */
	if (!np_nri_ours(rq)) {
		rq->oc.annotations = json_object();
		return rq->oc.annotations ? 0 : -ENOMEM;
	}
	if ((r = parse_pid(rq, j, err, errlen)) ||
	    (r = parse_unused(j, spec, err, errlen)))
		return r;
	if (!spec) {
		rq->oc.annotations = json_object();
		return rq->oc.annotations ? 0 : -ENOMEM;
	}
	return parse_spec_config(rq, spec, err, errlen);
}

static json_t *load(const char *buf, size_t len, char *err, size_t errlen)
{
	json_error_t je;
	json_t *j;

	if (len == 0) {
		np_errmsg(err, errlen, "request: empty input (containerd "
				       "writes one JSON Request on stdin)");
		return NULL;
	}
	if (!(j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je))) {
		np_errmsg(err, errlen,
			  "request: invalid JSON at line %d column %d: %s",
			  je.line, je.column, je.text);
		return NULL;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		np_errmsg(err, errlen, "request: expected a JSON object");
		return NULL;
	}
	return j;
}

int np_nri_request_parse(struct np_nri_request *rq, const char *buf,
			 size_t len, char *err, size_t errlen)
{
	_cleanup_json_ json_t *j = NULL;
	const char *s;
	int r, i;

	memset(rq, 0, sizeof(*rq));
	rq->oc.limit_milli = rq->oc.request_milli = rq->oc.memory = -1;
	snprintf(rq->st.status, sizeof(rq->st.status), "created");
	if (!(j = load(buf, len, err, errlen)))
		return -EINVAL;
	r = np_json_str(j, "version", "", false, &s, err, errlen);
	if (r == 0 && strlen(s) >= sizeof(rq->version))
		return np_json_fail(err, errlen, "", "version",
				    "longer than %zu bytes",
				    sizeof(rq->version) - 1);
	if (r && r != -ENOENT)
		return r;
	snprintf(rq->version, sizeof(rq->version), "%s", r ? "" : s);
	if ((r = np_json_str(j, "state", "", true, &s, err, errlen)))
		return r;
	if ((i = NP_NAME_FIND(state_names, s)) < 0)
		return np_json_fail(err, errlen, "", "state",
				    "\"%.32s\" is not create, delete, update, "
				    "pause or resume",
				    s);
	rq->state = (enum np_nri_state)i;
	if ((r = id_field(j, "id", true, rq->st.id, sizeof(rq->st.id), err,
			  errlen)) ||
	    (r = id_field(j, "sandboxID", false, rq->sandbox_id,
			  sizeof(rq->sandbox_id), err, errlen)) ||
	    (r = parse_conf(&rq->conf, j, err, errlen)))
		return r;
	rq->sandbox = !strcmp(rq->st.id, rq->sandbox_id);
	return parse_spec(rq, j, err, errlen);
}

void np_nri_request_free(struct np_nri_request *rq)
{
	np_oci_state_free(&rq->st);
	np_oci_config_free(&rq->oc);
}

bool np_nri_ours(const struct np_nri_request *rq)
{
	if (rq->state != NP_NRI_CREATE && rq->state != NP_NRI_DELETE)
		return false; /* update, pause, resume: nothing changes */
	if (rq->sandbox && rq->conf.pause == NP_NRI_PAUSE_IGNORE)
		return false;
	return rq->conf.containers == NP_NRI_MATCH_ALL || np_nri_annotated(rq);
}

bool np_nri_annotated(const struct np_nri_request *rq)
{
	const char *k;
	json_t *v;

	json_object_foreach(rq->st.annotations, k, v)
	{
		if (!strncmp(k, "numaplace.io/", 13) ||
		    !strcmp(k, "koordinator.sh/qosClass") ||
		    !strcmp(k, "scheduling.koordinator.sh/resource-spec"))
			return true;
	}
	return false;
}

int np_nri_pause_only(struct np_nri_request *rq)
{
	json_t *a = rq->st.annotations, *v, *keep = json_object();
	const char *k;

	if (!keep)
		return -ENOMEM;
	json_object_foreach(a, k, v)
	{
		bool ours = !strncmp(k, "numaplace.io/", 13) ||
			    !strcmp(k, "koordinator.sh/qosClass") ||
			    !strcmp(k, "scheduling.koordinator.sh/resource-spec");
		if ((!ours || !strcmp(k, "numaplace.io/on-failure")) &&
		    json_object_set(keep, k, v)) {
			json_decref(keep);
			return -ENOMEM;
		}
	}
	json_decref(rq->st.annotations);
	rq->st.annotations = keep;
	return 0;
}

json_t *np_nri_result(const char *version, const char *error,
		      const char *workload, const char *cpuset)
{
	json_t *r = json_pack("{s:s,s:s}", "plugin", NP_NRI_PLUGIN, "version",
			      version ? version : "");
	char text[4096];

	/* printable ASCII: a message may quote a tenant's bytes, and JSON
	 * takes only UTF-8 */
	snprintf(text, sizeof(text), "%s", error ? error : "");
	for (char *p = text; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
	if (r && error && json_object_set_new(r, "error", json_string(text)))
		goto nomem;
	if (r && !error && workload &&
	    json_object_set_new(r, "metadata",
				json_pack("{s:s,s:s}", "workload", workload,
					  "cpuset", cpuset ? cpuset : "")))
		goto nomem;
	return r;
nomem:
	json_decref(r);
	return NULL;
}
