/// Build `crates` for wasm32-wasip2 (profile `wasm`) with a nested cargo whose
/// target dir is the checkout's `target/wasm`; returns the directory holding the
/// `.wasm` files. Shared by the build scripts of `ochre-builtin-plugins` and
/// `ochre-tests` (fixture plugins) through `include!`. Every wasm build of the
/// checkout uses that one dir, so the guests' dependencies (serde, schemars,
/// wit-bindgen, the SDK) compile once (two builds at once take turns on its
/// lock). It stays in the checkout even when `CARGO_TARGET_DIR` points elsewhere
/// (a target dir shared by several checkouts): the `.wasm` files have the same
/// names in each, and one checkout must not embed another's plugins.
fn build_wasm(workspace: &std::path::Path, crates: &[&str]) -> std::path::PathBuf {
    use std::process::Command;
    ensure_wasm_target();
    let target_dir = workspace.join("target").join("wasm");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace)
        .args(["build", "--profile", "wasm", "--target", "wasm32-wasip2"])
        .arg("--target-dir")
        .arg(&target_dir);
    for krate in crates {
        cmd.args(["-p", krate]);
    }
    // The outer build's settings are for the host, not for wasm guests.
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
        "CARGO_MAKEFLAGS",
        "MAKEFLAGS",
        "MFLAGS",
    ] {
        cmd.env_remove(var);
    }
    for (key, _) in std::env::vars() {
        if key.starts_with("CARGO_FEATURE_")
            || key.starts_with("CARGO_CFG_")
            || key.starts_with("CARGO_PROFILE_")
            || key.starts_with("DEP_")
        {
            cmd.env_remove(key);
        }
    }
    cmd.stdout(std::process::Stdio::null());
    let status = cmd.status().unwrap_or_else(|e| panic!("cannot run cargo: {e}"));
    if !status.success() {
        panic!(
            "building {crates:?} for wasm32-wasip2 failed: the compiler's errors are above"
        );
    }
    target_dir.join("wasm32-wasip2").join("wasm")
}

/// The `wasm32-wasip2` standard library must be installed for the toolchain this
/// build uses: when it is not, install it with rustup (as `.ci/setup` would), or
/// stop saying exactly what to run.
fn ensure_wasm_target() {
    use std::process::Command;
    const TARGET: &str = "wasm32-wasip2";
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    let installed = |root: &str| {
        std::path::Path::new(root)
            .join("lib/rustlib")
            .join(TARGET)
            .join("lib")
            .is_dir()
    };
    let Some(sysroot) = sysroot else {
        return; // Let the nested cargo report what is wrong.
    };
    if installed(&sysroot) {
        return;
    }
    println!(
        "cargo:warning=the {TARGET} target (for the built-in WebAssembly plugins) is missing; running: rustup target add {TARGET}"
    );
    let added = Command::new("rustup")
        .args(["target", "add", TARGET])
        .status()
        .is_ok_and(|s| s.success());
    if !added || !installed(&sysroot) {
        panic!(
            "the {TARGET} target is not installed for the Rust toolchain at {sysroot}, and \
             `rustup target add {TARGET}` did not install it. Run that command (with rustup), \
             or install the {TARGET} standard library for this toolchain, then build again."
        );
    }
}
