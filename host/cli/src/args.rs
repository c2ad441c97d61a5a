//! The command line's words: every command and flag of `ochre` (its clap
//! definitions and parser, no more), shared by the `ochre` command and the
//! `ochre-server` binary it hands the server's commands to.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

/// ochre: browser automation for AI agents, with tools as sandboxed WebAssembly plugins.
///
/// With no subcommand, serves MCP on stdio (or on HTTP with --http).
#[derive(Parser, Debug)]
#[command(name = "ochre", version, about, long_about = None, after_help = TOOL_HELP)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    #[command(flatten)]
    pub(crate) host: HostArgs,
    /// Serve MCP over Streamable HTTP on this port (POST /mcp, GET /health) instead of stdio.
    #[arg(long, value_name = "PORT")]
    pub(crate) http: Option<u16>,
    /// Address to bind with --http. Non-loopback addresses require --auth-token.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub(crate) http_host: IpAddr,
    /// Bearer token required on /mcp with --http.
    #[arg(long, env = "OCHRE_AUTH_TOKEN", hide_env_values = true)]
    pub(crate) auth_token: Option<String>,
    /// Extra browser Origin allowed with --http (repeatable), e.g. https://app.example.com.
    #[arg(long, value_name = "ORIGIN")]
    pub(crate) allow_origin: Vec<String>,
    /// Extra Host header value allowed with --http (repeatable), e.g. ochre.internal.
    #[arg(long, value_name = "HOST")]
    pub(crate) allow_host: Vec<String>,
    /// With --http, every session sees and drives every tab, in the browser's
    /// default context (a --user-data-dir profile's logins included). Default:
    /// each session has tabs of its own, in a browser context of its own.
    #[arg(long)]
    pub(crate) share_tabs: bool,
    /// With --http, the most MCP sessions served at once: the next is refused at
    /// `initialize` with HTTP 503 and Retry-After until one ends (closed, or idle
    /// past its keep-alive). Also `[server] max_sessions` in the config file.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_sessions: Option<u32>,
    /// With --http, keep each session's handshake in <data-dir>/sessions, so
    /// that another ochre sharing the data dir (a replica behind a load
    /// balancer, after this one died) or this one after a restart resumes the
    /// session under the same Mcp-Session-Id: its task runs, output handles and
    /// journal are there; its tabs are not. Also `[server] resume_sessions`.
    #[arg(long)]
    pub(crate) resume_sessions: bool,
    /// With --http, where people reach ochre's pages (the live view of a tab
    /// handed to them, the page that asks for a secret) when not at the
    /// address ochre is bound to: a proxy's public URL, e.g.
    /// https://ochre.example.com. Its host name is allowed on those pages.
    #[arg(long, value_name = "URL", value_parser = live_url)]
    pub(crate) live_url: Option<String>,
    /// The command line's session (its own daemon, browser, tabs and cookies):
    /// default, one per working directory.
    #[arg(long, env = "OCHRE_SESSION", global = true, value_name = "NAME")]
    pub(crate) session: Option<String>,
    /// Print the answer as JSON (the tool's structured content; an error as
    /// {"error": {"code", "message"}}).
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// An action that succeeded prints nothing: exit code 0 says it was done
    /// and its effect checked (open, click, fill, select, check, type, press,
    /// wait, ...). Readings (snapshot, get, find, eval, tabs) and errors print
    /// as always.
    #[arg(short = 'q', long, global = true)]
    pub(crate) quiet: bool,
    /// The tab a page command works on (t1, t2, ...: `ochre tabs`); default: the current one.
    #[arg(long, global = true, value_name = "ID")]
    pub(crate) tab: Option<String>,
    /// A session's daemon ends after this long without a command (set when
    /// it starts: by the session's first command).
    #[arg(long, global = true, value_name = "DURATION", default_value = "30m", value_parser = humantime::parse_duration)]
    pub(crate) session_idle: Duration,
    /// Serve as the daemon of this command-line session (started by the
    /// session's first command).
    #[arg(long, hide = true, value_name = "NAME")]
    pub(crate) session_daemon: Option<String>,
}

/// The top level's word on the tools as commands (clap lists no external
/// subcommand).
pub(crate) const TOOL_HELP: &str = "Tools as commands:
  TOOL       Every tool of `ochre tools` is a command too (`read-page` for
             read_page; a plugin's `oc_` may be left out), its flags read
             from the tool's schema: `ochre TOOL --help`";

/// An http(s) URL without a path.
pub(crate) fn live_url(text: &str) -> Result<String, String> {
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
pub(crate) enum Command {
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
    #[command(flatten)]
    Browse(crate::commands::browse::Browse),
    /// Run commands from a file or stdin, one per line as typed after `ochre`
    /// (`#` comments), on one session: every line is checked first, then each
    /// is answered in turn; the first that fails stops the rest.
    Batch {
        /// The file (default, and `-`: stdin).
        file: Option<PathBuf>,
        /// Go on after a failure (the exit code is the first failure's).
        #[arg(long)]
        keep_going: bool,
    },
    /// The command line's sessions: their daemons listed or stopped.
    Session {
        #[command(subcommand)]
        command: SessionCommand,
    },
    /// The guide for coding agents (a SKILL.md: the loop, the commands,
    /// the error codes); `guide install` writes it where agents read skills.
    Guide {
        #[command(subcommand)]
        command: Option<GuideCommand>,
    },
    /// Manage the secrets replays and plans use as `secret:NAME` (stored in
    /// <data-dir>/secrets.json, mode 0600; or OCHRE_SECRET_<NAME> in the
    /// server's environment).
    Secret {
        #[command(subcommand)]
        command: SecretCommand,
    },
    /// Any other word names a tool of the session's server (`ochre tools`
    /// lists them; `-` for `_`, and a plugin tool's `oc_` may be left out),
    /// its flags read from the tool's schema: `ochre TOOL --help`.
    #[command(external_subcommand)]
    Tool(Vec<String>),
}

/// The names of the command line's own commands (for a mistyped word's hint).
pub(crate) fn command_names() -> Vec<String> {
    use clap::CommandFactory as _;
    Cli::command()
        .get_subcommands()
        .flat_map(|c| std::iter::once(c.get_name()).chain(c.get_all_aliases()))
        .map(str::to_owned)
        .collect()
}

#[derive(Subcommand, Debug)]
pub(crate) enum SessionCommand {
    /// The sessions: name, running or gone, pid, since when, working dir.
    List,
    /// Stop a session's daemon and its browser (default: this directory's
    /// session, or --session's); its journal and recordings are kept.
    Stop {
        /// The session (default: --session, else this directory's).
        name: Option<String>,
        /// Every session.
        #[arg(long, conflicts_with = "name")]
        all: bool,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum GuideCommand {
    /// Write the guide as a skill (DIR/ochre/SKILL.md; default
    /// .claude/skills, where Claude Code reads a project's skills) and its
    /// short form into AGENTS.md (Codex, Cursor, Gemini CLI and others read it).
    Install {
        /// The skills dir.
        #[arg(long, value_name = "DIR", default_value = ".claude/skills")]
        dir: PathBuf,
        /// Leave AGENTS.md alone.
        #[arg(long)]
        no_agents_md: bool,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum LoginCommand {
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
pub(crate) enum SecretCommand {
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
pub(crate) enum CredentialCommand {
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
pub(crate) enum PluginCommand {
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
        lang: Lang,
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
pub(crate) enum TotpCommand {
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
pub(crate) struct HostArgs {
    /// Config file (TOML): `[server]`, `[browser] endpoints`, `[network]`,
    /// `[trust.keys]`, `[plugins.NAME]` and `[intent_guard]`; an unknown key is
    /// an error naming it (see the README's flags).
    #[arg(long, value_name = "FILE", global = true)]
    pub(crate) config: Option<PathBuf>,
    /// Data dir: journal, traces, recordings, task runs, output handles, logins,
    /// secrets, installed plugins (default: ~/.ochre).
    #[arg(long, env = "OCHRE_HOME", global = true)]
    pub(crate) data_dir: Option<PathBuf>,
    /// A file holding the key named logins are sealed with (outside the data
    /// dir; `ochre login keygen` makes one). Else `OCHRE_LOGIN_KEY`.
    #[arg(long, value_name = "FILE", global = true)]
    pub(crate) login_key_file: Option<PathBuf>,
    /// Every session starts signed in with this saved login (its own copy;
    /// `oc_login_load` in a session wins). Needs the login key.
    #[arg(long, value_name = "NAME", global = true)]
    pub(crate) login: Option<String>,
    /// Where compiled plugins are cached, shared by every data dir (default:
    /// $XDG_CACHE_HOME/ochre, else ~/.cache/ochre).
    #[arg(long, value_name = "DIR", env = "OCHRE_CACHE_DIR", global = true)]
    pub(crate) cache_dir: Option<PathBuf>,
    /// Load every *.wasm plugin in this directory (repeatable).
    #[arg(long, value_name = "DIR", global = true)]
    pub(crate) plugin_dir: Vec<PathBuf>,
    /// Enable only these tool groups (comma-separated), e.g. core,totp.
    #[arg(long, value_name = "GROUPS", global = true, conflicts_with = "disable_tools")]
    pub(crate) tools_only: Vec<String>,
    /// Disable these tool groups (comma-separated).
    #[arg(long, value_name = "GROUPS", global = true)]
    pub(crate) disable_tools: Vec<String>,
    /// The smallest surface: core tier-1 tools only (not with --tools-only / --disable-tools).
    #[arg(long, global = true)]
    pub(crate) slim: bool,
    /// The response budget: no tool result exceeds this many tokens (UTF-8 bytes / 4);
    /// a larger one answers a first view plus an output handle. 0: no budget.
    #[arg(long, value_name = "TOKENS", default_value_t = 25_000, global = true)]
    pub(crate) max_response_tokens: usize,
    /// How long output handles live, in hours (0: they expire at once).
    #[arg(long, value_name = "HOURS", default_value_t = 24.0, global = true)]
    pub(crate) output_handle_ttl_hours: f64,
    /// How often expired output handles are deleted, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 300, global = true)]
    pub(crate) output_handle_sweep_interval_seconds: u64,
    /// Days to keep stopped recordings (0: forever).
    #[arg(long, value_name = "DAYS", default_value_t = 30, global = true)]
    pub(crate) recording_retention_days: u64,
    /// Deny a host interface to every plugin (comma-separated), e.g. secrets.
    #[arg(long, value_name = "IFACES", global = true)]
    pub(crate) deny_interface: Vec<String>,
    /// Grant a sensitive interface to a third-party plugin: PLUGIN=IFACE[,IFACE] (repeatable).
    #[arg(long, value_name = "PLUGIN=IFACES", global = true)]
    pub(crate) grant: Vec<String>,
    /// Deadline of one plugin call, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 30_000, global = true)]
    pub(crate) plugin_timeout_ms: u64,
    /// Longest wall-clock time of one plugin call, in seconds (long crawls included).
    #[arg(long, value_name = "SECS", default_value_t = 1800, global = true)]
    pub(crate) plugin_max_wall_seconds: u64,
    /// Memory cap of one plugin instance, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 64, global = true)]
    pub(crate) plugin_memory_mb: usize,
    /// Chromium/Chrome executable (default on PATH: Chromium's headless shell
    /// when headless, else chromium, google-chrome, ...).
    #[arg(long, value_name = "PATH", global = true)]
    pub(crate) chrome_path: Option<PathBuf>,
    /// Attach to a running browser (http://host:port or ws://...), or to a
    /// Selenium Grid 4 (selenium+http://host:4444), instead of launching one;
    /// give it several times for a pool (also `[browser] endpoints` in --config,
    /// where `max_sessions` caps an endpoint's sessions).
    #[arg(long, value_name = "URL", global = true)]
    pub(crate) cdp_endpoint: Vec<String>,
    /// Show the browser window (managed mode).
    #[arg(long, global = true)]
    pub(crate) headed: bool,
    /// Run the browser without a window (the default; accepted for symmetry with other servers).
    #[arg(long, global = true, conflicts_with = "headed")]
    pub(crate) headless: bool,
    /// Persistent browser profile dir (default: a fresh temporary profile per server).
    #[arg(long, value_name = "DIR", global = true)]
    pub(crate) user_data_dir: Option<PathBuf>,
    /// A dir whose files `file_upload` may give to pages (repeatable; the cwd is always allowed).
    #[arg(long, value_name = "DIR", global = true)]
    pub(crate) allow_file_root: Vec<PathBuf>,
    /// What happens to a JavaScript dialog (alert, confirm, prompt, beforeunload):
    /// `ask` keeps it open and reports it until handle_dialog answers it; `accept`
    /// or `dismiss` answer it at once.
    #[arg(long, value_name = "POLICY", default_value = "ask", global = true, value_parser = ["ask", "accept", "dismiss"])]
    pub(crate) dialogs: String,
    /// Where files that pages download are saved (default: <data-dir>/downloads).
    #[arg(long, value_name = "DIR", global = true)]
    pub(crate) downloads_dir: Option<PathBuf>,
    /// Police the network: every browser context reaches the web through a
    /// proxy of its own, so that sessions can set rules and an upstream proxy
    /// (`network_policy`). Implied by --network-allow, --network-block and a
    /// config's `[network]`.
    #[arg(long, global = true)]
    pub(crate) network_policy: bool,
    /// Only these origins, hosts or addresses are reached by any page (repeat; e.g.
    /// https://app.example, app.example:8080, *.example.com, 10.0.0.0/8).
    #[arg(long, value_name = "RULE", global = true)]
    pub(crate) network_allow: Vec<String>,
    /// These origins, hosts or addresses (127.0.0.1:8080, 169.254.0.0/16) are never reached by any page (repeat).
    #[arg(long, value_name = "RULE", global = true)]
    pub(crate) network_block: Vec<String>,
    /// Never reach an address inside this machine or its networks (loopback,
    /// private, link-local and cloud metadata ranges, by the address a name
    /// resolves to) unless an allow rule names it: for servers that browse
    /// the open web.
    #[arg(long, global = true)]
    pub(crate) network_block_private: bool,
    /// Answer this host name with this address instead of asking DNS, as
    /// curl's --resolve (repeat; e.g. staging.example=10.0.0.5): pages reach
    /// it there and the rules judge that address. Polices the network.
    #[arg(long, value_name = "NAME=ADDRESS", global = true)]
    pub(crate) network_resolve: Vec<String>,
    /// Send every tool call as an OpenTelemetry span to this collector (OTLP
    /// over HTTP, protobuf; e.g. http://localhost:4318): one trace per task run
    /// or top-level call. Also read: the standard OTEL_EXPORTER_OTLP_*,
    /// OTEL_SERVICE_NAME and OTEL_BSP_* variables (docs/deploy.md).
    #[arg(long, value_name = "URL", global = true)]
    pub(crate) otlp_endpoint: Option<String>,
    /// Fix the clock at this Unix time in ms (tests).
    #[arg(long, env = "OCHRE_FIXED_CLOCK_MS", hide = true, global = true)]
    pub(crate) fixed_clock_ms: Option<u64>,
    /// Fix the session id (tests).
    #[arg(long, env = "OCHRE_SESSION_ID", hide = true, global = true)]
    pub(crate) session_id: Option<String>,
}

/// `println!` for output nobody may read to its end (`ochre guide | head`):
/// a write that fails is remembered, not a panic; the command then ends
/// quietly with exit 141 when its reader had gone, else says why (see
/// `commands::client::exit_code`).
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($t)*) {
            $crate::args::stdout_failed(e);
        }
    }};
}
pub(crate) use say;

/// `print!` as [`say!`].
macro_rules! say_raw {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = write!(std::io::stdout(), $($t)*) {
            $crate::args::stdout_failed(e);
        }
    }};
}
pub(crate) use say_raw;

/// The first write to stdout that failed.
static STDOUT_FAILED: std::sync::OnceLock<std::io::Error> = std::sync::OnceLock::new();

/// A write to stdout failed: its reader went away, or the file it goes to
/// could not take it (a full disk).
pub(crate) fn stdout_failed(e: std::io::Error) {
    let _ = STDOUT_FAILED.set(e);
}

/// The first write to stdout that failed, if one did.
pub(crate) fn stdout_error() -> Option<&'static std::io::Error> {
    STDOUT_FAILED.get()
}

/// Errors that are a message and a class (their exit code, in `main`).
macro_rules! message_errors {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Debug)]
        pub(crate) struct $name(pub(crate) String);

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::error::Error for $name {}
    )*};
}
pub(crate) use message_errors;

message_errors! {
    /// A command's arguments are wrong (exit 2).
    UsageError;
    /// The session's server refused the command (exit 5).
    ServerRefused;
    /// A check that ran and failed (`ochre doctor` found a problem): the
    /// process exits 1, where a command that could not run exits 2.
    CheckFailed;
}

/// A line of `ochre batch`: a browsing command, or a tool's words (its name,
/// then its flags; checked against the tool's schema once the session's
/// tools are known).
pub(crate) enum BatchLine {
    Browse(crate::commands::browse::Browse),
    Tool(Vec<String>),
}

/// One line of `ochre batch`, read as the command line reads its arguments.
pub(crate) fn parse_batch_line(words: &[String]) -> Result<BatchLine, String> {
    use clap::FromArgMatches as _;
    let argv: Vec<String> =
        std::iter::once("ochre".to_owned()).chain(words.iter().cloned()).collect();
    let matches = cli_command(&argv).try_get_matches_from(&argv).map_err(|e| {
        let text = e.render().to_string();
        text.lines().next().unwrap_or("not a command").trim_start_matches("error: ").to_owned()
    })?;
    match Cli::from_arg_matches(&matches).map_err(|e| e.to_string())?.command {
        Some(Command::Browse(b)) => Ok(BatchLine::Browse(b)),
        Some(Command::Tool(words)) => Ok(BatchLine::Tool(words)),
        _ => Err(format!("{:?} is not a browsing command", words.first().map_or("", |w| w))),
    }
}

/// The server's flags each subcommand's `--help` shows (they are accepted by
/// every subcommand; the others are hidden from its help): `None`, all of
/// them (the server, and the doctor that checks a server so configured).
pub(crate) fn flags_shown(subcommand: &str) -> Option<&'static [&'static str]> {
    Some(match subcommand {
        "serve" | "doctor" => return None,
        "tools" => &[
            "data_dir",
            "config",
            "cache_dir",
            "plugin_dir",
            "tools_only",
            "disable_tools",
            "slim",
        ],
        "plugin" => &["data_dir", "config", "cache_dir", "plugin_dir"],
        "login" | "secret" | "totp" => &["data_dir", "login_key_file"],
        "session" => &["json", "session"],
        "guide" => &[],
        "batch" | "open" | "back" | "forward" | "reload" | "snapshot" | "find" | "click"
        | "hover" | "fill" | "select" | "check" | "uncheck" | "type" | "press" | "get" | "eval"
        | "wait" | "screenshot" | "tabs" | "tab" | "sign-in" | "record" | "replay" | "call" => &[
            "session",
            "json",
            "quiet",
            "tab",
            "session_idle",
            "headed",
            "data_dir",
            "config",
            "login",
        ],
        _ => &["data_dir", "config"],
    })
}

/// The command line's parser for `words` (the arguments), each subcommand's
/// help listing its own flags and the server's that bear on it only
/// ([`flags_shown`]). The server's flags are global (taken after any
/// subcommand too), but only the subcommands the words name get copies of
/// them: clap copies each global flag into every subcommand when it builds the
/// parser (37 flags into 45 subcommands, a third of a command's start), and a
/// subcommand no word names is never parsed.
pub(crate) fn cli_command<S: AsRef<std::ffi::OsStr>>(words: &[S]) -> clap::Command {
    use clap::CommandFactory as _;
    let named = |name: &str| words.iter().any(|w| w.as_ref() == name);
    let mut cmd = Cli::command();
    let globals: Vec<clap::Arg> =
        cmd.get_arguments().filter(|a| a.is_global_set()).cloned().collect();
    // (In one pass: `mut_arg` a flag at a time moved every later flag in
    // memory, a third of a command's start.)
    cmd = cmd.mut_args(|a| a.global(false));
    // A named subcommand gets the copies (still global: they reach its own
    // subcommands, and clap hands their values up to the server's flags),
    // those its help leaves out hidden.
    fn scope(cmd: clap::Command, globals: &[clap::Arg], shown: Option<&[&str]>) -> clap::Command {
        if cmd.get_name() == "help" {
            return cmd;
        }
        let mut cmd = match shown {
            Some(_) => cmd.after_help(
                "Every flag of `ochre --help` is taken here too; those that bear on this command are listed above.",
            ),
            None => cmd,
        };
        for a in globals {
            // (A command's own flag of that name wins: `tools --json`.)
            let own = cmd.get_arguments().any(|o| o.get_id() == a.get_id());
            if !own {
                let hidden = shown.is_some_and(|s| !s.contains(&a.get_id().as_str()));
                cmd = cmd.arg(a.clone().hide(hidden || a.is_hide_set()));
            }
        }
        cmd.mut_subcommands(|sub| scope(sub, globals, shown))
    }
    cmd.mut_subcommands(|sub| {
        if named(sub.get_name()) || sub.get_all_aliases().any(named) {
            let shown = flags_shown(sub.get_name());
            scope(sub, &globals, shown)
        } else {
            sub
        }
    })
}

/// The parsed command line (clap's errors and help exit here, as `Cli::parse`).
pub(crate) fn parse_cli() -> Cli {
    use clap::FromArgMatches as _;
    let words: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let matches = cli_command(&words).get_matches_from(words);
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// A plugin's language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Lang {
    /// Rust, with the ochre-sdk crate (cargo, wasm32-wasip2).
    Rust,
    /// Python, with the ochre_sdk module (componentize-py).
    Python,
}
