//! `ochre plugin new` and `ochre plugin build`: a plugin project from a template,
//! and its build checked the way the host will read it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};
use ochre_host::plugin::manifest;

/// The WIT version plugins built now are made against.
const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// One file of a template: its path in the project and its text.
type TemplateFile = (&'static str, &'static str);

const RUST: &[TemplateFile] = &[
    ("Cargo.toml", include_str!("../templates/rust/Cargo.toml")),
    ("src/lib.rs", include_str!("../templates/rust/src/lib.rs")),
    ("README.md", include_str!("../templates/rust/README.md")),
    (".gitignore", include_str!("../templates/rust/gitignore")),
];

/// What `ochre plugin new` was asked for.
pub struct NewPlugin {
    /// Plugin name (also its capability group).
    pub name: String,
    /// Where to create the project (default: `./NAME`).
    pub dir: Option<PathBuf>,
    /// The ochre-sdk crate to build against (a source tree's `sdk/` or an unpacked
    /// package); default: this binary's own source tree when it is there, else
    /// the crates.io release.
    pub sdk: Option<PathBuf>,
}

/// Write a ready plugin project; returns its directory.
pub fn new_plugin(req: &NewPlugin) -> anyhow::Result<PathBuf> {
    let name = &req.name;
    let starts_with_letter = name.bytes().next().is_some_and(|b| b.is_ascii_lowercase());
    if !manifest::valid_plugin_name(name) || !starts_with_letter || name.len() > 48 {
        bail!(
            "plugin name {name:?}: use 1-48 chars of [a-z0-9_-], starting with a letter \
             (it names the plugin, its group and its tool `<name>_headings`)"
        );
    }
    let dir = req.dir.clone().unwrap_or_else(|| PathBuf::from(name));
    if dir.exists() && std::fs::read_dir(&dir).map(|mut d| d.next().is_some()).unwrap_or(true) {
        bail!("{} already exists and is not empty: choose another --dir", dir.display());
    }
    let stem = name.replace('-', "_");
    let (dependency, patch) = sdk_dependency(req.sdk.as_deref())?;
    let vars = [
        ("{{name}}", name.as_str()),
        ("{{stem}}", stem.as_str()),
        ("{{tool}}", &format!("{stem}_headings")),
        ("{{sdk_dependency}}", &dependency),
        ("{{patch}}", &patch),
    ];
    for (path, text) in RUST {
        let text = vars.iter().fold(text.to_string(), |t, (k, v)| t.replace(k, v));
        let file = dir.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&file, text).with_context(|| format!("cannot write {}", file.display()))?;
    }
    Ok(dir)
}

/// The `ochre-sdk` dependency line, and a `[patch.crates-io]` section when the SDK
/// is an unpacked package whose macro crate lies beside it.
fn sdk_dependency(sdk: Option<&Path>) -> anyhow::Result<(String, String)> {
    let own_tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk");
    let sdk = match sdk {
        Some(dir) => dir.to_path_buf(),
        None if own_tree.join("Cargo.toml").is_file() => own_tree,
        None => return Ok((format!("ochre-sdk = \"{SDK_VERSION}\""), String::new())),
    };
    let sdk = sdk.canonicalize().with_context(|| format!("--sdk {}", sdk.display()))?;
    let manifest = std::fs::read_to_string(sdk.join("Cargo.toml")).unwrap_or_default();
    if !manifest.contains("name = \"ochre-sdk\"") {
        bail!("--sdk {}: no ochre-sdk crate there (its Cargo.toml names another)", sdk.display());
    }
    let dependency = format!("ochre-sdk = {{ path = {:?} }}", sdk.display().to_string());
    // A source tree finds its macro crate through its own workspace; an unpacked
    // package (`cargo package` puts both side by side) asks the registry for it.
    let packaged_macros = sdk.with_file_name(format!("ochre-sdk-macros-{SDK_VERSION}"));
    if sdk.join("macros/Cargo.toml").is_file() || !packaged_macros.join("Cargo.toml").is_file() {
        return Ok((dependency, String::new()));
    }
    let patch = format!(
        "\n[patch.crates-io]\nochre-sdk-macros = {{ path = {:?} }}\n",
        packaged_macros.display().to_string()
    );
    Ok((dependency, patch))
}

/// Build the plugin project in `dir` for wasm32-wasip2 and check the component
/// the way the host reads it; with `out`, copy it there (a `--plugin-dir`).
/// Returns the component's path (in `out` when given).
pub fn build_plugin(dir: &Path, out: Option<&Path>) -> anyhow::Result<PathBuf> {
    if !dir.join("Cargo.toml").is_file() {
        bail!("{}: no Cargo.toml (a plugin project from `ochre plugin new`)", dir.display());
    }
    check_wasm_target()?;
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cargo
        .current_dir(dir)
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .args(["--message-format", "json-render-diagnostics"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    eprintln!("running: cargo build --release --target wasm32-wasip2 (in {})", dir.display());
    let output = cargo.output().context("cannot run cargo")?;
    if !output.status.success() {
        bail!("the build failed: the compiler's messages are above");
    }
    let wasm = built_component(&output.stdout)
        .context("cargo built no .wasm file: is the crate's crate-type [\"cdylib\"]?")?;
    let bytes = std::fs::read(&wasm).with_context(|| format!("cannot read {}", wasm.display()))?;
    let m = manifest::read(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", wasm.display()))?;
    let path = match out {
        Some(out) => install(&wasm, out)?,
        None => wasm,
    };
    println!("built plugin {} (group {}, sdk {}): {}", m.name, m.group, m.sdk, path.display());
    println!("  tools: {}", m.tools.join(", "));
    println!("  interfaces: {}", m.interfaces.iter().cloned().collect::<Vec<_>>().join(", "));
    let parent = path.parent().unwrap_or(Path::new("."));
    println!("  load it: ochre --plugin-dir {}", parent.display());
    Ok(path)
}

/// The last `.wasm` file among cargo's compiler-artifact messages.
fn built_component(messages: &[u8]) -> Option<PathBuf> {
    String::from_utf8_lossy(messages)
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .flat_map(|m| m["filenames"].as_array().cloned().unwrap_or_default())
        .filter_map(|f| f.as_str().map(PathBuf::from))
        .find(|f| f.extension().is_some_and(|e| e == "wasm"))
}

/// Copy `wasm` into the plugin dir `out` (written whole, then renamed).
fn install(wasm: &Path, out: &Path) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let name = wasm.file_name().context("component file name")?;
    let dest = out.join(name);
    let tmp = out.join(format!(".{}.tmp", name.to_string_lossy()));
    std::fs::copy(wasm, &tmp).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, &dest).with_context(|| format!("cannot write {}", dest.display()))?;
    Ok(dest)
}

/// The wasm32-wasip2 standard library must be installed; say how when it is not.
fn check_wasm_target() -> anyhow::Result<()> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .with_context(|| format!("cannot run {rustc}: is Rust installed (rustup)?"))?;
    let sysroot = String::from_utf8_lossy(&sysroot.stdout).trim().to_owned();
    if Path::new(&sysroot).join("lib/rustlib/wasm32-wasip2/lib").is_dir() {
        return Ok(());
    }
    bail!("the wasm32-wasip2 target is not installed: run `rustup target add wasm32-wasip2`")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_cannot_make_a_crate_and_a_tool_are_refused() {
        for bad in ["", "Demo", "1demo", "de mo", "demo!", &"a".repeat(49)] {
            let req = NewPlugin { name: bad.into(), dir: None, sdk: None };
            assert!(new_plugin(&req).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn the_component_is_the_wasm_among_the_artifacts() {
        let messages = br#"{"reason":"compiler-artifact","filenames":["/t/libserde.rlib"]}
{"reason":"build-finished","success":true}
{"reason":"compiler-artifact","filenames":["/t/wasm32-wasip2/release/demo.wasm"]}
"#;
        assert_eq!(built_component(messages), Some("/t/wasm32-wasip2/release/demo.wasm".into()));
        assert_eq!(built_component(b"not json"), None);
    }
}
