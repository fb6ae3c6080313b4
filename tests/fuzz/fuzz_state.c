// SPDX-License-Identifier: Apache-2.0
/*
 * numaplaced's state checkpoint (numaplace/state_file.h), as a start
 * reads it: the input is STATE_DIR/state.json (a directory of this
 * process) and, after a line "#journal", STATE_DIR/journal (its records,
 * numaplace/state_journal.h), loaded with np_statefile_load_with against
 * a fixed node (8 CPUs, two sockets = NUMA nodes, cores {c, c+4}, 4 GiB
 * and 2 MiB pages per node, a GPU on each node; reserved 0,4, topology
 * policy restricted); then, as when a CPU is offline at start, the
 * places the file gives the node's offline CPU 6
 * (np_statefile_offline_places), the topology they restore
 * (np_topology_restore), and the load against that one.
 *
 * Each load is done both ways: streamed (np_statefile_load_with: the
 * file read through a window, the journal's records applied as the
 * workloads stream past, the whole document when in doubt) and as the
 * whole document (np_statefile_load_dir without the stream): the same
 * outcome, message, state and daemon part, or the harness aborts.
 *
 * Sealing: the checksum and fingerprints stop almost every mutation at
 * the envelope. So when the input's "checksum" is the string "seal", the
 * harness computes it over the body as numaplaced would, and fills in
 * body.fingerprint.policy / .topology where they say "seal" too; a
 * journal line that starts with "seal " gets its record's checksum in
 * their place; such inputs (corpus/state/sealed-*) reach the validation
 * of the state itself, and the streamed load. Any other input is written
 * byte for byte.
 */
#include "fuzz.h"
#include "numaplace/admit.h"
#include "numaplace/state_file.h"
#include "numaplace/state_journal.h"
#include "numaplace/topology.h"
#include "state/state_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <string.h>
#include <unistd.h>

#define SEAL "seal"
#define JOURNAL_MARK "\n#journal\n"
#define POLICY                                                                 \
	"{\"cpu_policy\": \"static\", \"reserved_cpus\": \"0,4\", "            \
	"\"topology_policy\": \"restricted\"}"

static char dir[64], file[96], jfile[96];
/* loads that succeeded, and of those the ones streamed (fuzz_report) */
static unsigned long loads, streamed;
static struct np_topology *all, *now;
static struct np_node_policy policy;

/* The node; off: the CPU that is offline (-1: none), with the place hwloc
 * guesses for a CPU whose sysfs topology is gone (a core of its own). */
static struct np_topology *node(int off)
{
	static const char *const gpus[] = {"0000:3b:00.0", "0000:af:00.0"};
	struct np_cpu_desc d[8];
	struct np_topology *t;
	char err[256];

	for (int c = 0; c < 8; c++) {
		int core = c % 4, sock = core / 2;
		d[c] = (struct np_cpu_desc){.cpu = c, .core = core,
					    .socket = sock, .numa = sock,
					    .l3 = sock, .online = c != off};
		if (c == off)
			d[c].core = 99;
	}
	if (np_topology_build(&t, d, 8, err, sizeof(err))) {
		fprintf(stderr, "topology: %s\n", err);
		abort();
	}
	for (int i = 0; i < t->nnuma; i++) {
		struct np_device g = {.cls = NP_DEV_GPU, .numa = i};
		t->numa[i].mem_total = t->numa[i].mem_free = 4ULL << 30;
		t->numa[i].nhuge = 1;
		t->numa[i].huge[0] = (struct np_hugepages){
		    .size_kb = 2048, .total = 512, .free = 512};
		snprintf(g.id, sizeof(g.id), "%s", gpus[i]);
		snprintf(g.resource, sizeof(g.resource), "vendor.com/gpu");
		if (np_topology_add_device(t, &g))
			abort();
	}
	return t;
}

static void cleanup(void)
{
	unlink(file);
	unlink(jfile);
	rmdir(dir);
}

static void setup(void)
{
	json_t *j = json_loads(POLICY, 0, NULL);
	char err[256];

	snprintf(dir, sizeof(dir), "/tmp/np-fuzz-state-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		abort();
	}
	snprintf(file, sizeof(file), "%s/" NP_STATEFILE_NAME, dir);
	snprintf(jfile, sizeof(jfile), "%s/" NP_JOURNAL_NAME, dir);
	atexit(cleanup);
	all = node(-1);
	now = node(6);
	if (!j || np_policy_from_json(&policy, j, "policy", err, sizeof(err))) {
		fprintf(stderr, "policy: %s\n", err);
		abort();
	}
	json_decref(j);
}

static bool is_seal(const json_t *v)
{
	return json_is_string(v) && !strcmp(json_string_value(v), SEAL);
}

static void put_hash(json_t *obj, const char *key, const json_t *of)
{
	char h[32];

	snprintf(h, sizeof(h), "fnv1a64:%016" PRIx64, np_json_fnv1a64(of));
	json_object_set_new(obj, key, json_string(h));
}

/* The input, sealed when it asks for it; NULL: write it as it is. */
static char *sealed(const uint8_t *data, size_t size)
{
	json_t *doc = json_loadb((const char *)data, size,
				 JSON_REJECT_DUPLICATES, NULL);
	json_t *body = json_object_get(doc, "body");
	json_t *fp = json_object_get(body, "fingerprint");
	char *s = NULL;

	if (json_is_object(body) && is_seal(json_object_get(doc, "checksum"))) {
		if (json_is_object(fp) && is_seal(json_object_get(fp, "policy")))
			put_hash(fp, "policy", json_object_get(body, "policy"));
		if (json_is_object(fp) &&
		    is_seal(json_object_get(fp, "topology")))
			put_hash(fp, "topology",
				 json_object_get(body, "topology"));
		put_hash(doc, "checksum", body);
		s = json_dumps(doc, JSON_SORT_KEYS | JSON_INDENT(1));
	}
	json_decref(doc);
	return s;
}

static void write_file(const char *path, const void *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		perror(path);
		abort();
	}
	close(fd);
}

/* The journal's text, its lines that start with "seal " sealed. */
static char *sealed_journal(const char *j, size_t n, size_t *out)
{
	char *s = malloc(n * 2 + 1), *o = s;

	if (!s)
		abort();
	while (n) {
		const char *nl = memchr(j, '\n', n);
		size_t len = nl ? (size_t)(nl - j) + 1 : n;

		if (len >= 5 && !memcmp(j, SEAL " ", 5)) {
			size_t body = len - 5 - (nl ? 1 : 0);
			o += sprintf(o, "%016" PRIx64 " ",
				     np_fnv1a64(j + 5, body));
			memcpy(o, j + 5, len - 5);
			o += len - 5;
		} else {
			memcpy(o, j, len);
			o += len;
		}
		j += len;
		n -= len;
	}
	*out = (size_t)(o - s);
	return s;
}

/* state.json, and the journal after JOURNAL_MARK (none: no journal). */
static void write_input(const uint8_t *data, size_t size)
{
	const uint8_t *mark = memmem(data, size, JOURNAL_MARK,
				     sizeof(JOURNAL_MARK) - 1);
	size_t ssize = mark ? (size_t)(mark - data) : size;
	char *s = sealed(data, ssize);

	if (s)
		write_file(file, s, strlen(s));
	else
		write_file(file, data, ssize);
	if (mark) {
		const char *j = (const char *)mark + sizeof(JOURNAL_MARK) - 1;
		size_t n = size - ssize - (sizeof(JOURNAL_MARK) - 1), len;
		char *js = s ? sealed_journal(j, n, &len) : NULL;

		write_file(jfile, js ? js : j, js ? len : n);
		free(js);
	} else if (unlink(jfile) && errno != ENOENT) {
		perror(jfile);
		abort();
	}
	free(s);
}

static char *dump(const struct np_node_state *st, const json_t *daemon)
{
	json_t *j = NULL;
	char *s, *d;

	if (np_state_to_json(st, &j))
		return NULL;
	s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	d = daemon ? json_dumps(daemon, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	json_decref(j);
	if (s && d) {
		char *both = NULL;
		if (asprintf(&both, "%s\n%s", s, d) < 0)
			both = NULL;
		free(s);
		s = both;
	}
	free(d);
	return s;
}

/*
 * The directory loaded as the whole document into a state of topology t:
 * the same outcome r, message, freshness, state and daemon part as the
 * load that streamed (st, daemon) gave, or abort.
 */
static void same_as_whole(const struct np_topology *t, int r, const char *err,
			  bool fresh, const struct np_node_state *st,
			  const json_t *daemon)
{
	struct np_node_state w;
	json_t *wd = NULL;
	bool wfresh = true;
	char werr[1024] = "";
	int wr;

	if (np_state_init(&w, t, &policy, werr, sizeof(werr)))
		abort();
	wr = np_statefile_load_dir(dir, &w, &wfresh, &wd, false, werr,
				   sizeof(werr));
	if (wr != r || strcmp(err, werr) || wfresh != fresh) {
		fprintf(stderr, "streamed: %d (%s), whole: %d (%s)\n", r, err, wr,
			werr);
		abort();
	}
	if (!r) {
		char *a = dump(st, daemon), *b = dump(&w, wd);
		if (!a || !b || strcmp(a, b)) {
			fprintf(stderr, "streamed and whole differ:\n%s\n%s\n",
				a ? a : "-", b ? b : "-");
			abort();
		}
		free(a);
		free(b);
	}
	json_decref(wd);
	np_state_free(&w);
}

/* Whether the stream loads the directory by itself (not given up). */
static bool streams(const struct np_topology *t)
{
	struct np_node_state c;
	json_t *cd = NULL;
	char err[256];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool ok;

	if (dfd < 0 || np_state_init(&c, t, &policy, err, sizeof(err)))
		abort();
	ok = np_statefile_load_stream(dfd, dir, &c, &cd);
	close(dfd);
	json_decref(cd);
	np_state_free(&c);
	return ok;
}

/* Load into a state of topology t; what loads can be saved again. */
static void load(const struct np_topology *t)
{
	struct np_node_state st;
	json_t *daemon = NULL;
	bool fresh = true;
	char err[1024] = "";
	int r;

	if (np_state_init(&st, t, &policy, err, sizeof(err))) {
		fprintf(stderr, "state: %s\n", err);
		abort();
	}
	r = np_statefile_load_with(dir, &st, &fresh, &daemon, err,
				   sizeof(err));
	FUZZ_NEEDS_MESSAGE(r, err);
	if (r < 0 && daemon)
		abort(); /* nothing is handed out on a refusal */
	same_as_whole(t, r, err, fresh, &st, daemon);
	if (!r && !fresh) {
		loads++;
		streamed += streams(t);
	}
	if (!r) {
		json_t *doc = np_statefile_document_with(&st, daemon);
		np_cpuset off;
		if (fresh) /* the file is there */
			abort();
		for (int i = 0; i < st.nworkloads; i++)
			(void)np_state_degraded(&st, i, &off);
		json_decref(doc);
	}
	json_decref(daemon);
	np_state_free(&st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct np_cpu_desc *fix = NULL;
	struct np_topology *fixed = NULL;
	char err[1024] = "";
	int nfix = -1, r;

	if (!dir[0])
		setup();
	write_input(data, size);
	load(all);
	r = np_statefile_offline_places(dir, now, &fix, &nfix);
	if (r < 0 && r != -ENOMEM)
		abort(); /* best effort: only ENOMEM is an error */
	if (!r && (nfix < 0 || (nfix > 0) != (fix != NULL)))
		abort();
	for (int i = 0; i < nfix; i++)
		if (fix[i].cpu != 6) /* only CPU 6 is offline */
			abort();
	if (nfix > 0) {
		r = np_topology_restore(now, fix, nfix, &fixed, err,
					sizeof(err));
		FUZZ_NEEDS_MESSAGE(r, err);
		if (!r) {
			load(fixed);
			np_topology_free(fixed);
		}
	}
	free(fix);
	return 0;
}

/* After a replay of the seeds: how many loads streamed; none is a
 * defect (the sealed seeds with workloads stream). */
int fuzz_report(void)
{
	printf("fuzz_state: %lu of %lu loads streamed\n", streamed, loads);
	return streamed ? 0 : 1;
}
