//! A session's network capture (`network_capture {scope: "session"}`): while
//! it is on, every tab of the caller's session captures its requests (see
//! `netcap`), a tab it opens later (`tabs_create`, an isolated tab, a popup)
//! from its start; the requests of its tabs that close meanwhile are kept
//! here, in the owner's state, so that one HAR holds the whole session.

use std::collections::VecDeque;
use std::sync::Arc;

use chromiumoxide::Page;
use ochre_protocol::ToolError;
use ochre_protocol::page_ops as typed;

use super::har::Entry;
use super::netcap::{HarSource, Listed, TabWatch, listed};
use super::{BrowserManager, Owner, TabId, owner};

/// Most requests of a session's closed tabs kept: past it, the oldest
/// closed tab's are let go first (and counted).
const CLOSED_CAP: usize = 10_000;

/// What a session's capture holds beside its open tabs' captures.
#[derive(Default)]
pub(crate) struct SessionCapture {
    /// Whether its tabs capture (a new one from its start).
    on: bool,
    /// Its tabs that closed since it started, oldest first: their requests.
    closed: VecDeque<ClosedTab>,
    /// Requests in `closed`.
    kept: usize,
    /// Requests of closed tabs let go to keep it bounded.
    dropped: u64,
}

/// A closed tab's captured requests.
struct ClosedTab {
    tab: TabId,
    /// The tab whose page opened it, and whether ochre set it up only after
    /// its first request (see `popup_comment`).
    opener: Option<TabId>,
    late: bool,
    /// The last document it loaded (its HAR page's title).
    url: String,
    list: Vec<(String, Entry)>,
}

impl SessionCapture {
    /// Whether the session's tabs capture.
    pub(crate) fn on(&self) -> bool {
        self.on
    }

    /// Keep closed tab `tab`'s requests, bounded.
    fn keep(&mut self, tab: &super::tabs::Tab, n: TabId, list: Vec<(String, Entry)>) {
        let (opener, late) = (tab.opener, tab.set_up_late);
        let url = list
            .iter()
            .rev()
            .find(|(_, e)| e.resource_type.as_deref() == Some("Document"))
            .and_then(|(_, e)| e.url.clone())
            .unwrap_or_default();
        self.kept += list.len();
        self.closed.push_back(ClosedTab { tab: n, opener, late, url, list });
        while self.kept > CLOSED_CAP {
            let Some(oldest) = self.closed.front_mut() else { break };
            let over = (self.kept - CLOSED_CAP).min(oldest.list.len());
            oldest.list.drain(..over);
            self.kept -= over;
            self.dropped += over as u64;
            if oldest.list.is_empty() {
                self.closed.pop_front();
            }
        }
    }
}

impl BrowserManager {
    /// `network_capture` with `scope: session`: the action on every open
    /// tab of the caller's session, and on the requests its closed tabs left.
    pub(super) async fn session_capture(
        &self,
        args: &typed::NetworkCapture,
    ) -> Result<typed::NetworkCaptured, ToolError> {
        use typed::{CapturedRequests, NetworkCaptured};
        let action = args.action.as_deref().unwrap_or("get");
        if !matches!(action, "start" | "stop" | "get" | "clear" | "har") {
            return Err(ToolError::invalid_argument(
                "action",
                format!("network_capture action {action:?} is not start, stop, get, clear or har"),
            ));
        }
        if action == "har" {
            self.evidence_root()?;
        }
        let who = owner();
        // Set before the tabs are: a tab opened meanwhile captures too.
        match action {
            "start" => self.inner.owners.write(&who, |s| {
                s.capture = Some(SessionCapture { on: true, ..SessionCapture::default() });
            }),
            "stop" => {
                self.session_capture_change(&who, |c| c.on = false);
            }
            _ => {}
        }
        let tabs = self.session_tabs(&who);
        let names = Some(tabs.iter().map(|(n, _, _)| n.to_string()).collect());
        let (on, closed) = self
            .inner
            .owners
            .read(&who, |s| s.capture.as_ref().map(|c| (c.on, c.closed.len())))
            .flatten()
            .unwrap_or((false, 0));
        let base = NetworkCaptured {
            capturing: on,
            tabs: names,
            closed_tabs: Some(closed),
            ..NetworkCaptured::default()
        };
        match action {
            "start" | "stop" => {
                let mut held = 0;
                for (n, page, w) in &tabs {
                    if action == "start" {
                        w.cap().restart();
                    } else {
                        held += w.cap().stop();
                    }
                    self.wire_capture(*n, page, w, action == "start").await;
                }
                let requests = (action == "stop").then(|| {
                    let closed = self.session_capture_change(&who, |c| c.kept).unwrap_or(0);
                    CapturedRequests::Count(held + closed)
                });
                Ok(NetworkCaptured { requests, ..base })
            }
            "clear" => {
                let mut cleared = tabs.iter().map(|(_, _, w)| w.cap().clear()).sum::<usize>();
                cleared += self
                    .session_capture_change(&who, |c| {
                        let on = c.on;
                        std::mem::replace(c, SessionCapture { on, ..SessionCapture::default() })
                            .kept
                    })
                    .unwrap_or(0);
                Ok(NetworkCaptured { cleared: Some(cleared), closed_tabs: Some(0), ..base })
            }
            "get" => {
                let (mut items, mut dropped) = self.closed_requests(&who);
                for (n, page, w) in &tabs {
                    let c = w.cap();
                    dropped += c.dropped();
                    items.extend(
                        c.in_order()
                            .into_iter()
                            .map(|(id, e)| (Some(*n), Some(page.clone()), id, e)),
                    );
                }
                // In the order they were sent, across tabs.
                items.sort_by_key(|(_, _, _, e)| e.started);
                let total = items.len();
                let list = listed(items, args.limit, args.include_bodies == Some(true)).await;
                Ok(NetworkCaptured {
                    total: Some(total),
                    dropped: Some(dropped),
                    requests: Some(CapturedRequests::List(list)),
                    ..base
                })
            }
            _ => {
                let (bytes, mut written) = self.session_har(&who, &tabs, args).await?;
                written.path = self.write_evidence_file("har", "har", &bytes)?;
                Ok(NetworkCaptured { har: Some(written), ..base })
            }
        }
    }

    /// The session's HAR: a page per tab, open or closed, and what it holds.
    async fn session_har(
        &self,
        who: &Owner,
        tabs: &[(TabId, Page, Arc<TabWatch>)],
        args: &typed::NetworkCapture,
    ) -> Result<(Vec<u8>, typed::HarWritten), ToolError> {
        let mut sources: Vec<(TabId, HarSource)> = self
            .inner
            .owners
            .read(who, |s| {
                s.capture
                    .iter()
                    .flat_map(|c| &c.closed)
                    .map(|t| {
                        let title = format!("tab {} (closed) {}", t.tab, t.url);
                        let (id, comment) =
                            (t.tab.to_string(), t.opener.map(|o| popup_comment(o, t.late)));
                        let list = t.list.clone();
                        (t.tab, HarSource { id, title, list, page: None, comment })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut on = !sources.is_empty();
        for (n, page, w) in tabs {
            let (list, active) = {
                let c = w.cap();
                (c.in_order(), c.active())
            };
            on |= active || !list.is_empty();
            let title = page.get_title().await.ok().flatten().unwrap_or_default();
            let comment = self
                .inner
                .tabs
                .with(*n, |t| t.opener.map(|o| popup_comment(o, t.set_up_late)))
                .flatten();
            let page = Some(page.clone());
            let source = HarSource { id: n.to_string(), title, list, page, comment };
            sources.push((*n, source));
        }
        if !on {
            return Err(ToolError::browser_error(
                "nothing is captured in this session: network_capture {action: start, scope: \
                 session} first, then har",
            ));
        }
        sources.sort_by_key(|(n, _)| *n);
        let sources = sources.into_iter().map(|(_, s)| s).collect();
        Ok(self.har_of(sources, args.include_bodies != Some(false)).await)
    }

    /// The caller's session's HAR, when its network is captured
    /// session-wide and holds anything (for an evidence bundle).
    pub(super) async fn session_har_bytes(&self) -> Option<Vec<u8>> {
        let who = owner();
        self.inner.owners.read(&who, |s| s.capture.is_some()).filter(|on| *on)?;
        let tabs = self.session_tabs(&who);
        let all = typed::NetworkCapture::default();
        self.session_har(&who, &tabs, &all).await.ok().map(|(bytes, _)| bytes)
    }

    /// The open tabs of `who` in every browser of the pool, with their pages
    /// and watches.
    fn session_tabs(&self, who: &Owner) -> Vec<(TabId, Page, Arc<TabWatch>)> {
        (0..self.pool_size())
            .flat_map(|slot| self.inner.tabs.pages_in(slot, Some(who)))
            .filter_map(|(n, page)| Some((n, page, self.tab_watch(n)?)))
            .collect()
    }

    /// The requests `who`'s closed tabs left (each with its tab), and how
    /// many were let go.
    fn closed_requests(&self, who: &Owner) -> (Vec<Listed>, u64) {
        self.inner
            .owners
            .read(who, |s| {
                let Some(c) = &s.capture else { return (Vec::new(), 0) };
                let items = (c.closed.iter())
                    .flat_map(|t| {
                        t.list.iter().map(|(id, e)| (Some(t.tab), None, id.clone(), e.clone()))
                    })
                    .collect();
                (items, c.dropped)
            })
            .unwrap_or_default()
    }

    /// `f` on `who`'s session capture, if it has one (none is made).
    fn session_capture_change<R>(
        &self,
        who: &Owner,
        f: impl FnOnce(&mut SessionCapture) -> R,
    ) -> Option<R> {
        self.inner.owners.change(who, |s| s.capture.as_mut().map(f)).flatten()
    }

    /// A new tab of a session whose capture is on captures from its start.
    pub(super) fn capture_if_session<'a>(
        &'a self,
        n: TabId,
        page: &'a Page,
        w: &'a Arc<TabWatch>,
    ) -> futures::future::BoxFuture<'a, ()> {
        // Boxed: popups are watched from a task the browser's start spawns.
        Box::pin(async move {
            let who = self.inner.tabs.owner_of(n);
            let on = self.inner.owners.read(&who, |s| s.capture.as_ref().is_some_and(|c| c.on));
            if on == Some(true) {
                w.cap().restart();
                self.wire_capture(n, page, w, true).await;
            }
        })
    }

    /// A closed tab's captured requests, kept by its session's capture (one
    /// was started) for the session's HAR.
    /// (Nothing is read of a tab whose session is not captured: every tab's
    /// close passes here.)
    pub(super) fn keep_closed_capture(&self, n: TabId, tab: &super::tabs::Tab) {
        let Some(w) = &tab.watch else { return };
        if self.inner.owners.read(&tab.owner, |s| s.capture.is_some()) != Some(true) {
            return;
        }
        let list = w.cap().in_order();
        if !list.is_empty() {
            self.session_capture_change(&tab.owner, |c| c.keep(tab, n, list));
        }
    }
}

/// The HAR page comment of a tab another tab's page opened; one ochre set up
/// only after its first request (`late`: see `Tab::set_up_late`) says what
/// it lacks.
fn popup_comment(opener: TabId, late: bool) -> String {
    match late {
        false => format!("opened by a page of tab {opener}"),
        true => format!(
            "opened by a page of tab {opener}: captured from when ochre knew it, after its \
             first document was asked for (that request is not here)"
        ),
    }
}
