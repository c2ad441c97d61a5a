//! Errors: [`Error`] for the library's own failures (startup, configuration, I/O) and
//! [`ToolError`] (from `ochre-protocol`, with the registry of [`codes`]) for a failed
//! tool call, which travels to the agent as a structured
//! `{"error":{"code":...,"message":...}}` body.

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

pub use ochre_protocol::{Code, ToolError, codes};
