#!/usr/bin/env bash
# The seam checks:
# 1. doppio-proto is sans-IO, so neither glommio nor tokio (nor any other executor or socket
#    crate) may appear among its dependencies, direct or transitive.
# 2. The runtime adapters are the only code that names a runtime: in the whole workspace only
#    driver/rt/src/glommio_rt.rs names the glommio crate, only driver/rt/src/uring/ names the
#    io-uring crate, and only driver/rt/Cargo.toml depends on either.
# 3. The bench's two driver adapters speak the bench's vocabulary, not each other's drivers':
#    nothing under bench/src/backend/scylla_rust_driver/ names doppio's crates (doppio_driver,
#    doppio_proto, doppio_rt), and nothing under bench/src/backend/doppio/ names
#    scylla-rust-driver's (scylla, scylla_cql).
# 4. No crate's modules import each other in a circle (scripts/import-graph.sh, the xtask
#    crate's import-graph command: a module and its submodules are one node), and in no crate
#    does a file import another in a circle or import an item defined in a module above it.
# Exits non-zero, naming the offending crate or file, if one does.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

FORBIDDEN='^(glommio|tokio|async-std|smol|mio|io-uring|futures-io)$'

tree=$(cargo tree -p doppio-proto --edges normal,build --prefix none --format '{p}' --offline 2>/dev/null ||
    cargo tree -p doppio-proto --edges normal,build --prefix none --format '{p}')
bad=$(printf '%s\n' "$tree" | awk '{print $1}' | sort -u | grep -E "$FORBIDDEN" || true)
if [ -n "$bad" ]; then
    echo "seam check FAILED: doppio-proto must stay sans-IO, but depends on: $bad" >&2
    for crate in $bad; do
        echo "--- how $crate gets in:" >&2
        cargo tree -p doppio-proto --edges normal,build --invert "$crate" >&2 || true
    done
    exit 1
fi
echo "seam check passed: doppio-proto depends on no executor ($(printf '%s\n' "$tree" | sort -u | wc -l) crates: $(printf '%s\n' "$tree" | awk '{print $1}' | sort -u | tr '\n' ' '))"

# 2. Only the adapters name a runtime crate (code paths, not prose in comments).
sources=$(git ls-files --cached --others --exclude-standard -- '*.rs' | grep -v '^protocol-tests/fuzz/' || true)
named() { # PATTERN ALLOWED-PREFIX
    local f
    for f in $sources; do
        case "$f" in "$2"*) continue ;; esac
        [ -f "$f" ] || continue
        grep -nE "$1" "$f" | grep -vE '^[0-9]+:\s*//' | sed "s|^|$f:|"
    done
}
bad_glommio=$(named '(^|[^A-Za-z0-9_])(::)?glommio::|use glommio|extern crate glommio' driver/rt/src/glommio_rt.rs || true)
bad_uring=$(named '(^|[^A-Za-z0-9_])(::)?io_uring::|use io_uring|extern crate io_uring' driver/rt/src/uring/ || true)
bad_deps=$(git ls-files -- '*Cargo.toml' | grep -vE '^(Cargo.toml|driver/rt/Cargo.toml|protocol-tests/fuzz/.*)$' |
    xargs grep -lE '^(glommio|io-uring)(\.workspace)? *=' || true)
if [ -n "$bad_glommio$bad_uring$bad_deps" ]; then
    echo "seam check FAILED: only driver/rt names a runtime crate (glommio_rt.rs glommio, uring/ io-uring)" >&2
    [ -n "$bad_glommio" ] && printf 'glommio named outside its adapter:\n%s\n' "$bad_glommio" >&2
    [ -n "$bad_uring" ] && printf 'io_uring named outside its runtime:\n%s\n' "$bad_uring" >&2
    [ -n "$bad_deps" ] && printf 'runtime crate as a dependency outside driver/rt:\n%s\n' "$bad_deps" >&2
    exit 1
fi
echo "seam check passed: only driver/rt/src/glommio_rt.rs names glommio and only driver/rt/src/uring/ names io-uring"

# 3. Each bench adapter names only its own driver (code paths, not prose in comments).
named_in() { # PATTERN PREFIX
    local f
    for f in $sources; do
        case "$f" in "$2"*) ;; *) continue ;; esac
        [ -f "$f" ] || continue
        grep -nE "$1" "$f" | grep -vE '^[0-9]+:\s*//' | sed "s|^|$f:|"
    done
}
bad_scylla=$(named_in '(^|[^A-Za-z0-9_])doppio_(driver|proto|rt)([^A-Za-z0-9_]|$)' bench/src/backend/scylla_rust_driver/ || true)
bad_doppio=$(named_in '(^|[^A-Za-z0-9_:])(::)?scylla(_cql)?::|use scylla(_cql)?([^A-Za-z0-9_]|$)|extern crate scylla' bench/src/backend/doppio/ || true)
if [ -n "$bad_scylla$bad_doppio" ]; then
    echo "seam check FAILED: a bench adapter names the other driver (each maps its own driver onto the bench's types)" >&2
    [ -n "$bad_scylla" ] && printf 'doppio named in the scylla adapter:\n%s\n' "$bad_scylla" >&2
    [ -n "$bad_doppio" ] && printf 'scylla-rust-driver named in the doppio adapter:\n%s\n' "$bad_doppio" >&2
    exit 1
fi
echo "seam check passed: bench/src/backend/scylla_rust_driver/ names no doppio crate and bench/src/backend/doppio/ names no scylla crate"

# 4. No import circle among the modules of any crate (on failure: each circle with its arrows).
if ! circles=$(scripts/import-graph.sh 2>&1 >/dev/null); then
    printf '%s\n' "$circles" >&2
    echo "seam check FAILED: an import circle (scripts/import-graph.sh prints every crate's graph)" >&2
    exit 1
fi
echo "seam check passed: no import circle among any crate's modules or files, and no file importing from a module above it (scripts/import-graph.sh)"
