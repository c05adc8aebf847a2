#!/usr/bin/env bash
# The metadata-id extension on the `read` workload: two emulated one-shard ScyllaDB nodes on
# core 1, one offering SCYLLA_USE_METADATA_ID (port 9101) and one not (9103); the client on
# core 0 at C = 256; rounds x backends x {with, without}, interleaved. Reports in $OUT.
#   cargo build --release -p doppio-bench -p doppio-stub && OUT=/tmp/mid perf/results/2026-11-29-issue46-metadata-id/run.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/metadata-id}
mkdir -p "$OUT"
target/release/doppio-stub --listen 127.0.0.1:9101 --cores 1 --scylla-shards 1 -q &
with=$!
target/release/doppio-stub --listen 127.0.0.1:9103 --cores 1 --scylla-shards 1 --scylla-without metadata-id -q &
without=$!
trap 'kill $with $without' EXIT
sleep 1
for r in 1 2 3 4 5; do
    for d in doppio doppio-uring scylla; do
        for x in with:9101 without:9103; do
            n=${x%%:*} p=${x##*:}
            target/release/doppio run -w read "127.0.0.1:$p" --driver "$d" -d 8s --warmup 2s -p 256 -q \
                -o "$OUT/r$r-$d-$n.json" >"$OUT/r$r-$d-$n.log" 2>&1 || echo "failed: round $r $d $n"
        done
    done
done
