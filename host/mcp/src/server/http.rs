//! The streamable HTTP transport: its options, the session cap, bearer tokens,
//! the health route, and resuming or ending a session.

use super::*;

/// Settings of the Streamable HTTP transport.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Address to bind (default 127.0.0.1).
    pub host: IpAddr,
    /// Port (0 = any free port).
    pub port: u16,
    /// Bearer token required on `/mcp` (mandatory off loopback).
    pub auth_token: Option<String>,
    /// Extra `Origin`s allowed besides loopback ones (e.g. `https://app.example.com`).
    pub allowed_origins: Vec<String>,
    /// Extra `Host` names allowed besides loopback ones.
    pub allowed_hosts: Vec<String>,
    /// Every session sees and drives every tab, in the browser's default context
    /// (its profile's logins included). Off by default: each session has tabs of
    /// its own, in a browser context of its own.
    pub share_tabs: bool,
    /// The most MCP sessions served at once (`None`: no cap). A new session
    /// past it is refused at `initialize` with HTTP 503 and `Retry-After`; a
    /// session that ends (closed, or idle past its keep-alive) frees its slot.
    pub max_sessions: Option<usize>,
    /// Where the cap comes from, as the refusal says it (default:
    /// `--max-sessions N`).
    pub max_sessions_from: Option<String>,
    /// Keep each session's handshake in `<data-dir>/sessions`, so that another
    /// server sharing the data dir (or this one after a restart) resumes it
    /// under the same session id ([`crate::sessions`]).
    pub resume_sessions: bool,
    /// Where people reach ochre's pages (the live view, the secret page), if
    /// not at the address it is bound to: a proxy's public URL
    /// (`https://ochre.example.com`).
    pub live_url: Option<String>,
}

/// Admission of new sessions under [`HttpOptions::max_sessions`].
struct SessionCap {
    /// Where `max` comes from, as the refusal says it.
    from: String,
    max: usize,
    sessions: Arc<rmcp::transport::streamable_http_server::session::local::LocalSessionManager>,
    /// Serializes admission decisions.
    gate: tokio::sync::Mutex<()>,
    /// Sessions admitted whose `initialize` is still being answered (not yet
    /// in the session manager's map, or failing).
    admitting: std::sync::atomic::AtomicUsize,
}

/// Counts a session being admitted until its `initialize` is answered (or the
/// request is dropped).
struct Admitting<'a>(&'a std::sync::atomic::AtomicUsize);

impl Drop for Admitting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl SessionCap {
    /// A place for one more session, held until the session is live (or its
    /// request is dropped); `None` when `max` are being served.
    async fn admit(&self) -> Option<Admitting<'_>> {
        use std::sync::atomic::Ordering::SeqCst;
        let _gate = self.gate.lock().await;
        // In this order, a session that finishes its admission between the two
        // reads is counted (twice at worst), never missed.
        let admitting = self.admitting.load(SeqCst);
        let live = self.sessions.sessions.read().await.len();
        if live + admitting >= self.max {
            return None;
        }
        self.admitting.fetch_add(1, SeqCst);
        Some(Admitting(&self.admitting))
    }

    /// 503 with `Retry-After` and a JSON-RPC error body.
    fn refusal(&self, what: &str) -> axum::response::Response {
        use axum::response::IntoResponse;
        let max = self.max;
        tracing::warn!(max, "refused {what}: the session cap is reached");
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {
                "code": -32000,
                "message": format!("ochre is serving its {max} sessions ({}); try again later", self.from),
                "data": {"code": ochre_host::error::Code::SessionLimit, "max_sessions": max, "retry_after_s": SESSION_RETRY_AFTER_S},
            },
        });
        (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            [(axum::http::header::RETRY_AFTER, SESSION_RETRY_AFTER_S.to_string())],
            axum::Json(body),
        )
            .into_response()
    }
}

/// `POST /mcp` without `Mcp-Session-Id` opens a session: refused with 503 and
/// `Retry-After` (and a JSON-RPC error body) when `max` are being served.
async fn session_cap(
    cap: Arc<SessionCap>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let opens =
        req.method() == axum::http::Method::POST && !req.headers().contains_key("mcp-session-id");
    if !opens {
        return next.run(req).await;
    }
    let Some(_admitted) = cap.admit().await else {
        return cap.refusal("a new MCP session");
    };
    next.run(req).await
}

/// The `Retry-After` of a session refused at the cap, in seconds.
const SESSION_RETRY_AFTER_S: u64 = 5;

/// Why serving MCP stopped or could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The options are unsafe (a non-loopback address without a token).
    #[error("{0}")]
    Refused(String),
    /// Binding or serving the socket failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The MCP session failed (initialization, the transport).
    #[error("MCP session: {0}")]
    Session(String),
}

/// An MCP server over Streamable HTTP, bound and not yet serving.
pub struct HttpServer {
    listener: tokio::net::TcpListener,
    app: axum::Router,
    addr: SocketAddr,
}

impl HttpServer {
    /// The address it is bound to (the port chosen when 0 was asked).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serve until `shutdown` resolves.
    pub async fn serve(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        tracing::info!(addr = %self.addr, "serving MCP over Streamable HTTP");
        axum::serve(self.listener, self.app)
            .with_graceful_shutdown(shutdown)
            .await
            .map_err(|source| ServeError::Io { context: "serving HTTP".into(), source })
    }
}

/// `GET /health`: the version and how many tools, behind the same Host and
/// Origin checks as /mcp: a page on another site (DNS rebinding) learns
/// nothing, not even that ochre is here.
fn health_route(
    health_host: Host,
    hosts: Vec<String>,
    origins: Vec<String>,
) -> axum::routing::MethodRouter {
    axum::routing::get(move |headers: axum::http::HeaderMap| {
        let h = health_host.clone();
        let ok = host_allowed(&headers, &hosts) && origin_allowed(&headers, &origins);
        async move {
            use axum::response::IntoResponse;
            if !ok {
                return (axum::http::StatusCode::FORBIDDEN, "forbidden Host or Origin")
                    .into_response();
            }
            axum::Json(serde_json::json!({
                "status": "ok",
                "version": env!("CARGO_PKG_VERSION"),
                "tools": h.tools().len(),
            }))
            .into_response()
        }
    })
}

/// Bind MCP over Streamable HTTP at `POST /mcp` (and `GET /health`); serve it
/// with [`HttpServer::serve`].
pub async fn bind_http(host: Host, opts: HttpOptions) -> Result<HttpServer, ServeError> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };

    if !opts.host.is_loopback() && opts.auth_token.is_none() {
        return Err(ServeError::Refused(format!(
            "refusing to serve on non-loopback address {} without --auth-token (anyone on the network could drive the browser)",
            opts.host
        )));
    }
    let at = SocketAddr::new(opts.host, opts.port);
    let io = |source| ServeError::Io { context: format!("binding {at}"), source };
    let listener = tokio::net::TcpListener::bind(at).await.map_err(io)?;
    let addr = listener.local_addr().map_err(io)?;

    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    hosts.push(opts.host.to_string());
    hosts.extend(opts.allowed_hosts.iter().cloned());
    let mut origins: Vec<String> =
        vec!["http://localhost:*".into(), "http://127.0.0.1:*".into(), "http://[::1]:*".into()];
    origins.extend(opts.allowed_origins.iter().cloned());
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts.clone())
        .with_allowed_origins(origins.clone())
        .enforce_origin_validation();
    let store = opts.resume_sessions.then(|| {
        let store = Arc::new(crate::sessions::FileSessionStore::new(host.data_dir()));
        config.session_store = Some(store.clone());
        store
    });
    let session_host = host.clone();
    let share_tabs = opts.share_tabs;
    let sessions = Arc::new(LocalSessionManager::default());
    let service = StreamableHttpService::new(
        // One server (and so one disclosure state) per MCP session.
        move || {
            let server = McpServer::new(session_host.clone());
            Ok(if share_tabs { server } else { server.with_own_tabs() })
        },
        sessions.clone(),
        config,
    );
    let token = opts.auth_token.clone().map(Arc::new);
    let health_host = host.clone();
    let live_hosts = hosts.clone();
    let mut mcp = axum::Router::new().nest_service("/mcp", service);
    let cap = opts.max_sessions.map(|max| {
        Arc::new(SessionCap {
            max,
            from: opts.max_sessions_from.clone().unwrap_or_else(|| format!("--max-sessions {max}")),
            sessions: sessions.clone(),
            gate: tokio::sync::Mutex::new(()),
            admitting: Default::default(),
        })
    });
    if let Some(cap) = cap.clone() {
        mcp = mcp
            .layer(axum::middleware::from_fn(move |req, next| session_cap(cap.clone(), req, next)));
    }
    if let Some(store) = store {
        let sessions = sessions.clone();
        mcp = mcp.layer(axum::middleware::from_fn(move |req, next| {
            session_resume(store.clone(), sessions.clone(), cap.clone(), req, next)
        }));
    }
    let app = mcp
        .layer(axum::middleware::from_fn(session_end_ok))
        .layer(axum::middleware::from_fn(move |req, next| {
            let token = token.clone();
            bearer_guard(token, req, next)
        }))
        .route("/health", health_route(health_host, hosts, origins));
    // The pages for people (live view, secrets): their own link tokens, no
    // bearer token (a person's browser has none), the same Host check.
    let base = match &opts.live_url {
        Some(u) => u.trim_end_matches('/').to_owned(),
        None if addr.ip().is_unspecified() => format!("http://127.0.0.1:{}", addr.port()),
        None => format!("http://{addr}"),
    };
    let mut live_hosts = live_hosts;
    if let Some(name) = url_host(&base) {
        live_hosts.push(name);
    }
    host.people().serve_at(&base);
    let app = app.merge(crate::live::routes(host.clone(), live_hosts));
    Ok(HttpServer { listener, app, addr })
}

/// A session ended by `DELETE /mcp` is answered 200, not the transport's 202:
/// the official Python client logs a warning for any other answer than 200 or
/// 204 (at every session's end), and nothing is left pending that 202 would say.
async fn session_end_ok(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let delete = req.method() == axum::http::Method::DELETE;
    let mut res = next.run(req).await;
    if delete && res.status() == axum::http::StatusCode::ACCEPTED {
        *res.status_mut() = axum::http::StatusCode::OK;
    }
    res
}

/// With `--resume-sessions`: a request of a session marks its stored
/// handshake as used (so a busy session stays resumable past the idle limit);
/// and a stream this server never had is not resumed. A `GET` with
/// `Last-Event-ID` for a session that is not live here is a client taking up a
/// call's response stream after the server that ran the call died: that call's
/// response (and whether it took effect) died with it, and the transport would
/// answer an empty stream the client retries forever (the Rust SDK does so
/// even at 404). It gets 405 instead, the spec's answer to a `GET` the server
/// offers no stream for, at which a client stops resuming and fails the call.
/// In a session taken up here, a stream from before it was taken up is
/// refused the same way. A new call of such a session (`POST`) is resumed from
/// the store under the same id, one request at a time until it is (the
/// transport loses a session that gets a request while it replays its
/// `initialize`). A session taken up counts against the session cap as a new
/// one does: past it, the request is refused with 503 (the session stays in
/// the store for a replica with room).
async fn session_resume(
    store: Arc<crate::sessions::FileSessionStore>,
    sessions: Arc<rmcp::transport::streamable_http_server::session::local::LocalSessionManager>,
    cap: Option<Arc<SessionCap>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let Some(id) = req.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) else {
        return next.run(req).await;
    };
    let id = id.to_owned();
    store.touch(&id);
    let resumes = (req.method() == axum::http::Method::GET)
        .then(|| req.headers().get("last-event-id"))
        .flatten()
        .map(|v| v.to_str().unwrap_or_default().to_owned());
    store.settled(&id).await;
    let live = sessions.sessions.read().await.contains_key(id.as_str());
    // An event id of a call's stream is `index/request`: in a session taken up
    // here, any from before was the dead server's (the numbering started anew).
    let foreign = |event: &str| !live || (event.contains('/') && store.was_resumed(&id));
    if resumes.as_deref().is_some_and(foreign) {
        tracing::info!(session = %id, "a call's stream from a server that is gone: answered 405");
        return (
            axum::http::StatusCode::METHOD_NOT_ALLOWED,
            "the server that ran this call is gone, and its response with it: its stream cannot be resumed",
        )
            .into_response();
    }
    if live {
        return next.run(req).await;
    }
    let _admitted = match &cap {
        Some(cap) if store.has(&id) => match cap.admit().await {
            Some(a) => Some(a),
            None => return cap.refusal("taking up a session from the shared data dir"),
        },
        _ => None,
    };
    store.one_at_a_time(&id, next.run(req)).await
}

async fn bearer_guard(
    token: Option<Arc<String>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if let Some(token) = token
        && req.uri().path().starts_with("/mcp")
    {
        let ok = req
            .headers()
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .is_some_and(|given| constant_time_eq(given.as_bytes(), token.as_bytes()));
        if !ok {
            return (
                axum::http::StatusCode::UNAUTHORIZED,
                [(axum::http::header::WWW_AUTHENTICATE, "Bearer")],
                "missing or wrong bearer token",
            )
                .into_response();
        }
    }
    next.run(req).await
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
