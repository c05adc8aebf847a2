#!/usr/bin/env bash
# Before/after of one change on loopback: two builds of the bench, run in turns against the
# same stub, the same workload and concurrency, the bench pinned to one core and the stub to
# the other. Each round runs A then B (then the next round B then A, so that neither always
# goes first); every run interleaves the doppio backends in segments as usual.
#
#   perf/ab.sh A_DIR B_DIR [ROUNDS] [SECONDS]
#
# A_DIR and B_DIR hold a `doppio` binary each (copy target/release/doppio aside before the
# change, build after it). The stub is B's (B_DIR/doppio-stub), or target/release's.
# Environment: C (concurrency, 256), WORKLOAD (empty), DRIVERS (doppio,doppio-uring),
# STUB_RUNTIME (glommio), OUT (perf/results/<date>-ab), A_ARGS and B_ARGS (extra options of
# one side only, e.g. B_ARGS=--discard-results when B consumes results and A predates it).
# Output: OUT/{a,b}-rN.json and .txt, and OUT/summary.md (per backend: throughput, client
# CPU per request and syscalls per request of every run, and the B/A ratio of the medians).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
. "$ROOT/scripts/setup-lib.sh"
raise_memlock >&2
ensure_tracefs >&2

a_dir=${1:?usage: perf/ab.sh A_DIR B_DIR [ROUNDS] [SECONDS]}
b_dir=${2:?usage: perf/ab.sh A_DIR B_DIR [ROUNDS] [SECONDS]}
rounds=${3:-3}
secs=${4:-10}
conc=${C:-256}
workload=${WORKLOAD:-empty}
drivers=${DRIVERS:-doppio,doppio-uring}
stub_runtime=${STUB_RUNTIME:-glommio}
out=${OUT:-perf/results/$(date -u +%Y-%m-%d)-ab}
mkdir -p "$out"
stub_bin=$b_dir/doppio-stub
[ -x "$stub_bin" ] || stub_bin=target/release/doppio-stub

port=19044
start_stub "$stub_bin" 1 "$port" "$stub_runtime" "$out"

run() { # label dir round
    local extra=${A_ARGS:-}
    [ "$1" = b ] && extra=${B_ARGS:-}
    # shellcheck disable=SC2086 # the extra options are words
    taskset -c 0 "$2/doppio" run $extra -w "$workload" -d "$((secs * 2))s" --warmup 2s -p "$conc" -t 1 \
        --driver "$drivers" --segments 2 -q --tag "$1-r$3" -o "$out/$1-r$3.json" \
        "127.0.0.1:$port" >"$out/$1-r$3.txt"
}
for r in $(seq "$rounds"); do
    echo "== round $r" >&2
    if [ $((r % 2)) = 1 ]; then run a "$a_dir" "$r"; run b "$b_dir" "$r"; else run b "$b_dir" "$r"; run a "$a_dir" "$r"; fi
done

{
    echo "# A/B on loopback: workload $workload, C = $conc, $rounds rounds of ${secs}s x 2 segments"
    echo
    echo "A: $a_dir ${A_ARGS:-}, B: $b_dir ${B_ARGS:-}, stub: $stub_bin ($stub_runtime runtime, core 1), bench on core 0."
    echo
    echo "| backend | metric | A runs | B runs | B/A (medians) |"
    echo "|---|---|---|---|---|"
    for d in ${drivers//,/ }; do
        for m in throughput_rps cpu_us_per_req syscalls_per_req; do
            a=$(for f in "$out"/a-r*.json; do jq -r ".backends[\"$d\"].$m" "$f"; done | sort -g | tr '\n' ' ')
            b=$(for f in "$out"/b-r*.json; do jq -r ".backends[\"$d\"].$m" "$f"; done | sort -g | tr '\n' ' ')
            ratio=$(python3 -c "import statistics,sys; a=[float(x) for x in sys.argv[1].split()]; b=[float(x) for x in sys.argv[2].split()]; print(f'{statistics.median(b)/statistics.median(a):.3f}')" "$a" "$b")
            fmt() { python3 -c "import sys; print(', '.join(f'{float(x):.4g}' for x in sys.argv[1].split()))" "$1"; }
            echo "| $d | $m | $(fmt "$a") | $(fmt "$b") | $ratio |"
        done
    done
} >"$out/summary.md"
cat "$out/summary.md"
