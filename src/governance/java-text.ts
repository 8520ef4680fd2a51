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

/** Bounds on printing a call's argument for a condition (`arguments[N]`): nesting depth, characters. */
const MAX_DEPTH = 16;
const MAX_CHARS = 64 * 1024;

/**
 * `String.valueOf(x)` of a value as a Java consumer would see it: null → "null", integers
 * without a fraction, strings as they are, lists and maps as Java's `toString` prints them
 * (`[a, b]`, `{k=v}`). Bounded: deeper than 16 levels prints `…`, and the text stops at 64 Ki
 * characters (an argument built from a caller's input cannot make routing slow).
 */
export function javaString(v: unknown): string {
  if (typeof v === "string") return v;
  if (v === null || v === undefined) return "null";
  if (typeof v === "number") return Number.isInteger(v) && Math.abs(v) < 1e21 ? String(v) : javaDouble(v);
  if (typeof v === "bigint" || typeof v === "boolean") return String(v);
  const p = new JavaPrinter();
  p.print(v, 0);
  return p.text;
}

class JavaPrinter {
  text = "";

  private put(s: string): void {
    const room = MAX_CHARS - this.text.length;
    this.text += s.length > room ? s.slice(0, room) : s;
  }

  private get full(): boolean {
    return this.text.length >= MAX_CHARS;
  }

  print(v: unknown, depth: number): void {
    if (this.full) return;
    if (typeof v !== "object" || v === null) {
      this.put(javaString(v));
    } else if (depth >= MAX_DEPTH) {
      this.put("…");
    } else if (Array.isArray(v)) {
      this.put("[");
      for (let i = 0; i < v.length && !this.full; i++) {
        if (i > 0) this.put(", ");
        this.print(v[i], depth + 1);
      }
      this.put("]");
    } else if (v instanceof Date) {
      this.put(v.toISOString());
    } else {
      this.put("{");
      let first = true;
      for (const k in v as Record<string, unknown>) {
        if (this.full) break;
        this.put(first ? `${k}=` : `, ${k}=`);
        first = false;
        this.print((v as Record<string, unknown>)[k], depth + 1);
      }
      this.put("}");
    }
  }
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
