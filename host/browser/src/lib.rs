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
mod emulate;
mod events;
mod frames;
mod grid;
mod host_browser;
mod input;
mod library;
pub mod lifeline;
mod live;
mod logins;
mod netcap;
pub mod netpolicy;
pub mod ops;
mod owners;
mod pageops;
mod pool;
mod routes;
mod tabref;
mod tabs;
mod target;
mod visit;
pub use events::{DialogPolicy, PageEvent};
pub use input::Input;
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

/// Executables tried, in order, when no path is given.
const CANDIDATES: &[&str] =
    &["chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"];

const INSTALL_HINT: &str = "install Chromium (Debian: `apt-get install -y chromium`), or pass --chrome-path or --cdp-endpoint";

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

pub use ochre_protocol::browser::{HostBrowser, Notices, Owner, RefId, TabDialog, TabId, TabInfo};

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
    /// The server is closing the browser (its connection's end is expected).
    closing: Arc<AtomicBool>,
    /// Tabs resolved, operations read from JSON (see [`CallCounts`]).
    counters: tabref::Counters,
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

fn not_found(id: &str) -> ToolError {
    ochre_protocol::browser::tab_not_found(id)
}

/// A failed CDP command as a tool error: the one place that reads what the
/// browser's (and chromiumoxide's) wording means. The document the command ran
/// in went away is `DOCUMENT_LOADING` (a read retries it once); the rest is
/// `BROWSER_ERROR`, with its [`CdpCause`] where callers act on it.
fn cdp_error(what: &str, e: impl std::fmt::Display) -> ToolError {
    let text = e.to_string();
    let message = format!("{what}: {text}");
    match CdpCause::of(&text) {
        Some(CdpCause::DocumentGone) => ToolError::document_loading(message),
        _ => with_cdp_cause(ToolError::browser_error(message), &text),
    }
}

/// `err`, a failed CDP command told in its caller's code (a tab that did not
/// open is `NAVIGATION_FAILED`), with the [`CdpCause`] the command's error `e`
/// gives, so that a connection that ended is known as such whatever the code.
fn with_cdp_cause(err: ToolError, e: &impl std::fmt::Display) -> ToolError {
    match CdpCause::of(&e.to_string()) {
        Some(cause) => err.with(CdpCause::KEY, cause.as_str()),
        None => err,
    }
}

/// Why a CDP command failed, where a caller does something about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CdpCause {
    /// The document (execution context) the command ran in was replaced or
    /// its frame went away.
    DocumentGone,
    /// The CDP session (a frame target's) is gone: attach again.
    SessionGone,
    /// The connection to the browser ended (the reply channel was dropped).
    ConnectionEnded,
}

impl CdpCause {
    /// The error's detail that carries the cause.
    const KEY: &str = "cdpCause";

    fn of(text: &str) -> Option<Self> {
        // Lower case; the first that the text holds.
        const WORDING: &[(&str, CdpCause)] = &[
            ("inspected target navigated or closed", CdpCause::DocumentGone),
            ("execution context", CdpCause::DocumentGone),
            ("cannot find context with specified id", CdpCause::DocumentGone),
            ("session with given id", CdpCause::SessionGone),
            ("oneshot canceled", CdpCause::ConnectionEnded),
            ("receiver is gone", CdpCause::ConnectionEnded),
        ];
        let text = text.to_ascii_lowercase();
        WORDING.iter().find(|(w, _)| text.contains(w)).map(|(_, c)| *c)
    }

    fn as_str(self) -> &'static str {
        match self {
            Self::DocumentGone => "document-gone",
            Self::SessionGone => "session-gone",
            Self::ConnectionEnded => "connection-ended",
        }
    }

    /// Whether `e` failed for this cause.
    fn of_error(self, e: &ToolError) -> bool {
        match self {
            Self::DocumentGone => e.code == Code::DocumentLoading,
            _ => e.details.get(Self::KEY).and_then(Value::as_str) == Some(self.as_str()),
        }
    }
}

async fn bounded<T>(
    ms: u32,
    what: &str,
    fut: impl std::future::Future<Output = Result<T, ToolError>>,
) -> Result<T, ToolError> {
    let ms = if ms == 0 { 30_000 } else { ms };
    match tokio::time::timeout(Duration::from_millis(u64::from(ms)), fut).await {
        Ok(r) => r,
        Err(_) => Err(ToolError::timeout(format!("{what} did not finish within {ms} ms"))
            .with("timeoutMs", ms)),
    }
}

/// Load `url` in `page` and wait for its load event. chromiumoxide's `goto`
/// follows the main frame's lifecycle events and says "Request timed out"
/// when its request timeout passes first: then the page itself says whether a
/// document whose navigation began after this call has loaded (the time
/// origin of the tab's document, its ready state), and a failure says what
/// the tab shows. The error's text is chromiumoxide's, with that added.
async fn goto(page: &Page, url: &str) -> Result<(), String> {
    let asked = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
    let e = match page.goto(url).await {
        Ok(_) => return Ok(()),
        Err(e @ chromiumoxide::error::CdpError::Timeout) => e,
        Err(e) => return Err(e.to_string()),
    };
    let shows = "({state: document.readyState, began: performance.timeOrigin, url: location.href})";
    let seen = tokio::time::timeout(Duration::from_secs(5), page.evaluate(shows)).await;
    let Ok(Ok(seen)) = seen else {
        return Err(format!("{e} (the tab did not say what it shows)"));
    };
    let seen: Value = seen.into_value().unwrap_or_default();
    let state = seen["state"].as_str().unwrap_or("?");
    let shown = seen["url"].as_str().unwrap_or("?");
    // The time origin is coarsened to a fraction of a millisecond.
    let began_after = seen["began"].as_f64().is_some_and(|t| t + 1.0 >= asked);
    if began_after && state == "complete" {
        tracing::warn!(
            url,
            shown,
            "a navigation's load was missed by its watcher; the page says it loaded"
        );
        return Ok(());
    }
    let which = if began_after {
        "a document loaded since the call"
    } else {
        "the document from before the call"
    };
    Err(format!("{e} (the tab shows {shown}, {which}, ready state {state})"))
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
                closing: Default::default(),
                counters: Default::default(),
            }),
        }
    }

    fn tell(&self, level: ochre_protocol::Level, message: String) {
        if let Some(notices) = self.inner.notices.get() {
            notices(level, message);
        }
    }

    /// How many times a browser was launched or attached.
    pub fn launches(&self) -> u64 {
        self.inner.launches.load(Ordering::Relaxed)
    }

    fn find_executable(&self) -> Result<PathBuf, ToolError> {
        if let Some(p) = &self.inner.options.chrome_path {
            if p.exists() {
                return Ok(p.clone());
            }
            return Err(ToolError::browser_unavailable(format!(
                "--chrome-path {} does not exist; {INSTALL_HINT}",
                p.display()
            )));
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        for name in CANDIDATES {
            for dir in std::env::split_paths(&path) {
                let candidate = dir.join(name);
                if candidate.is_file() {
                    return Ok(candidate);
                }
            }
        }
        Err(ToolError::browser_unavailable(format!(
            "no Chromium or Chrome found on PATH; {INSTALL_HINT}"
        )))
    }

    /// Launch a managed Chromium (a temporary profile unless one is given).
    async fn launch(
        &self,
    ) -> Result<(Browser, chromiumoxide::Handler, Option<ProfileDir>), ToolError> {
        let opts = &self.inner.options;
        let exe = self.find_executable()?;
        let (dir, profile) = match &opts.user_data_dir {
            Some(d) => (d.clone(), None),
            None => {
                let d = std::env::temp_dir().join(format!(
                    "{TEMP_PROFILE_PREFIX}{}-{}",
                    std::process::id(),
                    self.launches()
                ));
                let _ = std::fs::remove_dir_all(&d);
                (d.clone(), Some(ProfileDir(d)))
            }
        };
        let mut builder = chromiumoxide::BrowserConfig::builder()
            .chrome_executable(&exe)
            .no_sandbox()
            .user_data_dir(&dir)
            .window_size(1280, 720)
            .viewport(chromiumoxide::handler::viewport::Viewport {
                width: 1280,
                height: 720,
                ..Default::default()
            })
            .respect_https_errors()
            .launch_timeout(Duration::from_secs(30))
            .request_timeout(Duration::from_secs(30))
            .args([
                "disable-gpu",
                "disable-quic",
                "no-first-run",
                "disable-background-networking",
                "disable-component-update",
                "disable-sync",
                "disable-default-apps",
                // Leaving a page must not keep it alive in the back/forward cache
                // (that moves the next document to a fresh renderer, ~300 ms
                // here), and paint holding only delays pages: off, as other
                // automation servers do.
                "disable-back-forward-cache",
                // A tab in the background (its popup took the focus, an agent
                // works in several tabs) must run its timers and rendering as
                // fast as the front one.
                "disable-background-timer-throttling",
                "disable-backgrounding-occluded-windows",
                "disable-renderer-backgrounding",
                "disable-features=TranslateUI,BackForwardCache,PaintHolding,AvoidUnnecessaryBeforeUnloadCheckSync",
            ]);
        if opts.headed {
            builder = builder.with_head();
        }
        // The shared tabs' context (the browser's default one) is policed
        // through the shared proxy; sessions' contexts get their own.
        if let Some(proxy) = self.policy_proxy(&None).await? {
            builder = builder.args([
                format!("proxy-server={}", proxy.server()),
                "proxy-bypass-list=<-loopback>".to_owned(),
            ]);
            netpolicy::webrtc_through_proxy(&dir).map_err(|e| {
                ToolError::browser_unavailable(format!(
                    "cannot keep WebRTC to the policed proxy in the profile {}: {e}",
                    dir.display()
                ))
            })?;
        }
        if let Some(launcher) = &opts.launcher {
            builder = builder.chrome_executable(launcher).envs(lifeline::launcher_env(&exe));
        }
        let config = builder
            .build()
            .map_err(|e| ToolError::browser_unavailable(format!("browser config: {e}")))?;
        let (mut b, h) = Browser::launch(config).await.map_err(|e| {
            let locked = opts.user_data_dir.is_some()
                && dir.join("SingletonLock").exists();
            let why = if locked {
                format!(
                    "the profile {} is locked by another Chrome; close it or use another --user-data-dir",
                    dir.display()
                )
            } else {
                format!("{e}")
            };
            ToolError::browser_unavailable(format!("cannot launch {}: {why}; {INSTALL_HINT}", exe.display()),
            )
        })?;
        if let Some(run_dir) = &opts.run_dir {
            let pid = b.get_mut_child().and_then(|c| c.as_mut_inner().id());
            lifeline::write_record(run_dir, pid, Some(&dir), profile.is_some());
        }
        Ok((b, h, profile))
    }

    /// Start (launch or attach) browser `i` of the pool.
    async fn start(&self, i: usize) -> Result<Session, ToolError> {
        let slot = self.slot(i);
        let alive = Arc::new(AtomicBool::new(true));
        let (browser, mut handler, profile, grid) = match &slot.endpoint {
            Some(endpoint) => {
                let (b, h, grid) = attach(endpoint, &alive).await?;
                (b, h, None, grid)
            }
            None => {
                let (b, h, profile) = self.launch().await?;
                (b, h, profile, None)
            }
        };
        let flag = alive.clone();
        let gone = slot.gone.clone();
        let closing = self.inner.closing.clone();
        let inner = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            // Unparsable events (CDP drift) are skipped inside the handler; an error
            // that reaches us is the connection failing, after which the stream never
            // recovers: stop, so that the next call relaunches and in-flight commands
            // fail at once instead of hanging.
            while let Some(ev) = handler.next().await {
                if let Err(e) = ev {
                    tracing::warn!(error = %e, "browser connection error");
                    break;
                }
            }
            // Dead before the handler goes: dropping it fails the commands in
            // flight, and a call that sees that must find the session dead.
            flag.store(false, Ordering::Relaxed);
            drop(handler);
            gone.notify_waiters();
            if closing.load(Ordering::Relaxed) {
                tracing::debug!("the browser connection ended");
            } else {
                tracing::warn!("the browser connection ended");
                if let Some(inner) = inner.upgrade() {
                    pool::mark_down(
                        &inner,
                        i,
                        "its connection ended (it crashed, was killed or closed it)",
                    );
                }
            }
        });
        self.inner.launches.fetch_add(1, Ordering::Relaxed);
        *lock(&slot.live) = Some(pool::Live {
            alive: alive.clone(),
            profile: profile.as_ref().map(|p| p.0.clone()),
        });
        self.watch_browser(i, &browser).await;
        Ok(Session {
            slot: i,
            browser: Arc::new(browser),
            alive,
            current: Default::default(),
            owner_contexts: Default::default(),
            _profile: profile,
            grid,
            frames: None,
            front: None,
        })
    }

    /// The caller's live session (see [`Self::home`]), (re)starting it when
    /// needed; in a pool, an endpoint that cannot be reached is marked down and
    /// the caller placed on another.
    async fn session(&self) -> Result<tokio::sync::MutexGuard<'_, Option<Session>>, ToolError> {
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
    async fn session_in(
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
    async fn session_of_tab(
        &self,
        n: TabId,
    ) -> Result<tokio::sync::MutexGuard<'_, Option<Session>>, ToolError> {
        self.session_in(self.slot_of_tab(n)).await
    }

    /// Browser `i`'s live session, (re)starting it when needed. `mine`: the
    /// caller's own browser (a relaunch is told to it).
    async fn session_at(
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
    async fn home_guard(&self) -> tokio::sync::MutexGuard<'_, Option<Session>> {
        self.slot(self.home().unwrap_or(0)).session.lock().await
    }

    /// Drop the crawl fetcher tabs kept in browser `i`.
    fn forget_fetchers(&self, i: usize) {
        self.inner.owners.each(|_, s| s.fetchers.retain(|(_, slot), _| *slot != i));
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
        let url = page.url().await.ok().flatten().unwrap_or_default();
        let title = match from {
            TitleFrom::Page if !self.any_dialog_open() => {
                match tokio::time::timeout(Duration::from_secs(1), page.get_title()).await {
                    Ok(Ok(Some(t))) => t,
                    _ => self.target_title(n, page).await,
                }
            }
            TitleFrom::Load => {
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
                match read {
                    Some((wall, title)) => {
                        self.inner.tabs.with(n, |t| t.wall_at_load = Some(wall));
                        title
                    }
                    None => self.target_title(n, page).await,
                }
            }
            _ => self.target_title(n, page).await,
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

    /// A tab's title as the browser knows it (no script runs in the page).
    async fn target_title(&self, n: TabId, page: &Page) -> String {
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
                goto(&page, url).await.map_err(|e| {
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
                page.execute(NavigateToHistoryEntryParams::new(entry.id))
                    .await
                    .map_err(|e| cdp_error("cannot navigate the history", e))?;
                // A history step may be served from the back/forward cache without a
                // fresh load event: wait until the tab shows the entry, fully loaded.
                loop {
                    let url = page.url().await.ok().flatten().unwrap_or_default();
                    if url == want && self.loaded(&page).await {
                        return Ok(());
                    }
                    tokio::time::sleep(Duration::from_millis(15)).await;
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
                page.reload().await.map_err(|e| {
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
            bounded(timeout_ms, "script", self.eval(&page, expression, true)).await
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

    /// The owner of tab `n` (`None`: a shared tab).
    fn owner_of(&self, n: TabId) -> Owner {
        self.inner.tabs.owner_of(n)
    }

    /// Tab `n`'s page if `who` may see it.
    fn visible_page(&self, n: TabId, who: &Owner) -> Option<Page> {
        self.inner.tabs.page_for(n, who)
    }

    /// Register `page` as a tab of `who` in session `s`'s browser; its number.
    fn add_tab(&self, s: &mut Session, page: Page, who: &Owner) -> TabId {
        let n = TabId(self.inner.next_tab.fetch_add(1, Ordering::Relaxed));
        self.inner.tabs.add(n, page, s.slot, who);
        s.front = None;
        n
    }

    /// Drop tab `n` and everything known of it (see [`Self::forget_tab`]);
    /// its owner's current tab in session `s` moves to the owner's newest.
    fn drop_tab(&self, s: &mut Session, n: TabId) -> Option<tabs::Tab> {
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
    async fn open_tab(
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
    async fn page_for(
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

    /// `who`'s browser context in browser `slot` (still `browser`), made if it
    /// has none; a context made here takes its session's login (`seed`).
    async fn owner_context(
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

    /// Register `page` as a tab of `who` in browser `slot` (still `browser`).
    async fn register(
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

    /// The session, if it still runs `browser` (not relaunched meanwhile).
    fn same_browser<'g>(
        &self,
        guard: &'g mut tokio::sync::MutexGuard<'_, Option<Session>>,
        browser: &Arc<Browser>,
    ) -> Result<&'g mut Session, ToolError> {
        guard.as_mut().filter(|s| Arc::ptr_eq(&s.browser, browser)).ok_or_else(|| {
            ToolError::browser_unavailable("the browser went away while the tab was opening")
        })
    }

    /// Browser `slot`'s CDP connection, if it runs (to use without the lock).
    async fn browser_of(&self, slot: usize) -> Option<Arc<Browser>> {
        self.slot(slot).session.lock().await.as_ref().map(|s| s.browser.clone())
    }

    /// The lock that makes an owner's implicit first tab open once.
    fn opening(&self, who: &Owner) -> Arc<tokio::sync::Mutex<()>> {
        self.inner.owners.write(who, |s| s.opening.get_or_insert_default().clone())
    }

    /// The browser's executable (managed mode; `None` when attaching to
    /// endpoints), or why there is none.
    pub fn executable(&self) -> Result<Option<PathBuf>, ToolError> {
        if !self.inner.options.endpoints.is_empty() {
            return Ok(None);
        }
        self.find_executable().map(Some)
    }

    /// Start (or reach) the browser and ask its product and version, e.g.
    /// `HeadlessChrome/131.0.6778.85`.
    pub async fn version(&self) -> Result<String, ToolError> {
        let guard = self.session().await?;
        let s = guard.as_ref().ok_or_else(|| ToolError::browser_unavailable("no browser"))?;
        bounded(10_000, "asking the browser's version", async {
            s.browser
                .version()
                .await
                .map(|v| v.product)
                .map_err(|e| cdp_error("cannot ask the browser's version", e))
        })
        .await
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
        }
    }
}

/// A browser out of its `Arc`, once no call holds it any more (each call is
/// bounded, so that comes); `None` if one still does after 15 s.
async fn sole(mut browser: Arc<Browser>) -> Option<Browser> {
    let until = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        match Arc::try_unwrap(browser) {
            Ok(b) => return Some(b),
            Err(shared) if std::time::Instant::now() < until => {
                browser = shared;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(_) => {
                tracing::warn!("a call still holds the old browser after 15 s; leaving it to drop");
                return None;
            }
        }
    }
}

/// A CDP command by name, for the `cdp` interface.
#[derive(Debug, Clone)]
struct RawCommand {
    method: chromiumoxide::types::MethodId,
    params: Value,
}

impl serde::Serialize for RawCommand {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.params.serialize(s)
    }
}

impl chromiumoxide::Method for RawCommand {
    fn identifier(&self) -> chromiumoxide::types::MethodId {
        self.method.clone()
    }
}

impl chromiumoxide::Command for RawCommand {
    type Response = Value;
}

/// Send a CDP command by name to a page (bounded by 30 s).
pub(crate) async fn raw_command(
    page: &Page,
    method: &str,
    params: Value,
) -> Result<Value, ToolError> {
    let cmd = RawCommand { method: method.to_owned().into(), params };
    bounded(30_000, method, async {
        page.execute(cmd).await.map(|r| r.result.clone()).map_err(|e| cdp_error(method, e))
    })
    .await
}

/// Attach to a running browser (`--cdp-endpoint`): its websocket found (bounded;
/// a Selenium Grid starts a session for it), then the connection opened
/// (bounded: a grid may queue it).
async fn attach(
    endpoint: &Endpoint,
    alive: &Arc<AtomicBool>,
) -> Result<(Browser, chromiumoxide::Handler, Option<grid::GridSession>), ToolError> {
    const LIMIT: Duration = Duration::from_secs(15);
    let fail = |why: String| {
        // A grid at its limit (browserless past CONCURRENT + QUEUED) says 429.
        let full = if why.contains("429") {
            " (the endpoint has all the sessions it takes: it is full)"
        } else {
            ""
        };
        ToolError::browser_unavailable(format!(
            "cannot attach to the browser at {}: {}{full}",
            endpoint.redacted(),
            endpoint.scrub(&why)
        ))
    };
    let found = async {
        if endpoint.is_grid() {
            grid::new_session(endpoint, alive.clone()).await.map(|(ws, g)| (ws, Some(g)))
        } else {
            pool::websocket_url(endpoint).await.map(|ws| (ws, None))
        }
    };
    let (ws, grid) = tokio::time::timeout(LIMIT, found)
        .await
        .map_err(|_| fail("it did not answer within 15 s".into()))?
        .map_err(fail)?;
    let config =
        chromiumoxide::handler::HandlerConfig { ignore_https_errors: false, ..Default::default() };
    let connected = tokio::time::timeout(LIMIT, Browser::connect_with_config(ws, config))
        .await
        .map_err(|_| fail("the connection did not open within 15 s (queued?)".into()))
        .and_then(|r| r.map_err(|e| fail(e.to_string())));
    match connected {
        Ok((b, h)) => Ok((b, h, grid)),
        Err(e) => {
            if let Some(g) = grid {
                g.end().await;
            }
            Err(e)
        }
    }
}
