//! The host's crates are layered and Cargo enforces it: each crate's normal
//! dependencies (`cargo tree -e normal`) hold no crate above it, and the heavy
//! parts stay where they belong: no MCP server (rmcp, axum), command line (clap)
//! or OCI client below the MCP and CLI crates, no WebAssembly runtime in the
//! browser and no browser in the WebAssembly runtime (`ochre-runtime`, which
//! knows no crate of ochre's but the protocol), neither a runtime nor a browser
//! in the protocol crate, and no browser in `ochre-host` built without its
//! default features.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

/// The names of the crates `package` depends on for building (normal edges).
fn normal_dependencies(package: &str, features: &[&str]) -> BTreeSet<String> {
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(&workspace)
        .args(["tree", "--offline", "--locked", "-e", "normal", "--prefix", "none"])
        .args(["--format", "{p}", "-p", package])
        .args(features)
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect();
    assert!(names.contains(package), "{package} missing from its own tree: {names:?}");
    names
}

fn assert_none(package: &str, features: &[&str], forbidden: &[&str]) {
    let deps = normal_dependencies(package, features);
    let found: Vec<&&str> = forbidden.iter().filter(|f| deps.contains(**f)).collect();
    assert!(found.is_empty(), "{package} {features:?} depends on {found:?}");
}

const ABOVE_HOST: &[&str] = &["ochre-mcp", "ochre", "rmcp", "axum", "clap", "oci-client"];

#[test]
fn no_crate_depends_on_one_above_it() {
    assert_none(
        "ochre-protocol",
        &[],
        &["ochre-browser", "ochre-host", "tokio", "wasmtime", "chromiumoxide", "rmcp"],
    );
    let browser_forbids: Vec<&str> =
        [&["ochre-host", "ochre-runtime", "wasmtime", "wasmtime-wasi"][..], ABOVE_HOST].concat();
    assert_none("ochre-browser", &[], &browser_forbids);
    let runtime_forbids: Vec<&str> = [
        &["ochre-host", "ochre-browser", "ochre-builtin-plugins", "chromiumoxide", "reqwest"][..],
        ABOVE_HOST,
    ]
    .concat();
    assert_none("ochre-runtime", &[], &runtime_forbids);
    assert_none("ochre-host", &[], ABOVE_HOST);
    // An embedder that only runs plugins: no browser either.
    let plugins_only: Vec<&str> =
        [&["ochre-browser", "chromiumoxide", "reqwest", "nix"][..], ABOVE_HOST].concat();
    assert_none("ochre-host", &["--no-default-features"], &plugins_only);
    assert_none("ochre-mcp", &[], &["ochre", "clap", "oci-client"]);
}

#[test]
fn the_tree_is_read_truly() {
    // The check above could pass on an empty reading: the layers are there.
    let cli = normal_dependencies("ochre", &[]);
    for krate in ["ochre-mcp", "ochre-host", "ochre-browser", "ochre-protocol", "rmcp", "clap"] {
        assert!(cli.contains(krate), "{krate} not under ochre: {cli:?}");
    }
    assert!(normal_dependencies("ochre-host", &[]).contains("ochre-runtime"));
    assert!(normal_dependencies("ochre-runtime", &[]).contains("wasmtime"));
    assert!(normal_dependencies("ochre-host", &[]).contains("wasmtime"));
    assert!(normal_dependencies("ochre-host", &[]).contains("chromiumoxide"));
    assert!(normal_dependencies("ochre-host", &["--no-default-features"]).contains("wasmtime"));
}
