// SPDX-License-Identifier: Apache-2.0
/* numaplaced: entry point of the node controller (see daemon.c). */
#include "numaplace/config.h"
#include "numaplace/error.h"
#include "numaplace/daemon.h"
#include "numaplace/enforcer.h"
#include "numaplace/state_file.h"
#include "numaplace/topology_json.h"
#include "numaplace/version.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: numaplaced [--config FILE] [--check-config] [--reset-state] "
		"[--once]\n"
		"       numaplaced --version\n"
		"\n"
		"  -c, --config FILE   configuration (default %s)\n"
		"      --check-config  validate the configuration (and the CPU\n"
		"                      pools it gives on this machine), then exit\n"
		"      --reset-state   move the state file aside (never deleted)\n"
		"                      and start with no allocations\n"
		"      --once          run one reconcile cycle and exit\n"
		"      --version       print the version and exit\n"
		"See numaplaced(8) and numaplace.json(5).\n",
		NP_CONFIG_DEFAULT_PATH);
}

/* Which cgroup driver the daemon would use here, and why. */
static int print_driver(const struct np_config *cfg)
{
	char why[512] = "";
	bool sd;

	if (cfg->driver == NP_DRIVER_CGROUPFS) {
		printf("cgroup driver: cgroupfs (configured)\n");
		return 0;
	}
	sd = !cfg->fake_cgroup_root &&
	     np_systemd_usable(NULL, why, sizeof(why));
	if (cfg->driver == NP_DRIVER_SYSTEMD && !sd) {
		fprintf(stderr,
			"numaplaced: config.cgroup_driver is \"systemd\", but "
			"%s\n",
			why);
		return 2;
	}
	printf("cgroup driver: %s (%s%s)\n", sd ? "systemd" : "cgroupfs",
		       cfg->driver == NP_DRIVER_SYSTEMD ? "configured; " : "auto: ",
		       cfg->fake_cgroup_root ? "a fake cgroup root" : why);
	return 0;
}

static int check_config(const char *path)
{
	struct np_topology *t = NULL;
	struct np_config cfg;
	struct np_node_state st;
	json_t *out;
	char err[512];

	if (np_config_load(&cfg, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "numaplaced: %s\n", err);
		return 2;
	}
	if (np_topology_load(&t, cfg.topology, err, sizeof(err)) < 0) {
		fprintf(stderr, "numaplaced: config.topology: %s\n", err);
		return 2;
	}
	if (cfg.be_suppress.min_cpus > t->ncpus) {
		fprintf(stderr,
			"numaplaced: %s: config.be_suppress.cpuSuppressMinCPUs: "
			"%d is above the node's %d CPUs\n",
			path, cfg.be_suppress.min_cpus, t->ncpus);
		np_topology_free(t);
		return 2;
	}
	if (cfg.cgroup_root[0] && access(cfg.cgroup_root, F_OK)) {
		fprintf(stderr, "numaplaced: %s: config.cgroup_root: %s: %s\n",
			path, cfg.cgroup_root, strerror(errno));
		np_topology_free(t);
		return 2;
	}
	if (np_state_init(&st, t, &cfg.policy, err, sizeof(err)) < 0) {
		/* np_state_init names keys as "policy.X" */
		fprintf(stderr, "numaplaced: %s: config.node_%s\n", path, err);
		np_topology_free(t);
		return 2;
	}
	if (print_driver(&cfg)) {
		np_state_free(&st);
		np_topology_free(t);
		return 2;
	}
	printf("%s: configuration is valid\n", path);
	out = json_pack("{s:o,s:o}", "config", np_config_to_json(&cfg), "pools",
			np_pools_to_json(&st));
	json_dumpf(out, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(out);
	np_state_free(&st);
	np_topology_free(t);
	return 0;
}

/*
 * Under the systemd driver, the first process of the delegated workload
 * scope: it keeps the scope up while no workload runs (systemd stops an
 * empty scope). It only sleeps; the scope's stop (SIGTERM) ends it.
 */
static __attribute__((noreturn)) int scope_holder(void)
{
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGHUP, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"check-config", no_argument, NULL, 'C'},
		{"reset-state", no_argument, NULL, 'R'},
		{"once", no_argument, NULL, 'O'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *path = NP_CONFIG_DEFAULT_PATH;
	struct np_daemon d;
	unsigned flags = 0;
	bool check = false, once = false;
	char err[1024];
	int c, r;

	if (argc == 2 && !strcmp(argv[1], "--scope-holder"))
		return scope_holder();
	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 'C':
			check = true;
			break;
		case 'R':
			flags |= NP_DAEMON_RESET_STATE;
			break;
		case 'O':
			once = true;
			break;
		case 'V':
			printf("numaplaced %s\n", NP_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "numaplaced: unexpected argument '%s'\n",
			np_echo(argv[optind]));
		usage(stderr);
		return 2;
	}
	if (check)
		return check_config(path);
	r = np_daemon_init(&d, path, flags, err, sizeof(err));
	if (r) {
		fprintf(stderr, "numaplaced: %s\n", err);
		np_daemon_fini(&d);
		/* 2 = needs the operator (bad config, corrupt or outdated
		 * state, a host without cgroup v2 cpusets): systemd does not
		 * restart on it (RestartPreventExitStatus=2). */
		return r == -EINVAL || r == NP_STATEFILE_ECORRUPT ||
				       r == NP_STATEFILE_EPOLICY ||
				       r == NP_STATEFILE_ETOPOLOGY ||
				       r == NP_STATEFILE_EVERSION ||
				       r == -EOPNOTSUPP || r == -EMEDIUMTYPE ||
				       r == -EPERM /* a file not trusted */
			       ? 2
			       : 1;
	}
	if (once) {
		r = np_daemon_reconcile(&d);
		np_daemon_placement_files(&d);
	} else {
		r = np_daemon_run(&d);
	}
	np_daemon_fini(&d);
	return r ? 1 : 0;
}
