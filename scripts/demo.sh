#!/usr/bin/env bash
# The main job, in one command: on a fresh machine it installs the toolchain, starts a local
# Cassandra 5.0 if none answers on 127.0.0.1:9042 (left running afterwards: stop it with
# scripts/cassandra.sh stop), builds the bench, creates and loads a small dataset, and runs
# the `read` workload on all three backends (doppio on glommio, doppio on its own io_uring
# runtime, scylla-rust-driver; alternating) for a short time, printing the side-by-side
# report. The JSON report goes to demo-report.json.
#
#   scripts/demo.sh [extra `doppio run` options, e.g. -d 30s -p 256]
#
# Ctrl-C (SIGINT) or SIGTERM: a `doppio` step that is running stops and keeps what it measured
# (the run writes its report with `fatal_error: "interrupted"`); then the script says what is
# left where and exits with 130. Cassandra is left as it is, running (or still starting: it
# outlives the script, see scripts/cassandra.sh), as after a finished demo.
#
# Environment: DOPPIO_DEMO_BIN uses that `doppio` binary instead of building the release one
# (the tests use their debug build).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
step() { printf '\n==> %s\n' "$*" >&2; }
# shellcheck source=scripts/setup-lib.sh
. "$ROOT/scripts/setup-lib.sh"

report=demo-report.json
for arg in "$@"; do
    # The last -o/--output given wins, as in `doppio run`.
    case ${prev:-} in -o | --output) report=$arg ;; esac
    prev=$arg
done
interrupted() {
    trap - INT TERM
    printf '\n==> interrupted\n' >&2
    if [ -s "$report" ]; then
        echo "the report of what the run measured so far is in $report" >&2
    fi
    echo "Cassandra is left running (stop it with scripts/cassandra.sh stop)" >&2
    exit 130
}
# Bash runs the trap once the foreground step has returned, so `doppio` has written its
# report by then. A `doppio` step that handled the signal itself exits with 130, and with
# `set -e` bash may end the script on that status before it runs the trap: `doppio_step`
# checks the status itself.
trap interrupted INT TERM
doppio_step() {
    local rc=0
    "$bin" "$@" || rc=$?
    if [ "$rc" = 130 ]; then interrupted; fi
    return "$rc"
}

step "toolchain"
ensure_toolchain >&2
raise_memlock >&2
ensure_tracefs >&2

step "Cassandra"
if (exec 3<>/dev/tcp/127.0.0.1/9042) 2>/dev/null; then
    echo "using the Cassandra already answering on 127.0.0.1:9042" >&2
else
    scripts/cassandra.sh start
fi

if [ -n "${DOPPIO_DEMO_BIN:-}" ]; then
    bin=$DOPPIO_DEMO_BIN
else
    step "building the bench (release)"
    cargo build --release --locked -p doppio-bench >&2
    bin=target/release/doppio
fi

step "schema and a small dataset (10,000 rows)"
doppio_step schema -w read -q
doppio_step load -w read -P rows=10000 -p 128 -q

step "read workload: doppio (glommio), doppio-uring and scylla-rust-driver alternating"
doppio_step run -w read -P rows=10000 -d 10s --warmup 1s -p 64 --driver doppio,doppio-uring,scylla \
    -o demo-report.json "$@"
echo "report: $report" >&2
