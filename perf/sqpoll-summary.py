#!/usr/bin/env python3
"""Summary of perf/sqpoll.sh's reports: one markdown table row per report and backend.

Client CPU per request is the process's (getrusage, every thread, the kernel's SQ threads
included); "threads" is it minus the SQ threads' share (their /proc stat time), "SQ thread"
that share. Syscalls are the process's user threads' (the SQ thread makes none).

    perf/sqpoll-summary.py REPORT.json[.gz]... > summary.md
"""
import gzip
import json
import sys


def num(x, d):
    return "n/a" if x is None else f"{x:.{d}f}"


def main(paths):
    rows = []
    for p in paths:
        # A study's raw reports are kept gzipped once recorded (perf/README.md, "Results").
        with (gzip.open(p, "rt") if p.endswith(".gz") else open(p)) as f:
            r = json.load(f)
        sq = r["config"].get("sqpoll") or {}
        where = "core {}".format(sq["cpu"]) if sq.get("cpu") is not None else "not pinned"
        for name in r["config"]["drivers"]:
            b = r["backends"][name]
            cpu = b["cpu_us_per_req"]
            sqt = b.get("sqpoll_thread_cpu_us_per_req")
            kinds = b.get("syscalls_by_kind_per_req") or {}
            enters = b.get("uring_enters_per_req") or {}
            other = None
            if kinds:
                other = sum(v for k, v in kinds.items() if k != "io_uring_enter")
            rows.append((
                where if name.endswith("sqpoll") else "-",
                r["config"]["concurrency"],
                name,
                b["throughput_rps"],
                cpu,
                cpu - (sqt or 0.0) if name.endswith("sqpoll") else cpu,
                sqt if name.endswith("sqpoll") else None,
                b.get("syscalls_per_req"),
                kinds.get("io_uring_enter"),
                other,
                enters.get("waiting"),
                enters.get("sq_wakeup"),
                b.get("io_uring_submitted_per_req"),
                b.get("ctx_switches_per_req"),
                r.get("tag") or p,
            ))
    print("| SQ thread | C | backend | req/s | CPU us/req | threads | SQ thread | syscalls/req "
          "| io_uring_enter | other | enters waiting | enters waking SQ | io_uring ops/req "
          "| ctx sw/req | run |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for w, c, n, tp, cpu, thr, sqt, sc, ue, oth, ew, es, ops, cs, tag in rows:
        print(f"| {w} | {c} | {n} | {tp:,.0f} | {cpu:.3f} | {thr:.3f} | {num(sqt, 3)} "
              f"| {num(sc, 4)} | {num(ue, 4)} | {num(oth, 4)} | {num(ew, 4)} | {num(es, 5)} "
              f"| {num(ops, 4)} | {num(cs, 4)} | {tag} |")


if __name__ == "__main__":
    main(sys.argv[1:])
