#!/usr/bin/env bash
# What each backend spends on real-table workloads against a local Cassandra node: the
# built-ins `read` (one row by key; also with --validate, the cost of comparing every row),
# `timeseries` (range reads of 50 clustering rows, appends) and `widerow` (paged partitions,
# slices and single rows with set, map, list and user-type columns; also with
# --discard-results, so that decoded minus discarded is the cost of decoding those rows).
# Every invocation runs all backends in interleaved segments; the modes alternate in order
# by round. Client CPU and allocations are the bench process's own (the node runs beside it
# on this machine, so throughput is the node's as much as the client's).
#
#   perf/workloads.sh [SECONDS_PER_SEGMENT] [CONCURRENCY] [ROUNDS]   (defaults: 5 32 2)
#
# Builds the bench with the counting allocator (--features alloc-count). Environment: NODE
# (default 127.0.0.1:9042, started with scripts/cassandra.sh when it does not answer),
# DRIVERS (default doppio,doppio-uring,scylla), OUT (default perf/results/<date>-workloads).
# Writes OUT/<mode>-r<round>.json and .txt, and OUT/table.md (mean per mode and backend).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

secs=${1:-5}
c=${2:-32}
rounds=${3:-2}
node=${NODE:-127.0.0.1:9042}
drivers=${DRIVERS:-doppio,doppio-uring,scylla}
out=${OUT:-perf/results/$(date -u +%Y-%m-%d)-workloads}
mkdir -p "$out"

cargo build --release -p doppio-bench --features alloc-count >&2
bench=$out/doppio
cp target/release/doppio "$bench"
if ! "$bench" schema "$node" -w empty -q >/dev/null 2>&1; then
    scripts/cassandra.sh start >&2
fi
ks=doppio_workloads
for w in read timeseries widerow; do
    "$bench" schema "$node" -w "$w" -P keyspace=$ks >&2
    "$bench" load "$node" -w "$w" -P keyspace=$ks -q >&2
done

run() { # mode workload extra-args...
    local mode=$1 workload=$2
    shift 2
    echo "== $mode r$r" >&2
    "$bench" run "$node" -w "$workload" -P keyspace=$ks -d "$((secs * 2))s" --warmup 2s \
        -p "$c" --driver "$drivers" --segments 2 -q --tag "$mode" \
        -o "$out/$mode-r$r.json" "$@" >"$out/$mode-r$r.txt"
}
modes=(read read-validated timeseries widerow widerow-discarded)
for r in $(seq 1 "$rounds"); do
    order=("${modes[@]}")
    if [ $((r % 2)) -eq 0 ]; then
        order=()
        for ((k = ${#modes[@]} - 1; k >= 0; k--)); do order+=("${modes[k]}"); done
    fi
    for m in "${order[@]}"; do
        case $m in
        read) run read read ;;
        read-validated) run read-validated read --validate ;;
        timeseries) run timeseries timeseries ;;
        widerow) run widerow widerow ;;
        widerow-discarded) run widerow-discarded widerow --discard-results ;;
        esac
    done
done
rm -f "$bench"

python3 - "$out" "${modes[@]}" <<'EOF' >"$out/table.md"
import glob, json, sys
from collections import defaultdict
out, modes = sys.argv[1], sys.argv[2:]
acc = defaultdict(lambda: defaultdict(list))
for path in sorted(glob.glob(f"{out}/*-r*.json")):
    mode = path.rsplit("/", 1)[1].rsplit("-r", 1)[0]
    for name, b in json.load(open(path))["backends"].items():
        acc[mode][name].append(b)
def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else float("nan")
print("| mode | backend | req/s | rows/req | CPU us/req | CPU us/row | allocs/req | allocs/row | errors |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for mode in modes:
    for name in sorted(acc[mode]):
        bs = acc[mode][name]
        rows = mean([b["rows"] / max(b["requests"], 1) for b in bs])
        allocs = mean([b.get("allocations_per_req") for b in bs])
        print(f"| {mode} | {name} | {mean([b['throughput_rps'] for b in bs]):,.0f} | {rows:.2f} | "
              f"{mean([b['cpu_us_per_req'] for b in bs]):.2f} | "
              f"{mean([b.get('cpu_us_per_row') for b in bs]):.3f} | {allocs:.2f} | "
              f"{allocs / rows if rows else float('nan'):.3f} | "
              f"{sum(b['errors'] for b in bs)} |")
EOF
cat "$out/table.md"
