//! # ochre-host
//!
//! The embeddable host of ochre, a browser-automation server for AI agents. A [`Host`]
//! owns every cross-cutting guard (capability gating, argument validation, the
//! journal and trace, plugin sandboxing) and runs tools that ship as sandboxed
//! WebAssembly components (see the `ochre:plugin` WIT package and `ochre-sdk`).
//!
//! The `ochre` binary (crate `ochre`) serves a [`Host`] over MCP with `ochre-mcp`;
//! Rust applications embed it directly:
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use ochre_host::{CallOptions, Host};
//!
//! let host = Host::builder()
//!     .data_dir("/tmp/ochre-data")
//!     .plugin_dir("./my-plugins")
//!     .build()
//!     .await?;
//! for tool in host.tools() {
//!     println!("{}: {}", tool.name, tool.description);
//! }
//! let out = host
//!     .call_tool("oc_totp_generate", serde_json::json!({"domain": "example.com"}), CallOptions::default())
//!     .await;
//! match out {
//!     Ok(output) => println!("{:?}", output.structured),
//!     Err(e) => eprintln!("{}", e.to_json()),
//! }
//! # Ok(()) }
//! ```
//!
//! Every call, from MCP or from an embedder, goes through the same pipeline:
//! resolve the tool, capability gate, validate the arguments against the tool's JSON
//! Schema (plus host-owned fields such as `intent`), call the plugin in a fresh
//! sandboxed instance under a memory cap and a deadline, then journal and trace.

#![warn(missing_docs)]

/// The browser (crate `ochre-browser`).
#[cfg(feature = "browser")]
pub use ochre_browser as browser;
/// No browser: this host was built without the `browser` feature.
#[cfg(not(feature = "browser"))]
#[path = "no_browser.rs"]
pub mod browser;
mod builtin;
pub mod capability;
pub mod client_log;
pub mod config;
pub mod error;
pub mod hints;
mod host;
mod host_tools;
pub mod intent;
mod loader;
pub mod native;
pub mod otlp;
pub mod people;
pub mod pipeline;
pub mod plugin;
pub mod redact;
pub mod stores;
mod tool;

use std::sync::Arc;

#[cfg(feature = "browser")]
pub use browser::BrowserOptions;
pub use browser::{BrowserManager, HostBrowser};
pub use capability::{BUILTIN_GROUPS, CapabilityFilter};
pub use error::{Error, Result, ToolError};
pub use host::{Host, HostBuilder};
pub use loader::{PluginReport, PluginSource, PluginStatus};
pub use native::HostTool;
pub use plugin::{InterfacePolicy, PluginLimits};
pub use tool::{Annotations, CallOptions, Content, Hints, ToolInfo, ToolOutput};

/// Receives progress reports of a running call: `(progress, total, message)`.
pub type ProgressFn = Arc<dyn Fn(f64, Option<f64>, Option<String>) + Send + Sync>;

/// The host's clock. Plugins read it through the `clock` interface; the journal and
/// trace stamp entries with it. Tests fix it to get byte-identical output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Clock {
    /// The system clock.
    #[default]
    System,
    /// Always this many ms since the Unix epoch; durations read as 0.
    Fixed(u64),
}

impl Clock {
    /// Milliseconds since the Unix epoch.
    pub fn now_ms(&self) -> u64 {
        match self {
            Self::System => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0),
            Self::Fixed(ms) => *ms,
        }
    }

    /// Milliseconds elapsed since `start` (0 for a fixed clock).
    pub fn elapsed_ms(&self, start: std::time::Instant) -> u64 {
        match self {
            Self::System => start.elapsed().as_millis() as u64,
            Self::Fixed(_) => 0,
        }
    }
}
