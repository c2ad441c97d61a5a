//! [`HostBuilder`]: a host's configuration, and its start (stores opened,
//! plugins loaded, the browser and background tasks set up).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use super::{Host, HostInner, Stages};
use crate::Clock;
#[cfg(feature = "browser")]
use crate::browser::BrowserOptions;
use crate::browser::{BrowserManager, HostBrowser};
use crate::capability::CapabilityFilter;
use crate::error::{Error, Result};
use crate::host_tools::HostTools;
use crate::loader::{self, LoadContext, Loaded, PluginStatus};
use crate::pipeline::{Pipeline, Stage};
use crate::plugin::manifest::{self, Manifest};
use crate::plugin::{CallerCell, InterfacePolicy, PluginLimits, PluginRuntime};
use crate::stores::journal::{Journal, Trace};
use crate::stores::recording::Recorder;

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
    #[cfg(feature = "browser")]
    browser: BrowserOptions,
    recording_retention_days: u64,
    output_ttl: Duration,
    output_sweep: Duration,
    intent_guard: crate::intent::IntentGuardConfig,
    intent_detector: Option<crate::intent::DetectorSlot>,
    stages: Stages,
    secret_values: Arc<BTreeMap<String, String>>,
    login_key: Option<crate::stores::logins::LoginKey>,
    default_login: Option<String>,
    known: Arc<crate::redact::KnownSecrets>,
    journal: crate::stores::journal::JournalOutput,
    otlp: Option<crate::otlp::OtlpConfig>,
    native: NativeTools,
    memory_plugins: Vec<(String, Arc<[u8]>)>,
}

#[derive(Clone, Default)]
struct NativeTools(Vec<Arc<dyn crate::native::HostTool>>);

impl std::fmt::Debug for NativeTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.iter().map(|t| t.info().name)).finish()
    }
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
            #[cfg(feature = "browser")]
            browser: BrowserOptions::default(),
            recording_retention_days: crate::stores::recording::DEFAULT_RETENTION_DAYS,
            output_ttl: Duration::from_secs(24 * 3600),
            output_sweep: Duration::from_secs(300),
            intent_guard: crate::intent::IntentGuardConfig::default(),
            intent_detector: None,
            stages: Stages::default(),
            secret_values: Default::default(),
            login_key: None,
            known: Default::default(),
            default_login: None,
            journal: Default::default(),
            otlp: None,
            native: NativeTools::default(),
            memory_plugins: Vec::new(),
        }
    }
}

/// Warn of damaged state files, off the way to serving (reading every state
/// file grows with the data dir; `ochre doctor` lists the same).
fn check_state_files(data_dir: &Path) {
    let dir = data_dir.to_path_buf();
    let scan = move || {
        for file in crate::stores::damaged_files(&dir) {
            tracing::warn!(
                file = %file.display(),
                "damaged state: kept as it is; calls that need it answer STATE_CORRUPT (restore it, or move it away to forget it)"
            );
        }
    };
    if let Err(e) = std::thread::Builder::new().name("ochre-state-check".into()).spawn(scan) {
        tracing::warn!(error = %e, "cannot check the state files for damage");
    }
}

/// Builder setters: `pub fn name(mut self, value: T) -> Self` setting a field.
macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident => $field:ident: $ty:ty;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(mut self, value: $ty) -> Self {
                self.$field = value;
                self
            }
        )*
    };
}

impl HostBuilder {
    setters! {
        /// Which capability groups to enable.
        capabilities => filter: CapabilityFilter;
        /// Which host interfaces plugins may get.
        interface_policy => policy: InterfacePolicy;
        /// Per-call limits of plugins.
        limits => limits: PluginLimits;
        /// The clock (fix it in tests).
        clock => clock: Clock;
        /// Load the built-in tool groups (default true).
        builtin_plugins => builtin: bool;
        /// Use the on-disk compile cache (default true).
        compile_cache => compile_cache: bool;
        /// How to get the browser (launched lazily on first use).
        #[cfg(feature = "browser")]
        browser => browser: BrowserOptions;
        /// Days to keep stopped recordings (default 30; 0 keeps them forever).
        recording_retention_days => recording_retention_days: u64;
        /// How long output handles live (default 24 h; zero: they expire at once).
        output_handle_ttl => output_ttl: Duration;
        /// How often expired output handles are deleted (default 5 min).
        output_handle_sweep_interval => output_sweep: Duration;
        /// The browser-first intent guard's settings (`[intent_guard]` of `--config`).
        intent_guard => intent_guard: crate::intent::IntentGuardConfig;
        /// The response budget: no tool result is larger than this many tokens
        /// (counted as UTF-8 bytes / 4; default 25,000, what MCP clients such as
        /// Claude Code accept). A larger result answers a first view and an output
        /// handle holding the whole; `output_mode: "inline"` still returns everything.
        /// 0 turns the budget off.
        max_response_tokens => max_response_tokens: usize;
        /// Largest accepted arguments object, serialized (default 4 MiB).
        max_arg_bytes => max_arg_bytes: usize;
        /// Where the journal and the trace go: files under the data dir (the
        /// default), nowhere, or a writer of yours.
        journal => journal: crate::stores::journal::JournalOutput;
    }

    /// Data dir for journal, traces, state, secrets and (unless
    /// [`Self::compile_cache_dir`] says otherwise) the compile cache. Required:
    /// the library picks no place of its own (the `ochre` CLI defaults to
    /// `$OCHRE_HOME` or `~/.ochre`).
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.data_dir = Some(dir.into());
        self
    }

    /// Send the journal's calls as OpenTelemetry spans over OTLP (see
    /// [`crate::otlp::OtlpConfig::from_env`]); off by default. The host must be
    /// built on a tokio runtime (its sender is a task there).
    pub fn otlp(mut self, config: crate::otlp::OtlpConfig) -> Self {
        self.otlp = Some(config);
        self
    }

    /// Load every `*.wasm` in `dir` (in name order) after the built-in plugins.
    pub fn plugin_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.plugin_dirs.push(dir.into());
        self
    }

    /// Per-call deadline of plugins.
    pub fn plugin_timeout(mut self, timeout: Duration) -> Self {
        self.limits.timeout = timeout;
        self
    }

    /// The session id used in the journal and trace (default: time and pid).
    pub fn session_id(mut self, id: impl Into<String>) -> Self {
        self.session = Some(id.into());
        self
    }

    /// Where compiled plugins are cached (default: `cache/` in the data dir; the
    /// `ochre` CLI uses the user's cache dir, shared by every data dir, so that a
    /// plugin is compiled once per machine and engine).
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

    /// Add a native tool (see [`crate::native`]): Rust code in this process whose
    /// calls pass the same pipeline as a plugin's. Native tools win name clashes
    /// with plugins; a name taken by the host's own tools or another native tool
    /// fails the build.
    pub fn tool(mut self, tool: impl crate::native::HostTool) -> Self {
        self.native.0.push(Arc::new(tool));
        self
    }

    /// Secret values that win over `secrets.json`, by name (`OCHRE_<PLUGIN>_<KEY>`,
    /// and `OCHRE_SECRET_<NAME>` for `{{secret:NAME}}` parameters). The library
    /// reads no environment; the `ochre` CLI passes its `OCHRE_*` variables.
    pub fn secret_values(mut self, values: BTreeMap<String, String>) -> Self {
        self.secret_values = Arc::new(values);
        self
    }

    /// The key named logins are sealed with (`oc_login_save`, `oc_login_load`).
    /// Keep it outside the data dir: without it, saved logins can be listed,
    /// not saved or opened. The `ochre` CLI reads `OCHRE_LOGIN_KEY` or
    /// `--login-key-file`.
    pub fn login_key(mut self, key: crate::stores::logins::LoginKey) -> Self {
        self.login_key = Some(key);
        self
    }

    /// The secrets every outcome is scrubbed of (passwords typed, one-time
    /// codes, `{{secret:NAME}}` values): given, so that the embedder can
    /// scrub what else it writes with them too (the `ochre` CLI: every log
    /// line). A new set by default.
    pub fn known_secrets(mut self, known: Arc<crate::redact::KnownSecrets>) -> Self {
        self.known = known;
        self
    }

    /// Every session starts signed in with the saved login `name` (its own
    /// copy, in its own browser context; `oc_login_load` in a session wins).
    /// It is opened at build with the [`Self::login_key`]: a login that is
    /// not there or does not open fails the build, saying why.
    pub fn default_login(mut self, name: impl Into<String>) -> Self {
        self.default_login = Some(name.into());
        self
    }

    /// Load a plugin component from memory, after the built-in plugins and
    /// before the plugin dirs; `label` names it in [`Host::plugins`] until its
    /// manifest is read. It gets the same checks and sandbox as a file.
    pub fn plugin_bytes(mut self, label: impl Into<String>, bytes: impl Into<Arc<[u8]>>) -> Self {
        self.memory_plugins.push((label.into(), bytes.into()));
        self
    }

    /// Load the plugins and open the stores. A plugin that cannot be loaded is
    /// refused (see [`Host::plugins`]); only configuration errors fail the build.
    pub async fn build(self) -> Result<Host> {
        let data_dir = self.data_dir.clone().ok_or_else(|| {
            Error::Config("no data dir: give one with HostBuilder::data_dir".into())
        })?;
        std::fs::create_dir_all(&data_dir)
            .map_err(|e| Error::io(format!("creating data dir {}", data_dir.display()), e))?;
        let clock = self.clock;
        let session = self.session_id_or_new()?;
        let candidates =
            loader::candidates(self.builtin, &self.memory_plugins, &self.plugin_dirs, &data_dir)?;
        let manifests: Vec<std::result::Result<Manifest, String>> =
            candidates.iter().map(|(_, b)| manifest::read(b)).collect();
        loader::check_filter(&self.filter, &manifests)?;
        let cache_dir = self.compile_cache_dir.clone().unwrap_or_else(|| data_dir.join("cache"));
        let (browser, logins) = self.browser_and_logins(&data_dir, &cache_dir)?;
        let compile_cache_dir = self.compile_cache.then(|| cache_dir.join("wasm"));
        let runtime = PluginRuntime::new(
            self.limits,
            compile_cache_dir.clone(),
            self.shipped_compiled_dir.clone(),
        )
        .map_err(|e| Error::Runtime(e.to_string()))?;
        let stores = Stores::open(&self, &data_dir, &session)?;
        let logs = stores.client_logs.clone();
        browser.set_notices(Arc::new(move |level, message| logs.emit(level, "browser", message)));
        let known = stores.known.clone();
        browser.set_scrubber(Arc::new(move |text| known.scrub(text).into_owned()));

        let caller = CallerCell::default();
        // One secrets store: plugins' and replays' (sealed with the login key).
        let secret_store = crate::stores::secrets::SecretStore::new(&data_dir)
            .with_values(self.secret_values.clone())
            .with_key(self.login_key.clone());
        let cx = LoadContext {
            runtime: &runtime,
            policy: &self.policy,
            filter: &self.filter,
            data_dir: &data_dir,
            clock,
            #[cfg(feature = "browser")]
            browser: &browser,
            recorder: &stores.recorder,
            session: &session,
            client_logs: &stores.client_logs,
            caller: &caller,
            known: &stores.known,
            secrets: &secret_store,
        };
        let sessions = Arc::new(crate::pipeline::Sessions::default());
        let own = Arc::new(HostTools {
            journal: stores.journal.clone(),
            output: stores.output.clone(),
            task_runs: stores.task_runs.clone(),
            sessions: sessions.clone(),
            intent_guard: self.intent_guard.clone(),
            intent_detector: self.intent_detector.clone(),
            browser: browser.clone(),
            browser_tools: Default::default(),
            logins,
            credentials: Arc::new(crate::stores::credentials::CredentialStore::new(
                &data_dir,
                self.login_key.clone(),
            )),
            known: stores.known.clone(),
            people: stores.people.clone(),
        });
        let mut loaded = Loaded::default();
        let embedders = self.native.0.iter().map(|t| (t.clone(), false));
        let native = crate::host_tools::own_tools(&own).into_iter().chain(embedders).collect();
        loaded.native_tools(&self.filter, native)?;
        for (candidate, manifest) in candidates.into_iter().zip(manifests) {
            loaded.plugin(&cx, candidate, manifest).await;
        }
        let loaded = loaded.finish();
        let _ = own.browser_tools.set(
            // The host's own (`oc_credential_fill`) cannot carry a task.
            loaded.tools.values().any(|t| {
                !t.info.control
                    && t.info.plugin != "host"
                    && t.info.guard_scope() == crate::intent::Scope::Browser
            }),
        );
        self.tell_startup(&loaded, &stores);
        let host = self.assemble(
            data_dir,
            session,
            sessions,
            loaded,
            stores,
            runtime,
            browser,
            compile_cache_dir,
            caller.clone(),
            secret_store,
        );
        let weak: std::sync::Weak<HostInner> = Arc::downgrade(&host.inner);
        caller.set(weak);
        spawn_syncer(Arc::downgrade(&host.inner));
        spawn_sweeper(Arc::downgrade(&host.inner), self.output_sweep);
        Ok(host)
    }

    /// The browser, and the saved logins it opens by name (a workflow
    /// worker's page operation naming one), with the login every session
    /// starts with (`--login`) set.
    fn browser_and_logins(
        &self,
        data_dir: &Path,
        cache_dir: &Path,
    ) -> Result<(BrowserManager, Arc<crate::stores::logins::LoginStore>)> {
        #[cfg(feature = "browser")]
        let browser = BrowserManager::new(self.browser_options(data_dir, cache_dir));
        #[cfg(not(feature = "browser"))]
        let browser = {
            let _ = cache_dir;
            BrowserManager::default()
        };
        check_state_files(data_dir);
        let logins =
            Arc::new(crate::stores::logins::LoginStore::new(data_dir, self.login_key.clone()));
        let source = logins.clone();
        browser.set_login_source(Arc::new(move |name| source.load(name)));
        if let Some(name) = &self.default_login {
            let signed =
                logins.load(name).and_then(|state| browser.use_login_everywhere(Some(state)));
            signed.map_err(|e| {
                Error::Config(format!("the login {name:?} for every session: {}", e.message))
            })?;
        }
        Ok((browser, logins))
    }

    /// What the start leaves behind: each plugin refused, told to the clients
    /// that connect; the browser endpoints' secrets, known to redaction.
    fn tell_startup(&self, loaded: &Loaded, stores: &Stores) {
        for p in &loaded.plugins {
            if let PluginStatus::Refused(why) = &p.status {
                stores.client_logs.emit_startup(
                    crate::client_log::Level::Warning,
                    "ochre",
                    format!("plugin {} was not loaded: {why}", p.name),
                );
            }
        }
        #[cfg(feature = "browser")]
        for e in &self.browser.endpoints {
            for secret in e.secrets() {
                stores.known.add("endpoint", &secret);
            }
        }
    }

    /// The session id asked for, or a new one (`s-<UTC digits>-<pid>`).
    fn session_id_or_new(&self) -> Result<String> {
        match &self.session {
            Some(s) if !manifest::valid_tool_name(s) => {
                Err(Error::Config(format!("session id {s:?} must be 1-64 chars of [A-Za-z0-9_-]")))
            }
            Some(s) => Ok(s.clone()),
            None => {
                let stamp = crate::stores::journal::iso_of(self.clock.now_ms());
                let digits: String = stamp.chars().filter(char::is_ascii_digit).take(14).collect();
                Ok(format!("s-{digits}-{:x}", std::process::id()))
            }
        }
    }

    /// The browser's options with the data dir's defaults; cleans up after
    /// servers that died.
    #[cfg(feature = "browser")]
    fn browser_options(&self, data_dir: &Path, cache_dir: &Path) -> BrowserOptions {
        let mut options = self.browser.clone();
        if options.evidence_dir.is_none() {
            options.evidence_dir = Some(data_dir.join("evidence"));
        }
        if options.downloads_dir.is_none() {
            options.downloads_dir = Some(data_dir.join("downloads"));
        }
        // Secrets, journals, state and the compile cache are never uploadable;
        // compiled plugins are loaded as native code: never handed to a page.
        options.private_dirs.push(data_dir.to_path_buf());
        options.private_dirs.push(cache_dir.to_path_buf());
        let run_dir = options.run_dir.get_or_insert_with(|| data_dir.join("run"));
        for line in crate::browser::lifeline::clean_after_dead_servers(run_dir) {
            tracing::warn!("cleaned up after a dead server: {line}");
        }
        options
    }

    /// The host from its parts, with its pipeline.
    #[allow(clippy::too_many_arguments)]
    fn assemble(
        &self,
        data_dir: PathBuf,
        session: String,
        sessions: Arc<crate::pipeline::Sessions>,
        loaded: Loaded,
        stores: Stores,
        runtime: PluginRuntime,
        browser: BrowserManager,
        compile_cache_dir: Option<PathBuf>,
        caller: CallerCell,
        secret_store: crate::stores::secrets::SecretStore,
    ) -> Host {
        let seq = Arc::new(AtomicU64::new(0));
        let pipeline = Pipeline::new(
            crate::pipeline::Parts {
                clock: self.clock,
                session: session.clone(),
                browser: browser.clone(),
                journal: stores.journal.clone(),
                trace: stores.trace.clone(),
                seq: seq.clone(),
                otlp: stores.otlp.clone(),
                task_runs: stores.task_runs.clone(),
                sessions,
                output: stores.output.clone(),
                recorder: stores.recorder.clone(),
                known: stores.known.clone(),
                secret_store,
                caller,
                max_arg_bytes: self.max_arg_bytes,
                max_response_tokens: self.max_response_tokens,
            },
            self.stages.0.clone(),
        );
        Host {
            inner: Arc::new(HostInner {
                known: stores.known.clone(),
                data_dir,
                clock: self.clock,
                session,
                tools: loaded.tools,
                gate: crate::pipeline::gate::Gate {
                    disabled: loaded.disabled,
                    slim: self.filter == CapabilityFilter::Slim,
                },
                pipeline,
                plugins: loaded.plugins,
                journal: stores.journal,
                trace: stores.trace,
                otlp: stores.otlp,
                seq,
                synced: AtomicU64::new(0),
                runtime,
                browser,
                recorder: stores.recorder,
                output: stores.output,
                client_logs: stores.client_logs,
                people: stores.people,
                compile_cache_dir,
            }),
        }
    }
}

/// The host's stores under its data dir.
struct Stores {
    journal: Arc<Journal>,
    trace: Arc<Trace>,
    otlp: Option<Arc<crate::otlp::Otlp>>,
    recorder: Arc<Recorder>,
    output: Arc<crate::stores::output::HandleStore>,
    task_runs: Arc<crate::stores::taskrun::TaskRuns>,
    client_logs: Arc<crate::client_log::ClientLogs>,
    known: Arc<crate::redact::KnownSecrets>,
    people: Arc<crate::people::People>,
}

impl Stores {
    fn open(b: &HostBuilder, data_dir: &Path, session: &str) -> Result<Self> {
        let clock = b.clock;
        let journal = Arc::new(Journal::with_output(data_dir, b.journal.clone()));
        journal.prune(clock.now_ms());
        let trace = Trace::start_with(data_dir, session, &clock, b.journal.clone())
            .map_err(|e| Error::io("starting the trace", e))?;
        let output = crate::stores::output::HandleStore::new(
            data_dir,
            clock,
            b.output_ttl.as_millis() as u64,
        );
        output.sweep();
        Ok(Self {
            journal,
            trace: Arc::new(trace),
            otlp: b.otlp.clone().map(crate::otlp::Otlp::start),
            recorder: Arc::new(Recorder::open(data_dir, clock, b.recording_retention_days)),
            output: Arc::new(output),
            task_runs: Arc::new(crate::stores::taskrun::TaskRuns::new(data_dir, clock)),
            client_logs: Arc::new(crate::client_log::ClientLogs::default()),
            known: b.known.clone(),
            people: Arc::new(crate::people::People::new(b.known.clone())),
        })
    }
}

/// Every line is in the kernel as soon as it is written (a crashed server loses
/// nothing); this thread also gets them onto the disk within a second, so a crashed
/// machine loses at most that. It ends with the host.
fn spawn_syncer(inner: std::sync::Weak<HostInner>) {
    let spawned = std::thread::Builder::new().name("ochre-fsync".into()).spawn(move || {
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
    let spawned = std::thread::Builder::new().name("ochre-sweep".into()).spawn(move || {
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
