  // ---- watching what an action changes -------------------------------------------
  function elState(e) {
    return [e.checked, e.value, e.selectedIndex, ...Object.values(ariaStates(e)), e.isConnected].join('|');
  }
  // The ARIA states an action may flip on its target (or ElementInternals'),
  // each 'true', 'false' or null.
  function ariaStates(e) {
    const out = {};
    for (const k of ['expanded', 'pressed', 'checked', 'selected']) {
      out[k] = e.getAttribute ? aria(e, 'aria-' + k) : null;
    }
    return out;
  }
  // Whether a person can see a node's words: not a <style>'s CSS or a
  // <script>, nor hidden, transparent or clipped away.
  function shownNode(n) {
    const p = n.nodeType === 1 ? n : n.parentElement;
    return (
      !!p && !p.closest('style,script,noscript,template,[aria-hidden=true]') && (p.isConnected ? seenText(p) : false)
    );
  }
  function watch(e) {
    if (L.watch) unwatch();
    L.watchSeq++;
    const w = {
      id: L.watchSeq,
      target: e,
      muts: 0,
      dispatchMuts: 0,
      added: [],
      // Elements added while no person could see them (a dialog that fades
      // in): their words are told if they show once the action settles.
      unseen: [],
      delivered: false,
      url: location.href,
      title: document.title,
      since: Date.now(),
      state: elState(e),
      aria: ariaStates(e),
      value: e.value,
      focus: null,
    };
    const docs = new Set([document, e.ownerDocument]);
    w.observers = [];
    w.listeners = [];
    for (const d of docs) {
      const mo = new MutationObserver((recs) => {
        // When the target left the document: while one of ochre's input events
        // was being dispatched (a handler of the page's removed it: the
        // action's doing), or between them (a timer's doing).
        const inDispatch = dispatching(w);
        if (!w.gone && !e.isConnected) {
          w.gone = true;
          w.goneBetween = !inDispatch;
        }
        if (inDispatch) w.dispatchMuts++;
        for (const r of recs) {
          if (e.contains(r.target)) w.targetMuts = (w.targetMuts || 0) + 1;
          // A clock or countdown ticking on its own is not the action's doing.
          if (ticking(r.type === 'characterData' ? r.target.parentElement : r.target)) continue;
          // Nor is an element the page was moving by itself before it.
          const style = r.type === 'attributes' && r.attributeName === 'style' && r.target.nodeType === 1;
          if (style && movingBefore(r.target, w)) continue;
          w.muts++;
          // When the page last changed in a way that can move, size, show or
          // hide something (a colour's change cannot: see settle).
          if (!(style && colourOnly(r.oldValue, r.target.getAttribute('style')))) {
            w.mutAt = performance.now();
            // Drawn by a script in an animation frame: see settle.
            if (CLICKED && CLICKED.pending && CLICKED.pending.framing) w.frameMoved = true;
          }
          if (w.added.length < 3) {
            const shown = shownNode;
            if (r.type === 'characterData' && shown(r.target)) {
              const s = clean(shownAs(r.target.parentElement, r.target.data), 80);
              if (s) w.added.push(s);
            }
            for (const n of r.addedNodes) {
              if (w.added.length >= 3) break;
              const s = !shown(n)
                ? ''
                : clean(n.nodeType === 1 ? wordsSeen(n, 80) : shownAs(n.parentElement, n.textContent), 80);
              if (s) w.added.push(s);
              // Words not seen yet (a dialog whose card fades in): looked at
              // again once the action settles.
              else if (n.nodeType === 1 && w.unseen.length < 20 && n.hasChildNodes()) w.unseen.push(n);
            }
          }
        }
      });
      mo.observe(d.documentElement, {
        subtree: true,
        childList: true,
        attributes: true,
        attributeOldValue: true,
        characterData: true,
      });
      w.observers.push(mo);
      const win = d.defaultView;
      // Which element each event reached: the action counts only if that is
      // the target, inside it, or its label.
      const on = (ev) => {
        const path = ev.composedPath ? ev.composedPath() : [];
        // A drag's press must reach what is dragged (w.src).
        // (A press is pointerdown as much as mousedown: a page that cancels
        // pointerdown gets no mousedown at all, as Radix's menus do.)
        const press = ev.type === 'mousedown' || ev.type === 'pointerdown';
        if (w.src && (press || ev.type === 'dragstart')) {
          if (path.includes(w.src)) w.srcDelivered = true;
          else if (!w.srcReceived && path.length && path[0].nodeType === 1) w.srcReceived = path[0];
          if (press || !path.includes(e)) return;
        }
        // (Or the part of the widget a click on a hidden or covered control
        // goes to: see standIns.)
        const reached =
          path.includes(e) ||
          Array.from(labelsOf(e)).some((l) => path.includes(l)) ||
          (!!w.via && path.includes(w.via));
        if (reached) {
          w.delivered = true;
          if (press) w.pressed = true;
          else if (ev.type === 'click' || ev.type === 'dblclick') w.clicked = true;
        } else if (!w.received && path.length && path[0].nodeType === 1) w.received = path[0];
      };
      // The input event being dispatched (see dispatching()); and, once the
      // frame after the last one has been drawn, when its animation frame
      // began (`framed`: see settle).
      const current = (ev) => {
        w.cur = ev;
        if (!ev.isTrusted || document.hidden) return;
        // (A key may scroll the page, which shows in a frame: see settle.)
        if (ev.type.startsWith('key')) w.keyed = true;
        w.inputAt = performance.now();
        // One frame asked at a time (a click's events come in a burst): the
        // first drawn after the last of them sets `framed`.
        if (w.marked) return;
        w.marked = true;
        // (`framed` is the frame's time, as each of its callbacks is given
        // it: the page's callbacks asked before this one run first in that
        // frame, and what they change is the frame's change, as GSAP's
        // ticker's first step of a tween the click started.)
        const mark = (frameAt) => {
          const began = performance.now();
          Reflect.apply(NATIVE.later, window, [
            () => {
              if (w.inputAt >= began) Reflect.apply(NATIVE.frame, window, [mark]);
              else {
                w.marked = false;
                w.framed = typeof frameAt === 'number' ? Math.min(frameAt, began) : began;
              }
            },
            0,
          ]);
        };
        Reflect.apply(NATIVE.frame, window, [mark]);
      };
      for (const type of INPUT_EVENTS) {
        win.addEventListener(type, current, true);
        w.listeners.push([win, type, current]);
      }
      const leaving = () => {
        w.leaving = true;
      };
      win.addEventListener('beforeunload', leaving, true);
      w.listeners.push([win, 'beforeunload', leaving]);
      // A default the page let happen whose end comes in a later task (see
      // whole): a link followed, a form sent (their navigation), a
      // <details>, a popover or a dialog opened or closed (their toggle and
      // close events); looked at once the event has bubbled to the window.
      // (A link to a fragment of this document is followed at once, in the
      // click's default: its hashchange comes in a task, its scroll in a
      // frame; see whole.)
      const LATER_DEFAULT = 'a[href], area[href], summary, [popovertarget], [commandfor], form[method=dialog] *';
      const queued = (ev) => {
        if (ev.defaultPrevented) return;
        const later = (n) => n.nodeType === 1 && n.matches(LATER_DEFAULT);
        if (ev.type === 'submit') w.queued = true;
        else {
          const n = ev.composedPath().find(later);
          if (!n) return;
          if (inPage(n, d)) w.fragment = n;
          else {
            w.queued = true;
            // A link followed into a new window (`_blank`): that window is
            // its effect, which the host sees open (see settle).
            if (n.hasAttribute('href') && !n.hasAttribute('download') && linkTarget(n, d) === '_blank')
              w.newWindow = true;
          }
        }
      };
      const hashed = () => {
        w.hashed = true;
      };
      win.addEventListener('hashchange', hashed, false);
      w.listeners.push([win, 'hashchange', hashed, false]);
      for (const type of ['click', 'submit']) {
        win.addEventListener(type, queued, false);
        w.listeners.push([win, type, queued, false]);
      }
      // A scroll moves what is on screen (a smooth scroll, once a frame): the
      // settle follows it to its end.
      const scrolled = () => {
        w.moveAt = performance.now();
      };
      // (Not counted as the page's listener: see scrollHeard.)
      Reflect.apply(NATIVE.listen, win, ['scroll', scrolled, true]);
      w.listeners.push([win, 'scroll', scrolled]);
      for (const type of [
        'click',
        'dblclick',
        'pointerdown',
        'mousedown',
        'keydown',
        'mouseover',
        'dragstart',
        'dragenter',
        'dragover',
        'drop',
      ]) {
        win.addEventListener(type, on, true);
        w.listeners.push([win, type, on]);
      }
    }
    L.watch = w;
    if (CLICKED) {
      CLICKED.busy = true;
      // The work this action sets going is counted afresh (see settle).
      if (CLICKED.pending) {
        CLICKED.pending.n = 0;
        CLICKED.pending.sent = 0;
        if (CLICKED.pending.loop) CLICKED.pending.loop.clear();
        CLICKED.pending.gen++;
      }
    }
    return w;
  }
  // The events a click or a key press dispatches.
  const INPUT_EVENTS = [
    'pointerdown',
    'mousedown',
    'pointerup',
    'mouseup',
    'click',
    'dblclick',
    'keydown',
    'keyup',
    'keypress',
  ];
  // Whether one of them is being dispatched now: a MutationObserver's callback
  // runs in the microtask checkpoint after each listener, so a change a handler
  // of the page made is seen here while its event is still in dispatch (its
  // eventPhase not NONE; window.event covers the page's listeners that ran
  // before ochre's on the window).
  function dispatching(w) {
    if (w.cur && w.cur.eventPhase !== 0) return true;
    const ev = window.event;
    return !!ev && ev.isTrusted && INPUT_EVENTS.includes(ev.type);
  }
  // Whether an element (or one of its three nearest ancestors) is a ticker: a
  // short text the page changed by itself three times or more, the last within
  // 10 s (recorded by the host's tracker while no action was watched).
  function ticking(p) {
    const tk = CLICKED && CLICKED.tick;
    if (!tk) return false;
    const now = Date.now();
    for (let i = 0; p && i < 4; i++, p = p.parentElement) {
      const t = tk.get(p);
      if (t && t.n >= 3 && now - t.last < 10000) return true;
    }
    return false;
  }
  // Whether the page was moving an element by itself (its style set by
  // script three times or more, the last within a second of the action's start
  // or since, in a streak begun before the action: see the host's tracker).
  function movingBefore(e, w) {
    const t = CLICKED && CLICKED.moving && CLICKED.moving.get(e);
    return !!t && t.n >= 3 && w.since - t.last < 1000;
  }
  function unwatch() {
    if (CLICKED) CLICKED.busy = false;
    const w = L.watch;
    if (!w) return;
    for (const o of w.observers) o.disconnect();
    for (const [win, t, f, capture] of w.listeners) win.removeEventListener(t, f, capture !== false);
    L.watch = null;
  }
  // An element's place: its parent, its rank there, its box on the page.
  function placeOf(e) {
    const r = e.getBoundingClientRect();
    const rank = e.parentNode ? Array.prototype.indexOf.call(e.parentNode.childNodes, e) : -1;
    return {
      parent: e.parentNode,
      rank,
      x: Math.round(r.left + scrollX),
      y: Math.round(r.top + scrollY),
      connected: e.isConnected,
    };
  }
  // What a drag changed: the source moved (another parent or rank, or its box
  // elsewhere: a draggable left where it was dropped), the target's subtree
  // changed, or the words of the page did (a list reordered, "Archived").
  function dragEffect(w) {
    const out = [];
    const now = placeOf(w.src);
    const was = w.srcPlace;
    if (now.connected !== was.connected || now.parent !== was.parent || now.rank !== was.rank)
      out.push('the dragged element moved in the page');
    else if (Math.abs(now.x - was.x) > 2 || Math.abs(now.y - was.y) > 2)
      out.push('the dragged element moved on screen');
    if (w.targetMuts) out.push('the drop target changed');
    if (document.body && document.body.innerText !== w.pageText) out.push("the page's text changed");
    return out;
  }
  function delta(w) {
    // `pressed`: the press or the click reached the target (a pointer that
    // only passed over it, before a timer took it away, clicked nothing).
    const d = { delivered: w.delivered, pressed: !!(w.pressed || w.clicked), mutations: w.muts };
    // The press reached the target, but before the release the page removed it
    // by itself (a timer, not a handler of the press: nothing changed while
    // ochre's events were dispatched), so no click could reach it.
    if (w.pressed && !w.clicked && w.gone && w.goneBetween && w.dispatchMuts === 0) {
      d.delivered = false;
      d.removed_before_release = true;
    }
    if ((!w.delivered || !d.pressed) && w.received) d.received_by = hitName(w.received);
    if (w.src) {
      if (w.srcPlace) d.effect = dragEffect(w);
      d.source_delivered = !!w.srcDelivered;
      if (!w.srcDelivered && w.srcReceived) d.source_received_by = hitName(w.srcReceived);
    }
    if (location.href !== w.url) d.url = location.href;
    if (w.newWindow) d.new_window = true;
    if (document.title !== w.title) d.title = document.title;
    if (elState(w.target) !== w.state) {
      const e = w.target;
      d.target = { connected: e.isConnected };
      // Every <input> has `checked`: only a checkbox's or a radio's means anything.
      if (e.localName === 'input' && (e.type === 'checkbox' || e.type === 'radio')) d.target.checked = e.checked;
      // A field's new value is told by its length (it may be a secret): a mask
      // or an autocomplete that rewrote it shows. In characters, as the host
      // counts what it typed (an emoji is one, not its two UTF-16 units).
      else if (typeof e.value === 'string' && e.value !== w.value) d.target.value_length = [...e.value].length;
      // Each ARIA state that changed, as it is now.
      const now = ariaStates(e);
      for (const k in now) if (now[k] != null && now[k] !== w.aria[k]) d.target[k] = now[k] === 'true';
    }
    // What was added unseen and shows now that the action settled.
    for (const n of w.unseen) {
      if (w.added.length >= 3) break;
      if (!n.isConnected || !shownNode(n)) continue;
      const s = clean(wordsSeen(n, 80), 80);
      if (s && !w.added.includes(s)) w.added.push(s);
    }
    w.unseen = [];
    if (w.added.length) d.added = w.added;
    const a = deepActive();
    if (a && a !== document.body && a !== w.focusBefore) d.focus = refLine(a);
    d.changed = !!(d.url || d.title || d.target || w.muts > 0);
    return d;
  }
  function animating() {
    return allAnimations(document).some((an) => {
      if (an.playState !== 'running' || decorative(an)) return false;
      const t = an.effect && an.effect.getComputedTiming ? an.effect.getComputedTiming() : null;
      return !!t && Number.isFinite(t.endTime) && t.endTime <= 5000;
    });
  }
  // An animation of colours only (a highlight fading on the target of an
  // in-page link, a hover tint): it shows, hides, moves or sizes nothing, so
  // no content waits for its end.
  const COLOUR = new RegExp(
    '^(color|background-color|border(-top|-right|-bottom|-left|-block|-inline)?(-start|-end)?-color' +
      '|outline-color|text-decoration-color|caret-color|column-rule-color|accent-color' +
      '|fill|stroke|stop-color|flood-color|lighting-color|box-shadow|text-shadow)$',
  );
  const decorOnly = new WeakMap();
  function decorative(an) {
    if (decorOnly.has(an)) return decorOnly.get(an);
    const props = [];
    if (an.transitionProperty) props.push(an.transitionProperty);
    else if (an.effect && an.effect.getKeyframes)
      for (const k of an.effect.getKeyframes())
        for (const p of Object.keys(k))
          if (p !== 'offset' && p !== 'computedOffset' && p !== 'easing' && p !== 'composite') props.push(p);
    const yes = props.length > 0 && props.every((p) => COLOUR.test(p.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())));
    decorOnly.set(an, yes);
    return yes;
  }
  // Whether a style attribute's change touched colours only (a JS-driven
  // highlight): like a colour animation, it holds no answer.
  function colourOnly(before, after) {
    const parse = (css) => {
      const m = new Map();
      for (const part of (css || '').split(';')) {
        const i = part.indexOf(':');
        if (i > 0) m.set(part.slice(0, i).trim().toLowerCase(), part.slice(i + 1).trim());
      }
      return m;
    };
    const b = parse(before),
      n = parse(after);
    let any = false;
    for (const k of new Set([...b.keys(), ...n.keys()])) {
      if (b.get(k) === n.get(k)) continue;
      if (!COLOUR.test(k)) return false;
      any = true;
    }
    return any;
  }
  // The next look of a settle: once the next frame has been drawn (a task
  // after its animation-frame callbacks, the page's among them), or after
  // FRAME_LATE when no frame comes (a page not drawn: a hidden tab).
  const FRAME_LATE = 100;
  // The page's timers and frames as they were before the page could wrap
  // them (the click tracker's), so that these waits are no work of the page's.
  const NATIVE = (CLICKED && CLICKED.native) || {
    later: setTimeout,
    frame: requestAnimationFrame,
    listen: EventTarget.prototype.addEventListener,
  };
  // The window a link is followed in: its `target`, else its document's
  // `<base target>`, lowercased ('' for its own).
  function linkTarget(n, doc) {
    const b = doc.querySelector('base[target]');
    return (n.getAttribute('target') || (b && b.getAttribute('target')) || '').trim().toLowerCase();
  }
  // Whether a link leads to a fragment of its own document (`doc`), followed
  // in this window: its default moves to the fragment at once, no document
  // is loaded.
  function inPage(n, doc) {
    if (!n.hash || n.hasAttribute('download')) return false;
    const t = linkTarget(n, doc);
    if (t && t !== '_self') return false;
    const base = (h) => h.split('#')[0];
    return doc.defaultView === n.ownerDocument.defaultView && base(n.href) === base(doc.URL);
  }
  // Whether the page may answer a scroll of `e`'s scrollers (its ancestors and
  // the viewport) by the next frame, when the scroll events and observers'
  // calls come: a listener for them on the window, the document or one of its
  // ancestors (a capture on an ancestor hears an inner scroller), an
  // IntersectionObserver or ResizeObserver, an animation on a scroll's
  // timeline. Unknown (another frame's document, no tracker): it may.
  function scrollHeard(e) {
    const S = CLICKED && CLICKED.scrolls;
    if (!S || !e || e.ownerDocument !== document) return true;
    if (S.has(window) || S.has(document) || window.onscroll || document.onscroll) return true;
    for (let n = e; n; n = flatParent(n)) if (S.has(n) || (n.nodeType === 1 && n.onscroll)) return true;
    if (CLICKED.pending && CLICKED.pending.observed) return true;
    const scrolled = (an) => an.timeline && window.DocumentTimeline && !(an.timeline instanceof DocumentTimeline);
    return allAnimations(document).some(scrolled);
  }
  // (`f(drawn)`: whether a frame was drawn, else FRAME_LATE passed.)
  function afterFrame(f) {
    let done = false;
    const go = (drawn) => {
      if (done) return;
      done = true;
      clearTimeout(late);
      f(drawn);
    };
    const late = Reflect.apply(NATIVE.later, window, [() => go(false), document.hidden ? 17 : FRAME_LATE]);
    const drawn = () => Reflect.apply(NATIVE.later, window, [() => go(true), 0]);
    if (!document.hidden) Reflect.apply(NATIVE.frame, window, [drawn]);
  }
  // The frames a script's animation may draw with no change before it counts
  // as ended (the page changed in two frames or more, or the action started a
  // loop of frames, and it asks for another):
  // one may show no change for a frame or a few (jQuery UI's accordion and
  // hand-written ones round heights to whole pixels and ease slowly at both
  // ends; GSAP's ticker lets a frame pass when it comes early).
  const SCRIPT_CALM = 8;
  // Whether all an action changed is in the page once its input has been
  // handled and the tasks it queued have run: nothing it set going waits for
  // a frame or a later task (see the click tracker: no animation frame asked
  // by anyone, no message posted, idle callback, scroll or focus by script,
  // no Resize- or IntersectionObserver, which frames call), its URL is the
  // same, no key was pressed (keys scroll), and no default of the click's
  // comes in a later task (see `queued` in watch). A link followed to a
  // fragment of the page: once its hashchange has been handled (the URL
  // unchanged: none comes), when nothing hears the scroll to the fragment
  // (see scrollHeard). Timers it set and animations it started are waited
  // for as always.
  function whole(w, pend) {
    const moved = location.href !== w.url;
    return (
      !!pend &&
      !!pend.asked &&
      pend.asked.size === 0 &&
      pend.bound !== pend.gen &&
      !pend.observed &&
      !w.keyed &&
      !w.queued &&
      !w.srcPlace &&
      !document.hidden &&
      (!moved || (!!w.fragment && !!w.hashed)) &&
      (!w.fragment || !scrollHeard(fragmentOf(w.fragment)))
    );
  }
  // The element a link to a fragment leads to (its id, else an <a name>), or
  // the document's root (the top). (A link in another frame's document: the
  // link itself, whose scroll scrollHeard cannot tell.)
  function fragmentOf(n) {
    if (n.ownerDocument !== document) return n;
    let id = n.hash.slice(1);
    try {
      id = decodeURIComponent(id);
    } catch (e) {}
    return document.getElementById(id) || document.getElementsByName(id)[0] || document.documentElement;
  }
  // An action's change is settled once a whole frame has been drawn with no
  // change that can move, size, show or hide anything after the last one (pages
  // move once a frame: a height animated by script changes every frame; after
  // a script's animation, SCRIPT_CALM frames), no
  // work the action set going is left to run (its short timers and animation
  // frames: see the host's tracker), and no animation of layout is running.
  // A look that no frame came before (FRAME_LATE) counts as a frame only when
  // nothing waits for one (a hidden page draws none).
  // The first look is after the frame that follows the input, in which the
  // page's follow-up work runs: at once when that frame was drawn before
  // the settle began (the input's answer and this call took that long), a
  // change since that frame began counting as one in it; at once too when
  // nothing the action set going waits for a frame or a later task (whole). `quiet_ms` asks, in addition, for that long
  // without a change (a drag's revert: at least 250 ms). At `max_ms` the
  // answer says what was still going (`still`).
  function settle(a) {
    const w = L.watch;
    if (a.token && a.token !== L.token)
      return { navigated: true, changed: true, delivered: true, url: location.href, token: a.token };
    if (!w) return { changed: false, delivered: false, mutations: 0 };
    // (A link followed into a new window: no wait for a late change of this
    // page; the host waits for the window instead.)
    const idle = a.idle_ms == null ? (w && w.newWindow ? 0 : 150) : a.idle_ms,
      floor = w.srcPlace ? Math.max(a.quiet_ms || 0, 250) : a.quiet_ms || 0,
      max = a.max_ms || 2000;
    const pend = CLICKED && CLICKED.pending;
    const t0 = performance.now();
    return new Promise((resolve) => {
      // When the last look was (first the start of the frame drawn after the
      // input, if it was drawn already, else the settle's start): a change
      // after it is a change in the frame just drawn.
      let lastLook = w.framed || t0;
      // The first look: a change since the frame drawn after the input began
      // is final when nothing the action set going waits for a frame or a
      // later task (whole): no frame is needed to see it stay.
      let first = true;
      // (whole(), when the settle's start found it true: the first look then
      // runs at once, in the same task, and need not ask again.)
      let wholeNow = false;
      // Frames drawn since the last change; the looks that saw a change.
      let calm = 0,
        moves = 0;
      const look = (drawn = true) => {
        const now = performance.now();
        if (w.leaving) {
          unwatch();
          resolve({ navigated: true, changed: true, delivered: w.delivered, token: L.token });
          return;
        }
        const changed = w.muts > 0 || location.href !== w.url || elState(w.target) !== w.state;
        if (w.srcPlace) {
          const p = placeOf(w.src);
          const at = p.x + ',' + p.y + ',' + p.rank;
          if (at !== w.srcAt) {
            w.srcAt = at;
            w.moveAt = now;
          }
        }
        const lastChange = Math.max(w.mutAt || 0, w.moveAt || 0);
        const asked = !!pend && !!pend.asked && pend.asked.size > 0;
        // (This look came without the frame it waited for, while frames were asked.)
        const starved = !drawn && !document.hidden && asked;
        if (lastChange > lastLook) {
          calm = 0;
          moves++;
        } else if (!starved) calm++;
        const working = !!pend && pend.n > 0;
        // A script animating the page: a frame is asked, and the page changed
        // in frames (two looks saw it change, or a frame's callback changed
        // it: a ticker running before the action, as GSAP's, whose first
        // change came before the first look and which then lets a frame pass),
        // or the action started a loop of frames (its first frames may show
        // no change: an ease from rest rounded to whole pixels).
        const looping = !!pend && !!pend.loop && pend.loop.size > 0;
        const scripted = asked && (moves >= 2 || looping || !!w.frameMoved);
        const moving = animating();
        const quiet =
          (calm >= (scripted ? SCRIPT_CALM : 1) || (first && (wholeNow || whole(w, pend)))) &&
          now - lastChange >= floor;
        first = false;
        wholeNow = false;
        const done =
          (changed && quiet && !working && !moving) ||
          (!changed && !working && now - t0 >= idle) ||
          now - t0 >= max;
        if (!done) {
          lastLook = now;
          afterFrame(look);
          return;
        }
        const d = delta(w);
        if (now - t0 >= max && (working || moving || !quiet)) {
          d.still = [];
          if (!quiet && scripted) d.still.push('a script was still animating the page, frame by frame');
          else if (!quiet) d.still.push('the page was still changing');
          if (starved) d.still.push('no frame was drawn in ' + FRAME_LATE + ' ms while the page waited for one');
          if (moving) d.still.push('an animation was running');
          if (working) d.still.push(pend.n + ' of the timers and frames it set going had not run');
          d.bound_ms = max;
        }
        // Sent to what stands for the target: only its effect says it acted.
        if (w.via) d.via = true;
        if (pend && pend.sent) d.sent = pend.sent;
        if (pend && pend.later.size) {
          const left = [];
          for (const t of pend.later.values())
            if (t.gen === pend.gen && t.due > now) left.push(Math.round(t.ms));
          if (left.length) d.later_ms = left.slice(0, 5);
        }
        if (!a.keep) unwatch();
        else d.watch = w.id;
        resolve(d);
      };
      // (A message the action posted may still be on its way after the
      // frame: a scheduler's next slice.)
      const posted = !!pend && pend.bound === pend.gen;
      const framed = w.framed;
      w.framed = 0;
      if (framed && !posted) look();
      else if ((wholeNow = whole(w, pend))) look();
      else afterFrame(look);
    });
  }
