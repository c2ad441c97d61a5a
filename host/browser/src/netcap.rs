//! Network capture per tab (`network_capture`), throttling presets (`network`)
//! and evidence bundles (`oc_evidence_bundle`): host-side page-ops, fed by the
//! tab's CDP network events (see `watch_tab`).

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::network::{
    EventRequestWillBeSent, GetResponseBodyParams, Response, WebSocketFrame,
};
use serde_json::{Map, Value, json};

use super::har::{self, Entry, Timing, WsMessage};
use super::{BrowserManager, TabId, bounded, cdp_error};
use ochre_protocol::ToolError;
use ochre_protocol::lock;
use ochre_protocol::page_ops as typed;

/// Console and network activity of one tab.
#[derive(Default)]
pub(crate) struct TabWatch {
    pub(super) console: std::sync::Mutex<VecDeque<Value>>,
    pub(super) dropped: std::sync::atomic::AtomicU64,
    pub(super) net: std::sync::Mutex<Net>,
    pub(super) capture: std::sync::Mutex<Capture>,
    /// The last console fence the tab's console listener has seen.
    pub(super) console_fence: std::sync::Mutex<u64>,
    /// Told when a console fence passes.
    pub(super) fence_passed: tokio::sync::Notify,
    /// The action being watched (`watch` page op): when it began and how many
    /// requests the tab had started by then.
    pub(super) action: std::sync::Mutex<Option<(Instant, u64)>>,
    /// A navigation's load event whose network-quiet wait is still owed: the
    /// tab's next page call waits for it (quiet counted from the load, so an
    /// agent's next call usually finds it met).
    pub(super) settle_owed: std::sync::Mutex<Option<(Instant, String)>>,
    /// The tab's main frame (its id is the target's).
    pub(super) main_frame: String,
    /// Its performance traces (`performance_trace`).
    pub(super) traces: std::sync::Mutex<super::perftrace::Traces>,
    /// Its videos (`page_video`).
    pub(super) videos: std::sync::Mutex<super::video::Videos>,
    /// How many watch its screencast (the live view, a video).
    pub(super) screencasts: tokio::sync::Mutex<u32>,
}

/// What a top-level document reported two tasks after its load event (see
/// `load_report_js`): its URL, how many requests to the web it had sent by
/// fetch or XHR (none known: its tracker is missing), and how many things its
/// load set going may still be to come (scripts loading, short timers not run
/// yet, animation frames asked).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct AfterLoad {
    pub(super) href: String,
    pub(super) sent: Option<u64>,
    pub(super) still: u64,
}

#[derive(Default)]
pub(super) struct Net {
    /// Request id -> (start, URL).
    pub(super) inflight: HashMap<String, (Instant, String)>,
    /// Requests whose end was seen before their start: each event type arrives on
    /// its own stream, so the order between them is not kept.
    pub(super) ended_early: HashMap<String, Instant>,
    pub(super) last_change: Option<Instant>,
    /// The main frame's document: its loader id (from its navigation request)
    /// and how many fetch and XHR requests to the web it has started (a
    /// redirect is not counted again).
    pub(super) doc: Option<(String, u64)>,
    /// Since the tab's last navigation: the URL of the document that reported
    /// its load event, and its report after the work its load set going.
    pub(super) load_reported: Option<String>,
    pub(super) after_load: Option<AfterLoad>,
    /// Requests started so far (those that count for quiet).
    pub(super) started: u64,
    /// When a websocket frame was last received, and last sent.
    pub(super) ws_received: Option<Instant>,
    pub(super) ws_sent: Option<Instant>,
    /// When a websocket frame last came on the page's own: not while an
    /// action was under way (see `TabWatch::answer_by_socket`).
    pub(super) ws_own: Option<Instant>,
    /// When the action under way began or last sent input (none once it is
    /// answered): frames that come meanwhile are its own (for `ACTING_MAX`
    /// at most).
    pub(super) acting_since: Option<Instant>,
    /// Whether the action under way is answered over a websocket (see
    /// `TabWatch::answer_by_socket`), and, once it is answered, until when
    /// the frames that still come are its late answers (an editor's last
    /// completions), not the page's own.
    pub(super) by_socket: bool,
    pub(super) trail_until: Option<Instant>,
}

/// Requests kept per capture; older ones are dropped (and counted).
const CAPTURE_CAP: usize = 2000;
/// Longest response body returned, per request, in bytes.
const BODY_CAP: usize = 32 * 1024;
/// Most body bytes in one `get`.
const BODIES_TOTAL_CAP: usize = 2 << 20;

/// Most bytes of a request body kept.
const POST_CAP: usize = 256 * 1024;
/// Most messages kept per websocket, and most chars of each.
const WS_CAP: usize = 1000;
const WS_MESSAGE_CAP: usize = 64 * 1024;

/// The capture of one tab.
#[derive(Debug, Default)]
pub(crate) struct Capture {
    active: bool,
    entries: HashMap<String, Entry>,
    next: u64,
    dropped: u64,
    /// Redirect hops kept so far (their entries' keys).
    redirects: u64,
    /// Bytes of the bodies read as their requests finished.
    body_bytes: usize,
    /// The headers each request went with and each response came with, as
    /// the network reported them apart (`…ExtraInfo`), per request id in the
    /// order they came: one per hop of a redirect chain. They are matched
    /// to their hops when a HAR is written (see `Capture::wire_headers`):
    /// those events come on streams of their own, apart from the request's.
    sent_headers: HashMap<String, Vec<Value>>,
    raw_headers: HashMap<String, Vec<(i64, Value)>>,
}

impl Capture {
    /// Give each entry the headers the network reported for it: a request
    /// id's k-th request report to its k-th hop (hops in the order they were
    /// sent); its first response report not yet given, of the hop's status,
    /// to each hop in turn.
    fn wire_headers(&self, list: &mut [(String, Entry)]) {
        let mut hop: HashMap<&str, usize> = HashMap::new();
        let mut given: HashMap<&str, Vec<bool>> = HashMap::new();
        for (key, e) in list.iter_mut() {
            let id = key.split(':').next().unwrap_or(key);
            let k = hop.entry(id).or_default();
            if let Some(h) = self.sent_headers.get(id).and_then(|l| l.get(*k)) {
                e.request_headers_sent = Some(h.clone());
            }
            *k += 1;
            let Some(reports) = self.raw_headers.get(id) else { continue };
            let used = given.entry(id).or_insert_with(|| vec![false; reports.len()]);
            let next = reports
                .iter()
                .enumerate()
                .find(|(i, (status, _))| !used[*i] && e.status == Some(*status));
            if let Some((i, (_, h))) = next {
                used[i] = true;
                e.response_headers_raw = Some(h.clone());
            }
        }
    }
}

/// A URL as kept: its first 2,000 chars.
fn clip(url: &str) -> String {
    url.chars().take(2000).collect()
}

/// The response (and its end) an entry holds, into the entry it belongs to.
fn take_response(e: &mut Entry, x: Entry) {
    e.response_url = x.response_url;
    e.status = x.status;
    e.status_text = x.status_text;
    e.mime_type = x.mime_type;
    e.response_headers = x.response_headers;
    e.protocol = x.protocol;
    e.remote = x.remote;
    e.connection = x.connection;
    e.timing = x.timing;
    e.from_cache = x.from_cache;
    e.encoded_bytes = x.encoded_bytes;
    e.failed = x.failed;
    e.mono_end = x.mono_end;
    e.duration_ms = x.duration_ms;
    e.body = x.body;
}

/// What a response says of itself, into its request's entry.
fn set_response(e: &mut Entry, r: &Response) {
    e.response_url = Some(r.url.clone());
    e.status = Some(r.status);
    e.status_text = Some(r.status_text.clone());
    e.mime_type = Some(r.mime_type.clone());
    e.response_headers = Some(r.headers.inner().clone());
    e.protocol = r.protocol.clone();
    e.remote = r.remote_ip_address.as_ref().map(|ip| ip.trim_matches(['[', ']']).to_owned());
    e.connection = Some(format!("{}", r.connection_id));
    e.from_cache |= r.from_disk_cache == Some(true);
    e.timing = r.timing.as_ref().map(|t| Timing {
        request_time: t.request_time,
        dns: (t.dns_start, t.dns_end),
        connect: (t.connect_start, t.connect_end),
        ssl: (t.ssl_start, t.ssl_end),
        send: (t.send_start, t.send_end),
        headers_end: t.receive_headers_end,
    });
}

impl Capture {
    /// Start afresh: recording, nothing held.
    pub(super) fn restart(&mut self) {
        *self = Capture { active: true, ..Capture::default() };
    }

    /// Stop recording; how many requests it holds.
    pub(super) fn stop(&mut self) -> usize {
        self.active = false;
        self.entries.len()
    }

    /// Let go of what it holds (recording or not as it was); how many.
    pub(super) fn clear(&mut self) -> usize {
        let active = self.active;
        std::mem::replace(self, Capture { active, ..Capture::default() }).entries.len()
    }

    /// Whether it is recording.
    pub(super) fn active(&self) -> bool {
        self.active
    }

    /// How many requests it let go to stay bounded.
    pub(super) fn dropped(&self) -> u64 {
        self.dropped
    }

    /// What it holds, in the order the requests were sent, each with the
    /// headers the network reported for it.
    pub(super) fn in_order(&self) -> Vec<(String, Entry)> {
        let mut list: Vec<(String, Entry)> =
            self.entries.iter().map(|(k, e)| (k.clone(), e.clone())).collect();
        list.sort_by_key(|(_, e)| e.seq);
        self.wire_headers(&mut list);
        list
    }

    fn entry(&mut self, id: &str) -> Option<&mut Entry> {
        if !self.active {
            return None;
        }
        if !self.entries.contains_key(id) {
            if self.entries.len() >= CAPTURE_CAP
                && let Some(oldest) =
                    self.entries.iter().min_by_key(|(_, e)| e.seq).map(|(k, _)| k.clone())
            {
                self.entries.remove(&oldest);
                self.dropped += 1;
            }
            self.next += 1;
            let seq = self.next;
            self.entries.insert(id.to_owned(), Entry { seq, ..Entry::default() });
        }
        self.entries.get_mut(id)
    }
}

impl TabWatch {
    pub(super) fn cap(&self) -> std::sync::MutexGuard<'_, Capture> {
        lock(&self.capture)
    }

    /// A request is sent. One that follows a redirect ends the hop before
    /// it (kept as an entry of its own, with the redirect's response).
    pub(super) fn cap_request(&self, ev: &EventRequestWillBeSent, kind: Option<String>) {
        let id = ev.request_id.inner();
        let mut c = self.cap();
        let mut early = None;
        if let Some(hop) = &ev.redirect_response
            && c.active
            && let Some(mut done) = c.entries.remove(id)
        {
            // The next hop's response came first (its event's stream ran
            // ahead): it is the next hop's, not this one's.
            if done.response_url.as_deref() == Some(ev.request.url.as_str()) {
                early = Some(done.clone());
                (done.encoded_bytes, done.failed, done.body) = (None, None, None);
            }
            set_response(&mut done, hop);
            done.redirect_url = Some(clip(&ev.request.url));
            done.mono_end = Some(*ev.timestamp.inner());
            done.duration_ms = done.started.map(|t| t.elapsed().as_millis() as u64);
            c.redirects += 1;
            let key = format!("{id}:redirect{}", c.redirects);
            c.entries.insert(key, done);
        }
        let Some(e) = c.entry(id) else { return };
        if let Some(x) = early {
            take_response(e, x);
        }
        e.url = Some(clip(&ev.request.url));
        e.method = Some(ev.request.method.clone());
        e.resource_type = kind;
        e.started.get_or_insert_with(Instant::now);
        e.wall = Some(*ev.wall_time.inner());
        e.mono = Some(*ev.timestamp.inner());
        e.request_headers = Some(ev.request.headers.inner().clone());
        if let Some(parts) = &ev.request.post_data_entries {
            let mut body = Vec::new();
            for part in parts {
                let bytes = part.bytes.as_ref().map(|b| {
                    use base64::Engine as _;
                    let text: &str = b.as_ref();
                    base64::engine::general_purpose::STANDARD.decode(text).unwrap_or_default()
                });
                body.extend(bytes.unwrap_or_default());
            }
            e.post_bytes = body.len();
            body.truncate(POST_CAP);
            e.post = Some(body);
        }
    }

    /// A report of the network's (as JSON: see `FrameLink`): the headers a
    /// request went with or a response came with.
    pub(super) fn cap_wire(&self, method: &str, params: &Value) {
        let Some(id) = params["requestId"].as_str() else { return };
        match method {
            "Network.requestWillBeSentExtraInfo" => self.cap_request_sent(id, &params["headers"]),
            "Network.responseReceivedExtraInfo" => {
                let status = params["statusCode"].as_i64().unwrap_or(0);
                self.cap_response_raw(id, status, &params["headers"]);
            }
            _ => {}
        }
    }

    /// The headers a request went with (its cookies among them).
    fn cap_request_sent(&self, id: &str, headers: &Value) {
        let mut c = self.cap();
        if c.active && c.sent_headers.len() < CAPTURE_CAP {
            c.sent_headers.entry(id.to_owned()).or_default().push(headers.clone());
        }
    }

    pub(super) fn cap_response(&self, id: &str, r: &Response) {
        if let Some(e) = self.cap().entry(id) {
            set_response(e, r);
            if e.url.is_none() {
                e.url = Some(clip(&r.url));
            }
            e.started.get_or_insert_with(Instant::now);
        }
    }

    /// The headers a response came with (its cookies among them).
    fn cap_response_raw(&self, id: &str, status: i64, headers: &Value) {
        let mut c = self.cap();
        if c.active && c.raw_headers.len() < CAPTURE_CAP {
            c.raw_headers.entry(id.to_owned()).or_default().push((status, headers.clone()));
        }
    }

    pub(super) fn cap_finished(
        &self,
        id: &str,
        mono: f64,
        encoded: Option<f64>,
        failed: Option<String>,
    ) {
        if let Some(e) = self.cap().entry(id) {
            e.encoded_bytes = encoded;
            e.failed = failed;
            e.mono_end = Some(mono);
            e.duration_ms = e.started.map(|t| t.elapsed().as_millis() as u64);
        }
    }

    /// Whether request `id`'s body is to be read as it finishes: while
    /// capturing, a document's, a fetch's or an XHR's, within the capture's
    /// bound.
    pub(super) fn cap_wants_body(&self, id: &str) -> bool {
        let c = self.cap();
        c.active
            && c.body_bytes < HAR_BODIES_TOTAL_CAP
            && c.entries.get(id).is_some_and(|e| {
                e.failed.is_none()
                    && e.has_body()
                    && matches!(e.resource_type.as_deref(), Some("Document" | "XHR" | "Fetch"))
            })
    }

    /// Request `id`'s body, read as it finished (bounded).
    pub(super) fn cap_body(&self, id: &str, text: String, base64: bool) {
        let mut c = self.cap();
        if text.len() > HAR_BODY_CAP || c.body_bytes + text.len() > HAR_BODIES_TOTAL_CAP {
            return;
        }
        let n = text.len();
        if let Some(e) = c.entries.get_mut(id) {
            e.body = Some((text, base64));
            c.body_bytes += n;
        }
    }

    /// A websocket is made.
    pub(super) fn cap_socket_made(&self, id: &str, url: &str) {
        if let Some(e) = self.cap().entry(id) {
            e.url = Some(clip(url));
            e.method = Some("GET".into());
            e.resource_type = Some("WebSocket".into());
            e.started.get_or_insert_with(Instant::now);
        }
    }

    /// A websocket's handshake is sent (`wall`: when, for its messages'
    /// times).
    pub(super) fn cap_socket(&self, id: &str, mono: f64, wall: f64, headers: &Value) {
        if let Some(e) = self.cap().entry(id) {
            e.method = Some("GET".into());
            e.resource_type = Some("WebSocket".into());
            e.started.get_or_insert_with(Instant::now);
            e.wall = Some(wall);
            e.mono = Some(mono);
            e.request_headers = Some(headers.clone());
        }
    }

    /// A websocket's handshake is answered.
    pub(super) fn cap_socket_open(&self, id: &str, status: i64, text: &str, headers: &Value) {
        if let Some(e) = self.cap().entry(id) {
            e.status = Some(status);
            e.status_text = Some(text.to_owned());
            e.response_headers = Some(headers.clone());
        }
    }

    /// A websocket message, sent or received.
    pub(super) fn cap_socket_message(
        &self,
        id: &str,
        sent: bool,
        mono: f64,
        frame: &WebSocketFrame,
    ) {
        let mut c = self.cap();
        // Only a socket opened while capturing: not one opened before.
        if !c.entries.contains_key(id) {
            return;
        }
        if let Some(e) = c.entry(id) {
            if e.messages.len() >= WS_CAP {
                e.messages_dropped += 1;
                return;
            }
            let data = &frame.payload_data;
            let data = data[..data.floor_char_boundary(WS_MESSAGE_CAP)].to_owned();
            e.messages.push(WsMessage { sent, mono, opcode: frame.opcode, data });
            e.mono_end = Some(mono);
        }
    }

    pub(super) fn cap_cached(&self, id: &str) {
        if let Some(e) = self.cap().entry(id) {
            e.from_cache = true;
        }
    }
}

fn entry_json(id: &str, e: &Entry) -> Value {
    let mut o = Map::new();
    o.insert("requestId".into(), json!(id));
    o.insert("url".into(), json!(e.url));
    o.insert("method".into(), json!(e.method));
    o.insert("type".into(), json!(e.resource_type));
    o.insert("status".into(), json!(e.status));
    o.insert("mimeType".into(), json!(e.mime_type));
    o.insert("durationMs".into(), json!(e.duration_ms));
    o.insert("encodedBytes".into(), json!(e.encoded_bytes));
    if let Some(f) = &e.failed {
        o.insert("failed".into(), json!(f));
    }
    if e.from_cache {
        o.insert("fromCache".into(), json!(true));
    }
    if let Some(to) = &e.redirect_url {
        o.insert("redirectedTo".into(), json!(to));
    }
    if !e.messages.is_empty() {
        o.insert("messages".into(), json!(e.messages.len() as u64 + e.messages_dropped));
    }
    Value::Object(o)
}

impl BrowserManager {
    /// `network_capture` {action: start|stop|get|clear, include_bodies, limit}.
    pub(super) async fn network_capture(
        &self,
        n: TabId,
        w: Option<std::sync::Arc<TabWatch>>,
        page: &Page,
        args: &typed::NetworkCapture,
    ) -> Result<typed::NetworkCaptured, ToolError> {
        use typed::{CapturedRequests, NetworkCaptured};
        match args.scope.as_deref() {
            None | Some("tab") => {}
            Some("session") => return self.session_capture(args).await,
            Some(other) => {
                return Err(ToolError::invalid_argument(
                    "scope",
                    format!("scope {other:?} is not tab or session"),
                ));
            }
        }
        let Some(w) = w else {
            return Err(ToolError::browser_error(
                "this tab is not watched; open it with navigate or tabs_create",
            ));
        };
        match args.action.as_deref().unwrap_or("get") {
            "start" => {
                w.cap().restart();
                self.wire_capture(n, page, &w, true).await;
                Ok(NetworkCaptured { capturing: true, ..NetworkCaptured::default() })
            }
            "stop" => {
                let held = w.cap().stop();
                self.wire_capture(n, page, &w, false).await;
                let requests = Some(CapturedRequests::Count(held));
                Ok(NetworkCaptured { capturing: false, requests, ..NetworkCaptured::default() })
            }
            "clear" => {
                let mut c = w.cap();
                let cleared = Some(c.clear());
                Ok(NetworkCaptured { cleared, capturing: c.active, ..NetworkCaptured::default() })
            }
            "get" => {
                let (list, total, dropped, capturing) = {
                    let c = w.cap();
                    (c.in_order(), c.entries.len(), c.dropped, c.active)
                };
                let items = list.into_iter().map(|(id, e)| (None, Some(page.clone()), id, e));
                let out =
                    listed(items.collect(), args.limit, args.include_bodies == Some(true)).await;
                Ok(NetworkCaptured {
                    capturing,
                    total: Some(total),
                    dropped: Some(dropped),
                    requests: Some(CapturedRequests::List(out)),
                    ..NetworkCaptured::default()
                })
            }
            "har" => self.write_har(&w, page, args.include_bodies != Some(false)).await,
            other => Err(ToolError::invalid_argument(
                "action",
                format!("network_capture action {other:?} is not start, stop, get, clear or har"),
            )),
        }
    }
}

/// One captured request for `get`: its tab (said as `tabId` when given),
/// the page its body may be read from, its key and entry.
pub(super) type Listed = (Option<TabId>, Option<Page>, String, Entry);

/// `get`'s answer: the last `limit` (default 200) of `items` (in order) as
/// JSON, with the bodies of text responses when `bodies` (those kept, else
/// read from their page; bounded each and in all).
pub(super) async fn listed(items: Vec<Listed>, limit: Option<u32>, bodies: bool) -> Vec<Value> {
    let limit = limit.map_or(200, |l| l as usize).clamp(1, CAPTURE_CAP);
    let skip = items.len().saturating_sub(limit);
    let mut out = Vec::with_capacity(items.len() - skip);
    let mut budget = BODIES_TOTAL_CAP;
    for (tab, page, id, e) in items.into_iter().skip(skip) {
        let mut j = entry_json(&id, &e);
        if let Some(t) = tab {
            j["tabId"] = json!(t.to_string());
        }
        if bodies && e.failed.is_none() && e.status.is_some() && e.has_body() && budget > 0 {
            let read = match (e.body.clone(), &page) {
                (Some(b), _) => Ok(b),
                (None, Some(page)) => body(page, &id).await,
                (None, None) => Err(ToolError::browser_error("its tab closed")),
            };
            match read {
                Ok((text, b64)) if b64 => {
                    j["body"] = Value::Null;
                    j["bodyOmitted"] = json!(format!("binary, {} base64 chars", text.len()));
                }
                Ok((text, _)) => {
                    let cap = BODY_CAP.min(budget);
                    let cut = text.floor_char_boundary(cap);
                    budget -= cut;
                    if cut < text.len() {
                        j["bodyTruncated"] = json!(true);
                        j["bodyBytes"] = json!(text.len());
                    }
                    j["body"] = json!(&text[..cut]);
                }
                Err(e) => j["bodyOmitted"] = json!(format!("not available: {}", e.message)),
            }
        }
        out.push(j);
    }
    out
}

/// Longest response body a HAR holds, in bytes (text, or base64 for binary).
const HAR_BODY_CAP: usize = 1 << 20;
/// Most body bytes in one HAR, and the longest time spent reading them.
const HAR_BODIES_TOTAL_CAP: usize = 32 << 20;
const HAR_BODIES_TIME: std::time::Duration = std::time::Duration::from_secs(20);

impl BrowserManager {
    /// `text` without the host's known secrets (what a file the browser
    /// writes is scrubbed with).
    pub(super) fn scrub(&self, text: &str) -> String {
        self.inner.scrubber.get().map_or_else(|| text.to_owned(), |f| f(text))
    }

    /// While tab `n` is captured, the network's reports of the headers its
    /// requests went with and its responses came with (`Cookie`, `Host`,
    /// `Set-Cookie`: `…ExtraInfo`) reach its capture over the host's own
    /// connection, as JSON: chromiumoxide's types for them lag Chromium's
    /// (a renderer's request carries a `clientSecurityState` they cannot
    /// read), and such an event would be lost. Best effort: without that
    /// connection the headers are those the page asked for.
    pub(super) async fn wire_capture(
        &self,
        n: TabId,
        page: &Page,
        w: &std::sync::Arc<TabWatch>,
        on: bool,
    ) {
        let target = page.target_id().as_ref().to_owned();
        let link = match self.frame_link(self.slot_of_tab(n)).await {
            Ok(l) => l,
            Err(e) => {
                tracing::debug!(error = %e.message, "no second connection for the capture's headers");
                return;
            }
        };
        let method = if on { "Network.enable" } else { "Network.disable" };
        match link.send(&target, method, json!({})).await {
            Ok(_) => link.wire(w, on),
            Err(e) => {
                link.wire(w, false);
                tracing::debug!(error = %e.message, method, "the capture's headers");
            }
        }
    }

    /// Where evidence bundles and HAR files go.
    pub(super) fn evidence_root(&self) -> Result<std::path::PathBuf, ToolError> {
        self.inner.options.evidence_dir.clone().ok_or_else(|| {
            ToolError::browser_error("no evidence dir is configured (BrowserOptions::evidence_dir)")
        })
    }

    /// A new file's path in the evidence dir: `<kind>-<stamp>-<random>.<ext>`.
    pub(super) fn evidence_path(
        &self,
        kind: &str,
        ext: &str,
    ) -> Result<std::path::PathBuf, ToolError> {
        let name = bundle_id(std::time::SystemTime::now()).replacen("ev-", &format!("{kind}-"), 1);
        Ok(self.evidence_root()?.join(format!("{name}.{ext}")))
    }

    /// A file in the evidence dir (`<kind>-<stamp>-<random>.<ext>`), written
    /// atomically; its absolute path.
    pub(super) fn write_evidence_file(
        &self,
        kind: &str,
        ext: &str,
        bytes: &[u8],
    ) -> Result<String, ToolError> {
        let file = self.evidence_path(kind, ext)?;
        let root = file.parent().unwrap_or(&file);
        std::fs::create_dir_all(root)
            .and_then(|()| ochre_protocol::fs::write_atomic(&file, bytes))
            .map_err(|e| {
                ToolError::storage_failed(format!("cannot write {}: {e}", file.display()))
            })?;
        Ok(std::path::absolute(&file).unwrap_or(file).display().to_string())
    }

    /// `network_capture har`: what tab `w`'s capture holds, written as a
    /// HAR file in the evidence dir.
    async fn write_har(
        &self,
        w: &TabWatch,
        page: &Page,
        bodies: bool,
    ) -> Result<typed::NetworkCaptured, ToolError> {
        self.evidence_root()?;
        let (bytes, mut written) = self.har_bytes(w, page, bodies).await?;
        written.path = self.write_evidence_file("har", "har", &bytes)?;
        let capturing = w.cap().active;
        Ok(typed::NetworkCaptured { capturing, har: Some(written), ..Default::default() })
    }

    /// What tab `w`'s capture holds as a HAR file's bytes (with the bodies
    /// the page still has, bounded, when `bodies`), its secrets masked; and
    /// what it holds (its `path` left to the caller).
    async fn har_bytes(
        &self,
        w: &TabWatch,
        page: &Page,
        bodies: bool,
    ) -> Result<(Vec<u8>, typed::HarWritten), ToolError> {
        let (list, active) = {
            let c = w.cap();
            (c.in_order(), c.active)
        };
        if list.is_empty() && !active {
            return Err(ToolError::browser_error(
                "nothing is captured on this tab: network_capture start first, then har",
            ));
        }
        let title = page.get_title().await.ok().flatten().unwrap_or_default();
        let page = Some(page.clone());
        let source = HarSource { id: "page_1".into(), title, list, page, comment: None };
        Ok(self.har_of(vec![source], bodies).await)
    }

    /// `sources` as one HAR file's bytes, a page each (with the bodies kept,
    /// or their page still has, bounded, when `bodies`), its secrets masked;
    /// and what it holds (its `path` left to the caller).
    pub(super) async fn har_of(
        &self,
        sources: Vec<HarSource>,
        bodies: bool,
    ) -> (Vec<u8>, typed::HarWritten) {
        let pages: Vec<har::HarPage> = sources
            .iter()
            .map(|s| {
                let started =
                    s.list.iter().filter_map(|(_, e)| e.wall).fold(f64::INFINITY, f64::min);
                let started = if started.is_finite() { started } else { now_seconds() };
                let (id, title, comment) = (s.id.clone(), s.title.clone(), s.comment.clone());
                har::HarPage { id, title, started, comment }
            })
            .collect();
        let mut budget = HAR_BODIES_TOTAL_CAP;
        let by = Instant::now() + HAR_BODIES_TIME;
        let mut entries = Vec::with_capacity(sources.iter().map(|s| s.list.len()).sum());
        let mut with_body = 0;
        for source in sources {
            for (id, e) in source.list {
                let readable = e.failed.is_none() && e.status.is_some() && e.has_body();
                let mut read = None;
                let kept = e.body.clone();
                if bodies
                    && readable
                    && budget > 0
                    && let Some((text, base64)) = match (kept, &source.page) {
                        (Some(b), _) => Some(b),
                        (None, Some(page)) if Instant::now() < by => body(page, &id).await.ok(),
                        _ => None,
                    }
                    && text.len() <= HAR_BODY_CAP.min(budget)
                {
                    budget -= text.len();
                    with_body += 1;
                    read = Some(har::Body { text, base64 });
                }
                entries.push((id, e, source.id.clone(), read));
            }
        }
        let scrub = |t: &str| self.scrub(t);
        let (log, masked) = har::har(&pages, &entries, &scrub);
        let bytes = serde_json::to_vec_pretty(&log).unwrap_or_default();
        let count = log["log"]["entries"].as_array().map_or(0, Vec::len);
        let written = typed::HarWritten {
            path: String::new(),
            entries: count,
            bodies: with_body,
            masked,
            bytes: bytes.len(),
        };
        (bytes, written)
    }
}

/// One page of a HAR file: a tab's captured requests.
pub(super) struct HarSource {
    /// Its id in the file, and its title.
    pub(super) id: String,
    pub(super) title: String,
    /// Its requests, in order (see `Capture::in_order`).
    pub(super) list: Vec<(String, Entry)>,
    /// Its page while the tab is open: bodies not kept are read from it.
    pub(super) page: Option<Page>,
    /// What a reader should know of it (the page's `comment`).
    pub(super) comment: Option<String>,
}

fn now_seconds() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Request `id`'s response body as Chromium holds it: text, or base64 (`true`).
pub(super) async fn body(page: &Page, id: &str) -> Result<(String, bool), ToolError> {
    let r = bounded(5_000, "Network.getResponseBody", async {
        page.execute(GetResponseBodyParams::new(id.to_owned()))
            .await
            .map_err(|e| cdp_error("Network.getResponseBody", e))
    })
    .await?;
    Ok((r.result.body.clone(), r.result.base64_encoded))
}

impl BrowserManager {
    /// `evidence_bundle` {include: [dom, screenshot, network, console]}: writes
    /// `<evidence dir>/<id>/` (each file atomically, `manifest.json` last) and
    /// returns the manifest with the bundle's path.
    pub(super) async fn evidence_bundle(
        &self,
        n: TabId,
        page: &Page,
        args: &typed::EvidenceBundle,
    ) -> Result<typed::BundleManifest, ToolError> {
        let root = self.evidence_root()?;
        let include = evidence_parts(args.include.as_deref())?;
        let now = std::time::SystemTime::now();
        let id = bundle_id(now);
        let dir = root.join(&id);
        std::fs::create_dir_all(&dir).map_err(|e| {
            ToolError::storage_failed(format!("cannot create {}: {e}", dir.display()))
        })?;
        let url = crate::frame_url(page).await;
        let title = page.get_title().await.ok().flatten().unwrap_or_default();
        let mut files = Vec::new();
        let mut write = |name: &str, bytes: &[u8]| -> Result<(), ToolError> {
            ochre_protocol::fs::write_atomic(&dir.join(name), bytes)
                .map_err(|e| ToolError::storage_failed(format!("cannot write {name}: {e}")))?;
            use sha2::Digest;
            let sum = sha2::Sha256::digest(bytes);
            let sha256 = data_encoding::HEXLOWER.encode(&sum);
            files.push(typed::BundleFile { name: name.to_owned(), bytes: bytes.len(), sha256 });
            Ok(())
        };
        for what in &include {
            let (name, bytes) = self.evidence_part(n, page, what).await?;
            write(name, &bytes)?;
            // The network as a HAR too, when this tab's is captured.
            if what == "network"
                && let Some(w) = self.tab_watch(n)
                && !w.cap().entries.is_empty()
            {
                let (har, _) = self.har_bytes(&w, page, true).await?;
                write("network.har", &har)?;
            }
            // And the session's, when it is captured session-wide.
            if what == "network"
                && let Some(har) = self.session_har_bytes().await
            {
                write("session.har", &har)?;
            }
        }
        // The tab's last performance trace, when one was taken.
        if let Some(trace) = self.last_trace(n) {
            write("trace.json", &trace)?;
        }
        // And its last video, when one was recorded (and its WebM copy).
        if let Some((mkv, webm)) = self.last_video(n) {
            if let Ok(video) = std::fs::read(mkv) {
                write("video.mkv", &video)?;
            }
            if let Some(video) = webm.and_then(|p| std::fs::read(p).ok()) {
                write("video.webm", &video)?;
            }
        }
        let manifest = typed::BundleManifest {
            bundle_id: id,
            path: std::path::absolute(&dir).unwrap_or(dir.clone()).display().to_string(),
            tab_id: n.to_string(),
            url,
            title,
            created_at: humantime::format_rfc3339_millis(now).to_string(),
            files,
        };
        ochre_protocol::fs::write_atomic(
            &dir.join("manifest.json"),
            &serde_json::to_vec_pretty(&manifest).unwrap_or_default(),
        )
        .map_err(|e| ToolError::storage_failed(format!("cannot write manifest.json: {e}")))?;
        Ok(manifest)
    }

    /// One part of an evidence bundle: its file name and bytes.
    async fn evidence_part(
        &self,
        n: TabId,
        page: &Page,
        what: &str,
    ) -> Result<(&'static str, Vec<u8>), ToolError> {
        Ok(match what {
            "dom" => {
                let html = bounded(10_000, "reading the DOM", async {
                    page.content().await.map_err(|e| cdp_error("reading the DOM", e))
                })
                .await?;
                ("dom.html", self.scrub(&html).into_bytes())
            }
            "screenshot" => {
                let png = self.screenshot(Some(n), false, None, None).await?;
                ("screenshot.png", png)
            }
            "network" => {
                let net = self
                    .network_capture(
                        n,
                        self.tab_watch(n),
                        page,
                        &typed::NetworkCapture {
                            action: Some("get".into()),
                            limit: Some(2000),
                            ..Default::default()
                        },
                    )
                    .await?;
                let text = serde_json::to_string_pretty(&net).unwrap_or_default();
                ("network.json", self.scrub(&text).into_bytes())
            }
            _ => {
                let console = self.console_messages(
                    n,
                    &typed::Console { limit: Some(1000), ..Default::default() },
                );
                let text = serde_json::to_string_pretty(&console).unwrap_or_default();
                ("console.json", self.scrub(&text).into_bytes())
            }
        })
    }
}

/// The parts an evidence bundle asks for (`include`; default: all).
fn evidence_parts(include: Option<&[String]>) -> Result<Vec<String>, ToolError> {
    let include: Vec<String> = match include {
        Some(a) => a.to_vec(),
        None => ["dom", "screenshot", "network", "console"].map(String::from).to_vec(),
    };
    if let Some(bad) =
        include.iter().find(|i| !matches!(i.as_str(), "dom" | "screenshot" | "network" | "console"))
    {
        return Err(ToolError::invalid_argument(
            "include",
            format!("{bad:?} is not dom, screenshot, network or console"),
        ));
    }
    Ok(include)
}

/// `ev-<date>-<time>-<6 hex>`.
fn bundle_id(now: std::time::SystemTime) -> String {
    let stamp: String = humantime::format_rfc3339_seconds(now)
        .to_string()
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    let mut raw = [0u8; 3];
    let _ = getrandom::fill(&mut raw);
    format!(
        "ev-{}-{}-{:02x}{:02x}{:02x}",
        &stamp[..8.min(stamp.len())],
        &stamp[8.min(stamp.len())..],
        raw[0],
        raw[1],
        raw[2]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(url: &str, status: i64) -> Value {
        json!({"url": url, "status": status, "statusText": "", "headers": {}, "mimeType": "text/html",
            "charset": "", "connectionReused": false, "connectionId": 1.0, "encodedDataLength": 10.0,
            "securityState": "insecure"})
    }

    fn sent(url: &str, method: &str, t: f64, redirect: Option<Value>) -> EventRequestWillBeSent {
        let mut ev = json!({"requestId": "7", "loaderId": "L", "documentURL": url,
            "request": {"url": url, "method": method, "headers": {}, "initialPriority": "High",
                "referrerPolicy": "no-referrer"},
            "timestamp": t, "wallTime": 1_700_000_000.0 + t, "initiator": {"type": "other"},
            "redirectHasExtraInfo": false, "type": "Document"});
        if let Some(r) = redirect {
            ev["redirectResponse"] = r;
        }
        serde_json::from_value(ev).expect("an event")
    }

    /// A redirect's hop is an entry of its own; a final response handled
    /// before the redirect (each event type comes on a stream of its own)
    /// goes to its own hop; the network's header reports go to their hops in
    /// order, a response's only to a hop of its status.
    #[test]
    fn each_hop_of_a_redirect_keeps_its_own_response_and_headers() {
        let w = TabWatch::default();
        w.cap().active = true;
        w.cap_request(&sent("http://a.test/login", "POST", 1.0, None), Some("Document".into()));
        // The final response overtakes the redirect.
        let last: Response =
            serde_json::from_value(response("http://a.test/home", 200)).expect("r");
        w.cap_response("7", &last);
        let hop = response("http://a.test/login", 302);
        w.cap_request(&sent("http://a.test/home", "GET", 2.0, Some(hop)), Some("Document".into()));
        w.cap_wire(
            "Network.requestWillBeSentExtraInfo",
            &json!({"requestId": "7", "headers": {"A": "1"}}),
        );
        w.cap_wire(
            "Network.requestWillBeSentExtraInfo",
            &json!({"requestId": "7", "headers": {"B": "2"}}),
        );
        let raw = json!({"requestId": "7", "statusCode": 200, "headers": {"C": "3"}});
        w.cap_wire("Network.responseReceivedExtraInfo", &raw);
        let c = w.cap();
        let list = c.in_order();
        let [(k0, first), (k1, second)] = &list[..] else { panic!("two entries: {list:?}") };
        assert_eq!((k0.as_str(), k1.as_str()), ("7:redirect1", "7"));
        assert_eq!(first.url.as_deref(), Some("http://a.test/login"));
        assert_eq!(first.status, Some(302));
        assert_eq!(first.redirect_url.as_deref(), Some("http://a.test/home"));
        assert_eq!(second.url.as_deref(), Some("http://a.test/home"));
        assert_eq!((second.status, second.method.as_deref()), (Some(200), Some("GET")));
        assert_eq!(first.request_headers_sent, Some(json!({"A": "1"})));
        assert_eq!(second.request_headers_sent, Some(json!({"B": "2"})));
        // The 200's report is the final hop's, not the 302's.
        assert_eq!(first.response_headers_raw, None);
        assert_eq!(second.response_headers_raw, Some(json!({"C": "3"})));
    }
}
