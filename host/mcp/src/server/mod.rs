//! The MCP server (feature `server`): a hand-written rmcp `ServerHandler` over a
//! [`Host`], served on stdio or Streamable HTTP.
//!
//! Tool failures are `CallToolResult` errors whose text (and `structuredContent`) is
//! `{"error":{"code":...,"message":...}}`; protocol errors are kept for malformed
//! requests.
//!
//! Beside it, by subject: what `tools/list` shows (`listing`: compact schemas,
//! disclosure tiers, the catalogue), asking the client (`peer`: elicitation,
//! secrets by URL, sampling), the HTTP transport (`http`).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use base64::Engine as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, Implementation, InitializeRequestParams, InitializeResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ReadResourceRequestParams,
    ReadResourceResult, Resource, ResourceContents, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
// MCP logging is deprecated by SEP-2577 (to be removed from a later protocol
// version); until then clients use it and the conformance suite checks it.
#[allow(deprecated)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::origin::{host_allowed, origin_allowed, url_host};
use ochre_host::HostBrowser;
use ochre_host::error::ToolError;
use ochre_host::{CallOptions, Content, ToolOutput};
use ochre_host::{Host, ProgressFn};
use ochre_protocol::Code;
use ochre_protocol::lock;

mod http;
mod listing;
mod peer;

pub use http::{HttpOptions, HttpServer, ServeError, bind_http};
use listing::*;
pub use listing::{catalogue, catalogue_markdown};
use peer::*;

/// Instructions sent to clients at `initialize`.
const INSTRUCTIONS: &str = "ochre drives a browser and runs sandboxed tool plugins. Start with navigate, then \
read_page (or find) for element refs like ax_12, and act with interact, form_input or fill_form. Page tools take an \
optional tabId (t1, t2, ...; default: the current tab). A ref stays valid while its element exists; after a \
navigation it is STALE_REF: read the page again. Tool errors come back as {\"error\":{\"code\",\"message\"}} \
with a stable code; fix the arguments as the message says. For multi-step or repetitive work, start a task run \
(oc_task_run_start, with bulk_contract for a list of items); every tool accepts run_id (default: this session's \
active run) and contract_id (records the result's items in that bulk progress contract). A `_hint` in a result is \
advice worth following.";

/// The MCP face of a [`Host`], one per MCP session: the tools of tier 1 are listed
/// at start, `expand_tools` reveals the rest (of the enabled groups) to this session.
#[derive(Clone)]
pub struct McpServer {
    /// The host and its tools, once built: a server may answer `initialize`
    /// while the host still compiles its plugins ([`McpServer::starting`]).
    ready: SharedReady,
    disclosure: Arc<std::sync::Mutex<Disclosure>>,
    /// This MCP session's key in the host (its task runs and hints).
    session: Arc<str>,
    /// Set when the session has tabs of its own (HTTP, unless tabs are
    /// shared): they go when the last clone of the server does.
    own_tabs: Option<Arc<TabsRelease>>,
    /// The least level of the log messages this session's client wants
    /// (`logging/setLevel`; default: warning).
    log_level: Arc<std::sync::atomic::AtomicU8>,
    /// Set when the clones of this server (several connections of one
    /// session) take their tool calls one at a time, in the order they came.
    turns: Option<Arc<tokio::sync::Mutex<()>>>,
    /// Whose words the answers' hints are in.
    hints: ochre_host::Hints,
}

/// The host, or why it could not be built; every clone of a server waits on the
/// same build.
type SharedReady =
    futures::future::Shared<futures::future::BoxFuture<'static, Result<Ready, Arc<str>>>>;

/// A built host and the tools a session may list (every enabled tool with its
/// tier, in order).
#[derive(Clone)]
struct Ready {
    host: Host,
    tools: Arc<Vec<(Tool, u8)>>,
}

impl Ready {
    fn new(host: Host) -> Self {
        // A stdio server serves the pages for people when first needed (an
        // HTTP server serves them itself: it said where).
        crate::live::serve_on_demand(&host);
        let tools = host.tools().into_iter().map(|t| (to_mcp_tool(t), t.tier.max(1))).collect();
        Self { host, tools: Arc::new(tools) }
    }
}

/// What this session has revealed.
#[derive(Debug, Default)]
struct Disclosure {
    /// Tools of tiers up to this one are listed.
    tier: u8,
    /// Tools revealed by name.
    revealed: std::collections::BTreeSet<String>,
}

/// The `initialize` `_meta` key that names the session's saved login.
pub const LOGIN_META: &str = "ochre/login";

/// The HTTP header that names the session's saved login (on `initialize`).
pub const LOGIN_HEADER: &str = "ochre-login";

/// The host-owned tool that reveals hidden tools.
const EXPAND_TOOLS: &str = "expand_tools";

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer").field("session", &self.session).finish()
    }
}

/// Closes a session's own tabs when the session's server is dropped.
struct TabsRelease {
    ready: SharedReady,
    owner: Arc<str>,
}

impl Drop for TabsRelease {
    fn drop(&mut self) {
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let ready = self.ready.clone();
            let owner = self.owner.clone();
            rt.spawn(async move {
                if let Ok(r) = ready.await {
                    r.host.browser().release_owner(&owner).await;
                }
            });
        }
    }
}

impl McpServer {
    /// Serve `host`.
    pub fn new(host: Host) -> Self {
        use futures::FutureExt;
        Self::with_ready(futures::future::ready(Ok(Ready::new(host))).boxed().shared())
    }

    /// Serve the host `build` makes, answering `initialize` at once: the other
    /// requests wait for the build (a new machine compiles the plugins first) and
    /// fail with its error if it fails. The build runs even before a client asks.
    /// A build that has failed by then fails `initialize` itself, naming the
    /// problem (see [`McpServer::failed`]).
    /// Returns the server and a future that ends with the build's error.
    pub fn starting<F, E>(build: F) -> (Self, impl Future<Output = Arc<str>> + Send + 'static)
    where
        F: Future<Output = Result<Host, E>> + Send + 'static,
        E: std::fmt::Display + Send + 'static,
    {
        use futures::FutureExt;
        let task = tokio::spawn(build);
        let ready = async move {
            match task.await {
                Ok(Ok(host)) => Ok(Ready::new(host)),
                Ok(Err(e)) => Err(Arc::from(format!("the server could not start: {e}"))),
                Err(e) => Err(Arc::from(format!("the server could not start: {e}"))),
            }
        }
        .boxed()
        .shared();
        let failed = ready.clone().then(|r| async move {
            match r {
                Err(e) => e,
                Ok(_) => std::future::pending().await,
            }
        });
        (Self::with_ready(ready), failed)
    }

    /// A server whose host could not start (a missing plugin dir, a bad config
    /// or login key): `initialize` is refused with `reason` (which should name
    /// the fix), and so is every request after, so the client shows it rather
    /// than a closed connection.
    pub fn failed(reason: impl std::fmt::Display) -> Self {
        use futures::FutureExt;
        let reason: Arc<str> = Arc::from(format!("the server could not start: {reason}"));
        Self::with_ready(futures::future::ready(Err(reason)).boxed().shared())
    }

    /// The host once built (`None` if its build failed).
    pub async fn host(&self) -> Option<Host> {
        self.ready.clone().await.ok().map(|r| r.host)
    }

    async fn ready(&self) -> Result<Ready, ErrorData> {
        self.ready.clone().await.map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    fn with_ready(ready: SharedReady) -> Self {
        Self {
            ready,
            disclosure: Arc::new(std::sync::Mutex::new(Disclosure {
                tier: 1,
                revealed: Default::default(),
            })),
            session: {
                let mut raw = [0u8; 8];
                let _ = getrandom::fill(&mut raw);
                format!("mcp-{}", data_encoding::HEXLOWER.encode(&raw)).into()
            },
            own_tabs: None,
            #[allow(deprecated)]
            log_level: Arc::new(std::sync::atomic::AtomicU8::new(rank(LoggingLevel::Warning))),
            turns: None,
            hints: ochre_host::Hints::Tools,
        }
    }

    /// This session works in tabs of its own, in a browser context of its own:
    /// other sessions neither see nor touch them, and they close when the
    /// session ends.
    pub fn with_own_tabs(mut self) -> Self {
        self.own_tabs =
            Some(Arc::new(TabsRelease { ready: self.ready.clone(), owner: self.session.clone() }));
        self
    }

    /// This server's calls are those of the host session `session` (its task
    /// runs, hints and journal entries): clones of it serve several
    /// connections as one session, as the command line's daemon does.
    pub fn in_session(mut self, session: &str) -> Self {
        self.session = Arc::from(session);
        self
    }

    /// The answers' hints in these words (the command line's daemon: its
    /// commands', not the tools').
    pub fn with_hints(mut self, hints: ochre_host::Hints) -> Self {
        self.hints = hints;
        self
    }

    /// Tool calls of this server and its clones run one at a time, in the
    /// order they came (tokio's mutex is fair): the commands of one
    /// command-line session, each on a connection of its own, queue.
    pub fn one_call_at_a_time(mut self) -> Self {
        self.turns = Some(Arc::new(tokio::sync::Mutex::new(())));
        self
    }

    /// Serve MCP on stdin/stdout until the client closes the stream.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        self.serve_transport(crate::stdio::stdio()).await
    }

    /// Serve MCP, one JSON-RPC message per line, on any stream (a local
    /// socket's connection) until the client closes it.
    pub async fn serve_lines<R, W>(self, reader: R, writer: W) -> Result<(), ServeError>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        self.serve_transport(crate::stdio::lines(reader, writer)).await
    }

    async fn serve_transport(self, t: crate::stdio::LineTransport) -> Result<(), ServeError> {
        let running = self.serve(t).await.map_err(|e| ServeError::Session(e.to_string()))?;
        running.waiting().await.map_err(|e| ServeError::Session(e.to_string()))?;
        Ok(())
    }
}

#[allow(deprecated)]
fn mcp_level(l: ochre_host::client_log::Level) -> LoggingLevel {
    use ochre_host::client_log::Level as L;
    match l {
        L::Debug => LoggingLevel::Debug,
        L::Info => LoggingLevel::Info,
        L::Notice => LoggingLevel::Notice,
        L::Warning => LoggingLevel::Warning,
        L::Error => LoggingLevel::Error,
    }
}

/// Send `m` to the client if its level is wanted; false once the session is gone.
#[allow(deprecated)]
async fn forward(
    peer: &rmcp::Peer<RoleServer>,
    wanted: &std::sync::atomic::AtomicU8,
    m: &ochre_host::client_log::ClientLog,
) -> bool {
    let level = mcp_level(m.level);
    if rank(level) < wanted.load(std::sync::atomic::Ordering::Relaxed) {
        return true;
    }
    let mut p = LoggingMessageNotificationParam::new(level, Value::String(m.message.clone()));
    p.logger = Some(m.logger.clone());
    peer.notify_logging_message(p).await.is_ok()
}

impl ServerHandler for McpServer {
    #[allow(deprecated)] // enable_logging: see the import of LoggingLevel
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_logging()
                .enable_resources()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("ochre", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    /// The handshake; a session that names a saved login (`_meta`
    /// `"ochre/login": NAME`, or over HTTP the header `Ochre-Login: NAME`)
    /// starts signed in with it, or is refused, saying why (no such login,
    /// no key to open it).
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        // rmcp hands a request's `_meta` over in its context.
        let meta = request
            .meta
            .as_ref()
            .and_then(|m| m.get(LOGIN_META))
            .or_else(|| context.meta.get(LOGIN_META));
        let header = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.headers.get(LOGIN_HEADER));
        let login = match (meta, header) {
            (Some(v), _) => Some(v.as_str().map(str::to_owned)),
            (None, Some(h)) => Some(h.to_str().ok().map(str::to_owned)),
            (None, None) => None,
        };
        let login = match login {
            Some(None) => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "`{LOGIN_META}` (or the {LOGIN_HEADER} header) names a saved login: text"
                    ),
                    None,
                ));
            }
            Some(Some(name)) => Some(name),
            None => None,
        };
        if let Some(name) = login {
            let ready = self.ready().await?;
            let mut options = CallOptions::default().in_session(self.session.as_ref());
            if self.own_tabs.is_some() {
                options = options.with_own_tabs(self.session.clone());
            }
            let args = serde_json::json!({"name": name});
            if let Err(e) = ready.host.call_tool("oc_login_load", args, options).await {
                return Err(ErrorData::invalid_params(
                    format!("the session's login {name:?}: {}", e.message),
                    Some(e.to_json()),
                ));
            }
        }
        // A host that could not start refuses the handshake with the reason
        // and the fix; one still compiling its plugins answers, and the calls
        // after wait for it.
        if let Some(Err(e)) = futures::FutureExt::now_or_never(self.ready.clone()) {
            return Err(ErrorData::internal_error(e.to_string(), None));
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    /// What ochre stores (output handles, recordings, evidence bundles, journal
    /// days), 100 per page; the cursor is the offset of the next page.
    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        const PAGE: usize = 100;
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(c) => c.parse::<usize>().map_err(|_| {
                ErrorData::invalid_params(
                    format!("cursor {c:?} is not one resources/list gave"),
                    None,
                )
            })?,
        };
        let all = crate::resources::list(&self.ready().await?.host);
        let page: Vec<Resource> = all
            .iter()
            .skip(start)
            .take(PAGE)
            .map(|r| {
                let mut res = Resource::new(&r.uri, &r.name)
                    .with_description(&r.description)
                    .with_mime_type(&r.mime_type);
                if let Some(size) = r.size {
                    res = res.with_size(size);
                }
                res
            })
            .collect();
        let mut out = ListResourcesResult::with_all_items(page);
        if start + PAGE < all.len() {
            out.next_cursor = Some((start + PAGE).to_string());
        }
        Ok(out)
    }

    /// One resource, checked as the tools check it (an expired handle is gone).
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        use crate::resources::ResourceBody;
        let host = self.ready().await?.host;
        let r = crate::resources::read(&host, &request.uri).map_err(|e| {
            let data = Some(
                serde_json::json!({"code": e.code, "message": e.message, "details": e.details}),
            );
            if e.code == Code::ResourceNotFound {
                ErrorData::resource_not_found(e.message, data)
            } else {
                ErrorData::internal_error(e.message, data)
            }
        })?;
        let contents = match r.body {
            ResourceBody::Text(t) => ResourceContents::text(t, r.uri),
            ResourceBody::Blob(b) => {
                ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(b), r.uri)
            }
        }
        .with_mime_type(r.mime_type);
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    /// `logging/setLevel`: this session gets log messages of `level` and above.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log_level.store(rank(request.level), std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// The session is ready: forward the server's log messages for it (those of
    /// the server's start first) until it ends.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let ready = self.ready.clone();
        let peer = context.peer.clone();
        let wanted = self.log_level.clone();
        let me = self.session.clone();
        tokio::spawn(async move {
            let Ok(ready) = ready.await else { return };
            let logs = ready.host.client_logs();
            let mut rx = logs.subscribe();
            let startup = logs.startup();
            for m in &startup {
                if !forward(&peer, &wanted, m).await {
                    return;
                }
            }
            loop {
                match rx.recv().await {
                    Ok(m) => {
                        if m.session.as_deref().is_some_and(|s| s != &*me) {
                            continue;
                        }
                        if !forward(&peer, &wanted, &m).await {
                            return;
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        });
    }

    /// A request rmcp could not read as one of MCP's own: an MCP method with
    /// params of the wrong shape (a `tools/call` whose `arguments` is an array, or
    /// without a `name`) is `-32602 Invalid params`, not an unknown method.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method = request.method.as_str();
        Err(match crate::stdio::params_shape(method) {
            Some(shape) => ErrorData::invalid_params(
                format!("{method}: params must be {shape}"),
                Some(serde_json::json!({"method": method})),
            ),
            None => ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("unknown method {method:?}"),
                None,
            ),
        })
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let r = self.ready().await?;
        Ok(ListToolsResult::with_all_items(self.listed(&r)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let ready = self.ready().await?;
        if request.name == EXPAND_TOOLS {
            let out = match self.expand(&ready, &args) {
                Ok((new, body)) => {
                    if !new.is_empty() {
                        let _ = context.peer.notify_tool_list_changed().await;
                    }
                    let mut r = CallToolResult::success(vec![ContentBlock::text(body.to_string())]);
                    r.structured_content = Some(body);
                    r
                }
                Err(e) => {
                    let body = e.to_json();
                    let mut r = CallToolResult::error(vec![ContentBlock::text(body.to_string())]);
                    r.structured_content = Some(body);
                    r
                }
            };
            return Ok(out.into());
        }
        let progress: Option<ProgressFn> = context.meta.get_progress_token().map(|token| {
            let peer = context.peer.clone();
            let f: ProgressFn = Arc::new(move |progress, total, message| {
                let mut p = ProgressNotificationParam::new(token.clone(), progress);
                p.total = total;
                p.message = message;
                let peer = peer.clone();
                tokio::spawn(async move {
                    let _ = peer.notify_progress(p).await;
                });
            });
            f
        });
        // A client's `notifications/cancelled` stops the call at once: the call is
        // dropped (a plugin instance, its browser waits and any worker tabs with it).
        let mut options = CallOptions::with_progress(progress)
            .in_session(self.session.as_ref())
            .with_hints(self.hints);
        if self.own_tabs.is_some() {
            options = options.with_own_tabs(self.session.clone());
        }
        let samples = context.peer.peer_info().is_some_and(|i| i.capabilities.sampling.is_some());
        if samples {
            options = options.with_sampler(Arc::new(PeerSampler(context.peer.clone())));
        }
        let elicits =
            context.peer.peer_info().is_some_and(|i| i.capabilities.elicitation.is_some());
        let urls = context
            .peer
            .peer_info()
            .is_some_and(|i| i.capabilities.elicitation.as_ref().is_some_and(|e| e.url.is_some()));
        if urls {
            options = options.with_url_asker(Arc::new(PeerUrlAsker(context.peer.clone())));
        }
        let retry = elicits.then(|| (args.clone(), options.clone()));
        let call = async {
            let _turn = match &self.turns {
                Some(turns) => Some(turns.clone().lock_owned().await),
                None => None,
            };
            let result = ready.host.call_tool(&request.name, args, options).await;
            match (result, retry) {
                (Err(e), Some((args, options))) if e.code == Code::MissingParameters => {
                    match ask_missing(&context.peer, &request.name, &e, &ready.host, urls).await {
                        Ok(given) => {
                            let args = with_params(args, given);
                            ready.host.call_tool(&request.name, args, options).await
                        }
                        Err(why) => Err(e.with("elicitation", why)),
                    }
                }
                (result, _) => result,
            }
        };
        let result = tokio::select! {
            r = call => r,
            () = context.ct.cancelled() => {
                tracing::info!(tool = %request.name, "call cancelled by the client");
                Err(ToolError::cancelled(format!("{} was cancelled by the client", request.name),
                ))
            }
        };
        Ok(call_result(result).into())
    }
}

/// A tool call's outcome as MCP's result: its content (images base64), its
/// structured content; an error as its JSON body, with its hint as a second
/// text block.
fn call_result(result: Result<ToolOutput, ToolError>) -> CallToolResult {
    match result {
        Ok(out) => {
            let content = out
                .content
                .into_iter()
                .map(|c| match c {
                    Content::Text(t) => ContentBlock::text(t),
                    Content::Image { data, mime_type } => ContentBlock::image(
                        base64::engine::general_purpose::STANDARD.encode(data),
                        mime_type,
                    ),
                })
                .collect();
            let mut r = CallToolResult::success(content);
            r.structured_content = out.structured;
            r
        }
        Err(e) => {
            let body = e.to_json();
            let mut content = vec![ContentBlock::text(body.to_string())];
            if let Some(h) = e.details.get("_hint") {
                content.push(ContentBlock::text(format!(
                    "hint ({}): {}",
                    h["severity"].as_str().unwrap_or("info"),
                    h["message"].as_str().unwrap_or("")
                )));
            }
            let mut r = CallToolResult::error(content);
            r.structured_content = Some(body);
            r
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compact_schema_merges_plain_unions_and_hides_aliases() {
        let mut s = json!({
            "type": "object",
            "description": "struct docs",
            "properties": {
                "v": {"anyOf": [{"type": "boolean"}, {"type": "number", "format": "double"}, {"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
                "w": {"anyOf": [{"type": "string"}, {"type": "object", "properties": {}}]},
                "count": {"type": "integer", "minimum": 1, "maximum": 100},
                "timeout": {"type": "integer", "minimum": 1, "maximum": 120000},
                "depth": {"type": "integer", "minimum": 2},
                "limit": {"type": "integer", "description": "alias of count"}
            }
        });
        compact_schema(&mut s, true);
        assert_eq!(
            s,
            json!({
                "type": "object",
                "properties": {
                    "v": {"type": ["boolean", "number", "string", "array"], "items": {"type": "string"}},
                    "w": {"anyOf": [{"type": "string"}, {"type": "object", "properties": {}}]},
                    "count": {"type": "integer", "maximum": 100},
                    "timeout": {"type": "integer"},
                    "depth": {"type": "integer", "minimum": 2}
                }
            })
        );
        // The merged form accepts and rejects what the union did.
        let v = jsonschema::validator_for(&s["properties"]["v"]).expect("schema");
        assert!(v.is_valid(&json!(true)) && v.is_valid(&json!(["a"])));
        assert!(v.is_valid(&json!(2.5)) && v.is_valid(&json!("x")));
        assert!(!v.is_valid(&json!([1])) && !v.is_valid(&json!({})));
    }
}
