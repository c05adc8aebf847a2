# Set-up shared by scripts/test.sh and scripts/demo.sh: a Rust toolchain with rustfmt and
# clippy, a C compiler (glommio builds its bundled liburing), a font for the plot tests
# (fonts-dejavu-core), and a locked-memory limit that
# io_uring can live with. Sourced, not run.

# Runs a command as root (directly when already root, through sudo otherwise).
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

ensure_toolchain() {
    if ! command -v cargo >/dev/null 2>&1; then
        [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
    fi
    if ! command -v cargo >/dev/null 2>&1; then
        echo "installing Rust from Debian's packages (cargo, rustc, rustfmt, clippy)"
        as_root apt-get update -q
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q cargo rustc rustfmt rust-clippy
    fi
    if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
        if command -v rustup >/dev/null 2>&1; then
            rustup component add rustfmt clippy
        else
            as_root apt-get update -q
            DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q rustfmt rust-clippy
        fi
    fi
    # glommio builds its bundled liburing with a C compiler.
    if ! command -v cc >/dev/null 2>&1; then
        as_root apt-get update -q
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q build-essential
    fi
    # The plot tests render the bench's SVG charts with a real font, as a viewer would.
    if [ ! -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]; then
        as_root apt-get update -q
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q fonts-dejavu-core
    fi
    # `doppio cost` (and the cost gate of scripts/test.sh) counts instructions and
    # allocations under Valgrind's Callgrind and DHAT.
    if ! command -v valgrind >/dev/null 2>&1 || ! command -v callgrind_annotate >/dev/null 2>&1; then
        as_root apt-get update -q
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q valgrind
    fi
    cargo --version
}

# The workspace's MSRV (`rust-version` in Cargo.toml) as a toolchain name: "1.85" is 1.85.0
# (rustup's "1.85" would be the newest 1.85.x).
msrv() {
    local v
    v=$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' "${ROOT:-.}/Cargo.toml" | head -n 1)
    case $v in *.*.*) echo "$v" ;; *) echo "$v.0" ;; esac
}

# The MSRV toolchain (minimal profile: rustc, cargo, std; about 500 MB, 11 s to install here)
# for scripts/check-packages.sh. Only through rustup: with Debian's cargo there is none, and
# that script then builds the packages with the default toolchain and says so.
ensure_msrv_toolchain() {
    local version
    version=$(msrv)
    command -v rustup >/dev/null 2>&1 || {
        echo "no rustup: the MSRV ($version) toolchain cannot be installed; its check is skipped"
        return 0
    }
    if ! rustup run "$version" rustc --version >/dev/null 2>&1; then
        # A machine that cannot download it still runs every other check: the packages are
        # then checked with the default toolchain, and scripts/check-packages.sh says so.
        rustup toolchain install "$version" --profile minimal --no-self-update || {
            echo "the MSRV ($version) toolchain could not be installed; its check is skipped"
            return 0
        }
    fi
    rustup run "$version" rustc --version
}

# io_uring rings and glommio's registered buffers count against RLIMIT_MEMLOCK; the default
# (8 MiB here) is too small for several executors. Raise it for this shell and its children.
raise_memlock() {
    if [ "$(ulimit -l)" != unlimited ]; then
        ulimit -l unlimited 2>/dev/null || ulimit -l "$(ulimit -Hl)" 2>/dev/null || true
    fi
    echo "ulimit -l: $(ulimit -l) KiB"
    if [ "$(ulimit -l)" != unlimited ] && [ "$(ulimit -l)" -lt 65536 ]; then
        # CAP_IPC_LOCK (bit 14 of the effective set) exempts a process from the limit.
        local cap_eff
        cap_eff=$(awk '/^CapEff/ {print $2}' /proc/self/status)
        if (((16#$cap_eff >> 14) & 1)); then
            echo "the hard limit forbids raising it, but CAP_IPC_LOCK exempts io_uring from it"
        else
            echo "warning: locked memory is capped at $(ulimit -l) KiB and CAP_IPC_LOCK is" \
                "missing; glommio executors may fail to start (raise 'memlock' in limits.conf)" >&2
        fi
    fi
}

# The bench counts system calls with the raw_syscalls:sys_enter tracepoint, whose id lives in
# tracefs. A fresh machine may not have it mounted; as root, mount it (harmless if present).
ensure_tracefs() {
    if [ -e /sys/kernel/tracing/events/raw_syscalls/sys_enter/id ] ||
        [ -e /sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id ]; then
        return 0
    fi
    if [ "$(id -u)" = 0 ] && [ -d /sys/kernel/tracing ]; then
        mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
    fi
    if [ -e /sys/kernel/tracing/events/raw_syscalls/sys_enter/id ]; then
        echo "tracefs mounted on /sys/kernel/tracing (syscall counting)"
    else
        echo "note: no tracefs; the bench will report syscalls as n/a" \
            "(mount -t tracefs nodev /sys/kernel/tracing as root)" >&2
    fi
}

# Starts the stub server BIN pinned to CORE on 127.0.0.1:PORT with RUNTIME, its output in
# OUT/stub.out and OUT/stub.err, and waits until it listens; sets stub_pid and stops the
# stub when the calling script exits.
start_stub() { # bin core port runtime out
    taskset -c "$2" "$1" --listen "127.0.0.1:$3" --cores "$2" --runtime "$4" -q \
        >"$5/stub.out" 2>"$5/stub.err" &
    stub_pid=$!
    trap 'kill -TERM $stub_pid 2>/dev/null || true; wait $stub_pid 2>/dev/null || true' EXIT
    for _ in $(seq 100); do
        grep -q "^listening on" "$5/stub.out" 2>/dev/null && return 0
        sleep 0.1
    done
    cat "$5/stub.err" >&2
    return 1
}
