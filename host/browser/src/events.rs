//! What pages do on their own: JavaScript dialogs, pages they open (popups,
//! `target=_blank`, `window.open`), pages that close themselves, and downloads.
//!
//! - **Dialogs.** Every tab's `Page.javascriptDialogOpening` is watched. While a
//!   dialog is open the page's main thread is blocked, so any CDP call that needs
//!   the renderer would wait for good: [`BrowserManager::guarded`] answers at once
//!   with `DIALOG_OPEN` instead, both for a dialog that was already open and for one
//!   that opens while the call runs. `handle_dialog` (page-op) answers it; with the
//!   operator's policy `accept` or `dismiss` the host answers every dialog itself
//!   the moment it opens.
//! - **New pages.** A page target opened by one of our tabs gets a tab id; a tab
//!   whose target goes away (closed by script) is forgotten.
//! - **Downloads.** Saved under the downloads dir with their suggested name.
//!
//! Everything is an entry in a small event log with a sequence number; the tool
//! pipeline reports the entries of a call in its answer and writes them to the
//! journal and trace.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::browser::{
    EventDownloadProgress, EventDownloadWillBegin, SetDownloadBehaviorBehavior,
    SetDownloadBehaviorParams,
};
use chromiumoxide::cdp::browser_protocol::page::{
    DialogType, EventJavascriptDialogOpening, HandleJavaScriptDialogParams,
};
use chromiumoxide::cdp::browser_protocol::target::{
    EventTargetCreated, EventTargetDestroyed, TargetId,
};
use futures::StreamExt;
use serde_json::{Value, json};

use super::{BrowserManager, Hints, TabId, cdp_error, lock};
use ochre_protocol::ToolError;

/// Entries kept in the event log.
const LOG_CAP: usize = 256;
/// Longest dialog message kept, in chars.
const MESSAGE_MAX: usize = 500;

/// What the host does with a JavaScript dialog nobody has answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DialogPolicy {
    /// Keep it open and report it; the agent answers with `handle_dialog` (default).
    #[default]
    Ask,
    /// Accept it at once (prompts get their default text).
    Accept,
    /// Dismiss it at once.
    Dismiss,
}

impl std::str::FromStr for DialogPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "ask" => Ok(Self::Ask),
            "accept" => Ok(Self::Accept),
            "dismiss" => Ok(Self::Dismiss),
            other => Err(format!("unknown dialog policy {other:?}: use ask, accept or dismiss")),
        }
    }
}

/// An open dialog.
#[derive(Debug, Clone)]
pub(crate) struct Dialog {
    kind: &'static str,
    message: String,
    default_prompt: String,
    url: String,
    /// The log entry that reported it.
    seq: u64,
}

impl Dialog {
    /// Whether log entry `seq` reported this dialog.
    pub(super) fn is(&self, seq: u64) -> bool {
        self.seq == seq
    }
}

impl Dialog {
    fn json(&self, n: TabId) -> Value {
        let mut v = json!({"tabId": n.to_string(), "type": self.kind, "message": self.message, "url": self.url});
        if self.kind == "prompt" {
            v["defaultPrompt"] = json!(self.default_prompt);
        }
        v
    }
}

pub use ochre_protocol::browser::PageEvent;
use ochre_protocol::page_ops::DialogHandled;

struct Download {
    tab: Option<TabId>,
    url: String,
    name: String,
    path: Option<PathBuf>,
    state: &'static str,
    bytes: u64,
    seq: u64,
}

/// The page events of one browser manager.
#[derive(Default)]
pub(crate) struct Events {
    seq: AtomicU64,
    log: std::sync::Mutex<VecDeque<PageEvent>>,
    /// Woken whenever a dialog opens.
    pub(super) opened: tokio::sync::Notify,
    downloads: std::sync::Mutex<HashMap<String, Download>>,
    /// Downloads whose end was heard before their start (the two arrive on
    /// separate event streams; a small file can finish first): guid -> (state,
    /// bytes), applied when the start arrives. Bounded.
    ended_early: std::sync::Mutex<HashMap<String, (&'static str, u64)>>,
    /// The log position the journal has seen.
    journaled: AtomicU64,
    /// Pages opened by our tabs that are being given a tab id right now.
    adopting: AtomicU64,
}

fn dialog_kind(t: &DialogType) -> &'static str {
    match t {
        DialogType::Alert => "alert",
        DialogType::Confirm => "confirm",
        DialogType::Prompt => "prompt",
        DialogType::Beforeunload => "beforeunload",
    }
}

impl Events {
    fn push(&self, kind: &'static str, body: Value, owner: super::Owner) -> u64 {
        let seq = self.seq.fetch_add(1, Ordering::Relaxed) + 1;
        let mut log = lock(&self.log);
        if log.len() >= LOG_CAP {
            log.pop_front();
        }
        log.push_back(PageEvent { seq, kind, body, owner });
        seq
    }

    /// A connection of `owner`'s pages the network policy refused.
    pub(super) fn refused(&self, to: &str, owner: super::Owner) {
        self.push("network_refused", json!({"to": to}), owner);
    }

    /// Entries after `mark`.
    fn since(&self, mark: u64) -> Vec<PageEvent> {
        lock(&self.log).iter().filter(|e| e.seq > mark).cloned().collect()
    }

    /// The log's position: entries after it come after this call.
    pub(super) fn mark(&self) -> u64 {
        self.seq.load(Ordering::Relaxed)
    }

    /// Entries after `mark` of `owner`'s tabs.
    pub(super) fn since_of(&self, mark: u64, owner: &super::Owner) -> Vec<PageEvent> {
        let mut all = self.since(mark);
        all.retain(|e| e.owner == *owner);
        all
    }

    /// Entries the journal has not seen yet; each is returned once.
    pub(super) fn take_unjournaled(&self) -> Vec<PageEvent> {
        let now = self.mark();
        let before = self.journaled.fetch_max(now, Ordering::Relaxed);
        if before >= now {
            return Vec::new();
        }
        self.since(before).into_iter().filter(|e| e.seq <= now).collect()
    }

    /// The first tab tab `opener`'s page opened after log position `mark`.
    pub(super) fn tab_opened_since(&self, mark: u64, opener: TabId) -> Option<TabId> {
        let opener = json!(opener.to_string());
        lock(&self.log)
            .iter()
            .filter(|e| e.seq > mark && e.kind == "tab_opened" && e.body["openerTabId"] == opener)
            .find_map(|e| TabId::parse(e.body["tabId"].as_str()?))
    }

    /// Whether a page opened by a tab is being given a tab id right now.
    pub(super) fn adopting(&self) -> bool {
        self.adopting.load(Ordering::Relaxed) > 0
    }

    /// Whether a download that started after log position `mark` is still in
    /// progress.
    pub(super) fn downloading_since(&self, mark: u64) -> bool {
        lock(&self.downloads).values().any(|d| d.seq > mark && d.state == "in_progress")
    }
}

/// Whether a browser call failed because the connection to the browser ended
/// (chromiumoxide's handler dropped the command's reply channel).
pub(super) fn connection_lost(e: &ToolError) -> bool {
    super::CdpCause::ConnectionEnded.of_error(e)
}

/// A dialog's details in an error, as the caller sees it.
fn dialog_error(d: &Dialog, n: TabId) -> ToolError {
    let mut e =
        ToolError::dialog_open(Hints::Tools.dialog_open(d.kind, &n.to_string(), &d.message));
    if let Value::Object(m) = d.json(n) {
        e.details.insert("dialog".into(), Value::Object(m));
    }
    e
}

impl BrowserManager {
    pub(super) fn events(&self) -> &Events {
        &self.inner.events
    }

    /// Log a page event of tab `tab` (its `tabId`), for the tab's owner.
    fn push_event(&self, kind: &'static str, tab: Option<TabId>, mut body: Value) -> u64 {
        body["tabId"] = json!(tab.map(|t| t.to_string()));
        let owner = tab.and_then(|n| self.inner.tabs.owner_of(n));
        self.events().push(kind, body, owner)
    }

    /// The open dialog of tab `n`, as JSON.
    pub fn open_dialog(&self, n: TabId) -> Option<Value> {
        self.inner.tabs.with(n, |t| t.dialog.as_ref().map(|d| d.json(n))).flatten()
    }

    /// The tab that opened tab `n`, and the dialog open on it.
    pub(super) fn opener_and_dialog(&self, n: TabId) -> (Option<TabId>, Option<super::TabDialog>) {
        self.inner
            .tabs
            .with(n, |t| {
                let dialog = t
                    .dialog
                    .as_ref()
                    .map(|d| super::TabDialog { kind: d.kind, message: d.message.clone() });
                (t.opener, dialog)
            })
            .unwrap_or((None, None))
    }

    /// Whether a dialog is open on any tab.
    pub(super) fn any_dialog_open(&self) -> bool {
        self.inner.tabs.all(|tabs| tabs.values().any(|t| t.dialog.is_some()))
    }

    /// Run `fut`, a call on tab `tab` (the current tab when `None`), unless a
    /// dialog blocks that tab: then answer `DIALOG_OPEN` at once, also when the
    /// dialog opens while `fut` runs (the renderer would not answer until it is
    /// closed). With no tab known yet, a dialog on any tab counts.
    pub async fn guarded<T>(
        &self,
        tab: Option<TabId>,
        fut: impl std::future::Future<Output = Result<T, ToolError>>,
    ) -> Result<T, ToolError> {
        // Boxed: calls nest (tools calling tools), and debug builds keep every
        // nested future on the stack.
        self.guarded_for(&super::Caller::current(), tab, Box::pin(fut)).await
    }

    /// [`Self::guarded`] for `caller`'s tab `tab`.
    pub(crate) async fn guarded_for<T>(
        &self,
        caller: &super::Caller,
        tab: Option<TabId>,
        fut: impl std::future::Future<Output = Result<T, ToolError>>,
    ) -> Result<T, ToolError> {
        let who = &caller.owner;
        let n = match tab {
            Some(n) => Some(n),
            None => self.home_guard().await.as_ref().and_then(|s| s.current.get(who).copied()),
        };
        let ev = self.events();
        let blocked = || -> Option<ToolError> {
            self.inner.tabs.all(|tabs| match n {
                Some(n) => tabs.get(&n)?.dialog.as_ref().map(|d| dialog_error(d, n)),
                None => tabs
                    .iter()
                    .filter(|(_, t)| t.owner == *who)
                    .find_map(|(n, t)| t.dialog.as_ref().map(|d| dialog_error(d, *n))),
            })
        };
        let notified = ev.opened.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if let Some(e) = blocked() {
            return Err(e);
        }
        // Boxed: calls nest (tools calling tools), and debug builds keep every
        // nested future on the stack.
        let mut fut = Box::pin(fut);
        let slot = match n {
            Some(n) => self.slot_of_tab(n),
            None => self.home().unwrap_or(0),
        };
        self.while_alive_in(slot, async {
            loop {
                tokio::select! {
                    r = &mut fut => return r,
                    _ = &mut notified => {
                        if let Some(e) = blocked() {
                            return Err(e);
                        }
                        notified.set(ev.opened.notified());
                        notified.as_mut().enable();
                    }
                }
            }
        })
        .await
    }

    /// `fut`, ended at once if the browser connection ends meanwhile (Chromium
    /// crashed or was killed): a wait would otherwise poll a dead connection
    /// until its own timeout.
    pub(super) async fn while_alive<T>(
        &self,
        fut: impl std::future::Future<Output = Result<T, ToolError>>,
    ) -> Result<T, ToolError> {
        self.while_alive_in(self.home().unwrap_or(0), fut).await
    }

    /// [`Self::while_alive`] for browser `slot` of the pool.
    pub(super) async fn while_alive_in<T>(
        &self,
        slot: usize,
        fut: impl std::future::Future<Output = Result<T, ToolError>>,
    ) -> Result<T, ToolError> {
        let slot = self.slot(slot);
        let died = slot.gone.notified();
        tokio::pin!(died);
        died.as_mut().enable();
        let how = match slot.endpoint {
            Some(_) => {
                "its connection ended: it crashed, was killed, or the endpoint ended the session"
            }
            None => "it crashed or was killed",
        };
        let gone = || {
            ToolError::browser_unavailable(format!(
                "{} went away during the call ({how}); the next call starts a new one",
                slot.name()
            ))
        };
        tokio::select! {
            r = fut => match r {
                // A command cut off by the connection's end may fail a moment
                // before the end is told: wait (bounded) until it is, so that
                // the next call relaunches instead of meeting the dead one.
                Err(e) if connection_lost(&e) => {
                    let _ = tokio::time::timeout(Duration::from_secs(2), died.as_mut()).await;
                    Err(gone())
                }
                r => r,
            },
            () = died.as_mut() => Err(gone()),
        }
    }

    /// Answer the open dialog of a tab (`handle_dialog`).
    pub(super) async fn handle_dialog(
        &self,
        n: TabId,
        page: &Page,
        args: &ochre_protocol::page_ops::HandleDialog,
    ) -> Result<DialogHandled, ToolError> {
        let Some(d) = self.inner.tabs.with(n, |t| t.dialog.clone()).flatten() else {
            return Err(ToolError::no_dialog(format!("no dialog is open on {}", n)));
        };
        let accept = args.accept.unwrap_or(true);
        let text = args.prompt_text.as_deref();
        let mut p = HandleJavaScriptDialogParams::new(accept);
        if d.kind == "prompt" && accept {
            p.prompt_text = Some(text.unwrap_or(&d.default_prompt).to_owned());
        }
        let answered = super::bounded(10_000, "answering the dialog", async {
            page.execute(p).await.map_err(|e| cdp_error("cannot answer the dialog", e))
        })
        .await;
        if let Err(e) = answered {
            if e.message.to_ascii_lowercase().contains("no dialog") {
                // Closed behind our back (a human in a headed browser).
                self.inner.tabs.with(n, |t| t.dialog = None);
                return Err(ToolError::no_dialog(format!(
                    "the dialog on {} was already closed",
                    n
                )));
            }
            return Err(e);
        }
        self.dialog_closed(n, accept, text.filter(|_| accept), "handle_dialog");
        let prompt = d.kind == "prompt";
        Ok(DialogHandled {
            tab_id: n.to_string(),
            kind: d.kind.to_owned(),
            message: d.message.clone(),
            url: d.url.clone(),
            default_prompt: prompt.then(|| d.default_prompt.clone()),
            accepted: accept,
            prompt_text: (prompt && accept).then(|| text.unwrap_or(&d.default_prompt).to_owned()),
        })
    }

    fn dialog_closed(&self, n: TabId, accepted: bool, text: Option<&str>, by: &str) {
        let Some(d) = self.inner.tabs.with(n, |t| t.dialog.take()).flatten() else {
            return;
        };
        let mut body = d.json(n);
        body["accepted"] = json!(accepted);
        body["by"] = json!(by);
        if let Some(t) = text {
            body["promptText"] = json!(t.chars().take(MESSAGE_MAX).collect::<String>());
        }
        self.push_event("dialog_closed", Some(n), body);
    }

    /// Watch tab `n`'s dialogs (called for every registered tab).
    pub(super) async fn watch_dialogs(&self, n: TabId, page: &Page) {
        if let Ok(mut s) = page.event_listener::<EventJavascriptDialogOpening>().await {
            let me = self.clone();
            let page = page.clone();
            tokio::spawn(async move {
                while let Some(ev) = s.next().await {
                    me.dialog_opened(n, &page, &ev).await;
                }
            });
        }
        // `Page.javascriptDialogClosed` is not used: it reaches us on a stream of
        // its own, so it may arrive after the next dialog opened and would forget
        // that one. A dialog closed behind our back (a human in a headed browser)
        // is noticed by `handle_dialog`.
    }

    async fn dialog_opened(&self, n: TabId, page: &Page, ev: &EventJavascriptDialogOpening) {
        let events = self.events();
        let d = Dialog {
            kind: dialog_kind(&ev.r#type),
            message: ev.message.chars().take(MESSAGE_MAX).collect(),
            default_prompt: ev
                .default_prompt
                .clone()
                .unwrap_or_default()
                .chars()
                .take(MESSAGE_MAX)
                .collect(),
            url: ev.url.chars().take(300).collect(),
            seq: 0,
        };
        let seq = self.push_event("dialog_opened", Some(n), d.json(n));
        tracing::info!(tab = %n, kind = d.kind, "a dialog opened");
        let policy = self.inner.options.dialogs;
        if policy != DialogPolicy::Ask {
            // Answered at once, never blocking a call.
            let accept = policy == DialogPolicy::Accept;
            let mut p = HandleJavaScriptDialogParams::new(accept);
            if d.kind == "prompt" && accept {
                p.prompt_text = Some(d.default_prompt.clone());
            }
            match tokio::time::timeout(Duration::from_secs(10), page.execute(p)).await {
                Ok(Ok(_)) => {
                    let mut body = d.json(n);
                    body["accepted"] = json!(accept);
                    body["by"] = json!("policy");
                    self.push_event("dialog_closed", Some(n), body);
                    return;
                }
                Ok(Err(e)) => tracing::warn!(error = %e, "cannot answer a dialog by policy"),
                Err(_) => tracing::warn!("answering a dialog by policy timed out"),
            }
        }
        self.inner.tabs.with(n, |t| t.dialog = Some(Dialog { seq, ..d }));
        events.opened.notify_waiters();
    }

    /// Start watching the browser for pages our tabs open, tabs that close, and
    /// downloads (once per browser session).
    pub(super) async fn watch_browser(&self, slot: usize, browser: &chromiumoxide::Browser) {
        if let Ok(mut s) = browser.event_listener::<EventTargetCreated>().await {
            let me = self.clone();
            tokio::spawn(async move {
                while let Some(ev) = s.next().await {
                    let info = &ev.target_info;
                    if info.r#type != "page" {
                        continue;
                    }
                    let opener = info.opener_id.as_ref();
                    let opener = opener.and_then(|o| me.inner.tabs.by_target(o.inner()));
                    let (me, target, url) = (me.clone(), info.target_id.clone(), info.url.clone());
                    let Some(opener) = opener else {
                        // Not a tab's popup: nothing to set up before it goes on.
                        tokio::spawn(async move { me.let_go(slot, target.inner()).await });
                        continue;
                    };
                    // Each page on its own task: one that closes while it is
                    // being reached or set up (its CDP calls then wait for
                    // chromiumoxide's 30 s time-out) must not hold up the next.
                    me.events().adopting.fetch_add(1, Ordering::Relaxed);
                    tokio::spawn(async move {
                        let n = me.adopt(slot, &target, opener, url).await;
                        // Set up (or not to be): it goes on, and its opener's
                        // `window.open` returns.
                        let held = me.let_go(slot, target.inner()).await;
                        if let Some(n) = n.filter(|_| !held) {
                            me.inner.tabs.with(n, |t| t.set_up_late = true);
                        }
                        me.events().adopting.fetch_sub(1, Ordering::Relaxed);
                    });
                }
            });
        }
        if let Ok(mut s) = browser.event_listener::<EventTargetDestroyed>().await {
            let me = self.clone();
            tokio::spawn(async move {
                while let Some(ev) = s.next().await {
                    let n = me.inner.tabs.by_target(ev.target_id.inner());
                    if let Some(n) = n {
                        me.gone(slot, n).await;
                    }
                }
            });
        }
        self.allow_downloads(browser, None).await;
        if let Ok(mut s) = browser.event_listener::<EventDownloadWillBegin>().await {
            let me = self.clone();
            tokio::spawn(async move {
                while let Some(ev) = s.next().await {
                    me.download_began(&ev);
                }
            });
        }
        if let Ok(mut s) = browser.event_listener::<EventDownloadProgress>().await {
            let me = self.clone();
            tokio::spawn(async move {
                while let Some(ev) = s.next().await {
                    me.download_progress(&ev);
                }
            });
        }
    }

    /// Save the downloads of a browser context (`None`: the default one) in the
    /// downloads dir, with progress events.
    pub(super) async fn allow_downloads(
        &self,
        browser: &chromiumoxide::Browser,
        context: Option<chromiumoxide::cdp::browser_protocol::browser::BrowserContextId>,
    ) {
        let dir = self.downloads_dir();
        if std::fs::create_dir_all(&dir).is_err() {
            return;
        }
        let mut b = SetDownloadBehaviorParams::builder()
            .behavior(SetDownloadBehaviorBehavior::AllowAndName)
            .download_path(dir.display().to_string())
            .events_enabled(true);
        if let Some(c) = context {
            b = b.browser_context_id(c);
        }
        if let Ok(p) = b.build()
            && let Err(e) = browser.execute(p).await
        {
            tracing::warn!(error = %e, "downloads are not enabled");
        }
    }

    /// Where downloads go.
    pub(super) fn downloads_dir(&self) -> PathBuf {
        self.inner
            .options
            .downloads_dir
            .clone()
            .unwrap_or_else(|| std::env::temp_dir().join("ochre-downloads"))
    }

    /// Give a page another tab opened a tab id, and set it up as the
    /// session's tabs are (its network watched and captured, its routes and
    /// emulation on) while the browser holds it at its start, before its
    /// first request (see `frames::Held`). Its tab id.
    async fn adopt(
        &self,
        slot: usize,
        target: &TargetId,
        opener: TabId,
        first_url: String,
    ) -> Option<TabId> {
        // The page object exists once chromiumoxide has attached to the target.
        let started = Instant::now();
        let page = loop {
            let got = match self.browser_of(slot).await {
                Some(browser) => browser.get_page(target.clone()).await.ok(),
                None => return None,
            };
            if let Some(p) = got {
                break p;
            }
            if started.elapsed() > Duration::from_secs(10) {
                tracing::warn!(target = %target.inner(), "a page opened by a tab never became reachable");
                return None;
            }
            // (Its opener's `window.open` waits meanwhile: looked at often.)
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        let n = {
            let mut guard = self.slot(slot).session.lock().await;
            let s = guard.as_mut()?;
            if self.inner.tabs.by_target(page.target_id().as_ref()).is_some() {
                return None;
            }
            // A page opened by a tab belongs to the tab's owner.
            let who = self.owner_of(opener);
            self.add_tab(s, page.clone(), &who)
        };
        self.inner.tabs.with(n, |t| t.opener = Some(opener));
        // Reported before it is let go, so before the `window.open` that
        // opened it returns: the action that opened it hears of it. (Its URL
        // here may be none yet: an answer reads the tab as it is then.)
        let url = tokio::time::timeout(Duration::from_millis(300), page.url())
            .await
            .ok()
            .and_then(|r| r.ok().flatten())
            .filter(|u| !u.is_empty() && u != "about:blank")
            .unwrap_or(first_url);
        self.push_event(
            "tab_opened",
            Some(n),
            json!({"openerTabId": opener.to_string(), "url": url}),
        );
        tracing::info!(tab = %n, opener = %opener, "a page opened a tab");
        self.watch_tab(n, &page).await;
        let who = self.owner_of(n);
        self.emulate_new_tab(n, &page, &who, None).await;
        Some(n)
    }

    /// A tab's target went away (closed by its page, or crashed away).
    async fn gone(&self, slot: usize, n: TabId) {
        let removed = {
            let mut guard = self.slot(slot).session.lock().await;
            match guard.as_mut() {
                Some(s) => self.drop_tab(s, n).is_some(),
                // Its browser is gone, and the tab's end is told as that.
                None => {
                    self.forget_tab(n);
                    false
                }
            }
        };
        if removed {
            self.push_event("tab_closed", Some(n), json!({"by": "page"}));
        }
    }

    /// Whether a download started on tab `n` at `since` or later (a click that
    /// "navigates" to a download leaves the page where it is).
    pub(super) fn download_started_since(&self, n: TabId, since: Instant) -> bool {
        self.inner.tabs.with(n, |t| t.downloaded_at.is_some_and(|at| at >= since)).unwrap_or(false)
    }

    fn download_began(&self, ev: &EventDownloadWillBegin) {
        let tab = self.inner.tabs.by_target(ev.frame_id.inner());
        if let Some(n) = tab {
            self.inner.tabs.with(n, |t| t.downloaded_at = Some(Instant::now()));
        }
        let name = safe_file_name(&ev.suggested_filename);
        let seq = self.push_event(
            "download_started",
            tab,
            json!({"url": ev.url.chars().take(300).collect::<String>(), "file": name}),
        );
        let download = Download {
            tab,
            url: ev.url.chars().take(300).collect(),
            name,
            path: None,
            state: "in_progress",
            bytes: 0,
            seq,
        };
        // Both locks in one order (downloads, then ended_early) everywhere.
        let ended = {
            let mut all = lock(&self.events().downloads);
            all.insert(ev.guid.clone(), download);
            lock(&self.events().ended_early).remove(&ev.guid)
        };
        if let Some((state, bytes)) = ended {
            self.download_ended(&ev.guid, state, bytes);
        }
    }

    fn download_progress(&self, ev: &EventDownloadProgress) {
        use chromiumoxide::cdp::browser_protocol::browser::DownloadProgressState as S;
        let state = match ev.state {
            S::InProgress => return,
            S::Completed => "completed",
            S::Canceled => "canceled",
        };
        self.download_ended(&ev.guid, state, ev.received_bytes.max(0.0) as u64);
    }

    /// Download `guid` completed or was canceled: tell it and forget it (or keep
    /// its end for its start, when that has not arrived yet).
    fn download_ended(&self, guid: &str, state: &'static str, bytes: u64) {
        let dir = self.downloads_dir();
        let (d_tab, body) = {
            let mut all = lock(&self.events().downloads);
            let Some(mut d) = all.remove(guid) else {
                let mut early = lock(&self.events().ended_early);
                if early.len() < 64 {
                    early.insert(guid.to_owned(), (state, bytes));
                }
                return;
            };
            drop(all);
            d.state = state;
            d.bytes = bytes;
            if state == "completed" {
                let from = dir.join(guid);
                let to = free_name(&dir, &d.name);
                d.path = Some(if std::fs::rename(&from, &to).is_ok() { to } else { from });
            }
            let body = json!({
                "url": d.url, "file": d.name, "state": d.state,
                "bytes": d.bytes, "path": d.path.as_ref().map(|p| p.display().to_string()),
                "startedSeq": d.seq,
            });
            (d.tab, body)
        };
        self.push_event("download", d_tab, body);
    }

    /// Downloads started and not finished.
    pub(super) fn downloads_in_progress(&self) -> usize {
        lock(&self.events().downloads).len()
    }
}

/// A downloaded file's name made safe for the downloads dir.
fn safe_file_name(s: &str) -> String {
    let name: String = s
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | ' ' | '(' | ')') {
                c
            } else {
                '_'
            }
        })
        .take(120)
        .collect();
    let name = name.trim().trim_start_matches('.').to_owned();
    if name.is_empty() { "download".into() } else { name }
}

/// `dir/name`, or `dir/name (2)` ... when taken.
fn free_name(dir: &Path, name: &str) -> PathBuf {
    let first = dir.join(name);
    if !first.exists() {
        return first;
    }
    let (stem, ext) = match name.rfind('.') {
        Some(i) if i > 0 => (&name[..i], &name[i..]),
        _ => (name, ""),
    };
    (2..10_000)
        .map(|i| dir.join(format!("{stem} ({i}){ext}")))
        .find(|p| !p.exists())
        .unwrap_or(first)
}

/// Answer dialogs of a worker tab (not the agent's) at once: a crawl must not
/// hang on a page's `alert()`.
pub(super) async fn dismiss_dialogs(page: &Page) {
    if let Ok(mut s) = page.event_listener::<EventJavascriptDialogOpening>().await {
        let page = page.clone();
        tokio::spawn(async move {
            while s.next().await.is_some() {
                let _ = tokio::time::timeout(
                    Duration::from_secs(5),
                    page.execute(HandleJavaScriptDialogParams::new(false)),
                )
                .await;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_made_safe() {
        assert_eq!(safe_file_name("../../etc/passwd"), "_.._etc_passwd");
        assert_eq!(safe_file_name("report 2026.csv"), "report 2026.csv");
        assert_eq!(safe_file_name(""), "download");
        assert_eq!(safe_file_name("..."), "download");
    }

    #[test]
    fn policies_parse() {
        assert_eq!("ask".parse::<DialogPolicy>(), Ok(DialogPolicy::Ask));
        assert!("maybe".parse::<DialogPolicy>().is_err());
    }

    #[test]
    fn the_log_is_bounded_and_read_after_a_mark() {
        let ev = Events::default();
        for i in 0..(LOG_CAP + 10) {
            ev.push("tab_opened", json!({"i": i}), None);
        }
        assert_eq!(lock(&ev.log).len(), LOG_CAP);
        let mark = ev.seq.load(Ordering::Relaxed);
        ev.push("tab_closed", json!({}), None);
        let after = ev.since(mark);
        assert_eq!(after.len(), 1);
        assert_eq!(after[0].kind, "tab_closed");
    }
}
