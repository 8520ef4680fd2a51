import { paramLabel } from "../codec/binder.js";
import { encodeBadRequest, type FieldViolation } from "../protocol/bad-request.js";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import { type Constraints, checksSomething, type StringFormat } from "../service/constraints.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { FieldDesc, TypeDesc } from "../service/type-desc.js";

/**
 * Validation constraints compiled once per method, at registration: every constraint becomes a
 * small closure (a precompiled RegExp, a number compared), and a method whose parameters carry
 * none gets no validator at all, so its calls cost what they cost without this module.
 */

/** One violation found: the parameter, the path below it (`.tags[2]`), the description. */
interface Found {
  readonly param: number;
  readonly path: string;
  readonly description: string;
}

/** Checks one value (never undefined or null) at `path` below parameter `param`, pushing what it finds. */
type Check = (v: unknown, param: number, path: string, out: Found[]) => void;

/** A method's validator: throws the `invalid_argument` error listing every violation. */
export type Validator = (args: readonly unknown[]) => void;

/** The WHATWG HTML "valid e-mail address" rule. */
const EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;
/** RFC 9562's text form, any version (nil and max included). */
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
/** An absolute URI (RFC 3986): a scheme, a colon, then no whitespace, control characters or `<>"{}|\^\``. */
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s\p{Cc}<>"{}|\\^`]*$/u;
/** RFC 3339 `date-time`, checked again with `Date` (month 13, day 32 fail). */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

const FORMAT_TESTS: Record<StringFormat, [(s: string) => boolean, string]> = {
  email: [(s) => EMAIL.test(s), "must be an email address"],
  uuid: [(s) => UUID.test(s), "must be a UUID"],
  uri: [(s) => URI.test(s), "must be an absolute URI (with a scheme)"],
  "date-time": [(s) => DATE_TIME.test(s) && !Number.isNaN(Date.parse(s)), "must be an RFC 3339 date-time"],
};

/** Length in Unicode code points; UTF-16 length when there is no surrogate. */
function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** The pattern as a RegExp without `g`/`y`, whose `lastIndex` would make `test` stateful. */
function compilePattern(p: string | RegExp): RegExp {
  if (typeof p === "string") return new RegExp(p, "u");
  return p.global || p.sticky ? new RegExp(p.source, p.flags.replace(/[gy]/g, "")) : p;
}

function showValue(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "bigint") return `${v}`;
  if (v instanceof Date) return v.toISOString();
  return String(v);
}

/** `min`/`max` as the comparable form of the type: a number, a bigint, or epoch milliseconds for dates. */
function bound(b: number | bigint | Date | string, kind: string): number | bigint {
  if (kind === "bigint") return BigInt(b as number | bigint);
  if (kind === "date") return new Date(b as string).getTime();
  return b as number;
}

function boundChecks(c: Constraints, kind: string): Check[] {
  const checks: Check[] = [];
  const value = kind === "date" ? (v: unknown) => (v as Date).getTime() : (v: unknown) => v as number | bigint;
  const shown = (b: number | bigint | Date | string) => (kind === "date" ? new Date(b as string).toISOString() : showValue(b));
  if (c.min !== undefined) {
    const min = bound(c.min, kind);
    const d = kind === "date" ? `must be at or after ${shown(c.min)}` : `must be at least ${shown(c.min)}`;
    checks.push((v, p, path, out) => {
      if (!(value(v) >= min)) out.push({ param: p, path, description: d });
    });
  }
  if (c.max !== undefined) {
    const max = bound(c.max, kind);
    const d = kind === "date" ? `must be at or before ${shown(c.max)}` : `must be at most ${shown(c.max)}`;
    checks.push((v, p, path, out) => {
      if (!(value(v) <= max)) out.push({ param: p, path, description: d });
    });
  }
  return checks;
}

/** How long a value is, and the unit the message names. */
function lengthOf(kind: string): [(v: unknown) => number, string] {
  if (kind === "string") return [(v) => codePoints(v as string), "characters"];
  if (kind === "array") return [(v) => (v as unknown[]).length, "elements"];
  if (kind === "map") return [(v) => (v instanceof Map ? v.size : Object.keys(v as object).length), "entries"];
  return [(v) => (v as Uint8Array).byteLength, "bytes"];
}

function lengthChecks(min: number | undefined, max: number | undefined, kind: string): Check[] {
  const checks: Check[] = [];
  const [len, unit] = lengthOf(kind);
  const verb = kind === "string" || kind === "bytes" || kind === "file" ? "be" : "have";
  const long = verb === "be" ? " long" : "";
  if (min !== undefined) {
    const d = `must ${verb} at least ${min} ${unit}${long}`;
    checks.push((v, p, path, out) => {
      if (len(v) < min) out.push({ param: p, path, description: d });
    });
  }
  if (max !== undefined) {
    const d = `must ${verb} at most ${max} ${unit}${long}`;
    checks.push((v, p, path, out) => {
      if (len(v) > max) out.push({ param: p, path, description: d });
    });
  }
  return checks;
}

/** The checks of `min`, `max`, `minLength`, `maxLength`, `pattern`, `enum`, `format` on one scalar. */
function scalarChecks(c: Constraints, t: TypeDesc): Check[] {
  const checks = boundChecks(c, t.kind);
  if (t.kind !== "array" && t.kind !== "map") checks.push(...lengthChecks(c.minLength, c.maxLength, t.kind));
  if (c.pattern !== undefined) {
    const re = compilePattern(c.pattern);
    const d = `must match ${re.source}`;
    checks.push((v, p, path, out) => {
      if (!re.test(v as string)) out.push({ param: p, path, description: d });
    });
  }
  if (c.enum !== undefined) {
    const allowed = new Set<unknown>(c.enum);
    const d = `must be one of ${c.enum.map(showValue).join(", ")}`;
    checks.push((v, p, path, out) => {
      if (!allowed.has(v)) out.push({ param: p, path, description: d });
    });
  }
  if (c.format !== undefined) {
    const [test, d] = FORMAT_TESTS[c.format];
    checks.push((v, p, path, out) => {
      if (!test(v as string)) out.push({ param: p, path, description: d });
    });
  }
  return checks;
}

/** One check running several, or the only one, or undefined for none. */
function all(checks: readonly Check[]): Check | undefined {
  if (checks.length === 0) return undefined;
  if (checks.length === 1) return checks[0];
  return (v, p, path, out) => {
    for (let i = 0; i < checks.length; i++) checks[i](v, p, path, out);
  };
}

/** Compiles checks per class once (self-referencing classes resolve through the cache). */
class Compiler {
  private readonly classes = new Map<object, Check | null | "pending">();

  /** The check of a value of type `t` carrying constraints `c`: undefined when nothing is checked. */
  value(t: TypeDesc, c: Constraints | undefined): Check | undefined {
    const own = checksSomething(c) ? c : undefined;
    switch (t.kind) {
      case "array":
        return this.array(t.element, own);
      case "map":
        return this.map(t.value, own);
      case "class":
        return all([...(own ? scalarChecks(own, t) : []), ...opt(this.klass(t))]);
      default:
        return own ? all(scalarChecks(own, t)) : undefined;
    }
  }

  private array(element: TypeDesc, c: Constraints | undefined): Check | undefined {
    const checks = c ? lengthChecks(c.minItems ?? c.minLength, c.maxItems ?? c.maxLength, "array") : [];
    const el = this.value(element, c && { ...c, minLength: undefined, maxLength: undefined, minItems: undefined, maxItems: undefined });
    if (el) {
      checks.push((v, p, path, out) => {
        const a = v as unknown[];
        for (let i = 0; i < a.length; i++) if (a[i] !== undefined && a[i] !== null) el(a[i], p, `${path}[${i}]`, out);
      });
    }
    return all(checks);
  }

  private map(value: TypeDesc, c: Constraints | undefined): Check | undefined {
    const checks = c ? lengthChecks(c.minItems, c.maxItems, "map") : [];
    const el = this.value(value, undefined);
    if (el) {
      checks.push((v, p, path, out) => {
        const entries = v instanceof Map ? [...v] : Object.entries(v as object);
        for (const [k, x] of entries) if (x !== undefined && x !== null) el(x, p, `${path}.${k}`, out);
      });
    }
    return all(checks);
  }

  private klass(t: Extract<TypeDesc, { kind: "class" }>): Check | undefined {
    const hit = this.classes.get(t.ctor);
    if (hit === "pending") return (v, p, path, out) => (this.classes.get(t.ctor) as Check | null)?.(v, p, path, out);
    if (hit !== undefined) return hit ?? undefined;
    this.classes.set(t.ctor, "pending");
    const checks = t.fields.map((f) => this.field(f)).filter((c): c is Check => c !== undefined);
    const check = all(checks);
    this.classes.set(t.ctor, check ?? null);
    return check;
  }

  private field(f: FieldDesc): Check | undefined {
    const check = optionalList(f.type, f.optional, this.value(f.type, f.constraints));
    if (!check) return undefined;
    const name = f.name;
    const suffix = `.${name}`;
    return (v, p, path, out) => {
      const x = (v as Record<string, unknown>)[name];
      if (x !== undefined && x !== null) check(x, p, path + suffix, out);
    };
  }
}

/**
 * An optional array or map that is empty counts as absent, so is not checked: protobuf gives
 * repeated and map fields no presence, and decodes a left-out one as empty, where JSON leaves
 * it out. Without this rule `minItems` would refuse on gRPC what it lets pass on JSON.
 */
function optionalList(t: TypeDesc, optional: boolean, check: Check | undefined): Check | undefined {
  if (!check || !optional || (t.kind !== "array" && t.kind !== "map")) return check;
  return (v, p, path, out) => {
    const empty = v instanceof Map ? v.size === 0 : Array.isArray(v) ? v.length === 0 : Object.keys(v as object).length === 0;
    if (!empty) check(v, p, path, out);
  };
}

function opt<T>(x: T | undefined): T[] {
  return x === undefined ? [] : [x];
}

/** The error every protocol answers a failed validation with. */
function validationError(md: MethodDescriptor, found: readonly Found[]): RpcError {
  const violations: FieldViolation[] = [];
  const lines: string[] = [];
  for (const f of found) {
    const p = md.params[f.param];
    lines.push(`${paramLabel(p, f.param)}${f.path} ${f.description}`);
    violations.push({ field: `${p.name ?? `arg${f.param + 1}`}${f.path}`, description: f.description });
  }
  return new RpcError(Code.InvalidArgument, lines.join("; "), { legacyStatus: 40, details: [encodeBadRequest(violations)] });
}

/**
 * The validator of a method's bound arguments, or undefined when no parameter (and no field of a
 * class parameter, at any depth) carries a constraint. Absent optional values are not checked;
 * presence itself is the binders' business (every protocol's binder refuses a missing required
 * argument or field).
 */
export function compileValidator(md: MethodDescriptor): Validator | undefined {
  if (md.requestType) return undefined;
  const compiler = new Compiler();
  const params = md.params.map((p) => optionalList(p.type, p.optional, compiler.value(p.type, p.constraints)));
  if (params.every((c) => c === undefined)) return undefined;
  // Validators run synchronously, one at a time: one scratch list per method, emptied per call.
  const found: Found[] = [];
  return (args) => {
    found.length = 0; // a check that threw on an unexpected value must not leak into the next call
    for (let i = 0; i < params.length; i++) {
      const check = params[i];
      const v = args[i];
      if (check !== undefined && v !== undefined && v !== null) check(v, i, "", found);
    }
    if (found.length > 0) {
      const list = found.splice(0);
      throw validationError(md, list);
    }
  };
}

/**
 * A client- or bidi-streaming method's request stream with every message validated as it is
 * read: the first invalid message ends the stream with the validation error, which the handler's
 * loop throws (and the call ends with, unless the handler catches it).
 */
export async function* validatedStream(source: AsyncIterable<unknown>, validate: Validator): AsyncGenerator<unknown> {
  for await (const m of source) {
    validate([m]);
    yield m;
  }
}
