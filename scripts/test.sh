#!/usr/bin/env bash
# The one test command (CI runs it through .ci/run). On a fresh machine it installs what the
# tests need, starts a real Cassandra 5.0 if none answers on 127.0.0.1:9042 and a second one
# with authentication on 127.0.0.11:9042 (scripts/cassandra-auth.sh) for the auth tests, and
# stops only what it started; then runs, in order: rustfmt check, clippy with warnings denied,
# the seam check, and every test of the workspace. Exits non-zero on the first failure.
#
# Environment:
#   DOPPIO_CASSANDRA   address the tests use (default 127.0.0.1:9042)
#   DOPPIO_CASSANDRA_AUTH   the node with authentication (default 127.0.0.11:9042)
#   DOPPIO_TEST_KEEP_CASSANDRA=1   leave a Cassandra this script started running afterwards
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

step() { printf '\n==> %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# shellcheck source=scripts/setup-lib.sh
. "$ROOT/scripts/setup-lib.sh"
step "toolchain"
ensure_toolchain
step "locked-memory limit for io_uring"
raise_memlock

step "Cassandra"
export DOPPIO_CASSANDRA=${DOPPIO_CASSANDRA:-127.0.0.1:9042}
export DOPPIO_CASSANDRA_AUTH=${DOPPIO_CASSANDRA_AUTH:-127.0.0.11:9042}
started_cassandra=0
started_auth=0
stop_started_cassandra() {
    local rc=$?
    if [ "${DOPPIO_TEST_KEEP_CASSANDRA:-0}" != 1 ]; then
        if [ "$started_cassandra" = 1 ]; then
            step "stopping the Cassandra this run started"
            scripts/cassandra.sh stop || true
        fi
        if [ "$started_auth" = 1 ]; then
            scripts/cassandra-auth.sh stop || true
        fi
    fi
    exit $rc
}
trap stop_started_cassandra EXIT
host=${DOPPIO_CASSANDRA%:*}
port=${DOPPIO_CASSANDRA##*:}
if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then
    echo "using the Cassandra already answering on $DOPPIO_CASSANDRA"
else
    scripts/cassandra.sh start
    started_cassandra=1
fi
scripts/cassandra.sh status || true
ahost=${DOPPIO_CASSANDRA_AUTH%:*}
aport=${DOPPIO_CASSANDRA_AUTH##*:}
if (exec 3<>"/dev/tcp/$ahost/$aport") 2>/dev/null; then
    echo "using the Cassandra with authentication already answering on $DOPPIO_CASSANDRA_AUTH"
else
    scripts/cassandra-auth.sh start
    started_auth=1
fi

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (warnings denied)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "seam check: doppio-proto stays sans-IO"
scripts/check-seams.sh

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
    echo "cargo test failed (exit $test_rc)" >&2
    exit "$test_rc"
fi
echo "all checks passed"
echo "tests: $totals"
