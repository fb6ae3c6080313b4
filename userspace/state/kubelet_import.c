// SPDX-License-Identifier: Apache-2.0
/*
 * Import of the kubelet's CPU Manager checkpoint (cpu_manager_state, V1 to
 * V4): read, parse and validate the structure; the adoption of each pod's
 * exclusive CPUs as a numaplace workload is in kubelet_adopt.c. See
 * numaplace/kubelet_import.h.
 *
 * The kubelet's "checksum" / "dataChecksum" are deliberately not checked:
 * they are FNV-32a over Go's dump.ForHash output of its checkpoint structs,
 * a rendering we cannot reproduce byte for byte. We read them (so that a
 * wrong type is still an error) and report them, marked unverified.
 */
#include "basic/fileio.h"
#include "numaplace/cleanup.h"
#include "numaplace/error.h"
#include "state/kubelet_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void np_kubelet_checkpoint_free(struct np_kubelet_checkpoint *ck)
{
	free(ck->entries);
	free(ck->pod_entries);
	ck->entries = NULL;
	ck->pod_entries = NULL;
	ck->nentries = ck->npod_entries = 0;
}

/* s is 1..max-1 characters: ASCII letters, digits and those in extra. */
static bool valid_token(const char *s, size_t max, const char *extra)
{
	size_t n = strlen(s);
	if (n == 0 || n >= max)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr(extra, *s)))
			return false;
	return true;
}

/* Pod UIDs: UUIDs, or hex hashes for static pods. They end up in cgroup
 * names, so only letters, digits and '-'. */
static bool valid_uid(const char *s)
{
	return valid_token(s, NP_KUBELET_UID_MAX, "-");
}

/* numaplace's name rule (letters, digits, - _ .). */
static bool valid_name(const char *s)
{
	return valid_token(s, NP_NAME_MAX, "-_.");
}

static int parse_cpus(const json_t *v, const char *where, np_cpuset *out,
		      char *err, size_t errlen)
{
	char perr[160];
	if (!json_is_string(v))
		return np_errf(err, errlen, -EINVAL,
			       "%s: expected a CPU list string such as \"1-5\"",
			       where);
	if (np_cpuset_parse(out, json_string_value(v), perr, sizeof(perr)))
		return np_errf(err, errlen, -EINVAL,
			       "%s: \"%s\" is not a CPU list: %s", where,
			       json_string_value(v), perr);
	return 0;
}

static int get_u32(const json_t *o, const char *key, bool required, bool *has,
		   uint32_t *out, char *err, size_t errlen)
{
	const json_t *v = json_object_get(o, key);
	*has = false;
	if (!v || json_is_null(v)) {
		if (required)
			return np_errf(err, errlen, -EINVAL,
				       "%s: required field is missing", key);
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > (json_int_t)UINT32_MAX)
		return np_errf(err, errlen, -EINVAL,
			       "%s: expected an unsigned 32-bit integer", key);
	*out = (uint32_t)json_integer_value(v);
	*has = true;
	return 0;
}

static int add_entry(struct np_kubelet_checkpoint *ck, size_t *cap,
		     struct np_kubelet_entry **e)
{
	if ((size_t)ck->nentries == *cap) {
		size_t n = *cap ? *cap * 2 : 16;
		struct np_kubelet_entry *g =
		    realloc(ck->entries, n * sizeof(*g));
		if (!g)
			return -ENOMEM;
		ck->entries = g;
		*cap = n;
	}
	*e = &ck->entries[ck->nentries++];
	memset(*e, 0, sizeof(**e));
	return 0;
}

/* V1: entries[key] = a container's CPU list. */
static int parse_v1_entry(struct np_kubelet_checkpoint *ck, size_t *cap,
			  const char *pre, const char *key, const json_t *v,
			  char *err, size_t errlen)
{
	struct np_kubelet_entry *e;
	char where[256];
	int r;

	snprintf(where, sizeof(where), "%sentries[\"%s\"]", pre, key);
	if (!*key || strlen(key) >= NP_NAME_MAX)
		return np_errf(err, errlen, -EINVAL, "%s: bad container ID",
			       where);
	if ((r = add_entry(ck, cap, &e)))
		return r;
	snprintf(e->container, sizeof(e->container), "%s", key);
	return parse_cpus(v, where, &e->cpus, err, errlen);
}

/* V2: entries[uid] = {container: CPU list}. */
static int parse_v2_pod(struct np_kubelet_checkpoint *ck, size_t *cap,
			const char *pre, const char *uid, const json_t *v,
			char *err, size_t errlen)
{
	const json_t *cv;
	const char *ckey;
	char where[256];
	int r;

	if (!valid_uid(uid))
		return np_errf(err, errlen, -EINVAL,
			       "%sentries[\"%s\"]: not a pod UID (letters, "
			       "digits and '-', at most %d characters)",
			       pre, uid, NP_KUBELET_UID_MAX - 1);
	json_object_foreach((json_t *)v, ckey, cv)
	{
		struct np_kubelet_entry *e;
		snprintf(where, sizeof(where), "%sentries[\"%s\"][\"%s\"]", pre,
			 uid, ckey);
		if (!valid_name(ckey))
			return np_errf(
			    err, errlen, -EINVAL,
			    "%s: container name not usable (letters, "
			    "digits, - _ ., at most %d characters)",
			    where, NP_NAME_MAX - 1);
		if ((r = add_entry(ck, cap, &e)))
			return r;
		snprintf(e->pod_uid, sizeof(e->pod_uid), "%s", uid);
		snprintf(e->container, sizeof(e->container), "%s", ckey);
		if ((r = parse_cpus(cv, where, &e->cpus, err, errlen)))
			return r;
	}
	return 0;
}

/* "entries": V1 or V2 (*kind 1 or 2; 0 when there are none). */
static int parse_entries(struct np_kubelet_checkpoint *ck,
			 const json_t *entries, const char *pre, int *kind,
			 char *err, size_t errlen)
{
	const json_t *v;
	const char *key;
	size_t cap = 0;
	int r;

	*kind = 0;
	if (entries && !json_is_null(entries) && !json_is_object(entries))
		return np_errf(err, errlen, -EINVAL,
			       "%sentries: expected an object", pre);
	json_object_foreach((json_t *)entries, key, v)
	{
		int k = json_is_object(v) ? 2 : 1;
		if (*kind && k != *kind)
			return np_errf(
			    err, errlen, -EINVAL,
			    "%sentries[\"%s\"]: mixes V1 (container "
			    "ID: cpuset) and V2 (pod UID: {container: "
			    "cpuset}) entries",
			    pre, key);
		*kind = k;
		r = k == 1 ? parse_v1_entry(ck, &cap, pre, key, v, err, errlen)
			   : parse_v2_pod(ck, &cap, pre, key, v, err, errlen);
		if (r)
			return r;
	}
	return 0;
}

/* V3's "podEntries": {uid: CPU list}. */
static int parse_pod_entries(struct np_kubelet_checkpoint *ck,
			     const json_t *pods, const char *pre, int kind,
			     char *err, size_t errlen)
{
	const json_t *v;
	const char *key;
	char where[256];
	size_t i = 0;
	int r;

	if (!json_is_object(pods))
		return np_errf(err, errlen, -EINVAL,
			       "%spodEntries: expected an object", pre);
	if (kind == 1)
		return np_errf(err, errlen, -EINVAL,
			       "%spodEntries: present beside V1 entries keyed "
			       "by container ID",
			       pre);
	ck->pod_entries =
	    calloc(json_object_size(pods) + 1, sizeof(*ck->pod_entries));
	if (!ck->pod_entries)
		return -ENOMEM;
	json_object_foreach((json_t *)pods, key, v)
	{
		struct np_kubelet_pod_entry *pe = &ck->pod_entries[i++];
		snprintf(where, sizeof(where), "%spodEntries[\"%s\"]", pre,
			 key);
		if (!valid_uid(key))
			return np_errf(err, errlen, -EINVAL,
				       "%s: not a pod UID", where);
		if (!json_is_string(v))
			return np_errf(err, errlen, -EINVAL,
				       "%s: expected the pod's CPU list as a "
				       "string (the only podEntries form "
				       "numaplace knows)",
				       where);
		snprintf(pe->pod_uid, sizeof(pe->pod_uid), "%s", key);
		if ((r = parse_cpus(v, where, &pe->cpus, err, errlen)))
			return r;
		ck->npod_entries = (int)i;
	}
	return 0;
}

/* The V1..V3 fields (the whole document, or V4's "data"). pre names
 * where they come from in messages ("" or "data."). */
static int parse_payload(struct np_kubelet_checkpoint *ck, const json_t *p,
			 const char *pre, char *err, size_t errlen)
{
	const json_t *v, *pods;
	char where[256];
	int kind, r;

	if (!json_is_object(p))
		return np_errf(err, errlen, -EINVAL,
			       "%s: expected a JSON object",
			       *pre ? "data" : "checkpoint");
	v = json_object_get(p, "policyName");
	if (!json_is_string(v))
		return np_errf(err, errlen, -EINVAL,
			       "%spolicyName: required string is missing", pre);
	if (strlen(json_string_value(v)) >= sizeof(ck->policy))
		return np_errf(err, errlen, -EINVAL, "%spolicyName: too long",
			       pre);
	snprintf(ck->policy, sizeof(ck->policy), "%s", json_string_value(v));
	snprintf(where, sizeof(where), "%sdefaultCpuSet", pre);
	v = json_object_get(p, "defaultCpuSet");
	if (!v)
		return np_errf(err, errlen, -EINVAL,
			       "%s: required field is missing", where);
	if ((r = parse_cpus(v, where, &ck->default_cpus, err, errlen)) ||
	    (r = parse_entries(ck, json_object_get(p, "entries"), pre, &kind,
			       err, errlen)))
		return r;
	pods = json_object_get(p, "podEntries");
	if (!pods || json_is_null(pods)) {
		ck->version = kind == 1 ? 1 : 2;
		return 0;
	}
	if ((r = parse_pod_entries(ck, pods, pre, kind, err, errlen)))
		return r;
	ck->version = 3;
	return 0;
}

int np_kubelet_checkpoint_parse(struct np_kubelet_checkpoint *ck,
				const json_t *j, char *err, size_t errlen)
{
	const json_t *data;
	json_t *inner = NULL;
	json_error_t jerr;
	int r;

	memset(ck, 0, sizeof(*ck));
	if (!json_is_object(j))
		return np_errf(err, errlen, -EINVAL,
			       "checkpoint: expected a JSON object");
	data = json_object_get(j, "data");
	if (data && !json_is_null(data)) {
		/* V4: "data" is authoritative, the inline V3 fields are only
		 * there for a kubelet rollback and are not used. */
		if (!json_is_string(data))
			return np_errf(
			    err, errlen, -EINVAL,
			    "data: expected a JSON-serialised string");
		if ((r = get_u32(j, "dataChecksum", true,
				 &ck->has_data_checksum, &ck->data_checksum,
				 err, errlen)) ||
		    (r = get_u32(j, "checksum", false, &ck->has_checksum,
				 &ck->checksum, err, errlen)))
			return r;
		inner = json_loads(json_string_value(data),
				   JSON_REJECT_DUPLICATES, &jerr);
		if (!inner)
			return np_errf(err, errlen, -EINVAL,
				       "data: not valid JSON: %s at column %d",
				       jerr.text, jerr.column);
		r = parse_payload(ck, inner, "data.", err, errlen);
		json_decref(inner);
		if (r)
			goto fail;
		if (ck->version == 1) {
			r = np_errf(
			    err, errlen, -EINVAL,
			    "data.entries: V4 data must key entries by pod "
			    "UID");
			goto fail;
		}
		ck->version = 4;
		return 0;
	}
	if ((r = get_u32(j, "checksum", true, &ck->has_checksum, &ck->checksum,
			 err, errlen)) ||
	    (r = parse_payload(ck, j, "", err, errlen)))
		goto fail;
	return 0;
fail:
	np_kubelet_checkpoint_free(ck);
	return r;
}

int np_kubelet_checkpoint_read(struct np_kubelet_checkpoint *ck,
			       const char *path, char *err, size_t errlen)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_json_ json_t *j = NULL;
	char perr[512];
	json_error_t jerr;
	size_t len;
	int r;

	memset(ck, 0, sizeof(*ck));
	r = np_read_at(AT_FDCWD, path, NP_READ_REGULAR, NP_KUBELET_MAX_SIZE,
		       &buf, &len);
	if (r == -EISDIR || r == -EINVAL || r == -EFBIG)
		return np_errf(err, errlen, -EINVAL,
			       "%s: not a regular file of at most %u bytes",
			       path, NP_KUBELET_MAX_SIZE);
	if (r)
		return np_errf(err, errlen, r, "%s: %s", path, strerror(-r));
	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!j)
		return np_errf(
		    err, errlen, -EINVAL,
		    "%s: not a kubelet CPU manager checkpoint: %s at "
		    "line %d column %d",
		    path, jerr.text, jerr.line, jerr.column);
	r = np_kubelet_checkpoint_parse(ck, j, perr, sizeof(perr));
	if (r)
		return np_errf(err, errlen, r, "%s: %s", path, perr);
	return 0;
}

int np_kubelet_pod_cgroup(const char *prefix, const char *uid, char *buf,
			  size_t len)
{
	char esc[NP_KUBELET_UID_MAX];
	int n;

	if (!prefix)
		prefix = NP_KUBELET_CGROUP_PREFIX;
	snprintf(esc, sizeof(esc), "%s", uid);
	/* systemd escapes '-' in slice names: the kubelet writes '_' */
	for (char *p = esc; *p; p++)
		if (*p == '-')
			*p = '_';
	while (*prefix == '/')
		prefix++;
	n = snprintf(buf, len, "%s%skubepods-pod%s.slice", prefix,
		     *prefix && prefix[strlen(prefix) - 1] != '/' ? "/" : "",
		     esc);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int np_kubelet_import(const char *path, struct np_node_state *st,
		      const char *cgroup_prefix, char *err, size_t errlen)
{
	struct np_kubelet_checkpoint ck;
	char aerr[768];
	int r;

	if ((r = np_kubelet_checkpoint_read(&ck, path, err, errlen)))
		return r;
	r = np_kubelet_adopt(st, &ck, cgroup_prefix, NULL, aerr, sizeof(aerr));
	if (r)
		np_errf(err, errlen, r, "%s: %s", path, aerr);
	np_kubelet_checkpoint_free(&ck);
	return r;
}

int np_kubelet_import_json(const char *path, const struct np_node_state *st,
			   const char *cgroup_prefix, json_t **out, char *err,
			   size_t errlen)
{
	struct np_kubelet_checkpoint ck;
	struct np_node_state cp;
	const char **uids = NULL;
	json_t *o = NULL, *kj, *ws, *sj = NULL;
	char aerr[768], *def = NULL;
	bool have_cp = false;
	int r, n = 0;

	*out = NULL;
	if ((r = np_kubelet_checkpoint_read(&ck, path, err, errlen)))
		return r;
	uids =
	    calloc((size_t)(ck.nentries + ck.npod_entries) + 1, sizeof(*uids));
	if (!uids || (r = np_state_copy(&cp, st))) {
		r = -ENOMEM;
		goto out;
	}
	have_cp = true;
	if ((r = np_kubelet_adopt_uids(&cp, &ck, cgroup_prefix, uids, &n, aerr,
				       sizeof(aerr)))) {
		np_errf(err, errlen, r, "%s: %s", path, aerr);
		goto out;
	}
	if (!(def = np_cpuset_str(&ck.default_cpus))) {
		r = -ENOMEM;
		goto out;
	}
	kj = json_pack("{s:i,s:s,s:s,s:b}", "version", ck.version, "policyName",
		       ck.policy, "defaultCpuSet", def, "checksumVerified", 0);
	ws = json_array();
	if (!kj || !ws || np_state_to_json(&cp, &sj)) {
		json_decref(kj);
		json_decref(ws);
		r = -ENOMEM;
		goto out;
	}
	if (ck.has_checksum)
		json_object_set_new(kj, "checksum", json_integer(ck.checksum));
	if (ck.has_data_checksum)
		json_object_set_new(kj, "dataChecksum",
				    json_integer(ck.data_checksum));
	for (int i = 0; i < n; i++) {
		json_t *w =
		    np_workload_alloc_to_json(&cp, cp.w[st->nworkloads + i]);
		json_object_set_new(w, "podUID", json_string(uids[i]));
		json_array_append_new(ws, w);
	}
	o = json_pack("{s:s,s:o,s:o,s:o,s:o}", "source", path, "kubelet", kj,
		      "workloads", ws, "state", sj, "pools",
		      np_pools_to_json(&cp));
	sj = NULL;
	if (!o) {
		r = -ENOMEM;
		goto out;
	}
	*out = o;
out:
	if (r == -ENOMEM)
		np_errf(err, errlen, r, "%s: out of memory", path);
	if (have_cp)
		np_state_free(&cp);
	free(uids);
	free(def);
	np_kubelet_checkpoint_free(&ck);
	return r;
}
