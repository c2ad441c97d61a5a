//! Serving MCP: on stdio (the default) or over HTTP (`--http`).

use ochre_mcp::server::{HttpOptions, McpServer, bind_http};

use crate::Cli;

/// Serve MCP on stdio: `initialize` is answered at once and the host is built
/// meanwhile (on a new machine that compiles the plugins). Flags, a config or a
/// key that make no host are told to the client: `initialize` is refused with
/// the reason, and so is every call when the build fails later; the server
/// exits with the reason when the client goes (never silently before).
pub(crate) async fn serve_stdio(cli: &Cli) -> anyhow::Result<()> {
    let interactive = std::io::IsTerminal::is_terminal(&std::io::stdin());
    let builder = match cli.host.builder() {
        Ok(b) => b,
        // A person at a terminal reads the reason at once.
        Err(e) if interactive => return Err(e),
        Err(e) => return serve_refusal(e).await,
    };
    let (server, failed) = McpServer::starting(builder.build());
    if interactive {
        eprintln!("{}", terminal_help());
    }
    // SIGTERM and ctrl-c end the session cleanly (journal flushed, trace closed).
    let result = tokio::select! {
        r = server.clone().serve_stdio() => r.map_err(anyhow::Error::from),
        _ = terminated() => Ok(()),
    };
    if let Some(host) = futures::FutureExt::now_or_never(server.host()).flatten() {
        host.shutdown().await;
    }
    // A build that failed is the reason the session ended badly.
    match futures::FutureExt::now_or_never(failed) {
        Some(why) => Err(anyhow::anyhow!("{why}")),
        None => result,
    }
}

/// A server that could not start: `initialize` is refused with `why` (so a
/// client shows the reason, not a closed connection), then it exits with it.
async fn serve_refusal(why: anyhow::Error) -> anyhow::Result<()> {
    let server = McpServer::failed(format!("{why:#}"));
    tokio::select! {
        _ = server.serve_stdio() => {}
        _ = terminated() => {}
    }
    Err(why)
}

/// The server's session cap and, when it is not `--max-sessions N`, where it
/// comes from: `--max-sessions`, else `[server] max_sessions`, else (sessions
/// apart, every endpoint of a pool capped) the sum of the pool endpoints'
/// `max_sessions`, so that a session past the pool's capacity is refused at
/// `initialize` instead of failing at its first tab.
fn session_cap(cli: &Cli) -> anyhow::Result<Option<(usize, Option<String>)>> {
    if let Some(n) = cli.max_sessions {
        return Ok(Some((n as usize, None)));
    }
    if let Some(n) = cli.host.config()?.max_sessions {
        return Ok(Some((n, Some(format!("[server] max_sessions = {n}")))));
    }
    let endpoints = cli.host.browser_options()?.endpoints;
    let caps: Option<Vec<usize>> = endpoints.iter().map(|e| e.max_sessions).collect();
    Ok(match caps {
        Some(caps) if !caps.is_empty() && !cli.share_tabs => {
            let n = caps.iter().sum();
            Some((
                n,
                Some(format!(
                    "the browser pool's capacity: {n}, the sum of its endpoints' max_sessions"
                )),
            ))
        }
        _ => None,
    })
}

/// Serve MCP over HTTP, once the host is built.
pub(crate) async fn serve_over_http(cli: &Cli) -> anyhow::Result<()> {
    let port = cli.http.unwrap_or_default();
    let max_sessions = session_cap(cli)?;
    let host = cli.host.build().await?;
    let options = HttpOptions {
        host: cli.http_host,
        port,
        auth_token: cli.auth_token.clone(),
        allowed_origins: cli.allow_origin.clone(),
        allowed_hosts: cli.allow_host.clone(),
        share_tabs: cli.share_tabs,
        max_sessions: max_sessions.as_ref().map(|(n, _)| *n),
        max_sessions_from: max_sessions.and_then(|(_, from)| from),
        resume_sessions: cli.resume_sessions || cli.host.config()?.resume_sessions,
        live_url: cli.live_url.clone(),
    };
    let server = match bind_http(host.clone(), options).await {
        Ok(server) => server,
        Err(e) => {
            host.shutdown().await;
            return Err(e.into());
        }
    };
    eprintln!("ochre: listening on http://{}/mcp", server.local_addr());
    // SIGTERM and ctrl-c end the session cleanly (journal flushed, trace closed).
    // (Dropped, not drained: a client's open event stream must not hold the exit.)
    let result = tokio::select! {
        r = server.serve(std::future::pending()) => r.map_err(anyhow::Error::from),
        _ = terminated() => Ok(()),
    };
    host.shutdown().await;
    result
}

/// What a person who started the server in a terminal needs to know: it waits
/// for an MCP client on stdin.
fn terminal_help() -> String {
    let exe = crate::command_exe().map_or_else(|_| "ochre".into(), |p| p.display().to_string());
    format!(
        "ochre {version}: a browser-automation server for AI agents. It speaks MCP \
on stdin/stdout and now waits for an MCP client; typing here does nothing useful (ctrl-c quits).\n\
  register it with a client:  claude mcp add ochre -- {exe}\n\
  list its tools:             {exe} tools\n\
  serve over HTTP instead:    {exe} --http 8765   (then http://127.0.0.1:8765/mcp)",
        version = env!("CARGO_PKG_VERSION"),
    )
}

pub(crate) async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
