#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A flood of control-socket requests, for tests/host/faults-host.sh.

    np_flood.py SOCKET REQUESTS [THREADS] [PREFIX]

THREADS clients (16) open connection after connection, each with 1 to 40
requests pipelined, until REQUESTS have been sent in all. The mix, unlike
tests/host/socket-host.sh (a few hundred admits and releases): mostly cheap
requests in great number: status, events, release of a name nobody has,
an unknown op, a request that is not JSON, a request with data after its
JSON, a request without "op"; and a few admits of a shared workload each
released again on the same connection (the state ends as it began).
Every answer is checked against what that request must get. Besides,
some connections are rude (and send no admit): one in 16 closes right
after sending, without reading a byte (its requests are sent, their
answers not read: counted as "unread"), one in 16 sends half of its
requests (the last one cut) and closes, one in 16 connects and closes at
once.

Prints
    flood sent N answered N wrong N unread N lost N conns N rude N seconds S rps R
and, for each wrong answer (the first 10), "wrong: REQUEST -> ANSWER".
Exit 0 when every answer read was right and none was lost (a connection
closed before all its answers came, on a polite connection).
"""
import json
import random
import socket
import sys
import threading
import time

sock_path = sys.argv[1]
total = int(sys.argv[2])
nthreads = int(sys.argv[3]) if len(sys.argv) > 3 else 16
prefix = sys.argv[4] if len(sys.argv) > 4 else "fl"

lock = threading.Lock()
budget = [total]
stats = dict(sent=0, answered=0, wrong=0, unread=0, lost=0, conns=0, rude=0)
wrongs = []


def take(n):
    with lock:
        k = min(n, budget[0])
        budget[0] -= k
        return k


def expect_error(prefix_text):
    def chk(a):
        return a.get("ok") is False and str(a.get("error", "")).startswith(prefix_text)
    return chk


def make_requests(rng, tid, conn_no, n, admits):
    """n (request line, checker) pairs; admits come with their release."""
    out = []
    k = 0
    while len(out) < n:
        r = rng.random()
        if r < 0.40:
            out.append(('{"op":"status"}', lambda a: a.get("ok") is True and
                        isinstance(a.get("status", {}).get("workloads"), list)))
        elif r < 0.52:
            out.append(('{"op":"events","limit":5}',
                        lambda a: a.get("ok") is True and isinstance(a.get("events"), list)))
        elif r < 0.67:
            name = "nobody-%d-%d-%d" % (tid, conn_no, k)
            out.append((json.dumps({"op": "release", "name": name}),
                        lambda a, name=name: a.get("ok") is False and
                        a.get("error") == 'release: no workload named "%s"' % name))
        elif r < 0.74:
            out.append(('{"op":"frobnicate"}', expect_error('op: "frobnicate" is not')))
        elif r < 0.81:
            out.append(('{"op": "status", oops', expect_error("request: invalid JSON")))
        elif r < 0.87:
            out.append(('{"op":"status"} {"op":"status"}',
                        expect_error("request: data after the JSON value")))
        elif r < 0.93:
            out.append(('{"name":"x"}', expect_error("op: required field is missing")))
        elif r < 0.985 or len(out) + 2 > n or not admits:
            out.append(('[1,2,3]', expect_error("request: expected a JSON object")))
        else:
            name = "%s%d-%d-%d" % (prefix, tid, conn_no, k)
            spec = {"name": name, "qos": "LS", "containers": [{"name": "m", "cpu": "10m"}]}
            out.append((json.dumps({"op": "admit", "spec": spec}),
                        lambda a, name=name: a.get("ok") is True and
                        a.get("decision", {}).get("admitted") is True and
                        a.get("decision", {}).get("name") == name))
            out.append((json.dumps({"op": "release", "name": name}),
                        lambda a: a.get("ok") is True))
        k += 1
    return out


def dial():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(sock_path)
    return s


def count(**kw):
    with lock:
        for k, v in kw.items():
            stats[k] += v


def worker(tid):
    rng = random.Random(tid * 7919 + 1)
    conn_no = 0
    while True:
        conn_no += 1
        kind = rng.randrange(16)
        if kind == 0:  # connect and close at once
            try:
                dial().close()
            except OSError:
                pass
            count(conns=1, rude=1)
            continue
        want = rng.randint(1, 40)
        n = take(want)
        if n == 0:
            return
        reqs = make_requests(rng, tid, conn_no, n, kind > 2)
        text = "".join(q + "\n" for q, _ in reqs).encode()
        try:
            s = dial()
        except OSError as e:
            count(sent=len(reqs), lost=len(reqs), conns=1)
            print("connect: %s" % e, file=sys.stderr)
            continue
        count(conns=1, sent=len(reqs))
        if kind in (1, 2):  # send all (1) or half a line (2), read nothing
            try:
                s.sendall(text if kind == 1 else text[: max(1, len(text) // 2)])
            except OSError:
                pass
            s.close()
            count(rude=1, unread=len(reqs))
            continue
        try:
            s.sendall(text)
            f = s.makefile("rb")
            for q, chk in reqs:
                line = f.readline()
                if not line:
                    count(lost=1)
                    continue
                try:
                    a = json.loads(line)
                    good = chk(a)
                except ValueError:
                    good = False
                count(answered=1, wrong=0 if good else 1)
                if not good:
                    with lock:
                        if len(wrongs) < 10:
                            wrongs.append("wrong: %s -> %s" % (q, line.decode(errors="replace")[:300].strip()))
            f.close()
        except OSError as e:
            print("connection: %s" % e, file=sys.stderr)
        s.close()


t0 = time.monotonic()
ts = [threading.Thread(target=worker, args=(i,)) for i in range(nthreads)]
for t in ts:
    t.start()
for t in ts:
    t.join()
dt = time.monotonic() - t0
for w in wrongs:
    print(w)
print("flood sent %d answered %d wrong %d unread %d lost %d conns %d rude %d seconds %.1f rps %d" % (
    stats["sent"], stats["answered"], stats["wrong"], stats["unread"], stats["lost"],
    stats["conns"], stats["rude"], dt, stats["sent"] / dt if dt else 0))
sys.exit(0 if stats["wrong"] == 0 and stats["lost"] == 0 else 1)
