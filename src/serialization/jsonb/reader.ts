// Owns `JsonbError`, `JAVA_TIME`, `readJsonb`. A bounded reader of fastjson2's JSONB (the binary
// JSON Dubbo's fastjson2 serialization writes, `docs/JSONB/jsonb_format_en.md` in
// alibaba/fastjson2): one value from bytes. Must not change: the bytes stay what fastjson2's JSONB
// writes and reads; reads stay bounded.
import { FORBIDDEN_KEYS } from "../../codec/json.js";
import { ByteCursor, type ReadLimits } from "../bytes.js";
import { JAVA_CLASS } from "../hessian2/reader.js";
import { checkZone, formatDecimal, JavaValueError, zoneOffsetAt } from "../../codec/java-values.js";
import { cutText, quote } from "../../protocol/wire-text.js";

/**
 * A bounded reader of fastjson2's JSONB (the binary JSON Dubbo's fastjson2 serialization
 * writes, `docs/JSONB/jsonb_format_en.md` in alibaba/fastjson2): one value from bytes.
 *
 * | JSONB | JavaScript |
 * |---|---|
 * | null, booleans, strings (latin1, UTF-8, UTF-16, GB18030), char | `null`, `boolean`, `string` |
 * | int8/16/32, float, double | `number` |
 * | decimal (`BigDecimal`) | an object `{ value: its text }` of class `java.math.BigDecimal` (as hessian2's), exact |
 * | int64 | `number` when a safe integer, else `bigint`; bigint forms: `bigint` |
 * | timestamps (millis, seconds, minutes, instant) | `Date` |
 * | local date / date-time / time | ISO text without a zone (`2024-01-02`, `2024-01-02T03:04:05.123`, `03:04:05.000`; 9 digits when the nanoseconds are not whole milliseconds) |
 * | zoned / offset date-time (`0xaa`), instant (`0xae`) | `Date` (the instant), its exact parts under {@link JAVA_TIME} |
 * | binary | `Buffer` |
 * | array | array |
 * | object with string keys | plain object (with a type name: its Java class under {@link JAVA_CLASS}) |
 * | object with other keys | `Map` |
 *
 * Names as symbols (`0x7f`, a name then its number, later the number alone), typed values
 * (`0x92`, a class name then its symbol number, later the number) and references (`0x93`, a
 * path: `$`, `$.a.b`, `$[0]`, `#-1`, `..`, special characters in names escaped with a backslash, as
 * fastjson2's `JSONWriter.Path` writes them) are resolved by walking the tree of containers read so far, so a path costs its own
 * length once, never the depth × key length of every container. Bounded like the hessian2 reader: lengths
 * checked against the bytes left, `maxDepth`, `maxNodes` (references count what they repeat), and
 * a reference to a value still being read (a loop, `..` included) is refused. A negative symbol
 * (fastjson2's shared symbol tables, which Dubbo does not use) is refused.
 */
export class JsonbError extends Error {
  override name = "JsonbError";
}

export type JsonbReadLimits = ReadLimits;

/**
 * On a `Date` read from an instant (`0xae`: `{ seconds, nanos }`) or a zoned / offset date-time
 * (`0xaa`: `{ dateTime, offset, zone }`): the value's exact parts, which a `Date` cannot hold
 * (nanoseconds, the zone), for a declared `T.instant` or `T.zonedDateTime` (a non-enumerable property).
 */
export const JAVA_TIME: unique symbol = Symbol.for("triple-rpc:java-time");

const IN_PROGRESS = -1;

/**
 * A container read (or being read), for references: its value, how many values it holds (what a
 * reference to it repeats), and its children by step (`.name` or `[index]`). A child knows only
 * its parent and its step, never its whole path: paths repeat the keys above them, so long keys
 * nested deep, then many containers below, would be gigabytes of path text from a megabyte.
 */
interface Slot {
  value: unknown;
  weight: number;
  readonly parent: Slot | undefined;
  /** `.name` in an object, the index in an array, `$` for the root. */
  readonly step: string | number;
  /** An object's containers by `.name`. */
  named: Map<string, Slot> | undefined;
  /** An array's containers by index. */
  items: Slot[] | undefined;
}

/** Where a value is read: the container it goes in (none for the root) and its step there. */
interface At {
  readonly parent: Slot | undefined;
  readonly step: string | number;
}

const ROOT: At = { parent: undefined, step: "$" };
/** Containers read as map keys: no path reaches them. */
const KEY_STEP = "#key";

class Reader extends ByteCursor {
  readonly symbols: string[] = [];
  /** The root container, once read. */
  root: Slot | undefined;
  lastRef = "";
  readonly view: DataView;

  constructor(b: Uint8Array, limits: JsonbReadLimits) {
    super(b, limits);
    this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }

  override fail(what: string): never {
    throw new JsonbError(`invalid JSONB at byte ${this.pos}: ${what}`);
  }

  fixed(n: 1 | 2 | 4 | 8, kind: "int" | "float"): number | bigint {
    this.need(n);
    const p = this.pos;
    this.pos += n;
    if (kind === "float") return n === 4 ? this.view.getFloat32(p) : this.view.getFloat64(p);
    if (n === 1) return this.view.getInt8(p);
    if (n === 2) return this.view.getInt16(p);
    if (n === 4) return this.view.getInt32(p);
    return this.view.getBigInt64(p);
  }

  count(n: number): void {
    this.nodes += n;
    if (this.nodes > this.maxNodes) this.fail(`more than ${this.maxNodes} values`);
  }
}

/** Reads one JSONB value that fills `bytes` exactly. */
export function readJsonb(bytes: Uint8Array, limits: JsonbReadLimits = {}): unknown {
  const r = new Reader(bytes, limits);
  const v = readValue(r, ROOT);
  if (r.pos !== bytes.length) r.fail(`${bytes.length - r.pos} bytes after the value`);
  return v;
}

function safe(v: bigint): number | bigint {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

/** An int32 in any of its forms (lengths, symbols, scales). */
function readInt32(r: Reader): number {
  const c = r.byte();
  if (c >= 0xf0 || c <= 0x2f) return (c << 24) >> 24;
  if (c <= 0x3f) return ((c - 0x38) << 8) + r.byte();
  if (c <= 0x47) return ((c - 0x44) << 16) + ((r.fixed(2, "int") as number) & 0xffff);
  if (c === 0x48) return r.fixed(4, "int") as number;
  return r.fail(`an int32 expected, got 0x${c.toString(16)}`);
}

/** An int64 in any of its forms (or an int32 one). */
function readInt64(r: Reader): bigint {
  const c = r.peek();
  if (c >= 0xd8 && c <= 0xef) return BigInt(r.byte() - 0xe0);
  if (c >= 0xc8 && c <= 0xd7) return BigInt(((r.byte() - 0xd0) << 8) + r.byte());
  if (c >= 0xc0 && c <= 0xc7) return BigInt(((r.byte() - 0xc4) << 16) + ((r.fixed(2, "int") as number) & 0xffff));
  if (c === 0xbf || c === 0xbe) {
    r.pos++;
    return c === 0xbf ? BigInt(r.fixed(4, "int") as number) : (r.fixed(8, "int") as bigint);
  }
  return BigInt(readInt32(r));
}

function readValue(r: Reader, path: At): unknown {
  r.count(1);
  const c = r.peek();
  if (c >= 0xf0 || c <= 0x48) return readInt32(r);
  if (c >= 0xbe && c <= 0xef) return safe(readInt64(r));
  if (c >= 0x49 && c <= 0x7e) return readString(r);
  if (c >= 0x94 && c <= 0xa4) return readArray(r, path);
  r.pos++;
  switch (c) {
    case 0x7f:
      return readSymbolRef(r);
    case 0xa6:
      return readObject(r, path, undefined);
    case 0x92:
      return readTyped(r, path);
    case 0x93:
      return readReference(r, path);
    case 0x91: {
      const n = readInt32(r);
      r.need(n);
      r.pos += n;
      return Buffer.from(r.b.subarray(r.pos - n, r.pos));
    }
    case 0x90:
      return String.fromCharCode(readInt32(r) & 0xffff);
  }
  return readScalar(r, c);
}

function readScalar(r: Reader, c: number): unknown {
  switch (c) {
    case 0xaf:
      return null;
    case 0xb0:
      return false;
    case 0xb1:
      return true;
    case 0xb2:
      return 0;
    case 0xb3:
      return 1;
    case 0xb4:
      return Number(readInt64(r));
    case 0xb5:
      return r.fixed(8, "float");
    case 0xb6:
      return readInt32(r);
    case 0xb7:
      return r.fixed(4, "float");
    case 0xb8:
      return decimalObject(String(readInt64(r)));
    case 0xb9:
      return readDecimal(r);
    case 0xba:
      return readInt64(r);
    case 0xbb:
      return readBigInt(r);
    case 0xbc:
      return r.fixed(2, "int");
    case 0xbd:
      return r.fixed(1, "int");
  }
  return readTemporal(r, c);
}

/**
 * A `BigDecimal` (scale, then the unscaled value as an int64 or a `BigInteger`) as an object of
 * class `java.math.BigDecimal` holding its exact text in `value` (hessian-lite's shape), never a
 * float. Its unscaled bytes are bounded by `maxNumberDigits` before they are read.
 */
function readDecimal(r: Reader): Record<string, unknown> {
  const scale = readInt32(r);
  const c = r.peek();
  if (c === 0xbb) r.pos++;
  const unscaled = c === 0xbb ? readBigInt(r, "a BigDecimal") : readInt64(r);
  return decimalObject(formatDecimal({ unscaled, scale }));
}

function decimalObject(value: string): Record<string, unknown> {
  const o: Record<string, unknown> = { value };
  Object.defineProperty(o, JAVA_CLASS, { value: "java.math.BigDecimal", enumerable: false });
  return o;
}

/** A `BigInteger` (its length, then `toByteArray()`), bounded by `maxNumberDigits` before conversion; linear (hexadecimal). */
function readBigInt(r: Reader, what = "a BigInteger"): bigint {
  const n = readInt32(r);
  r.need(n);
  if (n === 0) return 0n;
  r.checkBigNumber(n, what);
  const hex = Buffer.from(r.b.subarray(r.pos, r.pos + n)).toString("hex");
  r.pos += n;
  const v = BigInt(`0x${hex}`);
  return r.b[r.pos - n] & 0x80 ? v - (1n << BigInt(n * 8)) : v;
}

function toDate(r: Reader, ms: number, parts?: object): Date {
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) r.fail(`timestamp ${ms} out of range`);
  if (parts) Object.defineProperty(d, JAVA_TIME, { value: parts, enumerable: false });
  return d;
}

/** Seconds and nanoseconds as JSONB's fraction text: milliseconds (`.123`), or 9 digits when finer. */
const nanoText = (n: number): string => (n % 1e6 === 0 ? pad(n / 1e6, 3) : pad(n, 9));

function checkTime(r: Reader, h: number, mi: number, s: number, nanos: number): void {
  if (h > 23 || mi > 59 || s > 59 || nanos < 0 || nanos > 999_999_999) r.fail(`time ${h}:${mi}:${s}.${nanos} out of range`);
}

const pad = (n: number, w = 2): string => String(n).padStart(w, "0");

function readTemporal(r: Reader, c: number): unknown {
  switch (c) {
    case 0xab:
      return toDate(r, Number(r.fixed(8, "int")));
    case 0xac:
      return toDate(r, (r.fixed(4, "int") as number) * 1000);
    case 0xad:
      return toDate(r, (r.fixed(4, "int") as number) * 60000);
    case 0xae: {
      const s = readInt64(r);
      const nanos = readInt32(r);
      if (nanos < 0 || nanos > 999_999_999) r.fail(`instant nanoseconds ${nanos} out of range`);
      return toDate(r, Number(s) * 1000 + Math.floor(nanos / 1e6), { seconds: s, nanos });
    }
    case 0xa9: {
      const y = r.fixed(2, "int") as number;
      return `${pad(y, 4)}-${pad(r.byte())}-${pad(r.byte())}`;
    }
    case 0xa8: {
      const y = r.fixed(2, "int") as number;
      const [mo, d, h, mi, s] = [r.byte(), r.byte(), r.byte(), r.byte(), r.byte()];
      const nanos = readInt32(r);
      checkTime(r, h, mi, s, nanos);
      return `${pad(y, 4)}-${pad(mo)}-${pad(d)}T${pad(h)}:${pad(mi)}:${pad(s)}.${nanoText(nanos)}`;
    }
    case 0xa7: {
      const [h, mi, s] = [r.byte(), r.byte(), r.byte()];
      const nanos = readInt32(r);
      checkTime(r, h, mi, s, nanos);
      return `${pad(h)}:${pad(mi)}:${pad(s)}.${nanoText(nanos)}`;
    }
    case 0xaa:
      return readZoned(r);
  }
  return r.fail(`unsupported JSONB type 0x${c.toString(16)}`);
}

/**
 * `0xaa` already read: a `ZonedDateTime` or `OffsetDateTime` (year as an int16, month, day, hour,
 * minute, second bytes, nanos as an int32, then the zone: an offset id like `Z` or `+08:00`, or a
 * region like `Asia/Shanghai`) → the instant as a `Date`.
 */
function readZoned(r: Reader): Date {
  const y = r.fixed(2, "int") as number;
  const [mo, d, h, mi, s] = [r.byte(), r.byte(), r.byte(), r.byte(), r.byte()];
  const nanos = readInt32(r);
  checkTime(r, h, mi, s, nanos);
  const c = r.peek();
  if (c < 0x49 || c > 0x7e) r.fail("a zone id expected");
  const zone = readString(r);
  const local = new Date(0);
  local.setUTCFullYear(y, mo - 1, d);
  local.setUTCHours(h, mi, s, Math.floor(nanos / 1e6));
  const t = local.getTime();
  const dateTime = { date: { year: y, month: mo, day: d }, time: { hour: h, minute: mi, second: s, nano: nanos } };
  const fixed = offsetOf(zone);
  if (fixed !== undefined) return toDate(r, t - fixed, { dateTime, offset: fixed / 1000, zone });
  // A region: its offset at that local time (the earlier one in an overlap, as Java resolves it).
  let offset: number;
  try {
    offset = zoneOffsetAt(checkZone(zone), dateTime);
  } catch (e) {
    if (e instanceof JavaValueError) return r.fail(`unknown time zone ${quote(zone)}`);
    throw e;
  }
  return toDate(r, t - offset * 1000, { dateTime, offset, zone });
}

/** The offset in ms of `Z`, `+08:00`, `-0530`, `UTC`, `GMT+8`, `UT-01:00`…; undefined for a region. */
function offsetOf(zone: string): number | undefined {
  const m = /^(?:Z|UTC|GMT|UT)?(?:([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?)?$/.exec(zone);
  if (!m) return undefined;
  if (!m[1]) return 0;
  const v = ((Number(m[2]) * 60 + Number(m[3] ?? 0)) * 60 + Number(m[4] ?? 0)) * 1000;
  return m[1] === "-" ? -v : v;
}

function readString(r: Reader): string {
  const c = r.byte();
  if (c <= 0x78) {
    const n = c - 0x49;
    r.need(n);
    r.pos += n;
    return Buffer.from(r.b.subarray(r.pos - n, r.pos)).toString("latin1");
  }
  const n = readInt32(r);
  r.need(n);
  const raw = r.b.subarray(r.pos, r.pos + n);
  r.pos += n;
  switch (c) {
    case 0x79:
      return Buffer.from(raw).toString("latin1");
    case 0x7a:
      return decode("utf-8", raw, r);
    case 0x7b:
      return decode(raw[0] === 0xff && raw[1] === 0xfe ? "utf-16le" : "utf-16be", raw, r);
    case 0x7c:
      return decode("utf-16le", raw, r);
    case 0x7d:
      return decode("utf-16be", raw, r);
    default:
      return decode("gb18030", raw, r);
  }
}

function decode(charset: string, raw: Uint8Array, r: Reader): string {
  try {
    return new TextDecoder(charset, { fatal: true }).decode(raw);
  } catch {
    return r.fail(`bad ${charset} in a string`);
  }
}

/** `0x7f` already read: a name with its symbol number (defining it), or a number alone. */
function readSymbolRef(r: Reader): string {
  const c = r.peek();
  if (c >= 0x49 && c <= 0x7e) {
    const s = readString(r);
    const n = readInt32(r);
    defineSymbol(r, n, s);
    return s;
  }
  return symbol(r, readInt32(r));
}

function defineSymbol(r: Reader, n: number, s: string): void {
  if (n < 0 || n > r.symbols.length) r.fail(`symbol ${n} out of order`);
  r.symbols[n] = s;
}

function symbol(r: Reader, n: number): string {
  if (n < 0) r.fail(`symbol ${n} from a shared symbol table`);
  const s = r.symbols[n];
  if (s === undefined) r.fail(`symbol ${n} undefined`);
  return s;
}

/** `0x92` already read: a class name (with its symbol number) or a symbol number, then the value. */
function readTyped(r: Reader, path: At): unknown {
  let name = typeName(r);
  // A type on a typed value: the innermost one counts (a loop, not a stack frame each).
  while (r.peek() === 0x92) {
    r.pos++;
    name = typeName(r);
  }
  if (r.peek() === 0xa6) {
    r.pos++;
    return readObject(r, path, name);
  }
  r.nodes--;
  return readValue(r, path);
}

function typeName(r: Reader): string {
  const c = r.peek();
  if (c < 0x49 || c > 0x7e) return symbol(r, readInt32(r));
  const name = readString(r);
  defineSymbol(r, readInt32(r), name);
  return name;
}

function enter(r: Reader, at: At, placeholder: unknown): Slot {
  if (++r.depth > r.maxDepth) r.fail(`nested deeper than ${r.maxDepth}`);
  const { parent, step } = at;
  const slot: Slot = { value: placeholder, weight: IN_PROGRESS, parent, step, named: undefined, items: undefined };
  if (!parent) r.root = slot;
  else if (typeof step === "number") (parent.items ??= [])[step] = slot;
  else if (step !== KEY_STEP) (parent.named ??= new Map()).set(step, slot);
  return slot;
}

/** fastjson2's path text of a container (for messages only). */
function pathText(slot: Slot): string {
  const steps: string[] = [];
  for (let s: Slot | undefined = slot; s; s = s.parent) steps.push(typeof s.step === "number" ? `[${s.step}]` : s.step);
  const text = steps.reverse().join("");
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** The container a path names (`$`, then `.name` with backslash escapes, or `[index]`), if one was read. */
function resolvePath(r: Reader, p: string): Slot | undefined {
  if (!p.startsWith("$")) return undefined;
  let slot = r.root;
  let i = 1;
  while (slot && i < p.length) {
    if (p[i] === "[") {
      const end = p.indexOf("]", i);
      const digits = p.slice(i + 1, end);
      if (end < 0 || !/^\d{1,9}$/.test(digits)) return undefined;
      slot = slot.items?.[Number(digits)];
      i = end + 1;
    } else if (p[i] === ".") {
      let name = "";
      let from = ++i;
      for (; i < p.length && p[i] !== "." && p[i] !== "["; i++) {
        if (p[i] === "\\") {
          name += p.slice(from, i);
          from = ++i;
        }
      }
      slot = slot.named?.get(`.${name}${p.slice(from, i)}`);
    } else return undefined;
  }
  return slot;
}

function leave(r: Reader, slot: Slot, value: unknown, start: number): void {
  slot.value = value;
  slot.weight = r.nodes - start;
  r.depth--;
}

function readArray(r: Reader, path: At): unknown[] {
  const c = r.byte();
  const n = c === 0xa4 ? readInt32(r) : c - 0x94;
  // Each element takes a byte at least.
  r.need(n);
  const out: unknown[] = [];
  const start = r.nodes;
  const slot = enter(r, path, out);
  for (let i = 0; i < n; i++) out.push(readValue(r, { parent: slot, step: i }));
  leave(r, slot, out, start);
  return out;
}

function readObject(r: Reader, path: At, javaClass: string | undefined): unknown {
  const start = r.nodes;
  const slot = enter(r, path, undefined);
  const keys: unknown[] = [];
  const values: unknown[] = [];
  while (r.peek() !== 0xa5) {
    const k = readKey(r, slot);
    // Throwable.cause is the exception itself until set: no cause, not a loop.
    if (k === "cause" && selfReference(r, slot)) continue;
    keys.push(k);
    values.push(readValue(r, { parent: slot, step: `.${String(k)}` }));
  }
  r.pos++;
  let out: unknown;
  if (keys.every((k) => typeof k === "string")) {
    const o: Record<string, unknown> = {};
    if (javaClass) Object.defineProperty(o, JAVA_CLASS, { value: javaClass, enumerable: false });
    for (let i = 0; i < keys.length; i++) if (!FORBIDDEN_KEYS.has(keys[i] as string)) o[keys[i] as string] = values[i];
    out = o;
  } else out = new Map(keys.map((k, i) => [k, values[i]]));
  leave(r, slot, out, start);
  return out;
}

/** `0x93` already read: a path to a value read before. */
function readReference(r: Reader, here: At): unknown {
  let p = readString(r);
  if (p === "#-1") p = r.lastRef;
  else r.lastRef = p;
  // `..`: the container this reference is in (always still being read).
  const slot = p === ".." ? here.parent : resolvePath(r, p);
  if (p === ".." && slot) p = pathText(slot);
  if (!slot) r.fail(`reference to ${p.length > 200 ? `${p.slice(0, 200)}…` : p}, which holds nothing`);
  if (slot.weight === IN_PROGRESS) r.fail(`reference ${cutText(p, 200)} loops back into the value being read`);
  r.count(slot.weight);
  return slot.value;
}

/** True (and the reference consumed) when the next value is a reference to the object `self`. */
function selfReference(r: Reader, self: Slot): boolean {
  if (r.peek() !== 0x93) return false;
  const at = r.pos;
  r.pos++;
  const p = readString(r);
  if (p === ".." || resolvePath(r, p) === self) return true;
  r.pos = at;
  return false;
}

/** An object key: a name as a symbol, or any value (maps with other keys). */
function readKey(r: Reader, parent: Slot): unknown {
  if (r.peek() !== 0x7f) return readValue(r, { parent, step: KEY_STEP });
  r.pos++;
  return readSymbolRef(r);
}
