/* SPDX-License-Identifier: Apache-2.0 */
/* numaplace CLI: one file per subcommand (tools/cmd_*.c). */
#ifndef NUMAPLACE_CLI_H
#define NUMAPLACE_CLI_H

/* Exit codes: 0 ok, 1 runtime failure, 2 bad usage or bad input. */
#define NP_EXIT_OK 0
#define NP_EXIT_FAIL 1
#define NP_EXIT_USAGE 2

/* Each gets argv[0] = subcommand name. */
int cmd_topology(int argc, char **argv);
int cmd_plan(int argc, char **argv);
/* Control socket clients of numaplaced (see numaplace/ctl.h). */
int cmd_admit(int argc, char **argv);
int cmd_release(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_import(int argc, char **argv);
/* Verification: pinned maps (violations), daemon samples (events). */
int cmd_violations(int argc, char **argv);
int cmd_events(int argc, char **argv);

#endif
