//! The host's own options (`HostArgs`, shared by `serve` and the commands that
//! open the host's stores): where its data lives, its keys, its limits, the
//! browser and the network policy, and the `Host` built from them.

use super::*;

#[derive(Args, Debug, Clone)]
pub(super) struct HostArgs {
    /// Config file (TOML): `[server]`, `[browser] endpoints`, `[network]`,
    /// `[trust.keys]`, `[plugins.NAME]` and `[intent_guard]`; an unknown key is
    /// an error naming it (see the README's flags).
    #[arg(long, value_name = "FILE", global = true)]
    config: Option<PathBuf>,
    /// Data dir: journal, traces, recordings, task runs, output handles, logins,
    /// secrets, installed plugins (default: ~/.ochre).
    #[arg(long, env = "OCHRE_HOME", global = true)]
    data_dir: Option<PathBuf>,
    /// A file holding the key named logins are sealed with (outside the data
    /// dir; `ochre login keygen` makes one). Else `OCHRE_LOGIN_KEY`.
    #[arg(long, value_name = "FILE", global = true)]
    login_key_file: Option<PathBuf>,
    /// Every session starts signed in with this saved login (its own copy;
    /// `oc_login_load` in a session wins). Needs the login key.
    #[arg(long, value_name = "NAME", global = true)]
    login: Option<String>,
    /// Where compiled plugins are cached, shared by every data dir (default:
    /// $XDG_CACHE_HOME/ochre, else ~/.cache/ochre).
    #[arg(long, value_name = "DIR", env = "OCHRE_CACHE_DIR", global = true)]
    cache_dir: Option<PathBuf>,
    /// Load every *.wasm plugin in this directory (repeatable).
    #[arg(long, value_name = "DIR", global = true)]
    pub(crate) plugin_dir: Vec<PathBuf>,
    /// Enable only these tool groups (comma-separated), e.g. core,totp.
    #[arg(long, value_name = "GROUPS", global = true, conflicts_with = "disable_tools")]
    tools_only: Vec<String>,
    /// Disable these tool groups (comma-separated).
    #[arg(long, value_name = "GROUPS", global = true)]
    disable_tools: Vec<String>,
    /// The smallest surface: core tier-1 tools only (not with --tools-only / --disable-tools).
    #[arg(long, global = true)]
    slim: bool,
    /// The response budget: no tool result exceeds this many tokens (UTF-8 bytes / 4);
    /// a larger one answers a first view plus an output handle. 0: no budget.
    #[arg(long, value_name = "TOKENS", default_value_t = 25_000, global = true)]
    max_response_tokens: usize,
    /// How long output handles live, in hours (0: they expire at once).
    #[arg(long, value_name = "HOURS", default_value_t = 24.0, global = true)]
    output_handle_ttl_hours: f64,
    /// How often expired output handles are deleted, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 300, global = true)]
    output_handle_sweep_interval_seconds: u64,
    /// Days to keep stopped recordings (0: forever).
    #[arg(long, value_name = "DAYS", default_value_t = 30, global = true)]
    recording_retention_days: u64,
    /// Deny a host interface to every plugin (comma-separated), e.g. secrets.
    #[arg(long, value_name = "IFACES", global = true)]
    deny_interface: Vec<String>,
    /// Grant a sensitive interface to a third-party plugin: PLUGIN=IFACE[,IFACE] (repeatable).
    #[arg(long, value_name = "PLUGIN=IFACES", global = true)]
    grant: Vec<String>,
    /// Deadline of one plugin call, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 30_000, global = true)]
    plugin_timeout_ms: u64,
    /// Longest wall-clock time of one plugin call, in seconds (long crawls included).
    #[arg(long, value_name = "SECS", default_value_t = 1800, global = true)]
    plugin_max_wall_seconds: u64,
    /// Memory cap of one plugin instance, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 64, global = true)]
    plugin_memory_mb: usize,
    /// Chromium/Chrome executable (default on PATH: Chromium's headless shell
    /// when headless, else chromium, google-chrome, ...).
    #[arg(long, value_name = "PATH", global = true)]
    chrome_path: Option<PathBuf>,
    /// Attach to a running browser (http://host:port or ws://...), or to a
    /// Selenium Grid 4 (selenium+http://host:4444), instead of launching one;
    /// give it several times for a pool (also `[browser] endpoints` in --config,
    /// where `max_sessions` caps an endpoint's sessions).
    #[arg(long, value_name = "URL", global = true)]
    cdp_endpoint: Vec<String>,
    /// Show the browser window (managed mode).
    #[arg(long, global = true)]
    headed: bool,
    /// Run the browser without a window (the default; accepted for symmetry with other servers).
    #[arg(long, global = true, conflicts_with = "headed")]
    headless: bool,
    /// Persistent browser profile dir (default: a fresh temporary profile per server).
    #[arg(long, value_name = "DIR", global = true)]
    user_data_dir: Option<PathBuf>,
    /// A dir whose files `file_upload` may give to pages (repeatable; the cwd is always allowed).
    #[arg(long, value_name = "DIR", global = true)]
    allow_file_root: Vec<PathBuf>,
    /// What happens to a JavaScript dialog (alert, confirm, prompt, beforeunload):
    /// `ask` keeps it open and reports it until handle_dialog answers it; `accept`
    /// or `dismiss` answer it at once.
    #[arg(long, value_name = "POLICY", default_value = "ask", global = true, value_parser = ["ask", "accept", "dismiss"])]
    dialogs: String,
    /// Where files that pages download are saved (default: <data-dir>/downloads).
    #[arg(long, value_name = "DIR", global = true)]
    downloads_dir: Option<PathBuf>,
    /// Police the network: every browser context reaches the web through a
    /// proxy of its own, so that sessions can set rules and an upstream proxy
    /// (`network_policy`). Implied by --network-allow, --network-block and a
    /// config's `[network]`.
    #[arg(long, global = true)]
    network_policy: bool,
    /// Only these origins, hosts or addresses are reached by any page (repeat; e.g.
    /// https://app.example, app.example:8080, *.example.com, 10.0.0.0/8).
    #[arg(long, value_name = "RULE", global = true)]
    network_allow: Vec<String>,
    /// These origins, hosts or addresses (127.0.0.1:8080, 169.254.0.0/16) are never reached by any page (repeat).
    #[arg(long, value_name = "RULE", global = true)]
    network_block: Vec<String>,
    /// Never reach an address inside this machine or its networks (loopback,
    /// private, link-local and cloud metadata ranges, by the address a name
    /// resolves to) unless an allow rule names it: for servers that browse
    /// the open web.
    #[arg(long, global = true)]
    network_block_private: bool,
    /// Answer this host name with this address instead of asking DNS, as
    /// curl's --resolve (repeat; e.g. staging.example=10.0.0.5): pages reach
    /// it there and the rules judge that address. Polices the network.
    #[arg(long, value_name = "NAME=ADDRESS", global = true)]
    network_resolve: Vec<String>,
    /// Send every tool call as an OpenTelemetry span to this collector (OTLP
    /// over HTTP, protobuf; e.g. http://localhost:4318): one trace per task run
    /// or top-level call. Also read: the standard OTEL_EXPORTER_OTLP_*,
    /// OTEL_SERVICE_NAME and OTEL_BSP_* variables (docs/deploy.md).
    #[arg(long, value_name = "URL", global = true)]
    otlp_endpoint: Option<String>,
    /// Fix the clock at this Unix time in ms (tests).
    #[arg(long, env = "OCHRE_FIXED_CLOCK_MS", hide = true, global = true)]
    fixed_clock_ms: Option<u64>,
    /// Fix the session id (tests).
    #[arg(long, env = "OCHRE_SESSION_ID", hide = true, global = true)]
    session_id: Option<String>,
}

/// The user's cache dir for ochre: `$XDG_CACHE_HOME/ochre`, else
/// `~/.cache/ochre` (`None` without a home).
fn default_cache_dir() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from).filter(|p| p.is_absolute());
    xdg.or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|d| d.join("ochre"))
}

/// The environment variable holding the login key (never a plugin's secret).
const LOGIN_KEY_ENV: &str = "OCHRE_LOGIN_KEY";

/// The environment's plugin secrets: the `OCHRE_*` values, except ochre's own
/// settings, which no plugin may read as a secret (a plugin named `registry` or
/// `auth` would otherwise read `OCHRE_REGISTRY_PASSWORD` or `OCHRE_AUTH_TOKEN`).
pub(super) fn secret_env(vars: impl Iterator<Item = (String, String)>) -> BTreeMap<String, String> {
    let mut own: BTreeSet<String> = [oci::USERNAME_ENV, oci::PASSWORD_ENV, LOGIN_KEY_ENV]
        .into_iter()
        .chain(scaffold::TOOL_ENV.iter().copied())
        .map(str::to_owned)
        .collect();
    let mut commands = vec![<Cli as clap::CommandFactory>::command()];
    while let Some(c) = commands.pop() {
        own.extend(c.get_arguments().filter_map(|a| a.get_env()?.to_str().map(str::to_owned)));
        commands.extend(c.get_subcommands().cloned());
    }
    vars.filter(|(k, _)| k.starts_with("OCHRE_") && !own.contains(k)).collect()
}

/// `~/.ochre`, or `$OCHRE_HOME` when set.
fn default_data_dir() -> PathBuf {
    if let Some(h) = std::env::var_os("OCHRE_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(h);
    }
    std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(std::env::temp_dir).join(".ochre")
}

impl HostArgs {
    pub(super) fn data_dir(&self) -> PathBuf {
        self.data_dir.clone().unwrap_or_else(default_data_dir)
    }

    /// The login key: from `--login-key-file` (a file outside the data dir),
    /// else `OCHRE_LOGIN_KEY`; `None` when neither is given.
    pub(super) fn login_key(&self) -> anyhow::Result<Option<ochre_host::stores::logins::LoginKey>> {
        use ochre_host::stores::logins::LoginKey;
        let text = match &self.login_key_file {
            Some(file) => {
                let data =
                    std::fs::canonicalize(self.data_dir()).unwrap_or_else(|_| self.data_dir());
                let at = std::fs::canonicalize(file)
                    .map_err(|e| anyhow::anyhow!("--login-key-file {}: {e}", file.display()))?;
                anyhow::ensure!(
                    !at.starts_with(&data),
                    "--login-key-file {} is inside the data dir: keep the key apart from the logins it opens",
                    file.display()
                );
                std::fs::read_to_string(&at)
                    .map_err(|e| anyhow::anyhow!("--login-key-file {}: {e}", file.display()))?
            }
            None => match std::env::var(LOGIN_KEY_ENV) {
                Ok(k) if !k.trim().is_empty() => k,
                _ => return Ok(None),
            },
        };
        let key = LoginKey::parse(&text).map_err(|e| anyhow::anyhow!("the login key: {e}"))?;
        Ok(Some(key))
    }

    pub(super) async fn build(&self) -> anyhow::Result<Host> {
        Ok(self.builder()?.build().await?)
    }

    /// The host these flags describe, not built yet (the flags are checked).
    pub(super) fn builder(&self) -> anyhow::Result<ochre_host::HostBuilder> {
        let filter =
            CapabilityFilter::from_options(&self.tools_only, &self.disable_tools, self.slim)?;
        let config = self.config()?;
        let policy = self.interface_policy(&config)?;
        self.check_limits()?;
        let guard = config.intent_guard.clone();
        let mut b = Host::builder()
            .known_secrets(known_secrets().clone())
            .data_dir(self.data_dir())
            .intent_guard(guard)
            .capabilities(filter)
            .recording_retention_days(self.recording_retention_days)
            .output_handle_ttl(Duration::from_secs_f64(self.output_handle_ttl_hours * 3600.0))
            .output_handle_sweep_interval(Duration::from_secs(
                self.output_handle_sweep_interval_seconds,
            ))
            .interface_policy(policy)
            .max_response_tokens(self.max_response_tokens)
            .limits(PluginLimits {
                timeout: Duration::from_millis(self.plugin_timeout_ms),
                max_memory: self.plugin_memory_mb << 20,
                max_wall: Duration::from_secs(self.plugin_max_wall_seconds),
            });
        if let Some(dir) = self.cache_dir.clone().or_else(default_cache_dir) {
            b = b.compile_cache_dir(dir);
        }
        // Secrets given in the environment (`OCHRE_<PLUGIN>_<KEY>`,
        // `OCHRE_SECRET_<NAME>`): the library reads no environment itself.
        b = b.secret_values(secret_env(std::env::vars()));
        if let Some(key) = self.login_key()? {
            b = b.login_key(key);
        }
        if let Some(name) = &self.login {
            b = b.default_login(name);
        }
        if let Some(dir) = shipped_compiled_dir() {
            b = b.shipped_compiled_dir(dir);
        }
        b = b.browser(self.browser_options()?);
        for d in &self.plugin_dir {
            if !d.is_dir() {
                anyhow::bail!(
                    "--plugin-dir {}: no such directory (make it and put plugin .wasm files in it \
                     (`ochre plugin build --out DIR`), or leave the flag out)",
                    d.display()
                );
            }
            b = b.plugin_dir(d);
        }
        if let Some(otlp) = self.otlp()? {
            b = b.otlp(otlp);
        }
        if let Some(ms) = self.fixed_clock_ms {
            b = b.clock(Clock::Fixed(ms));
        }
        if let Some(id) = &self.session_id {
            b = b.session_id(id);
        }
        Ok(b)
    }

    /// The OpenTelemetry export `--otlp-endpoint` and the `OTEL_*` variables
    /// ask for, if any.
    pub(super) fn otlp(&self) -> anyhow::Result<Option<ochre_host::otlp::OtlpConfig>> {
        let flag = self.otlp_endpoint.as_deref();
        Ok(ochre_host::otlp::OtlpConfig::from_env(flag, |k| std::env::var(k).ok())?)
    }

    /// `--deny-interface`, `--grant` and the config's `[plugins.NAME] grants`.
    pub(super) fn interface_policy(
        &self,
        config: &ochre_host::config::Config,
    ) -> anyhow::Result<InterfacePolicy> {
        let mut policy = InterfacePolicy::default();
        for (plugin, settings) in &config.plugins {
            for iface in &settings.grants {
                policy.grants.insert((plugin.clone(), iface.clone()));
            }
        }
        for d in &self.deny_interface {
            policy.deny.extend(d.split(',').map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()));
        }
        for g in &self.grant {
            let (plugin, ifaces) = g
                .split_once('=')
                .with_context(|| format!("--grant {g:?}: expected PLUGIN=IFACE[,IFACE]"))?;
            for iface in ifaces.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                policy.grants.insert((plugin.trim().to_owned(), iface.to_owned()));
            }
        }
        Ok(policy)
    }

    /// The numeric flags are in range.
    fn check_limits(&self) -> anyhow::Result<()> {
        if self.plugin_memory_mb == 0 || self.plugin_memory_mb > 4096 {
            anyhow::bail!("--plugin-memory-mb must be 1-4096");
        }
        if !(self.output_handle_ttl_hours >= 0.0 && self.output_handle_ttl_hours <= 24.0 * 365.0) {
            anyhow::bail!("--output-handle-ttl-hours must be from 0 to 8760");
        }
        if self.output_handle_sweep_interval_seconds == 0 {
            anyhow::bail!("--output-handle-sweep-interval-seconds must be positive");
        }
        if self.plugin_max_wall_seconds == 0 {
            anyhow::bail!("--plugin-max-wall-seconds must be positive");
        }
        if self.plugin_timeout_ms == 0 {
            anyhow::bail!("--plugin-timeout-ms must be positive");
        }
        Ok(())
    }

    /// The config file (`--config`), or the defaults.
    pub(super) fn config(&self) -> anyhow::Result<ochre_host::config::Config> {
        Ok(match &self.config {
            None => ochre_host::config::Config::default(),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("--config {}: cannot read it", path.display()))?;
                ochre_host::config::parse(&text)
                    .map_err(|e| anyhow::anyhow!("--config {}: {e}", path.display()))?
            }
        })
    }

    /// The browser's options from the browser flags.
    pub(super) fn browser_options(&self) -> anyhow::Result<ochre_host::BrowserOptions> {
        let mut endpoints = Vec::new();
        for url in &self.cdp_endpoint {
            endpoints.push(
                ochre_host::browser::Endpoint::parse(url, None)
                    .map_err(|e| anyhow::anyhow!("--cdp-endpoint {e}"))?,
            );
        }
        let config = self.config()?;
        endpoints.extend(config.browser_endpoints);
        let network_policy = self.network_policy(config.network)?;
        Ok(ochre_host::BrowserOptions {
            chrome_path: self.chrome_path.clone(),
            endpoints,
            headed: self.headed && !self.headless,
            user_data_dir: self.user_data_dir.clone(),
            file_roots: std::env::current_dir()
                .into_iter()
                .chain(self.allow_file_root.iter().cloned())
                .collect(),
            evidence_dir: None,
            private_dirs: Vec::new(),
            dialogs: self.dialogs.parse().map_err(|e: String| anyhow::anyhow!("--dialogs: {e}"))?,
            downloads_dir: self.downloads_dir.clone(),
            // Chromium is started through this binary, which binds it to die
            // with the server (see `main`).
            launcher: std::env::current_exe().ok(),
            run_dir: None,
            network_policy,
        })
    }

    /// The server's network policy: the config's `[network]` and the flags'
    /// rules (`None`: the network is not policed).
    fn network_policy(
        &self,
        config: Option<ochre_host::config::NetworkRules>,
    ) -> anyhow::Result<Option<ochre_host::browser::netpolicy::NetPolicy>> {
        use ochre_host::browser::netpolicy::{HostRule, NetPolicy};
        let policed = self.network_policy
            || config.is_some()
            || !self.network_allow.is_empty()
            || !self.network_block.is_empty()
            || self.network_block_private
            || !self.network_resolve.is_empty();
        if !policed {
            return Ok(None);
        }
        let rules = config.unwrap_or_default();
        let (mut allow, mut block) = (rules.allow.clone(), rules.block.clone());
        allow.extend(self.network_allow.iter().cloned());
        block.extend(self.network_block.iter().cloned());
        let read = |flag: &str, texts: &[String]| -> anyhow::Result<Vec<HostRule>> {
            texts
                .iter()
                .map(|t| HostRule::parse(t).map_err(|e| anyhow::anyhow!("{flag}: {e}")))
                .collect()
        };
        let mut hosts = std::collections::BTreeMap::<String, Vec<std::net::IpAddr>>::new();
        for text in rules.resolve.iter().chain(&self.network_resolve) {
            let (name, ip) = ochre_host::browser::netpolicy::parse_resolve(text)
                .map_err(|e| anyhow::anyhow!("--network-resolve (or [network] resolve): {e}"))?;
            let addrs = hosts.entry(name).or_default();
            if !addrs.contains(&ip) {
                addrs.push(ip);
            }
        }
        Ok(Some(NetPolicy {
            allowed: read("--network-allow (or [network] allow)", &allow)?,
            blocked: read("--network-block (or [network] block)", &block)?,
            block_private: rules.block_private || self.network_block_private,
            hosts,
            ..NetPolicy::default()
        }))
    }
}
