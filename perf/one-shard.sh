#!/usr/bin/env bash
# Driver overhead on one shard against the local Cassandra: prepared single-row reads
# (built-in `read` workload) at concurrency 1, 32 and 256, doppio (glommio), doppio-uring
# and scylla-rust-driver alternating in the same invocation (A B C A B C), one thread each. Writes the JSON reports and
# a markdown table to perf/results/<date>-one-shard/.
#
#   perf/one-shard.sh [SECONDS_PER_SEGMENT] [CONCURRENCIES...]    (defaults: 10, 1 32 256)
# Each driver is measured for two segments of SECONDS_PER_SEGMENT (A B C A B C).
#
# Needs a Cassandra on 127.0.0.1:9042 (scripts/cassandra.sh start) and a release build
# (cargo build --release -p doppio-bench); client CPU, syscalls and context switches per
# request come from the bench's own OVERHEAD section (rusage and perf_event_open).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
secs=${1:-10}
shift || true
conc=("$@")
[ ${#conc[@]} -gt 0 ] || conc=(1 32 256)
out="perf/results/$(date -u +%Y-%m-%d)-one-shard"
mkdir -p "$out"
bin=target/release/doppio
[ -x "$bin" ] || cargo build --release -p doppio-bench
"$bin" schema -w read -q
"$bin" load -w read -P rows=100000 -q >/dev/null
for c in "${conc[@]}"; do
    echo "== concurrency $c" >&2
    "$bin" run -w read -P rows=100000 -d "$((secs * 2))s" --warmup 2s -p "$c" -t 1 \
        --driver doppio,doppio-uring,scylla --segments 2 -q --tag "c$c" -o "$out/c$c.json" >"$out/c$c.txt"
done
{
    echo "| driver | C | req/s | client CPU us/req (user/sys) | syscalls/req | ctx switches/req | req/write | req/read | p50 ms | p99 ms |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for c in "${conc[@]}"; do
        jq -r --arg c "$c" '.backends | to_entries[] | .value |
          "| \(.driver) | \($c) | \(.throughput_rps|round) | \(.cpu_us_per_req*100|round/100) (\(.cpu_user_us_per_req*100|round/100)/\(.cpu_sys_us_per_req*100|round/100)) | \(if .syscalls_per_req then (.syscalls_per_req*1000|round/1000) else "n/a" end) | \(.ctx_switches_per_req*1000|round/1000) | \(if .requests_per_flush then (.requests_per_flush*10|round/10) else "n/a" end) | \(if .requests_per_read then (.requests_per_read*10|round/10) else "n/a" end) | \(.latency_ns.p50/1e6*1000|round/1000) | \(.latency_ns.p99/1e6*1000|round/1000) |"' \
          "$out/c$c.json"
    done
    for d in doppio doppio-uring; do
        echo
        echo "| C | CPU $d/scylla | syscalls $d/scylla | throughput $d/scylla |"
        echo "|---|---|---|---|"
        for c in "${conc[@]}"; do
            jq -r --arg c "$c" --arg d "$d" '.backends as $b | $b[$d] as $x |
              "| \($c) | \(($x.cpu_us_per_req / $b.scylla.cpu_us_per_req)*100|round/100) | \(if ($x.syscalls_per_req and $b.scylla.syscalls_per_req) then (($x.syscalls_per_req / $b.scylla.syscalls_per_req)*100|round/100) else "n/a" end) | \(($x.throughput_rps / $b.scylla.throughput_rps)*100|round/100) |"' "$out/c$c.json"
        done
    done
} >"$out/table.md"
cat "$out/table.md"
