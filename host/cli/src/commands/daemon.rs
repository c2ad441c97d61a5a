//! A command-line session's daemon: the host, serving MCP on the session's
//! socket to the commands of `ochre` (see [`super::session`] for their side).

use std::os::unix::fs::PermissionsExt as _;
use std::time::Duration;

use anyhow::Context as _;
use serde_json::json;

use super::session::{Paths, check_name};
use crate::Cli;

/// The daemon of session `name`: serves MCP on the session's socket, its
/// tool calls one at a time in the order they came (commands on one session
/// queue; a client that keeps its connection open holds no one up), until
/// no connection has been open for `--session-idle`, stopped, or SIGTERM.
pub(crate) async fn serve_daemon(cli: &Cli, name: &str) -> anyhow::Result<()> {
    check_name(name)?;
    let paths = Paths::of(name)?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&paths.lock)
        .with_context(|| paths.lock.display().to_string())?;
    if lock.try_lock().is_err() {
        // Another daemon of this name runs (or is starting): it serves.
        return Ok(());
    }
    let exe = std::env::current_exe().ok();
    let info = json!({
        "name": name,
        "pid": std::process::id(),
        "started": humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        "cwd": std::env::current_dir().ok(),
        "data_dir": cli.host.data_dir(),
        "idle_timeout_s": cli.session_idle.as_secs(),
        "version": env!("CARGO_PKG_VERSION"),
        // The binary serving, as it was at the start: a command tells a
        // daemon whose binary was replaced since (see `session::replaced`).
        "server": exe,
        "server_modified_ns": exe.as_deref().and_then(super::session::modified_ns),
    });
    ochre_host::stores::write_atomic(&paths.info, &serde_json::to_vec_pretty(&info)?)?;
    // The host first: a daemon that cannot start exits saying why (the
    // command that started it shows its log), never takes a command it
    // could not serve.
    let host = cli.host.build().await?;
    let server = ochre_mcp::server::McpServer::new(host.clone())
        .in_session(&format!("cli-{name}"))
        .with_hints(ochre_host::Hints::Commands)
        .one_call_at_a_time();
    let served = async {
        let _ = std::fs::remove_file(&paths.socket);
        let listener = tokio::net::UnixListener::bind(&paths.socket)
            .with_context(|| format!("listening on {}", paths.socket.display()))?;
        std::fs::set_permissions(&paths.socket, std::fs::Permissions::from_mode(0o600))?;
        accept_loop(listener, server, cli.session_idle).await
    };
    let result = tokio::select! {
        r = served => r,
        _ = super::serve::terminated() => Ok(()),
    };
    host.shutdown().await;
    let _ = std::fs::remove_file(&paths.socket);
    let _ = std::fs::remove_file(&paths.info);
    drop(lock);
    result
}

async fn accept_loop(
    listener: tokio::net::UnixListener,
    server: ochre_mcp::server::McpServer,
    idle: Duration,
) -> anyhow::Result<()> {
    let (ended, mut ends) = tokio::sync::mpsc::unbounded_channel::<()>();
    let mut active = 0usize;
    let mut last = tokio::time::Instant::now();
    loop {
        tokio::select! {
            conn = listener.accept() => match conn {
                Ok((stream, _)) => {
                    active += 1;
                    last = tokio::time::Instant::now();
                    let (server, ended) = (server.clone(), ended.clone());
                    tokio::spawn(async move {
                        let (r, w) = stream.into_split();
                        if let Err(e) = server.serve_lines(r, w).await {
                            tracing::debug!(error = %e, "a command's connection ended");
                        }
                        let _ = ended.send(());
                    });
                }
                Err(e) => tracing::warn!(error = %e, "accepting a connection"),
            },
            Some(()) = ends.recv() => {
                active = active.saturating_sub(1);
                last = tokio::time::Instant::now();
            }
            () = tokio::time::sleep_until(last + idle), if active == 0 => {
                tracing::info!(idle_s = idle.as_secs(), "session idle: the daemon ends");
                return Ok(());
            }
        }
    }
}
