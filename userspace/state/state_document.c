// SPDX-License-Identifier: Apache-2.0
/*
 * The state file's document (numaplace/state_file.h): the topology as
 * the file records it, and the whole document of a state (policy,
 * topology, their fingerprints, the state, the pools, the daemon's part,
 * the checksum). state_file.c loads and compares against it,
 * state_stream.c writes the same text a workload at a time.
 */
#include "numaplace/state_file.h"
#include "state_internal.h"

#include <stdio.h>
#include <stdlib.h>

json_t *np_statefile_cpus_json(const np_cpuset *s)
{
	char *str = np_cpuset_str(s);
	json_t *j = str ? json_string(str) : NULL;
	free(str);
	return j;
}

/* o[id] = cpus as a list string. */
static int put_cpus(json_t *o, int id, const np_cpuset *cpus)
{
	char key[32];

	snprintf(key, sizeof(key), "%d", id);
	return json_object_set_new(o, key, np_statefile_cpus_json(cpus));
}

json_t *np_statefile_topology_json(const struct np_topology *t)
{
	json_t *o = json_object(), *numa = json_object(),
	       *sockets = json_object(), *cores = json_object();

	if (!o || !numa || !sockets || !cores)
		goto nomem;
	/* Every NUMA node, also memory-only ones: mems name them. */
	for (int i = 0; i < t->nnuma; i++)
		if (put_cpus(numa, t->numa[i].u.id, &t->numa[i].u.cpus))
			goto nomem;
	for (int i = 0; i < t->nsockets; i++)
		if (t->sockets[i].ncpus &&
		    put_cpus(sockets, t->sockets[i].id, &t->sockets[i].cpus))
			goto nomem;
	for (int i = 0; i < t->ncores; i++)
		if (t->cores[i].ncpus &&
		    put_cpus(cores, t->cores[i].id, &t->cores[i].cpus))
			goto nomem;
	if (json_object_set_new(o, "online",
				np_statefile_cpus_json(&t->online)) ||
	    json_object_set_new(o, "numa", numa) ||
	    json_object_set_new(o, "sockets", sockets) ||
	    json_object_set_new(o, "cores", cores)) {
		numa = sockets = cores = NULL; /* owned by o (or freed) now */
		goto nomem;
	}
	return o;
nomem:
	json_decref(numa);
	json_decref(sockets);
	json_decref(cores);
	json_decref(o);
	return NULL;
}

json_t *np_statefile_document(const struct np_node_state *st)
{
	return np_statefile_document_with(st, NULL);
}

json_t *np_statefile_document_with(const struct np_node_state *st,
				   const json_t *daemon)
{
	return np_statefile_document_seq(st, daemon, 0);
}

json_t *np_statefile_document_seq(const struct np_node_state *st,
				  const json_t *daemon, uint64_t seq)
{
	json_t *policy = np_policy_to_json(&st->policy);
	json_t *topo = np_statefile_topology_json(st->topo);
	json_t *state = NULL, *pools = np_pools_to_json(st);
	json_t *body = NULL, *doc = NULL;
	uint64_t hp, ht, hb;

	if (!policy || !topo || !pools || np_state_to_json(st, &state))
		goto out;
	hp = np_json_fnv1a64(policy);
	ht = np_json_fnv1a64(topo);
	body = json_pack("{s:{s:o,s:o},s:O,s:O,s:O,s:O}", "fingerprint",
			 "policy", np_statefile_hash_json(hp), "topology",
			 np_statefile_hash_json(ht), "policy", policy,
			 "topology", topo, "state", state, "pools", pools);
	if (body && daemon &&
	    json_object_set(body, "daemon", (json_t *)daemon)) {
		json_decref(body);
		body = NULL;
	}
	if (body && seq && json_object_set_new(body, "journal_seq",
					       json_integer((json_int_t)seq))) {
		json_decref(body);
		body = NULL;
	}
	if (!body || !(hb = np_json_fnv1a64(body)))
		goto out;
	doc = json_pack("{s:s,s:i,s:o,s:O,s:s}", "format", NP_STATEFILE_FORMAT,
			"version", NP_STATEFILE_VERSION, "checksum",
			np_statefile_hash_json(hb), "body", body,
			"numaplace_version", NP_VERSION);
out:
	json_decref(policy);
	json_decref(topo);
	json_decref(state);
	json_decref(pools);
	json_decref(body);
	return doc;
}
