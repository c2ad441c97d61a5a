//! Builds the fixture plugins (`fixtures/plugins/*`) for wasm32-wasip2 and tells the
//! tests where they are (`OCHRE_FIXTURE_WASM_DIR`, and `OCHRE_FIXTURE_WASM_DIR_V0_1`
//! for those built against ochre:plugin@0.1.0).

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
    for dir in ["fixtures/plugins", "sdk", "wit", "host/builtin/build_wasm.rs"] {
        println!("cargo:rerun-if-changed={}", workspace.join(dir).display());
    }
    let dir = build_wasm(&workspace, "wasm-fixtures", FIXTURES);
    println!("cargo:rustc-env=OCHRE_FIXTURE_WASM_DIR={}", dir.display());
    // Built on their own: the SDK's wit-v0-1 feature would otherwise reach every
    // fixture built in the same cargo run (features are unified).
    let dir = build_wasm(&workspace, "wasm-fixtures-v0.1", V0_1_FIXTURES);
    println!("cargo:rustc-env=OCHRE_FIXTURE_WASM_DIR_V0_1={}", dir.display());
}

include!("../host/builtin/build_wasm.rs");
