#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Turn bench/run.sh's samples into build/bench/results.{json,md} and plots.

Each figure is the median of its repeats; the spread ((max - min) / median)
says how noisy the run was. Ratios compare rxdp with the raw AF_XDP limit and
with kernel TCP, measured on the same veth pair in the same run, against the
targets of the benchmark; a missed target says by how much.
"""
import csv
import json
import statistics
import sys
from collections import defaultdict

TARGETS = """\
- small-message latency (ib_write_lat / ib_send_lat, 2 B, median) within 2x
  of the raw AF_XDP ping-pong, and at most a quarter of TCP's;
- small-message rate (64 B) at least 80% of the raw AF_XDP packet rate;
- ib_write_bw 64 KiB at least 90% of the raw AF_XDP stream at the same MTU,
  and above single-stream TCP."""


def load(path):
    groups, units = defaultdict(list), {}
    with open(path) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if not row["value"]:
                continue
            key = (row["name"], int(row["size"]), row["metric"])
            groups[key].append(float(row["value"]))
            units[key] = row["unit"]
    figures = []
    for key in sorted(groups):
        vals = groups[key]
        med = statistics.median(vals)
        figures.append({"name": key[0], "size": key[1], "metric": key[2],
                        "unit": units[key], "samples": vals, "median": med,
                        "spread": (max(vals) - min(vals)) / med if med else 0})
    return figures


def main():
    samples, outdir = sys.argv[1], sys.argv[2]
    figures = load(samples)
    fig = {(f["name"], f["size"], f["metric"]): f["median"] for f in figures}
    get = fig.get
    pmtu = int(get(("config", 0, "path_mtu"), 1024))
    mtu = int(get(("config", 0, "mtu"), 1500))
    frame = int(get(("config", 0, "rxdp_frame"), 0))  # run.sh's figure
    raw_lat = get(("raw afxdp pingpong", 2, "typical"))
    raw_pps = get(("raw afxdp stream", frame, "rate"))
    raw_gbit = get(("raw afxdp stream", frame, "bw"))
    raw_small_pps = get(("raw afxdp stream", 64, "rate"))
    # what the raw stream's packet rate would carry as RDMA payload
    raw_goodput = raw_pps * 1e6 * pmtu * 8 / 1e9 if raw_pps else None
    tcp_lat = get(("tcp sockperf", 14, "typical"))

    ratios = []

    def ratio(what, num, den, cmp, bound):
        r = num / den if num is not None and den else None
        if r is None:
            verdict = "not measured"
        elif (r <= bound) if cmp == "<=" else (r >= bound):
            verdict = "met"
        elif cmp == "<=":
            verdict = "missed: %.2fx over the bound" % (r / bound)
        else:
            verdict = "missed by %.0f%%" % (100 * (1 - r / bound))
        ratios.append({"what": what, "ratio": r, "target": "%s %g" % (cmp, bound),
                       "verdict": verdict})

    for t in ("ib_write_lat", "ib_send_lat"):
        v = get(("rxdp " + t, 2, "typical"))
        ratio(t + " 2 B / raw AF_XDP ping-pong (half RTT)", v, raw_lat, "<=", 2)
        ratio(t + " 2 B / TCP sockperf 14 B", v, tcp_lat, "<=", 0.25)
    ratio("message rate 64 B / raw AF_XDP 64-byte frame rate",
          get(("rxdp msgrate ib_write_bw", 64, "rate")), raw_small_pps, ">=", 0.8)
    bw = get(("rxdp ib_write_bw", 65536, "bw"))
    ratio("ib_write_bw 64 KiB / raw AF_XDP stream (as %d-byte payloads)" % pmtu,
          bw, raw_goodput, ">=", 0.9)
    ratio("ib_write_bw 64 KiB / TCP iperf3 64 KiB", bw,
          get(("tcp iperf3", 65536, "bw")), ">=", 1)

    with open(outdir + "/results.json", "w") as f:
        json.dump({"mtu": mtu, "path_mtu": pmtu, "figures": figures,
                   "ratios": ratios, "raw_goodput_gbits": raw_goodput}, f,
                  indent=1)

    spreads = [f["spread"] for f in figures if len(f["samples"]) > 1]
    lines = [
        "# rxdp benchmark", "",
        "One run on one veth pair between two network namespaces (MTU %d, "
        "copy-mode AF_XDP; rxdp's path MTU %d). Each figure is the median "
        "of its repeats; spread = (max - min) / median." % (mtu, pmtu), "",
        "Noise: median spread %.0f%%, worst %.0f%% over %d repeated figures."
        % (100 * statistics.median(spreads) if spreads else 0,
           100 * max(spreads) if spreads else 0, len(spreads)), "",
        "## Against the targets", "", TARGETS, "",
        "| ratio | value | target | verdict |", "|---|---:|---|---|"]
    for r in ratios:
        v = "n/a" if r["ratio"] is None else "%.2f" % r["ratio"]
        lines.append("| %s | %s | %s | %s |" % (r["what"], v, r["target"],
                                                 r["verdict"]))
    lines += ["", "The raw AF_XDP stream moves %s-byte frames at %s Mpps "
              "(%s Gbit/s of frames); carrying %d-byte RDMA payloads that "
              "rate is %s Gbit/s, the bound rxdp's bandwidth is compared "
              "with." % (frame, fmt(raw_pps), fmt(raw_gbit), pmtu,
                         fmt(raw_goodput)),
              "", "Where a target is missed, profile.txt (perf, whole system, "
              "during ib_write_bw 64 KiB) shows where the time goes.", "",
              "## Every figure", "",
              "| what | size (B) | metric | median | unit | spread | n |",
              "|---|---:|---|---:|---|---:|---:|"]
    for f in figures:
        if f["name"] == "config":
            continue
        lines.append("| %s | %d | %s | %s | %s | %.0f%% | %d |" % (
            f["name"], f["size"], f["metric"], fmt(f["median"]), f["unit"],
            100 * f["spread"], len(f["samples"])))
    lines += ["", "Plots: bandwidth.png, latency.png."]
    with open(outdir + "/results.md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    plots(figures, outdir, raw_goodput, raw_lat)


def fmt(v):
    if v is None:
        return "n/a"
    return "%.3g" % v if abs(v) < 100 else "%.0f" % v


def series(figures, name, metric):
    pts = sorted((f["size"], f["median"]) for f in figures
                 if f["name"] == name and f["metric"] == metric)
    return [p[0] for p in pts], [p[1] for p in pts]


def plots(figures, outdir, raw_goodput, raw_lat):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib (python3-matplotlib): no plots", file=sys.stderr)
        return
    for kind, metric, unit, curves, raw, title in (
            ("bandwidth", "bw", "Gbit/s",
             ["rxdp ib_write_bw", "rxdp ib_send_bw", "rxdp ib_read_bw",
              "tcp iperf3"], raw_goodput,
             "Bandwidth (rxdp: perftest; TCP: iperf3, one stream)"),
            ("latency", "typical", "us (one way, median)",
             ["rxdp ib_write_lat", "rxdp ib_send_lat", "rxdp ib_read_lat",
              "tcp sockperf"], raw_lat,
             "Latency (rxdp: perftest; TCP: sockperf ping-pong / 2)")):
        fig, ax = plt.subplots(figsize=(8, 5))
        for name in curves:
            x, y = series(figures, name, metric)
            if x:
                ax.plot(x, y, marker="o", label=name)
        if raw:
            ax.axhline(raw, color="k", linestyle="--",
                       label="raw AF_XDP limit" + (
                           " (stream, as RDMA payload)" if kind == "bandwidth"
                           else " (2 B ping-pong)"))
        ax.set_xscale("log", base=2)
        if kind == "latency":
            ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel(unit)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig("%s/%s.png" % (outdir, kind), dpi=100)
        plt.close(fig)


if __name__ == "__main__":
    main()
