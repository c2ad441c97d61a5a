//! Page operations for the `browser` interface: the page library (`page.js`, one
//! injected function that walks the DOM — far faster and smaller than
//! `Accessibility.getFullAXTree` on big pages), the ref registry, trusted input,
//! file inputs, and per-tab console and network activity.
//!
//! Refs: the page library remembers the elements it gave a number to, per
//! document; the host remembers which numbers were given out in which document
//! (a random token per document) on which tab, and hands the page the expected
//! token of every ref it passes in. A ref of an older document, or of an element
//! since removed, is `STALE_REF`; a number never given out on the tab is
//! `REF_NOT_FOUND`. Numbers keep growing across documents of a tab, so an old ref
//! can never silently name a new element.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestServedFromCache, EventRequestWillBeSent,
    EventResponseReceived, EventWebSocketFrameReceived, EventWebSocketFrameSent, ResourceType,
};
use chromiumoxide::cdp::js_protocol::runtime::{
    EventBindingCalled, EventConsoleApiCalled, EventExceptionThrown,
};
use futures::future::BoxFuture;
use futures::{FutureExt as _, StreamExt};
use serde_json::{Value, json};

use super::frames::Doc;
use super::library::{NOT_INSTALLED, page_call, page_install_and_call, page_library_key};
use super::netcap::{AfterLoad, TabWatch};
use super::ops::Frames;
use super::{BrowserManager, Code, bounded, cdp_error, lock, raw_command};
use super::{RefId, TabId};
use ochre_protocol::ToolError;
use ochre_protocol::page_ops::{
    self, Actionable, AnyOp, Console, Cookies, PageOp, Settle, Settled, Wait,
};
use ochre_protocol::url::UrlPattern;

/// A URL without its fragment: the document it names.
fn page_of(url: &str) -> &str {
    url.split('#').next().unwrap_or_default()
}

/// A document's report after its load (see [`load_report_js`]), if `v` is
/// one.
fn after_load(v: &Value) -> Option<AfterLoad> {
    if v["after"] != json!(true) {
        return None;
    }
    Some(AfterLoad {
        href: v["href"].as_str()?.to_owned(),
        sent: v["sent"].as_u64(),
        still: v["still"].as_u64().unwrap_or(1),
    })
}

/// Whether `url` is of the web (http or https).
fn is_web(url: &str) -> bool {
    url.starts_with("http://") || url.starts_with("https://")
}

/// The `wall` page operation's probe (an expression; see `wall.js`).
const WALL_JS: &str = include_str!("wall.js");

/// The binding through which a document reports its load (random per run,
/// like the page library's name).
fn load_binding() -> String {
    format!("{}_load", page_library_key())
}

/// Installed in every document with [`CLICK_TRACKER`] (after it): at the load
/// event of a top-level document, reports what `wall.js` reads (the
/// login-wall evidence and the title) and the document's URL through the load
/// binding, which it takes and removes from `window` before the page's own
/// scripts run (the page never sees it). The report comes over CDP before the
/// load event itself, so `navigate` answers with it instead of a script round
/// trip into a page that is often busy right after its load.
///
/// Once the work its load set going has run (the load handlers, then the
/// timers of up to 20 ms they set and those set in turn, the animation frames
/// they asked, two at most; 20 rounds and a second after the load at most),
/// a second report
/// (`"after": true`) says how many requests to the web the document has sent
/// by fetch or XHR (the tracker counts them), and how much may still be to
/// come: its scripts still loading (those without a resource timing entry),
/// short timers not run yet, frames asked (see `load` in the tracker). See
/// [`BrowserManager::pay_settle`].
fn load_report_js() -> String {
    let key = json!(load_binding());
    format!(
        r#"(() => {{
  const report = window[{key}];
  delete window[{key}];
  if (!report || window !== window.top) return;
  const stringify = JSON.stringify, later = setTimeout, frame = requestAnimationFrame;
  const now = performance.now.bind(performance), entries = performance.getEntriesByType.bind(performance);
  const clk = window.__ochre_clk, load = clk && clk.load;
  const after = () => {{
    try {{
      const done = new Set();
      for (const e of entries('resource')) done.add(e.name);
      let scripts = 0;
      for (const s of document.scripts) {{
        if (!s.noModule && /^https?:/.test(s.src) && !done.has(s.src)) scripts++;
      }}
      const sent = clk && clk.pending ? clk.pending.all : null;
      const still = load ? load.timers.size + load.frames : 1;
      report(stringify({{ after: true, href: location.href, sent, still: scripts + still }}));
    }} catch (e) {{}}
  }};
  // The page's timers and frames count while its load work is watched; ours do not.
  const mine = (f) => {{
    load.on = false;
    try {{ f(); }} finally {{ load.on = true; }}
  }};
  // Rounds, not time, bound the wait (a slowed page runs late): a timer that
  // sets itself again is followed 20 rounds, and a second at most.
  let start = 0, waited = 0, rounds = 0, done = false;
  const step = () => {{
    if (done) return;
    const young = now() - start < 1000 && rounds++ < 20;
    if (load.frames > 0 && waited < 2 && young) {{
      waited++;
      load.frames = 0;
      mine(() => frame(() => mine(() => later(step, 0))));
    }} else if (load.timers.size > 0 && young) {{
      // After the first of them is due (it runs before this, set earlier).
      let due = Infinity;
      for (const d of load.timers.values()) due = Math.min(due, d);
      mine(() => later(step, Math.max(0, due - now())));
    }} else {{
      load.on = false;
      done = true;
      after();
    }}
  }};
  addEventListener('load', () => {{
    try {{
      const seen = {WALL_JS};
      seen.href = location.href;
      report(stringify(seen));
    }} catch (e) {{}}
    if (!load) return void later(after, 0);
    load.timers.clear();
    load.frames = 0;
    start = now();
    mine(() => later(step, 0));
  }}, true);
  // `pageshow` comes right after the load handlers, in the same task: when
  // they set nothing going that is watched, the report needs no task of
  // its own (the renderer's first frame after the load would delay it).
  addEventListener('pageshow', () => {{
    if (load && start && !done && load.timers.size === 0 && load.frames === 0) step();
  }}, true);
}})()"#
    )
}

/// Installed in every document of a tab before the page's own scripts: remembers
/// (in a WeakSet the page library reads) the elements that get a click-like
/// listener, so that clickable elements without a semantic role get refs, the
/// short texts that change by themselves (its `tick` map) and custom elements'
/// `ElementInternals` (its `internals` map: roles and states given there). The
/// page sees `addEventListener` and `attachInternals` behave and read exactly as
/// before: same name and length, and `Function.prototype.toString` (which it
/// wraps to that end, itself reading as native) gives the native source.
const CLICK_TRACKER: &str = r#"(() => {
  if (window.__ochre_clk) return;
  const seen = new WeakSet();
  Object.defineProperty(window, '__ochre_clk', { value: seen, enumerable: false });
  const kinds = new Set(['click', 'dblclick', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'touchstart']);
  const proto = EventTarget.prototype;
  const add = proto.addEventListener;
  const wrapped = { addEventListener(type, listener) {
    if (this && this.nodeType === 1 && kinds.has(type)) seen.add(this);
    return Reflect.apply(add, this, arguments);
  } }.addEventListener;
  const source = Function.prototype.toString;
  const natives = new WeakMap([[wrapped, add]]);
  const toString = { toString() { return Reflect.apply(source, natives.get(this) || this, []); } }.toString;
  natives.set(toString, source);
  Object.defineProperty(Function.prototype, 'toString', { value: toString, writable: true, configurable: true, enumerable: false });
  Object.defineProperty(proto, 'addEventListener', { value: wrapped, writable: true, configurable: true, enumerable: false });
  // A custom element's ElementInternals (the role and states it gives itself
  // there, which no attribute shows): kept by element for the page library.
  const internals = new WeakMap();
  Object.defineProperty(seen, 'internals', { value: internals });
  const attach = HTMLElement.prototype.attachInternals;
  if (attach) {
    const attaching = { attachInternals() {
      const i = Reflect.apply(attach, this, arguments);
      internals.set(this, i);
      return i;
    } }.attachInternals;
    natives.set(attaching, attach);
    Object.defineProperty(HTMLElement.prototype, 'attachInternals', { value: attaching, writable: true, configurable: true, enumerable: false });
  }
  // Tickers: short texts the page changes by itself, again and again (a clock,
  // a countdown), while no action is watched (`busy`): an action's answer does
  // not count their changes as its own.
  const tick = new WeakMap();
  Object.defineProperty(seen, 'tick', { value: tick });
  // A ticker is a short text: an element of a few children (read before
  // its text, which is the whole subtree's).
  const changed = (r) => {
    const p = r.type === 'characterData' ? r.target.parentElement : r.target;
    return p && p.nodeType === 1 && p.childElementCount <= 8 && (p.textContent || '').length <= 200 ? p : null;
  };
  // Elements the page moves by itself (a style set again and again by script:
  // a banner's animation loop), while no action is watched: an action's
  // settle does not wait for them to stop.
  const moving = new WeakMap();
  Object.defineProperty(seen, 'moving', { value: moving });
  const mo = new MutationObserver((recs) => {
    if (seen.busy) return;
    const now = Date.now();
    for (let i = 0; i < recs.length && i < 50; i++) {
      if (recs[i].type === 'attributes') {
        const t = moving.get(recs[i].target);
        if (!t || now - t.last > 1000) moving.set(recs[i].target, { n: 1, last: now });
        else if (now !== t.last) { t.n++; t.last = now; }
        continue;
      }
      const p = changed(recs[i]);
      if (!p) continue;
      const t = tick.get(p);
      if (!t || now - t.last > 10000) tick.set(p, { n: 1, last: now });
      else if (now - t.last >= 90) { t.n++; t.last = now; }
    }
  });
  // From the end of parsing on: the parser's insertions tick nothing, and on a
  // big document observing them would cost the load tens of milliseconds.
  const observe = () => mo.observe(document, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ['style'] });
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', observe, { once: true });
  else observe();
  // What a setInterval callback changes is a ticker at once (a clock), even
  // while an action is watched.
  const every = window.setInterval;
  const interval = { setInterval(...args) {
    const f = args[0];
    if (typeof f === 'function') args[0] = function () {
      try { return Reflect.apply(f, this, arguments); } finally {
        for (const r of mo.takeRecords().slice(0, 50)) { const p = changed(r); if (p) tick.set(p, { n: 3, last: Date.now() }); }
      }
    };
    return Reflect.apply(every, this, args);
  } }.setInterval;
  natives.set(interval, every);
  Object.defineProperty(interval, 'length', { value: every.length });
  const put = (name, value) => Object.defineProperty(window, name, Object.assign(Object.getOwnPropertyDescriptor(window, name) || { writable: true, configurable: true, enumerable: true }, { value }));
  put('setInterval', interval);
  // Work an action set going: a timer of up to 500 ms (a debounce, a menu's
  // open delay) or an animation frame asked while one of its events was
  // dispatched (`busy`: an action is watched), or by such work in turn, three
  // links deep at most (a loop is not waited for). `pending.n` counts those
  // not run yet (of the action `pending.gen`): the action's answer waits for
  // them (see settle in the page library). A longer timer of the action's is
  // not waited for: `pending.later` holds its delay until it runs, so that
  // the answer can say it is still to come.
  const SHORT = 500;
  const pending = { n: 0, gen: 0, later: new Map(), sent: 0, all: 0 };
  Object.defineProperty(seen, 'pending', { value: pending });
  // How far down such a chain the running code is (0: not in one).
  let depth = 0;
  // The link work asked now would be (0: not the action's).
  const ours = () => (!seen.busy ? 0 : depth > 0 ? depth + 1 : window.event && window.event.isTrusted ? 1 : 0);
  const timers = new Map(), frames = new Map();
  const done = (m, id) => {
    const g = m.get(id);
    if (g === undefined) return;
    m.delete(id);
    if (g === pending.gen) pending.n--;
  };
  const tracking = (m, start, f, link) => {
    const gen = pending.gen;
    let id;
    const run = function () {
      done(m, id);
      const outer = depth;
      depth = link;
      try { return Reflect.apply(f, this, arguments); } finally { depth = outer; }
    };
    id = start(run);
    m.set(id, gen);
    pending.n++;
    return id;
  };
  const later = window.setTimeout, unlater = window.clearTimeout;
  const frame = window.requestAnimationFrame, unframe = window.cancelAnimationFrame;
  // The work a top-level document's load set going, until its report after
  // the load (see the load report): timers of up to 20 ms set and not run
  // yet (id -> when due), and animation frames asked (`on` while it is watched).
  const load = { on: false, timers: new Map(), frames: 0, now: performance.now.bind(performance) };
  Object.defineProperty(seen, 'load', { value: load });
  const timeout = { setTimeout(...args) {
    const f = args[0], link = ours(), ms = Number(args[1]) || 0;
    if (load.on && !seen.busy && typeof f === 'function' && ms <= 20) {
      let id;
      args[0] = function () { load.timers.delete(id); return Reflect.apply(f, this, arguments); };
      id = Reflect.apply(later, this, args);
      load.timers.set(id, load.now() + ms);
      return id;
    }
    if (typeof f !== 'function' || !link || link > 3) return Reflect.apply(later, this, args);
    if (ms > SHORT) {
      const gen = pending.gen;
      let id;
      args[0] = function () {
        pending.later.delete(id);
        return Reflect.apply(f, this, arguments);
      };
      id = Reflect.apply(later, this, args);
      if (pending.later.size < 100) pending.later.set(id, { ms, gen, due: performance.now() + ms });
      return id;
    }
    return tracking(timers, (run) => Reflect.apply(later, this, [run, ...args.slice(1)]), f, link);
  } }.setTimeout;
  const cleared = { clearTimeout(id) {
    pending.later.delete(id);
    load.timers.delete(id);
    done(timers, id);
    return Reflect.apply(unlater, this, arguments);
  } }.clearTimeout;
  const animation = { requestAnimationFrame(f) {
    if (load.on) load.frames++;
    const link = ours();
    if (typeof f !== 'function' || !link || link > 3) return Reflect.apply(frame, this, arguments);
    return tracking(frames, (run) => Reflect.apply(frame, this, [run]), f, link);
  } }.requestAnimationFrame;
  const cancelled = { cancelAnimationFrame(id) { done(frames, id); return Reflect.apply(unframe, this, arguments); } }.cancelAnimationFrame;
  for (const [w, o, name] of [[timeout, later, 'setTimeout'], [cleared, unlater, 'clearTimeout'], [animation, frame, 'requestAnimationFrame'], [cancelled, unframe, 'cancelAnimationFrame']]) {
    if (typeof o !== 'function') continue;
    natives.set(w, o);
    Object.defineProperty(w, 'length', { value: o.length });
    put(name, w);
  }
  // Requests (fetch, XHR) to the web sent while an action is watched:
  // `pending.sent` counts them, so that the host waits until it has seen them
  // start (their events come over another path, and can come after the
  // settle's answer); `pending.all` counts those of the document's whole life
  // (its load report says how many, for the same reason).
  const web = (url) => {
    try { return /^https?:$/.test(new URL(url, location.href).protocol); } catch (e) { return false; }
  };
  const count = (url) => {
    if (!web(url)) return;
    pending.all++;
    if (seen.busy) pending.sent++;
  };
  const fetching = window.fetch;
  if (typeof fetching === 'function') {
    const sending = { fetch(input) {
      count(input && typeof input === 'object' && 'url' in input ? input.url : String(input));
      return Reflect.apply(fetching, this, arguments);
    } }.fetch;
    natives.set(sending, fetching);
    Object.defineProperty(sending, 'length', { value: fetching.length });
    put('fetch', sending);
  }
  const xhr = window.XMLHttpRequest && XMLHttpRequest.prototype;
  if (xhr && typeof xhr.send === 'function' && typeof xhr.open === 'function') {
    const opening = xhr.open, send = xhr.send, urls = new WeakMap();
    const open = { open(method, url) { urls.set(this, url); return Reflect.apply(opening, this, arguments); } }.open;
    const sent = { send() {
      const r = Reflect.apply(send, this, arguments);
      count(String(urls.get(this)));
      return r;
    } }.send;
    for (const [w, o, name] of [[open, opening, 'open'], [sent, send, 'send']]) {
      natives.set(w, o);
      Object.defineProperty(w, 'length', { value: o.length });
      Object.defineProperty(xhr, name, Object.assign(Object.getOwnPropertyDescriptor(xhr, name), { value: w }));
    }
  }
})()"#;

/// Console messages kept per tab.
const CONSOLE_CAP: usize = 1000;
/// Longest console message kept, in chars.
const CONSOLE_TEXT_MAX: usize = 2000;
/// Requests in flight longer than this (long polls) do not hold up a quiet wait.
const LONG_REQUEST: Duration = Duration::from_millis(1000);
/// A websocket that brought a frame this shortly before an action is busy on its
/// own: its frames are not the action's answer.
const WS_BUSY: Duration = Duration::from_millis(500);
/// How long the network must have been quiet since a navigation's load
/// event before the tab's next call reads the page, when the document cannot
/// say how far the work its load set going is (see `pay_settle`).
const LOAD_QUIET_MS: u64 = 20;
/// How long after a load its document's report of that work may take to
/// come (with the events of the requests it names) before the tab's next
/// call settles for [`LOAD_QUIET_MS`] instead.
const LOAD_REPORT_WAIT: Duration = Duration::from_millis(1500);
/// How far a loaded document is with the work its load set going (see
/// `TabWatch::load_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LoadState {
    /// The requests it sent by fetch and XHR (so many) have been seen here
    /// and have ended, and nothing else that counts for quiet is in flight.
    Settled(u64),
    /// A request that counts for quiet is in flight.
    Busy,
    /// Its report, or the events of requests it sent, are still to come.
    Expected,
    /// It cannot say (no report, or something of its load still to come).
    Unknown,
}

/// How long the events of the requests a page says an action sent may take
/// to come (they travel apart from the page's answer).
const SENT_SEEN: Duration = Duration::from_millis(500);
/// How long an action's answer over a websocket may take to begin, and the pause
/// in its frames that ends it.
const WS_FIRST: Duration = Duration::from_millis(500);
const WS_PAUSE: Duration = Duration::from_millis(250);
/// How long after an action began, at most, the frames that come are taken
/// as its own when it is never answered (an input that failed).
const ACTING_MAX: Duration = Duration::from_secs(10);

impl TabWatch {
    fn push_console(&self, level: &str, text: String) {
        let text: String = text.chars().take(CONSOLE_TEXT_MAX).collect();
        let ts = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
        let mut q = lock(&self.console);
        if q.len() >= CONSOLE_CAP {
            q.pop_front();
            self.dropped.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        q.push_back(json!({"level": level, "text": text, "time": ts}));
    }

    fn net_start(&self, id: String, url: &str) {
        let mut n = lock(&self.net);
        n.started += 1;
        if n.ended_early.remove(&id).is_some() {
            return;
        }
        n.inflight.insert(id, (Instant::now(), url.chars().take(200).collect()));
        n.last_change = Some(Instant::now());
    }

    /// A request of one of the tab's documents: the main frame's navigation
    /// requests name its document (by loader id), and the fetch and XHR
    /// requests to the web of that document are counted (the first time
    /// only: a redirect sends the event again).
    fn net_document(&self, ev: &EventRequestWillBeSent) {
        let loader = ev.loader_id.inner();
        let main = ev.frame_id.as_ref().is_some_and(|f| *f.inner() == self.main_frame);
        let mut n = lock(&self.net);
        match ev.r#type {
            Some(ResourceType::Document)
                if main && n.doc.as_ref().is_none_or(|(l, _)| l != loader) =>
            {
                n.doc = Some((loader.clone(), 0));
            }
            Some(ResourceType::Fetch | ResourceType::Xhr)
                if ev.redirect_response.is_none() && is_web(&ev.request.url) =>
            {
                if let Some((_, sent)) = n.doc.as_mut().filter(|(l, _)| l == loader) {
                    *sent += 1;
                }
            }
            _ => {}
        }
    }

    /// A new document: requests of the old one no longer matter.
    pub(super) fn net_reset(&self) {
        let mut n = lock(&self.net);
        n.inflight.clear();
        n.ended_early.clear();
        n.last_change = None;
        n.load_reported = None;
        n.after_load = None;
    }

    fn net_end(&self, id: &str) {
        let mut n = lock(&self.net);
        if n.inflight.remove(id).is_some() {
            n.last_change = Some(Instant::now());
        } else {
            // Ends of requests never started here (data: URLs, images, ...) are
            // kept briefly in case their start is still on its way.
            let now = Instant::now();
            n.ended_early.retain(|_, t| now.duration_since(*t) < Duration::from_secs(10));
            if n.ended_early.len() < 10_000 {
                n.ended_early.insert(id.to_owned(), now);
            }
        }
    }

    /// From now on, requests count as the action's.
    fn action_begins(&self) {
        let started = {
            let mut n = lock(&self.net);
            n.acting_since = Some(Instant::now());
            n.started
        };
        *lock(&self.action) = Some((Instant::now(), started));
    }

    /// An action has been answered (or has failed): frames that come now are
    /// the page's own again.
    fn action_answered(&self) {
        lock(&self.net).acting_since = None;
    }

    /// A websocket frame came: the page's own unless an action is under way
    /// (between its start and its answer).
    fn socket_frame(&self) {
        let mut n = lock(&self.net);
        let now = Instant::now();
        n.ws_received = Some(now);
        if n.acting_since.is_none_or(|t| now.saturating_duration_since(t) > ACTING_MAX) {
            n.ws_own = Some(now);
        }
    }

    /// Whether the action that began at `since` is answered over a websocket
    /// (a notebook's output comes so): the page has one, it was not busy on
    /// its own just before (a chatty stream of prices is no answer; frames
    /// that answered the action before, such as an editor's completions
    /// while typing, are not the page's own), and the action sent a request
    /// or a frame.
    fn answer_by_socket(&self, since: Instant, requests: u64) -> bool {
        let n = lock(&self.net);
        let chatty = n.ws_own.is_some_and(|t| since.saturating_duration_since(t) < WS_BUSY);
        let sent = n.ws_sent.is_some_and(|t| t >= since);
        n.ws_received.is_some() && !chatty && (requests > 0 || sent)
    }

    /// When a websocket frame came after `since`, the last one.
    fn socket_frame_after(&self, since: Instant) -> Option<Instant> {
        lock(&self.net).ws_received.filter(|t| *t >= since)
    }

    /// The requests an action started (see [`Self::action_begins`]): how many,
    /// and the URLs of those still in flight.
    fn action_requests(&self, since: (Instant, u64)) -> (u64, Vec<String>) {
        let started = lock(&self.net).started;
        (started.saturating_sub(since.1), self.in_flight(Some(since.0)))
    }

    /// The document the last navigation loaded has sent `all` requests by
    /// fetch and XHR (more than its report after its load said): wait for
    /// those too.
    fn expect_load_requests(&self, all: u64) {
        if let Some(r) = lock(&self.net).after_load.as_mut() {
            r.sent = Some(all);
        }
    }

    /// The requests in flight (begun at `since` or later): URL and age.
    fn in_flight(&self, since: Option<Instant>) -> Vec<String> {
        let n = lock(&self.net);
        n.inflight
            .values()
            .filter(|(t, _)| since.is_none_or(|s| *t >= s))
            .map(|(t, u)| format!("{u} ({} ms)", t.elapsed().as_millis()))
            .collect()
    }

    /// How far the document at `url`, which the tab's last navigation loaded,
    /// is with the work its load set going, on its own reports (see
    /// [`load_report_js`]).
    fn load_state(&self, url: &str) -> LoadState {
        let n = lock(&self.net);
        let this = |href: &str| page_of(href) == page_of(url);
        let Some(r) = n.after_load.as_ref().filter(|r| this(&r.href)) else {
            // The document reported its load event: its report after the
            // work it set going is on its way.
            return match &n.load_reported {
                Some(href) if this(href) => LoadState::Expected,
                _ => LoadState::Unknown,
            };
        };
        let (Some(sent), 0) = (r.sent, r.still) else {
            return LoadState::Unknown;
        };
        if sent > 0 && n.doc.as_ref().is_none_or(|(_, seen)| *seen < sent) {
            // Requests the page sent whose events have not come yet.
            return LoadState::Expected;
        }
        if n.inflight.values().any(|(t, _)| t.elapsed() < LONG_REQUEST) {
            LoadState::Busy
        } else {
            LoadState::Settled(sent)
        }
    }

    /// How long until the network has been quiet for `quiet`: no short
    /// request in flight, and none started or ended (counted from `floor` at
    /// the earliest). Zero once it has; `quiet` while a request is in flight.
    fn quiet_in(&self, quiet: Duration, floor: Instant) -> Duration {
        let n = lock(&self.net);
        if n.inflight.values().any(|(t, _)| t.elapsed() < LONG_REQUEST) {
            return quiet;
        }
        let since = n.last_change.map_or(floor, |t| t.max(floor));
        quiet.saturating_sub(since.elapsed())
    }
}

pub(super) fn cdp_params<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, ToolError> {
    serde_json::from_value(v).map_err(|e| cdp_error("bad CDP parameters", e))
}

/// Refs named in page-op arguments, rewritten from `ax_<n>` to `n`.
fn take_refs(args: &mut Value) -> Result<Vec<RefId>, ToolError> {
    fn parse(field: &str, s: &str) -> Result<RefId, ToolError> {
        RefId::parse(s).ok_or_else(|| {
            ToolError::invalid_argument(
                field,
                format!(
                    "{field} {s:?} is not a ref: refs look like ax_12 (from read_page or find)"
                ),
            )
        })
    }
    let mut out = Vec::new();
    let Some(obj) = args.as_object_mut() else {
        return Ok(out);
    };
    for key in ["ref", "source", "target"] {
        if let Some(Value::String(s)) = obj.get(key) {
            let r = parse(key, s)?;
            out.push(r);
            obj.insert(key.into(), json!(r.0));
        }
    }
    if let Some(Value::Object(refs)) = obj.get("refs") {
        for k in refs.keys() {
            out.push(parse("refs", k)?);
        }
    }
    Ok(out)
}

impl BrowserManager {
    /// Drop everything known of tab `n` (it closed or its browser died).
    pub(super) fn forget_tab(&self, n: TabId) -> Option<super::tabs::Tab> {
        self.inner.tabs.remove(n)
    }

    /// Start collecting console messages, network activity and dialogs of a new
    /// tab.
    pub(super) async fn watch_tab(&self, n: TabId, page: &Page) {
        workers_start_unpaused(page).await;
        self.watch_dialogs(n, page).await;
        self.install_load_reports(n, page).await;
        let main_frame = page.target_id().inner().clone();
        let w = Arc::new(TabWatch { main_frame, ..TabWatch::default() });
        self.inner.tabs.with(n, |t| t.watch = Some(w.clone()));
        watch_console(page, &w).await;
        watch_network(page, &w).await;
        let who = self.inner.tabs.owner_of(n);
        if let Err(e) = self.route_tab(n, page, &who).await {
            tracing::warn!(error = %e.message, "a new tab does not pass by its session's routes");
        }
    }

    /// The load binding and the scripts every document of the tab gets before
    /// its own: the click tracker, the load report and, in a top-level
    /// document, the page library. Installed there, the library costs a
    /// fraction of a millisecond (the renderer compiles it once and reuses the
    /// code); evaluated into a loaded document, as the first page operation
    /// of a document the script did not reach still does, it is compiled
    /// anew each time (tens of milliseconds on a busy two-core machine).
    async fn install_load_reports(&self, n: TabId, page: &Page) {
        use chromiumoxide::cdp::browser_protocol::page::AddScriptToEvaluateOnNewDocumentParams;
        use chromiumoxide::cdp::js_protocol::runtime::AddBindingParams;
        let loads = page.event_listener::<EventBindingCalled>().await.ok();
        self.inner.tabs.with(n, |t| t.loads = loads);
        if let Err(e) = page.execute(AddBindingParams::new(load_binding())).await {
            tracing::debug!(error = %e, "no load reports in this tab");
        }
        let library = super::library::page_library();
        let script = format!(
            "{CLICK_TRACKER};\n{};\nif (window === window.top) try {{ void {library}; }} catch (e) {{}}",
            load_report_js()
        );
        if let Err(e) = page.execute(AddScriptToEvaluateOnNewDocumentParams::new(script)).await {
            tracing::debug!(error = %e, "no click tracker in this tab");
        }
    }

    /// Forget the requests in flight of a tab (before it loads a new document).
    pub(super) fn reset_network(&self, n: TabId) {
        if let Some(w) = self.tab_watch(n) {
            w.net_reset();
        }
    }

    /// Wait (at most 1 s) until every console message the page logged before
    /// now is in the tab's buffer: a marker logged from an isolated world (the
    /// page's scripts never see it) comes through the same event stream after
    /// them. Best effort: a page that cannot be reached is read as it is.
    pub(super) async fn console_settled(&self, n: TabId, page: &Page) {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let Some(w) = self.tab_watch(n) else {
            return;
        };
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let passed = w.fence_passed.notified();
        tokio::pin!(passed);
        passed.as_mut().enable();
        let fenced = async {
            let tree = raw_command(page, "Page.getFrameTree", json!({})).await?;
            let frame = tree["frameTree"]["frame"]["id"].clone();
            let world = raw_command(
                page,
                "Page.createIsolatedWorld",
                json!({"frameId": frame, "worldName": "ochre-console-fence"}),
            )
            .await?;
            let marker = json!(format!("{CONSOLE_FENCE}{id}"));
            raw_command(
                page,
                "Runtime.evaluate",
                json!({"expression": format!("console.debug({marker})"), "contextId": world["executionContextId"]}),
            )
            .await
        };
        if fenced.await.is_err() {
            return;
        }
        let _ = tokio::time::timeout(Duration::from_secs(1), async {
            while *lock(&w.console_fence) < id {
                passed.as_mut().await;
                passed.set(w.fence_passed.notified());
                passed.as_mut().enable();
            }
        })
        .await;
    }

    /// The console buffer of tab `n` (`console` page-op: level, limit, clear).
    pub(super) fn console_json(&self, n: TabId, args: &Console) -> Value {
        let Some(w) = self.tab_watch(n) else {
            return json!({"messages": [], "dropped": 0});
        };
        let level = args.level.as_deref();
        let limit = args.limit.map_or(100, |l| l as usize);
        let mut q = lock(&w.console);
        let all: Vec<&Value> = q
            .iter()
            .filter(|m| {
                level.is_none_or(|l| m["level"] == l || (l == "error" && m["level"] == "exception"))
            })
            .collect();
        let skip = all.len().saturating_sub(limit);
        let messages: Vec<Value> = all.into_iter().skip(skip).cloned().collect();
        let dropped = w.dropped.load(std::sync::atomic::Ordering::Relaxed);
        let total = q.len();
        if args.clear == Some(true) {
            q.clear();
            w.dropped.store(0, std::sync::atomic::Ordering::Relaxed);
        }
        json!({"messages": messages, "total": total, "dropped": dropped})
    }

    pub(super) fn tab_watch(&self, n: TabId) -> Option<Arc<TabWatch>> {
        self.inner.tabs.with(n, |t| t.watch.clone()).flatten()
    }

    /// Wait until the tab has had no (short) request in flight for `quiet_ms`
    /// from now on, at most `max_ms`. Whether it went quiet.
    pub(super) async fn network_quiet(&self, n: TabId, quiet_ms: u64, max_ms: u64) -> bool {
        let Some(w) = self.tab_watch(n) else {
            return true;
        };
        let start = Instant::now();
        let quiet = Duration::from_millis(quiet_ms);
        loop {
            let left = w.quiet_in(quiet, start);
            if left.is_zero() {
                return true;
            }
            if start.elapsed() >= Duration::from_millis(max_ms) {
                tracing::debug!(pending = ?w.in_flight(None), "the network did not go quiet");
                return false;
            }
            // Wake when the quiet is due, and every 10 ms at most.
            tokio::time::sleep(left.clamp(Duration::from_millis(1), Duration::from_millis(10)))
                .await;
        }
    }

    /// After a navigation's load event the page may still be at work on its
    /// load: requests its load handlers started, a script they added, the
    /// page's answer to a response. That wait is owed, not made: `navigate`
    /// answers at the load event and the tab's next page call pays it (see
    /// [`Self::pay_settle`]), counted from the load.
    pub(super) fn owe_settle(&self, n: TabId, loaded: Instant, url: &str) {
        if let Some(w) = self.tab_watch(n) {
            *lock(&w.settle_owed) = Some((loaded, url.to_owned()));
        }
    }

    /// Pay tab `n`'s owed settle (see [`Self::owe_settle`]), if any. The
    /// document says, once the work its load set going has run (see
    /// [`load_report_js`]), how many requests it sent and whether anything
    /// may still be to come; the wait ends when every one of those requests
    /// has been seen here and has ended ([`LoadState::Settled`]), and, if it
    /// sent any, the page has had a task, a frame and a task to answer them
    /// without sending more (else those are waited for in turn).
    /// A document that cannot say (its report missing [`LOAD_REPORT_WAIT`]
    /// after the load, something still to come, a dialog open, a page from the
    /// back/forward cache) is settled once the network has been quiet for
    /// [`LOAD_QUIET_MS`] since the load. At most 3 s.
    pub(super) async fn pay_settle(&self, n: TabId, page: &Page) {
        let Some(w) = self.tab_watch(n) else {
            return;
        };
        let Some((loaded, url)) = lock(&w.settle_owed).take() else {
            return;
        };
        let dialog = || self.inner.tabs.with(n, |t| t.dialog.is_some()).unwrap_or(true);
        let start = Instant::now();
        let quiet = Duration::from_millis(LOAD_QUIET_MS);
        let how = loop {
            // Reports of the load are read, not kept: this call may change the page.
            let _ = self.load_report(n, None);
            let state = w.load_state(&url);
            if state == LoadState::Settled(0) {
                break "as the page reported it";
            }
            if let LoadState::Settled(sent) = state {
                // The page answers its responses a task or so after them
                // (and may send more requests then): ask it once that ran.
                match self.load_requests_after_a_frame(n, page).await {
                    Some(all) if all > sent => w.expect_load_requests(all),
                    Some(_) => break "as the page reported it, its answers run",
                    None => break "as the page reported it (the page could not be asked again)",
                }
                continue;
            }
            let expected =
                state == LoadState::Expected && loaded.elapsed() < LOAD_REPORT_WAIT && !dialog();
            if !expected && w.quiet_in(quiet, loaded).is_zero() {
                break "on a quiet network";
            }
            if start.elapsed() >= Duration::from_secs(3) {
                tracing::debug!(pending = ?w.in_flight(None), ?state, "the load did not settle");
                break "at the bound";
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        };
        tracing::debug!(since_load = ?loaded.elapsed(), how, "settled after a navigation");
    }

    /// How many requests to the web the tab's document has sent by fetch or
    /// XHR, read a task, a frame and a task after now (the page's answers to
    /// responses that came before now have run by then; 250 ms at most, for
    /// a tab that draws no frames). None when the page cannot be asked (a
    /// dialog, a document gone) or did not answer within a second.
    async fn load_requests_after_a_frame(&self, n: TabId, page: &Page) -> Option<u64> {
        const ASK: &str = r#"new Promise((done) => {
  const clk = window.__ochre_clk, all = () => done(clk && clk.pending ? clk.pending.all : null);
  const bound = setTimeout(all, 250);
  setTimeout(() => requestAnimationFrame(() => setTimeout(() => { clearTimeout(bound); all(); }, 0)), 0);
})"#;
        if self.inner.tabs.with(n, |t| t.dialog.is_some()).unwrap_or(true) {
            return None;
        }
        let asked = tokio::time::timeout(Duration::from_secs(1), self.eval(page, ASK, true));
        asked.await.ok()?.ok()?.as_u64()
    }

    /// Evaluate `expression` in the tab's page (promises awaited): its value, or
    /// with `by_value` false the remote object id. A throw is `JS_ERROR`.
    pub(super) async fn eval(
        &self,
        page: &Page,
        expression: &str,
        by_value: bool,
    ) -> Result<Value, ToolError> {
        self.eval_doc(&Doc::Main(page.clone()), expression, by_value).await
    }

    /// What the document at `url` in tab `n` reported at its load event, if it
    /// is the last report since the tab's previous call: the login-wall
    /// evidence (`{"wall": ...}`, the `wall` page operation's answer) and the
    /// title. Reports read here and not the last (or not of `url`: a document
    /// replaced since, or one that had no load event, such as a page from the
    /// back/forward cache) are dropped; what they say of the load's progress
    /// is kept in the tab's watch (for [`Self::pay_settle`]).
    pub(super) fn load_report(&self, n: TabId, url: Option<&str>) -> Option<(Value, String)> {
        let name = load_binding();
        let mut v = self
            .inner
            .tabs
            .with(n, |t| {
                let loads = t.loads.as_mut()?;
                let mut last = None;
                while let Some(Some(ev)) = loads.next().now_or_never() {
                    let report = (ev.name == name)
                        .then(|| serde_json::from_str::<Value>(&ev.payload).ok())
                        .flatten();
                    let (Some(v), Some(w)) = (report, &t.watch) else {
                        continue;
                    };
                    let mut net = lock(&w.net);
                    match after_load(&v) {
                        Some(after) => net.after_load = Some(after),
                        None => {
                            net.load_reported = v["href"].as_str().map(str::to_owned);
                            last = Some(v);
                        }
                    }
                }
                last
            })
            .flatten()?;
        if page_of(v["href"].as_str()?) != page_of(url?) {
            return None;
        }
        let title = v["title"].as_str().unwrap_or_default().to_owned();
        Some((json!({ "wall": v.get_mut("wall").map_or(Value::Null, Value::take) }), title))
    }

    /// The login-wall evidence (`{"wall": ...}`, the `wall` page operation's
    /// answer) and the document's title, in one script round trip.
    pub(super) async fn wall_and_title(&self, page: &Page) -> Result<(Value, String), ToolError> {
        let mut v = self.eval(page, WALL_JS, true).await?;
        let title = match v.get_mut("title").map(Value::take) {
            Some(Value::String(t)) => t,
            _ => String::new(),
        };
        let wall = v.get_mut("wall").map_or(Value::Null, Value::take);
        Ok((json!({ "wall": wall }), title))
    }

    /// Wait (at most `ms`) until the tab's document has fully loaded.
    ///
    /// Each look is bounded on its own (a look sent while a navigation swaps
    /// the document may go unanswered; the next one asks the new document),
    /// and a timeout says what the last look saw.
    pub(super) async fn wait_loaded(&self, page: &Page, ms: u32) -> Result<(), ToolError> {
        let ms = if ms == 0 { 30_000 } else { ms };
        let until = Instant::now() + Duration::from_millis(u64::from(ms));
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let look = tokio::time::timeout(
                left.min(Duration::from_millis(1_000)),
                self.eval(page, "document.readyState", true),
            );
            let seen = match look.await {
                Ok(Ok(Value::String(s))) if s == "complete" => return Ok(()),
                Ok(Ok(v)) => format!("readyState {v}"),
                Ok(Err(e)) => format!("the look failed: {}", e.message),
                Err(_) => "a look at the document was not answered within 1 s".into(),
            };
            if Instant::now() >= until {
                tracing::debug!(%seen, "the page did not load in time");
                return Err(ToolError::timeout(format!(
                    "waiting for the page to load did not finish within {ms} ms (last seen: {seen})"
                ))
                .with("timeoutMs", ms));
            }
            tokio::time::sleep(
                Duration::from_millis(15).min(until.saturating_duration_since(Instant::now())),
            )
            .await;
        }
    }

    /// Whether the tab's document has fully loaded (`readyState` is `complete`).
    pub(super) async fn loaded(&self, page: &Page) -> bool {
        matches!(
            self.eval(page, "document.readyState", true).await,
            Ok(Value::String(s)) if s == "complete"
        )
    }

    /// The document a call's refs (or its document token) belong to: the tab's
    /// page or one of its cross-site frames; with the tokens the refs must still
    /// carry. The refs are taken out of `args`.
    fn locate(
        &self,
        n: TabId,
        page: &Page,
        args: &mut Value,
    ) -> Result<(Doc, serde_json::Map<String, Value>), ToolError> {
        let wanted = take_refs(args)?;
        let (frame, expect) = self.inner.tabs.all(|tabs| {
            let refs = tabs.get(&n).map(|t| &t.refs);
            let mut expect = serde_json::Map::new();
            let mut frame: Option<Option<String>> = None;
            for r in wanted {
                let Some((token, f)) = refs.and_then(|t| t.token_of(r)) else {
                    return Err(ToolError::ref_not_found(format!(
                            "ref {r} was never given out on this tab; call read_page or find for refs"
                        ),
                    )
                    .with("ref", r.to_string()));
                };
                expect.insert(r.0.to_string(), json!(token));
                match &frame {
                    None => frame = Some(f.map(str::to_owned)),
                    Some(g) if g.as_deref() != f => {
                        return Err(ToolError::invalid_argument(
                            "ref",
                            "these refs are in different frames of the page (one in a cross-site frame); act within one frame",
                        ));
                    }
                    Some(_) => {}
                }
            }
            if frame.is_none()
                && let Some(t) = args.get("token").and_then(Value::as_str)
            {
                frame = Some(refs.and_then(|r| r.frame_of_token(t)).map(str::to_owned));
            }
            Ok((frame.flatten(), expect))
        })?;
        let doc = match frame {
            Some(f) => Doc::Frame(f, self.slot_of_tab(n)),
            None => Doc::Main(page.clone()),
        };
        Ok((doc, expect))
    }

    /// A page-library element (a ref or selector in `args`) as a remote object
    /// of its document, for CDP commands that take one: (document, object id).
    pub(super) async fn element(
        &self,
        n: TabId,
        page: &Page,
        mut args: Value,
        timeout_ms: u32,
    ) -> Result<(Doc, String), ToolError> {
        let (doc, expect) = self.locate(n, page, &mut args)?;
        let v = self.run_in(n, &doc, "element", args, expect, true, timeout_ms).await?;
        match v.as_str() {
            Some(id) => Ok((doc, id.to_owned())),
            None => Err(cdp_error("cannot reach the element", "no object id")),
        }
    }

    /// [`Self::run_op_once`]; a read that a navigation cut short (the document
    /// it ran in went away: a `read_page` sent while a `navigate` or a click's
    /// navigation is under way) reads the new document once it has loaded.
    async fn run_op(
        &self,
        n: TabId,
        page: &Page,
        op: &str,
        args: Value,
        timeout_ms: u32,
    ) -> Result<Value, ToolError> {
        let read = super::ops::page_op(op).is_some_and(|o| o.retried);
        let again = read.then(|| args.clone());
        let started = Instant::now();
        let r = self.run_op_once(n, page, op, args, timeout_ms).await;
        tracing::debug!(op, took = ?started.elapsed(), "page op");
        match (r, again) {
            (Err(e), Some(args)) if document_went_away(&e) => {
                tracing::debug!(op, error = %e.message, "the document went away under a read; reading the new one");
                self.wait_loaded(page, timeout_ms.clamp(1, 10_000)).await?;
                self.run_op_once(n, page, op, args, timeout_ms).await
            }
            (r, _) => r,
        }
    }

    /// Run one page-library operation with the registry's view of the refs, in
    /// the document its refs (or its document token) belong to: the tab's page or
    /// one of its cross-site frames. A snapshot, `find` and `query` without refs
    /// cover the frames too.
    async fn run_op_once(
        &self,
        n: TabId,
        page: &Page,
        op: &str,
        mut args: Value,
        timeout_ms: u32,
    ) -> Result<Value, ToolError> {
        let (doc, expect) = self.locate(n, page, &mut args)?;
        let spec = super::ops::page_op(op);
        let frames = spec.map_or(Frames::One, |o| o.frames);
        {
            // Every read mode but `dom` (the page's own HTML) covers frames.
            let read = frames == Frames::Snapshot && args.get("mode").is_none_or(|m| m != "dom");
            let wide = frames == Frames::Wide && matches!(doc, Doc::Main(_));
            if read || wide {
                let frames = self.discover_frames(n, page).await;
                if !frames.is_empty() || matches!(doc, Doc::Frame(..)) {
                    let slot = self.slot_of_tab(n);
                    let docs: Vec<Doc> = std::iter::once(doc.clone())
                        .chain(frames.into_iter().map(|f| Doc::Frame(f.id, slot)))
                        .collect();
                    return match op {
                        "snapshot" => self.snapshot_frames(n, doc, args, expect, timeout_ms).await,
                        _ => self.wide_op(n, &docs, op, args, timeout_ms).await,
                    };
                }
            }
        }
        if frames == Frames::Fields && expect.is_empty() {
            // Fields named by label: the page's own form, else the first frame
            // that has them all (a payment or sign-in frame).
            let main = self.run_in(n, &doc, op, args.clone(), expect, false, timeout_ms).await;
            match main {
                Err(e) if e.code == Code::FieldNotFound => {
                    for f in self.discover_frames(n, page).await {
                        let doc = Doc::Frame(f.id, self.slot_of_tab(n));
                        let r = self
                            .run_in(
                                n,
                                &doc,
                                op,
                                args.clone(),
                                Default::default(),
                                false,
                                timeout_ms,
                            )
                            .await;
                        if r.is_ok() {
                            return r;
                        }
                    }
                    return Err(e);
                }
                other => return other,
            }
        }
        let shift = matches!(&doc, Doc::Frame(..)) && spec.is_some_and(|o| o.points);
        let mut v = self.run_in(n, &doc, op, args, expect, false, timeout_ms).await?;
        if shift && let Doc::Frame(f, _) = &doc {
            let (dx, dy) = self.frame_origin(n, page, f).await?;
            super::frames::shift_points(&mut v, dx, dy);
        }
        Ok(v)
    }

    /// Run one page-library operation in one document.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn run_in(
        &self,
        n: TabId,
        doc: &Doc,
        op: &str,
        args: Value,
        expect: serde_json::Map<String, Value>,
        raw: bool,
        timeout_ms: u32,
    ) -> Result<Value, ToolError> {
        let base = self.inner.tabs.with(n, |t| t.refs.next).unwrap_or(1);
        let ctx = json!({"op": op, "args": args, "base": base, "expect": expect, "raw": raw});
        let run = async {
            let r = self.eval_doc_result(doc, &page_call(&ctx), !raw).await?;
            match r["value"].as_str() {
                Some(NOT_INSTALLED) => {
                    self.eval_doc_result(doc, &page_install_and_call(&ctx), !raw).await
                }
                _ => Ok(r),
            }
        };
        let r = bounded(timeout_ms, op, run).await?;
        let v = if raw { r["objectId"].clone() } else { r["value"].clone() };
        if raw {
            return Ok(v);
        }
        if let (Some(token), Some(lo), Some(hi)) = (
            v.get("token").and_then(Value::as_str),
            v.get("lo").and_then(Value::as_u64),
            v.get("hi").and_then(Value::as_u64),
        ) {
            let frame = match doc {
                Doc::Frame(f, _) => Some(f.as_str()),
                Doc::Main(_) => None,
            };
            self.inner.tabs.with(n, |t| t.refs.record(lo, hi, token, frame));
        }
        if let Some(err) = v.get("err") {
            let code = err.get("code").and_then(Value::as_str).unwrap_or("JS_ERROR");
            let message = err.get("message").and_then(Value::as_str).unwrap_or("");
            let mut e = ToolError::new(Code::named(code), message);
            if let Some(Value::Object(d)) = err.get("details") {
                e.details = d.clone();
            }
            return Err(e);
        }
        Ok(v.get("ok").cloned().unwrap_or(Value::Null))
    }

    /// Evaluate in a document: the tab's page or a cross-site frame (see
    /// [`Self::eval`]).
    pub(super) async fn eval_doc(
        &self,
        doc: &Doc,
        expression: &str,
        by_value: bool,
    ) -> Result<Value, ToolError> {
        let r = self.eval_doc_result(doc, expression, by_value).await?;
        Ok(if by_value { r["value"].clone() } else { r["objectId"].clone() })
    }

    /// The `RemoteObject` an evaluation in a document gives; a JS exception is
    /// a `JS_ERROR`.
    async fn eval_doc_result(
        &self,
        doc: &Doc,
        expression: &str,
        by_value: bool,
    ) -> Result<Value, ToolError> {
        let mut r = self
            .doc_send(
                doc,
                "Runtime.evaluate",
                json!({"expression": expression, "awaitPromise": true, "returnByValue": by_value, "userGesture": true}),
            )
            .await?;
        if let Some(ex) = r.get("exceptionDetails") {
            let text = ex["exception"]["description"]
                .as_str()
                .or(ex["text"].as_str())
                .unwrap_or("exception");
            let mut e = ToolError::js_error(text);
            if let Some(class) = ex["exception"]["className"].as_str() {
                e = e.with("exception", class);
            }
            return Err(e);
        }
        Ok(r["result"].take())
    }

    /// Run page operation `parsed` (read from `args`, which go to the page
    /// library as they came) in a tab: see [`HostBrowser::page_op`].
    pub(super) async fn dispatch(
        &self,
        tab: Option<TabId>,
        parsed: AnyOp,
        args: Value,
        timeout_ms: u32,
    ) -> Result<Value, ToolError> {
        match parsed {
            AnyOp::Dialog(_) => {
                let (n, _) = self.page(tab).await?;
                Ok(json!({"dialog": self.open_dialog(n)}))
            }
            AnyOp::HandleDialog(a) => {
                let (n, page) = self.page(tab).await?;
                let out = self.handle_dialog(n, &page, &a).await?;
                if out["type"] == "beforeunload" && out["accepted"] == json!(true) {
                    // The navigation the dialog held goes on: let it load.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    let _ = self.wait_loaded(&page, 10_000).await;
                    let _ = self.network_quiet(n, 50, 3_000).await;
                }
                Ok(out)
            }
            AnyOp::ProfileStatus(_) => Ok(self.profile_status().await),
            AnyOp::ListProfiles(_) => Ok(self.list_profiles().await),
            AnyOp::Route(a) => {
                let now = self.route(&a).await?;
                serde_json::to_value(now).map_err(|e| ToolError::internal(e.to_string()))
            }
            AnyOp::NetworkPolicy(a) => {
                let now = self.network_policy(&a).await?;
                serde_json::to_value(now).map_err(|e| ToolError::internal(e.to_string()))
            }
            // One browser: its death ends the call at once. A pool: the pages
            // of a browser that dies are read on the others.
            AnyOp::VisitBatch(a) if self.pool_size() > 1 => self.visit_batch(&a).await,
            AnyOp::VisitBatch(a) => self.while_alive(self.visit_batch(&a)).await,
            AnyOp::Sleep(a) => Ok(super::visit::sleep(&a).await),
            // Its steps are page operations of their own, each guarded.
            AnyOp::Act(a) => {
                let ms = a.timeout_ms.unwrap_or(0).min(60_000) + 60_000;
                let bound = u32::try_from(ms).unwrap_or(u32::MAX).max(timeout_ms);
                let acted = bounded(bound, "the action", self.act_boxed(tab, a)).await?;
                serde_json::to_value(acted).map_err(|e| ToolError::internal(e.to_string()))
            }
            AnyOp::FindTarget(a) => {
                let ms = a.timeout_ms.unwrap_or(5_000).min(60_000) + 30_000;
                let bound = u32::try_from(ms).unwrap_or(u32::MAX).max(timeout_ms);
                let found =
                    bounded(bound, "finding the element", self.find_target_boxed(tab, a)).await?;
                serde_json::to_value(found).map_err(|e| ToolError::internal(e.to_string()))
            }
            AnyOp::Gestures(a) => {
                let done = Box::pin(self.gestures(tab, &a.events, timeout_ms)).await?;
                serde_json::to_value(done).map_err(|e| ToolError::internal(e.to_string()))
            }
            AnyOp::Drag(a) => {
                let dragged =
                    bounded(timeout_ms.max(60_000), "the drag", self.drag_boxed(tab, a)).await?;
                serde_json::to_value(dragged).map_err(|e| ToolError::internal(e.to_string()))
            }
            AnyOp::NewIsolatedTab(a) => {
                let (spread, ms) = (a.spread.unwrap_or(false), timeout_ms.max(1000));
                let info =
                    self.new_isolated_tab(a.url.as_deref(), ms, spread, a.login.as_deref()).await?;
                Ok(json!({"id": info.id, "url": info.url, "title": info.title}))
            }
            parsed => self.guarded(tab, self.tab_op(tab, parsed, args, timeout_ms)).await,
        }
    }

    /// A page operation on one tab (no dialog open there): `op` read from
    /// `args`, which go to the page library as they came.
    async fn tab_op(
        &self,
        tab: Option<TabId>,
        op: AnyOp,
        args: Value,
        timeout_ms: u32,
    ) -> Result<Value, ToolError> {
        let (n, page) = match op {
            // Read at the load event: it does not pay the navigation's owed wait.
            AnyOp::Wall(_) => self.page_as_is(tab).await?,
            _ => self.page(tab).await?,
        };
        self.on_tab(n, &page, op, args, timeout_ms).await
    }

    /// Page operation `op` on tab `n` (resolved for its caller), `args` its
    /// arguments as the page library gets them. Boxed where it is made: its
    /// future is large, and a debug build's caller would hold a copy of it on
    /// the stack while it runs.
    pub(super) fn on_tab(
        &self,
        n: TabId,
        page: &Page,
        op: AnyOp,
        args: Value,
        timeout_ms: u32,
    ) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(self.handle(n, page.clone(), op, args, timeout_ms))
    }

    /// See [`Self::on_tab`].
    async fn handle(
        &self,
        n: TabId,
        page: Page,
        op: AnyOp,
        args: Value,
        timeout_ms: u32,
    ) -> Result<Value, ToolError> {
        let timeout_ms = if timeout_ms == 0 { 30_000 } else { timeout_ms };
        match op {
            AnyOp::Cookies(a) => bounded(timeout_ms, "cookies", self.cookies(&page, &a)).await,
            AnyOp::NetworkCapture(a) => {
                bounded(
                    timeout_ms.max(20_000),
                    "network capture",
                    self.network_capture(self.tab_watch(n), &page, &a),
                )
                .await
            }
            AnyOp::NetworkConditions(a) => self.network_conditions(n, &page, &a).await,
            AnyOp::Emulate(a) => {
                let done = bounded(timeout_ms, "emulating", self.emulate(n, &page, &a)).await?;
                serde_json::to_value(done).map_err(|e| ToolError::internal(e.to_string()))
            }
            AnyOp::EvidenceBundle(a) => {
                bounded(60_000, "the evidence bundle", self.evidence_bundle(n, &page, &a)).await
            }
            AnyOp::WaitLoad(_) => {
                self.wait_loaded(&page, timeout_ms).await?;
                let url = page.url().await.ok().flatten().unwrap_or_default();
                Ok(json!({"url": url}))
            }
            AnyOp::Capture(a) => {
                let shot = self.capture(&page, &a).await?;
                serde_json::to_value(shot).map_err(|e| ToolError::internal(e.to_string()))
            }
            AnyOp::NetworkIdle(a) => {
                let quiet = a.quiet_ms.unwrap_or(100).min(10_000);
                let idle = self.network_quiet(n, quiet, u64::from(timeout_ms)).await;
                Ok(json!({"idle": idle}))
            }
            AnyOp::Console(a) => {
                self.console_settled(n, &page).await;
                Ok(self.console_json(n, &a))
            }
            // Each check is bounded too (a JS condition may never settle).
            AnyOp::Wait(a) => {
                bounded(
                    timeout_ms.saturating_add(1_000),
                    "the wait",
                    self.wait(n, &page, &a, timeout_ms),
                )
                .await
            }
            // The watch starts once the element can take the event: requests
            // from now on are the action's, not those of the wait before.
            AnyOp::Actionable(Actionable { watch: Some(true), .. }) => {
                let v = self.run_op(n, &page, op.name(), args, timeout_ms).await?;
                if v.get("token").is_some_and(Value::is_string)
                    && let Some(w) = self.tab_watch(n)
                {
                    w.action_begins();
                }
                Ok(v)
            }
            AnyOp::Watch(_) | AnyOp::DragInfo(_) => {
                if let Some(w) = self.tab_watch(n) {
                    w.action_begins();
                }
                self.run_op(n, &page, op.name(), args, timeout_ms).await
            }
            AnyOp::Settle(a) => {
                let settled = self.settle_action(n, &page, a, timeout_ms).await?;
                serde_json::to_value(settled).map_err(|e| ToolError::internal(e.to_string()))
            }
            // A failed action's watch ends: no settle answers it.
            AnyOp::Unwatch(_) => {
                if let Some(w) = self.tab_watch(n) {
                    w.action_answered();
                }
                self.run_op(n, &page, op.name(), args, timeout_ms).await
            }
            AnyOp::Wall(_) => {
                if let Some(seen) = self.inner.tabs.with(n, |t| t.wall_at_load.take()).flatten() {
                    return Ok(seen);
                }
                let (wall, _) =
                    bounded(timeout_ms, "the wall probe", self.wall_and_title(&page)).await?;
                Ok(wall)
            }
            // The table says which operations the page library runs (a test
            // holds page.js to it); any other reaching here has no handler.
            op if !super::ops::page_op(op.name()).is_some_and(|o| o.library) => {
                Err(ToolError::internal(format!("the host has no handler for {}", op.name())))
            }
            op => self.run_op(n, &page, op.name(), args, timeout_ms).await,
        }
    }

    /// What an action changed, once what it started is done: the page's DOM
    /// settles, then the requests the action started (fetch, XHR, scripts,
    /// documents; not those begun before it, nor websockets) end, bounded by
    /// `wait_ms` (default 3 s), and the DOM settles again with their effects.
    /// Still pending at the bound: named in `pending`.
    async fn settle_action(
        &self,
        n: TabId,
        page: &Page,
        args: Settle,
        timeout_ms: u32,
    ) -> Result<Settled, ToolError> {
        let r = self.settle_action_once(n, page, args, timeout_ms).await;
        if let Some(w) = self.tab_watch(n) {
            w.action_answered();
        }
        r
    }

    /// One look of the page library's `settle`; a document that went away
    /// is a navigation.
    async fn settle_look(
        &self,
        n: TabId,
        page: &Page,
        args: &Settle,
        timeout_ms: u32,
    ) -> Result<Settled, ToolError> {
        let a = page_ops::to_args(args).map_err(ToolError::internal)?;
        match self.run_op(n, page, Settle::NAME, a, timeout_ms).await {
            Err(e) if document_went_away(&e) => Ok(Settled::navigated(args.token.clone())),
            other => page_ops::from_output::<Settle>(other?).map_err(ToolError::internal),
        }
    }

    /// [`Self::settle_action`]'s work, before its answer ends the action.
    async fn settle_action_once(
        &self,
        n: TabId,
        page: &Page,
        mut args: Settle,
        timeout_ms: u32,
    ) -> Result<Settled, ToolError> {
        let watch = self.tab_watch(n);
        let since = watch.as_ref().and_then(|w| lock(&w.action).take());
        let budget = Duration::from_millis(args.wait_ms.unwrap_or(3_000));
        let start = Instant::now();
        args.keep = Some(since.is_some());
        let mut d = self.settle_look(n, page, &args, timeout_ms).await?;
        // (The requests the page saw the action send: for the wait below.)
        let sent = d.sent.take();
        let (Some(w), Some(since)) = (watch, since) else {
            return Ok(d);
        };
        if d.navigated {
            return Ok(d);
        }
        // The requests the page sent meanwhile (its count): their events may
        // still be on their way here; wait (bounded) until they have come.
        if let Some(sent) = sent {
            let by = Instant::now() + SENT_SEEN;
            while w.action_requests(since).0 < sent && Instant::now() < by {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
        let mut waited = false;
        let pending = loop {
            let (_, pending) = w.action_requests(since);
            if pending.is_empty() || start.elapsed() >= budget {
                break pending;
            }
            waited = true;
            // Looked at often: the answer follows the last response closely.
            tokio::time::sleep(Duration::from_millis(2)).await;
        };
        // An answer over a websocket: its frames, until they pause.
        if pending.is_empty() && w.answer_by_socket(since.0, w.action_requests(since).0) {
            let first_by = Instant::now() + WS_FIRST;
            loop {
                let last = w.socket_frame_after(since.0);
                if start.elapsed() >= budget
                    || (last.is_none() && Instant::now() >= first_by)
                    || last.is_some_and(|t| t.elapsed() >= WS_PAUSE)
                {
                    waited |= last.is_some();
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        if waited && pending.is_empty() {
            // Their effects: the DOM settles again (the watch counts from the
            // action's start).
            args.keep = Some(false);
            d = self.settle_look(n, page, &args, timeout_ms).await?;
            d.sent = None;
        } else if let Some(watch) = d.watch.take() {
            // The answer is known: the watch ends without holding it (a round
            // trip). Only that watch ends, should the next action's begin first.
            let end = page_ops::Unwatch { watch: Some(watch), token: args.token.clone() };
            self.unwatch_later(n, page, &end, timeout_ms)?;
        }
        let (requests, _) = w.action_requests(since);
        if requests > 0 {
            d.requests = Some(requests);
            if d.delivered {
                d.changed = true;
            }
        }
        d.pending = pending;
        Ok(d)
    }

    /// `end` (a watch's number and its document's token) in the background
    /// (best effort: a page that went away has no watch left).
    fn unwatch_later(
        &self,
        n: TabId,
        page: &Page,
        end: &page_ops::Unwatch,
        timeout_ms: u32,
    ) -> Result<(), ToolError> {
        let args = page_ops::to_args(end).map_err(ToolError::internal)?;
        let (me, page) = (self.clone(), page.clone());
        // Tab `n` is known: nothing in it asks whose call it is.
        tokio::spawn(async move {
            if let Err(e) = me.run_op(n, &page, page_ops::Unwatch::NAME, args, timeout_ms).await {
                tracing::debug!(error = %e.message, "unwatch after settle");
            }
        });
        Ok(())
    }

    async fn wait(
        &self,
        n: TabId,
        page: &Page,
        args: &Wait,
        timeout_ms: u32,
    ) -> Result<Value, ToolError> {
        let kind = args.kind.as_str();
        let value = args.value.as_deref().unwrap_or("");
        let start = Instant::now();
        let deadline = start + Duration::from_millis(u64::from(timeout_ms));
        let key = json!(page_library_key());
        // A URL pattern is checked before the wait begins (ochre's one rule:
        // ochre_protocol::url).
        let url = match kind {
            "url_match" => Some(
                UrlPattern::parse(value)
                    .map_err(|why| ToolError::invalid_argument("value", why))?,
            ),
            _ => None,
        };
        let mut w = WaitFor {
            kind,
            value,
            visible: args.visible,
            start,
            token_expr: format!("window[{key}] ? window[{key}].token : null"),
            first: None,
            url,
        };
        // The document we start on, to notice the next one.
        let given = args.token.clone();
        if kind == "navigation" {
            w.first = match given {
                // The document the caller acted in (it may already be gone).
                Some(t) => Some(t),
                None => {
                    self.run_op(n, page, "ping", json!({}), timeout_ms).await?;
                    token_of(self.eval(page, &w.token_expr, true).await?)
                }
            };
        }
        if kind == "function" {
            self.check_function_parses(page, value).await?;
        }
        loop {
            if let Some(done) = self.wait_once(n, page, &w, timeout_ms).await? {
                return Ok(done);
            }
            if Instant::now() >= deadline {
                return Err(ToolError::timeout(format!(
                    "waited {timeout_ms} ms for {kind} {value:?}; it did not happen"
                ))
                .with("timeoutMs", timeout_ms));
            }
            tokio::time::sleep(Duration::from_millis(40)).await;
        }
    }

    /// A `function` wait whose function has a syntax error is the caller's
    /// mistake: say so at once.
    async fn check_function_parses(&self, page: &Page, value: &str) -> Result<(), ToolError> {
        let probe = format!("(() => {{ const f = ({value}\n); return 1; }})");
        match self.eval(page, &probe, true).await {
            Err(e)
                if e.code == Code::JsError
                    && e.details.get("exception").and_then(Value::as_str)
                        == Some("SyntaxError") =>
            {
                Err(ToolError::invalid_argument(
                    "value",
                    format!(
                        "the function does not parse: {}",
                        e.message.lines().next().unwrap_or("")
                    ),
                ))
            }
            _ => Ok(()),
        }
    }

    /// One look at what a wait waits for: `Some(answer)` once it happened.
    async fn wait_once(
        &self,
        n: TabId,
        page: &Page,
        w: &WaitFor<'_>,
        timeout_ms: u32,
    ) -> Result<Option<Value>, ToolError> {
        let (kind, value, start) = (w.kind, w.value, w.start);
        let met = match kind {
            "timeout" => {
                start.elapsed() >= Duration::from_millis(value.parse::<u64>().unwrap_or(0))
            }
            "selector" | "selector_hidden" => {
                let check = json!({"type": kind, "value": value, "visible": w.visible});
                match self.run_op(n, page, "check", check, timeout_ms).await {
                    Ok(v) => v == Value::Bool(true),
                    Err(e) if e.code == Code::InvalidArgument => return Err(e),
                    Err(_) => false,
                }
            }
            "function" => {
                let expr = format!(
                    "(async () => {{ const f = ({value}\n); return !!(typeof f === 'function' ? await f() : await f); }})()"
                );
                matches!(self.eval(page, &expr, true).await, Ok(Value::Bool(true)))
            }
            "navigation" => {
                // A link to a file starts a download and the page stays.
                let since = start.checked_sub(Duration::from_secs(3)).unwrap_or(start);
                if self.download_started_since(n, since) {
                    let url = page.url().await.ok().flatten().unwrap_or_default();
                    return Ok(Some(
                        json!({"met": true, "download": true, "elapsed_ms": start.elapsed().as_millis() as u64, "url": url}),
                    ));
                }
                let now = self.eval(page, &w.token_expr, true).await.ok().and_then(token_of);
                now != w.first && self.loaded(page).await
            }
            "url_match" => {
                let url = page.url().await.ok().flatten().unwrap_or_default();
                w.url.as_ref().is_some_and(|p| p.matches(&url))
            }
            other => {
                return Err(ToolError::invalid_argument(
                    "type",
                    format!("unknown wait type {other:?}"),
                ));
            }
        };
        if !met {
            return Ok(None);
        }
        let url = page.url().await.ok().flatten().unwrap_or_default();
        Ok(Some(json!({"met": true, "elapsed_ms": start.elapsed().as_millis() as u64, "url": url})))
    }

    /// Check files against the allowed roots: their canonical paths.
    pub fn allowed_files(&self, paths: &[String]) -> Result<Vec<PathBuf>, ToolError> {
        let o = &self.inner.options;
        let canon = |d: &PathBuf| d.canonicalize().ok();
        let roots: Vec<PathBuf> = o.file_roots.iter().filter_map(canon).collect();
        let private: Vec<PathBuf> =
            o.private_dirs.iter().chain(o.user_data_dir.iter()).filter_map(canon).collect();
        let downloads = o.downloads_dir.as_ref().and_then(canon);
        let temp = std::env::temp_dir().canonicalize().ok();
        let cwd = std::env::current_dir().unwrap_or_default();
        let mut out = Vec::with_capacity(paths.len());
        for p in paths {
            let denied = |why: String| ToolError::permission_denied(why).with("path", p.as_str());
            let outside = || {
                let shown: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
                denied(format!(
                    "{p:?} is outside the allowed roots ({}); the operator can add a dir with --allow-file-root",
                    if shown.is_empty() { "none".to_owned() } else { shown.join(", ") }
                ))
            };
            // The roots are checked before the file is looked at: whether a file
            // outside them exists is not told.
            let lexical = lexical_absolute(&cwd, Path::new(p));
            let lexically_in = roots.iter().any(|r| lexical.starts_with(r));
            let real = match lexical.canonicalize() {
                Ok(r) => r,
                Err(e) if lexically_in => {
                    return Err(ToolError::file_not_found(format!("cannot use {p:?}: {e}"))
                        .with("path", p.as_str()));
                }
                Err(_) => return Err(outside()),
            };
            // The closest root holding the file (after symlinks).
            let Some(root) =
                roots.iter().filter(|r| real.starts_with(r)).max_by_key(|r| r.components().count())
            else {
                return Err(outside());
            };
            let in_downloads = downloads.as_ref().is_some_and(|d| real.starts_with(d));
            let temp_profile = temp.as_ref().is_some_and(|t| {
                real.strip_prefix(t).ok().and_then(|r| r.components().next()).is_some_and(|c| {
                    c.as_os_str().to_string_lossy().starts_with(super::TEMP_PROFILE_PREFIX)
                })
            });
            if temp_profile || (!in_downloads && private.iter().any(|d| real.starts_with(d))) {
                return Err(denied(format!(
                    "{p:?} is ochre's own data (its data dir or the browser's profile); it is never given to a page"
                )));
            }
            if let Some(why) = hidden_or_credential(root, &real) {
                return Err(denied(format!(
                    "{p:?} is {why}; such files are given to a page only from an --allow-file-root that names the dir they are in"
                )));
            }
            if !real.is_file() {
                return Err(ToolError::file_not_found(format!("{p:?} is not a regular file"))
                    .with("path", p.as_str()));
            }
            out.push(real);
        }
        Ok(out)
    }

    /// Give files to a file input (a ref or a CSS selector).
    pub async fn set_files(
        &self,
        tab: Option<TabId>,
        target: &str,
        paths: &[String],
    ) -> Result<Vec<String>, ToolError> {
        self.guarded(tab, async {
            let files = self.allowed_files(paths)?;
            let (n, page) = self.page(tab).await?;
            let args = if target.starts_with("ax_") {
                json!({"ref": target})
            } else {
                json!({"selector": target})
            };
            // Checks the target (a file input, enabled) and gives a clear error if not.
            self.run_op(n, &page, "file_input", args.clone(), 10_000).await?;
            // In the input's own document: a cross-site frame has its own session.
            let (doc, object_id) = self.element(n, &page, args.clone(), 10_000).await?;
            if self.slot(self.slot_of_tab(n)).endpoint.is_some() {
                // A browser ochre attached to may run on another machine, where
                // these paths mean nothing: the bytes go through the page.
                let files = files_for_page(&files)?;
                let r = self
                    .doc_send(
                        &doc,
                        "Runtime.callFunctionOn",
                        json!({"functionDeclaration": PUT_FILES_FN, "objectId": object_id,
                               "arguments": [{"value": files}], "returnByValue": true}),
                    )
                    .await
                    .map_err(|e| cdp_error("cannot set the files", e.message))?;
                if let Some(x) = r.get("exceptionDetails") {
                    let why = x["exception"]["description"].as_str().unwrap_or("an exception");
                    return Err(cdp_error("cannot set the files", why));
                }
            } else {
                let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
                self.doc_send(
                    &doc,
                    "DOM.setFileInputFiles",
                    json!({"files": files, "objectId": object_id}),
                )
                .await
                .map_err(|e| cdp_error("cannot set the files", e.message))?;
            }
            let seen = self.run_op(n, &page, "files_of", args, 10_000).await?;
            Ok(seen
                .get("files")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
                .unwrap_or_default())
        })
        .await
    }
}

/// The most bytes `file_upload` sends through the page to a browser ochre
/// attached to (they travel base64-encoded in one CDP message).
const MAX_PAGE_UPLOAD: u64 = 50 << 20;

/// Makes `File`s of `files` (name, type, modified, base64 bytes) and gives them
/// to the input `this`, with the `input` and `change` events a user's choice
/// fires.
const PUT_FILES_FN: &str = "function (files) {
  const dt = new DataTransfer();
  for (const f of files) {
    const bin = atob(f.b64), bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    dt.items.add(new File([bytes], f.name, { type: f.type, lastModified: f.modified }));
  }
  this.files = dt.files;
  this.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
  this.dispatchEvent(new Event('change', { bubbles: true }));
  return this.files.length;
}";

/// The files (already allowed) as `PUT_FILES_FN` takes them.
fn files_for_page(files: &[PathBuf]) -> Result<Vec<Value>, ToolError> {
    use base64::Engine as _;
    let metas: Vec<Option<std::fs::Metadata>> = files.iter().map(|f| f.metadata().ok()).collect();
    let total: u64 = metas.iter().flatten().map(std::fs::Metadata::len).sum();
    if total > MAX_PAGE_UPLOAD {
        return Err(ToolError::invalid_argument(
            "paths",
            format!(
                "the files are {total} bytes; a browser ochre attached to gets files through the page, at most {MAX_PAGE_UPLOAD} bytes in all"
            ),
        ));
    }
    files
        .iter()
        .zip(&metas)
        .map(|(f, meta)| {
            let bytes = std::fs::read(f).map_err(|e| {
                ToolError::file_not_found(format!("cannot read {}: {e}", f.display()))
            })?;
            let modified = meta
                .as_ref()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_millis() as u64);
            let name = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            Ok(json!({
                "name": name,
                "type": ochre_protocol::mime::of(&name).unwrap_or(""),
                "modified": modified,
                "b64": base64::engine::general_purpose::STANDARD.encode(bytes),
            }))
        })
        .collect()
}

/// `path` made absolute against `cwd`, with `.` and `..` resolved by the
/// text alone (no symlinks followed, nothing looked up).
fn lexical_absolute(cwd: &Path, path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in cwd.join(path).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Names of files that hold credentials without a leading dot.
const CREDENTIAL_FILES: &[&str] =
    &["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk"];

/// Why a file under `root` is not given to a page unless a root names where it
/// is: a dotfile or a file in a dot dir below the root (`.ssh`, `.aws`,
/// `.netrc`, `.env`, ...), or an SSH private key. A root that is itself in a dot
/// dir (`--allow-file-root ~/.ssh`) names it.
fn hidden_or_credential(root: &Path, real: &Path) -> Option<&'static str> {
    let dotted = |c: std::path::Component<'_>| c.as_os_str().to_string_lossy().starts_with('.');
    let rel = real.strip_prefix(root).ok()?;
    if rel.components().any(dotted) {
        return Some("a dotfile (or in a dot dir)");
    }
    let name = real.file_name()?.to_string_lossy();
    if CREDENTIAL_FILES.contains(&name.as_ref()) && !root.components().any(dotted) {
        return Some("an SSH private key");
    }
    None
}

impl BrowserManager {
    /// The profile in use, without launching anything.
    async fn profile_status(&self) -> Value {
        let o = &self.inner.options;
        // From the slot's record, not its session: a call may hold that.
        let home = self.slot(self.home().unwrap_or(0));
        let running = home.connected();
        let temp_dir = home.profile_dir().map(|p| p.display().to_string());
        if !o.endpoints.is_empty() {
            let endpoints = serde_json::to_value(self.pool_status().await).unwrap_or_default();
            return json!({
                "mode": "attach", "endpoints": endpoints, "running": running,
                "persistent": true, "userDataDir": null,
                "note": "attached to a browser ochre did not start: its profile belongs to it",
            });
        }
        let persistent = o.user_data_dir.is_some();
        let dir = match &o.user_data_dir {
            Some(d) => Some(d.display().to_string()),
            None => temp_dir,
        };
        let executable = self.find_executable().ok().map(|p| p.display().to_string());
        json!({
            "mode": "managed", "running": running, "persistent": persistent,
            "userDataDir": dir, "headless": !o.headed, "executable": executable,
            "launches": self.launches(),
        })
    }

    /// Profiles in the user-data-dir: from Chrome's `Local State`, else the dirs.
    async fn list_profiles(&self) -> Value {
        let status = self.profile_status().await;
        let Some(dir) = status["userDataDir"].as_str().map(PathBuf::from) else {
            let why = if status["mode"] == "attach" {
                "attached to a browser ochre did not start; its profiles are not visible to ochre"
            } else {
                "the browser has not started yet and uses a fresh temporary profile (pass --user-data-dir for a persistent one)"
            };
            return json!({"userDataDir": null, "profiles": [], "note": why});
        };
        let mut profiles = Vec::new();
        let local_state = std::fs::read_to_string(dir.join("Local State"))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok());
        if let Some(Value::Object(cache)) =
            local_state.as_ref().and_then(|v| v.pointer("/profile/info_cache"))
        {
            for (d, info) in cache {
                profiles.push(
                    json!({"dir": d, "name": info.get("name").cloned().unwrap_or(Value::Null)}),
                );
            }
        } else if let Ok(rd) = std::fs::read_dir(&dir) {
            let mut dirs: Vec<String> = rd
                .flatten()
                .filter(|e| e.path().join("Preferences").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            dirs.sort();
            profiles = dirs.into_iter().map(|d| json!({"dir": d, "name": null})).collect();
        }
        json!({"userDataDir": dir.display().to_string(), "persistent": status["persistent"], "profiles": profiles})
    }

    /// Cookies of the page's site: get, set, delete, clear.
    async fn cookies(&self, page: &Page, a: &Cookies) -> Result<Value, ToolError> {
        use chromiumoxide::cdp::browser_protocol::network::{
            DeleteCookiesParams, GetCookiesParams, SetCookieParams,
        };
        let url = page.url().await.ok().flatten().unwrap_or_default();
        let web = is_web(&url);
        if !web && a.domain.is_none() {
            return Err(ToolError::storage_unavailable(format!(
                "the tab is at {url:?}, which has no cookies; navigate to a site or pass `domain`"
            )));
        }
        let get = |page: &Page| {
            let url = url.clone();
            let page = page.clone();
            async move {
                let p: GetCookiesParams = cdp_params(json!({"urls": [url]}))?;
                let r = page.execute(p).await.map_err(|e| cdp_error("cannot read cookies", e))?;
                Ok::<_, ToolError>(r.result.cookies.clone())
            }
        };
        let action = a.action.as_str();
        match action {
            "get" => {
                let cookies = if web { get(page).await? } else { Vec::new() };
                let name = a.name.as_deref();
                let list: Vec<Value> = cookies
                    .iter()
                    .filter(|c| name.is_none_or(|n| c.name == n))
                    .map(public_cookie)
                    .collect();
                Ok(json!({"cookies": list}))
            }
            "set" => {
                let p = cookie_to_set(a, &url);
                let params: SetCookieParams = cdp_params(p)?;
                page.execute(params).await.map_err(|e| {
                    let refused = ToolError::invalid_argument(
                        "name",
                        format!("the browser refused the cookie (check domain, secure and sameSite): {e}"),
                    );
                    super::with_cdp_cause(refused, &e)
                })?;
                Ok(json!({"set": a.name}))
            }
            "delete" | "clear" => {
                let names: Vec<String> = if action == "delete" {
                    vec![a.name.clone().unwrap_or_default()]
                } else if web {
                    get(page).await?.into_iter().map(|c| c.name).collect()
                } else {
                    Vec::new()
                };
                for name in &names {
                    let mut p = json!({"name": name});
                    match &a.domain {
                        Some(d) => p["domain"] = json!(d),
                        None => p["url"] = json!(url),
                    }
                    if let Some(path) = &a.path {
                        p["path"] = json!(path);
                    }
                    let params: DeleteCookiesParams = cdp_params(p)?;
                    page.execute(params)
                        .await
                        .map_err(|e| cdp_error("cannot delete the cookie", e))?;
                }
                Ok(json!({"deleted": names.len()}))
            }
            other => Err(ToolError::invalid_argument(
                "action",
                format!("unknown cookies action {other:?}"),
            )),
        }
    }
}

impl BrowserManager {
    /// Send a raw CDP command to a tab's page session (the caller checked the
    /// domain).
    pub async fn cdp_send(
        &self,
        tab: Option<TabId>,
        method: &str,
        params: Value,
    ) -> Result<Value, ToolError> {
        self.guarded(tab, async {
            if !params.is_object() {
                return Err(ToolError::invalid_argument(
                    "params",
                    "CDP params must be a JSON object",
                ));
            }
            let (_, page) = self.page(tab).await?;
            raw_command(&page, method, params).await
        })
        .await
    }
}

/// A cookie as `cookies get` shows it.
fn public_cookie(c: &chromiumoxide::cdp::browser_protocol::network::Cookie) -> Value {
    let mut v = serde_json::to_value(c).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.retain(|k, _| {
            matches!(
                k.as_str(),
                "name"
                    | "value"
                    | "domain"
                    | "path"
                    | "expires"
                    | "httpOnly"
                    | "secure"
                    | "sameSite"
                    | "session"
            )
        });
    }
    v
}

/// `Network.setCookie`'s params for `cookies set` on a page at `url`.
fn cookie_to_set(a: &Cookies, url: &str) -> Value {
    let mut p = json!({"name": a.name, "value": a.value.as_deref().unwrap_or_default()});
    match &a.domain {
        Some(d) => {
            p["domain"] = json!(d);
            p["path"] = json!(a.path.as_deref().unwrap_or("/"));
        }
        None => {
            p["url"] = json!(url);
            if let Some(path) = &a.path {
                p["path"] = json!(path);
            }
        }
    }
    for (k, b) in [("secure", a.secure), ("httpOnly", a.http_only)] {
        if let Some(b) = b {
            p[k] = json!(b);
        }
    }
    if let Some(ss) = &a.same_site {
        p["sameSite"] = json!(ss);
    }
    if let Some(e) = a.expires {
        p["expires"] = json!(e);
    }
    p
}

/// What a console fence logs (then its number).
const CONSOLE_FENCE: &str = "\u{1}ochre-console-fence:";

/// The number of a console fence, if `ev` is one.
fn fence_of(ev: &EventConsoleApiCalled) -> Option<u64> {
    match ev.args.first().and_then(|a| a.value.as_ref()) {
        Some(Value::String(s)) => s.strip_prefix(CONSOLE_FENCE)?.parse().ok(),
        _ => None,
    }
}

/// Keep a tab's console messages and exceptions in its watch (a console
/// fence wakes who waits for it).
async fn watch_console(page: &Page, w: &Arc<TabWatch>) {
    on_event(page, w, |w, ev: &EventConsoleApiCalled| {
        if let Some(id) = fence_of(ev) {
            let mut fence = lock(&w.console_fence);
            *fence = (*fence).max(id);
            drop(fence);
            w.fence_passed.notify_waiters();
            return;
        }
        let text = ev
            .args
            .iter()
            .map(|a| match &a.value {
                Some(Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
                None => a.description.clone().unwrap_or_default(),
            })
            .collect::<Vec<_>>()
            .join(" ");
        let level = serde_json::to_value(&ev.r#type)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "log".into());
        w.push_console(&level, text);
    })
    .await;
    on_event(page, w, |w, ev: &EventExceptionThrown| {
        let d = &ev.exception_details;
        let text = d
            .exception
            .as_ref()
            .and_then(|e| e.description.clone())
            .unwrap_or_else(|| d.text.clone());
        w.push_console("exception", text);
    })
    .await;
}

/// Follow a tab's requests in its watch: the network capture, what counts for
/// a quiet network, websocket frames.
async fn watch_network(page: &Page, w: &Arc<TabWatch>) {
    on_event(page, w, |w, ev: &EventRequestWillBeSent| {
        let kind = ev
            .r#type
            .as_ref()
            .and_then(|t| serde_json::to_value(t).ok())
            .and_then(|v| v.as_str().map(str::to_owned));
        w.cap_request(ev.request_id.inner(), &ev.request.url, &ev.request.method, kind);
        w.net_document(ev);
        // What a quiet network means for reading a page: no document,
        // script or data request (XHR, fetch) in flight. Images, fonts and
        // styles load lazily and do not change what tools read.
        let counts = matches!(
            ev.r#type,
            Some(
                ResourceType::Document
                    | ResourceType::Script
                    | ResourceType::Xhr
                    | ResourceType::Fetch
            )
        );
        if counts && !ev.request.url.starts_with("data:") {
            w.net_start(ev.request_id.inner().clone(), &ev.request.url);
        }
    })
    .await;
    on_event(page, w, |w, _: &EventWebSocketFrameReceived| w.socket_frame()).await;
    on_event(page, w, |w, _: &EventWebSocketFrameSent| {
        lock(&w.net).ws_sent = Some(Instant::now());
    })
    .await;
    on_event(page, w, |w, ev: &EventLoadingFinished| {
        w.net_end(ev.request_id.inner());
        w.cap_finished(ev.request_id.inner(), Some(ev.encoded_data_length), None);
    })
    .await;
    on_event(page, w, |w, ev: &EventRequestServedFromCache| {
        w.net_end(ev.request_id.inner());
        w.cap_cached(ev.request_id.inner());
    })
    .await;
    on_event(page, w, |w, ev: &EventResponseReceived| {
        w.cap_response(
            ev.request_id.inner(),
            ev.response.status,
            &ev.response.mime_type,
            &ev.response.url,
        );
    })
    .await;
    on_event(page, w, |w, ev: &EventLoadingFailed| {
        w.net_end(ev.request_id.inner());
        w.cap_finished(ev.request_id.inner(), None, Some(ev.error_text.clone()));
    })
    .await;
}

/// Hand each event `T` of `page` to `f` with the tab's watch, for as long as
/// the page sends them.
async fn on_event<T>(page: &Page, w: &Arc<TabWatch>, f: fn(&TabWatch, &T))
where
    T: chromiumoxide::cdp::IntoEventKind + Unpin + Send + Sync + 'static,
{
    if let Ok(mut events) = page.event_listener::<T>().await {
        let w = w.clone();
        tokio::spawn(async move {
            while let Some(ev) = events.next().await {
                f(&w, &ev);
            }
        });
    }
}

/// What a `wait_for` waits for.
struct WaitFor<'a> {
    kind: &'a str,
    value: &'a str,
    visible: Option<bool>,
    start: Instant,
    /// Reads the document's token (a new document has a new one).
    token_expr: String,
    /// `navigation`: the token of the document the wait started on.
    first: Option<String>,
    /// `url_match`: the pattern.
    url: Option<UrlPattern>,
}

fn token_of(v: Value) -> Option<String> {
    v.as_str().map(str::to_owned)
}

/// The document an evaluation ran in was replaced (a navigation) or its frame
/// went away before the evaluation returned (`cdp_error`), or the page library
/// found a document the browser has only just created.
fn document_went_away(e: &ToolError) -> bool {
    e.code == Code::DocumentLoading
}

/// Let the workers a tab starts run from their first line. chromiumoxide
/// asks Chromium to hold each new worker, frame and service worker of a page
/// until it is told to run (`waitForDebuggerOnStart`), then tells a service
/// worker to run and detaches from it in the same breath: the detach wins
/// and the service worker never runs, so `navigator.serviceWorker.register`
/// never settles on any site. ochre does nothing in that pause, so it asks
/// for none: auto-attach stays on (chromiumoxide follows frames by it), the
/// hold goes.
async fn workers_start_unpaused(page: &Page) {
    use chromiumoxide::cdp::browser_protocol::target::SetAutoAttachParams;
    let params = SetAutoAttachParams::builder()
        .auto_attach(true)
        .wait_for_debugger_on_start(false)
        .flatten(true)
        .build();
    match params {
        Ok(params) => {
            if let Err(e) = page.execute(params).await {
                tracing::debug!(error = %e, "a new tab's workers may start held");
            }
        }
        Err(e) => tracing::debug!(error = %e, "auto-attach parameters"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_are_rewritten_and_checked() {
        let mut a = json!({"ref": "ax_12", "refs": {"ax_3": "x"}, "value": "ax_9"});
        let r = take_refs(&mut a).expect("refs");
        assert_eq!(r, vec![RefId(12), RefId(3)]);
        assert_eq!(a["ref"], json!(12));
        assert_eq!(a["value"], json!("ax_9"));
        let mut bad = json!({"ref": "12"});
        assert_eq!(take_refs(&mut bad).expect_err("bad").code, Code::InvalidArgument);
    }
}
