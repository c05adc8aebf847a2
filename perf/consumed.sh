#!/usr/bin/env bash
# The cost of consuming results, on loopback: the `empty` workload against the stub at one
# concurrency, every backend alternating in each invocation (A B C A B C), once with every
# row decoded (the default since issue 18) and once with --discard-results, the two modes
# alternating by round (decoded, discarded, discarded, decoded, ...) so that drift on this
# noisy 2-core machine falls on both alike. Writes perf/results/<date>-results-consumed/:
# the JSON and text report of each invocation and table.md (mean per mode and backend of
# req/s, client CPU us/req, syscalls/req and rows/s, and the decoded - discarded difference).
#
#   perf/consumed.sh [SECONDS_PER_SEGMENT] [CONCURRENCY] [ROUNDS]   (defaults: 10 256 2)
#
# Environment: STUB_CORE (default 1), BENCH_CORE (default 0), OUT overrides the folder,
# DRIVERS (default doppio,doppio-uring,scylla). Stop anything else on these cores first.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/setup-lib.sh
. "$ROOT/scripts/setup-lib.sh"
raise_memlock >&2
ensure_tracefs >&2

secs=${1:-10}
c=${2:-256}
rounds=${3:-2}
stub_core=${STUB_CORE:-1}
bench_core=${BENCH_CORE:-0}
drivers=${DRIVERS:-doppio,doppio-uring,scylla}
out=${OUT:-perf/results/$(date -u +%Y-%m-%d)-results-consumed}
mkdir -p "$out"

cargo build --release -p doppio-bench -p doppio-stub >&2
bench=target/release/doppio
port=19044
start_stub target/release/doppio-stub "$stub_core" "$port" glommio "$out"

run() { # name, extra args...
    local name=$1
    shift
    echo "== $name" >&2
    taskset -c "$bench_core" "$bench" run -w empty -d "$((secs * 2))s" --warmup 2s -p "$c" -t 1 \
        --driver "$drivers" --segments 2 -q --tag "$name" -o "$out/$name.json" "$@" \
        "127.0.0.1:$port" >"$out/$name.txt"
}

for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) -eq 1 ]; then
        run "decoded-r$r"
        run "discarded-r$r" --discard-results
    else
        run "discarded-r$r" --discard-results
        run "decoded-r$r"
    fi
done

python3 - "$out" <<'EOF' >"$out/table.md"
import glob, json, sys
from collections import defaultdict
out = sys.argv[1]
acc = defaultdict(lambda: defaultdict(list))
for path in sorted(glob.glob(f"{out}/*-r*.json")):
    mode = path.rsplit("/", 1)[1].split("-r")[0]
    report = json.load(open(path))
    for name, b in report["backends"].items():
        acc[name][mode].append(b)
def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else float("nan")
print("| backend | mode | req/s | CPU us/req | syscalls/req | rows/s |")
print("|---|---|---:|---:|---:|---:|")
for name in sorted(acc):
    for mode in ("decoded", "discarded"):
        bs = acc[name][mode]
        print(f"| {name} | {mode} | {mean([b['throughput_rps'] for b in bs]):,.0f} | "
              f"{mean([b['cpu_us_per_req'] for b in bs]):.3f} | "
              f"{mean([b['syscalls_per_req'] for b in bs]):.4f} | "
              f"{mean([b.get('rows_per_s') for b in bs]):,.0f} |")
print()
print("| backend | decoding costs (CPU us/req) | throughput change |")
print("|---|---:|---:|")
for name in sorted(acc):
    d, x = acc[name]["decoded"], acc[name]["discarded"]
    cpu = mean([b['cpu_us_per_req'] for b in d]) - mean([b['cpu_us_per_req'] for b in x])
    tp = mean([b['throughput_rps'] for b in d]) / mean([b['throughput_rps'] for b in x]) - 1
    print(f"| {name} | {cpu:+.3f} | {tp * 100:+.1f} % |")
EOF
cat "$out/table.md"
