//! A tab's console and network as the host sees them (TabWatch): messages kept,
//! requests in flight and the ones an action sent, websocket answers; the CDP
//! event streams that feed it.

use super::*;

/// Console messages kept per tab.
const CONSOLE_CAP: usize = 1000;

/// Longest console message kept, in chars.
const CONSOLE_TEXT_MAX: usize = 2000;

/// Requests in flight longer than this (long polls) do not hold up a quiet wait.
pub(super) const LONG_REQUEST: Duration = Duration::from_millis(1000);

/// A websocket that brought a frame this shortly before an action is busy on its
/// own: its frames are not the action's answer.
const WS_BUSY: Duration = Duration::from_millis(500);

/// How long the events of the requests a page says an action sent may take
/// to come (they travel apart from the page's answer).
pub(super) const SENT_SEEN: Duration = Duration::from_millis(500);

/// How long an action's answer over a websocket may take to begin, and the pause
/// in its frames that ends it.
pub(super) const WS_FIRST: Duration = Duration::from_millis(500);

pub(super) const WS_PAUSE: Duration = Duration::from_millis(250);

/// The longest pause that ends such an answer (see settle: twice the time
/// its first frame took to come, at least [`WS_PAUSE`]).
pub(super) const WS_PAUSE_MAX: Duration = Duration::from_millis(1000);

/// How long after an action began or last sent input, at most, the frames
/// that come are taken as its own when it is never answered (an input that
/// failed).
const ACTING_MAX: Duration = Duration::from_secs(10);

/// How long after an action answered over a websocket the frames that come
/// are still its late answers (a kernel's last completions on a loaded
/// machine), not the page's own: the next action is not taken for one on a
/// busy stream because of them.
const WS_TRAIL: Duration = Duration::from_millis(1500);

impl TabWatch {
    fn push_console(&self, level: &str, text: String) {
        let text: String = text.chars().take(CONSOLE_TEXT_MAX).collect();
        let ts = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
        let mut q = lock(&self.console);
        if q.len() >= CONSOLE_CAP {
            q.pop_front();
            self.dropped.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        q.push_back(json!({"level": level, "text": text, "time": ts}));
    }

    fn net_start(&self, id: String, url: &str) {
        let mut n = lock(&self.net);
        n.started += 1;
        if n.ended_early.remove(&id).is_some() {
            return;
        }
        n.inflight.insert(id, (Instant::now(), url.chars().take(200).collect()));
        n.last_change = Some(Instant::now());
    }

    /// A request of one of the tab's documents: the main frame's navigation
    /// requests name its document (by loader id), and the fetch and XHR
    /// requests to the web of that document are counted (the first time
    /// only: a redirect sends the event again).
    fn net_document(&self, ev: &EventRequestWillBeSent) {
        let loader = ev.loader_id.inner();
        let main = ev.frame_id.as_ref().is_some_and(|f| *f.inner() == self.main_frame);
        let mut n = lock(&self.net);
        match ev.r#type {
            Some(ResourceType::Document)
                if main && n.doc.as_ref().is_none_or(|(l, _)| l != loader) =>
            {
                n.doc = Some((loader.clone(), 0));
            }
            Some(ResourceType::Fetch | ResourceType::Xhr)
                if ev.redirect_response.is_none() && is_web(&ev.request.url) =>
            {
                if let Some((_, sent)) = n.doc.as_mut().filter(|(l, _)| l == loader) {
                    *sent += 1;
                }
            }
            _ => {}
        }
    }

    /// A new document: requests of the old one no longer matter.
    fn net_reset(&self) {
        let mut n = lock(&self.net);
        n.inflight.clear();
        n.ended_early.clear();
        n.last_change = None;
        n.load_reported = None;
        n.after_load = None;
        // (Its sockets' frames answer no action taken on the old one.)
        n.trail_until = None;
    }

    fn net_end(&self, id: &str) {
        let mut n = lock(&self.net);
        if n.inflight.remove(id).is_some() {
            n.last_change = Some(Instant::now());
        } else {
            // Ends of requests never started here (data: URLs, images, ...) are
            // kept briefly in case their start is still on its way.
            let now = Instant::now();
            n.ended_early.retain(|_, t| now.duration_since(*t) < Duration::from_secs(10));
            if n.ended_early.len() < 10_000 {
                n.ended_early.insert(id.to_owned(), now);
            }
        }
    }

    /// From now on, requests count as the action's.
    pub(super) fn action_begins(&self) {
        let started = {
            let mut n = lock(&self.net);
            n.acting_since = Some(Instant::now());
            n.by_socket = false;
            n.started
        };
        *lock(&self.action) = Some((Instant::now(), started));
    }

    /// The action under way sends input: it goes on (typing a long text
    /// into a heavy editor takes longer than `ACTING_MAX`).
    pub(crate) fn action_goes_on(&self) {
        let mut n = lock(&self.net);
        if n.acting_since.is_some() {
            n.acting_since = Some(Instant::now());
        }
    }

    /// An action has been answered (or has failed): frames that come now are
    /// the page's own again.
    pub(super) fn action_answered(&self) {
        let mut n = lock(&self.net);
        n.acting_since = None;
        if std::mem::take(&mut n.by_socket) {
            n.trail_until = Some(Instant::now() + WS_TRAIL);
        }
    }

    /// A websocket frame came: the page's own unless an action is under way
    /// (between its start and its answer) or one answered over the socket
    /// has just been answered (its late answers: see `WS_TRAIL`).
    fn socket_frame(&self) {
        let mut n = lock(&self.net);
        let now = Instant::now();
        n.ws_received = Some(now);
        let acting = n.acting_since.is_some_and(|t| now.saturating_duration_since(t) <= ACTING_MAX);
        let trailing = n.trail_until.is_some_and(|t| now < t);
        if trailing && !acting {
            tracing::trace!("a websocket frame after an action's answer: its late answer");
        }
        if !acting && !trailing {
            n.ws_own = Some(now);
        }
    }

    /// Whether the action that began at `since` is answered over a websocket
    /// (a notebook's output comes so): it was not busy on its own just before
    /// (a chatty stream of prices is no answer; frames that answered the
    /// action before, such as an editor's completions while typing, are not
    /// the page's own), and the action sent a frame, or sent a request on a
    /// page whose socket has brought frames. (A frame sent is enough: the
    /// server's first answer may come after the page has settled.)
    pub(super) fn answer_by_socket(&self, since: Instant, requests: u64) -> bool {
        let mut n = lock(&self.net);
        let chatty = n.ws_own.is_some_and(|t| since.saturating_duration_since(t) < WS_BUSY);
        let sent = n.ws_sent.is_some_and(|t| t >= since);
        let by_socket = !chatty && (sent || (requests > 0 && n.ws_received.is_some()));
        tracing::debug!(
            by_socket,
            chatty,
            sent,
            requests,
            own_before_ms = ?n.ws_own.map(|t| since.saturating_duration_since(t).as_millis()),
            "an action's answer over a websocket?"
        );
        n.by_socket = by_socket;
        by_socket
    }

    /// When a websocket frame came after `since`, the last one.
    pub(super) fn socket_frame_after(&self, since: Instant) -> Option<Instant> {
        lock(&self.net).ws_received.filter(|t| *t >= since)
    }

    /// The requests an action started (see [`Self::action_begins`]): how many,
    /// and the URLs of those still in flight.
    pub(super) fn action_requests(&self, since: (Instant, u64)) -> (u64, Vec<String>) {
        let started = lock(&self.net).started;
        (started.saturating_sub(since.1), self.in_flight(Some(since.0)))
    }

    /// The requests in flight (begun at `since` or later): URL and age.
    pub(super) fn in_flight(&self, since: Option<Instant>) -> Vec<String> {
        let n = lock(&self.net);
        n.inflight
            .values()
            .filter(|(t, _)| since.is_none_or(|s| *t >= s))
            .map(|(t, u)| format!("{u} ({} ms)", t.elapsed().as_millis()))
            .collect()
    }

    /// How long until the network has been quiet for `quiet`: no short
    /// request in flight, and none started or ended (counted from `floor` at
    /// the earliest). Zero once it has; `quiet` while a request is in flight.
    pub(super) fn quiet_in(&self, quiet: Duration, floor: Instant) -> Duration {
        let n = lock(&self.net);
        if n.inflight.values().any(|(t, _)| t.elapsed() < LONG_REQUEST) {
            return quiet;
        }
        let since = n.last_change.map_or(floor, |t| t.max(floor));
        quiet.saturating_sub(since.elapsed())
    }
}

impl BrowserManager {
    /// Start collecting console messages, network activity and dialogs of a new
    /// tab.
    pub(crate) async fn watch_tab(&self, n: TabId, page: &Page) {
        self.size_window(page).await;
        workers_start_unpaused(page).await;
        self.watch_dialogs(n, page).await;
        self.install_load_reports(n, page).await;
        let main_frame = page.target_id().inner().clone();
        let w = Arc::new(TabWatch { main_frame, ..TabWatch::default() });
        self.inner.tabs.with(n, |t| t.watch = Some(w.clone()));
        watch_console(page, &w).await;
        watch_network(page, &w).await;
        self.capture_if_session(n, page, &w).await;
        let who = self.inner.tabs.owner_of(n);
        if let Err(e) = self.route_tab(n, page, &who).await {
            tracing::warn!(error = %e.message, "a new tab does not pass by its session's routes");
        }
    }

    /// Forget the requests in flight of a tab (before it loads a new document).
    pub(crate) fn reset_network(&self, n: TabId) {
        if let Some(w) = self.tab_watch(n) {
            w.net_reset();
        }
    }

    /// Wait (at most 1 s) until every console message the page logged before
    /// now is in the tab's buffer: a marker logged from an isolated world (the
    /// page's scripts never see it) comes through the same event stream after
    /// them. Best effort: a page that cannot be reached is read as it is.
    pub(super) async fn console_settled(&self, n: TabId, page: &Page) {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let Some(w) = self.tab_watch(n) else {
            return;
        };
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let passed = w.fence_passed.notified();
        tokio::pin!(passed);
        passed.as_mut().enable();
        let fenced = async {
            let tree = raw_command(page, "Page.getFrameTree", json!({})).await?;
            let frame = tree["frameTree"]["frame"]["id"].clone();
            let world = raw_command(
                page,
                "Page.createIsolatedWorld",
                json!({"frameId": frame, "worldName": "ochre-console-fence"}),
            )
            .await?;
            let marker = json!(format!("{CONSOLE_FENCE}{id}"));
            raw_command(
                page,
                "Runtime.evaluate",
                json!({"expression": format!("console.debug({marker})"), "contextId": world["executionContextId"]}),
            )
            .await
        };
        if fenced.await.is_err() {
            return;
        }
        let _ = tokio::time::timeout(Duration::from_secs(1), async {
            while *lock(&w.console_fence) < id {
                passed.as_mut().await;
                passed.set(w.fence_passed.notified());
                passed.as_mut().enable();
            }
        })
        .await;
    }

    /// The console buffer of tab `n` (`console` page-op: level, limit, clear).
    pub(crate) fn console_messages(&self, n: TabId, args: &Console) -> page_ops::ConsoleMessages {
        let Some(w) = self.tab_watch(n) else {
            return page_ops::ConsoleMessages::default();
        };
        let level = args.level.as_deref();
        let limit = args.limit.map_or(100, |l| l as usize);
        let mut q = lock(&w.console);
        let all: Vec<&Value> = q
            .iter()
            .filter(|m| {
                level.is_none_or(|l| m["level"] == l || (l == "error" && m["level"] == "exception"))
            })
            .collect();
        let skip = all.len().saturating_sub(limit);
        let messages: Vec<Value> = all.into_iter().skip(skip).cloned().collect();
        let dropped = w.dropped.load(std::sync::atomic::Ordering::Relaxed);
        let total = q.len();
        if args.clear == Some(true) {
            q.clear();
            w.dropped.store(0, std::sync::atomic::Ordering::Relaxed);
        }
        page_ops::ConsoleMessages { messages, total, dropped }
    }

    pub(crate) fn tab_watch(&self, n: TabId) -> Option<Arc<TabWatch>> {
        self.inner.tabs.with(n, |t| t.watch.clone()).flatten()
    }

    /// Wait until the tab has had no (short) request in flight for `quiet_ms`
    /// from now on, at most `max_ms`. Whether it went quiet.
    pub(super) async fn network_quiet(&self, n: TabId, quiet_ms: u64, max_ms: u64) -> bool {
        let Some(w) = self.tab_watch(n) else {
            return true;
        };
        let start = Instant::now();
        let quiet = Duration::from_millis(quiet_ms);
        loop {
            let left = w.quiet_in(quiet, start);
            if left.is_zero() {
                return true;
            }
            if start.elapsed() >= Duration::from_millis(max_ms) {
                tracing::debug!(pending = ?w.in_flight(None), "the network did not go quiet");
                return false;
            }
            // Wake when the quiet is due, and every 10 ms at most.
            tokio::time::sleep(left.clamp(Duration::from_millis(1), Duration::from_millis(10)))
                .await;
        }
    }
}

/// What a console fence logs (then its number).
const CONSOLE_FENCE: &str = "\u{1}ochre-console-fence:";

/// The number of a console fence, if `ev` is one.
fn fence_of(ev: &EventConsoleApiCalled) -> Option<u64> {
    match ev.args.first().and_then(|a| a.value.as_ref()) {
        Some(Value::String(s)) => s.strip_prefix(CONSOLE_FENCE)?.parse().ok(),
        _ => None,
    }
}

/// Keep a tab's console messages and exceptions in its watch (a console
/// fence wakes who waits for it).
async fn watch_console(page: &Page, w: &Arc<TabWatch>) {
    on_event(page, w, |w, ev: &EventConsoleApiCalled| {
        if let Some(id) = fence_of(ev) {
            let mut fence = lock(&w.console_fence);
            *fence = (*fence).max(id);
            drop(fence);
            w.fence_passed.notify_waiters();
            return;
        }
        let text = ev
            .args
            .iter()
            .map(|a| match &a.value {
                Some(Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
                None => a.description.clone().unwrap_or_default(),
            })
            .collect::<Vec<_>>()
            .join(" ");
        let level = serde_json::to_value(&ev.r#type)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "log".into());
        w.push_console(&level, text);
    })
    .await;
    on_event(page, w, |w, ev: &EventExceptionThrown| {
        let d = &ev.exception_details;
        let text = d
            .exception
            .as_ref()
            .and_then(|e| e.description.clone())
            .unwrap_or_else(|| d.text.clone());
        w.push_console("exception", text);
    })
    .await;
}

/// Follow a tab's requests in its watch: the network capture, what counts for
/// a quiet network, websocket frames.
async fn watch_network(page: &Page, w: &Arc<TabWatch>) {
    on_event(page, w, |w, ev: &EventRequestWillBeSent| {
        let kind = ev
            .r#type
            .as_ref()
            .and_then(|t| serde_json::to_value(t).ok())
            .and_then(|v| v.as_str().map(str::to_owned));
        w.cap_request(ev, kind);
        w.net_document(ev);
        // What a quiet network means for reading a page: no document,
        // script or data request (XHR, fetch) in flight. Images, fonts and
        // styles load lazily and do not change what tools read.
        let counts = matches!(
            ev.r#type,
            Some(
                ResourceType::Document
                    | ResourceType::Script
                    | ResourceType::Xhr
                    | ResourceType::Fetch
            )
        );
        if counts && !ev.request.url.starts_with("data:") {
            w.net_start(ev.request_id.inner().clone(), &ev.request.url);
        }
    })
    .await;
    on_event(page, w, |w, ev: &EventWebSocketCreated| {
        w.cap_socket_made(ev.request_id.inner(), &ev.url);
    })
    .await;
    on_event(page, w, |w, ev: &EventWebSocketWillSendHandshakeRequest| {
        let (mono, wall) = (*ev.timestamp.inner(), *ev.wall_time.inner());
        w.cap_socket(ev.request_id.inner(), mono, wall, ev.request.headers.inner());
    })
    .await;
    on_event(page, w, |w, ev: &EventWebSocketHandshakeResponseReceived| {
        let r = &ev.response;
        w.cap_socket_open(ev.request_id.inner(), r.status, &r.status_text, r.headers.inner());
    })
    .await;
    on_event(page, w, |w, ev: &EventWebSocketFrameReceived| {
        w.socket_frame();
        w.cap_socket_message(ev.request_id.inner(), false, *ev.timestamp.inner(), &ev.response);
    })
    .await;
    on_event(page, w, |w, ev: &EventWebSocketFrameSent| {
        lock(&w.net).ws_sent = Some(Instant::now());
        w.cap_socket_message(ev.request_id.inner(), true, *ev.timestamp.inner(), &ev.response);
    })
    .await;
    on_event(page, w, |w, ev: &EventWebSocketClosed| {
        w.cap_finished(ev.request_id.inner(), *ev.timestamp.inner(), None, None);
    })
    .await;
    // (Its own loop: a captured document's, fetch's or XHR's body is read
    // as it finishes, apart, while the page still holds it.)
    if let Ok(mut events) = page.event_listener::<EventLoadingFinished>().await {
        let (w, page) = (w.clone(), page.clone());
        tokio::spawn(async move {
            while let Some(ev) = events.next().await {
                let id = ev.request_id.inner();
                w.net_end(id);
                w.cap_finished(id, *ev.timestamp.inner(), Some(ev.encoded_data_length), None);
                if w.cap_wants_body(id) {
                    let (w, page, id) = (w.clone(), page.clone(), id.clone());
                    tokio::spawn(async move {
                        if let Ok((text, base64)) = crate::netcap::body(&page, &id).await {
                            w.cap_body(&id, text, base64);
                        }
                    });
                }
            }
        });
    }
    on_event(page, w, |w, ev: &EventRequestServedFromCache| {
        w.net_end(ev.request_id.inner());
        w.cap_cached(ev.request_id.inner());
    })
    .await;
    on_event(page, w, |w, ev: &EventResponseReceived| {
        w.cap_response(ev.request_id.inner(), &ev.response);
    })
    .await;
    on_event(page, w, |w, ev: &EventLoadingFailed| {
        w.net_end(ev.request_id.inner());
        let (id, at) = (ev.request_id.inner(), *ev.timestamp.inner());
        w.cap_finished(id, at, None, Some(ev.error_text.clone()));
    })
    .await;
}

/// Hand each event `T` of `page` to `f` with the tab's watch, for as long as
/// the page sends them.
async fn on_event<T>(page: &Page, w: &Arc<TabWatch>, f: fn(&TabWatch, &T))
where
    T: chromiumoxide::cdp::IntoEventKind + Unpin + Send + Sync + 'static,
{
    if let Ok(mut events) = page.event_listener::<T>().await {
        let w = w.clone();
        tokio::spawn(async move {
            while let Some(ev) = events.next().await {
                f(&w, &ev);
            }
        });
    }
}

/// Let the workers a tab starts run from their first line. chromiumoxide
/// asks Chromium to hold each new worker, frame and service worker of a page
/// until it is told to run (`waitForDebuggerOnStart`), then tells a service
/// worker to run and detaches from it in the same breath: the detach wins
/// and the service worker never runs, so `navigator.serviceWorker.register`
/// never settles on any site. ochre does nothing in that pause, so it asks
/// for none: auto-attach stays on (chromiumoxide follows frames by it), the
/// hold goes.
async fn workers_start_unpaused(page: &Page) {
    use chromiumoxide::cdp::browser_protocol::target::SetAutoAttachParams;
    let params = SetAutoAttachParams::builder()
        .auto_attach(true)
        .wait_for_debugger_on_start(false)
        .flatten(true)
        .build();
    match params {
        Ok(params) => {
            if let Err(e) = page.execute(params).await {
                tracing::debug!(error = %e, "a new tab's workers may start held");
            }
        }
        Err(e) => tracing::debug!(error = %e, "auto-attach parameters"),
    }
}
