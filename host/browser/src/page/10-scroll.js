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
    return {
      scrollX: Math.round(scrollX),
      scrollY: Math.round(scrollY),
      scrollHeight: se.scrollHeight,
      viewportHeight: innerHeight,
      atTop: scrollY <= 0,
      atBottom: Math.ceil(scrollY + innerHeight) >= se.scrollHeight - 1,
    };
  }
  function html5Drag(src, dst) {
    const dt = new DataTransfer();
    const [sx, sy] = frameOffset(dst);
    const r = dst.getBoundingClientRect();
    const at = { clientX: r.left + r.width / 2 + sx, clientY: r.top + r.height / 2 + sy };
    const ev = (target, type) =>
      target.dispatchEvent(
        new DragEvent(type, Object.assign({ bubbles: true, cancelable: true, composed: true, dataTransfer: dt }, at)),
      );
    ev(src, 'dragstart');
    ev(dst, 'dragenter');
    ev(dst, 'dragover');
    ev(dst, 'drop');
    ev(src, 'dragend');
  }
  // Whether a wait's condition holds now; with `wait_ms`, once it does in a
  // frame drawn (looked at after each frame: what the answer names has been
  // shown, its layout and paint done), else false once that time has passed.
  function check(a) {
    const holds = () => {
      switch (a.type) {
        case 'selector': {
          const m = selectAll(a.value, 1);
          return m.length > 0 && (!a.visible || visible(m[0]));
        }
        case 'selector_hidden': {
          const m = selectAll(a.value, 1);
          return m.length === 0 || !visible(m[0]);
        }
        default:
          return fail('INVALID_ARGUMENT', 'unknown check ' + a.type);
      }
    };
    if (holds()) return true;
    if (!(a.wait_ms > 0)) return false;
    const until = performance.now() + a.wait_ms;
    return new Promise((resolve) => {
      const look = () =>
        afterFrame(() => {
          if (holds()) resolve(true);
          else if (performance.now() >= until) resolve(false);
          else look();
        });
      look();
    });
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
        if (v && typeof v === 'object' && !Array.isArray(v))
          v = v.name || v['@value'] || v.price || v.url || JSON.stringify(v);
        r[n] = v;
      }
      return r;
    };
    const coerce = (n, v) => {
      const t = (props[n] || {}).type;
      if (v == null) return v;
      if (t === 'number' || t === 'integer') {
        const x = parseFloat(String(v).replace(/[^0-9.+-]/g, ''));
        return isNaN(x) ? null : t === 'integer' ? Math.round(x) : x;
      }
      if (t === 'boolean') return /^(true|yes|1|in ?stock)$/i.test(String(v).trim());
      if (t === 'array') return Array.isArray(v) ? v : [v];
      return typeof v === 'string'
        ? v.replace(/\s+/g, ' ').trim()
        : typeof v === 'object'
          ? JSON.stringify(v)
          : String(v);
    };
    const items = [];
    // JSON-LD
    const ld = [];
    for (const s of (scope.querySelectorAll ? scope : document).querySelectorAll(
      'script[type="application/ld+json"]',
    )) {
      try {
        const j = JSON.parse(s.textContent);
        const push = (x) => {
          if (Array.isArray(x)) x.forEach(push);
          else if (x && typeof x === 'object') {
            ld.push(x);
            if (x['@graph']) push(x['@graph']);
            if (x.offers)
              ld.push(Object.assign({}, x, typeof x.offers === 'object' && !Array.isArray(x.offers) ? x.offers : {}));
          }
        };
        push(j);
      } catch (e) {
        /* bad JSON-LD is skipped */
      }
    }
    for (const x of ld) {
      const r = fromObj(x);
      if (Object.keys(r).length) items.push(r);
    }
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
    if (md.length) {
      strategies.push('microdata');
      items.push(...md);
    }
    // OpenGraph / meta
    const og = {};
    for (const m of document.querySelectorAll('meta[property],meta[name]')) {
      const k = (m.getAttribute('property') || m.getAttribute('name') || '').replace(
        /^(og|product|article|twitter):/,
        '',
      );
      if (k && !(k in og)) og[k] = m.getAttribute('content');
    }
    if (!('title' in og) && document.title) og.title = document.title;
    const ogr = fromObj(og);
    // CSS heuristics: an element whose class, id, itemprop or data attribute names the field.
    const css = (root) => {
      const r = {};
      for (const n of names) {
        const k = n.replace(/[^A-Za-z0-9_-]/g, '');
        const e = root.querySelector(
          '[itemprop="' +
            k +
            '"],[data-' +
            k.toLowerCase() +
            '],[data-field="' +
            k +
            '"],.' +
            k +
            ',#' +
            k +
            ',[class*="' +
            k.toLowerCase() +
            '"],[name="' +
            k +
            '"]',
        );
        if (e)
          r[n] =
            e.getAttribute('content') ||
            (e.localName === 'a' && (props[n] || {}).format === 'uri' ? e.href : null) ||
            (isSecret(e) ? shown(held(e)) : e.value) ||
            e.innerText ||
            e.textContent;
      }
      return r;
    };
    let data;
    if (multiple) {
      let list = a.item_selector ? [] : items.filter((r) => Object.keys(r).length);
      if (!list.length) {
        // Repeated containers: the CSS selector in `item_selector`, or elements sharing
        // a class that contain field-named children.
        const sel = a.item_selector;
        const conts = sel ? Array.from((scope.querySelectorAll ? scope : document).querySelectorAll(sel)) : [];
        list = conts.map(css).filter((r) => Object.keys(r).length);
        if (list.length) strategies.push('css-heuristic');
      }
      data = list.map((r) => {
        const o = {};
        for (const n of names) if (r[n] !== undefined) o[n] = coerce(n, r[n]);
        return o;
      });
    } else {
      const merged = {};
      for (const r of items) for (const [k, v] of Object.entries(r)) if (!(k in merged)) merged[k] = v;
      let used = false;
      for (const [k, v] of Object.entries(ogr))
        if (!(k in merged) && v) {
          merged[k] = v;
          used = true;
        }
      if (used) strategies.push('opengraph');
      const c = css(scope.querySelector ? scope : document);
      let usedCss = false;
      for (const [k, v] of Object.entries(c))
        if (!(k in merged) && v) {
          merged[k] = v;
          usedCss = true;
        }
      if (usedCss) strategies.push('css-heuristic');
      data = {};
      for (const n of names) if (merged[n] !== undefined) data[n] = coerce(n, merged[n]);
    }
    const found = multiple ? names.filter((n) => data.some((d) => n in d)) : names.filter((n) => n in data);
    const missing = names.filter((n) => !found.includes(n));
    return {
      url: location.href,
      data,
      fieldsFound: found.length,
      fieldsTotal: names.length,
      fieldsMissing: missing,
      strategies,
    };
  }
