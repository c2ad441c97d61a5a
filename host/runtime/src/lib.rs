//! The WebAssembly side of ochre's plugins, below the host: one wasmtime
//! [`Engine`] (component model, async, epoch interruption, pooling allocator)
//! with its epoch ticker and call limits ([`PluginRuntime`]), the on-disk
//! compile cache, the bindings of the `ochre:plugin` WIT in every version the
//! host loads ([`bindings`], [`bindings_v0_1`]) and the check of a component's
//! imports against them, a store's memory cap, plugin manifests (read without
//! running the plugin) and the install lock with its signatures.
//!
//! The host interfaces themselves (what `kv`, `browser`, `tools`... do) are the
//! host's (`ochre-host`): it implements the bindings' `Host` traits on its own
//! call state. Nothing here reaches the browser, the pipeline or MCP; Cargo
//! keeps it so (this crate depends on `ochre-protocol` alone of ochre's).

pub mod lock;
pub mod manifest;

mod cache;

use std::time::Duration;

use wasmtime::component::Component;
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, ResourceLimiter,
};

pub use cache::CompileCache;
pub use manifest::Manifest;

/// The bindings of the current WIT (`wit/plugin.wit`).
pub mod bindings {
    wasmtime::component::bindgen!({
        world: "plugin",
        path: "wit",
        // kv traps when the plugin's state file is damaged: the call fails with
        // STATE_CORRUPT instead of the plugin reading it as empty.
        imports: { "ochre:plugin/kv": async | trappable, default: async },
        exports: { default: async },
    });
}

/// The bindings of `ochre:plugin@0.1.0` (`wit/v0.1.0/plugin.wit`, frozen): its
/// `types` are the current ones.
pub mod bindings_v0_1 {
    wasmtime::component::bindgen!({
        world: "plugin",
        path: "wit/v0.1.0",
        imports: { "ochre:plugin/kv": async | trappable, default: async },
        exports: { default: async },
        with: { "ochre:plugin/types": crate::bindings::ochre::plugin::types },
    });
}

/// The WIT package version plugins are built against now.
pub const WIT_VERSION: &str = WitVersion::V0_2.as_str();

/// The WIT (`ochre:plugin`, version [`WIT_VERSION`]) this host speaks, as text:
/// what a plugin is built against.
pub const WIT: &str = include_str!("../wit/plugin.wit");

/// Every `ochre:plugin` version this host loads, newest first.
pub const WIT_VERSIONS: &[&str] = &[WitVersion::V0_2.as_str(), WitVersion::V0_1.as_str()];

/// A WIT version a plugin was built against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WitVersion {
    /// `ochre:plugin@0.2.0`, the current one.
    V0_2,
    /// `ochre:plugin@0.1.0`, loaded through the adapter in `interfaces::since_v0_1`.
    V0_1,
}

impl WitVersion {
    const ALL: [Self; 2] = [Self::V0_2, Self::V0_1];

    /// The version of `ochre:plugin@<version>`, if this host loads it.
    pub fn parse(version: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == version)
    }

    /// The version as WIT writes it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V0_2 => "0.2.0",
            Self::V0_1 => "0.1.0",
        }
    }
}

/// Limits applied to every plugin call.
#[derive(Debug, Clone, Copy)]
pub struct PluginLimits {
    /// Deadline of the guest's own running time in one call (instantiation
    /// included). Time the guest spends waiting on host calls (a page load, a
    /// `wait_for`) does not count: those are bounded by their own timeouts, and
    /// a wall-clock backstop of `timeout` + [`HOST_WAIT_ALLOWANCE`] covers the rest.
    pub timeout: Duration,
    /// Linear-memory cap of one instance, in bytes.
    pub max_memory: usize,
    /// Longest wall-clock time of one call, whatever it waits on. Long host work
    /// (batch page visits, pauses, tools called through the `tools` interface)
    /// extends the backstop above, up to this: a guest looping on host calls
    /// still ends.
    pub max_wall: Duration,
}

impl Default for PluginLimits {
    /// 30 s and 64 MiB: enough for browser tools that wait on pages, small enough
    /// that a runaway guest cannot hurt the server.
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
            max_memory: 64 << 20,
            max_wall: Duration::from_secs(30 * 60),
        }
    }
}

/// The shared engine, its epoch ticker and the compile cache.
#[derive(Clone)]
pub struct PluginRuntime {
    engine: Engine,
    cache: CompileCache,
    limits: PluginLimits,
}

impl std::fmt::Debug for PluginRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginRuntime").field("limits", &self.limits).finish_non_exhaustive()
    }
}

/// Wall-clock time a call may spend in host calls beyond its guest deadline: the
/// longest browser wait a tool may ask for (120 s) plus margin.
pub const HOST_WAIT_ALLOWANCE: Duration = Duration::from_secs(150);

/// How often the epoch advances; a running guest yields to the executor at each
/// tick, so deadlines are enforced with this granularity.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

impl PluginRuntime {
    /// Build the engine. `cache_dir` enables the on-disk compile cache; compiled
    /// plugins in `shipped` (read only) are used first.
    pub fn new(
        limits: PluginLimits,
        cache_dir: Option<std::path::PathBuf>,
        shipped: Option<std::path::PathBuf>,
    ) -> wasmtime::Result<Self> {
        let mut config = Config::new();
        config.wasm_component_model(true);
        config.epoch_interruption(true);
        let mut pool = PoolingAllocationConfig::default();
        let slots = 128;
        pool.total_component_instances(slots)
            .total_core_instances(slots * 4)
            .total_memories(slots * 2)
            .total_tables(slots * 4)
            .total_stacks(slots)
            .max_memory_size(limits.max_memory.max(1 << 16).next_multiple_of(1 << 16));
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        let engine = Engine::new(&config)?;
        let weak = engine.weak();
        std::thread::Builder::new()
            .name("ochre-epoch".into())
            .spawn(move || {
                while let Some(engine) = weak.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(EPOCH_TICK);
                }
            })
            .map_err(|e| wasmtime::format_err!("cannot start the epoch thread: {e}"))?;
        let cache = CompileCache::new(&engine, cache_dir, shipped);
        Ok(Self { engine, cache, limits })
    }

    /// The limits applied to each call.
    pub fn limits(&self) -> PluginLimits {
        self.limits
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Compile a component (or load it from the compile cache).
    pub fn compile(&self, bytes: &[u8]) -> wasmtime::Result<Component> {
        self.cache.load(&self.engine, bytes)
    }
}

/// A store's cap on linear memory (and tables): a guest growing past it fails
/// that call (`exceeded` tells it apart from a trap).
pub struct MemoryLimiter {
    max_memory: usize,
    exceeded: bool,
}

impl MemoryLimiter {
    /// A cap of `max_memory` bytes.
    pub fn new(max_memory: usize) -> Self {
        Self { max_memory, exceeded: false }
    }

    /// Whether the guest tried to grow past the cap.
    pub fn exceeded(&self) -> bool {
        self.exceeded
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.max_memory {
            self.exceeded = true;
            wasmtime::bail!(
                "memory would grow to {desired} bytes, past the plugin cap of {} bytes",
                self.max_memory
            );
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 100_000)
    }
}

/// Every `ochre:plugin/*` import must be declared in the manifest (so the operator's
/// decision covers what the code really uses), and all of one version this host
/// loads; that version is the plugin's.
pub fn check_imports(
    engine: &Engine,
    component: &Component,
    manifest: &Manifest,
) -> Result<WitVersion, String> {
    let mut found: Option<WitVersion> = None;
    for (name, _) in component.component_type().imports(engine) {
        let Some(rest) = name.strip_prefix("ochre:plugin/") else {
            if name.starts_with("wasi:") {
                continue;
            }
            return Err(format!("imports {name:?}, which this host does not provide"));
        };
        let (iface, version) = rest.split_once('@').unwrap_or((rest, ""));
        let Some(v) = WitVersion::parse(version) else {
            return Err(format!(
                "was built against ochre:plugin@{version}; this host loads ochre:plugin@{} \
                 (rebuild it with an ochre-sdk of one of those)",
                WIT_VERSIONS.join(" and @")
            ));
        };
        if found.is_some_and(|f| f != v) {
            return Err(format!(
                "imports more than one version of ochre:plugin ({} and {version})",
                found.map(WitVersion::as_str).unwrap_or_default()
            ));
        }
        found = Some(v);
        if iface != "types" && !manifest.interfaces.contains(iface) {
            return Err(format!(
                "imports host interface {iface:?} without declaring it in its manifest"
            ));
        }
    }
    // A plugin that imports nothing of ochre's is read by its manifest's version.
    found.or_else(|| WitVersion::parse(&manifest.sdk)).ok_or_else(|| {
        format!(
            "says it was built against ochre:plugin@{}; this host loads ochre:plugin@{}",
            manifest.sdk,
            WIT_VERSIONS.join(" and @")
        )
    })
}
