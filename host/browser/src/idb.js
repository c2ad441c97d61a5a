// IndexedDB of this origin, whole, for a named login: `dump()` reads every
// database (its version, stores, indexes, keys and values) as JSON; `load(dbs)`
// writes them into this origin (a fresh context: none there yet). Values that
// JSON cannot hold keep their type as a tagged object: dates, binary data
// (ArrayBuffer and typed arrays, as base64), Maps, Sets, undefined; a record
// holding a Blob or a File is left out and counted (`skipped`).
(() => {
  const T = '$ochre';
  const b64 = (bytes) => {
    let s = '';
    for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(s);
  };
  const unb64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  function enc(v, where) {
    if (v === undefined) return { [T]: 'undefined' };
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
    if (typeof v === 'number') return Number.isFinite(v) ? v : { [T]: 'number', v: String(v) };
    if (typeof v === 'bigint') return { [T]: 'bigint', v: String(v) };
    if (v instanceof Date) return { [T]: 'date', v: v.getTime() };
    if (v instanceof ArrayBuffer) return { [T]: 'bytes', k: 'ArrayBuffer', v: b64(new Uint8Array(v)) };
    if (ArrayBuffer.isView(v))
      return { [T]: 'bytes', k: v.constructor.name, v: b64(new Uint8Array(v.buffer, v.byteOffset, v.byteLength)) };
    if (typeof Blob !== 'undefined' && v instanceof Blob) throw new Error('a Blob in ' + where);
    if (v instanceof Map) return { [T]: 'map', v: Array.from(v, ([k, x]) => [enc(k, where), enc(x, where)]) };
    if (v instanceof Set) return { [T]: 'set', v: Array.from(v, (x) => enc(x, where)) };
    if (v instanceof RegExp) return { [T]: 'regexp', v: v.source, f: v.flags };
    if (Array.isArray(v)) return v.map((x) => enc(x, where));
    const o = {};
    for (const [k, x] of Object.entries(v)) o[k] = enc(x, where);
    return T in v ? { [T]: 'object', v: o } : o;
  }
  function dec(v) {
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) return v.map(dec);
    const t = v[T];
    if (t === undefined) {
      const o = {};
      for (const [k, x] of Object.entries(v)) o[k] = dec(x);
      return o;
    }
    switch (t) {
      case 'undefined':
        return undefined;
      case 'number':
        return Number(v.v);
      case 'bigint':
        return BigInt(v.v);
      case 'date':
        return new Date(v.v);
      case 'bytes': {
        const bytes = unb64(v.v);
        if (v.k === 'ArrayBuffer') return bytes.buffer;
        const C = globalThis[v.k] || Uint8Array;
        return v.k === 'DataView' ? new DataView(bytes.buffer) : new C(bytes.buffer);
      }
      case 'map':
        return new Map(v.v.map(([k, x]) => [dec(k), dec(x)]));
      case 'set':
        return new Set(v.v.map(dec));
      case 'regexp':
        return new RegExp(v.v, v.f);
      case 'object': {
        const o = {};
        for (const [k, x] of Object.entries(v.v)) o[k] = dec(x);
        return o;
      }
      default:
        return v;
    }
  }
  const done = (req) =>
    new Promise((ok, no) => {
      req.onsuccess = () => ok(req.result);
      req.onerror = () => no(req.error);
      req.onblocked = () => no(new Error('the database is open elsewhere'));
    });
  async function dump(maxBytes) {
    const out = [];
    let bytes = 0;
    let skipped = 0;
    for (const info of await indexedDB.databases()) {
      const db = await done(indexedDB.open(info.name));
      try {
        const stores = [];
        for (const name of db.objectStoreNames) {
          const tx = db.transaction(name, 'readonly');
          const st = tx.objectStore(name);
          const indexes = Array.from(st.indexNames, (i) => {
            const ix = st.index(i);
            return { name: i, keyPath: ix.keyPath, unique: ix.unique, multiEntry: ix.multiEntry };
          });
          const [keys, values] = await Promise.all([done(st.getAllKeys()), done(st.getAll())]);
          const where = info.name + '/' + name;
          const records = [];
          keys.forEach((k, i) => {
            try {
              records.push({ key: enc(k, where), value: enc(values[i], where) });
            } catch (e) {
              skipped++;
            }
          });
          bytes += JSON.stringify(records).length;
          if (bytes > maxBytes) throw new Error('IndexedDB holds more than ' + maxBytes + ' bytes of JSON');
          stores.push({ name, keyPath: st.keyPath, autoIncrement: st.autoIncrement, indexes, records });
        }
        out.push({ name: info.name, version: db.version, stores });
      } finally {
        db.close();
      }
    }
    return { dbs: out, skipped };
  }
  async function load(dbs) {
    let n = 0;
    for (const d of dbs) {
      const open = indexedDB.open(d.name, d.version);
      open.onupgradeneeded = () => {
        const db = open.result;
        for (const s of d.stores) {
          const opts = { autoIncrement: !!s.autoIncrement };
          if (s.keyPath !== null && s.keyPath !== undefined) opts.keyPath = s.keyPath;
          const st = db.createObjectStore(s.name, opts);
          for (const i of s.indexes || []) st.createIndex(i.name, i.keyPath, { unique: i.unique, multiEntry: i.multiEntry });
        }
      };
      const db = await done(open);
      try {
        const names = d.stores.map((s) => s.name);
        if (names.length) {
          const tx = db.transaction(names, 'readwrite');
          for (const s of d.stores) {
            const st = tx.objectStore(s.name);
            for (const r of s.records) {
              if (st.keyPath === null) st.put(dec(r.value), dec(r.key));
              else st.put(dec(r.value));
              n++;
            }
          }
          await new Promise((ok, no) => {
            tx.oncomplete = ok;
            tx.onerror = () => no(tx.error);
            tx.onabort = () => no(tx.error || new Error('aborted'));
          });
        }
      } finally {
        db.close();
      }
    }
    return n;
  }
  return { dump, load };
})()
