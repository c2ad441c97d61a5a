//! `ochre plugin new` and `ochre plugin build`: a plugin project from a template
//! (Rust, or Python through componentize-py), and its build checked the way the
//! host will read it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};
use ochre_host::plugin::manifest;

/// The WIT version plugins built now are made against.
/// The environment variables that name the Python tools a build runs.
pub(crate) const TOOL_ENV: [&str; 2] = ["OCHRE_PYTHON", "OCHRE_COMPONENTIZE_PY"];

const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// One file of a template: its path in the project and its text.
type TemplateFile = (&'static str, &'static str);

const RUST: &[TemplateFile] = &[
    ("Cargo.toml", include_str!("../templates/rust/Cargo.toml.in")),
    ("src/lib.rs", include_str!("../templates/rust/src/lib.rs")),
    ("README.md", include_str!("../templates/rust/README.md")),
    (".gitignore", include_str!("../templates/rust/gitignore")),
];

const PYTHON: &[TemplateFile] = &[
    ("plugin.toml", include_str!("../templates/python/plugin.toml")),
    ("app.py", include_str!("../templates/python/app.py")),
    ("test_app.py", include_str!("../templates/python/test_app.py")),
    ("README.md", include_str!("../templates/python/README.md")),
    (".gitignore", include_str!("../templates/python/gitignore")),
    ("ochre_sdk.py", PYTHON_SDK),
];

/// The Python SDK (one module), as this binary's WIT version needs it.
const PYTHON_SDK: &str = include_str!("../templates/python/ochre_sdk.py");
/// The current WIT, for Python builds.
const WIT: &str = ochre_host::plugin::WIT;

pub(crate) use crate::args::Lang;

/// What `ochre plugin new` was asked for.
pub struct NewPlugin {
    /// Plugin name (also its capability group).
    pub name: String,
    /// Where to create the project (default: `./NAME`).
    pub dir: Option<PathBuf>,
    /// The ochre-sdk crate to build against (a source tree's `sdk/` or an unpacked
    /// package); default: this binary's own source tree when it is there, else
    /// the crates.io release. Rust only.
    pub sdk: Option<PathBuf>,
    /// The project's language.
    pub lang: Lang,
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
    let (dependency, patch) = match req.lang {
        Lang::Rust => sdk_dependency(req.sdk.as_deref())?,
        Lang::Python if req.sdk.is_some() => bail!("--sdk is for Rust plugins"),
        Lang::Python => Default::default(),
    };
    let files = match req.lang {
        Lang::Rust => RUST,
        Lang::Python => PYTHON,
    };
    let vars = [
        ("{{name}}", name.as_str()),
        ("{{stem}}", stem.as_str()),
        ("{{tool}}", &format!("{stem}_headings")),
        ("{{sdk_dependency}}", &dependency),
        ("{{patch}}", &patch),
    ];
    for (path, text) in files {
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
/// is an unpacked package whose macro and protocol crates lie beside it.
fn sdk_dependency(sdk: Option<&Path>) -> anyhow::Result<(String, String)> {
    let own_tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sdk");
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
    // A source tree finds its macro and protocol crates through its own
    // workspace; an unpacked package (`cargo package` puts them side by side)
    // asks the registry for them.
    if sdk.join("macros/Cargo.toml").is_file() {
        return Ok((dependency, String::new()));
    }
    let mut patch = String::new();
    for krate in ["ochre-sdk-macros", "ochre-protocol"] {
        let beside = sdk.with_file_name(format!("{krate}-{SDK_VERSION}"));
        if beside.join("Cargo.toml").is_file() {
            patch.push_str(&format!("{krate} = {{ path = {:?} }}\n", beside.display().to_string()));
        }
    }
    if !patch.is_empty() {
        patch.insert_str(0, "\n[patch.crates-io]\n");
    }
    Ok((dependency, patch))
}

/// Build the plugin project in `dir` for wasm32-wasip2 and check the component
/// the way the host reads it; with `out`, copy it there (a `--plugin-dir`).
/// Returns the component's path (in `out` when given).
pub fn build_plugin(dir: &Path, out: Option<&Path>) -> anyhow::Result<PathBuf> {
    let wasm = if dir.join("plugin.toml").is_file() {
        build_python(dir)?
    } else if dir.join("Cargo.toml").is_file() {
        build_rust(dir)?
    } else {
        bail!(
            "{}: neither Cargo.toml nor plugin.toml (a plugin project from `ochre plugin new`)",
            dir.display()
        );
    };
    let bytes = std::fs::read(&wasm).with_context(|| format!("cannot read {}", wasm.display()))?;
    let m = manifest::read(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", wasm.display()))?;
    let path = match out {
        Some(out) => install(&wasm, out)?,
        None => wasm,
    };
    crate::say!(
        "built plugin {} (group {}, ochre:plugin@{}): {}",
        m.name,
        m.group,
        m.sdk,
        path.display()
    );
    crate::say!("  tools: {}", m.tools.join(", "));
    crate::say!("  interfaces: {}", m.interfaces.iter().cloned().collect::<Vec<_>>().join(", "));
    let parent = path.parent().unwrap_or(Path::new("."));
    crate::say!("  load it: ochre --plugin-dir {}", parent.display());
    Ok(path)
}

/// `cargo build --release --target wasm32-wasip2`: the component it made.
fn build_rust(dir: &Path) -> anyhow::Result<PathBuf> {
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
    built_component(&output.stdout)
        .context("cargo built no .wasm file: is the crate's crate-type [\"cdylib\"]?")
}

/// A Python plugin's `plugin.toml`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PythonPlugin {
    name: String,
    group: Option<String>,
    interfaces: Vec<String>,
    #[serde(default)]
    cdp_domains: Vec<String>,
    module: Option<String>,
}

/// Build a Python plugin with componentize-py: the WIT world of the interfaces
/// `plugin.toml` lists, this binary's `ochre_sdk`, an entry module exporting the
/// tools; then the manifest (tool names read by importing the app natively).
fn build_python(dir: &Path) -> anyhow::Result<PathBuf> {
    let text =
        std::fs::read_to_string(dir.join("plugin.toml")).context("cannot read plugin.toml")?;
    let p: PythonPlugin = toml::from_str(&text).context("plugin.toml")?;
    let group = p.group.clone().unwrap_or_else(|| p.name.clone());
    let module = p.module.clone().unwrap_or_else(|| "app".into());
    if !manifest::valid_plugin_name(&p.name) || !manifest::valid_plugin_name(&group) {
        bail!("plugin.toml: name and group are 1-64 chars of [a-z0-9_-]");
    }
    let known: Vec<&str> = ochre_host::plugin::INTERFACES.iter().map(|i| i.name).collect();
    if let Some(bad) = p.interfaces.iter().find(|i| !known.contains(&i.as_str())) {
        bail!("plugin.toml: unknown interface {bad:?}; the interfaces are {}", known.join(", "));
    }
    if !module.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        bail!("plugin.toml: module {module:?} is not a Python module name");
    }
    let build = dir.join("target/ochre-build");
    let _ = std::fs::remove_dir_all(&build);
    std::fs::create_dir_all(build.join("wit/deps/ochre-plugin"))?;
    std::fs::write(build.join("wit/deps/ochre-plugin/plugin.wit"), WIT)?;
    std::fs::write(build.join("wit/world.wit"), python_world(&p.interfaces))?;
    std::fs::write(build.join("ochre_sdk.py"), PYTHON_SDK)?;
    std::fs::write(
        build.join("ochre_entry.py"),
        format!("import ochre_sdk\nimport {module}\n\nWitWorld = ochre_sdk.export({group:?})\n"),
    )?;

    // The tool names, from the app imported natively (the SDK runs without a host).
    let listing = format!(
        "import sys; sys.path[:0] = [{:?}, {:?}]; import {module}, ochre_sdk; print('\\n'.join(ochre_sdk.tool_names()))",
        build.display().to_string(),
        dir.canonicalize()?.display().to_string()
    );
    let python = std::env::var(TOOL_ENV[0]).unwrap_or_else(|_| "python3".into());
    let listed = Command::new(&python)
        .args(["-c", &listing])
        .output()
        .with_context(|| format!("cannot run {python} (Python 3 lists the tools)"))?;
    if !listed.status.success() {
        bail!("importing {module}.py failed:\n{}", String::from_utf8_lossy(&listed.stderr));
    }
    let tools: Vec<String> =
        String::from_utf8_lossy(&listed.stdout).lines().map(str::to_owned).collect();
    if tools.is_empty() {
        bail!("{module}.py defines no tool (mark a function with @ochre_sdk.tool)");
    }

    let raw = build.join("component.wasm");
    let componentize = std::env::var(TOOL_ENV[1]).unwrap_or_else(|_| "componentize-py".into());
    eprintln!("running: {componentize} componentize (in {})", dir.display());
    let status = Command::new(&componentize)
        .current_dir(dir)
        .arg("-d")
        .arg(build.join("wit"))
        .args(["-w", "python-plugin", "componentize", "-p"])
        .arg(&build)
        .args(["-p", ".", "ochre_entry", "-o"])
        .arg(&raw)
        .stdout(Stdio::null())
        .status()
        .with_context(|| {
            format!("cannot run {componentize}: install it with `pip install componentize-py`")
        })?;
    if !status.success() {
        bail!("componentize-py failed: its messages are above");
    }
    let mut text = format!(
        "ochre-manifest 1\nsdk={}\nname={}\ngroup={group}\n",
        ochre_host::plugin::WIT_VERSION,
        p.name
    );
    p.interfaces.iter().for_each(|i| text.push_str(&format!("interface={i}\n")));
    p.cdp_domains.iter().for_each(|d| text.push_str(&format!("cdp-domain={d}\n")));
    tools.iter().for_each(|t| text.push_str(&format!("tool={t}\n")));
    let mut bytes = std::fs::read(&raw)?;
    append_custom_section(&mut bytes, manifest::SECTION, text.as_bytes());
    let wasm = dir.join("target").join(format!("{}.wasm", p.name.replace('-', "_")));
    std::fs::write(&wasm, bytes)?;
    Ok(wasm)
}

/// The WIT world of a Python plugin: the listed interfaces and the plugin exports.
fn python_world(interfaces: &[String]) -> String {
    let v = ochre_host::plugin::WIT_VERSION;
    let mut w = String::from("package ochre-build:plugin;\n\nworld python-plugin {\n");
    for i in interfaces {
        w.push_str(&format!("    import ochre:plugin/{i}@{v};\n"));
    }
    w.push_str(&format!(
        "    use ochre:plugin/types@{v}.{{tool-definition, tool-output, tool-error}};\n\
         \x20   export describe: func() -> list<tool-definition>;\n\
         \x20   export call: func(tool: string, args: string) -> result<tool-output, tool-error>;\n}}\n"
    ));
    w
}

/// Append a custom section (id 0: name, then data) to a WebAssembly binary.
fn append_custom_section(bytes: &mut Vec<u8>, name: &str, data: &[u8]) {
    let mut payload = Vec::new();
    leb128(&mut payload, name.len());
    payload.extend_from_slice(name.as_bytes());
    payload.extend_from_slice(data);
    bytes.push(0);
    leb128(bytes, payload.len());
    bytes.extend_from_slice(&payload);
}

fn leb128(out: &mut Vec<u8>, mut n: usize) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
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
            let req = NewPlugin { name: bad.into(), dir: None, sdk: None, lang: Lang::Rust };
            assert!(new_plugin(&req).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn an_appended_manifest_is_read_back_by_the_host() {
        // The smallest component: the preamble of the component-model binary format.
        let mut bytes = b"\0asm\x0d\0\x01\0".to_vec();
        // Longer than 127 bytes: the section's size takes two LEB128 bytes.
        let mut text = String::from("ochre-manifest 1\nsdk=0.2.0\nname=py\ngroup=py\n");
        (0..30).for_each(|n| text.push_str(&format!("tool=t{n}\n")));
        append_custom_section(&mut bytes, manifest::SECTION, text.as_bytes());
        let m = manifest::read(&bytes).expect("manifest");
        assert_eq!((m.name.as_str(), m.sdk.as_str()), ("py", "0.2.0"));
        assert_eq!((m.tools.len(), m.tools[29].as_str()), (30, "t29"));
        let world = python_world(&["logging".into(), "browser".into()]);
        assert!(world.contains("import ochre:plugin/browser@0.2.0;"), "{world}");
        assert!(world.contains("    export call: func("), "{world}");
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
