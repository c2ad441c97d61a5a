//! [`Host`] and [`HostBuilder`]: configuration, plugin loading, the tool registry.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use std::time::Duration;
use tracing::Instrument;

use serde_json::Value;

use crate::browser::{BrowserManager, BrowserOptions};
use crate::capability::{BUILTIN_GROUPS, CapabilityFilter};
use crate::error::{Error, Result};
use crate::journal::{Journal, Trace};
use crate::kv::KvStore;
use crate::pipeline::{Call, GUARD_CODES, Outcome, Pipeline, Stage};
use crate::plugin::manifest::{self, Manifest};
use crate::plugin::{
    HostCell, InterfacePolicy, PluginLimits, PluginRuntime, PluginServices, PreparedPlugin,
};
use crate::recording::Recorder;
use crate::secrets::SecretStore;
use crate::tool::{Annotations, CallOptions, ToolInfo};
use crate::{Clock, builtin};

/// Where a plugin came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginSource {
    /// Shipped with ochre.
    Builtin,
    /// A `.wasm` file from a plugin dir.
    File(PathBuf),
}

impl std::fmt::Display for PluginSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Builtin => f.write_str("builtin"),
            Self::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// What became of a plugin at load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginStatus {
    /// Loaded; its tools are callable.
    Loaded,
    /// Its capability group is excluded; it was not instantiated.
    Disabled,
    /// Refused (bad manifest, denied interface, duplicate tool, ...).
    Refused(String),
}

/// One plugin as `ochre plugins list` shows it.
#[derive(Debug, Clone)]
pub struct PluginReport {
    /// Plugin name (the file name when the manifest is unreadable).
    pub name: String,
    /// Capability group ("" when unknown).
    pub group: String,
    /// Where it came from.
    pub source: PluginSource,
    /// Loaded, disabled or refused.
    pub status: PluginStatus,
    /// Its tools (from `describe` when loaded, from the manifest otherwise).
    pub tools: Vec<String>,
    /// The host interfaces it asked for (granted when loaded).
    pub interfaces: Vec<String>,
    pub(crate) instances: Option<Arc<AtomicU64>>,
}

impl PluginReport {
    /// How many instances of this plugin were created so far (0 for a plugin that
    /// was never instantiated, e.g. a disabled one).
    pub fn instantiations(&self) -> u64 {
        self.instances
            .as_ref()
            .map(|c| c.load(std::sync::atomic::Ordering::Relaxed))
            .unwrap_or(0)
    }

    /// A JSON view (for `ochre plugins list --json`).
    pub fn to_json(&self) -> Value {
        let (status, reason) = match &self.status {
            PluginStatus::Loaded => ("loaded", None),
            PluginStatus::Disabled => ("disabled", None),
            PluginStatus::Refused(r) => ("refused", Some(r.clone())),
        };
        serde_json::json!({
            "name": self.name,
            "group": self.group,
            "source": self.source.to_string(),
            "status": status,
            "reason": reason,
            "tools": self.tools,
            "interfaces": self.interfaces,
            "instantiations": self.instantiations(),
        })
    }
}

pub(crate) enum ToolImpl {
    Plugin(PreparedPlugin),
    Journal,
    OutputFetch,
    TaskRun,
    Bulk,
}

pub(crate) struct ToolEntry {
    pub info: ToolInfo,
    pub imp: ToolImpl,
    pub validator: jsonschema::Validator,
}

pub(crate) struct HostInner {
    pub data_dir: PathBuf,
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
    pub seq: Arc<AtomicU64>,
    pub synced: AtomicU64,
    pub runtime: PluginRuntime,
    pub browser: BrowserManager,
    pub recorder: Arc<Recorder>,
    pub output: Arc<crate::output::HandleStore>,
    pub task_runs: Arc<crate::taskrun::TaskRuns>,
    pub intent_guard: crate::intent::IntentGuardConfig,
    pub intent_detector: Option<crate::intent::DetectorSlot>,
    pub sessions: Arc<crate::pipeline::Sessions>,
    /// Messages for the clients' operators (MCP logging).
    pub client_logs: Arc<crate::client_log::ClientLogs>,
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
        f.debug_list()
            .entries(self.0.iter().map(|s| s.name()))
            .finish()
    }
}

/// Builds a [`Host`].
#[derive(Debug, Clone)]
pub struct HostBuilder {
    data_dir: Option<PathBuf>,
    plugin_dirs: Vec<PathBuf>,
    filter: CapabilityFilter,
    policy: InterfacePolicy,
    limits: PluginLimits,
    clock: Clock,
    session: Option<String>,
    builtin: bool,
    compile_cache: bool,
    shipped_compiled_dir: Option<PathBuf>,
    compile_cache_dir: Option<PathBuf>,
    max_arg_bytes: usize,
    max_response_tokens: usize,
    browser: BrowserOptions,
    recording_retention_days: u64,
    output_ttl: Duration,
    output_sweep: Duration,
    intent_guard: crate::intent::IntentGuardConfig,
    intent_detector: Option<crate::intent::DetectorSlot>,
    stages: Stages,
}

impl Default for HostBuilder {
    fn default() -> Self {
        Self {
            data_dir: None,
            plugin_dirs: Vec::new(),
            filter: CapabilityFilter::All,
            policy: InterfacePolicy::default(),
            limits: PluginLimits::default(),
            clock: Clock::System,
            session: None,
            builtin: true,
            compile_cache: true,
            shipped_compiled_dir: None,
            compile_cache_dir: None,
            max_arg_bytes: 4 << 20,
            max_response_tokens: crate::pipeline::budget::DEFAULT_MAX_TOKENS,
            browser: BrowserOptions::default(),
            recording_retention_days: crate::recording::DEFAULT_RETENTION_DAYS,
            output_ttl: Duration::from_secs(24 * 3600),
            output_sweep: Duration::from_secs(300),
            intent_guard: crate::intent::IntentGuardConfig::default(),
            intent_detector: None,
            stages: Stages::default(),
        }
    }
}

/// The user's cache dir for ochre: `$XDG_CACHE_HOME/ochre`, else
/// `~/.cache/ochre` (`None` without a home).
pub fn default_cache_dir() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    xdg.or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|d| d.join("ochre"))
}

/// `~/.ochre`, or `$OCHRE_HOME` when set.
pub fn default_data_dir() -> PathBuf {
    if let Some(h) = std::env::var_os("OCHRE_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(h);
    }
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
        .join(".ochre")
}

impl HostBuilder {
    /// Data dir for journal, traces, state, secrets and the compile cache
    /// (default `$OCHRE_HOME` or `~/.ochre`).
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.data_dir = Some(dir.into());
        self
    }

    /// Load every `*.wasm` in `dir` (in name order) after the built-in plugins.
    pub fn plugin_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.plugin_dirs.push(dir.into());
        self
    }

    /// Which capability groups to enable.
    pub fn capabilities(mut self, filter: CapabilityFilter) -> Self {
        self.filter = filter;
        self
    }

    /// Which host interfaces plugins may get.
    pub fn interface_policy(mut self, policy: InterfacePolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Per-call limits of plugins.
    pub fn limits(mut self, limits: PluginLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Per-call deadline of plugins.
    pub fn plugin_timeout(mut self, timeout: Duration) -> Self {
        self.limits.timeout = timeout;
        self
    }

    /// The clock (fix it in tests).
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The session id used in the journal and trace (default: time and pid).
    pub fn session_id(mut self, id: impl Into<String>) -> Self {
        self.session = Some(id.into());
        self
    }

    /// Load the built-in tool groups (default true).
    pub fn builtin_plugins(mut self, on: bool) -> Self {
        self.builtin = on;
        self
    }

    /// Use the on-disk compile cache (default true).
    pub fn compile_cache(mut self, on: bool) -> Self {
        self.compile_cache = on;
        self
    }

    /// Where compiled plugins are cached (default: the user's cache dir, see
    /// [`default_cache_dir`]; shared by every data dir, so a plugin is compiled
    /// once per machine and engine, not once per data dir).
    pub fn compile_cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.compile_cache_dir = Some(dir.into());
        self
    }

    /// A read-only dir of compiled plugins made by this same build (a package
    /// ships them so that even the first start compiles nothing): entries there
    /// are used before the compile cache's; other entries are ignored.
    pub fn shipped_compiled_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.shipped_compiled_dir = Some(dir.into());
        self
    }

    /// How to get the browser (launched lazily on first use).
    pub fn browser(mut self, options: BrowserOptions) -> Self {
        self.browser = options;
        self
    }

    /// Days to keep stopped recordings (default 30; 0 keeps them forever).
    pub fn recording_retention_days(mut self, days: u64) -> Self {
        self.recording_retention_days = days;
        self
    }

    /// How long output handles live (default 24 h; zero: they expire at once).
    pub fn output_handle_ttl(mut self, ttl: Duration) -> Self {
        self.output_ttl = ttl;
        self
    }

    /// How often expired output handles are deleted (default 5 min).
    pub fn output_handle_sweep_interval(mut self, every: Duration) -> Self {
        self.output_sweep = every;
        self
    }

    /// The browser-first intent guard's settings (`[intent_guard]` of `--config`).
    pub fn intent_guard(mut self, config: crate::intent::IntentGuardConfig) -> Self {
        self.intent_guard = config;
        self
    }

    /// Classify task goals with this detector instead of keywords + the client's
    /// model (it may return `None` to fall back to the keywords).
    pub fn intent_detector(mut self, detector: Arc<dyn crate::intent::IntentDetector>) -> Self {
        self.intent_detector = Some(crate::intent::DetectorSlot(detector));
        self
    }

    /// Add a stage to the pipeline every tool call passes, after the host's own
    /// (see [`crate::pipeline`]): metrics, an audit log, a policy of your own.
    /// Stages run in the order they are added.
    pub fn stage(mut self, stage: impl Stage) -> Self {
        self.stages.0.push(Arc::new(stage));
        self
    }

    /// The response budget: no tool result is larger than this many tokens
    /// (counted as UTF-8 bytes / 4; default 25,000, what MCP clients such as
    /// Claude Code accept). A larger result answers a first view and an output
    /// handle holding the whole; `output_mode: "inline"` still returns everything.
    /// 0 turns the budget off.
    pub fn max_response_tokens(mut self, tokens: usize) -> Self {
        self.max_response_tokens = tokens;
        self
    }

    /// Largest accepted arguments object, serialized (default 4 MiB).
    pub fn max_arg_bytes(mut self, bytes: usize) -> Self {
        self.max_arg_bytes = bytes;
        self
    }

    /// Load the plugins and open the stores. A plugin that cannot be loaded is
    /// refused (see [`Host::plugins`]); only configuration errors fail the build.
    pub async fn build(self) -> Result<Host> {
        let data_dir = self.data_dir.clone().unwrap_or_else(default_data_dir);
        std::fs::create_dir_all(&data_dir)
            .map_err(|e| Error::io(format!("creating data dir {}", data_dir.display()), e))?;
        let clock = self.clock;
        let session = match &self.session {
            Some(s) => {
                if !manifest::valid_tool_name(s) {
                    return Err(Error::Config(format!(
                        "session id {s:?} must be 1-64 chars of [A-Za-z0-9_-]"
                    )));
                }
                s.clone()
            }
            None => {
                let stamp = crate::journal::iso_of(clock.now_ms());
                let digits: String = stamp
                    .chars()
                    .filter(char::is_ascii_digit)
                    .take(14)
                    .collect();
                format!("s-{digits}-{:x}", std::process::id())
            }
        };

        // 1. Every candidate's bytes and manifest, before anything is instantiated.
        let mut candidates: Vec<(PluginSource, Vec<u8>)> = Vec::new();
        if self.builtin {
            for (_, bytes) in builtin::BUILTIN_PLUGINS {
                candidates.push((PluginSource::Builtin, bytes.to_vec()));
            }
        }
        for dir in &self.plugin_dirs {
            let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
                .map_err(|e| Error::io(format!("reading plugin dir {}", dir.display()), e))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "wasm") && p.is_file())
                .collect();
            files.sort();
            for path in files {
                match std::fs::read(&path) {
                    Ok(bytes) => candidates.push((PluginSource::File(path), bytes)),
                    Err(e) => {
                        tracing::warn!(path = %path.display(), error = %e, "cannot read plugin")
                    }
                }
            }
        }
        let manifests: Vec<std::result::Result<Manifest, String>> =
            candidates.iter().map(|(_, b)| manifest::read(b)).collect();

        // 2. The capability filter may name built-in groups and any group a
        //    plugin declares.
        let mut known: BTreeSet<String> = BUILTIN_GROUPS.iter().map(|g| g.to_string()).collect();
        known.extend(manifests.iter().flatten().map(|m| m.group.clone()));
        self.filter.check_known(&known)?;

        let mut browser_options = self.browser.clone();
        if browser_options.evidence_dir.is_none() {
            browser_options.evidence_dir = Some(data_dir.join("evidence"));
        }
        if browser_options.downloads_dir.is_none() {
            browser_options.downloads_dir = Some(data_dir.join("downloads"));
        }
        // Secrets, journals, state and the compile cache are never uploadable.
        browser_options.private_dirs.push(data_dir.clone());
        let run_dir = browser_options
            .run_dir
            .get_or_insert_with(|| data_dir.join("run"));
        for line in crate::browser::lifeline::clean_after_dead_servers(run_dir) {
            tracing::warn!("cleaned up after a dead server: {line}");
        }
        for file in crate::store::damaged_files(&data_dir) {
            tracing::warn!(
                file = %file.display(),
                "damaged state: kept as it is; calls that need it answer STATE_CORRUPT (restore it, or move it away to forget it)"
            );
        }
        let cache_dir = self
            .compile_cache_dir
            .clone()
            .or_else(default_cache_dir)
            .unwrap_or_else(|| data_dir.join("cache"));
        // Compiled plugins are loaded as native code: never handed to a page.
        browser_options.private_dirs.push(cache_dir.clone());
        let browser = BrowserManager::new(browser_options);
        let compile_cache_dir = self.compile_cache.then(|| cache_dir.join("wasm"));
        let runtime = PluginRuntime::new(
            self.limits,
            compile_cache_dir.clone(),
            self.shipped_compiled_dir.clone(),
        )
        .map_err(|e| Error::Runtime(e.to_string()))?;

        let mut tools: BTreeMap<String, ToolEntry> = BTreeMap::new();
        let mut owner: BTreeMap<String, String> = BTreeMap::new();
        let mut disabled: BTreeMap<String, String> = BTreeMap::new();
        let mut plugins: Vec<PluginReport> = Vec::new();
        let mut names: BTreeSet<String> = BTreeSet::new();
        let host_cell = HostCell::default();
        let max_tier = self.filter.max_tier();

        // Host tools first: they are host state and win name clashes.
        let host_tools = [
            (crate::host_tools::journal_tool_info(), ToolImpl::Journal),
            (
                crate::host_tools::output_fetch_tool_info(),
                ToolImpl::OutputFetch,
            ),
        ]
        .into_iter()
        .chain(
            crate::host_tools::task_run_tools()
                .into_iter()
                .map(|t| (t, ToolImpl::TaskRun)),
        )
        .chain(
            crate::host_tools::bulk_tools()
                .into_iter()
                .map(|t| (t, ToolImpl::Bulk)),
        );
        for (info, imp) in host_tools {
            // Task runs and bulk progress are the guards' control plane: they stay
            // whatever groups are enabled (a browser-first run on a server without
            // browser tools must be able to start, and fail its preflight).
            let control = matches!(imp, ToolImpl::TaskRun | ToolImpl::Bulk);
            if !(control || self.filter.allows(&info.capability)) || info.tier > max_tier {
                disabled.insert(info.name.clone(), info.capability.clone());
                continue;
            }
            let validator = jsonschema::validator_for(&info.input_schema)
                .map_err(|e| Error::Config(format!("{} schema: {e}", info.name)))?;
            owner.insert(info.name.clone(), "host".into());
            tools.insert(
                info.name.clone(),
                ToolEntry {
                    info,
                    imp,
                    validator,
                },
            );
        }

        for ((source, bytes), manifest) in candidates.into_iter().zip(manifests) {
            let builtin = source == PluginSource::Builtin;
            let manifest = match manifest {
                Ok(m) => m,
                Err(reason) => {
                    let name = match &source {
                        PluginSource::File(p) => p
                            .file_stem()
                            .map(|s| s.to_string_lossy().into_owned())
                            .unwrap_or_default(),
                        PluginSource::Builtin => "builtin".into(),
                    };
                    tracing::error!(plugin = %name, %source, "plugin refused: {reason}");
                    plugins.push(refused(name, String::new(), source, reason, vec![], vec![]));
                    continue;
                }
            };
            let iface_list: Vec<String> = manifest.interfaces.iter().cloned().collect();
            if !names.insert(manifest.name.clone()) {
                let reason = format!(
                    "another plugin named {:?} is already loaded; plugin names must be unique",
                    manifest.name
                );
                tracing::error!(plugin = %manifest.name, %source, "plugin refused: {reason}");
                plugins.push(refused(
                    manifest.name.clone(),
                    manifest.group.clone(),
                    source,
                    reason,
                    manifest.tools.clone(),
                    iface_list,
                ));
                continue;
            }
            if !self.filter.allows(&manifest.group) {
                for t in &manifest.tools {
                    disabled
                        .entry(t.clone())
                        .or_insert_with(|| manifest.group.clone());
                }
                plugins.push(PluginReport {
                    name: manifest.name.clone(),
                    group: manifest.group.clone(),
                    source,
                    status: PluginStatus::Disabled,
                    tools: manifest.tools.clone(),
                    interfaces: iface_list,
                    instances: None,
                });
                continue;
            }
            let loaded = load_plugin(
                &runtime,
                &browser,
                &self.policy,
                &data_dir,
                clock,
                &manifest,
                &bytes,
                builtin,
                &owner,
                &host_cell,
            )
            .await;
            match loaded {
                Ok((plugin, mut entries)) => {
                    // --slim: tools above the tier cap are disabled like an excluded group's.
                    entries.retain(|e| {
                        let keep = e.info.tier <= max_tier;
                        if !keep {
                            disabled.insert(e.info.name.clone(), e.info.capability.clone());
                        }
                        keep
                    });
                    let tool_names: Vec<String> =
                        entries.iter().map(|e| e.info.name.clone()).collect();
                    for e in entries {
                        owner.insert(e.info.name.clone(), manifest.name.clone());
                        tools.insert(e.info.name.clone(), e);
                    }
                    tracing::info!(plugin = %manifest.name, group = %manifest.group, tools = tool_names.len(), "plugin loaded");
                    plugins.push(PluginReport {
                        name: manifest.name.clone(),
                        group: manifest.group.clone(),
                        source,
                        status: PluginStatus::Loaded,
                        tools: tool_names,
                        interfaces: iface_list,
                        instances: Some(plugin.instance_counter()),
                    });
                }
                Err(reason) => {
                    tracing::error!(plugin = %manifest.name, %source, "plugin refused: {reason}");
                    plugins.push(refused(
                        manifest.name.clone(),
                        manifest.group.clone(),
                        source,
                        reason,
                        manifest.tools.clone(),
                        iface_list,
                    ));
                }
            }
        }
        // A tool both disabled (by group) and offered by a loaded plugin stays callable.
        disabled.retain(|name, _| !tools.contains_key(name));

        let journal = Arc::new(Journal::new(&data_dir));
        journal.prune(clock.now_ms());
        let trace = Arc::new(
            Trace::start(&data_dir, &session, &clock)
                .map_err(|e| Error::io("starting the trace", e))?,
        );
        let recorder = Arc::new(Recorder::open(
            &data_dir,
            clock,
            self.recording_retention_days,
        ));
        let output = Arc::new(crate::output::HandleStore::new(
            &data_dir,
            clock,
            self.output_ttl.as_millis() as u64,
        ));
        output.sweep();
        let task_runs = Arc::new(crate::taskrun::TaskRuns::new(&data_dir, clock));
        let client_logs = Arc::new(crate::client_log::ClientLogs::default());
        for p in &plugins {
            if let PluginStatus::Refused(why) = &p.status {
                client_logs.emit_startup(
                    crate::client_log::Level::Warning,
                    "ochre",
                    format!("plugin {} was not loaded: {why}", p.name),
                );
            }
        }
        browser.set_client_logs(client_logs.clone());
        let seq = Arc::new(AtomicU64::new(0));
        let sessions = Arc::new(crate::pipeline::Sessions::default());
        let pipeline = Pipeline::new(
            crate::pipeline::Parts {
                clock,
                session: session.clone(),
                browser: browser.clone(),
                journal: journal.clone(),
                trace: trace.clone(),
                seq: seq.clone(),
                task_runs: task_runs.clone(),
                sessions: sessions.clone(),
                output: output.clone(),
                recorder: recorder.clone(),
                max_arg_bytes: self.max_arg_bytes,
                max_response_tokens: self.max_response_tokens,
            },
            self.stages.0.clone(),
        );
        let host = Host {
            inner: Arc::new(HostInner {
                data_dir,
                clock,
                session,
                tools,
                gate: crate::pipeline::gate::Gate {
                    disabled,
                    slim: self.filter == CapabilityFilter::Slim,
                },
                pipeline,
                plugins,
                journal,
                trace,
                seq,
                synced: AtomicU64::new(0),
                runtime,
                browser,
                recorder,
                output,
                task_runs,
                intent_guard: self.intent_guard.clone(),
                intent_detector: self.intent_detector.clone(),
                sessions,
                client_logs,
                compile_cache_dir,
            }),
        };
        host_cell.set(Arc::downgrade(&host.inner));
        spawn_syncer(Arc::downgrade(&host.inner));
        spawn_sweeper(Arc::downgrade(&host.inner), self.output_sweep);
        Ok(host)
    }
}

/// Every line is in the kernel as soon as it is written (a crashed server loses
/// nothing); this thread also gets them onto the disk within a second, so a crashed
/// machine loses at most that. It ends with the host.
fn spawn_syncer(inner: std::sync::Weak<HostInner>) {
    let spawned = std::thread::Builder::new()
        .name("ochre-fsync".into())
        .spawn(move || {
            loop {
                std::thread::sleep(Duration::from_secs(1));
                let Some(inner) = inner.upgrade() else { break };
                let seq = inner.seq.load(std::sync::atomic::Ordering::Relaxed);
                if seq != inner.synced.swap(seq, std::sync::atomic::Ordering::Relaxed) {
                    let _ = inner.journal.sync();
                    let _ = inner.trace.sync();
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "cannot start the fsync thread; logs are synced at shutdown only");
    }
}

/// Deletes expired output handles every `every`; ends with the host.
fn spawn_sweeper(inner: std::sync::Weak<HostInner>, every: Duration) {
    let every = every.max(Duration::from_millis(100));
    let spawned = std::thread::Builder::new()
        .name("ochre-sweep".into())
        .spawn(move || {
            loop {
                std::thread::sleep(every);
                let Some(inner) = inner.upgrade() else { break };
                let n = inner.output.sweep();
                if n > 0 {
                    tracing::debug!(removed = n, "expired output handles deleted");
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "cannot start the output sweep; expired handles are deleted at startup only");
    }
}

fn refused(
    name: String,
    group: String,
    source: PluginSource,
    reason: String,
    tools: Vec<String>,
    interfaces: Vec<String>,
) -> PluginReport {
    PluginReport {
        name,
        group,
        source,
        status: PluginStatus::Refused(reason),
        tools,
        interfaces,
        instances: None,
    }
}

#[allow(clippy::too_many_arguments)]
async fn load_plugin(
    runtime: &PluginRuntime,
    browser: &BrowserManager,
    policy: &InterfacePolicy,
    data_dir: &Path,
    clock: Clock,
    manifest: &Manifest,
    bytes: &[u8],
    builtin: bool,
    owner: &BTreeMap<String, String>,
    host: &HostCell,
) -> std::result::Result<(PreparedPlugin, Vec<ToolEntry>), String> {
    policy.check(manifest, builtin)?;
    let services = Arc::new(PluginServices {
        name: manifest.name.clone(),
        kv: KvStore::new(data_dir.join("state"), &manifest.name),
        secrets: SecretStore::new(data_dir),
        clock,
        browser: browser.clone(),
        cdp_domains: manifest.cdp_domains.clone(),
        host: host.clone(),
    });
    let plugin = runtime.prepare(bytes, manifest, services)?;
    let defs = plugin
        .describe()
        .await
        .map_err(|e| format!("describe failed: {}", e.message))?;
    let mut entries = Vec::with_capacity(defs.len());
    let mut seen = BTreeSet::new();
    for def in defs {
        if !manifest::valid_tool_name(&def.name) {
            return Err(format!(
                "tool name {:?} must be 1-64 chars of [A-Za-z0-9_-]",
                def.name
            ));
        }
        if !manifest.tools.contains(&def.name) {
            return Err(format!(
                "tool {:?} is not declared in the manifest",
                def.name
            ));
        }
        if !seen.insert(def.name.clone()) {
            return Err(format!("tool {:?} is described twice", def.name));
        }
        if let Some(other) = owner.get(&def.name) {
            return Err(format!(
                "tool {:?} is already offered by plugin {other:?}; refusing plugin {:?}",
                def.name, manifest.name
            ));
        }
        if def.capability != manifest.group {
            return Err(format!(
                "tool {:?} claims capability {:?} but the plugin's group is {:?}",
                def.name, def.capability, manifest.group
            ));
        }
        let schema: Value = serde_json::from_str(&def.input_schema)
            .map_err(|e| format!("tool {:?}: input schema is not JSON: {e}", def.name))?;
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(format!(
                "tool {:?}: input schema must be an object schema",
                def.name
            ));
        }
        let validator = jsonschema::validator_for(&schema)
            .map_err(|e| format!("tool {:?}: invalid input schema: {e}", def.name))?;
        let info = ToolInfo {
            name: def.name,
            description: def.description,
            input_schema: schema,
            capability: def.capability,
            tier: def.tier,
            annotations: Annotations {
                read_only: def.annotations.read_only,
                destructive: def.annotations.destructive,
                idempotent: def.annotations.idempotent,
                open_world: def.annotations.open_world,
            },
            intent: def
                .features
                .contains(crate::plugin::bindings::ochre::plugin::types::HostFeatures::INTENT),
            output_mode: def
                .features
                .contains(crate::plugin::bindings::ochre::plugin::types::HostFeatures::OUTPUT_MODE),
            redact: def.redact,
            plugin: manifest.name.clone(),
            scope: Some({
                use crate::plugin::bindings::ochre::plugin::types::GuardScope as G;
                match def.scope {
                    G::Browser => crate::intent::Scope::Browser,
                    G::NetworkAdjacent => crate::intent::Scope::NetworkAdjacent,
                    G::Local => crate::intent::Scope::Local,
                }
            }),
        };
        entries.push(ToolEntry {
            info,
            imp: ToolImpl::Plugin(plugin.clone()),
            validator,
        });
    }
    Ok((plugin, entries))
}

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
                Some(owner) => crate::browser::with_tab_owner(Some(owner), call).await,
                // Nested calls (and an embedder's own `with_tab_owner`) keep the
                // owner they run under.
                None => call.await,
            };
            if let Err(e) = &result
                && GUARD_CODES.contains(&e.code.as_str())
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
        if top {
            crate::client_log::in_session(session, call).await
        } else {
            call.await
        }
    }

    /// The gate, then the stages around the tool.
    async fn run_call(&self, name: &str, args: Value, options: CallOptions) -> Outcome {
        let entry = self.inner.gate.resolve(&self.inner.tools, name)?;
        tracing::Span::current().record("plugin", entry.info.plugin.as_str());
        let call = Call::new(name, &entry.info, &entry.validator, &options, args);
        let tool = async |call: &Call<'_>| self.dispatch(&entry.imp, call).await;
        self.inner.pipeline.run(call, tool).await
    }

    /// Run the tool itself: a plugin's, or one of the host's.
    async fn dispatch(&self, imp: &ToolImpl, call: &Call<'_>) -> Outcome {
        let (name, args) = (call.name(), call.args());
        match imp {
            ToolImpl::Journal => crate::host_tools::run_journal(self, args),
            ToolImpl::OutputFetch => crate::host_tools::run_output_fetch(self, args),
            ToolImpl::TaskRun if name == "oc_task_run_start" => {
                crate::host_tools::start_run(self, args, call.options).await
            }
            ToolImpl::TaskRun => crate::host_tools::run_task_tool(self, name, args),
            ToolImpl::Bulk => crate::host_tools::run_bulk_tool(self, name, args),
            ToolImpl::Plugin(plugin) => {
                let raw = serde_json::to_string(args).unwrap_or_else(|_| "{}".into());
                let options = call.options;
                plugin
                    .call(name, &raw, options.progress.clone(), options.depth)
                    .await
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
    pub fn outputs(&self) -> &crate::output::HandleStore {
        &self.inner.output
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
    }
}
