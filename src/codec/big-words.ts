// Owns `bigIntFromWords`, `wordsBitLength`, `bigIntToWords`, `bigIntToBytes`: big integers to and
// from Java's forms (`BigInteger.mag` words, `toByteArray()` bytes) for the Java serializations, in
// linear time. Apart from big-numbers.ts, whose digit limits both clients load. Must not change:
// limits are checked before memory is spent.
import { bitLength } from "./big-numbers.js";

/**
 * A magnitude in big-endian 32-bit words (Java's `BigInteger.mag`) → bigint, in linear time: the
 * words as hexadecimal text, converted once. `words` must be integers (each taken modulo 2^32).
 */
export function bigIntFromWords(words: readonly number[], negative: boolean): bigint {
  if (words.length === 0) return 0n;
  const hex = new Array<string>(words.length);
  for (let i = 0; i < words.length; i++) hex[i] = (words[i] >>> 0).toString(16).padStart(8, "0");
  const v = BigInt(`0x${hex.join("")}`);
  return negative ? -v : v;
}

/** The bit length of a magnitude in big-endian 32-bit words, leading zero words skipped. */
export function wordsBitLength(words: readonly number[]): number {
  let i = 0;
  while (i < words.length && words[i] >>> 0 === 0) i++;
  if (i === words.length) return 0;
  return (words.length - i - 1) * 32 + (32 - Math.clz32(words[i] >>> 0));
}

/** The magnitude of `v` as big-endian 32-bit words (signed, as a Java `int[]`), no leading zero word; linear. */
export function bigIntToWords(v: bigint): number[] {
  if (v === 0n) return [];
  const hex = (v < 0n ? -v : v).toString(16);
  const padded = hex.padStart(Math.ceil(hex.length / 8) * 8, "0");
  const words = new Array<number>(padded.length / 8);
  for (let i = 0; i < words.length; i++) words[i] = Number.parseInt(padded.slice(i * 8, i * 8 + 8), 16) | 0;
  return words;
}

/** `v` in two's complement, big-endian, in the fewest bytes that hold its sign (Java's `BigInteger.toByteArray()`); linear. */
export function bigIntToBytes(v: bigint): Buffer {
  const n = Math.floor(bitLength(v < 0n ? -v - 1n : v) / 8) + 1;
  const x = v < 0n ? (1n << BigInt(8 * n)) + v : v;
  return Buffer.from(x.toString(16).padStart(2 * n, "0"), "hex");
}
