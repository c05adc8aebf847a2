#!/usr/bin/env bash
# The idle path (issue 42): each backend's load curve on the loopback stub, and what the
# bench's release grid and doppio-uring's own idle path (timer slack, batched wait) each
# contribute. One `doppio curve` per configuration, the three backends interleaved in rotated
# rounds at each load (shares of the slowest one's capacity, probed once per curve):
#
#   finest    --release-grid 0 --timer-slack 0 --batch-wait 0   (each request released at its
#             own due time, the runtime's idle path off: how the bench and runtime were before)
#   grid      --release-grid 2ms --timer-slack 0 --batch-wait 0 (the bench's grid alone)
#   slack     --release-grid 0 --timer-slack 50us --batch-wait 0
#   batch     --release-grid 0 --timer-slack 0 --batch-wait BATCH
#   defaults  no option: what a user gets
#
#   perf/idle-path.sh [SECS_PER_POINT] [CONFIGS...]   (defaults: 25; all five)
#
# SECS_PER_POINT is each backend's measured time at each load, split over ROUNDS rounds.
# Environment: LOADS (10%,30%,50%,70%,90%), ROUNDS (5), C (64), BATCH (200us), DRIVERS
# (doppio,doppio-uring,scylla), STUB_CORE (1), BENCH_CORE (0), OUT (perf/results/<date>-
# idle-path), NODE (default: a stub started here on STUB_CORE; give 127.0.0.1:9042 and
# WORKLOAD=read ARGS="-P rows=10000" for a local Cassandra, loaded beforehand).
# Writes OUT/<config>/ (doppio curve's folder: a report per load, curve.json, curve.md,
# curve.svg) and OUT/summary.md: each configuration's CPU ratios over scylla per load, and
# doppio-uring's waits per request.
# Stop anything else on these cores first (a local Cassandra when measuring the stub: its
# idle JVM takes a tenth of a core): the machine has two.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/setup-lib.sh
. "$ROOT/scripts/setup-lib.sh"
raise_memlock >&2
ensure_tracefs >&2

secs=${1:-25}
shift || true
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(finest grid slack batch defaults)
loads=${LOADS:-10%,30%,50%,70%,90%}
rounds=${ROUNDS:-5}
batch=${BATCH:-200us}
drivers=${DRIVERS:-doppio,doppio-uring,scylla}
bench_core=${BENCH_CORE:-0}
workload=${WORKLOAD:-empty}
out=${OUT:-perf/results/$(date -u +%Y-%m-%d)-idle-path}
mkdir -p "$out"

cargo build --release -p doppio-bench -p doppio-stub >&2
bench=target/release/doppio
node=${NODE:-}
if [ -z "$node" ]; then
    start_stub target/release/doppio-stub "${STUB_CORE:-1}" 19046 glommio "$out"
    node=127.0.0.1:19046
fi

for config in "${configs[@]}"; do
    case $config in
        finest) opts=(--release-grid 0 --timer-slack 0 --batch-wait 0) ;;
        grid) opts=(--release-grid 2ms --timer-slack 0 --batch-wait 0) ;;
        slack) opts=(--release-grid 0 --timer-slack 50us --batch-wait 0) ;;
        batch) opts=(--release-grid 0 --timer-slack 0 --batch-wait "$batch") ;;
        defaults) opts=() ;;
        *) echo "perf/idle-path.sh: unknown configuration $config" >&2; exit 2 ;;
    esac
    echo "== $config $(date +%T)" >&2
    # shellcheck disable=SC2086 # ARGS is a list of options
    taskset -c "$bench_core" "$bench" curve -w "$workload" ${ARGS:-} --driver "$drivers" -t 1 \
        -p "${C:-64}" --loads "$loads" -d "${secs}s" --segments "$rounds" --warmup 500ms -q \
        --force -o "$out/$config" "${opts[@]}" "$node" >"$out/$config.txt"
done

python3 - "$out" "${configs[@]}" >"$out/summary.md" <<'PY'
import json, os, sys
out, configs = sys.argv[1], sys.argv[2:]
print("# Client CPU per request over scylla's, per load and configuration\n")
print("Each ratio is its load's VERDICT (paired by round, 99 % interval) where it compared the")
print("two; `behind` marks a point where a backend fell behind the release grid (its cost not")
print("compared: the ratio of means is shown).\n")
rows = {}
for c in configs:
    path = os.path.join(out, c, "curve.json")
    if not os.path.exists(path):
        continue
    curve = json.load(open(path))
    for r in curve["cpu_ratios"]:
        cell = f'{r["ratio"]:.2f}'
        if r.get("low") is not None:
            cell += f' ({r["low"]:.2f}-{r["high"]:.2f})'
        kept = all(
            p["kept_schedule"] is not False
            for b in (r["backend"], r["over"])
            for p in curve["backends"].get(b, [])
            if abs(p["share"] - r["share"]) < 1e-9
        )
        rows.setdefault((r["backend"], r["share"]), {})[c] = cell + ("" if kept else " behind")
print("| backend | load | " + " | ".join(configs) + " |")
print("|---|---|" + "---|" * len(configs))
for (b, share), cells in sorted(rows.items()):
    print(f"| {b} | {share * 100:.0f} % | " + " | ".join(cells.get(c, "") for c in configs) + " |")
print("\n# doppio-uring: client CPU (us) and waiting io_uring_enter per request\n")
print("| load | " + " | ".join(configs) + " |")
print("|---|" + "---|" * len(configs))
table = {}
for c in configs:
    path = os.path.join(out, c, "curve.json")
    if not os.path.exists(path):
        continue
    for p in json.load(open(path))["backends"].get("doppio-uring", []):
        w = p["waits_per_req"]
        cell = f'{p["cpu_us_per_req"]:.2f} us, {w["waiting"]:.3f} waits' if w else f'{p["cpu_us_per_req"]:.2f} us'
        table.setdefault(p["share"], {})[c] = cell
for share, cells in sorted(table.items()):
    print(f"| {share * 100:.0f} % | " + " | ".join(cells.get(c, "") for c in configs) + " |")
PY
cat "$out/summary.md"
