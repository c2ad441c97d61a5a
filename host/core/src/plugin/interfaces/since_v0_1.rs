//! Plugins built against `ochre:plugin@0.1.0` (`wit/v0.1.0/plugin.wit`, frozen):
//! the adapter that keeps them loading.
//!
//! 0.1.0's `types` interface is the current one, so its bindings use the current
//! Rust types (`with` below) and tool definitions, outputs and errors need no
//! conversion. Every interface that did not change gets its `Host` impl from the
//! same source as the current one (`for_each_version!`); what changed is adapted
//! here:
//!
//! - `browser.tab-info` has no `opener` and no `dialog` in 0.1.0: they are left out.

#[cfg(feature = "browser")]
use super::FromHostTab;

/// The bindings of the 0.1.0 world.
pub(crate) use ochre_runtime::bindings_v0_1 as bindings;

#[cfg(feature = "browser")]
impl FromHostTab for bindings::ochre::plugin::browser::TabInfo {
    fn from_host(t: crate::browser::TabInfo) -> Self {
        Self { id: t.id, url: t.url, title: t.title, current: t.current }
    }
}
