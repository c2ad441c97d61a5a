//! Network capture per tab (`network_capture`), throttling presets (`network`)
//! and evidence bundles (`oc_evidence_bundle`): host-side page-ops, fed by the
//! tab's CDP network events (see `watch_tab`).

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::network::GetResponseBodyParams;
use serde_json::{Map, Value, json};

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

/// One captured request.
#[derive(Debug, Default, Clone)]
struct Entry {
    seq: u64,
    url: Option<String>,
    method: Option<String>,
    resource_type: Option<String>,
    started: Option<Instant>,
    status: Option<i64>,
    mime_type: Option<String>,
    duration_ms: Option<u64>,
    encoded_bytes: Option<f64>,
    failed: Option<String>,
    from_cache: bool,
}

/// The capture of one tab.
#[derive(Debug, Default)]
pub(crate) struct Capture {
    active: bool,
    entries: HashMap<String, Entry>,
    next: u64,
    dropped: u64,
}

impl Capture {
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
    fn cap(&self) -> std::sync::MutexGuard<'_, Capture> {
        lock(&self.capture)
    }

    pub(super) fn cap_request(&self, id: &str, url: &str, method: &str, kind: Option<String>) {
        if let Some(e) = self.cap().entry(id) {
            e.url = Some(url.chars().take(2000).collect());
            e.method = Some(method.to_owned());
            e.resource_type = kind;
            e.started.get_or_insert_with(Instant::now);
        }
    }

    pub(super) fn cap_response(&self, id: &str, status: i64, mime: &str, url: &str) {
        if let Some(e) = self.cap().entry(id) {
            e.status = Some(status);
            e.mime_type = Some(mime.to_owned());
            if e.url.is_none() {
                e.url = Some(url.chars().take(2000).collect());
            }
            e.started.get_or_insert_with(Instant::now);
        }
    }

    pub(super) fn cap_finished(&self, id: &str, encoded: Option<f64>, failed: Option<String>) {
        if let Some(e) = self.cap().entry(id) {
            e.encoded_bytes = encoded;
            e.failed = failed;
            e.duration_ms = e.started.map(|t| t.elapsed().as_millis() as u64);
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
    Value::Object(o)
}

impl BrowserManager {
    /// `network_capture` {action: start|stop|get|clear, include_bodies, limit}.
    pub(super) async fn network_capture(
        &self,
        w: Option<std::sync::Arc<TabWatch>>,
        page: &Page,
        args: &typed::NetworkCapture,
    ) -> Result<typed::NetworkCaptured, ToolError> {
        use typed::{CapturedRequests, NetworkCaptured};
        let Some(w) = w else {
            return Err(ToolError::browser_error(
                "this tab is not watched; open it with navigate or tabs_create",
            ));
        };
        match args.action.as_deref().unwrap_or("get") {
            "start" => {
                let mut c = w.cap();
                *c = Capture { active: true, ..Capture::default() };
                Ok(NetworkCaptured { capturing: true, ..NetworkCaptured::default() })
            }
            "stop" => {
                let mut c = w.cap();
                c.active = false;
                let requests = Some(CapturedRequests::Count(c.entries.len()));
                Ok(NetworkCaptured { capturing: false, requests, ..NetworkCaptured::default() })
            }
            "clear" => {
                let mut c = w.cap();
                let n = c.entries.len();
                c.entries.clear();
                c.dropped = 0;
                Ok(NetworkCaptured {
                    cleared: Some(n),
                    capturing: c.active,
                    ..NetworkCaptured::default()
                })
            }
            "get" => {
                let limit = args.limit.map_or(200, |l| l as usize).clamp(1, CAPTURE_CAP);
                let (mut list, total, dropped, capturing) = {
                    let c = w.cap();
                    let mut list: Vec<(String, Entry)> =
                        c.entries.iter().map(|(k, e)| (k.clone(), e.clone())).collect();
                    list.sort_by_key(|(_, e)| e.seq);
                    (list, c.entries.len(), c.dropped, c.active)
                };
                let skip = list.len().saturating_sub(limit);
                list.drain(..skip);
                let mut out = Vec::with_capacity(list.len());
                let mut budget = BODIES_TOTAL_CAP;
                for (id, e) in &list {
                    let mut j = entry_json(id, e);
                    if args.include_bodies == Some(true)
                        && e.failed.is_none()
                        && e.status.is_some()
                        && budget > 0
                    {
                        match body(page, id).await {
                            Ok((text, b64)) if b64 => {
                                j["body"] = Value::Null;
                                j["bodyOmitted"] =
                                    json!(format!("binary, {} base64 chars", text.len()));
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
                            Err(e) => {
                                j["bodyOmitted"] = json!(format!("not available: {}", e.message))
                            }
                        }
                    }
                    out.push(j);
                }
                Ok(NetworkCaptured {
                    capturing,
                    total: Some(total),
                    dropped: Some(dropped),
                    cleared: None,
                    requests: Some(CapturedRequests::List(out)),
                })
            }
            other => Err(ToolError::invalid_argument(
                "action",
                format!("network_capture action {other:?} is not start, stop, get or clear"),
            )),
        }
    }
}

async fn body(page: &Page, id: &str) -> Result<(String, bool), ToolError> {
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
        let Some(root) = self.inner.options.evidence_dir.clone() else {
            return Err(ToolError::browser_error(
                "no evidence dir is configured (BrowserOptions::evidence_dir)",
            ));
        };
        let include = evidence_parts(args.include.as_deref())?;
        let now = std::time::SystemTime::now();
        let id = bundle_id(now);
        let dir = root.join(&id);
        std::fs::create_dir_all(&dir).map_err(|e| {
            ToolError::storage_failed(format!("cannot create {}: {e}", dir.display()))
        })?;
        let url = page.url().await.ok().flatten().unwrap_or_default();
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
                ("dom.html", html.into_bytes())
            }
            "screenshot" => {
                let png = self.screenshot(Some(n), false, None, None).await?;
                ("screenshot.png", png)
            }
            "network" => {
                let net = self
                    .network_capture(
                        self.tab_watch(n),
                        page,
                        &typed::NetworkCapture {
                            action: Some("get".into()),
                            limit: Some(2000),
                            ..Default::default()
                        },
                    )
                    .await?;
                ("network.json", serde_json::to_vec_pretty(&net).unwrap_or_default())
            }
            _ => {
                let console = self.console_messages(
                    n,
                    &typed::Console { limit: Some(1000), ..Default::default() },
                );
                ("console.json", serde_json::to_vec_pretty(&console).unwrap_or_default())
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
