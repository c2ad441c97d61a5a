  // ---- refs and targets ---------------------------------------------------------
  function el(n) {
    n = Number(n);
    const want = expect && expect[n];
    const hint = 'call read_page (or find) again for fresh refs';
    if (want !== undefined && want !== L.token)
      fail('STALE_REF', 'ref ax_' + n + ' is from an older page (the tab navigated or reloaded since); ' + hint, {
        ref: 'ax_' + n,
      });
    const e = L.refs.get(n);
    if (!e) fail('STALE_REF', 'ref ax_' + n + ' is not known on this page; ' + hint, { ref: 'ax_' + n });
    if (!e.isConnected)
      fail('STALE_REF', 'ref ax_' + n + ' no longer matches an element (it was removed from the page); ' + hint, {
        ref: 'ax_' + n,
      });
    return e;
  }
  function selectAll(sel, max) {
    const found = [];
    const seen = new Set();
    let bad = null;
    const search = (root) => {
      if (found.length >= max) return;
      try {
        for (const e of root.querySelectorAll(sel)) {
          if (!seen.has(e)) {
            seen.add(e);
            found.push(e);
            if (found.length >= max) return;
          }
        }
      } catch (e) {
        bad = e;
        return;
      }
      for (const host of root.querySelectorAll('*')) {
        if (host.shadowRoot) search(host.shadowRoot);
        if (host.localName === 'iframe') {
          const d = frameDoc(host);
          if (d) search(d);
        }
        if (found.length >= max || bad) return;
      }
    };
    search(document);
    if (bad)
      fail(
        'INVALID_ARGUMENT',
        'invalid CSS selector ' + JSON.stringify(sel) + ': ' + String(bad.message || bad).split('\n')[0],
        { field: 'selector' },
      );
    return found;
  }
  function xpathAll(xp, max) {
    let r;
    try {
      r = document.evaluate(xp, document, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
    } catch (e) {
      fail('INVALID_ARGUMENT', 'invalid XPath ' + JSON.stringify(xp) + ': ' + String(e.message || e).split('\n')[0], {
        field: 'xpath',
      });
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
      if (!m.length)
        fail('ELEMENT_NOT_FOUND', 'no element matches ' + JSON.stringify(a.selector), { selector: a.selector });
      return m[0];
    }
    fail('INVALID_ARGUMENT', (what || 'the target') + ' needs a ref or a selector', { field: 'ref' });
  }
  function describe(e) {
    const r = roleOf(e) || (isInteractive(e, null) ? 'generic' : e.localName);
    return { ref: 'ax_' + mint(e), role: r, name: controlName(e, r) };
  }
  // `max`: where its value is cut (an action's answer: VALUE_SHORT); `d`:
  // describe(e), when the caller has it already (its name is not computed
  // twice).
  function refLine(e, max, d) {
    d = d || describe(e);
    return (
      d.role +
      (d.name ? ' ' + JSON.stringify(d.name) : '') +
      ' ' +
      d.ref +
      stateOf(e, d.role, max == null ? VALUE_SHORT : max)
    );
  }
