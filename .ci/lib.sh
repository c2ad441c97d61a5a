# Shared by .ci/run and .ci/test (sourced): timed steps with a table at the end,
# the build that lints as it compiles, the test run, and the background install
# of the tests' third-party packages.

# A clean build gains nothing from incremental state, which only adds gigabytes
# to the target dir (a run ran out of disk once).
export CARGO_INCREMENTAL=0
# Clippy as the workspace's compiler: the lints come from the compilation that
# builds the tests (`cargo clippy` would compile the whole graph a second time, in
# check mode). The same two variables are set for every cargo run of a CI run,
# so that each finds the build the one before made (they are part of its key).
export RUSTC_WORKSPACE_WRAPPER=${RUSTC_WORKSPACE_WRAPPER-$(command -v clippy-driver || true)}
export CLIPPY_ARGS=${CLIPPY_ARGS--D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__}
# What the run writes besides cargo's own output: logs, the step table.
ci_dir=target/ci
# Cargo's target dir.
ci_target=${CARGO_TARGET_DIR:-target}

ci_names=()
ci_secs=()
ci_results=()
ci_cpus=()
ci_t0=0

# A target dir outside the clone that the next run on this machine reuses
# ($OCHRE_CI_TARGET_DIR, default ~/.cache/ochre-ci/target; an explicit
# CARGO_TARGET_DIR wins), with the plugins' own inside it. Cargo's
# fingerprints decide what is fresh; each run adds its clone's own crates, so
# past 40 GB (or with under 15 GB free on its disk) it is emptied first.
ci_shared_target() {
    if [ -n "${CARGO_TARGET_DIR:-}" ]; then
        ci_target=$CARGO_TARGET_DIR
        ci_own_crates
        return 0
    fi
    export CARGO_TARGET_DIR=${OCHRE_CI_TARGET_DIR:-$HOME/.cache/ochre-ci/target}
    ci_target=$CARGO_TARGET_DIR
    # The plugins' WebAssembly builds too (host/builtin/build_wasm.rs): their
    # dependencies compile once per machine, ochre's crates once per checkout.
    export OCHRE_WASM_TARGET_DIR=${OCHRE_WASM_TARGET_DIR:-$ci_target/ochre-wasm}
    mkdir -p "$ci_target"
    local kb free
    kb=$(du -sk "$ci_target" | cut -f1)
    free=$(df -k --output=avail "$ci_target" | tail -1)
    if [ "$kb" -gt $((40 * 1024 * 1024)) ] || [ "$free" -lt $((15 * 1024 * 1024)) ]; then
        echo "ci: emptying the shared target dir $ci_target ($((kb / 1024 / 1024)) GB, $((free / 1024 / 1024)) GB free)"
        rm -rf "$ci_target" && mkdir -p "$ci_target"
    fi
    echo "ci: target dir $ci_target ($((kb / 1024 / 1024)) GB kept from earlier runs)"
    ci_own_crates
}

# Cargo keys a workspace crate's build by its path inside the workspace, not by
# the checkout, and takes it for fresh when no source file is newer than the
# build: a work tree older than another clone's build in the same target dir
# would take that build of a crate it has changed. So a build for another
# checkout than the last one there first forgets every ochre crate built there
# (their fingerprints: cargo then compiles them), as build_wasm.rs does for the
# plugins. A new clone compiles its crates anyway (its files are newer).
ci_own_crates() {
    local stamp=$ci_target/.ochre-checkout here
    here=$(pwd -P)
    mkdir -p "$ci_target"
    if [ "$(cat "$stamp" 2>/dev/null)" != "$here" ]; then
        rm -rf "$ci_target"/*/.fingerprint/ochre-*
        echo "$here" >"$stamp"
    fi
}

ci_begin() {
    if [ -z "$RUSTC_WORKSPACE_WRAPPER" ]; then
        echo "ci: clippy-driver not found: rustup component add clippy" >&2
        exit 1
    fi
    mkdir -p "$ci_dir"
    ci_t0=$(date +%s)
    trap ci_table EXIT
}

# ci_step NAME COMMAND...: run COMMAND (a function or a program) with errexit in
# force inside it, time it, and stop the run when it fails.
ci_step() {
    local name=$1 start cpu0 rc=0
    shift
    start=$(date +%s)
    cpu0=$(ci_busy_ticks)
    echo "ci: --- $name"
    # In the background and waited for: errexit holds inside the step's functions
    # (it would not in `"$@" || rc=$?`).
    ( "$@" ) &
    wait $! || rc=$?
    ci_names+=("$name")
    ci_secs+=($(($(date +%s) - start)))
    ci_cpus+=($((($(ci_busy_ticks) - cpu0) / $(getconf CLK_TCK))))
    if [ "$rc" = 0 ]; then ci_results+=(ok); else ci_results+=("FAILED ($rc)"); fi
    return "$rc"
}

# The machine's busy CPU time so far, in clock ticks (user, nice, system, irq
# and softirq of every core: /proc/stat's first line).
ci_busy_ticks() {
    local _cpu user nice system idle iowait irq softirq _rest
    read -r _cpu user nice system idle iowait irq softirq _rest </proc/stat
    echo $((user + nice + system + irq + softirq))
}

ci_table() {
    local rc=$? i
    set +e
    ci_third_party_wait quiet
    echo
    echo "ci: steps"
    printf '  %-14s %7s %7s  %s\n' step seconds cpu result
    for i in "${!ci_names[@]}"; do
        printf '  %-14s %7s %7s  %s\n' "${ci_names[$i]}" "${ci_secs[$i]}" "${ci_cpus[$i]:-}" "${ci_results[$i]}"
    done
    printf '  %-14s %7s\n' total $(($(date +%s) - ci_t0))
    echo "  (cpu: the machine's busy CPU-seconds during the step, all $(nproc) cores: near seconds x $(nproc), the step was CPU-bound)"
    if [ -n "${ci_tp_result:-}" ]; then echo "  (in the background) third-party: $ci_tp_result"; fi
    echo "  cargo's build timings: $(ls -t "$ci_target"/cargo-timings/cargo-timing-*.html 2>/dev/null | head -1)"
    if [ "$rc" = 0 ]; then
        echo "ci: done in $(($(date +%s) - ci_t0)) s"
    else
        echo "ci: FAILED (exit $rc) after $(($(date +%s) - ci_t0)) s"
    fi
    ci_failures
    ci_counts
    exit "$rc"
}

# The failing tests by name (their output, with the tails of the logs they
# own, is above, after nextest's summary), and those that passed only on a retry.
ci_failures() {
    python3 .ci/report.py failures target/nextest/ci/junit.xml
}

# The closing line: every test run (nextest's JUnit report and the doc tests'
# summaries), as `tests: N passed, N failed`.
ci_counts() {
    if [ -f target/nextest/ci/junit.xml ] || [ -f "$ci_dir/doctests.log" ]; then
        python3 .ci/report.py counts target/nextest/ci/junit.xml "$ci_dir/doctests.log"
    fi
}

# Where this checkout's WebAssembly components (built-in plugins, test
# fixtures) are: see build_wasm.rs.
ci_wasm_dir() {
    echo "${OCHRE_WASM_TARGET_DIR:-target/wasm}/wasm32-wasip2/wasm"
}

# The doc tests (cargo-nextest does not run them), their output kept for the count.
ci_doctests() {
    cargo test --workspace --doc 2>&1 | tee "$ci_dir/doctests.log"
}

# Every target (tests, benches, examples, binaries), linted as it compiles, with
# cargo's timing report kept under <target dir>/cargo-timings.
ci_build() {
    cargo test --workspace --all-targets --no-run --timings
}

# Every test of the workspace, in parallel (.config/nextest.toml); ARGS go to
# nextest (a filter, say).
ci_tests() {
    rm -f target/nextest/ci/junit.xml "$ci_dir/doctests.log"
    local rc=0
    cargo nextest run --workspace --profile ci --no-tests fail "$@" || rc=$?
    ci_dead_profiles
    return "$rc"
}

# A server a test ends with SIGKILL cannot remove its browser's profile
# (<tmp>/ochre-profile-PID-N, a megabyte or more; a run here left 50-70):
# those whose server (PID) is gone are removed after the tests. (Not by giving
# the tests a TMPDIR of their own: its longer paths put their session sockets
# past the 108 bytes a Unix socket's path may have.)
ci_dead_profiles() {
    local d pid
    for d in "${TMPDIR:-/tmp}"/ochre-profile-*; do
        [ -d "$d" ] || continue
        pid=${d##*/ochre-profile-}
        pid=${pid%%-*}
        case $pid in '' | *[!0-9]*) continue ;; esac
        [ -d "/proc/$pid" ] || rm -rf "$d"
    done
    # Chromium keeps its profile's lock socket in a dir of its own under TMPDIR
    # (org.chromium.Chromium.XXXXXX/SingletonSocket) and removes it as it exits:
    # a browser ended with SIGKILL leaves it (about 25 a run). Those of this
    # user no browser listens on any more go too (not without `ss` to tell).
    command -v ss >/dev/null || return 0
    local live
    live=$(ss -xlH 2>/dev/null | awk '{print $5}')
    for d in "${TMPDIR:-/tmp}"/org.chromium.Chromium.*; do
        [ -O "$d" ] && [ -S "$d/SingletonSocket" ] || continue
        grep -qxF "$d/SingletonSocket" <<<"$live" || rm -rf "$d"
    done
}

ci_third_party_start() {
    # A process group of its own, so that a run that stops early ends its npm and
    # pip too.
    setsid python3 tests/third-party/install.py all >"$ci_dir/third-party.log" 2>&1 &
    ci_tp_pid=$!
}

# Waits for the background install and notes its result (its log when it failed).
ci_third_party_wait() {
    [ -n "${ci_tp_pid:-}" ] || return 0
    local rc=0
    if [ "${1:-}" = quiet ] && kill -0 "$ci_tp_pid" 2>/dev/null; then
        kill -- -"$ci_tp_pid" 2>/dev/null
    fi
    wait "$ci_tp_pid" || rc=$?
    ci_tp_pid=""
    ci_tp_result=$(tail -1 "$ci_dir/third-party.log")
    if [ "$rc" != 0 ] && [ "${1:-}" != quiet ]; then
        echo "ci: the background install of the tests' packages failed (the tests installed what they needed):"
        tail -20 "$ci_dir/third-party.log"
    fi
    return 0
}

# A cargo config file for the builds after the tests (the package check, the
# browserless example, the install check), which run little of what they build:
# the dependencies .cargo/config.toml optimises (the WebAssembly compiler and
# runtime) build unoptimised there. Each of those builds resolves other features
# for them than the test build (a verification resolves its own crate's graph),
# so none of the test build's optimised builds of them would serve anyway; the
# rest of each graph is shared with the test build where features agree.
# Prints its path.
ci_unoptimised_config() {
    local file=$ci_dir/unoptimised.toml
    mkdir -p "$ci_dir"
    sed -n 's/^\[profile\.dev\.package\.\([A-Za-z0-9_-]*\)\]$/[profile.dev.package.\1]\nopt-level = 0/p' \
        .cargo/config.toml >"$file"
    grep -q . "$file" || { echo "ci: no optimised dependency found in .cargo/config.toml" >&2; return 1; }
    realpath "$file"
}
