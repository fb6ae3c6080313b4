// SPDX-License-Identifier: Apache-2.0
/*
 * numaplace violations: intrusions on exclusive CPUs by kind of intruder.
 * Totals per workload come from np_counters (they survive an owner
 * change); the per-CPU split from np_cpu_intrude (since the CPU's current
 * owner took it).
 */
#include "violations_kinds.h"

#include <stdio.h>
#include <stdlib.h>

static bool is_irq(int k)
{
	return k == NP_BPF_IK_HARDIRQ || k == NP_BPF_IK_SOFTIRQ;
}

json_t *vk_kinds_json(const struct np_bpf_kinds *k, bool run_ns)
{
	json_t *o = json_object();

	for (int i = 0; i < NP_BPF_IK_N; i++) {
		json_t *v;
		if (is_irq(i)) {
			v = json_pack("{s:I,s:I}", "count",
				      (json_int_t)k->count[i], "ns",
				      (json_int_t)k->ns[i]);
		} else {
			v = json_pack("{s:I,s:I}", "switches",
				      (json_int_t)k->count[i], "ticks",
				      (json_int_t)k->ticks[i]);
			if (run_ns)
				json_object_set_new(
				    v, "ns", json_integer((json_int_t)k->ns[i]));
		}
		json_object_set_new(o, np_bpf_intrude_kind_name((uint32_t)i),
				    v);
	}
	return o;
}

json_t *vk_cpus_json(const struct np_bpf_maps *m, uint32_t slot)
{
	int max = m->ncpus > 0 ? m->ncpus : 1;
	struct np_bpf_cpu_row *rows = calloc((size_t)max, sizeof(*rows));
	json_t *a = json_array();
	int n;

	if (!rows)
		return a;
	n = np_bpf_cpu_intrude_read(m, slot, rows, max);
	for (int i = 0; i < n; i++) {
		struct np_bpf_kinds k;
		np_bpf_kinds_of_cpu(&k, &rows[i].v);
		json_array_append_new(
		    a, json_pack("{s:i,s:b,s:I,s:o}", "cpu", (int)rows[i].cpu,
				 "owned", rows[i].owned, "since_ns",
				 (json_int_t)rows[i].v.since_ns, "kinds",
				 vk_kinds_json(&k, true)));
	}
	free(rows);
	return a;
}

/* "123 switch(es), 45 tick(s) (~0.45 s)" or "12, 0.34 ms"; with run_ns
 * (one CPU's entry) a task kind's run time follows: ", ran 451.020 ms". */
static void kind_text(char *buf, size_t len, const struct np_bpf_kinds *k,
		      int i, unsigned tick_hz, bool run_ns)
{
	int n;

	if (is_irq(i)) {
		snprintf(buf, len, "%llu, %.3f ms",
			 (unsigned long long)k->count[i], (double)k->ns[i] / 1e6);
		return;
	}
	if (tick_hz && k->ticks[i])
		n = snprintf(buf, len, "%llu switch(es), %llu tick(s) (~%.2f s)",
			     (unsigned long long)k->count[i],
			     (unsigned long long)k->ticks[i],
			     (double)k->ticks[i] / tick_hz);
	else
		n = snprintf(buf, len, "%llu switch(es), %llu tick(s)",
			     (unsigned long long)k->count[i],
			     (unsigned long long)k->ticks[i]);
	if (run_ns && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ", ran %.3f ms",
			 (double)k->ns[i] / 1e6);
}

bool vk_print(const struct np_bpf_kinds *tot, const struct np_bpf_kinds *d,
	      bool all, bool watch, unsigned tick_hz)
{
	bool head = false;

	for (int i = 0; i < NP_BPF_IK_N; i++) {
		char t[128];
		if (!all && !tot->count[i] && !tot->ticks[i] && !tot->ns[i])
			continue;
		if (!head)
			printf("  %-12s(what each suggests)\n", "by kind");
		head = true;
		kind_text(t, sizeof(t), tot, i, tick_hz, false);
		printf("    %-8s %-44s", np_bpf_intrude_kind_name((uint32_t)i),
		       t);
		if (watch && d && (d->count[i] || d->ticks[i] || d->ns[i]))
			printf(" (+%llu)", (unsigned long long)d->count[i]);
		printf("  %s\n", np_bpf_intrude_kind_hint((uint32_t)i));
	}
	return head;
}

void vk_print_cpus(const struct np_bpf_maps *m, uint32_t slot,
		   unsigned tick_hz)
{
	int max = m->ncpus > 0 ? m->ncpus : 1;
	struct np_bpf_cpu_row *rows = calloc((size_t)max, sizeof(*rows));
	int n;

	if (!rows)
		return;
	n = np_bpf_cpu_intrude_read(m, slot, rows, max);
	if (n < 0)
		printf("  per CPU: cannot read %s\n", NP_BPF_MAP_CPU_INTRUDE);
	else if (!n)
		printf("  per CPU: nothing counted on its CPUs\n");
	for (int i = 0; i < n; i++) {
		struct np_bpf_kinds k;
		np_bpf_kinds_of_cpu(&k, &rows[i].v);
		printf("  CPU %-4u%s", rows[i].cpu,
		       rows[i].owned ? "" : " (no longer its)");
		for (int j = 0; j < NP_BPF_IK_N; j++) {
			char t[128];
			kind_text(t, sizeof(t), &k, j, tick_hz, true);
			printf("%s %s %s", j ? ";" : "",
			       np_bpf_intrude_kind_name((uint32_t)j), t);
		}
		printf("\n");
	}
	free(rows);
}
