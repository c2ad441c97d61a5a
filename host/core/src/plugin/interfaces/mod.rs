//! The host side of the WIT interfaces (`wit/plugin.wit`): one module per
//! interface, each the `Host` impl of its interface; linked per plugin by
//! [`add_to_linker`] only when granted. Adding an interface: a module here and a
//! line in `add_to_linker`.

use wasmtime::component::{HasSelf, Linker};

use super::manifest::Manifest;
use super::{CallState, WitVersion};

/// The current WIT (`wit/plugin.wit`).
pub(crate) use ochre_runtime::bindings;

pub(crate) mod since_v0_1;

/// Stamp a host interface's `Host` impl for every WIT version the host speaks:
/// `$iface` names the interface's bindings of each version in turn, so one
/// source serves all versions in which the interface did not change.
macro_rules! for_each_version {
    ($iface:ident => $($item:item)*) => {
        const _: () = {
            use super::bindings::ochre::plugin::$iface;
            $($item)*
        };
        const _: () = {
            use super::since_v0_1::bindings::ochre::plugin::$iface;
            $($item)*
        };
    };
}

/// An interface's `link`: its bindings' `add_to_linker` in the plugin's version.
macro_rules! link_versions {
    ($iface:ident) => {
        |linker, version| match version {
            WitVersion::V0_2 => super::bindings::ochre::plugin::$iface::add_to_linker::<
                _,
                HasSelf<_>,
            >(linker, |s| s),
            WitVersion::V0_1 => {
                super::since_v0_1::bindings::ochre::plugin::$iface::add_to_linker::<_, HasSelf<_>>(
                    linker,
                    |s| s,
                )
            }
        }
    };
}

/// Log one call of a plugin into a host interface (target `ochre::host_call`,
/// at debug): `RUST_LOG=ochre::host_call=debug` shows every browser call a
/// plugin makes, which is how a plugin author sees what one tool call costs.
#[cfg(feature = "browser")]
fn host_call(interface: &'static str, function: &'static str, what: &str) {
    tracing::debug!(target: "ochre::host_call", interface, function, what, "host call");
}

#[cfg(feature = "browser")]
mod browser;
#[cfg(feature = "browser")]
mod cdp;
mod clock;
mod kv;
mod logging;
#[cfg(not(feature = "browser"))]
mod no_browser;
#[cfg(not(feature = "browser"))]
use no_browser::{browser, cdp};
mod progress;
mod recorder;
mod recordings;
mod secrets;
mod tools;

/// The types-only interface: an empty instance satisfies its import.
pub(crate) fn add_types(
    linker: &mut Linker<CallState>,
    version: WitVersion,
) -> wasmtime::Result<()> {
    linker.instance(&format!("ochre:plugin/types@{}", version.as_str()))?;
    Ok(())
}

/// A host interface a plugin may import.
#[derive(Debug, Clone, Copy)]
pub struct HostInterface {
    /// Its name in `ochre:plugin/<name>` and in manifests.
    pub name: &'static str,
    /// Granted to third-party plugins only when the operator says so (`--grant`).
    pub sensitive: bool,
    link: fn(&mut Linker<CallState>, WitVersion) -> wasmtime::Result<()>,
    /// The interface's own rule for a plugin's manifest (whether the plugin
    /// asks for it or not), checked when the plugin loads.
    check: fn(&Manifest, bool) -> Result<(), String>,
}

impl HostInterface {
    /// The interface's rule for `manifest` (which asks for it when `asked`).
    pub(crate) fn check(&self, manifest: &Manifest, asked: bool) -> Result<(), String> {
        (self.check)(manifest, asked)
    }
}

/// For interfaces with no rule of their own.
fn no_rule(_: &Manifest, _: bool) -> Result<(), String> {
    Ok(())
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
    recordings::INTERFACE,
    tools::INTERFACE,
];

/// Link host interface `iface`, in the plugin's WIT `version`, into `linker`.
pub(crate) fn add_to_linker(
    linker: &mut Linker<CallState>,
    iface: &str,
    version: WitVersion,
) -> wasmtime::Result<()> {
    match INTERFACES.iter().find(|i| i.name == iface) {
        Some(i) => (i.link)(linker, version),
        None => wasmtime::bail!("unknown host interface {iface:?}"),
    }
}

impl bindings::ochre::plugin::types::Host for CallState {}

#[cfg(feature = "browser")]
/// A host tab as a WIT version's `tab-info` (each version's is built in the
/// module of that version: `browser` for the current one, `since_v0_1`).
pub(super) trait FromHostTab {
    fn from_host(t: crate::browser::TabInfo) -> Self;
}

/// A JSON result as the guest gets it (text), or the error.
#[cfg(feature = "browser")]
fn json_text(r: Result<serde_json::Value, crate::ToolError>) -> WitResult<String> {
    r.map(|v| v.to_string()).map_err(wit_error)
}

/// A JSON argument a guest passed as text (`args` of a tool call or page
/// operation, `params` of a CDP command): blank is `{}`; anything not JSON is
/// `INVALID_ARGUMENT` naming `field`, `what` saying whose it is.
fn json_arg(field: &str, what: &str, text: &str) -> WitResult<serde_json::Value> {
    if text.trim().is_empty() {
        return Ok(serde_json::json!({}));
    }
    serde_json::from_str(text).map_err(|e| {
        wit_error(crate::ToolError::invalid_argument(field, format!("{what} are not JSON: {e}")))
    })
}

/// What a host function returns to the guest: a value or a tool error.
type WitResult<T> = Result<T, bindings::ochre::plugin::types::ToolError>;

/// The tab a plugin names (`"t3"`; `None`: the current tab), read at the WIT
/// edge: `TAB_NOT_FOUND` for a name that is no tab's.
#[cfg(feature = "browser")]
fn tab_arg(
    tab: Option<String>,
) -> Result<Option<crate::browser::TabId>, bindings::ochre::plugin::types::ToolError> {
    crate::browser::TabId::named(tab.as_deref()).map_err(wit_error)
}

fn wit_error(e: crate::ToolError) -> bindings::ochre::plugin::types::ToolError {
    bindings::ochre::plugin::types::ToolError {
        details: (!e.details.is_empty())
            .then(|| serde_json::Value::Object(e.details.clone()).to_string()),
        code: e.code.to_string(),
        message: e.message,
    }
}

/// A manifest of plugin `third` asking for `interfaces`, naming `domains`.
// The tests check the full table: browser and cdp come with the browser.
#[cfg(all(test, feature = "browser"))]
pub(super) fn test_manifest(interfaces: &[&str], domains: &[&str]) -> Manifest {
    Manifest {
        sdk: String::new(),
        name: "third".into(),
        group: "g".into(),
        interfaces: interfaces.iter().map(|s| s.to_string()).collect(),
        tools: Vec::new(),
        cdp_domains: domains.iter().map(|s| s.to_string()).collect(),
    }
}

#[cfg(all(test, feature = "browser"))]
mod tests {
    use super::*;

    /// Every interface the WIT world of each version imports has its module here,
    /// once, and links into a linker of its own (no clash with WASI or the others).
    #[test]
    fn every_imported_interface_has_one_module_and_links() -> wasmtime::Result<()> {
        let versions = [
            (WitVersion::V0_2, include_str!("../../../wit/plugin.wit")),
            (WitVersion::V0_1, include_str!("../../../wit/v0.1.0/plugin.wit")),
        ];
        for (version, wit) in versions {
            assert!(wit.contains(&format!("package ochre:plugin@{};", version.as_str())));
            let world = &wit[wit.find("world plugin").expect("world plugin")..];
            let imported: Vec<&str> = world
                .lines()
                .filter_map(|l| l.trim().strip_prefix("import "))
                .map(|l| l.trim_end_matches(';'))
                .collect();
            // `recordings` is new in 0.2.0.
            let new_in_0_2 = |n: &&str| version == WitVersion::V0_2 || *n != "recordings";
            let ours: Vec<&str> = INTERFACES.iter().map(|i| i.name).filter(new_in_0_2).collect();
            assert_eq!(imported, ours);
            let engine = wasmtime::Engine::default();
            let mut linker: Linker<CallState> = Linker::new(&engine);
            add_types(&mut linker, version)?;
            for i in INTERFACES {
                if new_in_0_2(&i.name) {
                    add_to_linker(&mut linker, i.name, version)?;
                } else {
                    assert!(add_to_linker(&mut linker, i.name, version).is_err(), "{}", i.name);
                }
            }
            assert!(add_to_linker(&mut linker, "network", version).is_err());
        }
        Ok(())
    }

    #[test]
    fn the_operator_policy_denies_grants_and_applies_each_interfaces_rule() {
        use crate::plugin::InterfacePolicy;
        let m = test_manifest;
        let open = InterfacePolicy::default();
        assert!(open.check(&m(&["browser", "kv"], &[]), false).is_ok());
        let e = open.check(&m(&["network"], &[]), false).expect_err("unknown");
        assert!(e.contains("unknown host interface") && e.contains("browser"), "{e}");
        // Sensitive interfaces: built-in plugins have them, third parties when granted.
        let e = open.check(&m(&["cdp"], &["Page"]), false).expect_err("not granted");
        assert!(e.contains("--grant third=cdp"), "{e}");
        assert!(open.check(&m(&["cdp"], &["Page"]), true).is_ok());
        let mut granted = InterfacePolicy::default();
        granted.grants.insert(("third".into(), "cdp".into()));
        assert!(granted.check(&m(&["cdp"], &["Page"]), false).is_ok());
        // The interface's own rule, after the grant.
        let e = granted.check(&m(&["cdp"], &[]), false).expect_err("no domain");
        assert!(e.contains("names no CDP domain"), "{e}");
        let mut denied = InterfacePolicy::default();
        denied.deny.insert("kv".into());
        let e = denied.check(&m(&["kv"], &[]), true).expect_err("denied");
        assert!(e.contains("--deny-interface"), "{e}");
    }
}
