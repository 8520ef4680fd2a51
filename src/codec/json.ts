// Owns `FORBIDDEN_KEYS`, `parseJson`, `stringifyJson`. Keys that must never reach an object's
// prototype chain. Must not change: limits are checked before memory is spent; bad input is a 4xx
// naming the problem.
import { base64Encode } from "../protocol/bytes.js";
import { decodeError } from "./bind-error.js";

/** Keys that must never reach an object's prototype chain. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

function dropForbidden(key: string, value: unknown): unknown {
  return FORBIDDEN_KEYS.has(key) ? undefined : value;
}

/** Deepest JSON nesting accepted (protobuf's own recursion limit is 100). */
const MAX_JSON_DEPTH = 100;

/**
 * True when the text nests arrays/objects deeper than `max`. One pass over the characters,
 * skipping strings; text too short to nest that deep is not scanned at all.
 */
function tooDeep(text: string, max: number): boolean {
  if (text.length <= max * 2) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // skip a string, honouring backslash escapes
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

/**
 * A `\uXXXX` escape of `_` or a lower-case letter: a key written with one (`"\u005f\u005fproto__"`)
 * may decode to a forbidden key without its text containing it.
 */
const ESCAPED_NAME_CHAR = /\\u00[5-7]/i;

/**
 * Parses JSON text. `__proto__`, `constructor` and `prototype` members are dropped, judged by the
 * decoded key (escapes included); the reviver that does it only runs when the text mentions one
 * of them or escapes a character they are written with, so ordinary bodies parse at full speed.
 */
export function parseJson(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  if (tooDeep(text, maxDepth)) throw decodeError(`invalid JSON: nested deeper than ${maxDepth} levels`);
  try {
    if (text.includes("__proto__") || text.includes("constructor") || text.includes("prototype") || ESCAPED_NAME_CHAR.test(text)) {
      return JSON.parse(text, dropForbidden);
    }
    return JSON.parse(text);
  } catch (e) {
    throw decodeError(`invalid JSON: ${(e as Error).message}`, e);
  }
}

function replacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  // `value` has already been through toJSON (a Buffer arrives as {type,data}); look at the original.
  const raw = this[key];
  if (typeof raw === "object" && raw !== null) {
    if (raw instanceof Uint8Array) return base64Encode(raw);
    if (raw instanceof Map) return Object.fromEntries(raw);
    if (raw instanceof Set) return [...raw];
    return value;
  }
  if (typeof raw === "bigint") return raw.toString();
  return value;
}

/**
 * Serializes a handler's result: bytes as base64, bigints as strings, maps as objects, dates as
 * ISO strings, `undefined` as `null`.
 */
export function stringifyJson(value: unknown): string {
  if (value === undefined) return "null";
  const t = typeof value;
  if (t === "string") return JSON.stringify(value);
  return JSON.stringify(value, replacer) ?? "null";
}
