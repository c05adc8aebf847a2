#!/usr/bin/env bash
set -eu
out=/tmp/prof
port=19055
taskset -c 1 /work/ab-b/doppio-stub --listen 127.0.0.1:$port --cores 1 --runtime glommio -q >$out/stub.out 2>$out/stub.err &
sp=$!
trap 'kill $sp' EXIT
sleep 1
for r in 1 2; do
 for side in a b; do
  for d in doppio-uring doppio; do
   perf record -F 3999 -e cpu-clock -o $out/$side-$d-r$r.data -- taskset -c 0 /work/ab-$side/doppio run -w empty -d 12s --warmup 2s -p 256 -t 1 --driver $d -q -o $out/$side-$d-r$r.json 127.0.0.1:$port > $out/$side-$d-r$r.txt 2>&1
  done
 done
done
