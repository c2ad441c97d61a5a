//! `ochre`: the MCP server, and a few commands to manage it.

mod commands;
mod install;
mod oci;
mod scaffold;

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};
use ochre_host::{CapabilityFilter, Clock, Host, InterfacePolicy, PluginLimits};

/// ochre: browser automation for AI agents, with tools as sandboxed WebAssembly plugins.
///
/// With no subcommand, serves MCP on stdio (or on HTTP with --http).
#[derive(Parser, Debug)]
#[command(name = "ochre", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    host: HostArgs,
    /// Serve MCP over Streamable HTTP on this port (POST /mcp, GET /health) instead of stdio.
    #[arg(long, value_name = "PORT")]
    http: Option<u16>,
    /// Address to bind with --http. Non-loopback addresses require --auth-token.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    http_host: IpAddr,
    /// Bearer token required on /mcp with --http.
    #[arg(long, env = "OCHRE_AUTH_TOKEN", hide_env_values = true)]
    auth_token: Option<String>,
    /// Extra browser Origin allowed with --http (repeatable), e.g. https://app.example.com.
    #[arg(long, value_name = "ORIGIN")]
    allow_origin: Vec<String>,
    /// Extra Host header value allowed with --http (repeatable), e.g. ochre.internal.
    #[arg(long, value_name = "HOST")]
    allow_host: Vec<String>,
    /// With --http, every session sees and drives every tab, in the browser's
    /// default context (a --user-data-dir profile's logins included). Default:
    /// each session has tabs of its own, in a browser context of its own.
    #[arg(long)]
    share_tabs: bool,
    /// With --http, the most MCP sessions served at once: the next is refused at
    /// `initialize` with HTTP 503 and Retry-After until one ends (closed, or idle
    /// past its keep-alive). Also `[server] max_sessions` in the config file.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_sessions: Option<u32>,
    /// With --http, keep each session's handshake in <data-dir>/sessions, so
    /// that another ochre sharing the data dir (a replica behind a load
    /// balancer, after this one died) or this one after a restart resumes the
    /// session under the same Mcp-Session-Id: its task runs, output handles and
    /// journal are there; its tabs are not. Also `[server] resume_sessions`.
    #[arg(long)]
    resume_sessions: bool,
    /// With --http, where people reach ochre's pages (the live view of a tab
    /// handed to them, the page that asks for a secret) when not at the
    /// address ochre is bound to: a proxy's public URL, e.g.
    /// https://ochre.example.com. Its host name is allowed on those pages.
    #[arg(long, value_name = "URL", value_parser = live_url)]
    live_url: Option<String>,
}

/// An http(s) URL without a path.
fn live_url(text: &str) -> Result<String, String> {
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"))
        .ok_or("the live URL starts with http:// or https://")?;
    let authority = rest.trim_end_matches('/');
    if authority.is_empty() || authority.contains(['/', '?', '#', '@', ' ']) {
        return Err(
            "the live URL is a scheme and a host[:port], without path, user or query".into()
        );
    }
    Ok(text.trim_end_matches('/').to_owned())
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve MCP (the default when no subcommand is given).
    Serve,
    /// Plugins: list what loads, start a new one, build one (also `ochre plugins ...`).
    #[command(visible_alias = "plugins")]
    Plugin {
        #[command(subcommand)]
        command: PluginCommand,
    },
    /// The tool catalogue: group, tier, name and purpose of every tool this server
    /// would offer with these flags (`docs/tools.md` is `ochre tools --markdown`).
    Tools {
        /// Print JSON.
        #[arg(long, conflicts_with = "markdown")]
        json: bool,
        /// Print the Markdown of docs/tools.md.
        #[arg(long)]
        markdown: bool,
    },
    /// Check this machine: the data dir, the compile cache, the plugins and the
    /// browser (launched once); says what to fix. Exits 1 when something fails.
    Doctor,
    /// Manage TOTP secrets (stored in <data-dir>/secrets.json, mode 0600).
    Totp {
        #[command(subcommand)]
        command: TotpCommand,
    },
    /// Named logins: sessions' storage states saved under a name, sealed with
    /// the login key (`keygen` makes one); list, show (origins and cookie names,
    /// never values) and delete them.
    Login {
        #[command(subcommand)]
        command: LoginCommand,
    },
    /// Manage the secrets replays and plans use as `secret:NAME` (stored in
    /// <data-dir>/secrets.json, mode 0600; or OCHRE_SECRET_<NAME> in the
    /// server's environment).
    Secret {
        #[command(subcommand)]
        command: SecretCommand,
    },
}

#[derive(Subcommand, Debug)]
enum LoginCommand {
    /// Print a new login key (base64 of 32 random bytes) to stdout.
    Keygen,
    /// The saved logins: name, when saved, origins.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Save a login from a storage-state file (Playwright's
    /// `storageState` JSON: `cookies`, and `origins` with their
    /// `localStorage`), sealed with the login key; `-` reads stdin. The file
    /// holds values in clear: delete it once saved.
    Save {
        /// Its name.
        name: String,
        /// The storage-state file (`-`: stdin).
        #[arg(long, value_name = "FILE")]
        from: PathBuf,
    },
    /// What a login holds: its origins and its cookies' domains and names.
    Show {
        /// Its name.
        name: String,
    },
    /// Delete a login.
    Delete {
        /// Its name.
        name: String,
    },
}

#[derive(Subcommand, Debug)]
enum SecretCommand {
    /// Store a secret. Its value is read from stdin unless --value is given.
    Set {
        /// Its name, e.g. admin_password.
        name: String,
        /// The value (visible in the process list: prefer stdin).
        #[arg(long)]
        value: Option<String>,
    },
    /// Remove a secret.
    Remove {
        /// Its name.
        name: String,
    },
    /// List the stored secrets' names (never their values).
    List,
    /// Seal secrets.json with the login key (with a key set, it is sealed at
    /// its next write anyway).
    Seal,
    /// Credentials bound to origins (username, password, TOTP seed), sealed
    /// with the login key; `oc_credential_fill` types them on those origins only.
    Credential {
        #[command(subcommand)]
        command: CredentialCommand,
    },
}

#[derive(Subcommand, Debug)]
enum CredentialCommand {
    /// Store a credential (replacing one of that name). The password is the
    /// first line of stdin; with --totp, the TOTP seed (base32 or an
    /// otpauth:// URI) is the second. Needs the login key.
    Set {
        /// Its name, e.g. github.
        name: String,
        /// An origin it may be typed on (repeat for more): https://app.example.
        #[arg(long = "origin", required = true)]
        origins: Vec<String>,
        /// The username (none: a form that asks for the password alone).
        #[arg(long)]
        username: Option<String>,
        /// Read a TOTP seed from stdin's second line.
        #[arg(long)]
        totp: bool,
    },
    /// List the credentials: name, origins, what they hold (never a value).
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// What one credential holds, never a value.
    Show {
        /// Its name.
        name: String,
    },
    /// Remove a credential.
    Remove {
        /// Its name.
        name: String,
    },
}

#[derive(Subcommand, Debug)]
enum PluginCommand {
    /// List the plugins with their group, status, tools and granted interfaces.
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Create a plugin project (Rust or Python): one example tool (it lists the
    /// current page's headings through the `browser` interface), its unit tests and
    /// a README.
    New {
        /// The plugin's name (its group too): [a-z0-9_-], starting with a letter.
        name: String,
        /// Where to create it (default: ./NAME); must not exist or be empty.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// The ochre-sdk crate to build against: a source tree's sdk/ or an unpacked
        /// package (default: this binary's source tree when present, else crates.io).
        #[arg(long, value_name = "DIR")]
        sdk: Option<PathBuf>,
        /// The plugin's language: rust (cargo) or python (componentize-py).
        #[arg(long, value_enum, default_value = "rust")]
        lang: scaffold::Lang,
    },
    /// Build a plugin project (cargo for Rust, componentize-py for Python) and check
    /// the component as the host will read it (name, group, tools, interfaces).
    Build {
        /// The project (default: the current directory).
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// Copy the component into this plugin dir (for --plugin-dir).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Make a signing key: writes the private key to FILE (mode 0600) and prints
    /// the public key, for `[trust.keys]` in the config of the servers that trust it.
    Keygen {
        /// Where to write the private key (must not exist).
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Sign a component with a private key: writes FILE.sig beside it.
    Sign {
        /// The component (.wasm).
        file: PathBuf,
        /// The private key (from `ochre plugin keygen`).
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
    },
    /// Install a plugin into the data dir and pin it in plugins.lock (name, source,
    /// digest, signer): a component file (signed by FILE.sig) or an OCI artifact
    /// (oci://HOST/REPO:TAG or oci://HOST/REPO@sha256:...). Its signature must
    /// verify against a key in [trust.keys] of --config, unless let through unsigned.
    Install {
        /// FILE.wasm or oci://HOST/REPO:TAG or oci://HOST/REPO@sha256:DIGEST.
        source: String,
        /// Take it without a trusted signature (also `allow_unsigned = true` under
        /// [plugins.NAME] in the config).
        #[arg(long)]
        allow_unsigned: bool,
        /// Reach the registry over plain HTTP (loopback registries always are).
        #[arg(long)]
        plain_http: bool,
    },
    /// Push a component to an OCI registry as a Wasm artifact (oci://HOST/REPO:TAG),
    /// with its signature. Credentials, when the registry asks for them, come from
    /// OCHRE_REGISTRY_USERNAME and OCHRE_REGISTRY_PASSWORD.
    Publish {
        /// The component (.wasm).
        file: PathBuf,
        /// Where: oci://HOST/REPO:TAG.
        target: String,
        /// Sign it now with this private key (else FILE.sig is used when present).
        #[arg(long, value_name = "FILE")]
        key: Option<PathBuf>,
        /// Reach the registry over plain HTTP (loopback registries always are).
        #[arg(long)]
        plain_http: bool,
    },
}

#[derive(Subcommand, Debug)]
enum TotpCommand {
    /// Store the secret of a site.
    Add {
        /// The site, e.g. github.com.
        #[arg(long)]
        domain: String,
        /// Base32 secret or otpauth://totp/... URI. Omit to read it from stdin.
        #[arg(long)]
        secret: Option<String>,
    },
    /// Remove the secret of a site.
    Remove {
        /// The site.
        #[arg(long)]
        domain: String,
    },
    /// List the sites with a stored secret (never the secrets).
    List,
}

#[derive(Args, Debug, Clone)]
struct HostArgs {
    /// Config file (TOML): the `[intent_guard]` section (see the README).
    #[arg(long, value_name = "FILE", global = true)]
    config: Option<PathBuf>,
    /// Data dir: journal, traces, state, secrets, compile cache.
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
    plugin_dir: Vec<PathBuf>,
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
    /// Chromium/Chrome executable (default: chromium, google-chrome, ... on PATH).
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
fn secret_env(vars: impl Iterator<Item = (String, String)>) -> BTreeMap<String, String> {
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
    fn data_dir(&self) -> PathBuf {
        self.data_dir.clone().unwrap_or_else(default_data_dir)
    }

    /// The login key: from `--login-key-file` (a file outside the data dir),
    /// else `OCHRE_LOGIN_KEY`; `None` when neither is given.
    fn login_key(&self) -> anyhow::Result<Option<ochre_host::stores::logins::LoginKey>> {
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

    async fn build(&self) -> anyhow::Result<Host> {
        Ok(self.builder()?.build().await?)
    }

    /// The host these flags describe, not built yet (the flags are checked).
    fn builder(&self) -> anyhow::Result<ochre_host::HostBuilder> {
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
            b = b.plugin_dir(d);
        }
        if let Some(ms) = self.fixed_clock_ms {
            b = b.clock(Clock::Fixed(ms));
        }
        if let Some(id) = &self.session_id {
            b = b.session_id(id);
        }
        Ok(b)
    }

    /// `--deny-interface`, `--grant` and the config's `[plugins.NAME] grants`.
    fn interface_policy(
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
    fn config(&self) -> anyhow::Result<ochre_host::config::Config> {
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
    fn browser_options(&self) -> anyhow::Result<ochre_host::BrowserOptions> {
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

fn main() -> std::process::ExitCode {
    // Started as the managed browser's launcher: become the browser.
    ochre_host::browser::lifeline::exec_browser_if_asked();
    match real_main() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // One clean line (with its causes), never a backtrace.
            eprintln!("error: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}

/// The secrets the host knows (passwords typed, codes, secret parameters):
/// every log line is scrubbed of them, as every answer and file is.
fn known_secrets() -> &'static std::sync::Arc<ochre_host::redact::KnownSecrets> {
    static KNOWN: std::sync::OnceLock<std::sync::Arc<ochre_host::redact::KnownSecrets>> =
        std::sync::OnceLock::new();
    KNOWN.get_or_init(Default::default)
}

/// One log line on its way to stderr: written whole, scrubbed of every known
/// secret (a CDP message logged at trace carries the values it types).
struct ScrubbedLine(Vec<u8>);

impl std::io::Write for ScrubbedLine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for ScrubbedLine {
    fn drop(&mut self) {
        use std::io::Write as _;
        let text = String::from_utf8_lossy(&self.0);
        let _ = std::io::stderr().lock().write_all(known_secrets().scrub(&text).as_bytes());
    }
}

fn real_main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(|| ScrubbedLine(Vec::new()))
        .with_env_filter(log_filter(std::env::var("RUST_LOG").ok().as_deref()))
        .with_ansi(false)
        .init();
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let result = runtime.block_on(run(cli));
    // Everything that must be written is flushed by then (`run` awaits the
    // host's shutdown). A read of stdin still pending in a blocking thread
    // never returns while the client keeps the pipe open: dropping the runtime
    // would wait for it for good (a build that failed, a SIGTERM).
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    result
}

/// The compiled built-in plugins a package installed next to this binary
/// (`/usr/bin/ochre` -> `/usr/lib/ochre/compiled`), if there are any.
fn shipped_compiled_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?.parent()?.join("lib/ochre/compiled");
    dir.is_dir().then_some(dir)
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    use commands::{doctor, login, plugin, secret, serve, tools, totp};
    match cli.command.as_ref().unwrap_or(&Command::Serve) {
        Command::Serve if cli.http.is_none() => serve::serve_stdio(&cli).await,
        Command::Serve => serve::serve_over_http(&cli).await,
        Command::Plugin { command } => plugin::run(&cli, command).await,
        Command::Doctor => doctor::doctor(&cli.host).await,
        Command::Tools { json, markdown } => tools::list_tools(&cli, *json, *markdown).await,
        Command::Totp { command } => totp::totp(&cli, command),
        Command::Secret { command } => secret::secret(&cli, command),
        Command::Login { command } => login::login(&cli, command),
    }
}

/// The log filter: `RUST_LOG`, else warnings. The MCP library logs whole
/// requests (a password typed, a token) at debug, and the CDP library whole
/// messages: they log at info at most unless `RUST_LOG` names them itself.
fn log_filter(env: Option<&str>) -> tracing_subscriber::EnvFilter {
    // chromiumoxide warns of every CDP message its protocol version does not
    // know (new Chromium events): noise, not a problem.
    let mut directives = env.unwrap_or("warn,chromiumoxide::handler=error").to_owned();
    for (target, cap) in [("rmcp", "rmcp=info"), ("chromiumoxide", "chromiumoxide=info")] {
        if !directives.contains(target) {
            directives.push(',');
            directives.push_str(cap);
        }
    }
    tracing_subscriber::EnvFilter::try_new(&directives)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"))
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
