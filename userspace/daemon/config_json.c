// SPDX-License-Identifier: Apache-2.0
/* The effective numaplaced configuration as JSON (numaplaced
 * --check-config prints it). */
#include "numaplace/config.h"
#include "daemon/config_names.h"
#include "numaplace/oci.h"

json_t *np_config_to_json(const struct np_config *c)
{
	json_t *sh = json_array(), *v, *out;
	for (int i = 0; i < c->nshared; i++)
		json_array_append_new(sh, json_string(c->shared_cgroups[i]));
	v = json_pack("{s:s,s:i,s:i,s:i,s:i,s:i,s:s,s:s,s:f,s:I,s:I,s:i}",
		      "enabled", np_cfg_verify_modes[c->verify.enabled],
		      "max_workloads", (int)c->verify.max_workloads,
		      "tick_hz", (int)c->verify.tick_hz, "settle_ms",
		      (int)c->verify.settle_ms, "grace_ms",
		      (int)c->verify.grace_ms, "sample_burst",
		      (int)c->verify.sample_burst, "on_intrusion",
		      np_cfg_verify_actions[c->verify.on_intrusion],
		      "on_remote_memory",
		      np_cfg_verify_actions[c->verify.on_remote_memory],
		      "remote_fault_ratio", c->verify.remote_fault_ratio,
		      "min_fault_pages", (json_int_t)c->verify.min_fault_pages,
		      "outside_mems_bytes",
		      (json_int_t)c->verify.outside_mems_bytes,
		      "migrate_interval_s", (int)c->verify.migrate_interval_s);
	out = json_pack("{s:o,s:s,s:f,s:s,s:s,s:s,s:o,s:b,s:s,s:s,s:s,s:s,s:b,s:o}",
			 "node_policy", np_policy_to_json(&c->policy),
			 "topology", c->topology, "reconcile_period_s",
			 c->reconcile_period_ms / 1000.0, "cgroup_driver",
			 np_cfg_drivers[c->driver], "cgroup_root",
			 c->cgroup_root, "cgroup_parent", c->cgroup_parent,
			 "shared_cgroups", sh, "create_cgroups",
			 c->create_cgroups, "spec_dir", c->spec_dir,
			 "state_dir", c->state_dir, "socket", c->socket_path,
			 "bpf_pin_path", c->bpf_pin_path, "fake_cgroup_root",
			 c->fake_cgroup_root, "verify", v);
	if (out &&
	    (json_object_set_new(out, "host_isolation",
				 json_string(np_cfg_host_isolations[c->host_isolation])) ||
	     json_object_set_new(out, "on_cpu_offline",
				 json_string(np_cfg_cpu_offline_actions[c->on_cpu_offline])) ||
	     json_object_set_new(out, "cpu_online_file",
				 json_string(c->cpu_online_file)) ||
	     json_object_set_new(out, "metrics",
				 json_pack("{s:s}", "listen",
					   c->metrics_listen)) ||
	     json_object_set_new(
		     out, "export",
		     json_pack("{s:s,s:s,s:s}", "node_name",
			       c->export_.node_name, "nrt_file",
			       c->export_.nrt_file, "koordinator_file",
			       c->export_.koordinator_file)) ||
	     json_object_set_new(out, "defrag",
				 json_pack("{s:b,s:i}", "auto",
					   c->defrag.auto_, "max_moves",
					   c->defrag.max_moves)) ||
	     json_object_set_new(
		     out, "oci_hook",
		     json_pack("{s:i,s:s,s:s,s:o}", "timeout_ms",
			       (int)c->oci_hook.timeout_ms, "on_failure",
			       np_oci_failure_name(c->oci_hook.on_failure),
			       "log_file", c->oci_hook.log_file, "policy",
			       np_oci_policy_to_json(&c->oci_hook.policy))) ||
	     json_object_set_new(out, "socket_read_group",
				 json_string(c->socket_read_group)) ||
	     json_object_set_new(out, "reconcile_full_scan_s",
				 json_real(c->full_scan_ms / 1000.0)) ||
	     json_object_set_new(out, "run_dir", json_string(c->run_dir)) ||
	     json_object_set_new(out, "runtime_dir",
				 json_string(c->runtime_dir)) ||
	     json_object_set_new(out, "placement_files",
				 json_boolean(c->placement_files)) ||
	     json_object_set_new(out, "be_suppress",
				 np_suppress_config_to_json(&c->be_suppress)) ||
	     json_object_set_new(out, "proc_stat_file",
				 json_string(c->proc_stat_file)))) {
		json_decref(out);
		return NULL;
	}
	return out;
}
