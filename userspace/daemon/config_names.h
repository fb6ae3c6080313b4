/* SPDX-License-Identifier: Apache-2.0 */
/* The names of the configuration's enumerations (config.c), shared with
 * the writer of the effective configuration (config_json.c). */
#ifndef NP_DAEMON_CONFIG_NAMES_H
#define NP_DAEMON_CONFIG_NAMES_H

extern const char *const np_cfg_verify_modes[];
extern const char *const np_cfg_verify_actions[];
extern const char *const np_cfg_drivers[];
extern const char *const np_cfg_host_isolations[];
extern const char *const np_cfg_cpu_offline_actions[];

#endif
