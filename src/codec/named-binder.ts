// Owns `compileNamedBinder`. Compiles, once per method, how the named values of a form or multipart
// body become arguments (docs/binding.md): - a single `Map` / `Record` parameter receives every
// value, keyed by name. Must not change: limits are checked before memory is spent; bad input is a
// 4xx naming the problem.
import type { ParamDescriptor } from "../service/descriptors.js";
import type { TypeDesc } from "../service/type-desc.js";
import { bindError } from "./bind-error.js";
import { collect, collecting, missing, paramLabel } from "./binder.js";
import { FORBIDDEN_KEYS } from "./json.js";

/** One named value of a form (`key=value`) or a multipart body (a part). */
export interface NamedValue<V> {
  readonly name: string;
  readonly value: V;
}

/** Converts one raw value (form text, multipart part) to a type, or throws a 400 naming `where`. */
export type ValueConverter<V> = (value: V, where: string) => unknown;

/** Binds the named values of one body to a method's arguments, in order. */
export type NamedBinder<V> = (values: readonly NamedValue<V>[]) => unknown[];

interface Slot<V> {
  readonly name: string | undefined;
  /** Absent binds `undefined` instead of failing. */
  readonly optional: boolean;
  readonly label: string;
  /** Array parameters collect every value of their name; others take the first. */
  readonly many: boolean;
  readonly conv: ValueConverter<V>;
}

function mapBinder<V>(t: Extract<TypeDesc, { kind: "map" }>, convFor: (t: TypeDesc) => ValueConverter<V>, label: string) {
  const many = t.value.kind === "array";
  const conv = convFor(many ? (t.value as { element: TypeDesc }).element : t.value);
  return (values: readonly NamedValue<V>[]): unknown => {
    const out = new Map<string, unknown>();
    for (const { name, value } of values) {
      if (FORBIDDEN_KEYS.has(name)) continue;
      const x = conv(value, `${label}.${name}`);
      const prev = out.get(name);
      if (many) {
        if (prev) (prev as unknown[]).push(x);
        else out.set(name, [x]);
      } else if (prev === undefined) {
        out.set(name, x);
      }
    }
    return t.as === "map" ? out : Object.fromEntries(out);
  };
}

function beanBinder<V>(t: Extract<TypeDesc, { kind: "class" }>, convFor: (t: TypeDesc) => ValueConverter<V>, label: string) {
  const fields = t.fields.map((f) => ({ name: f.name, slot: slotOf(f.name, f.type, `${label}.${f.name}`, convFor, f.optional) }));
  return (values: readonly NamedValue<V>[]): unknown => {
    const out = Object.create(t.ctor.prototype) as Record<string, unknown>;
    for (const f of fields) {
      const mine = values.filter((v) => v.name === f.name);
      if (mine.length > 0) out[f.name] = take(f.slot, mine);
      else if (!f.slot.optional) missing(`${label}.${f.name}`, "is missing");
    }
    return out;
  };
}

function slotOf<V>(name: string | undefined, t: TypeDesc, label: string, convFor: (t: TypeDesc) => ValueConverter<V>, optional = false): Slot<V> {
  // `string[]` collects `tag=a&tag=b`; byte arrays are one value (one part), not a list.
  const many = t.kind === "array";
  const conv = convFor(many ? (t as { element: TypeDesc }).element : t);
  return { name, optional, label, many, conv };
}

/** The slot's value from its named values; a bad one is recorded (undefined) when problems are collected. */
function take<V>(slot: Slot<V>, values: readonly NamedValue<V>[]): unknown {
  try {
    if (slot.many) return values.map((v, i) => slot.conv(v.value, `${slot.label}[${i}]`));
    return slot.conv(values[0].value, slot.label);
  } catch (e) {
    collect(e);
    return undefined;
  }
}

/**
 * Compiles, once per method, how the named values of a form or multipart body become arguments
 * (docs/binding.md):
 * - a single `Map` / `Record` parameter receives every value, keyed by name;
 * - a single decorated-class parameter that is not named in the body is bound field by field;
 * - named parameters (`@Param("age")`) take the value(s) of their name;
 * - unnamed parameters take the remaining values in order.
 * `what` names a value in errors ("form field", "part"). Every missing parameter or field and
 * bad value is found before it fails: a `BindFailure` lists them all.
 */
export function compileNamedBinder<V>(params: readonly ParamDescriptor[], what: string, convFor: (t: TypeDesc) => ValueConverter<V>): NamedBinder<V> {
  const bind = namedBinder(params, what, convFor);
  return (values) => collecting(bind, values);
}

function namedBinder<V>(params: readonly ParamDescriptor[], what: string, convFor: (t: TypeDesc) => ValueConverter<V>): NamedBinder<V> {
  const n = params.length;
  if (n === 0) return () => [];
  if (n === 1) {
    const p = params[0];
    const label = paramLabel(p, 0);
    if (p.type.kind === "map") {
      const bind = mapBinder(p.type, convFor, label);
      return (values) => [bind(values)];
    }
    if (p.type.kind === "class" || p.type.kind === "any") {
      const whole =
        p.type.kind === "class" ? beanBinder(p.type, convFor, label) : mapBinder({ kind: "map", value: { kind: "any" }, as: "record" }, convFor, label);
      const single = slotOf(p.name, p.type, label, convFor);
      return (values) => {
        const mine = p.name === undefined ? [] : values.filter((v) => v.name === p.name);
        return [mine.length > 0 ? take(single, mine) : whole(values)];
      };
    }
  }
  const slots = params.map((p, i) => slotOf(p.name, p.type, paramLabel(p, i), convFor, p.optional));
  const named = new Set(params.flatMap((p) => (p.name === undefined ? [] : [p.name])));
  return (values) => {
    const out = new Array(n);
    const rest = values.filter((v) => !named.has(v.name));
    let next = 0;
    for (let i = 0; i < n; i++) {
      const s = slots[i];
      if (s.name !== undefined) {
        const mine = values.filter((v) => v.name === s.name);
        if (mine.length > 0) out[i] = take(s, mine);
        else if (!s.optional) missing(s.label, `is missing: no ${what} named "${s.name}"`);
      } else if (next < rest.length) {
        out[i] = take(s, [rest[next++]]);
      } else if (!s.optional) {
        throw bindError(`${s.label} is missing: the body has only ${rest.length} unnamed ${what}${rest.length === 1 ? "" : "s"}`);
      }
    }
    return out;
  };
}
