#!/usr/bin/env python3
# Recompute the checksum of numaplaced state files in place, so that a case
# in state/ reaches the check it is about instead of stopping at "checksum
# mismatch" (userspace/state/state_file.c: FNV-1a 64 of the body dumped
# with sorted keys, compact, as jansson does for these files).
#
#   tests/badinput/restamp.py state/NAME.json...
import json
import sys


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for byte in data:
        h ^= byte
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


for path in sys.argv[1:]:
    with open(path) as f:
        doc = json.load(f)
    body = json.dumps(doc["body"], sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode()
    doc["checksum"] = "fnv1a64:%016x" % fnv1a64(body)
    with open(path, "w") as f:
        f.write(json.dumps(doc, indent=1, sort_keys=True) + "\n")
