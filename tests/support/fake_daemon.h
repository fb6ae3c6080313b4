/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A daemon on a fake enforcer, for the tests of the daemon's stages: the
 * 2-node VM topology (CPUs 0-7, siblings 0/4 1/5 2/6 3/7, node 0 =
 * 0,1,4,5, reserved 0,4, topology policy restricted), system.slice
 * confined to the shared pool, verification off, its spec directory,
 * state directory and socket in a new /tmp/np-NAME-XXXXXX. The host tree
 * holds system.slice and the managed parent numaplace.slice (0-7, nodes
 * 0-1).
 */
#ifndef NP_TEST_FAKE_DAEMON_H
#define NP_TEST_FAKE_DAEMON_H

#include "fake_enforcer.h"
#include "numaplace/daemon.h"

/* Workload specs the daemon tests admit: an LSE workload of 2 CPUs (it
 * gets 1,5) and a shared LS one of 500m, each in the cgroup of its name. */
#define FAKE_LSE_WEB                                                           \
	"{\"name\": \"web\", \"cgroup\": \"web\", \"qos\": \"LSE\", "          \
	"\"containers\": [{\"name\": \"main\", \"cpu\": \"2\"}]}"
#define FAKE_LS_API                                                            \
	"{\"name\": \"api\", \"cgroup\": \"api\", \"qos\": \"LS\", "           \
	"\"containers\": [{\"name\": \"main\", \"cpu\": \"500m\"}]}"

struct fake_daemon {
	char dir[64];
	struct np_daemon d;
	struct fake_enforcer *f;
};

/* Start one (fails the test on error). */
void fake_daemon_start(struct fake_daemon *x, const char *name);
/* Stop it, free the fake, remove the directory. */
void fake_daemon_stop(struct fake_daemon *x);
/* For cmocka's setup and teardown: a zeroed object of size bytes (a
 * struct whose first member is a struct fake_daemon) with the daemon
 * started as name, and its end (stopped, freed). */
void *fake_daemon_new(size_t size, const char *name);
int fake_daemon_teardown(void **state);
/* A control request as numaplaced's loop serves it: handled, then the
 * cycle it asks for run (np_daemon_run runs it after the answers that do
 * not wait for it, before those that do), then its answer (completed
 * when it waited for that cycle). */
json_t *fake_daemon_serve(struct np_daemon *d, const json_t *req);
/* Write text to path (fails the test on error). */
void fake_write_file(const char *path, const char *text);

/* The daemon's answer to a request given as JSON text (owned by the
 * caller); a request that is not JSON fails the test. */
json_t *fake_daemon_ask(struct fake_daemon *x, const char *text);
/* The same, failing the test unless the answer is {"ok": true, ...}. */
json_t *fake_daemon_ok(struct fake_daemon *x, const char *text);
/* {"op": "admit", "spec": SPEC}, which must succeed. */
void fake_daemon_admit(struct fake_daemon *x, const char *spec);
/* Stop the daemon and start it again on the same configuration, state
 * directory and fake cgroups (their contents kept, the call log cleared),
 * as numaplaced restarted on the same node. */
void fake_daemon_restart(struct fake_daemon *x);
/* Add members (", \"key\": value" ...) to its configuration file
 * (np.json), for a start with another configuration (the daemon stopped
 * first; they take effect at the next start). The file's path goes to
 * path and what it held before to old, each when not NULL; a file or a
 * result that does not fit fails the test. */
void fake_daemon_config_add(const struct fake_daemon *x, const char *members,
			    char *path, size_t pathlen, char *old,
			    size_t oldlen);

#endif
