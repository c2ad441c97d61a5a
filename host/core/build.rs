//! Builds the built-in tool groups (`plugins/*`) for `wasm32-wasip2` with a nested
//! cargo (own target dir, profile `wasm`) and embeds them, so that `cargo run` and
//! `cargo test` ship them without a separate step.

use std::path::PathBuf;

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
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let generated = out.join("builtin_plugins.rs");
    if std::env::var_os("CARGO_FEATURE_BUILTIN_PLUGINS").is_none() {
        std::fs::write(&generated, "").expect("write builtin_plugins.rs");
        return;
    }
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let workspace = manifest_dir.ancestors().nth(2).expect("workspace root").to_path_buf();
    for dir in ["plugins", "sdk", "wit"] {
        println!("cargo:rerun-if-changed={}", workspace.join(dir).display());
    }
    println!("cargo:rerun-if-changed={}", workspace.join("Cargo.lock").display());
    println!("cargo:rerun-if-env-changed=OCHRE_PREBUILT_PLUGINS");

    let files = match std::env::var_os("OCHRE_PREBUILT_PLUGINS") {
        // Packagers may build the plugins themselves and point here.
        Some(dir) => PathBuf::from(dir),
        None => build_wasm(
            &workspace,
            "wasm-plugins",
            &BUILTIN.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
        ),
    };
    let mut code = String::from("/// (file name, component bytes) of each built-in plugin.\n");
    code.push_str("pub(crate) static BUILTIN_PLUGINS: &[(&str, &[u8])] = &[\n");
    for (_, stem) in BUILTIN {
        let path = files.join(format!("{stem}.wasm"));
        if !path.exists() {
            panic!("built-in plugin {} is missing", path.display());
        }
        code.push_str(&format!(
            "    ({:?}, include_bytes!({:?})),\n",
            format!("{stem}.wasm"),
            path.display().to_string()
        ));
    }
    code.push_str("];\n");
    std::fs::write(&generated, code).expect("write builtin_plugins.rs");
}

include!("build_wasm.rs");
