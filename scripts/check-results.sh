#!/usr/bin/env bash
# perf/results stays light: every tracked (or new, not ignored) JSON report above 64 KiB is
# kept gzipped (`gzip -9 -n FILE`; `doppio show`, `plot`, `merge`, `list` and the perf/
# summaries read `*.json.gz` as they are), and no other file there is above 2 MiB.
# Exits non-zero naming each file over its limit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bad=0
while IFS= read -r -d '' f; do
    [ -f "$f" ] || continue
    size=$(stat -c %s "$f")
    case "$f" in
    *.json) limit=65536 hint="gzip -9 -n $f" ;;
    *) limit=2097152 hint="summarise it, or keep it out of the repository" ;;
    esac
    if [ "$size" -gt "$limit" ]; then
        echo "perf/results check FAILED: $f is $size bytes (limit $limit): $hint" >&2
        bad=1
    fi
done < <(git ls-files -z --cached --others --exclude-standard -- perf/results)
[ "$bad" = 0 ] && echo "perf/results check passed: no raw JSON report above 64 KiB ungzipped, no file above 2 MiB"
exit "$bad"
