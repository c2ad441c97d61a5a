/// Build `crates` for wasm32-wasip2 (profile `wasm`) with a nested cargo whose
/// target dir is `<target>/<subdir>`; returns the directory holding the `.wasm` files.
/// Shared by the build scripts of `ochre-host` (built-in plugins) and `ochre-tests`
/// (fixture plugins) through `include!`.
fn build_wasm(workspace: &std::path::Path, subdir: &str, crates: &[&str]) -> std::path::PathBuf {
    use std::path::PathBuf;
    use std::process::Command;
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"))
        .join(subdir);
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
            "building {crates:?} for wasm32-wasip2 failed. If the target is missing, run: \
             rustup target add wasm32-wasip2"
        );
    }
    target_dir.join("wasm32-wasip2").join("wasm")
}
