//! `ochre-server`: the MCP server, a session's daemon, and every command of
//! `ochre` (which becomes this binary for all but its browsing commands).

mod args;
mod commands;
mod host_args;
mod install;
mod oci;
mod scaffold;

use args::*;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use ochre_host::{CapabilityFilter, Clock, Host, InterfacePolicy, PluginLimits};

fn main() -> std::process::ExitCode {
    // Started as the managed browser's launcher: become the browser.
    ochre_host::browser::lifeline::exec_browser_if_asked();
    commands::client::exit_code(real_main())
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
    if let Some(done) = commands::client::run_client(&cli) {
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

/// The binary that serves: this one (`ochre` hands the server's commands
/// and a session's daemon to it).
pub(crate) fn server_exe() -> anyhow::Result<PathBuf> {
    std::env::current_exe().context("finding the ochre-server binary")
}

/// What a user runs and registers: the `ochre` command installed beside this
/// server, else this binary itself.
pub(crate) fn command_exe() -> anyhow::Result<PathBuf> {
    let exe = server_exe()?;
    let command = exe.with_file_name("ochre");
    Ok(if command.is_file() { command } else { exe })
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
    if let Some(name) = &cli.session_daemon {
        return commands::daemon::serve_daemon(&cli, name).await;
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
        Command::Guide { command: None } => {
            crate::say_raw!("{}", commands::guide::GUIDE);
            Ok(())
        }
        Command::Guide { command: Some(GuideCommand::Install { dir, no_agents_md }) } => {
            commands::guide::install(dir, !no_agents_md)
        }
        Command::Browse(_) | Command::Batch { .. } | Command::Session { .. } | Command::Tool(_) => {
            anyhow::bail!(
                "the command line's commands run without the server (commands::client::run_client)"
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
