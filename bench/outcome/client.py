#!/usr/bin/env python3
"""bench/outcome/client.py SOCKET PORT OUTDIR

The outcome benchmark's redis client for the VM layouts, on the host:
off every guest CPU, so it is off the probe's CPUs and off the noise in
every configuration. It connects to the guest's control serial port (qemu
-serial unix:SOCKET), and for each line "CLIENT SLOT N" from the guest's
node.sh runs

    redis-benchmark -h 127.0.0.1 -p PORT -n N -c 1 -t get -r KEYS --precision 3

against the guest's redis (user-mode network, host port PORT forwarded to
the guest's 6379), keeps its output as OUTDIR/SLOT.redis.txt and answers
"DONE SLOT RC"; "WARM SLOT" (before the window) gets 20 PINGs along the
same path and "WARMED SLOT". "HOST SLOT TAG" (the window's start, 0, and end, 1)
samples qemu's threads (the process whose -serial names SOCKET): each
thread's name and /proc/PID/task/TID/schedstat (run ns, run-queue wait
ns, timeslices), also right before and after each redis-benchmark, one
JSON line per sample in OUTDIR/SLOT.host.jsonl (tags 0, r0, r1, 1): what
the emulator's threads ran and waited on the host, which no guest
accounting sees. It ends when qemu closes the socket. Exit 0; 1 when the
socket never appeared (900 s: qemu starts once its root is
assembled, which takes minutes on a busy host) or a request line was
malformed.
"""
import json
import os
import re
import socket
import subprocess
import sys
import time


def connect(path, wait_s=900.0):
    deadline = time.monotonic() + wait_s
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            return s
        except OSError:
            s.close()
            if time.monotonic() > deadline:
                return None
            time.sleep(0.2)


def find_qemu(path):
    """The qemu process whose control serial port is PATH, or None."""
    want = f"unix:{path},".encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/comm") as c:
                if not c.read().startswith("qemu-system"):
                    continue  # timeout(1) and the shells have its arguments too
            with open(f"/proc/{pid}/cmdline", "rb") as c:
                if want in c.read():
                    return int(pid)
        except OSError:
            continue
    return None


def host_sample(pid, slot, tag, outdir):
    """One sample of qemu's threads into OUTDIR/SLOT.host.jsonl."""
    threads = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as c:
                name = c.read().strip()
            with open(f"/proc/{pid}/task/{tid}/schedstat") as c:
                run, wait, slices = (int(x) for x in c.read().split()[:3])
        except (OSError, ValueError):
            continue
        threads[tid] = [name, run, wait, slices]
    # this host's own CPUs: when it is itself a virtual machine, the time
    # its hypervisor ran something else (steal, /proc/stat's 8th field, in
    # USER_HZ ticks)
    steal = {}
    try:
        with open("/proc/stat") as c:
            for ln in c:
                p = ln.split()
                if re.fullmatch(r"cpu\d+", p[0]) and len(p) > 8:
                    steal[p[0][3:]] = int(p[8])
    except (OSError, ValueError):
        pass
    rec = {"tag": tag, "t_ns": time.monotonic_ns(), "threads": threads, "steal_ticks": steal}
    with open(os.path.join(outdir, f"{slot}.host.jsonl"), "a") as o:
        o.write(json.dumps(rec) + "\n")


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    path, port, outdir = sys.argv[1], sys.argv[2], sys.argv[3]
    keys = os.environ.get("OUTCOME_KEYS", "20000")
    os.makedirs(outdir, exist_ok=True)
    s = connect(path)
    if s is None:
        print(f"client.py: no control socket at {path}", file=sys.stderr)
        return 1
    f = s.makefile("rwb", buffering=0)
    buf, qpid = b"", None
    while True:
        chunk = f.read(1)
        if not chunk:
            return 0
        if chunk not in (b"\n", b"\r"):
            buf += chunk
            continue
        line, buf = buf.decode(errors="replace").strip(), b""
        if not line:
            continue
        w = re.fullmatch(r"WARM (\d+)", line)
        if w:
            # requests along the path before the window, not measured
            subprocess.call(["redis-benchmark", "-h", "127.0.0.1", "-p", port, "-n", "20",
                             "-c", "1", "-t", "ping"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
            f.write(f"WARMED {w.group(1)}\n".encode())
            continue
        h = re.fullmatch(r"HOST (\d+) (\d+)", line)
        if h:
            qpid = qpid or find_qemu(path)
            if qpid:
                host_sample(qpid, h.group(1), h.group(2), outdir)
            continue
        m = re.fullmatch(r"CLIENT (\d+) (\d+)", line)
        if not m:
            # the guest's console chatter never comes here; anything else
            # on this port is a protocol error worth seeing
            print(f"client.py: unexpected line from the guest: {line!r}", file=sys.stderr)
            continue
        slot, n = m.group(1), m.group(2)
        out = os.path.join(outdir, f"{slot}.redis.txt")
        qpid = qpid or find_qemu(path)
        if qpid:
            host_sample(qpid, slot, "r0", outdir)
        with open(out, "wb") as o:
            rc = subprocess.call(
                ["redis-benchmark", "-h", "127.0.0.1", "-p", port, "-n", n, "-c", "1",
                 "-t", "get", "-r", keys, "--precision", "3"],
                stdout=o, stderr=subprocess.STDOUT)
        if qpid:
            host_sample(qpid, slot, "r1", outdir)
        f.write(f"DONE {slot} {rc}\n".encode())


if __name__ == "__main__":
    sys.exit(main())
