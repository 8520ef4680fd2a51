/**
 * The part of a `TypeDesc` (type-desc.ts, which imports this module) the checks read: its kind,
 * an array's element type, a class's constructor.
 */
interface TypeDesc {
  readonly kind: string;
  readonly element?: TypeDesc;
  readonly ctor?: { readonly name: string };
}

/** The string formats `format` checks. */
export type StringFormat = "email" | "uuid" | "uri" | "date-time";

/**
 * Validation constraints of a parameter (`@Param({...})`) or a field (`@Field({...})`), checked
 * after binding and before the handler, identically on every protocol; a violation is an
 * `invalid_argument` error listing every violation with its path and carrying a
 * `google.rpc.BadRequest` detail.
 *
 * On an array, `min`, `max`, `pattern`, `enum` and `format` apply to each element (`tags[2]`),
 * while `minLength`/`maxLength` and `minItems`/`maxItems` bound the number of elements.
 */
export interface Constraints {
  /** Smallest allowed value (inclusive): a number, a bigint, or for dates a `Date`, ISO text or epoch ms. */
  readonly min?: number | bigint | Date | string;
  /** Largest allowed value (inclusive), same kinds as `min`. */
  readonly max?: number | bigint | Date | string;
  /** Shortest allowed length: characters (Unicode code points) of a string, bytes of a byte array, elements of an array. */
  readonly minLength?: number;
  /** Longest allowed length, measured as `minLength` is. */
  readonly maxLength?: number;
  /** A regular expression a string must match (somewhere, unless anchored with `^…$`). */
  readonly pattern?: string | RegExp;
  /** The allowed values (strings, numbers or bigints, compared with `===`). */
  readonly enum?: readonly (string | number | bigint)[];
  /** A string format: `email`, `uuid`, `uri` (absolute, with a scheme) or `date-time` (RFC 3339). */
  readonly format?: StringFormat;
  /** Fewest elements of an array (or entries of a map). */
  readonly minItems?: number;
  /** Most elements of an array (or entries of a map). */
  readonly maxItems?: number;
  /** Free text for documentation (exported .proto comments, OpenAPI); checks nothing. */
  readonly description?: string;
}

/** The option names that are constraints (recognised in `@Param({...})` and `@Field({...})`). */
export const CONSTRAINT_KEYS: readonly (keyof Constraints)[] = [
  "min",
  "max",
  "minLength",
  "maxLength",
  "pattern",
  "enum",
  "format",
  "minItems",
  "maxItems",
  "description",
];

const FORMATS: readonly string[] = ["email", "uuid", "uri", "date-time"];

/** The constraints among a decorator's options, or undefined when there are none. */
export function pickConstraints(options: object | undefined): Constraints | undefined {
  if (!options) return undefined;
  let out: Record<string, unknown> | undefined;
  for (const k of CONSTRAINT_KEYS) {
    const v = (options as Record<string, unknown>)[k];
    if (v !== undefined) (out ??= {})[k] = v;
  }
  return out as Constraints | undefined;
}

/** The type scalar constraints apply to: an array's element, otherwise the type itself. */
function scalarTarget(t: TypeDesc): TypeDesc {
  return t.kind === "array" && t.element ? t.element : t;
}

function wholeNumber(v: unknown): boolean {
  return typeof v === "number" && Number.isInteger(v) && v >= 0;
}

/** A bound of a number, bigint or date, checked against the type it constrains. */
function checkBound(name: string, v: unknown, t: TypeDesc, where: string): void {
  const ok =
    t.kind === "number"
      ? typeof v === "number" && Number.isFinite(v)
      : t.kind === "bigint"
        ? typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v))
        : t.kind === "date"
          ? (v instanceof Date || typeof v === "string" || typeof v === "number") && !Number.isNaN(new Date(v as string).getTime())
          : false;
  if (ok) return;
  if (t.kind !== "number" && t.kind !== "bigint" && t.kind !== "date") {
    throw new TypeError(`${where}: ${name} applies to numbers, bigints and dates, not to a ${describeKind(t)}; use minLength/maxLength for lengths`);
  }
  throw new TypeError(
    `${where}: ${name} of a ${t.kind} must be ${t.kind === "date" ? "a Date, ISO 8601 text or epoch milliseconds" : `a finite ${t.kind === "bigint" ? "integer" : "number"}`}, got ${String(v)}`,
  );
}

function describeKind(t: TypeDesc): string {
  return t.kind === "class" ? `class ${t.ctor?.name}` : t.kind;
}

function checkLengths(c: Constraints, t: TypeDesc, where: string): void {
  for (const k of ["minLength", "maxLength", "minItems", "maxItems"] as const) {
    const v = c[k];
    if (v === undefined) continue;
    if (!wholeNumber(v)) throw new TypeError(`${where}: ${k} must be a whole number >= 0, got ${String(v)}`);
    const items = k === "minItems" || k === "maxItems";
    const fits = items ? t.kind === "array" || t.kind === "map" : ["string", "bytes", "file", "array"].includes(t.kind);
    if (!fits) {
      throw new TypeError(`${where}: ${k} applies to ${items ? "arrays and maps" : "strings, byte arrays and arrays"}, not to a ${describeKind(t)}`);
    }
  }
  if (c.minLength !== undefined && c.maxLength !== undefined && c.minLength > c.maxLength) {
    throw new TypeError(`${where}: minLength ${c.minLength} is greater than maxLength ${c.maxLength}`);
  }
  if (c.minItems !== undefined && c.maxItems !== undefined && c.minItems > c.maxItems) {
    throw new TypeError(`${where}: minItems ${c.minItems} is greater than maxItems ${c.maxItems}`);
  }
}

function checkStringRules(c: Constraints, s: TypeDesc, where: string): void {
  if (c.pattern !== undefined) {
    if (s.kind !== "string") throw new TypeError(`${where}: pattern applies to strings (or arrays of strings), not to a ${describeKind(s)}`);
    if (typeof c.pattern === "string") {
      try {
        new RegExp(c.pattern, "u");
      } catch (e) {
        throw new TypeError(`${where}: pattern ${JSON.stringify(c.pattern)} is not a valid regular expression: ${(e as Error).message}`);
      }
    } else if (!(c.pattern instanceof RegExp)) {
      throw new TypeError(`${where}: pattern must be a string or a RegExp`);
    }
  }
  if (c.format !== undefined) {
    if (!FORMATS.includes(c.format)) throw new TypeError(`${where}: format must be one of ${FORMATS.join(", ")}, got ${JSON.stringify(c.format)}`);
    if (s.kind !== "string") throw new TypeError(`${where}: format applies to strings (or arrays of strings), not to a ${describeKind(s)}`);
  }
}

function checkEnum(c: Constraints, s: TypeDesc, where: string): void {
  if (c.enum === undefined) return;
  if (!Array.isArray(c.enum) || c.enum.length === 0) throw new TypeError(`${where}: enum must be a non-empty array of the allowed values`);
  const want = s.kind === "string" ? "string" : s.kind === "number" ? "number" : s.kind === "bigint" ? "bigint" : undefined;
  if (want === undefined) throw new TypeError(`${where}: enum applies to strings, numbers and bigints (or arrays of them), not to a ${describeKind(s)}`);
  const bad = c.enum.find((v) => typeof v !== want);
  if (bad !== undefined) throw new TypeError(`${where}: enum of a ${want} lists ${typeof bad} ${String(bad)}; list ${want} values only`);
}

/**
 * Checks constraints against the type they constrain, at registration: a constraint that cannot
 * apply (`pattern` on a number), a bad bound or an invalid pattern throws a TypeError naming
 * `where`. Returns the constraints (undefined when there are none).
 */
export function checkConstraints(c: Constraints | undefined, t: TypeDesc, where: string): Constraints | undefined {
  if (c === undefined) return undefined;
  if (c.description !== undefined && typeof c.description !== "string") throw new TypeError(`${where}: description must be a string`);
  const s = scalarTarget(t);
  if (c.min !== undefined) checkBound("min", c.min, s, where);
  if (c.max !== undefined) checkBound("max", c.max, s, where);
  checkLengths(c, t, where);
  checkStringRules(c, s, where);
  checkEnum(c, s, where);
  return c;
}
