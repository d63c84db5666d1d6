#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Was the machine idle while the benchmark ran?

    cpuwatch.py ROOTPID OUT.json

Every second, until SIGTERM/SIGINT or until ROOTPID exits, the CPU time of
every user process (utime + stime) is read from /proc and split in two:
ROOTPID and its descendants (the benchmark) and everything else (other
users of the machine). Kernel threads are left out: they do the
benchmark's own network work too. A process that starts and ends between
two samples is missed (what its parent reaps is not counted: that would
count again the children seen alive), so the figure for the others is a
lower bound. OUT gets the totals; the report says the run was idle only
if the others used next to nothing.
"""
import json
import os
import signal
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")


def procs():
    """{pid: (ppid, cpu seconds)} of user processes"""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                s = f.read()
        except OSError:
            continue
        # the command may hold spaces and parentheses: fields follow the last ')'
        rest = s[s.rindex(")") + 2:].split()
        ppid, flags = int(rest[1]), int(rest[6])
        if flags & 0x00200000:  # PF_KTHREAD
            continue
        out[int(d)] = (ppid, (int(rest[11]) + int(rest[12])) / HZ)
    return out


def tree(ps, root):
    ours = set()
    for pid in ps:
        p, seen = pid, 0
        while p and p in ps and seen < 64:
            if p == root or p in ours:
                ours.add(pid)
                break
            p, seen = ps[p][0], seen + 1
    return ours


def main():
    root, out = int(sys.argv[1]), sys.argv[2]
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
    start = time.monotonic()
    load0 = os.getloadavg()
    prev = procs()
    ours_s = others_s = 0.0
    by_name = {}
    per_second = []
    while not stop and os.path.exists("/proc/%d" % root):
        t0 = time.monotonic()
        time.sleep(1)
        cur = procs()
        mine = tree(cur, root)
        o = x = 0.0
        for pid, (_, cpu) in cur.items():
            # a process new since the last sample used all of its time now
            d = cpu - prev[pid][1] if pid in prev else cpu
            if d <= 0:
                continue
            if pid in mine:
                o += d
            else:
                x += d
                n = comm(pid)
                by_name[n] = by_name.get(n, 0) + d
        dt = time.monotonic() - t0
        ours_s += o
        others_s += x
        per_second.append(x / dt)
        prev = cur
    wall = time.monotonic() - start
    per_second.sort()
    res = {
        "seconds": wall,
        "cpus": os.cpu_count(),
        "loadavg_start": load0[0],
        "loadavg_end": os.getloadavg()[0],
        "bench_cpu_s": ours_s,
        "others_cpu_s": others_s,
        "others_cpus_mean": others_s / wall if wall else 0,
        "others_cpus_p90": per_second[int(len(per_second) * 0.9)]
        if per_second else 0,
        "others_cpus_max": per_second[-1] if per_second else 0,
        "others_top": ["%s %.1f s" % (n, by_name[n]) for n in
                       sorted(by_name, key=by_name.get, reverse=True)[:5]],
    }
    with open(out, "w") as f:
        json.dump(res, f, indent=1)


_comms = {}


def comm(pid):
    if pid not in _comms:
        try:
            with open("/proc/%d/comm" % pid) as f:
                _comms[pid] = f.read().strip()
        except OSError:
            _comms[pid] = "?"
    return _comms[pid]


if __name__ == "__main__":
    main()
