//! OpenTelemetry export: the journal's calls as spans, sent over OTLP/HTTP
//! (protobuf) to a collector. One trace per task run (every call of a run) or
//! per top-level call; a plugin's nested calls are child spans of the call that
//! made them; the error code is the span's status; the arguments and summary
//! are the journal's, masked as there; the page events of a call are its
//! span's events.
//!
//! Export never holds a call up: a finished call's span goes into a bounded
//! queue (a full one drops it, counted), and a task of its own sends the queue
//! in batches. A collector that is down or slow costs the calls nothing but
//! their spans.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// Where and how spans go; see [`OtlpConfig::from_env`].
#[derive(Debug, Clone)]
pub struct OtlpConfig {
    /// The traces URL spans are posted to (`…/v1/traces`).
    pub endpoint: url::Url,
    /// Headers sent with every export (an API key, say). Never logged.
    pub headers: Vec<(String, String)>,
    /// The time one export may take.
    pub timeout: Duration,
    /// The resource's `service.name`.
    pub service_name: String,
    /// More resource attributes.
    pub resource: Vec<(String, String)>,
    /// Spans held for export at most; more are dropped (counted).
    pub max_queue: usize,
    /// Spans sent in one export at most.
    pub max_batch: usize,
    /// How long a span waits for others before its batch is sent.
    pub delay: Duration,
}

/// Why an OTLP setting was refused.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct OtlpConfigError(String);

impl OtlpConfig {
    /// The settings from `--otlp-endpoint` (`flag`: a collector's base URL,
    /// to which `/v1/traces` is added unless its path ends so) and the standard
    /// variables, read through `env`: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the
    /// traces URL as is), `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL),
    /// `…_HEADERS`, `…_TIMEOUT` and `…_PROTOCOL` (each also as `…_TRACES_…`),
    /// `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_MAX_QUEUE_SIZE`,
    /// `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` and `OTEL_BSP_SCHEDULE_DELAY`.
    /// `None`: export is off (no endpoint, or `OTEL_SDK_DISABLED=true` or
    /// `OTEL_TRACES_EXPORTER=none` without the flag).
    ///
    /// # Errors
    /// An endpoint that is not an http(s) URL, a protocol other than
    /// `http/protobuf`, or a setting that does not parse, named.
    pub fn from_env(
        flag: Option<&str>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, OtlpConfigError> {
        let var = |name: &str| env(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        // Per signal first, then for all.
        let either = |what: &str| {
            var(&format!("OTEL_EXPORTER_OTLP_TRACES_{what}"))
                .map(|v| (format!("OTEL_EXPORTER_OTLP_TRACES_{what}"), v))
                .or_else(|| {
                    var(&format!("OTEL_EXPORTER_OTLP_{what}"))
                        .map(|v| (format!("OTEL_EXPORTER_OTLP_{what}"), v))
                })
        };
        let off = var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
            || var("OTEL_TRACES_EXPORTER").is_some_and(|v| v.eq_ignore_ascii_case("none"));
        let endpoint = match (flag, var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) {
            (Some(f), _) => base_url("--otlp-endpoint", f)?,
            (None, _) if off => return Ok(None),
            (None, Some(t)) => parse_url("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", &t)?,
            (None, None) => match var("OTEL_EXPORTER_OTLP_ENDPOINT") {
                Some(b) => base_url("OTEL_EXPORTER_OTLP_ENDPOINT", &b)?,
                None => return Ok(None),
            },
        };
        if let Some((name, p)) = either("PROTOCOL")
            && p != "http/protobuf"
        {
            return Err(OtlpConfigError(format!(
                "{name}={p}: ochre sends OTLP over HTTP as protobuf only (http/protobuf, \
                 a collector's port 4318); set it so or unset it"
            )));
        }
        let headers = match either("HEADERS") {
            Some((name, h)) => pairs(&name, &h)?,
            None => Vec::new(),
        };
        let timeout = match either("TIMEOUT") {
            Some((name, t)) => Duration::from_millis(number(&name, &t)?),
            None => Duration::from_secs(10),
        };
        let resource = match var("OTEL_RESOURCE_ATTRIBUTES") {
            Some(r) => pairs("OTEL_RESOURCE_ATTRIBUTES", &r)?,
            None => Vec::new(),
        };
        let size = |name: &str, default: u64| match var(name) {
            Some(v) => number(name, &v).and_then(|n| match usize::try_from(n) {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(OtlpConfigError(format!("{name}={v}: a count above 0"))),
            }),
            None => Ok(usize::try_from(default).unwrap_or(usize::MAX)),
        };
        let max_queue = size("OTEL_BSP_MAX_QUEUE_SIZE", 2048)?;
        let max_batch = size("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512)?.min(max_queue);
        let delay = match var("OTEL_BSP_SCHEDULE_DELAY") {
            Some(d) => Duration::from_millis(number("OTEL_BSP_SCHEDULE_DELAY", &d)?),
            None => Duration::from_secs(5),
        };
        let service_name = var("OTEL_SERVICE_NAME")
            .or_else(|| resource.iter().find(|(k, _)| k == "service.name").map(|(_, v)| v.clone()))
            .unwrap_or_else(|| "ochre".into());
        Ok(Some(Self {
            endpoint,
            headers,
            timeout,
            service_name,
            resource,
            max_queue,
            max_batch,
            delay,
        }))
    }
}

fn parse_url(name: &str, s: &str) -> Result<url::Url, OtlpConfigError> {
    let u = url::Url::parse(s)
        .map_err(|e| OtlpConfigError(format!("{name}: {s:?} is not a URL ({e})")))?;
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none() {
        return Err(OtlpConfigError(format!(
            "{name}: {s:?} is not an http:// or https:// URL of a collector"
        )));
    }
    Ok(u)
}

/// A collector's base URL with `v1/traces` added to its path (unless there).
fn base_url(name: &str, s: &str) -> Result<url::Url, OtlpConfigError> {
    let mut u = parse_url(name, s)?;
    if !u.path().trim_end_matches('/').ends_with("/v1/traces") {
        let path = format!("{}/v1/traces", u.path().trim_end_matches('/'));
        u.set_path(&path);
    }
    Ok(u)
}

fn number(name: &str, s: &str) -> Result<u64, OtlpConfigError> {
    s.parse().map_err(|_| OtlpConfigError(format!("{name}={s}: a whole number of ms or items")))
}

/// `k=v,k2=v2` with %-escapes (the W3C Baggage form the variables use).
fn pairs(name: &str, s: &str) -> Result<Vec<(String, String)>, OtlpConfigError> {
    s.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let (k, v) = p
                .split_once('=')
                .ok_or_else(|| OtlpConfigError(format!("{name}: {p:?} is not key=value")))?;
            let k = unescape(k.trim());
            if k.is_empty() {
                return Err(OtlpConfigError(format!("{name}: an empty key")));
            }
            Ok((k, unescape(v.trim())))
        })
        .collect()
}

fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| char::from(c).to_digit(16);
        match (b[i], b.get(i + 1).copied().and_then(hex), b.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(h), Some(l)) => {
                out.push(u8::try_from(h * 16 + l).unwrap_or(b'?'));
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Post an export of no span (the resource alone: a collector takes it, and
/// a body that is not empty has its length said) to the collector, as
/// `ochre doctor` does: how it answered, or why it did not.
///
/// # Errors
/// The collector is not reached, or answers other than 2xx.
pub async fn probe(config: &OtlpConfig) -> Result<String, String> {
    let client = http::client(config.timeout.min(Duration::from_secs(5)))?;
    let at = redacted(&config.endpoint);
    let began = std::time::Instant::now();
    http::post(&client, config, encode_request(&resource(config), &[]))
        .await
        .map(|()| format!("{at} (took an export of no span in {} ms)", began.elapsed().as_millis()))
        .map_err(|e| format!("{at}: {e}"))
}

/// A span's ids.
#[derive(Clone, Copy)]
struct Ids {
    trace: [u8; 16],
    span: [u8; 8],
    parent: Option<[u8; 8]>,
}

/// An attribute's value.
pub(crate) enum Attr {
    Str(String),
    Int(i64),
    Bool(bool),
}

/// A finished call, as the journal has it.
pub(crate) struct CallSpan<'a> {
    pub session: &'a str,
    pub seq: u64,
    pub tool: &'a str,
    pub plugin: &'a str,
    pub args: &'a Value,
    pub ok: bool,
    pub summary: &'a str,
    pub error: Option<&'a str>,
    pub intent: Option<&'a str>,
    pub run: Option<&'a str>,
    pub parent_seq: Option<u64>,
    pub elapsed: Duration,
    /// The page events the call saw: kind and (masked) body.
    pub events: Vec<(String, Value)>,
}

struct Span {
    ids: Ids,
    name: String,
    start_ns: u64,
    end_ns: u64,
    attrs: Vec<(&'static str, Attr)>,
    events: Vec<(u64, String, Value)>,
    error: Option<String>,
}

enum Msg {
    Span(Span),
    Flush(oneshot::Sender<()>),
}

/// The exporter: the ids of the calls running, and the queue to the sender.
pub(crate) struct Otlp {
    tx: mpsc::Sender<Msg>,
    open: std::sync::Mutex<HashMap<u64, Ids>>,
    counts: Arc<Counts>,
}

/// What became of the spans.
#[derive(Default)]
struct Counts {
    sent: AtomicU64,
    dropped: AtomicU64,
}

/// The calls running at once whose ids are kept (a call refused before it ran
/// leaves its entry behind; past this many, the oldest go).
const OPEN_MAX: usize = 4096;

impl Otlp {
    /// Start the sender (a task on the current tokio runtime).
    pub(crate) fn start(config: OtlpConfig) -> Arc<Self> {
        let (tx, rx) = mpsc::channel(config.max_queue);
        let counts = Arc::new(Counts::default());
        tokio::spawn(send_loop(config, rx, counts.clone()));
        Arc::new(Self { tx, open: Default::default(), counts })
    }

    /// A call is about to run: its ids (its parent's trace, else its task
    /// run's, else a new one).
    pub(crate) fn begin(&self, seq: u64, parent_seq: Option<u64>, run: Option<&str>) {
        let mut open = self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let parent = parent_seq.and_then(|p| open.get(&p).copied());
        let trace = match (parent, run) {
            (Some(p), _) => p.trace,
            (None, Some(run)) => run_trace(run),
            (None, None) => random(),
        };
        if open.len() >= OPEN_MAX
            && let Some(oldest) = open.keys().min().copied()
        {
            open.remove(&oldest);
        }
        open.insert(seq, Ids { trace, span: random(), parent: parent.map(|p| p.span) });
    }

    /// The call `seq` was refused before it ran: no span.
    pub(crate) fn forget(&self, seq: u64) {
        self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&seq);
    }

    /// The call ended: its span goes into the queue (dropped, counted, when the
    /// queue is full). Never waits.
    pub(crate) fn end(&self, c: CallSpan<'_>) {
        let ids =
            self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&c.seq);
        let ids = ids.unwrap_or_else(|| Ids {
            trace: c.run.map_or_else(random, run_trace),
            span: random(),
            parent: None,
        });
        let end_ns = unix_ns(SystemTime::now());
        let start_ns = end_ns.saturating_sub(u64::try_from(c.elapsed.as_nanos()).unwrap_or(0));
        let mut attrs = vec![
            ("ochre.tool", Attr::Str(c.tool.to_owned())),
            ("ochre.plugin", Attr::Str(c.plugin.to_owned())),
            ("ochre.session", Attr::Str(c.session.to_owned())),
            ("ochre.seq", Attr::Int(i64::try_from(c.seq).unwrap_or(i64::MAX))),
            ("ochre.ok", Attr::Bool(c.ok)),
            ("ochre.args", Attr::Str(c.args.to_string())),
            ("ochre.summary", Attr::Str(c.summary.to_owned())),
        ];
        if let Some(p) = c.parent_seq {
            attrs.push(("ochre.parent", Attr::Int(i64::try_from(p).unwrap_or(i64::MAX))));
        }
        if let Some(i) = c.intent {
            attrs.push(("ochre.intent", Attr::Str(i.to_owned())));
        }
        if let Some(r) = c.run {
            attrs.push(("ochre.task_run", Attr::Str(r.to_owned())));
        }
        if let Some(e) = c.error {
            attrs.push(("ochre.error", Attr::Str(e.to_owned())));
        }
        let span = Span {
            ids,
            name: c.tool.to_owned(),
            start_ns,
            end_ns,
            attrs,
            events: c.events.into_iter().map(|(k, b)| (end_ns, k, b)).collect(),
            error: c.error.map(|code| format!("{code}: {}", c.summary)),
        };
        if self.tx.try_send(Msg::Span(span)).is_err() {
            self.counts.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Send what is queued now, waiting at most `within`.
    pub(crate) async fn flush(&self, within: Duration) {
        let (told, done) = oneshot::channel();
        let _ = tokio::time::timeout(within, async {
            if self.tx.send(Msg::Flush(told)).await.is_ok() {
                let _ = done.await;
            }
        })
        .await;
        let dropped = self.counts.dropped.load(Ordering::Relaxed);
        if dropped > 0 {
            tracing::warn!(
                sent = self.counts.sent.load(Ordering::Relaxed),
                dropped,
                "OpenTelemetry: spans were dropped (the collector was down, slow or behind)"
            );
        }
    }
}

/// A task run's trace id: the same for every call of the run, across restarts.
fn run_trace(run: &str) -> [u8; 16] {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(format!("ochre task run {run}").as_bytes());
    let mut id = [0u8; 16];
    id.copy_from_slice(&digest[..16]);
    id
}

fn random<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    // An all-zero id is invalid: a failed draw falls back on the clock.
    if getrandom::fill(&mut b).is_err() || b.iter().all(|x| *x == 0) {
        let t = unix_ns(SystemTime::now()).to_le_bytes();
        for (i, x) in b.iter_mut().enumerate() {
            *x = t[i % 8] ^ u8::try_from(i).unwrap_or(0) ^ 0x5a;
        }
    }
    b
}

fn unix_ns(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Gathers spans into batches and posts them, until the host drops its end.
async fn send_loop(config: OtlpConfig, mut rx: mpsc::Receiver<Msg>, counts: Arc<Counts>) {
    let client = match http::client(config.timeout) {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "OpenTelemetry: no span is sent");
            return;
        }
    };
    let resource = resource(&config);
    let mut failing = Failing::default();
    let mut batch: Vec<Span> = Vec::new();
    loop {
        let first = if batch.is_empty() {
            rx.recv().await
        } else {
            match tokio::time::timeout(config.delay, rx.recv()).await {
                Ok(m) => m,
                Err(_) => {
                    post(&client, &config, &resource, &mut batch, &counts, &mut failing).await;
                    continue;
                }
            }
        };
        match first {
            None => {
                post(&client, &config, &resource, &mut batch, &counts, &mut failing).await;
                return;
            }
            Some(Msg::Span(s)) => {
                batch.push(s);
                if batch.len() >= config.max_batch {
                    post(&client, &config, &resource, &mut batch, &counts, &mut failing).await;
                }
            }
            Some(Msg::Flush(told)) => {
                post(&client, &config, &resource, &mut batch, &counts, &mut failing).await;
                let _ = told.send(());
            }
        }
    }
}

/// When the collector last failed, told once a minute at most.
#[derive(Default)]
struct Failing {
    told_at: Option<std::time::Instant>,
}

async fn post(
    client: &http::Client,
    config: &OtlpConfig,
    resource: &[u8],
    batch: &mut Vec<Span>,
    counts: &Counts,
    failing: &mut Failing,
) {
    if batch.is_empty() {
        return;
    }
    let n = batch.len() as u64;
    let body = encode_request(resource, batch);
    batch.clear();
    match http::post(client, config, body).await {
        Ok(()) => {
            counts.sent.fetch_add(n, Ordering::Relaxed);
            if failing.told_at.take().is_some() {
                tracing::info!("OpenTelemetry: the collector takes spans again");
            }
        }
        Err(why) => {
            let dropped = counts.dropped.fetch_add(n, Ordering::Relaxed) + n;
            if failing.told_at.is_none_or(|t| t.elapsed() > Duration::from_secs(60)) {
                failing.told_at = Some(std::time::Instant::now());
                let at = redacted(&config.endpoint);
                tracing::warn!(endpoint = %at, dropped, "OpenTelemetry: {why}; its spans are dropped");
            }
        }
    }
}

/// The HTTP client the spans go out with (`reqwest`, with ochre-host's
/// `otlp` feature: on by default).
#[cfg(feature = "otlp")]
mod http {
    use super::OtlpConfig;
    use std::time::Duration;

    pub(super) type Client = reqwest::Client;

    pub(super) fn client(timeout: Duration) -> Result<Client, String> {
        reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| format!("no HTTP client: {e}"))
    }

    /// Post `body` (an export request) to the collector.
    pub(super) async fn post(
        client: &Client,
        config: &OtlpConfig,
        body: Vec<u8>,
    ) -> Result<(), String> {
        let mut req = client
            .post(config.endpoint.clone())
            .header("content-type", "application/x-protobuf")
            .body(body);
        for (k, v) in &config.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        match req.send().await {
            Ok(r) if r.status().is_success() => Ok(()),
            Ok(r) => Err(format!("the collector answered {}", r.status())),
            Err(e) => {
                // Its words without the URL (which may carry credentials).
                let mut s = e.to_string();
                if let Some(u) = e.url() {
                    s = s.replace(u.as_str(), "the endpoint");
                }
                Err(format!("cannot reach the collector: {s}"))
            }
        }
    }
}

/// Without the `otlp` feature (an embedder's smallest host): no HTTP client,
/// so spans are not sent, and the server says so.
#[cfg(not(feature = "otlp"))]
mod http {
    use super::OtlpConfig;
    use std::time::Duration;

    /// (Never made.)
    pub(super) struct Client;

    pub(super) fn client(_timeout: Duration) -> Result<Client, String> {
        Err("this host was built without ochre-host's `otlp` feature".into())
    }

    pub(super) async fn post(
        _client: &Client,
        _config: &OtlpConfig,
        _body: Vec<u8>,
    ) -> Result<(), String> {
        client(Duration::ZERO).map(drop)
    }
}

/// The endpoint as logged: no user or password.
fn redacted(u: &url::Url) -> String {
    let mut u = u.clone();
    let _ = u.set_username("");
    let _ = u.set_password(None);
    u.set_query(None);
    u.to_string()
}

// ---- OTLP's protobuf (opentelemetry/proto/trace/v1, collector/trace/v1) ----

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(u8::try_from(v & 0x7f).unwrap_or(0) | 0x80);
        v >>= 7;
    }
    out.push(u8::try_from(v).unwrap_or(0));
}

fn key(out: &mut Vec<u8>, field: u64, wire: u64) {
    varint(out, (field << 3) | wire);
}

fn bytes_field(out: &mut Vec<u8>, field: u64, b: &[u8]) {
    key(out, field, 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn fixed64(out: &mut Vec<u8>, field: u64, v: u64) {
    key(out, field, 1);
    out.extend_from_slice(&v.to_le_bytes());
}

/// `KeyValue { key = 1; AnyValue value = 2 }`, `AnyValue { string = 1; bool = 2; int = 3 }`.
fn key_value(out: &mut Vec<u8>, field: u64, k: &str, v: &Attr) {
    let mut any = Vec::new();
    match v {
        Attr::Str(s) => bytes_field(&mut any, 1, s.as_bytes()),
        Attr::Bool(b) => {
            key(&mut any, 2, 0);
            varint(&mut any, u64::from(*b));
        }
        Attr::Int(i) => {
            key(&mut any, 3, 0);
            varint(&mut any, u64::from_ne_bytes(i.to_ne_bytes()));
        }
    }
    let mut kv = Vec::new();
    bytes_field(&mut kv, 1, k.as_bytes());
    bytes_field(&mut kv, 2, &any);
    bytes_field(out, field, &kv);
}

/// `Resource { repeated KeyValue attributes = 1 }`, encoded once.
fn resource(config: &OtlpConfig) -> Vec<u8> {
    let mut r = Vec::new();
    key_value(&mut r, 1, "service.name", &Attr::Str(config.service_name.clone()));
    key_value(&mut r, 1, "service.version", &Attr::Str(env!("CARGO_PKG_VERSION").into()));
    key_value(&mut r, 1, "telemetry.sdk.name", &Attr::Str("ochre".into()));
    key_value(&mut r, 1, "telemetry.sdk.language", &Attr::Str("rust".into()));
    for (k, v) in config.resource.iter().filter(|(k, _)| k != "service.name") {
        key_value(&mut r, 1, k, &Attr::Str(v.clone()));
    }
    r
}

/// `ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1 }`,
/// one resource, one scope (`ochre`) holding the spans.
fn encode_request(resource: &[u8], spans: &[Span]) -> Vec<u8> {
    let mut scope = Vec::new();
    bytes_field(&mut scope, 1, b"ochre");
    bytes_field(&mut scope, 2, env!("CARGO_PKG_VERSION").as_bytes());
    let mut scope_spans = Vec::new();
    bytes_field(&mut scope_spans, 1, &scope);
    for s in spans {
        bytes_field(&mut scope_spans, 2, &encode_span(s));
    }
    let mut rs = Vec::new();
    bytes_field(&mut rs, 1, resource);
    bytes_field(&mut rs, 2, &scope_spans);
    let mut req = Vec::new();
    bytes_field(&mut req, 1, &rs);
    req
}

/// `Span`: trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6,
/// start 7, end 8, attributes 9, events 11, status 15.
fn encode_span(s: &Span) -> Vec<u8> {
    let mut out = Vec::new();
    bytes_field(&mut out, 1, &s.ids.trace);
    bytes_field(&mut out, 2, &s.ids.span);
    if let Some(p) = s.ids.parent {
        bytes_field(&mut out, 4, &p);
    }
    bytes_field(&mut out, 5, s.name.as_bytes());
    key(&mut out, 6, 0);
    varint(&mut out, 1); // SPAN_KIND_INTERNAL
    fixed64(&mut out, 7, s.start_ns);
    fixed64(&mut out, 8, s.end_ns);
    for (k, v) in &s.attrs {
        key_value(&mut out, 9, k, v);
    }
    // `Event { time_unix_nano 1 (fixed64); name 2; attributes 3 }`.
    for (at, name, body) in &s.events {
        let mut ev = Vec::new();
        fixed64(&mut ev, 1, *at);
        bytes_field(&mut ev, 2, name.as_bytes());
        key_value(&mut ev, 3, "ochre.body", &Attr::Str(body.to_string()));
        bytes_field(&mut out, 11, &ev);
    }
    // `Status { message 2; code 3 }`: ERROR (2) with the code; else unset.
    if let Some(message) = &s.error {
        let mut st = Vec::new();
        bytes_field(&mut st, 2, message.as_bytes());
        key(&mut st, 3, 0);
        varint(&mut st, 2);
        bytes_field(&mut out, 15, &st);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> =
            pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn off_unless_an_endpoint_is_given() {
        assert!(OtlpConfig::from_env(None, env(&[])).expect("valid").is_none());
        let off =
            env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"), ("OTEL_SDK_DISABLED", "true")]);
        assert!(OtlpConfig::from_env(None, off).expect("valid").is_none());
    }

    #[test]
    fn endpoints_headers_and_protocols_read_as_the_spec_says() {
        let c = OtlpConfig::from_env(Some("http://c:4318"), env(&[])).expect("valid").expect("on");
        assert_eq!(c.endpoint.as_str(), "http://c:4318/v1/traces");
        let c =
            OtlpConfig::from_env(Some("https://c/otel/"), env(&[])).expect("valid").expect("on");
        assert_eq!(c.endpoint.as_str(), "https://c/otel/v1/traces");
        let e = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://base:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:9/custom"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%20b%2Cc, x=1"),
            ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "250"),
        ]);
        let c = OtlpConfig::from_env(None, e).expect("valid").expect("on");
        assert_eq!(c.endpoint.as_str(), "http://t:9/custom");
        assert_eq!(c.headers, vec![("api-key".into(), "a b,c".into()), ("x".into(), "1".into())]);
        assert_eq!(c.timeout, Duration::from_millis(250));
        for bad in
            [("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"), ("OTEL_EXPORTER_OTLP_HEADERS", "novalue")]
        {
            let e = OtlpConfig::from_env(Some("http://c:4318"), env(&[bad])).expect_err("refused");
            assert!(e.to_string().contains(bad.0), "{e}");
        }
        for bad in ["ftp://c", "not a url", "file:///tmp/x"] {
            let e = OtlpConfig::from_env(Some(bad), env(&[])).expect_err("refused");
            assert!(e.to_string().contains("--otlp-endpoint"), "{e}");
        }
    }

    #[test]
    fn a_task_runs_calls_share_one_trace() {
        assert_eq!(run_trace("r1"), run_trace("r1"));
        assert_ne!(run_trace("r1"), run_trace("r2"));
    }
}
