//! Who a call is for ([`Caller`]) and the tab it acts on, resolved once
//! ([`TabRef`]): `Caller → TabRef → op`. Resolving checks that the caller may
//! see the tab, that no person holds it, and pays the settle its last
//! navigation owes; an action's steps then run on the `TabRef` as typed page
//! operations, handed to their handlers as they are (no JSON between the
//! action and the operation; the page library gets its arguments as JSON, as
//! it runs in the page).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chromiumoxide::Page;
use ochre_protocol::ToolError;
use ochre_protocol::page_ops::{self, AnyOp, PageOp};

use super::{BrowserManager, Input, Owner, TabId, not_found};

/// Who a call is for: the owner of the tabs it may see, and the tab a person
/// drives in it (their hold does not stop the call).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Caller {
    /// The owner of the tabs the call sees (`None`: the shared tabs).
    pub owner: Owner,
    /// The tab a person drives in this call.
    pub person: Option<TabId>,
}

impl Caller {
    /// The running call's: what [`super::HostBrowser::with_owner`] and a
    /// person's scope set, read once where a call enters the browser.
    pub(crate) fn current() -> Caller {
        Caller { owner: super::owner(), person: super::PERSON.try_with(|n| *n).ok() }
    }
}

/// A tab resolved for its caller: what an action's steps run on.
#[derive(Clone)]
pub(crate) struct TabRef {
    pub mgr: BrowserManager,
    pub n: TabId,
    pub page: Page,
    pub caller: Caller,
}

/// How often tabs were resolved and page operations read from JSON, since the
/// manager started: what a test counts to see that an action resolves its tab
/// once and drives its steps without JSON in between.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallCounts {
    /// Tabs resolved for a caller (ownership, hold and owed settle checked).
    pub tab_resolutions: u64,
    /// Page operations that came in as JSON (a plugin's or the host's
    /// `page_op`) and were read into their types.
    pub json_ops: u64,
}

/// The counters behind [`CallCounts`].
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub tab_resolutions: AtomicU64,
    pub json_ops: AtomicU64,
}

impl BrowserManager {
    /// How often tabs were resolved and operations read from JSON (see [`CallCounts`]).
    pub fn call_counts(&self) -> CallCounts {
        let c = &self.inner.counters;
        CallCounts {
            tab_resolutions: c.tab_resolutions.load(Ordering::Relaxed),
            json_ops: c.json_ops.load(Ordering::Relaxed),
        }
    }

    /// Tab `tab` of `caller` (its current tab when `None`, opening one if it
    /// has none), once the network quiet its last navigation owes is paid (see
    /// `owe_settle`).
    pub(crate) async fn tab(
        &self,
        caller: &Caller,
        tab: Option<TabId>,
    ) -> Result<TabRef, ToolError> {
        let t = self.tab_as_is(caller, tab).await?;
        // Whatever this call does may change the page: the wall evidence read
        // at its load no longer stands for it, nor do the loads reported so far.
        self.inner.tabs.with(t.n, |x| x.wall_at_load = None);
        let _ = self.load_report(t.n, None);
        self.pay_settle(t.n, &t.page).await;
        Ok(t)
    }

    /// [`Self::tab`] without paying an owed settle: for what reads the page as
    /// the load left it (the owed wait stays for the next call).
    pub(crate) async fn tab_as_is(
        &self,
        caller: &Caller,
        wanted: Option<TabId>,
    ) -> Result<TabRef, ToolError> {
        self.inner.counters.tab_resolutions.fetch_add(1, Ordering::Relaxed);
        let who = &caller.owner;
        let (n, page, behind) = loop {
            let mut guard = match wanted {
                Some(n) => self.session_of_tab(n).await?,
                None => self.session().await?,
            };
            let session = guard.as_mut().ok_or_else(|| not_found("current"))?;
            let n = wanted.or_else(|| session.current.get(who).copied());
            match (n.and_then(|n| self.visible_page(n, who).map(|p| (n, p))), wanted) {
                (Some((n, page)), _) => {
                    self.check_held_for(n, caller)?;
                    let behind = session.front != Some(n);
                    session.front = Some(n);
                    break (n, page, behind);
                }
                (None, Some(n)) => return Err(not_found(&n.to_string())),
                // No current tab: open one (once, however many of the owner's
                // calls ask at once), then take it as any current tab.
                (None, None) => {
                    drop(guard);
                    let opening = self.opening(who);
                    let _one = opening.lock().await;
                    let has = self
                        .home_guard()
                        .await
                        .as_ref()
                        .is_some_and(|s| s.current.contains_key(who));
                    if !has {
                        self.open_tab(None, who, "about:blank").await?;
                    }
                }
            }
        };
        if behind {
            // Bounded and best effort: a tab with an open dialog may not answer.
            let _ = tokio::time::timeout(Duration::from_secs(2), page.bring_to_front()).await;
        }
        tracing::debug!(target: "ochre::tab", tab = %n, "resolved");
        Ok(TabRef { mgr: self.clone(), n, page, caller: caller.clone() })
    }
}

impl TabRef {
    /// Run page operation `op` on this tab, bounded by `timeout_ms`, and read
    /// its result as its type; `DIALOG_OPEN` at once if a dialog blocks the
    /// tab (or opens while it runs).
    pub(crate) async fn run<O>(&self, op: O, timeout_ms: u32) -> Result<O::Output, ToolError>
    where
        O: PageOp + Into<AnyOp>,
    {
        // The page library's arguments: it runs in the page.
        let args = page_ops::to_args(&op).map_err(ToolError::internal)?;
        let m = &self.mgr;
        let on = m.on_tab(self.n, &self.page, op.into(), args, timeout_ms);
        let out = m.guarded_for(&self.caller, Some(self.n), on).await?;
        page_ops::from_output::<O>(out).map_err(ToolError::internal)
    }

    /// Trusted input to this tab (the left button), each event checked
    /// before the first is sent. `aimed`: at points the page library found
    /// the element at (see `BrowserManager::send_on`).
    pub(crate) async fn input(&self, events: &[Input], aimed: bool) -> Result<(), ToolError> {
        let gestures = super::input::gestures_of(events);
        super::input::check_gestures(&gestures)?;
        let m = &self.mgr;
        let send = Box::pin(m.send_on(self.n, &self.page, &gestures, 10_000, aimed));
        m.guarded_for(&self.caller, Some(self.n), send).await.map(drop)
    }
}
