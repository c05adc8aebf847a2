#!/usr/bin/env bash
# Soak study: one long `doppio run` per target, with the bench process's resident memory and
# open file descriptors sampled every second from /proc while it runs. Two targets:
#   stub       the loopback stub (perf/stub), `empty` workload at C = 1024 (STUB_RATE: a rate
#              limit in req/s, default none)
#   cassandra  a real node (NODE, default the local Cassandra 127.0.0.1:9042), the `read`
#              workload (keyspace doppio_soak, ROWS rows loaded first) at C = 1024 with a rate
#              limit (CASSANDRA_RATE, default 2000 req/s)
# Writes perf/results/<date>-soak/: per target the JSON and text reports, proc.csv (seconds,
# VmRSS kB, VmHWM kB, open fds, threads) and summary.md from perf/soak-summary.py: RSS after
# the first minute and its peak later (growth in %), fds at the first minute and at the end,
# and the least-squares slope of the per-second throughput with its 95 % margin.
#
#   perf/soak.sh [SECONDS] [TARGET...]      (defaults: 1800, stub cassandra)
#
# Environment: DRIVER (default doppio-uring), BENCH_CORE (0), STUB_CORE (1), OUT.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/setup-lib.sh
. "$ROOT/scripts/setup-lib.sh"
raise_memlock >&2
ensure_tracefs >&2

secs=${1:-1800}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(stub cassandra)
driver=${DRIVER:-doppio-uring}
bench_core=${BENCH_CORE:-0}
stub_core=${STUB_CORE:-1}
out=${OUT:-perf/results/$(date -u +%Y-%m-%d)-soak}
mkdir -p "$out"

cargo build --release -p doppio-bench -p doppio-stub >&2
bench=target/release/doppio

# Samples /proc/PID every second until the process ends: seconds since start, VmRSS and
# VmHWM (kB), open descriptors, threads.
sample_proc() { # pid csv
    local pid=$1 csv=$2 t0 now
    t0=$(date +%s%N)
    echo "t_s,rss_kb,hwm_kb,fds,threads" >"$csv"
    while kill -0 "$pid" 2>/dev/null; do
        now=$(date +%s%N)
        awk -v t="$(((now - t0) / 1000000))" -v fds="$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)" '
            /^VmRSS:/ { rss = $2 } /^VmHWM:/ { hwm = $2 } /^Threads:/ { th = $2 }
            END { if (rss != "") printf "%.3f,%d,%d,%d,%d\n", t / 1000, rss, hwm, fds, th }' \
            "/proc/$pid/status" >>"$csv" 2>/dev/null || true
        sleep 1
    done
}

soak() { # name node extra-args...
    local name=$1 node=$2
    shift 2
    echo "== $name: ${secs}s against $node ($driver)" >&2
    taskset -c "$bench_core" "$bench" run --driver "$driver" -d "${secs}s" --warmup 5s -t 1 -q \
        --tag "soak-$name" -o "$out/$name.json" "$@" "$node" >"$out/$name.txt" &
    local pid=$!
    sample_proc "$pid" "$out/$name-proc.csv"
    wait "$pid"
}

for target in "${targets[@]}"; do
    case $target in
    stub)
        port=19047
        start_stub target/release/doppio-stub "$stub_core" "$port" glommio "$out"
        rate=()
        [ -z "${STUB_RATE:-}" ] || rate=(-r "$STUB_RATE")
        soak stub "127.0.0.1:$port" -w empty -p 1024 "${rate[@]}"
        kill -TERM "$stub_pid" 2>/dev/null || true
        wait "$stub_pid" 2>/dev/null || true
        ;;
    cassandra)
        node=${NODE:-127.0.0.1:9042}
        params=(-P keyspace=doppio_soak -P rows="${ROWS:-100000}")
        "$bench" schema -w read "${params[@]}" "$node" >&2
        "$bench" load -w read "${params[@]}" --driver "$driver" -q "$node" >/dev/null
        soak cassandra "$node" -w read "${params[@]}" -p 1024 -r "${CASSANDRA_RATE:-2000}"
        ;;
    *)
        echo "unknown target $target (stub, cassandra)" >&2
        exit 2
        ;;
    esac
done
python3 perf/soak-summary.py "$out" "${targets[@]}" >"$out/summary.md"
cat "$out/summary.md"
