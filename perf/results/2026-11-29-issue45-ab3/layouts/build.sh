#!/bin/bash
# Paths as on the machine it ran on: /work/lay-src a worktree at fb3c4f3, /work/lay-N the binaries.
# Builds HEAD's bench in release once as linked (lay-0), then relinked with lld's section
# shuffle under seeds 1..4 (lay-N): the same code, functions in other places.
set -e
cd /work/lay-src
export CARGO_TARGET_DIR=/work/tgt-lay
nice -n 5 cargo build --release -p doppio-bench -p doppio-stub --locked
mkdir -p /work/lay-0 && cp /work/tgt-lay/release/doppio /work/tgt-lay/release/doppio-stub /work/lay-0/
for s in 1 2 3 4; do
  nice -n 5 cargo rustc --release -p doppio-bench --bin doppio --locked -- -C "link-arg=-Wl,--shuffle-sections=.text.*=$s"
  mkdir -p /work/lay-$s && cp /work/tgt-lay/release/doppio /work/lay-$s/
done
echo built
