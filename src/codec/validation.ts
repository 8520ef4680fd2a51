// Owns `MAX_VIOLATIONS`, `bindAll`, `compileValidator`, `validatedStream`. How many violations one
// call's error lists (in its BadRequest details). Must not change: limits are checked before memory
// is spent; bad input is a 4xx naming the problem.
import { BindFailure, paramLabel } from "./binder.js";
import { encodeBadRequest, type FieldViolation } from "../protocol/bad-request.js";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import { cutText } from "../protocol/wire-text.js";
import { checksSomething } from "../service/constraint-comment.js";
import type { Constraints, StringFormat } from "../service/constraints.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { FieldDesc, TypeDesc } from "../service/type-desc.js";

/**
 * Validation constraints compiled once per method, at registration: every constraint becomes a
 * small closure (a precompiled RegExp, a number compared), and a method whose parameters carry
 * none gets no validator at all, so its calls cost what they cost without this module.
 */

/**
 * How many violations one call's error lists (in its BadRequest details); past it they are only
 * counted ("and N more"), so a body of a million bad elements costs a counter, not a million
 * entries in the answer.
 */
export const MAX_VIOLATIONS = 100;
/** The longest field path and description of a listed violation, in characters. */
const MAX_FIELD_CHARS = 200;
const MAX_DESCRIPTION_CHARS = 300;
/** The message names violations up to this many UTF-8 bytes, then says how many more there are. */
const MESSAGE_BUDGET_BYTES = 900;

/** One violation found: the parameter, the path below it (`.tags[2]`), the description. */
interface Found {
  readonly param: number;
  readonly path: string;
  readonly description: string;
}

/**
 * The state of one call's validation: the parameter and the path below it being checked (a stack
 * of steps: `.field`, `.key`, an element's index), the violations found (the first
 * {@link MAX_VIOLATIONS} kept, all counted). A path's text is built only for a violation kept,
 * so valid values, however many, cost no string.
 */
class Violations {
  readonly list: Found[] = [];
  count = 0;
  param = 0;
  readonly steps: (string | number)[] = [];

  add(description: string): void {
    if (this.count++ < MAX_VIOLATIONS) this.list.push({ param: this.param, path: this.path(), description });
  }

  private path(): string {
    let s = "";
    for (const x of this.steps) s += typeof x === "number" ? `[${x}]` : x;
    return s;
  }

  clear(): void {
    this.list.length = 0;
    this.count = 0;
    this.steps.length = 0;
  }
}

/** Checks one value (never undefined or null) at the path `out` holds, adding what it finds. */
type Check = (v: unknown, out: Violations) => void;

/** A method's validator: throws the `invalid_argument` error listing every violation. */
export type Validator = (args: readonly unknown[]) => void;

/** The WHATWG HTML "valid e-mail address" rule. */
const EMAIL = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;
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
    checks.push((v, out) => {
      if (!(value(v) >= min)) out.add(d);
    });
  }
  if (c.max !== undefined) {
    const max = bound(c.max, kind);
    const d = kind === "date" ? `must be at or before ${shown(c.max)}` : `must be at most ${shown(c.max)}`;
    checks.push((v, out) => {
      if (!(value(v) <= max)) out.add(d);
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
    checks.push((v, out) => {
      if (len(v) < min) out.add(d);
    });
  }
  if (max !== undefined) {
    const d = `must ${verb} at most ${max} ${unit}${long}`;
    checks.push((v, out) => {
      if (len(v) > max) out.add(d);
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
    checks.push((v, out) => {
      if (!re.test(v as string)) out.add(d);
    });
  }
  if (c.enum !== undefined) {
    const allowed = new Set<unknown>(c.enum);
    const d = `must be one of ${c.enum.map(showValue).join(", ")}`;
    checks.push((v, out) => {
      if (!allowed.has(v)) out.add(d);
    });
  }
  if (c.format !== undefined) {
    const [test, d] = FORMAT_TESTS[c.format];
    checks.push((v, out) => {
      if (!test(v as string)) out.add(d);
    });
  }
  return checks;
}

/** One check running several, or the only one, or undefined for none. */
function all(checks: readonly Check[]): Check | undefined {
  if (checks.length === 0) return undefined;
  if (checks.length === 1) return checks[0];
  return (v, out) => {
    for (let i = 0; i < checks.length; i++) checks[i](v, out);
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

  /**
   * An array: its length, then each element, unless it has more than `maxItems` (that is one
   * violation; its elements are not checked).
   */
  private array(element: TypeDesc, c: Constraints | undefined): Check | undefined {
    const max = c?.maxItems ?? c?.maxLength ?? Number.POSITIVE_INFINITY;
    const checks = c ? lengthChecks(c.minItems ?? c.minLength, c.maxItems ?? c.maxLength, "array") : [];
    const el = this.value(element, c && { ...c, minLength: undefined, maxLength: undefined, minItems: undefined, maxItems: undefined });
    if (el) {
      checks.push((v, out) => {
        const a = v as unknown[];
        if (a.length > max) return;
        const steps = out.steps;
        const at = steps.push(0) - 1;
        for (let i = 0; i < a.length; i++) {
          steps[at] = i;
          if (a[i] !== undefined && a[i] !== null) el(a[i], out);
        }
        steps.pop();
      });
    }
    return all(checks);
  }

  /** A map: its size, then each value, unless it has more than `maxItems` entries (likewise). */
  private map(value: TypeDesc, c: Constraints | undefined): Check | undefined {
    const max = c?.maxItems ?? Number.POSITIVE_INFINITY;
    const checks = c ? lengthChecks(c.minItems, c.maxItems, "map") : [];
    const el = this.value(value, undefined);
    if (el) {
      checks.push((v, out) => {
        const entries = v instanceof Map ? [...v] : Object.entries(v as object);
        if (entries.length > max) return;
        const steps = out.steps;
        const at = steps.push("") - 1;
        for (const [k, x] of entries) {
          if (x === undefined || x === null) continue;
          steps[at] = `.${cutText(String(k))}`;
          el(x, out);
        }
        steps.pop();
      });
    }
    return all(checks);
  }

  private klass(t: Extract<TypeDesc, { kind: "class" }>): Check | undefined {
    const hit = this.classes.get(t.ctor);
    if (hit === "pending") return (v, out) => (this.classes.get(t.ctor) as Check | null)?.(v, out);
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
    return (v, out) => {
      const x = (v as Record<string, unknown>)[name];
      if (x === undefined || x === null) return;
      out.steps.push(suffix);
      check(x, out);
      out.steps.pop();
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
  return (v, out) => {
    const empty = v instanceof Map ? v.size === 0 : Array.isArray(v) ? v.length === 0 : Object.keys(v as object).length === 0;
    if (!empty) check(v, out);
  };
}

function opt<T>(x: T | undefined): T[] {
  return x === undefined ? [] : [x];
}

/** One entry of an invalid_argument error: its BadRequest field path, its line in the message, its description. */
interface Listed {
  readonly field: string;
  readonly line: string;
  readonly description: string;
}

/**
 * The error every protocol answers a failed validation with: the message names the violations
 * in order while it stays under {@link MESSAGE_BUDGET_BYTES} (the first one always, cut if need
 * be), then "; and N more violations"; the BadRequest details list the first {@link MAX_VIOLATIONS}, field
 * paths and descriptions cut to a bound. `count` is how many there are (listed or not); `more`
 * adds to the end of the message (binding stopped before it found them all).
 */
function invalidArgument(listed: readonly Listed[], count: number, more = ""): RpcError {
  const violations: FieldViolation[] = [];
  const lines: string[] = [];
  let bytes = 0;
  for (const f of listed.slice(0, MAX_VIOLATIONS)) {
    violations.push({ field: cutText(f.field, MAX_FIELD_CHARS), description: cutText(f.description, MAX_DESCRIPTION_CHARS) });
    if (bytes > MESSAGE_BUDGET_BYTES) continue;
    const n = Buffer.byteLength(f.line) + 2;
    if (lines.length > 0 && bytes + n > MESSAGE_BUDGET_BYTES) bytes = MESSAGE_BUDGET_BYTES + 1;
    else {
      lines.push(lines.length === 0 ? cutText(f.line, MESSAGE_BUDGET_BYTES / 3) : f.line);
      bytes += n;
    }
  }
  const rest = count - lines.length;
  const tail = rest > 0 ? `; and ${rest} more violation${rest === 1 ? "" : "s"}` : "";
  return new RpcError(Code.InvalidArgument, `${lines.join("; ")}${tail}${more}`, { legacyStatus: 40, details: [encodeBadRequest(violations)] });
}

function listedOf(md: MethodDescriptor, found: Violations): Listed[] {
  return found.list.map((f) => {
    const p = md.params[f.param];
    return { field: `${p.name ?? `arg${f.param + 1}`}${f.path}`, line: `${paramLabel(p, f.param)}${f.path} ${f.description}`, description: f.description };
  });
}

function validationError(md: MethodDescriptor, found: Violations): RpcError {
  return invalidArgument(listedOf(md, found), found.count);
}

/** A binder's `parameter #1 (user).address` as a BadRequest field path: `user.address` (`arg1` when unnamed). */
function fieldOf(where: string): string {
  const m = /^parameter #(\d+)(?: \(([^)]*)\))?/.exec(where);
  return m ? `${m[2] ?? `arg${m[1]}`}${where.slice(m[0].length)}` : where;
}

const checksOf = new WeakMap<MethodDescriptor, Checks | null>();

/** Runs a collecting binder (JSON, form, multipart): its arguments, or the one error listing every problem and violation. */
export function bindAll(md: MethodDescriptor, bind: () => unknown[]): unknown[] {
  try {
    return bind();
  } catch (e) {
    throw e instanceof BindFailure ? bindFailureError(md, e) : e;
  }
}

/**
 * The one invalid_argument error of a JSON binding that found problems: every missing field and
 * bad value the binder found, then every constraint the arguments it could bind break (the same
 * checks as {@link compileValidator}), listed and bounded as a validation error is. The message
 * of a lone binder problem is the binder's own.
 */
function bindFailureError(md: MethodDescriptor, failure: BindFailure): RpcError {
  const listed: Listed[] = failure.problems.map((p) => ({
    field: fieldOf(p.where),
    line: p.where ? `${p.where} ${p.description}` : p.description,
    description: p.description,
  }));
  let count = listed.length;
  if (failure.partial) {
    let checks = checksOf.get(md);
    if (checks === undefined) checksOf.set(md, (checks = compileChecks(md) ?? null));
    if (checks) {
      const found = new Violations();
      runChecks(checks, failure.partial, found);
      listed.push(...listedOf(md, found));
      count += found.count;
    }
  }
  const err = invalidArgument(listed, count, failure.stopped ? `; binding stopped after ${failure.problems.length} problems` : "");
  if (count !== 1 || listed.length !== 1) return err;
  // A lone problem keeps the binder's whole message (the first line of a list is cut shorter);
  // one that names no field (the body's shape, a number over the digit limit) carries no details.
  const details = failure.problems.length === 1 && failure.problems[0].where === "" ? [] : err.details;
  return new RpcError(Code.InvalidArgument, failure.message, { legacyStatus: 40, details });
}

/**
 * The validator of a method's bound arguments, or undefined when no parameter (and no field of a
 * class parameter, at any depth) carries a constraint. Absent optional values are not checked;
 * presence itself is the binders' business (every protocol's binder refuses a missing required
 * argument or field).
 */
export function compileValidator(md: MethodDescriptor): Validator | undefined {
  const params = compileChecks(md);
  if (!params) return undefined;
  // Validators run synchronously, one at a time: one scratch list per method, emptied per call.
  const found = new Violations();
  return (args) => {
    if (found.count !== 0 || found.steps.length !== 0) found.clear(); // a check that threw on an unexpected value must not leak into the next call
    runChecks(params, args, found);
    if (found.count > 0) {
      const err = validationError(md, found);
      found.clear();
      throw err;
    }
  };
}

/** Each parameter's check (undefined: none); undefined when no parameter has one. */
type Checks = readonly (Check | undefined)[];

function compileChecks(md: MethodDescriptor): Checks | undefined {
  if (md.requestType) return undefined;
  const compiler = new Compiler();
  const params = md.params.map((p) => optionalList(p.type, p.optional, compiler.value(p.type, p.constraints)));
  return params.every((c) => c === undefined) ? undefined : params;
}

/** Runs each parameter's check on its argument (absent ones skipped). */
function runChecks(params: Checks, args: readonly unknown[], found: Violations): void {
  for (let i = 0; i < params.length; i++) {
    const check = params[i];
    const v = args[i];
    if (check === undefined || v === undefined || v === null) continue;
    found.param = i;
    check(v, found);
  }
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
