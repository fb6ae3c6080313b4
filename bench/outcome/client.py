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
same path and "WARMED SLOT". It ends when qemu closes the socket. Exit 0; 1 when the
socket never appeared (900 s: qemu starts once its root is
assembled, which takes minutes on a busy host) or a request line was
malformed.
"""
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
    buf = b""
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
        m = re.fullmatch(r"CLIENT (\d+) (\d+)", line)
        if not m:
            # the guest's console chatter never comes here; anything else
            # on this port is a protocol error worth seeing
            print(f"client.py: unexpected line from the guest: {line!r}", file=sys.stderr)
            continue
        slot, n = m.group(1), m.group(2)
        out = os.path.join(outdir, f"{slot}.redis.txt")
        with open(out, "wb") as o:
            rc = subprocess.call(
                ["redis-benchmark", "-h", "127.0.0.1", "-p", port, "-n", n, "-c", "1",
                 "-t", "get", "-r", keys, "--precision", "3"],
                stdout=o, stderr=subprocess.STDOUT)
        f.write(f"DONE {slot} {rc}\n".encode())


if __name__ == "__main__":
    sys.exit(main())
