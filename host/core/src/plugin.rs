//! Plugins in the host: on the engine of `ochre-runtime` ([`PluginRuntime`]:
//! wasmtime, its epochs and limits, the compile cache, the WIT bindings), one
//! `InstancePre` per plugin and a fresh [`Store`] per call holding the host's
//! call state, with a memory cap and a deadline.
//!
//! Host interfaces are linked per plugin: only those its manifest asks for *and* the
//! operator's [`InterfacePolicy`] allows. A guest cannot call anything else; a
//! component that imports an interface it did not declare is refused at load.

mod interfaces;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use wasmtime::Store;
use wasmtime::component::{Linker, ResourceTable};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

pub use ochre_runtime::{
    CompileCache, HOST_WAIT_ALLOWANCE, Manifest, PluginLimits, PluginRuntime, WIT, WIT_VERSION,
    WIT_VERSIONS, lock, manifest,
};
use ochre_runtime::{EPOCH_TICK, MemoryLimiter, WitVersion, check_imports};

use crate::Clock;
use crate::error::{Code, ToolError};
use crate::stores::kv::KvStore;
use crate::stores::secrets::SecretStore;

pub(crate) use interfaces::bindings;
use interfaces::since_v0_1::bindings as since_v0_1;
pub use interfaces::{HostInterface, INTERFACES};

/// Which interfaces the operator allows.
#[derive(Debug, Clone, Default)]
pub struct InterfacePolicy {
    /// Denied to every plugin.
    pub deny: BTreeSet<String>,
    /// Extra grants for third-party plugins: (plugin, interface).
    pub grants: BTreeSet<(String, String)>,
}

impl InterfacePolicy {
    /// Check every interface `manifest` asks for; the error says which and how to
    /// allow it.
    pub fn check(&self, manifest: &Manifest, builtin: bool) -> Result<(), String> {
        for iface in &manifest.interfaces {
            let Some(&HostInterface { sensitive, .. }) =
                INTERFACES.iter().find(|i| i.name == iface)
            else {
                let known: Vec<_> = INTERFACES.iter().map(|i| i.name).collect();
                return Err(format!(
                    "asks for unknown host interface {iface:?} (this host offers: {})",
                    known.join(", ")
                ));
            };
            if self.deny.contains(iface) {
                return Err(format!(
                    "asks for host interface {iface:?}, which the operator denies (--deny-interface)"
                ));
            }
            let granted = self.grants.contains(&(manifest.name.clone(), iface.clone()));
            if sensitive && !builtin && !granted {
                return Err(format!(
                    "asks for host interface {iface:?}, which third-party plugins get only when granted: \
                     start ochre with --grant {}={iface}",
                    manifest.name
                ));
            }
        }
        // Each interface's own rule.
        for i in INTERFACES {
            i.check(manifest, manifest.interfaces.contains(i.name))?;
        }
        Ok(())
    }
}

/// The host's pipeline, as the `tools` interface sees it: a plugin's call of
/// another tool goes through every stage, like a client's.
pub(crate) trait ToolCaller: Send + Sync {
    /// The plugin that serves `tool`, if one does.
    fn provider(&self, tool: &str) -> Option<String>;

    /// Call `tool` through the pipeline.
    fn call_tool(
        self: Arc<Self>,
        tool: String,
        args: serde_json::Value,
        options: crate::CallOptions,
    ) -> futures::future::BoxFuture<'static, Result<crate::ToolOutput, ToolError>>;
}

/// The pipeline for the `tools` interface, set once the host is built; weak, so
/// plugins do not keep the host alive.
#[derive(Clone, Default)]
pub(crate) struct CallerCell(Arc<std::sync::OnceLock<std::sync::Weak<dyn ToolCaller>>>);

impl CallerCell {
    pub fn set(&self, caller: std::sync::Weak<dyn ToolCaller>) {
        let _ = self.0.set(caller);
    }

    pub fn get(&self) -> Option<Arc<dyn ToolCaller>> {
        self.0.get()?.upgrade()
    }
}

/// How deep tool calls may nest through the `tools` interface (a client's call
/// is depth 0).
pub(crate) const MAX_CALL_DEPTH: u8 = 2;

pub(crate) struct PluginServices {
    pub name: String,
    pub kv: KvStore,
    pub secrets: SecretStore,
    pub clock: Clock,
    /// The browser (`browser`, `cdp`).
    #[cfg(feature = "browser")]
    pub browser: crate::browser::BrowserManager,
    /// CDP domains the plugin declared (the `cdp` interface allows only these).
    #[cfg(feature = "browser")]
    pub cdp_domains: std::collections::BTreeSet<String>,
    /// The recordings (`recorder`), and the session a recording is stamped with.
    pub recorder: Arc<crate::stores::recording::Recorder>,
    pub session: String,
    /// Where plugin log lines go to clients (`logging`).
    pub client_logs: Arc<crate::client_log::ClientLogs>,
    /// The pipeline (`tools`).
    pub caller: CallerCell,
    /// The secrets the server knows (`secrets` adds what a plugin reads).
    pub known: Arc<crate::redact::KnownSecrets>,
}

/// The data of one call's [`Store`].
pub(crate) struct CallState {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: MemoryLimiter,
    pub(crate) services: Arc<PluginServices>,
    /// The options of the call this instance serves: its progress sink, its
    /// nesting depth, the session and task run its own tool calls belong to.
    pub(crate) parent: crate::CallOptions,
    /// Milliseconds this call spent waiting for tools it called (`tools`
    /// interface); they extend its wall-clock backstop.
    pub(crate) nested_ms: Arc<AtomicU64>,
    /// Epoch ticks the guest has run (host calls do not tick).
    guest_ticks: u64,
    /// The guest ran past its deadline.
    timed_out: bool,
    /// The secret values this call read: taken out of what it logs.
    pub(crate) secrets_read: Vec<String>,
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

/// Compile (or load from cache) and link a plugin whose manifest was checked.
pub(crate) fn prepare(
    runtime: &PluginRuntime,
    bytes: &[u8],
    manifest: &Manifest,
    services: Arc<PluginServices>,
) -> Result<PreparedPlugin, String> {
    let component =
        runtime.compile(bytes).map_err(|e| format!("does not compile: {}", e.root_cause()))?;
    let version = check_imports(runtime.engine(), &component, manifest)?;
    let mut linker: Linker<CallState> = Linker::new(runtime.engine());
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)
        .map_err(|e| format!("cannot link WASI: {e}"))?;
    interfaces::add_types(&mut linker, version)
        .map_err(|e| format!("cannot link the types interface: {e}"))?;
    for iface in &manifest.interfaces {
        interfaces::add_to_linker(&mut linker, iface, version)
            .map_err(|e| format!("cannot link interface {iface}: {e}"))?;
    }
    let pre = linker
        .instantiate_pre(&component)
        .map_err(|e| format!("cannot be linked: {}", e.root_cause()))?;
    let world = |e: wasmtime::Error| format!("does not export the ochre plugin world: {e}");
    let pre = match version {
        WitVersion::V0_2 => Pre::V0_2(bindings::PluginPre::new(pre).map_err(world)?),
        WitVersion::V0_1 => Pre::V0_1(since_v0_1::PluginPre::new(pre).map_err(world)?),
    };
    Ok(PreparedPlugin {
        runtime: runtime.clone(),
        pre: Arc::new(pre),
        services,
        instantiations: Arc::new(AtomicU64::new(0)),
    })
}

/// A linked plugin of one WIT version, ready to instantiate.
enum Pre {
    V0_2(bindings::PluginPre<CallState>),
    V0_1(since_v0_1::PluginPre<CallState>),
}

/// An instance of a plugin's world, in its version; both export the same
/// functions with the same Rust types (0.1.0's types are the current ones).
enum Guest {
    V0_2(bindings::Plugin),
    V0_1(since_v0_1::Plugin),
}

impl Pre {
    async fn instantiate(&self, store: &mut Store<CallState>) -> wasmtime::Result<Guest> {
        Ok(match self {
            Self::V0_2(pre) => Guest::V0_2(pre.instantiate_async(store).await?),
            Self::V0_1(pre) => Guest::V0_1(pre.instantiate_async(store).await?),
        })
    }
}

impl Guest {
    async fn describe(
        &self,
        store: &mut Store<CallState>,
    ) -> wasmtime::Result<Vec<bindings::ToolDefinition>> {
        match self {
            Self::V0_2(g) => g.call_describe(store).await,
            Self::V0_1(g) => g.call_describe(store).await,
        }
    }

    async fn call(
        &self,
        store: &mut Store<CallState>,
        tool: &str,
        args: &str,
    ) -> wasmtime::Result<Result<bindings::ToolOutput, bindings::ToolError>> {
        match self {
            Self::V0_2(g) => g.call_call(store, tool, args).await,
            Self::V0_1(g) => g.call_call(store, tool, args).await,
        }
    }
}

/// A compiled, linked plugin, ready to instantiate per call.
#[derive(Clone)]
pub(crate) struct PreparedPlugin {
    runtime: PluginRuntime,
    pre: Arc<Pre>,
    services: Arc<PluginServices>,
    instantiations: Arc<AtomicU64>,
}

impl PreparedPlugin {
    /// The `ochre:plugin` version the plugin was built against.
    pub fn wit_version(&self) -> &'static str {
        let version = match *self.pre {
            Pre::V0_2(_) => WitVersion::V0_2,
            Pre::V0_1(_) => WitVersion::V0_1,
        };
        version.as_str()
    }

    /// The counter of instances made so far.
    pub fn instance_counter(&self) -> Arc<AtomicU64> {
        self.instantiations.clone()
    }

    fn new_store(
        &self,
        parent: crate::CallOptions,
        nested_ms: Arc<AtomicU64>,
        stderr: &MemoryOutputPipe,
    ) -> Store<CallState> {
        // No preopened dirs, no env, no args, no stdin, stdout discarded, no network:
        // a plugin reaches the world only through the interfaces it was granted.
        let wasi = WasiCtxBuilder::new()
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .build();
        let state = CallState {
            wasi,
            table: ResourceTable::new(),
            limiter: MemoryLimiter::new(self.runtime.limits().max_memory),
            services: self.services.clone(),
            parent,
            nested_ms,
            guest_ticks: 0,
            timed_out: false,
            secrets_read: Vec::new(),
        };
        let mut store = Store::new(self.runtime.engine(), state);
        store.limiter(|s| &mut s.limiter);
        // The epoch only reaches a store while its guest runs, so counting ticks
        // measures the guest's own time; at each tick it yields to the executor.
        let max_ticks =
            (self.runtime.limits().timeout.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64;
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |mut ctx| {
            let state = ctx.data_mut();
            state.guest_ticks += 1;
            if state.guest_ticks > max_ticks {
                state.timed_out = true;
                return Ok(wasmtime::UpdateDeadline::Interrupt);
            }
            Ok(wasmtime::UpdateDeadline::Yield(1))
        });
        store
    }

    /// Run `f` against a fresh instance under the call limits.
    async fn with_instance<R>(
        &self,
        parent: crate::CallOptions,
        f: impl AsyncFnOnce(&Guest, &mut Store<CallState>) -> wasmtime::Result<R>,
    ) -> Result<R, ToolError> {
        let stderr = MemoryOutputPipe::new(4096);
        let nested_ms = Arc::new(AtomicU64::new(0));
        let mut store = self.new_store(parent, nested_ms.clone(), &stderr);
        self.instantiations.fetch_add(1, Ordering::Relaxed);
        let limits = self.runtime.limits();
        let started_wall = std::time::Instant::now();
        let outcome = {
            let store = &mut store;
            let pre = &self.pre;
            let run = async move {
                let instance = pre.instantiate(&mut *store).await?;
                f(&instance, store).await
            };
            // The backstop: the deadline plus the allowance for browser waits, plus
            // the time spent in tools this call called (each bounded on its own).
            let started = tokio::time::Instant::now();
            let base = limits.timeout + HOST_WAIT_ALLOWANCE;
            let cap = limits.max_wall;
            let until = |nested: &AtomicU64| {
                started + (base + Duration::from_millis(nested.load(Ordering::Relaxed))).min(cap)
            };
            tokio::pin!(run);
            loop {
                tokio::select! {
                    r = &mut run => break Ok(r),
                    () = tokio::time::sleep_until(until(&nested_ms)) => {
                        if until(&nested_ms) <= tokio::time::Instant::now() {
                            break Err(());
                        }
                    }
                }
            }
        };
        let name = &self.services.name;
        let timed_out = store.data().timed_out;
        match outcome {
            Ok(Ok(r)) => Ok(r),
            Err(_) => Err(ToolError::plugin_timeout(format!(
                    "plugin {name} did not finish within {} ms of wall-clock time (its deadline, the allowance for browser waits and its long host work, at most {} s) and was stopped",
                    started_wall.elapsed().as_millis(),
                    limits.max_wall.as_secs()
                ),
            )
            .with("plugin", name.as_str())
            .with("timeoutMs", limits.timeout.as_millis() as u64)),
            Ok(Err(_)) if timed_out => Err(ToolError::plugin_timeout(format!(
                    "plugin {name} ran past its {} ms deadline and was stopped",
                    limits.timeout.as_millis()
                ),
            )
            .with("plugin", name.as_str())
            .with("timeoutMs", limits.timeout.as_millis() as u64)),
            Ok(Err(e)) if store.data().limiter.exceeded() => Err(ToolError::plugin_out_of_memory(format!(
                    "plugin {name} tried to use more than its {} MiB memory cap and was stopped",
                    limits.max_memory >> 20
                ),
            )
            .with("plugin", name.as_str())
            .with("detail", e.root_cause().to_string())),
            Ok(Err(ref e)) if let Some(c) = corrupt_state(e) => Err(ToolError::state_corrupt(format!("plugin {name}: {c}"),
            )
            .with("plugin", name.as_str())
            .with("file", c.file.display().to_string())),
            Ok(Err(e)) => {
                let said = String::from_utf8_lossy(&stderr.contents())
                    .trim()
                    .to_owned();
                let mut err = ToolError::plugin_trapped(format!("plugin {name} trapped: {}", e.root_cause()),
                )
                .with("plugin", name.as_str());
                if !said.is_empty() {
                    err = err.with("stderr", said);
                }
                Err(err)
            }
        }
    }

    /// Call the guest's `describe`.
    pub async fn describe(&self) -> Result<Vec<bindings::ToolDefinition>, ToolError> {
        self.with_instance(crate::CallOptions::default(), async |p, s| p.describe(s).await).await
    }

    /// Call one tool.
    pub async fn call(
        &self,
        tool: &str,
        args: &str,
        parent: crate::CallOptions,
    ) -> Result<crate::tool::ToolOutput, ToolError> {
        let guest = self.with_instance(parent, async |p, s| p.call(s, tool, args).await).await?;
        match guest {
            Err(e) => Err(guest_error(e)),
            Ok(out) => guest_output(tool, out),
        }
    }
}

/// A plugin's error as the host's: its code if it is a well-formed one.
fn guest_error(e: bindings::ToolError) -> ToolError {
    let code_ok = !e.code.is_empty()
        && e.code.len() <= 64
        && e.code.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let mut err =
        ToolError::new(if code_ok { Code::named(e.code) } else { Code::PluginFailed }, e.message);
    if let Some(serde_json::Value::Object(details)) =
        e.details.and_then(|d| serde_json::from_str(&d).ok())
    {
        err.details = details;
    }
    err
}

/// A plugin's result as the host's; its structured content must be JSON.
fn guest_output(
    tool: &str,
    out: bindings::ToolOutput,
) -> Result<crate::tool::ToolOutput, ToolError> {
    use bindings::ochre::plugin::types::Content as C;
    let content = out
        .content
        .into_iter()
        .map(|c| match c {
            C::Text(t) | C::Json(t) => crate::tool::Content::Text(t),
            C::Image(img) => {
                crate::tool::Content::Image { data: img.data, mime_type: img.mime_type }
            }
        })
        .collect();
    let structured = match out.structured {
        None => None,
        Some(s) => Some(serde_json::from_str(&s).map_err(|e| {
            ToolError::plugin_failed(format!(
                "{tool}: the plugin returned structured content that is not JSON: {e}"
            ))
        })?),
    };
    Ok(crate::tool::ToolOutput {
        content,
        structured,
        summary: out.summary.map(|s| crate::tool::one_line(&s)).unwrap_or_else(|| "ok".into()),
    })
}

/// The damaged state file a trap came from, if it did.
fn corrupt_state(e: &wasmtime::Error) -> Option<&crate::stores::kv::Corrupt> {
    e.downcast_ref::<crate::stores::kv::Corrupt>()
        .or_else(|| e.chain().find_map(|c| c.downcast_ref::<crate::stores::kv::Corrupt>()))
}
