// SPDX-License-Identifier: Apache-2.0
/*
 * The saved form of a node state (np_state_to_json, loaded back by
 * np_state_load_json in admit_json.c), one workload at a time, and the
 * fingerprint that tells a writer which workloads changed since it last
 * saved them (numaplace/admit.h).
 */
#include "engine/json_util.h"
#include "numaplace/admit.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static json_t *charges_json(const struct np_mem_charge *chg, json_t **hp)
{
	json_t *mem = json_object();
	char buf[32];

	*hp = json_array();
	for (int n = 0; chg && n < NP_MAX_NUMA; n++) {
		if (!chg->mem[n])
			continue;
		snprintf(buf, sizeof(buf), "%d", n);
		json_object_set_new(mem, buf, json_integer((json_int_t)chg->mem[n]));
	}
	for (int h = 0; chg && h < NP_MAX_HUGEPAGE_SIZES; h++)
		for (int n = 0; n < NP_MAX_NUMA; n++)
			if (chg->huge[h][n])
				json_array_append_new(
				    *hp, json_pack("{s:i,s:i,s:I}", "size_index",
						   h, "node", n, "pages",
						   (json_int_t)chg->huge[h][n]));
	return mem;
}

static json_t *container_json(const struct np_node_state *st,
			      const char *name,
			      const struct np_container_alloc *ca)
{
	json_t *hp, *mem = charges_json(ca->charge, &hp), *dv = json_array();
	json_t *o;

	for (int k = 0; k < ca->ndev; k++)
		json_array_append_new(
		    dv, json_pack("{s:s,s:s}", "id",
				  st->topo->devices[ca->dev[k]].id, "resource",
				  st->topo->devices[ca->dev[k]].resource));
	o = json_pack("{s:s,s:b,s:o,s:o,s:o,s:o,s:o,s:o}", "name", name,
		      "exclusive", ca->exclusive, "cpus",
		      np_json_cpuset_str(ca->cpus), "mems",
		      np_json_nodemask(ca->mems), "hint", np_json_hint(&ca->hint),
		      "memory", mem, "hugepages", hp, "devices", dv);
	if (o && ca->baseline && !np_cpuset_empty(ca->baseline) &&
	    !np_cpuset_equal(ca->baseline, ca->cpus) &&
	    json_object_set_new(o, "baseline", np_json_cpuset_str(ca->baseline)))
		goto fail;
	if (o && ca->pod_shared &&
	    json_object_set_new(o, "pod_shared", json_true()))
		goto fail;
	return o;
fail:
	json_decref(o);
	return NULL;
}

json_t *np_workload_state_json(const struct np_node_state *st,
			       const struct np_workload_alloc *a)
{
	json_t *cs = json_array(), *wo;

	for (int c = 0; cs && c < a->ncontainers; c++)
		if (json_array_append_new(
			cs, container_json(st, np_container_name(a, c),
					   &a->c[c]))) {
			json_decref(cs);
			return NULL;
		}
	wo = json_pack("{s:o,s:s,s:o}", "spec", np_workload_req_to_json(&a->req),
		       "class", np_qos_name(a->qos_class), "containers", cs);
	if (wo && ((a->partition_by_verify &&
		    json_object_set_new(wo, "partitioned_by",
					json_string("verify"))) ||
		   (a->pod_rest &&
		    json_object_set_new(wo, "pod_rest",
					np_json_cpuset_str(a->pod_rest))))) {
		json_decref(wo);
		return NULL;
	}
	return wo;
}

json_t *np_state_head_json(const struct np_node_state *st)
{
	return json_pack("{s:o}", "reserved", np_json_cpuset_str(&st->reserved));
}

int np_state_to_json(const struct np_node_state *st, json_t **out)
{
	json_t *ws = json_array();

	for (int i = 0; ws && i < st->nworkloads; i++)
		if (json_array_append_new(ws,
					  np_workload_state_json(st, st->w[i]))) {
			json_decref(ws);
			ws = NULL;
		}
	*out = ws ? np_state_head_json(st) : NULL;
	if (*out && json_object_set_new(*out, "workloads", ws)) {
		json_decref(*out);
		*out = NULL;
	} else if (!*out)
		json_decref(ws);
	return *out ? 0 : -ENOMEM;
}

/* ---- fingerprint ---- */

#define K1 0x9E3779B97F4A7C15ull
#define K2 0xC2B2AE3D27D4EB4Full

static inline uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/* n bytes into h: four independent lanes of 8-byte words (a change of
 * any word changes its lane), the tail byte by byte, the length. */
static uint64_t absorb(uint64_t h, const void *buf, size_t n)
{
	const unsigned char *p = buf;
	uint64_t l0 = h ^ K1, l1 = h ^ K2, l2 = rotl(h, 17) + K1, l3 = ~h;
	size_t i = 0;

	for (; i + 32 <= n; i += 32) {
		uint64_t w[4];
		memcpy(w, p + i, sizeof(w));
		l0 = rotl(l0 ^ (w[0] * K2), 31) * K1;
		l1 = rotl(l1 ^ (w[1] * K2), 31) * K1;
		l2 = rotl(l2 ^ (w[2] * K2), 31) * K1;
		l3 = rotl(l3 ^ (w[3] * K2), 31) * K1;
	}
	for (; i < n; i++)
		l0 = rotl(l0 ^ (p[i] * K2), 31) * K1;
	h = l0 ^ rotl(l1, 13) ^ rotl(l2, 29) ^ rotl(l3, 43) ^ (n * K2);
	h ^= h >> 33;
	h *= K2;
	h ^= h >> 29;
	return h;
}

static uint64_t absorb_str(uint64_t h, const char *s)
{
	return s ? absorb(h, s, strlen(s) + 1) : absorb(h, "", 0);
}

/* One value (of the fields below: each one initialised). */
static inline uint64_t val(uint64_t h, uint64_t v)
{
	h = rotl(h ^ (v * K2), 31) * K1;
	return h ^ (h >> 29);
}

static uint64_t hint(uint64_t h, const struct np_hint *x)
{
	return val(val(h, x->mask),
		   (uint64_t)x->any | (uint64_t)x->preferred << 1);
}

static uint64_t container_req(uint64_t h, const struct np_container_req *c)
{
	h = absorb_str(h, c->name);
	h = absorb_str(h, c->cgroup);
	h = val(h, (uint64_t)c->cpu_milli);
	h = val(h, c->memory);
	h = val(h, (uint64_t)c->nhuge);
	for (int i = 0; i < c->nhuge && i < NP_MAX_HUGEPAGE_SIZES; i++)
		h = val(val(h, c->huge_bytes[i]), c->huge_size_kb[i]);
	h = val(h, (uint64_t)c->ndev);
	for (int i = 0; c->dev && i < c->ndev; i++)
		h = val(absorb_str(h, c->dev[i].resource),
			(uint64_t)c->dev[i].count);
	return val(h, (uint64_t)c->init | (uint64_t)c->restartable << 1);
}

static uint64_t request(uint64_t h, const struct np_workload_req *q)
{
	h = absorb_str(h, q->name);
	h = absorb_str(h, q->cgroup);
	h = absorb_str(h, q->unit);
	h = absorb_str(h, q->container_id);
	h = absorb_str(h, q->container_ns);
	if (q->container_res) { /* every field set, arrays to nhuge */
		const struct np_container_res *x = q->container_res;
		h = val(val(h, (uint64_t)x->cpu_limit), (uint64_t)x->cpu_request);
		h = val(val(h, (uint64_t)x->memory_limit), (uint64_t)x->nhuge);
		for (int i = 0; i < x->nhuge && i < NP_MAX_HUGEPAGE_SIZES; i++)
			h = val(val(h, x->huge_size_kb[i]), x->huge_limit[i]);
	}
	h = val(h, q->container_res != NULL);
	h = val(h, (uint64_t)q->qos);
	h = val(h, (uint64_t)q->bind);
	h = val(h, (uint64_t)q->excl);
	h = val(h, (uint64_t)q->has_bind | (uint64_t)q->bind_required << 1 |
		       (uint64_t)q->partition << 2 | (uint64_t)q->movable << 3 |
		       (uint64_t)q->has_hint << 4 |
		       (uint64_t)q->has_pod_res << 5);
	h = hint(h, &q->hint);
	h = val(val(h, (uint64_t)q->pod_cpu_milli), q->pod_memory);
	h = val(h, (uint64_t)q->ncontainers);
	for (int k = 0; q->c && k < q->ncontainers; k++)
		h = container_req(h, &q->c[k]);
	return h;
}

static uint64_t container(uint64_t h, const char *name,
			  const struct np_container_alloc *c)
{
	static const np_cpuset none;

	h = absorb_str(h, name);
	h = val(h, (uint64_t)c->exclusive | (uint64_t)c->pod_shared << 1);
	h = absorb(h, c->cpus, sizeof(*c->cpus)); /* the set, not where */
	/* none and an empty one alike */
	if (c->baseline)
		h = absorb(h, c->baseline, sizeof(*c->baseline));
	else
		h = absorb(h, &none, sizeof(none));
	h = val(h, c->mems);
	h = hint(h, &c->hint);
	h = val(h, (uint64_t)c->ndev);
	for (int i = 0; i < c->ndev && i < 16; i++)
		h = val(h, (uint64_t)(uint16_t)c->dev[i]);
	if (c->charge) /* arrays of counts, every element set */
		h = absorb(h, c->charge, sizeof(*c->charge));
	return val(h, c->charge != NULL);
}

/* Field by field (not the structs' bytes: their padding and the unused
 * tails of their arrays are not initialised). A field added to the
 * allocation or its request that is saved must be added here. */
uint64_t np_workload_alloc_fp(const struct np_workload_alloc *a)
{
	uint64_t h = request(K1, &a->req);

	h = val(h, (uint64_t)a->qos_class);
	h = val(h, (uint64_t)a->excl);
	h = val(h, (uint64_t)a->partition_by_verify);
	h = val(h, (uint64_t)a->ncontainers);
	for (int k = 0; a->c && k < a->ncontainers; k++)
		h = container(h, np_container_name(a, k), &a->c[k]);
	if (a->pod_rest)
		h = absorb(h, a->pod_rest, sizeof(*a->pod_rest));
	return val(h, a->pod_rest != NULL);
}
