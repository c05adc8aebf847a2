#!/usr/bin/env python3
"""Summary of perf/soak.sh runs: for each target, the bench process's resident memory after
the first minute and its peak afterwards (growth in %), open descriptors at the first minute
and at the end, and the least-squares slope of the per-sample throughput with its 95 %
margin (normal approximation; samples after the first minute only).

    perf/soak-summary.py FOLDER TARGET...    (reads FOLDER/TARGET.json or .json.gz and TARGET-proc.csv)
"""
import csv
import gzip
import json
import os
import math
import sys


def slope_with_margin(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    b = sxy / sxx
    res = sum((y - my - b * (x - mx)) ** 2 for x, y in zip(xs, ys))
    se = math.sqrt(res / (n - 2) / sxx)
    return b, 1.96 * se, my


def seconds(text):
    """A duration as the report writes it ("70.000s", "250ms", "2m")."""
    for unit, factor in (("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9), ("s", 1.0), ("m", 60.0), ("h", 3600.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * factor
    return float(text)


def summarise(folder, target):
    with open(f"{folder}/{target}-proc.csv") as f:
        proc = [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]
    path = f"{folder}/{target}.json"
    # A study's raw reports are kept gzipped once recorded (perf/README.md, "Results").
    with (open(path) if os.path.exists(path) else gzip.open(path + ".gz", "rt")) as f:
        report = json.load(f)
    backend = next(iter(report["backends"].values()))
    # The measured stretch: warm-up (5 s) and the run; building the report comes after.
    end = 5.0 + seconds(report["config"]["duration"])
    after = [p for p in proc if 60.0 <= p["t_s"] <= end]
    if not after:
        return f"| {target} | run shorter than a minute | | | | |"
    first = after[0]
    peak = max(p["rss_kb"] for p in after)
    growth = 100.0 * (peak / first["rss_kb"] - 1.0)
    last = proc[-1]
    samples = [s for s in backend["samples"] if s["start_s"] >= 60.0 and s["duration_s"] > 0]
    xs = [s["start_s"] / 60.0 for s in samples]
    ys = [s["throughput_rps"] for s in samples]
    if len(xs) >= 3:
        b, m, mean = slope_with_margin(xs, ys)
        trend = f"{b:+.1f} ± {m:.1f} req/s per minute ({100 * b / mean:+.3f} % ± {100 * m / mean:.3f} % of {mean:.0f} req/s)"
    else:
        trend = "too few samples"
    minutes = (last["t_s"]) / 60.0
    return (
        f"| {target} | {backend['driver']} | {minutes:.1f} min, {backend['requests']} requests, "
        f"{backend['errors']} errors | {first['rss_kb'] / 1024:.1f} MiB -> peak "
        f"{peak / 1024:.1f} MiB ({growth:+.2f} %) | {int(first['fds'])} -> {int(last['fds'])} "
        f"(threads {int(first['threads'])} -> {int(last['threads'])}) | {trend} |"
    )


def main():
    folder, targets = sys.argv[1], sys.argv[2:]
    print("| target | driver | run | RSS at 1 min -> peak after | open fds at 1 min -> last sample | throughput trend after 1 min |")
    print("| --- | --- | --- | --- | --- | --- |")
    for t in targets:
        print(summarise(folder, t))


if __name__ == "__main__":
    main()
