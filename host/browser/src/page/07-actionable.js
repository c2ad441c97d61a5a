  // ---- actionability (Playwright's model) ---------------------------------------------
  // Why an element cannot take a pointer event now, or null: attached (el()
  // throws STALE_REF otherwise), visible, enabled, not transparent or inert,
  // not moving.
  function blocker(e, a, prevBox) {
    if (!visible(e)) return 'not visible';
    if (a.enabled !== false && (e.matches(':disabled') || e.closest('[aria-disabled=true]'))) return 'disabled';
    if (e.closest('[inert]')) return 'inert';
    const modal = activeModal(e.ownerDocument);
    if (modal && !flatWithin(e, modal.el)) return 'inert (behind the open modal dialog)';
    // A box that moves or fades (a panel sliding in, a menu fading in) is
    // waited out. A transparent element that stays so is clickable, as in
    // Playwright: component libraries lay a transparent native input over their
    // drawn checkbox, and row actions show only under the pointer.
    const m = moving(e, prevBox);
    if (m) return m;
    return null;
  }
  const boxOf = (e) => {
    const r = e.getBoundingClientRect();
    return [r.left, r.top, r.width, r.height].map((v) => Math.round(v * 2) / 2).join(',');
  };
  // Shadow roots the parser attached (`<template shadowrootmode>`), which
  // the tracker does not see attached: found by the tracker's walk of the
  // document once it is parsed (`findRoots`: open roots only, bounded; done
  // once, mostly while the page was idle).
  // Every animation of document `doc`: its own and those of its shadow
  // trees (which `doc.getAnimations()` leaves out), each root's asked (the
  // roots attached since the tracker began, and those the parser attached,
  // whose host is in the document).
  function allAnimations(doc) {
    if (!doc.getAnimations) return [];
    const all = doc.getAnimations();
    const roots = CLICKED && CLICKED.roots;
    if (!roots || doc !== document) return all;
    if (document.readyState !== 'loading' && CLICKED.findRoots) CLICKED.findRoots();
    for (const ref of roots) {
      const r = ref.deref();
      if (!r) roots.delete(ref);
      else if (r.host && r.host.isConnected && r.getAnimations) for (const an of r.getAnimations()) all.push(an);
    }
    return all;
  }
  // The animations that may move or fade `e`: its document's own, and those
  // of each shadow tree that it or a flat-tree ancestor of it is in (closed
  // ones too), not every root of the page.
  function animationsAround(e) {
    const doc = e.ownerDocument;
    if (!doc.getAnimations) return [];
    const all = doc.getAnimations();
    for (let n = e; n; n = flatParent(n)) {
      if (n.nodeType === 11 && n.host && n.getAnimations) for (const an of n.getAnimations()) all.push(an);
    }
    return all;
  }
  // Moving: its box changed since the last look, or an animation runs on it or
  // an ancestor in the flat tree (a panel sliding in, a web component's panel
  // around the element slotted in it). Without either, no frame needs waiting.
  function moving(e, prevBox) {
    if (prevBox != null && prevBox !== boxOf(e)) return 'moving';
    let why = null;
    for (const an of animationsAround(e)) {
      const t = an.effect && an.effect.target;
      if (an.playState !== 'running' || !t || !flatWithin(e, t)) continue;
      // A finite animation (an endless pulse never ends: not waited for).
      const ct = an.effect.getComputedTiming ? an.effect.getComputedTiming() : null;
      if (!ct || !Number.isFinite(ct.endTime) || ct.endTime > 10000) continue;
      const kf = an.effect.getKeyframes ? an.effect.getKeyframes() : [];
      const props = new Set(kf.flatMap((k) => Object.keys(k)));
      if ([...props].some((p) => p === 'opacity' || p === 'visibility')) why = why || 'fading in';
      // Colours and shadows do not move a box.
      if (
        [...props].some((p) =>
          /^(transform|translate|scale|rotate|top|left|right|bottom|width|height|margin|padding|inset|display)/.test(p),
        )
      )
        return 'moving';
    }
    return why;
  }
  const nextFrame = () =>
    new Promise((r) => {
      let done = false;
      const f = () => {
        if (!done) {
          done = true;
          r();
        }
      };
      requestAnimationFrame(f);
      setTimeout(f, 40);
    });
  // An element for an action: role, name, its snapshot line, tag, and whether it
  // takes the focus, is a native control or listens for clicks.
  function described(e) {
    const d = describe(e);
    d.line = refLine(e, undefined, d);
    d.tag = e.localName;
    d.focusable =
      e.tabIndex >= 0 ||
      (typeof e.focus === 'function' && e.matches('a[href],button,input,select,textarea,[tabindex]'));
    d.native = e.matches('a[href],button,input,select,textarea,summary,label,option');
    d.listens = !!(CLICKED && CLICKED.has(e)) || e.hasAttribute('onclick') || typeof e.onclick === 'function';
    return d;
  }
  // Wait (at most timeout_ms) until the element can take the event at a point
  // that reaches it: {x, y, waited_ms, waited: [what was waited for]} or
  // {x: null, reason} when the time ran out. With `describe`, the element as
  // `describe` tells it (`target`); with `watch`, watching what the action
  // about to be sent changes starts once it can take it (`token`).
  async function actionable(a) {
    const max = a.timeout_ms == null ? 5000 : a.timeout_ms;
    const t0 = performance.now();
    const waited = [];
    const info = a.describe ? { target: described(el(a.ref)) } : {};
    const ms = () => Math.round(performance.now() - t0);
    let prev = null,
      reason = null;
    for (;;) {
      const e = el(a.ref);
      reason = blocker(e, a, prev);
      prev = boxOf(e);
      if (!reason) {
        let p = point(e, 'sample');
        // A control with no size, or a native field a widget covers with its
        // own parts (a switch's track, a select's placeholder over its
        // input): the click goes where a person's would (see standIns), and
        // counts only by its effect. (A button under an overlay stays refused.)
        let via = null;
        if (p.x == null && (!sized(e) || e.matches(NATIVE_FIELDS))) {
          for (const s of standIns(e)) {
            const q = point(s.aim, 'sample', s.within);
            if (q.x != null) {
              p = q;
              via = s.within;
              break;
            }
          }
        }
        if (p.x != null) {
          // The box moved as it scrolled into view (in this task, so by that
          // scroll alone): where it is now holds unless the page hears the
          // scroll (its events and observers come in the next frame), which
          // is then waited for.
          const now = boxOf(e);
          if (now === prev || !(scrollHeard(e) || (via && scrollHeard(via)))) {
            if (a.watch) {
              watch(e);
              L.watch.focusBefore = deepActive();
              L.watch.via = via;
              info.token = L.token;
            }
            const by = via ? { via: hitName(via) } : {};
            return { x: p.x, y: p.y, waited_ms: ms(), waited, ...by, ...info };
          }
          reason = 'moving';
          // The next look holds it to where the scroll put it: one frame
          // for the page to answer, not a second to see the scroll again.
          prev = now;
        } else reason = p.reason;
      }
      if (!waited.includes(reason) && waited.length < 5) waited.push(reason);
      if (performance.now() - t0 >= max) return { x: null, y: null, reason, waited_ms: ms(), waited, ...info };
      await nextFrame();
    }
  }
