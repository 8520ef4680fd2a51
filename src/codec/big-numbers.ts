// Owns `DEFAULT_MAX_NUMBER_DIGITS`, `MIN_NUMBER_DIGITS`, `withNumberLimits`, `numberDigitsLimit`, …
// The default of `limits.maxNumberDigits`: 4096 digits (13,607 bits; an 8192-bit RSA modulus has
// 2,467). Must not change: limits are checked before memory is spent; bad input is a 4xx naming the
// problem.
import { bindError } from "./bind-error.js";

/**
 * Big numbers from text, words and bytes, in time linear in their size and bounded by
 * `limits.maxNumberDigits`. V8 turns decimal text into a `bigint` (and a `bigint` into decimal
 * text) in time that grows faster than the length: 100,000 digits cost ~7 ms, a million ~170 ms,
 * the 3.9 million a 4 MiB body holds ~1.5 s, all of it on the event loop. So every number that
 * may be larger than a `long` is measured first (a count, never a conversion) and refused over
 * the limit; hexadecimal text and binary words and bytes are converted through `BigInt("0x…")`,
 * which is linear.
 */

/** What the conversions need of a server's limits. */
export interface NumberLimits {
  /**
   * Most decimal digits of one number converted from text or from a Java big number; binary forms
   * (hessian2 `BigInteger` words, JSONB bytes) are measured in bits, `maxNumberDigits × log2(10)`.
   */
  readonly maxNumberDigits: number;
}

/** The default of `limits.maxNumberDigits`: 4096 digits (13,607 bits; an 8192-bit RSA modulus has 2,467). */
export const DEFAULT_MAX_NUMBER_DIGITS = 4096;

/** The fewest digits `limits.maxNumberDigits` may be: a Java `long` (19 digits, 64 bits) always converts. */
export const MIN_NUMBER_DIGITS = 19;

let maxDigits = DEFAULT_MAX_NUMBER_DIGITS;

/**
 * Runs `f` (synchronous) with `limits.maxNumberDigits` as the bound of every number it converts
 * from text (the body codecs and binders call it at their entry, where the server's limits are
 * at hand; the converters below them read {@link numberDigitsLimit}). Without `limits`, or
 * outside any call, the default applies (a client reading replies, say).
 */
export function withNumberLimits<T>(limits: NumberLimits | undefined, f: () => T): T {
  const max = limits?.maxNumberDigits ?? DEFAULT_MAX_NUMBER_DIGITS;
  if (max === maxDigits) return f();
  const outer = maxDigits;
  maxDigits = max;
  try {
    return f();
  } finally {
    maxDigits = outer;
  }
}

/** The digit bound in force (see {@link withNumberLimits}). */
export function numberDigitsLimit(): number {
  return maxDigits;
}

/** The most bits of a number in binary form under a digit bound: ⌈digits × log2(10)⌉. */
export function bitsForDigits(digits: number): number {
  return Math.ceil(digits * Math.log2(10));
}

/** How many decimal digits `text` holds (one pass, no conversion). */
export function countDigits(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) n++;
  }
  return n;
}

/** The message of a number over the digit bound: its size, never its value. */
function tooManyDigits(where: string, size: string, max: number): string {
  return `${where} is a number of ${size}, more than this server takes (limits.maxNumberDigits: ${max} digits); send a smaller number`;
}

/**
 * Throws a 400 (`invalid_argument`) naming `where` when `text` holds more decimal digits than
 * the bound in force. Text no longer than the bound is not even scanned.
 */
export function checkDigits(text: string, where: string, max = maxDigits): void {
  if (text.length <= max) return;
  const n = countDigits(text);
  if (n > max) throw bindError(tooManyDigits(where, `${n} digits`, max));
}

/** Decimal integer text (`-123`, `+7`, surrounding blanks allowed) → bigint, bounded like {@link checkDigits}. */
export function bigIntFromDecimal(text: string, where: string): bigint {
  checkDigits(text, where);
  return BigInt(text.trim());
}

/**
 * A bigint for messages: `integer 123` up to 256 bits, else its size (`an integer of about 4000
 * digits`): no decimal conversion of a large one, no long number in an error.
 */
export function describeBigInt(v: bigint): string {
  const bits = bitLength(v < 0n ? -v : v);
  if (bits <= 256) return `integer ${v}`;
  return `an integer of about ${Math.ceil(bits * Math.log10(2))} digits`;
}

/** The bit length of a non-negative bigint (Java's `BigInteger.bitLength()` of it), from its hexadecimal text: linear. */
export function bitLength(v: bigint): number {
  if (v === 0n) return 0;
  const hex = v.toString(16);
  return (hex.length - 1) * 4 + (32 - Math.clz32(Number.parseInt(hex[0], 16)));
}
