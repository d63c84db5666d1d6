#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Turn bench/run.sh's samples into build/bench/results.json and results.md.

Each figure is the median of its repeats; the spread ((max - min) / median)
says how noisy the run was. Ratios compare rxdp with kernel TCP on the same
veth pair in the same run.
"""
import csv
import json
import statistics
import sys
from collections import defaultdict


def main():
    samples, outdir = sys.argv[1], sys.argv[2]
    groups = defaultdict(list)
    units = {}
    with open(samples) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            key = (row["name"], int(row["size"]), row["metric"])
            groups[key].append(float(row["value"]))
            units[key] = row["unit"]
    figures = []
    for key in sorted(groups):
        vals = groups[key]
        med = statistics.median(vals)
        spread = (max(vals) - min(vals)) / med if med else 0.0
        figures.append(
            {
                "name": key[0],
                "size": key[1],
                "metric": key[2],
                "unit": units[key],
                "samples": vals,
                "median": med,
                "spread": spread,
            }
        )
    fig = {(f["name"], f["size"], f["metric"]): f["median"] for f in figures}

    def ratio(a, b):
        return fig[a] / fig[b] if a in fig and b in fig and fig[b] else None

    ratios = []
    for t in ("ib_write_lat", "ib_send_lat"):
        r = ratio(("rxdp " + t, 2, "typical"), ("tcp sockperf", 14, "typical"))
        ratios.append({"what": t + " 2 B / TCP sockperf 14 B", "ratio": r,
                       "target": "<= 0.25"})
    for s in (65536, 1048576):
        r = ratio(("rxdp ib_write_bw", s, "bw"), ("tcp iperf3", s, "bw"))
        ratios.append({"what": "ib_write_bw %d B / TCP iperf3" % s,
                       "ratio": r, "target": "> 1"})

    with open(outdir + "/results.json", "w") as f:
        json.dump({"figures": figures, "ratios": ratios}, f, indent=1)

    lines = ["# rxdp benchmark", "",
             "One run on one veth pair between two network namespaces "
             "(copy-mode AF_XDP). Medians of the repeats; spread = "
             "(max - min) / median.", "",
             "| what | size (B) | metric | median | unit | spread |",
             "|---|---:|---|---:|---|---:|"]
    for f in figures:
        lines.append("| %s | %d | %s | %.3f | %s | %.0f%% |" % (
            f["name"], f["size"], f["metric"], f["median"], f["unit"],
            100 * f["spread"]))
    lines += ["", "## Ratios", "", "| ratio | value | target |",
              "|---|---:|---|"]
    for r in ratios:
        v = "n/a" if r["ratio"] is None else "%.2f" % r["ratio"]
        lines.append("| %s | %s | %s |" % (r["what"], v, r["target"]))
    lines += ["", "The raw AF_XDP limit (the project's own ping-pong and "
              "stream tool) is not measured yet, so the ratios against it "
              "are missing."]
    with open(outdir + "/results.md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
