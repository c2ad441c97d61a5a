//! The SDK carries the WIT it is built from (`sdk/wit/`), so that the packaged
//! crate stands alone; the top-level `wit/` stays the source of truth.

#[test]
fn the_sdks_wit_is_the_top_level_wit() {
    let sdk = include_str!("../wit/plugin.wit");
    let top_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../wit/plugin.wit");
    let top = std::fs::read_to_string(top_path).expect("the top-level wit/plugin.wit");
    assert!(
        sdk == top,
        "sdk/wit/plugin.wit differs from wit/plugin.wit: run `cp wit/plugin.wit sdk/wit/`"
    );
}
