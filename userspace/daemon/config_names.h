/* SPDX-License-Identifier: Apache-2.0 */
/* The names of the configuration's enumerations (config.c), shared with
 * the writer of the effective configuration (config_json.c). */
#ifndef NP_DAEMON_CONFIG_NAMES_H
#define NP_DAEMON_CONFIG_NAMES_H

#include <jansson.h>
#include <stddef.h>

extern const char *const np_cfg_verify_modes[];
extern const char *const np_cfg_verify_actions[];
extern const char *const np_cfg_drivers[];
extern const char *const np_cfg_host_isolations[];
extern const char *const np_cfg_cpu_offline_actions[];

struct np_config;
/* "socket_read_group" (config_access.c): a group name or number, checked
 * here, resolved when the socket is made. */
int np_config_read_group_from_json(struct np_config *n, const json_t *j,
				   char *err, size_t errlen);

#endif
