#!/usr/bin/env bash
# Loopback max-throughput study: doppio on glommio, doppio on its own io_uring runtime and
# scylla-rust-driver on the `empty` workload, the stub server (perf/stub) pinned to one core
# and the bench to the other, at several concurrencies, the backends alternating in each run
# (A B C A B C). Writes
# perf/results/<date>-loopback/: the JSON and text reports per concurrency, table.md (req/s,
# client CPU us/req, syscalls/req, context switches/req, allocations/req, RSS, requests per
# write and read), plot.svg (req/s and CPU per request against concurrency), flamegraphs of
# every driver at one concurrency, and the allocation counts.
#
#   perf/loopback.sh [SECONDS_PER_SEGMENT] [CONCURRENCIES...]   (defaults: 10, 1 8 64 256 1024)
# Each driver is measured for two segments of SECONDS_PER_SEGMENT (A B C A B C).
#
# Environment: STUB_CORE (default 1), BENCH_CORE (default 0), FLAME_C (default 256; empty:
# no flamegraphs), ALLOC=0 skips the allocation-counting build, OUT overrides the folder,
# DRIVERS (default doppio,doppio-uring,scylla), STUB_RUNTIME (the stub's event loop:
# glommio, the default, or uring).
# Stop anything else that runs on these cores (a local Cassandra, builds) for numbers worth
# keeping: the machine has two.
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
[ ${#conc[@]} -gt 0 ] || conc=(1 8 64 256 1024)
stub_core=${STUB_CORE:-1}
bench_core=${BENCH_CORE:-0}
drivers=${DRIVERS:-doppio,doppio-uring,scylla}
stub_runtime=${STUB_RUNTIME:-glommio}
flame_c=${FLAME_C-256}
out=${OUT:-perf/results/$(date -u +%Y-%m-%d)-loopback}
mkdir -p "$out"

cargo build --release -p doppio-bench -p doppio-stub >&2
bench=target/release/doppio
stub_bin=target/release/doppio-stub

port=19043
start_stub "$stub_bin" "$stub_core" "$port" "$stub_runtime" "$out"
node="127.0.0.1:$port"

run() { # concurrency, extra args...
    local c=$1
    shift
    taskset -c "$bench_core" "$bench" run -w empty -d "$((secs * 2))s" --warmup 2s -p "$c" -t 1 \
        --driver "$drivers" --segments 2 -q "$@" "$node"
}

for c in "${conc[@]}"; do
    echo "== concurrency $c" >&2
    run "$c" --tag "c$c" -o "$out/c$c.json" >"$out/c$c.txt"
done
reports=()
for c in "${conc[@]}"; do reports+=("$out/c$c.json"); done
"$bench" sweep "${reports[@]}" --markdown "$out/table.md" --svg "$out/plot.svg" \
    --title "empty workload on loopback: bench on core $bench_core, stub on core $stub_core"

if [ -n "$flame_c" ]; then
    echo "== flamegraphs at concurrency $flame_c" >&2
    secs_flame=$((secs / 2 > 2 ? secs / 2 : 2))
    taskset -c "$bench_core" "$bench" run -w empty -d "$((secs_flame * 2))s" --warmup 2s \
        -p "$flame_c" -t 1 --driver "$drivers" --segments 2 -q --tag "flame-c$flame_c" \
        -o "$out/flame-c$flame_c.json" --flamegraph "$out/flame-c$flame_c" "$node" \
        >"$out/flame-c$flame_c.txt"
    # The folded stacks are large and can be remade from nothing but a re-run: keep the SVGs.
    rm -f "$out"/flame-c"$flame_c"-*.folded
fi

if [ "${ALLOC:-1}" != 0 ]; then
    echo "== heap allocations per request (counting allocator build)" >&2
    cargo build --release -p doppio-bench --features alloc-count --target-dir target/alloc-count >&2
    for c in 1 256; do
        taskset -c "$bench_core" target/alloc-count/release/doppio run -w empty -d "$((secs))s" \
            --warmup 2s -p "$c" -t 1 --driver "$drivers" --segments 2 -q --tag "alloc-c$c" \
            -o "$out/alloc-c$c.json" "$node" >"$out/alloc-c$c.txt"
    done
    "$bench" sweep "$out"/alloc-c1.json "$out"/alloc-c256.json --markdown "$out/alloc.md" >/dev/null
fi
echo "results in $out" >&2
