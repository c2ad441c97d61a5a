//! Builds the fixture plugins (`fixtures/plugins/*`) for wasm32-wasip2 and tells the
//! tests where they are (`OCHRE_FIXTURE_WASM_DIR`).

/// Fixture crates: hostile guests and the third-party example.
const FIXTURES: &[&str] = &[
    "ochre-fixture-hello",
    "ochre-fixture-hostile",
    "ochre-fixture-greedy",
    "ochre-fixture-dupe",
    "ochre-fixture-oldwit",
    "ochre-fixture-cdpuser",
    "ochre-fixture-scoped",
];

fn main() {
    let manifest_dir =
        std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let workspace = manifest_dir.parent().expect("workspace root").to_path_buf();
    println!("cargo:rerun-if-changed=build.rs");
    for dir in ["fixtures/plugins", "sdk", "wit", "host/build_wasm.rs"] {
        println!("cargo:rerun-if-changed={}", workspace.join(dir).display());
    }
    let dir = build_wasm(&workspace, "wasm-fixtures", FIXTURES);
    println!("cargo:rustc-env=OCHRE_FIXTURE_WASM_DIR={}", dir.display());
}

include!("../host/build_wasm.rs");
