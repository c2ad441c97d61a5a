//! # ochre-builtin-plugins
//!
//! ochre's built-in tool groups (`plugins/*` in the repository: `core`, `totp`,
//! `storage`, `profile`, `recording`, `crawl`, `workflow`), compiled for
//! `wasm32-wasip2`, as bytes for `ochre-host` to load like any plugin (same
//! manifest checks, same sandbox). In the repository `build.rs` builds them from
//! source with a nested cargo; a packaged crate carries the components CI built
//! from the same sources (`wasm/`); packagers may point
//! `OCHRE_PREBUILT_PLUGINS` at a directory of their own builds.

#![warn(missing_docs)]

include!(concat!(env!("OUT_DIR"), "/builtin_plugins.rs"));

#[cfg(test)]
mod tests {
    #[test]
    fn every_plugin_is_a_component_with_a_manifest() {
        assert_eq!(super::PLUGINS.len(), 7);
        for (name, bytes) in super::PLUGINS {
            assert!(name.starts_with("ochre_plugin_") && name.ends_with(".wasm"), "{name}");
            // The component-model preamble: magic, then layer 1.
            assert_eq!(&bytes[..4], b"\0asm", "{name}");
            assert_eq!(bytes[6..8], [1, 0], "{name} is not a component");
            let manifest = b"ochre-manifest";
            assert!(bytes.windows(manifest.len()).any(|w| w == manifest), "{name}");
        }
    }
}
