//! Cross-site iframes (out-of-process frames, OOPIFs): read and acted on like the
//! rest of the page.
//!
//! Chromium runs a frame from another site in its own renderer process, as its
//! own CDP target; the page's JavaScript cannot look inside it, so the page
//! library cannot either. The host reaches it directly:
//!
//! - **A connection of our own.** chromiumoxide attaches to frame targets but
//!   offers no way to send a command to such a session, so the host opens a second
//!   CDP connection to the same browser ([`FrameLink`]) and attaches to frame
//!   targets there (`Target.attachToTarget`, flattened sessions).
//! - **Discovery.** `Target.getTargets` lists the `iframe` targets; one whose
//!   `parentFrameId` is a frame of the tab's page (`Page.getFrameTree`) is a child
//!   of it, and so on down (frames inside frames). The `<iframe>` element that
//!   holds each one (`DOM.getFrameOwner`) is marked for the page library, which
//!   writes a placeholder line there in a snapshot.
//! - **Operations.** The page library runs in each frame's own document. Refs
//!   share the tab's numbering, and the registry remembers which frame gave out
//!   which numbers, so an operation on a ref runs in that ref's frame; a frame
//!   that navigated has a new document token, and its old refs are `STALE_REF`.
//!   Points a frame returns are moved by where its `<iframe>` sits on screen, so
//!   trusted input (sent to the tab, which routes it into the frame) lands there.
//!   Snapshots stitch each frame's lines under its `iframe` line; `find` and
//!   `query_dom` merge matches from every frame.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::target::SessionId;
use chromiumoxide::types::{CallId, CdpJsonEventMessage, Message};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::TabId;
use super::netcap::TabWatch;
use super::{BrowserManager, bounded, cdp_error, lock, raw_command};
use ochre_protocol::page_ops::{Found, Queried, QueryMatch};
use ochre_protocol::{Code, ToolError};

/// Frames inside frames are followed this deep.
const MAX_DEPTH: usize = 4;
/// At most this many cross-site frames of one tab are read.
const MAX_FRAMES: usize = 32;
/// Bound on one command over the frame connection.
const CALL_MS: u32 = 10_000;
/// Marks the line of an `<iframe>` whose document the host reads: the page
/// library writes `\u{1}<frame target id>\u{1}` there.
pub(super) const MARK: char = '\u{1}';

/// Sets the frame's key on its `<iframe>` element (read by the page library) and
/// answers where the frame's content box starts in its parent's viewport.
const OWNER_FN: &str = "function (k) {
  if (k) Object.defineProperty(this, '__ochre_frame', { value: k, configurable: true, enumerable: false });
  const r = this.getBoundingClientRect(), s = getComputedStyle(this);
  return [r.left + this.clientLeft + (parseFloat(s.paddingLeft) || 0), r.top + this.clientTop + (parseFloat(s.paddingTop) || 0)];
}";

type Reply = oneshot::Sender<Result<Value, String>>;

struct Call {
    method: String,
    session: Option<String>,
    params: Value,
    reply: Reply,
}

/// A CDP connection of the host's own, for frame targets; while a tab's
/// network is captured, for the network's reports on its page that
/// chromiumoxide's types cannot read (see [`BrowserManager::wire_capture`]);
/// for ochre's own navigations (see `BrowserManager::load`); and to hold each
/// new page at its start until ochre has set it up (see [`Held`]).
pub(crate) struct FrameLink {
    tx: mpsc::UnboundedSender<Call>,
    /// Frame target id -> our session on it; an entry goes when the browser
    /// says the session ended (its frame or tab closed).
    sessions: Arc<std::sync::Mutex<HashMap<String, String>>>,
    /// The captures the network's `…ExtraInfo` reports go to.
    wired: Wired,
    /// Events awaited: method -> who waits for its params. (By method
    /// alone: the events chromiumoxide's connection hands over do not say
    /// their session; `send_awaiting` waits for one at a time.)
    awaited: Awaited,
    /// Held while an event is awaited.
    awaiting: tokio::sync::Mutex<()>,
    /// The pages another page opened, held before their first request
    /// until ochre has set them up (see [`Held`]).
    held: Arc<std::sync::Mutex<Held>>,
}

/// How long a page another page opened is held at its start, at most: ochre
/// lets it go as soon as it has set it up (its network watched and
/// captured, its routes and emulation on: see `adopt`), and its opener's
/// `window.open` returns then. Past this, it goes on regardless.
const HOLD_MAX: std::time::Duration = std::time::Duration::from_secs(3);

/// Pages held at their start: the browser holds each new page (the host's
/// second connection asks it to, `Target.setAutoAttach` with
/// `waitForDebuggerOnStart`), so that what ochre sets on a popup holds from
/// its first request; one no page opened goes on at once.
#[derive(Default)]
struct Held {
    /// Target id -> our session on it, while it waits.
    waiting: HashMap<String, String>,
    /// Targets let go before the browser said they were held (the two come
    /// over two connections): let go as soon as it does. The last few.
    early: std::collections::VecDeque<String>,
    /// Targets let go at [`HOLD_MAX`], before ochre had set them up. The
    /// last few.
    late: std::collections::VecDeque<String>,
    /// Whether the browser holds new pages (it took the hold).
    on: bool,
}

/// How many early and late let-gos are remembered.
const EARLY_KEPT: usize = 64;

/// Remember `target` in `list`, the last [`EARLY_KEPT`].
fn remember(list: &mut std::collections::VecDeque<String>, target: &str) {
    if list.len() >= EARLY_KEPT {
        list.pop_front();
    }
    list.push_back(target.to_owned());
}

/// Let a held target go on: what its session waits for; then, for a page,
/// the session ends (`detach`; a worker detached as it is let go never
/// runs, so its session is kept and ends with it).
fn let_go(conn: &mut chromiumoxide::Connection<CdpJsonEventMessage>, session: &str, detach: bool) {
    let run = conn.submit_command(
        "Runtime.runIfWaitingForDebugger".into(),
        Some(SessionId::new(session)),
        json!({}),
    );
    let done = match detach {
        true => run.and_then(|_| {
            let end = json!({"sessionId": session});
            conn.submit_command("Target.detachFromTarget".into(), None, end)
        }),
        false => run,
    };
    if let Err(e) = done {
        tracing::warn!(error = %e, "cannot let a held target go on");
    }
}

/// Ask the connection's loop to let the page held on `session` go.
fn send_let_go(tx: &mpsc::UnboundedSender<Call>, session: String) {
    let (reply, _) = oneshot::channel();
    let call =
        Call { method: LET_GO.to_owned(), session: Some(session), params: Value::Null, reply };
    let _ = tx.send(call);
}

type Wired = Arc<std::sync::Mutex<Vec<std::sync::Weak<TabWatch>>>>;
type Awaited = Arc<std::sync::Mutex<Vec<(String, oneshot::Sender<Value>)>>>;

impl std::fmt::Debug for FrameLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameLink").finish_non_exhaustive()
    }
}

impl FrameLink {
    pub(super) async fn connect(ws_url: &str) -> Result<Arc<Self>, ToolError> {
        let mut conn = chromiumoxide::Connection::<CdpJsonEventMessage>::connect(ws_url)
            .await
            .map_err(|e| cdp_error("cannot open a CDP connection for frames", e))?;
        crate::nodelay::no_delay_to(ws_url).await;
        let (tx, mut rx) = mpsc::unbounded_channel::<Call>();
        let sessions: Arc<std::sync::Mutex<HashMap<String, String>>> = Default::default();
        let ours = sessions.clone();
        let wired: Wired = Default::default();
        let to = wired.clone();
        let awaited: Awaited = Default::default();
        let waiting = awaited.clone();
        let held: Arc<std::sync::Mutex<Held>> = Default::default();
        let holds = held.clone();
        let again = tx.clone();
        tokio::spawn(async move {
            let mut pending: HashMap<CallId, Reply> = HashMap::new();
            let mut errors = 0u32;
            loop {
                tokio::select! {
                    call = rx.recv() => {
                        let Some(c) = call else { break };
                        if c.method == LET_GO {
                            if let Some(session) = c.session {
                                let_go(&mut conn, &session, true);
                            }
                            let _ = c.reply.send(Ok(Value::Null));
                            continue;
                        }
                        match conn.submit_command(c.method.into(), c.session.map(SessionId::new), c.params) {
                            Ok(id) => { pending.insert(id, c.reply); }
                            Err(e) => { let _ = c.reply.send(Err(e.to_string())); }
                        }
                    }
                    msg = conn.next() => match msg {
                        Some(Ok(Message::Response(r))) => {
                            errors = 0;
                            if let Some(reply) = pending.remove(&r.id) {
                                let _ = reply.send(match r.error {
                                    Some(e) => Err(e.message),
                                    None => Ok(r.result.unwrap_or(Value::Null)),
                                });
                            }
                        }
                        Some(Ok(Message::Event(ev))) => {
                            errors = 0;
                            // A frame (or its tab) closed: its session is no more.
                            if ev.method == "Target.detachedFromTarget"
                                && let Some(gone) = ev.params["sessionId"].as_str()
                            {
                                lock(&ours).retain(|_, s| s != gone);
                            }
                            if ev.method == "Target.attachedToTarget" && ev.session_id.is_none() {
                                held_or_let_go(&mut conn, &holds, &again, &ev.params);
                            }
                            {
                                let mut w = lock(&waiting);
                                if let Some(i) = w.iter().position(|(m, _)| *m == ev.method) {
                                    let (_, tx) = w.swap_remove(i);
                                    let _ = tx.send(ev.params.clone());
                                }
                            }
                            if ev.method.starts_with("Network.") {
                                let watches: Vec<Arc<TabWatch>> =
                                    lock(&to).iter().filter_map(std::sync::Weak::upgrade).collect();
                                for w in watches {
                                    w.cap_wire(&ev.method, &ev.params);
                                }
                            }
                        }
                        Some(Err(e)) => {
                            // A message that does not parse is skipped; a broken
                            // socket keeps failing and ends the link.
                            tracing::debug!(error = %e, "frame connection");
                            errors += 1;
                            if errors > 20 { break; }
                        }
                        None => break,
                    }
                }
            }
            tracing::debug!("frame connection closed");
        });
        let link =
            Arc::new(Self { tx, sessions, wired, awaited, awaiting: Default::default(), held });
        // Every page from now on starts held (those open now are not).
        // (Every kind of target: a service worker is held whether or not
        // the filter names it, and must be let go too.)
        let hold = json!({"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true});
        match link.call(None, "Target.setAutoAttach", hold).await {
            Ok(_) => lock(&link.held).on = true,
            Err(e) => {
                tracing::warn!(error = %e.message, "pages another page opens are set up after their first request")
            }
        }
        Ok(link)
    }

    /// Let page `target` go on if it is held at its start (see [`Held`]);
    /// if the browser has not said it is yet, as soon as it does. Whether it
    /// was held until now (false: the browser holds no page, or it went on
    /// at [`HOLD_MAX`]).
    pub(super) fn let_go(&self, target: &str) -> bool {
        let session = {
            let mut h = lock(&self.held);
            match h.waiting.remove(target) {
                Some(s) => s,
                None => {
                    if let Some(i) = h.late.iter().position(|t| t == target) {
                        h.late.remove(i);
                        return false;
                    }
                    if !h.on {
                        return false;
                    }
                    remember(&mut h.early, target);
                    return true;
                }
            }
        };
        send_let_go(&self.tx, session);
        true
    }

    /// Send the network's reports to `w` (once), or no more.
    pub(super) fn wire(&self, w: &Arc<TabWatch>, on: bool) {
        let mut wired = lock(&self.wired);
        wired.retain(|x| x.strong_count() > 0 && !std::ptr::eq(x.as_ptr(), Arc::as_ptr(w)));
        if on {
            wired.push(Arc::downgrade(w));
        }
    }

    pub(super) fn is_open(&self) -> bool {
        !self.tx.is_closed()
    }

    /// How many frame sessions are attached.
    pub(super) fn attached(&self) -> usize {
        lock(&self.sessions).len()
    }

    /// Send one command (to a session, or to the browser) and wait for its answer.
    async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, ToolError> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Call {
                method: method.to_owned(),
                session: session.map(str::to_owned),
                params,
                reply,
            })
            .map_err(|_| link_closed())?;
        bounded(CALL_MS, method, async {
            rx.await.map_err(|_| link_closed())?.map_err(|m| cdp_error(method, m))
        })
        .await
    }

    /// Our session on a frame target, attached on first use.
    async fn session(&self, target: &str) -> Result<String, ToolError> {
        if let Some(s) = lock(&self.sessions).get(target) {
            return Ok(s.clone());
        }
        let r = self
            .call(None, "Target.attachToTarget", json!({"targetId": target, "flatten": true}))
            .await
            .map_err(|e| frame_gone(&e))?;
        let s = r["sessionId"]
            .as_str()
            .ok_or_else(|| ToolError::browser_error("attach gave no session"))?
            .to_owned();
        lock(&self.sessions).insert(target.to_owned(), s.clone());
        Ok(s)
    }

    /// Send a command to a frame; a session that went away (the frame swapped
    /// processes) is attached again once.
    pub(super) async fn send(
        &self,
        target: &str,
        method: &str,
        params: Value,
    ) -> Result<Value, ToolError> {
        for attempt in 0..2 {
            let s = self.session(target).await?;
            match self.call(Some(&s), method, params.clone()).await {
                Err(e) if attempt == 0 && super::CdpCause::SessionGone.of_error(&e) => {
                    lock(&self.sessions).remove(target);
                }
                other => return other,
            }
        }
        unreachable!("the loop returns on its second pass")
    }

    /// Send a command to a target, then wait (`wait_ms` at most) for the
    /// event `event` (one such wait at a time on the connection); the
    /// event's params.
    pub(super) async fn send_awaiting(
        &self,
        target: &str,
        method: &str,
        params: Value,
        event: &str,
        wait_ms: u32,
    ) -> Result<Value, ToolError> {
        let _one = self.awaiting.lock().await;
        let s = self.session(target).await?;
        let (tx, rx) = oneshot::channel();
        {
            let mut w = lock(&self.awaited);
            w.clear();
            w.push((event.to_owned(), tx));
        }
        self.call(Some(&s), method, params).await?;
        bounded(wait_ms, event, async { rx.await.map_err(|_| link_closed()) }).await
    }
}

/// The call that lets a held page go (see [`FrameLink::let_go`]): no CDP
/// method, done by the connection's loop.
const LET_GO: &str = "ochre.letGo";

/// A page the browser attached to the host's second connection: one held at
/// its start that a page opened waits (for `adopt`, at most [`HOLD_MAX`]);
/// one no page opened, or one let go already, goes on at once.
fn held_or_let_go(
    conn: &mut chromiumoxide::Connection<CdpJsonEventMessage>,
    holds: &Arc<std::sync::Mutex<Held>>,
    again: &mpsc::UnboundedSender<Call>,
    params: &Value,
) {
    let Some(session) = params["sessionId"].as_str() else { return };
    let info = &params["targetInfo"];
    let target = info["targetId"].as_str().unwrap_or_default().to_owned();
    let page = info["type"] == "page";
    let popup = page && info["openerId"].as_str().is_some_and(|o| !o.is_empty());
    // A page opened with no way back to its opener (`noopener`, a link's
    // `target=_blank`) starts in a process of its own that the browser makes
    // only once it goes on: nothing sent to it is answered before, so it
    // cannot be set up while held. It goes on at once (set up late).
    let opened = popup && info["canAccessOpener"] == true;
    // (Not held: a page open before the hold was asked for, which keeps
    // its session, or our own attach of a page, whose session we use.)
    if params["waitingForDebugger"] != true {
        return;
    }
    {
        let mut h = lock(holds);
        let early = h.early.iter().position(|t| *t == target);
        if let Some(i) = early {
            h.early.remove(i);
        }
        if opened && early.is_none() {
            h.waiting.insert(target.clone(), session.to_owned());
            let (holds, again) = (holds.clone(), again.clone());
            tokio::spawn(async move {
                tokio::time::sleep(HOLD_MAX).await;
                let left = {
                    let mut h = lock(&holds);
                    let left = h.waiting.remove(&target);
                    if left.is_some() {
                        remember(&mut h.late, &target);
                    }
                    left
                };
                if let Some(session) = left {
                    tracing::warn!(page = %target, "a page another page opened was not set up in time; it goes on");
                    send_let_go(&again, session);
                }
            });
            return;
        }
        if popup && early.is_none() {
            remember(&mut h.late, &target);
        }
    }
    let_go(conn, session, page);
}

/// The host's own connection to the browser ended: the browser's too, but
/// for a moment (see `CdpCause::ConnectionEnded`).
fn link_closed() -> ToolError {
    super::with_cdp_cause(
        ToolError::browser_error("the host's second connection to the browser is closed"),
        &"the host's second connection to the browser is closed",
    )
}

fn frame_gone(e: &ToolError) -> ToolError {
    ToolError::stale_ref(format!(
        "the frame is gone (it was removed or navigated away); call read_page again ({})",
        e.message
    ))
}

/// Where a page operation runs: the tab's own document or a cross-site frame.
#[derive(Clone)]
pub(super) enum Doc {
    Main(Page),
    /// A cross-site frame: its target id, and the browser of the pool its tab is in.
    Frame(String, usize),
}

/// One cross-site frame of a tab: its target id and the frame that holds it
/// (`None`: the tab's page).
#[derive(Debug, Clone)]
pub(super) struct FrameNode {
    pub id: String,
    pub parent: Option<String>,
}

fn frame_ids(tree: &Value, out: &mut HashSet<String>) {
    if let Some(id) = tree["frame"]["id"].as_str() {
        out.insert(id.to_owned());
    }
    if let Some(kids) = tree["childFrames"].as_array() {
        for k in kids {
            frame_ids(k, out);
        }
    }
}

impl BrowserManager {
    /// Send a CDP command to a document's session.
    pub(super) async fn doc_send(
        &self,
        doc: &Doc,
        method: &str,
        params: Value,
    ) -> Result<Value, ToolError> {
        match doc {
            Doc::Main(page) => raw_command(page, method, params).await,
            Doc::Frame(id, slot) => self.frame_link(*slot).await?.send(id, method, params).await,
        }
    }

    /// Call [`OWNER_FN`] on the `<iframe>` element that holds frame `frame`,
    /// in the document `parent`.
    async fn on_owner(&self, parent: &Doc, frame: &str, key: &str) -> Result<Value, ToolError> {
        let owner = self.doc_send(parent, "DOM.getFrameOwner", json!({"frameId": frame})).await?;
        let node = self
            .doc_send(
                parent,
                "DOM.resolveNode",
                json!({"backendNodeId": owner["backendNodeId"], "objectGroup": "ochre-frames"}),
            )
            .await?;
        let r = self
            .doc_send(
                parent,
                "Runtime.callFunctionOn",
                json!({
                    "objectId": node["object"]["objectId"],
                    "functionDeclaration": OWNER_FN,
                    "arguments": [{"value": key}],
                    "returnByValue": true,
                }),
            )
            .await;
        let _ = self
            .doc_send(parent, "Runtime.releaseObjectGroup", json!({"objectGroup": "ochre-frames"}))
            .await;
        Ok(r?["result"]["value"].clone())
    }

    /// Find the tab's cross-site frames (outermost first), mark the `<iframe>`
    /// element of each for the page library, and remember them. A page without
    /// any costs one round trip.
    pub(super) async fn discover_frames(&self, n: TabId, page: &Page) -> Vec<FrameNode> {
        match self.try_discover(n, page).await {
            Ok(f) => f,
            Err(e) => {
                tracing::debug!(error = %e.message, "no cross-site frames read");
                Vec::new()
            }
        }
    }

    async fn try_discover(&self, n: TabId, page: &Page) -> Result<Vec<FrameNode>, ToolError> {
        let slot = self.slot_of_tab(n);
        let link = self.frame_link(slot).await?;
        let targets = link.call(None, "Target.getTargets", json!({})).await?;
        // Frame target -> the frame it sits in.
        let mut left: Vec<(String, String)> = targets["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["type"] == "iframe")
            .filter_map(|t| {
                Some((t["targetId"].as_str()?.to_owned(), t["parentFrameId"].as_str()?.to_owned()))
            })
            .collect();
        if left.is_empty() {
            return Ok(Vec::new());
        }
        let mut found = Vec::new();
        let mut level: Vec<(Option<String>, Doc)> = vec![(None, Doc::Main(page.clone()))];
        for _ in 0..MAX_DEPTH {
            let mut next = Vec::new();
            for (key, doc) in level {
                let tree = self.doc_send(&doc, "Page.getFrameTree", json!({})).await?;
                let mut local = HashSet::new();
                frame_ids(&tree["frameTree"], &mut local);
                let (mine, rest): (Vec<_>, Vec<_>) =
                    left.into_iter().partition(|(_, p)| local.contains(p));
                left = rest;
                for (id, _) in mine {
                    if found.len() >= MAX_FRAMES {
                        break;
                    }
                    if let Err(e) = self.on_owner(&doc, &id, &id).await {
                        tracing::debug!(frame = %id, error = %e.message, "frame owner not marked");
                        continue;
                    }
                    found.push(FrameNode { id: id.clone(), parent: key.clone() });
                    next.push((Some(id.clone()), Doc::Frame(id, slot)));
                }
            }
            if next.is_empty() || left.is_empty() {
                break;
            }
            level = next;
        }
        self.remember_frames(n, &found);
        Ok(found)
    }

    /// Where frame `frame`'s viewport starts in the tab's viewport.
    pub(super) async fn frame_origin(
        &self,
        n: TabId,
        page: &Page,
        frame: &str,
    ) -> Result<(f64, f64), ToolError> {
        let (mut x, mut y) = (0.0, 0.0);
        let mut cur = frame.to_owned();
        for _ in 0..=MAX_DEPTH {
            let parent = self.frame_parent(n, &cur).ok_or_else(|| {
                ToolError::stale_ref("the frame is no longer on the page; call read_page again")
            })?;
            let doc = match &parent {
                Some(p) => Doc::Frame(p.clone(), self.slot_of_tab(n)),
                None => Doc::Main(page.clone()),
            };
            let v = self.on_owner(&doc, &cur, "").await.map_err(|e| frame_gone(&e))?;
            x += v[0].as_f64().unwrap_or(0.0);
            y += v[1].as_f64().unwrap_or(0.0);
            match parent {
                Some(p) => cur = p,
                None => return Ok((x, y)),
            }
        }
        Err(ToolError::browser_error("frames nest too deep"))
    }
}

impl BrowserManager {
    /// The frame connection of browser `slot` of the pool, opened on first use.
    pub(super) async fn frame_link(&self, slot: usize) -> Result<Arc<FrameLink>, ToolError> {
        let mut guard = self.session_in(slot).await?;
        let session = guard.as_mut().ok_or_else(|| ToolError::browser_unavailable("no browser"))?;
        if let Some(l) = &session.frames
            && l.is_open()
        {
            return Ok(l.clone());
        }
        // The same browser again: a service that starts a browser per
        // connection is asked where this one is.
        let targets: Vec<String> = (self.inner.tabs.pages_in(slot, None).iter())
            .map(|(_, p)| p.target_id().as_ref().to_owned())
            .collect();
        let endpoint = self.slot(slot).endpoint.as_ref();
        let ws = super::pool::same_browser_url(endpoint, session.browser.websocket_address(), &targets)
            .await
            .map_err(|why| {
                let name = endpoint.map(|e| e.redacted()).unwrap_or_default();
                ToolError::browser_unavailable(format!("cannot open a second connection to the browser at {name} for cross-site frames: {why}"),
                )
            })?;
        let l = FrameLink::connect(&ws).await?;
        session.frames = Some(l.clone());
        Ok(l)
    }

    /// Let page `target` of browser `slot` go on if it is held at its start
    /// (see [`FrameLink::let_go`]): whether it was held until now. Without a
    /// second connection, no page is.
    pub(super) async fn let_go(&self, slot: usize, target: &str) -> bool {
        let link = self.slot(slot).session.lock().await.as_ref().and_then(|s| s.frames.clone());
        link.is_some_and(|l| l.let_go(target))
    }

    fn remember_frames(&self, n: TabId, found: &[FrameNode]) {
        self.inner.tabs.with(n, |tab| Self::remember(&mut tab.refs, found));
    }

    /// The frame holding frame `id` of tab `n` (`Some(None)`: the tab's page).
    fn frame_parent(&self, n: TabId, id: &str) -> Option<Option<String>> {
        self.inner.tabs.with(n, |t| t.refs.frames.get(id).cloned()).flatten()
    }

    fn remember(refs: &mut super::tabs::TabRefs, found: &[FrameNode]) {
        for f in found {
            refs.frames.insert(f.id.clone(), f.parent.clone());
        }
        // A frame seen before but gone now is kept while refs were given out in it
        // (or in a frame inside it), so they answer STALE_REF rather than unknown.
        let live: HashSet<String> = found.iter().map(|f| f.id.clone()).collect();
        let mut keep = refs.frames_with_refs();
        let mut next: Vec<String> = keep.iter().cloned().collect();
        while let Some(f) = next.pop() {
            if let Some(Some(parent)) = refs.frames.get(&f)
                && keep.insert(parent.clone())
            {
                next.push(parent.clone());
            }
        }
        refs.frames.retain(|id, _| live.contains(id) || keep.contains(id));
    }

    /// A snapshot of `doc` with the snapshot of every cross-site frame in it
    /// under the frame's `iframe` line (frames in frames too).
    pub(super) async fn snapshot_frames(
        &self,
        n: TabId,
        doc: Doc,
        mut args: Value,
        expect: serde_json::Map<String, Value>,
        timeout_ms: u32,
    ) -> Result<Value, ToolError> {
        let max = args
            .as_object_mut()
            .and_then(|o| o.remove("max_chars"))
            .and_then(|m| m.as_u64())
            .filter(|m| *m > 0);
        let mut v = self.stitched(n, doc, args, expect, timeout_ms, 0).await?;
        if let Some(max) = max {
            let text = v["text"].as_str().unwrap_or_default();
            let total = text.chars().count();
            if total as u64 > max {
                let cut: String = text.chars().take(max as usize).collect();
                v["text"] = json!(cut);
                v["truncated"] = json!(true);
            }
            v["total"] = json!(total);
        }
        Ok(v)
    }

    fn stitched(
        &self,
        n: TabId,
        doc: Doc,
        args: Value,
        expect: serde_json::Map<String, Value>,
        timeout_ms: u32,
        depth: usize,
    ) -> futures::future::BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async move {
            let mut v =
                self.run_in(n, &doc, "snapshot", args.clone(), expect, false, timeout_ms).await?;
            let text = v["text"].as_str().unwrap_or_default().to_owned();
            if !text.contains(MARK) {
                return Ok(v);
            }
            let interactive = args["filter"] == "interactive";
            // Lines of an `ax` frame sit under its `iframe` line; text and
            // markdown follow the page's flow.
            let tree = args["mode"].as_str().is_none_or(|m| m == "ax");
            let mut out: Vec<String> = Vec::new();
            for line in text.lines() {
                let Some((indent, bare, id)) = marked(line) else {
                    out.push(line.to_owned());
                    continue;
                };
                if !interactive && !bare.trim().is_empty() {
                    out.push(bare);
                }
                let mut sub = args.clone();
                if let Some(o) = sub.as_object_mut() {
                    o.remove("ref");
                    if let Some(d) = o.get("depth").and_then(Value::as_u64) {
                        if d < indent as u64 + 1 {
                            continue;
                        }
                        o.insert("depth".into(), json!(d - indent as u64 - 1));
                    }
                }
                let pad = " ".repeat(if interactive || !tree { 0 } else { indent + 1 });
                if depth >= MAX_DEPTH {
                    continue;
                }
                match self
                    .stitched(
                        n,
                        Doc::Frame(id.to_owned(), self.slot_of_tab(n)),
                        sub,
                        serde_json::Map::new(),
                        timeout_ms,
                        depth + 1,
                    )
                    .await
                {
                    Ok(c) => {
                        for l in c["text"].as_str().unwrap_or_default().lines() {
                            out.push(format!("{pad}{l}"));
                        }
                    }
                    Err(e) if !interactive => {
                        out.push(format!("{pad}(this frame could not be read: {})", e.message));
                    }
                    Err(_) => {}
                }
            }
            v["text"] = json!(out.join("\n"));
            Ok(v)
        })
    }

    /// `find`, `query` or `resolve_query` over the tab's page and its frames.
    pub(super) async fn wide_op(
        &self,
        n: TabId,
        docs: &[Doc],
        op: &str,
        args: Value,
        timeout_ms: u32,
    ) -> Result<Value, ToolError> {
        let find_op = op != "query";
        let cap = if find_op { 20 } else { 200 };
        let limit = match op {
            "resolve_query" => 1,
            _ => args["limit"].as_u64().filter(|l| *l > 0).unwrap_or(20).min(cap) as usize,
        };
        let mut a = args.clone();
        if find_op {
            a = json!({"query": args["query"], "limit": limit, "scores": true});
        }
        // Each document's answer read as its type: find's matches with their
        // refs (scored), query's elements.
        let mut found: Vec<(f64, String, crate::RefId)> = Vec::new();
        let mut queried: Vec<QueryMatch> = Vec::new();
        let (mut total, mut more) = (0u64, false);
        for (i, doc) in docs.iter().enumerate() {
            let op = if find_op { "find" } else { "query" };
            let v = match self
                .run_in(n, doc, op, a.clone(), serde_json::Map::new(), false, timeout_ms)
                .await
            {
                Ok(v) => v,
                Err(e) if i == 0 => return Err(e),
                Err(e) => {
                    tracing::debug!(error = %e.message, "a frame was not searched");
                    continue;
                }
            };
            let shape = |e: serde_json::Error| {
                ToolError::new(Code::Internal, format!("the page's {op} answer: {e}"))
            };
            if find_op {
                let f: Found = serde_json::from_value(v).map_err(shape)?;
                total += f.total;
                let scores = f.scores.unwrap_or_default();
                for (j, (line, r)) in f.matches.into_iter().zip(f.refs).enumerate() {
                    found.push((scores.get(j).copied().unwrap_or(0.0), line, r));
                }
            } else {
                let q: Queried = serde_json::from_value(v).map_err(shape)?;
                more |= q.more;
                queried.extend(q.matches);
            }
        }
        // Best first; the page's own matches before a frame's on a tie.
        found.sort_by(|x, y| y.0.total_cmp(&x.0));
        found.truncate(limit);
        more |= queried.len() > limit;
        queried.truncate(limit);
        Ok(match op {
            "resolve_query" => {
                let (_, _, r) = found.into_iter().next().ok_or_else(|| {
                    ToolError::element_not_found(format!(
                        "nothing on the page matches {}; try read_page or find with other words",
                        args["query"]
                    ))
                    .with("query", args["query"].clone())
                })?;
                json!({"ref": r})
            }
            "query" => json!({"matches": queried, "more": more}),
            _ => {
                let (lines, refs): (Vec<String>, Vec<crate::RefId>) =
                    found.into_iter().map(|(_, line, r)| (line, r)).unzip();
                json!({"matches": lines, "refs": refs, "total": total})
            }
        })
    }
}

/// Move the points a frame answered (`x`/`y`, also under `source` and `target`)
/// into the tab's viewport.
pub(super) fn shift_points(v: &mut Value, dx: f64, dy: f64) {
    fn one(o: &mut Value, dx: f64, dy: f64) {
        if let Some(x) = o.get("x").and_then(Value::as_f64) {
            o["x"] = json!(x + dx);
        }
        if let Some(y) = o.get("y").and_then(Value::as_f64) {
            o["y"] = json!(y + dy);
        }
    }
    one(v, dx, dy);
    for k in ["source", "target"] {
        if let Some(o) = v.get_mut(k)
            && o.is_object()
        {
            one(o, dx, dy);
        }
    }
}

/// The placeholder the page library wrote for a frame: (indent, line without
/// the mark, frame id).
pub(super) fn marked(line: &str) -> Option<(usize, String, &str)> {
    let start = line.find(MARK)?;
    let end = start + 1 + line[start + 1..].find(MARK)?;
    let id = &line[start + 1..end];
    let bare = format!("{}{}", line[..start].trim_end(), &line[end + MARK.len_utf8()..]);
    let indent = line.len() - line.trim_start_matches(' ').len();
    Some((indent, bare, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks() {
        let (indent, bare, id) = marked("  iframe \"Pay\" \u{1}ABC\u{1}").expect("a mark");
        assert_eq!((indent, bare.as_str(), id), (2, "  iframe \"Pay\"", "ABC"));
        assert!(marked("button \"x\" ax_1").is_none());
    }

    #[test]
    fn points_move() {
        let mut v = json!({"x": 1.0, "y": 2.0, "source": {"x": 3.0, "y": null}, "hits": true});
        shift_points(&mut v, 10.0, 20.0);
        assert_eq!(
            v,
            json!({"x": 11.0, "y": 22.0, "source": {"x": 13.0, "y": null}, "hits": true})
        );
    }
}
