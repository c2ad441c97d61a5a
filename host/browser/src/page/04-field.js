  // ---- what a field holds: the one reader every operation uses ----------------
  // A secret field: a password, or one the page marks as a password or a
  // one-time code (autocomplete). Its value is never read out, only masked.
  function isSecret(e) {
    if (!e || !e.getAttribute) return false;
    const ty = e.localName === 'input' ? (e.type || '').toLowerCase() : '';
    const ac = (e.getAttribute('autocomplete') || '').toLowerCase();
    return ty === 'password' || /\bone-time-code\b/.test(ac) || /\b(current|new)-password\b/.test(ac);
  }
  const MASK = '\u2022\u2022\u2022';
  const NOT_TEXT = /^(hidden|checkbox|radio|button|submit|reset|image|file|range|color)$/;
  // What element `e` holds: { value, secret, text }. value: an input's or a
  // text area's value, a select's chosen options (their labels, joined by
  // ', '), an editor's text, another valued element's value (a progress bar's);
  // null for what holds none. text: whether a person reads the value as text
  // (not a checkbox's, a button's, a hidden input's or a select's).
  function held(e) {
    const t = e.localName;
    if (t === 'select') {
      const value = Array.from(e.selectedOptions)
        .map((o) => o.label || o.text)
        .join(', ');
      return { value, secret: false, text: false };
    }
    if (t === 'input' || t === 'textarea') {
      const ty = t === 'input' ? (e.type || 'text').toLowerCase() : '';
      return { value: e.value, secret: isSecret(e), text: !NOT_TEXT.test(ty) };
    }
    // An editor holds the text it shows (Trix's element also has a `value`:
    // the HTML it keeps in a hidden field).
    if (e.isContentEditable) return { value: editorText(e), secret: false, text: true };
    // Another element with a value of text (an output, a custom field); not a
    // list item's or a meter's number.
    if ('value' in e && t !== 'button' && typeof e.value === 'string') {
      return { value: e.value, secret: false, text: false };
    }
    return { value: null, secret: false, text: false };
  }
  // What a person may be told an element holds: its value, a secret masked.
  const shown = (h) => (h.secret && h.value ? MASK : h.value);
  // The text a field shows as text ('' for what is no text field, a secret,
  // and an editor's inner parts: the editor says it whole).
  function fieldValue(e) {
    if (e.isContentEditable && e.parentElement && e.parentElement.isContentEditable) return '';
    const h = held(e);
    return h.text && !h.secret && h.value != null ? h.value : '';
  }
