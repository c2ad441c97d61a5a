//! Selenium Grid 4 endpoints (`selenium+http(s)://HOST:PORT[/PREFIX]`): each
//! attach asks the grid for a new WebDriver session (`POST /session`) and drives
//! its browser over the CDP websocket the grid proxies (the `se:cdp`
//! capability). While the session lives, a cheap WebDriver command keeps it from
//! the grid's idle timeout (CDP traffic alone may not count); when ochre is done
//! with it, the session is deleted so the grid's slot frees at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::pool::{Endpoint, authority, http_client as client};

/// How long the grid may take to start a browser.
const NEW_SESSION_TIMEOUT: Duration = Duration::from_secs(14);
/// How long a keep-alive or a delete may take.
const SHORT_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest pause between keep-alives (a grid's default idle limit is 300 s).
const KEEPALIVE_MAX: Duration = Duration::from_secs(60);

/// A WebDriver session of a grid that a browser session of ochre runs in.
pub(super) struct GridSession {
    /// `BASE/session/ID`, the session's own URL (credentials kept, as the
    /// grid needs them).
    url: String,
    keepalive: tokio::task::AbortHandle,
}

impl GridSession {
    /// End the WebDriver session (bounded): the grid closes the browser and its
    /// slot is free for the next request. A session the grid already ended
    /// (its idle timeout, a restart) answers 404, which is fine.
    pub(super) async fn end(self) {
        self.keepalive.abort();
        let Ok(client) = client(SHORT_TIMEOUT) else { return };
        if let Err(e) = client.delete(&self.url).send().await {
            tracing::debug!(error = %e, "could not delete a grid session");
        }
    }
}

impl Drop for GridSession {
    fn drop(&mut self) {
        self.keepalive.abort();
    }
}

/// The capabilities of a new session: the endpoint's over `browserName: chrome`.
fn capabilities(endpoint: &Endpoint) -> Value {
    let mut caps = Map::new();
    caps.insert("browserName".into(), json!("chrome"));
    for (k, v) in &endpoint.capabilities {
        caps.insert(k.clone(), v.clone());
    }
    json!({"capabilities": {"alwaysMatch": caps}})
}

/// Ask the grid for a session; its CDP websocket URL (through the endpoint's own
/// host and port: a grid may name itself by an address the caller cannot reach)
/// and the session, kept alive from now on. `alive` is the browser session's
/// flag: cleared when the grid says the session is gone (its websocket may stay
/// open, and commands on it would wait for their timeout).
pub(super) async fn new_session(
    endpoint: &Endpoint,
    alive: Arc<AtomicBool>,
) -> Result<(String, GridSession), String> {
    let base = endpoint.grid_base();
    let scrub = |e: &dyn std::fmt::Display| endpoint.scrub(&e.to_string());
    let answer = client(NEW_SESSION_TIMEOUT)?
        .post(format!("{base}/session"))
        // Selenium refuses `application/json` without the charset.
        .header(reqwest::header::CONTENT_TYPE, "application/json; charset=utf-8")
        .body(capabilities(endpoint).to_string())
        .send()
        .await
        .map_err(|e| scrub(&e))?;
    let status = answer.status();
    let body: Value = answer.json().await.unwrap_or(Value::Null);
    let value = &body["value"];
    if !status.is_success() {
        let why = value["message"].as_str().unwrap_or("no message");
        let why = why.lines().next().unwrap_or(why);
        return Err(format!("the grid did not start a session (HTTP {status}): {}", scrub(&why)));
    }
    let id = value["sessionId"].as_str().filter(|s| is_session_id(s)).ok_or(
        "the grid's answer to POST /session names no sessionId (is this a WebDriver endpoint?)",
    )?;
    let url = format!("{base}/session/{id}");
    let Some(cdp) = value["capabilities"]["se:cdp"].as_str().filter(|u| u.starts_with("ws")) else {
        // A session we cannot use still holds a slot.
        let _ = client(SHORT_TIMEOUT)?.delete(&url).send().await;
        return Err("the grid's session has no `se:cdp` capability: it needs Selenium 4 and a \
                    Chromium-based browser (browserName chrome or MicrosoftEdge)"
            .into());
    };
    let ws = through_endpoint(endpoint, cdp);
    let keepalive = tokio::spawn(keep_alive(base, format!("{url}/timeouts"), alive)).abort_handle();
    Ok((ws, GridSession { url, keepalive }))
}

/// A WebDriver session id is a token of letters, digits and dashes.
fn is_session_id(s: &str) -> bool {
    !s.is_empty() && s.len() <= 128 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// `cdp` (the grid's `se:cdp`) with the endpoint's scheme and host:port.
fn through_endpoint(endpoint: &Endpoint, cdp: &str) -> String {
    let base = endpoint.grid_base();
    let own = authority(base.split_once("://").map_or("", |(_, r)| r));
    let (_, given) = cdp.split_once("://").unwrap_or(("ws", ""));
    let path = &given[given.find('/').unwrap_or(given.len())..];
    format!("{}://{own}{path}", endpoint.ws_scheme())
}

/// A third of the shortest idle limit the grid's nodes report (`/status`), at
/// most [`KEEPALIVE_MAX`] and at least 1 s.
async fn keepalive_every(base: &str) -> Duration {
    let limit_ms = async {
        let v: Value = client(SHORT_TIMEOUT)
            .ok()?
            .get(format!("{base}/status"))
            .send()
            .await
            .ok()?
            .json()
            .await
            .ok()?;
        v["value"]["nodes"].as_array()?.iter().filter_map(|n| n["sessionTimeout"].as_u64()).min()
    }
    .await;
    limit_ms
        .map(|ms| Duration::from_millis(ms / 3))
        .unwrap_or(KEEPALIVE_MAX)
        .clamp(Duration::from_secs(1), KEEPALIVE_MAX)
}

/// `GET /session/ID/timeouts` every third of the grid's idle limit: a WebDriver
/// command that touches no page, so the grid counts the session as in use. A 404 means the grid
/// ended it: the browser session is marked dead, so that the next call starts a
/// new one (and is told) instead of waiting on a websocket that leads nowhere.
async fn keep_alive(base: String, url: String, alive: Arc<AtomicBool>) {
    let every = keepalive_every(&base).await;
    let Ok(client) = client(SHORT_TIMEOUT) else { return };
    loop {
        tokio::time::sleep(every).await;
        if !alive.load(Ordering::Relaxed) {
            return;
        }
        match client.get(&url).send().await {
            Ok(r) if r.status() == reqwest::StatusCode::NOT_FOUND => {
                tracing::warn!(
                    "the grid ended the browser's session (its idle limit, or an operator)"
                );
                alive.store(false, Ordering::Relaxed);
                return;
            }
            Ok(_) => {}
            Err(e) => tracing::debug!(error = %e, "grid keep-alive failed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_asked_with_the_endpoints_capabilities_and_reached_through_it() {
        let mut e = Endpoint::parse("selenium+https://u:pw@grid.example:4444/wd/hub/", None)
            .expect("valid");
        assert_eq!(e.grid_base(), "https://u:pw@grid.example:4444/wd/hub");
        e.capabilities.insert("browserName".into(), json!("MicrosoftEdge"));
        e.capabilities.insert("se:name".into(), json!("ochre"));
        assert_eq!(
            capabilities(&e),
            json!({"capabilities": {"alwaysMatch": {"browserName": "MicrosoftEdge", "se:name": "ochre"}}})
        );
        assert_eq!(
            through_endpoint(&e, "ws://10.0.0.7:4444/session/ab12/se/cdp"),
            "wss://grid.example:4444/session/ab12/se/cdp"
        );
        assert!(is_session_id("4df1c5698f3d25f6500fae02926be8f1"));
        assert!(!is_session_id("../x") && !is_session_id(""));
    }
}
