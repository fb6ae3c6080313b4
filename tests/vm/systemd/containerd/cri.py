#!/usr/bin/python3
# A minimal CRI v1 client for 95-containerd.sh (issue 31): the messages it
# needs encoded by hand as protobuf (field numbers of cri-api v0.25.0's
# api.proto, shared/reference/containerd_nri_v01.md section 3) and sent
# with Debian's python3-grpcio as raw bytes, no generated code. One
# process runs the whole pod (python's start costs about 20 s under TCG):
#   cri.py NUMAPLACE SOCKET CGROUP_PARENT NAME
# a pod NAME (host network, CGROUP_PARENT, numaplace.io/ annotations
# asking LSE for 2 CPUs) and a Guaranteed 2-CPU container whose first
# action writes its Cpus_allowed_list to /out/cpus; prints what it saw,
# what numaplaced placed and the container cgroup's effective cpuset, then
# stops and removes both and prints what numaplaced still has.
import grpc
import json
import subprocess
import sys
import time


def varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])


def key(field, wire):
    return varint((field << 3) | wire)


def s(field, v):  # string, bytes or message
    v = v.encode() if isinstance(v, str) else v
    return key(field, 2) + varint(len(v)) + v


def i(field, n):  # non-negative varint
    return key(field, 0) + varint(n)


def m(field, d):  # map<string, string>
    return b"".join(s(field, s(1, k) + s(2, v)) for k, v in d.items())


def first_string(b):  # the response's field 1 (an id)
    n, p, sh = 0, 1, 0
    while True:
        c = b[p]
        p += 1
        n |= (c & 0x7F) << sh
        sh += 7
        if not c & 0x80:
            return b[p:p + n].decode()


ch = grpc.insecure_channel("unix:///run/containerd/containerd.sock")


def call(method, req):
    t = time.time()
    r = ch.unary_unary("/runtime.v1.RuntimeService/" + method,
                       request_serializer=None,
                       response_deserializer=None)(req, timeout=300)
    print("time %s %.2f" % (method, time.time() - t), flush=True)
    return r


def workloads():
    out = subprocess.check_output([sys.argv[1], "status", "--json",
                                   "--socket", sys.argv[2]])
    return json.loads(out)["workloads"]


ann = {"numaplace.io/qos": "LSE", "numaplace.io/cpus": "2",
       "numaplace.io/workload": "ctrd-web"}
meta = s(1, sys.argv[4]) + s(2, "uid-" + sys.argv[4]) + s(3, "default") + i(4, 0)
node_net = s(2, s(1, i(1, 2)))  # security_context.namespace_options.network = NODE
sandbox_cfg = s(1, meta) + m(7, ann) + s(8, s(1, sys.argv[3]) + node_net)
sb = first_string(call("RunPodSandbox", s(1, sandbox_cfg)))
print("sandbox", sb, flush=True)
# the kubelet's encoding of 2 CPUs: period 100000, quota 200000, shares 2048
res = i(1, 100000) + i(2, 200000) + i(3, 2048)
cfg = (s(1, s(1, "main")) + s(2, s(1, "docker.io/library/npbox:1"))
       + s(3, "/bin/busybox") + s(4, "sh") + s(4, "-c")
       + s(4, "grep Cpus_allowed_list /proc/self/status >/out/cpus; "
              "exec sleep 1000000")
       + s(7, s(1, "/out") + s(2, "/out")) + s(15, s(1, res)))
cid = first_string(call("CreateContainer", s(1, sb) + s(2, cfg)
                        + s(3, sandbox_cfg)))
print("container", cid, flush=True)
call("StartContainer", s(1, cid))
for _ in range(600):
    try:
        print("saw", open("/out/cpus").read().split()[1], flush=True)
        break
    except (OSError, IndexError):
        time.sleep(0.2)
w = [x for x in workloads() if x.get("container_id") == cid]
print("placed", w[0]["cpuset"] if w else "none",
      w[0]["cgroup"] if w else "none", flush=True)
print("pause-placed", len([x for x in workloads()
                           if x.get("container_id") == sb]), flush=True)
if w:
    eff = open("/sys/fs/cgroup%s/cpuset.cpus.effective" % w[0]["cgroup"])
    print("effective", eff.read().strip(), flush=True)
call("StopContainer", s(1, cid) + i(2, 0))
call("RemoveContainer", s(1, cid))
call("StopPodSandbox", s(1, sb))
call("RemovePodSandbox", s(1, sb))
print("after", len([x for x in workloads() if x.get("container_id") == cid]),
      flush=True)
