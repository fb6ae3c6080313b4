/* SPDX-License-Identifier: Apache-2.0 */
/* numaplaced configuration (/etc/numaplace/numaplace.json). */
#ifndef NUMAPLACE_CONFIG_H
#define NUMAPLACE_CONFIG_H

#include "numaplace/admit.h"

#define NP_CONFIG_DEFAULT_PATH "/etc/numaplace/numaplace.json"
#define NP_MAX_SHARED_CGROUPS 16

struct np_config {
	struct np_node_policy policy;
	char topology[NP_PATH_MAX];   /* topology source, "live" by default */
	unsigned reconcile_period_ms; /* default 10 s */
	char cgroup_root[NP_PATH_MAX]; /* "" = auto-detect from mountinfo */
	char cgroup_parent[NP_PATH_MAX]; /* managed parent, relative */
	/* Cgroups outside the managed parent that are confined to the shared
	 * pool (e.g. "system.slice": host daemons off exclusive CPUs). */
	int nshared;
	char shared_cgroups[NP_MAX_SHARED_CGROUPS][NP_PATH_MAX];
	bool create_cgroups;       /* mkdir missing workload cgroups */
	char spec_dir[NP_PATH_MAX];
	char state_dir[NP_PATH_MAX];
	char socket_path[NP_PATH_MAX];
	char bpf_pin_path[NP_PATH_MAX];
	/* Test-only: cgroup_root may be a plain directory tree. Refused on a
	 * real cgroup2 mount, and without this flag a non-cgroup2 root is
	 * refused. */
	bool fake_cgroup_root;
};

void np_config_defaults(struct np_config *c);
/* Parse and validate; every error names the key. */
int np_config_from_json(struct np_config *c, const json_t *j, char *err,
			size_t errlen);
int np_config_load(struct np_config *c, const char *path, char *err,
		   size_t errlen);
json_t *np_config_to_json(const struct np_config *c);

#endif
