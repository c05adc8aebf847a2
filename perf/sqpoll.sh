#!/usr/bin/env bash
# The SQPOLL study: doppio-uring against doppio-uring-sqpoll (doppio's own io_uring runtime
# without and with the kernel's submission thread) on the loopback stub, `empty` workload,
# protocol v4, the two alternating in each run (A B A B). The stub is pinned to core 1 and the
# bench to core 0; on two cores the SQ thread has to share one of them, so each placement in
# SQ_CORES gets its own runs: with the stub (1: the server loses time to it) and with the
# bench (0: the executor does). Writes perf/results/<date>-sqpoll/: the JSON and text reports
# per placement and concurrency (sq<CORE>-c<C>.json/.txt) and summary.md
# (perf/sqpoll-summary.py: req/s, client CPU per request split into the process's own
# threads and the SQ thread, syscalls per request by kind, the executor's enters by reason).
#
#   perf/sqpoll.sh [SECONDS_PER_SEGMENT] [CONCURRENCIES...]   (defaults: 10, 1 256 1024)
#
# Environment: STUB_CORE (default 1), BENCH_CORE (default 0), SQ_CORES (default "1 0"),
# IDLE (--sqpoll-idle, default 10ms), OUT (the folder), STUB_RUNTIME (glommio, the default,
# or uring). Stop anything else that runs on these cores for numbers worth keeping.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/setup-lib.sh
. "$ROOT/scripts/setup-lib.sh"
raise_memlock >&2
ensure_tracefs >&2

secs=${1:-10}
shift || true
conc=("$@")
[ ${#conc[@]} -gt 0 ] || conc=(1 256 1024)
stub_core=${STUB_CORE:-1}
bench_core=${BENCH_CORE:-0}
read -r -a sq_cores <<<"${SQ_CORES:-1 0}"
idle=${IDLE:-10ms}
stub_runtime=${STUB_RUNTIME:-glommio}
out=${OUT:-perf/results/$(date -u +%Y-%m-%d)-sqpoll}
mkdir -p "$out"

cargo build --release -p doppio-bench -p doppio-stub >&2
bench=target/release/doppio
stub_bin=target/release/doppio-stub

port=19044
start_stub "$stub_bin" "$stub_core" "$port" "$stub_runtime" "$out"
node="127.0.0.1:$port"

for sq in "${sq_cores[@]}"; do
    for c in "${conc[@]}"; do
        echo "== SQ thread on core $sq, concurrency $c" >&2
        taskset -c "$bench_core" "$bench" run -w empty -d "$((secs * 2))s" --warmup 2s -p "$c" \
            -t 1 --protocol 4 --driver doppio-uring,doppio-uring-sqpoll --segments 2 \
            --sqpoll-idle "$idle" --sqpoll-cpu "$sq" -q --tag "sq$sq-c$c" \
            -o "$out/sq$sq-c$c.json" "$node" >"$out/sq$sq-c$c.txt"
    done
done
python3 perf/sqpoll-summary.py "$out"/sq*-c*.json >"$out/summary.md"
echo "results in $out" >&2
