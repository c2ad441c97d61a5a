//! Builds the fixture plugins (`fixtures/plugins/*`) for wasm32-wasip2 and tells the
//! tests where they are (`OCHRE_FIXTURE_WASM_DIR`, which holds those built against
//! ochre:plugin@0.1.0 too).

/// Fixture crates built against the current WIT: hostile guests and examples.
const FIXTURES: &[&str] = &[
    "ochre-fixture-hostile",
    "ochre-fixture-greedy",
    "ochre-fixture-dupe",
    "ochre-fixture-futurewit",
    "ochre-fixture-cdpuser",
    "ochre-fixture-scoped",
];

/// Fixture crates built against ochre:plugin@0.1.0 (the third-party example).
const V0_1_FIXTURES: &[&str] = &["ochre-fixture-hello"];

fn main() {
    let manifest_dir =
        std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let workspace = manifest_dir.parent().expect("workspace root").to_path_buf();
    println!("cargo:rerun-if-changed=build.rs");
    for dir in [
        "fixtures/plugins",
        "sdk",
        "wit",
        "host/protocol",
        "Cargo.lock",
        "host/builtin/build_wasm.rs",
    ] {
        println!("cargo:rerun-if-changed={}", workspace.join(dir).display());
    }
    let dir = build_wasm(&workspace, FIXTURES);
    // Built in a cargo run of their own (in the same target dir): the SDK's
    // wit-v0-1 feature would otherwise reach every fixture built in the same cargo
    // run (features are unified).
    let v0_1 = build_wasm(&workspace, V0_1_FIXTURES);
    assert_eq!(dir, v0_1, "one target dir for every wasm build");
    println!("cargo:rustc-env=OCHRE_FIXTURE_WASM_DIR={}", dir.display());
}

include!("../host/builtin/build_wasm.rs");
