#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Turn bench/run.sh's samples into build/bench/results.{json,md} and plots.

    report.py SAMPLES.tsv OUTDIR

Each figure is the median of its repeats; the spread ((max - min) / median)
says how noisy the run was. rxdp is compared with each peer at its best: the
raw AF_XDP limit and kernel TCP take their best figure over every MTU and
every configuration measured (TCP's blocking or spinning sockets), so no
verdict claims a win that a better-configured peer takes away. OUTDIR's
cpuwatch.json (bench/cpuwatch.py) says whether the machine was idle.
"""
import csv
import json
import os
import re
import statistics
import sys
from collections import defaultdict

TARGETS = """\
- small-message latency (ib_write_lat / ib_send_lat, 2 B, median, one way)
  within 2x of the raw AF_XDP ping-pong, and no slower than kernel TCP at
  its best (spinning or blocking sockets, either MTU); its p99.9 too;
- small-message rate (64 B) at least 80% of the raw AF_XDP packet rate;
- ib_write_bw 64 KiB at least 90% of the raw AF_XDP stream at the same MTU,
  above single-stream TCP at its best, and at no more CPU per GiB;
- through a hop that loses frames at random, goodput at 0.1% loss at least
  80% of the clean goodput, at 1% at least 50%; and no less than TCP's at
  the same loss, nor than rxdp's own going back (rxdpd --go-back-n);
- pairs at once over 4 queues: every pair finishes; 4 pairs at least 3
  times one pair's bandwidth;
- with rxdpd --poll on CPUs of its own (machines of 8 CPUs or more):
  ib_write_lat / ib_send_lat 2 B within 2x of the raw ping-pong and below
  TCP's spinning sockets."""

# The machine counts as idle when the other processes used less than this
# many CPUs on average, and less than IDLE_P90 in nine seconds of ten
IDLE_MEAN, IDLE_P90 = 0.1, 0.25


def load(path):
    groups, units = defaultdict(list), {}
    with open(path) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if not row["value"]:
                continue
            key = (row["name"], int(row["mtu"]), int(float(row["size"])),
                   row["metric"])
            groups[key].append(float(row["value"]))
            units[key] = row["unit"]
    figures = []
    for key in sorted(groups):
        vals = groups[key]
        med = statistics.median(vals)
        figures.append({"name": key[0], "mtu": key[1], "size": key[2],
                        "metric": key[3], "unit": units[key],
                        "samples": vals, "median": med,
                        "spread": (max(vals) - min(vals)) / med if med else 0})
    return figures


def fmt(v):
    if v is None:
        return "n/a"
    return "%.3g" % v if abs(v) < 100 else "%.0f" % v


class Bench:
    def __init__(self, figures):
        self.figures = figures
        self.fig = {(f["name"], f["mtu"], f["size"], f["metric"]): f["median"]
                    for f in figures}
        self.vals = {(f["name"], f["mtu"], f["size"], f["metric"]): f["samples"]
                     for f in figures}
        self.mtus = sorted({f["mtu"] for f in figures if f["mtu"]},
                           reverse=True)
        self.ratios = []

    def get(self, name, mtu, size, metric):
        return self.fig.get((name, mtu, size, metric))

    def with_range(self, name, mtu, size, metric):
        """The median, and its samples' range where there are several"""
        vals = self.vals.get((name, mtu, size, metric), [])
        if len(vals) < 2:
            return fmt(self.get(name, mtu, size, metric))
        return "%s (%s-%s)" % (fmt(self.get(name, mtu, size, metric)),
                               fmt(min(vals)), fmt(max(vals)))

    def config(self, mtu, what, default):
        v = self.get("config", mtu, 0, what)
        return int(v) if v is not None else default

    def best(self, cands, lower):
        """The best (value, label) of [(label, key)], or (None, None)"""
        got = [(self.fig[k], label) for label, k in cands if k in self.fig]
        if not got:
            return None, None
        return (min if lower else max)(got)

    def raw_goodput(self, mtu, name="raw afxdp stream"):
        """The raw stream's packet rate carrying RDMA payloads, Gbit/s"""
        pmtu = self.config(mtu, "path_mtu", 1024)
        pps = self.get(name, mtu, self.config(mtu, "rxdp_frame", 0), "rate")
        return pps * 1e6 * pmtu * 8 / 1e9 if pps else None

    def ratio(self, what, num, den, peer, cmp, bound):
        if num is None and den is None:
            return  # neither side ran (RXDP_BENCH_SECTIONS, MTUS)
        r = num / den if num is not None and den else None
        if r is None:
            verdict = "not measured"
        elif (r <= bound) if cmp == "<=" else (r >= bound):
            verdict = "met"
        elif cmp == "<=":
            verdict = "missed: %.2fx over the bound" % (r / bound)
        else:
            verdict = "missed by %.0f%%" % (100 * (1 - r / bound))
        self.ratios.append({"what": what, "rxdp": num, "peer": den,
                            "peer_config": peer, "ratio": r,
                            "target": "%s %g" % (cmp, bound),
                            "verdict": verdict})

    def verdicts(self):
        mtus = self.mtus
        raw_lat = self.best([("raw AF_XDP ping-pong, MTU %d" % m,
                              ("raw afxdp pingpong", m, 2, "typical"))
                             for m in mtus], True)
        tcp_cands = lambda metric: [
            ("TCP sockperf %s, MTU %d" % (mode, m),
             ("tcp sockperf " + mode, m, 14, metric))
            for mode in ("blocking", "spinning") for m in mtus]
        tcp_lat = self.best(tcp_cands("typical"), True)
        tcp_p999 = self.best(tcp_cands("p999"), True)
        raw_pps = self.best([("raw AF_XDP 64 B frames, MTU %d" % m,
                              ("raw afxdp stream", m, 64, "rate"))
                             for m in mtus], False)
        tcp_bw = self.best([("TCP iperf3 -l %d, MTU %d" % (s, m),
                             ("tcp iperf3", m, s, "bw"))
                            for m in mtus for s in (65536, 1048576, 4096)],
                           False)
        tcp_cpu = self.best([("TCP iperf3 -l %d, MTU %d" % (s, m),
                              ("tcp iperf3", m, s, "cpu"))
                             for m in mtus for s in (65536, 1048576)], True)
        for m in mtus:
            for t in ("ib_write_lat", "ib_send_lat"):
                v = self.get("rxdp " + t, m, 2, "typical")
                self.ratio("%s 2 B, MTU %d / raw AF_XDP ping-pong (half RTT)"
                           % (t, m), v, raw_lat[0], raw_lat[1], "<=", 2)
                self.ratio("%s 2 B, MTU %d / TCP at its best (14 B)" % (t, m),
                           v, tcp_lat[0], tcp_lat[1], "<=", 1)
                self.ratio("%s 2 B p99.9, MTU %d / TCP's best p99.9" % (t, m),
                           self.get("rxdp " + t, m, 2, "p999"), tcp_p999[0],
                           tcp_p999[1], "<=", 1)
        for m in mtus:
            self.ratio("message rate 64 B, MTU %d / raw AF_XDP 64-byte frames"
                       % m, self.get("rxdp msgrate ib_write_bw", m, 64, "rate"),
                       raw_pps[0], raw_pps[1], ">=", 0.8)
        for m in mtus:
            bw = self.get("rxdp ib_write_bw", m, 65536, "bw")
            self.ratio("ib_write_bw 64 KiB, MTU %d / raw AF_XDP stream, same "
                       "MTU (as %d-byte payloads)"
                       % (m, self.config(m, "path_mtu", 1024)), bw,
                       self.raw_goodput(m), "raw AF_XDP stream, MTU %d" % m,
                       ">=", 0.9)
            self.ratio("ib_write_bw 64 KiB, MTU %d / TCP at its best" % m, bw,
                       tcp_bw[0], tcp_bw[1], ">=", 1)
            self.ratio("CPU per GiB, ib_write_bw 64 KiB, MTU %d / TCP's best"
                       % m, self.get("rxdp ib_write_bw", m, 65536, "cpu"),
                       tcp_cpu[0], tcp_cpu[1], "<=", 1)
            f = self.config(m, "rxdp_frame", 0)
            self.ratio("CPU per GiB, ib_write_bw 64 KiB, MTU %d / raw AF_XDP "
                       "stream, same MTU" % m,
                       self.get("rxdp ib_write_bw", m, 65536, "cpu"),
                       self.get("raw afxdp stream", m, f, "cpu"),
                       "raw AF_XDP stream, MTU %d" % m, "<=", 1.3)
        for k in (1, 2, 4, 8):
            fin = self.get("pairs rxdp ib_write_bw", 9000, k, "finished")
            if fin is not None:
                self.ratio("pairs finished / pairs started, %d ib_write_bw "
                           "pairs at once" % k, fin, k, "every pair", ">=", 1)
        self.ratio("4 pairs / 1 pair, ib_write_bw 64 KiB over 4 queues",
                   self.get("pairs rxdp ib_write_bw", 9000, 4, "bw"),
                   self.get("pairs rxdp ib_write_bw", 9000, 1, "bw"),
                   "one pair on the same veth", ">=", 3)
        for t in ("ib_write_lat", "ib_send_lat"):
            v = self.get("rxdp poll " + t, 9000, 2, "typical")
            if v is None:
                continue
            self.ratio("%s 2 B, rxdpd --poll / raw AF_XDP ping-pong" % t, v,
                       raw_lat[0], raw_lat[1], "<=", 2)
            self.ratio("%s 2 B, rxdpd --poll / TCP spinning sockets" % t, v,
                       self.get("tcp sockperf spinning", 9000, 14, "typical"),
                       "TCP sockperf spinning, MTU 9000", "<=", 1)
        clean = self.get("loss rxdp ib_write_bw 64K", 1500, 0, "bw")
        for ppm, bound in ((1000, 0.8), (10000, 0.5)):
            v = self.get("loss rxdp ib_write_bw 64K", 1500, ppm, "bw")
            self.ratio("goodput at %g%% loss / clean, rxdp (ib_write_bw "
                       "64 KiB, MTU 1500)" % (ppm / 1e4), v, clean,
                       "rxdp through the same hop, no loss", ">=", bound)
            self.ratio("goodput at %g%% loss, rxdp / TCP (iperf3 64 KiB)"
                       % (ppm / 1e4), v,
                       self.get("loss tcp iperf3 64K", 1500, ppm, "bw"),
                       "TCP through the same hop, same loss", ">=", 1)
            self.ratio("goodput at %g%% loss, rxdp / rxdp going back "
                       "(rxdpd --go-back-n)" % (ppm / 1e4), v,
                       self.get("loss rxdp go-back-N ib_write_bw 64K", 1500,
                                ppm, "bw"),
                       "go-back-N through the same hop, same loss", ">=", 1)


INCAST_RUN = re.compile(r"^incast (rxdp|tcp) (\d+)x(\d+) b(\d+) (off|on)$")


def kib(n):
    return "%d MiB" % (n >> 20) if n >= 1 << 20 and not n % (1 << 20) \
        else "%d KiB" % (n >> 10) if not n % 1024 else "%d B" % n


def incast_runs(b):
    """{(hosts, qps, buffer, marking): {transport: {metric: median,
    "each": {flow: Gbit/s}}}} of the incast section's samples"""
    runs = defaultdict(dict)
    for f in b.figures:
        m = INCAST_RUN.match(f["name"])
        if not m:
            continue
        t, k, q, buf, mark = m.groups()
        run = runs[(int(k), int(q), int(buf), mark)].setdefault(
            t, {"each": {}})
        if f["metric"] == "flow":
            run["each"][f["size"]] = f["median"]
        else:
            run[f["metric"]] = f["median"]
    return runs


def incast_section(b):
    runs = incast_runs(b)
    if not runs:
        return []
    cfg = lambda m: b.get("incast config", 1500, 0, m)
    rate, tclass = cfg("rate"), cfg("tclass")
    lines = [
        "", "## Incast: many hosts into one switch port", "",
        "Senders and a receiver on a bridge in a namespace of its own; the "
        "receiver's port is the bottleneck, a TBF at %s Mbit/s with a "
        "bounded buffer (tail drop), and where marking is on rxdp-ecnmark in "
        "front of it (no mark below K_min bytes queued, probability rising "
        "to P_max %s at K_max, every ECT packet above). A flow is a host: "
        "rxdp ib_send_bw -e with its QPs (64 KiB messages, --tclass %s%s) "
        "or TCP iperf3 -P (cubic where the port does not mark, cubic with "
        "ECN where it does). Each run moves what the port carries in %s s, "
        "evenly over its flows. Gbit/s: what the flows that finished moved "
        "together, over the span from the port's first megabyte to its "
        "last busy tenth of a second (share: of the port's rate); Jain's index over "
        "the goodputs of the flows that finished (each its own average, "
        "listed below the table); dropped: "
        "the port's tail drops (%% of what it was offered); CE: packets the "
        "port marked (of the ECT ones; not ECT: would have been marked); "
        "ping: a UDP ping-pong every 10 ms from another host through the "
        "port, echoed in the receiver's kernel, its round trip (ms, to the "
        "kernel's receive timestamp) while the flows ran (how many were "
        "sent); resent: rxdp's "
        "retransmitted packets, TCP's retransmits; CNPs: those the "
        "receiver sent (in brackets: the packets it counted as CE itself, "
        "its receive path half full)." % (
            fmt(rate), fmt(cfg("pmax")), fmt(tclass),
            ": rxdpd sends ECT(0) with its DSCP", fmt(cfg("secs"))), "",
        "| hosts x QPs | buffer | marking | rxdp Gbit/s (share) | Jain | "
        "dropped | CE | out_of_buffer | CNPs | resent | ping p50 / p99 | "
        "finished | "
        "TCP Gbit/s (share) | Jain | dropped | CE | resent | ping p50 / p99 "
        "| finished |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        "---:|---:|---:|---:|---:|"]
    flows = ["", "Each flow's goodput (Gbit/s):", "",
             "| hosts x QPs | buffer | marking | rxdp | TCP |",
             "|---|---:|---|---|---|"]
    for key in sorted(runs, key=lambda r: (r[0], r[1], r[2], r[3] == "on")):
        k, q, buf, mark = key
        cells = ["%dx%d" % (k, q), kib(buf), mark]
        if mark == "on":
            any_run = next(iter(runs[key].values()))
            cells[2] = "on (%s to %s B)" % (fmt(any_run.get("kmin")),
                                            fmt(any_run.get("kmax")))
        per_flow = []
        for t in ("rxdp", "tcp"):
            r = runs[key].get(t)
            n = 9 if t == "rxdp" else 7  # its columns
            if r is None:
                cells += [""] * n
                per_flow.append("")
                continue
            g = lambda m: r.get(m)
            ce = "" if mark != "on" else "%s of %s%s" % (
                fmt(g("marked")), fmt(g("ect")),
                "; %s not ECT" % fmt(g("not_ect")) if g("not_ect") else "")
            pct = lambda v: " (%s%%)" % fmt(v) if v is not None else ""
            row = [fmt(g("sum")) + pct(g("share")),
                   "%.3f" % g("jain") if g("jain") is not None else "n/a",
                   fmt(g("drops")) + pct(g("drop_rate")), ce]
            if t == "rxdp":
                row += [fmt(g("out_of_buffer")),
                        "%s (%s)" % (fmt(g("cnps")), fmt(g("rx_congested")))]
            n = " (%d)" % g("ping_sent") if g("ping_sent") else ""
            row += [fmt(g("resent")), "%s / %s%s" % (fmt(g("ping_p50")),
                                                      fmt(g("ping_p99")), n),
                    "%s of %s" % (fmt(g("finished")), fmt(g("flows")))]
            cells += row
            per_flow.append(", ".join("%.2f" % r["each"][i]
                                      for i in sorted(r["each"])))
        lines.append("| %s |" % " | ".join(cells))
        flows.append("| %s | %s |" % (" | ".join(cells[:3]),
                                      " | ".join(per_flow)))
    return lines + flows


SHARE_LOADS = (("alone", "nothing"), ("hog", "a CPU hog"),
               ("wire-4096", "a 4 KiB write stream across the wire"),
               ("wire-65536", "a 64 KiB write stream across the wire"),
               ("loop-4096", "a 4 KiB write stream looped back"),
               ("loop-65536", "a 64 KiB write stream looped back"))


SHARE_CONFIGS = (
    ("1", "1 queue(s)", "one engine a side"),
    ("1x2", "1 queue(s), 2 engines on it",
     "two engines a side on the one queue (rxdpd --engines-per-queue 2), "
     "the two users' contexts on different ones"),
    ("2", "2 queue(s)", "rxdpd's engines, one a queue, the two users' "
     "contexts on different ones"))


def share_section(b, config, title, engines):
    "the sharing section of one configuration: the victim's latency beside each load"
    sh = "share" if config == "1" else "share q" + config
    lat = {k: b.get(sh + " pingpong " + k, 1500, 64, "lat")
           for k, _ in SHARE_LOADS}
    if all(v is None for v in lat.values()):
        return []
    hog = lat["hog"]
    lines = [
        "", "## Sharing: one user's ping-pong beside another's load, " +
        title, "",
        "ibv_rc_pingpong -s 64 of one user (uid 12345) from host B to host "
        "A, beside another user's (65534) load on host A: a CPU hog, or "
        "ib_write_bw -t 8 from B to A (across the wire) or from A to A "
        "(looped back on the same device); MTU 1500. The stream's "
        "bandwidth alone, and beside the ping-pong. Then the ping-pong at "
        "SL 5, a latency class (rxdpd --tc 5=strict), the stream at SL 0. "
        "Veths of %s: %s. " % (title, engines) +
        "Issue 45's targets: beside a stream at most 1.5 times the figure "
        "beside the hog (1.2 in the latency class), the stream keeping 0.8 "
        "of its bandwidth. Each figure is the median of the rounds, the "
        "ping-pong's range in brackets: beside a stream its figure is the "
        "CPU scheduler's luck (on the 2-core VM, 173 to 1 270 us in seven "
        "runs of one tree), and one run says little.", "",
        "| beside the ping-pong | us per iteration | times beside the hog "
        "| stream Gbit/s alone / beside | kept | latency class: us | times "
        "beside the hog | stream Gbit/s beside | kept |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for k, what in SHARE_LOADS:
        if lat[k] is None:
            continue
        times = "%.2f" % (lat[k] / hog) if hog and k != "alone" else ""
        bw = kept = l5 = times5 = bw5 = kept5 = ""
        if "-" in k:
            path, size = k.split("-")
            a = b.get("%s stream %s alone" % (sh, path), 1500, int(size), "bw")
            s = b.get("%s stream %s beside" % (sh, path), 1500, int(size), "bw")
            bw = "%s / %s" % (fmt(a), fmt(s))
            kept = "%.2f" % (s / a) if a and s is not None else ""
            pp5 = "%s pingpong %s sl5" % (sh, k)
            v5 = b.get(pp5, 1500, 64, "lat")
            s5 = b.get("%s stream %s beside sl5" % (sh, path), 1500, int(size),
                       "bw")
            if v5 is not None:
                l5 = b.with_range(pp5, 1500, 64, "lat")
                times5 = "%.2f" % (v5 / hog) if hog else ""
                bw5 = fmt(s5)
                kept5 = "%.2f" % (s5 / a) if a and s5 is not None else ""
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            what, b.with_range(sh + " pingpong " + k, 1500, 64, "lat"),
            times, bw, kept, l5, times5, bw5, kept5))
    return lines


def idle_verdict(outdir):
    try:
        with open(os.path.join(outdir, "cpuwatch.json")) as f:
            w = json.load(f)
    except (OSError, ValueError):
        return None, "Whether the machine was idle: not measured."
    idle = (w["others_cpus_mean"] < IDLE_MEAN and
            w["others_cpus_p90"] < IDLE_P90)
    what = ("idle" if idle else
            "NOT idle: every figure is noisier, and slower, than on a quiet "
            "machine")
    return w, ("The machine was %s. Other processes used %.2f of its %d CPUs "
               "on average during the %.0f s run (%.2f in nine seconds of "
               "ten, %.2f at most; load average %.1f at the start)%s." % (
                   what, w["others_cpus_mean"], w["cpus"], w["seconds"],
                   w["others_cpus_p90"], w["others_cpus_max"],
                   w["loadavg_start"],
                   "; busiest: " + ", ".join(w["others_top"])
                   if w["others_top"] and not idle else ""))


def latency_table(b):
    lines = ["| 2-byte messages, one way (us) | MTU | typical | p99 | p99.9 |",
             "|---|---:|---:|---:|---:|"]
    rows = [("raw AF_XDP ping-pong", "raw afxdp pingpong", 2)]
    rows += [("TCP sockperf, %s sockets (14 B)" % mode,
              "tcp sockperf " + mode, 14)
             for mode in ("blocking", "spinning")]
    rows += [("rxdp " + t, "rxdp " + t, 2) for t in
             ("ib_write_lat", "ib_send_lat", "ib_read_lat")]
    rows += [("rxdp ib_atomic_lat (8 B)", "rxdp ib_atomic_lat", 8)]
    for label, name, size in rows:
        for m in b.mtus:
            vals = [b.get(name, m, size, k) for k in ("typical", "p99", "p999")]
            if any(v is not None for v in vals):
                lines.append("| %s | %d | %s |" % (
                    label, m, " | ".join(fmt(v) for v in vals)))
    return lines


def bandwidth_table(b):
    lines = ["| 64 KiB messages | MTU | Gbit/s | CPU s/GiB | payload "
             "syscalls per message |",
             "|---|---:|---:|---:|---:|"]
    for m in b.mtus:
        f = b.config(m, "rxdp_frame", 0)
        lines.append("| raw AF_XDP stream (%d-byte frames; as RDMA payload: %s "
                     "Gbit/s) | %d | %s | %s | |" % (
                         f, fmt(b.raw_goodput(m)), m,
                         fmt(b.get("raw afxdp stream", m, f, "bw")),
                         fmt(b.get("raw afxdp stream", m, f, "cpu"))))
        c = "raw afxdp stream copied"
        if b.get(c, m, f, "bw") is not None:
            lines.append("| the same, its sink copying each payload out "
                         "(as RDMA payload: %s Gbit/s) | %d | %s | %s | |" % (
                             fmt(b.raw_goodput(m, c)), m,
                             fmt(b.get(c, m, f, "bw")),
                             fmt(b.get(c, m, f, "cpu"))))
        c = "raw afxdp stream crc"
        g = b.raw_goodput(m, c)
        if g:
            w = b.get("rxdp ib_write_bw", m, 65536, "bw")
            lines.append("| the same, each end also computing a CRC-32 over "
                         "each frame and copying its payload, as a transport "
                         "must (as RDMA payload: %s Gbit/s%s) | %d | %s | %s "
                         "| |" % (fmt(g), "; rxdp ib_write_bw 64 KiB: %.2f "
                                  "of it" % (w / g) if w else "", m,
                                  fmt(b.get(c, m, f, "bw")),
                                  fmt(b.get(c, m, f, "cpu"))))
    for label, name in (("TCP iperf3 -l 64K, one stream", "tcp iperf3"),
                        ("rxdp ib_write_bw", "rxdp ib_write_bw"),
                        ("rxdp ib_send_bw", "rxdp ib_send_bw"),
                        ("rxdp ib_read_bw", "rxdp ib_read_bw"),
                        ("rxdp ib_write_bw, memory not shared with rxdpd "
                         "(the batched path)", "rxdp batched ib_write_bw")):
        for m in b.mtus:
            if b.get(name, m, 65536, "bw") is None:
                continue
            lines.append("| %s | %d | %s | %s | %s |" % (
                label, m, fmt(b.get(name, m, 65536, "bw")),
                fmt(b.get(name, m, 65536, "cpu")),
                fmt(b.get(name, m, 65536, "syscalls"))))
    return lines


LOSS_GBN = "loss rxdp go-back-N ib_write_bw 64K"


def loss_table(b):
    lines = ["| loss | rxdp Gbit/s | of clean | CPU s/GiB | going back "
             "Gbit/s | of clean | TCP Gbit/s | of clean | CPU s/GiB |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    rc = b.get("loss rxdp ib_write_bw 64K", 1500, 0, "bw")
    gc = b.get(LOSS_GBN, 1500, 0, "bw")
    tc = b.get("loss tcp iperf3 64K", 1500, 0, "bw")
    for ppm in sorted({f["size"] for f in b.figures
                       if f["name"].startswith("loss ")}):
        r = b.get("loss rxdp ib_write_bw 64K", 1500, ppm, "bw")
        g = b.get(LOSS_GBN, 1500, ppm, "bw")
        t = b.get("loss tcp iperf3 64K", 1500, ppm, "bw")
        pct = lambda v, c: "%.0f%%" % (100 * v / c) if v is not None and c \
            else "n/a"
        lines.append("| %g%% | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            ppm / 1e4, fmt(r), pct(r, rc),
            fmt(b.get("loss rxdp ib_write_bw 64K", 1500, ppm, "cpu")),
            fmt(g), pct(g, gc), fmt(t), pct(t, tc),
            fmt(b.get("loss tcp iperf3 64K", 1500, ppm, "cpu"))))
    return lines


def pairs_table(b):
    lines = ["| pairs at once (64 KiB, 4 queues, MTU 9000) | rxdp Gbit/s, "
             "summed | pairs finished | TCP iperf3 -P, Gbit/s |",
             "|---:|---:|---:|---:|"]
    for k in (1, 2, 4, 8):
        r = b.get("pairs rxdp ib_write_bw", 9000, k, "bw")
        t = b.get("pairs tcp iperf3", 9000, k, "bw")
        if r is None and t is None:
            continue
        fin = b.get("pairs rxdp ib_write_bw", 9000, k, "finished")
        lines.append("| %d | %s | %s of %d | %s |" % (
            k, fmt(r), fmt(fin), k, fmt(t)))
    return lines


def nofifo_table(b):
    lines = ["| rxdpd --fifo 0, MTU 9000 | typical | mean | p99 | p99.9 |",
             "|---|---:|---:|---:|---:|"]
    for t in ("ib_write_lat", "ib_send_lat", "ib_read_lat"):
        vals = [b.get("rxdp nofifo " + t, 9000, 2, k)
                for k in ("typical", "mean", "p99", "p999")]
        if any(v is not None for v in vals):
            lines.append("| %s 2 B (us) | %s |" % (
                t, " | ".join(fmt(v) for v in vals)))
    return lines if len(lines) > 2 else ["Not measured."]


def poll_table(b):
    lines = ["| rxdpd --poll, MTU 9000 | typical | p99 | p99.9 |",
             "|---|---:|---:|---:|"]
    for t in ("ib_write_lat", "ib_send_lat", "ib_read_lat"):
        vals = [b.get("rxdp poll " + t, 9000, 2, k)
                for k in ("typical", "p99", "p999")]
        if any(v is not None for v in vals):
            lines.append("| %s 2 B (us) | %s |" % (
                t, " | ".join(fmt(v) for v in vals)))
    bw = b.get("rxdp poll ib_write_bw", 9000, 65536, "bw")
    if bw is not None:
        lines.append("| ib_write_bw 64 KiB: Gbit/s, CPU s/GiB | %s | %s | |"
                     % (fmt(bw), fmt(b.get("rxdp poll ib_write_bw", 9000,
                                           65536, "cpu"))))
    rate = b.get("rxdp poll msgrate ib_write_bw", 9000, 64, "rate")
    if rate is not None:
        lines.append("| 64 B message rate (Mpps) | %s | | |" % fmt(rate))
    return lines if len(lines) > 2 else ["Not measured (fewer than 8 CPUs)."]


def takeover_section(b):
    lines = ["", "## rxdpd taken over", "",
             "rxdpd --takeover on one host of two under a checked stream of "
             "64 B Sends (RC): the stream's longest stall, the blackout an "
             "application sees; 64 KiB Writes for 3 s with one takeover and "
             "without; and a restart instead (SIGTERM, a new rxdpd, a new "
             "connection's first completion: every connection ends), and a "
             "restart through systemd's descriptor store (rxdpd --fdstore "
             "under tests/lib/fdstore.py, which speaks systemd's protocol: "
             "the blackout), MTU 1500.", "",
             "| what | median | max |", "|---|---:|---:|"]
    rows = [("blackout, the requester's rxdpd taken over (ms)",
             "takeover requester", 0, "blackout"),
            ("blackout, the responder's rxdpd taken over (ms)",
             "takeover responder", 0, "blackout"),
            ("the successor's start to serving (ms)", "takeover successor",
             0, "start"),
            ("64 KiB Writes, 3 s, no takeover (Gbit/s)", "takeover stream",
             65536, "goodput"),
            ("64 KiB Writes, 3 s, one takeover (Gbit/s)",
             "takeover stream with one", 65536, "goodput"),
            ("a restart: SIGTERM to a new connection's first completion "
             "(ms)", "restart", 0, "first_completion"),
            ("blackout, a restart through the descriptor store (ms)",
             "restart fdstore", 0, "blackout")]
    for label, name, size, metric in rows:
        f = [x for x in b.figures if x["name"] == name and
             x["mtu"] == 1500 and x["size"] == size and
             x["metric"] == metric]
        if f:
            lines.append("| %s | %s | %s |" % (
                label, fmt(f[0]["median"]), fmt(max(f[0]["samples"]))))
    return lines if len(lines) > 8 else lines[:7] + ["Not measured."]


def main():
    samples, outdir = sys.argv[1], sys.argv[2]
    b = Bench(load(samples))
    b.verdicts()
    watch, idle = idle_verdict(outdir)
    with open(outdir + "/results.json", "w") as f:
        json.dump({"mtus": b.mtus, "figures": b.figures, "ratios": b.ratios,
                   "cpuwatch": watch}, f, indent=1)

    spreads = [f["spread"] for f in b.figures if len(f["samples"]) > 1]
    lost = [r for r in b.ratios if r["verdict"].startswith("missed")]
    lines = [
        "# rxdp benchmark", "",
        "One run: per MTU (%s) a veth pair between two network namespaces "
        "(copy-mode AF_XDP), and a forwarding hop that drops frames at random "
        "for the goodput under loss (MTU 1500). Each figure is the median of "
        "its repeats; spread = (max - min) / median."
        % ", ".join(str(m) for m in b.mtus), "", idle, "",
        "Noise: median spread %.0f%%, worst %.0f%% over %d repeated figures."
        % (100 * statistics.median(spreads) if spreads else 0,
           100 * max(spreads) if spreads else 0, len(spreads)), "",
        "## Against each peer at its best", "", TARGETS, "",
        "| comparison | rxdp | peer | peer at its best | ratio | target | "
        "verdict |", "|---|---:|---:|---|---:|---|---|"]
    for r in b.ratios:
        lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            r["what"], fmt(r["rxdp"]), fmt(r["peer"]), r["peer_config"] or
            "n/a", "n/a" if r["ratio"] is None else "%.2f" % r["ratio"],
            r["target"], r["verdict"]))
    lines += ["", "Where rxdp loses: %s." % (
        "; ".join("%s (%.2f)" % (r["what"], r["ratio"]) for r in lost)
        if lost else "nowhere in this run")]
    lines += ["", "## Latency", ""] + latency_table(b)
    lines += ["", "## Bandwidth", ""] + bandwidth_table(b)
    lines += ["", "## Goodput under loss", "",
              "ib_write_bw 64 KiB for 4 s and iperf3 -l 64K for 4 s through "
              "rxdp-lossyhop (an XDP redirect between two veths dropping IP "
              "frames at random, both directions), MTU 1500.", ""]
    lines += loss_table(b)
    lines += ["", "## Pairs at once", ""] + pairs_table(b)
    lines += ["", "## rxdpd without SCHED_FIFO", "",
              "As where rxdpd lacks CAP_SYS_NICE: its data-path threads "
              "share their CPUs with the spinning applications under the "
              "fair scheduler.", ""] + nofifo_table(b)
    lines += ["", "## rxdpd --poll on CPUs of its own", ""] + poll_table(b)
    lines += incast_section(b)
    for config in SHARE_CONFIGS:
        lines += share_section(b, *config)
    lines += takeover_section(b)
    lines += ["", "Where a target is missed, profile.txt (perf, whole system, "
              "during ib_write_bw 64 KiB) shows where the time goes.", "",
              "## Every figure", "",
              "| what | MTU | size (B; loss: ppm) | metric | median | unit | "
              "spread | n |", "|---|---:|---:|---|---:|---|---:|---:|"]
    for f in b.figures:
        if f["name"] == "config":
            continue
        lines.append("| %s | %d | %d | %s | %s | %s | %.0f%% | %d |" % (
            f["name"], f["mtu"], f["size"], f["metric"], fmt(f["median"]),
            f["unit"], 100 * f["spread"], len(f["samples"])))
    lines += ["", "Plots: bandwidth.png, latency.png, loss.png."]
    with open(outdir + "/results.md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    plots(b, outdir)


def series(b, name, mtu, metric):
    pts = sorted((f["size"], f["median"]) for f in b.figures
                 if f["name"] == name and f["mtu"] == mtu and
                 f["metric"] == metric)
    return [p[0] for p in pts], [p[1] for p in pts]


def plots(b, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib (python3-matplotlib): no plots", file=sys.stderr)
        return
    style = {m: s for m, s in zip(b.mtus, ("-", "--", ":"))}

    fig, ax = plt.subplots(figsize=(9, 5.5))
    for m in b.mtus:
        for name in ("rxdp ib_write_bw", "rxdp ib_send_bw", "rxdp ib_read_bw",
                     "tcp iperf3"):
            x, y = series(b, name, m, "bw")
            if x:
                ax.plot(x, y, marker="o", linestyle=style[m],
                        label="%s, MTU %d" % (name, m))
        if b.raw_goodput(m):
            ax.axhline(b.raw_goodput(m), color="k", linestyle=style[m],
                       linewidth=0.8,
                       label="raw AF_XDP stream as RDMA payload, MTU %d" % m)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("Gbit/s")
    ax.set_title("Bandwidth (rxdp: perftest; TCP: iperf3, one stream)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(outdir + "/bandwidth.png", dpi=100)
    plt.close(fig)

    # typical and tail latency side by side, one row per MTU
    rows = max(len(b.mtus), 1)
    fig, axes = plt.subplots(rows, 2, figsize=(12, 4.5 * rows), squeeze=False)
    for i, m in enumerate(b.mtus):
        for j, (metric, what) in enumerate((("typical", "median"),
                                            ("p999", "p99.9"))):
            ax = axes[i][j]
            for name in ("rxdp ib_write_lat", "rxdp ib_send_lat",
                         "rxdp ib_read_lat", "tcp sockperf blocking",
                         "tcp sockperf spinning", "raw afxdp pingpong"):
                x, y = series(b, name, m, metric)
                if x:
                    ax.plot(x, y, marker="o", label=name)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("message size (bytes)")
            ax.set_ylabel("us, one way (%s)" % what)
            ax.set_title("Latency, %s, MTU %d" % (what, m))
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(outdir + "/latency.png", dpi=100)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, label in (("loss rxdp ib_write_bw 64K", "rxdp ib_write_bw 64 KiB"),
                        (LOSS_GBN, "the same, rxdpd --go-back-n"),
                        ("loss tcp iperf3 64K", "TCP iperf3 -l 64K")):
        x, y = series(b, name, 1500, "bw")
        if x:
            ax.plot([v / 1e4 for v in x], y, marker="o", label=label)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("frames lost at random on the hop (%)")
    ax.set_ylabel("goodput (Gbit/s)")
    ax.set_title("Goodput under loss, MTU 1500")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(outdir + "/loss.png", dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    main()
