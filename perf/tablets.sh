#!/usr/bin/env bash
# Tablets study: doppio (glommio), doppio on its own io_uring runtime and scylla-rust-driver
# against the stub playing a ScyllaDB cluster with tablets (3 nodes x 4 emulated shards, RF 3,
# TABLETS tablets per table; no ScyllaDB runs here), on a keyed read of ks.t. The stub is
# pinned to core 1, the bench to core 0.
#   - warmup-BACKEND: each backend alone on a fresh stub, no warm-up, one bench thread, C = 64:
#     the stub's count of answers carrying a tablet's routing (its misroutes) over the run, and
#     doppio's own (`tablet_misroutes` in its report);
#   - cost-tablets / cost-ring: the three backends in one rotated run (2 s warm-up) against
#     the tablet stub, then against the same cluster without tablets (routed by the token
#     ring): client CPU per request of each, side by side, and the misroutes once warm.
# Writes perf/results/<date>-tablets/ (OUT overrides it); summary.md sums it up.
#
#   perf/tablets.sh [SECONDS]   (default 10; TABLETS default 64)
# Stop anything else that runs on these cores for numbers worth keeping.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/setup-lib.sh
. "$ROOT/scripts/setup-lib.sh"
raise_memlock >&2

secs=${1:-10}
tablets=${TABLETS:-64}
port=${PORT:-19242}
out=${OUT:-perf/results/$(date -u +%Y-%m-%d)-tablets}
mkdir -p "$out"

cargo build --release -p doppio-bench -p doppio-stub >&2
bench=target/release/doppio
stubbin=target/release/doppio-stub

cat >"$out/by-key.toml" <<'TOML'
name = "by-key"
description = "a read of ks.t by a random key (the stub's routed keyspace)"
[[run]]
statement = "SELECT v FROM ks.t WHERE k = ?"
args = ["hash(i)"]
TOML

stub_pid=
stop_stub() {
    [ -n "$stub_pid" ] || return 0
    kill -TERM "$stub_pid" 2>/dev/null || true
    wait "$stub_pid" 2>/dev/null || true
    stub_pid=
}
trap stop_stub EXIT

# start_cluster NAME [extra stub options...]: a fresh 3-node stub, its output in NAME.stub.*
start_cluster() {
    local name=$1
    shift
    taskset -c 1 "$stubbin" --listen "127.0.0.1:$port" --cores 1 --no-pin -q \
        --nodes 3 --replication-factor 3 --scylla-shards 4 --routed-keyspace ks "$@" \
        >"$out/$name.stub.out" 2>"$out/$name.stub.err" &
    stub_pid=$!
    for _ in $(seq 100); do
        grep -q "^listening on" "$out/$name.stub.out" 2>/dev/null && return 0
        sleep 0.1
    done
    cat "$out/$name.stub.err" >&2
    return 1
}

# The stub's answers with a tablet's routing, summed over its nodes (after it stopped).
stub_misroutes() {
    sed -n 's/.* \([0-9][0-9]*\) answers with their tablet.s routing.*/\1/p' "$out/$1.stub.err" |
        awk '{ s += $1 } END { print s + 0 }'
}

run() {
    taskset -c 0 "$bench" run -w "$out/by-key.toml" "127.0.0.1:$port" -t 1 -q "$@"
}

{
    echo "# Tablets: misroutes and CPU per request"
    echo
    echo "Stub: 3 nodes x 4 emulated ScyllaDB shards, RF 3, $tablets tablets per table;"
    echo "bench: one thread on core 0, the stub on core 1; workload: by-key (SELECT by a random key)."
    echo
    echo "## Warming up (no warm-up, C = 64, ${secs} s, each backend alone on a fresh stub)"
    echo
    echo "| backend | requests | misroutes (stub) | misroutes (doppio's report) |"
    echo "| --- | --- | --- | --- |"
} >"$out/summary.md"

for driver in doppio doppio-uring scylla; do
    echo "warm-up of $driver" >&2
    start_cluster "warmup-$driver" --tablets "$tablets"
    run --driver "$driver" -p 64 -d "${secs}s" --warmup 0s --tag "tablets warm-up $driver" \
        -o "$out/warmup-$driver.json" >"$out/warmup-$driver.txt"
    stop_stub
    requests=$(jq -r ".backends[\"$driver\"].requests" "$out/warmup-$driver.json")
    own=$(jq -r ".backends[\"$driver\"].tablet_misroutes // \"not counted\"" \
        "$out/warmup-$driver.json")
    echo "| $driver | $requests | $(stub_misroutes "warmup-$driver") | $own |" >>"$out/summary.md"
done

{
    echo
    echo "## Cost (C = 256, three backends rotated in one run, 2 s warm-up, ${secs} s x 5 segments)"
    echo
} >>"$out/summary.md"
for mode in tablets ring; do
    echo "cost with $mode" >&2
    if [ "$mode" = tablets ]; then
        start_cluster "cost-$mode" --tablets "$tablets"
    else
        start_cluster "cost-$mode"
    fi
    run --driver doppio,doppio-uring,scylla -p 256 -d "$((secs * 5))s" --segments 5 \
        --warmup 2s --tag "tablets cost $mode" \
        -o "$out/cost-$mode.json" >"$out/cost-$mode.txt"
    stop_stub
    {
        echo "$mode: misroutes over the whole run, warm-ups included, all backends (stub): $(stub_misroutes "cost-$mode")"
        echo
        jq -r '.backends | to_entries[] |
            "- \(.key): \(.value.cpu_us_per_req * 1000 | round / 1000) us client CPU per request, \(.value.throughput_rps | floor) req/s, tablet_misroutes \(.value.tablet_misroutes // "not counted")"' \
            "$out/cost-$mode.json"
        echo
    } >>"$out/summary.md"
done
cat "$out/summary.md"
