  // ---- text and names -------------------------------------------------------
  const TEXT_MAX = 100;
  // A line of text in a snapshot: whole paragraphs, cut only when very long
  // (with a mark saying so); names stay short (TEXT_MAX).
  const LINE_MAX = 2000;
  const clean = (s, max) => {
    s = String(s == null ? '' : s)
      .replace(/\s+/g, ' ')
      .trim();
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
        if (n === skip || t === 'script' || t === 'style' || t === 'template') return;
        if (n.hidden || n.getAttribute('aria-hidden') === 'true') return;
        // What an element inside says of itself stands for its words, as the
        // accessible-name computation has it: its aria-label, a button's
        // name, a text field's value (a sortable column's header is named
        // "Name Sort column ascending" by its button).
        const own = n.getAttribute('aria-label');
        if (own && own.trim()) {
          s += ' ' + own + ' ';
          return;
        }
        if (CONTROL_TAGS.has(t)) {
          s += ' ' + embedded(n, t) + ' ';
          return;
        }
      }
      if (t === 'br') {
        s += ' ';
        return;
      }
      if (t === 'img') {
        s += ' ' + (n.getAttribute('alt') || '') + ' ';
        return;
      }
      let apart = false;
      if (n !== node && rendered) {
        const cs = getComputedStyle(n);
        const disp = cs.display,
          vis = cs.visibility;
        if (disp === 'none' || vis === 'hidden' || vis === 'collapse') return;
        apart = !disp.startsWith('inline') && disp !== 'contents';
      } else if (n !== node) {
        apart = BLOCK.has(t);
      }
      if (apart) s += ' ';
      // CSS generated text of the named element itself (a toggle's "Expand", a
      // close button's "×", an accordion title's "+"), as the accessible-name
      // computation has it. A link's styles are read only when a style rule
      // that gives such text may apply to it (reading two styles per link of a
      // big page costs a third of its snapshot time).
      const gen = n === node && rendered && (t !== 'a' || linkGenerates(n));
      if (gen) s += generated(n, '::before');
      eachKid(n, walk);
      if (gen) s += generated(n, '::after');
      if (apart) s += ' ';
    };
    try {
      walk(node);
    } catch (e) {
      if (e !== ENOUGH) throw e;
    }
    return s;
  }
  // An embedded control's part of the words around it.
  // (As the accessible-name computation has it: a button by its name, a
  // select by its choice, a text field, spin button or combobox by its value,
  // a secret never; what it holds is read as `held` reads it.)
  function embedded(el, t) {
    if (t === 'button') return nameOf(el, 'button');
    const h = held(el);
    if (t === 'select') return h.value;
    const r = roleOf(el);
    const valued = r === 'textbox' || r === 'searchbox' || r === 'spinbutton' || r === 'combobox';
    return valued && h.text && !h.secret ? h.value : '';
  }
  // Whether a style rule giving ::before or ::after text may apply to link
  // `el`: by the selectors of the document's rules that give such text (read
  // once per page operation, as one selector list); true when they cannot be
  // told (a sheet of another origin, nested rules, a link in a shadow root
  // with sheets of its own). The first links of an operation are matched one
  // by one (an action's target: matching the list against a whole page,
  // rustdoc's Vec with 16,000 elements, cost an action 11-12 ms); past those
  // (a snapshot's), the elements the list matches are found at once, in one
  // native walk.
  const MATCH_EACH = 16;
  function linkGenerates(el) {
    const doc = el.ownerDocument;
    if (el.getRootNode() !== doc) return true;
    let c = GEN_RULES.get(doc);
    if (!c || c.op !== L.opSeq) {
      c = { op: L.opSeq, sels: generatingSelectors(doc), asked: 0, matched: null };
      GEN_RULES.set(doc, c);
    }
    if (c.sels == null) return true;
    if (!c.sels) return false;
    if (c.matched) return c.matched.has(el);
    if (++c.asked <= MATCH_EACH) return el.matches(c.sels);
    c.matched = new Set(doc.querySelectorAll(c.sels));
    return c.matched.has(el);
  }
  const GEN_RULES = new WeakMap();
  const PSEUDO_TEXT = /::?(before|after)\b/g;
  function generatingSelectors(doc) {
    const sels = [];
    const visit = (rules) => {
      for (const r of rules) {
        const sel = r.selectorText;
        if (sel == null) {
          // @media, @supports, @layer and the like; an @import's sheet.
          if (r.cssRules) visit(r.cssRules);
          else if (r.styleSheet) visit(r.styleSheet.cssRules);
          continue;
        }
        if (r.cssRules && r.cssRules.length) throw ENOUGH;
        PSEUDO_TEXT.lastIndex = 0;
        if (!PSEUDO_TEXT.test(sel)) continue;
        // (A custom property's value is known only per element: it may give text.)
        const c = r.style.content;
        if (!(c && c.indexOf('var(') >= 0) && !contentText(c).trim()) continue;
        for (const part of sel.split(',')) {
          PSEUDO_TEXT.lastIndex = 0;
          if (PSEUDO_TEXT.test(part)) sels.push(part.replace(PSEUDO_TEXT, '').trim() || '*');
        }
      }
    };
    try {
      for (const sh of doc.styleSheets) visit(sh.cssRules);
      for (const sh of doc.adoptedStyleSheets || []) visit(sh.cssRules);
    } catch (e) {
      return null;
    }
    // One list, matched at once (a selector that does not parse alone: each
    // link is then looked at).
    const all = sels.join(',');
    try {
      doc.documentElement.matches(all || '*');
    } catch (e) {
      return null;
    }
    return all;
  }
  function generated(el, pseudo) {
    const cs = getComputedStyle(el, pseudo);
    const text = contentText(cs.content, cs.quotes);
    if (!text.trim()) return '';
    return cs.display.startsWith('inline') ? text : ' ' + text + ' ';
  }
  // The text a `content` value gives: its strings, images and counters not
  // (url(), image-set(), counter(), attr(): no words of their own), or the
  // alternative text after a "/" in their stead, as the accessible-name
  // computation has it (`url(search.svg) / "Search"` says "Search"); quotes
  // (`open-quote`) by the element's `quotes` (the outer pair).
  const CONTENT_FN = /[a-z-]+\((?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^)"'])*\)/gi;
  const CONTENT_TOKEN = /"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|(\/)|\b(open|close)-quote\b/g;
  function contentText(c, quotes) {
    if (!c || c === 'none' || c === 'normal') return '';
    let text = '';
    let pair = null;
    for (const m of c.replace(CONTENT_FN, ' ').matchAll(CONTENT_TOKEN)) {
      if (m[3]) text = '';
      else if (m[4]) {
        if (!pair) {
          const q = quotes && quotes !== 'auto' && quotes !== 'none' ? contentStrings(quotes) : [];
          pair = q.length >= 2 ? q : quotes === 'none' ? ['', ''] : ['\u201c', '\u201d'];
        }
        text += m[4] === 'open' ? pair[0] : pair[1];
      } else text += (m[1] != null ? m[1] : m[2]).replace(/\\(.)/g, '$1');
    }
    return text;
  }
  const contentStrings = (v) => Array.from(v.matchAll(CONTENT_TOKEN), (m) => (m[1] != null ? m[1] : m[2] || ''));
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
    button: 'button',
    submit: 'button',
    reset: 'button',
    image: 'button',
    file: 'button',
    color: 'button',
    checkbox: 'checkbox',
    radio: 'radio',
    range: 'slider',
    number: 'spinbutton',
    search: 'searchbox',
    hidden: null,
  };
  const LANDMARKS = new Set([
    'navigation',
    'main',
    'banner',
    'contentinfo',
    'complementary',
    'form',
    'dialog',
    'region',
    'search',
    'alertdialog',
    'group',
  ]);
  const INTERACTIVE = new Set([
    'button',
    'checkbox',
    'combobox',
    'link',
    'listbox',
    'menuitem',
    'menuitemcheckbox',
    'menuitemradio',
    'option',
    'radio',
    'scrollbar',
    'searchbox',
    'slider',
    'spinbutton',
    'switch',
    'tab',
    'textbox',
    'treeitem',
  ]);
  const VALUE_ROLES = new Set(['textbox', 'searchbox', 'spinbutton', 'slider', 'combobox']);
  // What a person acts on inside an element: a field, a button, a link, a
  // focusable part, an element of an interactive role.
  const OWN_CONTROLS =
    'a[href],button,input,select,textarea,[contenteditable=""],[contenteditable=true],[tabindex]' +
    Array.from(INTERACTIVE, (r) => ',[role=' + r + ']').join('');
  // A generic (a role-less element one can focus or click) is named by its
  // words only when they are its own: one around controls of its own (a
  // focusable layout around a whole form, Quasar's field box around its
  // input) has them named under it, and its words read as text there, as
  // Chromium names it nothing.
  function wordsAreOwn(el, role) {
    return role !== 'generic' || !el.querySelector(OWN_CONTROLS);
  }
  const NAME_FROM_CONTENT = new Set([
    'button',
    'link',
    'heading',
    'tab',
    'menuitem',
    'menuitemcheckbox',
    'menuitemradio',
    'option',
    'treeitem',
    'switch',
    'checkbox',
    'radio',
    'cell',
    'gridcell',
    'columnheader',
    'rowheader',
  ]);
  // Roles whose children are presentational (ARIA): their words are their name
  // at most, never text of their own.
  const PRESENTATIONAL_KIDS = new Set([
    'button',
    'checkbox',
    'img',
    'menuitemcheckbox',
    'menuitemradio',
    'meter',
    'option',
    'progressbar',
    'radio',
    'scrollbar',
    'separator',
    'slider',
    'switch',
    'tab',
  ]);
  const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title', 'datalist']);
  const BLOCK = new Set([
    'p',
    'div',
    'li',
    'ul',
    'ol',
    'dl',
    'dt',
    'dd',
    'td',
    'th',
    'tr',
    'table',
    'pre',
    'blockquote',
    'section',
    'article',
    'header',
    'footer',
    'nav',
    'aside',
    'main',
    'form',
    'fieldset',
    'legend',
    'details',
    'summary',
    'figure',
    'figcaption',
    'br',
    'hr',
    'label',
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'body',
  ]);

  // A custom element's ElementInternals, as the script every document gets
  // first keeps them (see CLICK_TRACKER in pageops/loads.rs); only an autonomous
  // custom element (a name with a dash) can have them.
  function internalsOf(el) {
    if (el.localName.indexOf('-') < 0) return undefined;
    const w = el.ownerDocument.defaultView;
    const c = w && w.__ochre_clk;
    return c && c.internals ? c.internals.get(el) : undefined;
  }
  const INTERNAL = {
    role: 'role',
    'aria-label': 'ariaLabel',
    'aria-checked': 'ariaChecked',
    'aria-selected': 'ariaSelected',
    'aria-expanded': 'ariaExpanded',
    'aria-disabled': 'ariaDisabled',
    'aria-pressed': 'ariaPressed',
    'aria-hidden': 'ariaHidden',
    'aria-valuenow': 'ariaValueNow',
    'aria-valuemin': 'ariaValueMin',
    'aria-valuemax': 'ariaValueMax',
    'aria-valuetext': 'ariaValueText',
  };
  // An ARIA attribute of an element, or where it has none, what the element
  // gives itself through ElementInternals (its default, as Chromium takes it).
  function aria(el, name) {
    const v = el.getAttribute(name);
    if (v != null) return v;
    const i = internalsOf(el);
    const w = i && i[INTERNAL[name]];
    return w == null ? null : String(w);
  }
  // The element that has the focus, inside the shadow roots it is in (a
  // web component's own button, not its host).
  function deepActive() {
    let a = document.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    return a;
  }
  function roleOf(el) {
    const explicit = aria(el, 'role');
    if (explicit && explicit.trim()) return explicit.trim().split(/\s+/)[0];
    const t = el.localName;
    switch (t) {
      // An anchor without href that acts (its own click listener, a tabindex)
      // is a link all the same, as Chromium has it.
      case 'a':
      case 'area':
        return el.hasAttribute('href') || ownClick(el) ? 'link' : null;
      case 'button':
        return 'button';
      case 'input': {
        const ty = (el.getAttribute('type') || 'text').toLowerCase();
        return ty in INPUT_ROLES ? INPUT_ROLES[ty] : 'textbox';
      }
      case 'select':
        return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'textarea':
        return 'textbox';
      case 'h1':
      case 'h2':
      case 'h3':
      case 'h4':
      case 'h5':
      case 'h6':
        return 'heading';
      case 'img':
        return el.getAttribute('alt') === '' ? null : 'img';
      case 'nav':
        return 'navigation';
      case 'main':
        return 'main';
      case 'aside':
        return 'complementary';
      case 'header':
        return el.closest('article,section,main,aside,nav') ? null : 'banner';
      case 'footer':
        return el.closest('article,section,main,aside,nav') ? null : 'contentinfo';
      case 'form':
        return 'form';
      case 'dialog':
        return 'dialog';
      case 'summary':
        return 'button';
      case 'iframe':
      case 'frame':
        return 'iframe';
      case 'option':
        return 'option';
      case 'section':
        return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'region' : null;
      case 'search':
        return 'search';
      case 'fieldset':
        return 'group';
    }
    if (el.isContentEditable && (el.parentElement == null || !el.parentElement.isContentEditable)) return 'textbox';
    return null;
  }

  const LABELABLE = new Set(['button', 'meter', 'output', 'progress']);
  // An element's labels as `el.labels` has them (its tree's labels, in tree
  // order). During a read (`labelIndex` set: see READS in dispatch) they come
  // from one pass over each tree's labels: `el.labels` walks the whole tree
  // the first time it is asked of each element, and a read of a page with
  // 12,000 fields spent seconds there.
  let labelIndex = null;
  // (`native`: the platform's list, for when there is no index; a
  // form-associated custom element's is its internals'.)
  function labelsOf(el, native) {
    const root = labelIndex && el.getRootNode();
    if (!root || (root.nodeType !== 9 && root.nodeType !== 11)) return (native ? native() : el.labels) || [];
    let m = labelIndex.get(root);
    if (!m) {
      m = new Map();
      for (const l of root.querySelectorAll('label')) {
        const c = l.control;
        if (c) m.set(c, (m.get(c) || []).concat(l));
      }
      labelIndex.set(root, m);
    }
    return m.get(el) || [];
  }
  // `words`: the element's words (clean(textOf(el))) when the caller has them.
  function nameOf(el, role, words) {
    const label = aria(el, 'aria-label');
    if (label && label.trim()) return clean(label);
    const lb = el.getAttribute('aria-labelledby');
    if (lb) {
      const s = lb
        .split(/\s+/)
        .map((id) => {
          // (A field it names is said by what it holds.)
          const e = byId(el, id);
          return !e ? '' : CONTROL_TAGS.has(e.localName) ? embedded(e, e.localName) : textOf(e);
        })
        .join(' ');
      if (s.trim()) return clean(s);
    }
    const t = el.localName;
    // A form-associated custom element is labelled as a native field is.
    // (Only such an element has labels: reading another's throws.)
    const inner = internalsOf(el);
    let labels = null;
    if (inner && el.constructor && el.constructor.formAssociated) {
      try {
        labels = labelsOf(el, () => inner.labels);
      } catch (e) {}
    }
    // The other labelable elements (a button drawn as a checkbox or switch,
    // `<label for>` on it): their labels come before their content.
    if (LABELABLE.has(t)) labels = labelsOf(el);
    if (labels && labels.length) {
      const s = Array.from(labels, (l) => shownAs(l, textOf(l, el))).join(' ');
      if (s.trim()) return clean(s);
    }
    if (t === 'input' || t === 'textarea' || t === 'select') {
      const ty = (el.type || '').toLowerCase();
      if (ty === 'submit' || ty === 'reset' || ty === 'button')
        return clean(el.value || (ty === 'submit' ? 'Submit' : ty === 'reset' ? 'Reset' : ''));
      if (ty === 'image') return clean(el.alt || el.value || 'Submit');
      const own = labelsOf(el);
      if (own.length) {
        const s = Array.from(own)
          .map((l) => shownAs(l, textOf(l, el)))
          .join(' ');
        if (s.trim()) return clean(s);
      }
      return titleOf(el) || clean(el.getAttribute('placeholder') || '');
    }
    if (t === 'img' || t === 'area') return clean(el.getAttribute('alt') || '') || titleOf(el);
    if (t === 'iframe' || t === 'frame') return titleOf(el) || clean(el.getAttribute('name') || '');
    if (t === 'fieldset') {
      const lg = el.querySelector(':scope > legend');
      if (lg) return clean(lg.textContent);
    }
    if (NAME_FROM_CONTENT.has(role) || t === 'summary' || (role === 'generic' && wordsAreOwn(el, role))) {
      const s = words != null ? clean(words) : clean(textOf(el));
      if (s) return shownAs(el, s);
    }
    return titleOf(el);
  }
  // The words an interactive element is named by (a role named by its
  // content, or a generic with words of its own), read up to a little more
  // than a name; null for one named by its attributes, or a field.
  function ownWords(el, t, r) {
    return t !== 'select' &&
      t !== 'input' &&
      t !== 'textarea' &&
      (NAME_FROM_CONTENT.has(r) || (r === 'generic' && wordsAreOwn(el, r))) &&
      !ownName(el)
      ? clean(textOf(el, null, TEXT_MAX + 1), 1e9)
      : null;
  }
  // An interactive element's name as its snapshot line gives it, whoever
  // asks (an action's answer, describe): words longer than a name give none
  // (the snapshot reads them as text under it).
  function controlName(el, r) {
    const words = ownWords(el, el.localName, r);
    return words != null && words.length > TEXT_MAX ? '' : nameOf(el, r, words);
  }
  // Words an element shows, as it shows them: its text-transform applied, as
  // Chromium's accessible name and a person's eyes have them (a Quasar tab
  // "Room" shows "ROOM").
  function shownAs(el, words) {
    const how = el && el.isConnected ? getComputedStyle(el).textTransform : 'none';
    return how && how !== 'none' ? transformed(words, how) : words;
  }
  // An element's tooltip as a name: its title, unless that only repeats the
  // words it shows (its inner text), as Chromium leaves it then (select2's
  // `role=textbox` showing "Pending" with title "Pending" is named "").
  function titleOf(el) {
    const ti = el.getAttribute('title');
    if (!ti || !ti.trim()) return '';
    return ti.trim() === (el.innerText || '').trim() ? '' : clean(ti);
  }

  // The modal dialog open over the page (of those shown, the last in the
  // document), with the elements on its way from the document in the flat
  // tree (slots and shadow hosts), or null. What is not on that way nor in
  // the dialog is inert while it is open.
  function activeModal(doc) {
    let el = null;
    for (const d of doc.querySelectorAll('dialog[open]')) if (d.matches(':modal')) el = d;
    if (!el) return null;
    const path = new Set();
    for (let p = flatParent(el); p; p = flatParent(p)) path.add(p);
    return { el, path };
  }
  const flatParent = (n) => n.assignedSlot || n.parentNode || n.host || null;
  // The element around `n` in the flat tree: a shadow root's host for its top
  // (none above a document's root).
  const flatParentEl = (n) => {
    const p = flatParent(n);
    if (p && p.nodeType === 11) return p.host || null;
    return p && p.nodeType === 1 ? p : null;
  };
  // Whether node `n` is `anc` or inside it, in the flat tree.
  function flatWithin(n, anc) {
    for (let p = n; p; p = flatParent(p)) if (p === anc) return true;
    return false;
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
    // Out of reach: in an inert subtree, or behind an open modal dialog.
    if (el.closest('[inert]')) return false;
    // (The modal looked up once per `memo`, under this function's key.)
    if (memo && !memo.has(seen)) memo.set(seen, activeModal(el.ownerDocument));
    const modal = memo ? memo.get(seen) : activeModal(el.ownerDocument);
    if (modal && modal.el.ownerDocument === el.ownerDocument && !flatWithin(el, modal.el)) return false;
    // A text field in a box clipped to nothing is an editor's keyboard proxy.
    if (el.matches(TEXT_FIELDS)) return true;
    const path = [];
    let ok = true;
    for (let a = el.parentElement; a && a !== el.ownerDocument.body; a = a.parentElement) {
      if (memo && memo.has(a)) {
        ok = memo.get(a);
        break;
      }
      path.push(a);
      if (collapsed(a, getComputedStyle(a))) {
        ok = false;
        break;
      }
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
    return (
      !el.checkVisibility ||
      !el.ownerDocument.defaultView ||
      el.checkVisibility({ opacityProperty: true, visibilityProperty: true })
    );
  }
  // The words of `root` a person sees (not in a transparent, collapsed or
  // hidden part), up to about `max` chars, blocks joined by spaces.
  function wordsSeen(root, max) {
    const ok = new Map([[root, true]]);
    const shows = (e) => {
      if (ok.has(e)) return ok.get(e);
      const cs = getComputedStyle(e);
      const v =
        shows(e.parentElement) &&
        !SKIP.has(e.localName) &&
        e.getAttribute('aria-hidden') !== 'true' &&
        cs.display !== 'none' &&
        cs.visibility !== 'hidden' &&
        cs.opacity !== '0' &&
        !collapsed(e, cs) &&
        !srOnly(e, cs);
      ok.set(e, v);
      return v;
    };
    let out = '';
    const tw = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = tw.nextNode(); n && out.length < max; n = tw.nextNode()) {
      const p = n.parentElement;
      if (p && shows(p) && n.data.trim()) out += (out ? ' ' : '') + shownAs(p, n.data);
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
  // (`disp`: its display, when the caller has read it already. The shorthand
  // next: one style read for most boxes, which clip nothing.)
  function collapsed(el, cs, disp) {
    if (disp === 'inline' || disp === 'contents' || cs.overflow === 'visible') return false;
    const d = disp == null ? cs.display : disp;
    if (d === 'inline' || d === 'contents') return false;
    return (
      (cs.overflowY !== 'visible' && el.clientHeight === 0 && el.scrollHeight > 0) ||
      (cs.overflowX !== 'visible' && el.clientWidth === 0 && el.scrollWidth > 0)
    );
  }

  // Elements a page made clickable without a semantic role: a click-like
  // listener (recorded by the host's listener tracker, installed before any page
  // script runs), `onclick`, `tabindex`, `draggable`, or the top of a
  // `cursor: pointer` region. Large containers with a delegated listener (an
  // app's root) are not controls: at most CLICK_TEXT_MAX chars of text.
  const CLICKED = window.__ochre_clk || null;
  const CLICK_TEXT_MAX = 300;
  const POINTER_TAGS = new Set([
    'div',
    'span',
    'li',
    'td',
    'img',
    'svg',
    'i',
    'a',
    'p',
    'dt',
    'dd',
    'label',
    'em',
    'strong',
    'b',
    'small',
    'tr',
  ]);
  const NEVER_CLICKABLE = new Set([
    'body',
    'html',
    'main',
    'header',
    'footer',
    'nav',
    'aside',
    'form',
    'table',
    'tbody',
    'thead',
    'ul',
    'ol',
  ]);
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
    return (
      ti != null &&
      ti.trim() !== '' &&
      Number.isInteger(Number(ti)) &&
      el.localName !== 'body' &&
      el.localName !== 'html'
    );
  }
  // Acting by its own means: a click listener, onclick, a tabindex.
  function ownClick(el) {
    return (
      (CLICKED && CLICKED.has(el)) || typeof el.onclick === 'function' || el.hasAttribute('onclick') || tabbable(el)
    );
  }
  function isInteractive(el, role, nested) {
    if (role && INTERACTIVE.has(role)) return true;
    if (tabbable(el)) return true;
    // A modal dialog takes the focus (Chromium's tree makes it focusable).
    if (el.localName === 'dialog' && el.open && el.matches(':modal')) return true;
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
  const CONTROLS =
    'a[href],button,input,select,textarea,summary,[role],[tabindex],[contenteditable=""],[contenteditable=true]';
  // What takes typed text: an editor's keyboard proxy among them.
  const TEXT_FIELDS =
    'textarea,input:not([type]),input[type=text],input[type=search],[contenteditable=""],[contenteditable=true]';
  function wrapper(el, role) {
    return !role && !el.hasAttribute('tabindex') && !el.hasAttribute('onclick') && !!el.querySelector(CONTROLS);
  }
  // A table of data (rows of cells under columns), not one that lays out a page:
  // it has headers or a caption, or its cells are short and hold no structure.
  function dataTable(el, role) {
    if (role === 'presentation' || role === 'none' || !el.rows.length) return false;
    if (
      role === 'table' ||
      role === 'grid' ||
      role === 'treegrid' ||
      el.tHead ||
      el.caption ||
      el.querySelector(':scope > tbody > tr > th, :scope > tr > th')
    )
      return true;
    for (const c of el.querySelectorAll(':scope > tbody > tr > td, :scope > tr > td')) {
      if (
        c.querySelector('table,h1,h2,h3,h4,h5,h6,ul,ol,p,div,form,section,article,iframe') ||
        (c.textContent || '').length > 200
      )
        return false;
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
  const TYPED = new Set([
    'date',
    'time',
    'datetime-local',
    'month',
    'week',
    'number',
    'range',
    'color',
    'email',
    'tel',
    'url',
    'password',
  ]);
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
    return (
      JSON.stringify(v.slice(0, max - 1) + '\u2026') +
      ' (' +
      v.length +
      ' chars; read_page with its ref_id shows it whole)'
    );
  }
  // Disabled: a form control (itself, or by its fieldset), a control drawn
  // in the shadow tree of a host marked `disabled` (a web component's menu
  // item, a picker's parts, as Chromium has it), or an element that is, or is
  // inside, one marked aria-disabled (ARIA's disabled holds for what is
  // inside, as Chromium's tree has it).
  function disabled(el, role) {
    if (el.disabled || (FORM_CONTROL.has(el.localName) && el.matches(':disabled'))) return true;
    if (role && CONTROL_ROLES.has(role)) {
      const host = el.getRootNode().host;
      if (host && host.hasAttribute('disabled')) return true;
    }
    if (aria(el, 'aria-disabled') === 'true') return true;
    for (let e = el; e; ) {
      if (e.closest('[aria-disabled="true"]')) return true;
      const r = e.getRootNode();
      e = r && r.host;
    }
    return false;
  }
  const FORM_CONTROL = new Set(['button', 'input', 'select', 'textarea', 'optgroup', 'option', 'fieldset']);
  // The roles Chromium counts as controls (an ARIA option is not one).
  const CONTROL_ROLES = new Set([
    'button', 'checkbox', 'combobox', 'listbox', 'menu', 'menubar', 'menuitem', 'menuitemcheckbox', 'menuitemradio',
    'radio', 'scrollbar', 'searchbox', 'slider', 'spinbutton', 'switch', 'tab', 'textbox',
  ]);
  // `max`: where a value is cut (0: never).
  function stateOf(el, role, max) {
    let s = '';
    if (
      role === 'checkbox' ||
      role === 'radio' ||
      role === 'switch' ||
      role === 'menuitemcheckbox' ||
      role === 'menuitemradio'
    ) {
      const native = 'checked' in el && el.localName === 'input';
      const c = native ? null : aria(el, 'aria-checked');
      if (native ? el.indeterminate : c === 'mixed') s += ' mixed';
      else if (native ? el.checked : c === 'true') s += ' checked';
    }
    // A toggle button (aria-pressed).
    if (role === 'button') {
      const p = aria(el, 'aria-pressed');
      if (p === 'true') s += ' pressed';
      else if (p === 'mixed') s += ' mixed';
    }
    if (disabled(el, role)) s += ' disabled';
    const ex = aria(el, 'aria-expanded');
    if (ex === 'true') s += ' expanded';
    else if (ex === 'false') s += ' collapsed';
    if (aria(el, 'aria-selected') === 'true' || (el.localName === 'option' && el.selected)) s += ' selected';
    const ty = el.localName === 'input' ? (el.type || '').toLowerCase() : '';
    if (TYPED.has(ty)) {
      s += ' type=' + ty;
      if ((ty === 'range' || ty === 'number') && (el.min || el.max))
        s += ' range=' + (el.min || '') + '..' + (el.max || '');
    }
    // A custom slider or spin button tells its range and value by ARIA.
    const now =
      !ty && el.localName !== 'select' && (role === 'slider' || role === 'spinbutton')
        ? aria(el, 'aria-valuenow')
        : null;
    if (now != null) {
      const lo = aria(el, 'aria-valuemin'),
        hi = aria(el, 'aria-valuemax');
      if (lo != null || hi != null) s += ' range=' + (lo || '') + '..' + (hi || '');
      return s + ' =' + quoteValue(aria(el, 'aria-valuetext') || now, max);
    }
    if (VALUE_ROLES.has(role) || ty === 'color') {
      const h = el.localName === 'button' ? { value: null } : held(el);
      let v = h.value != null ? shown(h) : '';
      // A custom combobox shows its choice as its text (MUI's Select).
      // (What a person sees of it: not the options of a select it hides.)
      // (And an element marked a text box that is none: its text, as Chromium says.)
      if (h.value == null && (role === 'combobox' || role === 'textbox'))
        v = clean(wordsSeen(el, 4 * VALUE_MAX).replace(/[\u200b-\u200d\ufeff]/g, ''), VALUE_MAX);
      if (v) s += ' =' + quoteValue(v, max);
    }
    if (el.localName === 'select') {
      if (role === 'listbox') {
        const v = held(el).value;
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
  // kids(node), each given to `f`: a sibling walk where it can be (a big page
  // has tens of thousands of children to go through).
  function eachKid(node, f) {
    if (node.localName === 'slot') {
      for (const c of kids(node)) f(c);
      return;
    }
    for (let c = (node.shadowRoot || node).firstChild; c; c = c.nextSibling) f(c);
  }
  function frameDoc(el) {
    try {
      return el.contentDocument;
    } catch (e) {
      return null;
    }
  }
