// SPDX-License-Identifier: Apache-2.0
/*
 * The state journal (numaplace/state_journal.h): saves appended as
 * records and replayed on load in order, a torn tail ignored, a damaged
 * record before a whole one refused, compaction and a crash at each of
 * its steps, --reset-state, and the offline reader.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "numaplace/admit.h"
#include "numaplace/state_file.h"
#include "numaplace/state_journal.h"
#include "state/state_internal.h"
#include "topo_gen.h"
#include "fixtures.h"

#define GiB (1ULL << 30)
#define POLICY                                                                 \
	"{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,8\","                \
	"\"topology_policy\":\"restricted\"}"

static struct np_topology *topo;

static void init(struct np_node_state *st)
{
	np_test_state_init(st, topo, POLICY);
}

static void admit(struct np_node_state *st, const char *name, const char *qos,
		  const char *cpu)
{
	struct np_workload_req w;
	struct np_decision d;
	char err[512];
	json_t *j = json_pack("{s:s,s:s,s:[{s:s,s:s}]}", "name", name, "qos",
			      qos, "containers", "name", "m", "cpu", cpu);
	assert_non_null(j);
	if (np_workload_req_from_json(&w, j, "workload", err, sizeof(err)) ||
	    np_admit(st, &w, &d, err, sizeof(err)) || !d.admitted)
		fail_msg("admit %s: %s", name, err);
	np_workload_req_free(&w);
	json_decref(j);
}

static char *dump(const struct np_node_state *st)
{
	json_t *j = NULL;
	char *s;
	assert_int_equal(np_state_to_json(st, &j), 0);
	s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(j);
	return s;
}

static char *dump_json(const json_t *j)
{
	return j ? json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT) : strdup("-");
}

static int streamed_loads;

/*
 * Load dir into a new state: expect r; on success its dump equals want's
 * (when want is not NULL) and *daemon gets the daemon part. The load
 * (streamed, the whole document when in doubt) gives what reading the
 * whole document gives: the same outcome, message, state and daemon
 * part; and a good state with workloads is streamed indeed.
 */
static void load_expect(const char *dir, int r,
			const struct np_node_state *want, json_t **daemon,
			const char *needle)
{
	struct np_node_state b, w;
	char err[1024] = "", werr[1024] = "";
	json_t *dp = NULL, *wdp = NULL;
	bool fresh, wfresh;
	int got, wgot;
	char *x, *y;

	init(&b);
	init(&w);
	got = np_statefile_load_with(dir, &b, &fresh, &dp, err, sizeof(err));
	wgot = np_statefile_load_dir(dir, &w, &wfresh, &wdp, false, werr,
				     sizeof(werr));
	if (got != r)
		fail_msg("load %s: got %d (%s), expected %d", dir, got, err, r);
	if (wgot != got || strcmp(err, werr) || fresh != wfresh)
		fail_msg("load %s: %d (%s), the whole document's %d (%s)", dir,
			 got, err, wgot, werr);
	if (needle && !strstr(err, needle))
		fail_msg("message \"%s\" lacks \"%s\"", err, needle);
	x = dump(&w), y = dump(&b);
	if (strcmp(x, y))
		fail_msg("streamed and whole states differ:\n%s\n%s", x, y);
	free(x);
	free(y);
	x = dump_json(wdp), y = dump_json(dp);
	if (strcmp(x, y))
		fail_msg("daemon parts differ:\n%s\n%s", x, y);
	free(x);
	free(y);
	if (!r && want) {
		x = dump(want), y = dump(&b);
		if (strcmp(x, y))
			fail_msg("states differ:\n%s\n%s", x, y);
		free(x);
		free(y);
	}
	if (!r && b.nworkloads) { /* streamed, not given up */
		struct np_node_state c;
		json_t *cdp = NULL;
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		init(&c);
		assert_true(dfd >= 0);
		if (!np_statefile_load_stream(dfd, dir, &c, &cdp))
			fail_msg("load %s: a good state not streamed", dir);
		close(dfd);
		x = dump(&w), y = dump(&c);
		assert_string_equal(x, y);
		free(x);
		free(y);
		json_decref(cdp);
		np_state_free(&c);
		streamed_loads++;
	}
	if (daemon)
		*daemon = dp;
	else
		json_decref(dp);
	json_decref(wdp);
	np_state_free(&b);
	np_state_free(&w);
}

static char *tmpdir(void)
{
	char *d = strdup("/tmp/np-journal-test-XXXXXX");
	assert_non_null(d);
	assert_non_null(mkdtemp(d));
	return d;
}

static void rmdir_all(char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(dir);
}

static long file_size(const char *dir, const char *name)
{
	char p[512];
	struct stat sb;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return stat(p, &sb) ? -1 : (long)sb.st_size;
}

static char *read_all(const char *dir, const char *name, size_t *len)
{
	char p[512], *buf;
	FILE *f;
	long n;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	assert_non_null(f = fopen(p, "rb"));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	assert_non_null(buf = calloc(1, (size_t)n + 1));
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void write_all(const char *dir, const char *name, const char *buf,
		      size_t len)
{
	char p[512];
	FILE *f;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	assert_non_null(f = fopen(p, "wb"));
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void save(struct np_journal *j, const char *dir,
		 const struct np_node_state *st, const json_t *daemon)
{
	char err[512];
	if (np_journal_save(j, dir, st, daemon, 0, err, sizeof(err)))
		fail_msg("save: %s", err);
}

/* Three admissions and a release after the first (compacting) save:
 * three records, state.json untouched, replayed in order on load. */
static void test_records_replayed(void **state)
{
	struct np_journal j = {0};
	struct np_node_state a;
	char *dir = tmpdir();
	json_t *dp, *back = NULL;
	long snap;
	(void)state;

	init(&a);
	admit(&a, "web", "LSE", "2");
	dp = json_pack("{s:{s:s},s:[],s:s}", "spec_files", "web", "/s/web.json",
		       "pending", "managed_parent", "numaplace.slice");
	save(&j, dir, &a, dp);
	assert_int_equal(j.compactions, 1);
	assert_int_equal(file_size(dir, NP_JOURNAL_NAME), 0);
	snap = file_size(dir, NP_STATEFILE_NAME);
	assert_true(snap > 0);

	admit(&a, "db", "LSE", "2");
	json_object_set_new(json_object_get(dp, "spec_files"), "db",
			    json_string("/s/db.json"));
	save(&j, dir, &a, dp);
	admit(&a, "api", "LS", "1");
	json_array_append_new(json_object_get(dp, "pending"),
			      json_string("api"));
	save(&j, dir, &a, dp);
	assert_int_equal(np_release(&a, "web"), 0);
	json_object_del(json_object_get(dp, "spec_files"), "web");
	save(&j, dir, &a, dp);
	/* nothing changed: no record */
	save(&j, dir, &a, dp);
	assert_int_equal(j.records, 3);
	assert_int_equal(j.seq, 3);
	assert_int_equal(file_size(dir, NP_STATEFILE_NAME), snap);
	assert_true(file_size(dir, NP_JOURNAL_NAME) > 0);

	load_expect(dir, 0, &a, &back, NULL);
	assert_true(json_equal(back, dp));
	json_decref(back);

	/* a clean compaction: state.json has it all, the journal is empty,
	 * and the next record is number 4 */
	{
		char err[512];
		assert_int_equal(
		    np_journal_save(&j, dir, &a, dp, NP_JOURNAL_COMPACT, err,
				    sizeof(err)), 0);
	}
	assert_int_equal(file_size(dir, NP_JOURNAL_NAME), 0);
	assert_int_equal(j.seq, 3);
	load_expect(dir, 0, &a, NULL, NULL);
	admit(&a, "web", "LSE", "1");
	save(&j, dir, &a, dp);
	assert_int_equal(j.seq, 4);
	load_expect(dir, 0, &a, NULL, NULL);
	np_journal_fini(&j);
	json_decref(dp);
	np_state_free(&a);
	rmdir_all(dir);
}

/* A record cut short (a kill during its write, never acknowledged) is
 * ignored, also one whose checksum fails at the end; one that is damaged
 * before a whole record is corruption, and refused. */
static void test_torn_and_bad(void **state)
{
	struct np_journal j = {0};
	struct np_node_state a, two;
	char *dir = tmpdir(), *buf, *second;
	size_t len;
	(void)state;

	init(&a);
	init(&two);
	admit(&a, "web", "LSE", "2");
	admit(&two, "web", "LSE", "2");
	save(&j, dir, &a, NULL);
	admit(&a, "db", "LSE", "2");
	admit(&two, "db", "LSE", "2");
	save(&j, dir, &a, NULL);
	admit(&a, "api", "LS", "1");
	save(&j, dir, &a, NULL);
	np_journal_fini(&j);
	load_expect(dir, 0, &a, NULL, NULL);

	buf = read_all(dir, NP_JOURNAL_NAME, &len);
	second = strchr(buf, '\n') + 1;
	/* torn: the last record without its end */
	write_all(dir, NP_JOURNAL_NAME, buf, len - 10);
	load_expect(dir, 0, &two, NULL, NULL);
	/* the last record whole in length but one byte changed */
	second[40] ^= 1;
	write_all(dir, NP_JOURNAL_NAME, buf, len);
	load_expect(dir, 0, &two, NULL, NULL);
	second[40] ^= 1;
	/* the first record damaged, the second whole: refused */
	buf[40] ^= 1;
	write_all(dir, NP_JOURNAL_NAME, buf, len);
	load_expect(dir, NP_STATEFILE_ECORRUPT, NULL, NULL,
		    "record 1 at byte 0 is damaged, yet record 2");
	buf[40] ^= 1;
	/* records out of order: refused */
	{
		size_t n1 = (size_t)(second - buf);
		char *swapped = malloc(len);
		assert_non_null(swapped);
		memcpy(swapped, second, len - n1);
		memcpy(swapped + len - n1, buf, n1);
		write_all(dir, NP_JOURNAL_NAME, swapped, len);
		load_expect(dir, NP_STATEFILE_ECORRUPT, NULL, NULL,
			    "is number 1, after 2");
		free(swapped);
	}
	/* a journal without state.json: refused */
	write_all(dir, NP_JOURNAL_NAME, buf, len);
	{
		char p[512];
		snprintf(p, sizeof(p), "%s/" NP_STATEFILE_NAME, dir);
		assert_int_equal(unlink(p), 0);
	}
	load_expect(dir, NP_STATEFILE_ECORRUPT, NULL, NULL,
		    "holds changes but");
	free(buf);
	np_state_free(&a);
	np_state_free(&two);
	rmdir_all(dir);
}

/* journal + one sealed record (seq, puts, dels) appended, loaded: refused
 * as corrupt with needle in the message, both ways the same. */
static void foreign_record(const char *dir, const char *journal, size_t len,
			   uint64_t seq, json_t *puts, json_t *dels,
			   const char *needle)
{
	char *line = np_journal_record_line(seq, puts, dels);
	char *buf = malloc(len + strlen(line));

	assert_non_null(buf);
	memcpy(buf, journal, len);
	memcpy(buf + len, line, strlen(line));
	write_all(dir, NP_JOURNAL_NAME, buf, len + strlen(line));
	load_expect(dir, NP_STATEFILE_ECORRUPT, NULL, NULL, needle);
	free(buf);
	free(line);
	json_decref(puts);
	json_decref(dels);
}

/*
 * A sealed record with a key numaplaced never writes (found by
 * fuzz-state: "w" and U+031F for "w" SEP, which the whole document took
 * as a workload and the stream passed over) is refused as corrupt, named
 * escaped; so is a workload put under another name's key, a deletion
 * that is not a string, and "s" SEP "workloads". A record whose keys are
 * all of the known kinds still loads.
 */
static void test_foreign_keys(void **state)
{
	struct np_journal j = {0};
	struct np_node_state a;
	char *dir = tmpdir(), *buf, *last;
	json_t *rec, *api, *other;
	size_t len;
	uint64_t seq;
	(void)state;

	init(&a);
	admit(&a, "web", "LSE", "2");
	save(&j, dir, &a, NULL);
	admit(&a, "api", "LS", "1");
	save(&j, dir, &a, NULL);
	seq = j.seq + 1;
	np_journal_fini(&j);
	load_expect(dir, 0, &a, NULL, NULL);
	buf = read_all(dir, NP_JOURNAL_NAME, &len);
	/* the last record, which put api */
	for (last = buf + len - 1; last > buf && last[-1] != '\n'; last--)
		;
	rec = json_loadb(last + 17, len - (size_t)(last - buf) - 17, 0, NULL);
	api = json_object_get(json_object_get(rec, "put"),
			      "w" NP_JOURNAL_SEP "api");
	assert_true(json_is_object(api));
	other = json_deep_copy(api);
	json_object_set_new(json_object_get(other, "spec"), "name",
			    json_string("other"));

	foreign_record(dir, buf, len, seq,
		       json_pack("{s:O}", "w\xcc\x9f" "api", api),
		       json_array(), "puts \"w\\u031Fapi\"");
	foreign_record(dir, buf, len, seq,
		       json_pack("{s:O}", "w" NP_JOURNAL_SEP "api2", other),
		       json_array(), "puts \"w\\u001Fapi2\"");
	foreign_record(dir, buf, len, seq,
		       json_pack("{s:O}", "w" NP_JOURNAL_SEP "api", json_null()),
		       json_array(), "a value that does not fit it");
	foreign_record(dir, buf, len, seq,
		       json_pack("{s:i}", "s" NP_JOURNAL_SEP "workloads", 1),
		       json_array(), "puts \"s\\u001Fworkloads\"");
	foreign_record(dir, buf, len, seq, json_object(), json_pack("[i]", 7),
		       "deletes a non-string");
	foreign_record(dir, buf, len, seq, json_object(),
		       json_pack("[s]", "x" NP_JOURNAL_SEP "api"),
		       "deletes \"x\\u001Fapi\"");
	/* the known kinds: the same workload put again loads */
	{
		json_t *puts = json_pack("{s:O}", "w" NP_JOURNAL_SEP "api", api),
		       *dels = json_array();
		char *line = np_journal_record_line(seq, puts, dels),
		     *both = malloc(len + strlen(line));
		assert_non_null(both);
		memcpy(both, buf, len);
		memcpy(both + len, line, strlen(line));
		write_all(dir, NP_JOURNAL_NAME, both, len + strlen(line));
		load_expect(dir, 0, &a, NULL, NULL);
		free(both);
		free(line);
		json_decref(puts);
		json_decref(dels);
	}
	json_decref(other);
	json_decref(rec);
	free(buf);
	np_state_free(&a);
	rmdir_all(dir);
}

/*
 * Compaction's crash points: (1) the new snapshot written but not yet
 * renamed (a temp file; the old snapshot and the whole journal remain),
 * (2) renamed but the journal not emptied (its records are numbered up
 * to the snapshot's journal_seq: skipped), (3) done. Each loads to the
 * same state. And a save after a torn tail compacts, so that no record
 * ever follows a damaged one.
 */
static void test_compaction_crash(void **state)
{
	struct np_journal j = {0};
	struct np_node_state a;
	char *dir = tmpdir(), err[512], *jbuf, *snap;
	size_t jlen, slen;
	uint64_t seq;
	(void)state;

	init(&a);
	admit(&a, "web", "LSE", "2");
	save(&j, dir, &a, NULL);
	admit(&a, "db", "LSE", "2");
	save(&j, dir, &a, NULL);
	assert_int_equal(np_release(&a, "web"), 0);
	save(&j, dir, &a, NULL);
	np_journal_fini(&j);
	jbuf = read_all(dir, NP_JOURNAL_NAME, &jlen);
	snap = read_all(dir, NP_STATEFILE_NAME, &slen);
	/* (1) a temp file beside the old snapshot and the journal */
	write_all(dir, NP_STATEFILE_TMP_PREFIX "99999", snap, slen / 2);
	load_expect(dir, 0, &a, NULL, NULL);
	/* (2) the snapshot's rename done, the journal still full: what
	 * np_statefile_compact() writes before it empties the journal */
	seq = 0;
	assert_int_equal(np_statefile_compact(dir, &a, NULL, &seq, NULL, err,
					      sizeof(err)),
			 0);
	assert_int_equal(seq, 2);
	write_all(dir, NP_JOURNAL_NAME, jbuf, jlen);
	load_expect(dir, 0, &a, NULL, NULL);
	/* and a compaction from there keeps journal_seq past them */
	seq = 0;
	assert_int_equal(np_statefile_compact(dir, &a, NULL, &seq, NULL, err,
					      sizeof(err)),
			 0);
	assert_int_equal(seq, 2);
	assert_int_equal(file_size(dir, NP_JOURNAL_NAME), 0);
	load_expect(dir, 0, &a, NULL, NULL);

	/* a torn tail, then a new writer: its first save compacts */
	write_all(dir, NP_JOURNAL_NAME, "0123456789abcdef {\"seq\":3", 26);
	admit(&a, "api", "LS", "1");
	save(&j, dir, &a, NULL);
	assert_int_equal(file_size(dir, NP_JOURNAL_NAME), 0);
	admit(&a, "web", "LSE", "1");
	save(&j, dir, &a, NULL);
	assert_int_equal(j.seq, 3);
	load_expect(dir, 0, &a, NULL, NULL);
	np_journal_fini(&j);
	free(jbuf);
	free(snap);
	np_state_free(&a);
	rmdir_all(dir);
}

/* The journal outgrows the snapshot: the save compacts by itself. */
static void test_compaction_threshold(void **state)
{
	struct np_journal j = {0};
	struct np_node_state a;
	char *dir = tmpdir();
	int i;
	(void)state;

	init(&a);
	save(&j, dir, &a, NULL);
	for (i = 0; j.compactions < 2 && i < 10000; i++) {
		admit(&a, "x", "LS", "1");
		save(&j, dir, &a, NULL);
		assert_int_equal(np_release(&a, "x"), 0);
		save(&j, dir, &a, NULL);
	}
	assert_int_equal(j.compactions, 2);
	assert_true(j.records > 100);
	assert_true(file_size(dir, NP_JOURNAL_NAME) <
		    (long)NP_JOURNAL_SLACK + 4096);
	load_expect(dir, 0, &a, NULL, NULL);
	np_journal_fini(&j);
	np_state_free(&a);
	rmdir_all(dir);
}

/* A record that cannot be written fails the save (nothing acknowledged)
 * and leaves no partial line; the next save compacts. */
static void test_failed_append(void **state)
{
	struct np_journal j = {0};
	struct np_node_state a, before;
	char *dir = tmpdir(), err[512], p[512];
	(void)state;

	init(&a);
	init(&before);
	admit(&a, "web", "LSE", "2");
	admit(&before, "web", "LSE", "2");
	save(&j, dir, &a, NULL);
	snprintf(p, sizeof(p), "%s/" NP_JOURNAL_NAME, dir);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(mkdir(p, 0700), 0); /* open(O_WRONLY): EISDIR */
	admit(&a, "db", "LSE", "2");
	assert_int_equal(np_journal_save(&j, dir, &a, NULL, 0, err,
					 sizeof(err)),
			 -EISDIR);
	if (!strstr(err, NP_STATEFILE_NAME) || !strstr(err, NP_JOURNAL_NAME))
		fail_msg("message \"%s\" names neither file", err);
	assert_null(j.last);
	assert_false(j.have_wfp);
	assert_int_equal(j.wfp.n, 0);
	assert_int_equal(rmdir(p), 0);
	load_expect(dir, 0, &before, NULL, NULL);
	save(&j, dir, &a, NULL);
	assert_int_equal(j.compactions, 2);
	assert_int_equal(file_size(dir, NP_JOURNAL_NAME), 0);
	load_expect(dir, 0, &a, NULL, NULL);
	np_journal_fini(&j);
	np_state_free(&a);
	np_state_free(&before);
	rmdir_all(dir);
}

/* Flip one CPU of a container's set (through the writers' helper). */
static void cpu_flip(struct np_container_alloc *c, int cpu)
{
	np_cpuset s = *c->cpus;

	if (np_cpuset_test(&s, cpu))
		np_cpuset_clear(&s, cpu);
	else
		np_cpuset_set(&s, cpu);
	assert_int_equal(np_container_set_cpus(c, &s), 0);
}

/* Every change a save must see changes a workload's fingerprint, in the
 * allocation, its request and their heap parts; undone, it is back. */
static void test_fingerprint(void **state)
{
	struct np_node_state a;
	struct np_workload_alloc *w;
	uint64_t fp0;
	(void)state;

	init(&a);
	admit(&a, "web", "LSE", "2");
	w = a.w[0];
	fp0 = np_workload_alloc_fp(w);
	assert_true(np_workload_alloc_fp(w) == fp0);
#define CHANGED(change, undo)                                                  \
	do {                                                                   \
		change;                                                        \
		if (np_workload_alloc_fp(w) == fp0)                            \
			fail_msg("unseen: %s", #change);                       \
		undo;                                                          \
		assert_true(np_workload_alloc_fp(w) == fp0);                   \
	} while (0)
	CHANGED(cpu_flip(&w->c[0], 40), cpu_flip(&w->c[0], 40));
	{
		np_cpuset b;

		np_cpuset_zero(&b);
		w->c[0].baseline = &b; /* an empty one: as none */
		assert_true(np_workload_alloc_fp(w) == fp0);
		CHANGED(np_cpuset_set(&b, 3), np_cpuset_clear(&b, 3));
		w->c[0].baseline = NULL;
	}
	CHANGED(w->c[0].mems ^= 2, w->c[0].mems ^= 2);
	CHANGED(w->c[0].hint.preferred ^= 1, w->c[0].hint.preferred ^= 1);
	CHANGED(w->partition_by_verify ^= 1, w->partition_by_verify ^= 1);
	CHANGED(w->req.c[0].cpu_milli++, w->req.c[0].cpu_milli--);
	CHANGED(w->req.name[0] = 'W', w->req.name[0] = 'w');
	assert_non_null(w->req.cgroup);
	/* heap strings and charges changed in place, pointers the same */
	{
		char was = w->req.cgroup[0];
		CHANGED(w->req.cgroup[0] = 'Q', w->req.cgroup[0] = was);
	}
	if (w->c[0].charge)
		CHANGED(w->c[0].charge->mem[1]++, w->c[0].charge->mem[1]--);
#undef CHANGED
	/* a hint is its mask and two flags: no node id stands for a flag */
	{
		struct np_hint was = w->c[0].hint;
		uint64_t any;
		w->c[0].hint = (struct np_hint){.mask = 0, .any = true};
		any = np_workload_alloc_fp(w);
		w->c[0].hint = (struct np_hint){.mask = 1ull << 62};
		assert_true(np_workload_alloc_fp(w) != any);
		w->c[0].hint = (struct np_hint){.mask = 1ull << 63};
		assert_true(np_workload_alloc_fp(w) != any);
		w->c[0].hint = was;
	}
	np_state_free(&a);
}

/* The workloads' key in a record, put or deleted: how many. */
static int record_workloads(const char *dir)
{
	size_t len;
	char *buf = read_all(dir, NP_JOURNAL_NAME, &len), *line;
	json_t *rec, *v;
	const char *k;
	size_t i;
	int n = 0;

	assert_true(len > 18 && buf[len - 1] == '\n');
	buf[len - 1] = '\0';
	line = strrchr(buf, '\n');
	line = line ? line + 1 : buf;
	assert_non_null(rec = json_loads(line + 17, 0, NULL));
	json_object_foreach(json_object_get(rec, "put"), k, v) n += k[0] == 'w';
	json_array_foreach(json_object_get(rec, "del"), i, v)
		n += json_string_value(v)[0] == 'w';
	json_decref(rec);
	free(buf);
	return n;
}

/* A save writes what changed and only that: over random admissions,
 * releases and changes in place (with and without fdatasync), each
 * record names the one workload changed, and every load gives the
 * state back. */
static void test_changed_only(void **state)
{
	struct np_journal j = {0};
	struct np_node_state a;
	char *dir = tmpdir(), name[32];
	unsigned seed = 7;
	int next = 0;
	(void)state;

	init(&a);
	for (; next < 12; next++) {
		snprintf(name, sizeof(name), "w%d", next);
		admit(&a, name, next % 4 ? "LS" : "LSE", next % 4 ? "500m" : "1");
	}
	save(&j, dir, &a, NULL);
	for (int it = 0; it < 240; it++) {
		int op = (int)(rand_r(&seed) % 4), i;
		unsigned long recs = j.records, comps = j.compactions;
		char err[512];
		i = a.nworkloads ? (int)(rand_r(&seed) % (unsigned)a.nworkloads)
				 : -1;
		if (op == 0 || i < 0) {
			snprintf(name, sizeof(name), "w%d", next++);
			admit(&a, name, "LS", "250m");
		} else if (op == 1) {
			assert_int_equal(np_release(&a, a.w[i]->req.name), 0);
		} else if (op == 2) {
			a.w[i]->req.movable ^= 1;
		} else {
			char *cg = a.w[i]->req.cgroup;
			assert_non_null(cg);
			cg[0] = cg[0] == 'x' ? 'y' : 'x'; /* in place */
		}
		assert_int_equal(np_journal_save(&j, dir, &a, NULL,
						 it % 3 ? 0 : NP_JOURNAL_NOSYNC,
						 err, sizeof(err)),
				 0);
		if (j.compactions == comps) {
			assert_int_equal(j.records, recs + 1);
			assert_int_equal(record_workloads(dir), 1);
		}
		if (it % 20 == 19)
			load_expect(dir, 0, &a, NULL, NULL);
	}
	load_expect(dir, 0, &a, NULL, NULL);
	np_journal_fini(&j);
	np_state_free(&a);
	rmdir_all(dir);
}

/*
 * The streamed load against the whole document's over random changes the
 * journal records one save at a time: names admitted, released and
 * admitted again (a record's delete, then a put of the same key), changes
 * in place, LSE and LS, the daemon's part (a map member and a number)
 * changed beside; every few saves a load (load_expect: the same state,
 * daemon part and outcome both ways, and streamed).
 */
static void test_stream_random(void **state)
{
	struct np_journal j = {0};
	struct np_node_state a;
	json_t *daemon = json_pack("{s:{},s:i}", "spec_files", "epoch", 0);
	char *dir = tmpdir(), name[32], file[64];
	unsigned seed = 31;
	int loads = streamed_loads;
	(void)state;

	init(&a);
	save(&j, dir, &a, daemon);
	for (int it = 0; it < 300; it++) {
		int k = (int)(rand_r(&seed) % 24), op = (int)(rand_r(&seed) % 5);
		int i;
		json_t *sf = json_object_get(daemon, "spec_files");
		char err[512];

		snprintf(name, sizeof(name), "w%d", k);
		snprintf(file, sizeof(file), "/etc/np/%s.json", name);
		i = np_state_find(&a, name);
		if (i < 0) {
			admit(&a, name, k % 5 ? "LS" : "LSE", k % 5 ? "300m" : "1");
			json_object_set_new(sf, name, json_string(file));
		} else if (op < 2) {
			assert_int_equal(np_release(&a, name), 0);
			json_object_del(sf, name);
		} else if (op == 2) {
			a.w[i]->req.movable ^= 1;
		} else if (op == 3) {
			/* out and in again: the record deletes and puts it */
			assert_int_equal(np_release(&a, name), 0);
			admit(&a, name, k % 5 ? "LS" : "LSE", k % 5 ? "300m" : "1");
		} else {
			json_object_set_new(daemon, "epoch", json_integer(it));
		}
		/* a compaction now and then: records on a snapshot that
		 * holds workloads (changed, deleted, deleted and put again
		 * as they stream past) */
		assert_int_equal(np_journal_save(&j, dir, &a, daemon,
						 it % 70 == 35 ? NP_JOURNAL_COMPACT
						 : it % 2     ? NP_JOURNAL_NOSYNC
							      : 0,
						 err, sizeof(err)),
				 0);
		if (it % 10 == 9) {
			struct np_node_state b;
			json_t *dp = NULL;
			bool fresh;
			/* a workload out and in again in one save keeps its
			 * place in the journal, not the end it has in a (as
			 * before the stream): the same workloads, each alike */
			load_expect(dir, 0, NULL, &dp, NULL);
			assert_true(json_equal(dp, daemon));
			json_decref(dp);
			init(&b);
			assert_int_equal(np_statefile_load(dir, &b, &fresh, err,
							   sizeof(err)),
					 0);
			assert_int_equal(b.nworkloads, a.nworkloads);
			for (int x = 0; x < a.nworkloads; x++) {
				int y = np_state_find(&b, a.w[x]->req.name);
				assert_true(y >= 0);
				assert_true(np_workload_alloc_fp(a.w[x]) ==
					    np_workload_alloc_fp(b.w[y]));
			}
			np_state_free(&b);
		}
	}
	print_message("  %d streamed loads, %lu records, %lu compactions\n",
		      streamed_loads - loads, j.records, j.compactions);
	assert_true(streamed_loads - loads >= 25);
	np_journal_fini(&j);
	np_state_free(&a);
	json_decref(daemon);
	rmdir_all(dir);
}

/* --reset-state moves the journal aside with the snapshot; the offline
 * reader (np_statefile_read) and np_journal_document see the records. */
static void test_reset_and_offline(void **state)
{
	struct np_journal j = {0};
	struct np_node_state a, b;
	char *dir = tmpdir(), err[512], path[512], bak[600];
	json_t *doc;
	bool fresh = false;
	(void)state;

	init(&a);
	admit(&a, "web", "LSE", "2");
	save(&j, dir, &a, NULL);
	admit(&a, "db", "LSE", "2");
	save(&j, dir, &a, NULL);
	np_journal_fini(&j);

	snprintf(path, sizeof(path), "%s/" NP_STATEFILE_NAME, dir);
	assert_int_equal(np_statefile_read(path, topo, &b, err, sizeof(err)),
			 0);
	assert_int_equal(b.nworkloads, 2);
	np_state_free(&b);
	assert_int_equal(np_journal_document(dir, &doc, err, sizeof(err)), 0);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(doc, "body"),
					       "journal_seq")),
	    1);
	json_decref(doc);

	assert_int_equal(np_statefile_move_aside(dir, bak, sizeof(bak), err,
						 sizeof(err)),
			 0);
	assert_int_equal(file_size(dir, NP_JOURNAL_NAME), -1);
	assert_int_equal(file_size(dir, NP_STATEFILE_NAME), -1);
	init(&b);
	assert_int_equal(np_statefile_load(dir, &b, &fresh, err, sizeof(err)),
			 0);
	assert_true(fresh);
	np_state_free(&b);
	/* np_journal_document checks the snapshot's checksum */
	assert_int_equal(np_journal_document(dir, &doc, err, sizeof(err)),
			 -ENOENT);
	write_all(dir, NP_STATEFILE_NAME, "{}", 2);
	assert_int_equal(np_journal_document(dir, &doc, err, sizeof(err)),
			 NP_STATEFILE_ECORRUPT);
	assert_null(doc);
	np_state_free(&a);
	rmdir_all(dir);
}

static int setup(void **state)
{
	(void)state;
	topo = np_test_topology(2, 1, 4, 2, true, 8 * GiB);
	return topo ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	np_topology_free(topo);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_records_replayed),
	    cmocka_unit_test(test_torn_and_bad),
	    cmocka_unit_test(test_foreign_keys),
	    cmocka_unit_test(test_compaction_crash),
	    cmocka_unit_test(test_compaction_threshold),
	    cmocka_unit_test(test_failed_append),
	    cmocka_unit_test(test_fingerprint),
	    cmocka_unit_test(test_changed_only),
	    cmocka_unit_test(test_stream_random),
	    cmocka_unit_test(test_reset_and_offline),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
