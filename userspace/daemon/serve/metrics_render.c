// SPDX-License-Identifier: Apache-2.0
/*
 * What /metrics says (Prometheus text format 0.0.4): the daemon's
 * families, rendered by the loop thread into the snapshot, and the BPF
 * side, read by the scrape thread. Names follow Prometheus' conventions:
 * numaplace_ prefix, base units, counters end in _total. Served by
 * metrics.c; the daemon listens and publishes in metrics_daemon.c.
 */
#include "daemon/daemon_internal.h"
#include "daemon/serve/metrics.h"
#include "numaplace/bpf_maps.h"
#include "numaplace/version.h"

#include <bpf/bpf.h>
#include <stdlib.h>
#include <string.h>

/* A label value with \, " and newline escaped. */
static void esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f), fputc(*s, f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void family(FILE *f, const char *name, const char *type,
		   const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void counter(FILE *f, const char *name, const char *help, uint64_t v)
{
	family(f, name, "counter", help);
	fprintf(f, "%s %llu\n", name, (unsigned long long)v);
}

static void histogram(FILE *f, const char *name, const char *help,
		      const struct np_hist *h, const double *le)
{
	uint64_t cum = 0;

	family(f, name, "histogram", help);
	for (int i = 0; i < NP_HIST_BUCKETS; i++) {
		cum += h->bucket[i];
		fprintf(f, "%s_bucket{le=\"%g\"} %llu\n", name, le[i],
			(unsigned long long)cum);
	}
	fprintf(f, "%s_bucket{le=\"+Inf\"} %llu\n", name,
		(unsigned long long)h->count);
	fprintf(f, "%s_sum %.9g\n%s_count %llu\n", name, h->sum, name,
		(unsigned long long)h->count);
}

/* numaplace_cpus{pool,node}: each pool's CPUs on each NUMA node. */
static void cpus_by_pool(FILE *f, const struct np_daemon *d)
{
	struct np_pools p;
	np_cpuset online = d->topo->online, shared;
	const struct {
		const char *name;
		const np_cpuset *set;
	} pools[] = {{"online", &online},     {"reserved", &p.reserved},
		     {"shared", &shared},     {"exclusive", &p.exclusive},
		     {"be", &p.be},	      {"offline", &d->st.offline}};

	np_state_pools(&d->st, &p);
	/* the shared pool less the reserved CPUs: reserved + shared +
	 * exclusive = online */
	np_cpuset_andnot(&shared, &p.shared, &p.reserved);
	np_cpuset_andnot(&online, &online, &d->st.offline);
	family(f, "numaplace_cpus", "gauge",
	       "CPUs per pool and NUMA node (online = reserved + shared + "
	       "exclusive; be: where best-effort work may run; offline: "
	       "hot-unplugged).");
	for (size_t k = 0; k < sizeof(pools) / sizeof(pools[0]); k++)
		for (int i = 0; i < d->topo->nnuma; i++) {
			np_cpuset node = d->topo->numa[i].u.cpus;
			/* offline CPUs are not in the node's (online) set */
			for (int c = 0; c < d->topo->max_cpu; c++)
				if (d->topo->cpu[c].present &&
				    d->topo->cpu[c].numa == i)
					np_cpuset_set(&node, c);
			fprintf(f, "numaplace_cpus{pool=\"%s\",node=\"%d\"} %d\n",
				pools[k].name, d->topo->numa[i].u.id,
				np_cpuset_count_and(pools[k].set, &node));
		}
}

static void workloads(FILE *f, const struct np_daemon *d)
{
	static const enum np_qos classes[] = {NP_QOS_LSE, NP_QOS_LSR,
					      NP_QOS_LS, NP_QOS_BE};
	int n[sizeof(classes) / sizeof(classes[0])] = {0}, degraded = 0;
	/* rendered after every wakeup of the loop: the per-workload CPU sets
	 * are looked at only while a CPU is offline */
	bool any_offline = !np_cpuset_empty(&d->st.offline);

	for (int i = 0; i < d->st.nworkloads; i++) {
		np_cpuset off;
		for (size_t k = 0; k < sizeof(classes) / sizeof(classes[0]); k++)
			if (d->st.w[i]->qos_class == classes[k])
				n[k]++;
		if (any_offline)
			degraded += np_state_degraded(&d->st, i, &off);
	}
	family(f, "numaplace_workloads", "gauge",
	       "Admitted workloads by QoS class.");
	for (size_t k = 0; k < sizeof(classes) / sizeof(classes[0]); k++)
		fprintf(f, "numaplace_workloads{qos=\"%s\"} %d\n",
			np_qos_name(classes[k]), n[k]);
	family(f, "numaplace_degraded_workloads", "gauge",
	       "Exclusive workloads holding a CPU that is offline.");
	fprintf(f, "numaplace_degraded_workloads %d\n", degraded);
}

/* config.be_suppress: the last result (only when a policy is on). */
static void be_suppress(FILE *f, const struct np_daemon *d)
{
	const struct np_suppress_out *o = &d->suppress.out;

	if (d->cfg.be_suppress.policy == NP_SUPPRESS_NONE)
		return;
	family(f, "numaplace_be_suppress_cpus", "gauge",
	       "BE suppression: the CPUs best-effort work may use now "
	       "(policy cpuset; the whole BE pool until the first sample).");
	fprintf(f, "numaplace_be_suppress_cpus %d\n",
		d->suppress.valid ? o->cpus : -1);
	family(f, "numaplace_be_suppress_budget_millicpus", "gauge",
	       "BE suppression: capacity x threshold% - non-BE - system "
	       "usage at the last sample.");
	fprintf(f, "numaplace_be_suppress_budget_millicpus %lld\n",
		(long long)o->budget);
	family(f, "numaplace_be_suppress_quota_us", "gauge",
	       "BE suppression: the cpu.max quota per 100000 us period "
	       "(policy cfsQuota).");
	fprintf(f, "numaplace_be_suppress_quota_us %lld\n",
		(long long)o->quota_us);
	counter(f, "numaplace_be_suppress_samples_total",
		"BE suppression: usage samples taken.", d->suppress.samples);
}

static void counters(FILE *f, const struct np_daemon *d)
{
	family(f, "numaplace_admissions_total", "counter",
	       "Admission decisions by result (a spec file rejected again "
	       "for the same reason is counted once).");
	fprintf(f, "numaplace_admissions_total{result=\"admitted\"} %llu\n",
		(unsigned long long)d->n.admitted);
	fprintf(f, "numaplace_admissions_total{result=\"rejected\"} %llu\n",
		(unsigned long long)d->n.rejected);
	family(f, "numaplace_rejections_total", "counter",
	       "Rejected admissions by the resource that did not fit.");
	for (int i = 0; i < NP_REJ_RESOURCES && d->rej_by[i].resource[0]; i++) {
		fputs("numaplace_rejections_total{resource=\"", f);
		esc(f, d->rej_by[i].resource);
		fprintf(f, "\"} %llu\n", (unsigned long long)d->rej_by[i].n);
	}
	family(f, "numaplace_rejections_by_kind_total", "counter",
	       "Rejected admissions by the kubelet's reason for the same "
	       "rejection (error_kind), those that have one.");
	for (int i = 0; i < NP_REJ_RESOURCES && d->rej_kind[i].resource[0];
	     i++) {
		fputs("numaplace_rejections_by_kind_total{error_kind=\"", f);
		esc(f, d->rej_kind[i].resource);
		fprintf(f, "\"} %llu\n", (unsigned long long)d->rej_kind[i].n);
	}
	counter(f, "numaplace_releases_total", "Workloads released.",
		d->n.released);
	counter(f, "numaplace_drift_repairs_total",
		"Cgroups found changed by someone else and written back.",
		d->n.drift_repaired);
	counter(f, "numaplace_cgroup_writes_total",
		"Cgroup file writes and unit property changes.", d->n.writes);
	counter(f, "numaplace_cgroup_write_errors_total",
		"Cgroup writes the kernel or the bus refused.",
		d->n.write_errors);
	counter(f, "numaplace_vanished_cgroups_total",
		"Workloads released because their cgroup was removed.",
		d->n.vanished);
	counter(f, "numaplace_state_saves_total",
		"State saves (journal records and compactions).",
		d->n.state_saves);
	counter(f, "numaplace_reconcile_quiet_cycles_total",
		"Reconcile cycles that skipped the managed cgroups: nothing "
		"had changed since the last one through them.",
		d->n.quiet_cycles);
	counter(f, "numaplace_cpu_hotplug_changes_total",
		"Changes of the set of offline CPUs.", d->n.hotplug);
	counter(f, "numaplace_replaced_workloads_total",
		"Workloads re-placed off offline CPUs.", d->n.replaced);
}

char *np_metrics_render_daemon(const struct np_daemon *d, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	family(f, "numaplace_build_info", "gauge",
	       "numaplace's version and BPF map layout; always 1.");
	fprintf(f, "numaplace_build_info{version=\"%s\",bpf_abi=\"%d\"} 1\n",
		NP_VERSION, NP_BPF_ABI_VERSION);
	cpus_by_pool(f, d);
	workloads(f, d);
	be_suppress(f, d);
	counters(f, d);
	histogram(f, "numaplace_admission_duration_seconds",
		  "Time to decide and durably save an admission.",
		  &d->hist_admit, np_hist_admission_le);
	histogram(f, "numaplace_reconcile_duration_seconds",
		  "Time of a reconcile cycle.", &d->hist_reconcile,
		  np_hist_reconcile_le);
	family(f, "numaplace_last_reconcile_timestamp_seconds", "gauge",
	       "When the last reconcile cycle ended (Unix time).");
	fprintf(f, "numaplace_last_reconcile_timestamp_seconds %lld\n",
		(long long)d->last_cycle.time);
	family(f, "numaplace_verification_enabled", "gauge",
	       "1 when the eBPF verification programs are loaded.");
	fprintf(f, "numaplace_verification_enabled %d\n", d->verify != NULL);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* One family of a per-workload value; v(row, arg) gives it. */
typedef double (*row_value)(const struct np_bpf_slot_row *r, int arg,
			    double tick);

static void per_workload(FILE *f, const struct np_bpf_slot_row *rows, int n,
			 const char *name, const char *help, const char *label,
			 const char *const *values, int nvalues, row_value v,
			 double tick)
{
	family(f, name, "counter", help);
	for (int i = 0; i < n; i++)
		for (int k = 0; k < (values ? nvalues : 1); k++) {
			fprintf(f, "%s{workload=\"", name);
			esc(f, rows[i].s.name);
			if (values)
				fprintf(f, "\",%s=\"%s", label, values[k]);
			fprintf(f, "\"} %.9g\n", v(&rows[i], k, tick));
		}
}

static double v_outside_s(const struct np_bpf_slot_row *r, int k, double t)
{
	(void)k;
	return t > 0 ? (double)r->c.run_outside_ticks / t : 0;
}

static double v_outside_n(const struct np_bpf_slot_row *r, int k, double t)
{
	(void)k, (void)t;
	return (double)r->c.run_outside;
}

static double v_intrusions(const struct np_bpf_slot_row *r, int k, double t)
{
	struct np_bpf_kinds kinds;
	(void)t;
	np_bpf_kinds_of_counters(&kinds, &r->c);
	return (double)kinds.count[k];
}

static double v_intrusion_s(const struct np_bpf_slot_row *r, int k, double t)
{
	struct np_bpf_kinds kinds;
	np_bpf_kinds_of_counters(&kinds, &r->c);
	return (double)kinds.ns[k] / 1e9 +
	       (t > 0 ? (double)kinds.ticks[k] / t : 0);
}

static double v_migrations(const struct np_bpf_slot_row *r, int k, double t)
{
	const uint64_t v[] = {r->c.migrations, r->c.migrate_xl3,
			      r->c.migrate_xnuma, r->c.migrate_disallowed};
	(void)t;
	return (double)v[k];
}

static double v_fault_pages(const struct np_bpf_slot_row *r, int k, double t)
{
	const uint64_t v[] = {r->c.fault_pages_local, r->c.fault_pages_remote,
			      r->c.fault_pages_outside_mems};
	(void)t;
	return (double)v[k];
}

static double v_balancer(const struct np_bpf_slot_row *r, int k, double t)
{
	const uint64_t v[] = {r->c.numa_move, r->c.numa_swap, r->c.numa_stick};
	(void)t;
	return (double)v[k];
}

static void bpf_workloads(FILE *f, const struct np_bpf_slot_row *rows, int n,
			  double tick)
{
	static const char *const kinds[] = {"user", "kthread", "hardirq",
					    "softirq"};
	static const char *const mig[] = {"any", "cross_l3", "cross_numa",
					  "disallowed"};
	static const char *const pages[] = {"local", "remote", "outside_mems"};
	static const char *const bal[] = {"move", "swap", "stick"};

	per_workload(f, rows, n, "numaplace_workload_outside_seconds_total",
		     "Time its tasks ran outside its CPUs (cpu-clock samples "
		     "over the sampling rate).",
		     NULL, NULL, 0, v_outside_s, tick);
	per_workload(f, rows, n, "numaplace_workload_outside_switches_total",
		     "Switches in of its tasks on a CPU outside its set.", NULL,
		     NULL, 0, v_outside_n, tick);
	per_workload(f, rows, n, "numaplace_workload_intrusions_total",
		     "Others run on its exclusive CPUs, by kind: switches in "
		     "(user tasks, kernel threads) or handlers run (IRQs).",
		     "kind", kinds, 4, v_intrusions, tick);
	per_workload(f, rows, n, "numaplace_workload_intrusion_seconds_total",
		     "Time others ran on its exclusive CPUs, by kind.", "kind",
		     kinds, 4, v_intrusion_s, tick);
	per_workload(f, rows, n, "numaplace_workload_migrations_total",
		     "Migrations of its tasks: any, and those across L3 "
		     "caches, across NUMA nodes, to a CPU outside its set (the "
		     "kinds overlap; any counts each once).",
		     "kind", mig, 4, v_migrations, tick);
	per_workload(f, rows, n, "numaplace_workload_numa_fault_pages_total",
		     "Pages of its NUMA hinting faults: on the faulting CPU's "
		     "node, on another node, on a node outside its mems.",
		     "locality", pages, 3, v_fault_pages, tick);
	per_workload(f, rows, n, "numaplace_workload_numa_balancer_total",
		     "The kernel's NUMA balancer moving or swapping its tasks, "
		     "or failing to.",
		     "action", bal, 3, v_balancer, tick);
}

static void bpf_programs(FILE *f, const struct np_bpf_prog_ref *progs,
			 int nprogs)
{
	int stats = -1;
	FILE *s = fopen("/proc/sys/kernel/bpf_stats_enabled", "re");

	if (s) {
		if (fscanf(s, "%d", &stats) != 1)
			stats = -1;
		fclose(s);
	}
	family(f, "numaplace_bpf_stats_enabled", "gauge",
	       "kernel.bpf_stats_enabled (run counts and time count only "
	       "while it is 1).");
	fprintf(f, "numaplace_bpf_stats_enabled %d\n", stats > 0);
	/* as of the last snapshot (np_bpf_prog_list after the last cycle
	 * or batch of requests), read by fd: by id needs CAP_SYS_ADMIN */
	family(f, "numaplace_bpf_program_runs_total", "counter",
	       "Runs of each verification program.");
	for (int i = 0; i < nprogs; i++)
		fprintf(f, "numaplace_bpf_program_runs_total{program=\"%s\"} %llu\n",
			progs[i].name, (unsigned long long)progs[i].run_cnt);
	family(f, "numaplace_bpf_program_run_seconds_total", "counter",
	       "Time spent in each verification program.");
	for (int i = 0; i < nprogs; i++)
		fprintf(f, "numaplace_bpf_program_run_seconds_total{program=\"%s\"} %.9g\n",
			progs[i].name, (double)progs[i].run_ns / 1e9);
}

void np_metrics_render_bpf(FILE *f, const char *pin_dir, unsigned tick_hz,
			   const struct np_bpf_prog_ref *progs, int nprogs)
{
	struct np_bpf_maps m;
	struct np_bpf_slot_row *rows = NULL;
	struct np_bpf_info info;
	char err[512];
	uint32_t k = 0;
	int n;

	if (!pin_dir || !*pin_dir)
		return;
	np_bpf_maps_init(&m);
	if (np_bpf_maps_open_pinned(&m, pin_dir, err, sizeof(err)))
		return; /* verification is off, or its pins are gone */
	if (!bpf_map_lookup_elem(m.info, &k, &info) && info.tick_hz)
		tick_hz = info.tick_hz;
	n = np_bpf_slots_read(&m, &rows);
	if (n >= 0)
		bpf_workloads(f, rows, n, (double)tick_hz);
	free(rows);
	np_bpf_maps_close(&m);
	bpf_programs(f, progs, nprogs);
}
