#!/usr/bin/env bash
# The seam check: doppio-proto is sans-IO, so neither glommio nor tokio (nor any other
# executor or socket crate) may appear among its dependencies, direct or transitive.
# Exits non-zero, naming the offending crate and the path to it, if one does.
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
