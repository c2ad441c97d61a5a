//! The browser as the host sees it: [`HostBrowser`] over Chromium. What the
//! host's guards and the MCP server call is here, in one place; the rest of
//! the manager's API is for the `browser` and `cdp` plugin interfaces.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::CaptureScreenshotFormat;
use chromiumoxide::page::ScreenshotParams;
use serde_json::Value;

use ochre_protocol::browser::{HostBrowser, Notices, StorageState};
use ochre_protocol::page_ops::AnyOp;
use ochre_protocol::{ToolError, lock};

use super::{
    BrowserManager, OWNER, Owner, PageEvent, RefId, TabId, TabInfo, TitleFrom, bounded, cdp_error,
    lifeline, owner, sole,
};

impl HostBrowser for BrowserManager {
    fn set_notices(&self, notices: Notices) {
        let _ = self.inner.notices.set(notices);
    }

    fn with_owner<F: Future + Send>(
        &self,
        owner: Owner,
        fut: F,
    ) -> impl Future<Output = F::Output> + Send {
        OWNER.scope(owner, fut)
    }

    async fn release_owner(&self, owner: &str) {
        // In every browser of the pool.
        let who: Owner = Some(owner.into());
        // Its state, whole (its policy proxy stops as it drops).
        drop(self.inner.owners.remove(&who));
        for slot in 0..self.pool_size() {
            let (browser, contexts) = {
                let mut guard = self.slot(slot).session.lock().await;
                let Some(s) = guard.as_mut() else { continue };
                let mut contexts: Vec<_> = s.owner_contexts.remove(owner).into_iter().collect();
                for (n, _) in self.inner.tabs.pages_in(slot, Some(&who)) {
                    contexts.extend(self.drop_tab(s, n).and_then(|t| t.context));
                }
                s.current.remove(&who);
                (s.browser.clone(), contexts)
            };
            // Disposing a context closes its pages (popups and crawl workers
            // included); without the lock: other sessions' calls go on.
            for c in contexts {
                let dispose = browser.dispose_browser_context(c);
                let _ = tokio::time::timeout(Duration::from_secs(5), dispose).await;
            }
        }
        tracing::debug!(owner, "released an owner's tabs");
    }

    async fn tabs(&self) -> Result<Vec<TabInfo>, ToolError> {
        let who = owner();
        let mut pages: Vec<(TabId, Page)> = match self.session().await?.as_ref() {
            Some(s) => self.inner.tabs.pages_in(s.slot, Some(&who)),
            None => Vec::new(),
        };
        // Tabs it has in the other browsers of a pool (workflow workers).
        let home = self.home()?;
        for i in (0..self.pool_size()).filter(|i| *i != home) {
            let guard = self.slot(i).session.lock().await;
            if guard.as_ref().is_some_and(|s| s.alive.load(Ordering::Relaxed)) {
                pages.extend(self.inner.tabs.pages_in(i, Some(&who)));
            }
        }
        pages.sort_by_key(|(n, _)| *n);
        let mut out = Vec::with_capacity(pages.len());
        for (n, p) in pages {
            out.push(self.info(n, &p, TitleFrom::Page).await);
        }
        Ok(out)
    }

    async fn peek_tab(&self, tab: Option<TabId>) -> Option<TabInfo> {
        let wanted = tab;
        let who = owner();
        let (n, page) = {
            let guard = match wanted {
                Some(n) => self.slot(self.slot_of_tab(n)).session.lock().await,
                None => self.home_guard().await,
            };
            let s = guard.as_ref()?;
            if !s.alive.load(Ordering::Relaxed) {
                return None;
            }
            let n = wanted.or_else(|| s.current.get(&who).copied())?;
            (n, self.visible_page(n, &who)?)
        };
        tokio::time::timeout(Duration::from_secs(2), self.info(n, &page, TitleFrom::Page))
            .await
            .ok()
    }

    async fn page_op(
        &self,
        tab: Option<TabId>,
        op: &str,
        args: Value,
        timeout_ms: u32,
    ) -> Result<Value, ToolError> {
        // Refused before anything touches the browser: an unknown operation, or
        // arguments its type does not take. Read once: the handlers get them typed.
        self.inner.counters.json_ops.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(target: "ochre::json_op", op, "read from JSON");
        let parsed = match AnyOp::parse(op, &args) {
            None => {
                return Err(ToolError::invalid_argument(
                    "op",
                    format!("unknown page operation {op:?}: one of {}", super::ops::names()),
                ));
            }
            Some(Err(e)) => return Err(e.into()),
            Some(Ok(parsed)) => parsed,
        };
        // Boxed: the dispatch's future is large, and callers' futures hold it.
        Box::pin(self.dispatch(tab, parsed, args, timeout_ms)).await
    }

    /// Typed: the operation goes to its handler as it is (no JSON read).
    fn run<O: ochre_protocol::page_ops::PageOp>(
        &self,
        tab: Option<TabId>,
        op: &O,
        timeout_ms: u32,
    ) -> impl Future<Output = Result<O::Output, ToolError>> + Send {
        use ochre_protocol::page_ops::{from_output, to_args};
        let args = to_args(op).map_err(ToolError::internal);
        let op = op.clone().into();
        async move {
            let out = Box::pin(self.dispatch(tab, op, args?, timeout_ms)).await?;
            from_output::<O>(out).map_err(ToolError::internal)
        }
    }

    async fn thumbnail(&self, tab: Option<TabId>) -> Result<Vec<u8>, ToolError> {
        self.guarded(tab, async {
            let (_, page) = self.page(tab).await?;
            let view = bounded(
                2_000,
                "measuring the viewport",
                self.eval(&page, "[scrollX, scrollY, innerWidth, innerHeight]", true),
            )
            .await?;
            let num = |i: usize| view.get(i).and_then(Value::as_f64).unwrap_or(0.0);
            let (w, h) = (num(2), num(3));
            if !(w >= 1.0 && h >= 1.0) {
                return Err(ToolError::js_error("the page has no viewport"));
            }
            let params = ScreenshotParams::builder()
                .format(CaptureScreenshotFormat::Jpeg)
                .quality(50)
                .clip(chromiumoxide::cdp::browser_protocol::page::Viewport {
                    x: num(0),
                    y: num(1),
                    width: w.min(4096.0),
                    height: h.min(4096.0),
                    scale: 0.5,
                })
                .build();
            bounded(10_000, "screenshot", async {
                page.screenshot(params).await.map_err(|e| cdp_error("screenshot failed", e))
            })
            .await
        })
        .await
    }

    fn event_mark(&self) -> u64 {
        self.events().mark()
    }

    fn events_since(&self, mark: u64) -> Vec<PageEvent> {
        self.events().since_of(mark, &owner())
    }

    fn take_unjournaled(&self) -> Vec<PageEvent> {
        self.events().take_unjournaled()
    }

    fn note_call(&self, label: &str, started: std::time::Instant) {
        self.video_chapter(label, started);
    }

    fn dialog_still_open(&self, seq: u64) -> bool {
        self.inner
            .tabs
            .all(|tabs| tabs.values().any(|t| t.dialog.as_ref().is_some_and(|d| d.is(seq))))
    }

    async fn wait_adoptions(&self, max: Duration) {
        let start = Instant::now();
        while self.events().adopting() && start.elapsed() < max {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn wait_downloads(&self, mark: u64, max: Duration) {
        let start = Instant::now();
        while self.events().downloading_since(mark) && start.elapsed() < max {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn downloads_dir_shown(&self) -> String {
        self.downloads_dir().display().to_string()
    }

    fn evidence_dir(&self) -> Option<PathBuf> {
        self.inner.options.evidence_dir.clone()
    }

    fn take_relaunch_note(&self) -> bool {
        let who = owner();
        let Some(i) = self.placed(&who) else { return false };
        let now = (i, self.slot(i).starts.load(Ordering::Relaxed));
        let before = self.inner.owners.write(&who, |s| s.seen.replace(now));
        // A browser never started before had no tabs to lose.
        before.is_some_and(|(slot, starts)| starts > 0 && (slot, starts) != now)
    }

    async fn storage_state(&self) -> Result<StorageState, ToolError> {
        self.read_storage_state().await
    }

    async fn use_login(&self, state: Option<StorageState>) -> Result<(), ToolError> {
        self.set_login(state).await
    }

    fn use_login_everywhere(&self, state: Option<StorageState>) -> Result<(), ToolError> {
        self.set_default_login(state);
        Ok(())
    }

    fn set_login_source(&self, source: ochre_protocol::browser::LoginSource) {
        let _ = self.inner.login_source.set(source);
    }

    fn set_scrubber(&self, scrub: ochre_protocol::browser::Scrubber) {
        let _ = self.inner.scrubber.set(scrub);
    }

    fn hold_tab(&self, tab: TabId, why: &str) -> Result<(), ToolError> {
        self.hold(tab, why)
    }

    fn release_tab(&self, tab: TabId) {
        self.release(tab);
    }

    async fn watch_tab(
        &self,
        tab: TabId,
        sink: Box<dyn ochre_protocol::browser::FrameSink>,
    ) -> Result<(), ToolError> {
        self.watch(tab, sink).await
    }

    async fn person_input(
        &self,
        tab: TabId,
        events: &[ochre_protocol::page_ops::Gesture],
    ) -> Result<(), ToolError> {
        self.person_gestures(tab, events).await
    }

    fn as_person<F: Future + Send>(
        &self,
        tab: TabId,
        fut: F,
    ) -> impl Future<Output = F::Output> + Send {
        self.person_scope(tab, fut)
    }

    async fn person_field_text(&self, tab: TabId, ref_id: RefId) -> Result<String, ToolError> {
        self.field_text(tab, ref_id).await
    }

    async fn shutdown(&self) {
        self.inner.closing.store(true, Ordering::Relaxed);
        for slot in &self.inner.slots {
            let session = slot.session.lock().await.take();
            *lock(&slot.live) = None;
            let Some(mut s) = session else { continue };
            if let Some(g) = s.grid.take() {
                g.end().await;
            } else if slot.endpoint.is_none()
                && let Some(mut b) = sole(s.browser).await
            {
                let _ = b.close().await;
                let _ = b.wait().await;
            }
        }
        if let Some(run_dir) = &self.inner.options.run_dir {
            lifeline::remove_record(run_dir);
        }
    }
}
