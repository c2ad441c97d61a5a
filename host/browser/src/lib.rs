//! # ochre-browser
//!
//! The browser the host owns: Chromium over CDP with chromiumoxide (no `fetcher`:
//! ochre never downloads a browser). It knows nothing of plugins, the pipeline or
//! MCP: `ochre-host` drives it, and only `ochre-protocol` is below it.
//!
//! - Managed mode: headless Chromium found on `PATH` (or `chrome_path`), launched
//!   lazily by the first browser call, with a fresh profile per server unless
//!   `user_data_dir` is given. Attach mode: `endpoints` (http or ws URLs), a pool
//!   of browsers (see the `pool` module).
//! - Tabs have short ids (`t1`, `t2`, ...) and there is a current tab.
//! - Tabs have an owner: calls run under [`HostBrowser::with_owner`] (an HTTP session's)
//!   see only that owner's tabs, each owner's in a browser context of its own;
//!   calls without an owner share the rest (stdio, an embedder). A tab a page
//!   opens belongs to the opener's owner.
//! - A dead browser is noticed (its event stream ends); the next call relaunches or
//!   re-attaches and reports that it did ([`HostBrowser::take_relaunch_note`]).

#![warn(missing_docs)]

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use ochre_protocol::lock;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, GetNavigationHistoryParams, NavigateToHistoryEntryParams,
};
use chromiumoxide::page::ScreenshotParams;
use chromiumoxide::{Browser, Page};
use futures::StreamExt;
use serde_json::Value;

use ochre_protocol::{Code, ToolError};

mod act;
pub mod capture;
mod cdp;
mod emulate;
mod events;
mod frames;
mod grid;
mod har;
mod host_browser;
mod input;
mod launch;
mod library;
pub mod lifeline;
mod live;
mod logins;
mod mkv;
mod navigation;
mod netcap;
pub mod netpolicy;
mod nodelay;
pub mod ops;
mod owners;
mod pageops;
mod perftrace;
mod pool;
mod routes;
mod sessioncap;
mod sessions;
mod tabref;
mod tabs;
mod target;
mod video;
mod visit;
mod webm;

use cdp::*;
pub use events::{DialogPolicy, PageEvent};
pub use input::Input;
pub use launch::{DISABLED_FEATURES, find_on_path};
pub use library::{PAGE_JS, PAGE_PARTS, page_library_key, page_library_under};
pub use pool::{Endpoint, EndpointStatus};
pub use tabref::CallCounts;
use tabref::{Caller, TabRef};

pub use ochre_protocol::page_ops;

/// How to get a browser.
#[derive(Debug, Clone, Default)]
pub struct BrowserOptions {
    /// Chromium executable (default: looked up on PATH).
    pub chrome_path: Option<PathBuf>,
    /// Attach to these running browsers (a pool) instead of launching one.
    pub endpoints: Vec<Endpoint>,
    /// Show the window.
    pub headed: bool,
    /// A persistent profile dir (default: a fresh temporary one per server).
    pub user_data_dir: Option<PathBuf>,
    /// Dirs whose files `file_upload` may give to a page (the embedder adds the cwd
    /// if it wants it; the CLI does).
    pub file_roots: Vec<PathBuf>,
    /// Dirs whose files `file_upload` never gives to a page, whatever the roots
    /// (the host adds its data dir; the browser's profile is always refused).
    /// The downloads dir is exempt: what pages downloaded may be uploaded.
    pub private_dirs: Vec<PathBuf>,
    /// Where `oc_evidence_bundle` writes bundles (the host sets
    /// `<data-dir>/evidence` when this is `None`).
    pub evidence_dir: Option<PathBuf>,
    /// What happens to a JavaScript dialog nobody answers (default: keep it open
    /// and report it; the agent answers with `handle_dialog`).
    pub dialogs: DialogPolicy,
    /// Where downloads started by pages are saved (the host sets
    /// `<data-dir>/downloads` when this is `None`).
    pub downloads_dir: Option<PathBuf>,
    /// Start the managed browser through this executable, which calls
    /// [`lifeline::exec_browser_if_asked`] first thing in `main`: the browser
    /// then dies with the server, even after a `kill -9` (Linux). The `ochre`
    /// binary passes itself.
    pub launcher: Option<PathBuf>,
    /// Where the server notes its managed browser's pid and temporary profile,
    /// so that the next server cleans up after a crash (the host sets
    /// `<data-dir>/run`).
    pub run_dir: Option<PathBuf>,
    /// Police the network (see `netpolicy`): every browser context reaches
    /// only what this allows, through a proxy of its own that a session's
    /// `network_policy` tightens and sends through its upstream proxy.
    /// `None`: the network is not policed (and sessions cannot be).
    pub network_policy: Option<netpolicy::NetPolicy>,
}

/// How the temporary profile dirs (under the system temp dir) are named.
pub(crate) const TEMP_PROFILE_PREFIX: &str = "ochre-profile-";

tokio::task_local! {
    /// The owner of the tabs the running call may see (see [`HostBrowser::with_owner`]).
    static OWNER: Owner;
}

tokio::task_local! {
    /// The tab a person drives in the running call (see `live`): its hold
    /// does not stop the call.
    static PERSON: TabId;
}

/// The owner of the running call.
fn owner() -> Owner {
    OWNER.try_with(Clone::clone).ok().flatten()
}

pub use ochre_protocol::browser::{
    Hints, HostBrowser, Notices, Owner, RefId, TabDialog, TabId, TabInfo, a_dialog,
};

/// Where [`BrowserManager::info`] reads a tab's title.
#[derive(Debug, Clone, Copy)]
enum TitleFrom {
    /// The page's `document.title` (the browser's when no script can run).
    Page,
    /// At a load: `document.title` and the login-wall evidence as the
    /// document reported them at its load event (else read in one script
    /// round trip); the `wall` page operation that follows takes the evidence
    /// instead of a round trip of its own. The browser's title when no script
    /// can run.
    Load,
}

struct Session {
    /// Which browser of the pool this is.
    slot: usize,
    /// Shared so that CDP round trips (a context, a page, a close) run
    /// without the session's lock: other sessions' calls need it meanwhile.
    browser: Arc<Browser>,
    alive: Arc<AtomicBool>,
    /// Per owner, its current tab.
    current: std::collections::HashMap<Owner, TabId>,
    /// Per owner with tabs, the browser context they live in.
    owner_contexts: std::collections::HashMap<
        Arc<str>,
        chromiumoxide::cdp::browser_protocol::browser::BrowserContextId,
    >,
    /// The temporary profile, removed when the session is dropped.
    _profile: Option<ProfileDir>,
    /// The Selenium Grid session the browser runs in, ended with this one.
    grid: Option<grid::GridSession>,
    /// The host's own CDP connection for cross-site frames (opened on first use).
    frames: Option<Arc<frames::FrameLink>>,
    /// The tab last brought to the front. A tab behind another one is hidden:
    /// its page gets no animation frames, so pages that wait for one (and
    /// Chromium's own input handling) stall; ops bring their tab to the front
    /// first. `None` after any tab opens or closes.
    front: Option<TabId>,
}

impl Session {
    /// `who`'s browser context in this browser (`None`: the shared tabs', or
    /// none made yet: the default context).
    fn context_of(
        &self,
        who: &Owner,
    ) -> Option<chromiumoxide::cdp::browser_protocol::browser::BrowserContextId> {
        who.as_ref().and_then(|o| self.owner_contexts.get(o).cloned())
    }
}

/// A temporary profile dir, removed when the session ends.
struct ProfileDir(PathBuf);

impl Drop for ProfileDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Owns the browser connection and the tab registry. Cheap to clone.
#[derive(Clone)]
pub struct BrowserManager {
    inner: Arc<Inner>,
}

struct Inner {
    options: BrowserOptions,
    /// The browsers: the managed one, or the endpoints of the pool.
    slots: Vec<pool::Slot>,
    /// The open tabs, each with its page and everything known of it (see
    /// [`tabs`]).
    tabs: tabs::Tabs,
    /// Where the next worker tabs go (round-robin over the pool).
    next_worker: AtomicUsize,
    /// The next tab number (tab ids are unique across the pool and relaunches).
    next_tab: AtomicU64,
    /// Everything kept per owner (see [`owners`]).
    owners: owners::Owners,
    launches: std::sync::atomic::AtomicU64,
    /// Where saved logins are opened by name (the host's store).
    login_source: std::sync::OnceLock<ochre_protocol::browser::LoginSource>,
    /// The login every session starts with unless it loads another (`--login`).
    default_login: std::sync::Mutex<Option<Arc<ochre_protocol::browser::StorageState>>>,
    /// Dialogs, pages opened by pages, downloads.
    events: events::Events,
    /// Where launches and relaunches are told to the clients' operators.
    notices: std::sync::OnceLock<Notices>,
    /// The host's known secrets, out of every file the browser writes.
    scrubber: std::sync::OnceLock<ochre_protocol::browser::Scrubber>,
    /// The server is closing the browser (its connection's end is expected).
    closing: Arc<AtomicBool>,
    /// Tabs resolved, operations read from JSON (see [`CallCounts`]).
    counters: tabref::Counters,
    /// Videos being recorded, of every tab: while none is, a call's end and
    /// a gesture look up no tab for one (see `video`).
    videos_recording: AtomicUsize,
}

impl std::fmt::Debug for BrowserManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrowserManager")
            .field("options", &self.inner.options)
            .finish_non_exhaustive()
    }
}

/// What [`BrowserManager::state_sizes`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateSizes {
    /// Open tabs the manager keeps state for (refs, watch, dialog, owner, ...).
    pub tabs: usize,
    /// Page handles held: an open tab's, in a browser still running.
    pub pages: usize,
    /// Closed tabs whose owner is remembered for late events (at most 256).
    pub closed_owners: usize,
    /// Downloads started and not finished.
    pub downloads_in_progress: usize,
    /// Owners' current tabs (an entry per owner with an open tab).
    pub current_tabs: usize,
    /// Browsers whose front tab is set.
    pub front_tabs: usize,
    /// CDP sessions attached to cross-site frames (ended with their frame or tab).
    pub frame_sessions: usize,
    /// Owners' browser contexts (one per owner with tabs, per browser).
    pub owner_contexts: usize,
    /// Owners (sessions, the shared tabs' included) the manager keeps any
    /// state for; each piece of it is counted below.
    pub owners: usize,
    /// Owners placed on a browser of the pool.
    pub placed_sessions: usize,
    /// Owners whose last call's browser is remembered (to tell a relaunch).
    pub seen_sessions: usize,
    /// Tabs kept for crawls to fetch pages from, per owner and origin.
    pub fetchers: usize,
    /// Sessions whose emulation is kept for the tabs they open (see
    /// `emulate`).
    pub emulated_sessions: usize,
    /// Sessions signed in with a named login (their later contexts take it).
    pub logged_in_sessions: usize,
    /// Sessions with a policy proxy of their own (see `netpolicy`).
    pub policed_sessions: usize,
    /// Sessions with routes (see `routes`).
    pub routed_sessions: usize,
    /// Sessions' locks for opening their first tab.
    pub opening_locks: usize,
    /// Sessions whose network is captured session-wide, or was (what their
    /// closed tabs' requests left is kept for the session's HAR).
    pub captured_sessions: usize,
}

/// Parameters for a new tab in a window of its own. A tab behind another tab of
/// its window is hidden: it gets no animation frames, and trusted input to it
/// stalls for seconds. The agent's tabs, isolated tabs and worker tabs each get
/// a window, so none hides another (pages a page opens may still share its
/// window; an op brings its tab to the front).
fn own_window(url: &str) -> chromiumoxide::cdp::browser_protocol::target::CreateTargetParams {
    let mut p = chromiumoxide::cdp::browser_protocol::target::CreateTargetParams::new(url);
    p.new_window = Some(true);
    p
}

impl BrowserManager {
    /// A manager; nothing is launched until a browser call needs it.
    pub fn new(options: BrowserOptions) -> Self {
        if options.network_policy.is_some() && !options.endpoints.is_empty() {
            tracing::warn!(
                "the network policy holds for the browser contexts ochre makes (HTTP sessions, \
                 isolated tabs); the default context of an attached browser (the shared tabs) \
                 is not policed"
            );
        }
        Self {
            inner: Arc::new(Inner {
                slots: Self::slots_for(&options.endpoints),
                options,
                owners: Default::default(),
                tabs: Default::default(),
                next_worker: AtomicUsize::new(0),
                next_tab: AtomicU64::new(1),
                launches: std::sync::atomic::AtomicU64::new(0),
                default_login: Default::default(),
                login_source: Default::default(),
                events: Default::default(),
                notices: Default::default(),
                scrubber: Default::default(),
                closing: Default::default(),
                counters: Default::default(),
                videos_recording: AtomicUsize::new(0),
            }),
        }
    }

    /// The page for `tab` (or the current tab, opening one if there is none)
    /// of the running call (see [`Self::tab`]).
    async fn page(&self, tab: Option<TabId>) -> Result<(TabId, Page), ToolError> {
        let t = self.tab(&Caller::current(), tab).await?;
        Ok((t.n, t.page))
    }

    /// [`Self::page`] without paying an owed settle (see [`Self::tab_as_is`]).
    async fn page_as_is(&self, tab: Option<TabId>) -> Result<(TabId, Page), ToolError> {
        let t = self.tab_as_is(&Caller::current(), tab).await?;
        Ok((t.n, t.page))
    }

    /// A tab's info. The title comes from the page (`TitleFrom::Page`; at a
    /// load, `TitleFrom::Load`, from what the document reported at its load
    /// event, with the login-wall evidence), or from the browser when no
    /// script can run there (a dialog is open in it or in a tab of its
    /// renderer: a page and the popups it opened share one) or the page is too
    /// busy to answer in a second (a popup still starting).
    async fn info(&self, n: TabId, page: &Page, from: TitleFrom) -> TabInfo {
        let (url, title) = match from {
            // Read in one script round trip, so that both are of one
            // document (a tab that commits its next document in between would
            // otherwise pair one's address with the other's title).
            TitleFrom::Page if !self.any_dialog_open() => match url_and_title(page).await {
                Some(both) => both,
                None => (frame_url(page).await, self.target_title(n, page).await),
            },
            TitleFrom::Load => {
                let url = frame_url(page).await;
                let read = match self.load_report(n, Some(&url)) {
                    Some(seen) => Some(seen),
                    None if !self.any_dialog_open() => {
                        let read = self.wall_and_title(page);
                        tokio::time::timeout(Duration::from_secs(1), read)
                            .await
                            .ok()
                            .and_then(Result::ok)
                    }
                    None => None,
                };
                let title = match read {
                    Some((wall, title)) => {
                        self.inner.tabs.with(n, |t| t.wall_at_load = Some(wall));
                        title
                    }
                    None => self.target_title(n, page).await,
                };
                (url, title)
            }
            // (A dialog holds the page: no document commits meanwhile.)
            _ => (frame_url(page).await, self.target_title(n, page).await),
        };
        let who = owner();
        let current =
            self.home_guard().await.as_ref().is_some_and(|s| s.current.get(&who) == Some(&n));
        let (opener, dialog) = self.opener_and_dialog(n);
        TabInfo {
            id: n.to_string(),
            url,
            title,
            current,
            opener: opener.map(|o| o.to_string()),
            dialog,
        }
    }

    /// Tab `n`'s page if `who` may see it.
    fn visible_page(&self, n: TabId, who: &Owner) -> Option<Page> {
        self.inner.tabs.page_for(n, who)
    }

    /// How much per-tab and per-owner state the manager holds: for operators of long-running
    /// servers and for tests that check nothing of a closed tab is left.
    pub async fn state_sizes(&self) -> StateSizes {
        let (tabs, closed_owners) = self.inner.tabs.counts();
        let o = self.inner.owners.sizes();
        let (mut pages, mut current_tabs, mut front_tabs, mut frame_sessions) = (0, 0, 0, 0);
        let mut owner_contexts = 0;
        for slot in &self.inner.slots {
            let Some(s) = &*slot.session.lock().await else { continue };
            pages += self.inner.tabs.pages_in(s.slot, None).len();
            current_tabs += s.current.len();
            owner_contexts += s.owner_contexts.len();
            front_tabs += usize::from(s.front.is_some());
            frame_sessions += s.frames.as_ref().map_or(0, |f| f.attached());
        }
        StateSizes {
            tabs,
            pages,
            closed_owners,
            downloads_in_progress: self.downloads_in_progress(),
            current_tabs,
            front_tabs,
            frame_sessions,
            owner_contexts,
            owners: o.owners,
            placed_sessions: o.placed,
            seen_sessions: o.seen,
            fetchers: o.fetchers,
            emulated_sessions: o.emulations,
            logged_in_sessions: o.logins,
            policed_sessions: o.policed,
            routed_sessions: o.routed,
            opening_locks: o.opening,
            captured_sessions: o.captures,
        }
    }
}

/// The address of a page's main frame as the browser last committed it.
pub(crate) async fn frame_url(page: &Page) -> String {
    page.url().await.ok().flatten().unwrap_or_default()
}

/// A page's address and `document.title`, read by one script in its main
/// world (no user activation given); `None` when the page does not answer
/// within a second (busy, or a popup still starting).
async fn url_and_title(page: &Page) -> Option<(String, String)> {
    let read =
        serde_json::json!({"expression": "[location.href, document.title]", "returnByValue": true});
    let r =
        tokio::time::timeout(Duration::from_secs(1), raw_command(page, "Runtime.evaluate", read))
            .await
            .ok()?
            .ok()?;
    match r["result"]["value"].as_array().map(Vec::as_slice) {
        Some([Value::String(url), Value::String(title)]) => Some((url.clone(), title.clone())),
        _ => None,
    }
}
