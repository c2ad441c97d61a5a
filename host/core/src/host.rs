//! [`Host`] and [`HostBuilder`]: configuration, plugin loading, the tool registry.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use serde_json::Value;
use tracing::Instrument;

use crate::Clock;
use crate::browser::BrowserManager;
use crate::browser::HostBrowser;
use crate::error::Result;
use crate::loader::{PluginReport, ToolEntry, ToolImpl};
use crate::pipeline::{Call, GUARD_CODES, Outcome, Pipeline, Stage};
use crate::plugin::{PluginLimits, PluginRuntime, ToolCaller};
use crate::stores::journal::{Journal, Trace};
use crate::stores::recording::Recorder;
use crate::tool::{CallOptions, ToolInfo};

pub(crate) struct HostInner {
    pub data_dir: PathBuf,
    /// The secrets the server knows (masked in everything it writes).
    pub known: Arc<crate::redact::KnownSecrets>,
    pub clock: Clock,
    pub session: String,
    pub tools: BTreeMap<String, ToolEntry>,
    /// Tools known but disabled, and why.
    pub gate: crate::pipeline::gate::Gate,
    /// The stages every call passes.
    pub pipeline: Pipeline,
    pub plugins: Vec<PluginReport>,
    pub journal: Arc<Journal>,
    pub trace: Arc<Trace>,
    /// The OpenTelemetry exporter, flushed at shutdown.
    pub otlp: Option<Arc<crate::otlp::Otlp>>,
    pub seq: Arc<AtomicU64>,
    pub synced: AtomicU64,
    pub runtime: PluginRuntime,
    pub browser: BrowserManager,
    pub recorder: Arc<Recorder>,
    pub output: Arc<crate::stores::output::HandleStore>,
    /// Messages for the clients' operators (MCP logging).
    pub client_logs: Arc<crate::client_log::ClientLogs>,
    /// The hand-offs and secret asks under way (see [`crate::people`]).
    pub people: Arc<crate::people::People>,
    /// Where compiled plugins are cached (`None`: no cache).
    pub compile_cache_dir: Option<PathBuf>,
}

/// The ochre host: plugins, guards and stores. Cheap to clone.
#[derive(Clone)]
pub struct Host {
    pub(crate) inner: Arc<HostInner>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("data_dir", &self.inner.data_dir)
            .field("session", &self.inner.session)
            .field("tools", &self.inner.tools.len())
            .finish_non_exhaustive()
    }
}

/// An embedder's pipeline stages.
#[derive(Clone, Default)]
struct Stages(Vec<Arc<dyn Stage>>);

impl std::fmt::Debug for Stages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.iter().map(|s| s.name())).finish()
    }
}

mod builder;
pub use builder::HostBuilder;

impl Host {
    /// Start configuring a host.
    pub fn builder() -> HostBuilder {
        HostBuilder::default()
    }

    /// The capability group of a tool this server knows but has disabled
    /// (`--tools-only` / `--disable-tools`), if it is one.
    pub fn disabled_group(&self, tool: &str) -> Option<&str> {
        self.inner.gate.group(tool)
    }

    /// The `CAPABILITY_DISABLED` error for a tool this server knows but has
    /// disabled, if `tool` is one.
    pub fn capability_disabled(&self, tool: &str) -> Option<crate::ToolError> {
        self.inner.gate.disabled(tool)
    }

    /// The pipeline's stages, in order (the host's, then an embedder's).
    pub fn stages(&self) -> Vec<&'static str> {
        self.inner.pipeline.names()
    }

    /// Run one tool call through the pipeline.
    pub async fn call_tool(
        &self,
        name: &str,
        args: Value,
        options: CallOptions,
    ) -> Result<crate::ToolOutput, crate::ToolError> {
        let span = tracing::info_span!("tool", tool = %name, plugin = tracing::field::Empty);
        let owner = options.tab_owner.clone();
        let top = options.depth == 0;
        let session = options.session.clone();
        // Boxed: a call's future is large, and calls nest.
        let call = Box::pin(self.run_call(name, args, options).instrument(span));
        let call = async {
            let result = match owner {
                Some(owner) => self.inner.browser.with_owner(Some(owner), call).await,
                // Nested calls (and an embedder's own `with_owner`) keep the
                // owner they run under.
                None => call.await,
            };
            if let Err(e) = &result
                && GUARD_CODES.contains(&e.code)
            {
                // The tool and the code only: a guard's message may quote the
                // call's arguments.
                self.client_logs().emit(
                    crate::client_log::Level::Warning,
                    "guard",
                    format!("{name} was refused: {}", e.code),
                );
            }
            result
        };
        // A client's call: what it logs goes to its session.
        if top { crate::client_log::in_session(session, call).await } else { call.await }
    }

    /// The gate, then the stages around the tool.
    async fn run_call(&self, name: &str, args: Value, options: CallOptions) -> Outcome {
        let entry = self.inner.gate.resolve(&self.inner.tools, name)?;
        tracing::Span::current().record("plugin", entry.info.plugin.as_str());
        let call = Call::new(name, &entry.info, &entry.validator, &options, args);
        let tool = async |call: &Call<'_>| self.dispatch(&entry.imp, call).await;
        self.inner.pipeline.run(call, tool).await
    }

    /// Run the tool itself: a plugin's, or a native one (the host's own or an
    /// embedder's).
    async fn dispatch(&self, imp: &ToolImpl, call: &Call<'_>) -> Outcome {
        let (name, args) = (call.name(), call.args());
        // What the tool's own tool calls inherit.
        let mut parent = call.options.clone();
        parent.run = call.run.clone();
        parent.parent = call.seq;
        parent.children = Some(call.children.clone());
        match imp {
            ToolImpl::Native(tool) => tool.call(args, &parent).await,
            ToolImpl::Plugin(plugin) => {
                let raw = serde_json::to_string(args).unwrap_or_else(|_| "{}".into());
                plugin.call(name, &raw, parent).await
            }
        }
    }

    /// The enabled tools, by name.
    pub fn tools(&self) -> Vec<&ToolInfo> {
        self.inner.tools.values().map(|e| &e.info).collect()
    }

    /// Every plugin the host saw, with what became of it.
    pub fn plugins(&self) -> &[PluginReport] {
        &self.inner.plugins
    }

    /// The data dir.
    pub fn data_dir(&self) -> &Path {
        &self.inner.data_dir
    }

    /// This run's session id (journal and trace).
    pub fn session_id(&self) -> &str {
        &self.inner.session
    }

    /// The trace directory of this session.
    pub fn trace_dir(&self) -> &Path {
        self.inner.trace.dir()
    }

    /// The per-call plugin limits in force.
    pub fn limits(&self) -> PluginLimits {
        self.inner.runtime.limits()
    }

    /// Where compiled plugins are cached (`None`: compiled at every start).
    pub fn compile_cache_dir(&self) -> Option<&Path> {
        self.inner.compile_cache_dir.as_deref()
    }

    /// Messages for the clients' operators (MCP `notifications/message`).
    pub fn client_logs(&self) -> &crate::client_log::ClientLogs {
        &self.inner.client_logs
    }

    /// The browser manager.
    pub fn browser(&self) -> &BrowserManager {
        &self.inner.browser
    }

    /// The output handles (`output_mode`, `oc_output_fetch`); embedders may store
    /// their own large results here.
    pub fn outputs(&self) -> &crate::stores::output::HandleStore {
        &self.inner.output
    }

    /// The secrets the server knows: a value added here is masked in every
    /// answer and everything ochre writes from then on.
    pub fn known_secrets(&self) -> &crate::redact::KnownSecrets {
        &self.inner.known
    }

    /// People in the loop: hand-offs and secret asks, and where their pages
    /// are served (the MCP server says).
    pub fn people(&self) -> &Arc<crate::people::People> {
        &self.inner.people
    }

    /// The recordings (see the `recording` tool group).
    pub fn recorder(&self) -> &Recorder {
        &self.inner.recorder
    }

    /// Whether the server runs with `--slim` (core tier-1 tools only).
    pub fn is_slim(&self) -> bool {
        self.inner.gate.slim
    }

    /// Close the browser, flush the journal and trace, mark the session ended.
    pub async fn shutdown(&self) {
        self.inner.browser.shutdown().await;
        let _ = self.inner.journal.sync();
        if let Err(e) = self.inner.trace.finish(&self.inner.clock) {
            tracing::warn!(error = %e, "cannot finish the trace");
        }
        if let Some(otlp) = &self.inner.otlp {
            otlp.flush(std::time::Duration::from_secs(3)).await;
        }
    }
}

/// A plugin's call of another tool (the `tools` interface) runs the pipeline
/// like a client's.
impl ToolCaller for HostInner {
    fn provider(&self, tool: &str) -> Option<String> {
        self.tools.get(tool).map(|e| e.info.plugin.clone())
    }

    fn call_tool(
        self: Arc<Self>,
        tool: String,
        args: Value,
        options: CallOptions,
    ) -> futures::future::BoxFuture<'static, Result<crate::ToolOutput, crate::ToolError>> {
        Box::pin(async move { Host { inner: self }.call_tool(&tool, args, options).await })
    }
}
