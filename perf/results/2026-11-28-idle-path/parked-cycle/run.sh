#!/usr/bin/env bash
# The parked cycle's cost by layer: `doppio run --anatomy` of the three backends at 80,000
# req/s (30 % of the slowest capacity on this machine), stub on core 1, bench on core 0,
# `empty`, C = 64, 2 segments of 10 s per backend, with the pacing and idle path as before
# (finest) and as now (defaults). Run from the repository's root after
# `cargo build --release -p doppio-bench -p doppio-stub`.
set -euo pipefail
. scripts/setup-lib.sh
out=perf/results/2026-11-28-idle-path/parked-cycle
raise_memlock >&2
ensure_tracefs >&2
start_stub target/release/doppio-stub 1 19047 glommio "$out"
for cfg in finest defaults; do
    case $cfg in
        finest) opts=(--release-grid 0 --timer-slack 0 --batch-wait 0) ;;
        defaults) opts=() ;;
    esac
    taskset -c 0 target/release/doppio run -w empty --driver doppio,doppio-uring,scylla -t 1 \
        -p 64 -r 80000 -d 20s --segments 2 --warmup 500ms --anatomy -q "${opts[@]}" \
        -o "$out/$cfg.json" 127.0.0.1:19047 >"$out/$cfg.txt"
done
