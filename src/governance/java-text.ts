/**
 * Java's string rules where Dubbo's routers depend on them, so a rule reads the same here as in
 * a Java consumer: `String.trim`, `String.split` (trailing empty parts dropped), `Integer.parseInt`,
 * `Boolean.parseBoolean`, `String.valueOf`.
 */

/** Java's `String.trim()`: strips characters <= U+0020 at both ends. */
export function javaTrim(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && s.charCodeAt(a) <= 0x20) a++;
  while (b > a && s.charCodeAt(b - 1) <= 0x20) b--;
  return s.slice(a, b);
}

/** Dubbo's `StringUtils.isBlank`: null, empty or only whitespace. */
export function isBlank(s: string | null | undefined): boolean {
  return s === null || s === undefined || javaTrim(s) === "";
}

/** Java's `s.split(literal)` for a one-character separator: trailing empty parts are dropped. */
export function javaSplit(s: string, sep: string): string[] {
  const parts = s.split(sep);
  while (parts.length > 0 && parts[parts.length - 1] === "") parts.pop();
  return parts;
}

/** Java's `Integer.parseInt`: optional sign, decimal digits, 32-bit range; anything else throws. */
export function javaParseInt(s: string): number {
  if (!/^[+-]?\d+$/.test(s)) throw new Error(`For input string: "${s}"`);
  const n = Number(s);
  if (n > 2147483647 || n < -2147483648) throw new Error(`For input string: "${s}" (out of int range)`);
  return n;
}

/** Dubbo's `StringUtils.parseInteger`: digits only → `Integer.parseInt` (which may throw), anything else → 0. */
export function dubboParseInteger(s: string): number {
  return /^\d+$/.test(s) ? javaParseInt(s) : 0;
}

/** Java's `Boolean.parseBoolean(String.valueOf(v))`: true only for "true", any case. */
export function javaBoolean(v: unknown): boolean {
  return String(v).toLowerCase() === "true";
}

/**
 * `String.valueOf(x)` of a value as a Java consumer would see it: null → "null", integers
 * without a fraction, strings as they are, lists and maps as Java's `toString` prints them
 * (`[a, b]`, `{k=v}`).
 */
export function javaString(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "string") return v;
  if (typeof v === "number") return Number.isInteger(v) && Math.abs(v) < 1e21 ? String(v) : javaDouble(v);
  if (typeof v === "bigint" || typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `[${v.map(javaString).join(", ")}]`;
  if (v instanceof Date) return v.toISOString();
  if (typeof v === "object") {
    return `{${Object.entries(v as Record<string, unknown>).map(([k, x]) => `${k}=${javaString(x)}`).join(", ")}}`;
  }
  return String(v);
}

function javaDouble(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return v > 0 ? "Infinity" : "-Infinity";
  return String(v);
}

/** Java's `compareToIgnoreCase` sign, by UTF-16 code units of the lower-cased texts. */
export function compareIgnoreCase(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}
