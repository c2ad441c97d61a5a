//! Errors: [`Error`] for the library's own failures (startup, configuration, I/O) and
//! [`ToolError`] for a failed tool call, which travels to the agent as a structured
//! `{"error":{"code":...,"message":...}}` body.

use serde_json::{Map, Value};

/// The library's errors (building a host, loading plugins, the stores).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration is inconsistent (e.g. both `tools_only` and `disable_tools`).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A filesystem operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The WebAssembly runtime could not be set up.
    #[error("wasm runtime: {0}")]
    Runtime(String),
    /// A plugin was refused at load time.
    #[error("plugin {plugin}: {reason}")]
    PluginRefused {
        /// Plugin name (or file name when the manifest is unreadable).
        plugin: String,
        /// Why.
        reason: String,
    },
}

impl Error {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io { context: context.into(), source }
    }
}

/// `Result` with the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Stable error codes of tool calls (DESIGN.md §7). Plugins may add their own codes;
/// these are the ones the host itself produces.
pub mod codes {
    /// Stored state exists but is damaged (the file is named and kept).
    pub const STATE_CORRUPT: &str = "STATE_CORRUPT";
    /// The data dir could not be written or read.
    pub const STORAGE_FAILED: &str = "STORAGE_FAILED";
    /// Arguments do not match the tool's schema (the field is named).
    pub const INVALID_ARGUMENT: &str = "INVALID_ARGUMENT";
    /// The `intent` label is empty, blank or longer than 120 chars.
    pub const INVALID_INTENT: &str = "INVALID_INTENT";
    /// The tool's capability group is excluded by `--tools-only`/`--disable-tools`.
    pub const CAPABILITY_DISABLED: &str = "CAPABILITY_DISABLED";
    /// No loaded plugin offers this tool.
    pub const UNKNOWN_TOOL: &str = "UNKNOWN_TOOL";
    /// The plugin trapped (a panic, an unreachable, a bad memory access).
    pub const PLUGIN_TRAPPED: &str = "PLUGIN_TRAPPED";
    /// The plugin ran past its deadline.
    pub const PLUGIN_TIMEOUT: &str = "PLUGIN_TIMEOUT";
    /// The plugin tried to grow its memory past its cap.
    pub const PLUGIN_OUT_OF_MEMORY: &str = "PLUGIN_OUT_OF_MEMORY";
    /// The plugin returned something the host cannot use.
    pub const PLUGIN_FAILED: &str = "PLUGIN_FAILED";
    /// The operator's policy forbids this.
    pub const PERMISSION_DENIED: &str = "PERMISSION_DENIED";
    /// The host failed (I/O and the like).
    pub const INTERNAL: &str = "INTERNAL";
    /// The client cancelled the call (`notifications/cancelled`).
    pub const CANCELLED: &str = "CANCELLED";
}

/// A structured tool failure: a stable `code`, a `message` saying what to do, and
/// extra fields (`capability`, `field`, ...) merged into the error object.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    /// Stable code, e.g. `INVALID_ARGUMENT`.
    pub code: String,
    /// Human-readable explanation with a hint where one helps.
    pub message: String,
    /// Extra fields of the error object.
    pub details: Map<String, Value>,
}

impl ToolError {
    /// A new error.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self { code: code.into(), message: message.into(), details: Map::new() }
    }

    /// Add one extra field.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }

    /// `INVALID_ARGUMENT` naming `field`.
    pub fn invalid_argument(field: &str, message: impl Into<String>) -> Self {
        Self::new(codes::INVALID_ARGUMENT, message).with("field", field)
    }

    /// The JSON body sent to the agent: `{"error":{"code":..,"message":..,...}}`.
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("code".into(), Value::String(self.code.clone()));
        obj.insert("message".into(), Value::String(self.message.clone()));
        for (k, v) in &self.details {
            if k != "code" && k != "message" {
                obj.insert(k.clone(), v.clone());
            }
        }
        let mut outer = Map::new();
        outer.insert("error".into(), Value::Object(obj));
        Value::Object(outer)
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}
