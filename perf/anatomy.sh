#!/usr/bin/env bash
# Anatomy study: where each microsecond of a request goes, for doppio (glommio), doppio on its
# own io_uring runtime and scylla-rust-driver, on the `empty` workload against the stub
# (perf/stub) on loopback, the stub pinned to one core and the bench to the other:
#   - anatomy-c1 and anatomy-c256: `doppio run --anatomy` of the three backends (rotating
#     rounds), the ANATOMY table in each .txt;
#   - flame-c256: a --flamegraph run of doppio-uring and scylla, with their differential
#     flamegraph of CPU per request (flame-c256-diff-doppio-uring-scylla.svg);
#   - cost: what --anatomy costs, PAIRS pairs of runs at C = 256 without and with it (the order
#     alternating), summarised in cost.md (client CPU per request of each backend, plain vs
#     sampled, and perf record's own CPU per request).
#   - cassandra: with CASSANDRA=ADDR (a node, e.g. 127.0.0.1:9042, started with
#     scripts/cassandra.sh), the `read` workload's anatomy of the three backends there
#     (10,000 rows loaded first, a 15 s server warm-up, C = 64), the node's CPU beside it.
# Writes perf/results/<date>-anatomy/ (OUT overrides it).
#
#   perf/anatomy.sh [SECONDS_PER_SEGMENT]   (default 5; PAIRS default 3)
#   CASSANDRA=127.0.0.1:9042 ONLY=cassandra perf/anatomy.sh   (the Cassandra part alone)
# Stop anything else that runs on these cores for numbers worth keeping.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/setup-lib.sh
. "$ROOT/scripts/setup-lib.sh"
raise_memlock >&2
ensure_tracefs >&2

secs=${1:-5}
pairs=${PAIRS:-3}
port=${PORT:-19142}
out=${OUT:-perf/results/$(date -u +%Y-%m-%d)-anatomy}
mkdir -p "$out"

cargo build --release -p doppio-bench -p doppio-stub >&2
bench=target/release/doppio

if [ -n "${CASSANDRA:-}" ]; then
    echo "anatomy against $CASSANDRA" >&2
    "$bench" schema -w read -q "$CASSANDRA"
    "$bench" load -w read -P rows=10000 -p 128 -q "$CASSANDRA"
    "$bench" run -w read -P rows=10000 "$CASSANDRA" -p 64 --server-warmup 15s \
        -d "$((secs * 5))s" --segments 5 --warmup 500ms -q \
        --driver doppio,doppio-uring,scylla --anatomy --tag "anatomy cassandra" \
        -o "$out/anatomy-cassandra.json" >"$out/anatomy-cassandra.txt"
fi
[ "${ONLY:-}" = cassandra ] && exit 0

start_stub target/release/doppio-stub 1 "$port" glommio "$out"

run() {
    taskset -c 0 "$bench" run -w empty "127.0.0.1:$port" -t 1 --warmup 2s -q "$@"
}

for c in 1 256; do
    echo "anatomy at C = $c" >&2
    run -p "$c" -d "$((secs * 5))s" --segments 5 --driver doppio,doppio-uring,scylla --anatomy \
        --tag "anatomy c$c" -o "$out/anatomy-c$c.json" >"$out/anatomy-c$c.txt"
done

echo "flamegraphs at C = 256" >&2
run -p 256 -d "$((secs * 2))s" --driver doppio-uring,scylla --flamegraph "$out/flame-c256" \
    --tag "flamegraph c256" -o "$out/flame-c256.json" >"$out/flame-c256.txt"
# The folded stacks are large and can be made again; the drawings are kept.
rm -f "$out"/flame-c256-*.folded

for i in $(seq "$pairs"); do
    order=(plain anatomy)
    [ $((i % 2)) -eq 0 ] && order=(anatomy plain)
    for kind in "${order[@]}"; do
        echo "cost pair $i: $kind" >&2
        extra=()
        [ "$kind" = anatomy ] && extra=(--anatomy)
        run -p 256 -d "$((secs * 2))s" --driver doppio,doppio-uring,scylla "${extra[@]}" \
            --tag "cost $kind $i" -o "$out/cost-$kind-$i.json" >"$out/cost-$kind-$i.txt"
    done
done

python3 - "$out" "$pairs" >"$out/cost.md" <<'PY'
import json, statistics, sys
out, pairs = sys.argv[1], int(sys.argv[2])
drivers = ["doppio", "doppio-uring", "scylla"]
def cpu(kind, i, d):
    b = json.load(open(f"{out}/cost-{kind}-{i}.json"))["backends"][d]
    rec = (b.get("anatomy") or {}).get("recorder_cpu_us_per_req")
    return b["cpu_us_per_req"], rec
print("# What --anatomy costs (C = 256, empty workload, stub on loopback)\n")
print(f"{pairs} pairs of runs, plain and --anatomy, the order alternating; client CPU per")
print("request of the bench's own threads (getrusage), and perf record's own CPU per request")
print("(not in the client's).\n")
print("| backend | plain us/req | --anatomy us/req | change | perf record us/req |")
print("|---|---|---|---|---|")
for d in drivers:
    plain = [cpu("plain", i, d)[0] for i in range(1, pairs + 1)]
    sampled = [cpu("anatomy", i, d) for i in range(1, pairs + 1)]
    a = [s[0] for s in sampled]
    rec = [s[1] for s in sampled if s[1] is not None]
    p, q = statistics.mean(plain), statistics.mean(a)
    print(f"| {d} | {p:.3f} ({', '.join(f'{x:.3f}' for x in plain)}) | "
          f"{q:.3f} ({', '.join(f'{x:.3f}' for x in a)}) | {100 * (q / p - 1):+.1f} % | "
          f"{statistics.mean(rec):.3f} |")
PY
cat "$out/cost.md" >&2
