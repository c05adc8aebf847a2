#!/usr/bin/env bash
# Protocol v4 against v5 on a real node: the same workload, concurrency and backends, the
# bench pinned to one core, runs with --protocol 4 and --protocol 5 alternating by round
# (4, 5, 5, 4, ...) so that drift falls on both alike. The stub speaks v4 only, so this
# needs a Cassandra 4.0+ (scripts/cassandra.sh start). Writes
# perf/results/<date>-protocols/: the JSON and text report of each run and table.md (mean
# per version and backend of req/s, client CPU us/req and syscalls/req, and v5/v4).
#
#   perf/protocols.sh [SECONDS_PER_SEGMENT] [CONCURRENCY] [ROUNDS]   (defaults: 10 64 2)
#
# Environment: NODE (default 127.0.0.1:9042), DRIVERS (default doppio,doppio-uring: the
# backends that speak v5), WORKLOAD (default empty), BENCH_CORE (default 0), OUT.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/setup-lib.sh
. "$ROOT/scripts/setup-lib.sh"
raise_memlock >&2
ensure_tracefs >&2

secs=${1:-10}
c=${2:-64}
rounds=${3:-2}
node=${NODE:-127.0.0.1:9042}
drivers=${DRIVERS:-doppio,doppio-uring}
workload=${WORKLOAD:-empty}
bench_core=${BENCH_CORE:-0}
out=${OUT:-perf/results/$(date -u +%Y-%m-%d)-protocols}
mkdir -p "$out"
cargo build --release -p doppio-bench >&2
bench=target/release/doppio

run() { # version round
    echo "== v$1 round $2" >&2
    taskset -c "$bench_core" "$bench" run -w "$workload" -d "$((secs * 2))s" --warmup 2s \
        -p "$c" -t 1 --driver "$drivers" --segments 2 -q --protocol "$1" --tag "v$1-r$2" \
        -o "$out/v$1-r$2.json" "$node" >"$out/v$1-r$2.txt"
}
for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) -eq 1 ]; then run 4 "$r"; run 5 "$r"; else run 5 "$r"; run 4 "$r"; fi
done

python3 - "$out" <<'PY' >"$out/table.md"
import glob, json, sys
from collections import defaultdict
out = sys.argv[1]
acc = defaultdict(lambda: defaultdict(list))
for path in sorted(glob.glob(f"{out}/v*-r*.json")):
    version = path.rsplit("/", 1)[1].split("-r")[0]
    report = json.load(open(path))
    for name, b in report["backends"].items():
        spoke = report["config"].get("protocol_versions", {}).get(name)
        assert f"v{spoke}" == version, f"{path}: {name} spoke v{spoke}"
        acc[name][version].append(b)
def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else float("nan")
print("| backend | version | req/s | CPU us/req | syscalls/req | runs |")
print("|---|---|---:|---:|---:|---:|")
for name in sorted(acc):
    for v in ("v4", "v5"):
        bs = acc[name][v]
        print(f"| {name} | {v} | {mean([b['throughput_rps'] for b in bs]):,.0f} | "
              f"{mean([b['cpu_us_per_req'] for b in bs]):.2f} | "
              f"{mean([b['syscalls_per_req'] for b in bs]):.3f} | "
              + ", ".join(f"{b['cpu_us_per_req']:.2f}" for b in bs) + " |")
print()
print("| backend | v5/v4 client CPU per request | v5/v4 throughput |")
print("|---|---:|---:|")
for name in sorted(acc):
    a, b = acc[name]["v4"], acc[name]["v5"]
    cpu = mean([x['cpu_us_per_req'] for x in b]) / mean([x['cpu_us_per_req'] for x in a])
    tp = mean([x['throughput_rps'] for x in b]) / mean([x['throughput_rps'] for x in a])
    print(f"| {name} | {cpu:.3f} | {tp:.3f} |")
PY
cat "$out/table.md"
