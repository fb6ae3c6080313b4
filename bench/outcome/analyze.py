#!/usr/bin/env python3
"""bench/outcome/analyze.py [--check] OUTDIR LAYOUT...

The outcome benchmark's figures from the raw slot records node.sh wrote
(OUTDIR/LAYOUT/slots.jsonl, OUTDIR/LAYOUT/start.json and, for the VM
layouts, the host client's OUTDIR/LAYOUT/raw/SLOT.redis.txt):

  OUTDIR/outcome.json   per layout and configuration, every figure as
                        {"median", "min", "max"} over the rounds, and the
                        targets with their measured values
  OUTDIR/outcome.md     the same as tables
  OUTDIR/LAYOUT-cdf.{png,svg}      redis GET latency CDF per configuration
  OUTDIR/LAYOUT-foreign.{png,svg}  foreign run time on the probe's CPUs

Figures per slot (one configuration in one round):
  redis_p50_us .. redis_max_us  redis-benchmark's percentile distribution
  run_delay_us_per_req     the redis tasks' run_delay (/proc/PID/task/*/
                           schedstat) over the window / requests
  cyclictest_other_p99_us, cyclictest_other_max_us, cyclictest_fifo_p99_us,
  cyclictest_fifo_max_us   from cyclictest's histogram (1 us buckets)
  foreign_ns_kernel        /proc/schedstat rq_cpu_time of the probe's CPUs
                           less the probe cgroup's cpu.stat usage: the time
                           every other task ran there, per second of the
                           window and per CPU (ns/s: 1,000,000 is 0.1 %)
  foreign_ns_tasks         the same from the kernel's per-task accounting:
                           the run time (/proc/TID/schedstat) of every
                           thread outside the probe allowed on the probe's
                           CPUs only; only when no thread outside the probe
                           that may run there and elsewhere ran at all in
                           the window ("loose_ran_ns" 0; else they are
                           named in "loose_ran": the figure would be a lower
                           bound)
  percpu_kthread_ns        the part of it that kernel threads ran (per-CPU
                           ones: kworker/N, ksoftirqd/N, ...); named in
                           "kthreads"
  foreign_ns_bpf           numaplace's BPF run times (np_cpu_intrude
                           user_ns + kthread_ns) over the same window, same
                           unit; null without numaplaced
  foreign_by_kind          BPF's: user/kthread ns, hardirq/softirq count
                           and ns (per second and CPU)
  device_irqs_on_probe_cpus  /proc/interrupts numbered lines on the
                           probe's CPUs over the window, less the lines the
                           kernel does not let anyone move (managed)
  probe_pages_local_pct    the probe's anonymous pages on the node of its
                           CPUs (numa_maps)
  noise_ops_per_s          stress-ng bogo ops per second, all CPU hogs
  host_*                   the VM layouts only: qemu's threads on the host
                           (client.py's OUTDIR/LAYOUT/raw/SLOT.host.jsonl,
                           their schedstat), what no guest accounting sees:
                           host_probe_vcpu_wait_us_per_req (the probe's
                           vCPU threads' run-queue wait on the host during
                           the GETs, per GET), host_main_wait_us_per_req
                           (qemu's main loop: timers, user-mode network),
                           host_probe_vcpu_busy_pct, host_main_busy_pct,
                           host_other_vcpu_busy_pct (each vCPU thread's
                           average), host_qemu_other_busy_pct (the other
                           threads together) over the window;
                           host_steal_pct: this host's steal time (when it
                           is itself a VM), % of its CPUs over the window

--check (the smoke in make check): exit 1 unless every configuration the
node ran has a record and the targets read in the kernel's files hold (no
device IRQ on the exclusive CPUs, BPF's foreign time agrees with the
kernel's, the probe's pages local, no foreign user work on the exclusive
CPUs); "ok"/"FAIL" lines and a count for NP_SUMMARY_FILE. Latencies are
never checked: under TCG they are the emulator's.
"""
import datetime
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys

CONFIG_ORDER = ["idle", "none", "cpusets", "isolated", "partition"]
LAT_FIGS = ["redis_p50_us", "redis_p99_us", "redis_p999_us", "redis_max_us",
            "cyclictest_other_p99_us", "cyclictest_fifo_max_us"]


def cpulist(s):
    out = []
    for part in str(s).split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


# ---- redis-benchmark -----------------------------------------------------------
PCT_RE = re.compile(r"^\s*([0-9.]+)% <= ([0-9.]+) milliseconds \(cumulative count (\d+)\)")


def parse_redis(text):
    """{"points": [(pct, us)], "n": requests, "p50".."max"} or None."""
    if not text:
        return None
    pts, cdf, section = [], [], None
    for line in text.splitlines():
        if line.startswith("Latency by percentile distribution"):
            section = "pct"
            continue
        if line.startswith("Cumulative distribution of latencies"):
            section = "cdf"
            continue
        m = PCT_RE.match(line)
        if m and section:
            (pts if section == "pct" else cdf).append(
                (float(m.group(1)), float(m.group(2)) * 1000.0, int(m.group(3))))
        elif section and line.strip() and not m:
            section = None if not line.startswith(" ") else section
    if not pts:
        return None
    n = max(c for _, _, c in pts)

    def at(q):
        for pct, us, _ in pts:
            if pct >= q:
                return us
        return pts[-1][1]

    both = sorted({(us, c) for _, us, c in pts + cdf})
    return {"n": n, "p50": at(50.0), "p99": at(99.0), "p999": at(99.9),
            "max": max(us for _, us, _ in pts), "steps": both}


# ---- cyclictest --------------------------------------------------------------------
def hist_pct(ct, q):
    if not ct or not ct.get("hist"):
        return None
    h = sorted((int(k), v) for k, v in ct["hist"].items())
    total = sum(v for _, v in h)
    # samples beyond the histogram (cyclictest counts them as overflows)
    # are at or below its max
    over = max(0, (ct.get("cycles") or total) - total)
    total += over
    need = q / 100.0 * total
    acc = 0
    for us, v in h:
        acc += v
        if acc >= need:
            return float(us)
    return float(ct.get("max") or h[-1][0])


# ---- one slot --------------------------------------------------------------------
def slot_figures(rec, redis_text):
    a0, a1 = rec["a0"], rec["a1"]
    cpus = cpulist(rec["probe_cpus"])
    win_s = (a1["t_ns"] - a0["t_ns"]) / 1e9
    per = win_s * max(1, len(cpus))
    f = {"round": rec["round"], "window_s": round(win_s, 3),
         "overrun_ms": rec.get("overrun_ms", 0), "probe_cpus": rec["probe_cpus"]}
    r = parse_redis(redis_text)
    if r and rec.get("redis_rc", 1) == 0:
        f.update(redis_p50_us=r["p50"], redis_p99_us=r["p99"], redis_p999_us=r["p999"],
                 redis_max_us=r["max"], redis_requests=r["n"])
        f["_steps"] = r["steps"]
    d0, d1 = a0.get("redis_exec_delay_ns"), a1.get("redis_exec_delay_ns")
    if d0 and d1 and r:
        f["run_delay_us_per_req"] = (d1[1] - d0[1]) / 1000.0 / r["n"]
    ct = rec.get("cyclictest") or {}
    for pol in ("other", "fifo"):
        c = ct.get(pol)
        if c:
            f[f"cyclictest_{pol}_p99_us"] = hist_pct(c, 99.0)
            f[f"cyclictest_{pol}_max_us"] = float(c["max"])
    # the kernel's foreign time, two ways: per CPU (rq_cpu_time less the
    # probe's usage) and per task (the threads outside the probe that may
    # run on the probe's CPUs only, complete when no other may run there)
    if a0.get("rq_cpu_ns") and a1.get("rq_cpu_ns") and a1.get("probe_usage_us") is not None:
        rq = sum(a1["rq_cpu_ns"][str(c)] - a0["rq_cpu_ns"][str(c)] for c in cpus)
        own = (a1["probe_usage_us"] - a0["probe_usage_us"]) * 1000
        f["foreign_ns_kernel"] = max(0, rq - own) / per
        f["_foreign_kernel_total_ns"] = rq - own
    p0, p1 = a0.get("pinned"), a1.get("pinned")
    if p1 is not None and p0 is not None:
        def delta(now, before):
            out = {}
            for tid, e in (now or {}).items():
                d = e[2] - (before or {}).get(tid, [0, 0, 0])[2]
                if d > 0:
                    out[tid] = (e[0], d, e[3] if len(e) > 3 else 1)
            return out
        pin = delta(p1, p0)
        loose = delta(a1.get("loose"), a0.get("loose"))
        kth = sum(d for _, d, k in pin.values() if k)
        usr = sum(d for _, d, k in pin.values() if not k)
        names = {}
        for name, d, _ in pin.values():
            base = re.sub(r"-.*$", "", name)  # kworker/1:2-events -> kworker/1:2
            names[base] = names.get(base, 0) + d
        f["percpu_kthread_ns"] = kth / per
        f["pinned_user_ns"] = usr / per
        f["kthreads"] = {k: v / per for k, v in sorted(names.items(), key=lambda x: -x[1])[:8]}
        lr = sum(d for _, d, _ in loose.values())
        f["loose_ran_ns"] = lr / per
        if lr == 0:
            # no thread outside the probe that may run there and elsewhere
            # ran at all: the pinned ones are all the foreign time there is
            f["foreign_ns_tasks"] = (kth + usr) / per
            f["_foreign_tasks_total_ns"] = kth + usr
        else:
            f["loose_ran"] = {n: d / per for n, d, _ in sorted(loose.values(), key=lambda x: -x[1])[:5]}
    if "foreign_ns_tasks" in f:
        # complete: every thread that may run there is the probe's or
        # pinned there; what is not a per-CPU kernel thread is user work
        f["foreign_ns_kernel_other"] = f["pinned_user_ns"]
    elif "foreign_ns_kernel" in f:
        f["foreign_ns_kernel_other"] = max(0.0, f["foreign_ns_kernel"] - f.get("percpu_kthread_ns", 0))
    b0, b1 = a0.get("bpf"), a1.get("bpf")
    if b0 is not None and b1 is not None:
        k0 = {e["cpu"]: e["kinds"] for e in b0}
        kinds = {"user_ns": 0, "kthread_ns": 0, "hardirq": 0, "hardirq_ns": 0,
                 "softirq": 0, "softirq_ns": 0}
        for e in b1:
            if e["cpu"] not in cpus:
                continue
            z = k0.get(e["cpu"], {})
            g = lambda k, fld: e["kinds"][k].get(fld, 0) - z.get(k, {}).get(fld, 0)
            kinds["user_ns"] += g("user", "ns")
            kinds["kthread_ns"] += g("kthread", "ns")
            kinds["hardirq"] += g("hardirq", "count")
            kinds["hardirq_ns"] += g("hardirq", "ns")
            kinds["softirq"] += g("softirq", "count")
            kinds["softirq_ns"] += g("softirq", "ns")
        total = kinds["user_ns"] + kinds["kthread_ns"]
        f["foreign_ns_bpf"] = total / per
        f["_foreign_bpf_total_ns"] = total
        f["foreign_by_kind"] = {k: v / per for k, v in kinds.items()}
    # device interrupts on the probe's CPUs
    managed = set(str(i) for i in rec.get("irqs_managed", []))
    lines, n = {}, 0
    for irq, (cnt, name) in a1.get("irqs", {}).items():
        d = cnt - a0.get("irqs", {}).get(irq, [0])[0]
        if d > 0:
            lines[f"{irq} {name}{' (managed)' if irq in managed else ''}"] = d
            if irq not in managed:
                n += d
    f["device_irqs_on_probe_cpus"] = n
    f["irq_lines"] = lines
    numa = rec.get("numa")
    if numa and numa.get("anon_pages"):
        pages = {int(k): v for k, v in numa["anon_pages"].items()}
        local_nodes = rec.get("_local_nodes") or [numa.get("last_cpu_node", 0)]
        tot = sum(pages.values())
        if tot:
            f["probe_pages_local_pct"] = 100.0 * sum(pages.get(nd, 0) for nd in local_nodes) / tot
    noise = rec.get("noise") or {}
    if noise:
        f["noise_ops_per_s"] = sum(v["ops"] / v["wall_s"] for v in noise.values() if v.get("wall_s"))
    return f


def host_figures(f, samples, cpus):
    """The emulator's threads on the host, from client.py's samples."""
    by = {x["tag"]: x for x in samples}
    if not all(t in by for t in ("0", "1", "r0", "r1")):
        return
    probe = {f"CPU {c}/TCG" for c in cpus}

    def kind(name):
        if name in probe:
            return "probe"
        if re.fullmatch(r"CPU \d+/TCG", name):
            return "vcpu"
        return "main" if name.startswith("qemu-system") else "other"

    def sums(a, b):
        out = {"probe": [0, 0, 0], "vcpu": [0, 0, 0], "main": [0, 0, 0], "other": [0, 0, 0]}
        for tid, (name, run, wait, _) in b["threads"].items():
            e = a["threads"].get(tid)
            if not e:
                continue
            k = out[kind(name)]
            k[0] += run - e[1]
            k[1] += wait - e[2]
            k[2] += 1
        return out, (b["t_ns"] - a["t_ns"]) or 1

    win, wall = sums(by["0"], by["1"])
    red, _ = sums(by["r0"], by["r1"])
    n = f.get("redis_requests")
    if n:
        f["host_probe_vcpu_wait_us_per_req"] = red["probe"][1] / 1000.0 / n
        f["host_main_wait_us_per_req"] = red["main"][1] / 1000.0 / n
    f["host_probe_vcpu_busy_pct"] = 100.0 * win["probe"][0] / wall / max(1, win["probe"][2])
    f["host_main_busy_pct"] = 100.0 * win["main"][0] / wall
    f["host_other_vcpu_busy_pct"] = 100.0 * win["vcpu"][0] / wall / max(1, win["vcpu"][2])
    f["host_qemu_other_busy_pct"] = 100.0 * win["other"][0] / wall
    s0, s1 = by["0"].get("steal_ticks"), by["1"].get("steal_ticks")
    if s0 and s1:
        hz = os.sysconf("SC_CLK_TCK")
        ticks = sum(s1[c] - s0.get(c, s1[c]) for c in s1)
        f["host_steal_pct"] = 100.0 * ticks / hz * 1e9 / wall / len(s1)


def summarize(vals):
    vals = [v for v in vals if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not vals:
        return None
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals)}


NUMERIC = ["redis_p50_us", "redis_p99_us", "redis_p999_us", "redis_max_us", "run_delay_us_per_req",
           "cyclictest_other_p99_us", "cyclictest_other_max_us", "cyclictest_fifo_p99_us",
           "cyclictest_fifo_max_us", "foreign_ns_kernel", "foreign_ns_tasks", "percpu_kthread_ns",
           "foreign_ns_kernel_other", "foreign_ns_bpf", "device_irqs_on_probe_cpus",
           "probe_pages_local_pct", "noise_ops_per_s", "window_s", "overrun_ms",
           "host_probe_vcpu_wait_us_per_req", "host_main_wait_us_per_req", "host_probe_vcpu_busy_pct",
           "host_main_busy_pct", "host_other_vcpu_busy_pct", "host_qemu_other_busy_pct", "host_steal_pct"]


def load_layout(outdir, layout):
    d = os.path.join(outdir, layout)
    start = {}
    if os.path.exists(os.path.join(d, "start.json")):
        txt = open(os.path.join(d, "start.json")).read().strip()
        start = json.loads(txt.splitlines()[0]) if txt else {}
    node_of = {}
    for part in (start.get("nodes") or "").split():
        n, cl = part.split(":")
        for c in cpulist(cl):
            node_of[c] = int(n)
    slots = []
    for line in open(os.path.join(d, "slots.jsonl")):
        line = line.strip()
        if not line:
            continue
        rec = json.loads(line)
        if rec["config"] not in ("idle", "none"):
            rec["_local_nodes"] = sorted({node_of.get(c, 0) for c in cpulist(rec["probe_cpus"])})
        text = rec.get("redis_out")
        if text is None:
            p = os.path.join(d, "raw", f"{rec['slot']}.redis.txt")
            text = open(p, errors="replace").read() if os.path.exists(p) else None
        f = slot_figures(rec, text)
        hp = os.path.join(d, "raw", f"{rec['slot']}.host.jsonl")
        if os.path.exists(hp):
            host_figures(f, [json.loads(x) for x in open(hp) if x.strip()], cpulist(rec["probe_cpus"]))
        f["config"] = rec["config"]
        f["slot"] = rec["slot"]
        slots.append(f)
    bp = os.path.join(d, "boots.json")
    if os.path.exists(bp):
        start["boots"] = json.load(open(bp))
    return start, slots


def boots_text(b):
    """What the VM run took: more than one boot when the guest hung."""
    rt = ""
    if b and b.get("host_rt") == "on":
        rt = ("; qemu's threads and the client at SCHED_RR on the host (vCPUs 1, the rest 2: "
              "run.sh --host-rt)")
    if not b or b.get("boots", 1) <= 1:
        return rt
    return rt + (f"; {b['boots']} boots: the guest hung {b['hung']} time(s) under multi-threaded TCG "
            "and was booted again at the round it had not completed (that round measured again)")


def check_targets(layout, by):
    """[(name, met, text)] for what the issue asks of this layout."""
    med = lambda c, k: (by.get(c, {}).get(k) or {}).get("median")
    out = []

    def ratio(name, c1, c2, fig, limit):
        a, b = med(c1, fig), med(c2, fig)
        if a is None or b is None or b == 0:
            out.append((name, None, f"not measured ({c1}: {a}, {c2}: {b})"))
            return
        out.append((name, a <= limit * b, f"{a:.0f} / {b:.0f} = {a / b:.2f} (target <= {limit})"))

    if layout in ("oversubscribed", "4node"):
        ratio("isolated redis p99 <= 0.7 x none's", "isolated", "none", "redis_p99_us", 0.7)
        ratio("isolated run_delay per request <= 0.15 x none's", "isolated", "none",
              "run_delay_us_per_req", 0.15)
        worse = [k for k in LAT_FIGS if med("isolated", k) is not None and med("cpusets", k) is not None
                 and med("isolated", k) > med("cpusets", k)]
        if med("isolated", "redis_p99_us") is None or med("cpusets", "redis_p99_us") is None:
            out.append(("isolated no worse than cpusets on any latency figure", None, "not measured"))
        else:
            out.append(("isolated no worse than cpusets on any latency figure", not worse,
                        "worse on: " + ", ".join(f"{k} {med('isolated', k):.0f} vs {med('cpusets', k):.0f}"
                                                 for k in worse) if worse else "no worse on "
                        + ", ".join(LAT_FIGS)))
    if layout == "uncontended":
        ratio("isolated redis p99 <= 1.5 x idle's", "isolated", "idle", "redis_p99_us", 1.5)
        ratio("isolated cyclictest SCHED_OTHER p99 <= 1.5 x idle's", "isolated", "idle",
              "cyclictest_other_p99_us", 1.5)
    return out


def kernel_ref(f):
    """The kernel's figure BPF is checked against: its per-task accounting
    where that is complete (no thread outside the probe may run on the
    probe's CPUs and elsewhere: isolated, partition), else per CPU
    (rq_cpu_time less the probe's usage). rq_cpu_time comes from
    sched_info's arrival and departure times, which this run found above
    the per-task sums by up to 0.6 % of the window where both are complete
    (see docs/outcome.md)."""
    if "_foreign_tasks_total_ns" in f:
        return f["_foreign_tasks_total_ns"]
    return f["_foreign_kernel_total_ns"]


def check_slot_targets(slots):
    """Targets every slot must meet: [(name, met, text)]."""
    out = []
    for cfgs, name in ((("isolated", "partition"), "foreign run time on the exclusive CPUs <= 0.1 % "
                        "of wall time apart from per-CPU kernel threads, every round"),):
        s = [f for f in slots if f["config"] in cfgs and "foreign_ns_kernel_other" in f]
        if not s:
            out.append((name, None, "not measured"))
            continue
        worst = max(s, key=lambda f: f["foreign_ns_kernel_other"])
        basis = "per-task accounting" if "foreign_ns_tasks" in worst else "per-CPU accounting"
        out.append((name, worst["foreign_ns_kernel_other"] <= 1e6,
                    f"worst {worst['foreign_ns_kernel_other'] / 1e7:.3f} % ({basis}; per CPU "
                    f"{worst.get('foreign_ns_kernel', 0) / 1e7:.3f} % all told; {worst['config']} round "
                    f"{worst['round']}); per-CPU kernel threads {worst.get('percpu_kthread_ns', 0) / 1e7:.3f} %: "
                    + ", ".join(f"{k} {v / 1e7:.3f} %" for k, v in list(worst.get('kthreads', {}).items())[:4])))
    s = [f for f in slots if f["config"] in ("isolated", "partition")]
    if s:
        bad = [f for f in s if f["device_irqs_on_probe_cpus"] > 0]
        out.append(("0 device IRQs on the exclusive CPUs except managed ones (isolated, partition)",
                    not bad, "; ".join(f"{f['config']} round {f['round']}: {f['irq_lines']}" for f in bad[:3])
                    or "0 in every round; lines seen: "
                    + ", ".join(sorted({k for f in s for k in f["irq_lines"]})) or "none"))
    s = [f for f in slots if "foreign_ns_bpf" in f and ("_foreign_kernel_total_ns" in f
                                                         or "_foreign_tasks_total_ns" in f)]
    if s:
        bad, gaps = [], []
        for f in s:
            k = kernel_ref(f)
            b = f["_foreign_bpf_total_ns"]
            gaps.append((abs(b - k) / max(abs(k), 2e6), f, k))
            if abs(b - k) > max(0.1 * abs(k), 2e6):
                bad.append(f)
        _, worst, k = max(gaps, key=lambda g: g[0])
        out.append(("BPF foreign time within 10 % (or 2 ms) of the kernel's, every round with numaplaced",
                    not bad, f"{len(s) - len(bad)} of {len(s)} rounds; largest gap "
                    f"{(worst['_foreign_bpf_total_ns'] - k) / 1e6:+.1f} ms on {k / 1e6:.1f} ms "
                    f"({worst['config']} round {worst['round']}, against the kernel's "
                    f"{'per-task' if '_foreign_tasks_total_ns' in worst else 'per-CPU'} accounting)"))
    s = [f for f in slots if f["config"] in ("cpusets", "isolated", "partition") and "probe_pages_local_pct" in f]
    if s:
        worst = min(s, key=lambda f: f["probe_pages_local_pct"])
        out.append(("the probe's pages >= 99 % on its node under numaplace", worst["probe_pages_local_pct"] >= 99.0,
                    f"lowest {worst['probe_pages_local_pct']:.2f} % ({worst['config']} round {worst['round']})"))
    return out


def noise_target(by, cpus_all, cpus_probe):
    a = (by.get("isolated", {}).get("noise_ops_per_s") or {}).get("median")
    b = (by.get("none", {}).get("noise_ops_per_s") or {}).get("median")
    if a is None or b is None:
        return ("noise throughput under isolated >= 95 % of none's scaled by the CPUs left to it", None,
                "not measured")
    scale = (cpus_all - cpus_probe) / cpus_all
    return ("noise throughput under isolated >= 95 % of none's scaled by the CPUs left to it",
            a >= 0.95 * b * scale,
            f"{a:.0f} ops/s against {b:.0f} x {cpus_all - cpus_probe}/{cpus_all} = {b * scale:.0f} "
            f"({a / (b * scale):.2f})")


# ---- output -------------------------------------------------------------------------
def fmt(s, k, scale=1.0, nd=0):
    v = s.get(k)
    if not v:
        return "-"
    m, lo, hi = v["median"] * scale, v["min"] * scale, v["max"] * scale
    return f"{m:.{nd}f} ({lo:.{nd}f}-{hi:.{nd}f})"


def table(layout, by):
    cols = [("redis p50 us", "redis_p50_us", 1, 0), ("p99", "redis_p99_us", 1, 0),
            ("p99.9", "redis_p999_us", 1, 0), ("max", "redis_max_us", 1, 0),
            ("run_delay us/req", "run_delay_us_per_req", 1, 1),
            ("cyclictest OTHER p99 us", "cyclictest_other_p99_us", 1, 0),
            ("FIFO max us", "cyclictest_fifo_max_us", 1, 0),
            ("foreign, kernel per CPU %", "foreign_ns_kernel", 1e-7, 3),
            ("foreign, kernel per task %", "foreign_ns_tasks", 1e-7, 3),
            ("of it per-CPU kthreads %", "percpu_kthread_ns", 1e-7, 3),
            ("foreign, BPF %", "foreign_ns_bpf", 1e-7, 3),
            ("device IRQs", "device_irqs_on_probe_cpus", 1, 0),
            ("pages local %", "probe_pages_local_pct", 1, 1),
            ("noise ops/s", "noise_ops_per_s", 1, 0)]
    lines = ["| configuration | " + " | ".join(c[0] for c in cols) + " |",
             "|---|" + "---|" * len(cols)]
    for c in CONFIG_ORDER:
        if c in by:
            lines.append(f"| {c} | " + " | ".join(fmt(by[c], k, sc, nd) for _, k, sc, nd in cols) + " |")
    return "\n".join(lines)


def host_table(by):
    """The emulator's threads on the host per configuration (VM layouts)."""
    cols = [("probe vCPU thread's host run-queue wait us/GET", "host_probe_vcpu_wait_us_per_req", 1, 1),
            ("qemu main loop's wait us/GET", "host_main_wait_us_per_req", 1, 1),
            ("probe vCPU thread busy %", "host_probe_vcpu_busy_pct", 1, 1),
            ("other vCPU threads busy %", "host_other_vcpu_busy_pct", 1, 1),
            ("main loop busy %", "host_main_busy_pct", 1, 1),
            ("qemu's other threads busy %", "host_qemu_other_busy_pct", 1, 1),
            ("this host's steal %", "host_steal_pct", 1, 1)]
    if not any(by[c].get("host_main_busy_pct") for c in by):
        return []
    lines = ["The emulator's threads on the host (client.py's samples of qemu's schedstat), "
             "what no guest accounting sees:", "",
             "| configuration | " + " | ".join(c[0] for c in cols) + " |", "|---|" + "---|" * len(cols)]
    for c in CONFIG_ORDER:
        if c in by:
            lines.append(f"| {c} | " + " | ".join(fmt(by[c], k, sc, nd) for _, k, sc, nd in cols) + " |")
    return lines + [""]


def plots(outdir, layout, slots):
    if not shutil.which("gnuplot"):
        return []
    made = []
    # pooled CDF: at each latency x, the share of all rounds' requests <= x
    data = os.path.join(outdir, f"{layout}-cdf.dat")
    with open(data, "w") as f:
        idx = 0
        names = []
        for c in CONFIG_ORDER:
            runs = [s["_steps"] for s in slots if s["config"] == c and s.get("_steps")]
            if not runs:
                continue
            xs = sorted({us for steps in runs for us, _ in steps})
            tot = sum(max(cnt for _, cnt in steps) for steps in runs)
            f.write(f"# {c}\n")
            for x in xs:
                below = 0
                for steps in runs:
                    below += max([cnt for us, cnt in steps if us <= x] or [0])
                f.write(f"{x / 1000.0:.4f} {100.0 * below / tot:.4f}\n")
            f.write("\n\n")
            names.append((idx, c))
            idx += 1
    fore = os.path.join(outdir, f"{layout}-foreign.dat")
    with open(fore, "w") as f:
        for c in CONFIG_ORDER:
            s = [x for x in slots if x["config"] == c]
            if not s:
                continue
            med = lambda k: statistics.median([x.get(k) or 0 for x in s]) / 1e7
            # no numaplaced, no BPF figure: NaN, which gnuplot leaves out
            bpf = f"{med('foreign_ns_bpf'):.5f}" if any("foreign_ns_bpf" in x for x in s) else "NaN"
            f.write(f"{c} {med('foreign_ns_kernel_other'):.5f} {med('percpu_kthread_ns'):.5f} {bpf}\n")
    for term, ext in (("pngcairo size 900,560", "png"), ("svg size 900,560", "svg")):
        cdf = os.path.join(outdir, f"{layout}-cdf.{ext}")
        plot = ", ".join(f"'{data}' index {i} with steps lw 2 title '{c}'" for i, c in names)
        script = (f"set terminal {term}\nset output '{cdf}'\n"
                  f"set title 'redis GET latency, {layout} layout (all rounds pooled)'\n"
                  "set logscale x\nset xlabel 'latency (ms, log scale)'\nset ylabel 'requests at or below (%)'\n"
                  "set key bottom right\nset grid\nset yrange [0:100]\n"
                  f"plot {plot}\n")
        fg = os.path.join(outdir, f"{layout}-foreign.{ext}")
        script += (f"set output '{fg}'\nunset logscale x\nset title 'time other tasks ran on the probe''s CPUs, "
                   f"{layout} layout (median of rounds)'\nset ylabel '% of each CPU''s wall time'\n"
                   "set xlabel ''\nset style data histograms\nset style histogram rowstacked\n"
                   "set style fill solid 0.8 border -1\nset boxwidth 0.6\nset key top right\nset autoscale y\n"
                   "set yrange [0:*]\n"
                   f"plot '{fore}' using 2:xtic(1) title 'kernel: user tasks and other threads', "
                   f"'' using 3 title 'kernel: per-CPU kernel threads', "
                   f"'' using ($4) with points pt 7 ps 1.5 title 'numaplace BPF (user + kthread)'\n")
        r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
        if r.returncode == 0:
            made += [cdf, fg]
        else:
            print(f"analyze.py: gnuplot: {r.stderr.strip()[:300]}", file=sys.stderr)
    return made


# What --check holds every run to: behaviour read in the kernel's files,
# never a latency (TCG timings are the emulator's).
CHECKED = ("0 device IRQs on the exclusive CPUs", "BPF foreign time within",
           "the probe's pages >= 99 %", "foreign run time on the exclusive CPUs")


def check(result, want_configs):
    """ok/FAIL lines for the smoke; returns the failure count."""
    npass = nfail = 0

    def line(ok, what):
        nonlocal npass, nfail
        print(("ok   " if ok else "FAIL ") + what)
        npass, nfail = npass + ok, nfail + (not ok)

    for layout, lr in result["layouts"].items():
        have = set(lr["configs"])
        for c in want_configs.get(layout, []):
            line(c in have, f"{layout}: a record of configuration {c}")
        for t in lr["targets"]:
            if t["target"].startswith(CHECKED):
                line(t["met"] is True, f"{layout}: {t['target']}: {t['measured']}")
    print(f"outcome-check: {npass} passed, {nfail} failed")
    summary = os.environ.get("NP_SUMMARY_FILE")
    if summary:
        with open(summary, "a") as f:
            f.write(f"outcome-check {npass} {nfail}\n")
    return nfail


def main():
    args = sys.argv[1:]
    do_check = "--check" in args
    args = [a for a in args if a != "--check"]
    if len(args) < 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    sys.argv = [sys.argv[0]] + args
    outdir = sys.argv[1]
    result = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
              "machine": f"{platform.node()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}",
              "layouts": {}}
    md = [f"# numaplace outcome benchmark, {result['date'][:16].replace('T', ' ')}", "",
          f"Host: {result['machine']}. Figures: median over the rounds (min-max). Foreign time: % of each "
          "of the probe's CPUs' wall time that other tasks ran there (idle and none: every CPU the probe "
          "may use). TCG timings are the emulator's: compare configurations within a layout only.", ""]
    all_ok = True
    for layout in sys.argv[2:]:
        start, slots = load_layout(outdir, layout)
        by = {}
        for c in CONFIG_ORDER:
            s = [f for f in slots if f["config"] == c]
            if not s:
                continue
            by[c] = {k: summarize([f.get(k) for f in s]) for k in NUMERIC}
            by[c]["rounds"] = len(s)
        targets = check_targets(layout, by) + check_slot_targets(slots)
        ncpu = len(cpulist(start.get("node_cpus", ""))) or 1
        pcpu = len(cpulist(next((f["probe_cpus"] for f in slots if f["config"] == "isolated"), ""))) or 1
        if "none" in by and "isolated" in by:
            targets.append(noise_target(by, ncpu, pcpu))
        pics = plots(outdir, layout, slots)
        result["layouts"][layout] = {
            "start": start,
            "configs": {c: {k: v for k, v in by[c].items() if v is not None} for c in by},
            "targets": [{"target": n, "met": m, "measured": t} for n, m, t in targets],
            "slots": [{k: v for k, v in f.items() if not k.startswith("_")} for f in slots],
            "pictures": [os.path.basename(p) for p in pics]}
        md += [f"## {layout}", "",
               f"{start.get('online', '?')} online CPUs (nodes {start.get('nodes', '?').strip()}), "
               f"probe CPUs under numaplace: {next((f['probe_cpus'] for f in slots if f['config'] == 'isolated'), '-')}, "
               f"{max([by[c]['rounds'] for c in by] or [0])} round(s), kernel {start.get('kernel', '?')}; hogs "
               f"{start.get('hogs', {})}" + (f", noise {start['noise']}" if start.get("noise") else "")
               + boots_text(start.get("boots")), "", table(layout, by), ""] + host_table(by) + [
               "| target | met | measured |", "|---|---|---|"]
        for n, m, t in targets:
            md.append(f"| {n} | {'met' if m else ('not met' if m is not None else '-')} | {t} |")
            if m is False:
                all_ok = False
        md += [""] + [f"![{os.path.basename(p)}]({os.path.basename(p)})" for p in pics if p.endswith(".png")] + [""]
    with open(os.path.join(outdir, "outcome.json"), "w") as f:
        json.dump(result, f, indent=1, sort_keys=False)
    with open(os.path.join(outdir, "outcome.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    print(f"outcome: {os.path.join(outdir, 'outcome.json')}, outcome.md and the pictures; "
          f"{'every target measured is met' if all_ok else 'a target is not met (see above)'}")
    if do_check:
        want = {l: (r["start"].get("configs") or "").split() for l, r in result["layouts"].items()}
        return 1 if check(result, want) else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
