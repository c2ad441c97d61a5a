  // ---- dispatch ------------------------------------------------------------------------
  const ops = {
    ping: () => ({ url: location.href, ready: document.readyState }),
    snapshot,
    find,
    query,
    describe: (a) => described(target(a)),
    resolve_query: (a) => {
      const f = find({ query: a.query, limit: 1 });
      if (!f.matches.length)
        fail(
          'ELEMENT_NOT_FOUND',
          'nothing on the page matches ' + JSON.stringify(a.query) + '; try read_page or find with other words',
          { query: a.query },
        );
      return { ref: f.refs[0] };
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
      const scripted = !!doc.querySelector(
        'script[src], script:not([type]), script[type=module], script[type="text/javascript"]',
      );
      const max = a.max_chars || 20000;
      const out = {
        title: (doc.title || '').trim(),
        links: [
          ...new Set(
            Array.from(doc.querySelectorAll('a[href]'), (x) => x.href.split('#')[0]).filter((h) => /^https?:/.test(h)),
          ),
        ].slice(0, 2000),
        next: nextLink(doc),
        needs_render: scripted && text.length < 200,
      };
      if (a.mode === 'markdown') {
        const c = cut(markdownOf(body, max), max);
        out.content = c.text;
        if (c.truncated) out.truncated = true;
      } else if (a.mode === 'text') {
        const c = cut(text, max);
        out.content = c.text;
        if (c.truncated) out.truncated = true;
      }
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
        const ac = ((e.getAttribute && e.getAttribute('autocomplete')) || '').toLowerCase();
        out[k] = { name: nameOf(e, roleOf(e) || 'textbox'), secret: isSecret(e), otp: /\bone-time-code\b/.test(ac) };
      };
      for (const k of a.keys || []) put(k, resolveField(k, fields)[0]);
      for (const r of a.refs || []) {
        const e = L.refs.get(Number(String(r).replace(/^ax_/, '')));
        if (e && e.isConnected) put(r, e);
      }
      return out;
    },
    // Recordings: who a ref is (role, name, index among its namesakes), and who that is now.
    identify: (a) => {
      const e = el(a.ref);
      const r = roleOf(e) || 'generic',
        nm = nameOf(e, r);
      const same = candidates()
        .filter(([c, cr]) => cr === r && norm(nameOf(c, cr)) === norm(nm))
        .map(([c]) => c);
      return { role: r, name: nm, nth: Math.max(0, same.indexOf(e)), tag: e.localName };
    },
    locate: (a) => {
      const same = candidates()
        .filter(([c, cr]) => cr === a.role && norm(nameOf(c, cr)) === norm(a.name))
        .map(([c]) => c);
      const at = same[Number(a.nth) || 0];
      const e = at && visible(at) ? at : same.find(visible) || same[0];
      if (!e)
        fail('ELEMENT_NOT_FOUND', 'no ' + a.role + ' named ' + JSON.stringify(a.name) + ' on the page now', {
          role: a.role,
          name: a.name,
        });
      return { ref: 'ax_' + mint(e), matches: same.length };
    },
    at_point: (a) => {
      let e = a.focused ? document.activeElement : document.elementFromPoint(a.x, a.y);
      while (a.focused && e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
      while (!a.focused && e && e.shadowRoot) {
        const inner = e.shadowRoot.elementFromPoint(a.x, a.y);
        if (!inner || inner === e) break;
        e = inner;
      }
      if (!e) fail('ELEMENT_NOT_FOUND', 'nothing is at ' + a.x + ',' + a.y + ' (outside the page)', {});
      // The interactive element it is in, else itself.
      let t = e;
      while (t && t !== document.body && t !== document.documentElement && !isInteractive(t, roleOf(t)))
        t = t.parentElement || (t.getRootNode && t.getRootNode().host) || null;
      if (!t || t === document.body || t === document.documentElement) t = e;
      const d = describe(t);
      const kind = (t.getAttribute('type') || 'text').toLowerCase();
      const editable =
        t.isContentEditable ||
        t.localName === 'textarea' ||
        (t.localName === 'input' &&
          !/^(button|submit|reset|checkbox|radio|file|image|range|color|hidden)$/.test(kind));
      return { ref: d.ref, role: d.role, name: d.name, editable: !!editable };
    },
    relocate: (a) => {
      // Re-find the target by role and name (an AX-style resolution), in case it was re-rendered.
      const e0 = L.refs.get(Number(a.ref));
      const want = a.role,
        nm = norm(a.name);
      let e = e0 && e0.isConnected ? e0 : null;
      if (!e)
        for (const [c, r] of candidates()) {
          if (r === want && norm(nameOf(c, r)) === nm && visible(c)) {
            e = c;
            break;
          }
        }
      if (!e) return { x: null, reason: 'no element with that role and name now' };
      const p = point(e, 'sample');
      p.ref = 'ax_' + mint(e);
      return p;
    },
    watch: (a) => {
      const e = a.ref != null ? el(a.ref) : document.activeElement || document.body || document.documentElement;
      watch(e);
      L.watch.focusBefore = deepActive();
      return { token: L.token, watch: L.watch.id };
    },
    settle,
    // With `watch` (the id a kept settle gave): only if that watch is still
    // the one running (the host sends it without waiting; a newer action's
    // watch is left alone).
    unwatch: (a) => {
      if (a.watch == null || (L.watch && L.watch.id === a.watch)) unwatch();
      return {};
    },
    js_click: (a) => {
      const e = el(a.ref);
      e.click();
      return {};
    },
    // What a field holds now (a password masked), or null for what is no field.
    value_of: (a) => {
      const h = held(el(a.ref));
      return { value: h.secret ? null : h.value, secret: h.secret };
    },
    // A widget whose focusable part is inside it (a slider's track) is focused
    // there.
    focus: (a) => {
      const e = el(a.ref);
      e.focus();
      const active = () => {
        const r = e.getRootNode().activeElement;
        return r && (r === e || e.contains(r));
      };
      if (!active()) {
        const inner = e.querySelector(
          'input,textarea,select,button,[contenteditable=true],[tabindex]:not([tabindex="-1"])',
        );
        if (inner) inner.focus();
      }
      return { focused: !!active() };
    },
    set_value: (a) => {
      const e = el(a.ref);
      return Promise.resolve(setValue(e, a.value, 'value')).then((r) => {
        r.line = refLine(e);
        return r;
      });
    },
    fill,
    login_fields: loginFields,
    scroll,
    drag_info: (a) => {
      const s = el(a.source);
      const d = el(a.target);
      const html5 = s.draggable === true || s.getAttribute('draggable') === 'true';
      s.scrollIntoView({ block: 'center', behavior: 'instant' });
      const ps = point(s, 'plain');
      const pd = point(d, 'plain');
      watch(d);
      L.watch.focusBefore = deepActive();
      if (!html5) {
        L.watch.src = s;
        // Where the source is and what the page says now: a drag is judged by
        // what it changed (see delta).
        L.watch.srcPlace = placeOf(s);
        L.watch.pageText = document.body ? document.body.innerText : '';
      }
      const tr = d.getBoundingClientRect();
      return {
        token: L.token,
        html5,
        source: ps,
        target: pd,
        target_box: { width: tr.width, height: tr.height },
        source_line: refLine(s),
        target_line: refLine(d),
      };
    },
    html5_drag: (a) => {
      const s = el(a.source);
      const d = el(a.target);
      html5Drag(s, d);
      return {};
    },
    file_input: (a) => {
      const e = target(a, 'file_upload');
      if (!(e.localName === 'input' && (e.type || '').toLowerCase() === 'file'))
        fail('INVALID_ARGUMENT', refLine(e) + ' is not a file input (<input type=file>)', {
          field: a.ref != null ? 'ref' : 'selector',
        });
      if (e.disabled) fail('ELEMENT_NOT_EDITABLE', refLine(e) + ' is disabled');
      return { line: refLine(e), multiple: e.multiple, ref: 'ax_' + mint(e) };
    },
    element: (a) => target(a),
    files_of: (a) => {
      const e = target(a);
      fire(e, 'input');
      fire(e, 'change');
      return { files: Array.from(e.files || []).map((f) => f.name) };
    },
    check,
    extract,
    storage: (a) => {
      let st;
      try {
        st = a.type === 'session' ? window.sessionStorage : window.localStorage;
      } catch (e) {
        st = null;
      }
      if (!st)
        fail(
          'STORAGE_UNAVAILABLE',
          'this page (' + location.href.slice(0, 80) + ') has no ' + a.type + 'Storage; navigate to a site first',
        );
      switch (a.action) {
        case 'get': {
          if (a.key != null) return { key: a.key, value: st.getItem(a.key) };
          const items = {};
          for (let i = 0; i < st.length; i++) {
            const k = st.key(i);
            items[k] = st.getItem(k);
          }
          return { items };
        }
        case 'set':
          try {
            st.setItem(a.key, a.value);
          } catch (e) {
            fail('STORAGE_FULL', 'cannot store ' + JSON.stringify(a.key) + ': ' + e.message);
          }
          return { set: a.key };
        case 'remove': {
          const had = st.getItem(a.key) !== null;
          st.removeItem(a.key);
          return { removed: had };
        }
        case 'clear': {
          const n = st.length;
          st.clear();
          return { cleared: n };
        }
        case 'keys': {
          const keys = [];
          for (let i = 0; i < st.length; i++) keys.push(st.key(i));
          return { keys };
        }
        default:
          fail('INVALID_ARGUMENT', 'unknown storage action ' + a.action, { field: 'action' });
      }
    },
  };
  // The operations that only read: nothing they do runs the page's code, so
  // the page cannot change under them and labels are indexed once (labelsOf).
  const READS = new Set([
    'snapshot',
    'find',
    'query',
    'describe',
    'resolve_query',
    'field_secrets',
    'identify',
    'locate',
  ]);
  function run(ctx) {
    L.opSeq = (L.opSeq | 0) + 1;
    if (L.next < ctx.base) L.next = ctx.base;
    const lo = L.next;
    expect = ctx.expect;
    labelIndex = READS.has(ctx.op) ? new Map() : null;
    try {
      const f = ops[ctx.op];
      if (!f) fail('INVALID_ARGUMENT', 'unknown page operation ' + ctx.op);
      const v = f(ctx.args || {});
      if (ctx.raw) return v;
      const wrap = (value) => ({ ok: value === undefined ? null : value, token: L.token, lo, hi: L.next });
      if (v && typeof v.then === 'function')
        return v.then(wrap, (e) => ({
          err: { code: e.code || 'JS_ERROR', message: String(e.message || e), details: e.details || {} },
          token: L.token,
          lo,
          hi: L.next,
        }));
      return wrap(v);
    } catch (e) {
      if (ctx.raw) throw e;
      return {
        err: {
          code: e instanceof OpError ? e.code : 'JS_ERROR',
          message: String((e && e.message) || e),
          details: (e && e.details) || {},
        },
        token: L.token,
        lo,
        hi: L.next,
      };
    } finally {
      labelIndex = null;
    }
  }
  Object.defineProperty(L, 'run', { value: run });
  Object.defineProperty(window, KEY, { value: L, enumerable: false });
  return L;
})
