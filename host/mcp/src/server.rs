//! The MCP server (feature `server`): a hand-written rmcp `ServerHandler` over a
//! [`Host`], served on stdio or Streamable HTTP.
//!
//! Tool failures are `CallToolResult` errors whose text (and `structuredContent`) is
//! `{"error":{"code":...,"message":...}}`; protocol errors are kept for malformed
//! requests.

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
use ochre_protocol::lock;

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
    /// Returns the server and a future that ends with the build's error.
    pub fn starting<F>(build: F) -> (Self, impl Future<Output = Arc<str>> + Send + 'static)
    where
        F: Future<Output = ochre_host::Result<Host>> + Send + 'static,
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

    /// Serve MCP on stdin/stdout until the client closes the stream.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        let running = self
            .serve(crate::stdio::stdio())
            .await
            .map_err(|e| ServeError::Session(e.to_string()))?;
        running.waiting().await.map_err(|e| ServeError::Session(e.to_string()))?;
        Ok(())
    }
}

/// The schema as advertised in `tools/list`: what an agent needs to build a call,
/// without the bytes it pays for on every turn (no `null` alternatives for optional
/// fields, no number formats, no `minLength`/`minItems` of 1 or `minimum` 0/1, no
/// length caps of 1000 and more, item caps of 50 and more or numeric caps of
/// 100000 and more,
/// no struct docs, no alias properties (`"description": "alias of ..."`) nor
/// unlisted ones (`"Unlisted: ..."`: for other tools, such as a replay), a union
/// of plain types as one `type` list). The host still validates every call against
/// the full schema, so the dropped bounds are enforced with a clear
/// `INVALID_ARGUMENT` and the aliases are still accepted.
fn compact_schema(v: &mut Value, top: bool) {
    let Value::Object(m) = v else {
        return;
    };
    if top {
        m.remove("description");
    }
    drop_defaults(m);
    drop_null_types(m);
    if let Some(Value::String(d)) = m.get_mut("description") {
        *d = d.replace('\n', " ");
    }
    if let Some(Value::Object(props)) = m.get_mut("properties") {
        props.retain(|_, p| {
            !p.get("description")
                .and_then(Value::as_str)
                .is_some_and(|d| d.starts_with("alias of ") || d.starts_with("Unlisted: "))
        });
    }
    for key in ["properties", "$defs"] {
        if let Some(Value::Object(children)) = m.get_mut(key) {
            for child in children.values_mut() {
                if key == "$defs"
                    && let Value::Object(dm) = child
                {
                    dm.remove("description");
                }
                compact_schema(child, false);
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = m.get_mut(key) {
            compact_schema(child, false);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(children)) = m.get_mut(key) {
            children.iter_mut().for_each(|c| compact_schema(c, false));
        }
    }
    merge_plain_any_of(m);
}

/// Keywords that say little an agent needs: formats, titles, bounds that are
/// the defaults anyway (lower bounds of 0 and 1, upper bounds of 100000+).
fn drop_defaults(m: &mut serde_json::Map<String, Value>) {
    m.remove("format");
    m.remove("title");
    type IsDefault = fn(&Value) -> bool;
    let says_little: [(&str, IsDefault); 7] = [
        ("additionalProperties", |v| *v == Value::Bool(false)),
        ("minLength", |v| *v == 1),
        ("minItems", |v| *v == 1),
        ("maxItems", |v| v.as_u64().is_some_and(|n| n >= 50)),
        ("minimum", |v| v.as_u64().is_some_and(|n| n <= 1)),
        ("maximum", |v| v.as_f64().is_some_and(|n| n >= 100_000.0)),
        ("maxLength", |v| v.as_u64().is_some_and(|n| n >= 1000)),
    ];
    for (key, default) in says_little {
        if m.get(key).is_some_and(default) {
            m.remove(key);
        }
    }
}

/// Optional fields: `["string", "null"]` -> `"string"`, an `anyOf` with `null`
/// -> its other branch; omission says it.
fn drop_null_types(m: &mut serde_json::Map<String, Value>) {
    if let Some(Value::Array(types)) = m.get("type") {
        let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if kept.len() == 1 {
            m.insert("type".into(), kept[0].clone());
        }
    }
    if let Some(Value::Array(any)) = m.get("anyOf") {
        let kept: Vec<Value> = any
            .iter()
            .filter(|s| s.get("type") != Some(&Value::String("null".into())))
            .cloned()
            .collect();
        if kept.len() == 1 {
            m.remove("anyOf");
            if let Value::Object(inner) = &kept[0] {
                for (k, val) in inner {
                    m.entry(k.clone()).or_insert_with(|| val.clone());
                }
            }
        }
    }
}

/// `anyOf` of bare types (at most one array with `items`) -> one `type` list.
/// After the branches are compacted (no `format` left on them).
fn merge_plain_any_of(m: &mut serde_json::Map<String, Value>) {
    if let Some(Value::Array(any)) = m.get("anyOf") {
        let plain = any.iter().all(|b| {
            b.as_object().is_some_and(|o| {
                o.get("type").is_some_and(Value::is_string)
                    && o.keys().all(|k| k == "type" || (k == "items" && o["type"] == "array"))
            })
        });
        let arrays = any.iter().filter(|b| b.get("items").is_some()).count();
        if plain && arrays <= 1 && !m.contains_key("type") {
            let types: Vec<Value> =
                any.iter().map(|b| b["type"].clone()).filter(|t| t != "null").collect();
            let items = any.iter().find_map(|b| b.get("items").cloned());
            m.remove("anyOf");
            m.insert("type".into(), Value::Array(types));
            if let Some(items) = items {
                m.insert("items".into(), items);
            }
        }
    }
}

fn to_mcp_tool(info: &ochre_host::ToolInfo) -> Tool {
    let mut schema = info.input_schema.clone();
    compact_schema(&mut schema, true);
    if info.intent
        && let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut)
    {
        props.insert(
            "intent".into(),
            serde_json::json!({"type": "string", "maxLength": ochre_host::pipeline::MAX_INTENT_CHARS}),
        );
    }
    if info.output_mode
        && let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut)
    {
        props.insert(
            "output_mode".into(),
            serde_json::json!({"type": "string", "enum": ["inline", "handle", "auto"],
                "description": "handle: store it, answer a handle for oc_output_fetch; auto: handle if over output_inline_limit_bytes (32768)"}),
        );
        props.insert("output_inline_limit_bytes".into(), serde_json::json!({"type": "integer"}));
    }
    let description = if info.intent {
        format!(
            "{} Pass intent=\"...\" (≤{} chars) to label this action in audit logs.",
            info.description,
            ochre_host::pipeline::MAX_INTENT_CHARS
        )
    } else {
        info.description.clone()
    };
    let object = match schema {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    let mut tool = Tool::default();
    tool.name = info.name.clone().into();
    tool.description = Some(description.into());
    tool.input_schema = Arc::new(object);
    let a = info.annotations;
    // Hints equal to MCP's defaults (readOnly false, idempotent false) are left out.
    tool.annotations = Some(ToolAnnotations::from_raw(
        None,
        a.read_only.then_some(true),
        (!a.read_only).then_some(a.destructive),
        (!a.read_only && a.idempotent).then_some(true),
        Some(a.open_world),
    ));
    tool
}

impl McpServer {
    fn disclosure(&self) -> std::sync::MutexGuard<'_, Disclosure> {
        lock(&self.disclosure)
    }

    /// The tools this session lists now, plus `expand_tools` while some are hidden.
    fn listed(&self, r: &Ready) -> Vec<Tool> {
        let d = self.disclosure();
        let mut out: Vec<Tool> = r
            .tools
            .iter()
            .filter(|(t, tier)| *tier <= d.tier || d.revealed.contains(t.name.as_ref()))
            .map(|(t, _)| t.clone())
            .collect();
        if out.len() < r.tools.len() {
            out.push(expand_tool_def(r.tools.len() - out.len()));
        }
        out
    }

    /// `expand_tools {tier?, name?}`: reveal hidden tools of enabled groups.
    fn expand(&self, r: &Ready, args: &Value) -> Result<(Vec<Tool>, Value), ToolError> {
        let tier = match args.get("tier") {
            None | Some(Value::Null) => None,
            Some(v) => {
                let t = v.as_u64().or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()));
                match t {
                    Some(t @ 2..=3) => Some(t as u8),
                    _ => {
                        return Err(ToolError::invalid_argument(
                            "tier",
                            "tier is 2 (specialist tools) or 3 (everything)",
                        ));
                    }
                }
            }
        };
        let name = args.get("name").and_then(Value::as_str);
        if let Some(extra) = args
            .as_object()
            .and_then(|o| o.keys().find(|k| !["tier", "name"].contains(&k.as_str())))
        {
            return Err(ToolError::invalid_argument(
                extra,
                format!("expand_tools: `{extra}` is not an accepted argument"),
            ));
        }
        if tier.is_none() && name.is_none() {
            return Err(ToolError::invalid_argument(
                "tier",
                "expand_tools needs `tier` (2 or 3) or a tool `name`",
            ));
        }
        if let Some(n) = name {
            if let Some(e) = r.host.capability_disabled(n) {
                return Err(e);
            }
            if !r.tools.iter().any(|(t, _)| t.name == n) {
                return Err(ToolError::unknown_tool(format!("no tool named {n:?}")));
            }
        }
        let before: std::collections::BTreeSet<String> =
            self.listed(r).iter().map(|t| t.name.to_string()).collect();
        {
            let mut d = self.disclosure();
            if let Some(t) = tier {
                d.tier = d.tier.max(t);
            }
            if let Some(n) = name {
                d.revealed.insert(n.to_owned());
            }
        }
        let new: Vec<Tool> = self
            .listed(r)
            .into_iter()
            .filter(|t| t.name != EXPAND_TOOLS && !before.contains(t.name.as_ref()))
            .collect();
        let listed = self.listed(r).len();
        let body = serde_json::json!({
            "revealed": new.iter().map(|t| t.name.to_string()).collect::<Vec<_>>(),
            "listed": listed,
            "tools": new,
        });
        Ok((new, body))
    }
}

/// The tool catalogue: every tool this host offers (and `expand_tools`), in the
/// order `tools/list` gives them, with group, tier, plugin and a one-line purpose.
pub fn catalogue(host: &Host) -> Vec<Value> {
    let purpose = |d: &str| -> String {
        let first = d.split(". ").next().unwrap_or(d).trim_end_matches('.');
        format!("{first}.")
    };
    let mut out: Vec<Value> = host
        .tools()
        .into_iter()
        .map(|t| {
            serde_json::json!({
                "name": t.name, "group": t.capability, "tier": t.tier.max(1),
                "plugin": t.plugin, "purpose": purpose(&t.description),
                "inputSchema": *to_mcp_tool(t).input_schema,
            })
        })
        .collect();
    out.push(serde_json::json!({
        "name": EXPAND_TOOLS, "group": "core", "tier": 1, "plugin": "host",
        "purpose": "Reveal hidden tools (tier 2 or 3, or one by name) for this session.",
        "inputSchema": *expand_tool_def(0).input_schema,
    }));
    out
}

/// `docs/tools.md`: the catalogue as Markdown, grouped by tier.
pub fn catalogue_markdown(catalogue: &[Value]) -> String {
    let mut md = [
        "# ochre tools",
        "",
        "<!-- generated by `ochre tools --markdown`; a test keeps it fresh -->",
        "",
        "Tier 1 tools are listed at start; `expand_tools` reveals tiers 2 and 3 for a session.",
        "Groups are enabled with `--tools-only` / `--disable-tools`.",
        "",
        "| group | tier | tool | purpose |",
        "| --- | ---: | --- | --- |",
        "",
    ]
    .join("\n");
    let mut rows: Vec<&Value> = catalogue.iter().collect();
    rows.sort_by_key(|e| {
        (
            e["tier"].as_u64(),
            e["group"].as_str() != Some("core"),
            e["group"].as_str().map(str::to_owned),
        )
    });
    for e in rows {
        md.push_str(&format!(
            "| {} | {} | `{}` | {} |\n",
            e["group"].as_str().unwrap_or(""),
            e["tier"],
            e["name"].as_str().unwrap_or(""),
            e["purpose"].as_str().unwrap_or("").replace('|', "\\|")
        ));
    }
    md
}

/// The definition of `expand_tools`, saying how many tools are hidden.
fn expand_tool_def(hidden: usize) -> Tool {
    let mut tool = Tool::default();
    tool.name = EXPAND_TOOLS.into();
    tool.description = Some(
        format!(
            "Reveal {hidden} hidden tools: tier 2 (screenshots, HTML, console, extraction, uploads, recordings, crawls, task runs, workflows), 3 (all), or one by name."
        )
        .into(),
    );
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "tier": {"type": "integer", "enum": [2, 3]},
            "name": {"type": "string"}
        }
    });
    if let Value::Object(m) = schema {
        tool.input_schema = Arc::new(m);
    }
    tool.annotations = Some(ToolAnnotations::from_raw(None, Some(true), None, None, Some(false)));
    tool
}

/// MCP's levels in order (debug 0 .. emergency 7).
#[allow(deprecated)]
fn rank(l: LoggingLevel) -> u8 {
    match l {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
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
        let mut options = CallOptions::with_progress(progress).in_session(self.session.as_ref());
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

use ochre_protocol::Code;

/// How long the user may take to answer an elicitation.
const ELICIT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// Ask the user (MCP `elicitation/create`) for the parameters a call lacks
/// (`details.missing`; `details.params` says which are secrets). Secrets are
/// asked on ochre's own page, opened by URL-mode elicitation: the value goes
/// from the person's browser to ochre, never through the client (the MCP
/// specification forbids asking credentials by form); a client without URL
/// mode is not asked for them. Other values are asked by form. Their values
/// (the secrets known from then on), or why none.
async fn ask_missing(
    peer: &rmcp::Peer<RoleServer>,
    tool: &str,
    e: &ToolError,
    host: &Host,
    urls: bool,
) -> Result<serde_json::Map<String, Value>, String> {
    use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
    let missing: Vec<&str> = e
        .details
        .get("missing")
        .and_then(Value::as_array)
        .map(|m| m.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let secret = |name: &str| {
        e.details.get("params").and_then(Value::as_array).is_some_and(|ps| {
            ps.iter().any(|p| p["name"] == name && p["secret"] == Value::Bool(true))
        })
    };
    let (secrets, plain): (Vec<&str>, Vec<&str>) = missing.iter().partition(|n| secret(n));
    let mut given = serde_json::Map::new();
    if !secrets.is_empty() {
        if !urls {
            return Err(format!(
                "{} {} secret: a secret is asked only on ochre's own page (MCP URL-mode \
                 elicitation), which this client does not support; store it with \
                 `ochre secret set NAME` and pass \"secret:NAME\"",
                secrets.join(", "),
                if secrets.len() == 1 { "is a" } else { "are each a" }
            ));
        }
        let names = secrets.iter().map(|s| (*s).to_owned()).collect();
        let message = format!(
            "{tool} needs {}: enter it on ochre's page (it does not pass through this client)",
            secrets.join(", ")
        );
        let asker = PeerUrlAsker(peer.clone());
        let values =
            host.people().ask_by_url(&asker, tool, names, &message, ELICIT_TIMEOUT).await?;
        given.extend(values.into_iter().map(|(k, v)| (k, Value::String(v))));
    }
    if !plain.is_empty() {
        let mut schema = ElicitationSchema::builder();
        for name in &plain {
            schema = schema
                .required_string_property(*name, |s| s.description("a value this flow needs"));
        }
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: format!("{tool} needs values for: {}", plain.join(", ")),
            requested_schema: schema.build().map_err(|e| e.to_string())?,
        };
        let answer = peer
            .create_elicitation_with_timeout(params, Some(ELICIT_TIMEOUT))
            .await
            .map_err(|e| format!("the client could not ask its user: {e}"))?;
        if answer.action != ElicitationAction::Accept {
            return Err("the user declined".into());
        }
        let values = answer.content.and_then(|c| c.as_object().cloned()).unwrap_or_default();
        for name in &plain {
            let v = values
                .get(*name)
                .and_then(Value::as_str)
                .ok_or(format!("the user gave no {name}"))?;
            given.insert((*name).to_owned(), Value::String(v.to_owned()));
        }
    }
    Ok(given)
}

/// Sends the client's user to ochre's pages by URL-mode elicitation.
struct PeerUrlAsker(rmcp::Peer<RoleServer>);

impl ochre_host::people::UrlAsker for PeerUrlAsker {
    fn open<'a>(
        &'a self,
        message: &'a str,
        url: &'a str,
    ) -> futures::future::BoxFuture<'a, ochre_host::people::Asked> {
        use ochre_host::people::Asked;
        use rmcp::model::{ElicitRequestParams, ElicitationAction};
        Box::pin(async move {
            let mut id = [0u8; 12];
            let _ = getrandom::fill(&mut id);
            let params = ElicitRequestParams::UrlElicitationParams {
                meta: None,
                message: message.to_owned(),
                url: url.to_owned(),
                elicitation_id: data_encoding::HEXLOWER.encode(&id),
            };
            match self.0.create_elicitation_with_timeout(params, Some(ELICIT_TIMEOUT)).await {
                Ok(r) if r.action == ElicitationAction::Accept => Asked::Accepted,
                Ok(_) => Asked::Declined,
                Err(e) => Asked::Failed(e.to_string()),
            }
        })
    }
}

/// `args` with `given` added to its `params`.
fn with_params(mut args: Value, given: serde_json::Map<String, Value>) -> Value {
    if !args.is_object() {
        args = Value::Object(serde_json::Map::new());
    }
    if let Some(m) = args.as_object_mut() {
        let params = m.entry("params").or_insert_with(|| Value::Object(serde_json::Map::new()));
        if let Some(p) = params.as_object_mut() {
            p.extend(given);
        }
    }
    args
}

/// The client's model, asked through MCP `sampling/createMessage` (the intent
/// guard's `model` detector).
struct PeerSampler(rmcp::Peer<RoleServer>);

#[allow(deprecated)] // sampling is deprecated by SEP-2577 but clients still offer it
impl ochre_host::intent::Sampler for PeerSampler {
    fn ask<'a>(
        &'a self,
        system: &'a str,
        user: &'a str,
    ) -> ochre_host::intent::BoxFuture<'a, Result<String, String>> {
        use rmcp::model::{
            CreateMessageRequestParams, Role, SamplingMessage, SamplingMessageContentBlock,
        };
        Box::pin(async move {
            let params = CreateMessageRequestParams::new(
                vec![SamplingMessage::new(Role::User, SamplingMessageContentBlock::text(user))],
                200,
            )
            .with_system_prompt(system);
            let result = self.0.create_message(params).await.map_err(|e| e.to_string())?;
            let text: Vec<String> = result
                .message
                .content
                .into_vec()
                .into_iter()
                .filter_map(|c| match c {
                    SamplingMessageContentBlock::Text(t) => Some(t.text),
                    _ => None,
                })
                .collect();
            Ok(text.join("\n"))
        })
    }
}

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
