#!/usr/bin/env bash
# What a cassandra-stress profile run costs per request beside the same workload in TOML:
# bench/profiles/timeseries.yaml run three ways, alternating in every round,
#   profile    --profile (converted in memory),
#   converted  -w of what `doppio profile convert` printed for it (the same statements and
#              values: the cost of reading a profile instead of TOML, expected 0),
#   twin       -w perf/profile-overhead/timeseries-twin.toml (the same statements, value
#              types and sizes, written by hand with plain generators: the cost of
#              cassandra-stress's semantics, identities drawn through distributions),
# first on the null backend (the bench's own floor: generating and encoding the values,
# precise; as fast as it goes), then on doppio-uring against a local Cassandra (the whole
# client per request, every way released at the same constant RATE, below the node's
# capacity for all three, so that CPU per request is compared at equal load). The
# operations: the insert (a batch of 50 rows), `latest` and `window`, equal weights; 20
# partitions.
#
#   perf/profile-overhead.sh [SECONDS] [ROUNDS] [RATE]   (defaults: 5 5 400)
#
# Environment: NODE (default 127.0.0.1:9042, started with scripts/cassandra.sh when it does
# not answer), CORE (default 0: the bench's core), OUT (default
# perf/results/<date>-profile-overhead). Writes OUT/<backend>-<way>-r<round>.json and
# OUT/table.md (median, min and max of client CPU per request per way and backend, and
# each way's median against the twin's and the converted TOML's).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

secs=${1:-5}
rounds=${2:-5}
rate=${3:-400}
node=${NODE:-127.0.0.1:9042}
core=${CORE:-0}
out=${OUT:-perf/results/$(date -u +%Y-%m-%d)-profile-overhead}
mkdir -p "$out"

cargo build --release -p doppio-bench >&2
bench=target/release/doppio
profile=bench/profiles/timeseries.yaml
twin=perf/profile-overhead/timeseries-twin.toml
"$bench" profile convert "$profile" >"$out/converted.toml" 2>/dev/null
mix=(-P 'population=UNIFORM(1..20)' -P ops_latest=1 -P ops_window=1)

if ! "$bench" schema "$node" --profile "$profile" -q >/dev/null 2>&1; then
    scripts/cassandra.sh start >&2
    "$bench" schema "$node" --profile "$profile" -q >&2
fi

run() { # backend way round
    local backend=$1 way=$2 r=$3 what
    case $way in
    profile) what=(--profile "$profile" "${mix[@]}") ;;
    converted) what=(-w "$out/converted.toml" "${mix[@]}") ;;
    twin) what=(-w "$twin") ;;
    esac
    local pace=()
    [ "$backend" = null ] || pace=(-r "$rate")
    taskset -c "$core" "$bench" run "$node" --driver "$backend" "${what[@]}" "${pace[@]}" \
        -d "${secs}s" --warmup 1s -p 32 -t 1 -q -o "$out/$backend-$way-r$r.json" >/dev/null
}

for backend in null doppio-uring; do
    for r in $(seq 1 "$rounds"); do
        # The order turns each round, so that no way always runs first.
        case $((r % 3)) in
        1) ways=(profile converted twin) ;;
        2) ways=(converted twin profile) ;;
        0) ways=(twin profile converted) ;;
        esac
        for way in "${ways[@]}"; do
            echo "== $backend $way round $r" >&2
            run "$backend" "$way" "$r"
        done
    done
done

python3 - "$out" "$rounds" >"$out/table.md" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
print("| backend | way | client CPU per request, median [us] | min | max | requests per round | rows per request | against converted | against twin |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for backend in ["null", "doppio-uring"]:
    med = {}
    lines = []
    for way in ["profile", "converted", "twin"]:
        cpu, req, rows = [], [], []
        for r in range(1, rounds + 1):
            j = json.load(open(f"{out}/{backend}-{way}-r{r}.json"))
            b = j["backends"][backend]
            if b["errors"]:
                sys.exit(f"{backend} {way} round {r}: {b['errors']} errors")
            cpu.append(b["cpu_us_per_req"])
            req.append(b["requests"])
            rows.append(b["rows"] / max(b["requests"], 1))
        med[way] = statistics.median(cpu)
        lines.append((way, med[way], min(cpu), max(cpu), int(statistics.median(req)),
                      statistics.median(rows)))
    for way, m, lo, hi, n, r in lines:
        print(f"| {backend} | {way} | {m:.2f} | {lo:.2f} | {hi:.2f} | {n} | {r:.1f} | "
              f"{m / med['converted']:.3f}x | {m / med['twin']:.3f}x |")
PY
cat "$out/table.md"
