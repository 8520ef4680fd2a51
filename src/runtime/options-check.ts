/**
 * The one option checker of createServer, createClient and the adapters: type, range, unit,
 * integer-ness and enums by rule, unknown keys of a group (with the nearest valid name) and
 * renamed options (naming the new one). Every error is a TypeError `<who>: <full.path> must be …, got …`.
 */
import { type Clock, systemClock } from "../transport/clock.js";
import { didYouMean, nearestNames } from "./nearest.js";

/** The longest timer Node keeps: a longer one fires after 1 ms (with a TimeoutOverflowWarning). */
export const MAX_TIMER_MS = 2_147_483_647;

/** What a value must be: a test, and the words that finish "`path` must be …". */
export interface Rule {
  readonly must: string;
  ok(v: unknown): boolean;
}

/** A value as the error shows it: strings quoted, the rest as `String` does. */
export function shown(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (v === null) return "null";
  if (typeof v === "object") return Array.isArray(v) ? "an array" : "an object";
  if (typeof v === "function") return "a function";
  return String(v);
}

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);

/** A duration: a whole number of milliseconds a Node timer keeps; `zero` says what 0 does. */
export function ms(zero = "0 switches it off"): Rule {
  return { must: `a whole number of milliseconds from 0 to ${MAX_TIMER_MS} (${zero})`, ok: (v) => isInt(v) && v >= 0 && v <= MAX_TIMER_MS };
}

/** A size: a whole number of bytes >= 0, or `Infinity` (no limit). */
export const bytes: Rule = { must: "a non-negative integer number of bytes (Infinity for no limit)", ok: (v) => v === Infinity || (isInt(v) && v >= 0) };

/** A count: a whole number from `min` (to `max`), `Infinity` allowed when `unbounded`. */
export function count(min = 0, max = Number.MAX_SAFE_INTEGER, unbounded = false): Rule {
  const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
  return {
    must: `a whole number ${range}${unbounded ? " (Infinity for no limit)" : ""}`,
    ok: (v) => (unbounded && v === Infinity) || (isInt(v) && v >= min && v <= max),
  };
}

/** A finite number in a range, in a unit (`bytes per second`). */
export function amount(unit: string, min = 0, max = Number.MAX_VALUE, note = ""): Rule {
  const range = max === Number.MAX_VALUE ? `>= ${min}` : `from ${min} to ${max}`;
  return { must: `a finite number of ${unit} ${range}${note}`, ok: (v) => typeof v === "number" && Number.isFinite(v) && v >= min && v <= max };
}

export const bool: Rule = { must: "true or false", ok: (v) => typeof v === "boolean" };

/** A non-empty string (no line breaks). */
export const text: Rule = { must: "a non-empty string", ok: (v) => typeof v === "string" && v.trim() !== "" && !/[\r\n]/.test(v) };

/** One of `values`. */
export function oneOf(values: readonly string[]): Rule {
  const listed = values.map((v) => `"${v}"`);
  return { must: `${listed.slice(0, -1).join(", ")} or ${listed[listed.length - 1]}`, ok: (v) => typeof v === "string" && values.includes(v) };
}

/** A {@link Clock}: an object whose `now()` gives epoch ms. */
const clockRule: Rule = {
  must: "an object with a now() method returning epoch milliseconds (e.g. { now: () => Date.now() })",
  ok: (v) => typeof v === "object" && v !== null && typeof (v as Partial<Clock>).now === "function",
};

/** The `clock` option of `who`, checked: the system clock when left out. */
export function checkedClock(who: string, v: Clock | undefined): Clock {
  return checked(who, "clock", v, clockRule, systemClock);
}

/** `v` when it is undefined (the default applies) or passes `rule`; else a TypeError naming `path`. */
export function check<T>(who: string, path: string, v: T | undefined, rule: Rule): T | undefined {
  if (v === undefined || rule.ok(v)) return v;
  throw new TypeError(`${who}: ${path} must be ${rule.must}, got ${shown(v)}`);
}

/** As {@link check}, with `fallback` for undefined. */
export function checked<T>(who: string, path: string, v: T | undefined, rule: Rule, fallback: T): T {
  return check(who, path, v, rule) ?? fallback;
}

/**
 * A group of options (`limits`, `registry`, `uploads`): undefined, or a plain object whose keys
 * are all `known`. An unknown key is a TypeError naming it and the nearest valid names; a key
 * in `renamed` names its new place instead.
 */
export function checkGroup<T extends object>(
  who: string,
  path: string,
  v: T | undefined,
  known: readonly string[],
  renamed: Readonly<Record<string, string>> = {},
): T | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new TypeError(`${who}: ${path} must be an object of options, got ${shown(v)}`);
  refuseUnknown(who, v, known, renamed, path);
  return v;
}

/**
 * Refuses a key of `options` that is not `known` (a typo, or an option of another version):
 * a renamed one names its new place, another the nearest valid names. Keys are `path.key`
 * inside a group, bare at the top level (`path` empty).
 */
export function refuseUnknown(who: string, options: object, known: readonly string[], renamed: Readonly<Record<string, string>> = {}, path = ""): void {
  for (const [key, value] of Object.entries(options)) {
    if (known.includes(key) || value === undefined) continue;
    const full = path === "" ? key : `${path}.${key}`;
    if (Object.hasOwn(renamed, key)) throw renamedError(who, full, renamed[key]);
    const hint = didYouMean(nearestNames(key, known)) || (path === "" ? "" : `; the options of ${path} are ${known.join(", ")}`);
    throw new TypeError(`${who}: ${full} is not an option${hint}`);
  }
}

/** Refuses the options of `given` that were renamed in 0.x, naming the new ones. */
export function refuseRenamed(who: string, given: object, renamed: Readonly<Record<string, string>>): void {
  for (const old of Object.keys(renamed)) {
    if (Object.hasOwn(given, old) && (given as Record<string, unknown>)[old] !== undefined) throw renamedError(who, old, renamed[old]);
  }
}

function renamedError(who: string, old: string, now: string): TypeError {
  return new TypeError(`${who}: \`${old}\` was renamed \`${now}\` in 0.x; see CHANGELOG.md`);
}
