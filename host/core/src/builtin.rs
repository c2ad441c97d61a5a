//! The built-in tool groups (`plugins/*`), from crate `ochre-builtin-plugins`
//! (built from source in the repository), so users never build them by hand.

/// (file name, component bytes) of each built-in plugin.
#[cfg(feature = "builtin-plugins")]
pub(crate) use ochre_builtin_plugins::PLUGINS as BUILTIN_PLUGINS;

/// (file name, component bytes) of each built-in plugin: none in this build.
#[cfg(not(feature = "builtin-plugins"))]
pub(crate) static BUILTIN_PLUGINS: &[(&str, &[u8])] = &[];
