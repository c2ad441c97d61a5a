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
pub mod browser {
    use crate::ToolError;
    use crate::bindings::ochre::plugin::browser as raw;

    /// An open tab.
    #[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Tab {
        /// Short id (`t1`, ...).
        pub tab_id: String,
        /// Current URL.
        pub url: String,
        /// Document title.
        pub title: String,
        /// Whether it is the current tab.
        pub current: bool,
        /// The tab whose page opened this one (a popup, a `target=_blank` link).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub opener_tab_id: Option<String>,
        /// The JavaScript dialog open on this tab: it runs no script until the
        /// dialog is answered (the `handle_dialog` page-op).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub dialog: Option<Dialog>,
    }

    /// A JavaScript dialog open on a tab.
    #[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
    pub struct Dialog {
        /// `alert`, `confirm`, `prompt` or `beforeunload`.
        #[serde(rename = "type")]
        pub kind: String,
        /// Its message.
        pub message: String,
    }

    #[cfg(not(feature = "wit-v0-1"))]
    fn tab(t: raw::TabInfo) -> Tab {
        let dialog = t.dialog.map(|d| Dialog {
            kind: match d.kind {
                raw::DialogKind::Alert => "alert",
                raw::DialogKind::Confirm => "confirm",
                raw::DialogKind::Prompt => "prompt",
                raw::DialogKind::Beforeunload => "beforeunload",
            }
            .to_owned(),
            message: d.message,
        });
        Tab {
            tab_id: t.id,
            url: t.url,
            title: t.title,
            current: t.current,
            opener_tab_id: t.opener,
            dialog,
        }
    }

    /// A 0.1.0 host says nothing of openers and dialogs.
    #[cfg(feature = "wit-v0-1")]
    fn tab(t: raw::TabInfo) -> Tab {
        Tab {
            tab_id: t.id,
            url: t.url,
            title: t.title,
            current: t.current,
            opener_tab_id: None,
            dialog: None,
        }
    }

    fn err(e: crate::bindings::ochre::plugin::types::ToolError) -> ToolError {
        e.into()
    }

    /// All open tabs.
    pub fn tabs() -> Result<Vec<Tab>, ToolError> {
        Ok(raw::tabs().map_err(err)?.into_iter().map(tab).collect())
    }
    /// Open a tab (and make it current).
    pub fn new_tab(url: Option<&str>, timeout_ms: u32) -> Result<Tab, ToolError> {
        raw::new_tab(url, timeout_ms).map(tab).map_err(err)
    }
    /// Close a tab.
    pub fn close_tab(tab_id: &str) -> Result<(), ToolError> {
        raw::close_tab(tab_id).map_err(err)
    }
    /// Navigate and wait for the load event.
    pub fn navigate(tab_id: Option<&str>, url: &str, timeout_ms: u32) -> Result<Tab, ToolError> {
        raw::navigate(tab_id, url, timeout_ms).map(tab).map_err(err)
    }
    /// Back (-1) or forward (+1).
    pub fn history(tab_id: Option<&str>, delta: i32, timeout_ms: u32) -> Result<Tab, ToolError> {
        raw::history(tab_id, delta, timeout_ms).map(tab).map_err(err)
    }
    /// Reload.
    pub fn reload(tab_id: Option<&str>, timeout_ms: u32) -> Result<Tab, ToolError> {
        raw::reload(tab_id, timeout_ms).map(tab).map_err(err)
    }
    /// Evaluate a JavaScript expression (promises awaited); its value.
    pub fn evaluate(
        tab_id: Option<&str>,
        expression: &str,
        timeout_ms: u32,
    ) -> Result<serde_json::Value, ToolError> {
        let text = raw::evaluate(tab_id, expression, timeout_ms).map_err(err)?;
        serde_json::from_str(&text)
            .map_err(|e| ToolError::internal(format!("the host returned bad JSON: {e}")))
    }
    /// A screenshot: `format` `png` or `jpeg` (with `quality`); the viewport, the
    /// full page, or `clip` (x, y, width, height in CSS pixels).
    pub fn screenshot(
        tab_id: Option<&str>,
        full_page: bool,
        format: &str,
        quality: Option<u8>,
        clip: Option<[f64; 4]>,
    ) -> Result<Vec<u8>, ToolError> {
        let clip = clip.map(|[x, y, width, height]| raw::Rect { x, y, width, height });
        raw::screenshot(tab_id, full_page, format, quality, clip).map_err(err)
    }

    /// A trusted input event, as a user would give it.
    #[derive(Debug, Clone, PartialEq)]
    pub enum Input {
        /// Move the mouse to (x, y) (CSS pixels of the viewport).
        MouseMove(f64, f64),
        /// Press the left button at (x, y); the count is 2 for a double click's second press.
        MouseDown(f64, f64, u32),
        /// Release the left button at (x, y).
        MouseUp(f64, f64, u32),
        /// Press and release a key (`Enter`, `Tab`, `Space`, arrows, `F1`-`F12`, one
        /// character...) or a chord (`Control+a`, `Shift+Tab`).
        Key(String),
        /// Insert text as if typed.
        Text(String),
    }

    /// Dispatch input events in order.
    pub fn input(tab_id: Option<&str>, events: &[Input]) -> Result<(), ToolError> {
        let p = |x: f64, y: f64, count: u32| raw::Pointer { x, y, count };
        let events: Vec<raw::InputEvent> = events
            .iter()
            .map(|e| match e {
                Input::MouseMove(x, y) => raw::InputEvent::MouseMove(p(*x, *y, 0)),
                Input::MouseDown(x, y, c) => raw::InputEvent::MouseDown(p(*x, *y, *c)),
                Input::MouseUp(x, y, c) => raw::InputEvent::MouseUp(p(*x, *y, *c)),
                Input::Key(k) => raw::InputEvent::Key(k.clone()),
                Input::Text(t) => raw::InputEvent::Text(t.clone()),
            })
            .collect();
        raw::input(tab_id, &events).map_err(err)
    }

    /// Run an operation of the host's page library by name, with JSON
    /// arguments and result (`docs/page-ops.md` lists them): refs are minted and
    /// checked by the host, and arguments the operation does not take are
    /// refused. [`run`] does the same with the operation's types.
    pub fn page_op(
        tab_id: Option<&str>,
        op: &str,
        args: &serde_json::Value,
        timeout_ms: u32,
    ) -> Result<serde_json::Value, ToolError> {
        let text = raw::page_op(tab_id, op, &args.to_string(), timeout_ms).map_err(err)?;
        serde_json::from_str(&text)
            .map_err(|e| ToolError::internal(format!("the host returned bad JSON: {e}")))
    }

    /// A tab's id (`t3`) and an element's ref (`ax_12`), parsed and written one way.
    pub use ochre_protocol::browser::{RefId, TabId};
    /// Typed page operations (the same types the host's table is checked against).
    pub use ochre_protocol::page_ops as ops;
    use ochre_protocol::page_ops::PageOp;

    /// Run a typed page operation: `run(tab, &ops::Sleep { ms: 50 }, 2_000)?.slept_ms`,
    /// `run(tab, &ops::Find { query: "Send".into(), ..Default::default() }, 5_000)?.matches`.
    /// A result of another shape than the operation's (a host of another
    /// version) is an `INTERNAL` error naming the operation.
    pub fn run<O: PageOp>(
        tab_id: Option<&str>,
        op: &O,
        timeout_ms: u32,
    ) -> Result<O::Output, ToolError> {
        let args = ochre_protocol::page_ops::to_args(op).map_err(ToolError::internal)?;
        let out = page_op(tab_id, O::NAME, &args, timeout_ms)?;
        ochre_protocol::page_ops::from_output::<O>(out).map_err(ToolError::internal)
    }

    /// Give files to a file input (`target`: a ref or a CSS selector); the host
    /// only accepts files under the operator's allowed roots.
    pub fn set_files(
        tab_id: Option<&str>,
        target: &str,
        paths: &[String],
    ) -> Result<Vec<String>, ToolError> {
        raw::set_files(tab_id, target, paths).map_err(err)
    }
}

#[doc(hidden)]
pub mod __private {
    pub use wit_bindgen;

    use super::*;

    pub fn definition<T: Tool>(group: &str) -> wit::ToolDefinition {
        let spec = T::spec();
        let mut schema =
            schemars::SchemaGenerator::default().into_root_schema_for::<T::Args>().to_value();
        if let Some(obj) = schema.as_object_mut() {
            obj.remove("title");
            obj.remove("$schema");
        }
        let flag = |on: bool, f: wit::HostFeatures| if on { f.bits() } else { 0 };
        let features = wit::HostFeatures::from_bits_retain(
            flag(spec.intent, wit::HostFeatures::INTENT)
                | flag(spec.output_mode, wit::HostFeatures::OUTPUT_MODE),
        );
        wit::ToolDefinition {
            name: T::NAME.to_owned(),
            description: T::DESCRIPTION.to_owned(),
            input_schema: schema.to_string(),
            capability: group.to_owned(),
            tier: spec.tier,
            annotations: wit::Annotations {
                read_only: spec.annotations.read_only,
                destructive: spec.annotations.destructive,
                idempotent: spec.annotations.idempotent,
                open_world: spec.annotations.open_world,
            },
            features,
            scope: match spec.scope {
                Scope::Local => wit::GuardScope::Local,
                Scope::Browser => wit::GuardScope::Browser,
                Scope::NetworkAdjacent => wit::GuardScope::NetworkAdjacent,
            },
            redact: spec.redact,
        }
    }

    pub fn dispatch<T: Tool>(args: &str) -> Result<wit::ToolOutput, wit::ToolError> {
        let parsed: T::Args = serde_json::from_str(args).map_err(|e| {
            to_wit_error(ToolError::new(crate::Code::InvalidArgument, format!("{}: {e}", T::NAME)))
        })?;
        match T::run(parsed) {
            Ok(out) => Ok(wit::ToolOutput {
                content: out
                    .content
                    .into_iter()
                    .map(|c| match c {
                        Content::Text(t) => wit::Content::Text(t),
                        Content::Json(j) => wit::Content::Json(j),
                        Content::Image { data, mime_type } => {
                            wit::Content::Image(wit::Image { data, mime_type })
                        }
                    })
                    .collect(),
                structured: out.structured,
                summary: out.summary,
            }),
            Err(e) => Err(to_wit_error(e)),
        }
    }

    pub fn unknown_tool(name: &str) -> wit::ToolError {
        to_wit_error(ToolError::unknown_tool(format!("this plugin has no tool named {name:?}")))
    }

    fn to_wit_error(e: ToolError) -> wit::ToolError {
        wit::ToolError {
            code: e.code.as_str().to_owned(),
            message: e.message,
            details: (!e.details.is_empty())
                .then(|| serde_json::Value::Object(e.details).to_string()),
        }
    }

    /// Total length of the manifest parts (const, for the custom section's size).
    pub const fn manifest_len(parts: &[&str]) -> usize {
        let mut n = 0;
        let mut i = 0;
        while i < parts.len() {
            n += parts[i].len();
            i += 1;
        }
        n
    }

    /// The manifest parts concatenated into a fixed array (const).
    pub const fn manifest_bytes<const N: usize>(parts: &[&str]) -> [u8; N] {
        let mut out = [0u8; N];
        let mut at = 0;
        let mut i = 0;
        while i < parts.len() {
            let bytes = parts[i].as_bytes();
            let mut j = 0;
            while j < bytes.len() {
                out[at] = bytes[j];
                at += 1;
                j += 1;
            }
            i += 1;
        }
        out
    }
}

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
pub mod params {
    use std::collections::BTreeMap;

    use serde_json::Value;

    /// One parameter as the saved calls use it.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Placeholder {
        /// `title`, `password`, `totp:example.com`.
        pub name: String,
        /// The value recorded, if it has one.
        pub default: Option<String>,
    }

    impl Placeholder {
        /// Resolved by the host from its own stores when no value is given.
        pub fn resolves_itself(&self) -> bool {
            is_secret_ref(&self.name)
        }
        /// It needs a value: no default, and not resolved by the host.
        pub fn required(&self) -> bool {
            self.default.is_none() && !self.resolves_itself()
        }
    }

    /// `secret:NAME` or `totp:DOMAIN`.
    pub fn is_secret_ref(s: &str) -> bool {
        ["secret:", "totp:"].iter().any(|p| s.strip_prefix(p).is_some_and(|r| !r.trim().is_empty()))
    }

    /// Each `{{...}}` in `s`: (the whole token, its name, its default).
    pub fn tokens(s: &str) -> Vec<(&str, &str, Option<&str>)> {
        let mut out = Vec::new();
        let mut at = 0;
        while let Some(i) = s[at..].find("{{") {
            let start = at + i;
            let Some(j) = s[start + 2..].find("}}") else { break };
            let end = start + 2 + j + 2;
            let inner = &s[start + 2..end - 2];
            let (name, default) = match inner.split_once('=') {
                Some((n, d)) => (n.trim(), Some(d)),
                None => (inner.trim(), None),
            };
            if !name.is_empty() {
                out.push((&s[start..end], name, default));
            }
            at = end;
        }
        out
    }

    /// The parameters in `v`, in order of first use.
    pub fn placeholders(v: &Value) -> Vec<Placeholder> {
        fn walk(v: &Value, out: &mut Vec<Placeholder>) {
            match v {
                Value::String(s) => {
                    for (_, name, default) in tokens(s) {
                        match out.iter_mut().find(|p| p.name == name) {
                            Some(p) if p.default.is_none() => {
                                p.default = default.map(str::to_owned)
                            }
                            Some(_) => {}
                            None => out.push(Placeholder {
                                name: name.to_owned(),
                                default: default.map(str::to_owned),
                            }),
                        }
                    }
                }
                Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
                Value::Object(m) => m.values().for_each(|x| walk(x, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        walk(v, &mut out);
        out
    }

    /// The names of the parameters in `found` that need a value and have none
    /// in `given`.
    pub fn missing(found: &[Placeholder], given: &BTreeMap<String, String>) -> Vec<String> {
        found
            .iter()
            .filter(|p| p.required() && !given.contains_key(&p.name))
            .map(|p| p.name.clone())
            .collect()
    }

    /// `v` with each parameter replaced by its value: the one given, else its
    /// default (its own, or the one `found` has for it); a secret reference
    /// (`secret:NAME`, `totp:DOMAIN`) as a token for the host. A parameter
    /// with neither is left as it is.
    pub fn fill(v: &Value, given: &BTreeMap<String, String>, found: &[Placeholder]) -> Value {
        match v {
            Value::String(s) => {
                let mut out = s.clone();
                for (token, name, default) in tokens(s) {
                    let default = default.or_else(|| {
                        found.iter().find(|p| p.name == name).and_then(|p| p.default.as_deref())
                    });
                    let value = match (given.get(name), default) {
                        (Some(g), _) if is_secret_ref(g) => format!("{{{{{}}}}}", g.trim()),
                        (Some(g), _) => g.clone(),
                        (None, _) if is_secret_ref(name) => format!("{{{{{name}}}}}"),
                        (None, Some(d)) => d.to_owned(),
                        (None, None) => continue,
                    };
                    out = out.replacen(token, &value, 1);
                }
                Value::String(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(|x| fill(x, given, found)).collect()),
            Value::Object(m) => {
                Value::Object(m.iter().map(|(k, x)| (k.clone(), fill(x, given, found))).collect())
            }
            other => other.clone(),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use serde_json::json;

        #[test]
        fn parameters_are_found_filled_and_secrets_left_to_the_host() {
            let v = json!({"a": "{{title=Quarterly report}}", "b": ["{{password}}", "x {{totp:ex.com}}"], "c": "{{title}}"});
            let found = placeholders(&v);
            assert_eq!(
                found.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
                ["title", "password", "totp:ex.com"]
            );
            assert_eq!(found[0].default.as_deref(), Some("Quarterly report"));
            assert_eq!(missing(&found, &BTreeMap::new()), ["password"]);
            let given: BTreeMap<String, String> =
                [("password".to_owned(), "secret:admin".to_owned())].into_iter().collect();
            assert!(missing(&found, &given).is_empty());
            assert_eq!(
                fill(&v, &given, &found),
                json!({"a": "Quarterly report", "b": ["{{secret:admin}}", "x {{totp:ex.com}}"], "c": "Quarterly report"})
            );
            let given: BTreeMap<String, String> =
                [("title".to_owned(), "Q3 = done".to_owned())].into_iter().collect();
            assert_eq!(fill(&v, &given, &found)["a"], "Q3 = done");
            assert_eq!(fill(&v, &BTreeMap::new(), &[])["c"], "{{title}}");
        }
    }
}

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
