//! # ochre-sdk: write ochre tool plugins in plain Rust
//!
//! An ochre plugin is a WebAssembly component that the `ochre` host loads, sandboxes
//! and calls. This crate hides the WIT bindings: a tool is one function marked
//! [`tool`] whose serde-typed argument struct gives its JSON Schema (derived with
//! `schemars`) and whose doc comment is its description; you list the tools in
//! [`register_plugin!`] and call host services as plain functions
//! ([`secrets::get`], [`kv::set`], [`log::info`], ...).
//!
//! ```no_run
//! use ochre_sdk::{Output, ToolError};
//! use serde::Deserialize;
//! use schemars::JsonSchema;
//!
//! /// Arguments of `hello_greet`. Doc comments become the schema's descriptions.
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct GreetArgs {
//!     /// Who to greet.
//!     #[schemars(length(min = 1, max = 100))]
//!     name: String,
//! }
//!
//! /// Greet someone by name. Use it to check that plugins load.
//! #[ochre_sdk::tool(name = "hello_greet", read_only)]
//! fn greet(args: GreetArgs) -> Result<Output, ToolError> {
//!     ochre_sdk::log::info(&format!("greeting {}", args.name));
//!     Ok(Output::text(format!("Hello, {}!", args.name)).with_summary("greeted"))
//! }
//!
//! ochre_sdk::register_plugin! {
//!     name: "hello",
//!     group: "example",
//!     interfaces: [logging],
//!     tools: [Greet], // the type #[tool] made of `greet`
//! }
//! ```
//!
//! The attribute's keys (`name`, `read_only`, `tier = 2`, `scope = Browser`,
//! `redact = ["field"]`, ...) are listed on [`tool`]. The [`Tool`] trait it
//! implements is there for tools written by hand.
//!
//! Build it with `cargo build --release --target wasm32-wasip2` (crate type `cdylib`)
//! and drop the `.wasm` into a directory passed to `ochre --plugin-dir`.
//!
//! ## WIT versions
//! This crate builds plugins against `ochre:plugin@0.2.0` ([`WIT_VERSION`]). With
//! the feature `wit-v0-1` it builds against `ochre:plugin@0.1.0` instead, for a
//! plugin that must also load on hosts that speak only 0.1.0; the API is the same,
//! and what 0.1.0 lacks reads as absent (a [`browser::Tab`]'s `opener_tab_id` and
//! `dialog`). Hosts that speak 0.2.0 load plugins of both versions.
//!
//! ## What the host does for you
//! - validates arguments against the derived schema before your code runs (a call with
//!   bad arguments never reaches [`Tool::run`]);
//! - runs every call in a fresh sandboxed instance with a memory cap and a deadline;
//! - writes the journal and trace (values of argument names listed in
//!   [`ToolSpec::redact`] are never written);
//! - links only the interfaces listed in `interfaces: [...]`, and only if the operator
//!   allows them. Calling a service whose interface you did not list fails to load.

#![warn(missing_docs)]

pub use ochre_sdk_macros::tool;

/// The error codes ochre uses, one registry shared with the host
/// ([`Code`], and [`codes::ALL`] with what each means): answer with these
/// where one fits (`ToolError::element_not_found(...)`), so that agents and
/// clients that match on codes understand a plugin's errors; a code of your
/// own is `Code::named("MY_CODE")`.
pub use ochre_protocol::{Code, codes};

/// Keys by name: the one table the host's input reads too.
pub use ochre_protocol::keys;
/// Scripts ochre runs in pages, for plugins that run them too (the "next"
/// link rule: [`scripts::NEXT_LINK`]).
pub use ochre_protocol::scripts;

/// Hosts, origins and URLs as a browser reads them: the rule the host's
/// network policy and credentials decide on (feature `site`).
#[cfg(feature = "site")]
pub use ochre_protocol::site;

/// URL patterns by ochre's one rule (`/regex/`, `*` glob or substring), as
/// `wait_for`'s `url_match` and `crawl`'s filters read them (feature `url`).
#[cfg(feature = "url")]
pub use ochre_protocol::url;

extern crate self as ochre_sdk;

use serde::Serialize;
use serde::de::DeserializeOwned;

#[doc(hidden)]
#[cfg(not(feature = "wit-v0-1"))]
pub mod bindings {
    wit_bindgen::generate!({
        world: "plugin",
        path: "wit",
        pub_export_macro: true,
        export_macro_name: "__export_plugin_world",
        default_bindings_module: "ochre_sdk::bindings",
        runtime_path: "ochre_sdk::__private::wit_bindgen::rt",
        bitflags_path: "ochre_sdk::__private::wit_bindgen::rt::bitflags",
    });
}

/// The bindings of `ochre:plugin@0.1.0`, for plugins that must keep loading on
/// hosts of that version (feature `wit-v0-1`); the API is the same, what 0.1.0
/// lacks reads as absent.
#[doc(hidden)]
#[cfg(feature = "wit-v0-1")]
pub mod bindings {
    wit_bindgen::generate!({
        world: "plugin",
        path: "wit/v0.1.0",
        pub_export_macro: true,
        export_macro_name: "__export_plugin_world",
        default_bindings_module: "ochre_sdk::bindings",
        runtime_path: "ochre_sdk::__private::wit_bindgen::rt",
        bitflags_path: "ochre_sdk::__private::wit_bindgen::rt::bitflags",
    });
}

use bindings::ochre::plugin::types as wit;

/// The version of the WIT package (`ochre:plugin`) this SDK builds against.
#[cfg(not(feature = "wit-v0-1"))]
pub const WIT_VERSION: &str = "0.2.0";
/// The version of the WIT package (`ochre:plugin`) this SDK builds against.
#[cfg(feature = "wit-v0-1")]
pub const WIT_VERSION: &str = "0.1.0";

/// Host interfaces a plugin may ask for in [`register_plugin!`]'s `interfaces: [...]`.
pub const INTERFACES: &[&str] = &[
    "logging",
    "clock",
    "kv",
    "secrets",
    "progress",
    "browser",
    "cdp",
    "recorder",
    "recordings",
    "tools",
];

pub use ochre_protocol::tool::{Annotations, Scope, is_sensitive_name};

/// Per-tool settings beyond name, description and arguments. Start from
/// `ToolSpec::default()` and chain the setters.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// Disclosure tier (1 = always listed).
    pub tier: u8,
    /// MCP annotations.
    pub annotations: Annotations,
    /// The host accepts and audits an `intent` label for this tool.
    pub intent: bool,
    /// The host applies `output_mode` (inline / handle / auto) to this tool.
    pub output_mode: bool,
    /// What the tool touches.
    pub scope: Scope,
    /// Top-level argument names whose values never reach the journal or trace.
    pub redact: Vec<String>,
}

impl Default for ToolSpec {
    fn default() -> Self {
        Self {
            tier: 1,
            annotations: Annotations::default(),
            intent: false,
            output_mode: false,
            scope: Scope::Local,
            redact: Vec::new(),
        }
    }
}

impl ToolSpec {
    /// Mark the tool read-only (and idempotent).
    pub fn read_only(mut self) -> Self {
        self.annotations.read_only = true;
        self.annotations.idempotent = true;
        self
    }
    /// Mark the tool destructive.
    pub fn destructive(mut self) -> Self {
        self.annotations.destructive = true;
        self
    }
    /// Mark the tool open-world.
    pub fn open_world(mut self) -> Self {
        self.annotations.open_world = true;
        self
    }
    /// Set the disclosure tier.
    pub fn tier(mut self, tier: u8) -> Self {
        self.tier = tier;
        self
    }
    /// Accept an `intent` label (validated and audited by the host).
    pub fn with_intent(mut self) -> Self {
        self.intent = true;
        self
    }
    /// Let the host apply `output_mode`.
    pub fn with_output_mode(mut self) -> Self {
        self.output_mode = true;
        self
    }
    /// Set the guard scope.
    pub fn scope(mut self, scope: Scope) -> Self {
        self.scope = scope;
        self
    }
    /// Never log the value of this top-level argument (a value the tool types
    /// into the page: recordings keep it as a parameter).
    pub fn redact(mut self, arg: &str) -> Self {
        self.redact.push(arg.to_owned());
        self
    }
    /// This top-level argument is a secret the tool sets behind the page (a
    /// cookie's value, a stored token), not text a person types: never
    /// logged, and recordings keep it as a secret parameter with no default.
    pub fn secret_arg(mut self, arg: &str) -> Self {
        self.redact.push(arg.to_owned());
        self.redact.push(format!("secret.{arg}"));
        self
    }
    /// A field of the structured result is a secret, known to the host by a
    /// name (`"code as totp:{domain}"`, `{arg}` from the call's arguments): the
    /// host masks it everywhere but in this call's own answer, and recordings
    /// keep the name, never the value.
    pub fn secret_result(mut self, spec: &str) -> Self {
        self.redact.push(format!("result.{spec}"));
        self
    }
}

/// One piece of a tool's result.
#[derive(Debug, Clone)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// JSON text.
    Json(String),
    /// An image (e.g. a screenshot).
    Image {
        /// The encoded bytes.
        data: Vec<u8>,
        /// e.g. `image/png`.
        mime_type: String,
    },
}

/// A successful tool result.
#[derive(Debug, Clone, Default)]
pub struct Output {
    content: Vec<Content>,
    structured: Option<String>,
    summary: Option<String>,
}

impl Output {
    /// A text result.
    pub fn text(text: impl Into<String>) -> Self {
        Self { content: vec![Content::Text(text.into())], ..Self::default() }
    }

    /// A JSON result: sent as compact JSON text and as MCP `structuredContent`.
    pub fn json<T: Serialize>(value: &T) -> Result<Self, ToolError> {
        let text = serde_json::to_string(value)
            .map_err(|e| ToolError::internal(format!("cannot serialize result: {e}")))?;
        Ok(Self {
            content: vec![Content::Json(text.clone())],
            structured: Some(text),
            summary: None,
        })
    }

    /// Its structured result (MCP `structuredContent`), beside its content:
    /// for a caller that reads it (a tool that called this one), where the
    /// text stays what a model reads.
    pub fn with_structured<T: Serialize>(mut self, value: &T) -> Result<Self, ToolError> {
        let text = serde_json::to_string(value)
            .map_err(|e| ToolError::internal(format!("cannot serialize result: {e}")))?;
        self.structured = Some(text);
        Ok(self)
    }

    /// Append another piece of content.
    pub fn with_content(mut self, content: Content) -> Self {
        self.content.push(content);
        self
    }

    /// The one-line journal summary (must hold no secret).
    pub fn with_summary(mut self, summary: impl Into<String>) -> Self {
        self.summary = Some(summary.into());
        self
    }
}

/// A structured tool failure: the host's own type (`ochre_protocol::ToolError`):
/// a stable `code` (`codes`, or your plugin's own), a `message` saying what to
/// do, and extra fields (`details`, merged into the error object the agent gets).
pub use ochre_protocol::ToolError;

impl From<wit::ToolError> for ToolError {
    fn from(e: wit::ToolError) -> Self {
        let details = e.details.and_then(|d| serde_json::from_str(&d).ok());
        ToolError::new(Code::named(e.code), e.message).with_details(details.unwrap_or_default())
    }
}

fn host_typed<T: DeserializeOwned>(text: &str) -> Result<T, ToolError> {
    serde_json::from_str(text)
        .map_err(|e| ToolError::internal(format!("the host's answer did not parse: {e}")))
}

/// One tool of a plugin.
pub trait Tool {
    /// The arguments, deserialized from the call's JSON object. Derive `Deserialize`
    /// and `JsonSchema`; add `#[serde(deny_unknown_fields)]` so that junk is refused.
    type Args: DeserializeOwned + schemars::JsonSchema;
    /// The tool's name: 1-64 chars of `[A-Za-z0-9_-]`.
    const NAME: &'static str;
    /// What the tool does and when to use it.
    const DESCRIPTION: &'static str;

    /// Tier, annotations, host features. Defaults: tier 1, no annotations.
    fn spec() -> ToolSpec {
        ToolSpec::default()
    }

    /// Run the tool.
    fn run(args: Self::Args) -> Result<Output, ToolError>;
}

/// Log through the host (`tracing`, tagged with the plugin's name). Needs `logging`.
pub mod log {
    use crate::bindings::ochre::plugin::logging::{Level, log};
    /// Debug-level message.
    pub fn debug(message: &str) {
        log(Level::Debug, message);
    }
    /// Info-level message.
    pub fn info(message: &str) {
        log(Level::Info, message);
    }
    /// Warning.
    pub fn warn(message: &str) {
        log(Level::Warn, message);
    }
    /// Error.
    pub fn error(message: &str) {
        log(Level::Error, message);
    }
}

/// The host's clock. Needs `clock`.
pub mod clock {
    /// Milliseconds since the Unix epoch, as the host sees it (fixed in tests).
    pub fn now_ms() -> u64 {
        crate::bindings::ochre::plugin::clock::now_ms()
    }
}

/// Key-value state private to this plugin, persisted by the host. Needs `kv`.
pub mod kv {
    use crate::bindings::ochre::plugin::kv as raw;
    /// The value under `key`.
    pub fn get(key: &str) -> Option<String> {
        raw::get(key)
    }
    /// Store `value` under `key`.
    pub fn set(key: &str, value: &str) -> Result<(), String> {
        raw::set(key, value)
    }
    /// Remove `key`.
    pub fn delete(key: &str) -> Result<(), String> {
        raw::delete(key)
    }
    /// All keys.
    pub fn keys() -> Vec<String> {
        raw::keys()
    }
}

/// Secrets the operator configured for this plugin. Needs `secrets`.
pub mod secrets {
    /// The secret under `key` in this plugin's namespace: env
    /// `OCHRE_<PLUGIN>_<KEY>` or the data dir's secrets file.
    pub fn get(key: &str) -> Option<String> {
        crate::bindings::ochre::plugin::secrets::get(key)
    }
}

/// Progress notifications for long calls. Needs `progress`.
pub mod progress {
    /// Report progress (forwarded to the client if it asked for progress).
    pub fn report(progress: f64, total: Option<f64>, message: Option<&str>) {
        crate::bindings::ochre::plugin::progress::report(progress, total, message);
    }
}

/// The browser the host owns. Needs `browser`. `tab: None` means the current tab
/// (opened if there is none); a timeout of 0 means the host's default (30 s).
pub mod browser;

#[doc(hidden)]
pub mod __private;

/// Raw Chrome DevTools Protocol access (interface `cdp`). Only the domains the
/// plugin lists in `cdp_domains` are allowed, and a third-party plugin gets the
/// interface only when the operator grants it (`--grant NAME=cdp`).
pub mod cdp {
    use crate::ToolError;
    use crate::bindings::ochre::plugin::cdp as raw;

    /// Send `method` (`Domain.command`) with `params` to a tab (default: the
    /// current tab); the result object.
    pub fn send(
        tab_id: Option<&str>,
        method: &str,
        params: &serde_json::Value,
    ) -> Result<serde_json::Value, ToolError> {
        let text = raw::send(tab_id, method, &params.to_string())?;
        crate::host_typed(&text)
    }
}

/// Recordings of tool calls (interface `recorder`, used by the `recording`
/// group). Sensitive: a third-party plugin needs `--grant NAME=recorder`.
pub mod recorder {
    use crate::bindings::ochre::plugin::recorder as raw;
    use crate::{ToolError, host_typed};
    pub use ochre_protocol::recording::{
        Param, RecordedStep, RecordedTarget, Recording, RecordingMeta, VersionNote,
    };

    /// Start recording; the new recording's metadata.
    pub fn start(
        label: Option<&str>,
        capture_screenshots: bool,
    ) -> Result<RecordingMeta, ToolError> {
        host_typed(&raw::start(label, capture_screenshots)?)
    }
    /// Stop the running recording; its metadata.
    pub fn stop() -> Result<RecordingMeta, ToolError> {
        host_typed(&raw::stop()?)
    }
    /// The running recording's metadata, if one runs.
    pub fn active() -> Option<RecordingMeta> {
        raw::active().and_then(|t| serde_json::from_str(&t).ok())
    }
    /// The newest `limit` recordings' metadata, newest first.
    pub fn recent(limit: u32) -> Vec<RecordingMeta> {
        serde_json::from_str(&raw::recent(limit)).unwrap_or_default()
    }
    /// One recording: what it is and its steps.
    pub fn load(id: &str) -> Result<Recording, ToolError> {
        host_typed(&raw::load(id)?)
    }
    /// A screenshot a step names.
    pub fn screenshot(id: &str, file: &str) -> Result<Vec<u8>, ToolError> {
        Ok(raw::screenshot(id, file)?)
    }
    /// Write an export file into the recording's dir; its absolute path.
    pub fn save_export(id: &str, file_name: &str, data: &[u8]) -> Result<String, ToolError> {
        Ok(raw::save_export(id, file_name, data)?)
    }
}

/// Recordings changed after they were made (interface `recordings`, new in
/// `ochre:plugin@0.2.0`). Sensitive: a third-party plugin needs
/// `--grant NAME=recordings`.
#[cfg(not(feature = "wit-v0-1"))]
pub mod recordings {
    use crate::bindings::ochre::plugin::recordings as raw;
    use crate::recorder::{Param, RecordedStep, RecordingMeta};
    use crate::{ToolError, host_typed};

    /// Save `steps` as a new version of stopped recording `id` (the one it
    /// replaces is kept), saying why; the recording's metadata after.
    pub fn save_version(
        id: &str,
        steps: &[RecordedStep],
        reason: &str,
    ) -> Result<RecordingMeta, ToolError> {
        let steps = serde_json::to_string(steps).map_err(|e| ToolError::internal(e.to_string()))?;
        host_typed(&raw::save_version(id, &steps, reason)?)
    }

    /// Make a new, stopped recording of `steps` labelled `label`, taking
    /// `params`; its metadata.
    pub fn import(
        label: &str,
        steps: &[RecordedStep],
        params: &[Param],
    ) -> Result<RecordingMeta, ToolError> {
        let steps = serde_json::to_string(steps).map_err(|e| ToolError::internal(e.to_string()))?;
        let params =
            serde_json::to_string(params).map_err(|e| ToolError::internal(e.to_string()))?;
        host_typed(&raw::import(label, &steps, &params)?)
    }
}

/// Recordings changed after they were made: new in `ochre:plugin@0.2.0`, so a
/// plugin built against 0.1.0 (feature `wit-v0-1`) gets an error saying so.
#[cfg(feature = "wit-v0-1")]
pub mod recordings {
    use crate::ToolError;
    use crate::recorder::{Param, RecordedStep, RecordingMeta};

    /// Not in `ochre:plugin@0.1.0`: always an error.
    pub fn save_version(
        _id: &str,
        _steps: &[RecordedStep],
        _reason: &str,
    ) -> Result<RecordingMeta, ToolError> {
        Err(new_in_0_2())
    }

    /// Not in `ochre:plugin@0.1.0`: always an error.
    pub fn import(
        _label: &str,
        _steps: &[RecordedStep],
        _params: &[Param],
    ) -> Result<RecordingMeta, ToolError> {
        Err(new_in_0_2())
    }

    fn new_in_0_2() -> ToolError {
        ToolError::new(
            crate::Code::PermissionDenied,
            "the recordings interface is new in ochre:plugin@0.2.0; build without the wit-v0-1 feature",
        )
    }
}

/// Call other tools through the host's pipeline, as a client would (interface
/// `tools`). Sensitive: a third-party plugin needs `--grant NAME=tools`.
pub mod tools {
    use crate::ToolError;
    use crate::bindings::ochre::plugin::tools as raw;
    use crate::bindings::ochre::plugin::types as wit;

    /// What a called tool returned.
    #[derive(Debug, Clone, Default)]
    pub struct Called {
        /// Its text content blocks.
        pub text: Vec<String>,
        /// Its structured result.
        pub structured: Option<serde_json::Value>,
        /// Its one-line summary.
        pub summary: String,
        /// How many images it returned.
        pub images: usize,
    }

    /// Call `name` with `args` (a JSON object).
    pub fn call(name: &str, args: &serde_json::Value) -> Result<Called, ToolError> {
        let out = raw::call(name, &args.to_string())?;
        let mut called = Called {
            summary: out.summary.unwrap_or_default(),
            structured: out.structured.and_then(|s| serde_json::from_str(&s).ok()),
            ..Called::default()
        };
        for c in out.content {
            match c {
                wit::Content::Text(t) | wit::Content::Json(t) => called.text.push(t),
                wit::Content::Image(_) => called.images += 1,
            }
        }
        Ok(called)
    }
}

/// Parameters of saved calls (recordings, plans): `{{name}}` or
/// `{{name=default}}` in their string values. A parameter named
/// `secret:NAME` or `totp:DOMAIN`, or given such a value, is left to the host
/// as the token `{{secret:NAME}}` / `{{totp:DOMAIN}}`: the host puts the value
/// into the values a called tool types (never into the plugin) and masks it
/// everywhere it writes.
pub mod params;

/// Register a plugin: its name, capability group, the host interfaces it needs,
/// the CDP domains it uses (only with the `cdp` interface: `cdp_domains:
/// ["Network"]`) and its tools (types implementing [`Tool`]). Use it once, at the
/// crate root.
///
/// It emits the plugin's manifest (a custom section `ochre-manifest` the host reads
/// without instantiating the plugin) and exports the WIT world.
#[macro_export]
macro_rules! register_plugin {
    (
        name: $name:literal,
        group: $group:literal,
        interfaces: [$($iface:ident),* $(,)?],
        $(cdp_domains: [$($domain:literal),* $(,)?],)?
        tools: [$($tool:ty),+ $(,)?] $(,)?
    ) => {
        const _: () = {
            const __OCHRE_MANIFEST_PARTS: &[&str] = &[
                "ochre-manifest 1\nsdk=", $crate::WIT_VERSION,
                "\nname=", $name,
                "\ngroup=", $group, "\n",
                $("interface=", stringify!($iface), "\n",)*
                $($("cdp-domain=", $domain, "\n",)*)?
                $("tool=", <$tool as $crate::Tool>::NAME, "\n",)+
            ];
            const __OCHRE_MANIFEST_LEN: usize = $crate::__private::manifest_len(__OCHRE_MANIFEST_PARTS);
            #[cfg(target_family = "wasm")]
            #[used]
            #[unsafe(link_section = "ochre-manifest")]
            static __OCHRE_MANIFEST: [u8; __OCHRE_MANIFEST_LEN] =
                $crate::__private::manifest_bytes::<__OCHRE_MANIFEST_LEN>(__OCHRE_MANIFEST_PARTS);

            struct __OchrePlugin;

            impl $crate::bindings::Guest for __OchrePlugin {
                fn describe() -> ::std::vec::Vec<$crate::bindings::ochre::plugin::types::ToolDefinition> {
                    ::std::vec![$($crate::__private::definition::<$tool>($group)),+]
                }

                fn call(
                    tool: ::std::string::String,
                    args: ::std::string::String,
                ) -> ::std::result::Result<
                    $crate::bindings::ochre::plugin::types::ToolOutput,
                    $crate::bindings::ochre::plugin::types::ToolError,
                > {
                    $(
                        if tool == <$tool as $crate::Tool>::NAME {
                            return $crate::__private::dispatch::<$tool>(&args);
                        }
                    )+
                    Err($crate::__private::unknown_tool(&tool))
                }
            }

            $crate::bindings::__export_plugin_world!(__OchrePlugin with_types_in $crate::bindings);
        };
    };
}
