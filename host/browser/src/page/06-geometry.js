  // ---- geometry and input ---------------------------------------------------------
  function frameOffset(e) {
    let x = 0,
      y = 0;
    let w = e.ownerDocument.defaultView;
    while (w && w !== window && w.frameElement) {
      const f = w.frameElement;
      const r = f.getBoundingClientRect();
      x += r.left + f.clientLeft;
      y += r.top + f.clientTop;
      w = f.ownerDocument.defaultView;
    }
    return [x, y];
  }
  function hitsTarget(e, x, y, within) {
    // Whether a click at (x, y) (top-level viewport) lands on e or inside it
    // (or inside `within`, the part of the page that stands for e: see
    // standIns).
    let doc = document,
      px = x,
      py = y,
      hit = null;
    for (let i = 0; i < 8; i++) {
      hit = doc.elementFromPoint(px, py);
      while (hit && hit.shadowRoot) {
        const inner = hit.shadowRoot.elementFromPoint(px, py);
        if (!inner || inner === hit) break;
        hit = inner;
      }
      if (hit && hit.localName === 'iframe') {
        const d = frameDoc(hit);
        if (!d) break;
        const r = hit.getBoundingClientRect();
        px -= r.left + hit.clientLeft;
        py -= r.top + hit.clientTop;
        doc = d;
        continue;
      }
      break;
    }
    if (!hit) return { ok: false, hit: null };
    if (within && flatWithin(hit, within)) return { ok: true, hit };
    const inside =
      hit === e ||
      e.contains(hit) ||
      (hit.getRootNode && hit.getRootNode().host && e.contains(hit.getRootNode().host));
    const lbl = Array.from(labelsOf(e)).some((l) => l === hit || l.contains(hit));
    return { ok: !!(inside || lbl), hit };
  }
  function hitName(h) {
    if (!h) return 'nothing';
    return (
      h.localName +
      (h.id ? '#' + h.id : '') +
      (h.classList.length ? '.' + Array.from(h.classList).slice(0, 2).join('.') : '')
    );
  }
  // (`within`: see hitsTarget.)
  function point(e, how, within) {
    if (e.scrollIntoViewIfNeeded) e.scrollIntoViewIfNeeded(true);
    else e.scrollIntoView({ block: 'center', behavior: 'instant' });
    const [ox, oy] = frameOffset(e);
    // Its first box with a size: an inline element around a block (a custom
    // element's host, inline by default, around its shadow's <div>) begins
    // with an empty one.
    const rects = Array.from(e.getClientRects());
    const r = rects.find((q) => q.width > 0 && q.height > 0) || e.getBoundingClientRect();
    if (!r || (r.width === 0 && r.height === 0))
      return { x: null, y: null, reason: 'the element has no size on screen' };
    const cx = ox + r.left + r.width / 2,
      cy = oy + r.top + r.height / 2;
    if (how !== 'sample') {
      const h = hitsTarget(e, cx, cy, within);
      return { x: cx, y: cy, hits: h.ok, covered_by: h.ok ? null : hitName(h.hit) };
    }
    const pts = [
      [0.5, 0.5],
      [0.25, 0.5],
      [0.75, 0.5],
      [0.5, 0.25],
      [0.5, 0.75],
      [0.1, 0.1],
      [0.9, 0.9],
      [0.1, 0.9],
      [0.9, 0.1],
    ];
    let last = null;
    for (const [fx, fy] of pts) {
      const x = ox + r.left + r.width * fx,
        y = oy + r.top + r.height * fy;
      const h = hitsTarget(e, x, y, within);
      if (h.ok) return { x, y, hits: true };
      last = h.hit;
    }
    return { x: null, y: null, reason: 'covered by ' + hitName(last) };
  }
  // Where a person clicks to operate `e` when `e` cannot take the click
  // itself: a control a library draws over or instead of a native one it
  // hides (no size) or covers with its own parts (a switch's track, a
  // select's placeholder). Its visible label; else its ancestors, three at
  // most (through shadow roots), up to one that holds another control or is
  // one: `aim` is the nearest with a box, and a click anywhere `within` the
  // farthest is the widget's. The candidates, in that order.
  function standIns(e) {
    const out = [];
    for (const l of Array.from(labelsOf(e))) if (visible(l) && sized(l)) out.push({ aim: l, within: l });
    const chain = [];
    for (let a = flatParentEl(e), i = 0; a && i < 3; a = flatParentEl(a), i++) {
      const doc = a.ownerDocument;
      if (a === doc.body || a === doc.documentElement || otherControl(a, e)) break;
      chain.push(a);
      if (ownControl(a)) break;
    }
    const aim = chain.find((a) => visible(a) && sized(a));
    if (aim) out.push({ aim, within: chain[chain.length - 1] });
    return out;
  }
  const NATIVE_FIELDS = 'input:not([type=hidden]),select,textarea';
  const sized = (el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  // A control of its own: native, focusable or with an interactive role.
  function ownControl(c) {
    if (c.matches('a[href],button,' + NATIVE_FIELDS)) return true;
    const r = roleOf(c);
    return (!!r && INTERACTIVE.has(r)) || tabbable(c);
  }
  // Whether `a` holds a shown control other than `e` (or around or inside it).
  function otherControl(a, e) {
    for (const c of a.querySelectorAll(CONTROLS)) {
      if (c === e || e.contains(c) || c.contains(e)) continue;
      if (ownControl(c) && visible(c)) return true;
    }
    return false;
  }
