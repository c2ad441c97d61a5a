  // ---- forms -------------------------------------------------------------------------
  function setNative(e, v) {
    const proto = e.localName === 'textarea' ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    const desc = Object.getOwnPropertyDescriptor(proto, 'value');
    if (desc && desc.set) desc.set.call(e, v);
    else e.value = v;
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
  // The option of a select that `v` names: by its value, else by its label.
  const optionOf = (opts, v) =>
    opts.find((o) => o.value === v) || opts.find((o) => norm(o.label || o.text) === norm(v));
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
      if (!names.length || names.some((n) => typeof n !== 'string' && typeof n !== 'number'))
        fail('INVALID_ARGUMENT', label + ' takes the name of an option (or a list of names, where it takes several)', {
          field,
        });
      return { widget: w, typing: t === 'input' || t === 'textarea' || e.isContentEditable, line: label };
    }
    if (w === 'toggle') {
      const want = truthOf(value);
      if (want == null)
        fail('INVALID_ARGUMENT', label + ' is a ' + roleOf(e) + ': value must be true or false', { field });
      if (roleOf(e) === 'radio' && !want && e.getAttribute('aria-checked') === 'true')
        fail('INVALID_ARGUMENT', 'a radio button cannot be unchecked; choose another option of its group', { field });
      return { widget: w, want, checked: e.getAttribute('aria-checked') === 'true', line: label };
    }
    if (w === 'slider') {
      if (!Number.isFinite(Number(value)) || value === '' || typeof value === 'boolean')
        fail('INVALID_ARGUMENT', label + ' takes a number', { field });
      return { widget: w, line: label };
    }
    if (t === 'input' && (ty === 'checkbox' || ty === 'radio')) {
      const want = truthOf(value);
      if (want == null) fail('INVALID_ARGUMENT', label + ' is a ' + ty + ': value must be true or false', { field });
      if (ty === 'radio' && !want && e.checked)
        fail('INVALID_ARGUMENT', 'a radio button cannot be unchecked; choose another option of its group', { field });
      if (e.checked !== want) e.click();
      return { checked: e.checked };
    }
    if (t === 'select') {
      const wanted = Array.isArray(value) ? value.map(String) : [String(value)];
      const opts = Array.from(e.options);
      const pick = wanted.map((v) => optionOf(opts, v));
      const missing = wanted.filter((v, i) => !pick[i]);
      if (missing.length)
        fail(
          'INVALID_ARGUMENT',
          label +
            ' has no option ' +
            JSON.stringify(missing[0]) +
            '; options: ' +
            opts
              .slice(0, 20)
              .map((o) => JSON.stringify(o.label || o.text))
              .join(', '),
          { field },
        );
      if (pick.length > 1 && !e.multiple) fail('INVALID_ARGUMENT', label + ' takes one option', { field });
      e.focus();
      for (const o of opts) o.selected = pick.includes(o);
      fire(e, 'input');
      fire(e, 'change');
      return { value: pick.map((o) => o.label || o.text).join(', ') };
    }
    if (typeof value === 'boolean' || (typeof value === 'object' && value !== null))
      fail('INVALID_ARGUMENT', label + ' takes text: value must be a string or a number', { field });
    const v = String(value);
    if (t === 'input' || t === 'textarea') {
      if (ty === 'file') fail('INVALID_ARGUMENT', label + ' is a file input: use file_upload', { field });
      if (['button', 'submit', 'reset', 'image', 'hidden'].includes(ty))
        fail('ELEMENT_NOT_EDITABLE', label + ' does not take a value', { field });
      if (e.readOnly) fail('ELEMENT_NOT_EDITABLE', label + ' is read-only', { field });
      // Refused before the page sees anything: the field keeps its value.
      const bad = valueProblem(e, v);
      if (bad) fail('INVALID_ARGUMENT', label + ' ' + bad, { field, format: FORMATS[ty] || null });
      e.focus();
      setNative(e, v);
      fire(e, 'input');
      fire(e, 'change');
      // Read back once the page's handlers (and a framework's re-render) ran.
      return new Promise((resolve) => setTimeout(() => resolve(heldValue(e, v)), 0));
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
    if (t !== 'input' && (role === 'checkbox' || role === 'switch' || role === 'radio' || role === 'menuitemcheckbox'))
      return 'toggle';
    return null;
  }
  // The visible options a combobox offers: in the list it controls (a portal
  // anywhere in the page) or else any list shown.
  function optionsOf(cb) {
    const ids = ((cb.getAttribute('aria-controls') || '') + ' ' + (cb.getAttribute('aria-owns') || ''))
      .split(/\s+/)
      .filter(Boolean);
    let scopes = ids.map((id) => byId(cb, id)).filter((x) => x && visible(x));
    if (!scopes.length)
      scopes = Array.from(document.querySelectorAll('[role=listbox],[role=menu],[role=tree],[role=grid]')).filter(
        visible,
      );
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
    const v =
      t === 'input' || t === 'textarea' || t === 'select'
        ? shown(held(e))
        : (e.getAttribute('aria-valuetext') || e.getAttribute('aria-valuenow') || e.innerText || '').trim();
    const r = {
      value: v,
      now: e.getAttribute('aria-valuenow'),
      checked: e.getAttribute('aria-checked'),
      expanded: e.getAttribute('aria-expanded'),
      line: refLine(e),
    };
    const want = a.name != null ? norm(a.name) : '';
    if (want && !norm(v).includes(want)) {
      let n = e.parentElement;
      for (let i = 0; n && i < 4; i++, n = n.parentElement) {
        const tx = clean(n.innerText || '', 300);
        if (norm(tx).includes(want)) {
          r.beside = tx;
          break;
        }
      }
    }
    return r;
  }

  // The formats of typed inputs, as an answer that refuses a value says them.
  const FORMATS = {
    date: 'YYYY-MM-DD (e.g. 2016-04-09)',
    time: 'HH:MM or HH:MM:SS, 24-hour (e.g. 15:38)',
    'datetime-local': 'YYYY-MM-DDTHH:MM (e.g. 2016-04-09T15:38)',
    month: 'YYYY-MM (e.g. 2016-04)',
    week: 'YYYY-Www (e.g. 2016-W14)',
    number: 'a number (e.g. 42 or 3.5)',
    range: 'a number',
    color: '#rrggbb (e.g. #ff8800)',
    email: 'an e-mail address (e.g. name@example.com)',
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
    if (e.maxLength >= 0 && v.length > e.maxLength)
      return 'takes at most ' + e.maxLength + ' characters (the value has ' + v.length + '); nothing was set';
    if (e.localName !== 'input') return null;
    const before = e.value;
    setNative(e, v);
    const held = e.value,
      vs = e.validity;
    // ValidityState is live: copy what it says of `v` before putting the old value back.
    const val = {
      typeMismatch: vs.typeMismatch,
      badInput: vs.badInput,
      rangeUnderflow: vs.rangeUnderflow,
      rangeOverflow: vs.rangeOverflow,
      stepMismatch: vs.stepMismatch,
      patternMismatch: vs.patternMismatch,
    };
    setNative(e, before);
    const fmt = FORMATS[ty] ? 'type=' + ty + ' takes ' + FORMATS[ty] : '';
    if (v !== '' && held === '') return (fmt || 'does not take ' + JSON.stringify(v)) + '; nothing was set';
    if (ty === 'color' && held.toLowerCase() !== v.toLowerCase()) return fmt + '; nothing was set';
    if (ty === 'range' && Number(held) !== Number(v))
      return (
        fmt + limits(e) + ': ' + JSON.stringify(v) + ' would be stored as ' + JSON.stringify(held) + '; nothing was set'
      );
    if (val.typeMismatch || val.badInput) return fmt + '; nothing was set';
    if (val.rangeUnderflow || val.rangeOverflow || val.stepMismatch)
      return (
        'refuses ' +
        JSON.stringify(v) +
        limits(e) +
        ' (the browser: ' +
        JSON.stringify(validationOf(e, v)) +
        '); nothing was set'
      );
    if (val.patternMismatch)
      return (
        'refuses ' +
        JSON.stringify(v) +
        ': it must match the pattern ' +
        JSON.stringify(e.pattern) +
        '; nothing was set'
      );
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
  function heldValue(e, asked) {
    const h = held(e);
    if (h.secret) return { value: shown(h), differs: h.value !== asked };
    const r = { value: h.value };
    if (h.value !== asked) r.asked = asked;
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
        if (h.localName === 'iframe') {
          const d = frameDoc(h);
          if (d) walk(d);
        }
      }
    };
    walk(document);
    return out;
  }
  function keysOf(e) {
    const ks = [
      nameOf(e, roleOf(e)),
      e.getAttribute('name'),
      e.id,
      e.getAttribute('placeholder'),
      e.getAttribute('aria-label'),
    ];
    return ks.filter(Boolean).map((k) =>
      norm(k)
        .replace(/[:*]+$/, '')
        .trim(),
    );
  }
  function resolveField(key, fields) {
    const k = norm(key)
      .replace(/[:*]+$/, '')
      .trim();
    const exact = fields.filter((e) => keysOf(e).includes(k));
    const pool = exact.length
      ? exact
      : fields.filter((e) => keysOf(e).some((x) => x.startsWith(k) || (k.length > 2 && x.includes(k))));
    return pool;
  }
  // The fields of a login form, each with its document's origin (the host
  // types a credential only where that origin is bound): by ref (`refs`: ref →
  // username, password or otp), else the first visible password field's form
  // with the text field before it, and a one-time-code field; a page that
  // asks for the username alone (or the code alone) gives that one.
  function loginFields(a) {
    const originOf = (e) => {
      try {
        return e.ownerDocument.location.origin;
      } catch (x) {
        return 'null';
      }
    };
    const one = (e) => ({ ref: describe(e).ref, line: refLine(e), origin: originOf(e) });
    const out = {};
    const given = Object.entries(a.refs || {});
    if (given.length) {
      for (const [r, role] of given) {
        const e = el(r.replace(/^ax_/, ''));
        if (!/^(input|textarea)$/.test(e.localName) || NOT_TEXT.test((e.type || '').toLowerCase()))
          fail('INVALID_ARGUMENT', r + ' (' + refLine(e) + ') is not a text field', { field: role });
        out[role] = one(e);
      }
      return out;
    }
    const ty = (e) => (e.type || 'text').toLowerCase();
    const ac = (e) => (e.getAttribute('autocomplete') || '').toLowerCase();
    const usable = formFields().filter(
      (e) => e.localName === 'input' && !e.disabled && !e.readOnly && !NOT_TEXT.test(ty(e)) && visible(e),
    );
    const isOtp = (e) =>
      /\bone-time-code\b/.test(ac(e)) ||
      (/^(text|tel|number|password)$/.test(ty(e)) &&
        /\b(otp|totp|2fa|mfa|one[ -_]?time|verification code|security code|auth(entication)? code)\b|^code$/.test(
          keysOf(e).join(' | ').replace(/[_-]/g, ' '),
        ));
    const otp = usable.find(isOtp);
    const password = usable.find((e) => ty(e) === 'password' && !isOtp(e) && !/\bnew-password\b/.test(ac(e)));
    const scope = (password || otp || {}).form || null;
    const userLike = (e) =>
      /^(text|email|tel)$/.test(ty(e)) && !isOtp(e) && (!scope || e.form === scope) && !/\bsearch\b/.test(ac(e));
    const before = (x, y) => !!(x.compareDocumentPosition(y) & Node.DOCUMENT_POSITION_FOLLOWING);
    let username = usable.find((e) => userLike(e) && /\b(username|email)\b/.test(ac(e)));
    if (!username && password) username = usable.filter((e) => userLike(e) && before(e, password)).pop();
    if (!username && !password && !otp)
      username = usable.find(
        (e) =>
          userLike(e) && (ty(e) === 'email' || /\b(user ?name|login|e-?mail|account)\b/.test(keysOf(e).join(' | '))),
      );
    if (!username && !password && !otp)
      fail('FIELD_NOT_FOUND', 'no login form here: no password, username or one-time-code field', {});
    if (username) out.username = one(username);
    if (password) out.password = one(password);
    if (otp) out.otp = one(otp);
    return out;
  }
  function fill(a) {
    const fields = formFields();
    const plan = [];
    const problems = [];
    for (const [key, value] of Object.entries(a.fields || {})) {
      const pool = resolveField(key, fields);
      if (!pool.length) {
        problems.push('no field matches ' + JSON.stringify(key));
        continue;
      }
      const e = pool[0];
      const ty = (e.type || '').toLowerCase();
      if (ty === 'radio') {
        const group = pool.filter((x) => x.type === 'radio' && x.name === e.name);
        const named = group.length > 1 || pool.length === 1;
        const opt = group.find((x) => x.value === String(value) || norm(nameOf(x, 'radio')) === norm(value));
        if (named && opt && typeof value !== 'boolean') {
          plan.push([opt, true, key]);
          continue;
        }
        if (typeof value === 'boolean') {
          plan.push([e, value, key]);
          continue;
        }
        problems.push(
          JSON.stringify(key) +
            ' has no option ' +
            JSON.stringify(value) +
            '; options: ' +
            group.map((x) => JSON.stringify(x.value)).join(', '),
        );
        continue;
      }
      if (
        ty === 'checkbox' &&
        pool.filter((x) => x.type === 'checkbox').length > 1 &&
        (Array.isArray(value) || typeof value === 'string')
      ) {
        const group = pool.filter((x) => x.type === 'checkbox' && x.name === e.name);
        const want = (Array.isArray(value) ? value : [value]).map(String);
        const unknown = want.filter(
          (v) => !group.some((x) => x.value === v || norm(nameOf(x, 'checkbox')) === norm(v)),
        );
        if (unknown.length) {
          problems.push(
            JSON.stringify(key) +
              ' has no option ' +
              JSON.stringify(unknown[0]) +
              '; options: ' +
              group.map((x) => JSON.stringify(x.value)).join(', '),
          );
          continue;
        }
        for (const x of group) {
          const on = want.includes(x.value) || want.some((v) => norm(nameOf(x, 'checkbox')) === norm(v));
          plan.push([x, on, key, !on]);
        }
        continue;
      }
      plan.push([e, value, key]);
    }
    for (const [r, value] of Object.entries(a.refs || {})) plan.push([el(r.replace(/^ax_/, '')), value, r]);
    if (problems.length) {
      fail(
        'FIELD_NOT_FOUND',
        problems.join('; ') +
          '. Fields on the page: ' +
          fields
            .slice(0, 30)
            .map((e) => JSON.stringify(keysOf(e)[0] || e.localName))
            .join(', '),
        { fields: problems },
      );
    }
    // Check every value before changing anything.
    for (const [e, value, key] of plan) {
      const ty = (e.type || '').toLowerCase();
      if (e.disabled) fail('ELEMENT_NOT_EDITABLE', refLine(e) + ' is disabled', { field: key });
      if (widgetOf(e))
        fail(
          'INVALID_ARGUMENT',
          JSON.stringify(key) +
            ' is ' +
            refLine(e) +
            ', a custom ' +
            widgetOf(e) +
            ': set it with form_input {ref: "ax_' +
            mint(e) +
            '"}; nothing was filled',
          { field: key, ref: 'ax_' + mint(e) },
        );
      if ((ty === 'checkbox' || ty === 'radio') && truthOf(value) == null)
        fail('INVALID_ARGUMENT', JSON.stringify(key) + ' is a ' + ty + ': value must be true or false', { field: key });
      if (e.localName === 'input' || e.localName === 'textarea') {
        if (ty !== 'checkbox' && ty !== 'radio' && (typeof value === 'string' || typeof value === 'number')) {
          const bad = valueProblem(e, String(value));
          if (bad)
            fail('INVALID_ARGUMENT', JSON.stringify(key) + ' (' + refLine(e) + ') ' + bad, {
              field: key,
              format: FORMATS[ty] || null,
            });
        }
      }
      if (e.localName === 'select') {
        const vs = Array.isArray(value) ? value.map(String) : [String(value)];
        const opts = Array.from(e.options);
        const bad = vs.find((v) => !optionOf(opts, v));
        if (bad !== undefined)
          fail(
            'INVALID_ARGUMENT',
            JSON.stringify(key) +
              ' has no option ' +
              JSON.stringify(bad) +
              '; options: ' +
              opts
                .slice(0, 20)
                .map((o) => JSON.stringify(o.label || o.text))
                .join(', '),
            { field: key },
          );
      }
    }
    const done = [];
    for (const [e, value, key, quiet] of plan) {
      const r = setValue(e, value, key);
      if (r && typeof r.then === 'function')
        r.then(
          () => {},
          () => {},
        );
      if (!quiet) done.push([e, String(value)]);
    }
    let submitted = false;
    if (a.submit) {
      const form = (plan.length && plan[0][0].form) || document.querySelector('form');
      if (!form) fail('ELEMENT_NOT_FOUND', 'there is no form to submit');
      const btn = form.querySelector('button[type=submit],input[type=submit],button:not([type])');
      // After the fields were read back (below).
      setTimeout(
        () =>
          setTimeout(() => {
            if (btn) btn.click();
            else form.requestSubmit();
          }, 0),
        0,
      );
      submitted = true;
    }
    // Each field read back once the page's handlers ran: a value the field
    // does not hold as given is said.
    return new Promise((resolve) =>
      setTimeout(
        () =>
          resolve({
            filled: done.map(([e, asked]) => {
              const line = refLine(e);
              const h = held(e);
              if (!('value' in e) || !h.text || h.secret || h.value === asked) return line;
              return line + ' (asked ' + JSON.stringify(asked) + ')';
            }),
            submitted,
            token: L.token,
          }),
        0,
      ),
    );
  }
