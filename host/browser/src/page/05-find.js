  // ---- find ------------------------------------------------------------------------
  function candidates() {
    const out = [];
    const walk = (root) => {
      for (const e of root.querySelectorAll('*')) {
        if (e.shadowRoot) walk(e.shadowRoot);
        if (e.localName === 'iframe') {
          const d = frameDoc(e);
          if (d) walk(d);
        }
        const r = roleOf(e);
        if ((r && (INTERACTIVE.has(r) || r === 'heading' || r === 'img')) || (isInteractive(e, r) && !wrapper(e, r)))
          out.push([e, r || 'generic']);
      }
    };
    walk(document);
    return out;
  }
  const norm = (s) =>
    String(s || '')
      .toLowerCase()
      .replace(/\s+/g, ' ')
      .trim();
  const ROLE_WORDS = {
    button: 'button',
    btn: 'button',
    link: 'link',
    checkbox: 'checkbox',
    radio: 'radio',
    input: 'textbox',
    field: 'textbox',
    textbox: 'textbox',
    box: 'textbox',
    text: 'textbox',
    dropdown: 'combobox',
    select: 'combobox',
    combobox: 'combobox',
    heading: 'heading',
    title: 'heading',
    image: 'img',
    tab: 'tab',
    menu: 'menuitem',
    option: 'option',
    slider: 'slider',
    switch: 'switch',
    search: 'searchbox',
  };
  function find(a) {
    const q = norm(a.query);
    const words = q.split(/[^\p{L}\p{N}_@.-]+/u).filter(Boolean);
    const roleWanted = new Set(words.filter((w) => w in ROLE_WORDS).map((w) => ROLE_WORDS[w]));
    const scored = [];
    const memo = new Map();
    for (const [e, r] of candidates()) {
      if (!seen(e, memo)) continue;
      let nm = norm(nameOf(e, r));
      // A container whose words are more than a name (a notebook cell): all of
      // them count, but less than a name does, and less than the line of text
      // that holds the words (its output) inside it.
      const container = nm.endsWith('\u2026') && !ownName(e);
      if (container) nm = norm(textOf(e));
      const extra = norm(
        [
          e.getAttribute('placeholder'),
          e.getAttribute('name'),
          e.id,
          e.getAttribute('title'),
          e.localName === 'input' ? e.type : '',
        ].join(' '),
      );
      let s = 0;
      if (nm && nm === q) s += 100;
      else if (nm && q && nm.includes(q)) s += container ? 20 : 60;
      else if (nm && q && q.includes(nm) && nm.length > 2) s += 40;
      const padded = ' ' + nm.replace(/[^\p{L}\p{N}_@.-]+/gu, ' ') + ' ';
      for (const w of words) {
        if (padded.includes(' ' + w)) s += 12;
        else if ((' ' + extra).includes(' ' + w)) s += 8;
      }
      if (roleWanted.size && roleWanted.has(r === 'searchbox' ? 'textbox' : r)) s += 15;
      if (roleWanted.has(r)) s += 5;
      // What a field holds counts too (the last word of a long text).
      const val = q ? norm(fieldValue(e)) : '';
      if (val && val.includes(q)) s += 30;
      if (s >= 12) scored.push([s, e, undefined, container]);
    }
    // Words a person sees outside any control (a notebook's output, a status
    // line): the element that holds them, as a text line with a ref.
    if (q.length >= 2) {
      const hits = new Set(scored.filter((x) => !x[3]).map(([, e]) => e));
      const tw = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_TEXT);
      const held = new Set();
      for (let n = tw.nextNode(); n && held.size < 50; n = tw.nextNode()) {
        const p = n.parentElement;
        if (
          !p ||
          held.has(p) ||
          !norm(n.data).includes(q) ||
          p.closest('style,script,noscript,template,[aria-hidden=true]')
        )
          continue;
        const text = clean(p.innerText || '', 1e9);
        if (!norm(text).includes(q) || !seenText(p)) continue;
        let inHit = false;
        for (const h of hits)
          if (h.contains(p)) {
            inHit = true;
            break;
          }
        if (inHit) continue;
        held.add(p);
        scored.push([norm(text) === q ? 50 : 30, p, text]);
      }
    }
    scored.sort((x, y) => y[0] - x[0]);
    const limit = Math.min(a.limit || 20, 20);
    const top = scored.slice(0, limit);
    const line = ([, e, text]) =>
      text == null ? refLine(e, VALUE_MAX) : 'text ' + JSON.stringify(clean(text, TEXT_MAX)) + ' ax_' + mint(e);
    // (Each match's ref beside its line: callers take refs as data, not out of text.)
    const r = { matches: top.map(line), refs: top.map(([, e]) => 'ax_' + mint(e)), total: scored.length };
    if (a.scores) r.scores = top.map(([s]) => s);
    return r;
  }
  function query(a) {
    const limit = Math.min(a.limit || 20, 200);
    const found = a.xpath != null ? xpathAll(a.xpath, limit + 1) : selectAll(a.selector, limit + 1);
    const shown = found.slice(0, limit).map((e) => {
      const attrs = {};
      for (const at of e.attributes) {
        if (at.name !== 'style' && Object.keys(attrs).length < 8) attrs[at.name] = clean(at.value, 120);
      }
      return {
        ref: 'ax_' + mint(e),
        tag: e.localName,
        text: clean(e.innerText != null ? e.innerText : e.textContent),
        attributes: attrs,
        visible: visible(e),
      };
    });
    return { matches: shown, more: found.length > limit };
  }
