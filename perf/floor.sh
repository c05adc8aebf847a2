#!/usr/bin/env bash
# The bench engine's own cost per request: `doppio run --driver null` (requests complete at
# once, no I/O, on doppio's io_uring runtime) pinned to one core, at several concurrencies and
# workloads, one or more builds of the bench interleaved round by round (A B A B ...), so that
# a before/after of an engine change is measured under the same conditions. Prints one line
# per run and a table of the medians: client CPU ns per request (the report's OVERHEAD), and
# req/s.
#
#   perf/floor.sh [BENCH_BINARY...]            (default: target/release/doppio)
#
# Environment: ROUNDS (default 3), SECS per run (default 5), CONC (default "1 256 1024"),
# WORKLOADS (default "empty read"), RATE (an -r for every run; default none), CORE (default
# 0), OUT (a folder for the JSON reports; default a temporary one), ARGS (more run options).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(target/release/doppio)
rounds=${ROUNDS:-3}
secs=${SECS:-5}
conc=${CONC:-1 256 1024}
workloads=${WORKLOADS:-empty read}
core=${CORE:-0}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
rate=()
[ -z "${RATE:-}" ] || rate=(-r "$RATE")
extra=()
[ -z "${ARGS:-}" ] || read -r -a extra <<<"$ARGS"

results="$out/floor.tsv"
: >"$results"
for r in $(seq 1 "$rounds"); do
    for w in $workloads; do
        for c in $conc; do
            for b in "${bins[@]}"; do
                json="$out/$(printf '%s' "$b" | tr -c 'A-Za-z0-9_.-' '_')-$w-c$c-r$r.json"
                taskset -c "$core" "$b" run --driver null -w "$w" -d "${secs}s" --warmup 1s \
                    -p "$c" -t 1 -q "${rate[@]}" "${extra[@]}" -o "$json" >/dev/null 2>&1
                line=$(jq -r --arg b "$b" --arg w "$w" --arg c "$c" --arg r "$r" \
                    '.backends.null | [$b, $w, $c, $r, (.cpu_us_per_req * 1000 | floor),
                      (.throughput_rps | floor), (.allocations_per_req // "n/a")] | @tsv' "$json")
                echo "$line" | tee -a "$results"
            done
        done
    done
done
echo
echo "medians over $rounds rounds (client CPU ns per request, req/s, allocations per request):"
python3 - "$results" <<'EOF'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
keys = []
for b, w, c, *_ in rows:
    if (b, w, c) not in keys:
        keys.append((b, w, c))
print("| build | workload | C | CPU ns/req (median, min-max) | req/s (median) | allocs/req |")
print("|---|---|---:|---:|---:|---:|")
for k in keys:
    sel = [r for r in rows if tuple(r[:3]) == k]
    ns = [int(r[4]) for r in sel]
    rps = [int(r[5]) for r in sel]
    print(f"| {k[0]} | {k[1]} | {k[2]} | {statistics.median(ns):.0f} ({min(ns)}-{max(ns)}) "
          f"| {statistics.median(rps):,.0f} | {sel[-1][6]} |")
EOF
