// Owns `hasPresence`, `toProto`, `fromProto`. True when the derived field of this type is a message
// (Timestamp, Value, a class), so an absent value can be told from a default one. Must not change:
// what a schema lock records (older locks must still parse and diff).
import { base64Encode } from "../protocol/bytes.js";
import { bindError } from "../codec/bind-error.js";
import { missingField } from "../codec/binder.js";
import { StreamedFile } from "../service/file-upload.js";
import { type TypeDesc, InMemoryFile } from "../service/type-desc.js";
import { cutText } from "../protocol/wire-text.js";

/**
 * Conversions between the values handlers take and return and the objects protobufjs encodes
 * and decodes for the derived schema: `Date` ↔ google.protobuf.Timestamp, `bigint` ↔ int64,
 * `Map` ↔ map fields, anything untyped ↔ google.protobuf.Value. Compiled once per type.
 */
export type ToProto = (value: unknown) => unknown;
export type FromProto = (value: unknown, where: string) => unknown;

type Long = { toString(): string };

/**
 * True when the derived field of this type is a message (Timestamp, Value, a class), so an
 * absent value can be told from a default one. Scalars, repeated and map fields cannot.
 */
export function hasPresence(t: TypeDesc): boolean {
  return t.kind === "class" || t.kind === "date" || t.kind === "any";
}

function isLong(v: unknown): v is Long {
  return typeof v === "object" && v !== null && "low" in v && "high" in v;
}

/** JSON-like JavaScript → google.protobuf.Value. */
function toValue(v: unknown): Record<string, unknown> {
  if (v === null || v === undefined) return { nullValue: 0 };
  switch (typeof v) {
    case "number":
      return { numberValue: v };
    case "string":
      return { stringValue: v };
    case "boolean":
      return { boolValue: v };
    case "bigint":
      return { stringValue: v.toString() };
  }
  if (v instanceof Date) return { stringValue: v.toISOString() };
  if (v instanceof Uint8Array) return { stringValue: base64Encode(v) };
  if (Array.isArray(v) || v instanceof Set) return { listValue: { values: [...v].map(toValue) } };
  const entries = v instanceof Map ? [...v] : Object.entries(v as object);
  const fields: Record<string, unknown> = {};
  for (const [k, x] of entries) if (x !== undefined) fields[String(k)] = toValue(x);
  return { structValue: { fields } };
}

/** google.protobuf.Value → JSON-like JavaScript. Only fields set on the message count (defaults live on its prototype). */
function fromValue(v: unknown): unknown {
  if (v === null || v === undefined || typeof v !== "object") return null;
  const o = v as Record<string, unknown>;
  const has = (k: string) => Object.hasOwn(o, k) && o[k] !== null && o[k] !== undefined;
  if (has("numberValue")) return o.numberValue;
  if (has("stringValue")) return o.stringValue;
  if (has("boolValue")) return o.boolValue;
  if (has("listValue")) return ((o.listValue as { values?: unknown[] }).values ?? []).map(fromValue);
  if (has("structValue")) {
    const out: Record<string, unknown> = {};
    const fields = (o.structValue as { fields?: Record<string, unknown> }).fields ?? {};
    for (const k of Object.keys(fields)) out[k] = fromValue(fields[k]);
    return out;
  }
  return null;
}

function dateToTimestamp(v: unknown): unknown {
  const ms = v instanceof Date ? v.getTime() : new Date(v as string | number).getTime();
  if (Number.isNaN(ms)) throw new TypeError(`invalid date ${String(v)}`);
  const seconds = Math.floor(ms / 1000);
  return { seconds: String(seconds), nanos: (ms - seconds * 1000) * 1_000_000 };
}

function timestampToDate(v: unknown): Date {
  const t = v as { seconds?: unknown; nanos?: number };
  const seconds = isLong(t.seconds) ? Number(t.seconds.toString()) : Number(t.seconds ?? 0);
  return new Date(seconds * 1000 + Math.floor((t.nanos ?? 0) / 1_000_000));
}

function entriesOf(v: unknown): [string, unknown][] {
  return v instanceof Map ? [...v].map(([k, x]) => [String(k), x]) : Object.entries(v as object);
}

/** A nested array or map inside an array or map travels as google.protobuf.Value. */
function elementToProto(t: TypeDesc): ToProto {
  return t.kind === "array" || t.kind === "map" ? toValue : toProto(t);
}

const toCache = new WeakMap<TypeDesc, ToProto>();

/** JavaScript value of type `t` → what protobufjs encodes for the derived field. */
export function toProto(t: TypeDesc): ToProto {
  let c = toCache.get(t);
  if (c) return c;
  c = compileToProto(t);
  toCache.set(t, c);
  return c;
}

function compileToProto(t: TypeDesc): ToProto {
  switch (t.kind) {
    case "bigint":
      return (v) => (typeof v === "bigint" || typeof v === "number" ? v.toString() : v);
    case "date":
      return dateToTimestamp;
    case "any":
      return toValue;
    case "array": {
      const el = elementToProto(t.element);
      return (v) => [...(v as Iterable<unknown>)].map(el);
    }
    case "map": {
      const val = elementToProto(t.value);
      return (v) => Object.fromEntries(entriesOf(v).map(([k, x]) => [k, val(x)]));
    }
    case "class": {
      let fields: { name: string; conv: ToProto }[] | undefined;
      return (v) => {
        fields ??= t.fields.map((f) => ({ name: f.name, conv: toProto(f.type) }));
        const o = v as Record<string, unknown>;
        const out: Record<string, unknown> = {};
        for (const f of fields) if (o[f.name] !== undefined && o[f.name] !== null) out[f.name] = f.conv(o[f.name]);
        return out;
      };
    }
    default:
      return (v) => v;
  }
}

function elementFromProto(t: TypeDesc): FromProto {
  return t.kind === "array" || t.kind === "map" ? (v) => fromValue(v) : fromProto(t);
}

const fromCache = new WeakMap<TypeDesc, FromProto>();

/**
 * What protobufjs decoded for a derived field → the JavaScript value of type `t`. A required
 * field of a class that has presence (a message) and is absent is a 400 naming it.
 */
export function fromProto(t: TypeDesc): FromProto {
  let c = fromCache.get(t);
  if (c) return c;
  c = compileFromProto(t);
  fromCache.set(t, c);
  return c;
}

function compileFromProto(t: TypeDesc): FromProto {
  switch (t.kind) {
    case "number":
      return (v) => (isLong(v) ? Number(v.toString()) : v);
    case "bigint":
      return (v) => BigInt(isLong(v) ? v.toString() : String(v ?? 0));
    case "date":
      return timestampToDate;
    case "bytes":
      return (v) => (v instanceof Uint8Array ? v : new Uint8Array(0));
    case "file":
      return (v) => InMemoryFile.wrap(v instanceof Uint8Array ? v : new Uint8Array(0), "", "application/octet-stream");
    case "upload":
      // Over gRPC and Connect a StreamedFile is the message's bytes field, in memory.
      return (v) => StreamedFile.fromBytes(v instanceof Uint8Array ? v : new Uint8Array(0));
    case "any":
      return (v) => fromValue(v);
    case "array": {
      const el = elementFromProto(t.element);
      return (v, w) => ((v as unknown[] | null) ?? []).map((x, i) => el(x, `${w}[${i}]`));
    }
    case "map": {
      const val = elementFromProto(t.value);
      return (v, w) => {
        const entries = Object.entries((v as object | null) ?? {}).map(([k, x]) => [k, val(x, `${w}.${cutText(k)}`)] as const);
        return t.as === "map" ? new Map(entries) : Object.fromEntries(entries);
      };
    }
    case "class":
      return classFromProto(t);
    default:
      return (v) => v;
  }
}

function classFromProto(t: Extract<TypeDesc, { kind: "class" }>): FromProto {
  let fields: { name: string; optional: boolean; presence: boolean; conv: FromProto }[] | undefined;
  return (v, w) => {
    if (v === null || v === undefined || typeof v !== "object") throw bindError(`${w} must be a ${t.ctor.name} message`);
    fields ??= t.fields.map((f) => ({
      name: f.name,
      optional: f.optional,
      presence: hasPresence(f.type),
      conv: fromProto(f.type),
    }));
    const o = v as Record<string, unknown>;
    const out = Object.create(t.ctor.prototype) as Record<string, unknown>;
    for (const f of fields) {
      const x = o[f.name];
      if (x === null || x === undefined) {
        if (f.presence && !f.optional) throw missingField(w, f.name);
        if (f.optional || f.presence) continue;
      }
      out[f.name] = f.conv(x, `${w}.${f.name}`);
    }
    return out;
  };
}
