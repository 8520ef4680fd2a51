// Owns `HessianError`, `JAVA_CLASS`, `readHessian`. A bounded Hessian 2.0 reader: one value from
// bytes, as Caucho Hessian 4 and Dubbo's hessian-lite write it (compact ints, longs and doubles,
// dates in ms and minutes, … Must not change: the bytes stay what Dubbo Java's hessian2
// (hessian-lite) writes and reads; reads stay bounded.
import { FORBIDDEN_KEYS } from "../../codec/json.js";
import { ByteCursor, type ReadLimits } from "../bytes.js";
import { quote } from "../../protocol/wire-text.js";

/**
 * A bounded Hessian 2.0 reader: one value from bytes, as Caucho Hessian 4 and Dubbo's
 * hessian-lite write it (compact ints, longs and doubles, dates in ms and minutes, chunked
 * strings and binaries, typed and untyped lists and maps, class definitions and objects,
 * references). Values come out as plain JavaScript:
 *
 * | Hessian | JavaScript |
 * |---|---|
 * | null | `null` |
 * | boolean, string, double | `boolean`, `string`, `number` |
 * | int | `number` |
 * | long | `number` when a safe integer, else `bigint` |
 * | date | `Date` |
 * | binary | `Buffer` |
 * | list (any type) | array |
 * | map with string keys | plain object (`__proto__`, `constructor`, `prototype` keys dropped) |
 * | map with other keys | `Map` |
 * | object | plain object of its fields; the class name under the {@link JAVA_CLASS} symbol |
 *
 * Bounded: every length is checked against the bytes left before anything is allocated;
 * nesting deeper than `maxDepth` and more than `maxNodes` values (a reference counts the values
 * it repeats, so shared subtrees cannot multiply the work of whoever walks the result) are
 * refused; a reference to a list, map or object still being read (a loop) is refused. Errors
 * are {@link HessianError}s.
 */
export class HessianError extends Error {
  override name = "HessianError";
}

/** The Java class name of a decoded Hessian object (a non-enumerable property). */
export const JAVA_CLASS: unique symbol = Symbol.for("triple-rpc:java-class");

export type HessianReadLimits = ReadLimits;

interface ClassDef {
  readonly name: string;
  readonly fields: readonly string[];
}

const IN_PROGRESS = -1;

class Reader extends ByteCursor {
  readonly refs: unknown[] = [];
  /** Values under each reference (IN_PROGRESS while it is being read). */
  readonly weights: number[] = [];
  readonly types: string[] = [];
  readonly classes: ClassDef[] = [];

  override fail(what: string): never {
    throw new HessianError(`invalid hessian2 at byte ${this.pos}: ${what}`);
  }

  u16(): number {
    this.need(2);
    const v = (this.b[this.pos] << 8) | this.b[this.pos + 1];
    this.pos += 2;
    return v;
  }

  i32(): number {
    this.need(4);
    const v = (this.b[this.pos] << 24) | (this.b[this.pos + 1] << 16) | (this.b[this.pos + 2] << 8) | this.b[this.pos + 3];
    this.pos += 4;
    return v;
  }

  i64(): bigint {
    this.need(8);
    const v = Buffer.from(this.b.buffer, this.b.byteOffset + this.pos, 8).readBigInt64BE(0);
    this.pos += 8;
    return v;
  }

  f64(): number {
    this.need(8);
    const v = Buffer.from(this.b.buffer, this.b.byteOffset + this.pos, 8).readDoubleBE(0);
    this.pos += 8;
    return v;
  }

  count(n: number): void {
    this.nodes += n;
    if (this.nodes > this.maxNodes) this.fail(`more than ${this.maxNodes} values`);
  }

  enter(): void {
    if (++this.depth > this.maxDepth) this.fail(`nested deeper than ${this.maxDepth}`);
  }

  /** Starts a reference-able value: its index. */
  open(placeholder: unknown): number {
    this.refs.push(placeholder);
    this.weights.push(IN_PROGRESS);
    this.enter();
    return this.refs.length - 1;
  }

  close(i: number, value: unknown, nodesAtStart: number): void {
    this.refs[i] = value;
    this.weights[i] = this.nodes - nodesAtStart;
    this.depth--;
  }
}

/** Reads one Hessian 2 value that fills `bytes` exactly. */
export function readHessian(bytes: Uint8Array, limits: HessianReadLimits = {}): unknown {
  const r = new Reader(bytes, limits);
  const v = readValue(r);
  if (r.pos !== bytes.length) r.fail(`${bytes.length - r.pos} bytes after the value`);
  return v;
}

/** One value. */
function readValue(r: Reader): unknown {
  r.count(1);
  const c = r.byte();
  if (c < 0x80) return readLow(r, c);
  if (c <= 0xbf) return c - 0x90;
  if (c <= 0xcf) return ((c - 0xc8) << 8) + r.byte();
  if (c <= 0xd7) return ((c - 0xd4) << 16) + r.u16();
  if (c <= 0xef) return c - 0xe0;
  return ((c - 0xf8) << 8) + r.byte();
}

function readLow(r: Reader, c: number): unknown {
  if (c <= 0x1f) return readString(r, c);
  if (c <= 0x2f) return readBinary(r, c);
  if (c <= 0x33) return readString(r, c);
  if (c <= 0x37) return readBinary(r, c);
  if (c <= 0x3f) return ((c - 0x3c) << 16) + r.u16();
  if (c >= 0x60 && c <= 0x6f) return readObject(r, c - 0x60);
  if (c >= 0x70) return readList(r, c);
  return readTagged(r, c);
}

function readTagged(r: Reader, c: number): unknown {
  switch (c) {
    case 0x4e: // N
      return null;
    case 0x54: // T
      return true;
    case 0x46: // F
      return false;
    case 0x49: // I
      return r.i32();
    case 0x59: // long as int32
      return r.i32();
    case 0x4c: // L
      return smallest(r.i64());
    case 0x44: // D
      return r.f64();
    case 0x5b:
      return 0;
    case 0x5c:
      return 1;
    case 0x5d:
      return (r.byte() << 24) >> 24;
    case 0x5e:
      return (r.u16() << 16) >> 16;
    case 0x5f: // double in thousandths
      return r.i32() * 0.001;
    case 0x4a: // date, ms
      return toDate(r, r.i64());
    case 0x4b: // date, minutes
      return toDate(r, BigInt(r.i32()) * 60000n);
  }
  return readStructured(r, c);
}

function readStructured(r: Reader, c: number): unknown {
  switch (c) {
    case 0x52: // R
    case 0x53: // S
      return readString(r, c);
    case 0x41: // A
    case 0x42: // B
      return readBinary(r, c);
    case 0x55: // U
    case 0x56: // V
    case 0x57: // W
    case 0x58: // X
      return readList(r, c);
    case 0x48: // H
      return readMap(r, false);
    case 0x4d: // M
      return readMap(r, true);
    case 0x43: // C: class definitions (read in a loop, not a frame each), then the value that follows
      readClassDef(r);
      while (r.peek() === 0x43) {
        r.pos++;
        readClassDef(r);
      }
      r.nodes--;
      return readValue(r);
    case 0x4f: // O
      return readObject(r, readInt(r));
    case 0x51: // Q
      return readRef(r);
  }
  return r.fail(`unexpected byte 0x${c.toString(16)}`);
}

function smallest(v: bigint): number | bigint {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

function toDate(r: Reader, ms: bigint): Date {
  const d = new Date(Number(ms));
  if (Number.isNaN(d.getTime())) r.fail(`date ${ms} ms out of range`);
  return d;
}

/** An int where the grammar wants one (lengths, class and reference indices). */
function readInt(r: Reader): number {
  // Not a class definition: it would start a value (recursing) where only an int fits.
  if (r.peek() === 0x43) return r.fail("an int expected");
  const v = readValue(r);
  r.nodes--;
  if (typeof v !== "number" || !Number.isInteger(v)) return r.fail("an int expected");
  return v;
}

function readRef(r: Reader): unknown {
  const i = readInt(r);
  if (i < 0 || i >= r.refs.length) r.fail(`reference ${i} to nothing`);
  const w = r.weights[i];
  if (w === IN_PROGRESS) r.fail(`reference ${i} loops back into the value being read`);
  r.count(w);
  return r.refs[i];
}

/** String chunks: 'R' (more follow), 'S' / 0x00–0x1f / 0x30–0x33 (final). Lengths count UTF-16 units. */
function readString(r: Reader, c: number): string {
  let out = "";
  for (;;) {
    let len: number;
    let final = true;
    if (c <= 0x1f) len = c;
    else if (c >= 0x30 && c <= 0x33) len = ((c - 0x30) << 8) + r.byte();
    else if (c === 0x53 || c === 0x52) {
      len = r.u16();
      final = c === 0x53;
    } else return r.fail(`a string chunk expected, got 0x${c.toString(16)}`);
    out += readUtf16Units(r, len);
    if (final) return out;
    c = r.byte();
  }
}

/** `len` UTF-16 units from UTF-8 (Java writes surrogates one by one, CESU-8; 4-byte forms are read too). */
function readUtf16Units(r: Reader, len: number): string {
  r.need(len);
  const b = r.b;
  let p = r.pos;
  let ascii = true;
  for (let i = 0; i < len; i++) if (b[p + i] >= 0x80) ascii = false;
  if (ascii) {
    r.pos += len;
    return Buffer.from(b.buffer, b.byteOffset + p, len).toString("latin1");
  }
  const units = new Array<number>(len);
  for (let n = 0; n < len; ) {
    if (p >= b.length) r.fail("truncated string");
    const x = b[p++];
    if (x < 0x80) units[n++] = x;
    else if ((x & 0xe0) === 0xc0 && p < b.length) units[n++] = ((x & 0x1f) << 6) | (b[p++] & 0x3f);
    else if ((x & 0xf0) === 0xe0 && p + 1 < b.length) {
      units[n++] = ((x & 0x0f) << 12) | ((b[p] & 0x3f) << 6) | (b[p + 1] & 0x3f);
      p += 2;
    } else if ((x & 0xf8) === 0xf0 && p + 2 < b.length && n + 1 < len) {
      const cp = (((x & 0x07) << 18) | ((b[p] & 0x3f) << 12) | ((b[p + 1] & 0x3f) << 6) | (b[p + 2] & 0x3f)) - 0x10000;
      p += 3;
      units[n++] = 0xd800 + (cp >> 10);
      units[n++] = 0xdc00 + (cp & 0x3ff);
    } else {
      r.pos = p;
      r.fail("bad UTF-8 in a string");
    }
  }
  r.pos = p;
  let s = "";
  for (let i = 0; i < len; i += 8192) s += String.fromCharCode(...units.slice(i, i + 8192));
  return s;
}

/** Binary chunks: 'A' (more follow), 'B' / 0x20–0x2f / 0x34–0x37 (final). */
function readBinary(r: Reader, c: number): Buffer {
  const parts: Buffer[] = [];
  for (;;) {
    let len: number;
    let final = true;
    if (c >= 0x20 && c <= 0x2f) len = c - 0x20;
    else if (c >= 0x34 && c <= 0x37) len = ((c - 0x34) << 8) + r.byte();
    else if (c === 0x42 || c === 0x41) {
      len = r.u16();
      final = c === 0x42;
    } else return r.fail(`a binary chunk expected, got 0x${c.toString(16)}`);
    r.need(len);
    parts.push(Buffer.from(r.b.subarray(r.pos, r.pos + len)));
    r.pos += len;
    if (final) return parts.length === 1 ? parts[0] : Buffer.concat(parts);
    c = r.byte();
  }
}

/** A type (of a list or map): a string, new to the type table, or an index into it. */
function readType(r: Reader): string {
  const c = r.peek();
  if (c <= 0x1f || (c >= 0x30 && c <= 0x33) || c === 0x52 || c === 0x53) {
    const t = readString(r, r.byte());
    r.types.push(t);
    return t;
  }
  const i = readInt(r);
  if (i < 0 || i >= r.types.length) r.fail(`type reference ${i} to nothing`);
  return r.types[i];
}

function readList(r: Reader, c: number): unknown[] {
  let len = -1;
  if (c === 0x55 || c === 0x56 || (c >= 0x70 && c <= 0x77)) readType(r);
  if (c === 0x56 || c === 0x58) len = readInt(r);
  else if (c >= 0x70 && c <= 0x77) len = c - 0x70;
  else if (c >= 0x78) len = c - 0x78;
  const out: unknown[] = [];
  const start = r.nodes;
  const ref = r.open(out);
  if (len >= 0) {
    // Each element takes a byte at least.
    r.need(len);
    for (let i = 0; i < len; i++) out.push(readValue(r));
  } else {
    while (r.peek() !== 0x5a) out.push(readValue(r));
    r.pos++;
  }
  r.close(ref, out, start);
  return out;
}

function readMap(r: Reader, typed: boolean): unknown {
  if (typed) readType(r);
  const start = r.nodes;
  const ref = r.open(undefined);
  const keys: unknown[] = [];
  const values: unknown[] = [];
  while (r.peek() !== 0x5a) {
    keys.push(readValue(r));
    values.push(readValue(r));
  }
  r.pos++;
  let out: unknown;
  if (keys.every((k) => typeof k === "string")) {
    const o: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) if (!FORBIDDEN_KEYS.has(keys[i] as string)) o[keys[i] as string] = values[i];
    out = o;
  } else out = new Map(keys.map((k, i) => [k, values[i]]));
  r.close(ref, out, start);
  return out;
}

function readClassDef(r: Reader): void {
  const name = readString(r, r.byte());
  const n = readInt(r);
  if (n < 0) r.fail(`class ${quote(name)} with ${n} fields`);
  r.need(n);
  const fields: string[] = [];
  for (let i = 0; i < n; i++) fields.push(readString(r, r.byte()));
  r.classes.push({ name, fields });
}

function readObject(r: Reader, index: number): Record<string, unknown> {
  const def = r.classes[index];
  if (!def) r.fail(`object of undefined class #${index}`);
  const out: Record<string, unknown> = {};
  Object.defineProperty(out, JAVA_CLASS, { value: def.name, enumerable: false });
  const start = r.nodes;
  const ref = r.open(out);
  for (const f of def.fields) {
    // Throwable.cause is the exception itself until set: read it as no cause, not as a loop.
    if (f === "cause" && selfRef(r, ref)) continue;
    const v = readValue(r);
    if (!FORBIDDEN_KEYS.has(f)) out[f] = v;
  }
  r.close(ref, out, start);
  return out;
}

/** True (and the reference consumed) when the next value is a reference to `ref`. */
function selfRef(r: Reader, ref: number): boolean {
  if (r.peek() !== 0x51) return false;
  const at = r.pos;
  r.pos++;
  if (readInt(r) === ref) return true;
  r.pos = at;
  return false;
}
