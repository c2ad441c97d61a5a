//! Talking to Chromium: CDP errors said in the registry's codes with their
//! cause, bounded waits, navigation that says what the tab shows when it
//! times out, and raw commands chromiumoxide has no type for.

use super::*;
use chromiumoxide::cdp::browser_protocol::network::{EventLoadingFailed, ResourceType};
use chromiumoxide::cdp::browser_protocol::page::{
    EventFrameNavigated, EventLifecycleEvent, EventNavigatedWithinDocument,
};

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
            ("second connection to the browser is closed", CdpCause::ConnectionEnded),
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
///
/// A page that navigates itself again and again before any of its documents
/// has loaded (a script that submits its own form at once, a refresh with no
/// delay) never gives a load event: once [`SELF_NAVIGATIONS`] documents have
/// come in the main frame, none loaded, its loading is stopped (as the stop
/// button stops it) and the wait ends, where it would
/// otherwise last out the whole timeout.
pub(super) async fn goto(page: &Page, url: &str) -> Result<(), GotoError> {
    let asked = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
    // (Listening before the navigation is asked for: its first document counts.)
    let documents = page.event_listener::<EventFrameNavigated>().await.ok();
    let started = std::time::Instant::now();
    let looping = async {
        let Some(mut documents) = documents else {
            return std::future::pending().await;
        };
        let mut n = 0;
        while let Some(ev) = documents.next().await {
            if ev.frame.parent_id.is_none() {
                n += 1;
                if n >= SELF_NAVIGATIONS {
                    return (n, ev.frame.url.clone());
                }
            }
        }
        std::future::pending().await
    };
    let e = tokio::select! {
        r = page.goto(url) => match r {
            Ok(_) => return Ok(()),
            Err(e @ chromiumoxide::error::CdpError::Timeout) => e,
            Err(e) => return Err(GotoError(e.to_string())),
        },
        (n, last) = looping => {
            let said = stop_looping(page, n, started, Some(&last)).await;
            return Err(GotoError(format!("{said}{STAYS}")));
        }
    };
    let shows = "({state: document.readyState, began: performance.timeOrigin, url: location.href})";
    let seen = tokio::time::timeout(Duration::from_secs(5), page.evaluate(shows)).await;
    let Ok(Ok(seen)) = seen else {
        return Err(GotoError(format!("{e} (the tab did not say what it shows)")));
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
    Err(GotoError(format!("{e} (the tab shows {shown}, {which}, ready state {state})")))
}

/// The documents a navigation's main frame may get, none loaded, before the
/// wait for a load ends: a redirect by script is one each (a sign-in's chain
/// a few), a page that navigates itself at once, dozens a second.
const SELF_NAVIGATIONS: usize = 8;

/// Why a navigation's page did not load ([`goto`], [`BrowserManager::load`]):
/// the browser's (or chromiumoxide's) word, with what the tab shows; or that
/// the page navigated itself again and again, and was stopped.
#[derive(Debug)]
pub(super) struct GotoError(String);

impl std::fmt::Display for GotoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A page that navigated itself `n` times since `started` (the last to
/// `last`), none of its documents loaded: stopped, as the stop button stops
/// it (the navigation it has begun is cancelled, its document stops
/// loading), and said.
async fn stop_looping(
    page: &Page,
    n: usize,
    started: std::time::Instant,
    last: Option<&str>,
) -> String {
    let took = started.elapsed().as_millis();
    // (Sent as the next document commits, it is refused, "Not attached to
    // an active page": asked again a little later, for up to 200 ms.)
    let mut stop = Err(String::new());
    for _ in 0..20 {
        stop = raw_command(page, "Page.stopLoading", serde_json::json!({}))
            .await
            .map_err(|e| e.message);
        if stop.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let after = match stop {
        Ok(_) => "stopped its loading, as the stop button does".to_owned(),
        Err(why) => format!("could not stop it ({why})"),
    };
    // (Where the main frame's events do not say: its document now.)
    let now = match last {
        Some(_) => None,
        None => raw_command(page, "Page.getFrameTree", serde_json::json!({})).await.ok(),
    };
    let last = last.or_else(|| now.as_ref()?["frameTree"]["frame"]["url"].as_str());
    let last = last.map(|u| format!(", the last {u}")).unwrap_or_default();
    format!(
        "the page navigated itself again and again before any of its documents loaded ({n} \
         documents in {took} ms{last}); ochre {after}"
    )
}

/// What [`BrowserManager::load`] loads.
#[derive(Debug, Clone, Copy)]
pub(super) enum Load<'a> {
    /// A new document from this address (or a fragment of the one shown).
    Url(&'a str),
    /// The document shown, again.
    Reload,
}

impl BrowserManager {
    /// Load a document in `page` (a tab of browser `slot`) and wait for its
    /// load event; whether a document loaded (a fragment of the document
    /// shown loads none). ochre follows the navigation itself, by the tab's
    /// lifecycle events: the navigation's own document, or one the page went
    /// on to by itself (a redirect by script), has loaded; a page that goes
    /// on again and again is stopped at [`SELF_NAVIGATIONS`] and left for
    /// `about:blank` (see `leave_looping`).
    ///
    /// `Page.navigate` goes over the host's own connection to the browser
    /// (the one it keeps for cross-site frames): chromiumoxide takes every
    /// `Page.navigate` sent over its connection into a queue of its own, one
    /// at a time, held until it sees that navigation load or its own 30 s
    /// request timeout pass, even after the caller stopped waiting; a tab
    /// whose load was cut short by its timeout (a crawl's worker tab, a
    /// navigation with a short timeout) or stopped would wait behind it.
    /// Without a second connection (a pool endpoint that refuses one) the
    /// address is loaded through that queue ([`goto`]).
    pub(super) async fn load(
        &self,
        slot: usize,
        page: &Page,
        how: Load<'_>,
    ) -> Result<bool, GotoError> {
        let failed = |e: ToolError| GotoError(e.message);
        let link = match how {
            Load::Url(url) => match self.frame_link(slot).await {
                Ok(link) => Some((link, url)),
                Err(_) => return goto(page, url).await.map(|()| true),
            },
            Load::Reload => None,
        };
        // (Listening before the navigation is asked for: none of its events is missed.)
        let mut life = page
            .event_listener::<EventLifecycleEvent>()
            .await
            .map_err(|e| GotoError(e.to_string()))?;
        let within = page.event_listener::<EventNavigatedWithinDocument>().await.ok();
        // (What the main frame committed, and the documents that failed: a
        // document that could not be loaded is the browser's error page.)
        let mut shown = ErrorPage {
            navigated: page.event_listener::<EventFrameNavigated>().await.ok(),
            failed: page.event_listener::<EventLoadingFailed>().await.ok(),
        };
        let started = std::time::Instant::now();
        // The main frame, and this navigation's documents: its own, then
        // those the page went on to.
        let (main, mut ours) = match link {
            Some((link, url)) => {
                let target = page.target_id().as_ref().to_owned();
                let r = link.send(&target, "Page.navigate", serde_json::json!({"url": url}));
                let r = r.await.map_err(failed)?;
                if let Some(why) = r["errorText"].as_str().filter(|t| !t.is_empty()) {
                    if r["isDownload"].as_bool() == Some(true) {
                        return Err(GotoError(format!(
                            "the address is a file to download, not a page ({why}): the \
                             download goes to the session's downloads"
                        )));
                    }
                    if why == "net::ERR_ABORTED" {
                        let shown = crate::frame_url(page).await;
                        return Err(GotoError(format!(
                            "the browser showed no new page ({why}: the server answered with no \
                             content, such as a 204, or the navigation was cancelled); the tab \
                             still shows {shown}"
                        )));
                    }
                    return Err(GotoError(why.to_owned()));
                }
                // No new document: a fragment of the one shown. (Answered
                // once chromiumoxide, which says where the tab is, has heard
                // of it on its own connection.)
                let Some(loader) = r["loaderId"].as_str() else {
                    if let (Some(mut within), Some(main)) = (within, r["frameId"].as_str()) {
                        let heard = async {
                            while let Some(ev) = within.next().await {
                                if ev.frame_id.as_ref() == main {
                                    return;
                                }
                            }
                        };
                        let _ = tokio::time::timeout(Duration::from_secs(1), heard).await;
                    }
                    return Ok(false);
                };
                (r["frameId"].as_str().map(str::to_owned), vec![loader.to_owned()])
            }
            None => reload(page, &mut life).await?,
        };
        let mut committed = matches!(how, Load::Reload);
        while let Some(ev) = life.next().await {
            if main.as_deref().is_some_and(|m| m != ev.frame_id.as_ref()) {
                continue;
            }
            let l: &str = ev.loader_id.as_ref();
            match ev.name.as_str() {
                "init" if ours.iter().any(|o| o == l) => committed = true,
                "init" if committed => {
                    ours.push(l.to_owned());
                    if ours.len() >= SELF_NAVIGATIONS {
                        let said = stop_looping(page, ours.len(), started, None).await;
                        return Err(self.leave_looping(slot, page, &mut life, said).await);
                    }
                }
                "load" if ours.iter().any(|o| o == l) => {
                    return match shown.of(main.as_deref()) {
                        Some(why) => Err(GotoError(why)),
                        None => Ok(true),
                    };
                }
                _ => {}
            }
        }
        Err(ended(page).await)
    }

    /// A page stopped for navigating itself again and again is left for
    /// `about:blank`, and the error says so: a stop alone may not end it (a navigation already committing when
    /// the stop came goes on to submit again; a script of the document that
    /// retries, as rustdoc's search page does when its index does not load,
    /// starts it again), and it would use a core until the tab is navigated
    /// away. Asked again (stopped first) when the page's next navigation
    /// cancels ours, [`LEAVE_TRIES`] times.
    async fn leave_looping(
        &self,
        slot: usize,
        page: &Page,
        life: &mut chromiumoxide::listeners::EventStream<EventLifecycleEvent>,
        said: String,
    ) -> GotoError {
        let target = page.target_id().as_ref().to_owned();
        let Ok(link) = self.frame_link(slot).await else {
            return GotoError(format!("{said}{STAYS}"));
        };
        let mut why = String::new();
        for attempt in 0..LEAVE_TRIES {
            if attempt > 0 {
                let _ = raw_command(page, "Page.stopLoading", serde_json::json!({})).await;
            }
            let blank = async {
                let r =
                    link.send(&target, "Page.navigate", serde_json::json!({"url": "about:blank"}));
                let loader = r.await?["loaderId"].as_str().map(str::to_owned);
                while let Some(ev) = life.next().await {
                    if ev.name == "load" && loader.as_deref() == Some(ev.loader_id.as_ref()) {
                        return Ok(());
                    }
                }
                Err(ToolError::browser_error("the tab's events ended"))
            };
            match bounded(1_000, "leaving the page for about:blank", blank).await {
                Ok(()) => {
                    return GotoError(format!("{said}, and left it: the tab shows about:blank"));
                }
                Err(e) => why = e.message,
            }
        }
        GotoError(format!(
            "{said}, but could not leave it for about:blank ({why}): the page may go on \
             navigating itself; close the tab, or navigate it elsewhere"
        ))
    }
}

/// Reload `page`'s document: the main frame, and the reload's document (the
/// next the main frame commits), from the tab's lifecycle events `life`.
async fn reload(
    page: &Page,
    life: &mut chromiumoxide::listeners::EventStream<EventLifecycleEvent>,
) -> Result<(Option<String>, Vec<String>), GotoError> {
    let failed = |e: ToolError| GotoError(e.message);
    let tree = raw_command(page, "Page.getFrameTree", serde_json::json!({}));
    let tree = tree.await.map_err(failed)?;
    let frame = &tree["frameTree"]["frame"];
    let shown = frame["loaderId"].as_str().unwrap_or_default().to_owned();
    raw_command(page, "Page.reload", serde_json::json!({})).await.map_err(failed)?;
    let main = frame["id"].as_str().map(str::to_owned);
    loop {
        let Some(ev) = life.next().await else { return Err(ended(page).await) };
        let l: &str = ev.loader_id.as_ref();
        if main.as_deref().is_none_or(|m| m == ev.frame_id.as_ref())
            && ev.name == "init"
            && l != shown
        {
            return Ok((main, vec![l.to_owned()]));
        }
    }
}

/// Whether the document a load ended on is the browser's own error page: it
/// loads in place of one that could not be loaded (the server down, a name
/// that does not resolve), with a `load` of its own. `Page.navigate` says
/// so in its answer; a reload, and a document the page went on to by
/// itself, only by the frame's commit.
struct ErrorPage {
    navigated: Option<chromiumoxide::listeners::EventStream<EventFrameNavigated>>,
    failed: Option<chromiumoxide::listeners::EventStream<EventLoadingFailed>>,
}

impl ErrorPage {
    /// Why the main frame (`main`, else the top) shows the browser's error
    /// page, from the events heard so far (they come before its `load`), or
    /// `None` when it shows a document of the page's.
    fn of(&mut self, main: Option<&str>) -> Option<String> {
        use futures::FutureExt as _;
        let mut unreachable = None;
        while let Some(Some(ev)) = self.navigated.as_mut().and_then(|n| n.next().now_or_never()) {
            let f = &ev.frame;
            if main.map_or(f.parent_id.is_none(), |m| f.id.as_ref() == m) {
                unreachable = f.unreachable_url.clone();
            }
        }
        let url = unreachable?;
        let mut code = None;
        while let Some(Some(ev)) = self.failed.as_mut().and_then(|n| n.next().now_or_never()) {
            if ev.r#type == ResourceType::Document {
                code = Some(ev.error_text.clone());
            }
        }
        let code = code.map(|c| format!("{c}: ")).unwrap_or_default();
        Some(format!(
            "{code}the browser could not load {url} and shows its error page in its place"
        ))
    }
}

/// What a looping page left where it is is said to do.
const STAYS: &str = " (a script of the page may start it again): read the tab to see where it is";

/// How many times a looping page is asked to leave for `about:blank`.
const LEAVE_TRIES: usize = 3;

/// The tab's events ended before its page loaded: its connection ended
/// (the browser went away: the page's commands say so, in the words
/// [`CdpCause`] reads), or the tab closed.
async fn ended(page: &Page) -> GotoError {
    let asked = raw_command(page, "Page.getFrameTree", serde_json::json!({}));
    let why = match tokio::time::timeout(Duration::from_secs(2), asked).await {
        Ok(Err(e)) => e.message,
        _ => "the tab's events ended".to_owned(),
    };
    GotoError(format!("{why} before the page loaded"))
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
