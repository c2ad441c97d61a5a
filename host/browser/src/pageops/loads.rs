//! A document's load: the report it sends at its load event (the login-wall
//! evidence, its title, then how far the work its load set going is), the
//! settle a navigation leaves owed to the tab's next call, the waits for a load.

use super::*;

/// A URL without its fragment: the document it names.
fn page_of(url: &str) -> &str {
    url.split('#').next().unwrap_or_default()
}

/// A document's report after its load (see [`load_report_js`]), if `v` is
/// one.
pub(super) fn after_load(v: &Value) -> Option<AfterLoad> {
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
pub(super) fn is_web(url: &str) -> bool {
    url.starts_with("http://") || url.starts_with("https://")
}

/// The `wall` page operation's probe (an expression; see `wall.js`).
const WALL_JS: &str = include_str!("../wall.js");

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
  const remove = proto.removeEventListener;
  // (Set below, once the pending work is counted.)
  let received = () => {};
  // A port's message listeners tell the tracker a message came (see `inbox`).
  const portListeners = new WeakMap();
  const onPort = (target, type, listener) =>
    type === 'message' && typeof listener === 'function' && !!window.MessagePort && target instanceof MessagePort;
  // What listens for a scroll (`scroll`, `scrollend`): the settle waits a frame
  // after a scroll it may handle (see `scrollHeard` in the page library).
  const scrolls = new WeakSet();
  Object.defineProperty(seen, 'scrolls', { value: scrolls });
  const wrapped = { addEventListener(type, listener) {
    if (this && this.nodeType === 1 && kinds.has(type)) seen.add(this);
    if (this && (type === 'scroll' || type === 'scrollend')) scrolls.add(this);
    if (onPort(this, type, listener)) {
      let g = portListeners.get(listener);
      if (!g) {
        g = function () { received(); return Reflect.apply(listener, this, arguments); };
        portListeners.set(listener, g);
      }
      const args = Array.prototype.slice.call(arguments);
      args[1] = g;
      return Reflect.apply(add, this, args);
    }
    return Reflect.apply(add, this, arguments);
  } }.addEventListener;
  const unwrapped = { removeEventListener(type, listener) {
    if (onPort(this, type, listener) && portListeners.has(listener)) {
      const args = Array.prototype.slice.call(arguments);
      args[1] = portListeners.get(listener);
      return Reflect.apply(remove, this, args);
    }
    return Reflect.apply(remove, this, arguments);
  } }.removeEventListener;
  const source = Function.prototype.toString;
  const natives = new WeakMap([[wrapped, add], [unwrapped, remove]]);
  const toString = { toString() { return Reflect.apply(source, natives.get(this) || this, []); } }.toString;
  natives.set(toString, source);
  Object.defineProperty(Function.prototype, 'toString', { value: toString, writable: true, configurable: true, enumerable: false });
  Object.defineProperty(proto, 'addEventListener', { value: wrapped, writable: true, configurable: true, enumerable: false });
  Object.defineProperty(proto, 'removeEventListener', { value: unwrapped, writable: true, configurable: true, enumerable: false });
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
  // Shadow roots, open and closed, as they are attached (weakly): a
  // document's `getAnimations()` lists none of its shadow trees' animations
  // (a web component's panel that slides or fades: Shoelace's dropdown), so
  // the page library asks each root (see `allAnimations`).
  const roots = new Set();
  Object.defineProperty(seen, 'roots', { value: roots });
  const shadow = Element.prototype.attachShadow;
  if (shadow && window.WeakRef) {
    const known = new WeakSet();
    const keep = (r) => { if (!known.has(r)) { known.add(r); roots.add(new WeakRef(r)); } };
    const attachingShadow = { attachShadow() {
      const r = Reflect.apply(shadow, this, arguments);
      keep(r);
      return r;
    } }.attachShadow;
    natives.set(attachingShadow, shadow);
    Object.defineProperty(Element.prototype, 'attachShadow', { value: attachingShadow, writable: true, configurable: true, enumerable: false });
    // Roots the parser attached, which no attachShadow call shows: found in
    // what it parsed (open ones; 20,000 elements at most a call), the
    // document once parsed (see below) and the markup a script
    // hands it later (`setHTMLUnsafe` with a `<template shadowrootmode>`).
    const parsedInto = (top) => {
      let left = 20000;
      const walk = (n) => {
        for (const el of n.querySelectorAll('*')) {
          if (--left < 0) return;
          if (el.shadowRoot) { keep(el.shadowRoot); walk(el.shadowRoot); }
        }
      };
      walk(top);
    };
    // The document's own, once it is parsed: looked for while the page is
    // idle (until the idle time left is under 1 ms, looked at every 256
    // elements: no task of the page's waits long for it), and what is left
    // of them by the page library's first look that needs them
    // (`findRoots`): on a big document (20,000 elements) the whole walk
    // takes 5 ms, which an action's first look then need not spend. (The
    // idle callback is the browser's own: no work of the page's that an
    // action waits for.)
    // (`parsedFound`: the document walked, as a window may outlive its
    // first document; `all`, `next`: the elements of the one being walked,
    // and the next to look at.)
    let parsedFound = null, all = null, allOf = null, next = 0;
    // Whether the walk has ended (with `deadline`, it stops when that idle
    // time is nearly over).
    const advance = (deadline) => {
      if (parsedFound === document) return true;
      if (allOf !== document) {
        all = document.querySelectorAll('*');
        allOf = document;
        next = 0;
      }
      const end = Math.min(all.length, 20000), from = next;
      for (; next < end; next++) {
        if (deadline && next - from >= 256 && (next & 255) === 0 && deadline.timeRemaining() < 1) return false;
        const r = all[next].shadowRoot;
        if (r) { keep(r); parsedInto(r); }
      }
      parsedFound = document;
      all = null;
      return true;
    };
    Object.defineProperty(seen, 'findRoots', { value: () => { advance(null); } });
    const whenIdle = window.requestIdleCallback;
    if (typeof whenIdle === 'function') {
      // (A walk that throws, on a page that made an element's shadowRoot
      // throw, stops here: no error of ours reaches the page's handlers; the
      // page library's first look walks the rest.)
      const slice = (deadline) => {
        try {
          if (!advance(deadline)) Reflect.apply(whenIdle, window, [slice]);
        } catch (e) {}
      };
      const begin = () => Reflect.apply(whenIdle, window, [slice]);
      if (document.readyState === 'loading') Reflect.apply(add, document, ['DOMContentLoaded', begin, { once: true }]);
      else begin();
    }
    for (const proto of [Element.prototype, window.ShadowRoot && ShadowRoot.prototype]) {
      const set = proto && Object.getOwnPropertyDescriptor(proto, 'setHTMLUnsafe');
      if (!set || typeof set.value !== 'function') continue;
      const native = set.value;
      const setting = { setHTMLUnsafe() {
        const r = Reflect.apply(native, this, arguments);
        try { parsedInto(this); } catch (e) {}
        return r;
      } }.setHTMLUnsafe;
      natives.set(setting, native);
      Object.defineProperty(proto, 'setHTMLUnsafe', { value: setting, writable: true, configurable: true, enumerable: false });
    }
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
  // a banner's animation loop), begun while no action is watched: an action's
  // settle does not wait for them to stop. (A streak begun before an action
  // goes on counting while it is watched: a loop that began a frame before a
  // click is the page's, not the click's.)
  const moving = new WeakMap();
  Object.defineProperty(seen, 'moving', { value: moving });
  const mo = new MutationObserver((recs) => {
    const now = Date.now();
    for (let i = 0; i < recs.length && i < 50; i++) {
      if (recs[i].type === 'attributes') {
        const t = moving.get(recs[i].target);
        if (!t || now - t.last > 1000) {
          if (!seen.busy) moving.set(recs[i].target, { n: 1, last: now });
        } else if (now !== t.last) { t.n++; t.last = now; }
        continue;
      }
      if (seen.busy) continue;
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
  // open delay), an animation frame or an idle callback asked while one of its events was
  // dispatched (`busy`: an action is watched), or by such work in turn, three
  // links deep at most (a loop is not waited for). `pending.n` counts those
  // not run yet (of the action `pending.gen`): the action's answer waits for
  // them (see settle in the page library). A longer timer of the action's is
  // not waited for: `pending.later` holds its delay until it runs, so that
  // the answer can say it is still to come.
  const SHORT = 500;
  // `asked`: the animation frames the page has asked for and not had yet
  // (all of them, the action's or not: a loop's next frame may show what the
  // action changed); `bound`: the gen of the last action that set going work
  // only a frame or a later task shows (a message posted, an idle callback,
  // a scroll, a focus moved by script); `observed`: a ResizeObserver or an
  // IntersectionObserver watches something (it is called in a frame). See
  // `settle` in the page library: without any of them, what the action
  // changed is all there once its input was handled.
  // `loop`: the frames the action's chain asks past its third link (an
  // animation by script asks one a frame until it ends: jQuery's, GSAP's, a
  // hand-written one), not waited for as work (a loop may never end); while
  // one is asked, a look that saw no change counts toward the script's calm
  // (see settle).
  // `framing`: an animation frame's callback is running, until the
  // microtasks it queued have run (a mutation observer hears its changes
  // then): a change heard while it is set was drawn by a script in a frame
  // (see settle).
  const pending = {
    n: 0, gen: 0, later: new Map(), sent: 0, all: 0, asked: new Set(), loop: new Set(), bound: -1, observed: false,
    framing: false,
  };
  Object.defineProperty(seen, 'pending', { value: pending });
  // How far down such a chain the running code is (0: not in one); in a
  // loop's frame, the action that started the loop.
  let depth = 0, loopGen = -1;
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
  const micro = window.queueMicrotask;
  const unframing = () => { pending.framing = false; };
  // The page library's own waits and listeners use these (they are no work
  // of the page's).
  Object.defineProperty(seen, 'native', { value: { later, frame, listen: add } });
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
    if (typeof f !== 'function') return Reflect.apply(frame, this, arguments);
    let id;
    const g = function () {
      pending.asked.delete(id);
      pending.framing = true;
      // (Queued after the callback's changes, whose observers' call is queued at the first.)
      try { return Reflect.apply(f, this, arguments); } finally { Reflect.apply(micro, window, [unframing]); }
    };
    const link = ours();
    if (link > 3) {
      // The action's loop (see `loop`): its frames go on counting as the
      // loop's while the action that started it is watched.
      const gen = link === 4 ? pending.gen : loopGen;
      const looped = function () {
        pending.loop.delete(id);
        const outer = depth, og = loopGen;
        depth = 4;
        loopGen = gen;
        try { return Reflect.apply(g, this, arguments); } finally { depth = outer; loopGen = og; }
      };
      id = Reflect.apply(frame, this, [looped]);
      if (gen === pending.gen && pending.loop.size < 100) pending.loop.add(id);
    } else id = !link ? Reflect.apply(frame, this, [g]) : tracking(frames, (run) => Reflect.apply(frame, this, [run]), g, link);
    if (pending.asked.size < 10000) pending.asked.add(id);
    return id;
  } }.requestAnimationFrame;
  const cancelled = { cancelAnimationFrame(id) { pending.asked.delete(id); pending.loop.delete(id); done(frames, id); return Reflect.apply(unframe, this, arguments); } }.cancelAnimationFrame;
  for (const [w, o, name] of [[timeout, later, 'setTimeout'], [cleared, unlater, 'clearTimeout'], [animation, frame, 'requestAnimationFrame'], [cancelled, unframe, 'cancelAnimationFrame']]) {
    if (typeof o !== 'function') continue;
    natives.set(w, o);
    Object.defineProperty(w, 'length', { value: o.length });
    put(name, w);
  }
  // Work only a frame or a later task shows, asked by the action (`bound`).
  const wrap = (o, w) => {
    natives.set(w, o);
    Object.defineProperty(w, 'length', { value: o.length });
    return w;
  };
  const bind = (owner, name) => {
    const d = owner && Object.getOwnPropertyDescriptor(owner, name);
    if (!d || typeof d.value !== 'function') return;
    const o = d.value;
    const w = { [name]() { if (ours()) pending.bound = pending.gen; return Reflect.apply(o, this, arguments); } }[name];
    Object.defineProperty(owner, name, Object.assign({}, d, { value: wrap(o, w) }));
  };
  for (const name of ['postMessage', 'scroll', 'scrollTo', 'scrollBy']) bind(window, name);
  // An idle callback the action asked for is work it set going, as a short
  // timer is (it runs once the page is idle, or at its timeout).
  const idle = window.requestIdleCallback, unidle = window.cancelIdleCallback;
  if (typeof idle === 'function' && typeof unidle === 'function') {
    const idles = new Map();
    const asking = { requestIdleCallback(f) {
      const link = ours();
      if (typeof f !== 'function' || !link || link > 3) return Reflect.apply(idle, this, arguments);
      const rest = Array.prototype.slice.call(arguments, 1);
      return tracking(idles, (run) => Reflect.apply(idle, this, [run, ...rest]), f, link);
    } }.requestIdleCallback;
    const unasking = { cancelIdleCallback(id) { done(idles, id); return Reflect.apply(unidle, this, arguments); } }.cancelIdleCallback;
    put('requestIdleCallback', wrap(idle, asking));
    put('cancelIdleCallback', wrap(unidle, unasking));
  }
  // A message the action posted to a channel (a scheduler's next slice of
  // work) is work it set going until a port's listener gets one, or for
  // MESSAGE_MAX ms at most (a port handed to a worker or a frame never
  // answers here): `inbox` holds them in order.
  const MESSAGE_MAX = 100;
  const inbox = [];
  const settled = (t) => {
    if (t.done) return;
    t.done = true;
    if (t.gen === pending.gen) pending.n--;
  };
  received = () => {
    while (inbox.length) {
      const t = inbox.shift();
      if (!t.done) return settled(t);
    }
  };
  if (window.MessagePort) {
    const d = Object.getOwnPropertyDescriptor(MessagePort.prototype, 'postMessage');
    if (d && typeof d.value === 'function') {
      const o = d.value;
      const w = { postMessage() {
        if (ours() && inbox.length < 1000) {
          const t = { gen: pending.gen, done: false };
          pending.n++;
          inbox.push(t);
          Reflect.apply(later, window, [() => settled(t), MESSAGE_MAX]);
        }
        return Reflect.apply(o, this, arguments);
      } }.postMessage;
      Object.defineProperty(MessagePort.prototype, 'postMessage', Object.assign({}, d, { value: wrap(o, w) }));
    }
    const h = Object.getOwnPropertyDescriptor(MessagePort.prototype, 'onmessage');
    if (h && typeof h.set === 'function' && typeof h.get === 'function') {
      const given = new WeakMap();
      const acc = {
        get onmessage() { return given.has(this) ? given.get(this) : Reflect.apply(h.get, this, []); },
        set onmessage(f) {
          given.set(this, f);
          const g = typeof f === 'function' ? function () { received(); return Reflect.apply(f, this, arguments); } : f;
          Reflect.apply(h.set, this, [g]);
        },
      };
      const a = Object.getOwnPropertyDescriptor(acc, 'onmessage');
      Object.defineProperty(MessagePort.prototype, 'onmessage', Object.assign({}, h, { get: wrap(h.get, a.get), set: wrap(h.set, a.set) }));
    }
  }
  if (window.BroadcastChannel) bind(BroadcastChannel.prototype, 'postMessage');
  for (const name of ['scroll', 'scrollTo', 'scrollBy', 'scrollIntoView', 'scrollIntoViewIfNeeded']) bind(Element.prototype, name);
  bind(HTMLElement.prototype, 'focus');
  if (window.SVGElement) bind(SVGElement.prototype, 'focus');
  for (const name of ['scrollTop', 'scrollLeft']) {
    const d = Object.getOwnPropertyDescriptor(Element.prototype, name);
    if (!d || typeof d.set !== 'function') continue;
    const o = d.set;
    const w = Object.getOwnPropertyDescriptor({ set [name](v) { if (ours()) pending.bound = pending.gen; Reflect.apply(o, this, [v]); } }, name).set;
    Object.defineProperty(Element.prototype, name, Object.assign({}, d, { set: wrap(o, w) }));
  }
  for (const O of [window.ResizeObserver, window.IntersectionObserver]) {
    const d = O && Object.getOwnPropertyDescriptor(O.prototype, 'observe');
    if (!d || typeof d.value !== 'function') continue;
    const o = d.value;
    const w = { observe() { pending.observed = true; return Reflect.apply(o, this, arguments); } }.observe;
    Object.defineProperty(O.prototype, 'observe', Object.assign({}, d, { value: wrap(o, w) }));
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

impl TabWatch {
    /// The document the last navigation loaded has sent `all` requests by
    /// fetch and XHR (more than its report after its load said): wait for
    /// those too.
    fn expect_load_requests(&self, all: u64) {
        if let Some(r) = lock(&self.net).after_load.as_mut() {
            r.sent = Some(all);
        }
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
}

/// The `wall` page operation's answer from what `wall.js` read: the
/// evidence, and the document's HTTP status when it has one.
fn wall_seen(v: &mut Value) -> Value {
    let wall = v.get_mut("wall").map_or(Value::Null, Value::take);
    match v["status"].as_u64().filter(|s| (100..=999).contains(s)) {
        Some(status) => json!({ "wall": wall, "status": status }),
        None => json!({ "wall": wall }),
    }
}

impl BrowserManager {
    /// The load binding and the scripts every document of the tab gets before
    /// its own: the click tracker, the load report and, in a top-level
    /// document, the page library. Installed there, the library costs a
    /// fraction of a millisecond (the renderer compiles it once and reuses the
    /// code); evaluated into a loaded document, as the first page operation
    /// of a document the script did not reach still does, it is compiled
    /// anew each time (tens of milliseconds on a busy two-core machine).
    pub(super) async fn install_load_reports(&self, n: TabId, page: &Page) {
        use chromiumoxide::cdp::browser_protocol::page::AddScriptToEvaluateOnNewDocumentParams;
        use chromiumoxide::cdp::js_protocol::runtime::AddBindingParams;
        let loads = page.event_listener::<EventBindingCalled>().await.ok();
        self.inner.tabs.with(n, |t| t.loads = loads);
        if let Err(e) = page.execute(AddBindingParams::new(load_binding())).await {
            tracing::debug!(error = %e, "no load reports in this tab");
        }
        let library = crate::library::page_library();
        let script = format!(
            "{CLICK_TRACKER};\n{};\nif (window === window.top) try {{ void {library}; }} catch (e) {{}}",
            load_report_js()
        );
        if let Err(e) = page.execute(AddScriptToEvaluateOnNewDocumentParams::new(script)).await {
            tracing::debug!(error = %e, "no click tracker in this tab");
        }
    }

    /// After a navigation's load event the page may still be at work on its
    /// load: requests its load handlers started, a script they added, the
    /// page's answer to a response. That wait is owed, not made: `navigate`
    /// answers at the load event and the tab's next page call pays it (see
    /// [`Self::pay_settle`]), counted from the load.
    pub(crate) fn owe_settle(&self, n: TabId, loaded: Instant, url: &str) {
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
    pub(crate) async fn pay_settle(&self, n: TabId, page: &Page) {
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

    /// What the document at `url` in tab `n` reported at its load event, if it
    /// is the last report since the tab's previous call: the login-wall
    /// evidence (`{"wall": ...}`, the `wall` page operation's answer) and the
    /// title. Reports read here and not the last (or not of `url`: a document
    /// replaced since, or one that had no load event, such as a page from the
    /// back/forward cache) are dropped; what they say of the load's progress
    /// is kept in the tab's watch (for [`Self::pay_settle`]).
    pub(crate) fn load_report(&self, n: TabId, url: Option<&str>) -> Option<(Value, String)> {
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
        Some((wall_seen(&mut v), title))
    }

    /// The login-wall evidence (`{"wall": ...}`, the `wall` page operation's
    /// answer) and the document's title, in one script round trip.
    pub(crate) async fn wall_and_title(&self, page: &Page) -> Result<(Value, String), ToolError> {
        let mut v = self.eval(page, WALL_JS, true).await?;
        let title = match v.get_mut("title").map(Value::take) {
            Some(Value::String(t)) => t,
            _ => String::new(),
        };
        Ok((wall_seen(&mut v), title))
    }

    /// Wait (at most `ms`) until the tab's document has fully loaded.
    ///
    /// Each look is bounded on its own (a look sent while a navigation swaps
    /// the document may go unanswered; the next one asks the new document),
    /// and a timeout says what the last look saw.
    pub(crate) async fn wait_loaded(&self, page: &Page, ms: u32) -> Result<(), ToolError> {
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
    pub(crate) async fn loaded(&self, page: &Page) -> bool {
        matches!(
            self.eval(page, "document.readyState", true).await,
            Ok(Value::String(s)) if s == "complete"
        )
    }
}
