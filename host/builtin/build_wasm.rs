/// Build `crates` for wasm32-wasip2 (profile `wasm`) with a nested cargo whose
/// target dir is `<target>/<subdir>`; returns the directory holding the `.wasm` files.
/// Shared by the build scripts of `ochre-builtin-plugins` and `ochre-tests`
/// (fixture plugins) through `include!`.
fn build_wasm(workspace: &std::path::Path, subdir: &str, crates: &[&str]) -> std::path::PathBuf {
    use std::path::PathBuf;
    use std::process::Command;
    ensure_wasm_target();
    let base = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"));
    // A target dir shared by several checkouts (CARGO_TARGET_DIR outside this
    // one) gets one output dir per checkout: the .wasm files have the same names
    // in each, and one checkout must not embed another's plugins.
    let target_dir = if base.starts_with(workspace) {
        base.join(subdir)
    } else {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        workspace.hash(&mut h);
        base.join(format!("{subdir}-{:016x}", h.finish()))
    };
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
