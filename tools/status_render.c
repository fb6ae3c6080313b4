// SPDX-License-Identifier: Apache-2.0
/*
 * `numaplace status` and `numaplace admit` for people: the status answer
 * as a CPU map per NUMA node, pools, workloads, counters, rejections and
 * the last reconcile cycle; an admission decision in two lines or so.
 */
#include "status_render.h"
#include "numaplace/cpuset.h"
#include "numaplace/error.h"
#include "numaplace/names.h"
#include "numaplace/topology_json.h"

#include "engine/json_util.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Exclusive workloads get A-Z then a-z; R, b and x mean something else. */
static const char letters[] =
    "ABCDEFGHIJKLMNOPQSTUVWXYZacdefghijklmnopqrstuvwyz";

struct wl_row {
	const char *name, *qos, *cls, *cgroup, *cpuset, *mems;
	char sym;
	char qc[64];
	char *containers; /* malloc'd */
};

static const char *str_or(const json_t *o, const char *key, const char *def)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : def;
}

static const char *fmt_set(const np_cpuset *s, char *buf, size_t len)
{
	if (np_cpuset_empty(s))
		snprintf(buf, len, "(none)");
	else if (np_cpuset_format(s, buf, len) < 0)
		snprintf(buf, len, "(%d CPUs)", np_cpuset_count(s));
	return buf;
}

static const char *fmt_time(json_int_t t, char *buf, size_t len)
{
	struct tm tm;
	time_t tt = (time_t)t;
	if (t <= 0 || !localtime_r(&tt, &tm) ||
	    !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "never");
	return buf;
}

/* "label item  item  item", wrapped before column 78; continuation lines
 * are indented by 8. */
struct wrap {
	FILE *out;
	int col;
	bool first;
};

static void wrap_start(struct wrap *w, FILE *out, const char *label)
{
	w->out = out;
	w->col = fprintf(out, "%s", label);
	w->first = true;
}

static void wrap_add(struct wrap *w, const char *text)
{
	int n = (int)strlen(text);
	if (!w->first && w->col + 2 + n > 78) {
		fprintf(w->out, "\n        ");
		w->col = 8;
	} else {
		fputs(w->first ? " " : "  ", w->out);
		w->col += w->first ? 1 : 2;
	}
	w->first = false;
	fputs(text, w->out);
	w->col += n;
}

static void wrap_end(struct wrap *w)
{
	fputc('\n', w->out);
}

static int digits(int v)
{
	int d = 1;
	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

static char *container_names(const json_t *cs)
{
	size_t i, n = 0;
	const json_t *c;
	char *s;

	json_array_foreach(cs, i, c)
	{
		n += strlen(str_or(c, "name", "?")) + 1;
	}
	s = malloc(n + 2);
	if (!s)
		return NULL;
	s[0] = '\0';
	json_array_foreach(cs, i, c)
	{
		if (i)
			strcat(s, ",");
		strcat(s, str_or(c, "name", "?"));
	}
	if (!json_array_size(cs))
		strcpy(s, "-");
	return s;
}

/* "RESOURCE ID,ID" per resource: the first after `first`, the others after
 * `sep`. */
static void print_devices(FILE *out, const json_t *devices, const char *first,
			  const char *sep)
{
	const json_t *ids, *id;
	const char *res;
	size_t m;

	json_object_foreach((json_t *)devices, res, ids)
	{
		fprintf(out, "%s%s", first, res);
		first = sep;
		json_array_foreach(ids, m, id)
		{
			const char *s = json_string_value(id);
			fprintf(out, "%s%s", m ? "," : " ", s ? s : "?");
		}
	}
}

static void print_hint(FILE *out, const json_t *hint)
{
	const json_t *mask = json_object_get(hint, "mask"), *v;
	size_t i;

	if (!json_is_object(hint))
		return;
	if (!json_is_array(mask)) {
		fprintf(out, "hint any"); /* no NUMA preference */
		return;
	}
	fprintf(out, "hint ");
	json_array_foreach(mask, i, v)
	{
		fprintf(out, "%s%lld", i ? "," : "",
			(long long)json_integer_value(v));
	}
	fprintf(out, " %s",
		json_is_true(json_object_get(hint, "preferred"))
		    ? "preferred"
		    : "not preferred");
}

/* The "verification" object: which signals are active and why the others
 * are not, what the daemon did, and one line per workload with anything
 * counted (only the counters that are not zero). */
static void render_verification(const json_t *v, FILE *out)
{
	static const struct {
		const char *key, *fmt;
	} wl[] = {
	    {"run_outside", "ran outside %lld switch(es)"},
	    {"run_outside_ticks", "%lld tick(s) outside"},
	    {"intrusions", "%lld intrusion(s)"},
	    {"migrate_disallowed", "%lld migration(s) to a disallowed CPU"},
	    {"outside_mems_bytes", "%lld byte(s) outside its mems"},
	    {"transition", "%lld transition(s) (not violations)"},
	};
	const json_t *sig, *act, *ws, *x;
	const char *key;
	json_int_t dropped;

	if (!json_is_object(v))
		return;
	fprintf(out, "\nverification: %s", str_or(v, "state", "?"));
	if (json_is_string(json_object_get(v, "pin_dir")))
		fprintf(out, " (maps in %s)", str_or(v, "pin_dir", "?"));
	fputc('\n', out);
	sig = json_object_get(v, "signals");
	json_object_foreach((json_t *)sig, key, x)
	    fprintf(out, "  %-20s %s\n", key,
		    json_is_string(x) ? json_string_value(x) : "?");
	act = json_object_get(v, "actions");
	dropped = json_integer_value(json_object_get(v, "samples_dropped"));
	if (json_is_object(act)) {
		fprintf(out,
			"  actions: %lld cpuset rewrite(s), %lld partition(s), "
			"%lld page migration(s), %lld report(s)",
			(long long)json_integer_value(
			    json_object_get(act, "rewrites")),
			(long long)json_integer_value(
			    json_object_get(act, "partitioned")),
			(long long)json_integer_value(
			    json_object_get(act, "migrations")),
			(long long)json_integer_value(
			    json_object_get(act, "reports")));
		if (dropped > 0)
			fprintf(out, "; %lld sample(s) dropped",
				(long long)dropped);
		fputc('\n', out);
	}
	ws = json_object_get(v, "workloads");
	json_object_foreach((json_t *)ws, key, x)
	{
		bool viol = json_is_true(json_object_get(x, "violation"));
		double ratio =
		    json_number_value(json_object_get(x, "remote_fault_ratio"));
		const char *sep = "";
		bool any = viol || ratio > 0;

		for (size_t i = 0; i < sizeof(wl) / sizeof(wl[0]); i++)
			any |= json_integer_value(
				   json_object_get(x, wl[i].key)) > 0;
		if (!any)
			continue;
		fprintf(out, "  %s %s:", viol ? "VIOLATION" : "counted  ", key);
		for (size_t i = 0; i < sizeof(wl) / sizeof(wl[0]); i++) {
			json_int_t n =
			    json_integer_value(json_object_get(x, wl[i].key));
			if (n <= 0)
				continue;
			fprintf(out, "%s ", sep);
			fprintf(out, wl[i].fmt, (long long)n);
			sep = ",";
		}
		if (ratio > 0)
			fprintf(out, "%s remote fault ratio %.2f", sep, ratio);
		fprintf(out, " (numaplace violations %s)\n", key);
	}
}

/* ---- the status object -------------------------------------------------- */

enum pool { P_RESERVED, P_SHARED, P_BE, P_ALLOCATABLE, P_EXCLUSIVE, NPOOLS };

/* Each pool's key in status.pools and its label under "pools:". */
static const struct {
	const char *key, *label;
} pool_def[NPOOLS] = {
    [P_RESERVED] = {"reserved", "reserved"},
    [P_SHARED] = {"shared", "shared"},
    [P_BE] = {"be", "BE"},
    [P_ALLOCATABLE] = {"allocatable", "allocatable"},
    [P_EXCLUSIVE] = {"exclusive", "exclusive"},
};

/* What the rendering of one status object works from. */
struct status_view {
	struct np_topology *t;
	const json_t *pools, *ws;
	np_cpuset pool[NPOOLS];
	struct wl_row *rows;
	size_t nw;
	char *sym; /* CPU -> the letter of its exclusive owner, or 0 */
	bool used_b, used_x, used_q, used_dash; /* marks for the legend */
};

static int parse_pools(struct status_view *v, const json_t *status, char *err,
		       size_t errlen)
{
	int r;

	v->pools = json_object_get(status, "pools");
	if (!json_is_object(v->pools)) {
		NP_ERR("status.pools: expected an object");
		return -EINVAL;
	}
	for (int k = 0; k < NPOOLS; k++) {
		np_cpuset_zero(&v->pool[k]);
		r = np_json_cpuset(v->pools, pool_def[k].key, "status.pools",
				   k < 2, &v->pool[k], err, errlen);
		if (r && r != -ENOENT)
			return r;
	}
	return 0;
}

/* The union of the workload's exclusive CPUs (its containers', else its
 * own); false if it has none. */
static int exclusive_cpus(const json_t *w, size_t i, np_cpuset *mine, bool *any,
			  char *err, size_t errlen)
{
	const json_t *c;
	char path[96];
	size_t k;
	int r;

	*any = false;
	np_cpuset_zero(mine);
	json_array_foreach(json_object_get(w, "containers"), k, c)
	{
		np_cpuset s;

		if (!json_is_true(json_object_get(c, "exclusive")))
			continue;
		snprintf(path, sizeof(path),
			 "status.workloads[%zu].containers[%zu]", i, k);
		if ((r = np_json_cpuset(c, "cpuset", path, true, &s, err,
					errlen)))
			return r;
		np_cpuset_or(mine, mine, &s);
		*any = true;
	}
	if (!*any && json_is_true(json_object_get(w, "exclusive"))) {
		snprintf(path, sizeof(path), "status.workloads[%zu]", i);
		if ((r = np_json_cpuset(w, "cpuset", path, true, mine, err,
					errlen)))
			return r;
		*any = true;
	}
	return 0;
}

/* Row i from workload w; its exclusive CPUs get its letter. */
static int fill_row(struct status_view *v, size_t i, const json_t *w,
		    int *nletter, char *err, size_t errlen)
{
	struct wl_row *row = &v->rows[i];
	np_cpuset mine;
	bool any_excl;
	int r;

	if (!json_is_object(w)) {
		NP_ERR("status.workloads[%zu]: expected an object", i);
		return -EINVAL;
	}
	row->name = str_or(w, "name", "?");
	row->qos = str_or(w, "qos", "?");
	row->cls = str_or(w, "class", row->qos);
	row->cgroup = str_or(w, "cgroup", "-");
	row->cpuset = str_or(w, "cpuset", "");
	row->mems = str_or(w, "mems", "");
	if (!strcmp(row->qos, row->cls))
		snprintf(row->qc, sizeof(row->qc), "%s", row->qos);
	else
		snprintf(row->qc, sizeof(row->qc), "%s/%s", row->qos, row->cls);
	row->containers = container_names(json_object_get(w, "containers"));
	if (!row->containers)
		return -ENOMEM;
	if ((r = exclusive_cpus(w, i, &mine, &any_excl, err, errlen)))
		return r;
	if (!any_excl) {
		row->sym = !strcmp(row->cls, "BE") ? 'b' : '.';
		return 0;
	}
	row->sym =
	    *nletter < (int)sizeof(letters) - 1 ? letters[*nletter] : '+';
	(*nletter)++;
	NP_CPUSET_FOREACH (cpu, &mine)
		if (cpu < v->t->max_cpu && !v->sym[cpu])
			v->sym[cpu] = row->sym;
	return 0;
}

static int parse_status(struct status_view *v, const json_t *status, char *err,
			size_t errlen)
{
	const json_t *w;
	int r, nletter = 0;
	size_t i;

	if (!json_is_object(status)) {
		NP_ERR("status: expected an object");
		return -EINVAL;
	}
	if ((r = np_topology_from_json(&v->t,
				       json_object_get(status, "topology"),
				       "status.topology", err, errlen)) ||
	    (r = parse_pools(v, status, err, errlen)))
		return r;
	v->ws = json_object_get(status, "workloads");
	if (v->ws && !json_is_array(v->ws)) {
		NP_ERR("status.workloads: expected an array");
		return -EINVAL;
	}
	v->nw = json_array_size(v->ws);
	v->rows = calloc(v->nw ? v->nw : 1, sizeof(*v->rows));
	v->sym = calloc((size_t)v->t->max_cpu + 1, 1);
	if (!v->rows || !v->sym)
		return -ENOMEM;
	json_array_foreach(v->ws, i, w)
	{
		if ((r = fill_row(v, i, w, &nletter, err, errlen)))
			return r;
	}
	return 0;
}

/* The mark of a present CPU in the picture. */
static char cpu_mark(struct status_view *v, int cpu)
{
	if (!v->t->cpu[cpu].online) {
		v->used_x = true;
		return 'x';
	}
	if (np_cpuset_test(&v->pool[P_RESERVED], cpu))
		return 'R';
	if (v->sym[cpu])
		return v->sym[cpu];
	if (np_cpuset_test(&v->pool[P_EXCLUSIVE], cpu)) {
		v->used_q = true;
		return '?';
	}
	if (np_cpuset_test(&v->pool[P_SHARED], cpu))
		return '.';
	if (np_cpuset_test(&v->pool[P_BE], cpu)) {
		v->used_b = true;
		return 'b';
	}
	v->used_dash = true;
	return '-';
}

/* "NUMA node N (socket S): cpus LIST", then "  CPU:MARK" per CPU. */
static void print_node(struct status_view *v, int n, FILE *out)
{
	const struct np_topology *t = v->t;
	np_cpuset present, sockets_seen;
	int cw, per_line = 0, nsock = 0, line_max;
	bool first = true;
	char buf[4096];

	np_cpuset_zero(&present);
	np_cpuset_zero(&sockets_seen);
	for (int cpu = 0; cpu < t->max_cpu; cpu++)
		if (t->cpu[cpu].present && t->cpu[cpu].numa == n) {
			np_cpuset_set(&present, cpu);
			if (!np_cpuset_test(&sockets_seen,
					    t->cpu[cpu].socket)) {
				np_cpuset_set(&sockets_seen,
					      t->cpu[cpu].socket);
				nsock++;
			}
		}
	fprintf(out, "NUMA node %d", t->numa[n].u.id);
	if (nsock) {
		fprintf(out, " (socket%s", nsock > 1 ? "s" : "");
		NP_CPUSET_FOREACH (s, &sockets_seen) {
			fprintf(out, "%s%d", first ? " " : ",",
				t->sockets[s].id);
			first = false;
		}
		fprintf(out, ")");
	}
	if (np_cpuset_empty(&present)) {
		fprintf(out, ": no cpus\n");
		return;
	}
	fprintf(out, ": cpus %s\n", fmt_set(&present, buf, sizeof(buf)));
	cw = digits(t->max_cpu - 1);
	line_max = cw <= 2 ? 12 : 8; /* under 80 columns */
	NP_CPUSET_FOREACH (cpu, &present) {
		char ch = cpu_mark(v, cpu);
		if (per_line == line_max) {
			fputc('\n', out);
			per_line = 0;
		}
		fprintf(out, "  %*d:%c", cw, cpu, ch);
		per_line++;
	}
	fputc('\n', out);
}

static void print_legend(const struct status_view *v, FILE *out)
{
	struct wrap wr;
	char buf[4096];

	wrap_start(&wr, out, "legend:");
	wrap_add(&wr, "R reserved");
	wrap_add(&wr, ". shared");
	if (v->used_b)
		wrap_add(&wr, "b BE only");
	for (size_t i = 0; i < v->nw; i++) {
		if (v->rows[i].sym == '.' || v->rows[i].sym == 'b')
			continue;
		snprintf(buf, sizeof(buf), "%c %s (%s)", v->rows[i].sym,
			 v->rows[i].name, v->rows[i].cls);
		wrap_add(&wr, buf);
	}
	if (v->used_q)
		wrap_add(&wr, "? exclusive, owner not listed");
	if (v->used_dash)
		wrap_add(&wr, "- in no pool");
	if (v->used_x)
		wrap_add(&wr, "x offline");
	wrap_end(&wr);
}

static void print_pools(const struct status_view *v, FILE *out)
{
	const json_t *sp = json_object_get(v->pools, "cpuSharedPools"), *c;
	char buf[4096];
	size_t i;

	fprintf(out, "\npools:\n");
	for (int k = 0; k < NPOOLS; k++)
		fprintf(out, "  %-12s %s\n", pool_def[k].label,
			fmt_set(&v->pool[k], buf, sizeof(buf)));
	if (!json_array_size(sp))
		return;
	fprintf(out, "cpuSharedPools:\n");
	json_array_foreach(sp, i, c)
	{
		fprintf(
		    out, "  node %lld (socket %lld): %s\n",
		    (long long)json_integer_value(json_object_get(c, "node")),
		    (long long)json_integer_value(json_object_get(c, "socket")),
		    str_or(c, "cpuset", ""));
	}
}

static void widen(int *width, const char *s)
{
	int l = (int)strlen(s);
	if (l > *width)
		*width = l;
}

static void print_workloads(const struct status_view *v, FILE *out)
{
	const struct wl_row *rows = v->rows;
	int wn = 4, wq = 9, wg = 6, wc = 6, wm = 4;
	const json_t *w, *c, *dev;
	size_t i, k;

	if (!v->nw) {
		fprintf(out, "\nworkloads: none\n");
		return;
	}
	fprintf(out, "\nworkloads: %zu\n", v->nw);
	for (i = 0; i < v->nw; i++) {
		widen(&wn, rows[i].name);
		widen(&wq, rows[i].qc);
		widen(&wg, rows[i].cgroup);
		widen(&wc, rows[i].cpuset);
		widen(&wm, rows[i].mems);
	}
	fprintf(out, "  %s %-*s  %-*s  %-*s  %-*s  %-*s  %s\n", " ", wn, "NAME",
		wq, "QOS/CLASS", wg, "CGROUP", wc, "CPUSET", wm, "MEMS",
		"CONTAINERS");
	for (i = 0; i < v->nw; i++)
		fprintf(out, "  %c %-*s  %-*s  %-*s  %-*s  %-*s  %s\n",
			rows[i].sym, wn, rows[i].name, wq, rows[i].qc, wg,
			rows[i].cgroup, wc, rows[i].cpuset, wm, rows[i].mems,
			rows[i].containers);
	/* Devices, when any container has some. */
	json_array_foreach(v->ws, i, w)
	{
		json_array_foreach(json_object_get(w, "containers"), k, c)
		{
			dev = json_object_get(c, "devices");
			if (!json_object_size(dev))
				continue;
			fprintf(out, "  devices of %s/%s:", rows[i].name,
				str_or(c, "name", "?"));
			print_devices(out, dev, " ", "; ");
			fputc('\n', out);
		}
	}
}

/* The known counters first, by name, then the others ('_' as ' '). */
static void print_counters(const json_t *counters, FILE *out)
{
	static const char *const known_counters[] = {
	    "cycles",	"drift_repaired", "admitted",
	    "rejected", "released",	  "write_errors"};
	static const char *const counter_names[] = {
	    "cycles",	"drift repaired", "admitted",
	    "rejected", "released",	  "write errors"};
	const json_t *v;
	const char *key;
	struct wrap wr;
	char buf[4096];

	if (!json_is_object(counters))
		return;
	fputc('\n', out);
	wrap_start(&wr, out, "counters:");
	for (int k = 0; k < NP_NAMES_LEN(known_counters); k++) {
		v = json_object_get(counters, known_counters[k]);
		if (!json_is_integer(v))
			continue;
		snprintf(buf, sizeof(buf), "%s %lld", counter_names[k],
			 (long long)json_integer_value(v));
		wrap_add(&wr, buf);
	}
	json_object_foreach((json_t *)counters, key, v)
	{
		if (NP_NAME_FIND(known_counters, key) >= 0 ||
		    !json_is_integer(v))
			continue;
		snprintf(buf, sizeof(buf), "%s %lld", key,
			 (long long)json_integer_value(v));
		for (char *p = buf; *p; p++)
			if (*p == '_')
				*p = ' ';
		wrap_add(&wr, buf);
	}
	wrap_end(&wr);
}

/* The most recent 5 rejections. */
static void print_rejections(const json_t *rj, FILE *out)
{
	size_t nr = json_array_size(rj), from = nr > 5 ? nr - 5 : 0;
	const json_t *c;
	char tb[64];

	if (!nr)
		return;
	fprintf(out, "last rejections%s:\n", from ? " (most recent 5)" : "");
	for (size_t i = from; i < nr; i++) {
		const char *kind;

		c = json_array_get(rj, i);
		kind = str_or(c, "error_kind", "");
		fprintf(out, "  %s  %s (resource %s%s%s): %s\n",
			fmt_time(json_integer_value(json_object_get(c, "time")),
				 tb, sizeof(tb)),
			str_or(c, "workload", "?"), str_or(c, "resource", "?"),
			kind[0] ? ", " : "", kind, str_or(c, "reason", ""));
	}
}

static void print_last_cycle(const json_t *status, FILE *out)
{
	const json_t *lc = json_object_get(status, "last_cycle");
	const json_t *period = json_object_get(status, "reconcile_period_s");
	json_int_t lt;
	char tb[64];

	if (!json_is_object(lc))
		return;
	lt = json_integer_value(json_object_get(lc, "time"));
	if (lt > 0)
		fprintf(out, "last reconcile cycle: %s, %lld writes, %lld us",
			fmt_time(lt, tb, sizeof(tb)),
			(long long)json_integer_value(
			    json_object_get(lc, "writes")),
			(long long)json_integer_value(
			    json_object_get(lc, "duration_us")));
	else
		fprintf(out, "last reconcile cycle: none yet");
	if (json_is_number(period))
		fprintf(out, " (every %g s)", json_number_value(period));
	fputc('\n', out);
}

static void print_metrics(const json_t *m, FILE *out)
{
	const char *l = str_or(m, "listen", "");

	if (!json_is_object(m))
		return;
	if (!*l)
		fprintf(out, "metrics: off\n");
	else if (json_is_true(json_object_get(m, "serving")))
		fprintf(out, "metrics: %s%s%s (%lld scrape(s))\n",
			strncmp(l, "unix:", 5) ? "http://" : "", l,
			strncmp(l, "unix:", 5) ? "/metrics" : " /metrics",
			(long long)json_integer_value(json_object_get(m, "scrapes")));
	else
		fprintf(out, "metrics: NOT SERVING: %s\n", str_or(m, "error", "?"));
}

/* Offline CPUs (hotplug) and the exclusive workloads that hold one. */
static void print_offline(const json_t *status, FILE *out)
{
	const char *off = str_or(status, "offline_cpus", "");
	const json_t *deg = json_object_get(status, "degraded"), *v;
	const char *name;

	if (!*off)
		return;
	fprintf(out, "offline CPUs: %s", off);
	json_object_foreach((json_t *)deg, name, v)
		fprintf(out, "; %s degraded (offline %s)", name,
			json_is_string(v) ? json_string_value(v) : "?");
	fputc('\n', out);
}

int np_status_render_err(const json_t *status, FILE *out, char *err,
			 size_t errlen)
{
	struct status_view v = {0};
	int r;

	r = parse_status(&v, status, err, errlen);
	if (!r) {
		for (int n = 0; n < v.t->nnuma; n++)
			print_node(&v, n, out);
		print_legend(&v, out);
		print_pools(&v, out);
		print_offline(status, out);
		print_workloads(&v, out);
		print_counters(json_object_get(status, "counters"), out);
		print_rejections(json_object_get(status, "rejections"), out);
		print_last_cycle(status, out);
		print_metrics(json_object_get(status, "metrics"), out);
		render_verification(json_object_get(status, "verification"),
				    out);
	}
	if (v.rows)
		for (size_t i = 0; i < v.nw; i++)
			free(v.rows[i].containers);
	free(v.rows);
	free(v.sym);
	np_topology_free(v.t);
	return r;
}

int np_status_render(const json_t *status, FILE *out)
{
	return np_status_render_err(status, out, NULL, 0);
}

/* ---- an admission decision ---------------------------------------------- */

int np_decision_render(const json_t *decision, FILE *out)
{
	const json_t *adm = json_object_get(decision, "admitted"), *cs, *c,
		     *first_hint = NULL;
	bool same_hint = true, excl;
	const char *qos, *cls;
	size_t i;

	if (!json_is_object(decision) || !json_is_boolean(adm))
		return -EINVAL;
	if (!json_is_true(adm)) {
		const char *kind = str_or(decision, "error_kind", "");
		fprintf(
		    out, "rejected %s: %s (resource %s%s%s)\n",
		    str_or(decision, "workload", str_or(decision, "name", "?")),
		    str_or(decision, "reason", "no reason given"),
		    str_or(decision, "resource", "?"), kind[0] ? ", " : "",
		    kind);
		return 0;
	}
	cs = json_object_get(decision, "containers");
	json_array_foreach(cs, i, c)
	{
		const json_t *h = json_object_get(c, "hint");
		if (!i)
			first_hint = h;
		else if (!json_equal((json_t *)first_hint, (json_t *)h))
			same_hint = false;
	}
	qos = str_or(decision, "qos", "?");
	cls = str_or(decision, "class", qos);
	excl = json_is_true(json_object_get(decision, "exclusive"));
	fprintf(out, "admitted %s: cpuset %s mems %s (",
		str_or(decision, "name", "?"), str_or(decision, "cpuset", ""),
		str_or(decision, "mems", ""));
	if (strcmp(qos, cls))
		fprintf(out, "%s/", qos);
	fprintf(out, "%s%s", cls, excl ? "" : ", shared pool");
	if (first_hint && same_hint) {
		fprintf(out, ", ");
		print_hint(out, first_hint);
	} else if (first_hint) {
		fprintf(out, ", hints per container");
	}
	fprintf(out, ")\n");
	json_array_foreach(cs, i, c)
	{
		fprintf(out, "  %s: cpuset %s%s, mems %s, ",
			str_or(c, "name", "?"), str_or(c, "cpuset", ""),
			json_is_true(json_object_get(c, "exclusive"))
			    ? " exclusive"
			    : " shared",
			str_or(c, "mems", ""));
		print_hint(out, json_object_get(c, "hint"));
		print_devices(out, json_object_get(c, "devices"), ", ", ", ");
		fputc('\n', out);
	}
	return 0;
}
