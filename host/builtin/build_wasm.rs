/// Build `crates` for wasm32-wasip2 (profile `wasm`) with a nested cargo;
/// returns the directory holding the `.wasm` files. Shared by the build scripts
/// of `ochre-builtin-plugins` and `ochre-tests` (fixture plugins) through
/// `include!`. Every wasm build of the checkout uses one target dir, so the
/// guests' dependencies (serde, schemars, wit-bindgen, the SDK) compile once:
/// the checkout's `target/wasm`, also when `CARGO_TARGET_DIR` points elsewhere
/// (a target dir shared by several checkouts, where the `.wasm` files of each
/// would have the same names).
///
/// `OCHRE_WASM_TARGET_DIR` names another dir for it: CI keeps one beside its
/// target dir, so that a fresh clone compiles the guests' dependencies no more
/// than the host's. A build for another checkout than the dir's last one
/// (`.ochre-checkout` there) first forgets every ochre crate built there, so
/// it compiles its own: cargo would take an older checkout's sources for
/// fresh against a newer checkout's build. Builds into one dir take turns
/// (`.ochre-lock`), so the `.wasm` files are this checkout's until the next.
fn build_wasm(workspace: &std::path::Path, crates: &[&str]) -> std::path::PathBuf {
    use std::process::Command;
    ensure_wasm_target();
    println!("cargo:rerun-if-env-changed=OCHRE_WASM_TARGET_DIR");
    let target_dir = match std::env::var_os("OCHRE_WASM_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => std::path::PathBuf::from(dir),
        _ => workspace.join("target").join("wasm"),
    };
    let fail = |what: &str, e: std::io::Error| -> ! {
        panic!("{what} in the WebAssembly target dir {}: {e}", target_dir.display())
    };
    std::fs::create_dir_all(&target_dir).unwrap_or_else(|e| fail("cannot create it", e));
    let lock = std::fs::File::create(target_dir.join(".ochre-lock"))
        .unwrap_or_else(|e| fail("cannot create .ochre-lock", e));
    lock.lock().unwrap_or_else(|e| fail("cannot lock .ochre-lock", e));
    let stamp = target_dir.join(".ochre-checkout");
    let checkout = workspace.display().to_string();
    if std::fs::read_to_string(&stamp).ok().is_some_and(|last| last != checkout) {
        // Host (proc macros) and wasm32-wasip2 units; a missing fingerprint
        // makes cargo build the unit again.
        for dir in [target_dir.join("wasm"), target_dir.join("wasm32-wasip2").join("wasm")] {
            let Ok(entries) = std::fs::read_dir(dir.join(".fingerprint")) else { continue };
            for entry in entries.flatten() {
                if entry.file_name().to_string_lossy().starts_with("ochre-") {
                    std::fs::remove_dir_all(entry.path())
                        .unwrap_or_else(|e| fail("cannot forget an earlier checkout's build", e));
                }
            }
        }
    }
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
    std::fs::write(&stamp, checkout).unwrap_or_else(|e| fail("cannot write .ochre-checkout", e));
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
