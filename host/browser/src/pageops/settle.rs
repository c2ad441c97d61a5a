//! What an action changed (`settle`: the page's watch and the requests the host
//! saw), and the page's own waits (`wait`: a selector, a function, a navigation).

use super::*;

impl BrowserManager {
    /// What an action changed, once what it started is done: the page's DOM
    /// settles, then the requests the action started (fetch, XHR, scripts,
    /// documents; not those begun before it, nor websockets) end, bounded by
    /// `wait_ms` (default 3 s), and the DOM settles again with their effects.
    /// Still pending at the bound: named in `pending`.
    pub(super) async fn settle_action(
        &self,
        n: TabId,
        page: &Page,
        args: Settle,
        timeout_ms: u32,
    ) -> Result<Settled, ToolError> {
        let r = self.settle_action_once(n, page, args, timeout_ms).await;
        if let Some(w) = self.tab_watch(n) {
            w.action_answered();
        }
        r
    }

    /// One look of the page library's `settle`; a document that went away
    /// is a navigation.
    async fn settle_look(
        &self,
        n: TabId,
        page: &Page,
        args: &Settle,
        timeout_ms: u32,
    ) -> Result<Settled, ToolError> {
        let a = page_ops::to_args(args).map_err(ToolError::internal)?;
        match self.run_op(n, page, Settle::NAME, a, timeout_ms).await {
            Err(e) if document_went_away(&e) => Ok(Settled::navigated(args.token.clone())),
            other => page_ops::from_output::<Settle>(other?).map_err(ToolError::internal),
        }
    }

    /// [`Self::settle_action`]'s work, before its answer ends the action.
    async fn settle_action_once(
        &self,
        n: TabId,
        page: &Page,
        mut args: Settle,
        timeout_ms: u32,
    ) -> Result<Settled, ToolError> {
        let watch = self.tab_watch(n);
        let since = watch.as_ref().and_then(|w| lock(&w.action).take());
        let budget = Duration::from_millis(args.wait_ms.unwrap_or(3_000));
        let start = Instant::now();
        args.keep = Some(since.is_some());
        let mut d = self.settle_look(n, page, &args, timeout_ms).await?;
        // (The requests the page saw the action send: for the wait below.)
        let sent = d.sent.take();
        let (Some(w), Some(since)) = (watch, since) else {
            return Ok(d);
        };
        if d.navigated {
            return Ok(d);
        }
        // The requests the page sent meanwhile (its count): their events may
        // still be on their way here; wait (bounded) until they have come.
        if let Some(sent) = sent {
            let by = Instant::now() + SENT_SEEN;
            while w.action_requests(since).0 < sent && Instant::now() < by {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
        let mut waited = false;
        let pending = loop {
            let (_, pending) = w.action_requests(since);
            if pending.is_empty() || start.elapsed() >= budget {
                break pending;
            }
            waited = true;
            // Looked at often: the answer follows the last response closely.
            tokio::time::sleep(Duration::from_millis(2)).await;
        };
        // An answer over a websocket: its frames, until they pause.
        if pending.is_empty() && w.answer_by_socket(since.0, w.action_requests(since).0) {
            let first_by = Instant::now() + WS_FIRST;
            // How long the server took to begin its answer: one slower to
            // answer (a loaded machine, a cold kernel) pauses longer between
            // its frames too, and the pause that ends the answer grows with it.
            let mut pace: Option<Duration> = None;
            loop {
                let last = w.socket_frame_after(since.0);
                if let (None, Some(t)) = (pace, last) {
                    pace = Some(t.saturating_duration_since(since.0));
                }
                let pause = pace.map_or(WS_PAUSE, |p| (p * 2).clamp(WS_PAUSE, WS_PAUSE_MAX));
                if start.elapsed() >= budget
                    || (last.is_none() && Instant::now() >= first_by)
                    || last.is_some_and(|t| t.elapsed() >= pause)
                {
                    tracing::debug!(
                        waited_ms = start.elapsed().as_millis(),
                        last_frame_ms_ago = ?last.map(|t| t.elapsed().as_millis()),
                        first_frame_ms = ?pace.map(|p| p.as_millis()),
                        pause_ms = pause.as_millis(),
                        "an action's answer over a websocket"
                    );
                    waited |= last.is_some();
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        if waited && pending.is_empty() {
            // Their effects: the DOM settles again (the watch counts from the
            // action's start).
            args.keep = Some(false);
            d = self.settle_look(n, page, &args, timeout_ms).await?;
            d.sent = None;
        } else if let Some(watch) = d.watch.take() {
            // The answer is known: the watch ends without holding it (a round
            // trip). Only that watch ends, should the next action's begin first.
            let end = page_ops::Unwatch { watch: Some(watch), token: args.token.clone() };
            self.unwatch_later(n, page, &end, timeout_ms)?;
        }
        let (requests, _) = w.action_requests(since);
        if requests > 0 {
            d.requests = Some(requests);
            if d.delivered {
                d.changed = true;
            }
        }
        d.pending = pending;
        Ok(d)
    }

    /// `end` (a watch's number and its document's token) in the background
    /// (best effort: a page that went away has no watch left).
    fn unwatch_later(
        &self,
        n: TabId,
        page: &Page,
        end: &page_ops::Unwatch,
        timeout_ms: u32,
    ) -> Result<(), ToolError> {
        let args = page_ops::to_args(end).map_err(ToolError::internal)?;
        let (me, page) = (self.clone(), page.clone());
        // Tab `n` is known: nothing in it asks whose call it is.
        tokio::spawn(async move {
            if let Err(e) = me.run_op(n, &page, page_ops::Unwatch::NAME, args, timeout_ms).await {
                tracing::debug!(error = %e.message, "unwatch after settle");
            }
        });
        Ok(())
    }

    pub(super) async fn wait(
        &self,
        n: TabId,
        page: &Page,
        args: &Wait,
        timeout_ms: u32,
    ) -> Result<Waited, ToolError> {
        let kind = args.kind;
        let value = args.value.as_deref().unwrap_or("");
        let start = Instant::now();
        let deadline = start + Duration::from_millis(u64::from(timeout_ms));
        let key = json!(page_library_key());
        // A URL pattern is checked before the wait begins (ochre's one rule:
        // ochre_protocol::url).
        let url = match kind {
            WaitKind::UrlMatch => Some(
                UrlPattern::parse(value)
                    .map_err(|why| ToolError::invalid_argument("value", why))?,
            ),
            _ => None,
        };
        let mut w = WaitFor {
            kind,
            value,
            visible: args.visible,
            start,
            token_expr: format!("window[{key}] ? window[{key}].token : null"),
            first: None,
            url,
        };
        // The document we start on, to notice the next one.
        let given = args.token.clone();
        if kind == WaitKind::Navigation {
            w.first = match given {
                // The document the caller acted in (it may already be gone).
                Some(t) => Some(t),
                None => {
                    self.run_op(n, page, "ping", json!({}), timeout_ms).await?;
                    token_of(self.eval(page, &w.token_expr, true).await?)
                }
            };
        }
        if kind == WaitKind::Function {
            self.check_function_parses(page, value).await?;
        }
        if kind == WaitKind::Timeout {
            let ms = value.parse::<u64>().unwrap_or(0);
            tokio::time::sleep_until((start + Duration::from_millis(ms)).min(deadline).into())
                .await;
        }
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if let Some(done) = self.wait_once(n, page, &w, left, timeout_ms).await? {
                return Ok(done);
            }
            if Instant::now() >= deadline {
                return Err(ToolError::timeout(format!(
                    "waited {timeout_ms} ms for {} {value:?}; it did not happen",
                    kind.as_str()
                ))
                .with("timeoutMs", timeout_ms));
            }
            // A selector's look waited in the page, frame by frame, until it
            // held or its part of the wait ended; the other conditions are
            // looked at again after a frame's time.
            if !matches!(kind, WaitKind::Selector | WaitKind::SelectorHidden) {
                tokio::time::sleep(WAIT_POLL).await;
            }
        }
    }

    /// A `function` wait whose function has a syntax error is the caller's
    /// mistake: say so at once.
    async fn check_function_parses(&self, page: &Page, value: &str) -> Result<(), ToolError> {
        let probe = format!("(() => {{ const f = ({value}\n); return 1; }})");
        match self.eval(page, &probe, true).await {
            Err(e)
                if e.code == Code::JsError
                    && e.details.get("exception").and_then(Value::as_str)
                        == Some("SyntaxError") =>
            {
                Err(ToolError::invalid_argument(
                    "value",
                    format!(
                        "the function does not parse: {}",
                        e.message.lines().next().unwrap_or("")
                    ),
                ))
            }
            _ => Ok(()),
        }
    }

    /// One look at what a wait waits for: `Some(answer)` once it happened.
    /// A selector's look waits in the page (at most `left`, and a second).
    async fn wait_once(
        &self,
        n: TabId,
        page: &Page,
        w: &WaitFor<'_>,
        left: Duration,
        timeout_ms: u32,
    ) -> Result<Option<Waited>, ToolError> {
        let (kind, value, start) = (w.kind, w.value, w.start);
        let elapsed_ms = || start.elapsed().as_millis() as u64;
        let met = match kind {
            WaitKind::Timeout => {
                start.elapsed() >= Duration::from_millis(value.parse::<u64>().unwrap_or(0))
            }
            WaitKind::Selector | WaitKind::SelectorHidden => {
                let wait_ms = left.min(Duration::from_secs(1)).as_millis() as u64;
                let check = json!({"type": kind.as_str(), "value": value, "visible": w.visible, "wait_ms": wait_ms});
                match self.run_op(n, page, "check", check, timeout_ms).await {
                    Ok(v) => v == Value::Bool(true),
                    Err(e) if e.code == Code::InvalidArgument => return Err(e),
                    // (A document that went away, a browser that is going:
                    // looked at again after a pause, which lets the call's
                    // guard see a browser's end.)
                    Err(_) => {
                        tokio::time::sleep(WAIT_POLL).await;
                        false
                    }
                }
            }
            WaitKind::Function => {
                let expr = format!(
                    "(async () => {{ const f = ({value}\n); return !!(typeof f === 'function' ? await f() : await f); }})()"
                );
                matches!(self.eval(page, &expr, true).await, Ok(Value::Bool(true)))
            }
            WaitKind::Navigation => {
                // A link to a file starts a download and the page stays.
                let since = start.checked_sub(Duration::from_secs(3)).unwrap_or(start);
                if self.download_started_since(n, since) {
                    let url = crate::frame_url(page).await;
                    return Ok(Some(Waited {
                        met: true,
                        elapsed_ms: elapsed_ms(),
                        url,
                        download: true,
                    }));
                }
                let now = self.eval(page, &w.token_expr, true).await.ok().and_then(token_of);
                now != w.first && self.loaded(page).await
            }
            WaitKind::UrlMatch => {
                let url = crate::frame_url(page).await;
                w.url.as_ref().is_some_and(|p| p.matches(&url))
            }
        };
        if !met {
            return Ok(None);
        }
        let url = crate::frame_url(page).await;
        Ok(Some(Waited { met: true, elapsed_ms: elapsed_ms(), url, download: false }))
    }
}

/// How often a wait looks again at a condition the page cannot wait for
/// itself (a function, a URL, a navigation): a frame's time.
const WAIT_POLL: Duration = Duration::from_millis(16);

/// What a `wait_for` waits for.
struct WaitFor<'a> {
    kind: WaitKind,
    value: &'a str,
    visible: Option<bool>,
    start: Instant,
    /// Reads the document's token (a new document has a new one).
    token_expr: String,
    /// `navigation`: the token of the document the wait started on.
    first: Option<String>,
    /// `url_match`: the pattern.
    url: Option<UrlPattern>,
}
