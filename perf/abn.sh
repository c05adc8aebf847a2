#!/usr/bin/env bash
# Several builds of the bench on loopback in one run, their order rotating every round
# (build (k + r) mod N runs k-th in round r), so that a drift over the run favours none and
# each round pairs every build with the first. Same set-up as perf/ab.sh: one stub on core 1,
# the bench on core 0, the `empty` workload.
#
#   perf/abn.sh OUT ROUNDS STUB_BIN BUILD_DIR...
#
# Each BUILD_DIR holds a `doppio` binary. Environment: C (256), SECS (6, per segment; 2
# segments per backend), DRIVERS (doppio,doppio-uring), STUB_RUNTIME (glommio).
# Output: OUT/<build>-r<round>.json and .txt, and OUT/summary.md: per backend, each build's
# client CPU per request over the first build's, paired by round (geometric mean, t).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
. "$ROOT/scripts/setup-lib.sh"
raise_memlock >&2
ensure_tracefs >&2

out=${1:?usage: perf/abn.sh OUT ROUNDS STUB_BIN BUILD_DIR...}
rounds=${2:?usage: perf/abn.sh OUT ROUNDS STUB_BIN BUILD_DIR...}
stub_bin=${3:?usage: perf/abn.sh OUT ROUNDS STUB_BIN BUILD_DIR...}
shift 3
builds=("$@")
[ ${#builds[@]} -ge 2 ] || { echo "perf/abn.sh: give at least two build folders" >&2; exit 2; }
mkdir -p "$out"
start_stub "$stub_bin" 1 19045 "${STUB_RUNTIME:-glommio}" "$out"
n=${#builds[@]}
secs=${SECS:-6}
for r in $(seq 0 $((rounds - 1))); do
    echo "== round $r $(date +%T)" >&2
    for k in $(seq 0 $((n - 1))); do
        dir=${builds[$(((k + r) % n))]}
        name=$(basename "$dir")
        taskset -c 0 "$dir/doppio" run -w empty -d "$((secs * 2))s" --warmup 2s -p "${C:-256}" -t 1 \
            --driver "${DRIVERS:-doppio,doppio-uring}" --segments 2 -q --tag "$name-r$r" \
            -o "$out/$name-r$r.json" 127.0.0.1:19045 >"$out/$name-r$r.txt"
    done
done
python3 - "$out" "$rounds" "${DRIVERS:-doppio,doppio-uring}" "${builds[@]}" >"$out/summary.md" <<'PY'
import json, math, os, statistics as st, sys
out, rounds, drivers, builds = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(","), sys.argv[4:]
names = [os.path.basename(b.rstrip("/")) for b in builds]
cpu = lambda b, r, d: json.load(open(f"{out}/{b}-r{r}.json"))["backends"][d]["cpu_us_per_req"]
print(f"# Client CPU per request over {names[0]}, paired by round ({rounds} rounds)\n")
print("| backend | build | ratio | t | above |\n|---|---|---|---|---|")
for d in drivers:
    for b in names[1:]:
        logs = [math.log(cpu(b, r, d) / cpu(names[0], r, d)) for r in range(rounds)]
        m = st.mean(logs)
        se = st.stdev(logs) / math.sqrt(len(logs)) if len(logs) > 1 else float("nan")
        above = sum(1 for x in logs if x > 0)
        print(f"| {d} | {b} | {math.exp(m):.3f} | {m / se:.2f} | {above} of {rounds} |")
PY
cat "$out/summary.md"
