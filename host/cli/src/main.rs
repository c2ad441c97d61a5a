//! `ochre`: the MCP server, and a few commands to manage it.

mod commands;
mod host_args;
mod install;
mod oci;
mod scaffold;

use host_args::*;

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
#[command(name = "ochre", version, about, long_about = None, after_help = TOOL_HELP)]
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
    /// The command line's session (its own daemon, browser, tabs and cookies):
    /// default, one per working directory.
    #[arg(long, env = "OCHRE_SESSION", global = true, value_name = "NAME")]
    session: Option<String>,
    /// Print the answer as JSON (the tool's structured content; an error as
    /// {"error": {"code", "message"}}).
    #[arg(long, global = true)]
    json: bool,
    /// An action that succeeded prints nothing: exit code 0 says it was done
    /// and its effect checked (open, click, fill, select, check, type, press,
    /// wait, ...). Readings (snapshot, get, find, eval, tabs) and errors print
    /// as always.
    #[arg(short = 'q', long, global = true)]
    quiet: bool,
    /// The tab a page command works on (t1, t2, ...: `ochre tabs`); default: the current one.
    #[arg(long, global = true, value_name = "ID")]
    tab: Option<String>,
    /// A session's daemon ends after this long without a command (set when
    /// it starts: by the session's first command).
    #[arg(long, global = true, value_name = "DURATION", default_value = "30m", value_parser = humantime::parse_duration)]
    session_idle: Duration,
    /// Serve as the daemon of this command-line session (started by the
    /// session's first command).
    #[arg(long, hide = true, value_name = "NAME")]
    session_daemon: Option<String>,
}

/// The top level's word on the tools as commands (clap lists no external
/// subcommand).
const TOOL_HELP: &str = "Tools as commands:
  TOOL       Every tool of `ochre tools` is a command too (`read-page` for
             read_page; a plugin's `oc_` may be left out), its flags read
             from the tool's schema: `ochre TOOL --help`";

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
    #[command(flatten)]
    Browse(commands::browse::Browse),
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
enum SessionCommand {
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
enum GuideCommand {
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

fn main() -> std::process::ExitCode {
    // Started as the managed browser's launcher: become the browser.
    ochre_host::browser::lifeline::exec_browser_if_asked();
    use commands::browse::{ToolFailed, exit};
    match real_main() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // Printed already, as the tool answered.
        Err(e) if e.is::<ToolFailed>() => std::process::ExitCode::from(
            e.downcast_ref::<ToolFailed>().map_or(exit::FAILED, |t| t.code),
        ),
        Err(e) => {
            // One clean line (with its causes), never a backtrace.
            eprintln!("error: {e:#}");
            // A check that ran and found a problem (`ochre doctor`): 1, as
            // its help says; the command line's classes (docs/cli.md); 2 for
            // a command that could not run.
            std::process::ExitCode::from(if e.is::<CheckFailed>() {
                1
            } else if e.is::<commands::session::DaemonLost>() {
                exit::DAEMON
            } else if e.is::<ServerRefused>() {
                exit::SERVER
            } else {
                exit::USAGE
            })
        }
    }
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
}

/// A line of `ochre batch`: a browsing command, or a tool's words (its name,
/// then its flags; checked against the tool's schema once the session's
/// tools are known).
pub(crate) enum BatchLine {
    Browse(commands::browse::Browse),
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

/// A check that ran and failed (`ochre doctor` found a problem): the process
/// exits 1, where a command that could not run exits 2.
#[derive(Debug)]
pub(crate) struct CheckFailed(pub(crate) &'static str);

impl std::fmt::Display for CheckFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for CheckFailed {}

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
    let cli = parse_cli();
    let asked = std::env::var("RUST_LOG").ok();
    let log = || {
        tracing_subscriber::fmt()
            .with_writer(|| ScrubbedLine(Vec::new()))
            .with_env_filter(log_filter(asked.as_deref()))
            .with_ansi(false)
            .init()
    };
    // The command line's client commands need no runtime, and log nothing
    // of their own unless asked: a command is a few lines on a local socket.
    if asked.is_some() {
        log();
    }
    if cli.session_daemon.is_none()
        && let Some(done) = commands::run_client(&cli)
    {
        return done;
    }
    if asked.is_none() {
        log();
    }
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

/// The server's flags each subcommand's `--help` shows (they are accepted by
/// every subcommand; the others are hidden from its help): `None`, all of
/// them (the server, and the doctor that checks a server so configured).
fn flags_shown(subcommand: &str) -> Option<&'static [&'static str]> {
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
fn cli_command<S: AsRef<std::ffi::OsStr>>(words: &[S]) -> clap::Command {
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
fn parse_cli() -> Cli {
    use clap::FromArgMatches as _;
    let words: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let matches = cli_command(&words).get_matches_from(words);
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// The compiled built-in plugins a package installed next to this binary
/// (`/usr/bin/ochre` -> `/usr/lib/ochre/compiled`), if there are any.
fn shipped_compiled_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?.parent()?.join("lib/ochre/compiled");
    dir.is_dir().then_some(dir)
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    use commands::{doctor, login, plugin, secret, serve, session, tools, totp};
    if let Some(name) = &cli.session_daemon {
        return session::serve_daemon(&cli, name).await;
    }
    match cli.command.as_ref().unwrap_or(&Command::Serve) {
        Command::Serve if cli.http.is_none() => serve::serve_stdio(&cli).await,
        Command::Serve => serve::serve_over_http(&cli).await,
        Command::Plugin { command } => plugin::run(&cli, command).await,
        Command::Doctor => doctor::doctor(&cli.host).await,
        Command::Tools { json, markdown } => tools::list_tools(&cli, *json, *markdown).await,
        Command::Totp { command } => totp::totp(&cli, command),
        Command::Secret { command } => secret::secret(&cli, command),
        Command::Login { command } => login::login(&cli, command),
        Command::Browse(_)
        | Command::Batch { .. }
        | Command::Session { .. }
        | Command::Guide { .. }
        | Command::Tool(_) => {
            anyhow::bail!(
                "the command line's commands run without the server (commands::run_client)"
            )
        }
    }
}

/// The log filter: `RUST_LOG`, else warnings. The MCP library logs whole
/// requests (a password typed, a token) at debug, and the CDP library whole
/// messages: they log at info at most unless `RUST_LOG` names them itself.
fn log_filter(env: Option<&str>) -> tracing_subscriber::EnvFilter {
    // chromiumoxide warns of every CDP message its protocol version does not
    // know (new Chromium events): noise, not a problem.
    // (rmcp's info lines, four a connection, would fill a command-line
    // session's log; an empty RUST_LOG is no RUST_LOG.)
    let env = env.filter(|e| !e.trim().is_empty());
    let mut directives = env.unwrap_or("warn,chromiumoxide::handler=error,rmcp=warn").to_owned();
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
