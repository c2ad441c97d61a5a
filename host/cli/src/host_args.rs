//! The host's own options (`HostArgs`, shared by `serve` and the commands that
//! open the host's stores): where its data lives, its keys, its limits, the
//! browser and the network policy, and the `Host` built from them.

use super::*;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ochre_settings_are_never_plugin_secrets() {
        let vars = [
            ("OCHRE_AUTH_TOKEN", "t"),
            ("OCHRE_REGISTRY_PASSWORD", "p"),
            ("OCHRE_REGISTRY_USERNAME", "u"),
            ("OCHRE_HOME", "/h"),
            ("OCHRE_CACHE_DIR", "/c"),
            ("OCHRE_PYTHON", "python3"),
            ("OCHRE_TOTP_EXAMPLE_COM", "JBSWY3DP"),
            ("OCHRE_SECRET_ADMIN_PW", "pw"),
            ("HOME", "/root"),
        ];
        let got = secret_env(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let keys: Vec<_> = got.keys().map(String::as_str).collect();
        assert_eq!(keys, ["OCHRE_SECRET_ADMIN_PW", "OCHRE_TOTP_EXAMPLE_COM"]);
    }
}
