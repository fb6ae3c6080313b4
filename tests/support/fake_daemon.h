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

struct fake_daemon {
	char dir[64];
	struct np_daemon d;
	struct fake_enforcer *f;
};

/* Start one (fails the test on error). */
void fake_daemon_start(struct fake_daemon *x, const char *name);
/* Stop it, free the fake, remove the directory. */
void fake_daemon_stop(struct fake_daemon *x);
/* Its configuration file (np.json) with members (", \"key\": value")
 * added, for a start with another configuration (the daemon stopped
 * first); the file's path in path, what it held before in old (when
 * not NULL; at most 2 KiB). */
void fake_config_add(const struct fake_daemon *x, const char *members,
		     char *path, size_t pathlen, char *old, size_t oldlen);
/* Write text to path (fails the test on error). */
void fake_write_file(const char *path, const char *text);

#endif
