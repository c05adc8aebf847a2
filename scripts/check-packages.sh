#!/usr/bin/env bash
# The published crates (doppio-proto, doppio-macros, doppio-rt, doppio-driver) as a registry would get
# them, checked at the MSRV: the one cheap step that catches a broken package (scripts/test.sh
# runs it).
#
# 1. `cargo publish --dry-run --no-verify` for the four, in their publishing order (it packages
#    them as `cargo package` does, then stops before the upload): a manifest error, a path
#    dependency without a version, a readme or licence file that is not there fail here
#    (about 2 s).
# 2. The four .crate files unpacked side by side into a scratch workspace (each names the
#    others by version, patched to the unpacked copies) and their libraries checked (`cargo
#    check`; doppio-proto also without its default feature) with the MSRV toolchain
#    when scripts/setup-lib.sh's ensure_msrv_toolchain installed it, the default toolchain
#    otherwise (said so). Only the packaged files are there, so a source file, an
#    `include_str!` target or a module left out of a package fails here, as `cargo package`'s
#    own verification would catch, at one check instead of a debug build of each crate in
#    turn. The lockfile starts as the workspace's; a dependency whose locked version needs a
#    newer rustc than the MSRV is moved to its newest version that declares support for the
#    MSRV (what a user's MSRV-aware resolution picks). The MSRV is the libraries': the
#    dev-dependencies (criterion 0.8 needs 1.86) are not built.
# 3. Their docs, with warnings denied (`cargo doc --no-deps`: every public item documented,
#    missing_docs being a workspace lint, and no broken or private intra-doc link), from the
#    packaged files with the same toolchain: the check above left every dependency's
#    metadata there, so this costs rustdoc alone (2-3 s), where the workspace's own
#    `cargo doc` after clippy rebuilt 24 dependencies whose features differ (55 s here).
#
# Output under target/package-check/. Exits non-zero on the first failure.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/setup-lib.sh
. "$ROOT/scripts/setup-lib.sh"

crates=(doppio-proto doppio-macros doppio-rt doppio-driver)
version=$(sed -n '/^\[workspace.package\]/,/^\[/ s/^version = "\(.*\)"$/\1/p' Cargo.toml)
out=$ROOT/target/package-check
ws=$out/ws

# A package holds the files of its folder that git does not ignore; --allow-dirty lets a work
# tree with uncommitted edits through (CI's clone has none).
# The folder starts empty, so no .crate of an earlier run can stand in for one this run failed
# to write. `cargo publish --dry-run` leaves its archives in target/package/tmp-crate/ (cargo
# 1.9x); `cargo package` writes them to target/package/: either is taken.
rm -rf target/package
cargo publish --dry-run --locked --no-verify --allow-dirty "${crates[@]/#/-p}"
crate_file() {
    local name=$1-$version.crate dir
    for dir in target/package/tmp-crate target/package; do
        if [ -f "$dir/$name" ]; then
            echo "$dir/$name"
            return
        fi
    done
    echo "cargo publish --dry-run wrote no $name under target/package/" >&2
    return 1
}

rm -rf "$ws"
mkdir -p "$ws"
members=()
for crate in "${crates[@]}"; do
    # --touch: the files' time is now, never older than a previous check's fingerprints
    # (with the archive's times, an edited file could pass as checked already).
    file=$(crate_file "$crate")
    tar --touch -xzf "$file" -C "$ws"
    members+=("\"$crate-$version\"")
done
{
    echo '# Written by scripts/check-packages.sh: the packaged crates, as a registry has them.'
    echo '[workspace]'
    echo 'resolver = "2"'
    echo "members = [$(
        IFS=,
        echo "${members[*]}"
    )]"
    echo '[patch.crates-io]'
    for crate in "${crates[@]}"; do echo "$crate = { path = \"$crate-$version\" }"; done
} >"$ws/Cargo.toml"
cp Cargo.lock "$ws/Cargo.lock"

toolchain=()
msrv_version=$(msrv)
if command -v rustup >/dev/null 2>&1 && rustup run "$msrv_version" rustc --version >/dev/null 2>&1; then
    toolchain=("+$msrv_version")
    echo "checking the packaged crates with the MSRV, rustc $msrv_version"
else
    echo "note: the MSRV toolchain ($msrv_version) is not installed (scripts/setup-lib.sh's" \
        "ensure_msrv_toolchain): checking the packaged crates with $(rustc --version) only" >&2
fi

cd "$ws"
check() {
    cargo "${toolchain[@]}" check --target-dir "$out/target" "$@"
}
log=$out/check.log
previous=
for _ in 1 2 3 4 5; do
    if check "${crates[@]/#/-p}" --lib 2>"$log"; then
        cat "$log" >&2
        check -p doppio-proto --lib --no-default-features
        # RUSTDOCFLAGS here alone (it would reach the workspace's doctests too).
        RUSTDOCFLAGS="-D warnings" cargo "${toolchain[@]}" doc --no-deps --target-dir "$out/target" \
            "${crates[@]/#/-p}"
        echo "packages: ${crates[*]} $version packaged, checked and documented"
        exit 0
    fi
    # cargo names each locked dependency too new for this rustc ("  name@version requires
    # rustc X"); anything else is a real failure.
    too_new=$(sed -n 's/^  \([^ ]*@[^ ]*\) requires rustc .*/\1/p' "$log")
    if [ -z "$too_new" ] || [ "$too_new" = "$previous" ]; then
        cat "$log" >&2
        echo "the packaged crates do not build (scratch workspace: $ws)" >&2
        exit 1
    fi
    previous=$too_new
    echo "locked versions too new for the MSRV, moved back:" $too_new
    # shellcheck disable=SC2046 # one -p per word
    cargo "${toolchain[@]}" update --config 'resolver.incompatible-rust-versions="fallback"' \
        $(printf -- '-p %s ' $too_new)
done
cat "$log" >&2
echo "the lockfile could not be brought down to the MSRV in five rounds (scratch workspace: $ws)" >&2
exit 1
