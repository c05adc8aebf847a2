#!/usr/bin/env bash
# The main job, in one command: on a fresh machine it installs the toolchain, starts a local
# Cassandra 5.0 if none answers on 127.0.0.1:9042 (left running afterwards: stop it with
# scripts/cassandra.sh stop), builds the bench, creates and loads a small dataset, and compares
# the three backends (scylla-rust-driver, doppio on glommio, doppio on its own io_uring
# runtime) on the `read` workload in two parts of about a minute each, after warming the node
# for 15 s:
#   1. max throughput: 6 rounds, the order rotating every round (ABC, BCA, CAB, ...);
#   2. equal load: every backend at 70 % of the slowest one's capacity, 6 rounds, so that
#      CPU and syscalls per request are compared at the same work.
# It prints each part's side-by-side report and ends with both VERDICTs: each figure's ratio
# between backends, paired by round, with its 99 % interval and p-value (bench/MANUAL.md).
# The JSON reports go to demo-report.json and demo-report-equal-load.json.
#
#   scripts/demo.sh [extra `doppio run` options for both parts, e.g. -p 256; -o NAME.json
#                   names part 1's report, part 2's is NAME-equal-load.json]
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
extra=()
while [ $# -gt 0 ]; do
    # The last -o/--output given wins, as in `doppio run`; the others pass to both parts.
    case $1 in
    -o | --output)
        report=${2:?"$1 needs a file name"}
        shift 2
        ;;
    -o?* | --output=*)
        report=${1#-o}
        report=${report#--output=}
        shift
        ;;
    *)
        extra+=("$1")
        shift
        ;;
    esac
done
equal_report=${report%.json}-equal-load.json
interrupted() {
    trap - INT TERM
    printf '\n==> interrupted\n' >&2
    # The run's text report, when a part was running (bash runs this trap as soon as the
    # run returns, before run_part could print it).
    if [ -n "$current_text" ] && [ -s "$current_text" ]; then
        cat "$current_text"
    fi
    rm -f "${part1:-}" "${part2:-}"
    if [ -s "$current" ]; then
        echo "the report of what the run measured so far is in $current" >&2
    fi
    echo "Cassandra is left running (stop it with scripts/cassandra.sh stop)" >&2
    exit 130
}
# Bash runs the trap once the foreground step has returned, so `doppio` has written its
# report by then. A `doppio` step that handled the signal itself exits with 130, and with
# `set -e` bash may end the script on that status before it runs the trap: `doppio_step`
# checks the status itself.
current=$report
current_text=
trap interrupted INT TERM
doppio_step() {
    local rc=0
    "$bin" "$@" || rc=$?
    if [ "$rc" = 130 ]; then interrupted; fi
    return "$rc"
}
# A part's run, its text report kept in FILE (not piped: a pipe's reader would die with the
# Ctrl-C before the run prints what it measured) and printed.
run_part() { # FILE doppio-run-arguments...
    local text=$1 rc=0
    shift
    current_text=$text
    "$bin" run "$@" >"$text" || rc=$?
    if [ "$rc" = 130 ]; then interrupted; fi
    current_text=
    cat "$text"
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

drivers=scylla,doppio,doppio-uring
# 6 rounds of 2.5 s per backend, each after 0.5 s of its own warmup.
rounds=(-d 15s --segments 6 --warmup 500ms -p 64)
part1=$(mktemp) part2=$(mktemp)

step "read workload, part 1 of 2, max throughput: $drivers, the node warmed for 15 s, 6 rounds in rotating order"
run_part "$part1" -w read -P rows=10000 --driver "$drivers" --server-warmup 15s "${rounds[@]}" \
    -o "$report" "${extra[@]}"

step "read workload, part 2 of 2, equal load: every backend at 70 % of the slowest one's capacity, 6 rounds"
current=$equal_report
run_part "$part2" -w read -P rows=10000 --driver "$drivers" --equal-load 70% "${rounds[@]}" \
    -o "$equal_report" "${extra[@]}"

step "verdict"
for part in "1: max throughput|$part1" "2: equal load|$part2"; do
    printf '\nPart %s\n' "${part%%|*}"
    sed -n '/^VERDICT/,/^$/p' "${part#*|}"
done
rm -f "$part1" "$part2"
echo "reports: $report, $equal_report" >&2
