#!/usr/bin/env bash
# The import graph of each workspace crate, at two granularities, and a check that it has no
# circle and no upward arrow: a thin entry point to the `import-graph` command of the xtask
# crate, which reads the code with syn. What it reads, the two views, the upward-arrow rule and
# its limits: xtask/src/import_graph/mod.rs.
#
# Usage: scripts/import-graph.sh [--modules | --files] [--dot] [CRATE_DIR...]
#   (no CRATE_DIR: every member of the workspace; a CRATE_DIR is read from the workspace root)
#   (neither mode: the module check and the file check on every crate, enforced. This is
#    what scripts/check-seams.sh runs.)
#   --modules  the module view only
#   --files    the file view only, enforced on every crate given
#   --dot      print each crate's graph in Graphviz dot (arrows labelled with how many paths)
# Prints the arrows of each crate and every circle (and upward arrow) with the file:line of
# each arrow in it; exits 1 if any enforced check fails, 2 if the sources cannot be read, 0
# otherwise. The first run builds xtask (a debug build: 2.5 min with one job on a busy 2-core
# machine, most of it syn and toml; then about a second per run).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# No network needed once the dependencies are fetched (Cargo.lock pins them: --locked).
exec cargo run --quiet --locked -p xtask -- import-graph "$@"
