//! The browsers the host uses: the managed one, or a pool of endpoints to attach
//! to (`--cdp-endpoint`, repeatable; `[browser] endpoints` in the config file).
//!
//! - Each owner of tabs (an HTTP session, or the one shared set of stdio and
//!   embedders) is placed on one endpoint and stays there: the endpoint up with
//!   the fewest owners and room under its `max_sessions`.
//! - Crawl workers spread over every endpoint that is up.
//! - An endpoint whose connection ends, or that cannot be reached, is marked
//!   down; a health check probes it every 2 s (its `/json/version`) and brings it
//!   back. An owner placed on a down endpoint moves to another one at its next
//!   call and is told, as after a relaunch; a crawl's pages on it are read again
//!   elsewhere.
//! - A Selenium Grid endpoint (`selenium+http(s)://`) starts a WebDriver session
//!   for each attach and is probed at `/status` (see [`super::grid`]).
//! - An endpoint's URL may carry a token (`ws://host:port?token=T`): what ochre
//!   says of an endpoint names it with its query values and password replaced by
//!   `[redacted]`, and errors are scrubbed of them.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use super::{BrowserManager, Inner, Owner, Session, lock, owner};
use ochre_protocol::ToolError;

/// How often a down endpoint is probed.
const PROBE_EVERY: Duration = Duration::from_secs(2);
/// How long one probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// A browser to attach to.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `http(s)://host:port` (found through `/json/version`) or `ws(s)://...`,
    /// its query (tokens) kept.
    pub url: String,
    /// Most owners (MCP sessions) placed on it at once; `None`: no limit.
    pub max_sessions: Option<usize>,
    /// A Selenium Grid's (`selenium+http(s)://`): the capabilities asked of each
    /// new session, over `browserName: chrome`. May hold a cloud grid's keys:
    /// never shown.
    pub capabilities: serde_json::Map<String, Value>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &self.redacted())
            .field("max_sessions", &self.max_sessions)
            .field("capabilities", &self.capabilities.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Endpoint {
    /// Check `url`: an http(s) or ws(s) URL with a host, or a Selenium Grid's
    /// `selenium+http(s)://HOST:PORT[/PREFIX]`. A websocket URL without
    /// a path gets `/` (`ws://host:port?token=T` → `ws://host:port/?token=T`: a
    /// request line needs a path; browserless answers 400 without one).
    pub fn parse(url: &str, max_sessions: Option<usize>) -> Result<Self, String> {
        let mut e =
            Self { url: url.trim().to_owned(), max_sessions, capabilities: Default::default() };
        let Some((scheme, rest)) = e.url.split_once("://") else {
            return Err(format!("{}: not a URL (http://HOST:PORT or ws://...)", e.redacted()));
        };
        if !matches!(scheme, "http" | "https" | "ws" | "wss" | "selenium+http" | "selenium+https") {
            return Err(format!(
                "{}: the scheme must be http, https, ws, wss, or selenium+http(s) for a Selenium Grid",
                e.redacted()
            ));
        }
        if authority(rest).is_empty() {
            return Err(format!("{}: no host", e.redacted()));
        }
        if max_sessions == Some(0) {
            return Err(format!("{}: max_sessions must be at least 1", e.redacted()));
        }
        if scheme.starts_with("ws") {
            e.url = with_path(&e.url);
        }
        Ok(e)
    }

    /// The URL with its query values and password replaced by `[redacted]`, in
    /// place (a value that is also part of a key or the host stays there).
    pub fn redacted(&self) -> String {
        let (head, fragment) = match self.url.split_once('#') {
            Some((h, f)) => (h, format!("#{f}")),
            None => (self.url.as_str(), String::new()),
        };
        let (base, query) = match head.split_once('?') {
            Some((b, q)) => (b, Some(q)),
            None => (head, None),
        };
        let base = match base.split_once("://") {
            Some((scheme, rest)) => {
                let end = rest.find('/').unwrap_or(rest.len());
                let (auth, path) = rest.split_at(end);
                let auth = match auth.rsplit_once('@') {
                    Some((userinfo, host)) => match userinfo.split_once(':') {
                        Some((user, pw)) if !pw.is_empty() => format!("{user}:[redacted]@{host}"),
                        _ => auth.to_owned(),
                    },
                    None => auth.to_owned(),
                };
                format!("{scheme}://{auth}{path}")
            }
            None => base.to_owned(),
        };
        let Some(query) = query else { return format!("{base}{fragment}") };
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, v)) if !v.is_empty() => format!("{k}=[redacted]"),
                _ => pair.to_owned(),
            })
            .collect();
        format!("{base}?{}{fragment}", pairs.join("&"))
    }

    /// The secret parts of the URL: query values, a password.
    pub fn secrets(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some((_, query)) = self.url.split_once('?') {
            let query = query.split('#').next().unwrap_or("");
            for pair in query.split('&') {
                if let Some((_, v)) = pair.split_once('=')
                    && !v.is_empty()
                {
                    out.push(v.to_owned());
                }
            }
        }
        let rest = self.url.split_once("://").map_or("", |(_, r)| r);
        let auth = rest.split(['/', '?', '#']).next().unwrap_or("");
        if let Some((userinfo, _)) = auth.rsplit_once('@')
            && let Some((_, password)) = userinfo.split_once(':')
            && !password.is_empty()
        {
            out.push(password.to_owned());
        }
        // Longest first: a secret that contains another is replaced whole.
        out.sort_by_key(|s| std::cmp::Reverse(s.len()));
        out
    }

    /// `text` with the URL's secrets replaced by `[redacted]`.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in self.secrets() {
            out = out.replace(&secret, "[redacted]");
        }
        out
    }

    /// Whether it is reached over TLS (`https`, `wss`, `selenium+https`).
    fn secure(&self) -> bool {
        let url = self.url.trim_start_matches("selenium+");
        url.starts_with("https") || url.starts_with("wss")
    }

    /// `[user:pass@]host:port` as given.
    fn host_part(&self) -> &str {
        let rest = self.url.split_once("://").map_or("", |(_, r)| r);
        rest.split(['/', '?', '#']).next().unwrap_or("")
    }

    /// `ws` or `wss`, as the endpoint is reached.
    pub(super) fn ws_scheme(&self) -> &'static str {
        if self.secure() { "wss" } else { "ws" }
    }

    /// A websocket URL to `path` (query included) on the endpoint's own host
    /// and port, credentials kept: a browser or a service names itself by an
    /// address the caller may not reach.
    fn ws_at(&self, path: &str) -> String {
        format!("{}://{}{path}", self.ws_scheme(), self.host_part())
    }

    /// `?query` of the endpoint's URL (its tokens), or nothing.
    fn query(&self) -> String {
        self.url.split_once('?').map(|(_, q)| format!("?{q}")).unwrap_or_default()
    }

    /// A Selenium Grid (sessions through WebDriver, CDP through `se:cdp`).
    pub fn is_grid(&self) -> bool {
        self.url.starts_with("selenium+")
    }

    /// A grid's WebDriver URL: `selenium+` and a trailing `/` taken off.
    pub(super) fn grid_base(&self) -> String {
        self.url.trim_start_matches("selenium+").trim_end_matches('/').to_owned()
    }

    /// `/json/version` over HTTP(S), with the endpoint's query (browserless wants
    /// its token there) when `with_query`.
    fn json_version_url(&self, with_query: bool) -> String {
        let (scheme, rest) = self.url.split_once("://").unwrap_or(("http", ""));
        let scheme = match scheme {
            "ws" => "http",
            "wss" => "https",
            s => s,
        };
        let query = match rest.split_once('?') {
            Some((_, q)) if with_query => format!("?{q}"),
            _ => String::new(),
        };
        format!("{scheme}://{}/json/version{query}", authority(rest))
    }

    /// Where to ask whether it is up: its `/json/version` without the query. Any
    /// answer will do, and without a token browserless answers 401 at once, where
    /// with one it would start a browser to answer.
    fn probe_url(&self) -> String {
        if self.is_grid() {
            return format!("{}/status", self.grid_base());
        }
        self.json_version_url(false)
    }
}

/// `url` with `/` as its path when it has none.
fn with_path(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    if rest[end..].starts_with('/') {
        return url.to_owned();
    }
    format!("{scheme}://{}/{}", &rest[..end], &rest[end..])
}

/// `host:port` of the part of a URL after `://` (userinfo dropped).
pub(super) fn authority(rest: &str) -> &str {
    let auth = rest.split(['/', '?', '#']).next().unwrap_or("");
    auth.rsplit_once('@').map_or(auth, |(_, a)| a)
}

/// One browser of the pool: the managed browser (`endpoint: None`) or an endpoint.
pub(super) struct Slot {
    pub(super) endpoint: Option<Endpoint>,
    pub(super) session: tokio::sync::Mutex<Option<Session>>,
    /// Told when this browser's connection ends.
    pub(super) gone: Arc<tokio::sync::Notify>,
    /// How many times a session with it started.
    pub(super) starts: std::sync::atomic::AtomicU64,
    /// Its latest session as seen from outside: whether its connection is open
    /// and the profile it runs in, readable without waiting for a call that
    /// holds the session (a launch or an attach may take seconds).
    pub(super) live: std::sync::Mutex<Option<Live>>,
    health: std::sync::Mutex<Health>,
}

/// What [`Slot::live`] keeps of a session.
pub(super) struct Live {
    pub(super) alive: Arc<std::sync::atomic::AtomicBool>,
    pub(super) profile: Option<std::path::PathBuf>,
}

#[derive(Default)]
struct Health {
    /// Why and since when it is down.
    down: Option<(String, Instant)>,
    /// The last probe's time to answer.
    latency_ms: Option<u64>,
    /// A health check is running.
    probing: bool,
}

impl Slot {
    pub(super) fn new(endpoint: Option<Endpoint>) -> Self {
        Self {
            endpoint,
            session: Default::default(),
            gone: Default::default(),
            starts: Default::default(),
            live: Default::default(),
            health: Default::default(),
        }
    }

    /// How ochre names it.
    pub(super) fn name(&self) -> String {
        match &self.endpoint {
            Some(e) => format!("the browser at {}", e.redacted()),
            None => "the browser".into(),
        }
    }

    /// A connection to it is open.
    pub(super) fn connected(&self) -> bool {
        lock(&self.live).as_ref().is_some_and(|l| l.alive.load(Ordering::Relaxed))
    }

    /// The profile dir of its latest session (a temporary one ochre made).
    pub(super) fn profile_dir(&self) -> Option<std::path::PathBuf> {
        lock(&self.live).as_ref().and_then(|l| l.profile.clone())
    }

    pub(super) fn is_down(&self) -> bool {
        lock(&self.health).down.is_some()
    }

    fn has_room(&self, load: usize) -> bool {
        self.endpoint.as_ref().and_then(|e| e.max_sessions).is_none_or(|m| load < m)
    }
}

/// What `ochre doctor` and `oc_profile_status` show of each browser.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointStatus {
    /// The endpoint (secrets redacted), or `managed`.
    pub endpoint: String,
    /// Not marked down.
    pub up: bool,
    /// A connection to it is open.
    pub connected: bool,
    /// Owners (MCP sessions, or the shared set) placed on it.
    pub sessions: usize,
    /// Its `max_sessions`.
    pub capacity: Option<usize>,
    /// Time to answer `/json/version` just now.
    pub latency_ms: Option<u64>,
    /// Why it is down, and for how long.
    pub down_reason: Option<String>,
    /// How long it has been down.
    pub down_for_ms: Option<u64>,
}

/// An HTTP client whose requests take at most `timeout` (connecting at most
/// 5 s of it).
pub(super) fn http_client(timeout: Duration) -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(5)))
        .build()
        .map_err(|e| e.to_string())
}

/// Ask an endpoint whether it is up: any HTTP answer to `/json/version` counts
/// (a token the probe lacks still proves the server is there). Its latency.
async fn probe(endpoint: &Endpoint) -> Result<u64, String> {
    let started = Instant::now();
    match http_client(PROBE_TIMEOUT)?.get(endpoint.probe_url()).send().await {
        Ok(_) => Ok(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)),
        Err(e) => {
            let mut why = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                why = format!("{why}: {s}");
                source = s.source();
            }
            Err(endpoint.scrub(&why))
        }
    }
}

/// The websocket URL to attach to `endpoint`: a ws(s) URL as given; for an
/// http(s) one, what its `/json/version` says, reached through the endpoint's
/// own host and port (a browser answers with its own `127.0.0.1`) and with the
/// endpoint's query (browserless leaves its token out).
pub(super) async fn websocket_url(endpoint: &Endpoint) -> Result<String, String> {
    if endpoint.url.starts_with("ws") {
        return Ok(endpoint.url.clone());
    }
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| e.to_string())?;
    let answer = client
        .get(endpoint.json_version_url(true))
        .send()
        .await
        .map_err(|e| endpoint.scrub(&e.to_string()))?;
    let status = answer.status();
    if !status.is_success() {
        let grid = status == reqwest::StatusCode::NOT_FOUND && is_selenium(&client, endpoint).await;
        let hint = if grid {
            "; it is a Selenium Grid: give it as selenium+http(s)://HOST:PORT"
        } else {
            ""
        };
        return Err(format!("its /json/version answered HTTP {status}{hint}"));
    }
    let v: Value =
        answer.json().await.map_err(|e| format!("its /json/version is not JSON: {e}"))?;
    let given = v["webSocketDebuggerUrl"]
        .as_str()
        .filter(|u| u.starts_with("ws"))
        .ok_or("its /json/version names no webSocketDebuggerUrl")?;
    let (_, rest) = given.split_once("://").unwrap_or(("ws", ""));
    let path = &rest[rest.find(['/', '?', '#']).unwrap_or(rest.len())..];
    let path =
        if path.contains('?') { path.to_owned() } else { format!("{path}{}", endpoint.query()) };
    Ok(with_path(&endpoint.ws_at(&path)))
}

/// Where a second connection to the browser `ws` leads to reaches that same
/// browser: `ws` itself when it names one (`/devtools/browser/ID`, a grid's
/// `se:cdp`). A service that starts a browser per connection (browserless at
/// `/` or `/chromium`) would start another one there: the browser is found by
/// one of its pages (`targets`) in the service's `/sessions`, and reached at its
/// `/devtools/browser/ID` through the endpoint's host and port, with its query.
pub(super) async fn same_browser_url(
    endpoint: Option<&Endpoint>,
    ws: &str,
    targets: &[String],
) -> Result<String, String> {
    let Some(endpoint) = endpoint else { return Ok(ws.to_owned()) };
    let path = ws.split_once("://").map_or("", |(_, r)| &r[r.find('/').unwrap_or(r.len())..]);
    if endpoint.is_grid() || path.starts_with("/devtools/browser/") {
        return Ok(ws.to_owned());
    }
    let sessions_url = endpoint.json_version_url(true).replacen("/json/version", "/sessions", 1);
    let client = http_client(Duration::from_secs(5))?;
    let listed: Value =
        async { client.get(&sessions_url).send().await?.error_for_status()?.json().await }
            .await
            .map_err(|e: reqwest::Error| {
                format!(
                    "its /sessions (to find the browser again) failed: {}",
                    endpoint.scrub(&e.to_string())
                )
            })?;
    let found = listed.as_array().into_iter().flatten().find_map(|s| {
        let id = s["id"].as_str()?;
        targets.iter().any(|t| t == id).then(|| s["browserWSEndpoint"].as_str())?
    });
    let Some(given) = found else {
        return Err("its /sessions does not list this browser's pages".into());
    };
    let (_, rest) = given.split_once("://").unwrap_or(("ws", ""));
    let browser_path = &rest[rest.find('/').unwrap_or(rest.len())..];
    let browser_path = browser_path.split(['?', '#']).next().unwrap_or("");
    Ok(endpoint.ws_at(&format!("{browser_path}{}", endpoint.query())))
}

/// Whether an endpoint's `/status` is a Selenium Grid's (`value.ready`).
async fn is_selenium(client: &reqwest::Client, endpoint: &Endpoint) -> bool {
    // With the URL's credentials (a grid may ask for them), without its query.
    let scheme = if endpoint.secure() { "https" } else { "http" };
    let url = format!("{scheme}://{}/status", endpoint.host_part());
    let answer = async { client.get(url).send().await.ok()?.json::<Value>().await.ok() };
    answer.await.is_some_and(|v| v["value"]["ready"].is_boolean())
}

impl BrowserManager {
    /// The browsers, as configured (one managed browser when no endpoint is given).
    pub(super) fn slots_for(endpoints: &[Endpoint]) -> Vec<Slot> {
        if endpoints.is_empty() {
            return vec![Slot::new(None)];
        }
        endpoints.iter().cloned().map(|e| Slot::new(Some(e))).collect()
    }

    pub(super) fn slot(&self, i: usize) -> &Slot {
        &self.inner.slots[i]
    }

    /// How many browsers the pool has.
    pub(super) fn pool_size(&self) -> usize {
        self.inner.slots.len()
    }

    /// Owners placed on each slot.
    fn loads(&self, placed: &std::collections::HashMap<Owner, usize>) -> Vec<usize> {
        let mut loads = vec![0; self.pool_size()];
        for i in placed.values() {
            loads[*i] += 1;
        }
        loads
    }

    /// The caller's browser: where its tabs live. Placed on first use (the
    /// endpoint up with the fewest owners and room), and again when its endpoint
    /// is down (then the caller is told its tabs are lost).
    pub(super) fn home(&self) -> Result<usize, ToolError> {
        if self.pool_size() == 1 {
            return Ok(0);
        }
        let who = owner();
        let before = self.placed(&who);
        if let Some(i) = before
            && !self.slot(i).is_down()
        {
            return Ok(i);
        }
        // Chosen and placed under the owners' lock: two first calls at once
        // count each other.
        let i = self.inner.owners.place(&who, |others| {
            let loads = self.loads(others);
            let pick = (0..self.pool_size())
                .filter(|i| !self.slot(*i).is_down() && self.slot(*i).has_room(loads[*i]))
                .min_by_key(|i| loads[*i]);
            pick.ok_or_else(|| self.none_available(&loads))
        })?;
        // Told when it had a browser there (tabs to lose), not when its first
        // attach failed.
        let had_tabs = (self.inner.owners.read(&who, |s| s.seen))
            .flatten()
            .is_some_and(|(_, starts)| starts > 0);
        if let Some(old) = before
            && had_tabs
        {
            self.tell(
                ochre_protocol::Level::Notice,
                format!(
                    "{} is down; this session moved to {}: its tabs are lost",
                    self.slot(old).name(),
                    self.slot(i).name()
                ),
            );
        }
        Ok(i)
    }

    fn none_available(&self, loads: &[usize]) -> ToolError {
        let all_down = (0..self.pool_size()).all(|i| self.slot(i).is_down());
        let each: Vec<String> = (0..self.pool_size())
            .map(|i| {
                let s = self.slot(i);
                match &lock(&s.health).down {
                    Some((why, _)) => format!("{} down ({why})", s.name()),
                    None => format!(
                        "{} full ({} of {})",
                        s.name(),
                        loads[i],
                        s.endpoint.as_ref().and_then(|e| e.max_sessions).unwrap_or(0)
                    ),
                }
            })
            .collect();
        let what = if all_down {
            "every browser endpoint is down"
        } else {
            "no browser endpoint has room"
        };
        ToolError::browser_unavailable(format!(
            "{what}: {}; try again later, or add endpoints",
            each.join("; ")
        ))
        .with("endpoints", Value::from(each))
    }

    /// Where `who` is placed (with one browser: there).
    pub(super) fn placed(&self, who: &Owner) -> Option<usize> {
        if self.pool_size() == 1 {
            return Some(0);
        }
        self.inner.owners.read(who, |s| s.placement).flatten()
    }

    /// `n` slots to put worker tabs on, spread round-robin over the slots that
    /// are up (the caller's own when none is).
    pub(super) fn spread(&self, n: usize) -> Result<Vec<usize>, ToolError> {
        let up: Vec<usize> = (0..self.pool_size()).filter(|i| !self.slot(*i).is_down()).collect();
        if up.is_empty() {
            return Ok(vec![self.home()?; n]);
        }
        let start = self.inner.next_worker.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        Ok((0..n).map(|k| up[(start + k) % up.len()]).collect())
    }

    /// How many slots are up.
    pub(super) fn up_count(&self) -> usize {
        (0..self.pool_size()).filter(|i| !self.slot(*i).is_down()).count().max(1)
    }

    /// Mark endpoint `i` down (the managed browser is relaunched instead) and
    /// start its health check.
    pub(super) fn mark_down(&self, i: usize, why: &str) {
        mark_down(&self.inner, i, why);
    }

    /// What each browser of the pool is doing (probing the endpoints, bounded).
    pub async fn pool_status(&self) -> Vec<EndpointStatus> {
        let placed = self.inner.owners.placements();
        let mut loads = self.loads(&placed);
        if self.pool_size() == 1 {
            loads[0] = usize::from(self.slot(0).connected());
        }
        // Probed at once: a pool with endpoints down answers within one probe's bound.
        let latencies = futures::future::join_all(self.inner.slots.iter().map(|slot| async {
            match &slot.endpoint {
                Some(e) => probe(e).await.ok(),
                None => None,
            }
        }))
        .await;
        let mut out = Vec::with_capacity(self.pool_size());
        for ((i, slot), latency_ms) in self.inner.slots.iter().enumerate().zip(latencies) {
            let connected = slot.connected();
            let health = lock(&slot.health);
            out.push(EndpointStatus {
                endpoint: slot
                    .endpoint
                    .as_ref()
                    .map_or_else(|| "managed".into(), Endpoint::redacted),
                up: health.down.is_none(),
                connected,
                sessions: loads[i],
                capacity: slot.endpoint.as_ref().and_then(|e| e.max_sessions),
                latency_ms: latency_ms.or(health.latency_ms),
                down_reason: health.down.as_ref().map(|(why, _)| why.clone()),
                down_for_ms: health.down.as_ref().map(|(_, since)| {
                    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
                }),
            });
        }
        out
    }
}

/// Mark endpoint `i` of `inner` down and start its health check (every
/// [`PROBE_EVERY`], until it answers or the manager is gone or closing).
pub(super) fn mark_down(inner: &Arc<Inner>, i: usize, why: &str) {
    let slot = &inner.slots[i];
    let Some(endpoint) = slot.endpoint.clone() else { return };
    let why = endpoint.scrub(why);
    let start = {
        let mut h = lock(&slot.health);
        let newly = h.down.is_none();
        if newly {
            h.down = Some((why.clone(), Instant::now()));
        }
        let start = !h.probing;
        h.probing = true;
        if !newly {
            return;
        }
        start
    };
    tracing::warn!(endpoint = %endpoint.redacted(), why, "a browser endpoint is down");
    BrowserManager { inner: inner.clone() }.tell(
        ochre_protocol::Level::Warning,
        format!("the browser endpoint {} is down: {why}", endpoint.redacted()),
    );
    if start {
        tokio::spawn(health_check(Arc::downgrade(inner), i, endpoint));
    }
}

async fn health_check(inner: Weak<Inner>, i: usize, endpoint: Endpoint) {
    loop {
        tokio::time::sleep(PROBE_EVERY).await;
        let Some(inner) = inner.upgrade() else { return };
        let slot = &inner.slots[i];
        if inner.closing.load(std::sync::atomic::Ordering::Relaxed) {
            lock(&slot.health).probing = false;
            return;
        }
        if let Ok(ms) = probe(&endpoint).await {
            {
                let mut h = lock(&slot.health);
                h.down = None;
                h.probing = false;
                h.latency_ms = Some(ms);
            }
            tracing::info!(endpoint = %endpoint.redacted(), "a browser endpoint is back");
            BrowserManager { inner: inner.clone() }.tell(
                ochre_protocol::Level::Info,
                format!("the browser endpoint {} is back", endpoint.redacted()),
            );
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_checked_and_their_secrets_redacted() {
        let e = Endpoint::parse("ws://127.0.0.1:3000/chromium?token=s3cret&timeout=60000", None)
            .expect("valid");
        assert_eq!(
            e.redacted(),
            "ws://127.0.0.1:3000/chromium?token=[redacted]&timeout=[redacted]"
        );
        assert_eq!(e.probe_url(), "http://127.0.0.1:3000/json/version");
        assert_eq!(
            e.json_version_url(true),
            "http://127.0.0.1:3000/json/version?token=s3cret&timeout=60000"
        );
        // A websocket URL gets a path.
        let e = Endpoint::parse("ws://127.0.0.1:3000?token=s3cret", None).expect("valid");
        assert_eq!(e.url, "ws://127.0.0.1:3000/?token=s3cret");
        assert_eq!(with_path("ws://h:1"), "ws://h:1/");
        assert_eq!(with_path("ws://h:1/devtools/browser/x"), "ws://h:1/devtools/browser/x");
        assert_eq!(
            e.scrub("cannot reach ...?token=s3cret: refused"),
            "cannot reach ...?token=[redacted]: refused"
        );
        assert!(!format!("{e:?}").contains("s3cret"));
        // A value that also spells part of a key or the host is replaced where
        // it is a value only.
        let e = Endpoint::parse("ws://tok.example:3000?token=tok", None).expect("valid");
        assert_eq!(e.redacted(), "ws://tok.example:3000/?token=[redacted]");
        let e = Endpoint::parse("https://user:pw1234@grid.example:443/x", Some(2)).expect("valid");
        assert_eq!(e.redacted(), "https://user:[redacted]@grid.example:443/x");
        assert_eq!(e.probe_url(), "https://grid.example:443/json/version");
        assert_eq!(
            Endpoint::parse("http://127.0.0.1:9222", None).expect("ok").probe_url(),
            "http://127.0.0.1:9222/json/version"
        );
        let e = Endpoint::parse("selenium+http://u:pw1234@127.0.0.1:4444", None).expect("valid");
        assert!(e.is_grid());
        assert_eq!(e.probe_url(), "http://u:pw1234@127.0.0.1:4444/status");
        assert_eq!(e.redacted(), "selenium+http://u:[redacted]@127.0.0.1:4444");
        for bad in ["127.0.0.1:9222", "ftp://x", "http://", "http:///json", "selenium+ws://h:1"] {
            assert!(Endpoint::parse(bad, None).is_err(), "{bad}");
        }
        assert!(Endpoint::parse("http://h:1", Some(0)).is_err());
    }

    #[test]
    fn a_second_connection_goes_where_the_first_did_when_that_names_the_browser() {
        let same = |e: Option<&Endpoint>, ws: &str| {
            futures::executor::block_on(same_browser_url(e, ws, &[])).expect("no lookup")
        };
        let ws = "ws://h:9222/devtools/browser/abc";
        assert_eq!(same(None, ws), ws);
        let e = Endpoint::parse("http://h:9222", None).expect("valid");
        assert_eq!(same(Some(&e), ws), ws);
        let grid = Endpoint::parse("selenium+http://g:4444", None).expect("valid");
        assert_eq!(
            same(Some(&grid), "ws://g:4444/session/s1/se/cdp"),
            "ws://g:4444/session/s1/se/cdp"
        );
    }
}
