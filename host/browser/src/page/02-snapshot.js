  // ---- snapshot ------------------------------------------------------------------
  function snapshotAx(root, opts) {
    const out = [];
    const onlyInteractive = opts.filter === 'interactive';
    const maxDepth = opts.depth == null ? 1e9 : opts.depth;
    let top = null;
    let buf = '';
    let mute = 0;
    let inControl = 0;
    // Inside a control that has no name but short words of its own (a menu's
    // list item, a grid cell): its words are lines even in the interactive
    // view, or nothing would tell what it is.
    let unnamedWords = 0;
    // Inside a box clipped to nothing: only text fields are walked.
    let clipped = 0;
    const ind = (d) => ' '.repeat(onlyInteractive ? 0 : d);
    const flush = (d) => {
      if (buf) {
        const s = clean(buf, LINE_MAX);
        buf = '';
        if (s && (!onlyInteractive || unnamedWords) && d <= maxDepth) out.push(ind(d) + JSON.stringify(s));
      }
    };
    // The text-transform in force (innerText applies it: a person sees
    // "SUBMIT" where the markup says "Submit").
    // (Read only where words are read: `transform` is null until then, and
    // `tcs` the style it comes from; a style property read costs.)
    let transform = 'none';
    let tcs = null;
    const transformNow = () => (transform === null ? (transform = tcs.textTransform) : transform);
    // An open modal dialog makes the rest of the page inert (Chromium's
    // tree leaves it out): only the dialog and the way to it are walked.
    // (Found once the root is known, below.)
    let modal = null;
    let inModal = 0;
    // seen()'s memo, for the controls labels name (the modal looked up and
    // each ancestor judged once a snapshot, not once a label).
    const seenMemo = new Map();
    const visit = (node, d) => {
      if (!modal || inModal) return visitNode(node, d);
      if (node === modal.el) {
        inModal++;
        try {
          return visitNode(node, d);
        } finally {
          inModal--;
        }
      }
      if (node.nodeType === 1 && modal.path.has(node)) return visitNode(node, d);
    };
    const visitNode = (node, d) => {
      if (node.nodeType === 3) {
        if (!mute) buf += transformNow() === 'none' ? node.data : transformed(node.data, transform);
        return;
      }
      if (node.nodeType !== 1) return;
      const el = node;
      const t = el.localName;
      // (`hidden` counts where there is no layout; where there is, what is
      // rendered decides: a page's CSS may show a hidden element.) An inert
      // subtree is out of reach: nothing in it is read or given a ref.
      if (SKIP.has(t) || el.getAttribute('aria-hidden') === 'true' || (el.hidden && !rendered)) return;
      if (el.inert) return;
      if (!visible(el)) return;
      const cs = rendered ? getComputedStyle(el) : null;
      if (cs && el !== top && hiddenLive(el, cs)) return;
      // Clipped to nothing: nothing in it is seen, but a text field stays (an
      // editor types through a textarea in a box of no height, as CodeMirror
      // and Ace do; Chromium keeps it focusable). Transparent: its words are
      // not seen, but its controls stay (a date field's sections show once
      // focused, row actions under the pointer: a person clicks there all the
      // same).
      // (Its display read once: most boxes of a big page are inline.)
      const disp = cs ? cs.display : null;
      if (cs && el !== top && collapsed(el, cs, disp)) {
        if (!el.querySelector(TEXT_FIELDS)) return;
        flush(d);
        clipped++;
        mute++;
        try {
          eachKid(el, (c) => visit(c, d));
        } finally {
          clipped--;
          mute--;
        }
        return;
      }
      if (clipped && !(el.matches(TEXT_FIELDS) || el.querySelector(TEXT_FIELDS))) return;
      const clear = !!cs && el !== top && cs.opacity === '0';
      const outer = transform,
        outerCs = tcs;
      if (cs) {
        transform = null;
        tcs = cs;
      }
      if (clear) {
        flush(d);
        mute++;
      }
      try {
        visitShown(el, t, cs, d, disp);
      } finally {
        transform = outer;
        tcs = outerCs;
        if (clear) mute--;
      }
    };
    const visitShown = (el, t, cs, d, disp) => {
      const role = roleOf(el);
      if (isInteractive(el, role, inControl) && !wrapper(el, role)) {
        flush(d);
        // (A focusable header or cell of a table is one, as Chromium has it.)
        const r =
          role || (t === 'th' ? (el.scope === 'row' ? 'rowheader' : 'columnheader') : t === 'td' ? 'cell' : 'generic');
        // Words longer than a name: the name comes from attributes only, and
        // the words follow as text.
        const words = ownWords(el, t, r);
        const long = words != null && words.length > TEXT_MAX;
        // (A name from the words is as they show: see shownAs.)
        const nm = long ? '' : nameOf(el, r, words);
        if (d <= maxDepth)
          out.push(
            ind(d) +
              r +
              (nm ? ' ' + JSON.stringify(nm) : '') +
              ' ax_' +
              mint(el) +
              stateOf(el, r, el === top ? 0 : VALUE_MAX),
          );
        if (t === 'select' && el === top && d + 1 <= maxDepth) {
          // read_page of the select itself lists every option.
          for (const o of el.options)
            out.push(
              ind(d + 1) +
                'option ' +
                JSON.stringify(clean(o.label || o.text)) +
                (o.selected ? ' selected' : '') +
                (o.disabled ? ' disabled' : ''),
            );
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
          // (Words that labels inside it gave, not what it shows, leave its
          // kids' text to be read: UI5's dialog names its parts "Header",
          // "Content" and "Footer", and its body text is under them.)
          const named = words != null && !long && !labelsOnly(el, words);
          const quietKids = named || said || PRESENTATIONAL_KIDS.has(r) || VALUE_ROLES.has(r);
          const tell = onlyInteractive && !nm && !quietKids && !!own && own.length <= TEXT_MAX;
          if (quietKids) mute++;
          if (tell) unnamedWords++;
          inControl++;
          eachKid(el, (c) => visit(c, d + 1));
          flush(d + 1);
          inControl--;
          if (tell) unnamedWords--;
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
        if ((!onlyInteractive || key) && d <= maxDepth)
          out.push(
            ind(d) +
              'iframe' +
              (nm ? ' ' + JSON.stringify(nm) : '') +
              (key ? ' \u0001' + key + '\u0001' : doc ? '' : ' (cross-origin, not expanded)'),
          );
        if (doc && doc.body) {
          eachKid(doc.body, (c) => visit(c, d + 1));
          flush(d + 1);
        }
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
        eachKid(el, (c) => visit(c, d + 1));
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
        eachKid(el, (c) => visit(c, d + 1));
        flush(d + 1);
        return;
      }
      if (t === 'legend' && el.parentElement && el.parentElement.localName === 'fieldset') return;
      // A label's words are its control's name: do not repeat them as text.
      // A control a library hides behind its own widget (Select2, Choices: the
      // select is not rendered; Materialize: in a box clipped to nothing) is
      // not named by it there: its label shows.
      // Nor is a custom element without a role of its own (its field is in
      // its shadow, unnamed by a label outside it: Fluent's text input).
      const ctl = t === 'label' ? el.control : null;
      const quiet =
        !!ctl &&
        (ctl.type || '').toLowerCase() !== 'hidden' &&
        seen(ctl, seenMemo) &&
        drawn(ctl) &&
        (ctl.localName.indexOf('-') < 0 || !!roleOf(ctl));
      // Block-level boxes (by their computed display, as innerText has it: a
      // flex item is one) set their words apart; inline ones add nothing, so no
      // space appears where the page has none.
      const block = cs ? !INLINE_DISPLAY.test(disp) : BLOCK.has(t);
      if (block) flush(d);
      if (quiet) mute++;
      eachKid(el, (c) => visit(c, d));
      if (quiet) mute--;
      if (block) flush(d);
      else if (t === 'br' && !mute) buf += '\n';
    };
    // Whether `words`, a control's words as its name has them, leave out
    // what it shows: labels of its parts (`aria-label`, `aria-labelledby`,
    // in its light or shadow tree) stand for their text.
    const labelsOnly = (el, words) => {
      if (!el.shadowRoot && !el.querySelector('[aria-label],[aria-labelledby]')) return false;
      const shown = clean(wordsSeen(el, TEXT_MAX + 1), TEXT_MAX + 1).toLowerCase();
      return !!shown && !words.toLowerCase().includes(shown);
    };
    // A table as rows of cells under its column names, so that each value can
    // be told by its column: `row "Pears" | "$2.05" | link "0 (restock)" ax_7`.
    // A cell one acts on itself (a sortable column's header, a focusable
    // day of a calendar grid) is its own ref.
    const cellLine = (cell) => {
      const at = out.length;
      const outer = buf;
      buf = '';
      if (isInteractive(cell, roleOf(cell), inControl)) visit(cell, 0);
      else eachKid(cell, (c) => visit(c, 0));
      flush(0);
      buf = outer;
      // A landmark's bare line (a form around a delete button) says nothing here.
      const parts = out
        .splice(at)
        .map((l) => l.trim())
        .filter((l) => !LANDMARKS.has(l));
      return parts.length ? parts.join(' ') : '""';
    };
    const table = (el, d) => {
      const cap = el.caption && visible(el.caption) ? clean(textOf(el.caption)) : '';
      const nm = ownName(el) ? nameOf(el, 'table') : cap;
      if (d <= maxDepth) out.push(ind(d) + 'table' + (nm ? ' ' + JSON.stringify(nm) : ''));
      for (const row of el.rows) {
        if (!visible(row) || !row.cells.length) continue;
        const head =
          (row.parentElement && row.parentElement.localName === 'thead') ||
          Array.from(row.cells).every((c) => c.localName === 'th');
        const cells = Array.from(row.cells)
          .filter((c) => visible(c))
          .map(cellLine);
        if (d + 1 <= maxDepth) out.push(ind(d + 1) + (head ? 'columns ' : 'row ') + cells.join(' | '));
      }
    };
    if (root.nodeType === 9) root = root.body || root.documentElement;
    const rendered = !!root.ownerDocument.defaultView;
    top = root;
    modal = rendered ? activeModal(root.ownerDocument) : null;
    if (modal && flatWithin(root, modal.el)) inModal = 1;
    if (root === document.body || root === document.documentElement) {
      eachKid(root, (c) => visit(c, 0));
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
    const fields =
      base.localName === 'textarea' || base.localName === 'input' ? [base] : base.querySelectorAll('input,textarea');
    for (const e of fields) {
      const v = fieldValue(e);
      if (!v || !drawn(e)) continue;
      const nm = nameOf(e, roleOf(e) || 'textbox');
      const i = nm ? out.indexOf(nm, at) : -1;
      if (i < 0) {
        rest.push(v);
        continue;
      }
      let eol = out.indexOf('\n', i + nm.length);
      if (eol < 0) eol = out.length;
      out = out.slice(0, eol) + '\n' + v + out.slice(eol);
      at = eol + 1 + v.length;
    }
    return rest.length ? out + (out ? '\n' : '') + rest.join('\n') : out;
  }

  function markdownOf(root, max) {
    let out = '';
    const emit = (s) => {
      out += s;
    };
    const inline = (n) => {
      if (n.nodeType === 3) return n.data.replace(/\s+/g, ' ');
      if (n.nodeType !== 1) return '';
      const t = n.localName;
      if (SKIP.has(t) || n.getAttribute('aria-hidden') === 'true' || !visible(n)) return '';
      const inner = () => Array.from(kids(n)).map(inline).join('');
      switch (t) {
        case 'a': {
          const s = inner().trim();
          const h = n.getAttribute('href');
          return h && s ? '[' + s + '](' + n.href + ')' : s;
        }
        case 'strong':
        case 'b': {
          const s = inner().trim();
          return s ? '**' + s + '** ' : '';
        }
        case 'em':
        case 'i': {
          const s = inner().trim();
          return s ? '*' + s + '* ' : '';
        }
        case 'code':
          return '`' + n.textContent + '`';
        case 'br':
          return '\n';
        case 'img':
          return n.alt ? '![' + n.alt + ']' : '';
        case 'input':
        case 'select':
        case 'textarea':
          return '';
      }
      if (BLOCK.has(t) || t === 'pre') {
        block(n);
        return '';
      }
      return inner();
    };
    const para = (n) => {
      const s = Array.from(kids(n))
        .map(inline)
        .join('')
        .replace(/[ \t]+/g, ' ')
        .trim();
      if (s) emit(s + '\n\n');
    };
    const block = (n) => {
      if (n.nodeType === 3) {
        const s = n.data.replace(/\s+/g, ' ').trim();
        if (s) emit(s + '\n\n');
        return;
      }
      if (n.nodeType !== 1) return;
      const t = n.localName;
      if (SKIP.has(t) || n.getAttribute('aria-hidden') === 'true' || !visible(n)) return;
      if (/^h[1-6]$/.test(t)) {
        emit('#'.repeat(Number(t[1])) + ' ' + clean(n.textContent, 500) + '\n\n');
        return;
      }
      if (t === 'pre') {
        emit('```\n' + n.textContent.replace(/\n$/, '') + '\n```\n\n');
        return;
      }
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
      if (
        t === 'p' ||
        t === 'li' ||
        t === 'dt' ||
        t === 'dd' ||
        t === 'td' ||
        t === 'th' ||
        t === 'blockquote' ||
        t === 'figcaption' ||
        t === 'summary' ||
        t === 'label'
      ) {
        para(n);
        return;
      }
      const hasBlock = Array.from(kids(n)).some(
        (c) =>
          c.nodeType === 1 &&
          (BLOCK.has(c.localName) || /^h[1-6]$/.test(c.localName) || c.localName === 'pre' || c.localName === 'iframe'),
      );
      if (!hasBlock) {
        para(n);
        return;
      }
      let run = '';
      for (const c of kids(n)) {
        if (
          c.nodeType === 1 &&
          (BLOCK.has(c.localName) || /^h[1-6]$/.test(c.localName) || c.localName === 'pre' || c.localName === 'iframe')
        ) {
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
