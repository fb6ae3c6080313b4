// SPDX-License-Identifier: Apache-2.0
/*
 * Crash-safe checkpoint of the node state (see numaplace/state_file.h for
 * the format): atomic writes, checksum, policy and topology fingerprints,
 * and load outcomes that never start over silently.
 */
#include "numaplace/state_file.h"
#include "basic/fileio.h"
#include "numaplace/state_journal.h"
#include "state_internal.h"
#include "numaplace/cleanup.h"
#include "numaplace/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* What every refusal to load says about recovery. */
#define RESET_HINT                                                             \
	"inspect it, then start numaplaced with --reset-state to discard it "  \
	"(existing cgroup cpusets are left as they are)"
#define DRAIN_HINT                                                             \
	"allocations would move: drain the node's workloads and start with "   \
	"--reset-state"

/* ---- files ---- */

int np_statefile_open_dir(const char *dir, char *err, size_t errlen)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return np_errf(err, errlen, -errno, "state directory %s: %s",
			       dir, strerror(errno));
	return dfd;
}

int np_statefile_clean_tmp_at(int dfd, const char *dir, int *removed, char *err,
			size_t errlen)
{
	struct dirent *de;
	DIR *d;
	int r = 0, n = 0;

	if (!(d = np_opendir_at(dfd, ".")))
		return np_errf(err, errlen, -errno, "state directory %s: %s",
			       dir, strerror(errno));
	while ((errno = 0, de = readdir(d))) {
		if (strncmp(de->d_name, NP_STATEFILE_TMP_PREFIX,
			    strlen(NP_STATEFILE_TMP_PREFIX)))
			continue;
		if (unlinkat(dfd, de->d_name, 0)) {
			if (errno == ENOENT)
				continue;
			r = np_errf(err, errlen, -errno,
				    "removing stale temp file %s/%s: %s", dir,
				    de->d_name, strerror(errno));
			goto out;
		}
		n++;
	}
	if (errno) {
		r = np_errf(err, errlen, -errno,
			    "reading state directory %s: %s", dir,
			    strerror(errno));
		goto out;
	}
	if (n && fsync(dfd)) {
		r = np_errf(err, errlen, -errno,
			    "fsync of state directory %s: %s", dir,
			    strerror(errno));
		goto out;
	}
out:
	closedir(d);
	if (removed)
		*removed = n;
	return r;
}

int np_statefile_clean_tmp(const char *dir, int *removed, char *err,
			   size_t errlen)
{
	_cleanup_close_ int dfd = np_statefile_open_dir(dir, err, errlen);

	if (removed)
		*removed = 0;
	if (dfd < 0)
		return dfd;
	return np_statefile_clean_tmp_at(dfd, dir, removed, err, errlen);
}

int np_statefile_save(const char *dir, const struct np_node_state *st,
		      char *err, size_t errlen)
{
	return np_statefile_save_with(dir, st, NULL, err, errlen);
}

/*
 * Create dir/tmp exclusively, mode exactly 0600. A file of that name can
 * only be left by an earlier process with our pid that crashed: the name
 * is ours, nobody else writes it, so it is removed and created again.
 */
static int create_tmp(int dfd, const char *dir, const char *tmp, char *err,
		      size_t errlen)
{
	int fd = -1;

	for (int attempt = 0; attempt < 2; attempt++) {
		fd = openat(
		    dfd, tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd >= 0 || errno != EEXIST || attempt)
			break;
		unlinkat(dfd, tmp, 0);
	}
	if (fd < 0)
		return np_errf(err, errlen, -errno, "creating %s/%s: %s", dir,
			       tmp, strerror(errno));
	/* The umask may only have taken bits away; make it exactly 0600. */
	if (fchmod(fd, 0600)) {
		int r = np_errf(err, errlen, -errno, "chmod %s/%s: %s", dir,
				tmp, strerror(errno));
		close(fd);
		unlinkat(dfd, tmp, 0);
		return r;
	}
	return fd;
}

/* The document into fd (np_statefile_stream()), made durable; fd is
 * closed. *bytes: its size. */
static int write_tmp(int fd, const char *dir, const char *tmp,
		     const struct np_node_state *st, const json_t *daemon,
		     uint64_t seq, size_t *bytes, char *err, size_t errlen)
{
	bool io;
	int r;

	if ((r = np_statefile_stream(fd, st, daemon, seq, bytes, &io))) {
		close(fd);
		if (!io)
			return np_errf(err, errlen, r,
				       "saving state: out of memory building "
				       "the document");
		return np_errf(err, errlen, r,
			       "writing %s/%s: %s (%s/%s is unchanged)", dir,
			       tmp, strerror(-r), dir, NP_STATEFILE_NAME);
	}
	if (fsync(fd)) {
		r = np_errf(err, errlen, -errno,
			    "fsync %s/%s: %s (%s/%s is unchanged)", dir, tmp,
			    strerror(errno), dir, NP_STATEFILE_NAME);
		close(fd);
		return r;
	}
	if (close(fd))
		return np_errf(err, errlen, -errno, "closing %s/%s: %s", dir,
			       tmp, strerror(errno));
	return 0;
}

/*
 * Not np_write_atomic_at(): the temp file is named state.json.tmp.<pid>
 * (np_statefile_clean_tmp() finds what a crash left), created O_EXCL with
 * mode exactly 0600, and every step has its own message.
 */
int np_statefile_save_with(const char *dir, const struct np_node_state *st,
			   const json_t *daemon, char *err, size_t errlen)
{
	uint64_t seq = 0;
	return np_statefile_compact(dir, st, daemon, &seq, NULL, err, errlen);
}

int np_statefile_compact(const char *dir, const struct np_node_state *st,
			 const json_t *daemon, uint64_t *seq, size_t *bytes,
			 char *err, size_t errlen)
{
	_cleanup_close_ int dfd = -1;
	uint64_t last = 0;
	size_t written = 0;
	char tmp[64];
	int fd, r;

	if (daemon && !json_is_object(daemon))
		return np_errf(
		    err, errlen, -EINVAL,
		    "saving state: the daemon's part is not an object");
	if ((dfd = np_statefile_open_dir(dir, err, errlen)) < 0)
		return dfd;
	/* past every record in the journal: none is replayed on it */
	if ((r = np_journal_last_seq(dfd, dir, &last, err, errlen)))
		return r;
	if (last > *seq)
		*seq = last;
	/* written as it is built, one workload at a time (state_stream.c):
	 * the whole state is never one document in memory */
	snprintf(tmp, sizeof(tmp), NP_STATEFILE_TMP_PREFIX "%ld",
		 (long)getpid());
	if ((fd = create_tmp(dfd, dir, tmp, err, errlen)) < 0)
		return fd;
	if ((r = write_tmp(fd, dir, tmp, st, daemon, *seq, &written, err,
			   errlen)))
		goto unlink;
	if (renameat(dfd, tmp, dfd, NP_STATEFILE_NAME)) {
		r = np_errf(err, errlen, -errno, "renaming %s/%s to %s: %s",
			    dir, tmp, NP_STATEFILE_NAME, strerror(errno));
		goto unlink;
	}
	if (fsync(dfd))
		return np_errf(
		    err, errlen, -errno,
		    "fsync of state directory %s after writing %s: %s "
		    "(the new state may not survive a crash)",
		    dir, NP_STATEFILE_NAME, strerror(errno));
	if (bytes)
		*bytes = written;
	return np_journal_clear(dfd, dir, err, errlen);
unlink:
	unlinkat(dfd, tmp, 0);
	return r;
}

/*
 * Read the regular file dir/name completely, up to NP_STATEFILE_MAX_SIZE;
 * -ENOENT (no message) if it does not exist.
 */
static int read_at(int dfd, const char *dir, const char *name, char **out,
		   size_t *outlen, char *err, size_t errlen)
{
	_cleanup_close_ int fd = -1;
	struct stat sb;
	int r;

	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT)
		return -ENOENT;
	if (fd < 0) /* a symbolic link is bad input: -EINVAL, exit 2 */
		return np_errf(err, errlen, errno == ELOOP ? -EINVAL : -errno,
			       "opening %s/%s: %s", dir, name,
			       errno == ELOOP ? "is a symbolic link, not a "
						"regular file"
					      : strerror(errno));
	if (fstat(fd, &sb))
		return np_errf(err, errlen, -errno, "%s/%s: %s", dir, name,
			       strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return np_errf(err, errlen, -EINVAL,
			       "%s/%s is not a regular file", dir, name);
	r = (uint64_t)sb.st_size > NP_STATEFILE_MAX_SIZE
		? -EFBIG
		: np_read_fd(fd, NP_STATEFILE_MAX_SIZE, out, outlen);
	if (r == -EFBIG)
		return np_errf(err, errlen, NP_STATEFILE_ECORRUPT,
			       "state file %s/%s is corrupt (%lld bytes, more "
			       "than any state); " RESET_HINT,
			       dir, name, (long long)sb.st_size);
	if (r == -ENOMEM)
		return np_errf(err, errlen, r, "%s/%s: out of memory", dir,
			       name);
	if (r)
		return np_errf(err, errlen, r, "reading %s/%s: %s", dir, name,
			       strerror(-r));
	return 0;
}

/* ---- comparing the stored policy / topology with the current one ---- */

static void render(const json_t *v, char *buf, size_t len)
{
	char *s;

	if (!v) {
		snprintf(buf, len, "(unset)");
		return;
	}
	if (json_is_string(v) && json_string_value(v)[0]) {
		snprintf(buf, len, "%s", json_string_value(v));
	} else {
		s = json_dumps(v,
			       JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);
		snprintf(buf, len, "%s", s ? s : "?");
		free(s);
	}
	/* Keep one message readable on a 4096-CPU node. */
	if (strlen(buf) > 96)
		snprintf(buf + 93, len - 93, "...");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool first_diff(const json_t *old, const json_t *cur, const char *path,
		       const char *const *order, char *out, size_t outlen);

static bool diff_key(const json_t *old, const json_t *cur, const char *path,
		     const char *key, char *out, size_t outlen)
{
	char sub[256];
	snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", key);
	return first_diff(json_object_get(old, key), json_object_get(cur, key),
			  sub, NULL, out, outlen);
}

/*
 * Describe the first difference between old and cur as
 * "key.sub: old -> new". Keys in order[] come first, then the others in
 * sorted order. Returns true if a difference was found.
 */
static bool first_diff(const json_t *old, const json_t *cur, const char *path,
		       const char *const *order, char *out, size_t outlen)
{
	const char **keys = NULL;
	size_t nkeys = 0, cap;
	const char *k;
	json_t *v;
	bool found = false;

	if ((!old && !cur) || json_equal((json_t *)old, (json_t *)cur))
		return false;
	if (!json_is_object(old) || !json_is_object(cur)) {
		char a[128], b[128];
		render(old, a, sizeof(a));
		render(cur, b, sizeof(b));
		snprintf(out, outlen, "%s: %s -> %s", *path ? path : "value", a,
			 b);
		return true;
	}
	cap = json_object_size(old) + json_object_size(cur) + 1;
	if (!(keys = calloc(cap, sizeof(*keys)))) {
		snprintf(out, outlen, "%s differs", *path ? path : "value");
		return true;
	}
	json_object_foreach((json_t *)old, k, v) keys[nkeys++] = k;
	json_object_foreach((json_t *)cur, k, v) if (!json_object_get(old, k))
	    keys[nkeys++] = k;
	qsort(keys, nkeys, sizeof(*keys), cmp_str);
	/* Listed keys first, in the listed order, then the rest sorted. */
	for (const char *const *o = order; o && *o && !found; o++)
		found = diff_key(old, cur, path, *o, out, outlen);
	for (size_t i = 0; i < nkeys && !found; i++) {
		bool listed = false;
		for (const char *const *o = order; o && *o; o++)
			listed |= !strcmp(*o, keys[i]);
		if (!listed)
			found = diff_key(old, cur, path, keys[i], out, outlen);
	}
	free(keys);
	if (!found)
		snprintf(out, outlen, "%s differs", *path ? path : "value");
	return true;
}

static const char *const topo_order[] = {"online", "numa", "sockets", "cores",
					 NULL};

/* ---- load ---- */

/* "state file PATH is corrupt (WHY); RESET_HINT", and NP_STATEFILE_ECORRUPT. */
static __attribute__((format(printf, 4, 5))) int
corrupt(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
	char why[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return np_errf(err, errlen, NP_STATEFILE_ECORRUPT,
		       "state file %s is corrupt (%s); " RESET_HINT, path, why);
}

/* The envelope: JSON, format, version, checksum over the body (not for a
 * document given). On success *doc holds the document (parsed from buf
 * unless given) and *body points into it. */
static int parse_envelope(const char *path, const char *buf, size_t len,
			  json_t **doc, const json_t **body, char *err,
			  size_t errlen)
{
	json_error_t jerr;
	const json_t *v;
	uint64_t stored, h;
	bool given = *doc;

	if (!*doc && len == 0)
		return corrupt(err, errlen, path, "empty file");
	if (!*doc && !(*doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES,
					 &jerr)))
		return corrupt(err, errlen, path,
			       "not valid JSON, truncated? %s at line %d "
			       "column %d",
			       jerr.text, jerr.line, jerr.column);
	v = json_object_get(*doc, "format");
	if (!json_is_object(*doc) || !json_is_string(v) ||
	    strcmp(json_string_value(v), NP_STATEFILE_FORMAT))
		return corrupt(err, errlen, path,
			       "not a numaplace state file: \"format\" is not "
			       "\"%s\"",
			       NP_STATEFILE_FORMAT);
	v = json_object_get(*doc, "version");
	if (!json_is_integer(v))
		return corrupt(err, errlen, path,
			       "\"version\" is missing or not an integer");
	if (json_integer_value(v) != NP_STATEFILE_VERSION)
		return np_errf(
		    err, errlen, NP_STATEFILE_EVERSION,
		    "state file %s has format version %lld, this numaplaced "
		    "reads version %d: run the numaplaced that wrote it, or "
		    "drain the node's workloads and start with --reset-state",
		    path, (long long)json_integer_value(v),
		    NP_STATEFILE_VERSION);
	*body = json_object_get(*doc, "body");
	if (!json_is_object(*body))
		return corrupt(err, errlen, path, "\"body\" is missing");
	if (np_statefile_hash_parse(json_object_get(*doc, "checksum"), &stored))
		return corrupt(err, errlen, path,
			       "\"checksum\" is missing or not \"" NP_STATEFILE_HASH_PREFIX
			       "<16 hex digits>\"");
	if (given) /* its checksum was made from this body just now, after
		    * the snapshot's own was checked (np_journal_apply_doc) */
		return 0;
	if (!(h = np_json_fnv1a64(*body)))
		return np_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
	if (h != stored)
		return corrupt(err, errlen, path, "checksum mismatch");
	return 0;
}

/* What the body holds, once the checksum says numaplaced wrote it. */
struct stored {
	const json_t *policy, *topo, *state;
	uint64_t policy_hash, topo_hash; /* from body.fingerprint */
};

static int parse_body(const char *path, const json_t *body, struct stored *s,
		      char *err, size_t errlen)
{
	const json_t *fp = json_object_get(body, "fingerprint"), *v;

	s->policy = json_object_get(body, "policy");
	s->topo = json_object_get(body, "topology");
	s->state = json_object_get(body, "state");
	if (!json_is_object(fp) || !json_is_object(s->policy) ||
	    !json_is_object(s->topo) || !json_is_object(s->state))
		return corrupt(err, errlen, path,
			       "body lacks fingerprint, policy, topology or "
			       "state");
	v = json_object_get(body, "daemon");
	if (v && !json_is_object(v))
		return corrupt(err, errlen, path,
			       "body.daemon is not an object");
	if (np_statefile_hash_parse(json_object_get(fp, "policy"),
				    &s->policy_hash) ||
	    s->policy_hash != np_json_fnv1a64(s->policy))
		return corrupt(err, errlen, path,
			       "the policy fingerprint does not match the "
			       "stored policy");
	if (np_statefile_hash_parse(json_object_get(fp, "topology"),
				    &s->topo_hash) ||
	    s->topo_hash != np_json_fnv1a64(s->topo))
		return corrupt(err, errlen, path,
			       "the topology fingerprint does not match the "
			       "stored topology");
	return 0;
}

/* The stored policy and topology against the current ones. */
static int compare_current(const char *path, const struct np_node_state *st,
			   const struct stored *s, char *err, size_t errlen)
{
	_cleanup_json_ json_t *cpol = np_policy_to_json(&st->policy);
	_cleanup_json_ json_t *ctopo = np_statefile_topology_json(st->topo);
	char diff[384], tdiff[384] = "";
	bool topo_too;

	if (!cpol || !ctopo)
		return np_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
	if (np_json_fnv1a64(cpol) != s->policy_hash) {
		first_diff(s->policy, cpol, "", NULL, diff, sizeof(diff));
		topo_too = np_json_fnv1a64(ctopo) != s->topo_hash &&
			   first_diff(s->topo, ctopo, "", topo_order, tdiff,
				      sizeof(tdiff));
		return np_errf(
		    err, errlen, NP_STATEFILE_EPOLICY,
		    "node policy changed since the state was written "
		    "(%s)%s%s%s; " DRAIN_HINT " (state file %s)",
		    diff, topo_too ? "; the CPU topology changed too (" : "",
		    tdiff, topo_too ? ")" : "", path);
	}
	if (np_json_fnv1a64(ctopo) != s->topo_hash) {
		first_diff(s->topo, ctopo, "", topo_order, diff, sizeof(diff));
		return np_errf(
		    err, errlen, NP_STATEFILE_ETOPOLOGY,
		    "CPU topology changed since the state was written "
		    "(%s); allocations may name CPUs that moved or are "
		    "gone: drain the node's workloads and start with "
		    "--reset-state (state file %s)",
		    diff, path);
	}
	return 0;
}

/* Same policy and topology must give the same reserved CPUs; if they do
 * not, the reservation algorithm changed (an upgrade). */
static int check_reserved(const char *path, const struct np_node_state *st,
			  const json_t *sstate, char *err, size_t errlen)
{
	const json_t *v = json_object_get(sstate, "reserved");
	json_t *cj;
	np_cpuset res;
	char now[128];

	if (!json_is_string(v))
		return 0;
	if (np_cpuset_parse(&res, json_string_value(v), NULL, 0))
		return corrupt(err, errlen, path,
			       "state.reserved: \"%s\" is not a CPU list",
			       json_string_value(v));
	if (np_cpuset_equal(&res, &st->reserved))
		return 0;
	cj = np_statefile_cpus_json(&st->reserved);
	render(cj, now, sizeof(now));
	json_decref(cj);
	return np_errf(err, errlen, NP_STATEFILE_EPOLICY,
		       "node policy changed since the state was written "
		       "(reserved CPUs: %s -> %s, with the same policy and "
		       "topology); " DRAIN_HINT " (state file %s)",
		       json_string_value(v), now, path);
}

int np_statefile_check_body(const char *path, const json_t *body,
			    const struct np_node_state *st, char *err,
			    size_t errlen)
{
	struct stored s;
	int r;

	if ((r = parse_body(path, body, &s, err, errlen)) ||
	    (r = compare_current(path, st, &s, err, errlen)))
		return r;
	return check_reserved(path, st, s.state, err, errlen);
}

/* The contents of state.json (buf, len; or doc, taken, parsed already)
 * into st. */
static int load_doc(const char *path, const char *buf, size_t len,
		    json_t *given, struct np_node_state *st, json_t **daemon,
		    char *err, size_t errlen)
{
	_cleanup_json_ json_t *doc = given;
	const json_t *body = NULL, *v;
	struct stored s;
	char verr[512] = "";
	int r;

	if ((r = parse_envelope(path, buf, len, &doc, &body, err, errlen)) ||
	    (r = parse_body(path, body, &s, err, errlen)))
		return r;
	/* A drained node (no workload admitted) has nothing that could
	 * move: a new policy or topology simply applies. The daemon's
	 * bookkeeping (which spec files were seen) is kept. */
	v = json_object_get(s.state, "workloads");
	if (json_is_array(v) && json_array_size(v) == 0 &&
	    (compare_current(path, st, &s, verr, sizeof(verr)) ||
	     check_reserved(path, st, s.state, verr, sizeof(verr)))) {
		if (daemon)
			*daemon = json_incref(json_object_get(body, "daemon"));
		return 0;
	}
	if ((r = compare_current(path, st, &s, err, errlen)) ||
	    (r = check_reserved(path, st, s.state, err, errlen)))
		return r;
	r = np_state_load_json(st, s.state, "state", verr, sizeof(verr));
	if (r == -ENOMEM)
		return np_errf(err, errlen, r, "%s: out of memory", path);
	if (r)
		return corrupt(err, errlen, path, "%s",
			       verr[0] ? verr : "the state does not validate");
	if (daemon)
		*daemon = json_incref(json_object_get(body, "daemon"));
	return 0;
}

int np_statefile_load_buf(const char *path, const char *buf, size_t len,
			  struct np_node_state *st, json_t **daemon, char *err,
			  size_t errlen)
{
	return load_doc(path, buf, len, NULL, st, daemon, err, errlen);
}

int np_statefile_load(const char *dir, struct np_node_state *st, bool *fresh,
		      char *err, size_t errlen)
{
	return np_statefile_load_with(dir, st, fresh, NULL, err, errlen);
}

int np_statefile_load_with(const char *dir, struct np_node_state *st,
			   bool *fresh, json_t **daemon, char *err,
			   size_t errlen)
{
	return np_statefile_load_dir(dir, st, fresh, daemon, true, err,
				     errlen);
}

int np_statefile_load_dir(const char *dir, struct np_node_state *st,
			  bool *fresh, json_t **daemon, bool stream, char *err,
			  size_t errlen)
{
	_cleanup_close_ int dfd = -1;
	_cleanup_free_ char *buf = NULL;
	char path[PATH_MAX];
	json_t *doc = NULL;
	size_t len = 0;
	int r, applied;

	if (fresh)
		*fresh = false;
	if (daemon)
		*daemon = NULL;
	snprintf(path, sizeof(path), "%s/%s", dir, NP_STATEFILE_NAME);
	if ((dfd = np_statefile_open_dir(dir, err, errlen)) < 0)
		return dfd;
	if ((r = np_statefile_clean_tmp_at(dfd, dir, NULL, err, errlen)))
		return r;
	/* streamed, never whole; the whole document when in doubt */
	if (stream && np_statefile_load_stream(dfd, dir, st, daemon))
		return 0;
	r = read_at(dfd, dir, NP_STATEFILE_NAME, &buf, &len, err, errlen);
	if (r == -ENOENT && np_journal_has_records(dfd))
		return np_errf(err, errlen, NP_STATEFILE_ECORRUPT,
			       "%s/%s holds changes but %s is missing; " RESET_HINT,
			       dir, NP_JOURNAL_NAME, path);
	if (r == -ENOENT) {
		if (fresh)
			*fresh = true;
		return 0;
	}
	if (r || (r = np_journal_apply_doc(dfd, dir, buf, len, &doc, &applied,
					   err, errlen)))
		return r;
	if (doc) { /* records applied: the text is not needed any more */
		free(buf);
		buf = NULL;
	}
	return load_doc(path, buf, len, doc, st, daemon, err, errlen);
}
