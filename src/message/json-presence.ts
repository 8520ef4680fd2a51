// Owns `jsonPresence`, `jsonDefaults`. The presence check of a method's ProtoJSON request message
// (`req`, the derived request type), or undefined when nothing is required. Must not change: gRPC's
// wire rules (5-byte message prefix, grpc-status in trailers) that grpc-js and other peers rely on.
import type * as protobuf from "protobufjs";
import { bindError } from "../codec/bind-error.js";
import { paramLabel } from "../codec/binder.js";
import { type DerivedMethod, fieldName } from "../schema/derive.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { TypeDesc } from "../service/type-desc.js";

/**
 * Presence of required arguments and fields in ProtoJSON requests (Connect JSON, gRPC JSON) to
 * IDL-less methods. The JSON is turned into the derived protobuf message, where a plain scalar
 * that was left out reads as its default (proto3 gives it no presence); checked on the JSON
 * first, a required parameter or field that the object leaves out (or sets to `null`) is the
 * error Triple HTTP gives: `parameter #2 (width) is missing`, `parameter #1 (item).qty is
 * missing`. Repeated and map fields have no presence in protobuf: absent is empty.
 */

type Check = (v: unknown, where: string) => void;

/** The value of a field in a ProtoJSON object: under its JSON name or its proto name. */
function fieldValue(o: Record<string, unknown>, f: protobuf.Field): unknown {
  const v = f.jsonName === undefined ? undefined : o[f.jsonName];
  return v === undefined ? o[f.name] : v;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** One field's check: presence when required (and not repeated or a map), then what is inside. */
interface Slot {
  readonly field: protobuf.Field;
  readonly suffix: string;
  readonly required: boolean;
  readonly inner: Check | undefined;
}

function checkSlots(slots: readonly Slot[]): Check {
  return (v, where) => {
    if (!isObject(v)) return; // not an object: the conversion says what is wrong
    for (const s of slots) {
      const x = fieldValue(v, s.field);
      if (x === undefined || x === null) {
        if (s.required) throw bindError(`${where}${s.suffix} is missing`);
        continue;
      }
      s.inner?.(x, `${where}${s.suffix}`);
    }
  };
}

class Compiler {
  private readonly classes = new Map<object, Check | null | "pending">();

  /** What to check inside a value of type `t` (nested classes' required fields), if anything. */
  inner(t: TypeDesc, type: protobuf.Type | undefined): Check | undefined {
    if (t.kind === "array" && t.element.kind === "class") {
      const el = this.inner(t.element, type);
      if (!el) return undefined;
      return (v, w) => {
        if (!Array.isArray(v)) return;
        for (let i = 0; i < v.length; i++) if (v[i] !== null) el(v[i], `${w}[${i}]`);
      };
    }
    if (t.kind === "map" && t.value.kind === "class") {
      const val = this.inner(t.value, type);
      if (!val) return undefined;
      return (v, w) => {
        if (!isObject(v)) return;
        for (const [k, x] of Object.entries(v)) if (x !== null) val(x, `${w}.${k}`);
      };
    }
    if (t.kind !== "class" || !type) return undefined;
    return this.klass(t, type);
  }

  klass(t: Extract<TypeDesc, { kind: "class" }>, type: protobuf.Type): Check | undefined {
    const hit = this.classes.get(t.ctor);
    if (hit === "pending") return (v, w) => (this.classes.get(t.ctor) as Check | null)?.(v, w);
    if (hit !== undefined) return hit ?? undefined;
    this.classes.set(t.ctor, "pending");
    const slots: Slot[] = [];
    for (const f of t.fields) {
      const field = type.fields[fieldName(f.name)];
      if (!field) continue;
      slots.push(this.slot(field, `.${f.name}`, f.type, !f.optional));
    }
    const check = slots.some((s) => s.required || s.inner) ? checkSlots(slots) : undefined;
    this.classes.set(t.ctor, check ?? null);
    return check;
  }

  slot(field: protobuf.Field, suffix: string, t: TypeDesc, required: boolean): Slot {
    const repeated = t.kind === "array" || t.kind === "map";
    const type = field.resolvedType && "fields" in field.resolvedType ? (field.resolvedType as protobuf.Type) : undefined;
    return { field, suffix, required: required && !repeated, inner: this.inner(t, type) };
  }
}

/**
 * The presence check of a method's ProtoJSON request message (`req`, the derived request type),
 * or undefined when nothing is required.
 */
export function jsonPresence(md: MethodDescriptor, dm: DerivedMethod, req: protobuf.Type): ((v: unknown) => void) | undefined {
  req.resolveAll();
  const c = new Compiler();
  if (dm.requestShape === "class") {
    const t = md.params[0]?.type;
    const check = t?.kind === "class" ? c.klass(t, req) : undefined;
    const label = paramLabel(md.params[0], 0);
    return check && ((v) => check(v, label));
  }
  if (dm.requestShape !== "params") return undefined;
  const slots: Slot[] = [];
  const labels: string[] = [];
  md.params.forEach((p, i) => {
    const field = req.fields[dm.paramFields[i]];
    if (!field) return;
    slots.push(c.slot(field, "", p.type, !p.optional));
    labels.push(paramLabel(p, i));
  });
  if (!slots.some((s) => s.required || s.inner)) return undefined;
  // Each parameter is labelled on its own (`parameter #2 (width)`), so one check per slot.
  const checks = slots.map((s) => checkSlots([s]));
  return (v) => {
    if (!isObject(v)) return;
    for (let i = 0; i < checks.length; i++) checks[i](v, labels[i]);
  };
}

/** The ProtoJSON of a plain scalar's default value, which ProtoJSON writers leave out. */
function defaultJson(f: protobuf.Field): unknown {
  switch (f.type) {
    case "bool":
      return false;
    case "string":
    case "bytes":
      return "";
    case "int64":
    case "uint64":
    case "sint64":
    case "fixed64":
    case "sfixed64":
      return "0";
    default:
      return 0;
  }
}

/** Puts back the required plain scalars a ProtoJSON writer left out because they held the default. */
type Fill = (json: Record<string, unknown>, value: unknown) => void;

function fillClass(t: Extract<TypeDesc, { kind: "class" }>, type: protobuf.Type, seen: Map<object, Fill | null>): Fill | undefined {
  if (seen.has(t.ctor)) return seen.get(t.ctor) ?? undefined;
  seen.set(t.ctor, null);
  const parts: Fill[] = [];
  for (const f of t.fields) {
    const field = type.fields[fieldName(f.name)];
    if (!field) continue;
    const key = field.jsonName ?? field.name;
    if (!f.optional && !field.resolvedType && !field.repeated && !field.map) {
      parts.push((json, v) => {
        const x = (v as Record<string, unknown>)[f.name];
        if (x !== undefined && x !== null && json[key] === undefined) json[key] = defaultJson(field);
      });
    } else if (f.type.kind === "class" && field.resolvedType && "fields" in field.resolvedType) {
      const inner = fillClass(f.type, field.resolvedType as protobuf.Type, seen);
      if (inner) {
        parts.push((json, v) => {
          const x = (v as Record<string, unknown>)[f.name];
          const j = json[key];
          if (x !== undefined && x !== null && isObject(j)) inner(j, x);
        });
      }
    }
  }
  const fill: Fill | undefined =
    parts.length === 0
      ? undefined
      : (json, v) => {
          for (const p of parts) p(json, v);
        };
  seen.set(t.ctor, fill ?? null);
  return fill;
}

/**
 * Client: the ProtoJSON of a request with every required plain scalar written, even when it
 * holds its default (protobuf's JSON writers leave those out, and the server reads a required
 * parameter or field that is absent from ProtoJSON as missing). Undefined when nothing is needed.
 */
export function jsonDefaults(md: MethodDescriptor, dm: DerivedMethod, req: protobuf.Type): ((json: unknown, args: readonly unknown[]) => void) | undefined {
  req.resolveAll();
  const seen = new Map<object, Fill | null>();
  if (dm.requestShape === "class") {
    const t = md.params[0]?.type;
    const fill = t?.kind === "class" ? fillClass(t, req, seen) : undefined;
    return fill && ((json, args) => isObject(json) && args[0] != null && fill(json, args[0]));
  }
  if (dm.requestShape !== "params") return undefined;
  const wrapper: Extract<TypeDesc, { kind: "class" }> = {
    kind: "class",
    ctor: class {} as new () => unknown,
    fields: md.params.map((p, i) => ({ name: dm.paramFields[i], type: p.type, optional: p.optional, tag: p.tag, constraints: undefined })),
  };
  const fill = fillClass(wrapper, req, seen);
  if (!fill) return undefined;
  return (json, args) => {
    if (!isObject(json)) return;
    const byField: Record<string, unknown> = {};
    dm.paramFields.forEach((f, i) => {
      byField[f] = args[i];
    });
    fill(json, byField);
  };
}
