//! The built-in tool groups (`plugins/*`), compiled for wasm32-wasip2 by `build.rs`
//! and embedded in the library, so users never build them by hand.

#[cfg(feature = "builtin-plugins")]
include!(concat!(env!("OUT_DIR"), "/builtin_plugins.rs"));

/// (file name, component bytes) of each built-in plugin.
#[cfg(not(feature = "builtin-plugins"))]
pub(crate) static BUILTIN_PLUGINS: &[(&str, &[u8])] = &[];
