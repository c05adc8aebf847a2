#!/usr/bin/env bash
# The one test command (CI runs it through .ci/run). On a fresh machine it installs what the
# tests need and starts, in the background, every real Cassandra 5.0 the tests use that is
# not already answering: one node on 127.0.0.1:9042, one with authentication on
# 127.0.0.11:9042 (scripts/cassandra-auth.sh), a three-node cluster on 127.0.0.21-23
# (scripts/cassandra-cluster.sh) and one whose native port speaks TLS only on 127.0.0.41:9042
# (scripts/cassandra-tls.sh); it stops only what it started. Meanwhile it runs rustfmt
# check, clippy with warnings denied, the seam check, the size check of perf/results
# (scripts/check-results.sh), the unpublished crates' docs with warnings denied, and the published
# crates' packages checked at the MSRV and documented with warnings denied
# (scripts/check-packages.sh; the first that fails ends the run); then, with the clusters
# up, every test of the workspace (all of them, doctests included, --no-fail-fast) and one
# closing line with the totals;
# last, the cost gate (the release build's instructions and allocations per request under
# Valgrind against perf/cost/baseline.json). Exits non-zero if
# anything failed. The tests that need a Cassandra (files tests/**/cassandra_*.rs) skip with a
# message when their node does not answer, unless CI is set (.ci/run sets it): then they
# fail.
#
# Environment:
#   DOPPIO_CASSANDRA   address the tests use (default 127.0.0.1:9042)
#   DOPPIO_CASSANDRA_AUTH   the node with authentication (default 127.0.0.11:9042)
#   DOPPIO_CLUSTER   the three-node cluster's first node (default 127.0.0.21:9042)
#   DOPPIO_CASSANDRA_TLS   the TLS-only node (default 127.0.0.41:9042)
#   DOPPIO_CASSANDRA_TLS_CA   the CA file its certificate chains to (default
#                             .cassandra-tls/tls/ca.pem, made by scripts/cassandra-tls.sh)
#   DOPPIO_TEST_KEEP_CASSANDRA=1   leave the Cassandra clusters this script started running
#   DOPPIO_SIM_SEEDS   seeded fault schedules on the simulated runtime (default 10000, about
#                      a minute; driver/tests/it/sim_faults.rs, which runs 300 when unset)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

step() { printf '\n==> %s\n' "$*"; }

# shellcheck source=scripts/setup-lib.sh
. "$ROOT/scripts/setup-lib.sh"
step "toolchain"
ensure_toolchain
ensure_msrv_toolchain
step "locked-memory limit for io_uring"
raise_memlock
ensure_tracefs

step "Cassandra (four clusters, started in the background while the code is checked)"
export DOPPIO_CASSANDRA=${DOPPIO_CASSANDRA:-127.0.0.1:9042}
export DOPPIO_CASSANDRA_AUTH=${DOPPIO_CASSANDRA_AUTH:-127.0.0.11:9042}
export DOPPIO_CLUSTER=${DOPPIO_CLUSTER:-127.0.0.21:9042}
export DOPPIO_CASSANDRA_TLS=${DOPPIO_CASSANDRA_TLS:-127.0.0.41:9042}
export DOPPIO_CASSANDRA_TLS_CA=${DOPPIO_CASSANDRA_TLS_CA:-$ROOT/.cassandra-tls/tls/ca.pem}
export DOPPIO_SIM_SEEDS=${DOPPIO_SIM_SEEDS:-10000}
# name | start command | stop command | address
clusters=(
    "main|scripts/cassandra.sh start|scripts/cassandra.sh stop|$DOPPIO_CASSANDRA"
    "auth|scripts/cassandra-auth.sh start|scripts/cassandra-auth.sh stop|$DOPPIO_CASSANDRA_AUTH"
    "cluster|scripts/cassandra-cluster.sh start|scripts/cassandra-cluster.sh stop|$DOPPIO_CLUSTER"
    "tls|scripts/cassandra-tls.sh start|scripts/cassandra-tls.sh stop|$DOPPIO_CASSANDRA_TLS"
)
started=()
start_pids=()
start_logs=()
stop_started_cassandra() {
    local rc=$? entry name stop
    for pid in "${start_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    if [ "${DOPPIO_TEST_KEEP_CASSANDRA:-0}" != 1 ] && [ ${#started[@]} -gt 0 ]; then
        step "stopping the Cassandra clusters this run started"
        for entry in "${started[@]}"; do
            IFS='|' read -r name _ stop _ <<<"$entry"
            $stop || true
        done
    fi
    exit $rc
}
trap stop_started_cassandra EXIT
port_open() { (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null; }
# A clean clone gains nothing from incremental caches (they took 0.7 GB and more of disk).
if [ -n "${CI:-}" ]; then export CARGO_INCREMENTAL=0; fi
# The cluster control (xtask cassandra, which scripts/cassandra.sh runs) built once, before
# the parallel starts: each start would otherwise run cargo and wait for the build lock that
# clippy holds below.
cargo build --locked -q -p xtask
export DOPPIO_XTASK=${CARGO_TARGET_DIR:-$ROOT/target}/debug/xtask
# The jars once, before the parallel starts (they would race to resolve them).
scripts/cassandra.sh install
for entry in "${clusters[@]}"; do
    IFS='|' read -r name start _ addr <<<"$entry"
    if port_open "$addr"; then
        echo "using the $name Cassandra already answering on $addr"
        continue
    fi
    log=$(mktemp)
    $start >"$log" 2>&1 &
    start_pids+=($!)
    start_logs+=("$name|$log")
    started+=("$entry")
done

# A TLS node already answering (started from another checkout) has its CA elsewhere.
if port_open "$DOPPIO_CASSANDRA_TLS" && [ ! -s "$DOPPIO_CASSANDRA_TLS_CA" ]; then
    echo "warning: the TLS Cassandra on $DOPPIO_CASSANDRA_TLS answers but its CA $DOPPIO_CASSANDRA_TLS_CA" \
        "is missing: set DOPPIO_CASSANDRA_TLS_CA, or stop that node so that this run starts its own" >&2
fi

# The test binaries need several GB: say how much there is, so that a linker that dies for
# want of disk is told from a bug.
free_disk() { df -h "$ROOT" | awk 'NR == 2 { print $4 " free on " $6 }'; }
echo "disk: $(free_disk)"

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (warnings denied)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "seam check: doppio-proto stays sans-IO"
scripts/check-seams.sh

step "perf/results stays light"
scripts/check-results.sh

# The bench is a binary's library, and the stub, the units, the test support and xtask are
# read in the repository: their docs are read with the private items, and a link that no
# longer resolves (a room renamed, an item moved) fails here, not in a reader's hands.
step "the docs of the unpublished crates, private items included (warnings denied)"
RUSTDOCFLAGS="-D warnings" cargo doc -p doppio-bench -p doppio-stub -p doppio-units \
    -p doppio-test-support -p xtask --no-deps --document-private-items --locked

# The published crates as a registry gets them: packaged, checked at the MSRV and documented
# with warnings denied (every public item documented, no broken intra-doc link).
step "packages of doppio-proto, doppio-macros, doppio-rt, doppio: checked at the MSRV, docs (warnings denied)"
scripts/check-packages.sh

step "waiting for the Cassandra clusters"
for i in "${!start_pids[@]}"; do
    IFS='|' read -r name log <<<"${start_logs[$i]}"
    if ! wait "${start_pids[$i]}"; then
        cat "$log" >&2
        echo "the $name Cassandra did not start" >&2
        exit 1
    fi
    sed "s/^/[$name] /" "$log"
done
start_pids=()
scripts/cassandra.sh status || true
scripts/cassandra-cluster.sh status || true
scripts/cassandra-tls.sh status || true

step "cargo test --workspace"
test_log=$(mktemp)
set +e
cargo test --workspace --locked --no-fail-fast 2>&1 | tee "$test_log"
test_rc=${PIPESTATUS[0]}
set -e
# One closing line for the whole workspace, summed over every test binary.
totals=$(awk '/^test result:/ { p += $4; f += $6; s += $8 } END { printf "%d passed, %d failed, %d skipped", p, f, s }' "$test_log")
rm -f "$test_log"
echo
if [ "$test_rc" != 0 ]; then
    echo "tests: $totals"
    echo "disk: $(free_disk), target/ holds $(du -sh "$ROOT/target" 2>/dev/null | cut -f1)"
    echo "cargo test failed (exit $test_rc)" >&2
    exit "$test_rc"
fi

# The driver's optional feature `tracing` compiles code the workspace's test run leaves out:
# its own test binary, with the feature on (one binary: the other tests do not change).
step "cargo test -p doppio-driver --features tracing --test tracing_events"
cargo test -p doppio-driver --locked --features tracing --test tracing_events

# doppio's instructions and allocations per request, counted by Callgrind and DHAT on the
# release build (deterministic: the same build gives the same figures), against the
# baseline kept in the repository: more than 2 % more instructions, or any allocation added
# per request, fails. A deliberate change updates perf/cost/baseline.json in its commit.
step "cost gate: doppio cost --check perf/cost/baseline.json"
cargo build --release --locked -p doppio-bench
if ! target/release/doppio cost --driver doppio --check perf/cost/baseline.json --out target/cost; then
    echo "tests: $totals"
    echo "the cost gate failed: target/cost/ holds the profiles and cost.json" >&2
    exit 1
fi

echo "all checks passed"
echo "tests: $totals"
