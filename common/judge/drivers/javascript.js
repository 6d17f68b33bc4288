// javascript.js: the record writer of the JavaScript judge (calls.h). Each
// value goes out as "\x1esandq-call I TEXT\n", TEXT its canonical encoding
// (docs/formats.md, "Call results"). A hoisted declaration: the tests above
// it call it. Stricter than assert.deepEqual's loose mode, which takes
// 1 == "1": a number and a string never share a TEXT.
function __sq_emit(__sq_i, __sq_v) {
  const __sq_enc = (v, depth) => {
    if (depth > 200) return '!deep';
    if (v === undefined || v === null) return 'null';
    switch (typeof v) {
    case 'boolean': return v ? 'true' : 'false';
    case 'bigint': return v.toString();
    case 'number':
      if (Number.isNaN(v)) return 'NaN';
      if (v === Infinity) return 'Infinity';
      if (v === -Infinity) return '-Infinity';
      if (Number.isInteger(v) && Math.abs(v) < 9007199254740992) return (v === 0 ? 0 : v).toFixed(0);
      return String(v);
    case 'string': return JSON.stringify(v);
    case 'object': break;
    default: return '!' + typeof v;
    }
    const sorted = (items) => items.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    if (Array.isArray(v)) {
      const out = [];
      for (let k = 0; k < v.length; k++) out.push(__sq_enc(v[k], depth + 1));
      return '[' + out.join(',') + ']';
    }
    if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return __sq_enc(Array.prototype.slice.call(v), depth);
    if (v instanceof Set) return '[' + sorted(Array.from(v, (x) => __sq_enc(x, depth + 1))).join(',') + ']';
    if (v instanceof Map) {
      const out = [];
      for (const [k, x] of v) out.push(__sq_enc(k, depth + 1) + ':' + __sq_enc(x, depth + 1));
      return '{' + sorted(out).join(',') + '}';
    }
    if (v instanceof Number || v instanceof String || v instanceof Boolean) return __sq_enc(v.valueOf(), depth);
    const out = [];
    for (const k of Object.keys(v)) out.push(JSON.stringify(k) + ':' + __sq_enc(v[k], depth + 1));
    return '{' + sorted(out).join(',') + '}';
  };
  let text;
  try {
    text = __sq_enc(__sq_v, 0);
  } catch (e) {
    text = '!unencodable';
  }
  // written at once (synchronous for files and pipes), so a later exit loses nothing
  const fs = require('fs');
  let buf = Buffer.from('\x1esandq-call ' + __sq_i + ' ' + text + '\n');
  while (buf.length > 0) {
    try {
      buf = buf.subarray(fs.writeSync(1, buf));
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
    }
  }
}
