//! The host side of the WIT interfaces (`wit/plugin.wit`): one module per
//! interface, each the `Host` impl of its interface; linked per plugin by
//! [`add_to_linker`] only when granted. Adding an interface: a module here and a
//! line in `add_to_linker`.

use wasmtime::component::{HasSelf, Linker};

use super::{CallState, WIT_VERSION};

pub(crate) mod bindings {
    wasmtime::component::bindgen!({
        world: "plugin",
        path: "../wit",
        // kv traps when the plugin's state file is damaged: the call fails with
        // STATE_CORRUPT instead of the plugin reading it as empty.
        imports: { "ochre:plugin/kv": async | trappable, default: async },
        exports: { default: async },
    });
}

mod browser;
mod cdp;
mod clock;
mod kv;
mod logging;
mod progress;
mod recorder;
mod secrets;
mod tools;

/// The types-only interface: an empty instance satisfies its import.
pub(crate) fn add_types(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    linker.instance(&format!("ochre:plugin/types@{WIT_VERSION}"))?;
    Ok(())
}

/// A host interface a plugin may import.
#[derive(Debug, Clone, Copy)]
pub struct HostInterface {
    /// Its name in `ochre:plugin/<name>` and in manifests.
    pub name: &'static str,
    /// Granted to third-party plugins only when the operator says so (`--grant`).
    pub sensitive: bool,
    link: fn(&mut Linker<CallState>) -> wasmtime::Result<()>,
}

/// Every host interface, each from its own module.
pub const INTERFACES: &[HostInterface] = &[
    logging::INTERFACE,
    clock::INTERFACE,
    kv::INTERFACE,
    secrets::INTERFACE,
    progress::INTERFACE,
    browser::INTERFACE,
    cdp::INTERFACE,
    recorder::INTERFACE,
    tools::INTERFACE,
];

/// Link host interface `iface` into `linker`.
pub(crate) fn add_to_linker(linker: &mut Linker<CallState>, iface: &str) -> wasmtime::Result<()> {
    match INTERFACES.iter().find(|i| i.name == iface) {
        Some(i) => (i.link)(linker),
        None => wasmtime::bail!("unknown host interface {iface:?}"),
    }
}

impl bindings::ochre::plugin::types::Host for CallState {}

/// What a host function returns to the guest: a value or a tool error.
type WitResult<T> = Result<T, bindings::ochre::plugin::types::ToolError>;

fn wit_error(e: crate::ToolError) -> bindings::ochre::plugin::types::ToolError {
    bindings::ochre::plugin::types::ToolError {
        details: (!e.details.is_empty())
            .then(|| serde_json::Value::Object(e.details.clone()).to_string()),
        code: e.code,
        message: e.message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every interface the WIT world imports has its module here, once, and
    /// links into a linker of its own (no clash with WASI or the others).
    #[test]
    fn every_imported_interface_has_one_module_and_links() -> wasmtime::Result<()> {
        let wit = include_str!("../../../../wit/plugin.wit");
        let world = &wit[wit.find("world plugin").expect("world plugin")..];
        let imported: Vec<&str> = world
            .lines()
            .filter_map(|l| l.trim().strip_prefix("import "))
            .map(|l| l.trim_end_matches(';'))
            .collect();
        let ours: Vec<&str> = INTERFACES.iter().map(|i| i.name).collect();
        assert_eq!(imported, ours);
        let engine = wasmtime::Engine::default();
        let mut linker: Linker<CallState> = Linker::new(&engine);
        add_types(&mut linker)?;
        for i in INTERFACES {
            add_to_linker(&mut linker, i.name)?;
        }
        assert!(add_to_linker(&mut linker, "network").is_err());
        Ok(())
    }
}
