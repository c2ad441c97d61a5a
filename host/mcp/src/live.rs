//! ochre's pages for people: the live view of a handed-over tab
//! (`/live/<token>`: the tab's screen as it changes, the person's mouse,
//! wheel and keys sent to it, and "Done") and the page that asks for a
//! secret (`/ask/<token>`: the value goes from the person's browser to ochre,
//! never through the MCP client). Served on the MCP HTTP server, or (stdio) on
//! a loopback listener of their own, bound at the first need. A link works
//! only while its hand-off or ask lasts; any other path is refused.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use futures::Stream;
use serde_json::{Value, json};

use ochre_host::people::{Ended, Handoff};
use ochre_host::{Host, HostBrowser};
use ochre_protocol::ToolError;
use ochre_protocol::browser::{FrameSink, ScreenFrame};
use ochre_protocol::page_ops::Gestures;

/// What the pages' handlers share.
#[derive(Clone)]
struct Pages {
    host: Host,
    /// The `Host` names the pages answer to (DNS rebinding).
    hosts: Arc<Vec<String>>,
}

/// The routes of the pages for people, answering only to `hosts` (the
/// `Host` header's name: loopback names and the ones the operator allows).
pub fn routes(host: Host, hosts: Vec<String>) -> axum::Router {
    let pages = Pages { host, hosts: Arc::new(hosts) };
    axum::Router::new()
        .route("/live/{token}", get(live_page))
        .route("/live/{token}/frames", get(frames))
        .route("/live/{token}/input", post(input))
        .route("/live/{token}/record", post(record))
        .route("/live/{token}/done", post(done))
        .route("/ask/{token}", get(ask_page).post(answer))
        .layer(axum::middleware::from_fn(private))
        .with_state(pages)
}

/// Pages that must not be cached, framed or leak their link as a referrer.
async fn private(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; img-src data:; style-src 'unsafe-inline'; \
             script-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; form-action 'none'",
        ),
    );
    res
}

/// Serve the pages on a loopback listener of their own when first needed
/// (a stdio server has no HTTP server); nothing is bound until then.
pub fn serve_on_demand(host: &Host) {
    let weak = Arc::downgrade(host.people());
    let owner = host.clone();
    host.people().serve_on_demand(Arc::new(move || {
        let host = owner.clone();
        let alive = weak.upgrade().is_some();
        Box::pin(async move {
            if !alive {
                return Err("the server is shutting down".to_owned());
            }
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
                .await
                .map_err(|e| format!("binding 127.0.0.1: {e}"))?;
            let addr = listener.local_addr().map_err(|e| e.to_string())?;
            let hosts = vec!["localhost".into(), "127.0.0.1".into()];
            let app = routes(host, hosts);
            tokio::spawn(async move {
                if let Err(e) = axum::serve(listener, app).await {
                    tracing::warn!(error = %e, "the pages for people stopped");
                }
            });
            tracing::info!(%addr, "serving the pages for people (live view, secrets)");
            Ok(format!("http://{addr}"))
        })
    }));
}

/// A refusal: a status and a line of text.
fn refuse(status: StatusCode, why: &str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], why.to_owned()).into_response()
}

/// The link's hand-off, if the request may reach it.
fn handoff_of(
    p: &Pages,
    headers: &HeaderMap,
    token: &str,
) -> Result<Arc<Handoff>, (StatusCode, &'static str)> {
    if !crate::origin::host_allowed(headers, &p.hosts) {
        return Err((StatusCode::FORBIDDEN, "forbidden Host"));
    }
    p.host.people().handoff(token).ok_or((
        StatusCode::NOT_FOUND,
        "This link is not valid: it is wrong, or its hand-off ended.",
    ))
}

/// The link's hand-off, for a request that changes something: it comes from
/// the live view itself (no other site's page may send it). An extractor;
/// what it refuses is answered in plain text.
struct Changing(Arc<Handoff>);

impl FromRequestParts<Pages> for Changing {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, p: &Pages) -> Result<Self, Response> {
        let Path(token) = Path::<String>::from_request_parts(parts, p)
            .await
            .map_err(IntoResponse::into_response)?;
        let h = handoff_of(p, &parts.headers, &token).map_err(|(s, why)| refuse(s, why))?;
        if !crate::origin::same_origin(&parts.headers) {
            return Err(refuse(StatusCode::FORBIDDEN, "this comes from the live view only"));
        }
        Ok(Changing(h))
    }
}

/// A tool error as an answer with `status`.
fn failed(status: StatusCode, e: &ToolError) -> Response {
    (status, axum::Json(json!({"error": {"code": e.code, "message": e.message}}))).into_response()
}

/// Text as HTML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

async fn live_page(
    State(p): State<Pages>,
    headers: HeaderMap,
    Path(token): Path<String>,
) -> Response {
    let h = match handoff_of(&p, &headers, &token) {
        Ok(h) => h,
        Err((status, why)) => return refuse(status, why),
    };
    let page = LIVE_HTML
        .replace("{{REASON}}", &esc(&h.reason))
        .replace("{{TAB}}", &esc(&h.tab.to_string()))
        .replace("{{SECONDS}}", &h.remaining_s().to_string());
    Html(page).into_response()
}

/// Frames go to the page through a `watch`: a slow page skips frames, never
/// falls behind.
struct ToPage(tokio::sync::watch::Sender<Option<ScreenFrame>>);

impl FrameSink for ToPage {
    fn frame(&mut self, frame: ScreenFrame) -> bool {
        self.0.send(Some(frame)).is_ok()
    }

    fn watching(&self) -> bool {
        !self.0.is_closed()
    }
}

async fn frames(
    State(p): State<Pages>,
    headers: HeaderMap,
    Path(token): Path<String>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, Response> {
    let h = handoff_of(&p, &headers, &token).map_err(|(s, w)| refuse(s, w))?;
    let (tx, rx) = tokio::sync::watch::channel(None);
    {
        let host = p.host.clone();
        let tab = h.tab;
        tokio::spawn(async move {
            if let Err(e) = host.browser().watch_tab(tab, Box::new(ToPage(tx))).await {
                tracing::warn!(%tab, error = %e.message, "the live view lost the tab's screen");
            }
        });
    }
    let stream = futures::stream::unfold((rx, Some(h)), |(mut rx, h)| async move {
        let h = h?;
        tokio::select! {
            changed = rx.changed() => {
                let event = match changed {
                    Ok(()) => {
                        let frame = rx.borrow_and_update().clone();
                        let data = serde_json::to_string(&frame).unwrap_or_default();
                        Event::default().event("frame").data(data)
                    }
                    // The tab closed.
                    Err(_) => Event::default().event("ended").data(r#"{"status":"closed"}"#),
                };
                let next = if changed.is_ok() { Some(h) } else { None };
                Some((Ok(event), (rx, next)))
            }
            how = h.wait(Duration::from_secs(3600)) => {
                let status = how.map_or("expired", Ended::as_str);
                let data = json!({"status": status}).to_string();
                Some((Ok(Event::default().event("ended").data(data)), (rx, None)))
            }
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

async fn input(State(p): State<Pages>, Changing(h): Changing, body: axum::body::Bytes) -> Response {
    // `{"events": [...]}`: the `gestures` page operation's events.
    let events = match serde_json::from_slice::<Gestures>(&body) {
        Ok(i) if i.events.len() <= 200 => i.events,
        Ok(_) => return refuse(StatusCode::BAD_REQUEST, "at most 200 events at once"),
        Err(e) => return refuse(StatusCode::BAD_REQUEST, &format!("bad input: {e}")),
    };
    match p.host.person_input(&h, events).await {
        Ok(()) => axum::Json(json!({"ok": true})).into_response(),
        Err(e) => failed(StatusCode::UNPROCESSABLE_ENTITY, &e),
    }
}

/// Start (`{"action": "start"}`) or stop (`{"action": "stop"}`) recording a
/// demonstration: the recording starts on the page as it is (a `navigate`
/// to its URL is its first step).
async fn record(
    State(p): State<Pages>,
    Changing(h): Changing,
    body: axum::body::Bytes,
) -> Response {
    let action = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v["action"].as_str().map(str::to_owned));
    let r = match action.as_deref() {
        Some("start") => p.host.start_demonstration(&h).await.map(|id| json!({"recordingId": id})),
        Some("stop") => p.host.stop_demonstration(&h).await.map(|id| json!({"recordingId": id})),
        _ => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "send {\"action\": \"start\"} or {\"action\": \"stop\"}",
            );
        }
    };
    match r {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => failed(StatusCode::CONFLICT, &e),
    }
}

async fn done(State(p): State<Pages>, Changing(h): Changing) -> Response {
    if let Err(e) = p.host.stop_demonstration(&h).await {
        tracing::warn!(error = %e.message, "the demonstration did not end cleanly");
    }
    h.end(Ended::Done);
    p.host.browser().release_tab(h.tab);
    axum::Json(json!({"ok": true})).into_response()
}

async fn ask_page(
    State(p): State<Pages>,
    headers: HeaderMap,
    Path(token): Path<String>,
) -> Response {
    if !crate::origin::host_allowed(&headers, &p.hosts) {
        return refuse(StatusCode::FORBIDDEN, "forbidden Host");
    }
    let Some(ask) = p.host.people().asked(&token) else {
        return refuse(
            StatusCode::NOT_FOUND,
            "This link is not valid: it is wrong, expired, or was answered.",
        );
    };
    let fields: String = ask
        .names
        .iter()
        .map(|n| {
            let n = esc(n);
            // A username is seen as typed; what is secret by name is not.
            let kind =
                if ochre_protocol::tool::is_sensitive_name(&n) { "password" } else { "text" };
            format!("<label>{n}<input type={kind} name=\"{n}\" autocomplete=off required></label>")
        })
        .collect();
    let page = ASK_HTML.replace("{{TOOL}}", &esc(&ask.tool)).replace("{{FIELDS}}", &fields);
    Html(page).into_response()
}

async fn answer(
    State(p): State<Pages>,
    headers: HeaderMap,
    Path(token): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    if !crate::origin::host_allowed(&headers, &p.hosts) {
        return refuse(StatusCode::FORBIDDEN, "forbidden Host");
    }
    if !crate::origin::same_origin(&headers) {
        return refuse(StatusCode::FORBIDDEN, "answers come from ochre's page only");
    }
    let values: BTreeMap<String, String> = match serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| serde_json::from_value(v.get("values")?.clone()).ok())
    {
        Some(v) => v,
        None => return refuse(StatusCode::BAD_REQUEST, "send {\"values\": {name: value}}"),
    };
    match p.host.people().answer(&token, values) {
        Ok(()) => axum::Json(json!({"ok": true})).into_response(),
        Err(why) => refuse(StatusCode::BAD_REQUEST, &why),
    }
}

/// The live view: the tab's screen, the person's input, "Done".
const LIVE_HTML: &str = include_str!("live.html");

/// The page that asks for secrets.
const ASK_HTML: &str = include_str!("ask.html");
