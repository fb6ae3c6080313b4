#!/usr/bin/python3
# A minimal CRI v1 client for 95-containerd.sh (issue 31): the messages it
# needs encoded by hand as protobuf (field numbers of cri-api v0.25.0's
# api.proto, shared/reference/containerd_nri_v01.md section 3) and sent
# with Debian's python3-grpcio as raw bytes, no generated code.
#
# One process serves the whole scenario (python's start costs about 20 s
# under TCG): it reads one JSON command a line on stdin and answers one
# JSON line on stdout, {"ok": true, ...} or {"ok": false, "error": TEXT}
# (a gRPC error: containerd's message). Commands:
#   {"op": "pod", "name": N, "parent": CGROUP_PARENT, "ann": {...}}
#       a host-network pod sandbox -> {"id": SANDBOX}
#   {"op": "run", "pod": N, "name": C, "res": [PERIOD, QUOTA, SHARES],
#    "out": FILE}
#       a busybox container of pod N whose first action writes its
#       Cpus_allowed_list to FILE (under /out, mounted), then sleeps;
#       created and started -> {"id": ID} (a failed start: ok false, id)
#   {"op": "stop" | "rm" | "stoppod" | "rmpod", "id": ID}
#   {"op": "ping"}  Version, retried for up to 60 s (after a restart)
import grpc
import json
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


def call(method, req, timeout=300):
    return ch.unary_unary("/runtime.v1.RuntimeService/" + method,
                          request_serializer=None,
                          response_deserializer=None)(req, timeout=timeout)


node_net = s(2, s(1, i(1, 2)))  # namespace_options.network = NODE
pods = {}  # name -> (sandbox id, sandbox config)


def pod(c):
    meta = s(1, c["name"]) + s(2, "uid-" + c["name"]) + s(3, "default") + i(4, 0)
    cfg = (s(1, meta) + m(7, c.get("ann", {}))
           + s(8, s(1, c["parent"]) + node_net))
    sb = first_string(call("RunPodSandbox", s(1, cfg)))
    pods[c["name"]] = (sb, cfg)
    return {"id": sb}


def run(c):
    sb, sbcfg = pods[c["pod"]]
    period, quota, shares = c["res"]
    res = b""
    for f, v in ((1, period), (2, quota), (3, shares)):
        if v:
            res += i(f, v)
    cfg = (s(1, s(1, c["name"])) + s(2, s(1, "docker.io/library/npbox:1"))
           + s(3, "/bin/busybox") + s(4, "sh") + s(4, "-c")
           + s(4, "grep Cpus_allowed_list /proc/self/status >%s; "
                  "exec sleep 1000000" % c["out"])
           + s(7, s(1, "/out") + s(2, "/out")) + s(15, s(1, res)))
    cid = first_string(call("CreateContainer", s(1, sb) + s(2, cfg)
                            + s(3, sbcfg)))
    try:
        call("StartContainer", s(1, cid))
    except grpc.RpcError as e:
        return {"ok": False, "id": cid, "error": e.details()}
    return {"id": cid}


def ping(c):
    for _ in range(120):
        try:
            call("Version", b"", timeout=5)
            return {}
        except grpc.RpcError:
            time.sleep(0.5)
    return {"ok": False, "error": "no answer to Version for 60 s"}


ops = {
    "pod": pod,
    "run": run,
    "ping": ping,
    "stop": lambda c: call("StopContainer", s(1, c["id"]) + i(2, 0)) and {},
    "rm": lambda c: call("RemoveContainer", s(1, c["id"])) and {},
    "stoppod": lambda c: call("StopPodSandbox", s(1, c["id"])) and {},
    "rmpod": lambda c: call("RemovePodSandbox", s(1, c["id"])) and {},
}

print(json.dumps({"ok": True, "ready": True}), flush=True)
for line in sys.stdin:
    c = json.loads(line)
    t = time.time()
    try:
        out = ops[c["op"]](c) or {}
    except grpc.RpcError as e:
        out = {"ok": False, "error": e.details()}
    out.setdefault("ok", True)
    print(json.dumps(dict(time=round(time.time() - t, 2), **out)), flush=True)
