// ochre's page library, installed once per document by the host (see
// pageops.rs): `(this function)(KEY, nextLink)` (nextLink: the shared "next"
// link rule, ochre_protocol::scripts::NEXT_LINK) defines it under the non-enumerable,
// read-only global KEY (a name the host picks at random per run) and returns it;
// each page operation is then `window[KEY].run(ctx)`, a call of a few hundred
// bytes. It keeps the elements it gave refs to (`ax_<n>`) and answers one
// operation per call with {ok, token, lo, hi} or {err: {code, message, details}}.
// The host keeps the registry of which ref numbers belong to which document token.
(function (KEY, nextLink) {
  'use strict';
  if (window[KEY]) return window[KEY];
  const L = {
    // Not Math.random(): a page that seeds it must get the same numbers with
    // ochre as without.
    token: Array.from(crypto.getRandomValues(new Uint32Array(2)), (n) => n.toString(36)).join('') + Date.now().toString(36),
    next: 1,
    refs: new Map(),
    ids: new WeakMap(),
    watch: null,
  };
  // The document tokens of the refs the running operation's caller holds.
  let expect = null;

  class OpError extends Error {
    constructor(code, message, details) {
      super(message);
      this.code = code;
      this.details = details || {};
    }
  }
  const fail = (code, message, details) => {
    throw new OpError(code, message, details);
  };

  // ---- text and names -------------------------------------------------------
  const TEXT_MAX = 100;
  // A line of text in a snapshot: whole paragraphs, cut only when very long
  // (with a mark saying so); names stay short (TEXT_MAX).
  const LINE_MAX = 2000;
  const clean = (s, max) => {
    s = String(s == null ? '' : s).replace(/\s+/g, ' ').trim();
    max = max || TEXT_MAX;
    return s.length > max ? s.slice(0, max - 1) + '\u2026' : s;
  };
  const CONTROL_TAGS = new Set(['input', 'select', 'textarea', 'button']);
  // (Thrown to stop a walk that has read enough.)
  const ENOUGH = {};
  function textOf(node, skip, max) {
    // The words of a subtree as its accessible name: without form controls' text
    // (a label's own words), hidden parts, or scripts; block-level children (a
    // flex item, a list item, a <br>) are set apart by spaces, inline ones are not.
    // With `max`, the walk stops once more than `max` characters are read (a
    // focusable container of a whole page is long: no need to read it all).
    let s = '';
    const rendered = !!(node.ownerDocument && node.ownerDocument.defaultView);
    const walk = (n) => {
      if (n.nodeType === 3) {
        s += n.data;
        if (max && s.length > max && clean(s, max + 1).length > max) throw ENOUGH;
        return;
      }
      if (n.nodeType !== 1) return;
      const t = n.localName;
      if (n !== node) {
        if (n === skip || CONTROL_TAGS.has(t) || t === 'script' || t === 'style' || t === 'template') return;
        if (n.hidden || n.getAttribute('aria-hidden') === 'true') return;
      }
      if (t === 'br') { s += ' '; return; }
      if (t === 'img') { s += ' ' + (n.getAttribute('alt') || '') + ' '; return; }
      let apart = false;
      if (n !== node && rendered) {
        const cs = getComputedStyle(n);
        if (cs.display === 'none' || cs.visibility === 'hidden' || cs.visibility === 'collapse') return;
        apart = !cs.display.startsWith('inline') && cs.display !== 'contents';
      } else if (n !== node) {
        apart = BLOCK.has(t);
      }
      if (apart) s += ' ';
      // CSS generated text of the named element itself (a toggle's "Expand", a
      // close button's "×"), as the accessible-name computation has it; not for
      // links, named by their words (and reading two styles per link of a big
      // page costs a third of its snapshot time).
      const gen = n === node && rendered && t !== 'a';
      if (gen) s += generated(n, '::before');
      for (const c of (n.shadowRoot ? n.shadowRoot.childNodes : n.childNodes)) walk(c);
      if (gen) s += generated(n, '::after');
      if (apart) s += ' ';
    };
    try { walk(node); } catch (e) { if (e !== ENOUGH) throw e; }
    return s;
  }
  function generated(el, pseudo) {
    const cs = getComputedStyle(el, pseudo);
    const c = cs.content;
    if (!c || c === 'none' || c === 'normal' || c.indexOf('"') < 0) return '';
    let text = '';
    for (const m of c.matchAll(/"((?:[^"\\]|\\.)*)"/g)) text += m[1].replace(/\\(.)/g, '$1');
    if (!text.trim()) return '';
    return cs.display.startsWith('inline') ? text : ' ' + text + ' ';
  }
  // Displays whose boxes flow inline with their neighbours' words.
  const INLINE_DISPLAY = /^(inline|contents|ruby|none)/;
  function transformed(text, how) {
    if (how === 'uppercase') return text.toUpperCase();
    if (how === 'lowercase') return text.toLowerCase();
    if (how === 'capitalize') return text.replace(/(^|[^\p{L}\p{N}'’])(\p{L})/gu, (m, a, b) => a + b.toUpperCase());
    return text;
  }
  // Whether an element is named by its attributes (not by its words).
  function ownName(el) {
    const a = el.getAttribute('aria-label');
    return !!((a && a.trim()) || el.getAttribute('aria-labelledby'));
  }
  function byId(el, id) {
    const root = el.getRootNode();
    return (root.getElementById ? root.getElementById(id) : null) || el.ownerDocument.getElementById(id);
  }

  const INPUT_ROLES = {
    button: 'button', submit: 'button', reset: 'button', image: 'button', file: 'button', color: 'button',
    checkbox: 'checkbox', radio: 'radio', range: 'slider', number: 'spinbutton', search: 'searchbox',
    hidden: null,
  };
  const LANDMARKS = new Set(['navigation', 'main', 'banner', 'contentinfo', 'complementary', 'form', 'dialog', 'region', 'search', 'alertdialog', 'group']);
  const INTERACTIVE = new Set(['button', 'checkbox', 'combobox', 'link', 'listbox', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'option', 'radio', 'scrollbar', 'searchbox', 'slider', 'spinbutton', 'switch', 'tab',
    'textbox', 'treeitem']);
  const VALUE_ROLES = new Set(['textbox', 'searchbox', 'spinbutton', 'slider', 'combobox']);
  const NAME_FROM_CONTENT = new Set(['button', 'link', 'heading', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'option', 'treeitem', 'switch', 'checkbox', 'radio', 'cell', 'gridcell', 'columnheader', 'rowheader']);
  // Roles whose children are presentational (ARIA): their words are their name
  // at most, never text of their own.
  const PRESENTATIONAL_KIDS = new Set(['button', 'checkbox', 'img', 'menuitemcheckbox', 'menuitemradio', 'meter',
    'option', 'progressbar', 'radio', 'scrollbar', 'separator', 'slider', 'switch', 'tab']);
  const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title', 'datalist']);
  const BLOCK = new Set(['p', 'div', 'li', 'ul', 'ol', 'dl', 'dt', 'dd', 'td', 'th', 'tr', 'table', 'pre',
    'blockquote', 'section', 'article', 'header', 'footer', 'nav', 'aside', 'main', 'form', 'fieldset', 'legend',
    'details', 'summary', 'figure', 'figcaption', 'br', 'hr', 'label', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'body']);

  function roleOf(el) {
    const explicit = el.getAttribute('role');
    if (explicit && explicit.trim()) return explicit.trim().split(/\s+/)[0];
    const t = el.localName;
    switch (t) {
      // An anchor without href that acts (its own click listener, a tabindex)
      // is a link all the same, as Chromium has it.
      case 'a': case 'area': return el.hasAttribute('href') || ownClick(el) ? 'link' : null;
      case 'button': return 'button';
      case 'input': {
        const ty = (el.getAttribute('type') || 'text').toLowerCase();
        return ty in INPUT_ROLES ? INPUT_ROLES[ty] : 'textbox';
      }
      case 'select': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'textarea': return 'textbox';
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
      case 'img': return el.getAttribute('alt') === '' ? null : 'img';
      case 'nav': return 'navigation';
      case 'main': return 'main';
      case 'aside': return 'complementary';
      case 'header': return el.closest('article,section,main,aside,nav') ? null : 'banner';
      case 'footer': return el.closest('article,section,main,aside,nav') ? null : 'contentinfo';
      case 'form': return 'form';
      case 'dialog': return 'dialog';
      case 'summary': return 'button';
      case 'iframe': case 'frame': return 'iframe';
      case 'option': return 'option';
      case 'section': return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'region' : null;
      case 'search': return 'search';
      case 'fieldset': return 'group';
    }
    if (el.isContentEditable && (el.parentElement == null || !el.parentElement.isContentEditable)) return 'textbox';
    return null;
  }

  // `words`: the element's words (clean(textOf(el))) when the caller has them.
  function nameOf(el, role, words) {
    const aria = el.getAttribute('aria-label');
    if (aria && aria.trim()) return clean(aria);
    const lb = el.getAttribute('aria-labelledby');
    if (lb) {
      const s = lb.split(/\s+/).map((id) => { const e = byId(el, id); return e ? textOf(e) : ''; }).join(' ');
      if (s.trim()) return clean(s);
    }
    const t = el.localName;
    if (t === 'input' || t === 'textarea' || t === 'select') {
      const ty = (el.type || '').toLowerCase();
      if (ty === 'submit' || ty === 'reset' || ty === 'button') return clean(el.value || (ty === 'submit' ? 'Submit' : ty === 'reset' ? 'Reset' : ''));
      if (ty === 'image') return clean(el.alt || el.value || 'Submit');
      if (el.labels && el.labels.length) {
        const s = Array.from(el.labels).map((l) => textOf(l, el)).join(' ');
        if (s.trim()) return clean(s);
      }
      return clean(el.getAttribute('title') || el.getAttribute('placeholder') || '');
    }
    if (t === 'img' || t === 'area') return clean(el.getAttribute('alt') || el.getAttribute('title') || '');
    if (t === 'iframe' || t === 'frame') return clean(el.getAttribute('title') || el.getAttribute('name') || '');
    if (t === 'fieldset') { const lg = el.querySelector(':scope > legend'); if (lg) return clean(lg.textContent); }
    if (NAME_FROM_CONTENT.has(role) || t === 'summary' || role === 'generic') {
      const s = words != null ? clean(words) : clean(textOf(el));
      if (s) return s;
    }
    return clean(el.getAttribute('title') || '');
  }

  function visible(el) {
    // A parsed (never rendered) document has no window and no layout: only
    // markup hides things there.
    if (!el.ownerDocument.defaultView) {
      return !el.hidden && !/display\s*:\s*none/i.test(el.getAttribute('style') || '');
    }
    if (el.checkVisibility) {
      if (el.checkVisibility({ visibilityProperty: true })) return true;
      // `display: contents` has no box but its children do.
      return getComputedStyle(el).display === 'contents';
    }
    return !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length);
  }
  // What a person can reach of a rendered element, beyond visible(): nothing
  // inside a collapsed ancestor (an accordion at height 0 that clips its
  // content).
  // (`memo`, for many calls in a row: ancestors already judged.)
  function seen(el, memo) {
    if (!visible(el)) return false;
    if (!el.ownerDocument.defaultView) return true;
    // A text field in a box clipped to nothing is an editor's keyboard proxy.
    if (el.matches(TEXT_FIELDS)) return true;
    const path = [];
    let ok = true;
    for (let a = el.parentElement; a && a !== el.ownerDocument.body; a = a.parentElement) {
      if (memo && memo.has(a)) { ok = memo.get(a); break; }
      path.push(a);
      if (collapsed(a, getComputedStyle(a))) { ok = false; break; }
    }
    // Every ancestor walked shares the answer from there up (a collapsed one
    // hides all below it).
    if (memo) for (const a of path) memo.set(a, ok);
    return ok;
  }
  // Whether a person sees an element's words: seen(), and nothing around it
  // transparent.
  function seenText(el) {
    if (!seen(el)) return false;
    return !el.checkVisibility || !el.ownerDocument.defaultView || el.checkVisibility({ opacityProperty: true, visibilityProperty: true });
  }
  // The words of `root` a person sees (not in a transparent, collapsed or
  // hidden part), up to about `max` chars, blocks joined by spaces.
  function wordsSeen(root, max) {
    const ok = new Map([[root, true]]);
    const shows = (e) => {
      if (ok.has(e)) return ok.get(e);
      const cs = getComputedStyle(e);
      const v = shows(e.parentElement) && !SKIP.has(e.localName) && e.getAttribute('aria-hidden') !== 'true' && cs.display !== 'none' && cs.visibility !== 'hidden' && cs.opacity !== '0' && !collapsed(e, cs) && !srOnly(e, cs);
      ok.set(e, v);
      return v;
    };
    let out = '';
    const tw = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = tw.nextNode(); n && out.length < max; n = tw.nextNode()) {
      if (n.parentElement && shows(n.parentElement) && n.data.trim()) out += (out ? ' ' : '') + n.data;
    }
    return out;
  }
  // A live region drawn for screen readers only (a 1px clipped box: "3 results
  // available", "option X focused"): no person sees it, and it keeps its words
  // after what it announced is gone.
  const LIVE_ROLES = new Set(['status', 'log', 'alert', 'marquee', 'timer']);
  function hiddenLive(el, cs) {
    const live = el.getAttribute('aria-live');
    if (!(live && live !== 'off') && !LIVE_ROLES.has(el.getAttribute('role') || '')) return false;
    return srOnly(el, cs);
  }
  // Drawn for screen readers only: clipped to nothing, or a box of a pixel that
  // clips its content (the "visually hidden" pattern; Select2 and Choices hide
  // the select they stand for so).
  function srOnly(el, cs) {
    const tiny = el.clientWidth <= 1 || el.clientHeight <= 1;
    const clipped = /rect\(0(px)?,? 0(px)?,? 0(px)?,? 0(px)?\)/.test(cs.clip) || /inset\((50|100)%/.test(cs.clipPath);
    return (tiny && cs.overflow !== 'visible' && cs.display !== 'inline' && cs.display !== 'contents') || clipped;
  }
  // Whether a person sees an element's box (rendered and not drawn for screen
  // readers only).
  function drawn(el) {
    return visible(el) && (!el.ownerDocument.defaultView || !srOnly(el, getComputedStyle(el)));
  }
  // A box that clips its content to nothing: overflow other than visible and no
  // height (or width) to show it in.
  function collapsed(el, cs) {
    return (cs.overflowY !== 'visible' && el.clientHeight === 0 && el.scrollHeight > 0 && cs.display !== 'inline' && cs.display !== 'contents')
      || (cs.overflowX !== 'visible' && el.clientWidth === 0 && el.scrollWidth > 0 && cs.display !== 'inline' && cs.display !== 'contents');
  }

  // Elements a page made clickable without a semantic role: a click-like
  // listener (recorded by the host's listener tracker, installed before any page
  // script runs), `onclick`, `tabindex`, `draggable`, or the top of a
  // `cursor: pointer` region. Large containers with a delegated listener (an
  // app's root) are not controls: at most CLICK_TEXT_MAX chars of text.
  const CLICKED = window.__ochre_clk || null;
  const CLICK_TEXT_MAX = 300;
  const POINTER_TAGS = new Set(['div', 'span', 'li', 'td', 'img', 'svg', 'i', 'a', 'p', 'dt', 'dd', 'label', 'em', 'strong', 'b', 'small', 'tr']);
  const NEVER_CLICKABLE = new Set(['body', 'html', 'main', 'header', 'footer', 'nav', 'aside', 'form', 'table', 'tbody', 'thead', 'ul', 'ol']);
  function smallEnough(el) {
    return (el.textContent || '').length <= CLICK_TEXT_MAX;
  }
  function pointerTop(el) {
    if (!POINTER_TAGS.has(el.localName) || !el.ownerDocument.defaultView) return false;
    if (el.localName === 'label' && el.control) return false;
    if (getComputedStyle(el).cursor !== 'pointer') return false;
    const p = el.parentElement;
    return !p || getComputedStyle(p).cursor !== 'pointer';
  }
  // Focusable by a tabindex (any value: -1 is focusable by script and click,
  // as Chromium's tree has it).
  function tabbable(el) {
    const ti = el.getAttribute('tabindex');
    return ti != null && ti.trim() !== '' && Number.isInteger(Number(ti)) && el.localName !== 'body' && el.localName !== 'html';
  }
  // Acting by its own means: a click listener, onclick, a tabindex.
  function ownClick(el) {
    return (CLICKED && CLICKED.has(el)) || typeof el.onclick === 'function' || el.hasAttribute('onclick') || tabbable(el);
  }
  function isInteractive(el, role, nested) {
    if (role && INTERACTIVE.has(role)) return true;
    if (tabbable(el)) return true;
    if (NEVER_CLICKABLE.has(el.localName) || (role && (LANDMARKS.has(role) || role === 'heading'))) return false;
    if (el.hasAttribute('onclick')) return true;
    if (el.getAttribute('draggable') === 'true') return smallEnough(el);
    if ((CLICKED && CLICKED.has(el)) || typeof el.onclick === 'function') return smallEnough(el);
    // Items of a list or table whose container listens (sortable lists, menus
    // that delegate their clicks).
    const p = el.parentElement;
    if (CLICKED && p && (el.localName === 'li' || el.localName === 'tr') && CLICKED.has(p)) return smallEnough(el);
    // Inside a control, a pointer cursor is the control's own (inherited).
    return !nested && pointerTop(el) && smallEnough(el);
  }

  // A role-less element that only listens (a framework's delegated listener, a
  // pointer cursor) around controls of its own is a wrapper, not a control:
  // folded away, its controls stand for it. One a page made focusable
  // (tabindex: a notebook cell, a card) stays.
  const CONTROLS = 'a[href],button,input,select,textarea,summary,[role],[tabindex],[contenteditable=""],[contenteditable=true]';
  // What takes typed text: an editor's keyboard proxy among them.
  const TEXT_FIELDS = 'textarea,input:not([type]),input[type=text],input[type=search],[contenteditable=""],[contenteditable=true]';
  function wrapper(el, role) {
    return !role && !el.hasAttribute('tabindex') && !el.hasAttribute('onclick') && !!el.querySelector(CONTROLS);
  }
  // A table of data (rows of cells under columns), not one that lays out a page:
  // it has headers or a caption, or its cells are short and hold no structure.
  function dataTable(el, role) {
    if (role === 'presentation' || role === 'none' || !el.rows.length) return false;
    if (role === 'table' || role === 'grid' || role === 'treegrid' || el.tHead || el.caption || el.querySelector(':scope > tbody > tr > th, :scope > tr > th')) return true;
    for (const c of el.querySelectorAll(':scope > tbody > tr > td, :scope > tr > td')) {
      if (c.querySelector('table,h1,h2,h3,h4,h5,h6,ul,ol,p,div,form,section,article,iframe') || (c.textContent || '').length > 200) return false;
    }
    return true;
  }
  function mint(el) {
    let n = L.ids.get(el);
    if (n === undefined) {
      n = L.next++;
      L.ids.set(el, n);
      L.refs.set(n, el);
    }
    return n;
  }

  // Input types whose value has a format or a meaning beyond text: shown in
  // snapshots (`textbox "Born" type=date ="2016-04-09"`).
  const TYPED = new Set(['date', 'time', 'datetime-local', 'month', 'week', 'number', 'range', 'color', 'email', 'tel', 'url', 'password']);
  // A field's value is quoted whole up to the line limit in snapshots and
  // find; an action's answer quotes less (VALUE_SHORT), and read_page of the
  // field itself quotes it all.
  const VALUE_MAX = LINE_MAX;
  const VALUE_SHORT = 300;
  // A field's value as it is (spaces and line breaks kept), cut only past
  // `max` (never when `max` is 0), saying so and how to read it whole.
  function quoteValue(v, max) {
    if (max == null) max = VALUE_MAX;
    if (!max || v.length <= max) return JSON.stringify(v);
    return JSON.stringify(v.slice(0, max - 1) + '\u2026') + ' (' + v.length + ' chars; read_page with its ref_id shows it whole)';
  }
  // `max`: where a value is cut (0: never).
  function stateOf(el, role, max) {
    let s = '';
    if (role === 'checkbox' || role === 'radio' || role === 'switch' || role === 'menuitemcheckbox' || role === 'menuitemradio') {
      const c = 'checked' in el && el.localName === 'input' ? el.checked : el.getAttribute('aria-checked') === 'true';
      if (c) s += ' checked';
    }
    if (el.disabled || el.getAttribute('aria-disabled') === 'true') s += ' disabled';
    const ex = el.getAttribute('aria-expanded');
    if (ex === 'true') s += ' expanded';
    else if (ex === 'false') s += ' collapsed';
    if (el.getAttribute('aria-selected') === 'true' || (el.localName === 'option' && el.selected)) s += ' selected';
    const ty = el.localName === 'input' ? (el.type || '').toLowerCase() : '';
    if (TYPED.has(ty)) {
      s += ' type=' + ty;
      if ((ty === 'range' || ty === 'number') && (el.min || el.max)) s += ' range=' + (el.min || '') + '..' + (el.max || '');
    }
    // A custom slider or spin button tells its range and value by ARIA.
    const now = !ty && el.localName !== 'select' && (role === 'slider' || role === 'spinbutton') ? el.getAttribute('aria-valuenow') : null;
    if (now != null) {
      const lo = el.getAttribute('aria-valuemin'), hi = el.getAttribute('aria-valuemax');
      if (lo != null || hi != null) s += ' range=' + (lo || '') + '..' + (hi || '');
      return s + ' =' + quoteValue(el.getAttribute('aria-valuetext') || now, max);
    }
    if (VALUE_ROLES.has(role) || ty === 'color') {
      let v = '';
      if (el.localName === 'select') v = Array.from(el.selectedOptions).map((o) => o.label || o.text).join(', ');
      else if ('value' in el && el.localName !== 'button') v = ty === 'password' && el.value ? '\u2022\u2022\u2022' : el.value;
      else if (el.isContentEditable) v = editorText(el);
      // A custom combobox shows its choice as its text (MUI's Select).
      // (What a person sees of it: not the options of a select it hides.)
      else if (role === 'combobox') v = clean(wordsSeen(el, 4 * VALUE_MAX).replace(/[\u200b-\u200d\ufeff]/g, ''), VALUE_MAX);
      if (v) s += ' =' + quoteValue(v, max);
    }
    if (el.localName === 'select') {
      if (role === 'listbox') {
        const v = Array.from(el.selectedOptions).map((o) => o.label || o.text).join(', ');
        if (v) s += ' =' + quoteValue(v, max);
      }
      s += ' (' + el.options.length + ' options)';
    }
    if (el.localName === 'input' && (el.type || '').toLowerCase() === 'file') s += ' file';
    return s;
  }

  // An editable element's text as its lines show it, without what the editor
  // draws but does not hold (a placeholder, widgets: aria-hidden and not
  // editable, as CodeMirror marks them).
  function editorText(el) {
    let v = el.innerText;
    for (const h of el.querySelectorAll('[aria-hidden="true"][contenteditable="false"]')) {
      const t = h.innerText;
      if (t) v = v.replace(t, '');
    }
    return v.replace(/\n$/, '');
  }

  // Children as rendered: an open shadow root replaces the light children; slots
  // show what is assigned to them; a same-origin iframe shows its document.
  function kids(node) {
    if (node.shadowRoot) return node.shadowRoot.childNodes;
    if (node.localName === 'slot') {
      const a = node.assignedNodes({ flatten: true });
      return a.length ? a : node.childNodes;
    }
    return node.childNodes;
  }
  function frameDoc(el) {
    try { return el.contentDocument; } catch (e) { return null; }
  }

  // ---- snapshot ------------------------------------------------------------------
  function snapshotAx(root, opts) {
    const out = [];
    const onlyInteractive = opts.filter === 'interactive';
    const maxDepth = opts.depth == null ? 1e9 : opts.depth;
    let top = null;
    let buf = '';
    let mute = 0;
    let inControl = 0;
    // Inside a box clipped to nothing: only text fields are walked.
    let clipped = 0;
    const ind = (d) => ' '.repeat(onlyInteractive ? 0 : d);
    const flush = (d) => {
      if (buf) {
        const s = clean(buf, LINE_MAX);
        buf = '';
        if (s && !onlyInteractive && d <= maxDepth) out.push(ind(d) + JSON.stringify(s));
      }
    };
    // The text-transform in force (innerText applies it: a person sees
    // "SUBMIT" where the markup says "Submit").
    let transform = 'none';
    const visit = (node, d) => {
      if (node.nodeType === 3) { if (!mute) buf += transform === 'none' ? node.data : transformed(node.data, transform); return; }
      if (node.nodeType !== 1) return;
      const el = node;
      const t = el.localName;
      // (`hidden` counts where there is no layout; where there is, what is
      // rendered decides: a page's CSS may show a hidden element.)
      if (SKIP.has(t) || el.getAttribute('aria-hidden') === 'true' || (el.hidden && !rendered)) return;
      if (!visible(el)) return;
      const cs = rendered ? getComputedStyle(el) : null;
      if (cs && el !== top && hiddenLive(el, cs)) return;
      // Clipped to nothing: nothing in it is seen, but a text field stays (an
      // editor types through a textarea in a box of no height, as CodeMirror
      // and Ace do; Chromium keeps it focusable). Transparent: its words are
      // not seen, but its controls stay (a date field's sections show once
      // focused, row actions under the pointer: a person clicks there all the
      // same).
      if (cs && el !== top && collapsed(el, cs)) {
        if (!el.querySelector(TEXT_FIELDS)) return;
        flush(d);
        clipped++;
        mute++;
        try { for (const c of kids(el)) visit(c, d); } finally { clipped--; mute--; }
        return;
      }
      if (clipped && !(el.matches(TEXT_FIELDS) || el.querySelector(TEXT_FIELDS))) return;
      const clear = !!cs && el !== top && cs.opacity === '0';
      const outer = transform;
      if (cs) transform = cs.textTransform;
      if (clear) { flush(d); mute++; }
      try { visitShown(el, t, cs, d); } finally { transform = outer; if (clear) mute--; }
    };
    const visitShown = (el, t, cs, d) => {
      const role = roleOf(el);
      if (isInteractive(el, role, inControl) && !wrapper(el, role)) {
        flush(d);
        const r = role || 'generic';
        // Words longer than a name: the name comes from attributes only, and
        // the words follow as text.
        const words = t !== 'select' && t !== 'input' && t !== 'textarea' && (NAME_FROM_CONTENT.has(r) || r === 'generic') && !ownName(el) ? clean(textOf(el, null, TEXT_MAX + 1), 1e9) : null;
        const long = words != null && words.length > TEXT_MAX;
        // A name from the words is as they show (text-transform applied, as in
        // Chromium's accessible name).
        let nm = long ? '' : nameOf(el, r, words);
        if (words != null && transform !== 'none') nm = transformed(nm, transform);
        if (d <= maxDepth) out.push(ind(d) + r + (nm ? ' ' + JSON.stringify(nm) : '') + ' ax_' + mint(el) + stateOf(el, r, el === top ? 0 : VALUE_MAX));
        if (t === 'select' && el === top && d + 1 <= maxDepth) {
          // read_page of the select itself lists every option.
          for (const o of el.options) out.push(ind(d + 1) + 'option ' + JSON.stringify(clean(o.label || o.text)) + (o.selected ? ' selected' : '') + (o.disabled ? ' disabled' : ''));
        }
        if (t !== 'select' && t !== 'input' && t !== 'textarea') {
          // A control named by its words keeps them in its name, one whose
          // children are presentational (a button, a tab) or that shows its
          // value (an editor, a custom combobox) has no words of its own; any
          // other shows its words as text lines under it (a notebook cell
          // named by aria-label, a card, a grid cell).
          // (Words the name already says, a day "1" named "November 1",
          // are not repeated.)
          const own = words != null ? null : clean(textOf(el, null, TEXT_MAX + 1), TEXT_MAX + 1);
          const said = own != null && own.length <= TEXT_MAX && nm.toLowerCase().includes(own.toLowerCase());
          const quietKids = (words != null && !long) || said || PRESENTATIONAL_KIDS.has(r) || VALUE_ROLES.has(r);
          if (quietKids) mute++;
          inControl++;
          for (const c of kids(el)) visit(c, d + 1);
          flush(d + 1);
          inControl--;
          if (quietKids) mute--;
        }
        return;
      }
      if (role === 'iframe') {
        flush(d);
        const doc = frameDoc(el);
        const nm = nameOf(el, role);
        // A cross-site frame the host reads itself: a mark it replaces with the frame's lines.
        const key = !doc && el.__ochre_frame;
        if ((!onlyInteractive || key) && d <= maxDepth) out.push(ind(d) + 'iframe' + (nm ? ' ' + JSON.stringify(nm) : '') + (key ? ' \u0001' + key + '\u0001' : doc ? '' : ' (cross-origin, not expanded)'));
        if (doc && doc.body) { for (const c of kids(doc.body)) visit(c, d + 1); flush(d + 1); }
        return;
      }
      if (t === 'table' && !onlyInteractive && dataTable(el, role)) {
        flush(d);
        table(el, d);
        return;
      }
      if (role === 'heading') {
        flush(d);
        const lvl = Number(el.getAttribute('aria-level') || t.slice(1)) || 2;
        if (!onlyInteractive && d <= maxDepth) out.push(ind(d) + 'h' + lvl + ' ' + JSON.stringify(nameOf(el, role)));
        mute++;
        for (const c of kids(el)) visit(c, d + 1);
        mute--;
        return;
      }
      if (role === 'img') {
        flush(d);
        const nm = nameOf(el, role);
        if (nm && !onlyInteractive && d <= maxDepth) out.push(ind(d) + 'img ' + JSON.stringify(nm));
        return;
      }
      if (role && LANDMARKS.has(role) && !mute) {
        flush(d);
        const nm = nameOf(el, role);
        if (!onlyInteractive && d <= maxDepth) out.push(ind(d) + role + (nm ? ' ' + JSON.stringify(nm) : ''));
        for (const c of kids(el)) visit(c, d + 1);
        flush(d + 1);
        return;
      }
      if (t === 'legend' && el.parentElement && el.parentElement.localName === 'fieldset') return;
      // A label's words are its control's name: do not repeat them as text.
      // A control a library hides behind its own widget (Select2, Choices: the
      // select is not rendered) is not named by it there: its label shows.
      const quiet = t === 'label' && !!el.control && (el.control.type || '').toLowerCase() !== 'hidden' && drawn(el.control);
      // Block-level boxes (by their computed display, as innerText has it: a
      // flex item is one) set their words apart; inline ones add nothing, so no
      // space appears where the page has none.
      const block = cs ? !INLINE_DISPLAY.test(cs.display) : BLOCK.has(t);
      if (block) flush(d);
      if (quiet) mute++;
      for (const c of kids(el)) visit(c, d);
      if (quiet) mute--;
      if (block) flush(d);
      else if (t === 'br' && !mute) buf += '\n';
    };
    // A table as rows of cells under its column names, so that each value can
    // be told by its column: `row "Pears" | "$2.05" | link "0 (restock)" ax_7`.
    const cellLine = (cell) => {
      const at = out.length;
      const outer = buf;
      buf = '';
      for (const c of kids(cell)) visit(c, 0);
      flush(0);
      buf = outer;
      // A landmark's bare line (a form around a delete button) says nothing here.
      const parts = out.splice(at).map((l) => l.trim()).filter((l) => !LANDMARKS.has(l));
      return parts.length ? parts.join(' ') : '""';
    };
    const table = (el, d) => {
      const cap = el.caption && visible(el.caption) ? clean(textOf(el.caption)) : '';
      const nm = ownName(el) ? nameOf(el, 'table') : cap;
      if (d <= maxDepth) out.push(ind(d) + 'table' + (nm ? ' ' + JSON.stringify(nm) : ''));
      for (const row of el.rows) {
        if (!visible(row) || !row.cells.length) continue;
        const head = (row.parentElement && row.parentElement.localName === 'thead') || Array.from(row.cells).every((c) => c.localName === 'th');
        const cells = Array.from(row.cells).filter((c) => visible(c)).map(cellLine);
        if (d + 1 <= maxDepth) out.push(ind(d + 1) + (head ? 'columns ' : 'row ') + cells.join(' | '));
      }
    };
    if (root.nodeType === 9) root = root.body || root.documentElement;
    const rendered = !!root.ownerDocument.defaultView;
    top = root;
    if (root === document.body || root === document.documentElement) {
      for (const c of kids(root)) visit(c, 0);
    } else {
      visit(root, 0);
    }
    flush(0);
    return out.join('\n');
  }

  // A frame's text is not in its page's innerText: each visible frame's text
  // follows the page's, under a line naming the frame (a cross-site frame's is a
  // mark the host replaces).
  function pageText(root) {
    const base = (root.nodeType === 9 ? root.body : root) || document.documentElement;
    let out = withFields(base, base.innerText || '');
    for (const f of base.querySelectorAll('iframe')) {
      if (!visible(f)) continue;
      const doc = frameDoc(f);
      const nm = nameOf(f, 'iframe');
      const head = '\n\n[iframe' + (nm ? ' ' + JSON.stringify(nm) : '') + ']\n';
      if (doc && doc.body) out += head + pageText(doc);
      else if (f.__ochre_frame) out += head + '\u0001' + f.__ochre_frame + '\u0001';
    }
    return out;
  }

  // innerText leaves out what fields hold: each shown field's value goes on
  // the line after its name's (where a person sees it), else at the end.
  function withFields(base, text) {
    if (!base.querySelectorAll) return text;
    let out = text;
    let at = 0;
    const rest = [];
    const fields = base.localName === 'textarea' || base.localName === 'input' ? [base] : base.querySelectorAll('input,textarea');
    for (const e of fields) {
      const v = fieldValue(e);
      if (!v || !drawn(e)) continue;
      const nm = nameOf(e, roleOf(e) || 'textbox');
      const i = nm ? out.indexOf(nm, at) : -1;
      if (i < 0) { rest.push(v); continue; }
      let eol = out.indexOf('\n', i + nm.length);
      if (eol < 0) eol = out.length;
      out = out.slice(0, eol) + '\n' + v + out.slice(eol);
      at = eol + 1 + v.length;
    }
    return rest.length ? out + (out ? '\n' : '') + rest.join('\n') : out;
  }

  function markdownOf(root, max) {
    let out = '';
    const emit = (s) => { out += s; };
    const inline = (n) => {
      if (n.nodeType === 3) return n.data.replace(/\s+/g, ' ');
      if (n.nodeType !== 1) return '';
      const t = n.localName;
      if (SKIP.has(t) || n.getAttribute('aria-hidden') === 'true' || !visible(n)) return '';
      const inner = () => Array.from(kids(n)).map(inline).join('');
      switch (t) {
        case 'a': { const s = inner().trim(); const h = n.getAttribute('href'); return h && s ? '[' + s + '](' + n.href + ')' : s; }
        case 'strong': case 'b': { const s = inner().trim(); return s ? '**' + s + '** ' : ''; }
        case 'em': case 'i': { const s = inner().trim(); return s ? '*' + s + '* ' : ''; }
        case 'code': return '`' + n.textContent + '`';
        case 'br': return '\n';
        case 'img': return n.alt ? '![' + n.alt + ']' : '';
        case 'input': case 'select': case 'textarea': return '';
      }
      if (BLOCK.has(t) || t === 'pre') { block(n); return ''; }
      return inner();
    };
    const para = (n) => {
      const s = Array.from(kids(n)).map(inline).join('').replace(/[ \t]+/g, ' ').trim();
      if (s) emit(s + '\n\n');
    };
    const block = (n) => {
      if (n.nodeType === 3) { const s = n.data.replace(/\s+/g, ' ').trim(); if (s) emit(s + '\n\n'); return; }
      if (n.nodeType !== 1) return;
      const t = n.localName;
      if (SKIP.has(t) || n.getAttribute('aria-hidden') === 'true' || !visible(n)) return;
      if (/^h[1-6]$/.test(t)) { emit('#'.repeat(Number(t[1])) + ' ' + clean(n.textContent, 500) + '\n\n'); return; }
      if (t === 'pre') { emit('```\n' + n.textContent.replace(/\n$/, '') + '\n```\n\n'); return; }
      if (t === 'ul' || t === 'ol') {
        let i = 1;
        for (const li of n.children) {
          if (li.localName !== 'li') continue;
          const s = Array.from(kids(li)).map(inline).join('').replace(/\s+/g, ' ').trim();
          if (s) emit((t === 'ol' ? i++ + '. ' : '- ') + s + '\n');
        }
        emit('\n');
        return;
      }
      if (t === 'iframe') {
        const d = frameDoc(n);
        if (d && d.body) block(d.body);
        else if (n.__ochre_frame) emit('\u0001' + n.__ochre_frame + '\u0001\n\n');
        return;
      }
      if (t === 'p' || t === 'li' || t === 'dt' || t === 'dd' || t === 'td' || t === 'th' || t === 'blockquote' || t === 'figcaption' || t === 'summary' || t === 'label') { para(n); return; }
      const hasBlock = Array.from(kids(n)).some((c) => c.nodeType === 1 && (BLOCK.has(c.localName) || /^h[1-6]$/.test(c.localName) || c.localName === 'pre' || c.localName === 'iframe'));
      if (!hasBlock) { para(n); return; }
      let run = '';
      for (const c of kids(n)) {
        if (c.nodeType === 1 && (BLOCK.has(c.localName) || /^h[1-6]$/.test(c.localName) || c.localName === 'pre' || c.localName === 'iframe')) {
          const s = run.replace(/\s+/g, ' ').trim();
          if (s) emit(s + '\n\n');
          run = '';
          block(c);
        } else run += inline(c);
        if (out.length > max) return;
      }
      const s = run.replace(/\s+/g, ' ').trim();
      if (s) emit(s + '\n\n');
    };
    block(root.nodeType === 9 ? root.body : root);
    return out.replace(/\n{3,}/g, '\n\n').trim();
  }

  function cut(s, max) {
    if (s.length <= max) return { text: s, truncated: false, total: s.length };
    return { text: s.slice(0, max), truncated: true, total: s.length };
  }

  function snapshot(a) {
    // A document the browser has only just created (a navigation under way) has
    // no root element yet: the host reads it again once it has loaded.
    if (a.ref == null && !document.documentElement) fail('DOCUMENT_LOADING', 'the document has not been parsed yet');
    const root = a.ref != null ? el(a.ref) : document;
    const mode = a.mode || 'ax';
    const max = a.max_chars || 1e9;
    let r;
    if (mode === 'ax') r = cut(snapshotAx(root, a), max);
    else if (mode === 'text') r = cut(pageText(root), max);
    else if (mode === 'markdown') r = cut(markdownOf(root, max), max);
    else if (mode === 'dom') {
      const src = root.nodeType === 9 ? root.documentElement : root;
      const c = src.cloneNode(true);
      c.querySelectorAll('script,style,noscript,template,link[rel=stylesheet],svg').forEach((e) => e.remove());
      r = cut(c.outerHTML.replace(/\n\s*\n+/g, '\n'), max);
    } else fail('INVALID_ARGUMENT', 'mode must be ax, text, markdown or dom', { field: 'mode' });
    r.url = location.href;
    r.title = document.title;
    return r;
  }

  // ---- refs and targets ---------------------------------------------------------
  function el(n) {
    n = Number(n);
    const want = expect && expect[n];
    const hint = 'call read_page (or find) again for fresh refs';
    if (want !== undefined && want !== L.token) fail('STALE_REF', 'ref ax_' + n + ' is from an older page (the tab navigated or reloaded since); ' + hint, { ref: 'ax_' + n });
    const e = L.refs.get(n);
    if (!e) fail('STALE_REF', 'ref ax_' + n + ' is not known on this page; ' + hint, { ref: 'ax_' + n });
    if (!e.isConnected) fail('STALE_REF', 'ref ax_' + n + ' no longer matches an element (it was removed from the page); ' + hint, { ref: 'ax_' + n });
    return e;
  }
  function selectAll(sel, max) {
    const found = [];
    const seen = new Set();
    let bad = null;
    const search = (root) => {
      if (found.length >= max) return;
      try {
        for (const e of root.querySelectorAll(sel)) { if (!seen.has(e)) { seen.add(e); found.push(e); if (found.length >= max) return; } }
      } catch (e) { bad = e; return; }
      for (const host of root.querySelectorAll('*')) {
        if (host.shadowRoot) search(host.shadowRoot);
        if (host.localName === 'iframe') { const d = frameDoc(host); if (d) search(d); }
        if (found.length >= max || bad) return;
      }
    };
    search(document);
    if (bad) fail('INVALID_ARGUMENT', 'invalid CSS selector ' + JSON.stringify(sel) + ': ' + String(bad.message || bad).split('\n')[0], { field: 'selector' });
    return found;
  }
  function xpathAll(xp, max) {
    let r;
    try { r = document.evaluate(xp, document, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null); } catch (e) {
      fail('INVALID_ARGUMENT', 'invalid XPath ' + JSON.stringify(xp) + ': ' + String(e.message || e).split('\n')[0], { field: 'xpath' });
    }
    const out = [];
    for (let i = 0; i < r.snapshotLength && out.length < max; i++) {
      let n = r.snapshotItem(i);
      if (n.nodeType !== 1) n = n.parentElement;
      if (n && !out.includes(n)) out.push(n);
    }
    return out;
  }
  function target(a, what) {
    if (a.ref != null) return el(a.ref);
    if (a.selector != null) {
      const m = selectAll(a.selector, 1);
      if (!m.length) fail('ELEMENT_NOT_FOUND', 'no element matches ' + JSON.stringify(a.selector), { selector: a.selector });
      return m[0];
    }
    fail('INVALID_ARGUMENT', (what || 'the target') + ' needs a ref or a selector', { field: 'ref' });
  }
  function describe(e) {
    const r = roleOf(e) || (isInteractive(e, null) ? 'generic' : e.localName);
    return { ref: 'ax_' + mint(e), role: r, name: nameOf(e, r) };
  }
  // `max`: where its value is cut (an action's answer: VALUE_SHORT).
  function refLine(e, max) {
    const d = describe(e);
    return d.role + (d.name ? ' ' + JSON.stringify(d.name) : '') + ' ' + d.ref + stateOf(e, d.role, max == null ? VALUE_SHORT : max);
  }
  // What a field holds as a person sees it: an input's or a text area's
  // value, an editor's text ('' for anything else, and for a password).
  function fieldValue(e) {
    if (e.localName === 'textarea') return e.value;
    if (e.localName === 'input') {
      const ty = (e.type || 'text').toLowerCase();
      return ty === 'password' || ty === 'hidden' || !('value' in e) || /^(checkbox|radio|button|submit|reset|image|file|range|color)$/.test(ty) ? '' : e.value;
    }
    if (e.isContentEditable && (!e.parentElement || !e.parentElement.isContentEditable)) return editorText(e);
    return '';
  }

  // ---- find ------------------------------------------------------------------------
  function candidates() {
    const out = [];
    const walk = (root) => {
      for (const e of root.querySelectorAll('*')) {
        if (e.shadowRoot) walk(e.shadowRoot);
        if (e.localName === 'iframe') { const d = frameDoc(e); if (d) walk(d); }
        const r = roleOf(e);
        if ((r && (INTERACTIVE.has(r) || r === 'heading' || r === 'img')) || (isInteractive(e, r) && !wrapper(e, r))) out.push([e, r || 'generic']);
      }
    };
    walk(document);
    return out;
  }
  const norm = (s) => String(s || '').toLowerCase().replace(/\s+/g, ' ').trim();
  const ROLE_WORDS = { button: 'button', btn: 'button', link: 'link', checkbox: 'checkbox', radio: 'radio',
    input: 'textbox', field: 'textbox', textbox: 'textbox', box: 'textbox', text: 'textbox', dropdown: 'combobox',
    select: 'combobox', combobox: 'combobox', heading: 'heading', title: 'heading', image: 'img', tab: 'tab',
    menu: 'menuitem', option: 'option', slider: 'slider', switch: 'switch', search: 'searchbox' };
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
      const extra = norm([e.getAttribute('placeholder'), e.getAttribute('name'), e.id, e.getAttribute('title'), e.localName === 'input' ? e.type : ''].join(' '));
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
        if (!p || held.has(p) || !norm(n.data).includes(q) || p.closest('style,script,noscript,template,[aria-hidden=true]')) continue;
        const text = clean(p.innerText || '', 1e9);
        if (!norm(text).includes(q) || !seenText(p)) continue;
        let inHit = false;
        for (const h of hits) if (h.contains(p)) { inHit = true; break; }
        if (inHit) continue;
        held.add(p);
        scored.push([norm(text) === q ? 50 : 30, p, text]);
      }
    }
    scored.sort((x, y) => y[0] - x[0]);
    const limit = Math.min(a.limit || 20, 20);
    const top = scored.slice(0, limit);
    const line = ([, e, text]) => text == null ? refLine(e, VALUE_MAX) : 'text ' + JSON.stringify(clean(text, TEXT_MAX)) + ' ax_' + mint(e);
    const r = { matches: top.map(line), total: scored.length };
    if (a.scores) r.scores = top.map(([s]) => s);
    return r;
  }
  function query(a) {
    const limit = Math.min(a.limit || 20, 200);
    const found = a.xpath != null ? xpathAll(a.xpath, limit + 1) : selectAll(a.selector, limit + 1);
    const shown = found.slice(0, limit).map((e) => {
      const attrs = {};
      for (const at of e.attributes) { if (at.name !== 'style' && Object.keys(attrs).length < 8) attrs[at.name] = clean(at.value, 120); }
      return { ref: 'ax_' + mint(e), tag: e.localName, text: clean(e.innerText != null ? e.innerText : e.textContent), attributes: attrs, visible: visible(e) };
    });
    return { matches: shown, more: found.length > limit };
  }

  // ---- geometry and input ---------------------------------------------------------
  function frameOffset(e) {
    let x = 0, y = 0;
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
  function hitsTarget(e, x, y) {
    // Whether a click at (x, y) (top-level viewport) lands on e or inside it.
    let doc = document, px = x, py = y, hit = null;
    for (let i = 0; i < 8; i++) {
      hit = doc.elementFromPoint(px, py);
      while (hit && hit.shadowRoot) { const inner = hit.shadowRoot.elementFromPoint(px, py); if (!inner || inner === hit) break; hit = inner; }
      if (hit && hit.localName === 'iframe') {
        const d = frameDoc(hit);
        if (!d) break;
        const r = hit.getBoundingClientRect();
        px -= r.left + hit.clientLeft; py -= r.top + hit.clientTop; doc = d;
        continue;
      }
      break;
    }
    if (!hit) return { ok: false, hit: null };
    const inside = hit === e || e.contains(hit) || (hit.getRootNode && hit.getRootNode().host && e.contains(hit.getRootNode().host)) || (e.localName === 'label' && false);
    const lbl = !!e.labels && Array.from(e.labels).some((l) => l === hit || l.contains(hit));
    return { ok: !!(inside || lbl), hit };
  }
  function hitName(h) {
    if (!h) return 'nothing';
    return h.localName + (h.id ? '#' + h.id : '') + (h.classList.length ? '.' + Array.from(h.classList).slice(0, 2).join('.') : '');
  }
  function point(e, how) {
    if (e.scrollIntoViewIfNeeded) e.scrollIntoViewIfNeeded(true);
    else e.scrollIntoView({ block: 'center', behavior: 'instant' });
    const [ox, oy] = frameOffset(e);
    const rects = Array.from(e.getClientRects());
    const r = rects.length ? rects[0] : e.getBoundingClientRect();
    if (!r || (r.width === 0 && r.height === 0)) return { x: null, y: null, reason: 'the element has no size on screen' };
    const cx = ox + r.left + r.width / 2, cy = oy + r.top + r.height / 2;
    if (how !== 'sample') { const h = hitsTarget(e, cx, cy); return { x: cx, y: cy, hits: h.ok, covered_by: h.ok ? null : hitName(h.hit) }; }
    const pts = [[0.5, 0.5], [0.25, 0.5], [0.75, 0.5], [0.5, 0.25], [0.5, 0.75], [0.1, 0.1], [0.9, 0.9], [0.1, 0.9], [0.9, 0.1]];
    let last = null;
    for (const [fx, fy] of pts) {
      const x = ox + r.left + r.width * fx, y = oy + r.top + r.height * fy;
      const h = hitsTarget(e, x, y);
      if (h.ok) return { x, y, hits: true };
      last = h.hit;
    }
    return { x: null, y: null, reason: 'covered by ' + hitName(last) };
  }

  // ---- actionability (Playwright's model) ---------------------------------------------
  // Why an element cannot take a pointer event now, or null: attached (el()
  // throws STALE_REF otherwise), visible, enabled, not transparent or inert,
  // not moving.
  function blocker(e, a, prevBox) {
    if (!visible(e)) return 'not visible';
    if (a.enabled !== false && (e.matches(':disabled') || e.closest('[aria-disabled=true]'))) return 'disabled';
    if (e.closest('[inert]')) return 'inert';
    // A box that moves or fades (a panel sliding in, a menu fading in) is
    // waited out. A transparent element that stays so is clickable, as in
    // Playwright: component libraries lay a transparent native input over their
    // drawn checkbox, and row actions show only under the pointer.
    const m = moving(e, prevBox);
    if (m) return m;
    return null;
  }
  const boxOf = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height].map((v) => Math.round(v * 2) / 2).join(','); };
  // Moving: its box changed since the last look, or an animation runs on it or
  // an ancestor (a panel sliding in). Without either, no frame needs waiting.
  function moving(e, prevBox) {
    if (prevBox != null && prevBox !== boxOf(e)) return 'moving';
    const anims = e.ownerDocument.getAnimations ? e.ownerDocument.getAnimations() : [];
    let why = null;
    for (const an of anims) {
      const t = an.effect && an.effect.target;
      if (an.playState !== 'running' || !t || !(t === e || (t.contains && t.contains(e)))) continue;
      // A finite animation (an endless pulse never ends: not waited for).
      const ct = an.effect.getComputedTiming ? an.effect.getComputedTiming() : null;
      if (!ct || !Number.isFinite(ct.endTime) || ct.endTime > 10000) continue;
      const kf = an.effect.getKeyframes ? an.effect.getKeyframes() : [];
      const props = new Set(kf.flatMap((k) => Object.keys(k)));
      if ([...props].some((p) => p === 'opacity' || p === 'visibility')) why = why || 'fading in';
      // Colours and shadows do not move a box.
      if ([...props].some((p) => /^(transform|translate|scale|rotate|top|left|right|bottom|width|height|margin|padding|inset|display)/.test(p))) return 'moving';
    }
    return why;
  }
  const nextFrame = () => new Promise((r) => { let done = false; const f = () => { if (!done) { done = true; r(); } }; requestAnimationFrame(f); setTimeout(f, 40); });
  // An element for an action: role, name, its snapshot line, tag, and whether it
  // takes the focus, is a native control or listens for clicks.
  function described(e) {
    const d = describe(e);
    d.line = refLine(e);
    d.tag = e.localName;
    d.focusable = e.tabIndex >= 0
      || typeof e.focus === 'function' && e.matches('a[href],button,input,select,textarea,[tabindex]');
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
    let prev = null, reason = null;
    for (;;) {
      const e = el(a.ref);
      reason = blocker(e, a, prev);
      prev = boxOf(e);
      if (!reason) {
        const p = point(e, 'sample');
        if (p.x != null) {
          // The box may have moved while it scrolled into view: look again.
          if (boxOf(e) === prev) {
            if (a.watch) { watch(e); L.watch.focusBefore = document.activeElement; info.token = L.token; }
            return { x: p.x, y: p.y, waited_ms: ms(), waited, ...info };
          }
          reason = 'moving';
        } else reason = p.reason;
      }
      if (!waited.includes(reason) && waited.length < 5) waited.push(reason);
      if (performance.now() - t0 >= max) return { x: null, y: null, reason, waited_ms: ms(), waited, ...info };
      await nextFrame();
    }
  }

  // ---- watching what an action changes -------------------------------------------
  function elState(e) {
    return [e.checked, e.value, e.selectedIndex, e.getAttribute && e.getAttribute('aria-checked'), e.getAttribute && e.getAttribute('aria-expanded'), e.getAttribute && e.getAttribute('aria-pressed'), e.isConnected].join('|');
  }
  function watch(e) {
    if (L.watch) unwatch();
    const w = { target: e, muts: 0, dispatchMuts: 0, added: [], delivered: false, url: location.href, title: document.title, state: elState(e), value: e.value, focus: null };
    const docs = new Set([document, e.ownerDocument]);
    w.observers = [];
    w.listeners = [];
    for (const d of docs) {
      const mo = new MutationObserver((recs) => {
        // When the target left the document: while one of ochre's input events
        // was being dispatched (a handler of the page's removed it: the
        // action's doing), or between them (a timer's doing).
        const inDispatch = dispatching(w);
        if (!w.gone && !e.isConnected) { w.gone = true; w.goneBetween = !inDispatch; }
        if (inDispatch) w.dispatchMuts++;
        for (const r of recs) {
          if (e.contains(r.target)) w.targetMuts = (w.targetMuts || 0) + 1;
          // A clock or countdown ticking on its own is not the action's doing.
          if (ticking(r.type === 'characterData' ? r.target.parentElement : r.target)) continue;
          w.muts++;
          if (w.added.length < 3) {
            // Words a person can see: not a <style>'s CSS or a <script>.
            const shown = (n) => { const p = n.nodeType === 1 ? n : n.parentElement; return !!p && !p.closest('style,script,noscript,template,[aria-hidden=true]') && (p.isConnected ? seenText(p) : false); };
            if (r.type === 'characterData' && shown(r.target)) { const s = clean(r.target.data, 80); if (s) w.added.push(s); }
            for (const n of r.addedNodes) {
              if (w.added.length >= 3) break;
              if (!shown(n)) continue;
              const s = clean(n.nodeType === 1 ? wordsSeen(n, 80) : n.textContent, 80);
              if (s) w.added.push(s);
            }
          }
        }
      });
      mo.observe(d.documentElement, { subtree: true, childList: true, attributes: true, characterData: true });
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
        if (path.includes(e) || (e.labels && Array.from(e.labels).some((l) => path.includes(l)))) {
          w.delivered = true;
          if (press) w.pressed = true;
          else if (ev.type === 'click' || ev.type === 'dblclick') w.clicked = true;
        } else if (!w.received && path.length && path[0].nodeType === 1) w.received = path[0];
      };
      // The input event being dispatched (see dispatching()).
      const current = (ev) => { w.cur = ev; };
      for (const type of INPUT_EVENTS) {
        win.addEventListener(type, current, true);
        w.listeners.push([win, type, current]);
      }
      const leaving = () => { w.leaving = true; };
      win.addEventListener('beforeunload', leaving, true);
      w.listeners.push([win, 'beforeunload', leaving]);
      for (const type of ['click', 'dblclick', 'pointerdown', 'mousedown', 'keydown', 'mouseover', 'dragstart', 'dragenter', 'dragover', 'drop']) {
        win.addEventListener(type, on, true);
        w.listeners.push([win, type, on]);
      }
    }
    L.watch = w;
    if (CLICKED) CLICKED.busy = true;
    return w;
  }
  // The events a click or a key press dispatches.
  const INPUT_EVENTS = ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click', 'dblclick', 'keydown', 'keyup', 'keypress'];
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
  function unwatch() {
    if (CLICKED) CLICKED.busy = false;
    const w = L.watch;
    if (!w) return;
    for (const o of w.observers) o.disconnect();
    for (const [win, t, f] of w.listeners) win.removeEventListener(t, f, true);
    L.watch = null;
  }
  // An element's place: its parent, its rank there, its box on the page.
  function placeOf(e) {
    const r = e.getBoundingClientRect();
    const rank = e.parentNode ? Array.prototype.indexOf.call(e.parentNode.childNodes, e) : -1;
    return { parent: e.parentNode, rank, x: Math.round(r.left + scrollX), y: Math.round(r.top + scrollY), connected: e.isConnected };
  }
  // What a drag changed: the source moved (another parent or rank, or its box
  // elsewhere: a draggable left where it was dropped), the target's subtree
  // changed, or the words of the page did (a list reordered, "Archived").
  function dragEffect(w) {
    const out = [];
    const now = placeOf(w.src);
    const was = w.srcPlace;
    if (now.connected !== was.connected || now.parent !== was.parent || now.rank !== was.rank) out.push('the dragged element moved in the page');
    else if (Math.abs(now.x - was.x) > 2 || Math.abs(now.y - was.y) > 2) out.push('the dragged element moved on screen');
    if (w.targetMuts) out.push('the drop target changed');
    if (document.body && document.body.innerText !== w.pageText) out.push('the page\'s text changed');
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
    if (document.title !== w.title) d.title = document.title;
    if (elState(w.target) !== w.state) {
      const e = w.target;
      d.target = { connected: e.isConnected };
      // Every <input> has `checked`: only a checkbox's or a radio's means anything.
      if (e.localName === 'input' && (e.type === 'checkbox' || e.type === 'radio')) d.target.checked = e.checked;
      // A field's new value is told by its length (it may be a secret): a mask
      // or an autocomplete that rewrote it shows.
      else if (typeof e.value === 'string' && e.value !== w.value) d.target.value_length = e.value.length;
      if (e.getAttribute('aria-expanded') != null) d.target.expanded = e.getAttribute('aria-expanded') === 'true';
      if (e.getAttribute('aria-pressed') != null) d.target.pressed = e.getAttribute('aria-pressed') === 'true';
      if (e.getAttribute('aria-checked') != null) d.target.checked = e.getAttribute('aria-checked') === 'true';
    }
    if (w.added.length) d.added = w.added;
    const a = document.activeElement;
    if (a && a !== document.body && a !== w.focusBefore) d.focus = refLine(a);
    d.changed = !!(d.url || d.title || d.target || w.muts > 0);
    return d;
  }
  function animating() {
    if (!document.getAnimations) return false;
    return document.getAnimations().some((an) => {
      if (an.playState !== 'running') return false;
      const t = an.effect && an.effect.getComputedTiming ? an.effect.getComputedTiming() : null;
      return !!t && Number.isFinite(t.endTime) && t.endTime <= 5000;
    });
  }
  function settle(a) {
    const w = L.watch;
    if (a.token && a.token !== L.token) return { navigated: true, changed: true, delivered: true, url: location.href, token: a.token };
    if (!w) return { changed: false, delivered: false, mutations: 0 };
    // After a drag, the dragged element must also have come to rest (a
    // revert animates it back to where it was: judged mid-way, it would pass
    // for moved), over a longer quiet (a loaded page's animation frames come
    // far apart).
    const idle = a.idle_ms || 150, quiet = w && w.srcPlace ? Math.max(a.quiet_ms || 0, 250) : a.quiet_ms || 50, max = a.max_ms || 2000;
    const t0 = performance.now();
    return new Promise((resolve) => {
      let lastMuts = -1, lastChange = t0;
      const tick = () => {
        const now = performance.now();
        if (w.leaving) { unwatch(); resolve({ navigated: true, changed: true, delivered: w.delivered, token: L.token }); return; }
        const changed = w.muts > 0 || location.href !== w.url || elState(w.target) !== w.state;
        if (w.muts !== lastMuts) { lastMuts = w.muts; lastChange = now; }
        if (w.srcPlace) {
          const p = placeOf(w.src);
          const at = p.x + ',' + p.y + ',' + p.rank;
          if (at !== w.srcAt) { w.srcAt = at; lastChange = now; }
        }
        // A change still animating (a modal fading in, a menu sliding open) is
        // not finished: its content may appear only when the transition ends.
        const done = (changed && now - lastChange >= quiet && !animating()) || (!changed && now - t0 >= idle) || now - t0 >= max;
        if (done) { const d = delta(w); if (!a.keep) unwatch(); resolve(d); } else setTimeout(tick, 10);
      };
      setTimeout(tick, 0);
    });
  }

  // ---- forms -------------------------------------------------------------------------
  function setNative(e, v) {
    const proto = e.localName === 'textarea' ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    const desc = Object.getOwnPropertyDescriptor(proto, 'value');
    if (desc && desc.set) desc.set.call(e, v); else e.value = v;
  }
  const fire = (e, type) => e.dispatchEvent(new Event(type, { bubbles: true }));
  // true or false from a form value (a boolean, or 'true'/'on'/'checked' and
  // their opposites), else null.
  function truthOf(value) {
    if (typeof value === 'boolean') return value;
    if (value === 'true' || value === 'on' || value === 'checked') return true;
    if (value === 'false' || value === 'off' || value === 'unchecked') return false;
    return null;
  }
  function setValue(e, value, field) {
    const t = e.localName;
    const ty = (e.type || '').toLowerCase();
    const label = refLine(e);
    if (e.disabled) fail('ELEMENT_NOT_EDITABLE', label + ' is disabled', { field });
    // Custom widgets are operated as a person does (the plugin clicks and
    // types): a combobox opens and its option is chosen by name, a slider moves
    // by its keys.
    const w = widgetOf(e);
    if (w === 'combobox') {
      const names = Array.isArray(value) ? value : [value];
      if (!names.length || names.some((n) => typeof n !== 'string' && typeof n !== 'number')) fail('INVALID_ARGUMENT', label + ' takes the name of an option (or a list of names, where it takes several)', { field });
      return { widget: w, typing: t === 'input' || t === 'textarea' || e.isContentEditable, line: label };
    }
    if (w === 'toggle') {
      const want = truthOf(value);
      if (want == null) fail('INVALID_ARGUMENT', label + ' is a ' + roleOf(e) + ': value must be true or false', { field });
      if (roleOf(e) === 'radio' && !want && e.getAttribute('aria-checked') === 'true') fail('INVALID_ARGUMENT', 'a radio button cannot be unchecked; choose another option of its group', { field });
      return { widget: w, want, checked: e.getAttribute('aria-checked') === 'true', line: label };
    }
    if (w === 'slider') {
      if (!Number.isFinite(Number(value)) || value === '' || typeof value === 'boolean') fail('INVALID_ARGUMENT', label + ' takes a number', { field });
      return { widget: w, line: label };
    }
    if (t === 'input' && (ty === 'checkbox' || ty === 'radio')) {
      const want = truthOf(value);
      if (want == null) fail('INVALID_ARGUMENT', label + ' is a ' + ty + ': value must be true or false', { field });
      if (ty === 'radio' && !want && e.checked) fail('INVALID_ARGUMENT', 'a radio button cannot be unchecked; choose another option of its group', { field });
      if (e.checked !== want) e.click();
      return { checked: e.checked };
    }
    if (t === 'select') {
      const wanted = Array.isArray(value) ? value.map(String) : [String(value)];
      const opts = Array.from(e.options);
      const pick = wanted.map((v) => opts.find((o) => o.value === v) || opts.find((o) => norm(o.label || o.text) === norm(v)));
      const missing = wanted.filter((v, i) => !pick[i]);
      if (missing.length) fail('INVALID_ARGUMENT', label + ' has no option ' + JSON.stringify(missing[0]) + '; options: ' + opts.slice(0, 20).map((o) => JSON.stringify(o.label || o.text)).join(', '), { field });
      if (pick.length > 1 && !e.multiple) fail('INVALID_ARGUMENT', label + ' takes one option', { field });
      e.focus();
      for (const o of opts) o.selected = pick.includes(o);
      fire(e, 'input'); fire(e, 'change');
      return { value: pick.map((o) => o.label || o.text).join(', ') };
    }
    if (typeof value === 'boolean' || (typeof value === 'object' && value !== null)) fail('INVALID_ARGUMENT', label + ' takes text: value must be a string or a number', { field });
    const v = String(value);
    if (t === 'input' || t === 'textarea') {
      if (ty === 'file') fail('INVALID_ARGUMENT', label + ' is a file input: use file_upload', { field });
      if (['button', 'submit', 'reset', 'image', 'hidden'].includes(ty)) fail('ELEMENT_NOT_EDITABLE', label + ' does not take a value', { field });
      if (e.readOnly) fail('ELEMENT_NOT_EDITABLE', label + ' is read-only', { field });
      // Refused before the page sees anything: the field keeps its value.
      const bad = valueProblem(e, v);
      if (bad) fail('INVALID_ARGUMENT', label + ' ' + bad, { field, format: FORMATS[ty] || null });
      e.focus();
      setNative(e, v);
      fire(e, 'input'); fire(e, 'change');
      // Read back once the page's handlers (and a framework's re-render) ran.
      return new Promise((resolve) => setTimeout(() => resolve(heldValue(e, v, ty === 'password')), 0));
    }
    if (e.isContentEditable) {
      e.focus();
      e.textContent = v;
      e.dispatchEvent(new InputEvent('input', { bubbles: true, data: v, inputType: 'insertText' }));
      return new Promise((resolve) => setTimeout(() => resolve({ value: editorText(e) }), 0));
    }
    fail('ELEMENT_NOT_EDITABLE', label + ' is not a form field', { field });
  }

  // A custom widget form_input operates by hand: 'combobox' (a listbox pops up
  // to choose from) or 'slider' (moved by its keys), or null.
  function widgetOf(e) {
    const t = e.localName;
    if (t === 'select') return null;
    const role = roleOf(e);
    const popup = (e.getAttribute('aria-haspopup') || '').toLowerCase();
    if (role === 'combobox' || (popup === 'listbox' && !('value' in e && t === 'input'))) return 'combobox';
    if (role === 'slider' && !(t === 'input' && (e.type || '').toLowerCase() === 'range')) return 'slider';
    if (t !== 'input' && (role === 'checkbox' || role === 'switch' || role === 'radio' || role === 'menuitemcheckbox')) return 'toggle';
    return null;
  }
  // The visible options a combobox offers: in the list it controls (a portal
  // anywhere in the page) or else any list shown.
  function optionsOf(cb) {
    const ids = ((cb.getAttribute('aria-controls') || '') + ' ' + (cb.getAttribute('aria-owns') || '')).split(/\s+/).filter(Boolean);
    let scopes = ids.map((id) => byId(cb, id)).filter((x) => x && visible(x));
    if (!scopes.length) scopes = Array.from(document.querySelectorAll('[role=listbox],[role=menu],[role=tree],[role=grid]')).filter(visible);
    const out = [];
    for (const sc of scopes) {
      for (const o of sc.querySelectorAll('[role=option],[role=menuitem],[role=menuitemradio],[role=treeitem]')) {
        if (!out.includes(o) && visible(o)) out.push(o);
      }
    }
    return out;
  }
  function pickOption(a) {
    const cb = el(a.ref);
    const want = norm(a.name);
    const named = optionsOf(cb).map((o) => [o, nameOf(o, roleOf(o) || 'option')]);
    const by = (f) => named.filter(([, n]) => f(norm(n)));
    let hit = by((n) => n === want);
    if (!hit.length) hit = by((n) => n.startsWith(want));
    if (!hit.length) hit = by((n) => n.includes(want));
    const options = named.slice(0, 30).map(([, n]) => n);
    if (hit.length === 1 || (hit.length > 1 && norm(hit[0][1]) === want)) {
      const o = hit[0][0];
      return { ref: 'ax_' + mint(o), name: hit[0][1], line: refLine(o), options };
    }
    return { ref: null, options, ambiguous: hit.length > 1 ? hit.slice(0, 10).map(([, n]) => n) : null };
  }
  // What a widget shows now; with `name`, where it shows that name: in itself,
  // or beside it (a multiple select's chips).
  function shownValue(a) {
    const e = el(a.ref);
    const t = e.localName;
    const v = (t === 'input' || t === 'textarea') ? e.value : (e.getAttribute('aria-valuetext') || e.getAttribute('aria-valuenow') || e.innerText || '').trim();
    const r = { value: v, now: e.getAttribute('aria-valuenow'), checked: e.getAttribute('aria-checked'), expanded: e.getAttribute('aria-expanded'), line: refLine(e) };
    const want = a.name != null ? norm(a.name) : '';
    if (want && !norm(v).includes(want)) {
      let n = e.parentElement;
      for (let i = 0; n && i < 4; i++, n = n.parentElement) {
        const tx = clean(n.innerText || '', 300);
        if (norm(tx).includes(want)) { r.beside = tx; break; }
      }
    }
    return r;
  }

  // The formats of typed inputs, as an answer that refuses a value says them.
  const FORMATS = {
    date: 'YYYY-MM-DD (e.g. 2016-04-09)', time: 'HH:MM or HH:MM:SS, 24-hour (e.g. 15:38)',
    'datetime-local': 'YYYY-MM-DDTHH:MM (e.g. 2016-04-09T15:38)', month: 'YYYY-MM (e.g. 2016-04)',
    week: 'YYYY-Www (e.g. 2016-W14)', number: 'a number (e.g. 42 or 3.5)', range: 'a number',
    color: '#rrggbb (e.g. #ff8800)', email: 'an e-mail address (e.g. name@example.com)',
    url: 'an absolute URL (e.g. https://example.com/)',
  };
  function limits(e) {
    const p = [];
    if (e.min) p.push('min ' + e.min);
    if (e.max) p.push('max ' + e.max);
    if (e.step && e.step !== 'any') p.push('step ' + e.step);
    return p.length ? ' (' + p.join(', ') + ')' : '';
  }
  // Why a text-like field would not hold `v` as asked (the browser drops a
  // malformed date, clamps a range, its own checks reject a value), or null.
  // The field is tried with the value and put back, with no event: the page
  // sees nothing.
  function valueProblem(e, v) {
    if (e.localName !== 'input' && e.localName !== 'textarea') return null;
    const ty = e.localName === 'input' ? (e.type || 'text').toLowerCase() : 'textarea';
    if (e.maxLength >= 0 && v.length > e.maxLength) return 'takes at most ' + e.maxLength + ' characters (the value has ' + v.length + '); nothing was set';
    if (e.localName !== 'input') return null;
    const before = e.value;
    setNative(e, v);
    const held = e.value, vs = e.validity;
    // ValidityState is live: copy what it says of `v` before putting the old value back.
    const val = { typeMismatch: vs.typeMismatch, badInput: vs.badInput, rangeUnderflow: vs.rangeUnderflow, rangeOverflow: vs.rangeOverflow, stepMismatch: vs.stepMismatch, patternMismatch: vs.patternMismatch };
    setNative(e, before);
    const fmt = FORMATS[ty] ? 'type=' + ty + ' takes ' + FORMATS[ty] : '';
    if (v !== '' && held === '') return (fmt || 'does not take ' + JSON.stringify(v)) + '; nothing was set';
    if (ty === 'color' && held.toLowerCase() !== v.toLowerCase()) return fmt + '; nothing was set';
    if (ty === 'range' && Number(held) !== Number(v)) return fmt + limits(e) + ': ' + JSON.stringify(v) + ' would be stored as ' + JSON.stringify(held) + '; nothing was set';
    if (val.typeMismatch || val.badInput) return fmt + '; nothing was set';
    if (val.rangeUnderflow || val.rangeOverflow || val.stepMismatch) return 'refuses ' + JSON.stringify(v) + limits(e) + ' (the browser: ' + JSON.stringify(validationOf(e, v)) + '); nothing was set';
    if (val.patternMismatch) return 'refuses ' + JSON.stringify(v) + ': it must match the pattern ' + JSON.stringify(e.pattern) + '; nothing was set';
    return null;
  }
  function validationOf(e, v) {
    const before = e.value;
    setNative(e, v);
    const m = e.validationMessage;
    setNative(e, before);
    return m;
  }
  // What a field holds after it was set to `asked`: said exactly, and said
  // plainly when it is not what was asked (a mask, a trim, a page that put
  // its own value back).
  function heldValue(e, asked, secret) {
    const held = e.value;
    if (secret) return { value: held ? '\u2022\u2022\u2022' : '', differs: held !== asked };
    const r = { value: held };
    if (held !== asked) r.asked = asked;
    return r;
  }

  function formFields() {
    const out = [];
    const walk = (root) => {
      for (const e of root.querySelectorAll('input,select,textarea,[contenteditable=""],[contenteditable=true]')) {
        const ty = (e.type || '').toLowerCase();
        if (['hidden', 'submit', 'button', 'reset', 'image'].includes(ty)) continue;
        out.push(e);
      }
      for (const h of root.querySelectorAll('*')) {
        if (h.shadowRoot) walk(h.shadowRoot);
        if (h.localName === 'iframe') { const d = frameDoc(h); if (d) walk(d); }
      }
    };
    walk(document);
    return out;
  }
  function keysOf(e) {
    const ks = [nameOf(e, roleOf(e)), e.getAttribute('name'), e.id, e.getAttribute('placeholder'), e.getAttribute('aria-label')];
    return ks.filter(Boolean).map((k) => norm(k).replace(/[:*]+$/, '').trim());
  }
  function resolveField(key, fields) {
    const k = norm(key).replace(/[:*]+$/, '').trim();
    const exact = fields.filter((e) => keysOf(e).includes(k));
    const pool = exact.length ? exact : fields.filter((e) => keysOf(e).some((x) => x.startsWith(k) || (k.length > 2 && x.includes(k))));
    return pool;
  }
  function fill(a) {
    const fields = formFields();
    const plan = [];
    const problems = [];
    for (const [key, value] of Object.entries(a.fields || {})) {
      const pool = resolveField(key, fields);
      if (!pool.length) { problems.push('no field matches ' + JSON.stringify(key)); continue; }
      const e = pool[0];
      const ty = (e.type || '').toLowerCase();
      if (ty === 'radio') {
        const group = pool.filter((x) => x.type === 'radio' && x.name === e.name);
        const named = group.length > 1 || pool.length === 1;
        const opt = group.find((x) => x.value === String(value) || norm(nameOf(x, 'radio')) === norm(value));
        if (named && opt && typeof value !== 'boolean') { plan.push([opt, true, key]); continue; }
        if (typeof value === 'boolean') { plan.push([e, value, key]); continue; }
        problems.push(JSON.stringify(key) + ' has no option ' + JSON.stringify(value) + '; options: ' + group.map((x) => JSON.stringify(x.value)).join(', '));
        continue;
      }
      if (ty === 'checkbox' && pool.filter((x) => x.type === 'checkbox').length > 1 && (Array.isArray(value) || typeof value === 'string')) {
        const group = pool.filter((x) => x.type === 'checkbox' && x.name === e.name);
        const want = (Array.isArray(value) ? value : [value]).map(String);
        const unknown = want.filter((v) => !group.some((x) => x.value === v || norm(nameOf(x, 'checkbox')) === norm(v)));
        if (unknown.length) { problems.push(JSON.stringify(key) + ' has no option ' + JSON.stringify(unknown[0]) + '; options: ' + group.map((x) => JSON.stringify(x.value)).join(', ')); continue; }
        for (const x of group) { const on = want.includes(x.value) || want.some((v) => norm(nameOf(x, 'checkbox')) === norm(v)); plan.push([x, on, key, !on]); }
        continue;
      }
      plan.push([e, value, key]);
    }
    for (const [r, value] of Object.entries(a.refs || {})) plan.push([el(r.replace(/^ax_/, '')), value, r]);
    if (problems.length) {
      fail('FIELD_NOT_FOUND', problems.join('; ') + '. Fields on the page: ' + fields.slice(0, 30).map((e) => JSON.stringify(keysOf(e)[0] || e.localName)).join(', '), { fields: problems });
    }
    // Check every value before changing anything.
    for (const [e, value, key] of plan) {
      const ty = (e.type || '').toLowerCase();
      if (e.disabled) fail('ELEMENT_NOT_EDITABLE', refLine(e) + ' is disabled', { field: key });
      if (widgetOf(e)) fail('INVALID_ARGUMENT', JSON.stringify(key) + ' is ' + refLine(e) + ', a custom ' + widgetOf(e) + ': set it with form_input {ref: "ax_' + mint(e) + '"}; nothing was filled', { field: key });
      if ((ty === 'checkbox' || ty === 'radio') && typeof value !== 'boolean' && !['true', 'false', 'on', 'off'].includes(String(value))) fail('INVALID_ARGUMENT', JSON.stringify(key) + ' is a ' + ty + ': value must be true or false', { field: key });
      if (e.localName === 'input' || e.localName === 'textarea') {
        if (ty !== 'checkbox' && ty !== 'radio' && (typeof value === 'string' || typeof value === 'number')) {
          const bad = valueProblem(e, String(value));
          if (bad) fail('INVALID_ARGUMENT', JSON.stringify(key) + ' (' + refLine(e) + ') ' + bad, { field: key, format: FORMATS[ty] || null });
        }
      }
      if (e.localName === 'select') {
        const vs = Array.isArray(value) ? value.map(String) : [String(value)];
        const opts = Array.from(e.options);
        const bad = vs.find((v) => !opts.some((o) => o.value === v || norm(o.label || o.text) === norm(v)));
        if (bad !== undefined) fail('INVALID_ARGUMENT', JSON.stringify(key) + ' has no option ' + JSON.stringify(bad) + '; options: ' + opts.slice(0, 20).map((o) => JSON.stringify(o.label || o.text)).join(', '), { field: key });
      }
    }
    const done = [];
    for (const [e, value, key, quiet] of plan) {
      const r = setValue(e, value, key);
      if (r && typeof r.then === 'function') r.then(() => {}, () => {});
      if (!quiet) done.push([e, String(value)]);
    }
    let submitted = false;
    if (a.submit) {
      const form = (plan.length && plan[0][0].form) || document.querySelector('form');
      if (!form) fail('ELEMENT_NOT_FOUND', 'there is no form to submit');
      const btn = form.querySelector('button[type=submit],input[type=submit],button:not([type])');
      // After the fields were read back (below).
      setTimeout(() => setTimeout(() => { if (btn) btn.click(); else form.requestSubmit(); }, 0), 0);
      submitted = true;
    }
    // Each field read back once the page's handlers ran: a value the field
    // does not hold as given is said.
    return new Promise((resolve) => setTimeout(() => resolve({
      filled: done.map(([e, asked]) => {
        const line = refLine(e);
        const ty = (e.type || '').toLowerCase();
        if (!('value' in e) || ty === 'checkbox' || ty === 'radio' || e.localName === 'select' || ty === 'password' || e.value === asked) return line;
        return line + ' (asked ' + JSON.stringify(asked) + ')';
      }),
      submitted, token: L.token,
    }), 0));
  }

  // ---- scroll, drag, waits, extraction -------------------------------------------------
  function scroll(a) {
    if (a.ref != null) {
      const e = el(a.ref);
      e.scrollIntoView({ block: 'center', behavior: 'instant' });
    } else {
      const se = document.scrollingElement || document.documentElement;
      const amount = a.amount || Math.round(innerHeight * 0.8);
      if (a.to === 'top') se.scrollTo({ top: 0, behavior: 'instant' });
      else if (a.to === 'bottom') se.scrollTo({ top: se.scrollHeight, behavior: 'instant' });
      else {
        const dx = a.direction === 'left' ? -amount : a.direction === 'right' ? amount : 0;
        const dy = a.direction === 'up' ? -amount : a.direction === 'down' || !a.direction ? amount : 0;
        se.scrollBy({ left: dx, top: dy, behavior: 'instant' });
      }
    }
    const se = document.scrollingElement || document.documentElement;
    return { scrollX: Math.round(scrollX), scrollY: Math.round(scrollY), scrollHeight: se.scrollHeight, viewportHeight: innerHeight, atTop: scrollY <= 0, atBottom: Math.ceil(scrollY + innerHeight) >= se.scrollHeight - 1 };
  }
  function html5Drag(src, dst) {
    const dt = new DataTransfer();
    const [sx, sy] = frameOffset(dst);
    const r = dst.getBoundingClientRect();
    const at = { clientX: r.left + r.width / 2 + sx, clientY: r.top + r.height / 2 + sy };
    const ev = (target, type) => target.dispatchEvent(new DragEvent(type, Object.assign({ bubbles: true, cancelable: true, composed: true, dataTransfer: dt }, at)));
    ev(src, 'dragstart');
    ev(dst, 'dragenter');
    ev(dst, 'dragover');
    ev(dst, 'drop');
    ev(src, 'dragend');
  }
  function check(a) {
    switch (a.type) {
      case 'selector': { const m = selectAll(a.value, 1); return m.length > 0 && (!a.visible || visible(m[0])); }
      case 'selector_hidden': { const m = selectAll(a.value, 1); return m.length === 0 || !visible(m[0]); }
      default: fail('INVALID_ARGUMENT', 'unknown check ' + a.type);
    }
  }

  // JSON-Schema-driven extraction: JSON-LD, microdata, OpenGraph/meta, then CSS heuristics.
  function extract(a) {
    const scope = a.ref != null ? el(a.ref) : a.selector != null ? target(a) : document;
    const schema = a.schema || {};
    const multiple = schema.type === 'array';
    const props = (multiple ? (schema.items || {}).properties : schema.properties) || {};
    const names = Object.keys(props).filter((k) => /^[A-Za-z0-9_-]+$/.test(k));
    const strategies = [];
    const lower = (k) => k.toLowerCase().replace(/[_-]/g, '');
    const fromObj = (obj) => {
      const r = {};
      if (!obj || typeof obj !== 'object') return r;
      const map = {};
      for (const [k, v] of Object.entries(obj)) map[lower(k.replace(/^.*[:/]/, ''))] = v;
      for (const n of names) {
        let v = map[lower(n)];
        if (v === undefined) continue;
        if (v && typeof v === 'object' && !Array.isArray(v)) v = v.name || v['@value'] || v.price || v.url || JSON.stringify(v);
        r[n] = v;
      }
      return r;
    };
    const coerce = (n, v) => {
      const t = (props[n] || {}).type;
      if (v == null) return v;
      if (t === 'number' || t === 'integer') { const x = parseFloat(String(v).replace(/[^0-9.+-]/g, '')); return isNaN(x) ? null : t === 'integer' ? Math.round(x) : x; }
      if (t === 'boolean') return /^(true|yes|1|in ?stock)$/i.test(String(v).trim());
      if (t === 'array') return Array.isArray(v) ? v : [v];
      return typeof v === 'string' ? v.replace(/\s+/g, ' ').trim() : typeof v === 'object' ? JSON.stringify(v) : String(v);
    };
    const items = [];
    // JSON-LD
    const ld = [];
    for (const s of (scope.querySelectorAll ? scope : document).querySelectorAll('script[type="application/ld+json"]')) {
      try {
        const j = JSON.parse(s.textContent);
        const push = (x) => { if (Array.isArray(x)) x.forEach(push); else if (x && typeof x === 'object') { ld.push(x); if (x['@graph']) push(x['@graph']); if (x.offers) ld.push(Object.assign({}, x, typeof x.offers === 'object' && !Array.isArray(x.offers) ? x.offers : {})); } };
        push(j);
      } catch (e) { /* bad JSON-LD is skipped */ }
    }
    for (const x of ld) { const r = fromObj(x); if (Object.keys(r).length) items.push(r); }
    if (items.length) strategies.push('json-ld');
    // Microdata
    const md = [];
    for (const scopeEl of (scope.querySelectorAll ? scope : document).querySelectorAll('[itemscope]')) {
      const o = {};
      for (const p of scopeEl.querySelectorAll('[itemprop]')) {
        if (p.closest('[itemscope]') !== scopeEl && p !== scopeEl) continue;
        const v = p.getAttribute('content') || p.getAttribute('href') || p.getAttribute('src') || p.textContent;
        for (const name of p.getAttribute('itemprop').split(/\s+/)) if (!(name in o)) o[name] = v;
      }
      const r = fromObj(o);
      if (Object.keys(r).length) md.push(r);
    }
    if (md.length) { strategies.push('microdata'); items.push(...md); }
    // OpenGraph / meta
    const og = {};
    for (const m of document.querySelectorAll('meta[property],meta[name]')) {
      const k = (m.getAttribute('property') || m.getAttribute('name') || '').replace(/^(og|product|article|twitter):/, '');
      if (k && !(k in og)) og[k] = m.getAttribute('content');
    }
    if (!('title' in og) && document.title) og.title = document.title;
    const ogr = fromObj(og);
    // CSS heuristics: an element whose class, id, itemprop or data attribute names the field.
    const css = (root) => {
      const r = {};
      for (const n of names) {
        const k = n.replace(/[^A-Za-z0-9_-]/g, '');
        const e = root.querySelector('[itemprop="' + k + '"],[data-' + k.toLowerCase() + '],[data-field="' + k + '"],.' + k + ',#' + k + ',[class*="' + k.toLowerCase() + '"],[name="' + k + '"]');
        if (e) r[n] = e.getAttribute('content') || (e.localName === 'a' && (props[n] || {}).format === 'uri' ? e.href : null) || e.value || e.innerText || e.textContent;
      }
      return r;
    };
    let data;
    if (multiple) {
      let list = a.item_selector ? [] : items.filter((r) => Object.keys(r).length);
      if (!list.length) {
        // Repeated containers: the CSS selector in `item_selector`, or elements sharing a class that contain field-named children.
        const sel = a.item_selector;
        const conts = sel ? Array.from((scope.querySelectorAll ? scope : document).querySelectorAll(sel)) : [];
        list = conts.map(css).filter((r) => Object.keys(r).length);
        if (list.length) strategies.push('css-heuristic');
      }
      data = list.map((r) => { const o = {}; for (const n of names) if (r[n] !== undefined) o[n] = coerce(n, r[n]); return o; });
    } else {
      const merged = {};
      for (const r of items) for (const [k, v] of Object.entries(r)) if (!(k in merged)) merged[k] = v;
      let used = false;
      for (const [k, v] of Object.entries(ogr)) if (!(k in merged) && v) { merged[k] = v; used = true; }
      if (used) strategies.push('opengraph');
      const c = css(scope.querySelector ? scope : document);
      let usedCss = false;
      for (const [k, v] of Object.entries(c)) if (!(k in merged) && v) { merged[k] = v; usedCss = true; }
      if (usedCss) strategies.push('css-heuristic');
      data = {};
      for (const n of names) if (merged[n] !== undefined) data[n] = coerce(n, merged[n]);
    }
    const found = multiple ? names.filter((n) => data.some((d) => n in d)) : names.filter((n) => n in data);
    const missing = names.filter((n) => !found.includes(n));
    return { url: location.href, data, fieldsFound: found.length, fieldsTotal: names.length, fieldsMissing: missing, strategies };
  }

  // ---- dispatch ------------------------------------------------------------------------
  const ops = {
    ping: () => ({ url: location.href, ready: document.readyState }),
    snapshot,
    find,
    query,
    describe: (a) => described(target(a)),
    resolve_query: (a) => {
      const f = find({ query: a.query, limit: 1 });
      if (!f.matches.length) fail('ELEMENT_NOT_FOUND', 'nothing on the page matches ' + JSON.stringify(a.query) + '; try read_page or find with other words', { query: a.query });
      return { ref: /ax_(\d+)/.exec(f.matches[0])[0] };
    },
    point: (a) => point(el(a.ref), a.how),
    actionable,
    pick_option: pickOption,
    shown: shownValue,
    // Crawls: read fetched HTML without rendering it (no scripts run, nothing loads).
    extract_static: (a) => {
      const doc = new DOMParser().parseFromString(a.html || '', 'text/html');
      const base = doc.createElement('base');
      base.href = a.url;
      (doc.head || doc.documentElement).prepend(base);
      const body = doc.body || doc.documentElement;
      const text = (body.textContent || '').replace(/\s+/g, ' ').trim();
      const scripted = !!doc.querySelector('script[src], script:not([type]), script[type=module], script[type="text/javascript"]');
      const max = a.max_chars || 20000;
      const out = {
        title: (doc.title || '').trim(),
        links: [...new Set(Array.from(doc.querySelectorAll('a[href]'), (x) => x.href.split('#')[0]).filter((h) => /^https?:/.test(h)))].slice(0, 2000),
        next: nextLink(doc),
        needs_render: scripted && text.length < 200,
      };
      if (a.mode === 'markdown') { const c = cut(markdownOf(body, max), max); out.content = c.text; if (c.truncated) out.truncated = true; }
      else if (a.mode === 'text') { const c = cut(text, max); out.content = c.text; if (c.truncated) out.truncated = true; }
      return out;
    },
    // Who the fields a call is about to type into are (by ref, or by label or
    // name as fill_form takes them), and whether each holds a secret: a password,
    // or a field the page marks as a password or a one-time code.
    field_secrets: (a) => {
      const out = {};
      const fields = (a.keys || []).length ? formFields() : [];
      const put = (k, e) => {
        if (!e) return;
        const ty = (e.type || '').toLowerCase();
        const ac = ((e.getAttribute && e.getAttribute('autocomplete')) || '').toLowerCase();
        const otp = /\bone-time-code\b/.test(ac);
        out[k] = { name: nameOf(e, roleOf(e) || 'textbox'), secret: ty === 'password' || otp || /\b(current|new)-password\b/.test(ac), otp };
      };
      for (const k of a.keys || []) put(k, resolveField(k, fields)[0]);
      for (const r of a.refs || []) { const e = L.refs.get(Number(String(r).replace(/^ax_/, ''))); if (e && e.isConnected) put(r, e); }
      return out;
    },
    // Recordings: who a ref is (role, name, index among its namesakes), and who that is now.
    identify: (a) => {
      const e = el(a.ref);
      const r = roleOf(e) || 'generic', nm = nameOf(e, r);
      const same = candidates().filter(([c, cr]) => cr === r && norm(nameOf(c, cr)) === norm(nm)).map(([c]) => c);
      return { role: r, name: nm, nth: Math.max(0, same.indexOf(e)), tag: e.localName };
    },
    locate: (a) => {
      const same = candidates().filter(([c, cr]) => cr === a.role && norm(nameOf(c, cr)) === norm(a.name)).map(([c]) => c);
      const at = same[Number(a.nth) || 0];
      const e = at && visible(at) ? at : (same.find(visible) || same[0]);
      if (!e) fail('ELEMENT_NOT_FOUND', 'no ' + a.role + ' named ' + JSON.stringify(a.name) + ' on the page now', { role: a.role, name: a.name });
      return { ref: 'ax_' + mint(e), matches: same.length };
    },
    relocate: (a) => {
      // Re-find the target by role and name (an AX-style resolution), in case it was re-rendered.
      const e0 = L.refs.get(Number(a.ref));
      const want = a.role, nm = norm(a.name);
      let e = e0 && e0.isConnected ? e0 : null;
      if (!e) for (const [c, r] of candidates()) { if (r === want && norm(nameOf(c, r)) === nm && visible(c)) { e = c; break; } }
      if (!e) return { x: null, reason: 'no element with that role and name now' };
      const p = point(e, 'sample');
      p.ref = 'ax_' + mint(e);
      return p;
    },
    watch: (a) => { const e = a.ref != null ? el(a.ref) : (document.activeElement || document.body || document.documentElement); watch(e); L.watch.focusBefore = document.activeElement; return { token: L.token }; },
    settle,
    unwatch: () => { unwatch(); return {}; },
    js_click: (a) => { const e = el(a.ref); e.click(); return {}; },
    // What a field holds now (a password masked), or null for what is no field.
    value_of: (a) => {
      const e = el(a.ref);
      const ty = (e.type || '').toLowerCase();
      if (e.localName === 'input' || e.localName === 'textarea') return { value: ty === 'password' ? null : e.value, secret: ty === 'password' };
      if (e.isContentEditable) return { value: editorText(e) };
      return { value: null };
    },
    // A widget whose focusable part is inside it (a slider's track) is focused
    // there.
    focus: (a) => {
      const e = el(a.ref);
      e.focus();
      const active = () => { const r = e.getRootNode().activeElement; return r && (r === e || e.contains(r)); };
      if (!active()) { const inner = e.querySelector('input,textarea,select,button,[contenteditable=true],[tabindex]:not([tabindex="-1"])'); if (inner) inner.focus(); }
      return { focused: !!active() };
    },
    set_value: (a) => { const e = el(a.ref); return Promise.resolve(setValue(e, a.value, 'value')).then((r) => { r.line = refLine(e); return r; }); },
    fill,
    scroll,
    drag_info: (a) => {
      const s = target({ ref: a.source, selector: a.source_selector }, 'the source');
      const d = target({ ref: a.target, selector: a.target_selector }, 'the target');
      const html5 = s.draggable === true || s.getAttribute('draggable') === 'true';
      s.scrollIntoView({ block: 'center', behavior: 'instant' });
      const ps = point(s, 'plain');
      const pd = point(d, 'plain');
      watch(d); L.watch.focusBefore = document.activeElement;
      if (!html5) {
        L.watch.src = s;
        // Where the source is and what the page says now: a drag is judged by
        // what it changed (see delta).
        L.watch.srcPlace = placeOf(s);
        L.watch.pageText = document.body ? document.body.innerText : '';
      }
      const tr = d.getBoundingClientRect();
      return { token: L.token, html5, source: ps, target: pd, target_box: { width: tr.width, height: tr.height }, source_line: refLine(s), target_line: refLine(d) };
    },
    html5_drag: (a) => {
      const s = target({ ref: a.source, selector: a.source_selector }, 'the source');
      const d = target({ ref: a.target, selector: a.target_selector }, 'the target');
      html5Drag(s, d);
      return {};
    },
    file_input: (a) => {
      const e = target(a, 'file_upload');
      if (!(e.localName === 'input' && (e.type || '').toLowerCase() === 'file')) fail('INVALID_ARGUMENT', refLine(e) + ' is not a file input (<input type=file>)', { field: a.ref != null ? 'ref' : 'selector' });
      if (e.disabled) fail('ELEMENT_NOT_EDITABLE', refLine(e) + ' is disabled');
      return { line: refLine(e), multiple: e.multiple, ref: 'ax_' + mint(e) };
    },
    element: (a) => target(a),
    files_of: (a) => { const e = target(a); fire(e, 'input'); fire(e, 'change'); return { files: Array.from(e.files || []).map((f) => f.name) }; },
    check,
    extract,
    storage: (a) => {
      let st;
      try { st = a.type === 'session' ? window.sessionStorage : window.localStorage; } catch (e) { st = null; }
      if (!st) fail('STORAGE_UNAVAILABLE', 'this page (' + location.href.slice(0, 80) + ') has no ' + a.type + 'Storage; navigate to a site first');
      switch (a.action) {
        case 'get': {
          if (a.key != null) return { key: a.key, value: st.getItem(a.key) };
          const items = {};
          for (let i = 0; i < st.length; i++) { const k = st.key(i); items[k] = st.getItem(k); }
          return { items };
        }
        case 'set':
          try { st.setItem(a.key, a.value); } catch (e) { fail('STORAGE_FULL', 'cannot store ' + JSON.stringify(a.key) + ': ' + e.message); }
          return { set: a.key };
        case 'remove': { const had = st.getItem(a.key) !== null; st.removeItem(a.key); return { removed: had }; }
        case 'clear': { const n = st.length; st.clear(); return { cleared: n }; }
        case 'keys': { const keys = []; for (let i = 0; i < st.length; i++) keys.push(st.key(i)); return { keys }; }
        default: fail('INVALID_ARGUMENT', 'unknown storage action ' + a.action, { field: 'action' });
      }
    },
  };
  function run(ctx) {
    if (L.next < ctx.base) L.next = ctx.base;
    const lo = L.next;
    expect = ctx.expect;
    try {
      const f = ops[ctx.op];
      if (!f) fail('INVALID_ARGUMENT', 'unknown page operation ' + ctx.op);
      const v = f(ctx.args || {});
      if (ctx.raw) return v;
      const wrap = (value) => ({ ok: value === undefined ? null : value, token: L.token, lo, hi: L.next });
      if (v && typeof v.then === 'function') return v.then(wrap, (e) => ({ err: { code: e.code || 'JS_ERROR', message: String(e.message || e), details: e.details || {} }, token: L.token, lo, hi: L.next }));
      return wrap(v);
    } catch (e) {
      if (ctx.raw) throw e;
      return { err: { code: e instanceof OpError ? e.code : 'JS_ERROR', message: String((e && e.message) || e), details: (e && e.details) || {} }, token: L.token, lo, hi: L.next };
    }
  }
  Object.defineProperty(L, 'run', { value: run });
  Object.defineProperty(window, KEY, { value: L, enumerable: false });
  return L;
})
