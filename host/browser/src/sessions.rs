//! Which session a call is in: its browser context and browser (placement),
//! its tabs, the tab a page opened.

use super::*;

impl BrowserManager {
    /// The caller's live session (see [`Self::home`]), (re)starting it when
    /// needed; in a pool, an endpoint that cannot be reached is marked down and
    /// the caller placed on another.
    pub(super) async fn session(
        &self,
    ) -> Result<tokio::sync::MutexGuard<'_, Option<Session>>, ToolError> {
        let mut last = None;
        for _ in 0..self.pool_size() {
            let i = self.home()?;
            match self.session_at(i, true).await {
                Ok(g) => return Ok(g),
                Err(e) if self.pool_size() > 1 => {
                    self.mark_down(i, &e.message);
                    last = Some(e);
                }
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| ToolError::browser_unavailable("no browser")))
    }

    /// The browser of the pool tab `n` is in (the caller's own for a tab not
    /// known).
    pub(crate) fn slot_of_tab(&self, n: TabId) -> usize {
        match self.inner.tabs.with(n, |t| t.slot) {
            Some(i) => i,
            None => self.home().unwrap_or(0),
        }
    }

    /// Browser `slot`'s session: the caller's own is (re)started as needed;
    /// another browser of the pool (where spread tabs live) must be running.
    pub(super) async fn session_in(
        &self,
        slot: usize,
    ) -> Result<tokio::sync::MutexGuard<'_, Option<Session>>, ToolError> {
        if slot == self.home()? {
            return self.session().await;
        }
        let guard = self.slot(slot).session.lock().await;
        if guard.as_ref().is_some_and(|s| s.alive.load(Ordering::Relaxed)) {
            return Ok(guard);
        }
        Err(ToolError::browser_unavailable(format!(
            "{} went away: the tabs that were in it are gone",
            self.slot(slot).name()
        )))
    }

    /// The session of the browser tab `n` is in.
    pub(super) async fn session_of_tab(
        &self,
        n: TabId,
    ) -> Result<tokio::sync::MutexGuard<'_, Option<Session>>, ToolError> {
        self.session_in(self.slot_of_tab(n)).await
    }

    /// Browser `i`'s live session, (re)starting it when needed. `mine`: the
    /// caller's own browser (a relaunch is told to it).
    pub(super) async fn session_at(
        &self,
        i: usize,
        mine: bool,
    ) -> Result<tokio::sync::MutexGuard<'_, Option<Session>>, ToolError> {
        let slot = self.slot(i);
        let mut guard = slot.session.lock().await;
        let dead = guard.as_ref().is_some_and(|s| !s.alive.load(Ordering::Relaxed));
        if dead {
            if let Some(mut old) = guard.take() {
                *lock(&slot.live) = None;
                if let Some(mut b) = sole(old.browser).await {
                    let _ = b.kill().await;
                }
                if let Some(g) = old.grid.take() {
                    tokio::spawn(g.end());
                }
                for (n, _) in self.inner.tabs.pages_in(i, None) {
                    self.forget_tab(n);
                }
                self.inner.tabs.forget_closed();
                self.forget_fetchers(i);
            }
            if mine {
                self.tell(
                    ochre_protocol::Level::Notice,
                    format!(
                        "{} had gone (it crashed or was killed); starting a new one: its tabs are lost",
                        slot.name()
                    ),
                );
            }
        }
        if guard.is_none() {
            let started = std::time::Instant::now();
            let session = self.start(i).await?;
            // The shared tabs' context takes the server's login (boxed: every
            // call that may start the browser holds this future).
            if let Some(login) = self.default_login()
                && let Err(e) = Box::pin(self.seed(&session.browser, None, &login)).await
            {
                self.tell(
                    ochre_protocol::Level::Warning,
                    format!("the server's login did not take in {}: {}", slot.name(), e.message),
                );
            }
            let how = match &slot.endpoint {
                Some(_) => format!("attached to {}", slot.name()),
                None => format!(
                    "launched the browser{}",
                    if self.inner.options.headed { " (headed)" } else { "" }
                ),
            };
            self.tell(
                ochre_protocol::Level::Info,
                format!("{how} in {} ms", started.elapsed().as_millis()),
            );
            *guard = Some(session);
            slot.starts.fetch_add(1, Ordering::Relaxed);
        }
        Ok(guard)
    }

    /// The caller's browser as it is (nothing started): for lookups.
    pub(super) async fn home_guard(&self) -> tokio::sync::MutexGuard<'_, Option<Session>> {
        self.slot(self.home().unwrap_or(0)).session.lock().await
    }

    /// Drop the crawl fetcher tabs kept in browser `i`.
    fn forget_fetchers(&self, i: usize) {
        self.inner.owners.each(|_, s| s.fetchers.retain(|(_, slot), _| *slot != i));
    }

    /// The owner of tab `n` (`None`: a shared tab).
    pub(super) fn owner_of(&self, n: TabId) -> Owner {
        self.inner.tabs.owner_of(n)
    }

    /// `who`'s browser context in browser `slot` (still `browser`), made if it
    /// has none; a context made here takes its session's login (`seed`).
    pub(super) async fn owner_context(
        &self,
        slot: usize,
        browser: &Arc<Browser>,
        who: &Owner,
        seed: bool,
    ) -> Result<chromiumoxide::cdp::browser_protocol::browser::BrowserContextId, ToolError> {
        let o =
            who.as_ref().ok_or_else(|| ToolError::internal("the shared tabs have no context"))?;
        if let Some(c) =
            self.slot(slot).session.lock().await.as_ref().and_then(|s| s.owner_contexts.get(o))
        {
            return Ok(c.clone());
        }
        let made = browser
            .create_browser_context(self.context_params(who).await?)
            .await
            .map_err(|e| cdp_error("cannot make a browser context", e))?;
        self.allow_downloads(browser, Some(made.clone())).await;
        // Boxed: writing a login is large, and every first tab's future holds it.
        if let Some(login) = self.login_of(who).filter(|_| seed) {
            Box::pin(self.seed(browser, Some(&made), &login)).await?;
        }
        let mut guard = self.slot(slot).session.lock().await;
        let s = self.same_browser(&mut guard, browser)?;
        match s.owner_contexts.get(o) {
            // Another call of the owner's made one meanwhile.
            Some(c) => {
                let c = c.clone();
                drop(guard);
                let _ = browser.dispose_browser_context(made).await;
                Ok(c)
            }
            None => {
                s.owner_contexts.insert(o.clone(), made.clone());
                Ok(made)
            }
        }
    }

    /// The session, if it still runs `browser` (not relaunched meanwhile).
    pub(super) fn same_browser<'g>(
        &self,
        guard: &'g mut tokio::sync::MutexGuard<'_, Option<Session>>,
        browser: &Arc<Browser>,
    ) -> Result<&'g mut Session, ToolError> {
        guard.as_mut().filter(|s| Arc::ptr_eq(&s.browser, browser)).ok_or_else(|| {
            ToolError::browser_unavailable("the browser went away while the tab was opening")
        })
    }

    /// Browser `slot`'s CDP connection, if it runs (to use without the lock).
    pub(super) async fn browser_of(&self, slot: usize) -> Option<Arc<Browser>> {
        self.slot(slot).session.lock().await.as_ref().map(|s| s.browser.clone())
    }

    /// The lock that makes an owner's implicit first tab open once.
    pub(super) fn opening(&self, who: &Owner) -> Arc<tokio::sync::Mutex<()>> {
        self.inner.owners.write(who, |s| s.opening.get_or_insert_default().clone())
    }
}
