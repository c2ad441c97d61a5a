//! The SDK carries the WIT it is built from (`sdk/wit/`: the current version, and
//! `v0.1.0/` for plugins still built against it), so that the packaged crate
//! stands alone; the top-level `wit/` stays the source of truth.

#[test]
fn the_sdks_wit_is_the_top_level_wit() {
    let copies = [
        ("plugin.wit", include_str!("../wit/plugin.wit")),
        ("v0.1.0/plugin.wit", include_str!("../wit/v0.1.0/plugin.wit")),
    ];
    for (file, sdk) in copies {
        let top_path = format!("{}/../wit/{file}", env!("CARGO_MANIFEST_DIR"));
        let top = std::fs::read_to_string(&top_path).expect("the top-level WIT");
        assert!(
            sdk == top,
            "sdk/wit/{file} differs from wit/{file}: run `cp wit/{file} sdk/wit/{file}`"
        );
    }
}
