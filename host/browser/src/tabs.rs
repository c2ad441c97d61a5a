//! One value per tab: its page handle and everything the manager knows of it.
//! A [`Tab`] is registered with the tab and dropped whole when the tab closes, however it
//! closes (`close_tab`, its page, its owner's session ending, its browser
//! dying): no per-tab state outlives it. Only a closed tab's owner is kept, in
//! a short bounded list, so that its late events (a download finishing) still
//! reach that owner and no one else.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::cdp::js_protocol::runtime::EventBindingCalled;
use chromiumoxide::listeners::EventStream;

use super::events::Dialog;
use super::netcap::TabWatch;
use super::{Owner, RefId, TabId, lock};

/// Closed tabs whose owner is remembered for late events.
const CLOSED_KEPT: usize = 256;

/// Everything known of one open tab.
pub(crate) struct Tab {
    /// Its page: the CDP target the tab is.
    pub(crate) page: Page,
    /// The browser of the pool it is in.
    pub(crate) slot: usize,
    /// Its owner (see `HostBrowser::with_owner`); `None`: shared.
    pub(crate) owner: Owner,
    /// Which ref numbers belong to which of its documents.
    pub(crate) refs: TabRefs,
    /// Its console messages and network activity.
    pub(crate) watch: Option<Arc<TabWatch>>,
    /// The JavaScript dialog open on it.
    pub(crate) dialog: Option<Dialog>,
    /// The tab whose page opened it.
    pub(crate) opener: Option<TabId>,
    /// Opened by a page and set up only after its first request (the
    /// browser did not hold it: no second connection, or past the hold's
    /// bound).
    pub(crate) set_up_late: bool,
    /// When a download last started on it.
    pub(crate) downloaded_at: Option<Instant>,
    /// The browser context of its own (an isolated tab), disposed with it.
    pub(crate) context: Option<BrowserContextId>,
    /// The `wall` probe's answer, read with the title at the last load by
    /// `navigate` or `history`; taken by the `wall` page operation that follows,
    /// dropped by any other call on the tab (it may change the page).
    pub(crate) wall_at_load: Option<serde_json::Value>,
    /// What its documents report at their load events (see
    /// `BrowserManager::load_report`), in order; read, never left to pile up,
    /// by every call on the tab.
    pub(crate) loads: Option<EventStream<EventBindingCalled>>,
    /// What is emulated on it (see `emulate`); `None`: nothing.
    pub(crate) emulation: Option<ochre_protocol::page_ops::Emulate>,
    /// Its requests pass by its owner's routes (see `routes`).
    pub(crate) routed: bool,
    /// Where the last input left the mouse (CSS pixels of the viewport).
    pub(crate) pointer: Option<(f64, f64)>,
    /// Why a person holds it (see `live`): the agent's calls on it are refused.
    pub(crate) held: Option<std::sync::Arc<str>>,
}

/// The open tabs of one browser manager, by number.
#[derive(Default)]
pub(crate) struct Tabs {
    open: Mutex<HashMap<TabId, Tab>>,
    closed: Mutex<VecDeque<(TabId, Arc<str>)>>,
}

impl Tabs {
    /// Register `page` as tab `n`, in browser `slot`, for `owner`.
    pub(crate) fn add(&self, n: TabId, page: Page, slot: usize, owner: &Owner) {
        let tab = Tab {
            page,
            slot,
            owner: owner.clone(),
            refs: TabRefs::default(),
            watch: None,
            dialog: None,
            opener: None,
            set_up_late: false,
            downloaded_at: None,
            context: None,
            wall_at_load: None,
            loads: None,
            emulation: None,
            routed: false,
            pointer: None,
            held: None,
        };
        lock(&self.open).insert(n, tab);
    }

    /// Drop tab `n` and everything known of it.
    pub(crate) fn remove(&self, n: TabId) -> Option<Tab> {
        let tab = lock(&self.open).remove(&n)?;
        if let Some(owner) = &tab.owner {
            self.note_closed(n, owner.clone());
        }
        Some(tab)
    }

    /// Remember that closed tab `n` was `owner`'s (the last [`CLOSED_KEPT`]).
    fn note_closed(&self, n: TabId, owner: Arc<str>) {
        let mut closed = lock(&self.closed);
        if closed.len() >= CLOSED_KEPT {
            closed.pop_front();
        }
        closed.push_back((n, owner));
    }

    /// Forget every closed tab's owner (the browser restarted: numbers of tabs
    /// it had are never seen again).
    pub(crate) fn forget_closed(&self) {
        lock(&self.closed).clear();
    }

    /// `f` on tab `n`, if it is open.
    pub(crate) fn with<R>(&self, n: TabId, f: impl FnOnce(&mut Tab) -> R) -> Option<R> {
        lock(&self.open).get_mut(&n).map(f)
    }

    /// `f` on every open tab.
    pub(crate) fn all<R>(&self, f: impl FnOnce(&mut HashMap<TabId, Tab>) -> R) -> R {
        f(&mut lock(&self.open))
    }

    /// The owner of tab `n`, open or recently closed.
    pub(crate) fn owner_of(&self, n: TabId) -> Owner {
        if let Some(tab) = lock(&self.open).get(&n) {
            return tab.owner.clone();
        }
        lock(&self.closed).iter().rev().find(|(m, _)| *m == n).map(|(_, o)| o.clone())
    }

    /// The open tab whose CDP target is `target`.
    pub(crate) fn by_target(&self, target: &str) -> Option<TabId> {
        lock(&self.open)
            .iter()
            .find(|(_, t)| t.page.target_id().as_ref() == target)
            .map(|(n, _)| *n)
    }

    /// Tab `n`'s page, if it is open and `who` may see it.
    pub(crate) fn page_for(&self, n: TabId, who: &Owner) -> Option<Page> {
        lock(&self.open).get(&n).filter(|t| t.owner == *who).map(|t| t.page.clone())
    }

    /// The open tabs of browser `slot` with their pages, in order: all of
    /// them, or (`who` given) those of owner `who`.
    pub(crate) fn pages_in(&self, slot: usize, who: Option<&Owner>) -> Vec<(TabId, Page)> {
        let mut out: Vec<(TabId, Page)> = lock(&self.open)
            .iter()
            .filter(|(_, t)| t.slot == slot && who.is_none_or(|w| t.owner == *w))
            .map(|(n, t)| (*n, t.page.clone()))
            .collect();
        out.sort_by_key(|(n, _)| *n);
        out
    }

    /// The open tabs of `who`, in every browser of the pool.
    pub(crate) fn of_owner(&self, who: &Owner) -> Vec<(TabId, Page)> {
        let mut out: Vec<(TabId, Page)> = lock(&self.open)
            .iter()
            .filter(|(_, t)| t.owner == *who)
            .map(|(n, t)| (*n, t.page.clone()))
            .collect();
        out.sort_by_key(|(n, _)| *n);
        out
    }

    /// How many tabs are open, and how many closed tabs' owners are kept.
    pub(crate) fn counts(&self) -> (usize, usize) {
        (lock(&self.open).len(), lock(&self.closed).len())
    }
}

/// Which ref numbers belong to which document of a tab.
#[derive(Debug)]
pub(crate) struct TabRefs {
    pub(crate) next: u64,
    /// (first, end exclusive, document token, cross-site frame or None)
    ranges: Vec<(u64, u64, String, Option<String>)>,
    /// The tab's cross-site frames seen so far: frame -> the frame holding it
    /// (None: the tab's page).
    pub(crate) frames: HashMap<String, Option<String>>,
}

impl Default for TabRefs {
    fn default() -> Self {
        Self { next: 1, ranges: Vec::new(), frames: HashMap::new() }
    }
}

impl TabRefs {
    /// The document token of ref `r` and the frame it lives in.
    pub(crate) fn token_of(&self, r: RefId) -> Option<(&str, Option<&str>)> {
        self.ranges
            .iter()
            .find(|(lo, hi, _, _)| (*lo..*hi).contains(&r.0))
            .map(|(_, _, t, f)| (t.as_str(), f.as_deref()))
    }

    /// The frame whose document has this token (None: the tab's page or unknown).
    pub(crate) fn frame_of_token(&self, token: &str) -> Option<&str> {
        self.ranges.iter().rev().find(|r| r.2 == token).and_then(|r| r.3.as_deref())
    }

    /// The cross-site frames that gave out refs.
    pub(super) fn frames_with_refs(&self) -> HashSet<String> {
        self.ranges.iter().filter_map(|r| r.3.clone()).collect()
    }

    pub(crate) fn record(&mut self, lo: u64, hi: u64, token: &str, frame: Option<&str>) {
        if hi > lo {
            match self.ranges.last_mut() {
                Some(last) if last.1 == lo && last.2 == token => last.1 = hi,
                _ => self.ranges.push((lo, hi, token.to_owned(), frame.map(str::to_owned))),
            }
        }
        self.next = self.next.max(hi);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_tabs_owners_are_kept_for_the_last_ones_only() {
        let tabs = Tabs::default();
        let owner = |i: u64| -> Arc<str> { format!("session-{}", i % 7).into() };
        for i in 1..=300u64 {
            tabs.note_closed(TabId(i), owner(i));
        }
        assert_eq!(tabs.counts(), (0, CLOSED_KEPT));
        // The latest are known, the first forgotten (never told to another owner).
        assert_eq!(tabs.owner_of(TabId(300)), Some(owner(300)));
        assert_eq!(tabs.owner_of(TabId(45)), Some(owner(45)));
        assert_eq!(tabs.owner_of(TabId(44)), None);
        tabs.forget_closed();
        assert_eq!(tabs.counts(), (0, 0));
    }

    #[test]
    fn registry_ranges() {
        let mut t = TabRefs::default();
        t.record(1, 5, "a", None);
        t.record(5, 9, "a", None);
        t.record(9, 12, "b", Some("F"));
        assert_eq!(t.ranges.len(), 2);
        assert_eq!(t.token_of(RefId(4)), Some(("a", None)));
        assert_eq!(t.token_of(RefId(10)), Some(("b", Some("F"))));
        assert_eq!(t.frame_of_token("b"), Some("F"));
        assert_eq!(t.frame_of_token("a"), None);
        assert_eq!(t.token_of(RefId(12)), None);
        assert_eq!(t.next, 12);
    }
}
