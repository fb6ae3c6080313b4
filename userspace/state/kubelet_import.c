// SPDX-License-Identifier: Apache-2.0
/*
 * Import of the kubelet's CPU Manager checkpoint (cpu_manager_state, V1 to
 * V4): parse, validate the structure, and adopt each pod's exclusive CPUs
 * as a numaplace workload. See numaplace/kubelet_import.h.
 *
 * The kubelet's "checksum" / "dataChecksum" are deliberately not checked:
 * they are FNV-32a over Go's dump.ForHash output of its checkpoint structs,
 * a rendering we cannot reproduce byte for byte. We read them (so that a
 * wrong type is still an error) and report them, marked unverified.
 */
#include "numaplace/kubelet_import.h"
#include "numaplace/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A cpuset as a short string for messages. */
static const char *cpus_str(const np_cpuset *s, char *buf, size_t len)
{
	if (np_cpuset_format(s, buf, len) < 0)
		snprintf(buf, len, "(%d CPUs)", np_cpuset_count(s));
	return buf;
}

void np_kubelet_checkpoint_free(struct np_kubelet_checkpoint *ck)
{
	free(ck->entries);
	free(ck->pod_entries);
	ck->entries = NULL;
	ck->pod_entries = NULL;
	ck->nentries = ck->npod_entries = 0;
}

/* Pod UIDs: UUIDs, or hex hashes for static pods. They end up in cgroup
 * names, so only letters, digits and '-'. */
static bool valid_uid(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= NP_KUBELET_UID_MAX)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-'))
			return false;
	return true;
}

/* numaplace's name rule (letters, digits, - _ .). */
static bool valid_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= NP_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' ||
		      *s == '.'))
			return false;
	return true;
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

/* The V1..V3 fields (the whole document, or V4's "data"). pre names
 * where they come from in messages ("" or "data."). */
static int parse_payload(struct np_kubelet_checkpoint *ck, const json_t *p,
			 const char *pre, char *err, size_t errlen)
{
	const json_t *entries, *pods, *v, *cv;
	const char *key, *ckey;
	char where[256];
	size_t cap = 0;
	int kind = 0; /* 1: V1 (strings), 2: V2 (objects) */
	int r;

	if (!json_is_object(p))
		return np_errf(err, errlen, -EINVAL, "%s: expected a JSON object",
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
	if ((r = parse_cpus(v, where, &ck->default_cpus, err, errlen)))
		return r;

	entries = json_object_get(p, "entries");
	if (entries && !json_is_null(entries) && !json_is_object(entries))
		return np_errf(err, errlen, -EINVAL,
			    "%sentries: expected an object", pre);
	json_object_foreach((json_t *)entries, key, v)
	{
		struct np_kubelet_entry *e;
		int k = json_is_object(v) ? 2 : 1;
		if (kind && k != kind)
			return np_errf(
			    err, errlen, -EINVAL,
			    "%sentries[\"%s\"]: mixes V1 (container ID: "
			    "cpuset) and V2 (pod UID: {container: "
			    "cpuset}) entries",
			    pre, key);
		kind = k;
		if (kind == 1) {
			snprintf(where, sizeof(where), "%sentries[\"%s\"]", pre,
				 key);
			if (!*key || strlen(key) >= NP_NAME_MAX)
				return np_errf(err, errlen, -EINVAL,
					    "%s: bad container ID", where);
			if ((r = add_entry(ck, &cap, &e)))
				return r;
			snprintf(e->container, sizeof(e->container), "%s", key);
			if ((r = parse_cpus(v, where, &e->cpus, err, errlen)))
				return r;
			continue;
		}
		if (!valid_uid(key))
			return np_errf(
			    err, errlen, -EINVAL,
			    "%sentries[\"%s\"]: not a pod UID (letters, "
			    "digits and '-', at most %d characters)",
			    pre, key, NP_KUBELET_UID_MAX - 1);
		json_object_foreach((json_t *)v, ckey, cv)
		{
			snprintf(where, sizeof(where),
				 "%sentries[\"%s\"][\"%s\"]", pre, key, ckey);
			if (!valid_name(ckey))
				return np_errf(err, errlen, -EINVAL,
					    "%s: container name not usable "
					    "(letters, digits, - _ ., at most "
					    "%d characters)",
					    where, NP_NAME_MAX - 1);
			if ((r = add_entry(ck, &cap, &e)))
				return r;
			snprintf(e->pod_uid, sizeof(e->pod_uid), "%s", key);
			snprintf(e->container, sizeof(e->container), "%s",
				 ckey);
			if ((r = parse_cpus(cv, where, &e->cpus, err, errlen)))
				return r;
		}
	}

	pods = json_object_get(p, "podEntries");
	if (pods && !json_is_null(pods)) {
		size_t i = 0;
		if (!json_is_object(pods))
			return np_errf(err, errlen, -EINVAL,
				    "%spodEntries: expected an object", pre);
		if (kind == 1)
			return np_errf(err, errlen, -EINVAL,
				    "%spodEntries: present beside V1 entries "
				    "keyed by container ID",
				    pre);
		ck->pod_entries = calloc(json_object_size(pods) + 1,
					 sizeof(*ck->pod_entries));
		if (!ck->pod_entries)
			return -ENOMEM;
		json_object_foreach((json_t *)pods, key, v)
		{
			struct np_kubelet_pod_entry *pe = &ck->pod_entries[i++];
			snprintf(where, sizeof(where), "%spodEntries[\"%s\"]",
				 pre, key);
			if (!valid_uid(key))
				return np_errf(err, errlen, -EINVAL,
					    "%s: not a pod UID", where);
			if (!json_is_string(v))
				return np_errf(
				    err, errlen, -EINVAL,
				    "%s: expected the pod's CPU list as "
				    "a string (the only podEntries form "
				    "numaplace knows)",
				    where);
			snprintf(pe->pod_uid, sizeof(pe->pod_uid), "%s", key);
			if ((r = parse_cpus(v, where, &pe->cpus, err, errlen)))
				return r;
			ck->npod_entries = (int)i;
		}
		ck->version = 3;
	} else {
		ck->version = kind == 1 ? 1 : 2;
	}
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
			return np_errf(err, errlen, -EINVAL,
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
	char perr[512];
	json_error_t jerr;
	struct stat sb;
	json_t *j = NULL;
	FILE *f = NULL;
	int fd, r;

	memset(ck, 0, sizeof(*ck));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return np_errf(err, errlen, -errno, "%s: %s", path,
			    strerror(errno));
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) ||
	    (uint64_t)sb.st_size > NP_KUBELET_MAX_SIZE) {
		r = np_errf(err, errlen, -EINVAL,
			 "%s: not a regular file of at most %u bytes", path,
			 NP_KUBELET_MAX_SIZE);
		close(fd);
		return r;
	}
	if (!(f = fdopen(fd, "r"))) {
		r = -errno;
		close(fd);
		return np_errf(err, errlen, r, "%s: %s", path, strerror(-r));
	}
	j = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
	fclose(f);
	if (!j)
		return np_errf(err, errlen, -EINVAL,
			    "%s: not a kubelet CPU manager checkpoint: %s at "
			    "line %d column %d",
			    path, jerr.text, jerr.line, jerr.column);
	r = np_kubelet_checkpoint_parse(ck, j, perr, sizeof(perr));
	json_decref(j);
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

/* ---- adoption ---- */

struct pod {
	const char *uid;
	int first, n;		   /* entries of this pod: indexes in order[] */
	const np_cpuset *pod_cpus; /* V3 pod-level set or NULL */
	np_cpuset all;		   /* union of everything the pod holds */
	char name[NP_NAME_MAX];
	char cgroup[NP_PATH_MAX];
};

/* Fewest NUMA nodes that can hold n CPUs (the kubelet's minimum affinity
 * size: a hint with this many nodes is preferred). */
static int min_nodes(const struct np_topology *t, int n)
{
	int *c = calloc((size_t)t->nnuma + 1, sizeof(int)), k = 0, sum = 0;
	if (!c)
		return t->nnuma;
	for (int i = 0; i < t->nnuma; i++)
		c[i] = t->numa[i].u.ncpus;
	while (sum < n && k < t->nnuma) {
		int best = k, tmp;
		for (int i = k + 1; i < t->nnuma; i++)
			if (c[i] > c[best])
				best = i;
		tmp = c[k];
		c[k] = c[best];
		c[best] = tmp;
		sum += c[k++];
	}
	free(c);
	return k;
}

static int workload_of_cpus(const struct np_node_state *st, const np_cpuset *s)
{
	for (int i = 0; i < st->nworkloads; i++)
		for (int c = 0; c < st->w[i].ncontainers; c++)
			if (st->w[i].c[c].exclusive &&
			    np_cpuset_intersects(&st->w[i].c[c].cpus, s))
				return i;
	return -1;
}

static int find_cgroup(const struct np_node_state *st, const char *cg)
{
	for (int i = 0; i < st->nworkloads; i++)
		if (!strcmp(st->w[i].req.cgroup, cg))
			return i;
	return -1;
}

static void fill_container(const struct np_node_state *st,
			   struct np_container_req *rq,
			   struct np_container_alloc *ca, const char *name,
			   const np_cpuset *cpus)
{
	const struct np_topology *t = st->topo;
	int n = np_cpuset_count(cpus);

	memset(rq, 0, sizeof(*rq));
	memset(ca, 0, sizeof(*ca));
	snprintf(rq->name, sizeof(rq->name), "%s", name);
	rq->cpu_milli = (int64_t)n * 1000;
	snprintf(ca->name, sizeof(ca->name), "%s", name);
	ca->exclusive = true;
	ca->cpus = *cpus;
	ca->mems = np_topology_nodes_of(t, cpus);
	ca->hint.any = false;
	ca->hint.mask = ca->mems;
	ca->hint.preferred = np_nodemask_count(ca->mems) <= min_nodes(t, n);
}

/* The name and cgroup path follow the workload spec's rules: check them
 * with the spec parser itself. */
static int check_names(const struct pod *pd, char *err, size_t errlen)
{
	struct np_workload_req *w = calloc(1, sizeof(*w));
	char path[96], perr[512];
	json_t *spec;
	int r;

	spec = json_pack("{s:s,s:s,s:s,s:[{s:s,s:i}]}", "name", pd->name,
			 "cgroup", pd->cgroup, "qos", "Guaranteed",
			 "containers", "name", "c", "cpu", 1);
	if (!w || !spec) {
		free(w);
		json_decref(spec);
		return -ENOMEM;
	}
	snprintf(path, sizeof(path), "pod %s", pd->uid);
	r = np_workload_req_from_json(w, spec, path, perr, sizeof(perr));
	if (r)
		np_errf(err, errlen, r, "%s (adjust the cgroup prefix)", perr);
	json_decref(spec);
	np_workload_req_free(w);
	free(w);
	return r;
}

/*
 * Validate everything, then append. uids (may be NULL) receives, for each
 * added workload in order, its pod UID (pointing into ck).
 */
static int adopt(struct np_node_state *st,
		 const struct np_kubelet_checkpoint *ck, const char *prefix,
		 const char **uids, int *nadopted, char *err, size_t errlen)
{
	const struct np_topology *t = st->topo;
	struct pod *pods = NULL;
	int *order = NULL, npods = 0, nadd = 0, old = st->nworkloads, r = 0;
	int *owner = NULL; /* CPU -> index of the entry holding it + 1 */
	char a[256], b[256];

	if (nadopted)
		*nadopted = 0;
	if (strcmp(ck->policy, "static"))
		return np_errf(
		    err, errlen, -ENODATA,
		    "the kubelet's CPU manager policy is \"%s\", not "
		    "\"static\": it made no exclusive CPU allocations, so "
		    "there is nothing to adopt",
		    ck->policy);
	if (ck->version == 1)
		return np_errf(
		    err, errlen, -ENOTSUP,
		    "this is a V1 checkpoint: it keys CPU sets by "
		    "container ID, so the pods (and their cgroups) that "
		    "own them are unknown; let a current kubelet rewrite "
		    "it (V2 or later) and import again");
	if (st->policy.cpu_policy != NP_CPU_POLICY_STATIC)
		return np_errf(err, errlen, -EINVAL,
			    "numaplace's node policy has cpu_policy \"none\": "
			    "adopting the kubelet's exclusive CPUs needs "
			    "cpu_policy \"static\"");

	pods = calloc((size_t)(ck->nentries + ck->npod_entries) + 1,
		      sizeof(*pods));
	order = calloc((size_t)ck->nentries + 1, sizeof(*order));
	owner = calloc(NP_MAX_CPUS, sizeof(*owner));
	if (!pods || !order || !owner) {
		r = -ENOMEM;
		goto out;
	}

	/* Group entries by pod, in file order. */
	for (int i = 0; i < ck->nentries; i++) {
		const struct np_kubelet_entry *e = &ck->entries[i];
		bool seen = false;
		for (int p = 0; p < npods && !seen; p++)
			seen = !strcmp(pods[p].uid, e->pod_uid);
		if (!seen)
			pods[npods++].uid = e->pod_uid;
	}
	for (int i = 0; i < ck->npod_entries; i++) {
		bool seen = false;
		for (int p = 0; p < npods && !seen; p++)
			seen = !strcmp(pods[p].uid, ck->pod_entries[i].pod_uid);
		if (!seen)
			pods[npods++].uid = ck->pod_entries[i].pod_uid;
	}
	for (int p = 0, k = 0; p < npods; p++) {
		pods[p].first = k;
		for (int i = 0; i < ck->nentries; i++)
			if (!strcmp(ck->entries[i].pod_uid, pods[p].uid))
				order[k++] = i;
		pods[p].n = k - pods[p].first;
		for (int i = 0; i < ck->npod_entries; i++)
			if (!strcmp(ck->pod_entries[i].pod_uid, pods[p].uid))
				pods[p].pod_cpus = &ck->pod_entries[i].cpus;
	}

	/* Each entry: online here, outside defaultCpuSet, held once. */
	for (int p = 0; p < npods; p++) {
		struct pod *pd = &pods[p];
		for (int k = pd->first; k < pd->first + pd->n; k++) {
			const struct np_kubelet_entry *e =
			    &ck->entries[order[k]];
			np_cpuset bad;
			np_cpuset_andnot(&bad, &e->cpus, &t->online);
			if (!np_cpuset_empty(&bad)) {
				r = np_errf(
				    err, errlen, -EINVAL,
				    "entries[\"%s\"][\"%s\"]: CPUs %s are "
				    "not online CPUs of this node (online: "
				    "%s); was the checkpoint written on "
				    "another machine?",
				    e->pod_uid, e->container,
				    cpus_str(&bad, a, sizeof(a)),
				    cpus_str(&t->online, b, sizeof(b)));
				goto out;
			}
			if (np_cpuset_intersects(&e->cpus, &ck->default_cpus)) {
				np_cpuset_and(&bad, &e->cpus,
					      &ck->default_cpus);
				r = np_errf(
				    err, errlen, -EINVAL,
				    "entries[\"%s\"][\"%s\"]: CPUs %s are "
				    "also in defaultCpuSet: the checkpoint "
				    "is inconsistent",
				    e->pod_uid, e->container,
				    cpus_str(&bad, a, sizeof(a)));
				goto out;
			}
			NP_CPUSET_FOREACH (cpu, &e->cpus) {
				const struct np_kubelet_entry *o;
				if (!owner[cpu]) {
					owner[cpu] = order[k] + 1;
					continue;
				}
				o = &ck->entries[owner[cpu] - 1];
				r = np_errf(
				    err, errlen, -EINVAL,
				    "entries overlap: CPU %d is held by pod "
				    "%s container \"%s\" and by pod %s "
				    "container \"%s\"%s",
				    cpu, o->pod_uid, o->container, e->pod_uid,
				    e->container,
				    strcmp(o->pod_uid, e->pod_uid)
					? ""
					: " (init-container CPU reuse? "
					  "numaplace cannot give two "
					  "containers the same exclusive "
					  "CPUs; import once the pod's "
					  "init containers are gone)");
				goto out;
			}
			np_cpuset_or(&pd->all, &pd->all, &e->cpus);
		}
		if (pd->pod_cpus) {
			np_cpuset bad;
			np_cpuset_andnot(&bad, &pd->all, pd->pod_cpus);
			if (!np_cpuset_empty(&bad)) {
				r = np_errf(err, errlen, -EINVAL,
					 "podEntries[\"%s\"]: the pod's set %s "
					 "lacks CPUs %s of its containers",
					 pd->uid,
					 cpus_str(pd->pod_cpus, a, sizeof(a)),
					 cpus_str(&bad, b, sizeof(b)));
				goto out;
			}
			np_cpuset_andnot(&bad, pd->pod_cpus, &t->online);
			if (!np_cpuset_empty(&bad)) {
				r = np_errf(err, errlen, -EINVAL,
					 "podEntries[\"%s\"]: CPUs %s are not "
					 "online CPUs of this node",
					 pd->uid, cpus_str(&bad, a, sizeof(a)));
				goto out;
			}
			if (np_cpuset_intersects(pd->pod_cpus,
						 &ck->default_cpus)) {
				r = np_errf(err, errlen, -EINVAL,
					 "podEntries[\"%s\"]: overlaps "
					 "defaultCpuSet: the checkpoint is "
					 "inconsistent",
					 pd->uid);
				goto out;
			}
			pd->all = *pd->pod_cpus;
		}
	}
	/* Pod-level sets against other pods. */
	for (int p = 0; p < npods; p++)
		for (int q = 0; q < npods; q++) {
			if (p == q || !pods[p].pod_cpus ||
			    !np_cpuset_intersects(pods[p].pod_cpus,
						  &pods[q].all))
				continue;
			r = np_errf(err, errlen, -EINVAL,
				 "entries overlap: podEntries[\"%s\"] shares "
				 "CPUs with pod %s",
				 pods[p].uid, pods[q].uid);
			goto out;
		}

	/* Against numaplace's state: names, cgroups, CPUs, reserved. */
	for (int p = 0; p < npods; p++) {
		struct pod *pd = &pods[p];
		int w;
		if (np_cpuset_empty(&pd->all))
			continue; /* nothing exclusive: nothing to adopt */
		if (np_kubelet_pod_cgroup(prefix, pd->uid, pd->cgroup,
					  sizeof(pd->cgroup))) {
			r = np_errf(err, errlen, -EINVAL,
				 "cgroup prefix \"%s\" is too long", prefix);
			goto out;
		}
		if ((w = find_cgroup(st, pd->cgroup)) >= 0) {
			r = np_errf(err, errlen, -EEXIST,
				 "pod %s is already adopted as workload \"%s\" "
				 "(cgroup %s)",
				 pd->uid, st->w[w].req.name, pd->cgroup);
			goto out;
		}
		snprintf(pd->name, sizeof(pd->name), "kubelet-%.8s", pd->uid);
		for (int pass = 0; pass < 2; pass++) {
			bool taken = np_state_find(st, pd->name) >= 0;
			for (int q = 0; q < p && !taken; q++)
				taken = !strcmp(pods[q].name, pd->name);
			if (!taken)
				break;
			if (pass) {
				r = np_errf(err, errlen, -EEXIST,
					 "pod %s: workload names kubelet-%.8s "
					 "and %s are both taken",
					 pd->uid, pd->uid, pd->name);
				goto out;
			}
			snprintf(pd->name, sizeof(pd->name), "kubelet-%s",
				 pd->uid);
		}
		if ((r = check_names(pd, err, errlen)))
			goto out;
		if ((w = workload_of_cpus(st, &pd->all)) >= 0) {
			r = np_errf(err, errlen, -EEXIST,
				 "pod %s holds CPUs %s, which conflict with "
				 "numaplace workload \"%s\"; release that "
				 "workload first, or leave this pod to the "
				 "kubelet",
				 pd->uid, cpus_str(&pd->all, a, sizeof(a)),
				 st->w[w].req.name);
			goto out;
		}
		if (np_cpuset_intersects(&pd->all, &st->reserved)) {
			np_cpuset bad;
			np_cpuset_and(&bad, &pd->all, &st->reserved);
			r = np_errf(
			    err, errlen, -EEXIST,
			    "pod %s holds CPUs %s that numaplace reserves "
			    "(reserved CPUs %s); make policy.reserved_cpus "
			    "match the kubelet's reserved CPUs",
			    pd->uid, cpus_str(&bad, a, sizeof(a)),
			    cpus_str(&st->reserved, b, sizeof(b)));
			goto out;
		}
		if (pd->n + (pd->pod_cpus ? 1 : 0) > NP_MAX_CONTAINERS) {
			r = np_errf(err, errlen, -EINVAL,
				 "pod %s has more than %d containers with "
				 "exclusive CPUs",
				 pd->uid, NP_MAX_CONTAINERS);
			goto out;
		}
		for (int k = pd->first; k < pd->first + pd->n; k++)
			if (pd->pod_cpus &&
			    !strcmp(ck->entries[order[k]].container,
				    NP_KUBELET_POD_POOL)) {
				r = np_errf(err, errlen, -EINVAL,
					 "pod %s: a container is named \"%s\", "
					 "the name numaplace gives pod-level "
					 "CPUs",
					 pd->uid, NP_KUBELET_POD_POOL);
				goto out;
			}
		nadd++;
	}

	/* Append. */
	if (st->nworkloads + nadd > st->cap) {
		struct np_workload_alloc *g = realloc(
		    st->w, sizeof(*g) * (size_t)(st->nworkloads + nadd));
		if (!g) {
			r = -ENOMEM;
			goto out;
		}
		st->w = g;
		st->cap = st->nworkloads + nadd;
	}
	for (int p = 0; p < npods; p++) {
		struct pod *pd = &pods[p];
		struct np_workload_alloc *wa;
		np_cpuset rest;
		int c = 0;
		if (np_cpuset_empty(&pd->all))
			continue;
		wa = &st->w[st->nworkloads];
		memset(wa, 0, sizeof(*wa));
		/* At most one container per entry plus the pod pool. */
		if ((r = np_workload_req_set_containers(&wa->req, pd->n + 1)))
			goto undo;
		wa->c = calloc((size_t)pd->n + 1, sizeof(*wa->c));
		if (!wa->c) {
			np_workload_req_free(&wa->req);
			r = -ENOMEM;
			goto undo;
		}
		snprintf(wa->req.name, sizeof(wa->req.name), "%s", pd->name);
		if (!(wa->req.cgroup = strdup(pd->cgroup))) {
			np_workload_alloc_free(wa);
			r = -ENOMEM;
			goto undo;
		}
		wa->req.qos = NP_QOS_GUARANTEED;
		wa->qos_class = NP_QOS_LSE; /* Guaranteed with exclusive CPUs */
		wa->excl = NP_EXCL_NONE;
		rest = pd->all;
		for (int k = pd->first; k < pd->first + pd->n; k++) {
			const struct np_kubelet_entry *e =
			    &ck->entries[order[k]];
			if (np_cpuset_empty(&e->cpus))
				continue;
			fill_container(st, &wa->req.c[c], &wa->c[c],
				       e->container, &e->cpus);
			np_cpuset_andnot(&rest, &rest, &e->cpus);
			c++;
		}
		if (!np_cpuset_empty(&rest)) {
			fill_container(st, &wa->req.c[c], &wa->c[c],
				       NP_KUBELET_POD_POOL, &rest);
			c++;
		}
		wa->req.ncontainers = wa->ncontainers = c;
		if (uids)
			uids[st->nworkloads - old] = pd->uid;
		st->nworkloads++;
	}
	if ((r = np_state_refresh(st))) {
undo:
		while (st->nworkloads > old)
			np_workload_alloc_free(&st->w[--st->nworkloads]);
		np_state_refresh(st);
		goto out;
	}
	if (nadopted)
		*nadopted = nadd;
out:
	free(pods);
	free(order);
	free(owner);
	return r;
}

int np_kubelet_adopt(struct np_node_state *st,
		     const struct np_kubelet_checkpoint *ck,
		     const char *cgroup_prefix, int *nadopted, char *err,
		     size_t errlen)
{
	return adopt(st, ck, cgroup_prefix, NULL, nadopted, err, errlen);
}

int np_kubelet_import(const char *path, struct np_node_state *st,
		      const char *cgroup_prefix, char *err, size_t errlen)
{
	struct np_kubelet_checkpoint ck;
	char aerr[768];
	int r;

	if ((r = np_kubelet_checkpoint_read(&ck, path, err, errlen)))
		return r;
	r = adopt(st, &ck, cgroup_prefix, NULL, NULL, aerr, sizeof(aerr));
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
	if ((r = adopt(&cp, &ck, cgroup_prefix, uids, &n, aerr,
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
		    np_workload_alloc_to_json(&cp, &cp.w[st->nworkloads + i]);
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
