// Owns `protojson`, `fastFromJson`, `fastToJson`. protobufjs's full ProtoJSON (~36 KB of source),
// loaded for the first message the fast path hands over. Must not change: limits are checked before
// memory is spent; bad input is a 4xx naming the problem.
import type * as protobuf from "protobufjs";
import type * as Protojson from "protobufjs/ext/protojson";
import { lazyModule } from "./lazy-module.js";

/** protobufjs's full ProtoJSON (~36 KB of source), loaded for the first message the fast path hands over. */
export const protojson = lazyModule(() => require("protobufjs/ext/protojson") as typeof Protojson);

/**
 * A compiled ProtoJSON path for the common message shape: every field a singular string, bool,
 * 32-bit integer, float or double, without presence tracking, oneofs or extensions. protobufjs's
 * `protojson` re-resolves the whole root and recomputes `fullName` on every call (~3 µs for a
 * one-field message); this is a few dozen nanoseconds. It mirrors protojson's rules exactly, and
 * returns `undefined` (meaning "ask protojson") for any value it is not certain about, so errors
 * and edge cases keep protojson's behaviour and messages.
 */

type Kind = "string" | "bool" | "int32" | "uint32" | "double" | "float";

const KINDS: Readonly<Record<string, Kind>> = {
  string: "string",
  bool: "bool",
  int32: "int32",
  sint32: "int32",
  sfixed32: "int32",
  uint32: "uint32",
  fixed32: "uint32",
  double: "double",
  float: "float",
};

const MAX_FLOAT = 3.4028234663852886e38;
/** protojson validates surrogate pairs; strings holding any surrogate go the slow way. */
const SURROGATE = /[\uD800-\uDFFF]/;

interface FastField {
  readonly name: string;
  readonly jsonName: string;
  readonly kind: Kind;
}

interface FastType {
  /** Field by original name, lowerCamelCase JSON name and proto name. */
  readonly byKey: Readonly<Record<string, FastField>>;
  readonly fields: readonly FastField[];
}

const compiled = new WeakMap<protobuf.Type, FastType | null>();

function compile(type: protobuf.Type): FastType | null {
  if (type.fullName.startsWith(".google.protobuf.") || type.oneofsArray.length > 0) return null;
  const byKey: Record<string, FastField> = Object.create(null);
  const fields: FastField[] = [];
  for (const f of type.fieldsArray) {
    f.resolve();
    const kind = KINDS[f.type];
    if (!kind || f.repeated || f.map || f.resolvedType || f.partOf || f.declaringField || f.hasPresence) return null;
    if (f.name.startsWith(".") || f.name === "__proto__" || f.jsonName === "__proto__") return null;
    const ff: FastField = { name: f.name, jsonName: f.jsonName, kind };
    for (const k of [f.name, f.jsonName, (f as { protoName?: string }).protoName]) {
      if (k === undefined) continue;
      if (byKey[k] !== undefined && byKey[k] !== ff) return null; // protojson reports the clash
      byKey[k] = ff;
    }
    fields.push(ff);
  }
  return { byKey, fields };
}

function fastType(type: protobuf.Type): FastType | null {
  let ft = compiled.get(type);
  if (ft === undefined) {
    ft = compile(type);
    compiled.set(type, ft);
  }
  return ft;
}

/**
 * `protojson.fromJson(type, value, { ignoreUnknownFields: true })` for simple messages; undefined
 * when protojson must decide (complex type, unexpected value, duplicate member).
 */
export function fastFromJson(type: protobuf.Type, value: Record<string, unknown>): protobuf.Message | undefined {
  const ft = fastType(type);
  if (ft === null) return undefined;
  const out: Record<string, unknown> = {};
  let seen: Record<string, true> | undefined;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const f = ft.byKey[key];
    if (f === undefined) continue; // unknown members are ignored
    if (key !== f.name || f.jsonName !== f.name) {
      // Two spellings of one field (user_name and userName) are an error protojson reports.
      seen ??= Object.create(null) as Record<string, true>;
      if (seen[f.name]) return undefined;
      seen[f.name] = true;
    }
    const v = value[key];
    if (v === null) continue;
    switch (f.kind) {
      case "string":
        if (typeof v !== "string" || SURROGATE.test(v)) return undefined;
        if (v !== "") out[f.name] = v;
        break;
      case "bool":
        if (typeof v !== "boolean") return undefined;
        if (v) out[f.name] = v;
        break;
      case "int32":
        if (typeof v !== "number" || !Number.isInteger(v) || v < -2147483648 || v > 2147483647) return undefined;
        if (v !== 0) out[f.name] = v;
        break;
      case "uint32":
        if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > 4294967295) return undefined;
        if (v !== 0) out[f.name] = v;
        break;
      case "double":
      case "float":
        if (typeof v !== "number" || !Number.isFinite(v)) return undefined;
        if (f.kind === "float" && Math.abs(v) > MAX_FLOAT) return undefined;
        if (v !== 0) out[f.name] = v;
        break;
    }
  }
  return type.create(out);
}

/** `protojson.toJson(type, message)` for simple messages; undefined when protojson must do it. */
export function fastToJson(type: protobuf.Type, message: object): Record<string, unknown> | undefined {
  const ft = fastType(type);
  if (ft === null) return undefined;
  const m = message as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const f of ft.fields) {
    const v = m[f.name];
    if (v === null || v === undefined || !Object.hasOwn(m, f.name)) continue;
    switch (f.kind) {
      case "string":
        if (v !== "") out[f.jsonName] = v;
        break;
      case "bool":
        if (v !== false) out[f.jsonName] = v;
        break;
      default:
        if (typeof v !== "number") return undefined; // Longs, strings: protojson's conversions
        if (v === 0) break;
        if (Number.isFinite(v)) out[f.jsonName] = v;
        else if (f.kind === "double" || f.kind === "float") out[f.jsonName] = String(v);
        else return undefined;
    }
  }
  return out;
}
