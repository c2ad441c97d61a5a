//! Provides the built-in tool groups (`plugins/*`) as `wasm32-wasip2` components:
//! in the repository, built from source with a nested cargo (own target dir,
//! profile `wasm`), so `cargo run` and `cargo test` ship them without a separate
//! step; in a packaged crate, the components packaged beside this file (`wasm/`);
//! or those in `OCHRE_PREBUILT_PLUGINS` when set.

use std::path::{Path, PathBuf};

/// (crate, file stem) of each built-in plugin, in load order.
const BUILTIN: &[(&str, &str)] = &[
    ("ochre-plugin-core", "ochre_plugin_core"),
    ("ochre-plugin-totp", "ochre_plugin_totp"),
    ("ochre-plugin-storage", "ochre_plugin_storage"),
    ("ochre-plugin-profile", "ochre_plugin_profile"),
    ("ochre-plugin-recording", "ochre_plugin_recording"),
    ("ochre-plugin-crawl", "ochre_plugin_crawl"),
    ("ochre-plugin-workflow", "ochre_plugin_workflow"),
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=OCHRE_PREBUILT_PLUGINS");
    // Cargo may hand this script's last output to a build of another checkout
    // sharing the target dir (`cargo package` verifies the packaged crate in
    // it): that output's paths are not this checkout's, and a change here would
    // go unseen. The directory cargo runs in tells checkouts apart.
    println!("cargo:rerun-if-env-changed=PWD");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let files = match std::env::var_os("OCHRE_PREBUILT_PLUGINS") {
        // Packagers may build the plugins themselves and point here.
        Some(dir) => PathBuf::from(dir),
        None => match repository(&manifest_dir) {
            Some(workspace) => {
                for dir in ["plugins", "sdk", "wit", "host/protocol"] {
                    println!("cargo:rerun-if-changed={}", workspace.join(dir).display());
                }
                println!("cargo:rerun-if-changed={}", workspace.join("Cargo.lock").display());
                let crates: Vec<&str> = BUILTIN.iter().map(|(k, _)| *k).collect();
                build_wasm(&workspace, &crates)
            }
            None => {
                println!("cargo:rerun-if-changed=wasm");
                manifest_dir.join("wasm")
            }
        },
    };
    let mut code =
        String::from("/// (file name, component bytes) of each built-in plugin, in load order.\n");
    code.push_str("pub static PLUGINS: &[(&str, &[u8])] = &[\n");
    for (_, stem) in BUILTIN {
        let path = files.join(format!("{stem}.wasm"));
        if !path.exists() {
            panic!(
                "built-in plugin {} is missing (a packaged crate carries them in wasm/; \
                 or set OCHRE_PREBUILT_PLUGINS to a directory holding them)",
                path.display()
            );
        }
        code.push_str(&format!(
            "    ({:?}, include_bytes!({:?})),\n",
            format!("{stem}.wasm"),
            path.display().to_string()
        ));
    }
    code.push_str("];\n");
    std::fs::write(out.join("builtin_plugins.rs"), code).expect("write builtin_plugins.rs");
}

/// The repository this crate is built in (`host/builtin` of a checkout holding
/// the plugins' sources), or `None` for a packaged crate.
fn repository(manifest_dir: &Path) -> Option<PathBuf> {
    let workspace = manifest_dir.ancestors().nth(2)?;
    workspace.join("plugins/core/Cargo.toml").is_file().then(|| workspace.to_path_buf())
}

include!("build_wasm.rs");
