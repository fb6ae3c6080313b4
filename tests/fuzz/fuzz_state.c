// SPDX-License-Identifier: Apache-2.0
/*
 * numaplaced's state checkpoint (numaplace/state_file.h), as a start
 * reads it: the input is STATE_DIR/state.json (a directory of this
 * process), loaded with np_statefile_load_with against a fixed node (8
 * CPUs, two sockets = NUMA nodes, cores {c, c+4}, 4 GiB and 2 MiB pages
 * per node, a GPU on each node; reserved 0,4, topology policy
 * restricted); then, as when a CPU is offline at start, the places the
 * file gives the node's offline CPU 6 (np_statefile_offline_places),
 * the topology they restore (np_topology_restore), and the load against
 * that one.
 *
 * Sealing: the checksum and fingerprints stop almost every mutation at
 * the envelope. So when the input's "checksum" is the string "seal", the
 * harness computes it over the body as numaplaced would, and fills in
 * body.fingerprint.policy / .topology where they say "seal" too; such
 * inputs (corpus/state/sealed-*) reach the validation of the state
 * itself. Any other input is written byte for byte.
 */
#include "fuzz.h"
#include "numaplace/admit.h"
#include "numaplace/state_file.h"
#include "numaplace/topology.h"

#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <string.h>
#include <unistd.h>

#define SEAL "seal"
#define POLICY                                                                 \
	"{\"cpu_policy\": \"static\", \"reserved_cpus\": \"0,4\", "            \
	"\"topology_policy\": \"restricted\"}"

static char dir[64], file[96];
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

static void write_input(const uint8_t *data, size_t size)
{
	char *s = sealed(data, size);
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (s) {
		data = (const uint8_t *)s;
		size = strlen(s);
	}
	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		perror(file);
		abort();
	}
	close(fd);
	free(s);
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
