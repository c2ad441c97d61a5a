//! A tab's life: opening (plain, isolated, a page's popup), navigating,
//! history, reload, script, screenshot, closing.

use super::*;
use futures::stream::BoxStream;

impl BrowserManager {
    /// A tab's title as the browser knows it (no script runs in the page).
    pub(super) async fn target_title(&self, n: TabId, page: &Page) -> String {
        use chromiumoxide::cdp::browser_protocol::target::GetTargetInfoParams;
        let p = GetTargetInfoParams { target_id: Some(page.target_id().clone()) };
        let Some(browser) = self.browser_of(self.slot_of_tab(n)).await else {
            return String::new();
        };
        match tokio::time::timeout(Duration::from_secs(2), browser.execute(p)).await {
            Ok(Ok(r)) => r.result.target_info.title.clone(),
            _ => String::new(),
        }
    }

    /// Open a tab and make it current.
    pub async fn new_tab(&self, url: Option<&str>, timeout_ms: u32) -> Result<TabInfo, ToolError> {
        let who = owner();
        let opening = bounded(
            timeout_ms,
            "opening a tab",
            self.open_tab(None, &who, url.unwrap_or("about:blank")),
        );
        let (n, page) = self.while_alive(opening).await?;
        Ok(self.info(n, &page, TitleFrom::Page).await)
    }

    /// Open a tab in a browser context of its own (cookies, storage and cache
    /// isolated from every other tab), without making it current. Closing the
    /// tab disposes of the context. `spread`: in a pool, in the next browser
    /// round-robin (workflow workers), else the caller's own.
    pub async fn new_isolated_tab(
        &self,
        url: Option<&str>,
        timeout_ms: u32,
        spread: bool,
        login: Option<&str>,
    ) -> Result<TabInfo, ToolError> {
        // A login named for this tab alone, opened before anything is made.
        let named = match login {
            Some(name) => {
                let source = self.inner.login_source.get().ok_or_else(|| {
                    ToolError::login_not_found(format!(
                        "no saved logins here to open {name:?} from"
                    ))
                })?;
                Some(Arc::new(source(name)?))
            }
            None => None,
        };
        let who = owner();
        let opening = bounded(timeout_ms, "opening an isolated tab", async {
            let elsewhere = match spread && self.pool_size() > 1 {
                true => self.spread(1)?.first().copied(),
                false => None,
            };
            let guard = match elsewhere {
                Some(i) => match self.session_at(i, false).await {
                    Ok(g) => g,
                    Err(e) => {
                        self.mark_down(i, &e.message);
                        self.session().await?
                    }
                },
                None => self.session().await?,
            };
            let session = guard.as_ref().ok_or_else(|| not_found("new"))?;
            let (slot, browser) = (session.slot, session.browser.clone());
            drop(guard);
            // The round trips run without the lock (other sessions' calls go on).
            let context = browser
                .create_browser_context(self.context_params(&who).await?)
                .await
                .map_err(|e| cdp_error("cannot create a browser context", e))?;
            self.allow_downloads(&browser, Some(context.clone())).await;
            if let Some(login) = named.clone().or_else(|| self.login_of(&who))
                && let Err(e) = Box::pin(self.seed(&browser, Some(&context), &login)).await
            {
                let _ = browser.dispose_browser_context(context).await;
                return Err(e);
            }
            let url = url.unwrap_or("about:blank");
            let first = self.first_url(&who, url);
            let mut params = own_window(first);
            params.browser_context_id = Some(context.clone());
            let page = match browser.new_page(params).await {
                Ok(p) => p,
                Err(e) => {
                    let _ = browser.dispose_browser_context(context).await;
                    let failed = format!("cannot open the isolated tab: {e}");
                    return Err(with_cdp_cause(ToolError::navigation_failed(failed), &e));
                }
            };
            let n = self.register(slot, &browser, page.clone(), &who).await?;
            self.inner.tabs.with(n, |t| t.context = Some(context));
            self.watch_tab(n, &page).await;
            self.emulate_new_tab(n, &page, &who, (first != url).then_some(url)).await;
            Ok((n, page))
        });
        let (n, page) = self.while_alive(opening).await?;
        Ok(self.info(n, &page, TitleFrom::Page).await)
    }

    /// Close a tab; the current tab moves to the newest remaining one. A tab with
    /// a browser context of its own takes the context with it.
    pub async fn close_tab(&self, n: TabId) -> Result<(), ToolError> {
        let tab = &n.to_string();
        let who = owner();
        let slot = self.slot_of_tab(n);
        let tabs::Tab { page, context, .. } = {
            let mut guard = self.session_in(slot).await?;
            let session = guard.as_mut().ok_or_else(|| not_found(tab))?;
            if self.visible_page(n, &who).is_none() {
                return Err(not_found(tab));
            }
            self.check_held(n)?;
            self.drop_tab(session, n).ok_or_else(|| not_found(tab))?
        };
        // Target.closeTarget, not Page.close: a page's beforeunload handler must
        // not keep the tab open (nor wait for a dialog nobody answers).
        let Some(browser) = self.browser_of(slot).await else {
            return Ok(());
        };
        let closed = {
            use chromiumoxide::cdp::browser_protocol::target::CloseTargetParams;
            bounded(10_000, "closing the tab", async {
                browser
                    .execute(CloseTargetParams::new(page.target_id().clone()))
                    .await
                    .map(|_| ())
                    .map_err(|e| cdp_error("cannot close the tab", e))
            })
            .await
        };
        if let Some(context) = context {
            let dispose = browser.dispose_browser_context(context);
            let _ = tokio::time::timeout(Duration::from_secs(5), dispose).await;
        }
        closed
    }

    /// Navigate and wait for the load event.
    pub async fn navigate(
        &self,
        tab: Option<TabId>,
        url: &str,
        timeout_ms: u32,
    ) -> Result<TabInfo, ToolError> {
        let started = std::time::Instant::now();
        let (n, page, info) = self.guarded(tab, async {
            let (n, page) = self.page(tab).await?;
            let had_page = started.elapsed();
            self.reset_network(n);
            bounded(timeout_ms, "navigation", async {
                let r = self.load(self.slot_of_tab(n), &page, Load::Url(url)).await;
                r.map_err(|e| {
                    let failed = ToolError::navigation_failed(format!("cannot load {url}: {e}"));
                    with_cdp_cause(failed.with("url", url), &e)
                })?;
                Ok(())
            })
            .await?;
            // The network-quiet wait after the load is owed to the tab's next
            // page call (see `owe_settle`): the answer comes at the load event.
            let loaded = std::time::Instant::now();
            let info = self.info(n, &page, TitleFrom::Load).await;
            self.owe_settle(n, loaded, &info.url);
            tracing::debug!(took = ?started.elapsed(), page = ?had_page, load = ?(loaded - started - had_page), "navigated");
            Ok((n, page, info))
        })
        .await?;
        self.after_load_work(n, &page).await;
        tracing::debug!(took = ?started.elapsed(), "navigated, the load's work run");
        Ok(info)
    }

    /// Wait until the renderer has run the work queued at the load (the
    /// first frame's style, layout and paint, the load's handlers): one
    /// round trip to the page, at most a second. Whatever reads the page next
    /// would wait for that work; it belongs to the navigation's cost, as in
    /// the peers, whose navigation answers with a read. Not an answer's
    /// condition: it ends at once when a dialog opens (or is open).
    async fn after_load_work(&self, n: TabId, page: &Page) {
        let ev = self.events();
        let opened = ev.opened.notified();
        tokio::pin!(opened);
        opened.as_mut().enable();
        if self.inner.tabs.with(n, |t| t.dialog.is_some()).unwrap_or(true) {
            return;
        }
        let asked = tokio::time::timeout(Duration::from_secs(1), self.eval(page, "0", true));
        tokio::select! {
            _ = asked => {}
            _ = opened => {}
        }
    }

    /// Back (-1) or forward (+1).
    pub async fn history(
        &self,
        tab: Option<TabId>,
        delta: i32,
        timeout_ms: u32,
    ) -> Result<TabInfo, ToolError> {
        self.guarded(tab, async {
            let (n, page) = self.page(tab).await?;
            bounded(timeout_ms, "history navigation", async {
                let h = page
                    .execute(GetNavigationHistoryParams::default())
                    .await
                    .map_err(|e| cdp_error("cannot read the history", e))?;
                let target = h.result.current_index + i64::from(delta);
                let Some(entry) =
                    usize::try_from(target).ok().and_then(|i| h.result.entries.get(i))
                else {
                    let dir = if delta < 0 { "back" } else { "forward" };
                    return Err(ToolError::navigation_failed(format!(
                        "there is no page to go {dir} to"
                    )));
                };
                let want = entry.url.clone();
                let mut moved = navigation_events(&page).await;
                page.execute(NavigateToHistoryEntryParams::new(entry.id))
                    .await
                    .map_err(|e| cdp_error("cannot navigate the history", e))?;
                // A history step may be served from the back/forward cache without a
                // fresh load event: wait until the tab shows the entry, fully loaded,
                // looking again at each of the tab's navigation events (15 ms at most
                // apart).
                loop {
                    let url = crate::frame_url(&page).await;
                    if url == want && self.loaded(&page).await {
                        return Ok(());
                    }
                    let next = tokio::time::timeout(Duration::from_millis(15), moved.next());
                    if let Ok(None) = next.await {
                        tokio::time::sleep(Duration::from_millis(15)).await;
                    }
                }
            })
            .await?;
            Ok(self.info(n, &page, TitleFrom::Load).await)
        })
        .await
    }

    /// Reload and wait for the load event.
    pub async fn reload(&self, tab: Option<TabId>, timeout_ms: u32) -> Result<TabInfo, ToolError> {
        self.guarded(tab, async {
            let (n, page) = self.page(tab).await?;
            bounded(timeout_ms, "reload", async {
                let r = self.load(self.slot_of_tab(n), &page, Load::Reload).await;
                r.map_err(|e| {
                    let failed = ToolError::navigation_failed(format!("reload failed: {e}"));
                    with_cdp_cause(failed, &e)
                })?;
                Ok(())
            })
            .await?;
            Ok(self.info(n, &page, TitleFrom::Page).await)
        })
        .await
    }

    /// Evaluate an expression; the value as JSON (promises awaited).
    pub async fn evaluate(
        &self,
        tab: Option<TabId>,
        expression: &str,
        timeout_ms: u32,
    ) -> Result<Value, ToolError> {
        self.guarded(tab, async {
            let (_, page) = self.page(tab).await?;
            bounded(timeout_ms, "script", self.eval_as_act(&page, expression)).await
        })
        .await
    }

    /// A screenshot: the viewport, the full page, or `clip` (x, y, width, height
    /// in CSS pixels of the page).
    pub async fn screenshot(
        &self,
        tab: Option<TabId>,
        full_page: bool,
        jpeg_quality: Option<u8>,
        clip: Option<[f64; 4]>,
    ) -> Result<Vec<u8>, ToolError> {
        self.guarded(tab, async {
            let (_, page) = self.page(tab).await?;
            let mut b = ScreenshotParams::builder().full_page(full_page);
            if let Some([x, y, width, height]) = clip {
                if !(width > 0.0 && height > 0.0 && x.is_finite() && y.is_finite())
                    || width > 16_384.0
                    || height > 16_384.0
                {
                    return Err(ToolError::invalid_argument(
                        "clip",
                        "clip needs finite x, y and a width and height between 1 and 16384",
                    ));
                }
                b = b.clip(chromiumoxide::cdp::browser_protocol::page::Viewport {
                    x,
                    y,
                    width,
                    height,
                    scale: 1.0,
                });
            }
            b = match jpeg_quality {
                Some(q) => {
                    b.format(CaptureScreenshotFormat::Jpeg).quality(i64::from(q.clamp(1, 100)))
                }
                None => b.format(CaptureScreenshotFormat::Png),
            };
            bounded(30_000, "screenshot", async {
                page.screenshot(b.build()).await.map_err(|e| cdp_error("screenshot failed", e))
            })
            .await
        })
        .await
    }

    /// Register `page` as a tab of `who` in session `s`'s browser; its number.
    pub(super) fn add_tab(&self, s: &mut Session, page: Page, who: &Owner) -> TabId {
        let n = TabId(self.inner.next_tab.fetch_add(1, Ordering::Relaxed));
        self.inner.tabs.add(n, page, s.slot, who);
        s.front = None;
        n
    }

    /// Drop tab `n` and everything known of it (see [`Self::forget_tab`]);
    /// its owner's current tab in session `s` moves to the owner's newest.
    pub(super) fn drop_tab(&self, s: &mut Session, n: TabId) -> Option<tabs::Tab> {
        let tab = self.forget_tab(n)?;
        s.front = None;
        if s.current.get(&tab.owner) == Some(&n) {
            match self.inner.tabs.pages_in(s.slot, Some(&tab.owner)).last() {
                Some((m, _)) => s.current.insert(tab.owner.clone(), *m),
                None => s.current.remove(&tab.owner),
            };
        }
        Some(tab)
    }

    /// Open a page for `who` at `url` in its browser context (created on first
    /// use; `None`: the default context), register it as `who`'s current tab
    /// and watch it. In the caller's browser (`slot` `None`) or browser `slot`.
    pub(super) async fn open_tab(
        &self,
        slot: Option<usize>,
        who: &Owner,
        url: &str,
    ) -> Result<(TabId, Page), ToolError> {
        let guard = match slot {
            Some(i) => self.session_in(i).await?,
            None => self.session().await?,
        };
        let first = self.first_url(who, url);
        let (slot, browser, page) = self.page_for(guard, who, first).await?;
        let n = self.register(slot, &browser, page.clone(), who).await?;
        self.watch_tab(n, &page).await;
        self.emulate_new_tab(n, &page, who, (first != url).then_some(url)).await;
        if let Some(s) = self.slot(slot).session.lock().await.as_mut() {
            s.current.insert(who.clone(), n);
        }
        Ok((n, page))
    }

    /// A new page in a window of its own, in `who`'s browser context (created
    /// on first use; `None`: the default context), in the browser of `guard`;
    /// with that browser's slot and connection. The session's lock (`guard`) is
    /// held only to read and to note a new context: creating the context and
    /// the page are CDP round trips that other sessions' calls must not wait for.
    pub(super) async fn page_for(
        &self,
        guard: tokio::sync::MutexGuard<'_, Option<Session>>,
        who: &Owner,
        url: &str,
    ) -> Result<(usize, Arc<Browser>, Page), ToolError> {
        let (slot, browser, context) = {
            let s = guard.as_ref().ok_or_else(|| not_found("new"))?;
            let context = s.context_of(who);
            (s.slot, s.browser.clone(), context)
        };
        drop(guard);
        let failed = |e: chromiumoxide::error::CdpError| {
            with_cdp_cause(ToolError::navigation_failed(format!("cannot open the tab: {e}")), &e)
        };
        let mut params = own_window(url);
        if who.is_some() {
            let context = match context {
                Some(c) => c,
                None => self.owner_context(slot, &browser, who, true).await?,
            };
            params.browser_context_id = Some(context);
        }
        let page = browser.new_page(params).await.map_err(failed)?;
        Ok((slot, browser, page))
    }

    /// Register `page` as a tab of `who` in browser `slot` (still `browser`).
    pub(super) async fn register(
        &self,
        slot: usize,
        browser: &Arc<Browser>,
        page: Page,
        who: &Owner,
    ) -> Result<TabId, ToolError> {
        let mut guard = self.slot(slot).session.lock().await;
        let s = self.same_browser(&mut guard, browser)?;
        Ok(self.add_tab(s, page, who))
    }
}

/// Every navigation event of `page` (its documents' lifecycles, the
/// documents it gets, its moves within a document), as one stream that
/// says only that one came.
async fn navigation_events(page: &Page) -> futures::stream::SelectAll<BoxStream<'static, ()>> {
    use chromiumoxide::cdp::browser_protocol::page::{
        EventFrameNavigated, EventLifecycleEvent, EventNavigatedWithinDocument,
    };
    let mut all = futures::stream::SelectAll::new();
    if let Ok(s) = page.event_listener::<EventLifecycleEvent>().await {
        all.push(s.map(|_| ()).boxed());
    }
    if let Ok(s) = page.event_listener::<EventFrameNavigated>().await {
        all.push(s.map(|_| ()).boxed());
    }
    if let Ok(s) = page.event_listener::<EventNavigatedWithinDocument>().await {
        all.push(s.map(|_| ()).boxed());
    }
    all
}
