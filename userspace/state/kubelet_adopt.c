// SPDX-License-Identifier: Apache-2.0
/*
 * Adoption of a parsed kubelet checkpoint: one Guaranteed workload per pod
 * with exclusive CPUs, validated against the checkpoint itself, this
 * node's topology and numaplace's state, then appended all or nothing.
 * See numaplace/kubelet_import.h.
 */
#include "numaplace/cleanup.h"
#include "numaplace/error.h"
#include "numaplace/strmap.h"
#include "state/kubelet_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A cpuset as a short string for messages. */
static const char *cpus_str(const np_cpuset *s, char *buf, size_t len)
{
	if (np_cpuset_format(s, buf, len) < 0)
		snprintf(buf, len, "(%d CPUs)", np_cpuset_count(s));
	return buf;
}

struct pod {
	const char *uid;
	int first, n;		   /* entries of this pod: indexes in order[] */
	const np_cpuset *pod_cpus; /* V3 pod-level set or NULL */
	np_cpuset all;		   /* union of everything the pod holds */
	char name[NP_NAME_MAX];
	char cgroup[NP_PATH_MAX];
};

/* One adoption: the checkpoint's entries grouped by pod. */
struct adoption {
	const struct np_kubelet_checkpoint *ck;
	const struct np_topology *t;
	struct pod *pods;
	int npods;
	int *order; /* entry indexes, pod by pod */
	int *owner; /* CPU -> index of the entry holding it + 1 */
	/* pod UID -> index in pods[]; names given to pods so far: maps, so
	 * that 100,000 pods take no quadratic time */
	struct np_strmap uids, names;
};

/* The k-th entry in pod order. */
static const struct np_kubelet_entry *entry(const struct adoption *a, int k)
{
	return &a->ck->entries[a->order[k]];
}

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
		for (int c = 0; c < st->w[i]->ncontainers; c++)
			if (st->w[i]->c[c].exclusive &&
			    np_cpuset_intersects(st->w[i]->c[c].cpus, s))
				return i;
	return -1;
}

static int find_cgroup(const struct np_node_state *st, const char *cg)
{
	for (int i = 0; i < st->nworkloads; i++)
		if (!strcmp(st->w[i]->req.cgroup, cg))
			return i;
	return -1;
}

static int fill_container(const struct np_node_state *st,
			  struct np_container_req *rq,
			  struct np_container_alloc *ca, const char *name,
			  const np_cpuset *cpus)
{
	const struct np_topology *t = st->topo;
	int n = np_cpuset_count(cpus);
	const char *had = rq->name; /* np_workload_req_set_containers' "" */

	memset(rq, 0, sizeof(*rq));
	rq->name = had;
	memset(ca, 0, sizeof(*ca));
	ca->cpus = &np_cpuset_empty_set;
	/* the name first: a failure after the set would leave it to no one
	 * (the caller frees the containers before this one) */
	if (np_container_req_set_name(rq, name) ||
	    np_container_set_cpus(ca, cpus))
		return -ENOMEM;
	rq->cpu_milli = (int64_t)n * 1000;
	ca->exclusive = true;
	ca->mems = np_topology_nodes_of(t, cpus);
	ca->hint.any = false;
	ca->hint.mask = ca->mems;
	ca->hint.preferred = np_nodemask_count(ca->mems) <= min_nodes(t, n);
	return 0;
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

/* What the checkpoint must be for anything to be adopted. */
static int check_adoptable(const struct np_node_state *st,
			   const struct np_kubelet_checkpoint *ck, char *err,
			   size_t errlen)
{
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
		return np_errf(
		    err, errlen, -EINVAL,
		    "numaplace's node policy has cpu_policy \"none\": "
		    "adopting the kubelet's exclusive CPUs needs "
		    "cpu_policy \"static\"");
	return 0;
}

/* a->pods[] for uid, added if it is new: its index, or -ENOMEM. */
static int add_pod(struct adoption *a, const char *uid)
{
	long p;

	if (np_strmap_get(&a->uids, uid, &p))
		return (int)p;
	if (np_strmap_put(&a->uids, uid, a->npods))
		return -ENOMEM;
	a->pods[a->npods].uid = uid;
	return a->npods++;
}

/* Group entries by pod, pods in file order, entries in file order within
 * a pod (a counting sort). */
static int group_pods(struct adoption *a)
{
	const struct np_kubelet_checkpoint *ck = a->ck;
	_cleanup_free_ int *pod_of = calloc((size_t)ck->nentries + 1,
					    sizeof(int));
	int k = 0, p;

	if (!pod_of)
		return -ENOMEM;
	for (int i = 0; i < ck->nentries; i++) {
		if ((p = add_pod(a, ck->entries[i].pod_uid)) < 0)
			return p;
		pod_of[i] = p;
		a->pods[p].n++;
	}
	for (int i = 0; i < ck->npod_entries; i++) {
		if ((p = add_pod(a, ck->pod_entries[i].pod_uid)) < 0)
			return p;
		a->pods[p].pod_cpus = &ck->pod_entries[i].cpus;
	}
	for (p = 0; p < a->npods; p++) {
		a->pods[p].first = k;
		k += a->pods[p].n;
		a->pods[p].n = 0;
	}
	for (int i = 0; i < ck->nentries; i++) {
		struct pod *pd = &a->pods[pod_of[i]];
		a->order[pd->first + pd->n++] = i;
	}
	return 0;
}

/* The k-th entry: online here, outside defaultCpuSet, held once. */
static int check_entry(struct adoption *a, int k, char *err, size_t errlen)
{
	const struct np_kubelet_entry *e = entry(a, k), *o;
	char s1[256], s2[256];
	np_cpuset bad;

	np_cpuset_andnot(&bad, &e->cpus, &a->t->online);
	if (!np_cpuset_empty(&bad))
		return np_errf(
		    err, errlen, -EINVAL,
		    "entries[\"%s\"][\"%s\"]: CPUs %s are not online "
		    "CPUs of this node (online: %s); was the "
		    "checkpoint written on another machine?",
		    e->pod_uid, e->container, cpus_str(&bad, s1, sizeof(s1)),
		    cpus_str(&a->t->online, s2, sizeof(s2)));
	if (np_cpuset_intersects(&e->cpus, &a->ck->default_cpus)) {
		np_cpuset_and(&bad, &e->cpus, &a->ck->default_cpus);
		return np_errf(err, errlen, -EINVAL,
			       "entries[\"%s\"][\"%s\"]: CPUs %s are also in "
			       "defaultCpuSet: the checkpoint is inconsistent",
			       e->pod_uid, e->container,
			       cpus_str(&bad, s1, sizeof(s1)));
	}
	NP_CPUSET_FOREACH (cpu, &e->cpus) {
		if (!a->owner[cpu]) {
			a->owner[cpu] = a->order[k] + 1;
			continue;
		}
		o = &a->ck->entries[a->owner[cpu] - 1];
		return np_errf(err, errlen, -EINVAL,
			       "entries overlap: CPU %d is held by pod %s "
			       "container \"%s\" and by pod %s container "
			       "\"%s\"%s",
			       cpu, o->pod_uid, o->container, e->pod_uid,
			       e->container,
			       strcmp(o->pod_uid, e->pod_uid)
				   ? ""
				   : " (init-container CPU reuse? numaplace "
				     "cannot give two containers the same "
				     "exclusive CPUs; import once the pod's "
				     "init containers are gone)");
	}
	return 0;
}

/* A V3 pod-level set: holds its containers' CPUs, online, outside
 * defaultCpuSet. It is then all the pod holds. */
static int check_pod_set(struct adoption *a, struct pod *pd, char *err,
			 size_t errlen)
{
	char s1[256], s2[256];
	np_cpuset bad;

	np_cpuset_andnot(&bad, &pd->all, pd->pod_cpus);
	if (!np_cpuset_empty(&bad))
		return np_errf(
		    err, errlen, -EINVAL,
		    "podEntries[\"%s\"]: the pod's set %s lacks CPUs "
		    "%s of its containers",
		    pd->uid, cpus_str(pd->pod_cpus, s1, sizeof(s1)),
		    cpus_str(&bad, s2, sizeof(s2)));
	np_cpuset_andnot(&bad, pd->pod_cpus, &a->t->online);
	if (!np_cpuset_empty(&bad))
		return np_errf(
		    err, errlen, -EINVAL,
		    "podEntries[\"%s\"]: CPUs %s are not online CPUs "
		    "of this node",
		    pd->uid, cpus_str(&bad, s1, sizeof(s1)));
	if (np_cpuset_intersects(pd->pod_cpus, &a->ck->default_cpus))
		return np_errf(
		    err, errlen, -EINVAL,
		    "podEntries[\"%s\"]: overlaps defaultCpuSet: the "
		    "checkpoint is inconsistent",
		    pd->uid);
	pd->all = *pd->pod_cpus;
	return 0;
}

/* The checkpoint against itself and this node's CPUs. */
static int check_checkpoint(struct adoption *a, char *err, size_t errlen)
{
	int r;

	for (int p = 0; p < a->npods; p++) {
		struct pod *pd = &a->pods[p];
		for (int k = pd->first; k < pd->first + pd->n; k++) {
			if ((r = check_entry(a, k, err, errlen)))
				return r;
			np_cpuset_or(&pd->all, &pd->all, &entry(a, k)->cpus);
		}
		if (pd->pod_cpus && (r = check_pod_set(a, pd, err, errlen)))
			return r;
	}
	/* Pod-level sets against other pods (a->owner is free again: CPU
	 * -> pod + 1; entries alone never overlap, so a clash involves a
	 * pod-level set). */
	memset(a->owner, 0, sizeof(*a->owner) * NP_MAX_CPUS);
	for (int p = 0; p < a->npods; p++)
		NP_CPUSET_FOREACH (cpu, &a->pods[p].all) {
			int q = a->owner[cpu] - 1;
			if (q < 0) {
				a->owner[cpu] = p + 1;
				continue;
			}
			if (!a->pods[p].pod_cpus)
				q = p, p = a->owner[cpu] - 1;
			return np_errf(err, errlen, -EINVAL,
				       "entries overlap: podEntries[\"%s\"] "
				       "shares CPUs with pod %s",
				       a->pods[p].uid, a->pods[q].uid);
		}
	return 0;
}
/* pods[p]'s workload name: kubelet-<8 characters of the UID>, else
 * kubelet-<UID>; taken neither in st nor by an earlier pod. */
static int name_pod(const struct np_node_state *st, struct adoption *a, int p,
		    char *err, size_t errlen)
{
	struct pod *pd = &a->pods[p];

	snprintf(pd->name, sizeof(pd->name), "kubelet-%.8s", pd->uid);
	for (int pass = 0; pass < 2; pass++) {
		bool taken = np_state_find(st, pd->name) >= 0 ||
			     np_strmap_get(&a->names, pd->name, NULL);
		if (!taken)
			return np_strmap_put(&a->names, pd->name, p)
				       ? np_errf(err, errlen, -ENOMEM,
						 "out of memory")
				       : 0;
		if (pass)
			return np_errf(
			    err, errlen, -EEXIST,
			    "pod %s: workload names kubelet-%.8s and "
			    "%s are both taken",
			    pd->uid, pd->uid, pd->name);
		snprintf(pd->name, sizeof(pd->name), "kubelet-%s", pd->uid);
	}
	return 0;
}

/* pods[p] against numaplace's state: cgroup, name, CPUs, reserved. */
static int check_pod_state(const struct np_node_state *st, struct adoption *a,
			   int p, const char *prefix, char *err, size_t errlen)
{
	struct pod *pd = &a->pods[p];
	char s1[256], s2[256];
	np_cpuset bad;
	int w, r;

	if (np_kubelet_pod_cgroup(prefix, pd->uid, pd->cgroup,
				  sizeof(pd->cgroup)))
		return np_errf(err, errlen, -EINVAL,
			       "cgroup prefix \"%s\" is too long", prefix);
	if ((w = find_cgroup(st, pd->cgroup)) >= 0)
		return np_errf(err, errlen, -EEXIST,
			       "pod %s is already adopted as workload \"%s\" "
			       "(cgroup %s)",
			       pd->uid, st->w[w]->req.name, pd->cgroup);
	if ((r = name_pod(st, a, p, err, errlen)) ||
	    (r = check_names(pd, err, errlen)))
		return r;
	if ((w = workload_of_cpus(st, &pd->all)) >= 0)
		return np_errf(
		    err, errlen, -EEXIST,
		    "pod %s holds CPUs %s, which conflict with "
		    "numaplace workload \"%s\"; release that "
		    "workload first, or leave this pod to the kubelet",
		    pd->uid, cpus_str(&pd->all, s1, sizeof(s1)),
		    st->w[w]->req.name);
	if (np_cpuset_intersects(&pd->all, &st->reserved)) {
		np_cpuset_and(&bad, &pd->all, &st->reserved);
		return np_errf(err, errlen, -EEXIST,
			       "pod %s holds CPUs %s that numaplace reserves "
			       "(reserved CPUs %s); make policy.reserved_cpus "
			       "match the kubelet's reserved CPUs",
			       pd->uid, cpus_str(&bad, s1, sizeof(s1)),
			       cpus_str(&st->reserved, s2, sizeof(s2)));
	}
	if (pd->n + (pd->pod_cpus ? 1 : 0) > NP_MAX_CONTAINERS)
		return np_errf(err, errlen, -EINVAL,
			       "pod %s has more than %d containers with "
			       "exclusive CPUs",
			       pd->uid, NP_MAX_CONTAINERS);
	for (int k = pd->first; k < pd->first + pd->n; k++)
		if (pd->pod_cpus &&
		    !strcmp(entry(a, k)->container, NP_KUBELET_POD_POOL))
			return np_errf(
			    err, errlen, -EINVAL,
			    "pod %s: a container is named \"%s\", the "
			    "name numaplace gives pod-level CPUs",
			    pd->uid, NP_KUBELET_POD_POOL);
	return 0;
}

/* pods[p] as a new workload in wa (zeroed; on a failure what it holds
 * is freed, wa itself is the caller's). */
static int make_workload(struct np_node_state *st, const struct adoption *a,
			 const struct pod *pd, struct np_workload_alloc *wa)
{
	np_cpuset rest;
	int c = 0, r;

	/* At most one container per entry plus the pod pool. */
	if ((r = np_workload_req_set_containers(&wa->req, pd->n + 1)))
		return r;
	wa->c = np_container_allocs_new(pd->n + 1);
	if (!wa->c) {
		np_workload_req_free(&wa->req);
		return -ENOMEM;
	}
	snprintf(wa->req.name, sizeof(wa->req.name), "%s", pd->name);
	if (!(wa->req.cgroup = strdup(pd->cgroup))) {
		np_workload_alloc_free(wa);
		return -ENOMEM;
	}
	wa->req.qos = NP_QOS_GUARANTEED;
	wa->qos_class = NP_QOS_LSE; /* Guaranteed with exclusive CPUs */
	wa->excl = NP_EXCL_NONE;
	rest = pd->all;
	for (int k = pd->first; k < pd->first + pd->n; k++) {
		const struct np_kubelet_entry *e = entry(a, k);
		if (np_cpuset_empty(&e->cpus))
			continue;
		if ((r = fill_container(st, &wa->req.c[c], &wa->c[c],
					e->container, &e->cpus)))
			goto fail;
		np_cpuset_andnot(&rest, &rest, &e->cpus);
		c++;
	}
	if (!np_cpuset_empty(&rest)) {
		if ((r = fill_container(st, &wa->req.c[c], &wa->c[c],
					NP_KUBELET_POD_POOL, &rest)))
			goto fail;
		c++;
	}
	/* the slots not used: their names ("") go */
	for (int k = c; k < wa->req.ncontainers; k++) {
		free((char *)wa->req.c[k].name);
		wa->req.c[k].name = NULL;
	}
	wa->req.ncontainers = wa->ncontainers = c;
	return 0;
fail:
	/* the filled containers' sets (the failing one holds none) */
	wa->ncontainers = c;
	np_workload_alloc_free(wa);
	return r;
}

/* Append nadd workloads, all or nothing. */
static int append_pods(struct np_node_state *st, const struct adoption *a,
		       int nadd, const char **uids)
{
	int old = st->nworkloads, r = 0;

	if (st->nworkloads + nadd > st->cap) {
		struct np_workload_alloc **g = realloc(
		    st->w, sizeof(*g) * (size_t)(st->nworkloads + nadd));
		if (!g)
			return -ENOMEM;
		st->w = g;
		st->cap = st->nworkloads + nadd;
	}
	for (int p = 0; p < a->npods && !r; p++) {
		const struct pod *pd = &a->pods[p];
		struct np_workload_alloc *wa;

		if (np_cpuset_empty(&pd->all))
			continue;
		if (!(wa = calloc(1, sizeof(*wa)))) {
			r = -ENOMEM;
			break;
		}
		if ((r = make_workload(st, a, pd, wa))) {
			free(wa);
			break;
		}
		st->w[st->nworkloads] = wa;
		if (uids)
			uids[st->nworkloads - old] = pd->uid;
		st->nworkloads++;
	}
	if (!r && !(r = np_state_refresh(st)))
		return 0;
	while (st->nworkloads > old) {
		np_workload_alloc_free(st->w[--st->nworkloads]);
		free(st->w[st->nworkloads]);
	}
	np_state_refresh(st);
	return r;
}

/* Validate everything, then append. */
int np_kubelet_adopt_uids(struct np_node_state *st,
			  const struct np_kubelet_checkpoint *ck,
			  const char *prefix, const char **uids, int *nadopted,
			  char *err, size_t errlen)
{
	_cleanup_free_ struct pod *pods = NULL;
	_cleanup_free_ int *order = NULL, *owner = NULL;
	struct adoption a = {.ck = ck, .t = st->topo};
	int nadd = 0, r;

	if (nadopted)
		*nadopted = 0;
	if ((r = check_adoptable(st, ck, err, errlen)))
		return r;
	pods = calloc((size_t)(ck->nentries + ck->npod_entries) + 1,
		      sizeof(*pods));
	order = calloc((size_t)ck->nentries + 1, sizeof(*order));
	owner = calloc(NP_MAX_CPUS, sizeof(*owner));
	if (!pods || !order || !owner)
		return -ENOMEM;
	a.pods = pods;
	a.order = order;
	a.owner = owner;
	if ((r = group_pods(&a)) ||
	    (r = check_checkpoint(&a, err, errlen)))
		goto out;
	for (int p = 0; p < a.npods; p++) {
		if (np_cpuset_empty(&pods[p].all))
			continue; /* nothing exclusive: nothing to adopt */
		if ((r = check_pod_state(st, &a, p, prefix, err, errlen)))
			goto out;
		nadd++;
	}
	if ((r = append_pods(st, &a, nadd, uids)))
		goto out;
	if (nadopted)
		*nadopted = nadd;
out:
	np_strmap_free(&a.uids);
	np_strmap_free(&a.names);
	return r;
}

int np_kubelet_adopt(struct np_node_state *st,
		     const struct np_kubelet_checkpoint *ck,
		     const char *cgroup_prefix, int *nadopted, char *err,
		     size_t errlen)
{
	return np_kubelet_adopt_uids(st, ck, cgroup_prefix, NULL, nadopted, err,
				     errlen);
}
