//! Talking to Chromium: CDP errors said in the registry's codes with their
//! cause, bounded waits, navigation that says what the tab shows when it
//! times out, and raw commands chromiumoxide has no type for.

use super::*;

pub(super) fn not_found(id: &str) -> ToolError {
    ochre_protocol::browser::tab_not_found(id)
}

/// A failed CDP command as a tool error: the one place that reads what the
/// browser's (and chromiumoxide's) wording means. The document the command ran
/// in went away is `DOCUMENT_LOADING` (a read retries it once); the rest is
/// `BROWSER_ERROR`, with its [`CdpCause`] where callers act on it.
pub(super) fn cdp_error(what: &str, e: impl std::fmt::Display) -> ToolError {
    let text = e.to_string();
    let message = format!("{what}: {text}");
    match CdpCause::of(&text) {
        Some(CdpCause::DocumentGone) => ToolError::document_loading(message),
        _ => with_cdp_cause(ToolError::browser_error(message), &text),
    }
}

/// `err`, a failed CDP command told in its caller's code (a tab that did not
/// open is `NAVIGATION_FAILED`), with the [`CdpCause`] the command's error `e`
/// gives, so that a connection that ended is known as such whatever the code.
pub(super) fn with_cdp_cause(err: ToolError, e: &impl std::fmt::Display) -> ToolError {
    match CdpCause::of(&e.to_string()) {
        Some(cause) => err.with(CdpCause::KEY, cause.as_str()),
        None => err,
    }
}

/// Why a CDP command failed, where a caller does something about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CdpCause {
    /// The document (execution context) the command ran in was replaced or
    /// its frame went away.
    DocumentGone,
    /// The CDP session (a frame target's) is gone: attach again.
    SessionGone,
    /// The connection to the browser ended (the reply channel was dropped).
    ConnectionEnded,
}

impl CdpCause {
    /// The error's detail that carries the cause.
    pub(super) const KEY: &str = "cdpCause";

    pub(super) fn of(text: &str) -> Option<Self> {
        // Lower case; the first that the text holds.
        const WORDING: &[(&str, CdpCause)] = &[
            ("inspected target navigated or closed", CdpCause::DocumentGone),
            ("execution context", CdpCause::DocumentGone),
            ("cannot find context with specified id", CdpCause::DocumentGone),
            ("session with given id", CdpCause::SessionGone),
            ("oneshot canceled", CdpCause::ConnectionEnded),
            ("receiver is gone", CdpCause::ConnectionEnded),
        ];
        let text = text.to_ascii_lowercase();
        WORDING.iter().find(|(w, _)| text.contains(w)).map(|(_, c)| *c)
    }

    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::DocumentGone => "document-gone",
            Self::SessionGone => "session-gone",
            Self::ConnectionEnded => "connection-ended",
        }
    }

    /// Whether `e` failed for this cause.
    pub(super) fn of_error(self, e: &ToolError) -> bool {
        match self {
            Self::DocumentGone => e.code == Code::DocumentLoading,
            _ => e.details.get(Self::KEY).and_then(Value::as_str) == Some(self.as_str()),
        }
    }
}

pub(super) async fn bounded<T>(
    ms: u32,
    what: &str,
    fut: impl std::future::Future<Output = Result<T, ToolError>>,
) -> Result<T, ToolError> {
    let ms = if ms == 0 { 30_000 } else { ms };
    match tokio::time::timeout(Duration::from_millis(u64::from(ms)), fut).await {
        Ok(r) => r,
        Err(_) => Err(ToolError::timeout(format!("{what} did not finish within {ms} ms"))
            .with("timeoutMs", ms)),
    }
}

/// Load `url` in `page` and wait for its load event. chromiumoxide's `goto`
/// follows the main frame's lifecycle events and says "Request timed out"
/// when its request timeout passes first: then the page itself says whether a
/// document whose navigation began after this call has loaded (the time
/// origin of the tab's document, its ready state), and a failure says what
/// the tab shows. The error's text is chromiumoxide's, with that added.
pub(super) async fn goto(page: &Page, url: &str) -> Result<(), String> {
    let asked = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
    let e = match page.goto(url).await {
        Ok(_) => return Ok(()),
        Err(e @ chromiumoxide::error::CdpError::Timeout) => e,
        Err(e) => return Err(e.to_string()),
    };
    let shows = "({state: document.readyState, began: performance.timeOrigin, url: location.href})";
    let seen = tokio::time::timeout(Duration::from_secs(5), page.evaluate(shows)).await;
    let Ok(Ok(seen)) = seen else {
        return Err(format!("{e} (the tab did not say what it shows)"));
    };
    let seen: Value = seen.into_value().unwrap_or_default();
    let state = seen["state"].as_str().unwrap_or("?");
    let shown = seen["url"].as_str().unwrap_or("?");
    // The time origin is coarsened to a fraction of a millisecond.
    let began_after = seen["began"].as_f64().is_some_and(|t| t + 1.0 >= asked);
    if began_after && state == "complete" {
        tracing::warn!(
            url,
            shown,
            "a navigation's load was missed by its watcher; the page says it loaded"
        );
        return Ok(());
    }
    let which = if began_after {
        "a document loaded since the call"
    } else {
        "the document from before the call"
    };
    Err(format!("{e} (the tab shows {shown}, {which}, ready state {state})"))
}

/// A browser out of its `Arc`, once no call holds it any more (each call is
/// bounded, so that comes); `None` if one still does after 15 s.
pub(super) async fn sole(mut browser: Arc<Browser>) -> Option<Browser> {
    let until = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        match Arc::try_unwrap(browser) {
            Ok(b) => return Some(b),
            Err(shared) if std::time::Instant::now() < until => {
                browser = shared;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(_) => {
                tracing::warn!("a call still holds the old browser after 15 s; leaving it to drop");
                return None;
            }
        }
    }
}

/// A CDP command by name, for the `cdp` interface.
#[derive(Debug, Clone)]
pub(super) struct RawCommand {
    pub(crate) method: chromiumoxide::types::MethodId,
    pub(crate) params: Value,
}

impl serde::Serialize for RawCommand {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.params.serialize(s)
    }
}

impl chromiumoxide::Method for RawCommand {
    fn identifier(&self) -> chromiumoxide::types::MethodId {
        self.method.clone()
    }
}

impl chromiumoxide::Command for RawCommand {
    type Response = Value;
}

/// Send a CDP command by name to a page (bounded by 30 s).
pub(crate) async fn raw_command(
    page: &Page,
    method: &str,
    params: Value,
) -> Result<Value, ToolError> {
    let cmd = RawCommand { method: method.to_owned().into(), params };
    bounded(30_000, method, async {
        page.execute(cmd).await.map(|r| r.result.clone()).map_err(|e| cdp_error(method, e))
    })
    .await
}
