#!/usr/bin/env bash
# The TLS cost per request on loopback: the same bench binary against two stubs, one
# plaintext (127.0.0.1) and one serving TLS (127.0.0.41, a certificate made here by openssl
# with that IP as subject alternative name), in turns: each round runs plain then TLS (the
# next round TLS then plain); every run interleaves the backends in segments as usual. The
# bench is pinned to core 0 and both stubs to core 1 (only one is busy at a time).
#
#   perf/tls.sh [ROUNDS] [SECONDS]
#
# Environment: C (concurrency, 256), WORKLOAD (empty), DRIVERS (doppio,doppio-uring,scylla),
# STUB_RUNTIME (glommio), BIN (target/release), OUT (perf/results/<date>-tls).
# Output: OUT/{plain,tls}-rN.json and .txt, and OUT/summary.md (per backend: throughput,
# client CPU per request and syscalls per request of every run, and the TLS/plain ratio and
# difference of the medians).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
. "$ROOT/scripts/setup-lib.sh"
raise_memlock >&2
ensure_tracefs >&2

rounds=${1:-3}
secs=${2:-10}
conc=${C:-256}
workload=${WORKLOAD:-empty}
drivers=${DRIVERS:-doppio,doppio-uring,scylla}
stub_runtime=${STUB_RUNTIME:-glommio}
bin=${BIN:-target/release}
out=${OUT:-perf/results/$(date -u +%Y-%m-%d)-tls}
mkdir -p "$out/pki"
tls_ip=127.0.0.41
plain_port=19047
tls_port=19048

# A CA and the TLS stub's certificate (IP SAN), made fresh (nothing of them is committed).
pki=$out/pki
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$pki/ca.key" \
    -out "$pki/ca.pem" -days 30 -subj "/CN=doppio perf CA" >/dev/null 2>&1
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$pki/stub.key" \
    -out "$pki/stub.csr" -subj "/CN=$tls_ip" >/dev/null 2>&1
printf 'subjectAltName=IP:%s\n' "$tls_ip" >"$pki/stub.ext"
openssl x509 -req -in "$pki/stub.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 30 -extfile "$pki/stub.ext" -out "$pki/stub.pem" >/dev/null 2>&1

pids=()
trap 'for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true' EXIT
start() { # name addr extra...
    local name=$1 addr=$2
    shift 2
    taskset -c 1 "$bin/doppio-stub" --listen "$addr" --cores 1 --runtime "$stub_runtime" -q "$@" \
        >"$out/stub-$name.out" 2>"$out/stub-$name.err" &
    pids+=($!)
    for _ in $(seq 100); do
        grep -q "^listening on" "$out/stub-$name.out" 2>/dev/null && return 0
        sleep 0.1
    done
    cat "$out/stub-$name.err" >&2
    return 1
}
start plain "127.0.0.1:$plain_port"
start tls "$tls_ip:$tls_port" --tls-cert "$pki/stub.pem" --tls-key "$pki/stub.key"

run() { # plain|tls round
    local node=127.0.0.1:$plain_port extra=()
    if [ "$1" = tls ]; then
        node=$tls_ip:$tls_port
        extra=(--tls --ca "$pki/ca.pem")
    fi
    taskset -c 0 "$bin/doppio" run "${extra[@]}" -w "$workload" -d "$((secs * 2))s" --warmup 2s \
        -p "$conc" -t 1 --driver "$drivers" --segments 2 -q --tag "$1-r$2" -o "$out/$1-r$2.json" \
        "$node" >"$out/$1-r$2.txt"
}
for r in $(seq "$rounds"); do
    echo "== round $r" >&2
    if [ $((r % 2)) = 1 ]; then run plain "$r"; run tls "$r"; else run tls "$r"; run plain "$r"; fi
done
rm -rf "$pki" # made for this run only

{
    echo "# TLS against plaintext on loopback: workload $workload, C = $conc, $rounds rounds of ${secs}s x 2 segments"
    echo
    echo "Command: \`perf/tls.sh $rounds $secs\` (C=$conc WORKLOAD=$workload DRIVERS=$drivers STUB_RUNTIME=$stub_runtime)."
    echo "Stubs ($stub_runtime runtime) on core 1: plaintext 127.0.0.1:$plain_port, TLS $tls_ip:$tls_port"
    echo "(rustls, ring, ECDSA P-256 certificate; rustls on both ends, so TLS 1.3); bench on core 0."
    echo
    echo "| backend | metric | plaintext runs | TLS runs | TLS/plain (medians) | TLS - plain (medians) |"
    echo "|---|---|---|---|---|---|"
    for d in ${drivers//,/ }; do
        for m in throughput_rps cpu_us_per_req syscalls_per_req; do
            a=$(for f in "$out"/plain-r*.json; do jq -r ".backends[\"$d\"].$m" "$f"; done | sort -g | tr '\n' ' ')
            b=$(for f in "$out"/tls-r*.json; do jq -r ".backends[\"$d\"].$m" "$f"; done | sort -g | tr '\n' ' ')
            cmp=$(python3 -c "import statistics,sys; a=[float(x) for x in sys.argv[1].split()]; b=[float(x) for x in sys.argv[2].split()]; ma,mb=statistics.median(a),statistics.median(b); print(f'{mb/ma:.3f} | {mb-ma:+.4g}')" "$a" "$b")
            fmt() { python3 -c "import sys; print(', '.join(f'{float(x):.4g}' for x in sys.argv[1].split()))" "$1"; }
            echo "| $d | $m | $(fmt "$a") | $(fmt "$b") | $cmp |"
        done
    done
} >"$out/summary.md"
cat "$out/summary.md"
