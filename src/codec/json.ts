import { decodeError } from "./bind-error.js";

/** Keys that must never reach an object's prototype chain. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

function dropForbidden(key: string, value: unknown): unknown {
  return FORBIDDEN_KEYS.has(key) ? undefined : value;
}

/**
 * Parses JSON text. `__proto__`, `constructor` and `prototype` members are dropped; the reviver
 * that does it only runs when the text mentions one of them, so ordinary bodies parse at full speed.
 */
export function parseJson(text: string): unknown {
  try {
    if (text.includes("__proto__") || text.includes("constructor") || text.includes("prototype")) {
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
    if (raw instanceof Uint8Array) return Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString("base64");
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
