// Owns `compileConverter`, `collect`, `missing`, the problems sink: a decoded value converted to a
// declared type. Both clients revive results with it, so Java value-class text and uploads come in
// through `useConverterExtras` (converter-extras.ts). Must not change: limits are checked before
// memory is spent; bad input is a 4xx naming the problem.
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { JavaText, NumberProto, TypeDesc } from "../service/type-desc.js";
import { InMemoryFile } from "../service/type-desc.js";
import { bigIntFromDecimal, describeBigInt } from "./big-numbers.js";
import { bindError } from "./bind-error.js";
import { FORBIDDEN_KEYS } from "./json.js";
import { cutText, quote } from "../protocol/wire-text.js";
import { base64Decode } from "../protocol/bytes.js";

/** Converts one decoded value to a parameter's type, or throws a 400 naming `where`. */
export type Converter = (value: unknown, where: string) => unknown;

/** The bad value as an error names it: its type, and a string quoted to 48 characters (it is the client's). */
export function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "bigint") return describeBigInt(v);
  // JSON.stringify would show Infinity (a JSON number too large for a double) as null.
  if (typeof v === "number") return `number ${v}`;
  if (typeof v === "string") return `string ${quote(v, 48)}${v.length > 48 ? ` (${v.length} characters)` : ""}`;
  return typeof v === "object" ? "an object" : cutText(`${typeof v} ${String(v)}`, 60);
}

/** One thing wrong with a request's arguments: where (`parameter #1 (user).address.city`) and what. */
export interface BindProblem {
  readonly where: string;
  readonly description: string;
}

/**
 * How many problems one JSON binding lists before it stops (the validator's cap, MAX_VIOLATIONS,
 * is the same): binding stops there, so a body of a million bad values costs 100 errors, not a
 * million.
 */
const MAX_BIND_PROBLEMS = 100;

/** The where and what of the errors the converters throw (the message is both, joined). */
const PROBLEMS = new WeakMap<RpcError, BindProblem>();

function problemError(where: string, description: string): RpcError {
  const e = bindError(`${where} ${description}`);
  PROBLEMS.set(e, { where, description });
  return e;
}

/**
 * The problems of the binding under way, when it collects them (the JSON binder does: every
 * missing field and bad value in one answer); undefined otherwise, and then the first problem
 * throws. Binding is synchronous, so one slot serves every call.
 */
let sink: BindProblem[] | undefined;
/** Thrown past every boundary once the sink holds {@link MAX_BIND_PROBLEMS}. */
const STOP = new RpcError(Code.InvalidArgument, "too many problems");

export function addProblem(p: BindProblem): void {
  (sink as BindProblem[]).push(p);
  if ((sink as BindProblem[]).length >= MAX_BIND_PROBLEMS) throw STOP;
}

/**
 * At a boundary (a field, an element, a parameter): records a bad value's error and lets binding
 * go on with the next one, when problems are collected; rethrows anything else.
 */
export function collect(e: unknown): void {
  if (sink === undefined || e === STOP || !(e instanceof RpcError) || e.code !== Code.InvalidArgument) throw e;
  addProblem(PROBLEMS.get(e) ?? { where: "", description: e.message });
}

/** A missing argument or field: recorded when problems are collected, else thrown. */
export function missing(where: string, description: string): void {
  if (sink === undefined) throw problemError(where, description);
  addProblem({ where, description });
}

/**
 * Makes `next` the sink of the binding under way (undefined: problems are thrown, not collected);
 * returns the one it replaces. binder.ts's `collecting` runs a binding with its own sink.
 */
export function swapSink(next: BindProblem[] | undefined): BindProblem[] | undefined {
  const outer = sink;
  sink = next;
  return outer;
}

/** True for the error that stops a binding once the sink holds {@link MAX_BIND_PROBLEMS}. */
export function isStop(e: unknown): boolean {
  return e === STOP;
}

export function fail(where: string, expected: string, v: unknown): never {
  throw problemError(where, `must be ${expected}, got ${describe(v)}`);
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** Bytes as a Buffer on Node, a Uint8Array on web runtimes (the web client revives bytes here too). */
export function toBytes(v: unknown, where: string): Uint8Array {
  if (typeof v === "string") {
    if (!BASE64.test(v)) fail(where, "base64 text", v);
    return base64Decode(v);
  }
  if (v instanceof Uint8Array) return typeof Buffer === "undefined" ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  if (Array.isArray(v) && v.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) return typeof Buffer === "undefined" ? Uint8Array.from(v) : Buffer.from(v);
  return fail(where, "bytes (base64 text or an array of octets)", v);
}

export function toDate(v: unknown, where: string): Date {
  if (typeof v === "string" || typeof v === "number") {
    const d = new Date(v);
    if (!Number.isNaN(d.getTime()) && v !== "") return d;
  }
  if (v instanceof Date && !Number.isNaN(v.getTime())) return v;
  return fail(where, "a date (ISO 8601 text or epoch milliseconds)", v);
}

const INTEGER_TEXT = /^\s*[+-]?\d+\s*$/;

export function toBigInt(v: unknown, where: string): bigint {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
  // Digits counted before the (super-linear) conversion: limits.maxNumberDigits.
  if (typeof v === "string" && INTEGER_TEXT.test(v)) return bigIntFromDecimal(v, where);
  if (typeof v === "number" && Number.isInteger(v)) {
    // JSON.parse already rounded it: 12345678901234567890 arrives as 12345678901234567000.
    throw bindError(
      `${where} must be an integer; ${v} is beyond JavaScript's exact integers (±2^53), so the number was rounded while parsing: send it as a JSON string ("12345678901234567890")`,
    );
  }
  return fail(where, "an integer", v);
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

const cache = new WeakMap<TypeDesc, Converter>();

/** A required field of a decorated class that the request left out: `parameter #1 (item).name is missing`. */
export function missingField(where: string, field: string): RpcError {
  return problemError(`${where}.${field}`, "is missing");
}

function arrayConverter(el: Converter, set: boolean): Converter {
  return (v, w) => {
    if (set && v instanceof Set) v = [...v];
    if (!Array.isArray(v)) fail(w, "an array", v);
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      try {
        out[i] = el(v[i], `${w}[${i}]`);
      } catch (e) {
        collect(e);
      }
    }
    return out;
  };
}

function mapConverter(val: Converter, asMap: boolean): Converter {
  return (v, w) => {
    if (v instanceof Map) v = Object.fromEntries(v);
    if (!isPlainObject(v)) fail(w, "an object of key/value pairs", v);
    const out: Map<string, unknown> | Record<string, unknown> = asMap ? new Map() : {};
    for (const k of Object.keys(v)) {
      if (FORBIDDEN_KEYS.has(k)) continue;
      let x: unknown;
      try {
        x = val(v[k], `${w}.${cutText(k)}`);
      } catch (e) {
        collect(e);
        continue;
      }
      if (asMap) (out as Map<string, unknown>).set(k, x);
      else (out as Record<string, unknown>)[k] = x;
    }
    return out;
  };
}

function classConverter(t: Extract<TypeDesc, { kind: "class" }>): Converter {
  const { ctor } = t;
  // Fields are compiled lazily so that self-referencing classes do not recurse forever.
  let fields: { name: string; optional: boolean; conv: Converter }[] | undefined;
  return (v, w) => {
    if (!isPlainObject(v)) fail(w, `an object (${ctor.name})`, v);
    fields ??= t.fields.map((f) => ({ name: f.name, optional: f.optional, conv: compileConverter(f.type) }));
    const out = Object.create(ctor.prototype) as Record<string, unknown>;
    for (const f of fields) {
      const x = v[f.name];
      if (x === undefined || x === null) {
        if (f.optional) continue;
        if (sink === undefined) throw missingField(w, f.name);
        addProblem({ where: `${w}.${f.name}`, description: "is missing" });
        continue;
      }
      try {
        out[f.name] = f.conv(x, `${w}.${f.name}`);
      } catch (e) {
        collect(e);
      }
    }
    return out;
  };
}

const SAFE = "an integer within ±9007199254740991 (declare the parameter bigint for larger ones)";

/**
 * The values a declared integer type takes: an integer in its range (`T.int64` / `T.uint64` as a
 * `number` are exact to ±2^53 only). `double` and `float` take any finite number.
 */
const INTEGER_RANGES: Partial<Record<NumberProto, readonly [min: number, max: number, expected: string]>> = {
  int32: [-2147483648, 2147483647, "an int32 (an integer from -2147483648 to 2147483647)"],
  uint32: [0, 4294967295, "a uint32 (an integer from 0 to 4294967295)"],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, SAFE],
  uint64: [0, Number.MAX_SAFE_INTEGER, "an integer from 0 to 9007199254740991 (declare the parameter bigint for larger ones)"],
};

/** A finite number that fits `proto`, or a 400 naming `w`; `raw` is what the request held (for the message). */
export function checkedNumber(n: number, proto: NumberProto | undefined, w: string, raw: unknown): number {
  if (!Number.isFinite(n)) return fail(w, "a finite number", raw);
  const range = proto && INTEGER_RANGES[proto];
  if (range && !(Number.isInteger(n) && n >= range[0] && n <= range[1])) return fail(w, range[2], raw);
  return n;
}

/**
 * A number parameter's converter: a finite number that fits the declared type. A `bigint` (a
 * Java long or BigInteger read from hessian2 or JSONB) is taken when it is within ±2^53 and fits;
 * a larger one would lose digits as a `number`, so it is refused, naming the parameter.
 */
function numberConverter(proto: NumberProto | undefined): Converter {
  return (v, w) => {
    if (typeof v === "number") return checkedNumber(v, proto, w, v);
    if (typeof v === "bigint") {
      if (v < BigInt(Number.MIN_SAFE_INTEGER) || v > BigInt(Number.MAX_SAFE_INTEGER)) return fail(w, INTEGER_RANGES[proto ?? "int64"]?.[2] ?? SAFE, v);
      return checkedNumber(Number(v), proto, w, v);
    }
    return fail(w, "a finite number", v);
  };
}

const SMALL_INTS = { short: [-32768, 32767], byte: [-128, 127] } as const;

/** A Java `short` or `byte`: an integer in its range. */
function smallIntConverter(java: "short" | "byte"): Converter {
  const [min, max] = SMALL_INTS[java];
  const num = numberConverter("int32");
  return (v, w) => {
    const n = num(v, w) as number;
    return n >= min && n <= max ? n : fail(w, `a Java ${java} (an integer from ${min} to ${max})`, v);
  };
}

/**
 * The converters kept out of this module so that a client reviving plain results does not carry
 * them: Java value-class text (its parsers) and `StreamedFile` uploads.
 */
export interface ConverterExtras {
  javaText(java: JavaText): Converter;
  readonly upload: Converter;
}

let extras: ConverterExtras | undefined;

/** Registers the {@link ConverterExtras} (binder.ts does on load; the web client before a method that needs them). */
export function useConverterExtras(x: ConverterExtras): void {
  extras = x;
}

function extra(): ConverterExtras {
  if (extras === undefined) throw new TypeError("converting a Java value-class text or an upload needs codec/converter-extras registered first");
  return extras;
}

/** True when converting `t` needs the {@link ConverterExtras}: a Java value-class text or an upload, anywhere in it. */
export function needsConverterExtras(t: TypeDesc, seen = new Set<TypeDesc>()): boolean {
  if (seen.has(t)) return false;
  seen.add(t);
  switch (t.kind) {
    case "string":
      return t.java !== undefined;
    case "upload":
      return true;
    case "array":
      return needsConverterExtras(t.element, seen);
    case "map":
      return needsConverterExtras(t.value, seen);
    case "class":
      return t.fields.some((f) => needsConverterExtras(f.type, seen));
    default:
      return false;
  }
}

/**
 * Compiles a converter for values decoded from JSON (or XML, or multipart JSON parts). Strict:
 * a string parameter takes a string, a number parameter a finite number, and so on; converting
 * text to other types is {@link compileTextConverter}'s job.
 */
export function compileConverter(t: TypeDesc): Converter {
  const hit = cache.get(t);
  if (hit) return hit;
  let conv: Converter;
  switch (t.kind) {
    case "string":
      conv = t.java ? extra().javaText(t.java) : (v, w) => (typeof v === "string" ? v : fail(w, "a string", v));
      break;
    case "number":
      conv = t.java ? smallIntConverter(t.java) : numberConverter(t.proto);
      break;
    case "boolean":
      conv = (v, w) => (typeof v === "boolean" ? v : fail(w, "a boolean", v));
      break;
    case "bigint":
      conv = toBigInt;
      break;
    case "date":
      conv = toDate;
      break;
    case "bytes":
      conv = toBytes;
      break;
    case "file":
      conv = (v, w) => (v instanceof InMemoryFile ? v : InMemoryFile.wrap(toBytes(v, w), "", "application/octet-stream"));
      break;
    case "download":
      // A result type only (the client reads it); as a parameter it is any value.
      conv = (v) => v;
      break;
    case "upload":
      // Outside multipart (JSON base64, XML), a StreamedFile is held in memory, bounded by maxBodyBytes.
      conv = extra().upload;
      break;
    case "any":
      conv = (v) => v;
      break;
    case "array":
      conv = arrayConverter(compileConverter(t.element), t.java === "java.util.Set");
      break;
    case "map":
      conv = mapConverter(compileConverter(t.value), t.as === "map");
      break;
    case "class":
      conv = classConverter(t);
      break;
  }
  cache.set(t, conv);
  return conv;
}
