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
///
/// A build whose inputs are byte for byte those of an earlier one there (see
/// [`Reuse`]) takes that build's `.wasm` files instead of compiling: a new
/// clone of a commit built before compiles no guest.
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
    let out = target_dir.join("wasm32-wasip2").join("wasm");
    let reuse = Reuse::new(&target_dir, workspace, crates);
    if reuse.as_ref().is_some_and(|r| r.restore(&out)) {
        // Cargo's own record there is of the last build, not of these files:
        // the next build (of any checkout) compiles every ochre crate.
        std::fs::write(&stamp, format!("reused by {checkout}"))
            .unwrap_or_else(|e| fail("cannot write .ochre-checkout", e));
        return out;
    }
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
    if let Some(r) = reuse {
        r.store(&out);
    }
    out
}

/// The builds of one set of crates kept for reuse, in the WebAssembly target
/// dir's `reuse/` (the last four of each set): each keeps copies of the files
/// it was built from (every source file rustc read for the crates, as cargo's
/// `.d` files name them, the manifests of their packages, the workspace's
/// manifest, lock file and cargo configs, this file), with the toolchain's
/// version and the cargo settings of the environment, and the `.wasm` files
/// it made. A build whose inputs are all the same, byte for byte, restores
/// those `.wasm` files. A dependency from a registry is named by its version
/// in the lock file; a build reading a file outside the workspace is not kept.
/// `OCHRE_WASM_REUSE=0` turns reuse off. Any error here means no reuse.
struct Reuse {
    dir: std::path::PathBuf,
    workspace: std::path::PathBuf,
    crates: Vec<String>,
    /// The toolchain, the command and the cargo settings in the environment.
    setting: String,
}

impl Reuse {
    const KEEP: usize = 4;

    fn new(target_dir: &std::path::Path, workspace: &std::path::Path, crates: &[&str]) -> Option<Self> {
        println!("cargo:rerun-if-env-changed=OCHRE_WASM_REUSE");
        if std::env::var_os("OCHRE_WASM_REUSE").is_some_and(|v| v == "0") {
            return None;
        }
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
        let version = std::process::Command::new(rustc).arg("-vV").output().ok()?;
        if !version.status.success() {
            return None;
        }
        let mut setting = String::from_utf8_lossy(&version.stdout).into_owned();
        setting.push_str(&format!("crates {crates:?}\n"));
        let mut vars: Vec<(String, String)> = std::env::vars()
            .filter(|(k, _)| {
                // (Not the wrappers: the build runs without them.)
                (["CARGO_BUILD_", "CARGO_TARGET_WASM32", "CARGO_UNSTABLE_", "RUSTC"]
                    .iter()
                    .any(|p| k.starts_with(p))
                    || k == "CARGO_HOME"
                    || k == "CARGO_INCREMENTAL")
                    && !k.ends_with("_WRAPPER")
            })
            .collect();
        vars.sort();
        for (k, v) in vars {
            setting.push_str(&format!("{k}={v}\n"));
        }
        // Cargo's configs outside the workspace (the workspace's own are inputs).
        let home = std::env::var_os("CARGO_HOME").map(std::path::PathBuf::from);
        let mut configs: Vec<std::path::PathBuf> = workspace.ancestors().skip(1).map(|d| d.join(".cargo")).collect();
        configs.extend(home);
        for dir in configs {
            for name in ["config.toml", "config"] {
                if let Ok(text) = std::fs::read_to_string(dir.join(name)) {
                    setting.push_str(&format!("{}:\n{text}\n", dir.join(name).display()));
                }
            }
        }
        Some(Self {
            dir: target_dir.join("reuse").join(crates.join(",")),
            workspace: workspace.to_path_buf(),
            crates: crates.iter().map(|c| (*c).to_owned()).collect(),
            setting,
        })
    }

    fn stems(&self) -> impl Iterator<Item = String> + '_ {
        self.crates.iter().map(|c| c.replace('-', "_"))
    }

    /// The kept builds, the last used first.
    fn kept(&self) -> Vec<std::path::PathBuf> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Vec::new() };
        let mut kept: Vec<(std::time::SystemTime, std::path::PathBuf)> = entries
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with("tmp-"))
            .filter_map(|e| {
                let used = std::fs::metadata(e.path().join("used")).and_then(|m| m.modified()).ok()?;
                Some((used, e.path()))
            })
            .collect();
        kept.sort_by_key(|k| std::cmp::Reverse(k.0));
        kept.into_iter().map(|(_, p)| p).collect()
    }

    /// Puts a kept build's `.wasm` files in `out` when its inputs are this
    /// checkout's; whether it did.
    fn restore(&self, out: &std::path::Path) -> bool {
        let Some(build) = self.kept().into_iter().find(|b| self.same(b)) else { return false };
        let _ = std::fs::create_dir_all(out);
        for stem in self.stems() {
            let name = format!("{stem}.wasm");
            let Ok(kept) = std::fs::read(build.join("out").join(&name)) else { return false };
            let there = out.join(&name);
            if std::fs::read(&there).is_ok_and(|b| b == kept) {
                continue;
            }
            let part = out.join(format!(".{name}.part"));
            if std::fs::write(&part, &kept).and_then(|()| std::fs::rename(&part, &there)).is_err() {
                return false;
            }
        }
        Self::used(&build);
        true
    }

    /// Whether the build kept in `build` had this checkout's inputs.
    fn same(&self, build: &std::path::Path) -> bool {
        let Ok(setting) = std::fs::read_to_string(build.join("setting")) else { return false };
        let Ok(list) = std::fs::read_to_string(build.join("inputs.list")) else { return false };
        setting == self.setting
            && list.lines().all(|rel| {
                match (std::fs::read(self.workspace.join(rel)), std::fs::read(build.join("inputs").join(rel))) {
                    (Ok(now), Ok(then)) => now == then,
                    _ => false,
                }
            })
    }

    /// Marks a kept build as just used (the time it holds is its file's).
    fn used(build: &std::path::Path) {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        let _ = std::fs::write(build.join("used"), format!("{:?}", now.map(|d| d.as_nanos())));
    }

    /// The files this build read (relative to the workspace), or `None` when
    /// one is outside it or cargo's `.d` files cannot be read.
    fn inputs(&self, out: &std::path::Path) -> Option<Vec<String>> {
        let mut files = std::collections::BTreeSet::new();
        for stem in self.stems() {
            let d = std::fs::read_to_string(out.join(format!("{stem}.d"))).ok()?;
            // `target: dep dep ...`, a space in a name written `\ `.
            let (_, deps) = d.split_once(": ")?;
            let deps = deps.trim().replace("\\ ", "\u{0}");
            for dep in deps.split_whitespace() {
                let dep = std::path::PathBuf::from(dep.replace('\u{0}', " "));
                let rel = dep.strip_prefix(&self.workspace).ok()?;
                files.insert(rel.to_path_buf());
                // The manifest of the package it belongs to.
                for dir in rel.ancestors().skip(1) {
                    if self.workspace.join(dir).join("Cargo.toml").is_file() {
                        files.insert(dir.join("Cargo.toml"));
                        break;
                    }
                }
            }
        }
        for f in ["Cargo.toml", "Cargo.lock", ".cargo/config.toml", ".cargo/config", "rust-toolchain.toml", "rust-toolchain", "host/builtin/build_wasm.rs"] {
            if self.workspace.join(f).is_file() {
                files.insert(f.into());
            }
        }
        files.into_iter().map(|f| f.to_str().map(str::to_owned)).collect()
    }

    /// Keeps this build (just made in `out`), and drops all but the last
    /// [`Self::KEEP`] kept.
    fn store(&self, out: &std::path::Path) {
        let Some(inputs) = self.inputs(out) else { return };
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let tmp = self.dir.join(format!("tmp-{}-{nanos}", std::process::id()));
        let kept = (|| -> std::io::Result<()> {
            for rel in &inputs {
                let to = tmp.join("inputs").join(rel);
                std::fs::create_dir_all(to.parent().unwrap_or(&tmp))?;
                std::fs::copy(self.workspace.join(rel), to)?;
            }
            std::fs::create_dir_all(tmp.join("out"))?;
            for stem in self.stems() {
                let name = format!("{stem}.wasm");
                std::fs::copy(out.join(&name), tmp.join("out").join(&name))?;
            }
            std::fs::write(tmp.join("inputs.list"), inputs.join("\n"))?;
            std::fs::write(tmp.join("setting"), &self.setting)?;
            Self::used(&tmp);
            std::fs::rename(&tmp, self.dir.join(format!("{nanos}")))
        })();
        if kept.is_err() {
            let _ = std::fs::remove_dir_all(&tmp);
            return;
        }
        for old in self.kept().into_iter().skip(Self::KEEP) {
            let _ = std::fs::remove_dir_all(old);
        }
        // What an interrupted store left.
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with("tmp-") && !name.starts_with(&format!("tmp-{}-", std::process::id())) {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
    }
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
