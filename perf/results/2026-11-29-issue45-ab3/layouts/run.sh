#!/usr/bin/env bash
# Paths as on the machine it ran on: /work/lay-src a worktree at fb3c4f3, /work/lay-N the binaries.
# The same source linked five ways (lay-0 as linked, lay-1..4 with lld's section shuffle):
# each round runs every layout once, in a rotated order, against one stub (core 1), bench
# on core 0, as perf/ab.sh runs A and B.
set -euo pipefail
cd /work/main
. scripts/setup-lib.sh
raise_memlock >&2
ensure_tracefs >&2
out=${OUT:-/tmp/layouts}
mkdir -p "$out"
rounds=${1:-4}
secs=${2:-10}
port=19045
start_stub /work/lay-0/doppio-stub 1 "$port" glommio "$out"
layouts=(0 1 2 3 4)
n=${#layouts[@]}
for r in $(seq "$rounds"); do
  echo "== round $r" >&2
  for k in $(seq 0 $((n-1))); do
    l=${layouts[$(( (k + r) % n ))]}
    taskset -c 0 /work/lay-$l/doppio run -w empty -d "$((secs * 2))s" --warmup 2s -p 256 -t 1 \
      --driver doppio,doppio-uring --segments 2 -q --tag "l$l-r$r" -o "$out/l$l-r$r.json" \
      "127.0.0.1:$port" > "$out/l$l-r$r.txt"
  done
done
echo done
