#!/usr/bin/env bash
# Recorded as run: /tmp/ab/before and /tmp/ab/after held release builds of bcc79dc and 0f5d24f.
# after-default, after-nobatch, before; rotating order; Cassandra read C=64
cd /work/main
out=perf/results/2026-11-28-idle-path/saturation-cassandra-batch
mkdir -p $out
taskset -c 0 target/release/doppio run -w read -P rows=10000 -d 20s -p 64 --driver doppio-uring -q 127.0.0.1:9042 > /dev/null
names=(before after nobatch)
for r in $(seq 0 7); do
  echo "== round $r $(date +%T)" >&2
  for k in 0 1 2; do
    n=${names[$(((k + r) % 3))]}
    case $n in
      before) bin=/tmp/ab/before/doppio; extra=();;
      after) bin=/tmp/ab/after/doppio; extra=();;
      nobatch) bin=/tmp/ab/after/doppio; extra=(--batch-wait 0us);;
    esac
    taskset -c 0 $bin run -w read -P rows=10000 -d 12s --warmup 1s -p 64 -t 1 --driver doppio,doppio-uring --segments 2 -q "${extra[@]}" --tag $n-r$r -o $out/$n-r$r.json 127.0.0.1:9042 > $out/$n-r$r.txt
  done
done
