#!/usr/bin/env bash
# Where a backend copies memory on loopback: every call of libc's memmove/memcpy made on the
# bench's worker threads, counted per request by size and by the calling source line. Large
# moves of results and futures between async levels show up here as calls per request; the
# inline moves of up to ~128 bytes that the compiler emits do not.
#
#   perf/copies.sh [SECONDS]
#
# Environment: BENCH (target/release/doppio), DRIVER (doppio-uring), C (256), WORKLOAD (empty),
# OUT (perf/results/<date>-copies). Needs root (a uprobe on libc). Every call is trapped, so
# the run is ~100 times slower than normal: its counts per request are what it is for, not
# its speed.
# Output: OUT/copies-DRIVER.md (the table) and OUT/copies-DRIVER.json (the bench's report).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
. "$ROOT/scripts/setup-lib.sh"
raise_memlock >&2
ensure_tracefs >&2

secs=${1:-2}
bench=${BENCH:-target/release/doppio}
driver=${DRIVER:-doppio-uring}
conc=${C:-256}
workload=${WORKLOAD:-empty}
out=${OUT:-perf/results/$(date -u +%Y-%m-%d)-copies}
mkdir -p "$out"
stub_bin=$(dirname "$bench")/doppio-stub
[ -x "$stub_bin" ] || stub_bin=target/release/doppio-stub

libc=$(ldd "$bench" | awk '/libc\.so/ {print $3; exit}')
[ -n "$libc" ] || { echo "copies: cannot find the libc $bench uses" >&2; exit 1; }
# The implementations the IFUNC resolver may pick on this CPU (memcpy shares them).
impls=$(perf probe -x "$libc" -F '__memmove_*' | grep -v '_chk' | grep 'unaligned')
events=()
for f in $impls; do
    perf probe -q -x "$libc" --add "copies_$f=$f size=%dx:u64" 2>/dev/null || true
    events+=(-e "probe_libc:copies_$f")
done
cleanup_probes() { perf probe -q -d 'probe_libc:copies_*' 2>/dev/null || true; }

port=19046
start_stub "$stub_bin" 1 "$port" glommio "$out"
trap 'cleanup_probes; kill -TERM $stub_pid 2>/dev/null || true; wait $stub_pid 2>/dev/null || true' EXIT

data=$(mktemp /tmp/doppio-copies.XXXXXX)
# A large buffer: a lost sample would be a copy not counted.
taskset -c 0 perf record -q -m 64M "${events[@]}" --call-graph dwarf,4096 -o "$data" -- \
    "$bench" run -w "$workload" -d "${secs}s" --warmup 0s -p "$conc" -t 1 --driver "$driver" \
    -q -o "$out/copies-$driver.json" "127.0.0.1:$port" >/dev/null
requests=$(jq -r ".backends[\"$driver\"].requests" "$out/copies-$driver.json")

perf script -i "$data" 2>/dev/null | python3 -c '
import collections, re, subprocess, sys
bench, requests, driver, workload, conc, root = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
calls = collections.Counter()
block = []
def flush(b):
    # A sample: its header (thread name, event, size), then its frames; the second frame is
    # the caller of the copy.
    if len(b) < 3 or "shard" not in b[0]:
        return
    size = re.search(r"size=(\d+)", b[0])
    caller = b[2].strip().split(None, 1)
    if size and len(caller) > 1:
        # The compiled function (perf names the outermost of an inline chain) is exact.
        function = re.sub(r"\+0x[0-9a-f]+$", "", caller[1].rsplit(" (", 1)[0])
        calls[(int(size.group(1)), caller[0], function)] += 1
for line in sys.stdin:
    if line.strip():
        block.append(line.rstrip("\n"))
    else:
        flush(block)
        block = []
flush(block)
def where(addr):
    # The call instruction is just before the return address. Of its inline chain
    # (innermost first), the first frame in this workspace names the place; line tables of
    # optimised async code are approximate, so the function is given with the line.
    try:
        out = subprocess.run(["addr2line", "-i", "-f", "-C", "-e", bench, hex(int(addr, 16) - 1)],
                             capture_output=True, text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return addr
    frames = list(zip(out[0::2], out[1::2]))
    for func, line in frames:
        if line.startswith(root + "/"):
            func = re.sub(r"<[^<>]*>", "", re.sub(r"<[^<>]*>", "", func))
            return f"{line[len(root) + 1:]} in {func[:80]}"
    return frames[0][1] if frames else addr
total = sum(calls.values())
rows = [(n, size, fn, where(addr)) for (size, addr, fn), n in calls.items() if n >= requests / 100]
rows.sort(key=lambda r: (-r[0], -r[1]))
print(f"# memmove/memcpy calls per request: {driver}, workload {workload}, C = {conc}")
print()
print(f"{requests} requests; {total / max(requests, 1):.2f} calls and "
      f"{sum(s * n for (s, _, _), n in calls.items()) / max(requests, 1):.0f} bytes per request "
      f"on the worker threads (connection set-up included).")
print()
print("The compiled function is exact; the source line (the innermost inlined frame in this")
print("workspace) is from the line tables, approximate in optimised async code.")
print()
print("| calls per request | bytes each | compiled function | source line |")
print("|---|---|---|---|")
for n, size, fn, at in rows:
    print(f"| {n / requests:.2f} | {size} | `{fn[:90]}` | `{at}` |")
' "$bench" "$requests" "$driver" "$workload" "$conc" "$ROOT" | tee "$out/copies-$driver.md"
rm -f "$data"
